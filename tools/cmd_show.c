// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_show.c - "flightrec show": the summary of a dump.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "evtype.h"
#include "json.h"
#include "memview.h"
#include "stallview.h"
#include "view.h"

#define FR_TOP_DEFAULT	10
#define FR_SHOW_GROWERS	3	/* RSS growers in the memory section */
#define FR_SHOW_STALLERS	3	/* processes in the stalls section */
#define FR_STACK_SHOWN	6	/* frames shown per top stack in text */

#define FR_STOP_SHOWN	5	/* files listed where walks stopped short */
#define FR_FP_SHOWN	3	/* processes listed with samples walked without a table */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: flightrec show [--json] [--top N] DUMP\n"
		"\n"
		"Summarize a dump: trigger, window, event counts, losses, the\n"
		"processes with most samples and the most frequent stacks.\n"
		"\n"
		"  --json      print one JSON object instead of text\n"
		"  --top N     list N processes and stacks (default %d)\n"
		"  --help      show this help\n"
		"  --version   show the version\n", FR_TOP_DEFAULT);
}

/* Indexes of the @n largest of @counts[0..len), largest first. */
static uint32_t top(const uint64_t *counts, uint32_t len, uint32_t *out, uint32_t n)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < len; i++) {
		uint32_t j;

		if (!counts[i])
			continue;
		if (k < n)
			k++;
		else if (counts[i] <= counts[out[k - 1]])
			continue;
		for (j = k - 1; j > 0 && counts[out[j - 1]] < counts[i]; j--)
			out[j] = out[j - 1];
		out[j] = i;
	}
	return k;
}

static uint64_t loss_total(const struct fr_kv *kv)
{
	uint64_t t = 0;

	if (kv->type == FR_KV_UINT)
		return kv->u;
	if (kv->type == FR_KV_UARRAY)
		for (uint32_t i = 0; i < kv->n; i++)
			t += kv->arr[i];
	return t;
}

/* Losses, not bookkeeping: time-based eviction is the window working. */
static void text_losses(const struct fr_dump *d)
{
	bool any = false;

	printf("losses:    ");
	for (uint32_t i = 0; i < d->loss.n; i++) {
		const struct fr_kv *kv = &d->loss.kv[i];
		uint64_t t = loss_total(kv);

		if (!t || !view_is_loss(kv->key))
			continue;
		printf("%s%s %" PRIu64, any ? ", " : "", kv->key, t);
		if (kv->type == FR_KV_UARRAY) {
			printf(" (per CPU:");
			for (uint32_t c = 0; c < kv->n; c++)
				printf(" %" PRIu64, kv->arr[c]);
			printf(")");
		}
		any = true;
	}
	printf("%s\n", any ? "" : "none");
}

/*
 * Per process, how its stacks were walked: the processes with samples
 * walked by frame pointers because they had no unwind table yet, and how
 * long after their exec the first walk with rows came.
 */
static void text_no_table(const struct fr_dump *d, const struct view *v)
{
	uint32_t top[FR_FP_SHOWN], nt = view_fp_top(v, top, FR_FP_SHOWN);
	char comm[64];

	if (!nt)
		return;
	printf("           no table yet, frame pointers: %" PRIu64 " samples of %u processes;",
	       v->uend[FR_DUEND_NO_TABLE], v->fp_procs);
	for (uint32_t i = 0; i < nt; i++) {
		const struct fr_dump_proc *p = &d->proc[top[i]];
		int64_t after = view_rows_after(v, top[i]);

		printf("%s %s-%u (start %.6f) %" PRIu64 " of %" PRIu64 ", ", i ? "," : " most:",
		       view_str(d, p->comm, comm, sizeof(comm)), p->pid, p->start / 1e9,
		       v->proc_fp[top[i]], v->proc_samples[top[i]]);
		if (after < 0)
			printf("never with rows");
		else
			printf("rows %.1f ms after its %s", after / 1e6,
			       v->proc_since[top[i]] != p->start ? "exec" : "start");
	}
	printf("\n");
}

