// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * procinfo.c - verified /proc reads, and the worker that attaches them to
 * the process table. See procinfo.h.
 */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "contract.h"
#include "procinfo.h"
#include "procstat.h"
#include "tables.h"
#include "util.h"
#include "worker.h"

#define FR_READ_TRIES		3
#define FR_REREAD_NS		(1000 * 1000 * 1000ULL)	/* maps re-read at most 1/s */
#define FR_LOADER_REREAD_NS	(3 * 1000 * 1000ULL)	/* ... while ld.so maps: 333/s */
#define FR_INFO_SLACK_NS	(1 * 1000 * 1000ULL)	/* deferred reads due this close: one wakeup */
#define FR_INFO_KICK_LEN	64	/* wake the worker without waiting for a kick */
#define FR_INFO_LATE_NS		(100 * 1000 * 1000ULL)	/* a due re-read waits no longer */
#define FR_DEFERRED_MAX		256	/* re-reads waiting for the rate limit */

/* ------------------------------------------------------------- /proc reads */

/* The kernel's PF_KTHREAD in /proc/PID/stat's flags (field 9). */
#define FR_PROC_PF_KTHREAD	0x00200000u

static char *read_exe(const char *view)
{
	char path[PATH_MAX], buf[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/exe", view);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return NULL;
	buf[n] = 0;
	return strdup(buf);
}

static char *read_cmdline(const char *view)
{
	char path[PATH_MAX], buf[FR_CMDLINE_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/cmdline", view);
	n = fr_read_small(path, buf, sizeof(buf));
	if (n <= 0)
		return NULL;
	while (n > 0 && !buf[n - 1])
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = 0;
	return strdup(buf);
}

/*
 * The cgroups (cgroup.h): m->cgroup is the v2 path ("0::/x"), else the
 * first hierarchy's line; the memory controller's path, a container id,
 * and the v2 cgroup's id (its directory's inode) beside it.
 */
static void read_cgroup(const char *view, struct proc_meta *m)
{
	char path[PATH_MAX], buf[4096], *nl;
	struct cgroup_ident c;
	struct stat st;

	snprintf(path, sizeof(path), "%s/cgroup", view);
	if (fr_read_small(path, buf, sizeof(buf)) <= 0 || cgroup__parse(buf, &c))
		return;
	if (c.v2) {
		m->cgroup = c.v2;
		c.v2 = NULL;
		if (!cgroup__v2_root(path, sizeof(path)) &&
		    strlen(path) + strlen(m->cgroup) < sizeof(path)) {
			strcat(path, m->cgroup);
			if (!stat(path, &st))
				m->cgroup_id = st.st_ino;
		}
	} else if ((nl = strchr(buf, '\n'))) {
		*nl = 0;
		m->cgroup = strdup(buf);
	}
	m->memcg = c.memcg;
	m->container = c.container;
	c.memcg = c.container = NULL;
	cgroup__ident_free(&c);
}

/* The last NSpid of /proc/PID/status: the pid in the innermost namespace. */
static uint32_t read_nspid(const char *view, uint32_t pid)
{
	char path[PATH_MAX], buf[4096], *p, *end;
	uint32_t last = 0;

	snprintf(path, sizeof(path), "%s/status", view);
	if (fr_read_small(path, buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "\nNSpid:")))
		return 0;
	for (p += 8; *p && *p != '\n'; p = end) {
		unsigned long v = strtoul(p, &end, 10);

		if (end == p)
			break;
		last = (uint32_t)v;
	}
	return last == pid ? 0 : last;
}

static int read_threads(uint32_t pid, struct proc_meta *m)
{
	char path[64], name[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	m->threads = calloc(64, sizeof(*m->threads));
	if (!m->threads) {
		closedir(d);
		return -ENOMEM;
	}
	for (uint32_t cap = 64; (de = readdir(d)) && m->nthreads < FR_THREADS_MAX;) {
		struct fr_thread *t;
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || !tid)
			continue;
		if (m->nthreads == cap) {
			struct fr_thread *n = realloc(m->threads, 2 * cap * sizeof(*n));

			if (!n)
				break;
			m->threads = n;
			cap *= 2;
		}
		t = &m->threads[m->nthreads++];
		t->tid = tid;
		snprintf(path, sizeof(path), "/proc/%u/task/%lu/comm", pid, tid);
		if (fr_read_small(path, name, sizeof(name)) < 0)
			name[0] = 0;
		name[strcspn(name, "\n")] = 0;
		fr_strlcpy(t->name, name, sizeof(t->name));
	}
	closedir(d);
	return 0;
}

/* A new image's serial: one process-wide count, never 0. */
static uint64_t image_serial(void)
{
	static _Atomic uint64_t next;

	return atomic_fetch_add(&next, 1) + 1;
}

/*
 * Read the maps through @view and load the symbols of every executable
 * file mapping, while the process (@pid, @start) lives, until
 * CLOCK_BOOTTIME @deadline_ns (0: none); the mappings left then are
 * counted in img->skipped. Returns the image, or NULL. A file that cannot
 * be opened because the process exited ends the loop: a short process is
 * often gone by now, and the read is refused anyway.
 */
static struct proc_image *read_image(uint32_t pid, uint64_t start, const char *view,
				     struct symcache *sc, uint64_t deadline_ns)
{
	struct proc_image *img = calloc(1, sizeof(*img));

	if (!img)
		return NULL;
	atomic_init(&img->refs, 1);
	img->serial = image_serial();
	img->maps = procmaps__read_image(view);
	if (!img->maps) {
		free(img);
		return NULL;
	}
	img->syms = calloc(img->maps->n ? img->maps->n : 1, sizeof(*img->syms));
	if (!img->syms) {
		procmaps__free(img->maps);
		free(img);
		return NULL;
	}
	for (size_t i = 0; i < img->maps->n; i++) {
		const struct fr_mapping *mp = &img->maps->m[i];

		if (!(mp->prot & PROT_EXEC) || !mp->path || mp->path[0] != '/')
			continue;
		if (deadline_ns && fr_boottime_ns() >= deadline_ns) {
			img->skipped++;
			continue;
		}
		img->syms[i] = symcache__get_mapping_at(sc, view, mp, deadline_ns);
		if (!img->syms[i] && errno == ENOENT && fr_procstat__gone(pid, start))
			break;
	}
	img->sc = sc;
	img->bytes = sizeof(*img) + img->maps->bytes + img->maps->n * sizeof(*img->syms);
	symcache__charge_image(sc, (int64_t)img->bytes, 1, img->maps->dropped);
	return img;
}

static bool pidfd_alive(int pidfd)
{
	return fr_pidfd_signal(pidfd, 0) == 0;
}

/*
 * Where to read a process's files: "/proc/PID", or, once the thread-group
 * leader has exited (a zombie while other threads run), a live thread's
 * "/proc/PID/task/TID", since the leader's exe, cmdline and maps read empty.
 */
static void pick_view(uint32_t pid, char state, char *view, size_t len)
{
	char path[64], buf[1024], *p;
	struct dirent *de;
	DIR *d;

	snprintf(view, len, "/proc/%u", pid);
	if (state != 'Z')
		return;
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || !tid || tid == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%lu/stat", pid, tid);
		if (fr_read_small(path, buf, sizeof(buf)) <= 0)
			continue;
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] && p[2] != 'Z' && p[2] != 'X') {
			snprintf(view, len, "/proc/%u/task/%lu", pid, tid);
			break;
		}
	}
	closedir(d);
}

