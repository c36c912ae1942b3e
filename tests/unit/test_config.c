/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_config.c - unit tests for conf/config.c: defaults, loading, every
 * error path with its message, render round trips, and the value parsers.
 *
 * Usage: test_config [path of conf/flightrec.conf]
 * Without an argument the shipped file is looked up as conf/flightrec.conf
 * relative to the current directory. Temporary files live in a mkdtemp()
 * directory that is removed at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "tap.h"

#define MSEC	1000000ULL
#define SEC	1000000000ULL
#define KIB	1024ULL
#define MIB	(1024 * KIB)
#define GIB	(1024 * MIB)

static char tmpdir[] = "/tmp/fr-test-config.XXXXXX";

/* tmp_path() - @name inside the temporary directory, in @buf (PATH_MAX). */
static char *tmp_path(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
	return buf;
}

/* write_file() - (re)create @path holding @len bytes of @text, mode @mode. */
static int write_file(const char *path, const char *text, size_t len,
		      mode_t mode)
{
	ssize_t n;
	int fd, ret = 0;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (len) {
		n = write(fd, text, len);
		if (n < 0) {
			ret = -errno;
			break;
		}
		text += n;
		len -= (size_t)n;
	}
	if (!ret && fchmod(fd, mode))
		ret = -errno;
	close(fd);
	return ret;
}

