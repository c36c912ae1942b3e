// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_procinfo.c - the worker that reads /proc for the process table
 * (recorder/proc/procinfo.c), on real processes: a deferred read (an
 * exec's, a rate-limited re-read's) is taken in bounded time even when the
 * queue never empties, as under a fork storm on the other CPU; a request
 * for an incarnation whose exit was drained reads nothing; a parked
 * re-read is done only when code was mapped since the last read; an
 * exited process's code mappings (struct fr_rec_maps) name its frames with
 * the symbol cache's tables of those files, without /proc; a re-read that
 * finds the image as it was keeps its serial (the names kept of it).
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procinfo.h"
#include "procmeta.h"
#include "proctable.h"
#include "symbols.h"
#include "tables.h"
#include "tap.h"
#include "unwind_maps.h"
#include "util.h"

#define MS	(1000 * 1000ULL)
#define FR_USER_TOP_TEST	0x0000800000000000ULL

/* The start of @pid in ns of CLOCK_BOOTTIME, to the clock tick (/proc's). */
static uint64_t start_of(pid_t pid)
{
	char buf[1024], path[64], *p;
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f || !fgets(buf, sizeof(buf), f))
		exit(1);
	fclose(f);
	p = strrchr(buf, ')') + 2;
	for (int field = 3; field < 22; field++)
		p = strchr(p, ' ') + 1;
	sscanf(p, "%llu", &v);
	return v * (FR_NSEC_PER_SEC / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* True once the table holds facts of (@pid, @start) in @slot. */
static bool has_facts(struct proctable *pt, uint32_t slot, pid_t pid, uint64_t start)
{
	struct proc_meta *m = proctable__meta(pt, slot, (uint32_t)pid, start);
	bool got = m != NULL;

	proc_meta__put(m);
	return got;
}

/*
 * An exec's read is deferred by FR_INFO_SOON_NS; meanwhile another
 * process's reads are queued faster than the worker serves them, for 1 s.
 * The deferred read must still be taken soon after it is due (it waited
 * until the queue emptied, that is never here: a library a process loaded
 * after its first read stayed unnamed in CI while other tests forked).
 */
static void test_deferred_not_starved(void)
{
	struct proctable *pt = proctable__new(64);
	struct symcache *sc = symcache__new();
	struct procinfo *pi = pt && sc ? procinfo__new(pt, sc, 64, 0) : NULL;
	uint64_t t0, took = 0, self_st = start_of(getpid()), child_st;
	uint32_t self_slot, child_slot;
	struct procinfo_stats st;
	pid_t child;

	if (!ok(pi != NULL, "a worker over a process table"))
		goto out;
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	child_st = start_of(child);
	if (!ok(proctable__get(pt, (uint32_t)getpid(), self_st, "self", &self_slot) == 1 &&
		proctable__get(pt, (uint32_t)child, child_st, "child", &child_slot) == 1,
		"two incarnations in the table"))
		goto kill;
	procinfo__request(pi, FR_INFO_READ_SOON, self_slot, (uint32_t)getpid(), self_st, NULL, 0);
	procinfo__kick(pi);
	t0 = fr_boottime_ns();
	while (fr_boottime_ns() - t0 < 1000 * MS) {
		/* fill the queue up with the other's reads, again and again */
		while (!procinfo__request(pi, FR_INFO_READ, child_slot, (uint32_t)child, child_st,
					  NULL, 0))
			;
		procinfo__kick(pi);
		if (!took && has_facts(pt, self_slot, getpid(), self_st))
			took = fr_boottime_ns() - t0;
		usleep(500);
	}
	procinfo__stats(pi, &st);
	tap_diag("the other's reads: %llu done, %llu refused with the queue full",
		 (unsigned long long)st.reads, (unsigned long long)st.dropped);
	ok(st.dropped > 0, "the queue was kept full");
	ok(took && took < 500 * MS,
	   "an exec's read due in %llu ms was taken after %.1f ms (0: not within 1 s), with the "
	   "queue never empty", FR_INFO_SOON_NS / MS, took / 1e6);
kill:
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
out:
	procinfo__free(pi);
	/* The table's facts hold references into the cache: they go first. */
	proctable__free(pt);
	symcache__free(sc);
}

/* Wait up to 5 s until the worker has read or passed over @want requests. */
static void wait_handled(struct procinfo *pi, uint64_t want)
{
	struct procinfo_stats st;

	for (int i = 0; i < 1000; i++) {
		procinfo__stats(pi, &st);
		if (st.reads + st.unchanged + st.gone >= want)
			return;
		usleep(5 * 1000);
	}
}

/*
 * The drain saw the exit before the worker reached the request: /proc
 * has nothing left to say, and trying cost a short process's reads. A
 * live incarnation's request is read.
 */
static void test_exited_skipped(void)
{
	struct proctable *pt = proctable__new(64);
	struct symcache *sc = symcache__new();
	struct procinfo *pi = pt && sc ? procinfo__new(pt, sc, 64, 0) : NULL;
	uint64_t self_st = start_of(getpid()), child_st;
	uint32_t self_slot, child_slot;
	struct procinfo_stats st;
	pid_t child;

	if (!ok(pi != NULL, "exited: a worker over a process table"))
		goto out;
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	child_st = start_of(child);
	proctable__get(pt, (uint32_t)getpid(), self_st, "self", &self_slot);
	proctable__get(pt, (uint32_t)child, child_st, "child", &child_slot);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	proctable__mark_exit(pt, child_slot, fr_boottime_ns(), 9);
	procinfo__request(pi, FR_INFO_READ, child_slot, (uint32_t)child, child_st, NULL, 0);
	procinfo__request(pi, FR_INFO_READ, self_slot, (uint32_t)getpid(), self_st, NULL, 0);
	procinfo__kick(pi);
	procinfo__sync(pi, 5000 * MS);
	procinfo__stats(pi, &st);
	ok(st.exited == 1 && st.gone == 0,
	   "exited: the request for the exited one was skipped (%llu), not tried (%llu gone)",
	   (unsigned long long)st.exited, (unsigned long long)st.gone);
	ok(st.reads == 1 && has_facts(pt, self_slot, getpid(), self_st),
	   "exited: the live one was read");
out:
	procinfo__free(pi);
	proctable__free(pt);
	symcache__free(sc);
}

/*
 * A parked re-read (an exec's, 10 ms on) after a read that a new stack
 * made at once: moot while the maps generation is the one that read took,
 * done once code was mapped (the BPF side moved the generation).
 */
static void test_parked_unchanged(void)
{
	struct sampler_unwind_maps m;
	struct proctable *pt = proctable__new(64);
	struct symcache *sc = symcache__new();
	struct procinfo *pi = pt && sc ? procinfo__new(pt, sc, 64, 0) : NULL;
	struct unwinder *uw = NULL;
	uint64_t self_st = start_of(getpid());
	struct fr_ugen g = { .gen = 1 };
	struct procinfo_stats st;
	uint32_t slot, pid = (uint32_t)getpid();

	if (!ok(pi && unwind_maps__create(&m, 1 << 16, 64), "parked: a worker and BPF maps"))
		goto out;
	uw = unwinder__new(&m);
	if (!ok(uw != NULL, "parked: an unwinder"))
		goto maps;
	procinfo__set_unwinder(pi, uw);
	proctable__get(pt, pid, self_st, "self", &slot);
	procinfo__request(pi, FR_INFO_READ, slot, pid, self_st, NULL, 0);
	procinfo__kick(pi);
	procinfo__sync(pi, 5000 * MS);
	procinfo__request(pi, FR_INFO_READ_SOON, slot, pid, self_st, NULL, 0);
	procinfo__kick(pi);
	wait_handled(pi, 2);
	usleep(50 * 1000);	/* nothing more comes */
	procinfo__stats(pi, &st);
	ok(st.reads == 1 && st.unchanged == 1,
	   "parked: the exec's read after one already done is moot (reads %llu, unchanged %llu)",
	   (unsigned long long)st.reads, (unsigned long long)st.unchanged);
	bpf_map_update_elem(m.gen, &pid, &g, BPF_ANY);
	procinfo__request(pi, FR_INFO_READ_SOON, slot, pid, self_st, NULL, 0);
	procinfo__kick(pi);
	wait_handled(pi, 3);
	usleep(50 * 1000);
	procinfo__stats(pi, &st);
	ok(st.reads == 2 && st.unchanged == 1,
	   "parked: once code was mapped since, it reads (reads %llu, unchanged %llu)",
	   (unsigned long long)st.reads, (unsigned long long)st.unchanged);
	procinfo__free(pi);
	pi = NULL;
	unwinder__free(uw);
maps:
	unwind_maps__close(&m);
out:
	procinfo__free(pi);
	proctable__free(pt);
	symcache__free(sc);
}

/* @m: a mapping of ours as an exit sends it, its identity from stat(). */
static bool xmap_of(const struct fr_mapping *m, struct fr_xmap *x)
{
	struct stat st;

	if (!m->path || m->path[0] != '/' || stat(m->path, &st))
		return false;
	*x = (struct fr_xmap){ .begin = m->start, .end = m->end, .pgoff = m->pgoff,
			       .dev = st.st_dev, .ino = st.st_ino, .size = (uint64_t)st.st_size,
			       .mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL +
					(uint64_t)st.st_mtim.tv_nsec,
			       .ctime = (uint64_t)st.st_ctim.tv_sec * 1000000000ULL +
					(uint64_t)st.st_ctim.tv_nsec };
	return true;
}

/* The name @img gives @addr, or "". */
static const char *name_in(const struct proc_image *img, uint64_t addr)
{
	for (size_t i = 0; img && i < img->maps->n; i++) {
		const struct fr_mapping *m = &img->maps->m[i];
		uint64_t off;

		if (addr >= m->start && addr < m->end && img->syms[i]) {
			const char *n = elfsyms__lookup(img->syms[i], addr - m->start + m->pgoff, &off);

			return n ? n : "";
		}
	}
	return "";
}

/*
 * An exit's mappings: our own code mappings, sent for an incarnation the
 * worker never read (a gone PID), name its frames with the tables a read
 * of ours loaded, by file identity, with their paths; a mapping of a file
 * the cache does not hold stays unnamed; and for an incarnation whose
 * read is of the same code (its maps generation), they change nothing.
 * A whole read is marked in uread for the BPF side.
 */
static void test_exit_maps(void)
{
	static struct fr_rec_maps rec;
	struct sampler_unwind_maps m;
	struct proctable *pt = proctable__new(64);
	struct symcache *sc = symcache__new();
	struct procinfo *pi = pt && sc ? procinfo__new(pt, sc, 64, 0) : NULL;
	struct unwinder *uw = NULL;
	uint64_t self_st = start_of(getpid()), addr = (uint64_t)(uintptr_t)&getppid;
	struct proc_meta *self = NULL, *gone = NULL, *after = NULL;
	uint32_t slot, gslot, pid = (uint32_t)getpid(), named = 0;
	struct fr_uread ur = { 0 };
	struct procinfo_stats st;
	const char *libc_path = NULL;
	int err;

	if (!ok(pi && unwind_maps__create(&m, 1 << 16, 64), "exit maps: a worker and BPF maps"))
		goto out;
	uw = unwinder__new(&m);
	if (!ok(uw != NULL, "exit maps: an unwinder"))
		goto maps;
	procinfo__set_unwinder(pi, uw);
	proctable__get(pt, pid, self_st, "self", &slot);
	procinfo__request(pi, FR_INFO_READ, slot, pid, self_st, NULL, 0);
	procinfo__kick(pi);
	procinfo__sync(pi, 5000 * MS);
	self = proctable__meta(pt, slot, pid, self_st);
	if (!ok(self && self->img && self->img->maps->n > 2, "exit maps: our own image read"))
		goto free;
	err = bpf_map_lookup_elem(m.read, &pid, &ur);
	ok(!err && ur.start == self_st && ur.gen == 0,
	   "exit maps: the whole read is marked in uread (start %llu, gen %u)",
	   (unsigned long long)ur.start, ur.gen);
	for (size_t i = 0; i < self->img->maps->n && rec.n < FR_XMAPS_MAX - 1; i++)
		if (xmap_of(&self->img->maps->m[i], &rec.m[rec.n])) {
			const struct fr_mapping *mp = &self->img->maps->m[i];

			if (addr >= mp->start && addr < mp->end)
				libc_path = mp->path;
			rec.n++;
		}
	/* One more, of a file no read loaded: past our last, a made-up inode. */
	rec.m[rec.n] = rec.m[rec.n - 1];
	rec.m[rec.n].begin = FR_USER_TOP_TEST - 2 * 4096;
	rec.m[rec.n].end = FR_USER_TOP_TEST - 4096;
	rec.m[rec.n].ino ^= 0x5a5a5a;
	rec.n++;
	rec.h = (struct fr_rec_hdr){ .tgid = 0x7ffffff0, .start = 12345, .type = FR_REC_MAPS };
	proctable__get(pt, rec.h.tgid, rec.h.start, "gone", &gslot);
	ok(procinfo__exit_maps(pi, gslot, &rec) == 0, "exit maps: %u mappings queued", rec.n);
	procinfo__kick(pi);
	procinfo__sync(pi, 5000 * MS);
	gone = proctable__meta(pt, gslot, rec.h.tgid, rec.h.start);
	procinfo__stats(pi, &st);
	if (ok(gone && gone->img && gone->img->maps->n == rec.n,
	       "exit maps: the gone process has an image of its %u mappings", rec.n)) {
		for (size_t i = 0; i + 1 < gone->img->maps->n; i++)
			named += gone->img->syms[i] != NULL;
		ok(named == rec.n - 1 && !gone->img->syms[rec.n - 1] &&
		   st.exit_maps == 1 && st.exit_maps_unnamed == 1,
		   "exit maps: each cached file named, the unknown one not (%u of %u; stats %llu, "
		   "unnamed %llu)", named, rec.n - 1, (unsigned long long)st.exit_maps,
		   (unsigned long long)st.exit_maps_unnamed);
		ok(libc_path && !strcmp(name_in(gone->img, addr), name_in(self->img, addr)) &&
		   strstr(name_in(gone->img, addr), "getppid"),
		   "exit maps: getppid's address is named '%s' as in our read",
		   name_in(gone->img, addr));
		for (size_t i = 0; i < gone->img->maps->n; i++)
			if (gone->img->maps->m[i].start <= addr && addr < gone->img->maps->m[i].end)
				ok(libc_path && gone->img->maps->m[i].path &&
				   !strcmp(gone->img->maps->m[i].path, libc_path),
				   "exit maps: its mapping has the path it was read at (%s)",
				   gone->img->maps->m[i].path);
	}
	/* A fork child given our image is marked at generation 0 whatever
	 * its generation now: a vfork child has often exec'd by then. */
	{
		uint32_t cpid = 0x7fffffe0, cslot = 0;
		struct fr_ugen g3 = { .gen = 3 };
		struct fr_uread cr = { .gen = 99 };

		bpf_map_update_elem(m.gen, &cpid, &g3, BPF_ANY);
		proctable__get(pt, cpid, 999, "child", &cslot);
		procinfo__inherit(pi, cslot, cpid, 999, slot, pid, self_st);
		procinfo__kick(pi);
		procinfo__sync(pi, 5000 * MS);
		err = bpf_map_lookup_elem(m.read, &cpid, &cr);
		ok(!err && cr.start == 999 && cr.gen == 0,
		   "exit maps: a fork child with our image is marked read at generation 0 (%u), "
		   "not its current 3", cr.gen);
	}
	/* Ours were read at generation 0: the same mappings change nothing. */
	rec.h.tgid = pid;
	rec.h.start = self_st;
	ok(procinfo__exit_maps(pi, slot, &rec) == 0, "exit maps: ours sent too");
	procinfo__kick(pi);
	procinfo__sync(pi, 5000 * MS);
	after = proctable__meta(pt, slot, pid, self_st);
	procinfo__stats(pi, &st);
	ok(after == self && st.exit_maps_current == 1 && st.exit_maps == 1,
	   "exit maps: after a read of the same code they change nothing (current %llu)",
	   (unsigned long long)st.exit_maps_current);
free:
	proc_meta__put(after);
	proc_meta__put(gone);
	proc_meta__put(self);
	procinfo__free(pi);
	pi = NULL;
	unwinder__free(uw);
maps:
	unwind_maps__close(&m);
out:
	procinfo__free(pi);
	proctable__free(pt);
	symcache__free(sc);
}

/* The serial of the image the table holds for (@pid, @start) in @slot; 0: none. */
static uint64_t serial_of(struct proctable *pt, uint32_t slot, pid_t pid, uint64_t start)
{
	struct proc_meta *m = proctable__meta(pt, slot, (uint32_t)pid, start);
	uint64_t serial = m && m->img ? m->img->serial : 0;

	proc_meta__put(m);
	return serial;
}

/* Read ourselves anew and wait for it; the image's serial then. */
static uint64_t read_self(struct procinfo *pi, struct proctable *pt, uint32_t slot,
			  uint64_t start)
{
	procinfo__request(pi, FR_INFO_READ, slot, (uint32_t)getpid(), start, NULL, 0);
	procinfo__kick(pi);
	procinfo__sync(pi, 5000 * MS);
	return serial_of(pt, slot, getpid(), start);
}

/*
 * A re-read that finds the same code mappings with the same symbol tables
 * keeps the image's serial: the names kept of it stand (the daemon's own
 * stacks were named again at every dump, its image read again for each
 * check). A library loaded since makes a new one.
 */
static void test_serial_kept(void)
{
	static const char *const libs[] = { "libmvec.so.1", "libcrypt.so.1", "libz.so.1" };
	struct proctable *pt = proctable__new(64);
	struct symcache *sc = symcache__new();
	struct procinfo *pi = pt && sc ? procinfo__new(pt, sc, 64, 0) : NULL;
	uint64_t self_st = start_of(getpid()), s1, s2, s3;
	const char *lib = NULL;
	void *h = NULL;
	uint32_t slot;

	if (!ok(pi != NULL, "serial: a worker"))
		goto out;
	proctable__get(pt, (uint32_t)getpid(), self_st, "self", &slot);
	s1 = read_self(pi, pt, slot, self_st);
	s2 = read_self(pi, pt, slot, self_st);
	ok(s1 && s2 == s1, "serial: read again, the same image keeps its serial (%llu, %llu)",
	   (unsigned long long)s1, (unsigned long long)s2);
	for (size_t i = 0; i < FR_ARRAY_SIZE(libs) && !h; i++) {
		void *loaded = dlopen(libs[i], RTLD_NOW | RTLD_NOLOAD);

		if (loaded) {
			dlclose(loaded);
			continue;
		}
		h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
		lib = libs[i];
	}
	if (!ok(h != NULL, "serial: a library not loaded yet, loaded (%s)", lib ? lib : "none"))
		goto out;
	s3 = read_self(pi, pt, slot, self_st);
	ok(s3 && s3 != s2, "serial: with %s mapped since, a new serial (%llu)", lib,
	   (unsigned long long)s3);
	dlclose(h);
out:
	procinfo__free(pi);
	proctable__free(pt);
	symcache__free(sc);
}

int main(void)
{
	test_deferred_not_starved();
	test_exited_skipped();
	test_parked_unchanged();
	test_exit_maps();
	test_serial_kept();
	return tap_done_testing();
}
