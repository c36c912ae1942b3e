// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * flightrec.bpf.c - the kernel half of flightrec.
 *
 * A perf_event program samples every CPU and writes the interrupted task's
 * kernel and user stacks into the ring buffer: the user stack is walked
 * with unwind rows where the daemon loaded them (unwind.bpf.h), by frame
 * pointers otherwise. Tracepoint programs record
 * process lifecycle events: group exit with counters at death, process
 * fork, exec and OOM victim selection (with its invoker, memory.bpf.h), the
 * RSS ledger and oom_score_adj writes, and stalls: reclaim, compaction and
 * time blocked off the CPU (stall.bpf.h). A task iterator lists live tasks for
 * the snapshot. Records follow bpf/contract.h. Nothing is aggregated here:
 * the daemon's drain owns ordering, interning and the window.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "contract.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define PF_KTHREAD		0x00200000
#define SIGNAL_GROUP_EXIT	0x00000004

/* Settings, written by the daemon before load. */
const volatile __u32 contract_version = FR_CONTRACT_VERSION;
const volatile __u32 page_shift = 12;
const volatile __u64 wakeup_bytes = 1 << 20;	/* wake the drain past this */
/* The RSS ledger ([memory]): off, or its step and maximum age. */
const volatile __u8 rss_on = 0;
const volatile __u64 rss_step = 4 << 20;	/* bytes */
const volatile __u32 rss_step_pct = 2;		/* % of the logged value */
const volatile __u64 rss_max_age = 1000000000;	/* ns */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);	/* resized by the daemon before load */
} events SEC(".maps");

/* The OOM invoker's user stack, walked with rows: its own scratch, as a
 * sample on this CPU may interrupt the walk and use the samples' one. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[FR_SAMPLE_MAX_SIZE]);
} oom_scratch SEC(".maps");

/* Scratch for building one sample, with room for a copy of its user
 * stack and its Python frames; perf_event programs do not nest. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[FR_REC_COPY_MAX_SIZE + FR_PY_SEC_MAX]);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FR_CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/*
 * The sampler with the unwinder (sample_full) takes the verifier 0.3-0.5
 * s: it is loaded after "ready" and put in slot 0 here, which on_sample,
 * quick to verify, tail-calls first; until then on_sample walks frame
 * pointers and copies the stack to walk later. The switch is one map
 * update: no sample is missed or seen twice (sampler.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} full_sample SEC(".maps");

/* Since 6.16 the exit tracepoint passes group_dead; older kernels do not. */
struct trace_event_raw_sched_process_exit___gd {
	bool group_dead;
} __attribute__((preserve_access_index));

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += 1;
}

static __always_inline void count_n(__u32 idx, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += n;
}

