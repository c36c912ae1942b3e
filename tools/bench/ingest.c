// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ingest.c - the ingest ceiling: synthetic BPF records through the real
 * drain__record() -> intern -> proctable -> staging -> window code, with a
 * periodic drain__release() as the daemon's pump does. No kernel, one thread.
 *
 *   fr-bench-ingest [--events N] [--warmup N|auto] [--memory MIB] [--window S]
 *                   [--hz HZ] [--cpus N] [--procs N] [--stacks N]
 *                   [--release N] [--churn N] [--seed N] [--cpu C] [--dump DIR]
 *
 * The mix: --procs processes (1..4 threads each, one comm per thread), a
 * pool of --stacks distinct stacks spread over them (5..60 frames, 0..20 of
 * them kernel frames, shared roots as in real call trees), picked with a
 * skew (a few hot processes and stacks, a long tail). Stamps advance as
 * --cpus CPUs sampling at --hz would, with cross-CPU reordering, so the
 * window holds a steady --window seconds and ages out as it fills. Every
 * --churn records one process is replaced by a new incarnation (fork, exec,
 * exit of the old one), so the process table and string table also churn.
 * The warm-up ("auto": one lap of the window's event ring plus 10 %) fills
 * the window, so the timed part is the steady state; its page faults
 * (minflt_timed) and the tables' resident against live bytes at the end
 * are printed too.
 * Prints one line of key=value figures; events_per_cpu_s is the result,
 * maxrss_kb the process's peak RSS. --dump DIR then writes the window
 * through the real dumper (encoder, LZ4, file writer; no process snapshot,
 * no /proc) into DIR and prints "dump=PATH": the same --seed gives the
 * same content, which is how a refactor is shown to leave dumps alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <poll.h>

#include "contract.h"
#include "drain.h"
#include "dumper.h"
#include "symbols.h"
#include "util.h"

#define MS 1000000ULL
#define SEC 1000000000ULL

struct rec {
	uint32_t off;
	uint32_t len;
};

struct proc {
	uint32_t pid;
	uint64_t start;
	int nthreads;
	char comm[4][FR_COMM_LEN];
	uint32_t first_stack;	/* stacks [first, first + nstacks) in the pool */
	uint32_t nstacks;
};

static struct {
	uint64_t events, warmup;
	uint64_t memory_mib;
	double window_s;
	unsigned hz, cpus, procs, stacks, release, churn;
	uint64_t seed;
	int cpu;
	const char *dump;
} opt = {
	.events = 20000000, .warmup = UINT64_MAX, .memory_mib = 256, .window_s = 30,
	.hz = 999, .cpus = 2, .procs = 200, .stacks = 3000, .release = 256,
	.churn = 20000, .seed = 42, .cpu = -1,
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* A skewed pick in [0, n): about half the picks go to the first n/8. */
static uint32_t skewed(uint32_t n)
{
	uint64_t r = rnd();

	if (n > 8 && (r & 1))
		return (uint32_t)((r >> 1) % (n / 8));
	return (uint32_t)((r >> 1) % n);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long long arg_u64(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || end == s) {
		fprintf(stderr, "fr-bench-ingest: bad value '%s' for %s\n", s, what);
		exit(2);
	}
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: fr-bench-ingest [--events N] [--warmup N|auto] [--memory MIB] "
		"[--window S] [--hz HZ] [--cpus N] [--procs N] [--stacks N] [--release N] "
		"[--churn N] [--seed N] [--cpu C] [--dump DIR]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help"))
			usage();
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--events"))
			opt.events = arg_u64(v, a);
		else if (!strcmp(a, "--warmup"))
			opt.warmup = strcmp(v, "auto") ? arg_u64(v, a) : UINT64_MAX;
		else if (!strcmp(a, "--memory"))
			opt.memory_mib = arg_u64(v, a);
		else if (!strcmp(a, "--window"))
			opt.window_s = atof(v);
		else if (!strcmp(a, "--hz"))
			opt.hz = arg_u64(v, a);
		else if (!strcmp(a, "--cpus"))
			opt.cpus = arg_u64(v, a);
		else if (!strcmp(a, "--procs"))
			opt.procs = arg_u64(v, a);
		else if (!strcmp(a, "--stacks"))
			opt.stacks = arg_u64(v, a);
		else if (!strcmp(a, "--release"))
			opt.release = arg_u64(v, a);
		else if (!strcmp(a, "--churn"))
			opt.churn = arg_u64(v, a);
		else if (!strcmp(a, "--seed"))
			opt.seed = arg_u64(v, a);
		else if (!strcmp(a, "--cpu"))
			opt.cpu = (int)arg_u64(v, a);
		else if (!strcmp(a, "--dump"))
			opt.dump = v;
		else
			usage();
	}
	if (!opt.hz || !opt.cpus || !opt.procs || opt.stacks < opt.procs || !opt.release ||
	    opt.window_s <= 0 || opt.procs > 60000)
		usage();
}

