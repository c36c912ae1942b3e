// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proctable.c - incarnation-keyed process table. See proctable.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "idpool.h"
#include "proctable.h"
#include "util.h"

#define FR_NIL	UINT32_MAX
#define FR_LOADER_NS	(1000 * 1000 * 1000ULL)	/* an image's first second: ld.so's */

struct proc_slot {
	struct fr_proc p;
	struct proc_meta *meta;	/* /proc facts, set by the procinfo worker */
	struct proc_meta *prev_meta;	/* facts of the image before the last exec */
	uint64_t exec_ts;	/* that exec, CLOCK_BOOTTIME ns; 0: none seen */
	uint32_t refs;
	uint32_t chain;		/* bucket chain */
	uint8_t used;
	uint8_t queued;		/* on the deferred-free list */
};

struct proctable {
	pthread_mutex_t lock;
	const struct proctable_meta_ops *ops;	/* NULL: no facts hung yet */
	struct proc_slot *slots;	/* [0] unused: slot 0 is "none" */
	/*
	 * Buckets of our own rather than common/hashmap.h: the table lives in
	 * the fixed memory budget (sized at start, never grown), and slots are
	 * refcounted by the window's events and freed only past the watermark.
	 */
	uint32_t *buckets;
	uint32_t *deferred;
	size_t ndeferred;
	uint32_t mask;
	uint32_t max;
	struct idpool ids;	/* slots 0..max, lowest first (idpool.h); 0 is taken */
	struct idpool_trim trim;
	int hold;
	size_t map_len;
	void *map;
	struct proctable_stats st;
};

/* The facts' references, through their maker's ops (none hung: no ops). */
static void meta_get(const struct proctable *pt, struct proc_meta *m)
{
	if (m && pt->ops)
		pt->ops->get(m);
}

static void meta_put(const struct proctable *pt, struct proc_meta *m)
{
	if (m && pt->ops)
		pt->ops->put(m);
}

/*
 * proctable__set_meta_ops() - how the facts hung on entries are taken and
 * dropped: given once by their maker (procmeta.h), before the first
 * proctable__set_meta(), so that the table needs nothing of theirs.
 */
void proctable__set_meta_ops(struct proctable *pt, const struct proctable_meta_ops *ops)
{
	pt->ops = ops;
}

static size_t nbuckets(size_t n)
{
	size_t b = 16;

	while (b < n)
		b <<= 1;
	return b;
}

/* The mapping's parts: slots, buckets, the deferred list, the slots' bits. */
static size_t layout(size_t n, size_t part[4])
{
	part[0] = FR_ALIGN((n + 1) * sizeof(struct proc_slot), 64);
	part[1] = FR_ALIGN(nbuckets(n) * sizeof(uint32_t), 64);
	part[2] = FR_ALIGN((n + 1) * sizeof(uint32_t), 64);
	part[3] = idpool__bytes(n + 1);
	return part[0] + part[1] + part[2] + part[3];
}

size_t proctable__budget(size_t max_entries)
{
	size_t part[4];

	return layout(max_entries, part) + sizeof(struct proctable);
}

/*
 * proctable__new() - reserve a table for @max_entries incarnations.
 * Returns NULL and sets errno.
 */
struct proctable *proctable__new(size_t max_entries)
{
	struct proctable *pt;
	size_t part[4];
	uint8_t *p;

