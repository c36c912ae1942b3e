// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_format.c - the dump format: a full round trip through the writer
 * and the reader (in memory and through LZ4 + the file writer), and the
 * rejection of every kind of damage with a message naming the byte.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evtype.h"
#include "format.h"
#include "lz4out.h"
#include "lz4read.h"
#include "util.h"

/* A type this version does not know: a newer minor version's. */
#define FR_FUTURE_TYPE	FR_DEV_NTYPES
#include "tap.h"
#include "writer.h"

#define NEV 5000

struct mem {
	uint8_t *p;
	size_t len, cap;
};

static int mem_sink(void *ctx, const void *buf, size_t len)
{
	struct mem *m = ctx;

	if (m->len + len > m->cap) {
		m->cap = (m->len + len) * 2;
		m->p = realloc(m->p, m->cap);
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

struct evsrc {
	uint32_t i, n;
	bool backwards;
	bool future;	/* every 10th event of a type from a newer version */
	bool marked;	/* every 10th event an exit of tid FR_MARK_TID (then retyped) */
};

#define FR_MARK_TID	77777

/* Events of every type, in time order, with fields that derive from i. */
static int next_event(void *ctx, struct fr_dump_event *e)
{
	struct evsrc *s = ctx;
	uint32_t i = s->i;

	if (i == s->n)
		return 0;
	s->i++;
	memset(e, 0, sizeof(*e));
	e->ts = 1000000000ULL + i * 1000ULL + (s->backwards && i == 100 ? -5000ULL : 0);
	e->type = 1 + i % 5;
	e->proc = i % 3;
	e->tid = 100 + i % 7;
	e->cpu = i % 2;
	e->comm = 1 + i % 2;
	e->flags = i % 4;
	if (s->future && i % 10 == 9) {
		e->type = FR_FUTURE_TYPE;
		return 1;
	}
	if (s->marked && i % 10 == 9) {
		e->type = 2;
		e->tid = FR_MARK_TID;
	}
	switch (e->type) {
	case 1:
		e->stack = i % 3;	/* 0: no stack */
		break;
	case 2:
		e->exit.code = -(int32_t)i;
		e->exit.rss_anon = i * 4096ULL;
		e->exit.rss_peak = UINT64_MAX - i;
		e->exit.utime = i;
		e->exit.maj_flt = 1;
		break;
	case 3:
		e->child = (i + 1) % 3;
		break;
	case 4:
		e->filename = 3;
		break;
	case 5:
		e->oom.total_vm = i;
		e->oom.oom_score_adj = -1000;
		e->oom.uid = 65534;
		break;
	}
	return 1;
}

static char *xstrdup(const char *s)
{
	return strdup(s);
}

static void build_model(struct fr_dump *d)
{
	static const char *strs[] = { "", "spin", "worker", "/usr/bin/spin", "main", "spin_leaf",
				      "schedule [kernel]", "/src/spin.c", "/src/util.h", "add_one" };
	static const uint64_t cpus[2] = { 3, 0 };

	dump__init(d);
	kvlist__add_str(&d->meta, "host", "testhost");
	kvlist__add_u64(&d->meta, "ncpus", 2);
	kvlist__add_u64(&d->meta, "clock_boottime_ns", 1000000000ULL);
	kvlist__add_u64(&d->meta, "clock_realtime_ns", 1764400000000000000ULL);
	kvlist__add_s64(&d->meta, "negative", -42);
	kvlist__add_array(&d->loss, "bpf_reserve_failed", cpus, 2);
	kvlist__add_u64(&d->loss, "window_evicted_space", 7);
	d->trig = calloc(1, sizeof(*d->trig));
	d->ntrig = 1;
	d->trig->name = xstrdup("signal");
	d->trig->type = xstrdup("signal");
	d->trig->reason = xstrdup("SIGUSR1 from pid 1 (init)");
	d->trig->detail = xstrdup("");
	d->trig->ts = 1005000000ULL;
	d->win = (struct fr_dump_window){ .start = 975000000ULL, .end = 1005000000ULL,
					  .watermark = 1007000000ULL, .span = 30000000000ULL,
					  .first_event = 1000000000ULL };
	d->nstr = FR_ARRAY_SIZE(strs);
	d->str = calloc(d->nstr, sizeof(*d->str));
	d->str_len = calloc(d->nstr, sizeof(*d->str_len));
	for (uint32_t i = 0; i < d->nstr; i++) {
		d->str[i] = xstrdup(strs[i]);
		d->str_len[i] = strlen(strs[i]);
	}
	d->nproc = 3;
	d->proc = calloc(3, sizeof(*d->proc));
	for (uint32_t i = 0; i < 3; i++)
		d->proc[i] = (struct fr_dump_proc){ .pid = 4242, .start = 900000000ULL + i,
						    .ppid = 1, .flags = FR_DPROC_EVENTS | (i ? FR_DPROC_EXITED : FR_DPROC_LIVE),
						    .exit_ts = i ? 1004000000ULL : 0, .exit_code = i ? 9 : 0,
						    .comm = 1 + i % 2, .exe = 3, .cmdline = 3, .state = 'R',
						    .rss = 1 << 20, .stamp = 1006000000ULL,
						    .cgroup = i == 2 ? 3 : 0 };
	d->nthread = 2;
	d->thread = calloc(2, sizeof(*d->thread));
	d->thread[0] = (struct fr_dump_thread){ .proc = 0, .tid = 4242, .name = 1 };
	d->thread[1] = (struct fr_dump_thread){ .proc = 0, .tid = 4243, .name = 2 };
	d->nbin = 1;
	d->bin = calloc(1, sizeof(*d->bin));
	d->bin[0].path = 3;
	d->bin[0].build_id_len = 20;
	memset(d->bin[0].build_id, 0xab, 20);
	d->nframe = 3;
	d->frame = calloc(3, sizeof(*d->frame));
	d->frame[0] = (struct fr_dump_frame){ .addr = 0xffffffff81234567ULL, .kind = FR_FRAME_KERNEL, .sym = 6, .sym_off = 7 };
	d->frame[1] = (struct fr_dump_frame){ .addr = 0x401234, .kind = FR_FRAME_USER, .sym = 5, .bin = 1, .file_off = 0x1234 };
	d->frame[2] = (struct fr_dump_frame){ .addr = 0x401100, .kind = FR_FRAME_USER, .sym = 4, .bin = 1, .file_off = 0x1100,
					      .system_name = 3 };
	/* Frame 1: add_one() inlined into spin_leaf(); frame 2: main() at one line; frame 0 none. */
	d->nline = 3;
	d->line = calloc(3, sizeof(*d->line));
	d->line[0] = (struct fr_dump_line){ .func = 9, .file = 8, .line = 12, .col = 5 };
	d->line[1] = (struct fr_dump_line){ .func = 5, .file = 7, .line = 300 };
	d->line[2] = (struct fr_dump_line){ .func = 4, .file = 7, .line = 70000, .col = 1 };
	d->frame[1].line = 0;
	d->frame[1].nlines = 2;
	d->frame[2].line = 2;
	d->frame[2].nlines = 1;
	d->nstack = 2;
	d->stack = calloc(2, sizeof(*d->stack));
	d->stack[0] = (struct fr_dump_stack){ .kn = 1, .un = 2, .frames = calloc(3, 4) };
	d->stack[0].frames[0] = 0;
	d->stack[0].frames[1] = 1;
	d->stack[0].frames[2] = 2;
	d->stack[1] = (struct fr_dump_stack){ .kn = 0, .un = 1, .frames = calloc(1, 4) };
	d->stack[1].frames[0] = 2;
}

static int encode(const struct fr_dump *d, uint32_t nev, struct mem *m, uint64_t *n)
{
	struct evsrc src = { .n = nev };

	memset(m, 0, sizeof(*m));
	return dump__write(d, next_event, &src, mem_sink, m, n);
}

static void test_round_trip(void)
{
	struct fr_dump in, out;
	struct evsrc src = { .n = NEV };
	struct fr_dump_event want;
	struct mem m;
	uint64_t n = 0;
	char err[512];
	int bad = 0, e;

	build_model(&in);
	is_int(encode(&in, NEV, &m, &n), 0, "dump__write succeeds");
	is_int(n, NEV, "all events written");
	tap_diag("%u events in %zu bytes (%.1f bytes/event before LZ4)", NEV, m.len,
		 (double)m.len / NEV);
	e = dump__parse(&out, m.p, m.len, err, sizeof(err));
	if (!is_int(e, 0, "dump__parse accepts it"))
		tap_diag("%s", err);
	is_int(out.major, FR_DUMP_MAJOR, "major version");
	is_str(dump__meta_str(&out, "host"), "testhost", "META string");
	is_int(dump__meta_u64(&out, "ncpus"), 2, "META uint");
	is_int(kvlist__find(&out.meta, "negative")->i, -42, "META signed");
	ok(kvlist__find(&out.loss, "bpf_reserve_failed")->n == 2 &&
	   kvlist__find(&out.loss, "bpf_reserve_failed")->arr[0] == 3, "LOSS per-CPU array");
	is_int(out.ntrig, 1, "one trigger");
	is_str(out.trig[0].reason, "SIGUSR1 from pid 1 (init)", "trigger reason");
	is_int(out.trig[0].ts, 1005000000ULL, "trigger time");
	ok(!memcmp(&out.win, &in.win, sizeof(in.win)), "window bounds");
	is_int(out.nstr, in.nstr, "strings");
	is_str(dump__str(&out, 6), "schedule [kernel]", "string content");
	is_int(out.nproc, 3, "processes");
	for (uint32_t i = 0; i < 3; i++) {
		const struct fr_dump_proc *a = &in.proc[i], *b = &out.proc[i];

		ok(a->pid == b->pid && a->ppid == b->ppid && a->start == b->start &&
		   a->exit_ts == b->exit_ts && a->exit_code == b->exit_code &&
		   a->flags == b->flags && a->comm == b->comm && a->exe == b->exe &&
		   a->cmdline == b->cmdline && a->state == b->state && a->rss == b->rss &&
		   a->stamp == b->stamp && a->cgroup == b->cgroup, "process %u identical", i);
	}
	ok(out.nthread == 2 && out.thread[1].tid == 4243 && out.thread[1].name == 2,
	   "threads round-trip");
	ok(out.nbin == 1 && out.bin[0].path == 3 && out.bin[0].build_id_len == 20 &&
	   !memcmp(out.bin[0].build_id, in.bin[0].build_id, 20), "binary with build-id");
	is_int(out.nframe, 3, "frames");
	for (uint32_t i = 0; i < 3; i++)
		ok(out.frame[i].addr == in.frame[i].addr && out.frame[i].kind == in.frame[i].kind &&
		   out.frame[i].sym == in.frame[i].sym && out.frame[i].sym_off == in.frame[i].sym_off &&
		   out.frame[i].bin == in.frame[i].bin && out.frame[i].file_off == in.frame[i].file_off &&
		   out.frame[i].system_name == in.frame[i].system_name,
		   "frame %u identical (mangled name %u through FSYS)", i, in.frame[i].system_name);
	ok(out.frame[0].nlines == 0 && out.frame[1].nlines == 2 && out.frame[2].nlines == 1 &&
	   out.nline == 3, "LINE: the frames' levels read back (2, 1 and none)");
	bad = 0;
	for (uint32_t i = 1; i < 3 && out.nline == 3; i++)
		for (uint32_t k = 0; k < in.frame[i].nlines; k++)
			bad += memcmp(&out.line[out.frame[i].line + k], &in.line[in.frame[i].line + k],
				      sizeof(in.line[0])) != 0;
	ok(out.nline == 3 && !bad, "LINE: function, file, line and column of each level, innermost first");
	ok(out.nline == 3 && !strcmp(dump__str(&out, out.line[out.frame[1].line].func), "add_one") &&
	   !strcmp(dump__str(&out, out.line[out.frame[1].line].file), "/src/util.h") &&
	   !strcmp(dump__str(&out, out.line[out.frame[1].line + 1].func), "spin_leaf"),
	   "LINE: the inlined function first, the frame's own function last");
	ok(out.nstack == 2 && out.stack[0].kn == 1 && out.stack[0].un == 2 &&
	   out.stack[0].frames[2] == 2, "stacks identical");
	is_int(out.nev, NEV, "events read back");
	for (uint32_t i = 0; i < out.nev; i++) {
		next_event(&src, &want);
		if (memcmp(&want, &out.ev[i], sizeof(want)))
			bad++;
	}
	is_int(bad, 0, "every event field round-trips (chunked deltas included)");
	dump__free(&out);
	dump__free(&in);
}

/* A reader skips event types it does not know (a newer minor version). */
/* An event source over an array. */
struct arrsrc {
	const struct fr_dump_event *ev;
	uint32_t i, n;
};

static int next_from_array(void *ctx, struct fr_dump_event *e)
{
	struct arrsrc *s = ctx;

	if (s->i == s->n)
		return 0;
	*e = s->ev[s->i++];
	return 1;
}

/*
 * 1.4: the memory events (rss, oom_score_adj, memory, memcg), the OOM
 * dossier and the PROC memory fields round-trip; values out of range are
 * refused.
 */
/*
 * Items are built in place after a one-byte length prefix that is widened
 * when they are long: strings whose items need 1, 2 and 3 prefix bytes,
 * at each boundary and beside one, read back whole, and the strings after
 * them still in their place.
 */
static void test_item_lengths(void)
{
	static const size_t lens[] = { 0, 1, 127, 128, 129, 16383, 16384, 16385, 300000 };
	struct fr_dump in, out;
	struct mem m;
	uint64_t n;
	char err[512];
	int bad = 0, e;

	build_model(&in);
	for (uint32_t i = 1; i < in.nstr; i++)
		free(in.str[i]);
	in.nstr = FR_ARRAY_SIZE(lens) + 1;
	in.str = realloc(in.str, in.nstr * sizeof(*in.str));
	in.str_len = realloc(in.str_len, in.nstr * sizeof(*in.str_len));
	for (uint32_t i = 1; i < in.nstr; i++) {
		in.str_len[i] = lens[i - 1];
		in.str[i] = malloc(lens[i - 1] + 1);
		for (size_t k = 0; k < lens[i - 1]; k++)
			in.str[i][k] = (char)('a' + (k * 7 + i) % 26);
		in.str[i][lens[i - 1]] = 0;
	}
	/* The model's other tables name strings up to 9: all still exist. */
	if (!is_int(encode(&in, NEV, &m, &n), 0, "long items: written"))
		goto out;
	/* dump__parse() takes the buffer: out frees it, parsed or not. */
	e = dump__parse(&out, m.p, m.len, err, sizeof(err));
	m.p = NULL;
	if (!is_int(e, 0, "long items: parsed")) {
		tap_diag("%s", err);
		dump__free(&out);
		goto out;
	}
	is_int(out.nstr, in.nstr, "long items: every string read back");
	for (uint32_t i = 1; i < in.nstr && i < out.nstr; i++)
		bad += strlen(dump__str(&out, i)) != in.str_len[i] ||
		       strcmp(dump__str(&out, i), in.str[i]);
	is_int(bad, 0, "long items: each string whole, at its index (lengths 0 to 300000)");
	is_int(out.nproc, in.nproc, "long items: the items after them are read too");
	dump__free(&out);
out:
	free(m.p);
	dump__free(&in);
}

/*
 * (1.7) A Python frame is written as a user frame listed in PYFR, and read
 * back as a Python frame; the other frames keep their kinds.
 */
static void test_python_frames(void)
{
	struct fr_dump in, out;
	struct mem m;
	uint64_t n;
	char err[512];
	int e;

	build_model(&in);
	in.frame[1].kind = FR_FRAME_PYTHON;
	e = encode(&in, NEV, &m, &n);
	if (!is_int(e, 0, "python frames: written"))
		goto out;
	e = dump__parse(&out, m.p, m.len, err, sizeof(err));
	if (!is_int(e, 0, "python frames: parsed")) {
		tap_diag("%s", err);
		dump__free(&out);
		goto out;
	}
	ok(out.frame[1].kind == FR_FRAME_PYTHON && out.frame[0].kind == FR_FRAME_KERNEL &&
	   out.frame[2].kind == FR_FRAME_USER && out.frame[1].sym == in.frame[1].sym,
	   "python frames: read back as Python frames, the others as they were");
	dump__free(&out);
out:
	dump__free(&in);
}

static void test_memory_types(void)
{
	struct fr_dump_event ev[6];
	struct fr_dump in, out;
	struct arrsrc src = { .ev = ev, .n = 6 };
	struct mem m = {};
	uint64_t n = 0;
	char err[512];
	int e, same = 0;

	build_model(&in);
	in.proc[0].has_mem = 1;
	in.proc[0].oom_score_adj = -17;
	in.proc[0].rss_file = 3 << 20;
	in.proc[0].rss_anon = 300ULL << 20;
	in.proc[0].rss_shmem = 4096;
	in.proc[0].swap = 8192;
	in.proc[0].pgtables = 65536;
	in.proc[0].mem_stamp = 1006000001ULL;
	in.proc[0].nspid = 1;
	in.proc[0].memcg = 7;
	in.proc[0].container = 8;
	in.proc[0].cgroup_id = 1234567;
	memset(ev, 0, sizeof(ev));
	ev[0] = (struct fr_dump_event){ .ts = 1000000000ULL, .type = FR_DEV_RSS, .proc = 0, .tid = 4242,
					.comm = 1, .cpu = 1,
					.rss = { .member = FR_DRSS_ANON, .why = FR_DRSS_AGE, .by = 0,
						 .value = 104857600, .changed = 999000000ULL } };
	ev[1] = (struct fr_dump_event){ .ts = 1000000001ULL, .type = FR_DEV_RSS, .proc = 1,
					.rss = { .member = FR_DRSS_FILE, .why = FR_DRSS_STEP, .by = 77,
						 .value = 4096, .changed = 1000000001ULL } };
	ev[2] = (struct fr_dump_event){ .ts = 1000000002ULL, .type = FR_DEV_OOMADJ, .proc = 2, .tid = 9,
					.oomadj = { .value = -1000, .by = 4242 } };
	ev[3] = (struct fr_dump_event){ .ts = 1000000003ULL, .type = FR_DEV_MEMSYS };
	for (int k = 0; k < FR_MSYS_NFIELDS; k++)
		ev[3].msys.v[k] = (1ULL << 40) + k;
	ev[4] = (struct fr_dump_event){ .ts = 1000000004ULL, .type = FR_DEV_MEMCG, .comm = 7,
					.mcg = { .flags = FR_DMCG_V1, .usage = 64 << 20, .limit = 64 << 20,
						 .anon = 60 << 20, .file = 1 << 20, .ev_max = 35,
						 .ev_oom_kill = 1 } };
	ev[5] = (struct fr_dump_event){ .ts = 1000000005ULL, .type = FR_DEV_OOM, .proc = 1, .comm = 2,
					.stack = 1,
					.oom = { .total_vm = 1 << 30, .rss_anon = 60 << 20, .oom_score_adj = 800,
						 .swapents = 4096, .invoker = 3, .invoker_tid = 4244,
						 .memcg = 7, .memcg_usage = 64 << 20, .memcg_limit = 64 << 20 } };
	is_int(dump__write(&in, next_from_array, &src, mem_sink, &m, &n), 0, "1.4: writing the memory events");
	e = dump__parse(&out, m.p, m.len, err, sizeof(err));
	if (!is_int(e, 0, "1.4: read back"))
		tap_diag("%s", err);
	for (uint32_t i = 0; !e && i < out.nev && i < 6; i++)
		same += !memcmp(&out.ev[i], &ev[i], sizeof(ev[i]));
	is_int(e ? 0 : same, 6, "1.4: rss, oom_score_adj, memory, memcg and the OOM dossier round-trip");
	ok(!e && out.proc[0].has_mem == 1 && out.proc[0].oom_score_adj == -17 &&
	   out.proc[0].rss_anon == 300ULL << 20 && out.proc[0].rss_file == 3 << 20 &&
	   out.proc[0].rss_shmem == 4096 && out.proc[0].swap == 8192 && out.proc[0].pgtables == 65536 &&
	   out.proc[0].mem_stamp == 1006000001ULL && out.proc[0].nspid == 1 &&
	   out.proc[0].memcg == 7 && out.proc[0].container == 8 && out.proc[0].cgroup_id == 1234567 &&
	   !out.proc[1].has_mem && !out.proc[1].memcg, "1.4: PROC memory and identity fields");
	if (!e)
		dump__free(&out);
	/* An OOM naming a process out of range, an rss member out of range: refused. */
	for (int k = 0; k < 2; k++) {
		struct mem m2 = {};

		src.i = 0;
		if (k == 0)
			ev[5].oom.invoker = 4;	/* 3 processes: + 1 is at most 3 */
		else
			ev[0].rss.member = FR_DRSS_NMEMBERS;
		dump__write(&in, next_from_array, &src, mem_sink, &m2, &n);
		e = dump__parse(&out, m2.p, m2.len, err, sizeof(err));
		ok(e == -EBADMSG, "1.4: %s is refused (%s)",
		   k ? "an rss member out of range" : "an OOM invoker out of range", err);
		dump__free(&out);	/* owns m2's bytes, whatever the outcome */
		ev[5].oom.invoker = 3;
	}
	dump__free(&in);
}

/* 1.5: stalls, blocks and their sums round-trip; a kind out of range, a
 * begin after the end, sums that do not add up are refused. */
static void test_stall_types(void)
{
	struct fr_dump_event ev[4];
	struct fr_dump in, out;
	struct arrsrc src = { .ev = ev, .n = 4 };
	struct mem m = {};
	uint64_t n = 0;
	char err[512];
	int e, same = 0;

	build_model(&in);
	memset(ev, 0, sizeof(ev));
	ev[0] = (struct fr_dump_event){ .ts = 1000000000ULL, .type = FR_DEV_STALL, .proc = 0, .tid = 4243,
					.comm = 1, .cpu = 1, .stack = 1,
					.flags = FR_DUEND_OUTERMOST << FR_DSAMPLE_UEND_SHIFT,
					.stall = { .kind = FR_DSTALL_MEMCG, .begin = 997000000ULL, .result = 32,
						   .gfp = 0x100cca, .order = 0, .memcg = 7,
						   .memcg_id = 1234 } };
	ev[1] = (struct fr_dump_event){ .ts = 1000000001ULL, .type = FR_DEV_STALL, .proc = 1, .tid = 9,
					.stall = { .kind = FR_DSTALL_THROTTLE, .begin = 900000001ULL,
						   .order = -1, .reason = 2 } };
	ev[2] = (struct fr_dump_event){ .ts = 1000000002ULL, .type = FR_DEV_OFFCPU, .proc = 2, .tid = 4244,
					.comm = 2, .stack = 1,
					.off = { .kind = FR_DSTALL_BLOCKED, .begin = 700000002ULL,
						 .state = 0x102 } };
	ev[3] = (struct fr_dump_event){ .ts = 1000000003ULL, .type = FR_DEV_STALLSUM, .proc = 0, .comm = 1,
					.ssum = { .kind = FR_DSTALL_MEMCG, .n_short = 30000, .ns_short = 700000000,
						  .n_lost = 5, .ns_lost = 1000, .n_all = 30009,
						  .ns_all = 760000000 } };
	is_int(dump__write(&in, next_from_array, &src, mem_sink, &m, &n), 0, "1.5: writing the stall events");
	e = dump__parse(&out, m.p, m.len, err, sizeof(err));
	if (!is_int(e, 0, "1.5: read back"))
		tap_diag("%s", err);
	for (uint32_t i = 0; !e && i < out.nev && i < 4; i++)
		same += !memcmp(&out.ev[i], &ev[i], sizeof(ev[i]));
	is_int(e ? 0 : same, 4, "1.5: stall, offcpu and stallsum round-trip");
	if (!e)
		dump__free(&out);
	for (int k = 0; k < 5; k++) {
		struct fr_dump_event keep[4];
		struct mem m2 = {};
		static const char *const what[] = {
			"a stall of an off-CPU kind", "an offcpu of a stall kind",
			"sums whose short and lost exceed all", "a stall naming a string out of range",
			"a stall naming a stack out of range",
		};

		memcpy(keep, ev, sizeof(ev));
		src.i = 0;
		if (k == 0)
			ev[0].stall.kind = FR_DSTALL_BLOCKED;
		else if (k == 1)
			ev[2].off.kind = FR_DSTALL_RECLAIM;
		else if (k == 2)
			ev[3].ssum.n_lost = 10;
		else if (k == 3)
			ev[0].stall.memcg = 1000;
		else
			ev[2].stack = 99;
		dump__write(&in, next_from_array, &src, mem_sink, &m2, &n);
		e = dump__parse(&out, m2.p, m2.len, err, sizeof(err));
		ok(e == -EBADMSG, "1.5: %s is refused (%s)", what[k], err);
		dump__free(&out);	/* owns m2's bytes, whatever the outcome */
		memcpy(ev, keep, sizeof(ev));
	}
	dump__free(&in);
}

/* 1.8: where the RSS grew round-trips with its stack; a member out of
 * range and a stack out of range are refused. */
static void test_rss_sites(void)
{
	struct fr_dump_event ev[2];
	struct fr_dump in, out;
	struct arrsrc src = { .ev = ev, .n = 2 };
	struct mem m = {};
	uint64_t n = 0;
	char err[512];
	int e, same = 0;

	build_model(&in);
	memset(ev, 0, sizeof(ev));
	ev[0] = (struct fr_dump_event){ .ts = 1000000000ULL, .type = FR_DEV_RSS_SITE, .proc = 0,
					.tid = 4243, .comm = 1, .stack = 1,
					.site = { .member = FR_DRSS_ANON, .grown = 8ULL << 20 } };
	ev[1] = (struct fr_dump_event){ .ts = 1000000001ULL, .type = FR_DEV_RSS_SITE, .proc = 1,
					.tid = 9, .comm = 1,
					.site = { .member = FR_DRSS_SHMEM, .grown = 4096 } };
	is_int(dump__write(&in, next_from_array, &src, mem_sink, &m, &n), 0, "1.8: writing RSS sites");
	e = dump__parse(&out, m.p, m.len, err, sizeof(err));
	if (!is_int(e, 0, "1.8: read back"))
		tap_diag("%s", err);
	for (uint32_t i = 0; !e && i < out.nev && i < 2; i++)
		same += !memcmp(&out.ev[i], &ev[i], sizeof(ev[i]));
	is_int(e ? 0 : same, 2, "1.8: rss_site round-trips, with and without a stack");
	if (!e)
		dump__free(&out);
	for (int k = 0; k < 2; k++) {
		struct fr_dump_event keep[2];
		struct mem m2 = {};

		memcpy(keep, ev, sizeof(ev));
		src.i = 0;
		if (k == 0)
			ev[0].site.member = FR_DRSS_NMEMBERS;
		else
			ev[0].stack = 99;
		dump__write(&in, next_from_array, &src, mem_sink, &m2, &n);
		e = dump__parse(&out, m2.p, m2.len, err, sizeof(err));
		ok(e == -EBADMSG, "1.8: an rss_site with %s is refused (%s)",
		   k ? "a stack out of range" : "a member out of range", err);
		dump__free(&out);	/* owns m2's bytes, whatever the outcome */
		memcpy(ev, keep, sizeof(ev));
	}
	dump__free(&in);
}

/*
 * 1.6: a sample, stall or block walked on later from a copy carries one
 * byte more, after its stack; the others none, and read back as 0.
 */
static void test_unwound(void)
{
	struct fr_dump_event ev[6];
	struct fr_dump in, out;
	struct arrsrc src = { .ev = ev, .n = 6 };
	struct mem plain = {}, marked = {};
	uint64_t n = 0;
	char err[512];
	int e, same = 0;

	build_model(&in);
	memset(ev, 0, sizeof(ev));
	for (int i = 0; i < 6; i++) {
		ev[i] = (struct fr_dump_event){ .ts = 1000000000ULL + (uint64_t)i, .proc = 0,
						.tid = 4243, .comm = 1, .stack = 1,
						.flags = FR_DUEND_OUTERMOST << FR_DSAMPLE_UEND_SHIFT };
		ev[i].type = i % 3 == 0 ? FR_DEV_SAMPLE : i % 3 == 1 ? FR_DEV_STALL : FR_DEV_OFFCPU;
		if (ev[i].type == FR_DEV_STALL)
			ev[i].stall = (struct fr_dump_stall){ .kind = FR_DSTALL_RECLAIM,
							      .begin = 990000000ULL };
		if (ev[i].type == FR_DEV_OFFCPU)
			ev[i].off = (struct fr_dump_offcpu){ .kind = FR_DSTALL_BLOCKED,
							     .begin = 990000000ULL, .state = 2 };
	}
	is_int(dump__write(&in, next_from_array, &src, mem_sink, &plain, &n), 0,
	       "1.6: six events walked at once");
	for (int i = 0; i < 3; i++)
		ev[i].unwound = FR_DUNWOUND_LATER;
	src.i = 0;
	is_int(dump__write(&in, next_from_array, &src, mem_sink, &marked, &n), 0,
	       "1.6: the same, a sample, a stall and a block of them walked later");
	is_int((int64_t)marked.len - (int64_t)plain.len, 3, "1.6: one byte more for each of the three");
	e = dump__parse(&out, marked.p, marked.len, err, sizeof(err));
	if (!is_int(e, 0, "1.6: read back"))
		tap_diag("%s", err);
	for (uint32_t i = 0; !e && i < out.nev && i < 6; i++)
		same += !memcmp(&out.ev[i], &ev[i], sizeof(ev[i]));
	is_int(e ? 0 : same, 6, "1.6: each event's mark round-trips, set or not");
	dump__free(&out);	/* owns marked's bytes, whatever the outcome */
	dump__free(&in);
	free(plain.p);
}

static void test_future_types(void)
{
	struct evsrc src = { .n = 500, .future = true };
	struct fr_dump in, out;
	struct mem m = {};
	uint64_t n;
	char err[512];
	int e, nine = 0;

	build_model(&in);
	is_int(dump__write(&in, next_event, &src, mem_sink, &m, &n), 0, "writing 50 events of a type from the future");
	e = dump__parse(&out, m.p, m.len, err, sizeof(err));
	if (!is_int(e, 0, "a reader accepts a dump with unknown event types"))
		tap_diag("%s", err);
	for (uint32_t i = 0; i < out.nev; i++)
		nine += out.ev[i].type == FR_FUTURE_TYPE;
	ok(out.nev == 450 && !nine, "and skips exactly those (450 of 500 kept)");
	dump__free(&out);
	dump__free(&in);
}

static uint64_t get_varint(const uint8_t *p, size_t len, size_t *off)
{
	uint64_t v = 0;

	for (int shift = 0; *off < len && shift < 64; shift += 7) {
		uint8_t b = p[(*off)++];

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	return v;
}

/*
 * Retype every EVNT item of tid FR_MARK_TID (exits, with a full body) to
 * a type from the future and reseal each section's CRC32C. Returns the number retyped.
 */
static int retype_marked(uint8_t *p, size_t len)
{
	size_t off = FR_DUMP_HDR_SIZE;
	int n = 0;

	while (off + FR_SECTION_HDR_SIZE + 4 <= len) {
		uint32_t tag = p[off] | p[off + 1] << 8 | p[off + 2] << 16 | (uint32_t)p[off + 3] << 24;
		uint64_t slen = 0, crc;
		size_t body = off + FR_SECTION_HDR_SIZE, end;

		for (int i = 7; i >= 0; i--)
			slen = slen << 8 | p[off + 8 + i];
		end = body + slen;
		if (end + 4 > len)
			break;
		for (size_t q = body; tag == FR_SEC_EVNT && q < end;) {
			size_t item_len = get_varint(p, end, &q), it = q + 1;

			get_varint(p, q + item_len, &it);		/* ts delta */
			get_varint(p, q + item_len, &it);		/* proc */
			if (p[q] == FR_DEV_EXIT && get_varint(p, q + item_len, &it) == FR_MARK_TID) {
				p[q] = FR_FUTURE_TYPE;
				n++;
			}
			q += item_len;
		}
		crc = fr_crc32c(0, p + off, FR_SECTION_HDR_SIZE + slen);
		for (int i = 0; i < 4; i++)
			p[end + i] = (uint8_t)(crc >> (8 * i));
		off = end + 4;
	}
	return n;
}

/* A reader skips a type it does not know whatever its body holds. */
static void test_future_bodies(void)
{
	struct evsrc src = { .n = 500, .marked = true };
	struct fr_dump in, out;
	struct mem m = {};
	uint64_t n;
	char err[512];
	int e, marked = 0, kept_exits = 0;

	build_model(&in);
	is_int(dump__write(&in, next_event, &src, mem_sink, &m, &n), 0, "writing 50 marked exits");
	is_int(retype_marked(m.p, m.len), 50, "their type byte rewritten to a type from the future, bodies of 9 varints left");
	e = dump__parse(&out, m.p, m.len, err, sizeof(err));
	if (!is_int(e, 0, "a reader accepts unknown types with non-empty bodies"))
		tap_diag("%s", err);
	for (uint32_t i = 0; i < out.nev; i++) {
		marked += out.ev[i].tid == FR_MARK_TID;
		kept_exits += out.ev[i].type == FR_DEV_EXIT;
	}
	ok(out.nev == 450 && !marked && kept_exits > 0,
	   "skips exactly those bodies and reads on in step (450 kept, %d exits)", kept_exits);
	dump__free(&out);
	dump__free(&in);
}

static void test_order_enforced(void)
{
	struct evsrc src = { .n = 200, .backwards = true };
	struct fr_dump in;
	struct mem m = {};
	uint64_t n;

	build_model(&in);
	is_int(dump__write(&in, next_event, &src, mem_sink, &m, &n), -EDOM,
	       "the writer refuses events that go back in time");
	free(m.p);
	dump__free(&in);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

/* Re-seal the section at @off after editing it. */
static void reseal(uint8_t *p, size_t off)
{
	uint64_t len = 0;

	for (int i = 0; i < 8; i++)
		len |= (uint64_t)p[off + 8 + i] << (8 * i);
	put_le32(p + off + 16 + len, fr_crc32c(0, p + off, 16 + len));
}

/* Offset of the first section with @tag. */
static size_t find_section(const uint8_t *p, size_t len, uint32_t tag)
{
	size_t off = FR_DUMP_HDR_SIZE;

	while (off + 16 <= len) {
		uint32_t t = p[off] | p[off + 1] << 8 | p[off + 2] << 16 | (uint32_t)p[off + 3] << 24;
		uint64_t l = 0;

		for (int i = 0; i < 8; i++)
			l |= (uint64_t)p[off + 8 + i] << (8 * i);
		if (t == tag)
			return off;
		off += 16 + l + 4;
	}
	return 0;
}

/* Parse a damaged copy; expect @want and a message containing @words. */
static void expect_reject(const struct mem *good, void (*damage)(uint8_t *, size_t *),
			  int want, const char *words, const char *what)
{
	uint8_t *copy = malloc(good->len);
	size_t len = good->len;
	struct fr_dump d;
	char err[512];
	int e;

	memcpy(copy, good->p, len);
	damage(copy, &len);
	e = dump__parse(&d, copy, len, err, sizeof(err));
	if (!is_int(e, want, "%s: rejected", what))
		tap_diag("message: %s", err);
	contains(err, words, "%s: message says so", what);
	dump__free(&d);
}

static void bad_magic(uint8_t *p, size_t *len) { p[0] = 'X'; (void)len; }
static void new_major(uint8_t *p, size_t *len) { p[8] = 2; (void)len; }
static void flip_event(uint8_t *p, size_t *len)
{
	size_t off = find_section(p, *len, FR_SEC_EVNT);

	p[off + 16 + 40] ^= 0x20;
}
static void cut_half(uint8_t *p, size_t *len) { (void)p; *len /= 2; }
static void cut_end(uint8_t *p, size_t *len) { (void)p; *len -= 30; }
static void cut_header(uint8_t *p, size_t *len) { (void)p; *len = 20; }
static void absurd_count(uint8_t *p, size_t *len)
{
	size_t off = find_section(p, *len, FR_SEC_PROC);

	put_le32(p + off + 4, 0x7fffffff);
	reseal(p, off);
}
static void bad_index(uint8_t *p, size_t *len)
{
	size_t off = find_section(p, *len, FR_SEC_STAK);

	/* First stack: len, kn, un, frame 0 -> frame 99 (one-byte varint). */
	p[off + 16 + 4] = 99;
	reseal(p, off);
}
static void no_end(uint8_t *p, size_t *len)
{
	size_t off = find_section(p, *len, FR_SEC_END);

	*len = off;
	(void)p;
}
static void section_overrun(uint8_t *p, size_t *len)
{
	size_t off = find_section(p, *len, FR_SEC_STRS);

	p[off + 8 + 5] = 0x10;	/* length of ~1 TiB */
}

/* The first LINE item: length, frame, n, then func, file, line, col of level 0. */
static size_t line_item(uint8_t *p, size_t len)
{
	return find_section(p, len, FR_SEC_LINE) + FR_SECTION_HDR_SIZE;
}
static void line_bad_frame(uint8_t *p, size_t *len)
{
	size_t off = line_item(p, *len);

	p[off + 1] = 99;
	reseal(p, off - FR_SECTION_HDR_SIZE);
}
static void line_bad_string(uint8_t *p, size_t *len)
{
	size_t off = line_item(p, *len);

	p[off + 3] = 0x7f;
	reseal(p, off - FR_SECTION_HDR_SIZE);
}
static void line_no_levels(uint8_t *p, size_t *len)
{
	size_t off = line_item(p, *len);

	p[off + 2] = 0;
	reseal(p, off - FR_SECTION_HDR_SIZE);
}
static void line_too_many(uint8_t *p, size_t *len)
{
	size_t off = line_item(p, *len);

	p[off + 2] = 3;		/* three levels in the bytes of two */
	reseal(p, off - FR_SECTION_HDR_SIZE);
}
static void line_twice(uint8_t *p, size_t *len)
{
	size_t off = line_item(p, *len);

	/* The second item (frame 2) names frame 1 again: its length, then its frame. */
	p[off + 1 + p[off] + 1] = 1;
	reseal(p, off - FR_SECTION_HDR_SIZE);
}

/* A reader that does not know LINE (1.2) skips it: as if retagged. */
static void test_line_skipped(void)
{
	struct fr_dump in, out;
	struct mem m;
	uint64_t n;
	size_t off;
	char err[512];
	int e;

	build_model(&in);
	encode(&in, 100, &m, &n);
	off = find_section(m.p, m.len, FR_SEC_LINE);
	ok(off && off > find_section(m.p, m.len, FR_SEC_FSYS) &&
	   off < find_section(m.p, m.len, FR_SEC_STAK), "LINE is written after FSYS, before STAK");
	m.p[off + 3] = 'X';
	reseal(m.p, off);
	e = dump__parse(&out, m.p, m.len, err, sizeof(err));
	if (!is_int(e, 0, "a dump whose LINE section has an unknown tag parses"))
		tap_diag("%s", err);
	ok(!out.nline && !out.frame[1].nlines && out.nframe == 3, "and its frames have no levels");
	dump__free(&out);
	dump__free(&in);
}

static void test_rejections(void)
{
	struct fr_dump in;
	struct mem m;
	uint64_t n;

	build_model(&in);
	encode(&in, 300, &m, &n);
	expect_reject(&m, bad_magic, -EBADMSG, "bad magic", "wrong magic");
	expect_reject(&m, new_major, -EPROTONOSUPPORT, "version 2.", "unknown major version");
	expect_reject(&m, flip_event, -EBADMSG, "checksum mismatch", "flipped bit in an event");
	expect_reject(&m, cut_half, -EBADMSG, "byte", "truncated in the middle");
	expect_reject(&m, cut_end, -EBADMSG, "byte", "truncated at the end");
	expect_reject(&m, cut_header, -EBADMSG, "too short", "truncated header");
	expect_reject(&m, no_end, -EBADMSG, "END section missing", "END section cut off");
	expect_reject(&m, absurd_count, -EBADMSG, "absurd count", "absurd item count");
	expect_reject(&m, bad_index, -EBADMSG, "out of range", "frame index out of range");
	expect_reject(&m, section_overrun, -EBADMSG, "claims", "section longer than the file");
	expect_reject(&m, line_bad_frame, -EBADMSG, "malformed LINE item 0", "LINE names a frame out of range");
	expect_reject(&m, line_bad_string, -EBADMSG, "source line 0 names string out of range",
		      "LINE names a string out of range");
	expect_reject(&m, line_no_levels, -EBADMSG, "malformed LINE item 0", "a LINE item without levels");
	expect_reject(&m, line_too_many, -EBADMSG, "malformed LINE item 0",
		      "a LINE item claiming more levels than it holds");
	expect_reject(&m, line_twice, -EBADMSG, "malformed LINE item 1", "two LINE items for one frame");
	free(m.p);
	dump__free(&in);
}

/* Random damage anywhere must be rejected or parsed, never crash. */
static void test_mutations(void)
{
	struct fr_dump in, d;
	int accepted = 0, rejected = 0;
	struct mem m;
	uint64_t n;
	char err[512];

	build_model(&in);
	encode(&in, 200, &m, &n);
	srand(1);
	for (int i = 0; i < 3000; i++) {
		uint8_t *copy = malloc(m.len);
		size_t len = m.len;

		memcpy(copy, m.p, len);
		for (int k = 0; k < 1 + rand() % 4; k++)
			copy[rand() % len] = rand();
		if (rand() % 4 == 0)
			len = rand() % len;
		if (dump__parse(&d, copy, len, err, sizeof(err)))
			rejected++;
		else
			accepted++;
		dump__free(&d);
	}
	tap_diag("mutations: %d rejected, %d accepted", rejected, accepted);
	ok(rejected > 2900, "damaged dumps are rejected (CRC catches what structure does not)");
	free(m.p);
	dump__free(&in);
}

struct filesink {
	struct lz4out *z;
};

static int lz4_sink(void *ctx, const void *buf, size_t len)
{
	return lz4out__write(((struct filesink *)ctx)->z, buf, len);
}

static void test_file(void)
{
	char dir[] = "/tmp/fr-format-XXXXXX", path[256], err[512];
	struct fr_dump in, out;
	struct evsrc src = { .n = NEV };
	struct filesink fs;
	struct dumpfile *f;
	uint64_t n;
	int dirfd, e;

	ok(mkdtemp(dir) != NULL, "temp dir");
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	build_model(&in);
	f = dumpfile__create(dirfd, "t.frd", 0600, 0);
	fs.z = lz4out__new(f);
	e = dump__write(&in, next_event, &src, lz4_sink, &fs, &n);
	if (!e)
		e = lz4out__finish(fs.z);
	lz4out__free(fs.z);
	is_int(e || dumpfile__commit(f), 0, "dump written through LZ4 and the file writer");
	snprintf(path, sizeof(path), "%s/t.frd", dir);
	e = dump__load(&out, path, err, sizeof(err));
	if (!is_int(e, 0, "dump__load reads the file back"))
		tap_diag("%s", err);
	is_int(out.nev, NEV, "with every event");
	dump__free(&out);
	/* Damage the compressed file: the LZ4 checksums catch it. */
	{
		int fd = open(path, O_RDWR);
		struct stat st;
		uint8_t b;

		fstat(fd, &st);
		pread(fd, &b, 1, st.st_size / 2);
		b ^= 0xff;
		pwrite(fd, &b, 1, st.st_size / 2);
		close(fd);
	}
	e = dump__load(&out, path, err, sizeof(err));
	ok(e < 0, "a flipped byte in the compressed file is rejected");
	contains(err, "checksum", "as a checksum mismatch");
	dump__free(&out);
	truncate(path, 100);
	e = dump__load(&out, path, err, sizeof(err));
	is_int(e, -EPROTO, "a truncated file is rejected as truncated");
	dump__free(&out);
	unlink(path);
	close(dirfd);
	rmdir(dir);
	dump__free(&in);
}

/* The event table (evtype.h): a complete row for each type, and nothing past them. */
static void test_evtypes(void)
{
	unsigned missing = 0, dup = 0, bad_tid = 0;

	for (unsigned t = 1; t < FR_DEV_NTYPES; t++) {
		const struct fr_evtype *r = fr_evtype(t);

		if (!r || !r->name || !r->count || !r->label) {
			tap_diag("event type %u has no complete row in evtype.c", t);
			missing++;
			continue;
		}
		for (unsigned u = 1; u < t; u++)
			if (fr_evtype(u) && (!strcmp(fr_evtype(u)->name, r->name) ||
					     !strcmp(fr_evtype(u)->count, r->count)))
				dup++;
		/* Without a process there is no thread, nor a process of another field. */
		if (!r->has_proc && (r->tid != FR_EVREF_VALUE || r->arg == FR_EVREF_THREAD ||
				     r->ref == FR_EVREF_THREAD))
			bad_tid++;
	}
	is_int(missing, 0, "every event type below FR_DEV_NTYPES has a name, a count key and a label");
	is_int(dup, 0, "no two types share a name or a count key");
	is_int(bad_tid, 0, "only the tid field of a process's event names a thread");
	ok(!fr_evtype(0) && !fr_evtype(FR_DEV_NTYPES) && !fr_evtype(255),
	   "type 0 and the types past the last have no row");
	ok(!strcmp(dump__event_type_name(FR_DEV_OFFCPU), "offcpu") &&
	   !strcmp(dump__event_type_name(FR_DEV_NTYPES), "unknown"),
	   "the names come from the table, 'unknown' past it");
	ok(dump__event_has_proc(FR_DEV_SAMPLE) && !dump__event_has_proc(FR_DEV_PRESSURE) &&
	   !dump__event_has_proc(FR_DEV_MEMSYS) && !dump__event_has_proc(FR_DEV_MEMCG),
	   "pressure, memory and memcg readings belong to no process");
}

/* crc_bitwise() - CRC-32C of @len bytes at @p, one bit at a time: the definition. */
static uint32_t crc_bitwise(const uint8_t *p, size_t len)
{
	uint32_t c = 0xffffffff;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78 : c >> 1;
	}
	return ~c;
}

/*
 * The checksum (the CPU's crc32 instruction where it has one, else
 * tables) equals the definition at every length and alignment, whole or
 * continued in two calls.
 */
static void test_crc_bitwise(void)
{
	uint8_t buf[4096 + 8];
	bool same = true;

	srand(7);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	for (size_t off = 0; off < 8 && same; off++)
		for (size_t len = 0; len <= 300 && same; len++) {
			uint32_t want = crc_bitwise(buf + off, len);

			same = fr_crc32c(0, buf + off, len) == want &&
			       fr_crc32c(fr_crc32c(0, buf + off, len / 3), buf + off + len / 3,
					 len - len / 3) == want;
		}
	ok(same && fr_crc32c(0, buf, 4096) == crc_bitwise(buf, 4096),
	   "CRC-32C equals the bitwise definition at every length and alignment, whole or continued");
}

int main(void)
{
	test_evtypes();
	test_round_trip();
	test_item_lengths();
	test_python_frames();
	test_memory_types();
	test_stall_types();
	test_rss_sites();
	test_unwound();
	test_order_enforced();
	test_future_types();
	test_future_bodies();
	test_rejections();
	test_line_skipped();
	test_mutations();
	test_file();
	is_int(fr_crc32c(0, "123456789", 9), 0xe3069283, "CRC-32C check value");
	test_crc_bitwise();
	return tap_done_testing();
}
