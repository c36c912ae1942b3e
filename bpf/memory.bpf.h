/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * memory.bpf.h - the memory half of the kernel side: the RSS ledger
 * (rss_stat), oom_score_adj writes, and the memory cgroup at its limit
 * (the OOM dossier's, a memcg reclaim's).
 * Included by flightrec.bpf.c after its helpers (count, fill_hdr,
 * mm_pages, leader_start, wakeup_flag).
 *
 * The ledger keeps, per mm, the value of each member it logged last and
 * logs a member again when it moved by the step, when a change has waited
 * rss_max_age unlogged (the mm's own timer carries it), once on first sight
 * and at the owner's exit (contract.h, struct fr_rec_rss). Changes are the
 * mm owner's (mm->owner, kept by the kernel's memory cgroup code), whoever
 * makes them: kswapd's reclaim of another process's pages fires with that
 * process's mm. Without mm->owner (no CONFIG_MEMCG), only changes the
 * mm's own threads make are attributed.
 */
#ifndef FR_MEMORY_BPF_H
#define FR_MEMORY_BPF_H

#define FR_LED_MAX	16384		/* mms tracked; least recently used go */
#define FR_LONG_MAX	0x7fffffffffffffffULL
#define FR_CLOCK_BOOTTIME	7

struct mm_led {
	struct bpf_timer timer;	/* fires rss_max_age after a change waits */
	__u64 start;		/* the owner's incarnation */
	__u32 tgid;
	__u32 armed;		/* the timer is pending */
	__u64 logged[FR_RSS_NMEMBERS];	/* bytes, the value last logged */
	__u64 cur[FR_RSS_NMEMBERS];	/* the value last seen */
	__u64 when[FR_RSS_NMEMBERS];	/* when it was seen to move there */
	__u64 pending[FR_RSS_NMEMBERS];	/* the first change not logged; 0: none */
	char comm[FR_COMM_LEN];	/* the owner's group leader's comm */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FR_LED_MAX);
	__type(key, __u64);	/* the mm's address */
	__type(value, struct mm_led);
} mm_led SEC(".maps");

/*
 * What this CPU saw last: one mm and the value of each member then.
 * rss_stat fires on every add, but the shared count it reads moves once
 * per percpu_counter_batch pages a CPU adds (32 on 2 CPUs): the calls that
 * find it where this CPU left it end here, with an array lookup the
 * verifier inlines, before the ledger's hash lookup and clock read. A
 * member not seen since the mm was: ~0. Whoever makes a change, an
 * unmoved count has nothing to log. A freed mm's address taken by a new
 * one is forgotten by the CPU that forks, execs or exits (rss_forget());
 * on another CPU, the same count at the same address delays the new mm's
 * first sight to its count's next move.
 */
struct rss_seen {
	__u64 mm;
	__u64 val[FR_RSS_NMEMBERS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rss_seen);
} rss_seen SEC(".maps");

/*
 * The value of counter @m of @mm in bytes. @mm is a pointer the verifier
 * trusts (the tracepoint's argument, or a task's mm): a direct load, with
 * the CO-RE relocations of vmlinux.h, costs a few instructions where a
 * bpf_probe_read_kernel() call costs tens of nanoseconds. A switch: CO-RE
 * wants constant indexes.
 */
static __always_inline __u64 mm_member(struct mm_struct *mm, __u32 m)
{
	__s64 v;

	switch (m) {
	case FR_RSS_FILE:
		v = mm->rss_stat[MM_FILEPAGES].count;
		break;
	case FR_RSS_ANON:
		v = mm->rss_stat[MM_ANONPAGES].count;
		break;
	case FR_RSS_SWAP:
		v = mm->rss_stat[MM_SWAPENTS].count;
		break;
	default:
		v = mm->rss_stat[MM_SHMEMPAGES].count;
		break;
	}
	return v > 0 ? (__u64)v << page_shift : 0;
}

/*
 * The live task that owns @mm, or NULL: an mm no live task uses as its own
 * any more (torn down after an exit or an exec) has no ledger.
 */
static __always_inline struct task_struct *mm_owner(struct mm_struct *mm)
{
	struct task_struct *o;

	if (!bpf_core_field_exists(mm->owner)) {
		o = bpf_get_current_task_btf();
		return o->mm == mm ? o : NULL;
	}
	o = mm->owner;
	if (!o || o->mm != mm)
		return NULL;
	return o;
}

