// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_stalls.c - "flightrec stalls": who was stuck, where and for how
 * long. The incarnations ranked by their stalled time in the window, per
 * kind, each with the stacks it stalled in longest, and the window's PSI
 * memory stall time beside the sum of the recorded memory stalls.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "filter.h"
#include "json.h"
#include "stallview.h"
#include "util.h"
#include "view.h"

#define FR_STALLS_TOP	10	/* incarnations in the text view */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: flightrec stalls [--json] [--top=N] [--kind=KIND] [--pid PID] [--cgroup PATH]\n"
		"                        [--from SEC] [--to SEC] DUMP\n"
		"\n"
		"Who was stuck, where and for how long: the processes ranked by the\n"
		"time their threads stalled in the window, per kind: reclaim (direct\n"
		"reclaim), memcg (reclaim at a memory cgroup's limit), compaction\n"
		"(direct compaction of a zone), throttle (reclaim throttled), blocked\n"
		"(off the CPU in an uninterruptible wait) and sleep (off the CPU in an\n"
		"interruptible wait, with [stalls] offcpu_sleep), each with the stacks\n"
		"it stalled in longest. A kind's time adds the stalls recorded one by one\n"
		"and the shorter ones summed. The kinds overlap (a throttle is inside a\n"
		"reclaim, and a reclaim that sleeps is also blocked), and the ranking\n"
		"adds them up. Last, the PSI memory stall time of the window beside the\n"
		"sum of the recorded memory stalls.\n"
		"\n"
		"  --json       one JSON object\n"
		"  --top=N      processes shown (default %d; --json: all)\n"
		"  --kind=KIND  rank by this kind's time alone\n"
		FR_FILTER_HELP
		"  --help       show this help\n"
		"  --version    show the version\n", FR_STALLS_TOP);
}

static int rank_kind = -1;

static uint64_t rank_of(const struct stallview_proc *sp)
{
	return rank_kind < 0 ? sp->total_ns : stallview__time(&sp->k[rank_kind]);
}

static int cmp_rank(const void *a, const void *b)
{
	uint64_t x = rank_of(a), y = rank_of(b);

	return x < y ? 1 : x > y ? -1 : 0;
}

static void text_stack(const struct fr_dump *d, const struct stallview_stack *st)
{
	const struct fr_dump_stack *s = &d->stack[st->stack - 1];
	char buf[FR_VIEW_TEXT_MAX];

	printf("        %.3f ms in %" PRIu64 ":", st->ns / 1e6, st->n);
	for (uint32_t k = 0; k < s->kn + s->un; k++)
		printf("%s%s", k ? " <- " : " ", view_frame_text(d, s->frames[k], buf, sizeof(buf)));
	putchar('\n');
}

static void text_proc(const struct fr_dump *d, const struct stallview_proc *sp)
{
	const struct fr_dump_proc *p = &d->proc[sp->proc];
	char comm[80];

	printf("  %u %s start=%" PRIu64 ".%09" PRIu64 "%s: %.3f ms\n", p->pid,
	       view_str(d, p->comm, comm, sizeof(comm)), p->start / 1000000000,
	       p->start % 1000000000, p->flags & FR_DPROC_EXITED ? " (exited)" : "",
	       sp->total_ns / 1e6);
	for (unsigned k = 0; k < FR_DSTALL_NKINDS; k++) {
		const struct stallview_kind *sk = &sp->k[k];

		if (!stallview__count(sk))
			continue;
		printf("    %-10s %10.3f ms in %" PRIu64 " (%" PRIu64 " recorded, longest %.3f ms; %" PRIu64
		       " shorter summed, %.3f ms", dump__stall_kind_name(k), stallview__time(sk) / 1e6,
		       stallview__count(sk), sk->n, sk->max_ns / 1e6, sk->n_short, sk->ns_short / 1e6);
		if (sk->n_lost)
			printf("; %" PRIu64 " lost by the ring, %.3f ms", sk->n_lost, sk->ns_lost / 1e6);
		printf(")\n");
		for (uint32_t t = 0; t < sk->ntop; t++)
			text_stack(d, &sk->top[t]);
	}
}

static void text_psi(const struct stallview *sv)
{
	if (!sv->has_psi) {
		printf("memory pressure: no PSI readings of the system in the window\n");
		return;
	}
	printf("memory pressure over %.1f s: PSI some %.3f ms (full %.3f ms); recorded memory stalls "
	       "(reclaim, memcg, compaction) %.3f ms\n  %s\n", (sv->psi_to - sv->psi_from) / 1e9,
	       sv->psi_some_us / 1e3, sv->psi_full_us / 1e3, sv->mem_ns / 1e6, stallview__psi_note());
}

static void text(const struct fr_dump *d, const struct stallview *sv, uint32_t top)
{
	printf("stalls in the window, by kind:");
	for (unsigned k = 0; k < FR_DSTALL_NKINDS; k++)
		printf(" %s %" PRIu64 " (%.3f ms)%s", dump__stall_kind_name(k), sv->kind_n[k],
		       sv->kind_ns[k] / 1e6, k + 1 < FR_DSTALL_NKINDS ? "," : "\n");
	if (!sv->recorded) {
		printf("  none recorded: [stalls] stalls and offcpu were off, or a dump before 1.5\n");
		return;
	}
	printf("processes by time stalled%s%s (%u):\n", rank_kind < 0 ? "" : ", ",
	       rank_kind < 0 ? "" : dump__stall_kind_name(rank_kind), sv->nprocs);
	for (uint32_t i = 0; i < sv->nprocs && i < top; i++)
		if (rank_of(&sv->procs[i]))
			text_proc(d, &sv->procs[i]);
	text_psi(sv);
}

