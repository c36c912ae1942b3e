// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * format_read.c - parse and check a dump (dump__parse(), dump__load();
 * format.h, docs/FORMAT.md): every byte is untrusted.
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
#include "lz4read.h"
#include "util.h"

#define FR_MAX_FRAMES		1024		/* per stack, both parts */

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
	case FR_SEC_PYFR: {
		uint32_t f = get_u32v(r);

		if (r->bad || f >= d->nframe || d->frame[f].kind != FR_FRAME_USER)
			return -EBADMSG;	/* PYFR follows FRAM, and names user frames */
		d->frame[f].kind = FR_FRAME_PYTHON;
		return 0;
	}
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

/* (1.6) How the stack was walked, if the item goes on past its stack. */
static void get_unwound(struct rd *r, struct fr_dump_event *e)
{
	if (r->p < r->end)
		e->unwound = get_u8(r);
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
		get_unwound(r, e);
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
		get_unwound(r, e);
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
		get_unwound(r, e);
		if (dur > e->ts || (e->off.kind != FR_DSTALL_BLOCKED && e->off.kind != FR_DSTALL_SLEEP))
			return -EBADMSG;
		e->off.begin = e->ts - dur;
		break;
	}
	case FR_DEV_RSS_SITE:
		e->site.member = get_u8(r);
		e->site.grown = get_varint(r);
		e->stack = get_u32v(r);
		if (e->site.member >= FR_DRSS_NMEMBERS)
			return -EBADMSG;
		break;
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
	case FR_SEC_FSYS: case FR_SEC_LINE: case FR_SEC_PYFR:
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
		    d->frame[i].kind > FR_FRAME_PYTHON || d->frame[i].system_name >= d->nstr)
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
		      e->type == FR_DEV_OFFCPU || e->type == FR_DEV_RSS_SITE) && e->stack > d->nstack) ||
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
