/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tables.h - the owner of the BPF unwind maps (bpf/unwind.bpf.h): the row
 * pool, the file table and each sampled process's mappings.
 *
 * A file's rows are built once, when a sampled process first maps it, and
 * shared by every process that maps the same file: keyed by its identity,
 * (device, inode) of the mapping and the file's change time, which later
 * processes find with one stat, without opening the file. A build-id is
 * never a key: another user's file may claim any. A file's rows are freed a minute after no
 * process that has a table maps it any more, or sooner when the pool
 * needs the room; then files are moved together, and the rows of mapped
 * files no walk came to for ~10 s go too (built again when one does). A process's table is dropped when the BPF
 * side has dropped or outdated it (exit, exec, munmap of code):
 * unwinder__gc() notices. Thread-safe: the /proc worker and the attacher
 * attach, the daemon's tick collects, status reads the figures; rows are
 * built outside the lock.
 */
#ifndef FR_UNWIND_TABLES_H
#define FR_UNWIND_TABLES_H

#include <stdbool.h>
#include <stdint.h>

#include "contract.h"
#include "symbols.h"

struct sampler_unwind_maps;

struct unwinder_stats {
	uint64_t rows_cap;	/* rows the pool holds */
	uint64_t rows_used;	/* rows in use */
	uint64_t bytes;		/* kernel memory of the pool, file table and process tables */
	uint64_t files;		/* files with rows now */
	uint64_t files_cap;
	uint64_t procs;		/* processes with a table now */
	uint64_t built;		/* files whose rows were built, in all */
	uint64_t build_ns;	/* time spent building them */
	uint64_t freed;		/* files whose rows were freed */
	uint64_t no_cfi;	/* files without CFI: walked by frame pointer */
	uint64_t failed;	/* files whose CFI could not be read (not x86-64 ELF,
				 * malformed, refused, over the CPU budget) */
	uint64_t unopened;	/* mappings whose file could not be opened (often: the process exited) */
	uint64_t idle;		/* files no table names now, kept FR_UNWIND_IDLE_NS for reuse */
	uint64_t full;		/* files left out: the pool or file table was full */
	uint64_t over_share;	/* files left out: their owner (not root) held its share of the pool */
	uint64_t cold;		/* files whose rows were evicted while mapped: no walk came to
				 * them for ~10 s and the pool needed the room */
	uint64_t cold_now;	/* such files without rows now */
	uint64_t refilled;	/* cold files given their rows again: a walk came to them */
	uint64_t cold_no_room;	/* cold files a walk came to that found no room (retried later) */
	uint64_t moved;		/* files moved down the pool to join its free runs (compaction) */
	uint64_t maps_over;	/* executable mappings beyond FR_UMAPS_MAX, left out */
	uint64_t stale;		/* tables dropped as outdated (exec, munmap) or gone */
	uint64_t exited;	/* tables not installed: the process exited while they were built */
	uint64_t kernel_tables;	/* asks answered by a complete table the BPF side built */
	uint64_t exits_kept;	/* exits whose mappings were kept for their copies */
	uint64_t finished_after_exit;	/* copies finished with those, the process gone */
};

struct unwinder;

/*
 * unwinder__new() - take over the unwind maps @m of a loaded sampler
 * (their fds are borrowed: the sampler outlives the unwinder). Returns
 * NULL with errno set.
 */
struct unwinder *unwinder__new(const struct sampler_unwind_maps *m);

/*
 * unwinder__set_python() - whether files built from now on are searched
 * for an interpreter (pydetect.h): without, no table says where one is,
 * and the BPF side walks no Python frame. Before the first build.
 */
void unwinder__set_python(struct unwinder *u, bool on);

/* unwinder__free() - release everything; accepts NULL. */
void unwinder__free(struct unwinder *u);

/*
 * unwinder__gen() - the maps generation of process @pid now, and in
 * *@changed (if not NULL) the CLOCK_BOOTTIME ns it last moved (0: never).
 * Read it BEFORE reading the maps that unwinder__attach() gets, so that an
 * exec or munmap in between makes the table stale rather than wrong.
 */
uint32_t unwinder__gen(struct unwinder *u, uint32_t pid, uint64_t *changed);

/*
 * unwinder__mark_read() - the daemon holds the maps of (@pid, @start) read
 * at generation @gen (unwinder__gen() before the read): its exit need not
 * send them (struct fr_rec_maps). Best effort: a mark lost costs one record.
 */
