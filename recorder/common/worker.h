/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * worker.h - one background thread with its lock, its wake-up and a stop
 * bounded in time: what the /proc worker (procinfo), the unwind attacher and
 * the dump thread each run on. The owner keeps its queue under the
 * worker's lock; the thread sleeps in worker__wait() until woken, stopped
 * or a deadline.
 */
#ifndef FR_WORKER_H
#define FR_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t more;		/* waits on CLOCK_MONOTONIC */
	bool stop;			/* under lock */
	bool running;			/* the thread was started and not joined */
	bool inited;
};

int worker__init(struct worker *w);
int worker__start(struct worker *w, const char *name, void *(*fn)(void *), void *arg);
/*
 * worker__set_thread_init() - @fn(@ctx) runs first on every worker thread
 * started from now on; when it fails (-errno) the thread ends and
 * worker__start() returns that. The daemon drops its capabilities there:
 * they are a thread's own, and a thread started before the main thread
 * dropped them would keep them all.
 */
void worker__set_thread_init(int (*fn)(void *), void *ctx);
void worker__lock(struct worker *w);
bool worker__trylock(struct worker *w);
void worker__unlock(struct worker *w);
void worker__wake(struct worker *w);
void worker__wait(struct worker *w, uint64_t until);
bool worker__stopping(const struct worker *w);
int worker__stop(struct worker *w, uint64_t wait_ns);
void worker__fini(struct worker *w);

#endif
