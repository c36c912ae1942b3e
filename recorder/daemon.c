// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon.c - flightrecd's event loop. See daemon.h.
 *
 * Everything arrives through epoll: the signalfd (SIGUSR1 dumps, SIGHUP
 * reloads, SIGTERM/SIGINT stop), a 100 ms timerfd that pumps the drain,
 * the BPF ring's fd (woken when the ring fills past a quarter), and the
 * dumper's eventfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "util.h"

#define FR_SYNC_TIMEOUT_NS	(1000 * 1000 * 1000ULL)
#define FR_PROCINFO_QUEUE	8192

enum { EV_SIGNAL = 1, EV_TICK, EV_RING, EV_DUMP };

static void read_first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (!f)
		return;
	if (fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static void host_identity(struct daemon *dm)
{
	struct utsname u;

	if (gethostname(dm->host, sizeof(dm->host)))
		snprintf(dm->host, sizeof(dm->host), "unknown");
	if (!uname(&u))
		snprintf(dm->kernel, sizeof(dm->kernel), "%s", u.release);
	read_first_line("/proc/sys/kernel/random/boot_id", dm->boot_id, sizeof(dm->boot_id));
}

/* sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET. */
static int notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd, err = 0;

	if (!path || !*path)
		return 0;
	if ((path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return -EINVAL;
	strcpy(sa.sun_path, path);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
		err = -errno;
	close(fd);
	return err;
}

static int epoll_add(int epfd, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* The signals the loop reads from its signalfd. */
static void loop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGUSR1);
	sigaddset(mask, SIGHUP);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGINT);
}

static int setup_loop(struct daemon *dm)
{
	struct itimerspec its = {
		.it_interval = { .tv_nsec = FR_TICK_NS },
		.it_value = { .tv_nsec = FR_TICK_NS },
	};
	sigset_t mask;
	int err;

	loop_signals(&mask);
	dm->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	dm->tickfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	dm->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (dm->sigfd < 0 || dm->tickfd < 0 || dm->epfd < 0)
		return -errno;
	if (timerfd_settime(dm->tickfd, 0, &its, NULL))
		return -errno;
	err = epoll_add(dm->epfd, dm->sigfd, EPOLLIN, EV_SIGNAL);
	if (!err)
		err = epoll_add(dm->epfd, dm->tickfd, EPOLLIN, EV_TICK);
	if (!err)
		err = epoll_add(dm->epfd, ringbuf__fd(dm->rb), EPOLLIN | EPOLLET, EV_RING);
	if (!err)
		err = epoll_add(dm->epfd, dumper__fd(dm->dumper), EPOLLIN, EV_DUMP);
	return err;
}

/* Drain hooks: ask the procinfo worker to read what a new incarnation is. */
static void hook_proc(void *ctx, uint32_t slot, uint32_t pid, uint64_t start)
{
	struct daemon *dm = ctx;

	procinfo__request(dm->procinfo, FR_INFO_READ, slot, pid, start, NULL, 0);
}

static void hook_stack(void *ctx, uint32_t slot, uint32_t pid, uint64_t start,
		       const void *user_ips, unsigned n)
{
	struct daemon *dm = ctx;
	uint64_t ips[FR_INFO_USER_IPS];

	n = FR_MIN(n, (unsigned)FR_INFO_USER_IPS);
	memcpy(ips, user_ips, n * sizeof(ips[0]));
	procinfo__request(dm->procinfo, FR_INFO_CHECK, slot, pid, start, ips, n);
}

/* Start-up scan: an entry, and a /proc read, for every live process. */
static int scan_task(void *ctx, const struct fr_rec_task *t)
{
	struct daemon *dm = ctx;
	struct proctable *pt = drain__tables(dm->drain)->procs;
	uint32_t slot;

	if (t->h.tid != t->h.tgid)
		return 0;
	if (proctable__get(pt, t->h.tgid, t->h.start, t->h.comm, &slot) < 0)
		return 0;	/* table full: the snapshot still lists it */
	proctable__set_parent(pt, slot, t->ppid);
	proctable__unref(pt, slot);
	procinfo__request(dm->procinfo, FR_INFO_READ, slot, t->h.tgid, t->h.start, NULL, 0);
	return 0;
}

