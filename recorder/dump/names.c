// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * names.c - the names kept between dumps. See names.h.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "names.h"
#include "util.h"

/* A string of the store, by its bytes: a key of str_of. */
struct nstr_key {
	const char *s;		/* the store's copy once stored */
	uint64_t len;
};

/* A binary, by path (a store string) and build-id: a key of bin_of. No padding. */
struct nbin_key {
	uint32_t path;
	uint8_t len;
	uint8_t id[20];
	uint8_t pad[3];
};

/* A space of the store: incarnation, era and image read, a key of space_of. No padding. */
struct nspace_key {
	uint64_t start;
	uint64_t era;
	uint64_t image;
	uint64_t pid;
};

/* An offset in a file of the store: a key of fileoff_of. No padding. */
struct nfileoff_key {
	uint64_t off;
	uint64_t file;
};

struct names {
	uint64_t budget;
	uint64_t resets;
	uint64_t compactions;
	uint64_t kept;			/* bytes after the last compaction */
	/* From here on, emptied by a reset. */
	uint64_t str_bytes;		/* the strings' own bytes */
	char **str;			/* [0] is "" */
	uint32_t nstr, str_cap;
	struct fr_dump_bin *bin;
	uint32_t nbin, bin_cap;
	/*
	 * Frames: sym, system_name are store strings, bin a store bin + 1;
	 * one more than nframe is kept for the candidate frame_of looks up.
	 */
	struct fr_dump_frame *frame;
	uint8_t *why;			/* enum names_why, per frame */
	uint8_t *lkind;			/* 0: no lines; 1 + whether at the interrupted address */
	uint8_t *lines;			/* enum names_lines, per frame */
	uint32_t nframe, frame_cap, why_cap, lkind_cap, lines_cap;
	struct fr_dump_line *line;	/* levels: func, file are store strings */
	uint32_t nline, line_cap;
	uint32_t *ffo;			/* per frame: its names_fileoff + 1, 0: none */
	uint32_t ffo_cap;
	struct names_fileoff *fo;	/* what files say of their offsets */
	uint32_t nfo, fo_cap;
	uint32_t nfile;
	uint32_t *sframe;		/* the stacks' frame lists */
	uint32_t nsframe, sframe_cap;
	struct names_stack *stack;	/* by window stack id */
	uint32_t stack_cap, nstack;
	uint32_t nspace;
	struct fr_hashmap str_of;	/* bytes -> string */
	struct fr_hashmap bin_of;	/* struct nbin_key -> bin */
	struct fr_hashmap frame_of;	/* frame (index, compared field by field) -> frame */
	struct fr_hashmap addr_of;	/* struct names_addr -> frame */
	struct fr_hashmap space_of;	/* struct nspace_key -> space */
	struct fr_hashmap file_of;	/* struct symcache_key -> file */
	struct fr_hashmap fileoff_of;	/* struct nfileoff_key -> fo[] */
};

static uint64_t str_hash(const void *k, size_t size, void *ctx)
{
	const struct nstr_key *x = k;

	(void)size;
	(void)ctx;
	return fr_hash64(x->s, x->len, 0x6e616d);
}

static bool str_equal(const void *a, const void *b, size_t size, void *ctx)
{
	const struct nstr_key *x = a, *y = b;

	(void)size;
	(void)ctx;
	return x->len == y->len && !memcmp(x->s, y->s, x->len);
}

/* Frame @i's identity: every field, its kind of lines and why it has its name. */
static uint64_t frame_hash(const void *k, size_t size, void *ctx)
{
	const struct names *nm = ctx;
	uint32_t i = *(const uint32_t *)k;
	const struct fr_dump_frame *f = &nm->frame[i];
	uint64_t key[6] = { f->kind | (uint64_t)nm->lkind[i] << 8 | (uint64_t)nm->why[i] << 16,
			    f->addr, f->bin, f->file_off, f->sym | (uint64_t)f->system_name << 32,
			    f->sym_off };

	(void)size;
	return fr_hash64(key, sizeof(key), 0x66726d);
}

