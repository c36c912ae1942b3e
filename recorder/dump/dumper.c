// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * dumper.c - the dump thread. See dumper.h.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lz4out.h"
#include "dumper.h"
#include "encoder.h"
#include "outdir.h"
#include "procinfo.h"
#include "util.h"
#include "worker.h"
#include "writer.h"

#define FR_PROCINFO_WAIT_NS	(50 * 1000 * 1000ULL)

struct dumper {
	struct drain *drain;
	struct sampler *sampler;
	struct symbolizer *sym;
	struct procinfo *procinfo;
	unsigned write_delay_us;	/* FLIGHTREC_FAULT_WRITE_DELAY_US, tests only */
	int nice_err;			/* setting FR_DUMP_NICE failed */
	int efd;
	bool busy;			/* main thread: a request is out */
	struct worker w;		/* the dump thread; its lock guards what follows */
	bool pending;			/* req is for the thread */
	struct dump_request req;
	struct dump_result res;
};

static void *dump_thread(void *arg);

/*
 * Start the dump thread at FR_DUMP_NICE: a dump races the machine's trouble
 * and should win over busy work. A thread inherits its creator's nice value,
 * and lowering it needs CAP_SYS_NICE, which is dropped after start-up: so
 * lower ours for the creation and raise it back. Returns 0 or -errno.
 */
static int start_thread(struct dumper *dp)
{
	id_t self = (id_t)syscall(SYS_gettid);
	int old, err;

	errno = 0;
	old = getpriority(PRIO_PROCESS, self);
	if (errno)
		old = 0;
	if (setpriority(PRIO_PROCESS, self, FR_DUMP_NICE))
		dp->nice_err = -errno;
	err = worker__start(&dp->w, dump_thread, dp);
	if (!dp->nice_err)
		setpriority(PRIO_PROCESS, self, old);
	return err;
}

/*
 * dumper__new() - a dumper for @d's window, snapshotting through @s.
 * Returns NULL and sets errno.
 */
struct dumper *dumper__new(struct drain *d, struct sampler *s, struct symcache *sc,
			   struct procinfo *pi)
{
	struct dumper *dp = calloc(1, sizeof(*dp));

	if (!dp)
		return NULL;
	dp->drain = d;
	dp->sampler = s;
	dp->procinfo = pi;
	if (getenv("FLIGHTREC_FAULT_WRITE_DELAY_US"))
		dp->write_delay_us = (unsigned)strtoul(getenv("FLIGHTREC_FAULT_WRITE_DELAY_US"), NULL, 10);
	dp->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	dp->sym = symbolizer__new(sc);
	if (dp->efd < 0 || !dp->sym || (errno = -worker__init(&dp->w)) ||
	    (errno = -start_thread(dp))) {
		int e = errno;

		dumper__free(dp);
		errno = e;
		return NULL;
	}
	return dp;
}

/* dumper__nice_error() - 0, or why the dump thread runs at normal priority. */
int dumper__nice_error(const struct dumper *dp)
{
	return dp->nice_err;
}

/*
 * dumper__free() - stop the dump thread, letting a dump in progress finish
 * (its per-process reads end at resolve_timeout), and free @dp. A thread
 * that has not stopped within FR_DUMP_STOP_WAIT_NS is left behind with its
 * memory, so that a stop never waits longer.
 */
void dumper__free(struct dumper *dp)
{
	if (!dp)
		return;
	if (worker__stop(&dp->w, FR_DUMP_STOP_WAIT_NS))
		return;	/* left behind, with what it uses */
	worker__fini(&dp->w);
	dump_request__free(&dp->req);
	symbolizer__free(dp->sym);
	if (dp->efd >= 0)
		close(dp->efd);
	free(dp);
}

int dumper__fd(const struct dumper *dp)
{
	return dp->efd;
}

bool dumper__busy(const struct dumper *dp)
{
	return dp->busy;
}

void dump_request__free(struct dump_request *req)
{
	dump__free(&req->model);
	free(req->victim_pid);
	free(req->victim_start);
	free(req->dir);
	free(req->name_hint);
	memset(req, 0, sizeof(*req));
}

