/* SPDX-License-Identifier: MIT */
/*
 * symbols.h - symbolization of sampled instruction addresses.
 *
 * Used when a dump is written: user-space addresses are resolved through the
 * mappings of /proc/PID/maps and the ELF symbol tables of the mapped
 * binaries (or a JIT perf map), kernel addresses through /proc/kallsyms.
 *
 * All lookups are binary searches over sorted arrays built once at load
 * time. Loaded tables are immutable, so lookups may run concurrently; the
 * symcache's entry points take its lock, so any thread may call them.
 * Source lines (elfsyms__lines()) are the exception: a table's DWARF is
 * read at the first lookup that needs it, under one process-wide lock.
 */
#ifndef FR_SYMBOLS_H
#define FR_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "debuginfo.h"
#include "procmaps.h"
#include "srcline.h"


/*
 * Symbols of one ELF binary: STT_FUNC and STT_GNU_IFUNC entries of .symtab
 * and .dynsym, merged with those of its separate debug information when
 * there is some (debuginfo.h: a build-id debug file, a .gnu_debuglink
 * file, MiniDebugInfo), which are at the same addresses. Unsized symbols
 * extend to the next symbol (at most to the end of their section). At one
 * address the best alias wins: sized, then global over weak over local,
 * then fewer leading underscores. C++ and Rust names are demangled once at
 * load time (demangle.h); the mangled name is kept beside.
 */
struct elfsyms;

/* The bound of one table when no cache sets it (symcache: a quarter of its budget). */
#define FR_ELFSYMS_MAX_BYTES	(16ULL << 20)

/* How to load a table (elfsyms__open_opts()). */
struct elfsyms_opts {
	const char *path;	/* where a process maps it; NULL: unknown (no debuglink search) */
	uint64_t deadline_ns;	/* CLOCK_BOOTTIME: no debug file read past it; 0: none */
	uint64_t max_bytes;	/* the table's memory bound; 0: FR_ELFSYMS_MAX_BYTES */
};

/*
 * elfsyms__open_opts() - load the symbols of the ELF file open at @fd as
 * @o says. Returns NULL with errno set: ENOEXEC for a non-ELF, truncated
 * or malformed file, EFBIG when its symbols would take more than the
 * bound (they are refused whole: its frames stay file+offset).
 */
struct elfsyms *elfsyms__open_opts(int fd, const struct elfsyms_opts *o);

/*
 * elfsyms__open_fd_hint() - load the symbols of the ELF file open at @fd,
 * which a process maps at @path (NULL if unknown: no .gnu_debuglink search,
 * see debuginfo.h). Does not take ownership of @fd and keeps no reference
 * to it or to any debug file. A valid ELF without symbols gives an empty
 * table; unusable debug information is skipped (elfsyms__debug() says
 * why). Returns NULL with errno set: ENOEXEC for a non-ELF, truncated or
 * malformed file.
 */
struct elfsyms *elfsyms__open_fd_hint(int fd, const char *path);

/* elfsyms__open_fd() - elfsyms__open_fd_hint() without a path. */
struct elfsyms *elfsyms__open_fd(int fd);

/*
 * elfsyms__open() - elfsyms__open_fd_hint() on @path, opened as an
 * untrusted file (untrusted.h), with @path as the hint.
 */
struct elfsyms *elfsyms__open(const char *path);

/* elfsyms__buildid() - the binary's build-id; len is 0 if it has none. */
const struct fr_buildid *elfsyms__buildid(const struct elfsyms *s);

/* elfsyms__count() - the number of distinct symbols loaded (0 once evicted). */
size_t elfsyms__count(const struct elfsyms *s);

/*
 * elfsyms__evicted() - whether the cache dropped the symbols of @s for its
 * budget: lookups find nothing until a process maps the file again.
 */
bool elfsyms__evicted(const struct elfsyms *s);

/* elfsyms__debug() - FR_DEBUG_* flags: the debug information used and refused. */
unsigned int elfsyms__debug(const struct elfsyms *s);

/*
 * elfsyms__lookup() - symbolize a FILE OFFSET (addr - mapping.start +
 * mapping.pgoff). The offset is converted to a virtual address through the
 * PT_LOAD segment that holds it. Returns the symbol name (owned by @s) and
 * stores the offset into the symbol in *@sym_off (if not NULL), or NULL.
 */
const char *elfsyms__lookup(const struct elfsyms *s, uint64_t file_off,
			    uint64_t *sym_off);

