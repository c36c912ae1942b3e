/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * drain.h - from BPF records to the window.
 *
 * The drain consumes the BPF ring, interns stacks and strings, resolves each
 * record's incarnation in the process table, and stages the compact events.
 * It keeps the processed-until watermark W: every event the kernel stamped
 * at or before W has been consumed. Staged events are released into the
 * window in timestamp order once W has passed them, so the window is time
 * ordered and lifecycle changes (exit, exec) apply in watermark order.
 */
#ifndef FR_DRAIN_H
#define FR_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"
#include "intern.h"
#include "proctable.h"
#include "ringbuf.h"
#include "window.h"

/* Tags of the string table: what kind of bytes an id names. */
enum fr_str_tag {
	FR_TAG_COMM	= 1,
	FR_TAG_PATH	= 2,
	FR_TAG_EXIT	= 3,	/* struct fr_exit_stats */
	FR_TAG_OOM	= 4,	/* struct fr_oom_info */
	FR_TAG_PRESSURE	= 5,	/* struct fr_pressure_info */
	FR_TAG_MEMSYS	= 6,	/* struct fr_dump_memsys */
	FR_TAG_MEMCG	= 7,	/* struct fr_dump_memcg */
	FR_TAG_STALL	= 8,	/* struct fr_stall_info */
	FR_TAG_STALLSUM	= 9,	/* struct fr_stallsum_info */
};

/* A stall's details, as interned (FR_TAG_STALL); its stack is the event's. */
struct fr_stall_info {
	uint64_t begin;		/* ns */
	uint64_t result;
	uint64_t memcg_id;
	uint32_t gfp;
	int32_t order;
	uint32_t reason;
	uint32_t stack_flags;	/* FR_DSAMPLE_* of its stack, | FR_STALL_INFO_LATER */
	char memcg[256];	/* the memcg's path (hooks.memcg_path), "" if unknown;
				 * interned up to its end */
};

#define FR_STALL_INFO_LATER	0x100	/* its user stack was walked on from a copy */

/* One kind of an incarnation's stalls over about a second (FR_TAG_STALLSUM). */
struct fr_stallsum_info {
	uint64_t n_short, ns_short;
	uint64_t n_lost, ns_lost;
	uint64_t n_all, ns_all;
};

/* One pressure reading (FR_TAG_PRESSURE): avg in 1/100 %, totals in us. */
struct fr_pressure_info {
	uint32_t resource;	/* 0 cpu, 1 memory, 2 io */
	uint32_t has_full;
	uint32_t some_avg10, some_avg60, some_avg300;
	uint32_t full_avg10, full_avg60, full_avg300;
	uint64_t some_total;
	uint64_t full_total;
};

/* Counters of an OOM victim selection, as interned (FR_TAG_OOM). */
struct fr_oom_info {
	uint64_t total_vm;
	uint64_t rss_anon;
	uint64_t rss_file;
	uint64_t rss_shmem;
	uint64_t pgtables;
	int64_t oom_score_adj;
	uint64_t uid;
	uint64_t swapents;
	uint32_t invoker_tid;
	uint32_t pad;
	uint64_t memcg_id;	/* kernfs id of the memcg at its limit, 0: global */
	uint64_t memcg_usage;
	uint64_t memcg_limit;
	char memcg[256];	/* its path (hooks.memcg_path), "" if unknown;
				 * interned up to its end */
};

/* Stack tags: kernel frame count, and the owning process slot (0: none). */
#define FR_STACK_TAG(kn, slot)	((uint32_t)(kn) | (uint32_t)(slot) << 8)
#define FR_STACK_KN(tag)	((tag) & 0xff)
#define FR_STACK_SLOT(tag)	((tag) >> 8)

/* A stamp-to-commit gap longer than this would break the watermark. */
#define FR_DRAIN_SLACK_NS	(2 * 1000 * 1000ULL)

struct drain_stats {
	uint64_t records;	/* records taken from the BPF ring */
	uint64_t by_type[FR_EV_TYPE_MAX + 1];	/* events released, by enum fr_event_type */
	uint64_t bad;		/* malformed or unknown records */
	uint64_t dropped;	/* no space even after evicting the window */
	uint64_t late;		/* released behind the watermark (slack broken) */
	uint64_t forced;	/* staged events released early: staging full */
	uint64_t dup_exits;	/* a second exit for one incarnation */
	uint64_t busy_passes;	/* passes stopped by an uncommitted record */
	/* Samples that carried a copy of their user stack (FR_SAMPLE_UCOPY):
	 * held until their walk is finished with rows, or given up. */
	uint64_t ucopy;		/* received */
	uint64_t ucopy_finished;	/* walked on from the copy with rows */
	uint64_t exit_maps;		/* exits that sent their code mappings */
	uint64_t py_samples;		/* samples with Python frames spliced in */
	uint64_t py_frames;		/* those frames */
	uint64_t py_bad;		/* samples whose Python section was malformed (ignored) */
	uint64_t py_unreadable;		/* samples of an interpreter whose frame chain was unreadable */
	uint64_t ucopy_expired;	/* no rows in time, or never: released as the kernel walked them */
	uint64_t ucopy_gave_up_full;	/* given up early: staging half full behind them */
	uint64_t ucopy_gave_up_dump;	/* given up early: a dump came first */
	uint64_t ucopy_waited;	/* held past 3 s: what may give their rows was under way */
	uint64_t ucopy_refused;	/* not held: the copies held were at their budget */
	uint64_t ucopy_held_max;	/* the most held at once */
};

