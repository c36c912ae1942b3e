/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * stall.bpf.h - the waiting side of the kernel: who stalled in reclaim or
 * compaction, and who was off the CPU blocked, for how long and where.
 * Included by flightrec.bpf.c after memory.bpf.h (it uses count,
 * fill_hdr, leader_start, wakeup_flag, the unwinder and memcg_at_limit).
 *
 * Reclaim and compaction (stall_on): a begin tracepoint notes the time in
 * the thread's task storage, the end computes the stall. The stack is
 * taken at the end, only for a stall that is recorded: the begin and end
 * tracepoints of each kind sit in one function (try_to_free_pages,
 * try_to_free_mem_cgroup_pages, compact_zone), and the thread does not
 * return to user space in between, so the kernel stack above that
 * function and the whole user stack are the ones the stall began with.
 * A throttle has one tracepoint, after the sleep, with its length.
 *
 * Off the CPU (offcpu_on): sched_switch, in the context of the thread
 * leaving, notes the time and state of a thread that blocks in D (or, with
 * offcpu_sleep, S), keyed by tid since it may come back on another CPU,
 * and captures its user stack then, the only moment it can be read (user
 * memory is the current task's). When the thread is switched back in, its
 * kernel stack is still the one it blocked with: bpf_get_task_stack()
 * reads it there, for a block that is recorded only. So the capture is
 * gated: nothing for a preemption or an S sleep (the bulk of switches)
 * unless offcpu_sleep asks for them, no user stack for a kernel thread,
 * and no kernel stack for a short block.
 *
 * Each stall below the threshold is summed per incarnation and kind in
 * stall_sum (contract.h: struct fr_stall_sum), as is each one whose record
 * the full ring refused, and every one of them: nothing is dropped
 * without a count. The maps the sched_switch program writes are hashes
 * keyed by tid with preallocated or bpf_mem_alloc'ed elements: it runs
 * under the runqueue lock, where task storage's allocation may not be
 * made.
 */
#ifndef FR_STALL_BPF_H
#define FR_STALL_BPF_H

#define FR_TASK_INTERRUPTIBLE	0x0001
#define FR_TASK_UNINTERRUPTIBLE	0x0002
#define FR_TASK_NOLOAD		0x0400	/* TASK_IDLE: an idle kernel thread, not a wait */
#define FR_TASK_FROZEN		0x8000

#define FR_OFF_TASKS		16384	/* threads off the CPU at once, tracked */
#define FR_OFF_STACKS		4096	/* of those, with a user stack held */
#define FR_STALL_SUMS		32768	/* incarnations with stall sums */

/* Settings ([stalls]), written by the daemon before load. */
const volatile __u8 stall_on = 0;		/* reclaim, compaction, throttle */
const volatile __u64 min_stall = 1000000;	/* ns: shorter ones are summed only */
const volatile __u8 offcpu_on = 0;		/* blocked (D) time off the CPU */
const volatile __u8 offcpu_sleep = 0;		/* and interruptible (S) sleep */
const volatile __u64 min_block = 1000000;	/* ns */

/* The stalls a thread is in now (the kinds with a begin and an end). */
#define FR_STALL_TIMED		3	/* RECLAIM, MEMCG, COMPACT */
struct stall_task {
	__u64 begin[FR_STALL_TIMED];	/* CLOCK_BOOTTIME ns; 0: not in one */
	__u32 gfp[FR_STALL_TIMED];
	__s32 order[FR_STALL_TIMED];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct stall_task);
} stall_task SEC(".maps");

/*
 * A thread off the CPU since @since, in state @state. @nsw is its count of
 * context switches then (nvcsw + nivcsw, which the scheduler raises before
 * the tracepoint): at the switch in that ends this block it is unchanged.
 * A different count means this entry outlived its block (its switch in
 * was not seen): it must not time a later one.
 */
struct off_task {
	__u64 since;
	__u64 nsw;
	__u32 state;
	__u8 kind;
	__u8 stack;		/* its user stack is in off_stk */
	__u8 copy;		/* and a copy of the stack memory in off_copy */
	__u8 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FR_OFF_TASKS);
	__type(key, __u32);	/* tid */
	__type(value, struct off_task);
} off_task SEC(".maps");

