// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * intern.c - refcounted intern table over a fixed block pool. See intern.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "idpool.h"
#include "intern.h"
#include "util.h"

#define FR_NIL		UINT32_MAX
#define FR_MAX_ITEMS	(UINT32_MAX - 1)

struct intern_entry {
	uint64_t hash;
	uint32_t len;
	uint32_t tag;
	uint32_t first;		/* first block, FR_NIL when len == 0 */
	uint32_t chain;		/* next in bucket */
	uint32_t refs;
	uint32_t queued : 1;	/* on the deferred-free list */
	uint32_t serial : 31;	/* which insert made it (intern__identity()) */
};

struct intern {
	size_t bsize;
	size_t nblocks;
	size_t nentries;
	uint8_t *blocks;
	uint32_t *bnext;
	struct intern_entry *ent;	/* [0] unused: id 0 is "none" */
	/*
	 * Chained buckets of our own rather than common/hashmap.h: the table
	 * is carved out of the window's fixed, locked memory budget at start
	 * (no growth, no allocation on the hot path), and entries are
	 * refcounted and recycled one by one as events leave the window.
	 */
	uint32_t *buckets;
	uint32_t mask;
	/*
	 * Lowest-first allocation (idpool.h), so that the blocks and entries
	 * in use stay packed and the pages touched follow them.
	 */
	struct idpool ents;		/* ids 0..nentries; 0 is taken */
	struct idpool blks;
	struct idpool_trim trim;
	uint32_t *deferred;
	size_t ndeferred;
	uint32_t serial;	/* inserts so far, modulo 2^31 */
	void (*released)(void *ctx, uint32_t id, uint32_t serial);
	void *released_ctx;
	int hold;
	size_t map_len;
	void *map;
	struct intern_stats st;
};

static size_t bucket_count(size_t nentries)
{
	size_t n = 16;

	while (n < nentries)
		n <<= 1;
	return n;
}

/*
 * Layout of the single mapping behind a table, in bytes per part: blocks,
 * block links, entries (the three that trim() gives pages of back),
 * buckets, the deferred list, and the two pools' bits.
 */
static size_t layout(size_t bsize, size_t nblocks, size_t nentries, size_t part[7])
{
	size_t sum = 0;

	part[0] = FR_ALIGN(nblocks * bsize, 64);
	part[1] = FR_ALIGN(nblocks * sizeof(uint32_t), 64);
	part[2] = FR_ALIGN((nentries + 1) * sizeof(struct intern_entry), 64);
	part[3] = FR_ALIGN(bucket_count(nentries) * sizeof(uint32_t), 64);
	part[4] = FR_ALIGN((nentries + 1) * sizeof(uint32_t), 64);
	part[5] = idpool__bytes(nentries + 1);
	part[6] = idpool__bytes(nblocks);
	for (int i = 0; i < 7; i++)
		sum += part[i];
	return sum;
}

/* intern__budget() - bytes a table of this shape reserves. */
size_t intern__budget(size_t block_size, size_t nblocks, size_t nentries)
{
	size_t part[7];

	return layout(block_size, nblocks, nentries, part) + sizeof(struct intern);
}

/*
 * intern__new() - reserve a table of @nblocks blocks of @block_size bytes
 * and up to @nentries distinct entries, in one mapping made now.
 * Returns NULL and sets errno (EINVAL for an impossible shape).
 */
struct intern *intern__new(size_t block_size, size_t nblocks, size_t nentries)
{
	struct intern *t;
	size_t part[7];
	uint8_t *p;

	if (!block_size || block_size % 8 || !nblocks || !nentries ||
	    nblocks > FR_MAX_ITEMS || nentries > FR_MAX_ITEMS / 2) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->map_len = layout(block_size, nblocks, nentries, part);
	t->map = mmap(NULL, t->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t->map == MAP_FAILED) {
		free(t);
		return NULL;
	}
	p = t->map;
	t->blocks = p;
	t->bnext = (uint32_t *)(p += part[0]);
	t->ent = (struct intern_entry *)(p += part[1]);
	t->buckets = (uint32_t *)(p += part[2]);
	t->deferred = (uint32_t *)(p += part[3]);
	idpool__init(&t->ents, p += part[4], nentries + 1);
	idpool__init(&t->blks, p += part[5], nblocks);
	idpool__alloc(&t->ents);	/* id 0: "none" */
	t->bsize = block_size;
	t->nblocks = nblocks;
	t->nentries = nentries;
	t->mask = bucket_count(nentries) - 1;
	memset(t->buckets, 0xff, (t->mask + 1) * sizeof(uint32_t));
	t->st.blocks_total = nblocks;
	t->st.entries_total = nentries;
	t->st.bytes_total = t->map_len + sizeof(*t);
	return t;
}

