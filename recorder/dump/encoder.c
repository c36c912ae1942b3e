// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * encoder.c - frozen window to dump model (encoder.h): pass 1 collects what
 * the events reference, symbolize.c names it, pass 2 translates the events.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "contract.h"
#include "encoder.h"
#include "encstate.h"
#include "symbolize.h"
#include "evtype.h"
#include "hashmap.h"
#include "kallsyms.h"
#include "perfmap.h"
#include "procinfo.h"
#include "snapshot.h"
#include "symbols.h"
#include "untrusted.h"
#include "util.h"

static uint64_t str_key_hash(const void *k, size_t size, void *ctx)
{
	const struct str_key *x = k;

	(void)size;
	(void)ctx;
	return fr_hash64(x->s, x->len, 0x737472);
}

static bool str_key_equal(const void *a, const void *b, size_t size, void *ctx)
{
	const struct str_key *x = a, *y = b;

	(void)size;
	(void)ctx;
	return x->len == y->len && !memcmp(x->s, y->s, x->len);
}

/* A map of @key_size-byte keys (compared byte by byte) to dump indexes. */
static void index_map(struct fr_hashmap *m, size_t key_size)
{
	fr_hashmap__init(m, key_size, sizeof(uint32_t), NULL, NULL, NULL);
}

/* ----------------------------------------------------------- symbolizer */

/*
 * symbolizer__new() - kernel symbols (loaded on first use), @cache, and the
 * names kept between dumps, within FR_NAMES_BUDGET until
 * symbolizer__set_names_budget(). Returns NULL and sets errno.
 */
struct symbolizer *symbolizer__new(struct symcache *cache)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cache = cache;
	s->names = names__new(FR_NAMES_BUDGET);
	if (!s->names) {
		free(s);
		return NULL;
	}
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	names__free(s->names);
	kallsyms__free(s->ksyms);
	free(s);
}

/* symbolizer__set_names_budget() - before the first dump: the names' budget in bytes. */
void symbolizer__set_names_budget(struct symbolizer *s, uint64_t bytes)
{
	names__set_budget(s->names, bytes);
}

/*
 * symbolizer__names() - between dumps: the names kept, compacted first when
 * near their budget (names__trim()).
 */
struct names *symbolizer__names(struct symbolizer *s, bool *compacted)
{
	*compacted = names__trim(s->names);
	return s->names;
}

/* symbolizer__store() - the names kept, as they are: a dump never compacts them. */
/* symbolizer__set_python() - the names of Python frames come from @py (NULL: none). */
void symbolizer__set_python(struct symbolizer *s, struct pycache *py)
{
	s->py = py;
}

struct pycache *symbolizer__python(const struct symbolizer *s)
{
	return s->py;
}

struct names *symbolizer__store(struct symbolizer *s)
{
	return s->names;
}

/* A cheap fingerprint of the loaded modules; 0 when unreadable. */
static uint64_t modules_hash(void)
{
	char buf[65536];
	ssize_t n = 0, r;
	int fd = open("/proc/modules", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	uint64_t h = 1;

	/* Hash it all, 64 KiB at a time. */
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		h = fr_hash64(buf, r, h);
		n += r;
	}
	close(fd);
	return n ? h | 1 : 0;
}

/*
 * Kernel symbols, read once and again whenever the set of loaded modules
 * changed (a module loaded since would not resolve).
 */
static const struct kallsyms *kernel_symbols(struct symbolizer *s)
{
	uint64_t h = modules_hash();

	/* h == 0: /proc/modules unreadable; keep what was loaded. */
	if (!s->loaded || (h && h != s->modules_hash)) {
		/* The names kept of kernel addresses are of the old symbols. */
		if (s->loaded)
			names__reset(s->names);
		kallsyms__free(s->ksyms);
		s->ksyms = kallsyms__load("/proc/kallsyms");
		s->modules_hash = h;
		s->loaded = true;
	}
	return s->ksyms;
}

