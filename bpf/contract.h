/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * contract.h - the one contract between the BPF programs and flightrecd.
 *
 * Every record the BPF side writes into the ring buffer starts with a
 * struct fr_rec_hdr and is followed by the type's body. Only fixed-width
 * fields, explicit padding and sizes checked below. Bump FR_CONTRACT_VERSION
 * on any change; userspace refuses a mismatch at load time.
 *
 * Time is CLOCK_BOOTTIME in ns (bpf_ktime_get_boot_ns()). A process
 * incarnation is (tgid, start) where start is the thread-group leader's
 * task->start_boottime in ns; /proc/PID/stat field 22 is the same value in
 * USER_HZ ticks.
 */
#ifndef FR_CONTRACT_H
#define FR_CONTRACT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define FR_CONTRACT_VERSION	13

#define FR_COMM_LEN		16
#define FR_MAX_STACK		127	/* kernel.perf_event_max_stack default */
#define FR_PATH_LEN		256

enum fr_rec_type {
	FR_REC_SAMPLE	= 1,	/* CPU sample with stacks */
	FR_REC_EXIT	= 2,	/* the whole thread group is gone */
	FR_REC_FORK	= 3,	/* a new process (not a thread) */
	FR_REC_EXEC	= 4,	/* successful execve */
	FR_REC_OOM	= 5,	/* oom/mark_victim: the OOM killer chose a victim */
	FR_REC_TASK	= 6,	/* task iterator: one live task at a snapshot */
	FR_REC_RSS	= 7,	/* rss_stat: an RSS counter moved (the ledger) */
	FR_REC_OOMADJ	= 8,	/* oom_score_adj_update: the value was written */
	FR_REC_STALL	= 9,	/* a reclaim, compaction or throttle stall ended */
	FR_REC_OFFCPU	= 10,	/* a blocked thread is back on a CPU */
	FR_REC_MAPS	= 11,	/* an exiting process's code mappings (struct fr_rec_maps) */
	FR_REC_RSS_SITE	= 12,	/* contract 13: where a thread's own growth logged a step */
};

/* Sample flags. */
#define FR_SAMPLE_KTRUNC	0x1	/* kernel stack hit FR_MAX_STACK */
#define FR_SAMPLE_UTRUNC	0x2	/* user stack hit FR_MAX_STACK */
#define FR_SAMPLE_KERR		0x4	/* bpf_get_stack failed for the kernel stack */
#define FR_SAMPLE_UERR		0x8	/* bpf_get_stack failed for the user stack */
#define FR_SAMPLE_KTHREAD	0x10	/* sampled task is a kernel thread */
#define FR_SAMPLE_IDLE		0x20	/* the idle task (pid 0) */
#define FR_SAMPLE_UKTAB		0x40	/* user stack walked with a table the BPF side
					 * built from the process's VMAs (FR_UPROC_KERNEL) */
#define FR_SAMPLE_UCOPY		0x80	/* a copy of the user stack follows ips[]:
					 * struct fr_ucopy, then its bytes */
#define FR_SAMPLE_UEND_SHIFT	8	/* bits 8..10: how the user stack ended */
#define FR_SAMPLE_UEND_MASK	(0x7 << FR_SAMPLE_UEND_SHIFT)
#define FR_SAMPLE_PY		0x800	/* the record ends in the thread's Python frames:
					 * pn struct fr_pyframe, then struct fr_pytail */
#define FR_SAMPLE_PYERR		0x1000	/* the thread's Python frames could not be read */

/*
 * How a sample's user stack ended (enum fr_uend in sample flags). The
 * walk with unwind rows (bpf/unwind.bpf.h) gives the first seven; a
 * process without rows yet is walked by frame pointers (NO_TABLE).
 */
enum fr_uend {
	FR_UEND_NONE	= 0,	/* no user stack: a kernel thread, or a task without a
				 * table in execve or exiting with its mm gone */
	FR_UEND_OUTERMOST = 1,	/* reached the outermost frame (_start, clone) */
	FR_UEND_NO_INFO	= 2,	/* code without rows whose frame pointers broke */
	FR_UEND_READ	= 3,	/* reading the user stack failed */
	FR_UEND_DEPTH	= 4,	/* FR_MAX_STACK user frames */
	FR_UEND_NO_TABLE = 5,	/* the process had no rows yet: frame pointers */
	FR_UEND_BAD_PC	= 6,	/* a return address in no executable mapping */
	FR_UEND_INVALID	= 7,	/* a rule the walker does not follow */
	FR_UEND_NR,
};

