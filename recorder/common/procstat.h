/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * procstat.h - the few fields of /proc/PID/stat that tell one incarnation
 * of a PID from another, and whether it still runs: for the /proc worker
 * (proc/) and the unwind tables (unwind/), which sit on different floors.
 */
#ifndef FR_PROCSTAT_H
#define FR_PROCSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct fr_procstat {
	char state;		/* field 3 */
	uint32_t ppid;		/* 4 */
	uint32_t flags;		/* 9: the kernel's PF_* */
	uint32_t num_threads;	/* 20 */
	uint64_t start_ticks;	/* 22: clock ticks since boot */
	uint64_t vsize;		/* 23: bytes; 0 once the mm is gone */
	uint64_t rss_pages;	/* 24 */
};

/* fr_read_small() - a whole small file into @buf (NUL-terminated); bytes or -errno. */
ssize_t fr_read_small(const char *path, char *buf, size_t cap);

/* fr_procstat__read() - parse /proc/@pid/stat (its comm may hold spaces and ')'). 0 or -errno. */
int fr_procstat__read(uint32_t pid, struct fr_procstat *f);

/* fr_ticks_of() - a start time in ns as /proc/PID/stat field 22 shows it. */
uint64_t fr_ticks_of(uint64_t start_ns);

/*
 * fr_procstat__gone() - has incarnation (@pid, @start) exited, as far as
 * the kernel's exit path goes before its sched_process_exit tracepoint?
 * True when the PID is gone or names another incarnation, or when the
 * mm is gone (exit_mm() comes before the tracepoint) with no other thread
 * left; false while it runs. Read after an update the exit tracepoint
 * would undo, it tells whether that tracepoint ran already.
 */
bool fr_procstat__gone(uint32_t pid, uint64_t start);

#endif /* FR_PROCSTAT_H */