/* A ledger record's header: the mm's owner @v, its thread @tid (0: none). */
static __always_inline void led_hdr(struct fr_rec_hdr *h, const struct mm_led *v, __u32 tid,
				    __u16 type, __u32 size)
{
	h->start = v->start;
	h->tgid = v->tgid;
	h->tid = tid;
	h->type = type;
	h->cpu = bpf_get_smp_processor_id();
	h->size = size;
	__builtin_memcpy(h->comm, v->comm, FR_COMM_LEN);
}

static __always_inline void led_emit(struct mm_led *v, __u32 tid, __u32 by, __u32 member,
				     __u32 why, __u64 value, __u64 changed)
{
	struct fr_rec_rss *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		count(FR_CNT_RESERVE);
		return;
	}
	led_hdr(&r->h, v, tid, FR_REC_RSS, sizeof(*r));
	r->value = value;
	r->changed = changed;
	r->by_tgid = by;
	r->member = member;
	r->why = why;
	r->pad = 0;
	r->h.ts = bpf_ktime_get_boot_ns();
	bpf_ringbuf_submit(r, wakeup_flag());
}

/* Log member @m's last seen value if it waits unlogged (the timer, an exit). */
static __always_inline void led_flush(struct mm_led *v, __u32 m, __u32 why)
{
	__u64 old = v->logged[m], cur = v->cur[m];

	v->pending[m] = 0;
	if (cur == old)
		return;
	if (__sync_val_compare_and_swap(&v->logged[m], old, cur) == old)
		led_emit(v, 0, 0, m, why, cur, v->when[m]);
}

/* The timer: the changes that waited rss_max_age get logged. */
static int led_fire(void *map, __u64 *key, struct mm_led *v)
{
	v->armed = 0;
	if (v->pending[FR_RSS_FILE])
		led_flush(v, FR_RSS_FILE, FR_RSS_AGE);
	if (v->pending[FR_RSS_ANON])
		led_flush(v, FR_RSS_ANON, FR_RSS_AGE);
	if (v->pending[FR_RSS_SWAP])
		led_flush(v, FR_RSS_SWAP, FR_RSS_AGE);
	if (v->pending[FR_RSS_SHMEM])
		led_flush(v, FR_RSS_SHMEM, FR_RSS_AGE);
	return 0;
}

/*
 * First sight of @mm owned by @own: a ledger entry, its timer, and its
 * values now (each member not 0 logged as FR_RSS_FIRST). NULL if the map
 * refused it.
 */
static __always_inline struct mm_led *led_new(__u64 key, struct task_struct *own,
					      struct mm_struct *mm, __u64 now)
{
	struct mm_led nv = {}, *v;

	nv.start = own->group_leader->start_boottime;
	nv.tgid = own->tgid;
	BPF_CORE_READ_STR_INTO(&nv.comm, own, group_leader, comm);
	for (__u32 m = 0; m < FR_RSS_NMEMBERS; m++) {
		nv.logged[m] = nv.cur[m] = mm_member(mm, m);
		nv.when[m] = now;
	}
	if (bpf_map_update_elem(&mm_led, &key, &nv, BPF_ANY)) {
		count(FR_CNT_RSS_FULL);
		return NULL;
	}
	v = bpf_map_lookup_elem(&mm_led, &key);
	if (!v)
		return NULL;
	bpf_timer_init(&v->timer, &mm_led, FR_CLOCK_BOOTTIME);
	bpf_timer_set_callback(&v->timer, led_fire);
	for (__u32 m = 0; m < FR_RSS_NMEMBERS; m++)
		if (v->logged[m])
			led_emit(v, 0, 0, m, FR_RSS_FIRST, v->logged[m], now);
	return v;
}

/*
 * True if this CPU saw member @m of @mm at @val last: nothing moved for the
 * ledger. Else notes @val as seen.
 */
static __always_inline bool rss_unmoved(__u64 key, __u32 m, __u64 val)
{
	__u32 zero = 0;
	struct rss_seen *c = bpf_map_lookup_elem(&rss_seen, &zero);

	if (!c)
		return false;
	asm volatile("%[m] &= 3" : [m] "+r"(m));
	if (c->mm == key) {
		if (c->val[m] == val)
			return true;
	} else {
		c->mm = key;
		for (__u32 i = 0; i < FR_RSS_NMEMBERS; i++)
			c->val[i] = ~0ULL;
	}
	asm volatile("%[m] &= 3" : [m] "+r"(m));
	c->val[m] = val;
	return false;
}

/* @mm ends or starts here: this CPU's note of it goes (the address may be reused). */
static __always_inline void rss_forget(__u64 key)
{
	__u32 zero = 0;
	struct rss_seen *c = bpf_map_lookup_elem(&rss_seen, &zero);

	if (c && c->mm == key)
		c->mm = 0;
}

