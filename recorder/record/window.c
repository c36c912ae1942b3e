// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * window.c - the time- and space-bounded event ring. See window.h.
 *
 * Indexes are monotonic 64-bit counters. The ring is cut in chunks of
 * 2^shift slots: logical chunk idx >> shift lives in the physical chunk
 * map[(idx >> shift) % nmap]. The writer takes a physical chunk when the
 * head enters a logical one, the free one with the lowest address, and
 * frees it when the tail leaves it. So the chunks in use, and the pages
 * touched, follow what the window holds rather than the cap: a ring with
 * idx % nslots would touch every page of the reservation in its first lap,
 * and with the memory locked, keep them. Free chunks well above the need,
 * unused for FR_WINDOW_TRIM_NS, give their pages back once (trim()); the
 * hot path never does.
 *
 * Valid events are [tail, head). Ordering protocol (one writer, many
 * readers):
 *   writer recycling a slot: store tail; release fence; store map entry
 *                            and slot words
 *   writer publishing:       store slot words; store-release head
 *   reader:                  load-acquire head; load map entry and slot
 *                            words; acquire fence; load tail; valid iff
 *                            idx >= tail
 * A reader's map entry may be one the writer has since reused for a later
 * logical chunk only if that chunk's events were all evicted (nmap exceeds
 * the chunks the window can span), which the tail check then reports.
 * Slot words and map entries are accessed with relaxed atomics so that
 * the race a reader loses is detected, not undefined.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "idpool.h"
#include "util.h"
#include "window.h"

#define FR_NO_PIN	UINT64_MAX
#define FR_SLOT_WORDS	(sizeof(struct fr_event) / sizeof(uint64_t))
#define FR_NO_CHUNK	UINT32_MAX

struct window {
	_Atomic uint64_t head;
	_Atomic uint64_t tail;
	uint64_t *slots;		/* nchunks << shift slots of FR_SLOT_WORDS words */
	size_t nslots;			/* the most events held */
	unsigned int shift;		/* a chunk is 1 << shift slots */
	uint32_t nchunks;		/* physical chunks */
	uint32_t nmap;			/* entries of map[] */
	uint32_t *map;			/* logical chunk % nmap -> physical chunk */
	uint64_t *free_bits;		/* physical chunks free */
	uint64_t *touched_bits;		/* physical chunks whose pages may be resident */
	uint64_t *freed_at;		/* per chunk: window__expire()'s clock when freed */
	uint32_t in_use, touched;
	uint64_t now;			/* the latest window__expire() time */
	uint64_t next_trim;
	size_t map_len;
	uint64_t span;
	uint64_t pin;
	fr_event_evict_fn evict;
	void *ctx;
	struct window_stats st;
};

static inline bool bit_get(const uint64_t *b, uint32_t i)
{
	return b[i / 64] >> (i % 64) & 1;
}

static inline void bit_set(uint64_t *b, uint32_t i, bool on)
{
	if (on)
		b[i / 64] |= 1ULL << (i % 64);
	else
		b[i / 64] &= ~(1ULL << (i % 64));
}

/* The chunk shift for a cap of @nslots: FR_WINDOW_CHUNK, or less for small rings. */
static unsigned int chunk_shift(size_t nslots)
{
	unsigned int s = FR_WINDOW_CHUNK_SHIFT;

	while (s && ((size_t)4 << s) > nslots)
		s--;
	return s;
}

/* Physical chunks a cap of @nslots needs: it spans at most one more than it fills, and the head's. */
static size_t chunks_for(size_t nslots, unsigned int shift)
{
	return ((nslots + ((size_t)1 << shift) - 1) >> shift) + 2;
}

size_t window__budget(size_t nslots)
{
	unsigned int s = chunk_shift(nslots);

	return (chunks_for(nslots, s) << s) * sizeof(struct fr_event);
}

/*
 * window__new() - reserve a ring of at most @nslots events covering
 * @span_ns. The memory is mapped once here (window__budget() bytes, none
 * touched); nothing is allocated per event later. Returns NULL and sets
 * errno on failure.
 */
