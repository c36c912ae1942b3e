/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup.h - what an incarnation's cgroups are, and what a memory cgroup
 * holds: /proc/PID/cgroup parsed (the v2 path, the memory controller's
 * path on v1 or v2, a container id the path carries), the mounts of the
 * hierarchies, a memory cgroup found by its kernfs id (the OOM dossier),
 * and a memory cgroup's usage, limit and event counters.
 */
#ifndef FR_CGROUP_H
#define FR_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format.h"

struct cgroup_ident {
	char *v2;		/* the "0::" path; NULL: none */
	char *memcg;		/* the memory controller's path: the v1 "memory" line's, else v2 */
	bool memcg_v1;
	char *container;	/* a container id found in a path; NULL: none */
};

/*
 * cgroup__parse() - parse the text of /proc/PID/cgroup into @out (strings
 * of its own, cgroup__ident_free() releases them). Returns 0 or -ENOMEM.
 */
int cgroup__parse(const char *text, struct cgroup_ident *out);
void cgroup__ident_free(struct cgroup_ident *c);

/*
 * cgroup__container_id() - the container id @path carries: 64 hex digits
 * in a component (docker, containerd, CRI-O, podman; as a directory or a
 * systemd scope "docker-ID.scope"), or the machine name of a systemd
 * "machine-NAME.scope". Returns 1 with it in @out, 0 if none.
 */
int cgroup__container_id(const char *path, char *out, size_t len);

/*
 * cgroup__memory_root() - the mount point of the hierarchy that has the
 * memory controller (v1 "memory", else the cgroup2 mount); @v1 says which.
 * Read once from /proc/self/mountinfo. Returns 0, or -ENOENT.
 */
int cgroup__memory_root(char *buf, size_t len, bool *v1);

/* cgroup__v2_root() - the cgroup2 mount point. Returns 0, or -ENOENT. */
int cgroup__v2_root(char *buf, size_t len);

/*
 * cgroup__path_of_id() - the path, under the memory hierarchy, of the
 * cgroup whose kernfs id (its directory's inode number) is @id. Walks at
 * most FR_CGROUP_WALK_MAX directories. Returns 0, -ENOENT if not found.
 */
#define FR_CGROUP_WALK_MAX	20000
int cgroup__path_of_id(uint64_t id, char *buf, size_t len);

/*
 * cgroup__read_memory() - memory cgroup @path's (under the memory
 * hierarchy) usage, limit, anon and file, and event counters (v2
 * memory.events; v1 failcnt as max). Returns 0, or -errno of the usage
 * file (the cgroup went away).
 */
int cgroup__read_memory(const char *path, struct fr_dump_memcg *out);

#endif /* FR_CGROUP_H */
