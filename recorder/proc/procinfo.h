/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * procinfo.h - what the process table knows about an incarnation beyond
 * its events: executable, command line, cgroup, threads, and the binaries
 * it maps with their symbols.
 *
 * It is read from /proc while the process is alive, on a worker thread so
 * that the drain never waits for /proc, and every read is verified against
 * PID reuse: pidfd first, then the files, then the pidfd must still be
 * alive and /proc/PID/stat field 22 must be the incarnation's start. The
 * result is an immutable, refcounted struct proc_meta hung on the process
 * table entry; it outlives the process, so samples of an exited process
 * still symbolize, even after its binary was deleted or replaced.
 */
#ifndef FR_PROCINFO_H
#define FR_PROCINFO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>
#include <stdint.h>

#include "procmeta.h"
#include "proctable.h"
#include "symbols.h"

struct unwinder;

#define FR_CMDLINE_MAX		4096
#define FR_THREADS_MAX		4096
#define FR_INFO_USER_IPS	4	/* user frames a CHECK request carries */

#define FR_META_MAPS		0x1	/* read maps and load their binaries */
#define FR_META_NO_CMDLINE	0x2	/* [privacy] cmdline = false: never read it */

int proc_meta__read(uint32_t pid, uint64_t start, struct symcache *sc,
		    unsigned what, uint64_t deadline_ns, struct proc_meta **out);

enum procinfo_kind {
	FR_INFO_READ	= 1,	/* running incarnation or exec: read everything, first */
	FR_INFO_CHECK	= 2,	/* new stack: re-read maps if an address is unknown */
	FR_INFO_READ_LATER = 3,	/* the start-up scan: read after the rest */
	FR_INFO_INHERIT	= 4,	/* a fork's child: the parent's image, no /proc read */
	FR_INFO_READ_SOON = 5,	/* an exec: read in FR_INFO_SOON_NS, or at its first
				 * sample; most short-lived processes never cost one */
	FR_INFO_EXIT_MAPS = 6,	/* an exit's mappings: name its frames without /proc */
};

#define FR_INFO_SOON_NS		(3 * 1000 * 1000ULL)
/*
 * A background read may take this many times resolve_timeout before it
 * stops loading binaries: nothing waits for it (a dump waits 50 ms at
 * most), so it gets room for a big program's first read (many libraries,
 * cold caches) while one process still cannot hold back the next ones.
 */
#define FR_PROCINFO_DEADLINE_SCALE	4

struct procinfo_stats {
	uint64_t requests;
	uint64_t dropped;	/* queue full */
	uint64_t reads;		/* completed, verified reads */
	uint64_t gone;		/* the incarnation was gone before it could be read */
	uint64_t exited;	/* requests skipped: the incarnation's exit was drained */
	uint64_t unchanged;	/* parked re-reads skipped: no code changed since the last read */
	uint64_t rereads;	/* maps re-read for an address outside them */
	uint64_t inherited;	/* fork children given their parent's facts */
	uint64_t limited;	/* re-reads skipped by the rate limit */
	uint64_t deadline;	/* reads cut short by resolve_timeout */
	uint64_t deadline_maps;	/* mappings whose binaries were not loaded so */
	uint64_t unwind_attached;	/* unwind tables written */
	uint64_t unwind_stale;	/* tables refused: the maps changed while read */
	uint64_t unwind_deferred;	/* not written: a big file has no rows yet (the attacher's) */
	uint64_t code_eras;	/* images cut in two: code changed without an exec */
	uint64_t loader_rereads;	/* read again in place: code added while ld.so maps */
	/* Exits that sent their code mappings (struct fr_rec_maps): */
	uint64_t exit_maps;		/* whose image they gave (no current read) */
	uint64_t exit_maps_current;	/* not needed: a read of the same code came first */
	uint64_t exit_maps_unnamed;	/* their file mappings the symbol cache did not hold */
};

struct procinfo;

struct procinfo *procinfo__new(struct proctable *pt, struct symcache *sc, size_t queue_len,
			       unsigned what);
void procinfo__free(struct procinfo *pi);
int procinfo__request(struct procinfo *pi, enum procinfo_kind kind, uint32_t slot,
		      uint32_t pid, uint64_t start, const uint64_t *ips, unsigned n);
/*
 * procinfo__exit_maps() - the code mappings an exiting incarnation in slot
 * @slot sent (@rec, a struct fr_rec_maps the drain checked): unless a read
 * of the same code came first, its image becomes one made of them, each
 * file named by the symbol cache's table of that identity (no file is
 * opened: the process is gone). Copies @rec; never waits for the worker.
 * Returns 0 or -EAGAIN (queue full, counted) or -ENOMEM.
 */
int procinfo__exit_maps(struct procinfo *pi, uint32_t slot, const void *rec);
int procinfo__inherit(struct procinfo *pi, uint32_t slot, uint32_t pid, uint64_t start,
		      uint32_t parent_slot, uint32_t parent_pid, uint64_t parent_start);
void procinfo__stats(struct procinfo *pi, struct procinfo_stats *st);
void procinfo__kick(struct procinfo *pi);
void procinfo__set_what(struct procinfo *pi, unsigned what);
void procinfo__set_timeout(struct procinfo *pi, uint64_t timeout_ns);
/*
 * procinfo__set_unwinder() - give every sampled process a table of unwind
 * rows through @uw (NULL: none), from the maps the worker reads; it
 * leaves the rows of big files, and of files being built, to the attacher.
 */
void procinfo__set_unwinder(struct procinfo *pi, struct unwinder *uw);
int procinfo__sync(struct procinfo *pi, uint64_t timeout_ns);

#endif /* FR_PROCINFO_H */
