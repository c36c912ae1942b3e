/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * procmeta.h - what the process table knows about an incarnation beyond its
 * events: executable, command line, cgroup, threads, and the binaries it
 * maps with their symbols. Read from /proc by the procinfo worker
 * (procinfo.h), hung on a process table entry (proctable.h): immutable once
 * made, refcounted, and outliving the process.
 */
#ifndef FR_PROCMETA_H
#define FR_PROCMETA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proctable.h"
#include "symbols.h"

struct fr_thread {
	uint32_t tid;
	char name[16];
};

/* The mappings of an image and the symbols of its binaries; shared by a
 * forked child until it execs. */
struct proc_image {
	atomic_int refs;
	struct procmaps *maps;		/* executable mappings only, bounded */
	const struct elfsyms **syms;	/* per mapping, each a reference; NULL: none */
	uint32_t skipped;		/* mappings not loaded: the read's deadline passed */
	struct symcache *sc;		/* the cache the references and bytes are charged to */
	uint64_t bytes;			/* charged to its budget */
	uint64_t serial;		/* which read made it (never 0): the names kept of it */
};

struct proc_meta {
	atomic_int refs;
	uint64_t begun;			/* CLOCK_BOOTTIME ns the read began */
	uint64_t stamp;			/* CLOCK_BOOTTIME ns of the read */
	uint32_t ppid;
	char state;			/* /proc state letter */
	bool has_uid;
	uid_t uid;			/* owner of /proc/PID: the effective uid, root if not dumpable */
	uint64_t rss;			/* bytes */
	char *exe;			/* NULL: unreadable (kernel thread) */
	char *cmdline;			/* arguments joined by spaces */
	char *cgroup;			/* cgroup v2 path, else the first line */
	char *memcg;			/* the memory controller's path (v1 memory, else v2) */
	char *container;		/* container id from a cgroup path; NULL: none */
	uint64_t cgroup_id;		/* the v2 cgroup's id (inode), 0: unknown */
	uint32_t nspid;			/* pid in its own PID namespace, 0: the same */
	struct fr_thread *threads;
	uint32_t nthreads;
	struct proc_image *img;		/* FR_META_MAPS only; NULL: none */
	uint32_t ugen;			/* unwind maps generation before img was read */
};

/* proc_image__put() - drop a reference to @img; the last one frees it. Accepts NULL. */
void proc_image__put(struct proc_image *img);
/* proc_meta__get() - take a reference on @m; accepts NULL. */
void proc_meta__get(struct proc_meta *m);
/* proc_meta__put() - drop a reference; the last one frees @m. Accepts NULL. */
void proc_meta__put(struct proc_meta *m);
/* The two above, for the process table the facts hang on (proctable.h). */
extern const struct proctable_meta_ops proc_meta__ops;
struct proc_meta *proc_meta__inherit(const struct proc_meta *parent, uint32_t pid,
				     uint64_t start);
struct proc_meta *proc_meta__with_image(const struct proc_meta *old, struct proc_image *img,
					uint64_t begun);

#endif /* FR_PROCMETA_H */
