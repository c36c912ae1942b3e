// SPDX-License-Identifier: MIT
/*
 * lz4read.c - the reader's whole-file LZ4 frame decompressor. See
 * lz4read.h.
 *
 * It walks the frame structure itself (magic, header, block size words,
 * end mark, checksums) so that every error names the byte where it
 * happens, and hands liblz4's frame decoder exactly one structural unit at
 * a time (a whole block with its checksum, or the end mark with the content
 * checksum). A decoder error therefore belongs to the unit just fed. The
 * kind of error is told apart by LZ4F_getErrorName(), the only stable way
 * the public API offers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4frame.h>

#include "lz4read.h"


#define FR_LZ4_MAGIC_LEGACY	0x184C2102u
#define FR_LZ4_SKIP_MASK	0xFFFFFFF0u
#define FR_LZ4_MIN_GROW		(64u * 1024)
#define FR_LZ4_MSG_MAX		512
#define FR_LZ4_MIN_BLOCK	(64u * 1024)	/* smallest block size a frame may use */
#define FR_LZ4_FRAME_SLACK	64		/* header, end mark, checksums, last block */

struct lz4d {
	const unsigned char *in;
	size_t in_len;
	size_t max_out;
	unsigned char *buf;	/* decompressed output */
	size_t len, cap;
	size_t block_max;	/* the frame's maximum block size */
	size_t hdr_off;		/* where the frame starts (its magic) */
	unsigned long long content_size;	/* 0 when not declared */
	LZ4F_dctx *dctx;
	char *err;
	size_t errlen;
};

