// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_retention.c - [output] max_dumps and max_bytes on a real directory:
 * the oldest dumps (by name, which sorts by time) go first, the dump just
 * written never, and nothing that is not one of the daemon's dumps is
 * counted or touched: a foreign file, a directory, a symlink or a .tmp
 * named like a dump.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "retention.h"
#include "tap.h"

static char base[PATH_MAX];
static int dirfd_;

/* The name of the @i-th dump: later @i, later stamp. */
static const char *dump_name(int i, char *buf, size_t len)
{
	snprintf(buf, len, "flightrec-20261205T0930%02d.%03dZ-signal.frd", i / 10, i % 10 * 100);
	return buf;
}

/* A regular file <base>/@name of @size bytes. */
static void make_file(const char *name, size_t size)
{
	int fd = openat(dirfd_, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, (off_t)size) || close(fd)) {
		printf("Bail out! create '%s/%s': %s\n", base, name, strerror(errno));
		exit(1);
	}
}

static bool exists(const char *name)
{
	struct stat st;

	return !fstatat(dirfd_, name, &st, AT_SYMLINK_NOFOLLOW);
}

/* Empty the directory: files, links and empty directories. */
static void clean(void)
{
	int fd = openat(dirfd_, ".", O_RDONLY | O_DIRECTORY);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		printf("Bail out! opendir '%s': %s\n", base, strerror(errno));
		exit(1);
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    unlinkat(dirfd_, de->d_name, de->d_type == DT_DIR ? AT_REMOVEDIR : 0))
			tap_diag("unlink '%s/%s': %s", base, de->d_name, strerror(errno));
	closedir(d);
}

/* Dumps 0..@n-1 of @size bytes each. */
static void make_dumps(int n, size_t size)
{
	char name[128];

	for (int i = 0; i < n; i++)
		make_file(dump_name(i, name, sizeof(name)), size);
}

