// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * frtool.c - process-lifecycle workloads for the process-truth tests, with
 * known function names (built with frame pointers).
 *
 *   frtool reuse SECONDS         two incarnations of one PID in a row
 *                                (clone3 with set_tid), spinning in
 *                                fr_reuse_first then fr_reuse_second;
 *                                prints "PID" once the first has started
 *   frtool pthread-exit SECONDS  the main thread calls pthread_exit while a
 *                                worker spins in fr_pthexit_worker
 *   frtool churn N               fork N children that exit at once
 *   frtool hog MIB [CGROUP_PROCS]  join a cgroup, then touch MIB MiB
 *   frtool thrash PROCS MIB SECONDS FILE
 *                                join the cgroup whose procs file is PROCS,
 *                                write a MIB MiB FILE from inside it (its page
 *                                cache is charged there), then touch random
 *                                pages of it in fr_thrash_touch for SECONDS
 *   frtool dlopen LIB SECONDS    after 0.3 s, dlopen LIB and spin in its
 *                                fr_dl_spin
 *   frtool dlswap LIB1 LIB2 SECONDS [CHURN]
 *                                dlopen LIB1, spin in its fr_dl_spin,
 *                                dlclose it, dlopen LIB2 (often at LIB1's
 *                                place) and spin in its fr_dl2_spin, half
 *                                the time each; prints "swap ADDR1 ADDR2"
 *                                (the two functions' addresses) at the swap.
 *                                With CHURN, LIB1 is spun in for 5 ms, then
 *                                come CHURN round trips LIB2, LIB1 of 5 ms
 *                                spins each, and the swap's LIB2 spins for
 *                                all of SECONDS
 *   frtool exec-after SECONDS PROGRAM ARGS...
 *                                spin in fr_preexec_spin, then exec PROGRAM:
 *                                one incarnation, two images
 *   frtool jit SECONDS           spin in code copied to an anonymous
 *                                executable mapping, named fr_jit_spin in
 *                                /tmp/perf-PID.map (x86-64 only)
 *   frtool jit-bare SECONDS      the same, writing no perf map: the caller
 *                                makes /tmp/perf-PID.map (a hostile one)
 *   frtool map-exec FILE OFFSET SECONDS
 *                                map FILE (a crafted ELF) executable and
 *                                spin in the countdown loop found at OFFSET
 *                                (48 ff cf 75 fb c3: dec rdi; jnz; ret)
 * jit-bare and map-exec print "PID ADDRESS" (of the loop, in hex) on
 * stdout once they spin.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pidreuse.h"

static volatile unsigned long fr_sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void fr_reuse_first(double seconds);
__attribute__((noinline)) void fr_reuse_second(double seconds);
__attribute__((noinline)) void *fr_pthexit_worker(void *arg);

__attribute__((noinline)) void fr_reuse_first(double seconds)
{
	double until = now() + seconds;

	while (now() < until)
		for (int i = 0; i < 100000; i++)
			fr_sink += (unsigned long)i * 2654435761u;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void fr_reuse_second(double seconds)
{
	double until = now() + seconds;

	while (now() < until)
		for (int i = 0; i < 100000; i++)
			fr_sink ^= (unsigned long)i * 40503u;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void *fr_pthexit_worker(void *arg)
{
	double until = now() + *(double *)arg;

	while (now() < until)
		for (int i = 0; i < 100000; i++)
			fr_sink += (unsigned long)i * 97u;
	__asm__ volatile("" ::: "memory");
	return NULL;
}

static int reuse(double seconds)
{
	pid_t want = pidreuse__free_pid(2000), a, b;
	int st;

	if (want < 0) {
		fprintf(stderr, "frtool: no free PID\n");
		return 1;
	}
	a = pidreuse__spawn_at(want);
	if (a < 0) {
		fprintf(stderr, "frtool: failed to clone3 with set_tid %d: %s\n", want, strerror(errno));
		return 1;
	}
	if (!a) {
		fr_reuse_first(seconds);
		_exit(11);
	}
	printf("%d\n", a);
	fflush(stdout);
	waitpid(a, &st, 0);
	b = pidreuse__spawn_at(want);
	if (b < 0) {
		fprintf(stderr, "frtool: failed to reuse PID %d: %s\n", want, strerror(errno));
		return 1;
	}
	if (!b) {
		fr_reuse_second(seconds);
		_exit(22);
	}
	waitpid(b, &st, 0);
	return 0;
}

static int pthread_exit_main(double seconds)
{
	static double s;
	pthread_t th;

	s = seconds;
	if (pthread_create(&th, NULL, fr_pthexit_worker, &s))
		return 1;
	pthread_exit(NULL);
}

static int churn(long n)
{
	for (long i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			return 1;
		if (!p)
			_exit(0);
		waitpid(p, NULL, 0);
	}
	return 0;
}

static int hog(long mib, const char *procs)
{
	size_t len = (size_t)mib << 20;
	char *p;

	if (procs) {
		int fd = open(procs, O_WRONLY);
		char buf[32];

		if (fd < 0 || dprintf(fd, "%d\n", getpid()) < 0) {
			fprintf(stderr, "frtool: failed to join '%s': %s\n", procs, strerror(errno));
			return 1;
		}
		close(fd);
		snprintf(buf, sizeof(buf), "%d\n", getpid());
		if (write(1, buf, strlen(buf)) < 0)
			return 1;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	for (size_t off = 0; off < len; off += 4096)
		p[off] = 1;
	return 0;
}

__attribute__((noinline)) unsigned long fr_thrash_touch(const volatile char *p, size_t len,
						    double seconds);

__attribute__((noinline)) unsigned long fr_thrash_touch(const volatile char *p, size_t len,
						    double seconds)
{
	double until = now() + seconds;
	unsigned long sum = 0, x = 88172645463325252UL;

	while (now() < until) {
		for (int i = 0; i < 256; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			sum += p[(x % (len / 4096)) * 4096];
		}
	}
	return sum;
}

static int thrash(const char *procs, long mib, double seconds, const char *path)
{
	size_t len = (size_t)mib << 20;
	static char buf[1 << 20];
	char *p;
	int fd;

	fd = open(procs, O_WRONLY);
	if (fd < 0 || dprintf(fd, "%d\n", getpid()) < 0) {
		fprintf(stderr, "frtool: failed to join '%s': %s\n", procs, strerror(errno));
		return 1;
	}
	close(fd);
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
	printf("%lu\n", fr_thrash_touch(p, len, seconds) & 1);
	munmap(p, len);
	close(fd);
	unlink(path);
	return 0;
}

__attribute__((noinline)) void fr_preexec_spin(double seconds);

__attribute__((noinline)) void fr_preexec_spin(double seconds)
{
	double until = now() + seconds;

	while (now() < until)
		for (int i = 0; i < 100000; i++)
			fr_sink += (unsigned long)i * 7919u;
	__asm__ volatile("" ::: "memory");
}

static int exec_after(double seconds, char **argv)
{
	fr_preexec_spin(seconds);
	execv(argv[0], argv);
	fprintf(stderr, "frtool: failed to exec '%s': %s\n", argv[0], strerror(errno));
	return 1;
}

static int dl(const char *lib, double seconds)
{
	void (*fn)(double);
	void *h;

	usleep(300 * 1000);
	h = dlopen(lib, RTLD_NOW);
	fn = h ? (void (*)(double))dlsym(h, "fr_dl_spin") : NULL;
	if (!fn) {
		fprintf(stderr, "frtool: failed to load '%s': %s\n", lib, dlerror());
		return 1;
	}
	fn(seconds);
	return 0;
}

/* dlopen @lib and find @sym in it; NULL (and a message) when either fails. */
static void (*dl_fn(const char *lib, const char *sym, void **h))(double)
{
	void (*fn)(double);

	*h = dlopen(lib, RTLD_NOW);
	fn = *h ? (void (*)(double))dlsym(*h, sym) : NULL;
	if (!fn)
		fprintf(stderr, "frtool: failed to load '%s': %s\n", lib, dlerror());
	return fn;
}

/* Two libraries, one after the other, perhaps at one address (and CHURN round trips first). */
static int dlswap(const char *lib1, const char *lib2, double seconds, int churn)
{
	void (*fn1)(double), (*fn2)(double);
	void *h1, *h2;

	fn1 = dl_fn(lib1, "fr_dl_spin", &h1);
	if (!fn1)
		return 1;
	fn1(churn ? 0.005 : seconds / 2);
	for (int i = 0; i < churn; i++) {
		dlclose(h1);
		fn2 = dl_fn(lib2, "fr_dl2_spin", &h2);
		if (!fn2)
			return 1;
		fn2(0.005);
		dlclose(h2);
		fn1 = dl_fn(lib1, "fr_dl_spin", &h1);
		if (!fn1)
			return 1;
		fn1(0.005);
	}
	dlclose(h1);
	fn2 = dl_fn(lib2, "fr_dl2_spin", &h2);
	if (!fn2)
		return 1;
	printf("swap %lx %lx\n", (unsigned long)fn1, (unsigned long)fn2);
	fflush(stdout);
	fn2(churn ? seconds : seconds / 2);
	return 0;
}

/*
 * JIT: "dec %rdi; jnz -5; ret" in an anonymous executable page, called in
 * a loop, and announced in /tmp/perf-PID.map as a JIT runtime would.
 */
/* The countdown loop: dec %rdi; jnz .-3; ret. */
static const unsigned char fr_loop_code[] = { 0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3 };

/* Call the loop at @code until @seconds have passed; say the PID and @code first if @say. */
static void spin_in(const void *code, double seconds, bool say)
{
	void (*fn)(unsigned long) = (void (*)(unsigned long))code;
	double until = now() + seconds;

	if (say) {
		printf("%d %lx\n", getpid(), (unsigned long)code);
		fflush(stdout);
	}
	while (now() < until)
		fn(1000000);
}

static int jit(double seconds, bool write_map)
{
#if defined(__x86_64__)
	char path[64];
	FILE *f;
	void *p;

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, fr_loop_code, sizeof(fr_loop_code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 1;
	if (write_map) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
		f = fopen(path, "w");
		if (!f)
			return 1;
		fprintf(f, "%lx %zx fr_jit_spin\n", (unsigned long)p, sizeof(fr_loop_code));
		fclose(f);
	}
	spin_in(p, seconds, !write_map);
	return 0;
#else
	(void)seconds;
	(void)write_map;
	fprintf(stderr, "frtool: jit needs x86-64\n");
	return 3;
#endif
}

/* Map @file executable and spin in the loop at @off of it. */
static int map_exec(const char *file, long off, double seconds)
{
#if defined(__x86_64__)
	struct stat st;
	void *p;
	int fd;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || off < 0 || off + (long)sizeof(fr_loop_code) > st.st_size) {
		fprintf(stderr, "frtool: cannot use '%s' at offset %ld\n", file, off);
		return 1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 1;
	if (memcmp((char *)p + off, fr_loop_code, sizeof(fr_loop_code))) {
		fprintf(stderr, "frtool: no countdown loop at offset %ld of '%s'\n", off, file);
		return 1;
	}
	spin_in((char *)p + off, seconds, true);
	return 0;
#else
	(void)file;
	(void)off;
	(void)seconds;
	fprintf(stderr, "frtool: map-exec needs x86-64\n");
	return 3;
#endif
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "exec-after"))
		return exec_after(atof(argv[2]), argv + 3);
	if (argc >= 6 && !strcmp(argv[1], "thrash"))
		return thrash(argv[2], atol(argv[3]), atof(argv[4]), argv[5]);
	if (argc >= 4 && !strcmp(argv[1], "dlopen"))
		return dl(argv[2], atof(argv[3]));
	if (argc >= 5 && !strcmp(argv[1], "dlswap"))
		return dlswap(argv[2], argv[3], atof(argv[4]), argc >= 6 ? atoi(argv[5]) : 0);
	if (argc >= 3 && !strcmp(argv[1], "jit"))
		return jit(atof(argv[2]), true);
	if (argc >= 3 && !strcmp(argv[1], "jit-bare"))
		return jit(atof(argv[2]), false);
	if (argc >= 5 && !strcmp(argv[1], "map-exec"))
		return map_exec(argv[2], strtol(argv[3], NULL, 0), atof(argv[4]));
	if (argc >= 3 && !strcmp(argv[1], "reuse"))
		return reuse(atof(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "pthread-exit"))
		return pthread_exit_main(atof(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "churn"))
		return churn(atol(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "hog"))
		return hog(atol(argv[2]), argc > 3 ? argv[3] : NULL);
	fprintf(stderr, "usage: frtool reuse S | pthread-exit S | churn N | hog MIB [CGROUP_PROCS]\n");
	return 2;
}
