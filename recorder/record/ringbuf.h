/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ringbuf.h - consumer of the BPF ring buffer (BPF_MAP_TYPE_RINGBUF).
 *
 * Our own consumer instead of libbpf's ring_buffer__poll(): the drain needs
 * to know whether a pass stopped at a record that was reserved but not yet
 * committed (the watermark cannot pass it), and the ingest benchmark feeds
 * the same record callback without a kernel.
 */
#ifndef FR_RINGBUF_H
#define FR_RINGBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* fr_record_fn - one committed record; return 0 or -errno to stop. */
typedef int (*fr_record_fn)(void *ctx, const void *data, size_t len);

struct ringbuf;

struct ringbuf *ringbuf__new(int map_fd);
void ringbuf__free(struct ringbuf *rb);
int ringbuf__fd(const struct ringbuf *rb);
int ringbuf__consume(struct ringbuf *rb, fr_record_fn fn, void *ctx, bool *busy);
size_t ringbuf__size(const struct ringbuf *rb);
uint64_t ringbuf__pending(const struct ringbuf *rb);

#endif /* FR_RINGBUF_H */
