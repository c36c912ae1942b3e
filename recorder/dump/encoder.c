// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * encoder.c - frozen window to dump model. See encoder.h.
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
#include "evtype.h"
#include "hashmap.h"
#include "kallsyms.h"
#include "perfmap.h"
#include "procinfo.h"
#include "snapshot.h"
#include "symbols.h"
#include "untrusted.h"
#include "util.h"

#define FR_MTIME_SLACK_NS	(50 * 1000 * 1000ULL)

struct symbolizer {
	struct kallsyms *ksyms;
	uint64_t modules_hash;		/* of /proc/modules when ksyms was read */
	bool loaded;
	struct symcache *cache;		/* shared with the procinfo worker */
};

/*
 * Address space of one incarnation during one dump: the facts read while
 * it lived (maps and their symbols), a fresh read if it is still alive and
 * an address falls outside them (dlopen), and its JIT perf map.
 */
struct space {
	uint32_t pid;
	uint64_t start;
	bool exited;
	bool current;			/* the image now (not one before an exec) */
	bool reread;			/* tried the fresh read already */
	bool perfmap_tried;
	struct proc_meta *meta;
	struct proc_meta *fresh;
	struct perfmap *perfmap;
};

/* One address symbolized in one space (kernel: FR_NO_SPACE): a key of addr_of. */
#define FR_NO_SPACE	UINT32_MAX
struct addr_frame {
	uint64_t addr;
	uint32_t space;
	uint32_t leaf;
};

/* A string of the dump's table, by its bytes: a key of str_of. */
struct str_key {
	const char *s;		/* the table's copy once stored */
	uint64_t len;
};

/* A binary, by path and build-id: a key of bin_of. */
struct bin_key {
	const char *path;	/* the dump string's copy once stored */
	struct fr_buildid bid;	/* len 0: none */
};

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

static uint64_t bin_key_hash(const void *k, size_t size, void *ctx)
{
	const struct bin_key *x = k;

	(void)size;
	(void)ctx;
	return fr_hash64(x->path, strlen(x->path), x->bid.len) ^
	       fr_hash64(x->bid.id, x->bid.len, 1);
}

static bool bin_key_equal(const void *a, const void *b, size_t size, void *ctx)
{
	const struct bin_key *x = a, *y = b;

	(void)size;
	(void)ctx;
	return !strcmp(x->path, y->path) && x->bid.len == y->bid.len &&
	       !memcmp(x->bid.id, y->bid.id, x->bid.len);
}

/* A u64-keyed map's value into *@val; false when absent. */
static bool id_get(const struct fr_hashmap *m, uint64_t key, uint32_t *val)
{
	const uint32_t *v = fr_hashmap__find(m, &key);

	if (v)
		*val = *v;
	return v != NULL;
}

static int id_put(struct fr_hashmap *m, uint64_t key, uint32_t val)
{
	return fr_hashmap__insert(m, &key, &val);
}

/* A map of @key_size-byte keys (compared byte by byte) to dump indexes. */
static void index_map(struct fr_hashmap *m, size_t key_size)
{
	fr_hashmap__init(m, key_size, sizeof(uint32_t), NULL, NULL, NULL);
}

/* A frame whose source position the lines pass looks up. */
struct line_todo {
	uint32_t frame;		/* dump frame */
	uint32_t space;		/* spaces[] it was found in */
	uint64_t addr;		/* the address looked up (addr - 1 for a return address) */
	uint64_t weight;	/* its CPU samples, discounted by depth (lines_by_weight()) */
	uint32_t seq;		/* order made: ties keep it */
};

struct encoder {
	struct encode_in in;
	struct fr_dump *d;
	struct snapshot snap;
	unsigned page_shift;
	uint32_t str_cap, proc_cap, bin_cap, frame_cap, stack_cap, line_cap;
	/* Every map's key is the whole identity, compared on lookup. */
	struct fr_hashmap str_of;	/* string (bytes) -> dump string */
	struct fr_hashmap proc_of_slot;	/* process table slot -> dump process */
	struct fr_hashmap proc_of_id;	/* (pid, start) -> dump process */
	struct fr_hashmap str_of_id;	/* window string id -> dump string */
	struct fr_hashmap stack_of_id;	/* window stack id -> dump stack */
	struct fr_hashmap frame_of;	/* every frame field -> dump frame */
	struct fr_hashmap bin_of;	/* (path, build-id) -> dump binary */
	struct fr_hashmap space_of_slot;	/* process slot and era -> spaces[] */
	struct fr_hashmap thread_of;	/* (dump process, tid) -> threads[] */
	struct fr_hashmap addr_of;	/* (space, address, leaf) -> dump frame */
	uint32_t thread_cap;
	uint64_t boot_to_real;		/* CLOCK_REALTIME - CLOCK_BOOTTIME */
	struct space *spaces;
	uint32_t nspaces;
	uint32_t space_cap;
	uint32_t *stack_ids;		/* window stack id of each dump stack */
	uint64_t *stack_ts;		/* its first sample: which exec era it is of */
	uint32_t *stack_samples;	/* CPU samples with the stack (0: a stall's or an OOM's only) */
	uint64_t cursor;
	uint64_t last_ts;
	bool loss_added;
	uint64_t deadline;		/* CLOCK_BOOTTIME ns: no per-process read after it */
	struct line_todo *todo;		/* frames the lines pass looks up */
	uint32_t ntodo, todo_cap;
	const struct kallsyms *ksyms;	/* this dump's kernel symbols */
	struct encoder_stats st;
};

/* ----------------------------------------------------------- symbolizer */

/* symbolizer__new() - kernel symbols (loaded on first use) and @cache. */
struct symbolizer *symbolizer__new(struct symcache *cache)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cache = cache;
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	kallsyms__free(s->ksyms);
	free(s);
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
		kallsyms__free(s->ksyms);
		s->ksyms = kallsyms__load("/proc/kallsyms");
		s->modules_hash = h;
		s->loaded = true;
	}
	return s->ksyms;
}

