// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * export_chrome.c - a dump as Trace Event Format JSON, which
 * ui.perfetto.dev and chrome://tracing open:
 *
 *   {"traceEvents":[...], "displayTimeUnit":"ms", "metadata":{...}}
 *
 * A PID is not an identity: each process incarnation (pid, start) gets a
 * track of its own, whose "pid" is synthetic (process index + 1) and whose
 * name carries the real pid and start. Events:
 *
 *   M  process_name, process_sort_index, thread_name (ts 0)
 *   i  CPU samples (scope t, name: the leaf frame, args.stack leaf first),
 *      exit, fork, exec and OOM kill (scope t, on the thread's track)
 *   X  stalls (cat "stall": "direct reclaim", "memcg reclaim", ...) and
 *      blocks off the CPU (cat "offcpu": "blocked", "sleep") as complete
 *      slices [begin, end] on the thread's track; a slice that began
 *      before the range starts at the range (args.begin_ns keeps the
 *      truth). The sums of short stalls (stallsum) are not exported.
 *   C  PSI history, one series per (resource, source) on a "pressure"
 *      track: some_avg10, full_avg10 (%), and the stall of the last
 *      interval from the total= deltas (ms of stall per second)
 *   i  each trigger, scope g (a global marker)
 *
 * "ts" is in microseconds (with ns decimals) from the exported range's
 * start; metadata holds that start as CLOCK_BOOTTIME and wall-clock time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "evtype.h"
#include "export.h"
#include "json.h"
#include "view.h"

struct series {
	uint8_t resource;
	uint32_t source;		/* string index */
	const struct fr_dump_event *last;
};

struct chrome {
	const struct fr_dump *d;
	const struct filter *flt;
	struct export_range r;
	FILE *f;
	uint32_t psi_pid;	/* the synthetic process of the pressure counters */
	bool first;		/* no event written yet */
	struct series *series;	/* pressure series seen so far */
	uint32_t nseries;
	uint64_t (*rss)[FR_DRSS_NMEMBERS];	/* per process: the ledger's values so far */
};

/* The synthetic Trace Event "pid" of process index @proc. */
static uint32_t track_pid(uint32_t proc)
{
	return proc + 1;
}

/* Write @ns (relative, may be negative) as microseconds with 3 decimals. */
static void put_us(FILE *f, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	fprintf(f, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", a / 1000, (unsigned)(a % 1000));
}

/*
 * Open one event object with the keys every event has (ph, name, pid,
 * tid, ts, and s for instants); the caller adds keys with add_*() and
 * closes it with end_event().
 */
static void begin_event(struct chrome *c, const char *ph, const char *scope, const char *name,
			uint32_t pid, uint32_t tid, uint64_t ts)
{
	FILE *f = c->f;

	fputs(c->first ? "\n" : ",\n", f);
	c->first = false;
	fprintf(f, "{\"ph\":\"%s\",", ph);
	if (scope)
		fprintf(f, "\"s\":\"%s\",", scope);
	fputs("\"name\":", f);
	json_escape(f, name);
	fprintf(f, ",\"pid\":%u,\"tid\":%u,\"ts\":", pid, tid);
	put_us(f, (int64_t)(ts - c->r.start));
}

static void add_cat(struct chrome *c, const char *cat)
{
	fputs(",\"cat\":", c->f);
	json_escape(c->f, cat);
}

/* Start the "args" object; returns a writer positioned inside it. */
static void begin_args(struct chrome *c, struct json *j)
{
	fputs(",\"args\":", c->f);
	json__init(j, c->f);
	json__obj(j, NULL);
}

static void end_event(struct chrome *c)
{
	fputc('}', c->f);
}

/* Process name as Perfetto shows it: "comm [pid 1234, start 12.345 s]". */
static void process_label(const struct fr_dump *d, uint32_t proc, char *buf, size_t len)
{
	const struct fr_dump_proc *p = &d->proc[proc];

	snprintf(buf, len, "%s [pid %u, start %.3f s]", *dump__str(d, p->comm) ?
		 dump__str(d, p->comm) : "?", p->pid, p->start / 1e9);
}

struct thread_key {
	uint32_t proc;
	uint32_t tid;
	uint32_t comm;	/* string index of the name at the latest event */
	uint32_t order;
};

static int cmp_thread(const void *a, const void *b)
{
	const struct thread_key *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

struct proc_rank {
	uint32_t proc;
	uint32_t pid;
	uint64_t start;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct proc_rank *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->proc < y->proc ? -1 : x->proc > y->proc;
}

/* The name THRD gives thread @tid of process @proc, or NULL. */
static const char *thrd_name(const struct fr_dump *d, uint32_t proc, uint32_t tid)
{
	for (uint32_t i = 0; i < d->nthread; i++)
		if (d->thread[i].proc == proc && d->thread[i].tid == tid && d->thread[i].name)
			return dump__str(d, d->thread[i].name);
	return NULL;
}

static bool exported(const struct chrome *c, const struct fr_dump_event *e)
{
	return e->type >= FR_DEV_SAMPLE && e->type < FR_DEV_NTYPES && e->type != FR_DEV_STALLSUM &&
	       filter__match(c->flt, c->d, e);
}

/*
 * The M events: a name and sort index for every incarnation with exported
 * events (sorted by pid, then start, so a reused PID's incarnations sit
 * side by side), and a name for each of their threads. 0 or -ENOMEM.
 */
static int write_metadata(struct chrome *c)
{
	const struct fr_dump *d = c->d;
	struct thread_key *th = calloc(d->nev + 1, sizeof(*th));
	struct proc_rank *rank = calloc(d->nproc + 1, sizeof(*rank));
	bool *used = calloc(d->nproc + 1, sizeof(*used));
	uint32_t nth = 0, nrank = 0;
	char label[600];
	struct json j;
	int err = 0;

	if (!th || !rank || !used) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];

		if (!dump__event_has_proc(e->type) || e->type == FR_DEV_RSS || !exported(c, e))
			continue;
		used[e->proc] = true;
		th[nth++] = (struct thread_key){ e->proc, e->tid, e->comm, i };
	}
	for (uint32_t p = 0; p < d->nproc; p++)
		if (used[p])
			rank[nrank++] = (struct proc_rank){ p, d->proc[p].pid, d->proc[p].start };
	qsort(rank, nrank, sizeof(*rank), cmp_rank);

	begin_event(c, "M", NULL, "process_name", c->psi_pid, 0, c->r.start);
	begin_args(c, &j);
	json__str(&j, "name", "pressure (PSI) and triggers");
	json__end_obj(&j);
	end_event(c);
	begin_event(c, "M", NULL, "process_sort_index", c->psi_pid, 0, c->r.start);
	begin_args(c, &j);
	json__u64(&j, "sort_index", 0);
	json__end_obj(&j);
	end_event(c);

	for (uint32_t k = 0; k < nrank; k++) {
		const struct fr_dump_proc *p = &d->proc[rank[k].proc];

		process_label(d, rank[k].proc, label, sizeof(label));
		begin_event(c, "M", NULL, "process_name", track_pid(rank[k].proc), 0, c->r.start);
		begin_args(c, &j);
		json__str(&j, "name", label);
		json__u64(&j, "pid", p->pid);
		json__u64(&j, "start_ns", p->start);
		json__str(&j, "comm", dump__str(d, p->comm));
		if (p->exe)
			json__str(&j, "exe", dump__str(d, p->exe));
		if (p->flags & FR_DPROC_EXITED)
			json__str(&j, "exit", view_status(p->exit_code, label, sizeof(label)));
		json__end_obj(&j);
		end_event(c);
		begin_event(c, "M", NULL, "process_sort_index", track_pid(rank[k].proc), 0, c->r.start);
		begin_args(c, &j);
		json__u64(&j, "sort_index", k + 1);
		json__end_obj(&j);
		end_event(c);
	}

	/* One thread_name per (incarnation, tid): THRD's name, else the latest comm. */
	qsort(th, nth, sizeof(*th), cmp_thread);
	for (uint32_t i = 0; i < nth;) {
		uint32_t k = i;
		const char *name;

		while (k + 1 < nth && th[k + 1].proc == th[i].proc && th[k + 1].tid == th[i].tid)
			k++;
		name = thrd_name(d, th[i].proc, th[i].tid);
		if (!name || !*name)
			name = dump__str(d, th[k].comm);
		begin_event(c, "M", NULL, "thread_name", track_pid(th[i].proc), th[i].tid, c->r.start);
		begin_args(c, &j);
		json__str(&j, "name", *name ? name : dump__str(d, d->proc[th[i].proc].comm));
		json__end_obj(&j);
		end_event(c);
		i = k + 1;
	}
out:
	free(used);
	free(rank);
	free(th);
	return err;
}

static void write_sample(struct chrome *c, const struct fr_dump_event *e)
{
	const struct fr_dump *d = c->d;
	const struct fr_dump_stack *s = e->stack ? &d->stack[e->stack - 1] : NULL;
	char name[FR_VIEW_FRAME_MAX];
	struct json j;

	if (s && s->kn + s->un)
		view_frame(d, s->frames[0], name, sizeof(name));
	else
		snprintf(name, sizeof(name), "[no_stack]");
	begin_event(c, "i", "t", name, track_pid(e->proc), e->tid, e->ts);
	add_cat(c, "cpu");
	begin_args(c, &j);
	json__arr(&j, "stack");
	for (uint32_t k = 0; s && k < s->kn + s->un; k++)
		json__str(&j, NULL, view_frame(d, s->frames[k], name, sizeof(name)));
	json__end_arr(&j);
	json__u64(&j, "kernel_frames", s ? s->kn : 0);
	json__u64(&j, "cpu", e->cpu);
	json__str(&j, "thread", export__thread_name(d, e));
	json__end_obj(&j);
	end_event(c);
}

/* exit, fork, exec, oom, where the RSS grew: an instant on the thread's track. */
static void write_lifecycle(struct chrome *c, const struct fr_dump_event *e)
{
	const struct fr_dump *d = c->d;
	char name[600], status[64];
	struct json j;

	snprintf(name, sizeof(name), "%s", dump__event_type_name(e->type));
	switch ((enum fr_dump_event_type)e->type) {
	case FR_DEV_EXIT:
		snprintf(name, sizeof(name), "exit: %s", view_status(e->exit.code, status, sizeof(status)));
		break;
	case FR_DEV_FORK:
		snprintf(name, sizeof(name), "fork: pid %u", d->proc[e->child].pid);
		break;
	case FR_DEV_EXEC:
		snprintf(name, sizeof(name), "exec: %s", dump__str(d, e->filename));
		break;
	case FR_DEV_OOMADJ:
		snprintf(name, sizeof(name), "oom_score_adj: %d", e->oomadj.value);
		break;
	case FR_DEV_OOM:
		snprintf(name, sizeof(name), "oom kill: pid %u", d->proc[e->proc].pid);
		break;
	case FR_DEV_RSS_SITE:
		snprintf(name, sizeof(name), "rss grew: %s +%" PRIu64 " KiB",
			 dump__rss_member_name(e->site.member), e->site.grown >> 10);
		break;
	case FR_DEV_SAMPLE:
	case FR_DEV_PRESSURE:
	case FR_DEV_RSS:
	case FR_DEV_MEMSYS:
	case FR_DEV_MEMCG:
	case FR_DEV_STALL:
	case FR_DEV_OFFCPU:
	case FR_DEV_STALLSUM:
	case FR_DEV_NTYPES:
		break;	/* not an instant: written as slices or counters, or not at all */
	}
	begin_event(c, "i", "t", name, track_pid(e->proc), e->tid, e->ts);
	add_cat(c, "process");
	begin_args(c, &j);
	json__str(&j, "type", dump__event_type_name(e->type));
	json__u64(&j, "pid", d->proc[e->proc].pid);
	json__u64(&j, "start_ns", d->proc[e->proc].start);
	json__str(&j, "comm", dump__str(d, e->comm));
	view_event_json(&j, d, e);
	if (e->type == FR_DEV_FORK)
		json__u64(&j, "child_track", track_pid(e->child));
	json__end_obj(&j);
	end_event(c);
}

/* The slice name of stall kind @kind: what stalled, in a word or two. */
static const char *stall_slice_name(unsigned kind)
{
	static const char *const names[FR_DSTALL_NKINDS] = {
		[FR_DSTALL_RECLAIM] = "direct reclaim",
		[FR_DSTALL_MEMCG] = "memcg reclaim",
		[FR_DSTALL_COMPACT] = "compaction",
		[FR_DSTALL_THROTTLE] = "reclaim throttle",
		[FR_DSTALL_BLOCKED] = "blocked",
		[FR_DSTALL_SLEEP] = "sleep",
	};

	return kind < FR_DSTALL_NKINDS ? names[kind] : "stall";
}

/*
 * write_stall() - a stall or a block off the CPU as a complete slice on
 * its thread's track, from its begin (at the earliest the range's start)
 * to its end, with the event's fields in args.
 */
static void write_stall(struct chrome *c, const struct fr_dump_event *e)
{
	const struct fr_dump *d = c->d;
	bool off = e->type == FR_DEV_OFFCPU;
	uint64_t begin = off ? e->off.begin : e->stall.begin;
	struct json j;

	if (begin < c->r.start)
		begin = c->r.start;
	if (begin > e->ts)
		begin = e->ts;
	begin_event(c, "X", NULL, stall_slice_name(off ? e->off.kind : e->stall.kind),
		    track_pid(e->proc), e->tid, begin);
	fputs(",\"dur\":", c->f);
	put_us(c->f, (int64_t)(e->ts - begin));
	add_cat(c, off ? "offcpu" : "stall");
	begin_args(c, &j);
	json__str(&j, "type", dump__event_type_name(e->type));
	json__u64(&j, "pid", d->proc[e->proc].pid);
	json__u64(&j, "start_ns", d->proc[e->proc].start);
	json__str(&j, "comm", dump__str(d, e->comm));
	json__str(&j, "thread", export__thread_name(d, e));
	view_event_json(&j, d, e);
	json__end_obj(&j);
	end_event(c);
}

/*
 * The previous exported reading of @e's series (resource, source), or
 * NULL; @e becomes the series' latest. -ENOMEM in *err when out of memory.
 */
static const struct fr_dump_event *previous_reading(struct chrome *c, const struct fr_dump_event *e,
						   int *err)
{
	const struct fr_dump_event *prev;
	struct series *n;

	for (uint32_t k = 0; k < c->nseries; k++) {
		if (c->series[k].resource != e->psi.resource || c->series[k].source != e->comm)
			continue;
		prev = c->series[k].last;
		c->series[k].last = e;
		return prev;
	}
	n = realloc(c->series, (c->nseries + 1) * sizeof(*n));
	if (!n) {
		*err = -ENOMEM;
		return NULL;
	}
	c->series = n;
	c->series[c->nseries++] = (struct series){ e->psi.resource, e->comm, e };
	return NULL;
}

/* Stall time per second of the interval between two totals (us), in ms. */
static double stall_ms_per_s(uint64_t total, uint64_t prev_total, uint64_t ts, uint64_t prev_ts)
{
	if (ts <= prev_ts || total < prev_total)
		return 0;
	return (double)(total - prev_total) / 1e3 / ((double)(ts - prev_ts) / 1e9);
}

static void write_pressure(struct chrome *c, const struct fr_dump_event *e,
			   const struct fr_dump_event *prev)
{
	const struct fr_dump *d = c->d;
	const char *src = *dump__str(d, e->comm) ? dump__str(d, e->comm) : "system";
	char name[600];
	struct json j;

	snprintf(name, sizeof(name), "%s pressure %s", view_resource(e->psi.resource), src);
	begin_event(c, "C", NULL, name, c->psi_pid, 0, e->ts);
	add_cat(c, "pressure");
	begin_args(c, &j);
	json__f64(&j, "some_avg10", e->psi.some_avg10 / 100.0);
	if (e->psi.has_full)
		json__f64(&j, "full_avg10", e->psi.full_avg10 / 100.0);
	if (prev) {
		json__f64(&j, "some_stall_ms_per_s", stall_ms_per_s(e->psi.some_total, prev->psi.some_total,
							      e->ts, prev->ts));
		if (e->psi.has_full && prev->psi.has_full)
			json__f64(&j, "full_stall_ms_per_s", stall_ms_per_s(e->psi.full_total,
								      prev->psi.full_total, e->ts, prev->ts));
	}
	json__end_obj(&j);
	end_event(c);
}

/*
 * write_rss() - the RSS ledger as a counter track on its process: every
 * member's value so far (a member not logged yet in the window is 0).
 */
static void write_rss(struct chrome *c, const struct fr_dump_event *e)
{
	uint64_t *v = c->rss[e->proc];
	struct json j;

	v[e->rss.member] = e->rss.value;
	/* Reached before the range (a max-age entry): the range's start. */
	begin_event(c, "C", NULL, "RSS", track_pid(e->proc), 0, (e->rss.changed > c->r.start ? e->rss.changed : c->r.start));
	add_cat(c, "memory");
	begin_args(c, &j);
	for (unsigned m = 0; m < FR_DRSS_NMEMBERS; m++)
		json__u64(&j, dump__rss_member_name(m), v[m]);
	json__end_obj(&j);
	end_event(c);
}

/* write_memory() - the system's memory and each memory cgroup's, as counter tracks. */
static void write_memory(struct chrome *c, const struct fr_dump_event *e)
{
	const struct fr_dump *d = c->d;
	char name[600];
	struct json j;

	if (e->type == FR_DEV_MEMSYS)
		snprintf(name, sizeof(name), "memory system");
	else
		snprintf(name, sizeof(name), "memcg %s", dump__str(d, e->comm));
	begin_event(c, "C", NULL, name, c->psi_pid, 0, e->ts);
	add_cat(c, "memory");
	begin_args(c, &j);
	if (e->type == FR_DEV_MEMSYS) {
		json__u64(&j, "MemAvailable", e->msys.v[FR_MSYS_MEM_AVAILABLE]);
		json__u64(&j, "MemFree", e->msys.v[FR_MSYS_MEM_FREE]);
		json__u64(&j, "SwapFree", e->msys.v[FR_MSYS_SWAP_FREE]);
	} else {
		json__u64(&j, "usage", e->mcg.usage);
		if (!(e->mcg.flags & FR_DMCG_UNLIMITED))
			json__u64(&j, "limit", e->mcg.limit);
	}
	json__end_obj(&j);
	end_event(c);
}

static void write_trigger(struct chrome *c, const struct fr_dump_trigger *t)
{
	const struct fr_dump *d = c->d;
	char name[600];
	struct json j;

	snprintf(name, sizeof(name), "trigger %s (%s)", t->name ? t->name : "?", t->type ? t->type : "?");
	begin_event(c, "i", "g", name, c->psi_pid, 0, t->ts);
	add_cat(c, "trigger");
	begin_args(c, &j);
	json__str(&j, "name", t->name);
	json__str(&j, "type", t->type);
	json__str(&j, "reason", t->reason);
	json__str(&j, "detail", t->detail);
	json__u64(&j, "ts_boottime_ns", t->ts);
	if (t->victim && t->victim <= d->nproc) {
		const struct fr_dump_proc *v = &d->proc[t->victim - 1];

		json__obj(&j, "victim");
		json__u64(&j, "pid", v->pid);
		json__u64(&j, "start_ns", v->start);
		json__str(&j, "comm", dump__str(d, v->comm));
		json__u64(&j, "rss", v->rss);
		json__u64(&j, "track", track_pid(t->victim - 1));
		json__end_obj(&j);
	}
	json__end_obj(&j);
	end_event(c);
}

static void write_meta(struct chrome *c)
{
	const struct fr_dump *d = c->d;
	char when[64];
	struct json j;

	json__init(&j, c->f);
	json__obj(&j, NULL);
	json__str(&j, "source", "flightrec");
	json__str(&j, "flightrec_version", FR_VERSION);
	json__str(&j, "host", dump__meta_str(d, "host"));
	json__str(&j, "kernel", dump__meta_str(d, "kernel"));
	json__str(&j, "boot_id", dump__meta_str(d, "boot_id"));
	json__u64(&j, "ncpus", dump__meta_u64(d, "ncpus"));
	json__u64(&j, "frequency", dump__meta_u64(d, "frequency"));
	json__str(&j, "clock", "ts: microseconds since window_start_boottime_ns (CLOCK_BOOTTIME)");
	json__u64(&j, "window_start_boottime_ns", c->r.start);
	json__u64(&j, "window_end_boottime_ns", c->r.end);
	json__u64(&j, "window_start_realtime_ns", c->r.wall);
	json__str(&j, "window_start_utc", view_time(d, c->r.start, when, sizeof(when)));
	json__u64(&j, "dump_window_start_boottime_ns", d->win.start);
	json__u64(&j, "dump_window_end_boottime_ns", d->win.end);
	json__u64(&j, "clock_boottime_ns", dump__meta_u64(d, "clock_boottime_ns"));
	json__u64(&j, "clock_realtime_ns", dump__meta_u64(d, "clock_realtime_ns"));
	json__u64(&j, "pressure_track_pid", c->psi_pid);
	json__end_obj(&j);
}

/*
 * export__chrome() - write @d as Trace Event Format JSON to @f, keeping the
 * events that pass @flt. Returns 0, -ENOMEM, or -EIO when @f failed.
 */
int export__chrome(const struct fr_dump *d, const struct filter *flt, FILE *f)
{
	struct chrome c = { .d = d, .flt = flt, .f = f, .psi_pid = d->nproc + 1, .first = true };
	int err;

	export__range(d, flt, &c.r);
	c.rss = calloc(d->nproc + 1, sizeof(*c.rss));
	if (!c.rss)
		return -ENOMEM;
	fputs("{\"traceEvents\":[", f);
	err = write_metadata(&c);
	if (err) {
		free(c.rss);
		return err;
	}
	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];

		if (!exported(&c, e))
			continue;
		if (e->type == FR_DEV_SAMPLE)
			write_sample(&c, e);
		else if (e->type == FR_DEV_PRESSURE)
			write_pressure(&c, e, previous_reading(&c, e, &err));
		else if (e->type == FR_DEV_RSS)
			write_rss(&c, e);
		else if (e->type == FR_DEV_MEMSYS || e->type == FR_DEV_MEMCG)
			write_memory(&c, e);
		else if (e->type == FR_DEV_STALL || e->type == FR_DEV_OFFCPU)
			write_stall(&c, e);
		else
			write_lifecycle(&c, e);
	}
	free(c.series);
	free(c.rss);
	if (err)
		return err;
	for (uint32_t i = 0; i < d->ntrig; i++)
		if (export__trigger_match(d, flt, &d->trig[i]))
			write_trigger(&c, &d->trig[i]);
	fputs("\n],\n\"displayTimeUnit\":\"ms\",\n\"metadata\":", f);
	write_meta(&c);
	fputs("}\n", f);
	return ferror(f) ? -EIO : 0;
}
