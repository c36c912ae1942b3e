/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ondump.h - [output] on_dump: a command run after each durable dump with
 * the dump's path as its last argument, for shipping dumps elsewhere. It
 * runs asynchronously (posix_spawn, no shell), is killed after its
 * timeout, and whatever it does never affects recording.
 */
#ifndef FR_ONDUMP_H
#define FR_ONDUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FR_ONDUMP_MAX	4	/* hooks running at once; more are skipped */

struct hook_run {
	pid_t pid;		/* 0: slot free */
	int pidfd;
	uint64_t started;	/* CLOCK_BOOTTIME ns */
	uint64_t deadline;
	bool killed;
	char path[256];		/* the dump it was given (for the log) */
};

struct ondump {
	struct hook_run run[FR_ONDUMP_MAX];
	uint64_t started, failed, timed_out, skipped;
};

int ondump__spawn(struct ondump *h, char *const *argv, const char *path,
		 uint64_t timeout_ns, int *slot);
int ondump__pidfd(const struct ondump *h, int slot);
int ondump__reap(struct ondump *h, int slot, int *status, uint64_t *elapsed_ns, bool *killed);
int ondump__expire(struct ondump *h, uint64_t now);
void ondump__kill_all(struct ondump *h);

#endif /* FR_ONDUMP_H */
