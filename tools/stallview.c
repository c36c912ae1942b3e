// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stallview.c - the stall answers of a dump. See stallview.h.
 *
 * Recorded stalls come from the stall and offcpu events, each with its
 * stack; the stallsum events add, per incarnation and kind, the stalls
 * too short to be recorded and the recorded ones the ring lost. A
 * stallsum's all-count includes the recorded ones, so a kind's time is
 * recorded + short + lost, and all-count is only kept to check that sum.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stallview.h"
#include "util.h"

uint64_t stallview__time(const struct stallview_kind *k)
{
	return k->ns + k->ns_short + k->ns_lost;
}

uint64_t stallview__count(const struct stallview_kind *k)
{
	return k->n + k->n_short + k->n_lost;
}

const char *stallview__psi_note(void)
{
	return "PSI's some is the wall time during which at least one task stalled on memory, "
	       "each CPU's share weighted by how busy that CPU was (one stalled task among N "
	       "busy CPUs counts about 1/N), and it includes waits for evicted pages, which are "
	       "blocked time here, while the sum adds up every thread's reclaim and compaction "
	       "time: the two measure different things and need not agree.";
}

static bool is_mem(unsigned kind)
{
	return kind == FR_DSTALL_RECLAIM || kind == FR_DSTALL_MEMCG || kind == FR_DSTALL_COMPACT;
}

/* Keep @stack among @k's top stacks by time (it was seen with @ns more). */
static void top_add(struct stallview_kind *k, uint32_t stack, uint64_t n, uint64_t ns)
{
	uint32_t i;

	for (i = 0; i < k->ntop && k->top[i].stack != stack; i++)
		;
	if (i == k->ntop) {
		if (k->ntop < FR_STALLVIEW_STACKS) {
			k->ntop++;
		} else if (k->top[i - 1].ns < ns) {
			i--;
		} else {
			return;
		}
		k->top[i] = (struct stallview_stack){ stack, 0, 0 };
	}
	k->top[i].n += n;
	k->top[i].ns += ns;
	while (i > 0 && k->top[i].ns > k->top[i - 1].ns) {
		struct stallview_stack t = k->top[i];

		k->top[i] = k->top[i - 1];
		k->top[--i] = t;
	}
}

/*
 * Pass over the stack sums: a bounded top-N by running time is not exact
 * (a stack seen late can miss the cut), so sum per (process, kind, stack)
 * first, then keep the top.
 */
struct stack_sum {
	uint32_t proc, kind, stack;
	uint64_t n, ns;
};

static int cmp_stack_sum(const void *a, const void *b)
{
	const struct stack_sum *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_total(const void *a, const void *b)
{
	const struct stallview_proc *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return x->proc < y->proc ? -1 : x->proc > y->proc;
}

/* The recorded stall or block @e: its kind, begin and stack. */
static bool recorded(const struct fr_dump_event *e, unsigned *kind, uint64_t *begin)
{
	if (e->type == FR_DEV_STALL) {
		*kind = e->stall.kind;
		*begin = e->stall.begin;
		return true;
	}
	if (e->type == FR_DEV_OFFCPU) {
		*kind = e->off.kind;
		*begin = e->off.begin;
		return true;
	}
	return false;
}

/* The system's memory pressure readings: the first and last of the window. */
static void psi_span(struct stallview *sv, const struct fr_dump *d)
{
	const struct fr_dump_event *first = NULL, *last = NULL;

	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];

		if (e->type != FR_DEV_PRESSURE || e->psi.resource != 1 || *dump__str(d, e->comm))
			continue;
		if (!first)
			first = e;
		last = e;
	}
	if (!first || first == last)
		return;
	sv->has_psi = true;
	sv->psi_from = first->ts;
	sv->psi_to = last->ts;
	sv->psi_some_us = last->psi.some_total - FR_MIN(first->psi.some_total, last->psi.some_total);
	sv->psi_full_us = last->psi.full_total - FR_MIN(first->psi.full_total, last->psi.full_total);
}

