// SPDX-License-Identifier: MIT
/*
 * test_writer.c - the durable dump writer, with real files, real io_uring,
 * a real full filesystem (tmpfs of 256k) and real symlink attacks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <liburing.h>

#include "tap.h"
#include "writer.h"

#define FR_MIB		(1024 * 1024)
#define FR_ENOSPC_CHECKS	19	/* checks in test_enospc() after mount */

/* The byte at absolute offset @off of the test pattern. */
static unsigned char pattern_byte(uint64_t off)
{
	uint32_t x = (uint32_t)(off ^ (off >> 17));

	x *= 0x9e3779b1u;
	return (unsigned char)(x >> 24);
}

static void pattern_fill(unsigned char *p, uint64_t off, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern_byte(off + i);
}

/* Odd piece sizes, cycled until @total bytes went into @f. 0 or -errno. */
static int write_pattern(struct dumpfile *f, size_t total)
{
	static const size_t sizes[] = {
		1, 4095, FR_MIB + 3, 7, 65536, 333333, 4096, 2 * FR_MIB - 1,
		17, 3 * FR_MIB + 5, 1, 100000,
	};
	unsigned char *buf = malloc(3 * FR_MIB + 5);
	size_t off = 0, n;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (unsigned i = 0; off < total; i++) {
		n = sizes[i % (sizeof(sizes) / sizeof(sizes[0]))];
		if (n > total - off)
			n = total - off;
		pattern_fill(buf, off, n);
		err = dumpfile__write(f, buf, n);
		if (err)
			break;
		off += n;
	}
	free(buf);
	return err;
}

/* Read all of @name in @dirfd into a malloc'd buffer. 0 or -errno. */
static int slurp(int dirfd, const char *name, unsigned char **out, size_t *len)
{
	struct stat st;
	unsigned char *p = NULL;
	size_t got = 0;
	ssize_t n;
	int fd, err = 0;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	p = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!p) {
		err = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, p + got, (size_t)st.st_size - got);
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			goto out;
		}
		got += (size_t)n;
	}
	*out = p;
	*len = got;
	p = NULL;
out:
	free(p);
	close(fd);
	return err;
}

/* True when @name holds exactly the first @total bytes of the pattern. */
static bool matches_pattern(int dirfd, const char *name, size_t total)
{
	unsigned char *p;
	size_t len, i;
	bool same;

	if (slurp(dirfd, name, &p, &len))
		return false;
	same = len == total;
	for (i = 0; same && i < len; i++)
		same = p[i] == pattern_byte(i);
	if (!same)
		tap_diag("'%s': %zu bytes, want %zu; first difference at %zu",
			 name, len, total, i ? i - 1 : 0);
	free(p);
	return same;
}

static bool same_files(int dirfd, const char *a, const char *b)
{
	unsigned char *pa = NULL, *pb = NULL;
	size_t la = 0, lb = 0;
	bool same;

	same = !slurp(dirfd, a, &pa, &la) && !slurp(dirfd, b, &pb, &lb) &&
	       la == lb && !memcmp(pa, pb, la);
	free(pa);
	free(pb);
	return same;
}

static bool exists(int dirfd, const char *name)
{
	struct stat st;

	return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW);
}

/* In this process only, make io_uring_setup fail with @err, as a container's
 * seccomp profile does. 0 or -errno. */