static bool frame_equal(const void *a, const void *b, size_t size, void *ctx)
{
	const struct names *nm = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct fr_dump_frame *x = &nm->frame[i], *y = &nm->frame[j];

	(void)size;
	return x->kind == y->kind && nm->lkind[i] == nm->lkind[j] && nm->why[i] == nm->why[j] &&
	       x->addr == y->addr && x->bin == y->bin && x->file_off == y->file_off &&
	       x->sym == y->sym && x->system_name == y->system_name && x->sym_off == y->sym_off;
}

/* Empty maps and arrays, with string 0 = "" and space 0 (none) stored. 0 or -ENOMEM. */
static int init(struct names *nm)
{
	uint32_t empty;

	fr_hashmap__init(&nm->str_of, sizeof(struct nstr_key), sizeof(uint32_t), str_hash,
			 str_equal, NULL);
	fr_hashmap__init(&nm->bin_of, sizeof(struct nbin_key), sizeof(uint32_t), NULL, NULL, NULL);
	fr_hashmap__init(&nm->frame_of, sizeof(uint32_t), sizeof(uint32_t), frame_hash,
			 frame_equal, nm);
	fr_hashmap__init(&nm->addr_of, sizeof(struct names_addr), sizeof(uint32_t), NULL, NULL,
			 NULL);
	fr_hashmap__init(&nm->space_of, sizeof(struct nspace_key), sizeof(uint32_t), NULL, NULL,
			 NULL);
	fr_hashmap__init(&nm->file_of, sizeof(struct symcache_key), sizeof(uint32_t), NULL, NULL,
			 NULL);
	fr_hashmap__init(&nm->fileoff_of, sizeof(struct nfileoff_key), sizeof(uint32_t), NULL, NULL,
			 NULL);
	nm->nspace = 1;
	nm->nfile = 1;
	return names__str(nm, "", &empty);
}

/* Free everything the store holds; the struct stays, empty and uninitialised. */
static void fini(struct names *nm)
{
	for (uint32_t i = 0; i < nm->nstr; i++)
		free(nm->str[i]);
	free(nm->str);
	free(nm->bin);
	free(nm->frame);
	free(nm->why);
	free(nm->lkind);
	free(nm->lines);
	free(nm->line);
	free(nm->sframe);
	free(nm->stack);
	free(nm->ffo);
	free(nm->fo);
	fr_hashmap__fini(&nm->file_of);
	fr_hashmap__fini(&nm->fileoff_of);
	fr_hashmap__fini(&nm->str_of);
	fr_hashmap__fini(&nm->bin_of);
	fr_hashmap__fini(&nm->frame_of);
	fr_hashmap__fini(&nm->addr_of);
	fr_hashmap__fini(&nm->space_of);
	memset(&nm->str_bytes, 0, sizeof(*nm) - offsetof(struct names, str_bytes));
}

/* names__new() - an empty store of at most @budget bytes. Returns NULL and sets errno. */
struct names *names__new(uint64_t budget)
{
	struct names *nm = calloc(1, sizeof(*nm));

	if (!nm)
		return NULL;
	nm->budget = budget;
	if (init(nm)) {
		names__free(nm);
		errno = ENOMEM;
		return NULL;
	}
	return nm;
}

void names__free(struct names *nm)
{
	if (!nm)
		return;
	fini(nm);
	free(nm);
}

/*
 * names__reset() - empty the store (its budget reached): every stack is
 * named again when next used. Without memory for the empty string, the
 * store stays empty and every lookup fails with -ENOMEM until the next.
 */
void names__reset(struct names *nm)
{
	fini(nm);
	nm->resets++;
	init(nm);
}

static uint64_t map_bytes(const struct fr_hashmap *m)
{
	return (uint64_t)m->cap * m->slot_size;
}

