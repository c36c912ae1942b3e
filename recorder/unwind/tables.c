// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tables.c - the unwind maps' owner. See tables.h.
 *
 * The row pool is one BPF array mapped into the daemon: a file's rows are
 * copied in with memcpy, then its slot in the file table is written, then
 * process tables that name the slot. Freed runs go back to a first-fit
 * free list that merges neighbours. A slot's gen changes on every reuse,
 * and a process table records the gen it was written with, so a table
 * the daemon is about to replace never reaches another file's rows.
 *
 * When a file does not fit, the pool makes room in this order: idle files
 * (no table names them), oldest first; files moved down into free runs
 * below them (compaction); then the rows of files tables still name but
 * no walk came to for FR_UNWIND_COLD_EPOCHS (the BPF side stamps each
 * file it walks through), least recently used first, whoever owns or maps
 * them. Such a cold file keeps its slot with no rows: walked by frame
 * pointer until a walk comes to it again, then built again (a process
 * that maps it is attached anew, unwinder__wanted()).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>
#include <bpf/bpf.h>

#include "hashmap.h"
#include "procstat.h"
#include "rows.h"
#include "sampler.h"
#include "tables.h"
#include "uwalk.h"
#include "util.h"

#define FR_UNWIND_IDLE_NS	(60 * 1000000000ULL)	/* rows kept after their last user */
#define FR_UNWIND_BUILDERS	8	/* builds in flight that others wait for */
#define FR_UNWIND_OWNER_SHARE	4	/* a file owner but root: 1/4 of the pool at most */
#define FR_UNWIND_COLD_EPOCHS	10	/* no walk for that long (x 1.07 s): rows may go */
#define FR_UNWIND_RETRY_NS	(10 * 1000000000ULL)	/* a cold file's next build, at the soonest */

/*
 * Exits whose mappings are kept for the copies of their stacks that wait
 * for rows (unwinder__exit_maps()): the last so many, 231 KiB in all,
 * allocated at the first. A copy waits 3 s, 10 s while its file is built
 * (the drain's FR_UCOPY_WAIT_NS, FR_UCOPY_BUILD_WAIT_NS); 64 short
 * processes that each end before a file's rows exist are a build's first
 * seconds. Fewer kept is not wrong: those copies are given up as walked.
 */
#define FR_UNWIND_AFTER		64

#define FR_UKEY_FILE	1
#define FR_UKEY_VDSO	3

/*
 * A file's identity: device, inode and change time (a file written in
 * place, or a new file on a reused inode, is another). Never a build-id:
 * that is bytes the file's writer chose, and a file claiming a system
 * library's must not lend its rows to it (or take them).
 */
struct ukey {
	uint64_t w[4];
};

struct ufile {
	uint32_t slot, gen;		/* FR_UFILE_NONE: walked by frame pointer */
	uint32_t row_start, nrows;
	uid_t owner;			/* the file's owner (the vDSO: root) */
	uint32_t refs;			/* mappings of process tables naming it */
	uint64_t idle_since;		/* refs 0 since then (CLOCK_MONOTONIC ns); kept a while */
	bool cold;			/* its rows were evicted while mapped: nrows 0 */
	uint32_t cold_at;		/* when, in used-stamp units */
	uint32_t nrows_built;		/* its rows when it had them */
	uint64_t retry_at;		/* CLOCK_MONOTONIC ns: no build of a cold file before */
	uint32_t nkeys;
	struct ukey keys[1];
	struct urows_load load[FR_UROWS_LOADS];
	uint32_t nload;
	struct pyfile py;		/* the CPython interpreter it is, runtime 0: none */
};

/* An exited incarnation's code mapping: where, and which file. */
struct after_map {
	uint64_t begin, end, pgoff;
	struct ukey key;
};

/* The code mappings an exited incarnation's exit sent (struct fr_rec_maps). */
struct afterlife {
	uint32_t pid, gen, n;
	uint64_t start;
	struct after_map m[FR_XMAPS_MAX];
};

struct uproc_rec {
	uint64_t start;
	uint32_t gen;
	uint32_t nfiles;
	struct ufile **files;
	struct fr_pyproc py;		/* its interpreter, as in its table */
};

struct extent {
	uint32_t start, len;
};

/* A file that may lose its rows, and the last walk that came to it. */
struct cold_cand {
	uint32_t used;
	struct ufile *f;
};

struct unwinder {
	pthread_mutex_t lock;
	bool no_python;			/* unwinder__set_python(false) */
	int rows_fd, files_fd, procs_fd, gen_fd, inodes_fd, read_fd;
	struct fr_urow *pool;		/* the mmap'd row array */
	size_t pool_len;
	uint32_t nrows, nfiles;
	struct extent *free_ext;	/* sorted by start, never adjacent */
	size_t nfree, free_cap;
	uint32_t *slot_free;		/* stack of free file slots */
	uint32_t nslot_free;
	uint32_t *slot_gen;
	struct ufile **by_slot;		/* the file in each slot, or NULL */
	struct cold_cand *cands;	/* nfiles: evict_cold()'s scratch, allocated up front */
	struct fr_hashmap files;	/* struct ukey -> struct ufile * */
	uint32_t nidle;			/* files no table names, kept for reuse */
	uint32_t ncold;			/* files whose rows were evicted while mapped */
	struct fr_hashmap procs;	/* uint32_t pid -> struct uproc_rec * */
	struct fr_uproc *scratch;	/* under the lock: a process table being read */
	struct ukey building[FR_UNWIND_BUILDERS];	/* files whose rows a thread builds now */
	unsigned nbuilding;
	uint32_t attaching[FR_UNWIND_BUILDERS];	/* processes a thread attaches now, 0: none */
	pthread_cond_t built;		/* signalled when a build ends */
	/* The drain's thread only (unwinder__exit_maps(), unwinder__finish()),
	 * so that it never waits for the lock to keep an exit. */
	struct afterlife *after;	/* FR_UNWIND_AFTER exits, allocated at the first */
	uint32_t after_next;		/* the next one to replace */
	atomic_uint_fast64_t exits_kept;
	struct unwinder_stats st;
};

