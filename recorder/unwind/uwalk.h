/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * uwalk.h - the user stack walk of bpf/unwind.bpf.h, done in the daemon
 * over a copy of the stack: the way to finish a walk that the BPF side
 * had to leave to frame pointers because a file had no rows yet (issue
 * 25, part 2), once the file's rows exist.
 *
 * It follows the same rules, frame by frame, as uwalk_step() and
 * uwalk_row() in the kernel: the same rows give the same frames. It reads
 * the stack only from the copy: a slot outside it ends the walk with
 * FR_UEND_READ, as an unreadable page does in the kernel.
 */
#ifndef FR_UNWIND_UWALK_H
#define FR_UNWIND_UWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"

/* Where the walk starts: the frame's registers. */
struct uwalk_regs {
	uint64_t pc, sp, bp;
	uint64_t di;		/* the interrupted frame's rdi (__vfork), 0 if unknown */
	bool exact;		/* pc is the interrupted one, not a return address */
};

/*
 * The code at a pc, as the caller's table gives it: the rows of its file
 * (sorted by pc, NULL: no rows, walked by frame pointer) and the bias
 * (pc - bias is the file's virtual address).
 */
struct uwalk_code {
	const struct fr_urow *rows;
	uint32_t nrows;
	uint64_t bias;
};

/*
 * What the walk reads: @find fills *@code for @pc and returns 0, or
 * -ENOENT when no executable mapping holds it; the stack copy holds the
 * user bytes [@base, @base + @len).
 */
struct uwalk_src {
	int (*find)(void *ctx, uint64_t pc, struct uwalk_code *code);
	void *ctx;
	uint64_t base;
	const uint8_t *stack;
	size_t len;
};

struct uwalk_result {
	uint32_t n;		/* frames in ips[0..n) */
	uint32_t end;		/* enum fr_uend */
	uint32_t by_rows;	/* steps taken with rows */
	uint32_t by_fp;		/* steps taken by frame pointer */
};

/*
 * uwalk__run() - walk from @r, writing at most @max pcs into @ips (leaf
 * first: @r's pc, then each caller's return address) and how the walk
 * ended into *@res. A return address in no mapping ends it (FR_UEND_BAD_PC)
 * unrecorded; @max frames end it with FR_UEND_DEPTH.
 */
void uwalk__run(const struct uwalk_src *src, const struct uwalk_regs *r,
		uint64_t *ips, uint32_t max, struct uwalk_result *res);

#endif /* FR_UNWIND_UWALK_H */