/* Samples of this dump whose user stack was walked on from a copy (LOSS, 1.5). */
static uint64_t walked_later(const struct fr_dump *d)
{
	const struct fr_kv *kv = kvlist__find(&d->loss, "unwind_walked_later");

	return kv && kv->type == FR_KV_UINT ? kv->u : 0;
}

/* How complete the user stacks are, and where walks stopped short. */
static void text_completeness(const struct fr_dump *d, const struct view *v)
{
	uint64_t n = view_user_stacks(v);
	uint32_t top[FR_STOP_SHOWN], nt;
	char name[512];

	if (!n) {
		printf("stacks:    no user stack ends recorded%s\n",
		       d->minor < 3 ? " (a dump before format 1.3)" : "");
		return;
	}
	printf("stacks:    %.1f%% of %" PRIu64 " user stacks reached the outermost frame",
	       100.0 * v->uend[FR_DUEND_OUTERMOST] / n, n);
	for (unsigned k = FR_DUEND_NO_INFO; k < FR_DUEND_NR; k++)
		if (v->uend[k])
			printf(", %s %" PRIu64, dump__uend_name(k), v->uend[k]);
	printf("\n");
	if (walked_later(d))
		printf("           walked on later from a copy of the stack, once a new file's rows "
		       "were built: %" PRIu64 " samples\n", walked_later(d));
	nt = view_stop_top(v, top, FR_STOP_SHOWN);
	if (nt) {
		printf("           stopped short in:");
		for (uint32_t i = 0; i < nt; i++) {
			const char *path = top[i] ? dump__str(d, d->bin[top[i] - 1].path) :
						    "[no file]";

			printf("%s %s (%" PRIu64 ")", i ? "," : "",
			       view_text(path, name, sizeof(name)), v->stop_bin[top[i]]);
		}
		printf("\n");
	}
	text_no_table(d, v);
}

static void text_stack(const struct fr_dump *d, uint32_t s)
{
	const struct fr_dump_stack *st = &d->stack[s];
	uint32_t n = st->kn + st->un;
	char buf[FR_VIEW_TEXT_MAX];

	for (uint32_t i = 0; i < n && i < FR_STACK_SHOWN; i++)
		printf("%s%s", i ? " <- " : "", view_frame_text(d, st->frames[i], buf, sizeof(buf)));
	if (n > FR_STACK_SHOWN)
		printf(" <- ... (%u frames)", n);
	printf("\n");
}

/* The process a stack was sampled in (first sample wins). */
static uint32_t stack_owner(const struct fr_dump *d, uint32_t s)
{
	for (uint32_t i = 0; i < d->nev; i++)
		if (d->ev[i].type == FR_DEV_SAMPLE && d->ev[i].stack == s + 1)
			return d->ev[i].proc;
	return 0;
}

