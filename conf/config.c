/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.c - the INI config: schema table, defaults, validation, rendering.
 *
 * We read the file ourselves and hand it to inih one line at a time through
 * a reader callback. Checking the open descriptor (type, mode, owner) avoids
 * a race with the path; counting lines in the reader gives exact line
 * numbers, which inih does not pass to the handler; seeing each line first
 * lets us catch [section] lines (inih reports none) and refuse what inih
 * would silently mangle: over-long lines (it splits them), NUL bytes, and
 * indented lines (it glues them to the previous value as a continuation; we
 * strip leading blanks, so an indented key is just a key).
 *
 * inih's tunables are process-wide variables in Debian's build; this module
 * reads none of them and changes none of them. All parse state lives on the
 * caller's stack, so loads may run concurrently.
 *
 * [trigger NAME] sections are named and may appear many times. Their keys are
 * rows of the same schema, flagged with the trigger types they apply to, and
 * their offsets point into struct fr_trigger_conf. Whether a key fits the
 * type, which keys a type needs, and the defaults (some differ by type) can
 * only be settled once the section is complete, so each trigger section is
 * checked when the next section starts or the file ends. Rules that span
 * sections ('pre' against the [recorder] window, one signal trigger) are
 * checked after the whole file.
 *
 * An optional key (a schema row without a default) holds NULL until a file
 * sets it; once set, a later file can change it but not unset it.
 *
 * [output] on_dump is a command line that is never given to a shell: it is
 * kept as written, split into words by conf_split_command() both here (to
 * check it) and by the daemon (to run it), and compared and rendered as its
 * list of words.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <ini.h>
#include <linux/capability.h>

#include "config.h"

#define FR_CONF_NELEM(a)	(sizeof(a) / sizeof((a)[0]))
/* Longest line without its newline; inih needs 3 more bytes (\r, \n, NUL). */
#define FR_CONF_LINE_MAX	(INI_MAX_LINE - 3)
/* Largest config file we read. */
#define FR_CONF_FILE_MAX	(1024 * 1024)

#define FR_CONF_USEC		1000ULL
#define FR_CONF_MSEC		(1000 * FR_CONF_USEC)
#define FR_CONF_SEC		(1000 * FR_CONF_MSEC)
#define FR_CONF_MINUTE		(60 * FR_CONF_SEC)
#define FR_CONF_HOUR		(60 * FR_CONF_MINUTE)
#define FR_CONF_KIB		1024ULL
#define FR_CONF_MIB		(1024 * FR_CONF_KIB)
#define FR_CONF_GIB		(1024 * FR_CONF_MIB)
#define FR_CONF_TIB		(1024 * FR_CONF_GIB)
/* Longest path a Unix socket can be bound to. */
#define FR_CONF_SOCKET_MAX	(sizeof(((struct sockaddr_un *)0)->sun_path) - 1)
/* Longest [output] group name; NSS sets no limit, a config line does. */
#define FR_CONF_GROUP_NAME_MAX	255
/* Largest buffer getgrnam_r(3) gets for one group (its member list). */
#define FR_CONF_GROUP_BUF_MAX	(16 * 1024 * 1024)
/* Without CAP_SYS_RESOURCE the kernel takes PSI windows of N * this only. */
#define FR_CONF_PSI_UNPRIV_STEP	(2 * FR_CONF_SEC)

#define FR_CONF_SYNTAX_ERROR \
	"syntax error; expected '[section]' or 'key = value'"

/* Value types. Each writes one C type into its struct. */
enum conf_type {
	CONF_DURATION,	/* uint64_t nanoseconds; min/max in ns */
	CONF_SIZE,	/* uint64_t bytes; min/max in bytes */
	CONF_U32,	/* uint32_t plain decimal number; min/max */
	CONF_S32,	/* int32_t decimal number, a '-' before it for a negative one; min/max as int64_t */
	CONF_PATH,	/* char *, malloc'd absolute path; min/max length */
	CONF_ENUM,	/* an enum (uint32_t-sized) named by one of @names */
	CONF_BOOL,	/* bool named by one of @names; rendered true or false */
	CONF_GROUP,	/* char *, malloc'd name of a group; its gid_t at @gid */
	CONF_COMMAND,	/* char *, malloc'd command line as written; at most @max words */
};

/* A word a CONF_ENUM or CONF_BOOL key accepts and the value it stands for. */
struct conf_name {
	const char *name;
	uint32_t value;
};

static const struct conf_name conf_trig_types[] = {
	{ "psi", FR_TRIG_PSI },
	{ "oom", FR_TRIG_OOM },
	{ "signal", FR_TRIG_SIGNAL },
};

/* Also the file names: <resource>.pressure */
static const struct conf_name conf_psi_resources[] = {
	{ "memory", FR_PSI_MEMORY },
	{ "cpu", FR_PSI_CPU },
	{ "io", FR_PSI_IO },
};

static const struct conf_name conf_psi_kinds[] = {
	{ "some", FR_PSI_SOME },
	{ "full", FR_PSI_FULL },
};

/* Rendering writes the first word of a value: true or false. */
static const struct conf_name conf_bool_names[] = {
	{ "true", 1 },
	{ "false", 0 },
	{ "yes", 1 },
	{ "no", 0 },
	{ "on", 1 },
	{ "off", 0 },
	{ "1", 1 },
	{ "0", 0 },
};

_Static_assert(sizeof(enum fr_trig_type) == sizeof(uint32_t) &&
	       sizeof(enum fr_psi_resource) == sizeof(uint32_t) &&
	       sizeof(enum fr_psi_kind) == sizeof(uint32_t),
	       "CONF_ENUM members are stored as uint32_t");

/* Trigger types as bits of conf_key.types. */
#define FR_CONF_T(trig_type)	(1u << (trig_type))
#define FR_CONF_T_PSI		FR_CONF_T(FR_TRIG_PSI)
#define FR_CONF_T_ALL		(FR_CONF_T(FR_TRIG_PSI) | FR_CONF_T(FR_TRIG_OOM) | \
				 FR_CONF_T(FR_TRIG_SIGNAL))

/* Trigger defaults that differ by type, indexed by enum fr_trig_type. */
static const char *const conf_cooldown_defs[] = {
	[FR_TRIG_PSI] = "60s",
	[FR_TRIG_OOM] = "60s",
	[FR_TRIG_SIGNAL] = "0s",
};

static const char *const conf_max_per_hour_defs[] = {
	[FR_TRIG_PSI] = "10",
	[FR_TRIG_OOM] = "10",
	[FR_TRIG_SIGNAL] = "0",
};

/*
 * One key of the schema. The default is written in file syntax and goes
 * through the same parser and range check as a value read from a file.
 *
 * Sections have no table of their own: the first row naming a section brings
 * it into being, and its row index identifies it. Rows with @types belong to
 * the named, multi-instance [trigger NAME] section: @offset is then relative
 * to struct fr_trigger_conf, and the key only exists for the trigger types in
 * @types.
 *
 * A numeric key with @zero also accepts 0 below @min (@zero says what 0
 * means); with @pow2 any other value must be a power of two.
 */
struct conf_key {
	const char *section;
	const char *name;
	enum conf_type type;
	uint64_t min;
	uint64_t max;
	const char *zero;		/* 0 is accepted and means this, or NULL */
	bool pow2;			/* values other than 0 are powers of two */
	const char *example;		/* said after what is accepted, or NULL */
	const char *def;		/* NULL: none (a required or optional key) */
	const char *const *type_def;	/* trigger keys: default by type, or NULL */
	const struct conf_name *names;	/* CONF_ENUM, CONF_BOOL: the words accepted */
	size_t nnames;
	size_t gid;			/* CONF_GROUP: offset of its gid_t */
	unsigned int types;		/* trigger keys: FR_CONF_T() of the types it fits */
	bool required;			/* trigger keys: the types it fits need it */
	size_t offset;
	const char *note;		/* said after what is accepted, or NULL */
	const char *help;
};

/* Non-zero when @member of @strct has the C type @type writes. */
#define FR_CONF_TYPE_OK(strct, type, member)				\
	_Generic(((strct *)0)->member,					\
		 uint64_t: (type) == CONF_DURATION || (type) == CONF_SIZE, \
		 uint32_t: (type) == CONF_U32 || (type) == CONF_ENUM,	\
		 int32_t: (type) == CONF_S32,				\
		 bool: (type) == CONF_BOOL,				\
		 char *: (type) == CONF_PATH || (type) == CONF_GROUP ||	\
			 (type) == CONF_COMMAND,				\
		 default: 0)

/* Offset of @member in @strct; a member of the wrong C type fails the build. */
#define FR_CONF_OFFSET(strct, type, member)				\
	(offsetof(strct, member) +					\
	 0 * sizeof(char[FR_CONF_TYPE_OK(strct, type, member) ? 1 : -1]))

/* One schema row of a plain section; more fields may follow (.note = ...). */
#define FR_CONF_KEY(_section, _name, _type, _min, _max, _def, _member, _help, ...) { \
	.section = (_section),						\
	.name = (_name),						\
	.type = (_type),						\
	.min = (_min),							\
	.max = (_max),							\
	.def = (_def),							\
	.offset = FR_CONF_OFFSET(struct fr_config, _type, _member),	\
	.help = (_help),						\
	__VA_ARGS__							\
}

/* One schema row of [trigger NAME]; range, default, ... follow as fields. */
#define FR_CONF_TRIG(_name, _type, _types, _member, _help, ...) {	\
	.section = "trigger",						\
	.name = (_name),						\
	.type = (_type),						\
	.types = (_types),						\
	.offset = FR_CONF_OFFSET(struct fr_trigger_conf, _type, _member), \
	.help = (_help),						\
	__VA_ARGS__							\
}

#define FR_CONF_NAMES(table)	.names = (table), .nnames = FR_CONF_NELEM(table)

/* Where a CONF_GROUP row of struct fr_config stores the gid: a gid_t @member. */
#define FR_CONF_GID(member)						\
	.gid = offsetof(struct fr_config, member) +			\
	       0 * sizeof(char[_Generic(((struct fr_config *)0)->member, \
					gid_t: 1, default: -1)])

/* Rows the code refers to by name; the table is indexed by them. */
enum conf_row {
	CONF_RECORDER_WINDOW,
	CONF_RECORDER_MEMORY,
	CONF_RECORDER_FREQUENCY,
	CONF_RECORDER_RING,
	CONF_RECORDER_UNWIND_MEMORY,
	CONF_RECORDER_CACHE_MEMORY,
	CONF_RECORDER_OOM_SCORE_ADJ,
	CONF_OUTPUT_DIRECTORY,
	CONF_OUTPUT_MAX_DUMPS,
	CONF_OUTPUT_MAX_BYTES,
	CONF_OUTPUT_GROUP,
	CONF_OUTPUT_ON_DUMP,
	CONF_OUTPUT_ON_DUMP_TIMEOUT,
	CONF_OUTPUT_RESOLVE_TIMEOUT,
	CONF_CONTROL_SOCKET,
	CONF_PRIVACY_CMDLINE,
	CONF_MEMORY_RSS_LEDGER,
	CONF_MEMORY_RSS_STEP,
	CONF_MEMORY_RSS_STEP_PERCENT,
	CONF_MEMORY_RSS_MAX_AGE,
	CONF_MEMORY_CGROUPS,
	CONF_STALLS_STALLS,
	CONF_STALLS_MIN_STALL,
	CONF_STALLS_OFFCPU,
	CONF_STALLS_MIN_BLOCK,
	CONF_STALLS_OFFCPU_SLEEP,
	CONF_TRIG_TYPE,
	CONF_TRIG_RESOURCE,
	CONF_TRIG_KIND,
	CONF_TRIG_STALL,
	CONF_TRIG_WINDOW,
	CONF_TRIG_CGROUP,
	CONF_TRIG_PRE,
	CONF_TRIG_POST,
	CONF_TRIG_COOLDOWN,
	CONF_TRIG_MAX_PER_HOUR,
	CONF_NROWS
};