struct fr_rec_hdr {
	__u64 ts;		/* CLOCK_BOOTTIME ns */
	__u64 start;		/* incarnation: group leader start_boottime ns */
	__u32 tgid;
	__u32 tid;
	__u16 type;		/* enum fr_rec_type */
	__u16 cpu;
	__u32 size;		/* whole record in bytes, header included */
	char comm[FR_COMM_LEN];	/* the thread's comm at the event */
};

struct fr_rec_sample {
	struct fr_rec_hdr h;
	__u16 kn;		/* kernel frames in ips[0..kn) */
	__u16 un;		/* user frames in ips[kn..kn+un) */
	__u32 flags;		/* FR_SAMPLE_* */
	__u64 ips[];		/* leaf first, each part */
};
#define FR_SAMPLE_MAX_SIZE \
	(sizeof(struct fr_rec_sample) + 2 * FR_MAX_STACK * sizeof(__u64))

/*
 * Where a sample's user walk met code without rows (a file the daemon has
 * not built yet: FR_UPROC_MISSING, or no table at all) and did not reach
 * the outermost frame by frame pointers: that frame's registers and the
 * stack above it, so that the daemon can walk on from user frame @at once
 * the file's rows exist (recorder/unwind/uwalk.c). Taken only while the
 * ring is mostly empty: a copy never costs another record its room.
 */
#define FR_UCOPY_MAX		8192	/* bytes of stack, tried halving down to 512 */
#define FR_UCOPY_MIN		512

struct fr_ucopy {
	__u64 pc, sp, bp;	/* user frame @at's registers */
	__u32 gen;		/* the process's maps generation at the sample */
	__u16 at;		/* user frame index the walk goes on from */
	__u8 exact;		/* pc is the interrupted one (at == 0) */
	__u8 pad;
	__u32 len;		/* stack bytes that follow, from sp up */
	__u32 pad2;
};
/* A record with a stack and a copy after it: samples, stalls and blocks
 * (the largest of them, FR_STALL_MAX_SIZE, is asserted below). */
#define FR_REC_COPY_MAX_SIZE \
	((sizeof(struct fr_rec_hdr) + 40 + 2 * FR_MAX_STACK * sizeof(__u64)) + sizeof(struct fr_ucopy) + FR_UCOPY_MAX)

/* Counters at death. Memory in bytes, times in ns. */
struct fr_exit_stats {
	__u64 rss_anon;
	__u64 rss_file;
	__u64 rss_shmem;
	__u64 rss_peak;		/* signal->maxrss: the group's high-water mark */
	__u64 utime;		/* whole group, user */
	__u64 stime;		/* whole group, system */
	__u64 min_flt;
	__u64 maj_flt;
};

struct fr_rec_exit {
	struct fr_rec_hdr h;	/* tid is the last thread to exit */
	__s32 code;		/* wait(2) status: exit code << 8 | signal */
	__u32 nr_threads;	/* threads still counted at group death */
	struct fr_exit_stats st;
};

/*
 * A process's code as it exits, sent right before its exit record when the
 * daemon has not read its current maps (uread): a short process often ends
 * before the /proc worker gets to it, and without its mappings its frames
 * cannot be named. Sent too when its table lacked rows for a file it maps
 * (FR_UPROC_MISSING), flagged FR_XMAPS_MISSING: copies of its stacks may
 * wait for those rows, and are finished with these mappings once the
 * process is gone. Each executable file mapping with the file's identity
 * as fstat() gives it (the symbol cache's key: device as userspace encodes
 * it, inode, size, modification and change times in ns). 64 at most: a
 * python3 that imported numpy maps 40-60 files of code (32 cut them).
 */
#define FR_XMAPS_MAX		64

struct fr_xmap {
	__u64 begin, end, pgoff;
	__u64 dev, ino, size, mtime, ctime;
};

#define FR_XMAPS_MISSING	0x1	/* its table lacked rows for a file */

struct fr_rec_maps {
	struct fr_rec_hdr h;	/* the exiting thread and its incarnation */
	__u32 n;		/* mappings in m[] (the record's size says so too) */
	__u32 gen;		/* the process's maps generation (ugen) */
	__u32 vmas;		/* executable file mappings seen, n or more */
	__u32 flags;		/* FR_XMAPS_* */
	struct fr_xmap m[FR_XMAPS_MAX];
};

/*
 * The daemon read the maps of (tgid, start) at maps generation gen (the
 * uread map): its exit sends no struct fr_rec_maps.
 */
