// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_unwind.c - unit tests of recorder/unwind/rows.c: unwind rows from
 * .eh_frame / .debug_frame, their search, and the load bias.
 *
 * The rows of real libraries are checked against an independent reader of
 * the same CFI, `readelf --debug-dump=frames-interp`, at the first and the
 * last byte of every row readelf prints; hand-written CFI assembled here
 * covers each row kind at exact addresses. Needs readelf, objcopy and gcc
 * (a missing one fails); gcc -fuse-ld=lld is used when ld.lld is installed.
 * Temporary files live in one mkdtemp() directory, removed at the end.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <elfutils/libdw.h>

#include "rows.h"
#include "tap.h"

#define LIBC		"/lib/x86_64-linux-gnu/libc.so.6"
#define LIBLZMA		"/usr/lib/x86_64-linux-gnu/liblzma.so.5"
#define XZ		"/usr/bin/xz"
#define LDSO		"/lib64/ld-linux-x86-64.so.2"
#define LIBSTDCXX	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

static char tdir[] = "/tmp/fr_unwind.XXXXXX";

/* ------------------------------------------------------------- helpers */

/*
 * sh() - run the shell command made from @fmt, its output to stderr;
 * true when it exits 0 (a failure is reported as a diagnostic).
 */
static __attribute__((format(printf, 1, 2))) bool sh(const char *fmt, ...)
{
	char cmd[4096], full[4200];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "( %s ) >&2", cmd);
	fflush(NULL);
	st = system(full);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		tap_diag("command failed (status %d): %s", st, cmd);
		return false;
	}
	return true;
}

static bool have_tool(const char *name)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

/* xrealloc() - realloc() that bails out of the whole test when out of memory. */
static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	return p;
}

/* GROW() - make room for one more element in @arr, @n used of @cap. */
#define GROW(arr, n, cap) do {						\
	if ((n) == (cap)) {						\
		(cap) = (cap) ? (cap) * 2 : 256;			\
		(arr) = xrealloc((arr), (cap) * sizeof(*(arr)));	\
	}								\
} while (0)

/* build_path() - urows__build_fd() of the file at @path. */
static int build_path(const char *path, struct urows *u)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0) {
		memset(u, 0, sizeof(*u));
		return -errno;
	}
	err = urows__build_fd(fd, u);
	close(fd);
	return err;
}

static bool same_rows(const struct urows *a, const struct urows *b)
{
	return a->n == b->n && (!a->n || !memcmp(a->row, b->row, a->n * sizeof(*a->row)));
}

static const char *kind_name(unsigned kind)
{
	static const char *const names[] = {
		"RSP", "RBP", "PLT", "SIGNAL", "STOP", "NONE", "INVALID", "RA_RDI",
	};

	return names[kind & FR_UROW_KIND_MASK];
}

/* row_str() - a row as text: "RBP+16 rbp@cfa-16 (pc 0x1234)". */
static const char *row_str(const struct fr_urow *r, char *buf, size_t len)
{
	unsigned k;
	char extra[32] = "";

	if (!r) {
		snprintf(buf, len, "(no row)");
		return buf;
	}
	k = r->kind & FR_UROW_KIND_MASK;
	if (k == FR_UROW_PLT)
		snprintf(extra, sizeof(extra), " thr %d", r->rbp_off);
	else if (r->kind & FR_UROW_RBP_CFA)
		snprintf(extra, sizeof(extra), " rbp@cfa%+d", 8 * r->rbp_off);
	if (k == FR_UROW_RSP || k == FR_UROW_RBP || k == FR_UROW_PLT)
		snprintf(buf, len, "%s+%u%s (pc %#x)", kind_name(k), r->cfa_off, extra, r->pc);
	else
		snprintf(buf, len, "%s%s (kind %#x, pc %#x)", kind_name(k), extra, r->kind, r->pc);
	return buf;
}

/* kind_at() - the kind (with flags) of the row at @v; 0xff when none. */
static unsigned kind_at(const struct urows *u, uint64_t v)
{
	const struct fr_urow *r = urows__find(u, (uint32_t)v);

	return r ? r->kind : 0xff;
}

/* elf_open_path() - a libelf handle of @path, its fd in *@fd; NULL if not ELF. */
static Elf *elf_open_path(const char *path, int *fd)
{
	Elf *e;

	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	e = elf_begin(*fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		return NULL;
	}
	return e;
}

