// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * make_seeds.c - write the seed dumps of tests/fuzz/corpus/dump/ with the
 * real writer: dump__write() into memory for the decompressed stream
 * (NAME.raw), and through lz4out and the dumpfile writer for the file form
 * (NAME.lz4, not .frd, which .gitignore hides), the way flightrecd writes
 * them. Also a checksum-free LZ4 frame
 * (so that mutations survive decompression) and a few damaged copies.
 *
 *   make_seeds DIR      (files of the same names in DIR are replaced)
 *
 * tests/fuzz/run-fuzz.sh builds it and adds its output to the working copy
 * of the corpus; to refresh the committed seeds after a format change:
 *
 *   build-fuzz/make_seeds tests/fuzz/corpus/dump
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lz4frame.h>

#include "lz4out.h"
#include "lz4read.h"
#include "format.h"
#include "writer.h"

struct mem {
	uint8_t *p;
	size_t len, cap;
};

struct evsrc {
	uint32_t i, n;
	bool pressure;		/* add PSI readings (no process) */
};

static int mem_sink(void *ctx, const void *buf, size_t len)
{
	struct mem *m = ctx;
	uint8_t *p;

	if (m->len + len > m->cap) {
		m->cap = (m->len + len) * 2;
		p = realloc(m->p, m->cap);
		if (!p)
			return -ENOMEM;
		m->p = p;
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

static int lz4_sink(void *ctx, const void *buf, size_t len)
{
	return lz4out__write(ctx, buf, len);
}

/* Events of every type, in time order, indexes valid for model_full(). */
static int next_event(void *ctx, struct fr_dump_event *e)
{
	struct evsrc *s = ctx;
	uint32_t i = s->i;

	if (i == s->n)
		return 0;
	s->i++;
	memset(e, 0, sizeof(*e));
	e->ts = 1000000000ULL + i * 997ULL;
	e->type = 1 + i % (s->pressure ? 6 : 5);
	e->proc = i % 3;
	e->tid = 4242 + i % 2;
	e->cpu = i % 2;
	e->comm = 1 + i % 2;
	e->flags = i % 4;
	switch (e->type) {
	case 1:
		e->stack = i % 3;	/* 0: no stack */
		break;
	case 2:
		e->exit.code = 9;
		e->exit.rss_anon = 4096ULL * i;
		e->exit.rss_peak = 1 << 20;
		e->exit.utime = i;
		e->exit.min_flt = 17;
		break;
	case 3:
		e->child = (i + 1) % 3;
		break;
	case 4:
		e->filename = 3;
		break;
	case 5:
		e->oom.total_vm = 1 << 18;
		e->oom.rss_anon = 1 << 17;
		e->oom.oom_score_adj = -1000;
		e->oom.uid = 65534;
		break;
	case FR_DEV_PRESSURE:
		e->proc = 0;
		e->tid = 0;
		e->comm = 7;
		e->psi.resource = i % 3;
		e->psi.has_full = 1;
		e->psi.some_avg10 = 1234;
		e->psi.full_avg10 = 56;
		e->psi.some_total = 1000ULL * i;
		break;
	}
	return 1;
}

static char **strings(struct fr_dump *d, const char *const *s, uint32_t n)
{
	d->nstr = n;
	d->str = calloc(n, sizeof(*d->str));
	d->str_len = calloc(n, sizeof(*d->str_len));
	for (uint32_t i = 0; d->str && d->str_len && i < n; i++) {
		d->str[i] = strdup(s[i]);
		d->str_len[i] = strlen(s[i]);
	}
	return d->str;
}

static struct fr_dump_trigger *trigger(struct fr_dump *d, const char *name,
				       const char *type, const char *reason,
				       const char *detail, uint32_t victim)
{
	struct fr_dump_trigger *t;

	t = realloc(d->trig, (d->ntrig + 1) * sizeof(*t));
	if (!t)
		return NULL;
	d->trig = t;
	t = &d->trig[d->ntrig++];
	t->name = strdup(name);
	t->type = strdup(type);
	t->reason = strdup(reason);
	t->detail = strdup(detail);
	t->ts = 1005000000ULL;
	t->victim = victim;
	return t;
}

/* Every section with content: META, TRIG, WIND, STRS, PROC, THRD, BINS,
 * FRAM, LINE, STAK, then the events and LOSS. */
static void model_full(struct fr_dump *d, bool oom)
{
	static const char *const strs[] = {
		"", "spin", "worker", "/usr/bin/spin", "main", "spin_leaf",
		"schedule [kernel]", "memory", "/system.slice/spin.service",
		"/src/spin.c", "add_one",
	};
	static const uint64_t lost[2] = { 3, 0 };

	dump__init(d);
	kvlist__add_str(&d->meta, "flightrec_version", "0.1.0");
	kvlist__add_u64(&d->meta, "contract_version", 1);
	kvlist__add_str(&d->meta, "host", "seedhost");
	kvlist__add_str(&d->meta, "kernel", "6.1.0-13-amd64");
	kvlist__add_u64(&d->meta, "ncpus", 2);
	kvlist__add_u64(&d->meta, "frequency", 99);
	kvlist__add_str(&d->meta, "event_source", "perf cpu-clock");
	kvlist__add_str(&d->meta, "config",
			"[recorder]\nwindow = 30s\n[trigger oom]\ntype = oom\n");
	kvlist__add_u64(&d->meta, "clock_boottime_ns", 1000000000ULL);
	kvlist__add_u64(&d->meta, "clock_realtime_ns", 1764400000000000000ULL);
	kvlist__add_s64(&d->meta, "tz_offset", -3600);
	kvlist__add_array(&d->loss, "bpf_reserve_failed", lost, 2);
	kvlist__add_u64(&d->loss, "window_evicted_space", 7);
	if (oom) {
		trigger(d, "memory-pressure", "psi", "memory some 200ms in 2s",
			"some avg10=12.34 avg60=1.00 avg300=0.10 total=123456", 0);
		trigger(d, "oom", "oom", "the kernel killed pid 4242 (spin)", "", 2);
	} else {
		trigger(d, "signal", "signal", "SIGUSR1 from pid 1 (init)", "", 0);
	}
	d->win = (struct fr_dump_window){
		.start = 975000000ULL, .end = 1005000000ULL,
		.watermark = 1007000000ULL, .span = 30000000000ULL,
		.first_event = 1000000000ULL,
	};
	strings(d, strs, sizeof(strs) / sizeof(strs[0]));
	d->nproc = 3;
	d->proc = calloc(3, sizeof(*d->proc));
	for (uint32_t i = 0; d->proc && i < 3; i++)
		d->proc[i] = (struct fr_dump_proc){
			.pid = 4242 + i, .ppid = 1, .start = 900000000ULL + i,
			.flags = FR_DPROC_EVENTS | FR_DPROC_PROCFS |
				 (i ? FR_DPROC_EXITED : FR_DPROC_LIVE),
			.exit_ts = i ? 1004000000ULL : 0, .exit_code = i ? 9 : 0,
			.comm = 1 + i % 2, .exe = 3, .cmdline = 3, .state = 'R',
			.rss = 1 << 20, .stamp = 1006000000ULL,
			.cgroup = i == 2 ? 8 : 0,
		};
	d->nthread = 2;
	d->thread = calloc(2, sizeof(*d->thread));
	if (d->thread) {
		d->thread[0] = (struct fr_dump_thread){ .proc = 0, .tid = 4242, .name = 1 };
		d->thread[1] = (struct fr_dump_thread){ .proc = 0, .tid = 4243, .name = 2 };
	}
	d->nbin = 1;
	d->bin = calloc(1, sizeof(*d->bin));
	if (d->bin) {
		d->bin[0].path = 3;
		d->bin[0].build_id_len = 20;
		memset(d->bin[0].build_id, 0xab, 20);
	}
	d->nframe = 3;
	d->frame = calloc(3, sizeof(*d->frame));
	if (d->frame) {
		d->frame[0] = (struct fr_dump_frame){ .addr = 0xffffffff81234567ULL,
			.kind = FR_FRAME_KERNEL, .sym = 6, .sym_off = 7 };
		d->frame[1] = (struct fr_dump_frame){ .addr = 0x401234,
			.kind = FR_FRAME_USER, .sym = 5, .bin = 1, .file_off = 0x1234 };
		d->frame[2] = (struct fr_dump_frame){ .addr = 0x401100,
			.kind = FR_FRAME_USER, .sym = 4, .bin = 1, .file_off = 0x1100 };
	}
	/* Frame 1: add_one() inlined into spin_leaf(); frame 2 at one line. */
	d->nline = 3;
	d->line = calloc(3, sizeof(*d->line));
	if (d->frame && d->line) {
		d->line[0] = (struct fr_dump_line){ .func = 10, .file = 9, .line = 12, .col = 3 };
		d->line[1] = (struct fr_dump_line){ .func = 5, .file = 9, .line = 40 };
		d->line[2] = (struct fr_dump_line){ .func = 4, .file = 9, .line = 77 };
		d->frame[1].nlines = 2;
		d->frame[2].line = 2;
		d->frame[2].nlines = 1;
	}
	d->nstack = 2;
	d->stack = calloc(2, sizeof(*d->stack));
	if (d->stack) {
		d->stack[0] = (struct fr_dump_stack){ .kn = 1, .un = 2,
						      .frames = calloc(3, 4) };
		d->stack[1] = (struct fr_dump_stack){ .kn = 0, .un = 1,
						      .frames = calloc(1, 4) };
		if (d->stack[0].frames) {
			d->stack[0].frames[1] = 1;
			d->stack[0].frames[2] = 2;
		}
		if (d->stack[1].frames)
			d->stack[1].frames[0] = 2;
	}
}

/* The least a dump holds: META, an empty string 0, empty lists, END. */
static void model_min(struct fr_dump *d)
{
	static const char *const strs[] = { "" };

	dump__init(d);
	kvlist__add_str(&d->meta, "host", "h");
	strings(d, strs, 1);
}

static int spill(int dirfd, const char *name, const void *p, size_t len)
{
	int fd, err = 0;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (len && write(fd, p, len) != (ssize_t)len)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* Write @d as NAME.raw (in memory) and NAME.lz4 (lz4out + dumpfile). */
static int emit(int dirfd, const char *name, const struct fr_dump *d,
		uint32_t nev, bool pressure, struct mem *raw)
{
	struct evsrc src = { .n = nev, .pressure = pressure };
	struct dumpfile *f;
	struct lz4out *z;
	char fname[64];
	uint64_t n;
	int err;

	memset(raw, 0, sizeof(*raw));
	err = dump__write(d, next_event, &src, mem_sink, raw, &n);
	snprintf(fname, sizeof(fname), "%s.raw", name);
	if (!err)
		err = spill(dirfd, fname, raw->p, raw->len);
	if (err)
		return err;

	snprintf(fname, sizeof(fname), "%s.lz4", name);
	unlinkat(dirfd, fname, 0);
	f = dumpfile__create(dirfd, fname, 0644, 0);
	if (!f)
		return -errno;
	z = lz4out__new(f);
	if (!z) {
		err = -errno;
		dumpfile__abort(f);
		return err;
	}
	src = (struct evsrc){ .n = nev, .pressure = pressure };
	err = dump__write(d, next_event, &src, lz4_sink, z, &n);
	if (!err)
		err = lz4out__finish(z);
	lz4out__free(z);
	if (err) {
		dumpfile__abort(f);
		return err;
	}
	return dumpfile__commit(f);
}

/* A checksum-free, 64 KiB-block LZ4 frame of @raw: bytes a mutation can
 * change without the frame's own checksums rejecting it. */
static int emit_bare(int dirfd, const char *name, const struct mem *raw)
{
	LZ4F_preferences_t prefs = { .frameInfo = { .blockSizeID = LZ4F_max64KB } };
	size_t cap = LZ4F_compressFrameBound(raw->len, &prefs), n;
	void *z = malloc(cap);
	int err;

	if (!z)
		return -ENOMEM;
	n = LZ4F_compressFrame(z, cap, raw->p, raw->len, &prefs);
	err = LZ4F_isError(n) ? -EIO : spill(dirfd, name, z, n);
	free(z);
	return err;
}

/* Copy of the file @from in @dirfd, cut to @len bytes. */
static int emit_cut(int dirfd, const char *from, const char *name, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);
	ssize_t got;
	int fd, err;

	if (!p)
		return -ENOMEM;
	fd = openat(dirfd, from, O_RDONLY | O_CLOEXEC);
	got = fd < 0 ? -1 : read(fd, p, len);
	if (fd >= 0)
		close(fd);
	err = got < 0 ? -errno : spill(dirfd, name, p, (size_t)got);
	free(p);
	return err;
}

int main(int argc, char **argv)
{
	struct mem full = {}, oom = {}, min = {};
	struct fr_dump d;
	int dirfd, err;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	dirfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fprintf(stderr, "failed to open '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	model_full(&d, false);
	err = emit(dirfd, "full", &d, 40, false, &full);
	dump__free(&d);
	if (!err) {
		model_full(&d, true);
		err = emit(dirfd, "oom-psi", &d, 30, true, &oom);
		dump__free(&d);
	}
	if (!err) {
		model_min(&d);
		err = emit(dirfd, "min", &d, 0, false, &min);
		dump__free(&d);
	}
	if (!err)
		err = emit_bare(dirfd, "oom-psi-nocheck.lz4", &oom);
	/* damage: cut in the middle, cut before END, a flipped event byte */
	if (!err)
		err = spill(dirfd, "full-cut-half.raw", full.p, full.len / 2);
	if (!err)
		err = spill(dirfd, "full-cut-end.raw", full.p, full.len - 20);
	if (!err && full.len > 400) {
		full.p[full.len - 300] ^= 0x20;
		err = spill(dirfd, "full-flipped.raw", full.p, full.len);
	}
	if (!err)
		err = emit_cut(dirfd, "oom-psi.lz4", "oom-psi-cut.lz4", 200);
	if (err)
		fprintf(stderr, "failed to write the seeds into '%s': %s\n", argv[1],
			strerror(-err));
	free(full.p);
	free(oom.p);
	free(min.p);
	close(dirfd);
	return err ? 1 : 0;
}
