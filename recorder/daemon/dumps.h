/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dumps.h - the daemon's side of dumps (dumps.c).
 */
#ifndef FR_DAEMON_DUMPS_H
#define FR_DAEMON_DUMPS_H

#include <stdbool.h>

#include "state.h"

void dumps__init(struct daemon *dm);
void dumps__fire(struct daemon *dm, struct trigger *t, const struct trigger_fire *f,
		int waiter);
void dumps__try_freeze(struct daemon *dm);
void dumps__dump_done(struct daemon *dm);
void dumps__abort(struct daemon *dm);

/* the on_dump commands, in dumps.c */
void dumps__hook_done(struct daemon *dm, int slot);

#endif /* FR_DAEMON_DUMPS_H */
