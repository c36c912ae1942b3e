/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon.h - flightrecd's event loop and the parts it orchestrates, each
 * with one owner:
 *
 *   state.h     struct daemon, the state they share
 *   daemon.c    set-up, the epoll loop, signals, config reload, triggers
 *   dumps.c     the daemon's side of dumps: drives the planner (planner.h:
 *               merging, pre/post, the freeze, waiting clients), starts
 *               each dump and handles a written one (retention, on_dump)
 *   planner.c   the trigger policy: which firings a dump answers, when
 *               it freezes (no I/O: unit-tested alone)
 *   ondump.c    the [output] on_dump commands: spawn, reap, expire
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

#include "state.h"

/* daemon__init() - set @dm up from @cfg (owned from then on) and @o. 0 or -errno. */
int daemon__init(struct daemon *dm, const struct daemon_opts *o, struct fr_config *cfg);
/* daemon__run() - the event loop, until SIGTERM or SIGINT. 0 or -errno. */
int daemon__run(struct daemon *dm);
/* daemon__fini() - release what daemon__init() set up; @dm may be half set. */
void daemon__fini(struct daemon *dm);

#endif /* FR_DAEMON_H */