void intern__free(struct intern *t)
{
	if (!t)
		return;
	munmap(t->map, t->map_len);
	free(t);
}

static inline uint8_t *block(const struct intern *t, uint32_t b)
{
	return t->blocks + (size_t)b * t->bsize;
}

static size_t blocks_for(const struct intern *t, size_t len)
{
	return (len + t->bsize - 1) / t->bsize;
}

/* Compare entry @id's bytes with @data (same length already checked). */
static bool entry_equals(const struct intern *t, uint32_t id, const uint8_t *data)
{
	const struct intern_entry *e = &t->ent[id];
	size_t left = e->len;
	uint32_t b = e->first;

	while (left) {
		size_t n = FR_MIN(left, t->bsize);

		if (memcmp(block(t, b), data, n))
			return false;
		data += n;
		left -= n;
		b = t->bnext[b];
	}
	return true;
}

static uint32_t lookup(const struct intern *t, uint64_t hash, uint32_t tag,
		       const void *data, size_t len)
{
	uint32_t id = t->buckets[hash & t->mask];

	for (; id != FR_NIL; id = t->ent[id].chain) {
		const struct intern_entry *e = &t->ent[id];

		if (e->hash == hash && e->len == len && e->tag == tag &&
		    entry_equals(t, id, data))
			return id;
	}
	return FR_NIL;
}

/* Store a new entry; the caller checked that space exists. */
static uint32_t insert(struct intern *t, uint64_t hash, uint32_t tag,
		       const uint8_t *data, size_t len)
{
	uint32_t id = idpool__alloc(&t->ents), prev = FR_NIL;
	struct intern_entry *e = &t->ent[id];
	size_t left = len;

	e->hash = hash;
	e->len = (uint32_t)len;
	e->tag = tag;
	e->refs = 1;
	e->queued = 0;
	e->serial = ++t->serial & 0x7fffffff;
	e->first = FR_NIL;
	while (left) {
		uint32_t b = idpool__alloc(&t->blks);
		size_t n = FR_MIN(left, t->bsize);

		memcpy(block(t, b), data, n);
		t->bnext[b] = FR_NIL;
		if (prev == FR_NIL)
			e->first = b;
		else
			t->bnext[prev] = b;
		prev = b;
		data += n;
		left -= n;
	}
	t->st.blocks_used += blocks_for(t, len);
	e->chain = t->buckets[hash & t->mask];
	t->buckets[hash & t->mask] = id;
	t->st.live++;
	return id;
}

static bool has_space(const struct intern *t, size_t len)
{
	return t->ents.nused < t->ents.n &&
	       t->st.blocks_used + blocks_for(t, len) <= t->nblocks;
}

/*
 * intern__get() - find or store (@tag, @data, @len) and take a reference.
 * Stores the id in *@id. Returns 0, -ENOSPC when the table is full (evict
 * and retry), or -E2BIG when @len can never fit.
 */
int intern__get(struct intern *t, uint32_t tag, const void *data, size_t len,
		uint32_t *id)
{
	uint64_t hash = fr_hash64(data, len, tag);
	uint32_t found;

	if (blocks_for(t, len) > t->nblocks || len > UINT32_MAX)
		return -E2BIG;
	found = lookup(t, hash, tag, data, len);
	if (found != FR_NIL) {
		if (!t->ent[found].refs++)
			t->st.live++;
		t->st.hits++;
		*id = found;
		return 0;
	}
	if (!has_space(t, len)) {
		t->st.full++;
		return -ENOSPC;
	}
	*id = insert(t, hash, tag, data, len);
	t->st.inserts++;
	return 0;
}

/*
 * intern__set_released() - call @fn(@ctx, id, serial) as each entry is
 * freed (on the thread that drops its last reference, or releases the hold
 * it waited for); NULL: none.
 */
void intern__set_released(struct intern *t, void (*fn)(void *ctx, uint32_t id, uint32_t serial),
			  void *ctx)
{
	t->released = fn;
	t->released_ctx = ctx;
}

void intern__ref(struct intern *t, uint32_t id)
{
	if (id && id <= t->nentries && !t->ent[id].refs++)
		t->st.live++;
}

/* Unlink @id from its bucket and return its entry and blocks. */
static void release_entry(struct intern *t, uint32_t id)
{
	struct intern_entry *e = &t->ent[id];
	uint32_t *pp = &t->buckets[e->hash & t->mask];
	uint32_t b = e->first;

	while (*pp != id)
		pp = &t->ent[*pp].chain;
	*pp = e->chain;
	while (b != FR_NIL) {
		uint32_t next = t->bnext[b];

		idpool__free(&t->blks, b);
		b = next;
	}
	t->st.blocks_used -= blocks_for(t, e->len);
	if (t->released)
		t->released(t->released_ctx, id, e->serial);
	idpool__free(&t->ents, id);
}

