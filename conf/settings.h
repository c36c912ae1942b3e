/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * settings.h - the config's data: struct fr_config and its triggers, the
 * limits on them, and the value syntax every part shares (durations,
 * sizes, the on_dump command line; schema.c implements it). config.h is
 * the API that loads, copies and renders it.
 */
#ifndef FR_CONF_SETTINGS_H
#define FR_CONF_SETTINGS_H

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
/* Most words of the [output] on_dump command (the dump's path not counted). */
#define FR_CONF_COMMAND_WORDS_MAX	32

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
	int32_t oom_score_adj;	/* 'oom_score_adj', the daemon's own, set at start; default -900; -1000..1000 */
	bool unwind_kernel_tables;	/* 'unwind_kernel_tables', default true: tables built in the kernel (6.7+) */
	bool python;		/* 'python', default true: Python frames walked and named */
	uint64_t unwind_bytes;	/* 'unwind_memory', kernel memory for unwind rows, default 40M; 0 = off (frame pointers only), else 1M..1G */
	uint64_t cache_bytes;	/* 'cache_memory', the symbol cache's, images' and line handles' budget, default 64M; 8M..4G */
	/* [output] */
	char *directory;	/* 'directory', default /var/lib/flightrec; absolute path */
	uint32_t max_dumps;	/* 'max_dumps', default 50; 0..1000000, 0 = no limit */
	uint64_t max_bytes;	/* 'max_bytes', default 1G; 0..1024G, 0 = no limit */
	char *group;		/* 'group' that may read dumps (files 0640, directory 0750, owned by it); NULL (default) = none; must exist */
	gid_t group_gid;	/* its gid, looked up at load; meaningful only when group != NULL */
	char *on_dump;		/* 'on_dump', command run after each durable dump with the dump's path appended as its last argument, never through a shell; NULL (default) = none. As written: split it with conf_split_command() */
	uint64_t on_dump_timeout_ns; /* 'on_dump_timeout', default 60s; 1s..1h; the on_dump command is killed after this long */
	uint64_t resolve_timeout_ns; /* 'resolve_timeout', default 250ms; 10ms..10s; a dump's per-process reads stop after this long, each /proc worker read's binaries after 4 times as long */
	/* [control] */
	char *control_socket;	/* 'socket', default /run/flightrec/control.sock; absolute path */
	/* [privacy] */
	bool privacy_cmdline;	/* 'cmdline', default true; false: command lines are never read or stored */
	/* [memory] */
	bool rss_ledger;	/* 'rss_ledger', default true: the RSS ledger (rss_stat) */
	uint64_t rss_step;	/* 'rss_step', default 4M; 4K..1G */
	uint32_t rss_step_pct;	/* 'rss_step_percent', default 2; 0..100 */
	uint64_t rss_max_age_ns; /* 'rss_max_age', default 1s; 10ms..60s */
	uint32_t memory_cgroups; /* 'cgroups', default 64; 0..4096: memory cgroups read once a second */
	/* [stalls] */
	bool stalls;		/* 'stalls', default true: reclaim, compaction and throttle stalls */
	uint64_t min_stall_ns;	/* 'min_stall', default 1ms; 0..10s: shorter stalls are only summed */
	bool offcpu;		/* 'offcpu', default true: time blocked off the CPU (D state) */
	uint64_t min_block_ns;	/* 'min_block', default 1ms; 0..10s: shorter blocks are only summed */
	bool offcpu_sleep;	/* 'offcpu_sleep', default false: interruptible (S) sleep too */
	/* [trigger NAME] sections; none by default */
	struct fr_trigger_conf *triggers;	/* in file order */
	size_t ntriggers;
};

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

/*
 * conf_split_command() - split the command line @cmd (the [output] on_dump
 * syntax) into words, as the daemon passes them to execv(2); no shell is
 * involved. Words are separated by spaces and tabs; double quotes group
 * ("" is an empty word), a backslash takes the next character literally,
 * inside or outside quotes. Nothing else is special: no $, globs or ~.
 *
 * Returns 0 with *@argv a malloc'd, NULL-terminated array of malloc'd words
 * (free it with conf_free_argv()) and *@argc their number, 1..
 * FR_CONF_COMMAND_WORDS_MAX; -EINVAL for no words, an unbalanced quote, a
 * backslash at the end, more than FR_CONF_COMMAND_WORDS_MAX words, or a NULL
 * argument; -ENOMEM. On error *@argv and *@argc are left alone.
 */
int conf_split_command(const char *cmd, char ***argv, int *argc);

/* conf_free_argv() - free an array from conf_split_command(); accepts NULL. */
void conf_free_argv(char **argv);

#endif /* FR_CONF_SETTINGS_H */
