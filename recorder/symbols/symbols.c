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
#include "procmaps.h"
#include "srcline.h"
#include "strpool.h"
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
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Bounds that keep malformed input from driving allocations. */
#define FR_ELF_MAX_PHDRS	4096
#define FR_NO_NAME		UINT32_MAX

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
	struct timespec mtime, ctime;
	struct srclines *h;	/* the handle, NULL: not read or closed */
	int err;		/* a failure for good (-errno), 0: none */
	uint64_t retry_at;	/* CLOCK_BOOTTIME ns: no new attempt by path before */
	uint64_t retry_live_at;	/* nor through a live process's mapping */
	uint64_t evicted_at;	/* CLOCK_BOOTTIME ns it was last closed for the budget, 0: never */
	uint64_t bytes;		/* srclines__bytes(h) as last counted */
	uint64_t hold;		/* the hold it was last used in (elfsyms__lines_hold()) */
	uint64_t uses;		/* lookups in that hold */
	struct fr_lines *prev, *next;	/* the open handles, most recent first */
};

/*
 * The symbols proper: what the cache drops when it evicts a table. Built
 * whole, then published with one release store, so that a reader (the
 * dump thread, under symcache__hold()) sees all of it or none.
 */
struct fr_symtab {
	size_t nsyms, nloads;
	struct fr_sym *syms;
	struct fr_load *loads;
	struct fr_strpool names;
	uint64_t bytes;		/* what it holds on the heap, with itself */
};

struct fr_cacheent;

/*
 * A binary's table: its identity and the small facts about it stay for as
 * long as someone holds it; its symbols (tab) may be evicted.
 */
struct elfsyms {
	struct fr_buildid buildid;
	unsigned int debug;	/* FR_DEBUG_* */
	struct fr_lines *lines;	/* NULL: no DWARF lines */
	struct fr_symtab *_Atomic tab;	/* NULL: evicted */
	struct fr_cacheent *ent;	/* the cache entry, NULL: not cached */
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
 * symtab__load_segments() - record the PT_LOAD segments of @e.
 * Returns 0, -ENOEXEC for unreadable program headers, or -ENOMEM.
 */
static int symtab__load_segments(struct fr_symtab *s, Elf *e)
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
	size_t max_bytes;	/* the table's bound (elfsyms_opts) */
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

		/* Each candidate will cost a symbol and its name at least. */
		if ((b->n + 1) * (sizeof(struct fr_sym) + 2) > b->max_bytes)
			return -EFBIG;
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
 * symtab__add_name() - store @name for @sym in the pool of @s: demangled
 * (through the FR_SYM_NAME_MAX + 1 bytes of @buf), with the mangled form
 * beside it, or as it is. Returns 0, -ENOMEM or -E2BIG.
 */
static int symtab__add_name(struct fr_symtab *s, struct fr_sym *sym,
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
 * symtab__finish() - sort and deduplicate the candidates of @b, compute
 * every symbol's end and copy the winners' names into @s, demangled.
 * Returns 0, -ENOMEM, -E2BIG, or -EFBIG when the table would hold more
 * than @b->max_bytes.
 */
static int symtab__finish(struct fr_symtab *s, struct fr_elfload *b)
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
		r = symtab__add_name(s, sym, c->name, buf);
		if (r)
			goto out;
		if (n * sizeof(*s->syms) + s->names.cap > b->max_bytes) {
			r = -EFBIG;
			goto out;
		}
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
 * symtab__load_symbols() - load the function symbols of @e and, if not
 * NULL, of its debug object @dbg (linked like @e: the same addresses) into
 * @s, in at most @max_bytes. A debug object whose tables are unreadable is
 * dropped, and noted in *@debug. Returns 0, -ENOEXEC for unreadable
 * section headers or tables of @e, -EFBIG past @max_bytes, -ENOMEM.
 */
static int symtab__load_symbols(struct fr_symtab *s, unsigned int *debug, Elf *e, Elf *dbg,
				size_t max_bytes)
{
	const unsigned int used = FR_DEBUG_BUILDID | FR_DEBUG_LINK | FR_DEBUG_MINI;
	struct fr_elfload b = { .max_bytes = max_bytes };
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
			*debug = (*debug & ~used) | FR_DEBUG_BAD;
			r = 0;
		}
		if (r)
			goto out;
	}
	r = symtab__finish(s, &b);
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
	l->ctime = st->st_ctim;
	s->lines = l;
	return 0;
}

static void symtab__free(struct fr_symtab *t)
{
	if (!t)
		return;
	free(t->names.buf);
	free(t->loads);
	free(t->syms);
	free(t);
}