/* Its user stack, laid out as a sample (un, flags, ips), as it was walked. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FR_OFF_STACKS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);	/* tid */
	__type(value, __u8[sizeof(struct fr_rec_sample) + FR_MAX_STACK * sizeof(__u64)]);
} off_stk SEC(".maps");

/*
 * A copy of its user stack where the walk met a file without rows (struct
 * fr_ucopy), taken as it left: the record is written at its return, in
 * another task's context, which cannot read its memory. Few at a time: a
 * process's table lacks rows only until the daemon has built them.
 */
#define FR_OFF_COPIES	64

struct off_copy {
	struct fr_ucopy c;
	struct fr_ucopy_bytes b;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FR_OFF_COPIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);	/* tid */
	__type(value, struct off_copy);
} off_copy SEC(".maps");

/* Where off_leave() builds one (a switch does not nest). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct off_copy);
} off_copy_buf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FR_STALL_SUMS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fr_stall_key);
	__type(value, struct fr_stall_sum);
} stall_sum SEC(".maps");

/*
 * The record being built, and the user walk. Stall programs run in task
 * context with preemption off and do not nest with each other or with
 * sched_switch (IRQs off); a sample (an interrupt) may interrupt them but
 * has a scratch of its own.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[FR_REC_COPY_MAX_SIZE]);
} stall_rec SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[FR_SAMPLE_MAX_SIZE]);
} stall_walk SEC(".maps");

/* What stall_account() adds a stall to, besides n_all/ns_all. */
enum { FR_SUM_RECORDED, FR_SUM_SHORT, FR_SUM_LOST };

/* A zeroed value to make stall_sum entries from (.bss: no 312-byte stack copy). */
static struct fr_stall_sum stall_sum_zero;

/*
 * Entries in off_task: threads off the CPU now. While there is none, a
 * switch in has nothing to look up. Written once per block (its
 * insertion and deletion), read by every switch.
 */
static __s64 off_tasks;

/*
 * Add a stall of @ns of @kind to @t's incarnation: to all, and to short
 * or lost per @what. A full map is counted (FR_CNT_STALL_SUM_FULL).
 */
static __always_inline void stall_account(struct task_struct *t, __u32 kind, __u64 ns, int what)
{
	struct fr_stall_key k = { .tgid = t->tgid, .start = leader_start(t) };
	struct fr_stall_sum *s = bpf_map_lookup_elem(&stall_sum, &k);

	if (!s) {
		bpf_map_update_elem(&stall_sum, &k, &stall_sum_zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&stall_sum, &k);
		if (!s) {
			count(FR_CNT_STALL_SUM_FULL);
			return;
		}
		BPF_CORE_READ_STR_INTO(&s->comm, t, group_leader, comm);
	}
	if (kind >= FR_STALL_NKINDS)
		return;
	__sync_fetch_and_add(&s->n_all[kind], 1);
	__sync_fetch_and_add(&s->ns_all[kind], ns);
	if (what == FR_SUM_SHORT) {
		__sync_fetch_and_add(&s->n_short[kind], 1);
		__sync_fetch_and_add(&s->ns_short[kind], ns);
	} else if (what == FR_SUM_LOST) {
		__sync_fetch_and_add(&s->n_lost[kind], 1);
		__sync_fetch_and_add(&s->ns_lost[kind], ns);
	}
}

/* The group of @p died: its sums are read once more by the daemon, then deleted. */
static __always_inline void stall_group_dead(struct task_struct *p)
{
	struct fr_stall_key k = { .tgid = p->tgid, .start = leader_start(p) };
	struct fr_stall_sum *s = bpf_map_lookup_elem(&stall_sum, &k);

	if (s)
		s->dead = 1;
}

