// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_tables.c - the unwind maps' owner (recorder/unwind/tables.c) on
 * real BPF maps shaped as bpf/unwind.bpf.h declares them, with this test's
 * own mappings: what a process table holds (every executable mapping, the
 * bias that turns an address into the file's virtual address, the rows
 * that file's CFI gives), one set of rows per file however many processes
 * map it, staleness (a generation moved on), collection when the BPF side
 * dropped a table, and eviction of idle files when the pool is full.
 * Needs root (BPF maps); CI runs as root.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <bpf/bpf.h>

#include "live_stack.h"
#include "rows.h"
#include "sampler.h"
#include "symbols.h"
#include "tables.h"
#include "tap.h"
#include "unwind_maps.h"
#include "util.h"

struct maps {
	struct sampler_unwind_maps m;
};

/*
 * Tables are installed only for incarnations that live: ours, and
 * children asleep, each with its real start.
 */
#define NKIDS	5
static uint64_t self_start;
static pid_t kid[NKIDS];
static uint64_t kid_start[NKIDS];

/* The four maps, as the BPF object declares them; false if BPF is refused. */
static bool maps__create(struct maps *mp, uint32_t nrows, uint32_t nfiles)
{
	return unwind_maps__create(&mp->m, nrows, nfiles);
}

static void maps__close(struct maps *mp)
{
	unwind_maps__close(&mp->m);
}

/* The mapping of @addr in our own maps. */
static const struct fr_mapping *self_mapping(const struct procmaps *pm, const void *addr)
{
	return procmaps__find(pm, (uint64_t)(uintptr_t)addr);
}

/*
 * Our table as the BPF side sees it: the entry for getpid() maps getpid's
 * address to libc's file slot, and the row found there for the address
 * minus the bias is the row urows__find gives for getpid's virtual address.
 */
static void test_attach(struct unwinder *u, const struct maps *mp, const struct procmaps *pm)
{
	uint32_t pid = getpid(), slot;
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	const struct fr_mapping *lm = self_mapping(pm, fn);
	struct fr_uproc *v = calloc(1, sizeof(*v));
	struct fr_ufile ent;
	struct fr_urow row;
	struct urows ref = { 0 };
	const struct fr_urow *want;
	uint64_t addr = (uint64_t)(uintptr_t)fn;
	int found = -1, fd;
	uint32_t nexec = 0;

	ok(lm && lm->path, "getpid is in a file mapping (%s)", lm && lm->path ? lm->path : "?");
	is_int(unwinder__attach(u, pid, self_start, 0, "/proc/self", pm, NULL), 0, "attach our own maps");
	ok(unwinder__current(u, pid, self_start), "the table is current");
	ok(!unwinder__current(u, pid, 999), "not for another incarnation of the pid");
	is_int(bpf_map_lookup_elem(mp->m.procs, &pid, v), 0, "the BPF map has our entry");
	for (size_t i = 0; i < pm->n; i++)
		nexec += (pm->m[i].prot & PROT_EXEC) && !(pm->m[i].path && !strcmp(pm->m[i].path, "[vsyscall]"));
	ok(v->start == self_start && v->gen == 0 && v->n == FR_MIN(nexec, (uint32_t)FR_UMAPS_MAX),
	   "start, gen and %u executable mappings (got %u)", nexec, v->n);
	for (uint32_t i = 0; i < v->n; i++) {
		if (i && v->maps[i].begin < v->maps[i - 1].end)
			ok(0, "mappings %u and %u overlap or are unsorted", i - 1, i);
		if (addr >= v->maps[i].begin && addr < v->maps[i].end)
			found = (int)i;
	}
	ok(found >= 0, "getpid's address is in mapping %d", found);
	if (found < 0 || !lm)
		goto out;
	slot = v->maps[found].file;
	ok(slot != FR_UFILE_NONE, "libc has rows (slot %u)", slot);
	is_int(bpf_map_lookup_elem(mp->m.files, &slot, &ent), 0, "its file slot is written");
	ok(ent.gen == v->maps[found].file_gen && ent.nrows > 1000, "gen matches, %u rows", ent.nrows);
	fd = open(lm->path, O_RDONLY | O_CLOEXEC);
	is_int(urows__build_fd(fd, &ref), 0, "libc's rows built directly");
	close(fd);
	is_int(ent.nrows, ref.n, "the pool holds all of them");
	{
		/* The BPF walker's arithmetic: vaddr = pc - bias. */
		uint64_t vaddr = addr - v->maps[found].bias;
		uint32_t lo = ent.row_start, hi = ent.row_start + ent.nrows, k;

		want = urows__find(&ref, (uint32_t)vaddr);
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			bpf_map_lookup_elem(mp->m.rows, &mid, &row);
			if (row.pc <= vaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
		k = lo - 1;
		bpf_map_lookup_elem(mp->m.rows, &k, &row);
		ok(want && row.pc == want->pc && row.kind == want->kind &&
		   row.cfa_off == want->cfa_off, "getpid (vaddr %#llx) finds the same row in the pool",
		   (unsigned long long)vaddr);
	}
	{
		/* The mm's exec_vm as the BPF side will compare it. */
		uint64_t pages = 0;

		for (size_t i = 0; i < pm->n; i++)
			if ((pm->m[i].prot & PROT_EXEC) && !(pm->m[i].prot & PROT_WRITE) &&
			    !(pm->m[i].path && !strcmp(pm->m[i].path, "[vsyscall]")))
				pages += (pm->m[i].end - pm->m[i].start) / sysconf(_SC_PAGESIZE);
		is_int(v->exec_vm, pages, "exec_vm counts the pages of code");
	}
out:
	urows__fini(&ref);
	free(v);
}

/* A second process with the same files shares their rows. */
static void test_sharing(struct unwinder *u, const struct procmaps *pm)
{
	struct unwinder_stats a, b;

	unwinder__stats(u, &a);
	is_int(unwinder__attach(u, kid[0], kid_start[0], 0, "/proc/self", pm, NULL), 0,
	       "attach a second pid");
	unwinder__stats(u, &b);
	is_int(b.built, a.built, "no file built twice (%llu built)", (unsigned long long)a.built);
	is_int(b.rows_used, a.rows_used, "no rows added");
	is_int(b.procs, a.procs + 1, "two process tables");
}

/* A moved generation makes a table stale; gc drops tables the BPF side no longer has. */
static void test_stale_and_gc(struct unwinder *u, const struct maps *mp, const struct procmaps *pm)
{
	struct fr_ugen gen = { .gen = 1, .ts = 4242 };
	uint32_t pid = kid[0];
	uint64_t start = kid_start[0];
	struct unwinder_stats st;
	uint64_t changed = 0;

	bpf_map_update_elem(mp->m.gen, &pid, &gen, BPF_ANY);
	ok(unwinder__gen(u, pid, &changed) == 1 && changed == 4242,
	   "the generation and when it moved are read");
	ok(!unwinder__current(u, pid, start), "a bumped generation: stale");
	is_int(unwinder__attach(u, pid, start, 0, "/proc/self", pm, NULL), -ESTALE,
	       "attaching maps read under the old generation is refused");
	is_int(unwinder__gc(u), 1, "gc drops the stale table");
	is_int(unwinder__attach(u, pid, start, 1, "/proc/self", pm, NULL), 0,
	       "maps read under gen 1 attach");
	ok(unwinder__current(u, pid, start), "and are current");
	bpf_map_delete_elem(mp->m.procs, &pid);	/* what the exit program does */
	is_int(unwinder__gc(u), 1, "gc drops the table of an exited process");
	unwinder__stats(u, &st);
	is_int(st.procs, 1, "one table left");
	ok(st.idle == 0, "files still named by the other table are not idle (%llu)",
	   (unsigned long long)st.idle);
	pid = getpid();
	bpf_map_delete_elem(mp->m.procs, &pid);
	unwinder__gc(u);
	unwinder__stats(u, &st);
	ok(st.procs == 0 && st.idle == st.files && st.files > 0,
	   "no table left: the %llu files are idle, kept for reuse", (unsigned long long)st.files);
	is_int(unwinder__attach(u, pid, self_start, 0, "/proc/self", pm, NULL), 0, "attach again");
	{
		struct unwinder_stats again;

		unwinder__stats(u, &again);
		ok(again.built == st.built && again.idle == 0, "idle files are reused, not rebuilt");
	}
	{
		/* The code changed, and the BPF side built a current table itself:
		 * our stale one goes, the kernel's stays. */
		struct fr_ugen g1 = { .gen = 1, .ts = 4343 };
		struct fr_uproc *kv = calloc(1, sizeof(*kv)), *got = calloc(1, sizeof(*got));

		if (kv && got && !bpf_map_lookup_elem(mp->m.procs, &pid, kv)) {
			kv->gen = 1;
			kv->flags = FR_UPROC_KERNEL;
			bpf_map_update_elem(mp->m.gen, &pid, &g1, BPF_ANY);
			bpf_map_update_elem(mp->m.procs, &pid, kv, BPF_ANY);
			is_int(unwinder__gc(u), 1, "gc drops our table outdated by a code change");
			ok(!bpf_map_lookup_elem(mp->m.procs, &pid, got) && got->flags == FR_UPROC_KERNEL &&
			   got->gen == 1, "and keeps the current table the BPF side built meanwhile");
			bpf_map_delete_elem(mp->m.procs, &pid);
			bpf_map_delete_elem(mp->m.gen, &pid);
		} else {
			ok(0, "our table to stand in for the kernel's");
			tap_skip(1, "no table");
		}
		free(kv);
		free(got);
	}
}

/*
 * A table the BPF side built from the VMAs (uproc_build()) with rows for
 * every file is current: the attacher and the /proc worker need not build
 * ours. One with a file missing, or naming a file evicted since, is not.
 */
static void test_kernel_table(struct unwinder *u, const struct maps *mp, const struct procmaps *pm)
{
	struct fr_uproc *kv = calloc(1, sizeof(*kv));
	uint32_t pid = kid[1];
	uint64_t start = kid_start[1];
	struct unwinder_stats st;
	int nfile = -1;

	if (!kv || unwinder__attach(u, pid, start, 0, "/proc/self", pm, NULL) ||
	    bpf_map_lookup_elem(mp->m.procs, &pid, kv)) {
		ok(0, "a table to stand in for the kernel's");
		free(kv);
		return;
	}
	bpf_map_delete_elem(mp->m.procs, &pid);
	unwinder__gc(u);
	ok(!unwinder__current(u, pid, start), "no table: not current");
	for (uint32_t i = 0; i < kv->n && nfile < 0; i++)
		if (kv->maps[i].file != FR_UFILE_NONE)
			nfile = (int)i;
	kv->flags = FR_UPROC_KERNEL;
	bpf_map_update_elem(mp->m.procs, &pid, kv, BPF_ANY);
	ok(unwinder__current(u, pid, start), "the kernel's complete table is current");
	ok(!unwinder__current(u, pid, start + 1), "not for another incarnation");
	unwinder__stats(u, &st);
	ok(st.kernel_tables == 1, "and counted (%" PRIu64 ")", st.kernel_tables);
	kv->flags = FR_UPROC_KERNEL | FR_UPROC_MISSING;
	bpf_map_update_elem(mp->m.procs, &pid, kv, BPF_ANY);
	ok(!unwinder__current(u, pid, start), "one with a file missing is not");
	kv->flags = FR_UPROC_KERNEL | FR_UPROC_PARTIAL;
	bpf_map_update_elem(mp->m.procs, &pid, kv, BPF_ANY);
	ok(!unwinder__current(u, pid, start), "nor one with VMAs left out");
	if (nfile >= 0) {
		kv->flags = FR_UPROC_KERNEL;
		kv->maps[nfile].file_gen++;
		bpf_map_update_elem(mp->m.procs, &pid, kv, BPF_ANY);
		ok(!unwinder__current(u, pid, start), "nor one naming a file evicted since");
	} else {
		ok(0, "a file with rows in the table");
	}
	bpf_map_delete_elem(mp->m.procs, &pid);
	free(kv);
}

struct yield_probe {
	struct unwinder *u;
	unsigned calls, stop_at;
	uint64_t built_seen;
};

/* Stops the attach at its stop_at-th build; reads the stats (the lock must be free). */
static bool probe_yield(void *ctx)
{
	struct yield_probe *y = ctx;
	struct unwinder_stats st;

	unwinder__stats(y->u, &st);
	y->built_seen = st.built + st.failed;
	return ++y->calls == y->stop_at;
}

/*
 * A yield before each build: the attach stops at the second new file
 * with nothing written, the first file's rows kept; the next attach
 * builds only the rest. The yield runs without the table lock held.
 */
static void test_yield(const struct procmaps *pm)
{
	struct yield_probe y = { .stop_at = 2 };
	const struct unwind_yield yield = { .fn = probe_yield, .ctx = &y };
	struct unwinder_stats st, all;
	struct maps mp;

	if (!maps__create(&mp, 1 << 20, 256)) {
		ok(0, "maps for the yield test");
		return;
	}
	y.u = unwinder__new(&mp.m);
	is_int(unwinder__attach(y.u, kid[1], kid_start[1], 0, "/proc/self", pm, &yield), -EAGAIN,
	       "a yield at the second build stops the attach");
	unwinder__stats(y.u, &st);
	ok(st.procs == 0, "no table written");
	ok(st.built + st.failed == 1 && y.built_seen == 1,
	   "the first file was built and published before the yield was asked again "
	   "(built %llu, seen from the yield %llu)", (unsigned long long)(st.built + st.failed),
	   (unsigned long long)y.built_seen);
	ok(st.idle == st.files, "its rows are kept, idle, for the next attach");
	is_int(unwinder__attach(y.u, kid[1], kid_start[1], 0, "/proc/self", pm, NULL), 0,
	       "attach without a yield");
	unwinder__stats(y.u, &all);
	ok(all.procs == 1 && all.built + all.failed > 1, "the table is there, %llu files built",
	   (unsigned long long)(all.built + all.failed));
	y.calls = 0;
	y.stop_at = 1;
	is_int(unwinder__attach(y.u, kid[2], kid_start[2], 0, "/proc/self", pm, &yield), 0,
	       "a second process of the same files: built already, the yield is not asked");
	is_int(y.calls, 0, "no yield asked");
	unwinder__free(y.u);
	maps__close(&mp);
}

/*
 * The /proc worker's attach (no_wait, build_max): a file without rows
 * larger than build_max stops it at once, nothing built, nothing
 * written; with a build_max above every file, it builds
 * them itself; once they are built, an attach of 1 byte build_max
 * writes the table.
 */
static void test_no_wait(const struct procmaps *pm)
{
	struct unwinder *u;
	struct unwind_yield nw = { .no_wait = true, .build_max = 1 };
	struct unwinder_stats st;
	struct maps mp;

	if (!maps__create(&mp, 1 << 20, 256)) {
		ok(0, "maps for the no_wait test");
		return;
	}
	u = unwinder__new(&mp.m);
	is_int(unwinder__attach(u, kid[1], kid_start[1], 0, "/proc/self", pm, &nw), -EAGAIN,
	       "no_wait: a new file above build_max stops the attach");
	unwinder__stats(u, &st);
	ok(st.procs == 0 && st.files == 0, "nothing written, no file published (%llu files)",
	   (unsigned long long)st.files);
	nw.build_max = 1ULL << 40;
	is_int(unwinder__attach(u, kid[2], kid_start[2], 0, "/proc/self", pm, &nw), 0,
	       "no_wait: files below build_max are built here (no yield function)");
	unwinder__stats(u, &st);
	ok(st.built + st.failed > 1, "%llu files built", (unsigned long long)(st.built + st.failed));
	nw.build_max = 1;
	is_int(unwinder__attach(u, kid[1], kid_start[1], 0, "/proc/self", pm, &nw), 0,
	       "no_wait: with every file built, the table is written whatever build_max");
	unwinder__stats(u, &st);
	ok(st.procs == 2, "two tables (%llu)", (unsigned long long)st.procs);
	unwinder__free(u);
	maps__close(&mp);
}

struct racer {
	struct unwinder *u;
	const struct procmaps *pm;
	uint32_t pid;
	uint64_t start;
	int err;
};

static void *race_attach(void *arg)
{
	struct racer *r = arg;

	r->err = unwinder__attach(r->u, r->pid, r->start, 0, "/proc/self", r->pm, NULL);
	return NULL;
}

/* Two threads attach processes of the same files at once: each file is built once. */
static void test_concurrent(const struct procmaps *pm)
{
	struct racer r[2];
	pthread_t t[2];
	struct unwinder_stats st, one;
	struct maps mp, mp1;
	struct unwinder *u1;

	if (!maps__create(&mp, 1 << 20, 256) || !maps__create(&mp1, 1 << 20, 256)) {
		ok(0, "maps for the concurrency test");
		return;
	}
	/* How many files one attach builds, alone. */
	u1 = unwinder__new(&mp1.m);
	unwinder__attach(u1, getpid(), self_start, 0, "/proc/self", pm, NULL);
	unwinder__stats(u1, &one);
	unwinder__free(u1);
	maps__close(&mp1);
	r[0] = (struct racer){ unwinder__new(&mp.m), pm, kid[3], kid_start[3], -1 };
	r[1] = (struct racer){ r[0].u, pm, kid[4], kid_start[4], -1 };
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, race_attach, &r[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ok(!r[0].err && !r[1].err, "both attaches succeed (%d, %d)", r[0].err, r[1].err);
	unwinder__stats(r[0].u, &st);
	ok(st.built + st.failed == one.built + one.failed && st.rows_used == one.rows_used,
	   "each file built once: %llu files, %llu rows (alone: %llu, %llu)",
	   (unsigned long long)(st.built + st.failed), (unsigned long long)st.rows_used,
	   (unsigned long long)(one.built + one.failed), (unsigned long long)one.rows_used);
	is_int(st.procs, 2, "two tables");
	unwinder__free(r[0].u);
	maps__close(&mp);
}

/* A pool too small for two large files evicts the idle one. */
static void test_evict(const struct procmaps *pm)
{
	struct maps mp;
	struct unwinder *u;
	struct unwinder_stats st;
	uint32_t pid = getpid();
	struct fr_mapping lib[1];
	struct procmaps one = { .n = 1, .m = lib };
	const struct fr_mapping *lc = self_mapping(pm, dlsym(RTLD_DEFAULT, "getpid"));

	if (!lc || !maps__create(&mp, 40000, 4)) {
		ok(0, "a small pool and libc's mapping");
		return;
	}
	u = unwinder__new(&mp.m);
	lib[0] = *lc;
	is_int(unwinder__attach(u, pid, self_start, 0, "/proc/self", &one, NULL), 0,
	       "libc alone fits 40000 rows");
	unwinder__stats(u, &st);
	ok(st.files == 1 && st.rows_used > 20000, "one file, %llu rows", (unsigned long long)st.rows_used);
	bpf_map_delete_elem(mp.m.procs, &pid);
	unwinder__gc(u);
	unwinder__stats(u, &st);
	ok(st.idle == 1 && st.procs == 0, "libc idle after its last table went");
	{
		/* libstdc++'s 34k rows do not fit beside libc's 28k: the idle file goes. */
		void *h = dlopen("libstdc++.so.6", RTLD_NOW);
		struct procmaps *pm2 = procmaps__read(getpid());
		const struct fr_mapping *sm = h && pm2 ?
			self_mapping(pm2, dlsym(h, "_ZNSt6chrono3_V212system_clock3nowEv")) : NULL;

		ok(sm != NULL, "libstdc++ loaded and its code found");
		if (sm) {
			lib[0] = *sm;
			is_int(unwinder__attach(u, pid, self_start, 0, "/proc/self", &one, NULL), 0,
			       "attach libstdc++ into the full pool");
			unwinder__stats(u, &st);
			ok(st.freed == 1 && st.files == 1 && st.full == 0 && st.idle == 0,
			   "the idle libc was evicted for it (freed %llu, files %llu, full %llu)",
			   (unsigned long long)st.freed, (unsigned long long)st.files,
			   (unsigned long long)st.full);
			bpf_map_delete_elem(mp.m.procs, &pid);
			unwinder__gc(u);
			lib[0] = *lc;
			is_int(unwinder__attach(u, pid, self_start, 0, "/proc/self", &one, NULL), 0,
			       "attach libc again");
			unwinder__stats(u, &st);
			ok(st.freed == 2 && st.full == 0, "libstdc++ (idle) evicted for libc");
		}
		procmaps__free(pm2);
	}
	unwinder__free(u);
	maps__close(&mp);
}

/* A copy of @src at @dst owned by @uid, mapped executable here; NULL on failure. */
static void *owned_copy(const char *src, const char *dst, uid_t uid, size_t *len)
{
	char cmd[2 * PATH_MAX + 64];
	void *at = MAP_FAILED;
	struct stat st;
	int fd;

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chown %u '%s'", src, dst, (unsigned)uid, dst);
	if (system(cmd))
		return NULL;
	fd = open(dst, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st)) {
		*len = (size_t)st.st_size;
		at = mmap(NULL, *len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	}
	if (fd >= 0)
		close(fd);
	return at == MAP_FAILED ? NULL : at;
}

/*
 * One owner other than root holds a quarter of the pool at most: nobody's
 * copy of libc (28k rows) fits in the quarter of 160000 rows, its copy of
 * libstdc++ (34k) then does not, and is counted; root's libstdc++ still
 * gets its rows beside them.
 */
static void test_owner_share(void)
{
	char dir[] = "/tmp/fr-share-XXXXXX", a[PATH_MAX], b[PATH_MAX];
	void *h = dlopen("libstdc++.so.6", RTLD_NOW), *ma = NULL, *mb = NULL;
	const struct fr_mapping *m[3] = {};
	struct fr_mapping lib[3];
	struct procmaps one = { .n = 1, .m = lib }, *pm2 = NULL;
	struct unwinder_stats st;
	struct unwinder *u = NULL;
	size_t la = 0, lb = 0;
	uint32_t pid = getpid();
	Dl_info di = { 0 }, ds = { 0 };
	struct maps mp;

	if (geteuid()) {
		tap_skip(4, "owner share: needs root to chown the copies");
		return;
	}
	if (!ok(h && mkdtemp(dir) && dladdr(dlsym(RTLD_DEFAULT, "getpid"), &di) &&
		dladdr(dlsym(h, "_ZNSt6chrono3_V212system_clock3nowEv"), &ds) &&
		maps__create(&mp, 160000, 16), "owner share: a pool of 160000 rows, libc, libstdc++"))
		return;
	snprintf(a, sizeof(a), "%s/libc-copy.so", dir);
	snprintf(b, sizeof(b), "%s/libstdcxx-copy.so", dir);
	ma = owned_copy(di.dli_fname, a, 65534, &la);
	mb = owned_copy(ds.dli_fname, b, 65534, &lb);
	pm2 = procmaps__read(getpid());
	if (ma && mb && pm2) {
		m[0] = self_mapping(pm2, (char *)ma + 4096);
		m[1] = self_mapping(pm2, (char *)mb + 4096);
		m[2] = self_mapping(pm2, dlsym(h, "_ZNSt6chrono3_V212system_clock3nowEv"));
	}
	if (!ok(m[0] && m[1] && m[2], "owner share: nobody's copies mapped executable here")) {
		tap_skip(3, "no copies");
		goto out;
	}
	u = unwinder__new(&mp.m);
	lib[0] = *m[0];
	is_int(unwinder__attach(u, pid, self_start, 0, "/proc/self", &one, NULL), 0,
	       "owner share: nobody's libc copy");
	lib[1] = *m[1];
	lib[2] = *m[2];
	one.n = 3;
	is_int(unwinder__attach(u, pid, self_start, 0, "/proc/self", &one, NULL), 0,
	       "owner share: then nobody's libstdc++ copy and root's libstdc++");
	unwinder__stats(u, &st);
	ok(st.over_share == 1 && st.full == 0 && st.files == 2 && st.rows_used > 50000 &&
	   st.rows_used < 80000,
	   "owner share: nobody's second file is left out (over_share %llu), root's got its rows "
	   "(%llu files, %llu rows)", (unsigned long long)st.over_share,
	   (unsigned long long)st.files, (unsigned long long)st.rows_used);
out:
	unwinder__free(u);
	procmaps__free(pm2);
	if (ma)
		munmap(ma, la);
	if (mb)
		munmap(mb, lb);
	unlink(a);
	unlink(b);
	rmdir(dir);
	maps__close(&mp);
}

/*
 * A process that exited while its table was built: the BPF side had no
 * table to drop at its exit, so the install must not leave one (after a
 * fork storm, 2,814 entries stayed for 4 live processes). A zombie counts
 * as exited: its mm is gone. A PID whose start is another's is refused too.
 */
static void test_exited(const struct procmaps *pm)
{
	struct unwinder_stats st;
	struct maps mp;
	struct unwinder *u;
	struct fr_uproc *v = calloc(1, sizeof(*v));
	pid_t z = fork();
	uint64_t zs;
	uint32_t key;

	if (z == 0)
		_exit(0);
	if (!v || !maps__create(&mp, 1 << 20, 256)) {
		ok(0, "maps for the exit test");
		free(v);
		return;
	}
	usleep(100 * 1000);	/* the child is a zombie: not reaped */
	zs = unwind_start_of(z);
	u = unwinder__new(&mp.m);
	ok(zs, "a zombie child, start %" PRIu64, zs);
	is_int(unwinder__attach(u, z, zs, 0, "/proc/self", pm, NULL), -ESRCH,
	       "its table is refused: it has exited");
	key = (uint32_t)z;
	ok(bpf_map_lookup_elem(mp.m.procs, &key, v) && errno == ENOENT,
	   "and the BPF map holds no entry for it");
	waitpid(z, NULL, 0);
	is_int(unwinder__attach(u, kid[0], kid_start[0] + 1000000000ULL, 0, "/proc/self", pm, NULL),
	       -ESRCH, "a live PID with another start is another incarnation: refused");
	is_int(unwinder__attach(u, kid[0], kid_start[0], 0, "/proc/self", pm, NULL), 0,
	       "a live one is installed");
	unwinder__stats(u, &st);
	ok(st.procs == 1 && st.exited == 2, "one table; %" PRIu64 " refused as exited", st.exited);
	unwinder__free(u);
	maps__close(&mp);
	free(v);
}

/*
 * The mappings an exit sends, as the BPF side makes them from its VMAs:
 * our own executable file mappings, each with its file's identity.
 */
static void exit_rec_of(const struct procmaps *pm, uint32_t pid, uint64_t start, uint32_t flags,
			struct fr_rec_maps *r)
{
	memset(r, 0, sizeof(*r));
	r->h.tgid = pid;
	r->h.start = start;
	r->flags = flags;
	for (size_t i = 0; i < pm->n && r->n < FR_XMAPS_MAX; i++) {
		const struct fr_mapping *m = &pm->m[i];
		struct stat st;

		if (!(m->prot & PROT_EXEC) || !m->path || m->path[0] != '/' || stat(m->path, &st))
			continue;
		r->m[r->n++] = (struct fr_xmap){
			.begin = m->start, .end = m->end, .pgoff = m->pgoff,
			.dev = m->dev, .ino = m->inode, .size = (uint64_t)st.st_size,
			.ctime = (uint64_t)st.st_ctim.tv_sec * 1000000000ULL +
				 (uint64_t)st.st_ctim.tv_nsec };
	}
}

/*
 * A process that ended before its copies were finished: with the
 * mappings its exit sent, the walk on from a copy of a stack equals the
 * one its live table gives; not without them, nor with a file whose
 * identity has no rows, nor for another maps generation; the last
 * FR_UNWIND_AFTER (64) such exits are kept, no more.
 */
static void test_after_exit(const struct procmaps *pm)
{
	static struct fr_rec_maps r;
	uint64_t live[FR_MAX_STACK], after[FR_MAX_STACK];
	struct capture cap = { .copy = malloc(LIVE_COPY_MAX) };
	struct unwinder_stats st;
	struct fr_ucopy c;
	struct maps mp;
	struct unwinder *u = NULL;
	uint32_t end_live = 0, end_after = 0, pid = getpid();
	int nlive, nafter, same = 0;
	pid_t z = fork();
	uint64_t zs;

	if (z == 0)
		_exit(0);
	usleep(100 * 1000);	/* a zombie: its start can be read */
	zs = unwind_start_of(z);
	waitpid(z, NULL, 0);	/* now (z, zs) is gone */
	if (!cap.copy || !zs || !maps__create(&mp, 1 << 20, 256)) {
		ok(0, "a gone incarnation and maps for the after-exit test");
		free(cap.copy);
		return;
	}
	u = unwinder__new(&mp.m);
	is_int(unwinder__attach(u, pid, self_start, 0, "/proc/self", pm, NULL), 0,
	       "after exit: our own table, with rows for our files");
	live_capture(&cap);
	c = (struct fr_ucopy){ .pc = cap.r.pc, .sp = cap.r.sp, .bp = cap.r.bp, .exact = 1,
			       .len = (uint32_t)cap.len };
	nlive = unwinder__finish(u, pid, self_start, &c, cap.copy, live, FR_MAX_STACK, &end_live);
	ok(nlive >= 8 && end_live == FR_UEND_OUTERMOST,
	   "a copy of our stack walks to the outermost frame with our table (%d frames, end %u)",
	   nlive, end_live);
	is_int(unwinder__finish(u, z, zs, &c, cap.copy, after, FR_MAX_STACK, &end_after), -ESRCH,
	       "a gone incarnation, nothing of it kept: never");
	exit_rec_of(pm, z, zs, 0, &r);
	unwinder__exit_maps(u, &r);
	is_int(unwinder__finish(u, z, zs, &c, cap.copy, after, FR_MAX_STACK, &end_after), -ESRCH,
	       "nor when its exit sent mappings without FR_XMAPS_MISSING (not kept)");
	exit_rec_of(pm, z, zs, FR_XMAPS_MISSING, &r);
	ok(r.n >= 3, "its exit's mappings: %u of our files", r.n);
	unwinder__exit_maps(u, &r);
	nafter = unwinder__finish(u, z, zs, &c, cap.copy, after, FR_MAX_STACK, &end_after);
	for (int i = 0; i < nafter && i < nlive; i++)
		same += after[i] == live[i];
	ok(nafter == nlive && same == nlive && end_after == end_live,
	   "with FR_XMAPS_MISSING, the gone process's copy walks as the live table walks it "
	   "(%d of %d frames the same, end %u)", same, nlive, end_after);
	c.gen = 1;
	is_int(unwinder__finish(u, z, zs, &c, cap.copy, after, FR_MAX_STACK, &end_after), -ESTALE,
	       "a copy of another maps generation: never");
	c.gen = 0;

	/* The file the walk stopped in has no rows under that identity. */
	exit_rec_of(pm, z, zs + 1, FR_XMAPS_MISSING, &r);
	for (uint32_t i = 0; i < r.n; i++)
		if (c.pc >= r.m[i].begin && c.pc < r.m[i].end)
			r.m[i].ctime++;
	unwinder__exit_maps(u, &r);
	is_int(unwinder__finish(u, z, zs + 1, &c, cap.copy, after, FR_MAX_STACK, &end_after),
	       -ESRCH, "a file changed since its rows (another change time), built by no one: never");

	unwinder__stats(u, &st);
	ok(st.exits_kept == 2 && st.finished_after_exit == 1,
	   "counted: %" PRIu64 " exits kept, %" PRIu64 " copy finished after its exit",
	   st.exits_kept, st.finished_after_exit);
	for (uint32_t i = 0; i < 64; i++) {
		exit_rec_of(pm, 1000 + i, 7, FR_XMAPS_MISSING, &r);
		unwinder__exit_maps(u, &r);
	}
	is_int(unwinder__finish(u, z, zs, &c, cap.copy, after, FR_MAX_STACK, &end_after), -ESRCH,
	       "64 exits later, its mappings are no longer kept");
	unwinder__free(u);
	maps__close(&mp);
	free(cap.copy);
}

/* A build held at its start (the attach's yield), until released. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool in, open;
};

static bool gate_wait(void *ctx)
{
	struct gate *g = ctx;

	pthread_mutex_lock(&g->lock);
	g->in = true;
	pthread_cond_broadcast(&g->cond);
	while (!g->open)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
	return false;
}

struct gated_attach {
	struct unwinder *u;
	const struct procmaps *pm;
	struct gate *g;
	int err;
};

static void *gated_attach(void *arg)
{
	struct gated_attach *a = arg;
	const struct unwind_yield y = { .fn = gate_wait, .ctx = a->g };

	a->err = unwinder__attach(a->u, getpid(), self_start, 0, "/proc/self", a->pm, &y);
	return NULL;
}

/*
 * While a thread builds the file a copy stopped in, the copy is told to
 * wait longer (-EINPROGRESS), for a live process and for one that has
 * exited; once built, the exited one's copy is walked on. The build is
 * held at its start by the attach's yield, so nothing here is timing.
 */
static void test_after_building(void)
{
	static struct fr_rec_maps r;
	const char *path = "/usr/bin/ls";	/* coreutils: any file not built yet */
	struct capture cap = { .copy = malloc(LIVE_COPY_MAX) };
	struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false };
	struct gated_attach ga = { 0 };
	uint64_t ips[FR_MAX_STACK], exec_off = 0, base;
	struct urows ref = { 0 };
	struct procmaps *pm = NULL;
	struct fr_ucopy c;
	struct maps mp;
	struct stat st;
	pthread_t t;
	uint32_t end = 0;
	void *img = MAP_FAILED;
	int fd = open(path, O_RDONLY | O_CLOEXEC), n1, n2, n3;
	pid_t z = fork();
	uint64_t zs;

	if (z == 0)
		_exit(0);
	usleep(100 * 1000);
	zs = unwind_start_of(z);
	waitpid(z, NULL, 0);
	if (!cap.copy || !zs || !maps__create(&mp, 1 << 20, 256)) {
		ok(0, "maps for the building test");
		goto out;
	}
	/* Our own files first, so that the file under @path is the one held. */
	pm = procmaps__read(getpid());
	ga = (struct gated_attach){ .u = unwinder__new(&mp.m), .g = &g };
	is_int(unwinder__attach(ga.u, getpid(), self_start, 0, "/proc/self", pm, NULL), 0,
	       "building: our own files' rows");
	procmaps__free(pm);
	if (fd >= 0 && !fstat(fd, &st) && !urows__build_fd(fd, &ref) && ref.nload)
		img = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	pm = procmaps__read(getpid());
	if (!ok(img != MAP_FAILED && pm, "%s mapped executable", path)) {
		unwinder__free(ga.u);
		maps__close(&mp);
		goto out;
	}
	base = (uint64_t)(uintptr_t)img;
	exec_off = ref.load[0].offset & ~0xfffULL;
	live_capture(&cap);
	c = (struct fr_ucopy){ .pc = base + ref.load[0].offset + 16, .sp = cap.r.sp, .bp = cap.r.bp,
			       .exact = 1, .len = (uint32_t)cap.len };
	is_int(unwinder__finish(ga.u, getpid(), self_start, &c, cap.copy, ips, FR_MAX_STACK, &end), 0,
	       "a copy stopped in code our table has no rows for, no attach under way: not yet, "
	       "nothing walked");
	ga.pm = pm;
	pthread_create(&t, NULL, gated_attach, &ga);
	pthread_mutex_lock(&g.lock);
	while (!g.in)
		pthread_cond_wait(&g.cond, &g.lock);
	pthread_mutex_unlock(&g.lock);

	exit_rec_of(pm, z, zs, FR_XMAPS_MISSING, &r);
	for (uint32_t i = 0; i < r.n; i++)
		if (r.m[i].begin == base) {
			/* Its code as the loader maps it: the executable PT_LOAD. */
			r.m[i].begin = base + exec_off;
			r.m[i].pgoff = exec_off;
		}
	unwinder__exit_maps(ga.u, &r);
	n1 = unwinder__finish(ga.u, z, zs, &c, cap.copy, ips, FR_MAX_STACK, &end);
	/* Our table, of before the mapping: no rows for that pc yet. */
	n2 = unwinder__finish(ga.u, getpid(), self_start, &c, cap.copy, ips, FR_MAX_STACK, &end);
	pthread_mutex_lock(&g.lock);
	g.open = true;
	pthread_cond_broadcast(&g.cond);
	pthread_mutex_unlock(&g.lock);
	pthread_join(t, NULL);
	is_int(ga.err, 0, "the held attach, let go, installs our table");
	is_int(n1, -EINPROGRESS, "while a file's build is held: an exited process's copy waits longer");
	is_int(n2, -EINPROGRESS, "and a live one's, whose table has no rows there yet");
	n3 = unwinder__finish(ga.u, z, zs, &c, cap.copy, ips, FR_MAX_STACK, &end);
	ok(n3 >= 1 && ips[0] == c.pc,
	   "built: the exited process's copy walks on from %s's code (%d frames)", path, n3);
	unwinder__free(ga.u);
	maps__close(&mp);
out:
	procmaps__free(pm);
	if (img != MAP_FAILED)
		munmap(img, (size_t)st.st_size);
	urows__fini(&ref);
	if (fd >= 0)
		close(fd);
	free(cap.copy);
}

/* Now in the units of struct fr_ufile's used stamp, as the BPF side writes it. */
static uint32_t epoch_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)(((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) >>
			  FR_UFILE_EPOCH_SHIFT);
}

/* The slot of the file mapped at @addr in (@pid)'s BPF table; FR_UFILE_NONE if none. */
static uint32_t slot_at(const struct maps *mp, uint32_t pid, uint64_t addr, uint32_t *gen)
{
	struct fr_uproc *v = calloc(1, sizeof(*v));
	uint32_t slot = FR_UFILE_NONE;

	if (v && !bpf_map_lookup_elem(mp->m.procs, &pid, v))
		for (uint32_t i = 0; i < v->n && i < FR_UMAPS_MAX; i++)
			if (addr >= v->maps[i].begin && addr < v->maps[i].end) {
				slot = v->maps[i].file;
				*gen = v->maps[i].file_gen;
			}
	free(v);
	return slot;
}

/* What the BPF side would do when walks come to @slot (@ago epochs back). */
static void stamp(const struct maps *mp, uint32_t slot, uint32_t ago)
{
	struct fr_ufile ent;

	if (!bpf_map_lookup_elem(mp->m.files, &slot, &ent)) {
		ent.used = epoch_now() - ago;
		bpf_map_update_elem(mp->m.files, &slot, &ent, BPF_ANY);
	}
}

static struct fr_ufile slot_ent(const struct maps *mp, uint32_t slot)
{
	struct fr_ufile ent = { 0 };

	bpf_map_lookup_elem(mp->m.files, &slot, &ent);
	return ent;
}

/*
 * Eviction by use, whoever maps the file: in a 40000-row pool, our libc
 * (28k rows, mapped by our live table) is hot, and a kid's libstdc++ (34k)
 * does not fit (it waits with a slot and no rows); once no walk has come
 * to libc for 20 s, its rows go for another kid's libstdc++ though libc
 * stays mapped, its slot kept with no rows. A walk that comes to libc again makes our process wanted; its
 * attach builds libc's rows back into the same slot, evicting the now
 * cold libstdc++.
 */
static void test_cold(const struct procmaps *pm)
{
	const struct fr_mapping *lc = self_mapping(pm, dlsym(RTLD_DEFAULT, "getpid"));
	void *h = dlopen("libstdc++.so.6", RTLD_NOW);
	void *sfn = h ? dlsym(h, "_ZNSt6chrono3_V212system_clock3nowEv") : NULL;
	struct procmaps *pm2 = procmaps__read(getpid());
	const struct fr_mapping *sm = sfn && pm2 ? self_mapping(pm2, sfn) : NULL;
	uint64_t addr = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "getpid");
	struct fr_mapping lib[1];
	struct procmaps one = { .n = 1, .m = lib };
	struct unwind_want want[4];
	struct unwinder_stats st;
	struct unwinder *u = NULL;
	uint32_t pid = getpid(), slot, gen = 0, gen2 = 0, sslot, sgen = 0;
	struct fr_ufile ent;
	struct maps mp;

	if (!ok(lc && sm && maps__create(&mp, 40000, 8), "cold: a 40000-row pool, libc, libstdc++")) {
		procmaps__free(pm2);
		return;
	}
	u = unwinder__new(&mp.m);
	lib[0] = *lc;
	is_int(unwinder__attach(u, pid, self_start, 0, "/proc/self", &one, NULL), 0,
	       "cold: our libc");
	slot = slot_at(&mp, pid, addr, &gen);
	lib[0] = *sm;
	is_int(unwinder__attach(u, kid[0], kid_start[0], 0, "/proc/self", &one, NULL), 0,
	       "cold: a kid's libstdc++ while libc was just walked");
	unwinder__stats(u, &st);
	ok(st.full == 1 && st.cold == 0 && st.files == 1,
	   "cold: a file walked now keeps its rows: libstdc++ is left out (full %llu, cold %llu)",
	   (unsigned long long)st.full, (unsigned long long)st.cold);
	stamp(&mp, slot, 20);
	is_int(unwinder__attach(u, kid[1], kid_start[1], 0, "/proc/self", &one, NULL), 0,
	       "cold: another kid's libstdc++ once no walk came to libc for 20 s");
	unwinder__stats(u, &st);
	ent = slot_ent(&mp, slot);
	ok(slot != FR_UFILE_NONE && ent.nrows == 0 && ent.gen == gen,
	   "cold: libc's slot %u stays, gen %u, with no rows (nrows %u)", slot, ent.gen, ent.nrows);
	ok(st.cold == 1 && st.cold_now == 1 && st.procs == 3 && st.refilled == 1,
	   "cold: libc is cold though our table maps it, and libstdc++, left out for room, "
	   "got its rows (cold %llu, now %llu, tables %llu, built again %llu)",
	   (unsigned long long)st.cold, (unsigned long long)st.cold_now,
	   (unsigned long long)st.procs, (unsigned long long)st.refilled);
	sslot = slot_at(&mp, kid[1], (uint64_t)(uintptr_t)sfn, &sgen);
	ok(sslot != FR_UFILE_NONE && slot_ent(&mp, sslot).nrows > 30000,
	   "cold: libstdc++ has its rows (%u)", slot_ent(&mp, sslot).nrows);
	ok(unwinder__current(u, pid, self_start) && !unwinder__wanted(u, want, 4),
	   "cold: no walk came to libc since: nothing is wanted, our table is current");
	stamp(&mp, slot, 0);
	ok(unwinder__wanted(u, want, 4) == 1 && want[0].pid == pid && want[0].start == self_start,
	   "cold: a walk came to libc: our process is wanted");
	ok(!unwinder__current(u, pid, self_start), "cold: and its table is not current");
	stamp(&mp, sslot, 30);
	lib[0] = *lc;
	is_int(unwinder__attach(u, pid, self_start, 0, "/proc/self", &one, NULL), 0,
	       "cold: attach ours again");
	unwinder__stats(u, &st);
	ent = slot_ent(&mp, slot);
	ok(slot_at(&mp, pid, addr, &gen2) == slot && gen2 == gen && ent.gen == gen &&
	   ent.nrows > 20000, "cold: libc's rows are back in slot %u (%u rows)", slot, ent.nrows);
	ok(st.refilled == 2 && st.cold == 2 && st.cold_now == 1 &&
	   slot_ent(&mp, sslot).nrows == 0,
	   "cold: libstdc++, unused for 30 s, gave its rows (refilled %llu, cold %llu, now %llu)",
	   (unsigned long long)st.refilled, (unsigned long long)st.cold,
	   (unsigned long long)st.cold_now);
	ok(unwinder__current(u, pid, self_start) && !unwinder__wanted(u, want, 4),
	   "cold: current again, nothing wanted");
	unwinder__free(u);
	maps__close(&mp);
	procmaps__free(pm2);
}

