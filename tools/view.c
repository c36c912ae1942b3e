// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * view.c - shared presentation helpers. See view.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "text.h"
#include "util.h"
#include "view.h"

/* view__init() - count samples per process and per stack. 0 or -ENOMEM. */
bool view_uend_stopped(unsigned uend)
{
	return uend == FR_DUEND_NO_INFO || uend == FR_DUEND_READ || uend == FR_DUEND_BAD_PC ||
	       uend == FR_DUEND_INVALID || uend == FR_DUEND_DEPTH;
}

/* The binary (index + 1, 0: none) of sample @e's outermost user frame. */
static uint32_t stop_bin_of(const struct fr_dump *d, const struct fr_dump_event *e)
{
	const struct fr_dump_stack *st;
	uint32_t f;

	if (!e->stack || e->stack > d->nstack)
		return 0;
	st = &d->stack[e->stack - 1];
	if (!st->un)
		return 0;
	f = st->frames[st->kn + st->un - 1];
	return f < d->nframe && d->frame[f].bin <= d->nbin ? d->frame[f].bin : 0;
}

uint64_t view_user_stacks(const struct view *v)
{
	uint64_t n = 0;

	for (unsigned k = FR_DUEND_OUTERMOST; k < FR_DUEND_NR; k++)
		n += v->uend[k];
	return n;
}

/*
 * The indexes of the @n largest of @count[0..@len) that are not 0, most
 * first (the earlier of equals first), into @out. Returns how many.
 */
static uint32_t top_counts(const uint64_t *count, uint32_t len, uint32_t *out, uint32_t n)
{
	uint32_t got = 0;

	for (uint32_t i = 0; i < len; i++) {
		uint32_t at;

		if (!count[i])
			continue;
		/* Insertion into the top @n, most first. */
		for (at = got; at > 0 && count[out[at - 1]] < count[i]; at--)
			if (at < n)
				out[at] = out[at - 1];
		if (at < n) {
			out[at] = i;
			got += got < n;
		}
	}
	return got;
}

uint32_t view_stop_top(const struct view *v, uint32_t *out, uint32_t n)
{
	return top_counts(v->stop_bin, v->d->nbin + 1, out, n);
}

uint32_t view_fp_top(const struct view *v, uint32_t *out, uint32_t n)
{
	return top_counts(v->proc_fp, v->d->nproc, out, n);
}

int64_t view_rows_after(const struct view *v, uint32_t p)
{
	if (p >= v->d->nproc || !v->proc_rows_ts[p])
		return -1;
	return v->proc_rows_ts[p] > v->proc_since[p] ?
	       (int64_t)(v->proc_rows_ts[p] - v->proc_since[p]) : 0;
}

void view_ustacks__add(struct view_ustacks *us, const struct fr_dump_event *e)
{
	unsigned uend = dump__uend(e);

	us->user += uend != FR_DUEND_NONE;
	us->whole += uend == FR_DUEND_OUTERMOST;
	us->later += !!(e->unwound & FR_DUNWOUND_LATER);
	us->no_table += uend == FR_DUEND_NO_TABLE;
}

/* Sample @e of process @p: walked by frame pointers for want of a table, or with rows? */
static void view_walk(struct view *v, const struct fr_dump_event *e)
{
	unsigned uend = dump__uend(e);

	view_ustacks__add(&v->proc_us[e->proc], e);
	if (uend == FR_DUEND_NO_TABLE) {
		v->fp_procs += !v->proc_fp[e->proc]++;
	} else if (uend != FR_DUEND_NONE && e->ts >= v->proc_since[e->proc] &&
		   (!v->proc_rows_ts[e->proc] || e->ts < v->proc_rows_ts[e->proc])) {
		v->proc_rows_ts[e->proc] = e->ts;
	}
}