struct fr_uread {
	__u64 start;
	__u32 gen;
	__u32 pad;
};

struct fr_rec_fork {
	struct fr_rec_hdr h;	/* the forking thread and its incarnation */
	__u32 child_pid;
	__u32 pad;
	__u64 child_start;	/* the child's start_boottime ns */
};

struct fr_rec_exec {
	struct fr_rec_hdr h;	/* incarnation survives exec; comm is the new one */
	__u32 old_tid;		/* the thread that called execve */
	__u32 pad;
	char filename[FR_PATH_LEN];
};

/*
 * The OOM dossier. mark_victim runs in the context of the task whose
 * allocation invoked the OOM killer: the invoker, with its stacks. The
 * memory cgroup whose limit was hit is the nearest of the invoker's memory
 * cgroup and its ancestors with a limit that its usage is within
 * FR_OOM_MEMCG_SLACK of; none: a global OOM (memcg_id 0).
 */
#define FR_OOM_MEMCG_SLACK	(1 << 20)
#define FR_OOM_MEMCG_LEVELS	16	/* ancestors looked at (bounded loop) */

struct fr_rec_oom {
	struct fr_rec_hdr h;	/* the victim: tgid, start, comm */
	__u64 total_vm;		/* bytes */
	__u64 rss_anon;		/* bytes */
	__u64 rss_file;
	__u64 rss_shmem;
	__u64 pgtables;		/* bytes */
	__s32 oom_score_adj;
	__u32 uid;
	/* contract 3 */
	__u64 swapents;		/* bytes of swap entries */
	__u64 inv_start;	/* the invoker's incarnation */
	__u32 inv_tgid;
	__u32 inv_tid;
	char inv_comm[FR_COMM_LEN];
	__u64 memcg_id;		/* kernfs id of the memcg at its limit; 0: global */
	__u64 memcg_usage;	/* bytes */
	__u64 memcg_limit;	/* bytes */
	__u16 kn;		/* the invoker's kernel frames in ips[0..kn) */
	__u16 un;		/* and user frames in ips[FR_MAX_STACK..+un) */
	__u32 flags;		/* FR_SAMPLE_* truncation and error bits; FR_SAMPLE_PY */
	__u64 ips[2 * FR_MAX_STACK];
	/* contract 12: a struct fr_pybuf follows, the invoker's Python frames */
};

/*
 * The RSS ledger (rss_stat). Per mm the BPF side keeps the last value it
 * logged of each member, and logs a member again when it moved by the step
 * (max(rss_step, rss_step_pct % of the logged value)), or when a change has
 * waited rss_max_age without being logged (a timer of the mm), at the
 * owner's exit, and once on first sight of the mm. The value is the
 * counter get_mm_counter() reads, as /proc/PID/status and the OOM killer's
 * report do (a per-CPU counter's approximation since 6.2: FORMAT.md).
 * A change is the mm's owner's (mm->owner), whoever made it: kswapd's
 * reclaim, another process's process_vm_writev, the owner's own faults.
 */
enum fr_rss_member {		/* the kernel's MM_* counters, in its order */
	FR_RSS_FILE	= 0,
	FR_RSS_ANON	= 1,
	FR_RSS_SWAP	= 2,	/* swap entries */
	FR_RSS_SHMEM	= 3,
	FR_RSS_NMEMBERS,
};

enum fr_rss_why {
	FR_RSS_STEP	= 0,	/* moved by the step since the value logged */
	FR_RSS_AGE	= 1,	/* a change rss_max_age old, not logged yet */
	FR_RSS_FIRST	= 2,	/* first sight of the mm: its value then */
	FR_RSS_EXIT	= 3,	/* the owner's group exit: the death counters */
};

struct fr_rec_rss {
	struct fr_rec_hdr h;	/* tgid, start, comm: the mm's owner; tid: the
				 * owner's thread that made the change, 0 if
				 * another task or the timer did */
	__u64 value;		/* bytes */
	__u64 changed;		/* CLOCK_BOOTTIME ns the value was reached */
	__u32 by_tgid;		/* the tgid of another task that made it, else 0 */
	__u8 member;		/* enum fr_rss_member */
	__u8 why;		/* enum fr_rss_why */
	__u16 pad;
};

struct fr_rec_oomadj {
	struct fr_rec_hdr h;	/* the process whose value was written */
	__s32 value;		/* the new oom_score_adj */
	__u32 by_tgid;		/* the tgid of the task that wrote it */
};

