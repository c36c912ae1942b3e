// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * evtype.c - the table of event types (evtype.h). A new type gets its row
 * and its case in fr_evtype() here; test_format checks that every type
 * below FR_DEV_NTYPES has a complete row.
 */
#include <inttypes.h>
#include <stdio.h>

#include "evtype.h"
#include "json.h"
#include "util.h"

static const struct fr_evtype evtypes[FR_DEV_NTYPES] = {
	[FR_DEV_SAMPLE] = { "sample", "samples", "samples", true,
			    .ref = FR_EVREF_STACK, .tid = FR_EVREF_THREAD },
	[FR_DEV_EXIT] = { "exit", "exits", "exits", true,
			  .ref = FR_EVREF_STR, .tid = FR_EVREF_THREAD },
	[FR_DEV_FORK] = { "fork", "forks", "forks", true,
			  .ref = FR_EVREF_PROC, .tid = FR_EVREF_THREAD },
	[FR_DEV_EXEC] = { "exec", "execs", "execs", true,
			  .ref = FR_EVREF_STR, .tid = FR_EVREF_THREAD },
	/* arg: the invoker's process, tid: the invoker's stack. */
	[FR_DEV_OOM] = { "oom", "ooms", "OOM kills", true,
			 .ref = FR_EVREF_STR, .arg = FR_EVREF_PROC, .tid = FR_EVREF_STACK },
	[FR_DEV_PRESSURE] = { "pressure", "pressure", "pressure readings", false,
			      .ref = FR_EVREF_STR },
	/* tid: the owner's thread, or the pid of another process (FR_EVRSS_OTHER). */
	[FR_DEV_RSS] = { "rss", "rss", "RSS ledger entries", true,
			 .tid = FR_EVREF_THREAD },
	[FR_DEV_OOMADJ] = { "oom_score_adj", "oom_score_adj", "oom_score_adj writes", true,
			    .tid = FR_EVREF_THREAD },
	[FR_DEV_MEMSYS] = { "memory", "memory_readings", "memory readings", false,
			    .ref = FR_EVREF_STR },
	[FR_DEV_MEMCG] = { "memcg", "memcg_readings", "memcg readings", false,
			   .ref = FR_EVREF_STR },
	[FR_DEV_STALL] = { "stall", "stalls", "stalls", true,
			   .ref = FR_EVREF_STR, .arg = FR_EVREF_STACK, .tid = FR_EVREF_THREAD },
	/* ref: the block's length. */
	[FR_DEV_OFFCPU] = { "offcpu", "offcpu", "off-CPU blocks", true,
			    .arg = FR_EVREF_STACK, .tid = FR_EVREF_THREAD },
	[FR_DEV_STALLSUM] = { "stallsum", "stall_sums", "stall sums", true,
			      .ref = FR_EVREF_STR, .tid = FR_EVREF_THREAD },
	/* arg: pages grown; flags: the member. */
	[FR_DEV_RSS_SITE] = { "rss_site", "rss_sites", "RSS growth sites", true,
			      .ref = FR_EVREF_STACK, .tid = FR_EVREF_THREAD },
};

/*
 * fr_evtype() - the row of @type. The switch has no default: a type added to
 * the enum fails the build here until it has a case, and test_format checks
 * that the row the case returns is complete.
 */
const struct fr_evtype *fr_evtype(unsigned type)
{
	switch ((enum fr_dump_event_type)type) {
	case FR_DEV_SAMPLE:
	case FR_DEV_EXIT:
	case FR_DEV_FORK:
	case FR_DEV_EXEC:
	case FR_DEV_OOM:
	case FR_DEV_PRESSURE:
	case FR_DEV_RSS:
	case FR_DEV_OOMADJ:
	case FR_DEV_MEMSYS:
	case FR_DEV_MEMCG:
	case FR_DEV_STALL:
	case FR_DEV_OFFCPU:
	case FR_DEV_STALLSUM:
	case FR_DEV_RSS_SITE:
		return evtypes[type].name ? &evtypes[type] : NULL;
	case FR_DEV_NTYPES:
		break;
	}
	return NULL;	/* 0, or a type of a newer version */
}

const char *dump__event_type_name(unsigned type)
{
	const struct fr_evtype *t = fr_evtype(type);

	return t ? t->name : "unknown";
}

bool dump__event_has_proc(unsigned type)
{
	const struct fr_evtype *t = fr_evtype(type);

	return t && t->has_proc;
}

/*
 * evtype__json_counts() - one member per type, its count key (fr_evtype.count)
 * and @by_type[type], in the object open in @j: status, show and report list
 * their per-type counts with it, so all list the same types.
 */
void evtype__json_counts(struct json *j, const uint64_t by_type[FR_DEV_NTYPES])
{
	for (unsigned t = 1; t < FR_DEV_NTYPES; t++)
		if (fr_evtype(t))
			json__u64(j, fr_evtype(t)->count, by_type[t]);
}

/*
 * evtype__text_counts() - "12 samples, 3 exits, 1 OOM kills" into @buf: the
 * samples always, every other type with a count, by its label. Returns what
 * snprintf() would (the text is cut to @len).
 */
int evtype__text_counts(char *buf, size_t len, const uint64_t by_type[FR_DEV_NTYPES])
{
	size_t n = 0;

	if (len)
		buf[0] = 0;
	for (unsigned t = 1; t < FR_DEV_NTYPES; t++) {
		int k;

		if (!fr_evtype(t) || (!by_type[t] && t != FR_DEV_SAMPLE))
			continue;
		k = snprintf(buf + FR_MIN(n, len), len - FR_MIN(n, len), "%s%" PRIu64 " %s",
			     n ? ", " : "", by_type[t], fr_evtype(t)->label);
		if (k < 0)
			return k;
		n += (size_t)k;
	}
	return (int)FR_MIN(n, (size_t)INT32_MAX);
}