int view__init(struct view *v, const struct fr_dump *d)
{
	memset(v, 0, sizeof(*v));
	v->d = d;
	v->proc_samples = calloc(d->nproc + 1, sizeof(uint64_t));
	v->stack_samples = calloc(d->nstack + 1, sizeof(uint64_t));
	v->stop_bin = calloc(d->nbin + 1, sizeof(uint64_t));
	v->proc_fp = calloc(d->nproc + 1, sizeof(uint64_t));
	v->proc_rows_ts = calloc(d->nproc + 1, sizeof(uint64_t));
	v->proc_since = calloc(d->nproc + 1, sizeof(uint64_t));
	v->proc_us = calloc(d->nproc + 1, sizeof(*v->proc_us));
	if (!v->proc_samples || !v->stack_samples || !v->stop_bin || !v->proc_fp ||
	    !v->proc_rows_ts || !v->proc_since || !v->proc_us) {
		view__fini(v);
		return -ENOMEM;
	}
	for (uint32_t p = 0; p < d->nproc; p++)
		v->proc_since[p] = d->proc[p].start;
	for (uint32_t i = 0; i < d->nev; i++)
		if (d->ev[i].type == FR_DEV_EXEC && d->ev[i].proc < d->nproc &&
		    d->ev[i].ts > v->proc_since[d->ev[i].proc])
			v->proc_since[d->ev[i].proc] = d->ev[i].ts;
	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];

		if (e->type < FR_DEV_NTYPES)
			v->by_type[e->type]++;
		if (e->type != FR_DEV_SAMPLE)
			continue;
		v->samples++;
		v->proc_samples[e->proc]++;
		if (e->stack)
			v->stack_samples[e->stack - 1]++;
		v->uend[dump__uend(e)]++;
		if (view_uend_stopped(dump__uend(e)))
			v->stop_bin[stop_bin_of(d, e)]++;
		if (e->proc < d->nproc)
			view_walk(v, e);
	}
	return 0;
}

void view__fini(struct view *v)
{
	free(v->proc_samples);
	free(v->stack_samples);
	free(v->stop_bin);
	free(v->proc_fp);
	free(v->proc_rows_ts);
	free(v->proc_since);
	free(v->proc_us);
	v->proc_samples = v->stack_samples = v->stop_bin = NULL;
	v->proc_fp = v->proc_rows_ts = v->proc_since = NULL;
	v->proc_us = NULL;
}

/* view_text() - fr_text_escape(): @s as text safe for a terminal. */
const char *view_text(const char *s, char *buf, size_t len)
{
	return fr_text_escape(s, buf, len);
}

/* view_str() - view_text() of string @idx of @d. */
const char *view_str(const struct fr_dump *d, uint32_t idx, char *buf, size_t len)
{
	return view_text(dump__str(d, idx), buf, len);
}

/*
 * view_frame() - "symbol" when resolved; else, for a user frame in a known
 * file, "libname.so.5+0x1bc9" (file name, offset in the file); else the
 * address in hex.
 */
const char *view_frame(const struct fr_dump *d, uint32_t frame, char *buf, size_t len)
{
	const struct fr_dump_frame *f = &d->frame[frame];

	if (f->sym) {
		snprintf(buf, len, "%s", dump__str(d, f->sym));
	} else if (f->kind == FR_FRAME_USER && f->bin && f->bin <= d->nbin) {
		/* The file and the offset in it: what a debug file resolves later. */
		const char *path = dump__str(d, d->bin[f->bin - 1].path);
		const char *base = strrchr(path, '/');

		snprintf(buf, len, "%s+0x%" PRIx64, base ? base + 1 : path, f->file_off);
	} else {
		snprintf(buf, len, "0x%" PRIx64, f->addr);
	}
	return buf;
}

/* view_frame_text() - view_frame() as safe text (view_text()). */
const char *view_frame_text(const struct fr_dump *d, uint32_t frame, char *buf, size_t len)
{
	char raw[FR_VIEW_FRAME_MAX];

	return view_text(view_frame(d, frame, raw, sizeof(raw)), buf, len);
}

