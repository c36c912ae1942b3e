// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * status.c - what "flightrec status" shows: recording state, window fill,
 * event rates and losses, every trigger with its state and last firing,
 * and the recent dumps. Text or one JSON object.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pycode.h"
#include "attacher.h"
#include "evtype.h"
#include "json.h"
#include "status.h"
#include "symbols.h"
#include "tables.h"
#include "text.h"
#include "util.h"

struct fill {
	uint64_t events, capacity, span_ns;
	uint64_t oldest, newest;
	struct intern_stats stacks, strs;
	struct proctable_stats procs;
};

static void window_fill(struct daemon *dm, struct fill *f)
{
	const struct drain_tables *t = drain__tables(dm->drain);
	uint64_t head = window__head(t->win), tail = window__tail(t->win);
	struct fr_event ev;

	memset(f, 0, sizeof(*f));
	f->events = head - tail;
	f->capacity = window__capacity(t->win);
	if (f->events && !window__read(t->win, tail, &ev))
		f->oldest = ev.ts;
	if (f->events && !window__read(t->win, head - 1, &ev))
		f->newest = ev.ts;
	f->span_ns = f->newest > f->oldest ? f->newest - f->oldest : 0;
	intern__stats(t->stacks, &f->stacks);
	intern__stats(t->strs, &f->strs);
	proctable__stats(t->procs, &f->procs);
}

static uint64_t cpu_sum(struct daemon *dm, enum fr_counter which)
{
	uint64_t v[4096], sum = 0;
	int n = sampler__counters(dm->sampler, which, v, FR_ARRAY_SIZE(v));

	for (int i = 0; i < n; i++)
		sum += v[i];
	return sum;
}

static const char *trig_state(struct daemon *dm, const struct trigger *t, char *buf, size_t len)
{
	uint64_t now = fr_boottime_ns();

	const struct psi_watch *w;

	for (size_t i = 0; (w = pressure__watch(&dm->pressure, i)); i++) {
		uint64_t at;

		if (&w->trig != t || psi_trigger__fd(w->psi) >= 0)
			continue;
		at = psi_trigger__retry_at(w->psi);
		snprintf(buf, len, "disarmed (source gone), retry in %.1f s",
			 (at - FR_MIN(now, at)) / 1e9);
		return buf;
	}
	if (t->last_fired && t->pol.cooldown_ns && now - t->last_fired < t->pol.cooldown_ns)
		snprintf(buf, len, "cooldown, %.1f s left",
			 (t->pol.cooldown_ns - (now - t->last_fired)) / 1e9);
	else
		snprintf(buf, len, "armed");
	return buf;
}

/* Every named trigger, in a fixed order. */
static size_t triggers(struct daemon *dm, const struct trigger **out, size_t max)
{
	size_t n = 0;

	out[n++] = &dm->trig.signal;
	out[n++] = &dm->trig.command;
	if (dm->trig.has_oom && n < max)
		out[n++] = &dm->trig.oom;
	for (size_t i = 0; pressure__watch(&dm->pressure, i) && n < max; i++)
		out[n++] = &pressure__watch(&dm->pressure, i)->trig;
	return n;
}


/* The unwind tables: files covered, memory, and what they left out. */
static void text_unwind(struct daemon *dm, FILE *f)
{
	struct attacher_stats as;
	struct unwinder_stats us;

	if (!dm->unwinder) {
		fprintf(f, "unwind: off (unwind_memory = 0): user stacks by frame pointer only\n");
		return;
	}
	unwinder__stats(dm->unwinder, &us);
	attacher__stats(dm->attacher, &as);
	fprintf(f, "unwind: tables built in the kernel %" PRIu64 " (busy %" PRIu64 "); "
		"first tables %" PRIu64 " (requests dropped %" PRIu64
		", yielded to a hotter process %" PRIu64 "); ", cpu_sum(dm, FR_CNT_UNWIND_KBUILT),
		cpu_sum(dm, FR_CNT_UNWIND_KBUSY), as.attached, as.dropped, as.yielded);
	fprintf(f, "%" PRIu64 " files (%" PRIu64 " idle), %" PRIu64 "/%" PRIu64
		" rows, %.1f MiB, %" PRIu64 " processes; built %" PRIu64 " in %.0f ms; full %" PRIu64
		", over an owner's share %" PRIu64 ", failed %" PRIu64 ", unopened %" PRIu64
		", stale %" PRIu64 "; ", us.files, us.idle, us.rows_used, us.rows_cap,
		us.bytes / 1048576.0, us.procs, us.built, us.build_ns / 1e6, us.full, us.over_share,
		us.failed, us.unopened, cpu_sum(dm, FR_CNT_UNWIND_STALE));
	fprintf(f, "cold (rows evicted while mapped) %" PRIu64 " (%" PRIu64 " now, built again %"
		PRIu64 ", no room %" PRIu64 "), moved %" PRIu64 "\n", us.cold, us.cold_now,
		us.refilled, us.cold_no_room, us.moved);
}