/*
 * symbolizer__warm_read() - read the kernel symbols into @w, touching no
 * symbolizer: the caller holds no lock for the 100-400 ms /proc/kallsyms
 * takes (the main thread sets the names' budget under the names lock).
 */
void symbolizer__warm_read(struct ksyms_warm *w)
{
	w->hash = modules_hash();
	w->ksyms = kallsyms__load("/proc/kallsyms");
}

/* symbolizer__warm_done() - under the names lock: are kernel symbols loaded? */
bool symbolizer__warm_done(const struct symbolizer *s)
{
	return s->loaded;
}

/*
 * symbolizer__warm_adopt() - under the names lock: @s takes the symbols
 * @w read, unless it loaded its own meanwhile (then they are freed).
 */
void symbolizer__warm_adopt(struct symbolizer *s, struct ksyms_warm *w)
{
	if (s->loaded) {
		kallsyms__free(w->ksyms);
	} else {
		s->ksyms = w->ksyms;
		s->modules_hash = w->hash;
		s->loaded = true;
	}
	w->ksyms = NULL;
}

/*
 * symbolizer__warm_replace() - under the names lock: @s takes the symbols
 * @w read in place of its own, and forgets the names kept (of the old ones).
 */
void symbolizer__warm_replace(struct symbolizer *s, struct ksyms_warm *w)
{
	if (!w->ksyms)
		return;		/* unreadable now: keep what it has */
	if (s->loaded)
		names__reset(s->names);
	kallsyms__free(s->ksyms);
	s->ksyms = w->ksyms;
	s->modules_hash = w->hash;
	s->loaded = true;
	w->ksyms = NULL;
}

/* symbolizer__ksyms() - the kernel symbols as last loaded (no check of the modules). */
const struct kallsyms *symbolizer__ksyms(const struct symbolizer *s)
{
	return s->ksyms;
}

/* symbolizer__cache() - the symbol cache it names user frames from. */
struct symcache *symbolizer__cache(const struct symbolizer *s)
{
	return s->cache;
}

/* ------------------------------------------------------------- snapshot */

/* Fold the live snapshot into the dump's process table. */
static int merge_snapshot(struct encoder *e)
{
	struct fr_dump *d = e->d;
	int err;

	for (size_t i = 0; i < e->snap.n; i++) {
		const struct snap_proc *sp = &e->snap.p[i];
		struct fr_dump_proc *dp;
		uint32_t idx;

		if (sp->flags & FR_SNAP_GONE)
			e->st.snapshot_gone++;
		if (!encoder__proc_of_incarnation(e, sp->pid, sp->start, &idx)) {
			err = encoder__new_proc(e, sp->pid, sp->start, &idx);
			if (err)
				return err;
			err = encoder__add_cstr(e, sp->comm, &d->proc[idx].comm);
			if (err)
				return err;
			d->proc[idx].ppid = sp->ppid;
		}
		dp = &d->proc[idx];
		if (sp->flags & FR_SNAP_KTHREAD)
			dp->flags |= FR_DPROC_KTHREAD;
		if (sp->has_mem && !(dp->flags & FR_DPROC_EXITED)) {
			dp->has_mem = 1;
			dp->oom_score_adj = sp->oom_score_adj;
			dp->rss_file = sp->rss[FR_RSS_FILE];
			dp->rss_anon = sp->rss[FR_RSS_ANON];
			dp->rss_shmem = sp->rss[FR_RSS_SHMEM];
			dp->swap = sp->rss[FR_RSS_SWAP];
			dp->pgtables = sp->pgtables;
			dp->mem_stamp = sp->seen;
		}
		if (!(sp->flags & FR_SNAP_GONE) && !(dp->flags & FR_DPROC_EXITED))
			dp->flags |= FR_DPROC_LIVE;
		proc_meta__get(sp->meta);
		err = encoder__proc_facts(e, idx, sp->meta);
		if (err)
			return err;
	}
	return 0;
}

/* --------------------------------------------------------------- collect */