/* read_text() - all of @path as a string, or NULL. */
static char *read_text(const char *path)
{
	char *text = NULL;
	size_t cap = 0, len = 0, n;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return NULL;
	for (;;) {
		if (cap - len < 4096) {
			char *grown = realloc(text, cap + 8192);

			if (!grown)
				break;
			text = grown;
			cap += 8192;
		}
		n = fread(text + len, 1, cap - len - 1, f);
		len += n;
		if (!n)
			break;
	}
	fclose(f);
	if (text)
		text[len] = '\0';
	return text;
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* same_trigger() - true when @a and @b match (their lines too if @line). */
static int same_trigger(const struct fr_trigger_conf *a,
			const struct fr_trigger_conf *b, int line)
{
	return same_str(a->name, b->name) &&
	       (!line || a->line == b->line) &&
	       a->type == b->type &&
	       a->resource == b->resource &&
	       a->kind == b->kind &&
	       a->stall_ns == b->stall_ns &&
	       a->window_ns == b->window_ns &&
	       same_str(a->cgroup, b->cgroup) &&
	       a->pre_ns == b->pre_ns &&
	       a->post_ns == b->post_ns &&
	       a->cooldown_ns == b->cooldown_ns &&
	       a->max_per_hour == b->max_per_hour;
}

/*
 * same_command() - true when command lines @a and @b are both unset, or
 * split into the same words (rendering may spell a command differently).
 */
static int same_command(const char *a, const char *b)
{
	char **va = NULL, **vb = NULL;
	int na = 0, nb = 0, i, same;

	if (!a || !b)
		return a == b;
	if (conf_split_command(a, &va, &na) || conf_split_command(b, &vb, &nb))
		same = !strcmp(a, b);
	else
		for (i = 0, same = na == nb; same && i < na; i++)
			same = !strcmp(va[i], vb[i]);
	conf_free_argv(va);
	conf_free_argv(vb);
	return same;
}

/* same_values() - true when @a and @b hold the same values; path aside. */
static int same_values(const struct fr_config *a, const struct fr_config *b,
		       int lines)
{
	size_t i;

	if (a->window_ns != b->window_ns ||
	    a->memory_bytes != b->memory_bytes ||
	    a->frequency != b->frequency ||
	    a->ring_bytes != b->ring_bytes ||
	    !same_str(a->directory, b->directory) ||
	    a->max_dumps != b->max_dumps ||
	    a->max_bytes != b->max_bytes ||
	    !same_str(a->group, b->group) ||
	    (a->group && a->group_gid != b->group_gid) ||
	    !same_command(a->on_dump, b->on_dump) ||
	    a->on_dump_timeout_ns != b->on_dump_timeout_ns ||
	    a->resolve_timeout_ns != b->resolve_timeout_ns ||
	    !same_str(a->control_socket, b->control_socket) ||
	    a->privacy_cmdline != b->privacy_cmdline ||
	    a->rss_ledger != b->rss_ledger || a->rss_step != b->rss_step ||
	    a->rss_step_pct != b->rss_step_pct || a->rss_max_age_ns != b->rss_max_age_ns ||
	    a->memory_cgroups != b->memory_cgroups ||
	    a->stalls != b->stalls || a->min_stall_ns != b->min_stall_ns ||
	    a->offcpu != b->offcpu || a->min_block_ns != b->min_block_ns ||
	    a->offcpu_sleep != b->offcpu_sleep ||
	    a->ntriggers != b->ntriggers)
		return 0;
	for (i = 0; i < a->ntriggers; i++)
		if (!same_trigger(&a->triggers[i], &b->triggers[i], lines))
			return 0;
	return 1;
}

/* same_config() - true when @a and @b hold the same values and path. */
static int same_config(const struct fr_config *a, const struct fr_config *b)
{
	return same_values(a, b, 1) && same_str(a->path, b->path);
}

static void test_defaults(void)
{
	struct fr_config *cfg = config__new();

	ok(cfg != NULL, "config__new() returns a config");
	if (!cfg)
		return;
	ok(cfg->path == NULL, "defaults: path is NULL");
	is_int(cfg->window_ns, 30 * SEC, "defaults: window is 30s");
	is_int(cfg->memory_bytes, 256 * MIB, "defaults: memory is 256M");
	is_int(cfg->frequency, 99, "defaults: frequency is 99");
	is_str(cfg->directory, "/var/lib/flightrec",
	       "defaults: directory is /var/lib/flightrec");
	is_int(cfg->max_dumps, 50, "defaults: max_dumps is 50");
	is_int(cfg->max_bytes, GIB, "defaults: max_bytes is 1G");
	is_str(cfg->control_socket, "/run/flightrec/control.sock",
	       "defaults: control socket is /run/flightrec/control.sock");
	is_int(cfg->ring_bytes, 0, "defaults: ring is 0 (automatic)");
	ok(cfg->group == NULL, "defaults: group is NULL (none)");
	ok(cfg->on_dump == NULL, "defaults: on_dump is NULL (none)");
	is_int(cfg->on_dump_timeout_ns, 60 * SEC,
	       "defaults: on_dump_timeout is 60s");
	is_int(cfg->resolve_timeout_ns, 250 * MSEC, "defaults: resolve_timeout is 250ms");
	is_int(cfg->oom_score_adj, -900, "defaults: oom_score_adj is -900");
	ok(cfg->privacy_cmdline == true, "defaults: [privacy] cmdline is true");
	ok(cfg->ntriggers == 0 && cfg->triggers == NULL,
	   "defaults: no triggers");
	config__free(cfg);
	ok(survives(config__free(NULL)), "config__free(NULL) is harmless");
}

#define FULL_CONF							\
	"# a full config\n"						\
	"[recorder]\n"							\
	"window = 2m\n"							\
	"memory = 1G\n"							\
	"frequency = 497\n"						\
	"oom_score_adj = -17\n"						\
	"\n"								\
	"[output]\n"							\
	"directory = /srv/flight rec;1\n"

/* load_full() - a config loaded from FULL_CONF at @path, or NULL. */
static struct fr_config *load_full(char *path)
{
	char err[FR_CONF_ERR_MAX] = "";
	struct fr_config *cfg;

	tmp_path(path, "full.conf");
	if (write_file(path, FULL_CONF, strlen(FULL_CONF), 0600))
		return NULL;
	cfg = config__new();
	if (cfg && config__load(cfg, path, err, sizeof(err))) {
		tap_diag("%s", err);
		config__free(cfg);
		return NULL;
	}
	return cfg;
}

static void test_full_file(void)
{
	char path[PATH_MAX], err[FR_CONF_ERR_MAX] = "x";
	struct fr_config *cfg = config__new();
	int ret;

	tmp_path(path, "full.conf");
	ok(!write_file(path, FULL_CONF, strlen(FULL_CONF), 0600),
	   "full: wrote the file");
	ret = config__load(cfg, path, err, sizeof(err));
	is_int(ret, 0, "full: loads");
	is_str(err, "", "full: no message on success");
	is_str(cfg->path, path, "full: path is the file loaded");
	is_int(cfg->window_ns, 120 * SEC, "full: window = 2m");
	is_int(cfg->oom_score_adj, -17, "full: oom_score_adj = -17 (negative)");
	is_int(cfg->memory_bytes, GIB, "full: memory = 1G");
	is_int(cfg->frequency, 497, "full: frequency = 497");
	is_str(cfg->directory, "/srv/flight rec;1",
	       "full: directory keeps inner blanks and ';'");
	is_int(cfg->max_dumps, 50, "full: max_dumps not set, default 50");
	is_int(cfg->max_bytes, GIB, "full: max_bytes not set, default 1G");
	is_str(cfg->control_socket, "/run/flightrec/control.sock",
	       "full: no [control], default socket");
	ok(cfg->ntriggers == 0 && cfg->triggers == NULL,
	   "full: no trigger sections, no triggers");

	/* a second file only overrides what it sets */
	tmp_path(path, "partial.conf");
	write_file(path, "[recorder]\nfrequency = 1000\n",
		   strlen("[recorder]\nfrequency = 1000\n"), 0600);
	ret = config__load(cfg, path, err, sizeof(err));
	is_int(ret, 0, "partial: loads over a loaded config");
	is_int(cfg->frequency, 1000, "partial: frequency = 1000");
	is_int(cfg->window_ns, 120 * SEC,
	       "partial: window keeps the previous value, not the default");
	is_str(cfg->directory, "/srv/flight rec;1",
	       "partial: directory keeps the previous value");
	is_str(cfg->path, path, "partial: path is the new file");

	/* an empty file changes nothing but the path */
	tmp_path(path, "empty.conf");
	write_file(path, "", 0, 0600);
	ret = config__load(cfg, path, err, sizeof(err));
	is_int(ret, 0, "empty file: loads");
	is_int(cfg->frequency, 1000, "empty file: values kept");
	config__free(cfg);
}

/* Syntax inih accepts and we keep: BOM, CRLF, indents, comments, ':'. */
static void test_syntax_variants(void)
{
	static const char text[] =
		"\xef\xbb\xbf[ recorder ]   ; a BOM, CRLF, a comment after a header\r\n"
		"  window = 10s ; ten seconds\r\n"
		"\tmemory: 64MiB\r\n"
		"\r\n"
		"    # indented comment\r\n"
		"   frequency=1\r\n"
		"[output] # another comment\r\n"
		"directory = /var/tmp/fr ;\r\n";
	char path[PATH_MAX], err[FR_CONF_ERR_MAX] = "";
	struct fr_config *cfg = config__new();
	int ret;

	tmp_path(path, "variants.conf");
	write_file(path, text, strlen(text), 0600);
	ret = config__load(cfg, path, err, sizeof(err));
	if (!is_int(ret, 0, "variants: loads"))
		tap_diag("%s", err);
	is_int(cfg->window_ns, 10 * SEC,
	       "variants: indented key with inline comment");
	is_int(cfg->memory_bytes, 64 * MIB, "variants: 'key: value' and MiB");
	is_int(cfg->frequency, 1,
	       "variants: indented key after a comment is a key, not a continuation");
	is_str(cfg->directory, "/var/tmp/fr",
	       "variants: value trimmed, CR and inline comment dropped");
	config__free(cfg);
}

struct err_case {
	const char *what;
	const char *text;
	size_t len;		/* 0: strlen(text) */
	int line;		/* where the error is */
	const char *want[3];	/* further parts of the message */
};

/* Line 7 of these is free for the case's own line; 1..6 set other keys. */
#define BASE_W	"# test\n[recorder]\nfrequency = 7\n; comment\n\nmemory = 8M\n"
#define BASE_M	"# test\n[recorder]\nwindow = 5s\n; comment\n\nfrequency = 7\n"
#define BASE_F	"# test\n[recorder]\nwindow = 5s\n; comment\n\nmemory = 8M\n"
/* lines 7 and 8 taken: directory goes on line 9 */
#define BASE_O	BASE_F "frequency = 7\n[output]\n"

#define ACC_W	"accepted: 1s..24h with a unit suffix us, ms, s, m or h"
#define ACC_M	"accepted: 4M..64G, in bytes or with a suffix K, M, G, KiB, MiB or GiB"
#define ACC_F	"accepted: 1..10000"
#define ACC_R	"accepted: 0 (automatic) or a power of two from 16K to 1G, e.g. 64K, 4M"
#define ACC_G	"accepted: the name of an existing group, without control characters or ':' (leave the key out for none)"
#define ACC_B	"accepted: true, false, yes, no, on, off, 1, 0"
#define ACC_D	"accepted: the absolute path of an executable file, then its arguments; at most 32 words split at blanks, \"...\" groups, \\ escapes (leave the key out for none)"
#define ACC_T	"accepted: 1s..1h with a unit suffix us, ms, s, m or h"
#define ACC_RT	"accepted: 10ms..10s with a unit suffix us, ms, s, m or h"
/* 31 words: with a program and one more, one word too many for on_dump */
#define W31	"1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31"
/* [privacy] opens on line 8: its key goes on line 9 */
#define BASE_P	BASE_F "frequency = 7\n[privacy]\n"
#define SYNTAX	"syntax error; expected '[section]' or 'key = value'"
#define X50	"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
#define LONG200	X50 X50 X50 X50

#define ACC_OOM	"accepted: -1000..1000"
/* [memory] and [stalls] open on line 7: their key goes on line 8 */
#define BASE_MEM	BASE_F "[memory]\n"
#define BASE_STL	BASE_F "[stalls]\n"
#define ACC_STEP	"accepted: 4K..1G, in bytes or with a suffix K, M, G, KiB, MiB or GiB"
#define ACC_PCT		"accepted: 0..100"
#define ACC_AGE		"accepted: 10ms..1m with a unit suffix us, ms, s, m or h"
#define ACC_CG		"accepted: 0..4096"
#define ACC_MIN		"accepted: 0s..10s with a unit suffix us, ms, s, m or h"
static const struct err_case err_cases[] = {
	/* [memory] */
	{ "rss_ledger not a boolean", BASE_MEM "rss_ledger = maybe\n", 0, 8,
	  { "[memory] rss_ledger = maybe: not a boolean", ACC_B } },
	{ "rss_step below 4K", BASE_MEM "rss_step = 4095\n", 0, 8,
	  { "[memory] rss_step = 4095: too small", ACC_STEP } },
	{ "rss_step above 1G", BASE_MEM "rss_step = 2G\n", 0, 8,
	  { "[memory] rss_step = 2G: too large", ACC_STEP } },
	{ "rss_step percent sign", BASE_MEM "rss_step = 5%\n", 0, 8,
	  { "[memory] rss_step = 5%: invalid size", ACC_STEP } },
	{ "rss_step_percent above 100", BASE_MEM "rss_step_percent = 101\n", 0, 8,
	  { "[memory] rss_step_percent = 101: too large", ACC_PCT } },
	{ "rss_step_percent with a sign", BASE_MEM "rss_step_percent = 2%\n", 0, 8,
	  { "[memory] rss_step_percent = 2%: invalid number", ACC_PCT } },
	{ "rss_max_age below 10ms", BASE_MEM "rss_max_age = 9ms\n", 0, 8,
	  { "[memory] rss_max_age = 9ms: too small", ACC_AGE } },
	{ "rss_max_age above 60s", BASE_MEM "rss_max_age = 61s\n", 0, 8,
	  { "[memory] rss_max_age = 61s: too large", ACC_AGE } },
	{ "rss_max_age without unit", BASE_MEM "rss_max_age = 1\n", 0, 8,
	  { "[memory] rss_max_age = 1: invalid duration", ACC_AGE } },
	{ "cgroups above 4096", BASE_MEM "cgroups = 4097\n", 0, 8,
	  { "[memory] cgroups = 4097: too large", ACC_CG } },
	{ "cgroups negative", BASE_MEM "cgroups = -1\n", 0, 8,
	  { "[memory] cgroups = -1: invalid number", ACC_CG } },
	/* [stalls] */
	{ "stalls not a boolean", BASE_STL "stalls = sometimes\n", 0, 8,
	  { "[stalls] stalls = sometimes: not a boolean", ACC_B } },
	{ "stalls empty", BASE_STL "stalls =\n", 0, 8,
	  { "[stalls] stalls = : empty value", ACC_B } },
	{ "min_stall without unit", BASE_STL "min_stall = 0\n", 0, 8,
	  { "[stalls] min_stall = 0: invalid duration", ACC_MIN } },
	{ "min_stall above 10s", BASE_STL "min_stall = 11s\n", 0, 8,
	  { "[stalls] min_stall = 11s: too large", ACC_MIN } },
	{ "min_stall fraction", BASE_STL "min_stall = 0.5ms\n", 0, 8,
	  { "[stalls] min_stall = 0.5ms: invalid duration", ACC_MIN } },
	{ "min_stall nanoseconds", BASE_STL "min_stall = 500ns\n", 0, 8,
	  { "[stalls] min_stall = 500ns: invalid duration", ACC_MIN } },
	{ "offcpu not a boolean", BASE_STL "offcpu = 2\n", 0, 8,
	  { "[stalls] offcpu = 2: not a boolean", ACC_B } },
	{ "min_block above 10s", BASE_STL "min_block = 10001ms\n", 0, 8,
	  { "[stalls] min_block = 10001ms: too large", ACC_MIN } },
	{ "min_block negative", BASE_STL "min_block = -1ms\n", 0, 8,
	  { "[stalls] min_block = -1ms: invalid duration", ACC_MIN } },
	{ "offcpu_sleep not a boolean", BASE_STL "offcpu_sleep = S\n", 0, 8,
	  { "[stalls] offcpu_sleep = S: not a boolean", ACC_B } },
	{ "stalls key in [memory]", BASE_MEM "min_stall = 1ms\n", 0, 8,
	  { "[memory] min_stall = 1ms: unknown key; accepted: rss_ledger, rss_step, rss_step_percent, rss_max_age, cgroups" } },
	/* oom_score_adj: the one signed number */
	{ "oom_score_adj below -1000", BASE_W "oom_score_adj = -1001\n", 0, 7,
	  { "[recorder] oom_score_adj = -1001: too small; " ACC_OOM } },
	{ "oom_score_adj above 1000", BASE_W "oom_score_adj = 1001\n", 0, 7,
	  { "[recorder] oom_score_adj = 1001: too large; " ACC_OOM } },
	{ "oom_score_adj with a plus", BASE_W "oom_score_adj = +5\n", 0, 7,
	  { "[recorder] oom_score_adj = +5: invalid number; " ACC_OOM } },
	{ "oom_score_adj a lone minus", BASE_W "oom_score_adj = -\n", 0, 7,
	  { "[recorder] oom_score_adj = -: invalid number; " ACC_OOM } },
	{ "oom_score_adj two minuses", BASE_W "oom_score_adj = --5\n", 0, 7,
	  { "[recorder] oom_score_adj = --5: invalid number; " ACC_OOM } },
	{ "oom_score_adj with a unit", BASE_W "oom_score_adj = -9k\n", 0, 7,
	  { "[recorder] oom_score_adj = -9k: invalid number; " ACC_OOM } },
	{ "oom_score_adj overflows", BASE_W "oom_score_adj = -99999999999999999999\n", 0, 7,
	  { "[recorder] oom_score_adj = -99999999999999999999: too small; " ACC_OOM } },
	/* window */
	{ "window without unit", BASE_W "window = 30\n", 0, 7,
	  { "[recorder] window = 30: invalid duration", ACC_W } },
	{ "window with a bad unit", BASE_W "window = 5x ; five\n", 0, 7,
	  { "[recorder] window = 5x: invalid duration; " ACC_W } },
	{ "window negative", BASE_W "window = -5s\n", 0, 7,
	  { "[recorder] window = -5s: invalid duration", ACC_W } },
	{ "window fraction", BASE_W "window = 1.5s\n", 0, 7,
	  { "[recorder] window = 1.5s: invalid duration", ACC_W } },
	{ "window blank before unit", BASE_W "window = 30 s\n", 0, 7,
	  { "[recorder] window = 30 s: invalid duration", ACC_W } },
	{ "window overflows digits", BASE_W "window = 99999999999999999999s\n",
	  0, 7,
	  { "[recorder] window = 99999999999999999999s: too large", ACC_W } },
	{ "window overflows by unit", BASE_W "window = 5124096h\n", 0, 7,
	  { "[recorder] window = 5124096h: too large", ACC_W } },
	{ "window below range", BASE_W "window = 999ms\n", 0, 7,
	  { "[recorder] window = 999ms: too small", ACC_W } },
	{ "window zero", BASE_W "window = 0s\n", 0, 7,
	  { "[recorder] window = 0s: too small", ACC_W } },
	{ "window above range", BASE_W "window = 25h\n", 0, 7,
	  { "[recorder] window = 25h: too large", ACC_W } },
	{ "window empty", BASE_W "window =\n", 0, 7,
	  { "[recorder] window = : empty value", ACC_W } },
	/* memory */
	{ "memory with a bad unit", BASE_M "memory = 256X\n", 0, 7,
	  { "[recorder] memory = 256X: invalid size", ACC_M } },
	{ "memory lower-case unit", BASE_M "memory = 256m\n", 0, 7,
	  { "[recorder] memory = 256m: invalid size", ACC_M } },
	{ "memory negative", BASE_M "memory = -4M\n", 0, 7,
	  { "[recorder] memory = -4M: invalid size", ACC_M } },
	{ "memory overflows digits", BASE_M "memory = 99999999999999999999\n",
	  0, 7,
	  { "[recorder] memory = 99999999999999999999: too large", ACC_M } },
	{ "memory overflows by unit", BASE_M "memory = 17179869184G\n", 0, 7,
	  { "[recorder] memory = 17179869184G: too large", ACC_M } },
	{ "memory below range", BASE_M "memory = 3M\n", 0, 7,
	  { "[recorder] memory = 3M: too small", ACC_M } },
	{ "memory below range in bytes", BASE_M "memory = 4194303\n", 0, 7,
	  { "[recorder] memory = 4194303: too small", ACC_M } },
	{ "memory above range", BASE_M "memory = 65G\n", 0, 7,
	  { "[recorder] memory = 65G: too large", ACC_M } },
	{ "memory empty but for a comment", BASE_M "memory = ;nothing\n", 0,
	  7, { "[recorder] memory = : empty value", ACC_M } },
	/* frequency */
	{ "frequency 0", BASE_F "frequency = 0\n", 0, 7,
	  { "[recorder] frequency = 0: too small", ACC_F } },
	{ "frequency 10001", BASE_F "frequency = 10001\n", 0, 7,
	  { "[recorder] frequency = 10001: too large", ACC_F } },
	{ "frequency beyond 32 bits", BASE_F "frequency = 4294967395\n", 0,
	  7, { "[recorder] frequency = 4294967395: too large", ACC_F } },
	{ "frequency not a number", BASE_F "frequency = abc\n", 0, 7,
	  { "[recorder] frequency = abc: invalid number", ACC_F } },
	{ "frequency trailing garbage", BASE_F "frequency = 99x\n", 0, 7,
	  { "[recorder] frequency = 99x: invalid number", ACC_F } },
	{ "frequency negative", BASE_F "frequency = -1\n", 0, 7,
	  { "[recorder] frequency = -1: invalid number", ACC_F } },
	{ "frequency hex", BASE_F "frequency = 0x10\n", 0, 7,
	  { "[recorder] frequency = 0x10: invalid number", ACC_F } },
	/* directory */
	{ "directory relative", BASE_O "directory = var/lib/flightrec\n", 0,
	  9, { "[output] directory = var/lib/flightrec: not an absolute path",
	       "accepted: an absolute path" } },
	{ "directory empty", BASE_O "directory =   \n", 0, 9,
	  { "[output] directory = : empty value", "accepted: an absolute path" } },
	{ "directory with a control character", BASE_O "directory = /a\033b\n",
	  0, 9, { "[output] directory = /a?b: contains a control character" } },
	/* max_dumps, max_bytes, [control] socket */
	{ "max_dumps above range", BASE_O "max_dumps = 1000001\n", 0, 9,
	  { "[output] max_dumps = 1000001: too large",
	    "accepted: 0..1000000 (0 = no limit)" } },
	{ "max_dumps negative", BASE_O "max_dumps = -1\n", 0, 9,
	  { "[output] max_dumps = -1: invalid number",
	    "accepted: 0..1000000 (0 = no limit)" } },
	{ "max_dumps with a unit", BASE_O "max_dumps = 5K\n", 0, 9,
	  { "[output] max_dumps = 5K: invalid number" } },
	{ "max_bytes above range", BASE_O "max_bytes = 1025G\n", 0, 9,
	  { "[output] max_bytes = 1025G: too large",
	    "accepted: 0..1024G, in bytes or with a suffix K, M, G, KiB, MiB or GiB (0 = no limit)" } },
	{ "max_bytes in T", BASE_O "max_bytes = 1T\n", 0, 9,
	  { "[output] max_bytes = 1T: invalid size", "accepted: 0..1024G" } },
	{ "max_bytes empty", BASE_O "max_bytes =\n", 0, 9,
	  { "[output] max_bytes = : empty value", "accepted: 0..1024G" } },
	{ "control socket relative",
	  BASE_F "frequency = 7\n[control]\nsocket = run/flightrec.sock\n", 0, 9,
	  { "[control] socket = run/flightrec.sock: not an absolute path",
	    "accepted: an absolute path of at most 107 bytes" } },
	{ "control socket too long for sun_path",
	  BASE_F "frequency = 7\n[control]\nsocket = /" X50 X50 X50 "\n", 0, 9,
	  { "[control] socket = /xxxx", "too long",
	    "accepted: an absolute path of at most 107 bytes" } },
	{ "unknown key in [control]",
	  BASE_F "frequency = 7\n[control]\npath = /x\n", 0, 9,
	  { "[control] path = /x: unknown key", "accepted: socket" } },
	/* ring */
	{ "ring not a power of two", BASE_F "ring = 100K\n", 0, 7,
	  { "[recorder] ring = 100K: not a power of two; " ACC_R } },
	{ "ring 3M, in range but not a power of two", BASE_F "ring = 3M\n", 0, 7,
	  { "[recorder] ring = 3M: not a power of two; " ACC_R } },
	{ "ring below 16K", BASE_F "ring = 8K\n", 0, 7,
	  { "[recorder] ring = 8K: too small; " ACC_R } },
	{ "ring 1 byte", BASE_F "ring = 1\n", 0, 7,
	  { "[recorder] ring = 1: too small; " ACC_R } },
	{ "ring above 1G", BASE_F "ring = 2G\n", 0, 7,
	  { "[recorder] ring = 2G: too large; " ACC_R } },
	{ "ring not a size", BASE_F "ring = abc\n", 0, 7,
	  { "[recorder] ring = abc: invalid size; " ACC_R } },
	{ "ring empty", BASE_F "ring =\n", 0, 7,
	  { "[recorder] ring = : empty value; " ACC_R } },
	/* group */
	{ "group empty", BASE_O "group =\n", 0, 9,
	  { "[output] group = : empty value; " ACC_G } },
	{ "group empty but for a comment", BASE_O "group = ; nobody\n", 0, 9,
	  { "[output] group = : empty value; " ACC_G } },
	{ "group with ':'", BASE_O "group = root:x\n", 0, 9,
	  { "[output] group = root:x: contains ':'; " ACC_G } },
	{ "group with a control character", BASE_O "group = ro\033ot\n", 0, 9,
	  { "[output] group = ro?ot: contains a control character; " ACC_G } },
	/* on_dump, on_dump_timeout */
	{ "on_dump relative", BASE_O "on_dump = ./upload.sh\n", 0, 9,
	  { "[output] on_dump = ./upload.sh: the program must be an absolute path; " ACC_D } },
	{ "on_dump a bare name with arguments", BASE_O "on_dump = upload --all\n", 0, 9,
	  { "[output] on_dump = upload --all: the program must be an absolute path; " ACC_D } },
	{ "on_dump an empty program", BASE_O "on_dump = \"\" /bin/echo\n", 0, 9,
	  { "[output] on_dump = \"\" /bin/echo: the program must be an absolute path" } },
	{ "on_dump unbalanced quote", BASE_O "on_dump = \"/usr/bin/x\n", 0, 9,
	  { "[output] on_dump = \"/usr/bin/x: unbalanced quote; " ACC_D } },
	{ "on_dump quote escaped, so unbalanced", BASE_O "on_dump = /bin/echo \"a\\\"\n", 0, 9,
	  { "[output] on_dump = /bin/echo \"a\\\": unbalanced quote" } },
	{ "on_dump trailing backslash", BASE_O "on_dump = /bin/echo a\\\n", 0, 9,
	  { "[output] on_dump = /bin/echo a\\: a backslash at the end escapes nothing; " ACC_D } },
	{ "on_dump empty", BASE_O "on_dump =\n", 0, 9,
	  { "[output] on_dump = : empty value; " ACC_D } },
	{ "on_dump empty but for a comment", BASE_O "on_dump = ; ship\n", 0, 9,
	  { "[output] on_dump = : empty value; " ACC_D } },
	{ "on_dump with a control character", BASE_O "on_dump = /bin/echo a\033b\n", 0, 9,
	  { "[output] on_dump = /bin/echo a?b: contains a control character; " ACC_D } },
	{ "on_dump of 33 words", BASE_O "on_dump = /bin/echo " W31 " x\n", 0, 9,
	  { "[output] on_dump = /bin/echo 1 2 3", "x: more than 32 words; " ACC_D } },
	{ "on_dump_timeout 0s", BASE_O "on_dump_timeout = 0s\n", 0, 9,
	  { "[output] on_dump_timeout = 0s: too small; " ACC_T } },
	{ "on_dump_timeout 999ms", BASE_O "on_dump_timeout = 999ms\n", 0, 9,
	  { "[output] on_dump_timeout = 999ms: too small; " ACC_T } },
	{ "on_dump_timeout 2h", BASE_O "on_dump_timeout = 2h\n", 0, 9,
	  { "[output] on_dump_timeout = 2h: too large; " ACC_T } },
	{ "on_dump_timeout 61m", BASE_O "on_dump_timeout = 61m\n", 0, 9,
	  { "[output] on_dump_timeout = 61m: too large; " ACC_T } },
	{ "on_dump_timeout garbage", BASE_O "on_dump_timeout = soon\n", 0, 9,
	  { "[output] on_dump_timeout = soon: invalid duration; " ACC_T } },
	{ "on_dump_timeout without unit", BASE_O "on_dump_timeout = 60\n", 0, 9,
	  { "[output] on_dump_timeout = 60: invalid duration; " ACC_T } },
	{ "on_dump_timeout empty", BASE_O "on_dump_timeout =\n", 0, 9,
	  { "[output] on_dump_timeout = : empty value; " ACC_T } },
	{ "resolve_timeout 9ms", BASE_O "resolve_timeout = 9ms\n", 0, 9,
	  { "[output] resolve_timeout = 9ms: too small; " ACC_RT } },
	{ "resolve_timeout 11s", BASE_O "resolve_timeout = 11s\n", 0, 9,
	  { "[output] resolve_timeout = 11s: too large; " ACC_RT } },
	{ "resolve_timeout without unit", BASE_O "resolve_timeout = 250\n", 0, 9,
	  { "[output] resolve_timeout = 250: invalid duration; " ACC_RT } },
	{ "duplicate on_dump", BASE_O "on_dump = /bin/true\non_dump = /bin/echo\n", 0, 10,
	  { "[output] on_dump = /bin/echo: duplicate key, first set at line 9" } },
	/* [privacy] cmdline */
	{ "cmdline maybe", BASE_P "cmdline = maybe\n", 0, 9,
	  { "[privacy] cmdline = maybe: not a boolean; " ACC_B } },
	{ "cmdline with trailing garbage", BASE_P "cmdline = true x\n", 0, 9,
	  { "[privacy] cmdline = true x: not a boolean; " ACC_B } },
	{ "cmdline with a glued ';'", BASE_P "cmdline = off;\n", 0, 9,
	  { "[privacy] cmdline = off;: not a boolean; " ACC_B } },
	{ "cmdline in upper case", BASE_P "cmdline = TRUE\n", 0, 9,
	  { "[privacy] cmdline = TRUE: not a boolean; " ACC_B } },
	{ "cmdline 2", BASE_P "cmdline = 2\n", 0, 9,
	  { "[privacy] cmdline = 2: not a boolean; " ACC_B } },
	{ "cmdline empty", BASE_P "cmdline =\n", 0, 9,
	  { "[privacy] cmdline = : empty value; " ACC_B } },
	{ "unknown key in [privacy]", BASE_P "environ = false\n", 0, 9,
	  { "[privacy] environ = false: unknown key; accepted: cmdline" } },
	{ "cmdline in [recorder]", BASE_F "cmdline = false\n", 0, 7,
	  { "[recorder] cmdline = false: unknown key",
	    "accepted: window, memory, frequency, ring" } },
	{ "duplicate [privacy]", BASE_P "cmdline = no\n[privacy]\n", 0, 10,
	  { "duplicate section [privacy], first at line 8" } },
	/* structure */
	{ "unknown key", BASE_W "windw = 5s\n", 0, 7,
	  { "[recorder] windw = 5s: unknown key",
	    "accepted: window, memory, frequency" } },
	{ "unknown key in [output]", BASE_O "dir = /x\n", 0, 9,
	  { "[output] dir = /x: unknown key", "accepted: directory" } },
	{ "unknown section", BASE_F "[outptu]\ndirectory = /x\n", 0, 7,
	  { "unknown section [outptu]", "accepted: [recorder], [output]" } },
	{ "unknown empty section at the end", BASE_F "\n[extra]\n", 0, 8,
	  { "unknown section [extra]", "accepted: [recorder], [output]" } },
	{ "key before any section", "window = 5s\n[recorder]\n", 0, 1,
	  { "window = 5s: key before any section",
	    "accepted: [recorder], [output]" } },
	{ "syntax error, no '='", BASE_W "window 30s\n", 0, 7, { SYNTAX } },
	{ "syntax error, header without ']'", BASE_F "[output\n", 0, 7,
	  { SYNTAX } },
	{ "syntax error, text after ']'", BASE_F "[output] directory = /x\n", 0,
	  7, { SYNTAX } },
	{ "syntax error, no key", BASE_F "= 5\n", 0, 7, { SYNTAX } },
	{ "syntax error before a value error", BASE_F "bogus\nfrequency = 0\n",
	  0, 7, { SYNTAX } },
	{ "value error before a syntax error", BASE_F "frequency = 0\nbogus\n",
	  0, 7, { "[recorder] frequency = 0: too small" } },
	{ "duplicate key", BASE_F "window = 10s\n", 0, 7,
	  { "[recorder] window = 10s: duplicate key, first set at line 3" } },
	{ "duplicate key, indented", BASE_F "   window = 10s\n", 0, 7,
	  { "[recorder] window = 10s: duplicate key, first set at line 3" } },
	{ "duplicate section", BASE_F "[output]\ndirectory = /x\n[recorder]\n",
	  0, 9, { "duplicate section [recorder], first at line 2" } },
	{ "duplicate empty section", BASE_F "[output]\n[output]\n", 0, 8,
	  { "duplicate section [output], first at line 7" } },
	{ "line too long", BASE_F "# " LONG200 "\n", 0, 7,
	  { "line too long (202 bytes)", "accepted: at most 197 bytes" } },
	{ "NUL byte", BASE_F "frequency = 9\0 9\n", sizeof(BASE_F) + 16, 7,
	  { "line contains a NUL byte" } },
	{ "CRLF file", "# test\r\n[recorder]\r\n\r\n\r\n\r\n\r\nfrequency = 0\r\n",
	  0, 7, { "[recorder] frequency = 0: too small; accepted" } },
};

/*
 * test_error_case() - load @c over @cfg (a copy of @before) and check the
 * return code, the message, and that @cfg did not change.
 */
static void test_error_case(struct fr_config *cfg,
			    const struct fr_config *before,
			    const struct err_case *c)
{
	char path[PATH_MAX], err[FR_CONF_ERR_MAX], line[16];
	size_t i, len = c->len ? c->len : strlen(c->text);
	int ret;

	tmp_path(path, "case.conf");
	if (write_file(path, c->text, len, 0600)) {
		ok(0, "%s: cannot write %s", c->what, path);
		return;
	}
	memset(err, 0, sizeof(err));
	ret = config__load(cfg, path, err, sizeof(err));
	tap_diag("%s", err);
	is_int(ret, -EINVAL, "%s: returns -EINVAL", c->what);
	contains(err, path, "%s: message names the file", c->what);
	snprintf(line, sizeof(line), ":%d:", c->line);
	contains(err, line, "%s: message names line %d", c->what, c->line);
	for (i = 0; i < 3 && c->want[i]; i++)
		contains(err, c->want[i], "%s: message says \"%s\"", c->what,
			 c->want[i]);
	ok(same_config(cfg, before), "%s: config unchanged", c->what);
}

static void test_error_cases(void)
{
	struct fr_config *cfg, *before;
	char path[PATH_MAX];
	size_t i;

	cfg = load_full(path);
	before = cfg ? config__dup(cfg) : NULL;
	if (!ok(cfg && before, "error cases: a loaded config to start from"))
		return;
	for (i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++)
		test_error_case(cfg, before, &err_cases[i]);
	config__free(before);
	config__free(cfg);
}

/*
 * expect_file_error() - load @path over @cfg and check -@errnum, that the
 * message holds @want, and that @cfg did not change.
 */
static void expect_file_error(struct fr_config *cfg,
			      const struct fr_config *before,
			      const char *what, const char *path, int errnum,
			      const char *want)
{
	char err[FR_CONF_ERR_MAX] = "";
	int ret;

	ret = config__load(cfg, path, err, sizeof(err));
	tap_diag("%s", err);
	is_int(ret, -errnum, "%s: returns %d", what, -errnum);
	contains(err, path, "%s: message names the file", what);
	contains(err, want, "%s: message says \"%s\"", what, want);
	ok(same_config(cfg, before), "%s: config unchanged", what);
}

static void test_file_errors(void)
{
	char path[PATH_MAX], good[PATH_MAX], want[PATH_MAX + 64];
	struct fr_config *cfg, *before;
	char err[FR_CONF_ERR_MAX];
	static const char ok_text[] = "[recorder]\nfrequency = 5\n";
	int fd, ret;

	cfg = load_full(good);
	before = cfg ? config__dup(cfg) : NULL;
	if (!ok(cfg && before, "file errors: a loaded config to start from"))
		return;

	tmp_path(path, "missing.conf");
	snprintf(want, sizeof(want),
		 "failed to open '%s': No such file or directory", path);
	expect_file_error(cfg, before, "missing file", path, ENOENT, want);

	expect_file_error(cfg, before, "directory", tmpdir, EPERM,
			  "not a regular file but a directory");

	tmp_path(path, "fifo.conf");
	ok(!mkfifo(path, 0600), "made a FIFO");
	expect_file_error(cfg, before, "FIFO", path, EPERM,
			  "not a regular file but a FIFO");

	tmp_path(path, "world.conf");
	write_file(path, ok_text, strlen(ok_text), 0646);
	expect_file_error(cfg, before, "world-writable file", path, EPERM,
			  "world-writable (mode 0646)");

	tmp_path(path, "group.conf");
	write_file(path, ok_text, strlen(ok_text), 0660);
	expect_file_error(cfg, before, "group-writable file", path, EPERM,
			  "group-writable (mode 0660)");

	tmp_path(path, "nobody.conf");
	write_file(path, ok_text, strlen(ok_text), 0644);
	if (geteuid() == 0 && !chown(path, 65534, 65534))
		expect_file_error(cfg, before, "file owned by another user",
				  path, EPERM, "owned by uid 65534");
	else
		tap_skip(4, "chown to another user needs root");

	tmp_path(path, "huge.conf");
	write_file(path, "", 0, 0600);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ok(fd >= 0 && !ftruncate(fd, 2 * MIB), "made a 2 MiB file");
	if (fd >= 0)
		close(fd);
	expect_file_error(cfg, before, "huge file", path, EFBIG,
			  "larger than 1048576 bytes");

	ret = config__load(cfg, NULL, err, sizeof(err));
	is_int(ret, -EINVAL, "NULL path: returns -EINVAL");
	ret = config__load(NULL, good, err, sizeof(err));
	is_int(ret, -EINVAL, "NULL config: returns -EINVAL");
	ok(same_config(cfg, before), "NULL arguments: config unchanged");

	/* the good counterparts: 0644 and a symlink load fine */
	tmp_path(path, "public.conf");
	write_file(path, ok_text, strlen(ok_text), 0644);
	ret = config__load(cfg, path, NULL, 0);
	is_int(ret, 0, "mode 0644 file loads (NULL message buffer)");
	is_int(cfg->frequency, 5, "mode 0644 file: frequency = 5");
	tmp_path(want, "link.conf");
	ok(!symlink(path, want), "made a symlink");
	ret = config__load(cfg, want, err, sizeof(err));
	is_int(ret, 0, "symlink to a good file loads");
	is_str(cfg->path, want, "symlink: path is the link");

	config__free(before);
	config__free(cfg);
}

/* Lines 1..4; the case's sections start on line 5. */
#define T_PRE	"# trigger tests\n[recorder]\nwindow = 30s\n\n"
#define T_PSI	"type = psi\nresource = memory\n"
#define T_NAME_ACC \
	"accepted: [trigger NAME], NAME of 1..48 characters from A-Z, a-z, 0-9, '.', '_' and '-'"
#define T_CAP_MSG \
	"[trigger t1] window = 3s: without CAP_SYS_RESOURCE the kernel accepts only multiples of 2s (2s, 4s, 6s, 8s, 10s); grant CAP_SYS_RESOURCE or pick one of those"

struct trig_case {
	const char *what;
	const char *text;
	int cap;		/* fr_config_env.cap_sys_resource */
	int line;		/* where the error is */
	const char *want[4];	/* further parts of the message */
};

static const struct trig_case trig_cases[] = {
	{ "trigger without type",
	  T_PRE "[trigger t1]\nresource = memory\nstall = 100ms\n", 1, 5,
	  { "[trigger t1]: missing key type",
	    "accepted: type = psi, oom, signal" } },
	{ "trigger without type, followed by another section",
	  T_PRE "[trigger t1]\npost = 1s\n\n[output]\nmax_dumps = 3\n", 1, 5,
	  { "[trigger t1]: missing key type" } },
	{ "trigger of unknown type",
	  T_PRE "[trigger t1]\ntype = pressure\n", 1, 6,
	  { "[trigger t1] type = pressure: unknown value",
	    "accepted: psi, oom, signal" } },
	{ "trigger type in upper case", T_PRE "[trigger t1]\ntype = OOM\n", 1, 6,
	  { "[trigger t1] type = OOM: unknown value",
	    "accepted: psi, oom, signal" } },
	{ "trigger name with '/'", T_PRE "[trigger mem/pressure]\ntype = oom\n",
	  1, 5, { "[trigger mem/pressure]: invalid name, '/' not allowed",
		  T_NAME_ACC } },
	{ "trigger name with a blank", T_PRE "[trigger a b]\ntype = oom\n", 1, 5,
	  { "[trigger a b]: invalid name, ' ' not allowed", T_NAME_ACC } },
	{ "trigger name of 50 characters",
	  T_PRE "[trigger " X50 "]\ntype = oom\n", 1, 5,
	  { "invalid name, 50 characters long", T_NAME_ACC } },
	{ "trigger without a name", T_PRE "\n[ trigger ]\ntype = oom\n", 1, 6,
	  { "[trigger]: missing name", T_NAME_ACC } },
	{ "trigger section glued to its name", T_PRE "[triggerx]\n", 1, 5,
	  { "unknown section [triggerx]",
	    "accepted: [recorder], [output], [control], [privacy], [memory], [stalls], [trigger NAME]" } },
	{ "plain section with a name", T_PRE "[output x]\n", 1, 5,
	  { "unknown section [output x]" } },
	{ "psi trigger without stall",
	  T_PRE "[trigger t1]\n" T_PSI "window = 2s\n", 1, 5,
	  { "[trigger t1]: missing key stall, required with type = psi",
	    "accepted: stall = 1ms..10s" } },
	{ "psi trigger without resource",
	  T_PRE "[trigger t1]\ntype = psi\nstall = 100ms\n", 1, 5,
	  { "[trigger t1]: missing key resource, required with type = psi",
	    "accepted: resource = memory, cpu, io" } },
	{ "psi trigger with an unknown resource",
	  T_PRE "[trigger t1]\ntype = psi\nresource = disk\nstall = 1s\n", 1, 7,
	  { "[trigger t1] resource = disk: unknown value",
	    "accepted: memory, cpu, io" } },
	{ "psi trigger with an unknown kind",
	  T_PRE "[trigger t1]\n" T_PSI "kind = most\nstall = 1s\n", 1, 8,
	  { "[trigger t1] kind = most: unknown value",
	    "accepted: some, full" } },
	{ "psi window 100ms",
	  T_PRE "[trigger t1]\n" T_PSI "stall = 50ms\nwindow = 100ms\n", 1, 9,
	  { "[trigger t1] window = 100ms: too small", "accepted: 500ms..10s" } },
	{ "psi window 11s",
	  T_PRE "[trigger t1]\n" T_PSI "stall = 50ms\nwindow = 11s\n", 1, 9,
	  { "[trigger t1] window = 11s: too large", "accepted: 500ms..10s" } },
	{ "psi stall 3s, window 2s",
	  T_PRE "[trigger t1]\n" T_PSI "stall = 3s\nwindow = 2s\n", 1, 8,
	  { "[trigger t1] stall = 3s: longer than window = 2s",
	    "accepted: 0 < stall <= window" } },
	{ "psi stall 3s, window set first as 2000ms",
	  T_PRE "[trigger t1]\n" T_PSI "window = 2000ms\nstall = 3s\n", 1, 9,
	  { "[trigger t1] stall = 3s: longer than window = 2000ms;" } },
	{ "psi stall 3s, default window",
	  T_PRE "[trigger t1]\n" T_PSI "stall = 3s\n", 1, 8,
	  { "[trigger t1] stall = 3s: longer than window = 2s (the default)" } },
	{ "psi stall 0", T_PRE "[trigger t1]\n" T_PSI "stall = 0ms\n", 1, 8,
	  { "[trigger t1] stall = 0ms: too small",
	    "accepted: 1ms..10s with a unit suffix us, ms, s, m or h (and at most window)" } },
	{ "psi window 3s without CAP_SYS_RESOURCE",
	  T_PRE "[trigger t1]\n" T_PSI "stall = 1s\nwindow = 3s\n", 0, 9,
	  { T_CAP_MSG } },
	{ "psi window 500ms without CAP_SYS_RESOURCE",
	  T_PRE "[trigger t1]\n" T_PSI "stall = 100ms\nwindow = 500ms\n", 0, 9,
	  { "[trigger t1] window = 500ms: without CAP_SYS_RESOURCE" } },
	{ "resource in an oom trigger",
	  T_PRE "[trigger t1]\ntype = oom\nresource = memory\n", 1, 7,
	  { "[trigger t1] resource = memory: not a key of type = oom triggers",
	    "accepted with type = oom: type, pre, post, cooldown, max_per_hour" } },
	{ "window before the type of a signal trigger",
	  T_PRE "[trigger t1]\npost = 1s\nwindow = 2s\ntype = signal\ncgroup = /x\n",
	  1, 7,
	  { "[trigger t1] window = 2s: not a key of type = signal triggers" } },
	{ "two signal triggers",
	  T_PRE "[trigger a]\ntype = signal\n\n[trigger b]\npost = 1s\ntype = signal\n",
	  1, 10,
	  { "[trigger b] type = signal: a second signal trigger",
	    "the first is [trigger a] (type = signal at line 6)",
	    "accepted: at most one trigger of type = signal" } },
	{ "duplicate trigger name",
	  T_PRE "[trigger a]\ntype = oom\n[trigger b]\ntype = oom\n[trigger a]\ntype = oom\n",
	  1, 9, { "duplicate section [trigger a], first at line 5" } },
	{ "duplicate trigger name, spaced differently",
	  T_PRE "[trigger a]\ntype = oom\n[ trigger   a ]\ntype = oom\n",
	  1, 7, { "duplicate section [trigger a], first at line 5" } },
	{ "duplicate key in a trigger",
	  T_PRE "[trigger t1]\ntype = oom\npost = 1s\npost = 2s\n", 1, 8,
	  { "[trigger t1] post = 2s: duplicate key, first set at line 7" } },
	{ "unknown key in a trigger", T_PRE "[trigger t1]\ntype = oom\nafter = 1s\n",
	  1, 7,
	  { "[trigger t1] after = 1s: unknown key",
	    "accepted: type, resource, kind, stall, window, cgroup, pre, post, cooldown, max_per_hour" } },
	{ "pre longer than a [recorder] window that comes later",
	  "# pre\n[trigger t1]\ntype = oom\npre = 40s\n\n[recorder]\nwindow = 30s\n",
	  1, 4,
	  { "[trigger t1] pre = 40s: longer than [recorder] window = 30s",
	    "accepted: 0s..30s (0s = all of the window)" } },
	{ "pre longer than the [recorder] window loaded before (2m)",
	  "[trigger t1]\ntype = signal\npre = 121s\n", 1, 3,
	  { "[trigger t1] pre = 121s: longer than [recorder] window = 2m" } },
	{ "post 61s", T_PRE "[trigger t1]\ntype = oom\npost = 61s\n", 1, 7,
	  { "[trigger t1] post = 61s: too large", "accepted: 0s..1m" } },
	{ "cooldown 25h", T_PRE "[trigger t1]\ntype = oom\ncooldown = 25h\n", 1, 7,
	  { "[trigger t1] cooldown = 25h: too large", "accepted: 0s..24h" } },
	{ "max_per_hour 3601",
	  T_PRE "[trigger t1]\ntype = oom\nmax_per_hour = 3601\n", 1, 7,
	  { "[trigger t1] max_per_hour = 3601: too large",
	    "accepted: 0..3600 (0 = no limit)" } },
	{ "relative cgroup",
	  T_PRE "[trigger t1]\n" T_PSI "stall = 1s\ncgroup = sys/fs/cgroup\n", 1, 9,
	  { "[trigger t1] cgroup = sys/fs/cgroup: not an absolute path" } },
	{ "syntax error in a trigger wins over the key it lacks",
	  T_PRE "[trigger t1]\n" T_PSI "stall 100ms\n[output]\n", 1, 8,
	  { "syntax error; expected '[section]' or 'key = value'" } },
	{ "syntax error after a trigger that lacks a key",
	  T_PRE "[trigger t1]\n" T_PSI "\n[output]\nmax_dumps 5\n", 1, 5,
	  { "[trigger t1]: missing key stall" } },
};

/*
 * load_env() - write @text to case.conf and load it over @cfg with
 * CAP_SYS_RESOURCE as @cap says. Returns what config__load_env() does.
 */
static int load_env(struct fr_config *cfg, char *path, const char *text,
		    int cap, char *err)
{
	struct fr_config_env env = { .cap_sys_resource = cap };

	tmp_path(path, "case.conf");
	if (write_file(path, text, strlen(text), 0600))
		return -EIO;
	memset(err, 0, FR_CONF_ERR_MAX);
	return config__load_env(cfg, path, &env, err, FR_CONF_ERR_MAX);
}

/*
 * expect_trig_error() - load @text over @cfg (a copy of @before) and check
 * -EINVAL, a message naming the file, line @line and each of @want, and
 * that @cfg did not change.
 */
static void expect_trig_error(struct fr_config *cfg,
			      const struct fr_config *before, const char *what,
			      const char *text, int cap, int line,
			      const char *const *want, size_t nwant)
{
	char path[PATH_MAX], err[FR_CONF_ERR_MAX], at[16];
	size_t i;
	int ret;

	ret = load_env(cfg, path, text, cap, err);
	tap_diag("%s", err);
	is_int(ret, -EINVAL, "%s: returns -EINVAL", what);
	contains(err, path, "%s: message names the file", what);
	snprintf(at, sizeof(at), ":%d:", line);
	contains(err, at, "%s: message names line %d", what, line);
	for (i = 0; i < nwant && want[i]; i++)
		contains(err, want[i], "%s: message says \"%s\"", what, want[i]);
	ok(same_config(cfg, before), "%s: config unchanged", what);
}

static void test_trigger_errors(void)
{
	char path[PATH_MAX], dir[PATH_MAX], want[PATH_MAX + 64];
	char text[PATH_MAX + 1024];
	struct fr_config *cfg, *before;
	const char *wants[2];
	size_t i;

	cfg = load_full(path);
	before = cfg ? config__dup(cfg) : NULL;
	if (!ok(cfg && before, "trigger errors: a loaded config to start from"))
		return;
	for (i = 0; i < sizeof(trig_cases) / sizeof(trig_cases[0]); i++)
		expect_trig_error(cfg, before, trig_cases[i].what,
				  trig_cases[i].text, trig_cases[i].cap,
				  trig_cases[i].line, trig_cases[i].want, 4);

	/* cgroups that are not there, or not cgroup v2 directories */
	tmp_path(dir, "no-such-cgroup");
	snprintf(text, sizeof(text),
		 T_PRE "[trigger t1]\n" T_PSI "stall = 1s\ncgroup = %s\n", dir);
	snprintf(want, sizeof(want), "[trigger t1] cgroup = %s: no such directory",
		 dir);
	wants[0] = want;
	wants[1] = "accepted: an existing cgroup v2 directory holding memory.pressure";
	expect_trig_error(cfg, before, "nonexistent cgroup", text, 1, 9,
			  wants, 2);

	tmp_path(dir, "not-a-cgroup");
	ok(!mkdir(dir, 0700), "made %s", dir);
	snprintf(text, sizeof(text),
		 T_PRE "[trigger t1]\n" T_PSI "stall = 1s\ncgroup = %s\n", dir);
	snprintf(want, sizeof(want),
		 "[trigger t1] cgroup = %s: no memory.pressure in it", dir);
	wants[0] = want;
	wants[1] = "not a cgroup v2 directory";
	expect_trig_error(cfg, before, "cgroup directory without memory.pressure",
			  text, 1, 9, wants, 2);

	/* it holds cpu.pressure, but the trigger watches io */
	tmp_path(path, "not-a-cgroup/cpu.pressure");
	write_file(path, "", 0, 0600);
	snprintf(text, sizeof(text),
		 T_PRE "[trigger t1]\ntype = psi\nresource = io\nstall = 1s\ncgroup = %s/\n",
		 dir);
	snprintf(want, sizeof(want),
		 "[trigger t1] cgroup = %s/: no io.pressure in it", dir);
	wants[0] = want;
	wants[1] = "holding io.pressure";
	expect_trig_error(cfg, before, "cgroup directory without io.pressure",
			  text, 1, 9, wants, 2);

	snprintf(text, sizeof(text),
		 T_PRE "[trigger t1]\n" T_PSI "stall = 1s\ncgroup = %s\n", path);
	snprintf(want, sizeof(want),
		 "[trigger t1] cgroup = %s: not a directory but a regular file",
		 path);
	wants[0] = want;
	expect_trig_error(cfg, before, "cgroup that is a file", text, 1, 9,
			  wants, 1);

	config__free(before);
	config__free(cfg);
}

/* load_text() - a config loaded from @text with CAP_SYS_RESOURCE @cap. */
static struct fr_config *load_text(const char *text, int cap, const char *what)
{
	char path[PATH_MAX], err[FR_CONF_ERR_MAX];
	struct fr_config *cfg = config__new();
	int ret;

	if (!cfg)
		return NULL;
	ret = load_env(cfg, path, text, cap, err);
	if (!is_int(ret, 0, "%s: loads", what)) {
		tap_diag("%s", err);
		config__free(cfg);
		return NULL;
	}
	return cfg;
}

static void test_trigger_capability(void)
{
	static const char text[] =
		T_PRE "[trigger t1]\n" T_PSI "stall = 1s\nwindow = 3s\n";
	struct fr_config *cfg;

	cfg = load_text(text, 1, "window 3s with CAP_SYS_RESOURCE");
	if (!cfg) {
		tap_skip(2, "the config did not load");
		return;
	}
	ok(cfg->ntriggers == 1, "window 3s with CAP_SYS_RESOURCE: one trigger");
	is_int(cfg->triggers[0].window_ns, 3 * SEC,
	       "window 3s with CAP_SYS_RESOURCE: window = 3s");
	config__free(cfg);

	cfg = load_text(T_PRE "[trigger t1]\n" T_PSI "stall = 1s\nwindow = 10s\n",
			0, "window 10s without CAP_SYS_RESOURCE");
	ok(cfg && cfg->triggers[0].window_ns == 10 * SEC,
	   "window 10s without CAP_SYS_RESOURCE: window = 10s");
	config__free(cfg);
}

/* real_cgroup() - a cgroup v2 directory holding cpu.pressure, or NULL. */
static const char *real_cgroup(void)
{
	static const char *const dirs[] = {
		"/sys/fs/cgroup/unified", "/sys/fs/cgroup",
	};
	char file[PATH_MAX];
	struct stat st;
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(file, sizeof(file), "%s/cpu.pressure", dirs[i]);
		if (!stat(file, &st) && S_ISREG(st.st_mode))
			return dirs[i];
	}
	return NULL;
}

