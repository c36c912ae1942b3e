// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * drain.c - BPF records to window events, with the watermark. See drain.h.
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "contract.h"
#include "drain.h"
#include "pysplice.h"
#include "evtype.h"
#include "idpool.h"
#include "util.h"

#define FR_STACK_BLOCK		128	/* 16 frames per block */
#define FR_STR_BLOCK		32
#define FR_STAGE_MIN		4096
#define FR_STAGE_MAX		(1u << 20)
#define FR_MAX_PROCS		65536
#define FR_MIN_PROCS		1024
#define FR_BUSY_SPINS		2000
/* Samples with a copy of their stack, held for their file's rows: at most
 * a 16th of the memory cap in bytes of them (16 MiB at the default 256 MiB,
 * ~2,400 copies of a deep stack: 1.2 s of two CPUs at 999 Hz), and at
 * least this much, each for at most this long, asked every so often. */
#define FR_UCOPY_HELD_MIN	(4u << 20)
#define FR_UCOPY_HELD_SHARE	16
#define FR_UCOPY_WAIT_NS	(3000 * 1000 * 1000ULL)
/* While what may give the rows is under way (the finisher says
 * -EINPROGRESS): a big file's build, cc1's 2.3 MB of CFI take 0.3 s here,
 * 3-5 s in the ASan daemon beside a compile. The staging area bounds
 * what waits behind (serve_held()). */
#define FR_UCOPY_BUILD_WAIT_NS	(10000 * 1000 * 1000ULL)
#define FR_UCOPY_RETRY_NS	(10 * 1000 * 1000ULL)

/*
 * A sample held back from staging until the walk its copy allows is
 * finished: the event as the kernel's walk gave it, then the record's
 * frames (kn kernel, un user) and the stack bytes.
 */
struct held {
	struct held *next;
	struct fr_event ev;
	uint32_t pid;
	uint64_t start;
	uint64_t due, tried;
	uint32_t kn, un;
	size_t bytes;
	struct fr_ucopy c;
	uint64_t ips[];		/* kn + un frames, then c.len bytes of stack */
};

struct drain {
	struct drain_tables t;
	struct fr_event *stage;		/* staged events, sorted by ts */
	size_t nstage;
	size_t stage_cap;
	size_t stage_hi;		/* the most staged since the last trim */
	struct idpool_trim stage_trim;
	uint64_t next_trim;		/* the tables' next trim, watermark ns */
	uint64_t watermark;
	uint64_t last_released;
	uint64_t budget;
	unsigned page_shift;
	struct drain_hooks hooks;
	struct drain_stats st;
	struct held *held, **held_tail;	/* in arrival order */
	size_t held_bytes, nheld;
	size_t held_cap;		/* bytes of copies held at most */
};

static void on_evict(void *ctx, const struct fr_event *ev);

/*
 * Split the memory cap between the tables: 3/8 for events, 1/16 for
 * strings, up to 1/16 for the process table, the rest for stacks.
 */
static int make_tables(struct drain *d, uint64_t memory, uint64_t span)
{
	size_t events_share = memory * 3 / 8;
	size_t stage_cap = FR_MIN(FR_MAX(events_share / sizeof(struct fr_event) / 64,
					 (size_t)FR_STAGE_MIN), (size_t)FR_STAGE_MAX);
	size_t nev = (events_share - stage_cap * sizeof(struct fr_event)) / sizeof(struct fr_event);
	size_t str_blocks = memory / 16 / (FR_STR_BLOCK + 4 + 16);
	size_t nprocs = memory / 16 / 128, left;
	size_t stk_blocks;

	/* The ring maps a few chunks over its events (window__budget()). */
	while (nev > 64 && window__budget(nev) + stage_cap * sizeof(struct fr_event) > events_share)
		nev -= FR_MAX((window__budget(nev) + stage_cap * sizeof(struct fr_event) -
			       events_share) / sizeof(struct fr_event), (size_t)1);
	nprocs = FR_MIN(FR_MAX(nprocs, (size_t)FR_MIN_PROCS), (size_t)FR_MAX_PROCS);
	left = memory - events_share -
	       intern__budget(FR_STR_BLOCK, str_blocks, str_blocks / 2) -
	       proctable__budget(nprocs);
	/* Per stack block: the block, its link, and half an entry + bucket. */
	stk_blocks = left / (FR_STACK_BLOCK + 4 + 24);
	if (nev < 64 || str_blocks < 64 || stk_blocks < 64) {
		errno = EINVAL;
		return -EINVAL;
	}
	d->t.win = window__new(nev, span, on_evict, d);
	d->t.strs = intern__new(FR_STR_BLOCK, str_blocks, str_blocks / 2);
	d->t.stacks = intern__new(FR_STACK_BLOCK, stk_blocks, stk_blocks / 2);
	d->t.procs = proctable__new(nprocs);
	if (!d->t.win || !d->t.strs || !d->t.stacks || !d->t.procs)
		return -errno;
	d->stage_cap = stage_cap;
	d->budget = window__budget(nev) + stage_cap * sizeof(struct fr_event) +
		    intern__budget(FR_STR_BLOCK, str_blocks, str_blocks / 2) +
		    intern__budget(FR_STACK_BLOCK, stk_blocks, stk_blocks / 2) +
		    proctable__budget(nprocs);
	/* Its own mapping: only the pages a backlog reached become resident. */
	d->stage = mmap(NULL, d->stage_cap * sizeof(*d->stage), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (d->stage == MAP_FAILED) {
		d->stage = NULL;
		return -errno;
	}
	return 0;
}

/*
 * drain__new() - set up the window and its tables within @memory_bytes,
 * keeping @span_ns of history. Everything is reserved here.
 * Returns NULL and sets errno.
 */
struct drain *drain__new(uint64_t memory_bytes, uint64_t span_ns)
{
	struct drain *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return NULL;
	d->page_shift = (unsigned)__builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE));
	d->held_tail = &d->held;
	d->held_cap = FR_MAX(FR_UCOPY_HELD_MIN, memory_bytes / FR_UCOPY_HELD_SHARE);
	err = make_tables(d, memory_bytes, span_ns);
	if (err) {
		drain__free(d);
		errno = -err;
		return NULL;
	}
	return d;
}

/* A stack entry freed: the stack_gone hook hears of it. */
static void stack_released(void *ctx, uint32_t id, uint32_t serial)
{
	struct drain *d = ctx;

	if (d->hooks.stack_gone)
		d->hooks.stack_gone(d->hooks.ctx, id, serial);
}

/* drain__set_hooks() - where to report new incarnations and stacks. */
void drain__set_hooks(struct drain *d, const struct drain_hooks *h)
{
	d->hooks = *h;
	intern__set_released(d->t.stacks, h->stack_gone ? stack_released : NULL, d);
}

static void put_refs(struct drain *d, const struct fr_event *ev);

void drain__free(struct drain *d)
{
	struct held *h;

	if (!d)
		return;
	/* What it frees now is no news: the hook's owner may be gone already. */
	intern__set_released(d->t.stacks, NULL, NULL);
	while ((h = d->held)) {
		d->held = h->next;
		put_refs(d, &h->ev);
		free(h);
	}
	if (d->stage)
		munmap(d->stage, d->stage_cap * sizeof(*d->stage));
	proctable__free(d->t.procs);
	intern__free(d->t.stacks);
	intern__free(d->t.strs);
	window__free(d->t.win);
	free(d);
}

