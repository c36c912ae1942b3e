// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_planner.c - the planner's rules without BPF: a fake window, timer,
 * dump thread and control clients drive recorder/daemon/planner.c through
 * its ops. Lone triggers, pre and post windows, merging and its limit,
 * cooldown and max_per_hour, the one-dump-at-a-time and one-start-per-
 * second rules, a storm of 100 firings, the pin, a failed start, aborting.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "planner.h"
#include "tap.h"

#define SEC	1000000000ULL
#define MS	1000000ULL
#define MAX_REPLIES 256

struct fake {
	uint64_t pin;
	uint64_t armed;		/* last timer armed */
	bool busy;
	int starts;
	int fail;		/* -errno the next start returns */
	struct dump_plan last;	/* the last plan started */
	int reply_id[MAX_REPLIES];
	char reply_text[MAX_REPLIES][64];
	int nreplies;
};

/* Window index = the time in ms: easy to check. */
static uint64_t f_lower_bound(void *ctx, uint64_t ts)
{
	(void)ctx;
	return ts / MS;
}

static void f_pin(void *ctx, uint64_t index)
{
	((struct fake *)ctx)->pin = index;
}

static void f_arm(void *ctx, uint64_t at)
{
	((struct fake *)ctx)->armed = at;
}

static bool f_busy(void *ctx)
{
	return ((struct fake *)ctx)->busy;
}

static int f_start(void *ctx, const struct dump_plan *p, uint64_t *first)
{
	struct fake *f = ctx;

	if (f->fail)
		return f->fail;
	f->starts++;
	f->last = *p;
	f->busy = true;
	*first = p->start / MS;
	return 0;
}

static void f_reply(void *ctx, int id, const char *text)
{
	struct fake *f = ctx;

	if (f->nreplies < MAX_REPLIES) {
		f->reply_id[f->nreplies] = id;
		snprintf(f->reply_text[f->nreplies], sizeof(f->reply_text[0]), "%s", text);
	}
	f->nreplies++;
}

static void setup(struct planner *pl, struct fake *f)
{
	const struct planner_ops ops = {
		.ctx = f, .lower_bound = f_lower_bound, .pin = f_pin, .arm = f_arm,
		.busy = f_busy, .start = f_start, .reply = f_reply,
	};

	memset(f, 0, sizeof(*f));
	f->pin = FR_NO_PIN;
	planner__init(pl, &ops, 30 * SEC);
}

static struct trigger_fire fire_at(uint64_t ts)
{
	struct trigger_fire f = { .ts = ts };

	snprintf(f.name, sizeof(f.name), "t");
	snprintf(f.reason, sizeof(f.reason), "at %llu ms", (unsigned long long)(ts / MS));
	return f;
}

static enum plan_fire fire(struct planner *pl, struct trigger *t, uint64_t ts, int waiter)
{
	struct trigger_fire f = fire_at(ts);
	enum trigger_admit why;

	return planner__fire(pl, t, &f, waiter, &why);
}

/* The dump thread finished: the planner is told, then tries the next plan. */
static void finish(struct planner *pl, struct fake *f, uint64_t now)
{
	f->busy = false;
	planner__dump_done(pl, "ok dump\n");
	planner__try_freeze(pl, now);
}

static void test_lone(void)
{
	struct planner pl;
	struct fake f;
	struct trigger t;

	setup(&pl, &f);
	trigger__init(&t, "sig", "signal", &(struct trigger_policy){ 0 });
	is_int(fire(&pl, &t, 100 * SEC, 0), FR_PLAN_STARTED, "lone: a firing starts a plan");
	ok(planner__plan(&pl)->start == 70 * SEC && planner__plan(&pl)->freeze == 100 * SEC,
	   "lone: it covers [T - window, T] (no pre or post set)");
	is_int(f.pin, 70 * 1000, "lone: the plan pins its start at once");
	is_int(planner__try_freeze(&pl, 100 * SEC), 0, "lone: due at once");
	ok(f.starts == 1 && f.last.nfires == 1 && !planner__plan(&pl)->active,
	   "lone: one dump started, naming one trigger; the plan is done");
	is_int(f.pin, 70 * 1000, "lone: the dump being written keeps the pin");
	finish(&pl, &f, 101 * SEC);
	is_int(f.pin, FR_NO_PIN, "lone: the pin is released once the dump is written");
	trigger__fini(&t);
}

