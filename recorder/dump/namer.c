// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * namer.c - naming window stacks into the store of names (namer.h): each
 * stack in its own process's address space (kallsyms, ELF symbols of each
 * mapping, perf maps), each address once per image (the store's address
 * cache), and one frame's source lines on request.
 *
 * A name is final when nothing later can make it better: a kernel
 * address, or a user address looked up in the symbols of its file, or
 * found in no mapping of a process whose maps are all known. Only final
 * names enter the address cache, and a stack whose frames are all final is
 * complete: a dump copies it as it is. The rest (a file whose symbols are
 * not read yet, a process not read yet, JIT code) is named again by the
 * next session that meets the stack.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "contract.h"
#include "debuginfo.h"
#include "drain.h"
#include "kallsyms.h"
#include "namer.h"
#include "perfmap.h"
#include "procinfo.h"
#include "procstat.h"
#include "pycode.h"
#include "pysplice.h"
#include "untrusted.h"
#include "util.h"

/* A user frame dropped: a return address where no code is. */
#define FR_FRAME_BOGUS	UINT32_MAX

/* File times come from a coarse clock: a perf map may look this much older. */
#define FR_MTIME_SLACK_NS	(50 * 1000 * 1000ULL)

/* A space of the session, by slot, incarnation and era: a key of space_of. No padding. */
struct space_key {
	uint64_t start;
	uint64_t era;
	uint32_t slot;
	uint32_t pid;
};

/* namer__init() - a session naming into @nm; reads bounded by n->deadline once set. */
void namer__init(struct namer *n, const struct drain_tables *t, struct symcache *cache,
		 const struct kallsyms *ksyms, struct names *nm, unsigned meta_what)
{
	memset(n, 0, sizeof(*n));
	n->t = t;
	n->cache = cache;
	n->ksyms = ksyms;
	n->nm = nm;
	n->meta_what = meta_what;
	n->boot_to_real = fr_clock_ns(CLOCK_REALTIME) - fr_boottime_ns();
	n->self = (uint32_t)getpid();
	fr_hashmap__init(&n->space_of, sizeof(struct space_key), sizeof(uint32_t), NULL, NULL,
			 NULL);
}

void namer__fini(struct namer *n)
{
	for (uint32_t i = 0; i < n->nspaces; i++) {
		proc_meta__put(n->spaces[i].meta);
		proc_meta__put(n->spaces[i].fresh);
		perfmap__free(n->spaces[i].perfmap);
	}
	free(n->spaces);
	fr_hashmap__fini(&n->space_of);
	n->spaces = NULL;
	n->nspaces = n->space_cap = 0;
}

/*
 * namer__space() - the address space of incarnation (@pid, @start) in
 * process table @slot at @ts: the facts of the image it ran then (an exec
 * starts a new era). One per (slot, incarnation, era) in a session; NULL
 * without memory. The pointer lasts until the next call.
 */
struct space *namer__space(struct namer *n, uint32_t slot, uint32_t pid, uint64_t start,
			   uint64_t ts)
{
	struct space_key key = { .start = start, .slot = slot, .pid = pid };
	struct proc_meta *m;
	struct space *sp;
	const uint32_t *found;
	uint32_t i;

	m = proctable__meta_at(n->t->procs, slot, pid, start, ts, &key.era);
	found = fr_hashmap__find(&n->space_of, &key);
	if (found) {
		proc_meta__put(m);
		return &n->spaces[*found];
	}
	if (fr_grow32((void **)&n->spaces, &n->space_cap, n->nspaces + 1, sizeof(*n->spaces))) {
		proc_meta__put(m);
		return NULL;
	}
	i = n->nspaces;
	if (fr_hashmap__insert(&n->space_of, &key, &i)) {
		proc_meta__put(m);
		return NULL;
	}
	n->nspaces++;
	sp = &n->spaces[i];
	*sp = (struct space){
		.slot = slot, .pid = pid, .start = start, .era = key.era, .meta = m,
		.exited = proctable__exited(n->t->procs, slot, pid, start),
		.current = !(key.era & 1), .own = pid == n->self,
	};
	if (names__space(n->nm, pid, start, key.era, m && m->img ? m->img->serial : 0, &sp->nid))
		return NULL;	/* the meta is put with the session */
	return sp;
}

