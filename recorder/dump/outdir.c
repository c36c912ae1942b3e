// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * outdir.c - the output directory. See outdir.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
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

/* Whether @st belongs to root or to the daemon's user. */
static bool ours(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid();
}

/*
 * check_parents() - every directory above the absolute @path, from '/'
 * down, walked without following a symlink: owned by root (or the
 * daemon's user) and writable by no one else, but for a sticky directory
 * (/tmp) whose next component on the way is root's (or ours): there no
 * one else can rename or remove it. Otherwise whoever could write there
 * could swap the output directory and stop every dump. Returns 0, or
 * -errno with @err saying which parent and why (-ENOENT: a parent is
 * missing, left for the caller's own open to report).
 */
static int check_parents(const char *path, char *err, size_t errlen)
{
	char parent[PATH_MAX], name[NAME_MAX + 1];
	const char *p = path, *why = NULL;
	struct stat pst, st;
	int fd, next, r = 0;
	size_t plen = 1;

	if (path[0] != '/') {
		snprintf(err, errlen, "refusing output directory '%s': not an absolute path", path);
		return -EINVAL;
	}
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &pst)) {
		r = -errno;
		snprintf(err, errlen, "failed to open '/': %s", strerror(errno));
		goto out;
	}
	strcpy(parent, "/");
	for (;;) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (!len || !p[len + strspn(p + len, "/")])
			break;	/* @path itself: outdir__open() checks it */
		if (len > NAME_MAX || plen + len + 1 >= sizeof(parent)) {
			r = -ENAMETOOLONG;
			snprintf(err, errlen, "refusing output directory '%s': %s", path,
				 strerror(ENAMETOOLONG));
			goto out;
		}
		memcpy(name, p, len);
		name[len] = 0;
		next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 || fstat(next, &st)) {
			r = -errno;
			if (next >= 0)
				close(next);
			if (r != -ENOENT)
				snprintf(err, errlen, "failed to open '%.*s': %s%s",
					 (int)(p - path + len), path, strerror(-r),
					 r == -ELOOP || r == -ENOTDIR ? " (symlinks are not followed)" : "");
			goto out;
		}
		if (!ours(&pst))
			why = "is owned by another user";
		else if ((pst.st_mode & (S_IWGRP | S_IWOTH)) &&
			 (!(pst.st_mode & S_ISVTX) || !ours(&st)))
			why = pst.st_mode & S_ISVTX ? "is writable by others, and what it holds on "
						      "the way is not root's" :
						      "is writable by others";
		if (why) {
			snprintf(err, errlen, "refusing output directory '%s': its parent '%s' %s "
				 "(mode %04o, owner %u); every parent must be owned by root and "
				 "writable by no one else (or sticky, like /tmp, holding a directory "
				 "of root's)", path, parent, why, (unsigned)(pst.st_mode & 07777),
				 (unsigned)pst.st_uid);
			close(next);
			r = -EPERM;
			goto out;
		}
		close(fd);
		fd = next;
		pst = st;
		plen = (size_t)(p - path) + len;
		snprintf(parent, sizeof(parent), "%.*s", (int)plen, path);
		p += len;
	}
	/* The last parent: what holds the output directory itself. */
	if (!ours(&pst) || ((pst.st_mode & (S_IWGRP | S_IWOTH)) && !(pst.st_mode & S_ISVTX))) {
		snprintf(err, errlen, "refusing output directory '%s': its parent '%s' %s "
			 "(mode %04o, owner %u); every parent must be owned by root and writable "
			 "by no one else (or sticky, like /tmp)", path, parent,
			 !ours(&pst) ? "is owned by another user" : "is writable by others",
			 (unsigned)(pst.st_mode & 07777), (unsigned)pst.st_uid);
		r = -EPERM;
	}
out:
	if (fd >= 0)
		close(fd);
	return r;
}

/*
 * outdir__open() - open the output directory @path (absolute): no symlinks
 * on the way, every parent safe (check_parents()), created if missing (its
 * parent must exist), refused unless it is a directory owned by the
 * daemon's user and not writable by group or others. Returns the
 * directory fd, or -errno with @err saying why.
 */
int outdir__open(const char *path, const struct outdir_opts *o, char *err, size_t errlen)
{
	mode_t mode = o->group ? 0750 : 0700;
	struct stat st;
	int fd;

	fd = check_parents(path, err, errlen);
	if (fd && fd != -ENOENT)
		return fd;
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
