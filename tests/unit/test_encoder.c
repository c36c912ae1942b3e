// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_encoder.c - the encoder against the reader library: a window made
 * of known records (two incarnations, a fork, an exec, samples sharing a
 * stack, an exit, a memory reading) goes through the drain, the encoder
 * and the format writer into memory; the reader parses it back. Every
 * event must come out once, in time order, with the incarnation, thread,
 * comm and body it went in with; and the reader's model, written again,
 * must give the encoder's stream byte for byte (nothing the reader drops
 * or reorders, nothing the encoder writes that the reader cannot carry).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "drain.h"
#include "encoder.h"
#include "evtype.h"
#include "format.h"
#include "symbols.h"
#include "tap.h"
#include "util.h"

#define MS	(1000 * 1000ULL)
#define SEC	(1000 * MS)
/* pid_max is at most 2^22: no /proc entry answers for these. */
#define PID_A	4194400u
#define PID_B	4194401u
#define START_A	(1 * SEC)
#define START_B	(2 * SEC + 100 * MS)

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static int sink_buf(void *ctx, const void *data, size_t len)
{
	struct buf *b = ctx;

	if (b->len + len > b->cap) {
		size_t cap = (b->len + len) * 2;
		unsigned char *p = realloc(b->p, cap);

		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

static void hdr(struct fr_rec_hdr *h, uint16_t type, uint32_t size, uint32_t pid,
		uint64_t start, uint64_t ts, const char *comm)
{
	h->ts = ts;
	h->start = start;
	h->tgid = pid;
	h->tid = pid;
	h->type = type;
	h->cpu = 1;
	h->size = size;
	snprintf(h->comm, sizeof(h->comm), "%s", comm);
}

/* A sample of thread @tid of (@pid, @start) with 2 kernel frames and @un user frames. */
static void sample_tid(struct drain *d, uint32_t pid, uint32_t tid, uint64_t start, uint64_t ts,
		       const char *comm, unsigned un)
{
	union {
		struct fr_rec_sample s;
		unsigned char raw[sizeof(struct fr_rec_sample) + 8 * sizeof(uint64_t)];
	} r = {};

	hdr(&r.s.h, FR_REC_SAMPLE, sizeof(r.s) + (2 + un) * sizeof(uint64_t), pid, start,
	    ts, comm);
	r.s.h.tid = tid;
	r.s.kn = 2;
	r.s.un = (uint16_t)un;
	r.s.ips[0] = 0xffffffff81000100ULL;
	r.s.ips[1] = 0xffffffff81000200ULL;
	for (unsigned i = 0; i < un; i++)
		r.s.ips[2 + i] = 0x401000 + 0x10 * i;
	if (drain__record(d, &r, r.s.h.size))
		tap_diag("sample at %llu refused", (unsigned long long)ts);
}

static void sample(struct drain *d, uint32_t pid, uint64_t start, uint64_t ts,
		   const char *comm, unsigned un)
{
	sample_tid(d, pid, pid, start, ts, comm, un);
}

/* The window: every record type the drain turns into an event of its own. */
static struct drain *make_window(void)
{
	struct drain *d = drain__new(16 << 20, 60 * SEC);
	struct fr_rec_fork f = {};
	struct fr_rec_exec x = {};
	struct fr_rec_exit e = {};
	struct fr_dump_memsys m = {};

	if (!d)
		return NULL;
	sample(d, PID_A, START_A, 2 * SEC, "frenc-a", 3);
	hdr(&f.h, FR_REC_FORK, sizeof(f), PID_A, START_A, 2 * SEC + 100 * MS, "frenc-a");
	f.child_pid = PID_B;
	f.child_start = START_B;
	drain__record(d, &f, sizeof(f));
	hdr(&x.h, FR_REC_EXEC, sizeof(x), PID_B, START_B, 2 * SEC + 200 * MS, "frenc-b");
	x.old_tid = PID_B;
	snprintf(x.filename, sizeof(x.filename), "/usr/bin/frenc-b");
	drain__record(d, &x, sizeof(x));
	sample(d, PID_B, START_B, 2 * SEC + 300 * MS, "frenc-b", 2);
	sample(d, PID_A, START_A, 2 * SEC + 400 * MS, "frenc-a", 3);
	m.v[FR_MSYS_MEM_AVAILABLE] = 123 << 20;
	drain__add_memsys(d, 2 * SEC + 450 * MS, &m);
	hdr(&e.h, FR_REC_EXIT, sizeof(e), PID_B, START_B, 2 * SEC + 500 * MS, "frenc-b");
	e.code = 9;	/* killed by SIGKILL */
	e.st.rss_anon = 5 << 20;
	e.st.utime = 7 * MS;
	drain__record(d, &e, sizeof(e));
	/* A thread whose tid shares the main thread's hint slot; then the main thread renamed. */
	sample_tid(d, PID_A, PID_A + 256, START_A, 2 * SEC + 600 * MS, "frenc-t", 3);
	sample(d, PID_A, START_A, 2 * SEC + 700 * MS, "frenc-a2", 3);
	drain__release(d, 3 * SEC);	/* UINT64_MAX would age every event out */
	tap_diag("window: %llu events", (unsigned long long)(window__head(drain__tables(d)->win) -
							    window__tail(drain__tables(d)->win)));
	return d;
}

static int next_model_event(void *ctx, struct fr_dump_event *ev)
{
	struct { const struct fr_dump *d; uint32_t i; } *it = ctx;

	if (it->i == it->d->nev)
		return 0;
	*ev = it->d->ev[it->i++];
	return 1;
}

/* Encode @d's whole window into @out (the uncompressed stream). 0 or -errno. */
static int encode(struct drain *d, struct symcache *sc, struct buf *out)
{
	const struct drain_tables *t = drain__tables(d);
	struct symbolizer *sym = symbolizer__new(sc);
	struct encode_in in = {
		.t = t, .sym = sym, .first = window__tail(t->win), .last = window__head(t->win),
		.resolve_timeout_ns = SEC,
	};
	struct fr_dump model;
	struct encoder *enc;
	uint64_t nev = 0;
	int err;

	dump__init(&model);
	model.win = (struct fr_dump_window){ .start = SEC, .end = 3 * SEC, .watermark = 3 * SEC,
					     .span = 60 * SEC };
	enc = sym ? encoder__new(&in, &model) : NULL;
	err = enc ? encoder__prepare(enc) : -ENOMEM;
	if (!err)
		err = dump__write(&model, encoder__next_event, enc, sink_buf, out, &nev);
	encoder__free(enc);
	dump__free(&model);
	symbolizer__free(sym);
	return err;
}

static const struct fr_dump_proc *proc_of(const struct fr_dump *d, uint32_t pid)
{
	for (uint32_t i = 0; i < d->nproc; i++)
		if (d->proc[i].pid == pid)
			return &d->proc[i];
	return NULL;
}

/* The name of thread @tid of dump process @p; NULL when the dump has no such thread. */
static const char *thread_name(const struct fr_dump *d, const struct fr_dump_proc *p,
			       uint32_t tid)
{
	const char *name = NULL;
	int n = 0;

	for (uint32_t i = 0; i < d->nthread; i++)
		if (&d->proc[d->thread[i].proc] == p && d->thread[i].tid == tid) {
			name = dump__str(d, d->thread[i].name);
			n++;
		}
	return n == 1 ? name : NULL;
}

static void check_events(const struct fr_dump *d)
{
	static const uint8_t want[] = { FR_DEV_SAMPLE, FR_DEV_FORK, FR_DEV_EXEC, FR_DEV_SAMPLE,
					FR_DEV_SAMPLE, FR_DEV_MEMSYS, FR_DEV_EXIT, FR_DEV_SAMPLE,
					FR_DEV_SAMPLE };
	const struct fr_dump_proc *a = proc_of(d, PID_A), *b = proc_of(d, PID_B);
	bool order = d->nev == FR_ARRAY_SIZE(want);

	for (uint32_t i = 0; order && i < d->nev; i++)
		order = d->ev[i].type == want[i] && (!i || d->ev[i].ts > d->ev[i - 1].ts);
	ok(order, "9 events, each once, in time order and of its type (%u read back)", d->nev);
	if (!order || !a || !b) {
		ok(0, "both incarnations are in the dump");
		return;
	}
	ok(a->start == START_A && b->start == START_B && b->ppid == PID_A,
	   "both incarnations, by (pid, start), the child's parent from the fork");
	ok(&d->proc[d->ev[0].proc] == a && &d->proc[d->ev[3].proc] == b &&
	   &d->proc[d->ev[1].child] == b,
	   "samples belong to their incarnation, the fork names the child's");
	ok(!strcmp(dump__str(d, d->ev[2].filename), "/usr/bin/frenc-b") &&
	   !strcmp(dump__str(d, d->ev[2].comm), "frenc-b") &&
	   !strcmp(dump__str(d, d->ev[0].comm), "frenc-a"),
	   "the exec's filename and each event's comm");
	ok(d->ev[0].stack && d->ev[0].stack == d->ev[4].stack &&
	   d->ev[3].stack && d->ev[3].stack != d->ev[0].stack,
	   "the same stack twice is one stack of the dump, another process's is its own");
	ok(d->ev[0].stack && d->stack[d->ev[0].stack - 1].kn == 2,
	   "with its two kernel frames");
	ok(d->ev[6].exit.code == 9 && d->ev[6].exit.rss_anon == 5 << 20 &&
	   d->ev[6].exit.utime == 7 * MS && d->ev[6].tid == PID_B,
	   "the exit's status and counters");
	ok(d->ev[5].msys.v[FR_MSYS_MEM_AVAILABLE] == 123 << 20 &&
	   !dump__event_has_proc(d->ev[5].type),
	   "the memory reading, of no process");
	ok(thread_name(d, a, PID_A) && !strcmp(thread_name(d, a, PID_A), "frenc-a2") &&
	   thread_name(d, a, PID_A + 256) && !strcmp(thread_name(d, a, PID_A + 256), "frenc-t") &&
	   thread_name(d, b, PID_B) && !strcmp(thread_name(d, b, PID_B), "frenc-b") &&
	   !thread_name(d, b, PID_A + 256) && !thread_name(d, a, PID_B),
	   "threads: each once under its process, a later name wins, tids that share a hint apart");
}

int main(void)
{
	struct symcache *sc = symcache__new();
	struct drain *d = make_window();
	struct buf enc = {}, again = {};
	struct fr_dump out;
	char err[256] = "";
	int e;

	if (!sc || !d) {
		printf("Bail out! set up the drain and symbol cache: %s\n", strerror(errno));
		return 1;
	}
	e = encode(d, sc, &enc);
	is_int(e, 0, "the window encodes (%zu bytes)", enc.len);
	dump__init(&out);
	/* dump__parse() takes the buffer it is given: hand it a copy. */
	again.p = malloc(enc.len ? enc.len : 1);
	if (again.p)
		memcpy(again.p, enc.p, enc.len);
	e = again.p ? dump__parse(&out, again.p, enc.len, err, sizeof(err)) : -ENOMEM;
	is_int(e, 0, "the reader parses it%s%s", *err ? ": " : "", err);
	again = (struct buf){};
	if (!e) {
		struct { const struct fr_dump *d; uint32_t i; } it = { &out, 0 };
		uint64_t n = 0;

		check_events(&out);
		e = dump__write(&out, next_model_event, &it, sink_buf, &again, &n);
		ok(!e && again.len == enc.len && !memcmp(again.p, enc.p, enc.len),
		   "the reader's model written again is the encoder's stream byte for byte "
		   "(%zu and %zu bytes)", enc.len, again.len);
		if (again.len == enc.len)
			for (size_t i = 0; i < enc.len; i++)
				if (again.p[i] != enc.p[i]) {
					tap_diag("first difference at byte %zu", i);
					break;
				}
	}
	dump__free(&out);
	free(enc.p);
	free(again.p);
	drain__free(d);
	symcache__free(sc);
	return tap_done_testing();
}