/* Thread @p exits: what is kept of it by tid goes. */
static __always_inline void stall_thread_exit(struct task_struct *p)
{
	__u32 tid = p->pid;

	if (!offcpu_on)
		return;
	if (!bpf_map_delete_elem(&off_task, &tid))
		__sync_fetch_and_add(&off_tasks, -1);
	bpf_map_delete_elem(&off_stk, &tid);
	bpf_map_delete_elem(&off_copy, &tid);
}

/* Did a walk that ended with FR_SAMPLE_* @flags after @un frames note a copy worth taking? */
static __always_inline bool ucopy_wanted(const struct fr_ucopy *cap, __u32 un, __u32 flags)
{
	return cap->len && un &&
	       (flags & FR_SAMPLE_UEND_MASK) >> FR_SAMPLE_UEND_SHIFT != FR_UEND_OUTERMOST;
}

/*
 * ucopy_append() - append copy @cp to the record of @size bytes at @rec if
 * the ring has room. Returns the new size. Global: verified once, apart
 * from on_switch's paths.
 */
__noinline __u32 ucopy_append(struct fr_copy_buf *rec, __u32 size, const struct off_copy *cp)
{
	__u32 off = size, len;

	if (!rec || !cp)
		return size;
	len = cp->c.len;
	if (!ring_has_room() || off > FR_STALL_MAX_SIZE || len > FR_UCOPY_MAX || !len) {
		count(FR_CNT_UCOPY_SKIPPED);
		return size;
	}
	*(struct fr_ucopy *)&rec->b[off] = cp->c;
	if (bpf_probe_read_kernel(&rec->b[off + sizeof(cp->c)], len, cp->b.b)) {
		count(FR_CNT_UCOPY_SKIPPED);
		return size;
	}
	count(FR_CNT_UCOPY);
	return size + sizeof(cp->c) + len;
}

/*
 * @rec's stack, both parts: the kernel stack of the current thread @t
 * (from @ctx) and its user stack. Sets rec->kn, rec->un, rec->flags, and
 * *@cap where a copy of the stack would let the walk go on later.
 */
static __always_inline void stall_stacks(void *ctx, struct task_struct *t,
					 struct fr_rec_stall *rec, struct fr_ucopy *cap)
{
	__u32 zero = 0, kn = 0, un = 0, flags = 0;
	struct fr_rec_sample *w;
	long kb;

	kb = bpf_get_stack(ctx, rec->ips, FR_MAX_STACK * sizeof(__u64), 0);
	if (kb < 0) {
		flags |= FR_SAMPLE_KERR;
		kb = 0;
	}
	kn = (__u32)kb / sizeof(__u64);
	if (kn >= FR_MAX_STACK) {
		kn = FR_MAX_STACK;
		flags |= FR_SAMPLE_KTRUNC;
	}
	w = bpf_map_lookup_elem(&stall_walk, &zero);
	if (w && !(t->flags & PF_KTHREAD)) {
		un = user_stack_now(ctx, t, w, &flags, cap);
		if (un > FR_MAX_STACK)
			un = FR_MAX_STACK;
		if (un)
			bpf_probe_read_kernel(&rec->ips[kn], un * sizeof(__u64), w->ips);
	}
	rec->kn = kn;
	rec->un = un;
	rec->flags = flags;
}

/*
 * A stall of @kind by the current thread @t from @begin to @end: a record
 * with its stacks when it lasted min_stall or more, and in the sums.
 */
