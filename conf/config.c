/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.c - the INI config: schema table, defaults, validation, rendering.
 *
 * We read the file ourselves and hand it to inih one line at a time through
 * a reader callback. Checking the open descriptor (type, mode, owner) avoids
 * a race with the path; counting lines in the reader gives exact line
 * numbers, which inih does not pass to the handler; seeing each line first
 * lets us catch [section] lines (inih reports none) and refuse what inih
 * would silently mangle: over-long lines (it splits them), NUL bytes, and
 * indented lines (it glues them to the previous value as a continuation; we
 * strip leading blanks, so an indented key is just a key).
 *
 * inih's tunables are process-wide variables in Debian's build; this module
 * reads none of them and changes none of them. All parse state lives on the
 * caller's stack, so loads may run concurrently.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "config.h"

#define FR_CONF_NELEM(a)	(sizeof(a) / sizeof((a)[0]))
/* Longest line without its newline; inih needs 3 more bytes (\r, \n, NUL). */
#define FR_CONF_LINE_MAX	(INI_MAX_LINE - 3)
/* Largest config file we read. */
#define FR_CONF_FILE_MAX	(1024 * 1024)

#define FR_CONF_MSEC		1000000ULL
#define FR_CONF_SEC		(1000 * FR_CONF_MSEC)
#define FR_CONF_MINUTE		(60 * FR_CONF_SEC)
#define FR_CONF_HOUR		(60 * FR_CONF_MINUTE)
#define FR_CONF_KIB		1024ULL
#define FR_CONF_MIB		(1024 * FR_CONF_KIB)
#define FR_CONF_GIB		(1024 * FR_CONF_MIB)

#define FR_CONF_SYNTAX_ERROR \
	"syntax error; expected '[section]' or 'key = value'"

/* Value types. Each writes one C type into struct fr_config. */
enum conf_type {
	CONF_DURATION,	/* uint64_t nanoseconds; min/max in ns */
	CONF_SIZE,	/* uint64_t bytes; min/max in bytes */
	CONF_U32,	/* uint32_t plain decimal number; min/max */
	CONF_PATH,	/* char *, malloc'd absolute path; min/max length */
};

/*
 * One key of the schema. The default is written in file syntax and goes
 * through the same parser and range check as a value read from a file.
 *
 * Sections have no table of their own: the first row naming a section brings
 * it into being, and its row index identifies it. A later named,
 * multi-instance section ("[trigger memory-spike]") would add a per-section
 * flag and make @offset relative to the instance's struct.
 */
struct conf_key {
	const char *section;
	const char *name;
	enum conf_type type;
	uint64_t min;
	uint64_t max;
	const char *def;
	size_t offset;
	const char *help;
};

/* Non-zero when @member of struct fr_config has the C type @type writes. */
#define FR_CONF_TYPE_OK(type, member)					\
	_Generic(((struct fr_config *)0)->member,			\
		 uint64_t: (type) == CONF_DURATION || (type) == CONF_SIZE, \
		 uint32_t: (type) == CONF_U32,				\
		 char *: (type) == CONF_PATH,				\
		 default: 0)

/* One schema row; a member of the wrong C type fails the build. */
#define FR_CONF_KEY(_section, _name, _type, _min, _max, _def, _member, _help) { \
	.section = (_section),						\
	.name = (_name),						\
	.type = (_type),						\
	.min = (_min),							\
	.max = (_max),							\
	.def = (_def),							\
	.offset = offsetof(struct fr_config, _member) +			\
		  0 * sizeof(char[FR_CONF_TYPE_OK(_type, _member) ? 1 : -1]), \
	.help = (_help),						\
}

static const struct conf_key conf_keys[] = {
	FR_CONF_KEY("recorder", "window", CONF_DURATION,
		    FR_CONF_SEC, 24 * FR_CONF_HOUR, "30s", window_ns,
		    "how much recent history is kept in memory; a trigger dumps this window"),
	FR_CONF_KEY("recorder", "memory", CONF_SIZE,
		    4 * FR_CONF_MIB, 64 * FR_CONF_GIB, "256M", memory_bytes,
		    "memory for the in-memory window; the oldest events go first when it is full"),
	FR_CONF_KEY("recorder", "frequency", CONF_U32,
		    1, 10000, "99", frequency,
		    "CPU stack samples per second on each CPU, in Hz"),
	FR_CONF_KEY("output", "directory", CONF_PATH,
		    1, PATH_MAX - 1, "/var/lib/flightrec", directory,
		    "directory the dumps are written to; an absolute path"),
};

