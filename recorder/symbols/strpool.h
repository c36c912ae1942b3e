/* SPDX-License-Identifier: MIT */
/*
 * strpool.h - the string pool the symbol tables keep their names in,
 * and the text helpers their parsers share.
 */
#ifndef FR_STRPOOL_H
#define FR_STRPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Names longer than this are cut: a bound on what a malformed file costs. */
#define FR_SYM_NAME_MAX		4096

/* A growable pool of NUL-terminated names referenced by offset. */
struct fr_strpool {
	char *buf;
	size_t len, cap;
};

int strpool__add(struct fr_strpool *p, const char *s, size_t len, uint32_t *off);
unsigned int fr_underscores(const char *s);
bool fr_parse_hex(const char **p, uint64_t *out);
size_t fr_chomp(char *s, size_t len);
int fr_read_lines(FILE *f, int (*fn)(void *ctx, char *line), void *ctx);

#endif
