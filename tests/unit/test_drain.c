// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_drain.c - BPF records through the real drain code: watermark
 * ordering, incarnation attribution, per-process stack interning, exit
 * metadata that lives exactly until its last event leaves, the memory cap.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../bpf/contract.h"
#include "drain.h"
#include "procmeta.h"
#include "proctable.h"
#include "tap.h"

#define MS 1000000ULL
#define SEC 1000000000ULL

static union {
	struct fr_rec_sample s;
	uint8_t raw[FR_SAMPLE_MAX_SIZE];
} buf;

static void hdr(struct fr_rec_hdr *h, uint16_t type, uint64_t ts, uint32_t pid,
		uint64_t start, const char *comm, uint32_t size)
{
	memset(h, 0, sizeof(*h));
	h->ts = ts;
	h->start = start;
	h->tgid = pid;
	h->tid = pid;
	h->type = type;
	h->size = size;
	snprintf(h->comm, sizeof(h->comm), "%s", comm);
}

static void sample(struct drain *d, uint64_t ts, uint32_t pid, uint64_t start,
		   const char *comm, uint64_t seed, int nframes)
{
	size_t size = sizeof(buf.s) + nframes * 8;

	hdr(&buf.s.h, FR_REC_SAMPLE, ts, pid, start, comm, size);
	buf.s.kn = nframes / 2;
	buf.s.un = nframes - nframes / 2;
	buf.s.flags = 0;
	for (int i = 0; i < nframes; i++)
		buf.s.ips[i] = seed * 0x1000 + i;
	drain__record(d, &buf, size);
}

static void exit_rec(struct drain *d, uint64_t ts, uint32_t pid, uint64_t start, int code)
{
	struct fr_rec_exit x = {};

	hdr(&x.h, FR_REC_EXIT, ts, pid, start, "short", sizeof(x));
	x.code = code;
	x.st.rss_anon = 12345;
	drain__record(d, &x, sizeof(x));
}

static uint64_t count(struct drain *d)
{
	const struct drain_tables *t = drain__tables(d);

	return window__head(t->win) - window__tail(t->win);
}

static void test_watermark_order(void)
{
	struct drain *d = drain__new(16 << 20, 100 * SEC);
	const struct drain_tables *t = drain__tables(d);
	struct fr_event e;
	uint64_t last = 0;
	int bad = 0;

	ok(d != NULL, "drain with a 16 MiB cap");
	/* Reservation order differs from stamp order across CPUs. */
	sample(d, 30 * MS, 10, 1, "a", 1, 4);
	sample(d, 10 * MS, 10, 1, "a", 1, 4);
	sample(d, 20 * MS, 10, 1, "a", 2, 4);
	drain__release(d, 25 * MS);
	is_int(count(d), 2, "only events at or before the watermark enter the window");
	is_int(drain__staged(d), 1, "the later one waits");
	drain__release(d, 35 * MS);
	is_int(count(d), 3, "released once the watermark passes it");
	for (uint64_t i = window__tail(t->win); i < window__head(t->win); i++) {
		window__read(t->win, i, &e);
		if (e.ts < last)
			bad++;
		last = e.ts;
	}
	is_int(bad, 0, "the window is in time order");
	is_int(drain__stats(d)->late, 0, "nothing late");
	sample(d, 5 * MS, 10, 1, "a", 1, 4);
	drain__release(d, 40 * MS);
	is_int(drain__stats(d)->late, 1, "an event behind the watermark is counted as late");
	drain__free(d);
}

static void test_incarnations(void)
{
	struct drain *d = drain__new(16 << 20, 100 * SEC);
	const struct drain_tables *t = drain__tables(d);
	struct fr_event e1, e2, e3;
	struct fr_proc p1, p2;

	/* Same PID, two incarnations, identical addresses. */
	sample(d, 1 * MS, 500, 111, "old", 7, 6);
	exit_rec(d, 2 * MS, 500, 111, 0);
	sample(d, 3 * MS, 500, 222, "new", 7, 6);
	sample(d, 4 * MS, 500, 222, "new", 7, 6);
	drain__release(d, 10 * MS);
	window__read(t->win, window__tail(t->win), &e1);
	window__read(t->win, window__tail(t->win) + 2, &e2);
	window__read(t->win, window__tail(t->win) + 3, &e3);
	ok(e1.proc != e2.proc, "one PID, two incarnations, two process entries");
	proctable__read(t->procs, e1.proc, &p1);
	proctable__read(t->procs, e2.proc, &p2);
	ok(p1.start == 111 && p2.start == 222, "each keyed by its start time");
	ok((p1.flags & FR_PROC_EXITED) && !(p2.flags & FR_PROC_EXITED),
	   "the exit belongs to the first only");
	ok(e1.ref != e2.ref, "same user addresses in two processes: two stacks");
	is_int(e2.ref, e3.ref, "same addresses in one process: one stack");
	is_int(FR_STACK_SLOT(intern__tag(t->stacks, e2.ref)), e2.proc,
	       "the stack remembers its process");
	drain__free(d);
}

static void test_exit_lifetime(void)
{
	struct drain *d = drain__new(16 << 20, 1 * SEC);
	const struct drain_tables *t = drain__tables(d);
	struct proctable_stats st;
	struct fr_proc p;
	uint32_t slot;

	sample(d, 100 * MS, 77, 5, "dying", 3, 4);
	exit_rec(d, 200 * MS, 77, 5, 9);
	ok(!proctable__find(t->procs, 77, 5, &slot), "entry created by its first record");
	proctable__read(t->procs, slot, &p);
	ok(!(p.flags & FR_PROC_EXITED), "not exited before the watermark passes the exit");
	drain__release(d, 150 * MS);
	proctable__read(t->procs, slot, &p);
	ok(!(p.flags & FR_PROC_EXITED), "still not: watermark 150 ms < exit 200 ms");
	drain__release(d, 250 * MS);
	proctable__read(t->procs, slot, &p);
	ok(p.flags & FR_PROC_EXITED, "exited once the watermark passed it");
	is_int(p.exit_code, 9, "with its status");
	/* The window is 1 s: at 1.15 s the sample ages out, the exit stays. */
	drain__release(d, 1150 * MS);
	is_int(proctable__find(t->procs, 77, 5, &slot), 0, "kept while its exit is in the window");
	/* A reader holds the tables: the free is deferred. */
	drain__hold(d);
	drain__release(d, 1300 * MS);
	is_int(count(d), 0, "every event aged out");
	is_int(proctable__read(t->procs, slot, &p), 0, "held: the entry is still readable");
	drain__release_hold(d);
	is_int(proctable__find(t->procs, 77, 5, &slot), -ENOENT, "freed when the reader lets go");
	proctable__stats(t->procs, &st);
	is_int(st.live, 0, "table empty");
	drain__free(d);
}