/* The bytes the store holds: its arrays as allocated, its maps and strings. */
static uint64_t bytes(const struct names *nm)
{
	return nm->str_bytes + (uint64_t)nm->str_cap * sizeof(*nm->str) +
	       (uint64_t)nm->bin_cap * sizeof(*nm->bin) +
	       (uint64_t)nm->frame_cap * (sizeof(*nm->frame) + 3) +
	       (uint64_t)nm->line_cap * sizeof(*nm->line) +
	       (uint64_t)nm->sframe_cap * sizeof(*nm->sframe) +
	       (uint64_t)nm->stack_cap * sizeof(*nm->stack) +
	       (uint64_t)nm->ffo_cap * sizeof(*nm->ffo) + (uint64_t)nm->fo_cap * sizeof(*nm->fo) +
	       map_bytes(&nm->file_of) + map_bytes(&nm->fileoff_of) +
	       map_bytes(&nm->str_of) + map_bytes(&nm->bin_of) + map_bytes(&nm->frame_of) +
	       map_bytes(&nm->addr_of) + map_bytes(&nm->space_of);
}

void names__set_budget(struct names *nm, uint64_t budget)
{
	nm->budget = budget;
}

bool names__over_budget(const struct names *nm)
{
	return bytes(nm) > nm->budget;
}

void names__stats(const struct names *nm, struct names_stats *st)
{
	*st = (struct names_stats){
		.bytes = bytes(nm), .budget = nm->budget, .frames = nm->nframe,
		.strs = nm->nstr, .stacks = nm->nstack,
		.resets = nm->resets, .compactions = nm->compactions,
	};
}

/* names__str() - store string @s (NULL: string 0, ""), once; its index in *@idx. 0 or -ENOMEM. */
int names__str(struct names *nm, const char *s, uint32_t *idx)
{
	struct nstr_key key;
	const uint32_t *found;
	char *copy;
	int err;

	if (!s || (!*s && nm->nstr)) {
		*idx = 0;
		return 0;
	}
	key = (struct nstr_key){ .s = s, .len = strlen(s) };
	found = fr_hashmap__find(&nm->str_of, &key);
	if (found) {
		*idx = *found;
		return 0;
	}
	err = fr_grow32((void **)&nm->str, &nm->str_cap, nm->nstr + 1, sizeof(*nm->str));
	if (err)
		return err;
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	key.s = copy;
	*idx = nm->nstr;
	err = fr_hashmap__insert(&nm->str_of, &key, idx);
	if (err) {
		free(copy);
		return err;
	}
	nm->str[nm->nstr++] = copy;
	nm->str_bytes += key.len + 1;
	return 0;
}

const char *names__str_at(const struct names *nm, uint32_t idx)
{
	return idx < nm->nstr ? nm->str[idx] : "";
}

/* names__bin() - store binary (@path, @bid) once; its index in *@idx. 0 or -ENOMEM. */
int names__bin(struct names *nm, const char *path, const struct fr_buildid *bid, uint32_t *idx)
{
	struct nbin_key key = {};
	const uint32_t *found;
	int err = names__str(nm, path, &key.path);

	if (err)
		return err;
	if (bid && bid->len) {
		key.len = FR_MIN(bid->len, (uint8_t)sizeof(key.id));
		memcpy(key.id, bid->id, key.len);
	}
	found = fr_hashmap__find(&nm->bin_of, &key);
	if (found) {
		*idx = *found;
		return 0;
	}
	err = fr_grow32((void **)&nm->bin, &nm->bin_cap, nm->nbin + 1, sizeof(*nm->bin));
	if (err)
		return err;
	*idx = nm->nbin;
	err = fr_hashmap__insert(&nm->bin_of, &key, idx);
	if (err)
		return err;
	nm->bin[nm->nbin] = (struct fr_dump_bin){ .path = key.path, .build_id_len = key.len };
	memcpy(nm->bin[nm->nbin].build_id, key.id, key.len);
	nm->nbin++;
	return 0;
}

