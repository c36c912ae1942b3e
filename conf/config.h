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

#include "settings.h"

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
 * this file names is stored in @cfg->group_gid. The program of an [output]
 * on_dump command this file sets must be an existing regular file that
 * access(X_OK) allows.
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
 * system (capability, cgroup directories, that the group exists, the
 * on_dump program) are not checked.
 */
char *config__render(const struct fr_config *cfg);

/* config__dup() - deep copy of @cfg; NULL + errno. */
struct fr_config *config__dup(const struct fr_config *cfg);

#endif /* FR_CONF_CONFIG_H */
