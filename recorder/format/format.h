/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * format.h - the dump format, for the writer (flightrecd) and the reader
 * (flightrec) alike. docs/FORMAT.md describes the bytes; this header and
 * format.c are the only code that knows them.
 *
 * A dump file is one LZ4 frame. Decompressed, it is a 32-byte file header
 * followed by sections; each section is a 16-byte header (tag, item count,
 * payload length), the payload, and a CRC32C of header and payload. List
 * sections may be split into several chunks of the same tag; item indexes
 * run on across chunks. Integers in payloads are LEB128 varints (signed
 * ones zigzag), strings are a varint length and bytes.
 *
 * struct fr_dump is the decoded model. The writer fills everything but the
 * events, which it streams from the frozen window through a callback.
 */
#ifndef FR_FORMAT_H
#define FR_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvlist.h"

#define FR_DUMP_MAGIC		"FLTRDUMP"
#define FR_DUMP_MAJOR		1
#define FR_DUMP_MINOR		8
#define FR_DUMP_HDR_SIZE	32
#define FR_MAX_STR		(1u << 20)	/* longest string a dump may hold */
#define FR_SECTION_HDR_SIZE	16
#define FR_DUMP_SUFFIX		".frd"
#define FR_DUMP_MAX_BYTES	(4ULL << 30)	/* reader's cap on decompressed size */