static const char *output_dir(const struct daemon *dm)
{
	return dm->opts.output_dir ? dm->opts.output_dir : dm->cfg->directory;
}

/*
 * daemon__init() - load BPF, reserve the window, set up the loop, and say
 * "ready". Takes ownership of @cfg. Returns 0 or -errno (logged).
 */
int daemon__init(struct daemon *dm, const struct daemon_opts *o, struct fr_config *cfg)
{
	struct sampler_opts so = { .frequency = cfg->frequency };
	char err[512];
	sigset_t mask;
	int e;

	/* Before any thread starts: threads inherit the mask, and only the
	 * signalfd may see these signals. */
	loop_signals(&mask);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	memset(dm, 0, sizeof(*dm));
	dm->opts = *o;
	dm->cfg = cfg;
	dm->epfd = dm->sigfd = dm->tickfd = -1;
	host_identity(dm);

	dm->drain = drain__new(cfg->memory_bytes, cfg->window_ns);
	if (!dm->drain) {
		e = -errno;
		fr_err("failed to reserve %" PRIu64 " bytes for the window: %s",
		       cfg->memory_bytes, strerror(-e));
		return e;
	}
	dm->sampler = sampler__open(&so, err, sizeof(err));
	if (!dm->sampler) {
		e = -errno;
		fr_err("%s", err);
		return e;
	}
	dm->symcache = symcache__new();
	dm->procinfo = dm->symcache ? procinfo__new(drain__tables(dm->drain)->procs,
						     dm->symcache, FR_PROCINFO_QUEUE) : NULL;
	if (!dm->procinfo) {
		e = -errno;
		fr_err("failed to start the /proc reader: %s", strerror(-e));
		return e;
	}
	drain__set_hooks(dm->drain, &(struct drain_hooks){
		.ctx = dm, .proc = hook_proc, .stack = hook_stack });
	dm->rb = ringbuf__new(sampler__ring_fd(dm->sampler));
	dm->dumper = dm->rb ? dumper__new(dm->drain, dm->sampler, dm->symcache, dm->procinfo) : NULL;
	if (!dm->rb || !dm->dumper) {
		e = -errno;
		fr_err("failed to set up the ring buffer consumer: %s", strerror(-e));
		return e;
	}
	e = sampler__list_tasks(dm->sampler, scan_task, dm);
	if (e)
		fr_warn("failed to scan live processes: %s, ignoring", strerror(-e));
	e = setup_loop(dm);
	if (e) {
		fr_err("failed to set up the event loop: %s", strerror(-e));
		return e;
	}
	fr_info("sampling %d CPUs at %u Hz (%s), window %" PRIu64 " ms, memory %" PRIu64
		" MiB (%" PRIu64 " MiB reserved), ring %zu KiB, dumps to '%s'; ready",
		sampler__ncpus(dm->sampler), cfg->frequency, sampler__source(dm->sampler),
		cfg->window_ns / FR_NSEC_PER_MSEC, cfg->memory_bytes >> 20,
		drain__budget(dm->drain) >> 20, sampler__ring_bytes(dm->sampler) >> 10,
		output_dir(dm));
	e = notify("READY=1");
	if (e)
		fr_warn("failed to notify '%s': %s, ignoring", getenv("NOTIFY_SOCKET"), strerror(-e));
	return 0;
}

void daemon__fini(struct daemon *dm)
{
	if (dm->dumper && dumper__busy(dm->dumper)) {
		struct dump_result r;

		while (dumper__finish(dm->dumper, &r) == -EAGAIN)
			usleep(1000);
		window__unpin(drain__tables(dm->drain)->win);
		drain__release_hold(dm->drain);
		if (r.err)
			fr_err("%s", r.msg);
		else
			fr_info("dump written to '%s'", r.path);
	}
	dumper__free(dm->dumper);
	ringbuf__free(dm->rb);
	sampler__close(dm->sampler);
	procinfo__free(dm->procinfo);
	drain__free(dm->drain);
	symcache__free(dm->symcache);
	if (dm->epfd >= 0)
		close(dm->epfd);
	if (dm->tickfd >= 0)
		close(dm->tickfd);
	if (dm->sigfd >= 0)
		close(dm->sigfd);
	config__free(dm->cfg);
}

