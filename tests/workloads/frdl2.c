// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * frdl2.c - the library frtool dlswap loads after unloading frdl: built
 * without frame pointers, with frames of another shape than frdl's, and
 * small enough (one page of code) that it may take frdl's place and size.
 * Walked with frdl's rows, its stacks would come out wrong.
 */
#include <time.h>

void fr_dl2_spin(double seconds);

static volatile unsigned long fr_dl2_sink;

/* Deeper frames than frdl's, with locals: its CFA moves by other amounts. */
__attribute__((noinline)) static unsigned long fr_dl2_inner(unsigned long n)
{
	volatile unsigned long pad[24];

	for (unsigned i = 0; i < 24; i++)
		pad[i] = n + i;
	for (unsigned long i = 0; i < 100000; i++)
		fr_dl2_sink += i * pad[i % 24];
	return pad[3];
}

__attribute__((noinline)) static unsigned long fr_dl2_middle(unsigned long n)
{
	volatile unsigned long pad[9];

	pad[0] = fr_dl2_inner(n);
	return pad[0] + 1;
}

__attribute__((noinline)) void fr_dl2_spin(double seconds)
{
	struct timespec a, b;
	unsigned long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		n += fr_dl2_middle(n);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
	fr_dl2_sink += n;
}