static int deny_io_uring(int err)
{
	struct sock_filter filt[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(filt) / sizeof(filt[0]), .filter = filt,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -errno;
	return 0;
}

/* Write @total pattern bytes as a complete dump called @name. 0 or -errno. */
static int small_dump(int dirfd, const char *name, size_t total, unsigned flags)
{
	struct dumpfile *f = dumpfile__create(dirfd, name, 0600, flags);
	int err;

	if (!f)
		return -errno;
	err = write_pattern(f, total);
	if (err) {
		dumpfile__abort(f);
		return err;
	}
	return dumpfile__commit(f);
}

static void test_roundtrip(int dirfd, bool have_uring, const char *no_uring)
{
	const size_t total = 10 * FR_MIB + 12345;
	struct dumpfile *f;
	int err;

	f = dumpfile__create(dirfd, "ring.dump", 0600, 0);
	if (!ok(f != NULL, "create ring.dump"))
		tap_diag("create: %s", strerror(errno));
	if (!f)
		return;
	if (have_uring)
		ok(dumpfile__uses_uring(f), "ring.dump is written through io_uring");
	else
		tap_skip(1, no_uring);
	is_int(write_pattern(f, total), 0, "10 MiB in odd-sized pieces accepted");
	is_int(dumpfile__bytes(f), total, "dumpfile__bytes counts every byte");
	ok(!exists(dirfd, "ring.dump"), "before commit the final name does not exist");
	ok(exists(dirfd, "ring.dump.tmp"), "before commit the .tmp exists");
	err = dumpfile__commit(f);
	is_int(err, 0, "commit ring.dump");
	ok(exists(dirfd, "ring.dump"), "after commit the final name exists");
	ok(!exists(dirfd, "ring.dump.tmp"), "after commit the .tmp is gone");
	ok(matches_pattern(dirfd, "ring.dump", total),
	   "io_uring dump is byte-identical to the data written");

	f = dumpfile__create(dirfd, "pw.dump", 0600, FR_WRITER_FORCE_PWRITE);
	if (!ok(f != NULL, "create pw.dump with FR_WRITER_FORCE_PWRITE"))
		return;
	ok(!dumpfile__uses_uring(f), "forced pwrite does not use io_uring");
	is_int(write_pattern(f, total), 0, "pwrite: 10 MiB accepted");
	is_int(dumpfile__commit(f), 0, "pwrite: commit");
	ok(matches_pattern(dirfd, "pw.dump", total),
	   "pwrite dump is byte-identical to the data written");
	ok(same_files(dirfd, "ring.dump", "pw.dump"),
	   "io_uring and pwrite dumps are byte-identical");

	is_int(small_dump(dirfd, "empty.dump", 0, 0), 0, "an empty dump commits");
	ok(matches_pattern(dirfd, "empty.dump", 0), "the empty dump is empty");
}

/*
 * io_uring refused by seccomp (EPERM, ENOSYS): in a child, create must fall
 * back to pwrite silently and the dump must still be complete.
 */
static void test_fallback(int dirfd, const char *name, int err)
{
	const size_t total = 3 * FR_MIB + 77;
	struct dumpfile *f;
	pid_t pid;
	int st = 0, code;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (deny_io_uring(err))
			_exit(10);
		f = dumpfile__create(dirfd, name, 0600, 0);
		code = !f ? 11 : dumpfile__uses_uring(f) ? 12 :
		       write_pattern(f, total) ? 13 : 0;
		if (f && code)
			dumpfile__abort(f);
		else if (f && dumpfile__commit(f))
			code = 14;
		_exit(code);
	}
	ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	   WEXITSTATUS(st) == 0,
	   "io_uring_setup denied with %s: create falls back to pwrite silently (child status %d)",
	   strerrorname_np(err), WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	ok(matches_pattern(dirfd, name, total),
	   "the %s fallback dump is complete and byte-identical", strerrorname_np(err));
}