struct sink {
	struct lz4out *z;
	uint64_t bytes;
	unsigned delay_us;
};

static int sink_lz4(void *ctx, const void *buf, size_t len)
{
	struct sink *s = ctx;

	s->bytes += len;
	/* Fault injection for the tests: a slow disk, so kills land mid-write. */
	if (s->delay_us)
		usleep(s->delay_us);
	return lz4out__write(s->z, buf, len);
}

/* "flightrec-20261129T085432.123Z-<hint>.frd", unique in @dirfd. */
static void pick_name(int dirfd, const char *hint, char *name, size_t len)
{
	struct timespec ts;
	char stamp[32], tmp[NAME_MAX + 8], tag[48];
	struct tm tm;
	size_t i;

	/* The trigger name is config text: keep the file name tame. */
	for (i = 0; hint[i] && i < sizeof(tag) - 1; i++)
		tag[i] = isalnum((unsigned char)hint[i]) || strchr("._-", hint[i]) ? hint[i] : '_';
	tag[i] = 0;
	hint = tag;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	for (int k = 0; k < 1000; k++) {
		if (k)
			snprintf(name, len, "flightrec-%s.%03ldZ-%s-%d%s", stamp,
				 ts.tv_nsec / 1000000, hint, k, FR_DUMP_SUFFIX);
		else
			snprintf(name, len, "flightrec-%s.%03ldZ-%s%s", stamp,
				 ts.tv_nsec / 1000000, hint, FR_DUMP_SUFFIX);
		snprintf(tmp, sizeof(tmp), "%s.tmp", name);
		if (faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) &&
		    faccessat(dirfd, tmp, F_OK, AT_SYMLINK_NOFOLLOW))
			return;
	}
}

/* Encode, compress and write; fills dp->res. */
static void write_dump(struct dumper *dp)
{
	struct dump_request *req = &dp->req;
	struct dump_result *res = &dp->res;
	struct encode_in in = {
		.t = drain__tables(dp->drain), .sampler = dp->sampler,
		.sym = dp->sym, .first = req->first, .last = req->last,
		.meta_what = req->meta_what, .resolve_timeout_ns = req->resolve_timeout_ns,
		.victim_pid = req->victim_pid, .victim_start = req->victim_start,
	};
	struct encoder *enc = NULL;
	struct dumpfile *f = NULL;
	struct sink sink = {};
	char name[NAME_MAX + 1];
	int dirfd, err;

	dirfd = outdir__open(req->dir, &(struct outdir_opts){ .group = req->group, .gid = req->gid },
			     res->msg, sizeof(res->msg));
	if (dirfd < 0) {
		res->err = dirfd;
		return;
	}
	/* Let the /proc reads asked for before the trigger land first. */
	if (dp->procinfo)
		procinfo__sync(dp->procinfo, FR_PROCINFO_WAIT_NS);
	enc = encoder__new(&in, &req->model);
	if (!enc) {
		err = -errno;
		snprintf(res->msg, sizeof(res->msg), "failed to set up encoder: %s", strerror(-err));
		goto out;
	}
	err = encoder__prepare(enc);
	if (err) {
		snprintf(res->msg, sizeof(res->msg), "failed to snapshot and symbolize: %s",
			 strerror(-err));
		goto out;
	}
	pick_name(dirfd, req->name_hint, name, sizeof(name));
	f = dumpfile__create(dirfd, name, req->group ? 0640 : 0600, req->writer_flags);
	if (f && req->group && (err = dumpfile__chgrp(f, req->gid))) {
		snprintf(res->msg, sizeof(res->msg), "failed to give '%s/%s.tmp' to group %u: %s",
			 req->dir, name, (unsigned)req->gid, strerror(-err));
		goto out;
	}
	if (!f) {
		err = -errno;
		snprintf(res->msg, sizeof(res->msg), "failed to create '%s/%s.tmp': %s",
			 req->dir, name, strerror(-err));
		goto out;
	}
	res->uring = dumpfile__uses_uring(f);
	sink.delay_us = dp->write_delay_us;
	sink.z = lz4out__new(f);
	if (!sink.z) {
		err = -errno;
		snprintf(res->msg, sizeof(res->msg), "failed to start LZ4 frame in '%s/%s.tmp': %s",
			 req->dir, name, strerror(-err));
		goto out;
	}
	err = dump__write(&req->model, encoder__next_event, enc, sink_lz4, &sink, &res->events);
	if (!err)
		err = lz4out__finish(sink.z);
	if (err) {
		snprintf(res->msg, sizeof(res->msg), "failed to write '%s/%s.tmp': %s",
			 req->dir, name, strerror(-err));
		goto out;
	}
	res->bytes = dumpfile__bytes(f);
	err = dumpfile__commit(f);
	f = NULL;
	if (err) {
		snprintf(res->msg, sizeof(res->msg), "failed to commit '%s/%s': %s",
			 req->dir, name, strerror(-err));
		goto out;
	}
	snprintf(res->path, sizeof(res->path), "%s/%s", req->dir, name);
	for (uint32_t i = 0, n = 0; i < req->model.ntrig && n < sizeof(res->triggers); i++)
		n += snprintf(res->triggers + n, sizeof(res->triggers) - n, "%s%s", i ? "," : "",
			      req->model.trig[i].name);
	res->raw_bytes = sink.bytes;
	res->stale = encoder__stats(enc)->stale;
	res->procs = req->model.nproc;
	res->stacks = req->model.nstack;
out:
	res->err = err;
	lz4out__free(sink.z);
	dumpfile__abort(f);
	encoder__free(enc);
	close(dirfd);
}