/* The change time of @st in ns: part of a file's identity. */
static uint64_t ctime_ns(const struct stat *st)
{
	return (uint64_t)st->st_ctim.tv_sec * 1000000000ULL + (uint64_t)st->st_ctim.tv_nsec;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Now in the units of the BPF side's used stamps (struct fr_ufile). */
static uint32_t epoch_now(void)
{
	return (uint32_t)(now_ns() >> FR_UFILE_EPOCH_SHIFT);
}

/* The lowest free run of @n rows that ends at or below @limit, taken; or -ENOSPC. */
static int64_t pool_alloc_below(struct unwinder *u, uint32_t n, uint32_t limit)
{
	for (size_t i = 0; i < u->nfree && u->free_ext[i].start + (uint64_t)n <= limit; i++) {
		struct extent *e = &u->free_ext[i];
		uint32_t at = e->start;

		if (e->len < n)
			continue;
		e->start += n;
		e->len -= n;
		if (!e->len) {
			memmove(e, e + 1, (u->nfree - i - 1) * sizeof(*e));
			u->nfree--;
		}
		u->st.rows_used += n;
		return at;
	}
	return -ENOSPC;
}

/* First fit from the free list; returns the start or -ENOSPC. */
static int64_t pool_alloc(struct unwinder *u, uint32_t n)
{
	return pool_alloc_below(u, n, u->nrows);
}

/* Is there a free run of @n rows? */
static bool pool_fits(const struct unwinder *u, uint32_t n)
{
	for (size_t i = 0; i < u->nfree; i++)
		if (u->free_ext[i].len >= n)
			return true;
	return false;
}

/* Give [start, start + n) back, merging with its neighbours. */
static int pool_free(struct unwinder *u, uint32_t start, uint32_t n)
{
	size_t i = 0;

	while (i < u->nfree && u->free_ext[i].start < start)
		i++;
	u->st.rows_used -= n;
	if (i > 0 && u->free_ext[i - 1].start + u->free_ext[i - 1].len == start) {
		u->free_ext[i - 1].len += n;
		if (i < u->nfree && start + n == u->free_ext[i].start) {
			u->free_ext[i - 1].len += u->free_ext[i].len;
			memmove(&u->free_ext[i], &u->free_ext[i + 1],
				(u->nfree - i - 1) * sizeof(*u->free_ext));
			u->nfree--;
		}
		return 0;
	}
	if (i < u->nfree && start + n == u->free_ext[i].start) {
		u->free_ext[i].start = start;
		u->free_ext[i].len += n;
		return 0;
	}
	if (u->nfree == u->free_cap) {
		size_t cap = u->free_cap ? u->free_cap * 2 : 64;
		void *v = realloc(u->free_ext, cap * sizeof(*u->free_ext));

		if (!v)
			return -ENOMEM;	/* the run is lost to the pool, not corrupted */
		u->free_ext = v;
		u->free_cap = cap;
	}
	memmove(&u->free_ext[i + 1], &u->free_ext[i], (u->nfree - i) * sizeof(*u->free_ext));
	u->free_ext[i] = (struct extent){ start, n };
	u->nfree++;
	return 0;
}

void unwinder__set_python(struct unwinder *u, bool on)
{
	u->no_python = !on;
}

struct unwinder *unwinder__new(const struct sampler_unwind_maps *m)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	int err = -ENOMEM;

	if (!u)
		goto fail;
	u->rows_fd = m->rows;
	u->files_fd = m->files;
	u->procs_fd = m->procs;
	u->gen_fd = m->gen;
	u->inodes_fd = m->inodes;
	u->read_fd = m->read;
	u->nrows = m->nrows;
	u->nfiles = m->nfiles;
	u->pool_len = FR_ALIGN((size_t)m->nrows * sizeof(struct fr_urow),
			       (size_t)sysconf(_SC_PAGESIZE));
	u->pool = mmap(NULL, u->pool_len, PROT_READ | PROT_WRITE, MAP_SHARED, m->rows, 0);
	if (u->pool == MAP_FAILED) {
		err = -errno;
		u->pool = NULL;
		goto fail;
	}
	u->slot_free = malloc(m->nfiles * sizeof(*u->slot_free));
	u->slot_gen = calloc(m->nfiles, sizeof(*u->slot_gen));
	u->by_slot = calloc(m->nfiles, sizeof(*u->by_slot));
	u->free_ext = malloc(64 * sizeof(*u->free_ext));
	u->scratch = malloc(sizeof(*u->scratch));
	u->cands = malloc(m->nfiles * sizeof(*u->cands));
	if (!u->slot_free || !u->slot_gen || !u->by_slot || !u->free_ext || !u->scratch ||
	    !u->cands)
		goto fail;
	for (uint32_t i = 0; i < m->nfiles; i++)
		u->slot_free[i] = m->nfiles - 1 - i;
	u->nslot_free = m->nfiles;
	u->free_ext[0] = (struct extent){ 0, m->nrows };
	u->nfree = 1;
	u->free_cap = 64;
	fr_hashmap__init(&u->files, sizeof(struct ukey), sizeof(struct ufile *), NULL, NULL, NULL);
	fr_hashmap__init(&u->procs, sizeof(uint32_t), sizeof(struct uproc_rec *), NULL, NULL, NULL);
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->built, NULL);
	u->st.rows_cap = m->nrows;
	u->st.files_cap = m->nfiles;
	return u;
fail:
	if (u) {
		free(u->cands);
		free(u->scratch);
		free(u->free_ext);
		free(u->by_slot);
		free(u->slot_gen);
		free(u->slot_free);
		if (u->pool)
			munmap(u->pool, u->pool_len);
		free(u);
	}
	errno = -err;
	return NULL;
}

static void ufile__free(struct ufile *f)
{
	free(f);
}

void unwinder__free(struct unwinder *u)
{
	const void *k;
	void *v;

	if (!u)
		return;
	for (size_t i = 0; i < u->procs.cap; i++)
		if (fr_hashmap__at(&u->procs, i, &k, &v)) {
			struct uproc_rec *r = *(struct uproc_rec **)v;

			free(r->files);
			free(r);
		}
	/* A file is stored under one or two keys: free it at the last one seen. */
	for (size_t i = 0; i < u->files.cap; i++)
		if (fr_hashmap__at(&u->files, i, &k, &v)) {
			struct ufile *f = *(struct ufile **)v;

			if (!--f->nkeys)
				ufile__free(f);
		}
	fr_hashmap__fini(&u->procs);
	fr_hashmap__fini(&u->files);
	pthread_cond_destroy(&u->built);
	pthread_mutex_destroy(&u->lock);
	free(u->after);
	free(u->cands);
	free(u->scratch);
	free(u->free_ext);
	free(u->by_slot);
	free(u->slot_gen);
	free(u->slot_free);
	munmap(u->pool, u->pool_len);
	free(u);
}

static uint32_t gen_ts(struct unwinder *u, uint32_t pid, uint64_t *ts)
{
	struct fr_ugen g = { 0 };

	if (bpf_map_lookup_elem(u->gen_fd, &pid, &g))
		g = (struct fr_ugen){ 0 };
	if (ts)
		*ts = g.ts;
	return g.gen;
}

static uint32_t gen_locked(struct unwinder *u, uint32_t pid)
{
	return gen_ts(u, pid, NULL);
}

uint32_t unwinder__gen(struct unwinder *u, uint32_t pid, uint64_t *changed)
{
	return gen_ts(u, pid, changed);
}

void unwinder__mark_read(struct unwinder *u, uint32_t pid, uint64_t start, uint32_t gen)
{
	struct fr_uread r = { .start = start, .gen = gen };

	if (u && u->read_fd >= 0)
		bpf_map_update_elem(u->read_fd, &pid, &r, BPF_ANY);
}

/* @k as the BPF side reads a mapping's identity (uinodes); false if it cannot. */
static bool ukey_bpf(const struct ukey *k, struct fr_uinode_key *out)
{
	*out = (struct fr_uinode_key){ 0 };
	if (k->w[0] == FR_UKEY_VDSO)
		return true;
	if (k->w[0] != FR_UKEY_FILE || (!k->w[1] && !k->w[2]))
		return false;
	*out = (struct fr_uinode_key){ .dev = k->w[1], .ino = k->w[2], .ctime = k->w[3] };
	return true;
}

/*
 * Under the lock: tell the BPF side that @f, known as @k, has rows, for
 * the tables it builds from a process's VMAs before ours (uproc_build()).
 * A file with more executable PT_LOADs than FR_ULOADS waits for ours.
 * A failure is not one: those processes wait for our table, as before.
 */
