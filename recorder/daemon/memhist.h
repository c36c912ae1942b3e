/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memhist.h - the memory history: once a second, the system's memory
 * (/proc/meminfo, /proc/vmstat) and the usage, limit and events of the
 * memory cgroups that matter (PSI-watched ones, then those of the
 * processes the tables hold) go into the window, so a dump shows what led
 * up to the pressure.
 */
#ifndef FR_MEMHIST_H
#define FR_MEMHIST_H

#include <stdint.h>
#include "config.h"
#include "drain.h"

struct memhist_stats {
	uint64_t reads;		/* seconds read */
	uint64_t memcgs;	/* cgroup readings added */
	uint64_t skipped;	/* cgroups beyond [memory] cgroups, not read */
	uint64_t failed;	/* cgroup reads that failed (the cgroup went away) */
	uint32_t last_count;	/* cgroups read in the last second */
};

struct memhist {
	char **watched;		/* PSI-watched cgroups, as memory-hierarchy paths */
	size_t nwatched;
	uint32_t max;		/* [memory] cgroups */
	struct memhist_stats st;
};

/* memhist__init() - from @cfg's [memory] and PSI triggers. Returns 0 or -ENOMEM. */
int memhist__init(struct memhist *mh, const struct fr_config *cfg);
void memhist__fini(struct memhist *mh);
const struct memhist_stats *memhist__stats(const struct memhist *mh);
/* memhist__tick() - once a second: the readings into @d's window. */
void memhist__tick(struct memhist *mh, struct drain *d);

#endif /* FR_MEMHIST_H */