static void test_trigger_cgroup(void)
{
	const char *dir = real_cgroup();
	char text[PATH_MAX + 1024];
	struct fr_config *cfg;

	if (!dir) {
		tap_skip(3, "no cgroup v2 directory with cpu.pressure (neither /sys/fs/cgroup/unified nor /sys/fs/cgroup)");
		return;
	}
	snprintf(text, sizeof(text),
		 T_PRE "[trigger cpu]\ntype = psi\nresource = cpu\nkind = full\nstall = 150ms\ncgroup = %s\n",
		 dir);
	cfg = load_text(text, 0, "real cgroup v2 directory");
	if (!cfg) {
		tap_skip(2, "the config did not load");
		return;
	}
	is_str(cfg->triggers[0].cgroup, dir, "real cgroup: cgroup = %s", dir);
	ok(cfg->triggers[0].resource == FR_PSI_CPU &&
	   cfg->triggers[0].kind == FR_PSI_FULL &&
	   cfg->triggers[0].stall_ns == 150 * MSEC &&
	   cfg->triggers[0].window_ns == 2 * SEC,
	   "real cgroup: resource cpu, kind full, stall 150ms, window 2s");
	config__free(cfg);
}

/*
 * Every trigger type, defaults and set keys mixed. The psi trigger with a
 * cgroup needs a directory holding io.pressure: %s is one made in tmpdir.
 */
