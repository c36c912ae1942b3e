// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_report.c - "flightrec report": one self-contained HTML page for a
 * dump: a CPU and an off-CPU flame graph, a timeline of samples,
 * pressure, stalls and deaths, the process table, the triggers and the
 * losses.
 *
 * The page is tools/report.html, embedded at build time (report_html.h,
 * made by tools/embed.py). Its marker FR_REPORT_MARK is replaced with the
 * dump's data as one JSON object; every '<' in it is written as \u003c, so
 * the data can never close its <script> element. Times in the JSON are
 * microseconds relative to the origin of --from/--to (the first trigger),
 * process starts are CLOCK_BOOTTIME microseconds, and processes, stacks
 * and frame names are referred to by their index in the JSON's own arrays.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "evtype.h"
#include "filter.h"
#include "json.h"
#include "memview.h"
#include "report_html.h"
#include "stallview.h"
#include "view.h"

#define FR_REPORT_MARK		"@FR_REPORT_DATA@"
#define FR_REPORT_TOP		10	/* processes drawn in the timeline */
#define FR_REPORT_MEM_TOP	8	/* RSS curves drawn in the memory timeline */
#define FR_REPORT_GROWERS	20	/* rows of the growers table */
#define FR_REPORT_BIN_NS	250000000ULL
#define FR_REPORT_BINS_MIN	20
#define FR_REPORT_BINS_MAX	300
#define FR_REPORT_SRCS		4	/* source positions listed per frame name */
#define FR_REPORT_STALL_LANES	8	/* processes with a stall lane in the timeline */
#define FR_REPORT_STALL_SEGS	4000	/* recorded stalls per lane, the longest */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: flightrec report [-o FILE] [--pid=PID[,PID]] [--from=SEC] [--to=SEC] DUMP\n"
		"\n"
		"Write one self-contained HTML page about the dump: interactive flame\n"
		"graphs of the CPU samples and of the time blocked off the CPU (click\n"
		"to zoom, search, by process), a timeline of samples per process with\n"
		"the pressure curves, a stall lane for each of the processes that\n"
		"stalled longest, exits, OOM kills and triggers, the PSI memory stall\n"
		"time beside the recorded memory stalls, the sortable process table,\n"
		"the triggers and the loss counters. It needs no network and opens in\n"
		"any browser. It holds command lines: a new FILE is created with mode\n"
		"0600. --pid keeps the pressure curves and the triggers.\n"
		"\n"
		"  -o, --output FILE  write the page to FILE ('-' or none: standard output)\n"
		FR_FILTER_HELP
		"  --help             show this help\n"
		"  --version          show the version\n");
}

struct sample_key {
	uint32_t proc;		/* process index */
	uint32_t stack;		/* stack index + 1, 0: no stack */
	uint32_t kind;		/* off-CPU: FR_DSTALL_BLOCKED or _SLEEP; samples: 0 */
	uint64_t ns;		/* off-CPU: the time blocked; samples: 0 */
};

struct stall_seg {
	uint64_t ns;		/* its duration */
	uint32_t ev;		/* event index */
};

struct series {
	uint8_t resource;
	uint32_t source;	/* string index */
};

struct report {
	const struct fr_dump *d;
	const struct filter *flt;
	struct filter tflt;	/* flt without --pid: for pressure */
	uint64_t origin;	/* ns: time 0 of the JSON */
	uint64_t lo, hi;	/* ns: the range shown, window cut by --from/--to */
	uint32_t *pmap;		/* process index -> JSON index + 1, 0: not shown */
	uint32_t nproc_out;
	uint64_t *psamples;	/* process index -> samples in the range */
	struct view_ustacks *pstacks;	/* process index -> how its samples' user stacks were walked */
	uint64_t samples;
	struct sample_key *keys;	/* (proc, stack) of every sample, sorted */
	uint32_t nkeys;
	struct sample_key *okeys;	/* (proc, stack, kind, ns) of every offcpu event, sorted */
	uint32_t nokeys;
	uint32_t *smap;		/* stack index -> JSON index + 1 */
	uint32_t *stacks_out;	/* JSON index -> stack index */
	uint32_t nstack_out;
	uint32_t *fname;	/* frame index -> name index + 1 */
	uint32_t *sname;	/* symbol string * 2 + kind -> name index + 1 */
	uint32_t *names;	/* name index -> a frame with that name */
	uint32_t nnames;
	uint32_t *srcs;		/* name index * FR_REPORT_SRCS + i -> frame + 1 with a distinct position */
	uint32_t *srcs_more;	/* name index -> distinct positions beyond those */
	struct series *series;
	uint32_t nseries;
};

static int64_t rel_us(const struct report *r, uint64_t ns)
{
	return (int64_t)(ns - r->origin) / 1000;
}

static bool pid_shown(const struct filter *flt, uint32_t pid)
{
	if (!flt->npids)
		return true;
	for (uint32_t i = 0; i < flt->npids; i++)
		if (flt->pids[i] == pid)
			return true;
	return false;
}

static uint64_t at_offset(uint64_t origin, double sec)
{
	double t = (double)origin + sec * 1e9;

	return t <= 0 ? 0 : (uint64_t)t;
}

