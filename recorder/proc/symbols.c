// SPDX-License-Identifier: MIT
/*
 * symbols.c - turn sampled instruction addresses into function names.
 *
 * Every table is built once, sorted, and then only read: lookups are binary
 * searches. Names live in one string pool per table and are referenced by
 * 32-bit offsets, so the pool can grow while loading.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "debuginfo.h"
#include "demangle.h"
#include "hashmap.h"
#include "srcline.h"
#include "symbols.h"
#include "untrusted.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Bounds that keep malformed input from driving allocations. */
#define FR_ELF_MAX_PHDRS	4096
#define FR_SYM_NAME_MAX		4096
#define FR_NO_MODULE		UINT32_MAX
#define FR_NO_NAME		UINT32_MAX

/* ---------------------------------------------------------------- helpers */

/* A growable pool of NUL-terminated names referenced by offset. */
struct fr_strpool {
	char *buf;
	size_t len, cap;
};

/*
 * strpool__add() - copy the first @len bytes of @s (cut at FR_SYM_NAME_MAX)
 * into @p and store its offset in *@off. Returns 0, -ENOMEM or -E2BIG when
 * the pool would outgrow 32-bit offsets.
 */
static int strpool__add(struct fr_strpool *p, const char *s, size_t len,
			uint32_t *off)
{
	int r;

	if (len > FR_SYM_NAME_MAX)
		len = FR_SYM_NAME_MAX;
	if (p->len + len + 1 > UINT32_MAX)
		return -E2BIG;
	r = fr_grow((void **)&p->buf, &p->cap, p->len + len + 1, 1);
	if (r)
		return r;
	memcpy(p->buf + p->len, s, len);
	p->buf[p->len + len] = '\0';
	*off = (uint32_t)p->len;
	p->len += len + 1;
	return 0;
}

/* fr_underscores() - the number of leading underscores of @s, at most 15. */
static unsigned int fr_underscores(const char *s)
{
	unsigned int n = 0;

	while (s[n] == '_' && n < 15)
		n++;
	return n;
}

/*
 * fr_parse_hex() - parse an unsigned hex number, with or without "0x", at
 * *@p; on success advance *@p past it. Returns true if digits were read.
 */
static bool fr_parse_hex(const char **p, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!isxdigit((unsigned char)**p))
		return false;
	errno = 0;
	v = strtoull(*p, &end, 16);
	if (errno || end == *p)
		return false;
	*out = v;
	*p = end;
	return true;
}

/* fr_chomp() - strip trailing newline characters from @s of length @len. */
static size_t fr_chomp(char *s, size_t len)
{
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		s[--len] = '\0';
	return len;
}

/* --------------------------------------------------------------- procmaps */

/*
 * mapping__parse() - fill @m from one maps line; @line is modified.
 * Returns 0, -EINVAL if the line does not parse, or -ENOMEM.
 */
static int mapping__parse(char *line, struct fr_mapping *m)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	char perms[8];
	size_t len;
	int n = -1;
	char *path;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end,
		   perms, &pgoff, &maj, &min, &ino, &n) != 7 || n < 0)
		return -EINVAL;
	if (start >= end || strlen(perms) != 4)
		return -EINVAL;

	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->dev = makedev(maj, min);
	m->inode = ino;
	if (perms[0] == 'r')
		m->prot |= PROT_READ;
	if (perms[1] == 'w')
		m->prot |= PROT_WRITE;
	if (perms[2] == 'x')
		m->prot |= PROT_EXEC;

	path = line + n;
	while (*path == ' ' || *path == '\t')
		path++;
	len = fr_chomp(path, strlen(path));
	if (!len)
		return 0;
	if (len > dlen && !strcmp(path + len - dlen, deleted)) {
		path[len - dlen] = '\0';
		m->deleted = true;
	}
	m->path = strdup(path);
	return m->path ? 0 : -ENOMEM;
}