static __always_inline void stall_emit(void *ctx, struct task_struct *t, __u32 kind,
				       __u64 begin, __u64 end, __u64 result, __u32 gfp,
				       __s32 order, __u32 reason)
{
	__u64 dur = end > begin ? end - begin : 0, memcg = 0;
	struct fr_ucopy cap = {};
	struct fr_rec_stall *rec;
	__u32 zero = 0, size;

	if (dur < min_stall) {
		stall_account(t, kind, dur, FR_SUM_SHORT);
		return;
	}
	rec = bpf_map_lookup_elem(&stall_rec, &zero);
	if (!rec) {
		count(FR_CNT_SCRATCH);
		stall_account(t, kind, dur, FR_SUM_LOST);
		return;
	}
	if (kind == FR_STALL_MEMCG)
		memcg_at_limit(t, &memcg, NULL, NULL, true);
	rec->begin = begin;
	rec->result = result;
	rec->memcg_id = memcg;
	rec->gfp = gfp;
	rec->order = order;
	rec->kind = kind;
	rec->reason = reason;
	stall_stacks(ctx, t, rec, &cap);
	size = sizeof(*rec) + (rec->kn + rec->un) * sizeof(__u64);
	if (size > FR_STALL_MAX_SIZE)
		return;
	if (ucopy_wanted(&cap, rec->un, rec->flags)) {
		__u32 with = ucopy_take((struct fr_copy_buf *)rec, size, &cap, t->tgid);

		if (with > size)
			rec->flags |= FR_SAMPLE_UCOPY;
		size = with;
	}
	if (size > FR_REC_COPY_MAX_SIZE)
		return;
	fill_hdr(&rec->h, t, FR_REC_STALL, size);
	/* The end, taken before the stacks: within the drain's stamp-to-commit slack. */
	rec->h.ts = end;
	if (bpf_ringbuf_output(&events, rec, size, wakeup_flag())) {
		count(FR_CNT_RESERVE);
		stall_account(t, kind, dur, FR_SUM_LOST);
		return;
	}
	stall_account(t, kind, dur, FR_SUM_RECORDED);
}

/* A timed stall of @kind (< FR_STALL_TIMED) begins on the current thread. */
static __always_inline void stall_begin(__u32 kind, __s32 order, __u32 gfp)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct stall_task *st;

	st = bpf_task_storage_get(&stall_task, t, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count(FR_CNT_STALL_UNTRACKED);
		return;
	}
	if (kind >= FR_STALL_TIMED)
		return;
	st->begin[kind] = bpf_ktime_get_boot_ns();
	st->gfp[kind] = gfp;
	st->order[kind] = order;
}