/*
 * namer__valid() - whether the names @s stored for a window stack still
 * stand for the entry (@hash, @serial) seen in space @sp (NULL: none).
 */
bool namer__valid(const struct names_stack *s, uint64_t hash, uint32_t serial,
		  const struct space *sp)
{
	return s && s->complete && s->hash == hash && s->serial == serial &&
	       s->space == (sp ? sp->nid : 0);
}

/*
 * past_deadline() - whether this session's time for per-process reads is
 * up; the caller skips its read and it is counted.
 */
static bool past_deadline(struct namer *n)
{
	if (!n->deadline || fr_boottime_ns() < n->deadline)
		return false;
	n->st.resolve_skipped++;
	return true;
}

/*
 * The mapping of @addr in @sp, with its symbols: from the facts read while
 * the process lived; if the address is outside them and the process still
 * lives, from one fresh verified read (a library loaded since: *@fresh,
 * if not NULL, tells).
 */
static const struct fr_mapping *mapping_of(struct namer *n, struct space *sp, uint64_t addr,
					   const struct elfsyms **syms, bool *fresh)
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
				if (fresh)
					*fresh = k;
				return m;
			}
		}
		ms[1] = sp->fresh;
		if (sp->reread || sp->exited || !sp->pid || !sp->current)
			break;
		sp->reread = true;
		if (past_deadline(n))
			break;
		if (proc_meta__read(sp->pid, sp->start, n->cache, FR_META_MAPS | n->meta_what,
				    n->deadline, &sp->fresh))
			sp->fresh = NULL;
		else
			n->st.resolve_skipped += sp->fresh->img ? sp->fresh->img->skipped : 0;
		ms[1] = sp->fresh;
		n->st.maps_reread++;
	}
	*syms = NULL;
	return NULL;
}

/*
 * Whether an address found in no mapping of @sp is in none for good: the
 * process exited, or the era ended (an exec since). Not a live process's
 * maps read afresh: the read may be cut by the session's deadline, or be
 * of an image whose exec the table has not applied yet.
 */
static bool no_mapping_final(const struct space *sp)
{
	return sp->exited || !sp->current;
}

/* Does @sp know its mappings (so that an address outside them is no code)? */
static bool space_has_maps(const struct space *sp)
{
	return (sp->meta && sp->meta->img) || (sp->fresh && sp->fresh->img);
}

/*
 * JIT code: /tmp/perf-PID.map, if written during this incarnation's life.
 * It is a file the process's owner controls: opened as untrusted (no
 * symlink, a regular file of at most FR_PERFMAP_MAX_BYTES), owned by the
 * process's uid or, world-readable with one link, by root, as perf
 * requires; an owner not known takes root's only.
 */
static const struct perfmap *perfmap_of(struct namer *n, struct space *sp)
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
	if (past_deadline(n))
		return NULL;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", sp->pid);
	fd = untrusted__open(AT_FDCWD, path, &rule, &st);
	if (fd < 0) {
		if (untrusted__refusal(fd) >= 0)
			n->st.perfmaps_refused++;
		return NULL;
	}
	if ((uint64_t)st.st_mtim.tv_sec * FR_NSEC_PER_SEC + (uint64_t)st.st_mtim.tv_nsec +
	    FR_MTIME_SLACK_NS >= n->boot_to_real + sp->start) {
		sp->perfmap = perfmap__load_fd(fd, n->deadline);
		if (!sp->perfmap && errno == ETIMEDOUT)
			n->st.resolve_skipped++;
	}	/* else left by an older process with this PID */
	close(fd);
	return sp->perfmap;
}

/*
 * Return addresses point after the call; look up addr - 1 for every frame
 * but the interrupted one so that the caller's line, not the next, is named.
 */
uint64_t namer__lookup_addr(uint64_t addr, uint32_t pos)
{
	return pos && addr ? addr - 1 : addr;
}

