/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * state.h - struct daemon: flightrecd's state, which the daemon's modules
 * share (daemon.h lists them). A header of its own, apart from any one
 * module's, so that no module reaches another through it
 * (tools/check-cycles.py counts a header with its .c file).
 */
#ifndef FR_DAEMON_STATE_H
#define FR_DAEMON_STATE_H

#include <errno.h>
#include <limits.h>
#include <sys/epoll.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "control.h"
#include "psi.h"
#include "trigger.h"
#include "drain.h"
#include "dumper.h"
#include "history.h"
#include "ondump.h"
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

/* Who and where this daemon runs: read once at start, stamped on each dump. */
struct daemon_ident {
	char host[256];
	char kernel[256];
	char boot_id[64];
	char caps[256];			/* capabilities kept after start-up */
};

/* The event loop: its epoll set and the fds only the loop reads. */
struct daemon_loop {
	int epfd;
	int sigfd;
	int tickfd;
	int freezefd;			/* the planner's freeze timer */
	uint64_t ticks;
	bool stopping;
};

/* The triggers the daemon fires itself (the psi ones are in pressure_set). */
struct daemon_triggers {
	struct trigger signal;		/* SIGUSR1 */
	struct trigger command;		/* flightrec snapshot */
	struct trigger oom;
	bool has_oom;			/* an [trigger] of type oom is configured */
	struct trigger_fire queued[FR_QUEUED_FIRES];	/* raised inside the drain */
	uint32_t nqueued;
};

/* Where the start-up's time went, each a duration in ns (status "startup"). */
struct daemon_startup {
	uint64_t before_bpf_ns;		/* from daemon__init() to the sampler's open */
	struct sampler_times bpf;	/* sampler__open() */
	uint64_t workers_ns;		/* the workers and the ring consumer */
	uint64_t scan_ns;		/* the task iterator's list of live processes */
	uint64_t scan_procs;
	uint64_t ready_ns;		/* from daemon__init() to "ready" */
	uint64_t late_ns;		/* from the sampler's open to the late programs' attach */
};

struct daemon {
	struct daemon_opts opts;
	struct fr_config *cfg;
	struct daemon_ident ident;
	struct daemon_loop loop;
	uint64_t started;
	struct daemon_startup startup;

	/* The recorder, in data-flow order. */
	struct sampler *sampler;
	struct ringbuf *rb;
	struct drain *drain;
	struct symcache *symcache;
	struct procinfo *procinfo;
	struct unwinder *unwinder;	/* NULL: unwind_memory = 0 */
	struct attacher *attacher;	/* first tables; NULL with unwinder */
	struct pycache *pycache;	/* Python code objects' names; NULL with unwinder */
	struct dumper *dumper;
	struct control *control;
	int oom_score_adj;		/* our own, in effect since start or the last reload */

	/* Triggers. */
	struct daemon_triggers trig;
	struct pressure_set pressure;
	struct memhist memhist;		/* the memory history, once a second */
	struct stallsum stallsum;	/* the stall sums, once a second */

	/* Dumps. */
	struct planner planner;
	struct ondump ondump;		/* on_dump commands running */
	struct dump_history history;
};

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

	return epoll_ctl(dm->loop.epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
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
	FR_EV_TAG_BPF,		/* the late BPF programs are attached */
};

#endif /* FR_DAEMON_STATE_H */