static void test_memory_cap(void)
{
	uint64_t cap = 4 << 20;
	struct drain *d = drain__new(cap, 3600 * SEC);
	const struct drain_tables *t = drain__tables(d);
	struct intern_stats is;

	ok(drain__budget(d) <= cap + (1 << 20), "reserved memory stays within the cap (plus staging)");
	/* 50000 distinct 60-frame stacks: far more than the tables hold. */
	for (uint64_t i = 1; i <= 50000; i++) {
		sample(d, i * MS, 1000 + i % 50, 1, "churn", i, 60);
		if (i % 100 == 0)
			drain__release(d, i * MS);
	}
	drain__release(d, 50001 * MS);
	intern__stats(t->stacks, &is);
	tap_diag("window %llu events, stacks %llu live, %llu/%llu blocks, %llu evicted for space",
		 (unsigned long long)count(d), (unsigned long long)is.live,
		 (unsigned long long)is.blocks_used, (unsigned long long)is.blocks_total,
		 (unsigned long long)window__stats(t->win)->evicted_space);
	ok(window__stats(t->win)->evicted_space > 0, "the oldest events were evicted for space");
	is_int(drain__stats(d)->dropped, 0, "nothing dropped: eviction made room every time");
	ok(is.blocks_used <= is.blocks_total, "stack blocks within their share");
	ok(count(d) > 1000, "the window still holds the newest events");
	is_int(is.live, count(d), "one live stack per remaining event (all distinct)");
	drain__free(d);
}

/* Feed @secs seconds from @t0 at 1000 samples/s: 10 steady processes on
 * 20 stacks, plus, when @burst, 20 new short-lived processes a second... */
static uint64_t feed(struct drain *d, uint64_t t0, int secs, int burst)
{
	static uint32_t next_pid = 5000;
	uint64_t ts = t0;

	for (int ms = 0; ms < secs * 1000; ms++, ts += MS) {
		sample(d, ts, 100 + ms % 10, 1, "steady", 1 + ms % 20, 24);
		if (burst) {
			/* ...10 x the samples: each of 9 more a new process with its
			 * own stack, which exits at once. */
			for (int k = 0; k < 9; k++) {
				uint32_t pid = next_pid++;
				char comm[16];

				snprintf(comm, sizeof(comm), "burst%u", pid);
				sample(d, ts + 1 + k, pid, pid, comm, 100000 + pid, 24);
				exit_rec(d, ts + 10 + k, pid, pid, 0);
			}
		}
		if (ms % 10 == 9)
			drain__release(d, ts);
	}
	return ts;
}

/*
 * A burst of 10 x the rate with new processes and stacks grows the stack,
 * string and process tables; once it has left the window the tables give
 * the pages back (lowest-first allocation kept the survivors low), within
 * the window's span + 10 s + a second of the tables' trim.
 */
static void test_burst_tables(void)
{
	struct drain *d = drain__new(64 << 20, 1 * SEC);
	struct drain_footprint f0, f1, f2;
	uint64_t ts;

	ts = feed(d, 1 * SEC, 15, 0);
	drain__footprint(d, &f0);
	ts = feed(d, ts, 5, 1);
	drain__footprint(d, &f1);
	tap_diag("before the burst: stacks %llu/%llu, strings %llu/%llu, processes %llu/%llu "
		 "KiB resident/live; at its end: %llu/%llu, %llu/%llu, %llu/%llu",
		 (unsigned long long)f0.stacks.resident >> 10, (unsigned long long)f0.stacks.live >> 10,
		 (unsigned long long)f0.strings.resident >> 10, (unsigned long long)f0.strings.live >> 10,
		 (unsigned long long)f0.procs.resident >> 10, (unsigned long long)f0.procs.live >> 10,
		 (unsigned long long)f1.stacks.resident >> 10, (unsigned long long)f1.stacks.live >> 10,
		 (unsigned long long)f1.strings.resident >> 10, (unsigned long long)f1.strings.live >> 10,
		 (unsigned long long)f1.procs.resident >> 10, (unsigned long long)f1.procs.live >> 10);
	ok(f1.stacks.resident > f0.stacks.resident + (256u << 10) &&
	   f1.procs.resident > f0.procs.resident + (256u << 10),
	   "the burst grew the stack and process tables");
	is_int(drain__stats(d)->dropped, 0, "nothing dropped");
	ts = feed(d, ts, 9, 0);
	drain__footprint(d, &f2);
	is_int(f2.stacks.shrinks + f2.procs.shrinks, 0, "9 s after the burst: nothing given back yet");
	ts = feed(d, ts, 4, 0);
	drain__footprint(d, &f2);
	tap_diag("13 s after: stacks %llu/%llu, strings %llu/%llu, processes %llu/%llu KiB; "
		 "released %llu, %llu, %llu KiB",
		 (unsigned long long)f2.stacks.resident >> 10, (unsigned long long)f2.stacks.live >> 10,
		 (unsigned long long)f2.strings.resident >> 10, (unsigned long long)f2.strings.live >> 10,
		 (unsigned long long)f2.procs.resident >> 10, (unsigned long long)f2.procs.live >> 10,
		 (unsigned long long)f2.stacks.released_bytes >> 10,
		 (unsigned long long)f2.strings.released_bytes >> 10,
		 (unsigned long long)f2.procs.released_bytes >> 10);
	ok(f2.stacks.shrinks >= 1 && f2.procs.shrinks >= 1 && f2.strings.shrinks >= 1,
	   "13 s after the burst each table has given pages back");
	ok(f2.stacks.resident <= f0.stacks.resident + 2 * f2.stacks.live + (64u << 10),
	   "the stack table is back near its size before the burst");
	ok(f2.procs.resident <= f0.procs.resident + 2 * f2.procs.live + (64u << 10),
	   "the process table too");
	ok(f2.strings.resident <= f0.strings.resident + 2 * f2.strings.live + (64u << 10),
	   "and the string table");
	ts = feed(d, ts, 15, 0);
	drain__footprint(d, &f1);
	is_int(f1.stacks.shrinks + f1.procs.shrinks + f1.strings.shrinks,
	       f2.stacks.shrinks + f2.procs.shrinks + f2.strings.shrinks,
	       "at a steady rate afterwards, no more shrinks in 15 s");
	drain__free(d);
}