struct drain_tables {
	struct window *win;
	struct intern *stacks;
	struct intern *strs;
	struct proctable *procs;
};

/* A stack the stack table stored for the first time, as the stack hook sees it. */
struct drain_stack {
	uint32_t id;			/* in the stack table */
	uint32_t tag;			/* FR_STACK_TAG() */
	uint64_t hash;			/* and serial: which entry (intern__identity()) */
	uint32_t serial;
	uint32_t slot;			/* its process: table slot, incarnation */
	uint32_t pid;
	uint64_t start;
	uint64_t ts;			/* the event it came with */
	const uint64_t *ips;		/* kn kernel frames, then un user frames */
	uint32_t kn, un;
};

/*
 * Calls out of the drain, made when a record is staged: a new incarnation
 * seen running (or one that exec'd) whose /proc facts should be read while
 * it lives, a fork's child (its parent's facts are its own until it execs),
 * and a new stack whose user addresses may lie outside the known mappings.
 * They must not block.
 */
struct drain_hooks {
	void *ctx;
	void (*proc)(void *ctx, uint32_t slot, uint32_t pid, uint64_t start, bool exec);
	void (*fork)(void *ctx, uint32_t slot, uint32_t pid, uint64_t start,
		     uint32_t parent_slot, uint32_t parent_pid, uint64_t parent_start);
	/* a stack stored for the first time, and one freed (its last event gone) */
	void (*stack)(void *ctx, const struct drain_stack *s);
	void (*stack_gone)(void *ctx, uint32_t id, uint32_t serial);
	void (*oom)(void *ctx, const void *rec);	/* struct fr_rec_oom */
	/* a sample, stall or block walked by frame pointers: the process has
	 * no unwind table yet */
	void (*no_table)(void *ctx, uint32_t pid, uint64_t start);
	/* the path of memory cgroup @id into @buf ("" if unknown) */
	void (*memcg_path)(void *ctx, uint64_t id, char *buf, size_t len);
	/*
	 * Walk on from a record's copy of its user stack (@c, then @stack):
	 * its frames from user frame c->at on into @ips (at most @max), how
	 * the walk ended into *@end. Returns the count, 0 when the rows are
	 * not there yet (asked again later, for 3 s), -EINPROGRESS when they
	 * are not but what may give them is under way (asked again for 10
	 * s), or another -errno when they never will be (the record is
	 * released as it is). Must not block.
	 */
	int (*finish)(void *ctx, uint32_t pid, uint64_t start, const struct fr_ucopy *c,
		      const void *stack, uint64_t *ips, unsigned max, uint32_t *end);
	/* an exiting incarnation in the process table sent its code mappings
	 * (struct fr_rec_maps at @rec): the daemon had not read them */
	void (*exit_maps)(void *ctx, uint32_t slot, const void *rec);
};

struct drain;

struct drain *drain__new(uint64_t memory_bytes, uint64_t span_ns);
/* drain__free() - free @d and all it holds, calling no hook. Accepts NULL. */
void drain__free(struct drain *d);
void drain__set_hooks(struct drain *d, const struct drain_hooks *h);
int drain__record(struct drain *d, const void *data, size_t len);
void drain__release(struct drain *d, uint64_t watermark);
int drain__add_pressure(struct drain *d, uint64_t ts, const char *source,
			const struct fr_pressure_info *info);
int drain__add_memsys(struct drain *d, uint64_t ts, const struct fr_dump_memsys *m);
int drain__add_memcg(struct drain *d, uint64_t ts, const char *path,
		     const struct fr_dump_memcg *m);
int drain__add_stallsum(struct drain *d, uint64_t ts, uint32_t pid, uint64_t start,
			const char *comm, unsigned kind, const struct fr_stallsum_info *s);
int drain__pump(struct drain *d, struct ringbuf *rb);
int drain__sync(struct drain *d, struct ringbuf *rb, uint64_t until,
		uint64_t timeout_ns);
void drain__settle(struct drain *d);
uint64_t drain__watermark(const struct drain *d);
/*
 * The tables' memory: resident bytes (mincore()) against the bytes their
 * contents need, per table and in all (the staging buffer included).
 */
struct drain_footprint_part {
	uint64_t resident;
	uint64_t live;
	uint64_t shrinks;		/* trims that gave pages back */
	uint64_t released_bytes;	/* what they gave back */
};

struct drain_footprint {
	struct drain_footprint_part window, stacks, strings, procs, stage, all;
};

const struct drain_tables *drain__tables(const struct drain *d);
void drain__footprint(const struct drain *d, struct drain_footprint *out);
const struct drain_stats *drain__stats(const struct drain *d);
size_t drain__staged(const struct drain *d);
size_t drain__held(const struct drain *d);	/* copies waiting for rows now */
uint64_t drain__budget(const struct drain *d);
void drain__hold(struct drain *d);
void drain__release_hold(struct drain *d);

#endif /* FR_DRAIN_H */