/* The rows of @n in the pool from @start (bpf lookups). */
static struct fr_urow *pool_rows(const struct maps *mp, uint32_t start, uint32_t n)
{
	struct fr_urow *r = calloc(n ? n : 1, sizeof(*r));

	for (uint32_t i = 0; r && i < n; i++) {
		uint32_t k = start + i;

		if (bpf_map_lookup_elem(mp->m.rows, &k, &r[i])) {
			free(r);
			return NULL;
		}
	}
	return r;
}

/* The rows of the files mapped at @addrs, attached one table each to kids. */
static uint64_t rows_of(const struct fr_mapping *m)
{
	struct fr_mapping lib[1] = { *m };
	struct procmaps one = { .n = 1, .m = lib };
	struct unwinder_stats st = { 0 };
	struct unwinder *u;
	struct maps mp;

	if (!maps__create(&mp, 1 << 20, 4))
		return 0;
	u = unwinder__new(&mp.m);
	if (u && !unwinder__attach(u, kid[2], kid_start[2], 0, "/proc/self", &one, NULL))
		unwinder__stats(u, &st);
	unwinder__free(u);
	maps__close(&mp);
	return st.rows_used;
}

/*
 * Compaction: libc at the bottom of the pool, a small library (libz)
 * above it. Once libc is idle, libstdc++ fits in the free rows but in no
 * free run: libz moves down into libc's place, its rows the same, its
 * slot pointed at them, and libstdc++ gets the run above. Without the
 * move, libstdc++ is left out.
 */
