// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * planner.c - from trigger firings to dumps. See planner.h.
 */
#include <string.h>

#include "planner.h"
#include "util.h"

/*
 * planner__init() - an idle planner reaching the world through @ops; a
 * trigger without a pre covers @window_ns before it.
 */
void planner__init(struct planner *pl, const struct planner_ops *ops, uint64_t window_ns)
{
	memset(pl, 0, sizeof(*pl));
	pl->ops = *ops;
	pl->window_ns = window_ns;
}

/* planner__set_window() - the [recorder] window changed (a reload). */
void planner__set_window(struct planner *pl, uint64_t window_ns)
{
	pl->window_ns = window_ns;
}

const struct dump_plan *planner__plan(const struct planner *pl)
{
	return &pl->plan;
}

/* Hold time eviction at the earliest window index the plan or a dump needs. */
static void update_pin(struct planner *pl)
{
	uint64_t pin = FR_NO_PIN;

	if (pl->plan.active)
		pin = pl->plan.pin;
	if (pl->ops.busy(pl->ops.ctx))
		pin = FR_MIN(pin, pl->writing_pin);
	pl->ops.pin(pl->ops.ctx, pin);
}

static void reply_all(struct planner *pl, const int *ids, uint32_t n, const char *text)
{
	for (uint32_t i = 0; i < n; i++)
		if (ids[i])
			pl->ops.reply(pl->ops.ctx, ids[i], text);
}

static uint64_t start_of(const struct planner *pl, const struct trigger_fire *f,
			 const struct trigger_policy *pol)
{
	uint64_t pre = pol->pre_ns ? pol->pre_ns : pl->window_ns;

	return f->ts > pre ? f->ts - pre : 0;
}

/* Add an admitted fire to the plan, starting one if none collects. */
static void plan_add(struct planner *pl, const struct trigger_fire *f,
		     const struct trigger_policy *pol, int waiter)
{
	struct dump_plan *p = &pl->plan;
	uint64_t start = start_of(pl, f, pol);

	if (!p->active) {
		memset(p, 0, sizeof(*p));
		p->active = true;
		p->start = start;
		p->freeze = f->ts + pol->post_ns;
		p->limit = p->freeze + FR_MERGE_EXTEND_NS;
		p->pin = pl->ops.lower_bound(pl->ops.ctx, start);
	} else {
		if (start < p->start) {
			p->start = start;
			p->pin = pl->ops.lower_bound(pl->ops.ctx, start);
		}
		p->freeze = FR_MIN(FR_MAX(p->freeze, f->ts + pol->post_ns), p->limit);
	}
	if (p->nfires < FR_PLAN_FIRES)
		p->fires[p->nfires++] = *f;
	else
		p->merged++;
	if (waiter && p->nwaiters < FR_CONTROL_CLIENTS)
		p->waiters[p->nwaiters++] = waiter;
	update_pin(pl);
	pl->ops.arm(pl->ops.ctx, p->freeze);
}

/* Fires that came after the plan's merge limit start the next plan. */
static void replay_later(struct planner *pl)
{
	uint32_t n = pl->nlater;

	pl->nlater = 0;
	for (uint32_t i = 0; i < n; i++)
		plan_add(pl, &pl->later[i], &pl->later_pol[i], pl->later_waiter[i]);
}

/*
 * planner__fire() - trigger @t fired (@f). Applies its cooldown and
 * max_per_hour (*@why says which refused it), then adds it to the plan,
 * starting one if none collects; a firing past the collecting plan's merge
 * limit waits for the next plan. @waiter is a control client owed the
 * dump's path, or 0: it is answered with an error at once if the firing
 * goes nowhere. The caller calls planner__try_freeze() next.
 */
enum plan_fire planner__fire(struct planner *pl, struct trigger *t, const struct trigger_fire *f,
			     int waiter, enum trigger_admit *why)
{
	struct dump_plan *p = &pl->plan;
	bool merging = p->active;

	*why = trigger__admit(t, f);
	if (*why != FR_ADMIT_OK) {
		reply_all(pl, &waiter, 1, "error trigger refused by its policy\n");
		return FR_PLAN_REFUSED;
	}
	if (p->active && f->ts > p->limit) {
		if (pl->nlater == FR_PLAN_LATER) {
			reply_all(pl, &waiter, 1, "error too many triggers waiting\n");
			return FR_PLAN_FULL;
		}
		pl->later[pl->nlater] = *f;
		pl->later_pol[pl->nlater] = t->pol;
		pl->later_waiter[pl->nlater++] = waiter;
		return FR_PLAN_NEXT;
	}
	plan_add(pl, f, &t->pol, waiter);
	return merging ? FR_PLAN_MERGED : FR_PLAN_STARTED;
}

/*
 * planner__try_freeze() - if the plan's freeze instant has come (@now), no
 * dump is being written and the last dump started FR_DUMP_GAP_NS ago,
 * start the plan's dump and begin the next plan with the firings that
 * waited for it. Returns 0 (started, or not due: a timer is armed for
 * when it is) or the start's -errno (its waiters were answered).
 */
int planner__try_freeze(struct planner *pl, uint64_t now)
{
	struct dump_plan *p = &pl->plan;
	uint64_t first = 0;
	int err;

	if (!p->active || pl->ops.busy(pl->ops.ctx) || now < p->freeze)
		return 0;
	if (now < pl->next_start) {
		pl->ops.arm(pl->ops.ctx, pl->next_start);
		return 0;
	}
	pl->next_start = now + FR_DUMP_GAP_NS;
	err = pl->ops.start(pl->ops.ctx, p, &first);
	if (err) {
		reply_all(pl, p->waiters, p->nwaiters, "error failed to start the dump\n");
		p->active = false;
		update_pin(pl);
		return err;
	}
	pl->writing_pin = first;
	memcpy(pl->writing_waiters, p->waiters, p->nwaiters * sizeof(p->waiters[0]));
	pl->nwriting = p->nwaiters;
	p->active = false;
	update_pin(pl);
	replay_later(pl);
	return 0;
}

/*
 * planner__freeze_now() - stopping: a collecting plan freezes at @now
 * rather than at the end of its post window, and without the storm gap.
 */
void planner__freeze_now(struct planner *pl, uint64_t now)
{
	if (!pl->plan.active)
		return;
	pl->plan.freeze = FR_MIN(pl->plan.freeze, now);
	pl->next_start = 0;
}

/*
 * planner__dump_done() - the dump being written ended: answer its waiters
 * with @reply and release its pin. The caller calls planner__try_freeze()
 * next unless it is stopping.
 */
void planner__dump_done(struct planner *pl, const char *reply)
{
	update_pin(pl);
	reply_all(pl, pl->writing_waiters, pl->nwriting, reply);
	pl->nwriting = 0;
}

/*
 * planner__abort() - stopping: the plan that never froze and the firings
 * waiting for the next are answered with @reply and dropped.
 */
void planner__abort(struct planner *pl, const char *reply)
{
	reply_all(pl, pl->later_waiter, pl->nlater, reply);
	pl->nlater = 0;
	if (!pl->plan.active)
		return;
	reply_all(pl, pl->plan.waiters, pl->plan.nwaiters, reply);
	pl->plan.active = false;
	update_pin(pl);
}