static __always_inline __u64 wakeup_flag(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/*
 * An exec wakes the drain (at most once per FR_EXEC_WAKE_NS), so that the
 * daemon reads the new image's /proc facts while the process lives: with
 * the drain's 100 ms tick alone, a process of 20-50 ms was gone before
 * its exec was seen, and its frames, though walked, had no names.
 */
#define FR_EXEC_WAKE_NS	(1000 * 1000ULL)
__u64 exec_woken = 0;

static __always_inline __u64 exec_wakeup(__u64 now)
{
	if (now - exec_woken < FR_EXEC_WAKE_NS)
		return wakeup_flag();
	exec_woken = now;
	return BPF_RB_FORCE_WAKEUP;
}

static __always_inline __u64 leader_start(struct task_struct *t)
{
	return BPF_CORE_READ(t, group_leader, start_boottime);
}

#include "unwind.bpf.h"

/*
 * @t's current table; FR_SAMPLE_UKTAB into *@flags when the BPF side
 * built it (uproc_build()), so that the drain asks the daemon for its
 * own. NULL without unwinding, or without a current table.
 */
static __always_inline struct fr_uproc *uproc_for(struct task_struct *t, __u32 *flags)
{
	__u64 start = leader_start(t);
	struct task_struct *parent;
	struct fr_uproc *p;

	if (!unwind_on)
		return NULL;
	p = uproc_get(t, start);
	if (!p)
		p = uproc_building(t, start);
	/* A vfork or posix_spawn child runs in its parent's mm until its exec
	 * (CLONE_VM without CLONE_THREAD): the parent's table is its own. The
	 * gcc driver's children, for one, were walked by frame pointers. */
	if (!p) {
		parent = BPF_CORE_READ(t, group_leader, real_parent);
		if (parent && BPF_CORE_READ(parent, mm) == BPF_CORE_READ(t, mm))
			p = uproc_get(parent, leader_start(parent));
	}
	if (p && (p->flags & FR_UPROC_KERNEL))
		*flags |= FR_SAMPLE_UKTAB;
	return p;
}

/*
 * A task without a table that has no user stack to walk: in execve (past
 * the switch to the new mm its registers are still the old image's until
 * the new one starts), or exiting with its mm gone (exit_mmap of cc1's
 * mm takes ms). A frame-pointer walk found nothing there, or the old
 * image's stale pc, and counted as a process without a table: half of
 * the gcc driver's samples, and most of cc1's and as's no_table.
 */
static __always_inline bool no_user_stack(struct task_struct *t)
{
	return !BPF_CORE_READ(t, mm) || BPF_CORE_READ_BITFIELD_PROBED(t, in_execve);
}

static __always_inline void fill_hdr(struct fr_rec_hdr *h, struct task_struct *t,
				     __u16 type, __u32 size)
{
	h->tgid = BPF_CORE_READ(t, tgid);
	h->tid = BPF_CORE_READ(t, pid);
	h->start = leader_start(t);
	h->type = type;
	h->cpu = bpf_get_smp_processor_id();
	h->size = size;
	BPF_CORE_READ_STR_INTO(&h->comm, t, comm);
}

/* mm counters are percpu_counters; .count is what get_mm_counter() reads. */
static __always_inline __u64 mm_pages(struct mm_struct *mm, int member)
{
	__s64 v = BPF_CORE_READ(mm, rss_stat[member].count);

	return v > 0 ? (__u64)v << page_shift : 0;
}


/* A record being built with room for a copy after its stack; the copy's bytes. */
struct fr_copy_buf {
	__u8 b[FR_REC_COPY_MAX_SIZE];
};

struct fr_ucopy_bytes {
	__u8 b[FR_UCOPY_MAX];
};

/*
 * ucopy_read() - the user stack of the current task from @sp up into @dst:
 * FR_UCOPY_MAX bytes, or fewer where the stack ends sooner, halving down
 * to FR_UCOPY_MIN. Returns the bytes read, 0 if none could be. A global
 * function: the verifier checks it once, apart from its callers' paths
 * (inlined into on_sample, they multiplied past the 1M-instruction limit).
 */
__noinline __u32 ucopy_read(struct fr_ucopy_bytes *dst, __u64 sp)
{
	const void *src = (const void *)sp;

	if (!dst)
		return 0;
	if (!bpf_probe_read_user(dst->b, 8192, src))
		return 8192;
	if (!bpf_probe_read_user(dst->b, 4096, src))
		return 4096;
	if (!bpf_probe_read_user(dst->b, 2048, src))
		return 2048;
	if (!bpf_probe_read_user(dst->b, 1024, src))
		return 1024;
	if (!bpf_probe_read_user(dst->b, FR_UCOPY_MIN, src))
		return FR_UCOPY_MIN;
	return 0;
}

/* Is the ring under a quarter full? Copies are taken only then: a copy
 * never takes another record's room. */
static __always_inline bool ring_has_room(void)
{
	__u64 ring = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);
	__u64 used = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);

	return used + FR_REC_COPY_MAX_SIZE <= ring / 4;
}

/*
 * ucopy_take() - append to the record of @size bytes at @s the copy that
 * *@cap notes (struct fr_ucopy, then the user stack from cap->sp up) if
 * the ring has room. Returns the new size (unchanged: no copy).
 */