#define FR_CONF_NKEYS	FR_CONF_NELEM(conf_keys)

/* A unit suffix and what it multiplies by. */
struct conf_unit {
	const char *suffix;
	uint64_t scale;
};

/* Rendering picks the first unit that divides the value exactly. */
static const struct conf_unit conf_duration_units[] = {
	{ "h", FR_CONF_HOUR },
	{ "m", FR_CONF_MINUTE },
	{ "s", FR_CONF_SEC },
	{ "ms", FR_CONF_MSEC },
};

/* The IEC spellings come after "", so rendering never uses them. */
static const struct conf_unit conf_size_units[] = {
	{ "G", FR_CONF_GIB },
	{ "M", FR_CONF_MIB },
	{ "K", FR_CONF_KIB },
	{ "", 1 },
	{ "GiB", FR_CONF_GIB },
	{ "MiB", FR_CONF_MIB },
	{ "KiB", FR_CONF_KIB },
};

static const struct conf_unit conf_plain_units[] = {
	{ "", 1 },
};

/* State of one config__load(); lives on the caller's stack. */
struct conf_parse {
	const char *path;
	struct fr_config *cfg;		/* the copy being filled */
	const char *pos;		/* next unread byte of the file */
	const char *end;
	int lineno;			/* line last handed to inih */
	int section;			/* current section (its first key), or -1 */
	int section_line[FR_CONF_NKEYS]; /* where each section was opened */
	int key_line[FR_CONF_NKEYS];	/* where each key was set */
	int err;			/* first error, -errno */
	int err_line;
	char *msg;
	size_t msglen;
};

static __attribute__((format(printf, 3, 0)))
void conf__vmsg(char *msg, size_t msglen, const char *fmt, va_list ap)
{
	if (msg && msglen)
		vsnprintf(msg, msglen, fmt, ap);
}

static __attribute__((format(printf, 3, 4)))
void conf__msg(char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf__vmsg(msg, msglen, fmt, ap);
	va_end(ap);
}

/* conf__strerror() - thread-safe text for -errno or errno @err. */
static const char *conf__strerror(int err, char *buf, size_t len)
{
	return strerror_r(err < 0 ? -err : err, buf, len);
}

/*
 * conf__shown() - copy @len bytes of @s into @buf for a message, control
 * characters replaced by '?', truncated to fit. Returns @buf.
 */