/*
 * Stalls (bpf/stall.bpf.h). A thread stalls in direct reclaim, in reclaim
 * at its memory cgroup's limit, in a zone's direct compaction, in a
 * reclaim throttle, or is off the CPU blocked (D) or, with offcpu_sleep,
 * asleep (S). Stalls of at least min_stall (blocks: min_block) are
 * records of their own, with the stack; every stall, recorded or not, is
 * also summed per incarnation and kind in the stall_sum map, which the
 * daemon reads once a second. The kinds overlap: a throttle happens inside
 * a reclaim, and both can put the thread off the CPU.
 */
enum fr_stall_kind {
	FR_STALL_RECLAIM = 0,	/* direct reclaim (mm_vmscan_direct_reclaim_begin/end) */
	FR_STALL_MEMCG	= 1,	/* reclaim at a memcg's limit (mm_vmscan_memcg_reclaim_begin/end) */
	FR_STALL_COMPACT = 2,	/* one zone's direct compaction (mm_compaction_begin/end) */
	FR_STALL_THROTTLE = 3,	/* reclaim throttled (mm_vmscan_throttled, after the sleep) */
	FR_STALL_BLOCKED = 4,	/* off the CPU in an uninterruptible (D) sleep */
	FR_STALL_SLEEP	= 5,	/* off the CPU in an interruptible (S) sleep */
	FR_STALL_NKINDS,
};

struct fr_rec_stall {
	struct fr_rec_hdr h;	/* ts: when it ended; the stalled thread */
	__u64 begin;		/* CLOCK_BOOTTIME ns it began */
	__u64 result;		/* reclaim: pages reclaimed; compaction: enum compact_result */
	__u64 memcg_id;		/* memcg reclaim: kernfs id of the memcg at its limit
				 * (else the thread's own); 0 for the other kinds */
	__u32 gfp;		/* the allocation's gfp flags; 0: none */
	__s16 order;		/* the allocation's order; -1: none */
	__u8 kind;		/* enum fr_stall_kind */
	__u8 reason;		/* throttle: enum vmscan_throttle_state; else 0 */
	__u16 kn;		/* kernel frames in ips[0..kn) */
	__u16 un;		/* user frames in ips[kn..kn+un) */
	__u32 flags;		/* FR_SAMPLE_* truncation, error and user-end bits */
	__u64 ips[];		/* leaf first, each part */
};

struct fr_rec_offcpu {
	struct fr_rec_hdr h;	/* ts: back on a CPU; the blocked thread */
	__u64 begin;		/* CLOCK_BOOTTIME ns it left the CPU */
	__u32 state;		/* its task state then (sched_switch's prev_state) */
	__u8 kind;		/* FR_STALL_BLOCKED or FR_STALL_SLEEP */
	__u8 pad;
	__u16 kn;		/* kernel frames (where it waited) in ips[0..kn) */
	__u16 un;		/* user frames (captured as it left) in ips[kn..kn+un) */
	__u16 pad2;
	__u32 flags;		/* FR_SAMPLE_* truncation, error and user-end bits */
	__u64 ips[];
};
#define FR_STALL_MAX_SIZE \
	(sizeof(struct fr_rec_stall) + 2 * FR_MAX_STACK * sizeof(__u64))

/* stall_sum's key: an incarnation. */
struct fr_stall_key {
	__u32 tgid;
	__u32 pad;
	__u64 start;
};

/*
 * stall_sum's value: per kind, since the incarnation's first stall, the
 * stalls below the threshold (short: summed here only), those at or above
 * it whose record the full ring refused (lost), and all of them (recorded,
 * short and lost), each as a count and nanoseconds.
 */
struct fr_stall_sum {
	__u64 n_short[FR_STALL_NKINDS];
	__u64 ns_short[FR_STALL_NKINDS];
	__u64 n_lost[FR_STALL_NKINDS];
	__u64 ns_lost[FR_STALL_NKINDS];
	__u64 n_all[FR_STALL_NKINDS];
	__u64 ns_all[FR_STALL_NKINDS];
	__u32 dead;		/* the group exited: read it once more, then delete it */
	__u32 pad;
	char comm[FR_COMM_LEN];	/* the group leader's, when the entry was made */
};

/* One live task, written by the task iterator (bpf_seq_write, not the ring). */
struct fr_rec_task {
	struct fr_rec_hdr h;	/* ts is when the iterator visited it */
	__u32 ppid;		/* real parent's tgid */
	__u32 state;		/* task->__state */
	__u32 flags;		/* task->flags (PF_KTHREAD) */
	__u32 nr_threads;
	__u64 leader_start;	/* == h.start; kept for clarity of the record */
	/* contract 3: the group's memory as the OOM killer would list it */
	__u64 rss[FR_RSS_NMEMBERS];	/* bytes, get_mm_counter(); 0 without an mm */
	__u64 pgtables;		/* bytes */
	__s32 oom_score_adj;
	__u32 pad;
};

