// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_python.c - the daemon's side of Python frames (issue 27), against
 * Debian's own interpreter (/usr/bin/python3.11, installed by the
 * project's scripts):
 *  - detection: the interpreter's state, eval loop and its cold part are
 *    found in the stripped executable; another program is no interpreter;
 *  - the location table: for every instruction of functions the real
 *    interpreter compiled, pycode__line() gives the line co_positions() does;
 *  - code objects read from a live python3.11 (id() is the address): the
 *    qualified name, file and first line, in ASCII, Latin-1 and CJK names;
 *  - splicing Python frames into a native stack, each group in place of
 *    its eval-loop frame;
 *  - hostile memory: random bytes as a code object never crash the reader,
 *    and what it returns is text.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pycode.h"
#include "pydetect.h"
#include "pysplice.h"
#include "tap.h"
#include "util.h"

#define PYTHON	"/usr/bin/python3.11"

static void test_detect(void)
{
	struct pyfile pf;
	int fd, r;
	Elf *e;

	elf_version(EV_CURRENT);
	fd = open(PYTHON, O_RDONLY | O_CLOEXEC);
	if (!ok(fd >= 0, "%s exists (the project's scripts install it)", PYTHON))
		return;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	r = e ? pydetect__elf(e, &pf) : -1;
	is_int(r, 1, "%s is recognised as an interpreter", PYTHON);
	ok(pf.version >> 16 == 0x030b, "its version is 3.11 (Py_Version 0x%08x)", pf.version);
	ok(pf.runtime && pf.eval[1] > pf.eval[0], "_PyRuntime at 0x%llx, the eval loop at 0x%llx..0x%llx",
	   (unsigned long long)pf.runtime, (unsigned long long)pf.eval[0],
	   (unsigned long long)pf.eval[1]);
	ok(pf.eval[3] > pf.eval[2] && (pf.eval[3] <= pf.eval[0] || pf.eval[2] >= pf.eval[1]),
	   "the eval loop's cold part is found outside it, without .symtab (0x%llx..0x%llx)",
	   (unsigned long long)pf.eval[2], (unsigned long long)pf.eval[3]);
	ok(pf.off[FR_PYOFF_TSTATE_TID] && pf.off[FR_PYOFF_CODE_CODE],
	   "with the offsets of its version");
	if (e)
		elf_end(e);
	close(fd);
	fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	is_int(e ? pydetect__elf(e, &pf) : -1, 0, "/bin/true is no interpreter");
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	ok(!pydetect__table(0x030a0000) && !pydetect__table(0x030c0000) && pydetect__table(0x030b0400),
	   "only 3.11 has a table (3.10, 3.12: none)");
}

/* Run python3.11 with @script; its stdout into @out (malloc'd). 0 or -1. */
static int run_python(const char *script, char **out)
{
	char cmd[256];
	size_t len = 0, cap = 1 << 16;
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "%s -c \"$FR_PY\"", PYTHON);
	setenv("FR_PY", script, 1);
	p = popen(cmd, "r");
	*out = malloc(cap);
	if (!p || !*out)
		return -1;
	while ((n = fread(*out + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *m = realloc(*out, cap *= 2);

			if (!m)
				break;
			*out = m;
		}
	}
	(*out)[len] = 0;
	return pclose(p) ? -1 : 0;
}

static int hexval(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

/*
 * For each function the script compiles: "F first hex", then "I index line"
 * per code unit from co_positions(). Every line must be pycode__line()'s.
 */
static void test_lines(void)
{
	static const char *script =
		"import dis\n"
		"src = '''\n"
		"def f(a):\n"
		"    x = a + 1\n"
		"    if x > 3:\n"
		"        return [i * i for i in range(x)]\n"
		"    y = (x,\n"
		"         a)\n"
		"    try:\n"
		"        z = 1 / (a - a)\n"
		"    except ZeroDivisionError:\n"
		"        z = None\n"
		"    return y, z\n"
		"class K:\n"
		"    def m(self, n):\n"
		"        s = 0\n"
		"        for i in range(n):\n"
		"            s += i\n"
		"        return s\n"
		"'''\n"
		"g = {}\n"
		"exec(compile('\\n' * 300 + src, 'lines.py', 'exec'), g)\n"
		"for c in (g['f'].__code__, g['K'].m.__code__, compile('x = 1', 's.py', 'exec')):\n"
		"    print('F', c.co_firstlineno, c.co_linetable.hex())\n"
		"    for i, p in enumerate(c.co_positions()):\n"
		"        print('I', i, -1 if p[0] is None else p[0])\n";
	struct pycode c;
	char *out = NULL, *line, *save = NULL;
	int funcs = 0, units = 0, bad = 0, far = 0;

	if (!ok(!run_python(script, &out), "python3.11 lists its location tables")) {
		free(out);
		return;
	}
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == 'F') {
			char *hex;
			long first = strtol(line + 2, &hex, 10);
			size_t n = strlen(++hex) / 2;

			memset(&c, 0, sizeof(c));
			c.firstlineno = (int32_t)first;
			c.ltlen = (uint32_t)(n < FR_PY_LINETABLE_MAX ? n : 0);
			for (size_t i = 0; i < c.ltlen; i++)
				c.linetable[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
			funcs++;
		} else if (line[0] == 'I') {
			unsigned idx;
			int want, got;

			if (sscanf(line, "I %u %d", &idx, &want) != 2)
				continue;
			got = pycode__line(&c, idx);
			units++;
			far += want > 300;
			if (got != want && bad++ < 5)
				tap_diag("instruction %u: line %d, want %d", idx, got, want);
		}
	}
	is_int(funcs, 3, "three code objects");
	ok(units > 60 && far > 30, "%d instructions, %d of them past line 300 (deltas > 63)", units, far);
	is_int(bad, 0, "every instruction's line is co_positions()'s");
	memset(&c, 0, sizeof(c));
	c.firstlineno = 5;
	c.ltlen = 2;
	c.linetable[0] = 0x05;	/* no entry byte first: malformed */
	is_int(pycode__line(&c, 0), -1, "a table not starting with an entry gives no line");
	free(out);
}