/* The tables' memory: resident against what their contents need. */
static void text_memory(struct daemon *dm, FILE *f)
{
	const struct window_stats *ws = window__stats(drain__tables(dm->drain)->win);
	struct drain_footprint fp;

	drain__footprint(dm->drain, &fp);
	fprintf(f, "memory: tables resident %.1f MiB for %.1f MiB of contents (window %.1f/%.1f, "
		"stacks %.1f/%.1f, strings %.1f/%.1f, processes %.1f/%.1f MiB); cap %.0f MiB; "
		"window chunks grown %" PRIu64 ", given back %" PRIu64 " in %" PRIu64 " shrinks; "
		"tables' shrinks: stacks %" PRIu64 ", strings %" PRIu64 ", processes %" PRIu64
		", staging %" PRIu64 "\n",
		fp.all.resident / 1048576.0, fp.all.live / 1048576.0,
		fp.window.resident / 1048576.0, fp.window.live / 1048576.0,
		fp.stacks.resident / 1048576.0, fp.stacks.live / 1048576.0,
		fp.strings.resident / 1048576.0, fp.strings.live / 1048576.0,
		fp.procs.resident / 1048576.0, fp.procs.live / 1048576.0,
		dm->cfg->memory_bytes / 1048576.0, ws->chunks_grown, ws->chunks_released, ws->shrinks,
		fp.stacks.shrinks, fp.strings.shrinks, fp.procs.shrinks, fp.stage.shrinks);
}

static void json_part(struct json *j, const char *name, const struct drain_footprint_part *p)
{
	json__obj(j, name);
	json__u64(j, "resident", p->resident);
	json__u64(j, "live", p->live);
	json__u64(j, "shrinks", p->shrinks);
	json__u64(j, "released", p->released_bytes);
	json__end_obj(j);
}

static void json_memory(struct daemon *dm, struct json *j)
{
	const struct window_stats *ws = window__stats(drain__tables(dm->drain)->win);
	struct drain_footprint fp;

	drain__footprint(dm->drain, &fp);
	json__obj(j, "memory");
	json__u64(j, "cap", dm->cfg->memory_bytes);
	json__u64(j, "resident", fp.all.resident);
	json__u64(j, "live", fp.all.live);
	json_part(j, "window", &fp.window);
	json_part(j, "stacks", &fp.stacks);
	json_part(j, "strings", &fp.strings);
	json_part(j, "processes", &fp.procs);
	json_part(j, "staging", &fp.stage);
	json__u64(j, "window_appended", ws->appended);
	json__u64(j, "window_chunks_grown", ws->chunks_grown);
	json__u64(j, "window_chunks_released", ws->chunks_released);
	json__u64(j, "window_shrinks", ws->shrinks);
	json__u64(j, "window_release_failed", ws->release_failed);
	json__end_obj(j);
}

/* The DWARF line handles dumps have read and kept. */
static void text_lines(FILE *f)
{
	struct fr_lines_stats ls;

	elfsyms__lines_stats(&ls);
	fprintf(f, "lines: %" PRIu64 " DWARF handles open, %.1f MiB (peak %.1f); "
		"opened %" PRIu64 ", evicted %" PRIu64 " (reads deferred to a dump %" PRIu64 "), "
		"failed %" PRIu64 "\n", ls.open, ls.bytes / 1048576.0, ls.peak / 1048576.0,
		ls.opened, ls.evicted, ls.deferred, ls.failed);
}

