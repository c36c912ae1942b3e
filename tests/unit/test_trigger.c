// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_trigger.c - trigger policy: cooldown, max_per_hour over a sliding
 * hour, and a policy change (a config reload) that keeps the trigger's
 * history instead of resetting it.
 */
#include <string.h>

#include "tap.h"
#include "trigger.h"

#define SEC	1000000000ULL

static enum trigger_admit fire(struct trigger *t, uint64_t ts)
{
	struct trigger_fire f = { .ts = ts };

	snprintf(f.reason, sizeof(f.reason), "at %llu s", (unsigned long long)(ts / SEC));
	return trigger__admit(t, &f);
}

static void test_cooldown(void)
{
	struct trigger t;

	trigger__init(&t, "psi", "psi", &(struct trigger_policy){ .cooldown_ns = 60 * SEC });
	is_int(fire(&t, 100 * SEC), FR_ADMIT_OK, "cooldown: the first firing is admitted");
	is_int(fire(&t, 159 * SEC), FR_ADMIT_COOLDOWN, "cooldown: one 59 s later is refused");
	is_int(fire(&t, 160 * SEC), FR_ADMIT_OK, "cooldown: one 60 s later is admitted");
	ok(t.fired == 2 && t.suppressed == 1, "cooldown: 2 admitted, 1 refused, counted");
	trigger__fini(&t);
}

static void test_rate(void)
{
	struct trigger t;

	trigger__init(&t, "sig", "signal", &(struct trigger_policy){ .max_per_hour = 3 });
	for (int i = 0; i < 3; i++)
		is_int(fire(&t, (10 + i) * SEC), FR_ADMIT_OK, "rate: firing %d of 3 in the hour", i + 1);
	is_int(fire(&t, 20 * SEC), FR_ADMIT_RATE, "rate: a 4th within the hour is refused");
	is_int(fire(&t, 10 * SEC + FR_HOUR_NS), FR_ADMIT_OK, "rate: an hour after the 1st, one is admitted");
	is_int(fire(&t, 10 * SEC + FR_HOUR_NS), FR_ADMIT_RATE, "rate: but not two");
	trigger__fini(&t);
}

/* A reload gives the trigger a new policy; what it did stays counted. */
static void test_set_policy(void)
{
	struct trigger t;

	trigger__init(&t, "sig", "signal", &(struct trigger_policy){ .max_per_hour = 3 });
	fire(&t, 1 * SEC);
	fire(&t, 2 * SEC);
	fire(&t, 3 * SEC);
	is_int(trigger__set_policy(&t, &(struct trigger_policy){ .max_per_hour = 3 }), 0,
	       "reload with the same policy");
	is_int(fire(&t, 4 * SEC), FR_ADMIT_RATE, "reload: the same limit still holds the hour's 3 firings");
	trigger__set_policy(&t, &(struct trigger_policy){ .max_per_hour = 2 });
	is_int(fire(&t, 5 * SEC), FR_ADMIT_RATE, "reload to a lower limit: still over it");
	trigger__set_policy(&t, &(struct trigger_policy){ .max_per_hour = 4 });
	is_int(fire(&t, 6 * SEC), FR_ADMIT_OK, "reload to 4: two of the 3 kept, so one more is admitted");
	is_int(fire(&t, 7 * SEC), FR_ADMIT_OK, "and another (the ring kept the newest 2, with room for 2)");
	is_int(fire(&t, 8 * SEC), FR_ADMIT_RATE, "then the limit of 4 holds");
	is_int(fire(&t, 2 * SEC + FR_HOUR_NS), FR_ADMIT_OK,
	       "an hour after the oldest kept firing (2 s), one is admitted again");
	ok(t.fired == 6 && t.suppressed == 3 && t.last_fired == 2 * SEC + FR_HOUR_NS,
	   "reload keeps the counts and the last firing (fired %llu, suppressed %llu)",
	   (unsigned long long)t.fired, (unsigned long long)t.suppressed);
	trigger__set_policy(&t, &(struct trigger_policy){ .cooldown_ns = SEC });
	is_int(fire(&t, 2 * SEC + FR_HOUR_NS + SEC / 2), FR_ADMIT_COOLDOWN,
	       "reload to a cooldown: measured from the last firing before the reload");
	trigger__fini(&t);
}

int main(void)
{
	test_cooldown();
	test_rate();
	test_set_policy();
	return tap_done_testing();
}
