// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_window.c - the window ring: eviction by time and by space, the pin,
 * a reader copying events while the writer appends and evicts, and the
 * ring's memory following its contents, not its cap.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "util.h"
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

/* This process's resident anonymous memory, KiB (RssAnon), -1 if unreadable. */
static long rss_anon_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/*
 * Feed @w @n events at @rate per second of its clock from *@t on, expiring
 * per batch of 256 as the drain does. Returns the most events it held.
 */
static uint64_t feed(struct window *w, uint64_t *t, uint64_t n, uint64_t rate)
{
	uint64_t most = 0;
	struct fr_event e;

	for (uint64_t i = 0; i < n; i++) {
		*t += SEC / rate;
		e = ev_at(*t);
		window__append(w, &e);
		if (!(i % 256)) {
			window__expire(w, *t);
			most = FR_MAX(most, window__head(w) - window__tail(w));
		}
	}
	return most;
}

/*
 * A 256 MiB daemon's ring (3 M events) holding 1 s of 20,000 events a
 * second laps it many times: what is resident stays near the 20,000 events
 * (625 KiB), not the 94 MiB the laps walk through. A burst of 10 times the
 * rate grows it without loss; 10 s after it, the pages it took are given
 * back, once.
 */
static void test_footprint(void)
{
	const size_t cap = 3096576;
	struct window *w = window__new(cap, 1 * SEC, NULL, NULL);
	struct window_footprint fp;
	struct window_stats st0;
	uint64_t t = SEC, most;
	long rss0 = rss_anon_kib(), rss1;

	if (!ok(w != NULL, "footprint: a ring of %zu events", cap))
		return;
	ok(window__budget(cap) <= cap * sizeof(struct fr_event) + 3 * 65536,
	   "footprint: it maps at most 3 chunks over its cap (%zu bytes)", window__budget(cap));
	feed(w, &t, 5 * cap, 20000);	/* 5 laps of the cap's slots */
	window__footprint(w, &fp);
	rss1 = rss_anon_kib();
	tap_diag("steady: live %llu KiB, active %llu KiB, resident %llu KiB; RssAnon +%ld KiB",
		 (unsigned long long)fp.live_bytes >> 10, (unsigned long long)fp.active_bytes >> 10,
		 (unsigned long long)fp.resident_bytes >> 10, rss1 - rss0);
	ok(window__stats(w)->appended == 5 * cap, "footprint: 5 laps of its slots appended");
	ok(fp.resident_bytes <= 2 * fp.live_bytes + 4 * fp.chunk_bytes,
	   "footprint: resident is within 2x the live events plus 4 chunks (%llu <= 2 x %llu + 4 x %llu)",
	   (unsigned long long)fp.resident_bytes, (unsigned long long)fp.live_bytes,
	   (unsigned long long)fp.chunk_bytes);
	ok(rss0 >= 0 && rss1 - rss0 < 4096,
	   "footprint: the process's RssAnon grew %ld KiB, not the ring's %zu KiB", rss1 - rss0,
	   cap * sizeof(struct fr_event) >> 10);
	st0 = *window__stats(w);
	feed(w, &t, 20 * 20000, 20000);
	ok(window__stats(w)->chunks_grown == st0.chunks_grown,
	   "footprint: at a steady rate no page is touched anew (%llu chunks grown)",
	   (unsigned long long)(window__stats(w)->chunks_grown - st0.chunks_grown));

	/* A burst: 10x for 5 s, then back. */
	most = feed(w, &t, 5 * 200000, 200000);
	window__footprint(w, &fp);
	ok(window__stats(w)->evicted_space == 0 && most >= 190000,
	   "burst: the ring grew to hold it without loss (%llu events at most, %llu evicted for space)",
	   (unsigned long long)most, (unsigned long long)window__stats(w)->evicted_space);
	ok(fp.resident_bytes >= 190000 * sizeof(struct fr_event),
	   "burst: and its pages are resident (%llu KiB)", (unsigned long long)fp.resident_bytes >> 10);
	st0 = *window__stats(w);
	feed(w, &t, 9 * 20000, 20000);
	window__footprint(w, &fp);
	ok(window__stats(w)->chunks_released == st0.chunks_released,
	   "burst: 9 s after it nothing is given back yet (hysteresis: %llu KiB resident)",
	   (unsigned long long)fp.resident_bytes >> 10);
	feed(w, &t, 3 * 20000, 20000);
	window__footprint(w, &fp);
	ok(window__stats(w)->chunks_released > st0.chunks_released &&
	   fp.resident_bytes <= 2 * fp.live_bytes + 4 * fp.chunk_bytes,
	   "burst: 12 s after it the ring is back near its need (%llu KiB resident, %llu KiB live, "
	   "%llu chunks given back in %llu trims)", (unsigned long long)fp.resident_bytes >> 10,
	   (unsigned long long)fp.live_bytes >> 10,
	   (unsigned long long)(window__stats(w)->chunks_released - st0.chunks_released),
	   (unsigned long long)(window__stats(w)->shrinks - st0.shrinks));
	ok(window__stats(w)->release_failed == 0, "burst: no release failed");
	feed(w, &t, 10 * 20000, 20000);
	st0 = *window__stats(w);
	feed(w, &t, 30 * 20000, 20000);
	ok(window__stats(w)->chunks_grown == st0.chunks_grown &&
	   window__stats(w)->chunks_released == st0.chunks_released,
	   "burst: after it, steady again: nothing grown or given back in 30 s (once, not on every "
	   "lap: %llu grown, %llu given back)",
	   (unsigned long long)(window__stats(w)->chunks_grown - st0.chunks_grown),
	   (unsigned long long)(window__stats(w)->chunks_released - st0.chunks_released));
	window__free(w);
}

/* Events read back in order across chunks, after the ring wrapped its chunks many times. */
static void test_chunk_order(void)
{
	struct window *w = window__new(5000, 1000 * SEC, NULL, NULL);
	struct fr_event e;
	uint64_t bad = 0, t = 0;

	for (t = 1; t <= 123457; t++) {
		e = ev_at(t);
		window__append(w, &e);
	}
	for (uint64_t i = window__tail(w); i < window__head(w); i++)
		bad += window__read(w, i, &e) || e.ts != i + 1 || !consistent(&e);
	is_int(window__head(w) - window__tail(w), 5000, "chunks: a full ring holds its cap exactly");
	is_int(bad, 0, "chunks: every event reads back, in order, across chunks");
	window__free(w);
}

int main(void)
{
	test_time_eviction();
	test_space_eviction();
	test_pin();
	test_concurrent_reader();
	test_chunk_order();
	test_footprint();
	ok(window__new(1, SEC, NULL, NULL) == NULL && errno == EINVAL, "a 1-slot window is refused");
	return tap_done_testing();
}
