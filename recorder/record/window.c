// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * window.c - the time- and space-bounded event ring. See window.h.
 *
 * Indexes are monotonic 64-bit counters; slot = idx % nslots. Valid events
 * are [tail, head). Ordering protocol (one writer, many readers):
 *   writer recycling a slot: store tail; release fence; store slot words
 *   writer publishing:       store slot words; store-release head
 *   reader:                  load-acquire head; load slot words;
 *                            acquire fence; load tail; valid iff idx >= tail
 * Slot words are accessed with relaxed atomics so that the race a reader
 * loses is detected, not undefined.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "window.h"

#define FR_NO_PIN	UINT64_MAX
#define FR_SLOT_WORDS	(sizeof(struct fr_event) / sizeof(uint64_t))

struct window {
	_Atomic uint64_t head;
	_Atomic uint64_t tail;
	uint64_t *slots;		/* nslots * FR_SLOT_WORDS words */
	size_t nslots;
	size_t map_len;
	uint64_t span;
	uint64_t pin;
	fr_event_evict_fn evict;
	void *ctx;
	struct window_stats st;
};

/*
 * window__new() - reserve a ring of @nslots events covering @span_ns.
 * The memory is mapped once here; nothing is allocated per event later.
 * Returns NULL and sets errno on failure.
 */
struct window *window__new(size_t nslots, uint64_t span_ns,
			   fr_event_evict_fn evict, void *ctx)
{
	struct window *w;

	if (nslots < 2 || nslots > (SIZE_MAX / sizeof(struct fr_event))) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->map_len = nslots * sizeof(struct fr_event);
	w->slots = mmap(NULL, w->map_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (w->slots == MAP_FAILED) {
		free(w);
		return NULL;
	}
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
	munmap(w->slots, w->map_len);
	free(w);
}

static inline uint64_t *slot_words(const struct window *w, uint64_t idx)
{
	return &w->slots[(idx % w->nslots) * FR_SLOT_WORDS];
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

/* Drop the oldest event: hand it to the evict callback, then advance tail. */
static void evict_tail(struct window *w, uint64_t tail)
{
	struct fr_event ev;

	slot_load(w, tail, &ev);
	if (w->evict)
		w->evict(w->ctx, &ev);
	atomic_store_explicit(&w->tail, tail + 1, memory_order_relaxed);
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

/*
 * window__expire() - age out events older than @now - span, stopping at a
 * reader's pin. Events must have been appended in time order.
 */
void window__expire(struct window *w, uint64_t now)
{
	uint64_t head = atomic_load_explicit(&w->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&w->tail, memory_order_relaxed);
	uint64_t limit = now > w->span ? now - w->span : 0;
	struct fr_event ev;

	while (tail != head && tail < w->pin) {
		slot_load(w, tail, &ev);
		if (ev.ts >= limit)
			break;
		w->st.evicted_time++;
		evict_tail(w, tail);
		tail++;
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
