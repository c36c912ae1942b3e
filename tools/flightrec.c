// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * flightrec.c - the reader: turns a flightrecd dump into answers.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "view.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "show", cmd_show, "summary: trigger, window, counts, losses, top processes and stacks" },
	{ "events", cmd_events, "one line per event, in time order" },
	{ "folded", cmd_folded, "collapsed stacks for flame graphs (flamegraph.pl, speedscope)" },
	{ "export", cmd_export, "the dump for other tools: Perfetto/Chrome trace, pprof, folded" },
	{ "processes", cmd_processes, "the process table: every incarnation in the dump" },
	{ "memory", cmd_memory, "who ate the memory: RSS growers, cgroups at their limit, OOM dossiers" },
	{ "stalls", cmd_stalls, "who was stuck, where and how long: reclaim, compaction and blocked time" },
	{ "report", cmd_report, "one self-contained HTML page: flame graph, timeline, processes" },
	{ "snapshot", cmd_snapshot, "ask the running flightrecd for a dump now; print its path" },
	{ "status", cmd_status, "what the running flightrecd is doing: window, rates, triggers, dumps" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: flightrec COMMAND [OPTIONS] [DUMP]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nRun 'flightrec COMMAND --help' for a command's options.\n"
		   "Exit codes: 0 ok, 1 runtime error (a dump that cannot be read, no daemon),\n"
		   "2 usage error.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return FR_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return FR_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("flightrec %s (dump format %d.%d)\n", FR_VERSION, FR_DUMP_MAJOR,
		       FR_DUMP_MINOR);
		return FR_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "flightrec: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return FR_EXIT_USAGE;
}
