/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * intern.h - a refcounted, preallocated intern table: each distinct byte
 * string (a stack of frames, a comm, a file name, a counter blob) is stored
 * once and named by a 32-bit id. Id 0 means "none".
 *
 * Storage is a fixed pool of equal-size blocks chained per entry, so any
 * freed entry makes room for any new one and nothing is allocated after
 * intern__new(). Blocks and entries are taken lowest first, and the pages
 * the need left are given back after a while (intern__trim()). One writer thread; readers may copy entries concurrently
 * while the writer holds the table (intern__hold): frees are deferred until
 * intern__release(), so an id a reader found stays intact.
 */
#ifndef FR_INTERN_H
#define FR_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct intern_stats {
	uint64_t live;		/* entries with references */
	uint64_t blocks_used;
	uint64_t blocks_total;
	uint64_t entries_total;
	uint64_t bytes_total;	/* memory reserved by the table */
	uint64_t hits;		/* lookups that found an existing entry */
	uint64_t inserts;
	uint64_t full;		/* inserts refused: no space */
	uint64_t shrinks;	/* trims that gave pages back */
	uint64_t pages_released;
	uint64_t release_failed;
};

struct intern;

struct intern *intern__new(size_t block_size, size_t nblocks, size_t nentries);
void intern__free(struct intern *t);
size_t intern__budget(size_t block_size, size_t nblocks, size_t nentries);

int intern__get(struct intern *t, uint32_t tag, const void *data, size_t len,
		uint32_t *id);
void intern__ref(struct intern *t, uint32_t id);
void intern__unref(struct intern *t, uint32_t id);
void intern__hold(struct intern *t);
void intern__release(struct intern *t);
void intern__stats(const struct intern *t, struct intern_stats *st);
uint64_t intern__inserted(const struct intern *t);
void intern__footprint(const struct intern *t, uint64_t *resident, uint64_t *live);
void intern__trim(struct intern *t, uint64_t now);

/* Reader side. */
size_t intern__len(const struct intern *t, uint32_t id);
void intern__set_released(struct intern *t, void (*fn)(void *ctx, uint32_t id, uint32_t serial),
			  void *ctx);
void intern__identity(const struct intern *t, uint32_t id, uint64_t *hash, uint32_t *serial);
uint32_t intern__tag(const struct intern *t, uint32_t id);
size_t intern__copy(const struct intern *t, uint32_t id, void *buf, size_t cap);

#endif /* FR_INTERN_H */