/* symtab__seal() - give back the pool's slack and count what @t holds. */
static void symtab__seal(struct fr_symtab *t)
{
	char *buf = t->names.len ? realloc(t->names.buf, t->names.len) : NULL;

	if (buf || !t->names.len) {
		if (!t->names.len)
			free(t->names.buf);
		t->names.buf = buf;
		t->names.cap = t->names.len;
	}
	t->bytes = sizeof(*t) + t->nsyms * sizeof(*t->syms) + t->nloads * sizeof(*t->loads) +
		   t->names.cap;
}

/* elfsyms__tab() - the symbols of @s as published, NULL when evicted. */
static const struct fr_symtab *elfsyms__tab(const struct elfsyms *s)
{
	return s ? atomic_load_explicit(&s->tab, memory_order_acquire) : NULL;
}

void elfsyms__free(struct elfsyms *s)
{
	if (!s)
		return;
	lines__free(s->lines);
	symtab__free(atomic_load(&s->tab));
	free(s);
}

struct elfsyms *elfsyms__open_opts(int fd, const struct elfsyms_opts *o)
{
	struct debuginfo *dbg = NULL;
	struct fr_symtab *t;
	struct elfsyms *s;
	struct stat st;
	Elf *e = NULL;
	int r;

	s = calloc(1, sizeof(*s));
	t = calloc(1, sizeof(*t));
	if (!s || !t) {
		free(s);
		free(t);
		errno = ENOMEM;
		return NULL;
	}
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
	r = symtab__load_segments(t, e);
	if (r)
		goto out;
	fr_elf_buildid(e, &s->buildid);
	r = debuginfo__open(fd, e, &s->buildid, o->path, o->deadline_ns, &dbg);
	if (r)
		goto out;
	s->debug = debuginfo__flags(dbg);
	r = symtab__load_symbols(t, &s->debug, e, debuginfo__elf(dbg),
				 o->max_bytes ? o->max_bytes : FR_ELFSYMS_MAX_BYTES);
	if (!r)
		r = elfsyms__note_lines(s, &st, e, dbg, o->path);
out:
	debuginfo__free(dbg);
	elf_end(e);
	if (r) {
		symtab__free(t);
		elfsyms__free(s);
		errno = -r;
		return NULL;
	}
	symtab__seal(t);
	atomic_init(&s->tab, t);
	return s;
}

struct elfsyms *elfsyms__open_fd_hint(int fd, const char *path)
{
	return elfsyms__open_opts(fd, &(struct elfsyms_opts){ .path = path });
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
	const struct fr_symtab *t = elfsyms__tab(s);

	return t ? t->nsyms : 0;
}

bool elfsyms__evicted(const struct elfsyms *s)
{
	return s && !elfsyms__tab(s);
}

unsigned int elfsyms__debug(const struct elfsyms *s)
{
	return s->debug;
}

/*
 * symtab__segment() - the first PT_LOAD segment whose file range holds
 * offset @off, or NULL. Binaries have a handful of segments.
 */
static const struct fr_load *symtab__segment(const struct fr_symtab *s, uint64_t off)
{
	for (size_t i = 0; i < s->nloads; i++) {
		const struct fr_load *l = &s->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz)
			return l;
	}
	return NULL;
}

const char *elfsyms__lookup_full(const struct elfsyms *es, uint64_t file_off,
				 uint64_t *sym_off, const char **mangled)
{
	const struct fr_symtab *s = elfsyms__tab(es);
	const struct fr_load *l;
	const struct fr_sym *sym;
	size_t lo;
	uint64_t vaddr;

	if (mangled)
		*mangled = NULL;
	if (!s)
		return NULL;
	l = symtab__segment(s, file_off);
	if (!l)
		return NULL;
	vaddr = file_off - l->offset + l->vaddr;
	lo = fr_upper_bound(s->syms, s->nsyms, sizeof(*s->syms),
			    offsetof(struct fr_sym, start), vaddr);
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
 * One lock for all, held by a lookup (the namer's or the dump's) for as
 * long as it takes, which includes reading a file's DWARF the first time:
 * 10-300 ms for libpython or libc's debug file. The drain's thread must
 * never wait for that (status, the cache's trim once a second), so the
 * counts it reads are a copy published at each unlock under a lock of
 * their own, and the room the cache lends is handed over without waiting
 * (elfsyms__set_lines_room()).
 */
static pthread_mutex_t lines_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fr_lines *lines_head, *lines_tail;
static uint64_t lines_budget = FR_SRCLINE_BUDGET;
static _Atomic uint64_t lines_room;	/* what the symbol cache leaves them, when more */
static struct fr_lines_stats lines_st;
static pthread_mutex_t lines_pub_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fr_lines_stats lines_pub;	/* lines_st as of the last unlock */
static uint64_t lines_hold;	/* the current hold's number, 0: none */
static uint64_t lines_holds;	/* holds begun */
static bool lines_closed;	/* a handle was closed since the last give-back */

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
	lines_closed = true;
}

/*
 * lines__unlock() - publish the counts, release lines_lock and, when a
 * handle was closed meanwhile and @give_back, hand the memory libdw freed
 * back to the system: it is freed in the arena of the thread that read the
 * DWARF, and the tables that grow into the room it left are loaded on
 * other threads, so without it the daemon held both (test_churn: VmRSS
 * rose 22 MiB after the handles were closed for the symbols). A handle
 * holds megabytes, and is closed seldom.
 */
static void lines__unlock(bool give_back)
{
	bool closed = lines_closed && give_back;

	if (closed)
		lines_closed = false;
	pthread_mutex_lock(&lines_pub_lock);
	lines_pub = lines_st;
	lines_pub.limit = lines_budget;	/* elfsyms__lines_stats() adds the room */
	pthread_mutex_unlock(&lines_pub_lock);
	pthread_mutex_unlock(&lines_lock);
	if (closed)
		malloc_trim(0);
}

static void lines__free(struct fr_lines *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&lines_lock);
	if (l->h)
		lines__close(l);
	lines__unlock(false);
	free(l->path);
	free(l);
}

