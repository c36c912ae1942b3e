/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * encstate.h - the encoder's state and the dump model it fills (encstate.c):
 * what encoder.c (collect, translate, the entry points of encoder.h) and
 * symbolize.c (naming each referenced stack, then the lines pass) share,
 * and nothing else reads.
 */
#ifndef FR_ENCSTATE_H
#define FR_ENCSTATE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "format.h"
#include "hashmap.h"
#include "namer.h"
#include "names.h"
#include "snapshot.h"
#include "symbols.h"

struct drain_tables;
struct kallsyms;
struct sampler;
struct symbolizer;

struct encode_in {
	const struct drain_tables *t;
	struct sampler *sampler;	/* task iterator for the snapshot */
	struct symbolizer *sym;
	uint64_t first;			/* frozen window: indexes [first, last) */
	uint64_t last;
	unsigned meta_what;		/* FR_META_* flags for /proc reads */
	uint64_t resolve_timeout_ns;	/* per-process reads stop this long after start; 0: never */
	const uint32_t *victim_pid;	/* per model trigger: OOM victim, 0: none */
	const uint64_t *victim_start;
};

struct encoder_stats {
	uint64_t stale;			/* events recycled before they were written */
	uint64_t user_frames;		/* distinct (space, address) looked up */
	uint64_t user_resolved;
	uint64_t kernel_frames;		/* distinct kernel addresses looked up */
	uint64_t kernel_resolved;
	uint64_t cached_stacks;		/* stacks copied from the names kept between dumps */
	uint64_t named_stacks;		/* stacks named in the dump (none kept, or not final) */
	uint64_t named_own;		/* of them the daemon's own (never named ahead) */
	uint64_t lines_looked_up;	/* frames whose lines the dump looked up */
	uint64_t snapshot_procs;
	uint64_t snapshot_gone;
	uint64_t maps_reread;		/* live processes re-read for unknown addresses */
	uint64_t resolve_skipped;	/* per-process reads skipped: past the deadline */
	uint64_t perfmaps_refused;	/* perf maps refused by the untrusted-file rules */
	uint64_t user_no_symbols;	/* user addresses in a file whose symbols are unknown */
	uint64_t user_evicted;		/* ... because the cache gave them back for its budget */
	uint64_t user_bogus;		/* return addresses in no mapping (0x0 among them): dropped */
	uint64_t lines_resolved;	/* user frames given a source position (DWARF) */
	uint64_t lines_failed;		/* lookups of one that failed (unreadable DWARF, a bound) */
	uint64_t lines_skipped;		/* not looked up: past the deadline */
	uint64_t uend[FR_DUEND_NR];	/* samples by how their user stack ended */
	uint64_t walked_later;		/* samples whose user stack was walked on from a copy */
	uint64_t snapshot_ns;		/* encoder__prepare()'s phases (struct dump_phases) */
	uint64_t collect_ns;
	uint64_t names_ns;
	uint64_t lines_ns;
};


struct symbolizer {
	struct kallsyms *ksyms;
	uint64_t modules_hash;		/* of /proc/modules when ksyms was read */
	bool loaded;
	struct symcache *cache;		/* shared with the procinfo worker */
	struct names *names;		/* kept between dumps */
	struct pycache *py;		/* Python frames' names; NULL: none */
};

/* A string of the dump's table, by its bytes: a key of str_of. */
struct str_key {
	const char *s;		/* the table's copy once stored */
	uint64_t len;
};

/* Store index (names.h) -> dump index + 1, 0: not in the dump yet. */
struct dump_map {
	uint32_t *v;
	uint32_t cap;
};

uint32_t *dump_map__grow(struct dump_map *m, uint32_t i);

/*
 * dump_map__slot() - the slot of index @i in @m (value + 1, 0: none), grown
 * with zeros. NULL without memory. Inline: a dump looks up every frame of
 * every stack it copies.
 */
static inline uint32_t *dump_map__slot(struct dump_map *m, uint32_t i)
{
	return i < m->cap ? &m->v[i] : dump_map__grow(m, i);
}

/*
 * A window id's dump index from an array map (the window's ids are small
 * and dense: its tables hand out the lowest free one); false when absent.
 */
static inline bool map_get(const struct dump_map *m, uint64_t key, uint32_t *val)
{
	if (key >= m->cap || !m->v[key])
		return false;
	*val = m->v[key] - 1;
	return true;
}