/* In rendering order; the rows of one section stay together. */
static const struct conf_key conf_keys[] = {
	[CONF_RECORDER_WINDOW] =
	FR_CONF_KEY("recorder", "window", CONF_DURATION,
		    FR_CONF_SEC, 24 * FR_CONF_HOUR, "30s", window_ns,
		    "how much recent history is kept in memory; a trigger dumps this window"),
	[CONF_RECORDER_MEMORY] =
	FR_CONF_KEY("recorder", "memory", CONF_SIZE,
		    4 * FR_CONF_MIB, 64 * FR_CONF_GIB, "256M", memory_bytes,
		    "memory for the in-memory window; the oldest events go first when it is full"),
	[CONF_RECORDER_FREQUENCY] =
	FR_CONF_KEY("recorder", "frequency", CONF_U32,
		    1, 10000, "99", frequency,
		    "CPU stack samples per second on each CPU, in Hz"),
	[CONF_RECORDER_RING] =
	FR_CONF_KEY("recorder", "ring", CONF_SIZE,
		    16 * FR_CONF_KIB, FR_CONF_GIB, "0", ring_bytes,
		    "BPF ring buffer the kernel hands events over in; a power of two; 0 = sized from frequency and CPU count",
		    .zero = "automatic", .pow2 = true, .example = "64K, 4M"),
	[CONF_RECORDER_UNWIND_MEMORY] =
	FR_CONF_KEY("recorder", "unwind_memory", CONF_SIZE,
		    FR_CONF_MIB, FR_CONF_GIB, "40M", unwind_bytes,
		    "kernel memory for the unwind rows that walk user stacks without frame pointers (8 bytes a row); 0 = off, frame pointers only",
		    .zero = "off", .example = "16M, 64M"),
	[CONF_RECORDER_CACHE_MEMORY] =
	FR_CONF_KEY("recorder", "cache_memory", CONF_SIZE,
		    8 * FR_CONF_MIB, 4 * FR_CONF_GIB, "64M", cache_bytes,
		    "one budget for what the daemon learns of processes: their binaries' symbols, their executable mappings and the DWARF line handles (at most half); least recently used first out",
		    .example = "32M, 256M"),
	[CONF_RECORDER_OOM_SCORE_ADJ] =
	FR_CONF_KEY("recorder", "oom_score_adj", CONF_S32,
		    (uint64_t)-1000, 1000, "-900", oom_score_adj,
		    "the daemon's own /proc/self/oom_score_adj, set at start: below user workloads, so that the OOM kill it records takes them first, but not immune",
		    .example = "-900, 0"),
	[CONF_OUTPUT_DIRECTORY] =
	FR_CONF_KEY("output", "directory", CONF_PATH,
		    1, PATH_MAX - 1, "/var/lib/flightrec", directory,
		    "directory the dumps are written to; an absolute path"),
	[CONF_OUTPUT_MAX_DUMPS] =
	FR_CONF_KEY("output", "max_dumps", CONF_U32,
		    0, 1000000, "50", max_dumps,
		    "after each dump, delete the oldest dumps beyond this many; 0 = no limit",
		    .note = "0 = no limit"),
	[CONF_OUTPUT_MAX_BYTES] =
	FR_CONF_KEY("output", "max_bytes", CONF_SIZE,
		    0, FR_CONF_TIB, "1G", max_bytes,
		    "after each dump, delete the oldest dumps until they fit in this size; 0 = no limit",
		    .note = "0 = no limit"),
	[CONF_OUTPUT_GROUP] =
	FR_CONF_KEY("output", "group", CONF_GROUP,
		    1, FR_CONF_GROUP_NAME_MAX, NULL, group,
		    "group that may read the dumps (files 0640, directory 0750); not set = root only",
		    FR_CONF_GID(group_gid), .note = "leave the key out for none"),
	[CONF_OUTPUT_ON_DUMP] =
	FR_CONF_KEY("output", "on_dump", CONF_COMMAND,
		    1, FR_CONF_COMMAND_WORDS_MAX, NULL, on_dump,
		    "command run after each dump, the dump's path appended as its last argument; no shell; not set = none",
		    .note = "leave the key out for none"),
	[CONF_OUTPUT_ON_DUMP_TIMEOUT] =
	FR_CONF_KEY("output", "on_dump_timeout", CONF_DURATION,
		    FR_CONF_SEC, FR_CONF_HOUR, "60s", on_dump_timeout_ns,
		    "the on_dump command is killed when it runs longer than this"),
	[CONF_OUTPUT_RESOLVE_TIMEOUT] =
	FR_CONF_KEY("output", "resolve_timeout", CONF_DURATION,
		    10 * FR_CONF_MSEC, 10 * FR_CONF_SEC, "250ms", resolve_timeout_ns,
		    "how long a dump may spend reading what processes own (perf maps, binaries) before it is written with what was resolved; the rest is counted in LOSS"),
	[CONF_CONTROL_SOCKET] =
	FR_CONF_KEY("control", "socket", CONF_PATH,
		    1, FR_CONF_SOCKET_MAX, "/run/flightrec/control.sock",
		    control_socket,
		    "Unix socket 'flightrec snapshot' and 'flightrec status' talk to; an absolute path"),
	[CONF_PRIVACY_CMDLINE] =
	FR_CONF_KEY("privacy", "cmdline", CONF_BOOL, 0, 1, "true",
		    privacy_cmdline,
		    "read and store process command lines; false = never read them",
		    FR_CONF_NAMES(conf_bool_names)),
	[CONF_MEMORY_RSS_LEDGER] =
	FR_CONF_KEY("memory", "rss_ledger", CONF_BOOL, 0, 1, "true",
		    rss_ledger,
		    "log every process's RSS counters (file, anon, swap, shmem) as they move, stamped by the kernel; false = RSS only at the snapshot and at death",
		    FR_CONF_NAMES(conf_bool_names)),
	[CONF_MEMORY_RSS_STEP] =
	FR_CONF_KEY("memory", "rss_step", CONF_SIZE,
		    4 * FR_CONF_KIB, FR_CONF_GIB, "4M", rss_step,
		    "log a counter again when it moved this much since it was last logged (or rss_step_percent of its value, if larger)",
		    .example = "1M, 16M"),
	[CONF_MEMORY_RSS_STEP_PERCENT] =
	FR_CONF_KEY("memory", "rss_step_percent", CONF_U32,
		    0, 100, "2", rss_step_pct,
		    "the step in percent of the value last logged, where that is larger than rss_step; 0 = rss_step only"),
	[CONF_MEMORY_RSS_MAX_AGE] =
	FR_CONF_KEY("memory", "rss_max_age", CONF_DURATION,
		    10 * FR_CONF_MSEC, 60 * FR_CONF_SEC, "1s", rss_max_age_ns,
		    "a change smaller than the step is logged at the latest this long after it"),
	[CONF_MEMORY_CGROUPS] =
	FR_CONF_KEY("memory", "cgroups", CONF_U32,
		    0, 4096, "64", memory_cgroups,
		    "memory cgroups whose usage, limit and events are read once a second (those of the window's processes, PSI-watched ones first); the rest are counted as skipped; 0 = none"),
	[CONF_STALLS_STALLS] =
	FR_CONF_KEY("stalls", "stalls", CONF_BOOL, 0, 1, "true", stalls,
		    "record each thread's stalls in direct reclaim, reclaim at its memory cgroup's limit, direct compaction and reclaim throttling, with the stack that stalled; false = none",
		    FR_CONF_NAMES(conf_bool_names)),
	[CONF_STALLS_MIN_STALL] =
	FR_CONF_KEY("stalls", "min_stall", CONF_DURATION,
		    0, 10 * FR_CONF_SEC, "1ms", min_stall_ns,
		    "stalls at least this long are recorded one by one; shorter ones are summed per process and kind (count and time); 0 = record all",
		    .example = "100us, 10ms"),
	[CONF_STALLS_OFFCPU] =
	FR_CONF_KEY("stalls", "offcpu", CONF_BOOL, 0, 1, "true", offcpu,
		    "record the time threads spend off the CPU blocked in an uninterruptible (D) wait, with the stack they waited in; false = none",
		    FR_CONF_NAMES(conf_bool_names)),
	[CONF_STALLS_MIN_BLOCK] =
	FR_CONF_KEY("stalls", "min_block", CONF_DURATION,
		    0, 10 * FR_CONF_SEC, "1ms", min_block_ns,
		    "blocks at least this long are recorded one by one; shorter ones are summed per process; 0 = record all",
		    .example = "100us, 10ms"),
	[CONF_STALLS_OFFCPU_SLEEP] =
	FR_CONF_KEY("stalls", "offcpu_sleep", CONF_BOOL, 0, 1, "false", offcpu_sleep,
		    "with offcpu, also interruptible (S) sleep: waiting for input, a whole-machine off-CPU profile; it captures a user stack at most context switches (see PERFORMANCE.md)",
		    FR_CONF_NAMES(conf_bool_names)),
	[CONF_TRIG_TYPE] =
	FR_CONF_TRIG("type", CONF_ENUM, FR_CONF_T_ALL, type,
		     "what fires it: psi (pressure stall), oom (an OOM kill) or signal (SIGUSR1)",
		     FR_CONF_NAMES(conf_trig_types), .required = true),
	[CONF_TRIG_RESOURCE] =
	FR_CONF_TRIG("resource", CONF_ENUM, FR_CONF_T_PSI, resource,
		     "psi: the resource whose pressure is watched",
		     FR_CONF_NAMES(conf_psi_resources), .required = true),
	[CONF_TRIG_KIND] =
	FR_CONF_TRIG("kind", CONF_ENUM, FR_CONF_T_PSI, kind,
		     "psi: some (some tasks stalled) or full (all non-idle tasks stalled at once)",
		     FR_CONF_NAMES(conf_psi_kinds), .def = "some"),
	[CONF_TRIG_STALL] =
	FR_CONF_TRIG("stall", CONF_DURATION, FR_CONF_T_PSI, stall_ns,
		     "psi: fire when tasks stall this long in total within one window",
		     .min = FR_CONF_MSEC, .max = 10 * FR_CONF_SEC,
		     .required = true, .note = "and at most window"),
	[CONF_TRIG_WINDOW] =
	FR_CONF_TRIG("window", CONF_DURATION, FR_CONF_T_PSI, window_ns,
		     "psi: the sliding window stall time is measured over",
		     .min = 500 * FR_CONF_MSEC, .max = 10 * FR_CONF_SEC,
		     .def = "2s",
		     .note = "only multiples of 2s without CAP_SYS_RESOURCE"),
	[CONF_TRIG_CGROUP] =
	FR_CONF_TRIG("cgroup", CONF_PATH, FR_CONF_T_PSI, cgroup,
		     "psi: watch this cgroup v2 directory instead of the whole system",
		     .min = 1, .max = PATH_MAX - 1),
	[CONF_TRIG_PRE] =
	FR_CONF_TRIG("pre", CONF_DURATION, FR_CONF_T_ALL, pre_ns,
		     "history before the trigger to dump; 0s = the whole [recorder] window",
		     .max = 24 * FR_CONF_HOUR, .def = "0s",
		     .note = "and at most the [recorder] window; 0s = all of it"),
	[CONF_TRIG_POST] =
	FR_CONF_TRIG("post", CONF_DURATION, FR_CONF_T_ALL, post_ns,
		     "keep recording this long after the trigger fires, then dump",
		     .max = 60 * FR_CONF_SEC, .def = "0s"),
	[CONF_TRIG_COOLDOWN] =
	FR_CONF_TRIG("cooldown", CONF_DURATION, FR_CONF_T_ALL, cooldown_ns,
		     "ignore the trigger for this long after it fired",
		     .max = 24 * FR_CONF_HOUR, .type_def = conf_cooldown_defs),
	[CONF_TRIG_MAX_PER_HOUR] =
	FR_CONF_TRIG("max_per_hour", CONF_U32, FR_CONF_T_ALL, max_per_hour,
		     "fire at most this many times in any hour; 0 = no limit",
		     .max = 3600, .type_def = conf_max_per_hour_defs,
		     .note = "0 = no limit"),
};

#define FR_CONF_NKEYS	FR_CONF_NELEM(conf_keys)
_Static_assert(FR_CONF_NKEYS == CONF_NROWS, "one row for each enum conf_row");

/* A unit suffix and what it multiplies by. */
struct conf_unit {
	const char *suffix;
	uint64_t scale;
};

/* Rendering picks the first unit that divides the value exactly. */
static const struct conf_unit conf_duration_units[] = {
	{ "h", FR_CONF_HOUR },
	{ "m", FR_CONF_MINUTE },
	{ "s", FR_CONF_SEC },
	{ "ms", FR_CONF_MSEC },
	{ "us", FR_CONF_USEC },
};