/*
 * Unwind rows (recorder/unwind/ builds them from .eh_frame, the walk is in
 * bpf/unwind.bpf.h). One row says, from its pc up to the next row's, how
 * to find the caller: CFA = rsp or rbp + cfa_off, the return address at
 * CFA - 8, rbp restored from CFA + 8 * rbp_off when FR_UROW_RBP_CFA is set
 * (x86-64 saves registers in 8-byte slots), else unchanged. The pc is the
 * file's virtual address (ELF p_vaddr space); files are below 4 GiB.
 */
enum fr_urow_kind {
	FR_UROW_RSP	= 0,	/* CFA = rsp + cfa_off */
	FR_UROW_RBP	= 1,	/* CFA = rbp + cfa_off */
	FR_UROW_PLT	= 2,	/* CFA = rsp + cfa_off, + 8 if (pc & 15) >= rbp_off */
	FR_UROW_SIGNAL	= 3,	/* rt_sigreturn trampoline: registers in the ucontext at rsp */
	FR_UROW_STOP	= 4,	/* the return address is undefined: outermost frame */
	FR_UROW_NONE	= 5,	/* no CFI here (a gap): walk by frame pointer */
	FR_UROW_INVALID	= 6,	/* CFI the walker cannot follow */
	FR_UROW_RA_RDI	= 7,	/* CFA = rsp + cfa_off, the return address in rdi: glibc's
				 * __vfork, which pops it there so that the child cannot
				 * overwrite it on the shared stack; followed only in the
				 * interrupted frame, whose registers are known */
};
#define FR_UROW_KIND_MASK	0x7
#define FR_UROW_RBP_CFA		0x8

/* x86-64 struct sigcontext inside the ucontext at rsp in __restore_rt
 * (FR_UROW_SIGNAL): where the interrupted frame's registers are. */
#define FR_UC_MCONTEXT	40
#define FR_UC_RBP	(FR_UC_MCONTEXT + 10 * 8)
#define FR_UC_RSP	(FR_UC_MCONTEXT + 15 * 8)
#define FR_UC_RIP	(FR_UC_MCONTEXT + 16 * 8)

struct fr_urow {
	__u32 pc;
	__u16 cfa_off;
	__u8 kind;		/* enum fr_urow_kind | FR_UROW_RBP_CFA */
	__s8 rbp_off;		/* in 8-byte slots; FR_UROW_PLT: the pc & 15 threshold */
};

/* A file's rows: [row_start, row_start + nrows) of the row pool, sorted by pc. */
struct fr_ufile {
	__u32 row_start;
	__u32 nrows;		/* 0: evicted while mapped (cold), walked by frame pointer */
	__u32 gen;		/* bumped when the slot is reused */
	__u32 used;		/* the last walk that came to this file, in CLOCK_MONOTONIC
				 * ns >> FR_UFILE_EPOCH_SHIFT: the BPF side writes it */
};

#define FR_UFILE_EPOCH_SHIFT	30	/* the used stamp's unit: 1.07 s */

#define FR_UFILE_NONE		0xffffffffu	/* a mapping walked by frame pointer */
/* Executable mappings per process: 112 keeps a struct fr_uproc, with the
 * hash map's own header, inside one 4 KiB allocation. */
#define FR_UMAPS_MAX		112
#define FR_UMAPS_STEPS		8	/* binary search steps: 2^7 >= FR_UMAPS_MAX, + 1 */
#define FR_UROWS_STEPS		25	/* row search steps: pools below 2^24 rows */
#define FR_UROWS_MAX		(1u << 24)

/* One executable mapping: pc - bias is the file's virtual address. */
struct fr_umap {
	__u64 begin;
	__u64 end;
	__u64 bias;
	__u32 file;		/* slot in the file table, or FR_UFILE_NONE */
	__u32 file_gen;		/* the slot's gen when this was written */
};

/*
 * Interpreted frames (issue 27). A process whose interpreter the daemon
 * recognised (recorder/unwind/pydetect.c) gets, in its table, where the
 * interpreter's state is and the layout of its structures: the BPF side
 * walks the sampled thread's Python frames with them, bounded, and sends
 * per frame what the daemon needs to name it later. The layout is a table
 * of offsets per CPython minor version: another version is another table,
 * not another walker.
 */
