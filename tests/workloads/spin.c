// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * spin.c - the integration tests' workload: burns CPU in functions with
 * known names (built with frame pointers so that user stacks unwind), or
 * exits at once with a chosen status.
 *
 *   frspin [--seconds S] [--exit CODE] [--threads N]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long fr_sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void fr_spin_leaf(double until);
__attribute__((noinline)) void fr_spin_middle(double until);
__attribute__((noinline)) void fr_spin_outer(double until);

__attribute__((noinline)) void fr_spin_leaf(double until)
{
	while (now() < until)
		for (int i = 0; i < 100000; i++)
			fr_sink += (unsigned long)i * 2654435761u;
}

__attribute__((noinline)) void fr_spin_middle(double until)
{
	fr_spin_leaf(until);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void fr_spin_outer(double until)
{
	fr_spin_middle(until);
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	fr_spin_outer(*(double *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = 1, until;
	int threads = 1, code = -1;
	pthread_t th[64];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--exit") && i + 1 < argc)
			code = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: frspin [--seconds S] [--exit CODE] [--threads N]\n");
			return 2;
		}
	}
	if (code >= 0)
		return code;
	if (threads < 1 || threads > 64)
		threads = 1;
	until = now() + seconds;
	for (int i = 1; i < threads; i++)
		pthread_create(&th[i], NULL, worker, &until);
	fr_spin_outer(until);
	for (int i = 1; i < threads; i++)
		pthread_join(th[i], NULL);
	return 0;
}
