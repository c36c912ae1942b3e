// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_names.c - the names kept between dumps (dump/names.c) and the naming
 * into them (dump/namer.c): the store's identities and budget, stacks of
 * this very process named from its own symbols, the address cache, which
 * names stand for which window entry, and two dumps of one window, the
 * second copying every stack the first named.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contract.h"
#include "drain.h"
#include "encoder.h"
#include "namer.h"
#include "names.h"
#include "procinfo.h"
#include "procstat.h"
#include "symbols.h"
#include "tap.h"
#include "util.h"

#define MS	(1000 * 1000ULL)
#define SEC	(1000 * MS)

/* Two functions of this binary a stack runs through: the leaf and its caller. */
int fr_test_leaf(int x);
int fr_test_caller(int x);

__attribute__((noinline, used)) int fr_test_leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline, used)) int fr_test_caller(int x)
{
	return fr_test_leaf(x) + 2;
}

/*
 * A new store's first lines and first stack may be empty: a frame without
 * line information, a stack whose frames were all dropped. Its arrays do
 * not exist yet (UBSan: memcpy() to NULL, which stopped the ASan daemon).
 */
static void store_empty_firsts(void)
{
	struct names *nm = names__new(1 << 20);
	struct fr_dump_frame f = { .addr = 0x1000, .kind = FR_FRAME_USER, .file_off = 0x100 };
	struct fr_dump_line none = { 0 };
	uint32_t fa, n = 1;
	bool created;

	if (!nm || names__frame(nm, &f, 1, FR_NAMED_OK, &fa, &created)) {
		ok(0, "empty firsts: a store and a frame: %s", strerror(errno));
		names__free(nm);
		return;
	}
	ok(!names__set_lines(nm, fa, &none, 0) && names__frame_lines(nm, fa) == FR_LINES_DONE &&
	   (names__lines_at(nm, fa, &n), n == 0),
	   "empty firsts: a frame's lines may be none, first of all");
	ok(!names__set_stack(nm, 3, &(struct names_stack){ .hash = 1, .serial = 1, .complete = 1 },
			     NULL) && names__stack(nm, 3) && names__stack(nm, 3)->kn + names__stack(nm, 3)->un == 0,
	   "empty firsts: so may a stack's frames");
	names__free(nm);
}