/* Drop the reference of one field of an event, by its kind (evtype.h). */
static void put_ref(struct drain *d, uint8_t kind, uint32_t id)
{
	switch ((enum fr_evref)kind) {
	case FR_EVREF_VALUE:
	case FR_EVREF_THREAD:
		break;
	case FR_EVREF_STACK:
		intern__unref(d->t.stacks, id);
		break;
	case FR_EVREF_STR:
		intern__unref(d->t.strs, id);
		break;
	case FR_EVREF_PROC:
		proctable__unref(d->t.procs, id);
		break;
	}
}

/* Drop every reference an event holds: its process, comm, and what the
 * event table says its ref, arg and tid fields reference. */
static void put_refs(struct drain *d, const struct fr_event *ev)
{
	const struct fr_evtype *t = fr_evtype(ev->type);

	proctable__unref(d->t.procs, ev->proc);
	intern__unref(d->t.strs, ev->comm);
	if (!t)
		return;	/* the drain makes no event of a type the table lacks */
	put_ref(d, t->ref, ev->ref);
	put_ref(d, t->arg, ev->arg);
	put_ref(d, t->tid, ev->tid);
}

static void on_evict(void *ctx, const struct fr_event *ev)
{
	put_refs(ctx, ev);
}

/*
 * Table operations that may fail for space evict the oldest event and
 * retry: the memory cap covers events and what they reference alike.
 */
static int get_str(struct drain *d, uint32_t tag, const void *p, size_t len,
		   uint32_t *id)
{
	int err;

	while ((err = intern__get(d->t.strs, tag, p, len, id)) == -ENOSPC)
		if (window__evict_oldest(d->t.win))
			break;
	return err;
}

/*
 * User addresses mean something only in one address space, so a stack with
 * user frames is interned per incarnation: its tag carries the process
 * slot (see FR_STACK_TAG). Kernel-only stacks are shared by all.
 */
static int get_stack(struct drain *d, uint32_t kn, uint32_t un, uint32_t proc,
		     const void *ips, uint32_t *id)
{
	uint32_t tag = FR_STACK_TAG(kn, un ? proc : 0);
	size_t n = (size_t)kn + un;
	int err;

	*id = 0;
	if (!n)
		return 0;
	while ((err = intern__get(d->t.stacks, tag, ips, n * sizeof(uint64_t), id)) == -ENOSPC)
		if (window__evict_oldest(d->t.win))
			break;
	return err;
}

/*
 * announce() - tell the stack hook of stack @id if the table stored it
 * since it counted @inserted inserts: @kn + @un frames at @ips, of process
 * @slot, incarnation (@pid, @start), come with an event at @ts.
 */
static void announce(struct drain *d, uint64_t inserted, uint32_t id, uint32_t slot,
		     uint32_t pid, uint64_t start, uint64_t ts, const uint64_t *ips,
		     uint32_t kn, uint32_t un)
{
	struct drain_stack s = {
		.id = id, .tag = intern__tag(d->t.stacks, id), .slot = slot, .pid = pid,
		.start = start, .ts = ts, .ips = ips, .kn = kn, .un = un,
	};

	if (!d->hooks.stack || !id || intern__inserted(d->t.stacks) == inserted)
		return;
	intern__identity(d->t.stacks, id, &s.hash, &s.serial);
	d->hooks.stack(d->hooks.ctx, &s);
}

/* The entry of (@pid, @start): 0 found, 1 created, or -errno. */
static int get_proc(struct drain *d, uint32_t pid, uint64_t start,
		    const char *comm, uint32_t *slot)
{
	int err;

	while ((err = proctable__get(d->t.procs, pid, start, comm, slot)) == -ENOSPC)
		if (window__evict_oldest(d->t.win))
			break;
	return err;
}

/*
 * Does a stack with these FR_SAMPLE_* flags ask for the daemon's unwind
 * table? One walked without any, or with the one the BPF side built from
 * the process's VMAs (rows only for files known then; no file references).
 */
static bool wants_table(uint32_t flags)
{
	return (flags & FR_SAMPLE_UEND_MASK) >> FR_SAMPLE_UEND_SHIFT == FR_UEND_NO_TABLE ||
	       (flags & FR_SAMPLE_UKTAB);
}

/* Fill the fields every event has: time, incarnation, thread, comm. */
static int common(struct drain *d, const struct fr_rec_hdr *h, struct fr_event *ev)
{
	int err;

	memset(ev, 0, sizeof(*ev));
	ev->ts = h->ts;
	ev->tid = h->tid;
	ev->cpu = h->cpu;
	err = get_proc(d, h->tgid, h->start, h->comm, &ev->proc);
	if (err < 0)
		return err;
	/* New and running: read what it is while it lives. */
	if (err == 1 && d->hooks.proc)
		d->hooks.proc(d->hooks.ctx, ev->proc, h->tgid, h->start, false);
	err = get_str(d, FR_TAG_COMM, h->comm, strnlen(h->comm, FR_COMM_LEN), &ev->comm);
	if (err)
		proctable__unref(d->t.procs, ev->proc);
	return err;
}

static int hold(struct drain *d, const struct fr_rec_hdr *rh, uint32_t kn, uint32_t un,
		uint32_t flags, const __u64 *ips, size_t len, const struct fr_event *ev);

/*
 * python_sample() - the rest of make_sample() for sample @s (@len bytes,
 * made into @ev) that ends in its thread's Python frames: its user stack
 * is interned with them put in (pysplice.h). Such a sample is not held
 * for a walk on from its copy: the frames it has are spliced as they
 * are. A malformed section is counted and the native frames kept.
 */
static int python_sample(struct drain *d, const struct fr_rec_sample *s, size_t len,
			 struct fr_event *ev)
{
	uint64_t ips[2 * FR_MAX_STACK], inserted, eval[4];
	struct fr_pyframe pf[FR_PY_MAX_FRAMES];
	const struct fr_pyframe *at;
	const struct fr_pytail *t;
	uint32_t un = s->un, pn;
	bool cut = false;
	int err;

	memcpy(ips, s->ips, ((size_t)s->kn + s->un) * sizeof(uint64_t));
	t = fr_pysection(s, len, sizeof(*s) + ((size_t)s->kn + s->un) * sizeof(uint64_t), &at);
	if (!t) {
		d->st.py_bad++;
	} else {
		/* The record's parts are not all 8-byte aligned: copy them out. */
		memcpy(&pn, &t->pn, sizeof(pn));
		memcpy(eval, t->eval, sizeof(eval));
		memcpy(pf, at, pn * sizeof(pf[0]));
		un = fr_pysplice((const uint64_t *)s->ips + s->kn, s->un, pf, pn, eval,
				 ips + s->kn, 2 * FR_MAX_STACK - s->kn, &cut);
		d->st.py_samples++;
		d->st.py_frames += pn;
		if (cut)
			ev->flags |= FR_DSAMPLE_UTRUNC;
	}
	inserted = intern__inserted(d->t.stacks);
	err = get_stack(d, s->kn, un, ev->proc, ips, &ev->ref);
	if (err) {
		put_refs(d, ev);
		return err;
	}
	announce(d, inserted, ev->ref, ev->proc, s->h.tgid, s->h.start, s->h.ts, ips, s->kn, un);
	return 0;
}

