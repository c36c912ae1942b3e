// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * symbolize.c - the encoder's naming of what the frozen window references
 * (encoder_int.h): each stack in its own process's address space (kallsyms,
 * ELF symbols of each mapping, perf maps), then the lines pass, most
 * sampled frames first; and the OOM victims' incarnations.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "contract.h"
#include "drain.h"
#include "encstate.h"
#include "symbolize.h"
#include "evtype.h"
#include "kallsyms.h"
#include "perfmap.h"
#include "procinfo.h"
#include "untrusted.h"
#include "util.h"

/* A user frame dropped: in no mapping (frame index never written). */
#define FR_FRAME_BOGUS	UINT32_MAX

/*
 * The address space of process @slot at @ts: the facts of the image it ran
 * then (an exec starts a new era). Cached per (slot, era) for this dump.
 */
static struct space *space_of(struct encoder *e, uint32_t slot, uint64_t ts)
{
	struct proc_meta *m = NULL, *now = NULL;
	struct fr_proc p;
	struct space *sp;
	uint64_t key;
	uint32_t i;

	if (proctable__read(e->in.t->procs, slot, &p))
		return NULL;
	m = proctable__meta_at(e->in.t->procs, slot, p.pid, p.start, ts);
	now = proctable__meta(e->in.t->procs, slot, p.pid, p.start);
	key = (uint64_t)slot << 1 | (m == now);
	proc_meta__put(now);
	if (id_get(&e->space_of_slot, key, &i)) {
		proc_meta__put(m);
		return &e->spaces[i];
	}
	if (fr_grow32((void **)&e->spaces, &e->space_cap, e->nspaces + 1, sizeof(*e->spaces))) {
		proc_meta__put(m);
		return NULL;
	}
	i = e->nspaces++;
	sp = &e->spaces[i];
	memset(sp, 0, sizeof(*sp));
	sp->pid = p.pid;
	sp->start = p.start;
	sp->exited = p.flags & FR_PROC_EXITED;
	sp->current = key & 1;
	sp->meta = m;
	if (id_put(&e->space_of_slot, key, i))
		return NULL;
	return &e->spaces[i];
}

/*
 * past_deadline() - whether this dump's time for per-process reads is up;
 * the caller skips its read and it is counted.
 */
static bool past_deadline(struct encoder *e)
{
	if (!e->deadline || fr_boottime_ns() < e->deadline)
		return false;
	e->st.resolve_skipped++;
	return true;
}

/*
 * The mapping of @addr in @sp, with its symbols: from the facts read while
 * the process lived; if the address is outside them and the process still
 * lives, from one fresh verified read (a library loaded since).
 */
static const struct fr_mapping *mapping_of(struct encoder *e, struct space *sp,
					   uint64_t addr, const struct elfsyms **syms)
{
	struct proc_meta *ms[2] = { sp->meta, NULL };

	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < 2; k++) {
			const struct fr_mapping *m;

			if (!ms[k] || !ms[k]->img)
				continue;
			m = procmaps__find(ms[k]->img->maps, addr);
			if (m) {
				*syms = ms[k]->img->syms[m - ms[k]->img->maps->m];
				return m;
			}
		}
		if (sp->reread || sp->exited || !sp->pid || !sp->current)
			break;
		sp->reread = true;
		if (past_deadline(e))
			break;
		if (proc_meta__read(sp->pid, sp->start, e->in.sym->cache,
				    FR_META_MAPS | e->in.meta_what, e->deadline, &sp->fresh))
			sp->fresh = NULL;
		else
			e->st.resolve_skipped += sp->fresh->img ? sp->fresh->img->skipped : 0;
		ms[1] = sp->fresh;
		e->st.maps_reread++;
	}
	*syms = NULL;
	return NULL;
}

/*
 * JIT code: /tmp/perf-PID.map, if written during this incarnation's life.
 * It is a file the process's owner controls: opened as untrusted (no
 * symlink, a regular file of at most FR_PERFMAP_MAX_BYTES), owned by the
 * process's uid or, world-readable with one link, by root, as perf
 * requires; an owner not known takes root's only.
 */