/* elf_section() - address, size and file offset of section @name of @path. */
static bool elf_section(const char *path, const char *name, uint64_t *addr, uint64_t *size,
			uint64_t *off)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	size_t shstrndx;
	int fd;
	Elf *e = elf_open_path(path, &fd);

	if (!e)
		return false;
	if (!elf_getshdrstrndx(e, &shstrndx)) {
		while (!found && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			const char *n;

			if (!gelf_getshdr(scn, &sh))
				continue;
			n = elf_strptr(e, shstrndx, sh.sh_name);
			if (n && !strcmp(n, name)) {
				*addr = sh.sh_addr;
				*size = sh.sh_size;
				if (off)
					*off = sh.sh_offset;
				found = true;
			}
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

/* elf_symbol() - st_value of symbol @name in @path: .symtab, else .dynsym. */
static bool elf_symbol(const char *path, const char *name, uint64_t *value)
{
	static const unsigned types[] = { SHT_SYMTAB, SHT_DYNSYM };
	bool found = false;
	int fd;
	Elf *e = elf_open_path(path, &fd);

	if (!e)
		return false;
	for (size_t t = 0; t < 2 && !found; t++) {
		Elf_Scn *scn = NULL;

		while (!found && (scn = elf_nextscn(e, scn))) {
			Elf_Data *d;
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != types[t] || !sh.sh_entsize ||
			    !(d = elf_getdata(scn, NULL)))
				continue;
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				const char *n;

				if (!gelf_getsym(d, (int)i, &s) || !s.st_value)
					continue;
				n = elf_strptr(e, sh.sh_link, s.st_name);
				if (n && !strcmp(n, name)) {
					*value = s.st_value;
					found = true;
					break;
				}
			}
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

/* copy_file() - the first @max bytes (all if 0) of @from into a new @to. */
static bool copy_file(const char *from, const char *to, size_t max)
{
	char buf[65536];
	size_t done = 0;
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	bool good = in >= 0 && out >= 0;

	while (good && (!max || done < max)) {
		size_t want = max && max - done < sizeof(buf) ? max - done : sizeof(buf);
		ssize_t n = read(in, buf, want);

		if (n <= 0)
			break;
		good = write(out, buf, (size_t)n) == n;
		done += (size_t)n;
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return good;
}

/* ------------------------------------------------------ readelf's view */

#define RF_VAL	24

/* One row of readelf's table: the rules of the CFA, rbp ("" if no column) and ra. */
struct rf_state {
	char cfa[RF_VAL], rbp[RF_VAL], ra[RF_VAL];
};

struct rf_cie {
	uint64_t off;
	bool signal;		/* 'S' in the augmentation */
	bool has_state;		/* readelf printed its initial row */
	struct rf_state st;
};

struct rf_row {
	uint64_t loc;
	struct rf_state st;
};

struct rf_fde {
	uint64_t lo, hi, cie;
	bool signal;
	size_t first, n;	/* its rows in rf.row */
};

struct rf {
	struct rf_cie *cie;
	size_t ncie, cie_cap;
	struct rf_fde *fde;
	size_t nfde, fde_cap;
	struct rf_row *row;
	size_t nrow, row_cap;
	size_t bad_lines;	/* table rows whose words do not fit the header */
	size_t other_lines;	/* lines not understood */
	char other[96];		/* the first one */
};

static void rf_free(struct rf *rf)
{
	free(rf->cie);
	free(rf->fde);
	free(rf->row);
	memset(rf, 0, sizeof(*rf));
}

static bool is_hex_word(const char *s, size_t len)
{
	if (strlen(s) != len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/*
 * rf_close_fde() - an FDE's table is complete: give it its CIE's 'S' flag,
 * and its CIE's initial row when readelf printed none (an FDE with only
 * DW_CFA_nop keeps the CIE's rules over its whole range).
 */
static void rf_close_fde(struct rf *rf, struct rf_fde *f)
{
	const struct rf_cie *c = NULL;

	for (size_t i = rf->ncie; i-- > 0 && !c;)
		if (rf->cie[i].off == f->cie)
			c = &rf->cie[i];
	if (!c)
		return;
	f->signal = c->signal;
	if (f->n || !c->has_state)
		return;
	GROW(rf->row, rf->nrow, rf->row_cap);
	rf->row[rf->nrow].loc = f->lo;
	rf->row[rf->nrow].st = c->st;
	f->first = rf->nrow++;
	f->n = 1;
}

/*
 * rf_parse() - read `readelf --debug-dump=frames-interp @path`, section
 * @sect only: each CIE's augmentation and initial row, each FDE's range
 * and table. Columns are found from each table's header line; a register
 * rule prints as two words ("r9 (r9)"), the second one is dropped. Returns
 * false when readelf could not run.
 */
static bool rf_parse(const char *path, const char *sect, struct rf *rf)
{
	int col_cfa = -1, col_rbp = -1, col_ra = -1, ncols = 0;
	enum { NOWHERE, IN_CIE, IN_FDE } where = NOWHERE;
	char cmd[PATH_MAX + 64], *line = NULL;
	bool in_sect = false;
	size_t cap = 0;
	FILE *p;
	int st;

	memset(rf, 0, sizeof(*rf));
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	fflush(NULL);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (getline(&line, &cap, p) > 0) {
		char *tok[80], *save = NULL, *t;
		int nt = 0;

		if (!strncmp(line, "Contents of the ", 16)) {
			size_t l = strlen(sect);

			if (where == IN_FDE)
				rf_close_fde(rf, &rf->fde[rf->nfde - 1]);
			where = NOWHERE;
			in_sect = !strncmp(line + 16, sect, l) && line[16 + l] == ' ';
			continue;
		}
		if (!in_sect)
			continue;
		for (t = strtok_r(line, " \t\n", &save); t && nt < 80; t = strtok_r(NULL, " \t\n", &save))
			if (t[0] != '(')
				tok[nt++] = t;
		if (!nt) {
			if (where == IN_FDE)
				rf_close_fde(rf, &rf->fde[rf->nfde - 1]);
			where = NOWHERE;
			continue;
		}
		if (nt >= 5 && !strcmp(tok[3], "CIE")) {
			GROW(rf->cie, rf->ncie, rf->cie_cap);
			memset(&rf->cie[rf->ncie], 0, sizeof(*rf->cie));
			rf->cie[rf->ncie].off = strtoull(tok[0], NULL, 16);
			rf->cie[rf->ncie].signal = tok[4][0] == '"' && strchr(tok[4], 'S');
			rf->ncie++;
			where = IN_CIE;
			col_cfa = -1;
			continue;
		}
		if (nt >= 6 && !strcmp(tok[3], "FDE") && !strncmp(tok[4], "cie=", 4)) {
			struct rf_fde *f;
			unsigned long long lo, hi;

			if (sscanf(tok[5], "pc=%llx..%llx", &lo, &hi) != 2) {
				rf->other_lines++;
				continue;
			}
			GROW(rf->fde, rf->nfde, rf->fde_cap);
			f = &rf->fde[rf->nfde++];
			memset(f, 0, sizeof(*f));
			f->lo = lo;
			f->hi = hi;
			f->cie = strtoull(tok[4] + 4, NULL, 16);
			f->first = rf->nrow;
			where = IN_FDE;
			col_cfa = -1;
			continue;
		}
		if (nt >= 2 && !strcmp(tok[1], "ZERO")) {
			where = NOWHERE;
			continue;
		}
		if (!strcmp(tok[0], "LOC")) {
			col_cfa = col_rbp = col_ra = -1;
			ncols = nt;
			for (int i = 1; i < nt; i++) {
				if (!strcmp(tok[i], "CFA"))
					col_cfa = i;
				else if (!strcmp(tok[i], "rbp"))
					col_rbp = i;
				else if (!strcmp(tok[i], "ra"))
					col_ra = i;
			}
			continue;
		}
		if (is_hex_word(tok[0], 16) && where != NOWHERE && col_cfa > 0) {
			struct rf_state s = { "", "", "" };

			if (nt != ncols) {
				rf->bad_lines++;
				continue;
			}
			snprintf(s.cfa, RF_VAL, "%s", tok[col_cfa]);
			if (col_rbp > 0)
				snprintf(s.rbp, RF_VAL, "%s", tok[col_rbp]);
			if (col_ra > 0)
				snprintf(s.ra, RF_VAL, "%s", tok[col_ra]);
			if (where == IN_CIE) {
				rf->cie[rf->ncie - 1].st = s;
				rf->cie[rf->ncie - 1].has_state = true;
			} else {
				GROW(rf->row, rf->nrow, rf->row_cap);
				rf->row[rf->nrow].loc = strtoull(tok[0], NULL, 16);
				rf->row[rf->nrow++].st = s;
				rf->fde[rf->nfde - 1].n++;
			}
			continue;
		}
		if (!rf->other_lines++)
			snprintf(rf->other, sizeof(rf->other), "%s", tok[0]);
	}
	if (where == IN_FDE)
		rf_close_fde(rf, &rf->fde[rf->nfde - 1]);
	free(line);
	st = pclose(p);
	/* readelf exits 1 after some warnings it does not print (libc.so.6). */
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) > 1)
		return false;
	return true;
}

/* What rows.c must give for one readelf row. */
struct want {
	uint8_t kind;		/* enum fr_urow_kind | FR_UROW_RBP_CFA */
	uint16_t cfa_off;
	int8_t rbp_off;
	bool plt_or_invalid;	/* "exp" in .plt: PLT, or INVALID */
};

/* reg_plus() - @s is "@reg+N" or "@reg-N": N in *@off. */
static bool reg_plus(const char *s, const char *reg, long *off)
{
	size_t l = strlen(reg);
	char *end;

	if (strncmp(s, reg, l) || (s[l] != '+' && s[l] != '-'))
		return false;
	*off = strtol(s + l, &end, 10);
	return *end == '\0';
}

/*
 * want_of() - the row rows.c must make of readelf's rules @s, in an FDE
 * whose CIE has 'S' (@signal), lying in .plt (@in_plt).
 */
static void want_of(const struct rf_state *s, bool signal, bool in_plt, struct want *w)
{
	long off;

	memset(w, 0, sizeof(*w));
	w->kind = FR_UROW_INVALID;
	if (signal) {
		w->kind = FR_UROW_SIGNAL;
		return;
	}
	if (!strcmp(s->ra, "u")) {
		w->kind = FR_UROW_STOP;
		return;
	}
	if (!strcmp(s->ra, "r5")) {
		/* the return address in rdi (glibc's __vfork): CFA = rsp + n only */
		if (reg_plus(s->cfa, "rsp", &off) && off >= 0 && off <= UINT16_MAX) {
			w->kind = FR_UROW_RA_RDI;
			w->cfa_off = (uint16_t)off;
		}
		return;
	}
	if (strcmp(s->ra, "c-8"))
		return;
	if (!strcmp(s->cfa, "exp")) {
		/* Only GCC's PLT expression is understood; rbp has no slot in a PLT row. */
		w->plt_or_invalid = in_plt && (!s->rbp[0] || !strcmp(s->rbp, "u") ||
					       !strcmp(s->rbp, "s"));
		return;
	}
	if (reg_plus(s->cfa, "rsp", &off) && off >= 0 && off <= UINT16_MAX)
		w->kind = FR_UROW_RSP;
	else if (reg_plus(s->cfa, "rbp", &off) && off >= 0 && off <= UINT16_MAX)
		w->kind = FR_UROW_RBP;
	else
		return;
	w->cfa_off = (uint16_t)off;
	if (!s->rbp[0] || !strcmp(s->rbp, "u") || !strcmp(s->rbp, "s"))
		return;
	if (reg_plus(s->rbp, "c", &off) && !(off & 7) && off / 8 >= INT8_MIN && off / 8 <= INT8_MAX) {
		w->kind |= FR_UROW_RBP_CFA;
		w->rbp_off = (int8_t)(off / 8);
		return;
	}
	memset(w, 0, sizeof(*w));
	w->kind = FR_UROW_INVALID;
}

static bool want_match(const struct want *w, const struct fr_urow *r)
{
	unsigned k;

	if (!r)
		return false;
	k = r->kind & FR_UROW_KIND_MASK;
	if (w->plt_or_invalid)
		return r->kind == FR_UROW_PLT || r->kind == FR_UROW_INVALID;
	if (r->kind != w->kind)
		return false;
	if ((k == FR_UROW_RSP || k == FR_UROW_RBP || k == FR_UROW_RA_RDI) && r->cfa_off != w->cfa_off)
		return false;
	return !(r->kind & FR_UROW_RBP_CFA) || r->rbp_off == w->rbp_off;
}

static const char *want_str(const struct want *w, char *buf, size_t len)
{
	unsigned k = w->kind & FR_UROW_KIND_MASK;

	if (w->plt_or_invalid)
		snprintf(buf, len, "PLT or INVALID");
	else if ((k == FR_UROW_RSP || k == FR_UROW_RBP) && (w->kind & FR_UROW_RBP_CFA))
		snprintf(buf, len, "%s+%u rbp@cfa%+d", kind_name(k), w->cfa_off, 8 * w->rbp_off);
	else if (k == FR_UROW_RSP || k == FR_UROW_RBP)
		snprintf(buf, len, "%s+%u", kind_name(k), w->cfa_off);
	else
		snprintf(buf, len, "%s", kind_name(k));
	return buf;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool u64_has(const uint64_t *v, size_t n, uint64_t x)
{
	return n && bsearch(&x, v, n, sizeof(*v), u64_cmp);
}

struct range {
	uint64_t lo, hi;
};

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The FDE ranges of a file, sorted, for "is this address in some FDE". */
struct cover {
	struct range *r;
	uint64_t *maxhi;	/* max hi of r[0..i] */
	size_t n;
};

/* cover_has() - whether @v lies in some FDE of @c. */
static bool cover_has(const struct cover *c, uint64_t v)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->r[mid].lo <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && c->maxhi[lo - 1] > v;
}

/* One library, its readelf view and its rows. */
struct lib {
	const char *path;
	struct rf rf;
	struct urows u;
	int err;
	bool parsed;
	uint64_t plt, plt_size;
	bool has_plt;
};

/*
 * check_at() - compare the row at @v with @w (or with SIGNAL when @v is
 * the byte before a signal FDE, where rows.c starts that FDE's row);
 * print the first mismatches. Returns whether they agree.
 */
static bool check_at(const struct lib *l, const struct rf_fde *f, const struct rf_state *s,
		     uint64_t v, const struct want *w0, const uint64_t *sig, size_t nsig,
		     size_t *bad)
{
	const struct fr_urow *r = urows__find(&l->u, (uint32_t)v);
	struct want w = *w0;
	char a[80], b[80];

	if (!f->signal && u64_has(sig, nsig, v + 1)) {
		memset(&w, 0, sizeof(w));
		w.kind = FR_UROW_SIGNAL;
	}
	if (want_match(&w, r))
		return true;
	if ((*bad)++ < 5)
		tap_diag("  %s: FDE %#llx..%#llx at %#llx: readelf CFA %s rbp %s ra %s: want %s, got %s",
			 l->path, (unsigned long long)f->lo, (unsigned long long)f->hi,
			 (unsigned long long)v, s ? s->cfa : "-", s && s->rbp[0] ? s->rbp : "-",
			 s ? s->ra : "-", want_str(&w, a, sizeof(a)), row_str(r, b, sizeof(b)));
	return false;
}

/* ------------------------------------------------ 1. rows vs readelf */

/*
 * test_vs_readelf() - every row readelf prints for @l, at its first and
 * its last byte, and the byte past each FDE that no other FDE covers; then
 * every row of the table starts where readelf has a row, an FDE ends, or a
 * signal FDE starts one byte later.
 */
static void test_vs_readelf(struct lib *l)
{
	size_t rows = 0, addrs = 0, gaps = 0, bad = 0, nsig = 0, nallow = 0, stray = 0, nover = 0;
	uint64_t *sig, *allow;
	struct cover c = { 0 };
	const struct rf *rf = &l->rf;

	if (!ok(l->parsed && rf->nfde > 0, "%s: readelf --debug-dump=frames-interp lists %zu FDEs",
		l->path, rf->nfde) ||
	    !is_int(l->err, 0, "%s: urows__build_fd", l->path)) {
		return;
	}
	is_int(rf->bad_lines, 0, "%s: every readelf table row fits its header", l->path);
	if (rf->other_lines)
		tap_diag("  %s: %zu readelf lines not understood, the first starts with '%s'",
			 l->path, rf->other_lines, rf->other);

	c.r = calloc(rf->nfde + 1, sizeof(*c.r));
	c.maxhi = calloc(rf->nfde + 1, sizeof(*c.maxhi));
	sig = calloc(rf->nfde + 1, sizeof(*sig));
	allow = calloc(2 * rf->nfde + rf->nrow + 1, sizeof(*allow));
	if (!c.r || !c.maxhi || !sig || !allow) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < rf->nfde; i++) {
		const struct rf_fde *f = &rf->fde[i];

		if (f->lo >= f->hi)
			continue;
		c.r[c.n++] = (struct range){ f->lo, f->hi };
		if (f->signal)
			sig[nsig++] = f->lo;
	}
	qsort(c.r, c.n, sizeof(*c.r), range_cmp);
	qsort(sig, nsig, sizeof(*sig), u64_cmp);
	for (size_t i = 0; i < c.n; i++) {
		c.maxhi[i] = i && c.maxhi[i - 1] > c.r[i].hi ? c.maxhi[i - 1] : c.r[i].hi;
		nover += i && c.maxhi[i - 1] > c.r[i].lo;
	}
	is_int(nover, 0, "%s: no two FDEs overlap (else the checks below are ambiguous)", l->path);

	for (size_t i = 0; i < rf->nfde; i++) {
		const struct rf_fde *f = &rf->fde[i];
		bool in_plt = l->has_plt && f->lo >= l->plt && f->lo < l->plt + l->plt_size;
		struct want w;

		if (f->lo >= f->hi || f->hi > UINT32_MAX)
			continue;
		for (size_t k = 0; k < f->n; k++) {
			const struct rf_row *r = &rf->row[f->first + k];
			uint64_t end = f->hi;

			for (size_t j = k + 1; j < f->n; j++) {
				if (rf->row[f->first + j].loc > r->loc) {
					end = rf->row[f->first + j].loc;
					break;
				}
			}
			/* A row that a later one at the same address replaces, or past the end. */
			if (r->loc < f->lo || r->loc >= f->hi ||
			    (k + 1 < f->n && rf->row[f->first + k + 1].loc <= r->loc))
				continue;
			if (end > f->hi)
				end = f->hi;
			want_of(&r->st, f->signal, in_plt, &w);
			rows++;
			allow[nallow++] = r->loc;
			check_at(l, f, &r->st, r->loc, &w, sig, nsig, &bad);
			addrs++;
			if (end - 1 != r->loc) {
				check_at(l, f, &r->st, end - 1, &w, sig, nsig, &bad);
				addrs++;
			}
		}
		allow[nallow++] = f->hi;
		if (f->signal)
			allow[nallow++] = f->lo - 1;
		if (!cover_has(&c, f->hi)) {
			memset(&w, 0, sizeof(w));
			w.kind = FR_UROW_NONE;
			check_at(l, f, NULL, f->hi, &w, sig, nsig, &bad);
			gaps++;
		}
	}
	qsort(allow, nallow, sizeof(*allow), u64_cmp);
	for (uint32_t i = 0; i < l->u.n; i++) {
		if (u64_has(allow, nallow, l->u.row[i].pc))
			continue;
		if (stray++ < 5)
			tap_diag("  %s: row %u at %#x is at no readelf row or FDE end", l->path, i,
				 l->u.row[i].pc);
	}
	tap_diag("%s: %zu FDEs, %zu readelf rows checked (%zu addresses), %zu gaps, %zu mismatches;"
		 " %u rows built (invalid %u plt %u signal %u stop %u)",
		 l->path, rf->nfde, rows, addrs, gaps, bad, l->u.n, l->u.st.invalid, l->u.st.plt,
		 l->u.st.signal, l->u.st.stop);
	ok(rows > 0, "%s: readelf rows to compare (%zu)", l->path, rows);
	is_int(bad, 0, "%s: every readelf row's first and last byte, and every gap, agree", l->path);
	is_int(stray, 0, "%s: every row starts at a readelf row, an FDE end or a signal FDE - 1",
	       l->path);
	is_int(l->u.st.fdes, rf->nfde, "%s: stats count every FDE readelf lists", l->path);
	is_int(l->u.st.signal, nsig, "%s: stats count the signal FDEs", l->path);
	free(c.r);
	free(c.maxhi);
	free(sig);
	free(allow);
}

/* ------------------------------------------------ 2. search */

/* linear_find() - urows__find() the slow way. */
static const struct fr_urow *linear_find(const struct urows *u, uint32_t v)
{
	const struct fr_urow *best = NULL;

	for (uint32_t i = 0; i < u->n && u->row[i].pc <= v; i++)
		best = &u->row[i];
	return best;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/*
 * test_search() - urows__find() at the edges of rows of @u (built from
 * @what), then against a linear scan; also the table's own invariants.
 */
static void test_search(const struct urows *u, const char *what)
{
	size_t bad = 0, unsorted = 0, dup = 0, nbad = 0, checked = 0;
	uint32_t pick[64], npick = 0;
	uint32_t lo, hi;

	if (!ok(u->n > 3, "%s: a table to search (%u rows)", what, u->n))
		return;
	for (uint32_t i = 1; i < u->n; i++) {
		unsorted += u->row[i].pc <= u->row[i - 1].pc;
		dup += u->row[i].kind == u->row[i - 1].kind &&
		       u->row[i].cfa_off == u->row[i - 1].cfa_off &&
		       u->row[i].rbp_off == u->row[i - 1].rbp_off;
	}
	for (uint32_t i = 0; i < u->n; i++) {
		unsigned k = u->row[i].kind & FR_UROW_KIND_MASK;

		nbad += k > FR_UROW_RA_RDI || ((u->row[i].kind & FR_UROW_RBP_CFA) &&
						k != FR_UROW_RSP && k != FR_UROW_RBP);
	}
	is_int(unsorted, 0, "%s: rows strictly sorted by pc", what);
	is_int(dup, 0, "%s: no row repeats its predecessor's rule", what);
	is_int(nbad, 0, "%s: every kind is known, RBP_CFA only on RSP/RBP rows", what);
	ok((u->row[0].kind & FR_UROW_KIND_MASK) != FR_UROW_NONE, "%s: the first row is not a gap",
	   what);
	is_int(u->row[u->n - 1].kind, FR_UROW_NONE, "%s: the last row is the gap after the last FDE",
	       what);

	pick[npick++] = 0;
	pick[npick++] = 1;
	pick[npick++] = u->n / 3;
	pick[npick++] = u->n / 2;
	pick[npick++] = u->n - 2;
	pick[npick++] = u->n - 1;
	while (npick < 64)
		pick[npick++] = (uint32_t)(rnd() % u->n);
	for (uint32_t i = 0; i < npick; i++) {
		uint32_t k = pick[i];
		const struct fr_urow *r = &u->row[k];

		bad += urows__find(u, r->pc) != r;
		if (k)
			bad += urows__find(u, r->pc - 1) != &u->row[k - 1];
		if (k + 1 < u->n)
			bad += urows__find(u, u->row[k + 1].pc - 1) != r;
		checked++;
	}
	is_int(bad, 0, "%s: at %zu rows: pc finds the row, pc - 1 the previous, next pc - 1 the row",
	       what, checked);
	ok(u->row[0].pc == 0 || urows__find(u, u->row[0].pc - 1) == NULL,
	   "%s: below the first row (%#x): NULL", what, u->row[0].pc);
	ok(u->row[0].pc == 0 || urows__find(u, 0) == NULL, "%s: at 0: NULL", what);
	ok(urows__find(u, UINT32_MAX) == &u->row[u->n - 1], "%s: UINT32_MAX: the last row", what);

	bad = 0;
	lo = u->row[0].pc > 64 ? u->row[0].pc - 64 : 0;
	hi = u->row[u->n - 1].pc + 64;
	for (int i = 0; i < 10000; i++) {
		uint32_t v = lo + (uint32_t)(rnd() % (hi - lo));

		bad += urows__find(u, v) != linear_find(u, v);
	}
	is_int(bad, 0, "%s: 10000 random addresses in [%#x, %#x): as a linear scan", what, lo, hi);
}

/* test_search_small() - tables of 0, 1 and 2 rows made by hand. */
static void test_search_small(void)
{
	struct fr_urow v[2] = { { .pc = 0x100, .kind = FR_UROW_RSP, .cfa_off = 8 },
				{ .pc = 0x200, .kind = FR_UROW_NONE } };
	struct urows u = { 0 };

	ok(urows__find(&u, 0) == NULL && urows__find(&u, UINT32_MAX) == NULL,
	   "an empty table finds nothing");
	u.row = v;
	u.n = 1;
	ok(urows__find(&u, 0xff) == NULL && urows__find(&u, 0x100) == &v[0] &&
	   urows__find(&u, UINT32_MAX) == &v[0], "one row: NULL below, itself from its pc on");
	u.n = 2;
	ok(urows__find(&u, 0x1ff) == &v[0] && urows__find(&u, 0x200) == &v[1] &&
	   urows__find(&u, UINT32_MAX) == &v[1] && urows__find(&u, 0) == NULL,
	   "two rows: each from its pc, NULL below the first");
	v[0].pc = 0;
	ok(urows__find(&u, 0) == &v[0], "a row at pc 0 is found at 0");
}

/* ------------------------------------------------ 3. PLT */

/*
 * plt_expr() - from `readelf --debug-dump=frames @path`, the rsp offset and
 * the threshold of the DW_CFA_def_cfa_expression of the FDE at @lo.
 */
static bool plt_expr(const char *path, uint64_t lo, int *off, int *thr)
{
	char cmd[PATH_MAX + 64], pc[64], *line = NULL;
	bool in = false, found = false;
	size_t cap = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s' 2>/dev/null", path);
	snprintf(pc, sizeof(pc), "pc=%016llx..", (unsigned long long)lo);
	fflush(NULL);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (getline(&line, &cap, p) > 0) {
		const char *e, *b;

		if (strstr(line, " FDE ") || strstr(line, " CIE")) {
			in = strstr(line, pc) != NULL;
			continue;
		}
		if (!in || found || !(e = strstr(line, "DW_CFA_def_cfa_expression")))
			continue;
		b = strstr(e, "DW_OP_breg7 (rsp): ");
		e = strstr(e, "DW_OP_and; DW_OP_lit");
		if (b && e && sscanf(b + 19, "%d", off) == 1 && sscanf(e + 20, "%d", thr) == 1)
			found = true;
	}
	free(line);
	pclose(p);
	return found;
}

/*
 * test_plt() - the lazy-binding .plt of @l: the row at readelf's "exp" row
 * is PLT, with the offset and threshold of the expression readelf decodes,
 * and the threshold is where the entries' push ends.
 */
static void test_plt(struct lib *l)
{
	const struct rf_fde *f = NULL;
	const struct fr_urow *r;
	uint64_t loc = 0, off = 0, a, s;
	int eoff = -1, ethr = -1;
	char b[80];

	if (!ok(l->has_plt, "%s: has a .plt", l->path) || l->err)
		return;
	for (size_t i = 0; i < l->rf.nfde && !f; i++)
		if (l->rf.fde[i].lo == l->plt)
			f = &l->rf.fde[i];
	if (!ok(f != NULL, "%s: readelf has an FDE at .plt %#llx", l->path,
		(unsigned long long)l->plt))
		return;
	for (size_t k = 0; k < f->n && !loc; k++)
		if (!strcmp(l->rf.row[f->first + k].st.cfa, "exp"))
			loc = l->rf.row[f->first + k].loc;
	if (!ok(loc, "%s: readelf's .plt FDE has an exp CFA row (at %#llx)", l->path,
		(unsigned long long)loc))
		return;
	r = urows__find(&l->u, (uint32_t)loc);
	ok(r && r->kind == FR_UROW_PLT && r->pc == loc, "%s: a PLT row starts at %#llx: %s",
	   l->path, (unsigned long long)loc, row_str(r, b, sizeof(b)));
	if (!r || r->kind != FR_UROW_PLT)
		return;
	is_int(r->cfa_off, 8, "%s: PLT cfa_off 8", l->path);
	ok(r->rbp_off == 11 || r->rbp_off == 10, "%s: PLT threshold 11 or 10 (%d)", l->path,
	   r->rbp_off);
	ok(plt_expr(l->path, l->plt, &eoff, &ethr), "%s: readelf decodes the .plt expression",
	   l->path);
	ok(eoff == r->cfa_off && ethr == r->rbp_off,
	   "%s: readelf's breg7 %d / lit%d are the row's cfa_off %u / threshold %d", l->path, eoff,
	   ethr, r->cfa_off, r->rbp_off);
	r = urows__find(&l->u, (uint32_t)(l->plt + l->plt_size - 1));
	ok(r && r->kind == FR_UROW_PLT, "%s: the last .plt byte is still PLT", l->path);

	/* The threshold is the offset of the jmp after "push $n" in a lazy entry. */
	if (elf_section(l->path, ".plt", &a, &s, &off) && s >= 32) {
		uint8_t e[16];
		int fd = open(l->path, O_RDONLY | O_CLOEXEC);
		bool rd = fd >= 0 && pread(fd, e, 16, (off_t)(off + 16)) == 16;

		if (fd >= 0)
			close(fd);
		if (rd && e[0] == 0xff && e[1] == 0x25 && e[6] == 0x68 && e[11] == 0xe9)
			is_int(r->rbp_off, 11, "%s: jmp *GOT; push; jmp: the push ends at 11",
			       l->path);
		else if (rd && e[0] == 0xf3 && e[4] == 0x68 && e[9] == 0xf2)
			is_int(r->rbp_off, 9, "%s: endbr64; push; bnd jmp: the push ends at 9",
			       l->path);
		else
			ok(rd, "%s: first .plt entry read (layout not recognized, bytes %02x %02x)",
			   l->path, e[0], e[1]);
	}
}

/* ------------------------------------------------ 4. signal frames */

/* sig_fde() - the range of the first FDE whose CIE has augmentation "zRS". */
static bool sig_fde(const char *path, uint64_t *lo, uint64_t *hi)
{
	char cmd[PATH_MAX + 64], *line = NULL, cie[16] = "", want[32] = "";
	bool found = false;
	size_t cap = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s' 2>/dev/null", path);
	fflush(NULL);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (getline(&line, &cap, p) > 0) {
		unsigned long long a, b;
		char *c;

		if (strstr(line, " CIE")) {
			sscanf(line, "%15s", cie);
			continue;
		}
		if (!want[0] && strstr(line, "Augmentation:") && strstr(line, "\"zRS\""))
			snprintf(want, sizeof(want), "cie=%s ", cie);
		if (found || !want[0] || !strstr(line, want) || !(c = strstr(line, "pc=")))
			continue;
		if (sscanf(c, "pc=%llx..%llx", &a, &b) == 2) {
			*lo = a;
			*hi = b;
			found = true;
		}
	}
	free(line);
	pclose(p);
	return found;
}

/* test_signal() - libc's __restore_rt: SIGNAL from one byte before its FDE. */
static void test_signal(const struct lib *l)
{
	uint64_t lo = 0, hi = 0;
	const struct fr_urow *r;
	bool found;
	char b[80];

	found = sig_fde(l->path, &lo, &hi);
	if (!ok(found && lo, "%s: readelf shows an FDE of a \"zRS\" CIE (%#llx..%#llx)", l->path,
		(unsigned long long)lo, (unsigned long long)hi) || l->err)
		return;
	r = urows__find(&l->u, (uint32_t)(lo - 1));
	ok(r && r->kind == FR_UROW_SIGNAL && r->pc == lo - 1,
	   "%s: a SIGNAL row starts at FDE start - 1: %s", l->path, row_str(r, b, sizeof(b)));
	is_int(kind_at(&l->u, lo), FR_UROW_SIGNAL, "%s: SIGNAL at the FDE start", l->path);
	is_int(kind_at(&l->u, hi - 1), FR_UROW_SIGNAL, "%s: SIGNAL at its last byte", l->path);
	ok(kind_at(&l->u, lo - 2) != FR_UROW_SIGNAL, "%s: not SIGNAL two bytes before", l->path);
	ok(kind_at(&l->u, hi) != FR_UROW_SIGNAL, "%s: not SIGNAL past its end", l->path);
	ok(l->u.st.signal >= 1, "%s: stats count a signal FDE (%u)", l->path, l->u.st.signal);
}

/* ------------------------------------------------ 5. hand-written CFI */

/*
 * Each function has labels where its rule changes; the checks name them.
 * VARIANT 2 changes f_big's frame (test 6); DEBUG_FRAME puts the CFI in
 * .debug_frame instead of .eh_frame.
 */
static const char asm_src[] =
	"#ifndef VARIANT\n#define VARIANT 1\n#endif\n"
	"#if VARIANT == 2\n#define BIG 32000\n#else\n#define BIG 65000\n#endif\n"
	"#ifdef DEBUG_FRAME\n\t.cfi_sections .debug_frame\n#endif\n"
	"#define FN(n) .globl n; .type n, @function; n:\n"
	"\t.text\n"
	"\t.p2align 4\n"
	"FN(pre)\n"
	"\t.fill 16, 1, 0xcc\n"
	/* CFA rsp, then rbp; rbp saved at CFA - 16, then restored */
	"FN(f_rbp)\n"
	"\t.cfi_startproc\n"
	"\tpush %rbp\n"
	"f_rbp_1:\n"
	"\t.cfi_def_cfa_offset 16\n"
	"\t.cfi_offset %rbp, -16\n"
	"\tmov %rsp, %rbp\n"
	"f_rbp_2:\n"
	"\t.cfi_def_cfa_register %rbp\n"
	"\tsub $4096, %rsp\n"
	"\tnop\n"
	"\tleave\n"
	"f_rbp_3:\n"
	"\t.cfi_def_cfa %rsp, 8\n"
	"\t.cfi_restore %rbp\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	"f_rbp_end:\n"
	/* bytes no FDE covers */
	"\t.fill 32, 1, 0xcc\n"
	/* outermost: the return address is undefined */
	"FN(f_stop)\n"
	"\t.cfi_startproc\n"
	"\t.cfi_undefined %rip\n"
	"\txor %ebp, %ebp\n"
	"\thlt\n"
	"\t.cfi_endproc\n"
	/* right after the previous FDE: no gap between them */
	"FN(f_big)\n"
	"\t.cfi_startproc\n"
	"\tsub $BIG, %rsp\n"
	"f_big_1:\n"
	"\t.cfi_adjust_cfa_offset BIG\n"
	"\tadd $BIG, %rsp\n"
	"f_big_2:\n"
	"\t.cfi_adjust_cfa_offset -BIG\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	/* a CFA offset beyond 16 bits */
	"FN(f_huge)\n"
	"\t.cfi_startproc\n"
	"\tsub $0x20000, %rsp\n"
	"f_huge_1:\n"
	"\t.cfi_adjust_cfa_offset 0x20000\n"
	"\tadd $0x20000, %rsp\n"
	"f_huge_2:\n"
	"\t.cfi_adjust_cfa_offset -0x20000\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	/* remember / restore state around an early return */
	"FN(f_state)\n"
	"\t.cfi_startproc\n"
	"\tpush %rbx\n"
	"f_state_1:\n"
	"\t.cfi_def_cfa_offset 16\n"
	"\t.cfi_offset %rbx, -16\n"
	"\ttest %edi, %edi\n"
	"\tjz f_state_3\n"
	"\t.cfi_remember_state\n"
	"\tpop %rbx\n"
	"f_state_2:\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\t.cfi_restore %rbx\n"
	"\tret\n"
	"f_state_3:\n"
	"\t.cfi_restore_state\n"
	"\tpop %rbx\n"
	"f_state_4:\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	/* rbp saved in another register: unsupported */
	"FN(f_rbpreg)\n"
	"\t.cfi_startproc\n"
	"\tmov %rbp, %r11\n"
	"f_rbpreg_1:\n"
	"\t.cfi_register %rbp, %r11\n"
	"\tmov %r11, %rbp\n"
	"f_rbpreg_2:\n"
	"\t.cfi_restore %rbp\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	/* the return address elsewhere than CFA - 8 */
	"FN(f_ra)\n"
	"\t.cfi_startproc\n"
	"\tpush %rax\n"
	"f_ra_1:\n"
	"\t.cfi_def_cfa_offset 16\n"
	"\t.cfi_offset %rip, -16\n"
	"\tpop %rax\n"
	"f_ra_2:\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\t.cfi_offset %rip, -8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	/* CFA by expressions: breg7 8; deref (unsupported), then breg7 16 (rsp + 16) */
	"FN(f_cfaexp)\n"
	"\t.cfi_startproc\n"
	"\tnop\n"
	"f_cfaexp_1:\n"
	"\t.cfi_escape 0x0f, 0x03, 0x77, 0x08, 0x06\n"
	"\tnop\n"
	"f_cfaexp_2:\n"
	"\t.cfi_escape 0x0f, 0x02, 0x77, 0x10\n"
	"\tnop\n"
	"f_cfaexp_3:\n"
	"\t.cfi_def_cfa %rsp, 8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	/* glibc's __vfork: the return address popped into rdi, pushed back after the syscall */
	"FN(f_vfork)\n"
	"\t.cfi_startproc\n"
	"\tpop %rdi\n"
	"f_vfork_1:\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_register %rip, %rdi\n"
	"\tnop\n"
	"\tpush %rdi\n"
	"f_vfork_2:\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	/* the return address in another register: not followed */
	"FN(f_rarsi)\n"
	"\t.cfi_startproc\n"
	"\tpop %rsi\n"
	"f_rarsi_1:\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_register %rip, %rsi\n"
	"\tpush %rsi\n"
	"f_rarsi_2:\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_same_value %rip\n"
	"\t.cfi_offset %rip, -8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	/* CFA on r10 */
	"FN(f_r10)\n"
	"\t.cfi_startproc\n"
	"\tlea 8(%rsp), %r10\n"
	"f_r10_1:\n"
	"\t.cfi_def_cfa %r10, 0\n"
	"\tnop\n"
	"f_r10_2:\n"
	"\t.cfi_def_cfa %rsp, 8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	/* a negative CFA offset */
	"FN(f_neg)\n"
	"\t.cfi_startproc\n"
	"\tnop\n"
	"f_neg_1:\n"
	"\t.cfi_def_cfa %rsp, -8\n"
	"\tnop\n"
	"f_neg_2:\n"
	"\t.cfi_def_cfa %rsp, 8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	/* rbp slots at the ends of the int8 range, beyond it, and above the CFA */
	"FN(f_slot)\n"
	"\t.cfi_startproc\n"
	"\tnop\n"
	"f_slot_1:\n"
	"\t.cfi_offset %rbp, -1024\n"
	"\tnop\n"
	"f_slot_2:\n"
	"\t.cfi_offset %rbp, -1032\n"
	"\tnop\n"
	"f_slot_3:\n"
	"\t.cfi_offset %rbp, 1016\n"
	"\tnop\n"
	"f_slot_4:\n"
	"\t.cfi_offset %rbp, 1024\n"
	"\tnop\n"
	"f_slot_5:\n"
	"\t.cfi_same_value %rbp\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	/* GCC's PLT expression (threshold 11), alone and with rbp saved */
	"FN(f_plt)\n"
	"\t.cfi_startproc\n"
	"\t.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22\n"
	"\tnop\n"
	"\tnop\n"
	"\t.cfi_endproc\n"
	"FN(f_pltrbp)\n"
	"\t.cfi_startproc\n"
	"\t.cfi_offset %rbp, -16\n"
	"\t.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22\n"
	"\tnop\n"
	"\t.cfi_endproc\n"
	"f_pltrbp_end:\n"
	/* a gap, then a signal trampoline after a nop, as glibc does */
	"\t.fill 16, 1, 0xcc\n"
	"\tnop\n"
	"FN(f_sig)\n"
	"\t.cfi_startproc\n"
	"\t.cfi_signal_frame\n"
	"\tmov $15, %eax\n"
	"\tsyscall\n"
	"\t.cfi_endproc\n"
	"f_sig_end:\n"
	"\t.fill 16, 1, 0xcc\n"
	/* a signal trampoline right after another function's FDE */
	"FN(f_before)\n"
	"\t.cfi_startproc\n"
	"\tpush %rbx\n"
	"f_before_1:\n"
	"\t.cfi_def_cfa_offset 16\n"
	"\tpop %rbx\n"
	"f_before_2:\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\tnop\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	"FN(f_sig2)\n"
	"\t.cfi_startproc\n"
	"\t.cfi_signal_frame\n"
	"\tmov $15, %eax\n"
	"f_sig2_1:\n"
	"\tsyscall\n"
	"\t.cfi_endproc\n"
	"f_sig2_end:\n"
	"\tnop\n"
	"\t.section .note.GNU-stack, \"\", @progbits\n";

/* A 32-bit function with CFI, for gcc -m32. */
static const char asm32_src[] =
	"\t.text\n"
	"\t.globl f32\n"
	"f32:\n"
	"\t.cfi_startproc\n"
	"\tpush %ebp\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\tpop %ebp\n"
	"\t.cfi_def_cfa_offset 4\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	"\t.section .note.GNU-stack, \"\", @progbits\n";

/* build_src() - assemble @text into @out with gcc -shared -nostdlib @flags. */
static bool build_src(const char *text, const char *out, const char *flags)
{
	size_t len = strlen(text);
	char src[PATH_MAX];
	FILE *f;

	snprintf(src, sizeof(src), "%s/unwind.S", tdir);
	f = fopen(src, "w");
	if (!f || fwrite(text, 1, len, f) != len) {
		if (f)
			fclose(f);
		return false;
	}
	fclose(f);
	return sh("gcc -shared -nostdlib %s -o '%s' '%s'", flags, out, src);
}

/* build_asm() - assemble asm_src into @out with @flags. */
static bool build_asm(const char *out, const char *flags)
{
	return build_src(asm_src, out, flags);
}

/* An expected row at a label (+ delta bytes). */
struct hand {
	const char *sym;
	int delta;
	uint8_t kind;
	uint16_t cfa_off;
	int8_t rbp_off;
	bool starts;		/* a row starts exactly here */
};

#define H(s, d, k, c, r, st)	{ s, d, k, c, r, st }
#define RBPC			FR_UROW_RBP_CFA

static const struct hand hand_rows[] = {
	H("pre", 0, 0xff, 0, 0, false),
	H("pre", 15, 0xff, 0, 0, false),
	H("f_rbp", 0, FR_UROW_RSP, 8, 0, true),
	H("f_rbp_1", 0, FR_UROW_RSP | RBPC, 16, -2, true),
	H("f_rbp_2", -1, FR_UROW_RSP | RBPC, 16, -2, false),
	H("f_rbp_2", 0, FR_UROW_RBP | RBPC, 16, -2, true),
	H("f_rbp_3", -1, FR_UROW_RBP | RBPC, 16, -2, false),
	H("f_rbp_3", 0, FR_UROW_RSP, 8, 0, true),
	H("f_rbp_end", -1, FR_UROW_RSP, 8, 0, false),
	H("f_rbp_end", 0, FR_UROW_NONE, 0, 0, true),
	H("f_stop", -1, FR_UROW_NONE, 0, 0, false),
	H("f_stop", 0, FR_UROW_STOP, 0, 0, true),
	H("f_big", -1, FR_UROW_STOP, 0, 0, false),
	H("f_big", 0, FR_UROW_RSP, 8, 0, true),
	H("f_big_1", 0, FR_UROW_RSP, 65008, 0, true),
	H("f_big_2", 0, FR_UROW_RSP, 8, 0, true),
	H("f_huge_1", 0, FR_UROW_INVALID, 0, 0, true),
	H("f_huge_2", -1, FR_UROW_INVALID, 0, 0, false),
	H("f_huge_2", 0, FR_UROW_RSP, 8, 0, true),
	H("f_state_1", 0, FR_UROW_RSP, 16, 0, true),
	H("f_state_2", 0, FR_UROW_RSP, 8, 0, true),
	H("f_state_3", 0, FR_UROW_RSP, 16, 0, true),
	H("f_state_4", 0, FR_UROW_RSP, 8, 0, true),
	H("f_rbpreg_1", 0, FR_UROW_INVALID, 0, 0, true),
	H("f_rbpreg_2", 0, FR_UROW_RSP, 8, 0, true),
	H("f_ra_1", 0, FR_UROW_INVALID, 0, 0, true),
	H("f_ra_2", 0, FR_UROW_RSP, 8, 0, true),
	H("f_cfaexp", 0, FR_UROW_RSP, 8, 0, false),
	H("f_cfaexp_1", 0, FR_UROW_INVALID, 0, 0, true),
	H("f_cfaexp_2", 0, FR_UROW_RSP, 16, 0, true),
	H("f_cfaexp_3", 0, FR_UROW_RSP, 8, 0, true),
	H("f_vfork", 0, FR_UROW_RSP, 8, 0, false),
	H("f_vfork_1", 0, FR_UROW_RA_RDI, 0, 0, true),
	H("f_vfork_2", -1, FR_UROW_RA_RDI, 0, 0, false),
	H("f_vfork_2", 0, FR_UROW_RA_RDI, 8, 0, true),
	H("f_rarsi_1", 0, FR_UROW_INVALID, 0, 0, true),
	H("f_rarsi_2", 0, FR_UROW_RSP, 8, 0, true),
	H("f_r10_1", 0, FR_UROW_INVALID, 0, 0, true),
	H("f_r10_2", 0, FR_UROW_RSP, 8, 0, true),
	H("f_neg_1", 0, FR_UROW_INVALID, 0, 0, true),
	H("f_neg_2", 0, FR_UROW_RSP, 8, 0, true),
	H("f_slot", 0, FR_UROW_RSP, 8, 0, false),
	H("f_slot_1", 0, FR_UROW_RSP | RBPC, 8, -128, true),
	H("f_slot_2", 0, FR_UROW_INVALID, 0, 0, true),
	H("f_slot_3", 0, FR_UROW_RSP | RBPC, 8, 127, true),
	H("f_slot_4", 0, FR_UROW_INVALID, 0, 0, true),
	H("f_slot_5", 0, FR_UROW_RSP, 8, 0, true),
	H("f_plt", 0, FR_UROW_PLT, 8, 11, true),
	H("f_pltrbp", 0, FR_UROW_INVALID, 0, 0, true),
	H("f_pltrbp_end", 0, FR_UROW_NONE, 0, 0, true),
	H("f_sig", -2, FR_UROW_NONE, 0, 0, false),
	H("f_sig", -1, FR_UROW_SIGNAL, 0, 0, true),
	H("f_sig", 0, FR_UROW_SIGNAL, 0, 0, false),
	H("f_sig_end", -1, FR_UROW_SIGNAL, 0, 0, false),
	H("f_sig_end", 0, FR_UROW_NONE, 0, 0, true),
	H("f_before", 0, FR_UROW_RSP, 8, 0, true),
	H("f_before_1", 0, FR_UROW_RSP, 16, 0, true),
	H("f_before_2", 0, FR_UROW_RSP, 8, 0, true),
	H("f_sig2", -2, FR_UROW_RSP, 8, 0, false),
	/* its last byte is given to the trampoline, for return address - 1 */
	H("f_sig2", -1, FR_UROW_SIGNAL, 0, 0, true),
	/* the gap row f_before ends with must not hide the trampoline */
	H("f_sig2", 0, FR_UROW_SIGNAL, 0, 0, false),
	H("f_sig2_1", 0, FR_UROW_SIGNAL, 0, 0, false),
	H("f_sig2_end", -1, FR_UROW_SIGNAL, 0, 0, false),
	H("f_sig2_end", 0, FR_UROW_NONE, 0, 0, true),
};

/*
 * check_hand() - every expected row of hand_rows, at its symbol's address
 * in @so, in @so's table @u. Returns the number of mismatches; those of
 * entries marked as a known bug go to *@bugs instead.
 */
static size_t check_hand(const char *so, const struct urows *u, const char *what, size_t *bugs)
{
	size_t bad = 0, n = 0;

	*bugs = 0;
	for (size_t i = 0; i < sizeof(hand_rows) / sizeof(hand_rows[0]); i++) {
		const struct hand *h = &hand_rows[i];
		const struct fr_urow *r;
		uint64_t a;
		bool good;
		char b[80];

		if (!elf_symbol(so, h->sym, &a)) {
			tap_diag("  %s: no symbol %s", what, h->sym);
			bad++;
			continue;
		}
		a += h->delta;
		r = urows__find(u, (uint32_t)a);
		n++;
		if (h->kind == 0xff) {
			good = !r;
		} else {
			unsigned k = h->kind & FR_UROW_KIND_MASK;
			bool has_cfa = k == FR_UROW_RSP || k == FR_UROW_RBP || k == FR_UROW_PLT;
			bool has_rbp = (h->kind & RBPC) || k == FR_UROW_PLT;

			good = r && r->kind == h->kind && (!h->starts || r->pc == a) &&
			       (!has_cfa || r->cfa_off == h->cfa_off) &&
			       (!has_rbp || r->rbp_off == h->rbp_off);
		}
		if (!good) {
			bad++;
			tap_diag("  %s: at %s%+d (%#llx): want %s%s+%u/%d, got %s",
				 what, h->sym,
				 h->delta, (unsigned long long)a,
				 h->kind == 0xff ? "(no row)" : kind_name(h->kind),
				 h->kind & RBPC ? "|RBP_CFA" : "", h->cfa_off, h->rbp_off,
				 row_str(r, b, sizeof(b)));
		}
	}
	tap_diag("%s: %zu hand-written expectations, %zu mismatches, %zu of a known bug", what, n,
		 bad, *bugs);
	return bad;
}

/* test_hand() - hand-written CFI in .eh_frame and in .debug_frame. */
static void test_hand(void)
{
	char so[PATH_MAX], dbg[PATH_MAX], noeh[PATH_MAX], hi[PATH_MAX];
	struct urows u, m;
	uint8_t *img = NULL;
	size_t len = 0, bugs;
	int err;

	snprintf(so, sizeof(so), "%s/hand.so", tdir);
	snprintf(dbg, sizeof(dbg), "%s/hand_dbg.so", tdir);
	snprintf(noeh, sizeof(noeh), "%s/hand_noeh.so", tdir);
	snprintf(hi, sizeof(hi), "%s/hand_high.so", tdir);
	if (!ok(build_asm(so, ""), "gcc -shared -nostdlib: hand-written CFI assembled"))
		return;
	err = build_path(so, &u);
	is_int(err, 0, "hand.so: rows built (%u)", u.n);
	is_int(check_hand(so, &u, "hand.so (.eh_frame)", &bugs), 0,
	       "hand.so: every kind at its exact address: RSP, RBP, rbp at CFA, NONE, STOP, "
	       "SIGNAL, PLT, INVALID");
	ok(!bugs, "hand.so: SIGNAL over a trampoline right after another FDE");
	ok(u.st.stop >= 1 && u.st.signal == 2 && u.st.plt >= 1 && u.st.invalid >= 5,
	   "hand.so: stats: stop %u, signal %u, plt %u, invalid %u", u.st.stop, u.st.signal,
	   u.st.plt, u.st.invalid);
	test_search(&u, "hand.so");

	/* The same image from memory, as the vDSO is read. */
	{
		int fd = open(so, O_RDONLY | O_CLOEXEC);
		struct stat stb;

		if (fd >= 0 && !fstat(fd, &stb) && (img = malloc((size_t)stb.st_size)) &&
		    pread(fd, img, (size_t)stb.st_size, 0) == stb.st_size)
			len = (size_t)stb.st_size;
		if (fd >= 0)
			close(fd);
	}
	err = urows__build_mem(img, len, &m);
	ok(!err && same_rows(&u, &m), "urows__build_mem of hand.so's bytes: the same rows");
	urows__fini(&m);
	free(img);
	urows__fini(&u);

	/*
	 * The same CFI in .debug_frame. ld still makes an empty .eh_frame:
	 * without it, rows come from .debug_frame; with it, they should too.
	 */
	if (ok(build_asm(dbg, "-DDEBUG_FRAME") &&
	       sh("objcopy --remove-section=.eh_frame '%s' '%s'", dbg, noeh),
	       "the same CFI in .debug_frame assembled, and a copy without .eh_frame")) {
		uint64_t a, s;

		ok(!elf_section(noeh, ".eh_frame", &a, &s, NULL) &&
		   elf_section(noeh, ".debug_frame", &a, &s, NULL) && s > 0,
		   "hand_noeh.so: .debug_frame and no .eh_frame");
		err = build_path(noeh, &u);
		is_int(err, 0, "hand_noeh.so: rows built from .debug_frame (%u)", u.n);
		is_int(check_hand(noeh, &u, "hand_noeh.so (.debug_frame)", &bugs), 0,
		       "hand_noeh.so: every expectation holds from .debug_frame too");
		ok(!bugs, "hand_noeh.so: SIGNAL over a trampoline right after another FDE");
		urows__fini(&u);
		ok(elf_section(dbg, ".eh_frame", &a, &s, NULL) && s == 0,
		   "hand_dbg.so: ld left an empty .eh_frame");
		err = build_path(dbg, &u);
		ok(!err && u.n > 0,
		   "hand_dbg.so (empty .eh_frame, CFI in .debug_frame): rows (%d, %u rows)", err, u.n);
		urows__fini(&u);
	}

	/* Code at or above 4 GiB: the rows' pc is 32-bit. */
	if (ok(build_asm(hi, "-Wl,-Ttext-segment=0x100000000"), "a .so linked at 4 GiB")) {
		err = build_path(hi, &u);
		is_int(err, -E2BIG, "hand_high.so: -E2BIG for addresses at 4 GiB");
		ok(u.n == 0 && u.row == NULL, "hand_high.so: the table is empty after the error");
		urows__fini(&u);
	}
}

/* ------------------------------------------------ 5b. the entry point */

/* Code after an entry point without CFI, as in ld.so's _start (RTLD_START). */
static const char entry_src[] =
	"#define FN(n) .globl n; .type n, @function; n:\n"
	"\t.text\n"
	"FN(f_a)\n"
	"\t.cfi_startproc\n"
	"\tpush %rbp\n"
	"\t.cfi_def_cfa_offset 16\n"
	"\tpop %rbp\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	"FN(e_near)\n"
	"\tmov %rsp, %rdi\n"
	"\tcall f_a\n"
	"e_near_user:\n"
	"\t.fill 40, 1, 0x90\n"
	"FN(f_b)\n"
	"\t.cfi_startproc\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	"FN(e_far)\n"
	"\t.fill 1000, 1, 0x90\n"
	"FN(f_c)\n"
	"\t.cfi_startproc\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	"FN(f_u)\n"
	"\t.cfi_startproc\n"
	"\t.cfi_undefined rip\n"
	"\tnop\n"
	"\t.cfi_endproc\n"
	"FN(e_mid)\n"
	"\t.fill 16, 1, 0x90\n"
	"FN(f_v)\n"
	"\t.cfi_startproc\n"
	"\t.cfi_undefined rip\n"
	"\tnop\n"
	"\t.cfi_endproc\n"
	"FN(f_w)\n"
	"\t.cfi_startproc\n"
	"\tret\n"
	"\t.cfi_endproc\n";

/* @path's row kind at symbol @sym + @delta; 0xff when there is none. */
static uint8_t row_kind_at(const char *path, const struct urows *u, const char *sym, int delta)
{
	const struct fr_urow *r;
	uint64_t v;

	if (!elf_symbol(path, sym, &v))
		return 0xfe;
	r = urows__find(u, (uint32_t)(v + delta));
	return r ? r->kind & FR_UROW_KIND_MASK : 0xff;
}

/*
 * test_entry() - an entry point no FDE covers is the outermost frame: a
 * stop row from it to the next FDE, 256 bytes at most; an entry with CFI,
 * and a file's other gaps, keep theirs.
 */
static void test_entry(void)
{
	char near[PATH_MAX], far[PATH_MAX], cov[PATH_MAX], mid[PATH_MAX];
	struct urows u;

	snprintf(near, sizeof(near), "%s/entry_near.so", tdir);
	snprintf(far, sizeof(far), "%s/entry_far.so", tdir);
	snprintf(cov, sizeof(cov), "%s/entry_cov.so", tdir);
	snprintf(mid, sizeof(mid), "%s/entry_mid.so", tdir);
	if (!ok(build_src(entry_src, near, "-Wl,-e,e_near") && build_src(entry_src, far, "-Wl,-e,e_far") &&
		build_src(entry_src, cov, "-Wl,-e,f_a") && build_src(entry_src, mid, "-Wl,-e,e_mid"),
		"four .so files entered at e_near, e_far, f_a, e_mid"))
		return;
	/* The fuzzer's find (fuzz_cfi): the entry's stop row between two
	 * FDEs whose return address is undefined, stop rows too, is one row. */
	if (is_int(build_path(mid, &u), 0, "entry_mid.so: rows")) {
		ok(row_kind_at(mid, &u, "f_u", 0) == FR_UROW_STOP && row_kind_at(mid, &u, "e_mid", 0) ==
		   FR_UROW_STOP && row_kind_at(mid, &u, "f_v", 0) == FR_UROW_STOP &&
		   row_kind_at(mid, &u, "f_w", 0) == FR_UROW_RSP,
		   "entry_mid.so: stop from f_u through the entry gap and f_v, then f_w's own row");
		test_search(&u, "entry_mid.so");
		urows__fini(&u);
	}
	if (!is_int(build_path(near, &u), 0, "entry_near.so: rows"))
		return;
	ok(row_kind_at(near, &u, "f_a", 1) == FR_UROW_RSP && row_kind_at(near, &u, "e_near", -1) == FR_UROW_RSP,
	   "entry_near.so: the FDE right before the entry keeps its rows to its last byte");
	ok(row_kind_at(near, &u, "e_near", 0) == FR_UROW_STOP && row_kind_at(near, &u, "e_near_user", -1) ==
	   FR_UROW_STOP && row_kind_at(near, &u, "f_b", -1) == FR_UROW_STOP,
	   "entry_near.so: a stop row from the entry to the next FDE (a return address after its call)");
	ok(row_kind_at(near, &u, "f_b", 0) == FR_UROW_RSP, "entry_near.so: the next FDE's own row");
	urows__fini(&u);
	if (is_int(build_path(far, &u), 0, "entry_far.so: rows")) {
		ok(row_kind_at(far, &u, "e_far", 0) == FR_UROW_STOP && row_kind_at(far, &u, "e_far", 255) ==
		   FR_UROW_STOP && row_kind_at(far, &u, "e_far", 256) == FR_UROW_NONE &&
		   row_kind_at(far, &u, "f_c", -1) == FR_UROW_NONE,
		   "entry_far.so: 256 bytes of stop row, then frame pointers up to the next FDE");
		test_search(&u, "entry_far.so");
		urows__fini(&u);
	}
	if (is_int(build_path(cov, &u), 0, "entry_cov.so: rows")) {
		ok(row_kind_at(cov, &u, "f_a", 0) == FR_UROW_RSP && row_kind_at(cov, &u, "e_near", 0) ==
		   FR_UROW_NONE && row_kind_at(cov, &u, "e_mid", 0) == FR_UROW_NONE && u.st.stop == 2,
		   "entry_cov.so: an entry an FDE covers keeps its rows; the gaps stay frame pointers");
		urows__fini(&u);
	}
	if (is_int(build_path(LDSO, &u), 0, "%s: rows", LDSO)) {
		uint64_t entry = 0;
		const struct fr_urow *r;
		FILE *f = popen("readelf -h " LDSO, "r");
		char line[256];

		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, "Entry point address:"))
				entry = strtoull(strchr(line, ':') + 1, NULL, 0);
		if (f)
			pclose(f);
		r = entry ? urows__find(&u, (uint32_t)entry + 8) : NULL;
		ok(r && (r->kind & FR_UROW_KIND_MASK) == FR_UROW_STOP,
		   "%s: the return address of _start's call of _dl_start (entry %#" PRIx64 " + 9) "
		   "is the outermost frame", LDSO, entry);
		urows__fini(&u);
	}
}

/* ------------------------------------------------ 6. replaced on disk */

/*
 * test_replaced() - a .so replaced by rename() while open and mapped: the
 * path gives the new rows, the open fd and /proc/self/map_files the old.
 */
static void test_replaced(void)
{
	char a[PATH_MAX], b[PATH_MAX], lib[PATH_MAX], mf[128];
	struct urows ua, ub, uf, um, ua2;
	void *map = MAP_FAILED;
	unsigned long pg;
	struct stat st;
	int fd, mfd;

	snprintf(a, sizeof(a), "%s/va.so", tdir);
	snprintf(b, sizeof(b), "%s/vb.so", tdir);
	snprintf(lib, sizeof(lib), "%s/lib.so", tdir);
	if (!ok(build_asm(a, "-DVARIANT=1") && build_asm(b, "-DVARIANT=2"),
		"two builds of one .so, with different frames"))
		return;
	if (!ok(rename(a, lib) == 0, "version A installed at lib.so"))
		return;
	fd = open(lib, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st))
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (!ok(map != MAP_FAILED, "lib.so open and mapped"))
		return;
	is_int(build_path(lib, &ua), 0, "table A from the path (%u rows)", ua.n);
	ok(rename(b, lib) == 0, "version B renamed over lib.so");
	is_int(build_path(lib, &ub), 0, "table B from the path (%u rows)", ub.n);
	ok(ua.n && ub.n && !same_rows(&ua, &ub), "A and B differ");
	is_int(urows__build_fd(fd, &uf), 0, "rows from the still-open fd of A");
	ok(same_rows(&ua, &uf), "the open fd still gives A, not what the path names now");
	pg = (unsigned long)sysconf(_SC_PAGESIZE);
	snprintf(mf, sizeof(mf), "/proc/self/map_files/%lx-%lx", (unsigned long)map,
		 (unsigned long)map + (((unsigned long)st.st_size + pg - 1) & ~(pg - 1)));
	mfd = open(mf, O_RDONLY | O_CLOEXEC);
	if (mfd < 0 && errno == EPERM && geteuid() != 0) {
		tap_skip(1, "/proc/self/map_files needs CAP_SYS_ADMIN");
	} else {
		int err = mfd >= 0 ? urows__build_fd(mfd, &um) : -errno;

		ok(!err && same_rows(&ua, &um), "/proc/self/map_files of the mapping gives A (%d)",
		   err);
		if (!err)
			urows__fini(&um);
	}
	if (mfd >= 0)
		close(mfd);
	/* Building twice from one fd is the same (the fd's offset does not matter). */
	lseek(fd, 123, SEEK_SET);
	is_int(urows__build_fd(fd, &ua2), 0, "rows from the fd again");
	ok(same_rows(&ua, &ua2), "the same rows again, whatever the fd's offset");
	munmap(map, (size_t)st.st_size);
	close(fd);
	urows__fini(&ua);
	urows__fini(&ub);
	urows__fini(&uf);
	urows__fini(&ua2);
}

/* ------------------------------------------------ 7. load bias */

struct maprec {
	uint64_t start, end, pgoff;
	char perms[8];
};

/* self_maps() - the mappings of @path in /proc/self/maps (at most @max). */
static size_t self_maps(const char *path, struct maprec *m, size_t max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128];
	size_t n = 0;

	while (f && n < max && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, o;
		char perms[8], p[PATH_MAX];

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &s, &e, perms, &o, p) != 5 ||
		    strcmp(p, path))
			continue;
		m[n].start = s;
		m[n].end = e;
		m[n].pgoff = o;
		snprintf(m[n].perms, sizeof(m[n].perms), "%s", perms);
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