/*
 * elfsyms__lookup_full() - elfsyms__lookup(), and the symbol's mangled
 * name (owned by @s) in *@mangled if not NULL: NULL when the name was not
 * mangled (or did not demangle), or when nothing was found.
 */
const char *elfsyms__lookup_full(const struct elfsyms *s, uint64_t file_off,
				 uint64_t *sym_off, const char **mangled);

/*
 * elfsyms__has_lines() - whether the binary of @s had DWARF line
 * information when it was loaded, in its debug file (preferred) or in
 * itself: what elfsyms__lines() reads. Only section headers were read.
 */
bool elfsyms__has_lines(const struct elfsyms *s);

/*
 * All tables' DWARF handles together hold at most this (srclines__bytes()),
 * or what the symbol cache leaves them when more (elfsyms__set_lines_room()).
 */
#define FR_SRCLINE_BUDGET	(32ULL << 20)
/* A binary whose file could not be opened for its lines is tried again after this. */
#define FR_LINES_RETRY_NS	(10ULL * 1000 * 1000 * 1000)
/* Outside a hold, a handle closed for the budget is read again only after this. */
#define FR_LINES_REOPEN_NS	(30ULL * 1000 * 1000 * 1000)

/*
 * elfsyms__lines() - the source position of FILE OFFSET @file_off (as
 * elfsyms__lookup() converts it): up to @max levels into @out, innermost
 * first, as srcline.h describes. The DWARF is read at the first call that
 * needs it and kept with @s, within FR_SRCLINE_BUDGET bytes for all tables
 * together: beyond it, the least recently used handles are closed, to be
 * read again when an address needs them (outside a hold, not before
 * FR_LINES_REOPEN_NS: -EAGAIN). It is read again from where it
 * was found, only if the file there is the one loaded (same device, inode,
 * size, mtime and ctime; never another file by its build-id): the debug file, by its
 * path under the rules it was opened with; or the binary, through mapping
 * @m of the process at @procdir (fr_mapping__open(); both may be NULL),
 * else by @m's path or the load's path hint, as an untrusted file. A
 * failure to open is remembered: FR_LINES_RETRY_NS for a file that may be
 * reachable later (a binary that only paths failed to reach is still
 * tried through the next live process's mapping), for good when a debug
 * file is not the loaded one or the DWARF is refused.
 * The strings are valid until the next elfsyms__lines() call on any
 * table. Thread-safe. Returns the number of levels, 0 when nothing is
 * known of the address, or -errno: -ENOENT (no line information),
 * -EAGAIN (the file cannot be opened now, or is not the binary loaded),
 * -ESTALE (the debug file changed since), -E2BIG (a bound of
 * srclines__lookup()), another from srclines__open_fd().
 */
int elfsyms__lines(const struct elfsyms *s, uint64_t file_off, const char *procdir,
		   const struct fr_mapping *m, struct fr_srcline *out, unsigned int max);

/* What elfsyms__lines() has read, process-wide. */
struct fr_lines_stats {
	uint64_t opened;	/* DWARF handles read (again, after an eviction) */
	uint64_t failed;	/* attempts that failed to open or read one */
	uint64_t evicted;	/* handles closed to stay within the budget */
	uint64_t deferred;	/* lookups outside a hold refused: handle closed too recently */
	uint64_t open;		/* handles open now */
	uint64_t bytes;		/* their srclines__bytes() */
	uint64_t peak;		/* the most bytes they held at once */
	uint64_t limit;		/* what they may hold now: their share, or the room lent */
};

/*
 * elfsyms__lines_stats() - the counts as of the last lookup's end: never
 * waits for a lookup under way (which may be reading a file's DWARF).
 */
void elfsyms__lines_stats(struct fr_lines_stats *st);

/*
 * elfsyms__lines_hold() - begin (@on) or end a hold: while one lasts, no
 * handle used within it is closed for the budget, so that one dump reads
 * each binary's DWARF at most once however many binaries it needs (their
 * sum may pass the budget for that time). Ending it closes the least
 * recently used handles, all but the last used, until they fit again.
 */
void elfsyms__lines_hold(bool on);

/*
 * elfsyms__set_lines_budget() - the handles' own share in bytes (0:
 * FR_SRCLINE_BUDGET); forgets the room below.
 */
void elfsyms__set_lines_budget(uint64_t bytes);

/*
 * elfsyms__set_lines_room() - let the handles hold up to @bytes while that
 * is more than their share, and close the handles past the new limit
 * (those used in the current hold stay open). Never waits for a lookup
 * under way: that one closes them as it ends, and this returns false.
 */
