/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dumpmeta.h - a dump's META, TRIG and LOSS, filled at its freeze (dumpmeta.c).
 */
#ifndef FR_DUMPMETA_H
#define FR_DUMPMETA_H

#include <stdbool.h>

#include "state.h"

/* dumpmeta__fill() - @req's META, TRIG and LOSS for plan @p. 0 or -errno. */
int dumpmeta__fill(struct daemon *dm, const struct dump_plan *p, struct dump_request *req);

#endif /* FR_DUMPMETA_H */
