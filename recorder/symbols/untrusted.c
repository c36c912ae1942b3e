// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * untrusted.c - opening and reading files other users control. See
 * untrusted.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "untrusted.h"
#include "util.h"

#define FR_READ_CHUNK	(1U << 20)

static _Atomic uint64_t refused[FR_REFUSED_NR];
static _Atomic uint64_t opened;
/* openat2 answered ENOSYS (or a seccomp filter refused it): walk instead. */
static atomic_bool no_openat2;
static atomic_bool forced_walk;

void untrusted__force_walk(bool on)
{
	atomic_store(&forced_walk, on);
}

/* One step of the walk: @name in @dirfd, never through a symlink. */
static int walk_step(int dirfd, const char *name, bool last)
{
	struct stat st;
	int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (S_ISLNK(st.st_mode) || (!last && !S_ISDIR(st.st_mode))) {
		close(fd);
		return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
	}
	return fd;
}

/*
 * walk_open() - the openat2 fallback: resolve @path one component at a
 * time with O_PATH | O_NOFOLLOW, from "/" for an absolute path (from
 * @dirfd when @in_root, where ".." is refused). Returns an O_PATH fd or
 * -errno (-ELOOP for a symlink).
 */
static int walk_open(int dirfd, const char *path, bool in_root)
{
	char buf[PATH_MAX], *save = NULL, *comp, *next;
	int cur, fd;

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	fr_strlcpy(buf, path, sizeof(buf));
	if (path[0] == '/' && !in_root)
		cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	else if (dirfd == AT_FDCWD)
		cur = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	else
		cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (cur < 0)
		return -errno;
	comp = strtok_r(buf, "/", &save);
	if (!comp) {
		close(cur);
		return -EISDIR;
	}
	for (; comp; comp = next) {
		next = strtok_r(NULL, "/", &save);
		if (!strcmp(comp, ".") && next)
			continue;
		if (!strcmp(comp, "..") && in_root) {
			close(cur);
			return -ELOOP;
		}
		fd = walk_step(cur, comp, !next);
		close(cur);
		if (fd < 0)
			return fd;
		cur = fd;
	}
	return cur;
}

/* An O_PATH fd for @path under @rule, or -errno. */
static int open_path(int dirfd, const char *path, const struct fr_untrusted_rule *rule)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   (rule->in_root ? RESOLVE_IN_ROOT : 0),
	};
	int fd;

	if (rule->kernel_link) {
		fd = openat(dirfd, path, O_PATH | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	if (!atomic_load(&no_openat2) && !atomic_load(&forced_walk)) {
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0)
			return fd;
		if (errno != ENOSYS && errno != EPERM && errno != E2BIG)
			return -errno;
		atomic_store(&no_openat2, true);
	}
	return walk_open(dirfd, path, rule->in_root);
}

/* The refusal @st earns under @rule, or -1 for none. */
static int judge(int fd, const struct stat *st, const struct fr_untrusted_rule *rule)
{
	struct statfs fs;

	if (!S_ISREG(st->st_mode))
		return FR_REFUSED_TYPE;
	if (!fstatfs(fd, &fs) && (unsigned long)fs.f_type == FUSE_SUPER_MAGIC)
		return FR_REFUSED_FS;
	if (rule->max_bytes && (uint64_t)st->st_size > rule->max_bytes)
		return FR_REFUSED_SIZE;
	if (rule->check_owner && st->st_uid != rule->uid &&
	    (st->st_uid != 0 || !(st->st_mode & S_IROTH) || st->st_nlink != 1))
		return FR_REFUSED_OWNER;
	return -1;
}

static const int refusal_err[FR_REFUSED_NR] = {
	[FR_REFUSED_LINK] = ELOOP, [FR_REFUSED_TYPE] = EINVAL,
	[FR_REFUSED_OWNER] = EPERM, [FR_REFUSED_SIZE] = EFBIG,
	[FR_REFUSED_FS] = EMEDIUMTYPE,
};

static int refuse(enum fr_refusal r)
{
	atomic_fetch_add(&refused[r], 1);
	return -refusal_err[r];
}

int untrusted__open(int dirfd, const char *path, const struct fr_untrusted_rule *rule,
		    struct stat *out)
{
	char self[48];
	struct stat st, st2;
	int pfd, fd, r;

	pfd = open_path(dirfd, path, rule);
	if (pfd == -ELOOP || pfd == -EXDEV)
		return refuse(FR_REFUSED_LINK);
	if (pfd < 0)
		return pfd;
	if (fstat(pfd, &st)) {
		r = -errno;
		goto out;
	}
	r = judge(pfd, &st, rule);
	if (r >= 0) {
		r = refuse(r);
		goto out;
	}
	/* Only now open it for reading: a regular file, so nothing blocks. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	if (fstat(fd, &st2) || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		close(fd);
		r = -ESTALE;
		goto out;
	}
	atomic_fetch_add(&opened, 1);
	if (out)
		*out = st2;
	r = fd;
out:
	close(pfd);
	return r;
}

ssize_t untrusted__read(int fd, void *buf, size_t cap, uint64_t deadline_ns)
{
	size_t got = 0;

	while (got < cap) {
		ssize_t n;

		if (deadline_ns && fr_boottime_ns() >= deadline_ns)
			return -ETIMEDOUT;
		n = pread(fd, (char *)buf + got, FR_MIN(cap - got, FR_READ_CHUNK), (off_t)got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int untrusted__slurp(int fd, size_t max, uint64_t deadline_ns, char **buf, size_t *len)
{
	struct stat st;
	ssize_t n;
	char *b;

	if (fstat(fd, &st))
		return -errno;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	b = malloc((size_t)st.st_size + 1);
	if (!b)
		return -ENOMEM;
	/* A file that grew since the fstat is read up to its old size. */
	n = untrusted__read(fd, b, (size_t)st.st_size, deadline_ns);
	if (n < 0) {
		free(b);
		return (int)n;
	}
	b[n] = 0;
	*buf = b;
	*len = (size_t)n;
	return 0;
}

int untrusted__refusal(int err)
{
	for (int r = 0; r < FR_REFUSED_NR; r++)
		if (-err == refusal_err[r])
			return r;
	return -1;
}

const char *untrusted__refusal_name(enum fr_refusal r)
{
	static const char *const names[FR_REFUSED_NR] = {
		[FR_REFUSED_LINK] = "link", [FR_REFUSED_TYPE] = "type",
		[FR_REFUSED_OWNER] = "owner", [FR_REFUSED_SIZE] = "size",
		[FR_REFUSED_FS] = "fs",
	};

	return (unsigned)r < FR_REFUSED_NR ? names[r] : "?";
}

void untrusted__stats(struct untrusted_stats *st)
{
	for (int r = 0; r < FR_REFUSED_NR; r++)
		st->refused[r] = atomic_load(&refused[r]);
	st->opened = atomic_load(&opened);
}