/* libc_path() - the path of libc.so.6 in /proc/self/maps. */
static bool libc_path(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/'), *nl;

		if (!p)
			continue;
		if ((nl = strchr(p, '\n')))
			*nl = '\0';
		if (strlen(p) >= 10 && !strcmp(p + strlen(p) - 10, "/libc.so.6")) {
			snprintf(out, len, "%s", p);
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * check_bias() - the bias fr_load_bias() gives from @path's PT_LOADs for
 * its executable mapping in this process: runtime address - bias is the
 * st_value of each of @syms (resolved through @h). The other mappings
 * need no bias (only code is unwound); with @all_maps, each one that gets
 * a bias must get that same one (one load bias per ELF), else one that
 * differs is only shown.
 */
static void check_bias(const char *path, void *h, const char *const *syms, size_t nsyms,
		       const char *what, bool all_maps, const char *bug)
{
	struct maprec m[32];
	size_t n = self_maps(path, m, 32), nexec = 0, fail = 0, symbad = 0, other = 0;
	uint64_t xbias = 0;
	struct urows u;
	int err = build_path(path, &u);

	if (!is_int(err, 0, "%s: rows built for its PT_LOADs (%u segments)", what, u.nload) ||
	    !ok(n >= 2, "%s: %zu mappings in /proc/self/maps", what, n))
		goto out;
	for (size_t i = 0; i < n; i++) {
		uint64_t bias;

		if (m[i].perms[2] != 'x')
			continue;
		nexec++;
		if (fr_load_bias(u.load, u.nload, m[i].start, m[i].pgoff, &bias)) {
			fail++;
			continue;
		}
		xbias = bias;
		for (size_t s = 0; s < nsyms; s++) {
			void *a = dlsym(h, syms[s]);
			uint64_t v = 0;

			if (!a || !elf_symbol(path, syms[s], &v) || (uint64_t)a - bias != v) {
				symbad++;
				tap_diag("  %s: %s at %p, st_value %#llx, bias %#llx: addr - bias %#llx",
					 what, syms[s], a, (unsigned long long)v,
					 (unsigned long long)bias,
					 (unsigned long long)((uint64_t)a - bias));
			}
		}
	}
	if (!is_int(nexec, 1, "%s: one executable mapping", what) ||
	    !is_int(fail, 0, "%s: fr_load_bias finds a segment for it", what))
		goto out;
	is_int(symbad, 0, "%s: addr - bias == st_value for %zu symbols (exec mapping)", what,
	       nsyms);
	for (size_t i = 0; i < n; i++) {
		uint64_t bias;

		if (m[i].perms[2] == 'x' ||
		    fr_load_bias(u.load, u.nload, m[i].start, m[i].pgoff, &bias) || bias == xbias)
			continue;
		other++;
		if (!all_maps)
			tap_diag("  %s: mapping %#llx %s pgoff %#llx: bias %#llx, not the exec one's",
				 what, (unsigned long long)m[i].start, m[i].perms,
				 (unsigned long long)m[i].pgoff, (unsigned long long)bias);
	}
	if (all_maps)
		is_int(other, 0, "%s: every other mapping given a bias has the exec one's", what);
out:
	urows__fini(&u);
}

/* test_bias_crafted() - fr_load_bias on segment tables made by hand. */
static void test_bias_crafted(void)
{
	const struct urows_load gnu[] = {
		{ 0x0, 0x0, 0x25388 },
		{ 0x26000, 0x26000, 0x1550fc },
		{ 0x1cf8d0, 0x1cf8d0, 0x4f98 },
	};
	const struct urows_load pie[] = {	/* text at a different vaddr - offset */
		{ 0x0, 0x400000, 0x1000 },
		{ 0x1000, 0x601000, 0x2000 },
	};
	uint64_t bias = 0;

	ok(!fr_load_bias(gnu, 3, 0x7f0000026000, 0x26000, &bias) && bias == 0x7f0000000000,
	   "text mapping at its page offset: the base");
	ok(!fr_load_bias(gnu, 3, 0x7f00001cf000, 0x1cf000, &bias) && bias == 0x7f0000000000,
	   "data mapping at the page below an unaligned p_offset: the base");
	ok(fr_load_bias(gnu, 3, 0x7f0000300000, 0x300000, &bias) == -ENOENT,
	   "an offset no segment holds: -ENOENT");
	ok(fr_load_bias(gnu, 0, 0x7f0000026000, 0x26000, &bias) == -ENOENT, "no segments: -ENOENT");
	ok(!fr_load_bias(pie, 2, 0x601000, 0x1000, &bias) && bias == 0,
	   "a non-PIE executable: bias 0");
	ok(!fr_load_bias(pie, 2, 0x555555400000, 0, &bias) && bias == 0x555555000000 &&
	   !fr_load_bias(pie, 2, 0x555555601000, 0x1000, &bias) && bias == 0x555555000000,
	   "segments with different vaddr - offset: one bias for both mappings");
}

/* test_bias() - libc as this process maps it, and an lld-linked .so. */
static void test_bias(void)
{
	static const char *const libc_syms[] = { "getpid", "qsort", "abort", "strtol" };
	static const char *const so_syms[] = { "fr_lld_f", "fr_lld_g" };
	char path[PATH_MAX], src[PATH_MAX], so[PATH_MAX], lld[PATH_MAX];
	void *h;
	FILE *f;

	test_bias_crafted();
	if (ok(libc_path(path, sizeof(path)), "libc.so.6 in /proc/self/maps: %s", path)) {
		h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
		if (ok(h != NULL, "dlopen(libc.so.6, RTLD_NOLOAD)"))
			check_bias(path, h, libc_syms, 4, "libc", true, NULL);
		if (h)
			dlclose(h);
	}

	/* A .so of two functions, linked by GNU ld, then by lld. */
	snprintf(src, sizeof(src), "%s/bias.c", tdir);
	snprintf(so, sizeof(so), "%s/bias_bfd.so", tdir);
	snprintf(lld, sizeof(lld), "%s/bias_lld.so", tdir);
	f = fopen(src, "w");
	if (f) {
		fputs("int fr_lld_f(int x);\nint fr_lld_g(int x);\n"
		      "int fr_lld_f(int x) { return x * 3 + 1; }\n"
		      "int fr_lld_g(int x) { return x - 7; }\n", f);
		fclose(f);
	}
	if (ok(f && sh("gcc -shared -fPIC -O1 -o '%s' '%s'", so, src), "gcc: bias_bfd.so")) {
		h = dlopen(so, RTLD_NOW);
		if (ok(h != NULL, "dlopen(bias_bfd.so)"))
			check_bias(so, h, so_syms, 2, "bias_bfd.so (GNU ld)", false, NULL);
		if (h)
			dlclose(h);
	}
	if (!have_tool("ld.lld")) {
		tap_skip(1, "ld.lld is not installed");
		return;
	}
	if (ok(sh("gcc -shared -fPIC -O1 -fuse-ld=lld -o '%s' '%s'", lld, src),
	       "gcc -fuse-ld=lld: bias_lld.so")) {
		h = dlopen(lld, RTLD_NOW);
		if (ok(h != NULL, "dlopen(bias_lld.so)"))
			check_bias(lld, h, so_syms, 2, "bias_lld.so (lld: R and R E share a page)",
				   false, NULL);
		if (h)
			dlclose(h);
	}
}

/* ------------------------------------------------ 8. robustness */

/*
 * harmless() - urows__build_fd() of @path survives in a child (no crash,
 * no sanitizer report), then gives an error and an empty table (or, unless
 * @want_error, 0 rows and no error).
 */
static bool harmless(const char *path, bool want_error, const char *what)
{
	struct urows u;
	int err;
	bool alive = survives({
		struct urows cu;

		if (build_path(path, &cu) == 0)
			urows__fini(&cu);
	});

	if (!ok(alive, "%s: urows__build_fd survives (no crash, no sanitizer report)", what))
		return false;
	err = build_path(path, &u);
	if (want_error)
		ok(err < 0 && u.n == 0 && !u.row, "%s: an error (%d), an empty table", what, err);
	else
		ok(u.n == 0 && (err < 0 ? !u.row : 1), "%s: an error or 0 rows (%d, %u rows)", what,
		   err, u.n);
	urows__fini(&u);
	return true;
}

/* write_file() - @len bytes of @buf at @path. */
static bool write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	bool good = fd >= 0 && (!len || write(fd, buf, len) == (ssize_t)len);

	if (fd >= 0)
		close(fd);
	return good;
}

/*
 * test_robust() - files that are not what rows.c wants: text, empty, a
 * 32-bit ELF, other machines, truncated libc, and xz with its .eh_frame
 * overwritten with noise.
 */
static void test_robust(void)
{
	char p[PATH_MAX], so32[PATH_MAX];
	Elf64_Ehdr eh;
	uint8_t junk[4096];
	struct urows u;
	uint64_t a, s, off;
	int err;

	snprintf(p, sizeof(p), "%s/text", tdir);
	write_file(p, "not an ELF file at all\n", 23);
	harmless(p, true, "a text file");
	snprintf(p, sizeof(p), "%s/empty", tdir);
	write_file(p, "", 0);
	harmless(p, true, "an empty file");

	snprintf(so32, sizeof(so32), "%s/hand32.so", tdir);
	/* A real one when gcc can make it, and a bare ELF32 header below anyway. */
	if (build_src(asm32_src, so32, "-m32")) {
		harmless(so32, true, "a 32-bit x86 .so with CFI (gcc -m32 -shared -nostdlib)");
		is_int(build_path(so32, &u), -ENOEXEC, "a 32-bit ELF: -ENOEXEC");
	} else {
		tap_skip(3, "gcc -m32 cannot assemble here");
	}

	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_AARCH64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	snprintf(p, sizeof(p), "%s/arm64", tdir);
	write_file(p, &eh, sizeof(eh));
	is_int(build_path(p, &u), -ENOEXEC, "a 64-bit ELF header for aarch64: -ENOEXEC");
	eh.e_machine = EM_X86_64;
	snprintf(p, sizeof(p), "%s/bare", tdir);
	write_file(p, &eh, sizeof(eh));
	err = build_path(p, &u);
	ok(err == 0 && u.n == 0, "an x86-64 ELF header alone: no CFI, 0 rows (%d)", err);
	urows__fini(&u);
	eh.e_ident[EI_DATA] = ELFDATA2MSB;
	snprintf(p, sizeof(p), "%s/msb", tdir);
	write_file(p, &eh, sizeof(eh));
	harmless(p, true, "a big-endian ELF64 header");
	snprintf(p, sizeof(p), "%s/elf32hdr", tdir);
	memcpy(junk, ELFMAG "\x01\x01\x01", 7);
	memset(junk + 7, 0, 64);
	write_file(p, junk, 52);
	harmless(p, true, "a bare ELF32 header");

	snprintf(p, sizeof(p), "%s/libc64k", tdir);
	if (ok(copy_file(LIBC, p, 65536), "libc truncated to 64 KiB"))
		harmless(p, false, "truncated libc (64 KiB)");
	snprintf(p, sizeof(p), "%s/libchalf", tdir);
	{
		struct stat st;

		if (!stat(LIBC, &st) && copy_file(LIBC, p, (size_t)st.st_size / 2))
			harmless(p, false, "truncated libc (half)");
	}

	/*
	 * xz with its .eh_frame overwritten by noise: any result, no crash.
	 * Copy i has 1 + i / 4 runs of 1 to 4 random bytes.
	 */
	if (elf_section(XZ, ".eh_frame", &a, &s, &off)) {
		size_t crashed = 0, built = 0;

		for (int seed = 0; seed < 24; seed++) {
			int fd;

			snprintf(p, sizeof(p), "%s/xz_noise%d", tdir, seed);
			if (!copy_file(XZ, p, 0) || (fd = open(p, O_WRONLY | O_CLOEXEC)) < 0)
				continue;
			for (int k = 0; k < 1 + seed / 4; k++) {
				size_t at = (size_t)(rnd() % s);
				size_t n = (size_t)(rnd() % 4) + 1;

				for (size_t i = 0; i < n; i++)
					junk[i] = (uint8_t)rnd();
				if (at + n > s)
					n = s - at;
				if (pwrite(fd, junk, n, (off_t)(off + at)) != (ssize_t)n)
					break;
			}
			close(fd);
			crashed += !survives({
				struct urows cu;

				if (build_path(p, &cu) == 0)
					urows__fini(&cu);
			});
			if (!build_path(p, &u))
				built++;
			urows__fini(&u);
			unlink(p);
		}
		is_int(crashed, 0, "24 copies of xz with noise in .eh_frame: no crash (%zu built)",
		       built);
	} else {
		ok(0, "%s has an .eh_frame", XZ);
	}

	ok(survives({
		struct urows cu;

		if (!urows__build_mem(junk, 0, &cu))
			urows__fini(&cu);
		if (!urows__build_mem("\x7f" "ELF", 4, &cu))
			urows__fini(&cu);
		if (!urows__build_mem(&eh, sizeof(eh), &cu))
			urows__fini(&cu);
	}), "urows__build_mem of 0 bytes, a bare magic, a big-endian header: no crash");
	err = urows__build_mem("\x7f" "ELF", 4, &u);
	ok(err < 0 && u.n == 0, "urows__build_mem of a bare magic: an error (%d)", err);
	memset(&u, 0, sizeof(u));
	urows__fini(&u);
	urows__fini(&u);
	urows__fini(NULL);
	ok(u.n == 0 && !u.row, "urows__fini of a zeroed table, twice, and of NULL");
	is_int(build_path("/nonexistent/file", &u), -ENOENT, "a missing file: -ENOENT");
	{
		int fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		ok(survives({
			struct urows cu;

			if (!urows__build_fd(fd, &cu))
				urows__fini(&cu);
		}), "urows__build_fd of a directory: no crash");
		err = urows__build_fd(fd, &u);
		ok(err < 0, "a directory: an error (%d)", err);
		if (fd >= 0)
			close(fd);
	}
}

/* ------------------------------------------------ 9. hostile CFI */

/*
 * build_in_child() - urows__build_fd() of @path in a child process: its
 * result into *@err, and by how much the child's peak RSS rose during the
 * build into *@grew_kib. False when the child did not report.
 */
static bool build_in_child(const char *path, int *err, long *grew_kib)
{
	long msg[2] = { 0, 0 };
	bool good;
	pid_t pid;
	int p[2];

	if (pipe(p))
		return false;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct rusage a, b;
		struct urows u;

		close(p[0]);
		getrusage(RUSAGE_SELF, &a);
		msg[0] = build_path(path, &u);
		getrusage(RUSAGE_SELF, &b);
		msg[1] = b.ru_maxrss - a.ru_maxrss;
		urows__fini(&u);
		_exit(write(p[1], msg, sizeof(msg)) == (ssize_t)sizeof(msg) ? 0 : 1);
	}
	close(p[1]);
	good = pid > 0 && read(p[0], msg, sizeof(msg)) == (ssize_t)sizeof(msg);
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	*err = (int)msg[0];
	*grew_kib = msg[1];
	return good;
}

