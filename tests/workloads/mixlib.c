// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mixlib.c - the shared library of the mixed-stack workload (mixmain.c),
 * built WITHOUT frame pointers (-O2 -fomit-frame-pointer): it keeps more
 * values live across the callback than there are callee-saved registers
 * besides %rbp, so %rbp holds data, not a frame. A walker that follows
 * frame pointers through it goes astray; one that reads .eh_frame does not.
 */
#include <stdint.h>

typedef unsigned long (*mix_cb)(unsigned long);

unsigned long mixlib_run(mix_cb cb, unsigned long n);
unsigned long mixlib_step(mix_cb cb, unsigned long x);

static volatile unsigned long mixlib_sink;
static volatile unsigned long mixlib_vals[8] = { 3, 5, 7, 11, 13, 17, 19, 23 };

__attribute__((noinline)) unsigned long mixlib_step(mix_cb cb, unsigned long x)
{
	/*
	 * Seven values loaded before the call and used after it: more than
	 * %rbx and %r12..%r15 hold, so %rbp holds one of them.
	 */
	unsigned long a = mixlib_vals[0], b = mixlib_vals[1], c = mixlib_vals[2];
	unsigned long d = mixlib_vals[3], e = mixlib_vals[4], f = mixlib_vals[5];
	unsigned long g = mixlib_vals[6];
	unsigned long r = cb(x);

	mixlib_sink = mixlib_sink + 1;
	return r + (a * b) / (c | 1) + (d ^ e) * f + g;
}

__attribute__((noinline)) unsigned long mixlib_run(mix_cb cb, unsigned long n)
{
	unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += mixlib_step(cb, i + s);
	mixlib_sink = mixlib_sink + s;
	return s;
}