/* Names: what fr_is_dump_name() takes for one of the dumper's. */
static void test_names(void)
{
	static const struct {
		const char *name;
		int want;
	} cases[] = {
		{ "flightrec-20261205T093000.000Z-signal.frd", 1 },
		{ "flightrec-20261205T093000.000Z-x.frd", 1 },
		{ "flightrec-20261205T093000.000Z-.frd", 0 },	/* a tag is never empty */
		{ "flightrec-20261205T093000.000Z.frd", 0 },	/* no tag separator */
		{ "flightrec-20261205T093000.000Z-signal.frd.tmp", 0 },
		{ "flightrec-20261205T093000.000Z-signal", 0 },
		{ "flightrec-2026120XT093000.000Z-signal.frd", 0 },
		{ "flightrec-20261205X093000.000Z-signal.frd", 0 },
		{ "flightrec-20261205T093000.000Y-signal.frd", 0 },
		{ "Flightrec-20261205T093000.000Z-signal.frd", 0 },
		{ "other-20261205T093000.000Z-signal.frd", 0 },
		{ ".frd", 0 },
		{ "", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_int(fr_is_dump_name(cases[i].name), cases[i].want,
		       "fr_is_dump_name('%s') is %d", cases[i].name, cases[i].want);
}

/* max_dumps: the oldest go first, the count and bytes reported. */
static void test_max_dumps(void)
{
	struct retention_result r;
	char name[128];
	int err;

	clean();
	make_dumps(5, 1000);
	err = retention__apply(dirfd_, 3, 0, NULL, &r);
	is_int(err, 0, "max_dumps 3 over 5 dumps: applied");
	is_int(r.removed, 2, "two dumps removed");
	is_int((long long)r.removed_bytes, 2000, "their 2000 bytes reported");
	is_int(r.kept, 3, "three kept");
	is_int((long long)r.kept_bytes, 3000, "their 3000 bytes reported");
	is_str(r.names[0], dump_name(0, name, sizeof(name)), "the oldest is named first");
	is_str(r.names[1], dump_name(1, name, sizeof(name)), "then the second oldest");
	ok(!exists(dump_name(0, name, sizeof(name))) && !exists(dump_name(1, name, sizeof(name))),
	   "the two oldest are gone from the directory");
	ok(exists(dump_name(2, name, sizeof(name))) && exists(dump_name(4, name, sizeof(name))),
	   "the three newest are still there");
	is_int(r.err, 0, "no unlink failed");
}

/* max_bytes: removed oldest first until the rest fits. */
static void test_max_bytes(void)
{
	struct retention_result r;
	char name[128];

	clean();
	for (int i = 0; i < 4; i++)
		make_file(dump_name(i, name, sizeof(name)), (size_t)(i + 1) * 1000);
	/* 1000 + 2000 + 3000 + 4000: within 7500 once the first two go. */
	is_int(retention__apply(dirfd_, 0, 7500, NULL, &r), 0, "max_bytes 7500 over 10000 bytes: applied");
	is_int(r.removed, 2, "the two oldest removed (10000 - 1000 = 9000 is still over)");
	is_int((long long)r.kept_bytes, 7000, "7000 bytes kept");
	ok(exists(dump_name(2, name, sizeof(name))) && !exists(dump_name(1, name, sizeof(name))),
	   "the directory holds the newest two");
	is_int(retention__apply(dirfd_, 0, 7000, NULL, &r), 0, "exactly at max_bytes: applied");
	is_int(r.removed, 0, "nothing removed at the limit itself");
}

/* 0 means no limit; both limits at once apply together. */
static void test_limits(void)
{
	struct retention_result r;

	clean();
	make_dumps(6, 500);
	is_int(retention__apply(dirfd_, 0, 0, NULL, &r), 0, "no limits: applied");
	ok(r.removed == 0 && r.kept == 6 && r.kept_bytes == 3000,
	   "no limits: nothing removed, 6 dumps and 3000 bytes kept (%u, %u, %llu)",
	   r.removed, r.kept, (unsigned long long)r.kept_bytes);
	is_int(retention__apply(dirfd_, 5, 1600, NULL, &r), 0, "max_dumps 5 and max_bytes 1600: applied");
	is_int(r.kept, 3, "the stricter limit decides: 3 dumps of 500 fit 1600");
}

/* The dump just written is never removed, even when it is the oldest. */
static void test_keep(void)
{
	struct retention_result r;
	char keep[128], name[128];

	clean();
	make_dumps(4, 100);
	dump_name(0, keep, sizeof(keep));
	is_int(retention__apply(dirfd_, 1, 0, keep, &r), 0, "max_dumps 1, keeping the oldest: applied");
	ok(exists(keep), "the kept dump survives though it is the oldest");
	is_int(r.removed, 3, "the three others are removed");
	ok(!exists(dump_name(3, name, sizeof(name))), "even the newest, to make room for the kept one");
	is_int(r.kept, 1, "one kept");
}

/* Only the daemon's regular dump files are counted or touched. */
static void test_foreign(void)
{
	struct retention_result r;
	char name[128], tmp[160], link[128], dir[128];

	clean();
	make_dumps(3, 100);
	make_file("notes.txt", 5000);
	snprintf(tmp, sizeof(tmp), "%s.tmp", dump_name(10, name, sizeof(name)));
	make_file(tmp, 5000);
	dump_name(11, link, sizeof(link));
	if (symlinkat("/etc/passwd", dirfd_, link))
		tap_diag("symlink: %s", strerror(errno));
	dump_name(12, dir, sizeof(dir));
	if (mkdirat(dirfd_, dir, 0700))
		tap_diag("mkdir: %s", strerror(errno));
	is_int(retention__apply(dirfd_, 1, 0, NULL, &r), 0, "max_dumps 1 among foreign files: applied");
	is_int(r.removed, 2, "only two dumps removed");
	is_int(r.kept, 1, "one dump kept: the others are not counted");
	is_int((long long)r.kept_bytes, 100, "their bytes are not counted either");
	ok(exists("notes.txt") && exists(tmp), "a foreign file and a .tmp are left alone");
	ok(exists(link) && exists(dir), "a symlink and a directory named like dumps are left alone");
	ok(!access("/etc/passwd", F_OK), "the symlink's target is untouched");
}

struct seen {
	int n;
	bool foreign;
};

static int count_file(void *ctx, const char *name, const struct stat *st)
{
	struct seen *s = ctx;

	s->n++;
	if (!S_ISREG(st->st_mode))
		s->foreign = true;
	return 0;
}

static int stop_at_first(void *ctx, const char *name, const struct stat *st)
{
	(*(int *)ctx)++;
	return -ECANCELED;
}

/* fr_dump_dir_each(): dumps, or their .tmp files, regular ones only. */
static void test_each(void)
{
	struct seen s = { 0 };
	char name[128], tmp[160];
	int calls = 0;

	clean();
	make_dumps(3, 10);
	snprintf(tmp, sizeof(tmp), "%s.tmp", dump_name(20, name, sizeof(name)));
	make_file(tmp, 10);
	make_file("x.tmp", 10);
	is_int(fr_dump_dir_each(dirfd_, false, count_file, &s), 0, "each dump: walked");
	ok(s.n == 3 && !s.foreign, "the three dumps, regular files (%d)", s.n);
	s = (struct seen){ 0 };
	is_int(fr_dump_dir_each(dirfd_, true, count_file, &s), 0, "each .tmp: walked");
	is_int(s.n, 1, "one .tmp named like a dump (x.tmp is not)");
	is_int(fr_dump_dir_each(dirfd_, false, stop_at_first, &calls), -ECANCELED,
	       "a callback's error stops the walk and is returned");
	is_int(calls, 1, "after the first file");
}

/*
 * An unlink that fails is reported, and the file counts as kept: run by
 * nobody (in a child) on root's directory, where it may list but not unlink.
 */
static void test_unlink_failure(void)
{
	struct retention_result r = { 0 };
	char name[128];
	int pipefd[2], status = 0;
	pid_t pid;

	clean();
	make_dumps(2, 100);
	if (fchmod(dirfd_, 0755) || pipe(pipefd)) {
		printf("Bail out! chmod/pipe: %s\n", strerror(errno));
		exit(1);
	}
	pid = fork();
	if (pid == 0) {
		int err = 1;

		close(pipefd[0]);
		if (!setgid(65534) && !setuid(65534))
			err = retention__apply(dirfd_, 1, 0, NULL, &r);
		if (write(pipefd[1], &r, sizeof(r)) != sizeof(r))
			_exit(2);
		_exit(err ? 3 : 0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &r, sizeof(r)) != sizeof(r))
		memset(&r, 0, sizeof(r));
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	fchmod(dirfd_, 0700);
	is_int(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	       "as nobody on root's directory: applied (listing works)");
	ok(r.err == -EACCES && r.removed == 0 && r.kept == 2,
	   "the unlink failure is in err (%d), nothing counted as removed (%u), both kept (%u)",
	   r.err, r.removed, r.kept);
	ok(exists(dump_name(0, name, sizeof(name))), "the oldest dump is still there");
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(base, sizeof(base), "%s/fr-retention-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(base)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	dirfd_ = open(base, O_RDONLY | O_DIRECTORY);
	if (dirfd_ < 0) {
		printf("Bail out! open '%s': %s\n", base, strerror(errno));
		return 1;
	}
	test_names();
	test_max_dumps();
	test_max_bytes();
	test_limits();
	test_keep();
	test_foreign();
	test_each();
	test_unlink_failure();
	clean();
	close(dirfd_);
	rmdir(base);
	return tap_done_testing();
}