/*
 * The memory records: an RSS ledger entry made by another process keeps
 * its value, age and maker and holds no reference; an OOM holds its
 * invoker and the invoker's stack (its user frames in the invoker's
 * space) until it leaves the window, and then everything is freed.
 */
static void test_memory_records(void)
{
	struct drain *d = drain__new(16 << 20, 1 * SEC);
	const struct drain_tables *t = drain__tables(d);
	static struct fr_rec_oom o;
	struct fr_rec_rss r = {};
	struct fr_rec_oomadj a = {};
	struct proctable_stats ps;
	struct intern_stats is;
	struct fr_event e[3];
	uint32_t vslot, islot;
	int n = 0;

	hdr(&r.h, FR_REC_RSS, 100 * MS, 50, 7, "owner", sizeof(r));
	r.h.tid = 0;
	r.value = 300ULL << 20;
	r.changed = 100 * MS - 2500000;	/* reached 2.5 ms before the record */
	r.by_tgid = 33;			/* kswapd, say */
	r.member = FR_RSS_FILE;
	r.why = FR_RSS_STEP;
	drain__record(d, &r, sizeof(r));
	hdr(&a.h, FR_REC_OOMADJ, 110 * MS, 50, 7, "owner", sizeof(a));
	a.value = -500;
	a.by_tgid = 1;
	drain__record(d, &a, sizeof(a));
	hdr(&o.h, FR_REC_OOM, 120 * MS, 50, 7, "owner", sizeof(o));
	o.inv_tgid = 60;
	o.inv_start = 8;
	o.inv_tid = 61;
	snprintf(o.inv_comm, sizeof(o.inv_comm), "allocator");
	o.kn = 2;
	o.un = 3;
	o.ips[0] = 0xffffffff81000000ULL;
	o.ips[1] = 0xffffffff81000100ULL;
	o.ips[FR_MAX_STACK] = 0x401000;
	o.ips[FR_MAX_STACK + 1] = 0x402000;
	o.ips[FR_MAX_STACK + 2] = 0x403000;
	drain__record(d, &o, sizeof(o));
	exit_rec(d, 130 * MS, 50, 7, 9);
	exit_rec(d, 140 * MS, 60, 8, 0);
	drain__release(d, 200 * MS);
	for (uint64_t i = window__tail(t->win); i < window__head(t->win) && n < 3; i++)
		if (!window__read(t->win, i, &e[n]))
			n++;
	if (!is_int(n, 3, "rss, oom_score_adj and oom entered the window"))
		goto out;
	ok(e[0].type == FR_EV_RSS && e[0].ref == (300u << 20) / (uint32_t)sysconf(_SC_PAGESIZE) &&
	   e[0].arg == 2500 && (e[0].flags & FR_EVRSS_MEMBER_MASK) == FR_RSS_FILE &&
	   (e[0].flags & FR_EVRSS_OTHER) && e[0].tid == 33,
	   "rss: the value in pages, its age in us, made by pid 33");
	ok(e[1].type == FR_EV_OOMADJ && (int32_t)e[1].arg == -500 && e[1].ref == 1,
	   "oom_score_adj: the value and its writer");
	ok(!proctable__find(t->procs, 50, 7, &vslot) && !proctable__find(t->procs, 60, 8, &islot) &&
	   e[2].type == FR_EV_OOM && e[2].proc == vslot && e[2].arg == islot && e[2].tid,
	   "oom: the victim, the invoker's entry and a stack id");
	ok(e[2].tid && FR_STACK_SLOT(intern__tag(t->stacks, e[2].tid)) == islot &&
	   FR_STACK_KN(intern__tag(t->stacks, e[2].tid)) == 2,
	   "the invoker's stack is interned in its own space, 2 kernel frames");
	drain__release(d, 1300 * MS);
	proctable__stats(t->procs, &ps);
	intern__stats(t->stacks, &is);
	tap_diag("left: %" PRIu64 " events, %" PRIu64 " processes, %" PRIu64 " stacks", count(d), ps.live, is.live);
	ok(count(d) == 0 && ps.live == 0 && is.live == 0,
	   "once they and the exits leave the window, the victim, the invoker and the stack are freed");
out:
	drain__free(d);
}

/* A stall record with @kn kernel and @un user frames, built in @raw. */
static size_t stall_rec(uint8_t *raw, uint64_t ts, uint64_t begin, uint32_t pid, uint64_t start,
			uint8_t kind, uint16_t kn, uint16_t un)
{
	struct fr_rec_stall *r = (struct fr_rec_stall *)raw;
	size_t size = sizeof(*r) + (size_t)(kn + un) * 8;

	memset(raw, 0, size);
	hdr(&r->h, FR_REC_STALL, ts, pid, start, "thrasher", size);
	r->h.tid = pid + 1;
	r->begin = begin;
	r->result = 32;
	r->memcg_id = 4242;
	r->gfp = 0x100cca;
	r->order = 0;
	r->kind = kind;
	r->kn = kn;
	r->un = un;
	r->flags = FR_UEND_OUTERMOST << FR_SAMPLE_UEND_SHIFT;
	for (int i = 0; i < kn + un; i++)
		r->ips[i] = (i < kn ? 0xffffffff81000000ULL : 0x401000ULL) + i;
	return size;
}

static void memcg_path(void *ctx, uint64_t id, char *out, size_t len)
{
	(void)ctx;
	snprintf(out, len, id == 4242 ? "/fr-test" : "");
}

/* The no_table hook: the incarnations that asked, in order. */
struct asked {
	unsigned n;
	uint32_t pid;
	uint64_t start;
};

static void no_table(void *ctx, uint32_t pid, uint64_t start)
{
	struct asked *a = ctx;

	a->n++;
	a->pid = pid;
	a->start = start;
}

/*
 * Stalls and blocks: their details, stacks and lengths into window events
 * whose references (blob, stack) live exactly as long as they do; the
 * stall sums as readings of an incarnation; malformed ones refused.
 */
