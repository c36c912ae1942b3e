/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sampler.h - the BPF side, loaded and attached: perf_event sampling on
 * every online CPU, lifecycle tracepoints, the ring buffer, per-CPU loss
 * counters and the task iterator.
 */
#ifndef FR_SAMPLER_H
#define FR_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"

struct sampler_opts {
	uint32_t frequency;	/* Hz per CPU */
	size_t ring_bytes;	/* 0: sized from frequency and CPUs */
	uint32_t unwind_rows;	/* row pool for unwinding without frame pointers; 0: off */
	uint32_t unwind_files;	/* file slots for the pool */
	bool no_kernel_tables;	/* never build tables in the kernel, as before 6.7 */
	bool rss_ledger;	/* the RSS ledger (rss_stat) */
	uint64_t rss_step;	/* bytes */
	uint32_t rss_step_pct;	/* % of the value logged, if larger */
	uint64_t rss_max_age_ns;
	bool stalls;		/* reclaim, compaction and throttle stalls */
	uint64_t min_stall_ns;	/* shorter ones are only summed */
	bool offcpu;		/* time blocked off the CPU (D) */
	bool offcpu_sleep;	/* and asleep (S) */
	uint64_t min_block_ns;
};

/* The BPF maps the unwinder (recorder/unwind/) writes; -1 when off. */
struct sampler_unwind_maps {
	int rows, files, procs, gen, inodes, read;	/* read: uread, -1 without kernel tables */
	uint32_t nrows, nfiles;
};


struct sampler;

/*
 * Where sampler__open() spent its time, each a duration in ns: the object
 * opened (an instance per group of programs), its maps and small programs
 * loaded (with the kernel's BTF and the relocations against it); the
 * programs loaded before "ready" (sampling and the process lifecycle:
 * each instance's relocations, then the verifier); their attach, with the
 * perf event of every CPU.
 */
struct sampler_times {
	uint64_t maps_ns;	/* the object, its maps and the entry programs, loaded */
	uint64_t attach_ns;
};

struct sampler *sampler__open(const struct sampler_opts *o, char *err, size_t errlen);
void sampler__close(struct sampler *s);
void sampler__times(const struct sampler *s, struct sampler_times *t);
/*
 * sampler__start_late() - begin loading the programs left for after
 * "ready": the sampler's unwinder and the exit's maps (the entries hand
 * over to them as each is loaded), then the stalls, off-CPU blocks and the
 * OOM victim. Their thread exists from sampler__open() on, with the
 * capabilities the caller had then.
 */
void sampler__start_late(struct sampler *s);
/*
 * sampler__late_fd() - an eventfd, readable once the programs loaded after
 * "ready" are all in place or failed; -1 when there are none. Then
 * sampler__late_result() says how it went: 0, or -errno with @err naming
 * the first program that failed (the others are in place), and in *@ns how
 * long after the open they were.
 */
int sampler__late_fd(const struct sampler *s);
/* sampler__unwinder_ns() - from the open to the unwinder in place; 0: not (yet). */
uint64_t sampler__unwinder_ns(const struct sampler *s);
int sampler__late_result(struct sampler *s, uint64_t *ns, char *err, size_t errlen);
int sampler__ring_fd(const struct sampler *s);
bool sampler__kernel_tables(const struct sampler *s);
size_t sampler__ring_bytes(const struct sampler *s);
const char *sampler__source(const struct sampler *s);
int sampler__ncpus(const struct sampler *s);
/* sampler__unwind_maps() - the unwind maps; 0, or -ENOENT when unwinding is off. */
int sampler__unwind_maps(const struct sampler *s, struct sampler_unwind_maps *out);
int sampler__set_frequency(struct sampler *s, uint32_t hz);
/* sampler__stall_sums() - the stall_sum map's fd; -ENOENT when stalls and off-CPU are off. */
int sampler__stall_sums(const struct sampler *s);
int sampler__counters(const struct sampler *s, enum fr_counter which,
		      uint64_t *per_cpu, int ncpus);
/* fr_task_fn - one live task from the iterator; return 0 or -errno to stop. */
typedef int (*fr_task_fn)(void *ctx, const struct fr_rec_task *t);
int sampler__list_tasks(struct sampler *s, fr_task_fn fn, void *ctx);
int fr_online_cpus(int *cpus, int max);

#endif /* FR_SAMPLER_H */