/* The OOM dossier's references: the invoker and its stack, the memcg's path. */
static int collect_oom(struct encoder *e, const struct fr_event *ev)
{
	struct fr_oom_info o = {};
	uint32_t tmp;
	int err = 0;

	if (ev->arg)
		err = encoder__proc_of(e, ev->arg, &tmp);
	if (!err && ev->tid)
		err = encoder__stack_of(e, ev->tid, ev->ts, false, &tmp);
	if (err)
		return err;
	intern__copy(e->in.t->strs, ev->ref, &o, sizeof(o));
	o.memcg[sizeof(o.memcg) - 1] = 0;
	return o.memcg[0] ? encoder__add_cstr(e, o.memcg, &tmp) : 0;
}

/* A stall's references: its stack, its memcg's path. */
static int collect_stall(struct encoder *e, const struct fr_event *ev)
{
	struct fr_stall_info si = {};
	uint32_t tmp;
	int err = ev->arg ? encoder__stack_of(e, ev->arg, ev->ts, false, &tmp) : 0;

	if (err)
		return err;
	intern__copy(e->in.t->strs, ev->ref, &si, sizeof(si));
	si.memcg[sizeof(si.memcg) - 1] = 0;
	return si.memcg[0] ? encoder__add_cstr(e, si.memcg, &tmp) : 0;
}

static int collect_one(struct encoder *e, const struct fr_event *ev)
{
	uint32_t idx, tmp;
	int err;

	if (!dump__event_has_proc(ev->type))
		return encoder__str_of(e, ev->comm, &tmp);
	err = encoder__proc_of(e, ev->proc, &idx);
	if (!err)
		err = encoder__str_of(e, ev->comm, &tmp);
	/* Where the table says tid is a thread; another process's RSS change names that process. */
	if (!err && ev->tid && fr_evtype(ev->type)->tid == FR_EVREF_THREAD &&
	    !(ev->type == FR_EV_RSS && (ev->flags & FR_EVRSS_OTHER)))
		err = encoder__add_thread(e, idx, ev->tid, tmp);
	if (err)
		return err;
	/* No default: a type added to enum fr_event_type must be collected. */
	switch ((enum fr_event_type)ev->type) {
	case FR_EV_SAMPLE:
		e->st.uend[(ev->flags & FR_DSAMPLE_UEND_MASK) >> FR_DSAMPLE_UEND_SHIFT]++;
		e->st.walked_later += !!(ev->arg & FR_EVSAMPLE_LATER);
		return ev->ref ? encoder__stack_of(e, ev->ref, ev->ts, true, &tmp) : 0;
	case FR_EV_FORK:
		return encoder__proc_of(e, ev->ref, &tmp);
	case FR_EV_EXEC:
		err = encoder__str_of(e, ev->ref, &tmp);
		/* Until /proc says better (a process too short-lived to be read),
		 * its executable is the file it exec'd. */
		if (!err && !e->d->proc[idx].exe)
			e->d->proc[idx].exe = tmp;
		return err;
	case FR_EV_EXIT: {
		struct fr_exit_stats st = {};

		intern__copy(e->in.t->strs, ev->ref, &st, sizeof(st));
		e->d->proc[idx].rss = st.rss_anon + st.rss_file + st.rss_shmem;
		return 0;
	}
	case FR_EV_OOM:
		return collect_oom(e, ev);
	case FR_EV_STALL:
		return collect_stall(e, ev);
	case FR_EV_OFFCPU:
		return ev->arg ? encoder__stack_of(e, ev->arg, ev->ts, false, &tmp) : 0;
	case FR_EV_RSS_SITE:
		return ev->ref ? encoder__stack_of(e, ev->ref, ev->ts, false, &tmp) : 0;
	case FR_EV_RSS:
	case FR_EV_OOMADJ:
	case FR_EV_STALLSUM:
		return 0;	/* values and blobs, read when translated */
	case FR_EV_PRESSURE:
	case FR_EV_MEMSYS:
	case FR_EV_MEMCG:
		return 0;	/* no process: returned above */
	}
	return 0;
}

