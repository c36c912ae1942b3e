/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * attacher.h - a thread of its own that gives a process its unwind table
 * as soon as a sample (or a stall or block walked without one) shows it
 * has none, and soon after an exec: it reads the maps alone and
 * attaches them (tables.h). The /proc worker also attaches, after its
 * full reads, but those load every binary's symbols first and queue
 * behind each other: a process whose first sample waited there was walked
 * by frame pointers for up to a second.
 */
#ifndef FR_UNWIND_ATTACHER_H
#define FR_UNWIND_ATTACHER_H

#include <stdbool.h>
#include <stdint.h>

struct unwinder;

struct attacher_stats {
	uint64_t requests;	/* samples that asked for a table */
	uint64_t dropped;	/* requests the full queue refused */
	uint64_t attached;	/* tables written */
	uint64_t failed;	/* maps unreadable (the process exited) or stale */
	uint64_t yielded;	/* attaches stopped between two files for a hotter process */
};

struct attacher;

/* attacher__new() - start the thread over @u (borrowed). NULL + errno. */
struct attacher *attacher__new(struct unwinder *u);

/*
 * attacher__free() - stop the thread and free @a; a thread that does not
 * stop within FR_STOP_WAIT_NS is left with its memory. Accepts NULL.
 */
void attacher__free(struct attacher *a);

/*
 * attacher__request() - ask for (@pid, @start)'s table, once per sample,
 * stall or block walked without one. Never blocks. The incarnation with
 * the most requests waiting is served first; one served within
 * FR_ATTACH_RETRY_NS is not queued again; a full queue drops one an exec
 * asked for, else this one (counted).
 */
void attacher__request(struct attacher *a, uint32_t pid, uint64_t start);

/*
 * attacher__request_exec() - (@pid, @start) just exec'd: queue it with no
 * demand, served once no demand waits and FR_ATTACH_EXEC_NS have passed
 * (its libraries are mapped by then), or at once when a sample asks for
 * it. A full queue drops such a request first. Never blocks.
 */
void attacher__request_exec(struct attacher *a, uint32_t pid, uint64_t start);

/*
 * attacher__pending() - is (@pid, @start)'s table queued or being built
 * now? What waits for its rows may wait on. Never blocks for long (the
 * queue's lock is never held across a build).
 */
bool attacher__pending(struct attacher *a, uint32_t pid, uint64_t start);

void attacher__stats(struct attacher *a, struct attacher_stats *st);

#endif /* FR_UNWIND_ATTACHER_H */
