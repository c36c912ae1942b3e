/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * names.h - the names kept between dumps (names.c): every frame named so
 * far, with its strings, binaries and source lines, and for each window
 * stack the frames it was named with. The dump thread alone owns it: it
 * names stacks into it, between dumps (new stacks the drain announced) and
 * in a dump (what is still missing), and a dump copies from it.
 *
 * It is bounded by a budget of bytes: once past it, between dumps, it is
 * emptied whole and fills again from what stacks are in use (no
 * refcounts to keep on the names of stacks that come and go).
 */
#ifndef FR_NAMES_H
#define FR_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "format.h"
#include "symbols.h"

/* Why a user frame has the name it has: a dump counts them. */
enum names_why {
	FR_NAMED_OK = 0,	/* looked up in what the frame's file has (a name or none) */
	FR_NAMED_NO_SYMBOLS,	/* its file's symbols are unknown */
	FR_NAMED_EVICTED,	/* they were given back for the cache budget */
	FR_NAMED_NO_MAPPING,	/* in no known mapping */
};

/* A frame's source lines: */
enum names_lines {
	FR_LINES_NONE = 0,	/* none to look up (no DWARF, a kernel frame) */
	FR_LINES_PENDING,	/* not looked up yet */
	FR_LINES_DONE,		/* looked up: levels (perhaps none) */
};

/*
 * The names of one window stack: @kn + @un frames of the store from
 * @first, leaf first in each part. Valid for the window entry with
 * intern @serial and @hash only, seen in store space @space (0: none).
 */
struct names_stack {
	uint64_t hash;
	uint32_t serial;
	uint32_t first;
	uint16_t kn, un;
	uint32_t space;
	uint8_t used;
	uint8_t complete;	/* every frame final: never named again */
	uint8_t bogus;		/* cut at a return address where no code is */
};

/*
 * An address in one image (a store space: incarnation, era and the read of
 * its maps), a key of
 * the address cache; a kernel address has space 0. No padding: compared
 * byte by byte.
 */
struct names_addr {
	uint64_t addr;
	uint32_t space;
	uint32_t leaf;		/* 1: the interrupted frame; | 2: a kernel address */
};

/*
 * What a file says of one offset in it, whichever process maps it where:
 * the symbol (store strings), the offset in it of the looked-up byte, why,
 * and the source lines (store levels) once looked up. Only final names
 * are kept here (names.h's rule), by the file's identity, never by path
 * or build-id.
 */
struct names_fileoff {
	uint32_t sym, system_name;
	uint64_t off;			/* from the symbol's start */
	uint32_t line, nlines;		/* levels in the store */
	uint8_t lines;			/* enum names_lines */
	uint8_t why;			/* enum names_why */
};

struct names_stats {
	uint64_t bytes;		/* held now (arrays, maps and strings) */
	uint64_t budget;
	uint64_t frames, strs, stacks;
	uint64_t resets;	/* emptied for the budget */
	uint64_t compactions;	/* rebuilt with the stacks still in use */
};

/*
 * The daemon's store may hold this share of `[recorder] memory` (names
 * grow with the window's stacks); a store set no budget holds FR_NAMES_BUDGET.
 */
#define FR_NAMES_SHARE	4
/* Below this, the store is compacted only at 3/4 of its budget. */
#define FR_NAMES_FLOOR	(4ULL << 20)
#define FR_NAMES_BUDGET	(64ULL << 20)

struct names;

struct names *names__new(uint64_t budget);
void names__set_budget(struct names *nm, uint64_t budget);
void names__free(struct names *nm);
void names__reset(struct names *nm);
int names__compact(struct names *nm);
bool names__trim(struct names *nm);
void names__forget_stack(struct names *nm, uint32_t id, uint32_t serial);
bool names__over_budget(const struct names *nm);
void names__stats(const struct names *nm, struct names_stats *st);

int names__str(struct names *nm, const char *s, uint32_t *idx);
const char *names__str_at(const struct names *nm, uint32_t idx);
int names__bin(struct names *nm, const char *path, const struct fr_buildid *bid, uint32_t *idx);
const struct fr_dump_bin *names__bin_at(const struct names *nm, uint32_t idx);
int names__frame(struct names *nm, const struct fr_dump_frame *f, uint32_t lines,
		 enum names_why why, uint32_t *idx, bool *created);
const struct fr_dump_frame *names__frame_at(const struct names *nm, uint32_t idx);
enum names_why names__frame_why(const struct names *nm, uint32_t idx);
enum names_lines names__frame_lines(const struct names *nm, uint32_t idx);
int names__set_lines(struct names *nm, uint32_t idx, const struct fr_dump_line *lv, uint32_t n);
const struct fr_dump_line *names__lines_at(const struct names *nm, uint32_t idx, uint32_t *n);

int names__space(struct names *nm, uint32_t pid, uint64_t start, uint64_t era, uint64_t image,
		 uint32_t *id);
bool names__addr_get(const struct names *nm, const struct names_addr *k, uint32_t *frame);
int names__addr_put(struct names *nm, const struct names_addr *k, uint32_t frame);

int names__file(struct names *nm, const struct symcache_key *k, uint32_t *id);
const struct names_fileoff *names__fileoff(const struct names *nm, uint32_t file, uint64_t off,
					   uint32_t *idx);
int names__add_fileoff(struct names *nm, uint32_t file, uint64_t off,
		       const struct names_fileoff *fo, uint32_t *idx);
void names__frame_from(struct names *nm, uint32_t frame, uint32_t fileoff);
void names__sync_lines(struct names *nm, uint32_t frame);

const struct names_stack *names__stack(const struct names *nm, uint32_t id);
const uint32_t *names__stack_frames(const struct names *nm, const struct names_stack *s);
int names__set_stack(struct names *nm, uint32_t id, const struct names_stack *s,
		     const uint32_t *frames);

#endif /* FR_NAMES_H */
