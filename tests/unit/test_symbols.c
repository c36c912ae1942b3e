// SPDX-License-Identifier: MIT
/*
 * test_symbols.c - unit tests of recorder/symbols/symbols.c.
 *
 * Real processes, real binaries and the real /proc/kallsyms where they
 * exist; small ELF files are built here byte by byte for exact layouts.
 * Separate debug information and demangling are tested on libc.so.6 with
 * libc6-dbg and on programs built here with gcc, g++, objcopy, strip, nm
 * and xz (tools/bootstrap.sh installs them all: a missing one fails).
 * Build with -g -fno-omit-frame-pointer. Run with "--spin FD" the program
 * only reports an address on FD and waits to be killed (used for the
 * deleted-binary test).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "debuginfo.h"
#include "demangle.h"
#include "kallsyms.h"
#include "perfmap.h"
#include "symbols.h"
#include "tap.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------- targets */

void *fr_test_ret_addr;
void *fr_test_probe(void);
int fr_test_target_a(int x);
int fr_test_target_b(int x);
volatile int fr_test_sink;

__attribute__((noinline)) void *fr_test_probe(void)
{
	return __builtin_return_address(0);
}

/* Records an address inside itself (a return address) in fr_test_ret_addr. */
__attribute__((noinline)) int fr_test_target_a(int x)
{
	for (int i = 0; i < x; i++)
		fr_test_sink += i * 3;
	fr_test_ret_addr = fr_test_probe();
	return fr_test_sink + x;
}

__attribute__((noinline)) int fr_test_target_b(int x)
{
	fr_test_sink ^= x * 7;
	return fr_test_sink - 1;
}

static int (*volatile fp_a)(int) = fr_test_target_a;
static int (*volatile fp_b)(int) = fr_test_target_b;

/* ------------------------------------------------------------- helpers */

/* tmp_write() - a new temp file holding @len bytes of @buf; path in @path. */
static int tmp_write(char *path, const void *buf, size_t len)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int fd;

	snprintf(path, PATH_MAX, "%s/fr_symtest.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	if (len && write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		return -EIO;
	}
	close(fd);
	return 0;
}

/* read_all() - the content of @path in a malloc'd buffer, size in *@len. */
static uint8_t *read_all(const char *path, size_t *len)
{
	uint8_t *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	int fd;

	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (*len == cap) {
			uint8_t *nb = realloc(buf, cap ? cap * 2 : 1 << 20);

			if (!nb)
				break;
			buf = nb;
			cap = cap ? cap * 2 : 1 << 20;
		}
		n = read(fd, buf + *len, cap - *len);
		if (n <= 0)
			break;
		*len += n;
	}
	close(fd);
	return buf;
}

static void hex(const struct fr_buildid *id, char *out)
{
	for (int i = 0; i < id->len; i++)
		sprintf(out + 2 * i, "%02x", id->id[i]);
	out[2 * id->len] = '\0';
}

/* lookup_live() - symbolize @addr of live process @pid through @c. */
static const char *lookup_live(struct symcache *c, const struct procmaps *pm,
			       int pid, uint64_t addr, uint64_t *off)
{
	const struct fr_mapping *m = procmaps__find(pm, addr);
	const struct elfsyms *s;

	if (!m)
		return NULL;
	s = symcache__get_mapping(c, pid, m);
	return elfsyms__lookup(s, addr - m->start + m->pgoff, off);
}

/* ------------------------------------------------------------ procmaps */

static const char maps_fixture[] =
	"55d0c4a00000-55d0c4a02000 r--p 00000000 08:01 1234                       /usr/bin/my prog\n"
	"55d0c4a02000-55d0c4a05000 r-xp 00002000 08:01 1234                       /usr/bin/my prog\n"
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"55d0c6000000-55d0c6021000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
	"not a maps line\n"
	"7f0000002000-7f0000004000 r-xs 00001000 fd:02 99                         /tmp/old lib.so (deleted)\n"
	"7f0000004000-7f0000005000 ---p 00000000 00:00 0\n"
	"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n";

static void test_procmaps_parse(void)
{
	const struct fr_mapping *m;
	struct procmaps *pm;
	bool sorted = true;
	FILE *f;

	f = fmemopen((void *)maps_fixture, sizeof(maps_fixture) - 1, "r");
	pm = f ? procmaps__parse(f) : NULL;
	if (f)
		fclose(f);
	if (!ok(pm != NULL, "procmaps__parse: fixture parses")) {
		tap_skip(24, "no table");
		return;
	}
	is_int(pm->n, 8, "procmaps__parse: 8 mappings, malformed line skipped");
	for (size_t i = 1; i < pm->n; i++)
		sorted &= pm->m[i - 1].start < pm->m[i].start;
	ok(sorted, "procmaps__parse: sorted by start");

	m = &pm->m[0];
	ok(m->start == 0x55d0c4a00000 && m->end == 0x55d0c4a02000 &&
	   m->pgoff == 0, "procmaps: first range and offset");
	is_str(m->path, "/usr/bin/my prog", "procmaps: path with a space");
	ok(m->dev == makedev(8, 1) && m->inode == 1234, "procmaps: dev and inode");
	is_int(m->prot, PROT_READ, "procmaps: r--p prot");
	m = &pm->m[1];
	ok(m->pgoff == 0x2000 && m->prot == (PROT_READ | PROT_EXEC),
	   "procmaps: r-xp with pgoff 0x2000");
	m = &pm->m[2];
	is_str(m->path, "[heap]", "procmaps: [heap] kept");
	m = &pm->m[3];
	ok(m->path == NULL && m->prot == (PROT_READ | PROT_WRITE) &&
	   m->inode == 0, "procmaps: anonymous mapping has no path");
	m = &pm->m[4];
	is_str(m->path, "/tmp/old lib.so", "procmaps: (deleted) stripped");
	ok(m->deleted && m->dev == makedev(0xfd, 2) && m->inode == 99,
	   "procmaps: deleted flag, hex device fd:02");
	ok(!pm->m[3].deleted && !pm->m[0].deleted, "procmaps: others not deleted");
	m = &pm->m[5];
	ok(m->path == NULL && m->prot == 0, "procmaps: ---p without padding");
	is_str(pm->m[6].path, "[stack]", "procmaps: [stack]");
	is_str(pm->m[7].path, "[vdso]", "procmaps: [vdso]");

	ok(procmaps__find(pm, 0x55d0c4a00000) == &pm->m[0],
	   "procmaps__find: start is inclusive");
	ok(procmaps__find(pm, 0x55d0c4a01fff) == &pm->m[0],
	   "procmaps__find: last byte");
	ok(procmaps__find(pm, 0x55d0c4a02000) == &pm->m[1],
	   "procmaps__find: end is exclusive, next adjacent mapping");
	ok(procmaps__find(pm, 0x55d0c4a05000) == NULL,
	   "procmaps__find: gap after a mapping");
	ok(procmaps__find(pm, 0x1000) == NULL, "procmaps__find: before first");
	ok(procmaps__find(pm, 0x7ffd00002000) == NULL,
	   "procmaps__find: end of last");
	ok(procmaps__find(pm, UINT64_MAX) == NULL, "procmaps__find: top");
	ok(procmaps__find(pm, 0x7f0000003abc) == &pm->m[4],
	   "procmaps__find: inside a middle mapping");
	ok(procmaps__find(NULL, 1) == NULL, "procmaps__find: NULL table");
	procmaps__free(pm);
	procmaps__free(NULL);
}

/* -------------------------------------------------------- live process */

/*
 * test_fallback() - a mapping whose range has no map_files entry makes
 * symcache__get_mapping() go through /proc/PID/root/<path>, which must be
 * the mapped inode.
 */
static void test_fallback(const struct procmaps *pm)
{
	const struct fr_mapping *own = procmaps__find(pm, (uintptr_t)fp_a);
	struct fr_mapping m;
	struct symcache *c = symcache__new();
	const struct elfsyms *s;
	uint64_t off = 99;

	if (!own || !own->path || !c) {
		ok(0, "fallback: own mapping and cache");
		tap_skip(2, "no mapping");
		symcache__free(c);
		return;
	}
	m = *own;
	m.start = 0x1000;	/* no such mapping: map_files fails */
	m.end = 0x2000;
	s = symcache__get_mapping(c, getpid(), &m);
	ok(s && !strcmp(elfsyms__lookup(s, (uintptr_t)fp_a - own->start +
					own->pgoff, &off), "fr_test_target_a"),
	   "fallback: /proc/PID/root/<path> with the mapped inode resolves");
	m.inode = own->inode + 1;
	errno = 0;
	ok(!symcache__get_mapping(c, getpid(), &m) && errno == ESTALE,
	   "fallback: another inode at the path gives ESTALE");
	m.inode = own->inode;
	m.deleted = true;
	errno = 0;
	ok(!symcache__get_mapping(c, getpid(), &m) && errno == ENOENT,
	   "fallback: not used for a deleted file");
	symcache__free(c);
}

static void test_self(void)
{
	uint64_t a = (uintptr_t)fp_a, b = (uintptr_t)fp_b, off = 99, ret;
	const struct fr_mapping *m;
	const struct elfsyms *s;
	struct symcache *c;
	struct procmaps *pm;
	const char *name;
	void *gp;

	pm = procmaps__read(getpid());
	c = symcache__new();
	if (!ok(pm && pm->n > 0 && c, "procmaps__read(self) and symcache__new")) {
		tap_skip(16, "no maps");
		goto out;
	}
	m = procmaps__find(pm, a);
	ok(m && (m->prot & PROT_EXEC) && m->path && !m->deleted,
	   "own function lies in an executable file mapping");

	name = lookup_live(c, pm, getpid(), a, &off);
	is_str(name, "fr_test_target_a", "own function resolves by name");
	is_int(off, 0, "own function start has offset 0");
	name = lookup_live(c, pm, getpid(), b, &off);
	is_str(name, "fr_test_target_b", "second function resolves");
	is_int(off, 0, "second function offset 0");

	fp_a(5);
	ret = (uintptr_t)fr_test_ret_addr;
	name = lookup_live(c, pm, getpid(), ret, &off);
	is_str(name, "fr_test_target_a", "return address inside function resolves");
	ok(off > 0 && off == ret - a, "offset inside function is ret - start (%llu)",
	   (unsigned long long)off);

	gp = dlsym(RTLD_DEFAULT, "getpid");
	name = gp ? lookup_live(c, pm, getpid(), (uintptr_t)gp, &off) : NULL;
	contains(name, "getpid", "libc getpid resolves");
	is_int(off, 0, "libc getpid offset 0");
	gp = dlsym(RTLD_DEFAULT, "strlen");
	m = gp ? procmaps__find(pm, (uintptr_t)gp) : NULL;
	ok(m && m->path, "strlen (IFUNC-resolved) in a file mapping");

	m = NULL;
	for (size_t i = 0; i < pm->n; i++)
		if (pm->m[i].path && !strcmp(pm->m[i].path, "[vdso]"))
			m = &pm->m[i];
	if (m) {
		errno = 0;
		s = symcache__get_mapping(c, getpid(), m);
		ok(!s && errno == ENOENT, "[vdso] gives NULL, ENOENT");
	} else {
		tap_skip(1, "no [vdso] mapping");
	}
	m = NULL;
	for (size_t i = 0; i < pm->n; i++)
		if (!pm->m[i].path)
			m = &pm->m[i];
	errno = 0;
	ok(m && !symcache__get_mapping(c, getpid(), m) && errno == ENOENT,
	   "anonymous mapping gives NULL, ENOENT");
	errno = 0;
	ok(!procmaps__read(INT_MAX) && errno == ENOENT,
	   "procmaps__read of a missing pid fails with ENOENT");
	test_fallback(pm);
out:
	symcache__free(c);
	procmaps__free(pm);
}

/* --spin mode: report fr_test_target_a's address on @fd, wait for death. */
static int spin(int fd)
{
	uint64_t a = (uintptr_t)fp_a;

	if (write(fd, &a, sizeof(a)) != sizeof(a))
		return 1;
	close(fd);
	for (;;)
		pause();
}