/* What the cache budget covers: symbols, process images, line handles. */
static void text_caches(struct daemon *dm, FILE *f)
{
	struct fr_lines_stats ls;
	struct symcache_stats ss;

	symcache__stats(dm->symcache, &ss, false);
	elfsyms__lines_stats(&ls);
	fprintf(f, "caches: %.1f of %.0f MiB; symbols %.1f MiB in %" PRIu64 " binaries (evicted %"
		PRIu64 ", refused %" PRIu64 "), images %.1f MiB for %" PRIu64 " processes (mappings "
		"left out %" PRIu64 "), lines %.1f MiB\n",
		(ss.bytes + ss.image_bytes + ls.bytes) / 1048576.0, ss.budget / 1048576.0,
		ss.bytes / 1048576.0, ss.entries, ss.evicted, ss.refused, ss.image_bytes / 1048576.0,
		ss.images, ss.maps_refused, ls.bytes / 1048576.0);
}

static void json_caches(struct daemon *dm, struct json *j)
{
	struct fr_lines_stats ls;
	struct symcache_stats ss;

	symcache__stats(dm->symcache, &ss, false);
	elfsyms__lines_stats(&ls);
	json__obj(j, "caches");
	json__u64(j, "budget", ss.budget);
	json__u64(j, "bytes", ss.bytes + ss.image_bytes + ls.bytes);
	json__obj(j, "symbols");
	json__u64(j, "bytes", ss.bytes);
	json__u64(j, "entries", ss.entries);
	json__u64(j, "loaded", ss.loaded);
	json__u64(j, "reloaded", ss.reloaded);
	json__u64(j, "evicted", ss.evicted);
	json__u64(j, "expired", ss.expired);
	json__u64(j, "refused", ss.refused);
	json__end_obj(j);
	json__obj(j, "images");
	json__u64(j, "bytes", ss.image_bytes);
	json__u64(j, "entries", ss.images);
	json__u64(j, "maps_refused", ss.maps_refused);
	json__end_obj(j);
	json__obj(j, "lines");
	json__u64(j, "bytes", ls.bytes);
	json__u64(j, "entries", ls.open);
	json__u64(j, "evicted", ls.evicted);
	json__end_obj(j);
	json__end_obj(j);
}

/* The names kept between dumps: named ahead of them, a dump copies them. */
static void text_names(struct daemon *dm, FILE *f)
{
	struct dumper_names n;

	dumper__names(dm->dumper, &n);
	fprintf(f, "names: %.1f of %.0f MiB, %" PRIu64 " stacks, %" PRIu64 " frames (compacted %"
		PRIu64 ", emptied %" PRIu64 "); %" PRIu64 " new stacks named ahead of dumps of %"
		PRIu64 " (queue full: %" PRIu64 ")\n", n.bytes / 1048576.0, n.budget / 1048576.0,
		n.stacks, n.frames, n.compactions, n.resets, n.named_ahead, n.announced, n.dropped);
}

static void json_names(struct daemon *dm, struct json *j)
{
	struct dumper_names n;

	dumper__names(dm->dumper, &n);
	json__obj(j, "names");
	json__u64(j, "bytes", n.bytes);
	json__u64(j, "budget", n.budget);
	json__u64(j, "stacks", n.stacks);
	json__u64(j, "frames", n.frames);
	json__u64(j, "resets", n.resets);
	json__u64(j, "compactions", n.compactions);
	json__u64(j, "announced", n.announced);
	json__u64(j, "named_ahead", n.named_ahead);
	json__u64(j, "queue_full", n.dropped);
	json__end_obj(j);
}

