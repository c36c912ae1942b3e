// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * frstall.c - workloads that wait, with known answers, for the stall and
 * off-CPU tests and the bench (built with frame pointers).
 *
 *   frstall vfork MS [PAUSE_MS]
 *                          vfork() in fr_vfork_wait; the child sleeps MS
 *                          ms, then execs /bin/true: the parent waits in
 *                          a killable (D) sleep for about MS ms. Prints
 *                          "PID TID BEGIN_NS END_NS" (CLOCK_BOOTTIME,
 *                          around the vfork call)
 *   frstall fsync FILE MIB [PAUSE_MS]
 *                          write MIB MiB to FILE, then fsync it in
 *                          fr_fsync_call. Prints "PID TID BEGIN_NS END_NS
 *                          ONCPU_NS RUNQ_NS": the fsync call's bounds and
 *                          the thread's time on the CPU and waiting on a
 *                          runqueue during it (/proc/thread-self/schedstat)
 * PAUSE_MS (default 0): sleep that long first, so that a recorder has read
 * what the new process is (its maps name its user frames) while it lives.
 *   frstall pingpong SECONDS
 *                          two processes pass a byte back and forth through
 *                          two pipes for SECONDS (interruptible sleeps: two
 *                          context switches a round trip); prints the round
 *                          trips per second
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int tid(void)
{
	return (int)syscall(SYS_gettid);
}

/* The parent waits here, in the kernel's vfork wait, until the child execs. */
__attribute__((noinline)) static pid_t fr_vfork_wait(long ms)
{
	pid_t pid = vfork();

	if (pid == 0) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int do_vfork(long ms)
{
	uint64_t t0 = boot_ns(), t1;
	pid_t pid = fr_vfork_wait(ms);
	int st;

	t1 = boot_ns();
	if (pid < 0) {
		fprintf(stderr, "frstall: failed to vfork: %s\n", strerror(errno));
		return 1;
	}
	waitpid(pid, &st, 0);
	printf("%d %d %" PRIu64 " %" PRIu64 "\n", getpid(), tid(), t0, t1);
	return 0;
}

/*
 * Time on the CPU and waiting on a runqueue, ns, of the calling thread.
 * The kernel brings a running thread's figure up to date only when it
 * yields or is switched out (the file reads it as it stands): yield first.
 */
static int schedstat(uint64_t *oncpu, uint64_t *runq)
{
	FILE *f;
	int n;

	sched_yield();
	f = fopen("/proc/thread-self/schedstat", "r");
	if (!f)
		return -1;
	n = fscanf(f, "%" SCNu64 " %" SCNu64, oncpu, runq);
	fclose(f);
	return n == 2 ? 0 : -1;
}

__attribute__((noinline)) static int fr_fsync_call(int fd)
{
	return fsync(fd);
}

static int do_fsync(const char *path, long mib)
{
	static char buf[1 << 20];
	uint64_t c0, c1, q0, q1, t0, t1;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0) {
		fprintf(stderr, "frstall: failed to open '%s': %s\n", path, strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 7 + (i >> 12));
	for (long i = 0; i < mib; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			fprintf(stderr, "frstall: failed to write '%s': %s\n", path, strerror(errno));
			return 1;
		}
	if (schedstat(&c0, &q0))
		return 1;
	t0 = boot_ns();
	if (fr_fsync_call(fd)) {
		fprintf(stderr, "frstall: failed to fsync '%s': %s\n", path, strerror(errno));
		return 1;
	}
	t1 = boot_ns();
	if (schedstat(&c1, &q1))
		return 1;
	close(fd);
	printf("%d %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", getpid(), tid(), t0, t1,
	       c1 - c0, q1 - q0);
	return 0;
}

static int do_pingpong(double seconds)
{
	int a[2], b[2];
	uint64_t n = 0, end;
	pid_t pid;
	char c = 0;

	if (pipe(a) || pipe(b))
		return 1;
	pid = fork();
	if (pid == 0) {
		close(a[1]);	/* else a[0] never sees the end of the parent's writes */
		close(b[0]);
		while (read(a[0], &c, 1) == 1)
			if (write(b[1], &c, 1) != 1)
				break;
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	end = boot_ns() + (uint64_t)(seconds * 1e9);
	while (boot_ns() < end) {
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			break;
		n++;
	}
	close(a[1]);
	waitpid(pid, NULL, 0);
	printf("%.0f\n", n / seconds);
	return 0;
}

/* Sleep @arg ms (NULL: not at all). */
static void pause_ms(const char *arg)
{
	long ms = arg ? atol(arg) : 0;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (ms > 0)
		nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "vfork"))
		pause_ms(argc >= 4 ? argv[3] : NULL);
	if (argc >= 4 && !strcmp(argv[1], "fsync"))
		pause_ms(argc >= 5 ? argv[4] : NULL);
	if (argc >= 3 && !strcmp(argv[1], "vfork"))
		return do_vfork(atol(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "fsync"))
		return do_fsync(argv[2], atol(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "pingpong"))
		return do_pingpong(atof(argv[2]));
	fprintf(stderr, "usage: frstall vfork MS | fsync FILE MIB | pingpong SECONDS\n");
	return 2;
}
