// SPDX-License-Identifier: MIT
/*
 * test_psi.c - pressure files and PSI triggers against the real kernel:
 * real CPU pressure from spinning children, a real idle cgroup for the
 * spurious-event rule, and a real cgroup removed under an armed trigger.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "psi.h"
#include "tap.h"

#define FR_SPINNERS		6
#define FR_MAX_CGROUPS		4
#define FR_CAP_SYS_RESOURCE	24
#define FR_SEC			((uint64_t)1000000000)
#define FR_MSEC			((uint64_t)1000000)

/* What the test created, so that atexit() can undo it even after a failure. */
static pid_t spinners[FR_SPINNERS];
static char cgroups[FR_MAX_CGROUPS][PATH_MAX];

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * FR_SEC + (uint64_t)ts.tv_nsec;
}

static void spinners__stop(void)
{
	for (int i = 0; i < FR_SPINNERS; i++) {
		if (spinners[i] <= 0)
			continue;
		kill(spinners[i], SIGKILL);
		waitpid(spinners[i], NULL, 0);
		spinners[i] = 0;
	}
}

/* Remove test cgroup @slot if it exists; 0 or -errno. */
static int cgroup__remove(int slot)
{
	int err = 0;

	if (!cgroups[slot][0])
		return 0;
	if (rmdir(cgroups[slot]) && errno != ENOENT)
		err = -errno;
	return err;
}

static void cleanup(void)
{
	spinners__stop();
	for (int i = 0; i < FR_MAX_CGROUPS; i++) {
		cgroup__remove(i);
		cgroups[i][0] = 0;
	}
}

/* CapEff bit 24 of /proc/self/status; false if unreadable. */
static bool have_cap_sys_resource(void)
{
	unsigned long long eff = 0;
	char line[256];
	bool found = false;
	FILE *f;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			found = true;
			break;
		}
	}
	fclose(f);
	return found && (eff >> FR_CAP_SYS_RESOURCE) & 1;
}