static int cmp_key(const void *a, const void *b)
{
	const struct sample_key *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

/* A recorded stall or block off the CPU: its kind and begin; false for other events. */
static bool stall_of(const struct fr_dump_event *e, unsigned *kind, uint64_t *begin)
{
	if (e->type == FR_DEV_STALL) {
		*kind = e->stall.kind;
		*begin = e->stall.begin;
	} else if (e->type == FR_DEV_OFFCPU) {
		*kind = e->off.kind;
		*begin = e->off.begin;
	} else {
		return false;
	}
	return *kind < FR_DSTALL_NKINDS && *begin <= e->ts;
}

/* The name index of @frame, made on first sight. */
static uint32_t name_of(struct report *r, uint32_t frame)
{
	const struct fr_dump_frame *f = &r->d->frame[frame];
	uint32_t *slot = f->sym ? &r->sname[(size_t)f->sym * 2 + f->kind] : &r->fname[frame];

	if (!r->fname[frame]) {
		if (!*slot) {
			r->names[r->nnames++] = frame;
			*slot = r->nnames;
		}
		r->fname[frame] = *slot;
	}
	return r->fname[frame] - 1;
}

/* same_lines() - whether frames @a and @b have the same source position (LINE). */
static bool same_lines(const struct fr_dump *d, uint32_t a, uint32_t b)
{
	const struct fr_dump_frame *x = &d->frame[a], *y = &d->frame[b];

	if (x->nlines != y->nlines)
		return false;
	for (uint32_t k = 0; k < x->nlines; k++) {
		const struct fr_dump_line *p = &d->line[x->line + k], *q = &d->line[y->line + k];

		if (p->func != q->func || p->file != q->file || p->line != q->line)
			return false;
	}
	return true;
}

/*
 * report__sources() - for each frame name, the first FR_REPORT_SRCS
 * distinct source positions of the frames shown with it, and how many
 * more there are. 0 or -ENOMEM.
 */
static int report__sources(struct report *r)
{
	const struct fr_dump *d = r->d;

	r->srcs = calloc((size_t)r->nnames * FR_REPORT_SRCS + 1, sizeof(*r->srcs));
	r->srcs_more = calloc(r->nnames + 1, sizeof(*r->srcs_more));
	if (!r->srcs || !r->srcs_more)
		return -ENOMEM;
	for (uint32_t f = 0; f < d->nframe; f++) {
		uint32_t n, *slot, k = 0;
		const struct fr_dump_frame *fr = &d->frame[f];

		if (!r->fname[f] || !fr->nlines || fr->line > d->nline ||
		    fr->nlines > d->nline - fr->line)
			continue;
		n = r->fname[f] - 1;
		slot = &r->srcs[(size_t)n * FR_REPORT_SRCS];
		while (k < FR_REPORT_SRCS && slot[k] && !same_lines(d, slot[k] - 1, f))
			k++;
		if (k == FR_REPORT_SRCS)
			r->srcs_more[n]++;
		else if (!slot[k])
			slot[k] = f + 1;
	}
	return 0;
}

/* Stack @s (index + 1, 0: none) is shown: give it a JSON index and name its frames. */
static void use_stack(struct report *r, uint32_t s)
{
	const struct fr_dump *d = r->d;

	if (!s || r->smap[s - 1])
		return;
	r->stacks_out[r->nstack_out] = s - 1;
	r->smap[s - 1] = ++r->nstack_out;
	for (uint32_t k = 0; k < d->stack[s - 1].kn + d->stack[s - 1].un; k++)
		name_of(r, d->stack[s - 1].frames[k]);
}

/*
 * report__events() - one pass over the events: the pressure series, the
 * samples and the offcpu events of the shown processes in the range.
 */
static void report__events(struct report *r)
{
	const struct fr_dump *d = r->d;

	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];

		if (e->type == FR_DEV_PRESSURE) {
			uint32_t s = 0;

			if (!filter__match(&r->tflt, d, e))
				continue;
			while (s < r->nseries && (r->series[s].resource != e->psi.resource ||
						  r->series[s].source != e->comm))
				s++;
			if (s == r->nseries)
				r->series[r->nseries++] = (struct series){ e->psi.resource, e->comm };
			continue;
		}
		if ((e->type != FR_DEV_SAMPLE && e->type != FR_DEV_OFFCPU) || !r->pmap[e->proc] ||
		    !filter__match(r->flt, d, e))
			continue;
		if (e->type == FR_DEV_OFFCPU) {
			unsigned kind;
			uint64_t begin;

			if (stall_of(e, &kind, &begin))
				r->okeys[r->nokeys++] = (struct sample_key){ e->proc, e->stack, kind,
									     e->ts - begin };
			continue;
		}
		r->psamples[e->proc]++;
		view_ustacks__add(&r->pstacks[e->proc], e);
		r->samples++;
		r->keys[r->nkeys++] = (struct sample_key){ e->proc, e->stack, 0, 0 };
	}
}

/*
 * report__prepare() - select what the page shows: the processes, the
 * samples in the range (counted per (process, stack)), the offcpu events
 * (per (process, stack, kind)), the stacks they use and their frame
 * names, the pressure series. 0 or -ENOMEM.
 */
static int report__prepare(struct report *r)
{
	const struct fr_dump *d = r->d;

	r->origin = filter__origin(d);
	r->lo = d->win.start;
	r->hi = d->win.end > d->win.start ? d->win.end : d->win.start;
	if (r->flt->has_from && at_offset(r->origin, r->flt->from) > r->lo)
		r->lo = at_offset(r->origin, r->flt->from);
	if (r->flt->has_to && at_offset(r->origin, r->flt->to) < r->hi)
		r->hi = at_offset(r->origin, r->flt->to);
	if (r->hi < r->lo)
		r->hi = r->lo;
	r->tflt = *r->flt;
	r->tflt.npids = 0;

	r->pmap = calloc(d->nproc + 1, sizeof(*r->pmap));
	r->psamples = calloc(d->nproc + 1, sizeof(*r->psamples));
	r->pstacks = calloc(d->nproc + 1, sizeof(*r->pstacks));
	r->keys = calloc(d->nev + 1, sizeof(*r->keys));
	r->okeys = calloc(d->nev + 1, sizeof(*r->okeys));
	r->smap = calloc(d->nstack + 1, sizeof(*r->smap));
	r->stacks_out = calloc(d->nstack + 1, sizeof(*r->stacks_out));
	r->fname = calloc(d->nframe + 1, sizeof(*r->fname));
	r->sname = calloc((size_t)d->nstr * 2 + 2, sizeof(*r->sname));
	r->names = calloc(d->nframe + 1, sizeof(*r->names));
	r->series = calloc(d->nev + 1, sizeof(*r->series));
	if (!r->pmap || !r->psamples || !r->pstacks || !r->keys || !r->okeys || !r->smap || !r->stacks_out ||
	    !r->fname || !r->sname || !r->names || !r->series)
		return -ENOMEM;

	for (uint32_t i = 0; i < d->nproc; i++)
		if (pid_shown(r->flt, d->proc[i].pid) && filter__proc(r->flt, d, i))
			r->pmap[i] = ++r->nproc_out;
	report__events(r);
	qsort(r->keys, r->nkeys, sizeof(*r->keys), cmp_key);
	qsort(r->okeys, r->nokeys, sizeof(*r->okeys), cmp_key);
	for (uint32_t i = 0; i < r->nkeys; i++)
		use_stack(r, r->keys[i].stack);
	for (uint32_t i = 0; i < r->nokeys; i++)
		use_stack(r, r->okeys[i].stack);
	return report__sources(r);
}

