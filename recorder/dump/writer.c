// SPDX-License-Identifier: MIT
/*
 * writer.c - durable dump file writer through io_uring, pwrite fallback.
 *
 * Data is copied into FR_WRITER_NBUF preallocated buffers. A full buffer is
 * submitted as one IORING_OP_WRITE at its own file offset; completions are
 * reaped lazily, only when a buffer is needed or at commit. A short write is
 * resubmitted for the rest of the buffer. Commit drains every write, then
 * submits IORING_OP_FSYNC on its own (not linked: a short write would cancel
 * a linked fsync), renames the temp file and fsyncs the directory.
 *
 * In pwrite mode the same buffers are written synchronously with pwrite(),
 * so both modes produce byte-identical files.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <liburing.h>

#include "writer.h"

#define FR_WRITER_NBUF		4
#define FR_WRITER_BUFSZ		(1u << 20)
#define FR_WRITER_QDEPTH	8
#define FR_WRITER_MAX_RETRY	16	/* -EINTR/-EAGAIN without progress */
#define FR_WRITER_FSYNC_TAG	UINT64_MAX
#define FR_WRITER_TMP_SUFFIX	".tmp"

#define FR_WBUF_FREE		0
#define FR_WBUF_FILLING		1
#define FR_WBUF_INFLIGHT	2

_Static_assert(FR_WRITER_QDEPTH >= FR_WRITER_NBUF + 1,
	       "the SQ must hold every buffer's write plus the fsync");

struct fr_wbuf {
	unsigned char *data;
	size_t len;		/* bytes filled */
	size_t done;		/* bytes confirmed written */
	uint64_t off;		/* file offset of data[0] */
	unsigned retries;	/* resubmissions without progress */
	int state;		/* FR_WBUF_* */
};

/* Buffers and a ring dumps reuse, one dump at a time (dumpbufs__new()). */
struct dumpbufs {
	unsigned char *data[FR_WRITER_NBUF];
	bool ring_ready;
	struct io_uring ring;
};

struct dumpfile {
	int dirfd;		/* our own fd on the directory */
	int fd;			/* the temp file, -1 once closed */
	bool tmp_exists;	/* "<name>.tmp" is ours to unlink */
	bool uring;
	bool ring_ready;	/* ring can be used (ours, or the dumpbufs') */
	bool fsync_done;
	int fsync_res;
	struct dumpbufs *bufs;	/* the buffers and ring it writes through */
	bool own_bufs;		/* made for it alone (dumpfile__create()) */
	struct io_uring *ring;	/* &bufs->ring */
	struct fr_wbuf buf[FR_WRITER_NBUF];
	int cur;		/* buffer being filled, -1 if none */
	unsigned inflight;	/* writes submitted, not completed */
	uint64_t bytes;		/* accepted by dumpfile__write() */
	uint64_t next_off;	/* file offset of the next buffer submitted */
	int err;		/* sticky first error, 0 if none */
	char name[NAME_MAX + 1];
	char tmpname[NAME_MAX + 1];
};

/* dumpfile__check_name() - 0 if @name is a plain file name that still fits
 * NAME_MAX with the temp suffix; -EINVAL or -ENAMETOOLONG otherwise. */