__noinline __u32 ucopy_take(struct fr_copy_buf *s, __u32 size, const struct fr_ucopy *cap,
			    __u32 tgid)
{
	struct fr_ucopy *h;
	__u32 off = size, len;

	if (!s || !cap)
		return size;
	if (!ring_has_room() || off > FR_STALL_MAX_SIZE) {
		count(FR_CNT_UCOPY_SKIPPED);
		return size;
	}
	h = (struct fr_ucopy *)&s->b[off];
	len = ucopy_read((struct fr_ucopy_bytes *)&s->b[off + sizeof(*h)], cap->sp);
	if (!len) {
		count(FR_CNT_UCOPY_SKIPPED);
		return size;
	}
	*h = *cap;
	h->gen = ugen_of(tgid);
	h->len = len;
	h->pad = 0;
	h->pad2 = 0;
	count(FR_CNT_UCOPY);
	return size + sizeof(*h) + len;
}

/* The current task's user registers at kernel entry, noted for a copy
 * walked again from the leaf (a task without a table). */
static __always_inline void ucopy_note_task(struct task_struct *t, struct fr_ucopy *cap)
{
	struct pt_regs *ur = (struct pt_regs *)bpf_task_pt_regs(t);

	cap->pc = BPF_CORE_READ(ur, ip);
	cap->sp = BPF_CORE_READ(ur, sp);
	cap->bp = BPF_CORE_READ(ur, bp);
	cap->at = 0;
	cap->exact = 1;
	cap->len = 1;
}

/*
 * The user stack of @t, the current task, into w->ips[0..]: walked with
 * its unwind rows where the daemon loaded them (stock binaries have no
 * frame pointers), by frame pointers otherwise. Returns the number of
 * frames; adds the end code and the truncation and error bits to *@flags.
 */
static __always_inline __u32 user_stack_now(void *ctx, struct task_struct *t,
					    struct fr_rec_sample *w, __u32 *flags,
					    struct fr_ucopy *cap)
{
	__u32 uend = FR_UEND_NO_TABLE, n;
	struct fr_uproc *p;
	long ub;

	p = uproc_for(t, flags);
	if (p) {
		n = unwind_user_task(t, p, w, &uend, cap);
	} else {
		if (cap && unwind_on)
			ucopy_note_task(t, cap);
		ub = bpf_get_stack(ctx, w->ips, FR_MAX_STACK * sizeof(__u64), BPF_F_USER_STACK);
		if (ub < 0) {
			*flags |= FR_SAMPLE_UERR;
			ub = 0;
		}
		n = (__u32)ub / sizeof(__u64);
		if (no_user_stack(t)) {
			n = 0;
			uend = FR_UEND_NONE;
		}
	}
	if (n > FR_MAX_STACK)
		n = FR_MAX_STACK;
	if (uend == FR_UEND_DEPTH || n == FR_MAX_STACK)
		*flags |= FR_SAMPLE_UTRUNC;
	*flags |= uend << FR_SAMPLE_UEND_SHIFT;
	return n;
}

#include "python.bpf.h"

/*
 * py_append() - after the @size bytes of sample @s, the sampled thread's
 * Python frames and their tail, when its process's table says where its
 * interpreter is (@p). Returns the new size; sets FR_SAMPLE_PY (or PYERR).
 */
static __always_inline __u32 py_append(struct fr_rec_sample *s, __u32 size,
				       const struct fr_uproc *p, __u32 *flags)
{
	__u32 zero = 0, tid = (__u32)bpf_get_current_pid_tgid();
	struct fr_pybuf *b;
	int n;

	if (!p || !p->py.runtime || size > FR_REC_COPY_MAX_SIZE)
		return size;
	b = bpf_map_lookup_elem(&pyscratch, &zero);
	if (!b)
		return size;
	n = fr_py_walk(p, b, tid);
	if (n < 0)
		*flags |= FR_SAMPLE_PYERR;
	if (n <= 0 || n > FR_PY_MAX_FRAMES)
		return size;
	if (bpf_probe_read_kernel((__u8 *)s + size, n * sizeof(struct fr_pyframe), b->f))
		return size;
	if (bpf_probe_read_kernel((__u8 *)s + size + n * sizeof(struct fr_pyframe),
				  sizeof(struct fr_pytail), &b->tail))
		return size;
	*flags |= FR_SAMPLE_PY;
	return size + n * sizeof(struct fr_pyframe) + sizeof(struct fr_pytail);
}

