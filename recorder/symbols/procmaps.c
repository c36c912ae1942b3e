// SPDX-License-Identifier: MIT
/*
 * procmaps.c - a process's mappings, from /proc/PID/maps (procmaps.h).
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

#include "procmaps.h"
#include "strpool.h"
#include "untrusted.h"
#include "util.h"

/*
 * mapping__parse() - fill @m from one maps line; @line is modified. With
 * @exec_only, a mapping that is not executable is skipped before its path
 * is copied. Returns 0, -EINVAL if the line does not parse, -EAGAIN if it
 * was skipped, or -ENOMEM.
 */
static int mapping__parse(char *line, struct fr_mapping *m, bool exec_only)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	char perms[8];
	size_t len;
	int n = -1;
	char *path;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end,
		   perms, &pgoff, &maj, &min, &ino, &n) != 7 || n < 0)
		return -EINVAL;
	if (start >= end || strlen(perms) != 4)
		return -EINVAL;

	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->dev = makedev(maj, min);
	m->inode = ino;
	if (perms[0] == 'r')
		m->prot |= PROT_READ;
	if (perms[1] == 'w')
		m->prot |= PROT_WRITE;
	if (perms[2] == 'x')
		m->prot |= PROT_EXEC;
	if (exec_only && !(m->prot & PROT_EXEC))
		return -EAGAIN;

	path = line + n;
	while (*path == ' ' || *path == '\t')
		path++;
	len = fr_chomp(path, strlen(path));
	if (!len)
		return 0;
	if (len > dlen && !strcmp(path + len - dlen, deleted)) {
		path[len - dlen] = '\0';
		m->deleted = true;
	}
	m->path = strdup(path);
	return m->path ? 0 : -ENOMEM;
}

static int mapping__cmp(const void *a, const void *b)
{
	const struct fr_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void procmaps__free(struct procmaps *pm)
{
	if (!pm)
		return;
	for (size_t i = 0; i < pm->n; i++)
		if (!pm->m[i].path_shared)
			free(pm->m[i].path);
	free(pm->m);
	free(pm);
}

/* Parser state of one /proc/PID/maps read. */
struct fr_mload {
	struct procmaps *pm;
	size_t cap;
	const struct procmaps_bounds *b;	/* NULL: every mapping */
	uint64_t path_bytes;
};

/*
 * procmaps__add_line() - add the mapping of @line, unless it is malformed,
 * or the bounds leave it out (counted). A path equal to the previous
 * mapping's (a file's segments) is shared. Returns 0 or -ENOMEM.
 */
static int procmaps__add_line(void *ctx, char *line)
{
	struct fr_mload *st = ctx;
	struct procmaps *pm = st->pm;
	struct fr_mapping *m, *prev;
	int r;

	r = fr_grow((void **)&pm->m, &st->cap, pm->n + 1, sizeof(*pm->m));
	if (r)
		return r;
	m = &pm->m[pm->n];
	r = mapping__parse(line, m, st->b && st->b->exec_only);
	if (r == -EINVAL || r == -EAGAIN)
		return 0;
	if (r)
		return r;
	prev = pm->n ? m - 1 : NULL;
	if (m->path && prev && prev->path && !strcmp(prev->path, m->path)) {
		free(m->path);
		m->path = prev->path;
		m->path_shared = true;
	}
	if (st->b && (pm->n >= st->b->max_maps ||
		      (m->path && !m->path_shared &&
		       st->path_bytes + strlen(m->path) + 1 > st->b->max_path_bytes))) {
		if (!m->path_shared)
			free(m->path);
		pm->dropped++;
		return 0;
	}
	if (m->path && !m->path_shared)
		st->path_bytes += strlen(m->path) + 1;
	pm->n++;
	return 0;
}

/* procmaps__parse_bounded() - procmaps__parse() within @b (NULL: none). */
static struct procmaps *procmaps__parse_bounded(FILE *f, const struct procmaps_bounds *b)
{
	struct fr_mload st = { .b = b };
	int r;

	st.pm = calloc(1, sizeof(*st.pm));
	if (!st.pm)
		return NULL;
	r = fr_read_lines(f, procmaps__add_line, &st);
	if (!r && st.pm->n)
		qsort(st.pm->m, st.pm->n, sizeof(*st.pm->m), mapping__cmp);
	if (r) {
		procmaps__free(st.pm);
		errno = -r;
		return NULL;
	}
	st.pm->bytes = sizeof(*st.pm) + st.cap * sizeof(*st.pm->m) + st.path_bytes;
	return st.pm;
}

struct procmaps *procmaps__parse(FILE *f)
{
	return procmaps__parse_bounded(f, NULL);
}

struct procmaps *procmaps__read(int pid)
{
	char dir[32];

	snprintf(dir, sizeof(dir), "/proc/%d", pid);
	return procmaps__read_at(dir);
}

struct procmaps *procmaps__read_at(const char *procdir)
{
	return procmaps__read_bounded(procdir, NULL);
}

struct procmaps *procmaps__read_image(const char *procdir)
{
	static const struct procmaps_bounds image = {
		.exec_only = true, .max_maps = FR_IMAGE_MAPS_MAX,
		.max_path_bytes = FR_IMAGE_PATH_BYTES,
	};

	return procmaps__read_bounded(procdir, &image);
}

struct procmaps *procmaps__read_bounded(const char *procdir, const struct procmaps_bounds *b)
{
	struct procmaps *pm;
	char path[PATH_MAX];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/maps", procdir);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	pm = procmaps__parse_bounded(f, b);
	err = errno;
	fclose(f);
	errno = err;
	return pm;
}

const struct fr_mapping *procmaps__find(const struct procmaps *pm,
					uint64_t addr)
{
	size_t lo;

	if (!pm)
		return NULL;
	lo = fr_upper_bound(pm->m, pm->n, sizeof(*pm->m), offsetof(struct fr_mapping, start), addr);
	if (!lo || addr >= pm->m[lo - 1].end)
		return NULL;
	return &pm->m[lo - 1];
}
