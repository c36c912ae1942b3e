// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kvlist.c - the key-value lists of META and LOSS (format.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvlist.h"
#include "util.h"

static struct fr_kv *kv_new(struct fr_kvlist *l, const char *key, uint8_t type)
{
	struct fr_kv *kv;

	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 16;
		struct fr_kv *n = realloc(l->kv, cap * sizeof(*n));

		if (!n)
			return NULL;
		l->kv = n;
		l->cap = cap;
	}
	kv = &l->kv[l->n];
	memset(kv, 0, sizeof(*kv));
	kv->key = strdup(key);
	if (!kv->key)
		return NULL;
	kv->type = type;
	l->n++;
	return kv;
}

int kvlist__add_u64(struct fr_kvlist *l, const char *key, uint64_t v)
{
	struct fr_kv *kv = kv_new(l, key, FR_KV_UINT);

	if (!kv)
		return -ENOMEM;
	kv->u = v;
	return 0;
}

int kvlist__add_s64(struct fr_kvlist *l, const char *key, int64_t v)
{
	struct fr_kv *kv = kv_new(l, key, FR_KV_SINT);

	if (!kv)
		return -ENOMEM;
	kv->i = v;
	return 0;
}

int kvlist__add_str(struct fr_kvlist *l, const char *key, const char *s)
{
	struct fr_kv *kv = kv_new(l, key, FR_KV_STR);

	if (!kv)
		return -ENOMEM;
	kv->s = strdup(s ? s : "");
	return kv->s ? 0 : -ENOMEM;
}

int kvlist__add_array(struct fr_kvlist *l, const char *key, const uint64_t *v,
		      uint32_t n)
{
	struct fr_kv *kv = kv_new(l, key, FR_KV_UARRAY);

	if (!kv)
		return -ENOMEM;
	kv->arr = calloc(n ? n : 1, sizeof(*v));
	if (!kv->arr)
		return -ENOMEM;
	if (n)
		memcpy(kv->arr, v, n * sizeof(*v));
	kv->n = n;
	return 0;
}

const struct fr_kv *kvlist__find(const struct fr_kvlist *l, const char *key)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (!strcmp(l->kv[i].key, key))
			return &l->kv[i];
	return NULL;
}

void kvlist__free(struct fr_kvlist *l)
{
	for (uint32_t i = 0; i < l->n; i++) {
		free(l->kv[i].key);
		free(l->kv[i].s);
		free(l->kv[i].arr);
	}
	free(l->kv);
	memset(l, 0, sizeof(*l));
}
