// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_perfmap.c - libFuzzer target for the perf-map parser: the text a
 * JIT (any user's process) writes to /tmp/perf-PID.map, which flightrecd
 * reads as root when it writes a dump.
 *
 * Each input is parsed with perfmap__parse(); a map that parses is looked up
 * at every entry's start found by scanning the input's hex words, and at the
 * edges. Lookups must find an entry containing the address, and names must
 * be strings. Any crash, leak, hang, ASan or UBSan report is a bug.
 *
 * Built and run by tests/fuzz/run-fuzz.sh.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmap.h"
#include "symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t fz_sink;

static void fz_lookup(const struct perfmap *p, uint64_t addr)
{
	uint64_t off = 0;
	const char *name = perfmap__lookup(p, addr, &off);

	if (name && off > addr) {
		fprintf(stderr, "fuzz_perfmap: offset %llx past address %llx\n",
			(unsigned long long)off, (unsigned long long)addr);
		abort();
	}
	if (name)
		fz_sink += strlen(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *p = perfmap__parse((const char *)data, size);
	char *text;

	if (!p) {
		if (errno != ENOMEM)
			abort();
		return 0;
	}
	fz_lookup(p, 0);
	fz_lookup(p, UINT64_MAX);
	text = malloc(size + 1);
	if (text) {
		char *s = text, *end;

		memcpy(text, data, size);
		text[size] = 0;
		for (int n = 0; *s && n < 256; n++) {
			uint64_t v = strtoull(s, &end, 16);

			if (end == s) {
				s++;
				continue;
			}
			fz_lookup(p, v);
			fz_lookup(p, v + 1);
			s = end;
		}
		free(text);
	}
	perfmap__free(p);
	return 0;
}