static int dumpfile__check_name(const char *name)
{
	size_t n;

	if (!name || !*name || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	n = strlen(name);
	if (n + strlen(FR_WRITER_TMP_SUFFIX) > NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/* dumpfile__fail() - record @err as the sticky error unless one is already
 * set; returns the sticky error. */
static int dumpfile__fail(struct dumpfile *f, int err)
{
	if (!f->err)
		f->err = err;
	return f->err;
}

/* dumpfile__submit_range() - queue the unwritten rest of buffer @idx as one
 * io_uring write at its explicit offset and submit it. 0 or -errno. */
static int dumpfile__submit_range(struct dumpfile *f, int idx)
{
	struct fr_wbuf *b = &f->buf[idx];
	struct io_uring_sqe *sqe;
	int ret;

	sqe = io_uring_get_sqe(f->ring);
	if (!sqe)
		return -EBUSY;	/* cannot happen: QDEPTH > NBUF */
	io_uring_prep_write(sqe, f->fd, b->data + b->done,
			    (unsigned)(b->len - b->done), b->off + b->done);
	io_uring_sqe_set_data64(sqe, (uint64_t)idx);
	do
		ret = io_uring_submit(f->ring);
	while (ret == -EINTR);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return -EAGAIN;
	return 0;
}

/* dumpfile__pwrite_buf() - write buffer @idx synchronously, looping over
 * short writes and EINTR. 0 or -errno. */
static int dumpfile__pwrite_buf(struct dumpfile *f, int idx)
{
	struct fr_wbuf *b = &f->buf[idx];
	ssize_t n;

	while (b->done < b->len) {
		n = pwrite(f->fd, b->data + b->done, b->len - b->done,
			   (off_t)(b->off + b->done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		b->done += (size_t)n;
	}
	return 0;
}

/* dumpfile__flush_buf() - hand the filled buffer @idx to the kernel at the
 * next file offset: asynchronously with io_uring, synchronously otherwise.
 * On failure the buffer is free again and the error is sticky. 0 or -errno. */
static int dumpfile__flush_buf(struct dumpfile *f, int idx)
{
	struct fr_wbuf *b = &f->buf[idx];
	int err;

	b->off = f->next_off;
	b->done = 0;
	b->retries = 0;
	f->next_off += b->len;
	if (f->uring) {
		err = dumpfile__submit_range(f, idx);
		if (!err) {
			b->state = FR_WBUF_INFLIGHT;
			f->inflight++;
			return 0;
		}
	} else {
		err = dumpfile__pwrite_buf(f, idx);
	}
	b->state = FR_WBUF_FREE;
	b->len = 0;
	return err ? dumpfile__fail(f, err) : 0;
}

/* dumpfile__complete_write() - account one write completion @res for buffer
 * @idx: free it when done, resubmit the remainder after a short write or a
 * transient error, record a sticky error otherwise. 0 or -errno (the
 * buffer is no longer in flight on error). */
static int dumpfile__complete_write(struct dumpfile *f, int idx, int res)
{
	struct fr_wbuf *b = &f->buf[idx];
	int err = 0;

	if (res > 0) {
		b->done += (size_t)res;
		b->retries = 0;
		if (b->done >= b->len)
			goto out_free;
		err = dumpfile__submit_range(f, idx);	/* short write */
	} else if ((res == -EINTR || res == -EAGAIN) &&
		   ++b->retries <= FR_WRITER_MAX_RETRY) {
		err = dumpfile__submit_range(f, idx);
	} else {
		err = res ? res : -EIO;
	}
	if (!err)
		return 0;
out_free:
	b->state = FR_WBUF_FREE;
	b->len = 0;
	f->inflight--;
	return err ? dumpfile__fail(f, err) : 0;
}

/* dumpfile__reap() - wait for one completion and account it. Returns 0
 * when a completion was handled (its own failure is recorded as the sticky
 * error), or -errno when waiting itself failed. */
static int dumpfile__reap(struct dumpfile *f)
{
	struct io_uring_cqe *cqe;
	uint64_t tag;
	int ret, res;

	do
		ret = io_uring_wait_cqe(f->ring, &cqe);
	while (ret == -EINTR);
	if (ret < 0)
		return ret;
	tag = io_uring_cqe_get_data64(cqe);
	res = cqe->res;
	io_uring_cqe_seen(f->ring, cqe);

	if (tag == FR_WRITER_FSYNC_TAG) {
		f->fsync_done = true;
		f->fsync_res = res;
		return 0;
	}
	if (tag >= FR_WRITER_NBUF || f->buf[tag].state != FR_WBUF_INFLIGHT)
		return -EPROTO;		/* not ours: cannot happen */
	dumpfile__complete_write(f, (int)tag, res);
	return 0;
}

/* dumpfile__drain() - wait until no write is in flight. Returns 0 or the
 * -errno of a failed wait (writes may then still be in flight). */
static int dumpfile__drain(struct dumpfile *f)
{
	int err;

	while (f->inflight) {
		err = dumpfile__reap(f);
		if (err)
			return dumpfile__fail(f, err);
	}
	return 0;
}

/* dumpfile__get_buf() - make sure f->cur names a buffer being filled,
 * waiting for a completion when all buffers are in flight. 0 or -errno. */
static int dumpfile__get_buf(struct dumpfile *f)
{
	int i, err;

	while (f->cur < 0) {
		for (i = 0; i < FR_WRITER_NBUF; i++) {
			if (f->buf[i].state == FR_WBUF_FREE) {
				f->buf[i].state = FR_WBUF_FILLING;
				f->buf[i].len = 0;
				f->cur = i;
				return 0;
			}
		}
		err = dumpfile__reap(f);
		if (err)
			return dumpfile__fail(f, err);
		if (f->err)
			return f->err;
	}
	return 0;
}

/* dumpfile__fsync() - make the file's data durable: IORING_OP_FSYNC as its
 * own submission after every write completed, or fsync(2). 0 or -errno. */
static int dumpfile__fsync(struct dumpfile *f)
{
	struct io_uring_sqe *sqe;
	int ret;

	if (!f->uring)
		return fsync(f->fd) ? -errno : 0;
	sqe = io_uring_get_sqe(f->ring);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_fsync(sqe, f->fd, 0);
	io_uring_sqe_set_data64(sqe, FR_WRITER_FSYNC_TAG);
	f->fsync_done = false;
	do
		ret = io_uring_submit(f->ring);
	while (ret == -EINTR);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return -EAGAIN;
	while (!f->fsync_done) {
		ret = dumpfile__reap(f);
		if (ret)
			return ret;
	}
	return f->fsync_res < 0 ? f->fsync_res : 0;
}

/* dumpfile__rename() - move "<name>.tmp" to "<name>" without replacing an
 * existing file; falls back to plain renameat() only where the filesystem
 * lacks RENAME_NOREPLACE. 0 or -errno. */
static int dumpfile__rename(struct dumpfile *f)
{
	if (!renameat2(f->dirfd, f->tmpname, f->dirfd, f->name,
		       RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (renameat(f->dirfd, f->tmpname, f->dirfd, f->name))
		return -errno;
	return 0;
}

/* dumpfile__release() - tear down whatever part of @f exists, in reverse
 * order of creation: wait for in-flight writes, close and (if still ours)
 * unlink the temp file, leave the ring, free buffers, close the directory,
 * free @f. */
static void dumpfile__release(struct dumpfile *f)
{
	if (f->ring_ready)
		dumpfile__drain(f);
	if (f->fd >= 0)
		close(f->fd);
	if (f->tmp_exists)
		unlinkat(f->dirfd, f->tmpname, 0);
	if (f->own_bufs)
		dumpbufs__free(f->bufs);
	if (f->dirfd >= 0)
		close(f->dirfd);
	free(f);
}

struct dumpfile *dumpfile__create(int dirfd, const char *name, mode_t mode,
				  unsigned flags)
{
	return dumpfile__create_with(dirfd, name, mode, flags, NULL);
}

struct dumpfile *dumpfile__create_with(int dirfd, const char *name, mode_t mode,
				       unsigned flags, struct dumpbufs *bufs)
{
	struct dumpfile *f;
	int i, err;

	err = dumpfile__check_name(name);
	if (!err && (flags & ~FR_WRITER_FORCE_PWRITE))
		err = -EINVAL;
	if (err) {
		errno = -err;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dirfd = -1;
	f->fd = -1;
	f->cur = -1;
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->tmpname, sizeof(f->tmpname), "%s%s", name,
		 FR_WRITER_TMP_SUFFIX);

	/* our own fd: the caller's may be O_PATH or closed before commit */
	f->dirfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->dirfd < 0) {
		err = -errno;
		goto fail;
	}
	/* without a set lent, one of its own (io_uring refused: pwrite, silently) */
	f->own_bufs = !bufs;
	f->bufs = bufs ? bufs : dumpbufs__new(flags);
	if (!f->bufs) {
		err = -errno;
		goto fail;
	}
	for (i = 0; i < FR_WRITER_NBUF; i++)
		f->buf[i].data = f->bufs->data[i];
	f->ring = &f->bufs->ring;
	f->ring_ready = f->uring = f->bufs->ring_ready && !(flags & FR_WRITER_FORCE_PWRITE);
	f->fd = openat(f->dirfd, f->tmpname,
		       O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW,
		       mode & 07777);
	if (f->fd < 0) {
		err = -errno;
		goto fail;
	}
	f->tmp_exists = true;
	if (fchmod(f->fd, mode & 07777)) {	/* the umask must not apply */
		err = -errno;
		goto fail;
	}
	return f;

fail:
	dumpfile__release(f);
	errno = -err;
	return NULL;
}

int dumpfile__write(struct dumpfile *f, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	struct fr_wbuf *b;
	size_t n;
	int err;

	if (!f || (!buf && len))
		return -EINVAL;
	if (f->err)
		return f->err;
	while (len) {
		err = dumpfile__get_buf(f);
		if (err)
			return err;
		b = &f->buf[f->cur];
		n = FR_WRITER_BUFSZ - b->len;
		if (n > len)
			n = len;
		memcpy(b->data + b->len, p, n);
		b->len += n;
		f->bytes += n;
		p += n;
		len -= n;
		if (b->len == FR_WRITER_BUFSZ) {
			err = dumpfile__flush_buf(f, f->cur);
			f->cur = -1;
			if (err)
				return err;
		}
	}
	return 0;
}

int dumpfile__commit(struct dumpfile *f)
{
	int err;

	if (!f)
		return -EINVAL;
	err = f->err;
	if (err)
		goto out;
	if (f->cur >= 0) {
		if (f->buf[f->cur].len) {
			err = dumpfile__flush_buf(f, f->cur);
		} else {
			f->buf[f->cur].state = FR_WBUF_FREE;
		}
		f->cur = -1;
		if (err)
			goto out;
	}
	err = dumpfile__drain(f);
	if (!err)
		err = f->err;
	if (err)
		goto out;
	err = dumpfile__fsync(f);
	if (err)
		goto out;
	err = close(f->fd) ? -errno : 0;
	f->fd = -1;		/* closed even when close() fails */
	if (err)
		goto out;
	err = dumpfile__rename(f);
	if (err)
		goto out;
	f->tmp_exists = false;
	if (fsync(f->dirfd)) {
		err = -errno;
		/* the name is not durable: do not leave a file we report failed */
		unlinkat(f->dirfd, f->name, 0);
	}
out:
	dumpfile__release(f);
	return err;
}

void dumpfile__abort(struct dumpfile *f)
{
	if (f)
		dumpfile__release(f);
}

/*
 * dumpfile__chgrp() - give the file (still under its temporary name) to
 * group @gid, so it never appears under its final name with another group.
 * Returns 0 or -errno.
 */
int dumpfile__chgrp(struct dumpfile *f, gid_t gid)
{
	if (f->fd < 0)
		return -EBADF;
	return fchown(f->fd, (uid_t)-1, gid) ? -errno : 0;
}

bool dumpfile__uses_uring(const struct dumpfile *f)
{
	return f && f->uring;
}

uint64_t dumpfile__bytes(const struct dumpfile *f)
{
	return f ? f->bytes : 0;
}

/*
 * dumpbufs__new() - the write buffers, and a ring unless @flags has
 * FR_WRITER_FORCE_PWRITE (or the kernel refuses one), for dumps to reuse:
 * allocated and touched once, so that a dump, under memory pressure, maps
 * and faults in none of them. NULL and errno on failure.
 */
struct dumpbufs *dumpbufs__new(unsigned flags)
{
	struct dumpbufs *b = calloc(1, sizeof(*b));
	int ret = 0;

	if (!b)
		return NULL;
	for (int i = 0; i < FR_WRITER_NBUF && !ret; i++) {
		ret = posix_memalign((void **)&b->data[i], 4096, FR_WRITER_BUFSZ);
		if (ret)
			b->data[i] = NULL;
		else
			memset(b->data[i], 0, FR_WRITER_BUFSZ);
	}
	if (!ret && !(flags & FR_WRITER_FORCE_PWRITE)) {
		ret = io_uring_queue_init(FR_WRITER_QDEPTH, &b->ring, 0);
		b->ring_ready = !ret;
		if (ret == -EPERM || ret == -ENOSYS || ret == -EOPNOTSUPP)
			ret = 0;	/* io_uring disabled here: pwrite */
		else if (ret)
			ret = -ret;
	}
	if (ret) {
		dumpbufs__free(b);
		errno = ret;
		return NULL;
	}
	return b;
}

void dumpbufs__free(struct dumpbufs *b)
{
	if (!b)
		return;
	if (b->ring_ready)
		io_uring_queue_exit(&b->ring);
	for (int i = FR_WRITER_NBUF - 1; i >= 0; i--)
		free(b->data[i]);
	free(b);
}