/* copy_self() - copy our executable to an executable temp file. */
static int copy_self(char *path)
{
	char exe[PATH_MAX - 32];
	uint8_t *buf;
	size_t len;
	ssize_t n;
	int r;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = '\0';
	buf = read_all(exe, &len);
	if (!buf)
		return -EIO;
	/* Next to the test binary: its file system allows exec. */
	*strrchr(exe, '/') = '\0';
	snprintf(path, PATH_MAX, "%s/.fr_symtest_exe.XXXXXX", exe);
	r = mkstemp(path);
	if (r >= 0) {
		int fd = r;

		r = write(fd, buf, len) == (ssize_t)len &&
		    !fchmod(fd, 0755) ? 0 : -EIO;
		close(fd);
		if (r)
			unlink(path);
	} else {
		r = -errno;
	}
	free(buf);
	return r;
}

/*
 * map_files names an address range, not a file: after a file mapped at
 * the range of another (a dlclose and a dlopen of a library of the same
 * size), the mapping as read before is refused (-ESTALE), the one read
 * after opens.
 */
static void test_mapping_replaced(void)
{
	char a[] = "/tmp/fr-map-a-XXXXXX", b[] = "/tmp/fr-map-b-XXXXXX";
	long pg = sysconf(_SC_PAGESIZE);
	int fa = mkstemp(a), fb = mkstemp(b), fd;
	struct procmaps *before = NULL, *after = NULL;
	const struct fr_mapping *m;
	void *p = MAP_FAILED;
	struct stat st;

	if (fa < 0 || fb < 0 || ftruncate(fa, pg) || ftruncate(fb, pg)) {
		ok(0, "replaced: two files of a page");
		goto out;
	}
	p = mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fa, 0);
	before = p != MAP_FAILED ? procmaps__read(getpid()) : NULL;
	if (!ok(before && p != MAP_FAILED, "replaced: the first file mapped and the maps read"))
		goto out;
	/* The other file in its place, in one call: the range stays. */
	if (mmap(p, pg, PROT_READ, MAP_PRIVATE | MAP_FIXED, fb, 0) != p) {
		ok(0, "replaced: the second file mapped at the first one's place");
		goto out;
	}
	after = procmaps__read(getpid());
	m = procmaps__find(before, (uint64_t)(uintptr_t)p);
	fd = m ? fr_mapping__open("/proc/self", m) : -ENOENT;
	is_int(fd, -ESTALE, "replaced: the mapping read before is not opened as the file there now");
	if (fd >= 0)
		close(fd);
	m = procmaps__find(after, (uint64_t)(uintptr_t)p);
	fd = m ? fr_mapping__open("/proc/self", m) : -ENOENT;
	ok(fd >= 0 && !fstat(fd, &st) && m && st.st_ino == m->inode,
	   "replaced: the mapping read after opens, and is the second file");
	if (fd >= 0)
		close(fd);
out:
	if (p != MAP_FAILED)
		munmap(p, pg);
	procmaps__free(before);
	procmaps__free(after);
	if (fa >= 0) {
		close(fa);
		unlink(a);
	}
	if (fb >= 0) {
		close(fb);
		unlink(b);
	}
}

static void test_deleted(void)
{
	char path[PATH_MAX], alt[PATH_MAX + 32], fdarg[16];
	const struct fr_mapping *m;
	const struct elfsyms *s;
	struct procmaps *pm = NULL;
	struct symcache *c = NULL;
	uint64_t addr = 0, off = 99;
	const char *name;
	int pfd[2], status = 0;
	pid_t pid;
	ssize_t n;

	if (copy_self(path) || pipe(pfd)) {
		ok(0, "deleted: copy /proc/self/exe and make a pipe");
		tap_skip(7, "no copy");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		snprintf(fdarg, sizeof(fdarg), "%d", pfd[1]);
		execl(path, path, "--spin", fdarg, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	n = pid > 0 ? read(pfd[0], &addr, sizeof(addr)) : -1;
	close(pfd[0]);
	unlink(path);
	ok(n == sizeof(addr), "deleted: child runs the copy and reports an address");
	ok(access(path, F_OK) && errno == ENOENT, "deleted: copy is unlinked");

	pm = pid > 0 ? procmaps__read(pid) : NULL;
	m = procmaps__find(pm, addr);
	ok(m && m->deleted && m->path && !strcmp(m->path, path),
	   "deleted: child maps the copy as (deleted)");
	snprintf(alt, sizeof(alt), "/proc/%d/root%s", pid, path);
	ok(access(alt, F_OK) != 0, "deleted: the path through /proc/PID/root is gone");

	c = symcache__new();
	s = m && c ? symcache__get_mapping(c, pid, m) : NULL;
	ok(s != NULL, "deleted: symbols load through map_files");
	name = m ? elfsyms__lookup(s, addr - m->start + m->pgoff, &off) : NULL;
	is_str(name, "fr_test_target_a", "deleted: child function resolves");
	is_int(off, 0, "deleted: offset 0");
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	ok(pid > 0 && WIFSIGNALED(status), "deleted: child killed and reaped");
	symcache__free(c);
	procmaps__free(pm);
}

/* ------------------------------------------------------------ build-id */

static void test_buildid(void)
{
	char cmd[128], line[512], want[64] = "", got[64] = "";
	struct fr_buildid id = { 0 };
	struct elfsyms *s;
	FILE *p;
	int fd, r;

	if (system("readelf --version >/dev/null 2>&1") != 0) {
		tap_skip(3, "readelf is not installed");
		return;
	}
	snprintf(cmd, sizeof(cmd), "readelf -n /proc/%d/exe 2>/dev/null",
		 getpid());
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		char *b = strstr(line, "Build ID: ");

		if (b && !want[0])
			sscanf(b + 10, "%63[0-9a-fA-F]", want);
	}
	if (p)
		pclose(p);

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	r = elf_read_buildid(fd, &id);
	hex(&id, got);
	/* /proc/self/exe is a (magic) symlink: elfsyms__open() refuses those. */
	s = elfsyms__open_fd(fd);
	if (want[0]) {
		is_int(r, 0, "elf_read_buildid: found");
		is_str(got, want, "elf_read_buildid matches readelf -n");
		ok(s && !memcmp(elfsyms__buildid(s), &id, sizeof(id)),
		   "elfsyms__buildid matches elf_read_buildid");
	} else {
		is_int(r, -ENOENT, "elf_read_buildid: none, as readelf says");
		is_int(id.len, 0, "elf_read_buildid: empty");
		ok(s && elfsyms__buildid(s)->len == 0, "elfsyms__buildid: empty");
	}
	elfsyms__free(s);
	close(fd);
}

/* -------------------------------------------------------- synthetic ELF */

/* Corruptions applied by synth_build(). */
enum { SYNTH_OK, SYNTH_SYMTAB_EOF, SYNTH_BAD_LINK, SYNTH_SHOFF_EOF,
       SYNTH_PHOFF_EOF };

struct synth_opts {
	uint16_t type;		/* ET_EXEC or ET_DYN */
	uint64_t base;		/* vaddr of file offset 0 */
	uint32_t symtype;	/* SHT_SYMTAB, SHT_DYNSYM or 0 for none */
	bool note;		/* PT_NOTE + .note.gnu.build-id */
	int corrupt;
};

struct synth_sym {
	const char *name;
	uint64_t off;		/* from the start of .text */
	uint64_t size;
	uint8_t type, bind;
	bool undef, bad_name;
};

static const struct synth_sym synth_syms[] = {
	{ "f_last", 0x800, 0, STT_FUNC, STB_LOCAL, false, false },
	{ "f_sized", 0x10, 0x20, STT_FUNC, STB_GLOBAL, false, false },
	{ "f_alias", 0x10, 0x20, STT_FUNC, STB_WEAK, false, false },
	{ "d_object", 0x50, 0x10, STT_OBJECT, STB_GLOBAL, false, false },
	{ "f_unsized", 0x100, 0, STT_FUNC, STB_GLOBAL, false, false },
	{ "f_ifunc", 0x200, 0x10, STT_GNU_IFUNC, STB_GLOBAL, false, false },
	{ "f_undef", 0x400, 0x10, STT_FUNC, STB_GLOBAL, true, false },	/* PLT value */
	{ "f_badname", 0x300, 0x10, STT_FUNC, STB_GLOBAL, false, true },
};
#define SYNTH_NSYMS (sizeof(synth_syms) / sizeof(synth_syms[0]) + 1)

static uint8_t synth_id[20];

#define TEXT_OFF	0x1000
#define TEXT_SIZE	0xf00		/* the RX segment is 0x1000 */
#define NOTE_OFF	0x200
#define SYM_OFF		0x2000

/*
 * synth_build() - lay out a small ELF64 executable in *@out: two PT_LOADs
 * (R at offset 0, RX at 0x1000), an optional build-id note, .text, one
 * symbol table, its strings and the section headers. Returns its size.
 */
static size_t synth_build(const struct synth_opts *o, uint8_t **out)
{
	char strtab[256] = "", shstr[128] = "";
	size_t strlen_ = 1, shlen = 1, off, size;
	Elf64_Shdr sh[6];
	Elf64_Phdr ph[3];
	Elf64_Ehdr eh;
	Elf64_Sym sym[SYNTH_NSYMS];
	int nsh = 0, nph = 0, symidx = 0, stridx = 0;
	uint8_t *buf;

	for (int i = 0; i < 20; i++)
		synth_id[i] = (uint8_t)(0xa5 ^ (i * 37));

	memset(sym, 0, sizeof(sym));
	for (size_t i = 1; i < SYNTH_NSYMS; i++) {
		const struct synth_sym *d = &synth_syms[i - 1];

		sym[i].st_name = d->bad_name ? 0xfffff : strlen_;
		strcpy(strtab + strlen_, d->name);
		strlen_ += strlen(d->name) + 1;
		sym[i].st_info = ELF64_ST_INFO(d->bind, d->type);
		sym[i].st_shndx = d->undef ? SHN_UNDEF : 1;
		sym[i].st_value = o->base + TEXT_OFF + d->off;
		sym[i].st_size = d->size;
	}

	memset(sh, 0, sizeof(sh));
	memset(ph, 0, sizeof(ph));
#define SHNAME(s) ({ size_t at__ = shlen; strcpy(shstr + shlen, s); shlen += strlen(s) + 1; at__; })
	nsh = 1;
	sh[nsh++] = (Elf64_Shdr){ .sh_name = SHNAME(".text"),
		.sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
		.sh_addr = o->base + TEXT_OFF, .sh_offset = TEXT_OFF,
		.sh_size = TEXT_SIZE, .sh_addralign = 16 };
	if (o->note)
		sh[nsh++] = (Elf64_Shdr){ .sh_name = SHNAME(".note.gnu.build-id"),
			.sh_type = SHT_NOTE, .sh_flags = SHF_ALLOC,
			.sh_addr = o->base + NOTE_OFF, .sh_offset = NOTE_OFF,
			.sh_size = 36, .sh_addralign = 4 };
	off = SYM_OFF;
	if (o->symtype) {
		symidx = nsh++;
		stridx = nsh++;
		sh[symidx] = (Elf64_Shdr){
			.sh_name = SHNAME(o->symtype == SHT_SYMTAB ? ".symtab" : ".dynsym"),
			.sh_type = o->symtype, .sh_offset = off,
			.sh_size = sizeof(sym), .sh_link = stridx, .sh_info = 2,
			.sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) };
		off += sizeof(sym);
		sh[stridx] = (Elf64_Shdr){
			.sh_name = SHNAME(o->symtype == SHT_SYMTAB ? ".strtab" : ".dynstr"),
			.sh_type = SHT_STRTAB, .sh_offset = off,
			.sh_size = strlen_, .sh_addralign = 1 };
		off += strlen_;
	}
	sh[nsh] = (Elf64_Shdr){ .sh_name = SHNAME(".shstrtab"),
		.sh_type = SHT_STRTAB, .sh_offset = off, .sh_addralign = 1 };
	sh[nsh].sh_size = shlen;
	off += shlen;
	nsh++;
#undef SHNAME
	off = (off + 7) & ~(size_t)7;
	size = off + nsh * sizeof(Elf64_Shdr);

	ph[nph++] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R,
		.p_offset = 0, .p_vaddr = o->base, .p_paddr = o->base,
		.p_filesz = 0x300, .p_memsz = 0x300, .p_align = 0x1000 };
	ph[nph++] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
		.p_offset = TEXT_OFF, .p_vaddr = o->base + TEXT_OFF,
		.p_paddr = o->base + TEXT_OFF, .p_filesz = 0x1000,
		.p_memsz = 0x1000, .p_align = 0x1000 };
	if (o->note)
		ph[nph++] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_flags = PF_R,
			.p_offset = NOTE_OFF, .p_vaddr = o->base + NOTE_OFF,
			.p_filesz = 36, .p_memsz = 36, .p_align = 4 };

	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = o->type;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_entry = o->base + TEXT_OFF + 0x10;
	eh.e_phoff = sizeof(eh);
	eh.e_shoff = off;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = nph;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = nsh;
	eh.e_shstrndx = nsh - 1;

	switch (o->corrupt) {
	case SYNTH_SYMTAB_EOF:
		sh[symidx].sh_offset = size + 0x100000;
		break;
	case SYNTH_BAD_LINK:
		sh[symidx].sh_link = 1000;
		break;
	case SYNTH_SHOFF_EOF:
		eh.e_shoff = size + 0x100000;
		break;
	case SYNTH_PHOFF_EOF:
		eh.e_phoff = size + 0x100000;
		break;
	}

	buf = calloc(1, size);
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), ph, nph * sizeof(*ph));
	if (o->note) {
		Elf64_Nhdr nh = { .n_namesz = 4, .n_descsz = 20,
				  .n_type = NT_GNU_BUILD_ID };

		memcpy(buf + NOTE_OFF, &nh, sizeof(nh));
		memcpy(buf + NOTE_OFF + sizeof(nh), "GNU", 4);
		memcpy(buf + NOTE_OFF + sizeof(nh) + 4, synth_id, 20);
	}
	memset(buf + TEXT_OFF, 0xcc, TEXT_SIZE);
	if (o->symtype) {
		memcpy(buf + SYM_OFF, sym, sizeof(sym));
		memcpy(buf + SYM_OFF + sizeof(sym), strtab, strlen_);
	}
	memcpy(buf + sh[nsh - 1].sh_offset, shstr, shlen);
	memcpy(buf + off, sh, nsh * sizeof(Elf64_Shdr));
	*out = buf;
	return size;
}