/* Pass 1: learn what the frozen events reference. */
static int collect(struct encoder *e)
{
	struct fr_event ev;
	int err;

	for (uint64_t i = e->in.first; i < e->in.last; i++) {
		if (window__read(e->in.t->win, i, &ev))
			continue;
		if (!e->d->win.first_event)
			e->d->win.first_event = ev.ts;
		err = collect_one(e, &ev);
		if (err == -ENOENT)
			continue;	/* slot freed: the event was recycled */
		if (err)
			return err;
	}
	return 0;
}

/* ---------------------------------------------------------------- public */

/*
 * encoder__new() - an encoder for the frozen window in @in, filling
 * @model (whose META, TRIG, WIND and LOSS the caller has set).
 * Returns NULL and sets errno.
 */
struct encoder *encoder__new(const struct encode_in *in, struct fr_dump *model)
{
	struct encoder *e = calloc(1, sizeof(*e));
	uint32_t empty;

	if (!e)
		return NULL;
	e->in = *in;
	e->d = model;
	e->cursor = in->first;
	e->page_shift = (unsigned)__builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE));
	fr_hashmap__init(&e->str_of, sizeof(struct str_key), sizeof(uint32_t),
			 str_key_hash, str_key_equal, NULL);
	index_map(&e->proc_of_id, sizeof(struct incarnation));
	index_map(&e->thread_of, sizeof(uint64_t));
	if (encoder__add_str(e, "", 0, &empty)) {
		encoder__free(e);
		errno = ENOMEM;
		return NULL;
	}
	return e;
}

void encoder__free(struct encoder *e)
{
	if (!e)
		return;
	namer__fini(&e->nmr);
	free(e->str_map.v);
	free(e->bin_map.v);
	free(e->frame_map.v);
	free(e->frame_src);
	fr_hashmap__fini(&e->thread_of);
	free(e->todo);
	free(e->stack_ids);
	free(e->stack_ts);
	free(e->stack_samples);
	free(e->stack_of_id.v);
	free(e->str_of_id.v);
	fr_hashmap__fini(&e->proc_of_id);
	free(e->proc_of_slot.v);
	fr_hashmap__fini(&e->str_of);
	snapshot__free(&e->snap);
	free(e);
}

/*
 * encoder__prepare() - build the model's tables: snapshot, referenced
 * processes, strings and stacks, symbolized. Returns 0 or -errno.
 */
int encoder__prepare(struct encoder *e)
{
	uint64_t t0 = fr_boottime_ns(), t1;
	int err;

	err = snapshot__take(&e->snap, e->in.sampler, e->in.meta_what);
	if (err)
		return err;
	e->st.snapshot_procs = e->snap.n;
	t1 = fr_boottime_ns();
	e->st.snapshot_ns = t1 - t0;
	err = collect(e);
	if (err)
		return err;
	err = merge_snapshot(e);
	if (!err)
		err = encoder__resolve_victims(e);
	if (err)
		return err;
	e->st.collect_ns = fr_boottime_ns() - t1;
	e->ksyms = kernel_symbols(e->in.sym);
	e->names = symbolizer__store(e->in.sym);
	namer__init(&e->nmr, e->in.t, e->in.sym->cache, e->ksyms, e->names, e->in.meta_what);
	e->nmr.py = e->in.sym->py;
	/* Reading what processes own starts here: perf maps, fresh maps and binaries. */
	if (e->in.resolve_timeout_ns)
		e->deadline = fr_boottime_ns() + e->in.resolve_timeout_ns;
	e->nmr.deadline = e->deadline;
	/* The symbols read below stay until the names are copied into the dump. */
	if (e->in.sym && e->in.sym->cache)
		symcache__hold(e->in.sym->cache, true);
	err = encoder__symbolize(e);
	if (e->in.sym && e->in.sym->cache)
		symcache__hold(e->in.sym->cache, false);
	return err;
}

/* Translate window event @ev; -ENOENT if it references what pass 1 missed. */
/* The OOM event with its dossier: the invoker, its stack, the memcg. */
static int translate_oom(struct encoder *e, const struct fr_event *ev,
			 struct fr_dump_event *out)
{
	struct fr_oom_info o = {};

