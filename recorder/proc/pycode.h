/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pycode.h - the names of Python frames (issue 27): a code object read
 * from a live process's memory (its qualified name, file, first line and
 * location table), checked against the fingerprint the BPF side took at
 * the sample, kept in a cache with a budget so that the names outlive the
 * process, and the line of an instruction in it.
 *
 * Everything read is the process's own bytes: untrusted. Each read is
 * bounded, a pointer is only an address to try, a length is capped, a
 * string is only text (control bytes become '?'), and the incarnation is
 * checked after the reads: what a PID reused in between gave is dropped.
 */
#ifndef FR_PYCODE_H
#define FR_PYCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"

struct unwinder;

#define FR_PY_NAME_MAX		256	/* bytes of a qualified name kept, with its NUL */
#define FR_PY_FILE_MAX		512	/* of a file name */
#define FR_PY_LINETABLE_MAX	4096	/* of a location table: past it, lines are unknown */
#define FR_PYCACHE_BUDGET	(4u << 20)

/* A code object as read. */
struct pycode {
	char qualname[FR_PY_NAME_MAX];
	char file[FR_PY_FILE_MAX];
	int32_t firstlineno;
	uint32_t print;		/* fr_pyprint() of what was read */
	uint32_t ltlen;		/* location table bytes kept (0: none, or too long) */
	uint8_t linetable[FR_PY_LINETABLE_MAX];
};

/* Where CPython @version keeps a code object's fields (user side: pycode.c). */
struct pylayout {
	uint32_t minor;		/* Py_Version >> 16 */
	uint16_t type;		/* PyObject.ob_type */
	uint16_t tp_name;	/* PyTypeObject.tp_name */
	uint16_t print;		/* the fingerprint's 24 bytes (FR_PYOFF_CODE_PRINT) */
	uint16_t firstlineno, filename, qualname, linetable;
	uint16_t str_state, str_length, str_ascii_data, str_compact_data;
	uint16_t bytes_size, bytes_data;
};

/* pylayout__of() - the layout of CPython @version (Py_Version); NULL: none. */
const struct pylayout *pylayout__of(uint32_t version);
/* pylayout__at() - the @i-th layout known; NULL past the last. */
const struct pylayout *pylayout__at(size_t i);

/*
 * pycode__read() - read code object @addr of process @pid with layout @l
 * into @out, through @readfn (process_vm_readv() for a live process; tests
 * and the fuzzer pass their own). Returns 0, -EFAULT when a read failed,
 * or -EBADMSG when what was read is not a code object of that layout.
 */
typedef int (*pyread_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
int pycode__read(const struct pylayout *l, pyread_fn readfn, void *ctx, uint64_t addr,
		 struct pycode *out);

/*
 * pycode__line() - the source line of instruction @lasti (code units from
 * the first) by @c's location table (CPython 3.11's format); -1 when the
 * table has none for it or ends before it.
 */
int pycode__line(const struct pycode *c, uint32_t lasti);

/* The cache (pycache.c). */
struct pycache_stats {
	uint64_t entries, bytes, budget;
	uint64_t read;		/* code objects read */
	uint64_t refused;	/* reads that failed or gave no code object */
	uint64_t stale;		/* read, but another fingerprint: the object was replaced */
	uint64_t gone;		/* not read: the incarnation had exited */
	uint64_t resets;	/* emptied whole for the budget */
	uint64_t given_up;	/* not read: their incarnation failed 64 reads already */
};

struct pycache *pycache__new(struct unwinder *uw, size_t budget);
void pycache__free(struct pycache *c);

/*
 * pycache__name() - the name of the Python frame (@code, @print, @lasti)
 * of incarnation (@pid, @start): its code object from the cache, or read
 * now when @may_read and the incarnation lives (in its interpreter's
 * version's layout when its unwind table says which, else in the one whose
 * fingerprint agrees). @func gets the qualified name, @file the file,
 * *@line the line (-1: unknown). Returns 0, or -ENOENT when the object
 * is neither cached nor readable, -ESTALE when the object at @code has
 * another fingerprint, -EACCES when its incarnation's reads failed too
 * often to try again, -errno otherwise. Thread-safe.
 */
int pycache__name(struct pycache *c, uint32_t pid, uint64_t start, uint64_t code, uint32_t print,
		  uint32_t lasti, bool may_read, char *func, size_t func_len, char *file,
		  size_t file_len, int *line);

void pycache__stats(struct pycache *c, struct pycache_stats *st);

#endif /* FR_PYCODE_H */