/* build_fn() - a .so whose one function f has @body between .cfi_startproc and ret. */
static bool build_fn(const char *out, const char *body)
{
	static const char fmt[] = "\t.text\n\t.globl f\nf:\n\t.cfi_startproc\n%s\tret\n"
				  "\t.cfi_endproc\n\t.section .note.GNU-stack, \"\", @progbits\n";
	size_t n = sizeof(fmt) + strlen(body);
	char *text = xrealloc(NULL, n);
	bool good;

	snprintf(text, n, fmt, body);
	good = build_src(text, out, "");
	free(text);
	return good;
}

/* repeat() - @n copies of @line, then @tail, in a new string. */
static char *repeat(const char *line, size_t n, const char *tail)
{
	size_t len = strlen(line), tl = strlen(tail);
	char *s = xrealloc(NULL, n * len + tl + 1);

	for (size_t i = 0; i < n; i++)
		memcpy(s + i * len, line, len);
	memcpy(s + n * len, tail, tl + 1);
	return s;
}

/*
 * test_vet() - instructions libdw must not run: a register past 255 (libdw
 * grows its table to it; x86-64's last is 145), remember_state nested too deep, an
 * opcode libdw rejects, an overlong LEB128, a block past the FDE. The file
 * is refused, at once and without memory; the limits themselves pass.
 */
