/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwind.bpf.h - walk a user stack without frame pointers, in the kernel,
 * at sampling time, with the unwind rows that recorder/unwind/ builds from
 * each mapped file's .eh_frame (bpf/contract.h: struct fr_urow).
 *
 * Three maps, all written by the daemon:
 *   urows   one pool of rows; each file owns a contiguous, sorted run
 *   ufiles  file slot -> its run in the pool (struct fr_ufile)
 *   uprocs  tgid -> the process's executable mappings (struct fr_uproc)
 *   uinodes file identity -> its slot and PT_LOADs (struct fr_uinode), for
 *           the tables built here
 * and one the BPF side owns:
 *   ugen    tgid -> maps generation, bumped on exec, and when the mm's
 *           exec_vm (pages of code mapped) moves from the value the entry
 *           last saw: a munmap, MAP_FIXED mmap or mprotect of code. It is
 *           compared each time the process releases its mmap lock (the
 *           tracepoint fires before the unlock, so no maps read sees a
 *           change before its bump: a dlclose then a dlopen of a file of
 *           the same size cannot hide in between), whether or not a table
 *           is current, since a table being built may have read the maps
 *           before either. A sample also compares the table's exec_vm. A
 *           process's entry is used only while gen and exec_vm match, so
 *           a stack is never walked with the rows of a file the process
 *           no longer maps. Rejected
 *           ways to see an unmap, from this kernel:
 *           syscall tracepoints need FTRACE_SYSCALLS, there are no kprobes,
 *           fentry on remove_vma() is refused with EPERM, and
 *           bpf_find_vma() returns -EBUSY for its second call within one
 *           interrupt (its deferred mmap unlock is still pending).
 *
 * A row may say the return address is in rdi (glibc's __vfork, the
 * parent's frame while it waits for its child): followed in the
 * interrupted frame only, with the rdi the kernel saved.
 *
 * Per frame: a binary search of the process's mappings (at most
 * FR_UMAPS_STEPS steps), then of the file's rows (FR_UROWS_STEPS). A pc
 * in a mapping without rows (JIT, a file without .eh_frame, a gap in the
 * CFI) takes one frame-pointer step, so mixed chains work both ways. The
 * walk is a bpf_loop() callback (6.1+): the verifier checks one step, not
 * FR_MAX_STACK copies of it, and each bounded search loop is unrolled at
 * most 25 times, well inside the 1M-instruction verification limit.
 */
#ifndef FR_UNWIND_BPF_H
#define FR_UNWIND_BPF_H

/* Processes whose read the uread map remembers: an LRU, so one forgotten
 * only sends its mappings at exit for nothing. */
#define FR_UREAD_MAX	16384

const volatile __u32 unwind_on = 0;	/* the daemon loaded a row pool */
const volatile __u32 ubuild_on = 0;	/* and the kernel has the VMA iterator: uproc_build() */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* sized by the daemon before load */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct fr_urow);
} urows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* sized by the daemon before load */
	__type(key, __u32);
	__type(value, struct fr_ufile);
} ufiles SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* sized by the daemon before load (procs_bound()) */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct fr_uproc);
} uprocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* sized by the daemon before load (procs_bound()) */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct fr_ugen);
} ugen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* sized by the daemon before load */
	__type(key, struct fr_uinode_key);
	__type(value, struct fr_uinode);
} uinodes SEC(".maps");

/* (tgid, start, maps generation) the daemon read maps at: its exit sends none. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FR_UREAD_MAX);
	__type(key, __u32);
	__type(value, struct fr_uread);
} uread SEC(".maps");

/*
 * An exiting process's mappings being gathered (exit_maps()), and the
 * count of VMAs its loop has seen: kept here, not on the stack, so that
 * the verifier does not follow each of FR_UBUILD_VMAS values (a count on
 * the stack took it 0.25 s, this 8 ms).
 */
struct fr_xmaps_buf {
	struct fr_rec_maps r;	/* the record sent */
	__u32 seen;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fr_xmaps_buf);
} xmaps SEC(".maps");