/* One attempt; -ESTALE when the PID no longer names this incarnation. */
static int read_once(uint32_t pid, uint64_t start, struct symcache *sc,
		     unsigned what, uint64_t deadline_ns, struct proc_meta *m)
{
	struct fr_procstat f;
	struct stat st;
	char view[96];
	int pidfd, err;

	m->begun = fr_boottime_ns();
	pidfd = fr_pidfd_open(pid);
	if (pidfd < 0)
		return -errno;
	err = fr_procstat__read(pid, &f);
	if (err || f.start_ticks != fr_ticks_of(start)) {
		close(pidfd);
		return err ? err : -ESTALE;
	}
	pick_view(pid, f.state, view, sizeof(view));
	if (!stat(view, &st)) {
		m->has_uid = true;
		m->uid = st.st_uid;
	}
	m->exe = read_exe(view);
	m->cmdline = what & FR_META_NO_CMDLINE ? NULL : read_cmdline(view);
	read_cgroup(view, m);
	m->nspid = read_nspid(view, pid);
	read_threads(pid, m);
	if (what & FR_META_MAPS)
		m->img = read_image(pid, start, view, sc, deadline_ns);
	/* Still the same process? Then every read above was about it. */
	if (!err)
		err = pidfd_alive(pidfd) ? fr_procstat__read(pid, &f) : -ESRCH;
	close(pidfd);
	if (!err && f.start_ticks != fr_ticks_of(start))
		err = -ESTALE;
	/* A program maps at least itself: no mapping at all means its memory
	 * was gone (it was exiting, still R until exit_notify), and such facts
	 * replaced those read while it ran: its last seconds' frames were
	 * dropped as in no mapping (test_unwind_life, 1 run in 3 under ASan). */
	if (!err && m->img && m->img->maps && !m->img->maps->n && !(f.flags & FR_PROC_PF_KTHREAD))
		err = -ESRCH;
	if (err)
		return err;
	m->state = f.state;
	m->ppid = f.ppid;
	m->rss = f.rss_pages * (uint64_t)sysconf(_SC_PAGESIZE);
	m->stamp = fr_boottime_ns();
	return 0;
}

/*
 * proc_meta__read() - read incarnation (@pid, @start) from /proc, verified:
 * nothing read while the PID named another process is kept. With
 * FR_META_MAPS, also its maps and the symbols of its executable mappings
 * (through @sc) until CLOCK_BOOTTIME @deadline_ns (0: none; the mappings
 * left are counted in img->skipped). A read that raced with a PID change is
 * redone. Returns 0
 * and a new meta (one reference) in *@out; -ESRCH when the incarnation is
 * gone (its PID may be someone else's now); -errno otherwise.
 */