/*
 * intern__unref() - drop a reference. The last one frees the entry, or
 * queues it while the table is held by a reader.
 */
void intern__unref(struct intern *t, uint32_t id)
{
	struct intern_entry *e;

	if (!id || id > t->nentries)
		return;
	e = &t->ent[id];
	if (!e->refs || --e->refs)
		return;
	t->st.live--;
	if (!t->hold) {
		release_entry(t, id);
	} else if (!e->queued) {
		e->queued = 1;
		t->deferred[t->ndeferred++] = id;
	}
}

/* intern__hold() - a reader starts: defer frees. Nests. */
void intern__hold(struct intern *t)
{
	t->hold++;
}

/* intern__release() - a reader is done; free what was deferred. */
void intern__release(struct intern *t)
{
	if (!t->hold || --t->hold)
		return;
	for (size_t i = 0; i < t->ndeferred; i++) {
		uint32_t id = t->deferred[i];

		t->ent[id].queued = 0;
		if (!t->ent[id].refs)
			release_entry(t, id);
	}
	t->ndeferred = 0;
}

void intern__stats(const struct intern *t, struct intern_stats *st)
{
	*st = t->st;
}

/* The bytes the live entries need: their blocks, links and entries. */
static uint64_t need_bytes(const struct intern *t)
{
	return t->st.blocks_used * (t->bsize + sizeof(uint32_t)) +
	       t->st.live * sizeof(struct intern_entry);
}

/*
 * intern__footprint() - the table's resident bytes (mincore()) and the
 * bytes its live entries need.
 */
void intern__footprint(const struct intern *t, uint64_t *resident, uint64_t *live)
{
	*resident = fr_resident_bytes(t->map, t->map_len);
	*live = need_bytes(t);
}

/*
 * intern__trim() - the writer, about once a second of @now (ns): when the
 * blocks, links and entries touched have stayed well above what the live
 * entries need (idpool__trim_due()), give back the resident pages that
 * hold only free ones, a bounded step per call (idpool__trim_step()).
 * Readers may be copying: they copy live entries only.
 */
void intern__trim(struct intern *t, uint64_t now)
{
	uint64_t touched = (uint64_t)t->blks.hi * (t->bsize + sizeof(uint32_t)) +
			   (uint64_t)t->ents.hi * sizeof(struct intern_entry);
	const struct idpool_part parts[] = {
		{ &t->blks, t->blocks, t->bsize },
		{ &t->blks, t->bnext, sizeof(uint32_t) },
		{ &t->ents, t->ent, sizeof(struct intern_entry) },
	};
	long pages;

	if (!t->trim.part && !idpool__trim_due(&t->trim, now, touched, need_bytes(t)))
		return;
	pages = idpool__trim_step(&t->trim, parts, FR_ARRAY_SIZE(parts));
	if (pages == -EINPROGRESS)
		return;
	idpool__trimmed(&t->ents, NULL, 0);
	idpool__trimmed(&t->blks, &t->trim, pages);
	t->st.shrinks = t->trim.shrinks;
	t->st.pages_released = t->trim.pages_released;
	t->st.release_failed = t->trim.release_failed;
}

/* intern__inserted() - how many entries were ever stored (not found). */
uint64_t intern__inserted(const struct intern *t)
{
	return t->st.inserts;
}

size_t intern__len(const struct intern *t, uint32_t id)
{
	return id && id <= t->nentries ? t->ent[id].len : 0;
}

/*
 * intern__identity() - which stored entry @id is: its hash and the serial
 * of the insert that made it. An id freed and stored again is another
 * entry: one of the two differs (the serial wraps after 2^31 inserts).
 * A reader of a held table may call it.
 */
void intern__identity(const struct intern *t, uint32_t id, uint64_t *hash, uint32_t *serial)
{
	bool ok = id && id <= t->nentries;

	*hash = ok ? t->ent[id].hash : 0;
	*serial = ok ? t->ent[id].serial : 0;
}

uint32_t intern__tag(const struct intern *t, uint32_t id)
{
	return id && id <= t->nentries ? t->ent[id].tag : 0;
}

/*
 * intern__copy() - copy up to @cap bytes of entry @id into @buf.
 * Returns the entry's full length (0 for id 0).
 */
size_t intern__copy(const struct intern *t, uint32_t id, void *buf, size_t cap)
{
	const struct intern_entry *e;
	uint8_t *out = buf;
	size_t left;
	uint32_t b;

	if (!id || id > t->nentries)
		return 0;
	e = &t->ent[id];
	left = FR_MIN((size_t)e->len, cap);
	for (b = e->first; left; b = t->bnext[b]) {
		size_t n = FR_MIN(left, t->bsize);

		memcpy(out, block(t, b), n);
		out += n;
		left -= n;
	}
	return e->len;
}
