/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.c - the INI config: parsing files against the schema (schema.c),
 * defaults, validation across keys and sections, and rendering.
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
#include "schema.h"

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
