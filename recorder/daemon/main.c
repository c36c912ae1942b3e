// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * main.c - flightrecd: parse the command line, load the config, run the
 * daemon. Exit codes: 0 ok, 1 runtime error, 2 usage or config error.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "config.h"
#include "daemon.h"
#include "log.h"
#include "writer.h"

static bool verbose;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: flightrecd [OPTIONS]\n"
		"\n"
		"Keep the last seconds of CPU stack samples and process lifecycle\n"
		"events in memory; write a dump when triggered (SIGUSR1).\n"
		"\n"
		"Options:\n"
		"  -c, --config PATH      config file (default " FR_CONF_DEFAULT_PATH ")\n"
		"      --check-config     validate the config file and exit\n"
		"  -o, --output-dir DIR   write dumps to DIR instead of [output] directory\n"
		"      --no-io-uring      write dumps with pwrite instead of io_uring\n"
		"  -v, --verbose          log debug messages (libbpf included)\n"
		"  -h, --help             show this help and exit\n"
		"  -V, --version          show the version and exit\n"
		"\n"
		"Signals: SIGUSR1 writes a dump, SIGHUP reloads the config,\n"
		"SIGTERM and SIGINT stop cleanly.\n");
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[1024];

	if (!verbose && level != LIBBPF_WARN)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = 0;
	fr_log(level == LIBBPF_WARN ? LOG_WARNING : LOG_DEBUG, "libbpf: %s", buf);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "output-dir", required_argument, NULL, 'o' },
		{ "no-io-uring", no_argument, NULL, 'U' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	struct daemon_opts o = { .config_path = FR_CONF_DEFAULT_PATH };
	char err[FR_CONF_ERR_MAX];
	struct fr_config *cfg;
	bool check = false;
	struct daemon *dm;
	int c, e;

	/*
	 * A fixed mmap threshold: glibc's dynamic one rises to the largest
	 * block freed, after which DWARF sections and dump buffers of many
	 * MiB come from the heap and fragment it; kept at 256 KiB, they are
	 * mapped and given back whole when freed.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 << 10);
	while ((c = getopt_long(argc, argv, "c:o:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o.config_path = optarg;
			break;
		case 'C':
			check = true;
			break;
		case 'o':
			if (optarg[0] != '/') {
				fprintf(stderr, "flightrecd: --output-dir '%s' must be an absolute path\n",
					optarg);
				return 2;
			}
			o.output_dir = optarg;
			break;
		case 'U':
			o.writer_flags |= FR_WRITER_FORCE_PWRITE;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("flightrecd %s\n", FR_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "flightrecd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	fr_log_init("flightrecd", verbose ? LOG_DEBUG : LOG_INFO);

	cfg = config__new();
	if (!cfg) {
		fr_err("failed to allocate config: %s", strerror(errno));
		return 1;
	}
	e = config__load(cfg, o.config_path, err, sizeof(err));
	if (e) {
		fr_err("%s", err);
		config__free(cfg);
		return 2;
	}
	if (check) {
		printf("%s: ok\n", o.config_path);
		config__free(cfg);
		return 0;
	}
	libbpf_set_print(libbpf_log);
	/* The daemon's parts hold about 150 KiB: not for main's stack. */
	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		fr_err("failed to allocate the daemon: %s", strerror(ENOMEM));
		config__free(cfg);
		return 1;
	}
	e = daemon__init(dm, &o, cfg);
	if (!e)
		e = daemon__run(dm);
	daemon__fini(dm);
	free(dm);
	return e ? 1 : 0;
}
