/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * evtype.h - the one table of event types: for each type of
 * enum fr_dump_event_type, its name, the key and words of its count, whether
 * it belongs to a process, and what the recorder's window event
 * (struct fr_event, record/window.h) references in each field.
 *
 * What reads it: the drain drops an evicted event's references by it
 * (put_refs()), the encoder collects by it, and status, show and report
 * list their per-type counts from it. docs/ARCHITECTURE.md has the recipe
 * for adding a type.
 */
#ifndef FR_EVTYPE_H
#define FR_EVTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"

/* What one field of a window event holds. */
enum fr_evref {
	FR_EVREF_VALUE = 0,	/* a plain value, or unused: nothing to drop */
	FR_EVREF_THREAD,	/* the thread id of the event's process (tid only) */
	FR_EVREF_STACK,		/* a stack id of the drain's stack table (0: none) */
	FR_EVREF_STR,		/* a string or blob id of its string table (0: none) */
	FR_EVREF_PROC,		/* a slot of its process table (0: none) */
};

struct fr_evtype {
	const char *name;	/* "sample": events --json's type, events --type */
	const char *count;	/* "samples": the key of its count in JSON */
	const char *label;	/* "OOM kills": its count in text */
	bool has_proc;		/* belongs to an incarnation (proc, tid, comm are its) */
	uint8_t ref;		/* enum fr_evref of fr_event.ref */
	uint8_t arg;		/* ... of fr_event.arg */
	uint8_t tid;		/* ... of fr_event.tid */
};

/* fr_evtype() - the table's row for @type, or NULL for a type this version does not know. */
const struct fr_evtype *fr_evtype(unsigned type);

/* dump__event_type_name() - @type's name, "unknown" for one this version does not know. */
const char *dump__event_type_name(unsigned type);
/* dump__event_has_proc() - whether events of @type belong to a process. */
bool dump__event_has_proc(unsigned type);

struct json;
void evtype__json_counts(struct json *j, const uint64_t by_type[FR_DEV_NTYPES]);
int evtype__text_counts(char *buf, size_t len, const uint64_t by_type[FR_DEV_NTYPES]);

#endif
