/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pidreuse.c - see pidreuse.h.
 */
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pidreuse.h"

static long read_long(const char *path, long dflt)
{
	FILE *f = fopen(path, "r");
	long v = dflt;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

pid_t pidreuse__free_pid(long gap)
{
	long max = read_long("/proc/sys/kernel/pid_max", 32768);
	long last = read_long("/proc/sys/kernel/ns_last_pid", 1000);

	for (long k = 0; k < max; k += 7) {
		pid_t p = (pid_t)(300 + (last - 300 + gap + k) % (max - 300));
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d", p);
		if (kill(p, 0) && errno == ESRCH && access(path, F_OK))
			return p;
	}
	return -1;
}

pid_t pidreuse__spawn_at(pid_t pid)
{
	struct clone_args args;
	pid_t tid = pid;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	args.set_tid = (uint64_t)(uintptr_t)&tid;
	args.set_tid_size = 1;
	return syscall(SYS_clone3, &args, sizeof(args));
}
