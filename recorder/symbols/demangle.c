// SPDX-License-Identifier: MIT
/*
 * demangle.c - C++ and Rust names through libiberty. See demangle.h.
 *
 * The callback entry points of libiberty are used rather than
 * cplus_demangle(), which does the same dispatch (Rust, then C++) but
 * mallocs a result of any size: names come from binaries other users
 * write, so the output is bounded here by the caller's buffer.
 */
#include "demangle.h"

#include <errno.h>
#include <libiberty/demangle.h>
#include <string.h>

#define FR_DEMANGLE_OPTS	(DMGL_PARAMS | DMGL_ANSI)

/* The output of one demangling: a bounded, NUL-terminated buffer. */
struct fr_dmout {
	char *buf;
	size_t size, len;
};

/* dmout__append() - the libiberty callback: append what fits of @s. */
static void dmout__append(const char *s, size_t len, void *opaque)
{
	struct fr_dmout *o = opaque;
	size_t room = o->size - 1 - o->len;

	if (len > room)
		len = room;
	memcpy(o->buf + o->len, s, len);
	o->len += len;
	o->buf[o->len] = '\0';
}

/* dmout__reset() - forget partial output (a failed demangling may leave some). */
static void dmout__reset(struct fr_dmout *o)
{
	o->len = 0;
	o->buf[0] = '\0';
}

bool demangle__is_mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

int demangle__name(const char *name, char *buf, size_t size)
{
	struct fr_dmout o = { .buf = buf, .size = size };

	dmout__reset(&o);
	if (!demangle__is_mangled(name))
		return -EINVAL;
	if (strnlen(name, FR_DEMANGLE_INPUT_MAX + 1) > FR_DEMANGLE_INPUT_MAX)
		return -ENAMETOOLONG;
	if (rust_demangle_callback(name, FR_DEMANGLE_OPTS, dmout__append, &o) && o.len)
		return 0;
	dmout__reset(&o);
	if (name[1] == 'Z' &&
	    cplus_demangle_v3_callback(name, FR_DEMANGLE_OPTS, dmout__append, &o) && o.len)
		return 0;
	dmout__reset(&o);
	return -EINVAL;
}
