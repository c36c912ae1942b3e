/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hashmap.h - the project's one hash map, in the spirit of libbpf's
 * hashmap.h: open addressing over fixed-size keys and values stored in the
 * table, with a hash and an equality callback, so that a lookup never
 * trusts a hash alone. Grows by doubling, keeps at most half its slots in
 * use. The recorder's intern and process tables keep their own tables: they
 * live in the fixed, locked memory budget and are refcounted slot by slot.
 *
 * Keys that are plain bytes (ids, structs without padding holes) can use
 * fr_hashmap_hash_bytes / fr_hashmap_equal_bytes. A key may also hold
 * pointers to data the caller owns for as long as the map lives (a string
 * and its length), with callbacks that look through them.
 */
#ifndef FR_HASHMAP_H
#define FR_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*fr_hashmap_hash_fn)(const void *key, size_t key_size, void *ctx);
typedef bool (*fr_hashmap_equal_fn)(const void *a, const void *b, size_t key_size, void *ctx);

struct fr_hashmap {
	fr_hashmap_hash_fn hash;
	fr_hashmap_equal_fn equal;
	void *ctx;
	size_t key_size, val_size, slot_size;
	unsigned char *slots;	/* cap slots: a used byte, then key, then value */
	size_t cap;		/* a power of two, or 0 before the first insert */
	size_t n;
};

uint64_t fr_hashmap_hash_bytes(const void *key, size_t key_size, void *ctx);
bool fr_hashmap_equal_bytes(const void *a, const void *b, size_t key_size, void *ctx);

/*
 * fr_hashmap__init() - an empty map of @key_size-byte keys to @val_size-byte
 * values; @hash and @equal (NULL: the byte versions) see @ctx. Allocates
 * nothing until the first insert.
 */
void fr_hashmap__init(struct fr_hashmap *m, size_t key_size, size_t val_size,
		      fr_hashmap_hash_fn hash, fr_hashmap_equal_fn equal, void *ctx);

/* fr_hashmap__fini() - free the table; accepts an unused map. */
void fr_hashmap__fini(struct fr_hashmap *m);

/* fr_hashmap__find() - the value stored for a key equal to @key, or NULL. */
void *fr_hashmap__find(const struct fr_hashmap *m, const void *key);

/*
 * fr_hashmap__insert() - store @val for @key, replacing the value of an
 * equal key. Returns 0 or -ENOMEM (the map is unchanged then).
 */
int fr_hashmap__insert(struct fr_hashmap *m, const void *key, const void *val);

/*
 * fr_hashmap__remove() - drop the key equal to @key; false if there is
 * none. Values found before may move: look them up again after a remove.
 */
bool fr_hashmap__remove(struct fr_hashmap *m, const void *key);

/* fr_hashmap__size() - the number of keys stored. */
size_t fr_hashmap__size(const struct fr_hashmap *m);

/*
 * fr_hashmap__at() - iteration: the key and value of slot @i (0 <= i <
 * m->cap) in *@key and *@val, or false for an empty slot.
 */
bool fr_hashmap__at(const struct fr_hashmap *m, size_t i, const void **key, void **val);

#endif /* FR_HASHMAP_H */