/* Samples walked on from a copy of their stack once their file had rows. */
static void json_copies(struct daemon *dm, const struct unwinder_stats *us, struct json *j)
{
	const struct drain_stats *ds = drain__stats(dm->drain);

	json__obj(j, "stack_copies");
	json__u64(j, "taken", cpu_sum(dm, FR_CNT_UCOPY));
	json__u64(j, "skipped", cpu_sum(dm, FR_CNT_UCOPY_SKIPPED));
	json__u64(j, "received", ds->ucopy);
	json__u64(j, "finished", ds->ucopy_finished);
	json__u64(j, "finished_after_exit", us->finished_after_exit);
	json__u64(j, "expired", ds->ucopy_expired);
	json__u64(j, "gave_up_staging_full", ds->ucopy_gave_up_full);
	json__u64(j, "gave_up_at_dump", ds->ucopy_gave_up_dump);
	json__u64(j, "waited_for_build", ds->ucopy_waited);
	json__u64(j, "refused", ds->ucopy_refused);
	json__u64(j, "held", drain__held(dm->drain));
	json__u64(j, "held_max", ds->ucopy_held_max);
	json__end_obj(j);
}

/* Exits that sent their code mappings, since the /proc worker had not read them. */
static void json_exit_maps(struct daemon *dm, const struct unwinder_stats *us,
			   struct json *j)
{
	struct procinfo_stats is;

	procinfo__stats(dm->procinfo, &is);
	json__obj(j, "exit_maps");
	json__u64(j, "sent", cpu_sum(dm, FR_CNT_XMAPS));
	json__u64(j, "skipped", cpu_sum(dm, FR_CNT_XMAPS_SKIPPED));
	json__u64(j, "received", drain__stats(dm->drain)->exit_maps);
	json__u64(j, "named", is.exit_maps);
	json__u64(j, "current", is.exit_maps_current);
	json__u64(j, "unnamed_files", is.exit_maps_unnamed);
	json__u64(j, "kept_for_copies", us->exits_kept);
	json__end_obj(j);
}

/* Python frames: samples with them, and the code objects read for their names. */
static void json_python(struct daemon *dm, struct json *j)
{
	const struct drain_stats *ds = drain__stats(dm->drain);
	struct pycache_stats ps = { 0 };

	if (dm->pycache)
		pycache__stats(dm->pycache, &ps);
	json__obj(j, "python");
	json__bool(j, "enabled", dm->cfg->python && dm->unwinder);
	json__u64(j, "samples", ds->py_samples);
	json__u64(j, "frames", ds->py_frames);
	json__u64(j, "sections_bad", ds->py_bad);
	json__u64(j, "unreadable", ds->py_unreadable);
	json__u64(j, "code_read", ps.read);
	json__u64(j, "code_refused", ps.refused);
	json__u64(j, "code_stale", ps.stale);
	json__u64(j, "code_gone", ps.gone);
	json__u64(j, "cache_entries", ps.entries);
	json__u64(j, "cache_bytes", ps.bytes);
	json__u64(j, "cache_budget", ps.budget);
	json__u64(j, "cache_resets", ps.resets);
	json__u64(j, "code_given_up", ps.given_up);
	json__end_obj(j);
}

static void json_unwind(struct daemon *dm, struct json *j)
{
	struct unwinder_stats us = { 0 };

	if (dm->unwinder)
		unwinder__stats(dm->unwinder, &us);
	json__obj(j, "unwind");
	json__bool(j, "enabled", dm->unwinder != NULL);
	json__bool(j, "kernel_build", dm->unwinder && sampler__kernel_tables(dm->sampler));
	json__u64(j, "files", us.files);
	json__u64(j, "rows_used", us.rows_used);
	json__u64(j, "rows_cap", us.rows_cap);
	json__u64(j, "bytes", us.bytes);
	json__u64(j, "processes", us.procs);
	json__u64(j, "files_built", us.built);
	json__u64(j, "build_ns", us.build_ns);
	json__u64(j, "files_full", us.full);
	json__u64(j, "files_over_share", us.over_share);
	json__u64(j, "files_cold", us.cold);
	json__u64(j, "files_cold_now", us.cold_now);
	json__u64(j, "files_refilled", us.refilled);
	json__u64(j, "files_cold_no_room", us.cold_no_room);
	json__u64(j, "files_moved", us.moved);
	json__u64(j, "files_failed", us.failed);
	json__u64(j, "files_idle", us.idle);
	json__u64(j, "mappings_unopened", us.unopened);
	json__u64(j, "files_no_cfi", us.no_cfi);
	json__u64(j, "maps_over", us.maps_over);
	json__u64(j, "tables_exited", us.exited);
	json__u64(j, "stale_samples", cpu_sum(dm, FR_CNT_UNWIND_STALE));
	json__u64(j, "kernel_tables", cpu_sum(dm, FR_CNT_UNWIND_KBUILT));
	json__u64(j, "kernel_busy", cpu_sum(dm, FR_CNT_UNWIND_KBUSY));
	json__u64(j, "kernel_tables_kept", us.kernel_tables);
	json_copies(dm, &us, j);
	json_exit_maps(dm, &us, j);
	json_python(dm, j);
	if (dm->attacher) {
		struct attacher_stats as;

		attacher__stats(dm->attacher, &as);
		json__u64(j, "first_tables", as.attached);
		json__u64(j, "first_table_requests_dropped", as.dropped);
		json__u64(j, "first_tables_yielded", as.yielded);
	}
	json__end_obj(j);
}

