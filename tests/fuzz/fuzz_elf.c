// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_elf.c - libFuzzer target for the ELF symbol loader, which flightrecd
 * runs as root over every binary a process maps: files other users write.
 *
 * Each input is put in a memfd and read as the daemon reads a mapped file:
 * elf_read_buildid() (notes of the program headers, then of the sections),
 * elfsyms__open_fd() (program headers, section headers, .symtab and
 * .dynsym), then symcache__get_fd() twice (the second must be answered from
 * the cache, with the same result). A table that loads is looked up at
 * offsets taken from the input and at its edges; every name must be a
 * NUL-terminated string. The input's DWARF is read as the dump thread
 * reads a binary's or debug file's (srclines__open_fd(): libdw over the
 * sections it needs) and looked up at the same addresses and at the
 * starts of its symbols; every level must have bounded strings. Any
 * crash, leak, hang, ASan or UBSan report is a bug.
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

#include "srcline.h"
#include "symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t fz_sink;

static void fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_elf: %s\n", what);
	abort();
}

/* Look up @off and check that a name, if any, is a string. */
static void fz_lookup(const struct elfsyms *s, uint64_t off)
{
	uint64_t sym_off = 0;
	const char *name = elfsyms__lookup(s, off, &sym_off);

	if (name)
		fz_sink += strlen(name) + (size_t)sym_off;
}

/* Look up @vaddr's source position and check its levels. */
static void fz_lines(struct srclines *sl, uint64_t vaddr)
{
	struct fr_srcline lv[FR_SRCLINE_MAX_LEVELS];
	int n = srclines__lookup(sl, vaddr, lv, FR_SRCLINE_MAX_LEVELS);

	if (n > FR_SRCLINE_MAX_LEVELS)
		fz_fail("more levels than room for them");
	for (int i = 0; i < n; i++) {
		if ((lv[i].func && strlen(lv[i].func) >= FR_SRCLINE_NAME_MAX) ||
		    (lv[i].file && strlen(lv[i].file) >= FR_SRCLINE_FILE_MAX))
			fz_fail("a source level string longer than its bound");
		fz_sink += (lv[i].func ? strlen(lv[i].func) : 0) +
			   (lv[i].file ? strlen(lv[i].file) : 0) + lv[i].line + lv[i].col;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct elfsyms *c1, *c2;
	struct symcache *cache;
	struct fr_buildid id;
	struct srclines *sl;
	struct elfsyms *s;
	int fd;

	fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0)
		fz_fail("memfd_create failed");
	if (size && write(fd, data, size) != (ssize_t)size)
		fz_fail("short write to the memfd");
	if (elf_read_buildid(fd, &id) == 0 && id.len > FR_BUILDID_MAX)
		fz_fail("build-id longer than FR_BUILDID_MAX");
	s = elfsyms__open_fd(fd);
	if (s) {
		fz_lookup(s, 0);
		fz_lookup(s, UINT64_MAX);
		fz_lookup(s, size / 2);
		for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
			uint64_t v;

			memcpy(&v, data + i, 8);
			fz_lookup(s, v);
			fz_lookup(s, v & 0xffffff);
		}
		fz_sink += elfsyms__count(s) + elfsyms__buildid(s)->len;
		elfsyms__free(s);
	} else if (errno == 0) {
		fz_fail("elfsyms__open_fd failed without errno");
	}
	sl = srclines__open_fd(fd);
	if (sl) {
		fz_lines(sl, 0);
		fz_lines(sl, UINT64_MAX);
		for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
			uint64_t v;

			memcpy(&v, data + i, 8);
			fz_lines(sl, v & 0xffffff);
		}
		for (uint64_t v = 0x1000; v < 0x1200; v += 0x11)
			fz_lines(sl, v);
		fz_sink += srclines__bytes(sl);
		srclines__free(sl);
	} else if (errno == 0) {
		fz_fail("srclines__open_fd failed without errno");
	}
	cache = symcache__new();
	if (!cache)
		fz_fail("symcache__new failed");
	c1 = symcache__get_fd(cache, fd);
	c2 = symcache__get_fd(cache, fd);
	if (c1 != c2)
		fz_fail("a second symcache__get_fd of one file gave another answer");
	symcache__free(cache);
	close(fd);
	return 0;
}
