// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * encstate.c - what the encoder adds to the dump model it fills
 * (encstate.h): strings, incarnations with their facts, threads and stacks,
 * each once, by its identity.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "contract.h"
#include "drain.h"
#include "encstate.h"
#include "procinfo.h"
#include "util.h"

/* dump_map__grow() - the slow path of dump_map__slot(): @m grown with zeros to hold @i. */
uint32_t *dump_map__grow(struct dump_map *m, uint32_t i)
{
	uint32_t old = m->cap;

	if (fr_grow32((void **)&m->v, &m->cap, i + 1, sizeof(*m->v)))
		return NULL;
	memset(m->v + old, 0, (m->cap - old) * sizeof(*m->v));
	return &m->v[i];
}

/* Intern a string into the dump's string table; *idx gets its index. */
int encoder__add_str(struct encoder *e, const char *s, size_t len, uint32_t *idx)
{
	struct fr_dump *d = e->d;
	struct str_key key = { .s = s, .len = len };
	const uint32_t *found = fr_hashmap__find(&e->str_of, &key);
	char *copy;
	uint32_t i;
	int err;

	if (found) {
		*idx = *found;
		return 0;
	}
	/*
	 * Two arrays share str_cap: it is raised only once both have grown,
	 * so a failed growth leaves neither shorter than it claims.
	 */
	if (d->nstr + 1 > e->str_cap) {
		uint32_t c1 = e->str_cap, c2 = e->str_cap;

		err = fr_grow32((void **)&d->str, &c1, d->nstr + 1, sizeof(*d->str));
		if (!err)
			err = fr_grow32((void **)&d->str_len, &c2, d->nstr + 1, sizeof(*d->str_len));
		if (err)
			return err;
		e->str_cap = FR_MIN(c1, c2);
	}
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = 0;
	i = d->nstr;
	key.s = copy;
	err = fr_hashmap__insert(&e->str_of, &key, &i);
	if (err) {
		free(copy);
		return err;
	}
	d->str[i] = copy;
	d->str_len[i] = len;
	d->nstr++;
	*idx = i;
	return 0;
}

int encoder__add_cstr(struct encoder *e, const char *s, uint32_t *idx)
{
	if (!s) {
		*idx = 0;
		return 0;
	}
	return encoder__add_str(e, s, strlen(s), idx);
}

/* The dump string of window string @id. */
int encoder__str_of(struct encoder *e, uint32_t id, uint32_t *idx)
{
	char buf[FR_PATH_LEN + 1];
	size_t len;
	int err;

	if (!id) {
		*idx = 0;
		return 0;
	}
	if (map_get(&e->str_of_id, id, idx))
		return 0;
	len = intern__copy(e->in.t->strs, id, buf, FR_PATH_LEN);
	err = encoder__add_str(e, buf, FR_MIN(len, (size_t)FR_PATH_LEN), idx);
	return err ? err : map_put(&e->str_of_id, id, *idx);
}

/* The dump process of incarnation (@pid, @start) into *@idx; false when none. */
bool encoder__proc_of_incarnation(struct encoder *e, uint32_t pid, uint64_t start, uint32_t *idx)
{
	struct incarnation k = { pid, start };
	const uint32_t *v = fr_hashmap__find(&e->proc_of_id, &k);

	if (v)
		*idx = *v;
	return v != NULL;
}

/* A new dump process for (@pid, @start). */
int encoder__new_proc(struct encoder *e, uint32_t pid, uint64_t start, uint32_t *idx)
{
	struct fr_dump *d = e->d;
	int err;

	err = fr_grow32((void **)&d->proc, &e->proc_cap, d->nproc + 1, sizeof(*d->proc));
	if (err)
		return err;
	*idx = d->nproc++;
	memset(&d->proc[*idx], 0, sizeof(d->proc[0]));
	d->proc[*idx].pid = pid;
	d->proc[*idx].start = start;
	return fr_hashmap__insert(&e->proc_of_id, &(struct incarnation){ pid, start }, idx);
}

/*
 * Record thread @tid of dump process @idx once, named by dump string
 * @name; a later name wins. The hints by tid spare most events a lookup
 * (their key is the whole identity: a hint of another thread is a miss).
 */
int encoder__add_thread(struct encoder *e, uint32_t idx, uint32_t tid, uint32_t name)
{
	struct thread_hint *h = &e->thread_hint[tid & (FR_THREAD_HINTS - 1)];
	struct fr_dump *d = e->d;
	uint64_t key = (uint64_t)idx << 32 | tid;	/* exact: both are 32 bits */
	uint32_t t;
	int err;

	if (h->t && h->key == key) {
		d->thread[h->t - 1].name = name;
		return 0;
	}
	if (!id_get(&e->thread_of, key, &t)) {
		err = fr_grow32((void **)&d->thread, &e->thread_cap, d->nthread + 1,
				sizeof(*d->thread));
		if (err)
			return err;
		t = d->nthread++;
		d->thread[t] = (struct fr_dump_thread){ .proc = idx, .tid = tid };
		err = id_put(&e->thread_of, key, t);
		if (err)
			return err;
	}
	d->thread[t].name = name;
	*h = (struct thread_hint){ .key = key, .t = t + 1 };
	return 0;
}

