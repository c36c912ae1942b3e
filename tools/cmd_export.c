// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_export.c - "flightrec export": the dump as a Chrome/Perfetto trace,
 * a pprof profile or folded stacks (export.h), to stdout or a file. A file
 * is written beside its final name and renamed into place once complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "export.h"
#include "filter.h"
#include "view.h"

enum export_format {
	FR_EXPORT_NONE,
	FR_EXPORT_CHROME,
	FR_EXPORT_PPROF,
	FR_EXPORT_FOLDED,
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: flightrec export --format chrome|pprof|folded [-o FILE] [--pid=PID[,PID]]\n"
		"                        [--from=SEC] [--to=SEC] DUMP\n"
		"\n"
		"Write the dump in a format other tools read:\n"
		"  chrome  Trace Event Format JSON for ui.perfetto.dev and chrome://tracing:\n"
		"          a track per process incarnation (pid, start), CPU samples,\n"
		"          exits, forks, execs, OOM kills, stalls and blocks off the\n"
		"          CPU as slices on their thread, RSS, memory and PSI counters,\n"
		"          triggers\n"
		"  pprof   gzip-compressed profile.proto for go tool pprof, Pyroscope,\n"
		"          Parca: CPU samples and time blocked off the CPU (sample type\n"
		"          offcpu/nanoseconds) per stack, incarnation and thread, with\n"
		"          pid, start, comm and thread labels and build-ids\n"
		"  folded  collapsed stacks, as 'flightrec folded' prints them (with\n"
		"          --pid, prefixed comm-PID)\n"
		"\n"
		"  --format FMT, -f FMT  chrome, pprof or folded\n"
		"  -o FILE, --output=FILE  write FILE (replaced once complete) instead of\n"
		"                     stdout; pprof is never written to a terminal\n"
		FR_FILTER_HELP
		"  --help             show this help\n"
		"  --version          show the version\n");
}

/* ------------------------------------------------------------------ CLI */

struct export_args {
	enum export_format format;
	const char *output;
	const char *from, *to;	/* as given, for "flightrec folded" */
	struct filter flt;
	const char *dump;
};

/* Parse argv into @a. Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, struct export_args *a)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		FR_FILTER_WHO_OPTIONS,
		FR_FILTER_WHEN_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			a->format = !strcmp(optarg, "chrome") ? FR_EXPORT_CHROME :
				    !strcmp(optarg, "pprof") ? FR_EXPORT_PPROF :
				    !strcmp(optarg, "folded") ? FR_EXPORT_FOLDED : FR_EXPORT_NONE;
			if (a->format == FR_EXPORT_NONE)
				return cli_usage_error("export", "unknown --format '%s'; accepted: chrome, pprof, folded",
						       optarg);
			break;
		case 'o':
			if (!*optarg)
				return cli_usage_error("export", "empty -o FILE");
			a->output = optarg;
			break;
		FR_FILTER_CASES:
			if (filter__option(&a->flt, "export", c, optarg))
				return FR_EXIT_USAGE;
			if (c == FR_OPT_FROM)
				a->from = optarg;
			else if (c == FR_OPT_TO)
				a->to = optarg;
			break;
		default:
			return cli_common_option("export", c, argv, usage);
		}
	}
	if (a->format == FR_EXPORT_NONE)
		return cli_usage_error("export", "missing --format; accepted: chrome, pprof, folded");
	if (cli_dump_arg("export", argc, argv, optind))
		return FR_EXIT_USAGE;
	a->dump = argv[optind];
	if (a->format == FR_EXPORT_PPROF && !a->output && isatty(STDOUT_FILENO))
		return cli_usage_error("export", "refusing to write binary pprof to a terminal; use -o FILE or redirect stdout");
	return -1;
}

/*
 * "flightrec folded" itself, with the same filter, so that the output is
 * the same byte for byte. Its stdout is @fd for the call. Exit code.
 */