#define TRIG_FULL_CONF							\
	"# all trigger types\n"						\
	"[trigger mem]\n"						\
	"type = psi\n"							\
	"resource = memory\n"						\
	"stall = 200ms\n"						\
	"\n"								\
	"[trigger Disk_IO.2]\n"						\
	"max_per_hour = 3600\n"						\
	"cgroup = %s\n"							\
	"type = psi\n"							\
	"resource = io\n"						\
	"kind = full\n"							\
	"stall = 1500ms\n"						\
	"window = 4s\n"							\
	"pre = 2m\n"							\
	"post = 60s\n"							\
	"cooldown = 0s\n"						\
	"\n"								\
	"[trigger oom]\n"						\
	"type = oom\n"							\
	"\n"								\
	"[trigger manual]\n"						\
	"type = signal\n"						\
	"post = 5s\n"							\
	"\n"								\
	"[recorder]\n"							\
	"window = 5m\n"							\
	"[output]\n"							\
	"max_dumps = 0\n"						\
	"max_bytes = 0\n"						\
	"[control]\n"							\
	"socket = /run/fr test.sock\n"

/* load_trig_full() - a config loaded from TRIG_FULL_CONF, or NULL. */
static struct fr_config *load_trig_full(void)
{
	char dir[PATH_MAX], file[PATH_MAX], text[PATH_MAX + 2048];