	intern__copy(e->in.t->strs, ev->ref, &o, sizeof(o));
	o.memcg[sizeof(o.memcg) - 1] = 0;
	out->tid = 0;
	out->oom = (struct fr_dump_oom){
		.total_vm = o.total_vm, .rss_anon = o.rss_anon,
		.rss_file = o.rss_file, .rss_shmem = o.rss_shmem,
		.pgtables = o.pgtables, .oom_score_adj = o.oom_score_adj,
		.uid = o.uid, .swapents = o.swapents, .invoker_tid = o.invoker_tid,
		.memcg_usage = o.memcg_usage, .memcg_limit = o.memcg_limit,
	};
	if (ev->arg) {
		if (!map_get(&e->proc_of_slot, ev->arg, &out->oom.invoker))
			return -ENOENT;
		out->oom.invoker++;
	}
	if (ev->tid) {
		if (!map_get(&e->stack_of_id, ev->tid, &out->stack))
			return -ENOENT;
		out->stack++;
	}
	if (o.memcg[0] && encoder__add_cstr(e, o.memcg, &out->oom.memcg))
		return -ENOENT;
	return 0;
}

/* A window event's stack id @id as the dump's stack index + 1 (0: none). */
static int stack_ref(struct encoder *e, uint32_t id, uint32_t *out)
{
	*out = 0;
	if (!id)
		return 0;
	if (!map_get(&e->stack_of_id, id, out))
		return -ENOENT;
	(*out)++;
	return 0;
}

/* A stall: its details from the blob, its stack from arg. */
static int translate_stall(struct encoder *e, const struct fr_event *ev,
			   struct fr_dump_event *out)
{
	struct fr_stall_info si = {};

	intern__copy(e->in.t->strs, ev->ref, &si, sizeof(si));
	si.memcg[sizeof(si.memcg) - 1] = 0;
	out->flags = (uint8_t)si.stack_flags;
	out->unwound = si.stack_flags & FR_STALL_INFO_LATER ? FR_DUNWOUND_LATER : 0;
	out->stall = (struct fr_dump_stall){
		.kind = ev->flags & FR_EVSTALL_KIND_MASK, .begin = FR_MIN(si.begin, ev->ts),
		.result = si.result, .gfp = si.gfp, .order = si.order, .reason = si.reason,
		.memcg_id = si.memcg_id,
	};
	if (si.memcg[0] && encoder__add_cstr(e, si.memcg, &out->stall.memcg))
		return -ENOENT;
	return stack_ref(e, ev->arg, &out->stack);
}

/* The kernel's task states an offcpu event keeps: D, killable D, S. */
#define FR_STATE_S		0x1
#define FR_STATE_D		0x2
#define FR_STATE_WAKEKILL	0x100

/* A block: its length from ref (ns, or us), its stack from arg. */
static int translate_offcpu(struct encoder *e, const struct fr_event *ev,
			    struct fr_dump_event *out)
{
	uint64_t len = ev->ref & FR_EVOFF_LEN_MAX;
	uint64_t dur = ev->flags & FR_EVOFF_US ? len * 1000 : len;
	unsigned kind = ev->flags & FR_EVSTALL_KIND_MASK;

	out->flags = ev->flags & FR_DSAMPLE_UEND_MASK;
	out->unwound = ev->ref & FR_EVOFF_LATER ? FR_DUNWOUND_LATER : 0;
	out->off = (struct fr_dump_offcpu){
		.kind = (uint8_t)kind, .begin = ev->ts - FR_MIN(dur, ev->ts),
		.state = kind == FR_DSTALL_SLEEP ? FR_STATE_S :
			 FR_STATE_D | (ev->flags & FR_EVOFF_KILLABLE ? FR_STATE_WAKEKILL : 0),
	};
	return stack_ref(e, ev->arg, &out->stack);
}