static const struct perfmap *perfmap_of(struct encoder *e, struct space *sp)
{
	const struct proc_meta *m = sp->meta ? sp->meta : sp->fresh;
	struct fr_untrusted_rule rule = {
		.max_bytes = FR_PERFMAP_MAX_BYTES, .check_owner = true,
		.uid = m && m->has_uid ? m->uid : 0,
	};
	char path[64];
	struct stat st;
	int fd;

	if (sp->perfmap_tried || !sp->pid)
		return sp->perfmap;
	sp->perfmap_tried = true;
	if (past_deadline(e))
		return NULL;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", sp->pid);
	fd = untrusted__open(AT_FDCWD, path, &rule, &st);
	if (fd < 0) {
		if (untrusted__refusal(fd) >= 0)
			e->st.perfmaps_refused++;
		return NULL;
	}
	/* File times come from a coarse clock: allow it FR_MTIME_SLACK_NS. */
	if ((uint64_t)st.st_mtim.tv_sec * FR_NSEC_PER_SEC + (uint64_t)st.st_mtim.tv_nsec +
	    FR_MTIME_SLACK_NS >= e->boot_to_real + sp->start) {
		sp->perfmap = perfmap__load_fd(fd, e->deadline);
		if (!sp->perfmap && errno == ETIMEDOUT)
			e->st.resolve_skipped++;
	}	/* else left by an older process with this PID */
	close(fd);
	return sp->perfmap;
}

static int bin_of(struct encoder *e, const char *path, const struct fr_buildid *bid,
		  uint32_t *idx)
{
	struct fr_dump *d = e->d;
	struct bin_key key = { .path = path };
	const uint32_t *found;
	struct fr_dump_bin *b;
	uint32_t pidx;
	int err;

	if (bid)
		key.bid = *bid;
	found = fr_hashmap__find(&e->bin_of, &key);
	if (found) {
		*idx = *found;
		return 0;
	}
	err = encoder__add_cstr(e, path, &pidx);
	if (!err)
		err = fr_grow32((void **)&d->bin, &e->bin_cap, d->nbin + 1, sizeof(*d->bin));
	if (err)
		return err;
	*idx = d->nbin++;
	b = &d->bin[*idx];
	memset(b, 0, sizeof(*b));
	b->path = pidx;
	if (bid && bid->len) {
		b->build_id_len = FR_MIN(bid->len, (uint8_t)sizeof(b->build_id));
		memcpy(b->build_id, bid->id, b->build_id_len);
	}
	key.path = d->str[pidx];
	return fr_hashmap__insert(&e->bin_of, &key, idx);
}

/*
 * Find or add a frame equal to @f, to be given a source position by the
 * lines pass (@lines: 1 + whether looked up for a leaf; 0: none). Sets
 * *@created when it is new. Returns 0 or -ENOMEM.
 */
static int frame_of(struct encoder *e, const struct fr_dump_frame *f, uint32_t lines,
		    uint32_t *idx, bool *created)
{
	struct fr_dump *d = e->d;
	/*
	 * The symbol is part of the key: JIT code at one address in two
	 * processes can be two different functions. So is the kind of
	 * lookup when there are lines: a return address is looked up at
	 * addr - 1, which may be another line than addr.
	 */
	uint64_t key[6] = { f->kind | (uint64_t)lines << 8, f->addr, f->bin,
			    f->file_off, f->sym, f->sym_off };
	const uint32_t *found = fr_hashmap__find(&e->frame_of, key);
	int err;

	*created = false;
	if (found) {
		*idx = *found;
		return 0;
	}
	err = fr_grow32((void **)&d->frame, &e->frame_cap, d->nframe + 1, sizeof(*d->frame));
	if (err)
		return err;
	*idx = d->nframe++;
	d->frame[*idx] = *f;
	*created = true;
	return fr_hashmap__insert(&e->frame_of, key, idx);
}