static void test_stall_records(void)
{
	struct drain *d = drain__new(16 << 20, 10 * SEC);
	const struct drain_tables *t = drain__tables(d);
	static uint8_t raw[FR_STALL_MAX_SIZE];
	struct fr_rec_offcpu *o = (struct fr_rec_offcpu *)raw;
	struct fr_stallsum_info si = { 3, 1500, 1, 2000000, 9, 9000000 }, got_si;
	struct fr_stall_info info;
	struct proctable_stats ps;
	struct intern_stats is, ss;
	struct fr_event e[4];
	size_t size;
	int n = 0;
	struct asked asked = { 0 };

	drain__set_hooks(d, &(struct drain_hooks){ .ctx = &asked, .memcg_path = memcg_path,
						   .no_table = no_table });
	size = stall_rec(raw, 100 * MS, 97 * MS, 50, 7, FR_STALL_MEMCG, 3, 4);
	drain__record(d, raw, size);
	size = sizeof(*o) + 5 * 8;
	memset(raw, 0, size);
	hdr(&o->h, FR_REC_OFFCPU, 5110 * MS, 50, 7, "thrasher", size);
	o->begin = 110 * MS;		/* 5 s: longer than 32 bits of ns */
	o->state = 0x102;
	o->kind = FR_STALL_BLOCKED;
	o->kn = 2;
	o->un = 3;
	o->flags = FR_UEND_NO_TABLE << FR_SAMPLE_UEND_SHIFT;
	for (int i = 0; i < 5; i++)
		o->ips[i] = 0x500000 + i;
	drain__record(d, raw, size);
	ok(asked.n == 1 && asked.pid == 50 && asked.start == 7,
	   "the block walked without a table asks for one (%u asks), the stall with one does not",
	   asked.n);
	is_int(drain__add_stallsum(d, 5120 * MS, 50, 7, "thrasher", FR_STALL_MEMCG, &si), 0,
	       "a stall sum is staged");
	is_int(drain__add_stallsum(d, 5120 * MS, 50, 7, "thrasher", FR_STALL_NKINDS, &si), -EINVAL,
	       "a sum of an unknown kind is refused");
	exit_rec(d, 5130 * MS, 50, 7, 0);
	drain__release(d, 5200 * MS);
	for (uint64_t i = window__tail(t->win); i < window__head(t->win) && n < 4; i++)
		if (!window__read(t->win, i, &e[n]))
			n++;
	if (!is_int(n, 4, "stall, offcpu, stallsum and exit entered the window"))
		goto out;
	memset(&info, 0, sizeof(info));
	intern__copy(t->strs, e[0].ref, &info, sizeof(info));
	ok(e[0].type == FR_EV_STALL && (e[0].flags & FR_EVSTALL_KIND_MASK) == FR_STALL_MEMCG &&
	   e[0].tid == 51 && e[0].arg && info.begin == 97 * MS && info.result == 32 &&
	   info.gfp == 0x100cca && info.order == 0 && info.memcg_id == 4242 &&
	   !strcmp(info.memcg, "/fr-test") &&
	   (info.stack_flags & FR_DSAMPLE_UEND_MASK) >> FR_DSAMPLE_UEND_SHIFT == FR_DUEND_OUTERMOST,
	   "stall: kind, thread, begin, result, gfp, order, memcg and its path, the stack's end");
	ok(FR_STACK_KN(intern__tag(t->stacks, e[0].arg)) == 3 &&
	   FR_STACK_SLOT(intern__tag(t->stacks, e[0].arg)) == e[0].proc,
	   "stall: its stack interned in its process's space, 3 kernel frames");
	ok(e[1].type == FR_EV_OFFCPU && (e[1].flags & FR_EVSTALL_KIND_MASK) == FR_STALL_BLOCKED &&
	   (e[1].flags & FR_EVOFF_KILLABLE) && (e[1].flags & FR_EVOFF_US) && e[1].ref == 5000000 &&
	   e[1].arg && FR_STACK_KN(intern__tag(t->stacks, e[1].arg)) == 2,
	   "offcpu: a killable block of 5 s in microseconds (beyond 31 bits of ns), its stack");
	memset(&got_si, 0, sizeof(got_si));
	intern__copy(t->strs, e[2].ref, &got_si, sizeof(got_si));
	ok(e[2].type == FR_EV_STALLSUM && e[2].flags == FR_STALL_MEMCG && e[2].proc == e[0].proc &&
	   !memcmp(&got_si, &si, sizeof(si)), "stallsum: the incarnation's sums of the kind");
	drain__release(d, 16 * SEC);
	proctable__stats(t->procs, &ps);
	intern__stats(t->stacks, &is);
	intern__stats(t->strs, &ss);
	ok(count(d) == 0 && ps.live == 0 && is.live == 0 && ss.live == 0,
	   "once they leave the window: no process, stack or blob is left (%" PRIu64 ", %" PRIu64
	   ", %" PRIu64 ")", ps.live, is.live, ss.live);
	/* Malformed: a stack longer than the record, a kind out of range, a begin after the end. */
	size = stall_rec(raw, 7 * SEC, 6 * SEC, 9, 9, FR_STALL_MEMCG, 3, 4);
	drain__record(d, raw, size - 8);
	size = stall_rec(raw, 7 * SEC, 6 * SEC, 9, 9, FR_STALL_BLOCKED, 1, 1);
	drain__record(d, raw, size);
	size = stall_rec(raw, 7 * SEC, 8 * SEC, 9, 9, FR_STALL_RECLAIM, 1, 1);
	drain__record(d, raw, size);
	is_int(drain__stats(d)->bad, 3, "short, wrong-kind and backwards stall records are counted bad");
out:
	drain__free(d);
}

/*
 * A fork's child that exec'd before its parent's facts were read: what it
 * inherits from them is the image before its exec (the era of its samples
 * before it), never the one after, however late the read.
 */
