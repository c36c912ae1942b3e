// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * sampler.c - load, configure and attach the BPF programs. See sampler.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flightrec.skel.h"
#include "sampler.h"
#include "util.h"

#define FR_MAX_CPUS		4096
#define FR_RING_MAX_BYTES	(256u << 20)
#define FR_RING_DEF_BYTES	(4u << 20)

/*
 * Programs loaded apart from the rest, each group in its own instance of
 * the object sharing the first one's maps (bpf_map__reuse_fd()), so that
 * the kernel verifies them on several CPUs at once: each program that
 * walks a user stack takes the verifier 0.2-0.6 s (sample_full 0.4-0.55
 * s, each stall end 0.55 s on this 2-CPU VM under 6.18: 3.5 s one after
 * the other, which "ready" once waited for most of). A group's programs
 * attach together (a stall's begin with its end). All of them load after
 * "ready", on a thread of their own, in this order (the loaders take them
 * so): first the sampler's unwinder, which is not attached but put in
 * full_sample, the program array that the entry on_sample (in s->skel,
 * with the lifecycle: quick to verify, live at "ready") tail-calls; then
 * the stalls, off-CPU blocks, the OOM victim and the RSS ledger that also
 * walks the stack where the memory grew (on_rss_full: once attached, the
 * entry's on_rss is detached; for the moment both are, the ledger's
 * compare-and-swap logs each step once).
 */
static const struct fr_group {
	const char *progs[2];
	bool full;		/* put in full_sample (contract.h), not attached */
} fr_groups[] = {
	{ { "sample_full" }, true },
	{ { "on_reclaim_end", "on_reclaim_begin" }, false },
	{ { "on_memcg_reclaim_end", "on_memcg_reclaim_begin" }, false },
	{ { "on_compact_end", "on_compact_begin" }, false },
	{ { "on_throttled" }, false },
	{ { "on_switch" }, false },
	{ { "on_oom" }, false },
	{ { "on_rss_full" }, false },
};
#define FR_NGROUPS	FR_ARRAY_SIZE(fr_groups)

struct sampler {
	struct flightrec_bpf *skel;	/* the maps, and the programs of no group */
	struct flightrec_bpf *parts[FR_NGROUPS];	/* a group's programs each */
	int part_err[FR_NGROUPS];
	unsigned part_group[FR_NGROUPS];	/* its index in fr_groups[] */
	unsigned nparts;
	unsigned order[FR_NGROUPS], norder;	/* the parts a load_parts() pass takes */
	_Atomic unsigned next_part;
	_Atomic bool stopping;		/* sampler__close(): take no more parts */
	int ncpus_load;
	pthread_t late_th;
	bool late_started;
	pthread_mutex_t go_lock;
	pthread_cond_t go_cond;
	bool go;		/* sampler__start_late() or sampler__close() */
	int late_fd;		/* eventfd: the late parts are attached, or failed */
	int late_err;
	char late_msg[160];
	uint64_t late_ns;	/* from sampler__open() to their attach */
	_Atomic uint64_t unwinder_ns;	/* from sampler__open() to sample_full in place; 0: not */
	uint64_t t_open;
	struct sampler_times times;	/* of the last load(), and the attach */
	struct bpf_program *sample_prog;
	struct bpf_link **links;	/* one per online CPU */
	int *pfds;
	int ncpus;
	int nposs;
	bool hw;
	size_t ring_bytes;
	uint32_t unwind_rows, unwind_files;
	uint32_t uprocs;	/* entries of uprocs and ugen */
	bool kbuild;		/* process tables are built in the kernel too */
	bool stalls;		/* stall_sum is written */
	struct bpf_link *iter;
};

/*
 * fr_online_cpus() - parse /sys/devices/system/cpu/online ("0-3,6") into
 * @cpus. Returns the count, or -errno.
 */
int fr_online_cpus(int *cpus, int max)
{
	char buf[4096], *p, *tok, *save = NULL;
	int n = 0, fd;
	ssize_t len;

	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return len < 0 ? -errno : -EINVAL;
	buf[len] = 0;
	for (p = buf; (tok = strtok_r(p, ",\n", &save)); p = NULL) {
		unsigned a, b;

		if (sscanf(tok, "%u-%u", &a, &b) != 2) {
			if (sscanf(tok, "%u", &a) != 1)
				return -EINVAL;
			b = a;
		}
		for (; a <= b; a++) {
			if (n == max)
				return -E2BIG;
			cpus[n++] = a;
		}
	}
	return n;
}