/* The stack pool: frames of every stack, and per stack its kn/un. */
static uint64_t *frames;
static uint16_t *stack_kn, *stack_un;
static uint32_t *stack_off;

/*
 * Call trees share their roots: each stack is a root path of its process
 * (main, a dispatcher, ...) and a leaf chain. Kernel frames come from a
 * small set of syscall and interrupt paths.
 */
static void make_stacks(struct proc *procs)
{
	uint32_t per = opt.stacks / opt.procs, extra = opt.stacks % opt.procs, s = 0;
	size_t cap = (size_t)opt.stacks * 60, used = 0;

	frames = calloc(cap, sizeof(*frames));
	stack_kn = calloc(opt.stacks, sizeof(*stack_kn));
	stack_un = calloc(opt.stacks, sizeof(*stack_un));
	stack_off = calloc(opt.stacks, sizeof(*stack_off));
	if (!frames || !stack_kn || !stack_un || !stack_off) {
		perror("fr-bench-ingest: calloc");
		exit(1);
	}
	for (uint32_t p = 0; p < opt.procs; p++) {
		uint64_t base = 0x550000000000ULL + (uint64_t)p * 0x10000000ULL;

		procs[p].first_stack = s;
		procs[p].nstacks = per + (p < extra);
		for (uint32_t k = 0; k < procs[p].nstacks; k++, s++) {
			unsigned depth = 5 + rnd() % 56;	/* 5..60 */
			unsigned kwant = 1 + rnd() % 20;
			unsigned kn = (rnd() % 3) ? 0 : FR_MIN(depth - 1, kwant);
			unsigned un = depth - kn;
			uint64_t *f = frames + used;

			stack_off[s] = used;
			stack_kn[s] = kn;
			stack_un[s] = un;
			/* kernel part, leaf first: one of 16 syscall paths */
			for (unsigned i = 0; i < kn; i++)
				f[i] = 0xffffffff81000000ULL + ((rnd() % 16) << 12) + (kn - i) * 0x40;
			/* user part, leaf first: a leaf chain below a shared root path */
			for (unsigned i = 0; i < un; i++) {
				unsigned from_root = un - 1 - i;

				if (from_root < un / 2)
					f[kn + i] = base + from_root * 0x100 + 0x10;
				else
					f[kn + i] = base + 0x100000 + (rnd() % 4096) * 0x40;
			}
			used += depth;
		}
	}
}

static uint8_t *pool;
static size_t pool_len, pool_cap;

static uint32_t pool_add(const void *rec, size_t len)
{
	uint32_t off;

	if (pool_len + len + 8 > pool_cap) {
		pool_cap = pool_cap ? pool_cap * 2 : 1 << 20;
		pool = realloc(pool, pool_cap);
		if (!pool) {
			perror("fr-bench-ingest: realloc");
			exit(1);
		}
	}
	off = pool_len;
	memcpy(pool + off, rec, len);
	pool_len += FR_ALIGN(len, 8);
	return off;
}

