// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * symbolize.c - the encoder's naming of what the frozen window references
 * (encoder_int.h): each stack's names copied from the store of names kept
 * between dumps (names.h), named there first when they are missing or not
 * final (namer.h); then the lines pass over the frames still without
 * their source lines, most sampled first; and the OOM victims'
 * incarnations.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "drain.h"
#include "encstate.h"
#include "namer.h"
#include "symbolize.h"
#include "util.h"

/* The dump string of store string @i. Returns 0 or -ENOMEM. */
static int dump_str(struct encoder *e, uint32_t i, uint32_t *idx)
{
	uint32_t *slot = i ? dump_map__slot(&e->str_map, i) : NULL;
	int err;

	if (!i) {
		*idx = 0;
		return 0;
	}
	if (!slot)
		return -ENOMEM;
	if (*slot) {
		*idx = *slot - 1;
		return 0;
	}
	err = encoder__add_cstr(e, names__str_at(e->names, i), idx);
	if (!err)
		*slot = *idx + 1;
	return err;
}

/* The dump binary of store binary @i. Returns 0 or -ENOMEM. */
static int dump_bin(struct encoder *e, uint32_t i, uint32_t *idx)
{
	uint32_t *slot = dump_map__slot(&e->bin_map, i);
	struct fr_dump *d = e->d;
	struct fr_dump_bin b;
	int err;

	if (!slot)
		return -ENOMEM;
	if (*slot) {
		*idx = *slot - 1;
		return 0;
	}
	b = *names__bin_at(e->names, i);
	err = dump_str(e, b.path, &b.path);
	if (!err)
		err = fr_grow32((void **)&d->bin, &e->bin_cap, d->nbin + 1, sizeof(*d->bin));
	if (err)
		return err;
	*idx = d->nbin;
	d->bin[d->nbin++] = b;
	*slot = *idx + 1;
	return 0;
}

/* copy_lines() - dump frame @idx gets the source lines of store frame @nf. 0 or -ENOMEM. */
static int copy_lines(struct encoder *e, uint32_t idx, uint32_t nf)
{
	struct fr_dump *d = e->d;
	const struct fr_dump_line *lv;
	uint32_t n;
	int err;

	lv = names__lines_at(e->names, nf, &n);
	if (!n)
		return 0;
	err = fr_grow32((void **)&d->line, &e->line_cap, d->nline + n, sizeof(*d->line));
	for (uint32_t i = 0; i < n && !err; i++) {
		d->line[d->nline + i] = lv[i];
		err = dump_str(e, lv[i].func, &d->line[d->nline + i].func);
		if (!err)
			err = dump_str(e, lv[i].file, &d->line[d->nline + i].file);
	}
	if (err)
		return err;
	d->frame[idx].line = d->nline;
	d->frame[idx].nlines = n;
	d->nline += n;
	e->st.lines_resolved++;
	return 0;
}

/* Count a frame new to the dump by kind and how it was named. */
static void count_frame(struct encoder *e, const struct fr_dump_frame *f, enum names_why why)
{
	if (f->kind == FR_FRAME_KERNEL) {
		e->st.kernel_frames++;
		e->st.kernel_resolved += !!f->sym;
		return;
	}
	e->st.user_frames++;
	e->st.user_resolved += !!f->sym;
	e->st.user_no_symbols += why == FR_NAMED_NO_SYMBOLS;
	e->st.user_evicted += why == FR_NAMED_EVICTED;
}

/*
 * dump_frame() - the dump frame of store frame @nf, copied on first use
 * with its strings, binary and lines; *@created when new. Returns 0 or
 * -ENOMEM.
 */
static int dump_frame(struct encoder *e, uint32_t nf, uint32_t *idx, bool *created)
{
	uint32_t *slot = dump_map__slot(&e->frame_map, nf);
	struct fr_dump *d = e->d;
	struct fr_dump_frame f;
	int err;

	*created = false;
	if (!slot)
		return -ENOMEM;
	if (*slot) {
		*idx = *slot - 1;
		return 0;
	}
	f = *names__frame_at(e->names, nf);
	f.line = f.nlines = 0;
	err = dump_str(e, f.sym, &f.sym);
	if (!err)
		err = dump_str(e, f.system_name, &f.system_name);
	if (!err && f.bin) {
		err = dump_bin(e, f.bin - 1, &f.bin);
		f.bin++;
	}
	if (!err)
		err = fr_grow32((void **)&d->frame, &e->frame_cap, d->nframe + 1, sizeof(*d->frame));
	if (!err)
		err = fr_grow32((void **)&e->frame_src, &e->frame_src_cap, d->nframe + 1,
				sizeof(*e->frame_src));
	if (err)
		return err;
	*idx = d->nframe++;
	d->frame[*idx] = f;
	e->frame_src[*idx] = nf;
	*slot = *idx + 1;
	*created = true;
	count_frame(e, &f, names__frame_why(e->names, nf));
	return 0;
}

/*
 * copy_all_lines() - every dump frame gets the lines the store has for it,
 * in frame order once the lines pass is over: the dump's bytes are the
 * same whether its lines were looked up before or in it.
 */
static int copy_all_lines(struct encoder *e)
{
	int err = 0;

	for (uint32_t i = 0; i < e->d->nframe && !err; i++) {
		names__sync_lines(e->names, e->frame_src[i]);
		if (names__frame_lines(e->names, e->frame_src[i]) == FR_LINES_DONE)
			err = copy_lines(e, i, e->frame_src[i]);
	}
	return err;
}

