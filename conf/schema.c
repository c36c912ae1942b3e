/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * schema.c - the config's schema (schema.h): the table of keys and the
 * words and units they accept, each key's value read, checked, stored,
 * compared and formatted, and the value syntax. Parsing files is config.c's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <ini.h>
#include <linux/capability.h>

#include "schema.h"

const struct conf_name conf_trig_types[] = {
	{ "psi", FR_TRIG_PSI },
	{ "oom", FR_TRIG_OOM },
	{ "signal", FR_TRIG_SIGNAL },
};

const struct conf_name conf_psi_resources[] = {
	{ "memory", FR_PSI_MEMORY },
	{ "cpu", FR_PSI_CPU },
	{ "io", FR_PSI_IO },
};

const struct conf_name conf_psi_kinds[] = {
	{ "some", FR_PSI_SOME },
	{ "full", FR_PSI_FULL },
};

const struct conf_name conf_bool_names[] = {
	{ "true", 1 },
	{ "false", 0 },
	{ "yes", 1 },
	{ "no", 0 },
	{ "on", 1 },
	{ "off", 0 },
	{ "1", 1 },
	{ "0", 0 },
};

const char *const conf_cooldown_defs[] = {
	[FR_TRIG_PSI] = "60s",
	[FR_TRIG_OOM] = "60s",
	[FR_TRIG_SIGNAL] = "0s",
};

const char *const conf_max_per_hour_defs[] = {
	[FR_TRIG_PSI] = "10",
	[FR_TRIG_OOM] = "10",
	[FR_TRIG_SIGNAL] = "0",
};

