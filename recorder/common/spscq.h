/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spscq.h - a bounded queue of byte records between one producer thread
 * and one consumer thread, without a lock (spscq.c): the main thread hands
 * the dump thread what it may prepare between dumps without ever waiting
 * for it. A record that does not fit is refused, never waited for.
 */
#ifndef FR_SPSCQ_H
#define FR_SPSCQ_H

#include <stddef.h>
#include <stdint.h>

struct spscq;

struct spscq *spscq__new(size_t bytes);
void spscq__free(struct spscq *q);
int spscq__push(struct spscq *q, const void *rec, uint32_t len);
int spscq__pop(struct spscq *q, void *buf, uint32_t cap);
int spscq__peek(struct spscq *q, void *buf, uint32_t cap);
size_t spscq__used(const struct spscq *q);
size_t spscq__size(const struct spscq *q);

#endif /* FR_SPSCQ_H */
