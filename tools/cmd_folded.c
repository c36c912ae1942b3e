// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_folded.c - "flightrec folded": collapsed stacks, root first, one
 * "comm;root;...;leaf COUNT" line per distinct stack, the input of
 * flamegraph.pl and speedscope: of the CPU samples, or with --offcpu of
 * the blocks off the CPU, weighted by the time blocked.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "filter.h"
#include "view.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: flightrec folded [--offcpu] [--python] [--pid[=PID,...]] [--from=SEC] [--to=SEC] DUMP\n"
		"\n"
		"Print the window's CPU samples as collapsed stacks, root first:\n"
		"  comm;root;...;leaf COUNT\n"
		"Kernel frames end in _[k]; unresolved frames are hex addresses.\n"
		"\n"
		"  --offcpu    the time threads were blocked off the CPU instead, each\n"
		"              stack weighted by its nanoseconds blocked (the recorded\n"
		"              offcpu events: blocks of [stalls] min_block or more)\n"
		"  --python    in stacks with Python functions, the interpreter's own\n"
		"              native frames folded away: the Python functions, and\n"
		"              the native and kernel frames the innermost one called\n"
		"  --pid       prefix each stack with comm-PID instead of comm;\n"
		"  --pid=PID   and keep only the samples of these PIDs\n"
		"  --cgroup=PATH  only the samples of processes in cgroup PATH or below\n"
		"  --from=SEC, --to=SEC  only samples from/up to SEC seconds after the\n"
		"              trigger (negative: before it)\n"
		"  --help      show this help\n"
		"  --version   show the version\n");
}

struct line {
	char *text;
	uint64_t count;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

/*
 * With --python: the frame of @s from which native user frames are kept,
 * the innermost Python function's (those below it, what it called, stay;
 * the interpreter's frames around the Python ones go); kn + un when the
 * stack has no Python frame (all stay).
 */
static uint32_t python_from(const struct fr_dump *d, const struct fr_dump_stack *s)
{
	for (uint32_t k = s->kn; k < s->kn + s->un; k++)
		if (s->frames[k] < d->nframe && d->frame[s->frames[k]].kind == FR_FRAME_PYTHON)
			return k;
	return s->kn + s->un;
}

/* "comm[-pid];root;...;leaf" for one sample, malloc'd. */
static char *fold(const struct fr_dump *d, const struct fr_dump_event *e, bool pid, bool py)
{
	const struct fr_dump_proc *p = &d->proc[e->proc];
	char *out = NULL, name[600], comm[80];
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	view_text(dump__str(d, e->comm)[0] ? dump__str(d, e->comm) : dump__str(d, p->comm),
		  comm, sizeof(comm));
	/* ';' separates frames in the folded format. */
	for (char *c = comm; *c; c++)
		if (*c == ';')
			*c = ':';
	fputs(comm, f);
	if (pid)
		fprintf(f, "-%u", p->pid);
	if (!e->stack) {
		fputs(";[no_stack]", f);
	} else {
		const struct fr_dump_stack *s = &d->stack[e->stack - 1];
		uint32_t from = py ? python_from(d, s) : s->kn + s->un;

		for (uint32_t k = s->kn + s->un; k-- > 0;) {
			if (k > from && s->frames[k] < d->nframe &&
			    d->frame[s->frames[k]].kind != FR_FRAME_PYTHON)
				continue;
			fprintf(f, ";%s", view_folded_frame(d, s->frames[k], name, sizeof(name)));
		}
	}
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	for (char *c = out; *c; c++)
		if (*c == ' ')
			*c = '_';
	return out;
}

/*
 * Fold every sample (with @offcpu: every block off the CPU, weighted by
 * its nanoseconds), sort, and print each distinct line with its count.
 */
static int print_folded(const struct fr_dump *d, bool pid, bool offcpu, bool py,
			const struct filter *flt)
{
	unsigned type = offcpu ? FR_DEV_OFFCPU : FR_DEV_SAMPLE;
	struct line *lines = calloc(d->nev + 1, sizeof(*lines));
	uint32_t n = 0;
	int rc = FR_EXIT_OK;

	if (!lines)
		return FR_EXIT_FAIL;
	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];

		if (e->type != type || !filter__match(flt, d, e))
			continue;
		lines[n].text = fold(d, e, pid, py);
		if (!lines[n].text) {
			rc = FR_EXIT_FAIL;
			goto out;
		}
		lines[n++].count = offcpu ? e->ts - e->off.begin : 1;
	}
	qsort(lines, n, sizeof(*lines), cmp_line);
	for (uint32_t i = 0; i < n;) {
		uint64_t sum = lines[i].count;
		uint32_t j = i + 1;

		while (j < n && !strcmp(lines[i].text, lines[j].text))
			sum += lines[j++].count;
		printf("%s %" PRIu64 "\n", lines[i].text, sum);
		i = j;
	}
out:
	for (uint32_t i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	return rc;
}

int cmd_folded(int argc, char **argv)
{
	static const struct option opts[] = {
		/* --pid takes no PID here too: a frame per process (see usage). */
		{ "pid", optional_argument, NULL, FR_OPT_PID },
		{ "offcpu", no_argument, NULL, 'o' },
		{ "python", no_argument, NULL, 'y' },
		{ "cgroup", required_argument, NULL, FR_OPT_CGROUP },
		FR_FILTER_WHEN_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	struct filter flt = {};
	bool pid = false, offcpu = false, py = false;
	struct fr_dump d;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			offcpu = true;
			break;
		case 'y':
			py = true;
			break;
		FR_FILTER_CASES:
			pid |= c == FR_OPT_PID;
			if ((c != FR_OPT_PID || optarg) && filter__option(&flt, "folded", c, optarg))
				return FR_EXIT_USAGE;
			break;
		default:
			return cli_common_option("folded", c, argv, usage);
		}
	}
	rc = cli_open_dump("folded", argc, argv, optind, &d);
	if (rc)
		return rc;
	rc = print_folded(&d, pid, offcpu, py, &flt);
	if (rc)
		fprintf(stderr, "flightrec: out of memory\n");
	dump__free(&d);
	return rc;
}