#define FR_PY_MAX_FRAMES	48	/* Python frames walked per sample */
#define FR_PY_MAX_THREADS	32	/* thread states searched for the sampled thread */

enum fr_pyoff {
	FR_PYOFF_TSTATE_CURRENT,	/* _PyRuntime: the thread state holding the GIL */
	FR_PYOFF_INTERP_HEAD,		/* _PyRuntime: the first interpreter */
	FR_PYOFF_INTERP_THREADS,	/* interpreter: its first thread state */
	FR_PYOFF_TSTATE_NEXT,		/* thread state: the next one */
	FR_PYOFF_TSTATE_TID,		/* thread state: native_thread_id (the kernel's tid) */
	FR_PYOFF_TSTATE_CFRAME,		/* thread state: its _PyCFrame */
	FR_PYOFF_CFRAME_CURRENT,	/* _PyCFrame: current_frame */
	FR_PYOFF_FRAME_CODE,		/* _PyInterpreterFrame: f_code */
	FR_PYOFF_FRAME_PREVIOUS,	/* ... previous */
	FR_PYOFF_FRAME_INSTR,		/* ... prev_instr */
	FR_PYOFF_FRAME_ENTRY,		/* ... is_entry (a byte) */
	FR_PYOFF_CODE_CODE,		/* PyCodeObject: the first instruction */
	FR_PYOFF_CODE_PRINT,		/* ... the 24 bytes its fingerprint is made of */
	FR_PYOFF_NR = 16,
};

struct fr_pyproc {
	__u64 runtime;		/* address of _PyRuntime; 0: no interpreter */
	__u64 eval[4];		/* [eval[0], eval[1]) and [eval[2], eval[3]): the eval
				 * loop's code, its cold part apart */
	__u16 off[FR_PYOFF_NR];	/* enum fr_pyoff */
	__u32 version;		/* Py_Version: 0x030b02f0 is 3.11.2 */
	__u32 pad;
};

/* One Python frame, leaf first: the code object, where in it, its fingerprint. */
struct fr_pyframe {
	__u64 code;
	__u32 lasti;		/* instruction index (code units) | FR_PYFRAME_ENTRY */
	__u32 print;		/* fr_pyprint() of the code object's FR_PYOFF_CODE_PRINT bytes */
};
#define FR_PYFRAME_ENTRY	0x80000000u	/* the eval loop was entered here: the
						 * frames up to here are one native frame's */

/* After the Python frames of a sample: their count and the eval loop's code. */
struct fr_pytail {
	__u64 eval[4];
	__u32 pn;
	__u32 pad;
};
#define FR_PY_SEC_MAX	(FR_PY_MAX_FRAMES * sizeof(struct fr_pyframe) + sizeof(struct fr_pytail))

/*
 * A thread's Python frames as the BPF side walks them: tail.pn of the
 * slots used, leaf first. A sample sends the used slots and the tail
 * (FR_PY_SEC_MAX at most); an OOM record is followed by the invoker's,
 * whole, when its flags have FR_SAMPLE_PY (contract 12).
 */
struct fr_pybuf {
	struct fr_pyframe f[FR_PY_MAX_FRAMES];
	struct fr_pytail tail;
};

/*
 * Where the RSS grew (contract 13): when the ledger logs a step up of the
 * anonymous or shared memory that the owner's own thread made (a fault of
 * its own), the ledger's program loaded after "ready" (on_rss_full, which
 * replaces on_rss) walks that thread's user stack, with its Python frames,
 * at that moment. The ledger's entry comes first; this names the code
 * that made it.
 */
struct fr_rec_rss_site {
	struct fr_rec_hdr h;	/* tgid, start, comm: the owner; tid: its thread */
	__u64 value;		/* bytes: the entry's value */
	__u64 grown;		/* bytes since the value logged before it */
	__u8 member;		/* enum fr_rss_member: FR_RSS_ANON or FR_RSS_SHMEM */
	__u8 pad;
	__u16 un;		/* user frames in ips[0..un) */
	__u32 flags;		/* FR_SAMPLE_* user bits; FR_SAMPLE_PY: py holds frames */
	__u64 ips[FR_MAX_STACK];
	struct fr_pybuf py;
};


/*
 * A code object's fingerprint: a fold of six 32-bit fields of it (3.11:
 * co_argcount .. co_nlocalsplus), read by the BPF side at the sample and by
 * the daemon when it reads the object. A code object freed and another made
 * at its address keep their names apart unless all six agree.
 */