const struct conf_key conf_keys[] = {
	[CONF_RECORDER_WINDOW] =
	FR_CONF_KEY("recorder", "window", CONF_DURATION,
		    FR_CONF_SEC, 24 * FR_CONF_HOUR, "30s", window_ns,
		    "how much recent history is kept in memory; a trigger dumps this window"),
	[CONF_RECORDER_MEMORY] =
	FR_CONF_KEY("recorder", "memory", CONF_SIZE,
		    4 * FR_CONF_MIB, 64 * FR_CONF_GIB, "256M", memory_bytes,
		    "memory for the in-memory window; the oldest events go first when it is full"),
	[CONF_RECORDER_FREQUENCY] =
	FR_CONF_KEY("recorder", "frequency", CONF_U32,
		    1, 10000, "99", frequency,
		    "CPU stack samples per second on each CPU, in Hz"),
	[CONF_RECORDER_RING] =
	FR_CONF_KEY("recorder", "ring", CONF_SIZE,
		    16 * FR_CONF_KIB, FR_CONF_GIB, "0", ring_bytes,
		    "BPF ring buffer the kernel hands events over in; a power of two; 0 = sized from frequency and CPU count",
		    .zero = "automatic", .pow2 = true, .example = "64K, 4M"),
	[CONF_RECORDER_UNWIND_MEMORY] =
	FR_CONF_KEY("recorder", "unwind_memory", CONF_SIZE,
		    FR_CONF_MIB, FR_CONF_GIB, "40M", unwind_bytes,
		    "kernel memory for the unwind rows that walk user stacks without frame pointers (8 bytes a row); 0 = off, frame pointers only",
		    .zero = "off", .example = "16M, 64M"),
	[CONF_RECORDER_UNWIND_KERNEL_TABLES] =
	FR_CONF_KEY("recorder", "unwind_kernel_tables", CONF_BOOL, 0, 1, "true",
		    unwind_kernel_tables,
		    "build new processes' unwind tables in the kernel, and send exiting ones' mappings (Linux 6.7+); false: wait for the daemon's /proc read, as older kernels do",
		    FR_CONF_NAMES(conf_bool_names)),
	[CONF_RECORDER_PYTHON] =
	FR_CONF_KEY("recorder", "python", CONF_BOOL, 0, 1, "true", python,
		    "walk the Python frames of CPython 3.11 processes at each sample and name them qualname (file:line); false: the interpreter's native frames only",
		    FR_CONF_NAMES(conf_bool_names)),
	[CONF_RECORDER_CACHE_MEMORY] =
	FR_CONF_KEY("recorder", "cache_memory", CONF_SIZE,
		    8 * FR_CONF_MIB, 4 * FR_CONF_GIB, "64M", cache_bytes,
		    "one budget for what the daemon learns of processes: their binaries' symbols, their executable mappings and the DWARF line handles (at most half); least recently used first out",
		    .example = "32M, 256M"),
	[CONF_RECORDER_OOM_SCORE_ADJ] =
	FR_CONF_KEY("recorder", "oom_score_adj", CONF_S32,
		    (uint64_t)-1000, 1000, "-900", oom_score_adj,
		    "the daemon's own /proc/self/oom_score_adj, set at start: below user workloads, so that the OOM kill it records takes them first, but not immune",
		    .example = "-900, 0"),
	[CONF_OUTPUT_DIRECTORY] =
	FR_CONF_KEY("output", "directory", CONF_PATH,
		    1, PATH_MAX - 1, "/var/lib/flightrec", directory,
		    "directory the dumps are written to; an absolute path"),
	[CONF_OUTPUT_MAX_DUMPS] =
	FR_CONF_KEY("output", "max_dumps", CONF_U32,
		    0, 1000000, "50", max_dumps,
		    "after each dump, delete the oldest dumps beyond this many; 0 = no limit",
		    .note = "0 = no limit"),
	[CONF_OUTPUT_MAX_BYTES] =
	FR_CONF_KEY("output", "max_bytes", CONF_SIZE,
		    0, FR_CONF_TIB, "1G", max_bytes,
		    "after each dump, delete the oldest dumps until they fit in this size; 0 = no limit",
		    .note = "0 = no limit"),
	[CONF_OUTPUT_GROUP] =
	FR_CONF_KEY("output", "group", CONF_GROUP,
		    1, FR_CONF_GROUP_NAME_MAX, NULL, group,
		    "group that may read the dumps (files 0640, directory 0750); not set = root only",
		    FR_CONF_GID(group_gid), .note = "leave the key out for none"),
	[CONF_OUTPUT_ON_DUMP] =
	FR_CONF_KEY("output", "on_dump", CONF_COMMAND,
		    1, FR_CONF_COMMAND_WORDS_MAX, NULL, on_dump,
		    "command run after each dump, the dump's path appended as its last argument; no shell; not set = none",
		    .note = "leave the key out for none"),
	[CONF_OUTPUT_ON_DUMP_TIMEOUT] =
	FR_CONF_KEY("output", "on_dump_timeout", CONF_DURATION,
		    FR_CONF_SEC, FR_CONF_HOUR, "60s", on_dump_timeout_ns,
		    "the on_dump command is killed when it runs longer than this"),
	[CONF_OUTPUT_RESOLVE_TIMEOUT] =
	FR_CONF_KEY("output", "resolve_timeout", CONF_DURATION,
		    10 * FR_CONF_MSEC, 10 * FR_CONF_SEC, "250ms", resolve_timeout_ns,
		    "how long a dump may spend reading what processes own (perf maps, binaries) before it is written with what was resolved; the rest is counted in LOSS"),
	[CONF_CONTROL_SOCKET] =
	FR_CONF_KEY("control", "socket", CONF_PATH,
		    1, FR_CONF_SOCKET_MAX, "/run/flightrec/control.sock",
		    control_socket,
		    "Unix socket 'flightrec snapshot' and 'flightrec status' talk to; an absolute path"),
	[CONF_PRIVACY_CMDLINE] =
	FR_CONF_KEY("privacy", "cmdline", CONF_BOOL, 0, 1, "true",
		    privacy_cmdline,
		    "read and store process command lines; false = never read them",
		    FR_CONF_NAMES(conf_bool_names)),
	[CONF_MEMORY_RSS_LEDGER] =
	FR_CONF_KEY("memory", "rss_ledger", CONF_BOOL, 0, 1, "true",
		    rss_ledger,
		    "log every process's RSS counters (file, anon, swap, shmem) as they move, stamped by the kernel; false = RSS only at the snapshot and at death",
		    FR_CONF_NAMES(conf_bool_names)),
	[CONF_MEMORY_RSS_STEP] =
	FR_CONF_KEY("memory", "rss_step", CONF_SIZE,
		    4 * FR_CONF_KIB, FR_CONF_GIB, "4M", rss_step,
		    "log a counter again when it moved this much since it was last logged (or rss_step_percent of its value, if larger)",
		    .example = "1M, 16M"),
	[CONF_MEMORY_RSS_STEP_PERCENT] =
	FR_CONF_KEY("memory", "rss_step_percent", CONF_U32,
		    0, 100, "2", rss_step_pct,
		    "the step in percent of the value last logged, where that is larger than rss_step; 0 = rss_step only"),
	[CONF_MEMORY_RSS_MAX_AGE] =
	FR_CONF_KEY("memory", "rss_max_age", CONF_DURATION,
		    10 * FR_CONF_MSEC, 60 * FR_CONF_SEC, "1s", rss_max_age_ns,
		    "a change smaller than the step is logged at the latest this long after it"),
	[CONF_MEMORY_CGROUPS] =
	FR_CONF_KEY("memory", "cgroups", CONF_U32,
		    0, 4096, "64", memory_cgroups,
		    "memory cgroups whose usage, limit and events are read once a second (those of the window's processes, PSI-watched ones first); the rest are counted as skipped; 0 = none"),
	[CONF_STALLS_STALLS] =
	FR_CONF_KEY("stalls", "stalls", CONF_BOOL, 0, 1, "true", stalls,
		    "record each thread's stalls in direct reclaim, reclaim at its memory cgroup's limit, direct compaction and reclaim throttling, with the stack that stalled; false = none",
		    FR_CONF_NAMES(conf_bool_names)),
	[CONF_STALLS_MIN_STALL] =
	FR_CONF_KEY("stalls", "min_stall", CONF_DURATION,
		    0, 10 * FR_CONF_SEC, "1ms", min_stall_ns,
		    "stalls at least this long are recorded one by one; shorter ones are summed per process and kind (count and time); 0 = record all",
		    .example = "100us, 10ms"),
	[CONF_STALLS_OFFCPU] =
	FR_CONF_KEY("stalls", "offcpu", CONF_BOOL, 0, 1, "true", offcpu,
		    "record the time threads spend off the CPU blocked in an uninterruptible (D) wait, with the stack they waited in; false = none",
		    FR_CONF_NAMES(conf_bool_names)),
	[CONF_STALLS_MIN_BLOCK] =
	FR_CONF_KEY("stalls", "min_block", CONF_DURATION,
		    0, 10 * FR_CONF_SEC, "1ms", min_block_ns,
		    "blocks at least this long are recorded one by one; shorter ones are summed per process; 0 = record all",
		    .example = "100us, 10ms"),
	[CONF_STALLS_OFFCPU_SLEEP] =
	FR_CONF_KEY("stalls", "offcpu_sleep", CONF_BOOL, 0, 1, "false", offcpu_sleep,
		    "with offcpu, also interruptible (S) sleep: waiting for input, a whole-machine off-CPU profile; it captures a user stack at most context switches (see PERFORMANCE.md)",
		    FR_CONF_NAMES(conf_bool_names)),
	[CONF_TRIG_TYPE] =
	FR_CONF_TRIG("type", CONF_ENUM, FR_CONF_T_ALL, type,
		     "what fires it: psi (pressure stall), oom (an OOM kill) or signal (SIGUSR1)",
		     FR_CONF_NAMES(conf_trig_types), .required = true),
	[CONF_TRIG_RESOURCE] =
	FR_CONF_TRIG("resource", CONF_ENUM, FR_CONF_T_PSI, resource,
		     "psi: the resource whose pressure is watched",
		     FR_CONF_NAMES(conf_psi_resources), .required = true),
	[CONF_TRIG_KIND] =
	FR_CONF_TRIG("kind", CONF_ENUM, FR_CONF_T_PSI, kind,
		     "psi: some (some tasks stalled) or full (all non-idle tasks stalled at once)",
		     FR_CONF_NAMES(conf_psi_kinds), .def = "some"),
	[CONF_TRIG_STALL] =
	FR_CONF_TRIG("stall", CONF_DURATION, FR_CONF_T_PSI, stall_ns,
		     "psi: fire when tasks stall this long in total within one window",
		     .min = FR_CONF_MSEC, .max = 10 * FR_CONF_SEC,
		     .required = true, .note = "and at most window"),
	[CONF_TRIG_WINDOW] =
	FR_CONF_TRIG("window", CONF_DURATION, FR_CONF_T_PSI, window_ns,
		     "psi: the sliding window stall time is measured over",
		     .min = 500 * FR_CONF_MSEC, .max = 10 * FR_CONF_SEC,
		     .def = "2s",
		     .note = "only multiples of 2s without CAP_SYS_RESOURCE"),
	[CONF_TRIG_CGROUP] =
	FR_CONF_TRIG("cgroup", CONF_PATH, FR_CONF_T_PSI, cgroup,
		     "psi: watch this cgroup v2 directory instead of the whole system",
		     .min = 1, .max = PATH_MAX - 1),
	[CONF_TRIG_PRE] =
	FR_CONF_TRIG("pre", CONF_DURATION, FR_CONF_T_ALL, pre_ns,
		     "history before the trigger to dump; 0s = the whole [recorder] window",
		     .max = 24 * FR_CONF_HOUR, .def = "0s",
		     .note = "and at most the [recorder] window; 0s = all of it"),
	[CONF_TRIG_POST] =
	FR_CONF_TRIG("post", CONF_DURATION, FR_CONF_T_ALL, post_ns,
		     "keep recording this long after the trigger fires, then dump",
		     .max = 60 * FR_CONF_SEC, .def = "0s"),
	[CONF_TRIG_COOLDOWN] =
	FR_CONF_TRIG("cooldown", CONF_DURATION, FR_CONF_T_ALL, cooldown_ns,
		     "ignore the trigger for this long after it fired",
		     .max = 24 * FR_CONF_HOUR, .type_def = conf_cooldown_defs),
	[CONF_TRIG_MAX_PER_HOUR] =
	FR_CONF_TRIG("max_per_hour", CONF_U32, FR_CONF_T_ALL, max_per_hour,
		     "fire at most this many times in any hour; 0 = no limit",
		     .max = 3600, .type_def = conf_max_per_hour_defs,
		     .note = "0 = no limit"),
};