static void report__fini(struct report *r)
{
	free(r->pstacks);
	free(r->srcs);
	free(r->srcs_more);
	free(r->series);
	free(r->names);
	free(r->sname);
	free(r->fname);
	free(r->stacks_out);
	free(r->smap);
	free(r->okeys);
	free(r->keys);
	free(r->psamples);
	free(r->pmap);
}

/* "user_stacks": how complete the user stacks are, and where walks stopped. */
static void json_user_stacks(struct json *j, const struct fr_dump *d)
{
	uint32_t top = 0;
	struct view v;

	if (view__init(&v, d))
		return;
	json__obj(j, "user_stacks");
	json__u64(j, "samples", view_user_stacks(&v));
	json__u64(j, "outermost", v.uend[FR_DUEND_OUTERMOST]);
	json__u64(j, "no_table", v.uend[FR_DUEND_NO_TABLE]);
	if (view_stop_top(&v, &top, 1)) {
		json__str(j, "stopped_most_in", top ? dump__str(d, d->bin[top - 1].path) : "[no file]");
		json__u64(j, "stopped_most_samples", v.stop_bin[top]);
	}
	view_no_table_json(j, &v, 5);
	json__end_obj(j);
	view__fini(&v);
}

static void json_header(struct json *j, const struct report *r, const char *path)
{
	const struct fr_dump *d = r->d;
	char buf[128];

	json__str(j, "file", path);
	snprintf(buf, sizeof(buf), "%u.%u", d->major, d->minor);
	json__str(j, "format", buf);
	json__str(j, "version", dump__meta_str(d, "flightrec_version"));
	json__str(j, "host", dump__meta_str(d, "host"));
	json__str(j, "kernel", dump__meta_str(d, "kernel"));
	json__str(j, "boot_id", dump__meta_str(d, "boot_id"));
	json__u64(j, "ncpus", dump__meta_u64(d, "ncpus"));
	json__u64(j, "frequency", dump__meta_u64(d, "frequency"));
	json__str(j, "event_source", dump__meta_str(d, "event_source"));
	json__str(j, "origin_time", view_time(d, r->origin, buf, sizeof(buf)));
	json__u64(j, "origin_boot_us", r->origin / 1000);
	json__u64(j, "origin_wall_ms", view_realtime(d, r->origin) / 1000000);
	json_user_stacks(j, d);
	json__obj(j, "window");
	json__i64(j, "start", rel_us(r, d->win.start));
	json__i64(j, "end", rel_us(r, d->win.end));
	json__i64(j, "watermark", rel_us(r, d->win.watermark));
	if (d->win.first_event)
		json__i64(j, "first_event", rel_us(r, d->win.first_event));
	json__bool(j, "complete", d->win.watermark >= d->win.end);
	json__end_obj(j);
	json__obj(j, "range");
	json__i64(j, "from", rel_us(r, r->lo));
	json__i64(j, "to", rel_us(r, r->hi));
	json__end_obj(j);
	json__obj(j, "filter");
	json__arr(j, "pids");
	for (uint32_t i = 0; i < r->flt->npids; i++)
		json__u64(j, NULL, r->flt->pids[i]);
	json__end_arr(j);
	if (r->flt->has_from) {
		snprintf(buf, sizeof(buf), "%g", r->flt->from);
		json__str(j, "from", buf);
	}
	if (r->flt->has_to) {
		snprintf(buf, sizeof(buf), "%g", r->flt->to);
		json__str(j, "to", buf);
	}
	json__end_obj(j);
}

/* "procs": one array per shown incarnation, in the order of "proc_fields". */
static void json_procs(struct json *j, const struct report *r)
{
	static const char *const fields[] = { "pid", "ppid", "start", "comm", "exe", "cmdline",
					      "state", "rss", "flags", "exit", "status", "samples",
					      "cgroup", "user_stacks", "whole", "later", "no_table" };
	const struct fr_dump *d = r->d;
	char st[64];

	json__arr(j, "proc_fields");
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		json__str(j, NULL, fields[i]);
	json__end_arr(j);
	json__arr(j, "procs");
	for (uint32_t i = 0; i < d->nproc; i++) {
		const struct fr_dump_proc *p = &d->proc[i];
		bool exited = p->flags & FR_DPROC_EXITED;

		if (!r->pmap[i])
			continue;
		st[0] = (char)p->state;
		st[1] = 0;
		json__arr(j, NULL);
		json__u64(j, NULL, p->pid);
		json__u64(j, NULL, p->ppid);
		json__u64(j, NULL, p->start / 1000);
		json__str(j, NULL, dump__str(d, p->comm));
		json__str(j, NULL, dump__str(d, p->exe));
		json__str(j, NULL, dump__str(d, p->cmdline));
		json__str(j, NULL, st);
		json__u64(j, NULL, p->rss);
		json__u64(j, NULL, p->flags);
		if (exited)
			json__i64(j, NULL, rel_us(r, p->exit_ts));
		else
			json__str(j, NULL, "");
		json__str(j, NULL, exited ? view_status(p->exit_code, st, sizeof(st)) : "");
		json__u64(j, NULL, r->psamples[i]);
		json__str(j, NULL, dump__str(d, p->cgroup));
		json__u64(j, NULL, r->pstacks[i].user);
		json__u64(j, NULL, r->pstacks[i].whole);
		json__u64(j, NULL, r->pstacks[i].later);
		json__u64(j, NULL, r->pstacks[i].no_table);
		json__end_arr(j);
	}
	json__end_arr(j);
}

