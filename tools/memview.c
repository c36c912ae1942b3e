// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * memview.c - the memory answers of a dump. See memview.h.
 *
 * A process's RSS curve: each member (file, anon, shmem) starts at the
 * first value the window logged of it, or, if the window logged none, at
 * the value known at the end (the snapshot, or the death counters): a
 * member the ledger never logged moved less than the step.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memview.h"

/* The members RSS is made of (swap entries are not resident). */
static bool counts(unsigned m)
{
	return m != FR_DRSS_SWAP;
}

/* The value of member @m at the end when the ledger says nothing of it. */
static uint64_t end_value(const struct fr_dump *d, uint32_t proc, unsigned m)
{
	const struct fr_dump_proc *p = &d->proc[proc];

	if (!p->has_mem)
		return 0;
	switch (m) {
	case FR_DRSS_FILE:
		return p->rss_file;
	case FR_DRSS_ANON:
		return p->rss_anon;
	case FR_DRSS_SHMEM:
		return p->rss_shmem;
	default:
		return p->swap;
	}
}

static int cmp_rise(const void *a, const void *b)
{
	const struct memview_proc *x = a, *y = b;

	if (x->rise != y->rise)
		return x->rise < y->rise ? 1 : -1;
	return x->peak < y->peak ? 1 : x->peak > y->peak ? -1 : 0;
}

/*
 * One point of process @mp's curve at @ts, @total bytes. The rise runs
 * from the running minimum; it starts at the first point above it (the
 * curve is flat from the minimum until then).
 */
static void point(struct memview_proc *mp, uint64_t ts, uint64_t total, uint64_t *run_min,
		  uint64_t *run_min_ts)
{
	if (!mp->points++) {
		mp->first = mp->min = mp->peak = total;
		mp->first_ts = mp->min_ts = mp->peak_ts = ts;
		*run_min = total;
		*run_min_ts = 0;
	}
	if (total < mp->min) {
		mp->min = total;
		mp->min_ts = ts;
	}
	if (total > mp->peak) {
		mp->peak = total;
		mp->peak_ts = ts;
	}
	if (total <= *run_min) {
		*run_min = total;
		*run_min_ts = 0;	/* growth from here starts at the next point above */
	} else if (!*run_min_ts) {
		*run_min_ts = ts;
	}
	if (total - *run_min > mp->rise) {
		mp->rise = total - *run_min;
		mp->rise_from = *run_min_ts;
		mp->rise_to = ts;
	}
	mp->end = total;
	mp->end_ts = ts;
}

static int fold_procs(struct memview *mv, const struct fr_dump *d)
{
	uint64_t (*cur)[FR_DRSS_NMEMBERS] = calloc(d->nproc + 1, sizeof(*cur));
	uint8_t *seen = calloc(d->nproc + 1, 1);	/* bit per member logged */
	uint64_t *run = calloc(2 * (size_t)d->nproc + 2, sizeof(uint64_t));
	uint32_t *slot = calloc(d->nproc + 1, sizeof(uint32_t));
	int err = -ENOMEM;

	mv->procs = calloc(d->nproc + 1, sizeof(*mv->procs));
	if (!cur || !seen || !run || !slot || !mv->procs)
		goto out;
	/* Pass 1: each member's first value in the window. */
	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];

		if (e->type != FR_DEV_RSS || e->proc >= d->nproc)
			continue;
		mv->rss_events++;
		if (!(seen[e->proc] & 1u << e->rss.member)) {
			seen[e->proc] |= 1u << e->rss.member;
			cur[e->proc][e->rss.member] = e->rss.value;
		}
		if (!slot[e->proc]) {
			mv->procs[mv->nprocs].proc = e->proc;
			slot[e->proc] = ++mv->nprocs;
		}
	}
	for (uint32_t k = 0; k < mv->nprocs; k++)
		for (unsigned m = 0; m < FR_DRSS_NMEMBERS; m++)
			if (!(seen[mv->procs[k].proc] & 1u << m))
				cur[mv->procs[k].proc][m] = end_value(d, mv->procs[k].proc, m);
	/* Pass 2: the curves. */
	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];
		struct memview_proc *mp;
		uint64_t total = 0;

		if (e->type != FR_DEV_RSS || e->proc >= d->nproc)
			continue;
		cur[e->proc][e->rss.member] = e->rss.value;
		for (unsigned m = 0; m < FR_DRSS_NMEMBERS; m++)
			if (counts(m))
				total += cur[e->proc][m];
		mp = &mv->procs[slot[e->proc] - 1];
		mp->swap_end = cur[e->proc][FR_DRSS_SWAP];
		point(mp, e->rss.changed, total, &run[2 * e->proc], &run[2 * e->proc + 1]);
	}
	qsort(mv->procs, mv->nprocs, sizeof(*mv->procs), cmp_rise);
	err = 0;
out:
	free(cur);
	free(seen);
	free(run);
	free(slot);
	return err;
}

