// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_window.c - the window ring: eviction by time and by space, the pin,
 * and a reader copying events while the writer appends and evicts.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "tap.h"
#include "window.h"

#define SEC 1000000000ULL

struct evicted {
	uint64_t n;
	uint64_t last_ts;
	int out_of_order;
};

static void on_evict(void *ctx, const struct fr_event *ev)
{
	struct evicted *e = ctx;

	if (ev->ts < e->last_ts)
		e->out_of_order++;
	e->last_ts = ev->ts;
	e->n++;
}

static struct fr_event ev_at(uint64_t ts)
{
	struct fr_event e = { .ts = ts, .proc = (uint32_t)ts, .tid = (uint32_t)(ts >> 32),
			      .ref = (uint32_t)(ts * 7), .comm = (uint32_t)(ts ^ 0x5a5a5a5a),
			      .arg = (uint32_t)(ts * 13), .cpu = (uint16_t)ts, .type = 1 };
	return e;
}

/* A copy is consistent if every field derives from its ts as ev_at() made it. */
static int consistent(const struct fr_event *e)
{
	struct fr_event want = ev_at(e->ts);

	return !memcmp(e, &want, sizeof(want));
}

static void test_time_eviction(void)
{
	struct evicted ev = {};
	struct window *w = window__new(1000, 10 * SEC, on_evict, &ev);
	struct fr_event e;

	ok(w != NULL, "window of 1000 slots");
	for (uint64_t t = 1; t <= 30; t++) {
		e = ev_at(t * SEC);
		window__append(w, &e);
	}
	is_int(window__head(w) - window__tail(w), 30, "append alone never ages events out");
	window__expire(w, 30 * SEC);
	/* Span 10 s ending at 30 s keeps [20 s, 30 s]. */
	is_int(window__head(w) - window__tail(w), 11, "11 events within 10 s of the newest");
	is_int(ev.n, 19, "19 aged out through the callback");
	ok(!ev.out_of_order, "evicted oldest first");
	is_int(window__stats(w)->evicted_time, 19, "counted as time evictions");
	is_int(window__stats(w)->evicted_space, 0, "none for space");
	window__expire(w, 35 * SEC);
	is_int(window__head(w) - window__tail(w), 6, "expire(35 s) keeps [25 s, 30 s]");
	window__set_span(w, 2 * SEC);
	window__expire(w, 30 * SEC);
	is_int(window__head(w) - window__tail(w), 3, "a shorter span applies at once");
	window__free(w);
}

static void test_space_eviction(void)
{
	struct evicted ev = {};
	struct window *w = window__new(100, 1000 * SEC, on_evict, &ev);
	struct fr_event e;
	int bad = 0;

	for (uint64_t t = 1; t <= 250; t++) {
		e = ev_at(t);
		window__append(w, &e);
	}
	is_int(window__head(w) - window__tail(w), 100, "full window holds exactly its slots");
	is_int(window__stats(w)->evicted_space, 150, "150 pushed out for space");
	is_int(ev.n, 150, "each through the callback");
	for (uint64_t i = window__tail(w); i < window__head(w); i++)
		if (window__read(w, i, &e) || e.ts != i + 1 || !consistent(&e))
			bad++;
	is_int(bad, 0, "the newest 100 remain, intact and in order");
	is_int(window__read(w, window__tail(w) - 1, &e), -ESTALE, "a recycled index reads as stale");
	is_int(window__read(w, window__head(w), &e), -ENOENT, "an unpublished index reads as absent");
	is_int(window__evict_oldest(w), 0, "evict_oldest makes room");
	is_int(window__head(w) - window__tail(w), 99, "one fewer");
	while (!window__evict_oldest(w))
		;
	is_int(window__evict_oldest(w), -ENOENT, "empty window has nothing to evict");
	window__free(w);
}

static void test_pin(void)
{
	struct window *w = window__new(50, 10 * SEC, NULL, NULL);
	struct fr_event e;
	uint64_t pin;

	for (uint64_t t = 1; t <= 20; t++) {
		e = ev_at(t * SEC);
		window__append(w, &e);
	}
	pin = window__lower_bound(w, 15 * SEC);
	is_int(pin, 14, "lower_bound finds the first event at or after 15 s");
	is_int(window__lower_bound(w, 100 * SEC), window__head(w), "past the end: head");
	window__pin(w, pin);
	window__expire(w, 40 * SEC);
	is_int(window__tail(w), pin, "time eviction stops at the pin");
	for (uint64_t t = 41; t <= 100; t++) {
		e = ev_at(t * SEC);
		window__append(w, &e);
		window__expire(w, t * SEC);
	}
	ok(window__tail(w) > pin, "space eviction overrides the pin (the writer never waits)");
	ok(window__stats(w)->evicted_pinned > 0, "and counts what it took from the reader");
	window__unpin(w);
	window__expire(w, 100 * SEC);
	is_int(window__head(w) - window__tail(w), 11, "unpinned, time eviction resumes");
	window__free(w);
}

struct shared {
	struct window *w;
	atomic_bool done;
	uint64_t good, stale, torn;
};

/* Reader: keep copying a sliding range near the tail, where recycling races. */
static void *reader(void *arg)
{
	struct shared *s = arg;
	struct fr_event e;

	while (!atomic_load(&s->done)) {
		uint64_t tail = window__tail(s->w), head = window__head(s->w);

		for (uint64_t i = tail; i < head && i < tail + 64; i++) {
			int r = window__read(s->w, i, &e);

			if (r == -ESTALE) {
				s->stale++;
			} else if (!r) {
				if (e.ts != i + 1 || !consistent(&e))
					s->torn++;
				else
					s->good++;
			}
		}
	}
	return NULL;
}

static void test_concurrent_reader(void)
{
	struct shared s = { .w = window__new(256, 1000 * SEC, NULL, NULL) };
	struct fr_event e;
	pthread_t th;

	pthread_create(&th, NULL, reader, &s);
	for (uint64_t t = 1; t <= 3000000; t++) {
		e = ev_at(t);
		window__append(s.w, &e);
	}
	atomic_store(&s.done, true);
	pthread_join(th, NULL);
	tap_diag("reader: %llu good, %llu stale, %llu torn", (unsigned long long)s.good,
		 (unsigned long long)s.stale, (unsigned long long)s.torn);
	ok(s.good > 0, "the reader copied events while the writer ran");
	is_int(s.torn, 0, "no copy that validated was torn or misplaced");
	window__free(s.w);
}

int main(void)
{
	test_time_eviction();
	test_space_eviction();
	test_pin();
	test_concurrent_reader();
	ok(window__new(1, SEC, NULL, NULL) == NULL && errno == EINVAL, "a 1-slot window is refused");
	return tap_done_testing();
}