static void inode_publish(struct unwinder *u, const struct ufile *f, const struct ukey *k)
{
	struct fr_uinode v = { .file = f->slot, .file_gen = f->gen, .nload = f->nload };
	struct fr_uinode_key bk;

	if (f->slot == FR_UFILE_NONE || f->nload > FR_ULOADS || !ukey_bpf(k, &bk))
		return;
	for (uint32_t i = 0; i < f->nload; i++)
		v.load[i] = (struct fr_uload){ f->load[i].offset, f->load[i].vaddr,
					       f->load[i].filesz };
	/* An interpreter: a table built in the kernel walks its Python frames too. */
	pydetect__proc(&f->py, 0, &v.py);
	bpf_map_update_elem(u->inodes_fd, &bk, &v, BPF_ANY);
}

/* Free @f now: its rows, its slot and its keys. */
static void file_free(struct unwinder *u, struct ufile *f)
{
	struct fr_uinode_key bk;

	for (uint32_t i = 0; i < f->nkeys; i++)
		if (ukey_bpf(&f->keys[i], &bk))
			bpf_map_delete_elem(u->inodes_fd, &bk);
	if (f->slot != FR_UFILE_NONE) {
		struct fr_ufile dead = { 0 };

		bpf_map_update_elem(u->files_fd, &f->slot, &dead, BPF_ANY);
		u->slot_gen[f->slot]++;
		u->by_slot[f->slot] = NULL;
		u->slot_free[u->nslot_free++] = f->slot;
		if (f->nrows)
			pool_free(u, f->row_start, f->nrows);
		if (f->cold)
			u->ncold--;
		else
			u->st.files--;
		u->st.freed++;
	}
	for (uint32_t i = 0; i < f->nkeys; i++)
		fr_hashmap__remove(&u->files, &f->keys[i]);
	u->nidle--;
	ufile__free(f);
}

/*
 * Drop one reference. A file no table names any more is kept for
 * FR_UNWIND_IDLE_NS, so that short-lived processes (a build, a shell
 * loop) do not rebuild libc's rows each time; the pool evicts idle files
 * first when it is full.
 */
static void file_put(struct unwinder *u, struct ufile *f)
{
	if (!f || --f->refs)
		return;
	f->idle_since = now_ns();
	u->nidle++;
}

/* A reference on @f, which may be idle. */
static void file_ref(struct unwinder *u, struct ufile *f)
{
	if (!f->refs++)
		u->nidle--;
}

/*
 * Free idle files: those idle longer than @older_ns, or, with @need, the
 * oldest ones until @need rows are free in one run; with @owner other
 * than FR_ANY_OWNER, only that owner's, until its use leaves @need rows
 * of its share. Returns how many.
 */
#define FR_ANY_OWNER	((uid_t)-1)

static uint64_t owner_rows(const struct unwinder *u, uid_t owner);

static bool evicted_enough(const struct unwinder *u, uint32_t need, uid_t owner)
{
	if (owner != FR_ANY_OWNER)
		return owner_rows(u, owner) + need <= u->nrows / FR_UNWIND_OWNER_SHARE;
	return pool_fits(u, need) && u->nslot_free;
}

static unsigned evict_idle_of(struct unwinder *u, uint64_t older_ns, uint32_t need, uid_t owner)
{
	uint64_t now = now_ns();
	unsigned freed = 0;

	for (;;) {
		struct ufile *oldest = NULL;

		for (size_t i = 0; i < u->files.cap; i++) {
			struct ufile **f;
			const void *k;

			if (!fr_hashmap__at(&u->files, i, &k, (void **)&f) || (*f)->refs ||
			    memcmp(k, &(*f)->keys[0], sizeof(struct ukey)) ||
			    (owner != FR_ANY_OWNER && ((*f)->owner != owner ||
							(*f)->slot == FR_UFILE_NONE)))
				continue;
			if (!need && now - (*f)->idle_since > older_ns) {
				oldest = *f;
				break;
			}
			if (need && (!oldest || (*f)->idle_since < oldest->idle_since))
				oldest = *f;
		}
		if (!oldest)
			return freed;
		file_free(u, oldest);
		freed++;
		if (need && evicted_enough(u, need, owner))
			return freed;
	}
}

static unsigned evict_idle(struct unwinder *u, uint64_t older_ns, uint32_t need)
{
	return evict_idle_of(u, older_ns, need, FR_ANY_OWNER);
}

/* Under the lock: the rows that files of @owner hold in the pool. */
static uint64_t owner_rows(const struct unwinder *u, uid_t owner)
{
	uint64_t n = 0;

	for (size_t i = 0; i < u->files.cap; i++) {
		struct ufile **f;
		const void *k;

		if (fr_hashmap__at(&u->files, i, &k, (void **)&f) && (*f)->owner == owner &&
		    (*f)->slot != FR_UFILE_NONE && !memcmp(k, &(*f)->keys[0], sizeof(struct ukey)))
			n += (*f)->nrows;
	}
	return n;
}

/*
 * Under the lock: may @f's @n rows go in the pool? Files of an owner other
 * than root (what a local user can write: copies of large binaries, each
 * a distinct file) take FR_UNWIND_OWNER_SHARE of it at most, that owner's
 * idle files going first, so that one user's mappings cannot leave the
 * system's files, and other users', without rows: nobody filled the 40 MiB
 * pool with a few processes mapping large files, and root's clang then
 * reached its outermost frame in 0 % of its samples (issue 25). Root's
 * files are the system's, shared by every user. -EDQUOT when over.
 */
static int owner_admit(struct unwinder *u, const struct ufile *f, uint32_t n)
{
	if (!f->owner || owner_rows(u, f->owner) + n <= u->nrows / FR_UNWIND_OWNER_SHARE)
		return 0;
	evict_idle_of(u, 0, n, f->owner);
	return evicted_enough(u, n, f->owner) ? 0 : -EDQUOT;
}

/* Under the lock: the BPF side's stamp of the last walk that came to @f (0: none). */
static uint32_t file_used(struct unwinder *u, const struct ufile *f)
{
	struct fr_ufile ent;

	if (f->slot == FR_UFILE_NONE || bpf_map_lookup_elem(u->files_fd, &f->slot, &ent))
		return 0;
	return ent.used;
}

/* Under the lock: point @f's slot at its run as @f holds it now, stamped @used. */
static int slot_write(struct unwinder *u, const struct ufile *f, uint32_t used)
{
	struct fr_ufile ent = { .row_start = f->row_start, .nrows = f->nrows, .gen = f->gen,
				.used = used };

	return bpf_map_update_elem(u->files_fd, &f->slot, &ent, BPF_ANY) ? -errno : 0;
}

/*
 * Under the lock: move @f's rows to the lowest free run below them. The
 * copy is made, then the slot points at it, then the old run is freed:
 * a walk that read the slot before reads the old rows, which stay as
 * they are until a later publish takes the run (as after any eviction).
 * Returns 0, or -ENOSPC when no free run below fits.
 */
static int file_move(struct unwinder *u, struct ufile *f)
{
	int64_t at = pool_alloc_below(u, f->nrows, f->row_start);
	uint32_t old = f->row_start;
	int err;

	if (at < 0)
		return (int)at;
	memcpy(&u->pool[at], &u->pool[old], (size_t)f->nrows * sizeof(*u->pool));
	f->row_start = (uint32_t)at;
	err = slot_write(u, f, file_used(u, f));
	if (err) {
		f->row_start = old;
		pool_free(u, (uint32_t)at, f->nrows);
		return err;
	}
	pool_free(u, old, f->nrows);
	u->st.moved++;
	return 0;
}

/* Under the lock: does a free run below @f's rows hold them all? */
static bool fits_below(const struct unwinder *u, const struct ufile *f)
{
	for (size_t i = 0; i < u->nfree && u->free_ext[i].start < f->row_start; i++)
		if (u->free_ext[i].len >= f->nrows)
			return true;
	return false;
}

