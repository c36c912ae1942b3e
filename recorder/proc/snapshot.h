/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * snapshot.h - the process-state snapshot written into every dump (the
 * I-frame): every live process, listed by the BPF task iterator (exact
 * incarnation start times, stamped with the trace clock), completed from
 * /proc with reads verified against PID reuse (procinfo.h).
 */
#ifndef FR_SNAPSHOT_H
#define FR_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "procinfo.h"
#include "sampler.h"

#define FR_SNAP_KTHREAD		0x1	/* a kernel thread */
#define FR_SNAP_GONE		0x2	/* exited before /proc could be read */

struct snap_proc {
	uint32_t pid;
	uint32_t ppid;
	uint64_t start;		/* ns, CLOCK_BOOTTIME */
	uint64_t seen;		/* ns: when the iterator listed it */
	uint32_t flags;		/* FR_SNAP_* */
	uint32_t nthreads;
	char comm[16];
	bool has_mem;		/* the iterator read its mm */
	int32_t oom_score_adj;
	uint64_t rss[FR_RSS_NMEMBERS];	/* bytes, kernel counters (contract.h) */
	uint64_t pgtables;	/* bytes */
	struct proc_meta *meta;	/* verified /proc facts; NULL if none */
};

struct snapshot {
	struct snap_proc *p;
	size_t n;
	size_t cap;
	uint64_t taken;		/* ns: start of the snapshot */
};

int snapshot__take(struct snapshot *s, struct sampler *sm, unsigned what);
void snapshot__free(struct snapshot *s);

#endif /* FR_SNAPSHOT_H */