/* The IEC spellings come after "", so rendering never uses them. */
static const struct conf_unit conf_size_units[] = {
	{ "G", FR_CONF_GIB },
	{ "M", FR_CONF_MIB },
	{ "K", FR_CONF_KIB },
	{ "", 1 },
	{ "GiB", FR_CONF_GIB },
	{ "MiB", FR_CONF_MIB },
	{ "KiB", FR_CONF_KIB },
};

static const struct conf_unit conf_plain_units[] = {
	{ "", 1 },
};

/* What a load knows of one trigger of the config it fills. */
struct conf_trig_meta {
	bool fresh;			/* defined by this file */
	int key_line[FR_CONF_NKEYS];	/* where each of its keys was set */
};

/* State of one config__load(); lives on the caller's stack. */
struct conf_parse {
	const char *path;
	struct fr_config *cfg;		/* the copy being filled */
	const struct fr_config_env *env; /* NULL: no checks of the system */
	const char *pos;		/* next unread byte of the file */
	const char *end;
	int lineno;			/* line last handed to inih */
	int section;			/* current section (its first key), or -1 */
	char sname[FR_CONF_TRIGGER_NAME_MAX + 16]; /* "recorder", "trigger NAME" */
	int section_line[FR_CONF_NKEYS]; /* where each section was opened */
	int key_line[FR_CONF_NKEYS];	/* where each key was set */
	long trig;			/* open trigger section (index), or -1 */
	struct conf_trig_meta *tmeta;	/* one for each of cfg->triggers */
	size_t tcap;			/* room in cfg->triggers and tmeta */
	char raw[FR_CONF_NKEYS][FR_CONF_LINE_MAX + 1]; /* open trigger's values */
	int err;			/* first error, -errno */
	int err_line;			/* the line it names */
	int err_seen;			/* the line read when it was found */
	char *msg;
	size_t msglen;
};

static __attribute__((format(printf, 3, 0)))
void conf__vmsg(char *msg, size_t msglen, const char *fmt, va_list ap)
{
	if (msg && msglen)
		vsnprintf(msg, msglen, fmt, ap);
}

static __attribute__((format(printf, 3, 4)))
void conf__msg(char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf__vmsg(msg, msglen, fmt, ap);
	va_end(ap);
}

/* conf__strerror() - thread-safe text for -errno or errno @err. */
static const char *conf__strerror(int err, char *buf, size_t len)
{
	return strerror_r(err < 0 ? -err : err, buf, len);
}

/*
 * conf__shown() - copy @len bytes of @s into @buf for a message, control
 * characters replaced by '?', truncated to fit. Returns @buf.
 */
static const char *conf__shown(const char *s, size_t len, char *buf,
			       size_t size)
{
	size_t i;

	for (i = 0; i < len && i + 1 < size; i++)
		buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ?
			 '?' : s[i];
	buf[i] = '\0';
	return buf;
}

/*
 * conf__parse_scaled() - a decimal integer immediately followed by one of
 * the @n suffixes in @units, nothing before or after. Returns 0 with the
 * scaled value in *@v, -EINVAL for bad syntax, -ERANGE on overflow.
 */
static int conf__parse_scaled(const char *s, const struct conf_unit *units,
			      size_t n, uint64_t *v)
{
	unsigned long long num;
	const char *suffix;
	uint64_t scaled;
	char *end;
	size_t i;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	suffix = s + strspn(s, "0123456789");
	for (i = 0; i < n; i++)
		if (!strcmp(suffix, units[i].suffix))
			break;
	if (i == n)
		return -EINVAL;
	errno = 0;
	num = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (end != suffix)
		return -EINVAL;
	if (__builtin_mul_overflow(num, units[i].scale, &scaled))
		return -ERANGE;
	*v = scaled;
	return 0;
}

/*
 * conf__format_scaled() - write @v with the first of @units that divides it
 * exactly. Returns 0, or -EINVAL if none does or @buf is too small.
 */
static int conf__format_scaled(uint64_t v, const struct conf_unit *units,
			       size_t n, char *buf, size_t len)
{
	size_t i;
	int w;

	for (i = 0; i < n; i++) {
		if (v % units[i].scale)
			continue;
		w = snprintf(buf, len, "%" PRIu64 "%s", v / units[i].scale,
			     units[i].suffix);
		return w >= 0 && (size_t)w < len ? 0 : -EINVAL;
	}
	return -EINVAL;
}

/*
 * conf__format_num() - numeric @v of @type in file syntax, as rendering
 * writes it; 0 is "0s" for a duration, "0" otherwise. Returns 0 or -EINVAL.
 */
