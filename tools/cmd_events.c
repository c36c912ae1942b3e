// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_events.c - "flightrec events": every event, in time order.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "evtype.h"
#include "filter.h"
#include "json.h"
#include "view.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: flightrec events [--json] [--pid PID] [--cgroup PATH] [--from SEC] [--to SEC]\n"
		"                        [--type TYPE] DUMP\n"
		"\n"
		"Print one line per event, in time order. Times and process start\n"
		"times are CLOCK_BOOTTIME; a process is its (pid, start) incarnation.\n"
		"\n"
		"  --json       JSON Lines: ts, type, pid, tid, start, comm on every\n"
		"               event; samples add stack (leaf first), exits add code,\n"
		"               execs add filename, forks add child_pid and child_start_ns\n"
		FR_FILTER_HELP
		"  --type TYPE  only events of this type: sample, exit, fork, exec, oom,\n"
		"               rss, oom_score_adj, memory, memcg, pressure, stall, offcpu,\n"
		"               stallsum (rss: the RSS ledger; memory, memcg: the system's\n"
		"               and the memory cgroups' memory every second; pressure: the\n"
		"               PSI history, avg10 and total every second; stall: a reclaim,\n"
		"               compaction or throttle stall; offcpu: a thread blocked off\n"
		"               the CPU; stallsum: the shorter ones, summed each second)\n"
		"  --help       show this help\n"
		"  --version    show the version\n");
}

static void json_event(const struct fr_dump *d, const struct fr_dump_event *e)
{
	const struct fr_dump_proc *p = &d->proc[e->proc];
	struct json j;
	char buf[FR_VIEW_FRAME_MAX];

	json__init(&j, stdout);
	json__obj(&j, NULL);
	json__u64(&j, "ts", e->ts);
	json__str(&j, "type", dump__event_type_name(e->type));
	if (e->type == FR_DEV_PRESSURE) {
		/* Not a process event: pid, tid and start are 0. */
		json__u64(&j, "pid", 0);
		json__u64(&j, "tid", 0);
		json__u64(&j, "start", 0);
		json__str(&j, "comm", "");
		json__str(&j, "resource", view_resource(e->psi.resource));
		json__str(&j, "source", *dump__str(d, e->comm) ? dump__str(d, e->comm) : "system");
		json__f64(&j, "some_avg10", e->psi.some_avg10 / 100.0);
		json__f64(&j, "some_avg60", e->psi.some_avg60 / 100.0);
		json__f64(&j, "some_avg300", e->psi.some_avg300 / 100.0);
		json__u64(&j, "some_total", e->psi.some_total);
		if (e->psi.has_full) {
			json__f64(&j, "full_avg10", e->psi.full_avg10 / 100.0);
			json__f64(&j, "full_avg60", e->psi.full_avg60 / 100.0);
			json__f64(&j, "full_avg300", e->psi.full_avg300 / 100.0);
			json__u64(&j, "full_total", e->psi.full_total);
		}
		json__end_obj(&j);
		putchar('\n');
		return;
	}
	if (!dump__event_has_proc(e->type)) {
		json__u64(&j, "pid", 0);
		json__u64(&j, "tid", 0);
		json__u64(&j, "start", 0);
		json__str(&j, "comm", "");
		view_reading_json(&j, d, e);
		json__end_obj(&j);
		putchar('\n');
		return;
	}
	json__u64(&j, "pid", p->pid);
	json__u64(&j, "tid", e->tid);
	json__u64(&j, "start", p->start);
	json__str(&j, "comm", dump__str(d, e->comm));
	json__u64(&j, "cpu", e->cpu);
	if (e->type == FR_DEV_SAMPLE) {
		json__arr(&j, "stack");
		if (e->stack) {
			const struct fr_dump_stack *s = &d->stack[e->stack - 1];

			for (uint32_t k = 0; k < s->kn + s->un; k++)
				json__str(&j, NULL, view_frame(d, s->frames[k], buf, sizeof(buf)));
		}
		json__end_arr(&j);
		json__u64(&j, "kernel_frames", e->stack ? d->stack[e->stack - 1].kn : 0);
		json__u64(&j, "flags", e->flags);
		json__str(&j, "user_stack_end", dump__uend_name(dump__uend(e)));
		if (e->unwound & FR_DUNWOUND_LATER)
			json__bool(&j, "walked_later", true);
	} else {
		view_event_json(&j, d, e);
		/* Aliases without the unit: flightrec(1) has always listed them. */
		if (e->type == FR_DEV_EXIT) {
			json__u64(&j, "utime", e->exit.utime);
			json__u64(&j, "stime", e->exit.stime);
		} else if (e->type == FR_DEV_FORK) {
			json__u64(&j, "child_start", d->proc[e->child].start);
		}
	}
	json__end_obj(&j);
	putchar('\n');
}

