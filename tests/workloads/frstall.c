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
 * PAUSE_MS (default 0): sleep that long first, so that a recorder has read
 * what the new process is (its maps name its user frames) while it lives.
 *   frstall inodelock MS [PAUSE_MS]
 *                          a thread writes to a tmpfs file from a page that
 *                          faults to a userfaultfd, so it sleeps holding
 *                          the file's inode lock until the fault is
 *                          resolved; meanwhile another thread writes one
 *                          byte to the file in fr_inode_wait and waits for
 *                          that lock, uninterruptible (D): the fault is
 *                          resolved MS ms after /proc shows it blocked.
 *                          Prints "PID TID BEGIN_NS END_NS" of the waiter's
 *                          write call
 *   frstall pingpong SECONDS
 *                          two processes pass a byte back and forth through
 *                          two pipes for SECONDS (interruptible sleeps: two
 *                          context switches a round trip); prints the round
 *                          trips per second
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <inttypes.h>
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

struct lock_args {
	int fd;
	const void *buf;
	uint64_t t0, t1;
	volatile int tid;
};

/*
 * Wait (10 s at most) until thread @*tidp of this process is set and
 * blocked in D: the waiter inside its write, behind the holder's lock.
 * Without it, a loaded machine could run the waiter's write only after
 * the lock was free, and it would not block at all. Returns 0 or -1.
 */
static int wait_blocked(volatile int *tidp)
{
	for (int i = 0; i < 10000; i++) {
		char path[64], buf[256], *rp;
		FILE *f;

		if (*tidp) {
			snprintf(path, sizeof(path), "/proc/self/task/%d/stat", *tidp);
			f = fopen(path, "r");
			buf[0] = 0;
			if (f && !fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			if (f)
				fclose(f);
			rp = strrchr(buf, ')');
			if (rp && rp[1] == ' ' && rp[2] == 'D')
				return 0;
		}
		usleep(1000);
	}
	return -1;
}

/* The holder: its write faults on the userfaultfd page, inside the inode lock. */
static void *lock_holder(void *arg)
{
	struct lock_args *a = arg;

	if (write(a->fd, a->buf, 4096) != 4096)
		fprintf(stderr, "frstall: the holder's write: %s\n", strerror(errno));
	return NULL;
}

/* The waiter: one byte to the same file, behind the holder's lock. */
__attribute__((noinline)) static void *fr_inode_wait(void *arg)
{
	struct lock_args *a = arg;

	a->tid = tid();
	a->t0 = boot_ns();
	if (write(a->fd, "x", 1) != 1)
		fprintf(stderr, "frstall: the waiter's write: %s\n", strerror(errno));
	a->t1 = boot_ns();
	return NULL;
}

/* The userfaultfd of @page_len bytes at @page, missing pages reported. */
static int uffd_open(void *page, size_t page_len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)page, .len = page_len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);

	if (fd < 0 || ioctl(fd, UFFDIO_API, &api) || ioctl(fd, UFFDIO_REGISTER, &reg)) {
		fprintf(stderr, "frstall: failed to set up a userfaultfd: %s\n", strerror(errno));
		return -1;
	}
	return fd;
}

static int do_inodelock(long ms)
{
	static char src[4096] __attribute__((aligned(4096)));
	struct lock_args hold = { 0 }, wait = { 0 };
	struct uffd_msg msg;
	struct pollfd pfd;
	pthread_t th, tw;
	long pg = sysconf(_SC_PAGESIZE);
	char path[] = "/dev/shm/frstall-XXXXXX";
	void *page = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int uffd, fd = mkstemp(path), fd2;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (page == MAP_FAILED || fd < 0 || (uffd = uffd_open(page, pg)) < 0)
		return 1;
	/* The waiter's own open file: one shared would make it wait on the file
	 * position's lock, before the inode's. */
	fd2 = open(path, O_WRONLY | O_APPEND);
	unlink(path);
	if (fd2 < 0)
		return 1;
	hold = (struct lock_args){ .fd = fd, .buf = page };
	wait = (struct lock_args){ .fd = fd2 };
	pthread_create(&th, NULL, lock_holder, &hold);
	/* The holder's fault: it sleeps now, holding the inode lock. */
	pfd = (struct pollfd){ .fd = uffd, .events = POLLIN };
	if (poll(&pfd, 1, 10000) != 1 || read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT) {
		fprintf(stderr, "frstall: no userfaultfd fault\n");
		return 1;
	}
	pthread_create(&tw, NULL, fr_inode_wait, &wait);
	if (wait_blocked(&wait.tid)) {
		fprintf(stderr, "frstall: the waiter never blocked on the inode lock\n");
		return 1;
	}
	nanosleep(&ts, NULL);
	{
		struct uffdio_copy cp = { .dst = (uintptr_t)page, .src = (uintptr_t)src, .len = pg };

		if (ioctl(uffd, UFFDIO_COPY, &cp)) {
			fprintf(stderr, "frstall: failed to resolve the fault: %s\n", strerror(errno));
			return 1;
		}
	}
	pthread_join(th, NULL);
	pthread_join(tw, NULL);
	printf("%d %d %" PRIu64 " %" PRIu64 "\n", getpid(), wait.tid, wait.t0, wait.t1);
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
	if (argc >= 3 && !strcmp(argv[1], "vfork"))
		return do_vfork(atol(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "pingpong"))
		return do_pingpong(atof(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "inodelock")) {
		pause_ms(argc >= 4 ? argv[3] : NULL);
		return do_inodelock(atol(argv[2]));
	}
	fprintf(stderr, "usage: frstall vfork MS [PAUSE_MS] | inodelock MS [PAUSE_MS] | pingpong SECONDS\n");
	return 2;
}
