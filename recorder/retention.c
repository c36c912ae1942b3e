// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * retention.c - remove the oldest dumps beyond the limits. See retention.h.
 */
#include <ctype.h>
#include <stdbool.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "retention.h"

struct entry {
	char *name;
	uint64_t size;
};

/*
 * fr_is_dump_name() - does @name look like "flightrec-YYYYmmddTHHMMSS.mmmZ-
 * <tag>.frd", as the dumper names files? (Names sort by time.)
 */
int fr_is_dump_name(const char *name)
{
	static const char *pat = "flightrec-########T######.###Z-";
	size_t n = strlen(name), k = strlen(pat);

	if (n <= k + strlen(FR_DUMP_SUFFIX) || strcmp(name + n - strlen(FR_DUMP_SUFFIX), FR_DUMP_SUFFIX))
		return 0;
	for (size_t i = 0; i < k; i++)
		if (pat[i] == '#' ? !isdigit((unsigned char)name[i]) : name[i] != pat[i])
			return 0;
	return 1;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* List our dumps in @dirfd, oldest first. */
static int list(int dirfd, struct entry **out, size_t *n)
{
	struct entry *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	int fd = dup(dirfd);
	DIR *d;

	*n = 0;
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		struct stat st;

		if (!fr_is_dump_name(de->d_name) ||
		    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (*n == cap) {
			struct entry *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		v[*n].name = strdup(de->d_name);
		v[*n].size = st.st_size;
		if (v[*n].name)
			(*n)++;
	}
	closedir(d);
	qsort(v, *n, sizeof(*v), cmp_name);
	*out = v;
	return 0;
}

/*
 * retention__apply() - remove the oldest dumps in @dirfd until at most
 * @max_dumps remain and they total at most @max_bytes (0: no limit), never
 * removing @keep (the dump just written). Fills @res. Returns 0 or -errno
 * when the directory cannot be listed; unlink failures are in res->err.
 */
int retention__apply(int dirfd, uint32_t max_dumps, uint64_t max_bytes,
		     const char *keep, struct retention_result *res)
{
	struct entry *v = NULL;
	uint64_t total = 0;
	size_t n, count;
	int err;

	memset(res, 0, sizeof(*res));
	err = list(dirfd, &v, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		total += v[i].size;
	count = n;
	for (size_t i = 0; i < n; i++) {
		bool over = (max_dumps && count > max_dumps) || (max_bytes && total > max_bytes);

		if (!over)
			break;
		if (keep && !strcmp(v[i].name, keep))
			continue;
		if (unlinkat(dirfd, v[i].name, 0)) {
			if (!res->err)
				res->err = -errno;
			continue;
		}
		if (res->removed < FR_RETENTION_REPORT)
			snprintf(res->names[res->removed], sizeof(res->names[0]), "%s", v[i].name);
		res->removed++;
		res->removed_bytes += v[i].size;
		count--;
		total -= v[i].size;
	}
	res->kept = count;
	res->kept_bytes = total;
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	return 0;
}
