// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pycode.c - Python code objects read from a process's memory, and the
 * lines of their instructions. See pycode.h; the cache is pycache.c.
 *
 * The location table is decoded here by hand: it is CPython's internal
 * format (Objects/locations.md in its tree), and no library outside the
 * interpreter reads it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pycode.h"
#include "util.h"

/* CPython 3.11 (Include/cpython/code.h, unicodeobject.h, bytesobject.h). */
static const struct pylayout layouts[] = {
	{ .minor = 0x030b, .type = 8, .tp_name = 24, .print = 56, .firstlineno = 72,
	  .filename = 112, .qualname = 128, .linetable = 136,
	  .str_state = 32, .str_length = 16, .str_ascii_data = 48, .str_compact_data = 72,
	  .bytes_size = 16, .bytes_data = 32 },
};

const struct pylayout *pylayout__at(size_t i)
{
	return i < FR_ARRAY_SIZE(layouts) ? &layouts[i] : NULL;
}

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

/* Is @cp a character no identifier holds: a control, a surrogate, beyond Unicode? */
static bool cp_control(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp > 0x10ffff ||
	       (cp >= 0xd800 && cp < 0xe000);
}

/* Append code point @cp to @out (@len used of @cap) as UTF-8; control characters as '?'. */
static size_t put_cp(char *out, size_t len, size_t cap, uint32_t cp)
{
	char b[4];
	size_t n;

	if (cp_control(cp))
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
 * of names and file names), cut at @cap. -EBADMSG for anything else, and
 * with @name for an empty one or one with a control character: a
 * qualified name is identifiers, dots and "<...>", so such a read is of
 * an object freed since the sample (pygmentize's encodings module read
 * as "\x01" once), not a name.
 */
static int read_str(const struct pylayout *l, pyread_fn fn, void *ctx, uint64_t addr,
		    char *out, size_t cap, bool name)
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
	if (!(state & 0x20) || (kind != 1 && kind != 2 && kind != 4) || len > (1u << 30) ||
	    (name && !len))
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

		if (name && cp_control(cp)) {
			out[0] = 0;
			return -EBADMSG;
		}
		n = put_cp(out, n, cap, cp);
	}
	out[n] = 0;
	return 0;
}

/* Is type @type named "code"? Its name is read, bounded. */
static int is_code(const struct pylayout *l, pyread_fn fn, void *ctx, uint64_t type)
{
	uint64_t name;
	char buf[8];
	int err;

	err = read_u64(fn, ctx, type + l->tp_name, &name);
	if (!err)
		err = fn(ctx, name, buf, 5);
	if (err)
		return err;
	return memcmp(buf, "code", 5) ? -EBADMSG : 0;
}

/* Room for the head of a code object up to the last field read (3.11: 144 bytes). */
#define FR_PYCODE_HEAD	256

/* A field of the head @h: @off is the layout's, within FR_PYCODE_HEAD. */
static uint64_t head_u64(const uint8_t *h, uint16_t off)
{
	uint64_t v;

	memcpy(&v, h + off, sizeof(v));
	return v;
}

/* The head's length for layout @l: up to its last field read. */
static size_t head_len(const struct pylayout *l)
{
	size_t n = FR_MAX(l->print + 24u, l->firstlineno + 4u);

	n = FR_MAX(n, FR_MAX(l->type + 8u, l->filename + 8u));
	return FR_MAX(n, FR_MAX(l->qualname + 8u, l->linetable + 8u));
}

/*
 * Do heads @a and @b agree on what was read: the type, the fingerprint,
 * the first line and the names' and table's pointers? (Not the reference
 * count, the warm-up counter nor the lazily made caches: those move.)
 */
static bool same_head(const struct pylayout *l, const uint8_t *a, const uint8_t *b)
{
	return !memcmp(a + l->type, b + l->type, 8) && !memcmp(a + l->print, b + l->print, 24) &&
	       !memcmp(a + l->firstlineno, b + l->firstlineno, 4) &&
	       !memcmp(a + l->filename, b + l->filename, 8) &&
	       !memcmp(a + l->qualname, b + l->qualname, 8) &&
	       !memcmp(a + l->linetable, b + l->linetable, 8);
}

/*
 * pycode__read() reads the object's head in one read, so that its fields
 * are of one moment, then its strings and line table, then the head again:
 * an object freed and made anew while it was read (an import's churn
 * reuses them within microseconds) gives -ESTALE, not a name of one
 * object with the file of another.
 */
int pycode__read(const struct pylayout *l, pyread_fn fn, void *ctx, uint64_t addr,
		 struct pycode *out)
{
	uint8_t head[FR_PYCODE_HEAD], again[FR_PYCODE_HEAD];
	size_t hl = head_len(l);
	uint64_t lt, ltlen;
	uint32_t w[6];
	int32_t first;
	int err;

	memset(out, 0, offsetof(struct pycode, linetable));
	if (!addr || (addr & 7) || hl > sizeof(head))
		return -EBADMSG;
	err = fn(ctx, addr, head, hl);
	if (!err)
		err = is_code(l, fn, ctx, head_u64(head, l->type));
	if (err)
		return err;
	memcpy(w, head + l->print, sizeof(w));
	memcpy(&first, head + l->firstlineno, sizeof(first));
	out->print = fr_pyprint(w);
	out->firstlineno = first;
	err = read_str(l, fn, ctx, head_u64(head, l->qualname), out->qualname,
		       sizeof(out->qualname), true);
	if (!err)
		err = read_str(l, fn, ctx, head_u64(head, l->filename), out->file, sizeof(out->file),
			       false);
	if (err)
		return err;
	/* The location table is a bytes object: kept whole, or not at all. */
	lt = head_u64(head, l->linetable);
	if (lt && !read_u64(fn, ctx, lt + l->bytes_size, &ltlen) && ltlen <= FR_PY_LINETABLE_MAX &&
	    !fn(ctx, lt + l->bytes_data, out->linetable, (size_t)ltlen))
		out->ltlen = (uint32_t)ltlen;
	if (fn(ctx, addr, again, hl) || !same_head(l, head, again)) {
		out->ltlen = 0;
		return -ESTALE;
	}
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