static int make_sample(struct drain *d, const void *data, size_t len,
		       struct fr_event *ev)
{
	const struct fr_rec_sample *s = data;
	uint64_t inserted;
	size_t n;
	int err;

	if (len < sizeof(*s))
		return -EBADMSG;
	n = (size_t)s->kn + s->un;
	if (s->kn > FR_MAX_STACK || s->un > FR_MAX_STACK ||
	    len < sizeof(*s) + n * sizeof(uint64_t))
		return -EBADMSG;
	err = common(d, &s->h, ev);
	if (err)
		return err;
	ev->type = FR_EV_SAMPLE;
	/* The dump's sample flags: the five low bits as they are, the end code above. */
	ev->flags = (s->flags & 0x1f) |
		    ((s->flags & FR_SAMPLE_UEND_MASK) >> FR_SAMPLE_UEND_SHIFT) << FR_DSAMPLE_UEND_SHIFT;
	d->st.py_unreadable += !!(s->flags & FR_SAMPLE_PYERR);
	if (s->flags & FR_SAMPLE_PY)
		return python_sample(d, s, len, ev);
	inserted = intern__inserted(d->t.stacks);
	err = get_stack(d, s->kn, s->un, ev->proc, s->ips, &ev->ref);
	if (err) {
		put_refs(d, ev);
		return err;
	}
	if (s->un && d->hooks.no_table && wants_table(s->flags))
		d->hooks.no_table(d->hooks.ctx, s->h.tgid, s->h.start);
	announce(d, inserted, ev->ref, ev->proc, s->h.tgid, s->h.start, s->h.ts,
		 (const uint64_t *)s->ips, s->kn, s->un);
	return hold(d, &s->h, s->kn, s->un, s->flags, s->ips, len, ev);
}

/*
 * hold() - keep the sample, stall or block of @len bytes at @rh (made into
 * @ev; its stack kn + un frames at @ips, with FR_SAMPLE_* @flags) back from
 * staging while the copy of its user stack after them waits for rows.
 * Returns 1 held, 0 not (staged as the kernel walked it): no copy, no
 * finisher, a malformed copy, or the budget spent.
 */
static int hold(struct drain *d, const struct fr_rec_hdr *rh, uint32_t kn, uint32_t un,
		uint32_t flags, const __u64 *ips, size_t len, const struct fr_event *ev)
{
	size_t n = (size_t)kn + un, off = (size_t)((const char *)(ips + n) - (const char *)rh);
	const struct fr_ucopy *c = (const void *)(ips + n);
	struct held *h;
	size_t bytes;

	if (!(flags & FR_SAMPLE_UCOPY) || !d->hooks.finish)
		return 0;
	d->st.ucopy++;
	if (len < off + sizeof(*c) || c->len > FR_UCOPY_MAX || len - off - sizeof(*c) < c->len ||
	    c->at >= un) {
		d->st.bad++;
		return 0;
	}
	bytes = sizeof(*h) + n * sizeof(uint64_t) + c->len;
	if (d->held_bytes + bytes > d->held_cap || !(h = malloc(bytes))) {
		d->st.ucopy_refused++;
		return 0;
	}
	h->next = NULL;
	h->ev = *ev;
	h->pid = rh->tgid;
	h->start = rh->start;
	h->tried = 0;
	h->due = rh->ts + FR_UCOPY_WAIT_NS;
	h->kn = kn;
	h->un = un;
	h->bytes = bytes;
	h->c = *c;
	memcpy(h->ips, ips, n * sizeof(uint64_t));
	memcpy(h->ips + n, c + 1, c->len);
	*d->held_tail = h;
	d->held_tail = &h->next;
	d->held_bytes += bytes;
	if (++d->nheld > d->st.ucopy_held_max)
		d->st.ucopy_held_max = d->nheld;
	return 1;
}

/*
 * A finished stall's details say how its stack ended too (its blob's
 * stack_flags): the new end, in a new blob. Returns 0 or -errno.
 */
static int restamp_stall(struct drain *d, struct fr_event *ev, uint32_t end)
{
	struct fr_stall_info info = { 0 };
	size_t n = intern__copy(d->t.strs, ev->ref, &info, sizeof(info));
	uint32_t id;
	int err;

	info.stack_flags = (info.stack_flags & ~(uint32_t)(FR_DSAMPLE_UEND_MASK | FR_DSAMPLE_UTRUNC)) |
			   end << FR_DSAMPLE_UEND_SHIFT |
			   (end == FR_UEND_DEPTH ? FR_DSAMPLE_UTRUNC : 0) | FR_STALL_INFO_LATER;
	err = get_str(d, FR_TAG_STALL, &info, n, &id);
	if (err)
		return err;
	intern__unref(d->t.strs, ev->ref);
	ev->ref = id;
	return 0;
}

/* Was @h's process's exit record read? Its slot is referenced while held. */
static bool exit_read(struct drain *d, const struct held *h)
{
	struct fr_proc p;

	return !proctable__read(d->t.procs, h->ev.proc, &p) && p.pid == h->pid &&
	       p.start == h->start && (p.flags & FR_PROC_EXIT_READ);
}

/*
 * finish() - walk held record @h on from its copy (hooks.finish); on
 * success its event references the whole stack. Returns 1 done, 0 not
 * yet, or -errno: never (its process ended without rows, or its maps
 * changed since). An end is final only once the process's exit record
 * was read: the mappings its exit sends come just before it, and with
 * them the finisher walks on after the process is gone. A copy whose
 * rows are being built waits FR_UCOPY_BUILD_WAIT_NS from its sample.
 */
static int finish(struct drain *d, struct held *h)
{
	uint64_t ips[2 * FR_MAX_STACK], inserted;
	uint32_t at = h->c.at, end = 0, id;
	uint32_t *ref = h->ev.type == FR_EV_SAMPLE ? &h->ev.ref : &h->ev.arg;
	int n;

	memcpy(ips, h->ips, ((size_t)h->kn + at) * sizeof(uint64_t));
	n = d->hooks.finish(d->hooks.ctx, h->pid, h->start, &h->c,
			    (const uint8_t *)(h->ips + h->kn + h->un),
			    ips + h->kn + at, FR_MAX_STACK - at, &end);
	if (n == -ESRCH && !exit_read(d, h))
		return 0;
	if (n == -EINPROGRESS) {
		if (h->due < h->ev.ts + FR_UCOPY_BUILD_WAIT_NS) {
			h->due = h->ev.ts + FR_UCOPY_BUILD_WAIT_NS;
			d->st.ucopy_waited++;
		}
		return 0;
	}
	if (n <= 0)
		return n;
	inserted = intern__inserted(d->t.stacks);
	if (get_stack(d, h->kn, at + (uint32_t)n, h->ev.proc, ips, &id))
		return -ENOSPC;
	if (h->ev.type == FR_EV_STALL && restamp_stall(d, &h->ev, end)) {
		intern__unref(d->t.stacks, id);
		return -ENOSPC;
	}
	intern__unref(d->t.stacks, *ref);
	*ref = id;
	/* The end code sits in the same bits for the three types; the
	 * truncation bit is a sample's own (a stall's is in its blob). */
	h->ev.flags = (h->ev.flags & ~FR_DSAMPLE_UEND_MASK) | (uint8_t)(end << FR_DSAMPLE_UEND_SHIFT);
	if (h->ev.type == FR_EV_SAMPLE) {
		h->ev.flags = (h->ev.flags & ~FR_DSAMPLE_UTRUNC) |
			      (end == FR_UEND_DEPTH ? FR_DSAMPLE_UTRUNC : 0);
		h->ev.arg = FR_EVSAMPLE_LATER;
	}
	if (h->ev.type == FR_EV_OFFCPU)
		h->ev.ref |= FR_EVOFF_LATER;
	announce(d, inserted, id, h->ev.proc, h->pid, h->start, h->ev.ts, ips, h->kn,
		 at + (uint32_t)n);
	d->st.ucopy_finished++;
	return 1;
}

