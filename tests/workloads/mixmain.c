// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mixmain.c - the mixed-stack workload of test_stacks.py: this program is
 * built WITH frame pointers and calls into libfrmixlib.so (mixlib.c),
 * built without them, which calls back into this program, which spins:
 *
 *   main -> mix_outer -> mixlib_run -> mixlib_step -> mix_callback -> mix_spin
 *
 *   frmix [SECONDS]    (default: run until killed)
 */
#include <stdlib.h>
#include <time.h>

typedef unsigned long (*mix_cb)(unsigned long);

unsigned long mixlib_run(mix_cb cb, unsigned long n);
__attribute__((noinline)) unsigned long mix_spin(unsigned long x);
__attribute__((noinline)) unsigned long mix_callback(unsigned long x);
__attribute__((noinline)) void mix_outer(double seconds);

static volatile unsigned long mix_sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long mix_spin(unsigned long x)
{
	for (unsigned long i = 0; i < 200000; i++)
		mix_sink = mix_sink + (x ^ i);
	return mix_sink;
}

__attribute__((noinline)) unsigned long mix_callback(unsigned long x)
{
	unsigned long r = mix_spin(x);

	mix_sink = mix_sink + 1;
	return r;
}

__attribute__((noinline)) void mix_outer(double seconds)
{
	double until = seconds > 0 ? now() + seconds : 0;

	do
		mix_sink = mix_sink + mixlib_run(mix_callback, 64);
	while (!until || now() < until);
}

int main(int argc, char **argv)
{
	mix_outer(argc > 1 ? atof(argv[1]) : 0);
	return 0;
}
