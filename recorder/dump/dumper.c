// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * dumper.c - the dump thread, and the namer thread that names new stacks
 * ahead of dumps. See dumper.h.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "contract.h"
#include "lz4out.h"
#include "dumper.h"
#include "encoder.h"
#include "namer.h"
#include "outdir.h"
#include "procinfo.h"
#include "pycode.h"
#include "pysplice.h"
#include "spscq.h"
#include "util.h"
#include "worker.h"
#include "writer.h"

#define FR_PROCINFO_WAIT_NS	(50 * 1000 * 1000ULL)
/* The stacks announced and not yet named: about 1 s of a busy machine's new ones. */
#define FR_ANNOUNCE_QUEUE	(1U << 20)
/*
 * Naming ahead stops this long after it began (to give the symbol cache
 * and the line handles back to their budgets), and per-process reads in
 * it too: what is left is named at the next batch or the dump.
 */
#define FR_NAME_AHEAD_SLICE_NS	(50 * 1000 * 1000ULL)
/*
 * A stack is named once its event is this old: a new process's maps,
 * symbols and unwind rows are being read in its first moments (the
 * namer should not take the CPU from that), and its names are final
 * more often after them. A dump names what is younger itself.
 */
#define FR_NAME_AFTER_NS	(300 * 1000 * 1000ULL)

/* The Python code objects to read at first sight (bytes of queue: ~8000 of them). */
#define FR_PYQ_BYTES		(256u << 10)
#define FR_PY_SEEN		1024	/* a power of two */

/* A code object to read while its process lives: pycache__name() will find it. */
struct pyreq {
	uint64_t start, code;
	uint32_t pid, print;
};

/* A stack announced by the drain, queued for naming ahead of a dump (or its end: gone). */
struct announced {
	uint32_t id, tag, serial, slot, pid, kn, un, gone;
	uint64_t hash, start, ts;
	uint64_t ips[2 * FR_MAX_STACK];
};

struct dumper {
	struct drain *drain;
	struct sampler *sampler;
	struct symbolizer *sym;
	struct procinfo *procinfo;
	unsigned write_delay_us;	/* FLIGHTREC_FAULT_WRITE_DELAY_US, tests only */
	int nice_err;			/* setting FR_DUMP_NICE failed */
	int efd;
	bool busy;			/* main thread: a request is out */
	struct spscq *announced;	/* main thread -> namer thread: stacks to name */
	struct spscq *pyq;		/* main thread -> namer thread: struct pyreq */
	struct pyreq py_seen[FR_PY_SEEN];	/* main thread: the last queued, by hash */
	_Atomic uint64_t py_queued, py_dropped;
	struct dumpbufs *bufs;		/* dump thread: write buffers and ring; NULL: per dump */
	struct lz4out *lz;		/* dump thread: the compressor; NULL: per dump */
	uint32_t self;			/* the daemon's own pid: its stacks are left to dumps */
	_Atomic uint64_t nannounced, ndropped, named_ahead;
	_Atomic uint64_t names_bytes, names_budget, names_stacks, names_frames, names_resets;
	_Atomic uint64_t names_compactions;
	/*
	 * The names kept between dumps, the symbols and line handles they are
	 * read from: the namer thread names under this lock one slice at a
	 * time, the dump thread holds it while it names; _Atomic dump_waits
	 * tells the namer to let go.
	 */
	pthread_mutex_t names_lock;
	_Atomic bool dump_waits;
	struct worker nw;		/* the namer thread; its lock guards kicked */
	bool kicked;			/* stacks wait to be named */
	struct worker w;		/* the dump thread; its lock guards what follows */
	bool pending;			/* req is for the thread */
	bool ksyms_stale;		/* read the kernel symbols again when idle */
	struct dump_request req;
	struct dump_result res;
};

