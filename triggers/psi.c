// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * psi.c - pressure files and PSI triggers: strict parsing, trigger arming,
 * confirmation of events by total= growth, and re-arming with backoff when
 * the cgroup behind a trigger goes away. See psi.h for the rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "psi.h"

#define FR_PSI_NSEC_PER_USEC	((uint64_t)1000)
#define FR_PSI_AVG_MAX		10000	/* 100.00 % */
#define FR_PSI_AVG_INT_DIGITS	3
#define FR_PSI_TOTAL_DIGITS	20	/* UINT64_MAX has 20 digits */

/*
 * CLOCK_BOOTTIME in ns, the trace clock (as psi_now_ns() in
 * recorder/util.h, kept local so that triggers/ needs no recorder headers).
 */
static uint64_t psi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

struct psi_sample {
	uint64_t ts;		/* CLOCK_BOOTTIME ns */
	uint64_t total;		/* us, of the armed kind */
};

struct psi_trigger {
	char path[PATH_MAX];
	char spec[FR_PSI_SPEC_MAX];
	enum fr_psi_resource res;
	enum fr_psi_kind kind;
	uint64_t stall_us;
	uint64_t window_ns;
	uint64_t gap_ns;	/* least spacing of recorded samples */
	int fd;			/* -1 when disarmed */
	unsigned failures;	/* consecutive failed arms */
	uint64_t retry_at;	/* 0 when armed */
	struct psi_sample hist[FR_PSI_HISTORY];
	unsigned hist_head;	/* next slot to write */
	unsigned hist_len;
};

/* Skip the literal @lit at @p; NULL if it is not there. */
static const char *parse_lit(const char *p, const char *lit)
{
	size_t n = strlen(lit);

	return strncmp(p, lit, n) ? NULL : p + n;
}

/*
 * parse_avg() - "<key><int>.<2 digits>" at @p, the integer part 1 to 3
 * digits, the whole at most 100.00. Stores hundredths in *@out and returns
 * the position after it, or NULL.
 */
static const char *parse_avg(const char *p, const char *key, uint32_t *out)
{
	uint32_t v = 0;
	int n;

	p = parse_lit(p, key);
	if (!p)
		return NULL;
	for (n = 0; *p >= '0' && *p <= '9'; n++, p++) {
		if (n == FR_PSI_AVG_INT_DIGITS)
			return NULL;
		v = v * 10 + (uint32_t)(*p - '0');
	}
	if (!n || *p++ != '.')
		return NULL;
	for (n = 0; n < 2; n++, p++) {
		if (*p < '0' || *p > '9')
			return NULL;
		v = v * 10 + (uint32_t)(*p - '0');
	}
	if (v > FR_PSI_AVG_MAX)
		return NULL;
	*out = v;
	return p;
}

/*
 * parse_total() - "total=<u64>" at @p: 1 to 20 digits, no overflow. Returns
 * the position after it, or NULL.
 */
static const char *parse_total(const char *p, uint64_t *out)
{
	uint64_t v = 0, d;
	int n;

	p = parse_lit(p, "total=");
	if (!p)
		return NULL;
	for (n = 0; *p >= '0' && *p <= '9'; n++, p++) {
		d = (uint64_t)(*p - '0');
		if (n == FR_PSI_TOTAL_DIGITS || v > (UINT64_MAX - d) / 10)
			return NULL;
		v = v * 10 + d;
	}
	if (!n)
		return NULL;
	*out = v;
	return p;
}

/*
 * parse_line() - one "<name> avg10=.. avg60=.. avg300=.. total=..\n" line
 * at @p. Returns the position after its newline, or NULL.
 */
static const char *parse_line(const char *p, const char *name,
			      struct psi_line *line)
{
	p = parse_lit(p, name);
	if (p)
		p = parse_avg(p, " avg10=", &line->avg10);
	if (p)
		p = parse_avg(p, " avg60=", &line->avg60);
	if (p)
		p = parse_avg(p, " avg300=", &line->avg300);
	if (p)
		p = parse_lit(p, " ");
	if (p)
		p = parse_total(p, &line->total);
	if (p)
		p = parse_lit(p, "\n");
	return p;
}

/*
 * psi_parse() - parse the NUL-terminated text of a pressure file: a "some"
 * line, optionally a "full" line, each ending in a newline, nothing else,
 * at most FR_PSI_TEXT_MAX - 1 bytes. *@out is written only on success, with
 * ts = 0. Returns 0, -EBADMSG on any deviation, -EINVAL on NULL arguments.
 */