static int mapping__cmp(const void *a, const void *b)
{
	const struct fr_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void procmaps__free(struct procmaps *pm)
{
	if (!pm)
		return;
	for (size_t i = 0; i < pm->n; i++)
		free(pm->m[i].path);
	free(pm->m);
	free(pm);
}

/*
 * read_lines() - call @fn(@ctx, line) for each line of @f, stopping at the
 * first non-zero return. Returns 0, what @fn returned, or -errno of a read
 * error.
 */
static int read_lines(FILE *f, int (*fn)(void *ctx, char *line), void *ctx)
{
	char *line = NULL;
	size_t lcap = 0;
	int r = 0;

	errno = 0;
	while (!r && getline(&line, &lcap, f) >= 0)
		r = fn(ctx, line);
	if (!r && ferror(f))
		r = errno ? -errno : -EIO;
	free(line);
	return r;
}

/* Parser state of one /proc/PID/maps read. */
struct fr_mload {
	struct procmaps *pm;
	size_t cap;
};

/*
 * procmaps__add_line() - add the mapping of @line, unless it is malformed.
 * Returns 0 or -ENOMEM.
 */
static int procmaps__add_line(void *ctx, char *line)
{
	struct fr_mload *st = ctx;
	struct procmaps *pm = st->pm;
	int r;

	r = fr_grow((void **)&pm->m, &st->cap, pm->n + 1, sizeof(*pm->m));
	if (r)
		return r;
	r = mapping__parse(line, &pm->m[pm->n]);
	if (r == -EINVAL)
		return 0;
	if (!r)
		pm->n++;
	return r;
}

struct procmaps *procmaps__parse(FILE *f)
{
	struct fr_mload st = { 0 };
	int r;

	st.pm = calloc(1, sizeof(*st.pm));
	if (!st.pm)
		return NULL;
	r = read_lines(f, procmaps__add_line, &st);
	if (!r && st.pm->n)
		qsort(st.pm->m, st.pm->n, sizeof(*st.pm->m), mapping__cmp);
	if (r) {
		procmaps__free(st.pm);
		errno = -r;
		return NULL;
	}
	return st.pm;
}

struct procmaps *procmaps__read(int pid)
{
	char dir[32];

	snprintf(dir, sizeof(dir), "/proc/%d", pid);
	return procmaps__read_at(dir);
}

struct procmaps *procmaps__read_at(const char *procdir)
{
	struct procmaps *pm;
	char path[PATH_MAX];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/maps", procdir);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	pm = procmaps__parse(f);
	err = errno;
	fclose(f);
	errno = err;
	return pm;
}

const struct fr_mapping *procmaps__find(const struct procmaps *pm,
					uint64_t addr)
{
	size_t lo = 0, hi;

	if (!pm)
		return NULL;
	hi = pm->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->m[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= pm->m[lo - 1].end)
		return NULL;
	return &pm->m[lo - 1];
}

/* ---------------------------------------------------------------- elfsyms */

struct fr_sym {
	uint64_t start, end;	/* [start, end) in virtual addresses */
	uint32_t name;		/* offset into the pool: demangled if it was mangled */
	uint32_t mangled;	/* offset into the pool, FR_NO_NAME if not mangled */
};

struct fr_load {
	uint64_t offset, vaddr, filesz;
};

/*
 * Where a table's DWARF lines are, and their handle once read. The table
 * keeps no file open: the handle is read at the first elfsyms__lines()
 * that needs it, from the file found at load time, which must still be
 * that file. Guarded by lines_lock, as the list of open handles is.
 */
struct fr_lines {
	char *path;		/* the debug file, or the binary's path hint (may be NULL) */
	bool in_binary;		/* the DWARF is the binary's own */
	uid_t uid;		/* a debug file's owner rule (debuginfo.h), root besides */
	dev_t dev;		/* identity of the file at load time */
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct srclines *h;	/* the handle, NULL: not read or closed */
	int err;		/* a failure for good (-errno), 0: none */
	uint64_t retry_at;	/* CLOCK_BOOTTIME ns: no new attempt by path before */
	uint64_t retry_live_at;	/* nor through a live process's mapping */
	uint64_t bytes;		/* srclines__bytes(h) as last counted */
	uint64_t hold;		/* the hold it was last used in (elfsyms__lines_hold()) */
	struct fr_lines *prev, *next;	/* the open handles, most recent first */
};

struct elfsyms {
	struct fr_buildid buildid;
	size_t nsyms, nloads;
	struct fr_sym *syms;
	struct fr_load *loads;
	struct fr_strpool names;
	unsigned int debug;	/* FR_DEBUG_* */
	struct fr_lines *lines;	/* NULL: no DWARF lines */
};

static void lines__free(struct fr_lines *l);

/* A symbol candidate while loading; @name points into libelf's data. */
struct fr_elfcand {
	uint64_t start, size, limit;
	const char *name;
	unsigned int rank;	/* lower wins among aliases */
};

int elf_read_buildid(int fd, struct fr_buildid *out)
{
	Elf *e;
	int r;

	r = fr_elf_begin(fd, &e);
	if (r)
		return r;
	r = fr_elf_buildid(e, out);
	elf_end(e);
	return r;
}

/*
 * elfsyms__load_segments() - record the PT_LOAD segments of @e.
 * Returns 0, -ENOEXEC for unreadable program headers, or -ENOMEM.
 */
static int elfsyms__load_segments(struct elfsyms *s, Elf *e)
{
	size_t phnum, cap = 0;
	int r;

	if (elf_getphdrnum(e, &phnum) || phnum > FR_ELF_MAX_PHDRS)
		return -ENOEXEC;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph))
			return -ENOEXEC;
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		r = fr_grow((void **)&s->loads, &cap, s->nloads + 1,
			    sizeof(*s->loads));
		if (r)
			return r;
		s->loads[s->nloads++] = (struct fr_load){
			.offset = ph.p_offset,
			.vaddr = ph.p_vaddr,
			.filesz = ph.p_filesz,
		};
	}
	return 0;
}

/* A growable array of candidates plus the section limits of the file. */
struct fr_elfload {
	struct fr_elfcand *c;
	size_t n, cap;
	uint64_t *sec_end;	/* per section: sh_addr + sh_size */
	size_t shnum;
	bool arm;		/* clear the Thumb bit of addresses */
};

/*
 * elfload__table() - add the function symbols of symbol table @scn.
 * Returns 0, -ENOEXEC if the table or its strings are unreadable, -ENOMEM.
 */