static void test_inherit_era(void)
{
	struct drain *d = drain__new(8 << 20, 10 * SEC);
	const struct drain_tables *t = drain__tables(d);
	struct proc_meta *parent = calloc(1, sizeof(*parent)), *m, *before, *after;
	struct fr_rec_exec x = {};
	uint32_t slot = 0;

	if (!ok(d && parent, "a drain and a parent's facts"))
		goto out;
	atomic_init(&parent->refs, 1);
	parent->begun = 3 * SEC;	/* read after the child's exec */
	sample(d, 1 * SEC, 60, 500 * MS, "perf-exec", 1, 4);
	hdr(&x.h, FR_REC_EXEC, 2 * SEC, 60, 500 * MS, "python3", sizeof(x));
	snprintf(x.filename, sizeof(x.filename), "/usr/bin/python3");
	drain__record(d, &x, sizeof(x));
	if (!ok(!proctable__lookup(t->procs, 60, 500 * MS, &slot), "the child has a slot"))
		goto out;
	proctable__set_meta_ops(t->procs, &proc_meta__ops);
	m = proc_meta__inherit(parent, 60, 500 * MS);
	ok(m && m->begun == 500 * MS, "inherited facts date from the fork, not the parent's read");
	if (m && proctable__set_meta(t->procs, slot, 60, 500 * MS, m, m->begun))
		proc_meta__put(m);
	before = proctable__meta_at(t->procs, slot, 60, 500 * MS, 1 * SEC, NULL);
	after = proctable__meta_at(t->procs, slot, 60, 500 * MS, 2 * SEC + 1, NULL);
	ok(m && before == m && !after, "they name the frames before the exec, none after it");
	proc_meta__put(before);
	proc_meta__put(after);
out:
	proc_meta__put(parent);
	drain__free(d);
}

/*
 * frtool exec'd xz, xz's first read came while ld.so still mapped liblzma,
 * and the change of code that followed started an era of its own: the
 * image before the exec was dropped for it, and frtool's samples were
 * named with xz's (CI, unwind_life under ASan). A change in an image's
 * first second is ld.so's: the read replaces the facts in place. A later
 * change (a library swapped) starts an era.
 */
static void test_loader_era(void)
{
	struct drain *d = drain__new(8 << 20, 10 * SEC);
	const struct drain_tables *t = drain__tables(d);
	struct proc_meta *m[3] = {}, *got;
	uint32_t slot = 0;
	bool same;

	sample(d, 500 * MS, 70, 100 * MS, "frtool", 1, 4);
	if (!ok(d && !proctable__lookup(t->procs, 70, 100 * MS, &slot), "a process with a slot"))
		goto out;
	proctable__set_meta_ops(t->procs, &proc_meta__ops);
	for (int i = 0; i < 3; i++) {
		m[i] = calloc(1, sizeof(*m[i]));
		if (!m[i])
			goto out;
		atomic_init(&m[i]->refs, 1);
		proc_meta__get(m[i]);	/* one for the table, one for the test */
	}
	proctable__set_meta(t->procs, slot, 70, 100 * MS, m[0], 200 * MS);	/* frtool */
	proctable__exec(t->procs, slot, 1 * SEC);				/* exec xz */
	proctable__set_meta(t->procs, slot, 70, 100 * MS, m[1], 1 * SEC + 10 * MS);
	is_int(proctable__loading(t->procs, slot, 70, 100 * MS, 1 * SEC + 20 * MS), 1,
	       "20 ms after the exec, the image is loading");
	is_int(proctable__loading(t->procs, slot, 70, 100 * MS, 2 * SEC + 1), 0,
	       "past its first second, it is not");
	is_int(proctable__loading(t->procs, slot, 70, 99 * MS, 1 * SEC + 20 * MS), -ESTALE,
	       "another incarnation's question is stale");
	is_int(proctable__new_era(t->procs, slot, 70, 100 * MS, 1 * SEC + 20 * MS), -EALREADY,
	       "a change of code in the image's first second starts no era (ld.so's)");
	proctable__set_meta(t->procs, slot, 70, 100 * MS, m[2], 2 * SEC + 100 * MS);
	got = proctable__meta_at(t->procs, slot, 70, 100 * MS, 500 * MS, NULL);
	same = got == m[0];
	proc_meta__put(got);
	got = proctable__meta_at(t->procs, slot, 70, 100 * MS, 1 * SEC + 5 * MS, NULL);
	same &= got == m[2];
	proc_meta__put(got);
	ok(same, "the samples before the exec keep the image before it; those after, the re-read");
	is_int(proctable__new_era(t->procs, slot, 70, 100 * MS, 3 * SEC), 0,
	       "a change 2 s into the image starts an era");
	got = proctable__meta_at(t->procs, slot, 70, 100 * MS, 2 * SEC + 500 * MS, NULL);
	same = got == m[2];
	proc_meta__put(got);
	got = proctable__meta_at(t->procs, slot, 70, 100 * MS, 3 * SEC + 1, NULL);
	ok(same && !got, "before it, the facts read before it; after it, none until the next read");
	proc_meta__put(got);
out:
	drain__free(d);
	for (int i = 0; i < 3; i++)
		proc_meta__put(m[i]);
}

static void test_bad_records(void)
{
	struct drain *d = drain__new(8 << 20, 10 * SEC);
	struct fr_rec_hdr h;
	struct fr_rec_sample s = {};

	hdr(&h, 99, 1, 1, 1, "x", sizeof(h));
	drain__record(d, &h, sizeof(h));
	drain__record(d, &h, 10);
	hdr(&s.h, FR_REC_SAMPLE, 1, 1, 1, "x", sizeof(s));
	s.kn = 100;
	s.un = 100;
	drain__record(d, &s, sizeof(s));
	is_int(drain__stats(d)->bad, 3, "unknown type, short record, overlong stack: all counted");
	is_int(drain__staged(d), 0, "and none staged");
	drain__free(d);
}

/* ---- an exit's code mappings (FR_REC_MAPS) ---- */

struct maps_seen {
	unsigned calls;
	uint32_t slot, pid, n;
};

static void fake_exit_maps(void *ctx, uint32_t slot, const void *rec)
{
	const struct fr_rec_maps *r = rec;
	struct maps_seen *m = ctx;

	m->calls++;
	m->slot = slot;
	m->pid = r->h.tgid;
	m->n = r->n;
}

/*
 * An exit's mappings go to the hook for an incarnation the table has
 * (none is staged: no event of their own), not for one it never saw;
 * a count past FR_XMAPS_MAX or past the record's bytes is a bad record.
 */