const struct fr_dump_bin *names__bin_at(const struct names *nm, uint32_t idx)
{
	return &nm->bin[idx];
}

/* Grow the per-frame arrays for @need frames. 0 or -ENOMEM. */
static int frames_grow(struct names *nm, uint32_t need)
{
	uint32_t c1 = nm->why_cap, c2 = nm->lkind_cap, c3 = nm->lines_cap;
	int err = fr_grow32((void **)&nm->frame, &nm->frame_cap, need, sizeof(*nm->frame));

	if (!err)
		err = fr_grow32((void **)&nm->why, &c1, need, 1);
	if (!err)
		err = fr_grow32((void **)&nm->lkind, &c2, need, 1);
	if (!err)
		err = fr_grow32((void **)&nm->lines, &c3, need, 1);
	if (!err && need > nm->ffo_cap) {
		uint32_t old = nm->ffo_cap;

		err = fr_grow32((void **)&nm->ffo, &nm->ffo_cap, need, sizeof(*nm->ffo));
		if (!err)
			memset(&nm->ffo[old], 0, (nm->ffo_cap - old) * sizeof(*nm->ffo));
	}
	nm->why_cap = c1;
	nm->lkind_cap = c2;
	nm->lines_cap = c3;
	return err;
}

/*
 * names__frame() - find or store a frame equal to @f (its strings and bin
 * the store's), @lines: 0 when it has no source lines to look up, else 1 +
 * whether looked up for an interrupted frame (addr, not addr - 1), since
 * a return address is looked up at addr - 1, which may be another line.
 * *@created tells a new one. Returns 0 or -ENOMEM.
 */
int names__frame(struct names *nm, const struct fr_dump_frame *f, uint32_t lines,
		 enum names_why why, uint32_t *idx, bool *created)
{
	uint32_t cand = nm->nframe;
	const uint32_t *found;
	int err;

	*created = false;
	/* The candidate goes in the spare slot, where frame_of's callbacks see it. */
	err = frames_grow(nm, cand + 1);
	if (err)
		return err;
	nm->frame[cand] = *f;
	nm->frame[cand].line = 0;
	nm->frame[cand].nlines = 0;
	nm->why[cand] = (uint8_t)why;
	nm->lkind[cand] = (uint8_t)lines;
	found = fr_hashmap__find(&nm->frame_of, &cand);
	if (found) {
		*idx = *found;
		return 0;
	}
	err = fr_hashmap__insert(&nm->frame_of, &cand, &cand);
	if (err)
		return err;
	nm->lines[cand] = lines ? FR_LINES_PENDING : FR_LINES_NONE;
	nm->ffo[cand] = 0;
	nm->nframe++;
	*idx = cand;
	*created = true;
	return 0;
}

const struct fr_dump_frame *names__frame_at(const struct names *nm, uint32_t idx)
{
	return &nm->frame[idx];
}

enum names_why names__frame_why(const struct names *nm, uint32_t idx)
{
	return (enum names_why)nm->why[idx];
}

enum names_lines names__frame_lines(const struct names *nm, uint32_t idx)
{
	return (enum names_lines)nm->lines[idx];
}

/*
 * names__set_lines() - frame @idx's source lines: the @n levels at @lv
 * (store strings); its file's offset gets them too, for the frames of
 * other processes at it. 0 or -ENOMEM.
 */
int names__set_lines(struct names *nm, uint32_t idx, const struct fr_dump_line *lv, uint32_t n)
{
	int err = fr_grow32((void **)&nm->line, &nm->line_cap, nm->nline + n, sizeof(*nm->line));

	if (err)
		return err;
	if (n)	/* the array may not exist yet */
		memcpy(&nm->line[nm->nline], lv, n * sizeof(*lv));
	nm->frame[idx].line = nm->nline;
	nm->frame[idx].nlines = n;
	nm->lines[idx] = FR_LINES_DONE;
	if (nm->ffo[idx]) {
		struct names_fileoff *fo = &nm->fo[nm->ffo[idx] - 1];

		fo->line = nm->nline;
		fo->nlines = n;
		fo->lines = FR_LINES_DONE;
	}
	nm->nline += n;
	return 0;
}