static void test_vet(void)
{
	char *d16 = repeat("\t.cfi_remember_state\n", 16, "\tnop\n");
	char *d17 = repeat("\t.cfi_remember_state\n", 17, "\tnop\n");
	const struct {
		const char *what, *body;
		int err;
	} cases[] = {
		{ "register 145 (APX r31, the psABI's last)", "\tnop\n\t.cfi_offset 145, -16\n\tnop\n", 0 },
		{ "register 255 (the limit)", "\tnop\n\t.cfi_offset 255, -16\n\tnop\n", 0 },
		{ "register 256", "\tnop\n\t.cfi_offset 256, -16\n", -ENOEXEC },
		{ "register 2^24", "\tnop\n\t.cfi_offset 16777216, -16\n", -ENOEXEC },
		{ "remember_state nested 16 deep", d16, 0 },
		{ "remember_state nested 17 deep", d17, -ENOEXEC },
		{ "unknown opcode 0x3f", "\tnop\n\t.cfi_escape 0x3f\n", -ENOEXEC },
		{ "an 11-byte LEB128", "\tnop\n\t.cfi_escape 0x0e,0x80,0x80,0x80,0x80,0x80,"
		  "0x80,0x80,0x80,0x80,0x80,0x00\n", -ENOEXEC },
		{ "a block past the FDE's end", "\tnop\n\t.cfi_escape 0x0f,0x7f\n", -ENOEXEC },
	};
	char so[PATH_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct urows u;
		long grew = -1;
		int err = 1;

		snprintf(so, sizeof(so), "%s/vet%zu.so", tdir, i);
		if (!ok(build_fn(so, cases[i].body), "%s: assembled", cases[i].what))
			continue;
		if (!ok(build_in_child(so, &err, &grew), "%s: built in a child", cases[i].what))
			continue;
		is_int(err, cases[i].err, "%s: %s", cases[i].what,
		       cases[i].err ? "the file is refused" : "rows built");
		/* Before the vetting, libdw's register table for 2^24 took 133 MB. */
		ok(grew >= 0 && grew < 16384, "%s: the build's peak RSS rose %ld KiB (< 16 MiB)",
		   cases[i].what, grew);
		if (!cases[i].err) {
			err = build_path(so, &u);
			ok(!err && u.n >= 2, "%s: %u rows", cases[i].what, u.n);
			urows__fini(&u);
		}
	}
	free(d16);
	free(d17);
}