/*
 * "srcs": per frame name, up to FR_REPORT_SRCS distinct source positions
 * of its frames (DWARF lines, LINE), each a list of [function, file,
 * line] innermost first: the functions inlined there, then the frame's
 * own; "srcs_more": per name, how many more distinct positions it has.
 */
static void json_sources(struct json *j, const struct report *r)
{
	const struct fr_dump *d = r->d;

	json__arr(j, "srcs");
	for (uint32_t i = 0; i < r->nnames; i++) {
		const uint32_t *slot = &r->srcs[(size_t)i * FR_REPORT_SRCS];

		json__arr(j, NULL);
		for (uint32_t k = 0; k < FR_REPORT_SRCS && slot[k]; k++) {
			const struct fr_dump_frame *fr = &d->frame[slot[k] - 1];

			json__arr(j, NULL);
			for (uint32_t l = 0; l < fr->nlines; l++) {
				const struct fr_dump_line *ln = &d->line[fr->line + l];

				json__arr(j, NULL);
				json__str(j, NULL, dump__str(d, ln->func));
				json__str(j, NULL, dump__str(d, ln->file));
				json__u64(j, NULL, ln->line);
				json__end_arr(j);
			}
			json__end_arr(j);
		}
		json__end_arr(j);
	}
	json__end_arr(j);
	json__arr(j, "srcs_more");
	for (uint32_t i = 0; i < r->nnames; i++)
		json__u64(j, NULL, r->srcs_more[i]);
	json__end_arr(j);
}

/*
 * "names" and "kinds" (0 kernel, 1 user) of the frames, their "srcs",
 * "stacks" as name indexes root first, and "samples": [process, stack or
 * -1, count] per distinct (process, stack) in the range.
 */
static void json_stacks(struct json *j, const struct report *r)
{
	const struct fr_dump *d = r->d;
	char buf[600];

	json__arr(j, "names");
	for (uint32_t i = 0; i < r->nnames; i++)
		json__str(j, NULL, view_frame(d, r->names[i], buf, sizeof(buf)));
	json__end_arr(j);
	json__arr(j, "kinds");
	for (uint32_t i = 0; i < r->nnames; i++)
		json__u64(j, NULL, d->frame[r->names[i]].kind);
	json__end_arr(j);
	json_sources(j, r);
	json__arr(j, "stacks");
	for (uint32_t i = 0; i < r->nstack_out; i++) {
		const struct fr_dump_stack *s = &d->stack[r->stacks_out[i]];

		json__arr(j, NULL);
		for (uint32_t k = s->kn + s->un; k-- > 0;)
			json__u64(j, NULL, r->fname[s->frames[k]] - 1);
		json__end_arr(j);
	}
	json__end_arr(j);
	json__arr(j, "samples");
	for (uint32_t i = 0; i < r->nkeys;) {
		uint32_t n = i + 1, s = r->keys[i].stack;

		while (n < r->nkeys && !cmp_key(&r->keys[i], &r->keys[n]))
			n++;
		json__arr(j, NULL);
		json__u64(j, NULL, r->pmap[r->keys[i].proc] - 1);
		json__i64(j, NULL, s ? (int64_t)r->smap[s - 1] - 1 : -1);
		json__u64(j, NULL, n - i);
		json__end_arr(j);
		i = n;
	}
	json__end_arr(j);
}

/*
 * "offcpu": the off-CPU flame graph's data: "samples" [process, stack or
 * -1, kind, ns] per distinct (process, stack, kind) of the offcpu events
 * in the range, weighted by the time blocked; "events" and "ns" in all.
 */
static void json_offcpu(struct json *j, const struct report *r)
{
	uint64_t total = 0;

	json__obj(j, "offcpu");
	json__arr(j, "samples");
	for (uint32_t i = 0; i < r->nokeys;) {
		uint32_t n = i, s = r->okeys[i].stack;
		uint64_t ns = 0;

		while (n < r->nokeys && !cmp_key(&r->okeys[i], &r->okeys[n]))
			ns += r->okeys[n++].ns;
		json__arr(j, NULL);
		json__u64(j, NULL, r->pmap[r->okeys[i].proc] - 1);
		json__i64(j, NULL, s ? (int64_t)r->smap[s - 1] - 1 : -1);
		json__u64(j, NULL, r->okeys[i].kind);
		json__u64(j, NULL, ns);
		json__end_arr(j);
		total += ns;
		i = n;
	}
	json__end_arr(j);
	json__u64(j, "events", r->nokeys);
	json__u64(j, "ns", total);
	json__end_obj(j);
}