static void stage(struct drain *d, const struct fr_event *ev);

/* Why held samples are given up before their time (serve_held()). */
enum give_up {
	FR_GIVE_UP_FULL,	/* staging half full: the oldest, as few as will do */
	FR_GIVE_UP_DUMP,	/* a dump: every one, now */
};

/*
 * serve_held() - finish the held samples whose rows have come, and stage
 * them; stage the ones past their time as the kernel walked them. Time is
 * the watermark @now. Each is asked at most every FR_UCOPY_RETRY_NS, and
 * once a process's table cannot finish one of a maps generation, no other
 * of that generation in this pass. Those stamped before @before are given
 * up too (@why counts them), after one last try.
 */
static void serve_held(struct drain *d, uint64_t now, uint64_t before, enum give_up why)
{
	struct held **pp = &d->held, *h;
	uint64_t failed_start = 0;
	uint32_t failed_pid = 0, failed_gen = 0;

	while ((h = *pp)) {
		bool forced = h->ev.ts < before, done = false;
		int r = 0;

		if ((forced || now >= h->tried + FR_UCOPY_RETRY_NS) &&
		    !(h->pid == failed_pid && h->start == failed_start && h->c.gen == failed_gen)) {
			h->tried = now;
			r = finish(d, h);
			done = r > 0;
			if (!r) {
				failed_pid = h->pid;
				failed_start = h->start;
				failed_gen = h->c.gen;
			}
		}
		if (!done && (r < 0 || now >= h->due)) {
			d->st.ucopy_expired++;
			done = true;
		} else if (!done && forced) {
			d->st.ucopy_gave_up_full += why == FR_GIVE_UP_FULL;
			d->st.ucopy_gave_up_dump += why == FR_GIVE_UP_DUMP;
			done = true;
		}
		if (!done || d->nstage == d->stage_cap) {
			pp = &h->next;
			continue;
		}
		stage(d, &h->ev);
		*pp = h->next;
		d->held_bytes -= h->bytes;
		d->nheld--;
		free(h);
	}
	d->held_tail = pp;
}

/*
 * The time before which held samples are given up so that the staging
 * area, half full behind them, can release at least a quarter of its
 * room: that of the staged event a quarter in (staged events are in time
 * order; a later held one keeps waiting). 0 below half full.
 */
static uint64_t give_up_before(const struct drain *d)
{
	if (d->nstage < d->stage_cap / 2)
		return 0;
	return d->stage[d->stage_cap / 4].ts;
}

/* The newest time whose events may enter the window: before any held one. */
static uint64_t held_limit(const struct drain *d, uint64_t watermark)
{
	for (const struct held *h = d->held; h; h = h->next)
		if (h->ev.ts <= watermark)
			watermark = h->ev.ts - 1;
	return watermark;
}

static int make_exit(struct drain *d, const void *data, size_t len,
		     struct fr_event *ev)
{
	const struct fr_rec_exit *x = data;
	int err;

	if (len < sizeof(*x))
		return -EBADMSG;
	err = common(d, &x->h, ev);
	if (err)
		return err;
	/* Held records of it may now give up (finish()). */
	proctable__mark_exit_read(d->t.procs, ev->proc);
	ev->type = FR_EV_EXIT;
	ev->arg = (uint32_t)x->code;
	err = get_str(d, FR_TAG_EXIT, &x->st, sizeof(x->st), &ev->ref);
	if (err) {
		ev->ref = 0;
		put_refs(d, ev);
	}
	return err;
}

/*
 * take_maps() - an exiting process's code mappings (no event of its own):
 * to the exit_maps hook if the incarnation has an entry, i.e. events that
 * may need its frames named. Returns 1 (nothing staged) or -EBADMSG.
 */
static int take_maps(struct drain *d, const void *data, size_t len)
{
	const struct fr_rec_maps *r = data;
	uint32_t slot;

	if (len < offsetof(struct fr_rec_maps, m) || r->n > FR_XMAPS_MAX ||
	    len < offsetof(struct fr_rec_maps, m) + r->n * sizeof(r->m[0]))
		return -EBADMSG;
	d->st.exit_maps++;
	if (d->hooks.exit_maps && !proctable__find(d->t.procs, r->h.tgid, r->h.start, &slot))
		d->hooks.exit_maps(d->hooks.ctx, slot, r);
	return 1;
}

static int make_fork(struct drain *d, const void *data, size_t len,
		     struct fr_event *ev)
{
	const struct fr_rec_fork *f = data;
	int err;

	if (len < sizeof(*f))
		return -EBADMSG;
	err = common(d, &f->h, ev);
	if (err)
		return err;
	ev->type = FR_EV_FORK;
	ev->arg = f->child_pid;
	err = get_proc(d, f->child_pid, f->child_start, f->h.comm, &ev->ref);
	if (err < 0) {
		ev->ref = 0;
		put_refs(d, ev);
		return err;
	}
	if (err == 1 && d->hooks.fork)
		d->hooks.fork(d->hooks.ctx, ev->ref, f->child_pid, f->child_start, ev->proc,
			      f->h.tgid, f->h.start);
	return 0;
}

static int make_exec(struct drain *d, const void *data, size_t len,
		     struct fr_event *ev)
{
	const struct fr_rec_exec *x = data;
	int err;

	if (len < sizeof(*x))
		return -EBADMSG;
	err = common(d, &x->h, ev);
	if (err)
		return err;
	/* A new image: what is known becomes the old image's; read it again. */
	proctable__exec(d->t.procs, ev->proc, x->h.ts);
	if (d->hooks.proc)
		d->hooks.proc(d->hooks.ctx, ev->proc, x->h.tgid, x->h.start, true);
	ev->type = FR_EV_EXEC;
	ev->arg = x->old_tid;
	err = get_str(d, FR_TAG_PATH, x->filename,
		      strnlen(x->filename, sizeof(x->filename)), &ev->ref);
	if (err) {
		ev->ref = 0;
		put_refs(d, ev);
	}
	return err;
}

/*
 * splice_pybuf() - the @un native user frames at @ips with the Python
 * frames of whole section @py (an OOM record's, an RSS site's) put in,
 * when @flags (FR_SAMPLE_*) say it holds some; @ips has room for @cap.
 * Returns the new count of user frames. A malformed section is counted and
 * the native frames kept.
 */