/* symbolizer__warm() - load kernel symbols now, before the first dump needs them. */
void symbolizer__warm(struct symbolizer *s)
{
	kernel_symbols(s);
}

/* -------------------------------------------------------------- helpers */

/* Intern a string into the dump's string table; *idx gets its index. */
static int add_str(struct encoder *e, const char *s, size_t len, uint32_t *idx)
{
	struct fr_dump *d = e->d;
	struct str_key key = { .s = s, .len = len };
	const uint32_t *found = fr_hashmap__find(&e->str_of, &key);
	char *copy;
	uint32_t i;
	int err;

	if (found) {
		*idx = *found;
		return 0;
	}
	/*
	 * Two arrays share str_cap: it is raised only once both have grown,
	 * so a failed growth leaves neither shorter than it claims.
	 */
	if (d->nstr + 1 > e->str_cap) {
		uint32_t c1 = e->str_cap, c2 = e->str_cap;

		err = fr_grow32((void **)&d->str, &c1, d->nstr + 1, sizeof(*d->str));
		if (!err)
			err = fr_grow32((void **)&d->str_len, &c2, d->nstr + 1, sizeof(*d->str_len));
		if (err)
			return err;
		e->str_cap = FR_MIN(c1, c2);
	}
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = 0;
	i = d->nstr;
	key.s = copy;
	err = fr_hashmap__insert(&e->str_of, &key, &i);
	if (err) {
		free(copy);
		return err;
	}
	d->str[i] = copy;
	d->str_len[i] = len;
	d->nstr++;
	*idx = i;
	return 0;
}

static int add_cstr(struct encoder *e, const char *s, uint32_t *idx)
{
	if (!s) {
		*idx = 0;
		return 0;
	}
	return add_str(e, s, strlen(s), idx);
}

/* The dump string of window string @id. */
static int str_of(struct encoder *e, uint32_t id, uint32_t *idx)
{
	char buf[FR_PATH_LEN + 1];
	size_t len;
	int err;

	if (!id) {
		*idx = 0;
		return 0;
	}
	if (id_get(&e->str_of_id, id, idx))
		return 0;
	len = intern__copy(e->in.t->strs, id, buf, FR_PATH_LEN);
	err = add_str(e, buf, FR_MIN(len, (size_t)FR_PATH_LEN), idx);
	return err ? err : id_put(&e->str_of_id, id, *idx);
}

/* An incarnation as a key of proc_of_id: (pid, start), no padding. */
struct incarnation {
	uint64_t pid;
	uint64_t start;
};

/* The dump process of incarnation (@pid, @start) into *@idx; false when none. */
static bool proc_of_incarnation(struct encoder *e, uint32_t pid, uint64_t start, uint32_t *idx)
{
	struct incarnation k = { pid, start };
	const uint32_t *v = fr_hashmap__find(&e->proc_of_id, &k);

	if (v)
		*idx = *v;
	return v != NULL;
}

/* A new dump process for (@pid, @start). */
static int new_proc(struct encoder *e, uint32_t pid, uint64_t start, uint32_t *idx)
{
	struct fr_dump *d = e->d;
	int err;

	err = fr_grow32((void **)&d->proc, &e->proc_cap, d->nproc + 1, sizeof(*d->proc));
	if (err)
		return err;
	*idx = d->nproc++;
	memset(&d->proc[*idx], 0, sizeof(d->proc[0]));
	d->proc[*idx].pid = pid;
	d->proc[*idx].start = start;
	return fr_hashmap__insert(&e->proc_of_id, &(struct incarnation){ pid, start }, idx);
}

/* Record thread (@tid, @name) of dump process @idx once; a later name wins. */
static int add_thread(struct encoder *e, uint32_t idx, uint32_t tid, const char *name)
{
	struct fr_dump *d = e->d;
	uint64_t key = (uint64_t)idx << 32 | tid;	/* exact: both are 32 bits */
	uint32_t t, nidx;
	int err;

	err = add_cstr(e, name, &nidx);
	if (err)
		return err;
	if (id_get(&e->thread_of, key, &t)) {
		d->thread[t].name = nidx;
		return 0;
	}
	err = fr_grow32((void **)&d->thread, &e->thread_cap, d->nthread + 1, sizeof(*d->thread));
	if (err)
		return err;
	t = d->nthread++;
	d->thread[t] = (struct fr_dump_thread){ .proc = idx, .tid = tid, .name = nidx };
	return id_put(&e->thread_of, key, t);
}

static int add_threads(struct encoder *e, uint32_t idx, const struct proc_meta *m)
{
	int err = 0;

	for (uint32_t i = 0; i < m->nthreads && !err; i++)
		err = add_thread(e, idx, m->threads[i].tid, m->threads[i].name);
	return err;
}

/*
 * Fill dump process @idx from /proc facts @m (consumed: its reference is
 * put). Facts read while the process lived stand for processes that have
 * exited since; a later read (the snapshot) overrides them.
 */
static int proc_facts(struct encoder *e, uint32_t idx, struct proc_meta *m)
{
	struct fr_dump_proc *dp = &e->d->proc[idx];
	int err = 0;

	if (!m)
		return 0;
	if (m->exe)
		err = add_cstr(e, m->exe, &dp->exe);
	/* Facts read before a reload turned [privacy] cmdline off stay unwritten. */
	if (!err && m->cmdline && !(e->in.meta_what & FR_META_NO_CMDLINE))
		err = add_cstr(e, m->cmdline, &dp->cmdline);
	if (!err && m->cgroup)
		err = add_cstr(e, m->cgroup, &dp->cgroup);
	if (!err && m->memcg)
		err = add_cstr(e, m->memcg, &dp->memcg);
	if (!err && m->container)
		err = add_cstr(e, m->container, &dp->container);
	if (m->nspid)
		dp->nspid = m->nspid;
	if (m->cgroup_id)
		dp->cgroup_id = m->cgroup_id;
	if (!err)
		err = add_threads(e, idx, m);
	if (!(dp->flags & FR_DPROC_EXITED)) {
		dp->state = (uint8_t)m->state;
		dp->rss = m->rss;
	}
	dp->stamp = m->stamp;
	dp->ppid = dp->ppid ? dp->ppid : m->ppid;
	dp->flags |= FR_DPROC_PROCFS;
	proc_meta__put(m);
	return err;
}

