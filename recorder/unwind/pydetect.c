// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pydetect.c - recognise a CPython interpreter by its symbols. See pydetect.h.
 *
 * The offsets below are CPython 3.11's, as its internal headers lay the
 * structures out (pycore_runtime.h, pycore_interp.h, cpython/pystate.h,
 * pycore_frame.h, cpython/code.h): stable across 3.11.x, the same for
 * Debian's build and upstream's. Another minor version is another table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>

#include "pydetect.h"
#include "util.h"

struct pytable {
	uint32_t minor;			/* Py_Version >> 16: 0x030b is 3.11 */
	uint16_t off[FR_PYOFF_NR];
};

static const struct pytable tables[] = {
	{ 0x030b, {
		[FR_PYOFF_TSTATE_CURRENT] = 576,	/* gilstate.tstate_current */
		[FR_PYOFF_INTERP_HEAD] = 40,		/* interpreters.head */
		[FR_PYOFF_INTERP_THREADS] = 16,		/* threads.head */
		[FR_PYOFF_TSTATE_NEXT] = 8,
		[FR_PYOFF_TSTATE_TID] = 160,		/* native_thread_id */
		[FR_PYOFF_TSTATE_CFRAME] = 56,
		[FR_PYOFF_CFRAME_CURRENT] = 8,
		[FR_PYOFF_FRAME_CODE] = 32,
		[FR_PYOFF_FRAME_PREVIOUS] = 48,
		[FR_PYOFF_FRAME_INSTR] = 56,
		[FR_PYOFF_FRAME_ENTRY] = 68,
		[FR_PYOFF_CODE_CODE] = 184,		/* co_code_adaptive */
		[FR_PYOFF_CODE_PRINT] = 56,		/* co_argcount .. co_nlocalsplus */
	} },
};

const uint16_t *pydetect__table(uint32_t version)
{
	for (size_t i = 0; i < FR_ARRAY_SIZE(tables); i++)
		if (tables[i].minor == version >> 16)
			return tables[i].off;
	return NULL;
}

/* What the symbol tables say: the three symbols, and the eval loop's cold part if named. */
struct pysyms {
	GElf_Sym runtime, eval, version, cold;
	bool has_runtime, has_eval, has_version, has_cold;
};

static void scan_symtab(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct pysyms *ps)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n;

	if (!d || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!name || (name[0] != '_' && name[0] != 'P'))
			continue;
		if (!strcmp(name, "_PyRuntime")) {
			ps->runtime = sym;
			ps->has_runtime = true;
		} else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
			ps->eval = sym;
			ps->has_eval = true;
		} else if (!strcmp(name, "Py_Version")) {
			ps->version = sym;
			ps->has_version = true;
		} else if (!strcmp(name, "_PyEval_EvalFrameDefault.cold")) {
			ps->cold = sym;
			ps->has_cold = true;
		}
	}
}

/* The section holding [@addr, @addr + @len), with its data; NULL if none. */
static Elf_Data *section_at(Elf *e, uint64_t addr, uint64_t len, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, out) || out->sh_type == SHT_NOBITS || !(out->sh_flags & SHF_ALLOC))
			continue;
		if (addr >= out->sh_addr && len <= out->sh_size &&
		    addr - out->sh_addr <= out->sh_size - len)
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* Py_Version's value: a 32-bit little-endian word in read-only data. 0: unreadable. */
static uint32_t read_version(Elf *e, const GElf_Sym *sym)
{
	GElf_Shdr sh;
	Elf_Data *d = section_at(e, sym->st_value, 4, &sh);
	uint64_t at;
	uint32_t v;

	if (!d || !d->d_buf)
		return 0;
	at = sym->st_value - sh.sh_addr;
	if (at > d->d_size || d->d_size - at < 4)
		return 0;
	memcpy(&v, (const char *)d->d_buf + at, 4);
	return v;
}

/*
 * find_cold() - the eval loop's cold part in a file without .symtab
 * (Debian's python3.11): GCC moved its unlikely blocks into a function of
 * their own, which the loop jumps into and out of. The loop's bytes are
 * scanned for rel32 jumps (jmp, jcc) that leave it; the CFI range (FDE)
 * holding the most targets of the most-targeted addresses is the cold
 * part. Misdecoded bytes give scattered targets; the true part gets
 * hundreds (314 in 3.11.2). A handful is not enough to claim one.
 */
