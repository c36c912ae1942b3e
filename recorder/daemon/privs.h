/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * privs.h - what flightrecd keeps of root once BPF is loaded and attached,
 * and its memory locked so that a dump can be written when the machine is
 * short of memory.
 */
#ifndef FR_PRIVS_H
#define FR_PRIVS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int privs__lock_memory(void);
int privs__set_oom_score_adj(int value, int *now);
int privs__drop(bool chown_needed, uint64_t *kept);
const char *privs__describe(uint64_t caps, char *buf, size_t len);

#endif /* FR_PRIVS_H */