/*
 * Where the memory grew (contract 13): the user stack of @cur, the owner's
 * thread whose own fault made ledger entry @v's step up of member @m to
 * @val, and its Python frames, sent after the entry.
 */
static __always_inline void rss_site(void *ctx, struct task_struct *cur, struct mm_led *v,
				     __u32 m, __u64 val, __u64 grown)
{
	struct fr_rec_rss_site *r;
	struct fr_rec_sample *w;
	__u32 zero = 0, flags = 0, n;

	w = bpf_map_lookup_elem(&site_scratch, &zero);
	if (!w)
		return;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(FR_CNT_RESERVE);
		return;
	}
	led_hdr(&r->h, v, cur->pid, FR_REC_RSS_SITE, sizeof(*r));
	r->value = val;
	r->grown = grown;
	r->member = (__u8)m;
	r->pad = 0;
	n = user_stack_now(ctx, cur, w, &flags, NULL);
	if (n > FR_MAX_STACK)
		n = FR_MAX_STACK;
	if (n)
		bpf_probe_read_kernel(r->ips, n * sizeof(__u64), w->ips);
	r->un = (__u16)n;
	python_into(cur, &r->py, &flags);
	r->flags = flags;
	r->h.ts = bpf_ktime_get_boot_ns();
	bpf_ringbuf_submit(r, wakeup_flag());
}

/*
 * rss_stat fires after every change of an mm's counter (6.2+: each
 * percpu_counter_add). Most calls find the shared count where this CPU saw
 * it last and end there (rss_unmoved); of the others, most end after the
 * ledger's lookup and a compare; one in (step / 4 KiB) of a steadily
 * faulting process writes a record.
 *
 * The ledger runs in on_rss (live at "ready", quick to verify) or, once it
 * is loaded, in on_rss_full (@walk: where the memory grew, a user stack
 * walk the verifier takes a while over), which then replaces it.
 */
static __always_inline int rss_ledger(void *ctx, struct mm_struct *mm, int member, const bool walk)
{
	struct task_struct *cur, *own;
	__u64 key = (__u64)mm, now, val, old, d, step, *logged, *pend;
	__u32 m, tid = 0, by = 0;
	struct mm_led *v;

	if ((__u32)member >= FR_RSS_NMEMBERS)
		return 0;
	/* A mask the verifier sees (clang reuses the unchecked argument otherwise). */
	m = (__u32)member & (FR_RSS_NMEMBERS - 1);
	val = mm_member(mm, m);
	if (rss_unmoved(key, m, val))
		return 0;
	cur = bpf_get_current_task_btf();
	now = bpf_ktime_get_boot_ns();
	v = bpf_map_lookup_elem(&mm_led, &key);
	/*
	 * The fast path: the mm's own thread faulting. A fork and an exec
	 * delete the entry at their new mm's address, an exit the one of
	 * the mm it ends, so an entry that names the current thread group
	 * for the current mm is that group's.
	 */
	if (v && cur->mm == mm && cur->tgid == v->tgid) {
		tid = cur->pid;
	} else {
		own = mm_owner(mm);
		if (!own) {
			count(FR_CNT_RSS_UNOWNED);
			return 0;
		}
		if (!v || v->tgid != own->tgid || v->start != own->group_leader->start_boottime) {
			led_new(key, own, mm, now);	/* a new mm, or a freed one's address reused */
			return 0;
		}
		if (cur->tgid == v->tgid)
			tid = cur->pid;
		else
			by = cur->tgid;
	}
	/* The member's slots, with a bound the verifier keeps (clang would
	 * index with a reloaded copy of m it knows nothing of). */
	asm volatile("%[m] &= 3" : [m] "+r"(m));
	logged = &v->logged[m];
	pend = &v->pending[m];
	v->cur[m] = val;
	asm volatile("%[m] &= 3" : [m] "+r"(m));
	v->when[m] = now;
	old = *logged;
	d = val > old ? val - old : old - val;
	step = old / 100 * rss_step_pct;
	if (step < rss_step)
		step = rss_step;
	if (d >= step || (*pend && now - *pend >= rss_max_age)) {
		if (__sync_val_compare_and_swap(logged, old, val) == old) {
			*pend = 0;
			led_emit(v, tid, by, m, d >= step ? FR_RSS_STEP : FR_RSS_AGE, val, now);
			if (walk && d >= step && tid && val > old &&
			    (m == FR_RSS_ANON || m == FR_RSS_SHMEM))
				rss_site(ctx, cur, v, m, val, val - old);
		}
		return 0;
	}
	if (!d) {
		*pend = 0;	/* back at the value logged: nothing waits */
		return 0;
	}
	if (!*pend)
		*pend = now;
	if (!v->armed) {
		v->armed = 1;
		bpf_timer_start(&v->timer, rss_max_age, 0);
	}
	return 0;
}

