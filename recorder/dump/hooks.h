/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hooks.h - [output] on_dump: a command run after each durable dump with
 * the dump's path as its last argument, for shipping dumps elsewhere. It
 * runs asynchronously (posix_spawn, no shell), is killed after its
 * timeout, and whatever it does never affects recording.
 */
#ifndef FR_HOOKS_H
#define FR_HOOKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FR_HOOKS_MAX	4	/* hooks running at once; more are skipped */

struct hook_run {
	pid_t pid;		/* 0: slot free */
	int pidfd;
	uint64_t started;	/* CLOCK_BOOTTIME ns */
	uint64_t deadline;
	bool killed;
	char path[256];		/* the dump it was given (for the log) */
};

struct hooks {
	struct hook_run run[FR_HOOKS_MAX];
	uint64_t started, failed, timed_out, skipped;
};

int hooks__spawn(struct hooks *h, char *const *argv, const char *path,
		 uint64_t timeout_ns, int *slot);
int hooks__pidfd(const struct hooks *h, int slot);
int hooks__reap(struct hooks *h, int slot, int *status, uint64_t *elapsed_ns, bool *killed);
int hooks__expire(struct hooks *h, uint64_t now);
void hooks__kill_all(struct hooks *h);

#endif /* FR_HOOKS_H */