static size_t ring_size(uint32_t hz, int ncpus)
{
	/* Half a second of samples of ~512 bytes each, at least 4 MiB. */
	uint64_t want = (uint64_t)hz * ncpus * 512 / 2;
	size_t sz = FR_RING_DEF_BYTES;

	while (sz < want && sz < FR_RING_MAX_BYTES)
		sz <<= 1;
	return sz;
}

static int perf_open(bool hw, uint32_t hz, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = hw ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
		.config = hw ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = hz,
	};
	int fd;

	fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* A sysctl's number, or @dflt when it cannot be read. */
static uint64_t sysctl_u64(const char *path, uint64_t dflt)
{
	unsigned long long v;
	FILE *f = fopen(path, "re");
	int n;

	if (!f)
		return dflt;
	n = fscanf(f, "%llu", &v);
	fclose(f);
	return n == 1 ? v : dflt;
}

/*
 * Entries for uprocs and ugen: one per process at most (keyed by tgid,
 * dropped at its exit), and there are never more processes than
 * min(pid_max, threads-max), so a storm of live processes cannot fill
 * them and leave the next ones without a table. Both maps allocate an
 * entry only when it is written (BPF_F_NO_PREALLOC); their bucket arrays
 * (16 bytes a bucket) are what this costs up front. threads-max scales
 * with RAM (192,735 on a 23 GiB host); FR_UPROCS_CEIL bounds the rest.
 */
#define FR_UPROCS_FLOOR	32768
#define FR_UPROCS_CEIL	(1u << 20)
static uint32_t procs_bound(void)
{
	uint64_t n = FR_MIN(sysctl_u64("/proc/sys/kernel/pid_max", FR_UPROCS_CEIL),
			    sysctl_u64("/proc/sys/kernel/threads-max", FR_UPROCS_CEIL));

	return (uint32_t)FR_MIN(FR_MAX(n, (uint64_t)FR_UPROCS_FLOOR), (uint64_t)FR_UPROCS_CEIL);
}

/* The row pool, file table and process tables, or the smallest maps when unwinding is off. */
static int size_unwind(struct sampler *s, struct flightrec_bpf *k, const struct sampler_opts *o)
{
	uint32_t rows = FR_MIN(o->unwind_rows, FR_UROWS_MAX);
	uint32_t procs;
	int e;

	/* Read once: each instance of the object is sized alike. */
	if (!s->uprocs)
		s->uprocs = rows ? procs_bound() : 1;
	procs = s->uprocs;
	s->unwind_rows = rows;
	s->unwind_files = rows ? FR_MAX(o->unwind_files, 1u) : 1;
	k->rodata->unwind_on = rows > 0;
	/* Without rows there is no table to keep current: no hook on mmap locks. */
	bpf_program__set_autoload(k->progs.on_mmap_unlock, rows > 0);
	e = bpf_map__set_max_entries(k->maps.urows, rows ? rows : 1);
	if (!e)
		e = bpf_map__set_max_entries(k->maps.ufiles, s->unwind_files);
	/* One identity per file with rows (tables.c indexes each under one key). */
	if (!e)
		e = bpf_map__set_max_entries(k->maps.uinodes, s->unwind_files);
	if (!e)
		e = bpf_map__set_max_entries(k->maps.uprocs, procs);
	if (!e)
		e = bpf_map__set_max_entries(k->maps.ugen, procs);
	return e;
}

