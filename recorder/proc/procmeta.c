// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * procmeta.c - the facts of an incarnation: refcounting and a fork's
 * inheritance. See procmeta.h.
 */
#include <stdlib.h>
#include <string.h>

#include "procmeta.h"

/* Drop a reference to @img; the last one frees it. */
static void image_put(struct proc_image *img)
{
	if (!img || atomic_fetch_sub(&img->refs, 1) != 1)
		return;
	procmaps__free(img->maps);
	free(img->syms);
	free(img);
}

void proc_meta__get(struct proc_meta *m)
{
	if (m)
		atomic_fetch_add(&m->refs, 1);
}

void proc_meta__put(struct proc_meta *m)
{
	if (!m || atomic_fetch_sub(&m->refs, 1) != 1)
		return;
	free(m->exe);
	free(m->cmdline);
	free(m->cgroup);
	free(m->memcg);
	free(m->container);
	free(m->threads);
	image_put(m->img);
	free(m);
}

/*
 * proc_meta__inherit() - the facts of a fork's child @pid from its
 * parent's: the same image (shared), executable, command line and cgroup,
 * one thread. Taken when the parent's were read; the child's exec makes
 * them its previous era's. Returns NULL and sets errno.
 */
struct proc_meta *proc_meta__inherit(const struct proc_meta *parent, uint32_t pid)
{
	struct proc_meta *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	atomic_init(&m->refs, 1);
	m->begun = parent->begun;
	m->stamp = parent->stamp;
	m->state = parent->state;
	m->has_uid = parent->has_uid;
	m->uid = parent->uid;
	m->rss = parent->rss;
	m->exe = parent->exe ? strdup(parent->exe) : NULL;
	m->cmdline = parent->cmdline ? strdup(parent->cmdline) : NULL;
	m->cgroup = parent->cgroup ? strdup(parent->cgroup) : NULL;
	m->memcg = parent->memcg ? strdup(parent->memcg) : NULL;
	m->container = parent->container ? strdup(parent->container) : NULL;
	m->cgroup_id = parent->cgroup_id;	/* nspid: the child's own, unknown */
	m->threads = calloc(1, sizeof(*m->threads));
	if (m->threads) {
		m->threads[0].tid = pid;
		for (uint32_t i = 0; i < parent->nthreads; i++)
			if (parent->threads[i].tid == m->threads[0].tid || !i)
				memcpy(m->threads[0].name, parent->threads[i].name, sizeof(m->threads[0].name));
		m->nthreads = 1;
	}
	m->img = parent->img;
	if (m->img)
		atomic_fetch_add(&m->img->refs, 1);
	return m;
}