static int conf__format_num(enum conf_type type, uint64_t v, char *buf,
			    size_t len)
{
	const struct conf_unit *units;
	size_t n;
	int w;

	switch (type) {
	case CONF_DURATION:
		units = conf_duration_units;
		n = FR_CONF_NELEM(conf_duration_units);
		break;
	case CONF_SIZE:
		units = conf_size_units;
		n = FR_CONF_NELEM(conf_size_units);
		break;
	case CONF_U32:
		units = conf_plain_units;
		n = FR_CONF_NELEM(conf_plain_units);
		break;
	case CONF_S32:
		w = snprintf(buf, len, "%" PRId64, (int64_t)v);
		return w >= 0 && (size_t)w < len ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
	if (!v) {
		w = snprintf(buf, len, "0%s", type == CONF_DURATION ? "s" : "");
		return w >= 0 && (size_t)w < len ? 0 : -EINVAL;
	}
	return conf__format_scaled(v, units, n, buf, len);
}

int conf_parse_duration(const char *s, uint64_t *ns)
{
	return conf__parse_scaled(s, conf_duration_units,
				  FR_CONF_NELEM(conf_duration_units), ns);
}

int conf_parse_size(const char *s, uint64_t *bytes)
{
	return conf__parse_scaled(s, conf_size_units,
				  FR_CONF_NELEM(conf_size_units), bytes);
}

#define FR_CONF_STR_(x)		#x
#define FR_CONF_STR(x)		FR_CONF_STR_(x)

/* conf__blank() - true for a character that separates command words. */
static bool conf__blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * conf__word() - lex the command word at *@pos, after the blanks before it.
 * Its bytes, quotes and escapes removed, go to @out (NULL: only counted;
 * else room for *@len bytes, as a counting call gave) and their number to
 * *@len; *@pos moves past the word. Returns 1 for a word, 0 when only
 * blanks are left, or -EINVAL with *@why set.
 */
static int conf__word(const char **pos, char *out, size_t *len,
		      const char **why)
{
	const char *s = *pos;
	bool quoted = false;
	size_t n = 0;

	while (conf__blank(*s))
		s++;
	if (!*s) {
		*pos = s;
		return 0;
	}
	for (; *s && (quoted || !conf__blank(*s)); s++) {
		if (*s == '"') {
			quoted = !quoted;
			continue;
		}
		if (*s == '\\') {
			if (!s[1]) {
				*why = "a backslash at the end escapes nothing";
				return -EINVAL;
			}
			s++;
		}
		if (out)
			out[n] = *s;
		n++;
	}
	if (quoted) {
		*why = "unbalanced quote";
		return -EINVAL;
	}
	*pos = s;
	*len = n;
	return 1;
}

void conf_free_argv(char **argv)
{
	char **w;

	if (!argv)
		return;
	for (w = argv; *w; w++)
		free(*w);
	free(argv);
}

/*
 * conf__split() - conf_split_command() saying why it refuses @cmd: *@why is
 * set with -EINVAL and -ENOMEM.
 */
static int conf__split(const char *cmd, char ***argvp, int *argcp,
		       const char **why)
{
	const char *pos = cmd, *start;
	char **argv;
	size_t len;
	int n = 0, i, ret;

	while ((ret = conf__word(&pos, NULL, &len, why)) > 0)
		n++;
	if (ret)
		return ret;
	if (!n) {
		*why = "no program";
		return -EINVAL;
	}
	if (n > FR_CONF_COMMAND_WORDS_MAX) {
		*why = "more than " FR_CONF_STR(FR_CONF_COMMAND_WORDS_MAX) " words";
		return -EINVAL;
	}
	*why = "out of memory";
	argv = calloc((size_t)n + 1, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	pos = cmd;
	for (i = 0; i < n; i++) {
		start = pos;
		conf__word(&pos, NULL, &len, why);
		argv[i] = malloc(len + 1);
		if (!argv[i]) {
			conf_free_argv(argv);
			return -ENOMEM;
		}
		pos = start;
		conf__word(&pos, argv[i], &len, why);
		argv[i][len] = '\0';
	}
	*argvp = argv;
	*argcp = n;
	return 0;
}

int conf_split_command(const char *cmd, char ***argv, int *argc)
{
	const char *why;

	if (!cmd || !argv || !argc)
		return -EINVAL;
	return conf__split(cmd, argv, argc, &why);
}

/*
 * conf__same_words() - true when command lines @a and @b split into the
 * same words; false also when either does not split (or memory runs out).
 */
static bool conf__same_words(const char *a, const char *b)
{
	char **va = NULL, **vb = NULL;
	const char *why;
	bool same = false;
	int na, nb, i;

	if (!conf__split(a, &va, &na, &why) &&
	    !conf__split(b, &vb, &nb, &why) && na == nb) {
		for (i = 0; i < na && !strcmp(va[i], vb[i]); i++)
			;
		same = i == na;
	}
	conf_free_argv(va);
	conf_free_argv(vb);
	return same;
}

/* conf__put() - append @c to @buf (@len bytes) at *@off, if it fits; count it. */
static void conf__put(char *buf, size_t len, size_t *off, char c)
{
	if (*off + 1 < len)
		buf[*off] = c;
	(*off)++;
}

/*
 * conf__format_command() - the words of command line @cmd written so that
 * they split back the same and survive inih: single blanks between words,
 * a word quoted when it is empty or holds a blank, quote or backslash (or
 * starts with an inline comment character), '"' and '\' escaped in it, and
 * an inline comment character after a blank escaped. If that does not fit
 * @len bytes, @cmd as it is (rendering checks it loads back). Returns 0, or
 * -EINVAL if @cmd does not split or fits neither way.
 */
static int conf__format_command(const char *cmd, char *buf, size_t len)
{
	const char *why, *c;
	size_t off = 0;
	char **argv, prev;
	bool quote;
	int argc, i, ret;

	ret = conf__split(cmd, &argv, &argc, &why);
	if (ret)
		return -EINVAL;
	for (i = 0; i < argc; i++) {
		if (i)
			conf__put(buf, len, &off, ' ');
		quote = !argv[i][0] ||
			strpbrk(argv[i], " \t\"\\") ||
			strchr(INI_INLINE_COMMENT_PREFIXES, argv[i][0]);
		if (quote)
			conf__put(buf, len, &off, '"');
		for (c = argv[i], prev = '"'; *c; prev = *c++) {
			if (*c == '"' || *c == '\\' ||
			    (isspace((unsigned char)prev) &&
			     strchr(INI_INLINE_COMMENT_PREFIXES, *c)))
				conf__put(buf, len, &off, '\\');
			conf__put(buf, len, &off, *c);
		}
		if (quote)
			conf__put(buf, len, &off, '"');
	}
	conf_free_argv(argv);
	if (off < len) {
		buf[off] = '\0';
		return 0;
	}
	if (strlen(cmd) >= len)
		return -EINVAL;
	strcpy(buf, cmd);
	return 0;
}

/* conf__name_find() - the entry of @k's words spelled @word, or NULL. */
static const struct conf_name *conf__name_find(const struct conf_key *k,
					       const char *word)
{
	size_t i;

	for (i = 0; i < k->nnames; i++)
		if (!strcmp(k->names[i].name, word))
			return &k->names[i];
	return NULL;
}

/* conf__name_of() - the word for @value among @k's words, or NULL. */
static const char *conf__name_of(const struct conf_key *k, uint32_t value)
{
	size_t i;

	for (i = 0; i < k->nnames; i++)
		if (k->names[i].value == value)
			return k->names[i].name;
	return NULL;
}

/* conf__type_name() - "psi" for FR_TRIG_PSI, ...; "?" if not a type. */
static const char *conf__type_name(enum fr_trig_type type)
{
	const char *name = conf__name_of(&conf_keys[CONF_TRIG_TYPE], type);

	return name ? name : "?";
}

/*
 * @base is the struct @k's offset is relative to: the struct fr_config for
 * plain keys, a struct fr_trigger_conf for trigger keys.
 */
static void *conf_key__field(const struct conf_key *k, void *base)
{
	return (char *)base + k->offset;
}

static const void *conf_key__cfield(const struct conf_key *k,
				    const void *base)
{
	return (const char *)base + k->offset;
}

/* conf_key__get() - a numeric or enum key's value in @base. */
static uint64_t conf_key__get(const struct conf_key *k, const void *base)
{
	const void *field = conf_key__cfield(k, base);

	switch (k->type) {
	case CONF_DURATION:
	case CONF_SIZE:
		return *(const uint64_t *)field;
	case CONF_U32:
	case CONF_ENUM:
		return *(const uint32_t *)field;
	case CONF_S32:
		return (uint64_t)(int64_t)*(const int32_t *)field;
	case CONF_BOOL:
		return *(const bool *)field;
	default:
		return 0;
	}
}

/* conf_key__put() - store a numeric or enum value, already checked. */
static void conf_key__put(const struct conf_key *k, void *base, uint64_t v)
{
	void *field = conf_key__field(k, base);

	switch (k->type) {
	case CONF_DURATION:
	case CONF_SIZE:
		*(uint64_t *)field = v;
		break;
	case CONF_U32:
	case CONF_ENUM:
		*(uint32_t *)field = (uint32_t)v;
		break;
	case CONF_S32:
		*(int32_t *)field = (int32_t)(int64_t)v;
		break;
	case CONF_BOOL:
		*(bool *)field = v != 0;
		break;
	default:
		break;
	}
}

/* conf_key__owns() - true when @k's member is a malloc'd string. */
static bool conf_key__owns(const struct conf_key *k)
{
	return k->type == CONF_PATH || k->type == CONF_GROUP ||
	       k->type == CONF_COMMAND;
}

/* conf_key__clear() - free @k's string in @base, if it has one. */
static void conf_key__clear(const struct conf_key *k, void *base)
{
	char **field = conf_key__field(k, base);

	if (conf_key__owns(k)) {
		free(*field);
		*field = NULL;
	}
}

/* conf_key__equal() - true when @a and @b hold the same value for @k. */
static bool conf_key__equal(const struct conf_key *k, const void *a,
			    const void *b)
{
	const char *sa, *sb;

	if (!conf_key__owns(k))
		return conf_key__get(k, a) == conf_key__get(k, b);
	sa = *(char *const *)conf_key__cfield(k, a);
	sb = *(char *const *)conf_key__cfield(k, b);
	if (sa == sb || (sa && sb && !strcmp(sa, sb)))
		return true;
	/* commands are what they run: the same words, however spelled */
	return k->type == CONF_COMMAND && sa && sb &&
	       conf__same_words(sa, sb);
}

/* conf_key__accepted() - what @k accepts, for error messages. */
static void conf_key__accepted(const struct conf_key *k, char *buf,
			       size_t len)
{
	char lo[32] = "?", hi[32] = "?", zero[64] = "";
	size_t i, off;
	int w = 0;

	conf__format_num(k->type, k->min, lo, sizeof(lo));
	conf__format_num(k->type, k->max, hi, sizeof(hi));
	if (k->zero)
		snprintf(zero, sizeof(zero), "0 (%s) or ", k->zero);
	switch (k->type) {
	case CONF_DURATION:
		w = snprintf(buf, len, "%s%s..%s with a unit suffix us, ms, s, m or h",
			     zero, lo, hi);
		break;
	case CONF_SIZE:
		if (k->pow2)
			w = snprintf(buf, len, "%sa power of two from %s to %s",
				     zero, lo, hi);
		else
			w = snprintf(buf, len,
				     "%s%s..%s, in bytes or with a suffix K, M, G, KiB, MiB or GiB",
				     zero, lo, hi);
		break;
	case CONF_U32:
	case CONF_S32:
		w = snprintf(buf, len, "%s%s..%s", zero, lo, hi);
		break;
	case CONF_PATH:
		if (k->max < PATH_MAX - 1)
			w = snprintf(buf, len,
				     "an absolute path of at most %" PRIu64 " bytes without control characters",
				     k->max);
		else
			w = snprintf(buf, len,
				     "an absolute path without control characters");
		break;
	case CONF_GROUP:
		w = snprintf(buf, len,
			     "the name of an existing group, without control characters or ':'");
		break;
	case CONF_COMMAND:
		w = snprintf(buf, len,
			     "the absolute path of an executable file, then its arguments; at most %" PRIu64 " words split at blanks, \"...\" groups, \\ escapes",
			     k->max);
		break;
	case CONF_ENUM:
	case CONF_BOOL:
		buf[0] = '\0';
		for (i = 0, off = 0; i < k->nnames && off < len; i++) {
			w = snprintf(buf + off, len - off, "%s%s",
				     i ? ", " : "", k->names[i].name);
			if (w < 0)
				break;
			off += (size_t)w;
		}
		w = (int)off;
		break;
	}
	if (k->example && w >= 0 && (size_t)w < len)
		w += snprintf(buf + w, len - (size_t)w, ", e.g. %s", k->example);
	if (k->note && w >= 0 && (size_t)w < len)
		snprintf(buf + w, len - (size_t)w, " (%s)", k->note);
}

/*
 * find_control() - the index of the first control character in @value
 * (tabs allowed when @tabs), or -1 when there is none.
 */
static ssize_t find_control(const char *value, bool tabs)
{
	for (size_t i = 0; value[i]; i++) {
		unsigned char c = (unsigned char)value[i];

		if ((c < 0x20 && !(tabs && c == '\t')) || c == 0x7f)
			return (ssize_t)i;
	}
	return -1;
}

/*
 * conf_key__store() - store a copy of the checked string @value in @k's
 * field of @base, freeing the old one. Returns 0, or -ENOMEM with *@why set.
 */
static int conf_key__store(const struct conf_key *k, void *base,
			   const char *value, const char **why)
{
	char **field = conf_key__field(k, base);
	char *copy = strdup(value);

	if (!copy) {
		*why = "out of memory";
		return -ENOMEM;
	}
	free(*field);
	*field = copy;
	return 0;
}

/*
 * conf_key__set_s32() - parse a CONF_S32 @value (decimal digits, a '-'
 * before them for a negative number) into @k's field in @base, within its
 * min..max. Returns 0, or -EINVAL with *@why set.
 */
static int conf_key__set_s32(const struct conf_key *k, void *base,
			     const char *value, const char **why)
{
	const char *d = value + (*value == '-');
	long long v;
	char *end;

	if (!*d || strspn(d, "0123456789") != strlen(d)) {
		*why = "invalid number";
		return -EINVAL;
	}
	errno = 0;
	v = strtoll(value, &end, 10);
	if ((errno == ERANGE && v > 0) || v > (int64_t)k->max) {
		*why = "too large";
		return -EINVAL;
	}
	if (errno == ERANGE || v < (int64_t)k->min) {
		*why = "too small";
		return -EINVAL;
	}
	conf_key__put(k, base, (uint64_t)(int64_t)v);
	return 0;
}

/*
 * conf_key__set_path() - validate an absolute path and store a copy.
 * Returns 0, -EINVAL or -ENOMEM with *@why set.
 */
static int conf_key__set_path(const struct conf_key *k, void *base,
			      const char *value, const char **why)
{
	size_t len = strlen(value);

	if (value[0] != '/') {
		*why = "not an absolute path";
		return -EINVAL;
	}
	if (find_control(value, false) >= 0) {
		*why = "contains a control character";
		return -EINVAL;
	}
	if (len < k->min || len > k->max) {
		*why = "too long";
		return -EINVAL;
	}
	return conf_key__store(k, base, value, why);
}

/*
 * conf_key__set_group() - check the spelling of a group name and store a
 * copy; whether the group exists is for the load to judge. Returns 0,
 * -EINVAL or -ENOMEM with *@why set.
 */
static int conf_key__set_group(const struct conf_key *k, void *base,
			       const char *value, const char **why)
{
	ssize_t ctl = find_control(value, false);
	const char *colon = strchr(value, ':');
	size_t len = strlen(value);

	/* Whichever comes first is what the message names. */
	if (ctl >= 0 && (!colon || ctl < colon - value)) {
		*why = "contains a control character";
		return -EINVAL;
	}
	if (colon) {
		*why = "contains ':'";
		return -EINVAL;
	}
	if (len < k->min || len > k->max) {
		*why = "too long";
		return -EINVAL;
	}
	return conf_key__store(k, base, value, why);
}

/*
 * conf_key__set_command() - check the syntax of a command line and store a
 * copy as written: no control characters but tabs, words that split, a
 * program given by its absolute path. Whether the program exists is for the
 * load to judge. Returns 0, -EINVAL or -ENOMEM with *@why set.
 */
static int conf_key__set_command(const struct conf_key *k, void *base,
				 const char *value, const char **why)
{
	char **argv;
	bool absolute;
	int argc, ret;

	if (find_control(value, true) >= 0) {
		*why = "contains a control character";
		return -EINVAL;
	}
	ret = conf__split(value, &argv, &argc, why);
	if (ret)
		return ret;
	absolute = argv[0][0] == '/';
	conf_free_argv(argv);
	if (!absolute) {
		*why = "the program must be an absolute path";
		return -EINVAL;
	}
	return conf_key__store(k, base, value, why);
}

/*
 * conf_key__set() - parse @value as @k's type, check its range and store it
 * into @base. Returns 0, or -EINVAL / -ENOMEM with *@why set to a short
 * reason; @base is unchanged on error.
 */
static int conf_key__set(const struct conf_key *k, void *base,
			 const char *value, const char **why)
{
	const struct conf_name *word;
	uint64_t v = 0;
	int ret;

	if (!*value) {
		*why = "empty value";
		return -EINVAL;
	}
	switch (k->type) {
	case CONF_DURATION:
		ret = conf_parse_duration(value, &v);
		*why = "invalid duration";
		break;
	case CONF_SIZE:
		ret = conf_parse_size(value, &v);
		*why = "invalid size";
		break;
	case CONF_U32:
		ret = conf__parse_scaled(value, conf_plain_units,
					 FR_CONF_NELEM(conf_plain_units), &v);
		*why = "invalid number";
		break;
	case CONF_S32:
		return conf_key__set_s32(k, base, value, why);
	case CONF_PATH:
		return conf_key__set_path(k, base, value, why);
	case CONF_GROUP:
		return conf_key__set_group(k, base, value, why);
	case CONF_COMMAND:
		return conf_key__set_command(k, base, value, why);
	case CONF_ENUM:
	case CONF_BOOL:
		word = conf__name_find(k, value);
		if (!word) {
			*why = k->type == CONF_BOOL ? "not a boolean" :
			       "unknown value";
			return -EINVAL;
		}
		conf_key__put(k, base, word->value);
		return 0;
	default:
		*why = "unsupported type";
		return -EINVAL;
	}
	if (ret == -ERANGE || (!ret && v > k->max)) {
		*why = "too large";
		return -EINVAL;
	}
	if (ret)
		return ret;
	if (v == 0 && k->zero) {
		conf_key__put(k, base, v);
		return 0;
	}
	if (v < k->min) {
		*why = "too small";
		return -EINVAL;
	}
	if (k->pow2 && (v & (v - 1))) {
		*why = "not a power of two";
		return -EINVAL;
	}
	conf_key__put(k, base, v);
	return 0;
}

/*
 * conf_key__format() - @k's value in @base in file syntax. Returns 0, or
 * -EINVAL if the value has no file syntax (a sub-millisecond duration, a
 * NULL string, a number no word stands for, a command that does not split)
 * or does not fit @len.
 */
static int conf_key__format(const struct conf_key *k, const void *base,
			    char *buf, size_t len)
{
	const char *s;

	switch (k->type) {
	case CONF_DURATION:
	case CONF_SIZE:
	case CONF_U32:
	case CONF_S32:
		return conf__format_num(k->type, conf_key__get(k, base),
					buf, len);
	case CONF_PATH:
	case CONF_GROUP:
		s = *(char *const *)conf_key__cfield(k, base);
		break;
	case CONF_COMMAND:
		s = *(char *const *)conf_key__cfield(k, base);
		return s ? conf__format_command(s, buf, len) : -EINVAL;
	case CONF_ENUM:
	case CONF_BOOL:
		s = conf__name_of(k, (uint32_t)conf_key__get(k, base));
		break;
	default:
		return -EINVAL;
	}
	if (!s || strlen(s) >= len)
		return -EINVAL;
	strcpy(buf, s);
	return 0;
}

/* conf_key__default() - @k's default for a trigger of @type, or NULL. */
static const char *conf_key__default(const struct conf_key *k,
				     enum fr_trig_type type)
{
	return k->type_def ? k->type_def[type] : k->def;
}

/* conf__section_of() - the section (index of its first key) of key @i. */
static int conf__section_of(size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (!strcmp(conf_keys[j].section, conf_keys[i].section))
			break;
	return (int)j;
}

/* conf__section_find() - the section called @name (@len bytes), or -1. */
static int conf__section_find(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (strlen(conf_keys[i].section) == len &&
		    !memcmp(conf_keys[i].section, name, len))
			return conf__section_of(i);
	return -1;
}

/* conf__key_find() - key @name of section @sec, or NULL. */
static const struct conf_key *conf__key_find(int sec, const char *name)
{
	size_t i;

	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (conf__section_of(i) == sec &&
		    !strcmp(conf_keys[i].name, name))
			return &conf_keys[i];
	return NULL;
}

/* conf__is_named() - true when section @sec is a [trigger NAME] kind. */
static bool conf__is_named(int sec)
{
	return sec >= 0 && conf_keys[sec].types;
}

/*
 * conf__list() - "window, memory, frequency" for the keys of section @sec
 * (only those fitting trigger type @type, if not 0), or "[recorder],
 * [output], ..., [trigger NAME]" for the sections when @sec is -1.
 */
static void conf__list(int sec, enum fr_trig_type type, char *buf,
		       size_t len)
{
	size_t i, off = 0;
	int w;

	buf[0] = '\0';
	for (i = 0; i < FR_CONF_NKEYS && off < len; i++) {
		if (sec < 0 && conf__section_of(i) == (int)i)
			w = snprintf(buf + off, len - off, "%s[%s%s]",
				     off ? ", " : "", conf_keys[i].section,
				     conf__is_named((int)i) ? " NAME" : "");
		else if (sec >= 0 && conf__section_of(i) == sec &&
			 (!type || conf_keys[i].types & FR_CONF_T(type)))
			w = snprintf(buf + off, len - off, "%s%s",
				     off ? ", " : "", conf_keys[i].name);
		else
			continue;
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

/* conf__name_ok() - true when @name (@len bytes) may be a trigger's NAME. */
static bool conf__name_ok(const char *name, size_t len)
{
	size_t i;

	if (!name || len < 1 || len > FR_CONF_TRIGGER_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) &&
		    !strchr("._-", name[i]))
			return false;
	return true;
}

/* conf__file_type() - a word for the file type in @mode. */
static const char *conf__file_type(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "not a regular file";
}

/*
 * conf__cap_sys_resource() - true when CAP_SYS_RESOURCE is in the calling
 * thread's effective set; false also when capget(2) fails.
 */
static bool conf__cap_sys_resource(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[CAP_TO_INDEX(CAP_SYS_RESOURCE)].effective &
	       CAP_TO_MASK(CAP_SYS_RESOURCE);
}

/*
 * conf__group_gid() - the gid of the group called @name, from the group
 * database. Returns 0 with *@gid set, -ENOENT when there is no such group,
 * -ENOMEM, or the lookup's error.
 */
static int conf__group_gid(const char *name, gid_t *gid)
{
	long hint = sysconf(_SC_GETGR_R_SIZE_MAX);
	size_t size = hint > 0 ? (size_t)hint : 1024;
	struct group grp, *res = NULL;
	char *buf = NULL, *grown;
	int err;

	for (;;) {
		grown = realloc(buf, size);
		if (!grown) {
			err = ENOMEM;
			goto out;
		}
		buf = grown;
		err = getgrnam_r(name, &grp, buf, size, &res);
		if (err != ERANGE || size >= FR_CONF_GROUP_BUF_MAX)
			break;
		size *= 2;
	}
	/* some NSS modules say "not found" with ENOENT or ESRCH */
	if (!err && res)
		*gid = res->gr_gid;
	else if (!err || err == ENOENT || err == ESRCH)
		err = ENOENT;
out:
	free(buf);
	return -err;
}

/* conf_trig__clear() - free @t's name and strings; @t may then be reused. */
static void conf_trig__clear(struct fr_trigger_conf *t)
{
	size_t i;

	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (conf_keys[i].types)
			conf_key__clear(&conf_keys[i], t);
	free(t->name);
	t->name = NULL;
}

/*
 * conf_trig__copy() - deep copy of @src into @dst. Returns 0, or -ENOMEM
 * (errno set) with @dst holding no allocations.
 */
static int conf_trig__copy(struct fr_trigger_conf *dst,
			   const struct fr_trigger_conf *src)
{
	const char *from;
	char **to;
	size_t i;

	*dst = *src;
	dst->name = NULL;
	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (conf_keys[i].types && conf_key__owns(&conf_keys[i]))
			*(char **)conf_key__field(&conf_keys[i], dst) = NULL;
	if (src->name && !(dst->name = strdup(src->name)))
		goto fail;
	for (i = 0; i < FR_CONF_NKEYS; i++) {
		if (!conf_keys[i].types || !conf_key__owns(&conf_keys[i]))
			continue;
		from = *(char *const *)conf_key__cfield(&conf_keys[i], src);
		to = conf_key__field(&conf_keys[i], dst);
		if (from && !(*to = strdup(from)))
			goto fail;
	}
	return 0;
fail:
	conf_trig__clear(dst);
	errno = ENOMEM;
	return -ENOMEM;
}

/* conf_trig__equal() - true when @a and @b are the same trigger, line aside. */
static bool conf_trig__equal(const struct fr_trigger_conf *a,
			     const struct fr_trigger_conf *b)
{
	size_t i;

	if (!a->name || !b->name || strcmp(a->name, b->name))
		return false;
	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (conf_keys[i].types &&
		    !conf_key__equal(&conf_keys[i], a, b))
			return false;
	return true;
}

/* conf__equal() - true when @a and @b hold the same values, path aside. */
static bool conf__equal(const struct fr_config *a, const struct fr_config *b)
{
	size_t i;

	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (!conf_keys[i].types &&
		    !conf_key__equal(&conf_keys[i], a, b))
			return false;
	if (a->ntriggers != b->ntriggers)
		return false;
	for (i = 0; i < a->ntriggers; i++)
		if (!conf_trig__equal(&a->triggers[i], &b->triggers[i]))
			return false;
	return true;
}

/* conf_parse__vfail() - record the first error, naming @line. */
static __attribute__((format(printf, 4, 0)))
void conf_parse__vfail(struct conf_parse *p, int line, int err,
		       const char *fmt, va_list ap)
{
	char tail[FR_CONF_ERR_MAX];

	if (p->err)
		return;
	p->err = err;
	p->err_line = line;
	p->err_seen = p->lineno;
	vsnprintf(tail, sizeof(tail), fmt, ap);
	conf__msg(p->msg, p->msglen, "%s:%d: %s", p->path, line, tail);
}

/*
 * conf_parse__fail() - record the first error of a load: -errno @err and a
 * message "<path>:<line>: <fmt...>" naming the line just read. Later errors
 * are dropped. Returns 0, the inih handler's "error" value.
 */
static __attribute__((format(printf, 3, 4)))
int conf_parse__fail(struct conf_parse *p, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf_parse__vfail(p, p->lineno, err, fmt, ap);
	va_end(ap);
	return 0;
}

/*
 * conf_parse__fail_at() - conf_parse__fail() for an error found later than
 * the line it names, @line. Returns the first error, -errno.
 */
static __attribute__((format(printf, 4, 5)))
int conf_parse__fail_at(struct conf_parse *p, int line, int err,
			const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf_parse__vfail(p, line, err, fmt, ap);
	va_end(ap);
	return p->err;
}

/* conf_parse__bad_value() - record a value error for @k. Returns 0. */
static int conf_parse__bad_value(struct conf_parse *p, const struct conf_key *k,
				 const char *value, int err, const char *why)
{
	char shown[FR_CONF_LINE_MAX + 1], accepted[256];

	if (err == -ENOMEM)
		return conf_parse__fail(p, err, "[%s] %s: %s", p->sname,
					k->name, why);
	conf__shown(value, strlen(value), shown, sizeof(shown));
	conf_key__accepted(k, accepted, sizeof(accepted));
	return conf_parse__fail(p, -EINVAL, "[%s] %s = %s: %s; accepted: %s",
				p->sname, k->name, shown, why, accepted);
}

/*
 * conf_parse__grow() - make room for one more trigger in the config being
 * filled and in @p->tmeta. Returns 0 or -ENOMEM.
 */
static int conf_parse__grow(struct conf_parse *p)
{
	struct fr_config *cfg = p->cfg;
	struct conf_trig_meta *meta;
	struct fr_trigger_conf *trig;
	size_t cap;

	if (cfg->ntriggers < p->tcap)
		return 0;
	cap = p->tcap < 4 ? 8 : 2 * p->tcap;
	trig = realloc(cfg->triggers, cap * sizeof(*trig));
	if (!trig)
		return -ENOMEM;
	cfg->triggers = trig;
	meta = realloc(p->tmeta, cap * sizeof(*meta));
	if (!meta)
		return -ENOMEM;
	memset(meta + p->tcap, 0, (cap - p->tcap) * sizeof(*meta));
	p->tmeta = meta;
	p->tcap = cap;
	return 0;
}

/*
 * conf_parse__open_trigger() - start the section [trigger @name] (@len
 * bytes) of kind @sec on the current line: a new trigger, or one loaded
 * before, which this section replaces in place. Returns 0, or -EINVAL /
 * -ENOMEM after recording an error.
 */
static int conf_parse__open_trigger(struct conf_parse *p, int sec,
				    const char *name, size_t len)
{
	char shown[FR_CONF_LINE_MAX + 1], why[64];
	struct fr_config *cfg = p->cfg;
	struct fr_trigger_conf *t;
	char *keep;
	size_t i;

	conf__shown(name, len, shown, sizeof(shown));
	if (!conf__name_ok(name, len)) {
		for (i = 0; i < len; i++)
			if (!conf__name_ok(name + i, 1))
				break;
		if (!len)
			snprintf(why, sizeof(why), "missing name");
		else if (i < len)
			snprintf(why, sizeof(why),
				 "invalid name, '%c' not allowed", shown[i]);
		else
			snprintf(why, sizeof(why),
				 "invalid name, %zu characters long", len);
		conf_parse__fail(p, -EINVAL,
				 "[%s%s%s]: %s; accepted: [%s NAME], NAME of 1..%d characters from A-Z, a-z, 0-9, '.', '_' and '-'",
				 conf_keys[sec].section, len ? " " : "", shown,
				 why, conf_keys[sec].section,
				 FR_CONF_TRIGGER_NAME_MAX);
		return p->err;
	}
	for (i = 0; i < cfg->ntriggers; i++)
		if (!strcmp(cfg->triggers[i].name, shown))
			break;
	if (i < cfg->ntriggers && p->tmeta[i].fresh) {
		conf_parse__fail(p, -EINVAL,
				 "duplicate section [%s %s], first at line %u",
				 conf_keys[sec].section, shown,
				 cfg->triggers[i].line);
		return p->err;
	}
	if (i < cfg->ntriggers) {
		t = &cfg->triggers[i];
		keep = t->name;
		t->name = NULL;
		conf_trig__clear(t);
		memset(t, 0, sizeof(*t));
		t->name = keep;
	} else {
		if (cfg->ntriggers >= FR_CONF_TRIGGERS_MAX) {
			conf_parse__fail(p, -EINVAL,
					 "[%s %s]: too many trigger sections; accepted: at most %d",
					 conf_keys[sec].section, shown,
					 FR_CONF_TRIGGERS_MAX);
			return p->err;
		}
		t = NULL;
		if (!conf_parse__grow(p)) {
			t = &cfg->triggers[i];
			memset(t, 0, sizeof(*t));
			t->name = strdup(shown);
		}
		if (!t || !t->name) {
			conf_parse__fail(p, -ENOMEM, "[%s %s]: out of memory",
					 conf_keys[sec].section, shown);
			return p->err;
		}
		cfg->ntriggers++;
	}
	t->line = (unsigned)p->lineno;
	memset(&p->tmeta[i], 0, sizeof(p->tmeta[i]));
	p->tmeta[i].fresh = true;
	p->trig = (long)i;
	p->section = sec;
	/* the name is valid, so at most FR_CONF_TRIGGER_NAME_MAX bytes */
	snprintf(p->sname, sizeof(p->sname), "%s %.*s",
		 conf_keys[sec].section, FR_CONF_TRIGGER_NAME_MAX, shown);
	return 0;
}

/*
 * conf_parse__check_cgroup() - @t's cgroup (set on @line to @shown) must be
 * a directory holding <resource>.pressure. Returns 0, or -EINVAL after
 * recording an error.
 */
static int conf_parse__check_cgroup(struct conf_parse *p,
				    const struct fr_trigger_conf *t, int line,
				    const char *shown)
{
	const char *res = conf__name_of(&conf_keys[CONF_TRIG_RESOURCE],
					t->resource);
	char file[PATH_MAX], accepted[96], ebuf[128];
	struct stat st;
	int w, err;

	snprintf(accepted, sizeof(accepted),
		 "an existing cgroup v2 directory holding %s.pressure", res);
	err = stat(t->cgroup, &st) ? -errno : 0;
	if (err == -ENOENT)
		return conf_parse__fail_at(p, line, -EINVAL,
					   "[%s] cgroup = %s: no such directory; accepted: %s",
					   p->sname, shown, accepted);
	if (err)
		return conf_parse__fail_at(p, line, -EINVAL,
					   "[%s] cgroup = %s: failed to stat '%s': %s; accepted: %s",
					   p->sname, shown, shown,
					   conf__strerror(err, ebuf, sizeof(ebuf)),
					   accepted);
	if (!S_ISDIR(st.st_mode))
		return conf_parse__fail_at(p, line, -EINVAL,
					   "[%s] cgroup = %s: not a directory but %s; accepted: %s",
					   p->sname, shown,
					   conf__file_type(st.st_mode), accepted);
	w = snprintf(file, sizeof(file), "%s%s%s.pressure", t->cgroup,
		     t->cgroup[strlen(t->cgroup) - 1] == '/' ? "" : "/", res);
	if (w < 0 || (size_t)w >= sizeof(file))
		return conf_parse__fail_at(p, line, -EINVAL,
					   "[%s] cgroup = %s: too long; accepted: %s",
					   p->sname, shown, accepted);
	err = stat(file, &st) ? -errno : 0;
	if (err && err != -ENOENT)
		return conf_parse__fail_at(p, line, -EINVAL,
					   "[%s] cgroup = %s: failed to stat '%s': %s; accepted: %s",
					   p->sname, shown, file,
					   conf__strerror(err, ebuf, sizeof(ebuf)),
					   accepted);
	if (err || !S_ISREG(st.st_mode))
		return conf_parse__fail_at(p, line, -EINVAL,
					   "[%s] cgroup = %s: no %s.pressure in it, so not a cgroup v2 directory (or the kernel has no PSI); accepted: %s",
					   p->sname, shown, res, accepted);
	return 0;
}

/*
 * conf_parse__check_group() - the group @k just set in @base (read as
 * @shown on the current line) must exist; its gid goes to @k->gid in
 * @base. Returns 0, or -EINVAL / -ENOMEM after recording an error.
 */
static int conf_parse__check_group(struct conf_parse *p,
				   const struct conf_key *k, void *base,
				   const char *shown)
{
	const char *name = *(char *const *)conf_key__cfield(k, base);
	char accepted[256], ebuf[128];
	gid_t gid;
	int err;

	err = conf__group_gid(name, &gid);
	if (!err) {
		*(gid_t *)((char *)base + k->gid) = gid;
		return 0;
	}
	conf_key__accepted(k, accepted, sizeof(accepted));
	if (err == -ENOENT)
		conf_parse__fail(p, -EINVAL,
				 "[%s] %s = %s: no such group; accepted: %s",
				 p->sname, k->name, shown, accepted);
	else
		conf_parse__fail(p, err == -ENOMEM ? err : -EINVAL,
				 "[%s] %s = %s: failed to look up group '%s': %s; accepted: %s",
				 p->sname, k->name, shown, shown,
				 conf__strerror(err, ebuf, sizeof(ebuf)),
				 accepted);
	return p->err;
}

/*
 * conf_parse__check_command() - the program of the command @k just set in
 * @base (read as @shown on the current line) must be an existing regular
 * file that may be executed (access(2) X_OK, so not on a noexec mount).
 * Returns 0, or -EINVAL / -ENOMEM after recording an error.
 */
static int conf_parse__check_command(struct conf_parse *p,
				     const struct conf_key *k, void *base,
				     const char *shown)
{
	const char *cmd = *(char *const *)conf_key__cfield(k, base), *why;
	char accepted[256], ebuf[128], prog[FR_CONF_LINE_MAX + 1], what[160];
	struct stat st;
	char **argv;
	int argc, err;

	err = conf__split(cmd, &argv, &argc, &why);
	if (err) {	/* checked by conf_key__set(): only -ENOMEM */
		conf_parse__fail(p, err, "[%s] %s: %s", p->sname, k->name,
				 why);
		return p->err;
	}
	conf__shown(argv[0], strlen(argv[0]), prog, sizeof(prog));
	what[0] = '\0';
	if (stat(argv[0], &st)) {
		err = -errno;
		if (err == -ENOENT || err == -ENOTDIR)
			snprintf(what, sizeof(what), "no such file");
		else
			snprintf(what, sizeof(what), "failed to stat it: %s",
				 conf__strerror(err, ebuf, sizeof(ebuf)));
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(what, sizeof(what), "not a regular file but %s",
			 conf__file_type(st.st_mode));
	} else if (!(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH))) {
		snprintf(what, sizeof(what), "not executable (mode %04o)",
			 (unsigned int)(st.st_mode & 07777));
	} else if (access(argv[0], X_OK)) {
		err = -errno;
		snprintf(what, sizeof(what), "not executable: %s%s",
			 conf__strerror(err, ebuf, sizeof(ebuf)),
			 err == -EACCES ? " (a noexec mount?)" : "");
	}
	conf_free_argv(argv);
	if (!what[0])
		return 0;
	conf_key__accepted(k, accepted, sizeof(accepted));
	if (!strcmp(prog, shown))
		conf_parse__fail(p, -EINVAL, "[%s] %s = %s: %s; accepted: %s",
				 p->sname, k->name, shown, what, accepted);
	else
		conf_parse__fail(p, -EINVAL,
				 "[%s] %s = %s: program '%s': %s; accepted: %s",
				 p->sname, k->name, shown, prog, what, accepted);
	return p->err;
}

/*
 * conf_parse__check_psi() - the kernel's rules for PSI triggers that span
 * keys or depend on the system, for @t with key lines @m. Returns 0, or
 * -EINVAL after recording an error.
 */
static int conf_parse__check_psi(struct conf_parse *p,
				 const struct fr_trigger_conf *t,
				 const struct conf_trig_meta *m)
{
	char window[FR_CONF_LINE_MAX + 1];

	if (t->stall_ns > t->window_ns) {
		if (m->key_line[CONF_TRIG_WINDOW])
			snprintf(window, sizeof(window), "%s",
				 p->raw[CONF_TRIG_WINDOW]);
		else
			conf__format_num(CONF_DURATION, t->window_ns, window,
					 sizeof(window));
		return conf_parse__fail_at(p, m->key_line[CONF_TRIG_STALL],
					   -EINVAL,
					   "[%s] stall = %s: longer than window = %s%s; accepted: 0 < stall <= window",
					   p->sname, p->raw[CONF_TRIG_STALL],
					   window,
					   m->key_line[CONF_TRIG_WINDOW] ?
					   "" : " (the default)");
	}
	/* a default window is a multiple of 2s, so the key was set */
	if (p->env && !p->env->cap_sys_resource &&
	    t->window_ns % FR_CONF_PSI_UNPRIV_STEP)
		return conf_parse__fail_at(p, m->key_line[CONF_TRIG_WINDOW],
					   -EINVAL,
					   "[%s] window = %s: without CAP_SYS_RESOURCE the kernel accepts only multiples of 2s (2s, 4s, 6s, 8s, 10s); grant CAP_SYS_RESOURCE or pick one of those",
					   p->sname, p->raw[CONF_TRIG_WINDOW]);
	if (p->env && t->cgroup)
		return conf_parse__check_cgroup(p, t,
						m->key_line[CONF_TRIG_CGROUP],
						p->raw[CONF_TRIG_CGROUP]);
	return 0;
}

/*
 * conf_parse__close() - finish the open [trigger NAME] section, if any: it
 * needs a type; keys of other types are refused, the type's required keys
 * demanded, its defaults filled in; then the rules spanning keys of the
 * section, those depending on the system, and one signal trigger per file.
 * Returns 0, or -EINVAL / -ENOMEM after recording an error.
 */
static int conf_parse__close(struct conf_parse *p)
{
	char list[256], accepted[256];
	const struct conf_trig_meta *m;
	const struct conf_key *k;
	struct fr_trigger_conf *t;
	const char *tname, *def, *why;
	size_t i, bad = FR_CONF_NKEYS, cur;
	int ret;

	if (p->trig < 0)
		return 0;
	cur = (size_t)p->trig;
	p->trig = -1;
	t = &p->cfg->triggers[cur];
	m = &p->tmeta[cur];
	if (!m->key_line[CONF_TRIG_TYPE]) {
		conf_key__accepted(&conf_keys[CONF_TRIG_TYPE], accepted,
				   sizeof(accepted));
		return conf_parse__fail_at(p, (int)t->line, -EINVAL,
					   "[%s]: missing key type; accepted: type = %s",
					   p->sname, accepted);
	}
	tname = conf__type_name(t->type);
	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (conf_keys[i].types && m->key_line[i] &&
		    !(conf_keys[i].types & FR_CONF_T(t->type)) &&
		    (bad == FR_CONF_NKEYS ||
		     m->key_line[i] < m->key_line[bad]))
			bad = i;
	if (bad < FR_CONF_NKEYS) {
		conf__list(conf__section_of(bad), t->type, list, sizeof(list));
		return conf_parse__fail_at(p, m->key_line[bad], -EINVAL,
					   "[%s] %s = %s: not a key of type = %s triggers; accepted with type = %s: %s",
					   p->sname, conf_keys[bad].name,
					   p->raw[bad], tname, tname, list);
	}
	for (i = 0; i < FR_CONF_NKEYS; i++) {
		k = &conf_keys[i];
		if (!(k->types & FR_CONF_T(t->type)) || m->key_line[i])
			continue;
		if (k->required) {
			conf_key__accepted(k, accepted, sizeof(accepted));
			return conf_parse__fail_at(p, (int)t->line, -EINVAL,
						   "[%s]: missing key %s, required with type = %s; accepted: %s = %s",
						   p->sname, k->name, tname,
						   k->name, accepted);
		}
		def = conf_key__default(k, t->type);
		if (!def)
			continue;
		ret = conf_key__set(k, t, def, &why);
		if (ret)
			return conf_parse__fail_at(p, (int)t->line, ret,
						   "[%s] %s = %s (the default): %s",
						   p->sname, k->name, def, why);
	}
	if (t->type == FR_TRIG_PSI) {
		ret = conf_parse__check_psi(p, t, m);
		if (ret)
			return ret;
	}
	if (t->type != FR_TRIG_SIGNAL)
		return 0;
	for (i = 0; i < p->cfg->ntriggers; i++)
		if (i != cur && p->tmeta[i].fresh &&
		    p->cfg->triggers[i].type == FR_TRIG_SIGNAL)
			return conf_parse__fail_at(p, m->key_line[CONF_TRIG_TYPE],
						   -EINVAL,
						   "[%s] type = %s: a second signal trigger, the first is [trigger %s] (type = signal at line %d); accepted: at most one trigger of type = signal",
						   p->sname,
						   p->raw[CONF_TRIG_TYPE],
						   p->cfg->triggers[i].name,
						   p->tmeta[i].key_line[CONF_TRIG_TYPE]);
	return 0;
}

/*
 * conf_parse__finish() - after the whole file: each trigger's 'pre' fits in
 * the [recorder] window, and this file's signal trigger is the only one.
 * Errors name the line of this file involved. Returns 0, or -EINVAL after
 * recording an error.
 */
static int conf_parse__finish(struct conf_parse *p)
{
	const struct fr_config *cfg = p->cfg;
	const struct fr_trigger_conf *t;
	const struct conf_trig_meta *m;
	char pre[32], window[32], max[32];
	size_t i, j;

	conf__format_num(CONF_DURATION, cfg->window_ns, window, sizeof(window));
	conf__format_num(CONF_DURATION, conf_keys[CONF_RECORDER_WINDOW].max,
			 max, sizeof(max));
	for (i = 0; i < cfg->ntriggers; i++) {
		t = &cfg->triggers[i];
		m = &p->tmeta[i];
		conf__format_num(CONF_DURATION, t->pre_ns, pre, sizeof(pre));
		if (t->pre_ns > cfg->window_ns && m->key_line[CONF_TRIG_PRE])
			return conf_parse__fail_at(p, m->key_line[CONF_TRIG_PRE],
						   -EINVAL,
						   "[trigger %s] pre = %s: longer than [recorder] window = %s, all the history there is; accepted: 0s..%s (0s = all of the window)",
						   t->name, pre, window, window);
		if (t->pre_ns > cfg->window_ns &&
		    p->key_line[CONF_RECORDER_WINDOW])
			return conf_parse__fail_at(p, p->key_line[CONF_RECORDER_WINDOW],
						   -EINVAL,
						   "[recorder] window = %s: shorter than pre = %s of [trigger %s], loaded before; accepted: %s..%s",
						   window, pre, t->name, pre, max);
		if (!m->fresh || t->type != FR_TRIG_SIGNAL)
			continue;
		for (j = 0; j < cfg->ntriggers; j++)
			if (!p->tmeta[j].fresh &&
			    cfg->triggers[j].type == FR_TRIG_SIGNAL)
				return conf_parse__fail_at(p, m->key_line[CONF_TRIG_TYPE],
							   -EINVAL,
							   "[trigger %s] type = signal: a second signal trigger, the first is [trigger %s], loaded before; accepted: at most one trigger of type = signal",
							   t->name,
							   cfg->triggers[j].name);
	}
	return 0;
}

/*
 * conf_parse__header() - follow a "[section]" line as inih reads it: a '['
 * and the first ']' not inside an inline comment. Only blanks or a comment
 * may follow the ']' (inih would drop anything there without a word).
 * Returns 0 to go on (also for other lines, and for a header without ']',
 * which inih reports as a syntax error), or -EINVAL after recording an error.
 */
static int conf_parse__header(struct conf_parse *p, const char *line,
			      size_t len)
{
	char shown[FR_CONF_LINE_MAX + 1], list[256];
	bool was_space = false;
	size_t i, a, b, w;
	int sec, ret;

	if (!len || line[0] != '[')
		return 0;
	for (i = 1; i < len && line[i] != ']'; i++) {
		if (was_space && strchr(INI_INLINE_COMMENT_PREFIXES, line[i]))
			return 0;
		was_space = isspace((unsigned char)line[i]);
	}
	if (i == len)
		return 0;
	b = i;
	/* the section before this one ends here */
	ret = conf_parse__close(p);
	if (ret)
		return ret;
	for (i = b + 1; i < len && isspace((unsigned char)line[i]); i++)
		;
	if (i < len && line[i] != ';' && line[i] != '#') {
		conf_parse__fail(p, -EINVAL, FR_CONF_SYNTAX_ERROR);
		return -EINVAL;
	}
	for (a = 1; a < b && isspace((unsigned char)line[a]); a++)
		;
	while (b > a && isspace((unsigned char)line[b - 1]))
		b--;
	conf__shown(line + a, b - a, shown, sizeof(shown));
	/* "trigger  NAME": the first word is the kind of section */
	for (w = a; w < b && !isspace((unsigned char)line[w]); w++)
		;
	sec = conf__section_find(line + a, w - a);
	if (conf__is_named(sec)) {
		while (w < b && isspace((unsigned char)line[w]))
			w++;
		return conf_parse__open_trigger(p, sec, line + w, b - w);
	}
	if (w != b)
		sec = -1;
	if (sec < 0) {
		conf__list(-1, 0, list, sizeof(list));
		conf_parse__fail(p, -EINVAL,
				 "unknown section [%s]; accepted: %s",
				 shown, list);
		return -EINVAL;
	}
	if (p->section_line[sec]) {
		conf_parse__fail(p, -EINVAL,
				 "duplicate section [%s], first at line %d",
				 shown, p->section_line[sec]);
		return -EINVAL;
	}
	p->section_line[sec] = p->lineno;
	p->section = sec;
	snprintf(p->sname, sizeof(p->sname), "%s", conf_keys[sec].section);
	return 0;
}

/*
 * conf_parse__reader() - inih's fgets(): hand over the next line of the file
 * with leading blanks (and a UTF-8 BOM) removed. Refuses NUL bytes and lines
 * longer than FR_CONF_LINE_MAX, and tracks sections. Returns @str, or NULL at
 * the end of the file or after the first error, which ends the parse.
 */
static char *conf_parse__reader(char *str, int num, void *stream)
{
	struct conf_parse *p = stream;
	const char *line, *nl;
	size_t len, shown, max;

	if (p->err || p->pos >= p->end)
		return NULL;
	line = p->pos;
	nl = memchr(line, '\n', (size_t)(p->end - line));
	len = nl ? (size_t)(nl - line) : (size_t)(p->end - line);
	p->pos = nl ? nl + 1 : p->end;
	p->lineno++;

	shown = len;
	if (shown && line[shown - 1] == '\r')
		shown--;
	max = num > 3 ? (size_t)num - 3 : 0;
	if (max > FR_CONF_LINE_MAX)
		max = FR_CONF_LINE_MAX;
	if (memchr(line, '\0', len)) {
		conf_parse__fail(p, -EINVAL, "line contains a NUL byte");
		return NULL;
	}
	if (shown > max) {
		conf_parse__fail(p, -EINVAL,
				 "line too long (%zu bytes); accepted: at most %zu bytes",
				 shown, max);
		return NULL;
	}
	if (p->lineno == 1 && len >= 3 && !memcmp(line, "\xef\xbb\xbf", 3)) {
		line += 3;
		len -= 3;
	}
	while (len && isspace((unsigned char)*line)) {
		line++;
		len--;
	}
	if (conf_parse__header(p, line, len))
		return NULL;
	/* len <= max + 1 (a '\r'), so the line, '\n' and NUL fit in num */
	memcpy(str, line, len);
	str[len] = '\n';
	str[len + 1] = '\0';
	return str;
}

/*
 * conf_parse__handler() - inih's callback for one "key = value" line of the
 * line the reader handed over last. The section comes from the reader, which
 * trims blanks inside the brackets. Returns 1, or 0 after recording an error.
 */
static int conf_parse__handler(void *user, const char *section,
			       const char *name, const char *value)
{
	char shown[FR_CONF_LINE_MAX + 1], list[256];
	struct conf_parse *p = user;
	const struct conf_key *k;
	const char *why, *sname;
	int *key_line;
	void *base;
	size_t idx;
	int ret;

	(void)section;	/* inih's copy is untrimmed; the reader's is exact */
	if (p->err)
		return 0;
	if (!*name)
		return conf_parse__fail(p, -EINVAL, FR_CONF_SYNTAX_ERROR);
	conf__shown(value, strlen(value), shown, sizeof(shown));
	if (p->section < 0) {
		conf__list(-1, 0, list, sizeof(list));
		return conf_parse__fail(p, -EINVAL,
					"%s = %s: key before any section; accepted: %s",
					name, shown, list);
	}
	sname = p->sname;
	k = conf__key_find(p->section, name);
	if (!k) {
		conf__list(p->section, 0, list, sizeof(list));
		return conf_parse__fail(p, -EINVAL,
					"[%s] %s = %s: unknown key; accepted: %s",
					sname, name, shown, list);
	}
	idx = (size_t)(k - conf_keys);
	if (p->trig >= 0) {
		base = &p->cfg->triggers[p->trig];
		key_line = p->tmeta[p->trig].key_line;
	} else {
		base = p->cfg;
		key_line = p->key_line;
	}
	if (key_line[idx])
		return conf_parse__fail(p, -EINVAL,
					"[%s] %s = %s: duplicate key, first set at line %d",
					sname, name, shown, key_line[idx]);
	key_line[idx] = p->lineno;
	if (p->trig >= 0)
		memcpy(p->raw[idx], shown, sizeof(shown));
	ret = conf_key__set(k, base, value, &why);
	if (ret)
		return conf_parse__bad_value(p, k, value, ret, why);
	/* the system-dependent rules; not when checking a render */
	if (k->type == CONF_GROUP && p->env &&
	    conf_parse__check_group(p, k, base, shown))
		return 0;
	if (k->type == CONF_COMMAND && p->env &&
	    conf_parse__check_command(p, k, base, shown))
		return 0;
	return 1;
}

/*
 * conf__parse() - apply the INI @text (@len bytes, from @path) to @cfg,
 * judging the rules that depend on the system by @env (NULL: skip them).
 * Returns 0, or -EINVAL / -ENOMEM with a message in @msg; @cfg may then be
 * partly changed.
 */
static int conf__parse(struct fr_config *cfg, const char *path,
		       const char *text, size_t len,
		       const struct fr_config_env *env, char *msg,
		       size_t msglen)
{
	struct conf_parse p = {
		.path = path,
		.cfg = cfg,
		.env = env,
		.pos = text,
		.end = text + len,
		.section = -1,
		.trig = -1,
		.tcap = cfg->ntriggers,
		.msg = msg,
		.msglen = msglen,
	};
	int ret;

	p.tmeta = calloc(p.tcap ? p.tcap : 1, sizeof(*p.tmeta));
	if (!p.tmeta) {
		conf__msg(msg, msglen, "failed to parse '%s': out of memory",
			  path);
		return -ENOMEM;
	}
	ret = ini_parse_stream(conf_parse__reader, &p, conf_parse__handler, &p);
	if (!ret && !p.err && !conf_parse__close(&p))
		conf_parse__finish(&p);
	/*
	 * inih returns the first line it or the handler failed on. The parse
	 * stops at our first error, so a line before the one we were reading
	 * then is a syntax error. It wins even over an error we found later
	 * but that names an earlier line (a key missing from a section): the
	 * key may be the line inih could not read.
	 */
	if (ret > 0 && (!p.err || ret < p.err_seen)) {
		p.err = 0;
		p.lineno = ret;
		conf_parse__fail(&p, -EINVAL, FR_CONF_SYNTAX_ERROR);
	} else if (ret < 0 && !p.err) {
		p.err = -ENOMEM;
		conf__msg(msg, msglen, "failed to parse '%s': out of memory",
			  path);
	}
	free(p.tmeta);
	return p.err;
}

/*
 * conf__check_file() - refuse a file root should not trust: not a regular
 * file, group- or world-writable, or owned by someone other than root or
 * us. Returns 0, or -EPERM with a message.
 */
static int conf__check_file(const char *path, const struct stat *st,
			    char *msg, size_t msglen)
{
	unsigned int mode = st->st_mode & 07777;
	uid_t me = geteuid();
	char why[80], who[32] = "";

	if (!S_ISREG(st->st_mode))
		snprintf(why, sizeof(why), "not a regular file but %s",
			 conf__file_type(st->st_mode));
	else if (st->st_mode & S_IWOTH)
		snprintf(why, sizeof(why), "world-writable (mode %04o)", mode);
	else if (st->st_mode & S_IWGRP)
		snprintf(why, sizeof(why), "group-writable (mode %04o)", mode);
	else if (st->st_uid != 0 && st->st_uid != me)
		snprintf(why, sizeof(why), "owned by uid %u",
			 (unsigned int)st->st_uid);
	else
		return 0;
	if (me != 0)
		snprintf(who, sizeof(who), " or uid %u", (unsigned int)me);
	conf__msg(msg, msglen,
		  "refusing '%s': %s; accepted: a regular file owned by root%s, writable by its owner only",
		  path, why, who);
	return -EPERM;
}

/*
 * conf__read_fd() - read all of @fd (about @hint bytes) into a malloc'd
 * buffer. Returns 0 with *@textp (caller frees) and *@lenp set, -EFBIG past
 * FR_CONF_FILE_MAX bytes, -ENOMEM, or the read error.
 */
static int conf__read_fd(int fd, off_t hint, char **textp, size_t *lenp)
{
	size_t cap, len = 0;
	char *text, *grown;
	ssize_t n;
	int ret;

	if (hint < 0 || hint > FR_CONF_FILE_MAX)
		return -EFBIG;
	/* one spare byte, so reading the whole file ends with a read of 0 */
	cap = (size_t)hint + 1;
	text = malloc(cap);
	if (!text)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			/* the file grew while we read it */
			ret = -EFBIG;
			if (cap > FR_CONF_FILE_MAX)
				goto out;
			cap = cap * 2 > FR_CONF_FILE_MAX + 1 ?
			      FR_CONF_FILE_MAX + 1 : cap * 2;
			ret = -ENOMEM;
			grown = realloc(text, cap);
			if (!grown)
				goto out;
			text = grown;
		}
		n = read(fd, text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*textp = text;
	*lenp = len;
	return 0;
out:
	free(text);
	return ret;
}

/*
 * conf__read_file() - check and read all of @path. Returns 0 with *@textp
 * (caller frees) and *@lenp set, or -errno with a message: open and read
 * errors as they come, -EPERM for an unsafe file, -EFBIG for a huge one.
 */
static int conf__read_file(const char *path, char **textp, size_t *lenp,
			   char *msg, size_t msglen)
{
	struct stat st;
	char ebuf[128];
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		conf__msg(msg, msglen, "failed to open '%s': %s", path,
			  conf__strerror(ret, ebuf, sizeof(ebuf)));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		conf__msg(msg, msglen, "failed to stat '%s': %s", path,
			  conf__strerror(ret, ebuf, sizeof(ebuf)));
		goto out;
	}
	ret = conf__check_file(path, &st, msg, msglen);
	if (ret)
		goto out;
	ret = conf__read_fd(fd, st.st_size, textp, lenp);
	if (ret == -EFBIG)
		conf__msg(msg, msglen, "refusing '%s': larger than %d bytes",
			  path, FR_CONF_FILE_MAX);
	else if (ret)
		conf__msg(msg, msglen, "failed to read '%s': %s", path,
			  conf__strerror(ret, ebuf, sizeof(ebuf)));
out:
	close(fd);
	return ret;
}

struct fr_config *config__new(void)
{
	struct fr_config *cfg;
	const char *why;
	size_t i;
	int ret;

	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return NULL;
	for (i = 0; i < FR_CONF_NKEYS; i++) {
		if (conf_keys[i].types || !conf_keys[i].def)
			continue;	/* per trigger, or optional */
		ret = conf_key__set(&conf_keys[i], cfg, conf_keys[i].def, &why);
		if (ret) {
			config__free(cfg);
			errno = -ret;
			return NULL;
		}
	}
	return cfg;
}

void config__free(struct fr_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (!conf_keys[i].types)
			conf_key__clear(&conf_keys[i], cfg);
	for (i = 0; i < cfg->ntriggers; i++)
		conf_trig__clear(&cfg->triggers[i]);
	free(cfg->triggers);
	free(cfg->path);
	free(cfg);
}

struct fr_config *config__dup(const struct fr_config *cfg)
{
	struct fr_config *copy;
	const char *src;
	char **dst;
	size_t i;
	int err;

	if (!cfg) {
		errno = EINVAL;
		return NULL;
	}
	copy = malloc(sizeof(*copy));
	if (!copy)
		return NULL;
	*copy = *cfg;
	copy->path = NULL;
	copy->triggers = NULL;
	copy->ntriggers = 0;
	for (i = 0; i < FR_CONF_NKEYS; i++)
		if (!conf_keys[i].types && conf_key__owns(&conf_keys[i]))
			*(char **)conf_key__field(&conf_keys[i], copy) = NULL;
	if (cfg->path && !(copy->path = strdup(cfg->path)))
		goto fail;
	for (i = 0; i < FR_CONF_NKEYS; i++) {
		if (conf_keys[i].types || !conf_key__owns(&conf_keys[i]))
			continue;
		src = *(char *const *)conf_key__cfield(&conf_keys[i], cfg);
		dst = conf_key__field(&conf_keys[i], copy);
		if (src && !(*dst = strdup(src)))
			goto fail;
	}
	if (cfg->ntriggers) {
		copy->triggers = calloc(cfg->ntriggers,
					sizeof(*copy->triggers));
		if (!copy->triggers)
			goto fail;
	}
	for (i = 0; i < cfg->ntriggers; i++) {
		if (conf_trig__copy(&copy->triggers[i], &cfg->triggers[i]))
			goto fail;
		copy->ntriggers++;
	}
	return copy;
fail:
	err = errno;
	config__free(copy);
	errno = err;
	return NULL;
}

int config__load(struct fr_config *cfg, const char *path, char *err,
		 size_t errlen)
{
	struct fr_config_env env = {
		.cap_sys_resource = conf__cap_sys_resource(),
	};

	return config__load_env(cfg, path, &env, err, errlen);
}

int config__load_env(struct fr_config *cfg, const char *path,
		     const struct fr_config_env *env, char *err, size_t errlen)
{
	struct fr_config_env self;
	struct fr_config *tmp = NULL, old;
	char *text = NULL;
	size_t len = 0;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!cfg || !path) {
		conf__msg(err, errlen, "failed to load config: %s",
			  "invalid argument");
		return -EINVAL;
	}
	if (!env) {
		self.cap_sys_resource = conf__cap_sys_resource();
		env = &self;
	}
	ret = conf__read_file(path, &text, &len, err, errlen);
	if (ret)
		return ret;
	tmp = config__dup(cfg);
	if (!tmp) {
		ret = -ENOMEM;
		conf__msg(err, errlen, "failed to load '%s': out of memory",
			  path);
		goto out;
	}
	ret = conf__parse(tmp, path, text, len, env, err, errlen);
	if (ret)
		goto out;
	free(tmp->path);
	tmp->path = strdup(path);
	if (!tmp->path) {
		ret = -ENOMEM;
		conf__msg(err, errlen, "failed to load '%s': out of memory",
			  path);
		goto out;
	}
	/* swap, so the old values are freed below */
	old = *cfg;
	*cfg = *tmp;
	*tmp = old;
out:
	config__free(tmp);
	free(text);
	return ret;
}

