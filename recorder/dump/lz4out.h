/* SPDX-License-Identifier: MIT */
/*
 * lz4out.h - LZ4 frame compression into a dumpfile: how the recorder writes
 * a dump. The reader's side is format/lz4read.h.
 *
 * A dump is exactly one standard LZ4 frame (magic 0x184D2204): 1 MiB linked
 * blocks, a checksum on every block and on the whole content. The `lz4` CLI
 * can test (`lz4 -t`) and decompress it.
 */
#ifndef FR_LZ4OUT_H
#define FR_LZ4OUT_H

#include <stddef.h>
#include <stdint.h>

#include "writer.h"

struct lz4out;

/*
 * lz4out__new() - start one LZ4 frame (1 MiB linked blocks, block and
 * content checksums, default fast level) and write its header into @f. All
 * compressor buffers are allocated here. NULL and errno on failure (the
 * dumpfile's own error, e.g. ENOSPC, or ENOMEM).
 */
struct lz4out *lz4out__new(struct dumpfile *f);

/*
 * lz4out__alloc() - a compressor whose buffers are all allocated and
 * touched, with no frame begun: frames then begin with lz4out__begin(),
 * one after another, allocating nothing. NULL and errno on failure.
 */
struct lz4out *lz4out__alloc(void);

/*
 * lz4out__begin() - start a new frame into @f (its header written there),
 * reusing @z's buffers; its earlier frame, if any, is over. 0 or -errno.
 */
int lz4out__begin(struct lz4out *z, struct dumpfile *f);

/* lz4out__write() - compress @len bytes of @buf into the frame, in chunks,
 * without allocating. 0 or -errno; errors are sticky. -EINVAL after finish. */
int lz4out__write(struct lz4out *z, const void *buf, size_t len);

/* lz4out__finish() - flush buffered input and end the frame (end mark and
 * content checksum) into the dumpfile; the caller then commits the
 * dumpfile. 0 or -errno; -EINVAL when called twice. */
int lz4out__finish(struct lz4out *z);

/* lz4out__free() - free the compressor. Accepts NULL; does not touch the
 * dumpfile. */
void lz4out__free(struct lz4out *z);

/* lz4out__bytes_in() - uncompressed bytes accepted so far. */
uint64_t lz4out__bytes_in(const struct lz4out *z);

#endif /* FR_LZ4OUT_H */
