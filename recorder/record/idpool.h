/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * idpool.h - lowest-first allocation of the items of a fixed table, and
 * giving back the pages its need left.
 *
 * The tables the memory cap covers (stack and string blocks and entries,
 * process slots) are arrays reserved whole at start. Only pages written
 * become resident, and with the memory locked they stay so. Handing out
 * the lowest free id keeps the items in use packed at the bottom of each
 * array, so the pages touched follow the need; a free list would scatter
 * them over the high-water mark. When a table has stayed well above its
 * need for FR_IDPOOL_TRIM_NS (hysteresis), its owner gives back the whole
 * pages that hold free items only, once, off the hot path. The check that
 * runs once a second costs no system call (the ids handed out bound what
 * was touched); only a trim reads mincore().
 *
 * The owner is the drain's thread, and each release is a system call that
 * flushes the TLB on every CPU the process ran on (60-400 us each on a
 * virtual machine). Free pages left between live ones can number
 * hundreds, so a trim goes in steps of at most FR_IDPOOL_RELEASE_CALLS
 * releases, one step per call, resumed where it stopped: the ring is
 * never left undrained for longer than a step.
 *
 * The bitmap lives in memory the owner provides, zeroed (a fresh
 * anonymous mapping: nothing of it is touched until used). One thread.
 */
#ifndef FR_IDPOOL_H
#define FR_IDPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FR_IDPOOL_NONE		UINT32_MAX
#define FR_IDPOOL_TRIM_NS	(10ULL * 1000000000ULL)	/* above the need this long */
#define FR_IDPOOL_SLACK		(64u << 10)		/* bytes over need*5/4 tolerated */
#define FR_IDPOOL_RELEASE_CALLS	32u	/* page releases (madvise) per trim step */

struct idpool {
	uint64_t *used;		/* bit per id: in use */
	uint64_t *full;		/* bit per word of used[]: all in use */
	uint64_t *full2;	/* bit per word of full[]: all full */
	uint32_t n;		/* ids 0..n-1 */
	uint32_t nwords2;
	uint32_t hint2;		/* no word of full2[] below this has a clear bit */
	uint32_t nused;
	uint32_t hi;		/* one past the highest id handed out since the last trim */
};

/* How a table decides to give pages back (idpool__trim_due()), and did. */
struct idpool_trim {
	uint64_t above_since;	/* when resident went above the need; 0: it is not */
	uint64_t shrinks;	/* trims that gave pages back */
	uint64_t pages_released;
	uint64_t release_failed;
	/* A trim in steps (idpool__trim_step()). */
	uint32_t part;		/* the array being released, from 1; 0: no trim under way */
	size_t from;		/* its byte offset the next step resumes at */
	long pages;		/* released so far by this trim */
};

/* One of the arrays a trim gives pages of back: item i at @base + i * @item_size. */
struct idpool_part {
	const struct idpool *pool;
	void *base;
	size_t item_size;
};

size_t idpool__bytes(size_t n);
void idpool__init(struct idpool *p, void *mem, size_t n);
uint32_t idpool__alloc(struct idpool *p);
void idpool__free(struct idpool *p, uint32_t id);
bool idpool__in_use(const struct idpool *p, uint32_t id);

bool idpool__trim_due(struct idpool_trim *t, uint64_t now, uint64_t touched,
		      uint64_t need);
long idpool__release(const struct idpool *p, void *base, size_t item_size,
		     size_t *from, unsigned *calls);
long idpool__trim_step(struct idpool_trim *t, const struct idpool_part *parts,
		       unsigned nparts);
void idpool__trimmed(struct idpool *p, struct idpool_trim *t, long pages);

int fr_pages_release(void *p, size_t len);

#endif /* FR_IDPOOL_H */
