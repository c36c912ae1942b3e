// SPDX-License-Identifier: MIT
/*
 * srcline.c - file, line and inlined functions of code addresses, from
 * DWARF through libdw. See srcline.h for what is read and the bounds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "debuginfo.h"
#include "demangle.h"
#include "hashmap.h"
#include "srcline.h"
#include "util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Most address ranges of compilation units kept when .debug_aranges lacks some. */
#define FR_SRCLINE_MAX_RANGES	(1U << 20)
/* Most nested namespaces, classes and modules searched for a function. */
#define FR_SRCLINE_MAX_NEST	32

/* An address range of a compilation unit, for units .debug_aranges misses. */
struct fr_curange {
	uint64_t lo, hi;	/* [lo, hi) */
	uint32_t cu;		/* index into srclines.cus */
};

/* An address range of a function: a code DIE at a unit's top, or in a namespace there. */
struct fr_fnrange {
	uint64_t lo, hi;	/* [lo, hi) */
	uint64_t off;		/* the DIE's offset in .debug_info */
};

/* A unit's function ranges, sorted: made at its first lookup. */
struct fr_unitfns {
	struct fr_fnrange *r;
	size_t n;
	bool bad;		/* its DIEs exceeded the walk's budget: not searched */
};

struct srclines {
	Elf *elf;
	Dwarf *dw;
	Elf *alt_elf;		/* the dwz alternate file, if any */
	Dwarf *alt;
	Elf_Data *line;		/* .debug_line as libdw holds it */
	bool msb;		/* the object is big-endian */
	uint64_t sec_bytes;	/* section bytes read, alternate file's included */
	uint64_t parsed;	/* line program bytes parsed */
	struct fr_hashmap programs;	/* line program offset -> 1: parsed, 0: refused */
	bool ranges_built;	/* cus and ranges hold every unit's ranges */
	Dwarf_Die *cus;
	struct fr_curange *ranges;
	size_t ncus, nranges;
	struct fr_hashmap units;	/* unit DIE offset -> index into fns */
	struct fr_unitfns *fns;
	size_t nfns, capfns;
	uint64_t fn_bytes;	/* of every fns[].r */
	char *names;		/* FR_SRCLINE_MAX_LEVELS names, then as many files */
};

/* --------------------------------------------------------------- sections */

/* The sections a lookup needs; libdw reads every .debug_* it knows of. */
static const char *const kept[] = {
	".debug_info", ".debug_abbrev", ".debug_line", ".debug_line_str", ".debug_str",
	".debug_str_offsets", ".debug_addr", ".debug_ranges", ".debug_rnglists",
	".debug_aranges",
};

static bool section_kept(const char *name)
{
	for (size_t i = 0; i < FR_ARRAY_SIZE(kept); i++)
		if (!strcmp(name, kept[i]))
			return true;
	return false;
}

/*
 * The DWARF sections of an object as libdw would see them (a section in a
 * group is not part of the object's own DWARF).
 */
struct fr_dwscan {
	uint64_t bytes;		/* of the kept sections */
	bool info, line;	/* .debug_info and .debug_line hold bytes */
	bool altlink;		/* a .gnu_debugaltlink section */
};

/*
 * dwarf_scan() - look at the section headers of @e for what srclines
 * reads. With @open, the kept sections are measured decompressed (their
 * compression headers are read) and the .debug_* sections a lookup does
 * not need are marked SHT_NOBITS in memory, so that libdw skips them;
 * without, sizes are the bytes in the file. Returns 0, -ENOEXEC (a
 * .zdebug section, unreadable headers), -EFBIG (over FR_DWARF_MAX_BYTES).
 */