/* The memory section: the top growers, cgroups at their limit, OOM kills, MemAvailable. */
static void text_memory(const struct fr_dump *d, const struct memview *mv)
{
	char b[3][32], comm[80], path[FR_VIEW_TEXT_MAX];
	uint32_t near = 0;

	if (!mv->nprocs && !mv->nsys && !mv->nooms)
		return;
	printf("memory:    %" PRIu64 " RSS ledger entries of %u processes", mv->rss_events, mv->nprocs);
	for (uint32_t k = 0; k < mv->ncgroups; k++)
		near += memview__near_limit(&mv->cgroups[k]);
	printf(", %u of %u memory cgroups at 90 %% of their limit or more\n", near, mv->ncgroups);
	for (uint32_t k = 0; k < mv->nprocs && k < FR_SHOW_GROWERS && mv->procs[k].rise; k++) {
		const struct memview_proc *mp = &mv->procs[k];
		const struct fr_dump_proc *p = &d->proc[mp->proc];

		printf("           grew: %s-%u (start %.6f) +%s to a peak of %s, %+.1f .. %+.1f s\n",
		       view_str(d, p->comm, comm, sizeof(comm)), p->pid, p->start / 1e9,
		       view_bytes(mp->rise, b[0], sizeof(b[0])), view_bytes(mp->peak, b[1], sizeof(b[1])),
		       ((double)mp->rise_from - (double)mv->trigger_ts) / 1e9,
		       ((double)mp->rise_to - (double)mv->trigger_ts) / 1e9);
	}
	for (uint32_t k = 0; k < mv->nooms; k++) {
		const struct fr_dump_event *e = &d->ev[mv->ooms[k]];

		printf("           OOM: killed %s-%u (rss %s)", view_str(d, d->proc[e->proc].comm, comm, sizeof(comm)),
		       d->proc[e->proc].pid,
		       view_bytes(e->oom.rss_anon + e->oom.rss_file + e->oom.rss_shmem, b[0], sizeof(b[0])));
		if (e->oom.invoker)
			printf(", invoked by %s-%u", view_str(d, d->proc[e->oom.invoker - 1].comm, comm, sizeof(comm)),
			       d->proc[e->oom.invoker - 1].pid);
		if (e->oom.memcg || e->oom.memcg_limit)
			printf(", cgroup %s at %s of %s\n",
			       e->oom.memcg ? view_str(d, e->oom.memcg, path, sizeof(path)) : "?",
			       view_bytes(e->oom.memcg_usage, b[1], sizeof(b[1])),
			       view_bytes(e->oom.memcg_limit, b[2], sizeof(b[2])));
		else
			printf(", global\n");
	}
	if (mv->nsys) {
		const struct fr_dump_event *a = &d->ev[mv->sys[0]], *z = &d->ev[mv->sys[mv->nsys - 1]];

		printf("           MemAvailable %s -> %s\n",
		       view_bytes(a->msys.v[FR_MSYS_MEM_AVAILABLE], b[0], sizeof(b[0])),
		       view_bytes(z->msys.v[FR_MSYS_MEM_AVAILABLE], b[1], sizeof(b[1])));
	}
}

static void json_memory(struct json *j, const struct fr_dump *d, const struct memview *mv)
{
	json__obj(j, "memory");
	json__u64(j, "rss_entries", mv->rss_events);
	json__u64(j, "processes", mv->nprocs);
	json__arr(j, "growers");
	for (uint32_t k = 0; k < mv->nprocs && k < FR_SHOW_GROWERS && mv->procs[k].rise; k++) {
		const struct memview_proc *mp = &mv->procs[k];

		json__obj(j, NULL);
		json__u64(j, "pid", d->proc[mp->proc].pid);
		json__u64(j, "start", d->proc[mp->proc].start);
		json__str(j, "comm", dump__str(d, d->proc[mp->proc].comm));
		json__u64(j, "rise", mp->rise);
		json__u64(j, "peak", mp->peak);
		json__u64(j, "rise_from_ts", mp->rise_from);
		json__u64(j, "rise_to_ts", mp->rise_to);
		json__end_obj(j);
	}
	json__end_arr(j);
	json__arr(j, "ooms");
	for (uint32_t k = 0; k < mv->nooms; k++) {
		const struct fr_dump_event *e = &d->ev[mv->ooms[k]];

		json__obj(j, NULL);
		json__u64(j, "ts", e->ts);
		json__u64(j, "pid", d->proc[e->proc].pid);
		json__u64(j, "start", d->proc[e->proc].start);
		view_event_json(j, d, e);
		json__end_obj(j);
	}
	json__end_arr(j);
	json__arr(j, "cgroups_near_limit");
	for (uint32_t k = 0; k < mv->ncgroups; k++)
		if (memview__near_limit(&mv->cgroups[k]))
			json__str(j, NULL, dump__str(d, mv->cgroups[k].path));
	json__end_arr(j);
	if (mv->nsys) {
		json__u64(j, "mem_available_first", d->ev[mv->sys[0]].msys.v[FR_MSYS_MEM_AVAILABLE]);
		json__u64(j, "mem_available_last", d->ev[mv->sys[mv->nsys - 1]].msys.v[FR_MSYS_MEM_AVAILABLE]);
	}
	json__end_obj(j);
}

