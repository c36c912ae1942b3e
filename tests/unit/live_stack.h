/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * live_stack.h - a copy of this process's own stack as the BPF side takes
 * one (the registers of a frame, then the bytes from its sp up), and
 * glibc's backtrace() from the same place, for tests that walk it: three
 * calls without frame pointers lie between main() and the capture.
 */
#ifndef FR_TEST_LIVE_STACK_H
#define FR_TEST_LIVE_STACK_H

#include <execinfo.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

#include "procmaps.h"
#include "uwalk.h"

#define LIVE_COPY_MAX	(256 * 1024)

struct capture {
	struct uwalk_regs r;
	uint8_t *copy;		/* LIVE_COPY_MAX bytes, the caller's */
	size_t len;
	void *bt[128];
	int nbt;
};

/* The main thread's stack mapping's end: the top of the copy. */
static inline uint64_t live_stack_top(uint64_t sp)
{
	struct procmaps *pm = procmaps__read(getpid());
	const struct fr_mapping *m = pm ? procmaps__find(pm, sp) : NULL;
	uint64_t top = m ? m->end : 0;

	procmaps__free(pm);
	return top;
}

/*
 * Take this frame's registers, then a copy of the stack from its sp up
 * (process_vm_readv: the kernel's read, which ASan does not check
 * against the callers' redzones).
 */
static __attribute__((noinline)) void live_capture_here(struct capture *c)
{
	uint64_t pc, sp, bp, top;
	struct iovec local, remote;
	ssize_t got;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(pc), "=r"(sp), "=r"(bp));
	c->r = (struct uwalk_regs){ .pc = pc, .sp = sp, .bp = bp, .exact = true };
	top = live_stack_top(sp);
	c->len = top > sp ? top - sp : 0;
	if (c->len > LIVE_COPY_MAX)
		c->len = LIVE_COPY_MAX;
	local = (struct iovec){ c->copy, c->len };
	remote = (struct iovec){ (void *)sp, c->len };
	got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	c->len = got > 0 ? (size_t)got : 0;
}

#define LIVE_NOFP __attribute__((noinline, optimize("omit-frame-pointer")))

static LIVE_NOFP void live_leaf(struct capture *c)
{
	live_capture_here(c);
	c->nbt = backtrace(c->bt, 128);
	__asm__ volatile("" ::: "memory");	/* no tail call */
}

static LIVE_NOFP void live_middle(struct capture *c, int depth)
{
	if (depth)
		live_middle(c, depth - 1);
	else
		live_leaf(c);
	__asm__ volatile("" ::: "memory");
}

/*
 * live_capture() - fill @c (c->copy allocated by the caller): the stack
 * as live_capture_here() saw it under live_leaf() and four live_middle()
 * frames, and backtrace()'s frames from live_leaf().
 */
static LIVE_NOFP void live_capture(struct capture *c)
{
	live_middle(c, 3);
	__asm__ volatile("" ::: "memory");
}

#endif /* FR_TEST_LIVE_STACK_H */