/* Any other io_uring_setup error (here EMFILE) is reported, not hidden. */
static void test_no_fallback(int dirfd)
{
	pid_t pid;
	int st = 0;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct dumpfile *f;

		if (deny_io_uring(EMFILE))
			_exit(10);
		errno = 0;
		f = dumpfile__create(dirfd, "emfile.dump", 0600, 0);
		if (f) {
			dumpfile__abort(f);
			_exit(11);
		}
		_exit(errno == EMFILE && !exists(dirfd, "emfile.dump.tmp") ? 0 : 12);
	}
	ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	   WEXITSTATUS(st) == 0,
	   "io_uring_setup failing with EMFILE fails create with EMFILE, no temp file left (child status %d)",
	   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void test_abort_and_names(int dirfd)
{
	struct dumpfile *f, *g;
	char longname[NAME_MAX + 1];

	f = dumpfile__create(dirfd, "ab.dump", 0600, 0);
	ok(f && !write_pattern(f, 5000) && exists(dirfd, "ab.dump.tmp"),
	   "abort: temp file exists before abort");
	dumpfile__abort(f);
	ok(!exists(dirfd, "ab.dump.tmp"), "abort removes the temp file");
	ok(!exists(dirfd, "ab.dump"), "abort leaves no final file");
	ok(survives(dumpfile__abort(NULL)), "dumpfile__abort(NULL) is a no-op");
	is_int(dumpfile__commit(NULL), -EINVAL, "dumpfile__commit(NULL) is -EINVAL");

	f = dumpfile__create(dirfd, "x.dump", 0600, 0);
	errno = 0;
	g = dumpfile__create(dirfd, "x.dump", 0600, 0);
	ok(f && !g && errno == EEXIST,
	   "create refuses an existing temp name (EEXIST)");
	dumpfile__abort(g);
	dumpfile__abort(f);

	errno = 0;
	ok(!dumpfile__create(dirfd, "sub/x.dump", 0600, 0) && errno == EINVAL,
	   "create refuses a name with '/' (EINVAL)");
	errno = 0;
	ok(!dumpfile__create(dirfd, "", 0600, 0) && errno == EINVAL,
	   "create refuses an empty name (EINVAL)");
	errno = 0;
	ok(!dumpfile__create(dirfd, "..", 0600, 0) && errno == EINVAL,
	   "create refuses '..' (EINVAL)");
	memset(longname, 'n', NAME_MAX - 2);
	longname[NAME_MAX - 2] = '\0';
	errno = 0;
	ok(!dumpfile__create(dirfd, longname, 0600, 0) && errno == ENAMETOOLONG,
	   "create refuses a name too long for the .tmp suffix (ENAMETOOLONG)");
	errno = 0;
	ok(!dumpfile__create(dirfd, "flags.dump", 0600, 0x80) && errno == EINVAL &&
	   !exists(dirfd, "flags.dump.tmp"), "create refuses unknown flags");
}