static int dwarf_scan(Elf *e, bool open, struct fr_dwscan *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	memset(out, 0, sizeof(*out));
	if (elf_getshdrstrndx(e, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(e, scn))) {
		uint64_t size;
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name)
			return -ENOEXEC;
		if (!strncmp(name, ".zdebug", 7))
			return -ENOEXEC;
		if (!strcmp(name, ".gnu_debugaltlink") && sh.sh_type != SHT_NOBITS)
			out->altlink = true;
		if (strncmp(name, ".debug_", 7) || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_GROUP))
			continue;
		if (!section_kept(name)) {
			if (open) {
				sh.sh_type = SHT_NOBITS;
				gelf_update_shdr(scn, &sh);	/* else libdw reads it too */
			}
			continue;
		}
		size = sh.sh_size;
		if (open && (sh.sh_flags & SHF_COMPRESSED)) {
			GElf_Chdr ch;

			if (!gelf_getchdr(scn, &ch))
				return -ENOEXEC;
			size = ch.ch_size;
		}
		if (!size)
			continue;
		out->info |= !strcmp(name, ".debug_info");
		out->line |= !strcmp(name, ".debug_line");
		if (size > FR_DWARF_MAX_BYTES - out->bytes)
			return -EFBIG;
		out->bytes += size;
	}
	return 0;
}

int srclines__probe(Elf *e, uint64_t *bytes)
{
	struct fr_dwscan sc;
	int r = dwarf_scan(e, false, &sc);

	if (r)
		return r;
	if (!sc.info || !sc.line)
		return -ENOENT;
	if (bytes)
		*bytes = sc.bytes;
	return 0;
}

/* section_data() - the data of the first section of @e named @name, or NULL. */
static Elf_Data *section_data(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name) && !(sh.sh_flags & SHF_GROUP))
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/*
 * strings_ok() - whether the string sections of @e end with a NUL: libdw
 * hands out (and itself runs strlen() on) strings at any offset in them,
 * so an unterminated last one would be read past the section's end.
 */
static bool strings_ok(Elf *e)
{
	static const char *const names[] = { ".debug_str", ".debug_line_str" };

	for (size_t i = 0; i < FR_ARRAY_SIZE(names); i++) {
		Elf_Data *d = section_data(e, names[i]);

		if (d && d->d_size && (!d->d_buf || ((const char *)d->d_buf)[d->d_size - 1]))
			return false;
	}
	return true;
}

/*
 * dwarf_read() - libdw's handle over the kept sections of @e, read now
 * (libdw reads and decompresses every section it knows at the start).
 * Adds the bytes to *@bytes. Returns 0, -ENOENT (no DWARF lines),
 * -ENOEXEC, -EFBIG.
 */
static int dwarf_read(Elf *e, Dwarf **out, struct fr_dwscan *sc, uint64_t *bytes)
{
	int r = dwarf_scan(e, true, sc);

	if (r)
		return r;
	if (!sc->info)
		return -ENOENT;
	if (sc->bytes > FR_DWARF_MAX_BYTES - *bytes)
		return -EFBIG;
	*out = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	if (!*out)
		return -ENOEXEC;
	if (!strings_ok(e)) {
		dwarf_end(*out);
		*out = NULL;
		return -ENOEXEC;
	}
	*bytes += sc->bytes;
	return 0;
}

/*
 * open_alt() - the dwz alternate file .gnu_debugaltlink of @s's object
 * names, found by debuginfo__open_alt() and checked to carry the build-id
 * it names, set as libdw's alternate so that libdw never looks for it
 * itself. Returns 0, -ENOENT (not found: the object is refused), -ENOEXEC,
 * -EFBIG, -ENOMEM.
 */