static void test_pre_post_merge(void)
{
	struct planner pl;
	struct fake f;
	struct trigger a, b;

	setup(&pl, &f);
	trigger__init(&a, "a", "psi", &(struct trigger_policy){ .pre_ns = 5 * SEC, .post_ns = 2 * SEC });
	trigger__init(&b, "b", "signal", &(struct trigger_policy){ .pre_ns = 10 * SEC, .post_ns = 3 * SEC });
	fire(&pl, &a, 100 * SEC, 0);
	ok(planner__plan(&pl)->start == 95 * SEC && planner__plan(&pl)->freeze == 102 * SEC &&
	   f.armed == 102 * SEC, "pre/post: [T - pre, T + post], the timer armed for T + post");
	is_int(planner__try_freeze(&pl, 101 * SEC), 0, "pre/post: not due before T + post");
	is_int(f.starts, 0, "pre/post: so no dump yet");
	is_int(fire(&pl, &b, 101 * SEC, 0), FR_PLAN_MERGED, "merge: a firing meanwhile joins the plan");
	ok(planner__plan(&pl)->start == 91 * SEC && planner__plan(&pl)->freeze == 104 * SEC &&
	   f.pin == 91 * 1000, "merge: the plan covers both: [min(T - pre), max(T + post)], pin moved");
	planner__try_freeze(&pl, 104 * SEC);
	ok(f.starts == 1 && f.last.nfires == 2 && !strcmp(f.last.fires[1].name, "t"),
	   "merge: one dump lists both firings");
	trigger__fini(&a);
	trigger__fini(&b);
}

static void test_merge_limit(void)
{
	struct planner pl;
	struct fake f;
	struct trigger a;

	setup(&pl, &f);
	trigger__init(&a, "a", "signal", &(struct trigger_policy){ .post_ns = 8 * SEC });
	fire(&pl, &a, 100 * SEC, 0);
	fire(&pl, &a, 107 * SEC, 0);
	is_int(planner__plan(&pl)->freeze, 115 * SEC, "limit: a merge moves the freeze to its T + post");
	fire(&pl, &a, 110 * SEC, 0);
	is_int(planner__plan(&pl)->freeze, 118 * SEC,
	       "limit: but never past the first freeze + FR_MERGE_EXTEND_NS");
	is_int(fire(&pl, &a, 119 * SEC, 7), FR_PLAN_NEXT, "limit: a firing past the limit waits");
	planner__try_freeze(&pl, 118 * SEC);
	ok(f.starts == 1 && f.last.nfires == 3, "limit: the dump has the three firings before it");
	ok(planner__plan(&pl)->active && planner__plan(&pl)->nfires == 1 &&
	   planner__plan(&pl)->waiters[0] == 7, "limit: the late one starts the next plan, waiter kept");
	finish(&pl, &f, 127 * SEC);
	ok(f.starts == 2 && f.last.fires[0].ts == 119 * SEC, "limit: and gets a dump of its own");
	f.busy = false;
	planner__dump_done(&pl, "ok second\n");
	ok(f.nreplies == 1 && f.reply_id[0] == 7 && !strcmp(f.reply_text[0], "ok second\n"),
	   "limit: its waiter is answered with that dump");
	trigger__fini(&a);
}

static void test_policy(void)
{
	struct planner pl;
	struct fake f;
	struct trigger c, r;
	struct trigger_fire x;
	enum trigger_admit why;

	setup(&pl, &f);
	trigger__init(&c, "c", "psi", &(struct trigger_policy){ .cooldown_ns = 60 * SEC });
	trigger__init(&r, "r", "oom", &(struct trigger_policy){ .max_per_hour = 2 });
	fire(&pl, &c, 100 * SEC, 0);
	x = fire_at(130 * SEC);
	is_int(planner__fire(&pl, &c, &x, 9, &why), FR_PLAN_REFUSED, "cooldown: a firing within it is refused");
	ok(why == FR_ADMIT_COOLDOWN && f.nreplies == 1 && f.reply_id[0] == 9 &&
	   strstr(f.reply_text[0], "refused"), "cooldown: says so, and its waiter gets an error at once");
	ok(fire(&pl, &c, 160 * SEC, 0) == FR_PLAN_NEXT, "cooldown: one after it is admitted (for the next plan)");
	fire(&pl, &r, 100 * SEC, 0);
	fire(&pl, &r, 200 * SEC, 0);
	x = fire_at(300 * SEC);
	is_int(planner__fire(&pl, &r, &x, 0, &why), FR_PLAN_REFUSED, "max_per_hour: a third in the hour is refused");
	is_int(why, FR_ADMIT_RATE, "max_per_hour: as over the rate");
	trigger__fini(&c);
	trigger__fini(&r);
}