/* A staller's kinds with time, "memcg 814.4 ms, blocked 2739.9 ms", into @buf. */
static const char *staller_kinds(const struct stallview_proc *sp, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	for (unsigned k = 0; k < FR_DSTALL_NKINDS && at < len; k++) {
		uint64_t ns = stallview__time(&sp->k[k]);

		if (ns)
			at += (size_t)snprintf(buf + at, len - at, "%s%s %.1f ms", at ? ", " : "",
					       dump__stall_kind_name(k), ns / 1e6);
	}
	return buf;
}

/* The stalls section: the top stallers and, beside PSI, the recorded memory stalls. */
static void text_stalls(const struct fr_dump *d, const struct stallview *sv)
{
	char comm[80], kinds[512];

	if (!sv->recorded)
		return;
	printf("stalls:    %u processes stalled; memory stalls %" PRIu64 " (%.1f ms), blocked %" PRIu64
	       " (%.1f ms)\n", sv->nprocs,
	       sv->kind_n[FR_DSTALL_RECLAIM] + sv->kind_n[FR_DSTALL_MEMCG] + sv->kind_n[FR_DSTALL_COMPACT],
	       (sv->kind_ns[FR_DSTALL_RECLAIM] + sv->kind_ns[FR_DSTALL_MEMCG] +
		sv->kind_ns[FR_DSTALL_COMPACT]) / 1e6,
	       sv->kind_n[FR_DSTALL_BLOCKED], sv->kind_ns[FR_DSTALL_BLOCKED] / 1e6);
	for (uint32_t k = 0; k < sv->nprocs && k < FR_SHOW_STALLERS; k++) {
		const struct stallview_proc *sp = &sv->procs[k];
		const struct fr_dump_proc *p = &d->proc[sp->proc];

		printf("           %s-%u (start %.6f): %s\n", view_str(d, p->comm, comm, sizeof(comm)),
		       p->pid, p->start / 1e9, staller_kinds(sp, kinds, sizeof(kinds)));
	}
	if (sv->has_psi)
		printf("           PSI memory some %.1f ms against %.1f ms of recorded memory stalls over "
		       "%.1f s: %s\n", sv->psi_some_us / 1e3, sv->mem_ns / 1e6,
		       (sv->psi_to - sv->psi_from) / 1e9, stallview__psi_note());
}

static void json_stalls(struct json *j, const struct fr_dump *d, const struct stallview *sv)
{
	json__obj(j, "stalls");
	json__bool(j, "recorded", sv->recorded);
	json__u64(j, "processes", sv->nprocs);
	json__obj(j, "kinds");
	for (unsigned k = 0; k < FR_DSTALL_NKINDS; k++) {
		json__obj(j, dump__stall_kind_name(k));
		json__u64(j, "count", sv->kind_n[k]);
		json__u64(j, "ns", sv->kind_ns[k]);
		json__end_obj(j);
	}
	json__end_obj(j);
	json__arr(j, "top");
	for (uint32_t k = 0; k < sv->nprocs && k < FR_SHOW_STALLERS; k++) {
		const struct stallview_proc *sp = &sv->procs[k];

		json__obj(j, NULL);
		json__u64(j, "pid", d->proc[sp->proc].pid);
		json__u64(j, "start", d->proc[sp->proc].start);
		json__str(j, "comm", dump__str(d, d->proc[sp->proc].comm));
		json__u64(j, "total_ns", sp->total_ns);
		for (unsigned kd = 0; kd < FR_DSTALL_NKINDS; kd++) {
			char key[32];

			snprintf(key, sizeof(key), "%s_ns", dump__stall_kind_name(kd));
			json__u64(j, key, stallview__time(&sp->k[kd]));
		}
		json__end_obj(j);
	}
	json__end_arr(j);
	json__obj(j, "psi");
	json__bool(j, "present", sv->has_psi);
	if (sv->has_psi) {
		json__u64(j, "some_us", sv->psi_some_us);
		json__u64(j, "recorded_memory_stall_ns", sv->mem_ns);
		json__u64(j, "span_ns", sv->psi_to - sv->psi_from);
		json__str(j, "note", stallview__psi_note());
	}
	json__end_obj(j);
	json__end_obj(j);
}