/*
 * conf__line() - append one formatted line and its newline to @f. Returns 0,
 * -EINVAL if the line is longer than config__load() accepts, or -ENOMEM.
 */
static __attribute__((format(printf, 2, 3)))
int conf__line(FILE *f, const char *fmt, ...)
{
	char line[FR_CONF_LINE_MAX + 1];
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= sizeof(line))
		return -EINVAL;
	if (fprintf(f, "%s\n", line) < 0)
		return -ENOMEM;
	return 0;
}

/*
 * conf__verbatim() - true when inih hands @value back unchanged from
 * "key = @value": not empty, no blank at either end, no inline comment.
 */
static bool conf__verbatim(const char *value)
{
	size_t len = strlen(value), i;

	if (!len || isspace((unsigned char)value[0]) ||
	    isspace((unsigned char)value[len - 1]))
		return false;
	for (i = 1; i < len; i++)
		if (isspace((unsigned char)value[i - 1]) &&
		    strchr(INI_INLINE_COMMENT_PREFIXES, value[i]))
			return false;
	return true;
}

/* conf_key__optional() - true when @k may be left unset (NULL). */
static bool conf_key__optional(const struct conf_key *k)
{
	return conf_key__owns(k) && !k->def && !k->type_def && !k->required;
}

/*
 * conf_key__render() - append "key = value" for @k, after checking that
 * loading it gives back the value in @base; an optional key that is not set
 * is a comment saying so. Returns 0, -EINVAL if the value would not load
 * back, or -ENOMEM.
 */