static void *dump_thread(void *arg);
static void *namer_thread(void *arg);

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
	err = worker__start(&dp->w, "fr-dump", dump_thread, dp);
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
	dp->announced = spscq__new(FR_ANNOUNCE_QUEUE);
	dp->pyq = spscq__new(FR_PYQ_BYTES);
	/* Without them (no memory now), each dump allocates its own. */
	dp->bufs = dumpbufs__new(0);
	dp->lz = lz4out__alloc();
	dp->self = (uint32_t)getpid();
	pthread_mutex_init(&dp->names_lock, NULL);
	if (dp->efd < 0 || !dp->sym || !dp->announced || !dp->pyq || (errno = -worker__init(&dp->w)) ||
	    (errno = -worker__init(&dp->nw)) || (errno = -start_thread(dp)) ||
	    (errno = -worker__start(&dp->nw, "fr-namer", namer_thread, dp))) {
		int e = errno;

		dumper__free(dp);
		errno = e;
		return NULL;
	}
	return dp;
}

/*
 * dumper__set_python() - where Python frames get their names (NULL:
 * none); before the first dump is started.
 */
void dumper__set_python(struct dumper *dp, struct pycache *py)
{
	pthread_mutex_lock(&dp->names_lock);
	symbolizer__set_python(dp->sym, py);
	pthread_mutex_unlock(&dp->names_lock);
}

/*
 * dumper__set_names_budget() - the budget of the names kept between dumps;
 * before the first dump is started.
 */
void dumper__set_names_budget(struct dumper *dp, uint64_t bytes)
{
	pthread_mutex_lock(&dp->names_lock);
	symbolizer__set_names_budget(dp->sym, bytes);
	pthread_mutex_unlock(&dp->names_lock);
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
	atomic_store(&dp->dump_waits, true);	/* the namer lets go at once */
	if (worker__stop(&dp->nw, FR_DUMP_STOP_WAIT_NS) ||
	    worker__stop(&dp->w, FR_DUMP_STOP_WAIT_NS))
		return;	/* left behind, with what it uses */
	worker__fini(&dp->nw);
	worker__fini(&dp->w);
	pthread_mutex_destroy(&dp->names_lock);
	dump_request__free(&dp->req);
	symbolizer__free(dp->sym);
	spscq__free(dp->announced);
	spscq__free(dp->pyq);
	lz4out__free(dp->lz);
	dumpbufs__free(dp->bufs);
	if (dp->efd >= 0)
		close(dp->efd);
	free(dp);
}

/*
 * queue_python() - main thread: the code objects of @a's Python frames not
 * queued lately, for the namer to read at once (a short script is gone
 * long before its stacks' turn). Whether any was queued. A full queue
 * drops them (counted): their frames are named by address if the process
 * is gone by the dump.
 */
static bool queue_python(struct dumper *dp, const struct announced *a)
{
	bool queued = false;

	for (uint32_t i = a->kn; i + 1 < a->kn + a->un; i++) {
		struct pyreq r, *seen;

		if (!fr_pyw_is(a->ips[i]))
			continue;
		r = (struct pyreq){ .start = a->start, .code = a->ips[i + 1], .pid = a->pid,
				    .print = fr_pyw_print(a->ips[i]) };
		i++;
		seen = &dp->py_seen[fr_hash64(&r, sizeof(r), 0) & (FR_PY_SEEN - 1)];
		if (!memcmp(seen, &r, sizeof(r)))
			continue;
		*seen = r;
		if (spscq__push(dp->pyq, &r, sizeof(r))) {
			atomic_fetch_add(&dp->py_dropped, 1);
			continue;
		}
		atomic_fetch_add(&dp->py_queued, 1);
		queued = true;
	}
	return queued;
}

/*
 * read_python() - the namer thread: read the code objects queued, while
 * their processes live, into the cache the names come from.
 */
static void read_python(struct dumper *dp)
{
	struct pycache *py = symbolizer__python(dp->sym);
	char func[FR_PY_NAME_MAX], file[FR_PY_FILE_MAX];
	struct pyreq r;
	int line;

	while (spscq__pop(dp->pyq, &r, sizeof(r)) > 0)
		if (py)
			pycache__name(py, r.pid, r.start, r.code, r.print, 0, true, func,
				      sizeof(func), file, sizeof(file), &line);
}