static void test_exit_maps(void)
{
	struct drain *d = drain__new(8 << 20, 10 * SEC);
	static struct fr_rec_maps r;
	struct maps_seen seen = { 0 };
	size_t two = offsetof(struct fr_rec_maps, m) + 2 * sizeof(r.m[0]);
	uint32_t slot = 0;

	drain__set_hooks(d, &(struct drain_hooks){ .ctx = &seen, .exit_maps = fake_exit_maps });
	sample(d, 100, 42, 4200, "short", 1, 4);
	proctable__find(drain__tables(d)->procs, 42, 4200, &slot);
	hdr(&r.h, FR_REC_MAPS, 110, 42, 4200, "short", (uint32_t)two);
	r.n = 2;
	r.m[0] = (struct fr_xmap){ .begin = 0x1000, .end = 0x2000, .ino = 7 };
	r.m[1] = (struct fr_xmap){ .begin = 0x3000, .end = 0x4000, .ino = 8 };
	drain__record(d, &r, two);
	ok(seen.calls == 1 && seen.slot == slot && slot && seen.pid == 42 && seen.n == 2,
	   "exit maps: the hook gets the incarnation's slot and its 2 mappings");
	is_int(drain__staged(d), 1, "exit maps: no event staged for them (the sample only)");
	hdr(&r.h, FR_REC_MAPS, 120, 43, 4300, "never", (uint32_t)two);
	drain__record(d, &r, two);
	is_int(seen.calls, 1, "exit maps: none for an incarnation the table never saw");
	r.n = FR_XMAPS_MAX + 1;
	drain__record(d, &r, sizeof(r));
	r.n = 3;
	drain__record(d, &r, two);
	is_int(drain__stats(d)->bad, 2, "exit maps: too many, or more than the bytes hold: bad records");
	is_int(drain__stats(d)->exit_maps, 2, "exit maps: the two good ones counted");
	drain__free(d);
}

/* ---- samples held for their rows (FR_SAMPLE_UCOPY) ---- */

static union {
	struct fr_rec_sample s;
	uint8_t raw[FR_REC_COPY_MAX_SIZE];
} cbuf;

struct finisher {
	int ready;		/* 1: rows are there; -errno: never */
	unsigned asked;
	uint32_t pid;
	uint64_t start;
	struct fr_ucopy c;
	uint64_t first_word;	/* the copy's first 8 bytes, as the hook saw them */
};

static int fake_finish(void *ctx, uint32_t pid, uint64_t start, const struct fr_ucopy *c,
		       const void *stack, uint64_t *ips, unsigned max, uint32_t *end)
{
	struct finisher *f = ctx;

	f->asked++;
	f->pid = pid;
	f->start = start;
	f->c = *c;
	memcpy(&f->first_word, stack, 8);
	if (f->ready < 0)
		return f->ready;
	if (!f->ready || max < 3 || c->gen == 99)	/* 99: no table of that generation yet */
		return 0;
	/* The walk goes on from the frame the kernel stopped at: its pc first. */
	ips[0] = c->pc;
	ips[1] = 0x7000;
	ips[2] = 0x7001;
	*end = FR_UEND_OUTERMOST;
	return 3;
}

static uint32_t copy_gen = 4;	/* the maps generation copy_sample() stamps */

/*
 * A sample of 2 kernel and 3 user frames whose walk met a file without
 * rows at user frame 1 (flags: no_info), with @len bytes of stack.
 */
static size_t copy_sample(struct drain *d, uint64_t ts, uint32_t pid, uint32_t len)
{
	size_t off = sizeof(cbuf.s) + 5 * 8, size = off + sizeof(struct fr_ucopy) + len;
	struct fr_ucopy *c = (struct fr_ucopy *)(cbuf.raw + off);

	memset(&cbuf, 0, sizeof(cbuf));
	hdr(&cbuf.s.h, FR_REC_SAMPLE, ts, pid, 7, "py", (uint32_t)size);
	cbuf.s.kn = 2;
	cbuf.s.un = 3;
	cbuf.s.flags = FR_SAMPLE_UCOPY | FR_UEND_NO_INFO << FR_SAMPLE_UEND_SHIFT;
	for (int i = 0; i < 5; i++)
		cbuf.s.ips[i] = 0x100 + (uint64_t)i;
	c->pc = 0x103;
	c->sp = 0x7ffd0000;
	c->bp = 0;
	c->at = 1;
	c->gen = copy_gen;
	c->len = len;
	memcpy(c + 1, &(uint64_t){ 0xfeedULL }, 8);
	drain__record(d, &cbuf, size);
	return size;
}

/* The user frames and end code of the window's event @i. */
static int user_frames(struct drain *d, uint64_t i, uint64_t *ips, unsigned *end)
{
	const struct drain_tables *t = drain__tables(d);
	struct fr_event e;
	uint8_t raw[FR_SAMPLE_MAX_SIZE];
	size_t len, kb;

	window__read(t->win, i, &e);
	*end = (e.flags & FR_DSAMPLE_UEND_MASK) >> FR_DSAMPLE_UEND_SHIFT;
	len = intern__copy(t->stacks, e.ref, raw, sizeof(raw));
	kb = FR_STACK_KN(intern__tag(t->stacks, e.ref)) * 8;
	if (len < kb)
		return -1;
	memcpy(ips, raw + kb, len - kb);
	return (int)((len - kb) / 8);
}

/* A finisher that also counts the stack_gone hook's calls (the finisher first). */
struct finisher_gone {
	struct finisher f;
	unsigned gone;
};

static void count_gone(void *ctx, uint32_t id, uint32_t serial)
{
	(void)id;
	(void)serial;
	((struct finisher_gone *)ctx)->gone++;
}

/*
 * Freeing the drain tells no one of the stacks it frees: the daemon frees
 * the dump thread (which the stack_gone hook reaches) first, and a sample
 * still held for its rows at the stop made the hook write into it (a
 * SIGSEGV at test_install's stop).
 */
static void test_free_quiet(void)
{
	struct drain *d = drain__new(16 << 20, 100 * SEC);
	struct finisher_gone fg = { { 0 }, 0 };

	drain__set_hooks(d, &(struct drain_hooks){ .ctx = &fg, .finish = fake_finish,
						   .stack_gone = count_gone });
	copy_sample(d, 10 * MS, 40, 512);
	drain__release(d, 20 * MS);
	ok(count(d) == 0 && drain__stats(d)->ucopy_held_max == 1 && fg.f.asked == 1,
	   "free: a sample held for its rows");
	drain__free(d);
	is_int(fg.gone, 0, "free: freeing the drain calls no stack_gone hook");
}