/* ----------------------------------------------------------------- dump */

/* The process table and its /proc reader, as bookkeeping. */
static int add_table_stats(struct daemon *dm, struct fr_kvlist *m)
{
	struct proctable_stats ps;
	struct procinfo_stats is;
	int err = 0;

	proctable__stats(drain__tables(dm->drain)->procs, &ps);
	procinfo__stats(dm->procinfo, &is);
	err |= kvlist__add_u64(m, "proctable_live", ps.live);
	err |= kvlist__add_u64(m, "proctable_capacity", ps.capacity);
	err |= kvlist__add_u64(m, "proctable_created", ps.created);
	err |= kvlist__add_u64(m, "proctable_freed", ps.freed);
	err |= kvlist__add_u64(m, "procinfo_reads", is.reads);
	err |= kvlist__add_u64(m, "procinfo_gone", is.gone);
	err |= kvlist__add_u64(m, "procinfo_rereads", is.rereads);
	return err;
}

static int add_meta(struct daemon *dm, struct fr_kvlist *m)
{
	uint64_t b0 = fr_boottime_ns(), r = fr_clock_ns(CLOCK_REALTIME);
	uint64_t b1 = fr_boottime_ns();
	char *ini = config__render(dm->cfg);
	int err = 0;

	err |= kvlist__add_str(m, "flightrec_version", FR_VERSION);
	err |= kvlist__add_u64(m, "contract_version", FR_CONTRACT_VERSION);
	err |= kvlist__add_str(m, "host", dm->host);
	err |= kvlist__add_str(m, "kernel", dm->kernel);
	err |= kvlist__add_str(m, "boot_id", dm->boot_id);
	err |= kvlist__add_u64(m, "ncpus", sampler__ncpus(dm->sampler));
	err |= kvlist__add_u64(m, "frequency", dm->cfg->frequency);
	err |= kvlist__add_str(m, "event_source", sampler__source(dm->sampler));
	err |= kvlist__add_u64(m, "clock_boottime_ns", b0 + (b1 - b0) / 2);
	err |= kvlist__add_u64(m, "clock_realtime_ns", r);
	err |= kvlist__add_u64(m, "daemon_pid", getpid());
	err |= kvlist__add_u64(m, "page_size", sysconf(_SC_PAGESIZE));
	err |= kvlist__add_u64(m, "ring_bytes", sampler__ring_bytes(dm->sampler));
	err |= kvlist__add_u64(m, "window_reserved_bytes", drain__budget(dm->drain));
	err |= add_table_stats(dm, m);
	err |= kvlist__add_str(m, "config_path", dm->cfg->path ? dm->cfg->path : "");
	err |= kvlist__add_str(m, "config", ini ? ini : "");
	free(ini);
	return err ? -ENOMEM : 0;
}

/* Per-CPU BPF counters as an array value. */
static int add_cpu_counter(struct daemon *dm, struct fr_kvlist *l, const char *key,
			   enum fr_counter which)
{
	uint64_t vals[4096];
	int n = sampler__counters(dm->sampler, which, vals, FR_ARRAY_SIZE(vals));

	if (n < 0)
		n = 0;
	return kvlist__add_array(l, key, vals, n);
}

static int add_losses(struct daemon *dm, struct fr_kvlist *l)
{
	const struct window_stats *ws = window__stats(drain__tables(dm->drain)->win);
	const struct drain_stats *ds = drain__stats(dm->drain);
	struct proctable_stats ps;
	struct procinfo_stats is;
	int err = 0;

	proctable__stats(drain__tables(dm->drain)->procs, &ps);
	procinfo__stats(dm->procinfo, &is);
	err |= add_cpu_counter(dm, l, "bpf_reserve_failed", FR_CNT_RESERVE);
	err |= add_cpu_counter(dm, l, "bpf_scratch_failed", FR_CNT_SCRATCH);
	err |= kvlist__add_u64(l, "window_evicted_space", ws->evicted_space);
	err |= kvlist__add_u64(l, "window_evicted_pinned", ws->evicted_pinned);
	err |= kvlist__add_u64(l, "window_evicted_time", ws->evicted_time);
	err |= kvlist__add_u64(l, "drain_dropped", ds->dropped);
	err |= kvlist__add_u64(l, "drain_bad_records", ds->bad);
	err |= kvlist__add_u64(l, "drain_late", ds->late);
	err |= kvlist__add_u64(l, "drain_forced", ds->forced);
	err |= kvlist__add_u64(l, "drain_busy_passes", ds->busy_passes);
	err |= kvlist__add_u64(l, "proctable_full", ps.full);
	err |= kvlist__add_u64(l, "procinfo_dropped", is.dropped);
	return err ? -ENOMEM : 0;
}