static uint32_t fr_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* lz4d__fail() - write the message into the caller's buffer; returns @code. */
static __attribute__((format(printf, 3, 4)))
int lz4d__fail(struct lz4d *d, int code, const char *fmt, ...)
{
	va_list ap;

	if (d->err && d->errlen) {
		va_start(ap, fmt);
		vsnprintf(d->err, d->errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* lz4d__decoder_error() - turn an LZ4F_decompress() error on the unit at
 * @off into -errno and a message. */
static int lz4d__decoder_error(struct lz4d *d, size_t r, size_t off)
{
	const char *name = LZ4F_getErrorName(r);

	if (strstr(name, "blockChecksum_invalid"))
		return lz4d__fail(d, -EBADMSG,
				  "block checksum mismatch in the LZ4 block at byte %zu",
				  off);
	if (strstr(name, "contentChecksum_invalid"))
		return lz4d__fail(d, -EBADMSG,
				  "content checksum mismatch at byte %zu: the decompressed data is corrupt",
				  off + 4);
	if (strstr(name, "decompressionFailed"))
		return lz4d__fail(d, -EBADMSG,
				  "corrupt data in the LZ4 block at byte %zu", off);
	if (strstr(name, "frameSize_wrong"))
		return lz4d__fail(d, -EBADMSG,
				  "content size mismatch at byte %zu: the header at byte %zu declares %llu bytes, the frame holds %zu",
				  off, d->hdr_off, d->content_size, d->len);
	if (strstr(name, "allocation_failed"))
		return lz4d__fail(d, -ENOMEM,
				  "out of memory decoding the LZ4 block at byte %zu",
				  off);
	return lz4d__fail(d, -EBADMSG, "corrupt LZ4 frame at byte %zu: %s",
			  off, name);
}

/* lz4d__grow() - enlarge the full output buffer by at least one byte (the
 * caller checked cap < max_out), never beyond max_out. 0 or -ENOMEM (with
 * message). */
static int lz4d__grow(struct lz4d *d)
{
	size_t want = d->cap > SIZE_MAX / 2 ? SIZE_MAX : d->cap * 2;
	unsigned char *p;

	if (want < FR_LZ4_MIN_GROW)
		want = FR_LZ4_MIN_GROW;
	if (want > d->max_out)
		want = d->max_out;
	p = realloc(d->buf, want);
	if (!p)
		return lz4d__fail(d, -ENOMEM,
				  "out of memory for %zu bytes of decompressed data",
				  want);
	d->buf = p;
	d->cap = want;
	return 0;
}

/*
 * lz4d__feed() - give the decoder the @n input bytes at @off (one whole
 * structural unit) and collect all the output they produce. When the output
 * buffer is full, a 1-byte probe tells whether more output follows: only
 * then does the buffer grow, and beyond max_out it is -EFBIG. Returns 0 with
 * *@done set when the decoder reports the frame complete, or -errno with a
 * message.
 */
static int lz4d__feed(struct lz4d *d, size_t off, size_t n, bool *done)
{
	const unsigned char *src = d->in + off;
	unsigned char probe;
	size_t avail, dn, sn, r;
	int err;

	*done = false;
	for (;;) {
		avail = d->cap - d->len;
		dn = avail ? avail : sizeof(probe);
		sn = n;
		r = LZ4F_decompress(d->dctx, avail ? d->buf + d->len : &probe,
				    &dn, src, &sn, NULL);
		if (LZ4F_isError(r))
			return lz4d__decoder_error(d, r, off);
		if (avail) {
			d->len += dn;
		} else if (dn) {
			if (d->cap >= d->max_out)
				return lz4d__fail(d, -EFBIG,
						  "decompressed data exceeds the limit of %zu bytes (LZ4 block at byte %zu)",
						  d->max_out, off);
			err = lz4d__grow(d);
			if (err)
				return err;
			d->buf[d->len++] = probe;
		}
		src += sn;
		n -= sn;
		if (r == 0 && !n) {
			*done = true;
			return 0;
		}
		if (!n && dn < (avail ? avail : sizeof(probe)))
			return 0;	/* unit consumed, nothing pending */
		if (r == 0 || (!sn && !dn))
			return lz4d__fail(d, -EBADMSG,
					  "corrupt LZ4 frame at byte %zu: the decoder disagrees with the frame structure",
					  off);
	}
}

/* lz4d__is_skippable() - true for the 16 skippable-frame magic numbers. */
static bool lz4d__is_skippable(uint32_t magic)
{
	return (magic & FR_LZ4_SKIP_MASK) == LZ4F_MAGIC_SKIPPABLE_START;
}

/* lz4d__skip() - step over the skippable frame at *@pos. 0 or -EPROTO when
 * the input ends inside it. */
static int lz4d__skip(struct lz4d *d, size_t *pos)
{
	size_t left = d->in_len - *pos;
	uint32_t size;

	if (left < 8)
		return lz4d__fail(d, -EPROTO,
				  "truncated skippable frame at byte %zu: its size field is incomplete (input ends at byte %zu)",
				  *pos, d->in_len);
	size = fr_le32(d->in + *pos + 4);
	if (left - 8 < size)
		return lz4d__fail(d, -EPROTO,
				  "truncated skippable frame at byte %zu: declares %u bytes, input ends at byte %zu",
				  *pos, size, d->in_len);
	*pos += 8 + (size_t)size;
	return 0;
}

/* lz4d__find_frame() - skip leading skippable frames; on success *@pos is
 * the offset of the LZ4 frame magic. 0 or -errno with a message. */
static int lz4d__find_frame(struct lz4d *d, size_t *pos)
{
	static const unsigned char magic_le[4] = { 0x04, 0x22, 0x4d, 0x18 };
	size_t left;
	uint32_t magic;
	int err;

	if (!d->in_len)
		return lz4d__fail(d, -EBADMSG,
				  "not an LZ4 frame: empty input, no magic number at byte 0");
	for (;;) {
		left = d->in_len - *pos;
		if (!left)
			return lz4d__fail(d, -EBADMSG,
					  "no LZ4 frame: only skippable frames up to the end of input at byte %zu",
					  *pos);
		if (left < 4) {
			if (!memcmp(d->in + *pos, magic_le, left))
				return lz4d__fail(d, -EPROTO,
						  "truncated LZ4 frame at byte %zu: magic number incomplete (input ends at byte %zu)",
						  *pos, d->in_len);
			return lz4d__fail(d, -EBADMSG,
					  "not an LZ4 frame: bad magic number at byte %zu (%zu stray bytes)",
					  *pos, left);
		}
		magic = fr_le32(d->in + *pos);
		if (magic == LZ4F_MAGICNUMBER)
			return 0;
		if (!lz4d__is_skippable(magic)) {
			if (magic == FR_LZ4_MAGIC_LEGACY)
				return lz4d__fail(d, -EBADMSG,
						  "not an LZ4 frame: legacy LZ4 format (magic 0x%08x) at byte %zu is not supported",
						  magic, *pos);
			return lz4d__fail(d, -EBADMSG,
					  "not an LZ4 frame: bad magic number 0x%08x at byte %zu (want 0x%08x)",
					  magic, *pos, LZ4F_MAGICNUMBER);
		}
		err = lz4d__skip(d, pos);
		if (err)
			return err;
	}
}

/* lz4d__header() - decode the frame header at @pos (its magic), check it
 * against max_out and set up block_max. On success *@hsize is the header's
 * length. 0 or -errno with a message. */
static int lz4d__header(struct lz4d *d, size_t pos, LZ4F_frameInfo_t *info,
			size_t *hsize)
{
	size_t left = d->in_len - pos, h, n, r;
	const char *name;

	d->hdr_off = pos;
	if (left < LZ4F_MIN_SIZE_TO_KNOW_HEADER_LENGTH)
		return lz4d__fail(d, -EPROTO,
				  "truncated LZ4 frame: the header at byte %zu is incomplete (input ends at byte %zu)",
				  pos, d->in_len);
	h = LZ4F_headerSize(d->in + pos, left);
	if (LZ4F_isError(h))
		return lz4d__fail(d, -EBADMSG,
				  "corrupt LZ4 frame header at byte %zu: %s", pos,
				  LZ4F_getErrorName(h));
	if (left < h)
		return lz4d__fail(d, -EPROTO,
				  "truncated LZ4 frame: the header at byte %zu needs %zu bytes (input ends at byte %zu)",
				  pos, h, d->in_len);
	n = h;
	r = LZ4F_getFrameInfo(d->dctx, info, d->in + pos, &n);
	if (LZ4F_isError(r)) {
		name = LZ4F_getErrorName(r);
		if (strstr(name, "headerChecksum_invalid"))
			return lz4d__fail(d, -EBADMSG,
					  "corrupt LZ4 frame header at byte %zu: header checksum mismatch (byte %zu)",
					  pos, pos + h - 1);
		if (strstr(name, "headerVersion_wrong"))
			name = "unsupported frame version";
		else if (strstr(name, "reservedFlag_set"))
			name = "reserved bit set";
		else if (strstr(name, "maxBlockSize_invalid"))
			name = "invalid maximum block size";
		return lz4d__fail(d, -EBADMSG,
				  "corrupt LZ4 frame header at byte %zu: %s (bytes %zu-%zu)",
				  pos, name, pos + 4, pos + h - 1);
	}
	*hsize = n;
	if (info->dictID)
		return lz4d__fail(d, -EBADMSG,
				  "unsupported LZ4 frame at byte %zu: needs dictionary 0x%08x",
				  pos, info->dictID);
	d->content_size = info->contentSize;
	if (info->contentSize > d->max_out)
		return lz4d__fail(d, -EFBIG,
				  "decompressed data exceeds the limit of %zu bytes: the header at byte %zu declares %llu bytes",
				  d->max_out, pos, info->contentSize);
	switch (info->blockSizeID) {
	case LZ4F_max256KB:
		d->block_max = 256u * 1024;
		break;
	case LZ4F_max1MB:
		d->block_max = 1024u * 1024;
		break;
	case LZ4F_max4MB:
		d->block_max = 4096u * 1024;
		break;
	default:
		d->block_max = 64u * 1024;
		break;
	}
	/* preallocate a declared size, but no more than the input can
	 * hold (LZ4 expands at most ~255 times): a header may lie */
	if (info->contentSize) {
		d->cap = (size_t)info->contentSize;
		if ((d->in_len - pos) < (SIZE_MAX - d->block_max) / 256 &&
		    d->cap > (d->in_len - pos) * 256 + d->block_max)
			d->cap = (d->in_len - pos) * 256 + d->block_max;
		d->buf = malloc(d->cap);
		if (!d->buf)
			return lz4d__fail(d, -ENOMEM,
					  "out of memory for %zu bytes of decompressed data",
					  d->cap);
	}
	return 0;
}

/* lz4d__blocks() - decode the blocks starting at @pos up to and including
 * the end mark and content checksum; *@end is the offset after the frame.
 * 0 or -errno with a message. */
static int lz4d__blocks(struct lz4d *d, size_t pos, const LZ4F_frameInfo_t *info,
			size_t *end)
{
	size_t bc = info->blockChecksumFlag == LZ4F_blockChecksumEnabled ? 4 : 0;
	size_t cc = info->contentChecksumFlag == LZ4F_contentChecksumEnabled ? 4 : 0;
	size_t left, size, need;
	bool done;
	int err;

	for (;;) {
		left = d->in_len - pos;
		if (left < 4)
			return lz4d__fail(d, -EPROTO,
					  "truncated LZ4 frame: the block header at byte %zu is incomplete (input ends at byte %zu)",
					  pos, d->in_len);
		size = fr_le32(d->in + pos) & 0x7FFFFFFFu;
		if (!size) {
			need = 4 + cc;
			if (left < need)
				return lz4d__fail(d, -EPROTO,
						  "truncated LZ4 frame: the content checksum at byte %zu is incomplete (input ends at byte %zu)",
						  pos + 4, d->in_len);
		} else {
			if (size > d->block_max)
				return lz4d__fail(d, -EBADMSG,
						  "corrupt LZ4 frame: the block at byte %zu declares %zu bytes, above the frame's maximum of %zu",
						  pos, size, d->block_max);
			need = 4 + size + bc;
			if (left < need)
				return lz4d__fail(d, -EPROTO,
						  "truncated LZ4 frame: the block at byte %zu is incomplete, %zu of its %zu bytes present (input ends at byte %zu)",
						  pos, left, need, d->in_len);
		}
		err = lz4d__feed(d, pos, need, &done);
		if (err)
			return err;
		pos += need;
		if (!size && done)
			break;
		if (!size || done)
			return lz4d__fail(d, -EBADMSG,
					  "corrupt LZ4 frame at byte %zu: the decoder disagrees with the frame structure",
					  pos - need);
	}
	*end = pos;
	return 0;
}

/* lz4d__trailer() - accept only skippable frames after the frame end at
 * @pos. 0 or -errno with a message. */
static int lz4d__trailer(struct lz4d *d, size_t pos)
{
	size_t left;
	uint32_t magic;
	int err;

	while (pos < d->in_len) {
		left = d->in_len - pos;
		magic = left >= 4 ? fr_le32(d->in + pos) : 0;
		if (left >= 4 && lz4d__is_skippable(magic)) {
			err = lz4d__skip(d, &pos);
			if (err)
				return err;
			continue;
		}
		if (left >= 4 && magic == LZ4F_MAGICNUMBER)
			return lz4d__fail(d, -EBADMSG,
					  "trailing garbage at byte %zu after the LZ4 frame: a second LZ4 frame (one expected)",
					  pos);
		return lz4d__fail(d, -EBADMSG,
				  "trailing garbage at byte %zu after the LZ4 frame (%zu bytes)",
				  pos, left);
	}
	return 0;
}

int lz4_decompress_mem(const void *in, size_t in_len, size_t max_out,
		       void **out, size_t *out_len, char *err, size_t errlen)
{
	struct lz4d d = {
		.in = in, .in_len = in_len, .max_out = max_out,
		.err = err, .errlen = errlen,
	};
	LZ4F_frameInfo_t info;
	size_t pos = 0, hsize = 0, end = 0, r;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if ((!in && in_len) || !out || !out_len)
		return lz4d__fail(&d, -EINVAL, "invalid arguments");
	r = LZ4F_createDecompressionContext(&d.dctx, LZ4F_VERSION);
	if (LZ4F_isError(r)) {
		d.dctx = NULL;
		ret = lz4d__fail(&d, -ENOMEM, "out of memory for the LZ4 decoder");
		goto out;
	}
	ret = lz4d__find_frame(&d, &pos);
	if (!ret)
		ret = lz4d__header(&d, pos, &info, &hsize);
	if (!ret)
		ret = lz4d__blocks(&d, pos + hsize, &info, &end);
	if (!ret)
		ret = lz4d__trailer(&d, end);
	if (!ret && !d.buf) {
		d.buf = malloc(1);	/* empty content: still a real buffer */
		if (!d.buf)
			ret = lz4d__fail(&d, -ENOMEM, "out of memory");
	}
	if (!ret) {
		*out = d.buf;
		*out_len = d.len;
		d.buf = NULL;
	}
out:
	free(d.buf);
	if (d.dctx)
		LZ4F_freeDecompressionContext(d.dctx);
	return ret;
}

/*
 * fr_lz4_file_max() - the largest file that can hold one LZ4 frame of at
 * most @max_out bytes of content: @max_out plus the worst-case framing of
 * stored (incompressible) 64 KiB blocks, a size word and a checksum each,
 * and the header, end mark and content checksum. Saturates at SIZE_MAX.
 */
static size_t fr_lz4_file_max(size_t max_out)
{
	size_t slack = max_out / (FR_LZ4_MIN_BLOCK / 8) + FR_LZ4_FRAME_SLACK;

	return max_out > SIZE_MAX - slack ? SIZE_MAX : max_out + slack;
}

/*
 * fr_read_all() - read the whole of @fd (@st: its fstat) into a malloc'd
 * buffer that never grows beyond @limit + 1 bytes, whatever the file
 * claims or turns out to hold. 0, -EFBIG when @fd holds more than @limit
 * bytes, or -errno.
 */
static int fr_read_all(int fd, const struct stat *st, size_t limit,
		       unsigned char **data, size_t *len)
{
	size_t cap, max_cap = limit < SIZE_MAX ? limit + 1 : SIZE_MAX, got = 0;
	unsigned char *p = NULL, *np;
	ssize_t n;
	int err = 0;

	if (S_ISREG(st->st_mode) && st->st_size > 0 &&
	    (uintmax_t)st->st_size < max_cap)
		cap = (size_t)st->st_size + 1;
	else
		cap = 65536 < max_cap ? 65536 : max_cap;
	p = malloc(cap);
	if (!p)
		return -ENOMEM;
	for (;;) {
		if (got == cap) {
			if (cap >= max_cap) {
				err = -EFBIG;
				goto fail;
			}
			cap = cap > max_cap / 2 ? max_cap : cap * 2;
			np = realloc(p, cap);
			if (!np) {
				err = -ENOMEM;
				goto fail;
			}
			p = np;
		}
		n = read(fd, p + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto fail;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > limit) {
		err = -EFBIG;
		goto fail;
	}
	*data = p;
	*len = got;
	return 0;

fail:
	free(p);
	return err;
}

/*
 * lz4_decompress_file() - see compress.h. The file's size is checked
 * against what a frame of @max_out bytes can take before anything is read
 * or allocated, and the read itself is bounded the same way (a file that
 * grows, or is not a regular file).
 */
int lz4_decompress_file(const char *path, size_t max_out, void **out,
			size_t *out_len, char *err, size_t errlen)
{
	size_t len = 0, file_max = fr_lz4_file_max(max_out);
	char detail[FR_LZ4_MSG_MAX] = "";
	unsigned char *data = NULL;
	const char *verb = NULL;
	struct stat st;
	int fd, ret;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !out || !out_len) {
		if (err && errlen)
			snprintf(err, errlen, "invalid arguments");
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		verb = "open";
		goto out;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		verb = "stat";
		close(fd);
		goto out;
	}
	if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > file_max) {
		ret = -EFBIG;
		snprintf(detail, sizeof(detail),
			 "refusing a file of %jd bytes: more than the %zu bytes an LZ4 frame of at most %zu bytes of content can take",
			 (intmax_t)st.st_size, file_max, max_out);
		close(fd);
		goto out;
	}
	ret = fr_read_all(fd, &st, file_max, &data, &len);
	close(fd);
	if (ret == -EFBIG) {
		snprintf(detail, sizeof(detail),
			 "refusing a file of more than %zu bytes, the most an LZ4 frame of at most %zu bytes of content can take",
			 file_max, max_out);
		goto out;
	}
	if (ret) {
		verb = "read";
		goto out;
	}
	ret = lz4_decompress_mem(data, len, max_out, out, out_len, detail,
				 sizeof(detail));
out:
	free(data);
	if (ret && err && errlen) {
		if (verb)
			snprintf(err, errlen, "failed to %s '%s': %s", verb, path,
				 strerror(-ret));
		else
			snprintf(err, errlen, "'%s': %s", path, detail);
	}
	return ret;
}