static int add_threads(struct encoder *e, uint32_t idx, const struct proc_meta *m)
{
	uint32_t name;
	int err = 0;

	for (uint32_t i = 0; i < m->nthreads && !err; i++) {
		err = encoder__add_cstr(e, m->threads[i].name, &name);
		if (!err)
			err = encoder__add_thread(e, idx, m->threads[i].tid, name);
	}
	return err;
}

/*
 * Fill dump process @idx from /proc facts @m (consumed: its reference is
 * put). Facts read while the process lived stand for processes that have
 * exited since; a later read (the snapshot) overrides them.
 */
int encoder__proc_facts(struct encoder *e, uint32_t idx, struct proc_meta *m)
{
	struct fr_dump_proc *dp = &e->d->proc[idx];
	int err = 0;

	if (!m)
		return 0;
	if (m->exe)
		err = encoder__add_cstr(e, m->exe, &dp->exe);
	/* Facts read before a reload turned [privacy] cmdline off stay unwritten. */
	if (!err && m->cmdline && !(e->in.meta_what & FR_META_NO_CMDLINE))
		err = encoder__add_cstr(e, m->cmdline, &dp->cmdline);
	if (!err && m->cgroup)
		err = encoder__add_cstr(e, m->cgroup, &dp->cgroup);
	if (!err && m->memcg)
		err = encoder__add_cstr(e, m->memcg, &dp->memcg);
	if (!err && m->container)
		err = encoder__add_cstr(e, m->container, &dp->container);
	if (m->nspid)
		dp->nspid = m->nspid;
	if (m->cgroup_id)
		dp->cgroup_id = m->cgroup_id;
	if (!err)
		err = add_threads(e, idx, m);
	if (!(dp->flags & FR_DPROC_EXITED)) {
		dp->state = (uint8_t)m->state;
		dp->rss = m->rss;
	}
	dp->stamp = m->stamp;
	dp->ppid = dp->ppid ? dp->ppid : m->ppid;
	dp->flags |= FR_DPROC_PROCFS;
	proc_meta__put(m);
	return err;
}

/* The dump process of process table @slot, created from the table entry. */
int encoder__proc_of(struct encoder *e, uint32_t slot, uint32_t *idx)
{
	struct fr_dump_proc *dp;
	struct fr_proc p;
	int err;

	if (map_get(&e->proc_of_slot, slot, idx))
		return 0;
	err = proctable__read(e->in.t->procs, slot, &p);
	if (err)
		return err;
	err = encoder__new_proc(e, p.pid, p.start, idx);
	if (err)
		return err;
	dp = &e->d->proc[*idx];
	dp->ppid = p.ppid;
	dp->flags = FR_DPROC_EVENTS;
	/* The table may already know of an exit after the freeze: not ours. */
	if ((p.flags & FR_PROC_EXITED) && p.exit_ts <= e->d->win.end) {
		dp->flags |= FR_DPROC_EXITED;
		dp->exit_ts = p.exit_ts;
		dp->exit_code = p.exit_code;
	}
	if (p.flags & FR_PROC_EXECED)
		dp->flags |= FR_DPROC_EXECED;
	err = encoder__add_cstr(e, p.comm, &dp->comm);
	if (!err)
		err = encoder__proc_facts(e, *idx, proctable__meta(e->in.t->procs, slot, p.pid, p.start));
	return err ? err : map_put(&e->proc_of_slot, slot, *idx);
}

/*
 * The dump's index of window stack @id, first seen at @ts, made on first
 * sight; @cpu: a CPU sample's (counted: symbolized first, and its frames'
 * lines looked up by weight, see symbolize()).
 */
int encoder__stack_of(struct encoder *e, uint32_t id, uint64_t ts, bool cpu, uint32_t *idx)
{
	struct fr_dump *d = e->d;
	uint32_t cap, cap2, cap3;
	int err;

	if (map_get(&e->stack_of_id, id, idx)) {
		e->stack_samples[*idx] += cpu;
		return 0;
	}
	cap = cap2 = cap3 = e->stack_cap;
	err = fr_grow32((void **)&d->stack, &e->stack_cap, d->nstack + 1, sizeof(*d->stack));
	if (!err)
		err = fr_grow32((void **)&e->stack_ids, &cap, d->nstack + 1, sizeof(*e->stack_ids));
	if (!err)
		err = fr_grow32((void **)&e->stack_ts, &cap2, d->nstack + 1, sizeof(*e->stack_ts));
	if (!err)
		err = fr_grow32((void **)&e->stack_samples, &cap3, d->nstack + 1,
				sizeof(*e->stack_samples));
	if (err)
		return err;
	*idx = d->nstack++;
	memset(&d->stack[*idx], 0, sizeof(d->stack[0]));
	e->stack_ids[*idx] = id;
	e->stack_ts[*idx] = ts;
	e->stack_samples[*idx] = cpu;
	return map_put(&e->stack_of_id, id, *idx);
}

