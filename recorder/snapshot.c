// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * snapshot.c - live processes at dump time. See snapshot.h.
 *
 * Race-free /proc reads: open a pidfd for the PID first, read the files,
 * then require that the pidfd still names a live process and that
 * /proc/PID/stat field 22 (start time in clock ticks) is the incarnation's
 * start. If the PID died and was reused in between, the pidfd check fails
 * and nothing read is attributed to the incarnation.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "snapshot.h"
#include "util.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

#define FR_READ_TRIES	3

/* fr_ticks_of() - a start time in ns as /proc/PID/stat field 22 shows it. */
uint64_t fr_ticks_of(uint64_t start_ns)
{
	static long hz;

	if (!hz)
		hz = sysconf(_SC_CLK_TCK);
	return start_ns / (FR_NSEC_PER_SEC / (uint64_t)hz);
}

/* Read a whole small file at @path into @buf (NUL-terminated). */
static ssize_t read_file(const char *path, char *buf, size_t cap)
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

struct stat_fields {
	char state;
	uint32_t ppid;
	uint64_t start_ticks;
	uint64_t rss_pages;
};

/* Parse /proc/PID/stat; the comm may hold spaces and ')'. */
static int read_stat(uint32_t pid, struct stat_fields *f)
{
	char path[64], buf[1024], *p;
	unsigned long long v[24];
	ssize_t n;
	int field;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EBADMSG;
	f->state = p[2];
	p += 3;
	/* Fields 4 .. 24 follow the state. */
	for (field = 4; field <= 24; field++) {
		char *end;

		v[field - 4] = strtoull(p, &end, 10);
		if (end == p)
			return -EBADMSG;
		p = end;
	}
	f->ppid = (uint32_t)v[0];
	f->start_ticks = v[22 - 4];
	f->rss_pages = v[24 - 4];
	return 0;
}

static char *read_exe(uint32_t pid)
{
	char path[64], buf[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return NULL;
	buf[n] = 0;
	return strdup(buf);
}

static char *read_cmdline(uint32_t pid)
{
	char path[64], buf[FR_CMDLINE_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	n = read_file(path, buf, sizeof(buf));
	if (n <= 0)
		return NULL;
	while (n > 0 && !buf[n - 1])
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = 0;
	return strdup(buf);
}

static bool pidfd_alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

/* One attempt; -ESTALE when the PID no longer names this incarnation. */
static int read_once(struct snap_proc *p, long pagesz)
{
	struct stat_fields f;
	int pidfd, err;

	pidfd = syscall(SYS_pidfd_open, p->pid, 0);
	if (pidfd < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	err = read_stat(p->pid, &f);
	if (err || f.start_ticks != fr_ticks_of(p->start)) {
		close(pidfd);
		return err ? err : -ESTALE;
	}
	free(p->exe);
	free(p->cmdline);
	p->exe = read_exe(p->pid);
	p->cmdline = read_cmdline(p->pid);
	/* Still the same process? Then every read above was about it. */
	err = pidfd_alive(pidfd) ? read_stat(p->pid, &f) : -ESRCH;
	close(pidfd);
	if (!err && f.start_ticks != fr_ticks_of(p->start))
		err = -ESTALE;
	if (err) {
		free(p->exe);
		free(p->cmdline);
		p->exe = p->cmdline = NULL;
		return err;
	}
	p->state = f.state;
	p->ppid = f.ppid;
	p->rss = f.rss_pages * (uint64_t)pagesz;
	p->stamp = fr_boottime_ns();
	p->flags |= FR_SNAP_PROC_OK;
	return 0;
}

/*
 * proc_read_verified() - fill @p's /proc fields (state, ppid, rss, exe,
 * cmdline, stamp) for the incarnation (p->pid, p->start). Returns 0;
 * -ESRCH when the incarnation is gone (its PID may now be someone else's);
 * -errno for other failures.
 */
int proc_read_verified(struct snap_proc *p)
{
	long pagesz = sysconf(_SC_PAGESIZE);
	int err = -ESTALE;

	for (int i = 0; i < FR_READ_TRIES && err == -ESTALE; i++)
		err = read_once(p, pagesz);
	if (err == -ESTALE)
		err = -ESRCH;	/* the PID belongs to a newer incarnation */
	return err;
}

static int add_task(void *ctx, const struct fr_rec_task *t)
{
	struct snapshot *s = ctx;
	struct snap_proc *p;

	if (t->h.tid != t->h.tgid) {
		/* A thread: count it on its leader, listed just before. */
		if (s->n && s->p[s->n - 1].pid == t->h.tgid)
			s->p[s->n - 1].nthreads++;
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct snap_proc *n = realloc(s->p, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->p = n;
		s->cap = cap;
	}
	p = &s->p[s->n++];
	memset(p, 0, sizeof(*p));
	p->pid = t->h.tgid;
	p->ppid = t->ppid;
	p->start = t->h.start;
	p->seen = t->h.ts;
	p->nthreads = 1;
	memcpy(p->comm, t->h.comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = 0;
	if (t->flags & 0x00200000)	/* PF_KTHREAD */
		p->flags |= FR_SNAP_KTHREAD;
	return 0;
}

/*
 * snapshot__take() - list live processes with the task iterator, then read
 * each one's /proc fields, verified. A process that exits in between keeps
 * its iterator fields and is flagged FR_SNAP_GONE. Returns 0 or -errno.
 */
int snapshot__take(struct snapshot *s, struct sampler *sm)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->taken = fr_boottime_ns();
	err = sampler__list_tasks(sm, add_task, s);
	if (err)
		return err;
	for (size_t i = 0; i < s->n; i++) {
		struct snap_proc *p = &s->p[i];

		if (p->flags & FR_SNAP_KTHREAD) {
			p->state = 0;
			p->stamp = p->seen;
		}
		err = proc_read_verified(p);
		if (err == -ESRCH || err == -ENOENT)
			p->flags |= FR_SNAP_GONE;
	}
	return 0;
}

void snapshot__free(struct snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->p[i].exe);
		free(s->p[i].cmdline);
	}
	free(s->p);
	memset(s, 0, sizeof(*s));
}
