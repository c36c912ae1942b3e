// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_dump.c - libFuzzer target for the dump reader.
 *
 * Each input is decoded three ways:
 *   1. as a decompressed dump stream, byte for byte (dump__parse);
 *   2. the same with the CRC32C of every section recomputed, so that
 *      mutations reach the section and item decoders instead of stopping at
 *      the checksum check;
 *   3. as a dump file: lz4_decompress_mem() with a 64 MiB limit, then
 *      dump__parse() of what it gives (checksums recomputed as in 2).
 * On success every index the model holds is followed the way the reader
 * does, so that ASan sees any index check_refs() let through. A rejection
 * must come with a message. Any crash, leak, ASan or UBSan report is a bug.
 *
 * Built and run by tests/fuzz/run-fuzz.sh.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lz4read.h"
#include "evtype.h"
#include "format.h"

#define FR_FUZZ_MAX_OUT		(64u << 20)
#define FR_FUZZ_ERR_MAX		512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t fz_sink;	/* keeps fz_walk()'s reads */

static uint64_t fz_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/*
 * fz_reseal() - walk the sections of the stream at @p (@len bytes) as
 * dump__parse() does and store the right CRC32C after each whole one. Stops
 * at the first section that does not fit.
 */
static void fz_reseal(uint8_t *p, size_t len)
{
	uint64_t off, slen;
	uint32_t crc;

	if (len < FR_DUMP_HDR_SIZE || memcmp(p, FR_DUMP_MAGIC, 8))
		return;
	off = fz_le(p + 12, 4);
	if (off < FR_DUMP_HDR_SIZE)
		return;
	while (off <= len && len - off >= FR_SECTION_HDR_SIZE + 4) {
		slen = fz_le(p + off + 8, 8);
		if (slen > len - off - FR_SECTION_HDR_SIZE - 4)
			return;
		crc = fr_crc32c(0, p + off, FR_SECTION_HDR_SIZE + slen);
		for (int i = 0; i < 4; i++)
			p[off + FR_SECTION_HDR_SIZE + slen + i] = (uint8_t)(crc >> (8 * i));
		off += FR_SECTION_HDR_SIZE + slen + 4;
	}
}

/* fz_fail() - a broken contract: say which, then crash for libFuzzer. */
static void __attribute__((noreturn)) fz_fail(const char *why)
{
	fprintf(stderr, "fuzz_dump: %s\n", why);
	abort();
}

/* fz_idx() - @i, after checking that it indexes a table of @n entries. */
static uint32_t fz_idx(uint64_t i, uint32_t n, const char *what)
{
	if (i >= n)
		fz_fail(what);
	return (uint32_t)i;
}

/*
 * fz_walk() - check what dump__parse() promises of an accepted model (every
 * index inside its table, string 0 empty, events in time order) and read
 * every field through its indexes, as the reader's reports do. Returns a
 * value that depends on all of it, so that nothing is optimized away.
 */