int proc_meta__read(uint32_t pid, uint64_t start, struct symcache *sc,
		    unsigned what, uint64_t deadline_ns, struct proc_meta **out)
{
	struct proc_meta *m = NULL;
	int err = -ESTALE;

	for (int i = 0; i < FR_READ_TRIES && err == -ESTALE; i++) {
		proc_meta__put(m);
		m = calloc(1, sizeof(*m));
		if (!m)
			return -ENOMEM;
		atomic_init(&m->refs, 1);
		err = read_once(pid, start, sc, what, deadline_ns, m);
	}
	if (err) {
		proc_meta__put(m);
		return err == -ESTALE || err == -ENOENT ? -ESRCH : err;
	}
	*out = m;
	return 0;
}

/* ---------------------------------------------------------------- worker */

struct req {
	uint32_t kind;
	uint32_t slot;
	uint32_t pid;
	uint32_t n;
	uint64_t start;
	uint64_t ips[FR_INFO_USER_IPS];	/* INHERIT: parent slot, pid, start */
	bool recheck;		/* a new stack's re-read, parked (counted if done) */
	struct fr_xmap *xm;	/* EXIT_MAPS: n mappings (malloc'd, the worker frees) */
	uint32_t xgen;		/* EXIT_MAPS: their maps generation */
};

struct procinfo {
	struct proctable *pt;
	struct symcache *sc;
	_Atomic unsigned what;	/* FR_META_* for every read (changes on reload) */
	_Atomic uint64_t timeout_ns;	/* each read's deadline: resolve_timeout */
	struct unwinder *_Atomic uw;	/* unwind tables for sampled processes, or NULL */
	struct worker w;	/* the /proc worker; its lock guards what follows */
	pthread_cond_t idle;	/* a request was handled (procinfo__sync()) */
	struct req *q;		/* two rings of cap: [0] first, [1] later */
	size_t cap;
	size_t head[2];		/* next to take */
	size_t len[2];
	struct req deferred[FR_DEFERRED_MAX];	/* re-reads due later */
	uint64_t due[FR_DEFERRED_MAX];
	size_t ndeferred;
	bool busy;
	uint64_t queued[2];	/* requests ever queued, per queue (not deferred) */
	uint64_t done[2];	/* of those, handled (each queue is FIFO) */
	struct procinfo_stats st;
};

/*
 * The largest file whose rows the /proc worker builds itself; its size
 * stands for the build's time. cc1 (30 MB) takes 0.3 s, 3 s under ASan,
 * and the reads of every process that started meanwhile waited behind
 * it (as ran unnamed); python3.11 (6.8 MB) is built here, or it waited
 * for the attacher, which serves the sampled processes first (perf's 54
 * files in test_stalls) while a sleeping python3 had none.
 */
#define FR_PROCINFO_BUILD_MAX	(8 << 20)

/*
 * Give (@pid, @start) an unwind table from @m's maps, read while maps
 * generation m->ugen was current. The worker builds the rows of files up
 * to FR_PROCINFO_BUILD_MAX and waits for no other thread's build: a
 * bigger file, or one being built, is left to the attacher, which the
 * exec and the samples ask. Returns 0 or -errno (-ESTALE: the maps
 * changed since; read them again; -EAGAIN: a file has no rows yet).
 */
static int attach_rows(struct procinfo *pi, uint32_t pid, uint64_t start,
		       const struct proc_meta *m)
{
	static const struct unwind_yield no_build = { .no_wait = true,
						      .build_max = FR_PROCINFO_BUILD_MAX };
	struct unwinder *uw = atomic_load(&pi->uw);
	char dir[32];
	int err;

	if (!uw || !m->img)
		return 0;
	snprintf(dir, sizeof(dir), "/proc/%u", pid);
	err = unwinder__attach(uw, pid, start, m->ugen, dir, m->img->maps, &no_build);
	worker__lock(&pi->w);
	if (!err)
		pi->st.unwind_attached++;
	else if (err == -ESTALE)
		pi->st.unwind_stale++;
	else if (err == -EAGAIN)
		pi->st.unwind_deferred++;
	worker__unlock(&pi->w);
	return err;
}

static bool code_changed(struct procinfo *pi, const struct req *r, const struct proc_meta *m,
			 uint64_t now);

/*
 * A read that finds the code changed since the facts it replaces were read
 * (a library swapped at one address) starts a new era first, whatever
 * asked for the read: replaced in place, the old image's facts would name
 * the samples taken before the change with the new image's symbols. A
 * new stack's check does this itself; a plain re-read that comes first
 * (1 s after the last) must too.
 */
static void era_before_read(struct procinfo *pi, const struct req *r)
{
	struct proc_meta *old;

	if (!atomic_load(&pi->uw))
		return;
	old = proctable__meta(pi->pt, r->slot, r->pid, r->start);
	if (old && old->img)
		code_changed(pi, r, old, fr_boottime_ns());
	proc_meta__put(old);
}

/* mapping__same() - whether @a and @b map the same file range the same way. */
static bool mapping__same(const struct fr_mapping *a, const struct fr_mapping *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->dev == b->dev && a->inode == b->inode && a->prot == b->prot &&
	       a->deleted == b->deleted && !a->path == !b->path &&
	       (!a->path || !strcmp(a->path, b->path));
}