/*
 * Under the lock: compaction. While no free run holds @need rows though
 * the free rows add up to it, the file highest in the pool that a free
 * run below it can take moves there, so that free runs gather at the
 * top. Copies never overlap their source (a walk may be reading it), so
 * a file larger than every hole below it stays. Returns pool_fits().
 */
static bool pool_compact(struct unwinder *u, uint32_t need)
{
	for (uint32_t moves = 0; moves < u->nfiles && !pool_fits(u, need) &&
	     u->nrows - u->st.rows_used >= need; moves++) {
		struct ufile *top = NULL;

		for (uint32_t s = 0; s < u->nfiles; s++) {
			struct ufile *f = u->by_slot[s];

			if (f && f->nrows && (!top || f->row_start > top->row_start) &&
			    fits_below(u, f))
				top = f;
		}
		if (!top || file_move(u, top))
			break;
	}
	return pool_fits(u, need);
}

/* Under the lock: @f, which has no rows now and needs @n, waits cold from now on. */
static void mark_cold(struct unwinder *u, struct ufile *f, uint32_t n)
{
	f->nrows_built = n;
	f->cold = true;
	f->cold_at = epoch_now();
	f->retry_at = 0;
	u->ncold++;
}

/*
 * Under the lock: evict @f's rows though tables name it. Its slot stays,
 * with no rows (nrows 0): the walks that come to it go by frame pointer
 * and stamp it, which makes it wanted again (unwinder__wanted()).
 */
static void file_cool(struct unwinder *u, struct ufile *f, uint32_t used)
{
	uint32_t start = f->row_start, n = f->nrows;

	f->row_start = 0;
	f->nrows = 0;
	if (slot_write(u, f, used)) {
		f->row_start = start;
		f->nrows = n;
		return;
	}
	pool_free(u, start, n);
	mark_cold(u, f, n);
	u->st.files--;
	u->st.cold++;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cold_cand *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used;
}

/*
 * Under the lock: the files with rows, other than @keep, that no walk came
 * to for FR_UNWIND_COLD_EPOCHS, into u->cands, least recently used first.
 * Whoever owns or maps them: use, not who came first, keeps rows.
 */
static uint32_t cold_files(struct unwinder *u, const struct ufile *keep)
{
	uint32_t now = epoch_now(), n = 0;

	for (uint32_t s = 0; s < u->nfiles; s++) {
		struct ufile *f = u->by_slot[s];
		uint32_t used;

		if (!f || f == keep || !f->nrows)
			continue;
		used = file_used(u, f);
		if (now - used >= FR_UNWIND_COLD_EPOCHS)
			u->cands[n++] = (struct cold_cand){ used, f };
	}
	qsort(u->cands, n, sizeof(*u->cands), cand_cmp);
	return n;
}

/*
 * Under the lock: make a free run of @need rows for @keep (NULL: a new
 * file): idle files first, oldest first; then compaction; then cold
 * files, least recently used first, compacting again once their rows add
 * up. Returns whether @need rows fit now.
 */
static bool make_room(struct unwinder *u, uint32_t need, const struct ufile *keep)
{
	uint32_t n, i = 0;

	if (need > u->nrows)
		return false;
	if (!pool_fits(u, need) && u->nidle)
		evict_idle(u, 0, need);
	if (pool_fits(u, need) || pool_compact(u, need))
		return true;
	n = cold_files(u, keep);
	while (i < n && !pool_fits(u, need)) {
		file_cool(u, u->cands[i].f, u->cands[i].used);
		i++;
		if (u->nrows - u->st.rows_used >= need)
			pool_compact(u, need);
	}
	return pool_fits(u, need);
}

static int file_index(struct unwinder *u, struct ufile *f, const struct ukey *k)
{
	int err = fr_hashmap__insert(&u->files, k, &f);

	if (!err)
		f->keys[f->nkeys++] = *k;
	return err;
}

/*
 * Under the lock: @f's @n rows found no room. It takes a slot with no rows,
 * as a cold file: the walks that come to it stamp it, and it is built
 * when room is made (cold_claim() checks first that idle and cold files
 * would make it). Returns -ENOSPC.
 */
static int file_wait_room(struct unwinder *u, struct ufile *f, uint32_t n)
{
	uint32_t slot = u->slot_free[u->nslot_free - 1];
	struct fr_ufile ent = { .gen = u->slot_gen[slot] };

	if (bpf_map_update_elem(u->files_fd, &slot, &ent, BPF_ANY))
		return -ENOSPC;
	u->nslot_free--;
	f->slot = slot;
	f->gen = ent.gen;
	u->by_slot[slot] = f;
	f->row_start = 0;
	f->nrows = 0;
	mark_cold(u, f, n);
	return -ENOSPC;
}

/* Copy @r into the pool and publish it in a file slot of @f. */
static int file_publish(struct unwinder *u, struct ufile *f, const struct urows *r)
{
	struct fr_ufile ent;
	int64_t at;
	uint32_t slot;

	if (!r->n)
		return -ENODATA;
	if (owner_admit(u, f, r->n))
		return -EDQUOT;
	if (!u->nslot_free && u->nidle)
		evict_idle(u, 0, r->n);
	if (!u->nslot_free)
		return -ENOSPC;
	if (!make_room(u, r->n, NULL))
		return file_wait_room(u, f, r->n);
	at = pool_alloc(u, r->n);
	if (at < 0)
		return (int)at;
	slot = u->slot_free[--u->nslot_free];
	memcpy(&u->pool[at], r->row, (size_t)r->n * sizeof(*r->row));
	ent = (struct fr_ufile){ .row_start = (uint32_t)at, .nrows = r->n,
				 .gen = u->slot_gen[slot], .used = epoch_now() };
	if (bpf_map_update_elem(u->files_fd, &slot, &ent, BPF_ANY)) {
		int err = -errno;

		u->slot_free[u->nslot_free++] = slot;
		pool_free(u, (uint32_t)at, r->n);
		return err;
	}
	f->slot = slot;
	u->by_slot[slot] = f;
	f->gen = ent.gen;
	f->row_start = ent.row_start;
	f->nrows = ent.nrows;
	u->st.files++;
	return 0;
}

/* The vDSO is the same image in every process: build it from our own. */
static int build_vdso(struct urows *r)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	size_t len;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return -ENOENT;
	len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (len < sizeof(*eh) || len > (1u << 20))
		return -ENOEXEC;
	return urows__build_mem(eh, len, r);
}

/* Unlocked: the rows of the file open at @fd, or of the vDSO when @fd < 0. */
static int rows_build(int fd, struct urows *r, uint64_t *ns)
{
	uint64_t t0 = now_ns();
	int err = fd >= 0 ? urows__build_fd(fd, r) : build_vdso(r);

	*ns = now_ns() - t0;
	return err;
}

/*
 * Under the lock: a new file entry under @fk for rows @r built in @ns
 * (@err: they could not be), with one reference taken, published. A file
 * without rows stays cached as FR_UFILE_NONE: walked by frame pointer,
 * not rebuilt while mapped. NULL on -ENOMEM.
 */
