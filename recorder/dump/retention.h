/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * retention.h - keep the output directory within [output] max_dumps and
 * max_bytes by removing the oldest dumps first. Only regular files named
 * like the daemon names its dumps are counted or touched.
 */
#ifndef FR_RETENTION_H
#define FR_RETENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FR_RETENTION_REPORT	32	/* removals named in the result */

struct retention_result {
	uint32_t kept;
	uint64_t kept_bytes;
	uint32_t removed;
	uint64_t removed_bytes;
	char names[FR_RETENTION_REPORT][256];	/* the first removals */
	int err;				/* first unlink failure, or 0 */
};

int retention__apply(int dirfd, uint32_t max_dumps, uint64_t max_bytes,
		     const char *keep, struct retention_result *res);
int fr_is_dump_name(const char *name);

struct stat;
/* fr_dump_file_fn - one of the daemon's files; return 0 to go on, <0 to stop. */
typedef int (*fr_dump_file_fn)(void *ctx, const char *name, const struct stat *st);
int fr_dump_dir_each(int dirfd, bool temps, fr_dump_file_fn fn, void *ctx);

#endif /* FR_RETENTION_H */
