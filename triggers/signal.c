// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * signal.c - the manual trigger: SIGUSR1, delivered through the daemon's
 * signalfd. Names the sender so the dump says who asked.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trigger.h"

/* Best effort: the sender's comm, or "?" if it is already gone. */
static void sender_comm(uint32_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(buf, len, "?");
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		snprintf(buf, len, "?");
		return;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

/*
 * trigger_signal__fire() - describe the SIGUSR1 in @si, received at @now.
 * Returns 0.
 */
int trigger_signal__fire(const struct signalfd_siginfo *si, uint64_t now,
			 struct trigger_fire *out)
{
	char comm[32];

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "signal");
	snprintf(out->type, sizeof(out->type), "signal");
	sender_comm(si->ssi_pid, comm, sizeof(comm));
	snprintf(out->reason, sizeof(out->reason), "SIGUSR1 from pid %u (%s), uid %u",
		 si->ssi_pid, comm, si->ssi_uid);
	out->ts = now;
	return 0;
}
