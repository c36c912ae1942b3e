/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * encoder.h - turn a frozen window into the dump model.
 *
 * Runs on the dump thread while the drain keeps recording. It takes the
 * process snapshot, walks the frozen events once to learn which processes,
 * strings and stacks they reference, symbolizes those stacks, and then
 * streams the events a second time, translated to dump indexes, into
 * dump__write(). Events the drain recycled in between are skipped and
 * counted, never misread.
 */
#ifndef FR_ENCODER_H
#define FR_ENCODER_H

#include <stdint.h>

#include "drain.h"
#include "encstate.h"
#include "format.h"
#include "sampler.h"
#include "symbols.h"

/* Symbol sources kept across dumps: kernel symbols and loaded binaries. */
struct symbolizer;

struct symbolizer *symbolizer__new(struct symcache *cache);
void symbolizer__free(struct symbolizer *s);
/* Kernel symbols read ahead of the first dump, outside any lock. */
struct ksyms_warm {
	struct kallsyms *ksyms;
	uint64_t hash;		/* of /proc/modules when read */
};
void symbolizer__warm_read(struct ksyms_warm *w);
void symbolizer__warm_replace(struct symbolizer *s, struct ksyms_warm *w);
void symbolizer__warm_adopt(struct symbolizer *s, struct ksyms_warm *w);
bool symbolizer__warm_done(const struct symbolizer *s);
struct names *symbolizer__names(struct symbolizer *s, bool *compacted);
struct names *symbolizer__store(struct symbolizer *s);
struct pycache;
void symbolizer__set_python(struct symbolizer *s, struct pycache *py);
struct pycache *symbolizer__python(const struct symbolizer *s);
void symbolizer__set_names_budget(struct symbolizer *s, uint64_t bytes);
const struct kallsyms *symbolizer__ksyms(const struct symbolizer *s);
struct symcache *symbolizer__cache(const struct symbolizer *s);


struct encoder;

struct encoder *encoder__new(const struct encode_in *in, struct fr_dump *model);
void encoder__free(struct encoder *e);
int encoder__prepare(struct encoder *e);
int encoder__next_event(void *ctx, struct fr_dump_event *ev);
const struct encoder_stats *encoder__stats(const struct encoder *e);

#endif /* FR_ENCODER_H */