static void test_held(void)
{
	struct drain *d = drain__new(16 << 20, 100 * SEC);
	struct finisher f = { 0 };
	uint64_t ips[FR_MAX_STACK];
	unsigned end;
	int n;

	drain__set_hooks(d, &(struct drain_hooks){ .ctx = &f, .finish = fake_finish });
	copy_sample(d, 10 * MS, 40, 4096);
	sample(d, 15 * MS, 41, 1, "other", 3, 4);
	drain__release(d, 20 * MS);
	is_int(count(d), 0, "a sample waiting for its rows holds back what came after it");
	ok(f.asked == 1 && f.pid == 40 && f.start == 7 && f.c.at == 1 && f.c.gen == 4 &&
	   f.c.len == 4096 && f.first_word == 0xfeed,
	   "the finisher is asked with the incarnation, the copy's registers and its bytes");
	drain__release(d, 25 * MS);
	is_int(f.asked, 1, "and not again within 10 ms");
	f.ready = 1;
	drain__release(d, 40 * MS);
	is_int(count(d), 2, "once the rows are there, both enter the window");
	n = user_frames(d, window__tail(drain__tables(d)->win), ips, &end);
	ok(n == 4 && ips[0] == 0x102 && ips[1] == 0x103 && ips[2] == 0x7000 && ips[3] == 0x7001 &&
	   end == FR_UEND_OUTERMOST,
	   "its user stack: the frame before the cut, then the finished walk (%d frames, end %u)",
	   n, end);
	is_int(drain__stats(d)->ucopy_finished, 1, "counted as finished");

	/* No rows in time: released as the kernel walked it. */
	f.ready = 0;
	copy_sample(d, 50 * MS, 42, 512);
	drain__release(d, 60 * MS);
	is_int(count(d), 2, "held again");
	drain__release(d, 50 * MS + 2900 * MS);
	is_int(count(d), 2, "still held at 2.9 s");
	drain__release(d, 50 * MS + 3000 * MS);
	is_int(count(d), 3, "past 3 s it is given up");
	n = user_frames(d, window__tail(drain__tables(d)->win) + 2, ips, &end);
	ok(n == 3 && ips[2] == 0x104 && end == FR_UEND_NO_INFO,
	   "with the kernel's frames and end (%d, %u)", n, end);
	is_int(drain__stats(d)->ucopy_expired, 1, "counted as expired");

	/*
	 * Never: the process ended without rows. Not before its exit record
	 * is read: the mappings its exit sends come just before it, and the
	 * finisher may walk on with them once the process is gone.
	 */
	f.ready = -ESRCH;
	copy_sample(d, 3100 * MS, 46, 512);
	drain__release(d, 3110 * MS);
	ok(count(d) == 3 && drain__stats(d)->ucopy_expired == 1,
	   "-ESRCH before the process's exit record is read: still held");
	exit_rec(d, 3115 * MS, 46, 7, 0);
	drain__release(d, 3130 * MS);
	ok(count(d) == 5 && drain__stats(d)->ucopy_expired == 2,
	   "once it is read, a copy that can never be finished (-ESRCH) is given up at once");
	f.ready = 0;

	/* Rows being built: it waits 10 s from its sample, not 3. */
	f.ready = -EINPROGRESS;
	copy_sample(d, 3150 * MS, 48, 512);
	drain__release(d, 3160 * MS);
	drain__release(d, 3150 * MS + 9000 * MS);
	ok(count(d) == 5 && drain__stats(d)->ucopy_waited == 1,
	   "a copy whose rows are being built (-EINPROGRESS) is still held at 9 s");
	drain__release(d, 3150 * MS + 10000 * MS);
	ok(count(d) == 6 && drain__stats(d)->ucopy_expired == 3,
	   "and given up at 10 s");
	f.ready = 0;

	/* A dump does not wait. */
	copy_sample(d, 13200 * MS, 43, 512);
	drain__release(d, 13210 * MS);
	is_int(count(d), 6, "held");
	drain__settle(d);
	drain__release(d, 13210 * MS);
	ok(count(d) == 7 && drain__stats(d)->ucopy_gave_up_dump == 1 &&
	   drain__stats(d)->ucopy_expired == 3,
	   "drain__settle() gives it up at once for a dump, counted as such (%" PRIu64
	   " in the window)", count(d));

	/* A copy its table cannot finish yet does not hold up the process's
	 * copies of another maps generation. */
	{
		uint64_t done = drain__stats(d)->ucopy_finished;

		f.ready = 1;
		copy_gen = 99;
		copy_sample(d, 13250 * MS, 47, 512);
		copy_gen = 4;
		copy_sample(d, 13251 * MS, 47, 512);
		drain__release(d, 13260 * MS);
		ok(drain__stats(d)->ucopy_finished == done + 1 && count(d) == 7,
		   "a copy of another generation is finished past one that waits (the window waits for it)");
		f.ready = 0;
		drain__settle(d);
	}

	/* Malformed: a copy longer than the record, a frame past the walk. */
	{
		size_t size = copy_sample(d, 13300 * MS, 44, 512);
		uint64_t bad = drain__stats(d)->bad;

		cbuf.s.h.size = (uint32_t)(size - 8);
		drain__record(d, &cbuf, size - 8);
		((struct fr_ucopy *)(cbuf.raw + sizeof(cbuf.s) + 40))->at = 3;
		cbuf.s.h.size = (uint32_t)size;
		drain__record(d, &cbuf, size);
		is_int(drain__stats(d)->bad - bad, 2, "a short copy and one past the user frames are bad");
	}
	drain__settle(d);

	/* The budget: 4 MiB of copies held at most. */
	{
		uint64_t refused;

		for (int i = 0; i < 600; i++)
			copy_sample(d, 14000 * MS + (uint64_t)i, 45, FR_UCOPY_MAX);
		refused = drain__stats(d)->ucopy_refused;
		ok(refused > 0 && drain__stats(d)->ucopy_held_max < 600,
		   "past 4 MiB held, copies are refused (%" PRIu64 " of 600; %" PRIu64 " held at most)",
		   refused, drain__stats(d)->ucopy_held_max);
		drain__settle(d);
	}
	drain__free(d);
}

/* Append to the record at @raw of @size bytes (@n frames) a copy of 64 bytes from user frame 1. */
static size_t with_copy(uint8_t *raw, size_t size)
{
	struct fr_ucopy *c = (struct fr_ucopy *)(raw + size);

	memset(c, 0, sizeof(*c) + 64);
	c->pc = 0x103;
	c->sp = 0x7ffd0000;
	c->at = 1;
	c->gen = copy_gen;
	c->len = 64;
	((struct fr_rec_hdr *)raw)->size = (uint32_t)(size + sizeof(*c) + 64);
	return size + sizeof(*c) + 64;
}

