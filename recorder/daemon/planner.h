/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * planner.h - from trigger firings to dumps: which firings a dump answers,
 * which window it covers and when it freezes.
 *
 * An admitted firing at T joins the plan: the plan covers
 * [min(T - pre), max(T + post)] and freezes at its end. Firings that come
 * while a plan collects are merged into it (the dump lists each), but a
 * merge never delays the freeze by more than FR_MERGE_EXTEND_NS; a firing
 * later than that waits for the next plan. A plan pins its window start at
 * once, so the history before the trigger cannot age out while the post
 * window records. Only one dump is written at a time; a plan that is due
 * meanwhile freezes when it is done. Dumps start at most once per
 * FR_DUMP_GAP_NS: a storm of triggers merges into a few dumps instead of
 * flooding the disk, while a lone trigger dumps at once.
 *
 * The planner owns the plan, the firings waiting for the next one, and the
 * control clients owed a dump's path. It touches nothing else: the window,
 * the timer, the dump thread and the clients are reached through the
 * callbacks of struct planner_ops, so that its rules run in unit tests
 * without BPF. Times are CLOCK_BOOTTIME ns, given by the caller.
 */
#ifndef FR_PLANNER_H
#define FR_PLANNER_H

#include <stdbool.h>
#include <stdint.h>

#include "control.h"
#include "trigger.h"

#define FR_PLAN_FIRES		32	/* triggers named in one dump */
#define FR_PLAN_LATER		64	/* firings waiting for the next plan */
#define FR_MERGE_EXTEND_NS	(10 * 1000 * 1000 * 1000ULL)	/* merging delays a freeze at most this */
#define FR_DUMP_GAP_NS		(1000 * 1000 * 1000ULL)	/* storms: at most one dump start per second */
#define FR_NO_PIN		UINT64_MAX

/* Triggers collected for one dump until its freeze instant. */
struct dump_plan {
	bool active;
	struct trigger_fire fires[FR_PLAN_FIRES];
	uint32_t nfires;
	uint64_t merged;		/* fires beyond FR_PLAN_FIRES, counted only */
	uint64_t start;			/* earliest T - pre */
	uint64_t freeze;		/* latest T + post, at most limit */
	uint64_t limit;
	uint64_t pin;			/* window index held for start */
	int waiters[FR_CONTROL_CLIENTS];	/* control clients owed the path */
	uint32_t nwaiters;
};

struct planner_ops {
	void *ctx;
	/* The window index of the first event at or after @ts. */
	uint64_t (*lower_bound)(void *ctx, uint64_t ts);
	/* Hold time eviction at window index @index; FR_NO_PIN: release it. */
	void (*pin)(void *ctx, uint64_t index);
	/* Call planner__try_freeze() at @at (a timer). */
	void (*arm)(void *ctx, uint64_t at);
	/* Whether a dump is being written. */
	bool (*busy)(void *ctx);
	/*
	 * Freeze @p (drain up to p->freeze) and hand its dump to the dump
	 * thread; store the first window index it reads in *@first. Returns
	 * 0 or -errno (no dump started).
	 */
	int (*start)(void *ctx, const struct dump_plan *p, uint64_t *first);
	/* Answer control client @waiter with @text (a line) and close it. */
	void (*reply)(void *ctx, int waiter, const char *text);
};

/* What planner__fire() did with a firing. */
enum plan_fire {
	FR_PLAN_STARTED,	/* it starts a new plan */
	FR_PLAN_MERGED,		/* it joins the plan that collects */
	FR_PLAN_NEXT,		/* past the plan's merge limit: it waits for the next plan */
	FR_PLAN_REFUSED,	/* its trigger's policy refused it (see its trigger_admit) */
	FR_PLAN_FULL,		/* FR_PLAN_LATER firings wait already: dropped */
};

struct planner {
	struct planner_ops ops;
	uint64_t window_ns;		/* pre of a trigger that sets none */
	struct dump_plan plan;
	struct trigger_fire later[FR_PLAN_LATER];
	struct trigger_policy later_pol[FR_PLAN_LATER];
	int later_waiter[FR_PLAN_LATER];
	uint32_t nlater;
	int writing_waiters[FR_CONTROL_CLIENTS];	/* owed the dump being written */
	uint32_t nwriting;
	uint64_t writing_pin;		/* first window index the dump being written reads */
	uint64_t next_start;		/* no dump starts before */
};

void planner__init(struct planner *pl, const struct planner_ops *ops, uint64_t window_ns);
void planner__set_window(struct planner *pl, uint64_t window_ns);
enum plan_fire planner__fire(struct planner *pl, struct trigger *t, const struct trigger_fire *f,
			     int waiter, enum trigger_admit *why);
int planner__try_freeze(struct planner *pl, uint64_t now);
void planner__freeze_now(struct planner *pl, uint64_t now);
void planner__dump_done(struct planner *pl, const char *reply);
void planner__abort(struct planner *pl, const char *reply);
const struct dump_plan *planner__plan(const struct planner *pl);

#endif /* FR_PLANNER_H */
