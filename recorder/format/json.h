/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json.h - just enough JSON output for the CLI: escaped strings and a
 * writer that places commas.
 */
#ifndef FR_JSON_H
#define FR_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json {
	FILE *f;
	int depth;
	bool first[32];		/* no member written yet at this depth */
};

void json__init(struct json *j, FILE *f);
void json__obj(struct json *j, const char *key);
void json__arr(struct json *j, const char *key);
void json__end_obj(struct json *j);
void json__end_arr(struct json *j);
void json__str(struct json *j, const char *key, const char *v);
void json__u64(struct json *j, const char *key, uint64_t v);
void json__i64(struct json *j, const char *key, int64_t v);
void json__f64(struct json *j, const char *key, double v);
void json__bool(struct json *j, const char *key, bool v);
void json_escape(FILE *f, const char *s);

#endif /* FR_JSON_H */
