// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * procstat.c - /proc/PID/stat, read and parsed. See procstat.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procstat.h"
#include "util.h"

uint64_t fr_ticks_of(uint64_t start_ns)
{
	static long hz;

	if (!hz)
		hz = sysconf(_SC_CLK_TCK);
	return start_ns / (FR_NSEC_PER_SEC / (uint64_t)hz);
}

ssize_t fr_read_small(const char *path, char *buf, size_t cap)
{
	ssize_t n, got = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	while ((size_t)got < cap - 1) {
		n = read(fd, buf + got, cap - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		got += n;
	}
	close(fd);
	buf[got] = 0;
	return got;
}

/*
 * Hand-parsed: the fields are space-separated numbers after the comm's
 * last ')', which no library of ours reads (procps' libproc2 is not a
 * dependency, and reads far more than this).
 */
int fr_procstat__read(uint32_t pid, struct fr_procstat *f)
{
	char path[64], buf[1024], *p;
	unsigned long long v[21];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	n = fr_read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EBADMSG;
	f->state = p[2];
	p += 3;
	/* Fields 4 .. 24 follow the state. */
	for (int i = 0; i < 21; i++) {
		char *end;

		v[i] = strtoull(p, &end, 10);
		if (end == p)
			return -EBADMSG;
		p = end;
	}
	f->ppid = (uint32_t)v[4 - 4];
	f->flags = (uint32_t)v[9 - 4];
	f->num_threads = (uint32_t)v[20 - 4];
	f->start_ticks = v[22 - 4];
	f->vsize = v[23 - 4];
	f->rss_pages = v[24 - 4];
	return 0;
}

bool fr_procstat__gone(uint32_t pid, uint64_t start)
{
	struct fr_procstat f;

	if (fr_procstat__read(pid, &f) || f.start_ticks != fr_ticks_of(start))
		return true;
	return !f.vsize && f.num_threads <= 1;
}