static void hdr(struct fr_rec_hdr *h, uint16_t type, uint32_t size,
		const struct proc *p, int thread)
{
	memset(h, 0, sizeof(*h));
	h->start = p->start;
	h->tgid = p->pid;
	h->tid = p->pid + thread;
	h->type = type;
	h->size = size;
	memcpy(h->comm, p->comm[thread], FR_COMM_LEN);
}

/* One sample record per (process, stack), for each of its threads. */
static struct rec *make_samples(struct proc *procs, uint32_t *nrecs)
{
	union {
		struct fr_rec_sample s;
		uint8_t raw[FR_SAMPLE_MAX_SIZE];
	} b;
	struct rec *recs = calloc((size_t)opt.stacks * 4, sizeof(*recs));
	uint32_t n = 0;

	if (!recs) {
		perror("fr-bench-ingest: calloc");
		exit(1);
	}
	for (uint32_t p = 0; p < opt.procs; p++)
		for (uint32_t k = 0; k < procs[p].nstacks; k++) {
			uint32_t s = procs[p].first_stack + k;
			int t = k % procs[p].nthreads;
			size_t len = sizeof(b.s) + (stack_kn[s] + stack_un[s]) * 8;

			hdr(&b.s.h, FR_REC_SAMPLE, len, &procs[p], t);
			b.s.kn = stack_kn[s];
			b.s.un = stack_un[s];
			b.s.flags = 0;
			memcpy(b.s.ips, frames + stack_off[s], (len - sizeof(b.s)));
			recs[n].off = pool_add(&b, len);
			recs[n].len = len;
			n++;
		}
	*nrecs = n;
	return recs;
}

static void init_procs(struct proc *procs)
{
	static const char *names[] = { "postgres", "nginx", "java", "python3", "node",
		"systemd", "sshd", "bash", "gzip", "cc1", "ld", "make", "redis-server",
		"containerd", "kworker/0:1", "rsyslogd" };

	for (uint32_t p = 0; p < opt.procs; p++) {
		procs[p].pid = 1000 + p * 7;
		procs[p].start = (uint64_t)(p + 1) * 10 * MS;
		procs[p].nthreads = 1 + rnd() % 4;
		for (int t = 0; t < procs[p].nthreads; t++)
			snprintf(procs[p].comm[t], FR_COMM_LEN, "%.10s%s%u",
				 names[p % FR_ARRAY_SIZE(names)], t ? "-w" : "", (unsigned)t % 10);
	}
}

static uint64_t next_pid = 400000;

/*
 * A process is replaced by a new incarnation: its parent forks, the child
 * execs, the old one exits. The new one reuses the stacks' shapes, so its
 * user stacks are interned again under its own slot, as in the daemon.
 */
static void churn(struct drain *d, struct proc *procs, struct rec *recs, uint64_t ts)
{
	uint32_t p = rnd() % opt.procs, parent = (p + 1) % opt.procs;
	struct fr_rec_exit x;
	struct fr_rec_fork f;
	struct fr_rec_exec e;
	struct proc old = procs[p];
	uint32_t r = 0;

	memset(&x, 0, sizeof(x));
	hdr(&x.h, FR_REC_EXIT, sizeof(x), &old, 0);
	x.h.ts = ts;
	x.st.rss_anon = 1 << 20;
	x.st.utime = ts / 3;
	drain__record(d, &x, sizeof(x));

	procs[p].pid = next_pid++;
	procs[p].start = ts + 1000;
	memset(&f, 0, sizeof(f));
	hdr(&f.h, FR_REC_FORK, sizeof(f), &procs[parent], 0);
	f.h.ts = ts + 2000;
	f.child_pid = procs[p].pid;
	f.child_start = procs[p].start;
	drain__record(d, &f, sizeof(f));

	memset(&e, 0, sizeof(e));
	hdr(&e.h, FR_REC_EXEC, sizeof(e), &procs[p], 0);
	e.h.ts = ts + 3000;
	e.old_tid = procs[p].pid;
	snprintf(e.filename, sizeof(e.filename), "/usr/bin/%s", procs[p].comm[0]);
	drain__record(d, &e, sizeof(e));

	/* Rewrite this process's sample records to the new incarnation. */
	for (uint32_t q = 0; q < p; q++)
		r += procs[q].nstacks;
	for (uint32_t k = 0; k < procs[p].nstacks; k++) {
		struct fr_rec_hdr *h = (struct fr_rec_hdr *)(pool + recs[r + k].off);

		h->tgid = procs[p].pid;
		h->tid = procs[p].pid + (h->tid - old.pid);
		h->start = procs[p].start;
	}
}