static int translate(struct encoder *e, const struct fr_event *ev,
		     struct fr_dump_event *out)
{
	memset(out, 0, sizeof(*out));
	out->ts = ev->ts;
	out->tid = ev->tid;
	out->cpu = ev->cpu;
	out->type = ev->type;
	out->flags = ev->flags;
	if (ev->comm && !map_get(&e->str_of_id, ev->comm, &out->comm))
		return -ENOENT;
	if (dump__event_has_proc(ev->type) && !map_get(&e->proc_of_slot, ev->proc, &out->proc))
		return -ENOENT;
	/* No default: a type added to enum fr_event_type must be translated. */
	switch ((enum fr_event_type)ev->type) {
	case FR_EV_MEMSYS:
		intern__copy(e->in.t->strs, ev->ref, &out->msys, sizeof(out->msys));
		out->cpu = 0;
		return 0;
	case FR_EV_MEMCG:
		intern__copy(e->in.t->strs, ev->ref, &out->mcg, sizeof(out->mcg));
		out->cpu = 0;
		return 0;
	case FR_EV_PRESSURE: {
		struct fr_pressure_info p = {};

		intern__copy(e->in.t->strs, ev->ref, &p, sizeof(p));
		out->cpu = 0;
		out->psi = (struct fr_dump_pressure){
			.resource = p.resource, .has_full = p.has_full,
			.some_avg10 = p.some_avg10, .some_avg60 = p.some_avg60,
			.some_avg300 = p.some_avg300, .some_total = p.some_total,
			.full_avg10 = p.full_avg10, .full_avg60 = p.full_avg60,
			.full_avg300 = p.full_avg300, .full_total = p.full_total,
		};
		return 0;
	}
	case FR_EV_SAMPLE:
		out->unwound = ev->arg & FR_EVSAMPLE_LATER ? FR_DUNWOUND_LATER : 0;
		if (ev->ref) {
			if (!map_get(&e->stack_of_id, ev->ref, &out->stack))
				return -ENOENT;
			out->stack++;
		}
		return 0;
	case FR_EV_FORK:
		return map_get(&e->proc_of_slot, ev->ref, &out->child) ? 0 : -ENOENT;
	case FR_EV_EXEC:
		return map_get(&e->str_of_id, ev->ref, &out->filename) ? 0 : -ENOENT;
	case FR_EV_EXIT: {
		struct fr_exit_stats st = {};

		intern__copy(e->in.t->strs, ev->ref, &st, sizeof(st));
		out->exit = (struct fr_dump_exit){
			.code = (int32_t)ev->arg,
			.rss_anon = st.rss_anon, .rss_file = st.rss_file,
			.rss_shmem = st.rss_shmem, .rss_peak = st.rss_peak,
			.utime = st.utime, .stime = st.stime,
			.min_flt = st.min_flt, .maj_flt = st.maj_flt,
		};
		return 0;
	}
	case FR_EV_OOM:
		return translate_oom(e, ev, out);
	case FR_EV_RSS:
		out->flags = 0;
		out->rss = (struct fr_dump_rss){
			.member = ev->flags & FR_EVRSS_MEMBER_MASK,
			.why = (ev->flags & FR_EVRSS_WHY_MASK) >> FR_EVRSS_WHY_SHIFT,
			.value = (uint64_t)ev->ref << e->page_shift,
			.changed = ev->ts - FR_MIN((uint64_t)ev->arg * 1000, ev->ts),
		};
		if (ev->flags & FR_EVRSS_OTHER) {
			out->rss.by = ev->tid;
			out->tid = 0;
		}
		return 0;
	case FR_EV_OOMADJ:
		out->oomadj = (struct fr_dump_oomadj){ .value = (int32_t)ev->arg, .by = ev->ref };
		return 0;
	case FR_EV_RSS_SITE:
		out->flags = 0;
		out->site = (struct fr_dump_rss_site){
			.member = ev->flags, .grown = (uint64_t)ev->arg << e->page_shift,
		};
		if (ev->ref) {
			if (!map_get(&e->stack_of_id, ev->ref, &out->stack))
				return -ENOENT;
			out->stack++;
		}
		return 0;
	case FR_EV_STALL:
		return translate_stall(e, ev, out);
	case FR_EV_OFFCPU:
		return translate_offcpu(e, ev, out);
	case FR_EV_STALLSUM: {
		struct fr_stallsum_info si = {};

		intern__copy(e->in.t->strs, ev->ref, &si, sizeof(si));
		out->flags = 0;
		out->ssum = (struct fr_dump_stallsum){
			.kind = ev->flags, .n_short = si.n_short, .ns_short = si.ns_short,
			.n_lost = si.n_lost, .ns_lost = si.ns_lost, .n_all = si.n_all,
			.ns_all = si.ns_all,
		};
		return 0;
	}
	}
	return -ENOENT;	/* not a type the window holds */
}