/*
 * names__frame_from() - frame @frame was named from file offset @fileoff:
 * it shares the offset's lines (now, or once looked up for any frame).
 */
void names__frame_from(struct names *nm, uint32_t frame, uint32_t fileoff)
{
	const struct names_fileoff *fo = &nm->fo[fileoff];

	nm->ffo[frame] = fileoff + 1;
	if (fo->lines == FR_LINES_DONE && nm->lines[frame] == FR_LINES_PENDING) {
		nm->frame[frame].line = fo->line;
		nm->frame[frame].nlines = fo->nlines;
		nm->lines[frame] = FR_LINES_DONE;
	}
}

/* names__sync_lines() - frame @frame takes its file offset's lines, if they were looked up since. */
void names__sync_lines(struct names *nm, uint32_t frame)
{
	if (nm->ffo[frame])
		names__frame_from(nm, frame, nm->ffo[frame] - 1);
}

/* names__file() - the store's id (never 0) of the file of identity @k. 0 or -ENOMEM. */
int names__file(struct names *nm, const struct symcache_key *k, uint32_t *id)
{
	const uint32_t *found = fr_hashmap__find(&nm->file_of, k);
	int err;

	if (found) {
		*id = *found;
		return 0;
	}
	*id = nm->nfile;
	err = fr_hashmap__insert(&nm->file_of, k, id);
	if (!err)
		nm->nfile++;
	return err;
}

/* names__fileoff() - what file @file says of offset @off, its index in *@idx; NULL: not kept. */
const struct names_fileoff *names__fileoff(const struct names *nm, uint32_t file, uint64_t off,
					   uint32_t *idx)
{
	struct nfileoff_key key = { .off = off, .file = file };
	const uint32_t *found = fr_hashmap__find(&nm->fileoff_of, &key);

	if (!found)
		return NULL;
	*idx = *found;
	return &nm->fo[*found];
}

/* names__add_fileoff() - keep @fo for offset @off of file @file, at *@idx. 0 or -ENOMEM. */
int names__add_fileoff(struct names *nm, uint32_t file, uint64_t off,
		       const struct names_fileoff *fo, uint32_t *idx)
{
	struct nfileoff_key key = { .off = off, .file = file };
	int err = fr_grow32((void **)&nm->fo, &nm->fo_cap, nm->nfo + 1, sizeof(*nm->fo));

	if (err)
		return err;
	*idx = nm->nfo;
	err = fr_hashmap__insert(&nm->fileoff_of, &key, idx);
	if (err)
		return err;
	nm->fo[nm->nfo++] = *fo;
	return 0;
}

const struct fr_dump_line *names__lines_at(const struct names *nm, uint32_t idx, uint32_t *n)
{
	*n = nm->frame[idx].nlines;
	return *n ? &nm->line[nm->frame[idx].line] : NULL;
}

bool names__addr_get(const struct names *nm, const struct names_addr *k, uint32_t *frame)
{
	const uint32_t *v = fr_hashmap__find(&nm->addr_of, k);

	if (v)
		*frame = *v;
	return v != NULL;
}

/* names__addr_put() - @k names frame @frame from now on: only a final name is kept. */
int names__addr_put(struct names *nm, const struct names_addr *k, uint32_t frame)
{
	return fr_hashmap__insert(&nm->addr_of, k, &frame);
}

/* names__forget_stack() - window stack @id (the entry of intern @serial) was freed. */
void names__forget_stack(struct names *nm, uint32_t id, uint32_t serial)
{
	if (id < nm->stack_cap && nm->stack[id].used && nm->stack[id].serial == serial) {
		nm->stack[id].used = 0;
		nm->nstack--;
	}
}

/* What compaction maps: old store index -> new + 1 (0: not yet). */
struct remap {
	struct names *to;
	uint32_t *str, *bin, *frame;
};