bool elfsyms__set_lines_room(uint64_t bytes);

void elfsyms__free(struct elfsyms *s);

/*
 * elf_read_buildid() - read the GNU build-id from the PT_NOTE segments (or
 * SHT_NOTE sections) of the ELF file at @fd, without loading symbols.
 * Returns 0, -ENOENT if there is none, -ENOEXEC for a non-ELF file, or
 * another -errno.
 */
int elf_read_buildid(int fd, struct fr_buildid *out);


/*
 * Shared cache of loaded binaries, keyed by the file's identity: device,
 * inode, size, modification and change time. A build-id never stands for
 * a file (its writer chose it): two files share symbols only when they are
 * one file. Files that are not ELF, and files whose symbols pass the
 * per-file bound, are remembered as such. Thread-safe.
 *
 * Memory: one budget (symcache__set_budget(), `[recorder] cache_memory`)
 * covers the symbol tables, the process images charged to it
 * (symcache__charge_image()) and the DWARF line handles (which keep within
 * half of it, or within what the rest leaves of 7/8 of it when more: the
 * first to give it back). Past it, symcache__trim() gives back, least
 * recently used first: tables no one holds (freed whole), then the symbols
 * of tables held only for exited processes, then those live processes
 * map. A held table keeps its identity and stays valid; only its symbols
 * go, and come back when a process maps the file again. Tables no one has
 * held for FR_SYMCACHE_IDLE_NS are freed. While a dump holds the cache
 * (symcache__hold()), nothing is evicted: the dump reads the symbols
 * without the lock.
 */
struct symcache;

#define FR_CACHE_BUDGET		(64ULL << 20)
#define FR_SYMCACHE_IDLE_NS	(30ULL * 1000000000ULL)
/* A table whose debug search ran out of time is loaded again after this. */
#define FR_SYMCACHE_RETRY_NS	(1000000000ULL)

/*
 * The debug_* counters count distinct binaries loaded (as "loaded"), by
 * the FR_DEBUG_* flags of their table: a binary refused one debug file and
 * named from another counts in both.
 */
struct symcache_stats {
	uint64_t loaded;	/* distinct binaries whose symbols loaded */
	uint64_t bad_elf;	/* files refused by the ELF loader as malformed */
	uint64_t refused;	/* files whose symbols passed the per-file bound */
	uint64_t debug_buildid;	/* merged a build-id debug file */
	uint64_t debug_link;	/* merged their .gnu_debuglink file */
	uint64_t debug_minidebuginfo;	  /* merged their MiniDebugInfo */
	uint64_t debug_link_crc_mismatch; /* refused a debuglink file for its CRC */
	uint64_t debug_buildid_mismatch;  /* refused a debug file for its build-id */
	uint64_t debug_bad;	/* refused a malformed or oversized debug object */
	uint64_t budget;	/* bytes, for everything below and the lines */
	uint64_t bytes;		/* the entries and the symbols they hold now */
	uint64_t entries;
	uint64_t evicted;	/* symbols given back for the budget */
	uint64_t expired;	/* entries freed after FR_SYMCACHE_IDLE_NS unheld */
	uint64_t reloaded;	/* evicted or pending symbols loaded again */
	uint64_t image_bytes;	/* process images charged */
	uint64_t images;
	uint64_t maps_refused;	/* mappings images left out for their bounds */
};

struct symcache *symcache__new(void);
void symcache__free(struct symcache *c);

/*
 * symcache__set_budget() - the budget in bytes (0: FR_CACHE_BUDGET). The
 * lines get half, and what the tables and images leave of 7/8 of it when
 * more, while the cache has not gone past its budget for
 * FR_SYMCACHE_IDLE_NS: symcache__trim() moves that line as they grow.
 */
void symcache__set_budget(struct symcache *c, uint64_t bytes);

/*
 * A marker: calls symcache__mark(table, @gen) for every table a live
 * process maps. symcache__trim() calls it without the cache's lock held.
 */
typedef void (*symcache_marker_fn)(void *ctx, uint64_t gen);
void symcache__set_marker(struct symcache *c, symcache_marker_fn fn, void *ctx);
void symcache__mark(const struct elfsyms *s, uint64_t gen);

/*
 * symcache__get_fd_hint() - the symbols of the binary open at @fd, mapped
 * at @path (NULL if unknown; see elfsyms__open_fd_hint()), loaded once per
 * distinct file (again if evicted). The reference stays valid until
 * symcache__put() (or symcache__free()); its symbols may be evicted
 * between dumps. Returns NULL with errno set: ENOEXEC if not ELF, EFBIG
 * past the per-file bound (a quarter of the budget).
 */
