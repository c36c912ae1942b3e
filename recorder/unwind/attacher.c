// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * attacher.c - first unwind tables, fast. See attacher.h.
 *
 * The queue is a small ring under a mutex; a request for an incarnation
 * asked for recently is ignored (a process without a table asks with each
 * sample until it has one), which a little open-addressed table of recent
 * (pid, start) with their time keeps cheap on the drain's thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attacher.h"
#include "symbols.h"
#include "tables.h"
#include "util.h"

#define FR_ATTACH_QUEUE		256
#define FR_ATTACH_RECENT	512	/* power of two */
#define FR_ATTACH_RETRY_NS	(200 * 1000 * 1000ULL)

struct attach_req {
	uint32_t pid;
	uint64_t start;
};

struct attach_recent {
	uint32_t pid;
	uint64_t start;
	uint64_t at;		/* CLOCK_BOOTTIME ns of the last request */
};

struct attacher {
	struct unwinder *u;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct attach_req q[FR_ATTACH_QUEUE];
	unsigned head, len;
	struct attach_recent recent[FR_ATTACH_RECENT];
	bool stop;
	struct attacher_stats st;
};

/* Maps alone, then the table; the full /proc read comes later, elsewhere. */
static void attach_one(struct attacher *a, const struct attach_req *r)
{
	struct procmaps *pm;
	uint32_t gen;
	char dir[32];
	int err = -ESRCH;

	if (unwinder__current(a->u, r->pid, r->start))
		return;
	gen = unwinder__gen(a->u, r->pid, NULL);
	snprintf(dir, sizeof(dir), "/proc/%u", r->pid);
	/* Most of a fork storm's children are gone by now: no read for them. */
	pm = access(dir, F_OK) ? NULL : procmaps__read_at(dir);
	if (pm) {
		/* Not verified against PID reuse, nor need it be: the BPF side
		 * uses a table only for the incarnation it names. */
		err = unwinder__attach(a->u, r->pid, r->start, gen, dir, pm, NULL);
		procmaps__free(pm);
	}
	pthread_mutex_lock(&a->lock);
	if (err)
		a->st.failed++;
	else
		a->st.attached++;
	pthread_mutex_unlock(&a->lock);
}

static void *attacher_main(void *arg)
{
	struct attacher *a = arg;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		struct attach_req r;

		while (!a->stop && !a->len)
			pthread_cond_wait(&a->more, &a->lock);
		if (a->stop)
			break;
		r = a->q[a->head];
		a->head = (a->head + 1) % FR_ATTACH_QUEUE;
		a->len--;
		pthread_mutex_unlock(&a->lock);
		attach_one(a, &r);
		pthread_mutex_lock(&a->lock);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

struct attacher *attacher__new(struct unwinder *u)
{
	struct attacher *a = calloc(1, sizeof(*a));
	int err;

	if (!a)
		return NULL;
	a->u = u;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->more, NULL);
	err = pthread_create(&a->thread, NULL, attacher_main, a);
	if (err) {
		pthread_cond_destroy(&a->more);
		pthread_mutex_destroy(&a->lock);
		free(a);
		errno = err;
		return NULL;
	}
	return a;
}

void attacher__free(struct attacher *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_signal(&a->more);
	pthread_mutex_unlock(&a->lock);
	if (fr_join_bounded(a->thread, FR_STOP_WAIT_NS))
		return;
	pthread_cond_destroy(&a->more);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

/* Under the lock: was (@pid, @start) asked for within FR_ATTACH_RETRY_NS? Records it. */
static bool recently(struct attacher *a, uint32_t pid, uint64_t start, uint64_t now)
{
	struct attach_recent *e;

	e = &a->recent[fr_hash64(&(uint64_t[2]){ pid, start }, 16, 0) & (FR_ATTACH_RECENT - 1)];
	if (e->pid == pid && e->start == start && now - e->at < FR_ATTACH_RETRY_NS)
		return true;
	*e = (struct attach_recent){ pid, start, now };
	return false;
}

void attacher__request(struct attacher *a, uint32_t pid, uint64_t start)
{
	uint64_t now = fr_boottime_ns();

	pthread_mutex_lock(&a->lock);
	if (!recently(a, pid, start, now)) {
		a->st.requests++;
		if (a->len == FR_ATTACH_QUEUE) {
			a->st.dropped++;
		} else {
			a->q[(a->head + a->len++) % FR_ATTACH_QUEUE] = (struct attach_req){ pid, start };
			pthread_cond_signal(&a->more);
		}
	}
	pthread_mutex_unlock(&a->lock);
}

void attacher__stats(struct attacher *a, struct attacher_stats *st)
{
	pthread_mutex_lock(&a->lock);
	*st = a->st;
	pthread_mutex_unlock(&a->lock);
}
