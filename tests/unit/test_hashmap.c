// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_hashmap.c - the one hash map (recorder/common/hashmap.c): byte keys
 * through growth, replacement, keys that point at strings, and equality
 * deciding under a hash that collides on purpose, and removal against a model.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "tap.h"

/* Every key hashes alike: only the equality callback tells them apart. */
static uint64_t same_hash(const void *key, size_t size, void *ctx)
{
	(void)key;
	(void)size;
	(*(int *)ctx)++;
	return 42;
}

static uint64_t str_hash(const void *key, size_t size, void *ctx)
{
	const char *s = *(const char *const *)key;

	(void)size;
	(void)ctx;
	return fr_hashmap_hash_bytes(s, strlen(s), NULL);
}

static bool str_equal(const void *a, const void *b, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	return !strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_bytes(void)
{
	struct fr_hashmap m;
	size_t bad = 0, seen = 0;
	uint32_t v;

	fr_hashmap__init(&m, sizeof(uint64_t), sizeof(uint32_t), NULL, NULL, NULL);
	ok(!fr_hashmap__find(&m, &(uint64_t){ 1 }), "an empty map finds nothing (and allocates nothing)");
	for (uint64_t k = 0; k < 20000; k++) {
		v = (uint32_t)(k * 3);
		if (fr_hashmap__insert(&m, &k, &v))
			bad++;
	}
	is_int(bad, 0, "20000 inserts through many doublings");
	is_int(fr_hashmap__size(&m), 20000, "20000 keys stored");
	for (uint64_t k = 0; k < 20000; k++) {
		const uint32_t *got = fr_hashmap__find(&m, &k);

		bad += !got || *got != k * 3;
	}
	is_int(bad, 0, "every key finds its value");
	ok(!fr_hashmap__find(&m, &(uint64_t){ 20000 }), "a key never inserted is absent");
	v = 7;
	fr_hashmap__insert(&m, &(uint64_t){ 5 }, &v);
	ok(*(uint32_t *)fr_hashmap__find(&m, &(uint64_t){ 5 }) == 7 && fr_hashmap__size(&m) == 20000,
	   "inserting an existing key replaces its value");
	for (size_t i = 0; i < m.cap; i++) {
		const void *k;
		void *val;

		seen += fr_hashmap__at(&m, i, &k, &val);
	}
	is_int(seen, 20000, "iteration visits every key once");
	fr_hashmap__fini(&m);
	fr_hashmap__fini(&m);
	ok(m.cap == 0 && m.n == 0, "fini twice is harmless");
}

static void test_collisions(void)
{
	struct fr_hashmap m;
	int hashes = 0;
	uint64_t bad = 0;

	fr_hashmap__init(&m, sizeof(uint64_t), sizeof(uint64_t), same_hash, NULL, &hashes);
	for (uint64_t k = 0; k < 300; k++)
		fr_hashmap__insert(&m, &k, &(uint64_t){ k + 1000 });
	for (uint64_t k = 0; k < 300; k++) {
		const uint64_t *got = fr_hashmap__find(&m, &k);

		bad += !got || *got != k + 1000;
	}
	is_int(bad, 0, "300 keys with one hash: equality tells every one apart");
	ok(hashes > 0, "the hash callback is used (%d calls), with its context", hashes);
	fr_hashmap__fini(&m);
}

static void test_strings(void)
{
	static const char *const words[] = { "alpha", "beta", "gamma", "", "alpha2" };
	struct fr_hashmap m;
	char probe[16];
	const uint32_t *got;

	fr_hashmap__init(&m, sizeof(char *), sizeof(uint32_t), str_hash, str_equal, NULL);
	for (uint32_t i = 0; i < 5; i++)
		fr_hashmap__insert(&m, &words[i], &i);
	snprintf(probe, sizeof(probe), "%s", "gamma");
	got = fr_hashmap__find(&m, &(const char *){ probe });
	ok(got && *got == 2, "a string key is found by its content, through another pointer");
	got = fr_hashmap__find(&m, &(const char *){ "" });
	ok(got && *got == 3, "the empty string is a key like any other");
	ok(!fr_hashmap__find(&m, &(const char *){ "alph" }), "a prefix is another key");
	fr_hashmap__fini(&m);
}

/*
 * Removal under a small table with runs that wrap: a model array says what
 * must be there after each of thousands of random inserts and removes.
 */
static void test_remove(void)
{
	enum { KEYS = 97 };
	uint64_t model[KEYS] = { 0 }, bad = 0, badn = 0;
	struct fr_hashmap m;
	unsigned seed = 12345;

	fr_hashmap__init(&m, sizeof(uint64_t), sizeof(uint64_t), NULL, NULL, NULL);
	for (int step = 0; step < 20000; step++) {
		uint64_t k = (uint64_t)(rand_r(&seed) % KEYS), v = (uint64_t)step + 1;
		size_t live = 0;

		if (rand_r(&seed) % 3) {
			fr_hashmap__insert(&m, &k, &v);
			model[k] = v;
		} else {
			bool had = fr_hashmap__remove(&m, &k);

			bad += had != (model[k] != 0);
			model[k] = 0;
		}
		for (uint64_t j = 0; j < KEYS; j++) {
			const uint64_t *got = fr_hashmap__find(&m, &j);

			live += model[j] != 0;
			bad += model[j] ? !got || *got != model[j] : got != NULL;
		}
		badn += fr_hashmap__size(&m) != live;
	}
	is_int(bad, 0, "20000 random inserts and removes: every key as the model says");
	is_int(badn, 0, "the size follows the removes");
	ok(!fr_hashmap__remove(&m, &(uint64_t){ 1000 }), "removing an absent key says so");
	fr_hashmap__fini(&m);
	ok(!fr_hashmap__remove(&m, &(uint64_t){ 1 }), "removing from an empty map says so");
}

int main(void)
{
	test_bytes();
	test_remove();
	test_collisions();
	test_strings();
	return tap_done_testing();
}
