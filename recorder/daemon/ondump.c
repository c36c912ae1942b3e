// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ondump.c - run the on_dump command. See ondump.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ondump.h"
#include "util.h"

extern char **environ;

/*
 * ondump__spawn() - start @argv with @path appended, without a shell, with
 * a default signal mask and stdin from /dev/null. *@slot gets its slot,
 * whose pidfd turns readable when it exits. Returns 0, -EBUSY when
 * FR_ONDUMP_MAX hooks still run (this one is skipped), or -errno.
 */
int ondump__spawn(struct ondump *h, char *const *argv, const char *path,
		 uint64_t timeout_ns, int *slot)
{
	char *args[40];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int i, n, err;
	pid_t pid;

	for (i = 0; i < FR_ONDUMP_MAX && h->run[i].pid; i++)
		;
	if (i == FR_ONDUMP_MAX) {
		h->skipped++;
		return -EBUSY;
	}
	for (n = 0; argv[n] && n < 38; n++)
		args[n] = argv[n];
	args[n++] = (char *)path;
	args[n] = NULL;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
				 POSIX_SPAWN_SETPGROUP);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	err = posix_spawn(&pid, args[0], &fa, &attr, args, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (err) {
		h->failed++;
		return -err;
	}
	h->run[i] = (struct hook_run){ .pid = pid, .started = fr_boottime_ns() };
	h->run[i].deadline = h->run[i].started + timeout_ns;
	h->run[i].pidfd = fr_pidfd_open(pid);
	snprintf(h->run[i].path, sizeof(h->run[i].path), "%s", path);
	h->started++;
	*slot = i;
	return h->run[i].pidfd < 0 ? -errno : 0;
}

int ondump__pidfd(const struct ondump *h, int slot)
{
	return h->run[slot].pidfd;
}

/*
 * ondump__reap() - the hook in @slot exited: collect it. *@status gets its
 * wait status. Returns 0, or -EAGAIN if it is still running.
 */
int ondump__reap(struct ondump *h, int slot, int *status, uint64_t *elapsed_ns, bool *killed)
{
	struct hook_run *r = &h->run[slot];
	pid_t p;

	if (!r->pid)
		return -ENOENT;
	p = waitpid(r->pid, status, WNOHANG);
	if (p == 0)
		return -EAGAIN;
	if (p < 0)
		*status = -1;
	if (*status != 0)
		h->failed++;
	*elapsed_ns = fr_boottime_ns() - r->started;
	*killed = r->killed;
	if (r->pidfd >= 0)
		close(r->pidfd);
	r->pid = 0;
	r->pidfd = -1;
	return 0;
}

/*
 * ondump__expire() - kill (SIGKILL, its whole process group) every hook
 * past its deadline. Returns how many were killed.
 */
int ondump__expire(struct ondump *h, uint64_t now)
{
	int n = 0;

	for (int i = 0; i < FR_ONDUMP_MAX; i++) {
		struct hook_run *r = &h->run[i];

		if (!r->pid || r->killed || now < r->deadline)
			continue;
		kill(-r->pid, SIGKILL);
		if (r->pidfd >= 0)
			fr_pidfd_signal(r->pidfd, SIGKILL);
		r->killed = true;
		h->timed_out++;
		n++;
	}
	return n;
}

/* ondump__kill_all() - stopping: end every hook still running and reap it. */
void ondump__kill_all(struct ondump *h)
{
	for (int i = 0; i < FR_ONDUMP_MAX; i++) {
		struct hook_run *r = &h->run[i];

		if (!r->pid)
			continue;
		kill(-r->pid, SIGKILL);
		waitpid(r->pid, NULL, 0);
		if (r->pidfd >= 0)
			close(r->pidfd);
		r->pid = 0;
	}
}