/* The timed stall of @kind of the current thread ends, with @result. */
static __always_inline void stall_end(void *ctx, __u32 kind, __u64 result)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 now = bpf_ktime_get_boot_ns(), begin;
	struct stall_task *st;

	st = bpf_task_storage_get(&stall_task, t, NULL, 0);
	if (!st || kind >= FR_STALL_TIMED)
		return;
	begin = st->begin[kind];
	if (!begin)
		return;		/* it began before we were loaded */
	st->begin[kind] = 0;
	stall_emit(ctx, t, kind, begin, now, result, st->gfp[kind], st->order[kind], 0);
}

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(on_reclaim_begin, int order, gfp_t gfp)
{
	stall_begin(FR_STALL_RECLAIM, order, gfp);
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(on_reclaim_end, unsigned long nr_reclaimed)
{
	stall_end(ctx, FR_STALL_RECLAIM, nr_reclaimed);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(on_memcg_reclaim_begin, int order, gfp_t gfp)
{
	stall_begin(FR_STALL_MEMCG, order, gfp);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(on_memcg_reclaim_end, unsigned long nr_reclaimed)
{
	stall_end(ctx, FR_STALL_MEMCG, nr_reclaimed);
	return 0;
}

/* Compaction of one zone; only direct compaction (an allocation waits) is a stall. */
SEC("tp_btf/mm_compaction_begin")
int BPF_PROG(on_compact_begin, struct compact_control *cc, unsigned long zone_start,
	     unsigned long zone_end, bool sync)
{
	if (cc->direct_compaction)
		stall_begin(FR_STALL_COMPACT, cc->order, cc->gfp_mask);
	return 0;
}

SEC("tp_btf/mm_compaction_end")
int BPF_PROG(on_compact_end, struct compact_control *cc, unsigned long zone_start,
	     unsigned long zone_end, bool sync, int status)
{
	if (cc->direct_compaction)
		stall_end(ctx, FR_STALL_COMPACT, (__u64)status);
	return 0;
}

/* After a throttle's sleep: it lasted usec_delayed. */
SEC("tp_btf/mm_vmscan_throttled")
int BPF_PROG(on_throttled, int nid, int usec_timeout, int usec_delayed, int reason)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 now = bpf_ktime_get_boot_ns();
	__u64 d = usec_delayed > 0 ? (__u64)usec_delayed * 1000 : 0;

	stall_emit(ctx, t, FR_STALL_THROTTLE, now - d, now, 0, 0, -1, (__u32)reason & 0xff);
	return 0;
}

/* The off-CPU kind of a switch out in @state, or FR_STALL_NKINDS: none. */
static __always_inline __u32 off_kind(__u32 state)
{
	if ((state & FR_TASK_UNINTERRUPTIBLE) && !(state & (FR_TASK_NOLOAD | FR_TASK_FROZEN)))
		return FR_STALL_BLOCKED;
	if (offcpu_sleep && (state & FR_TASK_INTERRUPTIBLE))
		return FR_STALL_SLEEP;
	return FR_STALL_NKINDS;
}

/*
 * Copy the stack of @t (the current task, about to leave the CPU) that
 * *@cap notes into off_copy. Returns 1 if kept.
 */
static __always_inline __u8 off_copy_take(struct task_struct *t, __u32 tid,
					  const struct fr_ucopy *cap)
{
	__u32 zero = 0, len;
	struct off_copy *buf = bpf_map_lookup_elem(&off_copy_buf, &zero);

	if (!buf)
		return 0;
	len = ucopy_read(&buf->b, cap->sp);
	if (!len) {
		count(FR_CNT_UCOPY_SKIPPED);
		return 0;
	}
	buf->c = *cap;
	buf->c.gen = ugen_of(t->tgid);
	buf->c.len = len;
	buf->c.pad = 0;
	buf->c.pad2 = 0;
	if (bpf_map_update_elem(&off_copy, &tid, buf, BPF_ANY)) {
		count(FR_CNT_UCOPY_SKIPPED);	/* FR_OFF_COPIES held */
		return 0;
	}
	return 1;
}

/*
 * @prev (the current task) leaves the CPU to wait: note when and how, and
 * its user stack while it can be read. A full off_task forgets the block
 * (counted); a full off_stk keeps it without a user stack (counted).
 */
static __always_inline void off_leave(void *ctx, struct task_struct *prev, __u32 kind,
				      __u32 state, __u64 now)
{
	struct off_task ot = { .since = now, .state = state, .kind = kind,
			       .nsw = prev->nvcsw + prev->nivcsw };
	struct fr_ucopy cap = {};
	struct fr_rec_sample *w;
	__u32 tid = prev->pid, zero = 0, flags = 0;

	if (!(prev->flags & PF_KTHREAD) && (w = bpf_map_lookup_elem(&stall_walk, &zero))) {
		w->un = user_stack_now(ctx, prev, w, &flags, &cap);
		w->flags = flags;
		if (!bpf_map_update_elem(&off_stk, &tid, w, BPF_ANY))
			ot.stack = 1;
		else
			count(FR_CNT_OFFCPU_NOSTACK);
		if (ot.stack && ucopy_wanted(&cap, w->un, flags))
			ot.copy = off_copy_take(prev, tid, &cap);
	}
	if (!bpf_map_update_elem(&off_task, &tid, &ot, BPF_NOEXIST))
		__sync_fetch_and_add(&off_tasks, 1);
	else if (bpf_map_update_elem(&off_task, &tid, &ot, BPF_EXIST))
		count(FR_CNT_STALL_UNTRACKED);	/* full (not a stale entry of this tid) */
}

/*
 * @next comes back after the block @ot, which ended at @now: a record
 * with its stacks when it lasted min_block or more, and in the sums. An
 * @ot left from an earlier block (@next has switched since) is counted as
 * untracked, not timed: its @since would make this return one long block.
 */
static __always_inline void off_return(struct task_struct *next, const struct off_task *ot,
				       __u64 now)
{
	__u64 dur = now > ot->since ? now - ot->since : 0;
	struct fr_rec_offcpu *rec;
	__u32 tid = next->pid, zero = 0, kn, un = 0, flags = 0, size;
	struct off_copy *cp = NULL;
	__u8 *ustk = NULL;
	long kb;

	if (ot->stack)
		ustk = bpf_map_lookup_elem(&off_stk, &tid);
	if (ot->copy)
		cp = bpf_map_lookup_elem(&off_copy, &tid);
	if (next->nvcsw + next->nivcsw != ot->nsw) {
		count(FR_CNT_STALL_UNTRACKED);	/* a stale entry: not this block's */
		goto out;
	}
	if (dur < min_block) {
		stall_account(next, ot->kind, dur, FR_SUM_SHORT);
		goto out;
	}
	rec = bpf_map_lookup_elem(&stall_rec, &zero);
	if (!rec) {
		count(FR_CNT_SCRATCH);
		stall_account(next, ot->kind, dur, FR_SUM_LOST);
		goto out;
	}
	kb = bpf_get_task_stack(next, rec->ips, FR_MAX_STACK * sizeof(__u64), 0);
	if (kb < 0) {
		flags |= FR_SAMPLE_KERR;
		kb = 0;
	}
	kn = (__u32)kb / sizeof(__u64);
	if (kn >= FR_MAX_STACK) {
		kn = FR_MAX_STACK;
		flags |= FR_SAMPLE_KTRUNC;
	}
	if (ustk) {
		const struct fr_rec_sample *u = (const void *)ustk;

		un = u->un;
		if (un > FR_MAX_STACK)
			un = FR_MAX_STACK;
		flags |= u->flags;
		if (un)
			bpf_probe_read_kernel(&rec->ips[kn], un * sizeof(__u64), u->ips);
	}
	rec->begin = ot->since;
	rec->state = ot->state;
	rec->kind = ot->kind;
	rec->pad = 0;
	rec->kn = kn;
	rec->un = un;
	rec->pad2 = 0;
	rec->flags = flags;
	size = sizeof(*rec) + (kn + un) * sizeof(__u64);
	if (size > FR_STALL_MAX_SIZE)
		goto out;
	if (cp && un) {
		__u32 with = ucopy_append((struct fr_copy_buf *)rec, size, cp);

		if (with > size)
			rec->flags |= FR_SAMPLE_UCOPY;
		size = with;
	}
	if (size > FR_REC_COPY_MAX_SIZE)
		goto out;
	fill_hdr(&rec->h, next, FR_REC_OFFCPU, size);
	rec->h.ts = now;
	if (bpf_ringbuf_output(&events, rec, size, wakeup_flag())) {
		count(FR_CNT_RESERVE);
		stall_account(next, ot->kind, dur, FR_SUM_LOST);
	} else {
		stall_account(next, ot->kind, dur, FR_SUM_RECORDED);
	}
out:
	if (ustk)
		bpf_map_delete_elem(&off_stk, &tid);
	if (ot->copy)
		bpf_map_delete_elem(&off_copy, &tid);
}

/*
 * Every context switch. The common case, a switch out that is not a
 * block and a switch in of a thread that was not blocked, is a test of
 * prev_state, and a read of off_tasks when no thread is off the CPU, else
 * one hash lookup that misses; the clock is read only for a block.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct off_task *ot, copy;
	__u64 now = 0;
	__u32 kind, tid;

	if (!preempt && prev->pid) {
		kind = off_kind(prev_state);
		if (kind != FR_STALL_NKINDS) {
			now = bpf_ktime_get_boot_ns();
			off_leave(ctx, prev, kind, prev_state, now);
		}
	}
	if (*(volatile __s64 *)&off_tasks <= 0)
		return 0;
	tid = next->pid;
	ot = bpf_map_lookup_elem(&off_task, &tid);
	if (!ot)
		return 0;
	copy = *ot;
	if (!bpf_map_delete_elem(&off_task, &tid))
		__sync_fetch_and_add(&off_tasks, -1);
	off_return(next, &copy, now ? now : bpf_ktime_get_boot_ns());
	return 0;
}

#endif /* FR_STALL_BPF_H */
