// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgroup.c - cgroup identity and memory cgroup readings. See cgroup.h.
 *
 * The parsing is hand-written: /proc/PID/cgroup and mountinfo are a few
 * lines of fixed fields, and libcgroup (the library that parses them)
 * would bring a configuration daemon's worth of code for that.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "util.h"

/* The controllers field of a /proc/PID/cgroup line names @want. */
static bool has_controller(const char *ctl, size_t n, const char *want)
{
	size_t wl = strlen(want);

	for (const char *p = ctl; p < ctl + n;) {
		const char *c = memchr(p, ',', ctl + n - p);
		size_t len = c ? (size_t)(c - p) : (size_t)(ctl + n - p);

		if (len == wl && !memcmp(p, want, wl))
			return true;
		if (!c)
			break;
		p = c + 1;
	}
	return false;
}

static char *dup_line(const char *s, const char *end)
{
	char *o = malloc(end - s + 1);

	if (o) {
		memcpy(o, s, end - s);
		o[end - s] = 0;
	}
	return o;
}

int cgroup__parse(const char *text, struct cgroup_ident *out)
{
	char id[128];

	memset(out, 0, sizeof(*out));
	for (const char *l = text; *l;) {
		const char *nl = strchrnul(l, '\n'), *c1 = memchr(l, ':', nl - l), *c2;

		c2 = c1 ? memchr(c1 + 1, ':', nl - c1 - 1) : NULL;
		if (c2) {
			const char *path = c2 + 1;

			if (c1 - l == 1 && *l == '0' && c2 == c1 + 1 && !out->v2) {
				if (!(out->v2 = dup_line(path, nl)))
					goto nomem;
			} else if (has_controller(c1 + 1, c2 - c1 - 1, "memory") && !out->memcg) {
				if (!(out->memcg = dup_line(path, nl)))
					goto nomem;
				out->memcg_v1 = true;
			}
		}
		l = *nl ? nl + 1 : nl;
	}
	if (!out->memcg && out->v2 && !(out->memcg = strdup(out->v2)))
		goto nomem;
	if ((out->memcg && cgroup__container_id(out->memcg, id, sizeof(id))) ||
	    (out->v2 && cgroup__container_id(out->v2, id, sizeof(id))))
		if (!(out->container = strdup(id)))
			goto nomem;
	return 0;
nomem:
	cgroup__ident_free(out);
	return -ENOMEM;
}

void cgroup__ident_free(struct cgroup_ident *c)
{
	if (!c)
		return;
	free(c->v2);
	free(c->memcg);
	free(c->container);
	memset(c, 0, sizeof(*c));
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

int cgroup__container_id(const char *path, char *out, size_t len)
{
	const char *comp = path;

	/* The innermost component that carries one wins (kubepods/pod.../ID). */
	for (const char *p = path;; p++) {
		if (*p == '/' || !*p) {
			size_t n = p - comp;

			for (size_t i = 0; i + 64 <= n; i++) {
				size_t k = 0;

				while (k < 64 && is_hex(comp[i + k]))
					k++;
				if (k == 64 && (i + 64 == n || !is_hex(comp[i + 64])) &&
				    (i == 0 || !is_hex(comp[i - 1]))) {
					if (len < 65)
						return 0;
					memcpy(out, comp + i, 64);
					out[64] = 0;
					return 1;
				}
			}
			if (n > 14 && !strncmp(comp, "machine-", 8) &&
			    !strncmp(comp + n - 6, ".scope", 6) && n - 14 < len && !*p) {
				memcpy(out, comp + 8, n - 14);
				out[n - 14] = 0;
				return 1;
			}
			comp = p + 1;
		}
		if (!*p)
			break;
	}
	return 0;
}

static struct {
	pthread_once_t once;
	char mem[PATH_MAX];
	char v2[PATH_MAX];
	bool mem_v1;
} roots = { .once = PTHREAD_ONCE_INIT };

/* mountinfo: "id parent maj:min root mountpoint opts [tags] - fstype source superopts". */
static void read_roots(void)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *dash = strstr(line, " - "), fstype[32], super[1024] = "";

		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(dash + 3, "%31s %*s %1023s", fstype, super) < 1)
			continue;
		if (!strcmp(fstype, "cgroup2") && !roots.v2[0])
			fr_strlcpy(roots.v2, mnt, sizeof(roots.v2));
		else if (!strcmp(fstype, "cgroup") && has_controller(super, strlen(super), "memory")) {
			fr_strlcpy(roots.mem, mnt, sizeof(roots.mem));
			roots.mem_v1 = true;
		}
	}
	fclose(f);
	if (!roots.mem[0] && roots.v2[0])
		fr_strlcpy(roots.mem, roots.v2, sizeof(roots.mem));
}