/* Fold the events into per-process kinds; the stack sums go to @ss. */
static int fold(struct stallview *sv, const struct fr_dump *d, const struct filter *flt,
		struct stallview_proc *by_proc, struct stack_sum *ss, uint32_t *nss)
{
	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];
		struct stallview_kind *k;
		unsigned kind = FR_DSTALL_NKINDS;
		uint64_t begin = 0, dur;

		if ((e->type != FR_DEV_STALL && e->type != FR_DEV_OFFCPU &&
		     e->type != FR_DEV_STALLSUM) || e->proc >= d->nproc ||
		    (flt && !filter__match(flt, d, e)))
			continue;
		sv->recorded = true;
		if (e->type == FR_DEV_STALLSUM) {
			k = &by_proc[e->proc].k[e->ssum.kind];
			k->n_short += e->ssum.n_short;
			k->ns_short += e->ssum.ns_short;
			k->n_lost += e->ssum.n_lost;
			k->ns_lost += e->ssum.ns_lost;
			k->n_all += e->ssum.n_all;
			k->ns_all += e->ssum.ns_all;
			if (sv->has_psi && is_mem(e->ssum.kind) && e->ts > sv->psi_from &&
			    e->ts <= sv->psi_to)
				sv->mem_ns += e->ssum.ns_short + e->ssum.ns_lost;
			continue;
		}
		if (!recorded(e, &kind, &begin) || kind >= FR_DSTALL_NKINDS)
			continue;
		dur = e->ts - begin;
		k = &by_proc[e->proc].k[kind];
		k->n++;
		k->ns += dur;
		if (dur > k->max_ns)
			k->max_ns = dur;
		if (sv->has_psi && is_mem(kind) && e->ts > sv->psi_from && e->ts <= sv->psi_to)
			sv->mem_ns += dur;
		if (e->stack)
			ss[(*nss)++] = (struct stack_sum){ e->proc, kind, e->stack, 1, dur };
	}
	return 0;
}

/* Merge equal (process, kind, stack) sums and keep each kind's top stacks. */
static void tops(struct stallview_proc *by_proc, struct stack_sum *ss, uint32_t nss)
{
	uint32_t i = 0;

	qsort(ss, nss, sizeof(*ss), cmp_stack_sum);
	while (i < nss) {
		struct stack_sum acc = ss[i++];

		while (i < nss && !cmp_stack_sum(&acc, &ss[i])) {
			acc.n += ss[i].n;
			acc.ns += ss[i++].ns;
		}
		top_add(&by_proc[acc.proc].k[acc.kind], acc.stack, acc.n, acc.ns);
	}
}

int stallview__init(struct stallview *sv, const struct fr_dump *d, const struct filter *flt)
{
	struct stallview_proc *by_proc = calloc(d->nproc + 1, sizeof(*by_proc));
	struct stack_sum *ss = calloc(d->nev + 1, sizeof(*ss));
	uint32_t nss = 0;

	memset(sv, 0, sizeof(*sv));
	if (!by_proc || !ss) {
		free(by_proc);
		free(ss);
		return -ENOMEM;
	}
	psi_span(sv, d);
	fold(sv, d, flt, by_proc, ss, &nss);
	tops(by_proc, ss, nss);
	free(ss);
	for (uint32_t p = 0; p < d->nproc; p++) {
		struct stallview_proc *sp = &by_proc[p];

		sp->proc = p;
		for (unsigned k = 0; k < FR_DSTALL_NKINDS; k++) {
			sp->total_ns += stallview__time(&sp->k[k]);
			sv->kind_n[k] += stallview__count(&sp->k[k]);
			sv->kind_ns[k] += stallview__time(&sp->k[k]);
		}
		if (sp->total_ns)
			by_proc[sv->nprocs++] = *sp;
	}
	qsort(by_proc, sv->nprocs, sizeof(*by_proc), cmp_total);
	sv->procs = by_proc;
	return 0;
}

void stallview__fini(struct stallview *sv)
{
	if (!sv)
		return;
	free(sv->procs);
	sv->procs = NULL;
	sv->nprocs = 0;
}
