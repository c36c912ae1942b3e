/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pysplice.h - a sample's Python frames put into its user stack, each
 * group in place of the native eval-loop frame that ran it (issue 27).
 *
 * In a stack as interned, a Python frame is two words among the user
 * frames: FR_PYW_MARK with its instruction index and fingerprint, then its
 * code object's address. The first word is never an address (user ones are
 * below 2^47, kernel ones have bits 47..63 set), so whoever walks user
 * frames knows a pair by it: fr_pyw_is().
 */
#ifndef FR_PYSPLICE_H
#define FR_PYSPLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"

#define FR_PYW_MARK		(1ULL << 63)
#define FR_PYW_LASTI_MAX	0xffffffu

static inline bool fr_pyw_is(uint64_t w)
{
	return (w >> 56) == 0x80;
}

static inline uint32_t fr_pyw_lasti(uint64_t w)
{
	return (uint32_t)(w >> 32) & FR_PYW_LASTI_MAX;
}

static inline uint32_t fr_pyw_print(uint64_t w)
{
	return (uint32_t)w;
}

/*
 * fr_pysplice() - the @un native user frames at @ips (leaf first) with the
 * @pn Python frames @pf (leaf first) put in, into @out (room for @cap
 * words). Each native frame in @eval's ranges takes, in its place, the
 * Python frames up to and with the next entry frame; the frames left when
 * no eval frame is left go with the last one taken (or after the native
 * frames when none was found). Returns the words written; *@cut tells
 * whether frames were left out for room (the root-most go).
 */
uint32_t fr_pysplice(const uint64_t *ips, uint32_t un, const struct fr_pyframe *pf, uint32_t pn,
		     const uint64_t eval[4], uint64_t *out, uint32_t cap, bool *cut);

/*
 * fr_pysection() - the Python section of a sample record of @len bytes at
 * @rec whose fixed part and frames end at @used: its frames and tail, or
 * NULL when it is malformed (a count past FR_PY_MAX_FRAMES or past @used).
 */
const struct fr_pytail *fr_pysection(const void *rec, size_t len, size_t used,
				     const struct fr_pyframe **frames);

#endif /* FR_PYSPLICE_H */