/*
 * Feed @n records. Stamps advance by the mean sample interval with jitter
 * (records of two CPUs arrive slightly out of order); every opt.release
 * records the watermark moves to the newest stamp less the drain's slack.
 */
static void feed(struct drain *d, struct proc *procs, struct rec *recs, uint32_t nrecs,
		 uint64_t *ts, uint64_t n, uint32_t *picks, uint32_t npicks, uint64_t *ctr)
{
	uint64_t step = SEC / ((uint64_t)opt.hz * opt.cpus);

	for (uint64_t i = 0; i < n; i++, (*ctr)++) {
		const struct rec *r = &recs[picks[*ctr % npicks]];
		struct fr_rec_hdr *h = (struct fr_rec_hdr *)(pool + r->off);

		*ts += step;
		h->ts = *ts - (*ctr & 3) * (step / 4);
		h->cpu = *ctr % opt.cpus;
		drain__record(d, h, r->len);
		if (opt.churn && *ctr % opt.churn == opt.churn - 1)
			churn(d, procs, recs, *ts + step / 2);
		if (*ctr % opt.release == opt.release - 1)
			drain__release(d, *ts > FR_DRAIN_SLACK_NS ? *ts - FR_DRAIN_SLACK_NS : 0);
	}
	(void)nrecs;
}

/*
 * write_dump() - the whole window of @d as a dump in opt.dump, through the
 * daemon's dumper; prints its path. Returns 0 or an exit code.
 */
