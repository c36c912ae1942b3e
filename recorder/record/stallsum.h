/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stallsum.h - the stall sums, from the kernel to the window. The BPF
 * side sums every stall per incarnation and kind in the stall_sum map
 * (bpf/contract.h: struct fr_stall_sum): the short ones it does not
 * record one by one, the ones the full ring lost, and all of them. Once a
 * second this reads the map and puts what grew since the last read into
 * the window as stallsum events, one per incarnation and kind, so a dump
 * holds the sums of its own window. An exited incarnation's entry is read
 * once more a second after the BPF side marked it dead, then deleted.
 */
#ifndef FR_STALLSUM_H
#define FR_STALLSUM_H

#include <stdint.h>

#include "drain.h"
#include "hashmap.h"

struct stallsum_stats {
	uint64_t reads;		/* passes over the map */
	uint64_t entries;	/* entries in the map at the last pass */
	uint64_t events;	/* stallsum events staged */
	uint64_t deleted;	/* entries of exited incarnations deleted */
	uint64_t failed;	/* events the drain refused (counted there too) */
};

struct stallsum {
	int fd;			/* the stall_sum map; -1: stalls are off */
	struct fr_hashmap last;	/* struct fr_stall_key -> struct stallsum_last */
	struct stallsum_stats st;
};

/* stallsum__init() - over map @fd (-1: off). Allocates nothing yet. */
void stallsum__init(struct stallsum *ss, int fd);
void stallsum__fini(struct stallsum *ss);
const struct stallsum_stats *stallsum__stats(const struct stallsum *ss);

/*
 * stallsum__tick() - read the map; stage into @d, stamped @now, what grew
 * since the last tick. Returns 0 or -errno (the map could not be read;
 * nothing is lost: the next tick reads it again).
 */
int stallsum__tick(struct stallsum *ss, struct drain *d, uint64_t now);

#endif /* FR_STALLSUM_H */
