// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * dumps.c - the daemon's side of dumps: it drives the planner (planner.h)
 * with the window, the freeze timer, the dump thread and the control
 * clients, starts each dump (with its META, TRIG and LOSS from dumpmeta.c),
 * and handles a finished one: its log line, its place in the history,
 * retention and on_dump hooks.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dumpmeta.h"
#include "dumps.h"
#include "log.h"
#include "retention.h"
#include "util.h"

#define FR_SYNC_TIMEOUT_NS	(1000 * 1000 * 1000ULL)


static void arm_freeze(struct daemon *dm, uint64_t at)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = at / FR_NSEC_PER_SEC, .tv_nsec = at % FR_NSEC_PER_SEC },
	};

	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	if (timerfd_settime(dm->loop.freezefd, TFD_TIMER_ABSTIME, &its, NULL))
		fr_warn("failed to arm the freeze timer: %s, ignoring", strerror(errno));
}

/* ------------------------------------------------------ the planner's ops */

static uint64_t op_lower_bound(void *ctx, uint64_t ts)
{
	struct daemon *dm = ctx;

	return window__lower_bound(drain__tables(dm->drain)->win, ts);
}

static void op_pin(void *ctx, uint64_t index)
{
	struct daemon *dm = ctx;
	struct window *w = drain__tables(dm->drain)->win;

	if (index == FR_NO_PIN)
		window__unpin(w);
	else
		window__pin(w, index);
}

static void op_arm(void *ctx, uint64_t at)
{
	arm_freeze(ctx, at);
}

static bool op_busy(void *ctx)
{
	struct daemon *dm = ctx;

	return dumper__busy(dm->dumper);
}

static void op_reply(void *ctx, int id, const char *text)
{
	struct daemon *dm = ctx;

	if (!control__alive(dm->control, id))
		return;
	if (control__reply(dm->control, id, text))
		fr_debug("failed to reply to control client %d, ignoring", id);
	control__close(dm->control, id);
}

static int op_start(void *ctx, const struct dump_plan *p, uint64_t *first);

/* dumps__init() - the planner, driven by this daemon's window, timer, dumper and clients. */
void dumps__init(struct daemon *dm)
{
	const struct planner_ops ops = {
		.ctx = dm, .lower_bound = op_lower_bound, .pin = op_pin, .arm = op_arm,
		.busy = op_busy, .start = op_start, .reply = op_reply,
	};

	planner__init(&dm->planner, &ops, dm->cfg->window_ns);
}

/*
 * dumps__fire() - trigger @t fired (@f): the planner's verdict, logged.
 * @waiter is a control client owed the dump's path, or 0.
 */
void dumps__fire(struct daemon *dm, struct trigger *t, const struct trigger_fire *f,
		int waiter)
{
	const struct dump_plan *p = planner__plan(&dm->planner);
	enum trigger_admit why;

	switch (planner__fire(&dm->planner, t, f, waiter, &why)) {
	case FR_PLAN_REFUSED:
		fr_info("trigger '%s' fired but is %s; ignoring: %s", t->name,
			trigger_admit_name(why), f->reason);
		return;
	case FR_PLAN_FULL:
		fr_warn("trigger '%s': too many triggers waiting for the next dump, ignoring",
			t->name);
		return;
	case FR_PLAN_NEXT:
		fr_info("trigger '%s' fired: %s (for the dump after the coming one)", t->name,
			f->reason);
		return;
	case FR_PLAN_STARTED:
	case FR_PLAN_MERGED:
		fr_info("trigger '%s' fired: %s%s", t->name, f->reason,
			p->nfires + p->merged > 1 ? " (merged into the coming dump)" : "");
		break;
	}
	dumps__try_freeze(dm);
}

/* ------------------------------------------------------------------ dumps */

/*
 * The planner's start: drain up to the plan's freeze, freeze its window
 * and hand it to the dump thread; *@first is the first window index it reads.
 */
