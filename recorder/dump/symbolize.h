/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * symbolize.h - the encoder's naming pass (symbolize.c), on its state
 * (encstate.h).
 */
#ifndef FR_SYMBOLIZE_H
#define FR_SYMBOLIZE_H

#include "encstate.h"

int encoder__symbolize(struct encoder *e);
int encoder__resolve_victims(struct encoder *e);

#endif /* FR_SYMBOLIZE_H */