static inline __u32 fr_pyprint(const __u32 w[6])
{
	__u32 h = 0x9e3779b9u;

	for (int i = 0; i < 6; i++) {
		h ^= w[i];
		h *= 0x01000193u;
		h ^= h >> 15;
	}
	return h;
}

/*
 * A process's executable mappings, sorted by begin. Valid while start is
 * the incarnation's, gen equals the process's maps generation (the BPF
 * side bumps it on exec), and exec_vm equals the mm's exec_vm: the pages
 * of its mappings that are executable and not writable, as the maps read
 * counted them. Any munmap, MAP_FIXED mmap or mprotect of code changes it.
 */
struct fr_uproc {
	__u64 start;
	__u64 exec_vm;		/* pages */
	__u32 gen;
	__u32 n;
	__u32 flags;		/* FR_UPROC_* */
	__u32 pad;
	struct fr_pyproc py;	/* its Python interpreter, runtime 0: none */
	struct fr_umap maps[FR_UMAPS_MAX];
};

/*
 * Built by the BPF side, at an exec or an mmap unlock of a process without
 * a current table, from its VMAs and the uinodes map: rows from the first
 * sample for the files the daemon has rows for. The daemon replaces it
 * with its own.
 */
#define FR_UPROC_KERNEL		0x1
#define FR_UPROC_MISSING	0x2	/* a file mapped had no rows: frame pointers there */
#define FR_UPROC_PARTIAL	0x4	/* VMAs locked at the build were left out */

/*
 * A file's identity as the BPF side reads it off a mapping (the uinodes
 * key): the device as userspace encodes it (makedev() of the major and
 * minor /proc/PID/maps shows), the inode, and its change time in ns. All
 * three 0: the vDSO.
 */
struct fr_uinode_key {
	__u64 dev;
	__u64 ino;
	__u64 ctime;
};

#define FR_ULOADS		4	/* executable PT_LOADs a uinodes value holds */

/* One PT_LOAD: a mapping at file offset pgoff of it has bias start - pgoff + offset - vaddr. */
struct fr_uload {
	__u64 offset;
	__u64 vaddr;
	__u64 filesz;
};

/* A file with rows, for a table built in the kernel (the uinodes value). */
struct fr_uinode {
	__u32 file;		/* slot in the file table */
	__u32 file_gen;
	__u32 nload;
	__u32 pad;
	struct fr_uload load[FR_ULOADS];
	struct fr_pyproc py;	/* the interpreter the file is, in its own addresses;
				 * runtime 0: none (a table built here gets it from the
				 * first file that is one, at the process's exec) */
};

/*
 * A process's maps generation (the ugen map's value), the mm's exec_vm it
 * last saw, and when it last moved (0: never since the entry was made).
 */
struct fr_ugen {
	__u32 gen;
	__u32 pad;
	__u64 exec_vm;		/* pages */
	__u64 ts;		/* CLOCK_BOOTTIME ns of the last bump */
};

/* Per-CPU counters: indexes into the 'counters' per-CPU array map. */
enum fr_counter {
	FR_CNT_RESERVE = 0,	/* ring buffer full: record dropped (a loss) */
	FR_CNT_SCRATCH,		/* per-CPU scratch unavailable (a loss) */
	FR_CNT_IDLE,		/* samples of the idle task, not recorded */
	FR_CNT_UNWIND_ROWS,	/* user frames found with unwind rows */
	FR_CNT_UNWIND_FP,	/* user frames found by frame pointer in a process with rows */
	FR_CNT_UNWIND_STALE,	/* samples whose process's rows were stale: its code changed */
	FR_CNT_UNWIND_KBUILT,	/* tables the BPF side built from a process's VMAs */
	FR_CNT_UNWIND_KBUSY,	/* builds not done: mmap lock taken, too many VMAs, uprocs full */
	FR_CNT_RSS_UNOWNED,	/* changes to an mm with no live owner (an exit's or exec's teardown) */
	FR_CNT_RSS_FULL,	/* mms not tracked: the ledger's map was full (a loss) */
	FR_CNT_STALL_UNTRACKED,	/* stalls not timed: no room for the thread's state, or a stale one (a loss) */
	FR_CNT_STALL_SUM_FULL,	/* stalls not summed: stall_sum was full (a loss) */
	FR_CNT_OFFCPU_NOSTACK,	/* blocks recorded without a user stack: off_stk was full */
	FR_CNT_UCOPY,		/* samples that carried a copy of their user stack */
	FR_CNT_UCOPY_SKIPPED,	/* copies not taken: the ring was busy or the stack unreadable */
	FR_CNT_XMAPS,		/* exits that sent their code mappings (the daemon had not read them) */
	FR_CNT_XMAPS_SKIPPED,	/* ... not sent: the ring was busy, or the mm's lock taken */
	FR_CNT_NR,
};