static inline int map_put(struct dump_map *m, uint64_t key, uint32_t val)
{
	uint32_t *slot = key < UINT32_MAX ? dump_map__slot(m, (uint32_t)key) : NULL;

	if (!slot)
		return -ENOMEM;
	*slot = val + 1;
	return 0;
}

/* A u64-keyed map's value into *@val; false when absent. */
static inline bool id_get(const struct fr_hashmap *m, uint64_t key, uint32_t *val)
{
	const uint32_t *v = fr_hashmap__find(m, &key);

	if (v)
		*val = *v;
	return v != NULL;
}

static inline int id_put(struct fr_hashmap *m, uint64_t key, uint32_t val)
{
	return fr_hashmap__insert(m, &key, &val);
}

/* An incarnation as a key of proc_of_id: (pid, start), no padding. */
struct incarnation {
	uint64_t pid;
	uint64_t start;
};

/* A frame whose source position the lines pass looks up. */
struct line_todo {
	uint32_t frame;		/* dump frame */
	uint32_t nframe;	/* store frame (names.h) */
	uint32_t space;		/* the namer's spaces[] it was found in */
	uint64_t addr;		/* the address looked up (addr - 1 for a return address) */
	uint64_t weight;	/* its CPU samples, discounted by depth (lines_by_weight()) */
	uint32_t seq;		/* order made: ties keep it */
};

#define FR_THREAD_HINTS	256	/* a power of two */

/* A thread met last: (dump process << 32 | tid) at threads[t - 1]; t = 0: none. */
struct thread_hint {
	uint64_t key;
	uint32_t t;
};

struct encoder {
	struct encode_in in;
	struct fr_dump *d;
	struct snapshot snap;
	unsigned page_shift;
	uint32_t str_cap, proc_cap, bin_cap, frame_cap, stack_cap, line_cap;
	/* Every map's key is the whole identity, compared on lookup. */
	struct fr_hashmap str_of;	/* string (bytes) -> dump string */
	struct dump_map proc_of_slot;	/* process table slot -> dump process */
	struct fr_hashmap proc_of_id;	/* (pid, start) -> dump process */
	struct dump_map str_of_id;	/* window string id -> dump string */
	struct dump_map stack_of_id;	/* window stack id -> dump stack */
	struct fr_hashmap thread_of;	/* (dump process, tid) -> threads[] */
	uint32_t thread_cap;
	/* The threads met last, by tid: most events are of a thread just met. */
	struct thread_hint thread_hint[FR_THREAD_HINTS];
	struct names *names;		/* the names kept between dumps */
	struct namer nmr;		/* this dump's session of naming into them */
	struct dump_map str_map, bin_map, frame_map;	/* their indexes -> the dump's */
	uint32_t *frame_src;		/* each dump frame's store frame */
	uint32_t frame_src_cap;
	uint32_t *stack_ids;		/* window stack id of each dump stack */
	uint64_t *stack_ts;		/* its first sample: which exec era it is of */
	uint32_t *stack_samples;	/* CPU samples with the stack (0: a stall's or an OOM's only) */
	uint64_t cursor;
	uint64_t last_ts;
	bool loss_added;
	uint64_t deadline;		/* CLOCK_BOOTTIME ns: no per-process read after it */
	struct line_todo *todo;		/* frames the lines pass looks up */
	uint32_t ntodo, todo_cap;
	const struct kallsyms *ksyms;	/* this dump's kernel symbols */
	struct encoder_stats st;
};

int encoder__add_str(struct encoder *e, const char *s, size_t len, uint32_t *idx);
int encoder__str_of(struct encoder *e, uint32_t id, uint32_t *idx);
int encoder__new_proc(struct encoder *e, uint32_t pid, uint64_t start, uint32_t *idx);
int encoder__add_thread(struct encoder *e, uint32_t idx, uint32_t tid, uint32_t name);
int encoder__proc_facts(struct encoder *e, uint32_t idx, struct proc_meta *m);
int encoder__stack_of(struct encoder *e, uint32_t id, uint64_t ts, bool cpu, uint32_t *idx);
int encoder__add_cstr(struct encoder *e, const char *s, uint32_t *idx);
bool encoder__proc_of_incarnation(struct encoder *e, uint32_t pid, uint64_t start, uint32_t *idx);
int encoder__proc_of(struct encoder *e, uint32_t slot, uint32_t *idx);

#endif /* FR_ENCSTATE_H */