/*
 * @cur's Python frames into @b, walked there (not in pyscratch, which a
 * sample taken in an NMI on this CPU may be filling meanwhile): an OOM
 * record's section, or an RSS site's. FR_SAMPLE_PY (or PYERR) into
 * *@flags.
 */
static __always_inline void python_into(struct task_struct *cur, struct fr_pybuf *b,
					__u32 *flags)
{
	__u32 f = 0;
	struct fr_uproc *p;
	int n;

	b->tail.pn = 0;
	p = uproc_for(cur, &f);
	if (!p || !p->py.runtime)
		return;
	n = fr_py_walk(p, b, cur->pid);
	if (n < 0)
		*flags |= FR_SAMPLE_PYERR;
	if (n > 0 && n <= FR_PY_MAX_FRAMES)
		*flags |= FR_SAMPLE_PY;
}

/* The RSS ledger's scratch for a user stack walk (where the memory grew). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[FR_SAMPLE_MAX_SIZE]);
} site_scratch SEC(".maps");

#include "memory.bpf.h"
#include "stall.bpf.h"

/*
 * sample() - record the sample the perf event @ctx fired for: the kernel
 * stack, and the user stack walked with the process's unwind table when
 * @walk and it has one, else by frame pointers (with a copy of the stack
 * to walk later, when the unwinder is on). @walk is a constant: the entry
 * without it (on_sample) verifies in milliseconds, the one with it
 * (sample_full) takes the verifier 0.3-0.5 s.
 */
static __always_inline int sample(struct bpf_perf_event_data *ctx, const bool walk)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct fr_rec_sample *s;
	__u32 zero = 0, size, flags = 0, uend = FR_UEND_NONE;
	struct fr_ucopy cap = {};
	struct fr_uproc *p = NULL;
	bool young_py = false;
	long kb, ub = 0;
	__u32 kn, un;

	if (!BPF_CORE_READ(t, pid)) {
		count(FR_CNT_IDLE);
		return 0;
	}
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s) {
		count(FR_CNT_SCRATCH);
		return 0;
	}

	kb = bpf_get_stack(ctx, s->ips, FR_MAX_STACK * sizeof(__u64), 0);
	if (kb < 0) {
		flags |= FR_SAMPLE_KERR;
		kb = 0;
	}
	kn = (__u32)kb / sizeof(__u64);
	if (kn >= FR_MAX_STACK) {
		kn = FR_MAX_STACK;
		flags |= FR_SAMPLE_KTRUNC;
	}

	un = 0;
	if (BPF_CORE_READ(t, flags) & PF_KTHREAD) {
		flags |= FR_SAMPLE_KTHREAD;
	} else if (walk && (p = uproc_for(t, &flags))) {
		un = unwind_user(ctx, t, p, s, kn, &uend, &cap);
		if (uend == FR_UEND_DEPTH)
			flags |= FR_SAMPLE_UTRUNC;
	} else {
		ub = bpf_get_stack(ctx, &s->ips[kn], FR_MAX_STACK * sizeof(__u64),
				   BPF_F_USER_STACK);
		if (ub < 0) {
			flags |= FR_SAMPLE_UERR;
			ub = 0;
		}
		un = (__u32)ub / sizeof(__u64);
		if (un >= FR_MAX_STACK) {
			un = FR_MAX_STACK;
			flags |= FR_SAMPLE_UTRUNC;
		}
		uend = FR_UEND_NO_TABLE;
		if (no_user_stack(t)) {
			un = 0;
			flags &= ~FR_SAMPLE_UTRUNC;
			uend = FR_UEND_NONE;
		} else if (unwind_on) {
			struct uwalk rw = {};

			uwalk_regs(ctx, t, &rw);	/* walk it again from the leaf */
			cap.pc = rw.pc;
			cap.sp = rw.sp;
			cap.bp = rw.bp;
			cap.exact = 1;
			cap.len = 1;
		}
	}
	if (un > FR_MAX_STACK)
		un = FR_MAX_STACK;
	flags |= uend << FR_SAMPLE_UEND_SHIFT;

	size = sizeof(*s) + (kn + un) * sizeof(__u64);
	if (size > FR_SAMPLE_MAX_SIZE)
		return 0;
	if (cap.len && un && uend != FR_UEND_OUTERMOST) {
		__u32 with = ucopy_take((struct fr_copy_buf *)s, size, &cap,
					BPF_CORE_READ(t, tgid));

		if (with > size)
			flags |= FR_SAMPLE_UCOPY;
		size = with;
	}
	if (size > FR_REC_COPY_MAX_SIZE)
		return 0;
	if (walk)
		size = py_append(s, size, p, &flags);
	/*
	 * A young process's Python frames (its table is the one built here at
	 * its exec): wake the drain, as an exec does, so that the daemon reads
	 * their code objects while a short script still lives.
	 */
	young_py = (flags & FR_SAMPLE_PY) && p && (p->flags & FR_UPROC_KERNEL);
	fill_hdr(&s->h, t, FR_REC_SAMPLE, size);
	s->kn = kn;
	s->un = un;
	s->flags = flags;
	/* Stamp last: the watermark relies on a short stamp-to-commit gap. */
	s->h.ts = bpf_ktime_get_boot_ns();
	if (bpf_ringbuf_output(&events, s, size, young_py ? exec_wakeup(s->h.ts) : wakeup_flag()))
		count(FR_CNT_RESERVE);
	return 0;
}

