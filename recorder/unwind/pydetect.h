/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pydetect.h - is an ELF file a CPython interpreter (its executable or its
 * libpython), which version, and where its state and eval loop are: what
 * the BPF side needs to walk a sampled thread's Python frames (struct
 * fr_pyproc, issue 27). Read from the file's own symbols, once per file.
 */
#ifndef FR_PYDETECT_H
#define FR_PYDETECT_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "contract.h"

/* What a file says of its interpreter, in the file's virtual addresses. */
struct pyfile {
	uint64_t runtime;	/* _PyRuntime; 0: not an interpreter we walk */
	uint64_t eval[4];	/* the eval loop, and its cold part (0, 0: not found) */
	uint32_t version;	/* Py_Version, e.g. 0x030b02f0 */
	uint16_t off[FR_PYOFF_NR];
};

/*
 * pydetect__elf() - fill @out from ELF @e when it defines _PyRuntime,
 * _PyEval_EvalFrameDefault and Py_Version, and the version has a table
 * of offsets. Returns 1 found, 0 not an interpreter (or one whose version
 * has no table: *@out says which version, runtime 0), -errno on a
 * malformed file. The file is untrusted: every size and offset is
 * checked, and a claim is only a claim (the BPF side reads that
 * process's memory with it, nothing else).
 */
int pydetect__elf(Elf *e, struct pyfile *out);

/* pydetect__table() - the offsets of CPython @version (Py_Version); NULL: none. */
const uint16_t *pydetect__table(uint32_t version);

/* pydetect__proc() - @f's interpreter as loaded at @bias, into a process table. */
void pydetect__proc(const struct pyfile *f, uint64_t bias, struct fr_pyproc *out);

#endif /* FR_PYDETECT_H */
