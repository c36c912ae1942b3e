// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_text.c - text a process chose, shown safely: view_text() for the
 * text commands (C escapes, as ps and systemd show names) and
 * json_escape() for the JSON ones (valid UTF-8 JSON for any bytes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tap.h"
#include "view.h"

static const struct {
	const char *in, *text, *json, *what;
} cases[] = {
	{ "plain name", "plain name", "\"plain name\"", "plain text is kept" },
	{ "\x1b]0;pwned\a", "\\x1b]0;pwned\\a", "\"\\u001b]0;pwned\\u0007\"",
	  "an OSC title sequence (ESC ... BEL) is escaped" },
	{ "\x1b[2J\x1b[31m", "\\x1b[2J\\x1b[31m", "\"\\u001b[2J\\u001b[31m\"", "CSI sequences are escaped" },
	{ "a\nFORGED 1 line", "a\\nFORGED 1 line", "\"a\\nFORGED 1 line\"",
	  "a newline cannot forge a line" },
	{ "tab\there\rcr\b\f\v", "tab\\there\\rcr\\b\\f\\v", "\"tab\\there\\rcr\\u0008\\u000c\\u000b\"",
	  "the other C0 controls are escaped" },
	{ "back\\x1b", "back\\\\x1b", "\"back\\\\x1b\"", "a backslash is escaped, so escapes are unambiguous" },
	{ "del\x7f", "del\\x7f", "\"del\\u007f\"", "DEL is escaped" },
	{ "caf\xc3\xa9 \xe2\x96\x81 \xf0\x9f\x94\xa5", "caf\xc3\xa9 \xe2\x96\x81 \xf0\x9f\x94\xa5",
	  "\"caf\xc3\xa9 \xe2\x96\x81 \xf0\x9f\x94\xa5\"", "well-formed UTF-8 is kept" },
	{ "c1\xc2\x9b" "31m", "c1\\xc2\\x9b31m", "\"c1\\u009b31m\"", "a C1 control (8-bit CSI) is escaped" },
	{ "bad\xff\xfe", "bad\\xff\\xfe", "\"bad\\ufffd\\ufffd\"", "bytes that are not UTF-8 are escaped" },
	{ "over\xc0\xaf", "over\\xc0\\xaf", "\"over\\ufffd\\ufffd\"", "an overlong form is not UTF-8" },
	{ "sur\xed\xa0\x80", "sur\\xed\\xa0\\x80", "\"sur\\ufffd\\ufffd\\ufffd\"", "a surrogate is not UTF-8" },
	{ "cut\xe2\x96", "cut\\xe2\\x96", "\"cut\\ufffd\\ufffd\"", "a truncated sequence is not UTF-8" },
	{ "<script>alert(1)</script>", "<script>alert(1)</script>", "\"<script>alert(1)</script>\"",
	  "markup is text here (the report escapes it for HTML)" },
};

int main(void)
{
	char buf[256], *out = NULL;
	size_t len = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = open_memstream(&out, &len);

		is_str(view_text(cases[i].in, buf, sizeof(buf)), cases[i].text, "text: %s", cases[i].what);
		json_escape(f, cases[i].in);
		fclose(f);
		is_str(out, cases[i].json, "json: %s", cases[i].what);
		free(out);
		out = NULL;
	}
	is_str(view_text("abcdefgh\x1b", buf, 10), "abcdefgh", "a full buffer cuts before an escape");
	is_str(view_text("ab\xc3\xa9", buf, 4), "ab", "and before a character, never inside one");
	is_str(view_text(NULL, buf, sizeof(buf)), "", "NULL is empty text");
	return tap_done_testing();
}
