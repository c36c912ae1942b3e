/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trigger.h - what asks for a dump, behind one small interface.
 *
 * A trigger source (signal.c, psi.c, control.c, and the drain's OOM hook)
 * turns something that happened into a struct trigger_fire. Every named
 * trigger has a policy:
 * how much history before it (pre) and after it (post) the dump covers,
 * and how often it may fire (cooldown, max_per_hour). trigger__admit()
 * applies the policy; the daemon decides what an admitted fire does.
 */
#ifndef FR_TRIGGER_H
#define FR_TRIGGER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/signalfd.h>

#define FR_TRIGGER_TEXT		256
#define FR_TRIGGER_NAME		64
#define FR_HOUR_NS		(3600ULL * 1000 * 1000 * 1000)

struct trigger_fire {
	char name[FR_TRIGGER_NAME];	/* the trigger's name, e.g. "signal" */
	char type[16];			/* signal | psi | oom | command */
	char reason[FR_TRIGGER_TEXT];	/* human summary */
	char detail[FR_TRIGGER_TEXT];	/* source-specific, e.g. the PSI line */
	uint64_t ts;			/* CLOCK_BOOTTIME ns when it fired */
	uint32_t victim_pid;		/* oom: the victim incarnation */
	uint64_t victim_start;
};

struct trigger_policy {
	uint64_t pre_ns;		/* history kept before the trigger */
	uint64_t post_ns;		/* recording after it, before the freeze */
	uint64_t cooldown_ns;		/* ignore it for this long after a firing */
	uint32_t max_per_hour;		/* 0: no limit */
};

enum trigger_admit {
	FR_ADMIT_OK = 0,
	FR_ADMIT_COOLDOWN,
	FR_ADMIT_RATE,
};

/* A named trigger's policy and what it did. */
struct trigger {
	char name[FR_TRIGGER_NAME];
	char type[16];
	char desc[128];			/* e.g. "memory some 200ms/2s /proc/pressure/memory" */
	struct trigger_policy pol;
	uint64_t fired;			/* admitted */
	uint64_t suppressed;		/* refused by cooldown or max_per_hour */
	uint64_t last_fired;		/* CLOCK_BOOTTIME ns, 0: never */
	char last_reason[FR_TRIGGER_TEXT];
	uint64_t *times;		/* ring of admitted times in the last hour */
	uint32_t ntimes;
	uint32_t head;
};

int trigger__init(struct trigger *t, const char *name, const char *type,
		  const struct trigger_policy *pol);
int trigger__set_policy(struct trigger *t, const struct trigger_policy *pol);
void trigger__fini(struct trigger *t);
enum trigger_admit trigger__admit(struct trigger *t, const struct trigger_fire *f);
const char *trigger_admit_name(enum trigger_admit a);

int trigger_signal__fire(const struct signalfd_siginfo *si, uint64_t now,
			 struct trigger_fire *out);

#endif /* FR_TRIGGER_H */
