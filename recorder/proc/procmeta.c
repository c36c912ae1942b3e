// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * procmeta.c - the facts of an incarnation: refcounting and a fork's
 * inheritance. See procmeta.h.
 */
#include <stdlib.h>
#include <string.h>

#include "procmeta.h"
#include "util.h"

void proc_image__put(struct proc_image *img)
{
	if (!img || atomic_fetch_sub(&img->refs, 1) != 1)
		return;
	for (size_t i = 0; img->syms && img->maps && i < img->maps->n; i++)
		symcache__put(img->syms[i]);
	if (img->sc)
		symcache__charge_image(img->sc, -(int64_t)img->bytes, -1, 0);
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
	proc_image__put(m->img);
	free(m);
}

const struct proctable_meta_ops proc_meta__ops = {
	.get = proc_meta__get,
	.put = proc_meta__put,
};

/* The facts a fork's child and a re-imaged process keep of @src. */
static void copy_facts(struct proc_meta *m, const struct proc_meta *src)
{
	m->stamp = src->stamp;
	m->state = src->state;
	m->has_uid = src->has_uid;
	m->uid = src->uid;
	m->rss = src->rss;
	m->exe = src->exe ? strdup(src->exe) : NULL;
	m->cmdline = src->cmdline ? strdup(src->cmdline) : NULL;
	m->cgroup = src->cgroup ? strdup(src->cgroup) : NULL;
	m->memcg = src->memcg ? strdup(src->memcg) : NULL;
	m->container = src->container ? strdup(src->container) : NULL;
	m->cgroup_id = src->cgroup_id;
}

/*
 * proc_meta__with_image() - @old's facts (none if NULL) with image @img in
 * place of its own; the new meta takes the caller's reference on @img.
 * Begun when @old was, else at @begun. Returns NULL and sets errno.
 */
struct proc_meta *proc_meta__with_image(const struct proc_meta *old, struct proc_image *img,
					uint64_t begun)
{
	struct proc_meta *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	atomic_init(&m->refs, 1);
	m->begun = begun;
	m->stamp = begun;
	if (old) {
		copy_facts(m, old);
		m->begun = old->begun;
		m->ppid = old->ppid;
		m->nspid = old->nspid;
		m->ugen = old->ugen;
		if (old->nthreads)
			m->threads = calloc(old->nthreads, sizeof(*m->threads));
		if (m->threads) {
			memcpy(m->threads, old->threads, old->nthreads * sizeof(*m->threads));
			m->nthreads = old->nthreads;
		}
	}
	m->img = img;
	return m;
}

/*
 * proc_meta__inherit() - the facts of fork's child (@pid, @start) from its
 * parent's: the same image (shared), executable, command line and cgroup,
 * one thread. They describe the child as it was forked, whenever the
 * parent's were read: begun no later than its fork (@start), so that an
 * exec of the child makes them its previous era's even when the parent's
 * read came after it (under load, perf's facts were read after its
 * child's exec of python3, and python3's frames were named after perf's
 * libraries). Returns NULL and sets errno.
 */
struct proc_meta *proc_meta__inherit(const struct proc_meta *parent, uint32_t pid,
				     uint64_t start)
{
	struct proc_meta *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	atomic_init(&m->refs, 1);
	m->begun = FR_MIN(parent->begun, start);
	copy_facts(m, parent);	/* nspid: the child's own, unknown */
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
