/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * schema.h - the config's schema, inside conf/: the value types, the table
 * of keys (one row per enum conf_row, their sections, defaults, ranges and
 * help), and what reads and writes one key's value in its struct, with the
 * value syntax (durations, sizes, command lines) they share. config.c
 * parses files with it and renders configs from it.
 */
#ifndef FR_CONF_SCHEMA_H
#define FR_CONF_SCHEMA_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include <ini.h>

#include "settings.h"

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


/* Also the file names: <resource>.pressure */


/* Rendering writes the first word of a value: true or false. */

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
	CONF_RECORDER_UNWIND_KERNEL_TABLES,
	CONF_RECORDER_PYTHON,
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

/* One row of conf_keys[] for each enum conf_row (schema.c asserts it). */
#define FR_CONF_NKEYS	CONF_NROWS

/* A unit suffix and what it multiplies by. */
struct conf_unit {
	const char *suffix;
	uint64_t scale;
};

/* Rendering picks the first unit that divides the value exactly. */

/* The IEC spellings come after "", so rendering never uses them. */

extern const struct conf_name conf_trig_types[];
extern const struct conf_name conf_psi_resources[];
extern const struct conf_name conf_psi_kinds[];
extern const struct conf_name conf_bool_names[];
extern const char *const conf_cooldown_defs[];
extern const char *const conf_max_per_hour_defs[];
extern const struct conf_key conf_keys[];
extern const struct conf_unit conf_duration_units[];
extern const struct conf_unit conf_size_units[];
extern const struct conf_unit conf_plain_units[];

bool conf__cap_sys_resource(void);
const char *conf__file_type(mode_t mode);
int conf__format_num(enum conf_type type, uint64_t v, char *buf,
		     size_t len);
int conf__group_gid(const char *name, gid_t *gid);
bool conf__is_named(int sec);
const struct conf_key *conf__key_find(int sec, const char *name);
void conf__list(int sec, enum fr_trig_type type, char *buf,
		size_t len);
__attribute__((format(printf, 3, 4)))
void conf__msg(char *msg, size_t msglen, const char *fmt, ...);
const char *conf__name_of(const struct conf_key *k, uint32_t value);
bool conf__name_ok(const char *name, size_t len);
int conf__section_find(const char *name, size_t len);
int conf__section_of(size_t i);
const char *conf__shown(const char *s, size_t len, char *buf,
			size_t size);
int conf__split(const char *cmd, char ***argvp, int *argcp,
		const char **why);
const char *conf__strerror(int err, char *buf, size_t len);
const char *conf__type_name(enum fr_trig_type type);
void conf_free_argv(char **argv);
void conf_key__accepted(const struct conf_key *k, char *buf,
			size_t len);
const void *conf_key__cfield(const struct conf_key *k,
			     const void *base);
void conf_key__clear(const struct conf_key *k, void *base);
const char *conf_key__default(const struct conf_key *k,
			      enum fr_trig_type type);
bool conf_key__equal(const struct conf_key *k, const void *a,
		     const void *b);
void *conf_key__field(const struct conf_key *k, void *base);
int conf_key__format(const struct conf_key *k, const void *base,
		     char *buf, size_t len);
bool conf_key__owns(const struct conf_key *k);
int conf_key__set(const struct conf_key *k, void *base,
		  const char *value, const char **why);

#endif /* FR_CONF_SCHEMA_H */