	tmp_path(dir, "fake-cgroup");
	mkdir(dir, 0700);
	tmp_path(file, "fake-cgroup/io.pressure");
	write_file(file, "", 0, 0600);
	snprintf(text, sizeof(text), TRIG_FULL_CONF, dir);
	return load_text(text, 0, "trigger full");
}

static void test_trigger_full(void)
{
	const struct fr_trigger_conf *t;
	struct fr_config *cfg;
	char dir[PATH_MAX];

	cfg = load_trig_full();
	if (!cfg) {
		tap_skip(21, "the config did not load");
		return;
	}
	is_int(cfg->max_dumps, 0, "trigger full: max_dumps = 0");
	is_int(cfg->max_bytes, 0, "trigger full: max_bytes = 0");
	is_str(cfg->control_socket, "/run/fr test.sock",
	       "trigger full: control socket");
	if (!is_int(cfg->ntriggers, 4, "trigger full: four triggers")) {
		tap_skip(18, "wrong number of triggers");
		config__free(cfg);
		return;
	}
	t = &cfg->triggers[0];
	is_str(t->name, "mem", "trigger full: first is [trigger mem]");
	is_int(t->line, 2, "trigger full: mem at line 2");
	ok(t->type == FR_TRIG_PSI && t->resource == FR_PSI_MEMORY &&
	   t->kind == FR_PSI_SOME && t->stall_ns == 200 * MSEC &&
	   t->window_ns == 2 * SEC && t->cgroup == NULL,
	   "trigger full: mem is psi memory some 200ms/2s, system-wide");
	ok(t->pre_ns == 0 && t->post_ns == 0 && t->cooldown_ns == 60 * SEC &&
	   t->max_per_hour == 10,
	   "trigger full: mem has the psi defaults pre 0, post 0, cooldown 60s, 10/hour");

	t = &cfg->triggers[1];
	is_str(t->name, "Disk_IO.2", "trigger full: second is [trigger Disk_IO.2]");
	is_int(t->line, 7, "trigger full: Disk_IO.2 at line 7");
	tmp_path(dir, "fake-cgroup");
	is_str(t->cgroup, dir, "trigger full: Disk_IO.2 cgroup");
	ok(t->type == FR_TRIG_PSI && t->resource == FR_PSI_IO &&
	   t->kind == FR_PSI_FULL && t->stall_ns == 1500 * MSEC &&
	   t->window_ns == 4 * SEC,
	   "trigger full: Disk_IO.2 is psi io full 1500ms/4s");
	ok(t->pre_ns == 120 * SEC && t->post_ns == 60 * SEC &&
	   t->cooldown_ns == 0 && t->max_per_hour == 3600,
	   "trigger full: Disk_IO.2 pre 2m, post 60s, cooldown 0, 3600/hour");

	t = &cfg->triggers[2];
	is_str(t->name, "oom", "trigger full: third is [trigger oom]");
	ok(t->type == FR_TRIG_OOM && t->cooldown_ns == 60 * SEC &&
	   t->max_per_hour == 10 && t->pre_ns == 0 && t->post_ns == 0,
	   "trigger full: oom has the oom defaults cooldown 60s, 10/hour");
	ok(t->resource == 0 && t->kind == 0 && t->stall_ns == 0 &&
	   t->window_ns == 0 && t->cgroup == NULL,
	   "trigger full: oom leaves the psi fields zero");

	t = &cfg->triggers[3];
	is_str(t->name, "manual", "trigger full: fourth is [trigger manual]");
	ok(t->type == FR_TRIG_SIGNAL && t->post_ns == 5 * SEC &&
	   t->cooldown_ns == 0 && t->max_per_hour == 0 && t->pre_ns == 0,
	   "trigger full: signal has post 5s and the signal defaults cooldown 0, no limit");
	ok(t->window_ns == 0 && t->stall_ns == 0 && t->cgroup == NULL,
	   "trigger full: signal leaves the psi fields zero");
	config__free(cfg);
}

static void test_render_round_trip(const struct fr_config *cfg,
				   const char *what);

/* Names of 48 characters, and the cap on the number of triggers. */
static void test_trigger_limits(void)
{
	static const char name48[] =
		"A-Za-z0.9_" "aaaaaaaaaa" "bbbbbbbbbb" "cccccccccc" "dddddddd";
	char path[PATH_MAX], err[FR_CONF_ERR_MAX], *text, *pos;
	struct fr_config *cfg;
	size_t i, size = (FR_CONF_TRIGGERS_MAX + 1) * 32;
	int ret;

	text = malloc(size);
	if (!ok(text != NULL, "limits: text buffer"))
		return;
	snprintf(text, size, "[trigger %s]\ntype = oom\n", name48);
	cfg = load_text(text, 0, "limits: a 48-character name");
	ok(cfg && cfg->ntriggers == 1 && !strcmp(cfg->triggers[0].name, name48),
	   "limits: the 48-character name is kept");
	config__free(cfg);

	pos = text;
	for (i = 0; i < FR_CONF_TRIGGERS_MAX; i++)
		pos += sprintf(pos, "[trigger t%zu]\ntype = oom\n", i);
	cfg = load_text(text, 0, "limits: as many triggers as allowed");
	ok(cfg && cfg->ntriggers == FR_CONF_TRIGGERS_MAX,
	   "limits: %d triggers loaded", FR_CONF_TRIGGERS_MAX);
	if (cfg)
		test_render_round_trip(cfg, "limits");
	config__free(cfg);

	sprintf(pos, "[trigger one-more]\ntype = oom\n");
	cfg = config__new();
	ret = load_env(cfg, path, text, 0, err);
	is_int(ret, -EINVAL, "limits: one trigger too many returns -EINVAL");
	contains(err, ":513: [trigger one-more]: too many trigger sections",
		 "limits: message names the section and line 513");
	contains(err, "accepted: at most 256", "limits: message says the limit");
	ok(cfg->ntriggers == 0, "limits: config unchanged");
	config__free(cfg);
	free(text);
}

/* A second file over a loaded one: triggers are replaced by name. */
static void test_trigger_layers(void)
{
	char path[PATH_MAX], err[FR_CONF_ERR_MAX];
	struct fr_config *cfg, *before;
	const char *wants[2];
	int ret;

	cfg = load_trig_full();
	before = cfg ? config__dup(cfg) : NULL;
	if (!ok(cfg && before, "layers: a loaded config to start from"))
		goto out;
	ret = load_env(cfg, path,
		       "[trigger oom]\ntype = oom\ncooldown = 5s\n[trigger new]\ntype = oom\n",
		       0, err);
	if (!is_int(ret, 0, "layers: a second file loads"))
		tap_diag("%s", err);
	ok(cfg->ntriggers == 5, "layers: one trigger added");
	ok(cfg->ntriggers == 5 && !strcmp(cfg->triggers[2].name, "oom") &&
	   cfg->triggers[2].cooldown_ns == 5 * SEC &&
	   cfg->triggers[2].line == 1,
	   "layers: [trigger oom] replaced in place");
	ok(cfg->ntriggers == 5 && !strcmp(cfg->triggers[4].name, "new"),
	   "layers: [trigger new] added at the end");
	ok(cfg->ntriggers == 5 &&
	   same_trigger(&cfg->triggers[0], &before->triggers[0], 1) &&
	   same_trigger(&cfg->triggers[3], &before->triggers[3], 1),
	   "layers: triggers the file does not name are kept");

	config__free(before);
	before = config__dup(cfg);
	wants[0] = "[trigger sig2] type = signal: a second signal trigger, the first is [trigger manual], loaded before";
	expect_trig_error(cfg, before, "layers: a second signal trigger",
			  "[trigger sig2]\ntype = signal\n", 0, 2, wants, 1);
	wants[0] = "[recorder] window = 1m: shorter than pre = 2m of [trigger Disk_IO.2], loaded before";
	wants[1] = "accepted: 2m..24h";
	expect_trig_error(cfg, before, "layers: window below a kept pre",
			  "# shorter\n[recorder]\nwindow = 1m\n", 0, 3, wants, 2);
	ret = load_env(cfg, path, "[trigger manual]\ntype = oom\n[trigger sig2]\ntype = signal\n",
		       0, err);
	if (!is_int(ret, 0, "layers: a signal trigger may move to another name"))
		tap_diag("%s", err);
out:
	config__free(before);
	config__free(cfg);
}

/* test_render_round_trip() - render @cfg, load it back, compare. */
static void test_render_round_trip(const struct fr_config *cfg,
				   const char *what)
{
	char path[PATH_MAX], err[FR_CONF_ERR_MAX] = "";
	struct fr_config *back;
	char *text, *again;
	int ret;

	text = config__render(cfg);
	if (!ok(text != NULL, "%s: renders", what))
		return;
	tmp_path(path, "render.conf");
	ok(!write_file(path, text, strlen(text), 0600),
	   "%s: wrote the rendering", what);
	back = config__new();
	ret = config__load(back, path, err, sizeof(err));
	if (!is_int(ret, 0, "%s: rendering loads", what))
		tap_diag("%s", err);
	is_int(back->window_ns, cfg->window_ns, "%s: window round-trips", what);
	is_int(back->memory_bytes, cfg->memory_bytes,
	       "%s: memory round-trips", what);
	is_int(back->frequency, cfg->frequency,
	       "%s: frequency round-trips", what);
	is_str(back->directory, cfg->directory,
	       "%s: directory round-trips", what);
	is_int(back->ring_bytes, cfg->ring_bytes, "%s: ring round-trips", what);
	ok(same_str(back->group, cfg->group) &&
	   (!cfg->group || back->group_gid == cfg->group_gid),
	   "%s: group and its gid round-trip", what);
	is_int(back->privacy_cmdline, cfg->privacy_cmdline,
	       "%s: [privacy] cmdline round-trips", what);
	ok(same_values(back, cfg, 0),
	   "%s: every value and trigger round-trips", what);
	again = config__render(back);
	is_str(again, text, "%s: rendering the loaded config is identical",
	       what);
	free(again);
	free(text);
	config__free(back);
}