/*
 * image__same() - whether image @b says of every address what @a says:
 * the same executable mappings, each with the same symbol table, none
 * left for a deadline. Names kept of @a then stand for @b.
 */
static bool image__same(const struct proc_image *a, const struct proc_image *b)
{
	if (a->maps->n != b->maps->n || a->skipped || b->skipped)
		return false;
	for (size_t i = 0; i < a->maps->n; i++)
		if (!mapping__same(&a->maps->m[i], &b->maps->m[i]) || a->syms[i] != b->syms[i])
			return false;
	return true;
}

/*
 * keep_serial() - a re-read that found the image as it was keeps its
 * serial, so that the names kept of it stand: the daemon's own image,
 * read again at each check its stacks asked for, had all its stacks
 * named again at every dump (2,000 a dump, 20-60 ms, in the bench).
 */
static void keep_serial(struct procinfo *pi, const struct req *r, struct proc_meta *m)
{
	struct proc_meta *old = proctable__meta(pi->pt, r->slot, r->pid, r->start);

	if (old && old->img && m->img && image__same(old->img, m->img))
		m->img->serial = old->img->serial;
	proc_meta__put(old);
}

static void do_read(struct procinfo *pi, const struct req *r)
{
	uint64_t timeout = atomic_load(&pi->timeout_ns);
	struct unwinder *uw = atomic_load(&pi->uw);
	uint32_t ugen;
	struct proc_meta *m;
	int err;

	era_before_read(pi, r);
	ugen = uw ? unwinder__gen(uw, r->pid, NULL) : 0;
	err = proc_meta__read(r->pid, r->start, pi->sc, FR_META_MAPS | atomic_load(&pi->what),
			      timeout ? fr_boottime_ns() + timeout : 0, &m);
	if (!err) {
		m->ugen = ugen;
		keep_serial(pi, r, m);
		if (m->img && !m->img->skipped)
			unwinder__mark_read(uw, r->pid, r->start, ugen);
		/* The start-up scan reads everyone: rows wait for a first sample
		 * (the attacher gives a sampled process its first table). */
		if (uw && r->kind != FR_INFO_READ_LATER && !unwinder__current(uw, r->pid, r->start))
			attach_rows(pi, r->pid, r->start, m);
	}

	worker__lock(&pi->w);
	if (err)
		pi->st.gone++;
	else
		pi->st.reads++;

	if (!err && m->img && m->img->skipped) {
		pi->st.deadline++;
		pi->st.deadline_maps += m->img->skipped;
	}
	worker__unlock(&pi->w);
	if (!err && proctable__set_meta(pi->pt, r->slot, r->pid, r->start, m, m->begun))
		proc_meta__put(m);
}

/*
 * Under the lock: park a read of @r until @due (one per incarnation).
 * Returns false when the list is full (the caller reads now instead).
 */
static bool defer_locked(struct procinfo *pi, const struct req *r, uint64_t due)
{
	for (size_t i = 0; i < pi->ndeferred; i++)
		if (pi->deferred[i].slot == r->slot && pi->deferred[i].start == r->start)
			return true;
	if (pi->ndeferred == FR_DEFERRED_MAX)
		return false;
	pi->deferred[pi->ndeferred] = *r;
	pi->due[pi->ndeferred++] = due;
	return true;
}

/* A maps re-read held back by the rate limit. */
static void defer(struct procinfo *pi, const struct req *r, uint64_t due)
{
	worker__lock(&pi->w);
	if (defer_locked(pi, r, due))
		pi->st.limited++;
	else
		pi->st.dropped++;
	worker__unlock(&pi->w);
}

/*
 * Did the code of @r's process change since @m was read, without an exec
 * (its unwind table went stale: a library unloaded, another mapped)? Then
 * a new era starts at the change, so that samples before it keep the old
 * image's names, and the caller reads the new one. At most once per
 * FR_REREAD_NS: a process whose code keeps changing keeps its era.
 * A change in the image's first second (ld.so mapping the libraries after
 * a read that came too early: an exec's first sample asks at once) starts
 * no era: the caller reads again in place, FR_LOADER_REREAD_NS after the
 * last read at the earliest (parked until then if it comes sooner).
 * Waiting the full second for it, dd in
 * test_stalls had ended before its libc was known (CI, a loaded machine):
 * its stacks were cut at the first frame outside the known mappings.
 */
static bool code_changed(struct procinfo *pi, const struct req *r, const struct proc_meta *m,
			 uint64_t now)
{
	uint64_t changed = 0;
	int loading;

	if (unwinder__gen(atomic_load(&pi->uw), r->pid, &changed) == m->ugen ||
	    changed <= m->begun)
		return false;
	loading = proctable__loading(pi->pt, r->slot, r->pid, r->start, changed);
	if (loading < 0)
		return false;
	/* Too soon after the last read: park one for when it is allowed,
	 * which a process of 20 ms may still live to see (as, in a compile). */
	if (now - m->stamp < FR_LOADER_REREAD_NS) {
		if (loading)
			defer(pi, r, m->stamp + FR_LOADER_REREAD_NS);
		return false;
	}
	if (!loading && (now - m->stamp < FR_REREAD_NS ||
			 proctable__new_era(pi->pt, r->slot, r->pid, r->start, changed)))
		return false;
	worker__lock(&pi->w);
	if (loading)
		pi->st.loader_rereads++;
	else
		pi->st.code_eras++;
	worker__unlock(&pi->w);
	return true;
}