/* A table being built (uproc_build()): too big for the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fr_uproc);
} ubuild SEC(".maps");

/*
 * The tgid whose table this CPU is building now (uproc_refresh()), 0 if
 * none. A sample that interrupts the build finds the process's table
 * stale (its code changed: that is why it is built) and had no table:
 * 1 % of as's samples, all in ld.so's mmap. Its user stack is in the
 * syscall that changed the mappings, whose callers are still mapped, so
 * the table of before the change walks it (uproc_building()).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ubusy SEC(".maps");

#define FR_USER_TOP	0x0000800000000000ULL

struct uwalk {
	__u64 pc, sp, bp;
	struct fr_rec_sample *s;	/* the per-CPU scratch record */
	struct fr_uproc *p;
	__u32 base;			/* ips index of the first user frame */
	__u32 n;			/* user frames recorded */
	__u32 end;			/* enum fr_uend; 0 while walking */
	__u32 exact;			/* pc is not a return address */
	__u32 by_rows, by_fp;
	__u64 di;			/* rdi of the interrupted frame (its return address in __vfork) */
	__u32 last;			/* the previous frame's mapping: most callers share it */
	__u32 copy_on;			/* note in ucap the first frame in a file without rows */
	__u32 cap_slot;			/* ucap's: 0 samples, 1 the task-context programs */
	__u32 epoch;			/* now, in struct fr_ufile's used units */
};

/*
 * Where a sample's walk met the first file without rows (len 1: noted),
 * for on_sample's copy of the stack. A map, not a field of struct uwalk:
 * stack slots the callback writes split the verifier's states at every
 * step, and the walk went past the 1M-instruction limit. Per CPU, one
 * slot for samples and one for the programs they may interrupt.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);		/* a sample may interrupt a stall's walk */
	__type(key, __u32);
	__type(value, struct fr_ucopy);
} ucap SEC(".maps");

static __always_inline __u32 ugen_of(__u32 tgid)
{
	struct fr_ugen *g = bpf_map_lookup_elem(&ugen, &tgid);

	return g ? g->gen : 0;
}

/*
 * Bump @tgid's maps generation, now that its mm maps @exec_vm pages of
 * code; its uprocs entry and any table being built are stale from now on.
 */
static __always_inline void ugen_bump(__u32 tgid, __u64 exec_vm)
{
	struct fr_ugen one = { .gen = 1, .exec_vm = exec_vm, .ts = bpf_ktime_get_boot_ns() };
	struct fr_ugen *g = bpf_map_lookup_elem(&ugen, &tgid);

	if (g) {
		__sync_fetch_and_add(&g->gen, 1);
		g->exec_vm = exec_vm;
		g->ts = one.ts;
	} else if (bpf_map_update_elem(&ugen, &tgid, &one, BPF_NOEXIST)) {
		bpf_map_delete_elem(&uprocs, &tgid);	/* ugen full: drop the table */
	}
}

extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __weak __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __weak __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __weak __ksym;

/* The inode's change time before 6.6 and in 6.6-6.10 (CO-RE flavors). */
struct inode___pre66 {
	struct timespec64 i_ctime;
} __attribute__((preserve_access_index));
struct inode___v66 {
	struct timespec64 __i_ctime;
} __attribute__((preserve_access_index));

#define FR_UBUILD_VMAS	2048	/* VMAs looked at per build, at most */
#define FR_UBUILD_YOUNG_NS	(1000 * 1000 * 1000ULL)	/* tables made for new processes only */
#define FR_VM_WRITE	0x2
#define FR_VM_EXEC	0x4
#define FR_VM_GROWSDOWN	0x100

/* @ino's change time in ns, as stat() gives it; 0 if this kernel's layout is unknown. */
static __always_inline __u64 inode_ctime(struct inode *ino)
{
	struct inode___pre66 *o = (void *)ino;
	struct inode___v66 *m = (void *)ino;

	/* Since 6.13 the top bit of the ns is a flag (multigrain timestamps' I_CTIME_QUERIED). */
	if (bpf_core_field_exists(ino->i_ctime_sec))
		return BPF_CORE_READ(ino, i_ctime_sec) * 1000000000ULL +
		       (BPF_CORE_READ(ino, i_ctime_nsec) & 0x7fffffff);
	if (bpf_core_field_exists(m->__i_ctime))
		return BPF_CORE_READ(m, __i_ctime.tv_sec) * 1000000000ULL +
		       BPF_CORE_READ(m, __i_ctime.tv_nsec);
	if (bpf_core_field_exists(o->i_ctime))
		return BPF_CORE_READ(o, i_ctime.tv_sec) * 1000000000ULL +
		       BPF_CORE_READ(o, i_ctime.tv_nsec);
	return 0;
}