static int open_alt(struct srclines *s)
{
	struct fr_buildid got;
	const void *id = NULL;
	const char *name = NULL;
	struct fr_dwscan sc;
	struct stat st;
	ssize_t len;
	int fd, r;

	len = dwelf_dwarf_gnu_debugaltlink(s->dw, &name, &id);
	if (len <= 0 || len > FR_BUILDID_MAX)
		return -ENOENT;
	fd = debuginfo__open_alt(id, (size_t)len, name);
	if (fd < 0)
		return fd == -ENOMEM ? fd : -ENOENT;
	r = fstat(fd, &st) ? -errno : fr_elf_begin(fd, &s->alt_elf);
	if (!r && (!fr_elf_check_tables(s->alt_elf, (uint64_t)st.st_size) ||
		   fr_elf_buildid(s->alt_elf, &got) || got.len != len || memcmp(got.id, id, len)))
		r = -ENOENT;
	if (!r)
		r = dwarf_read(s->alt_elf, &s->alt, &sc, &s->sec_bytes);
	/* An alternate of the alternate would be libdw's to look for. */
	if (!r && sc.altlink)
		r = -ENOEXEC;
	if (!r) {
		elf_cntl(s->alt_elf, ELF_C_FDDONE);
		dwarf_setalt(s->dw, s->alt);
	}
	close(fd);
	return r;
}

void srclines__free(struct srclines *s)
{
	if (!s)
		return;
	/* The alternate is ours: libdw ends only one it opened itself. */
	dwarf_end(s->dw);
	dwarf_end(s->alt);
	if (s->alt_elf)
		elf_end(s->alt_elf);
	if (s->elf)
		elf_end(s->elf);
	fr_hashmap__fini(&s->programs);
	fr_hashmap__fini(&s->units);
	for (size_t i = 0; i < s->nfns; i++)
		free(s->fns[i].r);
	free(s->fns);
	free(s->cus);
	free(s->ranges);
	free(s->names);
	free(s);
}

struct srclines *srclines__open_elf(Elf *e)
{
	struct fr_dwscan sc;
	struct srclines *s;
	GElf_Ehdr eh;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s) {
		elf_end(e);
		errno = ENOMEM;
		return NULL;
	}
	s->elf = e;
	fr_hashmap__init(&s->programs, sizeof(uint64_t), sizeof(uint8_t), NULL, NULL, NULL);
	fr_hashmap__init(&s->units, sizeof(uint64_t), sizeof(uint32_t), NULL, NULL, NULL);
	if (!gelf_getehdr(e, &eh)) {
		r = -ENOEXEC;
		goto fail;
	}
	s->msb = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	r = dwarf_read(e, &s->dw, &sc, &s->sec_bytes);
	if (!r && !sc.line)
		r = -ENOENT;
	if (!r && sc.altlink)
		r = open_alt(s);
	if (r)
		goto fail;
	s->line = section_data(e, ".debug_line");
	if (!s->line || !s->line->d_buf) {
		r = -ENOENT;
		goto fail;
	}
	/* Everything is read: the file may go. */
	elf_cntl(e, ELF_C_FDDONE);
	return s;
fail:
	srclines__free(s);
	errno = -r;
	return NULL;
}

struct srclines *srclines__open_fd(int fd)
{
	struct stat st;
	Elf *e;
	int r;

	if (fstat(fd, &st)) {
		r = -errno;
		goto fail;
	}
	r = fr_elf_begin(fd, &e);
	if (r)
		goto fail;
	if (!fr_elf_check_tables(e, (uint64_t)st.st_size)) {
		elf_end(e);
		r = -ENOEXEC;
		goto fail;
	}
	return srclines__open_elf(e);
fail:
	errno = -r;
	return NULL;
}

uint64_t srclines__bytes(const struct srclines *s)
{
	if (!s)
		return 0;
	return sizeof(*s) + s->sec_bytes + s->parsed * FR_SRCLINE_ROW_COST +
	       s->ncus * sizeof(*s->cus) + s->nranges * sizeof(*s->ranges) +
	       (s->names ? FR_SRCLINE_MAX_LEVELS * (FR_SRCLINE_NAME_MAX + FR_SRCLINE_FILE_MAX) : 0) +
	       s->programs.cap * s->programs.slot_size + s->units.cap * s->units.slot_size +
	       s->capfns * sizeof(*s->fns) + s->fn_bytes;
}

/* ------------------------------------------------------------ units */