/*
 * A new stack: are its user addresses inside the mappings we know? If not
 * (a library loaded since), or if the last read stopped at its deadline
 * with binaries left to load, re-read the maps now, or once the rate limit
 * allows: the same stack will not ask twice.
 */
static void do_check(struct procinfo *pi, const struct req *r)
{
	struct proc_meta *m = proctable__meta(pi->pt, r->slot, r->pid, r->start);
	uint64_t now = fr_boottime_ns(), stamp;
	struct unwinder *uw;
	bool unknown = false;

	if (!m || !m->img) {
		/* Nothing known yet (an exec's read is waiting): read now, it runs. */
		proc_meta__put(m);
		do_read(pi, r);
		return;
	}
	/* An image whose read hit its deadline is read again: each read loads more. */
	unknown = m->img->skipped > 0;
	for (unsigned i = 0; i < r->n && !unknown; i++)
		unknown = !procmaps__find(m->img->maps, r->ips[i]);
	uw = atomic_load(&pi->uw);
	if (uw && code_changed(pi, r, m, now)) {
		proc_meta__put(m);
		do_read(pi, r);
		return;
	}
	/* A sampled process walks with rows once it has a current table. */
	if (!unknown && uw && !unwinder__current(uw, r->pid, r->start))
		unknown = attach_rows(pi, r->pid, r->start, m) == -ESTALE;
	stamp = m->stamp;
	proc_meta__put(m);
	if (!unknown)
		return;
	if (now - stamp < FR_REREAD_NS) {
		defer(pi, r, stamp + FR_REREAD_NS);
		return;
	}
	worker__lock(&pi->w);
	pi->st.rereads++;
	worker__unlock(&pi->w);
	do_read(pi, r);
}

/* A fork's child: its parent's facts, or a read if the parent has none. */
static void do_inherit(struct procinfo *pi, const struct req *r)
{
	struct proc_meta *pm = proctable__meta(pi->pt, (uint32_t)r->ips[0], (uint32_t)r->ips[1],
					       r->ips[2]);
	struct proc_meta *m = pm ? proc_meta__inherit(pm, r->pid, r->start) : NULL;
	struct unwinder *uw;

	proc_meta__put(pm);
	if (!m) {
		do_read(pi, r);
		return;
	}
	worker__lock(&pi->w);
	pi->st.inherited++;
	worker__unlock(&pi->w);
	/* Its code is its parent's while its maps generation is 0 (none
	 * yet): an exec or more code moves it, and its exit sends the new
	 * code. Not the generation now: a vfork child has often exec'd by
	 * the time this runs, and marking that one kept the exit of an as
	 * that outran its exec's read from sending its mappings. */
	uw = atomic_load(&pi->uw);
	if (uw && m->img && !m->img->skipped)
		unwinder__mark_read(uw, r->pid, r->start, 0);
	if (proctable__set_meta(pi->pt, r->slot, r->pid, r->start, m, m->begun))
		proc_meta__put(m);
}

/*
 * The image an exit's mappings @r describe: each file mapping named by
 * the symbol cache's table of its identity, if the cache holds one with
 * a path (a file it loaded for another process, or this one's earlier
 * read); the others stay unnamed, as in no mapping. NULL on -ENOMEM.
 */
static struct proc_image *exit_image(struct procinfo *pi, const struct req *r,
				     uint64_t *unnamed)
{
	struct proc_image *img = calloc(1, sizeof(*img));
	struct procmaps *pm = calloc(1, sizeof(*pm));

	if (img) {
		img->syms = calloc(r->n ? r->n : 1, sizeof(*img->syms));
		img->serial = image_serial();
	}
	if (pm)
		pm->m = calloc(r->n ? r->n : 1, sizeof(*pm->m));
	if (!img || !pm || !img->syms || !pm->m) {
		if (pm)
			free(pm->m);
		free(pm);
		if (img)
			free(img->syms);
		free(img);
		return NULL;
	}
	atomic_init(&img->refs, 1);
	img->maps = pm;
	for (uint32_t i = 0; i < r->n; i++) {
		const struct fr_xmap *x = &r->xm[i];
		struct symcache_key k = { .dev = x->dev, .ino = x->ino, .size = x->size,
					  .mtime = x->mtime, .ctime = x->ctime };
		struct fr_mapping *m = &pm->m[pm->n];
		char *path;

		if (x->end <= x->begin || (pm->n && x->begin < pm->m[pm->n - 1].end))
			continue;	/* the kernel's VMAs come sorted: never */
		img->syms[pm->n] = symcache__get_key(pi->sc, &k, &path);
		*unnamed += !img->syms[pm->n];
		*m = (struct fr_mapping){ .start = x->begin, .end = x->end, .pgoff = x->pgoff,
					  .dev = x->dev, .inode = x->ino,
					  .prot = PROT_READ | PROT_EXEC, .path = path };
		pm->bytes += path ? strlen(path) + 1 : 0;
		pm->n++;
	}
	pm->bytes += sizeof(*pm) + r->n * sizeof(*pm->m);
	img->sc = pi->sc;
	img->bytes = sizeof(*img) + pm->bytes + r->n * sizeof(*img->syms);
	symcache__charge_image(pi->sc, (int64_t)img->bytes, 1, 0);
	return img;
}