/* The inode's modification time before 6.7 and in 6.7-6.10. */
struct inode___pre67m {
	struct timespec64 i_mtime;
} __attribute__((preserve_access_index));
struct inode___v67m {
	struct timespec64 __i_mtime;
} __attribute__((preserve_access_index));

/* @ino's modification time in ns, as stat() gives it; 0 if unknown. */
static __always_inline __u64 inode_mtime(struct inode *ino)
{
	struct inode___pre67m *o = (void *)ino;
	struct inode___v67m *m = (void *)ino;

	if (bpf_core_field_exists(ino->i_mtime_sec))
		return BPF_CORE_READ(ino, i_mtime_sec) * 1000000000ULL + BPF_CORE_READ(ino, i_mtime_nsec);
	if (bpf_core_field_exists(m->__i_mtime))
		return BPF_CORE_READ(m, __i_mtime.tv_sec) * 1000000000ULL +
		       BPF_CORE_READ(m, __i_mtime.tv_nsec);
	if (bpf_core_field_exists(o->i_mtime))
		return BPF_CORE_READ(o, i_mtime.tv_sec) * 1000000000ULL +
		       BPF_CORE_READ(o, i_mtime.tv_nsec);
	return 0;
}

/* The kernel's dev_t (major << 20 | minor) as userspace encodes it (glibc makedev()). */
static __always_inline __u64 user_dev(__u32 kdev)
{
	__u64 maj = kdev >> 20, min = kdev & 0xfffff;

	return (min & 0xff) | ((maj & 0xfff) << 8) | ((min & ~0xffULL) << 12) |
	       ((maj & ~0xfffULL) << 32);
}

/*
 * Fill @um for the executable VMA @vma of an mm whose vDSO is at @vdso:
 * its file's rows if the daemon has some (uinodes), else frame pointers.
 * Returns false for a file without rows.
 */
/* @py gets the interpreter file @f is, loaded at @bias, unless it has one already. */
static __always_inline void py_fill(struct fr_pyproc *py, const struct fr_uinode *f, __u64 bias)
{
	if (py->runtime || !f->py.runtime)
		return;
	__builtin_memcpy(py, &f->py, sizeof(*py));
	py->runtime += bias;
	for (int i = 0; i < 4; i++)
		if (py->eval[i])
			py->eval[i] += bias;
}

static __always_inline bool umap_fill(struct fr_umap *um, struct vm_area_struct *vma, __u64 vdso,
				      struct fr_pyproc *py)
{
	struct fr_uinode_key k = {};
	struct file *file = BPF_CORE_READ(vma, vm_file);
	struct fr_uinode *f;
	__u64 pgoff;

	um->begin = BPF_CORE_READ(vma, vm_start);
	um->end = BPF_CORE_READ(vma, vm_end);
	um->bias = 0;
	um->file = FR_UFILE_NONE;
	um->file_gen = 0;
	if (file) {
		struct inode *ino = BPF_CORE_READ(file, f_inode);

		k.dev = user_dev(BPF_CORE_READ(ino, i_sb, s_dev));
		k.ino = BPF_CORE_READ(ino, i_ino);
		k.ctime = inode_ctime(ino);
	} else if (um->begin != vdso) {
		return true;	/* anonymous code (a JIT): frame pointers, as the daemon does */
	}
	f = bpf_map_lookup_elem(&uinodes, &k);
	if (!f)
		return false;
	pgoff = BPF_CORE_READ(vma, vm_pgoff) << 12;
	for (int i = 0; i < FR_ULOADS; i++) {
		const struct fr_uload *l = &f->load[i];

		if (i >= f->nload)
			break;
		if (pgoff >= (l->offset & ~0xfffULL) && pgoff < l->offset + (l->filesz ?: 1)) {
			um->bias = um->begin - pgoff + l->offset - l->vaddr;
			um->file = f->file;
			um->file_gen = f->file_gen;
			py_fill(py, f, um->bias);
			return true;
		}
	}
	return true;	/* not code of the file's rows: frame pointers, as the daemon does */
}

