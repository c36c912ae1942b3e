/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * snapshot.h - the process-state snapshot written into every dump: every
 * live process, listed by the BPF task iterator (exact incarnation start
 * times, stamped with the trace clock), completed from /proc with reads
 * that are checked against PID reuse.
 */
#ifndef FR_SNAPSHOT_H
#define FR_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sampler.h"

#define FR_SNAP_KTHREAD		0x1	/* a kernel thread */
#define FR_SNAP_PROC_OK		0x2	/* /proc fields read and verified */
#define FR_SNAP_GONE		0x4	/* exited before /proc could be read */

#define FR_CMDLINE_MAX		4096

struct snap_proc {
	uint32_t pid;
	uint32_t ppid;
	uint64_t start;		/* ns, CLOCK_BOOTTIME */
	uint64_t seen;		/* ns: when the iterator listed it */
	uint64_t stamp;		/* ns: when /proc was read */
	uint64_t rss;		/* bytes */
	uint32_t flags;		/* FR_SNAP_* */
	uint32_t nthreads;
	char state;		/* /proc state letter */
	char comm[16];
	char *exe;		/* NULL when unreadable (kernel threads) */
	char *cmdline;		/* arguments joined by spaces */
};

struct snapshot {
	struct snap_proc *p;
	size_t n;
	size_t cap;
	uint64_t taken;		/* ns: start of the snapshot */
	uint64_t retries;	/* reads redone because the PID changed hands */
};

int snapshot__take(struct snapshot *s, struct sampler *sm);
void snapshot__free(struct snapshot *s);
int proc_read_verified(struct snap_proc *p);
uint64_t fr_ticks_of(uint64_t start_ns);

#endif /* FR_SNAPSHOT_H */