static uint32_t splice_pybuf(struct drain *d, uint32_t flags, const struct fr_pybuf *py,
			     uint64_t *ips, uint32_t un, uint32_t cap)
{
	uint64_t native[FR_MAX_STACK], eval[4];
	struct fr_pyframe pf[FR_PY_MAX_FRAMES];
	uint32_t pn;
	bool cut = false;

	d->st.py_unreadable += !!(flags & FR_SAMPLE_PYERR);
	if (!(flags & FR_SAMPLE_PY) || !un)
		return un;
	memcpy(&pn, &py->tail.pn, sizeof(pn));
	if (!pn || pn > FR_PY_MAX_FRAMES || un > FR_MAX_STACK) {
		d->st.py_bad++;
		return un;
	}
	/* Copied out: the record's parts need not be aligned as these are. */
	memcpy(pf, py->f, pn * sizeof(pf[0]));
	memcpy(eval, py->tail.eval, sizeof(eval));
	memcpy(native, ips, un * sizeof(native[0]));
	d->st.py_frames += pn;
	return fr_pysplice(native, un, pf, pn, eval, ips, cap, &cut);
}

/*
 * The OOM invoker's incarnation and stack, its Python frames put in: @ev's
 * arg and tid (window.h). What cannot be had is left 0; only a full table
 * fails.
 */
static int oom_invoker(struct drain *d, const struct fr_rec_oom *o, size_t len,
		       struct fr_event *ev)
{
	uint64_t ips[2 * FR_MAX_STACK], inserted;
	uint32_t kn = FR_MIN(o->kn, FR_MAX_STACK), un = FR_MIN(o->un, FR_MAX_STACK);
	uint32_t slot = 0;
	int err;

	if (o->inv_tgid) {
		err = get_proc(d, o->inv_tgid, o->inv_start, o->inv_comm, &slot);
		if (err < 0)
			return err;
		if (err == 1 && d->hooks.proc)
			d->hooks.proc(d->hooks.ctx, slot, o->inv_tgid, o->inv_start, false);
	}
	ev->arg = slot;
	if (!slot)
		un = 0;	/* user addresses mean nothing without their process */
	memcpy(ips, o->ips, kn * sizeof(ips[0]));
	memcpy(ips + kn, o->ips + FR_MAX_STACK, un * sizeof(ips[0]));
	/* Since contract 12 the invoker's Python section follows the record. */
	if (len >= sizeof(*o) + sizeof(struct fr_pybuf))
		un = splice_pybuf(d, o->flags, (const struct fr_pybuf *)(o + 1), ips + kn, un,
				  2 * FR_MAX_STACK - kn);
	inserted = intern__inserted(d->t.stacks);
	err = get_stack(d, kn, un, slot, ips, &ev->tid);
	/* Named ahead, and its Python code objects read while the process may still live. */
	if (!err && slot)
		announce(d, inserted, ev->tid, slot, o->inv_tgid, o->inv_start, o->h.ts, ips, kn, un);
	return err;
}

static int make_oom(struct drain *d, const void *data, size_t len,
		    struct fr_event *ev)
{
	const struct fr_rec_oom *o = data;
	struct fr_oom_info info;
	int err;

	if (len < sizeof(*o))
		return -EBADMSG;
	err = common(d, &o->h, ev);
	if (err)
		return err;
	ev->type = FR_EV_OOM;
	ev->tid = 0;
	info = (struct fr_oom_info){
		.total_vm = o->total_vm, .rss_anon = o->rss_anon,
		.rss_file = o->rss_file, .rss_shmem = o->rss_shmem,
		.pgtables = o->pgtables, .oom_score_adj = o->oom_score_adj,
		.uid = o->uid, .swapents = o->swapents, .invoker_tid = o->inv_tid,
		.memcg_id = o->memcg_id, .memcg_usage = o->memcg_usage,
		.memcg_limit = o->memcg_limit,
	};
	if (o->memcg_id && d->hooks.memcg_path)
		d->hooks.memcg_path(d->hooks.ctx, o->memcg_id, info.memcg, sizeof(info.memcg));
	err = oom_invoker(d, o, len, ev);
	if (!err)
		err = get_str(d, FR_TAG_OOM, &info,
			      offsetof(struct fr_oom_info, memcg) + strnlen(info.memcg, sizeof(info.memcg)),
			      &ev->ref);
	if (err) {
		ev->ref = 0;
		put_refs(d, ev);
		return err;
	}
	if (d->hooks.oom)
		d->hooks.oom(d->hooks.ctx, o);
	return 0;
}

/* An RSS ledger entry: the value in pages, its age in us, no reference held. */
static int make_rss(struct drain *d, const void *data, size_t len,
		    struct fr_event *ev)
{
	const struct fr_rec_rss *r = data;
	uint64_t age, pages;
	int err;

	if (len < sizeof(*r) || r->member >= FR_RSS_NMEMBERS || r->why > FR_RSS_EXIT)
		return -EBADMSG;
	err = common(d, &r->h, ev);
	if (err)
		return err;
	ev->type = FR_EV_RSS;
	pages = r->value >> d->page_shift;
	ev->ref = (uint32_t)FR_MIN(pages, (uint64_t)UINT32_MAX);
	age = r->h.ts > r->changed ? (r->h.ts - r->changed) / 1000 : 0;
	ev->arg = (uint32_t)FR_MIN(age, (uint64_t)UINT32_MAX);
	ev->flags = r->member | r->why << FR_EVRSS_WHY_SHIFT;
	if (r->by_tgid) {
		ev->flags |= FR_EVRSS_OTHER;
		ev->tid = r->by_tgid;
	}
	return 0;
}

/*
 * Where the RSS grew: the thread's user stack, with its Python frames put
 * in (as a sample's), interned and announced (named ahead, its code
 * objects read while the process lives).
 */
static int make_rss_site(struct drain *d, const void *data, size_t len,
			 struct fr_event *ev)
{
	const struct fr_rec_rss_site *r = data;
	uint64_t ips[2 * FR_MAX_STACK], inserted, pages;
	uint32_t un;
	int err;

	if (len < sizeof(*r) || r->un > FR_MAX_STACK ||
	    (r->member != FR_RSS_ANON && r->member != FR_RSS_SHMEM))
		return -EBADMSG;
	err = common(d, &r->h, ev);
	if (err)
		return err;
	ev->type = FR_EV_RSS_SITE;
	ev->flags = r->member;
	pages = r->grown >> d->page_shift;
	ev->arg = (uint32_t)FR_MIN(pages, (uint64_t)UINT32_MAX);
	memcpy(ips, r->ips, (size_t)r->un * sizeof(ips[0]));
	un = splice_pybuf(d, r->flags, &r->py, ips, r->un, 2 * FR_MAX_STACK);
	inserted = intern__inserted(d->t.stacks);
	err = get_stack(d, 0, un, ev->proc, ips, &ev->ref);
	if (err) {
		put_refs(d, ev);
		return err;
	}
	announce(d, inserted, ev->ref, ev->proc, r->h.tgid, r->h.start, r->h.ts, ips, 0, un);
	return 0;
}