/* frame_set_lines() - give frame @idx the @n source levels at @lv. Returns 0 or -ENOMEM. */
static int frame_set_lines(struct encoder *e, uint32_t idx, const struct fr_dump_line *lv,
			   uint32_t n)
{
	struct fr_dump *d = e->d;
	int err = fr_grow32((void **)&d->line, &e->line_cap, d->nline + n, sizeof(*d->line));

	if (err)
		return err;
	memcpy(&d->line[d->nline], lv, n * sizeof(*lv));
	d->frame[idx].line = d->nline;
	d->frame[idx].nlines = n;
	d->nline += n;
	return 0;
}

/*
 * Return addresses point after the call; look up addr - 1 for every frame
 * but the interrupted one so that the caller's line, not the next, is named.
 */
static uint64_t lookup_addr(uint64_t addr, uint32_t pos)
{
	return pos && addr ? addr - 1 : addr;
}

static int kernel_frame(struct encoder *e, uint64_t addr, uint32_t pos, uint32_t *idx)
{
	const struct kallsyms *k = e->ksyms;
	struct fr_dump_frame f = { .addr = addr, .kind = FR_FRAME_KERNEL };
	const char *name = NULL, *mod = NULL;
	uint64_t off = 0;
	bool created;
	int err;

	e->st.kernel_frames++;
	if (k)
		name = kallsyms__lookup(k, lookup_addr(addr, pos), &off, &mod);
	if (name) {
		char buf[512];

		e->st.kernel_resolved++;
		if (mod && *mod)
			snprintf(buf, sizeof(buf), "%s [%s]", name, mod);
		else
			snprintf(buf, sizeof(buf), "%s", name);
		err = encoder__add_cstr(e, buf, &f.sym);
		if (err)
			return err;
		f.sym_off = off + (lookup_addr(addr, pos) != addr);
	}
	return frame_of(e, &f, 0, idx, &created);
}

/* Does @sp know its mappings (so that an address outside them is no code)? */
static bool space_has_maps(const struct space *sp)
{
	return (sp->meta && sp->meta->img) || (sp->fresh && sp->fresh->img);
}

/*
 * frame_lines() - the source position of file offset @off in binary @es,
 * mapped at @m by the process of @sp, as dump levels into @lv (strings
 * interned); the outermost level is named by the frame's symbol @sym when
 * it has one, as FRAM names the frame. Returns 0 or -ENOMEM.
 */
static int frame_lines(struct encoder *e, const struct space *sp, const struct fr_mapping *m,
		       const struct elfsyms *es, uint64_t off, uint32_t sym,
		       struct fr_dump_line *lv, uint32_t *n)
{
	struct fr_srcline sl[FR_SRCLINE_MAX_LEVELS];
	char procdir[32];
	int r, err = 0;

	*n = 0;
	snprintf(procdir, sizeof(procdir), "/proc/%u", sp->pid);
	r = elfsyms__lines(es, off, sp->pid && !sp->exited ? procdir : NULL, m, sl,
			   FR_SRCLINE_MAX_LEVELS);
	if (r < 0 && r != -ENOENT)
		e->st.lines_failed++;
	for (int i = 0; i < r && !err; i++) {
		lv[i].line = sl[i].line;
		lv[i].col = sl[i].col;
		err = encoder__add_cstr(e, sl[i].file, &lv[i].file);
		if (!err && i == r - 1 && sym)
			lv[i].func = sym;
		else if (!err)
			err = encoder__add_cstr(e, sl[i].func, &lv[i].func);
	}
	if (!err && r > 0) {
		*n = (uint32_t)r;
		e->st.lines_resolved++;
	}
	return err;
}

/* lines_todo__add() - remember that frame @frame of space @space at lookup address @addr wants lines. */
static int lines_todo__add(struct encoder *e, uint32_t frame, uint32_t space, uint64_t addr)
{
	int err = fr_grow32((void **)&e->todo, &e->todo_cap, e->ntodo + 1, sizeof(*e->todo));

	if (err)
		return err;
	e->todo[e->ntodo] = (struct line_todo){
		.frame = frame, .space = space, .addr = addr, .seq = e->ntodo,
	};
	e->ntodo++;
	return 0;
}

