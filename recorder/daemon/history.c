// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * history.c - dumps written and failed, recent dumps, record rate. See
 * history.h.
 */
#include <stdio.h>
#include <string.h>

#include "history.h"

/* history__written() - a dump became durable at @path (CLOCK_BOOTTIME @now). */
void history__written(struct dump_history *h, const char *path, uint64_t bytes,
		      uint64_t events, const char *triggers, uint64_t now)
{
	struct recent_dump *rd;

	h->dumps++;
	memmove(&h->recent[1], &h->recent[0], (FR_RECENT_DUMPS - 1) * sizeof(h->recent[0]));
	rd = &h->recent[0];
	snprintf(rd->path, sizeof(rd->path), "%s", path);
	rd->bytes = bytes;
	rd->events = events;
	rd->ts = now;
	snprintf(rd->triggers, sizeof(rd->triggers), "%s", triggers);
	if (h->nrecent < FR_RECENT_DUMPS)
		h->nrecent++;
}

/* history__failed() - a dump could not be started or written. */
void history__failed(struct dump_history *h)
{
	h->failures++;
}

/* history__records() - once a second: the drain has taken @records in all. */
void history__records(struct dump_history *h, uint64_t records, uint64_t now)
{
	h->rate_records[h->nrates % FR_RATE_SECONDS] = records;
	h->rate_ts[h->nrates % FR_RATE_SECONDS] = now;
	h->nrates++;
}

/* history__rate() - records per second over the last FR_RATE_SECONDS; 0 before two readings. */
double history__rate(const struct dump_history *h)
{
	uint64_t n = h->nrates;
	uint32_t newest, oldest;

	if (n < 2)
		return 0;
	newest = (n - 1) % FR_RATE_SECONDS;
	oldest = n > FR_RATE_SECONDS ? n % FR_RATE_SECONDS : 0;
	if (h->rate_ts[newest] <= h->rate_ts[oldest])
		return 0;
	return (h->rate_records[newest] - h->rate_records[oldest]) * 1e9 /
	       (h->rate_ts[newest] - h->rate_ts[oldest]);
}

uint64_t history__written_count(const struct dump_history *h)
{
	return h->dumps;
}

uint64_t history__failed_count(const struct dump_history *h)
{
	return h->failures;
}

/* history__recent() - the @i-th most recent dump written (0: the newest), or NULL. */
const struct recent_dump *history__recent(const struct dump_history *h, uint32_t i)
{
	return i < h->nrecent ? &h->recent[i] : NULL;
}