/* The stall programs ([stalls]): loaded only when asked for. */
static void set_stalls(struct sampler *s, struct flightrec_bpf *k, const struct sampler_opts *o)
{
	k->rodata->stall_on = o->stalls;
	k->rodata->min_stall = o->min_stall_ns;
	k->rodata->offcpu_on = o->offcpu;
	k->rodata->offcpu_sleep = o->offcpu && o->offcpu_sleep;
	k->rodata->min_block = o->min_block_ns;
	s->stalls = o->stalls || o->offcpu;
	bpf_program__set_autoload(k->progs.on_reclaim_begin, o->stalls);
	bpf_program__set_autoload(k->progs.on_reclaim_end, o->stalls);
	bpf_program__set_autoload(k->progs.on_memcg_reclaim_begin, o->stalls);
	bpf_program__set_autoload(k->progs.on_memcg_reclaim_end, o->stalls);
	bpf_program__set_autoload(k->progs.on_compact_begin, o->stalls);
	bpf_program__set_autoload(k->progs.on_compact_end, o->stalls);
	bpf_program__set_autoload(k->progs.on_throttled, o->stalls);
	bpf_program__set_autoload(k->progs.on_switch, o->offcpu);
}

/*
 * Open a sampling event on every online CPU: hardware cycles when the CPU
 * has a PMU, software cpu-clock otherwise (VMs without PMU pass-through).
 */
static int attach_perf(struct sampler *s, uint32_t hz, char *err, size_t errlen)
{
	int cpus[FR_MAX_CPUS];
	int n = fr_online_cpus(cpus, FR_MAX_CPUS);

	if (n < 0) {
		snprintf(err, errlen, "failed to read '/sys/devices/system/cpu/online': %s",
			 strerror(-n));
		return n;
	}
	s->links = calloc(n, sizeof(*s->links));
	s->pfds = malloc(n * sizeof(*s->pfds));
	if (!s->links || !s->pfds)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		s->pfds[i] = -1;
	s->ncpus = n;
	s->hw = true;
	for (int i = 0; i < n; i++) {
		int fd = perf_open(s->hw, hz, cpus[i]);

		if (fd < 0 && s->hw && i == 0 &&
		    (fd == -ENOENT || fd == -EOPNOTSUPP || fd == -ENODEV || fd == -EINVAL)) {
			s->hw = false;
			fd = perf_open(false, hz, cpus[i]);
		}
		if (fd < 0) {
			snprintf(err, errlen, "failed to open perf event '%s' at %u Hz on CPU %d: %s%s",
				 s->hw ? "cycles" : "cpu-clock", hz, cpus[i], strerror(-fd),
				 fd == -EINVAL ? " (above kernel.perf_event_max_sample_rate?)" : "");
			return fd;
		}
		s->pfds[i] = fd;
		s->links[i] = bpf_program__attach_perf_event(s->sample_prog, fd);
		if (!s->links[i]) {
			int e = -errno;

			snprintf(err, errlen, "failed to attach BPF program to CPU %d: %s",
				 cpus[i], strerror(-e));
			s->links[i] = NULL;
			return e;
		}
	}
	return 0;
}

/*
 * Open an instance of the BPF object and set it up from @o for @ncpus
 * online CPUs (s->kbuild: with tables built in the kernel). Returns it,
 * or NULL with -errno in *@e and the step described in @err.
 */
static struct flightrec_bpf *configure(struct sampler *s, const struct sampler_opts *o,
				       int ncpus, int *e, char *err, size_t errlen)
{
	struct flightrec_bpf *k = flightrec_bpf__open();

	if (!k) {
		*e = -errno;
		snprintf(err, errlen, "failed to open BPF object: %s", strerror(-*e));
		return NULL;
	}
	s->ring_bytes = o->ring_bytes ? o->ring_bytes : ring_size(o->frequency, ncpus);
	k->rodata->page_shift = __builtin_ctzl(sysconf(_SC_PAGESIZE));
	k->rodata->wakeup_bytes = s->ring_bytes / 4;
	*e = bpf_map__set_max_entries(k->maps.events, s->ring_bytes);
	if (*e) {
		snprintf(err, errlen, "failed to size ring buffer to %zu bytes: %s",
			 s->ring_bytes, strerror(-*e));
		goto fail;
	}
	k->rodata->rss_on = o->rss_ledger;
	k->rodata->rss_step = o->rss_step;
	k->rodata->rss_step_pct = o->rss_step_pct;
	k->rodata->rss_max_age = o->rss_max_age_ns;
	bpf_program__set_autoload(k->progs.on_rss, o->rss_ledger);
	bpf_program__set_autoload(k->progs.on_rss_full, o->rss_ledger);
	set_stalls(s, k, o);
	*e = size_unwind(s, k, o);
	if (*e) {
		snprintf(err, errlen, "failed to size unwind tables to %u rows: %s",
			 o->unwind_rows, strerror(-*e));
		goto fail;
	}
	k->rodata->ubuild_on = s->kbuild;
	if (k->rodata->contract_version != FR_CONTRACT_VERSION) {
		snprintf(err, errlen, "BPF contract version %u, daemon expects %u",
			 k->rodata->contract_version, FR_CONTRACT_VERSION);
		*e = -EPROTO;
		goto fail;
	}
	return k;
fail:
	flightrec_bpf__destroy(k);
	return NULL;
}

