// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * worker.c - a background thread, its lock and wake-up, stopped within a
 * bound (worker.h).
 */
#include <errno.h>
#include <semaphore.h>
#include <time.h>

#include "util.h"
#include "worker.h"

/* worker__init() - the lock and the wake-up of @w, not yet a thread. 0 or -errno. */
int worker__init(struct worker *w)
{
	pthread_condattr_t ca;
	int err;

	*w = (struct worker){};
	err = pthread_mutex_init(&w->lock, NULL);
	if (err)
		return -err;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	err = pthread_cond_init(&w->more, &ca);
	pthread_condattr_destroy(&ca);
	if (err) {
		pthread_mutex_destroy(&w->lock);
		return -err;
	}
	w->inited = true;
	return 0;
}

static int (*thread_init)(void *);
static void *thread_init_ctx;

void worker__set_thread_init(int (*fn)(void *), void *ctx)
{
	thread_init = fn;
	thread_init_ctx = ctx;
}

/* What a new thread runs first; worker__start() waits for its verdict. */
struct start {
	const char *name;
	void *(*fn)(void *);
	void *arg;
	sem_t done;
	int err;
};

static void *start_main(void *p)
{
	struct start *st = p;
	void *(*fn)(void *) = st->fn;
	void *arg = st->arg;
	bool ok;

	/* Named, so that top -H, perf and our own dumps tell the threads apart. */
	pthread_setname_np(pthread_self(), st->name);
	st->err = thread_init ? thread_init(thread_init_ctx) : 0;
	ok = !st->err;
	sem_post(&st->done);	/* @st is the starter's: gone from here on */
	return ok ? fn(arg) : NULL;
}

/*
 * worker__start() - run @fn(@arg) on the thread of @w (after
 * worker__init()), named @name (at most 15 bytes: the kernel's comm),
 * once the thread has run the init of worker__set_thread_init(), if any.
 * Returns 0, or -errno (the init's too: then @fn never runs).
 */
int worker__start(struct worker *w, const char *name, void *(*fn)(void *), void *arg)
{
	struct start st = { .name = name, .fn = fn, .arg = arg };
	int err;

	if (sem_init(&st.done, 0, 0))
		return -errno;
	err = pthread_create(&w->thread, NULL, start_main, &st);
	if (err) {
		sem_destroy(&st.done);
		return -err;
	}
	while (sem_wait(&st.done) && errno == EINTR)
		;
	sem_destroy(&st.done);
	if (st.err) {
		pthread_join(w->thread, NULL);
		return st.err;
	}
	w->running = true;
	return 0;
}

void worker__lock(struct worker *w)
{
	pthread_mutex_lock(&w->lock);
}

/* worker__trylock() - take the lock if free: whether it was taken. */
bool worker__trylock(struct worker *w)
{
	return !pthread_mutex_trylock(&w->lock);
}

void worker__unlock(struct worker *w)
{
	pthread_mutex_unlock(&w->lock);
}

/* worker__wake() - under the lock: there is work, wake the thread. */
void worker__wake(struct worker *w)
{
	pthread_cond_signal(&w->more);
}

/*
 * worker__wait() - under the lock, on the thread: sleep until woken, stopped,
 * or CLOCK_BOOTTIME @until (UINT64_MAX: no deadline). It may return early:
 * the caller checks its queue and worker__stopping() again.
 */
void worker__wait(struct worker *w, uint64_t until)
{
	uint64_t now, at;
	struct timespec ts;

	if (until == UINT64_MAX) {
		pthread_cond_wait(&w->more, &w->lock);
		return;
	}
	/* The condition waits on CLOCK_MONOTONIC: the same span from now. */
	now = fr_boottime_ns();
	at = fr_clock_ns(CLOCK_MONOTONIC) + (until > now ? until - now : 0);
	ts.tv_sec = (time_t)(at / FR_NSEC_PER_SEC);
	ts.tv_nsec = (long)(at % FR_NSEC_PER_SEC);
	pthread_cond_timedwait(&w->more, &w->lock, &ts);
}

/* worker__stopping() - under the lock: has a stop been asked? */
bool worker__stopping(const struct worker *w)
{
	return w->stop;
}

/*
 * worker__stop() - ask the thread to stop and join it within @wait_ns.
 * Returns 0 (joined, or never started), or -ETIMEDOUT: the thread still runs
 * (stuck in a read no check could bound) and is left behind, and its owner
 * must then leave alone what it uses, worker__fini() included.
 */
int worker__stop(struct worker *w, uint64_t wait_ns)
{
	if (!w->running)
		return 0;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->more);
	pthread_mutex_unlock(&w->lock);
	if (fr_join_bounded(w->thread, wait_ns))
		return -ETIMEDOUT;
	w->running = false;
	return 0;
}

/* worker__fini() - release the lock and wake-up of a stopped @w. */
void worker__fini(struct worker *w)
{
	if (!w->inited)
		return;
	pthread_cond_destroy(&w->more);
	pthread_mutex_destroy(&w->lock);
	w->inited = false;
}