static void test_compact(const struct procmaps *pm)
{
	const struct fr_mapping *lc = self_mapping(pm, dlsym(RTLD_DEFAULT, "getpid"));
	void *hz = dlopen("libz.so.1", RTLD_NOW), *hs = dlopen("libstdc++.so.6", RTLD_NOW);
	void *zfn = hz ? dlsym(hz, "zlibVersion") : NULL;
	void *sfn = hs ? dlsym(hs, "_ZNSt6chrono3_V212system_clock3nowEv") : NULL;
	struct procmaps *pm2 = procmaps__read(getpid());
	const struct fr_mapping *zm = zfn && pm2 ? self_mapping(pm2, zfn) : NULL;
	const struct fr_mapping *sm = sfn && pm2 ? self_mapping(pm2, sfn) : NULL;
	uint64_t rc = lc ? rows_of(lc) : 0, rz = zm ? rows_of(zm) : 0, rs = sm ? rows_of(sm) : 0;
	struct fr_mapping lib[1];
	struct procmaps one = { .n = 1, .m = lib };
	struct unwinder_stats st;
	struct unwinder *u;
	struct fr_urow *before = NULL, *after = NULL;
	struct fr_ufile zent, zent2;
	uint32_t zslot, zgen = 0, pid = getpid();
	struct maps mp;

	/* Pool: libz and libstdc++ and a little; libc below libstdc++'s size. */
	if (!ok(rc && rz && rs && rc < rs && rz < rc,
		"compact: libc %llu, libz %llu, libstdc++ %llu rows", (unsigned long long)rc,
		(unsigned long long)rz, (unsigned long long)rs) ||
	    !maps__create(&mp, (uint32_t)(rz + rs + 500), 8)) {
		procmaps__free(pm2);
		return;
	}
	u = unwinder__new(&mp.m);
	lib[0] = *lc;
	is_int(unwinder__attach(u, pid, self_start, 0, "/proc/self", &one, NULL), 0,
	       "compact: libc first, at the bottom");
	lib[0] = *zm;
	is_int(unwinder__attach(u, kid[3], kid_start[3], 0, "/proc/self", &one, NULL), 0,
	       "compact: libz above it");
	zslot = slot_at(&mp, kid[3], (uint64_t)(uintptr_t)zfn, &zgen);
	zent = slot_ent(&mp, zslot);
	before = pool_rows(&mp, zent.row_start, zent.nrows);
	ok(zslot != FR_UFILE_NONE && zent.row_start == rc && before,
	   "compact: libz's rows start at %u (libc's end: %llu)", zent.row_start,
	   (unsigned long long)rc);
	bpf_map_delete_elem(mp.m.procs, &pid);
	unwinder__gc(u);
	lib[0] = *sm;
	is_int(unwinder__attach(u, kid[4], kid_start[4], 0, "/proc/self", &one, NULL), 0,
	       "compact: libstdc++ once libc is idle");
	unwinder__stats(u, &st);
	zent2 = slot_ent(&mp, zslot);
	after = pool_rows(&mp, zent2.row_start, zent2.nrows);
	ok(st.moved == 1 && st.full == 0 && st.files == 2 && st.freed == 1,
	   "compact: libz moved, libstdc++ fit (moved %llu, full %llu, files %llu)",
	   (unsigned long long)st.moved, (unsigned long long)st.full,
	   (unsigned long long)st.files);
	ok(zent2.row_start == 0 && zent2.nrows == zent.nrows && zent2.gen == zent.gen && after &&
	   before && !memcmp(before, after, zent.nrows * sizeof(*before)),
	   "compact: libz's slot points at the same %u rows, now from row %u", zent2.nrows,
	   zent2.row_start);
	free(before);
	free(after);
	unwinder__free(u);
	maps__close(&mp);
	procmaps__free(pm2);
}

