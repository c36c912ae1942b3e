/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.h - flightrecd's configuration: an INI file (parsed by inih) checked
 * against one schema table, with built-in defaults for every key.
 *
 * A struct fr_config is plain data owned by its creator. Loading never
 * touches global state, so a new config can be loaded (on SIGHUP) while the
 * old one is still in use.
 */
#ifndef FR_CONF_CONFIG_H
#define FR_CONF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FR_CONF_DEFAULT_PATH	"/etc/flightrec/flightrec.conf"
#define FR_CONF_ERR_MAX		512
/* Longest NAME of a [trigger NAME] section. */
#define FR_CONF_TRIGGER_NAME_MAX	48
/* Most [trigger NAME] sections a config holds. */
#define FR_CONF_TRIGGERS_MAX	256

enum fr_trig_type { FR_TRIG_PSI = 1, FR_TRIG_OOM, FR_TRIG_SIGNAL };
/* Also defined, identically, in triggers/psi.h: whichever comes first wins. */
#ifndef FR_PSI_ENUMS
#define FR_PSI_ENUMS
enum fr_psi_resource { FR_PSI_CPU = 0, FR_PSI_MEMORY, FR_PSI_IO };
enum fr_psi_kind { FR_PSI_SOME = 0, FR_PSI_FULL };
#endif

/*
 * One [trigger NAME] section. Keys that do not apply to the type are 0 (or
 * NULL); keys that apply and were not set hold their defaults.
 */
struct fr_trigger_conf {
	char *name;			/* NAME of [trigger NAME] */
	unsigned line;			/* line of the section header */
	enum fr_trig_type type;		/* 'type' = psi | oom | signal (required) */
	enum fr_psi_resource resource;	/* psi: 'resource' = memory | cpu | io (required) */
	enum fr_psi_kind kind;		/* psi: 'kind' = some | full (default some) */
	uint64_t stall_ns;		/* psi: 'stall' (required), 0 < stall <= window */
	uint64_t window_ns;		/* psi: 'window' (default 2s), 500ms..10s */
	char *cgroup;			/* psi: 'cgroup', optional absolute path of a cgroup v2 directory; NULL = system-wide /proc/pressure */
	uint64_t pre_ns;		/* 'pre': history before the trigger; 0 = the [recorder] window; must be <= [recorder] window */
	uint64_t post_ns;		/* 'post': keep recording this long after firing; default 0; 0..60s */
	uint64_t cooldown_ns;		/* 'cooldown': default 60s for psi and oom, 0 for signal; 0..24h */
	uint32_t max_per_hour;		/* 'max_per_hour': default 10 for psi and oom, 0 (no limit) for signal; 0..3600 */
};

/* What a load checks about the running system. */
struct fr_config_env {
	/*
	 * CAP_SYS_RESOURCE is in the effective set of whoever opens the PSI
	 * files; without it the kernel takes only windows of N * 2s.
	 */
	bool cap_sys_resource;
};

struct fr_config {
	char *path;		/* file it was loaded from, or NULL for built-in defaults */
	/* [recorder] */
	uint64_t window_ns;	/* 'window', default 30s; accepted 1s..24h */
	uint64_t memory_bytes;	/* 'memory', default 256M; accepted 4M..64G */
	uint32_t frequency;	/* 'frequency', default 99; accepted 1..10000 (Hz per CPU) */
	uint64_t ring_bytes;	/* 'ring', BPF ring buffer size, default 0 = automatic (from frequency and CPUs); else a power of two, 16K..1G */
	/* [output] */
	char *directory;	/* 'directory', default /var/lib/flightrec; absolute path */
	uint32_t max_dumps;	/* 'max_dumps', default 50; 0..1000000, 0 = no limit */
	uint64_t max_bytes;	/* 'max_bytes', default 1G; 0..1024G, 0 = no limit */
	char *group;		/* 'group' that may read dumps (files 0640, directory 0750, owned by it); NULL (default) = none; must exist */
	gid_t group_gid;	/* its gid, looked up at load; meaningful only when group != NULL */
	/* [control] */
	char *control_socket;	/* 'socket', default /run/flightrec/control.sock; absolute path */
	/* [privacy] */
	bool privacy_cmdline;	/* 'cmdline', default true; false: command lines are never read or stored */
	/* [trigger NAME] sections; none by default */
	struct fr_trigger_conf *triggers;	/* in file order */
	size_t ntriggers;
};

/* config__new() - a config holding the built-in defaults; NULL + errno. */
struct fr_config *config__new(void);

/* config__free() - release @cfg and its strings; accepts NULL. */
void config__free(struct fr_config *cfg);

/*
 * config__load() - load @path over the values already in @cfg.
 *
 * Returns 0, or -errno: -EINVAL for any content error, -ENOENT, -EACCES, ...
 * when the file cannot be opened or read, -EPERM for an unsafe file (not a
 * regular file, group- or world-writable, owned by someone else), -EFBIG for
 * an oversized one, -ENOMEM. On error one human-readable line is written to
 * @err (@errlen bytes, FR_CONF_ERR_MAX is enough; @err may be NULL) and
 * @cfg is left unchanged. On success @cfg->path is set to @path.
 *
 * A [trigger NAME] section is one unit: it replaces a trigger of that NAME
 * already in @cfg (keeping its place), or adds one at the end; triggers the
 * file does not name are kept. Checks that depend on the running system
 * (CAP_SYS_RESOURCE for PSI windows, that a trigger's cgroup exists, that
 * [output] group exists) use the calling process, the live file system and
 * the group database, and apply to what this file sets; the gid of a group
 * this file names is stored in @cfg->group_gid.
 */
int config__load(struct fr_config *cfg, const char *path, char *err,
		 size_t errlen);

/*
 * config__load_env() - config__load() judging the system-dependent rules by
 * @env instead of the calling process (@env NULL: the calling process).
 * Same returns.
 */
int config__load_env(struct fr_config *cfg, const char *path,
		     const struct fr_config_env *env, char *err, size_t errlen);

/*
 * config__render() - the effective config as INI text, every key included,
 * and every trigger with every key of its type (an optional key not set,
 * [output] group or a psi trigger's cgroup, is a '# key: not set' comment).
 * Loading the text gives back an identical config, save for the path, each
 * trigger's line and group_gid (looked up again). Returns a malloc'd
 * string, or NULL + errno: EINVAL if a value cannot be written so that it
 * loads back unchanged (out of range, a directory with a trailing blank, a
 * trigger breaking a rule, ...), ENOMEM. The rules that depend on the running
 * system (capability, cgroup directories, that the group exists) are not
 * checked.
 */
char *config__render(const struct fr_config *cfg);

/* config__dup() - deep copy of @cfg; NULL + errno. */
struct fr_config *config__dup(const struct fr_config *cfg);

/*
 * conf_parse_duration() - "250ms", "30s", "2m", "1h" into nanoseconds. A
 * non-negative decimal integer and a unit suffix (ms, s, m, h), nothing else.
 * Returns 0, -EINVAL for bad syntax, -ERANGE on overflow; @ns is only
 * written on success.
 */
int conf_parse_duration(const char *s, uint64_t *ns);

/*
 * conf_parse_size() - "4096", "64K", "256M", "2G" (also KiB, MiB, GiB;
 * powers of 1024) into bytes. Returns 0, -EINVAL for bad syntax, -ERANGE on
 * overflow; @bytes is only written on success.
 */
int conf_parse_size(const char *s, uint64_t *bytes);

#endif /* FR_CONF_CONFIG_H */
