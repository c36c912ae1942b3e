/* SPDX-License-Identifier: MIT */
/*
 * writer.h - durable dump file writer (io_uring, with a pwrite/fsync fallback).
 *
 * A dump is written to "<name>.tmp" in a directory and only renamed to
 * "<name>" once every byte is on disk and fsync'ed; the directory is fsync'ed
 * after the rename. A reader therefore never sees a partial file under the
 * final name. Every dumpfile is independent: no global state.
 */
#ifndef FR_WRITER_H
#define FR_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FR_WRITER_FORCE_PWRITE	0x1	/* do not even try io_uring */

struct dumpfile;
struct dumpbufs;

/*
 * dumpfile__create() - create "<name>.tmp" in directory @dirfd (AT_FDCWD is
 * fine) with O_CREAT|O_EXCL|O_WRONLY|O_CLOEXEC|O_NOFOLLOW and exactly @mode
 * (the umask does not apply). @name must be a plain file name: non-empty, no
 * '/', not "." or "..", and short enough for the ".tmp" suffix. Sets up a
 * small io_uring unless @flags has FR_WRITER_FORCE_PWRITE; when the kernel
 * refuses io_uring (-EPERM, -ENOSYS, -EOPNOTSUPP) the writer silently uses
 * pwrite/fsync instead (see dumpfile__uses_uring()). All write buffers are
 * allocated here. Returns NULL and sets errno on failure (EINVAL, EEXIST,
 * ENAMETOOLONG, ENOMEM, ...); nothing is left behind then.
 */
struct dumpfile *dumpfile__create(int dirfd, const char *name, mode_t mode,
				  unsigned flags);

/*
 * dumpfile__create_with() - dumpfile__create() writing through @bufs (NULL:
 * its own, as dumpfile__create()): its buffers, and its ring unless @flags
 * has FR_WRITER_FORCE_PWRITE. One dumpfile at a time may use @bufs; they
 * are its until it is committed or aborted.
 */
struct dumpfile *dumpfile__create_with(int dirfd, const char *name, mode_t mode,
				       unsigned flags, struct dumpbufs *bufs);

/*
 * dumpbufs__new() - buffers (and an io_uring, unless @flags has
 * FR_WRITER_FORCE_PWRITE or the kernel refuses one) that dumpfiles reuse
 * one after another: allocated and touched once, so that writing a dump
 * allocates nothing. NULL and errno on failure.
 */
struct dumpbufs *dumpbufs__new(unsigned flags);

/* dumpbufs__free() - free @b, which no dumpfile uses. Accepts NULL. */
void dumpbufs__free(struct dumpbufs *b);

/*
 * dumpfile__write() - append @len bytes of @buf. The bytes are copied into a
 * preallocated buffer; full buffers are written asynchronously at explicit
 * offsets, and the call only waits when every buffer is in flight. Short
 * writes are resubmitted for the remainder. Returns 0 or -errno; errors are
 * sticky: after the first failure every later call returns the same error.
 */
int dumpfile__write(struct dumpfile *f, const void *buf, size_t len);

/*
 * dumpfile__commit() - wait for every write, fsync the file, rename
 * "<name>.tmp" to "<name>" (never replacing an existing "<name>" where the
 * filesystem supports RENAME_NOREPLACE) and fsync the directory. Returns 0
 * once the file is durable under its final name. On any failure returns
 * -errno and neither "<name>.tmp" nor (if this call renamed it) "<name>"
 * is left behind. Frees @f in all cases; -EINVAL for NULL.
 */
int dumpfile__commit(struct dumpfile *f);

/* dumpfile__abort() - wait for in-flight writes, unlink the temp file, free
 * @f. Accepts NULL. */
void dumpfile__abort(struct dumpfile *f);

/*
 * dumpfile__chgrp() - give the file, still under its temporary name, to
 * group @gid. Returns 0 or -errno.
 */
int dumpfile__chgrp(struct dumpfile *f, gid_t gid);

/* dumpfile__uses_uring() - true when writes go through io_uring. */
bool dumpfile__uses_uring(const struct dumpfile *f);

/* dumpfile__bytes() - bytes accepted by dumpfile__write() so far. */
uint64_t dumpfile__bytes(const struct dumpfile *f);

#endif /* FR_WRITER_H */