static const char *conf__shown(const char *s, size_t len, char *buf,
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

static void *conf_key__field(const struct conf_key *k, struct fr_config *cfg)
{
	return (char *)cfg + k->offset;
}

static const void *conf_key__cfield(const struct conf_key *k,
				    const struct fr_config *cfg)
{
	return (const char *)cfg + k->offset;
}

/* conf_key__get() - a numeric key's value in @cfg. */
static uint64_t conf_key__get(const struct conf_key *k,
			      const struct fr_config *cfg)
{
	const void *field = conf_key__cfield(k, cfg);

	switch (k->type) {
	case CONF_DURATION:
	case CONF_SIZE:
		return *(const uint64_t *)field;
	case CONF_U32:
		return *(const uint32_t *)field;
	default:
		return 0;
	}
}

/* conf_key__put() - store a numeric key's value, already range-checked. */
static void conf_key__put(const struct conf_key *k, struct fr_config *cfg,
			  uint64_t v)
{
	void *field = conf_key__field(k, cfg);

	switch (k->type) {
	case CONF_DURATION:
	case CONF_SIZE:
		*(uint64_t *)field = v;
		break;
	case CONF_U32:
		*(uint32_t *)field = (uint32_t)v;
		break;
	default:
		break;
	}
}

/* conf_key__owns() - true when @k's member is a malloc'd string. */
static bool conf_key__owns(const struct conf_key *k)
{
	return k->type == CONF_PATH;
}

/* conf_key__clear() - free @k's string in @cfg, if it has one. */
static void conf_key__clear(const struct conf_key *k, struct fr_config *cfg)
{
	char **field = conf_key__field(k, cfg);

	if (conf_key__owns(k)) {
		free(*field);
		*field = NULL;
	}
}

/* conf_key__equal() - true when @a and @b hold the same value for @k. */
static bool conf_key__equal(const struct conf_key *k,
			    const struct fr_config *a,
			    const struct fr_config *b)
{
	const char *sa, *sb;

	if (!conf_key__owns(k))
		return conf_key__get(k, a) == conf_key__get(k, b);
	sa = *(char *const *)conf_key__cfield(k, a);
	sb = *(char *const *)conf_key__cfield(k, b);
	return sa && sb && !strcmp(sa, sb);
}

/* conf_key__accepted() - what @k accepts, for error messages. */
static void conf_key__accepted(const struct conf_key *k, char *buf,
			       size_t len)
{
	char lo[32] = "?", hi[32] = "?";

	switch (k->type) {
	case CONF_DURATION:
		conf__format_scaled(k->min, conf_duration_units,
				    FR_CONF_NELEM(conf_duration_units),
				    lo, sizeof(lo));
		conf__format_scaled(k->max, conf_duration_units,
				    FR_CONF_NELEM(conf_duration_units),
				    hi, sizeof(hi));
		snprintf(buf, len, "%s..%s with a unit suffix ms, s, m or h",
			 lo, hi);
		break;
	case CONF_SIZE:
		conf__format_scaled(k->min, conf_size_units,
				    FR_CONF_NELEM(conf_size_units),
				    lo, sizeof(lo));
		conf__format_scaled(k->max, conf_size_units,
				    FR_CONF_NELEM(conf_size_units),
				    hi, sizeof(hi));
		snprintf(buf, len,
			 "%s..%s, in bytes or with a suffix K, M, G, KiB, MiB or GiB",
			 lo, hi);
		break;
	case CONF_U32:
		snprintf(buf, len, "%" PRIu64 "..%" PRIu64, k->min, k->max);
		break;
	case CONF_PATH:
		snprintf(buf, len, "an absolute path without control characters");
		break;
	}
}

/*
 * conf_key__set_path() - validate an absolute path and store a copy.
 * Returns 0, -EINVAL or -ENOMEM with *@why set.
 */
static int conf_key__set_path(const struct conf_key *k, struct fr_config *cfg,
			      const char *value, const char **why)
{
	char **field = conf_key__field(k, cfg);
	size_t len = strlen(value), i;
	char *copy;

	if (value[0] != '/') {
		*why = "not an absolute path";
		return -EINVAL;
	}
	for (i = 0; i < len; i++) {
		if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f) {
			*why = "contains a control character";
			return -EINVAL;
		}
	}
	if (len < k->min || len > k->max) {
		*why = "too long";
		return -EINVAL;
	}
	copy = strdup(value);
	if (!copy) {
		*why = "out of memory";
		return -ENOMEM;
	}
	free(*field);
	*field = copy;
	return 0;
}

/*
 * conf_key__set() - parse @value as @k's type, check its range and store it
 * into @cfg. Returns 0, or -EINVAL / -ENOMEM with *@why set to a short
 * reason; @cfg is unchanged on error.
 */
static int conf_key__set(const struct conf_key *k, struct fr_config *cfg,
			 const char *value, const char **why)
{
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
	case CONF_PATH:
		return conf_key__set_path(k, cfg, value, why);
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
	if (v < k->min) {
		*why = "too small";
		return -EINVAL;
	}
	conf_key__put(k, cfg, v);
	return 0;
}

/*
 * conf_key__format() - @k's value in @cfg in file syntax. Returns 0, or
 * -EINVAL if the value has no file syntax (a sub-millisecond duration, a
 * NULL string) or does not fit @len.
 */