/* synth_file() - write a synthetic ELF (cut at @cut bytes if non-zero). */
static int synth_file(const struct synth_opts *o, size_t cut, char *path)
{
	uint8_t *buf;
	size_t len = synth_build(o, &buf);
	int r;

	r = tmp_write(path, buf, cut && cut < len ? cut : len);
	free(buf);
	return r;
}

/* check_synth_lookups() - the lookup table expected of every layout. */
static void check_synth_lookups(const struct elfsyms *s, const char *what)
{
	static const struct {
		uint64_t off;
		const char *name;
		uint64_t sym_off;
	} cases[] = {
		{ 0x1010, "f_sized", 0 },	/* global beats weak alias */
		{ 0x102f, "f_sized", 0x1f },
		{ 0x1030, NULL, 0 },		/* past the sized end */
		{ 0x1055, NULL, 0 },		/* STT_OBJECT not loaded */
		{ 0x1100, "f_unsized", 0 },
		{ 0x11ff, "f_unsized", 0xff },	/* to the next symbol */
		{ 0x1200, "f_ifunc", 0 },
		{ 0x1210, NULL, 0 },
		{ 0x1305, NULL, 0 },		/* bad st_name skipped */
		{ 0x1400, NULL, 0 },		/* SHN_UNDEF skipped */
		{ 0x1900, "f_last", 0x100 },
		{ 0x1eff, "f_last", 0x6ff },	/* to the section end */
		{ 0x1f00, NULL, 0 },		/* past it, in the segment */
		{ 0x0100, NULL, 0 },		/* R segment, no symbol */
		{ 0x2000, NULL, 0 },		/* no PT_LOAD holds it */
		{ 0x500, NULL, 0 },		/* between segments */
	};
	int bad = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t off = 12345;
		const char *n = elfsyms__lookup(s, cases[i].off, &off);

		if (cases[i].name ? !n || strcmp(n, cases[i].name) ||
				    off != cases[i].sym_off : n != NULL) {
			tap_diag("%s: file offset 0x%llx gave %s+0x%llx", what,
				 (unsigned long long)cases[i].off,
				 n ? n : "(null)", (unsigned long long)off);
			bad++;
		}
	}
	ok(s && !bad, "%s: 16 file-offset lookups", what);
}

static void test_synthetic(void)
{
	struct synth_opts exec = { ET_EXEC, 0x400000, SHT_SYMTAB, true, 0 };
	struct synth_opts dyn = { ET_DYN, 0, SHT_DYNSYM, false, 0 };
	struct synth_opts nosym = { ET_DYN, 0x10000, 0, true, 0 };
	struct fr_buildid id;
	char path[PATH_MAX];
	struct elfsyms *s;
	int fd, r;

	synth_file(&exec, 0, path);
	s = elfsyms__open(path);
	ok(s != NULL, "synthetic ET_EXEC at 0x400000 with .symtab opens");
	check_synth_lookups(s, "ET_EXEC .symtab");
	is_int(s ? elfsyms__count(s) : 0, 4, "ET_EXEC: 4 distinct functions");
	ok(s && elfsyms__buildid(s)->len == 20 &&
	   !memcmp(elfsyms__buildid(s)->id, synth_id, 20),
	   "ET_EXEC: build-id from the note");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	memset(&id, 0, sizeof(id));
	r = elf_read_buildid(fd, &id);
	ok(!r && id.len == 20 && !memcmp(id.id, synth_id, 20),
	   "elf_read_buildid: the bytes written into the note");
	close(fd);
	elfsyms__free(s);
	unlink(path);

	synth_file(&dyn, 0, path);
	s = elfsyms__open(path);
	ok(s != NULL, "synthetic stripped ET_DYN with only .dynsym opens");
	check_synth_lookups(s, "ET_DYN .dynsym");
	ok(s && elfsyms__buildid(s)->len == 0, "ET_DYN: no build-id");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	is_int(elf_read_buildid(fd, &id), -ENOENT, "elf_read_buildid: -ENOENT without note");
	close(fd);
	elfsyms__free(s);
	unlink(path);

	synth_file(&nosym, 0, path);
	s = elfsyms__open(path);
	ok(s && elfsyms__count(s) == 0 && !elfsyms__lookup(s, 0x1010, NULL),
	   "binary without symbols: empty table, lookups NULL");
	ok(s && elfsyms__buildid(s)->len == 20, "binary without symbols keeps its build-id");
	elfsyms__free(s);
	unlink(path);
	elfsyms__free(NULL);
}

/* ------------------------------------------------------------ symcache */