static int cmp_seg_longest(const void *a, const void *b)
{
	const struct stall_seg *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* Per kind, @what of @sp's kinds as one array @key. */
static void json_kind_array(struct json *j, const char *key, const struct stallview_proc *sp,
			    uint64_t (*what)(const struct stallview_kind *))
{
	json__arr(j, key);
	for (unsigned k = 0; k < FR_DSTALL_NKINDS; k++)
		json__u64(j, NULL, what(&sp->k[k]));
	json__end_arr(j);
}

static uint64_t kind_recorded(const struct stallview_kind *k)
{
	return k->n;
}

static uint64_t kind_short(const struct stallview_kind *k)
{
	return k->n_short + k->n_lost;
}

static uint64_t kind_short_ns(const struct stallview_kind *k)
{
	return k->ns_short + k->ns_lost;
}

/*
 * One stall lane: process @sp's times per kind ("ns", "count": recorded
 * and summed; "recorded"; "short", "short_ns": summed only, or lost by
 * the ring) and its recorded stalls in the range, "segs": [begin, end,
 * kind, tid], at most FR_REPORT_STALL_SEGS, the longest ("omitted": the
 * rest). @segs has room for every event.
 */
static void json_stall_lane(struct json *j, const struct report *r, const struct stallview_proc *sp,
			    struct stall_seg *segs)
{
	const struct fr_dump *d = r->d;
	uint32_t n = 0, keep;
	unsigned kind = 0;
	uint64_t begin = 0;

	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];

		if (e->proc == sp->proc && stall_of(e, &kind, &begin) &&
		    filter__match(r->flt, d, e))
			segs[n++] = (struct stall_seg){ e->ts - begin, i };
	}
	keep = n < FR_REPORT_STALL_SEGS ? n : FR_REPORT_STALL_SEGS;
	if (keep < n)
		qsort(segs, n, sizeof(*segs), cmp_seg_longest);
	json__obj(j, NULL);
	json__u64(j, "proc", r->pmap[sp->proc] - 1);
	json__u64(j, "total_ns", sp->total_ns);
	json_kind_array(j, "ns", sp, stallview__time);
	json_kind_array(j, "count", sp, stallview__count);
	json_kind_array(j, "recorded", sp, kind_recorded);
	json_kind_array(j, "short", sp, kind_short);
	json_kind_array(j, "short_ns", sp, kind_short_ns);
	json__arr(j, "segs");
	for (uint32_t k = 0; k < keep; k++) {
		const struct fr_dump_event *e = &d->ev[segs[k].ev];

		stall_of(e, &kind, &begin);
		json__arr(j, NULL);
		json__i64(j, NULL, rel_us(r, begin));
		json__i64(j, NULL, rel_us(r, e->ts));
		json__u64(j, NULL, kind);
		json__u64(j, NULL, e->tid);
		json__end_arr(j);
	}
	json__end_arr(j);
	json__u64(j, "omitted", n - keep);
	json__end_obj(j);
}

/* "psi" of "stalls": the window's PSI memory stall time beside the recorded memory stalls. */
static void json_stall_psi(struct json *j, const struct report *r, const struct stallview *sv)
{
	json__obj(j, "psi");
	json__bool(j, "present", sv->has_psi);
	if (sv->has_psi) {
		json__i64(j, "from", rel_us(r, sv->psi_from));
		json__i64(j, "to", rel_us(r, sv->psi_to));
		json__u64(j, "some_us", sv->psi_some_us);
		json__u64(j, "full_us", sv->psi_full_us);
		json__u64(j, "recorded_memory_stall_ns", sv->mem_ns);
	}
	json__str(j, "note", stallview__psi_note());
	json__end_obj(j);
}

/*
 * "stalls": whether the dump records stalls ("recorded"), the kinds'
 * names and every stall's count and time per kind ("kinds",
 * "kind_count", "kind_ns"), a lane for each of the FR_REPORT_STALL_LANES
 * shown processes that stalled longest (stallview's ranking), and "psi".
 * Returns 0 or -ENOMEM (before writing anything).
 */
static int json_stalls(struct json *j, const struct report *r)
{
	struct stall_seg *segs = calloc(r->d->nev + 1, sizeof(*segs));
	uint32_t nlanes = 0;
	struct stallview sv;

	if (!segs || stallview__init(&sv, r->d, r->flt)) {
		free(segs);
		return -ENOMEM;
	}
	json__obj(j, "stalls");
	json__bool(j, "recorded", sv.recorded);
	json__arr(j, "kinds");
	for (unsigned k = 0; k < FR_DSTALL_NKINDS; k++)
		json__str(j, NULL, dump__stall_kind_name(k));
	json__end_arr(j);
	for (int pass = 0; pass < 2; pass++) {
		json__arr(j, pass ? "kind_ns" : "kind_count");
		for (unsigned k = 0; k < FR_DSTALL_NKINDS; k++)
			json__u64(j, NULL, pass ? sv.kind_ns[k] : sv.kind_n[k]);
		json__end_arr(j);
	}
	json__arr(j, "lanes");
	for (uint32_t i = 0; i < sv.nprocs && nlanes < FR_REPORT_STALL_LANES; i++) {
		if (!r->pmap[sv.procs[i].proc])
			continue;
		json_stall_lane(j, r, &sv.procs[i], segs);
		nlanes++;
	}
	json__end_arr(j);
	json_stall_psi(j, r, &sv);
	json__end_obj(j);
	stallview__fini(&sv);
	free(segs);
	return 0;
}

/* Indexes of the @n processes with most samples, most first. */
static uint32_t top_procs(const struct report *r, uint32_t *out, uint32_t n)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < r->d->nproc; i++) {
		uint32_t j;

		if (!r->psamples[i])
			continue;
		if (k < n)
			k++;
		else if (r->psamples[i] <= r->psamples[out[k - 1]])
			continue;
		for (j = k - 1; j > 0 && r->psamples[out[j - 1]] < r->psamples[i]; j--)
			out[j] = out[j - 1];
		out[j] = i;
	}
	return k;
}

/*
 * "timeline": the range cut into "bins"; samples per bin for the top
 * processes ("series": process and counts) and for all others ("other").
 * Returns 0 or -ENOMEM.
 */