/*
 * add_losses() - this dump's own losses, and the untrusted-file refusals and
 * malformed binaries since start as they stand at its end (its own reads
 * included, unlike the counters read at the freeze).
 */
static int add_losses(struct encoder *e)
{
	const struct encoder_stats *st = &e->st;
	struct symcache_stats ss = {};
	struct untrusted_stats us;
	struct fr_kvlist *l = &e->d->loss;
	char key[64];
	int err = 0;

	err |= kvlist__add_u64(l, "dump_recycled_events", st->stale);
	err |= kvlist__add_u64(l, "dump_resolve_skipped", st->resolve_skipped);
	err |= kvlist__add_u64(l, "dump_perfmaps_refused", st->perfmaps_refused);
	err |= kvlist__add_u64(l, "dump_user_frames_unresolved", st->user_frames - st->user_resolved);
	err |= kvlist__add_u64(l, "dump_user_frames_no_symbols", st->user_no_symbols);
	err |= kvlist__add_u64(l, "dump_user_frames_evicted", st->user_evicted);
	err |= kvlist__add_u64(l, "dump_user_frames_bogus", st->user_bogus);
	err |= kvlist__add_u64(l, "dump_lines_skipped", st->lines_skipped);
	for (int k = FR_DUEND_OUTERMOST; k < FR_DUEND_NR; k++) {
		snprintf(key, sizeof(key), "user_stack_end_%s", dump__uend_name(k));
		err |= kvlist__add_u64(l, key, st->uend[k]);
	}
	err |= kvlist__add_u64(l, "unwind_walked_later", st->walked_later);
	untrusted__stats(&us);
	for (int r = 0; r < FR_REFUSED_NR; r++) {
		snprintf(key, sizeof(key), "untrusted_refused_%s", untrusted__refusal_name(r));
		err |= kvlist__add_u64(l, key, us.refused[r]);
	}
	if (e->in.sym && e->in.sym->cache)
		symcache__stats(e->in.sym->cache, &ss, true);
	err |= kvlist__add_u64(l, "symbols_bad_elf", ss.bad_elf);
	err |= kvlist__add_u64(l, "symbols_refused", ss.refused);
	return err ? -ENOMEM : 0;
}

/*
 * encoder__next_event() - pass 2, the event source of dump__write(): the
 * next frozen event, translated. Events recycled since pass 1, or out of
 * time order (a broken watermark), are skipped and counted.
 * Returns 1, 0 at the end, or -errno.
 */
int encoder__next_event(void *ctx, struct fr_dump_event *out)
{
	struct encoder *e = ctx;
	struct fr_event ev;

	while (e->cursor < e->in.last) {
		uint64_t i = e->cursor++;

		if (window__read(e->in.t->win, i, &ev) ||
		    translate(e, &ev, out) || ev.ts < e->last_ts) {
			e->st.stale++;
			continue;
		}
		e->last_ts = ev.ts;
		return 1;
	}
	if (!e->loss_added) {
		e->loss_added = true;
		if (add_losses(e))
			return -ENOMEM;
	}
	return 0;
}

const struct encoder_stats *encoder__stats(const struct encoder *e)
{
	return &e->st;
}