static void test_render(void)
{
	struct fr_config *cfg = config__new(), *copy;
	char path[PATH_MAX], *text;

	text = config__render(cfg);
	contains(text, "[recorder]\n", "render: has [recorder]");
	contains(text, "\nwindow = 30s\n", "render: has window = 30s");
	contains(text, "\nmemory = 256M\n", "render: has memory = 256M");
	contains(text, "\nfrequency = 99\n", "render: has frequency = 99");
	contains(text, "[output]\n", "render: has [output]");
	contains(text, "\ndirectory = /var/lib/flightrec\n",
		 "render: has directory = /var/lib/flightrec");
	contains(text, "\nfrequency = 99\n# BPF ring buffer the kernel hands events over in; a power of two; 0 = sized from frequency and CPU count\nring = 0\n",
		 "render: has ring = 0 after frequency, with its help");
	contains(text, "\nmax_bytes = 1G\n# group that may read the dumps (files 0640, directory 0750); not set = root only\n# group: not set\n",
		 "render: an unset group is a comment after max_bytes");
	ok(text && !strstr(text, "\ngroup ="), "render: no group line when unset");
	contains(text, "\n[privacy]\n# read and store process command lines; false = never read them\ncmdline = true\n",
		 "render: has [privacy] with cmdline = true");
	free(text);
	test_render_round_trip(cfg, "defaults");
	config__free(cfg);

	cfg = load_full(path);
	if (!ok(cfg != NULL, "render: loaded the full config"))
		return;
	text = config__render(cfg);
	contains(text, "\nwindow = 2m\n", "render: window = 2m");
	contains(text, "\nmemory = 1G\n", "render: memory = 1G");
	contains(text, "\ndirectory = /srv/flight rec;1\n",
		 "render: directory verbatim");
	free(text);
	test_render_round_trip(cfg, "full");

	cfg->window_ns = 1500 * 1000000ULL;
	cfg->memory_bytes = 4 * MIB + 1;
	cfg->frequency = 10000;
	test_render_round_trip(cfg, "odd values");
	text = config__render(cfg);
	contains(text, "\nwindow = 1500ms\n", "render: window = 1500ms");
	contains(text, "\nmemory = 4194305\n", "render: memory in bytes");
	free(text);

	/* values that cannot be written so that they load back */
	copy = config__dup(cfg);
	copy->window_ns = 1500 * 1000ULL;
	errno = 0;
	ok(!config__render(copy) && errno == EINVAL,
	   "render: sub-millisecond window fails with EINVAL");
	config__free(copy);

	copy = config__dup(cfg);
	copy->frequency = 0;
	errno = 0;
	ok(!config__render(copy) && errno == EINVAL,
	   "render: out-of-range frequency fails with EINVAL");
	config__free(copy);

	copy = config__dup(cfg);
	free(copy->directory);
	copy->directory = strdup("/a ;b");
	errno = 0;
	ok(!config__render(copy) && errno == EINVAL,
	   "render: directory with an inline comment fails with EINVAL");
	free(copy->directory);
	copy->directory = strdup("/a ");
	errno = 0;
	ok(!config__render(copy) && errno == EINVAL,
	   "render: directory with a trailing blank fails with EINVAL");
	free(copy->directory);
	copy->directory = strdup("relative");
	errno = 0;
	ok(!config__render(copy) && errno == EINVAL,
	   "render: relative directory fails with EINVAL");
	free(copy->directory);
	copy->directory = calloc(1, 200);
	memset(copy->directory, 'd', 198);
	copy->directory[0] = '/';
	errno = 0;
	ok(!config__render(copy) && errno == EINVAL,
	   "render: directory too long for one line fails with EINVAL");
	config__free(copy);
	errno = 0;
	ok(!config__render(NULL) && errno == EINVAL,
	   "render: NULL config fails with EINVAL");

	copy = config__dup(cfg);
	ok(copy && same_config(copy, cfg), "dup: same values");
	ok(copy && copy->directory != cfg->directory &&
	   copy->path != cfg->path, "dup: deep copy");
	ok(copy && copy->group == NULL, "dup: an unset group stays NULL");
	config__free(copy);
	errno = 0;
	ok(!config__dup(NULL) && errno == EINVAL, "dup: NULL fails with EINVAL");
	config__free(cfg);
}

/* render_fails() - true when rendering @cfg fails with EINVAL. */
static int render_fails(const struct fr_config *cfg)
{
	char *text;

	errno = 0;
	text = config__render(cfg);
	free(text);
	return !text && errno == EINVAL;
}

static void test_render_triggers(void)
{
	struct fr_config *cfg, *copy;
	struct fr_trigger_conf *t;
	char *text;

	cfg = load_trig_full();
	if (!cfg) {
		tap_skip(24, "the config did not load");
		return;
	}
	text = config__render(cfg);
	contains(text, "\n[output]\n# directory the dumps",
		 "render triggers: [output] as before");
	contains(text, "\nmax_dumps = 0\n", "render triggers: max_dumps = 0");
	contains(text, "\nmax_bytes = 0\n", "render triggers: max_bytes = 0");
	contains(text, "\n[control]\n", "render triggers: has [control]");
	contains(text, "\nsocket = /run/fr test.sock\n",
		 "render triggers: socket verbatim");
	contains(text, "\n[trigger mem]\n", "render triggers: has [trigger mem]");
	contains(text, "\ntype = psi\n# psi: the resource whose pressure is watched\nresource = memory\n",
		 "render triggers: type, then resource");
	contains(text, "\nkind = some\n", "render triggers: default kind");
	contains(text, "\nstall = 200ms\n", "render triggers: stall = 200ms");
	contains(text, "\n# cgroup: not set\n",
		 "render triggers: a psi trigger without cgroup says so");
	contains(text, "\n[trigger Disk_IO.2]\n",
		 "render triggers: has [trigger Disk_IO.2]");
	contains(text, "\nstall = 1500ms\n", "render triggers: stall = 1500ms");
	contains(text, "\npre = 2m\n", "render triggers: pre = 2m");
	contains(text, "\ncooldown = 0s\n", "render triggers: cooldown = 0s");
	contains(text, "\n[trigger oom]\n# what fires it: psi (pressure stall), oom (an OOM kill) or signal (SIGUSR1)\ntype = oom\n# history",
		 "render triggers: oom has no psi keys");
	contains(text, "\n[trigger manual]\n", "render triggers: has [trigger manual]");
	contains(text, "\nmax_per_hour = 0\n",
		 "render triggers: signal default max_per_hour = 0");
	free(text);
	test_render_round_trip(cfg, "triggers");

	/* triggers that cannot be written so that they load back */
	copy = config__dup(cfg);
	ok(copy && copy->triggers != cfg->triggers &&
	   copy->triggers[1].name != cfg->triggers[1].name &&
	   copy->triggers[1].cgroup != cfg->triggers[1].cgroup &&
	   same_config(copy, cfg), "dup: deep copy of the triggers");
	t = &copy->triggers[2];
	t->stall_ns = MSEC;
	ok(render_fails(copy), "render: an oom trigger with a stall fails with EINVAL");
	t->stall_ns = 0;
	free(t->name);
	t->name = strdup("no/slash");
	ok(render_fails(copy), "render: a bad trigger name fails with EINVAL");
	free(t->name);
	t->name = strdup("mem");
	ok(render_fails(copy), "render: two triggers of one name fail with EINVAL");
	free(t->name);
	t->name = strdup("oom");
	t->type = 0;
	ok(render_fails(copy), "render: a trigger without a type fails with EINVAL");
	t->type = FR_TRIG_SIGNAL;
	ok(render_fails(copy), "render: two signal triggers fail with EINVAL");
	t->type = FR_TRIG_OOM;
	t->pre_ns = copy->window_ns + SEC;
	ok(render_fails(copy), "render: pre longer than the window fails with EINVAL");
	t->pre_ns = 0;
	copy->triggers[0].stall_ns = 3 * SEC;
	ok(render_fails(copy), "render: stall longer than window fails with EINVAL");
	copy->triggers[0].stall_ns = 200 * MSEC;
	text = config__render(copy);
	ok(text != NULL, "render: the repaired copy renders again");
	free(text);
	config__free(copy);
	config__free(cfg);
}

/*
 * load_over() - write @text to case.conf and load it over @cfg with
 * config__load(). Returns what that does; a failure's message is a diag.
 */
static int load_over(struct fr_config *cfg, const char *text)
{
	char path[PATH_MAX], err[FR_CONF_ERR_MAX] = "";
	int ret;

	tmp_path(path, "case.conf");
	if (write_file(path, text, strlen(text), 0600))
		return -EIO;
	ret = config__load(cfg, path, err, sizeof(err));
	if (ret)
		tap_diag("%s", err);
	return ret;
}

/* Every spelling [recorder] ring and [privacy] cmdline accept. */
static void test_new_keys_accepted(void)
{
	static const struct {
		const char *value;
		uint64_t bytes;
	} rings[] = {
		{ "64K", 64 * KIB },
		{ "4M", 4 * MIB },
		{ "1G", GIB },
		{ "16K", 16 * KIB },
		{ "131072", 128 * KIB },
		{ "2MiB", 2 * MIB },
		{ "0", 0 },
	};
	static const struct {
		const char *value;
		bool on;
	} bools[] = {
		{ "false", false }, { "no", false }, { "off", false },
		{ "0", false }, { "true", true }, { "yes", true },
		{ "on", true }, { "1", true },
	};
	struct fr_config *cfg;
	char text[128];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(rings) / sizeof(rings[0]); i++) {
		cfg = config__new();
		if (!cfg)
			break;
		cfg->ring_bytes = 32 * KIB;	/* differs from every case */
		snprintf(text, sizeof(text), "[recorder]\nring = %s\n",
			 rings[i].value);
		ret = load_over(cfg, text);
		is_int(ret, 0, "ring = %s: loads", rings[i].value);
		is_int(cfg->ring_bytes, rings[i].bytes, "ring = %s: %llu bytes",
		       rings[i].value, (unsigned long long)rings[i].bytes);
		config__free(cfg);
	}
	for (i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
		cfg = config__new();
		if (!cfg)
			break;
		cfg->privacy_cmdline = !bools[i].on;
		snprintf(text, sizeof(text),
			 "# privacy\n[privacy]\ncmdline = %s ; comment\n",
			 bools[i].value);
		ret = load_over(cfg, text);
		is_int(ret, 0, "cmdline = %s: loads", bools[i].value);
		is_int(cfg->privacy_cmdline, bools[i].on, "cmdline = %s: %s",
		       bools[i].value, bools[i].on ? "true" : "false");
		config__free(cfg);
	}
}

/*
 * unknown_group() - a group name no group has, in @buf (64 bytes), or NULL
 * if the random names tried all exist.
 */
static const char *unknown_group(char *buf)
{
	int i;

	srand((unsigned int)getpid() ^ (unsigned int)time(NULL));
	for (i = 0; i < 8; i++) {
		snprintf(buf, 64, "fr-no-group-%08x", (unsigned int)rand());
		if (!getgrnam(buf))
			return buf;
	}
	return NULL;
}

/* [output] group: looked up at load, gid stored, unknown names refused. */
static void test_group(void)
{
	char path[PATH_MAX], err[FR_CONF_ERR_MAX], text[256], want[256];
	char name[64];
	struct fr_config *cfg, *before, *copy;
	const struct group *gr;
	gid_t nogroup;
	int ret;

	cfg = config__new();
	if (!cfg)
		return;
	cfg->group_gid = 12345;		/* the load must overwrite it */
	ret = load_over(cfg, "[output]\ngroup = root\n");
	is_int(ret, 0, "group = root: loads");
	is_str(cfg->group, "root", "group = root: name stored");
	is_int(cfg->group_gid, 0, "group = root: gid 0");

	gr = getgrnam("nogroup");
	if (gr) {
		nogroup = gr->gr_gid;
		ret = load_over(cfg, "[output]\ngroup = nogroup\n");
		is_int(ret, 0, "group = nogroup over group = root: loads");
		is_str(cfg->group, "nogroup", "group = nogroup: name replaced");
		is_int(cfg->group_gid, nogroup, "group = nogroup: gid %u",
		       (unsigned int)nogroup);
		ret = load_over(cfg, "[recorder]\nfrequency = 5\n");
		is_int(ret, 0, "a file without group: loads");
		ok(same_str(cfg->group, "nogroup") && cfg->group_gid == nogroup,
		   "a file without group keeps the group and its gid");
		copy = config__dup(cfg);
		ok(copy && copy->group != cfg->group &&
		   same_str(copy->group, "nogroup") &&
		   copy->group_gid == nogroup,
		   "dup: deep copy of the group, gid kept");
		config__free(copy);
	} else {
		tap_skip(6, "no group 'nogroup' on this system");
	}

	before = config__dup(cfg);
	if (!before || !unknown_group(name)) {
		tap_skip(6, "no unknown group name found");
		goto out;
	}
	snprintf(text, sizeof(text), "# unknown group\n[output]\ngroup = %s\n",
		 name);
	ret = load_env(cfg, path, text, 1, err);
	tap_diag("%s", err);
	is_int(ret, -EINVAL, "unknown group %s: returns -EINVAL", name);
	contains(err, path, "unknown group: message names the file");
	contains(err, ":3: ", "unknown group: message names line 3");
	snprintf(want, sizeof(want), "[output] group = %s: no such group; ",
		 name);
	contains(err, want, "unknown group: message says \"%s\"", want);
	contains(err, ACC_G, "unknown group: message says what is accepted");
	ok(same_config(cfg, before), "unknown group: config unchanged");
out:
	config__free(before);
	config__free(cfg);
}

/* Every new key set to a value other than its default, rendered and back. */
static void test_render_new_keys(void)
{
	struct fr_config *cfg, *copy;
	char *text;
	int ret;

	if (!getgrnam("nogroup")) {
		tap_skip(1, "no group 'nogroup' on this system");
		return;
	}
	cfg = config__new();
	if (!cfg)
		return;
	ret = load_over(cfg, "[recorder]\nring = 4M\n[output]\ngroup = nogroup\non_dump = /bin/echo shipped\non_dump_timeout = 90s\nresolve_timeout = 1500ms\n[privacy]\ncmdline = off\n");
	if (!is_int(ret, 0, "render new keys: a config with all of them set loads"))
		goto out;
	ok(cfg->ring_bytes == 4 * MIB && same_str(cfg->group, "nogroup") &&
	   !cfg->privacy_cmdline && same_str(cfg->on_dump, "/bin/echo shipped") &&
	   cfg->on_dump_timeout_ns == 90 * SEC && cfg->resolve_timeout_ns == 1500 * MSEC,
	   "render new keys: ring 4M, group nogroup, cmdline false, on_dump, on_dump_timeout 90s, resolve_timeout 1500ms");
	text = config__render(cfg);
	contains(text, "\nring = 4M\n", "render new keys: ring = 4M");
	contains(text, "\ngroup = nogroup\n", "render new keys: group = nogroup");
	contains(text, "\n[privacy]\n", "render new keys: has [privacy]");
	contains(text, "\ncmdline = false\n",
		 "render new keys: cmdline = off renders as false");
	contains(text, "\non_dump = /bin/echo shipped\n",
		 "render new keys: on_dump = /bin/echo shipped");
	contains(text, "\non_dump_timeout = 90s\n",
		 "render new keys: on_dump_timeout = 90s");
	ok(text && !strstr(text, ": not set\n"),
	   "render new keys: no key left unset");
	free(text);
	test_render_round_trip(cfg, "new keys");
	cfg->ring_bytes = GIB;
	cfg->privacy_cmdline = true;
	test_render_round_trip(cfg, "new keys, ring 1G");

	/* values that cannot be written so that they load back */
	copy = config__dup(cfg);
	if (!ok(copy != NULL, "render new keys: dup"))
		goto out;
	copy->ring_bytes = 100 * KIB;
	ok(render_fails(copy), "render: ring 100K (not a power of two) fails with EINVAL");
	copy->ring_bytes = 8 * KIB;
	ok(render_fails(copy), "render: ring 8K (below 16K) fails with EINVAL");
	copy->ring_bytes = 2 * GIB;
	ok(render_fails(copy), "render: ring 2G (above 1G) fails with EINVAL");
	copy->ring_bytes = 0;
	free(copy->group);
	copy->group = strdup("root:x");
	ok(render_fails(copy), "render: group with ':' fails with EINVAL");
	free(copy->group);
	copy->group = strdup("a ;b");
	ok(render_fails(copy), "render: group with an inline comment fails with EINVAL");
	free(copy->group);
	copy->group = strdup("");
	ok(render_fails(copy), "render: empty group fails with EINVAL");
	free(copy->group);
	copy->group = NULL;
	text = config__render(copy);
	contains(text, "\n# group: not set\n",
		 "render: the copy with group unset renders again");
	free(text);
	config__free(copy);
out:
	config__free(cfg);
}

