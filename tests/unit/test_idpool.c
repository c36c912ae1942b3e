// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_idpool.c - lowest-first ids against a plain model, at sizes around
 * the bitmap's word boundaries; the trim clock's hysteresis; and giving
 * back exactly the pages that hold only free items (mincore()).
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "idpool.h"
#include "tap.h"
#include "util.h"

static void *zeroed(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The lowest free id of the model, or FR_IDPOOL_NONE. */
static uint32_t model_lowest(const bool *used, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!used[i])
			return (uint32_t)i;
	return FR_IDPOOL_NONE;
}

/* Random alloc/free against the model: every alloc is the model's lowest. */
static void test_model(size_t n)
{
	size_t bytes = idpool__bytes(n);
	void *mem = zeroed(bytes);
	bool *used = calloc(n, sizeof(*used));
	struct idpool p;
	int wrong = 0, ops = 0, full = 0;
	uint32_t id;

	idpool__init(&p, mem, n);
	for (size_t i = 0; i < n; i++)
		if (idpool__alloc(&p) != i)
			wrong++;
	is_int(wrong, 0, "n=%zu: a fresh pool hands out 0..n-1 in order", n);
	is_int(idpool__alloc(&p), FR_IDPOOL_NONE, "n=%zu: then it is full", n);
	for (size_t i = 0; i < n; i++)
		used[i] = true;
	srand((unsigned int)n);
	for (; ops < 20000; ops++) {
		if (rand() % 2) {
			id = (uint32_t)(rand() % n);
			idpool__free(&p, id);
			used[id] = false;
			continue;
		}
		id = idpool__alloc(&p);
		if (id != model_lowest(used, n))
			wrong++;
		if (id == FR_IDPOOL_NONE)
			full++;
		else
			used[id] = true;
	}
	is_int(wrong, 0, "n=%zu: 20000 random frees and allocs, each alloc the lowest free "
	       "(%d of them on a full pool)", n, full);
	wrong = 0;
	for (size_t i = 0; i < n; i++)
		wrong += idpool__in_use(&p, (uint32_t)i) != used[i];
	is_int(wrong, 0, "n=%zu: in_use agrees with the model", n);
	idpool__free(&p, (uint32_t)n);	/* out of range: ignored */
	ok(!idpool__in_use(&p, (uint32_t)n), "n=%zu: ids past the end are never in use", n);
	free(used);
	munmap(mem, bytes);
}

static void test_trim_clock(void)
{
	struct idpool_trim t = {0};
	uint64_t s = 1000000000ULL;

	ok(!idpool__trim_due(&t, 1 * s, 1 << 20, 1 << 20), "at the need: not due");
	ok(!idpool__trim_due(&t, 2 * s, 4 << 20, 1 << 20), "above it: the clock starts");
	ok(!idpool__trim_due(&t, 11 * s, 4 << 20, 1 << 20), "9 s above: not yet");
	ok(!idpool__trim_due(&t, 12 * s - 1, 4 << 20, 1 << 20), "just under 10 s: not yet");
	ok(idpool__trim_due(&t, 12 * s, 4 << 20, 1 << 20), "10 s above: due");
	ok(!idpool__trim_due(&t, 13 * s, (1 << 20) + (1 << 18) + FR_IDPOOL_SLACK, 1 << 20),
	   "need + 1/4 + slack is tolerated: the clock stops");
	ok(!idpool__trim_due(&t, 14 * s, 4 << 20, 1 << 20), "above again: it restarts");
	ok(!idpool__trim_due(&t, 23 * s, 4 << 20, 1 << 20), "9 s: not due");
	ok(idpool__trim_due(&t, 24 * s, 4 << 20, 1 << 20), "10 s: due");
}

/* Resident pages of [p, p + len). */
static size_t resident(void *p, size_t len)
{
	unsigned char vec[1024];
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = 0;

	if (len / pg > sizeof(vec) || mincore(p, len, vec))
		return (size_t)-1;
	for (size_t i = 0; i < len / pg; i++)
		n += vec[i] & 1;
	return n;
}

/* A whole release, with no bound on its calls. */
static long release(const struct idpool *p, void *arr, size_t sz)
{
	unsigned calls = UINT32_MAX;
	size_t from = 0;

	return idpool__release(p, arr, sz, &from, &calls);
}

/*
 * 1000 items of 88 bytes (a size that straddles pages): the pages given
 * back are those of free items only, the live items keep their bytes, and
 * a page is touched again when its ids are handed out again.
 */
