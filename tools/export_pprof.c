// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * export_pprof.c - the dump's CPU samples as a pprof profile: a
 * gzip-compressed perftools.profiles.Profile (tools/profile.proto, encoded
 * by the protobuf-c code generated from it at build time).
 *
 *   sample_type  samples/count, cpu/nanoseconds (1e9 / META frequency each),
 *                offcpu/nanoseconds (the time blocked off the CPU: the
 *                recorded offcpu events, 0 in a CPU sample); the default
 *                is cpu
 *   sample       one per distinct (stack, incarnation, thread name), its
 *                locations leaf first, labels pid and start (numbers) and
 *                comm and thread (strings)
 *   mapping      one per binary (BINS: path, build-id) and one named
 *                "[kernel.kallsyms]" for kernel frames. A user location's
 *                address is its file offset in the binary (memory_start 0,
 *                file_offset 0), the same in every process whatever the
 *                load address; a kernel location's is the kernel address
 *   location     one per distinct (mapping, address, function, lines); a
 *                resolved frame has one line naming its function, or with
 *                the dump's source lines (LINE) one line per level:
 *                line[0] the innermost inlined function at the address's
 *                file:line, the last the frame's own function at the call
 *                site of the level before (pprof: "the last entry is the
 *                caller into which the preceding entries were inlined");
 *                an unresolved frame has only its address
 *   function     one per distinct (name, system name, file)
 *   time_nanos   the wall-clock time of the exported range's start,
 *                duration_nanos its length
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export.h"
#include "hashmap.h"
#include "profile.pb-c.h"
#include "view.h"
#include "util.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__ValueType pb_value_type;

#define FR_PPROF_LABELS	4	/* pid, start, comm, thread */

/* ------------------------------------------------------------ hash maps */

/*
 * keymap__get() - the value of key @k (three numbers) in map @m (the one
 * hash map, set up on first use) into *@v; a new key gets @next (non-0).
 * Returns 1 when the key is new, 0 when it existed, -ENOMEM.
 */
static int keymap__get(struct fr_hashmap *m, const uint64_t k[3], uint32_t next, uint32_t *v)
{
	const uint32_t *found;

	if (!m->key_size)
		fr_hashmap__init(m, 3 * sizeof(uint64_t), sizeof(uint32_t), NULL, NULL, NULL);
	found = fr_hashmap__find(m, k);
	if (found) {
		*v = *found;
		return 0;
	}
	if (fr_hashmap__insert(m, k, &next))
		return -ENOMEM;
	*v = next;
	return 1;
}

/* The profile's string table: index 0 is "". */
struct strtab {
	char **s;
	uint32_t n, cap;
	struct fr_hashmap idx;	/* the string (its copy in s[]) -> index */
};

static uint64_t str_hash(const void *key, size_t size, void *ctx)
{
	const char *s = *(const char *const *)key;

	(void)size;
	(void)ctx;
	return fr_hash64(s, strlen(s), 0x707072);
}

static bool str_equal(const void *a, const void *b, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	return !strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* strtab__id() - the index of @s in the table, added if new; -ENOMEM. */
static int64_t strtab__id(struct strtab *t, const char *s)
{
	const uint32_t *found;
	char *copy;

	if (!t->idx.key_size)
		fr_hashmap__init(&t->idx, sizeof(char *), sizeof(uint32_t), str_hash, str_equal, NULL);
	found = fr_hashmap__find(&t->idx, &s);
	if (found)
		return *found;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		char **n = realloc(t->s, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->s = n;
		t->cap = cap;
	}
	copy = strdup(s);
	if (!copy || fr_hashmap__insert(&t->idx, &copy, &t->n)) {
		free(copy);
		return -ENOMEM;
	}
	t->s[t->n] = copy;
	return t->n++;
}

static void strtab__free(struct strtab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	fr_hashmap__fini(&t->idx);
}

/* ----------------------------------------------------------- the builder */

struct pp_sample {
	uint32_t stack;		/* stack index + 1, 0: none */
	uint32_t proc;
	int64_t thread;		/* string id */
	int64_t comm;		/* string id */
	uint64_t count;		/* CPU samples */
	uint64_t offcpu_ns;	/* time blocked off the CPU */
};

struct pp_mapping {
	int64_t filename, build_id;	/* string ids */
	uint64_t lo, hi;		/* addresses seen */
	bool unresolved;		/* a location without a function */
};

struct pp_location {
	uint32_t mapping;	/* mapping id, 0: none */
	uint64_t address;
	uint32_t function;	/* function id, 0: unresolved */
	uint32_t line, nlines;	/* its lines in pprof.lines; 0 lines: one naming function */
};

/* One Line of a location. */
struct pp_line {
	uint32_t function;	/* function id */
	int64_t line, column;
};

struct pprof {
	const struct fr_dump *d;
	const struct filter *flt;
	struct strtab st;
	struct fr_hashmap func_ids;		/* (name, system name, file ids) -> function id */
	struct fr_hashmap loc_ids;		/* (mapping and function, address, lines) -> location id */
	struct fr_hashmap sample_ids;	/* (stack, proc, thread name id) -> sample index + 1 */
	struct fr_hashmap stack_ids;	/* hash of a location list -> its first stack index + 1 */
	uint32_t *stack_canon;		/* [stack index + 1]: that stack's canonical one + 1 */
	int64_t *func_name;		/* [function id - 1]: string id */
	int64_t *func_sys;		/* [function id - 1]: string id of the mangled name */
	int64_t *func_file;		/* [function id - 1]: string id of the source file */
	uint32_t nfunc, capfunc;
	struct pp_line *lines;		/* the locations' lines, location by location */
	uint32_t nlines, caplines;
	struct pp_location *loc;	/* [location id - 1] */
	uint32_t nloc;
	struct pp_mapping *map;		/* [mapping id - 1] */
	uint32_t nmap;
	uint32_t *bin_map;		/* [bin index]: mapping id, 0: not yet */
	uint32_t kernel_map;
	uint32_t *frame_loc;		/* [frame index]: location id, 0: not yet */
	uint64_t **stack_locs;		/* [stack index + 1]: location ids, leaf first */
	uint32_t *stack_nlocs;
	struct pp_sample *smp;
	uint32_t nsmp, capsmp;
};

static int64_t new_mapping(struct pprof *p, const char *file, const char *build_id)
{
	struct pp_mapping *m = &p->map[p->nmap];
	int64_t f = strtab__id(&p->st, file), b = strtab__id(&p->st, build_id);

	if (f < 0 || b < 0)
		return -ENOMEM;
	*m = (struct pp_mapping){ .filename = f, .build_id = b, .lo = UINT64_MAX };
	return ++p->nmap;
}

/* The mapping id of frame @fr (0: none), created on first use; -ENOMEM. */
static int64_t frame_mapping(struct pprof *p, const struct fr_dump_frame *fr)
{
	const struct fr_dump *d = p->d;
	char hex[2 * 20 + 1];
	int64_t id;

	if (fr->kind == FR_FRAME_KERNEL) {
		if (!p->kernel_map) {
			id = new_mapping(p, "[kernel.kallsyms]", "");
			if (id < 0)
				return id;
			p->kernel_map = id;
		}
		return p->kernel_map;
	}
	if (!fr->bin || fr->bin > d->nbin)
		return 0;
	if (!p->bin_map[fr->bin - 1]) {
		const struct fr_dump_bin *b = &d->bin[fr->bin - 1];

		for (uint32_t i = 0; i < b->build_id_len && i < 20; i++)
			snprintf(hex + 2 * i, 3, "%02x", b->build_id[i]);
		hex[2 * (b->build_id_len < 20 ? b->build_id_len : 20)] = 0;
		id = new_mapping(p, dump__str(d, b->path), hex);
		if (id < 0)
			return id;
		p->bin_map[fr->bin - 1] = id;
	}
	return p->bin_map[fr->bin - 1];
}

/*
 * The function id named @name, whose name in the binary is @system (the
 * mangled one; NULL: @name itself), in source file @file ("": unknown);
 * -ENOMEM.
 */
static int64_t function_id(struct pprof *p, const char *name, const char *system,
			   const char *file)
{
	int64_t s = strtab__id(&p->st, name), sys = system ? strtab__id(&p->st, system) : s;
	int64_t f = strtab__id(&p->st, file);
	uint64_t k[3] = { (uint64_t)s, (uint64_t)sys, (uint64_t)f };
	uint32_t v;
	int r;

	if (s < 0 || sys < 0 || f < 0)
		return -ENOMEM;
	r = keymap__get(&p->func_ids, k, p->nfunc + 1, &v);
	if (r < 0)
		return r;
	if (r == 1) {
		if (p->nfunc == p->capfunc) {
			uint32_t c1 = p->capfunc, c2 = p->capfunc, c3 = p->capfunc;

			if (fr_grow32((void **)&p->func_name, &c1, p->nfunc + 1, sizeof(*p->func_name)) ||
			    fr_grow32((void **)&p->func_sys, &c2, p->nfunc + 1, sizeof(*p->func_sys)) ||
			    fr_grow32((void **)&p->func_file, &c3, p->nfunc + 1, sizeof(*p->func_file)))
				return -ENOMEM;
			p->capfunc = FR_MIN(c1, FR_MIN(c2, c3));
		}
		p->func_sys[p->nfunc] = sys;
		p->func_file[p->nfunc] = f;
		p->func_name[p->nfunc++] = s;
	}
	return v;
}

/*
 * The location id of (@mapping, @address, @function) with the @n lines at
 * @lines (0: one line naming @function, or none if @function is 0);
 * -ENOMEM.
 */
static int64_t location_id(struct pprof *p, uint32_t mapping, uint64_t address, uint32_t function,
			   const struct pp_line *lines, uint32_t n)
{
	uint64_t k[3] = { mapping | (uint64_t)function << 32, address, 0 };
	uint32_t v;
	int r;

	/* Two frames at one file offset may sit on two lines (a leaf, a return address). */
	for (uint32_t i = 0; i < n; i++)
		k[2] = fr_hash64(&lines[i], sizeof(lines[i]), k[2] + 1);
	r = keymap__get(&p->loc_ids, k, p->nloc + 1, &v);
	if (r < 0)
		return r;
	if (r == 1) {
		if (n && fr_grow32((void **)&p->lines, &p->caplines, p->nlines + n, sizeof(*p->lines)))
			return -ENOMEM;
		p->loc[p->nloc++] = (struct pp_location){ mapping, address, function, p->nlines, n };
		if (n) {
			memcpy(&p->lines[p->nlines], lines, n * sizeof(*lines));
			p->nlines += n;
		}
		if (mapping) {
			struct pp_mapping *m = &p->map[mapping - 1];

			m->lo = address < m->lo ? address : m->lo;
			m->hi = address > m->hi ? address : m->hi;
			m->unresolved |= !function;
		}
	}
	return v;
}

/*
 * The lines of resolved frame @frame from its LINE levels into @out
 * (FR_DUMP_MAX_LINES), innermost first; the last is the frame's own
 * function, @name as it is named without lines. Returns their number (0:
 * the frame has no levels), -ENOMEM.
 */
static int frame_lines(struct pprof *p, uint32_t frame, const char *name, struct pp_line *out)
{
	const struct fr_dump *d = p->d;
	const struct fr_dump_frame *fr = &d->frame[frame];
	uint32_t n = fr->nlines;

	if (!n || fr->line > d->nline || n > d->nline - fr->line || n > FR_DUMP_MAX_LINES)
		return 0;
	for (uint32_t k = 0; k < n; k++) {
		const struct fr_dump_line *l = &d->line[fr->line + k];
		/* A Python function is named by its level: its frame's name has the line too. */
		bool own = k == n - 1 && fr->kind != FR_FRAME_PYTHON;
		const char *fname = own ? name : l->func ? dump__str(d, l->func) : "??";
		const char *sys = own && fr->system_name ? dump__str(d, fr->system_name) : NULL;
		int64_t fn = function_id(p, fname, sys, dump__str(d, l->file));

		if (fn < 0)
			return (int)fn;
		out[k] = (struct pp_line){ .function = (uint32_t)fn, .line = l->line, .column = l->col };
	}
	return (int)n;
}

/* The location id of frame index @frame; -ENOMEM. */
static int64_t frame_location(struct pprof *p, uint32_t frame)
{
	const struct fr_dump_frame *fr = &p->d->frame[frame];
	struct pp_line lines[FR_DUMP_MAX_LINES];
	int64_t map, fn = 0, id;
	char name[FR_VIEW_FRAME_MAX];
	int n = 0;

	if (p->frame_loc[frame])
		return p->frame_loc[frame];
	map = frame_mapping(p, fr);
	if (map < 0)
		return map;
	if (fr->sym) {
		view_frame(p->d, frame, name, sizeof(name));
		n = frame_lines(p, frame, name, lines);
		if (n < 0)
			return n;
		/* The frame's own function: the last line's (with its file) or by name. */
		fn = n ? (int64_t)lines[n - 1].function :
		     function_id(p, name, fr->system_name ? dump__str(p->d, fr->system_name) : NULL, "");
		if (fn < 0)
			return fn;
	}
	id = location_id(p, map, fr->kind == FR_FRAME_USER && map ? fr->file_off : fr->addr, fn,
			 lines, n);
	if (id > 0)
		p->frame_loc[frame] = id;
	return id;
}

/* The location ids of stack @stack (index + 1; 0: no stack), leaf first; -ENOMEM. */
static int stack_locations(struct pprof *p, uint32_t stack)
{
	const struct fr_dump_stack *s = stack ? &p->d->stack[stack - 1] : NULL;
	uint32_t n = s ? s->kn + s->un : 0;
	uint64_t *ids;
	int64_t id;

	if (p->stack_locs[stack])
		return 0;
	ids = calloc(n ? n : 1, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	p->stack_locs[stack] = ids;
	if (!n) {
		/* As "flightrec folded" shows it: one frame named [no_stack]. */
		id = function_id(p, "[no_stack]", NULL, "");
		id = id < 0 ? id : location_id(p, 0, 0, id, NULL, 0);
		if (id < 0)
			return id;
		ids[0] = id;
		p->stack_nlocs[stack] = 1;
		return 0;
	}
	for (uint32_t k = 0; k < n; k++) {
		id = frame_location(p, s->frames[k]);
		if (id < 0)
			return id;
		ids[k] = id;
	}
	p->stack_nlocs[stack] = n;
	return 0;
}

/*
 * The first stack of @stack's location list (its locations made): two
 * stacks of the dump can name the same locations (frames cut at a bogus
 * return address, addresses of one file offset), and a profile has one
 * sample per distinct list. Returns its index + 1, or 0 on -ENOMEM.
 */
static uint32_t canonical_stack(struct pprof *p, uint32_t stack)
{
	const uint64_t *ids = p->stack_locs[stack];
	uint32_t n = p->stack_nlocs[stack], *first, self = stack + 1;
	uint64_t h;

	if (p->stack_canon[stack])
		return p->stack_canon[stack];
	h = fr_hash64(ids, (size_t)n * sizeof(*ids), n);
	first = fr_hashmap__find(&p->stack_ids, &h);
	if (!first) {
		if (fr_hashmap__insert(&p->stack_ids, &h, &self))
			return 0;
		first = &self;
	}
	if (p->stack_nlocs[*first - 1] != n ||
	    memcmp(p->stack_locs[*first - 1], ids, (size_t)n * sizeof(*ids)))
		first = &self;	/* a hash collision: a sample of its own */
	p->stack_canon[stack] = *first;
	return *first;
}

/*
 * Count sample event @e (or add offcpu event @e's time blocked) into its
 * (location list, incarnation, thread name).
 */
static int add_sample(struct pprof *p, const struct fr_dump_event *e)
{
	const struct fr_dump *d = p->d;
	int64_t thread = strtab__id(&p->st, export__thread_name(d, e));
	bool off = e->type == FR_DEV_OFFCPU;
	uint64_t off_ns = off ? e->ts - e->off.begin : 0, k[3];
	uint32_t v, canon;
	int r;

	if (thread < 0)
		return -ENOMEM;
	if (e->stack > d->nstack)
		return -EINVAL;
	r = stack_locations(p, e->stack);
	if (r)
		return r;
	canon = canonical_stack(p, e->stack);
	if (!canon)
		return -ENOMEM;
	k[0] = canon - 1;
	k[1] = e->proc;
	k[2] = (uint64_t)thread;
	r = keymap__get(&p->sample_ids, k, p->nsmp + 1, &v);
	if (r < 0)
		return r;
	if (r == 0) {
		p->smp[v - 1].count += !off;
		p->smp[v - 1].offcpu_ns += off_ns;
		return 0;
	}
	if (fr_grow32((void **)&p->smp, &p->capsmp, p->nsmp + 1, sizeof(*p->smp)))
		return -ENOMEM;
	p->smp[p->nsmp] = (struct pp_sample){
		.stack = canon - 1, .proc = e->proc, .thread = thread, .count = !off,
		.offcpu_ns = off_ns,
		.comm = strtab__id(&p->st, dump__str(d, d->proc[e->proc].comm)),
	};
	if (p->smp[p->nsmp].comm < 0)
		return -ENOMEM;
	p->nsmp++;
	return 0;
}

static int pprof__init(struct pprof *p, const struct fr_dump *d, const struct filter *flt)
{
	memset(p, 0, sizeof(*p));
	p->d = d;
	p->flt = flt;
	p->loc = calloc(d->nframe + 2, sizeof(*p->loc));
	p->map = calloc(d->nbin + 2, sizeof(*p->map));
	p->bin_map = calloc(d->nbin + 1, sizeof(*p->bin_map));
	p->frame_loc = calloc(d->nframe + 1, sizeof(*p->frame_loc));
	p->stack_locs = calloc(d->nstack + 1, sizeof(*p->stack_locs));
	p->stack_nlocs = calloc(d->nstack + 1, sizeof(*p->stack_nlocs));
	p->stack_canon = calloc(d->nstack + 1, sizeof(*p->stack_canon));
	fr_hashmap__init(&p->stack_ids, sizeof(uint64_t), sizeof(uint32_t), NULL, NULL, NULL);
	if (!p->loc || !p->map || !p->bin_map || !p->frame_loc || !p->stack_locs ||
	    !p->stack_nlocs || !p->stack_canon || strtab__id(&p->st, "") != 0)
		return -ENOMEM;
	return 0;
}

static void pprof__fini(struct pprof *p)
{
	for (uint32_t i = 0; p->stack_locs && i <= p->d->nstack; i++)
		free(p->stack_locs[i]);
	free(p->stack_locs);
	free(p->stack_nlocs);
	free(p->stack_canon);
	fr_hashmap__fini(&p->stack_ids);
	free(p->frame_loc);
	free(p->bin_map);
	free(p->map);
	free(p->loc);
	free(p->func_name);
	free(p->func_sys);
	free(p->func_file);
	free(p->lines);
	free(p->smp);
	fr_hashmap__fini(&p->sample_ids);
	fr_hashmap__fini(&p->loc_ids);
	fr_hashmap__fini(&p->func_ids);
	strtab__free(&p->st);
}

/* ------------------------------------------------------------- encoding */

/* The protobuf-c message tree, pointing into the builder's tables. */
struct pb_tree {
	pb_profile prof;
	pb_value_type vt[4];		/* samples/count, cpu/ns, offcpu/ns, period cpu/ns */
	pb_value_type *vtp[3];
	pb_sample *smp, **smpp;
	int64_t *values;
	pb_label *labels, **labelp;
	pb_mapping *map, **mapp;
	uint32_t *map_id;		/* [builder mapping id - 1]: id in the profile */
	pb_location *loc, **locp;
	pb_line *line, **linep;
	pb_function *fn, **fnp;
	int64_t comments[3 + 32];
};

static void pb_tree__free(struct pb_tree *t)
{
	free(t->smp);
	free(t->smpp);
	free(t->values);
	free(t->labels);
	free(t->labelp);
	free(t->map);
	free(t->mapp);
	free(t->map_id);
	free(t->loc);
	free(t->locp);
	free(t->line);
	free(t->linep);
	free(t->fn);
	free(t->fnp);
}

/* A string id for the formatted text; -ENOMEM. */
static int64_t strf(struct pprof *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int64_t strf(struct pprof *p, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int64_t id;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	id = strtab__id(&p->st, s);
	free(s);
	return id;
}

/* Free-text comments: the dump's origin, the range, each trigger in it. */
static int add_comments(struct pprof *p, struct pb_tree *t, const struct export_range *r)
{
	const struct fr_dump *d = p->d;
	char a[64], b[64];
	int64_t id;
	size_t n = 0;

	id = strf(p, "flightrec %s export of a dump from %s (kernel %s, boot id %s)", FR_VERSION,
		  dump__meta_str(d, "host"), dump__meta_str(d, "kernel"), dump__meta_str(d, "boot_id"));
	if (id < 0)
		return -ENOMEM;
	t->comments[n++] = id;
	id = strf(p, "range %s .. %s (CLOCK_BOOTTIME %" PRIu64 " .. %" PRIu64 " ns)",
		  view_time(d, r->start, a, sizeof(a)), view_time(d, r->end, b, sizeof(b)),
		  r->start, r->end);
	if (id < 0)
		return -ENOMEM;
	t->comments[n++] = id;
	for (uint32_t i = 0; i < d->ntrig && n < sizeof(t->comments) / sizeof(t->comments[0]); i++) {
		const struct fr_dump_trigger *tr = &d->trig[i];

		if (!export__trigger_match(d, p->flt, tr))
			continue;
		id = strf(p, "trigger %s (%s) at %s: %s", tr->name ? tr->name : "?",
			  tr->type ? tr->type : "?", view_time(d, tr->ts, a, sizeof(a)),
			  tr->reason ? tr->reason : "");
		if (id < 0)
			return -ENOMEM;
		t->comments[n++] = id;
	}
	t->prof.n_comment = n;
	t->prof.comment = t->comments;
	return 0;
}

/* 0: an executable, 1: a shared library, 2: the kernel. */
static int mapping_rank(const struct pprof *p, uint32_t i)
{
	const char *base = strrchr(p->st.s[p->map[i].filename], '/');

	if (i + 1 == p->kernel_map)
		return 2;
	base = base ? base + 1 : p->st.s[p->map[i].filename];
	return strstr(base, ".so") ? 1 : 0;
}

/* Point the message tree at the builder's tables. 0 or -ENOMEM. */
static int pb_tree__build(struct pb_tree *t, struct pprof *p, const struct export_range *r)
{
	static const char *const keys[FR_PPROF_LABELS] = { "pid", "start", "comm", "thread" };
	const struct fr_dump *d = p->d;
	uint64_t freq = dump__meta_u64(d, "frequency");
	int64_t period = freq ? (int64_t)(1000000000ULL / freq) : 0;
	int64_t ids[8], key[FR_PPROF_LABELS];
	const char *const names[8] = { "samples", "count", "cpu", "nanoseconds", "offcpu", NULL };
	size_t nl = (size_t)p->nsmp * FR_PPROF_LABELS;

	for (int i = 0; names[i]; i++)
		if ((ids[i] = strtab__id(&p->st, names[i])) < 0)
			return -ENOMEM;
	for (int i = 0; i < FR_PPROF_LABELS; i++)
		if ((key[i] = strtab__id(&p->st, keys[i])) < 0)
			return -ENOMEM;
	if (add_comments(p, t, r))
		return -ENOMEM;

	perftools__profiles__profile__init(&t->prof);
	for (int i = 0; i < 4; i++)
		perftools__profiles__value_type__init(&t->vt[i]);
	t->vt[0].type = ids[0];
	t->vt[0].unit = ids[1];
	t->vt[1].type = t->vt[3].type = ids[2];
	t->vt[1].unit = t->vt[2].unit = t->vt[3].unit = ids[3];
	t->vt[2].type = ids[4];
	for (int i = 0; i < 3; i++)
		t->vtp[i] = &t->vt[i];

	t->smp = calloc(p->nsmp + 1, sizeof(*t->smp));
	t->smpp = calloc(p->nsmp + 1, sizeof(*t->smpp));
	t->values = calloc((size_t)p->nsmp * 3 + 1, sizeof(*t->values));
	t->labels = calloc(nl + 1, sizeof(*t->labels));
	t->labelp = calloc(nl + 1, sizeof(*t->labelp));
	t->map = calloc(p->nmap + 1, sizeof(*t->map));
	t->mapp = calloc(p->nmap + 1, sizeof(*t->mapp));
	t->map_id = calloc(p->nmap + 1, sizeof(*t->map_id));
	t->loc = calloc(p->nloc + 1, sizeof(*t->loc));
	t->locp = calloc(p->nloc + 1, sizeof(*t->locp));
	t->line = calloc((size_t)p->nloc + p->nlines + 1, sizeof(*t->line));
	t->linep = calloc((size_t)p->nloc + p->nlines + 1, sizeof(*t->linep));
	t->fn = calloc(p->nfunc + 1, sizeof(*t->fn));
	t->fnp = calloc(p->nfunc + 1, sizeof(*t->fnp));
	if (!t->smp || !t->smpp || !t->values || !t->labels || !t->labelp || !t->map ||
	    !t->mapp || !t->map_id || !t->loc || !t->locp || !t->line || !t->linep || !t->fn || !t->fnp)
		return -ENOMEM;

	for (uint32_t i = 0; i < p->nsmp; i++) {
		const struct pp_sample *s = &p->smp[i];
		pb_sample *m = &t->smp[i];
		pb_label *l = &t->labels[(size_t)i * FR_PPROF_LABELS];

		perftools__profiles__sample__init(m);
		m->n_location_id = p->stack_nlocs[s->stack];
		m->location_id = p->stack_locs[s->stack];
		m->n_value = 3;
		m->value = &t->values[3 * (size_t)i];
		m->value[0] = (int64_t)s->count;
		m->value[1] = (int64_t)s->count * period;
		m->value[2] = (int64_t)s->offcpu_ns;
		for (int k = 0; k < FR_PPROF_LABELS; k++) {
			perftools__profiles__label__init(&l[k]);
			l[k].key = key[k];
			t->labelp[(size_t)i * FR_PPROF_LABELS + k] = &l[k];
		}
		l[0].num = d->proc[s->proc].pid;
		l[1].num = (int64_t)d->proc[s->proc].start;
		l[1].num_unit = ids[3];
		l[2].str = s->comm;
		l[3].str = s->thread;
		m->n_label = FR_PPROF_LABELS;
		m->label = &t->labelp[(size_t)i * FR_PPROF_LABELS];
		t->smpp[i] = m;
	}
	/* pprof takes mapping 1 for the main binary: executables first. */
	for (int rank = 0, id = 0; rank < 3; rank++)
		for (uint32_t i = 0; i < p->nmap; i++)
			if (mapping_rank(p, i) == rank)
				t->map_id[i] = ++id;
	for (uint32_t i = 0; i < p->nmap; i++) {
		const struct pp_mapping *pm = &p->map[i];
		pb_mapping *m = &t->map[t->map_id[i] - 1];

		perftools__profiles__mapping__init(m);
		m->id = t->map_id[i];
		m->memory_start = (uint32_t)i + 1 == p->kernel_map && pm->lo <= pm->hi ? pm->lo : 0;
		m->memory_limit = pm->lo <= pm->hi ? pm->hi + 1 : 0;
		m->filename = pm->filename;
		m->build_id = pm->build_id;
		m->has_functions = !pm->unresolved;
		t->mapp[m->id - 1] = m;
	}
	for (uint32_t i = 0, li = 0; i < p->nloc; i++) {
		const struct pp_location *pl = &p->loc[i];
		pb_location *m = &t->loc[i];

		perftools__profiles__location__init(m);
		m->id = i + 1;
		m->mapping_id = pl->mapping ? t->map_id[pl->mapping - 1] : 0;
		m->address = pl->address;
		if (pl->nlines) {
			m->n_line = pl->nlines;
			m->line = &t->linep[li];
			for (uint32_t k = 0; k < pl->nlines; k++, li++) {
				const struct pp_line *l = &p->lines[pl->line + k];

				perftools__profiles__line__init(&t->line[li]);
				t->line[li].function_id = l->function;
				t->line[li].line = l->line;
				t->line[li].column = l->column;
				t->linep[li] = &t->line[li];
			}
		} else if (pl->function) {
			perftools__profiles__line__init(&t->line[li]);
			t->line[li].function_id = pl->function;
			t->linep[li] = &t->line[li];
			m->n_line = 1;
			m->line = &t->linep[li++];
		}
		t->locp[i] = m;
	}
	for (uint32_t i = 0; i < p->nfunc; i++) {
		pb_function *m = &t->fn[i];

		perftools__profiles__function__init(m);
		m->id = i + 1;
		m->name = p->func_name[i];
		m->system_name = p->func_sys[i];
		m->filename = p->func_file[i];
		t->fnp[i] = m;
	}

	t->prof.n_sample_type = 3;
	t->prof.sample_type = t->vtp;
	t->prof.n_sample = p->nsmp;
	t->prof.sample = t->smpp;
	t->prof.n_mapping = p->nmap;
	t->prof.mapping = t->mapp;
	t->prof.n_location = p->nloc;
	t->prof.location = t->locp;
	t->prof.n_function = p->nfunc;
	t->prof.function = t->fnp;
	t->prof.n_string_table = p->st.n;
	t->prof.string_table = p->st.s;
	t->prof.time_nanos = (int64_t)r->wall;
	t->prof.duration_nanos = (int64_t)(r->end - r->start);
	t->prof.period_type = &t->vt[3];
	t->prof.period = period;
	t->prof.default_sample_type = ids[2];
	return 0;
}

/* gzip (deflate with the gzip wrapper) @len bytes of @buf to @f. 0, -ENOMEM, -EIO. */
static int gzip_write(FILE *f, const uint8_t *buf, size_t len)
{
	unsigned char out[64 * 1024];
	z_stream zs;
	int r, err = 0;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)buf;
	do {
		size_t chunk = len > (1u << 30) ? (1u << 30) : len;

		if (!zs.avail_in) {
			zs.avail_in = (uInt)chunk;
			len -= chunk;
		}
		zs.next_out = out;
		zs.avail_out = sizeof(out);
		r = deflate(&zs, len || zs.avail_in > 0 ? Z_NO_FLUSH : Z_FINISH);
		if (r == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(out, 1, sizeof(out) - zs.avail_out, f) != sizeof(out) - zs.avail_out) {
			err = -EIO;
			break;
		}
	} while (r != Z_STREAM_END);
	deflateEnd(&zs);
	return err;
}

/*
 * export__pprof() - write the CPU samples and the blocks off the CPU of @d
 * that pass @flt to @f as a gzip-compressed pprof profile. Returns 0, -ENOMEM, -EINVAL for a dump
 * whose sample names a missing stack, or -EIO when @f failed.
 */
int export__pprof(const struct fr_dump *d, const struct filter *flt, FILE *f)
{
	struct export_range r;
	struct pb_tree t;
	struct pprof p;
	uint8_t *buf = NULL;
	size_t len;
	int err;

	memset(&t, 0, sizeof(t));
	export__range(d, flt, &r);
	err = pprof__init(&p, d, flt);
	for (uint32_t i = 0; !err && i < d->nev; i++)
		if ((d->ev[i].type == FR_DEV_SAMPLE || d->ev[i].type == FR_DEV_OFFCPU) &&
		    filter__match(flt, d, &d->ev[i]))
			err = add_sample(&p, &d->ev[i]);
	if (!err)
		err = pb_tree__build(&t, &p, &r);
	if (!err) {
		len = perftools__profiles__profile__get_packed_size(&t.prof);
		buf = malloc(len ? len : 1);
		err = buf ? 0 : -ENOMEM;
	}
	if (!err && perftools__profiles__profile__pack(&t.prof, buf) != len)
		err = -EIO;
	if (!err)
		err = gzip_write(f, buf, len);
	if (!err && ferror(f))
		err = -EIO;
	free(buf);
	pb_tree__free(&t);
	pprof__fini(&p);
	return err;
}