/* A value that fits a line only as "key=value" still renders and loads back. */
static void test_render_long_line(void)
{
	struct fr_config *cfg = config__new();
	char text[256], dir[200];
	char *out;

	if (!cfg)
		return;
	memset(dir, 'd', sizeof(dir));
	dir[0] = '/';
	dir[186] = 0;	/* "directory=" + 186 bytes: a 196-byte line */
	snprintf(text, sizeof(text), "[output]\ndirectory=%s\n", dir);
	if (is_int(load_over(cfg, text), 0, "render long line: a 196-byte directory line loads")) {
		out = config__render(cfg);
		ok(out != NULL, "render long line: it renders");
		contains(out, "\ndirectory=/ddd", "render long line: as key=value, without spaces");
		free(out);
		test_render_round_trip(cfg, "long line");
	}
	config__free(cfg);
}

struct split_case {
	const char *what;
	const char *cmd;
	int ret;
	int argc;
	const char *argv[6];
};

static const struct split_case split_cases[] = {
	{ "plain words", "/usr/bin/ship --bucket b1", 0, 3,
	  { "/usr/bin/ship", "--bucket", "b1" } },
	{ "one word", "/bin/true", 0, 1, { "/bin/true" } },
	{ "blanks around and between", "  /bin/echo \t a  \t\tb \t", 0, 3,
	  { "/bin/echo", "a", "b" } },
	{ "tabs only between", "/bin/echo\ta\tb", 0, 3,
	  { "/bin/echo", "a", "b" } },
	{ "double quotes group", "/bin/echo \"a b\" c", 0, 3,
	  { "/bin/echo", "a b", "c" } },
	{ "quotes keep tabs", "/bin/echo \"a\tb\"", 0, 2,
	  { "/bin/echo", "a\tb" } },
	{ "quotes inside a word", "/bin/echo a\"b c\"d", 0, 2,
	  { "/bin/echo", "ab cd" } },
	{ "empty quotes are an empty word", "/bin/echo \"\" x \"\"", 0, 4,
	  { "/bin/echo", "", "x", "" } },
	{ "only empty quotes", "\"\"", 0, 1, { "" } },
	{ "empty quotes glued to a word", "/bin/echo a\"\"b", 0, 2,
	  { "/bin/echo", "ab" } },
	{ "backslash escapes a blank", "/bin/echo a\\ b", 0, 2,
	  { "/bin/echo", "a b" } },
	{ "backslash escapes a quote", "/bin/echo \\\"a", 0, 2,
	  { "/bin/echo", "\"a" } },
	{ "backslash in quotes", "/bin/echo \"a\\\"b\\\\c\"", 0, 2,
	  { "/bin/echo", "a\"b\\c" } },
	{ "escaped backslash", "/bin/echo \\\\", 0, 2, { "/bin/echo", "\\" } },
	{ "backslash before a letter", "/bin/echo \\n", 0, 2,
	  { "/bin/echo", "n" } },
	{ "no shell: $, globs, ~, single quotes",
	  "/bin/echo $HOME * ~ 'a b'", 0, 6,
	  { "/bin/echo", "$HOME", "*", "~", "'a", "b'" } },
	{ "';' and '=' are plain", "/bin/echo a;b c=d", 0, 3,
	  { "/bin/echo", "a;b", "c=d" } },
	{ "unbalanced quote", "/bin/echo \"a b", -EINVAL, 0, { NULL } },
	{ "unbalanced quote at the start", "\"/usr/bin/x", -EINVAL, 0,
	  { NULL } },
	{ "quote escaped, so unbalanced", "/bin/echo \"a\\\"", -EINVAL, 0,
	  { NULL } },
	{ "trailing backslash", "/bin/echo a\\", -EINVAL, 0, { NULL } },
	{ "trailing backslash in quotes", "/bin/echo \"a\\", -EINVAL, 0,
	  { NULL } },
	{ "empty", "", -EINVAL, 0, { NULL } },
	{ "only blanks", " \t ", -EINVAL, 0, { NULL } },
};

/* check_split() - conf_split_command(@cmd) gives @want (@n words) or @ret. */
static void check_split(const char *what, const char *cmd, int ret, int n,
			const char *const *want)
{
	char **sentinel = (char **)&sentinel, **argv = sentinel;
	int argc = -7, got, i, same;

	got = conf_split_command(cmd, &argv, &argc);
	if (!is_int(got, ret, "split %s: returns %d", what, ret))
		return;
	if (ret) {
		ok(argv == sentinel && argc == -7,
		   "split %s: argv and argc left alone", what);
		return;
	}
	is_int(argc, n, "split %s: %d words", what, n);
	for (i = 0, same = argc == n; same && i < n; i++) {
		same = !strcmp(argv[i], want[i]);
		if (!same)
			tap_diag("word %d is '%s', want '%s'", i, argv[i],
				 want[i]);
	}
	ok(same && argv[argc] == NULL,
	   "split %s: the words, NULL-terminated", what);
	conf_free_argv(argv);
}

/* conf_split_command(): the table, the word limit, bad arguments. */
static void test_split_command(void)
{
	const char *want[FR_CONF_COMMAND_WORDS_MAX + 1];
	char cmd[512], *pos, **argv;
	size_t i;
	int argc;

	for (i = 0; i < sizeof(split_cases) / sizeof(split_cases[0]); i++)
		check_split(split_cases[i].what, split_cases[i].cmd,
			    split_cases[i].ret, split_cases[i].argc,
			    split_cases[i].argv);

	/* 32 words split; 33 do not */
	pos = cmd + sprintf(cmd, "/bin/echo");
	want[0] = "/bin/echo";
	for (i = 1; i < FR_CONF_COMMAND_WORDS_MAX; i++) {
		want[i] = "w";
		pos += sprintf(pos, " w");
	}
	check_split("32 words", cmd, 0, FR_CONF_COMMAND_WORDS_MAX, want);
	sprintf(pos, " \"\"");
	check_split("33 words, the last empty", cmd, -EINVAL, 0, NULL);

	is_int(conf_split_command(NULL, &argv, &argc), -EINVAL,
	       "split NULL command: -EINVAL");
	is_int(conf_split_command("/bin/true", NULL, &argc), -EINVAL,
	       "split into NULL argv: -EINVAL");
	is_int(conf_split_command("/bin/true", &argv, NULL), -EINVAL,
	       "split into NULL argc: -EINVAL");
	ok(survives(conf_free_argv(NULL)), "conf_free_argv(NULL) is harmless");
}

/* A writable tmpfs mounted noexec in tmpdir, or NULL; see umount_noexec(). */
static const char *mount_noexec(char *dir)
{
	tmp_path(dir, "noexec");
	if (geteuid() != 0 || mkdir(dir, 0700))
		return NULL;
	if (mount("tmpfs", dir, "tmpfs", MS_NOEXEC | MS_NOSUID | MS_NODEV,
		  "size=64k,mode=0700")) {
		tap_diag("mount tmpfs noexec on %s: %s", dir, strerror(errno));
		rmdir(dir);
		return NULL;
	}
	return dir;
}

/*
 * expect_on_dump_error() - load "[output] on_dump = @value" (line 3) over
 * @cfg and check -EINVAL, a message naming the file, line 3, the section,
 * key and value, and @why; and that @cfg did not change.
 */
static void expect_on_dump_error(struct fr_config *cfg,
				 const struct fr_config *before,
				 const char *what, const char *value,
				 const char *why)
{
	char text[PATH_MAX + 256], want[PATH_MAX + 256];
	const char *wants[3];

	snprintf(text, sizeof(text), "# on_dump\n[output]\non_dump = %s\n",
		 value);
	snprintf(want, sizeof(want), "[output] on_dump = %s: %s", value, why);
	wants[0] = want;
	wants[1] = ACC_D;
	wants[2] = NULL;
	expect_trig_error(cfg, before, what, text, 1, 3, wants, 2);
}

/* [output] on_dump programs that are not there or cannot be run. */
static void test_on_dump_errors(void)
{
	char prog[PATH_MAX], dir[PATH_MAX], value[PATH_MAX + 64];
	char path[PATH_MAX], why[PATH_MAX + 64];
	struct fr_config *cfg, *before;

	cfg = load_full(path);
	before = cfg ? config__dup(cfg) : NULL;
	if (!ok(cfg && before, "on_dump errors: a loaded config to start from"))
		goto out;

	expect_on_dump_error(cfg, before, "on_dump relative program",
			     "./upload.sh", "the program must be an absolute path");
	expect_on_dump_error(cfg, before, "on_dump unbalanced quote",
			     "\"/usr/bin/x", "unbalanced quote");

	tmp_path(prog, "nonexistent/x");
	expect_on_dump_error(cfg, before, "on_dump missing program", prog,
			     "no such file");
	snprintf(value, sizeof(value), "%s --bucket \"s3://a b\"", prog);
	snprintf(why, sizeof(why), "program '%s': no such file", prog);
	expect_on_dump_error(cfg, before, "on_dump missing program with arguments",
			     value, why);
	expect_on_dump_error(cfg, before, "on_dump program under a file",
			     "/bin/true/x", "no such file");

	expect_on_dump_error(cfg, before, "on_dump directory as program",
			     tmpdir, "not a regular file but a directory");

	tmp_path(prog, "upload.sh");
	ok(!write_file(prog, "#!/bin/sh\nexit 0\n", 17, 0644),
	   "made %s, mode 0644", prog);
	expect_on_dump_error(cfg, before, "on_dump non-executable program",
			     prog, "not executable (mode 0644)");
	snprintf(value, sizeof(value), "\"%s\" a", prog);
	snprintf(why, sizeof(why), "program '%s': not executable (mode 0644)",
		 prog);
	expect_on_dump_error(cfg, before,
			     "on_dump non-executable program, quoted", value,
			     why);

	/* mode bits that allow it, on a file system that does not */
	if (mount_noexec(dir)) {
		tmp_path(prog, "noexec/upload.sh");
		ok(!write_file(prog, "#!/bin/sh\nexit 0\n", 17, 0755),
		   "made %s, mode 0755, on a noexec mount", prog);
		expect_on_dump_error(cfg, before, "on_dump program on a noexec mount",
				     prog, "not executable: Permission denied");
		ok(!umount(dir), "unmounted %s", dir);
		rmdir(dir);
	} else {
		tap_skip(7, "mounting a noexec tmpfs needs root and mount permission");
	}

	/* a failed check leaves an on_dump loaded before in place */
	is_int(load_over(cfg, "[output]\non_dump = /bin/true first\n"), 0,
	       "on_dump errors: a good on_dump loads");
	config__free(before);
	before = config__dup(cfg);
	if (before)
		expect_on_dump_error(cfg, before, "on_dump error over a loaded one",
				     "/nonexistent/x", "no such file");
	is_str(cfg->on_dump, "/bin/true first",
	       "on_dump errors: the loaded on_dump is kept");
out:
	config__free(before);
	config__free(cfg);
}

/* check_words() - @cmd splits into the @n words @want. */
static void check_words(const char *what, const char *cmd, int n,
			const char *const *want)
{
	check_split(what, cmd ? cmd : "", 0, n, want);
}

/* [output] on_dump and on_dump_timeout values that load. */
static void test_on_dump_good(void)
{
	static const char *const echo3[] = { "/bin/echo", "hello", "a b" };
	static const char *const true1[] = { "/bin/true" };
	char prog[PATH_MAX], link[PATH_MAX], text[PATH_MAX + 64];
	struct fr_config *cfg, *copy;
	int ret;

	cfg = config__new();
	if (!cfg)
		return;
	ret = load_over(cfg, "# hook\n[output]\non_dump = /bin/echo hello \"a b\"\n");
	is_int(ret, 0, "on_dump /bin/echo hello \"a b\": loads");
	is_str(cfg->on_dump, "/bin/echo hello \"a b\"",
	       "on_dump: kept as written");
	check_words("the loaded on_dump", cfg->on_dump, 3, echo3);
	is_int(cfg->on_dump_timeout_ns, 60 * SEC,
	       "on_dump_timeout not set: default 60s");

	copy = config__dup(cfg);
	ok(copy && copy->on_dump != cfg->on_dump &&
	   same_str(copy->on_dump, cfg->on_dump) &&
	   copy->on_dump_timeout_ns == cfg->on_dump_timeout_ns,
	   "dup: deep copy of on_dump");
	config__free(copy);

	ret = load_over(cfg, "[recorder]\nfrequency = 5\n");
	is_int(ret, 0, "a file without on_dump: loads");
	is_str(cfg->on_dump, "/bin/echo hello \"a b\"",
	       "a file without on_dump keeps it");

	ret = load_over(cfg, "[output]\non_dump = /bin/true ; a comment\non_dump_timeout = 1h\n");
	is_int(ret, 0, "on_dump /bin/true with an inline comment: loads");
	is_str(cfg->on_dump, "/bin/true", "on_dump replaced, comment dropped");
	check_words("on_dump /bin/true", cfg->on_dump, 1, true1);
	is_int(cfg->on_dump_timeout_ns, 3600 * SEC, "on_dump_timeout = 1h");

	ret = load_over(cfg, "[output]\non_dump_timeout = 1s\non_dump=\"/bin/true\"\n");
	is_int(ret, 0, "on_dump_timeout = 1s, quoted program: loads");
	is_int(cfg->on_dump_timeout_ns, SEC, "on_dump_timeout = 1s");
	check_words("a quoted program", cfg->on_dump, 1, true1);

	ret = load_over(cfg, "[output]\non_dump_timeout = 2500ms\n");
	is_int(ret, 0, "on_dump_timeout = 2500ms: loads");
	is_int(cfg->on_dump_timeout_ns, 2500 * MSEC, "on_dump_timeout = 2500ms");

	/* through a symlink; and a program whose name holds a blank */
	tmp_path(prog, "ship dump");
	ok(!write_file(prog, "#!/bin/sh\nexit 0\n", 17, 0700),
	   "made '%s', mode 0700", prog);
	tmp_path(link, "ship-link");
	ok(!symlink(prog, link), "made a symlink to it");
	snprintf(text, sizeof(text), "[output]\non_dump = %s x\n", link);
	is_int(load_over(cfg, text), 0, "on_dump through a symlink: loads");
	snprintf(text, sizeof(text), "[output]\non_dump = \"%s\" --all\n", prog);
	is_int(load_over(cfg, text), 0, "on_dump with a blank in the program: loads");
	test_render_round_trip(cfg, "on_dump with a blank in the program");
	config__free(cfg);
}