static void test_symlink(int dirfd)
{
	static const char precious[] = "precious, do not overwrite";
	unsigned char *p = NULL;
	size_t len = 0;
	struct stat st;
	int fd;

	fd = openat(dirfd, "victim", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	ok(fd >= 0 && write(fd, precious, sizeof(precious)) == sizeof(precious) &&
	   !close(fd) && !symlinkat("victim", dirfd, "s.dump.tmp"),
	   "plant a symlink s.dump.tmp -> victim");
	errno = 0;
	ok(!dumpfile__create(dirfd, "s.dump", 0600, 0) && errno == EEXIST,
	   "create fails on a symlink planted at <name>.tmp (EEXIST)");
	ok(!slurp(dirfd, "victim", &p, &len) && len == sizeof(precious) &&
	   !memcmp(p, precious, len), "the symlink's target is untouched");
	free(p);
	ok(!fstatat(dirfd, "s.dump.tmp", &st, AT_SYMLINK_NOFOLLOW) &&
	   S_ISLNK(st.st_mode), "the planted symlink is left as it was");

	ok(!symlinkat("nowhere", dirfd, "d.dump.tmp"),
	   "plant a dangling symlink d.dump.tmp -> nowhere");
	errno = 0;
	ok(!dumpfile__create(dirfd, "d.dump", 0600, 0) && errno == EEXIST,
	   "create fails on a dangling symlink at <name>.tmp (EEXIST)");
	ok(!exists(dirfd, "nowhere"), "no file was created through the dangling symlink");
}

static void test_noreplace(int dirfd)
{
	unsigned char *p = NULL;
	size_t len = 0;

	is_int(small_dump(dirfd, "keep.dump", 1000, 0), 0, "a first keep.dump commits");
	is_int(small_dump(dirfd, "keep.dump", 5000, 0), -EEXIST,
	       "commit never replaces an existing final file (-EEXIST)");
	ok(!slurp(dirfd, "keep.dump", &p, &len) && len == 1000,
	   "the existing keep.dump is unchanged");
	free(p);
	ok(!exists(dirfd, "keep.dump.tmp"), "the refused commit removed its temp file");
}

/* Commit a one-byte dump @name with @mode under @mask, then check its mode. */
static void mode_case(int dirfd, const char *name, mode_t mask, mode_t mode)
{
	mode_t old = umask(mask);
	struct dumpfile *f = dumpfile__create(dirfd, name, mode, 0);
	struct stat st;
	int err;

	err = f ? dumpfile__write(f, "x", 1) : -errno;
	if (f && err)
		dumpfile__abort(f);
	else if (f)
		err = dumpfile__commit(f);
	umask(old);
	if (!err && fstatat(dirfd, name, &st, 0))
		err = -errno;
	ok(!err && (st.st_mode & 07777) == mode,
	   "mode %04o as requested under umask %03o (got %04o, err %d)",
	   (unsigned)mode, (unsigned)mask,
	   err ? 0 : (unsigned)(st.st_mode & 07777), err);
}

static void test_mode(int dirfd)
{
	mode_case(dirfd, "m644.dump", 077, 0644);
	mode_case(dirfd, "m600.dump", 0, 0600);
	mode_case(dirfd, "m640.dump", 022, 0640);
}

/* One ENOSPC scenario on the small tmpfs at @dirfd. */
static void enospc_case(int dirfd, const char *what, unsigned flags, size_t total,
			size_t piece)
{
	struct dumpfile *f = dumpfile__create(dirfd, "big.dump", 0600, flags);
	unsigned char *buf = malloc(piece);
	int werr = 0, cerr, again = 0;
	size_t off;

	if (!ok(f && buf, "%s: create big.dump", what)) {
		dumpfile__abort(f);
		free(buf);
		return;
	}
	for (off = 0; off < total && !werr; off += piece) {
		pattern_fill(buf, off, piece);
		werr = dumpfile__write(f, buf, piece);
	}
	if (werr)
		again = dumpfile__write(f, buf, 1);
	cerr = dumpfile__commit(f);
	tap_diag("%s: write returned %d, commit returned %d", what, werr, cerr);
	ok(werr == -ENOSPC || (!werr && cerr == -ENOSPC),
	   "%s: ENOSPC from write or commit", what);
	ok(cerr == -ENOSPC && (!werr || again == werr),
	   "%s: commit returns -ENOSPC%s", what,
	   werr ? "; the error is sticky (a later write returned it too)" : "");
	ok(!exists(dirfd, "big.dump.tmp"), "%s: the temp file is removed", what);
	ok(!exists(dirfd, "big.dump"), "%s: no final file exists", what);
	free(buf);
}

static void test_enospc(void)
{
	char dir[] = "/tmp/fr-enospc-XXXXXX";
	int dirfd;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp for the tmpfs: %s", strerror(errno));
		return;
	}
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=256k")) {
		if (errno == EPERM) {
			tap_skip(FR_ENOSPC_CHECKS, "ENOSPC: cannot mount a tmpfs (EPERM, not root)");
		} else {
			ok(0, "mount a 256k tmpfs on %s: %s", dir, strerror(errno));
		}
		rmdir(dir);
		return;
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ok(dirfd >= 0, "open the 256k tmpfs")) {
		enospc_case(dirfd, "io_uring 1 MiB", 0, FR_MIB, FR_MIB);
		enospc_case(dirfd, "io_uring 8 MiB", 0, 8 * FR_MIB, 65536);
		enospc_case(dirfd, "pwrite 1 MiB", FR_WRITER_FORCE_PWRITE, FR_MIB, 4096);
		is_int(small_dump(dirfd, "small.dump", 20000, 0), 0,
		       "after ENOSPC a small dump in the same directory commits");
		ok(matches_pattern(dirfd, "small.dump", 20000),
		   "the small dump is byte-identical");
		close(dirfd);
	}
	ok(!umount2(dir, 0), "unmount the tmpfs");
	rmdir(dir);
}

