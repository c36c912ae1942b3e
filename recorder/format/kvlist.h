/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kvlist.h - ordered key/value lists: a dump's META and LOSS sections
 * (kvlist.c).
 */
#ifndef FR_KVLIST_H
#define FR_KVLIST_H

#include <stdint.h>

enum fr_kv_type {
	FR_KV_UINT	= 0,
	FR_KV_SINT	= 1,
	FR_KV_STR	= 2,
	FR_KV_UARRAY	= 3,
};

struct fr_kv {
	char *key;
	uint8_t type;		/* enum fr_kv_type */
	uint32_t n;		/* FR_KV_UARRAY: number of values */
	uint64_t u;		/* FR_KV_UINT */
	int64_t i;		/* FR_KV_SINT */
	char *s;		/* FR_KV_STR */
	uint64_t *arr;		/* FR_KV_UARRAY */
};

struct fr_kvlist {
	struct fr_kv *kv;
	uint32_t n;
	uint32_t cap;
};

int kvlist__add_u64(struct fr_kvlist *l, const char *key, uint64_t v);
int kvlist__add_s64(struct fr_kvlist *l, const char *key, int64_t v);
int kvlist__add_str(struct fr_kvlist *l, const char *key, const char *s);
int kvlist__add_array(struct fr_kvlist *l, const char *key, const uint64_t *v, uint32_t n);
const struct fr_kv *kvlist__find(const struct fr_kvlist *l, const char *key);
void kvlist__free(struct fr_kvlist *l);

#endif /* FR_KVLIST_H */
