/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * meminfo.h - the system's memory as /proc/meminfo and /proc/vmstat give
 * it: what is available, and the counters that explain pressure (scans,
 * steals, direct-reclaim stalls, refaults, swap, OOM kills).
 */
#ifndef FR_MEMINFO_H
#define FR_MEMINFO_H

#include "format.h"

/* meminfo__read() - fill @out (format.h). Returns 0, or -errno of /proc/meminfo. */
int meminfo__read(struct fr_dump_memsys *out);

#endif /* FR_MEMINFO_H */