	if (!max_entries || max_entries > (1u << 30)) {
		errno = EINVAL;
		return NULL;
	}
	pt = calloc(1, sizeof(*pt));
	if (!pt)
		return NULL;
	pt->map_len = layout(max_entries, part);
	pt->map = mmap(NULL, pt->map_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (pt->map == MAP_FAILED) {
		free(pt);
		return NULL;
	}
	p = pt->map;
	pt->slots = (struct proc_slot *)p;
	pt->buckets = (uint32_t *)(p + part[0]);
	pt->deferred = (uint32_t *)(p + part[0] + part[1]);
	idpool__init(&pt->ids, p + part[0] + part[1] + part[2], max_entries + 1);
	idpool__alloc(&pt->ids);	/* slot 0: "none" */
	pt->mask = nbuckets(max_entries) - 1;
	memset(pt->buckets, 0xff, (pt->mask + 1) * sizeof(uint32_t));
	pt->max = max_entries;
	pt->st.capacity = max_entries;
	pthread_mutex_init(&pt->lock, NULL);
	return pt;
}

void proctable__free(struct proctable *pt)
{
	if (!pt)
		return;
	for (uint32_t s = 1; s < pt->ids.hi; s++) {
		meta_put(pt, pt->slots[s].meta);
		meta_put(pt, pt->slots[s].prev_meta);
	}
	pthread_mutex_destroy(&pt->lock);
	munmap(pt->map, pt->map_len);
	free(pt);
}

static inline uint32_t bucket_of(const struct proctable *pt, uint32_t pid,
				 uint64_t start)
{
	uint64_t key[2] = { pid, start };

	return fr_hash64(key, sizeof(key), 0x70726f63) & pt->mask;
}

/*
 * proctable__find() - the slot of incarnation (@pid, @start).
 * Returns 0 or -ENOENT.
 */
int proctable__find(const struct proctable *pt, uint32_t pid, uint64_t start,
		    uint32_t *slot)
{
	uint32_t s = pt->buckets[bucket_of(pt, pid, start)];

	for (; s != FR_NIL; s = pt->slots[s].chain) {
		if (pt->slots[s].p.pid == pid && pt->slots[s].p.start == start) {
			*slot = s;
			return 0;
		}
	}
	return -ENOENT;
}

/* proctable__lookup() - proctable__find() for any thread (takes the lock). */
int proctable__lookup(struct proctable *pt, uint32_t pid, uint64_t start, uint32_t *slot)
{
	int err;

	pthread_mutex_lock(&pt->lock);
	err = proctable__find(pt, pid, start, slot);
	pthread_mutex_unlock(&pt->lock);
	return err;
}

/*
 * proctable__get() - find or create the entry of (@pid, @start) and take a
 * reference. @comm (may be NULL) names a new entry. Returns 0 when it
 * existed, 1 when it was created, or -ENOSPC when the table is full (evict
 * events and retry).
 */
int proctable__get(struct proctable *pt, uint32_t pid, uint64_t start,
		   const char *comm, uint32_t *slot)
{
	struct proc_slot *ps;
	uint32_t s, b;

	if (!proctable__find(pt, pid, start, slot)) {
		proctable__ref(pt, *slot);
		return 0;
	}
	s = idpool__alloc(&pt->ids);
	if (s == FR_IDPOOL_NONE) {
		pt->st.full++;
		return -ENOSPC;
	}
	ps = &pt->slots[s];
	b = bucket_of(pt, pid, start);
	pthread_mutex_lock(&pt->lock);
	memset(&ps->p, 0, sizeof(ps->p));
	ps->p.pid = pid;
	ps->p.start = start;
	if (comm)
		fr_strlcpy(ps->p.comm, comm, sizeof(ps->p.comm));
	ps->refs = 1;
	ps->used = 1;
	ps->queued = 0;
	ps->meta = NULL;
	ps->prev_meta = NULL;
	ps->exec_ts = 0;
	ps->chain = pt->buckets[b];
	pt->buckets[b] = s;
	pthread_mutex_unlock(&pt->lock);
	pt->st.live++;
	pt->st.created++;
	*slot = s;
	return 1;
}

void proctable__ref(struct proctable *pt, uint32_t slot)
{
	if (slot && slot <= pt->max)
		pt->slots[slot].refs++;
}

static void release_slot(struct proctable *pt, uint32_t s)
{
	struct proc_slot *ps = &pt->slots[s];
	uint32_t *pp = &pt->buckets[bucket_of(pt, ps->p.pid, ps->p.start)];
	struct proc_meta *meta, *prev;

	while (*pp != s)
		pp = &pt->slots[*pp].chain;
	pthread_mutex_lock(&pt->lock);
	*pp = ps->chain;
	ps->used = 0;
	idpool__free(&pt->ids, s);
	meta = ps->meta;
	prev = ps->prev_meta;
	ps->meta = ps->prev_meta = NULL;
	pthread_mutex_unlock(&pt->lock);
	meta_put(pt, meta);
	meta_put(pt, prev);
	pt->st.live--;
	pt->st.freed++;
}

static void maybe_release(struct proctable *pt, uint32_t s)
{
	struct proc_slot *ps = &pt->slots[s];

	if (ps->refs || !(ps->p.flags & FR_PROC_EXITED))
		return;
	if (!pt->hold) {
		release_slot(pt, s);
	} else if (!ps->queued) {
		ps->queued = 1;
		pt->deferred[pt->ndeferred++] = s;
	}
}

/*
 * proctable__unref() - an event referencing @slot left the window. An
 * exited incarnation with no events left is freed (or queued while held).
 */
void proctable__unref(struct proctable *pt, uint32_t slot)
{
	if (!slot || slot > pt->max || !pt->slots[slot].refs)
		return;
	if (!--pt->slots[slot].refs)
		maybe_release(pt, slot);
}

void proctable__set_comm(struct proctable *pt, uint32_t slot, const char *comm)
{
	pthread_mutex_lock(&pt->lock);
	fr_strlcpy(pt->slots[slot].p.comm, comm, sizeof(pt->slots[slot].p.comm));
	pthread_mutex_unlock(&pt->lock);
}

void proctable__set_parent(struct proctable *pt, uint32_t slot, uint32_t ppid)
{
	pthread_mutex_lock(&pt->lock);
	pt->slots[slot].p.ppid = ppid;
	pt->slots[slot].p.flags |= FR_PROC_FORKED;
	pthread_mutex_unlock(&pt->lock);
}

void proctable__mark_exec(struct proctable *pt, uint32_t slot, const char *comm)
{
	pthread_mutex_lock(&pt->lock);
	fr_strlcpy(pt->slots[slot].p.comm, comm, sizeof(pt->slots[slot].p.comm));
	pt->slots[slot].p.flags |= FR_PROC_EXECED;
	pthread_mutex_unlock(&pt->lock);
}

/*
 * proctable__mark_exit_read() - the incarnation's exit record was read: it
 * is staged, and may wait behind held events before it is released.
 */
void proctable__mark_exit_read(struct proctable *pt, uint32_t slot)
{
	pthread_mutex_lock(&pt->lock);
	pt->slots[slot].p.flags |= FR_PROC_EXIT_READ;
	pthread_mutex_unlock(&pt->lock);
}

/*
 * proctable__mark_exit() - the incarnation's exit was released to the
 * window at @ts. The entry now lives until its last event is evicted.
 */
void proctable__mark_exit(struct proctable *pt, uint32_t slot, uint64_t ts,
			  int32_t code)
{
	struct proc_slot *ps = &pt->slots[slot];

	pthread_mutex_lock(&pt->lock);
	ps->p.exit_ts = ts;
	ps->p.exit_code = code;
	ps->p.flags |= FR_PROC_EXITED;
	pthread_mutex_unlock(&pt->lock);
	maybe_release(pt, slot);
}

void proctable__hold(struct proctable *pt)
{
	pt->hold++;
}

/* proctable__release() - a reader is done; free what was deferred. */
void proctable__release(struct proctable *pt)
{
	if (!pt->hold || --pt->hold)
		return;
	for (size_t i = 0; i < pt->ndeferred; i++) {
		uint32_t s = pt->deferred[i];

		pt->slots[s].queued = 0;
		maybe_release(pt, s);
	}
	pt->ndeferred = 0;
}

void proctable__stats(const struct proctable *pt, struct proctable_stats *st)
{
	*st = pt->st;
}

/* proctable__footprint() - resident bytes (mincore()) and those its live entries need. */
void proctable__footprint(const struct proctable *pt, uint64_t *resident, uint64_t *live)
{
	*resident = fr_resident_bytes(pt->map, pt->map_len);
	*live = pt->st.live * sizeof(struct proc_slot);
}

/*
 * proctable__trim() - the writer, about once a second of @now (ns): when
 * the slots touched have stayed well above what the live ones need
 * (idpool__trim_due()), give back the pages that hold only free slots,
 * under the lock readers copy under, a bounded step per call
 * (idpool__trim_step()).
 */
void proctable__trim(struct proctable *pt, uint64_t now)
{
	uint64_t touched = (uint64_t)pt->ids.hi * sizeof(struct proc_slot);
	const struct idpool_part part = { &pt->ids, pt->slots, sizeof(struct proc_slot) };
	long pages;

	if (!pt->trim.part &&
	    !idpool__trim_due(&pt->trim, now, touched, pt->st.live * sizeof(struct proc_slot)))
		return;
	pthread_mutex_lock(&pt->lock);
	pages = idpool__trim_step(&pt->trim, &part, 1);
	pthread_mutex_unlock(&pt->lock);
	if (pages == -EINPROGRESS)
		return;
	idpool__trimmed(&pt->ids, &pt->trim, pages);
	pt->st.shrinks = pt->trim.shrinks;
	pt->st.pages_released = pt->trim.pages_released;
	pt->st.release_failed = pt->trim.release_failed;
}

/*
 * proctable__read() - copy entry @slot. Any thread. Returns 0, or -ENOENT
 * for a free slot.
 */
int proctable__read(struct proctable *pt, uint32_t slot, struct fr_proc *out)
{
	int err = 0;

	if (!slot || slot > pt->max)
		return -ENOENT;
	pthread_mutex_lock(&pt->lock);
	if (pt->slots[slot].used)
		*out = pt->slots[slot].p;
	else
		err = -ENOENT;
	pthread_mutex_unlock(&pt->lock);
	return err;
}

static bool is_incarnation(const struct proc_slot *ps, uint32_t pid, uint64_t start)
{
	return ps->used && ps->p.pid == pid && ps->p.start == start;
}

/*
 * proctable__meta() - the /proc facts of @slot, with a reference the caller
 * puts, if the slot still holds incarnation (@pid, @start). Any thread.
 * Returns NULL when there are none (yet).
 */
struct proc_meta *proctable__meta(struct proctable *pt, uint32_t slot, uint32_t pid,
				  uint64_t start)
{
	struct proc_meta *m = NULL;

	if (!slot || slot > pt->max)
		return NULL;
	pthread_mutex_lock(&pt->lock);
	if (is_incarnation(&pt->slots[slot], pid, start)) {
		m = pt->slots[slot].meta;
		meta_get(pt, m);
	}
	pthread_mutex_unlock(&pt->lock);
	return m;
}

/*
 * proctable__exited() - has incarnation (@pid, @start) of @slot exited
 * (its exit drained), or left the slot? Any thread. /proc has nothing
 * more to say about it then: its maps read empty, its files are gone.
 */
bool proctable__exited(struct proctable *pt, uint32_t slot, uint32_t pid, uint64_t start)
{
	bool exited = true;

	if (!slot || slot > pt->max)
		return true;
	pthread_mutex_lock(&pt->lock);
	if (is_incarnation(&pt->slots[slot], pid, start))
		exited = pt->slots[slot].p.flags & FR_PROC_EXITED;
	pthread_mutex_unlock(&pt->lock);
	return exited;
}

/* The scan behind the two below: every entry with facts, or only those not exited. */
static void each_meta(struct proctable *pt, bool live_only,
		      void (*fn)(void *ctx, const struct proc_meta *m), void *ctx)
{
	pthread_mutex_lock(&pt->lock);
	for (uint32_t i = 1; i < pt->ids.hi && i <= pt->max; i++)
		if (pt->slots[i].refs && pt->slots[i].meta &&
		    !(live_only && (pt->slots[i].p.flags & FR_PROC_EXITED)))
			fn(ctx, pt->slots[i].meta);
	pthread_mutex_unlock(&pt->lock);
}

/*
 * proctable__each_meta() - call @fn with the /proc facts of every entry
 * that has some, under the table lock (any thread; @fn must be quick and
 * must not call back into the table). Only the slots ever handed out since
 * the last trim are looked at: the pages a scan touches are those in use.
 */
void proctable__each_meta(struct proctable *pt, void (*fn)(void *ctx, const struct proc_meta *m),
			  void *ctx)
{
	each_meta(pt, false, fn, ctx);
}

/*
 * proctable__each_live_meta() - proctable__each_meta() for the entries
 * whose process has not exited, with their current facts only (an exec's
 * previous image is no longer mapped).
 */
void proctable__each_live_meta(struct proctable *pt,
			       void (*fn)(void *ctx, const struct proc_meta *m), void *ctx)
{
	each_meta(pt, true, fn, ctx);
}

/*
 * proctable__set_meta() - hang @m (its reference passes to the table) on
 * @slot; its read began at @begun. Facts whose read began before the last exec describe the image
 * before it: they become the previous era's (if it has none yet) or are
 * dropped. Any thread. Returns 0, or -ESTALE when the slot no longer holds
 * (@pid, @start), -EINVAL before proctable__set_meta_ops(): the caller
 * keeps its reference.
 */
int proctable__set_meta(struct proctable *pt, uint32_t slot, uint32_t pid,
			uint64_t start, struct proc_meta *m, uint64_t begun)
{
	struct proc_meta *old = NULL;
	struct proc_slot *ps;
	int err = -ESTALE;

	if (!pt->ops)
		return -EINVAL;
	if (!slot || slot > pt->max)
		return err;
	ps = &pt->slots[slot];
	pthread_mutex_lock(&pt->lock);
	if (is_incarnation(ps, pid, start)) {
		if (ps->exec_ts && begun < ps->exec_ts) {
			if (!ps->prev_meta)
				ps->prev_meta = m;
			else
				old = m;
		} else {
			old = ps->meta;
			ps->meta = m;
		}
		err = 0;
	}
	pthread_mutex_unlock(&pt->lock);
	meta_put(pt, old);
	return err;
}

/*
 * proctable__exec() - incarnation in @slot exec'd at @ts: what is known
 * of its image becomes the previous era's, read again for the new one.
 */
void proctable__exec(struct proctable *pt, uint32_t slot, uint64_t ts)
{
	struct proc_slot *ps = &pt->slots[slot];
	struct proc_meta *old;

	if (!slot || slot > pt->max)
		return;
	pthread_mutex_lock(&pt->lock);
	old = ps->prev_meta;
	ps->prev_meta = ps->meta;
	ps->meta = NULL;
	ps->exec_ts = ts;
	pthread_mutex_unlock(&pt->lock);
	meta_put(pt, old);
}

/*
 * proctable__loading() - is @ts in the first FR_LOADER_NS of the image
 * that incarnation (@pid, @start) in @slot runs (since its exec, or its
 * start)? That is ld.so still mapping libraries, which adds code and
 * replaces none (or a dlopen as early). Returns 1, 0, or -ESTALE when the
 * slot no longer holds the incarnation.
 */
int proctable__loading(struct proctable *pt, uint32_t slot, uint32_t pid, uint64_t start,
		       uint64_t ts)
{
	struct proc_slot *ps;
	int loading = -ESTALE;

	if (!slot || slot > pt->max)
		return -ESTALE;
	ps = &pt->slots[slot];
	pthread_mutex_lock(&pt->lock);
	if (is_incarnation(ps, pid, start))
		loading = ts - (ps->exec_ts ? ps->exec_ts : start) < FR_LOADER_NS;
	pthread_mutex_unlock(&pt->lock);
	return loading;
}

/*
 * proctable__new_era() - the code of incarnation (@pid, @start) in @slot
 * changed at @ts without an exec (a library unloaded, another loaded in
 * its place): what is known becomes the previous era's, as at an exec,
 * so that samples before @ts keep the names of the code they ran.
 * Not for a change while the image loads (proctable__loading(); -EALREADY:
 * read again in place): an era for it took the place of the image before
 * the exec, so that frtool's samples before it exec'd xz were named with
 * xz's (unwind_life, CI, ASan).
 * Returns 0, or -ESTALE when the slot no longer holds the incarnation.
 */
int proctable__new_era(struct proctable *pt, uint32_t slot, uint32_t pid, uint64_t start,
		       uint64_t ts)
{
	int loading = proctable__loading(pt, slot, pid, start, ts);

	if (loading < 0)
		return loading;
	if (loading)
		return -EALREADY;
	proctable__exec(pt, slot, ts);
	return 0;
}

/*
 * proctable__meta_at() - the facts that describe @slot's image at @ts:
 * before its last exec, the previous era's. Reference for the caller, or
 * NULL. *@era (may be NULL) names that era within the incarnation, for as
 * long as the table keeps it: the time of the exec that began it (0: none
 * seen), or that ended it, | 1.
 */
struct proc_meta *proctable__meta_at(struct proctable *pt, uint32_t slot, uint32_t pid,
				     uint64_t start, uint64_t ts, uint64_t *era)
{
	struct proc_meta *m = NULL;
	struct proc_slot *ps;
	bool prev;

	if (era)
		*era = 0;
	if (!slot || slot > pt->max)
		return NULL;
	ps = &pt->slots[slot];
	pthread_mutex_lock(&pt->lock);
	if (is_incarnation(ps, pid, start)) {
		prev = ps->exec_ts && ts < ps->exec_ts;
		m = prev ? ps->prev_meta : ps->meta;
		meta_get(pt, m);
		if (era)
			*era = ps->exec_ts << 1 | prev;
	}
	pthread_mutex_unlock(&pt->lock);
	return m;
}