static int op_start(void *ctx, const struct dump_plan *p, uint64_t *first)
{
	struct daemon *dm = ctx;
	const struct drain_tables *t = drain__tables(dm->drain);
	struct dump_request req = {};
	int err;

	err = drain__sync(dm->drain, dm->rb, p->freeze, FR_SYNC_TIMEOUT_NS);
	procinfo__kick(dm->procinfo);
	if (err)
		fr_warn("failed to drain up to the freeze: %s, dumping what was drained",
			strerror(-err));

	dump__init(&req.model);
	req.requested = p->fires[0].ts;
	req.first = window__lower_bound(t->win, p->start);
	req.last = window__lower_bound(t->win, p->freeze + 1);
	req.model.win = (struct fr_dump_window){
		.start = p->start, .end = p->freeze,
		.watermark = drain__watermark(dm->drain), .span = window__span(t->win),
	};
	req.dir = strdup(daemon_output_dir(dm));
	req.name_hint = strdup(p->fires[0].name);
	req.group = dm->cfg->group != NULL;
	req.gid = dm->cfg->group_gid;
	req.meta_what = dm->cfg->privacy_cmdline ? 0 : FR_META_NO_CMDLINE;
	req.resolve_timeout_ns = dm->cfg->resolve_timeout_ns;
	req.writer_flags = dm->opts.writer_flags;
	err = !req.dir || !req.name_hint ? -ENOMEM : 0;
	if (!err)
		err = dumpmeta__fill(dm, p, &req);
	if (err)
		goto fail;
	*first = req.first;
	req.frozen = fr_boottime_ns();
	drain__hold(dm->drain);
	fr_info("freezing %" PRIu64 " events for %u trigger(s): %s", req.last - req.first,
		p->nfires + (uint32_t)p->merged, p->fires[0].reason);
	err = dumper__start(dm->dumper, &req);
	if (err) {
		drain__release_hold(dm->drain);
		goto fail;
	}
	return 0;
fail:
	dump_request__free(&req);
	return err;
}

/*
 * dumps__try_freeze() - start the plan's dump if it is due (planner__try_freeze()).
 */
void dumps__try_freeze(struct daemon *dm)
{
	const struct dump_plan *p = planner__plan(&dm->planner);
	char reason[FR_TRIGGER_TEXT];
	int err;

	snprintf(reason, sizeof(reason), "%s", p->nfires ? p->fires[0].reason : "");
	err = planner__try_freeze(&dm->planner, fr_boottime_ns());
	if (err) {
		history__failed(&dm->history);
		fr_err("failed to start dump for '%s': %s", reason, strerror(-err));
	}
}

/* Keep the output directory within max_dumps and max_bytes. */
static void retain(struct daemon *dm, const char *path)
{
	struct retention_result res;
	char copy[PATH_MAX];
	int dirfd, err;

	if (!dm->cfg->max_dumps && !dm->cfg->max_bytes)
		return;
	dirfd = open(daemon_output_dir(dm), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dirfd < 0) {
		fr_warn("failed to open '%s' for retention: %s, ignoring", daemon_output_dir(dm),
			strerror(errno));
		return;
	}
	snprintf(copy, sizeof(copy), "%s", path);
	err = retention__apply(dirfd, dm->cfg->max_dumps, dm->cfg->max_bytes, basename(copy), &res);
	close(dirfd);
	if (err) {
		fr_warn("failed to list '%s' for retention: %s, ignoring", daemon_output_dir(dm),
			strerror(-err));
		return;
	}
	for (uint32_t i = 0; i < res.removed && i < FR_RETENTION_REPORT; i++)
		fr_info("removed old dump '%s/%s' (max_dumps %u, max_bytes %" PRIu64 ")",
			daemon_output_dir(dm), res.names[i], dm->cfg->max_dumps, dm->cfg->max_bytes);
	if (res.removed > FR_RETENTION_REPORT)
		fr_info("removed %u more old dumps", res.removed - FR_RETENTION_REPORT);
	if (res.err)
		fr_warn("failed to remove an old dump: %s, ignoring", strerror(-res.err));
}