int psi_parse(const char *text, struct psi_reading *out)
{
	struct psi_reading r = { 0 };
	const char *p;

	if (!text || !out)
		return -EINVAL;
	if (strnlen(text, FR_PSI_TEXT_MAX) == FR_PSI_TEXT_MAX)
		return -EBADMSG;
	p = parse_line(text, "some", &r.some);
	if (!p)
		return -EBADMSG;
	if (*p) {
		p = parse_line(p, "full", &r.full);
		if (!p || *p)
			return -EBADMSG;
		r.full_valid = true;
	}
	*out = r;
	return 0;
}

/*
 * psi_read_fd() - read a pressure file from offset 0 of @fd (a trigger fd
 * works too) and parse it; ts is CLOCK_BOOTTIME right after the read.
 * Returns 0, -errno from pread (ENODEV once a cgroup file is removed), or
 * -EBADMSG for empty, overlong or malformed text.
 */
int psi_read_fd(int fd, struct psi_reading *out)
{
	char buf[FR_PSI_TEXT_MAX];
	ssize_t n;
	int err;

	n = pread(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	if (n == 0 || (size_t)n >= sizeof(buf))
		return -EBADMSG;
	buf[n] = 0;
	if (strlen(buf) != (size_t)n)
		return -EBADMSG;	/* embedded NUL */
	err = psi_parse(buf, out);
	if (err)
		return err;
	out->ts = psi_now_ns();
	return 0;
}

/* psi_resource_name() - "cpu", "memory", "io", or NULL if @r is invalid. */
const char *psi_resource_name(enum fr_psi_resource r)
{
	switch (r) {
	case FR_PSI_CPU:
		return "cpu";
	case FR_PSI_MEMORY:
		return "memory";
	case FR_PSI_IO:
		return "io";
	}
	return NULL;
}

/* psi_kind_name() - "some", "full", or NULL if @k is invalid. */
const char *psi_kind_name(enum fr_psi_kind k)
{
	switch (k) {
	case FR_PSI_SOME:
		return "some";
	case FR_PSI_FULL:
		return "full";
	}
	return NULL;
}

/*
 * psi_path() - the pressure file of @r: "/proc/pressure/<res>" when @cgroup
 * is NULL or empty, else "<cgroup>/<res>.pressure" (trailing slashes of
 * @cgroup dropped). Returns 0, -EINVAL for a bad @r or a NULL @buf, or
 * -ENAMETOOLONG when it does not fit in @len bytes.
 */
int psi_path(const char *cgroup, enum fr_psi_resource r, char *buf, size_t len)
{
	const char *name = psi_resource_name(r);
	size_t clen;
	int n;

	if (!name || !buf)
		return -EINVAL;
	if (!cgroup || !*cgroup) {
		n = snprintf(buf, len, "/proc/pressure/%s", name);
	} else {
		clen = strlen(cgroup);
		while (clen > 1 && cgroup[clen - 1] == '/')
			clen--;
		if (clen > INT_MAX)
			return -ENAMETOOLONG;
		n = snprintf(buf, len, "%.*s/%s.pressure", (int)clen, cgroup,
			     name);
	}
	if (n < 0)
		return -errno;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* The total of the armed kind in @r; false if the file has no such line. */
static bool reading_total(const struct psi_trigger *t,
			  const struct psi_reading *r, uint64_t *total)
{
	if (t->kind == FR_PSI_FULL) {
		if (!r->full_valid)
			return false;
		*total = r->full.total;
	} else {
		*total = r->some.total;
	}
	return true;
}

static void history__reset(struct psi_trigger *t)
{
	t->hist_head = 0;
	t->hist_len = 0;
}

static const struct psi_sample *history__at(const struct psi_trigger *t,
					    unsigned age)
{
	/* age 0 is the newest sample */
	return &t->hist[(t->hist_head + FR_PSI_HISTORY - 1 - age) % FR_PSI_HISTORY];
}

/*
 * history__record() - keep (@ts, @total) unless it goes back in time or
 * total, or comes sooner than gap_ns after the newest sample (so the ring
 * always spans about twice window + 1 s, however often it is fed).
 */
static void history__record(struct psi_trigger *t, uint64_t ts, uint64_t total)
{
	const struct psi_sample *last;

	if (t->hist_len) {
		last = history__at(t, 0);
		if (ts <= last->ts || total < last->total ||
		    ts - last->ts < t->gap_ns)
			return;
	}
	t->hist[t->hist_head].ts = ts;
	t->hist[t->hist_head].total = total;
	t->hist_head = (t->hist_head + 1) % FR_PSI_HISTORY;
	if (t->hist_len < FR_PSI_HISTORY)
		t->hist_len++;
}

/* The re-arm delay after @failures consecutive failed arms. */
static uint64_t backoff_ns(unsigned failures)
{
	uint64_t d = FR_PSI_BACKOFF_MIN_NS;

	while (failures-- && d < FR_PSI_BACKOFF_MAX_NS)
		d *= 2;
	return d < FR_PSI_BACKOFF_MAX_NS ? d : FR_PSI_BACKOFF_MAX_NS;
}

/*
 * psi_trigger__new() - a disarmed trigger for @k pressure on @r of @cgroup
 * (NULL: system-wide) stalling @stall_ns within @window_ns. Both must be
 * whole microseconds, 500 ms <= window <= 10 s and 0 < stall <= window;
 * whether the kernel accepts the window (2 s multiples without
 * CAP_SYS_RESOURCE) is only known at arm time. Returns NULL with errno
 * EINVAL, ENAMETOOLONG or ENOMEM.
 */
struct psi_trigger *psi_trigger__new(const char *cgroup, enum fr_psi_resource r,
				     enum fr_psi_kind k, uint64_t stall_ns,
				     uint64_t window_ns)
{
	struct psi_trigger *t = NULL;
	int err = -EINVAL, n;

	if (!psi_resource_name(r) || !psi_kind_name(k))
		goto fail;
	if (stall_ns % FR_PSI_NSEC_PER_USEC || window_ns % FR_PSI_NSEC_PER_USEC)
		goto fail;
	if (window_ns < FR_PSI_WINDOW_MIN_NS || window_ns > FR_PSI_WINDOW_MAX_NS ||
	    !stall_ns || stall_ns > window_ns)
		goto fail;
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = -ENOMEM;
		goto fail;
	}
	err = psi_path(cgroup, r, t->path, sizeof(t->path));
	if (err)
		goto fail;
	t->res = r;
	t->kind = k;
	t->stall_us = stall_ns / FR_PSI_NSEC_PER_USEC;
	t->window_ns = window_ns;
	t->gap_ns = (window_ns + FR_PSI_SLACK_NS) / (FR_PSI_HISTORY / 2);
	t->fd = -1;
	n = snprintf(t->spec, sizeof(t->spec), "%s %" PRIu64 " %" PRIu64,
		     psi_kind_name(k), t->stall_us,
		     window_ns / FR_PSI_NSEC_PER_USEC);
	if (n < 0 || (size_t)n >= sizeof(t->spec)) {
		err = -EINVAL;
		goto fail;
	}
	return t;
fail:
	free(t);
	errno = -err;
	return NULL;
}

/* Close the fd, if any: this removes the kernel trigger. Keeps errno. */
static void trigger__disarm(struct psi_trigger *t)
{
	int saved = errno;

	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	errno = saved;
}

/* psi_trigger__free() - disarm and free @t; NULL is fine. */
void psi_trigger__free(struct psi_trigger *t)
{
	if (!t)
		return;
	trigger__disarm(t);
	free(t);
}

/*
 * psi_trigger__arm() - open the pressure file O_RDWR|O_NONBLOCK|O_CLOEXEC,
 * write the spec with its trailing NUL and take the baseline reading that
 * starts a fresh history. Success resets failures and retry_at; failure
 * counts one more failure and sets retry_at to now + backoff. Returns 0,
 * -EALREADY if armed, or -errno: EINVAL (spec refused, e.g. a window that is
 * no 2 s multiple without CAP_SYS_RESOURCE), ENOENT (cgroup gone), EBUSY,
 * EACCES, EBADMSG (unreadable baseline)...
 */
int psi_trigger__arm(struct psi_trigger *t)
{
	struct psi_reading base;
	size_t len = strlen(t->spec) + 1;
	uint64_t total;
	ssize_t n;
	int err;

	if (t->fd >= 0)
		return -EALREADY;
	t->fd = open(t->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (t->fd < 0) {
		err = -errno;
		goto fail;
	}
	n = write(t->fd, t->spec, len);
	if (n < 0) {
		err = -errno;
		goto fail;
	}
	if ((size_t)n != len) {
		err = -EIO;
		goto fail;
	}
	err = psi_read_fd(t->fd, &base);
	if (err)
		goto fail;
	if (!reading_total(t, &base, &total)) {
		err = -ENODATA;
		goto fail;
	}
	history__reset(t);
	history__record(t, base.ts, total);
	t->failures = 0;
	t->retry_at = 0;
	return 0;
fail:
	trigger__disarm(t);
	t->failures++;
	t->retry_at = psi_now_ns() + backoff_ns(t->failures);
	return err;
}

/* psi_trigger__fd() - the fd to watch for EPOLLPRI, or -1 when disarmed. */
int psi_trigger__fd(const struct psi_trigger *t)
{
	return t->fd;
}

/*
 * psi_trigger__growth() - how much the armed kind's total (us) grew from
 * the base sample of the confirmation rule (newest at or before @now -
 * window - 1 s, else the oldest kept) to @total at @now. 0 without history
 * or if @total is below the base.
 */
uint64_t psi_trigger__growth(const struct psi_trigger *t, uint64_t now,
			     uint64_t total)
{
	uint64_t horizon = t->window_ns + FR_PSI_SLACK_NS;
	uint64_t cutoff = now > horizon ? now - horizon : 0;
	const struct psi_sample *base = NULL;
	unsigned age;

	if (!t->hist_len)
		return 0;
	for (age = 0; age < t->hist_len; age++) {
		base = history__at(t, age);
		if (base->ts <= cutoff)
			break;
	}
	return total > base->total ? total - base->total : 0;
}

/* Disarm after the source went away and schedule the re-arm. */
static int trigger__gone(struct psi_trigger *t)
{
	trigger__disarm(t);
	t->retry_at = psi_now_ns() + backoff_ns(t->failures);
	return FR_PSI_GONE;
}

/*
 * psi_trigger__handle() - judge an epoll event @revents on the trigger fd.
 * EPOLLERR/EPOLLHUP (or a read failing with ENODEV) means the source is
 * gone: the fd is closed (remove it from epoll first unless it was never
 * dup'ed or inherited, so close() drops it) and a re-arm is scheduled.
 * Otherwise the file is read into *@out (may be NULL), recorded, and judged
 * by the confirmation rule of psi.h. Returns FR_PSI_FIRED, FR_PSI_SPURIOUS,
 * FR_PSI_GONE, -EBADF when disarmed, -ENODATA when the file has no line of
 * the armed kind, or -errno from the read.
 */
int psi_trigger__handle(struct psi_trigger *t, uint32_t revents,
			struct psi_reading *out)
{
	struct psi_reading local;
	uint64_t total, grew;
	int err;

	if (t->fd < 0)
		return -EBADF;
	if (revents & (EPOLLERR | EPOLLHUP))
		return trigger__gone(t);
	if (!out)
		out = &local;
	err = psi_read_fd(t->fd, out);
	if (err == -ENODEV)
		return trigger__gone(t);
	if (err)
		return err;
	if (!reading_total(t, out, &total))
		return -ENODATA;
	grew = psi_trigger__growth(t, out->ts, total);
	history__record(t, out->ts, total);
	return grew >= t->stall_us ? FR_PSI_FIRED : FR_PSI_SPURIOUS;
}

/*
 * psi_trigger__observe() - record a periodic reading @r of the same
 * pressure file into the history. Ignored while disarmed (the file may be a
 * new cgroup by the same name) and for readings without the armed kind.
 */
void psi_trigger__observe(struct psi_trigger *t, const struct psi_reading *r)
{
	uint64_t total;

	if (t->fd < 0 || !reading_total(t, r, &total))
		return;
	history__record(t, r->ts, total);
}

/* psi_trigger__retry_at() - when to re-arm (CLOCK_BOOTTIME ns); 0 if armed. */
uint64_t psi_trigger__retry_at(const struct psi_trigger *t)
{
	return t->fd >= 0 ? 0 : t->retry_at;
}

/* psi_trigger__failures() - consecutive failed arms since the last success. */
unsigned psi_trigger__failures(const struct psi_trigger *t)
{
	return t->failures;
}

/* psi_trigger__spec() - the trigger text, e.g. "some 200000 2000000". */
const char *psi_trigger__spec(const struct psi_trigger *t)
{
	return t->spec;
}

/* psi_trigger__path() - the pressure file the trigger arms. */
const char *psi_trigger__path(const struct psi_trigger *t)
{
	return t->path;
}
