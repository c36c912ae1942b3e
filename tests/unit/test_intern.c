// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_intern.c - stack and string interning: one copy per distinct
 * content, refcounts, frees deferred while a reader holds the table, and a
 * full table.
 */
#include <stdlib.h>

#include "intern.h"
#include "tap.h"

static void fill(uint64_t *ips, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		ips[i] = 0xffffffff81000000ULL + seed * 4096 + i * 16;
}

static void test_dedup(void)
{
	struct intern *t = intern__new(128, 1024, 512);
	uint64_t a[40], b[40], out[40];
	uint32_t ia, ia2, ib, ic;
	struct intern_stats st;

	fill(a, 40, 1);
	fill(b, 40, 2);
	ok(t != NULL, "table of 1024 blocks");
	is_int(intern__get(t, 3, a, sizeof(a), &ia), 0, "intern stack A");
	is_int(intern__get(t, 3, a, sizeof(a), &ia2), 0, "intern A again");
	is_int(ia, ia2, "same content, same id");
	is_int(intern__get(t, 3, b, sizeof(b), &ib), 0, "intern stack B");
	ok(ia != ib, "different content, different id");
	is_int(intern__get(t, 4, a, sizeof(a), &ic), 0, "A with another tag");
	ok(ic != ia, "the tag is part of the identity");
	ok(ia != 0 && ib != 0 && ic != 0, "id 0 is never handed out");
	is_int(intern__copy(t, ia, out, sizeof(out)), sizeof(a), "copy returns the full length");
	ok(!memcmp(out, a, sizeof(a)), "copy spans blocks correctly (320 bytes in 128-byte blocks)");
	is_int(intern__tag(t, ic), 4, "tag reads back");
	intern__stats(t, &st);
	is_int(st.blocks_used, 9, "three entries of 3 blocks each");
	is_int(st.hits, 1, "one hit");
	is_int(intern__get(t, 0, "", 0, &ic), 0, "empty content is allowed");
	is_int(intern__len(t, ic), 0, "and has length 0");
	intern__free(t);
}

static void test_refcount_and_hold(void)
{
	struct intern *t = intern__new(32, 64, 64);
	struct intern_stats st;
	uint32_t id, id2, again;
	char buf[64];

	intern__get(t, 1, "kworker/0:1", 11, &id);
	intern__ref(t, id);
	intern__unref(t, id);
	intern__stats(t, &st);
	is_int(st.live, 1, "still referenced once");
	intern__hold(t);
	intern__unref(t, id);
	intern__stats(t, &st);
	is_int(st.live, 0, "no references left");
	is_int(st.blocks_used, 1, "but held: the bytes stay");
	is_int(intern__copy(t, id, buf, sizeof(buf)), 11, "a reader can still copy it");
	ok(!memcmp(buf, "kworker/0:1", 11), "intact");
	is_int(intern__get(t, 1, "kworker/0:1", 11, &again), 0, "interning it again while held");
	is_int(again, id, "revives the same entry");
	intern__unref(t, again);
	intern__release(t);
	intern__stats(t, &st);
	is_int(st.blocks_used, 0, "release frees what was deferred");
	intern__get(t, 1, "other", 5, &id2);
	intern__unref(t, id2);
	intern__stats(t, &st);
	is_int(st.blocks_used, 0, "unheld, the last unref frees at once");
	intern__free(t);
}

static void test_full(void)
{
	struct intern *t = intern__new(32, 8, 16);
	uint32_t ids[8], id;
	char s[40];
	int n = 0;

	for (int i = 0; i < 8; i++) {
		snprintf(s, sizeof(s), "%039d", i);
		if (!intern__get(t, 1, s, 39, &ids[n]))
			n++;
	}
	is_int(n, 4, "4 two-block entries fill 8 blocks");
	is_int(intern__get(t, 1, "x", 1, &id), -ENOSPC, "then the table is full");
	intern__unref(t, ids[0]);
	is_int(intern__get(t, 1, "x", 1, &id), 0, "a freed entry makes room for any other");
	char big[300] = {0};
	is_int(intern__get(t, 1, big, sizeof(big), &id), -E2BIG, "content larger than the pool: E2BIG");
	intern__free(t);
}

