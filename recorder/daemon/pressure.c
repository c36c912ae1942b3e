// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pressure.c - PSI in the daemon: the psi triggers (armed, confirmed,
 * re-armed with backoff when their cgroup goes away, never spinning), and
 * the pressure history: every second each pressure file the daemon knows
 * is read into the window, so a dump shows the curve that led up to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "log.h"
#include "pressure.h"
#include "util.h"

static void describe(struct psi_watch *w, const struct fr_trigger_conf *c)
{
	char window[32], stall[32];

	snprintf(stall, sizeof(stall), "%" PRIu64 "ms", c->stall_ns / FR_NSEC_PER_MSEC);
	snprintf(window, sizeof(window), "%" PRIu64 "ms", c->window_ns / FR_NSEC_PER_MSEC);
	snprintf(w->trig.desc, sizeof(w->trig.desc), "%s %s %s/%s %s",
		 psi_resource_name(c->resource), psi_kind_name(c->kind), stall, window,
		 c->cgroup ? c->cgroup : "system");
}

/* Arm watch @i and add its fd to the loop's epoll. 0 or -errno. */
static int arm(struct pressure_set *ps, size_t i)
{
	struct psi_watch *w = &ps->psi[i];
	struct epoll_event ev = { .events = EPOLLPRI, .data.u64 = ps->tag | (uint64_t)i << 8 };
	int err = psi_trigger__arm(w->psi);

	if (err)
		return err;
	err = epoll_ctl(ps->epfd, EPOLL_CTL_ADD, psi_trigger__fd(w->psi), &ev) ? -errno : 0;
	w->in_epoll = !err;
	return err;
}