static struct ufile *file_add(struct unwinder *u, const struct ukey *fk, uid_t owner,
			      int err, const struct urows *r, uint64_t ns)
{
	struct ufile *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->owner = owner;
	if (file_index(u, f, fk)) {
		free(f);
		return NULL;
	}
	f->refs = 1;		/* the caller's: not idle, so not evicted */
	f->slot = FR_UFILE_NONE;
	u->st.build_ns += ns;
	if (err) {
		u->st.failed++;
		return f;
	}
	memcpy(f->load, r->load, sizeof(f->load));
	f->nload = r->nload;
	f->py = u->no_python ? (struct pyfile){ 0 } : r->py;
	u->st.built++;
	err = file_publish(u, f, r);
	if (!err)
		inode_publish(u, f, fk);
	if (err == -ENODATA)
		u->st.no_cfi++;
	else if (err == -EDQUOT)
		u->st.over_share++;
	else if (err)
		u->st.full++;
	return f;
}

static struct ufile *file_find(struct unwinder *u, const struct ukey *k)
{
	struct ufile **f = fr_hashmap__find(&u->files, k);

	return f ? *f : NULL;
}

/* Under the lock: the file under @fk, referenced. */
static struct ufile *file_lookup(struct unwinder *u, const struct ukey *fk)
{
	struct ufile *f = file_find(u, fk);

	if (f)
		file_ref(u, f);
	return f;
}

/* Under the lock: is a thread building the file under @k? */
static bool building(const struct unwinder *u, const struct ukey *k)
{
	for (unsigned i = 0; i < u->nbuilding; i++)
		if (!memcmp(&u->building[i], k, sizeof(*k)))
			return true;
	return false;
}

/*
 * Under the lock: wait while another thread builds the file under @fk,
 * then look it up; on a miss, claim the build (*@claimed) when there is
 * room to say so. Returns the file, referenced, or NULL.
 */
static struct ufile *lookup_or_claim(struct unwinder *u, const struct ukey *fk, bool *claimed)
{
	struct ufile *f;

	*claimed = false;
	while (!(f = file_lookup(u, fk)) && building(u, fk))
		pthread_cond_wait(&u->built, &u->lock);
	if (!f && u->nbuilding < FR_UNWIND_BUILDERS) {
		u->building[u->nbuilding++] = *fk;
		*claimed = true;
	}
	return f;
}

/*
 * Under the lock, for a caller that must not wait: the file under @fk,
 * referenced; or a claim on its build (*@claimed) if nobody builds it and
 * its @size is at most @max (0: any); else NULL with *@stop = -EAGAIN.
 */
static struct ufile *lookup_or_pass(struct unwinder *u, const struct ukey *fk, uint64_t size,
				    uint64_t max, bool *claimed, int *stop)
{
	struct ufile *f = file_lookup(u, fk);

	*claimed = false;
	if (f)
		return f;
	if (building(u, fk) || (max && size > max) || u->nbuilding >= FR_UNWIND_BUILDERS) {
		*stop = -EAGAIN;
		return NULL;
	}
	u->building[u->nbuilding++] = *fk;
	*claimed = true;
	return NULL;
}

/* Under the lock: the build of @fk is over (done or given up); wake the waiters. */
static void unclaim(struct unwinder *u, const struct ukey *fk)
{
	for (unsigned i = 0; i < u->nbuilding; i++)
		if (!memcmp(&u->building[i], fk, sizeof(*fk))) {
			u->building[i] = u->building[--u->nbuilding];
			pthread_cond_broadcast(&u->built);
			return;
		}
}

/*
 * Unlocked: build the rows of the file open at @fd (the vDSO: -1), then
 * under the lock add them, unless another thread added the same file
 * meanwhile (its entry is taken, ours dropped), and end the claim on
 * @fk. Returns the file, referenced, or NULL on -ENOMEM.
 */
static struct ufile *file_build(struct unwinder *u, const struct ukey *fk, int fd, uid_t owner)
{
	struct urows r;
	uint64_t ns;
	int err = rows_build(fd, &r, &ns);
	struct ufile *f;

	pthread_mutex_lock(&u->lock);
	f = file_lookup(u, fk);
	if (!f) {
		f = file_add(u, fk, owner, err, &r, ns);
	} else {
		/* Built twice (no room to claim it): the work counts. */
		u->st.build_ns += ns;
		if (err)
			u->st.failed++;
		else
			u->st.built++;
	}
	unclaim(u, fk);
	pthread_mutex_unlock(&u->lock);
	if (!err)
		urows__fini(&r);
	return f;
}

/*
 * Under the lock: may the caller build cold @f's rows again, as @fk? Not
 * before its retry time, nor while another thread builds it, nor when
 * even every idle and cold file's rows would not make room for what it
 * had (then not for FR_UNWIND_RETRY_NS: a build costs CPU). Claims the
 * build when it may.
 */
static bool cold_claim(struct unwinder *u, struct ufile *f, const struct ukey *fk,
		       uint64_t size, const struct unwind_yield *yield)
{
	uint64_t now = now_ns(), room;

	if (!f->cold || now < f->retry_at || building(u, fk) ||
	    u->nbuilding >= FR_UNWIND_BUILDERS ||
	    (yield && yield->no_wait && yield->build_max && size > yield->build_max))
		return false;
	room = u->nrows - u->st.rows_used;
	for (uint32_t i = 0, n = cold_files(u, f); i < n; i++)
		room += u->cands[i].f->nrows;
	for (uint32_t s = 0; s < u->nfiles; s++)
		if (u->by_slot[s] && !u->by_slot[s]->refs)
			room += u->by_slot[s]->nrows;
	if (room < f->nrows_built) {
		f->retry_at = now + FR_UNWIND_RETRY_NS;
		u->st.cold_no_room++;
		return false;
	}
	u->building[u->nbuilding++] = *fk;
	return true;
}

/* Under the lock: give cold @f the rows @r again, in its own slot. */
static int file_refill(struct unwinder *u, struct ufile *f, const struct urows *r)
{
	int64_t at;
	int err;

	if (!r->n)
		return -ENODATA;
	if (owner_admit(u, f, r->n) || !make_room(u, r->n, f))
		return -ENOSPC;
	at = pool_alloc(u, r->n);
	if (at < 0)
		return (int)at;
	memcpy(&u->pool[at], r->row, (size_t)r->n * sizeof(*r->row));
	f->row_start = (uint32_t)at;
	f->nrows = r->n;
	err = slot_write(u, f, epoch_now());
	if (err) {
		pool_free(u, (uint32_t)at, r->n);
		f->row_start = 0;
		f->nrows = 0;
		return err;
	}
	f->cold = false;
	u->ncold--;
	u->st.files++;
	u->st.refilled++;
	for (uint32_t i = 0; i < f->nkeys; i++)
		inode_publish(u, f, &f->keys[i]);
	return 0;
}

/*
 * Unlocked: build again the rows of cold @f (referenced by the caller),
 * open at @fd, then under the lock put them back in its slot and end the
 * claim on @fk. When they do not fit, @f stays cold until its retry time.
 */
static void file_rebuild(struct unwinder *u, struct ufile *f, const struct ukey *fk, int fd)
{
	struct urows r;
	uint64_t ns;
	int err = rows_build(fd, &r, &ns);
	int built = err;

	pthread_mutex_lock(&u->lock);
	u->st.build_ns += ns;
	if (!err && f->cold)
		err = file_refill(u, f, &r);
	if (err) {
		f->retry_at = now_ns() + FR_UNWIND_RETRY_NS;
		u->st.cold_no_room += err == -ENOSPC;
	}
	unclaim(u, fk);
	pthread_mutex_unlock(&u->lock);
	if (!built)
		urows__fini(&r);
}