/* addrframe_ok() - libdw's own CFI for @path has a frame at @addr. */
static bool addrframe_ok(const char *path, uint64_t addr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Dwarf_CFI *cfi = e ? dwarf_getcfi_elf(e) : NULL;
	Dwarf_Frame *fr = NULL;
	bool good = cfi && !dwarf_cfi_addrframe(cfi, addr, &fr) && fr;

	free(fr);
	if (cfi)
		dwarf_cfi_end(cfi);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return good;
}

/*
 * test_hdr_ignored() - hand.so with every .eh_frame_hdr entry pointed at
 * the first FDE: libdw, given the file, follows that table and finds no
 * frame at the last FDE's start; rows.c gives libdw .eh_frame alone, so
 * its rows are those of the intact file.
 */
static void test_hdr_ignored(void)
{
	char so[PATH_MAX], bad[PATH_MAX];
	uint8_t h[12], first[4];
	uint64_t a, s, off, last;
	struct urows u0, u1;
	uint32_t count;
	int32_t loc;
	int fd, e0, e1;

	snprintf(so, sizeof(so), "%s/hdr.so", tdir);
	snprintf(bad, sizeof(bad), "%s/hdr_bad.so", tdir);
	if (!ok(build_asm(so, "") && copy_file(so, bad, 0) &&
		elf_section(so, ".eh_frame_hdr", &a, &s, &off),
		"hand.so and a copy, with an .eh_frame_hdr"))
		return;
	fd = open(bad, O_RDWR | O_CLOEXEC);
	if (!ok(fd >= 0 && pread(fd, h, sizeof(h), (off_t)off) == (ssize_t)sizeof(h) &&
		h[0] == 1 && h[2] == 0x03 && h[3] == 0x3b &&
		pread(fd, first, 4, (off_t)off + 16) == 4,
		".eh_frame_hdr version 1, a udata4 count and a datarel sdata4 table")) {
		if (fd >= 0)
			close(fd);
		return;
	}
	memcpy(&count, h + 8, 4);
	/* the start of the last FDE in the table, relative to the table's section */
	if (count < 2 || pread(fd, &loc, 4, (off_t)(off + 12 + 8 * (count - 1))) != 4)
		count = 0;
	last = a + (uint64_t)(int64_t)loc;
	for (uint32_t i = 1; i < count; i++)
		if (pwrite(fd, first, 4, (off_t)(off + 16 + 8 * i)) != 4)
			break;
	close(fd);
	ok(count > 2 && addrframe_ok(so, last) && !addrframe_ok(bad, last),
	   "libdw on the file: a frame at the last FDE's start (%#llx), none once the %u-entry "
	   "table is bent", (unsigned long long)last, count);
	e0 = build_path(so, &u0);
	e1 = build_path(bad, &u1);
	ok(!e0 && !e1 && u0.n > 10 && same_rows(&u0, &u1),
	   "rows.c: the same %u rows from the bent file (%d, %d, %u)", u0.n, e0, e1, u1.n);
	urows__fini(&u0);
	urows__fini(&u1);
}