static int conf_key__format(const struct conf_key *k,
			    const struct fr_config *cfg, char *buf, size_t len)
{
	const char *s;

	switch (k->type) {
	case CONF_DURATION:
		return conf__format_scaled(conf_key__get(k, cfg),
					   conf_duration_units,
					   FR_CONF_NELEM(conf_duration_units),
					   buf, len);
	case CONF_SIZE:
		return conf__format_scaled(conf_key__get(k, cfg),
					   conf_size_units,
					   FR_CONF_NELEM(conf_size_units),
					   buf, len);
	case CONF_U32:
		return conf__format_scaled(conf_key__get(k, cfg),
					   conf_plain_units,
					   FR_CONF_NELEM(conf_plain_units),
					   buf, len);
	case CONF_PATH:
		s = *(char *const *)conf_key__cfield(k, cfg);
		if (!s || strlen(s) >= len)
			return -EINVAL;
		strcpy(buf, s);
		return 0;
	}
	return -EINVAL;
}

/* conf__section_of() - the section (index of its first key) of key @i. */
static int conf__section_of(size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (!strcmp(conf_keys[j].section, conf_keys[i].section))
			break;
	return (int)j;
}

/* conf__section_find() - the section called @name (@len bytes), or -1. */
static int conf__section_find(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (strlen(conf_keys[i].section) == len &&
		    !memcmp(conf_keys[i].section, name, len))
			return conf__section_of(i);
	return -1;
}

/* conf__key_find() - key @name of section @sec, or NULL. */
static const struct conf_key *conf__key_find(int sec, const char *name)
{
	size_t i;

	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (conf__section_of(i) == sec &&
		    !strcmp(conf_keys[i].name, name))
			return &conf_keys[i];
	return NULL;
}

/*
 * conf__list() - "window, memory, frequency" for the keys of section @sec,
 * or "[recorder], [output]" for the sections when @sec is -1.
 */