/* view_folded_frame() - like view_frame_text, kernel frames marked "_[k]". */
const char *view_folded_frame(const struct fr_dump *d, uint32_t frame, char *buf, size_t len)
{
	const struct fr_dump_frame *f = &d->frame[frame];
	char name[FR_VIEW_TEXT_MAX];

	view_frame_text(d, frame, name, sizeof(name));
	/* ';' separates frames in the folded format. */
	for (char *p = name; *p; p++)
		if (*p == ';' || *p == ' ')
			*p = *p == ';' ? ':' : '_';
	snprintf(buf, len, "%s%s", name, f->kind == FR_FRAME_KERNEL ? "_[k]" : "");
	return buf;
}

/*
 * view_event_json() - the fields of process event @e that its type adds
 * (exit, fork, exec, oom, rss, rss_site, ...), as JSON members of the object open in @j: the
 * one spelling of each key, with the unit in its name where it has one
 * (_ns), for `events --json` and the Chrome export's args alike. Samples
 * and pressure readings have views of their own.
 */
void view_event_json(struct json *j, const struct fr_dump *d, const struct fr_dump_event *e)
{
	char buf[64];

	/* No default: a type added to enum fr_dump_event_type must be shown. */
	switch ((enum fr_dump_event_type)e->type) {
	case FR_DEV_EXIT:
		json__i64(j, "code", e->exit.code);
		json__str(j, "status", view_status(e->exit.code, buf, sizeof(buf)));
		json__u64(j, "rss_anon", e->exit.rss_anon);
		json__u64(j, "rss_file", e->exit.rss_file);
		json__u64(j, "rss_shmem", e->exit.rss_shmem);
		json__u64(j, "rss_peak", e->exit.rss_peak);
		json__u64(j, "utime_ns", e->exit.utime);
		json__u64(j, "stime_ns", e->exit.stime);
		json__u64(j, "min_flt", e->exit.min_flt);
		json__u64(j, "maj_flt", e->exit.maj_flt);
		break;
	case FR_DEV_FORK:
		json__u64(j, "child_pid", d->proc[e->child].pid);
		json__u64(j, "child_start_ns", d->proc[e->child].start);
		break;
	case FR_DEV_EXEC:
		json__str(j, "filename", dump__str(d, e->filename));
		break;
	case FR_DEV_OOM:
		json__u64(j, "total_vm", e->oom.total_vm);
		json__u64(j, "rss_anon", e->oom.rss_anon);
		json__u64(j, "rss_file", e->oom.rss_file);
		json__u64(j, "rss_shmem", e->oom.rss_shmem);
		json__u64(j, "pgtables", e->oom.pgtables);
		json__i64(j, "oom_score_adj", e->oom.oom_score_adj);
		json__u64(j, "uid", e->oom.uid);
		json__u64(j, "swapents", e->oom.swapents);
		if (e->oom.invoker) {
			const struct fr_dump_proc *ip = &d->proc[e->oom.invoker - 1];

			json__u64(j, "invoker_pid", ip->pid);
			json__u64(j, "invoker_start_ns", ip->start);
			json__u64(j, "invoker_tid", e->oom.invoker_tid);
			json__str(j, "invoker_comm", dump__str(d, ip->comm));
		}
		view_stack_json(j, d, "invoker_stack", e->stack);
		json__str(j, "memcg", e->oom.memcg ? dump__str(d, e->oom.memcg) : "");
		json__bool(j, "global", !e->oom.memcg && !e->oom.memcg_limit);
		json__u64(j, "memcg_usage", e->oom.memcg_usage);
		json__u64(j, "memcg_limit", e->oom.memcg_limit);
		break;
	case FR_DEV_RSS:
		json__str(j, "member", dump__rss_member_name(e->rss.member));
		json__u64(j, "value", e->rss.value);
		json__u64(j, "changed_ns", e->rss.changed);
		json__str(j, "why", dump__rss_why_name(e->rss.why));
		json__u64(j, "by_pid", e->rss.by);
		break;
	case FR_DEV_OOMADJ:
		json__i64(j, "oom_score_adj", e->oomadj.value);
		json__u64(j, "by_pid", e->oomadj.by);
		break;
	case FR_DEV_RSS_SITE:
		json__str(j, "member", dump__rss_member_name(e->site.member));
		json__u64(j, "grown", e->site.grown);
		view_stack_json(j, d, "stack", e->stack);
		break;
	case FR_DEV_STALL:
		json__str(j, "kind", dump__stall_kind_name(e->stall.kind));
		json__u64(j, "begin_ns", e->stall.begin);
		json__u64(j, "duration_ns", e->ts - e->stall.begin);
		if (e->stall.kind == FR_DSTALL_RECLAIM || e->stall.kind == FR_DSTALL_MEMCG)
			json__u64(j, "nr_reclaimed", e->stall.result);
		else if (e->stall.kind == FR_DSTALL_COMPACT)
			json__u64(j, "compact_result", e->stall.result);
		if (e->stall.order >= 0)
			json__i64(j, "order", e->stall.order);
		if (e->stall.gfp) {
			snprintf(buf, sizeof(buf), "0x%x", e->stall.gfp);
			json__str(j, "gfp", buf);
		}
		if (e->stall.kind == FR_DSTALL_THROTTLE)
			json__u64(j, "reason", e->stall.reason);
		if (e->stall.kind == FR_DSTALL_MEMCG) {
			json__str(j, "memcg", e->stall.memcg ? dump__str(d, e->stall.memcg) : "");
			json__u64(j, "memcg_id", e->stall.memcg_id);
		}
		view_stack_json(j, d, "stack", e->stack);
		json__u64(j, "kernel_frames", e->stack ? d->stack[e->stack - 1].kn : 0);
		json__str(j, "user_stack_end", dump__uend_name(dump__uend(e)));
		if (e->unwound & FR_DUNWOUND_LATER)
			json__bool(j, "walked_later", true);
		break;
	case FR_DEV_OFFCPU:
		json__str(j, "kind", dump__stall_kind_name(e->off.kind));
		json__u64(j, "begin_ns", e->off.begin);
		json__u64(j, "duration_ns", e->ts - e->off.begin);
		json__u64(j, "state", e->off.state);
		view_stack_json(j, d, "stack", e->stack);
		json__u64(j, "kernel_frames", e->stack ? d->stack[e->stack - 1].kn : 0);
		json__str(j, "user_stack_end", dump__uend_name(dump__uend(e)));
		if (e->unwound & FR_DUNWOUND_LATER)
			json__bool(j, "walked_later", true);
		break;
	case FR_DEV_STALLSUM:
		json__str(j, "kind", dump__stall_kind_name(e->ssum.kind));
		json__u64(j, "short_count", e->ssum.n_short);
		json__u64(j, "short_ns", e->ssum.ns_short);
		json__u64(j, "lost_count", e->ssum.n_lost);
		json__u64(j, "lost_ns", e->ssum.ns_lost);
		json__u64(j, "all_count", e->ssum.n_all);
		json__u64(j, "all_ns", e->ssum.ns_all);
		break;
	case FR_DEV_SAMPLE:
	case FR_DEV_PRESSURE:
	case FR_DEV_MEMSYS:
	case FR_DEV_MEMCG:
	case FR_DEV_NTYPES:
		break;	/* views of their own (see above) */
	}
}