/* The DWARF line handles dumps have read and kept (elfsyms__lines()). */
static void json_lines(struct daemon *dm, struct json *j)
{
	struct fr_lines_stats ls;

	elfsyms__lines_stats(&ls);
	json__obj(j, "lines");
	json__u64(j, "open", ls.open);
	json__u64(j, "bytes", ls.bytes);
	json__u64(j, "bytes_peak", ls.peak);
	json__u64(j, "budget", ls.limit);	/* half the cache's, or the room it lends */
	json__u64(j, "opened", ls.opened);
	json__u64(j, "evicted", ls.evicted);
	json__u64(j, "deferred", ls.deferred);
	json__u64(j, "failed", ls.failed);
	json__end_obj(j);
}

static void text(struct daemon *dm, FILE *f)
{
	const struct trigger *tr[64];
	const struct drain_stats *ds = drain__stats(dm->drain);
	const struct window_stats *ws = window__stats(drain__tables(dm->drain)->win);
	const struct recent_dump *rd;
	uint64_t now = fr_boottime_ns();
	size_t nt = triggers(dm, tr, FR_ARRAY_SIZE(tr));
	struct fill fl;
	char st[96], reason[4 * FR_TRIGGER_TEXT + 1], counts[512];

	window_fill(dm, &fl);
	fprintf(f, "flightrecd %s, pid %d, up %.0f s, host %s\n", FR_VERSION, getpid(),
		(now - dm->started) / 1e9, dm->ident.host);
	fprintf(f, "recording: %d CPUs at %u Hz (%s), window %.1f s, dumps to %s\n",
		sampler__ncpus(dm->sampler), dm->cfg->frequency, sampler__source(dm->sampler),
		dm->cfg->window_ns / 1e9, daemon_output_dir(dm));
	fprintf(f, "window: %" PRIu64 " events covering %.1f s; events %" PRIu64 "/%" PRIu64
		" slots, stacks %" PRIu64 "/%" PRIu64 " blocks, strings %" PRIu64 "/%" PRIu64
		" blocks, processes %" PRIu64 "/%" PRIu64 "\n", fl.events, fl.span_ns / 1e9,
		fl.events, fl.capacity, fl.stacks.blocks_used, fl.stacks.blocks_total,
		fl.strs.blocks_used, fl.strs.blocks_total, fl.procs.live, fl.procs.capacity);
	evtype__text_counts(counts, sizeof(counts), ds->by_type);
	fprintf(f, "rates: %.1f records/s; totals: %s\n", history__rate(&dm->history), counts);
	fprintf(f, "losses: bpf reserve failed %" PRIu64 ", window evicted for space %" PRIu64
		", drain dropped %" PRIu64 ", late %" PRIu64 "\n", cpu_sum(dm, FR_CNT_RESERVE),
		ws->evicted_space, ds->dropped, ds->late);
	text_memory(dm, f);
	fprintf(f, "stalls: %s, off-CPU: %s; %" PRIu64 " stalls, %" PRIu64 " blocks recorded, %" PRIu64
		" sums of shorter ones from %" PRIu64 " processes; untracked %" PRIu64 ", sums full %" PRIu64
		", blocks without a user stack %" PRIu64 "\n", dm->cfg->stalls ? "on" : "off",
		!dm->cfg->offcpu ? "off" : dm->cfg->offcpu_sleep ? "D and S" : "D",
		ds->by_type[FR_EV_STALL], ds->by_type[FR_EV_OFFCPU], ds->by_type[FR_EV_STALLSUM],
		stallsum__stats(&dm->stallsum)->entries, cpu_sum(dm, FR_CNT_STALL_UNTRACKED),
		cpu_sum(dm, FR_CNT_STALL_SUM_FULL), cpu_sum(dm, FR_CNT_OFFCPU_NOSTACK));
	text_unwind(dm, f);
	text_lines(f);
	text_caches(dm, f);
	text_names(dm, f);
	fprintf(f, "triggers:\n");
	for (size_t i = 0; i < nt; i++) {
		fprintf(f, "  %-20s %-8s %-40s %-28s fired %" PRIu64 ", suppressed %" PRIu64,
			tr[i]->name, tr[i]->type, tr[i]->desc, trig_state(dm, tr[i], st, sizeof(st)),
			tr[i]->fired, tr[i]->suppressed);
		/* An OOM reason names the victim, whose comm its process chose. */
		if (tr[i]->last_fired)
			fprintf(f, ", last %.1f s ago: %s", (now - tr[i]->last_fired) / 1e9,
				fr_text_escape(tr[i]->last_reason, reason, sizeof(reason)));
		fputc('\n', f);
	}
	fprintf(f, "dumps: %" PRIu64 " written, %" PRIu64 " failed%s\n",
		history__written_count(&dm->history), history__failed_count(&dm->history),
		planner__plan(&dm->planner)->active ? ", one being prepared" :
		dumper__busy(dm->dumper) ? ", one being written" : "");
	for (uint32_t i = 0; (rd = history__recent(&dm->history, i)); i++) {

		fprintf(f, "  %s  %" PRIu64 " bytes, %" PRIu64 " events, %.1f s ago, triggers: %s\n",
			rd->path, rd->bytes, rd->events, (now - rd->ts) / 1e9, rd->triggers);
	}
}

