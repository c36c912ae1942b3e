/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * psi.h - pressure stall information: reading pressure files and PSI
 * triggers that survive their cgroup going away.
 *
 * A pressure file (/proc/pressure/<res> or <cgroup>/<res>.pressure) reads
 *
 *	some avg10=0.12 avg60=0.05 avg300=0.01 total=123456
 *	full avg10=0.00 avg60=0.00 avg300=0.00 total=7890
 *
 * and a trigger is one fd of such a file, opened O_RDWR, into which
 * "some|full <stall_us> <window_us>" was written. The kernel then reports
 * EPOLLPRI (at most once per window) when the stall within the window
 * reaches stall_us, and EPOLLERR when the source is gone (cgroup removed).
 *
 * Confirmation rule. Kernel events are not taken at their word: an
 * unprivileged trigger (window a multiple of 2 s, no CAP_SYS_RESOURCE) can
 * fire once right after arming, counting the stall since boot. On an event,
 * psi_trigger__handle() reads the file and the event is real iff
 *
 *	total(now) - total(base) >= stall_us
 *
 * for the armed kind (some or full), where base is the newest recorded
 * reading taken at or before now - window - 1 s, or the oldest one kept
 * (at worst the baseline taken when arming) if the history is shorter. The
 * history holds (ts, total) pairs from arming, from psi_trigger__observe()
 * and from each handled event, in a fixed ring; totals that go backwards or
 * timestamps that do not advance are not recorded. Events failing the rule
 * (no growth since arming, slow drips) are FR_PSI_SPURIOUS.
 *
 * Re-arming. After EPOLLERR/EPOLLHUP the trigger closes its fd (a
 * level-triggered EPOLLERR would otherwise spin) and is disarmed. The owner
 * calls psi_trigger__arm() again once CLOCK_BOOTTIME reaches
 * psi_trigger__retry_at(); each failed arm doubles the delay (1 s, 2 s,
 * 4 s ... at most 60 s) and a successful arm resets it.
 */
#ifndef FR_TRIGGERS_PSI_H
#define FR_TRIGGERS_PSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Also defined, identically, in conf/config.h: whichever comes first wins. */
#ifndef FR_PSI_ENUMS
#define FR_PSI_ENUMS
enum fr_psi_resource { FR_PSI_CPU = 0, FR_PSI_MEMORY, FR_PSI_IO };
enum fr_psi_kind { FR_PSI_SOME = 0, FR_PSI_FULL };
#endif

#define FR_PSI_TEXT_MAX		256	/* longest pressure file text accepted */
#define FR_PSI_SPEC_MAX		32	/* the kernel copies at most 32 bytes */
#define FR_PSI_HISTORY		32	/* (ts, total) pairs kept per trigger */
#define FR_PSI_WINDOW_MIN_NS	(500 * (uint64_t)1000000)
#define FR_PSI_WINDOW_MAX_NS	(10 * (uint64_t)1000000000)
#define FR_PSI_SLACK_NS		((uint64_t)1000000000)	/* the "+ 1 s" of the rule */
#define FR_PSI_BACKOFF_MIN_NS	((uint64_t)1000000000)
#define FR_PSI_BACKOFF_MAX_NS	(60 * (uint64_t)1000000000)

/* What psi_trigger__handle() made of an event (positive; errors are -errno). */
enum fr_psi_event {
	FR_PSI_FIRED = 1,	/* confirmed by total= growth */
	FR_PSI_SPURIOUS = 2,	/* kernel event without that growth: ignore */
	FR_PSI_GONE = 3,	/* source gone: fd closed, re-arm at retry_at */
};

/* One line of a pressure file: avgs in hundredths of a percent, total in us. */
struct psi_line {
	uint32_t avg10, avg60, avg300;
	uint64_t total;
};

struct psi_reading {
	struct psi_line some, full;
	bool full_valid;	/* false when the file has no "full" line */
	uint64_t ts;		/* CLOCK_BOOTTIME ns of the read; 0 from psi_parse */
};

int psi_parse(const char *text, struct psi_reading *out);
int psi_read_fd(int fd, struct psi_reading *out);
const char *psi_resource_name(enum fr_psi_resource r);
const char *psi_kind_name(enum fr_psi_kind k);
int psi_path(const char *cgroup, enum fr_psi_resource r, char *buf, size_t len);

struct psi_trigger;

struct psi_trigger *psi_trigger__new(const char *cgroup, enum fr_psi_resource r,
				     enum fr_psi_kind k, uint64_t stall_ns,
				     uint64_t window_ns);
void psi_trigger__free(struct psi_trigger *t);
int psi_trigger__arm(struct psi_trigger *t);
int psi_trigger__fd(const struct psi_trigger *t);
int psi_trigger__handle(struct psi_trigger *t, uint32_t revents,
			struct psi_reading *out);
void psi_trigger__observe(struct psi_trigger *t, const struct psi_reading *r);
uint64_t psi_trigger__growth(const struct psi_trigger *t, uint64_t now,
			     uint64_t total);
uint64_t psi_trigger__retry_at(const struct psi_trigger *t);
unsigned psi_trigger__failures(const struct psi_trigger *t);
const char *psi_trigger__spec(const struct psi_trigger *t);
const char *psi_trigger__path(const struct psi_trigger *t);

#endif /* FR_TRIGGERS_PSI_H */