static void conf__list(int sec, char *buf, size_t len)
{
	size_t i, off = 0;
	int w;

	buf[0] = '\0';
	for (i = 0; i < FR_CONF_NKEYS && off < len; i++) {
		if (sec < 0 && conf__section_of(i) == (int)i)
			w = snprintf(buf + off, len - off, "%s[%s]",
				     off ? ", " : "", conf_keys[i].section);
		else if (sec >= 0 && conf__section_of(i) == sec)
			w = snprintf(buf + off, len - off, "%s%s",
				     off ? ", " : "", conf_keys[i].name);
		else
			continue;
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

/*
 * conf_parse__fail() - record the first error of a load: -errno @err and a
 * message "<path>:<line>: <fmt...>". Later errors are dropped. Returns 0, the
 * inih handler's "error" value.
 */
static __attribute__((format(printf, 3, 4)))
int conf_parse__fail(struct conf_parse *p, int err, const char *fmt, ...)
{
	char tail[FR_CONF_ERR_MAX];
	va_list ap;

	if (p->err)
		return 0;
	p->err = err;
	p->err_line = p->lineno;
	va_start(ap, fmt);
	vsnprintf(tail, sizeof(tail), fmt, ap);
	va_end(ap);
	conf__msg(p->msg, p->msglen, "%s:%d: %s", p->path, p->lineno, tail);
	return 0;
}

/* conf_parse__bad_value() - record a value error for @k. Returns 0. */
static int conf_parse__bad_value(struct conf_parse *p, const struct conf_key *k,
				 const char *value, int err, const char *why)
{
	char shown[FR_CONF_LINE_MAX + 1], accepted[256];

	if (err == -ENOMEM)
		return conf_parse__fail(p, err, "[%s] %s: %s", k->section,
					k->name, why);
	conf__shown(value, strlen(value), shown, sizeof(shown));
	conf_key__accepted(k, accepted, sizeof(accepted));
	return conf_parse__fail(p, -EINVAL, "[%s] %s = %s: %s; accepted: %s",
				k->section, k->name, shown, why, accepted);
}

/*
 * conf_parse__header() - follow a "[section]" line as inih reads it: a '['
 * and the first ']' not inside an inline comment. Only blanks or a comment
 * may follow the ']' (inih would drop anything there without a word).
 * Returns 0 to go on (also for other lines, and for a header without ']',
 * which inih reports as a syntax error), or -EINVAL after recording an error.
 */
static int conf_parse__header(struct conf_parse *p, const char *line,
			      size_t len)
{
	char shown[FR_CONF_LINE_MAX + 1], list[256];
	bool was_space = false;
	size_t i, a, b;
	int sec;

	if (!len || line[0] != '[')
		return 0;
	for (i = 1; i < len && line[i] != ']'; i++) {
		if (was_space && strchr(INI_INLINE_COMMENT_PREFIXES, line[i]))
			return 0;
		was_space = isspace((unsigned char)line[i]);
	}
	if (i == len)
		return 0;
	b = i;
	for (i = b + 1; i < len && isspace((unsigned char)line[i]); i++)
		;
	if (i < len && line[i] != ';' && line[i] != '#') {
		conf_parse__fail(p, -EINVAL, FR_CONF_SYNTAX_ERROR);
		return -EINVAL;
	}
	for (a = 1; a < b && isspace((unsigned char)line[a]); a++)
		;
	while (b > a && isspace((unsigned char)line[b - 1]))
		b--;
	conf__shown(line + a, b - a, shown, sizeof(shown));
	sec = conf__section_find(line + a, b - a);
	if (sec < 0) {
		conf__list(-1, list, sizeof(list));
		conf_parse__fail(p, -EINVAL,
				 "unknown section [%s]; accepted: %s",
				 shown, list);
		return -EINVAL;
	}
	if (p->section_line[sec]) {
		conf_parse__fail(p, -EINVAL,
				 "duplicate section [%s], first at line %d",
				 shown, p->section_line[sec]);
		return -EINVAL;
	}
	p->section_line[sec] = p->lineno;
	p->section = sec;
	return 0;
}

/*
 * conf_parse__reader() - inih's fgets(): hand over the next line of the file
 * with leading blanks (and a UTF-8 BOM) removed. Refuses NUL bytes and lines
 * longer than FR_CONF_LINE_MAX, and tracks sections. Returns @str, or NULL at
 * the end of the file or after the first error, which ends the parse.
 */
static char *conf_parse__reader(char *str, int num, void *stream)
{
	struct conf_parse *p = stream;
	const char *line, *nl;
	size_t len, shown, max;

	if (p->err || p->pos >= p->end)
		return NULL;
	line = p->pos;
	nl = memchr(line, '\n', (size_t)(p->end - line));
	len = nl ? (size_t)(nl - line) : (size_t)(p->end - line);
	p->pos = nl ? nl + 1 : p->end;
	p->lineno++;

	shown = len;
	if (shown && line[shown - 1] == '\r')
		shown--;
	max = num > 3 ? (size_t)num - 3 : 0;
	if (max > FR_CONF_LINE_MAX)
		max = FR_CONF_LINE_MAX;
	if (memchr(line, '\0', len)) {
		conf_parse__fail(p, -EINVAL, "line contains a NUL byte");
		return NULL;
	}
	if (shown > max) {
		conf_parse__fail(p, -EINVAL,
				 "line too long (%zu bytes); accepted: at most %zu bytes",
				 shown, max);
		return NULL;
	}
	if (p->lineno == 1 && len >= 3 && !memcmp(line, "\xef\xbb\xbf", 3)) {
		line += 3;
		len -= 3;
	}
	while (len && isspace((unsigned char)*line)) {
		line++;
		len--;
	}
	if (conf_parse__header(p, line, len))
		return NULL;
	/* len <= max + 1 (a '\r'), so the line, '\n' and NUL fit in num */
	memcpy(str, line, len);
	str[len] = '\n';
	str[len + 1] = '\0';
	return str;
}

/*
 * conf_parse__handler() - inih's callback for one "key = value" line of the
 * line the reader handed over last. The section comes from the reader, which
 * trims blanks inside the brackets. Returns 1, or 0 after recording an error.
 */
static int conf_parse__handler(void *user, const char *section,
			       const char *name, const char *value)
{
	char shown[FR_CONF_LINE_MAX + 1], list[256];
	struct conf_parse *p = user;
	const struct conf_key *k;
	const char *why, *sname;
	size_t idx;
	int ret;

	(void)section;	/* inih's copy is untrimmed; the reader's is exact */
	if (p->err)
		return 0;
	if (!*name)
		return conf_parse__fail(p, -EINVAL, FR_CONF_SYNTAX_ERROR);
	conf__shown(value, strlen(value), shown, sizeof(shown));
	if (p->section < 0) {
		conf__list(-1, list, sizeof(list));
		return conf_parse__fail(p, -EINVAL,
					"%s = %s: key before any section; accepted: %s",
					name, shown, list);
	}
	sname = conf_keys[p->section].section;
	k = conf__key_find(p->section, name);
	if (!k) {
		conf__list(p->section, list, sizeof(list));
		return conf_parse__fail(p, -EINVAL,
					"[%s] %s = %s: unknown key; accepted: %s",
					sname, name, shown, list);
	}
	idx = (size_t)(k - conf_keys);
	if (p->key_line[idx])
		return conf_parse__fail(p, -EINVAL,
					"[%s] %s = %s: duplicate key, first set at line %d",
					sname, name, shown, p->key_line[idx]);
	p->key_line[idx] = p->lineno;
	ret = conf_key__set(k, p->cfg, value, &why);
	if (ret)
		return conf_parse__bad_value(p, k, value, ret, why);
	return 1;
}

/*
 * conf__parse() - apply the INI @text (@len bytes, from @path) to @cfg.
 * Returns 0, or -EINVAL / -ENOMEM with a message in @msg; @cfg may then be
 * partly changed.
 */
static int conf__parse(struct fr_config *cfg, const char *path,
		       const char *text, size_t len, char *msg, size_t msglen)
{
	struct conf_parse p = {
		.path = path,
		.cfg = cfg,
		.pos = text,
		.end = text + len,
		.section = -1,
		.msg = msg,
		.msglen = msglen,
	};
	int ret;

	ret = ini_parse_stream(conf_parse__reader, &p, conf_parse__handler, &p);
	/*
	 * inih returns the first line it or the handler failed on. The parse
	 * stops at our first error, so an earlier line is a syntax error.
	 */
	if (ret > 0 && (!p.err || ret < p.err_line)) {
		p.err = 0;
		p.lineno = ret;
		conf_parse__fail(&p, -EINVAL, FR_CONF_SYNTAX_ERROR);
	} else if (ret < 0 && !p.err) {
		p.err = -ENOMEM;
		conf__msg(msg, msglen, "failed to parse '%s': out of memory",
			  path);
	}
	return p.err;
}

/* conf__file_type() - a word for the file type in @mode. */
static const char *conf__file_type(mode_t mode)
{
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
 * conf__check_file() - refuse a file root should not trust: not a regular
 * file, group- or world-writable, or owned by someone other than root or
 * us. Returns 0, or -EPERM with a message.
 */
static int conf__check_file(const char *path, const struct stat *st,
			    char *msg, size_t msglen)
{
	unsigned int mode = st->st_mode & 07777;
	uid_t me = geteuid();
	char why[80], who[32] = "";

	if (!S_ISREG(st->st_mode))
		snprintf(why, sizeof(why), "not a regular file but %s",
			 conf__file_type(st->st_mode));
	else if (st->st_mode & S_IWOTH)
		snprintf(why, sizeof(why), "world-writable (mode %04o)", mode);
	else if (st->st_mode & S_IWGRP)
		snprintf(why, sizeof(why), "group-writable (mode %04o)", mode);
	else if (st->st_uid != 0 && st->st_uid != me)
		snprintf(why, sizeof(why), "owned by uid %u",
			 (unsigned int)st->st_uid);
	else
		return 0;
	if (me != 0)
		snprintf(who, sizeof(who), " or uid %u", (unsigned int)me);
	conf__msg(msg, msglen,
		  "refusing '%s': %s; accepted: a regular file owned by root%s, writable by its owner only",
		  path, why, who);
	return -EPERM;
}

/*
 * conf__read_fd() - read all of @fd (about @hint bytes) into a malloc'd
 * buffer. Returns 0 with *@textp (caller frees) and *@lenp set, -EFBIG past
 * FR_CONF_FILE_MAX bytes, -ENOMEM, or the read error.
 */
static int conf__read_fd(int fd, off_t hint, char **textp, size_t *lenp)
{
	size_t cap, len = 0;
	char *text, *grown;
	ssize_t n;
	int ret;

	if (hint < 0 || hint > FR_CONF_FILE_MAX)
		return -EFBIG;
	/* one spare byte, so reading the whole file ends with a read of 0 */
	cap = (size_t)hint + 1;
	text = malloc(cap);
	if (!text)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			/* the file grew while we read it */
			ret = -EFBIG;
			if (cap > FR_CONF_FILE_MAX)
				goto out;
			cap = cap * 2 > FR_CONF_FILE_MAX + 1 ?
			      FR_CONF_FILE_MAX + 1 : cap * 2;
			ret = -ENOMEM;
			grown = realloc(text, cap);
			if (!grown)
				goto out;
			text = grown;
		}
		n = read(fd, text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*textp = text;
	*lenp = len;
	return 0;
out:
	free(text);
	return ret;
}

/*
 * conf__read_file() - check and read all of @path. Returns 0 with *@textp
 * (caller frees) and *@lenp set, or -errno with a message: open and read
 * errors as they come, -EPERM for an unsafe file, -EFBIG for a huge one.
 */
static int conf__read_file(const char *path, char **textp, size_t *lenp,
			   char *msg, size_t msglen)
{
	struct stat st;
	char ebuf[128];
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		conf__msg(msg, msglen, "failed to open '%s': %s", path,
			  conf__strerror(ret, ebuf, sizeof(ebuf)));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		conf__msg(msg, msglen, "failed to stat '%s': %s", path,
			  conf__strerror(ret, ebuf, sizeof(ebuf)));
		goto out;
	}
	ret = conf__check_file(path, &st, msg, msglen);
	if (ret)
		goto out;
	ret = conf__read_fd(fd, st.st_size, textp, lenp);
	if (ret == -EFBIG)
		conf__msg(msg, msglen, "refusing '%s': larger than %d bytes",
			  path, FR_CONF_FILE_MAX);
	else if (ret)
		conf__msg(msg, msglen, "failed to read '%s': %s", path,
			  conf__strerror(ret, ebuf, sizeof(ebuf)));
out:
	close(fd);
	return ret;
}

struct fr_config *config__new(void)
{
	struct fr_config *cfg;
	const char *why;
	size_t i;
	int ret;

	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return NULL;
	for (i = 0; i < FR_CONF_NKEYS; i++) {
		ret = conf_key__set(&conf_keys[i], cfg, conf_keys[i].def, &why);
		if (ret) {
			config__free(cfg);
			errno = -ret;
			return NULL;
		}
	}
	return cfg;
}

void config__free(struct fr_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	for (i = 0; i < FR_CONF_NKEYS; i++)
		conf_key__clear(&conf_keys[i], cfg);
	free(cfg->path);
	free(cfg);
}

struct fr_config *config__dup(const struct fr_config *cfg)
{
	struct fr_config *copy;
	const char *src;
	char **dst;
	size_t i;
	int err;

	if (!cfg) {
		errno = EINVAL;
		return NULL;
	}
	copy = malloc(sizeof(*copy));
	if (!copy)
		return NULL;
	*copy = *cfg;
	copy->path = NULL;
	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (conf_key__owns(&conf_keys[i]))
			*(char **)conf_key__field(&conf_keys[i], copy) = NULL;
	if (cfg->path && !(copy->path = strdup(cfg->path)))
		goto fail;
	for (i = 0; i < FR_CONF_NKEYS; i++) {
		if (!conf_key__owns(&conf_keys[i]))
			continue;
		src = *(char *const *)conf_key__cfield(&conf_keys[i], cfg);
		dst = conf_key__field(&conf_keys[i], copy);
		if (src && !(*dst = strdup(src)))
			goto fail;
	}
	return copy;
fail:
	err = errno;
	config__free(copy);
	errno = err;
	return NULL;
}

int config__load(struct fr_config *cfg, const char *path, char *err,
		 size_t errlen)
{
	struct fr_config *tmp = NULL, old;
	char *text = NULL;
	size_t len = 0;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!cfg || !path) {
		conf__msg(err, errlen, "failed to load config: %s",
			  "invalid argument");
		return -EINVAL;
	}
	ret = conf__read_file(path, &text, &len, err, errlen);
	if (ret)
		return ret;
	tmp = config__dup(cfg);
	if (!tmp) {
		ret = -ENOMEM;
		conf__msg(err, errlen, "failed to load '%s': out of memory",
			  path);
		goto out;
	}
	ret = conf__parse(tmp, path, text, len, err, errlen);
	if (ret)
		goto out;
	free(tmp->path);
	tmp->path = strdup(path);
	if (!tmp->path) {
		ret = -ENOMEM;
		conf__msg(err, errlen, "failed to load '%s': out of memory",
			  path);
		goto out;
	}
	/* swap, so the old values are freed below */
	old = *cfg;
	*cfg = *tmp;
	*tmp = old;
out:
	config__free(tmp);
	free(text);
	return ret;
}

/*
 * conf__line() - append one formatted line and its newline to @f. Returns 0,
 * -EINVAL if the line is longer than config__load() accepts, or -ENOMEM.
 */
static __attribute__((format(printf, 2, 3)))
int conf__line(FILE *f, const char *fmt, ...)
{
	char line[FR_CONF_LINE_MAX + 1];
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= sizeof(line))
		return -EINVAL;
	if (fprintf(f, "%s\n", line) < 0)
		return -ENOMEM;
	return 0;
}