int main(void)
{
	struct procmaps *pm = procmaps__read(getpid());
	struct unwinder *u;
	struct maps mp;

	if (geteuid()) {
		tap_diag("needs root for BPF maps");
		ok(0, "running as root");
		return tap_done_testing();
	}
	ok(pm != NULL, "our own maps read");
	if (!pm || !maps__create(&mp, 1 << 20, 256)) {
		ok(0, "BPF maps created: %s", strerror(errno));
		return tap_done_testing();
	}
	self_start = unwind_start_of(getpid());
	for (int i = 0; i < NKIDS; i++) {
		kid[i] = unwind_sleeper();
		kid_start[i] = unwind_start_of(kid[i]);
	}
	u = unwinder__new(&mp.m);
	ok(u != NULL, "unwinder over a 1M-row pool");
	if (u) {
		test_attach(u, &mp, pm);
		test_sharing(u, pm);
		test_stale_and_gc(u, &mp, pm);
		test_kernel_table(u, &mp, pm);
	}
	unwinder__free(u);
	maps__close(&mp);
	test_evict(pm);
	test_yield(pm);
	test_no_wait(pm);
	test_concurrent(pm);
	test_exited(pm);
	test_after_exit(pm);
	test_after_building();
	test_owner_share();
	test_cold(pm);
	test_compact(pm);
	for (int i = 0; i < NKIDS; i++)
		unwind_reap(kid[i]);
	procmaps__free(pm);
	return tap_done_testing();
}
