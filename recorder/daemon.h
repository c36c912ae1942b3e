/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon.h - flightrecd's event loop: the drain tick, signals, triggers,
 * dumps in flight. One thread; the dump thread reports back through an fd.
 */
#ifndef FR_DAEMON_H
#define FR_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "../conf/config.h"
#include "../triggers/trigger.h"
#include "drain.h"
#include "dumper.h"
#include "procinfo.h"
#include "ringbuf.h"
#include "sampler.h"

#define FR_TICK_NS	(100 * 1000 * 1000ULL)	/* drain and age the window */

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
	int epfd;
	int sigfd;
	int tickfd;
	bool stopping;
	bool pending;			/* a trigger waits for the dump in flight */
	struct trigger_fire pending_fire;
	uint64_t merged;		/* fires merged into the pending one */
	uint64_t dumps;
	uint64_t dump_failures;
	char host[256];
	char kernel[256];
	char boot_id[64];
};

int daemon__init(struct daemon *dm, const struct daemon_opts *o, struct fr_config *cfg);
int daemon__run(struct daemon *dm);
void daemon__fini(struct daemon *dm);

#endif /* FR_DAEMON_H */