static int kernel_frame(struct namer *n, uint64_t addr, uint32_t pos, uint32_t *idx)
{
	struct fr_dump_frame f = { .addr = addr, .kind = FR_FRAME_KERNEL };
	const char *name = NULL, *mod = NULL;
	uint64_t a = namer__lookup_addr(addr, pos), off = 0;
	bool created;
	int err;

	if (n->ksyms)
		name = kallsyms__lookup(n->ksyms, a, &off, &mod);
	if (name) {
		char buf[512];

		if (mod && *mod)
			snprintf(buf, sizeof(buf), "%s [%s]", name, mod);
		else
			snprintf(buf, sizeof(buf), "%s", name);
		err = names__str(n->nm, buf, &f.sym);
		if (err)
			return err;
		f.sym_off = off + (a != addr);
	}
	return names__frame(n->nm, &f, 0, FR_NAMED_OK, idx, &created);
}

/*
 * refill() - the symbols of @es (mapped at @m by the process of @sp), which
 * the cache evicted: loaded again from the mapping while the process lives
 * and the session's time for reads lasts (the same file: the cache's key
 * is its identity). Whether @es has symbols now.
 */
static bool refill(struct namer *n, const struct space *sp, const struct fr_mapping *m,
		   const struct elfsyms *es)
{
	char procdir[32];

	if (sp->exited || !sp->pid || !sp->current || past_deadline(n))
		return false;
	snprintf(procdir, sizeof(procdir), "/proc/%u", sp->pid);
	symcache__put(symcache__get_mapping_at(n->cache, procdir, m, n->deadline));
	return !elfsyms__evicted(es);
}

/*
 * The symbol of lookup offset @off in @es (usable: not evicted) into the
 * store as *@fo: looked up, or as the store keeps it for the file (when
 * final), *@fidx its index there (UINT32_MAX: not kept). 0 or -ENOMEM.
 */
static int file_symbol(struct namer *n, const struct elfsyms *es, uint64_t off, bool final,
		       struct names_fileoff *fo, uint32_t *fidx)
{
	const char *name, *mangled = NULL;
	const struct names_fileoff *kept;
	struct symcache_key k;
	uint32_t file = 0;
	int err = 0;

	*fidx = UINT32_MAX;
	*fo = (struct names_fileoff){
		.lines = elfsyms__has_lines(es) ? FR_LINES_PENDING : FR_LINES_NONE,
	};
	if (final && elfsyms__identity(es, &k)) {
		err = names__file(n->nm, &k, &file);
		kept = err ? NULL : names__fileoff(n->nm, file, off, fidx);
		if (kept) {
			*fo = *kept;
			return 0;
		}
	}
	name = err ? NULL : elfsyms__lookup_full(es, off, &fo->off, &mangled);
	if (name) {
		err = names__str(n->nm, name, &fo->sym);
		if (!err && mangled)
			err = names__str(n->nm, mangled, &fo->system_name);
	}
	if (!err && file)
		err = names__add_fileoff(n->nm, file, off, fo, fidx);
	return err;
}

/*
 * The name of the frame at @addr, @pos from the leaf, in a file mapped at
 * @m with symbols @es (NULL: unknown); *@final when it is for good. What
 * the file says of the offset is kept once for all processes that map it.
 */
