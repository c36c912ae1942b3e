/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dumper.h - write one dump on a thread of its own: encode the frozen
 * window, compress it as an LZ4 frame, write it through io_uring to a
 * temporary name, fsync, rename to "<name>.frd". The drain keeps
 * recording meanwhile; the main loop learns of the end through an eventfd.
 * Between dumps, a namer thread names each stack the drain announces
 * (dumper__announce()) into the names the dump copies (names.h).
 */
#ifndef FR_DUMPER_H
#define FR_DUMPER_H

/* A dump races the machine's trouble: its thread runs at this nice value. */
#define FR_DUMP_NICE	(-10)
/* A stop waits this long for the dump in progress (its reads are bounded). */
#define FR_DUMP_STOP_WAIT_NS	(5 * 1000000000ULL)

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "drain.h"
#include "format.h"
#include "sampler.h"

/* What the main loop froze; the dumper owns it once started. */
struct dump_request {
	struct fr_dump model;		/* META, TRIG, WIND and LOSS filled in */
	uint64_t first;			/* window indexes [first, last) */
	uint64_t last;
	uint64_t requested;		/* CLOCK_BOOTTIME ns of the trigger */
	uint64_t frozen;		/* CLOCK_BOOTTIME ns the window was frozen */
	uint32_t *victim_pid;		/* per model trigger, 0: no OOM victim */
	uint64_t *victim_start;
	char *dir;			/* output directory */
	char *name_hint;		/* short tag for the file name */
	bool group;			/* dumps readable by group gid (0640) */
	gid_t gid;
	unsigned meta_what;		/* FR_META_* flags for /proc reads */
	uint64_t resolve_timeout_ns;	/* [output] resolve_timeout */
	unsigned writer_flags;		/* FR_WRITER_* */
};

/* Where a dump's time went, trigger to durable file, in order (ns). */
struct dump_phases {
	uint64_t freeze;		/* trigger to frozen window (drained up to it) */
	uint64_t proc_wait;		/* /proc reads asked for before it, let land */
	uint64_t names_wait;		/* the namer thread letting go of the names */
	uint64_t snapshot;		/* the live processes, read at the dump */
	uint64_t collect;		/* what the frozen events reference */
	uint64_t names;			/* naming their stacks */
	uint64_t lines;			/* source lines of the named frames */
	uint64_t write;			/* events encoded, compressed, written */
	uint64_t commit;		/* fsync, rename, directory fsync */
	uint64_t stacks_named;		/* stacks named in the dump (the rest copied) */
	uint64_t stacks_named_own;	/* of them the daemon's own, left to dumps */
	uint64_t lines_looked_up;	/* frames whose lines the dump looked up */
};

struct dump_result {
	int err;			/* 0 or -errno */
	char path[PATH_MAX];		/* final path when err == 0 */
	char msg[512];			/* what failed, when err != 0 */
	uint64_t bytes;			/* compressed file size */
	uint64_t raw_bytes;		/* decompressed stream size */
	uint64_t events;
	uint64_t stale;			/* frozen events recycled before writing */
	uint64_t procs;
	uint64_t stacks;
	uint64_t elapsed_ns;		/* trigger to durable file */
	struct dump_phases phases;
	bool uring;			/* written through io_uring */
	char triggers[256];		/* names of the triggers it answers */
};

/* The names kept between dumps, as status shows them. */
struct dumper_names {
	uint64_t bytes;			/* held (a moment's view, after the last batch) */
	uint64_t budget;
	uint64_t stacks;		/* stacks with names kept */
	uint64_t frames;		/* distinct frames */
	uint64_t resets;		/* emptied for the budget */
	uint64_t compactions;		/* rebuilt with the stacks in use, for the budget */
	uint64_t announced;		/* new stacks the drain announced */
	uint64_t dropped;		/* ... that found the queue full (named at a dump) */
	uint64_t named_ahead;		/* stacks named between dumps */
};

struct dumper;
struct drain_stack;

struct procinfo;
struct symcache;

struct dumper *dumper__new(struct drain *d, struct sampler *s, struct symcache *sc,
			   struct procinfo *pi);
void dumper__free(struct dumper *dp);
int dumper__fd(const struct dumper *dp);
int dumper__nice_error(const struct dumper *dp);
struct pycache;
void dumper__set_python(struct dumper *dp, struct pycache *py);
void dumper__ksyms_stale(struct dumper *dp);
void dumper__set_names_budget(struct dumper *dp, uint64_t bytes);
void dumper__announce(struct dumper *dp, const struct drain_stack *s);
void dumper__forget(struct dumper *dp, uint32_t id, uint32_t serial);
void dumper__tick(struct dumper *dp);
void dumper__names(struct dumper *dp, struct dumper_names *out);
bool dumper__busy(const struct dumper *dp);
int dumper__start(struct dumper *dp, struct dump_request *req);
int dumper__finish(struct dumper *dp, struct dump_result *res);
void dump_request__free(struct dump_request *req);

#endif /* FR_DUMPER_H */