SEC("tp_btf/rss_stat")
int BPF_PROG(on_rss, struct mm_struct *mm, int member)
{
	return rss_ledger(ctx, mm, member, false);
}

/* Loaded after "ready"; the sampler detaches on_rss once it is attached. */
SEC("tp_btf/rss_stat")
int BPF_PROG(on_rss_full, struct mm_struct *mm, int member)
{
	return rss_ledger(ctx, mm, member, true);
}

/*
 * The group of @p died: log what waits, at the values the exit record
 * reads (the death counters), and forget the mm: its teardown that follows
 * has no owner.
 */
static __always_inline void led_exit(struct task_struct *p, struct mm_struct *mm)
{
	__u64 key = (__u64)mm, now = bpf_ktime_get_boot_ns();
	struct mm_led *v = bpf_map_lookup_elem(&mm_led, &key);

	rss_forget(key);
	if (!v || v->tgid != p->tgid)
		return;
	for (__u32 m = 0; m < FR_RSS_NMEMBERS; m++) {
		v->cur[m] = mm_member(mm, m);
		v->when[m] = now;
		led_flush(v, m, FR_RSS_EXIT);
	}
	bpf_map_delete_elem(&mm_led, &key);
}

/*
 * A fork made @child a new mm: no entry of a freed mm at its address may
 * stand for it (the fast path of on_rss trusts an entry that names the
 * current thread group). A vfork child shares its parent's mm: kept.
 */
static __always_inline void led_fork(struct task_struct *parent, struct task_struct *child)
{
	__u64 key = (__u64)child->mm;

	if (key && child->mm != parent->mm) {
		rss_forget(key);
		bpf_map_delete_elem(&mm_led, &key);
	}
}

/* An exec replaced @p's mm: its ledger starts again (first sight). */
static __always_inline void led_exec(struct task_struct *p)
{
	__u64 key = (__u64)p->mm;

	rss_forget(key);
	bpf_map_delete_elem(&mm_led, &key);
}

SEC("tp_btf/oom_score_adj_update")
int BPF_PROG(on_oomadj, struct task_struct *task)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct fr_rec_oomadj *r;

	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(FR_CNT_RESERVE);
		return 0;
	}
	fill_hdr(&r->h, task, FR_REC_OOMADJ, sizeof(*r));
	r->value = BPF_CORE_READ(task, signal, oom_score_adj);
	r->by_tgid = cur->tgid;
	r->h.ts = bpf_ktime_get_boot_ns();
	bpf_ringbuf_submit(r, wakeup_flag());
	return 0;
}

/*
 * The memory cgroup of @t whose limit is hit: the nearest of @t's memory
 * cgroup and its ancestors with a limit its usage is within
 * FR_OOM_MEMCG_SLACK of. Its kernfs id in *@id, usage and limit in bytes
 * (each pointer may be NULL). None: 0, or with @own, @t's own cgroup (no
 * usage or limit then).
 */
static __always_inline void memcg_at_limit(struct task_struct *t, __u64 *id, __u64 *usage_out,
					   __u64 *limit_out, bool own)
{
	struct cgroup_subsys_state *css = BPF_CORE_READ(t, cgroups, subsys[memory_cgrp_id]);

	*id = own && css ? BPF_CORE_READ(css, cgroup, kn, id) : 0;
	for (int i = 0; i < FR_OOM_MEMCG_LEVELS && css; i++) {
		/* css is the first member of struct mem_cgroup */
		struct mem_cgroup *mc = (struct mem_cgroup *)css;
		__u64 max = BPF_CORE_READ(mc, memory.max);
		__u64 usage = BPF_CORE_READ(mc, memory.usage.counter);

		if (max < (FR_LONG_MAX >> page_shift) &&
		    (usage << page_shift) + FR_OOM_MEMCG_SLACK >= max << page_shift) {
			*id = BPF_CORE_READ(css, cgroup, kn, id);
			if (usage_out)
				*usage_out = usage << page_shift;
			if (limit_out)
				*limit_out = max << page_shift;
			return;
		}
		css = BPF_CORE_READ(css, parent);
	}
}

/* The memory cgroup whose limit the OOM invoked by @t hit; none (0): a global OOM. */
static __always_inline void oom_memcg(struct task_struct *t, struct fr_rec_oom *o)
{
	o->memcg_id = o->memcg_usage = o->memcg_limit = 0;
	memcg_at_limit(t, &o->memcg_id, &o->memcg_usage, &o->memcg_limit, false);
}

#endif /* FR_MEMORY_BPF_H */
