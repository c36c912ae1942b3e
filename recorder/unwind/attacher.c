// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * attacher.c - first unwind tables, fast. See attacher.h.
 *
 * The queue is a small array under a mutex, served hottest first: each
 * request for an incarnation already queued adds one to its demand (a
 * process without a table asks with each sample, stall or block until it
 * has one), and the attacher takes the queued incarnation with the most
 * samples waiting, the oldest among equals; before each file of a table
 * it builds, it yields to a hotter one. So a busy process is not walked by
 * frame pointers while the tables of processes that barely ran are built:
 * in test_stacks, /usr/bin/python3 and the perf sampling it were asked for
 * in one drained batch, and in FIFO order python's table came after
 * perf's (0.7 s of rows under ASan). Turns of one file each, oldest
 * first, were tried too: python3 then waited for each of perf's big files
 * in turn, and 14 % of its samples were walked without a table under ASan
 * in CI, against 0.7-1.6 % served hottest first.
 *
 * An exec asks too, with no demand, due FR_ATTACH_EXEC_NS later (the
 * dynamic loader maps the libraries meanwhile; a sample makes it due at
 * once): a process that sleeps before it blocks has no sample to ask
 * with, and the /proc worker's attach comes only after its full reads,
 * which queue behind every other process's symbols. Such requests are
 * served when no demand waits, oldest first, and a full queue drops one
 * of them to keep a request with a demand. A little open-addressed table
 * of recent (pid, start) with their time and demand keeps a request cheap
 * on the drain's thread. An incarnation served less than
 * FR_ATTACH_RETRY_NS ago is not queued again.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attacher.h"
#include "symbols.h"
#include "tables.h"
#include "util.h"
#include "worker.h"

#define FR_ATTACH_QUEUE		256
#define FR_ATTACH_RECENT	512	/* power of two */
#define FR_ATTACH_RETRY_NS	(200 * 1000 * 1000ULL)
#define FR_ATTACH_EXEC_NS	(10 * 1000 * 1000ULL)

struct attach_req {
	uint32_t pid;
	uint64_t start;
	uint64_t seq;		/* order of queueing: the oldest goes first */
	uint64_t due;		/* CLOCK_BOOTTIME ns; before it, only a demand serves it */
};

struct attach_recent {
	uint32_t pid;
	uint64_t start;
	uint64_t at;		/* CLOCK_BOOTTIME ns it was queued or served */
	uint32_t demand;	/* requests since it was queued */
	bool queued;
	bool serving;		/* its table is being built now */
};

struct attacher {
	struct unwinder *u;
	struct worker w;	/* its lock guards everything below */
	struct attach_req q[FR_ATTACH_QUEUE];	/* unordered: see take_hottest() */
	unsigned len;
	uint64_t seq;
	struct attach_req cur;	/* the request being served */
	struct attach_recent recent[FR_ATTACH_RECENT];
	struct attacher_stats st;
};

static bool hotter_waits(void *ctx);

/*
 * Maps alone, then the table; the full /proc read comes later, elsewhere.
 * Returns 0 or -errno (-EAGAIN: a hotter request came first, ask again).
 */
static int attach_one(struct attacher *a, const struct attach_req *r)
{
	const struct unwind_yield yield = { .fn = hotter_waits, .ctx = a };
	struct procmaps *pm;
	uint32_t gen;
	char dir[32];
	int err = -ESRCH;

	if (unwinder__current(a->u, r->pid, r->start))
		return 0;
	gen = unwinder__gen(a->u, r->pid, NULL);
	snprintf(dir, sizeof(dir), "/proc/%u", r->pid);
	/* Most of a fork storm's children are gone by now: no read for them. */
	pm = access(dir, F_OK) ? NULL : procmaps__read_image(dir);
	if (pm) {
		/* Not verified against PID reuse, nor need it be: the BPF side
		 * uses a table only for the incarnation it names. */
		err = unwinder__attach(a->u, r->pid, r->start, gen, dir, pm, &yield);
		procmaps__free(pm);
	}
	worker__lock(&a->w);
	if (err == -EAGAIN)
		a->st.yielded++;
	else if (err)
		a->st.failed++;
	else
		a->st.attached++;
	worker__unlock(&a->w);
	return err;
}

