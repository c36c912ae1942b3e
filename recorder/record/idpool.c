// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * idpool.c - lowest-first id allocation and page trimming. See idpool.h.
 *
 * Three levels of bits: used[] (an id in use), full[] (a word of used[]
 * all set) and full2[] (a word of full[] all set). The lowest free id is
 * found in three count-trailing-zeros steps below a hint, so an insert
 * costs a few loads whatever the table's size. Bits past the end are set
 * at init: they are never free.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "idpool.h"
#include "util.h"

#define FR_WORDS(n)	(((n) + 63) / 64)

static void word_sizes(size_t n, size_t w[3])
{
	w[0] = FR_WORDS(n);
	w[1] = FR_WORDS(w[0]);
	w[2] = FR_WORDS(w[1]);
}

/* idpool__bytes() - the zeroed memory idpool__init() needs for @n ids. */
size_t idpool__bytes(size_t n)
{
	size_t w[3];

	word_sizes(n, w);
	return FR_ALIGN((w[0] + w[1] + w[2]) * sizeof(uint64_t), 64);
}

/* Set the bits of @b's last word past its @nbits. */
static void seal(uint64_t *b, size_t nbits)
{
	if (nbits % 64)
		b[nbits / 64] |= ~0ULL << (nbits % 64);
}

/*
 * idpool__init() - ids 0..@n-1, all free, over @mem of idpool__bytes(@n)
 * zeroed bytes. Touches only the last word of each level.
 */
void idpool__init(struct idpool *p, void *mem, size_t n)
{
	size_t w[3];

	word_sizes(n, w);
	p->used = mem;
	p->full = p->used + w[0];
	p->full2 = p->full + w[1];
	p->n = (uint32_t)n;
	p->nwords2 = (uint32_t)w[2];
	p->hint2 = 0;
	p->nused = 0;
	p->hi = 0;
	seal(p->used, n);
	if (n % 64 && p->used[w[0] - 1] == ~0ULL)
		p->full[(w[0] - 1) / 64] |= 1ULL << ((w[0] - 1) % 64);
	seal(p->full, w[0]);
	if (p->full[w[1] - 1] == ~0ULL)
		p->full2[(w[1] - 1) / 64] |= 1ULL << ((w[1] - 1) % 64);
	seal(p->full2, w[1]);
}

/* idpool__alloc() - the lowest free id, now in use; FR_IDPOOL_NONE if none. */
uint32_t idpool__alloc(struct idpool *p)
{
	uint32_t k2 = p->hint2, k1, k0, id;

	while (k2 < p->nwords2 && p->full2[k2] == ~0ULL)
		k2++;
	p->hint2 = k2;
	if (k2 == p->nwords2)
		return FR_IDPOOL_NONE;
	k1 = k2 * 64 + (uint32_t)__builtin_ctzll(~p->full2[k2]);
	k0 = k1 * 64 + (uint32_t)__builtin_ctzll(~p->full[k1]);
	id = k0 * 64 + (uint32_t)__builtin_ctzll(~p->used[k0]);
	p->used[k0] |= 1ULL << (id % 64);
	if (p->used[k0] == ~0ULL) {
		p->full[k1] |= 1ULL << (k0 % 64);
		if (p->full[k1] == ~0ULL)
			p->full2[k2] |= 1ULL << (k1 % 64);
	}
	p->nused++;
	if (id >= p->hi)
		p->hi = id + 1;
	return id;
}

/* idpool__free() - @id (in use) is free again. */
void idpool__free(struct idpool *p, uint32_t id)
{
	uint32_t k0 = id / 64, k1 = k0 / 64, k2 = k1 / 64;

	if (id >= p->n || !(p->used[k0] >> (id % 64) & 1))
		return;
	if (p->used[k0] == ~0ULL) {
		if (p->full[k1] == ~0ULL)
			p->full2[k2] &= ~(1ULL << (k1 % 64));
		p->full[k1] &= ~(1ULL << (k0 % 64));
	}
	p->used[k0] &= ~(1ULL << (id % 64));
	p->nused--;
	if (k2 < p->hint2)
		p->hint2 = k2;
}

bool idpool__in_use(const struct idpool *p, uint32_t id)
{
	return id < p->n && (p->used[id / 64] >> (id % 64) & 1);
}

/* Are ids @first..@last (inclusive, < n) all free? */
static bool range_free(const struct idpool *p, uint32_t first, uint32_t last)
{
	for (uint32_t k = first / 64; k <= last / 64; k++) {
		uint64_t m = ~0ULL;

		if (k == first / 64)
			m &= ~0ULL << (first % 64);
		if (k == last / 64 && last % 64 != 63)
			m &= (1ULL << (last % 64 + 1)) - 1;
		if (p->used[k] & m)
			return false;
	}
	return true;
}

/*
 * idpool__trim_due() - called about once a second with the bytes the
 * table has @touched (its ids handed out since the last trim times their
 * size: what may be resident, known without a system call) and the bytes
 * its contents @need: true once touched has stayed above need + need/4 +
 * FR_IDPOOL_SLACK for FR_IDPOOL_TRIM_NS of @now (any clock in ns). A trim
 * resets the clock (idpool__trimmed()), so a table whose free items are
 * spread over its pages tries again at most once per FR_IDPOOL_TRIM_NS.
 */