#define FR_COLD_MIN_HITS	16
#define FR_COLD_CANDS		8
static void find_cold(Elf *e, const GElf_Sym *eval, uint64_t cold[2])
{
	uint64_t lo = eval->st_value, hi = lo + eval->st_size, *tg = NULL;
	const uint8_t *p;
	size_t n = 0, cap = 0, best_hits = 0;
	Dwarf_CFI *cfi;
	GElf_Shdr sh;
	Elf_Data *d;

	cold[0] = cold[1] = 0;
	d = section_at(e, lo, eval->st_size, &sh);
	if (!d || !d->d_buf || !eval->st_size || eval->st_size > (64u << 20))
		return;
	p = (const uint8_t *)d->d_buf + (lo - sh.sh_addr);
	for (uint64_t i = 0; i + 6 <= eval->st_size; i++) {
		int64_t rel;
		uint64_t at, to;
		int32_t r32;

		if (p[i] == 0xe9) {
			memcpy(&r32, p + i + 1, 4);
			at = lo + i + 5;
		} else if (p[i] == 0x0f && (p[i + 1] & 0xf0) == 0x80) {
			memcpy(&r32, p + i + 2, 4);
			at = lo + i + 6;
		} else {
			continue;
		}
		rel = r32;
		to = at + (uint64_t)rel;
		if ((to >= lo && to < hi) || to < sh.sh_addr || to >= sh.sh_addr + sh.sh_size)
			continue;
		if (n == cap) {
			uint64_t *g = realloc(tg, (cap ? cap * 2 : 256) * sizeof(*tg));

			if (!g)
				goto out;
			tg = g;
			cap = cap ? cap * 2 : 256;
		}
		tg[n++] = to;
	}
	cfi = n >= FR_COLD_MIN_HITS ? dwarf_getcfi_elf(e) : NULL;
	/* The ranges of a few targets (spread over the list); the one that holds most wins. */
	for (size_t c = 0; cfi && c < FR_COLD_CANDS; c++) {
		Dwarf_Frame *fr = NULL;
		Dwarf_Addr s, t;
		size_t hits = 0;

		if (dwarf_cfi_addrframe(cfi, tg[c * n / FR_COLD_CANDS], &fr) || !fr)
			continue;
		if (dwarf_frame_info(fr, &s, &t, NULL) < 0) {
			free(fr);
			continue;
		}
		free(fr);
		for (size_t i = 0; i < n; i++)
			hits += tg[i] >= s && tg[i] < t;
		if (hits > best_hits && hits >= FR_COLD_MIN_HITS && (t <= lo || s >= hi)) {
			best_hits = hits;
			cold[0] = s;
			cold[1] = t;
		}
	}
	if (cfi)
		dwarf_cfi_end(cfi);
out:
	free(tg);
}

int pydetect__elf(Elf *e, struct pyfile *out)
{
	struct pysyms ps = {};
	const uint16_t *off;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;

	memset(out, 0, sizeof(*out));
	if (!gelf_getehdr(e, &eh))
		return -ENOEXEC;
	if (eh.e_machine != EM_X86_64)
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB))
			scan_symtab(e, scn, &sh, &ps);
	}
	if (!ps.has_runtime || !ps.has_eval || !ps.has_version || !ps.eval.st_size)
		return 0;
	out->version = read_version(e, &ps.version);
	off = pydetect__table(out->version);
	if (!off)
		return 0;
	out->runtime = ps.runtime.st_value;
	out->eval[0] = ps.eval.st_value;
	out->eval[1] = ps.eval.st_value + ps.eval.st_size;
	if (ps.has_cold && ps.cold.st_size) {
		out->eval[2] = ps.cold.st_value;
		out->eval[3] = ps.cold.st_value + ps.cold.st_size;
	} else {
		find_cold(e, &ps.eval, &out->eval[2]);
	}
	memcpy(out->off, off, sizeof(out->off));
	return 1;
}

void pydetect__proc(const struct pyfile *f, uint64_t bias, struct fr_pyproc *out)
{
	memset(out, 0, sizeof(*out));
	if (!f->runtime)
		return;
	out->runtime = f->runtime + bias;
	for (int i = 0; i < 4; i++)
		out->eval[i] = f->eval[i] ? f->eval[i] + bias : 0;
	memcpy(out->off, f->off, sizeof(out->off));
	out->version = f->version;
}