static int file_frame(struct namer *n, struct space *sp, const struct fr_mapping *m,
		      const struct elfsyms *es, uint64_t addr, uint32_t pos, uint32_t *idx,
		      bool *final)
{
	struct fr_dump_frame f = { .addr = addr, .kind = FR_FRAME_USER };
	uint64_t a = namer__lookup_addr(addr, pos);
	struct names_fileoff fo = {};
	enum names_why why = FR_NAMED_OK;
	uint32_t b, fidx = UINT32_MAX;
	bool created;
	int err;

	f.file_off = addr - m->start + m->pgoff;
	err = names__bin(n->nm, m->path, es ? elfsyms__buildid(es) : NULL, &b);
	if (err)
		return err;
	f.bin = b + 1;
	if (es && elfsyms__evicted(es) && !refill(n, sp, m, es)) {
		why = FR_NAMED_EVICTED;
		es = NULL;
	} else if (!es) {
		why = FR_NAMED_NO_SYMBOLS;
	}
	/* A table whose debug search ran out of time is loaded again later, fuller. */
	*final = es && !(elfsyms__debug(es) & FR_DEBUG_PENDING);
	if (es) {
		err = file_symbol(n, es, a - m->start + m->pgoff, *final, &fo, &fidx);
		if (err)
			return err;
		f.sym = fo.sym;
		f.system_name = fo.system_name;
		if (fo.sym)
			f.sym_off = fo.off + (a != addr);
	}
	/* Lines are looked up on their own (namer__lines()), after every name. */
	err = names__frame(n->nm, &f, fo.lines != FR_LINES_NONE ? 1 + !pos : 0, why, idx,
			   &created);
	if (!err && created && fidx != UINT32_MAX)
		names__frame_from(n->nm, *idx, fidx);
	return err;
}

/*
 * The name of user address @addr, @pos from the leaf, in @sp (NULL: no
 * process): FR_FRAME_BOGUS for a return address where no code is. *@final
 * when it is for good.
 */
static int user_frame(struct namer *n, struct space *sp, uint64_t addr, uint32_t pos,
		      uint32_t *idx, bool *final)
{
	struct fr_dump_frame f = { .addr = addr, .kind = FR_FRAME_USER };
	const struct fr_mapping *m = NULL;
	const struct elfsyms *es = NULL;
	const char *name = NULL;
	uint64_t a = namer__lookup_addr(addr, pos), off = 0;
	bool created, jit, fresh = false;
	int err;

	n->st.frames++;
	*final = !sp;
	if (sp)
		m = mapping_of(n, sp, a, &es, &fresh);
	if (m && m->path && m->path[0] == '/') {
		err = file_frame(n, sp, m, es, addr, pos, idx, final);
		/* Not in the image the space is of: kept with it, it would outlive a dlclose. */
		*final &= !fresh;
		return err;
	}
	jit = sp && perfmap_of(n, sp);
	if (pos && !m && (!addr || (sp && space_has_maps(sp) && !jit))) {
		*final = !addr || (space_has_maps(sp) && no_mapping_final(sp));
		*idx = FR_FRAME_BOGUS;	/* a return address where no code is */
		return 0;
	}
	if (jit) {
		name = perfmap__lookup(sp->perfmap, a, &off);
		if (name) {
			err = names__str(n->nm, name, &f.sym);
			if (err)
				return err;
			f.sym_off = off + (a != addr);
		}
	}
	/*
	 * Code outside a file (an anonymous mapping, or none) may be JIT code
	 * whose perf map its process writes at any time: named for good once
	 * it exited. A kernel-made mapping ([vdso]) has nothing more to say.
	 */
	if (sp && !jit && m && m->path &&
	    (!strcmp(m->path, "[vdso]") || !strcmp(m->path, "[vsyscall]")))
		*final = true;
	else if (sp)	/* an exited process's maps may still come (its exit sends them) */
		*final = space_has_maps(sp) && (sp->exited || (!m && no_mapping_final(sp)));
	return names__frame(n->nm, &f, 0, name ? FR_NAMED_OK : FR_NAMED_NO_MAPPING, idx, &created);
}

/*
 * python_frame() - the name of the Python frame whose two words are @w
 * (FR_PYW_MARK, its instruction and fingerprint) and @code, seen in space
 * @sp: "qualname (file:line)", with the function, file and line as its
 * source position. Its code object comes from the cache, or is read now
 * while the process lives and the session may read. One that cannot be
 * read is named by its address, for good once the process is gone.
 */