/* on_dump rendered word by word, and loaded back to the same words. */
static void test_render_on_dump(void)
{
	static const char *const tricky[] = {
		"/bin/echo", "say \"hi\"", "a\\b", "", "a ;b", ";c", "it's",
		"tab\there",
	};
	static const char *const four[] = {
		"/bin/echo", "two words", "x", "\"",
	};
	char text[512], *out, *pos, line[256];
	struct fr_config *cfg, *back;
	size_t i;

	cfg = config__new();
	if (!cfg)
		return;
	/* a word with a blank and a quote, as a file spells it */
	if (!is_int(load_over(cfg, "[output]\non_dump = /bin/echo \"two words\" x \\\"\n"),
		    0, "render on_dump: a config with on_dump loads"))
		goto out;
	out = config__render(cfg);
	contains(out, "\non_dump = /bin/echo \"two words\" x \"\\\"\"\n",
		 "render on_dump: words quoted where needed");
	contains(out, "\non_dump_timeout = 1m\n",
		 "render on_dump: on_dump_timeout = 1m");
	free(out);
	test_render_round_trip(cfg, "on_dump with a blank and a quote");
	check_words("on_dump as loaded", cfg->on_dump, 4, four);

	/* set by code: odd blanks, every character that needs care */
	free(cfg->on_dump);
	cfg->on_dump = strdup("  /bin/echo \"say \\\"hi\\\"\"  a\\\\b \"\" \"a ;b\" \\;c it's \"tab\there\" ");
	check_words("the tricky on_dump", cfg->on_dump, 8, tricky);
	out = config__render(cfg);
	contains(out, "\non_dump = /bin/echo \"say \\\"hi\\\"\" \"a\\\\b\" \"\" \"a \\;b\" \";c\" it's \"tab\there\"\n",
		 "render on_dump: tricky words written back canonically");
	free(out);
	test_render_round_trip(cfg, "tricky on_dump");

	/* a 189-byte command fits a line only as on_dump=... */
	memset(line, 'x', sizeof(line));
	memcpy(line, "/bin/echo ", 10);
	line[189] = '\0';
	snprintf(text, sizeof(text), "[output]\non_dump=%s\n", line);
	if (is_int(load_over(cfg, text), 0, "render on_dump: a 197-byte on_dump= line loads")) {
		out = config__render(cfg);
		contains(out, "\non_dump=/bin/echo xxx",
			 "render on_dump: long line as key=value, without spaces");
		free(out);
		test_render_round_trip(cfg, "long on_dump");
	}

	/* quoting would make it too long for a line: written as loaded */
	pos = line + sprintf(line, "/bin/echo");
	for (i = 0; i < 31; i++)
		pos += sprintf(pos, " a\\ b");
	snprintf(text, sizeof(text), "[output]\non_dump = %s\n", line);
	if (is_int(load_over(cfg, text), 0, "render on_dump: 31 escaped blanks load")) {
		snprintf(text, sizeof(text), "\non_dump = %s\n", line);
		out = config__render(cfg);
		contains(out, text, "render on_dump: too long when quoted, so as loaded");
		free(out);
		test_render_round_trip(cfg, "on_dump too long when quoted");
	}

	/* commands that cannot be written so that they load back */
	back = config__dup(cfg);
	if (!ok(back != NULL, "render on_dump: dup"))
		goto out;
	free(back->on_dump);
	back->on_dump = strdup("bin/echo x");
	ok(render_fails(back), "render: relative on_dump program fails with EINVAL");
	free(back->on_dump);
	back->on_dump = strdup("/bin/echo \"x");
	ok(render_fails(back), "render: on_dump with an unbalanced quote fails with EINVAL");
	free(back->on_dump);
	back->on_dump = strdup("/bin/echo x\\");
	ok(render_fails(back), "render: on_dump with a trailing backslash fails with EINVAL");
	free(back->on_dump);
	back->on_dump = strdup("/bin/echo a\nb");
	ok(render_fails(back), "render: on_dump with a newline fails with EINVAL");
	free(back->on_dump);
	back->on_dump = strdup(" ");
	ok(render_fails(back), "render: blank on_dump fails with EINVAL");
	free(back->on_dump);
	back->on_dump = strdup("/bin/echo " W31 " x");
	ok(render_fails(back), "render: on_dump of 33 words fails with EINVAL");
	free(back->on_dump);
	memset(line, 'y', 200);
	memcpy(line, "/bin/echo ", 10);
	line[200] = '\0';
	back->on_dump = strdup(line);
	ok(render_fails(back), "render: on_dump too long for a line fails with EINVAL");
	free(back->on_dump);
	back->on_dump = NULL;
	back->on_dump_timeout_ns = 2 * 3600 * SEC;
	ok(render_fails(back), "render: on_dump_timeout 2h fails with EINVAL");
	back->on_dump_timeout_ns = 1500 * MSEC;
	out = config__render(back);
	contains(out, "\n# on_dump: not set\n# the on_dump command is killed when it runs longer than this\non_dump_timeout = 1500ms\n",
		 "render: on_dump unset is a comment, before on_dump_timeout");
	free(out);
	config__free(back);
out:
	config__free(cfg);
}

/* test_sample_triggers() - the two triggers flightrec.conf enables. */
static void test_sample_triggers(const struct fr_config *cfg)
{
	const struct fr_trigger_conf *t;

	if (!is_int(cfg->ntriggers, 2, "sample: two triggers")) {
		tap_skip(4, "wrong number of triggers");
		return;
	}
	t = &cfg->triggers[0];
	is_str(t->name, "memory-pressure", "sample: [trigger memory-pressure]");
	ok(t->type == FR_TRIG_PSI && t->resource == FR_PSI_MEMORY &&
	   t->kind == FR_PSI_SOME && t->stall_ns == 200 * MSEC &&
	   t->window_ns == 2 * SEC && !t->cgroup && t->pre_ns == 0 &&
	   t->post_ns == 2 * SEC && t->cooldown_ns == 60 * SEC &&
	   t->max_per_hour == 10,
	   "sample: memory-pressure is psi memory some 200ms/2s, post 2s, cooldown 60s, 10/hour");
	t = &cfg->triggers[1];
	is_str(t->name, "oom", "sample: [trigger oom]");
	ok(t->type == FR_TRIG_OOM && t->post_ns == SEC && t->pre_ns == 0 &&
	   t->cooldown_ns == 60 * SEC && t->max_per_hour == 10,
	   "sample: oom has post 1s, cooldown 60s, 10/hour");
}

/* The shipped flightrec.conf loads to the defaults and lists every key. */
static void test_sample_file(const char *sample)
{
	char path[PATH_MAX], err[FR_CONF_ERR_MAX] = "";
	struct fr_config *cfg, *defaults;
	char *text, *render, *line, *save;
	int ret, all = 1, optional = 1;
	size_t n;

	text = read_text(sample);
	if (!text) {
		tap_skip(4, "shipped flightrec.conf not found; pass its path as argv[1]");
		return;
	}
	/* a copy, so the checkout's file mode does not matter */
	tmp_path(path, "sample.conf");
	write_file(path, text, strlen(text), 0600);
	cfg = config__new();
	defaults = config__new();
	ret = config__load(cfg, path, err, sizeof(err));
	if (!is_int(ret, 0, "sample: %s loads", sample))
		tap_diag("%s", err);
	ok(cfg->window_ns == defaults->window_ns &&
	   cfg->memory_bytes == defaults->memory_bytes &&
	   cfg->frequency == defaults->frequency &&
	   same_str(cfg->directory, defaults->directory) &&
	   cfg->max_dumps == defaults->max_dumps &&
	   cfg->max_bytes == defaults->max_bytes &&
	   same_str(cfg->control_socket, defaults->control_socket) &&
	   cfg->ring_bytes == defaults->ring_bytes &&
	   same_str(cfg->group, defaults->group) &&
	   same_str(cfg->on_dump, defaults->on_dump) &&
	   cfg->on_dump_timeout_ns == defaults->on_dump_timeout_ns &&
	   cfg->privacy_cmdline == defaults->privacy_cmdline,
	   "sample: holds the built-in defaults");
	test_sample_triggers(cfg);
	render = config__render(defaults);
	ok(render != NULL, "sample: defaults render");
	for (line = strtok_r(render, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char want[256];

		/* an optional key, unset: the sample shows it commented out */
		n = strlen(line);
		if (n > 11 && !strncmp(line, "# ", 2) &&
		    !strcmp(line + n - 9, ": not set")) {
			snprintf(want, sizeof(want), "\n#%.*s = ",
				 (int)(n - 11), line + 2);
			if (!strstr(text, want)) {
				tap_diag("sample lacks '%s...'", want + 1);
				optional = 0;
			}
			continue;
		}
		if (line[0] == '#' || line[0] == '[')
			continue;
		snprintf(want, sizeof(want), "\n%s\n", line);
		if (!strstr(text, want)) {
			tap_diag("sample lacks '%s'", line);
			all = 0;
		}
	}
	ok(all, "sample: sets every key to its default");
	ok(optional, "sample: shows every optional key, commented out");
	free(render);
	config__free(defaults);
	config__free(cfg);
	free(text);
}

struct parse_case {
	const char *s;
	int ret;
	uint64_t v;
};

static const struct parse_case duration_cases[] = {
	{ "250ms", 0, 250000000ULL },
	{ "100us", 0, 100000ULL },
	{ "0us", 0, 0 },
	{ "18446744073709551us", 0, 18446744073709551000ULL },
	{ "18446744073709552us", -ERANGE, 0 },
	{ "30US", -EINVAL, 0 },
	{ "30s", 0, 30 * SEC },
	{ "2m", 0, 120 * SEC },
	{ "1h", 0, 3600 * SEC },
	{ "0s", 0, 0 },
	{ "007s", 0, 7 * SEC },
	{ "18446744073709ms", 0, 18446744073709000000ULL },
	{ "5124095h", 0, 5124095ULL * 3600 * SEC },
	{ "18446744073710ms", -ERANGE, 0 },
	{ "5124096h", -ERANGE, 0 },
	{ "99999999999999999999s", -ERANGE, 0 },
	{ "30", -EINVAL, 0 },
	{ "30x", -EINVAL, 0 },
	{ "30S", -EINVAL, 0 },
	{ "30sec", -EINVAL, 0 },
	{ "30 s", -EINVAL, 0 },
	{ " 30s", -EINVAL, 0 },
	{ "30s ", -EINVAL, 0 },
	{ "-1s", -EINVAL, 0 },
	{ "+1s", -EINVAL, 0 },
	{ "1.5s", -EINVAL, 0 },
	{ "0x10s", -EINVAL, 0 },
	{ "s", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
};

static const struct parse_case size_cases[] = {
	{ "4096", 0, 4096 },
	{ "0", 0, 0 },
	{ "64K", 0, 64 * 1024 },
	{ "256M", 0, 256 * MIB },
	{ "2G", 0, 2 * GIB },
	{ "1KiB", 0, 1024 },
	{ "3MiB", 0, 3 * MIB },
	{ "2GiB", 0, 2 * GIB },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "17179869183G", 0, 17179869183ULL * GIB },
	{ "18446744073709551616", -ERANGE, 0 },
	{ "17179869184G", -ERANGE, 0 },
	{ "18014398509481984K", -ERANGE, 0 },
	{ "1k", -EINVAL, 0 },
	{ "1KB", -EINVAL, 0 },
	{ "1T", -EINVAL, 0 },
	{ "1 K", -EINVAL, 0 },
	{ "1K ", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "1.5G", -EINVAL, 0 },
	{ "K", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
};

static void test_parse_cases(const char *what,
			     int (*parse)(const char *, uint64_t *),
			     const struct parse_case *cases, size_t n)
{
	uint64_t v;
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		v = 12345;
		ret = parse(cases[i].s, &v);
		is_int(ret, cases[i].ret, "%s(\"%s\") returns %d", what,
		       cases[i].s, cases[i].ret);
		if (!cases[i].ret)
			ok(v == cases[i].v, "%s(\"%s\") = %llu", what,
			   cases[i].s, (unsigned long long)cases[i].v);
		else
			ok(v == 12345, "%s(\"%s\") leaves the output alone",
			   what, cases[i].s);
	}
	is_int(parse(NULL, &v), -EINVAL, "%s(NULL) returns -EINVAL", what);
}

/* remove_tree() - remove everything in directory @path, one level deep. */
static void remove_tree(const char *path, int depth)
{
	char sub[PATH_MAX];
	struct dirent *de;
	DIR *dir;

	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!unlinkat(dirfd(dir), de->d_name, 0) || errno != EISDIR ||
		    depth > 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		remove_tree(sub, depth + 1);
		unlinkat(dirfd(dir), de->d_name, AT_REMOVEDIR);
	}
	closedir(dir);
}

/* cleanup() - remove the temporary directory and everything in it. */
static void cleanup(void)
{
	remove_tree(tmpdir, 0);
	ok(!rmdir(tmpdir), "removed %s", tmpdir);
}

int main(int argc, char **argv)
{
	const char *sample = argc > 1 ? argv[1] : "conf/flightrec.conf";

	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_defaults();
	test_parse_cases("conf_parse_duration", conf_parse_duration,
			 duration_cases,
			 sizeof(duration_cases) / sizeof(duration_cases[0]));
	test_parse_cases("conf_parse_size", conf_parse_size, size_cases,
			 sizeof(size_cases) / sizeof(size_cases[0]));
	test_full_file();
	test_syntax_variants();
	test_error_cases();
	test_trigger_errors();
	test_trigger_capability();
	test_trigger_cgroup();
	test_trigger_full();
	test_trigger_layers();
	test_trigger_limits();
	test_file_errors();
	test_new_keys_accepted();
	test_group();
	test_render();
	test_render_triggers();
	test_render_new_keys();
	test_render_long_line();
	test_split_command();
	test_on_dump_errors();
	test_on_dump_good();
	test_render_on_dump();
	test_sample_file(sample);
	cleanup();
	return tap_done_testing();
}
