/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * namer.h - naming window stacks into the store of names (names.h), on
 * the dump thread: between dumps for the stacks the drain announced, and
 * in a dump for what is still missing (namer.c). A namer is one session:
 * the address spaces it looked at (a process's facts, a fresh read of its
 * maps, its perf map) live as long as it, the names in the store beyond.
 */
#ifndef FR_NAMER_H
#define FR_NAMER_H

#include <stdbool.h>
#include <stdint.h>

#include "hashmap.h"
#include "names.h"

struct drain_tables;
struct kallsyms;
struct perfmap;
struct proc_meta;
struct symcache;

/*
 * Address space of one incarnation in one era, during a session: the facts
 * read while it lived (maps and their symbols), a fresh read if it is still
 * alive and an address falls outside them (dlopen), and its JIT perf map.
 */
struct space {
	uint32_t slot;
	uint32_t pid;
	uint64_t start;
	uint64_t era;			/* proctable__meta_at() */
	uint32_t nid;			/* the store's space (names__space()) */
	bool exited;
	bool current;			/* the image now (not one before an exec) */
	bool own;			/* the daemon's own process */
	bool reread;			/* tried the fresh read already */
	bool perfmap_tried;
	struct proc_meta *meta;
	struct proc_meta *fresh;
	struct perfmap *perfmap;
};

struct namer_stats {
	uint64_t resolve_skipped;	/* per-process reads skipped: past the deadline */
	uint64_t perfmaps_refused;	/* perf maps refused by the untrusted-file rules */
	uint64_t maps_reread;		/* live processes re-read for unknown addresses */
	uint64_t lines_resolved;	/* frames given a source position */
	uint64_t lines_failed;		/* lookups of one that failed */
	uint64_t stacks;		/* stacks named */
	uint64_t py_frames;		/* Python frames named */
	uint64_t py_unnamed;		/* ... whose code object could not be read */
	uint64_t frames;		/* addresses looked up (not found in the store) */
};

struct namer {
	const struct drain_tables *t;
	struct symcache *cache;		/* NULL: no user symbols */
	const struct kallsyms *ksyms;	/* NULL: no kernel symbols */
	struct names *nm;
	unsigned meta_what;		/* FR_META_* flags of the fresh reads */
	uint64_t deadline;		/* CLOCK_BOOTTIME ns: no per-process read after it; 0: none */
	uint64_t boot_to_real;		/* CLOCK_REALTIME - CLOCK_BOOTTIME */
	uint32_t self;			/* the daemon's pid: its spaces are its own */
	struct space *spaces;
	uint32_t nspaces, space_cap;
	struct fr_hashmap space_of;	/* struct space_key -> spaces[] */
	struct pycache *py;		/* Python code objects' names; NULL: none */
	struct namer_stats st;
};

void namer__init(struct namer *n, const struct drain_tables *t, struct symcache *cache,
		 const struct kallsyms *ksyms, struct names *nm, unsigned meta_what);
void namer__fini(struct namer *n);
struct space *namer__space(struct namer *n, uint32_t slot, uint32_t pid, uint64_t start,
			   uint64_t ts);
bool namer__valid(const struct names_stack *s, uint64_t hash, uint32_t serial,
		  const struct space *sp);
int namer__stack(struct namer *n, uint32_t id, uint32_t tag, const uint64_t *ips, uint32_t len,
		 struct space *sp, uint64_t hash, uint32_t serial);
int namer__lines(struct namer *n, uint32_t frame, struct space *sp, uint64_t addr);
uint64_t namer__lookup_addr(uint64_t addr, uint32_t pos);

#endif /* FR_NAMER_H */