static void json_kind(struct json *j, const struct fr_dump *d, const struct stallview_kind *sk)
{
	json__u64(j, "ns", stallview__time(sk));
	json__u64(j, "count", stallview__count(sk));
	json__u64(j, "recorded", sk->n);
	json__u64(j, "recorded_ns", sk->ns);
	json__u64(j, "max_ns", sk->max_ns);
	json__u64(j, "short", sk->n_short);
	json__u64(j, "short_ns", sk->ns_short);
	json__u64(j, "lost", sk->n_lost);
	json__u64(j, "lost_ns", sk->ns_lost);
	json__u64(j, "seen", sk->n_all);
	json__u64(j, "seen_ns", sk->ns_all);
	json__arr(j, "stacks");
	for (uint32_t t = 0; t < sk->ntop; t++) {
		json__obj(j, NULL);
		json__u64(j, "ns", sk->top[t].ns);
		json__u64(j, "count", sk->top[t].n);
		view_stack_json(j, d, "frames", sk->top[t].stack);
		json__end_obj(j);
	}
	json__end_arr(j);
}

static void json_out(const struct fr_dump *d, const struct stallview *sv)
{
	struct json j;

	json__init(&j, stdout);
	json__obj(&j, NULL);
	json__bool(&j, "recorded", sv->recorded);
	json__obj(&j, "kinds");
	for (unsigned k = 0; k < FR_DSTALL_NKINDS; k++) {
		json__obj(&j, dump__stall_kind_name(k));
		json__u64(&j, "count", sv->kind_n[k]);
		json__u64(&j, "ns", sv->kind_ns[k]);
		json__end_obj(&j);
	}
	json__end_obj(&j);
	json__arr(&j, "processes");
	for (uint32_t i = 0; i < sv->nprocs; i++) {
		const struct stallview_proc *sp = &sv->procs[i];
		const struct fr_dump_proc *p = &d->proc[sp->proc];

		json__obj(&j, NULL);
		json__u64(&j, "pid", p->pid);
		json__u64(&j, "start", p->start);
		json__str(&j, "comm", dump__str(d, p->comm));
		json__bool(&j, "exited", p->flags & FR_DPROC_EXITED);
		json__u64(&j, "total_ns", sp->total_ns);
		json__obj(&j, "kinds");
		for (unsigned k = 0; k < FR_DSTALL_NKINDS; k++) {
			if (!stallview__count(&sp->k[k]) && !sp->k[k].n_all)
				continue;
			json__obj(&j, dump__stall_kind_name(k));
			json_kind(&j, d, &sp->k[k]);
			json__end_obj(&j);
		}
		json__end_obj(&j);
		json__end_obj(&j);
	}
	json__end_arr(&j);
	json__obj(&j, "psi");
	json__bool(&j, "present", sv->has_psi);
	if (sv->has_psi) {
		json__u64(&j, "from_ts", sv->psi_from);
		json__u64(&j, "to_ts", sv->psi_to);
		json__u64(&j, "some_us", sv->psi_some_us);
		json__u64(&j, "full_us", sv->psi_full_us);
		json__u64(&j, "recorded_memory_stall_ns", sv->mem_ns);
		json__str(&j, "note", stallview__psi_note());
	}
	json__end_obj(&j);
	json__end_obj(&j);
	putchar('\n');
}

int cmd_stalls(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 'n' },
		{ "kind", required_argument, NULL, 'k' },
		FR_FILTER_WHO_OPTIONS,
		FR_FILTER_WHEN_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	unsigned long top = FR_STALLS_TOP;
	struct filter flt = {};
	struct stallview sv;
	bool json = false;
	struct fr_dump d;
	char *end;
	int c, rc;

	optind = 1;
	opterr = 0;
	rank_kind = -1;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'n':
			top = strtoul(optarg, &end, 10);
			if (*end || !*optarg || !top || top > 1000000)
				return cli_usage_error("stalls", "bad --top '%s'; accepted: 1..1000000", optarg);
			break;
		case 'k':
			rank_kind = dump__stall_kind_by_name(optarg);
			if (rank_kind < 0)
				return cli_usage_error("stalls", "unknown --kind '%s'; accepted: reclaim, memcg, "
						       "compaction, throttle, blocked, sleep", optarg);
			break;
		FR_FILTER_CASES:
			if (filter__option(&flt, "stalls", c, optarg))
				return FR_EXIT_USAGE;
			break;
		default:
			return cli_common_option("stalls", c, argv, usage);
		}
	}
	rc = cli_open_dump("stalls", argc, argv, optind, &d);
	if (rc)
		return rc;
	if (stallview__init(&sv, &d, &flt)) {
		dump__free(&d);
		fprintf(stderr, "flightrec stalls: failed to fold the stalls: %s\n", strerror(ENOMEM));
		return FR_EXIT_FAIL;
	}
	if (rank_kind >= 0)
		qsort(sv.procs, sv.nprocs, sizeof(*sv.procs), cmp_rank);
	if (json)
		json_out(&d, &sv);
	else
		text(&d, &sv, (uint32_t)top);
	stallview__fini(&sv);
	dump__free(&d);
	return fflush(stdout) ? FR_EXIT_FAIL : FR_EXIT_OK;
}