static int json_timeline(struct json *j, const struct report *r)
{
	const struct fr_dump *d = r->d;
	uint64_t span = r->hi - r->lo ? r->hi - r->lo : 1;
	uint32_t top[FR_REPORT_TOP], ntop, nbins;
	uint32_t *counts;

	nbins = (uint32_t)(span / FR_REPORT_BIN_NS);
	nbins = nbins < FR_REPORT_BINS_MIN ? FR_REPORT_BINS_MIN : nbins;
	nbins = nbins > FR_REPORT_BINS_MAX ? FR_REPORT_BINS_MAX : nbins;
	ntop = top_procs(r, top, FR_REPORT_TOP);
	counts = calloc((size_t)(ntop + 1) * nbins, sizeof(*counts));
	if (!counts)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];
		uint64_t b;
		uint32_t s = 0;

		if (e->type != FR_DEV_SAMPLE || !r->pmap[e->proc] || !filter__match(r->flt, d, e))
			continue;
		while (s < ntop && top[s] != e->proc)
			s++;
		b = e->ts > r->lo ? (e->ts - r->lo) * nbins / span : 0;
		counts[(size_t)s * nbins + (b < nbins ? b : nbins - 1)]++;
	}
	json__obj(j, "timeline");
	json__u64(j, "bins", nbins);
	json__arr(j, "series");
	for (uint32_t s = 0; s <= ntop; s++) {
		json__obj(j, NULL);
		json__i64(j, "proc", s < ntop ? (int64_t)r->pmap[top[s]] - 1 : -1);
		json__arr(j, "counts");
		for (uint32_t b = 0; b < nbins; b++)
			json__u64(j, NULL, counts[(size_t)s * nbins + b]);
		json__end_arr(j);
		json__end_obj(j);
	}
	json__end_arr(j);
	json__end_obj(j);
	free(counts);
	return 0;
}

/*
 * "pressure": one object per (resource, source) series in the range, in
 * order of first appearance: times, some avg10 and (or null) full avg10
 * in 1/100 %, and the stall added over the range in microseconds.
 */
static void json_pressure(struct json *j, const struct report *r)
{
	const struct fr_dump *d = r->d;

	json__arr(j, "pressure");
	for (uint32_t s = 0; s < r->nseries; s++) {
		const struct series *sr = &r->series[s];
		uint64_t first = 0, last = 0;
		bool seen = false, full = false;

		json__obj(j, NULL);
		json__str(j, "resource", view_resource(sr->resource));
		json__str(j, "source", *dump__str(d, sr->source) ? dump__str(d, sr->source) : "system");
		for (int pass = 0; pass < 4; pass++) {
			json__arr(j, pass == 0 ? "t" : pass == 1 ? "some" : pass == 2 ? "full" : "total");
			for (uint32_t i = 0; i < d->nev; i++) {
				const struct fr_dump_event *e = &d->ev[i];

				if (e->type != FR_DEV_PRESSURE || e->psi.resource != sr->resource ||
				    e->comm != sr->source || !filter__match(&r->tflt, d, e))
					continue;
				if (pass == 0)
					json__i64(j, NULL, rel_us(r, e->ts));
				else if (pass == 1)
					json__u64(j, NULL, e->psi.some_avg10);
				else if (pass == 2)
					json__i64(j, NULL, e->psi.has_full ? (int64_t)e->psi.full_avg10 : -1);
				else
					json__u64(j, NULL, e->psi.some_total);
				full |= e->psi.has_full;
				if (!seen)
					first = e->psi.some_total;
				last = e->psi.some_total;
				seen = true;
			}
			json__end_arr(j);
		}
		json__bool(j, "has_full", full);
		json__u64(j, "stall_us", last > first ? last - first : 0);
		json__end_obj(j);
	}
	json__end_arr(j);
}

/*
 * "marks": exits [t, process, status], OOM kills [t, process, rss] in the
 * range; "triggers": every trigger of the dump, the OOM victim as a JSON
 * process index (-1: not shown) with its pid, start and comm.
 */
static void json_marks(struct json *j, const struct report *r)
{
	static const int types[] = { FR_DEV_EXIT, FR_DEV_OOM };
	const struct fr_dump *d = r->d;
	char buf[128];

	json__obj(j, "marks");
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		int type = types[t];

		json__arr(j, dump__event_type_name(type));
		for (uint32_t i = 0; i < d->nev; i++) {
			const struct fr_dump_event *e = &d->ev[i];

			if (e->type != type || !r->pmap[e->proc] || !filter__match(r->flt, d, e))
				continue;
			json__arr(j, NULL);
			json__i64(j, NULL, rel_us(r, e->ts));
			json__u64(j, NULL, r->pmap[e->proc] - 1);
			if (type == FR_DEV_EXIT)
				json__str(j, NULL, view_status(e->exit.code, buf, sizeof(buf)));
			else
				json__u64(j, NULL, e->oom.rss_anon + e->oom.rss_file + e->oom.rss_shmem);
			json__end_arr(j);
		}
		json__end_arr(j);
	}
	json__end_obj(j);
	json__arr(j, "triggers");
	for (uint32_t i = 0; i < d->ntrig; i++) {
		const struct fr_dump_trigger *t = &d->trig[i];

		json__obj(j, NULL);
		json__str(j, "name", t->name);
		json__str(j, "type", t->type);
		json__str(j, "reason", t->reason);
		json__str(j, "detail", t->detail);
		json__i64(j, "t", rel_us(r, t->ts));
		json__str(j, "time", view_time(d, t->ts, buf, sizeof(buf)));
		if (t->victim) {
			const struct fr_dump_proc *p = &d->proc[t->victim - 1];

			json__obj(j, "victim");
			json__i64(j, "proc", (int64_t)r->pmap[t->victim - 1] - 1);
			json__u64(j, "pid", p->pid);
			json__u64(j, "start", p->start / 1000);
			json__str(j, "comm", dump__str(d, p->comm));
			json__end_obj(j);
		}
		json__end_obj(j);
	}
	json__end_arr(j);
}

/* "losses": every LOSS counter; "loss" false for bookkeeping counters. */
struct curve_out {
	struct json *j;
	const struct report *r;
	int pass;		/* 0: times, 1: values */
};

static void curve_point(void *ctx, uint64_t ts, uint64_t rss)
{
	struct curve_out *c = ctx;

	if (ts < c->r->lo || ts > c->r->hi)
		return;
	if (c->pass)
		json__u64(c->j, NULL, rss);
	else
		json__i64(c->j, NULL, rel_us(c->r, ts));
}

