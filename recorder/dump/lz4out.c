// SPDX-License-Identifier: MIT
/*
 * lz4out.c - the LZ4 frame streaming compressor of the dump writer, on top
 * of a dumpfile. See lz4out.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4frame.h>

#include "lz4out.h"


#define FR_LZ4_CHUNK		(256u * 1024)	/* input fed per LZ4F call */

struct lz4out {
	struct dumpfile *f;
	LZ4F_cctx *cctx;
	LZ4F_preferences_t prefs;
	unsigned char *out;	/* LZ4F output, LZ4F_compressBound(CHUNK) */
	size_t out_cap;
	uint64_t in;		/* uncompressed bytes accepted */
	int err;		/* sticky first error */
	bool finished;
};

/* lz4out__errno() - map an LZ4F compression error to -errno. Only
 * allocation can fail with our sizes; anything else is -EIO. */
static int lz4out__errno(size_t r)
{
	return strstr(LZ4F_getErrorName(r), "allocation_failed") ? -ENOMEM : -EIO;
}

/* lz4out__emit() - pass @n bytes of LZ4F output to the dumpfile; records a
 * failure as the sticky error. 0 or -errno. */
static int lz4out__emit(struct lz4out *z, size_t n)
{
	int err;

	if (!n)
		return 0;
	err = dumpfile__write(z->f, z->out, n);
	if (err)
		z->err = err;
	return err;
}

void lz4out__free(struct lz4out *z)
{
	if (!z)
		return;
	if (z->cctx)
		LZ4F_freeCompressionContext(z->cctx);
	free(z->out);
	free(z);
}

/*
 * lz4out__alloc() - a compressor with no frame begun, its buffers and the
 * context's block buffers allocated and touched (a frame begun into the
 * output buffer, then dropped). NULL and errno on failure.
 */
struct lz4out *lz4out__alloc(void)
{
	struct lz4out *z = calloc(1, sizeof(*z));
	size_t r;
	int err;

	if (!z)
		return NULL;
	z->prefs.frameInfo.blockSizeID = LZ4F_max1MB;
	z->prefs.frameInfo.blockMode = LZ4F_blockLinked;
	z->prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
	z->prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
	z->prefs.frameInfo.frameType = LZ4F_frame;
	z->prefs.compressionLevel = 0;	/* default, fast */

	z->out_cap = LZ4F_compressBound(FR_LZ4_CHUNK, &z->prefs);
	if (z->out_cap < LZ4F_HEADER_SIZE_MAX)
		z->out_cap = LZ4F_HEADER_SIZE_MAX;
	z->out = calloc(1, z->out_cap);
	if (!z->out) {
		err = -ENOMEM;
		goto fail;
	}
	r = LZ4F_createCompressionContext(&z->cctx, LZ4F_VERSION);
	if (LZ4F_isError(r)) {
		z->cctx = NULL;
		err = lz4out__errno(r);
		goto fail;
	}
	/* allocates the context's block buffers, once: later frames reuse them */
	r = LZ4F_compressBegin(z->cctx, z->out, z->out_cap, &z->prefs);
	if (LZ4F_isError(r)) {
		err = lz4out__errno(r);
		goto fail;
	}
	z->finished = true;	/* no frame into any file yet */
	return z;

fail:
	lz4out__free(z);
	errno = -err;
	return NULL;
}

/*
 * lz4out__begin() - start a new frame of @z into @f, and write its header
 * there: @z's earlier frame, if any, is over (finished or given up).
 * 0 or -errno.
 */
int lz4out__begin(struct lz4out *z, struct dumpfile *f)
{
	size_t r;

	if (!z || !f)
		return -EINVAL;
	z->f = f;
	z->in = 0;
	z->err = 0;
	z->finished = false;
	r = LZ4F_compressBegin(z->cctx, z->out, z->out_cap, &z->prefs);
	if (LZ4F_isError(r))
		return z->err = lz4out__errno(r);
	return lz4out__emit(z, r);
}

struct lz4out *lz4out__new(struct dumpfile *f)
{
	struct lz4out *z;
	int err;

	if (!f) {
		errno = EINVAL;
		return NULL;
	}
	z = lz4out__alloc();
	if (!z)
		return NULL;
	err = lz4out__begin(z, f);
	if (err) {
		lz4out__free(z);
		errno = -err;
		return NULL;
	}
	return z;
}

int lz4out__write(struct lz4out *z, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t n, r;

	if (!z || (!buf && len) || z->finished)
		return -EINVAL;
	if (z->err)
		return z->err;
	while (len) {
		n = len < FR_LZ4_CHUNK ? len : FR_LZ4_CHUNK;
		r = LZ4F_compressUpdate(z->cctx, z->out, z->out_cap, p, n, NULL);
		if (LZ4F_isError(r))
			return z->err = lz4out__errno(r);
		if (lz4out__emit(z, r))
			return z->err;
		z->in += n;
		p += n;
		len -= n;
	}
	return 0;
}

int lz4out__finish(struct lz4out *z)
{
	size_t r;

	if (!z || z->finished)
		return -EINVAL;
	if (z->err)
		return z->err;
	z->finished = true;
	r = LZ4F_compressEnd(z->cctx, z->out, z->out_cap, NULL);
	if (LZ4F_isError(r))
		return z->err = lz4out__errno(r);
	return lz4out__emit(z, r);
}

uint64_t lz4out__bytes_in(const struct lz4out *z)
{
	return z ? z->in : 0;
}
