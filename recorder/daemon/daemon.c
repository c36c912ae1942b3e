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
#include <poll.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cgroup.h"
#include "daemon.h"
#include "dumps.h"
#include "names.h"
#include "status.h"
#include "attacher.h"
#include "tables.h"
#include "log.h"
#include "outdir.h"
#include "privs.h"
#include "pycode.h"
#include "pysplice.h"
#include "util.h"
#include "worker.h"

#define FR_SYNC_TIMEOUT_NS	(1000 * 1000 * 1000ULL)
#define FR_UNWIND_FILES		4096	/* files with rows at once */
#define FR_PROCINFO_QUEUE	8192


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

	if (gethostname(dm->ident.host, sizeof(dm->ident.host)))
		snprintf(dm->ident.host, sizeof(dm->ident.host), "unknown");
	if (!uname(&u))
		snprintf(dm->ident.kernel, sizeof(dm->ident.kernel), "%s", u.release);
	read_first_line("/proc/sys/kernel/random/boot_id", dm->ident.boot_id, sizeof(dm->ident.boot_id));
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
	dm->loop.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	dm->loop.tickfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	dm->loop.freezefd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	if (dm->loop.sigfd < 0 || dm->loop.tickfd < 0 || dm->loop.freezefd < 0)
		return -errno;
	if (timerfd_settime(dm->loop.tickfd, 0, &its, NULL))
		return -errno;
	err = daemon_epoll_add(dm, dm->loop.sigfd, EPOLLIN, FR_EV_TAG_SIGNAL);
	if (!err)
		err = daemon_epoll_add(dm, dm->loop.tickfd, EPOLLIN, FR_EV_TAG_TICK);
	if (!err)
		err = daemon_epoll_add(dm, dm->loop.freezefd, EPOLLIN, FR_EV_TAG_FREEZE);
	if (!err)
		err = daemon_epoll_add(dm, ringbuf__fd(dm->rb), EPOLLIN | EPOLLET, FR_EV_TAG_RING);
	if (!err)
		err = daemon_epoll_add(dm, dumper__fd(dm->dumper), EPOLLIN, FR_EV_TAG_DUMP);
	if (!err)
		err = daemon_epoll_add(dm, control__fd(dm->control), EPOLLIN, FR_EV_TAG_CONTROL);
	if (!err && sampler__late_fd(dm->sampler) >= 0)
		err = daemon_epoll_add(dm, sampler__late_fd(dm->sampler), EPOLLIN, FR_EV_TAG_BPF);
	return err;
}

/* Where the time to "ready" went, once, after the ready line. */
static void log_startup(struct daemon *dm)
{
	const struct daemon_startup *su = &dm->startup;
	const uint64_t ms = FR_NSEC_PER_MSEC;

	dm->startup.ready_ns = fr_boottime_ns() - dm->started;
	fr_info("start-up: ready %" PRIu64 " ms after it began: settings and memory %" PRIu64
		" ms, BPF object, maps and entry programs %" PRIu64 " ms, attached %" PRIu64
		" ms, workers %" PRIu64 " ms, process scan %" PRIu64 " ms (%" PRIu64 " processes)",
		su->ready_ns / ms, su->before_bpf_ns / ms, su->bpf.maps_ns / ms,
		su->bpf.attach_ns / ms, su->workers_ns / ms, su->scan_ns / ms, su->scan_procs);
}

/*
 * The programs loaded after "ready" (the sampler's unwinder, stalls,
 * off-CPU blocks, the OOM victim) are in place, or one failed: say which,
 * once.
 */
static void on_late_bpf(struct daemon *dm)
{
	int fd = sampler__late_fd(dm->sampler);
	char msg[200];
	uint64_t ns;
	int e;

	epoll_ctl(dm->loop.epfd, EPOLL_CTL_DEL, fd, NULL);
	e = sampler__late_result(dm->sampler, &ns, msg, sizeof(msg));
	dm->startup.late_ns = ns;
	if (e)
		fr_err("%s; what it records is not recorded (sample_full: stacks without frame "
		       "pointers are walked only from their copies; the others: stalls, blocks, OOM "
		       "victims), ignoring", msg);
	else
		fr_info("all BPF programs attached (the unwinder %" PRIu64 " ms, the stalls, blocks "
			"and OOM victims %" PRIu64 " ms after the sampler's load began)",
			sampler__unwinder_ns(dm->sampler) / FR_NSEC_PER_MSEC, ns / FR_NSEC_PER_MSEC);
	/* The kernel symbols were read before those programs were: their JIT code too. */
	dumper__ksyms_stale(dm->dumper);
}