/* Remove every entry of the flat test directory, then the directory. */
static void cleanup_dir(const char *dir, int dirfd)
{
	static const char *const names[] = {
		"ring.dump", "pw.dump", "empty.dump", "victim", "s.dump.tmp",
		"d.dump.tmp", "keep.dump", "eperm.dump", "enosys.dump", "m644.dump", "m600.dump", "m640.dump",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlinkat(dirfd, names[i], 0);
	close(dirfd);
	if (rmdir(dir))
		tap_diag("failed to remove '%s': %s", dir, strerror(errno));
}

/*
 * Buffers and a ring made once (dumpbufs__new()) write file after file,
 * each byte-identical to its data: through io_uring, through pwrite when
 * a file forces it, and after a file given up with writes in flight.
 */
static void test_reused(int dirfd, bool have_uring)
{
	static const size_t sizes[] = { 3 * FR_MIB + 17, 0, 5 * FR_MIB + 1, 2 * FR_MIB };
	static const unsigned flags[] = { 0, 0, FR_WRITER_FORCE_PWRITE, 0 };
	struct dumpbufs *b = dumpbufs__new(0);
	bool all = b != NULL, uring = true;
	char name[32];

	for (int i = 0; i < 4 && all; i++) {
		struct dumpfile *f;

		/* one given up with its buffers in flight first */
		snprintf(name, sizeof(name), "reuse-abandoned%d.dump", i);
		f = dumpfile__create_with(dirfd, name, 0600, flags[i], b);
		all = f && !write_pattern(f, 2 * FR_MIB + 5);
		dumpfile__abort(f);
		all = all && !exists(dirfd, name);
		snprintf(name, sizeof(name), "reuse%d.dump", i);
		f = dumpfile__create_with(dirfd, name, 0600, flags[i], b);
		all = all && f;
		if (f && !flags[i])
			uring &= dumpfile__uses_uring(f) == have_uring;
		if (f && flags[i])
			uring &= !dumpfile__uses_uring(f);
		all = all && !write_pattern(f, sizes[i]) && !dumpfile__commit(f) &&
		      matches_pattern(dirfd, name, sizes[i]);
		if (f && !all)
			dumpfile__abort(f);
	}
	ok(all, "one set of buffers and ring writes file after file, each byte-identical, "
	   "after files given up midway");
	ok(uring, "they write through the ring when it exists, and through pwrite when forced");
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "reuse%d.dump", i);
		unlinkat(dirfd, name, 0);
	}
	dumpbufs__free(b);
	dumpbufs__free(NULL);
}

int main(void)
{
	char dir[] = "/tmp/fr-writer-XXXXXX";
	char no_uring[128] = "";
	struct io_uring probe;
	bool have_uring;
	int dirfd, ret;

	ret = io_uring_queue_init(8, &probe, 0);
	have_uring = ret == 0;
	if (have_uring) {
		io_uring_queue_exit(&probe);
	} else {
		snprintf(no_uring, sizeof(no_uring),
			 "io_uring_queue_init fails here: %s", strerror(-ret));
		tap_diag("%s; io_uring checks skipped", no_uring);
	}
	if (!mkdtemp(dir))
		tap_skip_all("mkdtemp failed");
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		tap_skip_all("cannot open the temporary directory");

	test_roundtrip(dirfd, have_uring, no_uring);
	test_reused(dirfd, have_uring);
	test_fallback(dirfd, "eperm.dump", EPERM);
	test_fallback(dirfd, "enosys.dump", ENOSYS);
	test_no_fallback(dirfd);
	test_abort_and_names(dirfd);
	test_symlink(dirfd);
	test_noreplace(dirfd);
	test_mode(dirfd);
	test_enospc();

	cleanup_dir(dir, dirfd);
	return tap_done_testing();
}