/* view_stack_json() - member @key: stack @stack (index + 1; 0: none) as frame strings. */
void view_stack_json(struct json *j, const struct fr_dump *d, const char *key, uint32_t stack)
{
	char buf[FR_VIEW_FRAME_MAX];

	json__arr(j, key);
	if (stack && stack <= d->nstack) {
		const struct fr_dump_stack *s = &d->stack[stack - 1];

		for (uint32_t k = 0; k < s->kn + s->un; k++)
			json__str(j, NULL, view_frame(d, s->frames[k], buf, sizeof(buf)));
	}
	json__end_arr(j);
}

/*
 * view_reading_json() - the members of a reading without a process
 * (memory, memcg): its source and values.
 */
void view_reading_json(struct json *j, const struct fr_dump *d, const struct fr_dump_event *e)
{
	if (e->type == FR_DEV_MEMSYS) {
		for (unsigned f = 0; f < FR_MSYS_NFIELDS; f++)
			json__u64(j, dump__memsys_field_name(f), e->msys.v[f]);
		return;
	}
	if (e->type != FR_DEV_MEMCG)
		return;
	json__str(j, "cgroup", dump__str(d, e->comm));
	json__str(j, "hierarchy", e->mcg.flags & FR_DMCG_V1 ? "v1" : "v2");
	json__u64(j, "usage", e->mcg.usage);
	json__bool(j, "unlimited", e->mcg.flags & FR_DMCG_UNLIMITED);
	json__u64(j, "limit", e->mcg.flags & FR_DMCG_UNLIMITED ? 0 : e->mcg.limit);
	json__u64(j, "anon", e->mcg.anon);
	json__u64(j, "file", e->mcg.file);
	json__u64(j, "events_high", e->mcg.ev_high);
	json__u64(j, "events_max", e->mcg.ev_max);
	json__u64(j, "events_oom", e->mcg.ev_oom);
	json__u64(j, "events_oom_kill", e->mcg.ev_oom_kill);
}