/* Part @i's group: is it put in full_sample, and its first program's name. */
static bool part_full(const struct sampler *s, unsigned i)
{
	return fr_groups[s->part_group[i]].full;
}

static const char *part_name(const struct sampler *s, unsigned i)
{
	return fr_groups[s->part_group[i]].progs[0];
}

/* Does group @g hold program @p? */
static bool in_group(unsigned g, const struct bpf_program *p)
{
	for (unsigned i = 0; i < 2 && fr_groups[g].progs[i]; i++)
		if (!strcmp(fr_groups[g].progs[i], bpf_program__name(p)))
			return true;
	return false;
}

/* @k's maps become @from's (before @k is loaded). Returns 0 or -errno. */
static int share_maps(struct flightrec_bpf *k, const struct flightrec_bpf *from)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, k->obj) {
		const struct bpf_map *b = bpf_object__find_map_by_name(from->obj, bpf_map__name(m));
		int e;

		if (!b)
			return -ENOENT;
		e = bpf_map__reuse_fd(m, bpf_map__fd(b));
		if (e)
			return e;
	}
	return 0;
}

/*
 * Take group @g's programs out of s->skel, where they are set to load,
 * into an instance of their own (s->parts[]), set up alike, which will
 * share s->skel's maps. Returns 0 or -errno (@err says the step).
 */
static int split_group(struct sampler *s, unsigned g, const struct sampler_opts *o, int ncpus,
		       char *err, size_t errlen)
{
	struct flightrec_bpf *k;
	struct bpf_program *p;
	bool any = false;
	int e;

	bpf_object__for_each_program(p, s->skel->obj)
		if (in_group(g, p) && bpf_program__autoload(p)) {
			bpf_program__set_autoload(p, false);
			any = true;
		}
	if (!any)
		return 0;
	k = configure(s, o, ncpus, &e, err, errlen);
	if (!k)
		return e;
	bpf_object__for_each_program(p, k->obj)
		bpf_program__set_autoload(p, in_group(g, p));
	s->part_group[s->nparts] = g;
	s->parts[s->nparts++] = k;
	return 0;
}

/*
 * put_full() - put part @i's program in full_sample: from the next sample
 * on_sample tail-calls it. Returns 0 or -errno.
 */
static int put_full(struct sampler *s, unsigned i)
{
	struct bpf_program *p = bpf_object__find_program_by_name(s->parts[i]->obj, part_name(s, i));
	int fd = p ? bpf_program__fd(p) : -ENOENT;
	__u32 zero = 0;

	if (fd < 0)
		return fd;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.full_sample), &zero, &fd, BPF_ANY))
		return -errno;
	return 0;
}

/* A loader thread: load the parts of s->order[] not yet taken, one at a time. */
static void *load_parts(void *arg)
{
	struct sampler *s = arg;
	unsigned j;

	while (!atomic_load(&s->stopping) &&
	       (j = atomic_fetch_add(&s->next_part, 1)) < s->norder) {
		unsigned i = s->order[j];
		int e = share_maps(s->parts[i], s->skel);

		if (!e)
			e = flightrec_bpf__load(s->parts[i]);
		/* The entry hands over at its next run: no need to wait for the rest. */
		if (!e && part_full(s, i)) {
			e = put_full(s, i);
			if (!e)
				atomic_store(&s->unwinder_ns, fr_boottime_ns() - s->t_open);
		}
		s->part_err[i] = e;
	}
	return NULL;
}

/*
 * Load the parts on up to s->ncpus_load threads, this one included, and
 * join them. Returns 0, or the first one's -errno (@err names its
 * program).
 */
