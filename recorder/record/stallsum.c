// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stallsum.c - the stall sums into the window. See stallsum.h.
 *
 * The map is read in batches (one system call per FR_STALLSUM_BATCH
 * entries: most processes that ever waited on a disk have an entry). What
 * was read last is kept per incarnation here, so that only what grew is
 * staged.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "contract.h"
#include "stallsum.h"
#include "util.h"

#define FR_STALLSUM_BATCH	256

struct stallsum_last {
	struct fr_stall_sum v;	/* as read last */
	bool seen_dead;		/* read once since it was marked dead */
};

struct dead_keys {
	struct fr_stall_key *k;
	size_t n, cap;
};

void stallsum__init(struct stallsum *ss, int fd)
{
	memset(ss, 0, sizeof(*ss));
	ss->fd = fd;
	fr_hashmap__init(&ss->last, sizeof(struct fr_stall_key), sizeof(struct stallsum_last),
			 NULL, NULL, NULL);
}

void stallsum__fini(struct stallsum *ss)
{
	if (!ss)
		return;
	fr_hashmap__fini(&ss->last);
}

/* @now - @then of a counter that only grows (0 if it did not). */
static uint64_t grew(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

/* Stage the kinds of entry @v that grew since @prev. */
static void stage_growth(struct stallsum *ss, struct drain *d, uint64_t now,
			 const struct fr_stall_key *k, const struct fr_stall_sum *v,
			 const struct fr_stall_sum *prev)
{
	char comm[FR_COMM_LEN + 1];

	memcpy(comm, v->comm, FR_COMM_LEN);
	comm[FR_COMM_LEN] = 0;
	for (unsigned kind = 0; kind < FR_STALL_NKINDS; kind++) {
		struct fr_stallsum_info si = {
			.n_short = grew(v->n_short[kind], prev->n_short[kind]),
			.ns_short = grew(v->ns_short[kind], prev->ns_short[kind]),
			.n_lost = grew(v->n_lost[kind], prev->n_lost[kind]),
			.ns_lost = grew(v->ns_lost[kind], prev->ns_lost[kind]),
			.n_all = grew(v->n_all[kind], prev->n_all[kind]),
			.ns_all = grew(v->ns_all[kind], prev->ns_all[kind]),
		};

		if (!si.n_all && !si.n_short && !si.n_lost)
			continue;
		if (drain__add_stallsum(d, now, k->tgid, k->start, comm, kind, &si))
			ss->st.failed++;
		else
			ss->st.events++;
	}
}

static int dead_keys__add(struct dead_keys *dk, const struct fr_stall_key *k)
{
	if (dk->n == dk->cap) {
		size_t cap = dk->cap ? dk->cap * 2 : 64;
		void *p = realloc(dk->k, cap * sizeof(*dk->k));

		if (!p)
			return -ENOMEM;
		dk->k = p;
		dk->cap = cap;
	}
	dk->k[dk->n++] = *k;
	return 0;
}

/*
 * One entry: stage its growth, remember it; an entry dead since the
 * last read goes to @dk for deletion.
 */
static void one(struct stallsum *ss, struct drain *d, uint64_t now, const struct fr_stall_key *k,
		const struct fr_stall_sum *v, struct dead_keys *dk)
{
	static const struct fr_stall_sum zero;
	struct stallsum_last *l = fr_hashmap__find(&ss->last, k), n;

	stage_growth(ss, d, now, k, v, l ? &l->v : &zero);
	n.v = *v;
	n.seen_dead = v->dead != 0;
	if (v->dead && l && l->seen_dead && !dead_keys__add(dk, k))
		return;
	fr_hashmap__insert(&ss->last, k, &n);	/* -ENOMEM: all of it again next time */
}

/* Delete the dead entries, here and in the map. */
static void purge(struct stallsum *ss, const struct dead_keys *dk)
{
	for (size_t i = 0; i < dk->n; i++) {
		fr_hashmap__remove(&ss->last, &dk->k[i]);
		if (!bpf_map_delete_elem(ss->fd, &dk->k[i]))
			ss->st.deleted++;
	}
}

int stallsum__tick(struct stallsum *ss, struct drain *d, uint64_t now)
{
	struct fr_stall_key *keys = NULL;
	struct fr_stall_sum *vals = NULL;
	struct dead_keys dk = { 0 };
	uint32_t token, *in = NULL;
	uint64_t seen = 0;
	int err = 0;

	if (ss->fd < 0)
		return 0;
	keys = malloc(FR_STALLSUM_BATCH * sizeof(*keys));
	vals = malloc(FR_STALLSUM_BATCH * sizeof(*vals));
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		uint32_t n = FR_STALLSUM_BATCH;

		err = bpf_map_lookup_batch(ss->fd, in, &token, keys, vals, &n, NULL);
		if (err && err != -ENOENT)
			break;
		for (uint32_t i = 0; i < n; i++)
			one(ss, d, now, &keys[i], &vals[i], &dk);
		seen += n;
		if (err == -ENOENT) {
			err = 0;	/* the end of the map */
			break;
		}
		in = &token;
	}
	purge(ss, &dk);
	ss->st.reads++;
	ss->st.entries = seen;
out:
	free(dk.k);
	free(vals);
	free(keys);
	return err;
}

const struct stallsum_stats *stallsum__stats(const struct stallsum *ss)
{
	return &ss->st;
}