static int python_frame(struct namer *n, struct space *sp, uint64_t w, uint64_t code,
			uint32_t *idx, bool *final)
{
	char func[FR_PY_NAME_MAX], file[FR_PY_FILE_MAX], name[FR_PY_NAME_MAX + FR_PY_FILE_MAX + 16];
	struct fr_dump_frame f = { .addr = code, .kind = FR_FRAME_PYTHON };
	struct fr_dump_line lv = {};
	bool created, may_read = sp && !sp->exited;
	int line = -1, err = -ENOENT;

	n->st.py_frames++;
	if (n->py && sp)
		err = pycache__name(n->py, sp->pid, sp->start, code, fr_pyw_print(w),
				    fr_pyw_lasti(w), may_read && !past_deadline(n), func, sizeof(func),
				    file, sizeof(file), &line);
	/* Not read, and its process still there: a later session may read it. */
	*final = err != -ENOENT || !may_read || fr_procstat__gone(sp->pid, sp->start);
	if (err) {
		n->st.py_unnamed++;
		snprintf(name, sizeof(name), "[python code 0x%" PRIx64 "]", code);
		err = names__str(n->nm, name, &f.sym);
		return err ? err : names__frame(n->nm, &f, 0, FR_NAMED_NO_SYMBOLS, idx, &created);
	}
	if (line >= 0)
		snprintf(name, sizeof(name), "%s (%s:%d)", func, file, line);
	else
		snprintf(name, sizeof(name), "%s (%s)", func, file);
	err = names__str(n->nm, name, &f.sym);
	if (!err)
		err = names__str(n->nm, func, &lv.func);
	if (!err)
		err = names__str(n->nm, file, &lv.file);
	if (!err)
		err = names__frame(n->nm, &f, 0, FR_NAMED_OK, idx, &created);
	if (err || !created)
		return err;
	lv.line = line > 0 ? (uint32_t)line : 0;
	return names__set_lines(n->nm, *idx, &lv, 1);
}

/*
 * How many of the @kn leading kernel frames named @frames are flightrec's
 * own BPF program and the tracepoint glue that called it (a stall's or an
 * OOM invoker's stack is taken inside the tracepoint): they say nothing of
 * the workload. Only leaf frames are dropped, and only by these names.
 */
static uint32_t instrumentation_frames(struct namer *n, const uint32_t *frames, uint32_t kn)
{
	static const char *const glue[] = { "bpf_prog_", "bpf_trace_run", "__traceiter_",
					    "__bpf_trace_" };
	uint32_t i;

	for (i = 0; i < kn; i++) {
		const char *name = names__str_at(n->nm, names__frame_at(n->nm, frames[i])->sym);
		bool ours = false;

		for (size_t g = 0; g < FR_ARRAY_SIZE(glue) && !ours; g++)
			ours = !strncmp(name, glue[g], strlen(glue[g]));
		if (!ours)
			break;
	}
	return i < kn ? i : 0;	/* all of it glue: keep it, something is off */
}

/*
 * The name of address @addr, @pos from the leaf of its part (@user or
 * kernel), from the address cache or looked up (and cached when final).
 * *@final tells whether it is for good.
 */
static int frame_at(struct namer *n, struct space *sp, bool user, uint64_t addr, uint32_t pos,
		    uint32_t *idx, bool *final)
{
	struct names_addr key = { .addr = addr, .leaf = !pos };
	int err;

	if (!user)
		key.leaf |= 2;	/* a kernel address is not a user one */
	else if (sp)
		key.space = sp->nid;
	if (names__addr_get(n->nm, &key, idx)) {
		*final = true;
		return 0;
	}
	/* Without kernel symbols (not loaded yet, or unreadable), a kernel name is not final. */
	*final = user || n->ksyms;
	if (!user)
		err = kernel_frame(n, addr, pos, idx);
	else
		err = user_frame(n, sp, addr, pos, idx, final);
	if (!err && *final)
		err = names__addr_put(n->nm, &key, *idx);
	return err;
}

/*
 * namer__stack() - name window stack @id (@tag, its @len bytes of
 * addresses at @ips) as seen in space @sp (NULL:
 * none), and store its names for the entry (@hash, @serial). Returns 0 or
 * -ENOMEM.
 */
int namer__stack(struct namer *n, uint32_t id, uint32_t tag, const uint64_t *ips, uint32_t len,
		 struct space *sp, uint64_t hash, uint32_t serial)
{
	uint32_t frames[2 * FR_MAX_STACK];
	uint32_t cnt = FR_MIN(len / sizeof(ips[0]), FR_ARRAY_SIZE(frames));
	struct names_stack s = { .hash = hash, .serial = serial, .complete = true };
	uint32_t skip;
	int err;