/*
 * dumper__announce() - main thread: a stack the drain stored for the first
 * time, to be named on the namer thread before a dump needs it. Never
 * waits: when the queue is full the stack is counted and left to the dump.
 * The thread is woken once the queue is a quarter full, else at the tick.
 * The daemon's own stacks are left to dumps: naming them ahead made the
 * namer's own samples new stacks to name, a loop that kept an idle ASan
 * daemon at 10 kHz busy 20-30 ms a second, and overflowed a small ring.
 * Naming only its other threads' ahead broke the loop, but cost the namer
 * 7 ms a second more at 999 Hz with processes starting (the /proc
 * worker's stacks are many and new), for ~70 ms less at a dump: the
 * recorder's CPU at all times is what it must not add to.
 */
void dumper__announce(struct dumper *dp, const struct drain_stack *s)
{
	struct announced a = {
		.id = s->id, .tag = s->tag, .serial = s->serial, .slot = s->slot, .pid = s->pid,
		.kn = FR_MIN(s->kn, (uint32_t)FR_ARRAY_SIZE(a.ips)), .hash = s->hash,
		.start = s->start, .ts = s->ts,
	};

	if (!dp || s->pid == dp->self)
		return;
	a.un = FR_MIN(s->un, (uint32_t)FR_ARRAY_SIZE(a.ips) - a.kn);
	memcpy(a.ips, s->ips, (a.kn + a.un) * sizeof(a.ips[0]));
	atomic_fetch_add(&dp->nannounced, 1);
	if (spscq__push(dp->announced, &a, (uint32_t)(offsetof(struct announced, ips) +
						    (a.kn + a.un) * sizeof(a.ips[0])))) {
		atomic_fetch_add(&dp->ndropped, 1);
		return;
	}
	if (queue_python(dp, &a) || spscq__used(dp->announced) > spscq__size(dp->announced) / 4)
		dumper__tick(dp);
}

/*
 * dumper__forget() - main thread: window stack @id (the entry of intern
 * @serial) was freed: its names need not be kept. Never waits; a notice
 * that finds the queue full is lost (the names stay until the store is
 * compacted or emptied: a serial never matches again).
 */
void dumper__forget(struct dumper *dp, uint32_t id, uint32_t serial)
{
	struct announced a = { .id = id, .serial = serial, .gone = 1 };

	if (dp && spscq__push(dp->announced, &a, offsetof(struct announced, hash)))
		atomic_fetch_add(&dp->ndropped, 1);
}

/*
 * dumper__tick() - main thread, every tick: wake the namer if stacks wait
 * to be named. Never waits for its lock: a namer that holds it is awake
 * and between two batches, and the next tick tries again.
 */
void dumper__tick(struct dumper *dp)
{
	if (!dp || !spscq__used(dp->announced) || !worker__trylock(&dp->nw))
		return;
	dp->kicked = true;
	worker__wake(&dp->nw);
	worker__unlock(&dp->nw);
}

/* dumper__names() - any thread: the names kept between dumps, as last seen. */
void dumper__names(struct dumper *dp, struct dumper_names *out)
{
	*out = (struct dumper_names){
		.bytes = atomic_load(&dp->names_bytes), .budget = atomic_load(&dp->names_budget),
		.stacks = atomic_load(&dp->names_stacks), .frames = atomic_load(&dp->names_frames),
		.resets = atomic_load(&dp->names_resets),
		.compactions = atomic_load(&dp->names_compactions),
		.announced = atomic_load(&dp->nannounced),
		.dropped = atomic_load(&dp->ndropped), .named_ahead = atomic_load(&dp->named_ahead),
	};
}