const struct conf_unit conf_duration_units[] = {
	{ "h", FR_CONF_HOUR },
	{ "m", FR_CONF_MINUTE },
	{ "s", FR_CONF_SEC },
	{ "ms", FR_CONF_MSEC },
	{ "us", FR_CONF_USEC },
};

const struct conf_unit conf_size_units[] = {
	{ "G", FR_CONF_GIB },
	{ "M", FR_CONF_MIB },
	{ "K", FR_CONF_KIB },
	{ "", 1 },
	{ "GiB", FR_CONF_GIB },
	{ "MiB", FR_CONF_MIB },
	{ "KiB", FR_CONF_KIB },
};

const struct conf_unit conf_plain_units[] = {
	{ "", 1 },
};

_Static_assert(FR_CONF_NELEM(conf_keys) == CONF_NROWS, "one row for each enum conf_row");

static __attribute__((format(printf, 3, 0)))
void conf__vmsg(char *msg, size_t msglen, const char *fmt, va_list ap)
{
	if (msg && msglen)
		vsnprintf(msg, msglen, fmt, ap);
}

__attribute__((format(printf, 3, 4)))
void conf__msg(char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf__vmsg(msg, msglen, fmt, ap);
	va_end(ap);
}

/* conf__strerror() - thread-safe text for -errno or errno @err. */
const char *conf__strerror(int err, char *buf, size_t len)
{
	return strerror_r(err < 0 ? -err : err, buf, len);
}