void unwinder__mark_read(struct unwinder *u, uint32_t pid, uint64_t start, uint32_t gen);

/*
 * Asked before each file's rows are built (not for files built already):
 * true stops the attach, so that a caller can serve a more urgent
 * process first. The rows built so far are kept for the next attach.
 * @fn may be NULL. With @no_wait, a file without rows that another thread
 * is building, or larger than @build_max bytes (0: any size), stops the
 * attach at once (-EAGAIN) instead of a wait or a long build.
 */
struct unwind_yield {
	bool (*fn)(void *ctx);
	void *ctx;
	bool no_wait;
	uint64_t build_max;
};

/*
 * unwinder__attach() - give incarnation (@pid, @start) a table for the
 * executable mappings of @pm, read from @procdir while maps generation
 * @gen was current: rows are built for files not seen yet, without the
 * lock held, so that two threads build two files at once and the
 * daemon's tick is never held up by a build. Replaces the process's
 * previous table. @yield may be NULL. Returns 0 or -errno (-ESTALE: @gen
 * is no longer current; -EAGAIN: @yield stopped it; -ESRCH: it exited;
 * nothing was written).
 */
int unwinder__attach(struct unwinder *u, uint32_t pid, uint64_t start, uint32_t gen,
		     const char *procdir, const struct procmaps *pm,
		     const struct unwind_yield *yield);

/*
 * unwinder__current() - does (@pid, @start) have a table the BPF side
 * uses: ours, or one it built with rows for every file it maps? Not when
 * it names a file whose rows were evicted while cold and that a walk has
 * come to since: attaching it again builds them.
 */
bool unwinder__current(struct unwinder *u, uint32_t pid, uint64_t start);

/* A process to attach anew (unwinder__wanted()). */
struct unwind_want {
	uint32_t pid;
	uint64_t start;
};

/*
 * unwinder__wanted() - up to @max processes into @out whose tables name a
 * file that lost its rows while cold and that a walk has come to since:
 * the caller has them attached again, which builds those rows back.
 * Cheap when no file is cold. Returns how many.
 */
unsigned unwinder__wanted(struct unwinder *u, struct unwind_want *out, unsigned max);

/*
 * unwinder__gc() - drop the tables the BPF side no longer uses (the
 * process exited, exec'd or unmapped code) and free the rows no table
 * references. Returns how many tables were dropped.
 */
unsigned unwinder__gc(struct unwinder *u);

/*
 * unwinder__exit_maps() - incarnation (r->h.tgid, r->h.start) exited with
 * the code mappings of @r (struct fr_rec_maps, checked by the drain). When
 * its table lacked rows for a file (FR_XMAPS_MISSING), they are kept for
 * unwinder__finish(), which finds each file by its identity: a process
 * that ends before a big file's rows are built (cc1's take 0.3 s; it runs
 * for 0.15) has its stacks finished once they are. The last
 * FR_UNWIND_AFTER such exits are kept. Call it from the thread that calls
 * unwinder__finish() (the drain's): it never takes the lock.
 */
void unwinder__exit_maps(struct unwinder *u, const struct fr_rec_maps *r);

/*
 * unwinder__finish() - walk on from a sample's copy of its user stack
 * (@c, then c->len bytes at @stack) with the table (@pid, @start) has now,
 * or with the mappings its exit sent once it has ended, if of the same
 * maps generation and with rows for the file the kernel's walk stopped in
 * (uwalk.h): at most @max frames into @ips, the end into *@end. Returns
 * the count; when that cannot be done yet, -EINPROGRESS if what may give
 * the rows is under way (a thread attaches the process; once it has
 * exited, a thread builds the file the copy stopped in), else 0 (no table
 * yet, no rows, or the lock busy: never waits); or
 * -ESRCH (the process ended, and neither a table nor rows being built
 * remain for it) or -ESTALE (its maps changed since the copy) when it
 * never can.
 */
int unwinder__finish(struct unwinder *u, uint32_t pid, uint64_t start,
		     const struct fr_ucopy *c, const void *stack, uint64_t *ips,
		     unsigned max, uint32_t *end);

void unwinder__stats(struct unwinder *u, struct unwinder_stats *st);

/*
 * unwinder__python() - the interpreter of incarnation (@pid, @start) as its
 * table says (pydetect.h). Returns 0 or -ENOENT.
 */
int unwinder__python(struct unwinder *u, uint32_t pid, uint64_t start, struct fr_pyproc *out);

#endif /* FR_UNWIND_TABLES_H */
