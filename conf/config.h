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

#include <stddef.h>
#include <stdint.h>

#define FR_CONF_DEFAULT_PATH	"/etc/flightrec/flightrec.conf"
#define FR_CONF_ERR_MAX		512

struct fr_config {
	char *path;		/* file it was loaded from, or NULL for built-in defaults */
	/* [recorder] */
	uint64_t window_ns;	/* 'window', default 30s; accepted 1s..24h */
	uint64_t memory_bytes;	/* 'memory', default 256M; accepted 4M..64G */
	uint32_t frequency;	/* 'frequency', default 99; accepted 1..10000 (Hz per CPU) */
	/* [output] */
	char *directory;	/* 'directory', default /var/lib/flightrec; absolute path */
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
 */
int config__load(struct fr_config *cfg, const char *path, char *err,
		 size_t errlen);

/*
 * config__render() - the effective config as INI text, every key included.
 * Loading the text gives back an identical config. Returns a malloc'd string,
 * or NULL + errno: EINVAL if a value cannot be written so that it loads back
 * unchanged (out of range, a directory with a trailing blank, ...), ENOMEM.
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
