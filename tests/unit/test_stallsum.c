// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_stallsum.c - the stall sums from a real BPF map, shaped as
 * bpf/stall.bpf.h declares stall_sum, into the real drain
 * (recorder/record/stallsum.c): what grew since the last read becomes one
 * stallsum event per incarnation and kind, nothing else does; an entry
 * the BPF side marked dead is read once more, then deleted. Needs root
 * (BPF maps); CI runs as root.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "../../bpf/contract.h"
#include "drain.h"
#include "stallsum.h"
#include "tap.h"

#define MS 1000000ULL
#define SEC 1000000000ULL

struct got {
	uint32_t proc;
	unsigned kind;
	struct fr_stallsum_info si;
};

/* The stallsum events of @d's window at @ts, in order; their number. */
static int window_sums(struct drain *d, uint64_t ts, struct got *out, int max)
{
	const struct drain_tables *t = drain__tables(d);
	struct fr_event ev;
	int n = 0;

	drain__release(d, ts);
	for (uint64_t i = window__tail(t->win); i < window__head(t->win); i++) {
		if (window__read(t->win, i, &ev) || ev.type != FR_EV_STALLSUM || ev.ts != ts)
			continue;
		if (n < max) {
			out[n].proc = ev.proc;
			out[n].kind = ev.flags;
			memset(&out[n].si, 0, sizeof(out[n].si));
			intern__copy(t->strs, ev.ref, &out[n].si, sizeof(out[n].si));
		}
		n++;
	}
	return n;
}

static int put(int fd, uint32_t tgid, uint64_t start, const struct fr_stall_sum *v)
{
	struct fr_stall_key k = { .tgid = tgid, .start = start };

	return bpf_map_update_elem(fd, &k, v, BPF_ANY);
}

static bool present(int fd, uint32_t tgid, uint64_t start)
{
	struct fr_stall_key k = { .tgid = tgid, .start = start };
	struct fr_stall_sum v;

	return !bpf_map_lookup_elem(fd, &k, &v);
}

int main(void)
{
	struct drain *d = drain__new(16 << 20, 60 * SEC);
	struct fr_stall_sum a = {}, b = {};
	struct stallsum ss;
	struct got g[16];
	uint32_t slot;
	int fd, n;

	if (geteuid()) {
		tap_diag("needs root for BPF maps");
		ok(0, "running as root");
		return tap_done_testing();
	}
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_stall_sum", sizeof(struct fr_stall_key),
			    sizeof(struct fr_stall_sum), 64, NULL);
	if (!ok(fd >= 0 && d, "a stall_sum map and a drain"))
		return tap_done_testing();
	stallsum__init(&ss, fd);
	is_int(stallsum__tick(&ss, d, 1 * SEC), 0, "an empty map reads");
	is_int(window_sums(d, 1 * SEC, g, 16), 0, "and stages nothing");

	/* Incarnation 100: 3 short memcg stalls of 1 ms, 1 recorded; 200: a lost block. */
	snprintf(a.comm, sizeof(a.comm), "thrasher");
	a.n_short[FR_STALL_MEMCG] = 3;
	a.ns_short[FR_STALL_MEMCG] = 3 * MS;
	a.n_all[FR_STALL_MEMCG] = 4;
	a.ns_all[FR_STALL_MEMCG] = 8 * MS;
	snprintf(b.comm, sizeof(b.comm), "writer");
	b.n_lost[FR_STALL_BLOCKED] = 1;
	b.ns_lost[FR_STALL_BLOCKED] = 20 * MS;
	b.n_all[FR_STALL_BLOCKED] = 1;
	b.ns_all[FR_STALL_BLOCKED] = 20 * MS;
	put(fd, 100, 7, &a);
	put(fd, 200, 8, &b);
	is_int(stallsum__tick(&ss, d, 2 * SEC), 0, "a map of two incarnations reads");
	n = window_sums(d, 2 * SEC, g, 16);
	is_int(n, 2, "one event per incarnation and kind that grew");
	ok(!proctable__find(drain__tables(d)->procs, 100, 7, &slot), "incarnation 100/7 is in the process table");
	for (int i = 0; i < n && i < 2; i++) {
		if (g[i].proc == slot)
			ok(g[i].kind == FR_STALL_MEMCG && g[i].si.n_short == 3 && g[i].si.ns_short == 3 * MS &&
			   g[i].si.n_all == 4 && g[i].si.ns_all == 8 * MS && !g[i].si.n_lost,
			   "100/7: memcg, 3 short of 4 in all");
		else
			ok(g[i].kind == FR_STALL_BLOCKED && g[i].si.n_lost == 1 && g[i].si.ns_lost == 20 * MS &&
			   g[i].si.n_all == 1, "200/8: blocked, 1 lost");
	}

	/* Only 100 grows, by one short stall; 200 is marked dead. */
	a.n_short[FR_STALL_MEMCG]++;
	a.ns_short[FR_STALL_MEMCG] += 2 * MS;
	a.n_all[FR_STALL_MEMCG]++;
	a.ns_all[FR_STALL_MEMCG] += 2 * MS;
	b.dead = 1;
	put(fd, 100, 7, &a);
	put(fd, 200, 8, &b);
	stallsum__tick(&ss, d, 3 * SEC);
	n = window_sums(d, 3 * SEC, g, 16);
	ok(n == 1 && g[0].proc == slot && g[0].si.n_short == 1 && g[0].si.ns_short == 2 * MS &&
	   g[0].si.n_all == 1, "the next read stages the growth alone (%d events)", n);
	ok(present(fd, 200, 8), "a dead entry stays for one more read");
	stallsum__tick(&ss, d, 4 * SEC);
	is_int(window_sums(d, 4 * SEC, g, 16), 0, "nothing grew: nothing staged");
	ok(!present(fd, 200, 8) && present(fd, 100, 7), "then the dead entry is deleted, the live one stays");
	is_int(ss.st.deleted, 1, "one deletion counted");
	is_int(ss.st.events, 3, "three events staged in all");
	stallsum__fini(&ss);
	close(fd);
	drain__free(d);
	return tap_done_testing();
}
