// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pycode.c - Python code objects read from processes, and their cache.
 * See pycode.h.
 *
 * The location table is decoded here by hand: it is CPython's internal
 * format (Objects/locations.md in its tree), and no library outside the
 * interpreter reads it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "hashmap.h"
#include "procstat.h"
#include "pycode.h"
#include "tables.h"
#include "util.h"

/* CPython 3.11 (Include/cpython/code.h, unicodeobject.h, bytesobject.h). */
static const struct pylayout layouts[] = {
	{ .minor = 0x030b, .type = 8, .tp_name = 24, .print = 56, .firstlineno = 72,
	  .filename = 112, .qualname = 128, .linetable = 136,
	  .str_state = 32, .str_length = 16, .str_ascii_data = 48, .str_compact_data = 72,
	  .bytes_size = 16, .bytes_data = 32 },
};

const struct pylayout *pylayout__of(uint32_t version)
{
	for (size_t i = 0; i < FR_ARRAY_SIZE(layouts); i++)
		if (layouts[i].minor == version >> 16)
			return &layouts[i];
	return NULL;
}

static int read_u64(pyread_fn fn, void *ctx, uint64_t addr, uint64_t *v)
{
	return fn(ctx, addr, v, sizeof(*v));
}

/* Append code point @cp to @out (@len used of @cap) as UTF-8; control characters as '?'. */
static size_t put_cp(char *out, size_t len, size_t cap, uint32_t cp)
{
	char b[4];
	size_t n;

	if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp < 0xe000))
		cp = '?';
	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	if (len + n >= cap)
		return len;
	memcpy(out + len, b, n);
	return len + n;
}

/*
 * read_str() - the text of str object @addr into @out (@cap bytes, NUL
 * ended): a compact string of kind 1, 2 or 4 (what the compiler makes
 * of names and file names), cut at @cap. -EBADMSG for anything else.
 */
static int read_str(const struct pylayout *l, pyread_fn fn, void *ctx, uint64_t addr,
		    char *out, size_t cap)
{
	uint8_t raw[FR_PY_FILE_MAX * 4];
	uint64_t len;
	uint32_t state;
	unsigned kind;
	size_t n = 0, chars;
	int err;

	out[0] = 0;
	if (!addr)
		return -EBADMSG;
	err = read_u64(fn, ctx, addr + l->str_length, &len);
	if (!err)
		err = fn(ctx, addr + l->str_state, &state, sizeof(state));
	if (err)
		return err;
	kind = (state >> 2) & 7;
	if (!(state & 0x20) || (kind != 1 && kind != 2 && kind != 4) || len > (1u << 30))
		return -EBADMSG;	/* not compact, or not a kind a str has */
	chars = FR_MIN((size_t)len, cap - 1);
	chars = FR_MIN(chars, sizeof(raw) / kind);
	if (chars) {
		uint64_t data = addr + ((state & 0x40) ? l->str_ascii_data : l->str_compact_data);

		err = fn(ctx, data, raw, chars * kind);
		if (err)
			return err;
	}
	for (size_t i = 0; i < chars; i++) {
		uint32_t cp = kind == 1 ? raw[i] : kind == 2 ? (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8) :
			      (uint32_t)(raw[4 * i] | raw[4 * i + 1] << 8 | raw[4 * i + 2] << 16 |
					 (uint32_t)raw[4 * i + 3] << 24);

		n = put_cp(out, n, cap, cp);
	}
	out[n] = 0;
	return 0;
}

/* Is the object at @addr of the type named "code"? Its type's name is read, bounded. */
static int is_code(const struct pylayout *l, pyread_fn fn, void *ctx, uint64_t addr)
{
	uint64_t type, name;
	char buf[8];
	int err;

	err = read_u64(fn, ctx, addr + l->type, &type);
	if (!err)
		err = read_u64(fn, ctx, type + l->tp_name, &name);
	if (!err)
		err = fn(ctx, name, buf, 5);
	if (err)
		return err;
	return memcmp(buf, "code", 5) ? -EBADMSG : 0;
}

int pycode__read(const struct pylayout *l, pyread_fn fn, void *ctx, uint64_t addr,
		 struct pycode *out)
{
	uint64_t qual, file, lt, ltlen;
	uint32_t w[6];
	int32_t first;
	int err;