/* The dump process of process table @slot, created from the table entry. */
static int proc_of(struct encoder *e, uint32_t slot, uint32_t *idx)
{
	struct fr_dump_proc *dp;
	struct fr_proc p;
	int err;

	if (id_get(&e->proc_of_slot, slot, idx))
		return 0;
	err = proctable__read(e->in.t->procs, slot, &p);
	if (err)
		return err;
	err = new_proc(e, p.pid, p.start, idx);
	if (err)
		return err;
	dp = &e->d->proc[*idx];
	dp->ppid = p.ppid;
	dp->flags = FR_DPROC_EVENTS;
	/* The table may already know of an exit after the freeze: not ours. */
	if ((p.flags & FR_PROC_EXITED) && p.exit_ts <= e->d->win.end) {
		dp->flags |= FR_DPROC_EXITED;
		dp->exit_ts = p.exit_ts;
		dp->exit_code = p.exit_code;
	}
	if (p.flags & FR_PROC_EXECED)
		dp->flags |= FR_DPROC_EXECED;
	err = add_cstr(e, p.comm, &dp->comm);
	if (!err)
		err = proc_facts(e, *idx, proctable__meta(e->in.t->procs, slot, p.pid, p.start));
	return err ? err : id_put(&e->proc_of_slot, slot, *idx);
}

/*
 * The dump's index of window stack @id, first seen at @ts, made on first
 * sight; @cpu: a CPU sample's (counted: symbolized first, and its frames'
 * lines looked up by weight, see symbolize()).
 */