/*
 * An exit's mappings: the incarnation's image from them, unless its last
 * read was whole and of the same code (maps generation).
 */
static void do_exit_maps(struct procinfo *pi, const struct req *r)
{
	struct proc_meta *old = proctable__meta(pi->pt, r->slot, r->pid, r->start);
	struct proc_image *img;
	struct proc_meta *m = NULL;
	uint64_t unnamed = 0;

	if (old && old->img && !old->img->skipped && old->ugen == r->xgen) {
		proc_meta__put(old);
		worker__lock(&pi->w);
		pi->st.exit_maps_current++;
		worker__unlock(&pi->w);
		return;
	}
	img = exit_image(pi, r, &unnamed);
	if (img) {
		m = proc_meta__with_image(old, img, fr_boottime_ns());
		if (m)
			m->ugen = r->xgen;
		else
			proc_image__put(img);
	}
	proc_meta__put(old);
	if (!m)
		return;
	worker__lock(&pi->w);
	pi->st.exit_maps++;
	pi->st.exit_maps_unnamed += unnamed;
	worker__unlock(&pi->w);
	if (proctable__set_meta(pi->pt, r->slot, r->pid, r->start, m, m->begun))
		proc_meta__put(m);
}

/*
 * Under the lock: take a deferred re-read that is due, or nearly (those
 * due within FR_INFO_SLACK_NS share one wakeup); false if none.
 */
static bool take_due(struct procinfo *pi, uint64_t now, struct req *out, uint64_t *next)
{
	*next = UINT64_MAX;
	for (size_t i = 0; i < pi->ndeferred; i++) {
		if (pi->due[i] <= now + FR_INFO_SLACK_NS) {
			*out = pi->deferred[i];
			pi->deferred[i] = pi->deferred[--pi->ndeferred];
			pi->due[i] = pi->due[pi->ndeferred];
			out->recheck = out->kind == FR_INFO_CHECK;
			out->kind = FR_INFO_READ;
			return true;
		}
		*next = FR_MIN(*next, pi->due[i]);
	}
	return false;
}

/*
 * A parked re-read (an exec's, FR_INFO_SOON_NS after it; one held by the rate
 * limit): is it moot? It is when the last read was whole and no code was
 * mapped or unmapped since it began: the BPF side bumps the maps
 * generation at each such change, and the read took it before reading
 * the maps. A new stack that came first read the exec at once; a second
 * read would find the same maps. When ld.so mapped the libraries after
 * the first read, the generation moved and the read goes on.
 */
static bool code_unchanged(struct procinfo *pi, const struct req *r)
{
	struct unwinder *uw = atomic_load(&pi->uw);
	struct proc_meta *m;
	bool same;

	if (!uw)
		return false;
	m = proctable__meta(pi->pt, r->slot, r->pid, r->start);
	same = m && m->img && !m->img->skipped && m->ugen == unwinder__gen(uw, r->pid, NULL);
	proc_meta__put(m);
	return same;
}

/*
 * Under the lock, with work waiting: the next request into @r. The queues
 * come first (exec reads, new stacks), then due re-reads; but none of these
 * waits more than FR_INFO_LATE_NS past its time, else a steady stream of new
 * processes (a fork storm on the other CPU) kept the queues busy and a
 * library loaded after a process's first read stayed unnamed until it had
 * exited. Returns the queue taken from, or -1 for a deferred one (which
 * take_due() may have put in @r already, the queues being empty).
 */
static int take_queued(struct procinfo *pi, struct req *r)
{
	uint64_t next;

	if ((pi->len[0] || pi->len[1]) &&
	    take_due(pi, fr_boottime_ns() - FR_INFO_LATE_NS, r, &next))
		return -1;
	for (int k = 0; k < 2; k++) {
		if (!pi->len[k])
			continue;
		*r = pi->q[k * pi->cap + pi->head[k]];
		pi->head[k] = (pi->head[k] + 1) % pi->cap;
		pi->len[k]--;
		return k;
	}
	return -1;
}

/* One more of the stat @c, under the worker's lock. */
static void stat_inc(struct procinfo *pi, uint64_t *c)
{
	worker__lock(&pi->w);
	(*c)++;
	worker__unlock(&pi->w);
}

/*
 * Handle @r (@parked: taken from the deferred list). A short process has
 * often exited by now, and a read would fail at each of its files (2,300
 * failed pidfd_opens for 600 processes): its exit drained, nothing is
 * read. A parked re-read after which no code changed is moot.
 */