static void test_symcache(void)
{
	struct synth_opts plain = { ET_DYN, 0, SHT_SYMTAB, false, 0 };
	const struct elfsyms *s1, *s2, *s3, *s4, *s5, *s6;
	char copy[PATH_MAX], syn[PATH_MAX], syn2[PATH_MAX], txt[PATH_MAX];
	const struct fr_mapping *m;
	struct symcache *c;
	struct procmaps *pm;
	uint8_t *buf;
	size_t len;
	int fd[8], has_id;
	struct fr_buildid id;

	c = symcache__new();
	pm = procmaps__read(getpid());
	m = procmaps__find(pm, (uintptr_t)dlsym(RTLD_DEFAULT, "getpid"));
	buf = read_all("/proc/self/exe", &len);
	tmp_write(copy, buf, len);
	free(buf);
	synth_file(&plain, 0, syn);
	buf = read_all(syn, &len);
	tmp_write(syn2, buf, len);
	free(buf);
	tmp_write(txt, "#!/bin/sh\necho not an ELF\n", 26);

	fd[0] = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	fd[1] = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	fd[2] = open(copy, O_RDONLY | O_CLOEXEC);
	fd[3] = m && m->path ? open(m->path, O_RDONLY | O_CLOEXEC) : -1;
	fd[4] = open(syn, O_RDONLY | O_CLOEXEC);
	fd[5] = open(syn, O_RDONLY | O_CLOEXEC);
	fd[6] = open(syn2, O_RDONLY | O_CLOEXEC);
	fd[7] = open(txt, O_RDONLY | O_CLOEXEC);
	has_id = !elf_read_buildid(fd[0], &id);

	s1 = symcache__get_fd(c, fd[0]);
	s2 = symcache__get_fd(c, fd[1]);
	ok(s1 && s1 == s2, "symcache: two fds of one file share an entry");
	s3 = symcache__get_fd(c, fd[2]);
	/* A build-id is the claim of a file's writer: a copy is another file. */
	ok(s3 && s3 != s1, has_id ? "symcache: a copy with the same build-id is another entry" :
				    "symcache: without build-id a copy is another entry");
	s4 = symcache__get_fd(c, fd[3]);
	ok(s4 && s4 != s1, "symcache: libc is another entry");
	ok(symcache__get_fd(c, fd[3]) == s4, "symcache: libc again, same entry");
	s5 = symcache__get_fd(c, fd[4]);
	ok(s5 && s5 == symcache__get_fd(c, fd[5]),
	   "symcache: no build-id, same inode shares by (dev, inode, mtime)");
	s6 = symcache__get_fd(c, fd[6]);
	ok(s6 && s6 != s5, "symcache: no build-id, identical copy is another entry");
	errno = 0;
	ok(!symcache__get_fd(c, fd[7]) && errno == ENOEXEC,
	   "symcache: non-ELF gives NULL, ENOEXEC");
	errno = 0;
	ok(!symcache__get_fd(c, fd[7]) && errno == ENOEXEC,
	   "symcache: non-ELF again, remembered");
	ok(s1 && elfsyms__lookup(s1, 0, NULL) == NULL && s5 &&
	   !strcmp(elfsyms__lookup(s5, 0x1010, NULL), "f_sized"),
	   "symcache: entries stay usable");

	for (int i = 0; i < 8; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	unlink(copy);
	unlink(syn);
	unlink(syn2);
	unlink(txt);
	procmaps__free(pm);
	symcache__free(c);
	symcache__free(NULL);
}

/*
 * Threads that share one symcache while it grows: every thread must get
 * the same entry for a file, and none may be left waiting for the lock.
 * The table grows at 32, 64, 128 and 256 entries; a growth that clobbered
 * the lock while others waited for it left them asleep for good.
 */
#define FR_TEST_FILES	300
#define FR_TEST_THREADS	4

struct grow_arg {
	struct symcache *c;
	const int *fd;
	int first;
	const struct elfsyms *got[FR_TEST_FILES];
	pthread_mutex_t *lock;
	pthread_cond_t *done_cond;
	int *done;
};

static void *grow_worker(void *p)
{
	struct grow_arg *a = p;

	for (int k = 0; k < FR_TEST_FILES; k++) {
		int i = (a->first + k) % FR_TEST_FILES;

		a->got[i] = symcache__get_fd(a->c, a->fd[i]);
	}
	pthread_mutex_lock(a->lock);
	(*a->done)++;
	pthread_cond_signal(a->done_cond);
	pthread_mutex_unlock(a->lock);
	return NULL;
}

static void test_symcache_threads(void)
{
	static struct grow_arg args[FR_TEST_THREADS];
	struct synth_opts plain = { ET_DYN, 0, SHT_SYMTAB, false, 0 };
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
	static char path[FR_TEST_FILES][PATH_MAX];
	static int fd[FR_TEST_FILES];
	pthread_t th[FR_TEST_THREADS];
	struct symcache *c = symcache__new();
	struct timespec until;
	bool same = true;
	int done = 0, made = 0;
	uint8_t *buf;
	size_t len;

	len = synth_build(&plain, &buf);
	for (int i = 0; i < FR_TEST_FILES; i++) {
		fd[i] = -1;
		if (tmp_write(path[i], buf, len))
			continue;
		fd[i] = open(path[i], O_RDONLY | O_CLOEXEC);
		made += fd[i] >= 0;
	}
	free(buf);
	if (!ok(c && made == FR_TEST_FILES, "symcache threads: %d ELF files made", made))
		goto out;
	for (int t = 0; t < FR_TEST_THREADS; t++) {
		args[t] = (struct grow_arg){ .c = c, .fd = fd, .first = t * FR_TEST_FILES / FR_TEST_THREADS,
					     .lock = &lock, .done_cond = &done_cond, .done = &done };
		if (pthread_create(&th[t], NULL, grow_worker, &args[t])) {
			printf("Bail out! pthread_create failed\n");
			_exit(1);
		}
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 30;
	pthread_mutex_lock(&lock);
	while (done < FR_TEST_THREADS &&
	       pthread_cond_timedwait(&done_cond, &lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&lock);
	if (!ok(done == FR_TEST_THREADS,
		"symcache threads: %d threads loading %d files while the table grows all finish (%d did in 30 s)",
		FR_TEST_THREADS, FR_TEST_FILES, done)) {
		/* A thread sleeps on the lock for good: nothing to join. */
		for (int i = 0; i < FR_TEST_FILES; i++)
			unlink(path[i]);
		tap_done_testing();
		_exit(1);
	}
	for (int t = 0; t < FR_TEST_THREADS; t++)
		pthread_join(th[t], NULL);
	for (int i = 0; i < FR_TEST_FILES; i++)
		for (int t = 0; t < FR_TEST_THREADS; t++)
			same = same && args[t].got[i] && args[t].got[i] == args[0].got[i];
	ok(same, "symcache threads: every thread got the one entry of each file");
	ok(symcache__get_fd(c, fd[0]) == args[0].got[0] &&
	   symcache__get_fd(c, fd[FR_TEST_FILES - 1]) == args[0].got[FR_TEST_FILES - 1],
	   "symcache threads: and they are still found after the growth");
out:
	for (int i = 0; i < FR_TEST_FILES; i++) {
		if (fd[i] >= 0)
			close(fd[i]);
		if (path[i][0])
			unlink(path[i]);
	}
	symcache__free(c);
}


/* ------------------------------------------------------ symcache budget */

/*
 * big_elf() - a new temp file (path in @path): an ELF64 shared object whose
 * .symtab has @n functions of 16 bytes, "<prefix>_<i>" padded to 40
 * characters, at 0x1000 + 16 i, with the build-id @id (NULL: none).
 * Returns 0 or -errno.
 */
static int big_elf(char *path, size_t n, const char *prefix, const uint8_t *id)
{
	const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab\0.note.gnu.build-id";
	size_t text = 0x1000, tlen = n * 16, symoff, stroff, slen = 1, shstroff, noteoff, shoff, len;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;
	Elf64_Sym *sym;
	uint8_t *buf;
	int r;

	symoff = (text + tlen + 7) & ~(size_t)7;
	stroff = symoff + (n + 1) * sizeof(Elf64_Sym);
	noteoff = (stroff + n * 41 + 1 + 7) & ~(size_t)7;
	shstroff = noteoff + 16 + 20;
	shoff = (shstroff + sizeof(shstr) + 7) & ~(size_t)7;
	len = shoff + 6 * sizeof(Elf64_Shdr);
	buf = calloc(1, len);
	if (!buf)
		return -ENOMEM;
	eh = (Elf64_Ehdr *)buf;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = 6;
	eh->e_shstrndx = 4;
	ph = (Elf64_Phdr *)(buf + sizeof(*eh));
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_filesz = len,
			    .p_memsz = len, .p_align = 0x1000 };
	sym = (Elf64_Sym *)(buf + symoff);
	for (size_t i = 0; i < n; i++) {
		char *name = (char *)buf + stroff + slen;

		snprintf(name, 41, "%s_%0*zu", prefix, (int)(39 - strlen(prefix)), i);
		sym[i + 1] = (Elf64_Sym){ .st_name = (uint32_t)slen,
					  .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
					  .st_shndx = 1, .st_value = text + 16 * i, .st_size = 16 };
		slen += strlen(name) + 1;
	}
	if (id) {
		uint32_t *nh = (uint32_t *)(buf + noteoff);

		nh[0] = 4;
		nh[1] = 20;
		nh[2] = NT_GNU_BUILD_ID;
		memcpy(nh + 3, "GNU", 4);
		memcpy(buf + noteoff + 16, id, 20);
	}
	memcpy(buf + shstroff, shstr, sizeof(shstr));
	sh = (Elf64_Shdr *)(buf + shoff);
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			      .sh_addr = text, .sh_offset = text, .sh_size = tlen, .sh_addralign = 16 };
	sh[2] = (Elf64_Shdr){ .sh_name = 7, .sh_type = SHT_SYMTAB, .sh_offset = symoff,
			      .sh_size = (n + 1) * sizeof(Elf64_Sym), .sh_link = 3, .sh_info = 1,
			      .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) };
	sh[3] = (Elf64_Shdr){ .sh_name = 15, .sh_type = SHT_STRTAB, .sh_offset = stroff,
			      .sh_size = slen, .sh_addralign = 1 };
	sh[4] = (Elf64_Shdr){ .sh_name = 23, .sh_type = SHT_STRTAB, .sh_offset = shstroff,
			      .sh_size = sizeof(shstr), .sh_addralign = 1 };
	sh[5] = (Elf64_Shdr){ .sh_name = 33, .sh_type = id ? SHT_NOTE : SHT_NULL,
			      .sh_flags = SHF_ALLOC, .sh_addr = noteoff, .sh_offset = noteoff,
			      .sh_size = id ? 36 : 0, .sh_addralign = 4 };
	r = tmp_write(path, buf, len);
	free(buf);
	return r;
}

/* Bytes the budget covers now (no images, no lines in these tests). */
static uint64_t cache_bytes(struct symcache *c, struct symcache_stats *st)
{
	symcache__stats(c, st, true);
	return st->bytes + st->image_bytes;
}

static const struct elfsyms *live_table;

static void mark_one(void *ctx, uint64_t gen)
{
	(void)ctx;
	symcache__mark(live_table, gen);
}

#define FR_BUDGET_FILES	30
#define FR_BUDGET	(8ULL << 20)


/* CLOCK_BOOTTIME in ns. */
static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct slow_load {
	struct symcache *c;
	int fd;
	_Atomic int phase;	/* 1: about to load, 2: done */
	const struct elfsyms *s;
	uint64_t ns;
};

static void *slow_load__run(void *arg)
{
	struct slow_load *l = arg;
	uint64_t t0 = boot_ns();

	atomic_store(&l->phase, 1);
	l->s = symcache__get_fd(l->c, l->fd);
	l->ns = boot_ns() - t0;
	atomic_store(&l->phase, 2);
	return NULL;
}

/*
 * While another thread loads @path (a library of 60,000 functions, 100 ms
 * and more, under the cache's lock), the counts the drain's thread asks
 * for in status are there at once. Counted as calls answered during the
 * load, one each 200 us (glibc's mutexes are not fair: a tight loop would
 * keep the loader from the lock); a call that waits answers none.
 */
static void test_symcache_no_wait(const char *path)
{
	struct slow_load l = { .c = symcache__new(), .fd = open(path, O_RDONLY | O_CLOEXEC) };
	struct symcache_stats st;
	unsigned during = 0;
	pthread_t t;

	if (!ok(l.c && l.fd >= 0, "no wait: a cache and the library open"))
		goto out;
	symcache__stats(l.c, &st, false);
	if (pthread_create(&t, NULL, slow_load__run, &l)) {
		ok(0, "no wait: a thread for the load");
		goto out;
	}
	while (atomic_load(&l.phase) < 1)
		;
	while (atomic_load(&l.phase) == 1 && during < 100000) {
		usleep(200);
		symcache__stats(l.c, &st, false);
		during += atomic_load(&l.phase) == 1;
	}
	pthread_join(t, NULL);
	ok(l.s != NULL && elfsyms__count(l.s) >= 60000, "no wait: the library loaded (%zu symbols, %.1f ms)",
	   l.s ? elfsyms__count(l.s) : 0, l.ns / 1e6);
	ok(during >= 10, "no wait: %u calls for the counts were answered during the load", during);
	symcache__stats(l.c, &st, false);
	is_int(st.entries, 1, "no wait: and once it is done they count it");
	symcache__put(l.s);
out:
	if (l.fd >= 0)
		close(l.fd);
	symcache__free(l.c);
}

/*
 * The budget: tables of 10,000 symbols (about 0.65 MiB each) in an 8 MiB
 * cache. Held ones lose their symbols, oldest first, and get them back
 * when their file is asked for again; unheld ones go whole; a hold stops
 * every eviction until it ends; a table a live process maps goes last; a
 * table past a quarter of the budget is refused, and remembered.
 */
static void test_symcache_budget(void)
{
	static char path[FR_BUDGET_FILES + 12][PATH_MAX];
	const struct elfsyms *s[FR_BUDGET_FILES + 12] = { 0 };
	int fd[FR_BUDGET_FILES + 12];
	struct symcache *c = symcache__new();
	struct symcache_stats st;
	uint64_t peak = 0, evicted;
	size_t made = 0, nlive = 0;
	char big[PATH_MAX];
	bool ok_all = true;
	int bfd;

	for (int i = 0; i < FR_BUDGET_FILES + 12; i++) {
		fd[i] = -1;
		if (!big_elf(path[i], 10000, "fr_budget_fn", NULL))
			fd[i] = open(path[i], O_RDONLY | O_CLOEXEC);
		made += fd[i] >= 0;
	}
	if (!ok(c && made == FR_BUDGET_FILES + 12, "budget: %zu ELF files of 10,000 symbols made", made))
		goto out;
	symcache__set_budget(c, FR_BUDGET);
	for (int i = 0; i < FR_BUDGET_FILES; i++) {
		s[i] = symcache__get_fd(c, fd[i]);
		ok_all = ok_all && s[i] && elfsyms__count(s[i]) == 10000;
		if (cache_bytes(c, &st) > peak)
			peak = st.bytes + st.image_bytes;
	}
	ok(ok_all, "budget: each of %d distinct files loads its 10,000 symbols", FR_BUDGET_FILES);
	ok(st.loaded == FR_BUDGET_FILES && st.entries == FR_BUDGET_FILES,
	   "budget: one entry per file (%" PRIu64 " loaded, %" PRIu64 " entries)", st.loaded, st.entries);
	ok(peak <= FR_BUDGET, "budget: the cache never held more than its 8 MiB (peak %.2f MiB)",
	   peak / 1048576.0);
	ok(st.evicted >= FR_BUDGET_FILES / 2, "budget: the held tables lost symbols (%" PRIu64 " evicted)",
	   st.evicted);
	ok(elfsyms__evicted(s[0]) && !elfsyms__lookup(s[0], 0x1000, NULL) &&
	   !elfsyms__evicted(s[FR_BUDGET_FILES - 1]) &&
	   elfsyms__lookup(s[FR_BUDGET_FILES - 1], 0x1000, NULL),
	   "budget: the least recently used went first; a held table stays valid without symbols");
	ok(symcache__get_fd(c, fd[0]) == s[0] && !elfsyms__evicted(s[0]) &&
	   !strcmp(elfsyms__lookup(s[0], 0x1010, NULL) ?: "", "fr_budget_fn_000000000000000000000000001"),
	   "budget: asked again, the same table has its symbols back");
	symcache__stats(c, &st, true);
	ok(st.reloaded == 1 && cache_bytes(c, &st) <= FR_BUDGET,
	   "budget: counted as reloaded, within the budget (%.2f MiB)", cache_bytes(c, &st) / 1048576.0);
	symcache__put(s[0]);

	/* Unheld: freed whole, entry and all. */
	for (int i = 0; i < FR_BUDGET_FILES; i++)
		symcache__put(s[i]);
	for (int i = FR_BUDGET_FILES; i < FR_BUDGET_FILES + 6; i++)
		symcache__put(symcache__get_fd(c, fd[i]));
	ok(cache_bytes(c, &st) <= FR_BUDGET && st.entries < FR_BUDGET_FILES + 6,
	   "budget: tables no one holds go whole (%" PRIu64 " entries of %d files, %.2f MiB)",
	   st.entries, FR_BUDGET_FILES + 6, cache_bytes(c, &st) / 1048576.0);

	/* A hold: nothing is evicted until it ends. */
	symcache__hold(c, true);
	evicted = st.evicted;
	for (int i = FR_BUDGET_FILES + 6; i < FR_BUDGET_FILES + 12; i++)
		s[i] = symcache__get_fd(c, fd[i]);
	for (int i = 0; i < FR_BUDGET_FILES; i++)
		s[i] = symcache__get_fd(c, fd[i]);
	ok(cache_bytes(c, &st) > FR_BUDGET && st.evicted == evicted,
	   "budget: under a hold nothing is evicted (%.2f MiB held)", cache_bytes(c, &st) / 1048576.0);
	symcache__hold(c, false);
	/* The last file asked for is marked live; the oldest held ones go before it. */
	live_table = s[FR_BUDGET_FILES + 6];
	symcache__set_marker(c, mark_one, NULL);
	symcache__trim(c);
	ok(cache_bytes(c, &st) <= FR_BUDGET, "budget: the hold over, a trim brings it back (%.2f MiB)",
	   cache_bytes(c, &st) / 1048576.0);
	for (int i = 0; i < FR_BUDGET_FILES; i++)
		nlive += !elfsyms__evicted(s[i]);
	ok(!elfsyms__evicted(live_table) && nlive < FR_BUDGET_FILES,
	   "budget: the table a live process maps keeps its symbols though least recently used "
	   "(%zu of the %d newer ones kept theirs)", nlive, FR_BUDGET_FILES);
	symcache__set_marker(c, NULL, NULL);

	/* A quarter of the budget for one file. */
	if (!big_elf(big, 100000, "fr_budget_big", NULL)) {
		bfd = open(big, O_RDONLY | O_CLOEXEC);
		errno = 0;
		ok(!symcache__get_fd(c, bfd) && errno == EFBIG,
		   "budget: 100,000 symbols (6.4 MiB) pass a quarter of 8 MiB: refused, EFBIG");
		errno = 0;
		symcache__stats(c, &st, true);
		ok(!symcache__get_fd(c, bfd) && errno == EFBIG && st.refused == 1,
		   "budget: remembered per file, counted once (refused %" PRIu64 ")", st.refused);
		close(bfd);
		unlink(big);
	}
out:
	for (int i = 0; i < FR_BUDGET_FILES + 12; i++) {
		if (fd[i] >= 0)
			close(fd[i]);
		if (path[i][0])
			unlink(path[i]);
	}
	symcache__free(c);
	elfsyms__set_lines_budget(0);
}