static void show_text(const char *path, const struct fr_dump *d, const struct view *v,
		      uint32_t ntop)
{
	uint32_t tp[256], ts[256], np, ns, live = 0, exited = 0;
	char t0[64], t1[64], comm[80], detail[2048], counts[512];
	struct memview mv;
	struct stallview sv;
	static char exe[FR_VIEW_TEXT_MAX];

	for (uint32_t i = 0; i < d->nproc; i++) {
		live += !!(d->proc[i].flags & FR_DPROC_LIVE);
		exited += !!(d->proc[i].flags & FR_DPROC_EXITED);
	}
	printf("dump:      %s (format %u.%u, flightrec %s)\n", path, d->major, d->minor,
	       dump__meta_str(d, "flightrec_version"));
	printf("host:      %s, kernel %s, %" PRIu64 " CPUs, %s at %" PRIu64 " Hz\n",
	       dump__meta_str(d, "host"), dump__meta_str(d, "kernel"),
	       dump__meta_u64(d, "ncpus"), dump__meta_str(d, "event_source"),
	       dump__meta_u64(d, "frequency"));
	for (uint32_t i = 0; i < d->ntrig; i++) {
		printf("trigger:   %s (%s) at %s: %s%s%s\n", d->trig[i].name, d->trig[i].type,
		       view_time(d, d->trig[i].ts, t0, sizeof(t0)), d->trig[i].reason,
		       *d->trig[i].detail ? "; " : "",
		       view_text(d->trig[i].detail, detail, sizeof(detail)));
		if (d->trig[i].victim)
			printf("           victim: pid %u, start %.6f, %s\n",
			       d->proc[d->trig[i].victim - 1].pid, d->proc[d->trig[i].victim - 1].start / 1e9,
			       view_str(d, d->proc[d->trig[i].victim - 1].comm, comm, sizeof(comm)));
	}
	printf("window:    %.3f s, %s .. %s\n", (d->win.end - d->win.start) / 1e9,
	       view_time(d, d->win.start, t0, sizeof(t0)), view_time(d, d->win.end, t1, sizeof(t1)));
	evtype__text_counts(counts, sizeof(counts), v->by_type);
	printf("events:    %u: %s\n", d->nev, counts);
	printf("processes: %u incarnations: %u live at the snapshot, %u exited in the window\n",
	       d->nproc, live, exited);
	text_losses(d);
	text_completeness(d, v);
	view_sparklines(d, stdout);
	if (!memview__init(&mv, d)) {
		text_memory(d, &mv);
		memview__fini(&mv);
	}
	if (!stallview__init(&sv, d, NULL)) {
		text_stalls(d, &sv);
		stallview__fini(&sv);
	}

	ntop = ntop > 256 ? 256 : ntop;
	np = top(v->proc_samples, d->nproc, tp, ntop);
	printf("\ntop processes by samples (user stacks: WHOLE reached the outermost frame, LATER "
	       "were walked on from a copy once a new file's rows came, FP were walked by frame "
	       "pointers without a table):\n  %8s %6s %8s %16s  %-16s %6s %6s %6s  %s\n",
	       "SAMPLES", "%", "PID", "START", "COMM", "WHOLE", "LATER", "FP", "EXE");
	for (uint32_t i = 0; i < np; i++) {
		const struct fr_dump_proc *p = &d->proc[tp[i]];
		char whole[16] = "-";

		if (v->proc_us[tp[i]].user)
			snprintf(whole, sizeof(whole), "%.1f%%",
				 100.0 * v->proc_us[tp[i]].whole / v->proc_us[tp[i]].user);
		printf("  %8" PRIu64 " %5.1f%% %8u %16.6f  %-16s %6s %6" PRIu64 " %6" PRIu64 "  %s\n",
		       v->proc_samples[tp[i]],
		       100.0 * v->proc_samples[tp[i]] / (v->samples ? v->samples : 1), p->pid,
		       p->start / 1e9, view_str(d, p->comm, comm, sizeof(comm)), whole,
		       v->proc_us[tp[i]].later, v->proc_us[tp[i]].no_table,
		       view_str(d, p->exe, exe, sizeof(exe)));
	}
	ns = top(v->stack_samples, d->nstack, ts, ntop);
	printf("\ntop stacks by samples (leaf first):\n");
	for (uint32_t i = 0; i < ns; i++) {
		const struct fr_dump_proc *p = &d->proc[stack_owner(d, ts[i])];

		printf("  %8" PRIu64 " %5.1f%% %s-%u (start %.6f): ", v->stack_samples[ts[i]],
		       100.0 * v->stack_samples[ts[i]] / (v->samples ? v->samples : 1),
		       view_str(d, p->comm, comm, sizeof(comm)), p->pid, p->start / 1e9);
		text_stack(d, ts[i]);
	}
}