/* Publish the store's figures for dumper__names(). */
static void publish_names(struct dumper *dp, const struct names *nm)
{
	struct names_stats st;

	names__stats(nm, &st);
	atomic_store(&dp->names_bytes, st.bytes);
	atomic_store(&dp->names_budget, st.budget);
	atomic_store(&dp->names_stacks, st.stacks);
	atomic_store(&dp->names_frames, st.frames);
	atomic_store(&dp->names_resets, st.resets);
	atomic_store(&dp->names_compactions, st.compactions);
}

/*
 * name_one() - name announced stack @a into the store, with its frames'
 * source lines, unless the store has final names for it already.
 * Returns 0 or -ENOMEM.
 */
static int name_one(struct namer *n, struct announced *a)
{
	const struct names_stack *rec;
	struct space *sp = NULL;
	const uint32_t *nf;
	int err;

	if (a->gone) {
		names__forget_stack(n->nm, a->id, a->serial);
		return 0;
	}
	if (a->slot && a->un) {
		sp = namer__space(n, a->slot, a->pid, a->start, a->ts);
		if (!sp)
			return -ENOMEM;
	}
	if (namer__valid(names__stack(n->nm, a->id), a->hash, a->serial, sp))
		return 0;
	err = namer__stack(n, a->id, a->tag, a->ips, (a->kn + a->un) * sizeof(a->ips[0]), sp,
			   a->hash, a->serial);
	rec = err ? NULL : names__stack(n->nm, a->id);
	if (!rec || !sp)
		return err;
	nf = names__stack_frames(n->nm, rec);
	for (uint32_t i = rec->kn; i < rec->kn + rec->un && !err; i++) {
		uint32_t f = nf[i];

		if (names__frame_lines(n->nm, f) == FR_LINES_PENDING)
			err = namer__lines(n, f, sp, namer__lookup_addr(names__frame_at(n->nm, f)->addr,
									i - rec->kn));
		nf = names__stack_frames(n->nm, names__stack(n->nm, a->id));
	}
	return err;
}

/*
 * Does announced stack @a hold Python frames? Their code objects are read
 * at first sight, not FR_NAME_AFTER_NS later: a short script may be gone
 * by then, and its names with it.
 */
static bool has_python(const struct announced *a)
{
	for (uint32_t i = a->kn; i < a->kn + a->un; i++)
		if (fr_pyw_is(a->ips[i]))
			return true;
	return false;
}

/*
 * name_ahead() - the namer thread, under the names lock: name the stacks
 * the drain announced, oldest first, until the queue is empty, a dump
 * waits for the lock, FR_NAME_AHEAD_SLICE_NS has passed, or the oldest is
 * younger than FR_NAME_AFTER_NS and holds no Python frame (*@wait_until:
 * when it no longer is; 0 otherwise). Whether stacks are left.
 */
