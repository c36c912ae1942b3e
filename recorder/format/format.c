// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * format.c - encode and decode dumps. See format.h and docs/FORMAT.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lz4read.h"
#include "evtype.h"
#include "format.h"
#include "util.h"

#define FR_CHUNK_BYTES		(1u << 20)	/* a list section is cut here */
#define FR_MAX_STR		(1u << 20)	/* longest string a dump may hold */
#define FR_MAX_FRAMES		1024		/* per stack, both parts */

/* ---------------------------------------------------------------- CRC32C */

static uint32_t crc_table[8][256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78 : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
					  crc_table[0][crc_table[t - 1][i] & 0xff];
}

/* fr_crc32c() - CRC-32C (Castagnoli) of @buf, continuing from @crc (start 0). */
uint32_t fr_crc32c(uint32_t crc, const void *buf, size_t len)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	const uint8_t *p = buf;

	pthread_once(&once, crc_init);
	crc = ~crc;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		v ^= crc;
		crc = crc_table[7][v & 0xff] ^ crc_table[6][(v >> 8) & 0xff] ^
		      crc_table[5][(v >> 16) & 0xff] ^ crc_table[4][(v >> 24) & 0xff] ^
		      crc_table[3][(v >> 32) & 0xff] ^ crc_table[2][(v >> 40) & 0xff] ^
		      crc_table[1][(v >> 48) & 0xff] ^ crc_table[0][v >> 56];
		p += 8;
		len -= 8;
	}
#endif
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

/* ------------------------------------------------------------- kv lists */

static struct fr_kv *kv_new(struct fr_kvlist *l, const char *key, uint8_t type)
{
	struct fr_kv *kv;

	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 16;
		struct fr_kv *n = realloc(l->kv, cap * sizeof(*n));

		if (!n)
			return NULL;
		l->kv = n;
		l->cap = cap;
	}
	kv = &l->kv[l->n];
	memset(kv, 0, sizeof(*kv));
	kv->key = strdup(key);
	if (!kv->key)
		return NULL;
	kv->type = type;
	l->n++;
	return kv;
}

int kvlist__add_u64(struct fr_kvlist *l, const char *key, uint64_t v)
{
	struct fr_kv *kv = kv_new(l, key, FR_KV_UINT);

	if (!kv)
		return -ENOMEM;
	kv->u = v;
	return 0;
}

int kvlist__add_s64(struct fr_kvlist *l, const char *key, int64_t v)
{
	struct fr_kv *kv = kv_new(l, key, FR_KV_SINT);

	if (!kv)
		return -ENOMEM;
	kv->i = v;
	return 0;
}

int kvlist__add_str(struct fr_kvlist *l, const char *key, const char *s)
{
	struct fr_kv *kv = kv_new(l, key, FR_KV_STR);

	if (!kv)
		return -ENOMEM;
	kv->s = strdup(s ? s : "");
	return kv->s ? 0 : -ENOMEM;
}

int kvlist__add_array(struct fr_kvlist *l, const char *key, const uint64_t *v,
		      uint32_t n)
{
	struct fr_kv *kv = kv_new(l, key, FR_KV_UARRAY);

	if (!kv)
		return -ENOMEM;
	kv->arr = calloc(n ? n : 1, sizeof(*v));
	if (!kv->arr)
		return -ENOMEM;
	if (n)
		memcpy(kv->arr, v, n * sizeof(*v));
	kv->n = n;
	return 0;
}

const struct fr_kv *kvlist__find(const struct fr_kvlist *l, const char *key)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (!strcmp(l->kv[i].key, key))
			return &l->kv[i];
	return NULL;
}

void kvlist__free(struct fr_kvlist *l)
{
	for (uint32_t i = 0; i < l->n; i++) {
		free(l->kv[i].key);
		free(l->kv[i].s);
		free(l->kv[i].arr);
	}
	free(l->kv);
	memset(l, 0, sizeof(*l));
}

/* ---------------------------------------------------------------- model */

void dump__init(struct fr_dump *d)
{
	memset(d, 0, sizeof(*d));
}

void dump__free(struct fr_dump *d)
{
	if (!d)
		return;
	kvlist__free(&d->meta);
	kvlist__free(&d->loss);
	for (uint32_t i = 0; i < d->ntrig; i++) {
		free(d->trig[i].name);
		free(d->trig[i].type);
		free(d->trig[i].reason);
		free(d->trig[i].detail);
	}
	free(d->trig);
	for (uint32_t i = 0; i < d->nstr; i++)
		free(d->str[i]);
	free(d->str);
	free(d->str_len);
	free(d->proc);
	free(d->bin);
	free(d->frame);
	free(d->line);
	for (uint32_t i = 0; i < d->nstack; i++)
		free(d->stack[i].frames);
	free(d->stack);
	free(d->thread);
	free(d->ev);
	free(d->arena);
	memset(d, 0, sizeof(*d));
}

const char *dump__str(const struct fr_dump *d, uint32_t idx)
{
	return idx < d->nstr ? d->str[idx] : "";
}

const char *dump__meta_str(const struct fr_dump *d, const char *key)
{
	const struct fr_kv *kv = kvlist__find(&d->meta, key);

	return kv && kv->type == FR_KV_STR ? kv->s : "";
}

uint64_t dump__meta_u64(const struct fr_dump *d, const char *key)
{
	const struct fr_kv *kv = kvlist__find(&d->meta, key);

	return kv && kv->type == FR_KV_UINT ? kv->u : 0;
}

const char *dump__rss_member_name(unsigned m)
{
	static const char *const names[FR_DRSS_NMEMBERS] = {
		[FR_DRSS_FILE] = "file", [FR_DRSS_ANON] = "anon",
		[FR_DRSS_SWAP] = "swap", [FR_DRSS_SHMEM] = "shmem",
	};

	return m < FR_DRSS_NMEMBERS ? names[m] : "?";
}

const char *dump__rss_why_name(unsigned w)
{
	static const char *const names[FR_DRSS_NWHY] = {
		[FR_DRSS_STEP] = "step", [FR_DRSS_AGE] = "age",
		[FR_DRSS_FIRST] = "first", [FR_DRSS_EXIT] = "exit",
	};

	return w < FR_DRSS_NWHY ? names[w] : "?";
}

static const char *const stall_kind_names[FR_DSTALL_NKINDS] = {
	[FR_DSTALL_RECLAIM] = "reclaim", [FR_DSTALL_MEMCG] = "memcg",
	[FR_DSTALL_COMPACT] = "compaction", [FR_DSTALL_THROTTLE] = "throttle",
	[FR_DSTALL_BLOCKED] = "blocked", [FR_DSTALL_SLEEP] = "sleep",
};

const char *dump__stall_kind_name(unsigned k)
{
	return k < FR_DSTALL_NKINDS ? stall_kind_names[k] : "?";
}

int dump__stall_kind_by_name(const char *name)
{
	for (int k = 0; k < FR_DSTALL_NKINDS; k++)
		if (!strcmp(name, stall_kind_names[k]))
			return k;
	return -1;
}