/*
 * refill() - the symbols of @es (mapped at @m by the process of @sp), which
 * the cache evicted: loaded again from the mapping while the process lives
 * and the dump's time for reads lasts (the same file: the cache's key is
 * its identity). Whether @es has symbols now.
 */
static bool refill(struct encoder *e, const struct space *sp, const struct fr_mapping *m,
		   const struct elfsyms *es)
{
	char procdir[32];

	if (sp->exited || !sp->pid || !sp->current || past_deadline(e))
		return false;
	snprintf(procdir, sizeof(procdir), "/proc/%u", sp->pid);
	symcache__put(symcache__get_mapping_at(e->in.sym->cache, procdir, m, e->deadline));
	return !elfsyms__evicted(es);
}

static int user_frame(struct encoder *e, struct space *sp, uint64_t addr,
		      uint32_t pos, uint32_t *idx)
{
	struct fr_dump_frame f = { .addr = addr, .kind = FR_FRAME_USER };
	const struct fr_mapping *m = NULL;
	const struct elfsyms *es = NULL;
	const char *name = NULL, *mangled = NULL;
	uint64_t a = lookup_addr(addr, pos), off = 0;
	uint32_t si = sp ? (uint32_t)(sp - e->spaces) : FR_NO_SPACE;
	bool lines, created;
	int err;

	e->st.user_frames++;
	if (sp)
		m = mapping_of(e, sp, a, &es);
	if (pos && !m && (!addr || (sp && space_has_maps(sp) && !perfmap_of(e, sp)))) {
		e->st.user_bogus++;
		*idx = FR_FRAME_BOGUS;	/* a return address where no code is */
		return 0;
	}
	if (m && m->path && m->path[0] == '/') {
		uint32_t b;

		f.file_off = addr - m->start + m->pgoff;
		err = bin_of(e, m->path, es ? elfsyms__buildid(es) : NULL, &b);
		if (err)
			return err;
		f.bin = b + 1;
		if (es && elfsyms__evicted(es) && !refill(e, sp, m, es)) {
			e->st.user_evicted++;
			es = NULL;
		}
		if (es)
			name = elfsyms__lookup_full(es, a - m->start + m->pgoff, &off, &mangled);
		else
			e->st.user_no_symbols++;
	} else if (sp && perfmap_of(e, sp)) {
		name = perfmap__lookup(sp->perfmap, a, &off);
	}
	if (name) {
		e->st.user_resolved++;
		err = encoder__add_cstr(e, name, &f.sym);
		if (!err && mangled)
			err = encoder__add_cstr(e, mangled, &f.system_name);
		if (err)
			return err;
		f.sym_off = off + (a != addr);
	}
	/* Lines come in a pass of their own, after every name (lines_pass()). */
	lines = m && es && elfsyms__has_lines(es);
	err = frame_of(e, &f, lines ? 1 + !pos : 0, idx, &created);
	if (!err && lines && created)
		err = lines_todo__add(e, *idx, si, a);
	return err;
}