static void store_basics(void)
{
	struct names *nm = names__new(1 << 20);
	struct fr_dump_frame f = { .addr = 0x1000, .kind = FR_FRAME_USER, .file_off = 0x100 };
	struct fr_dump_line lv[2] = { { .line = 10 }, { .line = 20 } };
	struct fr_buildid bid = { .len = 4, .id = { 1, 2, 3, 4 } };
	uint32_t a, b, c, fa, fb, fc, s1, s2, s3, n;
	const struct names_stack *got;
	struct names_stats st;
	bool created;

	if (!nm) {
		ok(0, "a store: %s", strerror(errno));
		return;
	}
	names__str(nm, "", &a);
	names__str(nm, "main", &b);
	names__str(nm, "main", &c);
	ok(a == 0 && b != 0 && b == c && !strcmp(names__str_at(nm, b), "main"),
	   "strings: \"\" is 0, others stored once");
	names__bin(nm, "/usr/bin/x", &bid, &a);
	names__bin(nm, "/usr/bin/x", &bid, &b);
	names__bin(nm, "/usr/bin/x", NULL, &c);
	ok(a == b && a != c && names__bin_at(nm, a)->build_id_len == 4 &&
	   !strcmp(names__str_at(nm, names__bin_at(nm, a)->path), "/usr/bin/x"),
	   "binaries: by path and build-id");
	f.bin = a + 1;
	names__frame(nm, &f, 1, FR_NAMED_OK, &fa, &created);
	ok(created, "a new frame is created");
	names__frame(nm, &f, 1, FR_NAMED_OK, &fb, &created);
	ok(fa == fb && !created, "an equal frame is found, not made again");
	names__frame(nm, &f, 2, FR_NAMED_OK, &fc, &created);
	ok(fc != fa && created, "the same address looked up as the interrupted one is another frame");
	names__frame(nm, &f, 1, FR_NAMED_EVICTED, &fc, &created);
	ok(fc != fa && names__frame_why(nm, fc) == FR_NAMED_EVICTED,
	   "so is one named without its file's symbols");
	ok(names__frame_lines(nm, fa) == FR_LINES_PENDING, "a frame with DWARF waits for its lines");
	names__set_lines(nm, fa, lv, 2);
	ok(names__frame_lines(nm, fa) == FR_LINES_DONE && names__lines_at(nm, fa, &n) &&
	   n == 2 && names__lines_at(nm, fa, &n)[1].line == 20, "its lines, once looked up");
	names__space(nm, 10, 5 * SEC, 0, 1, &s1);
	names__space(nm, 10, 5 * SEC, 7 * SEC << 1, 1, &s2);
	names__space(nm, 10, 5 * SEC, 0, 1, &s3);
	names__space(nm, 10, 5 * SEC, 0, 2, &n);
	ok(s1 && s2 && s1 != s2 && s1 == s3 && n != s1 && n != s2,
	   "spaces: one per incarnation, era and read of its maps, never 0");
	names__addr_put(nm, &(struct names_addr){ .addr = 0x1000, .space = s1, .leaf = 1 }, fa);
	ok(names__addr_get(nm, &(struct names_addr){ .addr = 0x1000, .space = s1, .leaf = 1 }, &n) &&
	   n == fa && !names__addr_get(nm, &(struct names_addr){ .addr = 0x1000, .space = s2,
								.leaf = 1 }, &n),
	   "the address cache is per space");
	names__set_stack(nm, 7, &(struct names_stack){ .hash = 99, .serial = 3, .kn = 0, .un = 2,
						      .space = s1, .complete = 1 },
			 (uint32_t[]){ fa, fb });
	got = names__stack(nm, 7);
	ok(got && got->un == 2 && names__stack_frames(nm, got)[1] == fb && !names__stack(nm, 6) &&
	   !names__stack(nm, 8), "a stack's names, by window id");
	names__set_stack(nm, 7, &(struct names_stack){ .hash = 98, .serial = 4, .un = 1, .space = s1 },
			 (uint32_t[]){ fc });
	got = names__stack(nm, 7);
	ok(got && got->serial == 4 && got->un == 1 && names__stack_frames(nm, got)[0] == fc,
	   "named again, the id's names are replaced");
	names__stats(nm, &st);
	ok(st.bytes > 0 && st.frames == 3 && st.stacks == 1 && !names__over_budget(nm),
	   "stats: %llu bytes, %llu frames", (unsigned long long)st.bytes,
	   (unsigned long long)st.frames);
	names__set_budget(nm, 64);
	ok(names__over_budget(nm), "a budget below what is held is over");
	names__reset(nm);
	names__stats(nm, &st);
	ok(!names__stack(nm, 7) && !st.frames && st.resets == 1 && st.strs == 1 &&
	   !names__addr_get(nm, &(struct names_addr){ .addr = 0x1000, .space = s1, .leaf = 1 }, &n),
	   "a reset empties the store");
	names__free(nm);
}

/* A stack of @n frames named "f<first>".."f<first + n - 1>" at addresses from @addr, with lines. */
static void put_stack(struct names *nm, uint32_t id, uint32_t serial, uint32_t first, uint32_t n,
		      uint64_t addr)
{
	uint32_t frames[8];

	for (uint32_t i = 0; i < n; i++) {
		struct fr_dump_frame f = { .addr = addr + i, .kind = FR_FRAME_USER };
		struct fr_dump_line lv = { .line = first + i };
		char name[32];
		bool created;

		snprintf(name, sizeof(name), "f%u", first + i);
		names__str(nm, name, &f.sym);
		names__str(nm, "/src/x.c", &lv.file);
		names__frame(nm, &f, 1, FR_NAMED_OK, &frames[i], &created);
		if (created)
			names__set_lines(nm, frames[i], &lv, 1);
	}
	names__set_stack(nm, id, &(struct names_stack){ .hash = id, .serial = serial, .un = (uint16_t)n,
						       .complete = 1 }, frames);
}