/* A pressure file to sample, once per (source, resource). */
static int add_source(struct pressure_set *ps, const char *cgroup, int resource)
{
	char path[PATH_MAX];
	struct pressure_src *s, *n;

	for (size_t i = 0; i < ps->nsrcs; i++)
		if (ps->srcs[i].resource == resource &&
		    !strcmp(ps->srcs[i].source, cgroup ? cgroup : ""))
			return 0;
	if (psi_path(cgroup, resource, path, sizeof(path)))
		return -ENAMETOOLONG;
	n = realloc(ps->srcs, (ps->nsrcs + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	ps->srcs = n;
	s = &ps->srcs[ps->nsrcs++];
	snprintf(s->source, sizeof(s->source), "%s", cgroup ? cgroup : "");
	s->resource = resource;
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	return 0;
}

/*
 * pressure__init() - arm every psi trigger of @cfg, its fd in epoll @epfd
 * tagged @tag | index << 8, and open the pressure files for the history:
 * the system's three, and those of every watched cgroup. Without
 * /proc/pressure the daemon runs on with its other triggers (logged).
 * Returns 0 or -errno for a trigger that cannot be armed.
 */
int pressure__init(struct pressure_set *ps, const struct fr_config *cfg, int epfd, uint64_t tag)
{
	bool have_psi = !access("/proc/pressure/memory", R_OK);
	int err;

	memset(ps, 0, sizeof(*ps));
	ps->epfd = epfd;
	ps->tag = tag;

	if (!have_psi)
		fr_warn("/proc/pressure is missing (kernel without PSI, or psi=0): pressure "
			"triggers and history are off, ignoring");
	for (int r = FR_PSI_CPU; r <= FR_PSI_IO && have_psi; r++)
		if ((err = add_source(ps, NULL, r)))
			return err;
	ps->psi = calloc(cfg->ntriggers ? cfg->ntriggers : 1, sizeof(*ps->psi));
	if (!ps->psi)
		return -ENOMEM;
	for (size_t i = 0; i < cfg->ntriggers; i++) {
		const struct fr_trigger_conf *c = &cfg->triggers[i];
		struct trigger_policy pol = {
			.pre_ns = c->pre_ns, .post_ns = c->post_ns,
			.cooldown_ns = c->cooldown_ns, .max_per_hour = c->max_per_hour,
		};
		struct psi_watch *w;

		if (c->type != FR_TRIG_PSI || !have_psi)
			continue;
		w = &ps->psi[ps->npsi];
		err = trigger__init(&w->trig, c->name, "psi", &pol);
		if (err)
			return err;
		w->psi = psi_trigger__new(c->cgroup, c->resource, c->kind, c->stall_ns, c->window_ns);
		if (!w->psi)
			return -errno;
		ps->npsi++;
		snprintf(w->source, sizeof(w->source), "%s", c->cgroup ? c->cgroup : "");
		w->resource = c->resource;
		w->kind = c->kind;
		describe(w, c);
		err = arm(ps, ps->npsi - 1);
		if (err) {
			fr_err("failed to arm trigger '%s' (%s) on '%s': %s", c->name,
			       psi_trigger__spec(w->psi), psi_trigger__path(w->psi), strerror(-err));
			return err;
		}
		if (c->cgroup)
			for (int r = FR_PSI_CPU; r <= FR_PSI_IO; r++)
				if ((err = add_source(ps, c->cgroup, r)))
					return err;
		fr_info("trigger '%s' armed: '%s' on '%s'", c->name, psi_trigger__spec(w->psi),
			psi_trigger__path(w->psi));
	}
	return 0;
}

void pressure__fini(struct pressure_set *ps)
{
	for (size_t i = 0; i < ps->npsi; i++) {
		psi_trigger__free(ps->psi[i].psi);
		trigger__fini(&ps->psi[i].trig);
	}
	free(ps->psi);
	for (size_t i = 0; i < ps->nsrcs; i++)
		if (ps->srcs[i].fd >= 0)
			close(ps->srcs[i].fd);
	free(ps->srcs);
	ps->psi = NULL;
	ps->srcs = NULL;
	ps->npsi = ps->nsrcs = 0;
}

static void line_text(const struct psi_reading *r, int kind, char *buf, size_t len)
{
	const struct psi_line *l = kind == FR_PSI_FULL ? &r->full : &r->some;

	snprintf(buf, len, "%s avg10=%u.%02u avg60=%u.%02u avg300=%u.%02u total=%" PRIu64,
		 kind == FR_PSI_FULL ? "full" : "some", l->avg10 / 100, l->avg10 % 100,
		 l->avg60 / 100, l->avg60 % 100, l->avg300 / 100, l->avg300 % 100, l->total);
}

/*
 * pressure__event() - psi trigger @idx's fd reported @revents. A confirmed
 * event is a firing: it is written to *@f and its trigger returned, for the
 * caller to plan. A source that went away (EPOLLERR: its cgroup was
 * removed) is logged and retried later with backoff. Returns NULL when
 * nothing fired.
 */
struct trigger *pressure__event(struct pressure_set *ps, size_t idx, uint32_t revents,
				struct trigger_fire *f)
{
	struct psi_watch *w;
	struct psi_reading r;
	int res, kind;

	memset(f, 0, sizeof(*f));
	if (idx >= ps->npsi)
		return NULL;
	w = &ps->psi[idx];
	/* Leave epoll before the fd closes (a forked copy would keep it in). */
	if (revents & (EPOLLERR | EPOLLHUP) && psi_trigger__fd(w->psi) >= 0)
		epoll_ctl(ps->epfd, EPOLL_CTL_DEL, psi_trigger__fd(w->psi), NULL);
	res = psi_trigger__handle(w->psi, revents, &r);
	switch (res) {
	case FR_PSI_FIRED:
		kind = w->kind;
		snprintf(f->name, sizeof(f->name), "%s", w->trig.name);
		snprintf(f->type, sizeof(f->type), "psi");
		snprintf(f->reason, sizeof(f->reason), "%s pressure: %s (%s)", w->trig.desc,
			 psi_trigger__spec(w->psi), psi_trigger__path(w->psi));
		line_text(&r, kind, f->detail, sizeof(f->detail));
		f->ts = r.ts ? r.ts : fr_boottime_ns();
		return &w->trig;
	case FR_PSI_SPURIOUS:
		fr_debug("trigger '%s': event without stall growth, ignoring", w->trig.name);
		break;
	case FR_PSI_GONE:
		w->in_epoll = false;	/* the fd was closed, which left epoll */
		fr_warn("trigger '%s': pressure source '%s' is gone (cgroup removed?); "
			"retrying with backoff, ignoring", w->trig.name, psi_trigger__path(w->psi));
		w->warned = true;
		break;
	default:
		fr_warn("trigger '%s': failed to read '%s': %s, ignoring", w->trig.name,
			psi_trigger__path(w->psi), strerror(-res));
		break;
	}
	return NULL;
}

/* Re-arm triggers whose backoff expired. */
static void retry(struct pressure_set *ps, uint64_t now)
{
	for (size_t i = 0; i < ps->npsi; i++) {
		struct psi_watch *w = &ps->psi[i];
		uint64_t at = psi_trigger__retry_at(w->psi);
		int err;

		if (psi_trigger__fd(w->psi) >= 0 || !at || now < at)
			continue;
		err = arm(ps, i);
		if (!err) {
			fr_info("trigger '%s' re-armed on '%s'", w->trig.name, psi_trigger__path(w->psi));
			w->warned = false;
		} else {
			fr_debug("trigger '%s': re-arm failed: %s (attempt %u)", w->trig.name,
				 strerror(-err), psi_trigger__failures(w->psi));
		}
	}
}

/* Read every pressure file into the window, and feed the triggers' history. */
static void sample(struct pressure_set *ps, struct drain *drain)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < ps->nsrcs; i++) {
		struct pressure_src *s = &ps->srcs[i];
		struct fr_pressure_info info;
		struct psi_reading r;

		if (s->fd < 0 && !psi_path(*s->source ? s->source : NULL, s->resource, path,
					   sizeof(path)))
			s->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (s->fd < 0)
			continue;
		if (psi_read_fd(s->fd, &r)) {
			close(s->fd);
			s->fd = -1;	/* gone (cgroup removed): reopened when it is back */
			continue;
		}
		info = (struct fr_pressure_info){
			.resource = s->resource, .has_full = r.full_valid,
			.some_avg10 = r.some.avg10, .some_avg60 = r.some.avg60,
			.some_avg300 = r.some.avg300, .some_total = r.some.total,
			.full_avg10 = r.full.avg10, .full_avg60 = r.full.avg60,
			.full_avg300 = r.full.avg300, .full_total = r.full.total,
		};
		drain__add_pressure(drain, r.ts ? r.ts : fr_boottime_ns(), s->source, &info);
		for (size_t k = 0; k < ps->npsi; k++)
			if (ps->psi[k].resource == s->resource && !strcmp(ps->psi[k].source, s->source))
				psi_trigger__observe(ps->psi[k].psi, &r);
	}
}

/* pressure__tick() - once a second: history into @drain's window, and re-arming. */
void pressure__tick(struct pressure_set *ps, struct drain *drain)
{
	sample(ps, drain);
	retry(ps, fr_boottime_ns());
}

/* pressure__watch() - the @i-th psi trigger and its watch, or NULL past the last. */
const struct psi_watch *pressure__watch(const struct pressure_set *ps, size_t i)
{
	return i < ps->npsi ? &ps->psi[i] : NULL;
}