struct window *window__new(size_t nslots, uint64_t span_ns,
			   fr_event_evict_fn evict, void *ctx)
{
	struct window *w;
	size_t words;

	if (nslots < 2 || nslots > (UINT32_MAX >> 1)) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->shift = chunk_shift(nslots);
	w->nchunks = (uint32_t)chunks_for(nslots, w->shift);
	w->nmap = 2 * w->nchunks;
	words = (w->nchunks + 63) / 64;
	w->map = malloc(w->nmap * sizeof(*w->map));
	w->free_bits = malloc(words * sizeof(uint64_t));
	w->touched_bits = calloc(words, sizeof(uint64_t));
	w->freed_at = calloc(w->nchunks, sizeof(uint64_t));
	w->map_len = window__budget(nslots);
	w->slots = mmap(NULL, w->map_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (w->slots == MAP_FAILED)
		w->slots = NULL;
	if (!w->map || !w->free_bits || !w->touched_bits || !w->freed_at || !w->slots) {
		window__free(w);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < w->nmap; i++)
		w->map[i] = FR_NO_CHUNK;
	memset(w->free_bits, 0, words * sizeof(uint64_t));
	for (uint32_t i = 0; i < w->nchunks; i++)
		bit_set(w->free_bits, i, true);
	w->nslots = nslots;
	w->span = span_ns;
	w->pin = FR_NO_PIN;
	w->evict = evict;
	w->ctx = ctx;
	return w;
}

void window__free(struct window *w)
{
	if (!w)
		return;
	if (w->slots)
		munmap(w->slots, w->map_len);
	free(w->freed_at);
	free(w->touched_bits);
	free(w->free_bits);
	free(w->map);
	free(w);
}

static inline size_t chunk_bytes(const struct window *w)
{
	return ((size_t)1 << w->shift) * sizeof(struct fr_event);
}

static inline uint64_t *slot_words(const struct window *w, uint64_t idx)
{
	uint32_t c = __atomic_load_n(&w->map[(idx >> w->shift) % w->nmap], __ATOMIC_RELAXED);
	uint64_t off = idx & (((uint64_t)1 << w->shift) - 1);

	/* A reader of an index never published into this entry reads chunk 0: the tail check rejects it. */
	if (c == FR_NO_CHUNK)
		c = 0;
	return &w->slots[(((size_t)c << w->shift) + off) * FR_SLOT_WORDS];
}

static void slot_load(const struct window *w, uint64_t idx, struct fr_event *ev)
{
	const uint64_t *s = slot_words(w, idx);
	uint64_t v[FR_SLOT_WORDS];

	for (size_t i = 0; i < FR_SLOT_WORDS; i++)
		v[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
	memcpy(ev, v, sizeof(*ev));
}

static void slot_store(struct window *w, uint64_t idx, const struct fr_event *ev)
{
	uint64_t *s = slot_words(w, idx);
	uint64_t v[FR_SLOT_WORDS];

	memcpy(v, ev, sizeof(v));
	for (size_t i = 0; i < FR_SLOT_WORDS; i++)
		__atomic_store_n(&s[i], v[i], __ATOMIC_RELAXED);
}

/* chunk_take() - the free physical chunk with the lowest address, now in use; FR_NO_CHUNK if none. */
static uint32_t chunk_take(struct window *w)
{
	for (uint32_t k = 0; k < (w->nchunks + 63) / 64; k++) {
		uint32_t c;

		if (!w->free_bits[k])
			continue;
		c = k * 64 + (uint32_t)__builtin_ctzll(w->free_bits[k]);
		bit_set(w->free_bits, c, false);
		w->in_use++;
		if (!bit_get(w->touched_bits, c)) {
			bit_set(w->touched_bits, c, true);
			w->touched++;
			w->st.chunks_grown++;
		}
		return c;
	}
	return FR_NO_CHUNK;
}

/* Drop the oldest event: hand it to the evict callback, then advance tail. */
static void evict_tail(struct window *w, uint64_t tail)
{
	struct fr_event ev;

	slot_load(w, tail, &ev);
	if (w->evict)
		w->evict(w->ctx, &ev);
	atomic_store_explicit(&w->tail, tail + 1, memory_order_relaxed);
	if (!((tail + 1) & (((uint64_t)1 << w->shift) - 1))) {
		/* The tail left its chunk: every event of it is gone. */
		uint32_t c = w->map[(tail >> w->shift) % w->nmap];

		bit_set(w->free_bits, c, true);
		w->freed_at[c] = w->now;
		w->in_use--;
	}
}

/*
 * window__evict_oldest() - push the oldest event out to make room elsewhere
 * (the stack or string tables are full). Ignores the pin, like any eviction
 * for space. Returns 0, or -ENOENT when the window is empty.
 */
int window__evict_oldest(struct window *w)
{
	uint64_t head = atomic_load_explicit(&w->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&w->tail, memory_order_relaxed);

	if (tail == head)
		return -ENOENT;
	if (w->pin != FR_NO_PIN && tail >= w->pin)
		w->st.evicted_pinned++;
	w->st.evicted_space++;
	evict_tail(w, tail);
	return 0;
}

/* chunk_release() - give the pages of free chunk @c back (fr_pages_release()). Returns 0 or -errno. */
static int chunk_release(struct window *w, uint32_t c)
{
	return fr_pages_release((char *)w->slots + (size_t)c * chunk_bytes(w), chunk_bytes(w));
}

/*
 * trim() - shrink the touched chunks toward the need: while more than the
 * chunks in use plus a quarter (and one) are touched, release the highest
 * free touched chunk that has been free FR_WINDOW_TRIM_NS. The lowest free
 * chunk is always taken first, so the highest are those the need left.
 */
static void trim(struct window *w)
{
	uint32_t keep = w->in_use + w->in_use / 4 + 1;
	bool any = false;

	for (uint32_t c = w->nchunks; c-- > 0 && w->touched > keep;) {
		if (!bit_get(w->touched_bits, c) || !bit_get(w->free_bits, c) ||
		    w->now - w->freed_at[c] < FR_WINDOW_TRIM_NS)
			continue;
		if (chunk_release(w, c)) {
			w->st.release_failed++;
			continue;
		}
		bit_set(w->touched_bits, c, false);
		w->touched--;
		w->st.chunks_released++;
		any = true;
	}
	w->st.shrinks += any;
}

/*
 * window__expire() - age out events older than @now - span, stopping at a
 * reader's pin. Events must have been appended in time order. Once a
 * second of @now, trim the ring's touched chunks toward its need.
 */
void window__expire(struct window *w, uint64_t now)
{
	uint64_t head = atomic_load_explicit(&w->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&w->tail, memory_order_relaxed);
	uint64_t limit = now > w->span ? now - w->span : 0;
	struct fr_event ev;

	if (now > w->now)
		w->now = now;
	while (tail != head && tail < w->pin) {
		slot_load(w, tail, &ev);
		if (ev.ts >= limit)
			break;
		w->st.evicted_time++;
		evict_tail(w, tail);
		tail++;
	}
	if (w->now >= w->next_trim) {
		w->next_trim = w->now + FR_NSEC_PER_SEC;
		trim(w);
	}
}

/*
 * window__append() - add @ev, newest. When every slot is taken, recycles
 * the oldest one even if a reader pinned it: the writer never waits. Aging
 * out by time is window__expire()'s, called once per batch by the drain
 * (not per event: it reads the oldest slot, a cache miss on the hot path).
 */
void window__append(struct window *w, const struct fr_event *ev)
{
	uint64_t head = atomic_load_explicit(&w->head, memory_order_relaxed);

	if (head - atomic_load_explicit(&w->tail, memory_order_relaxed) == w->nslots)
		window__evict_oldest(w);
	if (!(head & (((uint64_t)1 << w->shift) - 1))) {
		/* The head enters a chunk: chunks_for() leaves one free. */
		uint32_t c = chunk_take(w);

		while (c == FR_NO_CHUNK && !window__evict_oldest(w))
			c = chunk_take(w);
		/* Order the tail stores above before the chunk is reused. */
		atomic_thread_fence(memory_order_release);
		__atomic_store_n(&w->map[(head >> w->shift) % w->nmap], c, __ATOMIC_RELAXED);
	}
	/* Order the tail store above before the slot is overwritten. */
	atomic_thread_fence(memory_order_release);
	slot_store(w, head, ev);
	atomic_store_explicit(&w->head, head + 1, memory_order_release);
	w->st.appended++;
}

void window__set_span(struct window *w, uint64_t span_ns)
{
	w->span = span_ns;
}

uint64_t window__span(const struct window *w)
{
	return w->span;
}

/* window__pin() - keep time eviction away from [idx, ...) until unpinned. */
void window__pin(struct window *w, uint64_t idx)
{
	w->pin = idx;
}

void window__unpin(struct window *w)
{
	w->pin = FR_NO_PIN;
}

/*
 * window__lower_bound() - writer side: the index of the first event with
 * ts >= @ts, or head if there is none. Binary search over the time-ordered
 * ring.
 */
uint64_t window__lower_bound(const struct window *w, uint64_t ts)
{
	uint64_t lo = atomic_load_explicit(&w->tail, memory_order_relaxed);
	uint64_t hi = atomic_load_explicit(&w->head, memory_order_relaxed);
	struct fr_event ev;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		slot_load(w, mid, &ev);
		if (ev.ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct window_stats *window__stats(const struct window *w)
{
	return &w->st;
}

void window__footprint(const struct window *w, struct window_footprint *out)
{
	uint64_t head = window__head(w), tail = window__tail(w);

	out->live_bytes = (head - tail) * sizeof(struct fr_event);
	out->touched_bytes = (uint64_t)w->touched * chunk_bytes(w);
	out->resident_bytes = fr_resident_bytes(w->slots, w->map_len);
	out->active_bytes = (uint64_t)w->in_use * chunk_bytes(w);
	out->reserved_bytes = w->map_len;
	out->chunk_bytes = chunk_bytes(w);
}

uint64_t window__head(const struct window *w)
{
	return atomic_load_explicit(&((struct window *)w)->head, memory_order_acquire);
}

uint64_t window__tail(const struct window *w)
{
	return atomic_load_explicit(&((struct window *)w)->tail, memory_order_acquire);
}

size_t window__capacity(const struct window *w)
{
	return w->nslots;
}

/*
 * window__read() - copy event @idx into @out. Returns 0 when the copy is
 * the event that was published at @idx, -ESTALE when the writer recycled
 * the slot (before or during the read), -ENOENT when @idx is not published.
 */
int window__read(const struct window *w, uint64_t idx, struct fr_event *out)
{
	if (idx >= window__head(w))
		return -ENOENT;
	slot_load(w, idx, out);
	atomic_thread_fence(memory_order_acquire);
	if (idx < atomic_load_explicit(&((struct window *)w)->tail, memory_order_relaxed))
		return -ESTALE;
	return 0;
}