static int write_dump(struct drain *d)
{
	const struct drain_tables *t = drain__tables(d);
	struct symcache *sc = symcache__new();
	struct dumper *dp = sc ? dumper__new(d, NULL, sc, NULL) : NULL;
	struct dump_request req = {};
	struct dump_result res = {};
	struct pollfd pfd;
	int err;

	if (!dp) {
		fprintf(stderr, "fr-bench-ingest: failed to start the dumper: %s\n", strerror(errno));
		return 1;
	}
	dump__init(&req.model);
	req.first = window__tail(t->win);
	req.last = window__head(t->win);
	req.model.win = (struct fr_dump_window){ .start = 0, .end = UINT64_MAX / 2,
						 .watermark = UINT64_MAX / 2 };
	req.dir = strdup(opt.dump);
	req.name_hint = strdup("ingest");
	err = !req.dir || !req.name_hint ? -ENOMEM : 0;
	if (!err)
		err = kvlist__add_u64(&req.model.meta, "ingest_seed", opt.seed);
	drain__hold(d);
	if (!err)
		err = dumper__start(dp, &req);
	if (err) {
		fprintf(stderr, "fr-bench-ingest: failed to start the dump: %s\n", strerror(-err));
		return 1;
	}
	pfd = (struct pollfd){ .fd = dumper__fd(dp), .events = POLLIN };
	while (dumper__finish(dp, &res))
		poll(&pfd, 1, 1000);
	drain__release_hold(d);
	if (res.err)
		fprintf(stderr, "fr-bench-ingest: %s\n", res.msg);
	else
		printf("dump=%s\n", res.path);
	dumper__free(dp);
	symcache__free(sc);
	return res.err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct proc *procs;
	struct rec *recs;
	uint32_t nrecs, npicks = 1 << 20, *picks;
	uint64_t ts = 1000 * SEC, ctr = 0;
	struct drain *d;
	const struct drain_stats *ds;
	const struct drain_tables *t;
	struct intern_stats ss, cs;
	struct proctable_stats ps;
	double t0, t1;
	struct timespec c0, c1;
	struct rusage ru, ru0;
	struct drain_footprint fp;

	parse(argc, argv);
	rng_state = opt.seed * 0x9e3779b97f4a7c15ULL + 1;
	if (opt.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(opt.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			perror("fr-bench-ingest: sched_setaffinity, ignoring");
	}
	procs = calloc(opt.procs, sizeof(*procs));
	picks = calloc(npicks, sizeof(*picks));
	if (!procs || !picks) {
		perror("fr-bench-ingest: calloc");
		return 1;
	}
	init_procs(procs);
	make_stacks(procs);
	recs = make_samples(procs, &nrecs);
	for (uint32_t i = 0; i < npicks; i++) {
		/* a skewed process, then a skewed stack of it */
		uint32_t p = skewed(opt.procs), r = 0;

		for (uint32_t q = 0; q < p; q++)
			r += procs[q].nstacks;
		picks[i] = r + skewed(procs[p].nstacks);
	}
	d = drain__new(opt.memory_mib << 20, (uint64_t)(opt.window_s * SEC));
	if (!d) {
		fprintf(stderr, "fr-bench-ingest: failed to create the drain: %s\n", strerror(errno));
		return 1;
	}
	/* Warm up: fill the window so that eviction runs in steady state. */
	if (opt.warmup == UINT64_MAX)
		opt.warmup = window__capacity(drain__tables(d)->win) * 11 / 10;
	feed(d, procs, recs, nrecs, &ts, opt.warmup, picks, npicks, &ctr);
	getrusage(RUSAGE_SELF, &ru0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	t0 = now_s();
	feed(d, procs, recs, nrecs, &ts, opt.events, picks, npicks, &ctr);
	t1 = now_s();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	drain__release(d, ts);

	ds = drain__stats(d);
	t = drain__tables(d);
	intern__stats(t->stacks, &ss);
	intern__stats(t->strs, &cs);
	proctable__stats(t->procs, &ps);
	getrusage(RUSAGE_SELF, &ru);
	drain__footprint(d, &fp);
	{
		double wall = t1 - t0;
		double cpu = (c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9;

		printf("events=%" PRIu64 " wall_s=%.3f cpu_s=%.3f events_per_s=%.0f "
		       "events_per_cpu_s=%.0f ns_per_event=%.1f records=%" PRIu64
		       " dropped=%" PRIu64 " bad=%" PRIu64 " forced=%" PRIu64 " late=%" PRIu64
		       " window_events=%" PRIu64 " live_stacks=%" PRIu64 " stack_blocks=%" PRIu64
		       "/%" PRIu64 " string_blocks=%" PRIu64 "/%" PRIu64 " procs=%" PRIu64
		       " distinct_records=%u evicted_space=%" PRIu64 " warmup=%" PRIu64
		       " window_slots=%zu maxrss_kb=%ld minflt_timed=%ld tables_resident_kb=%" PRIu64
		       " tables_live_kb=%" PRIu64 " window_resident_kb=%" PRIu64 " window_live_kb=%"
		       PRIu64 " laps=%.1f\n",
		       opt.events, wall, cpu, opt.events / wall, opt.events / cpu,
		       wall * 1e9 / opt.events, ds->records, ds->dropped, ds->bad, ds->forced,
		       ds->late, window__head(t->win) - window__tail(t->win), ss.live,
		       ss.blocks_used, ss.blocks_total, cs.blocks_used, cs.blocks_total, ps.live,
		       nrecs, window__stats(t->win)->evicted_space, opt.warmup,
		       window__capacity(t->win), ru.ru_maxrss, ru.ru_minflt - ru0.ru_minflt,
		       fp.all.resident >> 10, fp.all.live >> 10, fp.window.resident >> 10,
		       fp.window.live >> 10,
		       (double)window__stats(t->win)->appended / window__capacity(t->win));
	}
	if (opt.dump && write_dump(d))
		return 1;
	drain__free(d);
	free(pool);
	free(recs);
	free(frames);
	free(stack_kn);
	free(stack_un);
	free(stack_off);
	free(picks);
	free(procs);
	return 0;
}
