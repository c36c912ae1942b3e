/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proctable.h - the process table: one entry per incarnation (pid, start),
 * never per PID.
 *
 * Entries are referenced by the window's events. An entry whose process
 * exited is freed when its last event leaves the window; since an exit is
 * marked only when the drain releases the exit event (in watermark order),
 * that is exactly "the watermark passed its exit and none of its events
 * remain". Slots are taken lowest first, and the pages the need left are
 * given back after a while (proctable__trim()). One writer thread (the drain). Readers copy entries under the
 * table's lock and hold the table while they keep slot numbers, which
 * defers frees.
 */
#ifndef FR_PROCTABLE_H
#define FR_PROCTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FR_PROC_EXITED		0x1	/* exit event released to the window */
#define FR_PROC_FORKED		0x2	/* fork seen */
#define FR_PROC_EXECED		0x4	/* exec seen */
#define FR_PROC_EXIT_READ	0x8	/* exit record read, not yet released */

struct fr_proc {
	uint64_t start;		/* group leader start_boottime, ns */
	uint64_t exit_ts;	/* CLOCK_BOOTTIME ns, 0 while alive */
	uint32_t pid;
	uint32_t ppid;		/* 0 when unknown */
	int32_t exit_code;
	uint32_t flags;		/* FR_PROC_* */
	char comm[16];
};

struct proctable_stats {
	uint64_t live;		/* entries in use */
	uint64_t capacity;
	uint64_t created;
	uint64_t freed;
	uint64_t full;		/* creations refused: table full */
	uint64_t shrinks;	/* trims that gave pages back */
	uint64_t pages_released;
	uint64_t release_failed;
};

struct proctable;
struct proc_meta;

/* The references of the facts hung on entries (proc_meta, owned by the
 * proc stage): the table takes and drops them through these. */
struct proctable_meta_ops {
	void (*get)(struct proc_meta *m);
	void (*put)(struct proc_meta *m);
};

struct proctable *proctable__new(size_t max_entries);
void proctable__set_meta_ops(struct proctable *pt, const struct proctable_meta_ops *ops);
void proctable__free(struct proctable *pt);
size_t proctable__budget(size_t max_entries);

/* Writer side. */
int proctable__get(struct proctable *pt, uint32_t pid, uint64_t start,
		   const char *comm, uint32_t *slot);
int proctable__find(const struct proctable *pt, uint32_t pid, uint64_t start,
		    uint32_t *slot);
void proctable__ref(struct proctable *pt, uint32_t slot);
void proctable__unref(struct proctable *pt, uint32_t slot);
void proctable__set_comm(struct proctable *pt, uint32_t slot, const char *comm);
void proctable__set_parent(struct proctable *pt, uint32_t slot, uint32_t ppid);
void proctable__mark_exec(struct proctable *pt, uint32_t slot, const char *comm);
void proctable__mark_exit(struct proctable *pt, uint32_t slot, uint64_t ts,
			  int32_t code);
void proctable__mark_exit_read(struct proctable *pt, uint32_t slot);
void proctable__hold(struct proctable *pt);
void proctable__release(struct proctable *pt);
void proctable__stats(const struct proctable *pt, struct proctable_stats *st);
void proctable__footprint(const struct proctable *pt, uint64_t *resident, uint64_t *live);
void proctable__trim(struct proctable *pt, uint64_t now);

/* Any thread: copy an entry, or take its /proc facts, under the table lock. */
int proctable__read(struct proctable *pt, uint32_t slot, struct fr_proc *out);
int proctable__lookup(struct proctable *pt, uint32_t pid, uint64_t start, uint32_t *slot);
struct proc_meta *proctable__meta(struct proctable *pt, uint32_t slot, uint32_t pid,
				  uint64_t start);
int proctable__set_meta(struct proctable *pt, uint32_t slot, uint32_t pid,
			uint64_t start, struct proc_meta *m, uint64_t begun);
struct proc_meta *proctable__meta_at(struct proctable *pt, uint32_t slot, uint32_t pid,
				     uint64_t start, uint64_t ts, uint64_t *era);
void proctable__each_meta(struct proctable *pt, void (*fn)(void *ctx, const struct proc_meta *m),
			  void *ctx);
void proctable__each_live_meta(struct proctable *pt,
			       void (*fn)(void *ctx, const struct proc_meta *m), void *ctx);
void proctable__exec(struct proctable *pt, uint32_t slot, uint64_t ts);
bool proctable__exited(struct proctable *pt, uint32_t slot, uint32_t pid, uint64_t start);
int proctable__loading(struct proctable *pt, uint32_t slot, uint32_t pid, uint64_t start,
		       uint64_t ts);
int proctable__new_era(struct proctable *pt, uint32_t slot, uint32_t pid, uint64_t start,
		       uint64_t ts);

#endif /* FR_PROCTABLE_H */