/*
 * test_budget() - one FDE with N alternating rows costs libdw N^2/2
 * instructions (each lookup starts at the FDE's first): 2,000 rows build,
 * 100,000 (3.3 s per 50,000 before the budget, and 4x that per doubling)
 * give up with -ETIMEDOUT at the CPU time budget.
 */
static void test_budget(void)
{
	const char *line = "\tnop\n\t.cfi_adjust_cfa_offset 8\n\tnop\n\t.cfi_adjust_cfa_offset -8\n";
	char so[PATH_MAX];
	struct urows u;
	char *body;
	int err;

	snprintf(so, sizeof(so), "%s/rows2k.so", tdir);
	body = repeat(line, 1000, "");
	if (ok(build_fn(so, body), "an FDE of 2,000 rows assembled")) {
		err = build_path(so, &u);
		ok(!err && u.n == 2002, "2,000 rows: built (%d), %u rows (its rows, the first, the end)",
		   err, u.n);
		urows__fini(&u);
	}
	free(body);
	snprintf(so, sizeof(so), "%s/rows100k.so", tdir);
	body = repeat(line, 50000, "");
	if (ok(build_fn(so, body), "an FDE of 100,000 rows assembled")) {
		err = build_path(so, &u);
		is_int(err, -ETIMEDOUT, "100,000 rows in one FDE: -ETIMEDOUT at the CPU budget");
		ok(u.n == 0 && !u.row, "100,000 rows: the table is empty after the error");
		urows__fini(&u);
	}
	free(body);
	unlink(so);
}