const char *dump__memsys_field_name(unsigned f)
{
	static const char *const names[FR_MSYS_NFIELDS] = {
		[FR_MSYS_MEM_TOTAL] = "MemTotal", [FR_MSYS_MEM_AVAILABLE] = "MemAvailable",
		[FR_MSYS_MEM_FREE] = "MemFree", [FR_MSYS_SWAP_TOTAL] = "SwapTotal",
		[FR_MSYS_SWAP_FREE] = "SwapFree",
		[FR_MSYS_PGSCAN_KSWAPD] = "pgscan_kswapd", [FR_MSYS_PGSCAN_DIRECT] = "pgscan_direct",
		[FR_MSYS_PGSTEAL_KSWAPD] = "pgsteal_kswapd", [FR_MSYS_PGSTEAL_DIRECT] = "pgsteal_direct",
		[FR_MSYS_ALLOCSTALL] = "allocstall", [FR_MSYS_REFAULT_ANON] = "workingset_refault_anon",
		[FR_MSYS_REFAULT_FILE] = "workingset_refault_file", [FR_MSYS_PSWPIN] = "pswpin",
		[FR_MSYS_PSWPOUT] = "pswpout", [FR_MSYS_OOM_KILL] = "oom_kill",
	};

	return f < FR_MSYS_NFIELDS ? names[f] : "?";
}

const char *dump__uend_name(unsigned uend)
{
	static const char *const names[FR_DUEND_NR] = {
		[FR_DUEND_NONE] = "none", [FR_DUEND_OUTERMOST] = "outermost",
		[FR_DUEND_NO_INFO] = "no_info", [FR_DUEND_READ] = "read_error",
		[FR_DUEND_DEPTH] = "depth", [FR_DUEND_NO_TABLE] = "no_table",
		[FR_DUEND_BAD_PC] = "bad_pc", [FR_DUEND_INVALID] = "invalid",
	};

	return uend < FR_ARRAY_SIZE(names) && names[uend] ? names[uend] : "none";
}

/* --------------------------------------------------------------- writer */

struct buf {
	uint8_t *p;
	size_t len;
	size_t cap;
};

struct wr {
	fr_sink_fn sink;
	void *ctx;
	struct buf sec;		/* payload of the chunk being built */
	struct buf item;	/* the item being built */
	uint32_t tag;
	uint32_t count;
	uint32_t chunks;	/* sections emitted for the current tag */
	uint32_t nsections;
	int err;
};

static int buf_reserve(struct buf *b, size_t more)
{
	size_t cap;
	uint8_t *n;

	if (b->len + more <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more)
		cap *= 2;
	n = realloc(b->p, cap);
	if (!n)
		return -ENOMEM;
	b->p = n;
	b->cap = cap;
	return 0;
}

static void put_bytes(struct wr *w, struct buf *b, const void *p, size_t n)
{
	if (w->err)
		return;
	w->err = buf_reserve(b, n);
	if (w->err)
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_varint(struct wr *w, struct buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n] = v & 0x7f;
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	put_bytes(w, b, tmp, n);
}