	memset(out, 0, offsetof(struct pycode, linetable));
	if (!addr || (addr & 7))
		return -EBADMSG;
	err = is_code(l, fn, ctx, addr);
	if (!err)
		err = fn(ctx, addr + l->print, w, sizeof(w));
	if (!err)
		err = fn(ctx, addr + l->firstlineno, &first, sizeof(first));
	if (!err)
		err = read_u64(fn, ctx, addr + l->qualname, &qual);
	if (!err)
		err = read_u64(fn, ctx, addr + l->filename, &file);
	if (!err)
		err = read_u64(fn, ctx, addr + l->linetable, &lt);
	if (err)
		return err;
	out->print = fr_pyprint(w);
	out->firstlineno = first;
	err = read_str(l, fn, ctx, qual, out->qualname, sizeof(out->qualname));
	if (!err)
		err = read_str(l, fn, ctx, file, out->file, sizeof(out->file));
	if (err)
		return err;
	/* The location table is a bytes object: kept whole, or not at all. */
	if (lt && !read_u64(fn, ctx, lt + l->bytes_size, &ltlen) && ltlen <= FR_PY_LINETABLE_MAX &&
	    !fn(ctx, lt + l->bytes_data, out->linetable, (size_t)ltlen))
		out->ltlen = (uint32_t)ltlen;
	return 0;
}

