/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * outdir.h - the output directory, opened without following symlinks and
 * only if it is safe: a directory owned by us, writable by nobody else.
 * Created (0700, or 0750 for a dump group) when missing.
 */
#ifndef FR_OUTDIR_H
#define FR_OUTDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct outdir_opts {
	bool group;		/* dumps are readable by group gid */
	gid_t gid;
};

int outdir__open(const char *path, const struct outdir_opts *o, char *err, size_t errlen);
int outdir__clean_temps(int dirfd, char names[][256], int max);

#endif /* FR_OUTDIR_H */
