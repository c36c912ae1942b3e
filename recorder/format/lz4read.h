/* SPDX-License-Identifier: MIT */
/*
 * lz4read.h - the reader's whole-file decompressor of a dump's LZ4 frame
 * (format.c's dump__load() and the fuzzers use it).
 */
#ifndef FR_LZ4READ_H
#define FR_LZ4READ_H

#include <stddef.h>

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

#endif /* FR_LZ4READ_H */
