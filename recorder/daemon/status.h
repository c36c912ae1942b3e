/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * status.h - the control socket's "status" answer (status.c).
 */
#ifndef FR_STATUS_H
#define FR_STATUS_H

#include <stdbool.h>

#include "state.h"

char *status__render(struct daemon *dm, bool json);

#endif /* FR_STATUS_H */