/*
 * conf__shown() - copy @len bytes of @s into @buf for a message, control
 * characters replaced by '?', truncated to fit. Returns @buf.
 */
const char *conf__shown(const char *s, size_t len, char *buf,
			size_t size)
{
	size_t i;

	for (i = 0; i < len && i + 1 < size; i++)
		buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ?
			 '?' : s[i];
	buf[i] = '\0';
	return buf;
}

/*
 * conf__parse_scaled() - a decimal integer immediately followed by one of
 * the @n suffixes in @units, nothing before or after. Returns 0 with the
 * scaled value in *@v, -EINVAL for bad syntax, -ERANGE on overflow.
 */
static int conf__parse_scaled(const char *s, const struct conf_unit *units,
			      size_t n, uint64_t *v)
{
	unsigned long long num;
	const char *suffix;
	uint64_t scaled;
	char *end;
	size_t i;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	suffix = s + strspn(s, "0123456789");
	for (i = 0; i < n; i++)
		if (!strcmp(suffix, units[i].suffix))
			break;
	if (i == n)
		return -EINVAL;
	errno = 0;
	num = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (end != suffix)
		return -EINVAL;
	if (__builtin_mul_overflow(num, units[i].scale, &scaled))
		return -ERANGE;
	*v = scaled;
	return 0;
}

/*
 * conf__format_scaled() - write @v with the first of @units that divides it
 * exactly. Returns 0, or -EINVAL if none does or @buf is too small.
 */
static int conf__format_scaled(uint64_t v, const struct conf_unit *units,
			       size_t n, char *buf, size_t len)
{
	size_t i;
	int w;

	for (i = 0; i < n; i++) {
		if (v % units[i].scale)
			continue;
		w = snprintf(buf, len, "%" PRIu64 "%s", v / units[i].scale,
			     units[i].suffix);
		return w >= 0 && (size_t)w < len ? 0 : -EINVAL;
	}
	return -EINVAL;
}

/*
 * conf__format_num() - numeric @v of @type in file syntax, as rendering
 * writes it; 0 is "0s" for a duration, "0" otherwise. Returns 0 or -EINVAL.
 */