static int remap_str(const struct names *nm, struct remap *r, uint32_t i, uint32_t *out)
{
	int err;

	if (!i) {
		*out = 0;
		return 0;
	}
	if (r->str[i]) {
		*out = r->str[i] - 1;
		return 0;
	}
	err = names__str(r->to, nm->str[i], out);
	if (!err)
		r->str[i] = *out + 1;
	return err;
}

static int remap_bin(const struct names *nm, struct remap *r, uint32_t i, uint32_t *out)
{
	const struct fr_dump_bin *b = &nm->bin[i];
	struct fr_buildid bid = { .len = b->build_id_len };
	int err;

	if (r->bin[i]) {
		*out = r->bin[i] - 1;
		return 0;
	}
	memcpy(bid.id, b->build_id, b->build_id_len);
	err = names__bin(r->to, nm->str[b->path], &bid, out);
	if (!err)
		r->bin[i] = *out + 1;
	return err;
}

/* The new store's copy of frame @i, with its strings, binary and lines. 0 or -ENOMEM. */
static int remap_frame(const struct names *nm, struct remap *r, uint32_t i, uint32_t *out)
{
	struct fr_dump_frame f = nm->frame[i];
	struct fr_dump_line lv[64];
	uint32_t n = FR_MIN(f.nlines, (uint32_t)FR_ARRAY_SIZE(lv));
	bool created;
	int err;

	if (r->frame[i]) {
		*out = r->frame[i] - 1;
		return 0;
	}
	err = remap_str(nm, r, f.sym, &f.sym);
	if (!err)
		err = remap_str(nm, r, f.system_name, &f.system_name);
	if (!err && f.bin) {
		err = remap_bin(nm, r, f.bin - 1, &f.bin);
		f.bin++;
	}
	if (!err)
		err = names__frame(r->to, &f, nm->lkind[i], (enum names_why)nm->why[i], out, &created);
	if (err || nm->lines[i] != FR_LINES_DONE) {
		r->frame[i] = err ? 0 : *out + 1;
		return err;
	}
	for (uint32_t k = 0; k < n && !err; k++) {
		lv[k] = nm->line[nm->frame[i].line + k];
		err = remap_str(nm, r, lv[k].func, &lv[k].func);
		if (!err)
			err = remap_str(nm, r, lv[k].file, &lv[k].file);
	}
	if (!err)
		err = names__set_lines(r->to, *out, lv, n);
	if (!err)
		r->frame[i] = *out + 1;
	return err;
}

/* Move what @from holds into @nm (emptied first), keeping @nm's budget and counts. */
static void take(struct names *nm, struct names *from)
{
	fini(nm);
	memcpy(&nm->str_bytes, &from->str_bytes, sizeof(*nm) - offsetof(struct names, str_bytes));
	nm->frame_of.ctx = nm;	/* its callbacks read the frames through it */
	free(from);
}

/*
 * names__compact() - keep only the names of the stacks not forgotten:
 * their frames with the strings, binaries and lines these use, and the
 * spaces (stack names refer to them); the address and file caches start
 * empty. Returns 0, or -ENOMEM with the store as it was.
 */
