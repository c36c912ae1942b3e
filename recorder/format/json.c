// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * json.c - JSON output helpers. See json.h.
 */
#include <inttypes.h>
#include <math.h>

#include "json.h"
#include "util.h"

void json__init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
}

/*
 * json_escape() - @s as a JSON string literal: control characters (C0,
 * DEL and C1) as \u escapes, well-formed UTF-8 as is, and every byte that
 * is not UTF-8 as U+FFFD, so the output is always valid UTF-8 JSON
 * whatever bytes a process put in its names.
 */
void json_escape(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x80) {
			const unsigned char *u = (const unsigned char *)s;
			size_t n = fr_utf8_len(u, strnlen(s, 4));

			if (!n)
				fputs("\\ufffd", f);
			else if (n == 2 && fr_is_c1(u))
				fprintf(f, "\\u%04x", u[1]);
			else
				fwrite(s, 1, n, f);
			s += n ? n - 1 : 0;
			continue;
		}

		switch (c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

/* Comma and key, as the position needs. */
static void member(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (key) {
		json_escape(j->f, key);
		fputc(':', j->f);
	}
}

static void open_(struct json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth < 31)
		j->depth++;
	j->first[j->depth] = true;
}

void json__obj(struct json *j, const char *key)
{
	open_(j, key, '{');
}

void json__arr(struct json *j, const char *key)
{
	open_(j, key, '[');
}

void json__end_obj(struct json *j)
{
	fputc('}', j->f);
	if (j->depth)
		j->depth--;
}

void json__end_arr(struct json *j)
{
	fputc(']', j->f);
	if (j->depth)
		j->depth--;
}

void json__str(struct json *j, const char *key, const char *v)
{
	member(j, key);
	json_escape(j->f, v ? v : "");
}

void json__u64(struct json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

void json__i64(struct json *j, const char *key, int64_t v)
{
	member(j, key);
	fprintf(j->f, "%" PRId64, v);
}

void json__f64(struct json *j, const char *key, double v)
{
	member(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void json__bool(struct json *j, const char *key, bool v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}