static void serve(struct procinfo *pi, const struct req *r, bool parked)
{
	if (r->kind == FR_INFO_EXIT_MAPS) {
		do_exit_maps(pi, r);
		free(r->xm);
		return;
	}
	if (r->kind != FR_INFO_INHERIT && proctable__exited(pi->pt, r->slot, r->pid, r->start)) {
		stat_inc(pi, &pi->st.exited);
		return;
	}
	if (parked && code_unchanged(pi, r)) {
		stat_inc(pi, &pi->st.unchanged);
		return;
	}
	if (r->recheck)
		stat_inc(pi, &pi->st.rereads);
	if (r->kind == FR_INFO_CHECK)
		do_check(pi, r);
	else if (r->kind == FR_INFO_INHERIT)
		do_inherit(pi, r);
	else
		do_read(pi, r);
}

static void *worker_main(void *arg)
{
	struct procinfo *pi = arg;
	struct req r;
	uint64_t next;
	int taken;

	worker__lock(&pi->w);
	for (;;) {
		while (!worker__stopping(&pi->w) && !pi->len[0] && !pi->len[1] &&
		       !take_due(pi, fr_boottime_ns(), &r, &next))
			worker__wait(&pi->w, next);	/* or the next deferred re-read */
		if (worker__stopping(&pi->w))
			break;
		taken = take_queued(pi, &r);
		pi->busy = true;
		worker__unlock(&pi->w);
		serve(pi, &r, taken < 0);
		worker__lock(&pi->w);
		pi->busy = false;
		if (taken >= 0)
			pi->done[taken]++;
		pthread_cond_broadcast(&pi->idle);
	}
	worker__unlock(&pi->w);
	return NULL;
}

/* Mark the tables a live process's current image maps (symcache_marker_fn). */
static void mark_meta(void *ctx, const struct proc_meta *m)
{
	const uint64_t *gen = ctx;

	for (size_t i = 0; m->img && m->img->syms && i < m->img->maps->n; i++)
		symcache__mark(m->img->syms[i], *gen);
}

static void mark_live(void *ctx, uint64_t gen)
{
	struct procinfo *pi = ctx;

	proctable__each_live_meta(pi->pt, mark_meta, &gen);
}

/*
 * procinfo__new() - start the worker that reads /proc for @pt's entries,
 * loading binaries into @sc, with a queue of @queue_len requests (reserved
 * here); @what adds FR_META_* flags to every read. Returns NULL and sets errno.
 */
struct procinfo *procinfo__new(struct proctable *pt, struct symcache *sc, size_t queue_len,
			       unsigned what)
{
	struct procinfo *pi = calloc(1, sizeof(*pi));
	int err;

	if (!pi)
		return NULL;
	pi->q = calloc(2 * queue_len, sizeof(*pi->q));
	if (!pi->q || !queue_len) {
		free(pi->q);
		free(pi);
		errno = queue_len ? ENOMEM : EINVAL;
		return NULL;
	}
	pi->cap = queue_len;
	atomic_init(&pi->what, what);
	pi->pt = pt;
	proctable__set_meta_ops(pt, &proc_meta__ops);
	pi->sc = sc;
	symcache__set_marker(sc, mark_live, pi);
	err = worker__init(&pi->w);
	if (!err) {
		pthread_cond_init(&pi->idle, NULL);
		err = worker__start(&pi->w, "fr-proc", worker_main, pi);
		if (err)
			pthread_cond_destroy(&pi->idle);
	}
	if (err) {
		worker__fini(&pi->w);
		free(pi->q);
		free(pi);
		errno = -err;
		return NULL;
	}
	return pi;
}

/*
 * procinfo__free() - stop the worker and free @pi. A worker that has not
 * stopped within FR_STOP_WAIT_NS (stuck in a read no check could bound)
 * is left behind with its memory, so that shutdown never waits on it.
 */
void procinfo__free(struct procinfo *pi)
{
	if (!pi)
		return;
	if (worker__stop(&pi->w, FR_STOP_WAIT_NS))
		return;	/* left behind, with what it uses */
	symcache__set_marker(pi->sc, NULL, NULL);
	pthread_cond_destroy(&pi->idle);
	worker__fini(&pi->w);
	for (size_t i = 0; i < pi->len[0]; i++)
		free(pi->q[(pi->head[0] + i) % pi->cap].xm);
	free(pi->q);
	free(pi);
}

/*
 * procinfo__request() - queue work for incarnation (@pid, @start) in table
 * slot @slot; CHECK carries up to FR_INFO_USER_IPS user addresses. Never
 * waits for the worker. Returns 0, or -EAGAIN when the queue is full (the
 * request is dropped and counted).
 */
