// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * outdir.c - the output directory. See outdir.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "outdir.h"
#include "retention.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* Open @path as a directory, refusing a symlink anywhere in it. */
static int open_nofollow(const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS,
	};
	int fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd >= 0)
		return fd;
	if (errno != ENOSYS && errno != EPERM)
		return -errno;
	/* No openat2 (before 5.6, or filtered): the last component at least. */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

/*
 * outdir__open() - open the output directory @path: no symlinks on the
 * way, created if missing (its parent must exist), refused unless it is a
 * directory owned by the daemon's user and not writable by group or
 * others. Returns the directory fd, or -errno with @err saying why.
 */
int outdir__open(const char *path, const struct outdir_opts *o, char *err, size_t errlen)
{
	mode_t mode = o->group ? 0750 : 0700;
	struct stat st;
	int fd;

	fd = open_nofollow(path);
	if (fd == -ENOENT) {
		if (mkdir(path, mode) && errno != EEXIST) {
			snprintf(err, errlen, "failed to create '%s': %s", path, strerror(errno));
			return -errno;
		}
		fd = open_nofollow(path);
		if (fd >= 0 && o->group && fchown(fd, (uid_t)-1, o->gid)) {
			snprintf(err, errlen, "failed to give '%s' to group %u: %s", path,
				 (unsigned)o->gid, strerror(errno));
			close(fd);
			return -errno;
		}
	}
	if (fd < 0) {
		snprintf(err, errlen, "failed to open '%s': %s%s", path, strerror(-fd),
			 fd == -ELOOP || fd == -EXDEV ? " (symlinks are not followed)" : "");
		return fd;
	}
	if (fstat(fd, &st)) {
		snprintf(err, errlen, "failed to stat '%s': %s", path, strerror(errno));
		close(fd);
		return -errno;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, errlen, "refusing output directory '%s': %s (mode %04o, owner %u); "
			 "it must be owned by uid %u and writable by nobody else", path,
			 st.st_uid != geteuid() ? "owned by someone else" : "group- or world-writable",
			 (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, (unsigned)geteuid());
		close(fd);
		return -EPERM;
	}
	return fd;
}

struct cleaning {
	int dirfd;
	char (*names)[256];
	int max;
	int n;
};

static int remove_temp(void *ctx, const char *name, const struct stat *st)
{
	struct cleaning *c = ctx;

	(void)st;
	if (unlinkat(c->dirfd, name, 0))
		return 0;
	if (c->n < c->max)
		snprintf(c->names[c->n], 256, "%s", name);
	c->n++;
	return 0;
}

/*
 * outdir__clean_temps() - remove temporary files a killed daemon left:
 * "<dump name>.tmp" regular files, and nothing else. Up to @max names go
 * to @names. Returns how many were removed, or -errno.
 */
int outdir__clean_temps(int dirfd, char names[][256], int max)
{
	struct cleaning c = { .dirfd = dirfd, .names = names, .max = max };
	int err = fr_dump_dir_each(dirfd, true, remove_temp, &c);

	return err ? err : c.n;
}