/* A unit srclines may read: not a split-DWARF skeleton (libdw would open its .dwo). */
static bool unit_ok(Dwarf_Die *cudie)
{
	uint8_t type = 0;

	if (dwarf_cu_info(cudie->cu, NULL, &type, NULL, NULL, NULL, NULL, NULL))
		return false;
	return type == DW_UT_compile || type == DW_UT_partial;
}

static int range_cmp(const void *a, const void *b)
{
	const struct fr_curange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * build_ranges() - the address ranges of every unit, sorted, for objects
 * whose .debug_aranges lacks units (clang emits none by default). At most
 * FR_SRCLINE_MAX_RANGES ranges. Returns 0 or -ENOMEM.
 */
static int build_ranges(struct srclines *s)
{
	size_t cap_cu = 0, cap_r = 0;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t type;
	int r;

	s->ranges_built = true;
	while (dwarf_get_units(s->dw, cu, &cu, NULL, &type, &cudie, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if ((type != DW_UT_compile && type != DW_UT_partial) || s->ncus >= UINT32_MAX)
			continue;
		r = fr_grow((void **)&s->cus, &cap_cu, s->ncus + 1, sizeof(*s->cus));
		if (r)
			return r;
		s->cus[s->ncus] = cudie;
		while (s->nranges < FR_SRCLINE_MAX_RANGES &&
		       (off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			r = fr_grow((void **)&s->ranges, &cap_r, s->nranges + 1, sizeof(*s->ranges));
			if (r)
				return r;
			s->ranges[s->nranges++] = (struct fr_curange){ lo, hi, (uint32_t)s->ncus };
		}
		s->ncus++;
	}
	if (s->nranges)
		qsort(s->ranges, s->nranges, sizeof(*s->ranges), range_cmp);
	return 0;
}

/*
 * find_unit() - the compilation unit whose code holds @pc: by
 * .debug_aranges, else by the ranges of every unit. Returns 0, 1 (none),
 * -ENOMEM.
 */
static int find_unit(struct srclines *s, uint64_t pc, Dwarf_Die *cudie)
{
	size_t lo;
	int r;

	if (dwarf_addrdie(s->dw, pc, cudie))
		return unit_ok(cudie) ? 0 : 1;
	if (!s->ranges_built) {
		r = build_ranges(s);
		if (r)
			return r;
	}
	lo = fr_upper_bound(s->ranges, s->nranges, sizeof(*s->ranges),
			    offsetof(struct fr_curange, lo), pc);
	/* Ranges rarely overlap: look back a few for one that holds @pc. */
	for (size_t i = lo, k = 0; i-- > 0 && k < 16; k++) {
		if (pc < s->ranges[i].hi) {
			*cudie = s->cus[s->ranges[i].cu];
			return unit_ok(cudie) ? 0 : 1;
		}
	}
	return 1;
}

/* read_len() - the @n-byte integer at @p in the object's byte order. */
static uint64_t read_len(const struct srclines *s, const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * (s->msb ? n - 1 - i : i));
	return v;
}

/*
 * lines_ok() - whether the line program of @cudie may be parsed: at most
 * FR_SRCLINE_PROGRAM_MAX bytes. Only its length is read here (the 4- or
 * 12-byte unit_length at DW_AT_stmt_list), before libdw parses it; what
 * it parses is counted in @s->parsed.
 */
static bool lines_ok(struct srclines *s, Dwarf_Die *cudie)
{
	const unsigned char *p = s->line->d_buf;
	size_t size = s->line->d_size;
	Dwarf_Attribute a;
	Dwarf_Word off;
	uint64_t len;
	uint8_t *seen, ok;

	if (dwarf_formudata(dwarf_attr(cudie, DW_AT_stmt_list, &a), &off) || off >= size)
		return false;
	seen = fr_hashmap__find(&s->programs, &off);
	if (seen)
		return *seen;
	len = size - off >= 4 ? read_len(s, p + off, 4) : UINT64_MAX;
	if (len == 0xffffffff)
		len = size - off >= 12 ? read_len(s, p + off + 4, 8) : UINT64_MAX;
	else if (len >= 0xfffffff0)
		len = UINT64_MAX;
	ok = len <= FR_SRCLINE_PROGRAM_MAX;
	if (fr_hashmap__insert(&s->programs, &off, &ok))
		return false;
	if (ok)
		s->parsed += len;
	return ok;
}

/* ------------------------------------------------------------ scopes */

/* Tags of DIEs with code of their own that may nest more of them. */
static bool tag_has_code(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_entry_point:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
		return true;
	}
	return false;
}

/* Tags of DIEs without code that may hold functions (Rust, Fortran, C++). */
static bool tag_holds_code(int tag)
{
	switch (tag) {
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_interface_type:
		return true;
	}
	return false;
}

/* tag_is_function() - whether a code DIE of @tag is a level of the answer. */
static bool tag_is_function(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/* One lookup's walk: the address and what is left of its budget. */
struct fr_walk {
	uint64_t pc;
	uint32_t budget;	/* DIEs it may still look at */
};

/*
 * find_child() - the child of @parent that has code at the walk's pc,
 * into *@out. Returns 0, 1 (none), -E2BIG (out of budget).
 */
static int find_child(struct fr_walk *w, Dwarf_Die *parent, Dwarf_Die *out)
{
	Dwarf_Die c;

	if (dwarf_child(parent, &c))
		return 1;
	do {
		if (!w->budget--)
			return -E2BIG;
		if (tag_has_code(dwarf_tag(&c)) && dwarf_haspc(&c, w->pc) > 0) {
			*out = c;
			return 0;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return 1;
}

static int fnrange_cmp(const void *a, const void *b)
{
	const struct fr_fnrange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * fns_add() - the code ranges of DIE @die into @u (at most
 * FR_SRCLINE_MAX_RANGES). Returns 0 or -ENOMEM.
 */
static int fns_add(struct fr_unitfns *u, size_t *cap, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int r;

	while (u->n < FR_SRCLINE_MAX_RANGES && (off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		r = fr_grow((void **)&u->r, cap, u->n + 1, sizeof(*u->r));
		if (r)
			return r;
		u->r[u->n++] = (struct fr_fnrange){ lo, hi, dwarf_dieoffset(die) };
	}
	return 0;
}

/*
 * fns_build() - the ranges of the functions of unit @cudie into @u: its
 * code DIEs at the top and inside namespaces, classes and modules (at most
 * FR_SRCLINE_MAX_NEST deep), sorted. Walked once per unit, iteratively,
 * at most FR_SRCLINE_MAX_DIES DIEs (beyond, @u is marked bad). Returns 0
 * or -ENOMEM.
 */
static int fns_build(Dwarf_Die *cudie, struct fr_unitfns *u)
{
	Dwarf_Die it[FR_SRCLINE_MAX_NEST];
	uint32_t budget = FR_SRCLINE_MAX_DIES;
	size_t cap = 0;
	int d = 0, r;

	if (dwarf_child(cudie, &it[0]))
		return 0;
	for (;;) {
		int tag;

		if (!budget--) {
			u->bad = true;
			return 0;
		}
		tag = dwarf_tag(&it[d]);
		if (tag_has_code(tag)) {
			r = fns_add(u, &cap, &it[d]);
			if (r)
				return r;
		} else if (tag_holds_code(tag) && d + 1 < FR_SRCLINE_MAX_NEST &&
			   dwarf_child(&it[d], &it[d + 1]) == 0) {
			d++;
			continue;
		}
		while (dwarf_siblingof(&it[d], &it[d]) != 0)
			if (d-- == 0)
				goto sort;
	}
sort:
	if (u->n)
		qsort(u->r, u->n, sizeof(*u->r), fnrange_cmp);
	return 0;
}

/*
 * unit_function() - the function of unit @cudie whose code holds @pc,
 * found in the unit's function ranges (made at its first lookup). Returns
 * 0 with *@out set, 1 (none), -E2BIG (the unit is too big to search),
 * -ENOMEM.
 */
static int unit_function(struct srclines *s, Dwarf_Die *cudie, uint64_t pc, Dwarf_Die *out)
{
	uint64_t key = dwarf_dieoffset(cudie);
	const uint32_t *idx = fr_hashmap__find(&s->units, &key);
	const struct fr_unitfns *u;
	size_t lo;
	int r;

	if (!idx) {
		uint32_t i = (uint32_t)s->nfns;

		if (s->nfns >= UINT32_MAX)
			return -E2BIG;
		r = fr_grow((void **)&s->fns, &s->capfns, s->nfns + 1, sizeof(*s->fns));
		if (r)
			return r;
		memset(&s->fns[i], 0, sizeof(s->fns[i]));
		r = fns_build(cudie, &s->fns[i]);
		if (!r)
			r = fr_hashmap__insert(&s->units, &key, &i);
		if (r) {
			free(s->fns[i].r);
			return r;
		}
		s->nfns++;
		s->fn_bytes += s->fns[i].n * sizeof(*s->fns[i].r);
		u = &s->fns[i];
	} else {
		u = &s->fns[*idx];
	}
	if (u->bad)
		return -E2BIG;
	lo = fr_upper_bound(u->r, u->n, sizeof(*u->r), offsetof(struct fr_fnrange, lo), pc);
	for (size_t i = lo, k = 0; i-- > 0 && k < 16; k++)
		if (pc < u->r[i].hi)
			return dwarf_offdie(s->dw, u->r[i].off, out) ? 0 : 1;
	return 1;
}

/*
 * find_scopes() - the functions (subprogram, then inlined subroutines)
 * whose code holds the walk's pc in @cudie, outermost first, into @chain
 * (FR_SRCLINE_MAX_DEPTH entries). Returns their number, or -E2BIG,
 * -ENOMEM.
 */
static int find_scopes(struct srclines *s, struct fr_walk *w, Dwarf_Die *cudie,
		       Dwarf_Die *chain)
{
	Dwarf_Die cur, next;
	int n = 0, r;

	r = unit_function(s, cudie, w->pc, &cur);
	if (r)
		return r < 0 ? r : 0;
	for (int depth = 0; depth < FR_SRCLINE_MAX_DEPTH; depth++) {
		if (depth) {
			r = find_child(w, &cur, &next);
			if (r < 0)
				return r;
			if (r)
				break;
			cur = next;
		}
		if (tag_is_function(dwarf_tag(&cur)))
			chain[n++] = cur;
	}
	return n;
}

/* ------------------------------------------------------------ lookup */

/* put_str() - @src cut to @size - 1 bytes into @buf; NULL for NULL. */
static const char *put_str(char *buf, size_t size, const char *src)
{
	if (!src)
		return NULL;
	fr_strlcpy(buf, src, size);
	return buf;
}

/*
 * put_path() - source file @src into @buf (FR_SRCLINE_FILE_MAX bytes),
 * after the unit's DW_AT_comp_dir when it is relative, as addr2line
 * shows it; NULL for NULL.
 */
static const char *put_path(char *buf, Dwarf_Die *cudie, const char *src)
{
	Dwarf_Attribute a;
	const char *dir;

	if (!src)
		return NULL;
	dir = src[0] == '/' ? NULL : dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	if (dir && dir[0])
		snprintf(buf, FR_SRCLINE_FILE_MAX, "%s%s%s", dir,
			 dir[strlen(dir) - 1] == '/' ? "" : "/", src);
	else
		fr_strlcpy(buf, src, FR_SRCLINE_FILE_MAX);
	return buf;
}

/*
 * die_name() - the name of function DIE @die (following its abstract
 * origin or specification): its linkage name demangled, else its name.
 * Into @buf (FR_SRCLINE_NAME_MAX bytes); NULL when it has none.
 */
static const char *die_name(Dwarf_Die *die, char *buf)
{
	Dwarf_Attribute a;
	const char *n;

	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (n && !demangle__name(n, buf, FR_SRCLINE_NAME_MAX))
		return buf;
	return put_str(buf, FR_SRCLINE_NAME_MAX, dwarf_diename(die));
}

/*
 * call_site() - the file, line and column of the call that inlined @die,
 * from its DW_AT_call_* and the file table of @cudie, into @out (file
 * into @buf, FR_SRCLINE_FILE_MAX bytes).
 */
static void call_site(Dwarf_Die *cudie, Dwarf_Die *die, bool lines, char *buf,
		      struct fr_srcline *out)
{
	Dwarf_Attribute a;
	Dwarf_Files *files;
	Dwarf_Word v;
	size_t nfiles;

	out->file = NULL;
	out->line = out->col = 0;
	if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &v))
		out->line = v > UINT32_MAX ? 0 : (uint32_t)v;
	if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_column, &a), &v))
		out->col = v > UINT32_MAX ? 0 : (uint32_t)v;
	if (lines && !dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &v) &&
	    !dwarf_getsrcfiles(cudie, &files, &nfiles) && v < nfiles)
		out->file = put_path(buf, cudie, dwarf_filesrc(files, v, NULL, NULL));
}

