// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * export.c - what the exporters share: the time range an export covers,
 * which triggers it keeps, the thread names it shows. See export.h.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "export.h"
#include "filter.h"
#include "view.h"

/* Seconds from the filter origin as CLOCK_BOOTTIME ns, clamped at 0. */
static uint64_t at(const struct fr_dump *d, double sec)
{
	double t = (double)filter__origin(d) + sec * 1e9;

	return t <= 0 ? 0 : t >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(t);
}

/* export__range() - the dump's window cut by --from/--to. See export.h. */
void export__range(const struct fr_dump *d, const struct filter *flt, struct export_range *r)
{
	r->start = d->win.start;
	r->end = d->win.end;
	if (flt->has_from && at(d, flt->from) > r->start)
		r->start = at(d, flt->from);
	if (flt->has_to && at(d, flt->to) < r->end)
		r->end = at(d, flt->to);
	if (r->end < r->start)
		r->end = r->start;
	r->wall = view_realtime(d, r->start);
}

/* export__trigger_match() - is trigger @t in the --from/--to range? (--pid keeps it.) */
bool export__trigger_match(const struct fr_dump *d, const struct filter *flt,
			   const struct fr_dump_trigger *t)
{
	struct filter time_only = *flt;
	struct fr_dump_event e = { .ts = t->ts, .type = FR_DEV_PRESSURE };

	time_only.npids = 0;
	return filter__match(&time_only, d, &e);
}

/* export__thread_name() - the thread's name at event @e, as "flightrec folded" has it. */
const char *export__thread_name(const struct fr_dump *d, const struct fr_dump_event *e)
{
	const char *s = dump__str(d, e->comm);

	return *s ? s : dump__str(d, d->proc[e->proc].comm);
}