static int elfload__table(struct fr_elfload *b, Elf *e, Elf_Scn *scn,
			  const GElf_Shdr *sh)
{
	size_t entsz = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	Elf_Scn *strscn;
	Elf_Data *d;
	size_t n;
	int r;

	if (!sh->sh_link || sh->sh_link >= b->shnum || !entsz)
		return -ENOEXEC;
	strscn = elf_getscn(e, sh->sh_link);
	d = elf_getdata(scn, NULL);
	if (!strscn || !d || !elf_getdata(strscn, NULL))
		return -ENOEXEC;
	n = d->d_size / entsz;
	if (n > INT_MAX)
		n = INT_MAX;
	for (size_t i = 1; i < n; i++) {
		struct fr_elfcand *c;
		const char *name;
		unsigned int bind, type;
		uint64_t limit = UINT64_MAX;
		GElf_Sym sym;

		if (!gelf_getsym(d, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (sym.st_shndx < b->shnum)
			limit = b->sec_end[sym.st_shndx];
		if (b->arm)
			sym.st_value &= ~(GElf_Addr)1;

		r = fr_grow((void **)&b->c, &b->cap, b->n + 1, sizeof(*b->c));
		if (r)
			return r;
		c = &b->c[b->n++];
		c->start = sym.st_value;
		c->size = sym.st_size;
		c->limit = limit;
		c->name = name;
		c->rank = (sym.st_size ? 0 : 64) +
			  (bind == STB_LOCAL ? 32 : bind == STB_WEAK ? 16 : 0) +
			  fr_underscores(name);
	}
	return 0;
}

static int elfcand__cmp(const void *a, const void *b)
{
	const struct fr_elfcand *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * elfsyms__add_name() - store @name for @sym in the pool of @s: demangled
 * (through the FR_SYM_NAME_MAX + 1 bytes of @buf), with the mangled form
 * beside it, or as it is. Returns 0, -ENOMEM or -E2BIG.
 */
static int elfsyms__add_name(struct elfsyms *s, struct fr_sym *sym,
			     const char *name, char *buf)
{
	int r;

	sym->mangled = FR_NO_NAME;
	if (demangle__name(name, buf, FR_SYM_NAME_MAX + 1))
		return strpool__add(&s->names, name, strlen(name), &sym->name);
	r = strpool__add(&s->names, buf, strlen(buf), &sym->name);
	if (!r)
		r = strpool__add(&s->names, name, strlen(name), &sym->mangled);
	return r;
}

/*
 * elfsyms__finish() - sort and deduplicate the candidates of @b, compute
 * every symbol's end and copy the winners' names into @s, demangled.
 * Returns 0, -ENOMEM or -E2BIG.
 */
static int elfsyms__finish(struct elfsyms *s, struct fr_elfload *b)
{
	char *buf = NULL;
	size_t n = 0;
	int r = 0;

	if (!b->n)
		return 0;
	qsort(b->c, b->n, sizeof(*b->c), elfcand__cmp);
	for (size_t i = 0; i < b->n; i++)
		if (!n || b->c[i].start != b->c[n - 1].start)
			b->c[n++] = b->c[i];
	s->syms = calloc(n, sizeof(*s->syms));
	buf = malloc(FR_SYM_NAME_MAX + 1);
	if (!s->syms || !buf) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct fr_elfcand *c = &b->c[i];
		uint64_t next = i + 1 < n ? b->c[i + 1].start : UINT64_MAX;
		struct fr_sym *sym = &s->syms[s->nsyms];
		uint64_t end;

		if (c->size)
			end = c->start + c->size < c->start ?
			      UINT64_MAX : c->start + c->size;
		else
			end = next < c->limit ? next : c->limit;
		if (end <= c->start)
			continue;
		r = elfsyms__add_name(s, sym, c->name, buf);
		if (r)
			goto out;
		sym->start = c->start;
		sym->end = end;
		s->nsyms++;
	}
out:
	free(buf);
	return r;
}

/*
 * elfload__file() - add the function symbols of .symtab and .dynsym of @e
 * to @b, each limited by its section in @e. Returns 0, -ENOEXEC for
 * unreadable section headers or tables, -ENOMEM.
 */
static int elfload__file(struct fr_elfload *b, Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	int r = -ENOEXEC;

	if (!gelf_getehdr(e, &eh) || elf_getshdrnum(e, &b->shnum))
		return -ENOEXEC;
	b->arm = eh.e_machine == EM_ARM;
	if (b->shnum) {
		b->sec_end = calloc(b->shnum, sizeof(*b->sec_end));
		if (!b->sec_end)
			return -ENOMEM;
	}
	/* Section limits first: symbols may point at any section. */
	for (size_t i = 1; i < b->shnum; i++) {
		GElf_Shdr sh;

		scn = elf_getscn(e, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			goto out;
		b->sec_end[i] = sh.sh_addr + sh.sh_size < sh.sh_addr ?
				UINT64_MAX : sh.sh_addr + sh.sh_size;
	}
	for (size_t i = 1; i < b->shnum; i++) {
		GElf_Shdr sh;

		scn = elf_getscn(e, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			goto out;
		if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    (sh.sh_flags & SHF_COMPRESSED))
			continue;
		r = elfload__table(b, e, scn, &sh);
		if (r)
			goto out;
	}
	r = 0;
out:
	free(b->sec_end);
	b->sec_end = NULL;
	b->shnum = 0;
	return r;
}

/*
 * elfsyms__load_symbols() - load the function symbols of @e and, if not
 * NULL, of its debug object @dbg (linked like @e: the same addresses) into
 * @s. A debug object whose tables are unreadable is dropped, and noted in
 * @s->debug. Returns 0, -ENOEXEC for unreadable section headers or tables
 * of @e, -ENOMEM.
 */
static int elfsyms__load_symbols(struct elfsyms *s, Elf *e, Elf *dbg)
{
	const unsigned int used = FR_DEBUG_BUILDID | FR_DEBUG_LINK | FR_DEBUG_MINI;
	struct fr_elfload b = { 0 };
	size_t own;
	int r;

	r = elfload__file(&b, e);
	if (r)
		goto out;
	own = b.n;
	if (dbg) {
		r = elfload__file(&b, dbg);
		if (r == -ENOEXEC) {
			b.n = own;
			s->debug = (s->debug & ~used) | FR_DEBUG_BAD;
			r = 0;
		}
		if (r)
			goto out;
	}
	r = elfsyms__finish(s, &b);
out:
	free(b.c);
	return r;
}

/*
 * elfsyms__note_lines() - remember where the DWARF lines of the binary
 * (@st, @e, mapped at @path) are: in its debug file @dbg if that has
 * some, else in the binary. Only section headers are read. Returns 0 or
 * -ENOMEM.
 */
static int elfsyms__note_lines(struct elfsyms *s, const struct stat *st, Elf *e,
			       const struct debuginfo *dbg, const char *path)
{
	struct fr_lines *l;
	struct stat dst;
	const char *dpath;
	uid_t uid = 0;
	bool in_binary;

	dpath = debuginfo__path(dbg, &uid);
	if (dpath && !debuginfo__stat(dbg, &dst) && !srclines__probe(debuginfo__elf(dbg), NULL)) {
		in_binary = false;
		st = &dst;
	} else if (!srclines__probe(e, NULL)) {
		in_binary = true;
		dpath = path;
	} else {
		return 0;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	if (dpath && !(l->path = strdup(dpath))) {
		free(l);
		return -ENOMEM;
	}
	l->in_binary = in_binary;
	l->uid = uid;
	l->dev = st->st_dev;
	l->ino = st->st_ino;
	l->size = st->st_size;
	l->mtime = st->st_mtim;
	s->lines = l;
	return 0;
}

void elfsyms__free(struct elfsyms *s)
{
	if (!s)
		return;
	lines__free(s->lines);
	free(s->names.buf);
	free(s->loads);
	free(s->syms);
	free(s);
}

struct elfsyms *elfsyms__open_fd_hint(int fd, const char *path)
{
	struct debuginfo *dbg = NULL;
	struct elfsyms *s;
	struct stat st;
	Elf *e = NULL;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (fstat(fd, &st)) {
		r = -errno;
		goto out;
	}
	r = fr_elf_begin(fd, &e);
	if (r)
		goto out;
	if (!fr_elf_check_tables(e, (uint64_t)st.st_size)) {
		r = -ENOEXEC;
		goto out;
	}
	r = elfsyms__load_segments(s, e);
	if (r)
		goto out;
	fr_elf_buildid(e, &s->buildid);
	r = debuginfo__open(fd, e, &s->buildid, path, 0, &dbg);
	if (r)
		goto out;
	s->debug = debuginfo__flags(dbg);
	r = elfsyms__load_symbols(s, e, debuginfo__elf(dbg));
	if (!r)
		r = elfsyms__note_lines(s, &st, e, dbg, path);
out:
	debuginfo__free(dbg);
	elf_end(e);
	if (r) {
		elfsyms__free(s);
		errno = -r;
		return NULL;
	}
	return s;
}

struct elfsyms *elfsyms__open_fd(int fd)
{
	return elfsyms__open_fd_hint(fd, NULL);
}

struct elfsyms *elfsyms__open(const char *path)
{
	struct elfsyms *s;
	int fd, err;

	fd = untrusted__open(AT_FDCWD, path, &(struct fr_untrusted_rule){
				     .max_bytes = FR_ELF_MAX_BYTES }, NULL);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	s = elfsyms__open_fd_hint(fd, path);
	err = errno;
	close(fd);
	errno = err;
	return s;
}

const struct fr_buildid *elfsyms__buildid(const struct elfsyms *s)
{
	return &s->buildid;
}

size_t elfsyms__count(const struct elfsyms *s)
{
	return s->nsyms;
}

unsigned int elfsyms__debug(const struct elfsyms *s)
{
	return s->debug;
}

/*
 * elfsyms__segment() - the first PT_LOAD segment whose file range holds
 * offset @off, or NULL. Binaries have a handful of segments.
 */
static const struct fr_load *elfsyms__segment(const struct elfsyms *s,
					      uint64_t off)
{
	for (size_t i = 0; i < s->nloads; i++) {
		const struct fr_load *l = &s->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz)
			return l;
	}
	return NULL;
}

const char *elfsyms__lookup_full(const struct elfsyms *s, uint64_t file_off,
				 uint64_t *sym_off, const char **mangled)
{
	const struct fr_load *l;
	const struct fr_sym *sym;
	size_t lo = 0, hi;
	uint64_t vaddr;

	if (mangled)
		*mangled = NULL;
	if (!s)
		return NULL;
	l = elfsyms__segment(s, file_off);
	if (!l)
		return NULL;
	vaddr = file_off - l->offset + l->vaddr;
	hi = s->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	sym = &s->syms[lo - 1];
	if (vaddr >= sym->end)
		return NULL;
	if (sym_off)
		*sym_off = vaddr - sym->start;
	if (mangled && sym->mangled != FR_NO_NAME)
		*mangled = s->names.buf + sym->mangled;
	return s->names.buf + sym->name;
}

const char *elfsyms__lookup(const struct elfsyms *s, uint64_t file_off,
			    uint64_t *sym_off)
{
	return elfsyms__lookup_full(s, file_off, sym_off, NULL);
}

/* ------------------------------------------------------------------ lines */

/*
 * The DWARF handles open, most recently used first, and what they cost.
 * One lock for all: lookups are short, and in the daemon only the dump
 * thread makes them.
 */
static pthread_mutex_t lines_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fr_lines *lines_head, *lines_tail;
static uint64_t lines_budget = FR_SRCLINE_BUDGET;
static struct fr_lines_stats lines_st;
static uint64_t lines_hold;	/* the current hold's number, 0: none */
static uint64_t lines_holds;	/* holds begun */

/* lines__unlink() - take open @l off the list. The caller holds lines_lock. */
static void lines__unlink(struct fr_lines *l)
{
	if (l->prev)
		l->prev->next = l->next;
	else
		lines_head = l->next;
	if (l->next)
		l->next->prev = l->prev;
	else
		lines_tail = l->prev;
	l->prev = l->next = NULL;
}

/* lines__push() - put @l first on the list. The caller holds lines_lock. */
static void lines__push(struct fr_lines *l)
{
	l->prev = NULL;
	l->next = lines_head;
	if (lines_head)
		lines_head->prev = l;
	lines_head = l;
	if (!lines_tail)
		lines_tail = l;
}

/* lines__close() - free the handle of @l and uncount it. The caller holds lines_lock. */
static void lines__close(struct fr_lines *l)
{
	lines__unlink(l);
	srclines__free(l->h);
	l->h = NULL;
	lines_st.open--;
	lines_st.bytes -= l->bytes;
	l->bytes = 0;
}

static void lines__free(struct fr_lines *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&lines_lock);
	if (l->h)
		lines__close(l);
	pthread_mutex_unlock(&lines_lock);
	free(l->path);
	free(l);
}

/*
 * lines__trim() - close the least recently used handles but @keep while
 * all of them hold more than the budget; a handle used within the current
 * hold stops it (it and all used since stay open). The caller holds
 * lines_lock.
 */
static void lines__trim(const struct fr_lines *keep)
{
	while (lines_st.bytes > lines_budget && lines_tail && lines_tail != keep &&
	       !(lines_hold && lines_tail->hold == lines_hold)) {
		lines__close(lines_tail);
		lines_st.evicted++;
	}
	if (lines_st.bytes > lines_st.peak)
		lines_st.peak = lines_st.bytes;
}

/*
 * lines__account() - count what @l's handle holds now (lookups parse line
 * programs), mark it used in the current hold, and trim to the budget. The
 * caller holds lines_lock.
 */
static void lines__account(struct fr_lines *l)
{
	uint64_t b = srclines__bytes(l->h);

	lines_st.bytes = lines_st.bytes - l->bytes + b;
	l->bytes = b;
	l->hold = lines_hold;
	lines__trim(l);
}

/* lines__same() - whether @st is the file @l was found in at load time. */
static bool lines__same(const struct fr_lines *l, const struct stat *st)
{
	return st->st_dev == l->dev && st->st_ino == l->ino && st->st_size == l->size &&
	       st->st_mtim.tv_sec == l->mtime.tv_sec && st->st_mtim.tv_nsec == l->mtime.tv_nsec;
}

/*
 * lines__binary() - whether @fd is the binary of @s: the file loaded, or
 * one with its build-id (the cache shares a table between such files).
 */
static bool lines__binary(const struct elfsyms *s, int fd)
{
	struct fr_buildid id;
	struct stat st;

	if (fstat(fd, &st))
		return false;
	if (lines__same(s->lines, &st))
		return true;
	return s->buildid.len && !elf_read_buildid(fd, &id) && id.len == s->buildid.len &&
	       !memcmp(id.id, s->buildid.id, id.len);
}

/*
 * lines__open_file() - open the file the DWARF lines of @s are in (see
 * elfsyms__lines()). Returns an fd, -ESTALE (a debug file that is not the
 * one loaded), or another -errno (-EAGAIN: no path led to the binary).
 */
static int lines__open_file(const struct elfsyms *s, const char *procdir,
			    const struct fr_mapping *m)
{
	const struct fr_lines *l = s->lines;
	struct fr_untrusted_rule rule = { .max_bytes = FR_ELF_MAX_BYTES };
	const char *paths[2];
	struct stat st;
	int fd, n = 0;

	if (!l->in_binary) {
		rule.check_owner = true;
		rule.uid = l->uid;
		fd = untrusted__open(AT_FDCWD, l->path, &rule, &st);
		if (fd >= 0 && !lines__same(l, &st)) {
			close(fd);
			return -ESTALE;
		}
		return fd;
	}
	if (procdir && m && m->path && m->path[0] == '/') {
		fd = fr_mapping__open(procdir, m);
		if (fd >= 0 && lines__binary(s, fd))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	/* By path, in the daemon's own view: only the same file will do. */
	if (m && m->path && m->path[0] == '/' && !m->deleted)
		paths[n++] = m->path;
	if (l->path && l->path[0] == '/' && (!n || strcmp(l->path, paths[0])))
		paths[n++] = l->path;
	for (int i = 0; i < n; i++) {
		fd = untrusted__open(AT_FDCWD, paths[i], &rule, NULL);
		if (fd >= 0 && lines__binary(s, fd))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -EAGAIN;
}

/*
 * lines__read() - read the handle of @s's lines. A file that cannot be
 * opened (or, for a binary, is not the one loaded) is tried again after
 * FR_LINES_RETRY_NS, but sooner through a live process's mapping when
 * only paths failed; DWARF that is refused or malformed, and a debug file
 * that changed, never. The caller holds lines_lock. Returns 0 or -errno.
 */
static int lines__read(const struct elfsyms *s, const char *procdir, const struct fr_mapping *m)
{
	struct fr_lines *l = s->lines;
	bool live = procdir && m && l->in_binary;
	uint64_t now = fr_boottime_ns();
	bool again;
	int fd, r;

	if (l->err)
		return l->err;
	if (now < (live ? l->retry_live_at : l->retry_at))
		return -EAGAIN;
	fd = lines__open_file(s, procdir, m);
	if (fd >= 0) {
		l->h = srclines__open_fd(fd);
		r = l->h ? 0 : -errno;
		close(fd);
		again = r == -ENOMEM;
	} else {
		r = fd;
		again = r != -ESTALE;
	}
	if (!r) {
		l->retry_at = l->retry_live_at = 0;
		lines_st.opened++;
		lines_st.open++;
		lines__push(l);
		return 0;
	}
	lines_st.failed++;
	if (!again) {
		l->err = r;
	} else {
		l->retry_at = now + FR_LINES_RETRY_NS;
		if (live)
			l->retry_live_at = l->retry_at;
	}
	return r;
}

bool elfsyms__has_lines(const struct elfsyms *s)
{
	return s && s->lines;
}

int elfsyms__lines(const struct elfsyms *s, uint64_t file_off, const char *procdir,
		   const struct fr_mapping *m, struct fr_srcline *out, unsigned int max)
{
	const struct fr_load *seg;
	struct fr_lines *l;
	int r;

	if (!s || !s->lines)
		return -ENOENT;
	if (!max)
		return -EINVAL;
	seg = elfsyms__segment(s, file_off);
	if (!seg)
		return 0;
	l = s->lines;
	pthread_mutex_lock(&lines_lock);
	if (!l->h) {
		r = lines__read(s, procdir, m);
		if (r)
			goto out;
	} else if (lines_head != l) {
		lines__unlink(l);
		lines__push(l);
	}
	r = srclines__lookup(l->h, file_off - seg->offset + seg->vaddr, out, max);
	lines__account(l);
out:
	pthread_mutex_unlock(&lines_lock);
	return r;
}

void elfsyms__lines_stats(struct fr_lines_stats *st)
{
	pthread_mutex_lock(&lines_lock);
	*st = lines_st;
	pthread_mutex_unlock(&lines_lock);
}

void elfsyms__lines_hold(bool on)
{
	pthread_mutex_lock(&lines_lock);
	lines_hold = on ? ++lines_holds : 0;
	if (!on)
		lines__trim(lines_head);
	pthread_mutex_unlock(&lines_lock);
}

void elfsyms__set_lines_budget(uint64_t bytes)
{
	pthread_mutex_lock(&lines_lock);
	lines_budget = bytes ? bytes : FR_SRCLINE_BUDGET;
	pthread_mutex_unlock(&lines_lock);
}

/* --------------------------------------------------------------- kallsyms */

struct fr_ksym {
	uint64_t start, end;
	uint32_t name, module;	/* pool offsets; module may be FR_NO_MODULE */
	uint32_t rank, seq;	/* alias preference, then file order */
};

struct kallsyms {
	size_t n;
	struct fr_ksym *syms;
	struct fr_strpool names;
};

/* kallsyms__type_rank() - preference of a text type, -1 for other types. */
static int kallsyms__type_rank(char type)
{
	switch (type) {
	case 'T': return 0;
	case 't': return 1;
	case 'W': return 2;
	case 'w': return 3;
	default: return -1;
	}
}

/* Parser state: the last module interned, reused for its next symbols. */
struct fr_kload {
	struct kallsyms *k;
	size_t cap, text_seen;
	uint32_t last_mod;	/* pool offset, FR_NO_MODULE before any */
};

/*
 * kallsyms__add_line() - add the text symbol of @line, if any, to @k.
 * Returns 0 (also for lines that are ignored) or -ENOMEM / -E2BIG.
 */
static int kallsyms__add_line(void *ctx, char *line)
{
	struct fr_kload *st = ctx;
	struct kallsyms *k = st->k;
	const char *p = line;
	struct fr_ksym *ks;
	char *name, *mod, *end;
	uint64_t addr;
	int trank, r;

	if (!fr_parse_hex(&p, &addr) || p[0] != ' ' || !p[1] || p[2] != ' ')
		return 0;
	trank = kallsyms__type_rank(p[1]);
	if (trank < 0)
		return 0;
	name = line + (p + 3 - line);
	end = name + strcspn(name, " \t\r\n");
	if (end == name)
		return 0;
	st->text_seen++;
	if (!addr)
		return 0;

	r = fr_grow((void **)&k->syms, &st->cap, k->n + 1, sizeof(*k->syms));
	if (r)
		return r;
	ks = &k->syms[k->n];
	ks->module = FR_NO_MODULE;
	mod = strchr(end, '[');
	if (mod && strchr(mod, ']')) {
		size_t mlen = strchr(mod, ']') - mod - 1;

		mod[mlen + 1] = '\0';
		mod++;
		if (st->last_mod != FR_NO_MODULE &&
		    !strcmp(k->names.buf + st->last_mod, mod)) {
			ks->module = st->last_mod;
		} else {
			r = strpool__add(&k->names, mod, mlen, &ks->module);
			if (r)
				return r;
			st->last_mod = ks->module;
		}
	}
	r = strpool__add(&k->names, name, end - name, &ks->name);
	if (r)
		return r;
	ks->start = addr;
	ks->rank = trank * 16 + fr_underscores(name);
	ks->seq = (uint32_t)k->n;
	k->n++;
	return 0;
}

/* Shrink *@p to @size bytes; true if it moved or shrank. Failure keeps it. */
static bool shrink(void **p, size_t size)
{
	void *q = realloc(*p, size ? size : 1);

	if (!q)
		return false;
	*p = q;
	return true;
}

static int ksym__cmp(const void *a, const void *b)
{
	const struct fr_ksym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* kallsyms__same_module() - whether two symbols belong to one module. */
static bool kallsyms__same_module(const struct kallsyms *k,
				  const struct fr_ksym *a,
				  const struct fr_ksym *b)
{
	if (a->module == FR_NO_MODULE || b->module == FR_NO_MODULE)
		return a->module == b->module;
	return !strcmp(k->names.buf + a->module, k->names.buf + b->module);
}

/*
 * kallsyms__finish() - sort, keep the best alias per address and set every
 * symbol's end.
 */
static void kallsyms__finish(struct kallsyms *k)
{
	size_t n = 0;

	if (!k->n)
		return;
	qsort(k->syms, k->n, sizeof(*k->syms), ksym__cmp);
	for (size_t i = 0; i < k->n; i++)
		if (!n || k->syms[i].start != k->syms[n - 1].start)
			k->syms[n++] = k->syms[i];
	k->n = n;
	for (size_t i = 0; i < n; i++) {
		struct fr_ksym *s = &k->syms[i];
		uint64_t tail = s->start + FR_KSYM_TAIL < s->start ?
				UINT64_MAX : s->start + FR_KSYM_TAIL;

		if (i + 1 < n && kallsyms__same_module(k, s, s + 1))
			s->end = s[1].start;
		else if (i + 1 < n && s[1].start < tail)
			s->end = s[1].start;
		else
			s->end = tail;
	}
	/* Kept for the daemon's life: give back the growth slack. */
	shrink((void **)&k->syms, n * sizeof(*k->syms));
	if (shrink((void **)&k->names.buf, k->names.len ? k->names.len : 1))
		k->names.cap = k->names.len;
}

void kallsyms__free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->names.buf);
	free(k->syms);
	free(k);
}

struct kallsyms *kallsyms__load(const char *path)
{
	struct fr_kload st = { .last_mod = FR_NO_MODULE };
	struct kallsyms *k;
	FILE *f = NULL;
	int r = 0;

	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	st.k = k;
	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		goto out;
	}
	r = read_lines(f, kallsyms__add_line, &st);
	if (r)
		goto out;
	if (st.text_seen && !k->n) {
		r = -EPERM;
		goto out;
	}
	kallsyms__finish(k);
out:
	if (f)
		fclose(f);
	if (r) {
		kallsyms__free(k);
		errno = -r;
		return NULL;
	}
	return k;
}

const char *kallsyms__lookup(const struct kallsyms *k, uint64_t addr,
			     uint64_t *sym_off, const char **module)
{
	const struct fr_ksym *s;
	size_t lo = 0, hi;

	if (!k)
		return NULL;
	hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &k->syms[lo - 1];
	if (addr >= s->end)
		return NULL;
	if (sym_off)
		*sym_off = addr - s->start;
	if (module)
		*module = s->module == FR_NO_MODULE ?
			  NULL : k->names.buf + s->module;
	return k->names.buf + s->name;
}

size_t kallsyms__count(const struct kallsyms *k)
{
	return k->n;
}

/* ---------------------------------------------------------------- perfmap */

struct fr_pentry {
	uint64_t start, size;
	uint32_t name, seq;
};

struct perfmap {
	size_t n;
	struct fr_pentry *e;
	struct fr_strpool names;
};

/* Parser state of one perf map read. */
struct fr_pload {
	struct perfmap *p;
	size_t cap;
};

/*
 * perfmap__add_line() - add the entry of @line to @p unless the line is
 * malformed. Returns 0, -ENOMEM or -E2BIG.
 */
static int perfmap__add_line(void *ctx, char *line)
{
	struct fr_pload *st = ctx;
	struct perfmap *p = st->p;
	const char *s = line;
	struct fr_pentry *e;
	uint64_t start, size;
	size_t len;
	int r;

	if (!fr_parse_hex(&s, &start) || (*s != ' ' && *s != '\t'))
		return 0;
	s += strspn(s, " \t");
	if (!fr_parse_hex(&s, &size) || (*s != ' ' && *s != '\t'))
		return 0;
	s += strspn(s, " \t");
	len = fr_chomp(line + (s - line), strlen(s));
	if (!len || !size || start + size < start)
		return 0;

	r = fr_grow((void **)&p->e, &st->cap, p->n + 1, sizeof(*p->e));
	if (r)
		return r;
	e = &p->e[p->n];
	r = strpool__add(&p->names, s, len, &e->name);
	if (r)
		return r;
	e->start = start;
	e->size = size;
	e->seq = (uint32_t)p->n;
	p->n++;
	return 0;
}

static int pentry__cmp(const void *a, const void *b)
{
	const struct fr_pentry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void perfmap__free(struct perfmap *p)
{
	if (!p)
		return;
	free(p->names.buf);
	free(p->e);
	free(p);
}

/* Sort by (start, line) and keep the last line for one start. */
static void perfmap__finish(struct perfmap *p)
{
	size_t n = 0;

	if (p->n)
		qsort(p->e, p->n, sizeof(*p->e), pentry__cmp);
	for (size_t i = 0; i < p->n; i++) {
		if (n && p->e[n - 1].start == p->e[i].start)
			n--;
		p->e[n++] = p->e[i];
	}
	p->n = n;
}

struct perfmap *perfmap__parse(const char *buf, size_t len)
{
	struct fr_pload st = { 0 };
	struct perfmap *p;
	FILE *f = NULL;
	int r = 0;

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	st.p = p;
	if (len) {
		f = fmemopen((void *)buf, len, "r");
		if (!f) {
			r = -errno;
			goto out;
		}
		r = read_lines(f, perfmap__add_line, &st);
		fclose(f);
	}
	if (!r)
		perfmap__finish(p);
out:
	if (r) {
		perfmap__free(p);
		errno = -r;
		return NULL;
	}
	return p;
}

struct perfmap *perfmap__load_fd(int fd, uint64_t deadline_ns)
{
	struct perfmap *p;
	size_t len;
	char *buf;
	int r, err;

	r = untrusted__slurp(fd, FR_PERFMAP_MAX_BYTES, deadline_ns, &buf, &len);
	if (r) {
		errno = -r;
		return NULL;
	}
	p = perfmap__parse(buf, len);
	err = errno;
	free(buf);
	errno = err;
	return p;
}

struct perfmap *perfmap__load(const char *path)
{
	const struct fr_untrusted_rule rule = { .max_bytes = FR_PERFMAP_MAX_BYTES };
	struct perfmap *p;
	int fd, err;

	fd = untrusted__open(AT_FDCWD, path, &rule, NULL);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	p = perfmap__load_fd(fd, 0);
	err = errno;
	close(fd);
	errno = err;
	return p;
}

const char *perfmap__lookup(const struct perfmap *p, uint64_t addr,
			    uint64_t *sym_off)
{
	const struct fr_pentry *e;
	size_t lo = 0, hi;

	if (!p)
		return NULL;
	hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	e = &p->e[lo - 1];
	if (addr - e->start >= e->size)
		return NULL;
	if (sym_off)
		*sym_off = addr - e->start;
	return p->names.buf + e->name;
}

/* --------------------------------------------------------------- symcache */

/* A cache key; padding-free so that it compares and hashes as bytes. */
struct fr_cachekey {
	uint64_t w[6];
};

#define FR_KEY_BUILDID	1
#define FR_KEY_FILE	2

struct fr_cacheent {
	struct elfsyms *syms;	/* NULL: remembered failure */
	int err;		/* errno of the failure */
	unsigned int refs;	/* number of keys that point here */
};

struct symcache {
	pthread_mutex_t lock;	/* the public entry points are thread-safe */
	struct fr_hashmap map;	/* struct fr_cachekey -> struct fr_cacheent * */
	struct symcache_stats st;
};

static struct fr_cachekey fr_key_buildid(const struct fr_buildid *id)
{
	struct fr_cachekey k = { .w = { FR_KEY_BUILDID, id->len } };

	memcpy(&k.w[2], id->id, id->len);
	return k;
}

static struct fr_cachekey fr_key_file(const struct stat *st)
{
	return (struct fr_cachekey){ .w = {
		FR_KEY_FILE, st->st_dev, st->st_ino, (uint64_t)st->st_size,
		(uint64_t)st->st_mtim.tv_sec, (uint64_t)st->st_mtim.tv_nsec,
	} };
}

static struct fr_cacheent *symcache__find(const struct symcache *c,
					  const struct fr_cachekey *k)
{
	struct fr_cacheent **e = fr_hashmap__find(&c->map, k);

	return e ? *e : NULL;
}

/*
 * symcache__insert() - map @k (not in the cache yet) to @e, taking a
 * reference on @e. The caller holds the lock, which the map's growth never
 * touches. Returns 0 or -ENOMEM.
 */
static int symcache__insert(struct symcache *c, const struct fr_cachekey *k,
			    struct fr_cacheent *e)
{
	int err = fr_hashmap__insert(&c->map, k, &e);

	if (!err)
		e->refs++;
	return err;
}

struct symcache *symcache__new(void)
{
	struct symcache *c;

	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	fr_hashmap__init(&c->map, sizeof(struct fr_cachekey), sizeof(struct fr_cacheent *),
			 NULL, NULL, NULL);
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

void symcache__free(struct symcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->map.cap; i++) {
		struct fr_cacheent **e;
		const void *k;

		if (fr_hashmap__at(&c->map, i, &k, (void **)&e) && !--(*e)->refs) {
			elfsyms__free((*e)->syms);
			free(*e);
		}
	}
	fr_hashmap__fini(&c->map);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/*
 * symcache__add() - cache @syms (or failure @err when @syms is NULL) under
 * @fkey and, if @bkey is not NULL, under @bkey too. On -ENOMEM @syms is
 * freed. Returns the entry or NULL with errno set.
 */
static struct fr_cacheent *symcache__add(struct symcache *c,
					 const struct fr_cachekey *fkey,
					 const struct fr_cachekey *bkey,
					 struct elfsyms *syms, int err)
{
	const struct fr_cachekey *first = bkey ? bkey : fkey;
	struct fr_cacheent *e;

	e = calloc(1, sizeof(*e));
	if (!e || symcache__insert(c, first, e)) {
		free(e);
		elfsyms__free(syms);
		errno = ENOMEM;
		return NULL;
	}
	e->syms = syms;
	e->err = err;
	/* A missing file alias only costs a build-id read next time. */
	if (bkey)
		symcache__insert(c, fkey, e);
	return e;
}

/* symcache__count() - count a new table @s and where its symbols came from. */
static void symcache__count(struct symcache *c, const struct elfsyms *s)
{
	unsigned int f = elfsyms__debug(s);

	c->st.loaded++;
	c->st.debug_buildid += !!(f & FR_DEBUG_BUILDID);
	c->st.debug_link += !!(f & FR_DEBUG_LINK);
	c->st.debug_minidebuginfo += !!(f & FR_DEBUG_MINI);
	c->st.debug_link_crc_mismatch += !!(f & FR_DEBUG_LINK_CRC);
	c->st.debug_buildid_mismatch += !!(f & FR_DEBUG_BUILDID_MISMATCH);
	c->st.debug_bad += !!(f & FR_DEBUG_BAD);
}

static const struct elfsyms *get_fd_locked(struct symcache *c, int fd, const char *path)
{
	struct fr_cachekey fkey, bkey;
	struct fr_cacheent *e;
	struct fr_buildid id;
	struct elfsyms *syms;
	struct stat st;
	int r;

	if (fstat(fd, &st))
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		errno = ENOEXEC;
		return NULL;
	}
	fkey = fr_key_file(&st);
	e = symcache__find(c, &fkey);
	if (e)
		goto found;

	r = elf_read_buildid(fd, &id);
	if (r == -ENOEXEC) {
		c->st.bad_elf++;
		e = symcache__add(c, &fkey, NULL, NULL, ENOEXEC);
		goto found;
	}
	if (r && r != -ENOENT) {
		errno = -r;
		return NULL;
	}
	if (!r) {
		bkey = fr_key_buildid(&id);
		e = symcache__find(c, &bkey);
		if (e) {
			symcache__insert(c, &fkey, e);
			goto found;
		}
	}

	syms = elfsyms__open_fd_hint(fd, path);
	if (!syms && errno != ENOEXEC)
		return NULL;
	if (syms)
		symcache__count(c, syms);
	else
		c->st.bad_elf++;
	/* Failures are remembered per file only, never per build-id. */
	e = symcache__add(c, &fkey, !r && syms ? &bkey : NULL, syms,
			  syms ? 0 : ENOEXEC);
found:
	if (!e)
		return NULL;
	if (!e->syms)
		errno = e->err;
	return e->syms;
}

const struct elfsyms *symcache__get_fd_hint(struct symcache *c, int fd, const char *path)
{
	const struct elfsyms *s;
	int err;

	pthread_mutex_lock(&c->lock);
	s = get_fd_locked(c, fd, path);
	err = errno;
	pthread_mutex_unlock(&c->lock);
	errno = err;
	return s;
}

const struct elfsyms *symcache__get_fd(struct symcache *c, int fd)
{
	return symcache__get_fd_hint(c, fd, NULL);
}

const struct elfsyms *symcache__get_mapping(struct symcache *c, int pid,
					    const struct fr_mapping *m)
{
	char dir[32];

	snprintf(dir, sizeof(dir), "/proc/%d", pid);
	return symcache__get_mapping_at(c, dir, m);
}

/*
 * fr_mapping__open() - the file behind mapping @m of the process at @procdir,
 * as an untrusted file: through map_files (the kernel's own reference to
 * the mapped file, so it may be followed), else by its path inside the
 * process's root without following any symlink, and then only if its inode
 * is the mapped one. map_files names a range, not a file: when another file
 * on the same device is mapped there now (a dlclose and a dlopen of a
 * library of the same size since the maps were read), it is refused too;
 * rows and symbols read from it were kept under @m's file and named its
 * code wrongly until the daemon stopped. Returns an fd or -errno (-ESTALE:
 * not the mapped file).
 */
int fr_mapping__open(const char *procdir, const struct fr_mapping *m)
{
	struct fr_untrusted_rule rule = { .max_bytes = FR_ELF_MAX_BYTES, .kernel_link = true };
	char path[PATH_MAX + 64];
	struct stat st;
	int fd, rootfd;

	snprintf(path, sizeof(path), "%s/map_files/%" PRIx64 "-%" PRIx64,
		 procdir, m->start, m->end);
	fd = untrusted__open(AT_FDCWD, path, &rule, &st);
	/* Overlayfs may show another device in the maps than fstat: only the
	 * same device's other inode proves another file. */
	if (fd >= 0 && m->inode && st.st_dev == m->dev && st.st_ino != m->inode) {
		close(fd);
		return -ESTALE;
	}
	if (fd >= 0 || untrusted__refusal(fd) >= 0 || m->deleted)
		return fd;
	snprintf(path, sizeof(path), "%s/root", procdir);
	rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	rule.kernel_link = false;
	rule.in_root = true;
	fd = untrusted__open(rootfd, m->path, &rule, &st);
	close(rootfd);
	if (fd >= 0 && m->inode && st.st_ino != m->inode) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

const struct elfsyms *symcache__get_mapping_at(struct symcache *c, const char *procdir,
					       const struct fr_mapping *m)
{
	const struct elfsyms *s;
	int fd, err;

	if (!m->path || m->path[0] != '/') {
		errno = ENOENT;
		return NULL;
	}
	fd = fr_mapping__open(procdir, m);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	s = symcache__get_fd_hint(c, fd, m->path);
	err = errno;
	close(fd);
	errno = err;
	return s;
}

void symcache__stats(struct symcache *c, struct symcache_stats *st)
{
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
}
