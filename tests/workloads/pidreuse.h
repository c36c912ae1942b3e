/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pidreuse.h - make a PID be reused on purpose, for the workloads that test
 * identity (pid, start): find a free PID, then fork a child at exactly it.
 */
#ifndef FR_PIDREUSE_H
#define FR_PIDREUSE_H

#include <sys/types.h>

/* A PID about @gap past the last one handed out (wrapping at pid_max), free now; or -1. */
pid_t pidreuse__free_pid(long gap);

/* Fork with clone3's set_tid: a child with exactly PID @pid (0 in it), or -1. Needs root. */
pid_t pidreuse__spawn_at(pid_t pid);

#endif /* FR_PIDREUSE_H */