/* Under the lock: @pid/@start's slot of the recent table. */
static struct attach_recent *recent_slot(struct attacher *a, uint32_t pid, uint64_t start)
{
	return &a->recent[fr_hash64(&(uint64_t[2]){ pid, start }, 16, 0) & (FR_ATTACH_RECENT - 1)];
}

/* Under the lock: how many samples wait for @r's table (0: its slot was reused). */
static uint32_t demand_of(struct attacher *a, const struct attach_req *r)
{
	const struct attach_recent *e = recent_slot(a, r->pid, r->start);

	return e->pid == r->pid && e->start == r->start && e->queued ? e->demand : 0;
}

/*
 * Under the lock: the queued request with the most samples waiting among
 * those due at @now (a demand makes one due), the oldest among equals,
 * removed from the queue; it becomes a->cur, whose demand goes on growing
 * while it is served. Returns false when none is due; *@next is then the
 * earliest due.
 */
static bool take_hottest(struct attacher *a, uint64_t now, uint64_t *next)
{
	unsigned best = a->len;
	uint32_t best_d = 0;
	struct attach_recent *e;
	struct attach_req r;

	*next = UINT64_MAX;
	for (unsigned i = 0; i < a->len; i++) {
		uint32_t d = demand_of(a, &a->q[i]);

		if (!d && a->q[i].due > now) {
			*next = FR_MIN(*next, a->q[i].due);
			continue;
		}
		if (best == a->len || d > best_d ||
		    (d == best_d && a->q[i].seq < a->q[best].seq)) {
			best = i;
			best_d = d;
		}
	}
	if (best == a->len)
		return false;
	r = a->q[best];
	a->q[best] = a->q[--a->len];
	e = recent_slot(a, r.pid, r.start);
	if (e->pid == r.pid && e->start == r.start) {
		e->queued = false;
		e->serving = true;
	}
	a->cur = r;
	return true;
}

/*
 * The yield of a->cur's attach, before each file it builds: does a queued
 * request have more samples waiting than it (or is the thread stopping)?
 */
static bool hotter_waits(void *ctx)
{
	struct attacher *a = ctx;
	const struct attach_recent *e;
	uint32_t mine;
	bool hotter;

	worker__lock(&a->w);
	e = recent_slot(a, a->cur.pid, a->cur.start);
	mine = e->pid == a->cur.pid && e->start == a->cur.start ? e->demand : 0;
	hotter = worker__stopping(&a->w);
	for (unsigned i = 0; i < a->len && !hotter; i++)
		hotter = demand_of(a, &a->q[i]) > mine;
	worker__unlock(&a->w);
	return hotter;
}

/*
 * Under the lock: a->cur was served at @now; @again (it yielded): queue
 * it again with the demand it has, first among its equals.
 */
static void served(struct attacher *a, bool again, uint64_t now)
{
	struct attach_recent *e = recent_slot(a, a->cur.pid, a->cur.start);
	bool mine = e->pid == a->cur.pid && e->start == a->cur.start;

	if (mine)
		e->serving = false;
	if (again && a->len < FR_ATTACH_QUEUE) {
		a->q[a->len++] = a->cur;
		if (mine)
			e->queued = true;
		return;
	}
	if (mine) {
		e->demand = 0;
		e->at = now;
	}
}

static void *attacher_main(void *arg)
{
	struct attacher *a = arg;
	int err;

	worker__lock(&a->w);
	for (;;) {
		struct attach_req r;
		uint64_t next;

		while (!worker__stopping(&a->w) && !a->len)
			worker__wait(&a->w, UINT64_MAX);
		if (worker__stopping(&a->w))
			break;
		if (!take_hottest(a, fr_boottime_ns(), &next)) {
			if (next > fr_boottime_ns())
				worker__wait(&a->w, next);
			continue;
		}
		r = a->cur;
		worker__unlock(&a->w);
		err = attach_one(a, &r);
		worker__lock(&a->w);
		served(a, err == -EAGAIN && !worker__stopping(&a->w), fr_boottime_ns());
	}
	worker__unlock(&a->w);
	return NULL;
}