/* The unwind tables' owner, when the sampler loaded a row pool. */
static int setup_unwinder(struct daemon *dm)
{
	struct sampler_unwind_maps m;
	int e;

	if (sampler__unwind_maps(dm->sampler, &m))
		return 0;
	dm->unwinder = unwinder__new(&m);
	if (!dm->unwinder) {
		e = -errno;
		fr_err("failed to map %u unwind rows: %s", m.nrows, strerror(-e));
		return e;
	}
	unwinder__set_python(dm->unwinder, dm->cfg->python);
	procinfo__set_unwinder(dm->procinfo, dm->unwinder);
	/* Python frames are walked in processes with a table: their names need it too. */
	dm->pycache = pycache__new(dm->unwinder, FR_PYCACHE_BUDGET);
	if (!dm->pycache) {
		e = -errno;
		fr_err("failed to set up the Python code cache: %s", strerror(-e));
		return e;
	}
	dm->attacher = attacher__new(dm->unwinder);
	if (!dm->attacher) {
		e = -errno;
		fr_err("failed to start the unwind attacher: %s", strerror(-e));
		return e;
	}
	return 0;
}

/* Drain hook: a stack without rows; the attacher gives its process a table. */
static void hook_no_table(void *ctx, uint32_t pid, uint64_t start)
{
	struct daemon *dm = ctx;

	if (dm->attacher)
		attacher__request(dm->attacher, pid, start);
}

/*
 * Drain hook: walk on from a sample's copy of its stack with the rows
 * built since. Not yet, while the process's attach is queued behind
 * another's big files: -EINPROGRESS, so that the copy waits for it
 * (the drain's 10 s, not 3).
 */
static int hook_finish(void *ctx, uint32_t pid, uint64_t start, const struct fr_ucopy *c,
		       const void *stack, uint64_t *ips, unsigned max, uint32_t *end)
{
	struct daemon *dm = ctx;
	int n;

	if (!dm->unwinder)
		return 0;
	n = unwinder__finish(dm->unwinder, pid, start, c, stack, ips, max, end);
	if (!n && dm->attacher && attacher__pending(dm->attacher, pid, start))
		return -EINPROGRESS;
	return n;
}

/* Drain hooks: ask the procinfo worker to read what a new incarnation is,
 * and the attacher for an exec's table. */
static void hook_proc(void *ctx, uint32_t slot, uint32_t pid, uint64_t start, bool exec)
{
	struct daemon *dm = ctx;

	procinfo__request(dm->procinfo, exec ? FR_INFO_READ_SOON : FR_INFO_READ, slot, pid,
			  start, NULL, 0);
	/* The procinfo read attaches too, but after every queued symbol load. */
	if (exec && dm->attacher)
		attacher__request_exec(dm->attacher, pid, start);
}

/* A fork's child: its parent's image until it execs (no /proc read). */
static void hook_fork(void *ctx, uint32_t slot, uint32_t pid, uint64_t start,
		      uint32_t parent_slot, uint32_t parent_pid, uint64_t parent_start)
{
	struct daemon *dm = ctx;

	procinfo__inherit(dm->procinfo, slot, pid, start, parent_slot, parent_pid, parent_start);
}

/* An exit's code mappings: its frames named without /proc, and the copies
 * of its stacks that wait for rows finished once it is gone. */
static void hook_exit_maps(void *ctx, uint32_t slot, const void *rec)
{
	struct daemon *dm = ctx;

	if (dm->unwinder)
		unwinder__exit_maps(dm->unwinder, rec);
	procinfo__exit_maps(dm->procinfo, slot, rec);
}

/*
 * A stack stored for the first time: the namer thread names it ahead of a
 * dump, and the /proc worker checks that the process's maps cover its user
 * frames.
 */
static void hook_stack(void *ctx, const struct drain_stack *s)
{
	struct daemon *dm = ctx;
	uint64_t ips[FR_INFO_USER_IPS];
	unsigned n = 0;

	/* Its names, prepared on the namer thread before a dump needs them. */
	dumper__announce(dm->dumper, s);
	/* Native addresses only: a Python frame's two words are no address. */
	for (uint32_t i = s->kn; i < s->kn + s->un && n < FR_INFO_USER_IPS; i++) {
		if (fr_pyw_is(s->ips[i]))
			i++;
		else
			ips[n++] = s->ips[i];
	}
	if (!n)
		return;
	procinfo__request(dm->procinfo, FR_INFO_CHECK, s->slot, s->pid, s->start, ips, n);
}

/* A stack freed: its names need not be kept. */
static void hook_stack_gone(void *ctx, uint32_t id, uint32_t serial)
{
	struct daemon *dm = ctx;

	dumper__forget(dm->dumper, id, serial);
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
	dm->startup.scan_procs++;
	procinfo__request(dm->procinfo, FR_INFO_READ_LATER, slot, t->h.tgid, t->h.start, NULL, 0);
	return 0;
}

/* Drain hook: an OOM victim was chosen. Queued: the drain is mid-pump. */
/* The OOM dossier's memory cgroup, by its kernfs id (a walk of the hierarchy; rare). */
static void hook_memcg_path(void *ctx, uint64_t id, char *buf, size_t len)
{
	(void)ctx;
	if (cgroup__path_of_id(id, buf, len))
		buf[0] = 0;
}

