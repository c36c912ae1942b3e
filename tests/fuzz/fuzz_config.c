// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_config.c - libFuzzer target for the config loader.
 *
 * Each input is written to one file, mode 0600, in a private directory made
 * once under $TMPDIR (or /tmp), and loaded with config__load_env() over the
 * defaults: first as a process without CAP_SYS_RESOURCE, then again over
 * the result as one with it (a second load of the same file replaces its
 * triggers in place). A rejection must come with a message; a config that
 * loads must render (config__render() itself checks that the text loads
 * back identical), and loading the file over itself must not change it.
 * Any crash, leak, ASan or UBSan report is a bug.
 *
 * Built and run by tests/fuzz/run-fuzz.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fz_dir[PATH_MAX];
static char fz_path[PATH_MAX];

static void fz_cleanup(void)
{
	unlink(fz_path);
	rmdir(fz_dir);
}

/* fz_fail() - a broken contract: say which, then crash for libFuzzer. */
static void __attribute__((noreturn)) fz_fail(const char *why, const char *err)
{
	fprintf(stderr, "fuzz_config: %s%s%s\n", why, err ? ": " : "", err ? err : "");
	abort();
}

/* fz_setup() - make the private directory once; aborts if it cannot. */
static void fz_setup(void)
{
	const char *tmp = getenv("TMPDIR");

	if (fz_path[0])
		return;
	snprintf(fz_dir, sizeof(fz_dir), "%s/fr-fuzz-config-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(fz_dir)) {
		fz_fail("failed to create a private directory", strerror(errno));
	}
	snprintf(fz_path, sizeof(fz_path), "%s/flightrec.conf", fz_dir);
	atexit(fz_cleanup);
}

/* fz_spill() - replace the file's content with @size bytes of @data. */
static void fz_spill(const uint8_t *data, size_t size)
{
	size_t off = 0;
	ssize_t n;
	int fd;

	fd = open(fz_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0 || fchmod(fd, 0600)) {
		fz_fail("failed to open the input file", strerror(errno));
	}
	while (off < size) {
		n = write(fd, data + off, size - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fz_fail("failed to write the input file", strerror(errno));
		}
		off += (size_t)n;
	}
	close(fd);
}

/* fz_render() - config__render(@cfg), which must succeed for a loaded config. */
static char *fz_render(const struct fr_config *cfg, const uint8_t *data,
		       size_t size, const char *when)
{
	char *text = config__render(cfg);

	(void)data;
	(void)size;
	if (!text && errno != ENOMEM)
		fz_fail(when, strerror(errno));
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fr_config_env plain = { .cap_sys_resource = false };
	static const struct fr_config_env capable = { .cap_sys_resource = true };
	char err[FR_CONF_ERR_MAX], *first = NULL, *again;
	struct fr_config *cfg;
	int ret, ret1;

	fz_setup();
	fz_spill(data, size);
	cfg = config__new();
	if (!cfg)
		return 0;

	ret1 = config__load_env(cfg, fz_path, &plain, err, sizeof(err));
	if (ret1 && ret1 != -ENOMEM && !err[0])
		fz_fail("rejected without a message", NULL);
	if (!ret1)
		first = fz_render(cfg, data, size, "loaded, but config__render() refuses it");

	/* over itself, now with CAP_SYS_RESOURCE: it can only accept more */
	ret = config__load_env(cfg, fz_path, &capable, err, sizeof(err));
	if (ret && ret != -ENOMEM && !err[0])
		fz_fail("rejected without a message", NULL);
	if (!ret) {
		again = fz_render(cfg, data, size,
				  "loaded over itself, but config__render() refuses it");
		if (first && again && strcmp(first, again))
			fz_fail("loading the file over itself changed the config", NULL);
		free(again);
	} else if (!ret1 && ret != -ENOMEM) {
		fz_fail("loaded once, but not over itself", err);
	}
	free(first);
	config__free(cfg);
	return 0;
}