struct attacher *attacher__new(struct unwinder *u)
{
	struct attacher *a = calloc(1, sizeof(*a));
	int err;

	if (!a)
		return NULL;
	a->u = u;
	err = worker__init(&a->w);
	if (!err)
		err = worker__start(&a->w, "fr-attach", attacher_main, a);
	if (err) {
		worker__fini(&a->w);
		free(a);
		errno = -err;
		return NULL;
	}
	return a;
}

void attacher__free(struct attacher *a)
{
	if (!a)
		return;
	if (worker__stop(&a->w, FR_STOP_WAIT_NS))
		return;	/* left behind, with what it uses */
	worker__fini(&a->w);
	free(a);
}

/*
 * Under the lock: should a request for (@pid, @start) adding @demand be
 * queued? Not when it is queued already (its demand grows) or was served
 * within FR_ATTACH_RETRY_NS; otherwise its recent entry now says queued.
 */
static bool want_queue(struct attacher *a, uint32_t pid, uint64_t start, uint64_t now,
		       uint32_t demand)
{
	struct attach_recent *e = recent_slot(a, pid, start);

	if (e->pid == pid && e->start == start) {
		if (e->queued || e->serving) {
			e->demand += demand;
			return false;
		}
		if (now - e->at < FR_ATTACH_RETRY_NS)
			return false;
	}
	if (e->serving)
		return true;	/* a colliding entry in service keeps its slot */
	*e = (struct attach_recent){ pid, start, now, demand, true, false };
	return true;
}

/*
 * Under the lock, with the queue full: make room for a request with a
 * demand by dropping one without (an exec's), so that an exec storm does
 * not keep out the processes that are running. Returns false if none.
 */
static bool drop_idle(struct attacher *a)
{
	for (unsigned i = 0; i < a->len; i++) {
		struct attach_recent *e = recent_slot(a, a->q[i].pid, a->q[i].start);

		if (demand_of(a, &a->q[i]))
			continue;
		if (e->pid == a->q[i].pid && e->start == a->q[i].start)
			e->queued = false;
		a->q[i] = a->q[--a->len];
		a->st.dropped++;
		return true;
	}
	return false;
}

/* Queue (@pid, @start) with @demand, served @delay ns from now on. */
static void request(struct attacher *a, uint32_t pid, uint64_t start, uint32_t demand,
		    uint64_t delay)
{
	uint64_t now = fr_boottime_ns();

	worker__lock(&a->w);
	if (want_queue(a, pid, start, now, demand)) {
		a->st.requests++;
		if (a->len == FR_ATTACH_QUEUE && !(demand && drop_idle(a))) {
			a->st.dropped++;
			recent_slot(a, pid, start)->queued = false;
		} else {
			a->q[a->len++] = (struct attach_req){ pid, start, a->seq++, now + delay };
			worker__wake(&a->w);
		}
	}
	worker__unlock(&a->w);
}

void attacher__request(struct attacher *a, uint32_t pid, uint64_t start)
{
	request(a, pid, start, 1, 0);
}

void attacher__request_exec(struct attacher *a, uint32_t pid, uint64_t start)
{
	request(a, pid, start, 0, FR_ATTACH_EXEC_NS);
}

bool attacher__pending(struct attacher *a, uint32_t pid, uint64_t start)
{
	const struct attach_recent *e;
	bool pending;

	worker__lock(&a->w);
	e = recent_slot(a, pid, start);
	pending = e->pid == pid && e->start == start && (e->queued || e->serving);
	worker__unlock(&a->w);
	return pending;
}

void attacher__stats(struct attacher *a, struct attacher_stats *st)
{
	worker__lock(&a->w);
	*st = a->st;
	worker__unlock(&a->w);
}
