// SPDX-License-Identifier: MIT
/*
 * kallsyms.c - the kernel's text symbols, from /proc/kallsyms (kallsyms.h).
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

#include "kallsyms.h"
#include "strpool.h"
#include "untrusted.h"
#include "util.h"

#define FR_NO_MODULE		UINT32_MAX

struct fr_ksym {
	uint64_t start, end;
	uint32_t name, module;	/* pool offsets; module may be FR_NO_MODULE */
	uint32_t rank, seq;	/* alias preference, then file order */
};

struct kallsyms {
	size_t n;
	struct fr_ksym *syms;
	struct fr_strpool names;
};

/* kallsyms__type_rank() - preference of a text type, -1 for other types. */
static int kallsyms__type_rank(char type)
{
	switch (type) {
	case 'T': return 0;
	case 't': return 1;
	case 'W': return 2;
	case 'w': return 3;
	default: return -1;
	}
}

/* Parser state: the last module interned, reused for its next symbols. */
struct fr_kload {
	struct kallsyms *k;
	size_t cap, text_seen;
	uint32_t last_mod;	/* pool offset, FR_NO_MODULE before any */
};

/*
 * kallsyms__add_line() - add the text symbol of @line, if any, to @k.
 * Returns 0 (also for lines that are ignored) or -ENOMEM / -E2BIG.
 */
static int kallsyms__add_line(void *ctx, char *line)
{
	struct fr_kload *st = ctx;
	struct kallsyms *k = st->k;
	const char *p = line;
	struct fr_ksym *ks;
	char *name, *mod, *end;
	uint64_t addr;
	int trank, r;

	if (!fr_parse_hex(&p, &addr) || p[0] != ' ' || !p[1] || p[2] != ' ')
		return 0;
	trank = kallsyms__type_rank(p[1]);
	if (trank < 0)
		return 0;
	name = line + (p + 3 - line);
	end = name + strcspn(name, " \t\r\n");
	if (end == name)
		return 0;
	st->text_seen++;
	if (!addr)
		return 0;

	r = fr_grow((void **)&k->syms, &st->cap, k->n + 1, sizeof(*k->syms));
	if (r)
		return r;
	ks = &k->syms[k->n];
	ks->module = FR_NO_MODULE;
	mod = strchr(end, '[');
	if (mod && strchr(mod, ']')) {
		size_t mlen = strchr(mod, ']') - mod - 1;

		mod[mlen + 1] = '\0';
		mod++;
		if (st->last_mod != FR_NO_MODULE &&
		    !strcmp(k->names.buf + st->last_mod, mod)) {
			ks->module = st->last_mod;
		} else {
			r = strpool__add(&k->names, mod, mlen, &ks->module);
			if (r)
				return r;
			st->last_mod = ks->module;
		}
	}
	r = strpool__add(&k->names, name, end - name, &ks->name);
	if (r)
		return r;
	ks->start = addr;
	ks->rank = trank * 16 + fr_underscores(name);
	ks->seq = (uint32_t)k->n;
	k->n++;
	return 0;
}

/* Shrink *@p to @size bytes; true if it moved or shrank. Failure keeps it. */
static bool shrink(void **p, size_t size)
{
	void *q = realloc(*p, size ? size : 1);

	if (!q)
		return false;
	*p = q;
	return true;
}

static int ksym__cmp(const void *a, const void *b)
{
	const struct fr_ksym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* kallsyms__same_module() - whether two symbols belong to one module. */
static bool kallsyms__same_module(const struct kallsyms *k,
				  const struct fr_ksym *a,
				  const struct fr_ksym *b)
{
	if (a->module == FR_NO_MODULE || b->module == FR_NO_MODULE)
		return a->module == b->module;
	return !strcmp(k->names.buf + a->module, k->names.buf + b->module);
}

/*
 * kallsyms__finish() - sort, keep the best alias per address and set every
 * symbol's end.
 */
static void kallsyms__finish(struct kallsyms *k)
{
	size_t n = 0;

	if (!k->n)
		return;
	qsort(k->syms, k->n, sizeof(*k->syms), ksym__cmp);
	for (size_t i = 0; i < k->n; i++)
		if (!n || k->syms[i].start != k->syms[n - 1].start)
			k->syms[n++] = k->syms[i];
	k->n = n;
	for (size_t i = 0; i < n; i++) {
		struct fr_ksym *s = &k->syms[i];
		uint64_t tail = s->start + FR_KSYM_TAIL < s->start ?
				UINT64_MAX : s->start + FR_KSYM_TAIL;

		if (i + 1 < n && kallsyms__same_module(k, s, s + 1))
			s->end = s[1].start;
		else if (i + 1 < n && s[1].start < tail)
			s->end = s[1].start;
		else
			s->end = tail;
	}
	/* Kept for the daemon's life: give back the growth slack. */
	shrink((void **)&k->syms, n * sizeof(*k->syms));
	if (shrink((void **)&k->names.buf, k->names.len ? k->names.len : 1))
		k->names.cap = k->names.len;
}

void kallsyms__free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->names.buf);
	free(k->syms);
	free(k);
}

struct kallsyms *kallsyms__load(const char *path)
{
	struct fr_kload st = { .last_mod = FR_NO_MODULE };
	struct kallsyms *k;
	FILE *f = NULL;
	int r = 0;

	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	st.k = k;
	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		goto out;
	}
	r = fr_read_lines(f, kallsyms__add_line, &st);
	if (r)
		goto out;
	if (st.text_seen && !k->n) {
		r = -EPERM;
		goto out;
	}
	kallsyms__finish(k);
out:
	if (f)
		fclose(f);
	if (r) {
		kallsyms__free(k);
		errno = -r;
		return NULL;
	}
	return k;
}

const char *kallsyms__lookup(const struct kallsyms *k, uint64_t addr,
			     uint64_t *sym_off, const char **module)
{
	const struct fr_ksym *s;
	size_t lo;

	if (!k)
		return NULL;
	lo = fr_upper_bound(k->syms, k->n, sizeof(*k->syms), offsetof(struct fr_ksym, start), addr);
	if (!lo)
		return NULL;
	s = &k->syms[lo - 1];
	if (addr >= s->end)
		return NULL;
	if (sym_off)
		*sym_off = addr - s->start;
	if (module)
		*module = s->module == FR_NO_MODULE ?
			  NULL : k->names.buf + s->module;
	return k->names.buf + s->name;
}

size_t kallsyms__count(const struct kallsyms *k)
{
	return k->n;
}