/* A varint of the location table: 6 bits a byte, bit 6 says more. */
static uint32_t lt_varint(const uint8_t *p, uint32_t n, uint32_t *at)
{
	uint32_t v = 0, shift = 0;

	while (*at < n && shift < 32) {
		uint8_t b = p[(*at)++];

		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

int pycode__line(const struct pycode *c, uint32_t lasti)
{
	const uint8_t *p = c->linetable;
	uint32_t at = 0, units = 0;
	int64_t line = c->firstlineno;

	while (at < c->ltlen) {
		uint8_t head = p[at++];
		unsigned code = (head >> 3) & 15, len = (head & 7) + 1;
		int64_t delta = 0;
		uint32_t body = at;

		if (!(head & 0x80))
			return -1;	/* not an entry's first byte: malformed */
		if (code == 14 || code == 13) {		/* long form, or no columns */
			uint32_t u = lt_varint(p, c->ltlen, &body);

			delta = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
		} else if (code >= 10 && code <= 12) {	/* one line, 0 to 2 below */
			delta = code - 10;
		}
		line += delta;
		/* The entry's other bytes have bit 7 clear: skip to the next entry. */
		while (at < c->ltlen && !(p[at] & 0x80))
			at++;
		if (lasti < units + len)
			return code == 15 || line < 0 || line > INT32_MAX ? -1 : (int)line;
		units += len;
	}
	return -1;
}

/* ------------------------------------------------------------------ cache */

struct pykey {
	uint64_t start, code;
	uint32_t pid, print;
};

struct pycache {
	pthread_mutex_t lock;
	struct unwinder *uw;
	struct fr_hashmap map;		/* struct pykey -> struct pycode * */
	struct pycache_stats st;
};

struct pycache *pycache__new(struct unwinder *uw, size_t budget)
{
	struct pycache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->uw = uw;
	c->st.budget = budget;
	fr_hashmap__init(&c->map, sizeof(struct pykey), sizeof(struct pycode *), NULL, NULL, NULL);
	return c;
}

static void clear(struct pycache *c)
{
	for (size_t i = 0; i < c->map.cap; i++) {
		const void *k;
		void *v;

		if (fr_hashmap__at(&c->map, i, &k, &v))
			free(*(struct pycode **)v);
	}
	fr_hashmap__fini(&c->map);
	fr_hashmap__init(&c->map, sizeof(struct pykey), sizeof(struct pycode *), NULL, NULL, NULL);
	c->st.entries = c->st.bytes = 0;
}

void pycache__free(struct pycache *c)
{
	if (!c)
		return;
	clear(c);
	fr_hashmap__fini(&c->map);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

struct vmread {
	uint32_t pid;
	size_t total;		/* bytes read for this object so far: bounded */
};

#define FR_PYCODE_READ_MAX	(16u << 10)	/* bytes one code object's reads may take */

static int vm_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct vmread *r = ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (r->total + len > FR_PYCODE_READ_MAX)
		return -E2BIG;
	r->total += len;
	n = process_vm_readv((pid_t)r->pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The bytes an entry takes in the budget: its strings and table, not its arrays. */
static size_t entry_bytes(const struct pycode *pc)
{
	return offsetof(struct pycode, linetable) + pc->ltlen;
}

/*
 * read_entry() - read (@pid, @start)'s code object @code into a new entry.
 * Unlocked. The layout is its interpreter's version's, when its table
 * says which; a process walked with a table the kernel built (a short
 * one) has none in the daemon, so each known layout is tried, and the one
 * whose fingerprint is the sample's @print wins (another object there
 * gives -ESTALE). NULL and -errno in *@err.
 */
static struct pycode *read_entry(struct pycache *c, uint32_t pid, uint64_t start, uint64_t code,
				 uint32_t print, int *err)
{
	const struct pylayout *known = NULL;
	struct fr_pyproc py;
	struct pycode *pc, *small;

	if (c->uw && !unwinder__python(c->uw, pid, start, &py))
		known = pylayout__of(py.version);
	pc = malloc(sizeof(*pc));
	if (!pc) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = -EBADMSG;
	for (size_t i = 0; i < FR_ARRAY_SIZE(layouts); i++) {
		const struct pylayout *l = known ? known : &layouts[i];
		struct vmread r = { .pid = pid };
		int e = pycode__read(l, vm_read, &r, code, pc);

		if (!e && pc->print != print)
			e = -ESTALE;
		/* A read that failed outright fails for every layout. */
		if (!e || e == -ESRCH || e == -EPERM || e == -EFAULT || known) {
			*err = e;
			break;
		}
		if (e == -ESTALE)
			*err = e;
	}
	/* Read while (pid, start) lived? After the reads, so a reuse in between shows. */
	if ((!*err || *err == -ESTALE) && fr_procstat__gone(pid, start))
		*err = -ESRCH;
	if (*err) {
		free(pc);
		return NULL;
	}
	small = realloc(pc, entry_bytes(pc));	/* the table's unused room back */
	return small ? small : pc;
}

int pycache__name(struct pycache *c, uint32_t pid, uint64_t start, uint64_t code, uint32_t print,
		  uint32_t lasti, bool may_read, char *func, size_t func_len, char *file,
		  size_t file_len, int *line)
{
	struct pykey k = { .start = start, .code = code, .pid = pid, .print = print };
	struct pycode **found, *pc;
	int err = 0;

	pthread_mutex_lock(&c->lock);
	found = fr_hashmap__find(&c->map, &k);
	pc = found ? *found : NULL;
	pthread_mutex_unlock(&c->lock);
	if (!pc) {
		if (!may_read)
			return -ENOENT;
		pc = read_entry(c, pid, start, code, print, &err);
		pthread_mutex_lock(&c->lock);
		if (!pc) {
			c->st.gone += err == -ESRCH;
			c->st.stale += err == -ESTALE;
			c->st.refused += err != -ESRCH && err != -ESTALE;
			pthread_mutex_unlock(&c->lock);
			return err == -ESRCH ? -ENOENT : err;
		}
		c->st.read++;
		if (c->st.bytes + entry_bytes(pc) > c->st.budget) {
			clear(c);
			c->st.resets++;
		}
		found = fr_hashmap__find(&c->map, &k);
		if (found) {		/* another thread read it meanwhile */
			free(pc);
			pc = *found;
		} else if (fr_hashmap__insert(&c->map, &k, &pc)) {
			pthread_mutex_unlock(&c->lock);
			free(pc);
			return -ENOMEM;
		} else {
			c->st.entries++;
			c->st.bytes += entry_bytes(pc);
		}
		pthread_mutex_unlock(&c->lock);
	}
	/* Entries are freed only by clear(), under the lock, by a reader's
	 * insert: copy what is needed under it. */
	pthread_mutex_lock(&c->lock);
	found = fr_hashmap__find(&c->map, &k);
	if (!found) {
		pthread_mutex_unlock(&c->lock);
		return -ENOENT;
	}
	pc = *found;
	fr_strlcpy(func, pc->qualname, func_len);
	fr_strlcpy(file, pc->file, file_len);
	*line = pycode__line(pc, lasti);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void pycache__stats(struct pycache *c, struct pycache_stats *st)
{
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
}
