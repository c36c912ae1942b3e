// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * frmem.c - memory workloads with known answers, for test_memory.py. Each
 * prints what it did with CLOCK_BOOTTIME stamps (the trace clock) and the
 * kernel's own count (VmRSS of /proc/self/status, KiB) at each point:
 *
 *   frmem curve                  touch 100 MiB, then 200 MiB more, then free
 *                                150 MiB, 1 s apart (MADV_NOHUGEPAGE):
 *                                "pid P", then "step K BEGIN END VMRSS" for
 *                                each step, then exits 0 after 1.5 s
 *   frmem reuse MIB1 MIB2        two incarnations of one PID (clone3 with
 *                                set_tid), touching MIB1 then MIB2 MiB:
 *                                "inc K PID BEGIN END VMRSS" each
 *   frmem maphold PROCS MIB S FILE
 *                                join the cgroup whose procs file is PROCS,
 *                                write a MIB MiB FILE, map it and read every
 *                                page: "ready PID VMRSS BOOT"; hold it S
 *                                seconds (while others reclaim it): "end
 *                                VMRSS BOOT"
 *   frmem hog MIB PROCS ADJ      join PROCS, write ADJ to oom_score_adj,
 *                                "pid P", touch MIB MiB (an OOM kill, in a
 *                                small cgroup)
 *   frmem sleeper PROCS ADJ S    join PROCS, write ADJ to oom_score_adj,
 *                                "pid P", touch 8 MiB, sleep S seconds
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pidreuse.h"

#define MIB	(1UL << 20)

static unsigned long long boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static long vmrss_kib(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			v = strtol(line + 6, NULL, 10);
	fclose(f);
	return v;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static char *anon(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("frmem: mmap");
		exit(1);
	}
	/* 4 KiB pages, so the kernel's counters move page by page. */
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

__attribute__((noinline)) void touch(char *p, size_t len);

__attribute__((noinline)) void touch(char *p, size_t len)
{
	for (size_t off = 0; off < len; off += 4096)
		p[off] = 1;
}

static int curve(void)
{
	char *a, *b;
	unsigned long long t0, t1;

	printf("pid %d\n", getpid());
	fflush(stdout);
	sleep_s(1.0);
	a = anon(100 * MIB);
	t0 = boot_ns();
	touch(a, 100 * MIB);
	t1 = boot_ns();
	printf("step 1 %llu %llu %ld\n", t0, t1, vmrss_kib());
	fflush(stdout);
	sleep_s(1.0);
	b = anon(200 * MIB);
	t0 = boot_ns();
	touch(b, 200 * MIB);
	t1 = boot_ns();
	printf("step 2 %llu %llu %ld\n", t0, t1, vmrss_kib());
	fflush(stdout);
	sleep_s(1.0);
	t0 = boot_ns();
	munmap(b + 50 * MIB, 150 * MIB);
	t1 = boot_ns();
	printf("step 3 %llu %llu %ld\n", t0, t1, vmrss_kib());
	fflush(stdout);
	sleep_s(1.5);
	return 0;
}

static int incarnation(int k, long mib)
{
	char *p = anon((size_t)mib * MIB);
	unsigned long long t0 = boot_ns(), t1;

	touch(p, (size_t)mib * MIB);
	t1 = boot_ns();
	printf("inc %d %d %llu %llu %ld\n", k, getpid(), t0, t1, vmrss_kib());
	fflush(stdout);
	sleep_s(1.5);
	return 0;
}

static int reuse(long mib1, long mib2)
{
	pid_t want = pidreuse__free_pid(3000), a, b;
	int st;

	if (want < 0) {
		fprintf(stderr, "frmem: no free PID\n");
		return 1;
	}
	printf("pid %d\n", want);
	fflush(stdout);
	a = pidreuse__spawn_at(want);
	if (a < 0) {
		fprintf(stderr, "frmem: failed to clone3 with set_tid %d: %s\n", want, strerror(errno));
		return 1;
	}
	if (!a)
		_exit(incarnation(1, mib1));
	waitpid(a, &st, 0);
	b = pidreuse__spawn_at(want);
	if (b < 0) {
		fprintf(stderr, "frmem: failed to reuse PID %d: %s\n", want, strerror(errno));
		return 1;
	}
	if (!b)
		_exit(incarnation(2, mib2));
	waitpid(b, &st, 0);
	return 0;
}

static int join(const char *procs)
{
	int fd = open(procs, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || dprintf(fd, "%d\n", getpid()) < 0) {
		fprintf(stderr, "frmem: failed to join '%s': %s\n", procs, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

static int set_adj(const char *adj)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

	if (fd < 0 || dprintf(fd, "%s\n", adj) < 0) {
		fprintf(stderr, "frmem: failed to write oom_score_adj '%s': %s\n", adj, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

static int maphold(const char *procs, long mib, double seconds, const char *path)
{
	static char buf[1 << 20];
	size_t len = (size_t)mib * MIB;
	unsigned long sum = 0;
	volatile char *p;
	int fd;

	if (join(procs))
		return 1;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 1;
	memset(buf, 0x5a, sizeof(buf));
	for (long i = 0; i < mib; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 1;
	for (size_t off = 0; off < len; off += 4096)
		sum += p[off];
	printf("ready %d %ld %llu\n", getpid(), vmrss_kib(), boot_ns());
	fflush(stdout);
	sleep_s(seconds);
	printf("end %ld %llu %lu\n", vmrss_kib(), boot_ns(), sum & 1);
	fflush(stdout);
	close(fd);
	unlink(path);
	return 0;
}

static int hog(long mib, const char *procs, const char *adj)
{
	size_t len = (size_t)mib * MIB;
	char *p;

	if (join(procs) || set_adj(adj))
		return 1;
	printf("pid %d\n", getpid());
	fflush(stdout);
	sleep_s(0.3);	/* the recorder reads what it is while it lives */
	p = anon(len);
	touch(p, len);
	return 0;
}

static int sleeper(const char *procs, const char *adj, double seconds)
{
	char *p;

	if (join(procs) || set_adj(adj))
		return 1;
	p = anon(8 * MIB);
	touch(p, 8 * MIB);
	printf("pid %d\n", getpid());
	fflush(stdout);
	sleep_s(seconds);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "curve"))
		return curve();
	if (argc >= 4 && !strcmp(argv[1], "reuse"))
		return reuse(atol(argv[2]), atol(argv[3]));
	if (argc >= 6 && !strcmp(argv[1], "maphold"))
		return maphold(argv[2], atol(argv[3]), atof(argv[4]), argv[5]);
	if (argc >= 5 && !strcmp(argv[1], "hog"))
		return hog(atol(argv[2]), argv[3], argv[4]);
	if (argc >= 5 && !strcmp(argv[1], "sleeper"))
		return sleeper(argv[2], argv[3], atof(argv[4]));
	fprintf(stderr, "usage: frmem curve | reuse MIB1 MIB2 | maphold PROCS MIB S FILE | "
		"hog MIB PROCS ADJ | sleeper PROCS ADJ S\n");
	return 2;
}