/*
 * A build-id is a claim: a file that carries another's build-id is named
 * from its own symbols, and lends the other none of them.
 */
static void test_symcache_forged(void)
{
	static const uint8_t id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
					7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	struct symcache *c = symcache__new();
	const struct elfsyms *real, *forged;
	char rp[PATH_MAX], fp[PATH_MAX];
	struct fr_buildid got;
	int rfd = -1, ffd = -1;

	if (big_elf(rp, 100, "real_lib_fn", id) || big_elf(fp, 100, "FORGED_BY_NOBODY", id)) {
		ok(false, "forged: files made");
		goto out;
	}
	rfd = open(rp, O_RDONLY | O_CLOEXEC);
	ffd = open(fp, O_RDONLY | O_CLOEXEC);
	ok(!elf_read_buildid(ffd, &got) && got.len == 20 && !memcmp(got.id, id, 20),
	   "forged: the second file carries the first one's build-id");
	forged = symcache__get_fd(c, ffd);
	real = symcache__get_fd(c, rfd);
	ok(real && forged && real != forged, "forged: the two are two entries");
	ok(!strcmp(elfsyms__lookup(real, 0x1000, NULL) ?: "", "real_lib_fn_0000000000000000000000000000") &&
	   !strcmp(elfsyms__lookup(forged, 0x1000, NULL) ?: "", "FORGED_BY_NOBODY_00000000000000000000000"),
	   "forged: each is named from its own symbols, whichever came first");
out:
	if (rfd >= 0)
		close(rfd);
	if (ffd >= 0)
		close(ffd);
	unlink(rp);
	unlink(fp);
	symcache__free(c);
}

/*
 * A process image keeps what frames can be in: its executable mappings,
 * at most FR_IMAGE_MAPS_MAX of them and FR_IMAGE_PATH_BYTES of paths; a
 * file's segments share one path.
 */
static void test_image_bounds(void)
{
	char dir[] = "/tmp/fr_maps.XXXXXX", path[PATH_MAX];
	struct procmaps *pm;
	FILE *f;
	char *name;
	size_t longs = 0;

	if (!ok(mkdtemp(dir) != NULL, "image: temp dir"))
		return;
	snprintf(path, sizeof(path), "%s/maps", dir);
	f = fopen(path, "w");
	name = malloc(4001);
	memset(name, 'n', 4000);
	name[4000] = 0;
	for (unsigned i = 0; i < 3 * FR_IMAGE_MAPS_MAX; i++) {
		uint64_t a = 0x100000000ULL + (uint64_t)i * 0x2000;

		/* Mostly data; every third executable, half of those the same file. */
		if (i % 3)
			fprintf(f, "%" PRIx64 "-%" PRIx64 " rw-p 00000000 00:00 0 \n", a, a + 0x1000);
		else if (i % 2)
			fprintf(f, "%" PRIx64 "-%" PRIx64 " r-xp 00001000 08:01 42 /usr/lib/libsame.so\n",
				a, a + 0x1000);
		else
			fprintf(f, "%" PRIx64 "-%" PRIx64 " r-xp 00001000 08:01 %u /tmp/%s%u\n", a,
				a + 0x1000, i, name + (i < 300 ? 4000 - 10 : 0), i), longs += i >= 300;
	}
	fclose(f);
	free(name);
	pm = procmaps__read_image(dir);
	ok(pm && pm->n && pm->n <= FR_IMAGE_MAPS_MAX, "image: executable mappings only, at most %u (%zu)",
	   FR_IMAGE_MAPS_MAX, pm ? pm->n : 0);
	ok(pm && pm->dropped > 0 && pm->n + pm->dropped == FR_IMAGE_MAPS_MAX,
	   "image: the paths past 256 KiB are left out and counted (%zu kept, %" PRIu64 " left out)",
	   pm ? pm->n : 0, pm ? pm->dropped : 0);
	ok(pm && pm->bytes < 2 * FR_IMAGE_PATH_BYTES + FR_IMAGE_MAPS_MAX * sizeof(struct fr_mapping) + 4096,
	   "image: it holds %" PRIu64 " bytes", pm ? pm->bytes : 0);
	ok(pm && pm->n > 1 && pm->m[1].path_shared == false, "image: distinct files keep their own paths");
	procmaps__free(pm);
	unlink(path);
	rmdir(dir);
}

/* ------------------------------------------------------------ kallsyms */

static const char ksyms_fixture[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81000100 t helper_local\n"
	"ffffffff81000200 D some_data\n"
	"ffffffff81000300 T kfunc_b\n"
	"ffffffff81000400 W weak_fn\n"
	"ffffffff81000480 r rodata_sym\n"
	"ffffffff81000500 B bss_sym\n"
	"garbage line here\n"
	"ffffffffc0001100 T mod_fn_b\t[mymod]\n"
	"ffffffffc0001000 t mod_fn_a\t[mymod]\n"
	"ffffffffc0001180 d mod_data\t[mymod]\n"
	"ffffffffc0100000 t other_fn\t[other]\n"
	"0000000000000000 T zero_fn\n";

static void test_kallsyms_fixture(void)
{
	static const struct {
		uint64_t addr;
		const char *name, *module;
		uint64_t off;
	} cases[] = {
		{ 0xffffffff80ffffff, NULL, NULL, 0 },
		{ 0xffffffff81000000, "startup_64", NULL, 0 },
		{ 0xffffffff81000250, "helper_local", NULL, 0x150 },
		{ 0xffffffff81000300, "kfunc_b", NULL, 0 },
		{ 0xffffffff81000490, "weak_fn", NULL, 0x90 },
		{ 0xffffffff81000400 + FR_KSYM_TAIL - 1, "weak_fn", NULL, FR_KSYM_TAIL - 1 },
		{ 0xffffffff81000400 + FR_KSYM_TAIL, NULL, NULL, 0 },
		{ 0xffffffffc0001050, "mod_fn_a", "mymod", 0x50 },
		{ 0xffffffffc0001190, "mod_fn_b", "mymod", 0x90 },
		{ 0xffffffffc0001f00, "mod_fn_b", "mymod", 0xe00 },
		{ 0xffffffffc0001100 + FR_KSYM_TAIL - 1, "mod_fn_b", "mymod", FR_KSYM_TAIL - 1 },
		{ 0xffffffffc0001100 + FR_KSYM_TAIL, NULL, NULL, 0 },	/* module end */
		{ 0xffffffffc0100010, "other_fn", "other", 0x10 },
		{ 0xffffffffc0100000 + FR_KSYM_TAIL, NULL, NULL, 0 },
	};
	char path[PATH_MAX];
	struct kallsyms *k;

	tmp_write(path, ksyms_fixture, sizeof(ksyms_fixture) - 1);
	k = kallsyms__load(path);
	unlink(path);
	if (!ok(k != NULL, "kallsyms fixture loads")) {
		tap_skip(15, "no table");
		return;
	}
	is_int(kallsyms__count(k), 7, "kallsyms: 7 text symbols (aliases, data, zero dropped)");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *mod = "unset", *n;
		uint64_t off = 12345;

		n = kallsyms__lookup(k, cases[i].addr, &off, &mod);
		if (cases[i].name)
			ok(n && !strcmp(n, cases[i].name) && off == cases[i].off &&
			   (cases[i].module ? mod && !strcmp(mod, cases[i].module) : !mod),
			   "kallsyms: 0x%llx is %s+0x%llx [%s]",
			   (unsigned long long)cases[i].addr, cases[i].name,
			   (unsigned long long)cases[i].off,
			   cases[i].module ? cases[i].module : "kernel");
		else
			ok(!n, "kallsyms: 0x%llx resolves to nothing",
			   (unsigned long long)cases[i].addr);
	}
	kallsyms__free(k);
	kallsyms__free(NULL);

	tmp_write(path, "0000000000000000 T a\n0000000000000000 t b\n", 42);
	errno = 0;
	k = kallsyms__load(path);
	ok(!k && errno == EPERM, "kallsyms: all-zero addresses give EPERM");
	kallsyms__free(k);
	unlink(path);
	errno = 0;
	ok(!kallsyms__load("/nonexistent/kallsyms") && errno == ENOENT,
	   "kallsyms: missing file gives ENOENT");
}

static void test_kallsyms_real(void)
{
	char line[512], name[256], type, mod_want[256] = "";
	unsigned long long a, sched = 0, mod_addr = 0;
	const char *n, *mod = "unset";
	uint64_t off = 99;
	struct kallsyms *k;
	int aliases = 0;
	FILE *f;

	f = fopen("/proc/kallsyms", "re");
	if (!f) {
		tap_skip(4, "/proc/kallsyms is not readable");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char m[256];
		int fields = sscanf(line, "%llx %c %255s [%255[^]]]", &a, &type,
				    name, m);

		if (fields < 3 || !strchr("tTwW", type))
			continue;
		if (!strcmp(name, "schedule") && !sched)
			sched = a;
		if (fields == 4 && !mod_addr && a) {
			mod_addr = a;
			strcpy(mod_want, m);
		}
	}
	/* Other text symbols at the same address could legitimately win. */
	rewind(f);
	while (sched && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
		    a == sched && strchr("tTwW", type) && strcmp(name, "schedule"))
			aliases++;
	fclose(f);
	if (!sched) {
		tap_skip(4, "/proc/kallsyms shows zero addresses (kptr_restrict or not root)");
		return;
	}
	k = kallsyms__load("/proc/kallsyms");
	ok(k && kallsyms__count(k) > 1000, "real kallsyms loads (%zu text symbols)",
	   k ? kallsyms__count(k) : 0);
	n = kallsyms__lookup(k, sched, &off, &mod);
	if (aliases)
		ok(n && off == 0, "real kallsyms: schedule's address resolves (aliased)");
	else
		ok(n && !strcmp(n, "schedule") && off == 0 && !mod,
		   "real kallsyms: schedule's address resolves to schedule+0");
	n = kallsyms__lookup(k, sched + 1, &off, NULL);
	ok(n && off == 1 && (aliases || !strcmp(n, "schedule")),
	   "real kallsyms: schedule+1");
	if (mod_addr) {
		n = kallsyms__lookup(k, mod_addr, &off, &mod);
		ok(n && mod && !strcmp(mod, mod_want),
		   "real kallsyms: module symbol in [%s]", mod_want);
	} else {
		tap_skip(1, "no module text symbols loaded");
	}
	kallsyms__free(k);
}

