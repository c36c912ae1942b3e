// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * dumpmeta.c - what a dump says of itself, filled in at its freeze: META
 * (host, clocks, config, table bookkeeping), TRIG (the firings it answers)
 * and LOSS (the daemon's loss counters as they stand). See daemon.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pycode.h"
#include "dumpmeta.h"
#include "symbols.h"
#include "tables.h"
#include "util.h"

/* Per-CPU BPF counters as an array value. */
static int add_cpu_counter(struct daemon *dm, struct fr_kvlist *l, const char *key,
			   enum fr_counter which)
{
	uint64_t vals[4096];
	int n = sampler__counters(dm->sampler, which, vals, FR_ARRAY_SIZE(vals));

	if (n < 0)
		n = 0;
	return kvlist__add_array(l, key, vals, n);
}

/* The unwind tables as they stand: how many files, and their memory. */
static int add_unwind_meta(struct daemon *dm, struct fr_kvlist *m)
{
	struct unwinder_stats us = { 0 };
	int err = 0;

	if (dm->unwinder)
		unwinder__stats(dm->unwinder, &us);
	err |= kvlist__add_u64(m, "unwind_bytes", us.bytes);
	err |= kvlist__add_u64(m, "unwind_rows_cap", us.rows_cap);
	err |= kvlist__add_u64(m, "unwind_rows_used", us.rows_used);
	err |= kvlist__add_u64(m, "unwind_files", us.files);
	err |= kvlist__add_u64(m, "unwind_procs", us.procs);
	err |= kvlist__add_u64(m, "unwind_files_built", us.built);
	err |= kvlist__add_u64(m, "unwind_build_ns", us.build_ns);
	err |= kvlist__add_u64(m, "unwind_files_cold", us.cold);
	err |= kvlist__add_u64(m, "unwind_files_cold_now", us.cold_now);
	err |= kvlist__add_u64(m, "unwind_files_refilled", us.refilled);
	err |= kvlist__add_u64(m, "unwind_files_moved", us.moved);
	err |= add_cpu_counter(dm, m, "unwind_kernel_tables", FR_CNT_UNWIND_KBUILT);
	err |= add_cpu_counter(dm, m, "unwind_stack_copies", FR_CNT_UCOPY);
	err |= kvlist__add_u64(m, "unwind_copies_finished", drain__stats(dm->drain)->ucopy_finished);
	err |= kvlist__add_u64(m, "unwind_copies_finished_after_exit", us.finished_after_exit);
	return err;
}

/* Python frames (issue 27): samples that had them, and their code objects' reads. */
static int add_python_meta(struct daemon *dm, struct fr_kvlist *m)
{
	const struct drain_stats *ds = drain__stats(dm->drain);
	struct pycache_stats ps = { 0 };
	int err = 0;

	if (dm->pycache)
		pycache__stats(dm->pycache, &ps);
	err |= kvlist__add_u64(m, "python_samples", ds->py_samples);
	err |= kvlist__add_u64(m, "python_frames", ds->py_frames);
	err |= kvlist__add_u64(m, "python_sections_bad", ds->py_bad);
	err |= kvlist__add_u64(m, "python_unreadable", ds->py_unreadable);
	err |= kvlist__add_u64(m, "python_code_read", ps.read);
	err |= kvlist__add_u64(m, "python_code_refused", ps.refused);
	err |= kvlist__add_u64(m, "python_code_stale", ps.stale);
	err |= kvlist__add_u64(m, "python_code_gone", ps.gone);
	err |= kvlist__add_u64(m, "python_cache_bytes", ps.bytes);
	err |= kvlist__add_u64(m, "python_cache_resets", ps.resets);
	err |= kvlist__add_u64(m, "python_code_given_up", ps.given_up);
	return err;
}

/* The cache budget and what it covers, as they stand at the freeze. */
static int add_cache_meta(struct daemon *dm, struct fr_kvlist *m)
{
	struct symcache_stats ss;
	int err = 0;

	symcache__stats(dm->symcache, &ss, false);
	err |= kvlist__add_u64(m, "cache_budget", ss.budget);
	err |= kvlist__add_u64(m, "symbols_cache_bytes", ss.bytes);
	err |= kvlist__add_u64(m, "symbols_cache_entries", ss.entries);
	err |= kvlist__add_u64(m, "symbols_cache_evicted", ss.evicted);
	err |= kvlist__add_u64(m, "symbols_cache_expired", ss.expired);
	err |= kvlist__add_u64(m, "symbols_cache_refused", ss.refused);
	err |= kvlist__add_u64(m, "images_bytes", ss.image_bytes);
	err |= kvlist__add_u64(m, "images", ss.images);
	err |= kvlist__add_u64(m, "images_maps_refused", ss.maps_refused);
	return err;
}

/* The DWARF line handles of earlier dumps, as they stand at the freeze. */
static int add_lines_meta(struct fr_kvlist *m)
{
	struct fr_lines_stats ls;
	int err = 0;

	elfsyms__lines_stats(&ls);
	err |= kvlist__add_u64(m, "lines_open", ls.open);
	err |= kvlist__add_u64(m, "lines_bytes", ls.bytes);
	err |= kvlist__add_u64(m, "lines_bytes_peak", ls.peak);
	err |= kvlist__add_u64(m, "lines_opened", ls.opened);
	err |= kvlist__add_u64(m, "lines_evicted", ls.evicted);
	return err;
}

/* The tables' memory at the freeze: resident against what their contents need. */
static int add_memory_meta(struct daemon *dm, struct fr_kvlist *m)
{
	const struct window_stats *ws = window__stats(drain__tables(dm->drain)->win);
	struct drain_footprint fp;
	int err = 0;

	drain__footprint(dm->drain, &fp);
	err |= kvlist__add_u64(m, "memory_resident", fp.all.resident);
	err |= kvlist__add_u64(m, "memory_live", fp.all.live);
	err |= kvlist__add_u64(m, "window_resident", fp.window.resident);
	err |= kvlist__add_u64(m, "window_live", fp.window.live);
	err |= kvlist__add_u64(m, "stacks_resident", fp.stacks.resident);
	err |= kvlist__add_u64(m, "stacks_live", fp.stacks.live);
	err |= kvlist__add_u64(m, "strings_resident", fp.strings.resident);
	err |= kvlist__add_u64(m, "strings_live", fp.strings.live);
	err |= kvlist__add_u64(m, "proctable_resident", fp.procs.resident);
	err |= kvlist__add_u64(m, "proctable_live_bytes", fp.procs.live);
	err |= kvlist__add_u64(m, "window_chunks_grown", ws->chunks_grown);
	err |= kvlist__add_u64(m, "window_chunks_released", ws->chunks_released);
	err |= kvlist__add_u64(m, "window_shrinks", ws->shrinks);
	err |= kvlist__add_u64(m, "tables_shrinks", fp.stacks.shrinks + fp.strings.shrinks +
			       fp.procs.shrinks + fp.stage.shrinks);
	err |= kvlist__add_u64(m, "tables_released", fp.stacks.released_bytes +
			       fp.strings.released_bytes + fp.procs.released_bytes +
			       fp.stage.released_bytes);
	return err;
}

/* The process table and its /proc reader, as bookkeeping. */
static int add_table_stats(struct daemon *dm, struct fr_kvlist *m)
{
	struct proctable_stats ps;
	struct procinfo_stats is;
	int err = 0;

	proctable__stats(drain__tables(dm->drain)->procs, &ps);
	procinfo__stats(dm->procinfo, &is);
	err |= kvlist__add_u64(m, "proctable_live", ps.live);
	err |= kvlist__add_u64(m, "proctable_capacity", ps.capacity);
	err |= kvlist__add_u64(m, "proctable_created", ps.created);
	err |= kvlist__add_u64(m, "proctable_freed", ps.freed);
	err |= kvlist__add_u64(m, "procinfo_reads", is.reads);
	err |= kvlist__add_u64(m, "procinfo_gone", is.gone);
	err |= kvlist__add_u64(m, "procinfo_exited", is.exited);
	err |= kvlist__add_u64(m, "procinfo_unchanged", is.unchanged);
	err |= kvlist__add_u64(m, "procinfo_rereads", is.rereads);
	err |= kvlist__add_u64(m, "procinfo_inherited", is.inherited);
	err |= kvlist__add_u64(m, "procinfo_code_eras", is.code_eras);
	err |= kvlist__add_u64(m, "procinfo_loader_rereads", is.loader_rereads);
	err |= add_cpu_counter(dm, m, "exit_maps_sent", FR_CNT_XMAPS);
	err |= kvlist__add_u64(m, "exit_maps_named", is.exit_maps);
	err |= kvlist__add_u64(m, "exit_maps_current", is.exit_maps_current);
	err |= kvlist__add_u64(m, "exit_maps_unnamed_files", is.exit_maps_unnamed);
	err |= add_python_meta(dm, m);
	err |= add_unwind_meta(dm, m);
	err |= add_lines_meta(m);
	err |= add_cache_meta(dm, m);
	err |= add_memory_meta(dm, m);
	err |= kvlist__add_s64(m, "oom_score_adj", dm->oom_score_adj);
	return err;
}

static int add_meta(struct daemon *dm, struct fr_kvlist *m)
{
	uint64_t b0 = fr_boottime_ns(), r = fr_clock_ns(CLOCK_REALTIME);
	uint64_t b1 = fr_boottime_ns();
	char *ini = config__render(dm->cfg);
	int err = 0;

	err |= kvlist__add_str(m, "flightrec_version", FR_VERSION);
	err |= kvlist__add_u64(m, "contract_version", FR_CONTRACT_VERSION);
	err |= kvlist__add_str(m, "host", dm->ident.host);
	err |= kvlist__add_str(m, "kernel", dm->ident.kernel);
	err |= kvlist__add_str(m, "boot_id", dm->ident.boot_id);
	err |= kvlist__add_u64(m, "ncpus", sampler__ncpus(dm->sampler));
	err |= kvlist__add_u64(m, "frequency", dm->cfg->frequency);
	err |= kvlist__add_u64(m, "rss_ledger", dm->cfg->rss_ledger);
	err |= kvlist__add_u64(m, "rss_step", dm->cfg->rss_step);
	err |= kvlist__add_u64(m, "rss_step_percent", dm->cfg->rss_step_pct);
	err |= kvlist__add_u64(m, "rss_max_age_ns", dm->cfg->rss_max_age_ns);
	err |= kvlist__add_u64(m, "page_size", (uint64_t)sysconf(_SC_PAGESIZE));
	err |= kvlist__add_u64(m, "memcg_read", memhist__stats(&dm->memhist)->last_count);
	err |= kvlist__add_u64(m, "stalls", dm->cfg->stalls);
	err |= kvlist__add_u64(m, "min_stall_ns", dm->cfg->min_stall_ns);
	err |= kvlist__add_u64(m, "offcpu", dm->cfg->offcpu);
	err |= kvlist__add_u64(m, "offcpu_sleep", dm->cfg->offcpu && dm->cfg->offcpu_sleep);
	err |= kvlist__add_u64(m, "min_block_ns", dm->cfg->min_block_ns);
	err |= kvlist__add_str(m, "event_source", sampler__source(dm->sampler));
	err |= kvlist__add_u64(m, "clock_boottime_ns", b0 + (b1 - b0) / 2);
	err |= kvlist__add_u64(m, "clock_realtime_ns", r);
	err |= kvlist__add_u64(m, "daemon_pid", getpid());
	err |= kvlist__add_u64(m, "page_size", sysconf(_SC_PAGESIZE));
	err |= kvlist__add_u64(m, "ring_bytes", sampler__ring_bytes(dm->sampler));
	err |= kvlist__add_u64(m, "window_reserved_bytes", drain__budget(dm->drain));
	err |= add_table_stats(dm, m);
	err |= kvlist__add_u64(m, "privacy_cmdline", dm->cfg->privacy_cmdline);
	err |= kvlist__add_str(m, "capabilities", dm->ident.caps);
	err |= kvlist__add_str(m, "config_path", dm->cfg->path ? dm->cfg->path : "");
	err |= kvlist__add_str(m, "config", ini ? ini : "");
	free(ini);
	return err ? -ENOMEM : 0;
}

/* What the unwind tables could not cover (LOSS). */
static int add_unwind_losses(struct daemon *dm, struct fr_kvlist *l)
{
	struct unwinder_stats us = { 0 };
	int err = 0;

	if (dm->unwinder)
		unwinder__stats(dm->unwinder, &us);
	err |= add_cpu_counter(dm, l, "unwind_stale_samples", FR_CNT_UNWIND_STALE);
	err |= add_cpu_counter(dm, l, "unwind_kernel_busy", FR_CNT_UNWIND_KBUSY);
	err |= kvlist__add_u64(l, "unwind_files_full", us.full);
	err |= kvlist__add_u64(l, "unwind_files_over_share", us.over_share);
	err |= kvlist__add_u64(l, "unwind_files_cold_no_room", us.cold_no_room);
	err |= kvlist__add_u64(l, "unwind_files_failed", us.failed);
	err |= kvlist__add_u64(l, "unwind_files_no_cfi", us.no_cfi);
	err |= kvlist__add_u64(l, "unwind_maps_over", us.maps_over);
	return err;
}

static int add_losses(struct daemon *dm, struct fr_kvlist *l)
{
	const struct window_stats *ws = window__stats(drain__tables(dm->drain)->win);
	const struct drain_stats *ds = drain__stats(dm->drain);
	struct proctable_stats ps;
	struct procinfo_stats is;
	int err = 0;

	proctable__stats(drain__tables(dm->drain)->procs, &ps);
	procinfo__stats(dm->procinfo, &is);
	err |= add_cpu_counter(dm, l, "bpf_reserve_failed", FR_CNT_RESERVE);
	err |= add_cpu_counter(dm, l, "bpf_scratch_failed", FR_CNT_SCRATCH);
	err |= add_cpu_counter(dm, l, "rss_untracked_mms", FR_CNT_RSS_FULL);
	err |= kvlist__add_u64(l, "memcg_skipped", memhist__stats(&dm->memhist)->skipped);
	err |= kvlist__add_u64(l, "memcg_read_failed", memhist__stats(&dm->memhist)->failed);
	err |= add_cpu_counter(dm, l, "stall_untracked", FR_CNT_STALL_UNTRACKED);
	err |= add_cpu_counter(dm, l, "stall_sums_full", FR_CNT_STALL_SUM_FULL);
	err |= add_cpu_counter(dm, l, "offcpu_no_user_stack", FR_CNT_OFFCPU_NOSTACK);
	err |= kvlist__add_u64(l, "stallsum_refused", stallsum__stats(&dm->stallsum)->failed);
	err |= kvlist__add_u64(l, "window_evicted_space", ws->evicted_space);
	err |= kvlist__add_u64(l, "window_evicted_pinned", ws->evicted_pinned);
	err |= kvlist__add_u64(l, "window_evicted_time", ws->evicted_time);
	err |= kvlist__add_u64(l, "drain_dropped", ds->dropped);
	err |= kvlist__add_u64(l, "drain_bad_records", ds->bad);
	err |= kvlist__add_u64(l, "drain_late", ds->late);
	err |= kvlist__add_u64(l, "drain_forced", ds->forced);
	err |= kvlist__add_u64(l, "drain_busy_passes", ds->busy_passes);
	err |= add_cpu_counter(dm, l, "unwind_copies_skipped", FR_CNT_UCOPY_SKIPPED);
	err |= add_cpu_counter(dm, l, "exit_maps_skipped", FR_CNT_XMAPS_SKIPPED);
	err |= kvlist__add_u64(l, "unwind_copies_expired", ds->ucopy_expired);
	err |= kvlist__add_u64(l, "unwind_copies_gave_up_full", ds->ucopy_gave_up_full);
	err |= kvlist__add_u64(l, "unwind_copies_gave_up_dump", ds->ucopy_gave_up_dump);
	err |= kvlist__add_u64(l, "unwind_copies_refused", ds->ucopy_refused);
	err |= kvlist__add_u64(l, "proctable_full", ps.full);
	err |= kvlist__add_u64(l, "procinfo_dropped", is.dropped);
	err |= kvlist__add_u64(l, "procinfo_deadline", is.deadline);
	err |= kvlist__add_u64(l, "procinfo_deadline_maps", is.deadline_maps);
	err |= add_unwind_losses(dm, l);
	return err ? -ENOMEM : 0;
}

/* The plan's firings as the dump's trigger records, victims aside. */
static int add_triggers(struct dump_request *req, const struct dump_plan *p)
{
	struct fr_dump *d = &req->model;

	d->trig = calloc(p->nfires, sizeof(*d->trig));
	req->victim_pid = calloc(p->nfires, sizeof(*req->victim_pid));
	req->victim_start = calloc(p->nfires, sizeof(*req->victim_start));
	if (!d->trig || !req->victim_pid || !req->victim_start)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nfires; i++) {
		const struct trigger_fire *f = &p->fires[i];
		struct fr_dump_trigger *t = &d->trig[d->ntrig++];

		t->name = strdup(f->name);
		t->type = strdup(f->type);
		t->reason = strdup(f->reason);
		t->detail = strdup(f->detail);
		t->ts = f->ts;
		req->victim_pid[i] = f->victim_pid;
		req->victim_start[i] = f->victim_start;
		if (!t->name || !t->type || !t->reason || !t->detail)
			return -ENOMEM;
	}
	return 0;
}

/*
 * dumpmeta__fill() - META, TRIG and LOSS of @req's model for plan @p, and
 * the OOM victims its triggers name. Returns 0 or -ENOMEM.
 */
int dumpmeta__fill(struct daemon *dm, const struct dump_plan *p, struct dump_request *req)
{
	int err = add_meta(dm, &req->model.meta);

	if (!err)
		err = add_triggers(req, p);
	if (!err && p->merged)
		err = kvlist__add_u64(&req->model.meta, "triggers_merged_unlisted", p->merged);
	if (!err)
		err = add_losses(dm, &req->model.loss);
	return err;
}
