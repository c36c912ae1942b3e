// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pysplice.c - Python frames into a sample's user stack. See pysplice.h.
 */
#include <stddef.h>

#include "pysplice.h"

static bool in_eval(uint64_t pc, const uint64_t eval[4])
{
	return (pc >= eval[0] && pc < eval[1]) || (pc >= eval[2] && pc < eval[3]);
}

/* Append Python frames @pf[*@at..] up to and with the next entry frame (all: @all). */
static uint32_t put_group(const struct fr_pyframe *pf, uint32_t pn, uint32_t *at, bool all,
			  uint64_t *out, uint32_t n, uint32_t cap, bool *cut)
{
	while (*at < pn) {
		const struct fr_pyframe *f = &pf[(*at)++];
		uint32_t lasti = f->lasti & ~FR_PYFRAME_ENTRY;

		if (n + 2 > cap) {
			*cut = true;
			return n;
		}
		out[n++] = FR_PYW_MARK |
			   (uint64_t)(lasti > FR_PYW_LASTI_MAX ? FR_PYW_LASTI_MAX : lasti) << 32 |
			   f->print;
		out[n++] = f->code;
		if ((f->lasti & FR_PYFRAME_ENTRY) && !all)
			break;
	}
	return n;
}

uint32_t fr_pysplice(const uint64_t *ips, uint32_t un, const struct fr_pyframe *pf, uint32_t pn,
		     const uint64_t eval[4], uint64_t *out, uint32_t cap, bool *cut)
{
	uint32_t n = 0, at = 0, last = 0, evals = 0;

	*cut = false;
	/* The last eval frame takes what is left: find it first. */
	for (uint32_t i = 0; i < un; i++)
		if (in_eval(ips[i], eval))
			last = i, evals++;
	for (uint32_t i = 0; i < un; i++) {
		if (evals && in_eval(ips[i], eval) && at < pn) {
			n = put_group(pf, pn, &at, i == last, out, n, cap, cut);
			continue;
		}
		if (n == cap) {
			*cut = true;
			return n;
		}
		out[n++] = ips[i];
	}
	if (!evals)
		n = put_group(pf, pn, &at, true, out, n, cap, cut);
	return n;
}

const struct fr_pytail *fr_pysection(const void *rec, size_t len, size_t used,
				     const struct fr_pyframe **frames)
{
	const struct fr_pytail *t;
	size_t need;

	if (len < used || len - used < sizeof(*t))
		return NULL;
	t = (const void *)((const char *)rec + len - sizeof(*t));
	if (!t->pn || t->pn > FR_PY_MAX_FRAMES)
		return NULL;
	need = (size_t)t->pn * sizeof(**frames) + sizeof(*t);
	if (len - used < need)
		return NULL;
	*frames = (const void *)((const char *)rec + len - need);
	return t;
}