/* Did @a serve fewer lookups per byte than @b in the last hold? */
static bool lines__worth_less(const struct fr_lines *a, const struct fr_lines *b)
{
	return (unsigned __int128)a->uses * FR_MAX(b->bytes, 1) <
	       (unsigned __int128)b->uses * FR_MAX(a->bytes, 1);
}

/*
 * lines__victim() - the open handle to close first, other than @keep and
 * those used in the current hold; NULL if none. The least recently used of
 * those the last hold did not use; else the one that served the fewest
 * lookups per byte in it. Not plain LRU: the lines pass looks up the
 * heaviest frames first, so the handle a dump needs most (python3's, 25
 * MiB) was the least recent at its end, closed, and read again at every
 * dump (7 handles opened and closed per dump with stock python3, perl and
 * C++ beside each other, at the default budget). The caller holds
 * lines_lock.
 */
static struct fr_lines *lines__victim(const struct fr_lines *keep)
{
	struct fr_lines *best = NULL;

	for (struct fr_lines *l = lines_tail; l; l = l->prev) {
		if (l == keep || (lines_hold && l->hold == lines_hold))
			continue;
		if (l->hold != lines_holds)
			return l;	/* not used by the last hold */
		if (!best || lines__worth_less(l, best))
			best = l;
	}
	return best;
}

/*
 * lines__keeper() - at a hold's end, the handle that stays open even alone
 * over the budget: the one that served the most lookups per byte in it
 * (the most recent of equals), so that a budget smaller than one handle
 * does not read it again at every dump. The caller holds lines_lock.
 */
static const struct fr_lines *lines__keeper(void)
{
	const struct fr_lines *best = NULL;

	for (const struct fr_lines *l = lines_head; l; l = l->next)
		if (l->hold == lines_holds && (!best || lines__worth_less(best, l)))
			best = l;
	return best ? best : lines_head;
}

/* lines__limit() - what the handles may hold now. The caller holds lines_lock. */
static uint64_t lines__limit(void)
{
	return FR_MAX(lines_budget, atomic_load(&lines_room));
}

/*
 * lines__trim() - close handles other than @keep, as lines__victim()
 * orders them, while all of them hold more than lines__limit(); those used
 * within the current hold stay open. The caller holds lines_lock.
 */