static int add_trigger(struct fr_dump *d, const struct trigger_fire *f)
{
	struct fr_dump_trigger *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->name = strdup(f->name);
	t->type = strdup(f->type);
	t->reason = strdup(f->reason);
	t->detail = strdup(f->detail);
	t->ts = f->ts;
	d->trig = t;
	d->ntrig = 1;
	return t->name && t->type && t->reason && t->detail ? 0 : -ENOMEM;
}

/*
 * Freeze [T - window, T] for @f and hand it to the dump thread. The drain
 * must already have passed T. Pins the window and holds the tables until
 * the dump is finished.
 */
static int start_dump(struct daemon *dm, const struct trigger_fire *f)
{
	const struct drain_tables *t = drain__tables(dm->drain);
	uint64_t span = window__span(t->win), T = f->ts;
	struct dump_request req = {};
	int err;

	dump__init(&req.model);
	req.requested = T;
	req.first = window__lower_bound(t->win, T > span ? T - span : 0);
	req.last = window__lower_bound(t->win, T + 1);
	req.model.win = (struct fr_dump_window){
		.start = T > span ? T - span : 0, .end = T,
		.watermark = drain__watermark(dm->drain), .span = span,
	};
	req.dir = strdup(output_dir(dm));
	req.name_hint = strdup(f->name);
	req.mode = 0600;
	req.writer_flags = dm->opts.writer_flags;
	err = !req.dir || !req.name_hint ? -ENOMEM : 0;
	if (!err)
		err = add_meta(dm, &req.model.meta);
	if (!err)
		err = add_trigger(&req.model, f);
	if (!err)
		err = add_losses(dm, &req.model.loss);
	if (err)
		goto fail;
	window__pin(t->win, req.first);
	drain__hold(dm->drain);
	fr_info("dump requested: %s; freezing %" PRIu64 " events", f->reason,
		req.last - req.first);
	err = dumper__start(dm->dumper, &req);
	if (err) {
		window__unpin(t->win);
		drain__release_hold(dm->drain);
		goto fail;
	}
	return 0;
fail:
	dump_request__free(&req);
	return err;
}

/*
 * A trigger fired at f->ts: drain until the watermark passes it (now, not
 * at the next tick), then freeze and dump; or queue it behind the dump in
 * flight.
 */
static void on_trigger(struct daemon *dm, const struct trigger_fire *f)
{
	int err = drain__sync(dm->drain, dm->rb, f->ts, FR_SYNC_TIMEOUT_NS);

	if (err)
		fr_warn("failed to drain up to the trigger: %s, dumping what was drained",
			strerror(-err));
	if (dumper__busy(dm->dumper)) {
		if (dm->pending)
			dm->merged++;
		else
			dm->pending_fire = *f;
		dm->pending = true;
		fr_info("dump in progress; '%s' will follow it", f->reason);
		return;
	}
	err = start_dump(dm, f);
	if (err) {
		dm->dump_failures++;
		fr_err("failed to start dump for '%s': %s", f->reason, strerror(-err));
	}
}