static int load_all_parts(struct sampler *s, char *err, size_t errlen)
{
	pthread_t th[FR_NGROUPS];
	unsigned nth = 0;

	s->norder = 0;
	for (unsigned i = 0; i < s->nparts; i++)
		s->order[s->norder++] = i;
	atomic_store(&s->next_part, 0);
	while (nth + 1 < s->norder && (int)nth + 1 < s->ncpus_load &&
	       !pthread_create(&th[nth], NULL, load_parts, s))
		nth++;
	load_parts(s);
	while (nth)
		pthread_join(th[--nth], NULL);
	for (unsigned j = 0; j < s->norder; j++) {
		unsigned i = s->order[j];

		if (s->part_err[i]) {
			snprintf(err, errlen, "failed to load BPF program '%s': %s (root and a "
				 "kernel with BTF are needed)", part_name(s, i),
				 strerror(-s->part_err[i]));
			return s->part_err[i];
		}
	}
	return 0;
}

/* Destroy s->skel and its parts. */
static void unload(struct sampler *s)
{
	while (s->nparts) {
		s->nparts--;
		flightrec_bpf__destroy(s->parts[s->nparts]);
		s->parts[s->nparts] = NULL;
	}
	flightrec_bpf__destroy(s->skel);
	s->skel = NULL;
}

/*
 * Open the BPF object into s->skel and its parts, set up from @o, and
 * load them: s->skel first (it makes the maps), then the parts in
 * parallel. Returns 0, or -errno with the step described in @err.
 */
static int load(struct sampler *s, const struct sampler_opts *o, int ncpus, char *err,
		size_t errlen)
{
	uint64_t t = fr_boottime_ns();
	int e;

	s->skel = configure(s, o, ncpus, &e, err, errlen);
	if (!s->skel)
		return e;
	for (unsigned g = 0; g < FR_NGROUPS; g++) {
		e = split_group(s, g, o, ncpus, err, errlen);
		if (e)
			return e;
	}
	e = flightrec_bpf__load(s->skel);
	if (e) {
		snprintf(err, errlen, "failed to load BPF programs: %s (root and a kernel with BTF are needed)",
			 strerror(-e));
		return e;
	}
	s->times.maps_ns = fr_boottime_ns() - t;
	s->ncpus_load = ncpus;
	s->sample_prog = s->skel->progs.on_sample;
	return 0;
}

/*
 * The late parts' thread: once sampler__start_late() says go (it is
 * created before the daemon drops its capabilities, and keeps them: it
 * reads only our BPF object), load them on up to as many threads as CPUs,
 * attach them or put the unwinder in full_sample, note how it went and
 * how long it took from the open, and say so on s->late_fd.
 */
static void *late_main(void *arg)
{
	struct sampler *s = arg;
	uint64_t one = 1;
	int e;

	pthread_mutex_lock(&s->go_lock);
	while (!s->go)
		pthread_cond_wait(&s->go_cond, &s->go_lock);
	pthread_mutex_unlock(&s->go_lock);
	e = load_all_parts(s, s->late_msg, sizeof(s->late_msg));
	if (atomic_load(&s->stopping))
		e = -ECANCELED;
	/* Each part that loaded is attached, whatever another's fate. */
	for (unsigned i = 0; i < s->nparts && e != -ECANCELED; i++) {
		int a;

		if (part_full(s, i) || s->part_err[i])
			continue;
		a = flightrec_bpf__attach(s->parts[i]);
		if (!a && s->parts[i]->links.on_rss_full && s->skel->links.on_rss) {
			bpf_link__destroy(s->skel->links.on_rss);
			s->skel->links.on_rss = NULL;
		}
		if (a && !e) {
			e = a;
			snprintf(s->late_msg, sizeof(s->late_msg), "failed to attach BPF program '%s': %s",
				 part_name(s, i), strerror(-a));
		}
	}
	s->late_err = e;
	s->late_ns = fr_boottime_ns() - s->t_open;
	if (write(s->late_fd, &one, sizeof(one)) < 0)
		s->late_err = s->late_err ? s->late_err : -errno;
	return NULL;
}

/* Create the late parts' thread, waiting for sampler__start_late(). */
static int start_late(struct sampler *s)
{
	int e;

	if (!s->nparts)
		return 0;
	s->late_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->late_fd < 0)
		return -errno;
	e = pthread_create(&s->late_th, NULL, late_main, s);
	if (e)
		return -e;
	s->late_started = true;
	return 0;
}