/* The sampler with the unwinder: put in full_sample once loaded, after "ready". */
SEC("perf_event")
int sample_full(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, true);
}

/* The sampler's entry: sample_full once it is there, frame pointers until then. */
SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	bpf_tail_call(ctx, &full_sample, 0);
	return sample(ctx, false);
}

/*
 * exit_maps() - at @t's group death (@t is current, its mm still there),
 * send its executable file mappings (struct fr_rec_maps) unless the daemon
 * read its maps at this generation (uread) and its table had rows for
 * every file: a process of 20 ms on a busy machine ends before the /proc
 * worker reads it, and its frames were bare addresses; one that ended
 * before a file's rows were built has copies of its stacks waiting for
 * them (its table is FR_UPROC_MISSING: FR_XMAPS_MISSING). Only while the
 * ring is under a quarter full, as the copies of stacks: it never takes
 * another record's room. The VMA loop is bounded by FR_UBUILD_VMAS, its
 * state kept in the map value as in uproc_build(). Call before
 * unwind_forget(), which drops ugen and the table.
 */
static __noinline int exit_maps(struct task_struct *t, __u64 start)
{
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	__u32 zero = 0, tgid = t->tgid, size, flags = 0;
	struct fr_xmaps_buf *b;
	struct fr_uproc *p;
	struct fr_rec_maps *r;
	struct fr_uread *u;
	bool read;

	if (!ubuild_on || !t->mm)
		return 0;
	p = bpf_map_lookup_elem(&uprocs, &tgid);
	/* Not for a process with no table (a fork child that never exec'd):
	 * a fork storm would send one record per exit. */
	if (p && p->start == start && (p->flags & FR_UPROC_MISSING))
		flags |= FR_XMAPS_MISSING;
	u = bpf_map_lookup_elem(&uread, &tgid);
	read = u && u->start == start && u->gen == ugen_of(tgid);
	if (u)
		bpf_map_delete_elem(&uread, &tgid);
	if (read && !flags)
		return 0;
	b = bpf_map_lookup_elem(&xmaps, &zero);
	if (!b)
		return 0;
	if (!ring_has_room()) {
		count(FR_CNT_XMAPS_SKIPPED);
		return 0;
	}
	r = &b->r;
	b->seen = 0;
	r->n = 0;
	r->vmas = 0;
	r->flags = flags;
	r->gen = ugen_of(tgid);
	if (bpf_iter_task_vma_new(&it, t, 0)) {
		bpf_iter_task_vma_destroy(&it);
		count(FR_CNT_XMAPS_SKIPPED);
		return 0;
	}
	while ((vma = bpf_iter_task_vma_next(&it))) {
		struct file *file;
		struct inode *ino;
		struct fr_xmap *m;
		__u32 n = r->n;

		if (b->seen++ >= FR_UBUILD_VMAS)
			break;
		if (!(BPF_CORE_READ(vma, vm_flags) & FR_VM_EXEC))
			continue;
		file = BPF_CORE_READ(vma, vm_file);
		if (!file)
			continue;
		r->vmas++;
		if (n >= FR_XMAPS_MAX)
			continue;
		m = &r->m[n];
		ino = BPF_CORE_READ(file, f_inode);
		m->begin = BPF_CORE_READ(vma, vm_start);
		m->end = BPF_CORE_READ(vma, vm_end);
		m->pgoff = BPF_CORE_READ(vma, vm_pgoff) << 12;
		m->dev = user_dev(BPF_CORE_READ(ino, i_sb, s_dev));
		m->ino = BPF_CORE_READ(ino, i_ino);
		m->size = BPF_CORE_READ(ino, i_size);
		m->mtime = inode_mtime(ino);
		m->ctime = inode_ctime(ino);
		r->n = n + 1;
	}
	bpf_iter_task_vma_destroy(&it);
	if (!r->n)
		return 0;
	fill_hdr(&r->h, t, FR_REC_MAPS, 0);
	size = sizeof(*r) - sizeof(r->m) + r->n * sizeof(r->m[0]);
	if (size > sizeof(*r))
		return 0;
	r->h.size = size;
	r->h.ts = bpf_ktime_get_boot_ns();
	if (bpf_ringbuf_output(&events, r, size, wakeup_flag()))
		count(FR_CNT_RESERVE);
	else
		count(FR_CNT_XMAPS);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	struct trace_event_raw_sched_process_exit___gd *gd = NULL;
	struct signal_struct *sig = p->signal;
	struct mm_struct *mm = p->mm;
	struct fr_rec_exit *e;
	bool group_dead;

	if (bpf_core_field_exists(gd->group_dead))
		group_dead = (bool)ctx[1];
	else
		group_dead = BPF_CORE_READ(sig, live.counter) == 0;
	stall_thread_exit(p);
	if (!group_dead)
		return 0;
	if (unwind_on) {
		exit_maps(p, leader_start(p));
		unwind_forget(p);
	}
	if (stall_on || offcpu_on)
		stall_group_dead(p);
	if (rss_on && mm)
		led_exit(p, mm);	/* the ledger's last values first */

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(FR_CNT_RESERVE);
		return 0;
	}
	fill_hdr(&e->h, p, FR_REC_EXIT, sizeof(*e));
	if (BPF_CORE_READ(sig, flags) & SIGNAL_GROUP_EXIT)
		e->code = BPF_CORE_READ(sig, group_exit_code);
	else
		e->code = BPF_CORE_READ(p, exit_code);
	e->nr_threads = BPF_CORE_READ(sig, nr_threads);
	if (mm) {
		e->st.rss_anon = mm_pages(mm, MM_ANONPAGES);
		e->st.rss_file = mm_pages(mm, MM_FILEPAGES);
		e->st.rss_shmem = mm_pages(mm, MM_SHMEMPAGES);
	} else {
		e->st.rss_anon = e->st.rss_file = e->st.rss_shmem = 0;
	}
	e->st.rss_peak = BPF_CORE_READ(sig, maxrss) << page_shift;
	e->st.utime = BPF_CORE_READ(sig, utime) + BPF_CORE_READ(p, utime);
	e->st.stime = BPF_CORE_READ(sig, stime) + BPF_CORE_READ(p, stime);
	e->st.min_flt = BPF_CORE_READ(sig, min_flt) + BPF_CORE_READ(p, min_flt);
	e->st.maj_flt = BPF_CORE_READ(sig, maj_flt) + BPF_CORE_READ(p, maj_flt);
	e->h.ts = bpf_ktime_get_boot_ns();
	bpf_ringbuf_submit(e, wakeup_flag());
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct fr_rec_fork *f;

	if (BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid))
		return 0;	/* a thread, not a process */
	if (rss_on)
		led_fork(parent, child);

	f = bpf_ringbuf_reserve(&events, sizeof(*f), 0);
	if (!f) {
		count(FR_CNT_RESERVE);
		return 0;
	}
	fill_hdr(&f->h, cur, FR_REC_FORK, sizeof(*f));
	f->child_pid = BPF_CORE_READ(child, tgid);
	f->pad = 0;
	f->child_start = BPF_CORE_READ(child, start_boottime);
	f->h.ts = bpf_ktime_get_boot_ns();
	bpf_ringbuf_submit(f, wakeup_flag());
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct fr_rec_exec *x;

	if (unwind_on) {	/* a new image: the old rows no longer apply */
		__u32 tgid = p->tgid;

		/* Gone, not only stale: uproc_building() takes a stale table
		 * of this incarnation, and it must be this image's. */
		bpf_map_delete_elem(&uprocs, &tgid);
		ugen_bump(tgid, BPF_CORE_READ(p, mm, exec_vm));
		uproc_build(p, leader_start(p));	/* the binary, ld.so and the vDSO */
	}
	if (rss_on)
		led_exec(p);
	x = bpf_ringbuf_reserve(&events, sizeof(*x), 0);
	if (!x) {
		count(FR_CNT_RESERVE);
		return 0;
	}
	fill_hdr(&x->h, p, FR_REC_EXEC, sizeof(*x));
	x->old_tid = old_pid;
	x->pad = 0;
	if (bpf_probe_read_kernel_str(x->filename, sizeof(x->filename),
				      BPF_CORE_READ(bprm, filename)) < 0)
		x->filename[0] = 0;
	x->h.ts = bpf_ktime_get_boot_ns();
	bpf_ringbuf_submit(x, exec_wakeup(x->h.ts));
	return 0;
}

