/* SPDX-License-Identifier: MIT */
/*
 * compress.h - LZ4 frame compression into a dumpfile, and the reader's
 * whole-file decompressor.
 *
 * A dump is exactly one standard LZ4 frame (magic 0x184D2204): 1 MiB linked
 * blocks, a checksum on every block and on the whole content. The `lz4` CLI
 * can test (`lz4 -t`) and decompress it.
 */
#ifndef FR_COMPRESS_H
#define FR_COMPRESS_H

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

/*
 * lz4_decompress_file() - decompress @path, which must hold exactly one LZ4
 * frame, optionally preceded and followed by skippable frames (ignored).
 * On success returns 0 and a malloc'd buffer in *@out (never NULL, even for
 * empty content) of *@out_len bytes. On failure returns -errno, leaves
 * *@out and *@out_len untouched and writes a one-line message into @err (if
 * @errlen > 0) naming the file and, where relevant, the byte offset:
 *   -EBADMSG  not an LZ4 frame (empty, bad magic at byte 0), corrupt frame
 *             header, block or content checksum mismatch, corrupt block
 *             data, trailing garbage after the frame
 *   -EPROTO   truncated: the input ends inside the frame (or inside a
 *             skippable frame); the message says where
 *   -EFBIG    the content would exceed @max_out bytes, or the file is
 *             larger than a frame of @max_out bytes of content can be
 *             (@max_out plus LZ4's framing): refused before it is read,
 *             the message names its size
 *   -ENOMEM, or -errno from open/read (message "failed to <verb> '<path>'")
 */
int lz4_decompress_file(const char *path, size_t max_out, void **out,
			size_t *out_len, char *err, size_t errlen);

/* lz4_decompress_mem() - the same on @in_len bytes at @in; messages carry
 * no file name. */
int lz4_decompress_mem(const void *in, size_t in_len, size_t max_out,
		       void **out, size_t *out_len, char *err, size_t errlen);

#endif /* FR_COMPRESS_H */