/* Heavier first, then the order the frames were made. */
static int todo_cmp(const void *a, const void *b)
{
	const struct line_todo *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * lines_by_weight() - order the lines pass by what the frames' lines are
 * worth: each CPU sample adds FR_LINE_WEIGHT / (depth + 1) to the frames
 * of its user stack, depth 0 being the leaf. The hot leaves come first
 * (where the time went), then the calls nearest to them; the outermost
 * frames (_start, start_thread), in every stack but worth little, and the
 * frames of stalls and OOMs only, come last. When the deadline cuts the
 * pass (a large DWARF file, a slow machine), these are the lines left
 * out. Without memory for the weights the order stays. No error.
 */
#define FR_LINE_WEIGHT	840	/* divisible by 1..8: the nearest depths weigh exactly */
static void lines_by_weight(struct encoder *e)
{
	const struct fr_dump *d = e->d;
	uint64_t *w;

	if (!e->ntodo)
		return;	/* and e->todo may be NULL, which qsort() must not see */
	w = calloc(d->nframe ? d->nframe : 1, sizeof(*w));
	if (!w)
		return;
	for (uint32_t i = 0; i < d->nstack; i++) {
		const struct fr_dump_stack *st = &d->stack[i];

		for (uint32_t j = 0; j < st->un; j++)
			if (st->frames[st->kn + j] < d->nframe)
				w[st->frames[st->kn + j]] +=
					(uint64_t)e->stack_samples[i] * FR_LINE_WEIGHT / (j + 1);
	}
	for (uint32_t i = 0; i < e->ntodo; i++)
		e->todo[i].weight = w[e->todo[i].frame];
	free(w);
	qsort(e->todo, e->ntodo, sizeof(*e->todo), todo_cmp);
}

/*
 * lines_pass() - the source positions of the frames that want them, once
 * every stack is named: reading a large DWARF file cannot take the time
 * of perf maps and binaries. It has its own resolve_timeout, spent on the
 * most sampled frames first; what is left at its end is counted
 * (dump_lines_skipped). Each binary's DWARF is read at most once in it
 * (elfsyms__lines_hold()). Returns 0 or -ENOMEM.
 */
static int lines_pass(struct encoder *e)
{
	uint64_t deadline = e->in.resolve_timeout_ns ?
			    fr_boottime_ns() + e->in.resolve_timeout_ns : 0;
	struct fr_dump_line lv[FR_SRCLINE_MAX_LEVELS];
	uint32_t i, n;
	int err = 0;

	lines_by_weight(e);
	elfsyms__lines_hold(true);
	for (i = 0; i < e->ntodo && !err; i++) {
		const struct line_todo *t = &e->todo[i];
		struct space *sp = &e->spaces[t->space];	/* a frame with lines has one */
		const struct elfsyms *es;
		const struct fr_mapping *m;

		if (deadline && fr_boottime_ns() >= deadline)
			break;
		m = mapping_of(e, sp, t->addr, &es);
		if (!m || !es)
			continue;
		err = frame_lines(e, sp, m, es, t->addr - m->start + m->pgoff,
				  e->d->frame[t->frame].sym, lv, &n);
		if (!err && n)
			err = frame_set_lines(e, t->frame, lv, n);
	}
	e->st.lines_skipped += e->ntodo - i;
	elfsyms__lines_hold(false);
	return err;
}

/*
 * An address resolves the same way every time within one space: look it
 * up once per dump. True and *@idx set when @k was symbolized already.
 */
static bool cached_frame(struct encoder *e, const struct addr_frame *k, uint32_t *idx)
{
	const uint32_t *frame = fr_hashmap__find(&e->addr_of, k);

	if (!frame)
		return false;
	*idx = *frame;
	e->st.cached_frames++;
	return true;
}

static int cache_frame(struct encoder *e, const struct addr_frame *k, uint32_t frame)
{
	return fr_hashmap__insert(&e->addr_of, k, &frame);
}

/*
 * How many of the @kn leading kernel frames at @ips are flightrec's own
 * BPF program and the tracepoint glue that called it (a stall's or an OOM
 * invoker's stack is taken inside the tracepoint): they say nothing of
 * the workload. Only leaf frames are dropped, and only by these names.
 */
static uint32_t instrumentation_frames(struct encoder *e, const uint64_t *ips, uint32_t kn)
{
	static const char *const glue[] = { "bpf_prog_", "bpf_trace_run", "__traceiter_",
					    "__bpf_trace_" };
	uint32_t i;

	if (!e->ksyms)
		return 0;
	for (i = 0; i < kn; i++) {
		const char *mod = NULL, *name;
		uint64_t off;
		bool ours = false;

		name = kallsyms__lookup(e->ksyms, lookup_addr(ips[i], i), &off, &mod);
		for (size_t g = 0; name && g < FR_ARRAY_SIZE(glue) && !ours; g++)
			ours = !strncmp(name, glue[g], strlen(glue[g]));
		if (!ours)
			break;
	}
	return i < kn ? i : 0;	/* all of it glue: keep it, something is off */
}

static int symbolize_stack(struct encoder *e, uint32_t sidx)
{
	struct fr_dump_stack *s = &e->d->stack[sidx];
	uint32_t id = e->stack_ids[sidx];
	uint32_t tag = intern__tag(e->in.t->stacks, id);
	uint64_t ips[2 * FR_MAX_STACK];
	size_t len = intern__copy(e->in.t->stacks, id, ips, sizeof(ips));
	uint32_t n = FR_MIN(len, sizeof(ips)) / sizeof(ips[0]);
	struct space *sp = NULL;
	uint32_t skip;
	int err;

	s->kn = FR_MIN(FR_STACK_KN(tag), n);
	/* Dropped frames keep their place: the first kept one is no leaf. */
	skip = instrumentation_frames(e, ips, s->kn);
	memmove(ips, ips + skip, (n - skip) * sizeof(ips[0]));
	n -= skip;
	s->kn -= skip;
	s->un = n - s->kn;
	s->frames = calloc(n ? n : 1, sizeof(*s->frames));
	if (!s->frames)
		return -ENOMEM;
	if (s->un && FR_STACK_SLOT(tag))
		sp = space_of(e, FR_STACK_SLOT(tag), e->stack_ts[sidx]);
	for (uint32_t i = 0; i < n; i++) {
		bool user = i >= s->kn;
		uint32_t pos = user ? i - s->kn : i + skip;
		struct addr_frame key = {
			.addr = ips[i], .leaf = !pos,
			.space = user && sp ? (uint32_t)(sp - e->spaces) : FR_NO_SPACE,
		};

		if (!user)
			key.leaf |= 2;	/* a kernel address is not a user one */
		if (!cached_frame(e, &key, &s->frames[i])) {
			if (!user)
				err = kernel_frame(e, ips[i], pos, &s->frames[i]);
			else
				err = user_frame(e, sp, ips[i], pos, &s->frames[i]);
			if (!err)
				err = cache_frame(e, &key, s->frames[i]);
			if (err)
				return err;
		}
		if (s->frames[i] == FR_FRAME_BOGUS) {
			/* What a broken chain gives past a bogus frame is noise too. */
			s->un = pos;
			break;
		}
		/* user_frame() may have grown spaces[]: find sp again. */
		if (sp && key.space != FR_NO_SPACE)
			sp = &e->spaces[key.space];
	}
	return 0;
}

/*
 * Point each OOM trigger at its victim's incarnation in the dump. A victim
 * gone from the process table is left unnamed (its trigger's detail names
 * it). Returns 0 or -ENOMEM.
 */
int encoder__resolve_victims(struct encoder *e)
{
	struct fr_dump *d = e->d;

	for (uint32_t i = 0; i < d->ntrig && e->in.victim_pid; i++) {
		uint32_t pid = e->in.victim_pid[i], idx, slot;
		uint64_t start = e->in.victim_start[i];

		if (!pid)
			continue;
		if (!encoder__proc_of_incarnation(e, pid, start, &idx)) {
			int err;

			if (proctable__lookup(e->in.t->procs, pid, start, &slot))
				continue;	/* gone from the table: the detail names it */
			err = encoder__proc_of(e, slot, &idx);
			if (err == -ENOMEM)
				return err;
			if (err)
				continue;	/* freed since the lookup: as if gone */
			/* Listed for the trigger only: no event of it is in the window. */
			d->proc[idx].flags &= ~FR_DPROC_EVENTS;
		}
		d->trig[i].victim = idx + 1;
	}
	return 0;
}

/*
 * encoder__symbolize() - name every referenced stack, then their lines.
 * The CPU samples' stacks first, then the stalls', blocks' and OOM
 * dossiers': the resolve_timeout deadline of the reads cuts the latter, and
 * that of the lines pass the least sampled frames (lines_by_weight()).
 * Returns 0 or -errno.
 */
int encoder__symbolize(struct encoder *e)
{
	int err;

	for (int cpu = 1; cpu >= 0; cpu--)
		for (uint32_t i = 0; i < e->d->nstack; i++) {
			if ((e->stack_samples[i] > 0) != cpu)
				continue;
			err = symbolize_stack(e, i);
			if (err)
				return err;
		}
	return lines_pass(e);
}
