/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memview.h - who ate the memory: a dump's RSS ledger folded into one curve
 * per incarnation (file + anon + shmem, as the kernel counts RSS), the
 * largest rise of each, the memory cgroups near their limit, the OOM
 * dossiers and the system's memory curve. Shared by `memory`, `show` and
 * the report.
 */
#ifndef FR_MEMVIEW_H
#define FR_MEMVIEW_H

#include <stdbool.h>
#include <stdint.h>
#include "format.h"

struct memview_proc {
	uint32_t proc;		/* process index */
	uint32_t points;	/* ledger entries seen */
	uint64_t first, min, peak, end;	/* bytes of RSS */
	uint64_t first_ts, min_ts, peak_ts, end_ts;
	uint64_t rise;		/* the largest rise: a value minus an earlier minimum */
	uint64_t rise_from, rise_to;	/* ns: when the rise started and ended */
	uint64_t swap_end;	/* bytes of swap entries at the end */
};

struct memview_cgroup {
	uint32_t path;		/* string index */
	bool v1, unlimited;
	uint64_t usage, limit;	/* the last reading */
	uint64_t peak;		/* the highest usage read */
	uint64_t max_events, oom_kills;	/* growth over the window */
	uint64_t max_first, kill_first;	/* the first reading's counters */
	uint32_t readings;
};

struct memview {
	struct memview_proc *procs;	/* with ledger entries, by rise, largest first */
	uint32_t nprocs;
	struct memview_cgroup *cgroups;
	uint32_t ncgroups;
	uint32_t *ooms;		/* event indexes of the OOM events */
	uint32_t nooms;
	uint32_t *sys;		/* event indexes of the system readings */
	uint32_t nsys;
	uint64_t rss_events;
	uint64_t trigger_ts;	/* the first trigger's time, else the window's end */
};

/* memview__init() - fold @d. Returns 0 or -ENOMEM. */
int memview__init(struct memview *mv, const struct fr_dump *d);
void memview__fini(struct memview *mv);

/* memview__near_limit() - whether cgroup @c's last usage is at least 90 % of its limit. */
bool memview__near_limit(const struct memview_cgroup *c);

void memview__curve(const struct fr_dump *d, uint32_t proc,
		    void (*fn)(void *ctx, uint64_t ts, uint64_t rss), void *ctx);

/* Where an incarnation's memory grew (1.8): one stack and what grew there. */
struct memview_site {
	uint32_t stack;		/* stack index + 1 (0: the growth had no stack) */
	uint32_t steps;		/* rss_site events */
	uint64_t grown;		/* bytes they add up to */
};

/*
 * memview__sites() - the stacks where process @proc's own threads grew
 * its memory, most bytes first, at most @max into @out. Returns how many.
 */
uint32_t memview__sites(const struct fr_dump *d, uint32_t proc, struct memview_site *out,
			uint32_t max);

#endif /* FR_MEMVIEW_H */