static int conf_key__render(const struct conf_key *k, const void *base,
			    FILE *f)
{
	char value[FR_CONF_LINE_MAX + 1];
	union {
		struct fr_config cfg;
		struct fr_trigger_conf trig;
	} back;
	const char *why;
	int ret;

	if (conf_key__optional(k) &&
	    !*(char *const *)conf_key__cfield(k, base)) {
		ret = conf__line(f, "# %s", k->help);
		return ret ? ret : conf__line(f, "# %s: not set", k->name);
	}
	/* room for the longest value a line holds, written as "key=value" */
	ret = conf_key__format(k, base, value,
			       sizeof(value) - 1 - strlen(k->name));
	if (ret)
		return ret;
	if (!conf__verbatim(value))
		return -EINVAL;
	memset(&back, 0, sizeof(back));
	ret = conf_key__set(k, &back, value, &why);
	if (!ret && !conf_key__equal(k, &back, base))
		ret = -EINVAL;
	conf_key__clear(k, &back);
	if (ret)
		return ret;
	ret = conf__line(f, "# %s", k->help);
	if (ret)
		return ret;
	/* A value that just fits a line as "key=value" must render that way. */
	if (strlen(k->name) + 3 + strlen(value) > FR_CONF_LINE_MAX)
		return conf__line(f, "%s=%s", k->name, value);
	return conf__line(f, "%s = %s", k->name, value);
}