#define FR_TAG(a, b, c, d)	((uint32_t)(a) | (uint32_t)(b) << 8 | \
				 (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
enum fr_section {
	FR_SEC_META	= FR_TAG('M', 'E', 'T', 'A'),	/* key/values: host, clocks, config */
	FR_SEC_TRIG	= FR_TAG('T', 'R', 'I', 'G'),	/* triggers this dump answers */
	FR_SEC_WIND	= FR_TAG('W', 'I', 'N', 'D'),	/* window bounds, watermark */
	FR_SEC_LOSS	= FR_TAG('L', 'O', 'S', 'S'),	/* key/values: loss counters */
	FR_SEC_STRS	= FR_TAG('S', 'T', 'R', 'S'),	/* string table */
	FR_SEC_PROC	= FR_TAG('P', 'R', 'O', 'C'),	/* process table (incarnations) */
	FR_SEC_BINS	= FR_TAG('B', 'I', 'N', 'S'),	/* binaries: path, build-id */
	FR_SEC_FRAM	= FR_TAG('F', 'R', 'A', 'M'),	/* symbolized frames */
	FR_SEC_FSYS	= FR_TAG('F', 'S', 'Y', 'S'),	/* frames' mangled names (1.3) */
	FR_SEC_LINE	= FR_TAG('L', 'I', 'N', 'E'),	/* frames' source lines and inlining (1.3) */
	FR_SEC_PYFR	= FR_TAG('P', 'Y', 'F', 'R'),	/* frames that are Python functions (1.7) */
	FR_SEC_STAK	= FR_TAG('S', 'T', 'A', 'K'),	/* stacks of frame indexes */
	FR_SEC_THRD	= FR_TAG('T', 'H', 'R', 'D'),	/* threads: tid -> name (1.1) */
	FR_SEC_EVNT	= FR_TAG('E', 'V', 'N', 'T'),	/* events, time ordered */
	FR_SEC_END	= FR_TAG('E', 'N', 'D', '.'),	/* totals; marks completeness */
};

struct fr_dump_trigger {
	char *name;		/* config section name, or "signal"/"manual" */
	char *type;		/* signal | psi | oom | command */
	char *reason;		/* human text */
	char *detail;		/* e.g. the PSI line; may be "" */
	uint64_t ts;		/* CLOCK_BOOTTIME ns */
	uint32_t victim;	/* oom: process index + 1 of the victim, 0: none (1.2) */
};

struct fr_dump_window {
	uint64_t start;		/* ns, CLOCK_BOOTTIME: first instant covered */
	uint64_t end;		/* ns: the freeze instant (the trigger time) */
	uint64_t watermark;	/* processed-until when frozen; < end only if
				 * the drain could not catch up (complete iff >= end) */
	uint64_t span;		/* configured window length */
	uint64_t first_event;	/* ts of the oldest event kept (0: none) */
};

/* Where an incarnation's entry came from, and what it went through. */
#define FR_DPROC_LIVE		0x1	/* alive at the snapshot */
#define FR_DPROC_EXITED		0x2	/* exit seen; exit_ts/exit_code valid */
#define FR_DPROC_PROCFS		0x4	/* exe/cmdline/... read from /proc; stamp says when */
#define FR_DPROC_EVENTS		0x8	/* has events in the window */
#define FR_DPROC_KTHREAD	0x10
#define FR_DPROC_EXECED		0x20

struct fr_dump_proc {
	uint32_t pid;
	uint32_t ppid;
	uint64_t start;		/* ns, CLOCK_BOOTTIME */
	uint64_t exit_ts;	/* ns, 0 while alive */
	int32_t exit_code;	/* wait status */
	uint32_t flags;		/* FR_DPROC_* */
	uint32_t comm;		/* string indexes */
	uint32_t exe;
	uint32_t cmdline;	/* arguments joined by spaces */
	uint32_t state;		/* /proc state letter, 0 if unknown */
	uint64_t rss;		/* bytes: at the snapshot, or at death */
	uint64_t stamp;		/* ns: when the /proc fields were read */
	uint32_t cgroup;	/* string index (1.1; 0 in 1.0 dumps) */
	/* 1.4: memory and identity, as the OOM killer would list it */
	uint32_t has_mem;	/* the fields below are known (1.4, live or exited) */
	int32_t oom_score_adj;	/* at the snapshot (or at death: last known) */
	uint64_t rss_file, rss_anon, rss_shmem, swap;	/* bytes, kernel counters */
	uint64_t pgtables;	/* bytes */
	uint64_t mem_stamp;	/* ns: when the counters were read */
	uint32_t nspid;		/* the pid in its own PID namespace; 0: the same */
	uint32_t memcg;		/* string index: memory cgroup path (v1 memory
				 * hierarchy, else v2), 0: unknown */
	uint32_t container;	/* string index: container id from the cgroup path, 0: none */
	uint64_t cgroup_id;	/* the v2 cgroup's id (its directory's inode), 0: unknown */
};

struct fr_dump_thread {
	uint32_t proc;		/* process index */
	uint32_t tid;
	uint32_t name;		/* string index */
};

struct fr_dump_bin {
	uint32_t path;		/* string index */
	uint8_t build_id_len;
	uint8_t build_id[20];
};

enum fr_frame_kind {
	FR_FRAME_KERNEL = 0,
	FR_FRAME_USER	= 1,
	/*
	 * (1.7) A Python function: sym is "qualname (file:line)", its one
	 * LINE level the function, file and line, addr its code object's.
	 * Written as a user frame and listed in PYFR, so that a 1.6 reader
	 * shows it as a user frame named so.
	 */
	FR_FRAME_PYTHON	= 2,
};

/* Most LINE entries of one frame the reader accepts (the writer emits at most 16). */
#define FR_DUMP_MAX_LINES	64

/*
 * One level of a frame's source position (LINE, 1.3). A frame's levels
 * are innermost first: the functions inlined at its address, then the
 * function the address is in. The first level has the address's own file
 * and line; each later one the call site of the level before it.
 */
struct fr_dump_line {
	uint32_t func;		/* string index of the function, 0: unknown */
	uint32_t file;		/* string index of the source file, 0: unknown */
	uint32_t line;		/* 0: unknown */
	uint32_t col;		/* 0: unknown */
};

struct fr_dump_frame {
	uint64_t addr;		/* the sampled instruction address */
	uint8_t kind;		/* enum fr_frame_kind */
	uint32_t sym;		/* string index of the symbol, 0: unresolved */
	uint64_t sym_off;
	uint32_t bin;		/* binary index + 1, 0: none (kernel: module name in sym) */
	uint64_t file_off;	/* user: offset in the binary, for offline symbolization */
	uint32_t system_name;	/* string index of the mangled name (FSYS, 1.3); 0: sym is it */
	uint32_t line;		/* its first level in fr_dump.line (LINE, 1.3) */
	uint32_t nlines;	/* its number of levels; 0: no source position */
};

struct fr_dump_stack {
	uint32_t kn;		/* kernel frames first, then user frames */
	uint32_t un;
	uint32_t *frames;	/* kn + un frame indexes, leaf first in each part */
};

struct fr_dump_exit {
	int32_t code;
	uint64_t rss_anon, rss_file, rss_shmem, rss_peak;
	uint64_t utime, stime, min_flt, maj_flt;
};

struct fr_dump_oom {
	uint64_t total_vm, rss_anon, rss_file, rss_shmem, pgtables;
	int64_t oom_score_adj;
	uint64_t uid;
	/* 1.4: the dossier. The event's stack is the invoker's. */
	uint64_t swapents;	/* bytes */
	uint32_t invoker;	/* process index + 1 of the task whose allocation invoked it; 0: unknown */
	uint32_t invoker_tid;
	uint32_t memcg;		/* string index of the memory cgroup at its limit; 0: global */
	uint64_t memcg_usage;	/* bytes */
	uint64_t memcg_limit;	/* bytes */
};

/* An RSS ledger entry (1.4): member's value since @changed. */
enum fr_dump_rss_member {
	FR_DRSS_FILE	= 0,
	FR_DRSS_ANON	= 1,
	FR_DRSS_SWAP	= 2,
	FR_DRSS_SHMEM	= 3,
	FR_DRSS_NMEMBERS,
};
enum fr_dump_rss_why {
	FR_DRSS_STEP	= 0,	/* moved by the step */
	FR_DRSS_AGE	= 1,	/* a smaller change, rss_max_age old */
	FR_DRSS_FIRST	= 2,	/* first sight of the process's mm */
	FR_DRSS_EXIT	= 3,	/* at death: the death counters */
	FR_DRSS_NWHY,
};
struct fr_dump_rss {
	uint8_t member;		/* enum fr_dump_rss_member */
	uint8_t why;		/* enum fr_dump_rss_why */
	uint32_t by;		/* pid of another process that made the change
				 * (kswapd, a reader), 0: the process itself */
	uint64_t value;		/* bytes */
	uint64_t changed;	/* ns: when it took this value (<= ts) */
};

/* An oom_score_adj write (1.4). */
struct fr_dump_oomadj {
	int32_t value;
	uint32_t by;		/* pid of the writer */
};

/* The system's memory, read once a second (1.4): bytes and counters. */
enum fr_dump_memsys_field {
	FR_MSYS_MEM_TOTAL,	/* /proc/meminfo, bytes */
	FR_MSYS_MEM_AVAILABLE,
	FR_MSYS_MEM_FREE,
	FR_MSYS_SWAP_TOTAL,
	FR_MSYS_SWAP_FREE,
	FR_MSYS_PGSCAN_KSWAPD,	/* /proc/vmstat, pages (events) */
	FR_MSYS_PGSCAN_DIRECT,
	FR_MSYS_PGSTEAL_KSWAPD,
	FR_MSYS_PGSTEAL_DIRECT,
	FR_MSYS_ALLOCSTALL,	/* allocstall_*, summed over zones */
	FR_MSYS_REFAULT_ANON,	/* workingset_refault_anon */
	FR_MSYS_REFAULT_FILE,
	FR_MSYS_PSWPIN,
	FR_MSYS_PSWPOUT,
	FR_MSYS_OOM_KILL,
	FR_MSYS_NFIELDS,
};
struct fr_dump_memsys {
	uint64_t v[FR_MSYS_NFIELDS];
};

/* A memory cgroup's usage, read once a second (1.4); comm names the cgroup. */
#define FR_DMCG_V1		0x1	/* a v1 memory controller directory */
#define FR_DMCG_UNLIMITED	0x2	/* no limit */
struct fr_dump_memcg {
	uint32_t flags;		/* FR_DMCG_* */
	uint64_t usage;		/* bytes: memory.current / memory.usage_in_bytes */
	uint64_t limit;		/* bytes: memory.max / memory.limit_in_bytes */
	uint64_t anon, file;	/* bytes: memory.stat anon, file (v1: total_rss, total_cache) */
	uint64_t ev_high, ev_max, ev_oom, ev_oom_kill;	/* v2 memory.events; v1: max = failcnt */
};

/*
 * Stalls (1.5). The kinds, as the recorder names them (FORMAT.md §7.9):
 * reclaim, memcg reclaim, compaction, throttle happen on the CPU (or in
 * its sleeps) inside an allocation; blocked and sleep are time off the
 * CPU. A throttle happens inside a reclaim: kinds overlap.
 */
enum fr_dump_stall_kind {
	FR_DSTALL_RECLAIM	= 0,	/* direct reclaim */
	FR_DSTALL_MEMCG		= 1,	/* reclaim at a memory cgroup's limit */
	FR_DSTALL_COMPACT	= 2,	/* one zone's direct compaction */
	FR_DSTALL_THROTTLE	= 3,	/* reclaim throttled */
	FR_DSTALL_BLOCKED	= 4,	/* off the CPU, uninterruptible (D) */
	FR_DSTALL_SLEEP		= 5,	/* off the CPU, interruptible (S) */
	FR_DSTALL_NKINDS,
};

/* A stall (1.5): the event's ts is its end; flags and stack as a sample's. */
struct fr_dump_stall {
	uint8_t kind;		/* FR_DSTALL_RECLAIM..FR_DSTALL_THROTTLE */
	uint64_t begin;		/* ns */
	uint64_t result;	/* reclaim: pages reclaimed; compaction: compact_result */
	uint32_t gfp;
	int32_t order;		/* -1: none */
	uint32_t reason;	/* throttle: the kernel's reason */
	uint32_t memcg;		/* memcg reclaim: string index of the cgroup's path, 0: unknown */
	uint64_t memcg_id;	/* its kernfs id, 0: none */
};

/* A block off the CPU (1.5): the event's ts is when the thread ran again. */
/*
 * Where the RSS grew (1.8): the user stack (with its Python frames) of the
 * owner's thread whose own fault made a ledger entry's step up, in the
 * common stack field.
 */
struct fr_dump_rss_site {
	uint8_t member;		/* FR_DRSS_ANON or FR_DRSS_SHMEM */
	uint64_t grown;		/* bytes since the value logged before */
};

struct fr_dump_offcpu {
	uint8_t kind;		/* FR_DSTALL_BLOCKED or FR_DSTALL_SLEEP */
	uint64_t begin;		/* ns: when it left the CPU */
	uint32_t state;		/* its task state then */
};

/*
 * One kind of an incarnation's stalls summed over the time since the
 * previous such event, about a second (1.5): those below the threshold
 * (short), those the ring lost, and all of them (recorded ones included).
 */
struct fr_dump_stallsum {
	uint8_t kind;
	uint64_t n_short, ns_short;
	uint64_t n_lost, ns_lost;
	uint64_t n_all, ns_all;
};

/* A pressure reading: avg in 1/100 %, totals in us (CLOCK_BOOTTIME). */
struct fr_dump_pressure {
	uint8_t resource;	/* 0 cpu, 1 memory, 2 io */
	uint8_t has_full;
	uint32_t some_avg10, some_avg60, some_avg300;
	uint32_t full_avg10, full_avg60, full_avg300;
	uint64_t some_total, full_total;
};

/*
 * The event types of EVNT, the one numbering of events (FORMAT.md §5.12):
 * the recorder's window uses it too (window.h). Adding a type: see
 * docs/ARCHITECTURE.md.
 */
enum fr_dump_event_type {
	FR_DEV_SAMPLE	= 1,	/* a CPU stack sample */
	FR_DEV_EXIT	= 2,	/* a process's death, with its counters */
	FR_DEV_FORK	= 3,	/* a new process: child names it */
	FR_DEV_EXEC	= 4,	/* a new image: filename names it */
	FR_DEV_OOM	= 5,	/* an OOM kill of the process */
	FR_DEV_PRESSURE	= 6,	/* a PSI reading: no process; comm names the source */
	FR_DEV_RSS	= 7,	/* an RSS ledger entry (1.4) */
	FR_DEV_OOMADJ	= 8,	/* an oom_score_adj write (1.4) */
	FR_DEV_MEMSYS	= 9,	/* the system's memory: no process (1.4) */
	FR_DEV_MEMCG	= 10,	/* a memory cgroup's usage: no process; comm names it (1.4) */
	FR_DEV_STALL	= 11,	/* a reclaim, compaction or throttle stall, with its stack (1.5) */
	FR_DEV_OFFCPU	= 12,	/* a thread blocked off the CPU, with its stack (1.5) */
	FR_DEV_STALLSUM	= 13,	/* stalls of one kind summed over about a second (1.5) */
	FR_DEV_RSS_SITE	= 14,	/* where a thread's own RSS growth was logged, with its stack (1.8) */
	FR_DEV_NTYPES		/* one past the last type this version knows */
};


/*
 * Sample flags (fr_dump_event.flags of FR_DEV_SAMPLE, and of FR_DEV_STALL
 * and FR_DEV_OFFCPU for their stacks): the truncation and error bits, and
 * in bits 5..7 (1.3) how the user stack ended.
 */
#define FR_DSAMPLE_KTRUNC	0x01
#define FR_DSAMPLE_UTRUNC	0x02
#define FR_DSAMPLE_KERR		0x04
#define FR_DSAMPLE_UERR		0x08
#define FR_DSAMPLE_KTHREAD	0x10
#define FR_DSAMPLE_UEND_SHIFT	5
#define FR_DSAMPLE_UEND_MASK	0xe0

enum fr_dump_uend {
	FR_DUEND_NONE	= 0,	/* no user stack, or a dump before 1.3 */
	FR_DUEND_OUTERMOST = 1,	/* reached the outermost frame */
	FR_DUEND_NO_INFO = 2,	/* stopped in code without unwind info */
	FR_DUEND_READ	= 3,	/* a stack read failed */
	FR_DUEND_DEPTH	= 4,	/* 127 user frames */
	FR_DUEND_NO_TABLE = 5,	/* walked by frame pointers: no rows yet */
	FR_DUEND_BAD_PC	= 6,	/* the next return address was in no mapping */
	FR_DUEND_INVALID = 7,	/* a rule the walker does not follow */
	FR_DUEND_NR
};

/* dump__uend_name() - "outermost", "no_info", ...; "none" for 0 or unknown. */
const char *dump__uend_name(unsigned uend);

struct fr_dump_event {
	uint64_t ts;		/* ns, CLOCK_BOOTTIME */
	uint32_t proc;		/* process index */
	uint32_t tid;
	uint32_t comm;		/* string index */
	uint32_t cpu;
	uint8_t type;		/* enum fr_dump_event_type */
	uint8_t flags;
	uint32_t stack;		/* sample, oom (the invoker's), stall, offcpu, rss_site: stack index + 1, 0: none */
	uint8_t unwound;	/* sample, stall, offcpu (1.6): FR_DUNWOUND_* */
	uint32_t child;		/* fork: process index of the child */
	uint32_t filename;	/* exec: string index */
	union {
		struct fr_dump_exit exit;
		struct fr_dump_oom oom;
		struct fr_dump_pressure psi;
		struct fr_dump_rss rss;
		struct fr_dump_oomadj oomadj;
		struct fr_dump_memsys msys;
		struct fr_dump_memcg mcg;
		struct fr_dump_stall stall;
		struct fr_dump_offcpu off;
		struct fr_dump_stallsum ssum;
		struct fr_dump_rss_site site;
	};
};

/* How a sample's, stall's or block's user stack was walked (1.6; 0: at once, by the BPF side). */
#define FR_DUNWOUND_LATER	0x1	/* walked on later, from a copy, once a new file's rows were built */

/* dump__uend() - how sample @ev's user stack ended. */
static inline unsigned dump__uend(const struct fr_dump_event *ev)
{
	return (ev->flags & FR_DSAMPLE_UEND_MASK) >> FR_DSAMPLE_UEND_SHIFT;
}

struct fr_dump {
	uint16_t major;
	uint16_t minor;
	struct fr_kvlist meta;
	struct fr_kvlist loss;
	struct fr_dump_trigger *trig;
	uint32_t ntrig;
	struct fr_dump_window win;
	char **str;		/* [0] is "" */
	uint32_t *str_len;
	uint32_t nstr;
	struct fr_dump_proc *proc;
	uint32_t nproc;
	struct fr_dump_bin *bin;
	uint32_t nbin;
	struct fr_dump_frame *frame;
	uint32_t nframe;
	struct fr_dump_line *line;	/* the frames' levels (LINE), frame by frame */
	uint32_t nline;
	struct fr_dump_stack *stack;
	uint32_t nstack;
	struct fr_dump_thread *thread;
	uint32_t nthread;
	struct fr_dump_event *ev;	/* reader only */
	uint32_t nev;
	uint32_t nsections;
	void *arena;		/* reader: owns the decompressed bytes */
};


/* Model helpers. */
void dump__init(struct fr_dump *d);
void dump__free(struct fr_dump *d);
const char *dump__str(const struct fr_dump *d, uint32_t idx);
const char *dump__meta_str(const struct fr_dump *d, const char *key);
uint64_t dump__meta_u64(const struct fr_dump *d, const char *key);
/* dump__rss_member_name() - "file", "anon", "swap", "shmem"; "?" if unknown. */
const char *dump__rss_member_name(unsigned m);
/* dump__rss_why_name() - "step", "age", "first", "exit"; "?" if unknown. */
const char *dump__rss_why_name(unsigned w);
/* dump__stall_kind_name() - "reclaim", "memcg", "compaction", "throttle", "blocked", "sleep"; "?" if unknown. */
const char *dump__stall_kind_name(unsigned k);
/* dump__stall_kind_by_name() - the kind named @name, or -1. */
int dump__stall_kind_by_name(const char *name);
/* dump__memsys_field_name() - the /proc key of field @f ("MemAvailable", "pgscan_direct"...). */
const char *dump__memsys_field_name(unsigned f);

/* Writer. */
typedef int (*fr_sink_fn)(void *ctx, const void *buf, size_t len);
/* fr_event_source_fn - the next event to write into *ev; 1: one given, 0: no more, <0: -errno. */
typedef int (*fr_event_source_fn)(void *ctx, struct fr_dump_event *ev);
int dump__write(const struct fr_dump *d, fr_event_source_fn next, void *ectx,
		fr_sink_fn sink, void *sctx, uint64_t *nevents);

/* Reader. */
int dump__parse(struct fr_dump *d, void *buf, size_t len, char *err, size_t errlen);
int dump__load(struct fr_dump *d, const char *path, char *err, size_t errlen);

uint32_t fr_crc32c(uint32_t crc, const void *buf, size_t len);

#endif /* FR_FORMAT_H */
