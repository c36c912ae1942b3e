/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * export.h - "flightrec export": a dump in the formats other tools read.
 *
 *   chrome  Trace Event Format JSON (ui.perfetto.dev, chrome://tracing):
 *           one process track per incarnation (pid, start), CPU samples
 *           as thread instants, lifecycle events, stalls and blocks as
 *           thread slices, RSS, memory and PSI counters, triggers
 *   pprof   gzip-compressed perftools.profiles.Profile (tools/profile.proto)
 *           for go tool pprof, Pyroscope and Parca: CPU samples and time
 *           blocked off the CPU
 *   folded  what "flightrec folded" prints (cmd_export.c runs it)
 *
 * Every export keeps the events that pass the shared --pid/--from/--to
 * filter (filter.h), so the same options select the same samples in each.
 * The exporters return 0 or -errno and print nothing but the export.
 */
#ifndef FR_EXPORT_H
#define FR_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "filter.h"
#include "format.h"

/*
 * struct export_range - the time the export covers, CLOCK_BOOTTIME ns: the
 * dump's window [start, end], cut by --from/--to. Exported times are
 * relative to @start; @wall is @start as CLOCK_REALTIME ns (FORMAT.md 7.1).
 */
struct export_range {
	uint64_t start;
	uint64_t end;
	uint64_t wall;
};

void export__range(const struct fr_dump *d, const struct filter *flt,
		   struct export_range *r);
bool export__trigger_match(const struct fr_dump *d, const struct filter *flt,
			   const struct fr_dump_trigger *t);
const char *export__thread_name(const struct fr_dump *d, const struct fr_dump_event *e);

int export__chrome(const struct fr_dump *d, const struct filter *flt, FILE *f);
int export__pprof(const struct fr_dump *d, const struct filter *flt, FILE *f);

#endif /* FR_EXPORT_H */