/*
 * conf_trig__render() - append the section of trigger @t: its header and
 * every key its type takes ('cgroup' as a comment when not set). Returns 0,
 * -EINVAL if a value (or the name, or the type) cannot be written so that it
 * loads back, or -ENOMEM.
 */
static int conf_trig__render(const struct fr_trigger_conf *t, FILE *f)
{
	const struct conf_key *k;
	size_t i;
	int ret;

	if (!t->name || !conf__name_ok(t->name, strlen(t->name)) ||
	    !conf__name_of(&conf_keys[CONF_TRIG_TYPE], t->type))
		return -EINVAL;
	ret = conf__line(f, "\n[%s %s]", conf_keys[CONF_TRIG_TYPE].section,
			 t->name);
	for (i = 0; !ret && i < FR_CONF_NKEYS; i++) {
		k = &conf_keys[i];
		if (k->types & FR_CONF_T(t->type))
			ret = conf_key__render(k, t, f);
	}
	return ret;
}

/*
 * conf__check_render() - load @text (@len bytes), the rendering of @cfg,
 * and compare. This holds the rules between keys and sections to the same
 * standard as a file; those that depend on the system are left out.
 * Returns 0, -EINVAL if it does not load back to @cfg, or -ENOMEM.
 */
static int conf__check_render(const struct fr_config *cfg, const char *text,
			      size_t len)
{
	struct fr_config *back = config__new();
	int ret;

	if (!back)
		return -ENOMEM;
	ret = conf__parse(back, "rendering", text, len, NULL, NULL, 0);
	if (!ret && !conf__equal(cfg, back))
		ret = -EINVAL;
	config__free(back);
	return ret;
}

char *config__render(const struct fr_config *cfg)
{
	char *text = NULL;
	size_t size = 0, i, j;
	int ret;
	FILE *f;

	if (!cfg) {
		errno = EINVAL;
		return NULL;
	}
	f = open_memstream(&text, &size);
	if (!f)
		return NULL;
	ret = conf__line(f, "# flightrec configuration: every key, with its effective value");
	for (i = 0; !ret && i < FR_CONF_NKEYS; i++) {
		if (conf__section_of(i) != (int)i || conf__is_named((int)i))
			continue;
		ret = conf__line(f, "\n[%s]", conf_keys[i].section);
		for (j = i; !ret && j < FR_CONF_NKEYS; j++)
			if (conf__section_of(j) == (int)i)
				ret = conf_key__render(&conf_keys[j], cfg, f);
	}
	for (i = 0; !ret && i < cfg->ntriggers; i++)
		ret = conf_trig__render(&cfg->triggers[i], f);
	if (!ret && ferror(f))
		ret = -ENOMEM;
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (!ret)
		ret = conf__check_render(cfg, text, size);
	if (ret) {
		free(text);
		errno = -ret;
		return NULL;
	}
	return text;
}
