// SPDX-License-Identifier: MIT
/*
 * test_srcline.c - unit tests of recorder/symbols/srcline.c and of the
 * source lines of symbols.c (elfsyms__lines()).
 *
 * Programs are built here with gcc -O2 -g and their answers compared with
 * addr2line -i -f (binutils: tools/bootstrap.sh installs it and gcc, and
 * a missing one fails). libc.so.6 is read with libc6-dbg's debug file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "srcline.h"
#include "symbols.h"
#include "tap.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LIBC		"/usr/lib/x86_64-linux-gnu/libc.so.6"
#define MAX_LV		FR_SRCLINE_MAX_LEVELS

/* ------------------------------------------------------------- helpers */

/* sh() - run a shell command line; true if it exited 0. */
static __attribute__((format(printf, 1, 2))) bool sh(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd) == 0;
}

/* slurp() - the output of a shell command line (malloc'd), or NULL. */
static __attribute__((format(printf, 1, 2))) char *slurp(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX], *buf = NULL;
	size_t len = 0, cap = 0, n;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
		}
		n = fread(buf + len, 1, 4096, f);
		len += n;
	} while (n);
	buf[len] = '\0';
	if (pclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* sym_addr() - the value (and size, if @size) of symbol @name in @path by nm; 0: none. */
static uint64_t sym_addr(const char *path, const char *name, uint64_t *size)
{
	char *out = slurp("nm -S '%s' 2>/dev/null", path), *line, *save = NULL;
	uint64_t v = 0;

	for (line = out ? strtok_r(out, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, s = 0;
		char type, n[256];

		if ((sscanf(line, "%llx %llx %c %255s", &a, &s, &type, n) == 4 ||
		     (s = 0, sscanf(line, "%llx %c %255s", &a, &type, n) == 3)) && !strcmp(n, name)) {
			v = a;
			if (size)
				*size = s;
			break;
		}
	}
	free(out);
	return v;
}

/* file_off() - the file offset of virtual address @vaddr of @path (its PT_LOAD); 0: none. */
static uint64_t file_off(const char *path, uint64_t vaddr)
{
	uint64_t off = 0;
	size_t n;
	Elf *e;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	e = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (e && !elf_getphdrnum(e, &n)) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD &&
			    vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
				off = vaddr - ph.p_vaddr + ph.p_offset;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return off;
}

/* One level as addr2line prints it. */
struct a2l {
	char func[256];
	char file[PATH_MAX];
	unsigned int line;
};

/*
 * addr2line() - the levels @tool (addr2line, eu-addr2line) -i -f gives
 * for @vaddr in @path, innermost first, into @out (MAX_LV). Returns their
 * number, -1 if it failed.
 */
static int addr2line(const char *tool, const char *path, uint64_t vaddr, struct a2l *out)
{
	char *txt = slurp("%s -i -f -e '%s' 0x%" PRIx64 " 2>/dev/null", tool, path, vaddr);
	char *save = NULL, *l;
	int n = 0;

	if (!txt)
		return -1;
	for (l = strtok_r(txt, "\n", &save); l && n < MAX_LV; l = strtok_r(NULL, "\n", &save)) {
		char *file = strtok_r(NULL, "\n", &save), *colon, *disc;

		if (!file)
			break;
		fr_strlcpy(out[n].func, l, sizeof(out[n].func));
		disc = strstr(file, " (discriminator");
		if (disc)
			*disc = '\0';
		/* eu-addr2line adds ":column" */
		colon = strrchr(file, ':');
		if (colon && colon > file && strchr(file, ':') != colon) {
			char *prev = colon - 1;

			while (prev > file && *prev != ':')
				prev--;
			if (*prev == ':' && strspn(prev + 1, "0123456789") == (size_t)(colon - prev - 1)) {
				*colon = '\0';
				colon = prev;
			}
		}
		out[n].line = colon ? (unsigned int)strtoul(colon + 1, NULL, 10) : 0;
		if (colon)
			*colon = '\0';
		fr_strlcpy(out[n].file, file, sizeof(out[n].file));
		n++;
	}
	free(txt);
	return n;
}

/*
 * same_levels() - whether @lv (@n levels) says what addr2line says: the
 * functions and lines, and the files too if @files; diag if not.
 */
static bool same_levels(const struct fr_srcline *lv, int n, const struct a2l *a, int na,
			bool files)
{
	bool same = n == na;

	for (int i = 0; same && i < n; i++)
		same = lv[i].func && !strcmp(lv[i].func, a[i].func) && lv[i].file &&
		       (!files || !strcmp(lv[i].file, a[i].file)) && lv[i].line == a[i].line;
	if (!same) {
		for (int i = 0; i < n; i++)
			tap_diag("srclines: %s at %s:%u", lv[i].func ? lv[i].func : "?",
				 lv[i].file ? lv[i].file : "?", lv[i].line);
		for (int i = 0; i < na; i++)
			tap_diag("addr2line: %s at %s:%u", a[i].func, a[i].file, a[i].line);
	}
	return same;
}

/* ends_with() - whether @s ends with @tail. */
static bool ends_with(const char *s, const char *tail)
{
	size_t a = s ? strlen(s) : 0, b = strlen(tail);

	return s && a >= b && !strcmp(s + a - b, tail);
}

/* --------------------------------------------------------- inlined code */

/*
 * The program: fr_inl_add() is always inlined into fr_caller(); the label
 * fr_inl_mark is a nop inside the inlined body, on line INL_LINE, and
 * fr_caller() calls it on CALL_LINE.
 */
static const char inl_src[] =
	"#include <stdlib.h>\n"						/* 1 */
	"static inline __attribute__((always_inline)) int fr_inl_add(int x)\n"
	"{\n"
	"\tx = x * 3 + 1;\n"
	"\t__asm__ volatile(\".globl fr_inl_mark\\nfr_inl_mark: nop\" ::: \"memory\");\n" /* 5 */
	"\treturn x ^ 5;\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) int fr_caller(int x)\n"
	"{\n"								/* 10 */
	"\tint y = fr_inl_add(x);\n"					/* 11 */
	"\treturn y + 2;\n"
	"}\n"
	"\n"
	"int main(int argc, char **argv)\n"				/* 15 */
	"{\n"
	"\t(void)argv;\n"
	"\treturn fr_caller(argc);\n"
	"}\n";
#define INL_LINE	5
#define CALL_LINE	11

/*
 * The same nesting of blocks FR_SRCLINE_MAX_DEPTH times over, and more:
 * the walk stops there and still names the function.
 */
static bool write_deep(const char *path, int depth)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return false;
	fprintf(f, "volatile int fr_sink;\n__attribute__((noinline)) int fr_deep(int x)\n{\n");
	for (int i = 0; i < depth; i++)
		fprintf(f, "{ volatile int v%d = x + %d; fr_sink += v%d;\n", i, i, i);
	fprintf(f, "__asm__ volatile(\".globl fr_deep_mark\\nfr_deep_mark: nop\");\n");
	for (int i = 0; i < depth; i++)
		fprintf(f, "}\n");
	fprintf(f, "return fr_sink;\n}\nint main(int c, char **v) { (void)v; return fr_deep(c); }\n");
	return !fclose(f);
}

static void test_inlined(const char *work)
{
	char src[PATH_MAX], prog[PATH_MAX + 8];
	struct fr_srcline lv[MAX_LV], lv2[MAX_LV];
	struct a2l a[MAX_LV];
	struct srclines *s;
	struct elfsyms *es;
	uint64_t mark, off;
	int fd, n, na;
	FILE *f;

	snprintf(src, sizeof(src), "%s/inl.c", work);
	snprintf(prog, sizeof(prog), "%s/inl", work);
	f = fopen(src, "w");
	if (!ok(f && fputs(inl_src, f) >= 0 && !fclose(f), "inline: the source is written"))
		return;
	if (!ok(sh("gcc -O2 -g -o '%s' '%s'", prog, src), "inline: gcc -O2 -g builds it"))
		return;
	mark = sym_addr(prog, "fr_inl_mark", NULL);
	off = file_off(prog, mark);
	if (!ok(mark && off, "inline: nm finds the mark inside the inlined body (0x%" PRIx64 ")", mark))
		return;

	fd = open(prog, O_RDONLY | O_CLOEXEC);
	s = srclines__open_fd(fd);
	close(fd);
	if (!ok(s != NULL, "inline: srclines__open_fd reads its DWARF (%s)", s ? "" : strerror(errno)))
		return;
	n = srclines__lookup(s, mark, lv, MAX_LV);
	is_int(n, 2, "inline: two levels at the mark");
	if (n == 2) {
		ok(lv[0].func && !strcmp(lv[0].func, "fr_inl_add") && !strcmp(lv[0].file, src) &&
		   lv[0].line == INL_LINE,
		   "inline: first the inlined function at its own line (%s at %s:%u)",
		   lv[0].func ? lv[0].func : "?", lv[0].file ? lv[0].file : "?", lv[0].line);
		ok(lv[1].func && !strcmp(lv[1].func, "fr_caller") && !strcmp(lv[1].file, src) &&
		   lv[1].line == CALL_LINE,
		   "inline: then its caller at the call's line (%s at %s:%u)",
		   lv[1].func ? lv[1].func : "?", lv[1].file ? lv[1].file : "?", lv[1].line);
	}
	na = addr2line("addr2line", prog, mark, a);
	ok(na >= 0 && same_levels(lv, n, a, na, true), "inline: the same levels as addr2line -i -f (%d)", na);
	is_int(srclines__lookup(s, mark, lv, 1), 1, "inline: with room for one level, one");
	ok(lv[0].func && !strcmp(lv[0].func, "fr_caller") && lv[0].line == CALL_LINE,
	   "inline: and that is the function the address is in, at the call");
	is_int(srclines__lookup(s, 0x10, lv, MAX_LV), 0, "inline: nothing for an address outside the code");
	is_int(srclines__lookup(s, mark, lv, 0), -EINVAL, "inline: no room is -EINVAL");
	ok(srclines__bytes(s) > 0 && srclines__bytes(s) < (64u << 20),
	   "inline: the handle counts what it holds (%" PRIu64 " bytes)", srclines__bytes(s));
	srclines__free(s);

	/* Through the symbol table: read at the first call, from the binary by its path. */
	es = elfsyms__open(prog);
	if (!ok(es && elfsyms__has_lines(es), "inline: elfsyms knows the binary has lines"))
		goto out;
	n = elfsyms__lines(es, off, NULL, NULL, lv2, MAX_LV);
	ok(n == 2 && !strcmp(lv2[0].func, "fr_inl_add") && lv2[0].line == INL_LINE &&
	   !strcmp(lv2[1].func, "fr_caller") && lv2[1].line == CALL_LINE,
	   "inline: elfsyms__lines gives the same by file offset (%d levels)", n);
	is_int(elfsyms__lines(es, 1ULL << 40, NULL, NULL, lv2, MAX_LV), 0,
	       "inline: an offset in no segment is nothing");
out:
	elfsyms__free(es);
}

/* A binary changed since its symbols were loaded: its lines are not read. */
static void test_changed(const char *work)
{
	char prog[PATH_MAX + 8], copy[PATH_MAX + 8];
	struct fr_srcline lv[MAX_LV];
	struct elfsyms *es;
	uint64_t off;

	snprintf(prog, sizeof(prog), "%s/inl", work);
	snprintf(copy, sizeof(copy), "%s/inl2", work);
	if (!sh("cp '%s' '%s'", prog, copy))
		return;
	es = elfsyms__open(copy);
	off = file_off(copy, sym_addr(copy, "fr_inl_mark", NULL));
	/* Another program in its place, with another build-id. */
	ok(es && sh("gcc -O0 -g -o '%s.new' -x c - <<'EOF'\nint main(void) { return 0; }\nEOF\n"
		    "mv '%s.new' '%s'", copy, copy, copy),
	   "changed: the binary is replaced after its symbols loaded");
	is_int(elfsyms__lines(es, off, NULL, NULL, lv, MAX_LV), -EAGAIN,
	       "changed: its lines are not read from the new file (-EAGAIN)");
	is_int(elfsyms__lines(es, off, NULL, NULL, lv, MAX_LV), -EAGAIN,
	       "changed: and not tried again at once");
	elfsyms__free(es);
}

static void test_deep(const char *work)
{
	char src[PATH_MAX], prog[PATH_MAX + 8];
	struct fr_srcline lv[MAX_LV];
	struct srclines *s;
	uint64_t mark;
	int fd, n;

	snprintf(src, sizeof(src), "%s/deep.c", work);
	snprintf(prog, sizeof(prog), "%s/deep", work);
	if (!ok(write_deep(src, FR_SRCLINE_MAX_DEPTH + 40) &&
		sh("gcc -O0 -g -o '%s' '%s'", prog, src), "deep: %d nested blocks build",
		FR_SRCLINE_MAX_DEPTH + 40))
		return;
	mark = sym_addr(prog, "fr_deep_mark", NULL);
	fd = open(prog, O_RDONLY | O_CLOEXEC);
	s = srclines__open_fd(fd);
	close(fd);
	n = s ? srclines__lookup(s, mark, lv, MAX_LV) : -1;
	ok(n == 1 && lv[0].func && !strcmp(lv[0].func, "fr_deep") && lv[0].line > 0,
	   "deep: the walk stops at its depth bound and names the function (%s:%u)",
	   n == 1 && lv[0].file ? lv[0].file : "?", n == 1 ? lv[0].line : 0);
	srclines__free(s);
}

/* ----------------------------------------------------------------- libc */

/* libc_debug() - the path of libc6-dbg's debug file for LIBC into @out. */
static bool libc_debug(char *out)
{
	const struct fr_buildid *id;
	struct elfsyms *s = elfsyms__open(LIBC);
	char h[2 * FR_BUILDID_MAX + 1];
	bool have;

	if (!s)
		return false;
	id = elfsyms__buildid(s);
	have = id->len >= 2;
	for (int i = 0; i < id->len; i++)
		snprintf(h + 2 * i, 3, "%02x", id->id[i]);
	snprintf(out, PATH_MAX, "/usr/lib/debug/.build-id/%.2s/%s.debug", h, h + 2);
	elfsyms__free(s);
	return have && !access(out, R_OK);
}

static void test_libc(void)
{
	static const char fn[] = "__libc_start_call_main";
	char dbg[PATH_MAX];
	struct fr_srcline lv[MAX_LV];
	struct a2l a[MAX_LV];
	struct elfsyms *s;
	uint64_t start, size = 0, addr;
	int n, na;

	if (!ok(libc_debug(dbg), "libc: libc6-dbg has a debug file for " LIBC))
		return;
	start = sym_addr(dbg, fn, &size);
	if (!ok(start && size > 16, "libc: nm finds %s in it (0x%" PRIx64 ", %" PRIu64 " bytes)",
		fn, start, size))
		return;
	addr = start + size / 2;
	s = elfsyms__open(LIBC);
	ok(s && elfsyms__has_lines(s), "libc: its lines are in the debug file");
	n = s ? elfsyms__lines(s, file_off(LIBC, addr), NULL, NULL, lv, MAX_LV) : -1;
	if (!ok(n >= 1, "libc: %s+%#" PRIx64 " has a source position (%d levels)", fn, size / 2, n))
		goto out;
	ok(lv[n - 1].func && !strcmp(lv[n - 1].func, fn) && ends_with(lv[n - 1].file, "libc_start_call_main.h") &&
	   lv[n - 1].line > 20 && lv[n - 1].line < 200,
	   "libc: last the function itself, in libc_start_call_main.h (%s at %s:%u)",
	   lv[n - 1].func ? lv[n - 1].func : "?", lv[n - 1].file ? lv[n - 1].file : "?", lv[n - 1].line);
	na = addr2line("addr2line", dbg, addr, a);
	ok(na > 0 && same_levels(lv, n, a, na, false),
	   "libc: the same functions and lines as addr2line -i -f on the debug file");
	/*
	 * binutils 2.40's addr2line takes DWARF 5 file 0 for file 1 here (it
	 * names libc-start.c, which includes the header; objdump --dwarf=
	 * decodedline agrees with libdw): the files are compared with elfutils'.
	 */
	na = addr2line("eu-addr2line", dbg, addr, a);
	ok(na > 0 && same_levels(lv, n, a, na, true),
	   "libc: and the same files as eu-addr2line -i -f (%s)", na > 0 ? a[na - 1].file : "none");
out:
	elfsyms__free(s);
}

/* ------------------------------------------------------- no waiting */

struct first_read {
	struct elfsyms *s;
	uint64_t off;
	_Atomic int phase;	/* 1: about to look up, 2: done */
	int n;
	uint64_t ns;
};

static void *first_read__run(void *arg)
{
	struct first_read *r = arg;
	struct fr_srcline lv[MAX_LV];

	uint64_t t0 = fr_boottime_ns();

	atomic_store(&r->phase, 1);
	r->n = elfsyms__lines(r->s, r->off, NULL, NULL, lv, MAX_LV);
	r->ns = fr_boottime_ns() - t0;
	atomic_store(&r->phase, 2);
	return NULL;
}

/*
 * While another thread's lookup reads libc's DWARF for the first time
 * (tens of milliseconds), the counts and the room the cache lends are
 * there at once: the drain's thread asks for both and must never wait
 * for a read. Counted as calls answered while the read was under way, one
 * each 200 us: about 560 in a read of 200 ms here; before the fix each
 * waited for the read to end, and 5 were.
 */
static void test_no_wait(void)
{
	struct first_read r = {0};
	struct fr_lines_stats st;
	char dbg[PATH_MAX];
	pthread_t t;
	unsigned during = 0, room_deferred = 0;

	if (!ok(libc_debug(dbg), "no wait: libc6-dbg has a debug file for " LIBC))
		return;
	r.s = elfsyms__open(LIBC);
	r.off = file_off(LIBC, sym_addr(dbg, "qsort_r", NULL) + 8);
	if (!ok(r.s && r.off, "no wait: libc's tables and an offset with lines"))
		goto out;
	elfsyms__lines_stats(&st);
	if (pthread_create(&t, NULL, first_read__run, &r)) {
		ok(0, "no wait: a thread for the lookup");
		goto out;
	}
	while (atomic_load(&r.phase) < 1)
		;
	/*
	 * A pause before each call: a thread that takes and drops a lock in a
	 * tight loop keeps a waiter from it (glibc's mutexes are not fair).
	 */
	while (atomic_load(&r.phase) == 1 && during < 100000) {
		usleep(200);
		elfsyms__lines_stats(&st);
		room_deferred += !elfsyms__set_lines_room(0);
		during += atomic_load(&r.phase) == 1;
	}
	pthread_join(t, NULL);
	ok(r.n >= 1, "no wait: the lookup found lines (%d levels, in %.1f ms)", r.n, r.ns / 1e6);
	ok(during >= 50, "no wait: %u calls for the counts and the room were answered while the read "
	   "went on (%u of the room's were left to the lookup)", during, room_deferred);
	ok(room_deferred >= 1, "no wait: a room asked for while the lookup held the lines was left to it to apply");
	elfsyms__lines_stats(&st);
	ok(st.bytes <= st.limit || st.open == 1,
	   "no wait: after it the handles are within the limit (%" PRIu64 " of %" PRIu64 " bytes)",
	   st.bytes, st.limit);
out:
	elfsyms__free(r.s);
}

/* ------------------------------------------------------ budget, refusal */

/*
 * two_tables() - the tables of the test program "inl" in @work and of libc,
 * with a file offset that has lines in each (*@off, *@loff: 0 when not
 * found; libc's needs libc6-dbg). The caller frees the tables.
 */
static void two_tables(const char *work, struct elfsyms **a, struct elfsyms **b, uint64_t *off,
		       uint64_t *loff)
{
	char prog[PATH_MAX + 8], dbg[PATH_MAX];

	snprintf(prog, sizeof(prog), "%s/inl", work);
	*a = elfsyms__open(prog);
	*b = elfsyms__open(LIBC);
	*off = file_off(prog, sym_addr(prog, "fr_inl_mark", NULL));
	*loff = libc_debug(dbg) ? file_off(LIBC, sym_addr(dbg, "abort", NULL) + 8) : 0;
}

static void test_budget(const char *work)
{
	struct fr_srcline lv[MAX_LV];
	struct fr_lines_stats st0, st;
	struct elfsyms *a, *b;
	uint64_t off, loff;

	two_tables(work, &a, &b, &off, &loff);
	if (!ok(a && b && off && loff, "budget: two tables with lines"))
		goto out;
	elfsyms__set_lines_budget(1);
	elfsyms__lines_stats(&st0);
	ok(elfsyms__lines(a, off, NULL, NULL, lv, MAX_LV) == 2 &&
	   elfsyms__lines(b, loff, NULL, NULL, lv, MAX_LV) >= 1,
	   "budget: with a budget of 1 byte a lookup still answers");
	elfsyms__lines_stats(&st);
	ok(st.evicted == st0.evicted + 1 && st.opened == st0.opened + 2 && st.open == 1,
	   "budget: opening the second closed the first (%" PRIu64 " evicted, %" PRIu64 " open)",
	   st.evicted - st0.evicted, st.open);
	/*
	 * Outside a hold (the namer) a handle closed for the budget is not
	 * read again for FR_LINES_REOPEN_NS: handles passing the budget
	 * together were read in turn for every new frame (the debuglink bomb
	 * of test_churn read 400 MiB in 20 s).
	 */
	is_int(elfsyms__lines(a, off, NULL, NULL, lv, MAX_LV), -EAGAIN,
	       "budget: outside a hold the closed one is not read again at once");
	elfsyms__lines_stats(&st0);
	ok(st0.deferred == st.deferred + 1 && st0.opened == st.opened && st0.open == 1,
	   "budget: the lookup is counted as deferred, nothing was read (%" PRIu64 " deferred)",
	   st0.deferred - st.deferred);
	/* Within a hold (one dump), nothing it used is closed: each is read once. */
	elfsyms__lines_stats(&st0);
	elfsyms__lines_hold(true);
	ok(elfsyms__lines(b, loff, NULL, NULL, lv, MAX_LV) >= 1 &&
	   elfsyms__lines(a, off, NULL, NULL, lv, MAX_LV) == 2 &&
	   elfsyms__lines(b, loff, NULL, NULL, lv, MAX_LV) >= 1 &&
	   elfsyms__lines(a, off, NULL, NULL, lv, MAX_LV) == 2,
	   "hold: lookups in two tables answer");
	elfsyms__lines_stats(&st);
	/* a's handle, used before the hold, may go once for b's; not after. */
	ok(st.opened - st0.opened <= 2 && st.evicted - st0.evicted <= 1 && st.open == 2,
	   "hold: over the budget, no handle it used is closed while it lasts "
	   "(%" PRIu64 " read, %" PRIu64 " evicted, %" PRIu64 " open)",
	   st.opened - st0.opened, st.evicted - st0.evicted, st.open);
	ok(st.peak >= st.bytes && st.bytes > 1, "hold: the peak counts them both");
	elfsyms__lines_hold(false);
	elfsyms__lines_stats(&st0);
	ok(st0.open == 1 && st0.evicted == st.evicted + 1 && st0.bytes < st.bytes,
	   "hold: its end closes the one that served fewer lookups per byte (libc's; %" PRIu64
	   " open)", st0.open);
	ok(elfsyms__lines(a, off, NULL, NULL, lv, MAX_LV) == 2,
	   "hold: the one kept still answers");
	elfsyms__lines_stats(&st);
	ok(st.opened == st0.opened, "hold: without reading it again");
	/*
	 * A dump looks up its heaviest frames first: the handle it used most
	 * is then the least recently used at its end. It stays; the one used
	 * once, last, goes (plain LRU closed the first, and every dump read it
	 * again).
	 */
	elfsyms__lines_hold(true);
	for (int i = 0; i < 5; i++)
		elfsyms__lines(a, off, NULL, NULL, lv, MAX_LV);
	elfsyms__lines(b, loff, NULL, NULL, lv, MAX_LV);
	elfsyms__lines_hold(false);
	elfsyms__lines_stats(&st0);
	ok(st0.open == 1 && elfsyms__lines(a, off, NULL, NULL, lv, MAX_LV) == 2,
	   "hold: the handle used most stays, though used first (%" PRIu64 " open)", st0.open);
	elfsyms__lines_stats(&st);
	ok(st.opened == st0.opened, "hold: and answers the next dump without reading it again");
	elfsyms__set_lines_budget(0);
out:
	elfsyms__free(a);
	elfsyms__free(b);
	elfsyms__lines_stats(&st);
	is_int(st.open, 0, "budget: freeing the tables closes their handles");
	ok(st.bytes == 0, "budget: and uncounts them");
}

/*
 * The room the symbol cache leaves: with few symbols, the handles may hold
 * more than their half of its budget (up to what the rest leaves of 7/8),
 * where at half a workload whose DWARF passed it had its handles closed
 * and read again in turn. Past the half and without the room, one goes.
 */
static void test_room(const char *work)
{
	struct fr_srcline lv[MAX_LV];
	struct fr_lines_stats st0, st;
	struct symcache *c = symcache__new();
	struct elfsyms *a, *b;
	uint64_t off, loff, both, budget;

	two_tables(work, &a, &b, &off, &loff);
	if (!ok(c && a && b && off && loff, "room: a cache, two tables with lines"))
		goto out;
	/* Both open, within one hold: what they hold together. */
	elfsyms__lines_hold(true);
	elfsyms__lines(a, off, NULL, NULL, lv, MAX_LV);
	elfsyms__lines(b, loff, NULL, NULL, lv, MAX_LV);
	elfsyms__lines_stats(&st0);
	both = st0.bytes;
	/* Their half is 2/3 of both; 7/8 of the budget, 7/6 of both. */
	budget = both * 4 / 3;
	symcache__set_budget(c, budget);
	elfsyms__lines_hold(false);
	ok(elfsyms__lines(a, off, NULL, NULL, lv, MAX_LV) == 2 &&
	   elfsyms__lines(b, loff, NULL, NULL, lv, MAX_LV) >= 1, "room: lookups in both answer");
	symcache__trim(c);
	elfsyms__lines_stats(&st);
	ok(st0.open == 2 && st.open == 2 && st.evicted == st0.evicted,
	   "room: %.1f MiB of handles, past their half of a %.1f MiB budget, stay open "
	   "(%" PRIu64 " open, %" PRIu64 " evicted)", both / 1048576.0, budget / 1048576.0,
	   st.open, st.evicted - st0.evicted);
	/*
	 * Past its budget (an image charged), the cache takes the loan back
	 * before any symbols go: the lines are back to their half. It lends
	 * nothing for FR_SYMCACHE_IDLE_NS after, the image
	 * given back: a dump that used both leaves one (under symbol churn,
	 * lent and taken back over and over, the room made test_churn's
	 * memory climb late).
	 */
	symcache__charge_image(c, (int64_t)budget + (1 << 20), 0, 0);
	symcache__trim(c);
	elfsyms__lines_stats(&st);
	ok(st.open < 2 && st.evicted > st0.evicted,
	   "room: past its budget, the cache takes the room back (%" PRIu64 " open)", st.open);
	symcache__charge_image(c, -(int64_t)budget - (1 << 20), 0, 0);
	symcache__trim(c);
	elfsyms__lines_hold(true);
	ok(elfsyms__lines(a, off, NULL, NULL, lv, MAX_LV) == 2 &&
	   elfsyms__lines(b, loff, NULL, NULL, lv, MAX_LV) >= 1, "room: a dump reads both again");
	elfsyms__lines_hold(false);
	elfsyms__lines_stats(&st);
	ok(st.open == 1, "room: and, lent nothing for a while, leaves one open (%" PRIu64 ")",
	   st.open);
out:
	elfsyms__set_lines_budget(0);
	elfsyms__free(a);
	elfsyms__free(b);
	symcache__free(c);
}

static void test_refusals(const char *work)
{
	char path[PATH_MAX + 16];
	struct fr_srcline lv[MAX_LV];
	struct srclines *s;
	struct elfsyms *es;
	int fd;

	fd = open("/usr/bin/true", O_RDONLY | O_CLOEXEC);
	s = srclines__open_fd(fd);
	ok(!s && errno == ENOENT, "refusal: a binary without DWARF gives ENOENT");
	close(fd);
	es = elfsyms__open("/usr/bin/true");
	ok(es && !elfsyms__has_lines(es) && elfsyms__lines(es, 0x1000, NULL, NULL, lv, MAX_LV) == -ENOENT,
	   "refusal: and elfsyms__lines -ENOENT");
	elfsyms__free(es);

	/* GNU-compressed sections: libdw would inflate them by their own header. */
	snprintf(path, sizeof(path), "%s/inl.z", work);
	if (sh("objcopy --compress-debug-sections=zlib-gnu '%s/inl' '%s' 2>/dev/null", work, path)) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		s = srclines__open_fd(fd);
		ok(!s && errno == ENOEXEC, "refusal: .zdebug sections are refused (ENOEXEC)");
		close(fd);
		srclines__free(s);
	} else {
		tap_skip(1, "objcopy cannot write zlib-gnu sections");
	}
	/* zlib (SHF_COMPRESSED) sections are read, decompressed by libelf. */
	snprintf(path, sizeof(path), "%s/inl.zc", work);
	ok(sh("objcopy --compress-debug-sections=zlib '%s/inl' '%s'", work, path) &&
	   (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0 && (s = srclines__open_fd(fd)) &&
	   srclines__lookup(s, sym_addr(path, "fr_inl_mark", NULL), lv, MAX_LV) == 2,
	   "refusal: SHF_COMPRESSED sections are read");
	srclines__free(s);
	if (fd >= 0)
		close(fd);
	/* Damaged DWARF: any answer, no crash. */
	snprintf(path, sizeof(path), "%s/inl.bad", work);
	if (sh("cp '%s/inl' '%s'", work, path)) {
		char *out = slurp("readelf -S -W '%s' | awk '$2 == \".debug_info\" { print $5 }'", path);
		unsigned long long at = out ? strtoull(out, NULL, 16) : 0;
		int n = 0;

		fd = open(path, O_RDWR | O_CLOEXEC);
		for (int i = 0; at && i < 64; i++) {
			unsigned char b = 0xff;

			pwrite(fd, &b, 1, (off_t)(at + 11 + i * 7));
		}
		s = srclines__open_fd(fd);
		for (uint64_t v = 0x1000; s && v < 0x1400; v += 3)
			n += srclines__lookup(s, v, lv, MAX_LV) > 0;
		ok(true, "refusal: damaged .debug_info is survived (%s, %d answers)",
		   s ? "read" : "refused", n);
		srclines__free(s);
		close(fd);
		free(out);
	}
}

int main(void)
{
	char work[] = "/tmp/fr_srcline.XXXXXX";

	if (!ok(mkdtemp(work) != NULL, "a work directory"))
		return tap_done_testing();
	if (!ok(sh("command -v gcc >/dev/null && command -v addr2line >/dev/null && command -v nm >/dev/null"),
		"gcc, addr2line and nm are installed (tools/bootstrap.sh)"))
		return tap_done_testing();
	test_inlined(work);
	test_deep(work);
	test_changed(work);
	test_libc();
	test_no_wait();
	test_budget(work);
	test_room(work);
	test_refusals(work);
	sh("rm -rf '%s'", work);
	return tap_done_testing();
}
