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
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "tap.h"

#define SEC	1000000000ULL
#define MIB	(1024ULL * 1024)
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

/* same_config() - true when @a and @b hold the same values and path. */
static int same_config(const struct fr_config *a, const struct fr_config *b)
{
	return a->window_ns == b->window_ns &&
	       a->memory_bytes == b->memory_bytes &&
	       a->frequency == b->frequency &&
	       same_str(a->path, b->path) &&
	       same_str(a->directory, b->directory);
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
	config__free(cfg);
	config__free(NULL);
	ok(1, "config__free(NULL) is harmless");
}

#define FULL_CONF							\
	"# a full config\n"						\
	"[recorder]\n"							\
	"window = 2m\n"							\
	"memory = 1G\n"							\
	"frequency = 497\n"						\
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
	is_int(cfg->memory_bytes, GIB, "full: memory = 1G");
	is_int(cfg->frequency, 497, "full: frequency = 497");
	is_str(cfg->directory, "/srv/flight rec;1",
	       "full: directory keeps inner blanks and ';'");

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

#define ACC_W	"accepted: 1s..24h with a unit suffix ms, s, m or h"
#define ACC_M	"accepted: 4M..64G, in bytes or with a suffix K, M, G, KiB, MiB or GiB"
#define ACC_F	"accepted: 1..10000"
#define SYNTAX	"syntax error; expected '[section]' or 'key = value'"
#define LONG200	"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" \
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" \
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" \
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"

static const struct err_case err_cases[] = {
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
	config__free(copy);
	errno = 0;
	ok(!config__dup(NULL) && errno == EINVAL, "dup: NULL fails with EINVAL");
	config__free(cfg);
}

/* The shipped flightrec.conf loads to the defaults and lists every key. */
static void test_sample_file(const char *sample)
{
	char path[PATH_MAX], err[FR_CONF_ERR_MAX] = "";
	struct fr_config *cfg, *defaults;
	char *text, *render, *line, *save;
	int ret, all = 1;

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
	free(cfg->path);
	cfg->path = NULL;
	ok(same_config(cfg, defaults), "sample: holds the built-in defaults");
	render = config__render(defaults);
	ok(render != NULL, "sample: defaults render");
	for (line = strtok_r(render, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char want[256];

		if (line[0] == '#' || line[0] == '[')
			continue;
		snprintf(want, sizeof(want), "\n%s\n", line);
		if (!strstr(text, want)) {
			tap_diag("sample lacks '%s'", line);
			all = 0;
		}
	}
	ok(all, "sample: sets every key to its default");
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

/* cleanup() - remove the temporary directory and everything in it. */
static void cleanup(void)
{
	struct dirent *de;
	DIR *dir;

	dir = opendir(tmpdir);
	if (!dir)
		return;
	while ((de = readdir(dir)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(dir), de->d_name, 0);
	closedir(dir);
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
	test_file_errors();
	test_render();
	test_sample_file(sample);
	cleanup();
	return tap_done_testing();
}
