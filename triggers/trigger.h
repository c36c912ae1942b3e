/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trigger.h - what asks for a dump, behind one small interface.
 *
 * A trigger source turns something that happened (a signal, a PSI event,
 * an OOM kill, a control request) into a struct trigger_fire. The daemon
 * decides what a fire does: freeze the window and write a dump.
 */
#ifndef FR_TRIGGER_H
#define FR_TRIGGER_H

#include <stdint.h>
#include <sys/signalfd.h>

#define FR_TRIGGER_TEXT	256

struct trigger_fire {
	char name[64];			/* the trigger's name, e.g. "signal" */
	char type[16];			/* signal | psi | oom | command */
	char reason[FR_TRIGGER_TEXT];	/* human summary */
	char detail[FR_TRIGGER_TEXT];	/* source-specific, e.g. the PSI line */
	uint64_t ts;			/* CLOCK_BOOTTIME ns when it fired */
};

int trigger_signal__fire(const struct signalfd_siginfo *si, uint64_t now,
			 struct trigger_fire *out);

#endif /* FR_TRIGGER_H */
