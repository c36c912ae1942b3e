/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * window.h - the in-memory window: a single-writer, lock-free ring of
 * fixed-size events, bounded by time (span) and by slots (bytes).
 *
 * The drain is the only writer. Readers (the dump thread) copy events out
 * and validate each copy against the tail, seqlock style: a copy is good
 * only if the slot was not recycled while it was read. A reader pins the
 * oldest event it needs; time-based eviction stops at the pin, eviction for
 * space does not (the writer never waits), and the reader sees the loss.
 *
 * Its memory follows what it holds, not its cap: the ring is cut in chunks
 * of FR_WINDOW_CHUNK events taken lowest address first as the head needs
 * them and freed as the tail leaves them; chunks the need left give their
 * pages back once, after FR_WINDOW_TRIM_NS (window.c).
 */
#ifndef FR_WINDOW_H
#define FR_WINDOW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"

/* The window's events are numbered as the dump's (format.h), so the
 * encoder copies the type. */
enum fr_event_type {
	FR_EV_SAMPLE	= FR_DEV_SAMPLE,
	FR_EV_EXIT	= FR_DEV_EXIT,
	FR_EV_FORK	= FR_DEV_FORK,
	FR_EV_EXEC	= FR_DEV_EXEC,
	FR_EV_OOM	= FR_DEV_OOM,
	FR_EV_PRESSURE	= FR_DEV_PRESSURE,	/* a pressure reading, made by the daemon */
	FR_EV_RSS	= FR_DEV_RSS,		/* an RSS ledger entry */
	FR_EV_OOMADJ	= FR_DEV_OOMADJ,	/* an oom_score_adj write */
	FR_EV_MEMSYS	= FR_DEV_MEMSYS,	/* the system's memory, read by the daemon */
	FR_EV_MEMCG	= FR_DEV_MEMCG,		/* a memory cgroup's, read by the daemon */
	FR_EV_STALL	= FR_DEV_STALL,		/* a reclaim, compaction or throttle stall */
	FR_EV_OFFCPU	= FR_DEV_OFFCPU,	/* a block off the CPU */
	FR_EV_STALLSUM	= FR_DEV_STALLSUM,	/* a kind of stalls summed, read by the daemon */
	FR_EV_RSS_SITE	= FR_DEV_RSS_SITE,	/* where a thread's own RSS growth was logged */
	FR_EV_TYPE_MAX	= FR_DEV_NTYPES - 1,
};

/*
 * One window slot. References point into the drain's tables and hold a
 * reference there until the event is evicted:
 *   proc:  process table slot of the incarnation (0 for pressure, memsys,
 *          memcg)
 *   tid:   the thread; oom: the invoker's stack id (0: none); rss: the
 *          owner's thread, or with FR_EVRSS_OTHER the pid of the other
 *          process that made the change
 *   comm:  string id of the thread's comm; pressure, memcg: of the source
 *          ("" for /proc/pressure, else the cgroup directory)
 *   ref:   sample, rss_site: stack id (0: none); exec: filename string id;
 *          exit: string id of the struct fr_exit_stats blob;
 *          fork: process table slot of the child; oom, pressure, memsys,
 *          memcg, stall, stallsum: blob id; rss: the value in pages (no
 *          reference); oom_score_adj: the writer's pid (no reference);
 *          offcpu: the block's length in ns, or in us with FR_EVOFF_US
 *          (no reference), | FR_EVOFF_LATER.
 *   arg:   exit: wait status; fork: child pid; oom: the invoker's process
 *          table slot (a reference, 0: none); rss: microseconds since the
 *          value was reached; oom_score_adj: the value; stall, offcpu:
 *          stack id (0: none); sample: FR_EVSAMPLE_LATER or 0; rss_site:
 *          the pages grown since the value logged before; otherwise 0.
 *   flags: sample: FR_SAMPLE_* bits; rss: member | why << 2 | FR_EVRSS_OTHER;
 *          stall, offcpu: the kind | the user stack's end code << 5
 *          (offcpu: | FR_EVOFF_KILLABLE, FR_EVOFF_US); stallsum: the kind;
 *          rss_site: the member.
 */