/*
 * Unlocked: the file behind mapping @m, with a reference taken: found by
 * its identity (device, inode, change time: one stat of its map_files
 * link), else opened and built without the lock held (a large file's rows take 100s of ms, and the
 * daemon's tick and status take this lock). Two threads that want the
 * same new file build it once: the second waits for the first. Before a
 * build, @yield (if set) may ask to stop: *@stop is then -EAGAIN and NULL
 * returned; when another file is mapped at @m's place now, *@stop is
 * -ESTALE; with @yield->no_wait, a file another thread builds, or too
 * big to build here, is passed: *@stop is -EAGAIN. NULL also for
 * anonymous code and files that cannot be opened (frame pointers).
 */
static struct ufile *file_get(struct unwinder *u, const char *procdir,
			      const struct fr_mapping *m, const struct unwind_yield *yield,
			      int *stop)
{
	struct ukey fk = { { FR_UKEY_FILE, m->dev, m->inode } };
	struct ufile *f;
	struct stat st;
	bool claimed;
	int fd, err;

	if (!m->path)
		return NULL;
	if (!strcmp(m->path, "[vdso]")) {
		fk.w[0] = FR_UKEY_VDSO;
		fk.w[1] = fk.w[2] = 0;
	} else if (m->path[0] != '/') {
		return NULL;
	} else {
		err = fr_mapping__stat(procdir, m, &st);
		if (err) {
			if (err == -ESTALE)
				*stop = -ESTALE;
			pthread_mutex_lock(&u->lock);
			u->st.unopened += err != -ESTALE;
			pthread_mutex_unlock(&u->lock);
			return NULL;
		}
		fk.w[3] = ctime_ns(&st);
	}
	pthread_mutex_lock(&u->lock);
	if (yield && yield->no_wait)
		f = lookup_or_pass(u, &fk, fk.w[0] == FR_UKEY_VDSO ? 0 : (uint64_t)st.st_size,
				   yield->build_max, &claimed, stop);
	else
		f = lookup_or_claim(u, &fk, &claimed);
	if (f && f->cold)
		claimed = cold_claim(u, f, &fk, fk.w[0] == FR_UKEY_VDSO ? 0 : (uint64_t)st.st_size,
				     yield);
	pthread_mutex_unlock(&u->lock);
	if ((f && !claimed) || *stop)
		return f;
	fd = fk.w[0] == FR_UKEY_VDSO ? -1 : fr_mapping__open(procdir, m);
	/* Changed since the stat: not the file the key names; frame pointers this time. */
	if (fd >= 0 && (fstat(fd, &st) || ctime_ns(&st) != fk.w[3])) {
		close(fd);
		fd = -EAGAIN;
	}
	if (fd < 0 && fk.w[0] != FR_UKEY_VDSO) {
		if (fd == -ESTALE)
			*stop = -ESTALE;
		pthread_mutex_lock(&u->lock);
		u->st.unopened += fd != -ESTALE;
		goto unclaim;
	}
	if (yield && yield->fn && yield->fn(yield->ctx)) {
		*stop = -EAGAIN;
		pthread_mutex_lock(&u->lock);
		goto unclaim;
	}
	if (f)
		file_rebuild(u, f, &fk, fd);
	else
		f = file_build(u, &fk, fd, fd >= 0 ? st.st_uid : 0);
	if (fd >= 0)
		close(fd);
	return f;
unclaim:
	if (claimed)
		unclaim(u, &fk);
	pthread_mutex_unlock(&u->lock);
	if (fd >= 0)
		close(fd);
	return f;
}

static void rec_free(struct unwinder *u, struct uproc_rec *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->nfiles; i++)
		file_put(u, r->files[i]);
	free(r->files);
	free(r);
}

/*
 * Unlocked: fill @v from @pm; the files referenced go to @rec, the
 * mappings beyond FR_UMAPS_MAX are counted in *@over. Returns 0,
 * -EAGAIN when @yield asked to stop before a build, -ESTALE when a
 * file mapped now is not the one @pm names (read it again), or -ESRCH
 * when (@pid, @start) exited: most short processes have by the time
 * their table is built, and each mapping's failed stat and opens cost
 * more than the table.
 */
static int fill_table(struct unwinder *u, uint32_t pid, uint64_t start, const char *procdir,
		      const struct procmaps *pm, const struct unwind_yield *yield,
		      struct fr_uproc *v, struct uproc_rec *rec, uint64_t *over)
{
	long page = sysconf(_SC_PAGESIZE);
	int stop = 0;

	for (size_t i = 0; i < pm->n && !stop; i++) {
		const struct fr_mapping *m = &pm->m[i];
		struct fr_umap *um;
		struct ufile *f;
		uint64_t bias;

		if (!(m->prot & PROT_EXEC))
			continue;
		/* What the kernel counts in mm->exec_vm: code that is not writable;
		 * [vsyscall] is the gate area, not a VMA of the mm. */
		if (m->path && !strcmp(m->path, "[vsyscall]"))
			continue;
		if (!(m->prot & PROT_WRITE))
			v->exec_vm += (m->end - m->start) / (uint64_t)page;
		if (v->n == FR_UMAPS_MAX) {
			(*over)++;
			continue;
		}
		um = &v->maps[v->n++];
		um->begin = m->start;
		um->end = m->end;
		um->file = FR_UFILE_NONE;
		f = file_get(u, procdir, m, yield, &stop);
		if (!f && !stop && m->path && m->path[0] == '/' && fr_procstat__gone(pid, start))
			stop = -ESRCH;	/* exited: every other open would fail too */
		if (!f)
			continue;
		rec->files[rec->nfiles++] = f;
		if (fr_load_bias(f->load, f->nload, m->start, m->pgoff, &bias))
			continue;
		/* The interpreter's state, in the first file that has one. */
		if (f->py.runtime && !v->py.runtime)
			pydetect__proc(&f->py, bias, &v->py);
		if (f->slot == FR_UFILE_NONE)
			continue;
		um->bias = bias;
		um->file = f->slot;
		um->file_gen = f->gen;
	}
	return stop;
}

/*
 * Under the lock: install @v, @rec as @pid's table if maps generation
 * @gen is still current and the process has not exited. Its exit drops
 * the table on the BPF side (unwind_forget()), but an exit that came
 * while the table was built had nothing to drop, and a table installed
 * after it stayed until the PID came back: 2,814 entries for 4 live
 * processes after a fork storm. So the check comes after the update:
 * an exit still to come will drop it. Returns 0 (@rec is taken) or -errno.
 */
static int table_install(struct unwinder *u, uint32_t pid, uint32_t gen,
			 const struct fr_uproc *v, struct uproc_rec *rec)
{
	struct uproc_rec **old;

	if (gen_locked(u, pid) != gen)
		return -ESTALE;
	if (bpf_map_update_elem(u->procs_fd, &pid, v, BPF_ANY))
		return -errno;
	if (fr_procstat__gone(pid, v->start)) {
		if (!bpf_map_lookup_elem(u->procs_fd, &pid, u->scratch) &&
		    u->scratch->start == v->start)
			bpf_map_delete_elem(u->procs_fd, &pid);
		u->st.exited++;
		return -ESRCH;
	}
	old = fr_hashmap__find(&u->procs, &pid);
	if (old) {
		rec_free(u, *old);
		*old = rec;
		return 0;
	}
	if (fr_hashmap__insert(&u->procs, &pid, &rec)) {
		bpf_map_delete_elem(u->procs_fd, &pid);
		return -ENOMEM;
	}
	u->st.procs++;
	return 0;
}

/*
 * Under the lock: note that a thread attaches @pid (the copies of its
 * stacks may wait longer for that). Returns the slot + 1 it took for
 * attaching_del(), 0 when none was free.
 */