static int make_oomadj(struct drain *d, const void *data, size_t len,
		       struct fr_event *ev)
{
	const struct fr_rec_oomadj *r = data;
	int err;

	if (len < sizeof(*r) || r->value < -1000 || r->value > 1000)
		return -EBADMSG;
	err = common(d, &r->h, ev);
	if (err)
		return err;
	ev->type = FR_EV_OOMADJ;
	ev->arg = (uint32_t)r->value;
	ev->ref = r->by_tgid;
	return 0;
}

/*
 * A stall's or a block's stack (@kn kernel frames, then @un user frames
 * at @ips, walked as FR_SAMPLE_* @flags say) into *@id, and the hooks a
 * sample's stack calls: no table yet, a new stack.
 */
static int stall_stack(struct drain *d, const struct fr_rec_hdr *h, uint32_t proc,
		       uint32_t kn, uint32_t un, const __u64 *ips, uint32_t flags,
		       uint32_t *id)
{
	uint64_t inserted = intern__inserted(d->t.stacks);
	int err = get_stack(d, kn, un, proc, ips, id);

	if (!err && un && d->hooks.no_table && wants_table(flags))
		d->hooks.no_table(d->hooks.ctx, h->tgid, h->start);
	if (!err)
		announce(d, inserted, *id, proc, h->tgid, h->start, h->ts, (const uint64_t *)ips,
			 kn, un);
	return err;
}

/* The window's flags of a stall's or block's @kind with its stack's @flags. */
static uint8_t stall_flags(uint32_t kind, uint32_t flags)
{
	return (uint8_t)(kind | ((flags & FR_SAMPLE_UEND_MASK) >> FR_SAMPLE_UEND_SHIFT)
					 << FR_DSAMPLE_UEND_SHIFT);
}

/* The dump's flags of a stack's FR_SAMPLE_* bits: as a sample's. */
static uint32_t dump_stack_flags(uint32_t flags)
{
	return (flags & 0x1f) |
	       ((flags & FR_SAMPLE_UEND_MASK) >> FR_SAMPLE_UEND_SHIFT) << FR_DSAMPLE_UEND_SHIFT;
}

/* A reclaim, compaction or throttle stall: its details a blob, its stack in arg. */
static int make_stall(struct drain *d, const void *data, size_t len,
		      struct fr_event *ev)
{
	const struct fr_rec_stall *r = data;
	struct fr_stall_info info;
	int err;

	if (len < sizeof(*r) || r->kn > FR_MAX_STACK || r->un > FR_MAX_STACK ||
	    len < sizeof(*r) + ((size_t)r->kn + r->un) * sizeof(uint64_t) ||
	    r->kind > FR_STALL_THROTTLE || r->begin > r->h.ts)
		return -EBADMSG;
	err = common(d, &r->h, ev);
	if (err)
		return err;
	ev->type = FR_EV_STALL;
	ev->flags = stall_flags(r->kind, r->flags);
	info = (struct fr_stall_info){
		.begin = r->begin, .result = r->result, .memcg_id = r->memcg_id,
		.gfp = r->gfp, .order = r->order, .reason = r->reason,
		.stack_flags = dump_stack_flags(r->flags),
	};
	if (r->memcg_id && d->hooks.memcg_path)
		d->hooks.memcg_path(d->hooks.ctx, r->memcg_id, info.memcg, sizeof(info.memcg));
	err = stall_stack(d, &r->h, ev->proc, r->kn, r->un, r->ips, r->flags,
			  &ev->arg);
	if (!err)
		err = get_str(d, FR_TAG_STALL, &info,
			      offsetof(struct fr_stall_info, memcg) +
			      strnlen(info.memcg, sizeof(info.memcg)), &ev->ref);
	if (err) {
		ev->ref = 0;
		put_refs(d, ev);
		return err;
	}
	return hold(d, &r->h, r->kn, r->un, r->flags, r->ips, len, ev);
}

/* The kernel's TASK_WAKEKILL: a fatal signal ends the wait (a killable D). */
#define FR_TASK_WAKEKILL	0x100

/* A block off the CPU: its length in ref (ns, else us), its stack in arg. */
static int make_offcpu(struct drain *d, const void *data, size_t len,
		       struct fr_event *ev)
{
	const struct fr_rec_offcpu *r = data;
	uint64_t dur;
	int err;

	if (len < sizeof(*r) || r->kn > FR_MAX_STACK || r->un > FR_MAX_STACK ||
	    len < sizeof(*r) + ((size_t)r->kn + r->un) * sizeof(uint64_t) ||
	    (r->kind != FR_STALL_BLOCKED && r->kind != FR_STALL_SLEEP) || r->begin > r->h.ts)
		return -EBADMSG;
	err = common(d, &r->h, ev);
	if (err)
		return err;
	ev->type = FR_EV_OFFCPU;
	ev->flags = stall_flags(r->kind, r->flags);
	if (r->state & FR_TASK_WAKEKILL)
		ev->flags |= FR_EVOFF_KILLABLE;
	dur = r->h.ts - r->begin;
	if (dur > FR_EVOFF_LEN_MAX) {
		ev->flags |= FR_EVOFF_US;
		dur = FR_MIN(dur / 1000, (uint64_t)FR_EVOFF_LEN_MAX);
	}
	ev->ref = (uint32_t)dur;
	err = stall_stack(d, &r->h, ev->proc, r->kn, r->un, r->ips, r->flags,
			  &ev->arg);
	if (err) {
		put_refs(d, ev);
		return err;
	}
	return hold(d, &r->h, r->kn, r->un, r->flags, r->ips, len, ev);
}

/* Insert into the staging area, keeping it sorted (input is nearly sorted). */
static void stage(struct drain *d, const struct fr_event *ev)
{
	size_t i = d->nstage;

	while (i && d->stage[i - 1].ts > ev->ts) {
		d->stage[i] = d->stage[i - 1];
		i--;
	}
	d->stage[i] = *ev;
	d->nstage++;
}

/* Apply an event's meaning to the process table, in watermark order. */
static void apply(struct drain *d, const struct fr_event *ev)
{
	struct fr_proc p;

	switch ((enum fr_event_type)ev->type) {
	case FR_EV_EXIT:
		if (!proctable__read(d->t.procs, ev->proc, &p) &&
		    (p.flags & FR_PROC_EXITED)) {
			d->st.dup_exits++;
			break;
		}
		proctable__mark_exit(d->t.procs, ev->proc, ev->ts, (int32_t)ev->arg);
		break;
	case FR_EV_FORK:
		if (!proctable__read(d->t.procs, ev->proc, &p))
			proctable__set_parent(d->t.procs, ev->ref, p.pid);
		break;
	case FR_EV_EXEC: {
		char comm[FR_COMM_LEN + 1] = "";

		intern__copy(d->t.strs, ev->comm, comm, FR_COMM_LEN);
		proctable__mark_exec(d->t.procs, ev->proc, comm);
		break;
	}
	case FR_EV_SAMPLE:
	case FR_EV_OOM:
	case FR_EV_PRESSURE:
	case FR_EV_RSS:
	case FR_EV_OOMADJ:
	case FR_EV_MEMSYS:
	case FR_EV_MEMCG:
	case FR_EV_STALL:
	case FR_EV_OFFCPU:
	case FR_EV_STALLSUM:
	case FR_EV_RSS_SITE:
		break;	/* no change to the process's life */
	}
}

