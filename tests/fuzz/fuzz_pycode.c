// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_pycode.c - libFuzzer target for the Python code-object reader and
 * the location-table decoder (recorder/proc/pycode.c), which flightrecd
 * runs as root over the memory of any process that claims to be a CPython
 * interpreter: bytes its owner chose.
 *
 * Each input is a process's memory: mapped at a fixed base, with the code
 * object at an offset the first bytes choose, read with the 3.11 layout
 * through a reader that fails outside the input. A code object that reads
 * must have text for names (NUL-ended, no control byte) and a location
 * table within its bound; every instruction's line is a line or -1. The
 * input is also decoded as a location table itself. Any crash, leak,
 * hang, ASan or UBSan report is a bug.
 *
 * Built and run by tests/fuzz/run-fuzz.sh.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pycode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_BASE	0x7f0000000000ULL

struct fz_mem {
	const uint8_t *p;
	size_t n;
};

static int fz_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct fz_mem *m = ctx;

	if (addr < FZ_BASE || addr - FZ_BASE > m->n || len > m->n - (addr - FZ_BASE))
		return -EFAULT;
	memcpy(buf, m->p + (addr - FZ_BASE), len);
	return 0;
}

static void fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_pycode: %s\n", what);
	abort();
}

static void check_text(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	if (n == cap)
		fz_fail("a name without its NUL");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			fz_fail("a control byte in a name");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct pylayout *l = pylayout__of(0x030b02f0);
	struct fz_mem m = { data, size };
	static struct pycode c;
	uint64_t at = 0;

	if (size >= 2)
		at = (uint64_t)(data[0] | data[1] << 8) * 8 % size;
	if (!pycode__read(l, fz_read, &m, FZ_BASE + at, &c)) {
		check_text(c.qualname, sizeof(c.qualname));
		check_text(c.file, sizeof(c.file));
		if (c.ltlen > FR_PY_LINETABLE_MAX)
			fz_fail("a location table past its bound");
		for (uint32_t i = 0; i < 512; i++)
			if (pycode__line(&c, i) < -1)
				fz_fail("a line below -1");
	}
	/* The input as a location table, its first 4 bytes the first line. */
	memset(&c, 0, sizeof(c));
	if (size >= 4)
		memcpy(&c.firstlineno, data, 4);
	c.ltlen = (uint32_t)(size > 4 ? (size - 4 < FR_PY_LINETABLE_MAX ? size - 4 :
					  FR_PY_LINETABLE_MAX) : 0);
	if (c.ltlen)
		memcpy(c.linetable, data + 4, c.ltlen);
	for (uint32_t i = 0; i < 2048; i += 1 + i / 64)
		if (pycode__line(&c, i) < -1)
			fz_fail("a line below -1");
	return 0;
}