static int run_folded(const struct export_args *a, int fd)
{
	char pids[FR_FILTER_PIDS * 11 + 8] = "--pid=", from[64], to[64], *argv[6];
	int argc = 0, saved = -1, rc;

	argv[argc++] = "folded";
	if (a->flt.npids) {
		for (uint32_t i = 0; i < a->flt.npids; i++)
			snprintf(pids + strlen(pids), sizeof(pids) - strlen(pids), "%s%u",
				 i ? "," : "", a->flt.pids[i]);
		argv[argc++] = pids;
	}
	if (a->from) {
		snprintf(from, sizeof(from), "--from=%s", a->from);
		argv[argc++] = from;
	}
	if (a->to) {
		snprintf(to, sizeof(to), "--to=%s", a->to);
		argv[argc++] = to;
	}
	argv[argc++] = (char *)a->dump;
	argv[argc] = NULL;

	fflush(stdout);
	clearerr(stdout);
	if (fd != STDOUT_FILENO) {
		saved = dup(STDOUT_FILENO);
		if (saved < 0 || dup2(fd, STDOUT_FILENO) < 0) {
			fprintf(stderr, "flightrec export: failed to redirect output to '%s': %s\n",
				a->output, strerror(errno));
			if (saved >= 0)
				close(saved);
			return FR_EXIT_FAIL;
		}
	}
	rc = cmd_folded(argc, argv);
	if (fflush(stdout) || ferror(stdout)) {
		if (!rc)
			fprintf(stderr, "flightrec export: failed to write '%s': %s\n",
				a->output ? a->output : "stdout", strerror(errno ? errno : EIO));
		rc = rc ? rc : FR_EXIT_FAIL;
	}
	if (saved >= 0) {
		dup2(saved, STDOUT_FILENO);
		close(saved);
	}
	return rc;
}

/* Export the loaded dump @d to @f. Exit code; the message is printed. */
static int run_exporter(const struct export_args *a, const struct fr_dump *d, FILE *f)
{
	int err = a->format == FR_EXPORT_CHROME ? export__chrome(d, &a->flt, f) :
		  export__pprof(d, &a->flt, f);

	if (!err && fflush(f))
		err = errno ? -errno : -EIO;
	if (err) {
		fprintf(stderr, "flightrec export: failed to %s '%s': %s\n",
			err == -ENOMEM ? "build the export of" : "write",
			err == -ENOMEM ? a->dump : a->output ? a->output : "stdout", strerror(-err));
		return FR_EXIT_FAIL;
	}
	return FR_EXIT_OK;
}

/* Write the export into @tmp (an open fd), then rename it to a->output. */
static int export_to_file(const struct export_args *a, const struct fr_dump *d, int fd,
			  const char *tmp)
{
	FILE *f = NULL;
	int rc;

	if (a->format == FR_EXPORT_FOLDED) {
		rc = run_folded(a, fd);
		close(fd);
	} else {
		f = fdopen(fd, "w");
		if (!f) {
			fprintf(stderr, "flightrec export: failed to open '%s': %s\n", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			return FR_EXIT_FAIL;
		}
		rc = run_exporter(a, d, f);
		if (fclose(f) && !rc) {
			fprintf(stderr, "flightrec export: failed to write '%s': %s\n", a->output,
				strerror(errno));
			rc = FR_EXIT_FAIL;
		}
	}
	if (!rc && rename(tmp, a->output)) {
		fprintf(stderr, "flightrec export: failed to rename '%s' to '%s': %s\n", tmp,
			a->output, strerror(errno));
		rc = FR_EXIT_FAIL;
	}
	if (rc)
		unlink(tmp);
	return rc;
}

int cmd_export(int argc, char **argv)
{
	struct export_args a = {};
	char *tmp = NULL;
	struct fr_dump d;
	int rc, fd = -1;

	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (a.format == FR_EXPORT_FOLDED && !a.output)
		return run_folded(&a, STDOUT_FILENO);
	if (a.output) {
		if (asprintf(&tmp, "%s.tmp.%d", a.output, (int)getpid()) < 0) {
			fprintf(stderr, "flightrec export: out of memory\n");
			return FR_EXIT_FAIL;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0) {
			fprintf(stderr, "flightrec export: failed to create '%s': %s\n", tmp, strerror(errno));
			free(tmp);
			return FR_EXIT_FAIL;
		}
	}
	if (a.format == FR_EXPORT_FOLDED) {
		rc = export_to_file(&a, NULL, fd, tmp);
		free(tmp);
		return rc;
	}
	rc = cli_load(a.dump, &d);
	if (rc) {
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return rc;
	}
	rc = a.output ? export_to_file(&a, &d, fd, tmp) : run_exporter(&a, &d, stdout);
	dump__free(&d);
	free(tmp);
	return rc;
}