static bool name_ahead(struct dumper *dp, uint64_t *wait_until)
{
	struct symcache *cache = symbolizer__cache(dp->sym);
	bool compacted;
	struct names *nm = symbolizer__names(dp->sym, &compacted);
	uint64_t end = fr_boottime_ns() + FR_NAME_AHEAD_SLICE_NS;
	struct announced a;
	struct namer n;
	bool left = true;
	int len, err = 0;

	namer__init(&n, drain__tables(dp->drain), cache, symbolizer__ksyms(dp->sym), nm,
		    FR_META_NO_CMDLINE);
	n.py = symbolizer__python(dp->sym);
	n.deadline = end;
	/*
	 * No lines hold: a slice is not a dump. Handles it closes for the
	 * budget are not read again outside a dump for FR_LINES_REOPEN_NS,
	 * where a hold per slice read them all again slice after slice.
	 */
	if (cache)
		symcache__hold(cache, true);
	*wait_until = 0;
	while (!err && !atomic_load(&dp->dump_waits)) {
		uint64_t now = fr_boottime_ns();

		if (now >= end)
			break;
		len = spscq__peek(dp->announced, &a, sizeof(a));
		if (len <= 0) {
			left = false;
			break;
		}
		if (!a.gone && a.ts + FR_NAME_AFTER_NS > now && !has_python(&a)) {
			*wait_until = a.ts + FR_NAME_AFTER_NS;
			break;
		}
		spscq__pop(dp->announced, &a, sizeof(a));
		err = name_one(&n, &a);
		if (!err && !a.gone)
			atomic_fetch_add(&dp->named_ahead, 1);
	}
	if (cache)
		symcache__hold(cache, false);
	namer__fini(&n);
	publish_names(dp, nm);
	if (compacted)
		malloc_trim(0);	/* what the old store held goes back */
	return left && !err;
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
	bool locked = false;
	int dirfd, err;
	uint64_t t;

	dirfd = outdir__open(req->dir, &(struct outdir_opts){ .group = req->group, .gid = req->gid },
			     res->msg, sizeof(res->msg));
	if (dirfd < 0) {
		res->err = dirfd;
		return;
	}
	t = fr_boottime_ns();
	res->phases.freeze = req->frozen - req->requested;
	/* Let the /proc reads asked for before the trigger land first. */
	if (dp->procinfo)
		procinfo__sync(dp->procinfo, FR_PROCINFO_WAIT_NS);
	res->phases.proc_wait = fr_boottime_ns() - t;
	/* The names: the namer lets go between two stacks. */
	atomic_store(&dp->dump_waits, true);
	pthread_mutex_lock(&dp->names_lock);
	locked = true;
	atomic_store(&dp->dump_waits, false);
	res->phases.names_wait = fr_boottime_ns() - t - res->phases.proc_wait;
	enc = encoder__new(&in, &req->model);
	if (!enc) {
		err = -errno;
		snprintf(res->msg, sizeof(res->msg), "failed to set up encoder: %s", strerror(-err));
		goto out;
	}
	err = encoder__prepare(enc);
	publish_names(dp, symbolizer__store(dp->sym));
	pthread_mutex_unlock(&dp->names_lock);
	locked = false;
	res->phases.snapshot = encoder__stats(enc)->snapshot_ns;
	res->phases.collect = encoder__stats(enc)->collect_ns;
	res->phases.names = encoder__stats(enc)->names_ns;
	res->phases.lines = encoder__stats(enc)->lines_ns;
	res->phases.stacks_named = encoder__stats(enc)->named_stacks;
	res->phases.stacks_named_own = encoder__stats(enc)->named_own;
	res->phases.lines_looked_up = encoder__stats(enc)->lines_looked_up;
	if (err) {
		snprintf(res->msg, sizeof(res->msg), "failed to snapshot and symbolize: %s",
			 strerror(-err));
		goto out;
	}
	pick_name(dirfd, req->name_hint, name, sizeof(name));
	f = dumpfile__create_with(dirfd, name, req->group ? 0640 : 0600, req->writer_flags,
				  dp->bufs);
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
	if (dp->lz) {
		err = lz4out__begin(dp->lz, f);
		sink.z = err ? NULL : dp->lz;
	} else {
		sink.z = lz4out__new(f);
		err = sink.z ? 0 : -errno;
	}
	if (!sink.z) {
		snprintf(res->msg, sizeof(res->msg), "failed to start LZ4 frame in '%s/%s.tmp': %s",
			 req->dir, name, strerror(-err));
		goto out;
	}
	t = fr_boottime_ns();
	err = dump__write(&req->model, encoder__next_event, enc, sink_lz4, &sink, &res->events);
	if (!err)
		err = lz4out__finish(sink.z);
	if (err) {
		snprintf(res->msg, sizeof(res->msg), "failed to write '%s/%s.tmp': %s",
			 req->dir, name, strerror(-err));
		goto out;
	}
	res->bytes = dumpfile__bytes(f);
	res->phases.write = fr_boottime_ns() - t;
	t = fr_boottime_ns();
	err = dumpfile__commit(f);
	f = NULL;
	res->phases.commit = fr_boottime_ns() - t;
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
	if (locked)
		pthread_mutex_unlock(&dp->names_lock);
	res->err = err;
	if (sink.z != dp->lz)
		lz4out__free(sink.z);
	dumpfile__abort(f);
	encoder__free(enc);
	close(dirfd);
}

