/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * view.h - what the CLI commands share when they look at a dump: frame
 * names, times, exit statuses, per-process and per-stack sample counts.
 */
#ifndef FR_VIEW_H
#define FR_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format.h"

/* How samples' user stacks were walked (a process's: show, report). */
struct view_ustacks {
	uint64_t user;		/* with a user stack (an end code) */
	uint64_t whole;		/* of those, to the outermost frame */
	uint64_t later;		/* walked on later, from a copy (1.6) */
	uint64_t no_table;	/* walked by frame pointers: no table yet */
};

/* view_ustacks__add() - count sample @e into @us. */
void view_ustacks__add(struct view_ustacks *us, const struct fr_dump_event *e);

struct view {
	const struct fr_dump *d;
	uint64_t *proc_samples;		/* per process index */
	uint64_t *stack_samples;	/* per stack index */
	uint64_t by_type[FR_DEV_NTYPES];
	uint64_t samples;
	uint64_t uend[FR_DUEND_NR];	/* samples by how their user stack ended */
	uint64_t *stop_bin;		/* per binary index + 1 (0: no file): walks that stopped short there */
	uint64_t *proc_fp;		/* per process: samples walked by frame pointers (no table) */
	uint64_t *proc_rows_ts;		/* per process: its first sample walked with rows, 0: none */
	uint64_t *proc_since;		/* per process: its last exec in the window, else its start */
	struct view_ustacks *proc_us;	/* per process: how its user stacks were walked */
	uint32_t fp_procs;		/* processes with a sample walked by frame pointers */
};

/* view_user_stacks() - samples with a user stack (an end code), of format 1.3+. */
uint64_t view_user_stacks(const struct view *v);

/* view_uend_stopped() - is @uend a walk that stopped short (not outermost, not rows missing)? */
bool view_uend_stopped(unsigned uend);

/*
 * view_stop_top() - the binaries where most walks stopped short: up to @n
 * binary indexes + 1 (0: code in no file) into @out, most first. Returns
 * how many.
 */
uint32_t view_stop_top(const struct view *v, uint32_t *out, uint32_t n);

/*
 * view_fp_top() - the processes with the most samples walked by frame
 * pointers because they had no unwind table yet (end no_table): up to @n
 * process indexes into @out, most first. Returns how many.
 */
uint32_t view_fp_top(const struct view *v, uint32_t *out, uint32_t n);

/*
 * view_rows_after() - how long after process @p's exec (or its start, if
 * the window holds no exec) its first sample walked with rows came, in ns;
 * -1 when none did.
 */
int64_t view_rows_after(const struct view *v, uint32_t p);

int view__init(struct view *v, const struct fr_dump *d);
void view__fini(struct view *v);

const char *view_text(const char *s, char *buf, size_t len);
const char *view_str(const struct fr_dump *d, uint32_t idx, char *buf, size_t len);
/* FR_VIEW_FRAME_MAX - a buffer for view_frame(): long C++ signatures fit. */
#define FR_VIEW_FRAME_MAX	4096
/* FR_VIEW_TEXT_MAX - a buffer that holds any escaped cmdline (4 bytes a byte). */
#define FR_VIEW_TEXT_MAX	(4 * 4096 + 1)
const char *view_frame(const struct fr_dump *d, uint32_t frame, char *buf, size_t len);
const char *view_frame_text(const struct fr_dump *d, uint32_t frame, char *buf, size_t len);
const char *view_folded_frame(const struct fr_dump *d, uint32_t frame, char *buf, size_t len);
uint64_t view_realtime(const struct fr_dump *d, uint64_t boot_ns);
const char *view_time(const struct fr_dump *d, uint64_t boot_ns, char *buf, size_t len);
const char *view_status(int32_t code, char *buf, size_t len);
const char *view_bytes(uint64_t b, char *buf, size_t len);
const char *view_resource(unsigned r);
bool view_is_loss(const char *key);
struct json;
void view_event_json(struct json *j, const struct fr_dump *d, const struct fr_dump_event *e);
void view_no_table_json(struct json *j, const struct view *v, uint32_t n);
void view_stack_json(struct json *j, const struct fr_dump *d, const char *key, uint32_t stack);
void view_reading_json(struct json *j, const struct fr_dump *d, const struct fr_dump_event *e);
void view_sparklines(const struct fr_dump *d, FILE *f);

#endif /* FR_VIEW_H */