/* The OOM invoker's user stack into o->ips[FR_MAX_STACK..], walked in its own scratch. */
static __always_inline void oom_user_stack(void *ctx, struct task_struct *cur, struct fr_rec_oom *o)
{
	struct fr_rec_sample *s;
	__u32 zero = 0, flags = 0, n = 0;

	s = bpf_map_lookup_elem(&oom_scratch, &zero);
	if (s) {
		n = user_stack_now(ctx, cur, s, &flags, NULL);
		if (n > FR_MAX_STACK)
			n = FR_MAX_STACK;
		if (n)
			bpf_probe_read_kernel(&o->ips[FR_MAX_STACK], n * sizeof(__u64), s->ips);
	}
	o->un = n;
	o->flags |= flags;
}

SEC("tp_btf/mark_victim")
int BPF_PROG(on_oom, struct task_struct *victim, __u32 uid)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct mm_struct *mm = victim->mm;
	struct fr_rec_oom *o;
	long kb;

	/* The record, then the invoker's Python section (contract.h). */
	o = bpf_ringbuf_reserve(&events, sizeof(*o) + sizeof(struct fr_pybuf), 0);
	if (!o) {
		count(FR_CNT_RESERVE);
		return 0;
	}
	fill_hdr(&o->h, victim, FR_REC_OOM, sizeof(*o));
	if (mm) {
		o->total_vm = BPF_CORE_READ(mm, total_vm) << page_shift;
		o->rss_anon = mm_pages(mm, MM_ANONPAGES);
		o->rss_file = mm_pages(mm, MM_FILEPAGES);
		o->rss_shmem = mm_pages(mm, MM_SHMEMPAGES);
		o->swapents = mm_pages(mm, MM_SWAPENTS);
		o->pgtables = BPF_CORE_READ(mm, pgtables_bytes.counter);
	} else {
		o->total_vm = o->rss_anon = o->rss_file = o->rss_shmem = 0;
		o->swapents = o->pgtables = 0;
	}
	o->oom_score_adj = BPF_CORE_READ(victim, signal, oom_score_adj);
	o->uid = uid;
	/* The invoker: whose allocation ran out, and where. */
	o->inv_tgid = cur->tgid;
	o->inv_tid = cur->pid;
	o->inv_start = leader_start(cur);
	BPF_CORE_READ_STR_INTO(&o->inv_comm, cur, comm);
	oom_memcg(cur, o);
	o->flags = 0;
	kb = bpf_get_stack(ctx, o->ips, FR_MAX_STACK * sizeof(__u64), 0);
	if (kb < 0) {
		o->flags |= FR_SAMPLE_KERR;
		kb = 0;
	}
	o->kn = (__u32)kb / sizeof(__u64);
	if (o->kn > FR_MAX_STACK)
		o->kn = FR_MAX_STACK;
	if (o->kn == FR_MAX_STACK)
		o->flags |= FR_SAMPLE_KTRUNC;
	o->un = 0;
	((struct fr_pybuf *)(o + 1))->tail.pn = 0;
	if (!(cur->flags & PF_KTHREAD)) {
		oom_user_stack(ctx, cur, o);
		python_into(cur, (struct fr_pybuf *)(o + 1), &o->flags);
	}
	o->h.ts = bpf_ktime_get_boot_ns();
	bpf_ringbuf_submit(o, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/*
 * The mmap lock of @mm was released: whatever changed its mappings is
 * done. If the code a process's table describes changed (its exec_vm is
 * not the table's: a dlclose, a munmap of code), the table is stale now,
 * not at the next sample, which a dlclose followed by a dlopen of a file
 * of the same size at the same address would otherwise hide.
 */
SEC("tp_btf/mmap_lock_released")
int BPF_PROG(on_mmap_unlock, struct mm_struct *mm, bool write)
{
	struct task_struct *t = bpf_get_current_task_btf();

	if (mm != t->mm)
		return 0;	/* another process's lock (a /proc reader) */
	unwind_check_code(t->tgid, mm);
	/* Not while execve maps the new image: the registers are still the
	 * old one's, and a walk of them with the new mm's table read nothing
	 * (as: 8 % of its samples read_error). The exec builds it at its end. */
	if (unwind_on && write && !BPF_CORE_READ_BITFIELD_PROBED(t, in_execve))
		uproc_refresh(t, leader_start(t));
	return 0;
}

SEC("iter/task")
int list_tasks(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	struct fr_rec_task r = {};

	if (!t)
		return 0;
	r.h.ts = bpf_ktime_get_boot_ns();
	r.h.tgid = t->tgid;
	r.h.tid = t->pid;
	r.h.start = BPF_CORE_READ(t, group_leader, start_boottime);
	r.h.type = FR_REC_TASK;
	r.h.cpu = bpf_get_smp_processor_id();
	r.h.size = sizeof(r);
	BPF_CORE_READ_STR_INTO(&r.h.comm, t, comm);
	r.ppid = BPF_CORE_READ(t, real_parent, tgid);
	r.state = BPF_CORE_READ(t, __state);
	r.flags = t->flags;
	r.nr_threads = BPF_CORE_READ(t, signal, nr_threads);
	r.leader_start = r.h.start;
	if (r.h.tid == r.h.tgid && t->mm) {
		struct mm_struct *mm = t->mm;

		r.rss[FR_RSS_FILE] = mm_pages(mm, MM_FILEPAGES);
		r.rss[FR_RSS_ANON] = mm_pages(mm, MM_ANONPAGES);
		r.rss[FR_RSS_SWAP] = mm_pages(mm, MM_SWAPENTS);
		r.rss[FR_RSS_SHMEM] = mm_pages(mm, MM_SHMEMPAGES);
		r.pgtables = BPF_CORE_READ(mm, pgtables_bytes.counter);
	}
	r.oom_score_adj = BPF_CORE_READ(t, signal, oom_score_adj);
	bpf_seq_write(seq, &r, sizeof(r));
	return 0;
}
