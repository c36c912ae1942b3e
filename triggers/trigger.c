// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * trigger.c - trigger policy: cooldown and max_per_hour. See trigger.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trigger.h"

/*
 * trigger__init() - a trigger named @name of @type with policy @pol.
 * Returns 0 or -ENOMEM (the max_per_hour ring is reserved here).
 */
int trigger__init(struct trigger *t, const char *name, const char *type,
		  const struct trigger_policy *pol)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(t->type, sizeof(t->type), "%s", type);
	t->pol = *pol;
	if (pol->max_per_hour) {
		t->times = calloc(pol->max_per_hour, sizeof(*t->times));
		if (!t->times)
			return -ENOMEM;
	}
	return 0;
}

/*
 * trigger__set_policy() - give @t policy @pol, keeping what it did: its
 * counts, its last firing and, up to the new max_per_hour, its most recent
 * admission times, so that a reload never resets the hourly accounting. A
 * trigger that had no limit kept no times: a limit it gets counts from now.
 * Returns 0, or -ENOMEM with @t unchanged.
 */
int trigger__set_policy(struct trigger *t, const struct trigger_policy *pol)
{
	uint64_t *times = NULL;
	uint32_t n = 0;

	if (pol->max_per_hour) {
		times = calloc(pol->max_per_hour, sizeof(*times));
		if (!times)
			return -ENOMEM;
		n = t->ntimes < pol->max_per_hour ? t->ntimes : pol->max_per_hour;
		/* The newest n, oldest first: the ring's newest is just before head. */
		for (uint32_t i = 0; i < n; i++) {
			uint32_t k = (t->head + t->pol.max_per_hour - n + i) % t->pol.max_per_hour;

			times[i] = t->times[k];
		}
	}
	free(t->times);
	t->times = times;
	t->ntimes = n;
	t->head = pol->max_per_hour ? n % pol->max_per_hour : 0;
	t->pol = *pol;
	return 0;
}

void trigger__fini(struct trigger *t)
{
	if (!t)
		return;
	free(t->times);
	t->times = NULL;
}

/*
 * trigger__admit() - may @f, a firing of @t, make a dump? Refuses within
 * the cooldown after the last admitted firing, and when max_per_hour
 * firings were admitted in the last hour. Records admitted and refused
 * firings. Returns FR_ADMIT_OK or why not.
 */
enum trigger_admit trigger__admit(struct trigger *t, const struct trigger_fire *f)
{
	uint64_t now = f->ts;

	if (t->last_fired && t->pol.cooldown_ns && now - t->last_fired < t->pol.cooldown_ns) {
		t->suppressed++;
		return FR_ADMIT_COOLDOWN;
	}
	if (t->pol.max_per_hour) {
		/* The ring holds the last max_per_hour admissions, oldest at head. */
		if (t->ntimes == t->pol.max_per_hour && now - t->times[t->head] < FR_HOUR_NS) {
			t->suppressed++;
			return FR_ADMIT_RATE;
		}
		t->times[t->head] = now;
		t->head = (t->head + 1) % t->pol.max_per_hour;
		if (t->ntimes < t->pol.max_per_hour)
			t->ntimes++;
	}
	t->fired++;
	t->last_fired = now;
	snprintf(t->last_reason, sizeof(t->last_reason), "%s", f->reason);
	return FR_ADMIT_OK;
}

const char *trigger_admit_name(enum trigger_admit a)
{
	switch (a) {
	case FR_ADMIT_OK:
		return "admitted";
	case FR_ADMIT_COOLDOWN:
		return "in cooldown";
	case FR_ADMIT_RATE:
		return "over max_per_hour";
	}
	return "?";
}