static void release_one(struct drain *d, const struct fr_event *ev)
{
	if (ev->ts < d->last_released)
		d->st.late++;
	else
		d->last_released = ev->ts;
	window__append(d->t.win, ev);
	apply(d, ev);
	if (ev->type <= FR_EV_TYPE_MAX)
		d->st.by_type[ev->type]++;
}

/*
 * stage_trim() - give back the staging pages above the events staged once
 * they have stayed well above them (idpool__trim_due()): a backlog's.
 */
static void stage_trim(struct drain *d, uint64_t now)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = d->stage_cap * sizeof(*d->stage);
	size_t from = FR_ALIGN(d->nstage * sizeof(*d->stage), pg);
	uint64_t touched = FR_ALIGN(d->stage_hi * sizeof(*d->stage), pg), above;

	if (!idpool__trim_due(&d->stage_trim, now, touched, d->nstage * sizeof(*d->stage)))
		return;
	d->stage_trim.above_since = 0;
	d->stage_hi = d->nstage;
	above = from < len ? fr_resident_bytes((char *)d->stage + from, len - from) : 0;
	if (!above)
		return;
	if (fr_pages_release((char *)d->stage + from, len - from)) {
		d->stage_trim.release_failed++;
		return;
	}
	d->stage_trim.shrinks++;
	d->stage_trim.pages_released += above / pg;
}

/* trim_tables() - once a second: each table gives back what its need left. */
static void trim_tables(struct drain *d, uint64_t now)
{
	intern__trim(d->t.stacks, now);
	intern__trim(d->t.strs, now);
	proctable__trim(d->t.procs, now);
	stage_trim(d, now);
}

/*
 * drain__release() - move every staged event stamped at or before
 * @watermark into the window, oldest first, then age the window out
 * relative to the newest time the watermark vouches for. A record held
 * for its copy (hold()) holds the release back before it, unless forced
 * (UINT64_MAX); with the staging area half full, the held are given up.
 */
void drain__release(struct drain *d, uint64_t watermark)
{
	size_t i = 0;

	if (d->held) {
		/* Never hold the window back past half the staging area: the
		 * oldest held are given up first (an 8 MiB cap stages 4096
		 * events). */
		serve_held(d, watermark, give_up_before(d), FR_GIVE_UP_FULL);
		if (watermark != UINT64_MAX)	/* forced: everything staged goes */
			watermark = held_limit(d, watermark);
	}
	if (d->nstage > d->stage_hi)
		d->stage_hi = d->nstage;
	while (i < d->nstage && d->stage[i].ts <= watermark)
		release_one(d, &d->stage[i++]);
	if (i) {
		memmove(d->stage, d->stage + i, (d->nstage - i) * sizeof(*d->stage));
		d->nstage -= i;
	}
	window__expire(d->t.win, watermark);
	if (watermark >= d->next_trim) {
		d->next_trim = watermark + FR_NSEC_PER_SEC;
		trim_tables(d, watermark);
	}
}

/*
 * drain__record() - turn one BPF record into a staged event. A full
 * staging area releases up to the last watermark first, then everything
 * (counted as forced). Returns 0; malformed records and records dropped for
 * space are counted, not fatal.
 */
int drain__record(struct drain *d, const void *data, size_t len)
{
	const struct fr_rec_hdr *h = data;
	struct fr_event ev;
	int err;

	d->st.records++;
	if (len < sizeof(*h) || h->size > len) {
		d->st.bad++;
		return 0;
	}
	if (d->nstage == d->stage_cap) {
		drain__release(d, d->watermark);
		if (d->nstage == d->stage_cap) {
			d->st.forced += d->nstage;
			drain__release(d, UINT64_MAX);
		}
	}
	err = -EBADMSG;	/* a type no case below names */
	switch ((enum fr_rec_type)h->type) {
	case FR_REC_SAMPLE:
		err = make_sample(d, data, len, &ev);
		break;
	case FR_REC_EXIT:
		err = make_exit(d, data, len, &ev);
		break;
	case FR_REC_FORK:
		err = make_fork(d, data, len, &ev);
		break;
	case FR_REC_EXEC:
		err = make_exec(d, data, len, &ev);
		break;
	case FR_REC_OOM:
		err = make_oom(d, data, len, &ev);
		break;
	case FR_REC_RSS:
		err = make_rss(d, data, len, &ev);
		break;
	case FR_REC_OOMADJ:
		err = make_oomadj(d, data, len, &ev);
		break;
	case FR_REC_RSS_SITE:
		err = make_rss_site(d, data, len, &ev);
		break;
	case FR_REC_STALL:
		err = make_stall(d, data, len, &ev);
		break;
	case FR_REC_OFFCPU:
		err = make_offcpu(d, data, len, &ev);
		break;
	case FR_REC_MAPS:
		err = take_maps(d, data, len);
		break;
	case FR_REC_TASK:
		break;	/* the task iterator's, never on the ring */
	}
	if (err == -EBADMSG)
		d->st.bad++;
	else if (err < 0)
		d->st.dropped++;
	else if (!err)
		stage(d, &ev);
	/* else held: its copy waits for rows (hold()) */
	return 0;
}

/*
 * add_reading() - stage a reading the daemon took at @ts from @source: a
 * source string and a blob of @len bytes tagged @tag. It enters the window
 * in time order with the kernel's events. Returns 0, or -errno (counted as
 * dropped).
 */
static int add_reading(struct drain *d, uint64_t ts, uint8_t type, uint16_t cpu,
		       const char *source, uint32_t tag, const void *blob, size_t len)
{
	struct fr_event ev = { .ts = ts, .type = type, .cpu = cpu };
	int err;

	if (d->nstage == d->stage_cap)
		drain__release(d, d->watermark);
	if (d->nstage == d->stage_cap) {
		d->st.dropped++;
		return -ENOSPC;
	}
	err = get_str(d, FR_TAG_COMM, source, strlen(source), &ev.comm);
	if (!err) {
		err = get_str(d, tag, blob, len, &ev.ref);
		if (err)
			intern__unref(d->t.strs, ev.comm);
	}
	if (err) {
		d->st.dropped++;
		return err;
	}
	stage(d, &ev);
	return 0;
}

/*
 * drain__add_pressure() - stage a pressure reading taken by the daemon at
 * @ts from @source ("" for /proc/pressure).
 */
int drain__add_pressure(struct drain *d, uint64_t ts, const char *source,
			const struct fr_pressure_info *info)
{
	return add_reading(d, ts, FR_EV_PRESSURE, info->resource, source,
			   FR_TAG_PRESSURE, info, sizeof(*info));
}

/* drain__add_memsys() - stage the system's memory as read at @ts. */
int drain__add_memsys(struct drain *d, uint64_t ts, const struct fr_dump_memsys *m)
{
	return add_reading(d, ts, FR_EV_MEMSYS, 0, "", FR_TAG_MEMSYS, m, sizeof(*m));
}

