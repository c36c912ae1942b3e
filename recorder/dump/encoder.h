/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * encoder.h - turn a frozen window into the dump model.
 *
 * Runs on the dump thread while the drain keeps recording. It takes the
 * process snapshot, walks the frozen events once to learn which processes,
 * strings and stacks they reference, symbolizes those stacks, and then
 * streams the events a second time, translated to dump indexes, into
 * dump__write(). Events the drain recycled in between are skipped and
 * counted, never misread.
 */
#ifndef FR_ENCODER_H
#define FR_ENCODER_H

#include <stdint.h>

#include "drain.h"
#include "format.h"
#include "sampler.h"
#include "symbols.h"

/* Symbol sources kept across dumps: kernel symbols and loaded binaries. */
struct symbolizer;

struct symbolizer *symbolizer__new(struct symcache *cache);
void symbolizer__free(struct symbolizer *s);
void symbolizer__warm(struct symbolizer *s);

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
	uint64_t cached_frames;		/* stack entries answered without a lookup */
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
};

struct encoder;

struct encoder *encoder__new(const struct encode_in *in, struct fr_dump *model);
void encoder__free(struct encoder *e);
int encoder__prepare(struct encoder *e);
int encoder__next_event(void *ctx, struct fr_dump_event *ev);
const struct encoder_stats *encoder__stats(const struct encoder *e);

#endif /* FR_ENCODER_H */