/*
 * view_is_loss() - whether LOSS key @key counts something lost, rather
 * than bookkeeping (FORMAT.md §5.3 gives each key's kind).
 */
bool view_is_loss(const char *key)
{
	/* How stacks ended, and bogus frames dropped: `show` reports them as completeness. */
	return strcmp(key, "window_evicted_time") && strcmp(key, "drain_busy_passes") &&
	       strcmp(key, "dump_user_frames_unresolved") && strcmp(key, "dump_user_frames_bogus") &&
	       strncmp(key, "user_stack_end_", 15) && strncmp(key, "unwind_", 7);
}

/* view_realtime() - a trace-clock time as CLOCK_REALTIME, from META's pair. */
uint64_t view_realtime(const struct fr_dump *d, uint64_t boot_ns)
{
	uint64_t b = dump__meta_u64(d, "clock_boottime_ns");
	uint64_t r = dump__meta_u64(d, "clock_realtime_ns");

	return r + (boot_ns - b);
}

/* view_time() - "2026-11-29 09:10:13.488123 UTC". */
const char *view_time(const struct fr_dump *d, uint64_t boot_ns, char *buf, size_t len)
{
	uint64_t rt = view_realtime(d, boot_ns);
	time_t sec = rt / 1000000000ULL;
	char date[64];
	struct tm tm;

	gmtime_r(&sec, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06u UTC", date, (unsigned)((rt % 1000000000ULL) / 1000));
	return buf;
}

/* view_status() - a wait status as "exit 3" or "killed by SIGKILL". */
const char *view_status(int32_t code, char *buf, size_t len)
{
	int sig = code & 0x7f;

	if (!sig) {
		snprintf(buf, len, "exit %d", (code >> 8) & 0xff);
	} else {
		const char *name = sigabbrev_np(sig);

		snprintf(buf, len, "killed by SIG%s%s", name ? name : "?",
			 code & 0x80 ? " (core dumped)" : "");
	}
	return buf;
}

const char *view_bytes(uint64_t b, char *buf, size_t len)
{
	if (b >= (1ULL << 30))
		snprintf(buf, len, "%.1f GiB", b / (double)(1ULL << 30));
	else if (b >= (1ULL << 20))
		snprintf(buf, len, "%.1f MiB", b / (double)(1ULL << 20));
	else if (b >= (1ULL << 10))
		snprintf(buf, len, "%.1f KiB", b / 1024.0);
	else
		snprintf(buf, len, "%" PRIu64 " B", b);
	return buf;
}

const char *view_resource(unsigned r)
{
	static const char *const names[] = { "cpu", "memory", "io" };

	return r < 3 ? names[r] : "?";
}

#define FR_SPARK_WIDTH	60

/*
 * view_sparklines() - one line per pressure series (resource, source) in
 * the window: "some avg10" as a sparkline over time, its peak, and the
 * stall time added over the window (from total=).
 */
void view_sparklines(const struct fr_dump *d, FILE *f)
{
	static const char *const bars[] = { " ", "\u2581", "\u2582", "\u2583", "\u2584",
					     "\u2585", "\u2586", "\u2587", "\u2588" };
	uint64_t t0 = d->win.start, span = d->win.end > d->win.start ? d->win.end - d->win.start : 1;
	bool any = false;
	char src[1024];

	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];
		uint32_t peak[FR_SPARK_WIDTH] = {0}, max = 0;
		uint64_t first_total = 0, last_total = 0;
		bool seen = false, dup = false;

		if (e->type != FR_DEV_PRESSURE)
			continue;
		for (uint32_t k = 0; k < i && !dup; k++)
			dup = d->ev[k].type == FR_DEV_PRESSURE && d->ev[k].psi.resource == e->psi.resource &&
			      d->ev[k].comm == e->comm;
		if (dup)
			continue;
		for (uint32_t k = i; k < d->nev; k++) {
			const struct fr_dump_event *x = &d->ev[k];
			uint64_t b;

			if (x->type != FR_DEV_PRESSURE || x->psi.resource != e->psi.resource ||
			    x->comm != e->comm)
				continue;
			b = x->ts > t0 ? (x->ts - t0) * FR_SPARK_WIDTH / span : 0;
			b = b < FR_SPARK_WIDTH ? b : FR_SPARK_WIDTH - 1;
			peak[b] = peak[b] > x->psi.some_avg10 ? peak[b] : x->psi.some_avg10;
			max = max > x->psi.some_avg10 ? max : x->psi.some_avg10;
			if (!seen)
				first_total = x->psi.some_total;
			last_total = x->psi.some_total;
			seen = true;
		}
		if (!any)
			fprintf(f, "pressure:  some avg10 across the window (peak; stall added):\n");
		any = true;
		fprintf(f, "  %-6s %-24.24s |", view_resource(e->psi.resource),
			*dump__str(d, e->comm) ? view_str(d, e->comm, src, sizeof(src)) : "system");
		for (int b = 0; b < FR_SPARK_WIDTH; b++)
			fputs(bars[max ? (peak[b] * 8 + max - 1) / max : 0], f);
		fprintf(f, "| peak %u.%02u%%, +%.3f s\n", max / 100, max % 100,
			(last_total - first_total) / 1e6);
	}
}