/*
 * "memory": the RSS curves of the FR_REPORT_MEM_TOP shown processes that
 * rose most ("curves": process, times, bytes), their summaries
 * ("growers"), the system's MemAvailable ("sys"), every memory cgroup's
 * usage and limit ("cgroups", limit 0: none) and the OOM kills ("ooms":
 * victim, invoker, cgroup, usage, limit), all in the range.
 */
static int json_memory(struct json *j, const struct report *r)
{
	const struct fr_dump *d = r->d;
	struct memview mv;
	uint32_t n = 0;

	if (memview__init(&mv, d))
		return -ENOMEM;
	json__obj(j, "memory");
	json__u64(j, "rss_entries", mv.rss_events);
	json__arr(j, "curves");
	for (uint32_t k = 0; k < mv.nprocs && n < FR_REPORT_MEM_TOP; k++) {
		const struct memview_proc *mp = &mv.procs[k];

		if (!r->pmap[mp->proc])
			continue;
		n++;
		json__obj(j, NULL);
		json__u64(j, "proc", r->pmap[mp->proc] - 1);
		for (int pass = 0; pass < 2; pass++) {
			struct curve_out c = { j, r, pass };

			json__arr(j, pass ? "v" : "t");
			memview__curve(d, mp->proc, curve_point, &c);
			json__end_arr(j);
		}
		json__end_obj(j);
	}
	json__end_arr(j);
	json__arr(j, "growers");
	for (uint32_t k = 0; k < mv.nprocs && k < FR_REPORT_GROWERS; k++) {
		const struct memview_proc *mp = &mv.procs[k];

		if (!r->pmap[mp->proc])
			continue;
		json__obj(j, NULL);
		json__u64(j, "proc", r->pmap[mp->proc] - 1);
		json__u64(j, "min", mp->min);
		json__u64(j, "peak", mp->peak);
		json__u64(j, "end", mp->end);
		json__u64(j, "rise", mp->rise);
		json__f64(j, "rate", mp->rise_to > mp->rise_from ?
			  (double)mp->rise / ((mp->rise_to - mp->rise_from) / 1e9) : 0);
		json__i64(j, "from", mp->rise ? rel_us(r, mp->rise_from) : 0);
		json__i64(j, "to", mp->rise ? rel_us(r, mp->rise_to) : 0);
		json__end_obj(j);
	}
	json__end_arr(j);
	json__obj(j, "sys");
	for (int pass = 0; pass < 2; pass++) {
		json__arr(j, pass ? "avail" : "t");
		for (uint32_t k = 0; k < mv.nsys; k++) {
			const struct fr_dump_event *e = &d->ev[mv.sys[k]];

			if (e->ts < r->lo || e->ts > r->hi)
				continue;
			if (pass)
				json__u64(j, NULL, e->msys.v[FR_MSYS_MEM_AVAILABLE]);
			else
				json__i64(j, NULL, rel_us(r, e->ts));
		}
		json__end_arr(j);
	}
	json__end_obj(j);
	json__arr(j, "cgroups");
	for (uint32_t k = 0; k < mv.ncgroups; k++) {
		const struct memview_cgroup *c = &mv.cgroups[k];

		json__obj(j, NULL);
		json__str(j, "path", dump__str(d, c->path));
		json__u64(j, "limit", c->unlimited ? 0 : c->limit);
		json__bool(j, "near_limit", memview__near_limit(c));
		for (int pass = 0; pass < 2; pass++) {
			json__arr(j, pass ? "usage" : "t");
			for (uint32_t i = 0; i < d->nev; i++) {
				const struct fr_dump_event *e = &d->ev[i];

				if (e->type != FR_DEV_MEMCG || e->comm != c->path || e->ts < r->lo || e->ts > r->hi)
					continue;
				if (pass)
					json__u64(j, NULL, e->mcg.usage);
				else
					json__i64(j, NULL, rel_us(r, e->ts));
			}
			json__end_arr(j);
		}
		json__end_obj(j);
	}
	json__end_arr(j);
	json__arr(j, "ooms");
	for (uint32_t k = 0; k < mv.nooms; k++) {
		const struct fr_dump_event *e = &d->ev[mv.ooms[k]];

		json__obj(j, NULL);
		json__i64(j, "t", rel_us(r, e->ts));
		json__i64(j, "victim", r->pmap[e->proc] ? (int64_t)r->pmap[e->proc] - 1 : -1);
		json__u64(j, "victim_pid", d->proc[e->proc].pid);
		json__i64(j, "invoker", e->oom.invoker && r->pmap[e->oom.invoker - 1] ?
			  (int64_t)r->pmap[e->oom.invoker - 1] - 1 : -1);
		json__str(j, "memcg", e->oom.memcg ? dump__str(d, e->oom.memcg) : "");
		json__u64(j, "usage", e->oom.memcg_usage);
		json__u64(j, "limit", e->oom.memcg_limit);
		json__end_obj(j);
	}
	json__end_arr(j);
	json__end_obj(j);
	memview__fini(&mv);
	return 0;
}

static void json_losses(struct json *j, const struct fr_dump *d)
{
	json__arr(j, "losses");
	for (uint32_t i = 0; i < d->loss.n; i++) {
		const struct fr_kv *kv = &d->loss.kv[i];
		uint64_t total = kv->type == FR_KV_UINT ? kv->u : 0;

		json__obj(j, NULL);
		json__str(j, "key", kv->key);
		if (kv->type == FR_KV_UARRAY) {
			json__arr(j, "cpus");
			for (uint32_t c = 0; c < kv->n; c++) {
				json__u64(j, NULL, kv->arr[c]);
				total += kv->arr[c];
			}
			json__end_arr(j);
		}
		if (kv->type == FR_KV_SINT)
			json__i64(j, "total", kv->i);
		else if (kv->type == FR_KV_STR)
			json__str(j, "total", kv->s);
		else
			json__u64(j, "total", total);
		json__bool(j, "loss", view_is_loss(kv->key));
		json__end_obj(j);
	}
	json__end_arr(j);
}