/* drain__add_memcg() - stage memory cgroup @path's usage as read at @ts. */
int drain__add_memcg(struct drain *d, uint64_t ts, const char *path,
		     const struct fr_dump_memcg *m)
{
	return add_reading(d, ts, FR_EV_MEMCG, 0, path, FR_TAG_MEMCG, m, sizeof(*m));
}

/*
 * drain__add_stallsum() - stage the sums of one @kind of the stalls of
 * incarnation (@pid, @start) since the last reading, as read at @ts;
 * @comm names it if the process table does not know it any more.
 */
int drain__add_stallsum(struct drain *d, uint64_t ts, uint32_t pid, uint64_t start,
			const char *comm, unsigned kind, const struct fr_stallsum_info *s)
{
	struct fr_event ev = { .ts = ts, .type = FR_EV_STALLSUM, .flags = (uint8_t)kind };
	char name[FR_COMM_LEN] = "";
	int err;

	if (kind >= FR_STALL_NKINDS)
		return -EINVAL;
	if (d->nstage == d->stage_cap)
		drain__release(d, d->watermark);
	if (d->nstage == d->stage_cap) {
		d->st.dropped++;
		return -ENOSPC;
	}
	strncpy(name, comm, sizeof(name) - 1);
	err = get_proc(d, pid, start, name, &ev.proc);
	if (err < 0)
		goto fail;
	err = get_str(d, FR_TAG_COMM, name, strlen(name), &ev.comm);
	if (!err)
		err = get_str(d, FR_TAG_STALLSUM, s, sizeof(*s), &ev.ref);
	if (err) {
		put_refs(d, &ev);
		goto fail;
	}
	stage(d, &ev);
	return 0;
fail:
	d->st.dropped++;
	return err;
}

static int record_cb(void *ctx, const void *data, size_t len)
{
	return drain__record(ctx, data, len);
}

/*
 * drain__pump() - consume the records committed when the pass began (no
 * more: producers faster than the drain cannot keep the daemon's loop from
 * its other work). When the pass reaches that point with no record left
 * half-written, every event stamped before the pass began, less the slack,
 * has been seen: the watermark moves there.
 * Staged events up to the watermark enter the window.
 * Returns the number of records consumed, or -errno.
 */
int drain__pump(struct drain *d, struct ringbuf *rb)
{
	uint64_t t0 = fr_boottime_ns();
	int n = 0, r, spins = 0;
	bool busy;

	for (;;) {
		r = ringbuf__consume(rb, record_cb, d, &busy);
		if (r < 0)
			return r;
		n += r;
		if (!busy)
			break;
		if (++spins > FR_BUSY_SPINS) {
			d->st.busy_passes++;
			drain__release(d, d->watermark);
			return n;
		}
		sched_yield();
	}
	if (t0 > FR_DRAIN_SLACK_NS && t0 - FR_DRAIN_SLACK_NS > d->watermark)
		d->watermark = t0 - FR_DRAIN_SLACK_NS;
	drain__release(d, d->watermark);
	return n;
}

/*
 * drain__sync() - drain until the watermark is at or past @until, without
 * waiting for the next tick: waits out the slack, then pumps. Returns 0,
 * -ETIMEDOUT after @timeout_ns, or -errno.
 */
int drain__sync(struct drain *d, struct ringbuf *rb, uint64_t until,
		uint64_t timeout_ns)
{
	uint64_t deadline = fr_boottime_ns() + timeout_ns;
	int r;

	while (d->watermark < until) {
		uint64_t now = fr_boottime_ns();

		if (now >= deadline)
			return -ETIMEDOUT;
		if (now < until + FR_DRAIN_SLACK_NS) {
			uint64_t wait = until + FR_DRAIN_SLACK_NS - now;
			struct timespec ts = {
				.tv_sec = wait / FR_NSEC_PER_SEC,
				.tv_nsec = wait % FR_NSEC_PER_SEC,
			};

			nanosleep(&ts, NULL);
		}
		r = drain__pump(d, rb);
		if (r < 0)
			return r;
	}
	drain__settle(d);
	return 0;
}

/*
 * drain__settle() - for a dump, which does not wait for rows: finish now
 * what the held samples' rows allow, give up the rest (staged as the
 * kernel walked them), and release up to the watermark.
 */
void drain__settle(struct drain *d)
{
	if (!d->held)
		return;
	serve_held(d, d->watermark, UINT64_MAX, FR_GIVE_UP_DUMP);
	drain__release(d, d->watermark);
}

uint64_t drain__watermark(const struct drain *d)
{
	return d->watermark;
}

/*
 * drain__footprint() - each table's resident bytes against what its
 * contents need, and how often it gave pages back.
 */
void drain__footprint(const struct drain *d, struct drain_footprint *out)
{
	const struct window_stats *ws = window__stats(d->t.win);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct window_footprint wf;
	struct intern_stats is;
	struct proctable_stats ps;

	memset(out, 0, sizeof(*out));
	window__footprint(d->t.win, &wf);
	out->window = (struct drain_footprint_part){ wf.resident_bytes, wf.live_bytes,
		ws->shrinks, ws->chunks_released * wf.chunk_bytes };
	intern__footprint(d->t.stacks, &out->stacks.resident, &out->stacks.live);
	intern__stats(d->t.stacks, &is);
	out->stacks.shrinks = is.shrinks;
	out->stacks.released_bytes = is.pages_released * pg;
	intern__footprint(d->t.strs, &out->strings.resident, &out->strings.live);
	intern__stats(d->t.strs, &is);
	out->strings.shrinks = is.shrinks;
	out->strings.released_bytes = is.pages_released * pg;
	proctable__footprint(d->t.procs, &out->procs.resident, &out->procs.live);
	proctable__stats(d->t.procs, &ps);
	out->procs.shrinks = ps.shrinks;
	out->procs.released_bytes = ps.pages_released * pg;
	out->stage.resident = fr_resident_bytes(d->stage, d->stage_cap * sizeof(*d->stage));
	out->stage.live = d->nstage * sizeof(*d->stage);
	out->stage.shrinks = d->stage_trim.shrinks;
	out->stage.released_bytes = d->stage_trim.pages_released * pg;
	out->all.resident = out->window.resident + out->stacks.resident + out->strings.resident +
			    out->procs.resident + out->stage.resident;
	out->all.live = out->window.live + out->stacks.live + out->strings.live +
			out->procs.live + out->stage.live;
}

const struct drain_tables *drain__tables(const struct drain *d)
{
	return &d->t;
}

const struct drain_stats *drain__stats(const struct drain *d)
{
	return &d->st;
}

size_t drain__held(const struct drain *d)
{
	return d->nheld;
}

size_t drain__staged(const struct drain *d)
{
	return d->nstage;
}

/* drain__budget() - bytes reserved for the window and its tables (staging included). */
uint64_t drain__budget(const struct drain *d)
{
	return d->budget;
}

/* drain__hold() - a reader starts: defer frees in every table. */
void drain__hold(struct drain *d)
{
	intern__hold(d->t.stacks);
	intern__hold(d->t.strs);
	proctable__hold(d->t.procs);
}

void drain__release_hold(struct drain *d)
{
	proctable__release(d->t.procs);
	intern__release(d->t.strs);
	intern__release(d->t.stacks);
}