/* Mount point of cgroup v2 into @buf (size PATH_MAX); 0 or -ENOENT. */
static int cgroup2_root(char *buf)
{
	char dev[256], dir[PATH_MAX], type[64];
	int err = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/mounts", "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3) {
		if (!strcmp(type, "cgroup2")) {
			snprintf(buf, PATH_MAX, "%s", dir);
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

/*
 * Create test cgroup @slot named @tag under the v2 root, and check that it
 * has pressure files. Its path is left in cgroups[slot]; 0 or -errno, and
 * *why says what is missing.
 */
static int cgroup__make(int slot, const char *tag, const char **why)
{
	char root[PATH_MAX], file[PATH_MAX];
	int n;

	*why = "no cgroup v2 mount in /proc/self/mounts";
	if (cgroup2_root(root))
		return -ENOENT;
	n = snprintf(cgroups[slot], PATH_MAX, "%.*s/flightrec-test-psi-%d-%s",
		     PATH_MAX - 64, root, (int)getpid(), tag);
	if (n < 0 || n >= PATH_MAX) {
		cgroups[slot][0] = 0;
		return -ENAMETOOLONG;
	}
	*why = "cannot create a cgroup v2 child";
	if (mkdir(cgroups[slot], 0755) && errno != EEXIST)
		return -errno;
	*why = "cgroup v2 children have no cpu.pressure (PSI off for cgroups)";
	psi_path(cgroups[slot], FR_PSI_CPU, file, sizeof(file));
	if (access(file, R_OK | W_OK)) {
		cgroup__remove(slot);
		return -errno;
	}
	return 0;
}

static uint64_t cpu_time_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * FR_SEC +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000;
}

/* Wait up to @ms for one event on @ep; its revents, 0 on timeout, -errno. */
static int64_t wait_one(int ep, int ms)
{
	struct epoll_event ev;
	int n;

	do {
		n = epoll_wait(ep, &ev, 1, ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? (int64_t)ev.events : 0;
}

static int watch(int ep, int fd)
{
	struct epoll_event ev = { .events = EPOLLPRI, .data.fd = fd };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

#define PSI_CPU_TEXT							\
	"some avg10=13.43 avg60=4.08 avg300=3.51 total=65726676\n"	\
	"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"

static int bad(const char *text)
{
	struct psi_reading r;

	memset(&r, 0x5a, sizeof(r));
	return psi_parse(text, &r);
}

static void test_parse(void)
{
	struct psi_reading r;
	char big[FR_PSI_TEXT_MAX + 16];
	int err;

	memset(&r, 0, sizeof(r));
	err = psi_parse(PSI_CPU_TEXT, &r);
	ok(!err && r.some.avg10 == 1343 && r.some.avg60 == 408 &&
	   r.some.avg300 == 351 && r.some.total == 65726676 && r.full_valid &&
	   r.full.avg10 == 0 && r.full.total == 0 && r.ts == 0,
	   "parse: some and full lines, avgs in hundredths");

	err = psi_parse("some avg10=0.05 avg60=100.00 avg300=7.10 total=12\n", &r);
	ok(!err && !r.full_valid && r.some.avg10 == 5 && r.some.avg60 == 10000 &&
	   r.some.avg300 == 710 && r.some.total == 12,
	   "parse: a file without a full line (old kernels' cpu)");

	err = psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551615\n"
			"full avg10=99.99 avg60=0.00 avg300=0.00 total=18446744073709551614\n", &r);
	ok(!err && r.some.total == UINT64_MAX && r.full.total == UINT64_MAX - 1 &&
	   r.full.avg10 == 9999, "parse: totals up to UINT64_MAX");

	is_int(bad("some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616\n"),
	       -EBADMSG, "parse: total overflowing u64 is refused");
	is_int(bad("some avg10=0.00 avg60=0.00 avg300=0.00 total=000000000000000000001\n"),
	       -EBADMSG, "parse: total of more than 20 digits is refused");
	is_int(bad("hello world\n"), -EBADMSG, "parse: garbage");
	is_int(bad(""), -EBADMSG, "parse: empty text");
	is_int(bad("some avg10=0.00 avg60=0.00 avg300=0.00 total=1234"),
	       -EBADMSG, "parse: truncated before the newline");
	is_int(bad("some avg10=0.00 avg60="), -EBADMSG,
	       "parse: truncated inside a field");
	is_int(bad("some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nfull avg10=0.00"),
	       -EBADMSG, "parse: truncated full line");
	is_int(bad("some avg10=1000.00 avg60=0.00 avg300=0.00 total=1\n"),
	       -EBADMSG, "parse: overlong avg integer part");
	is_int(bad("some avg10=100.01 avg60=0.00 avg300=0.00 total=1\n"),
	       -EBADMSG, "parse: avg above 100.00 %%");
	is_int(bad("some avg10=0.123 avg60=0.00 avg300=0.00 total=1\n"),
	       -EBADMSG, "parse: avg with three decimals");
	is_int(bad("some avg10=1 avg60=0.00 avg300=0.00 total=1\n"),
	       -EBADMSG, "parse: avg without decimals");
	is_int(bad("some avg10=0.00 avg300=0.00 total=1\n"),
	       -EBADMSG, "parse: missing avg60");
	is_int(bad("some avg10=0.00 avg60=0.00 avg300=0.00\n"),
	       -EBADMSG, "parse: missing total");
	is_int(bad("some avg10=0.00 avg60=0.00 avg300=0.00 total=\n"),
	       -EBADMSG, "parse: empty total");
	is_int(bad("some avg10=-1.00 avg60=0.00 avg300=0.00 total=1\n"),
	       -EBADMSG, "parse: negative avg");
	is_int(bad("some  avg10=0.00 avg60=0.00 avg300=0.00 total=1\n"),
	       -EBADMSG, "parse: doubled space");
	is_int(bad("full avg10=0.00 avg60=0.00 avg300=0.00 total=1\n"),
	       -EBADMSG, "parse: full line without some line");
	is_int(bad(PSI_CPU_TEXT "extra\n"), -EBADMSG,
	       "parse: junk after the full line");
	is_int(bad(PSI_CPU_TEXT PSI_CPU_TEXT), -EBADMSG,
	       "parse: repeated lines");
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	memcpy(big, PSI_CPU_TEXT, strlen(PSI_CPU_TEXT));
	is_int(bad(big), -EBADMSG, "parse: text longer than FR_PSI_TEXT_MAX");

	memset(&r, 0x5a, sizeof(r));
	psi_parse("some avg10=0.00 avg60=\n", &r);
	ok(r.some.total == 0x5a5a5a5a5a5a5a5aULL && r.ts == 0x5a5a5a5a5a5a5a5aULL,
	   "parse: a failed parse leaves *out alone");
}

static void test_read(void)
{
	static const enum fr_psi_resource res[] = { FR_PSI_CPU, FR_PSI_MEMORY, FR_PSI_IO };
	struct psi_reading r;
	char path[PATH_MAX];
	uint64_t before;
	int fd, err;

	for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
		psi_path(NULL, res[i], path, sizeof(path));
		fd = open(path, O_RDONLY | O_CLOEXEC);
		before = boottime_ns();
		err = fd < 0 ? -errno : psi_read_fd(fd, &r);
		ok(!err && r.ts >= before && r.ts <= boottime_ns(),
		   "read_fd: %s parses, ts is CLOCK_BOOTTIME (%s)", path,
		   err ? strerror(-err) : r.full_valid ? "with full" : "no full");
		if (fd >= 0) {
			err = psi_read_fd(fd, &r);
			ok(!err, "read_fd: %s a second read at offset 0 works", path);
			close(fd);
		}
	}
	is_int(psi_read_fd(-1, &r), -EBADF, "read_fd: bad fd gives -EBADF");
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	is_int(psi_read_fd(fd, &r), -EBADMSG, "read_fd: empty file gives -EBADMSG");
	close(fd);
}

static void test_path(void)
{
	char buf[PATH_MAX], small[20];

	is_int(psi_path(NULL, FR_PSI_CPU, buf, sizeof(buf)), 0, "path: system cpu");
	is_str(buf, "/proc/pressure/cpu", "path: system cpu text");
	psi_path("", FR_PSI_IO, buf, sizeof(buf));
	is_str(buf, "/proc/pressure/io", "path: empty cgroup means system-wide");
	is_int(psi_path("/sys/fs/cgroup/unified/a", FR_PSI_MEMORY, buf, sizeof(buf)),
	       0, "path: cgroup memory");
	is_str(buf, "/sys/fs/cgroup/unified/a/memory.pressure", "path: cgroup memory text");
	psi_path("/sys/fs/cgroup/b//", FR_PSI_IO, buf, sizeof(buf));
	is_str(buf, "/sys/fs/cgroup/b/io.pressure", "path: trailing slashes dropped");
	/* "/proc/pressure/memory" is 21 bytes: 22 with its NUL */
	is_int(psi_path(NULL, FR_PSI_MEMORY, small, sizeof(small)), -ENAMETOOLONG,
	       "path: system path that does not fit gives -ENAMETOOLONG");
	is_int(psi_path(NULL, FR_PSI_MEMORY, buf, 22), 0, "path: exact fit works");
	is_int(psi_path(NULL, FR_PSI_MEMORY, buf, 21), -ENAMETOOLONG,
	       "path: one byte short gives -ENAMETOOLONG");
	is_int(psi_path("/sys/fs/cgroup/unified/long", FR_PSI_CPU, small, sizeof(small)),
	       -ENAMETOOLONG, "path: cgroup path that does not fit gives -ENAMETOOLONG");
	is_int(psi_path(NULL, (enum fr_psi_resource)7, buf, sizeof(buf)), -EINVAL,
	       "path: unknown resource gives -EINVAL");
	ok(!strcmp(psi_resource_name(FR_PSI_CPU), "cpu") &&
	   !strcmp(psi_resource_name(FR_PSI_MEMORY), "memory") &&
	   !strcmp(psi_resource_name(FR_PSI_IO), "io") &&
	   !psi_resource_name((enum fr_psi_resource)3),
	   "resource_name: cpu memory io, NULL for unknown");
}

static void test_new(void)
{
	struct psi_trigger *t;
	char cg[PATH_MAX + 8];

	errno = 0;
	t = psi_trigger__new(NULL, FR_PSI_CPU, FR_PSI_SOME, 100 * FR_MSEC, 100 * FR_MSEC);
	ok(!t && errno == EINVAL, "new: window below 500 ms gives EINVAL");
	psi_trigger__free(t);
	errno = 0;
	t = psi_trigger__new(NULL, FR_PSI_CPU, FR_PSI_SOME, 12 * FR_SEC, 12 * FR_SEC);
	ok(!t && errno == EINVAL, "new: window above 10 s gives EINVAL");
	errno = 0;
	t = psi_trigger__new(NULL, FR_PSI_CPU, FR_PSI_SOME, 3 * FR_SEC, 2 * FR_SEC);
	ok(!t && errno == EINVAL, "new: stall above window gives EINVAL");
	errno = 0;
	t = psi_trigger__new(NULL, FR_PSI_CPU, FR_PSI_SOME, 0, 2 * FR_SEC);
	ok(!t && errno == EINVAL, "new: zero stall gives EINVAL");
	errno = 0;
	t = psi_trigger__new(NULL, FR_PSI_CPU, FR_PSI_SOME, 100 * FR_MSEC + 1, 2 * FR_SEC);
	ok(!t && errno == EINVAL, "new: stall not in whole us gives EINVAL");
	errno = 0;
	t = psi_trigger__new(NULL, FR_PSI_CPU, (enum fr_psi_kind)2, FR_SEC, 2 * FR_SEC);
	ok(!t && errno == EINVAL, "new: unknown kind gives EINVAL");
	memset(cg, 'x', sizeof(cg) - 1);
	cg[0] = '/';
	cg[sizeof(cg) - 1] = 0;
	errno = 0;
	t = psi_trigger__new(cg, FR_PSI_CPU, FR_PSI_SOME, FR_SEC, 2 * FR_SEC);
	ok(!t && errno == ENAMETOOLONG, "new: cgroup path too long gives ENAMETOOLONG");

	t = psi_trigger__new(NULL, FR_PSI_MEMORY, FR_PSI_FULL, 10 * FR_SEC, 10 * FR_SEC);
	if (!ok(t != NULL, "new: full 10 s / 10 s"))
		return;
	is_str(psi_trigger__spec(t), "full 10000000 10000000",
	       "new: spec of the longest trigger");
	ok(psi_trigger__fd(t) == -1 && psi_trigger__retry_at(t) == 0 &&
	   psi_trigger__failures(t) == 0, "new: not armed yet, no retry pending");
	is_int(psi_trigger__handle(t, EPOLLPRI, NULL), -EBADF,
	       "handle: a disarmed trigger gives -EBADF");
	psi_trigger__free(t);
}

static void test_arm(void)
{
	struct psi_trigger *t, *u;
	bool cap = have_cap_sys_resource();
	uint64_t now;
	int err;

	t = psi_trigger__new(NULL, FR_PSI_CPU, FR_PSI_SOME, 500 * FR_MSEC, 2 * FR_SEC);
	if (!ok(t != NULL, "arm: new some 500 ms / 2 s on cpu")) {
		tap_skip(4, "no trigger");
		return;
	}
	is_str(psi_trigger__spec(t), "some 500000 2000000", "arm: spec text");
	is_int(psi_trigger__arm(t), 0, "arm: a 2 s window arms on /proc/pressure/cpu");
	ok(psi_trigger__fd(t) >= 0 && psi_trigger__retry_at(t) == 0 &&
	   psi_trigger__failures(t) == 0, "arm: armed trigger has an fd, no retry");
	is_int(psi_trigger__arm(t), -EALREADY, "arm: arming twice gives -EALREADY");
	psi_trigger__free(t);

	u = psi_trigger__new(NULL, FR_PSI_CPU, FR_PSI_SOME, 150 * FR_MSEC, FR_SEC);
	if (!ok(u != NULL, "arm: new some 150 ms / 1 s on cpu")) {
		tap_skip(2, "no trigger");
		return;
	}
	now = boottime_ns();
	err = psi_trigger__arm(u);
	if (cap) {
		is_int(err, 0, "arm: a 1 s window arms (CAP_SYS_RESOURCE is in CapEff)");
		tap_skip(1, "the 1 s window armed, no failure to count");
	} else {
		is_int(err, -EINVAL, "arm: a 1 s window gives -EINVAL without CAP_SYS_RESOURCE");
		ok(psi_trigger__fd(u) == -1 && psi_trigger__failures(u) == 1 &&
		   psi_trigger__retry_at(u) >= now + 2 * FR_SEC &&
		   psi_trigger__retry_at(u) <= boottime_ns() + 2 * FR_SEC,
		   "arm: the failed arm counts and schedules a retry 2 s ahead");
	}
	psi_trigger__free(u);
}

static pid_t spawn_spinner(void)
{
	pid_t parent = getpid(), pid;
	volatile unsigned long spin = 0;

	pid = fork();
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	for (;;)
		spin++;
}

static void test_fire(void)
{
	struct psi_reading base, r, sample;
	struct psi_trigger *t = NULL;
	int ep = -1, sampler = -1, ret = 0, spurious = 0, started = 0;
	uint64_t deadline;
	int64_t ev;

	ep = epoll_create1(EPOLL_CLOEXEC);
	sampler = open("/proc/pressure/cpu", O_RDONLY | O_CLOEXEC);
	t = psi_trigger__new(NULL, FR_PSI_CPU, FR_PSI_SOME, 100 * FR_MSEC, 2 * FR_SEC);
	if (!ok(ep >= 0 && sampler >= 0 && t && !psi_read_fd(sampler, &base),
		"fire: epoll, sampler and trigger set up")) {
		tap_skip(3, "set-up failed");
		goto out;
	}
	for (int i = 0; i < FR_SPINNERS; i++) {
		spinners[i] = spawn_spinner();
		if (spinners[i] > 0)
			started++;
	}
	ok(started == FR_SPINNERS, "fire: %d spinners started on a 2-CPU budget", started);
	ret = psi_trigger__arm(t);
	if (ret || watch(ep, psi_trigger__fd(t))) {
		ok(0, "fire: arm some 100 ms / 2 s: %s", strerror(ret ? -ret : errno));
		tap_skip(1, "not armed");
		goto out;
	}
	deadline = boottime_ns() + 10 * FR_SEC;
	ret = 0;
	while (boottime_ns() < deadline) {
		ev = wait_one(ep, 1000);
		if (ev < 0) {
			ret = (int)ev;
			break;
		}
		if (ev == 0) {
			/* the daemon's once-a-second sample */
			if (!psi_read_fd(sampler, &sample))
				psi_trigger__observe(t, &sample);
			continue;
		}
		ret = psi_trigger__handle(t, (uint32_t)ev, &r);
		if (ret != FR_PSI_SPURIOUS)
			break;
		spurious++;
		tap_diag("fire: a spurious event %.3f s after arming: some.total +%" PRIu64
			 " us since the set-up", (boottime_ns() + 10 * FR_SEC - deadline) / 1e9,
			 r.some.total - base.some.total);
	}
	tap_diag("fire: %d spurious event(s) before the real one", spurious);
	if (ret != FR_PSI_FIRED && !psi_read_fd(sampler, &sample))
		tap_diag("fire: no real event; some.total grew %" PRIu64 " us in all since the set-up",
			 sample.some.total - base.some.total);
	if (!is_int(ret, FR_PSI_FIRED, "fire: real CPU pressure gives FR_PSI_FIRED within 10 s"))
		tap_skip(1, "did not fire");
	else
		ok(r.some.total >= base.some.total + 100000,
		   "fire: some.total grew by %" PRIu64 " us (>= 100 ms)",
		   r.some.total - base.some.total);
out:
	spinners__stop();
	psi_trigger__free(t);
	if (sampler >= 0)
		close(sampler);
	if (ep >= 0)
		close(ep);
}

/* A trigger on an idle cgroup, its totals never grow. */
static void test_spurious(void)
{
	struct psi_reading r, fake;
	struct psi_trigger *t = NULL;
	const char *why;
	uint64_t t0;
	int err;

	err = cgroup__make(0, "idle", &why);
	if (err) {
		tap_skip(6, why);
		return;
	}
	t = psi_trigger__new(cgroups[0], FR_PSI_CPU, FR_PSI_SOME, 100 * FR_MSEC, 2 * FR_SEC);
	err = t ? psi_trigger__arm(t) : -errno;
	if (!is_int(err, 0, "spurious: arm some 100 ms / 2 s on an idle cgroup")) {
		tap_skip(5, "not armed");
		goto out;
	}
	memset(&r, 0, sizeof(r));
	is_int(psi_trigger__handle(t, EPOLLPRI, &r), FR_PSI_SPURIOUS,
	       "spurious: an event without total growth gives FR_PSI_SPURIOUS");
	ok(r.ts != 0 && r.some.total == 0 && psi_trigger__fd(t) >= 0,
	   "spurious: the reading was taken (total %" PRIu64 ") and the trigger stays armed",
	   r.some.total);

	/*
	 * The rule itself, on the history: samples 1 s apart after the
	 * baseline, dripping 60 ms a second; growth is measured over
	 * window + 1 s = 3 s back from now.
	 */
	t0 = r.ts;
	memset(&fake, 0, sizeof(fake));
	for (int i = 1; i <= 6; i++) {
		fake.ts = t0 + (uint64_t)i * FR_SEC;
		fake.some.total = (uint64_t)i * 60000;
		psi_trigger__observe(t, &fake);
	}
	is_int(psi_trigger__growth(t, t0 + 6 * FR_SEC, 360000), 180000,
	       "growth: measured from the sample at now - window - 1 s");
	is_int(psi_trigger__growth(t, t0 + 6 * FR_SEC + FR_SEC / 2, 390000), 210000,
	       "growth: from the newest sample at or before the cutoff");
	is_int(psi_trigger__growth(t, t0 + FR_SEC, 60000), 60000,
	       "growth: from the arming baseline while the history is shorter");
out:
	psi_trigger__free(t);
	if (cgroup__remove(0))
		tap_diag("failed to remove '%s': %s", cgroups[0], strerror(errno));
	cgroups[0][0] = 0;
}

static void test_gone(void)
{
	struct psi_trigger *t = NULL;
	uint64_t cpu0, cpu, now, at;
	const char *why;
	int ep = -1, err, ret;
	int64_t ev = 0;

	err = cgroup__make(1, "gone", &why);
	if (err) {
		tap_skip(10, why);
		return;
	}
	cpu0 = cpu_time_ns();
	ep = epoll_create1(EPOLL_CLOEXEC);
	t = psi_trigger__new(cgroups[1], FR_PSI_CPU, FR_PSI_SOME, 100 * FR_MSEC, 2 * FR_SEC);
	err = t ? psi_trigger__arm(t) : -errno;
	if (!err && watch(ep, psi_trigger__fd(t)))
		err = -errno;
	if (!is_int(err, 0, "gone: arm a cpu trigger on a fresh cgroup")) {
		tap_skip(9, "not armed");
		goto out;
	}
	ok(!rmdir(cgroups[1]), "gone: rmdir the cgroup under the armed trigger");
	/* at most 5 s; a spurious EPOLLPRI on the way is judged and ignored */
	for (int i = 0; i < 10; i++) {
		ev = wait_one(ep, 500);
		if (ev < 0 || (ev & (EPOLLERR | EPOLLHUP)))
			break;
		if (ev)
			psi_trigger__handle(t, (uint32_t)ev, NULL);
	}
	ok(ev > 0 && (ev & (EPOLLERR | EPOLLHUP)),
	   "gone: epoll reports EPOLLERR/EPOLLHUP (revents %#llx)", (long long)ev);
	now = boottime_ns();
	ret = psi_trigger__handle(t, ev > 0 ? (uint32_t)ev : EPOLLERR, NULL);
	is_int(ret, FR_PSI_GONE, "gone: handle gives FR_PSI_GONE");
	at = psi_trigger__retry_at(t);
	ok(psi_trigger__fd(t) == -1 && at >= now + FR_SEC &&
	   at <= boottime_ns() + FR_SEC,
	   "gone: fd closed, retry in 1 s (%.3f s)", at > now ? (double)(at - now) / 1e9 : 0.0);
	is_int(wait_one(ep, 300), 0,
	       "gone: closing the fd stopped the level-triggered EPOLLERR");

	now = boottime_ns();
	is_int(psi_trigger__arm(t), -ENOENT, "gone: re-arm while the cgroup is gone gives -ENOENT");
	at = psi_trigger__retry_at(t);
	ok(psi_trigger__failures(t) == 1 && at >= now + 2 * FR_SEC &&
	   at <= boottime_ns() + 2 * FR_SEC,
	   "gone: one failure, the next retry 2 s ahead (%.3f s)",
	   at > now ? (double)(at - now) / 1e9 : 0.0);

	if (!ok(!mkdir(cgroups[1], 0755), "gone: recreate the cgroup")) {
		tap_skip(2, "cgroup not recreated");
		goto out;
	}
	is_int(psi_trigger__arm(t), 0, "gone: re-arm on the recreated cgroup");
	ok(psi_trigger__failures(t) == 0 && psi_trigger__retry_at(t) == 0 &&
	   psi_trigger__fd(t) >= 0, "gone: a successful arm resets the backoff");
out:
	psi_trigger__free(t);
	if (ep >= 0)
		close(ep);
	cpu = cpu_time_ns() - cpu0;
	ok(cpu < FR_SEC / 2, "gone: the sequence used %.3f s of CPU (< 0.5 s, no spinning)",
	   (double)cpu / 1e9);
	if (cgroup__remove(1))
		tap_diag("failed to remove '%s': %s", cgroups[1], strerror(errno));
	cgroups[1][0] = 0;
}

/* The fds this process has open. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static void test_free(void)
{
	struct psi_trigger *t;

	int fds = count_fds();

	ok(survives(psi_trigger__free(NULL)), "free: NULL is fine");
	t = psi_trigger__new("/nonexistent/cgroup", FR_PSI_IO, FR_PSI_SOME, FR_SEC, 2 * FR_SEC);
	ok(t && psi_trigger__arm(t) == -ENOENT && psi_trigger__fd(t) == -1,
	   "free: a trigger whose arm failed is disarmed");
	ok(survives(psi_trigger__free(t)), "free: a disarmed trigger is freed without a crash");
	psi_trigger__free(t);
	is_int(count_fds(), fds, "free: and leaves no fd open (LeakSanitizer checks its memory)");
}

int main(void)
{
	if (access("/proc/pressure/cpu", R_OK))
		tap_skip_all("/proc/pressure/cpu is absent: kernel without PSI (CONFIG_PSI, psi=1)");
	atexit(cleanup);
	test_parse();
	test_read();
	test_path();
	test_new();
	test_arm();
	test_fire();
	test_spurious();
	test_gone();
	test_free();
	return tap_done_testing();
}