#define FR_EVRSS_MEMBER_MASK	0x3
#define FR_EVRSS_WHY_SHIFT	2
#define FR_EVRSS_WHY_MASK	0xc
#define FR_EVRSS_OTHER		0x10
#define FR_EVSTALL_KIND_MASK	0x7
#define FR_EVOFF_KILLABLE	0x08	/* the wait could be ended by a fatal signal */
#define FR_EVOFF_US		0x10	/* ref counts microseconds (a block over 4.29 s) */
#define FR_EVSAMPLE_LATER	0x1	/* sample arg: its user stack was walked on from a copy */
#define FR_EVOFF_LATER		0x80000000u	/* offcpu ref: the same; the length below it */
#define FR_EVOFF_LEN_MAX	0x7fffffffu
struct fr_event {
	uint64_t ts;		/* CLOCK_BOOTTIME ns */
	uint32_t proc;
	uint32_t tid;
	uint32_t ref;
	uint32_t comm;
	uint32_t arg;
	uint16_t cpu;
	uint8_t type;		/* enum fr_event_type */
	uint8_t flags;		/* sample: FR_SAMPLE_* truncation bits */
};
_Static_assert(sizeof(struct fr_event) == 32, "window event must stay 32 bytes");

/* A chunk is 2^11 events (64 KiB); rings of under 4 chunks use smaller ones. */
#define FR_WINDOW_CHUNK_SHIFT	11
/* A free chunk above the need gives its pages back after this long unused. */
#define FR_WINDOW_TRIM_NS	(10ULL * 1000000000ULL)

struct window_stats {
	uint64_t appended;
	uint64_t evicted_time;	/* aged out: normal */
	uint64_t evicted_space;	/* pushed out because the window was full */
	uint64_t evicted_pinned;	/* pushed out from under a pinned reader */
	uint64_t chunks_grown;	/* chunks whose pages were touched (again) */
	uint64_t chunks_released;	/* chunks whose pages were given back */
	uint64_t shrinks;	/* trims that gave pages back */
	uint64_t release_failed;	/* releases madvise() refused */
};

/* The ring's memory: what its contents need against what is resident. */
struct window_footprint {
	uint64_t live_bytes;	/* the events held, 32 bytes each */
	uint64_t active_bytes;	/* the chunks they are in */
	uint64_t touched_bytes;	/* the chunks touched and not given back */
	uint64_t resident_bytes;	/* of the mapping, as mincore() sees it */
	uint64_t reserved_bytes;	/* the mapping: window__budget() */
	uint64_t chunk_bytes;
};

struct window;

/* fr_event_evict_fn - called by the writer for each event leaving the window. */
typedef void (*fr_event_evict_fn)(void *ctx, const struct fr_event *ev);

struct window *window__new(size_t nslots, uint64_t span_ns,
			   fr_event_evict_fn evict, void *ctx);
/* window__budget() - the bytes a ring of @nslots events maps (a few chunks over). */
size_t window__budget(size_t nslots);
void window__free(struct window *w);

/* Writer side (one thread). */
void window__append(struct window *w, const struct fr_event *ev);
void window__expire(struct window *w, uint64_t now);
int window__evict_oldest(struct window *w);
void window__set_span(struct window *w, uint64_t span_ns);
uint64_t window__span(const struct window *w);
void window__pin(struct window *w, uint64_t idx);
void window__unpin(struct window *w);
uint64_t window__lower_bound(const struct window *w, uint64_t ts);
const struct window_stats *window__stats(const struct window *w);
void window__footprint(const struct window *w, struct window_footprint *out);

/* Reader side (any thread). */
uint64_t window__head(const struct window *w);
uint64_t window__tail(const struct window *w);
size_t window__capacity(const struct window *w);
int window__read(const struct window *w, uint64_t idx, struct fr_event *out);

#endif /* FR_WINDOW_H */