/* The whole data object. 0 or -ENOMEM. */
static int report__json(FILE *f, struct report *r, const char *path)
{
	uint64_t by_type[FR_DEV_NTYPES] = {0};
	struct json j;
	int err;

	for (uint32_t i = 0; i < r->d->nev; i++) {
		const struct fr_dump_event *e = &r->d->ev[i];

		if (e->type < FR_DEV_NTYPES && (!dump__event_has_proc(e->type) ? filter__match(&r->tflt, r->d, e) :
				    r->pmap[e->proc] && filter__match(r->flt, r->d, e)))
			by_type[e->type]++;
	}
	json__init(&j, f);
	json__obj(&j, NULL);
	json_header(&j, r, path);
	json__obj(&j, "counts");
	json__u64(&j, "events", r->d->nev);
	json__u64(&j, "processes", r->d->nproc);
	json__u64(&j, "stacks", r->d->nstack);
	evtype__json_counts(&j, by_type);
	json__end_obj(&j);
	json_procs(&j, r);
	json_stacks(&j, r);
	json_offcpu(&j, r);
	err = json_timeline(&j, r);
	if (!err)
		err = json_stalls(&j, r);
	json_pressure(&j, r);
	json_marks(&j, r);
	if (!err)
		err = json_memory(&j, r);
	json_losses(&j, r->d);
	json__end_obj(&j);
	return err;
}

/* A FILE that writes to another with every '<' as \u003c (JSON-safe). */
static ssize_t escape_write(void *cookie, const char *buf, size_t len)
{
	FILE *out = cookie;
	size_t start = 0;

	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '<')
			continue;
		if (fwrite(buf + start, 1, i - start, out) != i - start || fputs("\\u003c", out) < 0)
			return -1;
		start = i + 1;
	}
	if (fwrite(buf + start, 1, len - start, out) != len - start)
		return -1;
	return (ssize_t)len;
}

/*
 * report__write() - the page: the template with its marker replaced by
 * the data. 0, -ENOMEM, or -EIO when @out failed (errno kept in it).
 */
static int report__write(FILE *out, struct report *r, const char *path)
{
	static const cookie_io_functions_t io = { .write = escape_write };
	const char *tpl = (const char *)fr_report_html, *mark;
	FILE *esc;
	int err;

	mark = memmem(tpl, FR_REPORT_HTML_LEN, FR_REPORT_MARK, strlen(FR_REPORT_MARK));
	if (!mark)
		return -EINVAL;
	if (fwrite(tpl, 1, mark - tpl, out) != (size_t)(mark - tpl))
		return -EIO;
	esc = fopencookie(out, "w", io);
	if (!esc)
		return -errno;
	err = report__json(esc, r, path);
	if (fclose(esc) && !err)
		err = -EIO;
	if (err)
		return err;
	mark += strlen(FR_REPORT_MARK);
	if (fwrite(mark, 1, tpl + FR_REPORT_HTML_LEN - mark, out) !=
	    (size_t)(tpl + FR_REPORT_HTML_LEN - mark))
		return -EIO;
	return fflush(out) || ferror(out) ? -EIO : 0;
}

/* Write the report of @d to @output ("-" or NULL: stdout). Returns an exit code. */
static int report_to(const struct fr_dump *d, const struct filter *flt, const char *dump_path,
		     const char *output)
{
	struct report r = { .d = d, .flt = flt };
	bool to_stdout = !output || !strcmp(output, "-"), regular = false;
	FILE *out = stdout;
	struct stat st;
	int err, fd;

	err = report__prepare(&r);
	if (err) {
		fprintf(stderr, "flightrec: failed to prepare the report: %s\n", strerror(-err));
		report__fini(&r);
		return FR_EXIT_FAIL;
	}
	if (!to_stdout) {
		fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		out = fd < 0 ? NULL : fdopen(fd, "w");
		if (!out) {
			fprintf(stderr, "flightrec: failed to open '%s': %s\n", output, strerror(errno));
			if (fd >= 0)
				close(fd);
			report__fini(&r);
			return FR_EXIT_FAIL;
		}
		regular = !fstat(fd, &st) && S_ISREG(st.st_mode);
	}
	errno = 0;
	err = report__write(out, &r, dump_path);
	if (err == -EIO)
		err = errno ? -errno : -EIO;
	if (!to_stdout && fclose(out) && !err)
		err = errno ? -errno : -EIO;
	if (err) {
		fprintf(stderr, "flightrec: failed to write '%s': %s\n", to_stdout ? "<stdout>" : output,
			strerror(-err));
		if (regular)
			unlink(output);	/* a partial page is no page; never a device */
	}
	report__fini(&r);
	return err ? FR_EXIT_FAIL : FR_EXIT_OK;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		FR_FILTER_WHO_OPTIONS,
		FR_FILTER_WHEN_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	const char *output = NULL;
	struct filter flt = {};
	struct fr_dump d;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return cli_usage_error("report", "--output needs a file name");
			output = optarg;
			break;
		FR_FILTER_CASES:
			if (filter__option(&flt, "report", c, optarg))
				return FR_EXIT_USAGE;
			break;
		default:
			return cli_common_option("report", c, argv, usage);
		}
	}
	if (cli_dump_arg("report", argc, argv, optind))
		return FR_EXIT_USAGE;
	if (flt.has_from && flt.has_to && flt.from > flt.to)
		return cli_usage_error("report", "--from %g is after --to %g", flt.from, flt.to);
	if (output && same_file(output, argv[optind]))
		return cli_usage_error("report", "--output '%s' is the dump itself", output);
	rc = cli_load(argv[optind], &d);
	if (rc)
		return rc;
	rc = report_to(&d, &flt, argv[optind], output);
	dump__free(&d);
	return rc;
}