/* ------------------------------------------------------------- main */

int main(void)
{
	static struct lib libs[] = {
		{ .path = LIBC }, { .path = LIBLZMA }, { .path = XZ }, { .path = LIBSTDCXX },
	};
	bool tools = true;

	setvbuf(stdout, NULL, _IOLBF, 0);
	tools &= ok(have_tool("readelf"), "readelf is installed");
	tools &= ok(have_tool("objcopy"), "objcopy is installed");
	tools &= ok(have_tool("gcc"), "gcc is installed");
	if (!tools)
		return tap_done_testing();
	if (!ok(mkdtemp(tdir) != NULL, "temp dir %s", tdir))
		return tap_done_testing();

	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		struct lib *l = &libs[i];

		l->parsed = rf_parse(l->path, ".eh_frame", &l->rf);
		l->err = build_path(l->path, &l->u);
		l->has_plt = elf_section(l->path, ".plt", &l->plt, &l->plt_size, NULL);
		test_vs_readelf(l);
	}
	test_search(&libs[0].u, "libc");
	test_search_small();
	test_plt(&libs[2]);
	test_plt(&libs[0]);
	test_signal(&libs[0]);
	test_hand();
	test_entry();
	test_replaced();
	test_bias();
	test_robust();
	test_vet();
	test_hdr_ignored();
	test_budget();

	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		rf_free(&libs[i].rf);
		urows__fini(&libs[i].u);
	}
	sh("rm -rf '%s'", tdir);
	return tap_done_testing();
}
