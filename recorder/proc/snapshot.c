// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * snapshot.c - live processes at dump time. See snapshot.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"
#include "util.h"

#define FR_PF_KTHREAD	0x00200000

static int add_task(void *ctx, const struct fr_rec_task *t)
{
	struct snapshot *s = ctx;
	struct snap_proc *p;

	if (t->h.tid != t->h.tgid) {
		/* A thread: count it on its leader, listed just before. */
		if (s->n && s->p[s->n - 1].pid == t->h.tgid)
			s->p[s->n - 1].nthreads++;
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct snap_proc *n = realloc(s->p, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->p = n;
		s->cap = cap;
	}
	p = &s->p[s->n++];
	memset(p, 0, sizeof(*p));
	p->pid = t->h.tgid;
	p->ppid = t->ppid;
	p->start = t->h.start;
	p->seen = t->h.ts;
	p->nthreads = 1;
	fr_strlcpy(p->comm, t->h.comm, sizeof(p->comm));
	p->oom_score_adj = t->oom_score_adj;
	p->pgtables = t->pgtables;
	memcpy(p->rss, t->rss, sizeof(p->rss));
	p->has_mem = !(t->flags & FR_PF_KTHREAD);
	if (t->flags & FR_PF_KTHREAD)
		p->flags |= FR_SNAP_KTHREAD;
	return 0;
}

/*
 * snapshot__take() - list live processes with the task iterator, then read
 * each one's /proc facts, verified (@what: FR_META_* flags). A process that exits in between keeps
 * its iterator fields and is flagged FR_SNAP_GONE. Returns 0 or -errno.
 */
int snapshot__take(struct snapshot *s, struct sampler *sm, unsigned what)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->taken = fr_boottime_ns();
	if (!sm)
		return 0;	/* offline (fr-bench-ingest --dump): no live processes */
	err = sampler__list_tasks(sm, add_task, s);
	if (err)
		return err;
	for (size_t i = 0; i < s->n; i++) {
		struct snap_proc *p = &s->p[i];

		if (proc_meta__read(p->pid, p->start, NULL, what, 0, &p->meta))
			p->flags |= FR_SNAP_GONE;
	}
	return 0;
}

void snapshot__free(struct snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		proc_meta__put(s->p[i].meta);
	free(s->p);
	memset(s, 0, sizeof(*s));
}