static void put_svarint(struct wr *w, struct buf *b, int64_t v)
{
	put_varint(w, b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void put_str(struct wr *w, struct buf *b, const char *s)
{
	size_t n = s ? strnlen(s, FR_MAX_STR) : 0;

	put_varint(w, b, n);
	put_bytes(w, b, s, n);
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Emit the chunk built so far as one section: header, payload, CRC. */
static void flush_section(struct wr *w)
{
	uint8_t hdr[FR_SECTION_HDR_SIZE], tail[4];
	uint32_t crc;

	if (w->err)
		return;
	put_le(hdr, w->tag, 4);
	put_le(hdr + 4, w->count, 4);
	put_le(hdr + 8, w->sec.len, 8);
	crc = fr_crc32c(0, hdr, sizeof(hdr));
	crc = fr_crc32c(crc, w->sec.p, w->sec.len);
	put_le(tail, crc, 4);
	w->err = w->sink(w->ctx, hdr, sizeof(hdr));
	if (!w->err && w->sec.len)
		w->err = w->sink(w->ctx, w->sec.p, w->sec.len);
	if (!w->err)
		w->err = w->sink(w->ctx, tail, sizeof(tail));
	w->nsections++;
	w->chunks++;
	w->sec.len = 0;
	w->count = 0;
}

static void begin(struct wr *w, uint32_t tag)
{
	w->tag = tag;
	w->count = 0;
	w->chunks = 0;
	w->sec.len = 0;
}

/* Close a section: flush what is left; an empty list still gets one chunk. */
static void end(struct wr *w)
{
	if (w->count || !w->chunks)
		flush_section(w);
}

static struct buf *item_begin(struct wr *w)
{
	w->item.len = 0;
	return &w->item;
}

/* Close an item: length-prefix it into the chunk; cut the chunk if big. */
static void item_end(struct wr *w)
{
	put_varint(w, &w->sec, w->item.len);
	put_bytes(w, &w->sec, w->item.p, w->item.len);
	w->count++;
	if (w->sec.len >= FR_CHUNK_BYTES)
		flush_section(w);
}

static void write_kvlist(struct wr *w, uint32_t tag, const struct fr_kvlist *l)
{
	begin(w, tag);
	for (uint32_t i = 0; i < l->n; i++) {
		const struct fr_kv *kv = &l->kv[i];
		struct buf *b = item_begin(w);

		put_str(w, b, kv->key);
		put_bytes(w, b, &kv->type, 1);
		switch (kv->type) {
		case FR_KV_UINT:
			put_varint(w, b, kv->u);
			break;
		case FR_KV_SINT:
			put_svarint(w, b, kv->i);
			break;
		case FR_KV_STR:
			put_str(w, b, kv->s);
			break;
		case FR_KV_UARRAY:
			put_varint(w, b, kv->n);
			for (uint32_t k = 0; k < kv->n; k++)
				put_varint(w, b, kv->arr[k]);
			break;
		}
		item_end(w);
	}
	end(w);
}

static void write_triggers(struct wr *w, const struct fr_dump *d)
{
	begin(w, FR_SEC_TRIG);
	for (uint32_t i = 0; i < d->ntrig; i++) {
		const struct fr_dump_trigger *t = &d->trig[i];
		struct buf *b = item_begin(w);

		put_str(w, b, t->name);
		put_str(w, b, t->type);
		put_str(w, b, t->reason);
		put_str(w, b, t->detail);
		put_varint(w, b, t->ts);
		put_varint(w, b, t->victim);
		item_end(w);
	}
	end(w);
}

static void write_window(struct wr *w, const struct fr_dump *d)
{
	struct buf *b;

	begin(w, FR_SEC_WIND);
	b = item_begin(w);
	put_varint(w, b, d->win.start);
	put_varint(w, b, d->win.end);
	put_varint(w, b, d->win.watermark);
	put_varint(w, b, d->win.span);
	put_varint(w, b, d->win.first_event);
	item_end(w);
	end(w);
}

static void write_tables(struct wr *w, const struct fr_dump *d)
{
	begin(w, FR_SEC_STRS);
	for (uint32_t i = 0; i < d->nstr; i++) {
		struct buf *b = item_begin(w);

		put_bytes(w, b, d->str[i], d->str_len ? d->str_len[i] : strlen(d->str[i]));
		item_end(w);
	}
	end(w);

	begin(w, FR_SEC_PROC);
	for (uint32_t i = 0; i < d->nproc; i++) {
		const struct fr_dump_proc *p = &d->proc[i];
		struct buf *b = item_begin(w);

		put_varint(w, b, p->pid);
		put_varint(w, b, p->start);
		put_varint(w, b, p->ppid);
		put_varint(w, b, p->flags);
		put_varint(w, b, p->exit_ts);
		put_svarint(w, b, p->exit_code);
		put_varint(w, b, p->comm);
		put_varint(w, b, p->exe);
		put_varint(w, b, p->cmdline);
		put_varint(w, b, p->state);
		put_varint(w, b, p->rss);
		put_varint(w, b, p->stamp);
		put_varint(w, b, p->cgroup);
		put_varint(w, b, p->has_mem);	/* 1.4 */
		put_svarint(w, b, p->oom_score_adj);
		put_varint(w, b, p->rss_file);
		put_varint(w, b, p->rss_anon);
		put_varint(w, b, p->rss_shmem);
		put_varint(w, b, p->swap);
		put_varint(w, b, p->pgtables);
		put_varint(w, b, p->mem_stamp);
		put_varint(w, b, p->nspid);
		put_varint(w, b, p->memcg);
		put_varint(w, b, p->container);
		put_varint(w, b, p->cgroup_id);
		item_end(w);
	}
	end(w);

	begin(w, FR_SEC_THRD);
	for (uint32_t i = 0; i < d->nthread; i++) {
		struct buf *b = item_begin(w);

		put_varint(w, b, d->thread[i].proc);
		put_varint(w, b, d->thread[i].tid);
		put_varint(w, b, d->thread[i].name);
		item_end(w);
	}
	end(w);

	begin(w, FR_SEC_BINS);
	for (uint32_t i = 0; i < d->nbin; i++) {
		struct buf *b = item_begin(w);

		put_varint(w, b, d->bin[i].path);
		put_bytes(w, b, &d->bin[i].build_id_len, 1);
		put_bytes(w, b, d->bin[i].build_id, d->bin[i].build_id_len);
		item_end(w);
	}
	end(w);

	begin(w, FR_SEC_FRAM);
	for (uint32_t i = 0; i < d->nframe; i++) {
		const struct fr_dump_frame *f = &d->frame[i];
		struct buf *b = item_begin(w);

		put_varint(w, b, f->addr);
		put_bytes(w, b, &f->kind, 1);
		put_varint(w, b, f->sym);
		put_varint(w, b, f->sym_off);
		put_varint(w, b, f->bin);
		put_varint(w, b, f->file_off);
		item_end(w);
	}
	end(w);

	/* Mangled names apart, so that a 1.2 reader skips them (unknown tag). */
	begin(w, FR_SEC_FSYS);
	for (uint32_t i = 0; i < d->nframe; i++) {
		struct buf *b;

		if (!d->frame[i].system_name)
			continue;
		b = item_begin(w);
		put_varint(w, b, i);
		put_varint(w, b, d->frame[i].system_name);
		item_end(w);
	}
	end(w);

	/* Source positions apart too: one item per frame that has some. */
	begin(w, FR_SEC_LINE);
	for (uint32_t i = 0; i < d->nframe; i++) {
		const struct fr_dump_frame *f = &d->frame[i];
		struct buf *b;

		if (!f->nlines || f->line > d->nline || f->nlines > d->nline - f->line)
			continue;
		b = item_begin(w);
		put_varint(w, b, i);
		put_varint(w, b, f->nlines);
		for (uint32_t k = 0; k < f->nlines; k++) {
			const struct fr_dump_line *l = &d->line[f->line + k];

			put_varint(w, b, l->func);
			put_varint(w, b, l->file);
			put_varint(w, b, l->line);
			put_varint(w, b, l->col);
		}
		item_end(w);
	}
	end(w);

	begin(w, FR_SEC_STAK);
	for (uint32_t i = 0; i < d->nstack; i++) {
		const struct fr_dump_stack *s = &d->stack[i];
		struct buf *b = item_begin(w);

		put_varint(w, b, s->kn);
		put_varint(w, b, s->un);
		for (uint32_t k = 0; k < s->kn + s->un; k++)
			put_varint(w, b, s->frames[k]);
		item_end(w);
	}
	end(w);
}

static void put_event(struct wr *w, const struct fr_dump_event *e, uint64_t prev_ts)
{
	struct buf *b = item_begin(w);

	put_bytes(w, b, &e->type, 1);
	put_varint(w, b, e->ts - prev_ts);
	put_varint(w, b, e->proc);
	put_varint(w, b, e->tid);
	put_varint(w, b, e->cpu);
	put_varint(w, b, e->comm);
	put_bytes(w, b, &e->flags, 1);
	/* No default: a type added to enum fr_dump_event_type must be written. */
	switch ((enum fr_dump_event_type)e->type) {
	case FR_DEV_SAMPLE:
		put_varint(w, b, e->stack);
		break;
	case FR_DEV_EXIT:
		put_svarint(w, b, e->exit.code);
		put_varint(w, b, e->exit.rss_anon);
		put_varint(w, b, e->exit.rss_file);
		put_varint(w, b, e->exit.rss_shmem);
		put_varint(w, b, e->exit.rss_peak);
		put_varint(w, b, e->exit.utime);
		put_varint(w, b, e->exit.stime);
		put_varint(w, b, e->exit.min_flt);
		put_varint(w, b, e->exit.maj_flt);
		break;
	case FR_DEV_FORK:
		put_varint(w, b, e->child);
		break;
	case FR_DEV_EXEC:
		put_varint(w, b, e->filename);
		break;
	case FR_DEV_OOM:
		put_varint(w, b, e->oom.total_vm);
		put_varint(w, b, e->oom.rss_anon);
		put_varint(w, b, e->oom.rss_file);
		put_varint(w, b, e->oom.rss_shmem);
		put_varint(w, b, e->oom.pgtables);
		put_svarint(w, b, e->oom.oom_score_adj);
		put_varint(w, b, e->oom.uid);
		put_varint(w, b, e->oom.swapents);	/* 1.4 */
		put_varint(w, b, e->oom.invoker);
		put_varint(w, b, e->oom.invoker_tid);
		put_varint(w, b, e->stack);
		put_varint(w, b, e->oom.memcg);
		put_varint(w, b, e->oom.memcg_usage);
		put_varint(w, b, e->oom.memcg_limit);
		break;
	case FR_DEV_RSS:
		put_bytes(w, b, &e->rss.member, 1);
		put_bytes(w, b, &e->rss.why, 1);
		put_varint(w, b, e->rss.by);
		put_varint(w, b, e->rss.value);
		put_varint(w, b, e->ts - e->rss.changed);
		break;
	case FR_DEV_OOMADJ:
		put_svarint(w, b, e->oomadj.value);
		put_varint(w, b, e->oomadj.by);
		break;
	case FR_DEV_MEMSYS:
		put_varint(w, b, FR_MSYS_NFIELDS);
		for (int k = 0; k < FR_MSYS_NFIELDS; k++)
			put_varint(w, b, e->msys.v[k]);
		break;
	case FR_DEV_MEMCG:
		put_varint(w, b, e->mcg.flags);
		put_varint(w, b, e->mcg.usage);
		put_varint(w, b, e->mcg.limit);
		put_varint(w, b, e->mcg.anon);
		put_varint(w, b, e->mcg.file);
		put_varint(w, b, e->mcg.ev_high);
		put_varint(w, b, e->mcg.ev_max);
		put_varint(w, b, e->mcg.ev_oom);
		put_varint(w, b, e->mcg.ev_oom_kill);
		break;
	case FR_DEV_STALL:
		put_bytes(w, b, &e->stall.kind, 1);
		put_varint(w, b, e->ts - e->stall.begin);
		put_varint(w, b, e->stall.result);
		put_varint(w, b, e->stall.gfp);
		put_svarint(w, b, e->stall.order);
		put_varint(w, b, e->stall.reason);
		put_varint(w, b, e->stall.memcg);
		put_varint(w, b, e->stall.memcg_id);
		put_varint(w, b, e->stack);
		break;
	case FR_DEV_OFFCPU:
		put_bytes(w, b, &e->off.kind, 1);
		put_varint(w, b, e->ts - e->off.begin);
		put_varint(w, b, e->off.state);
		put_varint(w, b, e->stack);
		break;
	case FR_DEV_STALLSUM:
		put_bytes(w, b, &e->ssum.kind, 1);
		put_varint(w, b, e->ssum.n_short);
		put_varint(w, b, e->ssum.ns_short);
		put_varint(w, b, e->ssum.n_lost);
		put_varint(w, b, e->ssum.ns_lost);
		put_varint(w, b, e->ssum.n_all);
		put_varint(w, b, e->ssum.ns_all);
		break;
	case FR_DEV_PRESSURE:
		put_bytes(w, b, &e->psi.resource, 1);
		put_bytes(w, b, &e->psi.has_full, 1);
		put_varint(w, b, e->psi.some_avg10);
		put_varint(w, b, e->psi.some_avg60);
		put_varint(w, b, e->psi.some_avg300);
		put_varint(w, b, e->psi.some_total);
		put_varint(w, b, e->psi.full_avg10);
		put_varint(w, b, e->psi.full_avg60);
		put_varint(w, b, e->psi.full_avg300);
		put_varint(w, b, e->psi.full_total);
		break;
	case FR_DEV_NTYPES:
		break;	/* not a type */
	}
	item_end(w);
}

/* Stream events; each chunk restarts the time deltas from zero. */
static int write_events(struct wr *w, fr_event_source_fn next, void *ctx,
			uint64_t *nevents)
{
	struct fr_dump_event e;
	uint64_t prev = 0, last = 0;
	int r;

	*nevents = 0;
	begin(w, FR_SEC_EVNT);
	while (!w->err && (r = next(ctx, &e)) > 0) {
		if (e.ts < last)
			return -EDOM;	/* the format promises time order */
		if (!w->count)
			prev = 0;
		put_event(w, &e, prev);
		prev = last = e.ts;
		(*nevents)++;
	}
	if (!w->err && r < 0)
		return r;
	end(w);
	return w->err;
}

/*
 * dump__write() - serialize @d, with events pulled from @next in time
 * order, into @sink as the decompressed dump stream. *@nevents gets the
 * number of events written. LOSS is written after the events and read
 * from @d only then: the event source may append what writing cost. Returns 0 or -errno (-EDOM: events out of
 * order; the sink's own errors are passed through).
 */
int dump__write(const struct fr_dump *d, fr_event_source_fn next, void *ectx,
		fr_sink_fn sink, void *sctx, uint64_t *nevents)
{
	struct wr w = { .sink = sink, .ctx = sctx };
	uint8_t hdr[FR_DUMP_HDR_SIZE] = {};
	struct buf *b;
	int err;

	memcpy(hdr, FR_DUMP_MAGIC, 8);
	put_le(hdr + 8, FR_DUMP_MAJOR, 2);
	put_le(hdr + 10, FR_DUMP_MINOR, 2);
	put_le(hdr + 12, FR_DUMP_HDR_SIZE, 4);
	err = sink(sctx, hdr, sizeof(hdr));
	if (err)
		return err;
	write_kvlist(&w, FR_SEC_META, &d->meta);
	write_triggers(&w, d);
	write_window(&w, d);
	write_tables(&w, d);
	err = w.err ? w.err : write_events(&w, next, ectx, nevents);
	/* After the events: the event source may add what writing them cost. */
	if (!err) {
		write_kvlist(&w, FR_SEC_LOSS, &d->loss);
		err = w.err;
	}
	if (!err) {
		uint32_t nsec = w.nsections;

		begin(&w, FR_SEC_END);
		b = item_begin(&w);
		put_varint(&w, b, nsec);
		put_varint(&w, b, *nevents);
		put_varint(&w, b, d->nstr);
		put_varint(&w, b, d->nproc);
		put_varint(&w, b, d->nframe);
		put_varint(&w, b, d->nstack);
		item_end(&w);
		end(&w);
		err = w.err;
	}
	free(w.sec.p);
	free(w.item.p);
	return err;
}

/* --------------------------------------------------------------- reader */

struct rd {
	const uint8_t *p;
	const uint8_t *end;
	bool bad;
};

static uint64_t get_varint(struct rd *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t c;

		if (r->p >= r->end) {
			r->bad = true;
			return 0;
		}
		c = *r->p++;
		if (shift == 63 && c > 1) {
			r->bad = true;
			return 0;
		}
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

static uint32_t get_u32v(struct rd *r)
{
	uint64_t v = get_varint(r);

	if (v > UINT32_MAX)
		r->bad = true;
	return (uint32_t)v;
}

static int64_t get_svarint(struct rd *r)
{
	uint64_t v = get_varint(r);

	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static int32_t get_s32v(struct rd *r)
{
	int64_t v = get_svarint(r);

	if (v < INT32_MIN || v > INT32_MAX)
		r->bad = true;
	return (int32_t)v;
}

static uint8_t get_u8(struct rd *r)
{
	if (r->p >= r->end) {
		r->bad = true;
		return 0;
	}
	return *r->p++;
}

static const uint8_t *get_bytes(struct rd *r, uint64_t n)
{
	const uint8_t *p = r->p;

	if (n > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	return p;
}

static char *get_str(struct rd *r)
{
	uint64_t n = get_varint(r);
	const uint8_t *p;
	char *s;

	if (n > FR_MAX_STR) {
		r->bad = true;
		return NULL;
	}
	p = get_bytes(r, n);
	if (!p)
		return NULL;
	s = malloc(n + 1);
	if (!s) {
		r->bad = true;
		return NULL;
	}
	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

struct parse {
	struct fr_dump *d;
	const uint8_t *base;	/* start of the decompressed stream */
	char *err;
	size_t errlen;
	uint64_t sec_off;	/* offset of the current section */
	uint32_t tag;
	bool seen_end;
	bool seen_meta;
	uint64_t end_events;
	uint64_t end_sections;
	uint64_t skipped;	/* events of a newer, unknown type */
	uint64_t cap_bytes;	/* bound for growth: the stream's length */
	uint32_t line_cap;	/* room in d->line */
};

static const char *tag_name(uint32_t tag, char buf[5])
{
	for (int i = 0; i < 4; i++) {
		char c = (char)(tag >> (8 * i));

		buf[i] = c >= 0x20 && c < 0x7f ? c : '?';
	}
	buf[4] = 0;
	return buf;
}

static __attribute__((format(printf, 3, 4)))
int fail(struct parse *ps, uint64_t off, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ps->err, ps->errlen, "corrupt dump at byte %" PRIu64
		 " of the decompressed stream: %s", off, msg);
	return -EBADMSG;
}

/* Grow @arr (element @size) to hold @more extra items, bounded by the stream. */
static int grow(struct parse *ps, void **arr, uint32_t have, uint64_t more,
		size_t size)
{
	void *n;

	if (have + more > ps->cap_bytes || have + more > UINT32_MAX / 2)
		return fail(ps, ps->sec_off, "absurd item count %" PRIu64, more);
	n = realloc(*arr, (have + more ? have + more : 1) * size);
	if (!n) {
		snprintf(ps->err, ps->errlen, "out of memory reading %" PRIu64 " items", more);
		return -ENOMEM;
	}
	*arr = n;
	return 0;
}

static int parse_kv(struct parse *ps, struct rd *r, struct fr_kvlist *l)
{
	char *key = get_str(r);
	uint8_t type = get_u8(r);
	int err = -EBADMSG;

	if (r->bad || !key)
		goto out;
	switch (type) {
	case FR_KV_UINT:
		err = kvlist__add_u64(l, key, get_varint(r));
		break;
	case FR_KV_SINT:
		err = kvlist__add_s64(l, key, get_svarint(r));
		break;
	case FR_KV_STR: {
		char *s = get_str(r);

		err = r->bad ? -EBADMSG : kvlist__add_str(l, key, s);
		free(s);
		break;
	}
	case FR_KV_UARRAY: {
		uint64_t n = get_varint(r), *v;

		if (r->bad || n > (uint64_t)(r->end - r->p))
			goto out;
		v = calloc(n ? n : 1, sizeof(*v));
		if (!v) {
			err = -ENOMEM;
			goto out;
		}
		for (uint64_t i = 0; i < n; i++)
			v[i] = get_varint(r);
		err = r->bad ? -EBADMSG : kvlist__add_array(l, key, v, n);
		free(v);
		break;
	}
	default:
		break;	/* unknown value type: a newer writer; not skippable */
	}
out:
	free(key);
	if (r->bad)
		err = -EBADMSG;
	return err;
}

/*
 * parse_lines() - a LINE item: a frame of FRAM (read before it) without
 * levels yet, then 1 to FR_DUMP_MAX_LINES levels of four u32v, appended
 * to the dump's line table. String indexes are checked with the others
 * after END.
 */
static int parse_lines(struct parse *ps, struct rd *r)
{
	struct fr_dump *d = ps->d;
	uint32_t f = get_u32v(r), n = get_u32v(r);
	struct fr_dump_line *l;

	if (r->bad || f >= d->nframe || d->frame[f].nlines || !n || n > FR_DUMP_MAX_LINES ||
	    n > (uint64_t)(r->end - r->p) / 4)
		return -EBADMSG;
	if (d->nline + n > ps->line_cap) {
		uint32_t cap = FR_MAX(ps->line_cap * 2, d->nline + n);
		int err = grow(ps, (void **)&d->line, 0, cap, sizeof(*d->line));

		if (err)
			return err;
		ps->line_cap = cap;
	}
	l = &d->line[d->nline];
	for (uint32_t k = 0; k < n; k++) {
		l[k].func = get_u32v(r);
		l[k].file = get_u32v(r);
		l[k].line = get_u32v(r);
		l[k].col = get_u32v(r);
	}
	if (r->bad)
		return -EBADMSG;
	d->frame[f].line = d->nline;
	d->frame[f].nlines = n;
	d->nline += n;
	return 0;
}

static int parse_item(struct parse *ps, struct rd *r)
{
	struct fr_dump *d = ps->d;

	switch (ps->tag) {
	case FR_SEC_META:
		return parse_kv(ps, r, &d->meta);
	case FR_SEC_LOSS:
		return parse_kv(ps, r, &d->loss);
	case FR_SEC_TRIG: {
		struct fr_dump_trigger *t = &d->trig[d->ntrig];

		memset(t, 0, sizeof(*t));
		d->ntrig++;
		t->name = get_str(r);
		t->type = get_str(r);
		t->reason = get_str(r);
		t->detail = get_str(r);
		t->ts = get_varint(r);
		t->victim = r->p < r->end ? get_u32v(r) : 0;	/* 1.2 */
		return r->bad ? -EBADMSG : 0;
	}
	case FR_SEC_WIND:
		d->win.start = get_varint(r);
		d->win.end = get_varint(r);
		d->win.watermark = get_varint(r);
		d->win.span = get_varint(r);
		d->win.first_event = get_varint(r);
		return r->bad ? -EBADMSG : 0;
	case FR_SEC_STRS: {
		size_t n = r->end - r->p;
		char *s = malloc(n + 1);

		if (!s)
			return -ENOMEM;
		memcpy(s, r->p, n);
		s[n] = 0;
		d->str[d->nstr] = s;
		d->str_len[d->nstr++] = n;
		return 0;
	}
	case FR_SEC_PROC: {
		struct fr_dump_proc *p = &d->proc[d->nproc++];

		p->pid = get_u32v(r);
		p->start = get_varint(r);
		p->ppid = get_u32v(r);
		p->flags = get_u32v(r);
		p->exit_ts = get_varint(r);
		p->exit_code = get_s32v(r);
		p->comm = get_u32v(r);
		p->exe = get_u32v(r);
		p->cmdline = get_u32v(r);
		p->state = get_u32v(r);
		p->rss = get_varint(r);
		p->stamp = get_varint(r);
		p->cgroup = r->p < r->end ? get_u32v(r) : 0;	/* 1.1 */
		if (r->p < r->end) {	/* 1.4 */
			p->has_mem = get_u32v(r);
			p->oom_score_adj = get_s32v(r);
			p->rss_file = get_varint(r);
			p->rss_anon = get_varint(r);
			p->rss_shmem = get_varint(r);
			p->swap = get_varint(r);
			p->pgtables = get_varint(r);
			p->mem_stamp = get_varint(r);
			p->nspid = get_u32v(r);
			p->memcg = get_u32v(r);
			p->container = get_u32v(r);
			p->cgroup_id = get_varint(r);
		}
		return r->bad ? -EBADMSG : 0;
	}
	case FR_SEC_THRD: {
		struct fr_dump_thread *t = &d->thread[d->nthread++];

		t->proc = get_u32v(r);
		t->tid = get_u32v(r);
		t->name = get_u32v(r);
		return r->bad ? -EBADMSG : 0;
	}
	case FR_SEC_BINS: {
		struct fr_dump_bin *b = &d->bin[d->nbin++];
		const uint8_t *id;

		b->path = get_u32v(r);
		b->build_id_len = get_u8(r);
		if (b->build_id_len > sizeof(b->build_id))
			return -EBADMSG;
		id = get_bytes(r, b->build_id_len);
		if (id)
			memcpy(b->build_id, id, b->build_id_len);
		return r->bad ? -EBADMSG : 0;
	}
	case FR_SEC_FRAM: {
		struct fr_dump_frame *f = &d->frame[d->nframe++];

		f->addr = get_varint(r);
		f->kind = get_u8(r);
		f->sym = get_u32v(r);
		f->sym_off = get_varint(r);
		f->bin = get_u32v(r);
		f->file_off = get_varint(r);
		f->system_name = 0;	/* FSYS, later, may name one */
		f->line = f->nlines = 0;	/* and LINE give it a source position */
		return r->bad ? -EBADMSG : 0;
	}
	case FR_SEC_FSYS: {
		uint32_t f = get_u32v(r), name = get_u32v(r);

		if (r->bad || f >= d->nframe)
			return -EBADMSG;	/* FSYS follows FRAM */
		d->frame[f].system_name = name;
		return 0;
	}
	case FR_SEC_LINE:
		return parse_lines(ps, r);
	case FR_SEC_STAK: {
		struct fr_dump_stack *s = &d->stack[d->nstack++];
		uint64_t n;

		s->frames = NULL;
		s->kn = get_u32v(r);
		s->un = get_u32v(r);
		n = (uint64_t)s->kn + s->un;
		if (r->bad || n > FR_MAX_FRAMES || n > (uint64_t)(r->end - r->p))
			return -EBADMSG;
		s->frames = calloc(n ? n : 1, sizeof(*s->frames));
		if (!s->frames)
			return -ENOMEM;
		for (uint64_t k = 0; k < n; k++)
			s->frames[k] = get_u32v(r);
		return r->bad ? -EBADMSG : 0;
	}
	default:
		return 0;
	}
}

static int parse_event(struct parse *ps, struct rd *r, uint64_t *prev)
{
	struct fr_dump_event *e = &ps->d->ev[ps->d->nev++];

	memset(e, 0, sizeof(*e));
	e->type = get_u8(r);
	e->ts = *prev + get_varint(r);
	if (e->ts < *prev)
		return -EBADMSG;
	*prev = e->ts;
	e->proc = get_u32v(r);
	e->tid = get_u32v(r);
	e->cpu = get_u32v(r);
	e->comm = get_u32v(r);
	e->flags = get_u8(r);
	if (!e->type)
		return -EBADMSG;
	if (!fr_evtype(e->type)) {
		/* A type from a newer minor version: its length is known, skip it. */
		ps->d->nev--;
		ps->skipped++;
		return 0;
	}
	/* No default: a type added to enum fr_dump_event_type must be read. */
	switch ((enum fr_dump_event_type)e->type) {
	case FR_DEV_SAMPLE:
		e->stack = get_u32v(r);
		break;
	case FR_DEV_EXIT:
		e->exit.code = get_s32v(r);
		e->exit.rss_anon = get_varint(r);
		e->exit.rss_file = get_varint(r);
		e->exit.rss_shmem = get_varint(r);
		e->exit.rss_peak = get_varint(r);
		e->exit.utime = get_varint(r);
		e->exit.stime = get_varint(r);
		e->exit.min_flt = get_varint(r);
		e->exit.maj_flt = get_varint(r);
		break;
	case FR_DEV_FORK:
		e->child = get_u32v(r);
		break;
	case FR_DEV_EXEC:
		e->filename = get_u32v(r);
		break;
	case FR_DEV_OOM:
		e->oom.total_vm = get_varint(r);
		e->oom.rss_anon = get_varint(r);
		e->oom.rss_file = get_varint(r);
		e->oom.rss_shmem = get_varint(r);
		e->oom.pgtables = get_varint(r);
		e->oom.oom_score_adj = get_svarint(r);
		e->oom.uid = get_varint(r);
		if (r->p < r->end) {	/* 1.4 */
			e->oom.swapents = get_varint(r);
			e->oom.invoker = get_u32v(r);
			e->oom.invoker_tid = get_u32v(r);
			e->stack = get_u32v(r);
			e->oom.memcg = get_u32v(r);
			e->oom.memcg_usage = get_varint(r);
			e->oom.memcg_limit = get_varint(r);
		}
		break;
	case FR_DEV_RSS: {
		uint64_t age;

		e->rss.member = get_u8(r);
		e->rss.why = get_u8(r);
		e->rss.by = get_u32v(r);
		e->rss.value = get_varint(r);
		age = get_varint(r);
		if (age > e->ts || e->rss.member >= FR_DRSS_NMEMBERS || e->rss.why >= FR_DRSS_NWHY)
			return -EBADMSG;
		e->rss.changed = e->ts - age;
		break;
	}
	case FR_DEV_OOMADJ:
		e->oomadj.value = get_s32v(r);
		e->oomadj.by = get_u32v(r);
		if (e->oomadj.value < -1000 || e->oomadj.value > 1000)
			return -EBADMSG;
		break;
	case FR_DEV_MEMSYS: {
		uint64_t n = get_varint(r);

		/* A newer writer may add fields: keep ours, skip the rest. */
		for (uint64_t k = 0; k < n && !r->bad; k++) {
			uint64_t v = get_varint(r);

			if (k < FR_MSYS_NFIELDS)
				e->msys.v[k] = v;
		}
		break;
	}
	case FR_DEV_MEMCG:
		e->mcg.flags = get_u32v(r);
		e->mcg.usage = get_varint(r);
		e->mcg.limit = get_varint(r);
		e->mcg.anon = get_varint(r);
		e->mcg.file = get_varint(r);
		e->mcg.ev_high = get_varint(r);
		e->mcg.ev_max = get_varint(r);
		e->mcg.ev_oom = get_varint(r);
		e->mcg.ev_oom_kill = get_varint(r);
		break;
	case FR_DEV_STALL: {
		uint64_t dur;

		e->stall.kind = get_u8(r);
		dur = get_varint(r);
		e->stall.result = get_varint(r);
		e->stall.gfp = get_u32v(r);
		e->stall.order = get_s32v(r);
		e->stall.reason = get_u32v(r);
		e->stall.memcg = get_u32v(r);
		e->stall.memcg_id = get_varint(r);
		e->stack = get_u32v(r);
		if (dur > e->ts || e->stall.kind > FR_DSTALL_THROTTLE)
			return -EBADMSG;
		e->stall.begin = e->ts - dur;
		break;
	}
	case FR_DEV_OFFCPU: {
		uint64_t dur;

		e->off.kind = get_u8(r);
		dur = get_varint(r);
		e->off.state = get_u32v(r);
		e->stack = get_u32v(r);
		if (dur > e->ts || (e->off.kind != FR_DSTALL_BLOCKED && e->off.kind != FR_DSTALL_SLEEP))
			return -EBADMSG;
		e->off.begin = e->ts - dur;
		break;
	}
	case FR_DEV_STALLSUM:
		e->ssum.kind = get_u8(r);
		e->ssum.n_short = get_varint(r);
		e->ssum.ns_short = get_varint(r);
		e->ssum.n_lost = get_varint(r);
		e->ssum.ns_lost = get_varint(r);
		e->ssum.n_all = get_varint(r);
		e->ssum.ns_all = get_varint(r);
		if (e->ssum.kind >= FR_DSTALL_NKINDS || e->ssum.n_short > e->ssum.n_all ||
		    e->ssum.n_lost > e->ssum.n_all - e->ssum.n_short)
			return -EBADMSG;
		break;
	case FR_DEV_PRESSURE:
		e->psi.resource = get_u8(r);
		e->psi.has_full = get_u8(r);
		e->psi.some_avg10 = get_u32v(r);
		e->psi.some_avg60 = get_u32v(r);
		e->psi.some_avg300 = get_u32v(r);
		e->psi.some_total = get_varint(r);
		e->psi.full_avg10 = get_u32v(r);
		e->psi.full_avg60 = get_u32v(r);
		e->psi.full_avg300 = get_u32v(r);
		e->psi.full_total = get_varint(r);
		if (e->psi.resource > 2)
			return -EBADMSG;
		break;
	case FR_DEV_NTYPES:
		break;	/* not a type: fr_evtype() knows none past the last */
	}
	return r->bad ? -EBADMSG : 0;
}

/* Make room in the array a section's items go to. */
static int reserve_items(struct parse *ps, uint32_t count)
{
	struct fr_dump *d = ps->d;
	int err = 0;

	switch (ps->tag) {
	case FR_SEC_TRIG:
		err = grow(ps, (void **)&d->trig, d->ntrig, count, sizeof(*d->trig));
		break;
	case FR_SEC_STRS:
		err = grow(ps, (void **)&d->str, d->nstr, count, sizeof(*d->str));
		if (!err)
			err = grow(ps, (void **)&d->str_len, d->nstr, count, sizeof(*d->str_len));
		break;
	case FR_SEC_PROC:
		err = grow(ps, (void **)&d->proc, d->nproc, count, sizeof(*d->proc));
		break;
	case FR_SEC_BINS:
		err = grow(ps, (void **)&d->bin, d->nbin, count, sizeof(*d->bin));
		break;
	case FR_SEC_FRAM:
		err = grow(ps, (void **)&d->frame, d->nframe, count, sizeof(*d->frame));
		break;
	case FR_SEC_STAK:
		err = grow(ps, (void **)&d->stack, d->nstack, count, sizeof(*d->stack));
		break;
	case FR_SEC_THRD:
		err = grow(ps, (void **)&d->thread, d->nthread, count, sizeof(*d->thread));
		break;
	case FR_SEC_EVNT:
		err = grow(ps, (void **)&d->ev, d->nev, count, sizeof(*d->ev));
		break;
	}
	return err;
}

static int parse_end(struct parse *ps, struct rd *r, uint64_t nsec_before)
{
	struct fr_dump *d = ps->d;
	uint64_t v[6];

	for (int i = 0; i < 6; i++)
		v[i] = get_varint(r);
	if (r->bad)
		return fail(ps, ps->sec_off, "END section too short");
	if (v[0] != nsec_before)
		return fail(ps, ps->sec_off, "END counts %" PRIu64 " sections, found %" PRIu64,
			    v[0], nsec_before);
	if (v[1] != d->nev + ps->skipped || v[2] != d->nstr || v[3] != d->nproc ||
	    v[4] != d->nframe || v[5] != d->nstack)
		return fail(ps, ps->sec_off, "END totals do not match the sections read");
	ps->seen_end = true;
	return 0;
}

/* Parse the items of one section payload. */
static int parse_payload(struct parse *ps, const uint8_t *p, uint64_t len,
			 uint32_t count)
{
	struct rd r = { .p = p, .end = p + len };
	uint64_t prev_ts = ps->d->nev ? ps->d->ev[ps->d->nev - 1].ts : 0;
	char tn[5];
	int err;

	if (count > len)
		return fail(ps, ps->sec_off, "absurd count %u in a %" PRIu64 "-byte %s section",
			    count, len, tag_name(ps->tag, tn));
	if ((ps->tag == FR_SEC_WIND || ps->tag == FR_SEC_END) && count != 1)
		return fail(ps, ps->sec_off, "%s section must hold one item, not %u",
			    tag_name(ps->tag, tn), count);
	err = reserve_items(ps, count);
	if (err)
		return err;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t ilen = get_varint(&r);
		struct rd item;

		if (r.bad || ilen > (uint64_t)(r.end - r.p))
			return fail(ps, ps->sec_off + FR_SECTION_HDR_SIZE + (r.p - p),
				    "%s item %u overruns its section", tag_name(ps->tag, tn), i);
		item = (struct rd){ .p = r.p, .end = r.p + ilen };
		r.p += ilen;
		if (ps->tag == FR_SEC_EVNT) {
			uint64_t base = i ? prev_ts : 0;

			err = parse_event(ps, &item, &base);
			prev_ts = base;
			if (!err && ps->d->nev > 1 &&
			    ps->d->ev[ps->d->nev - 1].ts < ps->d->ev[ps->d->nev - 2].ts)
				return fail(ps, ps->sec_off, "event %u goes back in time",
					    ps->d->nev - 1);
		} else if (ps->tag == FR_SEC_END) {
			err = parse_end(ps, &item, ps->d->nsections);
		} else {
			err = parse_item(ps, &item);
		}
		if (err == -ENOMEM)
			return err;
		if (err)
			return ps->err[0] ? err :
			       fail(ps, ps->sec_off + FR_SECTION_HDR_SIZE + (item.p - p),
				    "malformed %s item %u", tag_name(ps->tag, tn), i);
	}
	if (r.p != r.end)
		return fail(ps, ps->sec_off, "%zu stray bytes after the last %s item",
			    (size_t)(r.end - r.p), tag_name(ps->tag, tn));
	return 0;
}

static bool known_tag(uint32_t tag)
{
	switch (tag) {
	case FR_SEC_META: case FR_SEC_TRIG: case FR_SEC_WIND: case FR_SEC_LOSS:
	case FR_SEC_STRS: case FR_SEC_PROC: case FR_SEC_BINS: case FR_SEC_FRAM:
	case FR_SEC_STAK: case FR_SEC_EVNT: case FR_SEC_END: case FR_SEC_THRD:
	case FR_SEC_FSYS: case FR_SEC_LINE:
		return true;
	}
	return false;
}

/* Every index must point inside its table. */
static int check_refs(struct parse *ps)
{
	const struct fr_dump *d = ps->d;
	uint64_t off = ps->sec_off;

	if (!d->nstr || d->str_len[0])
		return fail(ps, off, "string 0 must exist and be empty");
	for (uint32_t i = 0; i < d->nproc; i++) {
		const struct fr_dump_proc *p = &d->proc[i];

		if (p->comm >= d->nstr || p->exe >= d->nstr || p->cmdline >= d->nstr ||
		    p->cgroup >= d->nstr || p->memcg >= d->nstr || p->container >= d->nstr)
			return fail(ps, off, "process %u names string out of range", i);
	}
	for (uint32_t i = 0; i < d->nthread; i++)
		if (d->thread[i].proc >= d->nproc || d->thread[i].name >= d->nstr)
			return fail(ps, off, "thread %u refers out of range", i);
	for (uint32_t i = 0; i < d->ntrig; i++)
		if (d->trig[i].victim > d->nproc)
			return fail(ps, off, "trigger %u names a process out of range", i);
	for (uint32_t i = 0; i < d->nbin; i++)
		if (d->bin[i].path >= d->nstr)
			return fail(ps, off, "binary %u names string out of range", i);
	for (uint32_t i = 0; i < d->nframe; i++)
		if (d->frame[i].sym >= d->nstr || d->frame[i].bin > d->nbin ||
		    d->frame[i].kind > FR_FRAME_USER || d->frame[i].system_name >= d->nstr)
			return fail(ps, off, "frame %u refers out of range", i);
	for (uint32_t i = 0; i < d->nline; i++)
		if (d->line[i].func >= d->nstr || d->line[i].file >= d->nstr)
			return fail(ps, off, "source line %u names string out of range", i);
	for (uint32_t i = 0; i < d->nstack; i++)
		for (uint32_t k = 0; k < d->stack[i].kn + d->stack[i].un; k++)
			if (d->stack[i].frames[k] >= d->nframe)
				return fail(ps, off, "stack %u names frame out of range", i);
	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];

		if ((dump__event_has_proc(e->type) && e->proc >= d->nproc) || e->comm >= d->nstr ||
		    ((e->type == FR_DEV_SAMPLE || e->type == FR_DEV_OOM || e->type == FR_DEV_STALL ||
		      e->type == FR_DEV_OFFCPU) && e->stack > d->nstack) ||
		    (e->type == FR_DEV_STALL && e->stall.memcg >= d->nstr) ||
		    (e->type == FR_DEV_OOM && (e->oom.invoker > d->nproc || e->oom.memcg >= d->nstr)) ||
		    (e->type == FR_DEV_FORK && e->child >= d->nproc) ||
		    (e->type == FR_DEV_EXEC && e->filename >= d->nstr))
			return fail(ps, off, "event %u refers out of range", i);
	}
	return 0;
}

/*
 * dump__parse() - decode a decompressed dump stream @buf of @len bytes
 * into @d, which takes ownership of @buf. Every count, length and index is
 * checked against the bytes that hold it. Returns 0, or -EBADMSG (corrupt),
 * -EPROTONOSUPPORT (unknown major version), -ENOMEM; @err says what and
 * at which byte.
 */
int dump__parse(struct fr_dump *d, void *buf, size_t len, char *err, size_t errlen)
{
	struct parse ps = { .d = d, .base = buf, .err = err, .errlen = errlen,
			    .cap_bytes = len };
	const uint8_t *p = buf;
	uint64_t off;
	int e;

	dump__init(d);
	d->arena = buf;
	err[0] = 0;
	if (len < 8 || memcmp(p, FR_DUMP_MAGIC, 8))
		return fail(&ps, 0, "bad magic: not a flightrec dump");
	if (len < FR_DUMP_HDR_SIZE)
		return fail(&ps, len, "too short for a dump header (%zu bytes)", len);
	d->major = get_le(p + 8, 2);
	d->minor = get_le(p + 10, 2);
	if (d->major != FR_DUMP_MAJOR) {
		snprintf(err, errlen, "unsupported dump format version %u.%u (this reader knows %u.x)",
			 d->major, d->minor, FR_DUMP_MAJOR);
		return -EPROTONOSUPPORT;
	}
	off = get_le(p + 12, 4);
	if (off < FR_DUMP_HDR_SIZE || off > len)
		return fail(&ps, 12, "bad header size %" PRIu64, off);
	while (off < len) {
		uint64_t slen;
		uint32_t crc, count;
		char tn[5];

		ps.sec_off = off;
		if (ps.seen_end)
			return fail(&ps, off, "data after the END section");
		if (len - off < FR_SECTION_HDR_SIZE + 4)
			return fail(&ps, off, "truncated section header");
		ps.tag = get_le(p + off, 4);
		count = get_le(p + off + 4, 4);
		slen = get_le(p + off + 8, 8);
		if (slen > len - off - FR_SECTION_HDR_SIZE - 4)
			return fail(&ps, off, "section %s claims %" PRIu64 " bytes, %" PRIu64 " left",
				    tag_name(ps.tag, tn), slen, len - off - FR_SECTION_HDR_SIZE - 4);
		crc = fr_crc32c(0, p + off, FR_SECTION_HDR_SIZE + slen);
		if (crc != get_le(p + off + FR_SECTION_HDR_SIZE + slen, 4))
			return fail(&ps, off, "checksum mismatch in section %s (stored 0x%08x, computed 0x%08x)",
				    tag_name(ps.tag, tn),
				    (uint32_t)get_le(p + off + FR_SECTION_HDR_SIZE + slen, 4), crc);
		if (!ps.seen_meta && ps.tag != FR_SEC_META)
			return fail(&ps, off, "first section is %s, expected META", tag_name(ps.tag, tn));
		ps.seen_meta = true;
		if (known_tag(ps.tag)) {
			e = parse_payload(&ps, p + off + FR_SECTION_HDR_SIZE, slen, count);
			if (e)
				return e;
		}
		d->nsections++;
		off += FR_SECTION_HDR_SIZE + slen + 4;
	}
	if (!ps.seen_end)
		return fail(&ps, len, "END section missing: the dump is truncated");
	return check_refs(&ps);
}

/*
 * dump__load() - read, decompress and decode the dump file at @path.
 * Returns 0 or -errno with a message in @err.
 */
int dump__load(struct fr_dump *d, const char *path, char *err, size_t errlen)
{
	size_t len = 0;
	void *buf = NULL;
	int e;

	dump__init(d);
	e = lz4_decompress_file(path, FR_DUMP_MAX_BYTES, &buf, &len, err, errlen);
	if (e)
		return e;
	return dump__parse(d, buf, len, err, errlen);
}
