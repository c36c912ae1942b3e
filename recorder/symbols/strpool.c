// SPDX-License-Identifier: MIT
/*
 * strpool.c - the string pool and the text helpers the symbol tables share
 * (strpool.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "strpool.h"
#include "util.h"


/*
 * strpool__add() - copy the first @len bytes of @s (cut at FR_SYM_NAME_MAX)
 * into @p and store its offset in *@off. Returns 0, -ENOMEM or -E2BIG when
 * the pool would outgrow 32-bit offsets.
 */
int strpool__add(struct fr_strpool *p, const char *s, size_t len,
			uint32_t *off)
{
	int r;

	if (len > FR_SYM_NAME_MAX)
		len = FR_SYM_NAME_MAX;
	if (p->len + len + 1 > UINT32_MAX)
		return -E2BIG;
	r = fr_grow((void **)&p->buf, &p->cap, p->len + len + 1, 1);
	if (r)
		return r;
	memcpy(p->buf + p->len, s, len);
	p->buf[p->len + len] = '\0';
	*off = (uint32_t)p->len;
	p->len += len + 1;
	return 0;
}

/* fr_underscores() - the number of leading underscores of @s, at most 15. */
unsigned int fr_underscores(const char *s)
{
	unsigned int n = 0;

	while (s[n] == '_' && n < 15)
		n++;
	return n;
}

/*
 * fr_parse_hex() - parse an unsigned hex number, with or without "0x", at
 * *@p; on success advance *@p past it. Returns true if digits were read.
 */
bool fr_parse_hex(const char **p, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!isxdigit((unsigned char)**p))
		return false;
	errno = 0;
	v = strtoull(*p, &end, 16);
	if (errno || end == *p)
		return false;
	*out = v;
	*p = end;
	return true;
}

/* fr_chomp() - strip trailing newline characters from @s of length @len. */
size_t fr_chomp(char *s, size_t len)
{
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		s[--len] = '\0';
	return len;
}

/*
 * fr_fr_read_lines() - call @fn(@ctx, line) for each line of @f, stopping at the
 * first non-zero return. Returns 0, what @fn returned, or -errno of a read
 * error.
 */
int fr_read_lines(FILE *f, int (*fn)(void *ctx, char *line), void *ctx)
{
	char *line = NULL;
	size_t lcap = 0;
	int r = 0;

	errno = 0;
	while (!r && getline(&line, &lcap, f) >= 0)
		r = fn(ctx, line);
	if (!r && ferror(f))
		r = errno ? -errno : -EIO;
	free(line);
	return r;
}
