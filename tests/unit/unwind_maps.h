/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * unwind_maps.h - the unwinder's five BPF maps, shaped as bpf/unwind.bpf.h
 * declares them, for tests that drive recorder/unwind/ without the
 * sampler's BPF object. Needs root.
 */
#ifndef FR_TEST_UNWIND_MAPS_H
#define FR_TEST_UNWIND_MAPS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "procstat.h"
#include "rows.h"
#include "sampler.h"

/* Create the maps into @m (@nrows rows, @nfiles files); false if BPF is refused. */
static inline bool unwind_maps__create(struct sampler_unwind_maps *m, uint32_t nrows,
				       uint32_t nfiles)
{
	LIBBPF_OPTS(bpf_map_create_opts, mm, .map_flags = BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, np, .map_flags = BPF_F_NO_PREALLOC);

	m->rows = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_urows", 4, sizeof(struct fr_urow),
				 nrows, &mm);
	m->files = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_ufiles", 4, sizeof(struct fr_ufile),
				  nfiles, NULL);
	m->procs = bpf_map_create(BPF_MAP_TYPE_HASH, "t_uprocs", 4, sizeof(struct fr_uproc),
				  64, &np);
	m->gen = bpf_map_create(BPF_MAP_TYPE_HASH, "t_ugen", 4, sizeof(struct fr_ugen), 64, &np);
	m->inodes = bpf_map_create(BPF_MAP_TYPE_HASH, "t_uinodes", sizeof(struct fr_uinode_key),
				   sizeof(struct fr_uinode), nfiles, NULL);
	m->read = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "t_uread", 4, sizeof(struct fr_uread), 64,
				 NULL);
	m->nrows = nrows;
	m->nfiles = nfiles;
	return m->rows >= 0 && m->files >= 0 && m->procs >= 0 && m->gen >= 0 &&
	       m->inodes >= 0 && m->read >= 0;
}

static inline void unwind_maps__close(struct sampler_unwind_maps *m)
{
	close(m->rows);
	close(m->files);
	close(m->procs);
	close(m->gen);
	close(m->inodes);
	close(m->read);
}

/*
 * The start of live process @pid in ns since boot, as the BPF side stamps
 * it, at the clock tick's resolution /proc gives: a table is installed
 * only for an incarnation that has not exited. 0 if it is gone.
 */
static inline uint64_t unwind_start_of(pid_t pid)
{
	struct fr_procstat f;

	if (fr_procstat__read((uint32_t)pid, &f))
		return 0;
	return f.start_ticks * (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* A child asleep until killed: a real process with maps to attach. */
static inline pid_t unwind_sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static inline void unwind_reap(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

#endif /* FR_TEST_UNWIND_MAPS_H */