int conf__format_num(enum conf_type type, uint64_t v, char *buf,
		     size_t len)
{
	const struct conf_unit *units;
	size_t n;
	int w;

	switch (type) {
	case CONF_DURATION:
		units = conf_duration_units;
		n = FR_CONF_NELEM(conf_duration_units);
		break;
	case CONF_SIZE:
		units = conf_size_units;
		n = FR_CONF_NELEM(conf_size_units);
		break;
	case CONF_U32:
		units = conf_plain_units;
		n = FR_CONF_NELEM(conf_plain_units);
		break;
	case CONF_S32:
		w = snprintf(buf, len, "%" PRId64, (int64_t)v);
		return w >= 0 && (size_t)w < len ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
	if (!v) {
		w = snprintf(buf, len, "0%s", type == CONF_DURATION ? "s" : "");
		return w >= 0 && (size_t)w < len ? 0 : -EINVAL;
	}
	return conf__format_scaled(v, units, n, buf, len);
}

int conf_parse_duration(const char *s, uint64_t *ns)
{
	return conf__parse_scaled(s, conf_duration_units,
				  FR_CONF_NELEM(conf_duration_units), ns);
}

int conf_parse_size(const char *s, uint64_t *bytes)
{
	return conf__parse_scaled(s, conf_size_units,
				  FR_CONF_NELEM(conf_size_units), bytes);
}

#define FR_CONF_STR_(x)		#x
#define FR_CONF_STR(x)		FR_CONF_STR_(x)

/* conf__blank() - true for a character that separates command words. */
static bool conf__blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * conf__word() - lex the command word at *@pos, after the blanks before it.
 * Its bytes, quotes and escapes removed, go to @out (NULL: only counted;
 * else room for *@len bytes, as a counting call gave) and their number to
 * *@len; *@pos moves past the word. Returns 1 for a word, 0 when only
 * blanks are left, or -EINVAL with *@why set.
 */
static int conf__word(const char **pos, char *out, size_t *len,
		      const char **why)
{
	const char *s = *pos;
	bool quoted = false;
	size_t n = 0;

	while (conf__blank(*s))
		s++;
	if (!*s) {
		*pos = s;
		return 0;
	}
	for (; *s && (quoted || !conf__blank(*s)); s++) {
		if (*s == '"') {
			quoted = !quoted;
			continue;
		}
		if (*s == '\\') {
			if (!s[1]) {
				*why = "a backslash at the end escapes nothing";
				return -EINVAL;
			}
			s++;
		}
		if (out)
			out[n] = *s;
		n++;
	}
	if (quoted) {
		*why = "unbalanced quote";
		return -EINVAL;
	}
	*pos = s;
	*len = n;
	return 1;
}

void conf_free_argv(char **argv)
{
	char **w;

	if (!argv)
		return;
	for (w = argv; *w; w++)
		free(*w);
	free(argv);
}

/*
 * conf__split() - conf_split_command() saying why it refuses @cmd: *@why is
 * set with -EINVAL and -ENOMEM.
 */
int conf__split(const char *cmd, char ***argvp, int *argcp,
		const char **why)
{
	const char *pos = cmd, *start;
	char **argv;
	size_t len;
	int n = 0, i, ret;

	while ((ret = conf__word(&pos, NULL, &len, why)) > 0)
		n++;
	if (ret)
		return ret;
	if (!n) {
		*why = "no program";
		return -EINVAL;
	}
	if (n > FR_CONF_COMMAND_WORDS_MAX) {
		*why = "more than " FR_CONF_STR(FR_CONF_COMMAND_WORDS_MAX) " words";
		return -EINVAL;
	}
	*why = "out of memory";
	argv = calloc((size_t)n + 1, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	pos = cmd;
	for (i = 0; i < n; i++) {
		start = pos;
		conf__word(&pos, NULL, &len, why);
		argv[i] = malloc(len + 1);
		if (!argv[i]) {
			conf_free_argv(argv);
			return -ENOMEM;
		}
		pos = start;
		conf__word(&pos, argv[i], &len, why);
		argv[i][len] = '\0';
	}
	*argvp = argv;
	*argcp = n;
	return 0;
}

int conf_split_command(const char *cmd, char ***argv, int *argc)
{
	const char *why;

	if (!cmd || !argv || !argc)
		return -EINVAL;
	return conf__split(cmd, argv, argc, &why);
}

/*
 * conf__same_words() - true when command lines @a and @b split into the
 * same words; false also when either does not split (or memory runs out).
 */
static bool conf__same_words(const char *a, const char *b)
{
	char **va = NULL, **vb = NULL;
	const char *why;
	bool same = false;
	int na, nb, i;

	if (!conf__split(a, &va, &na, &why) &&
	    !conf__split(b, &vb, &nb, &why) && na == nb) {
		for (i = 0; i < na && !strcmp(va[i], vb[i]); i++)
			;
		same = i == na;
	}
	conf_free_argv(va);
	conf_free_argv(vb);
	return same;
}

/* conf__put() - append @c to @buf (@len bytes) at *@off, if it fits; count it. */
static void conf__put(char *buf, size_t len, size_t *off, char c)
{
	if (*off + 1 < len)
		buf[*off] = c;
	(*off)++;
}

/*
 * conf__format_command() - the words of command line @cmd written so that
 * they split back the same and survive inih: single blanks between words,
 * a word quoted when it is empty or holds a blank, quote or backslash (or
 * starts with an inline comment character), '"' and '\' escaped in it, and
 * an inline comment character after a blank escaped. If that does not fit
 * @len bytes, @cmd as it is (rendering checks it loads back). Returns 0, or
 * -EINVAL if @cmd does not split or fits neither way.
 */
static int conf__format_command(const char *cmd, char *buf, size_t len)
{
	const char *why, *c;
	size_t off = 0;
	char **argv, prev;
	bool quote;
	int argc, i, ret;

	ret = conf__split(cmd, &argv, &argc, &why);
	if (ret)
		return -EINVAL;
	for (i = 0; i < argc; i++) {
		if (i)
			conf__put(buf, len, &off, ' ');
		quote = !argv[i][0] ||
			strpbrk(argv[i], " \t\"\\") ||
			strchr(INI_INLINE_COMMENT_PREFIXES, argv[i][0]);
		if (quote)
			conf__put(buf, len, &off, '"');
		for (c = argv[i], prev = '"'; *c; prev = *c++) {
			if (*c == '"' || *c == '\\' ||
			    (isspace((unsigned char)prev) &&
			     strchr(INI_INLINE_COMMENT_PREFIXES, *c)))
				conf__put(buf, len, &off, '\\');
			conf__put(buf, len, &off, *c);
		}
		if (quote)
			conf__put(buf, len, &off, '"');
	}
	conf_free_argv(argv);
	if (off < len) {
		buf[off] = '\0';
		return 0;
	}
	if (strlen(cmd) >= len)
		return -EINVAL;
	strcpy(buf, cmd);
	return 0;
}

/* conf__name_find() - the entry of @k's words spelled @word, or NULL. */
static const struct conf_name *conf__name_find(const struct conf_key *k,
					       const char *word)
{
	size_t i;

	for (i = 0; i < k->nnames; i++)
		if (!strcmp(k->names[i].name, word))
			return &k->names[i];
	return NULL;
}

/* conf__name_of() - the word for @value among @k's words, or NULL. */
const char *conf__name_of(const struct conf_key *k, uint32_t value)
{
	size_t i;

	for (i = 0; i < k->nnames; i++)
		if (k->names[i].value == value)
			return k->names[i].name;
	return NULL;
}

/* conf__type_name() - "psi" for FR_TRIG_PSI, ...; "?" if not a type. */
const char *conf__type_name(enum fr_trig_type type)
{
	const char *name = conf__name_of(&conf_keys[CONF_TRIG_TYPE], type);

	return name ? name : "?";
}

/*
 * @base is the struct @k's offset is relative to: the struct fr_config for
 * plain keys, a struct fr_trigger_conf for trigger keys.
 */
void *conf_key__field(const struct conf_key *k, void *base)
{
	return (char *)base + k->offset;
}

const void *conf_key__cfield(const struct conf_key *k,
			     const void *base)
{
	return (const char *)base + k->offset;
}

/* conf_key__get() - a numeric or enum key's value in @base. */
static uint64_t conf_key__get(const struct conf_key *k, const void *base)
{
	const void *field = conf_key__cfield(k, base);

	switch (k->type) {
	case CONF_DURATION:
	case CONF_SIZE:
		return *(const uint64_t *)field;
	case CONF_U32:
	case CONF_ENUM:
		return *(const uint32_t *)field;
	case CONF_S32:
		return (uint64_t)(int64_t)*(const int32_t *)field;
	case CONF_BOOL:
		return *(const bool *)field;
	default:
		return 0;
	}
}

/* conf_key__put() - store a numeric or enum value, already checked. */
static void conf_key__put(const struct conf_key *k, void *base, uint64_t v)
{
	void *field = conf_key__field(k, base);

	switch (k->type) {
	case CONF_DURATION:
	case CONF_SIZE:
		*(uint64_t *)field = v;
		break;
	case CONF_U32:
	case CONF_ENUM:
		*(uint32_t *)field = (uint32_t)v;
		break;
	case CONF_S32:
		*(int32_t *)field = (int32_t)(int64_t)v;
		break;
	case CONF_BOOL:
		*(bool *)field = v != 0;
		break;
	default:
		break;
	}
}

/* conf_key__owns() - true when @k's member is a malloc'd string. */
bool conf_key__owns(const struct conf_key *k)
{
	return k->type == CONF_PATH || k->type == CONF_GROUP ||
	       k->type == CONF_COMMAND;
}

/* conf_key__clear() - free @k's string in @base, if it has one. */
void conf_key__clear(const struct conf_key *k, void *base)
{
	char **field = conf_key__field(k, base);

	if (conf_key__owns(k)) {
		free(*field);
		*field = NULL;
	}
}

/* conf_key__equal() - true when @a and @b hold the same value for @k. */
bool conf_key__equal(const struct conf_key *k, const void *a,
		     const void *b)
{
	const char *sa, *sb;

	if (!conf_key__owns(k))
		return conf_key__get(k, a) == conf_key__get(k, b);
	sa = *(char *const *)conf_key__cfield(k, a);
	sb = *(char *const *)conf_key__cfield(k, b);
	if (sa == sb || (sa && sb && !strcmp(sa, sb)))
		return true;
	/* commands are what they run: the same words, however spelled */
	return k->type == CONF_COMMAND && sa && sb &&
	       conf__same_words(sa, sb);
}

/* conf_key__accepted() - what @k accepts, for error messages. */
void conf_key__accepted(const struct conf_key *k, char *buf,
			size_t len)
{
	char lo[32] = "?", hi[32] = "?", zero[64] = "";
	size_t i, off;
	int w = 0;

	conf__format_num(k->type, k->min, lo, sizeof(lo));
	conf__format_num(k->type, k->max, hi, sizeof(hi));
	if (k->zero)
		snprintf(zero, sizeof(zero), "0 (%s) or ", k->zero);
	switch (k->type) {
	case CONF_DURATION:
		w = snprintf(buf, len, "%s%s..%s with a unit suffix us, ms, s, m or h",
			     zero, lo, hi);
		break;
	case CONF_SIZE:
		if (k->pow2)
			w = snprintf(buf, len, "%sa power of two from %s to %s",
				     zero, lo, hi);
		else
			w = snprintf(buf, len,
				     "%s%s..%s, in bytes or with a suffix K, M, G, KiB, MiB or GiB",
				     zero, lo, hi);
		break;
	case CONF_U32:
	case CONF_S32:
		w = snprintf(buf, len, "%s%s..%s", zero, lo, hi);
		break;
	case CONF_PATH:
		if (k->max < PATH_MAX - 1)
			w = snprintf(buf, len,
				     "an absolute path of at most %" PRIu64 " bytes without control characters",
				     k->max);
		else
			w = snprintf(buf, len,
				     "an absolute path without control characters");
		break;
	case CONF_GROUP:
		w = snprintf(buf, len,
			     "the name of an existing group, without control characters or ':'");
		break;
	case CONF_COMMAND:
		w = snprintf(buf, len,
			     "the absolute path of an executable file, then its arguments; at most %" PRIu64 " words split at blanks, \"...\" groups, \\ escapes",
			     k->max);
		break;
	case CONF_ENUM:
	case CONF_BOOL:
		buf[0] = '\0';
		for (i = 0, off = 0; i < k->nnames && off < len; i++) {
			w = snprintf(buf + off, len - off, "%s%s",
				     i ? ", " : "", k->names[i].name);
			if (w < 0)
				break;
			off += (size_t)w;
		}
		w = (int)off;
		break;
	}
	if (k->example && w >= 0 && (size_t)w < len)
		w += snprintf(buf + w, len - (size_t)w, ", e.g. %s", k->example);
	if (k->note && w >= 0 && (size_t)w < len)
		snprintf(buf + w, len - (size_t)w, " (%s)", k->note);
}

/*
 * find_control() - the index of the first control character in @value
 * (tabs allowed when @tabs), or -1 when there is none.
 */
static ssize_t find_control(const char *value, bool tabs)
{
	for (size_t i = 0; value[i]; i++) {
		unsigned char c = (unsigned char)value[i];

		if ((c < 0x20 && !(tabs && c == '\t')) || c == 0x7f)
			return (ssize_t)i;
	}
	return -1;
}

/*
 * conf_key__store() - store a copy of the checked string @value in @k's
 * field of @base, freeing the old one. Returns 0, or -ENOMEM with *@why set.
 */
static int conf_key__store(const struct conf_key *k, void *base,
			   const char *value, const char **why)
{
	char **field = conf_key__field(k, base);
	char *copy = strdup(value);

	if (!copy) {
		*why = "out of memory";
		return -ENOMEM;
	}
	free(*field);
	*field = copy;
	return 0;
}

/*
 * conf_key__set_s32() - parse a CONF_S32 @value (decimal digits, a '-'
 * before them for a negative number) into @k's field in @base, within its
 * min..max. Returns 0, or -EINVAL with *@why set.
 */
static int conf_key__set_s32(const struct conf_key *k, void *base,
			     const char *value, const char **why)
{
	const char *d = value + (*value == '-');
	long long v;
	char *end;

	if (!*d || strspn(d, "0123456789") != strlen(d)) {
		*why = "invalid number";
		return -EINVAL;
	}
	errno = 0;
	v = strtoll(value, &end, 10);
	if ((errno == ERANGE && v > 0) || v > (int64_t)k->max) {
		*why = "too large";
		return -EINVAL;
	}
	if (errno == ERANGE || v < (int64_t)k->min) {
		*why = "too small";
		return -EINVAL;
	}
	conf_key__put(k, base, (uint64_t)(int64_t)v);
	return 0;
}

/*
 * conf_key__set_path() - validate an absolute path and store a copy.
 * Returns 0, -EINVAL or -ENOMEM with *@why set.
 */
static int conf_key__set_path(const struct conf_key *k, void *base,
			      const char *value, const char **why)
{
	size_t len = strlen(value);

	if (value[0] != '/') {
		*why = "not an absolute path";
		return -EINVAL;
	}
	if (find_control(value, false) >= 0) {
		*why = "contains a control character";
		return -EINVAL;
	}
	if (len < k->min || len > k->max) {
		*why = "too long";
		return -EINVAL;
	}
	return conf_key__store(k, base, value, why);
}

/*
 * conf_key__set_group() - check the spelling of a group name and store a
 * copy; whether the group exists is for the load to judge. Returns 0,
 * -EINVAL or -ENOMEM with *@why set.
 */
static int conf_key__set_group(const struct conf_key *k, void *base,
			       const char *value, const char **why)
{
	ssize_t ctl = find_control(value, false);
	const char *colon = strchr(value, ':');
	size_t len = strlen(value);

	/* Whichever comes first is what the message names. */
	if (ctl >= 0 && (!colon || ctl < colon - value)) {
		*why = "contains a control character";
		return -EINVAL;
	}
	if (colon) {
		*why = "contains ':'";
		return -EINVAL;
	}
	if (len < k->min || len > k->max) {
		*why = "too long";
		return -EINVAL;
	}
	return conf_key__store(k, base, value, why);
}

/*
 * conf_key__set_command() - check the syntax of a command line and store a
 * copy as written: no control characters but tabs, words that split, a
 * program given by its absolute path. Whether the program exists is for the
 * load to judge. Returns 0, -EINVAL or -ENOMEM with *@why set.
 */
static int conf_key__set_command(const struct conf_key *k, void *base,
				 const char *value, const char **why)
{
	char **argv;
	bool absolute;
	int argc, ret;

	if (find_control(value, true) >= 0) {
		*why = "contains a control character";
		return -EINVAL;
	}
	ret = conf__split(value, &argv, &argc, why);
	if (ret)
		return ret;
	absolute = argv[0][0] == '/';
	conf_free_argv(argv);
	if (!absolute) {
		*why = "the program must be an absolute path";
		return -EINVAL;
	}
	return conf_key__store(k, base, value, why);
}

/*
 * conf_key__set() - parse @value as @k's type, check its range and store it
 * into @base. Returns 0, or -EINVAL / -ENOMEM with *@why set to a short
 * reason; @base is unchanged on error.
 */
int conf_key__set(const struct conf_key *k, void *base,
		  const char *value, const char **why)
{
	const struct conf_name *word;
	uint64_t v = 0;
	int ret;

	if (!*value) {
		*why = "empty value";
		return -EINVAL;
	}
	switch (k->type) {
	case CONF_DURATION:
		ret = conf_parse_duration(value, &v);
		*why = "invalid duration";
		break;
	case CONF_SIZE:
		ret = conf_parse_size(value, &v);
		*why = "invalid size";
		break;
	case CONF_U32:
		ret = conf__parse_scaled(value, conf_plain_units,
					 FR_CONF_NELEM(conf_plain_units), &v);
		*why = "invalid number";
		break;
	case CONF_S32:
		return conf_key__set_s32(k, base, value, why);
	case CONF_PATH:
		return conf_key__set_path(k, base, value, why);
	case CONF_GROUP:
		return conf_key__set_group(k, base, value, why);
	case CONF_COMMAND:
		return conf_key__set_command(k, base, value, why);
	case CONF_ENUM:
	case CONF_BOOL:
		word = conf__name_find(k, value);
		if (!word) {
			*why = k->type == CONF_BOOL ? "not a boolean" :
			       "unknown value";
			return -EINVAL;
		}
		conf_key__put(k, base, word->value);
		return 0;
	default:
		*why = "unsupported type";
		return -EINVAL;
	}
	if (ret == -ERANGE || (!ret && v > k->max)) {
		*why = "too large";
		return -EINVAL;
	}
	if (ret)
		return ret;
	if (v == 0 && k->zero) {
		conf_key__put(k, base, v);
		return 0;
	}
	if (v < k->min) {
		*why = "too small";
		return -EINVAL;
	}
	if (k->pow2 && (v & (v - 1))) {
		*why = "not a power of two";
		return -EINVAL;
	}
	conf_key__put(k, base, v);
	return 0;
}

/*
 * conf_key__format() - @k's value in @base in file syntax. Returns 0, or
 * -EINVAL if the value has no file syntax (a sub-millisecond duration, a
 * NULL string, a number no word stands for, a command that does not split)
 * or does not fit @len.
 */
int conf_key__format(const struct conf_key *k, const void *base,
		     char *buf, size_t len)
{
	const char *s;

	switch (k->type) {
	case CONF_DURATION:
	case CONF_SIZE:
	case CONF_U32:
	case CONF_S32:
		return conf__format_num(k->type, conf_key__get(k, base),
					buf, len);
	case CONF_PATH:
	case CONF_GROUP:
		s = *(char *const *)conf_key__cfield(k, base);
		break;
	case CONF_COMMAND:
		s = *(char *const *)conf_key__cfield(k, base);
		return s ? conf__format_command(s, buf, len) : -EINVAL;
	case CONF_ENUM:
	case CONF_BOOL:
		s = conf__name_of(k, (uint32_t)conf_key__get(k, base));
		break;
	default:
		return -EINVAL;
	}
	if (!s || strlen(s) >= len)
		return -EINVAL;
	strcpy(buf, s);
	return 0;
}

/* conf_key__default() - @k's default for a trigger of @type, or NULL. */
const char *conf_key__default(const struct conf_key *k,
			      enum fr_trig_type type)
{
	return k->type_def ? k->type_def[type] : k->def;
}

/* conf__section_of() - the section (index of its first key) of key @i. */
int conf__section_of(size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (!strcmp(conf_keys[j].section, conf_keys[i].section))
			break;
	return (int)j;
}

/* conf__section_find() - the section called @name (@len bytes), or -1. */
int conf__section_find(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (strlen(conf_keys[i].section) == len &&
		    !memcmp(conf_keys[i].section, name, len))
			return conf__section_of(i);
	return -1;
}

/* conf__key_find() - key @name of section @sec, or NULL. */
const struct conf_key *conf__key_find(int sec, const char *name)
{
	size_t i;

	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (conf__section_of(i) == sec &&
		    !strcmp(conf_keys[i].name, name))
			return &conf_keys[i];
	return NULL;
}

/* conf__is_named() - true when section @sec is a [trigger NAME] kind. */
bool conf__is_named(int sec)
{
	return sec >= 0 && conf_keys[sec].types;
}

/*
 * conf__list() - "window, memory, frequency" for the keys of section @sec
 * (only those fitting trigger type @type, if not 0), or "[recorder],
 * [output], ..., [trigger NAME]" for the sections when @sec is -1.
 */
void conf__list(int sec, enum fr_trig_type type, char *buf,
		size_t len)
{
	size_t i, off = 0;
	int w;

	buf[0] = '\0';
	for (i = 0; i < FR_CONF_NKEYS && off < len; i++) {
		if (sec < 0 && conf__section_of(i) == (int)i)
			w = snprintf(buf + off, len - off, "%s[%s%s]",
				     off ? ", " : "", conf_keys[i].section,
				     conf__is_named((int)i) ? " NAME" : "");
		else if (sec >= 0 && conf__section_of(i) == sec &&
			 (!type || conf_keys[i].types & FR_CONF_T(type)))
			w = snprintf(buf + off, len - off, "%s%s",
				     off ? ", " : "", conf_keys[i].name);
		else
			continue;
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

/* conf__name_ok() - true when @name (@len bytes) may be a trigger's NAME. */
bool conf__name_ok(const char *name, size_t len)
{
	size_t i;

	if (!name || len < 1 || len > FR_CONF_TRIGGER_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) &&
		    !strchr("._-", name[i]))
			return false;
	return true;
}

/* conf__file_type() - a word for the file type in @mode. */
const char *conf__file_type(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "not a regular file";
}

/*
 * conf__cap_sys_resource() - true when CAP_SYS_RESOURCE is in the calling
 * thread's effective set; false also when capget(2) fails.
 */
bool conf__cap_sys_resource(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[CAP_TO_INDEX(CAP_SYS_RESOURCE)].effective &
	       CAP_TO_MASK(CAP_SYS_RESOURCE);
}

/*
 * conf__group_gid() - the gid of the group called @name, from the group
 * database. Returns 0 with *@gid set, -ENOENT when there is no such group,
 * -ENOMEM, or the lookup's error.
 */
int conf__group_gid(const char *name, gid_t *gid)
{
	long hint = sysconf(_SC_GETGR_R_SIZE_MAX);
	size_t size = hint > 0 ? (size_t)hint : 1024;
	struct group grp, *res = NULL;
	char *buf = NULL, *grown;
	int err;

	for (;;) {
		grown = realloc(buf, size);
		if (!grown) {
			err = ENOMEM;
			goto out;
		}
		buf = grown;
		err = getgrnam_r(name, &grp, buf, size, &res);
		if (err != ERANGE || size >= FR_CONF_GROUP_BUF_MAX)
			break;
		size *= 2;
	}
	/* some NSS modules say "not found" with ENOENT or ESRCH */
	if (!err && res)
		*gid = res->gr_gid;
	else if (!err || err == ENOENT || err == ESRCH)
		err = ENOENT;
out:
	free(buf);
	return -err;
}
