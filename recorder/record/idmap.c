// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * idmap.c - 64-bit key to 32-bit value map. See idmap.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "idmap.h"

static inline size_t slot_of(uint64_t key, size_t mask)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return key & mask;
}

static int alloc(struct idmap *m, size_t cap)
{
	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = calloc(cap, sizeof(*m->vals));
	m->used = calloc(cap, 1);
	if (!m->keys || !m->vals || !m->used) {
		idmap__destroy(m);
		return -ENOMEM;
	}
	m->cap = cap;
	m->n = 0;
	return 0;
}

/* idmap__init() - an empty map sized for about @hint keys. 0 or -ENOMEM. */
int idmap__init(struct idmap *m, size_t hint)
{
	size_t cap = 64;

	while (cap < hint * 2)
		cap <<= 1;
	return alloc(m, cap);
}

void idmap__destroy(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	m->keys = NULL;
	m->vals = NULL;
	m->used = NULL;
	m->cap = m->n = 0;
}

bool idmap__get(const struct idmap *m, uint64_t key, uint32_t *val)
{
	size_t mask = m->cap - 1;

	if (!m->cap)
		return false;
	for (size_t i = slot_of(key, mask); m->used[i]; i = (i + 1) & mask) {
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return true;
		}
	}
	return false;
}

static void insert(struct idmap *m, uint64_t key, uint32_t val)
{
	size_t mask = m->cap - 1, i = slot_of(key, mask);

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	if (!m->used[i])
		m->n++;
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
}

/* idmap__put() - set @key to @val, growing at 70% load. 0 or -ENOMEM. */
int idmap__put(struct idmap *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 10 > m->cap * 7) {
		struct idmap old = *m;
		int err = alloc(m, old.cap ? old.cap * 2 : 64);

		if (err) {
			*m = old;
			return err;
		}
		for (size_t i = 0; i < old.cap; i++)
			if (old.used[i])
				insert(m, old.keys[i], old.vals[i]);
		idmap__destroy(&old);
	}
	insert(m, key, val);
	return 0;
}