static void compaction(void)
{
	struct names *nm = names__new(1 << 20);
	struct names_stats before, after;
	const struct names_stack *s;
	const struct fr_dump_line *lv;
	uint32_t n;
	bool same = true;

	if (!nm) {
		ok(0, "a store: %s", strerror(errno));
		return;
	}
	for (uint32_t id = 1; id <= 200; id++)
		put_stack(nm, id, id + 1000, id * 8, 8, 0x10000 * id);
	for (uint32_t id = 1; id <= 200; id++)
		if (id % 10)
			names__forget_stack(nm, id, id + 1000);
	names__forget_stack(nm, 10, 1);	/* another entry's serial: not this one */
	names__stats(nm, &before);
	is_int(names__compact(nm), 0, "a store compacts");
	names__stats(nm, &after);
	ok(after.stacks == 20 && after.frames == 160 && after.bytes < before.bytes / 2 &&
	   after.compactions == 1,
	   "to the stacks not forgotten: %llu stacks, %llu frames, %llu of %llu bytes",
	   (unsigned long long)after.stacks, (unsigned long long)after.frames,
	   (unsigned long long)after.bytes, (unsigned long long)before.bytes);
	for (uint32_t id = 1; id <= 200; id++) {
		s = names__stack(nm, id);
		if (!!s != !(id % 10)) {
			same = false;
			continue;
		}
		for (uint32_t i = 0; s && i < 8; i++) {
			uint32_t f = names__stack_frames(nm, s)[i];
			char name[32];

			snprintf(name, sizeof(name), "f%u", id * 8 + i);
			lv = names__lines_at(nm, f, &n);
			same &= !strcmp(names__str_at(nm, names__frame_at(nm, f)->sym), name) &&
				names__frame_at(nm, f)->addr == 0x10000 * id + i && n == 1 &&
				lv[0].line == id * 8 + i &&
				!strcmp(names__str_at(nm, lv[0].file), "/src/x.c") &&
				s->serial == id + 1000;
		}
	}
	ok(same, "each kept stack's frames, names and lines are as they were");
	put_stack(nm, 3, 7, 24, 8, 0x30000);
	s = names__stack(nm, 3);
	ok(s && names__frame_lines(nm, names__stack_frames(nm, s)[0]) == FR_LINES_DONE,
	   "and the store takes new stacks after it");
	names__set_budget(nm, after.bytes + 1024);
	names__trim(nm);
	names__stats(nm, &after);
	ok(after.compactions == 2 || after.resets == 1,
	   "past 3/4 of its budget, trim compacts (or empties) it");
	names__free(nm);
}