static uint64_t fz_walk(const struct fr_dump *d)
{
	uint64_t h = d->major ^ d->minor ^ d->nsections;

	if (d->major != FR_DUMP_MAJOR || !d->nstr || d->str_len[0] || d->str[0][0])
		fz_fail("accepted a dump without its version or an empty string 0");
	for (uint32_t i = 0; i < d->meta.n; i++)
		h += strlen(d->meta.kv[i].key) + d->meta.kv[i].type;
	for (uint32_t i = 0; i < d->loss.n; i++)
		for (uint32_t k = 0; d->loss.kv[i].type == FR_KV_UARRAY &&
		     k < d->loss.kv[i].n; k++)
			h += d->loss.kv[i].arr[k];
	h += strlen(dump__meta_str(d, "host")) + dump__meta_u64(d, "ncpus");
	for (uint32_t i = 0; i < d->ntrig; i++) {
		const struct fr_dump_trigger *t = &d->trig[i];

		h += strlen(t->name) + strlen(t->type) + strlen(t->reason) +
		     strlen(t->detail);
		if (t->victim)
			h += d->proc[fz_idx(t->victim - 1, d->nproc,
					    "trigger victim out of range")].pid;
	}
	for (uint32_t i = 0; i < d->nstr; i++)
		h += d->str_len[i] + (uint8_t)d->str[i][d->str_len[i]] +
		     (d->str_len[i] ? (uint8_t)d->str[i][d->str_len[i] - 1] : 0);
	for (uint32_t i = 0; i < d->nproc; i++) {
		const struct fr_dump_proc *p = &d->proc[i];

		h += d->str_len[fz_idx(p->comm, d->nstr, "process comm out of range")] +
		     d->str_len[fz_idx(p->exe, d->nstr, "process exe out of range")] +
		     d->str_len[fz_idx(p->cmdline, d->nstr, "process cmdline out of range")] +
		     d->str_len[fz_idx(p->cgroup, d->nstr, "process cgroup out of range")] +
		     strlen(dump__str(d, p->comm));
	}
	for (uint32_t i = 0; i < d->nthread; i++)
		h += d->proc[fz_idx(d->thread[i].proc, d->nproc,
				    "thread process out of range")].pid +
		     d->str_len[fz_idx(d->thread[i].name, d->nstr,
				       "thread name out of range")];
	for (uint32_t i = 0; i < d->nbin; i++) {
		const struct fr_dump_bin *b = &d->bin[i];

		fz_idx(b->build_id_len, sizeof(b->build_id) + 1, "build-id too long");
		h += d->str_len[fz_idx(b->path, d->nstr, "binary path out of range")] +
		     b->build_id[b->build_id_len ? b->build_id_len - 1 : 0];
	}
	for (uint32_t i = 0; i < d->nframe; i++) {
		const struct fr_dump_frame *f = &d->frame[i];

		h += d->str_len[fz_idx(f->sym, d->nstr, "frame symbol out of range")];
		if (f->bin)
			h += d->str_len[d->bin[fz_idx(f->bin - 1, d->nbin,
						      "frame binary out of range")].path];
		if (f->nlines > FR_DUMP_MAX_LINES || (uint64_t)f->line + f->nlines > d->nline)
			fz_fail("frame source lines out of range");
		for (uint32_t k = 0; k < f->nlines; k++) {
			const struct fr_dump_line *l = &d->line[f->line + k];

			h += d->str_len[fz_idx(l->func, d->nstr, "source line function out of range")] +
			     d->str_len[fz_idx(l->file, d->nstr, "source line file out of range")] +
			     l->line + l->col;
		}
	}
	for (uint32_t i = 0; i < d->nstack; i++)
		for (uint64_t k = 0; k < (uint64_t)d->stack[i].kn + d->stack[i].un; k++)
			h += d->frame[fz_idx(d->stack[i].frames[k], d->nframe,
					     "stack frame out of range")].addr;
	for (uint32_t i = 0; i < d->nev; i++) {
		const struct fr_dump_event *e = &d->ev[i];

		if (i && e->ts < d->ev[i - 1].ts)
			fz_fail("accepted events out of time order");
		h += e->ts + strlen(dump__event_type_name(e->type)) +
		     d->str_len[fz_idx(e->comm, d->nstr, "event comm out of range")];
		if (e->type != FR_DEV_PRESSURE)
			h += d->proc[fz_idx(e->proc, d->nproc,
					    "event process out of range")].pid;
		if (e->type == 1 && e->stack)
			h += d->stack[fz_idx(e->stack - 1, d->nstack,
					     "event stack out of range")].kn;
		if (e->type == 3)
			h += d->proc[fz_idx(e->child, d->nproc,
					    "fork child out of range")].pid;
		if (e->type == 4)
			h += d->str_len[fz_idx(e->filename, d->nstr,
					       "exec filename out of range")];
	}
	return h;
}

/* fz_parse() - decode @len bytes at @buf (dump__parse() takes it over),
 * check the contract, free everything. */
static void fz_parse(void *buf, size_t len)
{
	char err[FR_FUZZ_ERR_MAX];
	struct fr_dump d;
	int ret;

	ret = dump__parse(&d, buf, len, err, sizeof(err));
	if (!ret)
		fz_sink += fz_walk(&d);
	else if (ret != -ENOMEM && !err[0])
		fz_fail("dump__parse() rejected the input without a message");
	dump__free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[FR_FUZZ_ERR_MAX];
	size_t out_len = 0;
	void *out = NULL;
	uint8_t *copy;
	int ret;

	/* 1: as is; 2: with every section's checksum made right */
	for (int reseal = 0; reseal < 2; reseal++) {
		copy = malloc(size ? size : 1);
		if (!copy)
			return 0;
		memcpy(copy, data, size);
		if (reseal)
			fz_reseal(copy, size);
		fz_parse(copy, size);
	}

	/* 3: as a dump file */
	ret = lz4_decompress_mem(data, size, FR_FUZZ_MAX_OUT, &out, &out_len,
				 err, sizeof(err));
	if (ret) {
		if (ret != -ENOMEM && !err[0])
			fz_fail("lz4_decompress_mem() rejected the input without a message");
		return 0;
	}
	if (!out || out_len > FR_FUZZ_MAX_OUT)
		fz_fail("lz4_decompress_mem() broke its contract on success");
	fz_reseal(out, out_len);
	fz_parse(out, out_len);
	return 0;
}