int names__compact(struct names *nm)
{
	struct remap r = { .to = names__new(nm->budget) };
	uint32_t frames[2 * 256];
	int err = r.to ? 0 : -ENOMEM;

	r.str = calloc(nm->nstr + 1, sizeof(*r.str));
	r.bin = calloc(nm->nbin + 1, sizeof(*r.bin));
	r.frame = calloc(nm->nframe + 1, sizeof(*r.frame));
	if (!r.str || !r.bin || !r.frame)
		err = -ENOMEM;
	for (size_t i = 0; i < nm->space_of.cap && !err; i++) {
		const void *k;
		void *v;

		if (fr_hashmap__at(&nm->space_of, i, &k, &v))
			err = fr_hashmap__insert(&r.to->space_of, k, v);
	}
	if (!err)
		r.to->nspace = nm->nspace;
	for (uint32_t id = 0; id < nm->stack_cap && !err; id++) {
		const struct names_stack *st = &nm->stack[id];
		uint32_t n = st->kn + st->un;

		if (!st->used || n > FR_ARRAY_SIZE(frames))
			continue;	/* (the namer makes none so long) */
		for (uint32_t k = 0; k < n && !err; k++)
			err = remap_frame(nm, &r, nm->sframe[st->first + k], &frames[k]);
		if (!err)
			err = names__set_stack(r.to, id, st, frames);
	}
	free(r.str);
	free(r.bin);
	free(r.frame);
	if (err) {
		names__free(r.to);
		return err;
	}
	take(nm, r.to);
	nm->compactions++;
	return 0;
}

/*
 * names__trim() - between batches: once the store is twice what it held
 * after its last compaction (and past FR_NAMES_FLOOR), or past 3/4 of the
 * budget, compact it: what others make and forget never piles up; if
 * that fails or leaves more than half the budget, empty it. Whether it did
 * either.
 */
bool names__trim(struct names *nm)
{
	uint64_t b = bytes(nm);

	if (b <= nm->budget / 4 * 3 && (b <= FR_NAMES_FLOOR || b <= 2 * nm->kept))
		return false;
	if (names__compact(nm) || bytes(nm) > nm->budget / 2)
		names__reset(nm);
	nm->kept = bytes(nm);
	return true;
}

/*
 * names__space() - the store's space of incarnation (@pid, @start) in
 * era @era (proctable__meta_at()) as read in image @image (its serial, 0:
 * none: a dlclose and a dlopen in between make another), made on first
 * use; never 0.
 * Returns 0 or -ENOMEM.
 */
int names__space(struct names *nm, uint32_t pid, uint64_t start, uint64_t era, uint64_t image,
		 uint32_t *id)
{
	struct nspace_key key = { .start = start, .era = era, .image = image, .pid = pid };
	const uint32_t *found = fr_hashmap__find(&nm->space_of, &key);
	int err;

	if (found) {
		*id = *found;
		return 0;
	}
	*id = nm->nspace;
	err = fr_hashmap__insert(&nm->space_of, &key, id);
	if (!err)
		nm->nspace++;
	return err;
}

/* names__stack() - the names last stored for window stack @id, or NULL. */
const struct names_stack *names__stack(const struct names *nm, uint32_t id)
{
	return id < nm->stack_cap && nm->stack[id].used ? &nm->stack[id] : NULL;
}

const uint32_t *names__stack_frames(const struct names *nm, const struct names_stack *s)
{
	return &nm->sframe[s->first];
}

/*
 * names__set_stack() - store @s as the names of window stack @id, with its
 * kn + un @frames (s->first is set here). A stack named again leaves its
 * old list behind until the next reset. Returns 0 or -ENOMEM.
 */
int names__set_stack(struct names *nm, uint32_t id, const struct names_stack *s,
		     const uint32_t *frames)
{
	uint32_t n = s->kn + s->un, old = nm->stack_cap;
	int err = fr_grow32((void **)&nm->sframe, &nm->sframe_cap, nm->nsframe + n,
			    sizeof(*nm->sframe));

	if (!err && id >= nm->stack_cap) {
		err = fr_grow32((void **)&nm->stack, &nm->stack_cap, id + 1, sizeof(*nm->stack));
		if (!err)
			memset(&nm->stack[old], 0, (nm->stack_cap - old) * sizeof(*nm->stack));
	}
	if (err)
		return err;
	if (n)	/* the array may not exist yet */
		memcpy(&nm->sframe[nm->nsframe], frames, n * sizeof(*frames));
	nm->nstack += !nm->stack[id].used;
	nm->stack[id] = *s;
	nm->stack[id].first = nm->nsframe;
	nm->stack[id].used = 1;
	nm->nsframe += n;
	return 0;
}
