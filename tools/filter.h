/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * filter.h - the event filters every reading command shares:
 *
 *   --pid=PID[,PID...]   only events of these PIDs (every incarnation of them)
 *   --cgroup=PATH        only events of processes in cgroup PATH or below it
 *                        (their memory cgroup's path, or their v2 path), and
 *                        that cgroup's memory readings
 *   --from=SEC           only events at or after SEC seconds relative to the
 *   --to=SEC             first trigger (negative: before it), e.g.
 *                        --from=-5 --to=0 is the last 5 s before the trigger
 *
 * Readings have no process: --pid drops them, --cgroup keeps only the
 * memory readings of its cgroup, the time filters keep them.
 */
#ifndef FR_FILTER_H
#define FR_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include "format.h"

#define FR_FILTER_PIDS	64

struct filter {
	uint32_t pids[FR_FILTER_PIDS];
	uint32_t npids;
	char cgroup[4096];	/* --cgroup path, "": any */
	bool has_from, has_to;
	double from, to;	/* seconds relative to the first trigger */
};

int filter__parse(struct filter *f, const char *opt, const char *arg);
bool filter__match(const struct filter *f, const struct fr_dump *d,
		   const struct fr_dump_event *e);
bool filter__pid(const struct filter *f, uint32_t pid);
bool filter__proc(const struct filter *f, const struct fr_dump *d, uint32_t proc);
bool filter__active(const struct filter *f);
uint64_t filter__origin(const struct fr_dump *d);

/*
 * The filters' options, one spelling for every command: their getopt codes
 * lie past any letter a command uses for its own. A command lists the
 * options it takes in its struct option array and hands their codes to
 * filter__option() (FR_FILTER_CASES).
 */
enum {
	FR_OPT_PID = 0x1000,
	FR_OPT_CGROUP,
	FR_OPT_FROM,
	FR_OPT_TO,
};
#define FR_FILTER_WHO_OPTIONS \
	{ "pid", required_argument, NULL, FR_OPT_PID }, \
	{ "cgroup", required_argument, NULL, FR_OPT_CGROUP }
#define FR_FILTER_WHEN_OPTIONS \
	{ "from", required_argument, NULL, FR_OPT_FROM }, \
	{ "to", required_argument, NULL, FR_OPT_TO }
#define FR_FILTER_CASES \
	case FR_OPT_PID: case FR_OPT_CGROUP: case FR_OPT_FROM: case FR_OPT_TO

int filter__option(struct filter *f, const char *cmd, int code, const char *arg);

#define FR_FILTER_HELP \
	"  --pid=PID[,PID]    only events of these PIDs (all their incarnations)\n" \
	"  --cgroup=PATH      only events of processes in cgroup PATH or below it\n" \
	"  --from=SEC         only events from SEC seconds after the trigger\n" \
	"                     (negative: before it)\n" \
	"  --to=SEC           only events up to SEC seconds after the trigger\n"

#endif /* FR_FILTER_H */
