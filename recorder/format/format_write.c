// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * format_write.c - write a dump's sections from its model and an event source
 * (dump__write(); format.h, docs/FORMAT.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evtype.h"
#include "format.h"
#include "util.h"

#define FR_CHUNK_BYTES		(1u << 20)	/* a list section is cut here */

struct buf {
	uint8_t *p;
	size_t len;
	size_t cap;
};

struct wr {
	fr_sink_fn sink;
	void *ctx;
	struct buf sec;		/* payload of the chunk being built */
	size_t item_at;		/* where the item being built begins in it (its length prefix) */
	uint32_t tag;
	uint32_t count;
	uint32_t chunks;	/* sections emitted for the current tag */
	uint32_t nsections;
	int err;
};

/* Grow @b to hold @more bytes past its length (the slow path of the put_*() below). */
static int buf_grow(struct buf *b, size_t more)
{
	size_t cap;
	uint8_t *n;

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

/* Room for @more bytes in @b; false (and w->err set) when there is none. */
static inline bool buf_room(struct wr *w, struct buf *b, size_t more)
{
	if (__builtin_expect(b->len + more <= b->cap, 1))
		return !w->err;
	if (w->err)
		return false;
	w->err = buf_grow(b, more);
	return !w->err;
}

static inline void put_bytes(struct wr *w, struct buf *b, const void *p, size_t n)
{
	if (!buf_room(w, b, n))
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* An unsigned LEB128 varint, written in place (most items are a run of these). */
static inline void put_varint(struct wr *w, struct buf *b, uint64_t v)
{
	uint8_t *p;

	if (!buf_room(w, b, 10))
		return;
	p = b->p + b->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	b->len = (size_t)(p - b->p);
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

/*
 * item_begin() - start an item: it is built in place in the chunk, after
 * a one-byte length prefix that item_end() fills (and widens, moving the
 * item, in the rare case of an item of 128 bytes or more).
 */
static struct buf *item_begin(struct wr *w)
{
	if (buf_room(w, &w->sec, 1))
		w->item_at = w->sec.len++;
	return &w->sec;
}

/* Close an item: length-prefix it in the chunk; cut the chunk if big. */
static void item_end(struct wr *w)
{
	struct buf *b = &w->sec;
	size_t n, lenlen = 1;
	uint8_t *p;

	if (w->err)
		return;
	n = b->len - w->item_at - 1;
	for (uint64_t v = n; v >= 0x80; v >>= 7)
		lenlen++;
	if (lenlen > 1) {
		if (!buf_room(w, b, lenlen - 1))
			return;
		p = b->p + w->item_at;
		memmove(p + lenlen, p + 1, n);
		b->len += lenlen - 1;
	}
	p = b->p + w->item_at;
	for (uint64_t v = n; v >= 0x80; v >>= 7)
		*p++ = (uint8_t)(v | 0x80);
	*p = (uint8_t)(n >> (7 * (lenlen - 1)));
	w->count++;
	if (b->len >= FR_CHUNK_BYTES)
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
		uint8_t kind = f->kind == FR_FRAME_PYTHON ? FR_FRAME_USER : f->kind;	/* + PYFR */
		struct buf *b = item_begin(w);

		put_varint(w, b, f->addr);
		put_bytes(w, b, &kind, 1);
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

	/* Python frames apart, so that a 1.6 reader shows them as user frames. */
	begin(w, FR_SEC_PYFR);
	for (uint32_t i = 0; i < d->nframe; i++) {
		struct buf *b;

		if (d->frame[i].kind != FR_FRAME_PYTHON)
			continue;
		b = item_begin(w);
		put_varint(w, b, i);
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

/*
 * (1.6) How a stack was walked, after the tail's last field, only when it
 * was not walked at once: a byte on the few that were finished later, none
 * on the rest. Earlier readers stop before it.
 */
static void put_unwound(struct wr *w, struct buf *b, const struct fr_dump_event *e)
{
	if (e->unwound)
		put_bytes(w, b, &e->unwound, 1);
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
		put_unwound(w, b, e);
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
		put_unwound(w, b, e);
		break;
	case FR_DEV_OFFCPU:
		put_bytes(w, b, &e->off.kind, 1);
		put_varint(w, b, e->ts - e->off.begin);
		put_varint(w, b, e->off.state);
		put_varint(w, b, e->stack);
		put_unwound(w, b, e);
		break;
	case FR_DEV_RSS_SITE:
		put_bytes(w, b, &e->site.member, 1);
		put_varint(w, b, e->site.grown);
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
	return err;
}
