// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_memory.c - "flightrec memory": who ate the memory. The top RSS
 * growers of the window from the ledger, the memory cgroups near or at
 * their limit, the OOM dossiers with the candidates the kernel's
 * dump_tasks would list, and the system's memory curve.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "memview.h"
#include "util.h"
#include "view.h"

#define FR_MEM_TOP	10	/* growers and candidates in the text view */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: flightrec memory [--json] [--top=N] DUMP\n"
		"\n"
		"Who ate the memory: the processes whose RSS (file + anon + shmem, as\n"
		"the kernel counts it) rose most in the window, from the RSS ledger,\n"
		"with their minimum, peak and end, the rise, its rate and when it\n"
		"happened relative to the trigger; the memory cgroups at 90 %% of their\n"
		"limit or more; each OOM kill with the task whose allocation invoked\n"
		"it, its stack, the cgroup whose limit was hit (or global) and the\n"
		"candidates as the kernel's OOM report lists them; and the system's\n"
		"MemAvailable and reclaim counters over the window.\n"
		"\n"
		"  --json     one JSON object\n"
		"  --top=N    growers and candidates shown (default %d; --json: all)\n"
		"  --help     show this help\n"
		"  --version  show the version\n", FR_MEM_TOP);
}

static double rel_s(const struct memview *mv, uint64_t ts)
{
	return ((double)ts - (double)mv->trigger_ts) / 1e9;
}

static double rate(const struct memview_proc *mp)
{
	uint64_t dt = mp->rise_to > mp->rise_from ? mp->rise_to - mp->rise_from : 0;

	return dt ? (double)mp->rise / (dt / 1e9) : 0;
}

/* A candidate of OOM event @e: alive at the snapshot, in its memcg (or any, global). */
static bool candidate(const struct fr_dump *d, const struct fr_dump_event *e, uint32_t i)
{
	const struct fr_dump_proc *p = &d->proc[i];
	const char *cg = e->oom.memcg ? dump__str(d, e->oom.memcg) : NULL, *pc;
	size_t n;

	if (!p->has_mem || (p->flags & FR_DPROC_KTHREAD) || i == e->proc)
		return false;
	if (!cg)
		return true;
	pc = dump__str(d, p->memcg);
	n = strlen(cg);
	return !strncmp(pc, cg, n) && (pc[n] == '/' || !pc[n] || !strcmp(cg, "/"));
}

/*
 * Every process's oom_score_adj at @ts: the last write in the window at or
 * before it, else the snapshot's value (the initial state unless an event
 * of the window says otherwise). Caller frees; NULL: no memory.
 */
static int32_t *adj_at(const struct fr_dump *d, uint64_t ts)
{
	int32_t *v = calloc(d->nproc + 1, sizeof(*v));

	if (!v)
		return NULL;
	for (uint32_t i = 0; i < d->nproc; i++)
		v[i] = d->proc[i].oom_score_adj;
	for (uint32_t i = 0; i < d->nev && d->ev[i].ts <= ts; i++)
		if (d->ev[i].type == FR_DEV_OOMADJ && d->ev[i].proc < d->nproc)
			v[d->ev[i].proc] = d->ev[i].oomadj.value;
	return v;
}

static uint64_t badness(const struct fr_dump_proc *p)
{
	return p->rss_anon + p->rss_file + p->rss_shmem + p->swap + p->pgtables;
}

static const struct fr_dump *sort_dump;