static int stack_of(struct encoder *e, uint32_t id, uint64_t ts, bool cpu, uint32_t *idx)
{
	struct fr_dump *d = e->d;
	uint32_t cap, cap2, cap3;
	int err;

	if (id_get(&e->stack_of_id, id, idx)) {
		e->stack_samples[*idx] += cpu;
		return 0;
	}
	cap = cap2 = cap3 = e->stack_cap;
	err = fr_grow32((void **)&d->stack, &e->stack_cap, d->nstack + 1, sizeof(*d->stack));
	if (!err)
		err = fr_grow32((void **)&e->stack_ids, &cap, d->nstack + 1, sizeof(*e->stack_ids));
	if (!err)
		err = fr_grow32((void **)&e->stack_ts, &cap2, d->nstack + 1, sizeof(*e->stack_ts));
	if (!err)
		err = fr_grow32((void **)&e->stack_samples, &cap3, d->nstack + 1,
				sizeof(*e->stack_samples));
	if (err)
		return err;
	*idx = d->nstack++;
	memset(&d->stack[*idx], 0, sizeof(d->stack[0]));
	e->stack_ids[*idx] = id;
	e->stack_ts[*idx] = ts;
	e->stack_samples[*idx] = cpu;
	return id_put(&e->stack_of_id, id, *idx);
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
		if (!proc_of_incarnation(e, sp->pid, sp->start, &idx)) {
			err = new_proc(e, sp->pid, sp->start, &idx);
			if (err)
				return err;
			err = add_cstr(e, sp->comm, &d->proc[idx].comm);
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
		err = proc_facts(e, idx, sp->meta);
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
		err = proc_of(e, ev->arg, &tmp);
	if (!err && ev->tid)
		err = stack_of(e, ev->tid, ev->ts, false, &tmp);
	if (err)
		return err;
	intern__copy(e->in.t->strs, ev->ref, &o, sizeof(o));
	o.memcg[sizeof(o.memcg) - 1] = 0;
	return o.memcg[0] ? add_cstr(e, o.memcg, &tmp) : 0;
}

/* A stall's references: its stack, its memcg's path. */
static int collect_stall(struct encoder *e, const struct fr_event *ev)
{
	struct fr_stall_info si = {};
	uint32_t tmp;
	int err = ev->arg ? stack_of(e, ev->arg, ev->ts, false, &tmp) : 0;

	if (err)
		return err;
	intern__copy(e->in.t->strs, ev->ref, &si, sizeof(si));
	si.memcg[sizeof(si.memcg) - 1] = 0;
	return si.memcg[0] ? add_cstr(e, si.memcg, &tmp) : 0;
}

static int collect_one(struct encoder *e, const struct fr_event *ev)
{
	uint32_t idx, tmp;
	int err;

	if (!dump__event_has_proc(ev->type))
		return str_of(e, ev->comm, &tmp);
	err = proc_of(e, ev->proc, &idx);
	if (!err)
		err = str_of(e, ev->comm, &tmp);
	/* Where the table says tid is a thread; another process's RSS change names that process. */
	if (!err && ev->tid && fr_evtype(ev->type)->tid == FR_EVREF_THREAD &&
	    !(ev->type == FR_EV_RSS && (ev->flags & FR_EVRSS_OTHER)))
		err = add_thread(e, idx, ev->tid, e->d->str[tmp]);
	if (err)
		return err;
	/* No default: a type added to enum fr_event_type must be collected. */
	switch ((enum fr_event_type)ev->type) {
	case FR_EV_SAMPLE:
		e->st.uend[(ev->flags & FR_DSAMPLE_UEND_MASK) >> FR_DSAMPLE_UEND_SHIFT]++;
		return ev->ref ? stack_of(e, ev->ref, ev->ts, true, &tmp) : 0;
	case FR_EV_FORK:
		return proc_of(e, ev->ref, &tmp);
	case FR_EV_EXEC:
		err = str_of(e, ev->ref, &tmp);
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
		return ev->arg ? stack_of(e, ev->arg, ev->ts, false, &tmp) : 0;
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

/* ------------------------------------------------------------ symbolize */

/* A user frame dropped: in no mapping (frame index never written). */
#define FR_FRAME_BOGUS	UINT32_MAX

/*
 * The address space of process @slot at @ts: the facts of the image it ran
 * then (an exec starts a new era). Cached per (slot, era) for this dump.
 */
static struct space *space_of(struct encoder *e, uint32_t slot, uint64_t ts)
{
	struct proc_meta *m = NULL, *now = NULL;
	struct fr_proc p;
	struct space *sp;
	uint64_t key;
	uint32_t i;

	if (proctable__read(e->in.t->procs, slot, &p))
		return NULL;
	m = proctable__meta_at(e->in.t->procs, slot, p.pid, p.start, ts);
	now = proctable__meta(e->in.t->procs, slot, p.pid, p.start);
	key = (uint64_t)slot << 1 | (m == now);
	proc_meta__put(now);
	if (id_get(&e->space_of_slot, key, &i)) {
		proc_meta__put(m);
		return &e->spaces[i];
	}
	if (fr_grow32((void **)&e->spaces, &e->space_cap, e->nspaces + 1, sizeof(*e->spaces))) {
		proc_meta__put(m);
		return NULL;
	}
	i = e->nspaces++;
	sp = &e->spaces[i];
	memset(sp, 0, sizeof(*sp));
	sp->pid = p.pid;
	sp->start = p.start;
	sp->exited = p.flags & FR_PROC_EXITED;
	sp->current = key & 1;
	sp->meta = m;
	if (id_put(&e->space_of_slot, key, i))
		return NULL;
	return &e->spaces[i];
}

/*
 * past_deadline() - whether this dump's time for per-process reads is up;
 * the caller skips its read and it is counted.
 */
static bool past_deadline(struct encoder *e)
{
	if (!e->deadline || fr_boottime_ns() < e->deadline)
		return false;
	e->st.resolve_skipped++;
	return true;
}

/*
 * The mapping of @addr in @sp, with its symbols: from the facts read while
 * the process lived; if the address is outside them and the process still
 * lives, from one fresh verified read (a library loaded since).
 */
static const struct fr_mapping *mapping_of(struct encoder *e, struct space *sp,
					   uint64_t addr, const struct elfsyms **syms)
{
	struct proc_meta *ms[2] = { sp->meta, NULL };

	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < 2; k++) {
			const struct fr_mapping *m;

			if (!ms[k] || !ms[k]->img)
				continue;
			m = procmaps__find(ms[k]->img->maps, addr);
			if (m) {
				*syms = ms[k]->img->syms[m - ms[k]->img->maps->m];
				return m;
			}
		}
		if (sp->reread || sp->exited || !sp->pid || !sp->current)
			break;
		sp->reread = true;
		if (past_deadline(e))
			break;
		if (proc_meta__read(sp->pid, sp->start, e->in.sym->cache,
				    FR_META_MAPS | e->in.meta_what, e->deadline, &sp->fresh))
			sp->fresh = NULL;
		else
			e->st.resolve_skipped += sp->fresh->img ? sp->fresh->img->skipped : 0;
		ms[1] = sp->fresh;
		e->st.maps_reread++;
	}
	*syms = NULL;
	return NULL;
}

/*
 * JIT code: /tmp/perf-PID.map, if written during this incarnation's life.
 * It is a file the process's owner controls: opened as untrusted (no
 * symlink, a regular file of at most FR_PERFMAP_MAX_BYTES), owned by the
 * process's uid or, world-readable with one link, by root, as perf
 * requires; an owner not known takes root's only.
 */
static const struct perfmap *perfmap_of(struct encoder *e, struct space *sp)
{
	const struct proc_meta *m = sp->meta ? sp->meta : sp->fresh;
	struct fr_untrusted_rule rule = {
		.max_bytes = FR_PERFMAP_MAX_BYTES, .check_owner = true,
		.uid = m && m->has_uid ? m->uid : 0,
	};
	char path[64];
	struct stat st;
	int fd;

	if (sp->perfmap_tried || !sp->pid)
		return sp->perfmap;
	sp->perfmap_tried = true;
	if (past_deadline(e))
		return NULL;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", sp->pid);
	fd = untrusted__open(AT_FDCWD, path, &rule, &st);
	if (fd < 0) {
		if (untrusted__refusal(fd) >= 0)
			e->st.perfmaps_refused++;
		return NULL;
	}
	/* File times come from a coarse clock: allow it FR_MTIME_SLACK_NS. */
	if ((uint64_t)st.st_mtim.tv_sec * FR_NSEC_PER_SEC + (uint64_t)st.st_mtim.tv_nsec +
	    FR_MTIME_SLACK_NS >= e->boot_to_real + sp->start) {
		sp->perfmap = perfmap__load_fd(fd, e->deadline);
		if (!sp->perfmap && errno == ETIMEDOUT)
			e->st.resolve_skipped++;
	}	/* else left by an older process with this PID */
	close(fd);
	return sp->perfmap;
}

static int bin_of(struct encoder *e, const char *path, const struct fr_buildid *bid,
		  uint32_t *idx)
{
	struct fr_dump *d = e->d;
	struct bin_key key = { .path = path };
	const uint32_t *found;
	struct fr_dump_bin *b;
	uint32_t pidx;
	int err;

	if (bid)
		key.bid = *bid;
	found = fr_hashmap__find(&e->bin_of, &key);
	if (found) {
		*idx = *found;
		return 0;
	}
	err = add_cstr(e, path, &pidx);
	if (!err)
		err = fr_grow32((void **)&d->bin, &e->bin_cap, d->nbin + 1, sizeof(*d->bin));
	if (err)
		return err;
	*idx = d->nbin++;
	b = &d->bin[*idx];
	memset(b, 0, sizeof(*b));
	b->path = pidx;
	if (bid && bid->len) {
		b->build_id_len = FR_MIN(bid->len, (uint8_t)sizeof(b->build_id));
		memcpy(b->build_id, bid->id, b->build_id_len);
	}
	key.path = d->str[pidx];
	return fr_hashmap__insert(&e->bin_of, &key, idx);
}

/*
 * Find or add a frame equal to @f, to be given a source position by the
 * lines pass (@lines: 1 + whether looked up for a leaf; 0: none). Sets
 * *@created when it is new. Returns 0 or -ENOMEM.
 */
static int frame_of(struct encoder *e, const struct fr_dump_frame *f, uint32_t lines,
		    uint32_t *idx, bool *created)
{
	struct fr_dump *d = e->d;
	/*
	 * The symbol is part of the key: JIT code at one address in two
	 * processes can be two different functions. So is the kind of
	 * lookup when there are lines: a return address is looked up at
	 * addr - 1, which may be another line than addr.
	 */
	uint64_t key[6] = { f->kind | (uint64_t)lines << 8, f->addr, f->bin,
			    f->file_off, f->sym, f->sym_off };
	const uint32_t *found = fr_hashmap__find(&e->frame_of, key);
	int err;

	*created = false;
	if (found) {
		*idx = *found;
		return 0;
	}
	err = fr_grow32((void **)&d->frame, &e->frame_cap, d->nframe + 1, sizeof(*d->frame));
	if (err)
		return err;
	*idx = d->nframe++;
	d->frame[*idx] = *f;
	*created = true;
	return fr_hashmap__insert(&e->frame_of, key, idx);
}

/* frame_set_lines() - give frame @idx the @n source levels at @lv. Returns 0 or -ENOMEM. */
static int frame_set_lines(struct encoder *e, uint32_t idx, const struct fr_dump_line *lv,
			   uint32_t n)
{
	struct fr_dump *d = e->d;
	int err = fr_grow32((void **)&d->line, &e->line_cap, d->nline + n, sizeof(*d->line));

	if (err)
		return err;
	memcpy(&d->line[d->nline], lv, n * sizeof(*lv));
	d->frame[idx].line = d->nline;
	d->frame[idx].nlines = n;
	d->nline += n;
	return 0;
}

/*
 * Return addresses point after the call; look up addr - 1 for every frame
 * but the interrupted one so that the caller's line, not the next, is named.
 */
static uint64_t lookup_addr(uint64_t addr, uint32_t pos)
{
	return pos && addr ? addr - 1 : addr;
}

static int kernel_frame(struct encoder *e, uint64_t addr, uint32_t pos, uint32_t *idx)
{
	const struct kallsyms *k = e->ksyms;
	struct fr_dump_frame f = { .addr = addr, .kind = FR_FRAME_KERNEL };
	const char *name = NULL, *mod = NULL;
	uint64_t off = 0;
	bool created;
	int err;

	e->st.kernel_frames++;
	if (k)
		name = kallsyms__lookup(k, lookup_addr(addr, pos), &off, &mod);
	if (name) {
		char buf[512];

		e->st.kernel_resolved++;
		if (mod && *mod)
			snprintf(buf, sizeof(buf), "%s [%s]", name, mod);
		else
			snprintf(buf, sizeof(buf), "%s", name);
		err = add_cstr(e, buf, &f.sym);
		if (err)
			return err;
		f.sym_off = off + (lookup_addr(addr, pos) != addr);
	}
	return frame_of(e, &f, 0, idx, &created);
}

/* Does @sp know its mappings (so that an address outside them is no code)? */
static bool space_has_maps(const struct space *sp)
{
	return (sp->meta && sp->meta->img) || (sp->fresh && sp->fresh->img);
}

/*
 * frame_lines() - the source position of file offset @off in binary @es,
 * mapped at @m by the process of @sp, as dump levels into @lv (strings
 * interned); the outermost level is named by the frame's symbol @sym when
 * it has one, as FRAM names the frame. Returns 0 or -ENOMEM.
 */
static int frame_lines(struct encoder *e, const struct space *sp, const struct fr_mapping *m,
		       const struct elfsyms *es, uint64_t off, uint32_t sym,
		       struct fr_dump_line *lv, uint32_t *n)
{
	struct fr_srcline sl[FR_SRCLINE_MAX_LEVELS];
	char procdir[32];
	int r, err = 0;

	*n = 0;
	snprintf(procdir, sizeof(procdir), "/proc/%u", sp->pid);
	r = elfsyms__lines(es, off, sp->pid && !sp->exited ? procdir : NULL, m, sl,
			   FR_SRCLINE_MAX_LEVELS);
	if (r < 0 && r != -ENOENT)
		e->st.lines_failed++;
	for (int i = 0; i < r && !err; i++) {
		lv[i].line = sl[i].line;
		lv[i].col = sl[i].col;
		err = add_cstr(e, sl[i].file, &lv[i].file);
		if (!err && i == r - 1 && sym)
			lv[i].func = sym;
		else if (!err)
			err = add_cstr(e, sl[i].func, &lv[i].func);
	}
	if (!err && r > 0) {
		*n = (uint32_t)r;
		e->st.lines_resolved++;
	}
	return err;
}

/* lines_todo__add() - remember that frame @frame of space @space at lookup address @addr wants lines. */
static int lines_todo__add(struct encoder *e, uint32_t frame, uint32_t space, uint64_t addr)
{
	int err = fr_grow32((void **)&e->todo, &e->todo_cap, e->ntodo + 1, sizeof(*e->todo));

	if (err)
		return err;
	e->todo[e->ntodo] = (struct line_todo){
		.frame = frame, .space = space, .addr = addr, .seq = e->ntodo,
	};
	e->ntodo++;
	return 0;
}

/*
 * refill() - the symbols of @es (mapped at @m by the process of @sp), which
 * the cache evicted: loaded again from the mapping while the process lives
 * and the dump's time for reads lasts (the same file: the cache's key is
 * its identity). Whether @es has symbols now.
 */
static bool refill(struct encoder *e, const struct space *sp, const struct fr_mapping *m,
		   const struct elfsyms *es)
{
	char procdir[32];

	if (sp->exited || !sp->pid || !sp->current || past_deadline(e))
		return false;
	snprintf(procdir, sizeof(procdir), "/proc/%u", sp->pid);
	symcache__put(symcache__get_mapping_at(e->in.sym->cache, procdir, m, e->deadline));
	return !elfsyms__evicted(es);
}

static int user_frame(struct encoder *e, struct space *sp, uint64_t addr,
		      uint32_t pos, uint32_t *idx)
{
	struct fr_dump_frame f = { .addr = addr, .kind = FR_FRAME_USER };
	const struct fr_mapping *m = NULL;
	const struct elfsyms *es = NULL;
	const char *name = NULL, *mangled = NULL;
	uint64_t a = lookup_addr(addr, pos), off = 0;
	uint32_t si = sp ? (uint32_t)(sp - e->spaces) : FR_NO_SPACE;
	bool lines, created;
	int err;

	e->st.user_frames++;
	if (sp)
		m = mapping_of(e, sp, a, &es);
	if (pos && !m && (!addr || (sp && space_has_maps(sp) && !perfmap_of(e, sp)))) {
		e->st.user_bogus++;
		*idx = FR_FRAME_BOGUS;	/* a return address where no code is */
		return 0;
	}
	if (m && m->path && m->path[0] == '/') {
		uint32_t b;

		f.file_off = addr - m->start + m->pgoff;
		err = bin_of(e, m->path, es ? elfsyms__buildid(es) : NULL, &b);
		if (err)
			return err;
		f.bin = b + 1;
		if (es && elfsyms__evicted(es) && !refill(e, sp, m, es)) {
			e->st.user_evicted++;
			es = NULL;
		}
		if (es)
			name = elfsyms__lookup_full(es, a - m->start + m->pgoff, &off, &mangled);
		else
			e->st.user_no_symbols++;
	} else if (sp && perfmap_of(e, sp)) {
		name = perfmap__lookup(sp->perfmap, a, &off);
	}
	if (name) {
		e->st.user_resolved++;
		err = add_cstr(e, name, &f.sym);
		if (!err && mangled)
			err = add_cstr(e, mangled, &f.system_name);
		if (err)
			return err;
		f.sym_off = off + (a != addr);
	}
	/* Lines come in a pass of their own, after every name (lines_pass()). */
	lines = m && es && elfsyms__has_lines(es);
	err = frame_of(e, &f, lines ? 1 + !pos : 0, idx, &created);
	if (!err && lines && created)
		err = lines_todo__add(e, *idx, si, a);
	return err;
}

/* Heavier first, then the order the frames were made. */
static int todo_cmp(const void *a, const void *b)
{
	const struct line_todo *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * lines_by_weight() - order the lines pass by what the frames' lines are
 * worth: each CPU sample adds FR_LINE_WEIGHT / (depth + 1) to the frames
 * of its user stack, depth 0 being the leaf. The hot leaves come first
 * (where the time went), then the calls nearest to them; the outermost
 * frames (_start, start_thread), in every stack but worth little, and the
 * frames of stalls and OOMs only, come last. When the deadline cuts the
 * pass (a large DWARF file, a slow machine), these are the lines left
 * out. Without memory for the weights the order stays. No error.
 */
#define FR_LINE_WEIGHT	840	/* divisible by 1..8: the nearest depths weigh exactly */
static void lines_by_weight(struct encoder *e)
{
	const struct fr_dump *d = e->d;
	uint64_t *w;

	if (!e->ntodo)
		return;	/* and e->todo may be NULL, which qsort() must not see */
	w = calloc(d->nframe ? d->nframe : 1, sizeof(*w));
	if (!w)
		return;
	for (uint32_t i = 0; i < d->nstack; i++) {
		const struct fr_dump_stack *st = &d->stack[i];

		for (uint32_t j = 0; j < st->un; j++)
			if (st->frames[st->kn + j] < d->nframe)
				w[st->frames[st->kn + j]] +=
					(uint64_t)e->stack_samples[i] * FR_LINE_WEIGHT / (j + 1);
	}
	for (uint32_t i = 0; i < e->ntodo; i++)
		e->todo[i].weight = w[e->todo[i].frame];
	free(w);
	qsort(e->todo, e->ntodo, sizeof(*e->todo), todo_cmp);
}

/*
 * lines_pass() - the source positions of the frames that want them, once
 * every stack is named: reading a large DWARF file cannot take the time
 * of perf maps and binaries. It has its own resolve_timeout, spent on the
 * most sampled frames first; what is left at its end is counted
 * (dump_lines_skipped). Each binary's DWARF is read at most once in it
 * (elfsyms__lines_hold()). Returns 0 or -ENOMEM.
 */
static int lines_pass(struct encoder *e)
{
	uint64_t deadline = e->in.resolve_timeout_ns ?
			    fr_boottime_ns() + e->in.resolve_timeout_ns : 0;
	struct fr_dump_line lv[FR_SRCLINE_MAX_LEVELS];
	uint32_t i, n;
	int err = 0;

	lines_by_weight(e);
	elfsyms__lines_hold(true);
	for (i = 0; i < e->ntodo && !err; i++) {
		const struct line_todo *t = &e->todo[i];
		struct space *sp = &e->spaces[t->space];	/* a frame with lines has one */
		const struct elfsyms *es;
		const struct fr_mapping *m;

		if (deadline && fr_boottime_ns() >= deadline)
			break;
		m = mapping_of(e, sp, t->addr, &es);
		if (!m || !es)
			continue;
		err = frame_lines(e, sp, m, es, t->addr - m->start + m->pgoff,
				  e->d->frame[t->frame].sym, lv, &n);
		if (!err && n)
			err = frame_set_lines(e, t->frame, lv, n);
	}
	e->st.lines_skipped += e->ntodo - i;
	elfsyms__lines_hold(false);
	return err;
}

/*
 * An address resolves the same way every time within one space: look it
 * up once per dump. True and *@idx set when @k was symbolized already.
 */
static bool cached_frame(struct encoder *e, const struct addr_frame *k, uint32_t *idx)
{
	const uint32_t *frame = fr_hashmap__find(&e->addr_of, k);

	if (!frame)
		return false;
	*idx = *frame;
	e->st.cached_frames++;
	return true;
}

static int cache_frame(struct encoder *e, const struct addr_frame *k, uint32_t frame)
{
	return fr_hashmap__insert(&e->addr_of, k, &frame);
}

/*
 * How many of the @kn leading kernel frames at @ips are flightrec's own
 * BPF program and the tracepoint glue that called it (a stall's or an OOM
 * invoker's stack is taken inside the tracepoint): they say nothing of
 * the workload. Only leaf frames are dropped, and only by these names.
 */
static uint32_t instrumentation_frames(struct encoder *e, const uint64_t *ips, uint32_t kn)
{
	static const char *const glue[] = { "bpf_prog_", "bpf_trace_run", "__traceiter_",
					    "__bpf_trace_" };
	uint32_t i;

	if (!e->ksyms)
		return 0;
	for (i = 0; i < kn; i++) {
		const char *mod = NULL, *name;
		uint64_t off;
		bool ours = false;

		name = kallsyms__lookup(e->ksyms, lookup_addr(ips[i], i), &off, &mod);
		for (size_t g = 0; name && g < FR_ARRAY_SIZE(glue) && !ours; g++)
			ours = !strncmp(name, glue[g], strlen(glue[g]));
		if (!ours)
			break;
	}
	return i < kn ? i : 0;	/* all of it glue: keep it, something is off */
}

static int symbolize_stack(struct encoder *e, uint32_t sidx)
{
	struct fr_dump_stack *s = &e->d->stack[sidx];
	uint32_t id = e->stack_ids[sidx];
	uint32_t tag = intern__tag(e->in.t->stacks, id);
	uint64_t ips[2 * FR_MAX_STACK];
	size_t len = intern__copy(e->in.t->stacks, id, ips, sizeof(ips));
	uint32_t n = FR_MIN(len, sizeof(ips)) / sizeof(ips[0]);
	struct space *sp = NULL;
	uint32_t skip;
	int err;

	s->kn = FR_MIN(FR_STACK_KN(tag), n);
	/* Dropped frames keep their place: the first kept one is no leaf. */
	skip = instrumentation_frames(e, ips, s->kn);
	memmove(ips, ips + skip, (n - skip) * sizeof(ips[0]));
	n -= skip;
	s->kn -= skip;
	s->un = n - s->kn;
	s->frames = calloc(n ? n : 1, sizeof(*s->frames));
	if (!s->frames)
		return -ENOMEM;
	if (s->un && FR_STACK_SLOT(tag))
		sp = space_of(e, FR_STACK_SLOT(tag), e->stack_ts[sidx]);
	for (uint32_t i = 0; i < n; i++) {
		bool user = i >= s->kn;
		uint32_t pos = user ? i - s->kn : i + skip;
		struct addr_frame key = {
			.addr = ips[i], .leaf = !pos,
			.space = user && sp ? (uint32_t)(sp - e->spaces) : FR_NO_SPACE,
		};

		if (!user)
			key.leaf |= 2;	/* a kernel address is not a user one */
		if (!cached_frame(e, &key, &s->frames[i])) {
			if (!user)
				err = kernel_frame(e, ips[i], pos, &s->frames[i]);
			else
				err = user_frame(e, sp, ips[i], pos, &s->frames[i]);
			if (!err)
				err = cache_frame(e, &key, s->frames[i]);
			if (err)
				return err;
		}
		if (s->frames[i] == FR_FRAME_BOGUS) {
			/* What a broken chain gives past a bogus frame is noise too. */
			s->un = pos;
			break;
		}
		/* user_frame() may have grown spaces[]: find sp again. */
		if (sp && key.space != FR_NO_SPACE)
			sp = &e->spaces[key.space];
	}
	return 0;
}

/*
 * Point each OOM trigger at its victim's incarnation in the dump. A victim
 * gone from the process table is left unnamed (its trigger's detail names
 * it). Returns 0 or -ENOMEM.
 */
static int resolve_victims(struct encoder *e)
{
	struct fr_dump *d = e->d;

	for (uint32_t i = 0; i < d->ntrig && e->in.victim_pid; i++) {
		uint32_t pid = e->in.victim_pid[i], idx, slot;
		uint64_t start = e->in.victim_start[i];

		if (!pid)
			continue;
		if (!proc_of_incarnation(e, pid, start, &idx)) {
			int err;

			if (proctable__lookup(e->in.t->procs, pid, start, &slot))
				continue;	/* gone from the table: the detail names it */
			err = proc_of(e, slot, &idx);
			if (err == -ENOMEM)
				return err;
			if (err)
				continue;	/* freed since the lookup: as if gone */
			/* Listed for the trigger only: no event of it is in the window. */
			d->proc[idx].flags &= ~FR_DPROC_EVENTS;
		}
		d->trig[i].victim = idx + 1;
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
	e->boot_to_real = fr_clock_ns(CLOCK_REALTIME) - fr_boottime_ns();
	fr_hashmap__init(&e->str_of, sizeof(struct str_key), sizeof(uint32_t),
			 str_key_hash, str_key_equal, NULL);
	fr_hashmap__init(&e->bin_of, sizeof(struct bin_key), sizeof(uint32_t),
			 bin_key_hash, bin_key_equal, NULL);
	index_map(&e->proc_of_slot, sizeof(uint64_t));
	index_map(&e->proc_of_id, sizeof(struct incarnation));
	index_map(&e->str_of_id, sizeof(uint64_t));
	index_map(&e->stack_of_id, sizeof(uint64_t));
	index_map(&e->frame_of, 6 * sizeof(uint64_t));
	index_map(&e->space_of_slot, sizeof(uint64_t));
	index_map(&e->thread_of, sizeof(uint64_t));
	index_map(&e->addr_of, sizeof(struct addr_frame));
	if (add_str(e, "", 0, &empty)) {
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
	for (uint32_t i = 0; i < e->nspaces; i++) {
		proc_meta__put(e->spaces[i].meta);
		proc_meta__put(e->spaces[i].fresh);
		perfmap__free(e->spaces[i].perfmap);
	}
	fr_hashmap__fini(&e->addr_of);
	fr_hashmap__fini(&e->thread_of);
	free(e->todo);
	free(e->spaces);
	free(e->stack_ids);
	free(e->stack_ts);
	free(e->stack_samples);
	fr_hashmap__fini(&e->space_of_slot);
	fr_hashmap__fini(&e->bin_of);
	fr_hashmap__fini(&e->frame_of);
	fr_hashmap__fini(&e->stack_of_id);
	fr_hashmap__fini(&e->str_of_id);
	fr_hashmap__fini(&e->proc_of_id);
	fr_hashmap__fini(&e->proc_of_slot);
	fr_hashmap__fini(&e->str_of);
	snapshot__free(&e->snap);
	free(e);
}

/*
 * symbolize() - name every referenced stack, then their lines. The CPU
 * samples' stacks first, then the stalls', blocks' and OOM dossiers': the
 * resolve_timeout deadlines (reads, then source lines, which come in the
 * order frames were made) cut the latter. Returns 0 or -errno.
 */
static int symbolize(struct encoder *e)
{
	int err;

	for (int cpu = 1; cpu >= 0; cpu--)
		for (uint32_t i = 0; i < e->d->nstack; i++) {
			if ((e->stack_samples[i] > 0) != cpu)
				continue;
			err = symbolize_stack(e, i);
			if (err)
				return err;
		}
	return lines_pass(e);
}

/*
 * encoder__prepare() - build the model's tables: snapshot, referenced
 * processes, strings and stacks, symbolized. Returns 0 or -errno.
 */
int encoder__prepare(struct encoder *e)
{
	int err;

	err = snapshot__take(&e->snap, e->in.sampler, e->in.meta_what);
	if (err)
		return err;
	e->st.snapshot_procs = e->snap.n;
	err = collect(e);
	if (err)
		return err;
	err = merge_snapshot(e);
	if (!err)
		err = resolve_victims(e);
	if (err)
		return err;
	e->ksyms = kernel_symbols(e->in.sym);
	/* Reading what processes own starts here: perf maps, fresh maps and binaries. */
	if (e->in.resolve_timeout_ns)
		e->deadline = fr_boottime_ns() + e->in.resolve_timeout_ns;
	/* The symbols read below stay until the names are copied into the dump. */
	if (e->in.sym && e->in.sym->cache)
		symcache__hold(e->in.sym->cache, true);
	err = symbolize(e);
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
		if (!id_get(&e->proc_of_slot, ev->arg, &out->oom.invoker))
			return -ENOENT;
		out->oom.invoker++;
	}
	if (ev->tid) {
		if (!id_get(&e->stack_of_id, ev->tid, &out->stack))
			return -ENOENT;
		out->stack++;
	}
	if (o.memcg[0] && add_cstr(e, o.memcg, &out->oom.memcg))
		return -ENOENT;
	return 0;
}

/* A window event's stack id @id as the dump's stack index + 1 (0: none). */
static int stack_ref(struct encoder *e, uint32_t id, uint32_t *out)
{
	*out = 0;
	if (!id)
		return 0;
	if (!id_get(&e->stack_of_id, id, out))
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
	out->stall = (struct fr_dump_stall){
		.kind = ev->flags & FR_EVSTALL_KIND_MASK, .begin = FR_MIN(si.begin, ev->ts),
		.result = si.result, .gfp = si.gfp, .order = si.order, .reason = si.reason,
		.memcg_id = si.memcg_id,
	};
	if (si.memcg[0] && add_cstr(e, si.memcg, &out->stall.memcg))
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
	uint64_t dur = ev->flags & FR_EVOFF_US ? (uint64_t)ev->ref * 1000 : ev->ref;
	unsigned kind = ev->flags & FR_EVSTALL_KIND_MASK;

	out->flags = ev->flags & FR_DSAMPLE_UEND_MASK;
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
	if (ev->comm && !id_get(&e->str_of_id, ev->comm, &out->comm))
		return -ENOENT;
	if (dump__event_has_proc(ev->type) && !id_get(&e->proc_of_slot, ev->proc, &out->proc))
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
		if (ev->ref) {
			if (!id_get(&e->stack_of_id, ev->ref, &out->stack))
				return -ENOENT;
			out->stack++;
		}
		return 0;
	case FR_EV_FORK:
		return id_get(&e->proc_of_slot, ev->ref, &out->child) ? 0 : -ENOENT;
	case FR_EV_EXEC:
		return id_get(&e->str_of_id, ev->ref, &out->filename) ? 0 : -ENOENT;
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
	untrusted__stats(&us);
	for (int r = 0; r < FR_REFUSED_NR; r++) {
		snprintf(key, sizeof(key), "untrusted_refused_%s", untrusted__refusal_name(r));
		err |= kvlist__add_u64(l, key, us.refused[r]);
	}
	if (e->in.sym && e->in.sym->cache)
		symcache__stats(e->in.sym->cache, &ss);
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