/*
 * view_no_table_json() - "no_table": the samples walked by frame pointers
 * for want of a table, the processes they came from, and the @n with the
 * most, each with how long after its exec its first walk with rows came
 * (-1: none did).
 */
void view_no_table_json(struct json *j, const struct view *v, uint32_t n)
{
	uint32_t top[16], nt = view_fp_top(v, top, FR_MIN(n, (uint32_t)FR_ARRAY_SIZE(top)));

	json__obj(j, "no_table");
	json__u64(j, "samples", v->uend[FR_DUEND_NO_TABLE]);
	json__u64(j, "processes", v->fp_procs);
	json__arr(j, "most");
	for (uint32_t i = 0; i < nt; i++) {
		const struct fr_dump_proc *p = &v->d->proc[top[i]];
		int64_t after = view_rows_after(v, top[i]);

		json__obj(j, NULL);
		json__u64(j, "pid", p->pid);
		json__u64(j, "start", p->start);
		json__str(j, "comm", dump__str(v->d, p->comm));
		json__u64(j, "samples", v->proc_samples[top[i]]);
		json__u64(j, "no_table", v->proc_fp[top[i]]);
		json__i64(j, "rows_after_ns", after);
		json__end_obj(j);
	}
	json__end_arr(j);
	json__end_obj(j);
}