/* ------------------------------------------------------------- perfmap */

static const char perfmap_fixture[] =
	"0x7f0000001000 0x100 jit_fn_one\n"
	"7f0000002000 80 LazyCompile:~foo file.js:10\n"
	"this is garbage\n"
	"7f0000003000 zz bad_size\n"
	"7f0000004000 0 zero_size\n"
	"7f0000005000 40\n"
	"0x7f0000006000 20 old_name\n"
	"0x7f0000006000 30 new_name\r\n"
	"-7f0000007000 10 negative\n"
	"7f0000008000 10 no_newline_at_end";

static void test_perfmap(void)
{
	static const struct {
		uint64_t addr;
		const char *name;
		uint64_t off;
	} cases[] = {
		{ 0x7f0000000fff, NULL, 0 },
		{ 0x7f0000001000, "jit_fn_one", 0 },
		{ 0x7f00000010ff, "jit_fn_one", 0xff },
		{ 0x7f0000001100, NULL, 0 },
		{ 0x7f0000002010, "LazyCompile:~foo file.js:10", 0x10 },
		{ 0x7f0000003000, NULL, 0 },
		{ 0x7f0000004000, NULL, 0 },
		{ 0x7f0000005000, NULL, 0 },
		{ 0x7f000000602f, "new_name", 0x2f },
		{ 0x7f0000007000, NULL, 0 },
		{ 0x7f000000800f, "no_newline_at_end", 0xf },
	};
	char path[PATH_MAX];
	struct perfmap *p;

	tmp_write(path, perfmap_fixture, sizeof(perfmap_fixture) - 1);
	p = perfmap__load(path);
	unlink(path);
	ok(p != NULL, "perfmap fixture loads");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t off = 12345;
		const char *n = perfmap__lookup(p, cases[i].addr, &off);

		if (cases[i].name)
			ok(n && !strcmp(n, cases[i].name) && off == cases[i].off,
			   "perfmap: 0x%llx is '%s'+0x%llx",
			   (unsigned long long)cases[i].addr, cases[i].name,
			   (unsigned long long)cases[i].off);
		else
			ok(!n, "perfmap: 0x%llx resolves to nothing",
			   (unsigned long long)cases[i].addr);
	}
	perfmap__free(p);
	perfmap__free(NULL);
	errno = 0;
	ok(!perfmap__load("/nonexistent/perf-1.map") && errno == ENOENT,
	   "perfmap: missing file gives ENOENT");
}

/* ---------------------------------------------------------- robustness */

static void test_robustness(void)
{
	static const struct { int corrupt; const char *what; } bad[] = {
		{ SYNTH_SYMTAB_EOF, "symbol table past EOF" },
		{ SYNTH_BAD_LINK, "symbol table string link out of range" },
		{ SYNTH_SHOFF_EOF, "section headers past EOF" },
		{ SYNTH_PHOFF_EOF, "program headers past EOF" },
	};
	struct synth_opts o = { ET_EXEC, 0x400000, SHT_SYMTAB, true, 0 };
	char path[PATH_MAX];
	struct fr_buildid id;
	struct elfsyms *s;
	uint8_t *buf;
	size_t len;
	int fd;

	tmp_write(path, "hello, this is not an ELF file\n", 31);
	errno = 0;
	s = elfsyms__open(path);
	ok(!s && errno == ENOEXEC, "non-ELF file: NULL, ENOEXEC");
	elfsyms__free(s);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	is_int(elf_read_buildid(fd, &id), -ENOEXEC, "non-ELF file: elf_read_buildid -ENOEXEC");
	close(fd);
	unlink(path);

	tmp_write(path, "", 0);
	errno = 0;
	s = elfsyms__open(path);
	ok(!s && errno == ENOEXEC, "empty file: NULL, ENOEXEC");
	elfsyms__free(s);
	unlink(path);

	errno = 0;
	ok(!elfsyms__open("/nonexistent/binary") && errno == ENOENT,
	   "missing file: NULL, ENOENT");

	buf = read_all("/proc/self/exe", &len);
	tmp_write(path, buf, len / 2);
	errno = 0;
	s = elfsyms__open(path);
	ok(!s && errno == ENOEXEC, "test binary cut in half: NULL, ENOEXEC");
	elfsyms__free(s);
	unlink(path);
	tmp_write(path, buf, 40);
	errno = 0;
	s = elfsyms__open(path);
	ok(!s && errno == ENOEXEC, "test binary cut inside the ELF header: NULL");
	elfsyms__free(s);
	unlink(path);
	free(buf);

	synth_file(&o, SYM_OFF + 0x10, path);
	s = elfsyms__open(path);
	ok(!s, "synthetic ELF cut inside its symbol table: NULL");
	elfsyms__free(s);
	unlink(path);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.corrupt = bad[i].corrupt;
		synth_file(&o, 0, path);
		errno = 0;
		s = elfsyms__open(path);
		ok(!s && errno == ENOEXEC, "malformed ELF (%s): NULL, ENOEXEC",
		   bad[i].what);
		elfsyms__free(s);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		elf_read_buildid(fd, &id);	/* must not crash */
		close(fd);
		unlink(path);
	}
}

/* ------------------------------------------------- debug info: helpers */

/*
 * sh() - run a shell command built from @fmt, its output on stderr (never
 * in the TAP stream). Returns true if it exited 0; otherwise says so.
 */
static __attribute__((format(printf, 1, 2))) bool sh(const char *fmt, ...)
{
	char cmd[8192], full[8300];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "( %s ) >&2", cmd);
	fflush(NULL);
	st = system(full);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		tap_diag("command failed (status %d): %s", st, cmd);
		return false;
	}
	return true;
}

/* elf_open_path() - a libelf handle of @path and its fd in *@fd, or NULL. */
static Elf *elf_open_path(const char *path, int *fd)
{
	Elf *e;

	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	e = elf_begin(*fd, ELF_C_READ, NULL);
	if (!e)
		close(*fd);
	return e;
}

/*
 * elf_sym_vaddr() - the address of function @name in the .symtab of
 * @path, read with libelf (not through the code under test). Returns 0 or
 * -ENOENT.
 */
static int elf_sym_vaddr(const char *path, const char *name, uint64_t *vaddr)
{
	Elf_Scn *scn = NULL;
	int fd, r = -ENOENT;
	Elf *e;

	e = elf_open_path(path, &fd);
	if (!e)
		return -ENOENT;
	while (r && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !d)
			continue;
		for (int i = 0; gelf_getsym(d, i, &sym); i++) {
			const char *n = elf_strptr(e, sh.sh_link, sym.st_name);

			if (n && !strcmp(n, name) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    sym.st_value) {
				*vaddr = sym.st_value;
				r = 0;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return r;
}

/* elf_vaddr_off() - the file offset of @vaddr by the PT_LOADs of @path. */
static int elf_vaddr_off(const char *path, uint64_t vaddr, uint64_t *off)
{
	int fd, r = -ENOENT;
	size_t n = 0;
	Elf *e;

	e = elf_open_path(path, &fd);
	if (!e)
		return -ENOENT;
	elf_getphdrnum(e, &n);
	for (size_t i = 0; i < n && r; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			r = 0;
		}
	}
	elf_end(e);
	close(fd);
	return r;
}

/* elf_section_off() - the file offset of section @name of @path. */
static int elf_section_off(const char *path, const char *name, uint64_t *off)
{
	Elf_Scn *scn = NULL;
	int fd, r = -ENOENT;
	size_t shstrndx;
	Elf *e;

	e = elf_open_path(path, &fd);
	if (!e)
		return -ENOENT;
	while (!elf_getshdrstrndx(e, &shstrndx) && r && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			*off = sh.sh_offset;
			r = 0;
		}
	}
	elf_end(e);
	close(fd);
	return r;
}

/* func_off() - the file offset in @bin of function @name of @symfile. */
static uint64_t func_off(const char *symfile, const char *bin, const char *name)
{
	uint64_t va = 0, off = 0;

	if (elf_sym_vaddr(symfile, name, &va) || elf_vaddr_off(bin, va, &off))
		return 0;
	return off;
}

/* name_at() - what elfsyms__open_fd_hint(@path, @hint) names at @off (a copy). */
static char *name_at(const char *path, const char *hint, uint64_t off, unsigned int *flags)
{
	struct elfsyms *s;
	const char *n;
	char *copy;
	int fd;

	*flags = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	s = elfsyms__open_fd_hint(fd, hint);
	close(fd);
	if (!s)
		return NULL;
	*flags = elfsyms__debug(s);
	n = elfsyms__lookup(s, off, NULL);
	copy = n ? strdup(n) : NULL;
	elfsyms__free(s);
	return copy;
}

/* is_named() - check that @path (hint @hint) names @off @want, with flag @flag. */
static void is_named(const char *path, const char *hint, uint64_t off, const char *want,
		     unsigned int flag, const char *what)
{
	unsigned int flags;
	char *n = name_at(path, hint, off, &flags);

	ok(n && !strcmp(n, want) && (flags & flag) == flag,
	   "%s: 0x%llx is %s (debug flags %#x)", what, (unsigned long long)off, want, flags);
	if (!n || strcmp(n, want))
		tap_diag("got %s", n ? n : "(null)");
	free(n);
}

/* not_named() - check that @path does not name @off @want, and flags hold @flag. */
static void not_named(const char *path, const char *hint, uint64_t off, const char *want,
		      unsigned int flag, const char *what)
{
	unsigned int flags;
	char *n = name_at(path, hint, off, &flags);

	ok((!n || strcmp(n, want)) && (flags & flag) == flag &&
	   !(flags & (FR_DEBUG_BUILDID | FR_DEBUG_LINK | FR_DEBUG_MINI) & ~flag),
	   "%s: 0x%llx is not %s (got %s, debug flags %#x)", what,
	   (unsigned long long)off, want, n ? n : "(null)", flags);
	free(n);
}

/*
 * make_workdir() - a new directory next to the test binary (its file
 * system allows exec), path in @dir.
 */
static int make_workdir(char *dir)
{
	char exe[PATH_MAX - 32];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(dir, PATH_MAX, "%s/.fr_dbgtest.XXXXXX", exe);
	if (!mkdtemp(dir))
		return -errno;
	return chmod(dir, 0755) ? -errno : 0;
}

/* flip_byte() - invert the byte at @off of @path. */
static int flip_byte(const char *path, uint64_t off)
{
	uint8_t b;
	int fd, r = -EIO;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &b, 1, (off_t)off) == 1) {
		b ^= 0xff;
		r = pwrite(fd, &b, 1, (off_t)off) == 1 ? 0 : -EIO;
	}
	close(fd);
	return r;
}

/* --------------------------------------------- debug info: build-id */

/* buildid_path() - <root>/.build-id/xx/yyyy.debug of @id into @out (@size bytes). */
static void buildid_path(const char *root, const struct fr_buildid *id, char *out, size_t size)
{
	char h[2 * FR_BUILDID_MAX + 1];

	hex(id, h);
	snprintf(out, size, "%s/.build-id/%.2s/%s.debug", root, h, h + 2);
}

/*
 * test_debug_buildid() - libc.so.6 (Debian's is stripped) names the local
 * __libc_start_call_main only through libc6-dbg's build-id debug file.
 */
