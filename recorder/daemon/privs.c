// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * privs.c - capabilities kept after start-up, mlockall and the daemon's own
 * oom_score_adj. See privs.h.
 *
 * After the BPF programs are loaded and attached, perf events are open and
 * the control socket is bound, flightrecd keeps only:
 *   CAP_SYS_PTRACE        read other users' /proc/PID/{exe,maps,root,...}
 *   CAP_CHECKPOINT_RESTORE  open /proc/PID/map_files (CAP_SYS_ADMIN before 5.9)
 *   CAP_SYSLOG            read kernel addresses in /proc/kallsyms
 *   CAP_KILL              pidfd_send_signal(pidfd, 0): is the process alive?
 *   CAP_IPC_LOCK          keep memory locked as the window fills
 *   CAP_BPF               bpf() on its own maps and iterator (CAP_SYS_ADMIN before 5.8)
 *   CAP_SYS_RESOURCE      only if it had it: re-arm PSI triggers with windows
 *                         that are not multiples of 2 s
 *   CAP_CHOWN             only with [output] group: dumps group-owned
 * Everything else leaves the permitted, effective, inheritable and bounding
 * sets, and no_new_privs is set.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "privs.h"
#include "util.h"

#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE	40
#endif
#ifndef CAP_BPF
#define CAP_BPF			39
#endif

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int n = CAP_LAST_CAP;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = CAP_LAST_CAP;
		fclose(f);
	}
	return FR_MIN(n, 63);
}

static int capget_all(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

static uint64_t effective(void)
{
	struct __user_cap_data_struct d[2] = {};

	if (capget_all(d))
		return 0;
	return (uint64_t)d[1].effective << 32 | d[0].effective;
}

/*
 * privs__lock_memory() - mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT):
 * pages are locked as they are touched, so the reserved but unused window
 * costs nothing while what it holds cannot be swapped or reclaimed away.
 * Returns 0 or -errno (callers log it and go on).
 */
int privs__lock_memory(void)
{
#ifdef MCL_ONFAULT
	if (!mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT))
		return 0;
	if (errno != EINVAL)
		return -errno;
#endif
	return mlockall(MCL_FUTURE) ? -errno : 0;
}

/* oom_score_adj_read() - the process's oom_score_adj into *@out. Returns 0 or -errno. */
static int oom_score_adj_read(int *out)
{
	char buf[16] = "";
	int fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	*out = atoi(buf);
	return 0;
}

/*
 * privs__set_oom_score_adj() - make @value the process's oom_score_adj.
 * Going below the lowest value set with CAP_SYS_RESOURCE needs it (or
 * EACCES). *@now gets the value in effect afterwards, whatever happened.
 * Returns 0 or -errno.
 */
int privs__set_oom_score_adj(int value, int *now)
{
	char buf[16];
	int fd, len, err = 0;

	len = snprintf(buf, sizeof(buf), "%d\n", value);
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		err = -errno;
	else if (write(fd, buf, (size_t)len) != len)
		err = -errno;
	if (fd >= 0)
		close(fd);
	*now = value;
	if (oom_score_adj_read(now) && !err)
		err = -EIO;
	return err;
}

/*
 * privs__drop() - keep only the capabilities listed above (those of them we
 * have), drop the rest from every set and the bounding set, and set
 * no_new_privs. *@kept gets the mask kept. Returns 0 or -errno.
 */
int privs__drop(bool chown_needed, uint64_t *kept)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	int last = last_cap();
	uint64_t have = effective(), keep = 0;

	keep |= 1ULL << CAP_SYS_PTRACE | 1ULL << CAP_SYSLOG | 1ULL << CAP_KILL |
		1ULL << CAP_IPC_LOCK | 1ULL << CAP_SYS_RESOURCE;
	keep |= last >= CAP_CHECKPOINT_RESTORE ? 1ULL << CAP_CHECKPOINT_RESTORE : 1ULL << CAP_SYS_ADMIN;
	keep |= last >= CAP_BPF ? 1ULL << CAP_BPF : 1ULL << CAP_SYS_ADMIN;
	if (chown_needed)
		keep |= 1ULL << CAP_CHOWN;
	keep &= have;
	/* The bounding set first: dropping from it needs CAP_SETPCAP. */
	for (int c = 0; c <= last; c++)
		if (!(keep & 1ULL << c) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EINVAL)
			return -errno;
	d[0].effective = d[0].permitted = (uint32_t)keep;
	d[1].effective = d[1].permitted = (uint32_t)(keep >> 32);
	if (syscall(SYS_capset, &h, d))
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	*kept = effective();
	return 0;
}

/* privs__describe() - "cap_kill,cap_sys_ptrace,..." for a mask. */
const char *privs__describe(uint64_t caps, char *buf, size_t len)
{
	static const struct { int cap; const char *name; } names[] = {
		{ CAP_CHOWN, "cap_chown" }, { CAP_KILL, "cap_kill" },
		{ CAP_IPC_LOCK, "cap_ipc_lock" }, { CAP_SYS_PTRACE, "cap_sys_ptrace" },
		{ CAP_SYS_ADMIN, "cap_sys_admin" }, { CAP_SYS_RESOURCE, "cap_sys_resource" },
		{ CAP_SYSLOG, "cap_syslog" }, { CAP_BPF, "cap_bpf" },
		{ CAP_CHECKPOINT_RESTORE, "cap_checkpoint_restore" },
	};
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < FR_ARRAY_SIZE(names) && n < len; i++)
		if (caps & 1ULL << names[i].cap)
			n += snprintf(buf + n, len - n, "%s%s", n ? "," : "", names[i].name);
	return buf;
}
