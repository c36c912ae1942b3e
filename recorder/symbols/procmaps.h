/* SPDX-License-Identifier: MIT */
/*
 * procmaps.h - a process's mappings, read from /proc/PID/maps; the symbol
 * cache and the unwinder look files up by them.
 */
#ifndef FR_PROCMAPS_H
#define FR_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One mapping line of /proc/PID/maps. */
struct fr_mapping {
	uint64_t start, end, pgoff;
	uint64_t dev;		/* makedev(major, minor) */
	uint64_t inode;
	uint32_t prot;		/* PROT_READ/WRITE/EXEC bits */
	char *path;		/* NULL for anonymous; "[vdso]", "[heap]" kept */
	bool deleted;		/* " (deleted)" was stripped from path */
	bool path_shared;	/* path is the previous mapping's */
};

struct procmaps {
	size_t n;
	struct fr_mapping *m;	/* sorted by start */
	uint64_t dropped;	/* mappings the bounds left out */
	uint64_t bytes;		/* what the table holds on the heap */
};

/*
 * What a process image keeps of its maps: its executable mappings only
 * (what frames are in), and at most so many of them and of their paths,
 * whatever a process maps (64k mappings, or long names).
 */
struct procmaps_bounds {
	bool exec_only;
	size_t max_maps;
	size_t max_path_bytes;
};

#define FR_IMAGE_MAPS_MAX	4096
#define FR_IMAGE_PATH_BYTES	(256U << 10)

/*
 * procmaps__read_bounded() - procmaps__read_at() within @b (NULL: none);
 * what the bounds left out is counted in ->dropped.
 */
struct procmaps *procmaps__read_bounded(const char *procdir, const struct procmaps_bounds *b);

/*
 * procmaps__read_image() - what frames can be in: the executable mappings
 * of the process at @procdir, within FR_IMAGE_MAPS_MAX and
 * FR_IMAGE_PATH_BYTES.
 */
struct procmaps *procmaps__read_image(const char *procdir);

/*
 * procmaps__read() - read /proc/@pid/maps.
 * Returns a new table, or NULL with errno set (ENOENT: no such process).
 */
struct procmaps *procmaps__read(int pid);

/*
 * procmaps__read_at() - the same from "@procdir/maps", where @procdir is
 * "/proc/PID" or "/proc/PID/task/TID" (the thread view works when the
 * thread-group leader has exited and its own maps read empty).
 */
struct procmaps *procmaps__read_at(const char *procdir);

/*
 * procmaps__parse() - parse text in the /proc/PID/maps format from @f.
 * Lines that do not parse are skipped. Returns a new table sorted by start,
 * or NULL with errno set.
 */
struct procmaps *procmaps__parse(FILE *f);

/*
 * procmaps__find() - the mapping with start <= @addr < end, or NULL.
 */
const struct fr_mapping *procmaps__find(const struct procmaps *pm,
					uint64_t addr);

void procmaps__free(struct procmaps *pm);

#endif