static void test_debug_buildid(const char *work, const char *other_debug)
{
	static const char fn[] = "__libc_start_call_main";
	char libc[PATH_MAX], dbg[PATH_MAX], copy[PATH_MAX + 32], root[PATH_MAX + 32];
	char link[2 * PATH_MAX], h[2 * FR_BUILDID_MAX + 1];
	const struct fr_mapping *m;
	struct procmaps *pm;
	struct fr_buildid id = { 0 };
	uint64_t va, off = 0, so = 99;
	struct elfsyms *s;
	const char *n;
	int fd;

	pm = procmaps__read(getpid());
	m = procmaps__find(pm, (uintptr_t)dlsym(RTLD_DEFAULT, "getpid"));
	if (!ok(m && m->path && realpath(m->path, libc), "debug: libc's mapped path")) {
		procmaps__free(pm);
		return;
	}
	procmaps__free(pm);
	fd = open(libc, O_RDONLY | O_CLOEXEC);
	ok(fd >= 0 && !elf_read_buildid(fd, &id) && id.len == 20, "debug: %s has a build-id", libc);
	buildid_path(FR_DEBUG_ROOT, &id, dbg, sizeof(dbg));
	hex(&id, h);
	if (!ok(!access(dbg, R_OK), "debug: libc6-dbg installed: %s", dbg)) {
		tap_diag("install libc6-dbg (tools/bootstrap.sh deps)");
		close(fd);
		return;
	}
	ok(elf_sym_vaddr(libc, fn, &va) == -ENOENT, "debug: %s is not in libc.so.6's own tables", fn);
	off = func_off(dbg, libc, fn);
	ok(off, "debug: %s is in the debug file's .symtab, at file offset 0x%llx of libc",
	   fn, (unsigned long long)off);

	s = elfsyms__open_fd(fd);
	n = elfsyms__lookup(s, off + 5, &so);
	ok(n && !strcmp(n, fn) && so == 5, "debug: libc+0x%llx is %s+5 with the build-id file",
	   (unsigned long long)off + 5, fn);
	ok(s && (elfsyms__debug(s) & FR_DEBUG_BUILDID), "debug: flagged as from a build-id file");
	elfsyms__free(s);
	close(fd);
	is_named(libc, libc, off, fn, FR_DEBUG_BUILDID, "debug: with a path hint too");

	/* A copy elsewhere, the build-id unchanged, with no debug root. */
	snprintf(copy, sizeof(copy), "%s/libc.so.6", work);
	snprintf(root, sizeof(root), "%s/root", work);
	sh("cp '%s' '%s' && mkdir -p '%s/.build-id/%.2s'", libc, copy, root, h);
	debuginfo__set_root(root);
	not_named(copy, copy, off, fn, 0, "debug: no debug file under the root");
	debuginfo__set_root("");
	not_named(copy, copy, off, fn, 0, "debug: debug root disabled");

	/* Fedora's layout: .build-id/xx/yyyy.debug links to the file by name. */
	debuginfo__set_root(root);
	buildid_path(root, &id, link, sizeof(link));
	sh("cp '%s' '%s/libc.debug' && ln -s ../../libc.debug '%s'", dbg, root, link);
	is_named(copy, copy, off, fn, FR_DEBUG_BUILDID, "debug: build-id symlink inside the root");
	sh("rm -f '%s' && cp '%s' '%s/outside.debug' && ln -s ../../../outside.debug '%s'",
	   link, dbg, work, link);
	not_named(copy, copy, off, fn, 0, "debug: build-id symlink leading outside the root refused");
	sh("rm -f '%s' && cp '%s' '%s'", link, other_debug, link);
	not_named(copy, copy, off, fn, FR_DEBUG_BUILDID_MISMATCH,
		  "debug: a build-id file with another build-id refused");
	sh("rm -f '%s' && cp '%s' '%s'", link, dbg, link);
	is_named(copy, copy, off, fn, FR_DEBUG_BUILDID, "debug: the real file at that path");
	debuginfo__set_root(NULL);
}

/* -------------------------------------------- debug info: debuglink */

static const char prog_src[] =
	"#include <unistd.h>\n"
	"static volatile int sink;\n"
	"static __attribute__((noinline)) int fr_dl_static(int x)\n"
	"{\n\tfor (int i = 0; i < x; i++)\n\t\tsink += i;\n\treturn sink;\n}\n"
	"int main(int argc, char **argv)\n"
	"{\n\tfr_dl_static(argc);\n"
	"\tif (argc > 1) {\n\t\tif (write(1, \"r\", 1) != 1)\n\t\t\treturn 1;\n"
	"\t\tpause();\n\t}\n\treturn 0;\n}\n";

/*
 * build_prog() - in @work: prog.full (gcc -g), prog.debug (only the debug
 * sections), prog (stripped, with a .gnu_debuglink to prog.debug).
 */
static bool build_prog(const char *work)
{
	return sh("cd '%s' && printf '%%s' '%s' > prog.c && gcc -g -O0 -o prog.full prog.c && "
		  "objcopy --only-keep-debug prog.full prog.debug && strip -o prog prog.full && "
		  "objcopy --add-gnu-debuglink=prog.debug prog", work, prog_src);
}

