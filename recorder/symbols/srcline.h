/* SPDX-License-Identifier: MIT */
/*
 * srcline.h - source positions of code addresses from DWARF: the file
 * and line of an address, and the functions inlined there.
 *
 * A struct srclines is the DWARF of one ELF object, read with libdw (the
 * parsing is all libdw's). The object may be a file another user wrote (a
 * binary built with -g, a debuglink file next to it), so:
 *
 *   - only the sections a lookup needs are read (.debug_info, _abbrev,
 *     _line, _line_str, _str, _str_offsets, _addr, _ranges, _rnglists,
 *     _aranges), at most FR_DWARF_MAX_BYTES of them once decompressed;
 *     an object with GNU-compressed .zdebug sections is refused;
 *   - no file is opened on the object's say: split-DWARF skeleton units
 *     are skipped (libdw would open their .dwo file), and the dwz
 *     alternate file of .gnu_debugaltlink is looked for under the debug
 *     root only (debuginfo__open_alt()); without it the object is refused;
 *   - the DIE tree is walked here, iteratively (libdw's dwarf_getscopes()
 *     recurses once per nesting level): at a compilation unit's first
 *     lookup, the code ranges of its functions (at its top and inside
 *     namespaces, classes and modules) are collected, sorted, from at
 *     most FR_SRCLINE_MAX_DIES DIEs; a lookup then finds its function by
 *     binary search and walks down the scopes inside it, at most
 *     FR_SRCLINE_MAX_DIES DIEs and FR_SRCLINE_MAX_DEPTH scopes deep;
 *   - a compilation unit's line program is parsed only if it is at most
 *     FR_SRCLINE_PROGRAM_MAX bytes, since libdw keeps ~60 bytes per row
 *     and a row may take one byte.
 *
 * What a lookup returns is, innermost first, one level per function
 * inlined at the address and last the function the address is in: the
 * innermost level has the address's own file and line, each outer level
 * the call site of the level inside it.
 *
 * A handle is not thread-safe (libdw caches as it reads): its owner
 * serializes lookups (symbols.c does, under its lock).
 */
#ifndef FR_SRCLINE_H
#define FR_SRCLINE_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

/* Most DWARF section bytes (decompressed) one object may hold. */
#define FR_DWARF_MAX_BYTES	(256ULL << 20)
/* Most levels one lookup returns: the innermost ones and the outermost. */
#define FR_SRCLINE_MAX_LEVELS	16
/* Bounds of one lookup's walk of the DIE tree. */
#define FR_SRCLINE_MAX_DIES	(1U << 20)
#define FR_SRCLINE_MAX_DEPTH	64
/* Longest line program of one compilation unit parsed. */
#define FR_SRCLINE_PROGRAM_MAX	(2U << 20)
/*
 * Memory libdw keeps per byte of line program parsed, on average: its rows
 * take about 3 bytes of program each and about 40 bytes of memory. Measured
 * on libc6-dbg's libc.so.6 with a lookup in each of its 2,764 exported
 * functions: 23 MiB of heap, of which 12 MiB sections; 14 B per byte parsed.
 */
#define FR_SRCLINE_ROW_COST	16
/* Longest function name and file path returned; longer ones are cut. */
#define FR_SRCLINE_NAME_MAX	1024
#define FR_SRCLINE_FILE_MAX	1024

/* One level of a source position. */
struct fr_srcline {
	const char *func;	/* the function, demangled; NULL: unknown */
	const char *file;	/* source file path; NULL: unknown */
	uint32_t line;		/* 0: unknown */
	uint32_t col;		/* 0: unknown */
};

struct srclines;

/*
 * srclines__probe() - whether @e has DWARF line information to open: a
 * .debug_info and a .debug_line with bytes in the file, no .zdebug
 * section. Reads the section headers only. Returns 0 and the sections'
 * size in the file in *@bytes (if not NULL), -ENOENT (none), -ENOEXEC
 * (refused: .zdebug, unreadable headers), -EFBIG (more than
 * FR_DWARF_MAX_BYTES in the file).
 */
int srclines__probe(Elf *e, uint64_t *bytes);

/*
 * srclines__open_elf() - read the DWARF of @e, which it takes over (ended
 * by srclines__free(), or here on failure). @e must be a read handle whose
 * file is still open; once this returns, nothing reads the file again and
 * the caller may close it. Returns NULL with errno set: ENOENT (no DWARF
 * lines), ENOEXEC (refused or malformed), EFBIG (over FR_DWARF_MAX_BYTES
 * decompressed), ENOMEM.
 */
struct srclines *srclines__open_elf(Elf *e);

/*
 * srclines__open_fd() - srclines__open_elf() of the ELF file at @fd, first
 * checked as the symbol loader checks a file (header tables inside it).
 * Keeps no reference to @fd. Returns NULL with errno set.
 */
struct srclines *srclines__open_fd(int fd);

/*
 * srclines__lookup() - the source position of virtual address @vaddr:
 * up to @max levels (at least 1), innermost first, into @out. The strings
 * are owned by @s and valid until its next lookup or srclines__free().
 * Returns the number of levels, 0 when the DWARF knows nothing of
 * @vaddr, or -errno: -E2BIG (a bound of the walk or of the line program
 * was hit; nothing returned), -EINVAL (@max is 0).
 */
int srclines__lookup(struct srclines *s, uint64_t vaddr, struct fr_srcline *out,
		     unsigned int max);

/*
 * srclines__bytes() - an estimate of the memory @s holds: its section
 * bytes, FR_SRCLINE_ROW_COST per line program byte parsed so far,
 * its tables (the units' function ranges among them).
 */
uint64_t srclines__bytes(const struct srclines *s);

void srclines__free(struct srclines *s);

#endif /* FR_SRCLINE_H */