static int vm_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = *(pid_t *)ctx;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* A live python3.11 prints id(code), and what the code object holds, of three functions. */
static void test_read_live(void)
{
	static const char *script =
		"import sys\n"
		"class Worker:\n"
		"    def middle(self):\n"
		"        return 1\n"
		"def größe():\n"
		"    pass\n"
		"def 函数():\n"
		"    pass\n"
		"for c in (Worker.middle.__code__, größe.__code__, 函数.__code__):\n"
		"    print(id(c), c.co_firstlineno, c.co_qualname, c.co_filename, sep='\\t')\n"
		"sys.stdout.flush()\n"
		"sys.stdin.read()\n";
	const struct pylayout *l = pylayout__of(0x030b02f0);
	int in[2], outp[2], good = 0;
	char buf[4096], *save = NULL, *line;
	ssize_t n;
	pid_t pid;

	if (!ok(l != NULL, "3.11 has a layout") || pipe(in) || pipe(outp))
		return;
	pid = fork();
	if (!pid) {
		dup2(in[0], 0);
		dup2(outp[1], 1);
		close(in[1]);
		close(outp[0]);
		execl(PYTHON, PYTHON, "-c", script, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(outp[1]);
	/* Until its three lines came: it waits on stdin, alive, meanwhile. */
	n = 0;
	for (ssize_t r; n < (ssize_t)sizeof(buf) - 1 &&
	     (r = read(outp[0], buf + n, sizeof(buf) - 1 - n)) > 0;) {
		int lines = 0;

		n += r;
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
		if (lines >= 3)
			break;
	}
	buf[n > 0 ? n : 0] = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long addr;
		int first;
		char qual[256], file[256];
		struct pycode c;
		int err;

		if (sscanf(line, "%llu\t%d\t%255[^\t]\t%255s", &addr, &first, qual, file) != 4)
			continue;
		err = pycode__read(l, vm_read, &pid, addr, &c);
		if (!err && c.firstlineno == first && !strcmp(c.qualname, qual) && !strcmp(c.file, file) &&
		    c.ltlen > 0)
			good++;
		else
			tap_diag("%s: read %d, '%s' '%s' line %d, table %u bytes", qual, err, c.qualname,
				 c.file, c.firstlineno, c.ltlen);
	}
	is_int(good, 3, "three code objects read from the live process: qualified name (ASCII, "
	       "Latin-1, CJK), file, first line and location table");
	close(in[1]);
	close(outp[0]);
	waitpid(pid, NULL, 0);
}

static void test_splice(void)
{
	const uint64_t eval[4] = { 0x1000, 0x2000, 0x9000, 0x9100 };
	/* leaf first: a C frame, the loop, a C call, the loop's cold part, main */
	const uint64_t ips[] = { 0x5000, 0x1100, 0x6000, 0x9050, 0x7000 };
	const struct fr_pyframe pf[] = {
		{ .code = 0xa0, .lasti = 3, .print = 1 },
		{ .code = 0xb0, .lasti = 4 | FR_PYFRAME_ENTRY, .print = 2 },
		{ .code = 0xc0, .lasti = 5, .print = 3 },
		{ .code = 0xd0, .lasti = 6 | FR_PYFRAME_ENTRY, .print = 4 },
		{ .code = 0xe0, .lasti = 7 | FR_PYFRAME_ENTRY, .print = 5 },
	};
	uint64_t out[64];
	bool cut;
	uint32_t n;

	n = fr_pysplice(ips, 5, pf, 5, eval, out, 64, &cut);
	ok(n == 3 + 2 * 5 && !cut && out[0] == 0x5000 && fr_pyw_is(out[1]) && out[2] == 0xa0 &&
	   fr_pyw_lasti(out[1]) == 3 && fr_pyw_print(out[1]) == 1 && out[4] == 0xb0 &&
	   out[5] == 0x6000 && out[7] == 0xc0 && out[9] == 0xd0 && out[11] == 0xe0 &&
	   out[12] == 0x7000,
	   "each eval frame (the cold part too) takes its group; the last eval frame what is left");
	n = fr_pysplice(ips, 5, pf, 2, eval, out, 64, &cut);
	ok(n == 5 - 1 + 4 && out[5] == 0x6000 && out[6] == 0x9050,
	   "an eval frame without Python frames left stays native");
	n = fr_pysplice((const uint64_t[]){ 0x5000, 0x6000 }, 2, pf, 5, eval, out, 64, &cut);
	ok(n == 2 + 10 && out[0] == 0x5000 && out[1] == 0x6000 && out[3] == 0xa0,
	   "no eval frame found: the Python frames go after the native ones");
	n = fr_pysplice(ips, 5, pf, 5, eval, out, 6, &cut);
	ok(n <= 6 && cut, "no room: cut, the root-most frames go (%u words)", n);
	ok(!fr_pyw_is(0x7fffffffffffULL) && !fr_pyw_is(0xffffffff81000000ULL) &&
	   fr_pyw_is(FR_PYW_MARK | 5), "a Python word is no user or kernel address");
}

/* Random memory as a process: a window of bytes at @base, the rest unreadable. */
struct fakemem {
	uint64_t base;
	uint8_t bytes[8192];
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fakemem *m = ctx;

	if (addr < m->base || addr - m->base > sizeof(m->bytes) ||
	    len > sizeof(m->bytes) - (addr - m->base))
		return -EFAULT;
	memcpy(buf, m->bytes + (addr - m->base), len);
	return 0;
}

static void test_hostile(void)
{
	const struct pylayout *l = pylayout__of(0x030b02f0);
	static struct fakemem m = { .base = 0x100000 };
	int bad_text = 0, read_ok = 0, weird_lines = 0;
	unsigned seed = 42;

	for (int it = 0; it < 20000; it++) {
		struct pycode c;

		for (size_t i = 0; i < sizeof(m.bytes); i += 4) {
			uint32_t v = (uint32_t)rand_r(&seed);

			/* Some words point back into the window, as a forger would. */
			if (!(v & 7))
				v = (uint32_t)(m.base + (v >> 3) % sizeof(m.bytes));
			memcpy(m.bytes + i, &v, 4);
		}
		/*
		 * Half the time, what a forger makes: a type named "code" where
		 * the type pointer leads, and the names' pointers at compact
		 * strings of a random kind and length (up to far past the window).
		 */
		if (it & 1) {
			uint64_t type = m.base + 1024, name = m.base + 2048, q = m.base + 3072,
				 f = m.base + 4096;

			memcpy(m.bytes + 8, &type, 8);
			memcpy(m.bytes + 1024 + 24, &name, 8);
			memcpy(m.bytes + 2048, "code", 5);
			memcpy(m.bytes + l->qualname, &q, 8);
			memcpy(m.bytes + l->filename, &f, 8);
			for (uint64_t at = 3072; at <= 4096; at += 1024) {
				uint32_t st = 0x20 | (uint32_t)(1u << (rand_r(&seed) % 3)) << 2 |
					      (rand_r(&seed) & 0x40);
				uint64_t len = rand_r(&seed) % 4 ? (uint64_t)(rand_r(&seed) % 600) :
						(uint64_t)rand_r(&seed) << 20;

				memcpy(m.bytes + at + l->str_state, &st, 4);
				memcpy(m.bytes + at + l->str_length, &len, 8);
			}
		}
		if (pycode__read(l, fake_read, &m, m.base, &c))
			continue;
		read_ok++;
		for (const char *s = c.qualname; *s; s++)
			bad_text += (unsigned char)*s < 0x20 || *s == 0x7f;
		for (const char *s = c.file; *s; s++)
			bad_text += (unsigned char)*s < 0x20 || *s == 0x7f;
		bad_text += strnlen(c.qualname, sizeof(c.qualname)) == sizeof(c.qualname);
		for (uint32_t k = 0; k < 64; k++)
			weird_lines += pycode__line(&c, k) < -1;
	}
	ok(read_ok > 0 && read_ok < 20000, "20000 random code objects read without a crash, "
	   "%d of them passing for one", read_ok);
	is_int(bad_text, 0, "what the reader returns is text: no control bytes, NUL-ended");
	is_int(weird_lines, 0, "and a line is a line or -1");
}

/* A compact ASCII str at @at of @m holding @text. */
static void fake_str(const struct pylayout *l, struct fakemem *m, uint64_t at, const char *text)
{
	uint32_t st = 0x20 | 0x40 | 1u << 2;
	uint64_t len = strlen(text);

	memcpy(m->bytes + at + l->str_state, &st, 4);
	memcpy(m->bytes + at + l->str_length, &len, 8);
	memcpy(m->bytes + at + l->str_ascii_data, text, len);
}

/*
 * A code object at @m's base, of a type named "code", whose qualname and
 * file are compact ASCII strs holding @qual and @file (at base + 3072 and
 * + 4096); the rest of @m zeroed.
 */
static void fake_code(const struct pylayout *l, struct fakemem *m, const char *qual,
		      const char *file)
{
	uint64_t type = m->base + 1024, name = m->base + 2048, q = m->base + 3072,
		 f = m->base + 4096;

	memset(m->bytes, 0, sizeof(m->bytes));
	memcpy(m->bytes + 8, &type, 8);
	memcpy(m->bytes + 1024 + 24, &name, 8);
	memcpy(m->bytes + 2048, "code", 5);
	memcpy(m->bytes + l->qualname, &q, 8);
	memcpy(m->bytes + l->filename, &f, 8);
	fake_str(l, m, 3072, qual);
	fake_str(l, m, 4096, file);
}

/*
 * A qualified name is identifiers, dots and "<...>": one with a control
 * character, or empty, is an object freed since the sample, and refused; a
 * file name is any text, its control characters shown as '?'.
 */
static void test_names(void)
{
	const struct pylayout *l = pylayout__of(0x030b02f0);
	static const struct {
		const char *qual, *file, *want_file;
		int err;
	} cases[] = {
		{ "Worker.middle", "/tmp/t.py", "/tmp/t.py", 0 },
		{ "outer.<locals>.<listcomp>", "<frozen os>", "<frozen os>", 0 },
		{ "\001", "/tmp/t.py", NULL, -EBADMSG },
		{ "grow\x7f", "/tmp/t.py", NULL, -EBADMSG },
		{ "", "/tmp/t.py", NULL, -EBADMSG },
		{ "grow", "/tmp/a\001b.py", "/tmp/a?b.py", 0 },
	};
	static struct fakemem m = { .base = 0x100000 };

	for (size_t i = 0; i < FR_ARRAY_SIZE(cases); i++) {
		struct pycode c;
		int err;

		fake_code(l, &m, cases[i].qual, cases[i].file);
		err = pycode__read(l, fake_read, &m, m.base, &c);
		/* Printed as read: what the reader returns is text (the case's own may not be). */
		ok(err == cases[i].err && (err || (!strcmp(c.qualname, cases[i].qual) &&
						   !strcmp(c.file, cases[i].want_file))),
		   "name case %zu %s (%d; qualname '%s', file '%s')", i,
		   cases[i].err ? "refused" : "read", err, err ? "" : c.qualname, err ? "" : c.file);
	}
}

/* A reader that makes the object anew after its head was first read: a free and a reuse. */
struct tearmem {
	struct fakemem *m;
	int reads;
	uint64_t new_qual;
	uint16_t at;
};

static int tear_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct tearmem *t = ctx;
	int err = fake_read(t->m, addr, buf, len);

	if (++t->reads == 1)
		memcpy(t->m->bytes + t->at, &t->new_qual, 8);
	return err;
}

/*
 * The head is read in one read and checked again after the strings: an
 * object made anew meanwhile (its qualname pointer moved to another str)
 * is -ESTALE, not one object's file with another's name.
 */
static void test_torn(void)
{
	const struct pylayout *l = pylayout__of(0x030b02f0);
	static struct fakemem m = { .base = 0x100000 };
	struct tearmem t = { .m = &m, .new_qual = m.base + 5120, .at = l->qualname };
	struct pycode c;
	int err;

	fake_code(l, &m, "<module>", "/usr/lib/python3.11/email/_policybase.py");
	fake_str(l, &m, 5120, "email");
	err = pycode__read(l, fake_read, &m, m.base, &c);
	ok(!err && !strcmp(c.qualname, "<module>"), "an object left alone reads whole (%d, '%s')",
	   err, c.qualname);
	err = pycode__read(l, tear_read, &t, m.base, &c);
	is_int(err, -ESTALE, "one made anew while it was read is stale");
}

int main(void)
{
	test_detect();
	test_lines();
	test_read_live();
	test_splice();
	test_hostile();
	test_names();
	test_torn();
	return tap_done_testing();
}