static void lines__trim(const struct fr_lines *keep)
{
	struct fr_lines *v;

	while (lines_st.bytes > lines__limit() && (v = lines__victim(keep))) {
		lines__close(v);
		v->evicted_at = fr_boottime_ns();
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
	if (l->hold != lines_hold)
		l->uses = 0;
	l->hold = lines_hold;
	l->uses++;
	lines__trim(l);
}

/* lines__same() - whether @st is the file @l was found in at load time. */
static bool lines__same(const struct fr_lines *l, const struct stat *st)
{
	return st->st_dev == l->dev && st->st_ino == l->ino && st->st_size == l->size &&
	       st->st_mtim.tv_sec == l->mtime.tv_sec && st->st_mtim.tv_nsec == l->mtime.tv_nsec &&
	       st->st_ctim.tv_sec == l->ctime.tv_sec && st->st_ctim.tv_nsec == l->ctime.tv_nsec;
}

/*
 * lines__binary() - whether @fd is the binary of @s: the very file loaded
 * (a build-id is a claim of the file's writer, never its identity).
 */
static bool lines__binary(const struct elfsyms *s, int fd)
{
	struct stat st;

	return !fstat(fd, &st) && lines__same(s->lines, &st);
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
 * that changed, never. Outside a hold, a handle closed for the budget is
 * not read again before FR_LINES_REOPEN_NS (-EAGAIN): the namer looks up
 * lines all the time, and handles that together pass the budget would
 * otherwise be read in turn for every new frame. The caller holds
 * lines_lock. Returns 0 or -errno.
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
	if (!lines_hold && l->evicted_at && now < l->evicted_at + FR_LINES_REOPEN_NS) {
		lines_st.deferred++;
		return -EAGAIN;
	}
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
	const struct fr_symtab *t;
	struct fr_lines *l;
	int r;

	if (!s || !s->lines)
		return -ENOENT;
	if (!max)
		return -EINVAL;
	t = elfsyms__tab(s);
	seg = t ? symtab__segment(t, file_off) : NULL;
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
	lines__unlock(!lines_hold);	/* a dump's end gives back all it freed */
	return r;
}

/*
 * elfsyms__lines_stats() - the counts as of the last lookup's end, and the
 * limit: never waits for a lookup under way.
 */
void elfsyms__lines_stats(struct fr_lines_stats *st)
{
	pthread_mutex_lock(&lines_pub_lock);
	*st = lines_pub;
	pthread_mutex_unlock(&lines_pub_lock);
	st->limit = FR_MAX(st->limit, atomic_load(&lines_room));
}

void elfsyms__lines_hold(bool on)
{
	pthread_mutex_lock(&lines_lock);
	lines_hold = on ? ++lines_holds : 0;
	if (!on)
		lines__trim(lines__keeper());
	lines__unlock(false);
}

/*
 * elfsyms__set_lines_room() - let the handles hold up to @bytes when that is
 * more than their budget, and close those past the new limit (the handles
 * the current hold used stay). The symbol cache calls it as its own
 * tables grow and shrink, on the drain's thread: when a lookup is under
 * way this does not wait, and that lookup trims to the new limit as it
 * ends. Handles closed here give their memory back to the system at the
 * next lookup outside a dump, on the thread that makes it. Returns whether
 * the handles are within the new limit now (false: a lookup will trim).
 */
bool elfsyms__set_lines_room(uint64_t bytes)
{
	atomic_store(&lines_room, bytes);
	if (pthread_mutex_trylock(&lines_lock))
		return false;
	lines__trim(NULL);
	lines__unlock(false);
	return true;
}

void elfsyms__set_lines_budget(uint64_t bytes)
{
	pthread_mutex_lock(&lines_lock);
	lines_budget = bytes ? bytes : FR_SRCLINE_BUDGET;
	atomic_store(&lines_room, 0);
	lines__unlock(false);
}

/* --------------------------------------------------------------- symcache */

/*
 * A cache key: the file's identity (device, inode, size, modification and
 * change times), padding-free so that it compares and hashes as bytes. A
 * build-id is never a key: it is bytes the file's writer chose, and a file
 * that claims a system library's build-id must not lend it its names (or
 * borrow them).
 */
struct fr_cachekey {
	uint64_t w[5];
};

struct fr_cacheent {
	struct fr_cachekey key;
	struct symcache *c;
	struct elfsyms *syms;	/* NULL: a remembered failure */
	int err;		/* errno of the failure */
	atomic_uint refs;	/* references handed out and not yet put */
	atomic_uint_least64_t mark;	/* the last mark pass that found it mapped by a live process */
	uint64_t used;		/* CLOCK_BOOTTIME ns of the last get */
	uint64_t bytes;		/* charged to the budget now */
	uint64_t retry_at;	/* FR_DEBUG_PENDING: load again from then on */
	char *path;		/* where it was first mapped (absolute), NULL: unknown */
};

/*
 * elfsyms__identity() - the identity of the file @s was loaded from, as the
 * cache keys it (device, inode, size, mtime, ctime), into *@k. False for a
 * table the cache does not hold (opened directly).
 */
bool elfsyms__identity(const struct elfsyms *s, struct symcache_key *k)
{
	if (!s || !s->ent)
		return false;
	*k = (struct symcache_key){ .dev = s->ent->key.w[0], .ino = s->ent->key.w[1],
				    .size = s->ent->key.w[2], .mtime = s->ent->key.w[3],
				    .ctime = s->ent->key.w[4] };
	return true;
}

struct symcache {
	pthread_mutex_t lock;	/* the public entry points are thread-safe */
	struct fr_hashmap map;	/* struct fr_cachekey -> struct fr_cacheent * */
	uint64_t budget;
	unsigned int hold;	/* dumps reading tables now: nothing is evicted */
	uint64_t mark_gen;
	symcache_marker_fn marker;
	void *marker_ctx;
	atomic_uint_least64_t image_bytes, images, maps_refused;
	uint64_t pressed_at;	/* CLOCK_BOOTTIME ns it last went past its budget, 0: never */
	struct symcache_stats st;
	pthread_mutex_t pub_lock;	/* guards pub only */
	struct symcache_stats pub;	/* st as symcache__stats() last read it */
};

static uint64_t symcache__total(struct symcache *c);

static struct fr_cachekey fr_key_file(const struct stat *st)
{
	return (struct fr_cachekey){ .w = {
		st->st_dev, st->st_ino, (uint64_t)st->st_size,
		(uint64_t)st->st_mtim.tv_sec * 1000000000ULL + (uint64_t)st->st_mtim.tv_nsec,
		(uint64_t)st->st_ctim.tv_sec * 1000000000ULL + (uint64_t)st->st_ctim.tv_nsec,
	} };
}

static struct fr_cacheent *symcache__find(const struct symcache *c,
					  const struct fr_cachekey *k)
{
	struct fr_cacheent **e = fr_hashmap__find(&c->map, k);

	return e ? *e : NULL;
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
	pthread_mutex_init(&c->pub_lock, NULL);
	c->budget = c->pub.budget = FR_CACHE_BUDGET;
	return c;
}

/* cacheent__charge() - set what @e costs the budget to its current contents. */
static void cacheent__charge(struct symcache *c, struct fr_cacheent *e)
{
	const struct fr_symtab *t = e->syms ? atomic_load(&e->syms->tab) : NULL;
	uint64_t b = sizeof(*e) + (e->path ? strlen(e->path) + 1 : 0) +
		     (e->syms ? sizeof(*e->syms) : 0) +
		     (e->syms && e->syms->lines ? sizeof(*e->syms->lines) : 0) + (t ? t->bytes : 0);

	c->st.bytes = c->st.bytes - e->bytes + b;
	e->bytes = b;
}

/* cacheent__free() - take @e out of the cache and free it. The caller holds the lock. */
static void cacheent__free(struct symcache *c, struct fr_cacheent *e)
{
	fr_hashmap__remove(&c->map, &e->key);
	c->st.bytes -= e->bytes;
	c->st.entries--;
	elfsyms__free(e->syms);
	free(e->path);
	free(e);
}

void symcache__free(struct symcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->map.cap; i++) {
		struct fr_cacheent **e;
		const void *k;

		if (fr_hashmap__at(&c->map, i, &k, (void **)&e)) {
			elfsyms__free((*e)->syms);
			free((*e)->path);
			free(*e);
		}
	}
	fr_hashmap__fini(&c->map);
	pthread_mutex_destroy(&c->pub_lock);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/*
 * symcache__add() - cache @syms (or failure @err when @syms is NULL) under
 * @key. On -ENOMEM @syms is freed. Returns the entry or NULL with errno set.
 */
static struct fr_cacheent *symcache__add(struct symcache *c, const struct fr_cachekey *key,
					 const char *path, struct elfsyms *syms, int err)
{
	struct fr_cacheent *e = calloc(1, sizeof(*e));

	if (!e || fr_hashmap__insert(&c->map, key, &e)) {
		free(e);
		elfsyms__free(syms);
		errno = ENOMEM;
		return NULL;
	}
	e->key = *key;
	e->c = c;
	/* Without room for the path the entry still names frames: a read
	 * gives the path with the mapping; only an exit's mappings lack it. */
	e->path = path && path[0] == '/' ? strdup(path) : NULL;
	e->syms = syms;
	e->err = err;
	if (syms)
		syms->ent = e;
	c->st.entries++;
	cacheent__charge(c, e);
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

/* The per-file bound of the symbols of one binary: a quarter of the budget. */
static uint64_t symcache__file_max(const struct symcache *c)
{
	return FR_MAX(c->budget / 4, 1ULL << 20);
}

/*
 * symcache__refill() - load the symbols of @e's binary again from @fd
 * (they were evicted, or their debug search ran out of time) into its
 * table, which its holders keep. Nothing else of the table changes but
 * its debug flags. The caller holds the lock, and no hold is on unless
 * the symbols were evicted (a dump reads those a hold keeps, and sees
 * either none or all of new ones). Returns 0 or -errno.
 */
static int symcache__refill(struct symcache *c, struct fr_cacheent *e, int fd,
			    const struct elfsyms_opts *o)
{
	struct elfsyms *n = elfsyms__open_opts(fd, o);
	struct fr_symtab *old;

	if (!n)
		return -errno;
	old = atomic_exchange_explicit(&e->syms->tab, atomic_load(&n->tab), memory_order_acq_rel);
	atomic_store(&n->tab, old);
	e->syms->debug = n->debug;
	e->retry_at = n->debug & FR_DEBUG_PENDING ? fr_boottime_ns() + FR_SYMCACHE_RETRY_NS : 0;
	elfsyms__free(n);
	c->st.reloaded++;
	cacheent__charge(c, e);
	return 0;
}

/*
 * get_fd_locked() - the entry of the binary open at @fd, loaded if new, its
 * symbols loaded again if evicted (or pending) and no dump reads them now.
 * The caller holds the lock. Returns the entry, referenced, or NULL with
 * errno set.
 */
static struct fr_cacheent *get_fd_locked(struct symcache *c, int fd, const char *path,
					 uint64_t deadline_ns)
{
	struct elfsyms_opts o = { .path = path, .deadline_ns = deadline_ns,
				  .max_bytes = symcache__file_max(c) };
	struct fr_cachekey key;
	struct fr_cacheent *e;
	struct elfsyms *syms;
	struct stat st;
	int err;

	if (fstat(fd, &st))
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		errno = ENOEXEC;
		return NULL;
	}
	key = fr_key_file(&st);
	e = symcache__find(c, &key);
	if (e) {
		if (!e->path && path && path[0] == '/') {
			e->path = strdup(path);
			cacheent__charge(c, e);
		}
		/* Under a hold only an evicted table may be filled: none is read. */
		if (e->syms && (!atomic_load(&e->syms->tab) ||
				(!c->hold && e->retry_at && fr_boottime_ns() >= e->retry_at)))
			symcache__refill(c, e, fd, &o);
		goto found;
	}
	syms = elfsyms__open_opts(fd, &o);
	err = syms ? 0 : errno;
	if (!syms && err != ENOEXEC && err != EFBIG)
		return NULL;
	if (syms)
		symcache__count(c, syms);
	else if (err == EFBIG)
		c->st.refused++;
	else
		c->st.bad_elf++;
	/* Failures are remembered per file: malformed, or past the per-file bound. */
	e = symcache__add(c, &key, path, syms, err);
	if (e && syms && (syms->debug & FR_DEBUG_PENDING))
		e->retry_at = fr_boottime_ns() + FR_SYMCACHE_RETRY_NS;
found:
	if (!e)
		return NULL;
	e->used = fr_boottime_ns();
	atomic_fetch_add(&e->refs, 1);
	return e;
}

/*
 * symcache__get() - get_fd_locked() under the lock, then a trim if the
 * cache went past its budget. Returns the table, referenced, or NULL with
 * errno set (a remembered failure: no reference).
 */
static const struct elfsyms *symcache__get(struct symcache *c, int fd, const char *path,
					   uint64_t deadline_ns)
{
	struct fr_cacheent *e;
	bool over;
	int err;

	pthread_mutex_lock(&c->lock);
	e = get_fd_locked(c, fd, path, deadline_ns);
	err = errno;
	if (e && !e->syms) {
		atomic_fetch_sub(&e->refs, 1);
		err = e->err;
		e = NULL;
	}
	over = symcache__total(c) > c->budget && !c->hold;
	pthread_mutex_unlock(&c->lock);
	if (over)
		symcache__trim(c);
	errno = err;
	return e ? e->syms : NULL;
}

const struct elfsyms *symcache__get_fd_hint(struct symcache *c, int fd, const char *path)
{
	return symcache__get(c, fd, path, 0);
}

const struct elfsyms *symcache__get_fd(struct symcache *c, int fd)
{
	return symcache__get_fd_hint(c, fd, NULL);
}

const struct elfsyms *symcache__get_key(struct symcache *c, const struct symcache_key *k,
				       char **path)
{
	struct fr_cachekey key = { .w = { k->dev, k->ino, k->size, k->mtime, k->ctime } };
	struct fr_cacheent *e;

	*path = NULL;
	pthread_mutex_lock(&c->lock);
	e = symcache__find(c, &key);
	if (e && e->syms && e->path)
		*path = strdup(e->path);
	if (e && e->syms && *path) {
		e->used = fr_boottime_ns();
		atomic_fetch_add(&e->refs, 1);
	} else {
		e = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	return e ? e->syms : NULL;
}

void symcache__put(const struct elfsyms *s)
{
	if (s && s->ent)
		atomic_fetch_sub(&s->ent->refs, 1);
}

void symcache__mark(const struct elfsyms *s, uint64_t gen)
{
	if (s && s->ent)
		atomic_store_explicit(&s->ent->mark, gen, memory_order_relaxed);
}

/*
 * symcache__fit_lines() - lend the DWARF line handles what the tables and
 * images leave of 7/8 of the budget, when that is more than their half,
 * while the cache has not gone past its budget for FR_SYMCACHE_IDLE_NS: a
 * workload whose DWARF passes half the budget (libc6-dbg's libc, a
 * libpython built with -g and the daemon's own: 39 MiB of 64) then keeps
 * its handles, where at half they were closed and read again in turn.
 * Once the cache goes past its budget, the lines are back to their half,
 * before any symbols go: lent and taken back over and over under symbol
 * churn, the room made the daemon's memory climb late (test_churn: 17
 * MiB over the last third).
 * The caller holds the lock. Returns false when a lookup under way will
 * trim the lines to it as it ends (elfsyms__set_lines_room()).
 */
static bool symcache__fit_lines(struct symcache *c)
{
	uint64_t others = c->st.bytes + atomic_load(&c->image_bytes);
	uint64_t goal = c->budget - c->budget / 8;
	bool idle = !c->pressed_at || fr_boottime_ns() > c->pressed_at + FR_SYMCACHE_IDLE_NS;

	return elfsyms__set_lines_room(idle && goal > others ? goal - others : 0);
}

void symcache__set_budget(struct symcache *c, uint64_t bytes)
{
	pthread_mutex_lock(&c->lock);
	c->budget = bytes ? bytes : FR_CACHE_BUDGET;
	elfsyms__set_lines_budget(c->budget / 2);
	symcache__fit_lines(c);
	pthread_mutex_unlock(&c->lock);
}

void symcache__set_marker(struct symcache *c, symcache_marker_fn fn, void *ctx)
{
	pthread_mutex_lock(&c->lock);
	c->marker = fn;
	c->marker_ctx = ctx;
	pthread_mutex_unlock(&c->lock);
}

void symcache__hold(struct symcache *c, bool on)
{
	pthread_mutex_lock(&c->lock);
	if (on)
		c->hold++;
	else if (c->hold)
		c->hold--;
	pthread_mutex_unlock(&c->lock);
}

void symcache__charge_image(struct symcache *c, int64_t bytes, int64_t images,
			    uint64_t maps_refused)
{
	atomic_fetch_add(&c->image_bytes, (uint64_t)bytes);
	atomic_fetch_add(&c->images, (uint64_t)images);
	atomic_fetch_add(&c->maps_refused, maps_refused);
}

/*
 * symcache__total() - what the budget covers now: the symbol tables, the
 * process images, and the DWARF line handles.
 */
static uint64_t symcache__total(struct symcache *c)
{
	struct fr_lines_stats ls;

	elfsyms__lines_stats(&ls);
	return c->st.bytes + atomic_load(&c->image_bytes) + ls.bytes;
}

/* A victim of the trim, and the order of eviction. */
struct fr_victim {
	struct fr_cacheent *e;
	int class;	/* 0: nobody holds it, 1: only exited processes, 2: live ones */
	uint64_t used;
};

#define FR_VICTIM_IDLE	(-1)	/* nobody has held it for FR_SYMCACHE_IDLE_NS */

static int victim__cmp(const void *a, const void *b)
{
	const struct fr_victim *x = a, *y = b;

	if (x->class != y->class)
		return x->class < y->class ? -1 : 1;
	return x->used < y->used ? -1 : x->used > y->used;
}

/*
 * symcache__victims() - the entries that hold something to give back, in
 * eviction order, into a new array (*@out, count returned); those no one
 * holds that have been unused for FR_SYMCACHE_IDLE_NS are freed at once
 * (after the scan: a removal moves other entries in the map). The caller
 * holds the lock. Returns the count, or -ENOMEM.
 */
static ssize_t symcache__victims(struct symcache *c, uint64_t gen, uint64_t now,
				 struct fr_victim **out)
{
	struct fr_victim *v = malloc((c->st.entries + 1) * sizeof(*v));
	size_t n = 0, nidle = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < c->map.cap; i++) {
		struct fr_cacheent **p, *e;
		const void *k;
		unsigned int refs;

		if (!fr_hashmap__at(&c->map, i, &k, (void **)&p))
			continue;
		e = *p;
		refs = atomic_load(&e->refs);
		if (refs && (!e->syms || !atomic_load(&e->syms->tab)))
			continue;
		v[n++] = (struct fr_victim){ .e = e, .used = e->used,
			.class = !refs ? 0 : atomic_load(&e->mark) == gen ? 2 : 1 };
	}
	/* The idle ones first, then the rest, each in its order. */
	for (size_t i = 0; i < n; i++)
		if (!v[i].class && now - v[i].used > FR_SYMCACHE_IDLE_NS)
			v[i].class = FR_VICTIM_IDLE;
	qsort(v, n, sizeof(*v), victim__cmp);
	while (nidle < n && v[nidle].class == FR_VICTIM_IDLE) {
		cacheent__free(c, v[nidle++].e);
		c->st.expired++;
	}
	memmove(v, v + nidle, (n - nidle) * sizeof(*v));
	*out = v;
	return (ssize_t)(n - nidle);
}

/*
 * symcache__evict() - give back what @v lists, in order, until the cache
 * is within 7/8 of its budget: an entry no one holds goes whole, a held
 * one keeps its table (its holders' pointer) without symbols. The caller
 * holds the lock.
 */
static void symcache__evict(struct symcache *c, struct fr_victim *v, size_t n)
{
	uint64_t goal = c->budget - c->budget / 8;

	for (size_t i = 0; i < n && symcache__total(c) > goal; i++) {
		struct fr_cacheent *e = v[i].e;

		if (v[i].class == 0) {
			cacheent__free(c, e);
		} else {
			symtab__free(atomic_exchange(&e->syms->tab, NULL));
			cacheent__charge(c, e);
		}
		c->st.evicted++;
	}
}

void symcache__trim(struct symcache *c)
{
	uint64_t now = fr_boottime_ns(), gen = 0;
	struct fr_victim *v;
	ssize_t n;

	/* Never wait for a load (up to a read's deadline): the next trim comes. */
	if (pthread_mutex_trylock(&c->lock))
		return;
	/*
	 * When a lookup holds the lines, their count is not yet what the new
	 * room leaves them: evict nothing for them, the next trim comes.
	 */
	if (c->hold || !symcache__fit_lines(c))
		goto out;
	if (symcache__total(c) > c->budget) {
		c->pressed_at = now;	/* the lines' loan ends first */
		if (!symcache__fit_lines(c))
			goto out;
	}
	if (symcache__total(c) > c->budget && c->marker) {
		gen = ++c->mark_gen;
		pthread_mutex_unlock(&c->lock);
		/* The marker takes the process table's lock: never under ours. */
		c->marker(c->marker_ctx, gen);
		if (pthread_mutex_trylock(&c->lock))
			return;
		if (c->hold)
			goto out;
	}
	n = symcache__victims(c, gen, now, &v);
	if (n < 0)
		goto out;
	if (symcache__total(c) > c->budget)
		symcache__evict(c, v, (size_t)n);
	free(v);
out:
	pthread_mutex_unlock(&c->lock);
}

const struct elfsyms *symcache__get_mapping(struct symcache *c, int pid,
					    const struct fr_mapping *m)
{
	char dir[32];

	snprintf(dir, sizeof(dir), "/proc/%d", pid);
	return symcache__get_mapping_at(c, dir, m, 0);
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

/*
 * fr_mapping__stat() - the identity of the file behind mapping @m of the
 * process at @procdir: a stat through map_files (one system call, the
 * kernel's own link), else as fr_mapping__open() finds it. Returns 0 or
 * -errno (-ESTALE: another file is mapped there now).
 */
int fr_mapping__stat(const char *procdir, const struct fr_mapping *m, struct stat *st)
{
	char path[PATH_MAX + 64];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/map_files/%" PRIx64 "-%" PRIx64,
		 procdir, m->start, m->end);
	if (!stat(path, st) && S_ISREG(st->st_mode)) {
		if (m->inode && st->st_dev == m->dev && st->st_ino != m->inode)
			return -ESTALE;
		return 0;
	}
	fd = fr_mapping__open(procdir, m);
	if (fd < 0)
		return fd;
	if (fstat(fd, st))
		err = -errno;
	close(fd);
	return err;
}

const struct elfsyms *symcache__get_mapping_at(struct symcache *c, const char *procdir,
					       const struct fr_mapping *m, uint64_t deadline_ns)
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
	s = symcache__get(c, fd, m->path, deadline_ns);
	err = errno;
	close(fd);
	errno = err;
	return s;
}

/*
 * symcache__stats() - the cache's counts. A load holds the lock while it
 * reads a file (up to its deadline, 10-100 ms for a large binary), and the
 * drain's thread asks for these in status: unless @wait, when the lock is
 * taken the counts are those of the last call that found it free.
 */
void symcache__stats(struct symcache *c, struct symcache_stats *st, bool wait)
{
	if (wait)
		pthread_mutex_lock(&c->lock);
	if (!wait && pthread_mutex_trylock(&c->lock)) {
		pthread_mutex_lock(&c->pub_lock);
		*st = c->pub;
		pthread_mutex_unlock(&c->pub_lock);
	} else {
		*st = c->st;
		st->budget = c->budget;
		pthread_mutex_unlock(&c->lock);
		pthread_mutex_lock(&c->pub_lock);
		c->pub = *st;
		pthread_mutex_unlock(&c->pub_lock);
	}
	st->image_bytes = atomic_load(&c->image_bytes);
	st->images = atomic_load(&c->images);
	st->maps_refused = atomic_load(&c->maps_refused);
}