static void test_release(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = 1000, sz = 88;
	size_t len = FR_ALIGN(n * sz, pg);
	uint8_t *arr = zeroed(len);
	void *mem = zeroed(idpool__bytes(n));
	struct idpool_trim t = {0};
	struct idpool p;
	size_t kept, expect = 0;
	long pages;
	int bad = 0;

	idpool__init(&p, mem, n);
	for (size_t i = 0; i < n; i++) {
		idpool__alloc(&p);
		memset(arr + i * sz, (int)(i % 251) + 1, sz);
	}
	is_int(resident(arr, len), len / pg, "all %zu pages touched", len / pg);
	/* Keep ids 0..99 and 700..709; free the rest. */
	for (size_t i = 100; i < n; i++)
		if (i < 700 || i >= 710)
			idpool__free(&p, (uint32_t)i);
	for (size_t a = 0; a < len; a += pg) {
		size_t first = a / sz, last = FR_MIN((a + pg - 1) / sz, n - 1);

		expect += (first >= 100 && (last < 700 || first >= 710)) && a + pg <= n * sz;
	}
	pages = release(&p, arr, sz);
	is_int(pages, expect, "released the %zu pages that hold free items only", expect);
	kept = resident(arr, len);
	is_int(kept, len / pg - expect, "mincore agrees: %zu pages left", len / pg - expect);
	for (size_t i = 0; i < n; i++) {
		if (i >= 100 && (i < 700 || i >= 710))
			continue;
		for (size_t k = 0; k < sz; k++)
			bad += arr[i * sz + k] != (uint8_t)((int)(i % 251) + 1);
	}
	is_int(bad, 0, "the 110 live items keep their bytes");
	idpool__trimmed(&p, &t, pages);
	is_int(p.hi, 710, "the ids handed out now end at the highest in use");
	is_int(t.shrinks, 1, "one shrink counted");
	is_int(t.pages_released, expect, "and its pages");
	is_int(release(&p, arr, sz), 0, "a second release finds nothing resident to give");
	is_int(idpool__alloc(&p), 100, "the next id is the lowest free, 100");
	munmap(mem, idpool__bytes(n));
	munmap(arr, len);
}

/*
 * Free pages between live ones, 100 runs of one page, in two arrays: a
 * trim goes in steps of FR_IDPOOL_RELEASE_CALLS releases, each resuming
 * where the last stopped, and gives back each of them once.
 */
static void test_steps(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = 200, sz = pg;
	size_t len = n * sz;
	uint8_t *a1 = zeroed(len), *a2 = zeroed(len);
	void *mem = zeroed(idpool__bytes(n));
	struct idpool_trim t = {0};
	struct idpool p;
	unsigned steps = 0, calls = 3;
	size_t from = 0;
	long pages = -EINPROGRESS, r;
	int bad = 0;

	idpool__init(&p, mem, n);
	for (size_t i = 0; i < n; i++) {
		idpool__alloc(&p);
		a1[i * sz] = a2[i * sz] = (uint8_t)(i + 1);
	}
	for (size_t i = 1; i < n; i += 2)
		idpool__free(&p, (uint32_t)i);
	r = idpool__release(&p, a1, sz, &from, &calls);
	ok(r == 3 && calls == 0 && from == 7 * pg,
	   "three calls allowed: three pages, and it resumes past the live page after the third (%ld, %zu)", r, from);
	calls = 3;
	r = idpool__release(&p, a1, sz, &from, &calls);
	ok(r == 3 && from == 13 * pg, "the next three from there (%ld, %zu)", r, from);
	from = 0;
	calls = UINT32_MAX;
	is_int(idpool__release(&p, a1, sz, &from, &calls), 94, "a release from the start finds the other 94");

	const struct idpool_part parts[] = { { &p, a1, sz }, { &p, a2, sz } };
	memset(a1, 1, len);
	while (pages == -EINPROGRESS && steps < 100) {
		pages = idpool__trim_step(&t, parts, 2);
		steps++;
	}
	is_int(pages, 200, "a trim of both arrays released 200 pages");
	is_int(steps, (200 + FR_IDPOOL_RELEASE_CALLS - 1) / FR_IDPOOL_RELEASE_CALLS,
	       "in steps of %u releases", FR_IDPOOL_RELEASE_CALLS);
	is_int(resident(a1, len) + resident(a2, len), 200, "the 200 live pages stay");
	for (size_t i = 0; i < n; i += 2)
		bad += a2[i * sz] != (uint8_t)(i + 1);
	is_int(bad, 0, "and keep their bytes");
	ok(t.part == 0 && t.from == 0, "no trim is under way after the last step");
	is_int(idpool__trim_step(&t, parts, 2), 0, "a new trim finds nothing to give");
	munmap(mem, idpool__bytes(n));
	munmap(a1, len);
	munmap(a2, len);
}

int main(void)
{
	const size_t sizes[] = { 1, 63, 64, 65, 4095, 4096, 4097, 262145 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		test_model(sizes[i]);
	test_trim_clock();
	test_release();
	test_steps();
	return tap_done_testing();
}
