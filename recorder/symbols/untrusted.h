/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * untrusted.h - the one way flightrecd opens and reads a file that another
 * user controls: a JIT perf map, a binary a process maps, anything reached
 * through a path a process chose.
 *
 * An open never follows a symlink the path holds (openat2
 * RESOLVE_NO_SYMLINKS, else O_NOFOLLOW on every component), never blocks
 * and has no side effect on what it names (it opens O_PATH first and
 * reopens only a regular file), then checks with fstat: a regular file, not
 * on a FUSE file system (its server could stall every read), at most the
 * rule's size, and owned as the rule says. Every refusal is counted by
 * reason, process-wide, for the dumps' LOSS section. Reads stop at a byte
 * bound and at a deadline.
 */
#ifndef FR_UNTRUSTED_H
#define FR_UNTRUSTED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Largest binary whose symbols are loaded (a whole browser is ~300 MiB). */
#define FR_ELF_MAX_BYTES	(2ULL << 30)
/* Largest JIT perf map read (a big JVM's is tens of MiB). */
#define FR_PERFMAP_MAX_BYTES	(64ULL << 20)

/* Why a file was refused; the LOSS keys are "untrusted_refused_<name>". */
enum fr_refusal {
	FR_REFUSED_LINK,	/* a symlink in the path (or ".." in a root-relative one) */
	FR_REFUSED_TYPE,	/* not a regular file: FIFO, device, socket, directory */
	FR_REFUSED_OWNER,	/* fails the rule's owner check */
	FR_REFUSED_SIZE,	/* larger than the rule allows */
	FR_REFUSED_FS,		/* on a FUSE file system */
	FR_REFUSED_NR
};

struct fr_untrusted_rule {
	uint64_t max_bytes;	/* refuse larger files; 0: no bound */
	/*
	 * Owner rule, as perf applies it to perf maps: the file belongs to
	 * @uid, or to root and is world-readable with a single link (so a
	 * hard link to a root-only file is refused). Off when !@check_owner.
	 */
	bool check_owner;
	uid_t uid;
	/*
	 * @path is a /proc magic link the kernel resolves to what a process
	 * maps or runs (map_files/START-END, exe): follow that link, check
	 * what it names. Never set for a path a process wrote.
	 */
	bool kernel_link;
	/* Resolve @path with @dirfd as its root ("/" and ".." stay inside). */
	bool in_root;
};

struct untrusted_stats {
	uint64_t refused[FR_REFUSED_NR];
	uint64_t opened;
};

/*
 * untrusted__open() - open @path (relative to @dirfd, or AT_FDCWD) for
 * reading under @rule: O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC. Fills
 * *@st (if not NULL) with the file's fstat. Returns the fd, or -errno:
 * -ELOOP (a symlink), -EINVAL (not a regular file), -EPERM (owner),
 * -EFBIG (size), -EMEDIUMTYPE (FUSE), or the open's own error (-ENOENT,
 * ...). Refusals are counted; a missing file is not.
 */
int untrusted__open(int dirfd, const char *path, const struct fr_untrusted_rule *rule,
		    struct stat *st);

/*
 * untrusted__read() - read up to @cap bytes of @fd from offset 0, giving
 * up at CLOCK_BOOTTIME @deadline_ns (0: none), checked between reads of at
 * most 1 MiB. Returns the bytes read (short only at EOF), or -errno:
 * -ETIMEDOUT past the deadline.
 */
ssize_t untrusted__read(int fd, void *buf, size_t cap, uint64_t deadline_ns);

/*
 * untrusted__slurp() - the whole file @fd (at most @max bytes, else
 * -EFBIG) into a malloc'd, NUL-terminated buffer, by the same rules as
 * untrusted__read(). Returns 0 with *@buf and *@len set, or -errno.
 */
int untrusted__slurp(int fd, size_t max, uint64_t deadline_ns, char **buf, size_t *len);

/* untrusted__refusal() - the reason an error of untrusted__open() names, or -1. */
int untrusted__refusal(int err);

/* untrusted__refusal_name() - "link", "type", "owner", "size", "fs". */
const char *untrusted__refusal_name(enum fr_refusal r);

/* untrusted__stats() - the process-wide counts since start. */
void untrusted__stats(struct untrusted_stats *st);

/*
 * untrusted__force_walk() - for tests: resolve paths component by
 * component (the fallback for kernels without openat2) when @on.
 */
void untrusted__force_walk(bool on);

#endif /* FR_UNTRUSTED_H */
