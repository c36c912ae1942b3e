// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_attacher.c - first unwind tables (recorder/unwind/attacher.c) on
 * real BPF maps and real processes (children of this test, asleep): an
 * exec's request is served no sooner than FR_ATTACH_EXEC_NS after it, a
 * sample's request is due at once and goes first, and a storm of exec requests that fills the queue does not keep out a
 * process whose samples ask. Needs root (BPF maps); CI runs as root.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "attacher.h"
#include "tables.h"
#include "tap.h"
#include "unwind_maps.h"
#include "util.h"

#define MS		(1000 * 1000ULL)
#define EXEC_DELAY	(10 * MS)	/* FR_ATTACH_EXEC_NS */
#define PATIENCE	(5000 * MS)
#define POLL_NS		(100 * 1000L)

/* When (CLOCK_BOOTTIME ns) (@pid, @start) had a table, polled; 0 if not within PATIENCE. */
static uint64_t when_current(struct unwinder *u, pid_t pid, uint64_t start, uint64_t from)
{
	const struct timespec poll = { 0, POLL_NS };

	while (fr_boottime_ns() - from < PATIENCE) {
		if (unwinder__current(u, (uint32_t)pid, start))
			return fr_boottime_ns();
		nanosleep(&poll, NULL);
	}
	return 0;
}

/* An exec's request: served, but not before its delay (the loader maps libraries first). */
static void test_exec_waits(struct unwinder *u, struct attacher *a)
{
	pid_t c = unwind_sleeper();
	uint64_t t0 = fr_boottime_ns(), t;

	attacher__request_exec(a, (uint32_t)c, unwind_start_of(c));
	t = when_current(u, c, unwind_start_of(c), t0);
	ok(t, "an exec's request is served");
	ok(t && t - t0 >= EXEC_DELAY, "no sooner than 10 ms after it (%.3f ms)",
	   t ? (double)(t - t0) / MS : -1.0);
	unwind_reap(c);
}

/*
 * Two processes asked for by an exec: the second then has a sample
 * waiting, which makes it due at once, and it is served before the first,
 * which waits for its delay; were both due, the demand would still go
 * first.
 */
static void test_demand_first(struct unwinder *u, struct attacher *a)
{
	pid_t idle = unwind_sleeper(), busy = unwind_sleeper();
	uint64_t t0 = fr_boottime_ns(), t_idle, t_busy;

	uint64_t s_idle = unwind_start_of(idle), s_busy = unwind_start_of(busy);

	attacher__request_exec(a, (uint32_t)idle, s_idle);
	attacher__request_exec(a, (uint32_t)busy, s_busy);
	attacher__request(a, (uint32_t)busy, s_busy);
	t_busy = when_current(u, busy, s_busy, t0);
	t_idle = when_current(u, idle, s_idle, t0);
	ok(t_busy && t_idle, "both are served");
	ok(t_busy && t_idle && t_busy < t_idle,
	   "the one with a sample waiting first (%.3f ms, the other %.3f ms)",
	   (double)(t_busy - t0) / MS, (double)(t_idle - t0) / MS);
	unwind_reap(idle);
	unwind_reap(busy);
}

/*
 * 300 exec requests (of no process) fill the queue of 256; a request
 * with a demand then takes the place of one of them and is served (were
 * it dropped instead, nothing would ask again). The storm's overflow and
 * the one displaced are counted.
 */
static void test_exec_storm(struct unwinder *u, struct attacher *a)
{
	struct attacher_stats st0, st;
	pid_t c = unwind_sleeper();
	uint64_t t0, t, asked;

	attacher__stats(a, &st0);
	t0 = fr_boottime_ns();
	for (uint32_t i = 0; i < 300; i++)
		attacher__request_exec(a, 4000000 + i, 9);
	attacher__request(a, (uint32_t)c, unwind_start_of(c));
	asked = fr_boottime_ns() - t0;
	t = when_current(u, c, unwind_start_of(c), t0);
	attacher__stats(a, &st);
	ok(t, "a process whose samples ask is served after an exec storm filled the queue");
	tap_diag("storm: %" PRIu64 " requests, %" PRIu64 " dropped, %" PRIu64 " failed",
		 st.requests - st0.requests, st.dropped - st0.dropped, st.failed - st0.failed);
	/* None is due before 10 ms: asked within them, the queue was full. */
	if (asked < EXEC_DELAY)
		is_int(st.dropped - st0.dropped, 45, "the 44 exec requests beyond the queue's 256 "
		       "and the one displaced are dropped and counted");
	else
		ok(st.dropped - st0.dropped <= 45, "at most 45 dropped (asking took %.1f ms: some "
		   "were served meanwhile)", (double)asked / MS);
	is_int(st.requests - st0.requests, 301, "every request counted");
	unwind_reap(c);
}

int main(void)
{
	struct sampler_unwind_maps m;
	struct unwinder *u = NULL;
	struct attacher *a = NULL;

	if (geteuid()) {
		tap_diag("needs root for BPF maps");
		ok(0, "running as root");
		return tap_done_testing();
	}
	if (!ok(unwind_maps__create(&m, 1 << 20, 256), "BPF maps created: %s", strerror(errno)))
		return tap_done_testing();
	u = unwinder__new(&m);
	a = u ? attacher__new(u) : NULL;
	if (ok(u && a, "an unwinder and its attacher")) {
		test_exec_waits(u, a);
		test_demand_first(u, a);
		test_exec_storm(u, a);
	}
	attacher__free(a);
	unwinder__free(u);
	unwind_maps__close(&m);
	return tap_done_testing();
}