/*
 * A table for @t's process, built here from its VMAs, so that a process
 * whose files the daemon has rows for (libc, ld.so, a build's compilers)
 * is walked with them from its first samples: the daemon's own table
 * comes only after it has drained the exec, read /proc and installed
 * one, which a process of 20-50 ms often outlives. Process context only
 * (@t is current): the VMA iterator refuses irqs-disabled callers, so a
 * sample cannot build (FIELD-NOTES). The iterator takes each VMA's own
 * lock and passes over those write-locked now, which at an mmap unlock
 * are the VMAs just changed: a table whose code pages do not add up to
 * the mm's exec_vm is FR_UPROC_PARTIAL, and built again at the next
 * unlock. The counters live in the map value rather than in registers,
 * so that the verifier sees unknown scalars at each step and the loop
 * converges instead of being walked FR_UBUILD_VMAS times. Published in
 * uprocs; the daemon replaces it with its own.
 */
static __noinline int uproc_build(struct task_struct *t, __u64 start)
{
	struct mm_struct *mm = t->mm;
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	__u32 zero = 0, tgid = t->tgid;
	struct fr_uproc *v;
	__u64 vdso = 0;
	bool ok = true;

	if (!ubuild_on || !mm)
		return 0;
	v = bpf_map_lookup_elem(&ubuild, &zero);
	if (!v)
		return 0;
#ifdef __TARGET_ARCH_x86
	vdso = (__u64)BPF_CORE_READ(mm, context.vdso);
#endif
	v->n = 0;
	v->pad = 0;		/* VMAs seen */
	v->exec_vm = 0;		/* code pages seen */
	v->flags = FR_UPROC_KERNEL;
	v->py.runtime = 0;	/* the daemon's table says where an interpreter is */
	if (bpf_iter_task_vma_new(&it, t, 0)) {
		bpf_iter_task_vma_destroy(&it);
		count(FR_CNT_UNWIND_KBUSY);
		return 0;
	}
	while ((vma = bpf_iter_task_vma_next(&it))) {
		__u64 fl = BPF_CORE_READ(vma, vm_flags);
		__u32 n = v->n;

		if (v->pad++ >= FR_UBUILD_VMAS) {
			ok = false;
			break;
		}
		if (!(fl & FR_VM_EXEC))
			continue;
		if (!(fl & (FR_VM_WRITE | FR_VM_GROWSDOWN)))
			v->exec_vm += (BPF_CORE_READ(vma, vm_end) - BPF_CORE_READ(vma, vm_start)) >> 12;
		if (n >= FR_UMAPS_MAX)
			continue;
		if (!umap_fill(&v->maps[n], vma, vdso, &v->py))
			v->flags |= FR_UPROC_MISSING;
		v->n = n + 1;
	}
	bpf_iter_task_vma_destroy(&it);
	if (!ok || !v->n) {
		count(FR_CNT_UNWIND_KBUSY);
		return 0;
	}
	if (v->exec_vm != BPF_CORE_READ(mm, exec_vm))
		v->flags |= FR_UPROC_PARTIAL;
	v->exec_vm = BPF_CORE_READ(mm, exec_vm);
	v->pad = 0;
	v->start = start;
	v->gen = ugen_of(tgid);
	if (bpf_map_update_elem(&uprocs, &tgid, v, BPF_ANY)) {
		count(FR_CNT_UNWIND_KBUSY);	/* uprocs full (procs_bound()) */
		return 0;
	}
	count(FR_CNT_UNWIND_KBUILT);
	return 1;
}