/* Stack index + 1 @stack of an event, leaf first, after @lead; "(no stack)" for 0. */
static void text_stack(const struct fr_dump *d, uint32_t stack, const char *lead)
{
	char buf[FR_VIEW_TEXT_MAX];

	if (!stack) {
		printf(" (no stack)");
		return;
	}
	for (uint32_t k = 0; k < d->stack[stack - 1].kn + d->stack[stack - 1].un; k++)
		printf("%s%s", k ? " <- " : lead,
		       view_frame_text(d, d->stack[stack - 1].frames[k], buf, sizeof(buf)));
}

/* A stall or a block: kind, length, details, then its stack. */
static void text_stall(const struct fr_dump *d, const struct fr_dump_event *e)
{
	char buf[FR_VIEW_TEXT_MAX];
	bool stall = e->type == FR_DEV_STALL;
	uint64_t begin = stall ? e->stall.begin : e->off.begin;

	printf(" %s %.3f ms", dump__stall_kind_name(stall ? e->stall.kind : e->off.kind),
	       (e->ts - begin) / 1e6);
	if (stall && (e->stall.kind == FR_DSTALL_RECLAIM || e->stall.kind == FR_DSTALL_MEMCG))
		printf(" reclaimed=%" PRIu64, e->stall.result);
	if (stall && e->stall.order >= 0)
		printf(" order=%d", e->stall.order);
	if (stall && e->stall.gfp)
		printf(" gfp=0x%x", e->stall.gfp);
	if (stall && e->stall.memcg)
		printf(" memcg=%s", view_str(d, e->stall.memcg, buf, sizeof(buf)));
	text_stack(d, e->stack, " ");
}

static void text_event(const struct fr_dump *d, const struct fr_dump_event *e)
{
	const struct fr_dump_proc *p = &d->proc[e->proc];
	char buf[FR_VIEW_TEXT_MAX], b2[64], b3[64], comm[80];

	if (e->type == FR_DEV_PRESSURE) {
		printf("%" PRIu64 ".%09" PRIu64 " %-8s %s %s some avg10=%u.%02u%% total=%" PRIu64 "us",
		       e->ts / 1000000000, e->ts % 1000000000, "pressure", view_resource(e->psi.resource),
		       *dump__str(d, e->comm) ? view_str(d, e->comm, buf, sizeof(buf)) : "system",
		       e->psi.some_avg10 / 100, e->psi.some_avg10 % 100, e->psi.some_total);
		if (e->psi.has_full)
			printf(" full avg10=%u.%02u%% total=%" PRIu64 "us", e->psi.full_avg10 / 100,
			       e->psi.full_avg10 % 100, e->psi.full_total);
		putchar('\n');
		return;
	}
	if (e->type == FR_DEV_MEMSYS) {
		printf("%" PRIu64 ".%09" PRIu64 " %-8s available=%s free=%s swap_free=%s pgscan_direct=%" PRIu64
		       " allocstall=%" PRIu64 " refault_file=%" PRIu64 " oom_kill=%" PRIu64 "\n",
		       e->ts / 1000000000, e->ts % 1000000000, "memory",
		       view_bytes(e->msys.v[FR_MSYS_MEM_AVAILABLE], b2, sizeof(b2)),
		       view_bytes(e->msys.v[FR_MSYS_MEM_FREE], b3, sizeof(b3)),
		       view_bytes(e->msys.v[FR_MSYS_SWAP_FREE], buf, sizeof(buf)),
		       e->msys.v[FR_MSYS_PGSCAN_DIRECT], e->msys.v[FR_MSYS_ALLOCSTALL],
		       e->msys.v[FR_MSYS_REFAULT_FILE], e->msys.v[FR_MSYS_OOM_KILL]);
		return;
	}
	if (e->type == FR_DEV_MEMCG) {
		printf("%" PRIu64 ".%09" PRIu64 " %-8s %s usage=%s limit=%s max_events=%" PRIu64
		       " oom_kill=%" PRIu64 "\n", e->ts / 1000000000, e->ts % 1000000000, "memcg",
		       view_str(d, e->comm, buf, sizeof(buf)), view_bytes(e->mcg.usage, b2, sizeof(b2)),
		       e->mcg.flags & FR_DMCG_UNLIMITED ? "max" : view_bytes(e->mcg.limit, b3, sizeof(b3)),
		       e->mcg.ev_max, e->mcg.ev_oom_kill);
		return;
	}

	printf("%" PRIu64 ".%09" PRIu64 " %-6s %u/%u start=%" PRIu64 ".%09" PRIu64 " %-16s cpu%u",
	       e->ts / 1000000000, e->ts % 1000000000, dump__event_type_name(e->type),
	       p->pid, e->tid, p->start / 1000000000, p->start % 1000000000,
	       view_str(d, e->comm, comm, sizeof(comm)), e->cpu);
	/* No default: a type added to enum fr_dump_event_type must be printed. */
	switch ((enum fr_dump_event_type)e->type) {
	case FR_DEV_SAMPLE:
		text_stack(d, e->stack, " ");
		break;
	case FR_DEV_EXIT:
		printf(" %s rss=%s peak=%s user=%.3fs sys=%.3fs", view_status(e->exit.code, buf, sizeof(buf)),
		       view_bytes(e->exit.rss_anon + e->exit.rss_file + e->exit.rss_shmem, b2, sizeof(b2)),
		       view_bytes(e->exit.rss_peak, b3, sizeof(b3)),
		       e->exit.utime / 1e9, e->exit.stime / 1e9);
		break;
	case FR_DEV_FORK:
		printf(" child %u start=%" PRIu64 ".%09" PRIu64, d->proc[e->child].pid,
		       d->proc[e->child].start / 1000000000, d->proc[e->child].start % 1000000000);
		break;
	case FR_DEV_EXEC:
		printf(" %s", view_str(d, e->filename, buf, sizeof(buf)));
		break;
	case FR_DEV_OOM:
		printf(" OOM victim rss=%s",
		       view_bytes(e->oom.rss_anon + e->oom.rss_file + e->oom.rss_shmem, b2, sizeof(b2)));
		if (e->oom.invoker)
			printf(" invoked by %u (%s)", d->proc[e->oom.invoker - 1].pid,
			       view_str(d, d->proc[e->oom.invoker - 1].comm, buf, sizeof(buf)));
		printf(" %s", e->oom.memcg ? view_str(d, e->oom.memcg, buf, sizeof(buf)) : "global");
		if (e->oom.memcg_limit)
			printf(" usage=%s limit=%s", view_bytes(e->oom.memcg_usage, b2, sizeof(b2)),
			       view_bytes(e->oom.memcg_limit, b3, sizeof(b3)));
		break;
	case FR_DEV_RSS:
		printf(" %s=%s (%s", dump__rss_member_name(e->rss.member),
		       view_bytes(e->rss.value, b2, sizeof(b2)), dump__rss_why_name(e->rss.why));
		if (e->rss.changed != e->ts)
			printf(", since %" PRIu64 ".%09" PRIu64, e->rss.changed / 1000000000,
			       e->rss.changed % 1000000000);
		if (e->rss.by)
			printf(", by pid %u", e->rss.by);
		putchar(')');
		break;
	case FR_DEV_OOMADJ:
		printf(" oom_score_adj=%d by pid %u", e->oomadj.value, e->oomadj.by);
		break;
	case FR_DEV_RSS_SITE:
		printf(" %s +%s", dump__rss_member_name(e->site.member),
		       view_bytes(e->site.grown, b2, sizeof(b2)));
		text_stack(d, e->stack, " in ");
		break;
	case FR_DEV_STALL:
	case FR_DEV_OFFCPU:
		text_stall(d, e);
		break;
	case FR_DEV_STALLSUM:
		printf(" %s: %" PRIu64 " short (%.3f ms), %" PRIu64 " lost (%.3f ms), %" PRIu64
		       " in all (%.3f ms)", dump__stall_kind_name(e->ssum.kind), e->ssum.n_short,
		       e->ssum.ns_short / 1e6, e->ssum.n_lost, e->ssum.ns_lost / 1e6, e->ssum.n_all,
		       e->ssum.ns_all / 1e6);
		break;
	case FR_DEV_PRESSURE:
	case FR_DEV_MEMSYS:
	case FR_DEV_MEMCG:
	case FR_DEV_NTYPES:
		break;	/* no process: printed above */
	}
	putchar('\n');
}