	s.space = sp ? sp->nid : 0;
	s.kn = (uint16_t)FR_MIN(FR_STACK_KN(tag), cnt);
	s.un = (uint16_t)(cnt - s.kn);
	n->st.stacks++;
	for (uint32_t i = 0; i < s.kn; i++) {
		bool final;

		err = frame_at(n, NULL, false, ips[i], i, &frames[i], &final);
		if (err)
			return err;
		s.complete &= final;
	}
	/* Dropped frames keep their place: the first kept one is no leaf. */
	skip = instrumentation_frames(n, frames, s.kn);
	memmove(frames, frames + skip, (s.kn - skip) * sizeof(frames[0]));
	s.kn -= skip;
	/* i: the frame; w: its word (a Python frame takes two). */
	for (uint32_t i = s.kn, w = s.kn + skip, un = s.un; i < s.kn + un; i++, w++) {
		bool final;
		uint32_t pos = i - s.kn;

		if (w >= cnt) {
			s.un = (uint16_t)pos;
			break;
		}
		if (fr_pyw_is(ips[w])) {
			err = w + 1 < cnt ? python_frame(n, sp, ips[w], ips[w + 1], &frames[i], &final)
					  : -EBADMSG;
			w++;
			un--;	/* two words, one frame */
			if (err == -EBADMSG) {
				s.un = (uint16_t)pos;
				break;
			}
		} else {
			err = frame_at(n, sp, true, ips[w], pos, &frames[i], &final);
		}
		if (err)
			return err;
		s.complete &= final;
		if (frames[i] == FR_FRAME_BOGUS) {
			/* What a broken chain gives past a bogus frame is noise too. */
			s.un = (uint16_t)pos;
			s.bogus = 1;
			break;
		}
		s.un = (uint16_t)(pos + 1);
	}
	return names__set_stack(n->nm, id, &s, frames);
}

/*
 * namer__lines() - look up the source lines of store frame @frame, at
 * lookup address @addr in space @sp, into the store (strings interned);
 * the outermost level is named by the frame's symbol when it has one, as
 * FRAM names the frame. A frame whose file is not at hand stays pending.
 * Returns 0 or -ENOMEM.
 */
int namer__lines(struct namer *n, uint32_t frame, struct space *sp, uint64_t addr)
{
	struct fr_srcline sl[FR_SRCLINE_MAX_LEVELS];
	struct fr_dump_line lv[FR_SRCLINE_MAX_LEVELS];
	const struct fr_mapping *m;
	const struct elfsyms *es;
	char procdir[32];
	uint32_t sym = names__frame_at(n->nm, frame)->sym;
	int r, err = 0;

	names__sync_lines(n->nm, frame);
	if (names__frame_lines(n->nm, frame) != FR_LINES_PENDING)
		return 0;	/* its file's offset had them */
	m = mapping_of(n, sp, addr, &es, NULL);
	if (!m || !es)
		return 0;
	snprintf(procdir, sizeof(procdir), "/proc/%u", sp->pid);
	r = elfsyms__lines(es, addr - m->start + m->pgoff, sp->pid && !sp->exited ? procdir : NULL,
			   m, sl, FR_SRCLINE_MAX_LEVELS);
	if (r < 0 && r != -ENOENT) {
		n->st.lines_failed++;
		return 0;
	}
	for (int i = 0; i < r && !err; i++) {
		lv[i].line = sl[i].line;
		lv[i].col = sl[i].col;
		err = names__str(n->nm, sl[i].file, &lv[i].file);
		if (!err && i == r - 1 && sym)
			lv[i].func = sym;
		else if (!err)
			err = names__str(n->nm, sl[i].func, &lv[i].func);
	}
	if (err)
		return err;
	n->st.lines_resolved += r > 0;
	return names__set_lines(n->nm, frame, lv, r > 0 ? (uint32_t)r : 0);
}
