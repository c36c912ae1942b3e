/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rows.h - one ELF file's unwind rows (bpf/contract.h: struct fr_urow),
 * made from its .eh_frame, or its .debug_frame when it has no .eh_frame,
 * through libdw's CFI interpreter. The rows are what the BPF walker
 * (bpf/unwind.bpf.h) searches, so urows__find() here is the same search,
 * for tests and for checking.
 */
#ifndef FR_UNWIND_ROWS_H
#define FR_UNWIND_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"
#include "pydetect.h"

#define FR_UROWS_LOADS	16	/* executable PT_LOAD segments remembered per file */

struct urows_load {
	uint64_t offset, vaddr, filesz;
};

struct urows_stats {
	uint32_t fdes;		/* FDEs read */
	uint32_t invalid;	/* rows with a rule the walker cannot follow */
	uint32_t plt;		/* PLT expression rows */
	uint32_t signal;	/* signal trampoline FDEs */
	uint32_t stop;		/* rows whose return address is undefined */
	uint32_t ra_rdi;	/* rows whose return address is in rdi (__vfork) */
};

struct urows {
	struct fr_urow *row;	/* sorted by pc, no two alike in a row */
	uint32_t n;
	struct urows_load load[FR_UROWS_LOADS];
	uint32_t nload;
	struct urows_stats st;
	struct pyfile py;	/* the file's CPython interpreter, if it is one */
};

/*
 * urows__build_fd() - the rows of the ELF file open at @fd (not taken,
 * not kept). A file without CFI gives 0 rows. Returns 0, -ENOEXEC for a
 * file that is not a 64-bit x86-64 ELF or whose CFI is malformed or has
 * instructions libdw must not run (rows.c: cfi_vet()), -E2BIG for
 * addresses at or above 4 GiB or more than FR_UROWS_MAX rows, -ETIMEDOUT
 * when the build ran past its CPU time budget (0.5 s + 1 us per byte of
 * CFI), or another -errno. On error *@out is empty.
 */
int urows__build_fd(int fd, struct urows *out);

/* urows__build_mem() - the same for an ELF image in memory (the vDSO). */
int urows__build_mem(const void *image, size_t len, struct urows *out);

/* urows__fini() - release the rows; accepts an empty or zeroed struct. */
void urows__fini(struct urows *u);

/*
 * urows__find() - the row that applies at virtual address @v: the last one
 * with pc <= @v, as the BPF walker finds it; NULL before the first row.
 */
const struct fr_urow *urows__find(const struct urows *u, uint32_t v);

/*
 * fr_load_bias() - for a mapping at @start with file offset @pgoff of a
 * file whose PT_LOAD segments are @load[0..@n), the bias such that address
 * - bias is the file's virtual address. Returns 0, or -ENOENT when no
 * segment holds @pgoff.
 */
int fr_load_bias(const struct urows_load *load, uint32_t n, uint64_t start, uint64_t pgoff,
		 uint64_t *bias);

#endif /* FR_UNWIND_ROWS_H */
