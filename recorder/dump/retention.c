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

/*
 * fr_dump_dir_each() - call @fn for each regular file in @dirfd named as
 * the daemon names its dumps (with @temps: their "<name>.tmp" files
 * instead). Links and other files are never looked at further. Returns 0,
 * the first negative value of @fn, or -errno.
 */
int fr_dump_dir_each(int dirfd, bool temps, fr_dump_file_fn fn, void *ctx)
{
	int fd = dup(dirfd), err = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	rewinddir(d);
	while (!err && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char base[256];
		struct stat st;

		if (temps) {
			if (len < 5 || len >= sizeof(base) || strcmp(de->d_name + len - 4, ".tmp"))
				continue;
			memcpy(base, de->d_name, len - 4);
			base[len - 4] = 0;
		} else if (len < sizeof(base)) {
			memcpy(base, de->d_name, len + 1);
		} else {
			continue;
		}
		if (!fr_is_dump_name(base) ||
		    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		err = fn(ctx, de->d_name, &st);
	}
	closedir(d);
	return err;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

struct listing {
	struct entry *v;
	size_t n, cap;
};

static int add_entry(void *ctx, const char *name, const struct stat *st)
{
	struct listing *l = ctx;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct entry *nv = realloc(l->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = cap;
	}
	l->v[l->n].name = strdup(name);
	l->v[l->n].size = st->st_size;
	if (!l->v[l->n].name)
		return -ENOMEM;
	l->n++;
	return 0;
}

/* List our dumps in @dirfd, oldest first. */
static int list(int dirfd, struct entry **out, size_t *n)
{
	struct listing l = {};
	int err = fr_dump_dir_each(dirfd, false, add_entry, &l);

	if (err && err != -ENOMEM) {
		free(l.v);
		return err;
	}
	if (l.n)	/* l.v is NULL in an empty directory */
		qsort(l.v, l.n, sizeof(*l.v), cmp_name);
	*out = l.v;
	*n = l.n;
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