bool idpool__trim_due(struct idpool_trim *t, uint64_t now, uint64_t touched,
		      uint64_t need)
{
	if (touched <= need + need / 4 + FR_IDPOOL_SLACK) {
		t->above_since = 0;
		return false;
	}
	if (!t->above_since) {
		t->above_since = now ? now : 1;
		return false;
	}
	return now - t->above_since >= FR_IDPOOL_TRIM_NS;
}

/*
 * idpool__release() - give back each resident page of the array at @base
 * (id i at @base + i * @item_size) that lies below the ids handed out and
 * holds free items only; pages shared with memory around the array are
 * kept. Begins at byte offset *@from of the array's first whole page and
 * makes at most *@calls releases (each one decrements it): when they run
 * out before the end, *@from is where to resume, else it is set to 0.
 * Returns the pages released, or -errno when a release failed.
 */
long idpool__release(const struct idpool *p, void *base, size_t item_size,
		     size_t *from, unsigned *calls)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t b = (uintptr_t)base, end = b + (size_t)p->n * item_size;
	uintptr_t stop = FR_MIN(b + (size_t)p->hi * item_size, end);
	uintptr_t first = (b + pg - 1) & ~(uintptr_t)(pg - 1), a = first + *from, run = 0;
	unsigned char vec[256];
	size_t vi = sizeof(vec), vn = sizeof(vec);
	long pages = 0;
	int err;

	*from = 0;
	for (; a + pg <= end && a < stop && *calls; a += pg) {
		bool take;

		if (vi == vn) {
			vn = FR_MIN((size_t)(end - a) / pg, sizeof(vec));
			if (mincore((void *)a, vn * pg, vec))
				return -errno;
			vi = 0;
		}
		take = (vec[vi++] & 1) &&
		       range_free(p, (uint32_t)((a - b) / item_size),
				  (uint32_t)((a + pg - 1 - b) / item_size));
		if (take && !run)
			run = a;
		if (!take && run) {
			err = fr_pages_release((void *)run, a - run);
			if (err)
				return err;
			pages += (long)((a - run) / pg);
			run = 0;
			(*calls)--;
		}
	}
	if (run) {
		err = fr_pages_release((void *)run, a - run);
		if (err)
			return err;
		pages += (long)((a - run) / pg);
		(*calls)--;
	}
	if (!*calls && a + pg <= end && a < stop)
		*from = a - first;
	return pages;
}

/*
 * idpool__trim_step() - one step of the trim under way in @t, or of a new
 * one: release the pages of @parts in order, at most
 * FR_IDPOOL_RELEASE_CALLS releases. Returns -EINPROGRESS when the next
 * step is to go on; else the trim is over and this returns the pages it
 * released in all, or -errno when a release failed.
 */
long idpool__trim_step(struct idpool_trim *t, const struct idpool_part *parts,
		       unsigned nparts)
{
	unsigned calls = FR_IDPOOL_RELEASE_CALLS;
	long n = 0, pages;

	if (!t->part) {
		t->part = 1;
		t->from = 0;
		t->pages = 0;
	}
	while (t->part <= nparts && calls) {
		const struct idpool_part *q = &parts[t->part - 1];

		n = idpool__release(q->pool, q->base, q->item_size, &t->from, &calls);
		if (n < 0)
			break;
		t->pages += n;
		if (t->from)
			return -EINPROGRESS;
		t->part++;
	}
	if (n >= 0 && t->part <= nparts)
		return -EINPROGRESS;
	pages = n < 0 ? n : t->pages;
	t->part = 0;
	t->from = 0;
	t->pages = 0;
	return pages;
}

/*
 * idpool__trimmed() - a trim gave back @pages pages (or failed, < 0): the
 * ids handed out now end at the highest in use, and @t's clock (if any)
 * restarts.
 */
void idpool__trimmed(struct idpool *p, struct idpool_trim *t, long pages)
{
	uint32_t k = FR_WORDS(p->hi);
	uint64_t w = 0;

	/* The highest id in use below hi; the sealed bits past n are not ids. */
	while (k) {
		w = p->used[k - 1];
		if (k == FR_WORDS(p->n) && p->n % 64)
			w &= (1ULL << (p->n % 64)) - 1;
		if (w)
			break;
		k--;
	}
	p->hi = k ? (k - 1) * 64 + 64 - (uint32_t)__builtin_clzll(w) : 0;
	if (!t)
		return;
	t->above_since = 0;
	if (pages < 0)
		t->release_failed++;
	else if (pages)
		t->shrinks++, t->pages_released += (uint64_t)pages;
}

/*
 * fr_pages_release() - give the pages of [@p, @p + @len) back. Locked
 * memory (mlockall) refuses MADV_DONTNEED: it is unlocked for that and
 * locked again on fault, as mlockall(MCL_ONFAULT) had it. The pages read
 * as zeros afterwards. Returns 0 or -errno.
 */
int fr_pages_release(void *p, size_t len)
{
	if (!madvise(p, len, MADV_DONTNEED))
		return 0;
	if (errno != EINVAL || munlock(p, len))
		return -errno;
	if (madvise(p, len, MADV_DONTNEED)) {
		int err = -errno;

		mlock2(p, len, MLOCK_ONFAULT);
		return err;
	}
	return mlock2(p, len, MLOCK_ONFAULT) ? -errno : 0;
}