/* @t's table, if it is current for its incarnation and its code. */
static __always_inline struct fr_uproc *uproc_get(struct task_struct *t, __u64 start)
{
	__u32 tgid = BPF_CORE_READ(t, tgid);	/* @t may be another task (a vfork parent) */
	struct fr_uproc *p = bpf_map_lookup_elem(&uprocs, &tgid);

	if (!p || p->start != start)
		return NULL;
	if (p->gen != ugen_of(tgid))
		return NULL;
	if (p->exec_vm != BPF_CORE_READ(t, mm, exec_vm)) {
		/* code mapped or unmapped since the read */
		ugen_bump(tgid, BPF_CORE_READ(t, mm, exec_vm));
		count(FR_CNT_UNWIND_STALE);
		return NULL;
	}
	return p;
}

/*
 * In @t's process context: build it a table if its own is missing
 * (while it is young: an old process that was never sampled needs
 * none) or stale, or was built here with code missing.
 */
static __always_inline void uproc_refresh(struct task_struct *t, __u64 start)
{
	__u32 tgid = t->tgid, zero = 0, *busy;
	struct fr_uproc *p = bpf_map_lookup_elem(&uprocs, &tgid);

	if (p && p->start == start && p->gen == ugen_of(tgid) &&
	    p->exec_vm == BPF_CORE_READ(t, mm, exec_vm) && !(p->flags & FR_UPROC_PARTIAL))
		return;
	if (!p && bpf_ktime_get_boot_ns() - start > FR_UBUILD_YOUNG_NS)
		return;
	busy = bpf_map_lookup_elem(&ubusy, &zero);
	if (busy)
		*busy = tgid;
	uproc_build(t, start);
	if (busy)
		*busy = 0;
}

/*
 * @t's table of before the code change that this CPU is building its new
 * one for, if @t's sample interrupted that build (ubusy); else NULL.
 */
static __always_inline struct fr_uproc *uproc_building(struct task_struct *t, __u64 start)
{
	__u32 zero = 0, tgid = BPF_CORE_READ(t, tgid);
	__u32 *busy = bpf_map_lookup_elem(&ubusy, &zero);
	struct fr_uproc *p;

	if (!busy || *busy != tgid)
		return NULL;
	p = bpf_map_lookup_elem(&uprocs, &tgid);
	return p && p->start == start ? p : NULL;
}

/*
 * The searches are global functions: the verifier checks each once, on
 * its own, with unknown arguments. Inlined into the walk, every step's
 * outcomes multiplied the states it had to explore past the 1M
 * instruction limit ("BPF program is too large").
 */

/* Index of @p's mapping with begin <= pc < end, or -1. */
__noinline int fr_umap_find(const struct fr_uproc *p, __u64 pc)
{
	__u32 lo = 0, hi;

	if (!p)
		return -1;
	hi = p->n;
	if (hi > FR_UMAPS_MAX)
		hi = FR_UMAPS_MAX;
	for (int i = 0; i < FR_UMAPS_STEPS && lo < hi; i++) {
		__u32 mid = lo + (hi - lo) / 2;

		if (mid >= FR_UMAPS_MAX)
			return -1;
		if (pc < p->maps[mid].begin)
			hi = mid;
		else if (pc >= p->maps[mid].end)
			lo = mid + 1;
		else
			return (int)mid;
	}
	return -1;
}

