/* SPDX-License-Identifier: MIT */
/*
 * debuginfo.h - ELF objects as the symbol loader reads them, and the
 * separate debug information of stripped binaries.
 *
 * A stripped binary keeps only .dynsym; its other function symbols may be
 * found, in this order (the first that is found and valid is used):
 *
 *   1. <root>/.build-id/xx/yyyy.debug, by the binary's GNU build-id (xx its
 *      first byte in hex, yyyy the rest), which must carry the same
 *      build-id. <root> is FR_DEBUG_ROOT of the daemon's own file system.
 *      The file may be a symlink (Fedora's are): <root> is root's tree, so
 *      it is followed, but only to a file inside <root>.
 *   2. the file named by the binary's .gnu_debuglink section (a base name
 *      and the CRC-32 of the whole debug file, checked before use), looked
 *      for as <dir>/<name>, <dir>/.debug/<name> and <root><dir>/<name>,
 *      <dir> being the directory of the binary's path. That path is where a
 *      process mapped the binary, inside its mount namespace; the search
 *      reads the daemon's own file system under the same path (for a
 *      process in a container the CRC check refuses what is not its file).
 *      If both files carry a build-id they must be equal. The CRC needs
 *      the whole file read: a candidate another user owns is read only up
 *      to FR_DEBUGLINK_USER_MAX_BYTES (a larger one is refused by its size,
 *      FR_DEBUG_BAD), and every read stops at the load's deadline
 *      (FR_DEBUG_PENDING) and goes on from there at the next load. A CRC
 *      is computed once per file identity (device, inode, size, mtime,
 *      ctime), in a fixed table of FR_CRC_CACHE files.
 *   3. MiniDebugInfo: the binary's .gnu_debugdata section, an xz stream of
 *      an ELF object with a .symtab (Fedora's recipe), decompressed to at
 *      most FR_MINIDEBUG_MAX_BYTES.
 *
 * Debug files are opened as untrusted files (untrusted.h): no symlink in
 * the path (but the one of 1), regular, at most FR_ELF_MAX_BYTES, owned by
 * root (under <root>) or by the binary's owner or root (next to the
 * binary). Every debug object is validated as the binary is (same ELF
 * class, machine and type, header tables inside the file). A debug object
 * is linked like the binary, so its symbols are at the binary's virtual
 * addresses.
 */
#ifndef FR_DEBUGINFO_H
#define FR_DEBUGINFO_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define FR_BUILDID_MAX 20

/* A GNU build-id; longer ids are truncated to FR_BUILDID_MAX bytes. */
struct fr_buildid {
	uint8_t len;
	uint8_t id[FR_BUILDID_MAX];
};

/* Where the symbols of a table came from besides the binary, and what was refused. */
#define FR_DEBUG_BUILDID	 (1U << 0)	/* merged: <root>/.build-id/xx/yyyy.debug */
#define FR_DEBUG_LINK		 (1U << 1)	/* merged: the .gnu_debuglink file */
#define FR_DEBUG_MINI		 (1U << 2)	/* merged: MiniDebugInfo (.gnu_debugdata) */
#define FR_DEBUG_LINK_CRC	 (1U << 3)	/* a debuglink candidate failed its CRC */
#define FR_DEBUG_BUILDID_MISMATCH (1U << 4)	/* a debug file with another build-id */
#define FR_DEBUG_BAD		 (1U << 5)	/* a debug file or MiniDebugInfo malformed or too big */
#define FR_DEBUG_PENDING	 (1U << 6)	/* the debug search ran out of time: load again later */

#define FR_DEBUG_ROOT		"/usr/lib/debug"
/* Largest decompressed MiniDebugInfo (Fedora's are a few MiB at most). */
#define FR_MINIDEBUG_MAX_BYTES	(64ULL << 20)
/* Memory the xz decoder may use: enough for "xz -9" (a 64 MiB dictionary). */
#define FR_XZ_MEMLIMIT		(80ULL << 20)
/*
 * The largest debuglink candidate read that belongs to a user other than
 * root (next to that user's binary): its CRC needs the whole file read.
 */
#define FR_DEBUGLINK_USER_MAX_BYTES	(64ULL << 20)
/* Longest .gnu_debuglink file name. */
#define FR_DEBUGLINK_NAME_MAX	255

