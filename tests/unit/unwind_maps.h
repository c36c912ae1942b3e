/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * unwind_maps.h - the unwinder's five BPF maps, shaped as bpf/unwind.bpf.h
 * declares them, for tests that drive recorder/unwind/ without the
 * sampler's BPF object. Needs root.
 */
#ifndef FR_TEST_UNWIND_MAPS_H
#define FR_TEST_UNWIND_MAPS_H

#include <stdbool.h>
#include <unistd.h>
#include <bpf/bpf.h>

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
	m->nrows = nrows;
	m->nfiles = nfiles;
	return m->rows >= 0 && m->files >= 0 && m->procs >= 0 && m->gen >= 0 &&
	       m->inodes >= 0;
}

static inline void unwind_maps__close(struct sampler_unwind_maps *m)
{
	close(m->rows);
	close(m->files);
	close(m->procs);
	close(m->gen);
	close(m->inodes);
}

#endif /* FR_TEST_UNWIND_MAPS_H */
