// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * uwalk.c - the BPF side's user stack walk, over a copy of the stack. See
 * uwalk.h.
 *
 * Written out again rather than shared with bpf/unwind.bpf.h: the kernel's
 * walk is shaped by the verifier (bpf_loop() callbacks, bounded searches
 * over map lookups, probe reads), and this one reads plain arrays. Each
 * rule below names the kernel function it mirrors; test_uwalk checks every
 * row kind against hand-made stacks and a whole walk against glibc's
 * backtrace() on a live stack.
 */
#include <errno.h>
#include <string.h>

#include "rows.h"
#include "uwalk.h"

struct walk {
	const struct uwalk_src *src;
	struct uwalk_regs r;
	struct uwalk_result *res;
	uint32_t end;
};

/* The word at user address @addr, from the copy: -EFAULT outside it. */
static int read_u64(const struct walk *w, uint64_t addr, uint64_t *out)
{
	const struct uwalk_src *s = w->src;

	if (addr < s->base || addr - s->base > s->len || s->len - (addr - s->base) < 8)
		return -EFAULT;
	memcpy(out, s->stack + (addr - s->base), 8);
	return 0;
}

/* uwalk_fp(): one frame-pointer step, the caller's frame at rbp. */
static void step_fp(struct walk *w)
{
	uint64_t bp = w->r.bp, next_bp, ra;

	if (!bp || bp < w->r.sp || (bp & 7)) {
		w->end = FR_UEND_NO_INFO;
		return;
	}
	if (read_u64(w, bp, &next_bp) || read_u64(w, bp + 8, &ra)) {
		w->end = FR_UEND_READ;
		return;
	}
	if (!ra) {
		w->end = FR_UEND_NO_INFO;
		return;
	}
	w->r.sp = bp + 16;
	w->r.bp = next_bp;
	w->r.pc = ra;
	w->r.exact = false;
	w->res->by_fp++;
}

/* uwalk_signal(): the registers the kernel saved in the signal frame. */
static void step_signal(struct walk *w)
{
	uint64_t sp = w->r.sp, nbp, nsp, nip;

	if (read_u64(w, sp + FR_UC_RBP, &nbp) || read_u64(w, sp + FR_UC_RSP, &nsp) ||
	    read_u64(w, sp + FR_UC_RIP, &nip)) {
		w->end = FR_UEND_READ;
		return;
	}
	w->r.bp = nbp;
	w->r.sp = nsp;
	w->r.pc = nip;
	w->r.exact = true;
	w->res->by_rows++;
}

/*
 * Row @row's CFA into *@cfa: true for the CFA rules; false when the rule
 * itself stepped or ended the walk.
 */
static bool row_cfa(struct walk *w, const struct fr_urow *row, uint64_t *cfa)
{
	switch ((enum fr_urow_kind)(row->kind & FR_UROW_KIND_MASK)) {
	case FR_UROW_RSP:
		*cfa = w->r.sp + row->cfa_off;
		return true;
	case FR_UROW_RBP:
		*cfa = w->r.bp + row->cfa_off;
		return true;
	case FR_UROW_PLT:
		*cfa = w->r.sp + row->cfa_off + ((w->r.pc & 15) >= (uint64_t)row->rbp_off ? 8 : 0);
		return true;
	case FR_UROW_SIGNAL:
		step_signal(w);
		return false;
	case FR_UROW_STOP:
		w->end = FR_UEND_OUTERMOST;
		return false;
	case FR_UROW_NONE:
		step_fp(w);
		return false;
	case FR_UROW_RA_RDI:
		/* Only the interrupted frame's registers are known. */
		if (w->res->n != 1 || !w->r.exact || !w->r.di) {
			w->end = FR_UEND_INVALID;
			return false;
		}
		w->r.sp += row->cfa_off;
		w->r.pc = w->r.di;
		w->r.di = 0;
		w->r.exact = false;
		w->res->by_rows++;
		return false;
	case FR_UROW_INVALID:
		break;
	}
	w->end = FR_UEND_INVALID;
	return false;
}

/* uwalk_row(): one step with @row, to the caller's pc, sp and bp. */
static void step_row(struct walk *w, const struct fr_urow *row)
{
	uint64_t cfa, ra, bp;

	if (!row_cfa(w, row, &cfa))
		return;		/* stepped, or ended, by the rule itself */
	if (cfa <= w->r.sp) {
		w->end = FR_UEND_INVALID;	/* the stack only grows up when unwinding */
		return;
	}
	if (read_u64(w, cfa - 8, &ra)) {
		w->end = FR_UEND_READ;
		return;
	}
	if (row->kind & FR_UROW_RBP_CFA) {
		if (read_u64(w, cfa + (int64_t)row->rbp_off * 8, &bp)) {
			w->end = FR_UEND_READ;
			return;
		}
		w->r.bp = bp;
	}
	w->r.sp = cfa;
	w->r.pc = ra;
	w->r.exact = false;
	w->res->by_rows++;
	if (!ra)
		w->end = FR_UEND_OUTERMOST;	/* a thread's first frame pushes 0 */
}

/* uwalk_step(): record the pc, then step to its caller. */
static void step(struct walk *w, uint64_t *ips, uint32_t max)
{
	struct uwalk_code code = { 0 };
	struct urows u = { 0 };
	const struct fr_urow *row = NULL;
	uint64_t v;
	int found;

	found = w->src->find(w->src->ctx, w->r.pc, &code);
	if (found && w->res->n) {
		w->end = FR_UEND_BAD_PC;	/* not recorded: no code is there */
		return;
	}
	ips[w->res->n++] = w->r.pc;
	if (w->res->n >= max) {
		w->end = FR_UEND_DEPTH;
		return;
	}
	if (!found && code.rows) {
		v = w->r.pc - code.bias - (w->r.exact ? 0 : 1);
		u.row = (struct fr_urow *)code.rows;
		u.n = code.nrows;
		row = v >> 32 ? NULL : urows__find(&u, (uint32_t)v);
	}
	if (row)
		step_row(w, row);
	else
		step_fp(w);	/* no mapping (the leaf), no rows, or before the first */
}

void uwalk__run(const struct uwalk_src *src, const struct uwalk_regs *r,
		uint64_t *ips, uint32_t max, struct uwalk_result *res)
{
	struct walk w = { .src = src, .r = *r, .res = res };

	memset(res, 0, sizeof(*res));
	if (!max) {
		res->end = FR_UEND_DEPTH;
		return;
	}
	while (!w.end)
		step(&w, ips, max);
	res->end = w.end;
}
