// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * text.c - strings a process chose, made safe to show as text. See text.h.
 */
#include <stdio.h>
#include <string.h>

#include "text.h"
#include "util.h"

/*
 * escape_char() - the escape of byte @c in text for a terminal, or NULL
 * when it stands for itself: C escapes for the common controls, \xNN for
 * the rest, as ps and systemd show names.
 */
static const char *escape_char(unsigned char c, char tmp[8])
{
	static const char *const named[0x20] = {
		['\a'] = "\\a", ['\b'] = "\\b", ['\t'] = "\\t", ['\n'] = "\\n",
		['\v'] = "\\v", ['\f'] = "\\f", ['\r'] = "\\r",
	};

	if (c == '\\')
		return "\\\\";
	if (c < 0x20 && named[c])
		return named[c];
	if (c < 0x20 || c == 0x7f || c >= 0x80) {
		snprintf(tmp, 8, "\\x%02x", c);
		return tmp;
	}
	return NULL;
}

/*
 * fr_text_escape() - @s as text safe to print on a terminal, in @buf (@len
 * bytes): control characters (C0, DEL, and C1 written as UTF-8),
 * backslashes and bytes that are not UTF-8 are escaped (\n, \t, \\,
 * \x1b, \xc2\x9b, ...); well-formed UTF-8 text is kept. A string that
 * does not fit is cut before an escape or character, never inside one.
 * Every string a process chose (comm, cmdline, exe, file names, cgroup,
 * thread and symbol names) goes through it before it is shown as text:
 * the reader's text commands and the daemon's text status.
 */
const char *fr_text_escape(const char *s, char *buf, size_t len)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t o = 0, left = strlen((const char *)u);

	if (!len)
		return buf;
	while (*u) {
		size_t n = fr_utf8_len(u, left), k;
		const char *out = (const char *)u;
		char esc[16];

		if (n == 2 && fr_is_c1(u)) {
			snprintf(esc, sizeof(esc), "\\x%02x\\x%02x", u[0], u[1]);
			out = esc;
		} else if (n <= 1) {
			const char *e = escape_char(*u, esc);

			n = 1;
			out = e ? e : out;
		}
		k = out == (const char *)u ? n : strlen(out);
		if (o + k >= len)
			break;
		memcpy(buf + o, out, k);
		o += k;
		u += n;
		left -= n;
	}
	buf[o] = 0;
	return buf;
}