static void hook_oom(void *ctx, const void *rec)
{
	const struct fr_rec_oom *o = rec;
	struct daemon *dm = ctx;
	struct trigger_fire *f;
	char anon[32];

	if (!dm->trig.has_oom || dm->trig.nqueued == FR_QUEUED_FIRES)
		return;
	f = &dm->trig.queued[dm->trig.nqueued++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", dm->trig.oom.name);
	snprintf(f->type, sizeof(f->type), "oom");
	snprintf(anon, sizeof(anon), "%" PRIu64 " KiB", (uint64_t)o->rss_anon >> 10);
	snprintf(f->reason, sizeof(f->reason), "OOM killer chose pid %u (%.16s), anon rss %s",
		 o->h.tgid, o->h.comm, anon);
	snprintf(f->detail, sizeof(f->detail), "victim pid=%u start=%" PRIu64 " comm=%.16s "
		 "total_vm=%" PRIu64 " rss_anon=%" PRIu64 " rss_file=%" PRIu64 " rss_shmem=%" PRIu64
		 " oom_score_adj=%d", o->h.tgid, (uint64_t)o->h.start, o->h.comm,
		 (uint64_t)o->total_vm, (uint64_t)o->rss_anon, (uint64_t)o->rss_file,
		 (uint64_t)o->rss_shmem, o->oom_score_adj);
	f->ts = o->h.ts;
	f->victim_pid = o->h.tgid;
	f->victim_start = o->h.start;
}

/*
 * The output directory must be safe before anything is recorded: checked
 * (and created) now, and what a killed daemon left half-written is removed.
 */
static int prepare_output(struct daemon *dm)
{
	struct outdir_opts oo = { .group = dm->cfg->group != NULL, .gid = dm->cfg->group_gid };
	char err[512], names[8][256];
	int fd, n;

	fd = outdir__open(daemon_output_dir(dm), &oo, err, sizeof(err));
	if (fd < 0) {
		fr_err("%s", err);
		return fd;
	}
	n = outdir__clean_temps(fd, names, 8);
	for (int i = 0; i < n && i < 8; i++)
		fr_info("removed leftover temporary file '%s/%s'", daemon_output_dir(dm), names[i]);
	if (n > 8)
		fr_info("removed %d more leftover temporary files", n - 8);
	close(fd);
	return 0;
}

/* BPF is loaded and attached: keep only what the running daemon needs. */
static int drop_privileges(struct daemon *dm)
{
	uint64_t kept = 0;
	int e = privs__drop(dm->cfg->group != NULL, &kept);

	if (e) {
		fr_err("failed to drop capabilities: %s", strerror(-e));
		return e;
	}
	privs__describe(kept, dm->ident.caps, sizeof(dm->ident.caps));
	fr_info("capabilities kept: %s", *dm->ident.caps ? dm->ident.caps : "none");
	return 0;
}

/* A worker thread's first step: the main thread's drop, for itself. */
static int thread_drop_privileges(void *ctx)
{
	struct daemon *dm = ctx;
	uint64_t kept;

	return privs__drop(dm->cfg->group != NULL, &kept);
}

/* The policy of a named trigger from its config section. */
static struct trigger_policy policy_of(const struct fr_trigger_conf *c)
{
	return (struct trigger_policy){
		.pre_ns = c->pre_ns, .post_ns = c->post_ns,
		.cooldown_ns = c->cooldown_ns, .max_per_hour = c->max_per_hour,
	};
}

/*
 * keep_trigger() - set up @t as @name of @type with policy @pol: a new
 * trigger the first time (or when its name changed), else the same one
 * with the new policy and its history kept (a reload resets no count and
 * no max_per_hour accounting). Returns 0 or -ENOMEM.
 */
static int keep_trigger(struct trigger *t, const char *name, const char *type,
			struct trigger_policy pol)
{
	if (t->name[0] && !strcmp(t->name, name))
		return trigger__set_policy(t, &pol);
	trigger__fini(t);
	return trigger__init(t, name, type, &pol);
}

/*
 * The triggers that are not PSI: SIGUSR1 ("signal", tuned by a type=signal
 * section), control-socket snapshots ("command": no cooldown, an operator
 * asked) and the OOM trigger if configured.
 */
static int setup_triggers(struct daemon *dm)
{
	struct trigger_policy none = {};
	const struct fr_trigger_conf *sig = NULL, *oom = NULL;
	int err;

	for (size_t i = 0; i < dm->cfg->ntriggers; i++) {
		if (dm->cfg->triggers[i].type == FR_TRIG_SIGNAL)
			sig = &dm->cfg->triggers[i];
		if (dm->cfg->triggers[i].type == FR_TRIG_OOM && oom)
			fr_warn("trigger '%s': only the first oom trigger ('%s') is used, ignoring",
				dm->cfg->triggers[i].name, oom->name);
		if (dm->cfg->triggers[i].type == FR_TRIG_OOM && !oom)
			oom = &dm->cfg->triggers[i];
	}
	err = keep_trigger(&dm->trig.signal, sig ? sig->name : "signal", "signal",
			   sig ? policy_of(sig) : none);
	snprintf(dm->trig.signal.desc, sizeof(dm->trig.signal.desc), "SIGUSR1");
	if (!err && !dm->trig.command.name[0]) {
		err = trigger__init(&dm->trig.command, "command", "command", &none);
		snprintf(dm->trig.command.desc, sizeof(dm->trig.command.desc),
			 "flightrec snapshot");
	}
	dm->trig.has_oom = oom != NULL;
	if (!err && oom) {
		err = keep_trigger(&dm->trig.oom, oom->name, "oom", policy_of(oom));
		snprintf(dm->trig.oom.desc, sizeof(dm->trig.oom.desc), "oom/mark_victim");
	}
	return err;
}

/*
 * daemon__init() - load BPF, reserve the window, arm the triggers, open
 * the control socket, set up the loop, and say "ready". Takes ownership of
 * @cfg. Returns 0 or -errno (logged).
 */
int daemon__init(struct daemon *dm, const struct daemon_opts *o, struct fr_config *cfg)
{
	struct sampler_opts so = {
		.frequency = cfg->frequency, .ring_bytes = cfg->ring_bytes,
		.unwind_rows = (uint32_t)FR_MIN(cfg->unwind_bytes / sizeof(struct fr_urow),
						 FR_UROWS_MAX),
		.unwind_files = FR_UNWIND_FILES,
		.no_kernel_tables = !cfg->unwind_kernel_tables,
		.rss_ledger = cfg->rss_ledger, .rss_step = cfg->rss_step,
		.rss_step_pct = cfg->rss_step_pct, .rss_max_age_ns = cfg->rss_max_age_ns,
		.stalls = cfg->stalls, .min_stall_ns = cfg->min_stall_ns,
		.offcpu = cfg->offcpu, .offcpu_sleep = cfg->offcpu_sleep,
		.min_block_ns = cfg->min_block_ns,
	};
	char err[512];
	sigset_t mask;
	uint64_t t;
	int e;

	/* Before any thread starts: threads inherit the mask, and only the
	 * signalfd may see these signals. */
	loop_signals(&mask);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	memset(dm, 0, sizeof(*dm));
	dm->opts = *o;
	dm->cfg = cfg;
	dumps__init(dm);
	dm->loop.epfd = dm->loop.sigfd = dm->loop.tickfd = dm->loop.freezefd = -1;
	dm->started = fr_boottime_ns();
	host_identity(dm);

	e = prepare_output(dm);
	if (e)
		return e;
	e = privs__lock_memory();
	if (e)
		fr_warn("failed to lock memory (mlockall): %s; a dump under memory pressure may "
			"stall on page faults, ignoring", strerror(-e));
	e = privs__set_oom_score_adj(cfg->oom_score_adj, &dm->oom_score_adj);
	if (e)
		fr_warn("failed to set 'oom_score_adj' to %d: %s; it stays %d, ignoring",
			cfg->oom_score_adj, strerror(-e), dm->oom_score_adj);
	dm->loop.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (dm->loop.epfd < 0) {
		e = -errno;
		fr_err("failed to create epoll: %s", strerror(-e));
		return e;
	}
	dm->drain = drain__new(cfg->memory_bytes, cfg->window_ns);
	if (!dm->drain) {
		e = -errno;
		fr_err("failed to reserve %" PRIu64 " bytes for the window: %s",
		       cfg->memory_bytes, strerror(-e));
		return e;
	}
	e = setup_triggers(dm);
	if (!e)
		e = pressure__init(&dm->pressure, dm->cfg, dm->loop.epfd, FR_EV_TAG_PSI);
	if (!e)
		e = memhist__init(&dm->memhist, dm->cfg);
	if (e) {
		if (e == -ENOMEM)
			fr_err("failed to set up triggers: %s", strerror(-e));
		return e;
	}
	dm->control = control__new(cfg->control_socket, err, sizeof(err));
	if (!dm->control) {
		e = -errno;
		fr_err("%s", err);
		return e;
	}
	t = fr_boottime_ns();
	dm->startup.before_bpf_ns = t - dm->started;
	dm->sampler = sampler__open(&so, err, sizeof(err));
	if (!dm->sampler) {
		e = -errno;
		fr_err("%s", err);
		return e;
	}
	sampler__times(dm->sampler, &dm->startup.bpf);
	t = fr_boottime_ns();
	if (so.unwind_rows && !so.no_kernel_tables && !sampler__kernel_tables(dm->sampler))
		fr_info("the kernel has no VMA iterator (6.7+): a new process waits for the "
			"daemon's unwind table, ignoring");
	else if (so.unwind_rows && so.no_kernel_tables)
		fr_info("unwind_kernel_tables = false: a new process waits for the daemon's "
			"unwind table");
	/* Capabilities are a thread's own: each worker drops them as it
	 * starts, as the main thread does before "ready" (the workers read
	 * what other users control). The sampler's thread that loads the
	 * programs after "ready" keeps them until it ends: it reads only our
	 * BPF object. */
	worker__set_thread_init(thread_drop_privileges, dm);
	e = sampler__stall_sums(dm->sampler);
	stallsum__init(&dm->stallsum, e < 0 ? -1 : e);
	dm->symcache = symcache__new();
	if (dm->symcache)
		symcache__set_budget(dm->symcache, dm->cfg->cache_bytes);
	dm->procinfo = dm->symcache ? procinfo__new(drain__tables(dm->drain)->procs,
						     dm->symcache, FR_PROCINFO_QUEUE,
						     cfg->privacy_cmdline ? 0 : FR_META_NO_CMDLINE) : NULL;
	if (dm->procinfo)
		procinfo__set_timeout(dm->procinfo, cfg->resolve_timeout_ns);
	if (!dm->procinfo) {
		e = -errno;
		fr_err("failed to start the /proc reader: %s", strerror(-e));
		return e;
	}
	e = setup_unwinder(dm);
	if (e)
		return e;
	drain__set_hooks(dm->drain, &(struct drain_hooks){
		.ctx = dm, .proc = hook_proc, .fork = hook_fork, .stack = hook_stack,
		.stack_gone = hook_stack_gone,
		.oom = hook_oom, .no_table = hook_no_table, .memcg_path = hook_memcg_path,
		.finish = hook_finish, .exit_maps = hook_exit_maps });
	dm->rb = ringbuf__new(sampler__ring_fd(dm->sampler));
	dm->dumper = dm->rb ? dumper__new(dm->drain, dm->sampler, dm->symcache, dm->procinfo) : NULL;
	if (dm->dumper) {
		dumper__set_names_budget(dm->dumper, dm->cfg->memory_bytes / FR_NAMES_SHARE);
		dumper__set_python(dm->dumper, dm->pycache);
	}
	if (!dm->rb || !dm->dumper) {
		e = -errno;
		fr_err("failed to set up the ring buffer consumer: %s", strerror(-e));
		return e;
	}
	e = dumper__nice_error(dm->dumper);
	if (e)
		fr_warn("failed to set the priority of 'the dump thread': %s, ignoring", strerror(-e));
	dm->startup.workers_ns = fr_boottime_ns() - t;
	t = fr_boottime_ns();
	e = sampler__list_tasks(dm->sampler, scan_task, dm);
	if (e)
		fr_warn("failed to scan live processes: %s, ignoring", strerror(-e));
	procinfo__kick(dm->procinfo);
	dm->startup.scan_ns = fr_boottime_ns() - t;
	e = setup_loop(dm);
	if (e) {
		fr_err("failed to set up the event loop: %s", strerror(-e));
		return e;
	}
	e = drop_privileges(dm);
	if (e)
		return e;
	fr_info("sampling %d CPUs at %u Hz (%s), window %" PRIu64 " ms, memory %" PRIu64
		" MiB (%" PRIu64 " MiB reserved), ring %zu KiB, %zu psi trigger(s)%s, control "
		"socket '%s', dumps to '%s'; ready",
		sampler__ncpus(dm->sampler), cfg->frequency, sampler__source(dm->sampler),
		cfg->window_ns / FR_NSEC_PER_MSEC, cfg->memory_bytes >> 20,
		drain__budget(dm->drain) >> 20, sampler__ring_bytes(dm->sampler) >> 10,
		dm->pressure.npsi, dm->trig.has_oom ? ", oom trigger" : "", cfg->control_socket,
		daemon_output_dir(dm));
	log_startup(dm);
	/* The rest of the programs load now, off the CPUs the start-up used. */
	sampler__start_late(dm->sampler);
	e = notify("READY=1");
	if (e)
		fr_warn("failed to notify '%s': %s, ignoring", getenv("NOTIFY_SOCKET"), strerror(-e));
	return 0;
}

/* Wait for the dump in flight; then write a plan still collecting, so that
 * a trigger that already fired is not lost by stopping. */
static void finish_dumps(struct daemon *dm)
{
	for (int round = 0; round < 2; round++) {
		if (!dumper__busy(dm->dumper)) {
			planner__freeze_now(&dm->planner, fr_boottime_ns());
			dumps__try_freeze(dm);
		}
		while (dumper__busy(dm->dumper)) {
			struct pollfd pfd = { .fd = dumper__fd(dm->dumper), .events = POLLIN };

			if (poll(&pfd, 1, 100) > 0)
				dumps__dump_done(dm);
		}
	}
	dumps__abort(dm);
}

void daemon__fini(struct daemon *dm)
{
	if (dm->dumper && dm->drain && dm->rb)
		finish_dumps(dm);
	ondump__kill_all(&dm->ondump);
	dumper__free(dm->dumper);
	dm->dumper = NULL;	/* nothing below may reach it through a hook */
	ringbuf__free(dm->rb);
	/* The worker uses the unwinder, which uses the sampler's maps. */
	procinfo__free(dm->procinfo);
	attacher__free(dm->attacher);
	pycache__free(dm->pycache);
	unwinder__free(dm->unwinder);
	sampler__close(dm->sampler);
	control__free(dm->control);
	pressure__fini(&dm->pressure);
	memhist__fini(&dm->memhist);
	stallsum__fini(&dm->stallsum);
	trigger__fini(&dm->trig.oom);
	trigger__fini(&dm->trig.command);
	trigger__fini(&dm->trig.signal);
	drain__free(dm->drain);
	symcache__free(dm->symcache);
	if (dm->loop.freezefd >= 0)
		close(dm->loop.freezefd);
	if (dm->loop.epfd >= 0)
		close(dm->loop.epfd);
	if (dm->loop.tickfd >= 0)
		close(dm->loop.tickfd);
	if (dm->loop.sigfd >= 0)
		close(dm->loop.sigfd);
	config__free(dm->cfg);
}

/* ----------------------------------------------------------------- reload */

static bool triggers_same(const struct fr_config *a, const struct fr_config *b)
{
	if (a->ntriggers != b->ntriggers)
		return false;
	for (size_t i = 0; i < a->ntriggers; i++) {
		const struct fr_trigger_conf *x = &a->triggers[i], *y = &b->triggers[i];

		if (strcmp(x->name, y->name) || x->type != y->type || x->resource != y->resource ||
		    x->kind != y->kind || x->stall_ns != y->stall_ns || x->window_ns != y->window_ns ||
		    strcmp(x->cgroup ? x->cgroup : "", y->cgroup ? y->cgroup : ""))
			return false;
	}
	return true;
}

/* pre, post, cooldown and max_per_hour of running psi triggers change live. */
static void update_psi_policies(struct daemon *dm, const struct fr_config *n)
{
	for (size_t i = 0; i < dm->pressure.npsi; i++) {
		struct trigger *t = &dm->pressure.psi[i].trig;

		for (size_t k = 0; k < n->ntriggers; k++) {
			const struct fr_trigger_conf *c = &n->triggers[k];
			struct trigger_policy pol = policy_of(c);

			if (c->type != FR_TRIG_PSI || strcmp(c->name, t->name))
				continue;
			if (trigger__set_policy(t, &pol))
				fr_warn("failed to change the policy of trigger '%s': %s, ignoring",
					t->name, strerror(ENOMEM));
		}
	}
}

/*
 * check_new_output() - the output directory of reloaded @n, checked as at
 * start (outdir__open(): it and every parent safe): an unsafe new one is
 * refused and the current one kept; an unsafe current one is reported
 * (each dump refuses it too, until it is mended).
 */
static void check_new_output(struct daemon *dm, struct fr_config *n)
{
	struct outdir_opts oo = { .group = n->group != NULL, .gid = n->group_gid };
	const char *dir = dm->opts.output_dir ? dm->opts.output_dir : n->directory;
	char err[512], *keep;
	int fd;

	fd = outdir__open(dir, &oo, err, sizeof(err));
	if (fd >= 0) {
		close(fd);
		return;
	}
	if (dm->opts.output_dir || !strcmp(n->directory, dm->cfg->directory)) {
		fr_err("%s", err);
		return;
	}
	keep = strdup(dm->cfg->directory);
	if (!keep) {
		fr_err("%s", err);
		return;
	}
	fr_err("%s; keeping '%s'", err, keep);
	free(n->directory);
	n->directory = keep;
}

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
	if (!triggers_same(dm->cfg, n) || strcmp(n->control_socket, dm->cfg->control_socket))
		fr_warn("changes to psi triggers (type, resource, kind, stall, window, cgroup) "
			"and to the control socket need a restart; the running ones stay, ignoring");
	if (n->cache_bytes != dm->cfg->cache_bytes)
		symcache__set_budget(dm->symcache, n->cache_bytes);
	if (n->unwind_bytes != dm->cfg->unwind_bytes) {
		fr_warn("unwind_memory = %" PRIu64 " needs a restart; keeping the running rows, ignoring",
			n->unwind_bytes);
		n->unwind_bytes = dm->cfg->unwind_bytes;
	}
	if (n->python != dm->cfg->python) {
		fr_warn("python needs a restart; keeping the running setting, ignoring");
		n->python = dm->cfg->python;
	}
	if (n->unwind_kernel_tables != dm->cfg->unwind_kernel_tables) {
		fr_warn("unwind_kernel_tables needs a restart; keeping the running programs, ignoring");
		n->unwind_kernel_tables = dm->cfg->unwind_kernel_tables;
	}
	if (n->oom_score_adj != dm->cfg->oom_score_adj) {
		e = privs__set_oom_score_adj(n->oom_score_adj, &dm->oom_score_adj);
		if (e)
			fr_warn("failed to set 'oom_score_adj' to %d: %s; it stays %d, ignoring",
				n->oom_score_adj, strerror(-e), dm->oom_score_adj);
	}
	if (n->ring_bytes != dm->cfg->ring_bytes) {
		fr_warn("ring = %" PRIu64 " needs a restart; keeping the running ring, ignoring",
			n->ring_bytes);
		n->ring_bytes = dm->cfg->ring_bytes;
	}
	if (n->rss_ledger != dm->cfg->rss_ledger || n->rss_step != dm->cfg->rss_step ||
	    n->rss_step_pct != dm->cfg->rss_step_pct || n->rss_max_age_ns != dm->cfg->rss_max_age_ns) {
		/* The BPF side took them as read-only data at load. */
		fr_warn("[memory] rss_ledger, rss_step, rss_step_percent and rss_max_age need a restart; "
			"the running ledger stays, ignoring");
		n->rss_ledger = dm->cfg->rss_ledger;
		n->rss_step = dm->cfg->rss_step;
		n->rss_step_pct = dm->cfg->rss_step_pct;
		n->rss_max_age_ns = dm->cfg->rss_max_age_ns;
	}
	if (n->stalls != dm->cfg->stalls || n->min_stall_ns != dm->cfg->min_stall_ns ||
	    n->offcpu != dm->cfg->offcpu || n->min_block_ns != dm->cfg->min_block_ns ||
	    n->offcpu_sleep != dm->cfg->offcpu_sleep) {
		/* Read-only data of the BPF side, and which programs are loaded. */
		fr_warn("[stalls] stalls, min_stall, offcpu, min_block and offcpu_sleep need a restart; "
			"the running ones stay, ignoring");
		n->stalls = dm->cfg->stalls;
		n->min_stall_ns = dm->cfg->min_stall_ns;
		n->offcpu = dm->cfg->offcpu;
		n->min_block_ns = dm->cfg->min_block_ns;
		n->offcpu_sleep = dm->cfg->offcpu_sleep;
	}
	dm->memhist.max = n->memory_cgroups;
	if (!dm->cfg->group && n->group) {
		/* CAP_CHOWN was dropped at start-up: dumps could not be given away. */
		fr_warn("[output] group = %s needs a restart; dumps stay root-only, ignoring",
			n->group);
		free(n->group);
		n->group = NULL;
	}
	check_new_output(dm, n);
	update_psi_policies(dm, n);
	procinfo__set_what(dm->procinfo, n->privacy_cmdline ? 0 : FR_META_NO_CMDLINE);
	procinfo__set_timeout(dm->procinfo, n->resolve_timeout_ns);
	window__set_span(drain__tables(dm->drain)->win, n->window_ns);
	config__free(dm->cfg);
	dm->cfg = n;
	planner__set_window(&dm->planner, n->window_ns);
	if (setup_triggers(dm))
		fr_err("failed to apply the signal and oom trigger policies, ignoring");
	fr_info("config reloaded from '%s': window %" PRIu64 " ms, %u Hz, dumps to '%s'",
		dm->opts.config_path ? dm->opts.config_path : "(defaults)",
		n->window_ns / FR_NSEC_PER_MSEC, n->frequency, daemon_output_dir(dm));
}

