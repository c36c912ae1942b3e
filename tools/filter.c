// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * filter.c - --pid, --from and --to. See filter.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "evtype.h"
#include "filter.h"
#include "util.h"

/* filter__origin() - time 0 of --from/--to: the first trigger, else the window end. */
uint64_t filter__origin(const struct fr_dump *d)
{
	return d->ntrig ? d->trig[0].ts : d->win.end;
}

static int parse_seconds(const char *s, double *v)
{
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	return errno || *end || !isfinite(*v) || fabs(*v) > 1e6 ? -EINVAL : 0;
}

/*
 * filter__parse() - apply option @opt ("pid", "from" or "to") with @arg.
 * Returns 0, or -EINVAL for a bad value (the caller reports it).
 */
int filter__parse(struct filter *f, const char *opt, const char *arg)
{
	if (!strcmp(opt, "from")) {
		f->has_from = true;
		return parse_seconds(arg, &f->from);
	}
	if (!strcmp(opt, "to")) {
		f->has_to = true;
		return parse_seconds(arg, &f->to);
	}
	if (!strcmp(opt, "cgroup")) {
		size_t n = arg ? strlen(arg) : 0;

		if (!n || *arg != '/' || n >= sizeof(f->cgroup))
			return -EINVAL;
		memcpy(f->cgroup, arg, n + 1);
		while (n > 1 && f->cgroup[n - 1] == '/')	/* "/a/" is "/a" */
			f->cgroup[--n] = 0;
		return 0;
	}
	if (!strcmp(opt, "pid")) {
		char *copy = strdup(arg ? arg : ""), *tok, *save = NULL;
		int err = copy && *copy ? 0 : -EINVAL;

		for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !err;
		     tok = strtok_r(NULL, ",", &save)) {
			if (f->npids == FR_FILTER_PIDS || cli_parse_u32(tok, &f->pids[f->npids]))
				err = -EINVAL;
			else
				f->npids++;
		}
		free(copy);
		return err;
	}
	return -EINVAL;
}

/*
 * filter__option() - take filter option @code (FR_OPT_*) of command @cmd
 * with @arg. Returns 0, or -EINVAL after saying on stderr what is accepted
 * (the command then exits with FR_EXIT_USAGE).
 */
int filter__option(struct filter *f, const char *cmd, int code, const char *arg)
{
	static const char *const name[] = { "pid", "cgroup", "from", "to" };
	static const char *const accepted[] = {
		"PID[,PID...]", "an absolute cgroup path, e.g. /system.slice",
		"seconds from the trigger, e.g. -5", "seconds from the trigger, e.g. -5",
	};
	unsigned i = (unsigned)(code - FR_OPT_PID);

	if (i >= FR_ARRAY_SIZE(name)) {
		cli_usage_error(cmd, "unknown filter option %d", code);
		return -EINVAL;
	}
	if (filter__parse(f, name[i], arg)) {
		cli_usage_error(cmd, "bad --%s '%s'; accepted: %s", name[i], arg ? arg : "",
				accepted[i]);
		return -EINVAL;
	}
	return 0;
}

bool filter__active(const struct filter *f)
{
	return f->npids || f->cgroup[0] || f->has_from || f->has_to;
}

/* Whether cgroup @path is @want or below it. */
static bool under(const char *path, const char *want)
{
	size_t n = strlen(want);

	if (!strcmp(want, "/"))
		return *path == '/';
	return !strncmp(path, want, n) && (path[n] == '/' || !path[n]);
}

/* filter__proc() - does @f keep dump process @proc (its PID and its cgroups)? */
bool filter__proc(const struct filter *f, const struct fr_dump *d, uint32_t proc)
{
	const struct fr_dump_proc *p = &d->proc[proc];

	if (!filter__pid(f, p->pid))
		return false;
	return !f->cgroup[0] || under(dump__str(d, p->memcg), f->cgroup) ||
	       under(dump__str(d, p->cgroup), f->cgroup);
}

/* filter__pid() - does @f keep process @pid (every PID when it names none)? */
bool filter__pid(const struct filter *f, uint32_t pid)
{
	if (!f->npids)
		return true;
	for (uint32_t i = 0; i < f->npids; i++)
		if (pid == f->pids[i])
			return true;
	return false;
}

/* filter__match() - does event @e pass @f? */
bool filter__match(const struct filter *f, const struct fr_dump *d,
		   const struct fr_dump_event *e)
{
	double t = ((double)e->ts - (double)filter__origin(d)) / 1e9;

	if ((f->has_from && t < f->from) || (f->has_to && t > f->to))
		return false;
	if (!f->npids && !f->cgroup[0])
		return true;
	if (!dump__event_has_proc(e->type))
		return !f->npids && e->type == FR_DEV_MEMCG && under(dump__str(d, e->comm), f->cgroup);
	return filter__proc(f, d, e->proc);
}
