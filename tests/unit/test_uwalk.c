// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_uwalk.c - the daemon's walk over a copied user stack (uwalk.c):
 * every row kind on hand-made stacks, with the frames and end the kernel's
 * walk gives for them; then whole walks of this process's own stack, with
 * rows built from the files it maps (Debian's libc has no frame pointers),
 * against glibc's backtrace(), and of copies cut short.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "live_stack.h"
#include "procmaps.h"
#include "rows.h"
#include "tap.h"
#include "uwalk.h"

/* ---- hand-made stacks ---- */

/* One code mapping of a hand-made table. */
struct fake_map {
	uint64_t begin, end, bias;
	const struct fr_urow *rows;
	uint32_t nrows;
};

struct fake {
	struct fake_map map[4];
	unsigned n;
};

static int fake_find(void *ctx, uint64_t pc, struct uwalk_code *code)
{
	struct fake *f = ctx;

	for (unsigned i = 0; i < f->n; i++) {
		if (pc < f->map[i].begin || pc >= f->map[i].end)
			continue;
		code->rows = f->map[i].rows;
		code->nrows = f->map[i].nrows;
		code->bias = f->map[i].bias;
		return 0;
	}
	return -ENOENT;
}

#define BASE	0x7ffc00000000ULL	/* user address of the copy's first byte */
#define CODE	0x400000ULL		/* the fake file's code, mapped at its bias */
#define SLOTS	64

static uint64_t stk[SLOTS];

static void put(uint64_t addr, uint64_t v)
{
	stk[(addr - BASE) / 8] = v;
}

static void run(struct fake *f, const struct uwalk_regs *r, size_t len, uint64_t *ips,
		uint32_t max, struct uwalk_result *res)
{
	struct uwalk_src src = { .find = fake_find, .ctx = f, .base = BASE,
				 .stack = (const uint8_t *)stk, .len = len };

	uwalk__run(&src, r, ips, max, res);
}

/*
 * Rows at CODE + 0x100 * k for kind k's function; one STOP function at
 * 0x900 ends each walk there: its frames are [leaf, ra(0x900)].
 */
static void test_kinds(void)
{
	static const struct fr_urow rows[] = {
		{ .pc = 0x000, .cfa_off = 16, .kind = FR_UROW_RSP },
		{ .pc = 0x100, .cfa_off = 16, .kind = FR_UROW_RBP | FR_UROW_RBP_CFA, .rbp_off = -2 },
		{ .pc = 0x200, .cfa_off = 8, .kind = FR_UROW_PLT, .rbp_off = 11 },
		{ .pc = 0x300, .kind = FR_UROW_SIGNAL },
		{ .pc = 0x400, .kind = FR_UROW_NONE },
		{ .pc = 0x500, .kind = FR_UROW_INVALID },
		{ .pc = 0x600, .cfa_off = 8, .kind = FR_UROW_RA_RDI },
		{ .pc = 0x700, .cfa_off = 8, .kind = FR_UROW_RSP },
		{ .pc = 0x900, .kind = FR_UROW_STOP },
	};
	struct fake f = { .n = 1, .map = { { CODE, CODE + 0x1000, CODE, rows, 9 } } };
	uint64_t ips[8], sp = BASE + 64;
	struct uwalk_regs r;
	struct uwalk_result res;

	/* RSP: CFA = sp + 16, the return address below it. */
	memset(stk, 0, sizeof(stk));
	put(sp + 8, CODE + 0x901);
	r = (struct uwalk_regs){ .pc = CODE + 0x10, .sp = sp, .exact = true };
	run(&f, &r, sizeof(stk), ips, 8, &res);
	ok(res.n == 2 && ips[0] == CODE + 0x10 && ips[1] == CODE + 0x901 &&
	   res.end == FR_UEND_OUTERMOST && res.by_rows == 1 && res.by_fp == 0,
	   "rsp rule: the caller at sp + cfa_off - 8, then STOP (%u frames, end %u)", res.n, res.end);

	/* RBP with the caller's rbp saved at CFA - 16. */
	memset(stk, 0, sizeof(stk));
	put(sp + 32 + 8, CODE + 0x901);		/* CFA = bp + 16 = sp + 48 */
	put(sp + 32, 0x1234560);		/* CFA - 16: the saved rbp */
	r = (struct uwalk_regs){ .pc = CODE + 0x110, .sp = sp, .bp = sp + 32, .exact = true };
	{
		struct uwalk_src src = { .find = fake_find, .ctx = &f, .base = BASE,
					 .stack = (const uint8_t *)stk, .len = sizeof(stk) };
		uint64_t ips2[8];
		struct uwalk_result r2;
		/* The saved rbp is the caller's: a step by frame pointer from the
		 * caller (a NONE row at 0x400) uses it. */
		static const struct fr_urow rows2[] = {
			{ .pc = 0x100, .cfa_off = 16, .kind = FR_UROW_RBP | FR_UROW_RBP_CFA, .rbp_off = -2 },
			{ .pc = 0x400, .kind = FR_UROW_NONE },
		};
		struct fake f2 = { .n = 1, .map = { { CODE, CODE + 0x1000, CODE, rows2, 2 } } };

		put(sp + 32 + 8, CODE + 0x401);
		src.ctx = &f2;
		uwalk__run(&src, &r, ips2, 8, &r2);
		ok(r2.n == 2 && ips2[1] == CODE + 0x401 && r2.end == FR_UEND_NO_INFO,
		   "rbp rule: CFA = rbp + 16, and the caller's rbp restored from CFA - 16 "
		   "(the next step by frame pointer sees it: end %u)", r2.end);
		put(sp + 32, sp + 56);		/* a frame of the copy: fp step reads it */
		put(sp + 56, 0);
		put(sp + 64, CODE + 0x901);
		uwalk__run(&src, &r, ips2, 8, &r2);
		ok(r2.n == 3 && ips2[2] == CODE + 0x901 && r2.by_rows == 1 && r2.by_fp == 1,
		   "rbp rule then frame pointer: 3 frames, 1 by rows and 1 by frame pointer (%u, %u/%u)",
		   r2.n, r2.by_rows, r2.by_fp);
	}

	/* PLT: CFA = sp + 8, + 8 once pc & 15 reaches the threshold (11). */
	memset(stk, 0, sizeof(stk));
	put(sp, CODE + 0x901);
	put(sp + 8, CODE + 0x902);
	r = (struct uwalk_regs){ .pc = CODE + 0x205, .sp = sp, .exact = true };
	run(&f, &r, sizeof(stk), ips, 8, &res);
	ok(res.n == 2 && ips[1] == CODE + 0x901, "plt rule below the threshold: CFA = sp + 8");
	r.pc = CODE + 0x20b;
	run(&f, &r, sizeof(stk), ips, 8, &res);
	ok(res.n == 2 && ips[1] == CODE + 0x902, "plt rule at the threshold (pc & 15 == 11): CFA = sp + 16");

	/* SIGNAL: the interrupted registers from the ucontext at sp. */
	{
		static uint64_t big[64];
		struct uwalk_src src = { .find = fake_find, .ctx = &f, .base = BASE,
					 .stack = (const uint8_t *)big, .len = sizeof(big) };

		memset(big, 0, sizeof(big));
		big[FR_UC_RIP / 8] = CODE + 0x900;	/* exact: the STOP row itself */
		big[FR_UC_RSP / 8] = BASE + 8;
		big[FR_UC_RBP / 8] = 0;
		r = (struct uwalk_regs){ .pc = CODE + 0x301, .sp = BASE, .exact = false };
		uwalk__run(&src, &r, ips, 8, &res);
		ok(res.n == 2 && ips[1] == CODE + 0x900 && res.end == FR_UEND_OUTERMOST,
		   "signal rule: rip, rsp and rbp from the ucontext at sp (%u frames, end %u)",
		   res.n, res.end);
	}

	/* NONE: one frame-pointer step; a bad rbp ends with NO_INFO. */
	memset(stk, 0, sizeof(stk));
	r = (struct uwalk_regs){ .pc = CODE + 0x410, .sp = sp, .bp = sp + 3, .exact = true };
	run(&f, &r, sizeof(stk), ips, 8, &res);
	ok(res.n == 1 && res.end == FR_UEND_NO_INFO, "none rule: a misaligned rbp ends with no_info");

	/* INVALID. */
	r = (struct uwalk_regs){ .pc = CODE + 0x510, .sp = sp, .exact = true };
	run(&f, &r, sizeof(stk), ips, 8, &res);
	ok(res.n == 1 && res.end == FR_UEND_INVALID, "invalid rule: ends with invalid");

	/* RA_RDI: only in the interrupted frame, with rdi known. */
	r = (struct uwalk_regs){ .pc = CODE + 0x610, .sp = sp, .di = CODE + 0x901, .exact = true };
	run(&f, &r, sizeof(stk), ips, 8, &res);
	ok(res.n == 2 && ips[1] == CODE + 0x901 && res.end == FR_UEND_OUTERMOST,
	   "ra_rdi rule in the interrupted frame: the return address is rdi");
	r.exact = false;
	run(&f, &r, sizeof(stk), ips, 8, &res);
	ok(res.n == 1 && res.end == FR_UEND_INVALID, "ra_rdi rule at a return address: invalid");

	/* A return address in no mapping: not recorded, BAD_PC. */
	memset(stk, 0, sizeof(stk));
	put(sp, 0x10);
	r = (struct uwalk_regs){ .pc = CODE + 0x710, .sp = sp, .exact = true };
	run(&f, &r, sizeof(stk), ips, 8, &res);
	ok(res.n == 1 && res.end == FR_UEND_BAD_PC, "a return address in no mapping: bad_pc, unrecorded");

	/* A return address of 0 (a thread's first frame): outermost. */
	put(sp, 0);
	run(&f, &r, sizeof(stk), ips, 8, &res);
	ok(res.n == 1 && res.end == FR_UEND_OUTERMOST, "a return address of 0: outermost");

	/* A slot outside the copy: READ. */
	put(sp, CODE + 0x901);
	run(&f, &r, 64 + 4, ips, 8, &res);
	ok(res.n == 1 && res.end == FR_UEND_READ, "a slot past the copy's end: read");

	/* A CFA that does not move up: invalid. */
	{
		static const struct fr_urow zero[] = { { .pc = 0, .cfa_off = 0, .kind = FR_UROW_RSP } };
		struct fake fz = { .n = 1, .map = { { CODE, CODE + 0x1000, CODE, zero, 1 } } };

		run(&fz, &r, sizeof(stk), ips, 8, &res);
		ok(res.n == 1 && res.end == FR_UEND_INVALID, "a CFA at sp: invalid");
	}

	/* Depth: a chain of RSP frames cut at max. */
	memset(stk, 0, sizeof(stk));
	for (int i = 0; i < 6; i++)
		put(sp + 8 * i, CODE + 0x711);
	r = (struct uwalk_regs){ .pc = CODE + 0x710, .sp = sp, .exact = true };
	run(&f, &r, sizeof(stk), ips, 4, &res);
	ok(res.n == 4 && res.end == FR_UEND_DEPTH, "max frames: depth (%u)", res.n);

	/* The leaf in no mapping (JIT code): recorded, then frame pointer. */
	memset(stk, 0, sizeof(stk));
	put(sp + 16, 0);
	put(sp + 24, CODE + 0x901);
	r = (struct uwalk_regs){ .pc = 0x10, .sp = sp, .bp = sp + 16, .exact = true };
	run(&f, &r, sizeof(stk), ips, 8, &res);
	ok(res.n == 2 && ips[0] == 0x10 && ips[1] == CODE + 0x901 && res.by_fp == 1,
	   "a leaf in no mapping is recorded and left by frame pointer");

	/* Before the file's first row: frame pointer. */
	{
		static const struct fr_urow late[] = { { .pc = 0x800, .kind = FR_UROW_INVALID },
						       { .pc = 0x900, .kind = FR_UROW_STOP } };
		struct fake fl = { .n = 1, .map = { { CODE, CODE + 0x1000, CODE, late, 2 } } };

		r = (struct uwalk_regs){ .pc = CODE + 0x10, .sp = sp, .bp = sp + 16, .exact = true };
		run(&fl, &r, sizeof(stk), ips, 8, &res);
		ok(res.n == 2 && res.by_fp == 1 && res.end == FR_UEND_OUTERMOST,
		   "a pc before the file's first row is left by frame pointer");
	}
}

/* ---- this process's own stack ---- */

struct live_map {
	uint64_t begin, end, bias;
	struct urows rows;
	bool has_rows;
};

struct live {
	struct live_map *m;
	unsigned n;
	bool rows;		/* false: walk every mapping by frame pointer */
};

static int live_find(void *ctx, uint64_t pc, struct uwalk_code *code)
{
	struct live *l = ctx;

	for (unsigned i = 0; i < l->n; i++) {
		if (pc < l->m[i].begin || pc >= l->m[i].end)
			continue;
		if (l->rows && l->m[i].has_rows) {
			code->rows = l->m[i].rows.row;
			code->nrows = l->m[i].rows.n;
			code->bias = l->m[i].bias;
		}
		return 0;
	}
	return -ENOENT;
}

/* Rows for every executable file mapping of this process. */
static int live_load(struct live *l)
{
	struct procmaps *pm = procmaps__read(getpid());

	if (!pm)
		return -errno;
	l->m = calloc(pm->n, sizeof(*l->m));
	if (!l->m) {
		procmaps__free(pm);
		return -ENOMEM;
	}
	for (size_t i = 0; i < pm->n; i++) {
		const struct fr_mapping *fm = &pm->m[i];
		struct live_map *lm = &l->m[l->n];
		int fd;

		if (!(fm->prot & PROT_EXEC))
			continue;
		lm->begin = fm->start;
		lm->end = fm->end;
		l->n++;
		if (!fm->path || fm->path[0] != '/')
			continue;	/* the vDSO: frame pointers */
		fd = open(fm->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!urows__build_fd(fd, &lm->rows) &&
		    !fr_load_bias(lm->rows.load, lm->rows.nload, fm->start, fm->pgoff, &lm->bias))
			lm->has_rows = true;
		close(fd);
	}
	procmaps__free(pm);
	return 0;
}

static void live_free(struct live *l)
{
	for (unsigned i = 0; i < l->n; i++)
		urows__fini(&l->m[i].rows);
	free(l->m);
}

static void test_live(void)
{
	struct capture c = { 0 };
	struct live l = { .rows = true };
	struct uwalk_src src;
	struct uwalk_result res, fp;
	uint64_t ips[FR_MAX_STACK], fpips[FR_MAX_STACK];
	int same = 0, j, err;

	c.copy = malloc(LIVE_COPY_MAX);
	err = live_load(&l);
	if (!ok(c.copy && !err, "rows for this process's files (%d)", err))
		goto out;
	live_capture(&c);
	ok(c.len > 0 && c.nbt > 6, "a copy of %zu bytes of the stack, and %d frames from backtrace()",
	   c.len, c.nbt);
	src = (struct uwalk_src){ .find = live_find, .ctx = &l, .base = c.r.sp,
				  .stack = c.copy, .len = c.len };
	uwalk__run(&src, &c.r, ips, FR_MAX_STACK, &res);

	/*
	 * Ours: [live_capture_here, live_leaf (after its call), live_middle
	 * x4, live_capture, main, libc..., _start]; backtrace()'s: [live_leaf
	 * (after its own call), live_middle x4, ...], after ASan's
	 * interceptor of it in that build. From the middles on, both are the
	 * same return addresses, to the end.
	 */
	for (j = 0; j < c.nbt && res.n > 2; j++)
		if ((uint64_t)(uintptr_t)c.bt[j] == ips[2])
			break;
	for (int i = j; i < c.nbt && i - j + 2 < (int)res.n; i++)
		same += ips[i - j + 2] == (uint64_t)(uintptr_t)c.bt[i];
	ok(res.end == FR_UEND_OUTERMOST, "the walk reaches the outermost frame (end %u, %u frames)",
	   res.end, res.n);
	if (!ok(j < c.nbt && res.n - 2 == (uint32_t)(c.nbt - j) && same == c.nbt - j,
		"every caller above live_leaf() equals backtrace()'s, to the outermost (%d of %d)",
		same, c.nbt - j)) {
		for (uint32_t i = 0; i < res.n || (int)i < c.nbt; i++)
			printf("#   %2u ours %#" PRIx64 "  backtrace %p\n", i,
			       i < res.n ? ips[i] : 0, (int)i < c.nbt ? c.bt[i] : NULL);
	}
	ok(res.by_fp == 0 && res.by_rows == res.n - 1,
	   "every step by rows (%u by rows, %u by frame pointer)", res.by_rows, res.by_fp);

	/* Without rows, frame pointers lose libc's callers of main. */
	l.rows = false;
	uwalk__run(&src, &c.r, fpips, FR_MAX_STACK, &fp);
	l.rows = true;
	printf("# by frame pointer alone: %u frames, end %u\n", fp.n, fp.end);

	/* Cut short: the walk stops with READ where the copy ends, on a prefix. */
	{
		size_t cut = 256;
		uint64_t part[FR_MAX_STACK];
		struct uwalk_result pr;
		bool prefix = true;

		src.len = cut;
		uwalk__run(&src, &c.r, part, FR_MAX_STACK, &pr);
		for (uint32_t i = 0; i < pr.n; i++)
			prefix &= i < res.n && part[i] == ips[i];
		ok(pr.end == FR_UEND_READ && pr.n < res.n && prefix,
		   "a copy of %zu bytes: %u frames, a prefix of the whole walk, ended by read (%u)",
		   cut, pr.n, pr.end);
		src.len = 0;
		uwalk__run(&src, &c.r, part, FR_MAX_STACK, &pr);
		ok(pr.n == 1 && pr.end == FR_UEND_READ, "an empty copy: the leaf, then read");
	}
out:
	live_free(&l);
	free(c.copy);
}

int main(void)
{
	test_kinds();
	test_live();
	return tap_done_testing();
}