/*
 * A stall and a block whose walks are finished from their copies carry
 * the mark a sample carries in its arg: the stall in its details' stack
 * flags, the block in its length's top bit, which leaves the length as it
 * was, and each with the finished walk's end.
 */
static void test_held_stall_block(void)
{
	struct drain *d = drain__new(16 << 20, 100 * SEC);
	const struct drain_tables *t = drain__tables(d);
	static uint8_t raw[FR_REC_COPY_MAX_SIZE];
	struct fr_rec_offcpu *o = (struct fr_rec_offcpu *)raw;
	struct finisher f = { .ready = 1 };
	struct fr_stall_info info = { 0 };
	struct fr_event e[2];
	size_t size;
	int n = 0;

	drain__set_hooks(d, &(struct drain_hooks){ .ctx = &f, .finish = fake_finish,
						   .memcg_path = memcg_path });
	size = stall_rec(raw, 100 * MS, 97 * MS, 50, 7, FR_STALL_RECLAIM, 3, 4);
	((struct fr_rec_stall *)raw)->flags = FR_SAMPLE_UCOPY | FR_UEND_NO_INFO << FR_SAMPLE_UEND_SHIFT;
	drain__record(d, raw, with_copy(raw, size));
	size = sizeof(*o) + 5 * 8;
	memset(raw, 0, size);
	hdr(&o->h, FR_REC_OFFCPU, 110 * MS, 50, 7, "thrasher", (uint32_t)size);
	o->begin = 105 * MS;
	o->state = 2;
	o->kind = FR_STALL_BLOCKED;
	o->kn = 2;
	o->un = 3;
	o->flags = FR_SAMPLE_UCOPY | FR_UEND_NO_INFO << FR_SAMPLE_UEND_SHIFT;
	drain__record(d, raw, with_copy(raw, size));
	drain__release(d, 200 * MS);
	for (uint64_t i = window__tail(t->win); i < window__head(t->win) && n < 2; i++)
		if (!window__read(t->win, i, &e[n]))
			n++;
	if (!is_int(n, 2, "a stall and a block held for their copies, finished"))
		goto out;
	intern__copy(t->strs, e[0].ref, &info, sizeof(info));
	ok(e[0].type == FR_EV_STALL && (info.stack_flags & FR_STALL_INFO_LATER) &&
	   (info.stack_flags & FR_DSAMPLE_UEND_MASK) >> FR_DSAMPLE_UEND_SHIFT == FR_UEND_OUTERMOST,
	   "the stall: marked walked later, with the finished walk's end");
	ok(e[1].type == FR_EV_OFFCPU && (e[1].ref & FR_EVOFF_LATER) &&
	   (e[1].ref & FR_EVOFF_LEN_MAX) == 5 * MS && !(e[1].flags & FR_EVOFF_US) &&
	   (e[1].flags & FR_DSAMPLE_UEND_MASK) >> FR_DSAMPLE_UEND_SHIFT == FR_UEND_OUTERMOST,
	   "the block: marked walked later, its 5 ms length kept, the finished walk's end");
	is_int(drain__stats(d)->ucopy_finished, 2, "both counted as finished");
out:
	drain__free(d);
}

/*
 * A copy that waits must not hold the window back past the staging area:
 * at half of it, the oldest held are given up, as few as release a
 * quarter of it; a newer copy keeps waiting. (8 MiB stages 4096 events.)
 */
static void test_held_full_stage(void)
{
	struct drain *d = drain__new(8 << 20, 100 * SEC);
	struct finisher f = { 0 };
	uint64_t n;
	int i;

	drain__set_hooks(d, &(struct drain_hooks){ .ctx = &f, .finish = fake_finish });
	copy_sample(d, 1 * MS, 50, 512);
	for (i = 0; i < 1100; i++)
		sample(d, 2 * MS + (uint64_t)i * 1000, 51, 1, "s", 1, 2);
	copy_sample(d, 4 * MS, 52, 512);
	for (i = 0; i < 20000; i++) {
		sample(d, 5 * MS + (uint64_t)i * 1000, 51, 1, "s", 1, 2);
		if (i % 100 == 99)
			drain__release(d, 5 * MS + (uint64_t)i * 1000);
		if (i == 899)
			ok(drain__stats(d)->ucopy_gave_up_full == 0 && count(d) == 0,
			   "below half the staging area, both copies hold the window (%" PRIu64 ")",
			   count(d));
	}
	n = count(d);
	ok(drain__stats(d)->ucopy_gave_up_full == 2 && drain__stats(d)->ucopy_expired == 0,
	   "20,000 samples behind two held copies: both given up as the staging area fills, "
	   "counted as such");
	ok(n >= 20000 - 4096 && n <= 21102, "the window moved on (%" PRIu64 " in it)", n);
	drain__free(d);

	/* Oldest first: the one before the quarter goes, the newer one waits. */
	d = drain__new(8 << 20, 100 * SEC);
	drain__set_hooks(d, &(struct drain_hooks){ .ctx = &f, .finish = fake_finish });
	copy_sample(d, 1 * MS, 50, 512);
	for (i = 0; i < 1100; i++)
		sample(d, 2 * MS + (uint64_t)i * 1000, 51, 1, "s", 1, 2);
	copy_sample(d, 4 * MS, 52, 512);
	for (i = 0; i < 1000; i++)
		sample(d, 5 * MS + (uint64_t)i * 1000, 51, 1, "s", 1, 2);
	drain__release(d, 6 * MS);
	ok(drain__stats(d)->ucopy_gave_up_full == 1 && count(d) == 1101,
	   "half full: the older copy is given up and what came before the newer one enters "
	   "the window (%" PRIu64 ")", count(d));
	f.ready = 1;
	drain__release(d, 20 * MS);	/* asked again 10 ms on */
	ok(drain__stats(d)->ucopy_finished == 1 && count(d) == 2102,
	   "the newer one waited, and is finished once its rows come (%" PRIu64 ")", count(d));
	drain__release(d, UINT64_MAX);
	drain__free(d);
}

int main(void)
{
	test_watermark_order();
	test_incarnations();
	test_exit_lifetime();
	test_memory_cap();
	test_burst_tables();
	test_memory_records();
	test_stall_records();
	test_inherit_era();
	test_loader_era();
	test_bad_records();
	test_exit_maps();
	test_held();
	test_free_quiet();
	test_held_stall_block();
	test_held_full_stage();
	return tap_done_testing();
}
