// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hashmap.c - open-addressing hash map with hash and equality callbacks.
 * See hashmap.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "util.h"

#define FR_HASHMAP_MIN	16

uint64_t fr_hashmap_hash_bytes(const void *key, size_t key_size, void *ctx)
{
	(void)ctx;
	return fr_hash64(key, key_size, 0x686d6170);
}

bool fr_hashmap_equal_bytes(const void *a, const void *b, size_t key_size, void *ctx)
{
	(void)ctx;
	return !memcmp(a, b, key_size);
}

void fr_hashmap__init(struct fr_hashmap *m, size_t key_size, size_t val_size,
		      fr_hashmap_hash_fn hash, fr_hashmap_equal_fn equal, void *ctx)
{
	memset(m, 0, sizeof(*m));
	m->hash = hash ? hash : fr_hashmap_hash_bytes;
	m->equal = equal ? equal : fr_hashmap_equal_bytes;
	m->ctx = ctx;
	m->key_size = key_size;
	m->val_size = val_size;
	/* used byte, key and value, each part aligned to 8 */
	m->slot_size = 8 + FR_ALIGN(key_size, 8) + FR_ALIGN(val_size, 8);
}

void fr_hashmap__fini(struct fr_hashmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}

static unsigned char *slot(const struct fr_hashmap *m, size_t i)
{
	return m->slots + i * m->slot_size;
}

static void *key_of(const struct fr_hashmap *m, unsigned char *s)
{
	(void)m;
	return s + 8;
}

static void *val_of(const struct fr_hashmap *m, unsigned char *s)
{
	return s + 8 + FR_ALIGN(m->key_size, 8);
}

/* The slot holding a key equal to @key, or the empty slot it would take. */
static unsigned char *probe(const struct fr_hashmap *m, const void *key, uint64_t h)
{
	size_t mask = m->cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		unsigned char *s = slot(m, i);

		if (!s[0] || m->equal(key_of(m, s), key, m->key_size, m->ctx))
			return s;
	}
}

/* Double the table (or make the first one). 0 or -ENOMEM. */
static int grow(struct fr_hashmap *m)
{
	struct fr_hashmap bigger = *m;
	size_t cap = m->cap ? m->cap * 2 : FR_HASHMAP_MIN;

	if (cap < m->cap || cap > SIZE_MAX / m->slot_size)
		return -ENOMEM;
	bigger.slots = calloc(cap, m->slot_size);
	if (!bigger.slots)
		return -ENOMEM;
	bigger.cap = cap;
	for (size_t i = 0; i < m->cap; i++) {
		unsigned char *s = slot(m, i);

		if (s[0])
			memcpy(probe(&bigger, key_of(m, s),
				     m->hash(key_of(m, s), m->key_size, m->ctx)), s, m->slot_size);
	}
	free(m->slots);
	m->slots = bigger.slots;
	m->cap = cap;
	return 0;
}

void *fr_hashmap__find(const struct fr_hashmap *m, const void *key)
{
	unsigned char *s;

	if (!m->cap)
		return NULL;
	s = probe(m, key, m->hash(key, m->key_size, m->ctx));
	return s[0] ? val_of(m, s) : NULL;
}

int fr_hashmap__insert(struct fr_hashmap *m, const void *key, const void *val)
{
	unsigned char *s;

	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	s = probe(m, key, m->hash(key, m->key_size, m->ctx));
	if (!s[0]) {
		s[0] = 1;
		memcpy(key_of(m, s), key, m->key_size);
		m->n++;
	}
	memcpy(val_of(m, s), val, m->val_size);
	return 0;
}

size_t fr_hashmap__size(const struct fr_hashmap *m)
{
	return m->n;
}

bool fr_hashmap__at(const struct fr_hashmap *m, size_t i, const void **key, void **val)
{
	unsigned char *s;

	if (i >= m->cap)
		return false;
	s = slot(m, i);
	if (!s[0])
		return false;
	*key = key_of(m, s);
	*val = val_of(m, s);
	return true;
}

/*
 * Linear probing deletes by shifting back: each later entry of the probe
 * run that may live in the hole moves into it, so no tombstones are left
 * and lookups still stop at the first empty slot.
 */
bool fr_hashmap__remove(struct fr_hashmap *m, const void *key)
{
	size_t mask = m->cap - 1, hole, i;
	unsigned char *s;

	if (!m->cap)
		return false;
	s = probe(m, key, m->hash(key, m->key_size, m->ctx));
	if (!s[0])
		return false;
	hole = (size_t)(s - m->slots) / m->slot_size;
	for (i = (hole + 1) & mask; slot(m, i)[0]; i = (i + 1) & mask) {
		unsigned char *t = slot(m, i);
		size_t home = m->hash(key_of(m, t), m->key_size, m->ctx) & mask;

		/* t may fill the hole unless its home lies in (hole, i]. */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			memcpy(slot(m, hole), t, m->slot_size);
			hole = i;
		}
	}
	slot(m, hole)[0] = 0;
	m->n--;
	return true;
}
