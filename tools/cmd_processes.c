// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_processes.c - "flightrec processes": the dump's process table, one
 * row per incarnation (pid, start).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "filter.h"
#include "json.h"
#include "view.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: flightrec processes [--json] [--pid=PID[,PID]] DUMP\n"
		"\n"
		"List every process incarnation in the dump: the live processes at\n"
		"the snapshot and every incarnation with events in the window.\n"
		"START is the incarnation's start (CLOCK_BOOTTIME, seconds); RSS is\n"
		"at the snapshot for live processes, at death for exited ones;\n"
		"EXIT is the status and, after '@', the time of death.\n"
		"\n"
		"  --json             one JSON array of objects, threads and cgroup included\n"
		"  --pid=PID[,PID]    only these PIDs: every incarnation of each\n"
		"  --cgroup=PATH      only processes in cgroup PATH or below it\n"
		"  --help             show this help\n"
		"  --version          show the version\n");
}

static const char *state_of(const struct fr_dump_proc *p, char *buf, size_t len)
{
	if (p->flags & FR_DPROC_EXITED)
		snprintf(buf, len, "exited");
	else if (p->state)
		snprintf(buf, len, "%c", (char)p->state);
	else
		snprintf(buf, len, "%s", p->flags & FR_DPROC_LIVE ? "live" : "?");
	return buf;
}

static const char *exit_of(const struct fr_dump_proc *p, char *buf, size_t len)
{
	char st[48];

	if (!(p->flags & FR_DPROC_EXITED))
		return "-";
	snprintf(buf, len, "%s @%" PRIu64 ".%06" PRIu64, view_status(p->exit_code, st, sizeof(st)),
		 p->exit_ts / 1000000000, p->exit_ts % 1000000000 / 1000);
	return buf;
}

static void text_procs(const struct fr_dump *d, const struct view *v,
		       const struct filter *flt)
{
	char st[16], rss[32], code[96], comm[80];
	static char exe[FR_VIEW_TEXT_MAX], cmd[FR_VIEW_TEXT_MAX];

	printf("%8s %20s %8s %-7s %10s %8s %-34s %-16s %s\n", "PID", "START", "PPID", "STATE",
	       "RSS", "SAMPLES", "EXIT", "COMM", "EXE / CMDLINE");
	for (uint32_t i = 0; i < d->nproc; i++) {
		const struct fr_dump_proc *p = &d->proc[i];

		if (!filter__proc(flt, d, i))
			continue;
		printf("%8u %10" PRIu64 ".%09" PRIu64 " %8u %-7s %10s %8" PRIu64 " %-34s %-16s %s%s%s\n",
		       p->pid, p->start / 1000000000, p->start % 1000000000, p->ppid,
		       state_of(p, st, sizeof(st)), view_bytes(p->rss, rss, sizeof(rss)),
		       v->proc_samples[i], exit_of(p, code, sizeof(code)),
		       view_str(d, p->comm, comm, sizeof(comm)), view_str(d, p->exe, exe, sizeof(exe)),
		       *dump__str(d, p->cmdline) ? "  " : "", view_str(d, p->cmdline, cmd, sizeof(cmd)));
	}
}

static void json_procs(const struct fr_dump *d, const struct view *v,
		       const struct filter *flt)
{
	struct json j;
	char buf[64];

	json__init(&j, stdout);
	json__arr(&j, NULL);
	for (uint32_t i = 0; i < d->nproc; i++) {
		const struct fr_dump_proc *p = &d->proc[i];

		if (!filter__proc(flt, d, i))
			continue;
		json__obj(&j, NULL);
		json__u64(&j, "pid", p->pid);
		json__u64(&j, "start", p->start);
		json__u64(&j, "ppid", p->ppid);
		json__str(&j, "comm", dump__str(d, p->comm));
		json__str(&j, "exe", dump__str(d, p->exe));
		json__str(&j, "cmdline", dump__str(d, p->cmdline));
		json__str(&j, "state", state_of(p, buf, sizeof(buf)));
		json__bool(&j, "live", p->flags & FR_DPROC_LIVE);
		json__bool(&j, "exited", p->flags & FR_DPROC_EXITED);
		json__bool(&j, "kernel_thread", p->flags & FR_DPROC_KTHREAD);
		json__bool(&j, "in_window", p->flags & FR_DPROC_EVENTS);
		if (p->flags & FR_DPROC_EXITED) {
			json__u64(&j, "exit_ts", p->exit_ts);
			json__i64(&j, "exit_code", p->exit_code);
			json__str(&j, "exit_status", view_status(p->exit_code, buf, sizeof(buf)));
		}
		json__str(&j, "cgroup", dump__str(d, p->cgroup));
		json__str(&j, "memcg", dump__str(d, p->memcg));
		json__str(&j, "container", dump__str(d, p->container));
		json__u64(&j, "cgroup_id", p->cgroup_id);
		json__u64(&j, "nspid", p->nspid);
		if (p->has_mem) {
			json__i64(&j, "oom_score_adj", p->oom_score_adj);
			json__u64(&j, "rss_anon", p->rss_anon);
			json__u64(&j, "rss_file", p->rss_file);
			json__u64(&j, "rss_shmem", p->rss_shmem);
			json__u64(&j, "swap", p->swap);
			json__u64(&j, "pgtables", p->pgtables);
			json__u64(&j, "mem_stamp", p->mem_stamp);
		}
		json__u64(&j, "rss", p->rss);
		json__u64(&j, "stamp", p->stamp);
		json__u64(&j, "samples", v->proc_samples[i]);
		json__arr(&j, "threads");
		for (uint32_t t = 0; t < d->nthread; t++) {
			if (d->thread[t].proc != i)
				continue;
			json__obj(&j, NULL);
			json__u64(&j, "tid", d->thread[t].tid);
			json__str(&j, "name", dump__str(d, d->thread[t].name));
			json__end_obj(&j);
		}
		json__end_arr(&j);
		json__end_obj(&j);
	}
	json__end_arr(&j);
	putchar('\n');
}

int cmd_processes(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		FR_FILTER_WHO_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	struct filter flt = {};
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
		FR_FILTER_CASES:
			if (filter__option(&flt, "processes", c, optarg))
				return FR_EXIT_USAGE;
			break;
		default:
			return cli_common_option("processes", c, argv, usage);
		}
	}
	rc = cli_open_view("processes", argc, argv, optind, &d, &v);
	if (rc)
		return rc;
	if (json)
		json_procs(&d, &v, &flt);
	else
		text_procs(&d, &v, &flt);
	view__fini(&v);
	dump__free(&d);
	return FR_EXIT_OK;
}