/* Let the late parts' thread go (at most once). */
static void late_go(struct sampler *s)
{
	pthread_mutex_lock(&s->go_lock);
	s->go = true;
	pthread_cond_signal(&s->go_cond);
	pthread_mutex_unlock(&s->go_lock);
}

void sampler__start_late(struct sampler *s)
{
	if (s)
		late_go(s);
}

/*
 * sampler__open() - load the BPF object with our settings, attach the
 * lifecycle tracepoints and sample every online CPU at o->frequency Hz.
 * On failure returns NULL, sets errno and describes the step in @err.
 */
struct sampler *sampler__open(const struct sampler_opts *o, char *err, size_t errlen)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int e, ncpus, cpus[FR_MAX_CPUS];
	uint64_t t;

	if (!s)
		return NULL;
	s->late_fd = -1;
	pthread_mutex_init(&s->go_lock, NULL);
	pthread_cond_init(&s->go_cond, NULL);
	s->t_open = fr_boottime_ns();
	err[0] = 0;
	ncpus = e = fr_online_cpus(cpus, FR_MAX_CPUS);
	if (e < 0) {
		snprintf(err, errlen, "failed to read '/sys/devices/system/cpu/online': %s",
			 strerror(-e));
		goto fail;
	}
	s->nposs = libbpf_num_possible_cpus();
	s->kbuild = o->unwind_rows > 0 && !o->no_kernel_tables;
	e = load(s, o, ncpus, err, errlen);
	/*
	 * The kernel's VMA iterator (6.7+) is a weak kfunc: without it the
	 * object loads only with the code that calls it cut out (ubuild_on
	 * 0). Rather than parse the kernel's BTF at each start (70 ms here)
	 * to know beforehand, try, then do without.
	 */
	if (e && s->kbuild) {
		unload(s);
		s->kbuild = false;
		e = load(s, o, ncpus, err, errlen);
	}
	if (e)
		goto fail;
	t = fr_boottime_ns();
	e = flightrec_bpf__attach(s->skel);
	if (e) {
		snprintf(err, errlen, "failed to attach tracepoints: %s", strerror(-e));
		goto fail;
	}
	s->iter = bpf_program__attach_iter(s->skel->progs.list_tasks, NULL);
	if (!s->iter) {
		e = -errno;
		snprintf(err, errlen, "failed to attach task iterator: %s", strerror(-e));
		goto fail;
	}
	e = attach_perf(s, o->frequency, err, errlen);
	s->times.attach_ns = fr_boottime_ns() - t;
	if (!e)
		e = start_late(s);
	if (e) {
		if (!err[0])
			snprintf(err, errlen, "failed to start loading the stall programs: %s",
				 strerror(-e));
		goto fail;
	}
	return s;

fail:
	sampler__close(s);
	errno = e < 0 ? -e : EINVAL;
	return NULL;
}

void sampler__close(struct sampler *s)
{
	if (!s)
		return;
	/* A late load under way ends within one program's verification. */
	atomic_store(&s->stopping, true);
	late_go(s);
	if (s->late_started)
		pthread_join(s->late_th, NULL);
	if (s->late_fd >= 0)
		close(s->late_fd);
	for (int i = 0; s->links && i < s->ncpus; i++)
		bpf_link__destroy(s->links[i]);
	for (int i = 0; s->pfds && i < s->ncpus; i++)
		if (s->pfds[i] >= 0)
			close(s->pfds[i]);
	bpf_link__destroy(s->iter);
	unload(s);
	free(s->pfds);
	free(s->links);
	pthread_cond_destroy(&s->go_cond);
	pthread_mutex_destroy(&s->go_lock);
	free(s);
}

/* sampler__times() - where sampler__open() spent its time. */
void sampler__times(const struct sampler *s, struct sampler_times *t)
{
	*t = s->times;
}

int sampler__late_fd(const struct sampler *s)
{
	return s->late_fd;
}

uint64_t sampler__unwinder_ns(const struct sampler *s)
{
	return atomic_load(&((struct sampler *)s)->unwinder_ns);
}