const struct elfsyms *symcache__get_fd_hint(struct symcache *c, int fd, const char *path);

/* symcache__get_fd() - symcache__get_fd_hint() without a path. */
const struct elfsyms *symcache__get_fd(struct symcache *c, int fd);

/* A file's identity as fstat() gives it, the cache's key. */
struct symcache_key {
	uint64_t dev, ino, size, mtime, ctime;	/* times in ns */
};

bool elfsyms__identity(const struct elfsyms *s, struct symcache_key *k);

/*
 * symcache__get_key() - the symbols of the file of identity @k if the cache
 * holds them, and in *@path (malloc'd) the path it was first mapped at:
 * no file is opened, so the caller needs no live process (an exited one's
 * mappings, struct fr_rec_maps). NULL (and *@path NULL) if the cache has
 * no such file, only its failure, or no path for it.
 */
const struct elfsyms *symcache__get_key(struct symcache *c, const struct symcache_key *k,
				       char **path);

/* symcache__put() - drop a reference a get handed out; accepts NULL. Lock-free. */
void symcache__put(const struct elfsyms *s);

/*
 * symcache__get_mapping() - the symbols of the binary behind mapping @m of
 * live process @pid. Opens /proc/PID/map_files/START-END (works for deleted
 * or replaced files; needs root), falling back for files not deleted to
 * <path> inside /proc/PID/root if its inode matches, both as untrusted
 * files (untrusted.h: regular, at most FR_ELF_MAX_BYTES, no symlink in
 * <path>). The first load of a binary looks for its debug information
 * with m->path as the hint. Costs a few syscalls: call it
 * once per mapping, not per address. Returns NULL with errno set: ENOENT for
 * anonymous and pseudo ("[vdso]", "[heap]") mappings, ESTALE if the file on
 * disk is no longer the mapped one.
 */
const struct elfsyms *symcache__get_mapping(struct symcache *c, int pid,
					    const struct fr_mapping *m);

/*
 * symcache__get_mapping_at() - the same through @procdir ("/proc/PID" or
 * "/proc/PID/task/TID"; a thread directory has no map_files, so only the
 * root/<path> fallback applies there), reading no debug file past
 * CLOCK_BOOTTIME @deadline_ns (0: none).
 */
const struct elfsyms *symcache__get_mapping_at(struct symcache *c, const char *procdir,
					       const struct fr_mapping *m, uint64_t deadline_ns);

/*
 * fr_mapping__open() - the file behind mapping @m of the process at
 * @procdir, opened as untrusted__open() does (read-only, regular, bounded
 * by FR_ELF_MAX_BYTES): through map_files, else by its path inside the
 * process's root if its inode is the mapped one. Returns an fd or -errno
 * (-ESTALE: the file there is not the mapped one).
 */
int fr_mapping__open(const char *procdir, const struct fr_mapping *m);

/* fr_mapping__stat() - fstat() of what fr_mapping__open() would open; 0 or -errno. */
int fr_mapping__stat(const char *procdir, const struct fr_mapping *m, struct stat *st);

/*
 * symcache__hold() - begin (@on) or end a hold: while any lasts, no
 * symbols are evicted or reloaded, so a dump may read the tables it got.
 */
void symcache__hold(struct symcache *c, bool on);

/*
 * symcache__trim() - keep the budget: fit the lines to the room the rest
 * leaves, free the entries unheld for FR_SYMCACHE_IDLE_NS, and past the
 * budget evict as the cache's comment
 * says (down to 7/8 of it). Nothing while a hold lasts, nor while another
 * thread loads a binary (it never waits for one: the next trim comes).
 * Any thread but one holding the process table's lock (the marker takes it).
 */
void symcache__trim(struct symcache *c);

/*
 * symcache__charge_image() - count a process image's @bytes (negative to
 * give them back) and @images, with the mappings it left out for its
 * bounds. Lock-free.
 */
void symcache__charge_image(struct symcache *c, int64_t bytes, int64_t images,
			    uint64_t maps_refused);

/*
 * symcache__stats() - what the cache has loaded, refused, holds and gave
 * back. Unless @wait, never waits for a load (the drain's thread): while
 * one holds the cache, the counts are those last read.
 */
void symcache__stats(struct symcache *c, struct symcache_stats *st, bool wait);

#endif /* FR_SYMBOLS_H */