/* addr_line() - the line table's row for @pc in @cudie, into @out (file into @buf). */
static void addr_line(Dwarf_Die *cudie, uint64_t pc, bool lines, char *buf,
		      struct fr_srcline *out)
{
	Dwarf_Line *l = lines ? dwarf_getsrc_die(cudie, pc) : NULL;
	int line = 0, col = 0;

	out->file = NULL;
	out->line = out->col = 0;
	if (!l)
		return;
	out->file = put_path(buf, cudie, dwarf_linesrc(l, NULL, NULL));
	if (!dwarf_lineno(l, &line) && line > 0)
		out->line = (uint32_t)line;
	if (!dwarf_linecol(l, &col) && col > 0)
		out->col = (uint32_t)col;
}

int srclines__lookup(struct srclines *s, uint64_t vaddr, struct fr_srcline *out,
		     unsigned int max)
{
	Dwarf_Die cudie, chain[FR_SRCLINE_MAX_DEPTH];
	struct fr_walk w = { .pc = vaddr, .budget = FR_SRCLINE_MAX_DIES };
	char *names, *files;
	unsigned int lv = 0;
	bool lines;
	int n, r;

	if (!max)
		return -EINVAL;
	max = FR_MIN(max, (unsigned int)FR_SRCLINE_MAX_LEVELS);
	if (!s->names) {
		s->names = malloc(FR_SRCLINE_MAX_LEVELS * (FR_SRCLINE_NAME_MAX + FR_SRCLINE_FILE_MAX));
		if (!s->names)
			return -ENOMEM;
	}
	names = s->names;
	files = s->names + FR_SRCLINE_MAX_LEVELS * FR_SRCLINE_NAME_MAX;
	r = find_unit(s, vaddr, &cudie);
	if (r)
		return r < 0 ? r : 0;
	lines = lines_ok(s, &cudie);
	n = find_scopes(s, &w, &cudie, chain);
	if (n < 0)
		return n;
	if (!n) {
		out[0].func = NULL;
		addr_line(&cudie, vaddr, lines, files, &out[0]);
		return out[0].file || out[0].line ? 1 : 0;
	}
	/* Innermost first; past @max levels, the innermost ones and the outermost. */
	for (int i = n - 1; i >= 0; i--) {
		if (lv == max - 1 && i > 0)
			i = 0;
		out[lv].func = die_name(&chain[i], names + lv * FR_SRCLINE_NAME_MAX);
		if (i == n - 1)
			addr_line(&cudie, vaddr, lines, files + lv * FR_SRCLINE_FILE_MAX, &out[lv]);
		else
			call_site(&cudie, &chain[i + 1], lines, files + lv * FR_SRCLINE_FILE_MAX,
				  &out[lv]);
		lv++;
	}
	return (int)lv;
}