/* lines_todo__add() - dump frame @frame (store frame @nf) of space @space wants lines at @addr. */
static int lines_todo__add(struct encoder *e, uint32_t frame, uint32_t nf, uint32_t space,
			   uint64_t addr)
{
	int err = fr_grow32((void **)&e->todo, &e->todo_cap, e->ntodo + 1, sizeof(*e->todo));

	if (err)
		return err;
	e->todo[e->ntodo] = (struct line_todo){
		.frame = frame, .nframe = nf, .space = space, .addr = addr, .seq = e->ntodo,
	};
	e->ntodo++;
	return 0;
}

/*
 * copy_stack() - dump stack @s gets the names @rec, seen in space @sp:
 * frames new to the dump whose lines are pending go to the lines pass.
 * Returns 0 or -ENOMEM.
 */
static int copy_stack(struct encoder *e, struct fr_dump_stack *s, const struct names_stack *rec,
		      const struct space *sp)
{
	uint32_t n = rec->kn + rec->un;
	const uint32_t *nf = names__stack_frames(e->names, rec);
	int err = 0;

	s->kn = rec->kn;
	s->un = rec->un;
	s->frames = calloc(n ? n : 1, sizeof(*s->frames));
	if (!s->frames)
		return -ENOMEM;
	e->st.user_bogus += rec->bogus;
	for (uint32_t i = 0; i < n && !err; i++) {
		bool created;

		err = dump_frame(e, nf[i], &s->frames[i], &created);
		if (err || !created || !sp || names__frame_lines(e->names, nf[i]) != FR_LINES_PENDING)
			continue;
		err = lines_todo__add(e, s->frames[i], nf[i], (uint32_t)(sp - e->nmr.spaces),
				      namer__lookup_addr(e->d->frame[s->frames[i]].addr, i - s->kn));
	}
	return err;
}

/*
 * symbolize_stack() - dump stack @sidx: its names from the store, named
 * there first unless the store holds final ones for this very window
 * entry in this image. Returns 0 or -ENOMEM.
 */
static int symbolize_stack(struct encoder *e, uint32_t sidx)
{
	const struct intern *stacks = e->in.t->stacks;
	uint32_t id = e->stack_ids[sidx], tag = intern__tag(stacks, id), serial;
	size_t len = intern__len(stacks, id);
	const struct names_stack *rec;
	struct space *sp = NULL;
	uint64_t hash;
	int err;

	intern__identity(stacks, id, &hash, &serial);
	if (FR_STACK_SLOT(tag) && len / sizeof(uint64_t) > FR_STACK_KN(tag)) {
		struct fr_proc p;

		if (!proctable__read(e->in.t->procs, FR_STACK_SLOT(tag), &p)) {
			sp = namer__space(&e->nmr, FR_STACK_SLOT(tag), p.pid, p.start,
					  e->stack_ts[sidx]);
			if (!sp)
				return -ENOMEM;
		}
	}
	rec = names__stack(e->names, id);
	if (namer__valid(rec, hash, serial, sp)) {
		e->st.cached_stacks++;
	} else {
		uint64_t ips[2 * FR_MAX_STACK];

		e->st.named_own += sp && sp->own;
		len = FR_MIN(intern__copy(stacks, id, ips, sizeof(ips)), sizeof(ips));
		err = namer__stack(&e->nmr, id, tag, ips, (uint32_t)len, sp, hash, serial);
		if (err)
			return err;
		rec = names__stack(e->names, id);
	}
	return copy_stack(e, &e->d->stack[sidx], rec, sp);
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
 * lines_pass() - the source positions of the dump's frames whose lines the
 * store does not have yet, once every stack is named: reading a large
 * DWARF file cannot take the time of perf maps and binaries. It has its
 * own resolve_timeout, spent on the most sampled frames first; what is
 * left at its end is counted (dump_lines_skipped). Each binary's DWARF is
 * read at most once in it (elfsyms__lines_hold()). Returns 0 or -ENOMEM.
 */
static int lines_pass(struct encoder *e)
{
	uint64_t deadline = e->in.resolve_timeout_ns ?
			    fr_boottime_ns() + e->in.resolve_timeout_ns : 0;
	uint32_t i;
	int err = 0;

	lines_by_weight(e);
	elfsyms__lines_hold(true);
	for (i = 0; i < e->ntodo && !err; i++) {
		const struct line_todo *t = &e->todo[i];

		if (deadline && fr_boottime_ns() >= deadline)
			break;
		if (names__frame_lines(e->names, t->nframe) == FR_LINES_PENDING) {
			err = namer__lines(&e->nmr, t->nframe, &e->nmr.spaces[t->space], t->addr);
			e->st.lines_looked_up++;
		}
	}
	e->st.lines_skipped += e->ntodo - i;
	elfsyms__lines_hold(false);
	return err ? err : copy_all_lines(e);
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
	uint64_t t0 = fr_boottime_ns(), t1;
	int err = 0;

	for (int cpu = 1; cpu >= 0 && !err; cpu--)
		for (uint32_t i = 0; i < e->d->nstack && !err; i++)
			if ((e->stack_samples[i] > 0) == cpu)
				err = symbolize_stack(e, i);
	t1 = fr_boottime_ns();
	e->st.names_ns = t1 - t0;
	if (!err)
		err = lines_pass(e);
	e->st.lines_ns = fr_boottime_ns() - t1;
	e->st.resolve_skipped += e->nmr.st.resolve_skipped;
	e->st.perfmaps_refused += e->nmr.st.perfmaps_refused;
	e->st.maps_reread += e->nmr.st.maps_reread;
	e->st.lines_failed += e->nmr.st.lines_failed;
	e->st.named_stacks += e->nmr.st.stacks;
	return err;
}