static int attaching_add(struct unwinder *u, uint32_t pid)
{
	for (int i = 0; i < FR_UNWIND_BUILDERS; i++)
		if (!u->attaching[i]) {
			u->attaching[i] = pid;
			return i + 1;
		}
	return 0;
}

/* Under the lock: the attach attaching_add() returned @at for has ended. */
static void attaching_del(struct unwinder *u, int at)
{
	if (at)
		u->attaching[at - 1] = 0;
}

/* Under the lock: is a thread attaching @pid now? */
static bool attaching(const struct unwinder *u, uint32_t pid)
{
	for (int i = 0; i < FR_UNWIND_BUILDERS; i++)
		if (u->attaching[i] == pid)
			return true;
	return false;
}

int unwinder__attach(struct unwinder *u, uint32_t pid, uint64_t start, uint32_t gen,
		     const char *procdir, const struct procmaps *pm,
		     const struct unwind_yield *yield)
{
	struct uproc_rec *rec = calloc(1, sizeof(*rec));
	struct fr_uproc *v = calloc(1, sizeof(*v));
	uint64_t over = 0;
	int err = -ENOMEM;
	int at;

	if (!rec || !v)
		goto out;
	rec->files = calloc(pm->n ? pm->n : 1, sizeof(*rec->files));
	if (!rec->files)
		goto out;
	rec->start = start;
	rec->gen = gen;
	v->start = start;
	v->gen = gen;
	pthread_mutex_lock(&u->lock);
	at = attaching_add(u, pid);
	pthread_mutex_unlock(&u->lock);
	err = fill_table(u, pid, start, procdir, pm, yield, v, rec, &over);
	rec->py = v->py;
	pthread_mutex_lock(&u->lock);
	attaching_del(u, at);
	u->st.maps_over += over;
	if (!err)
		err = table_install(u, pid, gen, v, rec);
	if (!err)
		rec = NULL;
	rec_free(u, rec);
	rec = NULL;
	pthread_mutex_unlock(&u->lock);
out:
	if (rec) {
		free(rec->files);
		free(rec);
	}
	free(v);
	return err;
}

/*
 * unwinder__python() - the interpreter of incarnation (@pid, @start) as its
 * table says, into *@out. Returns 0, or -ENOENT when it has no table or
 * no interpreter in it.
 */
int unwinder__python(struct unwinder *u, uint32_t pid, uint64_t start, struct fr_pyproc *out)
{
	struct uproc_rec **r;
	int err = -ENOENT;

	pthread_mutex_lock(&u->lock);
	r = fr_hashmap__find(&u->procs, &pid);
	if (r && (*r)->start == start && (*r)->py.runtime) {
		*out = (*r)->py;
		err = 0;
	}
	pthread_mutex_unlock(&u->lock);
	return err;
}

/*
 * Under the lock: is @rec's table still the one the BPF side uses for
 * @pid? Not when the BPF side has put one of its own in its place.
 */
static bool rec_live(struct unwinder *u, uint32_t pid, const struct uproc_rec *rec)
{
	struct fr_uproc *v = u->scratch;

	return !bpf_map_lookup_elem(u->procs_fd, &pid, v) && v->start == rec->start &&
	       v->gen == rec->gen && !(v->flags & FR_UPROC_KERNEL) &&
	       rec->gen == gen_locked(u, pid);
}

/*
 * Under the lock: is cold @f wanted back? A walk came to it since its rows
 * went (the BPF side stamped it), and its retry time has come.
 */
static bool cold_wanted(struct unwinder *u, const struct ufile *f)
{
	return f && f->cold && now_ns() >= f->retry_at &&
	       (int32_t)(file_used(u, f) - f->cold_at) >= 0;
}

/* Under the lock: does @rec name a cold file that is wanted back? */
static bool rec_wants(struct unwinder *u, const struct uproc_rec *rec)
{
	if (!u->ncold)
		return false;
	for (uint32_t i = 0; i < rec->nfiles; i++)
		if (cold_wanted(u, rec->files[i]))
			return true;
	return false;
}

/*
 * Under the lock: does the BPF side hold a table it built for (@pid,
 * @start) from the VMAs (uproc_build()), current and with rows for every
 * file? Then ours would be the same: the attacher and the /proc worker
 * need not read the maps and stat each file, which cost a short process
 * ~1 ms of daemon CPU. The BPF side builds it again at each mmap unlock
 * that changes the code. Its files hold no reference of ours, so they
 * are marked used now: idle files are evicted by the time of their last
 * use, and one used only by such tables would otherwise go after
 * FR_UNWIND_IDLE_NS however busy it is.
 */
static bool kernel_complete(struct unwinder *u, uint32_t pid, uint64_t start)
{
	struct fr_uproc *v = u->scratch;
	uint64_t now;

	if (bpf_map_lookup_elem(u->procs_fd, &pid, v) || v->start != start ||
	    v->flags != FR_UPROC_KERNEL || v->gen != gen_locked(u, pid))
		return false;
	/* A file evicted since the build is walked by frame pointers there. */
	for (uint32_t i = 0; i < v->n && i < FR_UMAPS_MAX; i++) {
		const struct fr_umap *um = &v->maps[i];
		const struct ufile *f = um->file < u->nfiles ? u->by_slot[um->file] : NULL;

		if (um->file != FR_UFILE_NONE && (!f || f->gen != um->file_gen || cold_wanted(u, f)))
			return false;
	}
	now = now_ns();
	for (uint32_t i = 0; i < v->n && i < FR_UMAPS_MAX; i++) {
		struct ufile *f = v->maps[i].file < u->nfiles ? u->by_slot[v->maps[i].file] : NULL;

		if (f && !f->refs)
			f->idle_since = now;
	}
	u->st.kernel_tables++;
	return true;
}

bool unwinder__current(struct unwinder *u, uint32_t pid, uint64_t start)
{
	struct uproc_rec **r;
	bool cur = false;

	pthread_mutex_lock(&u->lock);
	r = fr_hashmap__find(&u->procs, &pid);
	if (r && (*r)->start == start)
		cur = rec_live(u, pid, *r) && !rec_wants(u, *r);
	if (!cur)
		cur = kernel_complete(u, pid, start);
	pthread_mutex_unlock(&u->lock);
	return cur;
}

/* uwalk's view of a process table (u->scratch) and the row pool. */
struct finish_src {
	struct unwinder *u;
	const struct fr_uproc *p;
};

static int finish_find(void *ctx, uint64_t pc, struct uwalk_code *code)
{
	const struct finish_src *fs = ctx;
	const struct fr_uproc *p = fs->p;
	uint32_t lo = 0, hi = FR_MIN(p->n, (uint32_t)FR_UMAPS_MAX);

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct fr_umap *m = &p->maps[mid];
		const struct ufile *f;

		if (pc < m->begin) {
			hi = mid;
		} else if (pc >= m->end) {
			lo = mid + 1;
		} else {
			f = m->file < fs->u->nfiles ? fs->u->by_slot[m->file] : NULL;
			if (f && f->gen == m->file_gen && f->nrows &&
			    f->row_start + (uint64_t)f->nrows <= fs->u->nrows) {
				code->rows = fs->u->pool + f->row_start;
				code->nrows = f->nrows;
				code->bias = m->bias;
			}
			return 0;
		}
	}
	return -ENOENT;
}

