// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_outdir.c - the output directory and its parents, on real
 * directories (as root: other users' directories are made with chown).
 * Whoever can write a parent can swap the directory for their own and stop
 * every dump: each parent must be root's and writable by no one else, or
 * sticky (like /tmp) with root's directory on the way.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outdir.h"
#include "tap.h"

static char base[PATH_MAX];

/* A directory under the base, made with @mode and given to @uid. */
static void mkdir_as(const char *rel, mode_t mode, uid_t uid)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (mkdir(p, mode) || chmod(p, mode) || chown(p, uid, uid)) {
		printf("Bail out! mkdir '%s': %s\n", p, strerror(errno));
		exit(1);
	}
}

/*
 * try() - outdir__open() on <base>/@rel: the fd closed, the result, and
 * the message in @err.
 */
static int try(const char *rel, char *err, size_t len)
{
	struct outdir_opts o = { 0 };
	char p[PATH_MAX + 64];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	err[0] = 0;
	fd = outdir__open(p, &o, err, len);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? fd : 0;
}

/* Whether @err names <base>/@rel as the parent at fault. */
static bool names_parent(const char *err, const char *rel)
{
	char want[PATH_MAX + 80];

	snprintf(want, sizeof(want), "its parent '%s/%s'", base, rel);
	return strstr(err, want) != NULL;
}

int main(void)
{
	char err[1024], p[PATH_MAX + 64];
	struct stat st;

	if (geteuid() != 0) {
		printf("1..0 # SKIP other users' directories need root (chown)\n");
		return 0;
	}
	snprintf(base, sizeof(base), "/tmp/fr-outdir-XXXXXX");
	if (!mkdtemp(base) || chmod(base, 0755)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}

	mkdir_as("safe", 0755, 0);
	ok(!try("safe/dumps", err, sizeof(err)), "a missing directory under root's parents is made (%s)",
	   err);
	snprintf(p, sizeof(p), "%s/safe/dumps", base);
	memset(&st, 0, sizeof(st));
	if (stat(p, &st))
		tap_diag("stat '%s': %s", p, strerror(errno));
	ok((st.st_mode & 07777) == 0700 && st.st_uid == 0 && S_ISDIR(st.st_mode),
	   "made 0700, root's (mode %04o)", (unsigned)(st.st_mode & 07777));
	ok(!try("safe/dumps", err, sizeof(err)), "opened again");

	mkdir_as("nobodys", 0755, 65534);
	mkdir_as("nobodys/dumps", 0700, 0);
	ok(try("nobodys/dumps", err, sizeof(err)) == -EPERM && names_parent(err, "nobodys") &&
	   strstr(err, "owned by another user"),
	   "root's directory in a parent that nobody owns is refused, the parent named: %s", err);
	ok(try("nobodys/new", err, sizeof(err)) == -EPERM && names_parent(err, "nobodys"),
	   "and nothing is made there");
	snprintf(p, sizeof(p), "%s/nobodys/new", base);
	ok(access(p, F_OK) && errno == ENOENT, "(nobodys/new does not exist)");

	mkdir_as("deep", 0755, 65534);
	mkdir_as("deep/a", 0755, 0);
	mkdir_as("deep/a/b", 0755, 0);
	ok(try("deep/a/b/dumps", err, sizeof(err)) == -EPERM && names_parent(err, "deep"),
	   "a grandparent nobody owns is refused too: %s", err);

	mkdir_as("open", 0777, 0);
	mkdir_as("open/dumps", 0700, 0);
	ok(try("open/dumps", err, sizeof(err)) == -EPERM && names_parent(err, "open") &&
	   strstr(err, "writable by others"),
	   "a world-writable parent (not sticky) is refused: %s", err);
	mkdir_as("grp", 0775, 0);
	mkdir_as("grp/dumps", 0700, 0);
	ok(try("grp/dumps", err, sizeof(err)) == -EPERM && names_parent(err, "grp"),
	   "a group-writable parent is refused");

	mkdir_as("sticky", 01777, 0);
	mkdir_as("sticky/dumps", 0700, 0);
	ok(!try("sticky/dumps", err, sizeof(err)), "a sticky world-writable parent (like /tmp) holding "
	   "root's directory is accepted (%s)", err);
	mkdir_as("sticky/theirs", 0755, 65534);
	mkdir_as("sticky/theirs/dumps", 0700, 0);
	ok(try("sticky/theirs/dumps", err, sizeof(err)) == -EPERM && names_parent(err, "sticky"),
	   "but not through nobody's directory in it: %s", err);
	mkdir_as("sticky/mine", 0755, 0);
	mkdir_as("sticky/mine/dumps", 0700, 0);
	ok(!try("sticky/mine/dumps", err, sizeof(err)),
	   "root's directory in the sticky one may hold it");

	snprintf(p, sizeof(p), "%s/safe", base);
	{
		char l[PATH_MAX + 64];

		snprintf(l, sizeof(l), "%s/link", base);
		ok(!symlink(p, l), "a symlink to a safe directory");
	}
	ok(try("link/dumps", err, sizeof(err)) < 0 && strstr(err, "symlinks are not followed"),
	   "a symlink among the parents is refused: %s", err);

	mkdir_as("safe/theirs", 0700, 65534);
	ok(try("safe/theirs", err, sizeof(err)) == -EPERM && strstr(err, "owned by someone else"),
	   "the directory itself owned by another user is refused: %s", err);
	mkdir_as("safe/gw", 0770, 0);
	ok(try("safe/gw", err, sizeof(err)) == -EPERM && strstr(err, "group- or world-writable"),
	   "the directory itself group-writable is refused");
	{
		struct outdir_opts o = { 0 };

		ok(outdir__open("relative/dumps", &o, err, sizeof(err)) == -EINVAL &&
		   strstr(err, "not an absolute path"), "a relative path is refused: %s", err);
	}

	{
		char cmd[PATH_MAX + 32];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd))
			tap_diag("failed to remove '%s'", base);
	}
	return tap_done_testing();
}