static void on_dump_done(struct daemon *dm)
{
	struct dump_result r;

	if (dumper__finish(dm->dumper, &r))
		return;
	window__unpin(drain__tables(dm->drain)->win);
	drain__release_hold(dm->drain);
	if (r.err) {
		dm->dump_failures++;
		fr_err("%s", r.msg);
	} else {
		dm->dumps++;
		fr_info("dump written to '%s' (%" PRIu64 " events, %" PRIu64 " processes, %" PRIu64
			" stacks, %" PRIu64 " bytes, %.1f ms%s%s)", r.path, r.events, r.procs,
			r.stacks, r.bytes, r.elapsed_ns / 1e6, r.uring ? ", io_uring" : ", pwrite",
			r.stale ? ", some events recycled while writing" : "");
	}
	if (dm->pending && !dm->stopping) {
		struct trigger_fire f = dm->pending_fire;

		dm->pending = false;
		if (dm->merged)
			fr_info("%" PRIu64 " more triggers were merged into the next dump", dm->merged);
		dm->merged = 0;
		if (start_dump(dm, &f))
			fr_err("failed to start queued dump for '%s'", f.reason);
	}
}

/* ----------------------------------------------------------------- reload */

/*
 * SIGHUP: load the config file again. A bad file changes nothing. What can
 * change live does (window length, frequency, output directory); the memory
 * reservation needs a restart.
 */
static void reload(struct daemon *dm)
{
	struct fr_config *n = config__new();
	char err[FR_CONF_ERR_MAX];
	int e;

	if (!n) {
		fr_err("failed to reload config: %s, keeping the current one", strerror(errno));
		return;
	}
	e = dm->opts.config_path ? config__load(n, dm->opts.config_path, err, sizeof(err)) : 0;
	if (e) {
		fr_err("failed to reload config: %s; keeping the current one", err);
		config__free(n);
		return;
	}
	if (n->memory_bytes != dm->cfg->memory_bytes) {
		fr_warn("memory = %" PRIu64 " needs a restart; keeping %" PRIu64 " bytes",
			n->memory_bytes, dm->cfg->memory_bytes);
		n->memory_bytes = dm->cfg->memory_bytes;
	}
	if (n->frequency != dm->cfg->frequency) {
		e = sampler__set_frequency(dm->sampler, n->frequency);
		if (e) {
			fr_err("failed to set frequency %u Hz: %s; keeping %u Hz", n->frequency,
			       strerror(-e), dm->cfg->frequency);
			n->frequency = dm->cfg->frequency;
		}
	}
	window__set_span(drain__tables(dm->drain)->win, n->window_ns);
	config__free(dm->cfg);
	dm->cfg = n;
	fr_info("config reloaded from '%s': window %" PRIu64 " ms, %u Hz, dumps to '%s'",
		dm->opts.config_path ? dm->opts.config_path : "(defaults)",
		n->window_ns / FR_NSEC_PER_MSEC, n->frequency, output_dir(dm));
}

static void on_signal(struct daemon *dm)
{
	struct signalfd_siginfo si;
	struct trigger_fire f;

	while (read(dm->sigfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGUSR1:
			trigger_signal__fire(&si, fr_boottime_ns(), &f);
			on_trigger(dm, &f);
			break;
		case SIGHUP:
			reload(dm);
			break;
		case SIGTERM:
		case SIGINT:
			fr_info("%s received, stopping", strsignal(si.ssi_signo));
			dm->stopping = true;
			break;
		}
	}
}

static void pump(struct daemon *dm)
{
	int r = drain__pump(dm->drain, dm->rb);

	if (r < 0)
		fr_err("failed to drain the BPF ring: %s", strerror(-r));
}

/*
 * daemon__run() - serve until SIGTERM or SIGINT. Returns 0, or -errno when
 * the loop itself fails.
 */
int daemon__run(struct daemon *dm)
{
	struct epoll_event evs[8];
	uint64_t ticks;

	while (!dm->stopping) {
		int n = epoll_wait(dm->epfd, evs, FR_ARRAY_SIZE(evs), -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			fr_err("failed to wait for events: %s", strerror(errno));
			return -errno;
		}
		for (int i = 0; i < n; i++) {
			switch (evs[i].data.u64) {
			case EV_SIGNAL:
				on_signal(dm);
				break;
			case EV_TICK:
				if (read(dm->tickfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
					fr_warn("failed to read timer: %s, ignoring", strerror(errno));
				pump(dm);
				break;
			case EV_RING:
				pump(dm);
				break;
			case EV_DUMP:
				on_dump_done(dm);
				break;
			}
		}
	}
	return 0;
}
