// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_cfi.c - libFuzzer target for the unwind row builder
 * (recorder/unwind/rows.c), which flightrecd runs as root over the
 * .eh_frame of every file a sampled process maps: files other users write.
 *
 * Each input is read as an ELF image in memory (urows__build_mem(), the
 * vDSO's path) and from a memfd (urows__build_fd(), every other file's).
 * Both must agree (unless one ran out of its CPU time budget). A table that builds must be sorted with no two equal
 * neighbours, every row's kind known, and urows__find() must give, for
 * addresses from the input and at each row's edges, the row a linear scan
 * gives. Any crash, leak, hang, ASan or UBSan report is a bug.
 *
 * Built and run by tests/fuzz/run-fuzz.sh.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rows.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_cfi: %s\n", what);
	abort();
}

/* The last row with pc <= @v by a linear scan, or NULL. */
static const struct fr_urow *scan(const struct urows *u, uint32_t v)
{
	const struct fr_urow *r = NULL;

	for (uint32_t i = 0; i < u->n && u->row[i].pc <= v; i++)
		r = &u->row[i];
	return r;
}

static void check_find(const struct urows *u, uint32_t v)
{
	if (urows__find(u, v) != scan(u, v))
		fz_fail("urows__find disagrees with a linear scan");
}

/* The invariants of a built table. */
static void check_table(const struct urows *u, const uint8_t *data, size_t size)
{
	for (uint32_t i = 0; i < u->n; i++) {
		const struct fr_urow *r = &u->row[i];

		if ((r->kind & FR_UROW_KIND_MASK) > FR_UROW_INVALID)
			fz_fail("row of an unknown kind");
		if (i && r->pc <= u->row[i - 1].pc)
			fz_fail("rows not strictly sorted");
		if (i && r->kind == u->row[i - 1].kind && r->cfa_off == u->row[i - 1].cfa_off &&
		    r->rbp_off == u->row[i - 1].rbp_off)
			fz_fail("two neighbours with one rule");
	}
	for (uint32_t i = 0; i < u->n && i < 64; i++) {
		check_find(u, u->row[i].pc);
		if (u->row[i].pc)
			check_find(u, u->row[i].pc - 1);
	}
	for (size_t i = 0; i + 4 <= size && i < 256; i += 4) {
		uint32_t v;

		memcpy(&v, data + i, 4);
		check_find(u, v);
	}
	check_find(u, 0);
	check_find(u, UINT32_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct urows a, b;
	int ea, eb, fd;

	ea = urows__build_mem(data, size, &a);
	fd = memfd_create("fuzz-cfi", MFD_CLOEXEC);
	if (fd < 0)
		fz_fail("memfd_create failed");
	if (size && write(fd, data, size) != (ssize_t)size)
		fz_fail("short write to the memfd");
	eb = urows__build_fd(fd, &b);
	close(fd);
	/* A build over its CPU time budget gives up, at whatever point the
	 * clock says: only then may the two reads disagree. */
	if (ea != eb && ea != -ETIMEDOUT && eb != -ETIMEDOUT)
		fz_fail("memory and file reads disagree on the result");
	if (!ea && !eb) {
		if (a.n != b.n || (a.n && memcmp(a.row, b.row, a.n * sizeof(*a.row))))
			fz_fail("memory and file reads give different rows");
		check_table(&a, data, size);
	} else if ((ea && a.n) || (eb && b.n)) {
		fz_fail("a failed build left rows");
	}
	urows__fini(&a);
	urows__fini(&b);
	return 0;
}