static void on_signal(struct daemon *dm)
{
	struct signalfd_siginfo si;
	struct trigger_fire f;

	while (read(dm->loop.sigfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGUSR1:
			trigger_signal__fire(&si, fr_boottime_ns(), &f);
			snprintf(f.name, sizeof(f.name), "%s", dm->trig.signal.name);
			dumps__fire(dm, &dm->trig.signal, &f, 0);
			break;
		case SIGHUP:
			reload(dm);
			break;
		case SIGTERM:
		case SIGINT:
			fr_info("%s received, stopping", strsignal(si.ssi_signo));
			dm->loop.stopping = true;
			break;
		}
	}
}

/* Pump the drain, then act on fires raised inside it (OOM). */
static void pump(struct daemon *dm)
{
	int r = drain__pump(dm->drain, dm->rb);

	if (r < 0)
		fr_err("failed to drain the BPF ring: %s", strerror(-r));
	procinfo__kick(dm->procinfo);	/* the /proc reads this batch asked for */
	for (uint32_t i = 0; i < dm->trig.nqueued; i++)
		dumps__fire(dm, &dm->trig.oom, &dm->trig.queued[i], 0);
	dm->trig.nqueued = 0;
}

/* A psi trigger's fd woke the loop: plan what fired. */
static void on_pressure(struct daemon *dm, size_t idx, uint32_t revents)
{
	struct trigger_fire f;
	struct trigger *t = pressure__event(&dm->pressure, idx, revents, &f);

	if (t)
		dumps__fire(dm, t, &f, 0);
}

