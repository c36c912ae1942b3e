/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stallview.h - who was stuck, where and for how long: a dump's stalls
 * (the stall and offcpu events, and the stallsum sums of the ones too
 * short to be recorded one by one) folded per incarnation and kind, with
 * the stacks that stalled longest, and the window's PSI memory stall time
 * to set beside them. Shared by `stalls`, `show` and the report.
 *
 * The kinds overlap: a throttle happens inside a reclaim, and a reclaim
 * or compaction that sleeps is also blocked time. A process's total (the
 * ranking) adds its kinds up, so such time counts twice there.
 */
#ifndef FR_STALLVIEW_H
#define FR_STALLVIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "filter.h"
#include "format.h"

#define FR_STALLVIEW_STACKS	3	/* top stacks kept per incarnation and kind */

struct stallview_stack {
	uint32_t stack;		/* stack index + 1 */
	uint64_t n, ns;		/* recorded stalls with this stack, their time */
};

struct stallview_kind {
	uint64_t n, ns;		/* recorded one by one (stall, offcpu events) */
	uint64_t max_ns;	/* the longest recorded */
	uint64_t n_short, ns_short;	/* summed only: below the threshold */
	uint64_t n_lost, ns_lost;	/* recorded but lost by the ring */
	uint64_t n_all, ns_all;	/* every stall the kernel side saw (stallsum) */
	struct stallview_stack top[FR_STALLVIEW_STACKS];	/* longest first */
	uint32_t ntop;
};

struct stallview_proc {
	uint32_t proc;		/* process index */
	struct stallview_kind k[FR_DSTALL_NKINDS];
	uint64_t total_ns;	/* the kinds' times added up: the ranking */
};

struct stallview {
	struct stallview_proc *procs;	/* by total_ns, most first */
	uint32_t nprocs;
	uint64_t kind_n[FR_DSTALL_NKINDS];	/* every stall of the window, per kind */
	uint64_t kind_ns[FR_DSTALL_NKINDS];
	bool recorded;		/* the dump has stall events or sums (1.5, stalls on) */
	/* /proc/pressure/memory over the window: its first and last reading */
	bool has_psi;
	uint64_t psi_from, psi_to;	/* ns */
	uint64_t psi_some_us, psi_full_us;	/* the totals' growth */
	uint64_t mem_ns;	/* reclaim + memcg + compaction stalls between those readings */
};

/*
 * stallview__init() - fold the events of @d that @flt keeps (NULL: all).
 * A stall's time is the whole of its kind's time (recorded, short and
 * lost). Returns 0 or -ENOMEM.
 */
int stallview__init(struct stallview *sv, const struct fr_dump *d, const struct filter *flt);
void stallview__fini(struct stallview *sv);

/* stallview__time() - an incarnation's time of @kind: recorded + short + lost. */
uint64_t stallview__time(const struct stallview_kind *k);
/* stallview__count() - its count of @kind, likewise. */
uint64_t stallview__count(const struct stallview_kind *k);

/* stallview__psi_note() - the one sentence that says how PSI and the sum differ. */
const char *stallview__psi_note(void);

#endif /* FR_STALLVIEW_H */
