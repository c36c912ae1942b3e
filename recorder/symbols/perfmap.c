// SPDX-License-Identifier: MIT
/*
 * perfmap.c - a JIT's perf map, /tmp/perf-PID.map (perfmap.h).
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

#include "perfmap.h"
#include "strpool.h"
#include "untrusted.h"
#include "util.h"

struct fr_pentry {
	uint64_t start, size;
	uint32_t name, seq;
};

struct perfmap {
	size_t n;
	struct fr_pentry *e;
	struct fr_strpool names;
};

/* Parser state of one perf map read. */
struct fr_pload {
	struct perfmap *p;
	size_t cap;
};

/*
 * perfmap__add_line() - add the entry of @line to @p unless the line is
 * malformed. Returns 0, -ENOMEM or -E2BIG.
 */
static int perfmap__add_line(void *ctx, char *line)
{
	struct fr_pload *st = ctx;
	struct perfmap *p = st->p;
	const char *s = line;
	struct fr_pentry *e;
	uint64_t start, size;
	size_t len;
	int r;

	if (!fr_parse_hex(&s, &start) || (*s != ' ' && *s != '\t'))
		return 0;
	s += strspn(s, " \t");
	if (!fr_parse_hex(&s, &size) || (*s != ' ' && *s != '\t'))
		return 0;
	s += strspn(s, " \t");
	len = fr_chomp(line + (s - line), strlen(s));
	if (!len || !size || start + size < start)
		return 0;

	r = fr_grow((void **)&p->e, &st->cap, p->n + 1, sizeof(*p->e));
	if (r)
		return r;
	e = &p->e[p->n];
	r = strpool__add(&p->names, s, len, &e->name);
	if (r)
		return r;
	e->start = start;
	e->size = size;
	e->seq = (uint32_t)p->n;
	p->n++;
	return 0;
}

static int pentry__cmp(const void *a, const void *b)
{
	const struct fr_pentry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void perfmap__free(struct perfmap *p)
{
	if (!p)
		return;
	free(p->names.buf);
	free(p->e);
	free(p);
}

/* Sort by (start, line) and keep the last line for one start. */
static void perfmap__finish(struct perfmap *p)
{
	size_t n = 0;

	if (p->n)
		qsort(p->e, p->n, sizeof(*p->e), pentry__cmp);
	for (size_t i = 0; i < p->n; i++) {
		if (n && p->e[n - 1].start == p->e[i].start)
			n--;
		p->e[n++] = p->e[i];
	}
	p->n = n;
}

struct perfmap *perfmap__parse(const char *buf, size_t len)
{
	struct fr_pload st = { 0 };
	struct perfmap *p;
	FILE *f = NULL;
	int r = 0;

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	st.p = p;
	if (len) {
		f = fmemopen((void *)buf, len, "r");
		if (!f) {
			r = -errno;
			goto out;
		}
		r = fr_read_lines(f, perfmap__add_line, &st);
		fclose(f);
	}
	if (!r)
		perfmap__finish(p);
out:
	if (r) {
		perfmap__free(p);
		errno = -r;
		return NULL;
	}
	return p;
}

struct perfmap *perfmap__load_fd(int fd, uint64_t deadline_ns)
{
	struct perfmap *p;
	size_t len;
	char *buf;
	int r, err;

	r = untrusted__slurp(fd, FR_PERFMAP_MAX_BYTES, deadline_ns, &buf, &len);
	if (r) {
		errno = -r;
		return NULL;
	}
	p = perfmap__parse(buf, len);
	err = errno;
	free(buf);
	errno = err;
	return p;
}

struct perfmap *perfmap__load(const char *path)
{
	const struct fr_untrusted_rule rule = { .max_bytes = FR_PERFMAP_MAX_BYTES };
	struct perfmap *p;
	int fd, err;

	fd = untrusted__open(AT_FDCWD, path, &rule, NULL);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	p = perfmap__load_fd(fd, 0);
	err = errno;
	close(fd);
	errno = err;
	return p;
}

const char *perfmap__lookup(const struct perfmap *p, uint64_t addr,
			    uint64_t *sym_off)
{
	const struct fr_pentry *e;
	size_t lo;

	if (!p)
		return NULL;
	lo = fr_upper_bound(p->e, p->n, sizeof(*p->e), offsetof(struct fr_pentry, start), addr);
	if (!lo)
		return NULL;
	e = &p->e[lo - 1];
	if (addr - e->start >= e->size)
		return NULL;
	if (sym_off)
		*sym_off = addr - e->start;
	return p->names.buf + e->name;
}
