// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * frdl.c - a library the process-truth test loads with dlopen() after the
 * process started, so that its code lies outside the first-read mappings.
 */
#include <time.h>

void fr_dl_spin(double seconds);

static volatile unsigned long fr_dl_sink;

__attribute__((noinline)) void fr_dl_spin(double seconds)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 100000; i++)
			fr_dl_sink += (unsigned long)i * 31u;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}