/* [output] on_dump: ship the dump elsewhere, asynchronously. */
static void run_hook(struct daemon *dm, const char *path)
{
	char **argv = NULL;
	int argc, slot, err;

	if (!dm->cfg->on_dump)
		return;
	err = conf_split_command(dm->cfg->on_dump, &argv, &argc);
	if (!err)
		err = ondump__spawn(&dm->ondump, argv, path, dm->cfg->on_dump_timeout_ns, &slot);
	if (!err && daemon_epoll_add(dm, ondump__pidfd(&dm->ondump, slot), EPOLLIN,
				     FR_EV_TAG_HOOK | (uint64_t)slot << 8))
		err = -errno;
	if (err == -EBUSY)
		fr_warn("on_dump for '%s' skipped: %d hooks still running, ignoring", path,
			FR_ONDUMP_MAX);
	else if (err)
		fr_warn("failed to run on_dump '%s' for '%s': %s, ignoring", dm->cfg->on_dump,
			path, strerror(-err));
	else
		fr_debug("on_dump started for '%s'", path);
	conf_free_argv(argv);
}

/* dumps__hook_done() - an on_dump command ended: log how. */
void dumps__hook_done(struct daemon *dm, int slot)
{
	char path[256];
	uint64_t ns;
	bool killed;
	int st;

	snprintf(path, sizeof(path), "%s", dm->ondump.run[slot].path);
	if (ondump__reap(&dm->ondump, slot, &st, &ns, &killed))
		return;
	if (killed)
		fr_warn("on_dump for '%s' killed after its timeout of %.0f s, ignoring", path,
			dm->cfg->on_dump_timeout_ns / 1e9);
	else if (WIFEXITED(st) && !WEXITSTATUS(st))
		fr_info("on_dump for '%s' done in %.1f ms", path, ns / 1e6);
	else if (WIFEXITED(st))
		fr_warn("on_dump for '%s' failed with exit status %d, ignoring", path, WEXITSTATUS(st));
	else
		fr_warn("on_dump for '%s' killed by signal %d, ignoring", path,
			WIFSIGNALED(st) ? WTERMSIG(st) : -1);
}

/* log_phases() - where the dump's time went, one line after "dump written". */
static void log_phases(const struct dump_phases *ph)
{
	fr_info("dump took: freeze %.1f ms, /proc reads waited %.1f, namer waited %.1f, snapshot "
		"%.1f, references %.1f, names %.1f (%" PRIu64 " stacks named, %" PRIu64 " of them "
		"the daemon's own; the rest kept from before), lines %.1f (%" PRIu64 " frames looked "
		"up), encode and write %.1f, fsync and rename %.1f", ph->freeze / 1e6,
		ph->proc_wait / 1e6, ph->names_wait / 1e6, ph->snapshot / 1e6, ph->collect / 1e6,
		ph->names / 1e6, ph->stacks_named, ph->stacks_named_own, ph->lines / 1e6,
		ph->lines_looked_up, ph->write / 1e6, ph->commit / 1e6);
}

/*
 * dumps__dump_done() - the dump thread finished: tell the requesters, apply
 * retention, and freeze the next plan if it is due.
 */
void dumps__dump_done(struct daemon *dm)
{
	struct dump_result r;
	char reply[PATH_MAX + 600];

	if (dumper__finish(dm->dumper, &r))
		return;
	drain__release_hold(dm->drain);
	if (r.err) {
		history__failed(&dm->history);
		fr_err("%s", r.msg);
		snprintf(reply, sizeof(reply), "error %s\n", r.msg);
	} else {
		fr_info("dump written to '%s' (%" PRIu64 " events, %" PRIu64 " processes, %" PRIu64
			" stacks, %" PRIu64 " bytes, %.1f ms%s%s)", r.path, r.events, r.procs,
			r.stacks, r.bytes, r.elapsed_ns / 1e6, r.uring ? ", io_uring" : ", pwrite",
			r.stale ? ", some events recycled while writing" : "");
		log_phases(&r.phases);
		snprintf(reply, sizeof(reply), "ok %s\n", r.path);
		history__written(&dm->history, r.path, r.bytes, r.events, r.triggers,
				 fr_boottime_ns());
		retain(dm, r.path);
		run_hook(dm, r.path);
	}
	planner__dump_done(&dm->planner, reply);
	if (!dm->loop.stopping)
		dumps__try_freeze(dm);
}

/* dumps__abort() - stopping: a plan that never froze answers its waiters. */
void dumps__abort(struct daemon *dm)
{
	planner__abort(&dm->planner, "error the daemon is stopping\n");
}
