/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * idmap.h - an open-addressing map from 64-bit keys to 32-bit values, for
 * the dump path's translations (table id -> dump index). Grows by doubling.
 */
#ifndef FR_IDMAP_H
#define FR_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idmap {
	uint64_t *keys;
	uint32_t *vals;
	uint8_t *used;
	size_t cap;		/* power of two */
	size_t n;
};

int idmap__init(struct idmap *m, size_t hint);
void idmap__destroy(struct idmap *m);
bool idmap__get(const struct idmap *m, uint64_t key, uint32_t *val);
int idmap__put(struct idmap *m, uint64_t key, uint32_t val);

#endif /* FR_IDMAP_H */
