// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fakepy.c - a forged "python3.11" for test_python's hostile case: it
 * exports _PyRuntime, _PyEval_EvalFrameDefault and Py_Version = 3.11.2, so
 * the daemon takes it for an interpreter, and lays out in its memory what
 * a forger would: the thread state of the spinning thread, reached through
 * the GIL holder's slot, whose frame chain loops back on itself, with code
 * objects that are garbage, half of them claiming the type "code" with
 * strings of absurd lengths and control bytes, and one whose "name" points
 * into unmapped memory. It rewrites the garbage as it spins.
 *
 * Usage: fakepy SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NFRAMES	16

/* The shapes the daemon reads (3.11's offsets, pydetect.c and pycode.c). */
__attribute__((used, aligned(64))) uint8_t _PyRuntime[0x28b20];
__attribute__((used)) const uint32_t Py_Version = 0x030b02f0;

static uint8_t tstate[256], cframe[64], frames[NFRAMES][80], codes[NFRAMES][256];
static uint8_t type[64], strs[NFRAMES][128];
static const char code_name[] = "code";
static volatile uint64_t sink;

static void put64(uint8_t *at, uint64_t v)
{
	memcpy(at, &v, 8);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Garbage a forger chooses: every few rounds, new. */
static void forge(unsigned seed)
{
	for (int i = 0; i < NFRAMES; i++) {
		uint8_t *c = codes[i], *s = strs[i];

		for (size_t k = 0; k < sizeof(codes[i]); k++)
			c[k] = (uint8_t)rand_r(&seed);
		for (size_t k = 0; k < sizeof(strs[i]); k++)
			s[k] = (uint8_t)rand_r(&seed);
		if (i % 2 == 0) {
			put64(c + 8, (uint64_t)(uintptr_t)type);	/* "code" */
			put64(c + 128, (uint64_t)(uintptr_t)s);		/* qualname */
			put64(c + 112, i % 4 ? (uint64_t)(uintptr_t)s : 0x10);	/* file: unmapped */
			/* a compact str: kind 1, huge length, bytes of any value */
			memcpy(s + 32, &(uint32_t){ 0x20 | 1 << 2 }, 4);
			put64(s + 16, i % 3 ? 1ULL << 40 : 60);
		}
		put64(frames[i] + 32, (uint64_t)(uintptr_t)c);		/* f_code */
		put64(frames[i] + 48, (uint64_t)(uintptr_t)frames[(i + 1) % NFRAMES]);	/* a loop */
		put64(frames[i] + 56, (uint64_t)(uintptr_t)c + 184 + 2 * (seed % 50));
		frames[i][68] = (uint8_t)(i % 3 == 0);
	}
}

uint64_t _PyEval_EvalFrameDefault(double until);

/* What the daemon's BPF side takes for the eval loop: the spinning is done here. */
__attribute__((noinline, used)) uint64_t _PyEval_EvalFrameDefault(double until)
{
	uint64_t x = 0;
	unsigned round = 0;

	while (now() < until) {
		for (int i = 0; i < 200000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		forge(round++);
	}
	return x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;

	memcpy(type + 24, &(uint64_t){ (uint64_t)(uintptr_t)code_name }, 8);
	put64(tstate + 160, (uint64_t)syscall(SYS_gettid));	/* native_thread_id */
	put64(tstate + 56, (uint64_t)(uintptr_t)cframe);
	put64(cframe + 8, (uint64_t)(uintptr_t)frames[0]);
	put64(_PyRuntime + 576, (uint64_t)(uintptr_t)tstate);	/* tstate_current */
	forge(1);
	sink = _PyEval_EvalFrameDefault(now() + secs);
	return 0;
}