void unwinder__exit_maps(struct unwinder *u, const struct fr_rec_maps *r)
{
	struct afterlife *a;

	if (!(r->flags & FR_XMAPS_MISSING))
		return;
	if (!u->after)
		u->after = calloc(FR_UNWIND_AFTER, sizeof(*u->after));
	if (!u->after)
		return;
	a = &u->after[u->after_next++ % FR_UNWIND_AFTER];
	*a = (struct afterlife){ .pid = r->h.tgid, .start = r->h.start, .gen = r->gen };
	for (uint32_t i = 0; i < r->n && i < FR_XMAPS_MAX; i++) {
		const struct fr_xmap *x = &r->m[i];

		/* Sorted and apart, as the VMAs are: finish_find() searches them. */
		if (x->begin >= x->end || (a->n && x->begin < a->m[a->n - 1].end))
			continue;
		a->m[a->n++] = (struct after_map){ x->begin, x->end, x->pgoff,
						   { { FR_UKEY_FILE, x->dev, x->ino, x->ctime } } };
	}
	atomic_fetch_add_explicit(&u->exits_kept, 1, memory_order_relaxed);
}

/* Under the lock: the mappings kept of exited incarnation (@pid, @start), or NULL. */
static const struct afterlife *after_find(const struct unwinder *u, uint32_t pid, uint64_t start)
{
	for (unsigned i = 0; u->after && i < FR_UNWIND_AFTER; i++)
		if (u->after[i].pid == pid && u->after[i].start == start && u->after[i].n)
			return &u->after[i];
	return NULL;
}

/*
 * Under the lock: u->scratch made the table exited incarnation @a would
 * have now, each file found by its identity. *@wait says whether the file
 * at @pc is one a thread is building: the copy may wait for it.
 */
static void after_table(struct unwinder *u, const struct afterlife *a, uint64_t pc, bool *wait)
{
	struct fr_uproc *v = u->scratch;

	*v = (struct fr_uproc){ .start = a->start, .gen = a->gen };
	*wait = false;
	for (uint32_t i = 0; i < a->n && v->n < FR_UMAPS_MAX; i++) {
		const struct after_map *am = &a->m[i];
		struct fr_umap *um = &v->maps[v->n++];
		struct ufile *f = file_find(u, &am->key);
		uint64_t bias;

		*um = (struct fr_umap){ .begin = am->begin, .end = am->end, .file = FR_UFILE_NONE };
		if (pc >= am->begin && pc < am->end)
			*wait = building(u, &am->key);
		if (!f || f->slot == FR_UFILE_NONE || !f->nrows ||
		    fr_load_bias(f->load, f->nload, am->begin, am->pgoff, &bias))
			continue;
		um->bias = bias;
		um->file = f->slot;
		um->file_gen = f->gen;
	}
}

/*
 * Under the lock: u->scratch made the table (@pid, @start) had at the copy
 * @c: the one it has now, or, once it has exited, one of the mappings its
 * exit sent (*@after). Returns 0, 1 when it cannot be made yet, or, once
 * it has exited, -EINPROGRESS while a thread builds the file the copy
 * stopped in, or -ESRCH or -ESTALE when it never can (unwinder__finish()).
 */
static int finish_table(struct unwinder *u, uint32_t pid, uint64_t start,
			const struct fr_ucopy *c, bool *after)
{
	const struct afterlife *a;
	bool wait;

	*after = false;
	if (!bpf_map_lookup_elem(u->procs_fd, &pid, u->scratch) && u->scratch->start == start) {
		if (u->scratch->gen == c->gen)
			return 0;
		/* Its maps changed since (exec, dlopen): never this copy's. */
		return u->scratch->gen > c->gen ? -ESTALE : 1;
	}
	a = after_find(u, pid, start);
	if (!a)	/* No table: none yet, or none ever again (the process ended). */
		return fr_procstat__gone(pid, start) ? -ESRCH : 1;
	if (a->gen != c->gen)
		return -ESTALE;
	after_table(u, a, c->pc, &wait);
	*after = true;
	return wait ? -EINPROGRESS : 0;
}

int unwinder__finish(struct unwinder *u, uint32_t pid, uint64_t start,
		     const struct fr_ucopy *c, const void *stack, uint64_t *ips,
		     unsigned max, uint32_t *end)
{
	struct uwalk_regs r = { .pc = c->pc, .sp = c->sp, .bp = c->bp, .exact = c->exact };
	struct finish_src fs = { .u = u, .p = u->scratch };
	struct uwalk_src src = { .find = finish_find, .ctx = &fs, .base = c->sp,
				 .stack = stack, .len = c->len };
	struct uwalk_code code = { 0 };
	struct uwalk_result res = { 0 };
	bool after;
	int err;

	if (pthread_mutex_trylock(&u->lock))
		return 0;
	err = finish_table(u, pid, start, c, &after);
	if (!err && (finish_find(&fs, c->pc, &code) || !code.rows))
		err = after ? -ESRCH : 1;	/* an exited process's file no thread builds: never */
	if (!err)
		uwalk__run(&src, &r, ips, max, &res);
	/* Not yet, and its attach is under way: it builds what the copy waits for. */
	else if (err == 1)
		err = attaching(u, pid) ? -EINPROGRESS : 0;
	u->st.finished_after_exit += after && res.n;
	pthread_mutex_unlock(&u->lock);
	if (err || !res.n)
		return err;
	*end = res.end;
	return (int)res.n;
}

unsigned unwinder__gc(struct unwinder *u)
{
	unsigned dropped = 0;
	size_t i = 0;

	pthread_mutex_lock(&u->lock);
	while (i < u->procs.cap) {
		struct uproc_rec **r;
		const void *k;
		uint32_t pid;

		if (!fr_hashmap__at(&u->procs, i, &k, (void **)&r)) {
			i++;
			continue;
		}
		pid = *(const uint32_t *)k;
		if (rec_live(u, pid, *r)) {
			i++;
			continue;
		}
		/* Our outdated table goes; one newer than it stays: another
		 * incarnation's, or one the BPF side built since (a code
		 * change made ours stale, then its mmap unlock built one). */
		if (!bpf_map_lookup_elem(u->procs_fd, &pid, u->scratch) &&
		    u->scratch->start == (*r)->start && u->scratch->gen == (*r)->gen &&
		    !(u->scratch->flags & FR_UPROC_KERNEL))
			bpf_map_delete_elem(u->procs_fd, &pid);
		rec_free(u, *r);
		fr_hashmap__remove(&u->procs, &pid);
		u->st.procs--;
		u->st.stale++;
		dropped++;
		/* The remove shifted entries back into slot i: look at it again. */
	}
	if (u->nidle)
		evict_idle(u, FR_UNWIND_IDLE_NS, 0);
	pthread_mutex_unlock(&u->lock);
	return dropped;
}

unsigned unwinder__wanted(struct unwinder *u, struct unwind_want *out, unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&u->lock);
	for (size_t i = 0; u->ncold && i < u->procs.cap && n < max; i++) {
		struct uproc_rec **r;
		const void *k;

		if (fr_hashmap__at(&u->procs, i, &k, (void **)&r) && rec_wants(u, *r))
			out[n++] = (struct unwind_want){ *(const uint32_t *)k, (*r)->start };
	}
	pthread_mutex_unlock(&u->lock);
	return n;
}

void unwinder__stats(struct unwinder *u, struct unwinder_stats *st)
{
	pthread_mutex_lock(&u->lock);
	*st = u->st;
	st->idle = u->nidle;
	st->cold_now = u->ncold;
	pthread_mutex_unlock(&u->lock);
	st->exits_kept = atomic_load_explicit(&u->exits_kept, memory_order_relaxed);
	st->bytes = st->rows_cap * sizeof(struct fr_urow) + st->files_cap * sizeof(struct fr_ufile) +
		    st->procs * 4096;
}