/*
 * reread_ksyms() - the dump thread, idle: read the kernel symbols again,
 * outside the names lock, and put them in place under it; the names kept
 * are dropped with the old ones (a kernel address named without a symbol
 * was final).
 */
static void reread_ksyms(struct dumper *dp)
{
	struct ksyms_warm w;

	symbolizer__warm_read(&w);
	pthread_mutex_lock(&dp->names_lock);
	symbolizer__warm_replace(dp->sym, &w);
	pthread_mutex_unlock(&dp->names_lock);
	malloc_trim(0);
}

/*
 * dumper__ksyms_stale() - main thread: kernel code was loaded since the
 * kernel symbols were read (BPF programs: the sampler's late ones, which a
 * sample of the loading thread lands in); the dump thread reads them again
 * when it has no dump to write. Never waits.
 */
void dumper__ksyms_stale(struct dumper *dp)
{
	if (!dp)
		return;
	worker__lock(&dp->w);
	dp->ksyms_stale = true;
	worker__wake(&dp->w);
	worker__unlock(&dp->w);
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
	struct ksyms_warm w;
	uint64_t one = 1;

	symbolizer__warm_read(&w);
	pthread_mutex_lock(&dp->names_lock);
	symbolizer__warm_adopt(dp->sym, &w);
	pthread_mutex_unlock(&dp->names_lock);
	malloc_trim(0);		/* the parse's scratch is locked memory: give it back */
	worker__lock(&dp->w);
	for (;;) {
		while (!dp->pending && !dp->ksyms_stale && !worker__stopping(&dp->w))
			worker__wait(&dp->w, UINT64_MAX);
		if (dp->ksyms_stale && !dp->pending && !worker__stopping(&dp->w)) {
			dp->ksyms_stale = false;
			worker__unlock(&dp->w);
			reread_ksyms(dp);
			worker__lock(&dp->w);
			continue;
		}
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
 * The namer thread, at the daemon's own priority (not the dump thread's
 * raised one: naming ahead must not take the CPU from the workers that
 * read /proc and build unwind rows; not lower either: a dump waits for it
 * to let go of the names, and the main thread must never wait behind a
 * thread starved of CPU): names what the drain announced, a slice at a
 * time under the names lock, and gives way to a dump between stacks. A
 * dump names what it has not reached.
 */
static void *namer_thread(void *arg)
{
	struct dumper *dp = arg;

	worker__lock(&dp->nw);
	for (;;) {
		uint64_t until;
		bool left;

		while (!dp->kicked && !worker__stopping(&dp->nw))
			worker__wait(&dp->nw, UINT64_MAX);
		if (worker__stopping(&dp->nw))
			break;
		dp->kicked = false;
		worker__unlock(&dp->nw);
		read_python(dp);
		pthread_mutex_lock(&dp->names_lock);
		if (symbolizer__warm_done(dp->sym)) {
			left = name_ahead(dp, &until);
		} else {
			/*
			 * A kernel frame's name is final only with kallsyms
			 * loaded: named before, a stack would be left to the
			 * dump. The dump thread reads them at start.
			 */
			left = true;
			until = fr_boottime_ns() + FR_NAME_AHEAD_SLICE_NS;
		}
		pthread_mutex_unlock(&dp->names_lock);
		worker__lock(&dp->nw);
		dp->kicked |= left;
		/* The oldest is too young, or a dump took the lock: later. */
		if (left)
			worker__wait(&dp->nw, FR_MAX(until, fr_boottime_ns() +
						   FR_NAME_AHEAD_SLICE_NS / 10));
	}
	worker__unlock(&dp->nw);
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
