// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cli.c - what the flightrec commands share: opening the DUMP argument,
 * --help, --version and usage errors, number options. See cli.h.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "view.h"

/* cli_load() - load @path into @d, or print why not. Returns an exit code. */
int cli_load(const char *path, struct fr_dump *d)
{
	char err[512];
	int e = dump__load(d, path, err, sizeof(err));

	if (!e)
		return FR_EXIT_OK;
	fprintf(stderr, "flightrec: %s%s%s\n", strstr(err, path) ? "" : path,
		strstr(err, path) ? "" : ": ", err);
	dump__free(d);
	return FR_EXIT_FAIL;
}

/*
 * cli_dump_arg() - after the options, exactly one DUMP must remain.
 * Returns FR_EXIT_OK, or FR_EXIT_USAGE after saying what is wrong.
 */
int cli_dump_arg(const char *cmd, int argc, char **argv, int optind_)
{
	if (optind_ == argc)
		return cli_usage_error(cmd, "missing DUMP");
	if (optind_ != argc - 1)
		return cli_usage_error(cmd, "one DUMP only, not '%s'", argv[argc - 1]);
	return FR_EXIT_OK;
}

/* cli_open_dump() - cli_dump_arg(), then load it into @d. Returns an exit code. */
int cli_open_dump(const char *cmd, int argc, char **argv, int optind_, struct fr_dump *d)
{
	int rc = cli_dump_arg(cmd, argc, argv, optind_);

	return rc ? rc : cli_load(argv[optind_], d);
}

/*
 * cli_open_view() - cli_open_dump(), then count its samples into @v.
 * Returns an exit code; on success the caller frees @v and @d.
 */
int cli_open_view(const char *cmd, int argc, char **argv, int optind_, struct fr_dump *d,
		  struct view *v)
{
	int rc = cli_open_dump(cmd, argc, argv, optind_, d);

	if (rc)
		return rc;
	if (view__init(v, d)) {
		dump__free(d);
		fprintf(stderr, "flightrec: out of memory\n");
		return FR_EXIT_FAIL;
	}
	return FR_EXIT_OK;
}

/*
 * cli_common_option() - what every command does with getopt's other
 * answers: --help prints @help, --version the version, a missing value
 * (':', the option string starts with ':') or an unknown option is a usage
 * error naming it. Returns the exit code.
 */
int cli_common_option(const char *cmd, int c, char **argv, void (*help)(FILE *out))
{
	switch (c) {
	case 'h':
		help(stdout);
		return FR_EXIT_OK;
	case 'V':
		printf("flightrec %s\n", FR_VERSION);
		return FR_EXIT_OK;
	case ':':
		return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
	default:
		return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
	}
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "flightrec %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'flightrec %s --help'.\n", cmd);
	return FR_EXIT_USAGE;
}

/* cli_parse_u32() - a decimal number; 0 or -EINVAL. */
int cli_parse_u32(const char *s, uint32_t *v)
{
	unsigned long long n;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || *end || n > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)n;
	return 0;
}