static int cmp_badness(const void *a, const void *b)
{
	uint64_t x = badness(&sort_dump->proc[*(const uint32_t *)a]);
	uint64_t y = badness(&sort_dump->proc[*(const uint32_t *)b]);

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The candidates of OOM event @e, largest first; caller frees. */
static uint32_t *candidates(const struct fr_dump *d, const struct fr_dump_event *e, uint32_t *n)
{
	uint32_t *c = calloc(d->nproc + 1, sizeof(*c));

	*n = 0;
	if (!c)
		return NULL;
	for (uint32_t i = 0; i < d->nproc; i++)
		if (candidate(d, e, i))
			c[(*n)++] = i;
	sort_dump = d;
	qsort(c, *n, sizeof(*c), cmp_badness);
	return c;
}

#define FR_MEM_SITES		3	/* growth sites per grower in the text view */
#define FR_MEM_SITE_FRAMES	8	/* their frames shown, leaf first */

/* Where @proc's own threads grew its memory (1.8 dumps): a line a stack. */
static void text_sites(const struct fr_dump *d, uint32_t proc)
{
	struct memview_site s[FR_MEM_SITES];
	uint32_t n = memview__sites(d, proc, s, FR_MEM_SITES);
	char b[32], buf[FR_VIEW_TEXT_MAX];

	for (uint32_t k = 0; k < n; k++) {
		const struct fr_dump_stack *st = s[k].stack ? &d->stack[s[k].stack - 1] : NULL;
		uint32_t nf = st ? st->kn + st->un : 0;

		printf("      grew %s in %u step%s in ", view_bytes(s[k].grown, b, sizeof(b)),
		       s[k].steps, s[k].steps == 1 ? "" : "s");
		if (!nf)
			printf("(no stack)");
		for (uint32_t f = 0; f < nf && f < FR_MEM_SITE_FRAMES; f++)
			printf("%s%s", f ? " <- " : "", view_frame_text(d, st->frames[f], buf, sizeof(buf)));
		printf("%s\n", nf > FR_MEM_SITE_FRAMES ? " <- ..." : "");
	}
}

static void text_growers(const struct fr_dump *d, const struct memview *mv, uint32_t top)
{
	char b[5][32], comm[80];

	printf("top RSS growers (%" PRIu64 " ledger entries, %u processes):\n", mv->rss_events,
	       mv->nprocs);
	if (!mv->nprocs) {
		printf("  none: the dump has no RSS ledger (rss_ledger = false, or a dump before 1.4)\n");
		return;
	}
	printf("  %8s %20s %-16s %9s %9s %9s %9s %11s  %s\n", "PID", "START", "COMM", "MIN", "PEAK",
	       "END", "RISE", "RATE/S", "WHEN (s from trigger)");
	for (uint32_t k = 0; k < mv->nprocs && k < top; k++) {
		const struct memview_proc *mp = &mv->procs[k];
		const struct fr_dump_proc *p = &d->proc[mp->proc];

		printf("  %8u %10" PRIu64 ".%09" PRIu64 " %-16s %9s %9s %9s %9s %10s  ",
		       p->pid, p->start / 1000000000, p->start % 1000000000,
		       view_str(d, p->comm, comm, sizeof(comm)), view_bytes(mp->min, b[0], sizeof(b[0])),
		       view_bytes(mp->peak, b[1], sizeof(b[1])), view_bytes(mp->end, b[2], sizeof(b[2])),
		       view_bytes(mp->rise, b[3], sizeof(b[3])),
		       mp->rise ? view_bytes((uint64_t)rate(mp), b[4], sizeof(b[4])) : "-");
		if (mp->rise)
			printf("%+.2f .. %+.2f", rel_s(mv, mp->rise_from), rel_s(mv, mp->rise_to));
		else
			printf("-");
		printf("%s\n", p->flags & FR_DPROC_EXITED ? "  (exited)" : "");
		text_sites(d, mp->proc);
	}
}

static void text_cgroups(const struct fr_dump *d, const struct memview *mv)
{
	char b[3][32], path[FR_VIEW_TEXT_MAX];
	uint32_t shown = 0;

	printf("memory cgroups at 90 %% of their limit or more (%u read):\n", mv->ncgroups);
	for (uint32_t k = 0; k < mv->ncgroups; k++) {
		const struct memview_cgroup *c = &mv->cgroups[k];

		if (!memview__near_limit(c) && !c->oom_kills)
			continue;
		shown++;
		printf("  %s (%s): usage %s of %s (%.1f %%), peak %s, limit hits +%" PRIu64
		       ", OOM kills +%" PRIu64 "\n", view_str(d, c->path, path, sizeof(path)),
		       c->v1 ? "v1" : "v2", view_bytes(c->usage, b[0], sizeof(b[0])),
		       view_bytes(c->limit, b[1], sizeof(b[1])),
		       c->limit ? 100.0 * (double)c->usage / (double)c->limit : 0.0,
		       view_bytes(c->peak, b[2], sizeof(b[2])), c->max_events, c->oom_kills);
	}
	if (!shown)
		printf("  none\n");
}

static void text_oom(const struct fr_dump *d, const struct memview *mv, uint32_t top)
{
	char b[5][32], comm[80], buf[FR_VIEW_TEXT_MAX];

	for (uint32_t k = 0; k < mv->nooms; k++) {
		const struct fr_dump_event *e = &d->ev[mv->ooms[k]];
		const struct fr_dump_proc *v = &d->proc[e->proc];
		int32_t *adj = adj_at(d, e->ts);
		uint32_t n, *c;

		printf("OOM kill at %+.3f s: victim %u (%s) start=%" PRIu64 ".%09" PRIu64
		       " anon-rss %s file-rss %s shmem-rss %s swap %s pgtables %s oom_score_adj %" PRId64 "\n",
		       rel_s(mv, e->ts), v->pid, view_str(d, v->comm, comm, sizeof(comm)),
		       v->start / 1000000000, v->start % 1000000000,
		       view_bytes(e->oom.rss_anon, b[0], sizeof(b[0])), view_bytes(e->oom.rss_file, b[1], sizeof(b[1])),
		       view_bytes(e->oom.rss_shmem, b[2], sizeof(b[2])), view_bytes(e->oom.swapents, b[3], sizeof(b[3])),
		       view_bytes(e->oom.pgtables, b[4], sizeof(b[4])), e->oom.oom_score_adj);
		if (e->oom.invoker) {
			const struct fr_dump_proc *ip = &d->proc[e->oom.invoker - 1];

			printf("  invoked by %u (%s) tid %u, allocating at:\n", ip->pid,
			       view_str(d, ip->comm, comm, sizeof(comm)), e->oom.invoker_tid);
			if (e->stack)
				for (uint32_t f = 0; f < d->stack[e->stack - 1].kn + d->stack[e->stack - 1].un; f++)
					printf("    %s\n", view_frame_text(d, d->stack[e->stack - 1].frames[f],
									  buf, sizeof(buf)));
		}
		if (e->oom.memcg || e->oom.memcg_limit)
			printf("  memory cgroup at its limit: %s usage %s limit %s\n",
			       e->oom.memcg ? view_str(d, e->oom.memcg, buf, sizeof(buf)) : "(path unknown)",
			       view_bytes(e->oom.memcg_usage, b[0], sizeof(b[0])),
			       view_bytes(e->oom.memcg_limit, b[1], sizeof(b[1])));
		else
			printf("  global: no memory cgroup was at its limit\n");
		c = candidates(d, e, &n);
		printf("  candidates at the snapshot, oom_score_adj as of the kill (%u):\n"
		       "  %8s %20s %10s %10s %10s %8s %s\n", n, "PID",
		       "START", "RSS", "SWAP", "PGTABLES", "ADJ", "COMM");
		for (uint32_t i = 0; c && i < n && i < top; i++) {
			const struct fr_dump_proc *p = &d->proc[c[i]];

			printf("  %8u %10" PRIu64 ".%09" PRIu64 " %10s %10s %10s %8d %s\n", p->pid,
			       p->start / 1000000000, p->start % 1000000000,
			       view_bytes(p->rss_anon + p->rss_file + p->rss_shmem, b[0], sizeof(b[0])),
			       view_bytes(p->swap, b[1], sizeof(b[1])), view_bytes(p->pgtables, b[2], sizeof(b[2])),
			       adj ? adj[c[i]] : p->oom_score_adj, view_str(d, p->comm, comm, sizeof(comm)));
		}
		free(adj);
		free(c);
	}
}

static void text_system(const struct fr_dump *d, const struct memview *mv)
{
	const struct fr_dump_event *a, *z;
	uint64_t lo = UINT64_MAX, lo_ts = 0;
	char b[3][32];

	if (!mv->nsys) {
		printf("system memory: no readings\n");
		return;
	}
	a = &d->ev[mv->sys[0]];
	z = &d->ev[mv->sys[mv->nsys - 1]];
	for (uint32_t k = 0; k < mv->nsys; k++)
		if (d->ev[mv->sys[k]].msys.v[FR_MSYS_MEM_AVAILABLE] < lo) {
			lo = d->ev[mv->sys[k]].msys.v[FR_MSYS_MEM_AVAILABLE];
			lo_ts = d->ev[mv->sys[k]].ts;
		}
	printf("system memory (%u readings): MemAvailable %s -> %s, lowest %s at %+.1f s\n", mv->nsys,
	       view_bytes(a->msys.v[FR_MSYS_MEM_AVAILABLE], b[0], sizeof(b[0])),
	       view_bytes(z->msys.v[FR_MSYS_MEM_AVAILABLE], b[1], sizeof(b[1])),
	       view_bytes(lo, b[2], sizeof(b[2])), rel_s(mv, lo_ts));
	printf("  over the window:");
	for (unsigned f = FR_MSYS_PGSCAN_KSWAPD; f < FR_MSYS_NFIELDS; f++)
		printf(" %s +%" PRIu64, dump__memsys_field_name(f),
		       z->msys.v[f] - FR_MIN(a->msys.v[f], z->msys.v[f]));
	putchar('\n');
}

/* Where @proc's own threads grew its memory: the 64 stacks with the most bytes, most first. */
static void json_sites(struct json *j, const struct fr_dump *d, uint32_t proc)
{
	struct memview_site s[64];
	uint32_t n = memview__sites(d, proc, s, FR_ARRAY_SIZE(s));

	json__arr(j, "sites");
	for (uint32_t k = 0; k < n; k++) {
		json__obj(j, NULL);
		json__u64(j, "grown", s[k].grown);
		json__u64(j, "steps", s[k].steps);
		view_stack_json(j, d, "stack", s[k].stack);
		json__end_obj(j);
	}
	json__end_arr(j);
}

static void json_procs(struct json *j, const struct fr_dump *d, const struct memview *mv)
{
	json__arr(j, "growers");
	for (uint32_t k = 0; k < mv->nprocs; k++) {
		const struct memview_proc *mp = &mv->procs[k];
		const struct fr_dump_proc *p = &d->proc[mp->proc];

		json__obj(j, NULL);
		json__u64(j, "pid", p->pid);
		json__u64(j, "start", p->start);
		json__str(j, "comm", dump__str(d, p->comm));
		json__bool(j, "exited", p->flags & FR_DPROC_EXITED);
		json__u64(j, "entries", mp->points);
		json__u64(j, "first", mp->first);
		json__u64(j, "min", mp->min);
		json__u64(j, "peak", mp->peak);
		json__u64(j, "end", mp->end);
		json__u64(j, "swap_end", mp->swap_end);
		json__u64(j, "first_ts", mp->first_ts);
		json__u64(j, "peak_ts", mp->peak_ts);
		json__u64(j, "end_ts", mp->end_ts);
		json__u64(j, "rise", mp->rise);
		json__f64(j, "rise_per_s", rate(mp));
		json__u64(j, "rise_from_ts", mp->rise_from);
		json__u64(j, "rise_to_ts", mp->rise_to);
		json__f64(j, "rise_from_s", mp->rise ? rel_s(mv, mp->rise_from) : 0);
		json__f64(j, "rise_to_s", mp->rise ? rel_s(mv, mp->rise_to) : 0);
		json_sites(j, d, mp->proc);
		json__end_obj(j);
	}
	json__end_arr(j);
}

static void json_cgroups(struct json *j, const struct fr_dump *d, const struct memview *mv)
{
	json__arr(j, "cgroups");
	for (uint32_t k = 0; k < mv->ncgroups; k++) {
		const struct memview_cgroup *c = &mv->cgroups[k];

		json__obj(j, NULL);
		json__str(j, "path", dump__str(d, c->path));
		json__str(j, "hierarchy", c->v1 ? "v1" : "v2");
		json__u64(j, "usage", c->usage);
		json__bool(j, "unlimited", c->unlimited);
		json__u64(j, "limit", c->unlimited ? 0 : c->limit);
		json__u64(j, "peak", c->peak);
		json__bool(j, "near_limit", memview__near_limit(c));
		json__u64(j, "limit_hits", c->max_events);
		json__u64(j, "oom_kills", c->oom_kills);
		json__u64(j, "readings", c->readings);
		json__end_obj(j);
	}
	json__end_arr(j);
}

static void json_proc_mem(struct json *j, const struct fr_dump *d, uint32_t i, const int32_t *adj)
{
	const struct fr_dump_proc *p = &d->proc[i];

	json__obj(j, NULL);
	json__u64(j, "pid", p->pid);
	json__u64(j, "start", p->start);
	json__str(j, "comm", dump__str(d, p->comm));
	json__u64(j, "rss", p->rss_anon + p->rss_file + p->rss_shmem);
	json__u64(j, "rss_anon", p->rss_anon);
	json__u64(j, "rss_file", p->rss_file);
	json__u64(j, "rss_shmem", p->rss_shmem);
	json__u64(j, "swap", p->swap);
	json__u64(j, "pgtables", p->pgtables);
	json__i64(j, "oom_score_adj", adj ? adj[i] : p->oom_score_adj);
	json__i64(j, "oom_score_adj_snapshot", p->oom_score_adj);
	json__str(j, "memcg", dump__str(d, p->memcg));
	json__end_obj(j);
}

static void json_ooms(struct json *j, const struct fr_dump *d, const struct memview *mv)
{
	json__arr(j, "ooms");
	for (uint32_t k = 0; k < mv->nooms; k++) {
		const struct fr_dump_event *e = &d->ev[mv->ooms[k]];
		int32_t *adj = adj_at(d, e->ts);
		uint32_t n, *c;

		json__obj(j, NULL);
		json__u64(j, "ts", e->ts);
		json__f64(j, "at_s", rel_s(mv, e->ts));
		json__u64(j, "pid", d->proc[e->proc].pid);
		json__u64(j, "start", d->proc[e->proc].start);
		json__str(j, "comm", dump__str(d, d->proc[e->proc].comm));
		view_event_json(j, d, e);
		c = candidates(d, e, &n);
		json__arr(j, "candidates");
		for (uint32_t i = 0; c && i < n; i++)
			json_proc_mem(j, d, c[i], adj);
		json__end_arr(j);
		free(adj);
		free(c);
		json__end_obj(j);
	}
	json__end_arr(j);
}

static void json_system(struct json *j, const struct fr_dump *d, const struct memview *mv)
{
	json__arr(j, "system");
	for (uint32_t k = 0; k < mv->nsys; k++) {
		const struct fr_dump_event *e = &d->ev[mv->sys[k]];

		json__obj(j, NULL);
		json__u64(j, "ts", e->ts);
		view_reading_json(j, d, e);
		json__end_obj(j);
	}
	json__end_arr(j);
}

int cmd_memory(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	unsigned long top = FR_MEM_TOP;
	struct memview mv;
	bool json = false;
	struct fr_dump d;
	struct view v;
	char *end;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'n':
			top = strtoul(optarg, &end, 10);
			if (*end || !*optarg || !top || top > 1000000)
				return cli_usage_error("memory", "bad --top '%s'; accepted: 1..1000000", optarg);
			break;
		default:
			return cli_common_option("memory", c, argv, usage);
		}
	}
	rc = cli_open_view("memory", argc, argv, optind, &d, &v);
	if (rc)
		return rc;
	if (memview__init(&mv, &d)) {
		view__fini(&v);
		dump__free(&d);
		fprintf(stderr, "flightrec memory: failed to fold the ledger: %s\n", strerror(ENOMEM));
		return FR_EXIT_FAIL;
	}
	if (json) {
		struct json j;

		json__init(&j, stdout);
		json__obj(&j, NULL);
		json__u64(&j, "trigger_ts", mv.trigger_ts);
		json__u64(&j, "window_start", d.win.start);
		json__u64(&j, "window_end", d.win.end);
		json__u64(&j, "rss_entries", mv.rss_events);
		json__u64(&j, "rss_step", dump__meta_u64(&d, "rss_step"));
		json_procs(&j, &d, &mv);
		json_cgroups(&j, &d, &mv);
		json_ooms(&j, &d, &mv);
		json_system(&j, &d, &mv);
		json__end_obj(&j);
		putchar('\n');
	} else {
		text_growers(&d, &mv, (uint32_t)top);
		text_cgroups(&d, &mv);
		text_oom(&d, &mv, (uint32_t)top);
		text_system(&d, &mv);
	}
	memview__fini(&mv);
	view__fini(&v);
	dump__free(&d);
	return FR_EXIT_OK;
}