/* live_name() - run @prog --wait, name @off of its main mapping through @c. */
static char *live_name(struct symcache *c, const char *prog, uint64_t off)
{
	const struct fr_mapping *m = NULL;
	struct procmaps *pm = NULL;
	char *name = NULL, b, real[PATH_MAX];
	int pfd[2], st;
	pid_t pid;

	if (!realpath(prog, real) || pipe(pfd))
		return NULL;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		execl(prog, prog, "--wait", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	if (pid > 0 && read(pfd[0], &b, 1) == 1)
		pm = procmaps__read(pid);
	for (size_t i = 0; pm && i < pm->n; i++)
		if (pm->m[i].path && !strcmp(pm->m[i].path, real) && (pm->m[i].prot & PROT_EXEC))
			m = &pm->m[i];
	if (m) {
		const char *n = elfsyms__lookup(symcache__get_mapping(c, pid, m), off, NULL);

		name = n ? strdup(n) : NULL;
	}
	close(pfd[0]);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	procmaps__free(pm);
	return name;
}

static void test_debuglink(const char *work)
{
	static const char fn[] = "fr_dl_static";
	char prog[PATH_MAX + 32], full[PATH_MAX + 32], dbg[PATH_MAX + 32];
	char root[PATH_MAX + 32], rootdir[2 * PATH_MAX + 64];
	struct symcache_stats st;
	struct symcache *c;
	uint64_t off, at;
	char *n;

	snprintf(prog, sizeof(prog), "%s/prog", work);
	snprintf(full, sizeof(full), "%s/prog.full", work);
	snprintf(dbg, sizeof(dbg), "%s/prog.debug", work);
	snprintf(root, sizeof(root), "%s/dlroot", work);
	snprintf(rootdir, sizeof(rootdir), "%s%s", root, work);
	debuginfo__set_root(root);
	off = func_off(full, prog, fn);
	ok(off && elf_sym_vaddr(prog, fn, &at) == -ENOENT,
	   "debuglink: %s at 0x%llx, not in the stripped binary", fn, (unsigned long long)off);
	not_named(prog, NULL, off, fn, 0, "debuglink: without a path hint, not searched");
	is_named(prog, prog, off, fn, FR_DEBUG_LINK, "debuglink: <dir>/<name>");
	sh("mkdir -p '%s/.debug' && mv '%s' '%s/.debug/'", work, dbg, work);
	is_named(prog, prog, off, fn, FR_DEBUG_LINK, "debuglink: <dir>/.debug/<name>");
	sh("mkdir -p '%s' && mv '%s/.debug/prog.debug' '%s/'", rootdir, work, rootdir);
	if (geteuid() == 0)
		is_named(prog, prog, off, fn, FR_DEBUG_LINK, "debuglink: <root><dir>/<name>");
	else
		tap_skip(1, "files under the debug root must be root's: run as root");
	sh("mv '%s/prog.debug' '%s'", rootdir, dbg);

	c = symcache__new();
	n = live_name(c, prog, off);
	is_str(n, fn, "debuglink: a live process's mapping passes its path as the hint");
	free(n);
	symcache__stats(c, &st, true);
	ok(st.loaded == 1 && st.debug_link == 1 && !st.debug_link_crc_mismatch,
	   "debuglink: counted as debug_link (loaded %llu, debug_link %llu)",
	   (unsigned long long)st.loaded, (unsigned long long)st.debug_link);
	symcache__free(c);

	/* A byte of .debug_str changed: still a valid ELF, but not the file. */
	ok(!elf_section_off(dbg, ".debug_str", &at) && !flip_byte(dbg, at + 1),
	   "debuglink: corrupt one byte of the debug file's .debug_str");
	not_named(prog, prog, off, fn, FR_DEBUG_LINK_CRC, "debuglink: CRC mismatch refused");
	c = symcache__new();
	n = live_name(c, prog, off);
	ok(!n || strcmp(n, fn), "debuglink: a live process with the corrupt file is not named");
	free(n);
	symcache__stats(c, &st, true);
	ok(st.loaded == 1 && st.debug_link_crc_mismatch == 1 && !st.debug_link,
	   "debuglink: counted as debug_link_crc_mismatch (%llu)",
	   (unsigned long long)st.debug_link_crc_mismatch);
	symcache__free(c);
	flip_byte(dbg, at + 1);
	debuginfo__set_root(NULL);
}


/* elfsyms__open_opts() on @path with its path as hint; the table's debug flags, -errno. */
static int debug_flags_of(const char *path, uint64_t deadline_ns, uint64_t *took_ns)
{
	uint64_t t0 = boot_ns();
	struct elfsyms *s;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	s = elfsyms__open_opts(fd, &(struct elfsyms_opts){ .path = path,
							.deadline_ns = deadline_ns });
	r = s ? (int)elfsyms__debug(s) : -errno;
	elfsyms__free(s);
	close(fd);
	if (took_ns)
		*took_ns = boot_ns() - t0;
	return r;
}

/*
 * The debuglink CRC bomb: a candidate's CRC needs the whole file read. It
 * is read once per file identity; a read stops at the deadline and goes on
 * from there; a candidate another user owns is read only below a bound.
 */
static void test_debuglink_bounds(const char *work)
{
	char prog[PATH_MAX + 32], dbg[PATH_MAX + 32], keep[PATH_MAX + 32];
	struct debuginfo_crc_stats c0, c1;
	uint64_t took;
	int f;

	snprintf(prog, sizeof(prog), "%s/prog", work);
	snprintf(dbg, sizeof(dbg), "%s/prog.debug", work);
	snprintf(keep, sizeof(keep), "%s/prog.debug.keep", work);
	debuginfo__set_root("");
	debuginfo__crc_stats(&c0);
	f = debug_flags_of(prog, 0, NULL);
	debuginfo__crc_stats(&c1);
	ok(f >= 0 && (f & FR_DEBUG_LINK) && c1.bytes > c0.bytes,
	   "debuglink bounds: the debug file is read for its CRC (%llu bytes)",
	   (unsigned long long)(c1.bytes - c0.bytes));
	c0 = c1;
	f = debug_flags_of(prog, 0, NULL);
	debuginfo__crc_stats(&c1);
	ok(f >= 0 && (f & FR_DEBUG_LINK) && c1.bytes == c0.bytes && c1.hits == c0.hits + 1,
	   "debuglink bounds: loaded again, its CRC is known: 0 bytes read");

	/* A 1 GiB root-owned candidate: cut at the deadline, resumed at the next load. */
	if (!ok(!rename(dbg, keep) && sh("truncate -s 1G '%s'", dbg),
		"debuglink bounds: a 1 GiB sparse candidate"))
		goto out;
	c0 = c1;
	f = debug_flags_of(prog, boot_ns() + 20000000ULL, &took);
	debuginfo__crc_stats(&c1);
	ok(f >= 0 && (f & FR_DEBUG_PENDING) && !(f & FR_DEBUG_LINK) && took < 1000000000ULL &&
	   c1.bytes - c0.bytes < (1ULL << 30),
	   "debuglink bounds: a 20 ms deadline cuts the CRC read (%.1f ms, %llu MiB read), pending",
	   took / 1e6, (unsigned long long)((c1.bytes - c0.bytes) >> 20));
	c0 = c1;
	f = debug_flags_of(prog, boot_ns() + 20000000ULL, NULL);
	debuginfo__crc_stats(&c1);
	ok(f >= 0 && (f & FR_DEBUG_PENDING) && c1.resumed == c0.resumed + 1,
	   "debuglink bounds: the next load goes on from where the last one stopped");
	/* Another user's: read only below the bound, refused by its size. */
	if (geteuid() == 0 && !chown(prog, 65534, 65534) && !chown(dbg, 65534, 65534)) {
		unlink(dbg);
		sh("truncate -s 1G '%s' && chown 65534:65534 '%s'", dbg, dbg);
		c0 = c1;
		f = debug_flags_of(prog, 0, &took);
		debuginfo__crc_stats(&c1);
		ok(f >= 0 && (f & FR_DEBUG_BAD) && !(f & (FR_DEBUG_LINK | FR_DEBUG_PENDING)) &&
		   c1.bytes == c0.bytes,
		   "debuglink bounds: nobody's 1 GiB candidate next to nobody's binary is refused "
		   "by its size, 0 bytes read (%.1f ms)", took / 1e6);
		chown(prog, 0, 0);
	} else {
		tap_skip(1, "files of another user need root");
	}
	unlink(dbg);
	rename(keep, dbg);
out:
	debuginfo__set_root(NULL);
}

/* -------------------------------------------- debug info: MiniDebugInfo */

/*
 * build_mini() - Fedora's MiniDebugInfo recipe (gdb manual, "MiniDebugInfo"):
 * the function symbols not in .dynsym, as a symbols-only ELF, xz'ed into
 * .gnu_debugdata of the stripped binary prog.mini. Also prog.badmini (the
 * section holds no xz stream) and prog.bigmini (the same ELF, zero-padded
 * to inflate past the bound: only the bound refuses it).
 */
static bool build_mini(const char *work)
{
	return sh("cd '%s' && "
		  "nm -D prog.full --format=posix --defined-only | awk '{ print $1 }' | sort > dynsyms && "
		  "nm prog.full --format=posix --defined-only | "
		  "awk '{ if ($2 == \"T\" || $2 == \"t\" || $2 == \"D\") print $1 }' | sort > funcsyms && "
		  "comm -13 dynsyms funcsyms > keep_symbols && "
		  "objcopy --only-keep-debug prog.full mini.debug && "
		  "objcopy -S --remove-section .gdb_index --remove-section .comment "
		  "--keep-symbols=keep_symbols mini.debug mini_debuginfo && "
		  "strip --strip-all -R .comment -o prog.mini prog.full && "
		  "{ cat mini_debuginfo && head -c %llu /dev/zero; } | xz -0 > big.xz && "
		  "xz -f mini_debuginfo && "
		  "objcopy --add-section .gnu_debugdata=mini_debuginfo.xz prog.mini && "
		  "printf 'not an xz stream' > garbage && "
		  "strip --strip-all -o prog.badmini prog.full && "
		  "objcopy --add-section .gnu_debugdata=garbage prog.badmini && "
		  "strip --strip-all -o prog.bigmini prog.full && "
		  "objcopy --add-section .gnu_debugdata=big.xz prog.bigmini",
		  work, (unsigned long long)FR_MINIDEBUG_MAX_BYTES + 1);
}

static void test_minidebuginfo(const char *work)
{
	static const char fn[] = "fr_dl_static";
	char full[PATH_MAX + 32], mini[PATH_MAX + 32], bad[PATH_MAX + 32], big[PATH_MAX + 32];
	uint64_t off;

	snprintf(full, sizeof(full), "%s/prog.full", work);
	snprintf(mini, sizeof(mini), "%s/prog.mini", work);
	snprintf(bad, sizeof(bad), "%s/prog.badmini", work);
	snprintf(big, sizeof(big), "%s/prog.bigmini", work);
	if (!ok(build_mini(work), "minidebuginfo: built with nm, objcopy, strip, xz")) {
		tap_diag("binutils and xz-utils are installed by tools/bootstrap.sh");
		return;
	}
	off = func_off(full, mini, fn);
	debuginfo__set_root("");
	is_named(mini, NULL, off, fn, FR_DEBUG_MINI, "minidebuginfo: static function named");
	is_named(mini, NULL, func_off(full, mini, "main"), "main", FR_DEBUG_MINI,
		 "minidebuginfo: main named");
	not_named(bad, NULL, off, fn, FR_DEBUG_BAD, "minidebuginfo: not an xz stream, refused");
	not_named(big, NULL, off, fn, FR_DEBUG_BAD, "minidebuginfo: inflating past 64 MiB, refused");
	debuginfo__set_root(NULL);
}

/* ---------------------------------------------------------- demangling */

static void test_demangle_strings(void)
{
	/* Expected outputs derived by hand from the mangling rules. */
	static const struct { const char *in, *out; } cases[] = {
		/* Rust v0: C = crate root (s<base62>_ disambiguator), N v/t = value/type ns */
		{ "_RNvCs1234_7mycrate3foo", "mycrate::foo" },
		{ "_RNvNtCs1234_7mycrate3bar3baz", "mycrate::bar::baz" },
		/* I...E generic args, l = i32; a value path takes a turbofish */
		{ "_RINvCs1234_7mycrate3foolE", "mycrate::foo::<i32>" },
		/* Rust legacy: Itanium-like nested name, hash segment dropped */
		{ "_ZN7mycrate3foo17h0123456789abcdefE", "mycrate::foo" },
		{ "_ZN4core3ptr13drop_in_place17h0123456789abcdefE", "core::ptr::drop_in_place" },
		/* $LT$ $GT$ $u20$ escapes, ".." for "::", leading "_$" */
		{ "_ZN66_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..drop..Drop$GT$"
		  "4drop17h0123456789abcdefE",
		  "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop" },
		/* Itanium C++: nested name, parameters; K const; eq operator==; S0_ */
		{ "_ZN3foo3barEi", "foo::bar(int)" },
		{ "_ZNK3foo3BazeqERKS0_", "foo::Baz::operator==(foo::Baz const&) const" },
		{ "_Z5twiceIiET_S0_", "int twice<int>(int)" },
	};
	char buf[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = demangle__name(cases[i].in, buf, sizeof(buf));

		ok(!r && !strcmp(buf, cases[i].out), "demangle: %s -> %s", cases[i].in, cases[i].out);
		if (r || strcmp(buf, cases[i].out))
			tap_diag("got %d '%s'", r, buf);
	}
	is_int(demangle__name("main", buf, sizeof(buf)), -EINVAL, "demangle: plain C name: -EINVAL");
	is_int(demangle__name("_Zfoo", buf, sizeof(buf)), -EINVAL, "demangle: bad C++ name: -EINVAL");
	ok(demangle__name("_RNvC", buf, sizeof(buf)) == -EINVAL && !buf[0],
	   "demangle: truncated Rust v0 name: -EINVAL, empty output");
	ok(!demangle__name("_ZN3foo3barEi", buf, 6) && !strcmp(buf, "foo::"),
	   "demangle: output cut at the buffer");
}

static const char cxx_src[] =
	"namespace frt {\n"
	"template <typename T> struct box {\n"
	"\tT v;\n"
	"\t__attribute__((noinline)) T get() const { return v; }\n"
	"};\n"
	"struct pt {\n"
	"\tint x;\n"
	"\t__attribute__((noinline)) bool operator==(const pt &o) const { return x == o.x; }\n"
	"};\n"
	"template <typename T> __attribute__((noinline)) T twice(T a) { return a + a; }\n"
	"}\n"
	"extern \"C\" __attribute__((noinline)) int rs_v0(int x) __asm__(\"_RNvCs1234_7mycrate3foo\");\n"
	"int rs_v0(int x) { return x + 1; }\n"
	"extern \"C\" __attribute__((noinline)) int rs_legacy(int x)\n"
	"\t__asm__(\"_ZN7mycrate3bar17h0123456789abcdefE\");\n"
	"int rs_legacy(int x) { return x + 2; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tfrt::box<long> b{argc};\n"
	"\tfrt::pt p{argc}, q{1};\n"
	"\treturn (int)(frt::twice<int>(argc) + b.get() + (p == q) + rs_v0(argc) + rs_legacy(argc));\n"
	"}\n";

/*
 * find_demangled() - whether some function of @path's .symtab looks up in
 * @s as @want at its start, with the symtab's own name as the mangled one.
 */
static bool find_demangled(const struct elfsyms *s, const char *path, const char *want)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	int fd;
	Elf *e;

	e = elf_open_path(path, &fd);
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !d)
			continue;
		for (int i = 0; !found && gelf_getsym(d, i, &sym); i++) {
			const char *raw = elf_strptr(e, sh.sh_link, sym.st_name), *n, *m;
			uint64_t off, so = 1;

			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value || !raw ||
			    elf_vaddr_off(path, sym.st_value, &off))
				continue;
			n = elfsyms__lookup_full(s, off, &so, &m);
			found = n && !so && !strcmp(n, want) && m && !strcmp(m, raw);
		}
	}
	if (e) {
		elf_end(e);
		close(fd);
	}
	return found;
}

static void test_demangle_binary(const char *work)
{
	static const char *const want[] = {
		"int frt::twice<int>(int)",
		"frt::box<long>::get() const",
		"frt::pt::operator==(frt::pt const&) const",
		"mycrate::foo",
		"mycrate::bar",
	};
	char bin[PATH_MAX + 32];
	const char *m = "unset", *n;
	struct elfsyms *s;

	snprintf(bin, sizeof(bin), "%s/cxx", work);
	if (!ok(sh("cd '%s' && printf '%%s' '%s' > cxx.cc && g++ -O0 -g -o cxx cxx.cc",
		   work, cxx_src), "demangle: g++ builds a C++ program")) {
		tap_diag("g++ is installed by tools/bootstrap.sh");
		return;
	}
	s = elfsyms__open(bin);
	ok(s != NULL, "demangle: its symbols load");
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ok(s && find_demangled(s, bin, want[i]),
		   "demangle: '%s' found, mangled name kept", want[i]);
	n = elfsyms__lookup_full(s, func_off(bin, bin, "main"), NULL, &m);
	ok(n && !strcmp(n, "main") && !m, "demangle: main is not mangled: *mangled is NULL");
	ok(!elfsyms__lookup_full(s, UINT64_MAX, NULL, &m) && !m,
	   "demangle: nothing found: NULL, *mangled NULL");
	elfsyms__free(s);
}

/* test_debuginfo() - the separate debug information tests, in one work dir. */
/* A shared library of 60,000 one-byte functions, built in @work. */
static void test_symcache_many(const char *work)
{
	char so[PATH_MAX + 16];

	snprintf(so, sizeof(so), "%s/many.so", work);
	if (!ok(sh("awk 'BEGIN { print \".text\"; for (i = 0; i < 60000; i++) "
		   "printf \".globl f%%d\\n.type f%%d,@function\\nf%%d: ret\\n.size f%%d,1\\n\", i, i, i, i }' "
		   "> '%s/many.s' && gcc -shared -nostdlib -o '%s' '%s/many.s'", work, so, work),
		"no wait: gcc builds a library of 60,000 functions"))
		return;
	test_symcache_no_wait(so);
}

static void test_debuginfo(void)
{
	char work[PATH_MAX], other[PATH_MAX + 32];

	if (!ok(!make_workdir(work), "debug: a work directory"))
		return;
	test_symcache_many(work);
	if (ok(build_prog(work), "debug: gcc, objcopy and strip build a stripped program with a debuglink")) {
		snprintf(other, sizeof(other), "%s/prog.debug", work);
		test_debug_buildid(work, other);
		test_debuglink(work);
		test_debuglink_bounds(work);
		test_minidebuginfo(work);
	} else {
		tap_diag("gcc and binutils are installed by tools/bootstrap.sh");
	}
	test_demangle_strings();
	test_demangle_binary(work);
	sh("rm -rf '%s'", work);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--spin"))
		return spin(atoi(argv[2]));

	test_procmaps_parse();
	test_self();
	test_deleted();
	test_mapping_replaced();
	test_buildid();
	test_synthetic();
	test_symcache();
	test_symcache_threads();
	test_symcache_budget();
	test_symcache_forged();
	test_image_bounds();
	test_kallsyms_fixture();
	test_kallsyms_real();
	test_perfmap();
	test_robustness();
	test_debuginfo();
	return tap_done_testing();
}