static int type_of(const char *name)
{
	for (unsigned t = FR_DEV_SAMPLE; t < FR_DEV_NTYPES; t++)
		if (!strcmp(name, dump__event_type_name(t)))
			return t;
	return -1;
}

/* The names of the event types, from the table, ", "-separated into @buf. */
static const char *type_names(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (unsigned t = FR_DEV_SAMPLE; t < FR_DEV_NTYPES && n < len; t++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", dump__event_type_name(t));
	return buf;
}

int cmd_events(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		FR_FILTER_WHO_OPTIONS,
		FR_FILTER_WHEN_OPTIONS,
		{ "type", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	struct filter flt = {};
	bool json = false;
	int c, rc, type = 0;
	char names[256];
	struct fr_dump d;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		FR_FILTER_CASES:
			if (filter__option(&flt, "events", c, optarg))
				return FR_EXIT_USAGE;
			break;
		case 't':
			type = type_of(optarg);
			if (type < 0)
				return cli_usage_error("events", "unknown --type '%s'; accepted: %s", optarg,
						       type_names(names, sizeof(names)));
			break;
		default:
			return cli_common_option("events", c, argv, usage);
		}
	}
	rc = cli_open_dump("events", argc, argv, optind, &d);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < d.nev; i++) {
		const struct fr_dump_event *e = &d.ev[i];

		if (!filter__match(&flt, &d, e) || (type && e->type != type))
			continue;
		if (json)
			json_event(&d, e);
		else
			text_event(&d, e);
	}
	dump__free(&d);
	return fflush(stdout) ? FR_EXIT_FAIL : FR_EXIT_OK;
}