/* Pool index of @f's last row with pc <= @v, or -1 (before the first row). */
__noinline int fr_urow_find(const struct fr_ufile *f, __u32 v)
{
	__u32 lo, hi;

	if (!f)
		return -1;
	lo = f->row_start;
	hi = f->row_start + f->nrows;
	if (hi < lo || hi > FR_UROWS_MAX)
		return -1;
	for (int i = 0; i < FR_UROWS_STEPS && lo < hi; i++) {
		__u32 mid = lo + (hi - lo) / 2;
		struct fr_urow *r = bpf_map_lookup_elem(&urows, &mid);

		if (!r)
			return -1;
		if (r->pc <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo != hi || lo == f->row_start)
		return -1;
	return (int)(lo - 1);
}

static __always_inline int read_u64(__u64 addr, __u64 *out)
{
	return bpf_probe_read_user(out, sizeof(*out), (const void *)addr);
}

/* One frame-pointer step: the caller's frame is at rbp. */
static __always_inline void uwalk_fp(struct uwalk *w)
{
	__u64 bp = w->bp, next_bp, ra;

	if (!bp || bp < w->sp || (bp & 7)) {
		w->end = FR_UEND_NO_INFO;
		return;
	}
	if (read_u64(bp, &next_bp) || read_u64(bp + 8, &ra)) {
		w->end = FR_UEND_READ;
		return;
	}
	if (!ra) {
		w->end = FR_UEND_NO_INFO;
		return;
	}
	w->sp = bp + 16;
	w->bp = next_bp;
	w->pc = ra;
	w->exact = 0;
	w->by_fp++;
}

/* Registers saved by the kernel in the signal frame's ucontext. */
static __always_inline void uwalk_signal(struct uwalk *w)
{
	__u64 sp = w->sp, nbp, nsp, nip;

	if (read_u64(sp + FR_UC_RBP, &nbp) || read_u64(sp + FR_UC_RSP, &nsp) ||
	    read_u64(sp + FR_UC_RIP, &nip)) {
		w->end = FR_UEND_READ;
		return;
	}
	w->bp = nbp;
	w->sp = nsp;
	w->pc = nip;
	w->exact = 1;		/* the interrupted pc, not a return address */
	w->by_rows++;
}

/* One step with row @r: the caller's pc, sp and bp. */
static __always_inline void uwalk_row(struct uwalk *w, const struct fr_urow *r)
{
	__u8 kind = r->kind & FR_UROW_KIND_MASK;
	__u64 cfa, ra, bp;

	switch (kind) {
	case FR_UROW_RSP:
		cfa = w->sp + r->cfa_off;
		break;
	case FR_UROW_RBP:
		cfa = w->bp + r->cfa_off;
		break;
	case FR_UROW_PLT:
		cfa = w->sp + r->cfa_off + ((w->pc & 15) >= (__u64)r->rbp_off ? 8 : 0);
		break;
	case FR_UROW_SIGNAL:
		uwalk_signal(w);
		return;
	case FR_UROW_STOP:
		w->end = FR_UEND_OUTERMOST;
		return;
	case FR_UROW_NONE:
		uwalk_fp(w);
		return;
	case FR_UROW_RA_RDI:
		/* Only the interrupted frame's registers are known. */
		if (w->n != 1 || !w->exact || !w->di) {
			w->end = FR_UEND_INVALID;
			return;
		}
		w->sp += r->cfa_off;
		w->pc = w->di;
		w->di = 0;
		w->exact = 0;
		w->by_rows++;
		return;
	default:
		w->end = FR_UEND_INVALID;
		return;
	}
	if (cfa <= w->sp) {
		w->end = FR_UEND_INVALID;	/* the stack only grows up when unwinding */
		return;
	}
	if (read_u64(cfa - 8, &ra)) {
		w->end = FR_UEND_READ;
		return;
	}
	if (r->kind & FR_UROW_RBP_CFA) {
		if (read_u64(cfa + (__s64)r->rbp_off * 8, &bp)) {
			w->end = FR_UEND_READ;
			return;
		}
		w->bp = bp;
	}
	w->sp = cfa;
	w->pc = ra;
	w->exact = 0;
	w->by_rows++;
	if (!ra)
		w->end = FR_UEND_OUTERMOST;	/* a thread's first frame pushes 0 */
}

/* The frame just recorded, where the walk can go on once its file has rows. */
static __always_inline void uwalk_note(struct uwalk *w)
{
	__u32 slot = w->cap_slot;
	struct fr_ucopy *c = bpf_map_lookup_elem(&ucap, &slot);

	if (!c || c->len)
		return;
	c->pc = w->pc;
	c->sp = w->sp;
	c->bp = w->bp;
	c->at = (__u16)(w->n - 1);
	c->exact = (__u8)w->exact;
	c->len = 1;
}

/* bpf_loop() callback: record w->pc and step to its caller; 1 stops. */
static long uwalk_step(__u32 i, void *arg)
{
	struct uwalk *w = arg;
	struct fr_uproc *p = w->p;
	struct fr_rec_sample *s = w->s;
	const struct fr_ufile *f;
	const struct fr_urow *r;
	const struct fr_umap *um;
	__u32 idx, file, at, mi;
	__u64 v;
	int m, ri;

	if (!p || !s)
		return 1;
	mi = w->last;
	barrier_var(mi);
	if (mi < FR_UMAPS_MAX && w->pc >= p->maps[mi].begin && w->pc < p->maps[mi].end)
		m = (int)mi;
	else
		m = fr_umap_find(p, w->pc);
	if (m < 0 && w->n) {
		w->end = FR_UEND_BAD_PC;	/* not recorded: no code is there */
		return 1;
	}
	idx = w->base + w->n;
	if (idx >= 2 * FR_MAX_STACK)
		return 1;
	s->ips[idx] = w->pc;
	w->n++;
	if (w->n >= FR_MAX_STACK) {
		w->end = FR_UEND_DEPTH;
		return 1;
	}
	mi = (__u32)m;
	barrier_var(mi);	/* keep the bound check on the index itself */
	if (m < 0 || mi >= FR_UMAPS_MAX) {
		uwalk_fp(w);		/* the leaf is in code we have no mapping for */
		return w->end ? 1 : 0;
	}
	um = &p->maps[mi];
	w->last = mi;
	file = um->file;
	f = file == FR_UFILE_NONE ? NULL : bpf_map_lookup_elem(&ufiles, &file);
	if (!f || f->gen != um->file_gen) {
		if (w->copy_on)
			uwalk_note(w);
		uwalk_fp(w);
		return w->end ? 1 : 0;
	}
	/* The daemon evicts the rows of files no walk came to for a while,
	 * and builds again those of an evicted file a walk comes to (nrows 0:
	 * no row is found, frame pointers). Written once a second at most. */
	if (f->used != w->epoch)
		((struct fr_ufile *)f)->used = w->epoch;
	v = w->pc - um->bias - (w->exact ? 0 : 1);
	ri = v >> 32 ? -1 : fr_urow_find(f, (__u32)v);
	at = (__u32)ri;
	r = ri < 0 ? NULL : bpf_map_lookup_elem(&urows, &at);
	if (!r)
		uwalk_fp(w);
	else
		uwalk_row(w, r);
	return w->end ? 1 : 0;
}

/*
 * The user registers of the sampled task: the sample's own when it hit
 * user mode, else those saved at kernel entry (a pc in a syscall is then
 * the instruction after it, walked as exact: the CFA does not change
 * across the syscall instruction).
 */
static __always_inline void uwalk_regs(struct bpf_perf_event_data *ctx,
				       struct task_struct *t, struct uwalk *w)
{
	struct pt_regs *ur;

	/* User mode: the perf context only reads whole words, not cs; a
	 * canonical x86-64 user address has the top 17 bits clear. */
	if (ctx->regs.ip < FR_USER_TOP) {
		w->pc = ctx->regs.ip;
		w->sp = ctx->regs.sp;
		w->bp = ctx->regs.bp;
		w->di = ctx->regs.di;
		return;
	}
	ur = (struct pt_regs *)bpf_task_pt_regs(t);
	w->pc = BPF_CORE_READ(ur, ip);
	w->sp = BPF_CORE_READ(ur, sp);
	w->bp = BPF_CORE_READ(ur, bp);
	w->di = BPF_CORE_READ(ur, di);
}

/*
 * unwind_user() - walk @t's user stack with @p's rows into s->ips[@base..].
 * Returns the number of frames; *@end says how the walk ended. If @cap is
 * not NULL and the walk met a file without rows, *@cap notes where
 * (cap->len 1), else cap->len is 0.
 */
static __always_inline __u32 unwind_user(struct bpf_perf_event_data *ctx,
					 struct task_struct *t, struct fr_uproc *p,
					 struct fr_rec_sample *s, __u32 base, __u32 *end,
					 struct fr_ucopy *cap)
{
	struct uwalk w = { .s = s, .p = p, .base = base, .exact = 1, .last = FR_UMAPS_MAX,
			   .epoch = (__u32)(bpf_ktime_get_ns() >> FR_UFILE_EPOCH_SHIFT) };
	__u32 zero = 0;
	struct fr_ucopy *c = cap ? bpf_map_lookup_elem(&ucap, &zero) : NULL;

	uwalk_regs(ctx, t, &w);
	if (c && (p->flags & FR_UPROC_MISSING)) {
		c->len = 0;
		w.copy_on = 1;
	}
	bpf_loop(FR_MAX_STACK, uwalk_step, &w, 0);
	*end = w.end ? w.end : FR_UEND_DEPTH;
	if (cap)
		cap->len = 0;
	if (c && w.copy_on && c->len)
		*cap = *c;
	if (w.by_rows)
		count_n(FR_CNT_UNWIND_ROWS, w.by_rows);
	if (w.by_fp)
		count_n(FR_CNT_UNWIND_FP, w.by_fp);
	return w.n;
}

/*
 * unwind_user_task() - the same walk from the user registers @t saved at
 * kernel entry: for a tracepoint (the OOM invoker, in a page fault or a
 * system call), which has no sampled registers. @cap as unwind_user()'s.
 */
static __always_inline __u32 unwind_user_task(struct task_struct *t, struct fr_uproc *p,
					      struct fr_rec_sample *s, __u32 *end,
					      struct fr_ucopy *cap)
{
	struct uwalk w = { .s = s, .p = p, .base = 0, .exact = 1, .last = FR_UMAPS_MAX,
			   .cap_slot = 1,
			   .epoch = (__u32)(bpf_ktime_get_ns() >> FR_UFILE_EPOCH_SHIFT) };
	struct pt_regs *ur = (struct pt_regs *)bpf_task_pt_regs(t);
	__u32 one = 1;
	struct fr_ucopy *c = cap ? bpf_map_lookup_elem(&ucap, &one) : NULL;

	w.pc = BPF_CORE_READ(ur, ip);
	w.sp = BPF_CORE_READ(ur, sp);
	w.bp = BPF_CORE_READ(ur, bp);
	w.di = BPF_CORE_READ(ur, di);
	if (c && (p->flags & FR_UPROC_MISSING)) {
		c->len = 0;
		w.copy_on = 1;
	}
	bpf_loop(FR_MAX_STACK, uwalk_step, &w, 0);
	*end = w.end ? w.end : FR_UEND_DEPTH;
	if (cap)
		cap->len = 0;
	if (c && w.copy_on && c->len)
		*cap = *c;
	return w.n;
}

/*
 * @mm's lock is about to be released: if the code it maps changed since
 * @tgid's entry last looked, bump the generation (a table built from a
 * maps read before the change is refused when installed). A process seen
 * for the first time gets an entry of generation 0 (what the daemon read
 * for it without one) that remembers its exec_vm: one change from then on
 * bumps. When ugen is full, its table goes.
 */
static __always_inline void unwind_check_code(__u32 tgid, struct mm_struct *mm)
{
	__u64 exec_vm = BPF_CORE_READ(mm, exec_vm);
	struct fr_ugen *g;

	if (!unwind_on)
		return;
	g = bpf_map_lookup_elem(&ugen, &tgid);
	if (!g) {
		struct fr_ugen first = { .gen = 0, .exec_vm = exec_vm };

		if (bpf_map_update_elem(&ugen, &tgid, &first, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&ugen, &tgid))
			bpf_map_delete_elem(&uprocs, &tgid);
		return;
	}
	if (g->exec_vm != exec_vm)
		ugen_bump(tgid, exec_vm);
}

/* A group's death: its table and generation go (the daemon drops its refs). */
static __always_inline void unwind_forget(struct task_struct *leader)
{
	__u32 tgid = BPF_CORE_READ(leader, tgid);
	struct fr_uproc *p = bpf_map_lookup_elem(&uprocs, &tgid);

	if (p && p->start == leader_start(leader))
		bpf_map_delete_elem(&uprocs, &tgid);
	bpf_map_delete_elem(&ugen, &tgid);
}

#endif /* FR_UNWIND_BPF_H */