int sampler__late_result(struct sampler *s, uint64_t *ns, char *err, size_t errlen)
{
	if (s->late_started) {
		pthread_join(s->late_th, NULL);
		s->late_started = false;
	}
	*ns = s->late_ns;
	if (s->late_err)
		snprintf(err, errlen, "%s", s->late_msg);
	return s->late_err;
}

/* sampler__kernel_tables() - does the BPF side build process tables (uproc_build())? */
bool sampler__kernel_tables(const struct sampler *s)
{
	return s->kbuild;
}

int sampler__ring_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.events);
}

size_t sampler__ring_bytes(const struct sampler *s)
{
	return s->ring_bytes;
}

/* sampler__source() - the perf event behind the samples. */
const char *sampler__source(const struct sampler *s)
{
	return s->hw ? "cycles" : "cpu-clock";
}

int sampler__ncpus(const struct sampler *s)
{
	return s->ncpus;
}

int sampler__unwind_maps(const struct sampler *s, struct sampler_unwind_maps *out)
{
	if (!s->unwind_rows)
		return -ENOENT;
	out->rows = bpf_map__fd(s->skel->maps.urows);
	out->files = bpf_map__fd(s->skel->maps.ufiles);
	out->procs = bpf_map__fd(s->skel->maps.uprocs);
	out->gen = bpf_map__fd(s->skel->maps.ugen);
	out->inodes = bpf_map__fd(s->skel->maps.uinodes);
	out->read = s->kbuild ? bpf_map__fd(s->skel->maps.uread) : -1;
	out->nrows = s->unwind_rows;
	out->nfiles = s->unwind_files;
	return 0;
}

int sampler__stall_sums(const struct sampler *s)
{
	return s->stalls ? bpf_map__fd(s->skel->maps.stall_sum) : -ENOENT;
}

/*
 * sampler__set_frequency() - change the sampling rate of every CPU's event
 * in place. A frequency-mode cycles event takes the new rate as its
 * "period". cpu-clock is not one: the kernel turns its frequency into a
 * fixed period in ns when the event is opened (and clears attr.freq), so
 * it takes NSEC_PER_SEC / @hz. Given the rate, as it was before this, a
 * reload to 999 Hz set a 999 ns period: 147,000 samples a second on 2
 * CPUs, a drain that could not keep up, and no control request answered.
 * Returns 0 or -errno.
 */
int sampler__set_frequency(struct sampler *s, uint32_t hz)
{
	uint64_t v = s->hw ? hz : FR_NSEC_PER_SEC / FR_MAX(hz, 1u);

	for (int i = 0; i < s->ncpus; i++)
		if (ioctl(s->pfds[i], PERF_EVENT_IOC_PERIOD, &v))
			return -errno;
	return 0;
}

/*
 * sampler__counters() - per-CPU values of one BPF counter, for up to
 * @ncpus possible CPUs. Returns the number of CPUs filled, or -errno.
 */
int sampler__counters(const struct sampler *s, enum fr_counter which,
		      uint64_t *per_cpu, int ncpus)
{
	uint32_t key = which;
	uint64_t *vals;
	int n, e;

	if (s->nposs <= 0)
		return -EINVAL;
	vals = calloc(s->nposs, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	e = bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.counters), &key, vals);
	if (e) {
		e = -errno;
		free(vals);
		return e;
	}
	n = FR_MIN(ncpus, s->nposs);
	memcpy(per_cpu, vals, n * sizeof(*vals));
	free(vals);
	return n;
}

/*
 * sampler__list_tasks() - run the task iterator: @fn sees every live task
 * of the system, stamped with the trace clock. Returns 0 or -errno.
 */
int sampler__list_tasks(struct sampler *s, fr_task_fn fn, void *ctx)
{
	struct fr_rec_task buf[64];
	size_t have = 0;
	int fd, err = 0;

	fd = bpf_iter_create(bpf_link__fd(s->iter));
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, (char *)buf + have, sizeof(buf) - have);

		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		have += n;
		for (size_t i = 0; i < have / sizeof(buf[0]) && !err; i++)
			err = fn(ctx, &buf[i]);
		if (err)
			break;
		memmove(buf, (char *)buf + have / sizeof(buf[0]) * sizeof(buf[0]),
			have % sizeof(buf[0]));
		have %= sizeof(buf[0]);
	}
	close(fd);
	return err;
}