static void test_gap_and_busy(void)
{
	struct planner pl;
	struct fake f;
	struct trigger a;

	setup(&pl, &f);
	trigger__init(&a, "a", "signal", &(struct trigger_policy){ 0 });
	fire(&pl, &a, 100 * SEC, 0);
	planner__try_freeze(&pl, 100 * SEC);
	fire(&pl, &a, 100 * SEC + 200 * MS, 0);
	planner__try_freeze(&pl, 100 * SEC + 200 * MS);
	is_int(f.starts, 1, "busy: a plan due while a dump is written waits");
	f.busy = false;
	planner__dump_done(&pl, "ok\n");
	planner__try_freeze(&pl, 100 * SEC + 300 * MS);
	ok(f.starts == 1 && f.armed == 101 * SEC,
	   "gap: once it is written, the next starts no sooner than 1 s after the last start");
	planner__try_freeze(&pl, 101 * SEC);
	is_int(f.starts, 2, "gap: and then it does");
	trigger__fini(&a);
}

/* 100 firings in one second, half of them with a waiter: few dumps, every waiter answered once. */
static void test_storm(void)
{
	struct planner pl;
	struct fake f;
	struct trigger sig, cmd;
	int answered[101] = { 0 }, once = 0;
	uint64_t t0 = 100 * SEC;

	setup(&pl, &f);
	trigger__init(&sig, "signal", "signal", &(struct trigger_policy){ 0 });
	trigger__init(&cmd, "command", "command", &(struct trigger_policy){ 0 });
	for (int i = 0; i < 100; i++) {
		uint64_t now = t0 + (uint64_t)i * 10 * MS;

		if (i % 2)
			fire(&pl, &cmd, now, i);
		else
			fire(&pl, &sig, now, 0);
		planner__try_freeze(&pl, now);
		if (f.busy && i % 7 == 6)	/* the dump thread finishes now and then */
			finish(&pl, &f, now);
	}
	for (uint64_t now = t0 + SEC; now < t0 + 5 * SEC; now += 100 * MS) {
		if (f.busy)
			finish(&pl, &f, now);
		else
			planner__try_freeze(&pl, now);
	}
	ok(f.starts >= 1 && f.starts <= 3, "storm: 100 firings in 1 s make %d dumps (at most one start a second)",
	   f.starts);
	ok(!planner__plan(&pl)->active && !f.busy, "storm: nothing is left collecting");
	for (int i = 0; i < f.nreplies && i < MAX_REPLIES; i++)
		if (f.reply_id[i] > 0 && f.reply_id[i] <= 100 && !strncmp(f.reply_text[i], "ok", 2))
			answered[f.reply_id[i]]++;
	for (int i = 1; i < 100; i += 2)
		once += answered[i] == 1;
	is_int(once, 50, "storm: each of the 50 waiters got the path of a dump, exactly once");
	is_int(f.nreplies, 50, "storm: and nobody else got a reply");
	trigger__fini(&sig);
	trigger__fini(&cmd);
}

static void test_failure_and_abort(void)
{
	struct planner pl;
	struct fake f;
	struct trigger a;

	setup(&pl, &f);
	trigger__init(&a, "a", "signal", &(struct trigger_policy){ .post_ns = SEC });
	fire(&pl, &a, 100 * SEC, 3);
	f.fail = -ENOMEM;
	is_int(planner__try_freeze(&pl, 101 * SEC), -ENOMEM, "failure: a start that fails says why");
	ok(!planner__plan(&pl)->active && f.pin == FR_NO_PIN && f.nreplies == 1 &&
	   f.reply_id[0] == 3 && strstr(f.reply_text[0], "error"),
	   "failure: the plan is dropped, its pin released, its waiter told");
	f.fail = 0;
	fire(&pl, &a, 200 * SEC, 4);
	planner__abort(&pl, "error stopping\n");
	ok(!planner__plan(&pl)->active && f.pin == FR_NO_PIN && f.nreplies == 2 &&
	   f.reply_id[1] == 4 && !strcmp(f.reply_text[1], "error stopping\n"),
	   "abort: a collecting plan's waiters are answered, the pin released");
	fire(&pl, &a, 300 * SEC, 0);
	planner__freeze_now(&pl, 300 * SEC + 10 * MS);
	planner__try_freeze(&pl, 300 * SEC + 10 * MS);
	ok(f.starts == 1 && f.last.freeze == 300 * SEC + 10 * MS,
	   "stop: a collecting plan freezes now, not at the end of its post window");
	trigger__fini(&a);
}

int main(void)
{
	test_lone();
	test_pre_post_merge();
	test_merge_limit();
	test_policy();
	test_gap_and_busy();
	test_storm();
	test_failure_and_abort();
	return tap_done_testing();
}