int procinfo__request(struct procinfo *pi, enum procinfo_kind kind, uint32_t slot,
		      uint32_t pid, uint64_t start, const uint64_t *ips, unsigned n)
{
	int k = kind == FR_INFO_READ_LATER;
	struct req *r;
	int err = 0;

	worker__lock(&pi->w);
	pi->st.requests++;
	if (kind == FR_INFO_READ_SOON) {
		struct req soon = { .kind = FR_INFO_READ, .slot = slot, .pid = pid, .start = start };

		if (defer_locked(pi, &soon, fr_boottime_ns() + FR_INFO_SOON_NS))
			goto out;	/* procinfo__kick() sets the worker's deadline */
		kind = FR_INFO_READ;
	}
	if (pi->len[k] == pi->cap) {
		pi->st.dropped++;
		err = -EAGAIN;
		goto out;
	}
	r = &pi->q[k * pi->cap + (pi->head[k] + pi->len[k]) % pi->cap];
	r->kind = kind;
	r->recheck = false;
	r->xm = NULL;
	r->slot = slot;
	r->pid = pid;
	r->start = start;
	r->n = FR_MIN(n, (unsigned)FR_INFO_USER_IPS);
	for (unsigned i = 0; i < r->n; i++)
		r->ips[i] = ips[i];
	if (kind == FR_INFO_INHERIT)
		r->n = 0;	/* ips[] holds the parent, not addresses */
	pi->len[k]++;
	pi->queued[k]++;
	/* Woken once per batch by procinfo__kick(), or when the queue fills up. */
	if (pi->len[k] == FR_INFO_KICK_LEN)
		worker__wake(&pi->w);
out:
	worker__unlock(&pi->w);
	return err;
}

/*
 * procinfo__kick() - the caller has queued a batch: wake the worker for it
 * (and for new deadlines of deferred reads). One wakeup per batch rather
 * than per request keeps the daemon's context switches down.
 */
void procinfo__kick(struct procinfo *pi)
{
	worker__lock(&pi->w);
	if (pi->len[0] || pi->len[1] || pi->ndeferred)
		worker__wake(&pi->w);
	worker__unlock(&pi->w);
}

/*
 * procinfo__set_timeout() - each read from now on stops loading binaries
 * FR_PROCINFO_DEADLINE_SCALE * @timeout_ns (resolve_timeout) after it
 * began; 0: no deadline.
 */
void procinfo__set_timeout(struct procinfo *pi, uint64_t timeout_ns)
{
	atomic_store(&pi->timeout_ns, timeout_ns * FR_PROCINFO_DEADLINE_SCALE);
}

/* procinfo__set_what() - FR_META_* flags for the reads from now on. */
void procinfo__set_unwinder(struct procinfo *pi, struct unwinder *uw)
{
	atomic_store(&pi->uw, uw);
}

void procinfo__set_what(struct procinfo *pi, unsigned what)
{
	atomic_store(&pi->what, what);
}

/*
 * procinfo__inherit() - the child (@pid, @start) in @slot was forked by the
 * parent in @parent_slot: give it the parent's facts (no /proc read).
 * Returns 0 or -EAGAIN (queue full).
 */
int procinfo__exit_maps(struct procinfo *pi, uint32_t slot, const void *rec)
{
	const struct fr_rec_maps *x = rec;
	struct fr_xmap *copy = malloc((x->n ? x->n : 1) * sizeof(*copy));
	struct req *r;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, x->m, x->n * sizeof(*copy));
	worker__lock(&pi->w);
	pi->st.requests++;
	if (pi->len[0] == pi->cap) {
		pi->st.dropped++;
		worker__unlock(&pi->w);
		free(copy);
		return -EAGAIN;
	}
	r = &pi->q[(pi->head[0] + pi->len[0]) % pi->cap];
	*r = (struct req){ .kind = FR_INFO_EXIT_MAPS, .slot = slot, .pid = x->h.tgid,
			   .start = x->h.start, .n = x->n, .xm = copy, .xgen = x->gen };
	pi->len[0]++;
	pi->queued[0]++;
	if (pi->len[0] == FR_INFO_KICK_LEN)
		worker__wake(&pi->w);
	worker__unlock(&pi->w);
	return err;
}

int procinfo__inherit(struct procinfo *pi, uint32_t slot, uint32_t pid, uint64_t start,
		      uint32_t parent_slot, uint32_t parent_pid, uint64_t parent_start)
{
	uint64_t parent[3] = { parent_slot, parent_pid, parent_start };

	return procinfo__request(pi, FR_INFO_INHERIT, slot, pid, start, parent, 3);
}

void procinfo__stats(struct procinfo *pi, struct procinfo_stats *st)
{
	worker__lock(&pi->w);
	*st = pi->st;
	worker__unlock(&pi->w);
}

/*
 * procinfo__sync() - wait up to @timeout_ns until every request queued
 * before this call has been handled, so a dump sees them; requests queued
 * meanwhile do not hold it up. Returns 0 or -ETIMEDOUT.
 */
int procinfo__sync(struct procinfo *pi, uint64_t timeout_ns)
{
	struct timespec ts;
	uint64_t end, want[2];
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	end = (uint64_t)ts.tv_sec * FR_NSEC_PER_SEC + ts.tv_nsec + timeout_ns;
	ts.tv_sec = end / FR_NSEC_PER_SEC;
	ts.tv_nsec = end % FR_NSEC_PER_SEC;
	worker__lock(&pi->w);
	want[0] = pi->queued[0];
	want[1] = pi->queued[1];
	worker__wake(&pi->w);
	while ((pi->done[0] < want[0] || pi->done[1] < want[1]) && !err)
		err = pthread_cond_timedwait(&pi->idle, &pi->w.lock, &ts);
	worker__unlock(&pi->w);
	return err ? -ETIMEDOUT : 0;
}