int cgroup__memory_root(char *buf, size_t len, bool *v1)
{
	pthread_once(&roots.once, read_roots);
	if (!roots.mem[0])
		return -ENOENT;
	fr_strlcpy(buf, roots.mem, len);
	if (v1)
		*v1 = roots.mem_v1;
	return 0;
}

int cgroup__v2_root(char *buf, size_t len)
{
	pthread_once(&roots.once, read_roots);
	if (!roots.v2[0])
		return -ENOENT;
	fr_strlcpy(buf, roots.v2, len);
	return 0;
}

/* nftw() has no context argument: one walk at a time. */
static pthread_mutex_t walk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t id;
	char found[PATH_MAX];
	size_t seen;
} walk;

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type != FTW_D)
		return 0;
	if ((uint64_t)st->st_ino == walk.id) {
		fr_strlcpy(walk.found, path, sizeof(walk.found));
		return 1;
	}
	return ++walk.seen >= FR_CGROUP_WALK_MAX ? 2 : 0;
}

int cgroup__path_of_id(uint64_t id, char *buf, size_t len)
{
	char root[PATH_MAX];
	int r;

	if (cgroup__memory_root(root, sizeof(root), NULL))
		return -ENOENT;
	pthread_mutex_lock(&walk_lock);
	walk.id = id;
	walk.found[0] = 0;
	walk.seen = 0;
	r = nftw(root, walk_one, 16, FTW_PHYS | FTW_MOUNT);
	if (r == 1) {
		const char *rel = walk.found + strlen(root);

		fr_strlcpy(buf, *rel ? rel : "/", len);
	}
	pthread_mutex_unlock(&walk_lock);
	return r == 1 ? 0 : -ENOENT;
}

/* Read file @name of directory @dir into @buf. Returns its length or -errno. */
static ssize_t read_in(const char *dir, const char *name, char *buf, size_t cap)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = 0;
	close(fd);
	return n;
}

/* A single number ("max": @max_val), or -errno. */
static int read_u64(const char *dir, const char *name, uint64_t max_val, uint64_t *v)
{
	char buf[64];
	ssize_t n = read_in(dir, name, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	if (!strncmp(buf, "max", 3)) {
		*v = max_val;
		return 0;
	}
	*v = strtoull(buf, NULL, 10);
	return 0;
}

/* The value of "@key N" lines in a flat-keyed file's text. */
static uint64_t key_value(const char *text, const char *key)
{
	size_t kl = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, key, kl) && l[kl] == ' ')
			return strtoull(l + kl + 1, NULL, 10);
	return 0;
}

int cgroup__read_memory(const char *path, struct fr_dump_memcg *out)
{
	char root[PATH_MAX], dir[PATH_MAX], text[8192];
	bool v1;
	int err;

	memset(out, 0, sizeof(*out));
	if (cgroup__memory_root(root, sizeof(root), &v1))
		return -ENOENT;
	if (snprintf(dir, sizeof(dir), "%s%s", root, path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	if (v1) {
		out->flags |= FR_DMCG_V1;
		err = read_u64(dir, "memory.usage_in_bytes", UINT64_MAX, &out->usage);
		if (err)
			return err;
		read_u64(dir, "memory.limit_in_bytes", UINT64_MAX, &out->limit);
		read_u64(dir, "memory.failcnt", 0, &out->ev_max);
		if (read_in(dir, "memory.stat", text, sizeof(text)) > 0) {
			out->anon = key_value(text, "total_rss");
			out->file = key_value(text, "total_cache");
		}
		/* v1's "unlimited" is the page counter's maximum, rounded to pages. */
		if (out->limit >= (UINT64_MAX >> 2))
			out->flags |= FR_DMCG_UNLIMITED;
		return 0;
	}
	err = read_u64(dir, "memory.current", UINT64_MAX, &out->usage);
	if (err)
		return err;
	read_u64(dir, "memory.max", UINT64_MAX, &out->limit);
	if (out->limit == UINT64_MAX)
		out->flags |= FR_DMCG_UNLIMITED;
	if (read_in(dir, "memory.events", text, sizeof(text)) > 0) {
		out->ev_high = key_value(text, "high");
		out->ev_max = key_value(text, "max");
		out->ev_oom = key_value(text, "oom");
		out->ev_oom_kill = key_value(text, "oom_kill");
	}
	if (read_in(dir, "memory.stat", text, sizeof(text)) > 0) {
		out->anon = key_value(text, "anon");
		out->file = key_value(text, "file");
	}
	return 0;
}
