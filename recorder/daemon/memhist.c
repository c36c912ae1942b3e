// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * memhist.c - the memory history. See memhist.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "meminfo.h"
#include "memhist.h"
#include "procmeta.h"
#include "util.h"

/* A cgroup v2 directory given in a trigger, as a path under the v2 mount. */
static char *relative(const char *dir)
{
	char root[PATH_MAX];
	size_t n;

	if (cgroup__v2_root(root, sizeof(root)))
		return NULL;
	n = strlen(root);
	if (strncmp(dir, root, n) || (dir[n] && dir[n] != '/'))
		return NULL;
	return strdup(dir[n] ? dir + n : "/");
}

int memhist__init(struct memhist *mh, const struct fr_config *cfg)
{
	bool v1 = false;
	char root[PATH_MAX];

	memset(mh, 0, sizeof(*mh));
	mh->max = cfg->memory_cgroups;
	/* On a v1 memory hierarchy, v2 directories name no memory cgroup. */
	if (cgroup__memory_root(root, sizeof(root), &v1) || v1)
		return 0;
	for (size_t i = 0; i < cfg->ntriggers; i++) {
		const char *cg = cfg->triggers[i].cgroup;
		char **n, *rel;

		if (!cg || !(rel = relative(cg)))
			continue;
		n = realloc(mh->watched, (mh->nwatched + 1) * sizeof(*n));
		if (!n) {
			free(rel);
			return -ENOMEM;
		}
		mh->watched = n;
		mh->watched[mh->nwatched++] = rel;
	}
	return 0;
}

void memhist__fini(struct memhist *mh)
{
	if (!mh)
		return;
	for (size_t i = 0; i < mh->nwatched; i++)
		free(mh->watched[i]);
	free(mh->watched);
	memset(mh, 0, sizeof(*mh));
}

/* The distinct memory cgroups of one second, at most max of them. */
struct cg_set {
	char **path;
	uint32_t n, max;
	uint64_t skipped;
	bool nomem;
};

/* Add a copy of @path unless it is there; may run under the table lock. */
static void set_add(struct cg_set *s, const char *path)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (!strcmp(s->path[i], path))
			return;
	if (s->n == s->max) {
		s->skipped++;
		return;
	}
	s->path[s->n] = strdup(path);
	if (s->path[s->n])
		s->n++;
	else
		s->nomem = true;
}

static void add_meta(void *ctx, const struct proc_meta *m)
{
	struct cg_set *s = ctx;

	if (m->memcg && m->memcg[0])
		set_add(s, m->memcg);
}

/*
 * collect() - the cgroups to read: watched ones first, then those the
 * process table's entries are in. A path met again past max counts as
 * skipped again: the count is of entries whose cgroup was not read.
 */
static int collect(struct memhist *mh, struct drain *d, struct cg_set *s)
{
	const struct drain_tables *t = drain__tables(d);

	s->path = calloc(mh->max, sizeof(*s->path));
	if (!s->path)
		return -ENOMEM;
	s->max = mh->max;
	for (size_t i = 0; i < mh->nwatched; i++)
		set_add(s, mh->watched[i]);
	proctable__each_meta(t->procs, add_meta, s);
	return 0;
}

void memhist__tick(struct memhist *mh, struct drain *d)
{
	struct fr_dump_memsys sys;
	struct cg_set s = {};
	uint64_t now = fr_boottime_ns();

	mh->st.reads++;
	if (!meminfo__read(&sys))
		drain__add_memsys(d, now, &sys);
	if (!mh->max || collect(mh, d, &s))
		goto out;
	mh->st.skipped += s.skipped;
	mh->st.last_count = s.n;
	for (uint32_t i = 0; i < s.n; i++) {
		struct fr_dump_memcg mc;

		if (cgroup__read_memory(s.path[i], &mc)) {
			mh->st.failed++;
			continue;
		}
		/* Stamped when read: each reading enters the window in time order. */
		drain__add_memcg(d, fr_boottime_ns(), s.path[i], &mc);
		mh->st.memcgs++;
	}
out:
	for (uint32_t i = 0; s.path && i < s.n; i++)
		free(s.path[i]);
	free(s.path);
}

const struct memhist_stats *memhist__stats(const struct memhist *mh)
{
	return &mh->st;
}