static void test_churn(void)
{
	struct intern *t = intern__new(128, 256, 128);
	struct intern_stats st;
	uint64_t ips[30] = {0};
	uint32_t live[64] = {0};
	int errors = 0;

	srand(7);
	for (int i = 0; i < 100000; i++) {
		int k = rand() % 64;

		if (live[k]) {
			intern__unref(t, live[k]);
			live[k] = 0;
		} else {
			fill(ips, 1 + rand() % 30, rand() % 100);
			if (intern__get(t, 0, ips, (1 + rand() % 30) * 8, &live[k]))
				errors++;
		}
	}
	for (int k = 0; k < 64; k++)
		intern__unref(t, live[k]);
	intern__stats(t, &st);
	is_int(errors, 0, "100000 random get/unref never run out with 64 live");
	is_int(st.blocks_used, 0, "every block comes back");
	is_int(st.live, 0, "no entry leaks");
	intern__free(t);
}

/*
 * A burst of 8000 entries, then all but 110 of them leave: after 10 s above
 * its need the table gives back the pages of the free blocks and entries
 * (mincore() through intern__footprint()), once, and keeps the survivors.
 */
static void test_trim(void)
{
	const uint64_t s = 1000000000ULL;
	struct intern *t = intern__new(128, 20000, 10000);
	uint64_t res0, res1, res2, res3, live, ips[16], out[16];
	uint32_t ids[8000], id;
	struct intern_stats st;
	int bad = 0;

	intern__footprint(t, &res0, &live);
	for (int i = 0; i < 8000; i++) {
		fill(ips, 16, (uint64_t)i);
		intern__get(t, 0, ips, sizeof(ips), &ids[i]);
	}
	ok(ids[0] == 1 && ids[7999] == 8000, "ids are handed out lowest first (1..8000)");
	for (int i = 100; i < 8000; i++)
		if (i < 4000 || i >= 4010)
			intern__unref(t, ids[i]);
	intern__footprint(t, &res1, &live);
	intern__trim(t, 1 * s);
	intern__trim(t, 9 * s);
	intern__footprint(t, &res2, &live);
	is_int(res2, res1, "not given back before 10 s above the need (%.0f KiB resident)",
	       res1 / 1024.0);
	intern__trim(t, 11 * s);
	intern__footprint(t, &res3, &live);
	intern__stats(t, &st);
	ok(res3 + (900u << 10) < res1, "given back after 10 s: %.0f KiB resident for %.0f KiB "
	   "of contents (%.0f KiB at start)", res3 / 1024.0, live / 1024.0, res0 / 1024.0);
	ok(res3 <= res0 + 2 * live + (64u << 10), "resident within start + 2 x contents + 64 KiB");
	is_int(st.shrinks, 1, "one shrink");
	for (int i = 0; i < 8000; i++) {
		if (i >= 100 && (i < 4000 || i >= 4010))
			continue;
		fill(ips, 16, (uint64_t)i);
		bad += intern__copy(t, ids[i], out, sizeof(out)) != sizeof(ips) ||
		       memcmp(out, ips, sizeof(ips));
	}
	is_int(bad, 0, "the 110 survivors read back intact");
	fill(ips, 16, 123456);
	intern__get(t, 0, ips, sizeof(ips), &id);
	is_int(id, 101, "a new entry takes the lowest free id");
	intern__trim(t, 30 * s);
	intern__stats(t, &st);
	is_int(st.shrinks, 1, "near its need the table does not trim again");
	intern__free(t);
}

int main(void)
{
	test_dedup();
	test_refcount_and_hold();
	test_full();
	test_churn();
	test_trim();
	ok(intern__new(30, 8, 8) == NULL && errno == EINVAL, "block size must be a multiple of 8");
	return tap_done_testing();
}