/*
 * The dump thread: load kernel symbols first (the first dump should not
 * pay for parsing /proc/kallsyms), then write each request handed over,
 * a finished one announced on the eventfd. A dump in progress is finished
 * before a stop is honoured.
 */
static void *dump_thread(void *arg)
{
	struct dumper *dp = arg;
	uint64_t one = 1;

	symbolizer__warm(dp->sym);
	malloc_trim(0);		/* the parse's scratch is locked memory: give it back */
	worker__lock(&dp->w);
	for (;;) {
		while (!dp->pending && !worker__stopping(&dp->w))
			worker__wait(&dp->w, UINT64_MAX);
		if (!dp->pending)
			break;
		worker__unlock(&dp->w);
		write_dump(dp);
		dp->res.elapsed_ns = fr_boottime_ns() - dp->req.requested;
		malloc_trim(0);	/* and the dump's buffers */
		worker__lock(&dp->w);
		dp->pending = false;
		if (write(dp->efd, &one, sizeof(one)) < 0)
			dp->res.err = dp->res.err ? dp->res.err : -errno;
	}
	worker__unlock(&dp->w);
	return NULL;
}

/*
 * dumper__start() - take ownership of @req and write it on the dump
 * thread. The caller keeps the window pinned and the tables held until
 * dumper__finish(). Returns 0 or -EBUSY while a dump runs.
 */
int dumper__start(struct dumper *dp, struct dump_request *req)
{
	if (dp->busy)
		return -EBUSY;
	worker__lock(&dp->w);
	dump_request__free(&dp->req);
	dp->req = *req;
	memset(req, 0, sizeof(*req));
	memset(&dp->res, 0, sizeof(dp->res));
	dp->pending = true;
	worker__wake(&dp->w);
	worker__unlock(&dp->w);
	dp->busy = true;
	return 0;
}

/*
 * dumper__finish() - after dumper__fd() turned readable: join the dump
 * thread and copy out its result. Returns 0 (see res->err for the dump's
 * own outcome) or -EAGAIN when no dump has finished.
 */
int dumper__finish(struct dumper *dp, struct dump_result *res)
{
	uint64_t v;

	if (!dp->busy)
		return -EAGAIN;
	if (read(dp->efd, &v, sizeof(v)) != sizeof(v))
		return -EAGAIN;
	worker__lock(&dp->w);
	*res = dp->res;
	dump_request__free(&dp->req);
	worker__unlock(&dp->w);
	dp->busy = false;
	return 0;
}