/*
 * Once a second: drop outdated unwind tables, and have the attacher attach
 * anew a few processes whose tables name a file whose rows went while it
 * was cold and that a walk came to since (no sample asks for that: the
 * walk there goes by frame pointer with a table that is current).
 */
static void unwind_tick(struct daemon *dm)
{
	struct unwind_want want[8];
	unsigned n;

	unwinder__gc(dm->unwinder);
	n = unwinder__wanted(dm->unwinder, want, FR_ARRAY_SIZE(want));
	for (unsigned i = 0; i < n && dm->attacher; i++)
		attacher__request(dm->attacher, want[i].pid, want[i].start);
}

static void on_tick(struct daemon *dm)
{
	uint64_t n;
	int e;

	if (read(dm->loop.tickfd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		fr_warn("failed to read timer: %s, ignoring", strerror(errno));
	pump(dm);
	dumper__tick(dm->dumper);
	if (++dm->loop.ticks % FR_PRESSURE_TICKS)
		return;
	/* Once a second. */
	pressure__tick(&dm->pressure, dm->drain);
	memhist__tick(&dm->memhist, dm->drain);
	e = stallsum__tick(&dm->stallsum, dm->drain, fr_boottime_ns());
	if (e)
		fr_warn("failed to read the stall sums: %s, ignoring", strerror(-e));
	control__expire(dm->control, fr_boottime_ns());
	ondump__expire(&dm->ondump, fr_boottime_ns());
	history__records(&dm->history, drain__stats(dm->drain)->records, fr_boottime_ns());
	if (dm->unwinder)
		unwind_tick(dm);
	symcache__trim(dm->symcache);
}

static void on_freeze(struct daemon *dm)
{
	uint64_t n;

	if (read(dm->loop.freezefd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		fr_warn("failed to read the freeze timer: %s, ignoring", strerror(errno));
	pump(dm);
	dumps__try_freeze(dm);
}

static void on_accept(struct daemon *dm)
{
	int id, fd, err;

	while ((err = control__accept(dm->control, &id, &fd)) != -EAGAIN) {
		if (err == -EPERM)
			fr_warn("refused a control connection from a non-root peer");
		else if (err == -EBUSY)
			fr_warn("refused a control connection: too many clients");
		else if (err)
			break;
		else if (daemon_epoll_add(dm, fd, EPOLLIN, FR_EV_TAG_CLIENT | (uint64_t)id << 8))
			control__close(dm->control, id);
	}
}

static void on_client(struct daemon *dm, int id)
{
	struct control_req req;
	struct trigger_fire f = {};
	char *text;
	int r = control__read(dm->control, id, &req);

	if (r == 0)
		return;
	if (r < 0) {
		if (r == -EINVAL || r == -EMSGSIZE)
			control__reply(dm->control, id, r == -EINVAL ?
				       "error unknown request; accepted: 'snapshot [REASON]', 'status', 'status json'\n" :
				       "error request too long\n");
		control__close(dm->control, id);
		return;
	}
	if (req.verb == FR_CTL_STATUS) {
		text = status__render(dm, req.json);
		control__reply(dm->control, id, text ? text : "error out of memory\n");
		free(text);
		control__close(dm->control, id);
		return;
	}
	snprintf(f.name, sizeof(f.name), "command");
	snprintf(f.type, sizeof(f.type), "command");
	snprintf(f.reason, sizeof(f.reason), "flightrec snapshot%s%.200s",
		 *req.reason ? ": " : "", req.reason);
	f.ts = fr_boottime_ns();
	dumps__fire(dm, &dm->trig.command, &f, id);
}

/*
 * daemon__run() - serve until SIGTERM or SIGINT. Returns 0, or -errno when
 * the loop itself fails.
 */
int daemon__run(struct daemon *dm)
{
	struct epoll_event evs[16];

	while (!dm->loop.stopping) {
		int n = epoll_wait(dm->loop.epfd, evs, FR_ARRAY_SIZE(evs), -1);

		if (n < 0) {
			int err = -errno;

			if (err == -EINTR)
				continue;
			fr_err("failed to wait for events: %s", strerror(-err));
			return err;
		}
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;

			switch (tag & 0xff) {
			case FR_EV_TAG_SIGNAL:
				on_signal(dm);
				break;
			case FR_EV_TAG_TICK:
				on_tick(dm);
				break;
			case FR_EV_TAG_RING:
				pump(dm);
				break;
			case FR_EV_TAG_DUMP:
				dumps__dump_done(dm);
				break;
			case FR_EV_TAG_FREEZE:
				on_freeze(dm);
				break;
			case FR_EV_TAG_CONTROL:
				on_accept(dm);
				break;
			case FR_EV_TAG_CLIENT:
				on_client(dm, (int)(tag >> 8));
				break;
			case FR_EV_TAG_PSI:
				on_pressure(dm, tag >> 8, evs[i].events);
				break;
			case FR_EV_TAG_HOOK:
				dumps__hook_done(dm, (int)(tag >> 8));
				break;
			case FR_EV_TAG_BPF:
				on_late_bpf(dm);
				break;
			}
		}
	}
	return 0;
}
