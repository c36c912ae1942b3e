/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pressure.h - PSI in the daemon: the psi triggers (armed, confirmed,
 * re-armed with backoff when their cgroup goes away, never spinning) and
 * the pressure history (every second each known pressure file is read into
 * the window). One owner, struct pressure_set; a confirmed event is handed
 * back to the caller as a firing, which plans it.
 */
#ifndef FR_PRESSURE_H
#define FR_PRESSURE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "psi.h"
#include "trigger.h"
#include "drain.h"

/* One [trigger] of type psi. */
struct psi_watch {
	struct trigger trig;
	struct psi_trigger *psi;
	char source[PATH_MAX];		/* "" for /proc/pressure, else the cgroup */
	int resource;
	int kind;
	bool in_epoll;
	bool warned;			/* logged the current outage */
};

/* A pressure file read into the window every second. */
struct pressure_src {
	char source[PATH_MAX];
	int resource;
	int fd;				/* -1 while missing */
};

struct pressure_set {
	struct psi_watch *psi;
	size_t npsi;
	struct pressure_src *srcs;
	size_t nsrcs;
	int epfd;			/* the loop's epoll, where armed triggers wait */
	uint64_t tag;			/* their epoll tag: tag | index << 8 */
};

int pressure__init(struct pressure_set *ps, const struct fr_config *cfg, int epfd, uint64_t tag);
void pressure__fini(struct pressure_set *ps);
void pressure__tick(struct pressure_set *ps, struct drain *drain);
const struct psi_watch *pressure__watch(const struct pressure_set *ps, size_t i);
struct trigger *pressure__event(struct pressure_set *ps, size_t idx, uint32_t revents,
				struct trigger_fire *f);

#endif /* FR_PRESSURE_H */