static int fold_cgroup(struct memview *mv, const struct fr_dump_event *e, uint32_t *cap)
{
	struct memview_cgroup *c = NULL;

	for (uint32_t k = 0; k < mv->ncgroups && !c; k++)
		if (mv->cgroups[k].path == e->comm)
			c = &mv->cgroups[k];
	if (!c) {
		if (mv->ncgroups == *cap) {
			uint32_t n = *cap ? *cap * 2 : 16;
			struct memview_cgroup *g = realloc(mv->cgroups, n * sizeof(*g));

			if (!g)
				return -ENOMEM;
			mv->cgroups = g;
			*cap = n;
		}
		c = &mv->cgroups[mv->ncgroups++];
		memset(c, 0, sizeof(*c));
		c->path = e->comm;
		c->max_first = e->mcg.ev_max;
		c->kill_first = e->mcg.ev_oom_kill;
	}
	c->readings++;
	c->v1 = e->mcg.flags & FR_DMCG_V1;
	c->unlimited = e->mcg.flags & FR_DMCG_UNLIMITED;
	c->usage = e->mcg.usage;
	c->limit = e->mcg.limit;
	if (e->mcg.usage > c->peak)
		c->peak = e->mcg.usage;
	/* Counters only grow; a smaller one is a new cgroup of that path. */
	c->max_events = e->mcg.ev_max >= c->max_first ? e->mcg.ev_max - c->max_first : e->mcg.ev_max;
	c->oom_kills = e->mcg.ev_oom_kill >= c->kill_first ?
		       e->mcg.ev_oom_kill - c->kill_first : e->mcg.ev_oom_kill;
	return 0;
}

/* The index lists (OOM events, system readings) and the cgroups. */
static int fold_readings(struct memview *mv, const struct fr_dump *d)
{
	uint32_t cap = 0;
	int err = 0;

	mv->ooms = calloc(d->nev + 1, sizeof(uint32_t));
	mv->sys = calloc(d->nev + 1, sizeof(uint32_t));
	if (!mv->ooms || !mv->sys)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->nev && !err; i++) {
		const struct fr_dump_event *e = &d->ev[i];

		if (e->type == FR_DEV_OOM)
			mv->ooms[mv->nooms++] = i;
		else if (e->type == FR_DEV_MEMSYS)
			mv->sys[mv->nsys++] = i;
		else if (e->type == FR_DEV_MEMCG)
			err = fold_cgroup(mv, e, &cap);
	}
	return err;
}

int memview__init(struct memview *mv, const struct fr_dump *d)
{
	int err;

	memset(mv, 0, sizeof(*mv));
	mv->trigger_ts = d->ntrig ? d->trig[0].ts : d->win.end;
	err = fold_procs(mv, d);
	if (!err)
		err = fold_readings(mv, d);
	if (err)
		memview__fini(mv);
	return err;
}

void memview__fini(struct memview *mv)
{
	if (!mv)
		return;
	free(mv->procs);
	free(mv->cgroups);
	free(mv->ooms);
	free(mv->sys);
	memset(mv, 0, sizeof(*mv));
}

bool memview__near_limit(const struct memview_cgroup *c)
{
	return !c->unlimited && c->limit && c->usage >= c->limit / 10 * 9;
}

/*
 * memview__curve() - call @fn with each point (@ts, RSS bytes) of dump
 * process @proc's curve, in order; the members start as memview__init()
 * starts them.
 */
void memview__curve(const struct fr_dump *d, uint32_t proc,
		    void (*fn)(void *ctx, uint64_t ts, uint64_t rss), void *ctx)
{
	uint64_t cur[FR_DRSS_NMEMBERS];
	unsigned seen = 0;

	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];

		if (e->type == FR_DEV_RSS && e->proc == proc && !(seen & 1u << e->rss.member)) {
			seen |= 1u << e->rss.member;
			cur[e->rss.member] = e->rss.value;
		}
	}
	for (unsigned m = 0; m < FR_DRSS_NMEMBERS; m++)
		if (!(seen & 1u << m))
			cur[m] = end_value(d, proc, m);
	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];
		uint64_t total = 0;

		if (e->type != FR_DEV_RSS || e->proc != proc)
			continue;
		cur[e->rss.member] = e->rss.value;
		for (unsigned m = 0; m < FR_DRSS_NMEMBERS; m++)
			if (counts(m))
				total += cur[m];
		fn(ctx, e->rss.changed, total);
	}
}

static int cmp_site(const void *a, const void *b)
{
	const struct memview_site *x = a, *y = b;

	return x->grown != y->grown ? (x->grown < y->grown ? 1 : -1) :
	       x->stack < y->stack ? -1 : x->stack > y->stack;
}

uint32_t memview__sites(const struct fr_dump *d, uint32_t proc, struct memview_site *out,
			uint32_t max)
{
	struct memview_site *all = NULL;
	uint32_t n = 0, cap = 0, k;

	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];

		if (e->type != FR_DEV_RSS_SITE || e->proc != proc)
			continue;
		for (k = 0; k < n && all[k].stack != e->stack; k++)
			;
		if (k == n) {
			if (n == cap) {
				struct memview_site *m = realloc(all, (cap ? 2 * cap : 16) * sizeof(*m));

				if (!m)
					break;	/* what was summed so far */
				all = m;
				cap = cap ? 2 * cap : 16;
			}
			all[n++] = (struct memview_site){ e->stack, 0, 0 };
		}
		all[k].steps++;
		all[k].grown += e->site.grown;
	}
	if (n)
		qsort(all, n, sizeof(*all), cmp_site);
	n = n < max ? n : max;
	if (n)
		memcpy(out, all, n * sizeof(*out));
	free(all);
	return n;
}