#define FR_RING_MIN_BYTES	(256 * 1024)

_Static_assert(sizeof(struct fr_rec_hdr) == 48, "fr_rec_hdr size");
_Static_assert(sizeof(struct fr_rec_sample) == 56, "fr_rec_sample size");
_Static_assert(sizeof(struct fr_exit_stats) == 64, "fr_exit_stats size");
_Static_assert(sizeof(struct fr_rec_exit) == 120, "fr_rec_exit size");
_Static_assert(sizeof(struct fr_rec_fork) == 64, "fr_rec_fork size");
_Static_assert(sizeof(struct fr_rec_exec) == 56 + FR_PATH_LEN, "fr_rec_exec size");
_Static_assert(sizeof(struct fr_rec_oom) == 168 + 2 * FR_MAX_STACK * 8, "fr_rec_oom size");
_Static_assert(sizeof(struct fr_rec_rss) == 72, "fr_rec_rss size");
_Static_assert(sizeof(struct fr_rec_rss_site) == 72 + FR_MAX_STACK * 8 + FR_PY_SEC_MAX,
	       "fr_rec_rss_site size");
_Static_assert(sizeof(struct fr_rec_oomadj) == 56, "fr_rec_oomadj size");
_Static_assert(sizeof(struct fr_rec_task) == 120, "fr_rec_task size");
_Static_assert(sizeof(struct fr_rec_stall) == 88, "fr_rec_stall size");
_Static_assert(sizeof(struct fr_rec_offcpu) == 72, "fr_rec_offcpu size");
_Static_assert(sizeof(struct fr_stall_key) == 16, "fr_stall_key size");
_Static_assert(sizeof(struct fr_stall_sum) == 6 * 8 * FR_STALL_NKINDS + 24, "fr_stall_sum size");
_Static_assert(FR_STALL_MAX_SIZE >= sizeof(struct fr_rec_offcpu) + 2 * FR_MAX_STACK * 8,
	       "one scratch builds both stall records");
_Static_assert(sizeof(struct fr_urow) == 8, "fr_urow size");
_Static_assert(sizeof(struct fr_ufile) == 16, "fr_ufile size");
_Static_assert(sizeof(struct fr_ugen) == 24, "fr_ugen size");
_Static_assert(sizeof(struct fr_umap) == 32, "fr_umap size");
_Static_assert(sizeof(struct fr_pyproc) == 80, "fr_pyproc size");
_Static_assert(sizeof(struct fr_pyframe) == 16, "fr_pyframe size");
_Static_assert(sizeof(struct fr_pytail) == 40, "fr_pytail size");
_Static_assert(sizeof(struct fr_uproc) == 32 + 80 + 32 * FR_UMAPS_MAX, "fr_uproc size");
_Static_assert(sizeof(struct fr_uinode_key) == 24, "fr_uinode_key size");
_Static_assert(sizeof(struct fr_uinode) == 16 + 24 * FR_ULOADS + 80, "fr_uinode size");
_Static_assert(sizeof(struct fr_uproc) + 64 <= 4096, "fr_uproc fits a page");
_Static_assert(FR_SAMPLE_MAX_SIZE == 56 + 254 * 8, "sample max size");
_Static_assert(sizeof(struct fr_ucopy) == 40, "fr_ucopy size");
_Static_assert(sizeof(struct fr_xmap) == 64, "fr_xmap size");
_Static_assert(sizeof(struct fr_rec_maps) == sizeof(struct fr_rec_hdr) + 16 + 64 * FR_XMAPS_MAX,
	       "fr_rec_maps size");
_Static_assert(sizeof(struct fr_uread) == 16, "fr_uread size");
_Static_assert(FR_REC_COPY_MAX_SIZE == FR_STALL_MAX_SIZE + 40 + FR_UCOPY_MAX, "copy record size");
_Static_assert(FR_PY_SEC_MAX == 808, "Python section size");
_Static_assert(sizeof(struct fr_pybuf) == FR_PY_SEC_MAX, "Python buffer size");
_Static_assert(FR_STALL_MAX_SIZE >= FR_SAMPLE_MAX_SIZE, "stalls are the largest stack records");

#endif /* FR_CONTRACT_H */