static void json_kvlist(struct json *j, const char *key, const struct fr_kvlist *l)
{
	json__obj(j, key);
	for (uint32_t i = 0; i < l->n; i++) {
		const struct fr_kv *kv = &l->kv[i];

		switch (kv->type) {
		case FR_KV_UINT:
			json__u64(j, kv->key, kv->u);
			break;
		case FR_KV_SINT:
			json__i64(j, kv->key, kv->i);
			break;
		case FR_KV_STR:
			json__str(j, kv->key, kv->s);
			break;
		case FR_KV_UARRAY:
			json__arr(j, kv->key);
			for (uint32_t k = 0; k < kv->n; k++)
				json__u64(j, NULL, kv->arr[k]);
			json__end_arr(j);
			break;
		}
	}
	json__end_obj(j);
}

static void json_completeness(struct json *j, const struct fr_dump *d, const struct view *v)
{
	uint32_t top[FR_STOP_SHOWN], nt = view_stop_top(v, top, FR_STOP_SHOWN);

	json__obj(j, "user_stacks");
	json__u64(j, "samples", view_user_stacks(v));
	for (unsigned k = FR_DUEND_OUTERMOST; k < FR_DUEND_NR; k++)
		json__u64(j, dump__uend_name(k), v->uend[k]);
	json__u64(j, "walked_later", walked_later(d));
	json__arr(j, "stopped_in");
	for (uint32_t i = 0; i < nt; i++) {
		json__obj(j, NULL);
		json__str(j, "file", top[i] ? dump__str(d, d->bin[top[i] - 1].path) : "");
		json__u64(j, "samples", v->stop_bin[top[i]]);
		json__end_obj(j);
	}
	json__end_arr(j);
	view_no_table_json(j, v, FR_FP_SHOWN);
	json__end_obj(j);
}

