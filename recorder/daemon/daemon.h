/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon.h - flightrecd's event loop and the parts it orchestrates, each
 * with one owner:
 *
 *   daemon.c    set-up, the epoll loop, signals, config reload, triggers
 *   plan.c      drives the planner (dump/planner.h: merging, pre/post,
 *               the freeze, waiting clients), builds META/TRIG/LOSS, and
 *               handles a written dump (retention, on_dump hooks)
 *   dumpmeta.c  a dump's META, TRIG and LOSS, at its freeze
 *   pressure.c  struct pressure_set: PSI triggers and the pressure history
 *   history.c   struct dump_history: dumps, recent dumps, record rate
 *   status.c    the control socket's "status" answer (reads the others)
 *
 * One thread runs all of this; the dump thread and the /proc worker report
 * back through fds and locks of their own modules.
 */
#ifndef FR_DAEMON_H
#define FR_DAEMON_H

#include <errno.h>
#include <limits.h>
#include <sys/epoll.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../conf/config.h"
#include "../../triggers/control.h"
#include "../../triggers/psi.h"
#include "../../triggers/trigger.h"
#include "drain.h"
#include "dumper.h"
#include "history.h"
#include "hooks.h"
#include "planner.h"
#include "memhist.h"
#include "pressure.h"
#include "procinfo.h"
#include "ringbuf.h"
#include "sampler.h"
#include "stallsum.h"

#define FR_TICK_NS		(100 * 1000 * 1000ULL)	/* drain and age the window */
#define FR_PRESSURE_TICKS	10			/* pressure history: every 1 s */
#define FR_QUEUED_FIRES		64	/* fires raised inside the drain, handled after it */

struct daemon_opts {
	const char *config_path;
	const char *output_dir;		/* overrides [output] directory */
	unsigned writer_flags;		/* FR_WRITER_* */
};

struct daemon {
	struct daemon_opts opts;
	struct fr_config *cfg;
	struct sampler *sampler;
	struct ringbuf *rb;
	struct drain *drain;
	struct dumper *dumper;
	struct symcache *symcache;
	struct procinfo *procinfo;
	struct unwinder *unwinder;	/* NULL: unwind_memory = 0 */
	int oom_score_adj;		/* our own, in effect since start or the last reload */
	struct attacher *attacher;	/* first tables; NULL with unwinder */
	struct control *control;
	int epfd;
	int sigfd;
	int tickfd;
	int freezefd;
	bool stopping;
	uint64_t started;
	uint64_t ticks;
	char host[256];
	char kernel[256];
	char boot_id[64];
	char caps[256];			/* capabilities kept after start-up */

	/* Triggers. */
	struct trigger signal_trig;
	struct trigger command_trig;
	struct trigger oom_trig;
	bool has_oom;
	struct pressure_set pressure;
	struct memhist memhist;		/* the memory history, once a second */
	struct stallsum stallsum;	/* the stall sums, once a second */
	struct trigger_fire queued[FR_QUEUED_FIRES];
	uint32_t nqueued;

	/* Dumps. */
	struct planner planner;
	struct hooks hooks;		/* on_dump commands running */
	struct dump_history history;
};

int daemon__init(struct daemon *dm, const struct daemon_opts *o, struct fr_config *cfg);
int daemon__run(struct daemon *dm);
void daemon__fini(struct daemon *dm);

/* plan.c */
void plan__init(struct daemon *dm);
void plan__fire(struct daemon *dm, struct trigger *t, const struct trigger_fire *f,
		int waiter);
void plan__try_freeze(struct daemon *dm);
void plan__dump_done(struct daemon *dm);
void plan__abort(struct daemon *dm);

/* hooks, in plan.c */
void plan__hook_done(struct daemon *dm, int slot);

/* dumpmeta.c */
int dumpmeta__fill(struct daemon *dm, const struct dump_plan *p, struct dump_request *req);

/* status.c */
char *status__render(struct daemon *dm, bool json);

/*
 * What the parts share, inline so that they call nothing back in daemon.c
 * (tools/check-cycles.py): the output directory, and adding an fd to the loop.
 */
static inline const char *daemon_output_dir(const struct daemon *dm)
{
	return dm->opts.output_dir ? dm->opts.output_dir : dm->cfg->directory;
}

/* daemon_epoll_add() - watch @fd for @events, reported with @tag. 0 or -errno. */
static inline int daemon_epoll_add(struct daemon *dm, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	return epoll_ctl(dm->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

enum {
	FR_EV_TAG_SIGNAL = 1,
	FR_EV_TAG_TICK,
	FR_EV_TAG_RING,
	FR_EV_TAG_DUMP,
	FR_EV_TAG_FREEZE,
	FR_EV_TAG_CONTROL,
	FR_EV_TAG_CLIENT,	/* | id << 8 */
	FR_EV_TAG_PSI,		/* | index << 8 */
	FR_EV_TAG_HOOK,		/* | slot << 8 */
};

#endif /* FR_DAEMON_H */