/*
 * conf__verbatim() - true when inih hands @value back unchanged from
 * "key = @value": not empty, no blank at either end, no inline comment.
 */
static bool conf__verbatim(const char *value)
{
	size_t len = strlen(value), i;

	if (!len || isspace((unsigned char)value[0]) ||
	    isspace((unsigned char)value[len - 1]))
		return false;
	for (i = 1; i < len; i++)
		if (isspace((unsigned char)value[i - 1]) &&
		    strchr(INI_INLINE_COMMENT_PREFIXES, value[i]))
			return false;
	return true;
}

/*
 * conf_key__render() - append "key = value" for @k, after checking that
 * loading it gives back the value in @cfg. Returns 0, -EINVAL if it would
 * not, or -ENOMEM.
 */
static int conf_key__render(const struct conf_key *k,
			    const struct fr_config *cfg, FILE *f)
{
	char value[FR_CONF_LINE_MAX + 1];
	struct fr_config back = { 0 };
	const char *why;
	int ret;

	ret = conf_key__format(k, cfg, value, sizeof(value));
	if (ret)
		return ret;
	if (!conf__verbatim(value))
		return -EINVAL;
	ret = conf_key__set(k, &back, value, &why);
	if (!ret && !conf_key__equal(k, &back, cfg))
		ret = -EINVAL;
	conf_key__clear(k, &back);
	if (ret)
		return ret;
	ret = conf__line(f, "# %s", k->help);
	if (ret)
		return ret;
	return conf__line(f, "%s = %s", k->name, value);
}

char *config__render(const struct fr_config *cfg)
{
	char *text = NULL;
	size_t size = 0, i, j;
	int ret;
	FILE *f;

	if (!cfg) {
		errno = EINVAL;
		return NULL;
	}
	f = open_memstream(&text, &size);
	if (!f)
		return NULL;
	ret = conf__line(f, "# flightrec configuration: every key, with its effective value");
	for (i = 0; !ret && i < FR_CONF_NKEYS; i++) {
		if (conf__section_of(i) != (int)i)
			continue;
		ret = conf__line(f, "\n[%s]", conf_keys[i].section);
		for (j = i; !ret && j < FR_CONF_NKEYS; j++)
			if (conf__section_of(j) == (int)i)
				ret = conf_key__render(&conf_keys[j], cfg, f);
	}
	if (!ret && ferror(f))
		ret = -ENOMEM;
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(text);
		errno = -ret;
		return NULL;
	}
	return text;
}