/* Where the start-up's time went ("startup"): see struct daemon_startup. */
static void startup_json(const struct daemon *dm, struct json *j)
{
	const struct daemon_startup *su = &dm->startup;

	json__obj(j, "startup");
	json__u64(j, "ready_ns", su->ready_ns);
	json__u64(j, "settings_ns", su->before_bpf_ns);
	json__u64(j, "bpf_maps_ns", su->bpf.maps_ns);
	json__u64(j, "bpf_attach_ns", su->bpf.attach_ns);
	json__u64(j, "workers_ns", su->workers_ns);
	json__u64(j, "scan_ns", su->scan_ns);
	json__u64(j, "scan_processes", su->scan_procs);
	json__u64(j, "unwinder_ns", sampler__unwinder_ns(dm->sampler));
	json__u64(j, "late_programs_ns", su->late_ns);
	json__end_obj(j);
}

static void json(struct daemon *dm, FILE *f)
{
	const struct trigger *tr[64];
	const struct drain_stats *ds = drain__stats(dm->drain);
	const struct window_stats *ws = window__stats(drain__tables(dm->drain)->win);
	const struct recent_dump *rd;
	uint64_t now = fr_boottime_ns();
	size_t nt = triggers(dm, tr, FR_ARRAY_SIZE(tr));
	struct fill fl;
	struct json j;
	char st[96];

	window_fill(dm, &fl);
	json__init(&j, f);
	json__obj(&j, NULL);
	json__str(&j, "version", FR_VERSION);
	json__u64(&j, "pid", getpid());
	json__u64(&j, "uptime_ns", now - dm->started);
	json__str(&j, "state", dm->loop.stopping ? "stopping" : "recording");
	json__u64(&j, "ncpus", sampler__ncpus(dm->sampler));
	json__u64(&j, "frequency", dm->cfg->frequency);
	json__str(&j, "event_source", sampler__source(dm->sampler));
	json__str(&j, "output_directory", daemon_output_dir(dm));
	startup_json(dm, &j);
	json__obj(&j, "window");
	json__u64(&j, "configured_ns", dm->cfg->window_ns);
	json__u64(&j, "covered_ns", fl.span_ns);
	json__u64(&j, "events", fl.events);
	json__u64(&j, "event_slots", fl.capacity);
	json__u64(&j, "event_bytes", fl.events * sizeof(struct fr_event));
	json__u64(&j, "stack_blocks_used", fl.stacks.blocks_used);
	json__u64(&j, "stack_blocks", fl.stacks.blocks_total);
	json__u64(&j, "string_blocks_used", fl.strs.blocks_used);
	json__u64(&j, "string_blocks", fl.strs.blocks_total);
	json__u64(&j, "processes", fl.procs.live);
	json__u64(&j, "process_capacity", fl.procs.capacity);
	json__u64(&j, "reserved_bytes", drain__budget(dm->drain));
	json__end_obj(&j);
	json__obj(&j, "rates");
	json__f64(&j, "records_per_s", history__rate(&dm->history));
	evtype__json_counts(&j, ds->by_type);
	json__u64(&j, "rss_unowned", cpu_sum(dm, FR_CNT_RSS_UNOWNED));
	json__end_obj(&j);
	json__obj(&j, "stalls");
	json__bool(&j, "stalls", dm->cfg->stalls);
	json__bool(&j, "offcpu", dm->cfg->offcpu);
	json__bool(&j, "offcpu_sleep", dm->cfg->offcpu && dm->cfg->offcpu_sleep);
	json__u64(&j, "min_stall_ns", dm->cfg->min_stall_ns);
	json__u64(&j, "min_block_ns", dm->cfg->min_block_ns);
	json__u64(&j, "sum_entries", stallsum__stats(&dm->stallsum)->entries);
	json__u64(&j, "untracked", cpu_sum(dm, FR_CNT_STALL_UNTRACKED));
	json__u64(&j, "sums_full", cpu_sum(dm, FR_CNT_STALL_SUM_FULL));
	json__u64(&j, "offcpu_no_user_stack", cpu_sum(dm, FR_CNT_OFFCPU_NOSTACK));
	json__end_obj(&j);
	json_memory(dm, &j);
	json_unwind(dm, &j);
	json_lines(dm, &j);
	json_caches(dm, &j);
	json_names(dm, &j);
	json__obj(&j, "losses");
	json__u64(&j, "bpf_reserve_failed", cpu_sum(dm, FR_CNT_RESERVE));
	json__u64(&j, "window_evicted_space", ws->evicted_space);
	json__u64(&j, "drain_dropped", ds->dropped);
	json__u64(&j, "drain_late", ds->late);
	json__end_obj(&j);
	json__arr(&j, "triggers");
	for (size_t i = 0; i < nt; i++) {
		json__obj(&j, NULL);
		json__str(&j, "name", tr[i]->name);
		json__str(&j, "type", tr[i]->type);
		json__str(&j, "description", tr[i]->desc);
		json__str(&j, "state", trig_state(dm, tr[i], st, sizeof(st)));
		json__u64(&j, "fired", tr[i]->fired);
		json__u64(&j, "suppressed", tr[i]->suppressed);
		json__u64(&j, "last_fired", tr[i]->last_fired);
		json__str(&j, "last_reason", tr[i]->last_reason);
		json__end_obj(&j);
	}
	json__end_arr(&j);
	json__obj(&j, "dumps");
	json__u64(&j, "written", history__written_count(&dm->history));
	json__u64(&j, "failed", history__failed_count(&dm->history));
	json__bool(&j, "preparing", planner__plan(&dm->planner)->active);
	json__bool(&j, "writing", dumper__busy(dm->dumper));
	json__arr(&j, "recent");
	for (uint32_t i = 0; (rd = history__recent(&dm->history, i)); i++) {

		json__obj(&j, NULL);
		json__str(&j, "path", rd->path);
		json__u64(&j, "bytes", rd->bytes);
		json__u64(&j, "events", rd->events);
		json__u64(&j, "ts", rd->ts);
		json__str(&j, "triggers", rd->triggers);
		json__end_obj(&j);
	}
	json__end_arr(&j);
	json__end_obj(&j);
	json__end_obj(&j);
	fputc('\n', f);
}

/* status__render() - the status as text or JSON; malloc'd, NULL on ENOMEM. */
char *status__render(struct daemon *dm, bool as_json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (as_json)
		json(dm, f);
	else
		text(dm, f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