static void show_json(const char *path, const struct fr_dump *d, const struct view *v,
		      uint32_t ntop)
{
	uint32_t tp[256], ts[256], np, ns;
	uint64_t losses = 0;
	struct memview mv;
	struct stallview sv;
	struct json j;
	char buf[FR_VIEW_FRAME_MAX];

	json__init(&j, stdout);
	json__obj(&j, NULL);
	json__str(&j, "file", path);
	json__obj(&j, "format");
	json__u64(&j, "major", d->major);
	json__u64(&j, "minor", d->minor);
	json__end_obj(&j);
	json_kvlist(&j, "meta", &d->meta);
	json__arr(&j, "triggers");
	for (uint32_t i = 0; i < d->ntrig; i++) {
		json__obj(&j, NULL);
		json__str(&j, "name", d->trig[i].name);
		json__str(&j, "type", d->trig[i].type);
		json__str(&j, "reason", d->trig[i].reason);
		json__str(&j, "detail", d->trig[i].detail);
		json__u64(&j, "ts", d->trig[i].ts);
		json__str(&j, "time", view_time(d, d->trig[i].ts, buf, sizeof(buf)));
		if (d->trig[i].victim) {
			const struct fr_dump_proc *vp = &d->proc[d->trig[i].victim - 1];

			json__obj(&j, "victim");
			json__u64(&j, "pid", vp->pid);
			json__u64(&j, "start", vp->start);
			json__str(&j, "comm", dump__str(d, vp->comm));
			json__end_obj(&j);
		}
		json__end_obj(&j);
	}
	json__end_arr(&j);
	json__obj(&j, "window");
	json__u64(&j, "start", d->win.start);
	json__u64(&j, "end", d->win.end);
	json__u64(&j, "span", d->win.span);
	json__u64(&j, "watermark", d->win.watermark);
	json__u64(&j, "first_event", d->win.first_event);
	json__end_obj(&j);
	json__obj(&j, "counts");
	json__u64(&j, "events", d->nev);
	evtype__json_counts(&j, v->by_type);
	json__u64(&j, "processes", d->nproc);
	json__u64(&j, "stacks", d->nstack);
	json__u64(&j, "frames", d->nframe);
	json__end_obj(&j);
	json_kvlist(&j, "losses", &d->loss);
	for (uint32_t i = 0; i < d->loss.n; i++)
		if (view_is_loss(d->loss.kv[i].key))
			losses += loss_total(&d->loss.kv[i]);
	json__u64(&j, "losses_total", losses);
	json_completeness(&j, d, v);
	if (!memview__init(&mv, d)) {
		json_memory(&j, d, &mv);
		memview__fini(&mv);
	}
	if (!stallview__init(&sv, d, NULL)) {
		json_stalls(&j, d, &sv);
		stallview__fini(&sv);
	}

	ntop = ntop > 256 ? 256 : ntop;
	np = top(v->proc_samples, d->nproc, tp, ntop);
	json__arr(&j, "top_processes");
	for (uint32_t i = 0; i < np; i++) {
		const struct fr_dump_proc *p = &d->proc[tp[i]];

		json__obj(&j, NULL);
		json__u64(&j, "samples", v->proc_samples[tp[i]]);
		json__u64(&j, "pid", p->pid);
		json__u64(&j, "start", p->start);
		json__str(&j, "comm", dump__str(d, p->comm));
		json__str(&j, "exe", dump__str(d, p->exe));
		json__obj(&j, "user_stacks");
		json__u64(&j, "samples", v->proc_us[tp[i]].user);
		json__u64(&j, "outermost", v->proc_us[tp[i]].whole);
		json__u64(&j, "walked_later", v->proc_us[tp[i]].later);
		json__u64(&j, "no_table", v->proc_us[tp[i]].no_table);
		json__end_obj(&j);
		json__end_obj(&j);
	}
	json__end_arr(&j);
	ns = top(v->stack_samples, d->nstack, ts, ntop);
	json__arr(&j, "top_stacks");
	for (uint32_t i = 0; i < ns; i++) {
		const struct fr_dump_stack *st = &d->stack[ts[i]];
		const struct fr_dump_proc *p = &d->proc[stack_owner(d, ts[i])];

		json__obj(&j, NULL);
		json__u64(&j, "samples", v->stack_samples[ts[i]]);
		json__u64(&j, "pid", p->pid);
		json__u64(&j, "start", p->start);
		json__str(&j, "comm", dump__str(d, p->comm));
		json__arr(&j, "stack");
		for (uint32_t k = 0; k < st->kn + st->un; k++)
			json__str(&j, NULL, view_frame(d, st->frames[k], buf, sizeof(buf)));
		json__end_arr(&j);
		json__end_obj(&j);
	}
	json__end_arr(&j);
	json__end_obj(&j);
	printf("\n");
}

int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	uint32_t ntop = FR_TOP_DEFAULT;
	bool json = false;
	struct fr_dump d;
	struct view v;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 't':
			if (cli_parse_u32(optarg, &ntop) || !ntop)
				return cli_usage_error("show", "--top needs a positive number, not '%s'",
						       optarg);
			break;
		default:
			return cli_common_option("show", c, argv, usage);
		}
	}
	rc = cli_open_view("show", argc, argv, optind, &d, &v);
	if (rc)
		return rc;
	if (json)
		show_json(argv[optind], &d, &v, ntop);
	else
		show_text(argv[optind], &d, &v, ntop);
	view__fini(&v);
	dump__free(&d);
	return FR_EXIT_OK;
}
