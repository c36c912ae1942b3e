// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * workload.c - the benchmarks' fixed CPU-bound job: LZ77-compresses slices
 * of a text-like buffer through deep, varied call chains, on every CPU, and
 * starts many short-lived processes (fork + exec of itself, which compress
 * a little through a deep stack and exit). Built with frame pointers, so
 * BPF and perf unwind the user stacks.
 *
 *   fr-bench-work [--workers N] [--iters K | --seconds S] [--spawn-every M]
 *                 [--slice KIB] [--child SEED]
 *   fr-bench-work --touch MIB --iters K
 *
 * --touch: the memory benchmark's fault-heavy job instead, in one process:
 * K times, map MIB MiB, touch every 4 KiB page (MADV_NOHUGEPAGE: one fault
 * and one RSS counter change per page), unmap. Prints faults and wall time.
 *
 * --iters: a fixed amount of work per worker (the overhead benchmark times
 * it); --seconds: run that long (to fill a recorder's window). Prints one
 * line: workers, iterations, children spawned, wall seconds, a checksum.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FR_NOINLINE __attribute__((noinline))
#define HASH_BITS 14
#define BUF_BYTES (4u << 20)
#define CHILD_BYTES (64u << 10)

static uint8_t *text;
static uint8_t *outbuf;
static uint32_t table[1 << HASH_BITS];
static volatile uint64_t fr_sink;
static const char *self_exe = "/proc/self/exe";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Text-like input: words from a small vocabulary, some numbers. */
static void make_text(size_t bytes)
{
	static const char *words[] = { "the", "flight", "recorder", "keeps", "window",
		"of", "samples", "stack", "process", "memory", "pressure", "dump", "kernel",
		"event", "and", "with", "every", "CPU", "trigger", "writes", "compressed",
		"file", "time", "ordered", "exit", "fork", "exec", "counter" };
	size_t n = 0;

	text = malloc(bytes + 64);
	outbuf = malloc(bytes + bytes / 8 + 64);
	if (!text || !outbuf) {
		perror("fr-bench-work: malloc");
		exit(1);
	}
	while (n < bytes) {
		uint64_t r = rnd();
		const char *w = words[r % (sizeof(words) / sizeof(words[0]))];
		int len;

		if (r % 11 == 0)
			len = snprintf((char *)text + n, 64, "%u ", (unsigned)(r >> 20) % 100000);
		else
			len = snprintf((char *)text + n, 64, "%s%c", w, r % 13 ? ' ' : '\n');
		n += len;
	}
}

FR_NOINLINE static uint32_t lz_hash4(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return (v * 2654435761u) >> (32 - HASH_BITS);
}

FR_NOINLINE static uint32_t lz_match_len(const uint8_t *a, const uint8_t *b, const uint8_t *end)
{
	const uint8_t *s = b;

	while (b < end && *a == *b) {
		a++;
		b++;
	}
	return (uint32_t)(b - s);
}

FR_NOINLINE static uint8_t *lz_emit_literals(uint8_t *o, const uint8_t *p, uint32_t n)
{
	while (n) {
		uint32_t k = n > 127 ? 127 : n;

		*o++ = (uint8_t)k;
		memcpy(o, p, k);
		o += k;
		p += k;
		n -= k;
	}
	return o;
}

FR_NOINLINE static uint8_t *lz_emit_match(uint8_t *o, uint32_t dist, uint32_t len)
{
	*o++ = 0x80 | (uint8_t)(len > 127 ? 127 : len);
	*o++ = (uint8_t)dist;
	*o++ = (uint8_t)(dist >> 8);
	return o;
}

/* One LZ77 block: greedy matches found through a 4-byte hash table. */
FR_NOINLINE static size_t lz_block(const uint8_t *in, size_t len, uint8_t *out)
{
	const uint8_t *p = in, *lit = in, *end = in + len;
	uint8_t *o = out;

	memset(table, 0, sizeof(table));
	while (p + 8 < end) {
		uint32_t h = lz_hash4(p);
		const uint8_t *cand = in + table[h];
		uint32_t m = 0;

		table[h] = (uint32_t)(p - in);
		if (cand < p && p - cand < 65536)
			m = lz_match_len(cand, p, end);
		if (m >= 4) {
			if (m > 127)
				m = 127;
			o = lz_emit_literals(o, lit, (uint32_t)(p - lit));
			o = lz_emit_match(o, (uint32_t)(p - cand), m);
			p += m;
			lit = p;
		} else {
			p++;
		}
	}
	o = lz_emit_literals(o, lit, (uint32_t)(end - lit));
	return (size_t)(o - out);
}

FR_NOINLINE static size_t lz_compress(const uint8_t *in, size_t len, uint8_t *out)
{
	size_t total = 0;

	for (size_t off = 0; off < len; off += 16384) {
		size_t n = len - off < 16384 ? len - off : 16384;

		total += lz_block(in + off, n, out + total);
	}
	return total;
}

/*
 * Deep call chains: eight distinct frames, chosen by the depth and a
 * per-iteration path, so that the stacks vary (a few thousand distinct).
 */
typedef size_t (*step_fn)(unsigned depth, unsigned path, const uint8_t *in, size_t len);
static step_fn steps[8];

static size_t descend(unsigned depth, unsigned path, const uint8_t *in, size_t len)
{
	if (!depth)
		return lz_compress(in, len, outbuf);
	return steps[(path + depth) & 7](depth - 1, path * 3 + 1, in, len);
}

#define STEP(name) \
	FR_NOINLINE static size_t name(unsigned depth, unsigned path, const uint8_t *in, size_t len) \
	{ \
		size_t r = descend(depth, path, in, len); \
		__asm__ volatile("" ::: "memory"); \
		return r; \
	}
STEP(parse_request)
STEP(handle_batch)
STEP(apply_filter)
STEP(encode_record)
STEP(visit_node)
STEP(walk_tree)
STEP(flush_buffer)
STEP(dispatch_task)

static void init_steps(void)
{
	steps[0] = parse_request;
	steps[1] = handle_batch;
	steps[2] = apply_filter;
	steps[3] = encode_record;
	steps[4] = visit_node;
	steps[5] = walk_tree;
	steps[6] = flush_buffer;
	steps[7] = dispatch_task;
}

/* One unit of work: compress a slice at a depth of 8..47 frames. */
FR_NOINLINE static void work_unit(uint64_t i, size_t slice, size_t bytes)
{
	size_t off = (size_t)((i * 7919 * 4096) % (bytes - slice));
	unsigned depth = 8 + (unsigned)(i % 40), path = (unsigned)(i / 40) % 64;

	fr_sink += descend(depth, path, text + off, slice);
}

/* A short-lived process: fork, exec ourselves as a child, wait. */
static int spawn_child(uint64_t seed)
{
	char arg[32];
	pid_t pid;
	int status;

	snprintf(arg, sizeof(arg), "%llu", (unsigned long long)seed);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		execl(self_exe, "fr-bench-child", "--child", arg, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -ECHILD;
}

struct result {
	uint64_t iters, spawned, failed;
};

static void worker(int id, uint64_t iters, double until, uint64_t spawn_every,
		   size_t slice, int fd)
{
	struct result r = { 0 };

	rng ^= (uint64_t)(id + 1) * 0x9e3779b97f4a7c15ULL;
	for (uint64_t i = 0; iters ? i < iters : now_s() < until; i++) {
		work_unit(i * 2 + id, slice, BUF_BYTES);
		r.iters++;
		if (spawn_every && i % spawn_every == spawn_every - 1) {
			if (spawn_child(i + id))
				r.failed++;
			else
				r.spawned++;
		}
	}
	if (write(fd, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

static void usage(void)
{
	fprintf(stderr, "usage: fr-bench-work [--workers N] [--iters K | --seconds S] "
		"[--spawn-every M] [--slice KIB] [--child SEED]\n"
		"       fr-bench-work --touch MIB --iters K\n");
	exit(2);
}

/* --touch: @rounds times, fault in @mib MiB page by page and unmap it. */
static int touch_job(uint64_t mib, uint64_t rounds)
{
	size_t len = (size_t)mib << 20;
	uint64_t faults = 0;
	double t0 = now_s();

	for (uint64_t r = 0; r < rounds; r++) {
		volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("fr-bench-work: mmap");
			return 1;
		}
		madvise((void *)p, len, MADV_NOHUGEPAGE);
		for (size_t off = 0; off < len; off += 4096, faults++)
			p[off] = (char)off;
		munmap((void *)p, len);
	}
	printf("workers=1 iters=%llu faults=%llu wall_s=%.4f\n", (unsigned long long)rounds,
	       (unsigned long long)faults, now_s() - t0);
	return 0;
}

int main(int argc, char **argv)
{
	long workers = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t iters = 0, spawn_every = 8, touch = 0;
	double seconds = 0, t0, t1;
	size_t slice = 64 << 10;
	struct result total = { 0 };
	int fds[2], bad = 0;

	init_steps();
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (!strcmp(argv[i], "--workers"))
			workers = atol(v);
		else if (!strcmp(argv[i], "--iters"))
			iters = strtoull(v, NULL, 0);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(v);
		else if (!strcmp(argv[i], "--spawn-every"))
			spawn_every = strtoull(v, NULL, 0);
		else if (!strcmp(argv[i], "--touch"))
			touch = strtoull(v, NULL, 0);
		else if (!strcmp(argv[i], "--slice"))
			slice = (size_t)strtoull(v, NULL, 0) << 10;
		else if (!strcmp(argv[i], "--child")) {
			/* the short-lived process: a little work, deep stack */
			uint64_t seed = strtoull(v, NULL, 0);

			rng ^= seed * 0x9e3779b97f4a7c15ULL + 1;
			make_text(CHILD_BYTES);
			work_unit(seed, 16 << 10, CHILD_BYTES);
			return 0;
		} else
			usage();
		i++;
	}
	if (touch)
		return iters ? touch_job(touch, iters) : (usage(), 2);
	if (workers < 1 || workers > 1024 || (!iters && seconds <= 0) || !slice ||
	    slice >= BUF_BYTES)
		usage();
	make_text(BUF_BYTES);
	if (pipe(fds)) {
		perror("fr-bench-work: pipe");
		return 1;
	}
	t0 = now_s();
	for (long w = 0; w < workers; w++) {
		pid_t parent = getpid(), pid = fork();

		if (pid < 0) {
			perror("fr-bench-work: fork");
			return 1;
		}
		if (!pid) {
			/* a killed run must not leave workers burning CPU */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
				_exit(1);
			worker((int)w, iters, t0 + seconds, spawn_every, slice, fds[1]);
		}
	}
	close(fds[1]);
	for (long w = 0; w < workers; w++) {
		struct result r;
		int status;

		if (read(fds[0], &r, sizeof(r)) == sizeof(r)) {
			total.iters += r.iters;
			total.spawned += r.spawned;
			total.failed += r.failed;
		} else {
			bad++;
		}
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	t1 = now_s();
	printf("workers=%ld iters=%llu spawned=%llu spawn_failed=%llu wall_s=%.4f sink=%llu\n",
	       workers, (unsigned long long)total.iters, (unsigned long long)total.spawned,
	       (unsigned long long)total.failed, t1 - t0, (unsigned long long)(fr_sink & 0xffff));
	return bad || total.failed ? 1 : 0;
}