/*
 * fr_elf_begin() - open @fd read-only with libelf. Returns 0 and the handle
 * in *@out, -ENOEXEC if the file is not a readable ELF object, -ENOSYS if
 * libelf cannot be initialized.
 */
int fr_elf_begin(int fd, Elf **out);

/*
 * fr_elf_memory() - the same for the ELF image of @len bytes at @buf,
 * which must outlive the handle. Also checks the header tables
 * (fr_elf_check_tables()). Returns 0, -ENOEXEC or -ENOSYS.
 */
int fr_elf_memory(char *buf, size_t len, Elf **out);

/*
 * fr_elf_check_tables() - whether the program and section header tables
 * of @e lie within its @fsize bytes. libelf reads them lazily and hides a
 * section header table past EOF as "no sections", so check up front.
 */
bool fr_elf_check_tables(Elf *e, uint64_t fsize);

/*
 * fr_elf_buildid() - find the build-id of @e in its PT_NOTE segments, then
 * in its SHT_NOTE sections. Returns 0 or -ENOENT; unreadable notes count as
 * absent.
 */
int fr_elf_buildid(Elf *e, struct fr_buildid *out);

/* The debug object found for one binary, and what the search met. */
struct debuginfo;

/*
 * debuginfo__open() - look for the debug information of the binary open
 * at @fd as @bin, whose build-id is @id (len 0: none), mapped at
 * @path_hint (NULL: no debuglink search), reading no debug file past
 * CLOCK_BOOTTIME @deadline_ns (0: none). Not finding any, or refusing
 * what was found, is no error: *@out is then an object without ELF handle
 * whose flags say why. Returns 0 with *@out set, or -ENOMEM.
 */
int debuginfo__open(int fd, Elf *bin, const struct fr_buildid *id,
		    const char *path_hint, uint64_t deadline_ns, struct debuginfo **out);

/* debuginfo__elf() - the debug object's ELF handle (owned by @d), or NULL. */
Elf *debuginfo__elf(const struct debuginfo *d);

/*
 * debuginfo__flags() - FR_DEBUG_* (above): the source of the handle,
 * if any, and the refusals met on the way.
 */
unsigned int debuginfo__flags(const struct debuginfo *d);

/*
 * debuginfo__path() - the path the debug file was opened by (owned by
 * @d), and in *@uid (if not NULL) the user besides root it may belong to,
 * so that it can be opened again by the same rules. NULL for no debug
 * object and for MiniDebugInfo.
 */
const char *debuginfo__path(const struct debuginfo *d, uid_t *uid);

/* debuginfo__stat() - fstat() of the debug file; -ENOENT for none or MiniDebugInfo. */
int debuginfo__stat(const struct debuginfo *d, struct stat *st);

/*
 * debuginfo__open_alt() - the dwz alternate debug file with build-id @id
 * (@len bytes) that a .gnu_debugaltlink names, looked for under the debug
 * root only: <root>/.build-id/xx/yyyy.debug, else @path (the section's
 * file name; NULL: none) if it resolves to a file inside <root>. Opened as
 * an untrusted file owned by root; the caller checks its build-id.
 * Returns an fd or -errno (-ENOENT: none).
 */
int debuginfo__open_alt(const void *id, size_t len, const char *path);

void debuginfo__free(struct debuginfo *d);

/* What the debuglink CRCs have cost, process-wide. */
struct debuginfo_crc_stats {
	uint64_t bytes;		/* read for CRCs */
	uint64_t hits;		/* CRCs known already: nothing read */
	uint64_t resumed;	/* reads that went on from an earlier one's deadline */
	uint64_t replaced;	/* entries the fixed table gave to another file */
};

void debuginfo__crc_stats(struct debuginfo_crc_stats *st);

/*
 * debuginfo__set_root() - look for debug files under @root instead of
 * FR_DEBUG_ROOT (NULL: back to it; "": not at all, debuglinks next to the
 * binary only). For tests; applies to loads that start afterwards.
 * Returns 0 or -ENAMETOOLONG.
 */
int debuginfo__set_root(const char *root);

#endif /* FR_DEBUGINFO_H */
