// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * spscq.c - a single-producer, single-consumer byte queue. See spscq.h.
 *
 * A ring of 2^k bytes; head and tail count bytes ever written and read.
 * Each record is a 4-byte length, then its bytes, padded to 4 bytes and
 * wrapping around the end. The producer publishes head with a release
 * store after writing, the consumer tail after reading, and each reads the
 * other's with an acquire load: neither ever sees a half-written record.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "spscq.h"
#include "util.h"

struct spscq {
	_Atomic uint64_t head;		/* bytes written (the producer's) */
	char pad1[64 - sizeof(uint64_t)];
	_Atomic uint64_t tail;		/* bytes read (the consumer's) */
	char pad2[64 - sizeof(uint64_t)];
	size_t size;			/* a power of two */
	uint8_t *ring;
};

/* spscq__new() - a queue of at least @bytes (rounded up to a power of two, 4 KiB at least). */
struct spscq *spscq__new(size_t bytes)
{
	struct spscq *q = calloc(1, sizeof(*q));
	size_t size = 4096;

	if (!q)
		return NULL;
	while (size < bytes && size < ((size_t)1 << 40))
		size <<= 1;
	q->size = size;
	q->ring = malloc(size);
	if (!q->ring) {
		free(q);
		return NULL;
	}
	return q;
}

void spscq__free(struct spscq *q)
{
	if (!q)
		return;
	free(q->ring);
	free(q);
}

/* Copy @len bytes between the ring at @pos (wrapping) and @p. */
static void ring_copy(struct spscq *q, uint64_t pos, void *p, size_t len, bool in)
{
	size_t off = pos & (q->size - 1), first = FR_MIN(len, q->size - off);

	if (in) {
		memcpy(q->ring + off, p, first);
		memcpy(q->ring, (uint8_t *)p + first, len - first);
	} else {
		memcpy(p, q->ring + off, first);
		memcpy((uint8_t *)p + first, q->ring, len - first);
	}
}

/*
 * spscq__push() - the producer: append record @rec of @len bytes.
 * Returns 0, or -ENOSPC when it does not fit now (nothing is written).
 */
int spscq__push(struct spscq *q, const void *rec, uint32_t len)
{
	uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
	size_t need = sizeof(uint32_t) + FR_ALIGN((size_t)len, 4);

	if (need > q->size - (head - tail))
		return -ENOSPC;
	ring_copy(q, head, &len, sizeof(len), true);
	ring_copy(q, head + sizeof(len), (void *)rec, len, true);
	atomic_store_explicit(&q->head, head + need, memory_order_release);
	return 0;
}

/*
 * spscq__peek() - the consumer: the oldest record into @buf (@cap bytes;
 * a longer one is cut to them), left in the queue. Returns its full
 * length, or 0 when the queue is empty.
 */
int spscq__peek(struct spscq *q, void *buf, uint32_t cap)
{
	uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);
	uint32_t len;

	if (head == tail)
		return 0;
	ring_copy(q, tail, &len, sizeof(len), false);
	ring_copy(q, tail + sizeof(len), buf, FR_MIN(len, cap), false);
	return (int)len;
}

/*
 * spscq__pop() - the consumer: take the oldest record into @buf (@cap
 * bytes; a longer record is cut to them). Returns its full length, or 0
 * when the queue is empty.
 */
int spscq__pop(struct spscq *q, void *buf, uint32_t cap)
{
	int len = spscq__peek(q, buf, cap);

	if (len > 0)
		atomic_store_explicit(&q->tail, atomic_load_explicit(&q->tail, memory_order_relaxed) +
				      sizeof(uint32_t) + FR_ALIGN((size_t)len, 4), memory_order_release);
	return len;
}

/* spscq__used() - bytes queued now (either side; a moment's view). */
size_t spscq__used(const struct spscq *q)
{
	return atomic_load_explicit(&q->head, memory_order_acquire) -
	       atomic_load_explicit(&q->tail, memory_order_acquire);
}

size_t spscq__size(const struct spscq *q)
{
	return q->size;
}