/* Our own start time as the drain takes it: ns from /proc/self/stat field 22. */
static uint64_t own_start(void)
{
	struct fr_procstat ps;

	if (fr_procstat__read((uint32_t)getpid(), &ps))
		return 0;
	return ps.start_ticks * (FR_NSEC_PER_SEC / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* A sample of this process at @ts: two kernel frames, then the user frames @u. */
static int sample(struct drain *d, uint64_t start, uint64_t ts, const uint64_t *u, unsigned un)
{
	union {
		struct fr_rec_sample s;
		unsigned char raw[sizeof(struct fr_rec_sample) + 8 * sizeof(uint64_t)];
	} r = {};

	r.s.h = (struct fr_rec_hdr){ .ts = ts, .start = start, .tgid = (uint32_t)getpid(),
				     .tid = (uint32_t)getpid(), .type = FR_REC_SAMPLE, .cpu = 0,
				     .size = (uint32_t)(sizeof(r.s) + (2 + un) * sizeof(uint64_t)) };
	snprintf(r.s.h.comm, sizeof(r.s.h.comm), "test_names");
	r.s.kn = 2;
	r.s.un = (uint16_t)un;
	r.s.ips[0] = 0xffffffff81000100ULL;
	r.s.ips[1] = 0xffffffff81000200ULL;
	memcpy(&r.s.ips[2], u, un * sizeof(*u));
	return drain__record(d, &r, r.s.h.size);
}

/* The name of store frame @f. */
static const char *sym_of(const struct names *nm, uint32_t f)
{
	return names__str_at(nm, names__frame_at(nm, f)->sym);
}

/* A dump stream in memory. */
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

/* Encode @d's window with @sym into a stream; the encoder's stats into *@st. 0 or -errno. */
static int encode(struct drain *d, struct symbolizer *sym, struct buf *out,
		  struct encoder_stats *st)
{
	const struct drain_tables *t = drain__tables(d);
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
	enc = encoder__new(&in, &model);
	err = enc ? encoder__prepare(enc) : -ENOMEM;
	if (!err)
		err = dump__write(&model, encoder__next_event, enc, sink_buf, out, &nev);
	if (enc)
		*st = *encoder__stats(enc);
	encoder__free(enc);
	dump__free(&model);
	return err;
}

static void namer_on_self(struct symcache *sc)
{
	uint64_t start = own_start(), ts = start + SEC;
	uint32_t pid = (uint32_t)getpid(), slot = 0, serial;
	struct drain *d = drain__new(16 << 20, 600 * SEC);
	const struct drain_tables *t = d ? drain__tables(d) : NULL;
	struct symbolizer *sym = symbolizer__new(sc);
	struct buf one = {}, two = {};
	struct encoder_stats st1 = {}, st2 = {};
	/* The leaf where it was interrupted, its caller after the call. */
	uint64_t u[2] = { (uint64_t)(uintptr_t)fr_test_leaf + 1,
			  (uint64_t)(uintptr_t)fr_test_caller + 8 };
	uint64_t u2[3] = { (uint64_t)(uintptr_t)fr_test_caller + 2, u[1], 0x10 };
	const struct names_stack *rec;
	struct proc_meta *m = NULL;
	struct names *nm;
	struct space *sp;
	struct namer n;
	uint64_t ips[4], hash;
	struct ksyms_warm warm;
	uint32_t id;

	if (!d || !sym || !start) {
		ok(0, "set up a drain, a symbolizer, our start: %s", strerror(errno));
		goto out;
	}
	symbolizer__warm_read(&warm);	/* kernel symbols, as the dump thread loads them first */
	symbolizer__warm_adopt(sym, &warm);
	nm = symbolizer__store(sym);
	proctable__set_meta_ops(t->procs, &proc_meta__ops);
	is_int(sample(d, start, ts, u, 2), 0, "a sample of this process is drained");
	is_int(sample(d, start, ts + 10 * MS, u2, 3), 0, "and another, through the same caller");
	drain__release(d, ts + SEC);
	if (proctable__lookup(t->procs, pid, start, &slot) ||
	    proc_meta__read(pid, start, sc, FR_META_MAPS, 0, &m) ||
	    proctable__set_meta(t->procs, slot, pid, start, m, m->begun)) {
		ok(0, "our maps read and hung on our entry");
		goto out;
	}
	namer__init(&n, t, sc, symbolizer__ksyms(sym), nm, 0);
	sp = namer__space(&n, slot, pid, start, ts);
	ok(sp && sp->meta && sp->current && !sp->exited && sp->nid,
	   "our space, with the maps read");
	/* The first stack: as the drain stored it. */
	id = 0;
	for (uint32_t i = 1; i < 8 && !id; i++)
		if (intern__len(t->stacks, i) == 4 * sizeof(uint64_t))
			id = i;
	intern__identity(t->stacks, id, &hash, &serial);
	intern__copy(t->stacks, id, ips, sizeof(ips));
	is_int(namer__stack(&n, id, intern__tag(t->stacks, id), ips, sizeof(ips), sp, hash, serial),
	       0, "our stack is named");
	rec = names__stack(nm, id);
	ok(rec && rec->complete && rec->kn == 2 && rec->un == 2 && !rec->bogus,
	   "complete: every frame named for good");
	ok(rec && !strcmp(sym_of(nm, names__stack_frames(nm, rec)[2]), "fr_test_leaf") &&
	   !strcmp(sym_of(nm, names__stack_frames(nm, rec)[3]), "fr_test_caller"),
	   "named from our own symbols: %s <- %s",
	   rec ? sym_of(nm, names__stack_frames(nm, rec)[2]) : "?",
	   rec ? sym_of(nm, names__stack_frames(nm, rec)[3]) : "?");
	ok(rec && names__frame_at(nm, names__stack_frames(nm, rec)[2])->sym_off == 1 &&
	   names__frame_at(nm, names__stack_frames(nm, rec)[3])->sym_off == 8,
	   "offsets: the leaf's as sampled, the caller's of its return address");
	ok(namer__valid(rec, hash, serial, sp), "they stand for that very entry");
	ok(!namer__valid(rec, hash, serial + 1, sp) && !namer__valid(rec, hash ^ 1, serial, sp) &&
	   !namer__valid(rec, hash, serial, NULL),
	   "not for another entry with the id, nor seen in another space");
	{
		uint64_t before = n.st.frames, ips2[5];
		uint32_t id2 = 0, serial2;
		uint64_t hash2;

		for (uint32_t i = 1; i < 8 && !id2; i++)
			if (intern__len(t->stacks, i) == 5 * sizeof(uint64_t))
				id2 = i;
		intern__identity(t->stacks, id2, &hash2, &serial2);
		intern__copy(t->stacks, id2, ips2, sizeof(ips2));
		namer__stack(&n, id2, intern__tag(t->stacks, id2), ips2, sizeof(ips2), sp, hash2,
			     serial2);
		rec = names__stack(nm, id2);
		ok(n.st.frames == before + 2,
		   "the second stack looks up only its new addresses (%llu more)",
		   (unsigned long long)(n.st.frames - before));
		ok(rec && rec->bogus && rec->un == 2 && !rec->complete,
		   "a return address in no mapping cuts it, not for good while we live: a dump "
		   "names the stack again");
	}
	namer__fini(&n);
	is_int(encode(d, sym, &one, &st1), 0, "the window encodes");
	is_int(encode(d, sym, &two, &st2), 0, "and again, with the same symbolizer");
	ok(st1.named_stacks == 1 && st1.cached_stacks == 1,
	   "the first dump copied the complete stack and named the other (named %llu, copied %llu)",
	   (unsigned long long)st1.named_stacks, (unsigned long long)st1.cached_stacks);
	ok(st2.named_stacks == 1 && st2.cached_stacks == 1, "and so did the second");
	ok(one.len && one.len == two.len && !memcmp(one.p, two.p, one.len),
	   "the two dumps are the same byte for byte (%zu bytes)", one.len);
	ok(st1.user_resolved == 3 && st1.user_bogus == 1,
	   "the dump counts its frames from the names: %llu user frames named, %llu stack cut",
	   (unsigned long long)st1.user_resolved, (unsigned long long)st1.user_bogus);
	names__reset(nm);
	free(two.p);
	two = (struct buf){};
	is_int(encode(d, sym, &two, &st2), 0, "after a reset, the window encodes");
	ok(st2.named_stacks == 2 && one.len == two.len && !memcmp(one.p, two.p, one.len),
	   "naming both itself, to the same bytes");
out:
	free(one.p);
	free(two.p);
	symbolizer__free(sym);
	drain__free(d);
}

int main(void)
{
	struct symcache *sc = symcache__new();

	if (!sc) {
		printf("Bail out! a symbol cache: %s\n", strerror(errno));
		return 1;
	}
	store_empty_firsts();
	store_basics();
	compaction();
	namer_on_self(sc);
	symcache__free(sc);
	return tap_done_testing();
}
