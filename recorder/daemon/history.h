/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * history.h - what the daemon has done, for `flightrec status`: dumps
 * written and failed, the most recent ones, and the drain's record rate
 * over the last seconds. One owner; the status answer only reads it.
 */
#ifndef FR_HISTORY_H
#define FR_HISTORY_H

#include <limits.h>
#include <stdint.h>

#define FR_RECENT_DUMPS		10
#define FR_RATE_SECONDS		10

struct recent_dump {
	char path[PATH_MAX];
	uint64_t bytes;
	uint64_t ts;			/* CLOCK_BOOTTIME ns when durable */
	uint64_t events;
	char triggers[256];
};

struct dump_history {
	uint64_t dumps;
	uint64_t failures;
	struct recent_dump recent[FR_RECENT_DUMPS];	/* newest first */
	uint32_t nrecent;
	uint64_t rate_records[FR_RATE_SECONDS];	/* drain records at each of the last seconds */
	uint64_t rate_ts[FR_RATE_SECONDS];
	uint64_t nrates;
};

void history__written(struct dump_history *h, const char *path, uint64_t bytes,
		      uint64_t events, const char *triggers, uint64_t now);
void history__failed(struct dump_history *h);
void history__records(struct dump_history *h, uint64_t records, uint64_t now);
double history__rate(const struct dump_history *h);
uint64_t history__written_count(const struct dump_history *h);
uint64_t history__failed_count(const struct dump_history *h);
const struct recent_dump *history__recent(const struct dump_history *h, uint32_t i);

#endif /* FR_HISTORY_H */
