#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The recorder end to end: real BPF sampling of a CPU-bound workload with
known function names, SIGUSR1, and the dump read back with flightrec."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import (FRSPIN, Daemon, Tap, events, flightrec, lz4_test,  # noqa: E402
                     notify_socket, processes, require_root_bpf, show, write_config)

tap = Tap()
require_root_bpf(tap)

nsock_dir = __import__("tempfile").mkdtemp(prefix="fr-notify-")
nsock, npath = notify_socket(nsock_dir)
env = dict(os.environ, NOTIFY_SOCKET=npath)
d = Daemon(tap, window="20s", env=env)
try:
    tap.ok(d.ready(), "flightrecd logs a line ending in 'ready'", d.log())
    try:
        msg = nsock.recv(256).decode()
    except OSError as e:
        msg = str(e)
    tap.eq(msg, "READY=1", "READY=1 sent to NOTIFY_SOCKET")

    # Where the start-up's time went: logged after "ready", and in status.
    m = d.wait_line(r"start-up: ready (\d+) ms after it began: .* process scan \d+ ms "
                    r"\((\d+) processes\)", 5)
    rc, out, err = flightrec("status", "--json", "--socket", d.socket)
    su = __import__("json").loads(out).get("startup", {}) if rc == 0 else {}
    parts = sum(su.get(k, 0) for k in ("settings_ns", "bpf_maps_ns", "bpf_attach_ns",
                                       "workers_ns", "scan_ns"))
    nproc = len([p for p in os.listdir("/proc") if p.isdigit()])
    tap.ok(m is not None and su.get("ready_ns", 0) > 0 and 0 < parts <= su["ready_ns"] and
           su["bpf_maps_ns"] > 0 and nproc // 2 <= su.get("scan_processes", 0) <= 2 * nproc,
           f"the start-up's parts are logged and in status, and add up to no more than the "
           f"time to ready ({parts / 1e6:.0f} of {su.get('ready_ns', 0) / 1e6:.0f} ms; "
           f"{su.get('scan_processes')} processes scanned, {nproc} in /proc now)", (d.log(), su))

    spin = subprocess.Popen([FRSPIN, "--seconds", "3", "--threads", "2"])
    time.sleep(2.0)
    path = d.dump()
    tap.ok(path is not None and path.endswith(".frd"), "SIGUSR1 writes a .frd dump", d.log())
    spin.wait()
    tap.ok(path and os.path.dirname(path) == d.out, "into the configured directory")
    tap.eq(sorted(f for f in os.listdir(d.out) if not f.endswith(".frd")), [],
           "no temporary file left behind")
    tap.eq(os.stat(path).st_mode & 0o777, 0o600, "dump file mode 0600")
    rc = lz4_test(path)
    if rc is None:
        tap.diag("lz4 CLI not installed; skipping lz4 -t")
    tap.ok(rc in (0, None), "lz4 -t accepts the file")

    evs = events(path)
    ts = [e["ts"] for e in evs]
    tap.ok(len(evs) > 0, f"the dump holds events ({len(evs)})")
    tap.ok(all(a <= b for a, b in zip(ts, ts[1:])), "events are in time order")
    mine = [e for e in evs if e["pid"] == spin.pid]
    samples = [e for e in mine if e["type"] == "sample"]
    tap.ok(len(samples) >= 50, f"workload pid {spin.pid} has samples ({len(samples)})")
    tids = {e["tid"] for e in samples}
    tap.ok(len(tids) == 2, f"from both of its threads ({sorted(tids)})")
    full = [e for e in samples
            if {"fr_spin_leaf", "fr_spin_middle", "fr_spin_outer"} <= set(e["stack"])]
    tap.ok(len(full) >= len(samples) // 2,
           f"its stacks name fr_spin_leaf, fr_spin_middle, fr_spin_outer ({len(full)}/{len(samples)})",
           samples[:3])
    order_ok = all(e["stack"].index("fr_spin_leaf") < e["stack"].index("fr_spin_middle") <
                   e["stack"].index("fr_spin_outer") for e in full)
    tap.ok(order_ok, "leaf first, in call order")
    tap.ok(all(set(e) >= {"ts", "type", "pid", "tid", "start", "comm"} for e in evs),
           "every event has ts, type, pid, tid, start and comm")
    starts = {e["start"] for e in mine}
    tap.eq(len(starts), 1, "one incarnation start for the workload's events")
    execs = [e for e in mine if e["type"] == "exec"]
    tap.ok(len(execs) == 1 and execs[0]["filename"].endswith("frspin"),
           "the exec event names the workload binary", execs)
    forks = [e for e in evs if e["type"] == "fork" and e.get("child_pid") == spin.pid]
    tap.ok(len(forks) == 1 and forks[0]["child_start"] in starts,
           "the fork event names the child incarnation", forks)

    procs = processes(path)
    p = [x for x in procs if x["pid"] == spin.pid]
    tap.ok(len(p) == 1 and p[0]["start"] in starts, "the process table has the workload's incarnation", p)
    tap.ok(p and p[0]["comm"] == "frspin", "with its comm")
    live = [x for x in procs if x["live"]]
    tap.ok(any(x["pid"] == os.getpid() for x in live), "the snapshot lists live processes (this test)")
    tap.ok(len(live) >= 10, f"and the rest of the system ({len(live)} live)")
    me = [x for x in procs if x["pid"] == d.proc.pid]
    tap.ok(me and me[0]["exe"].endswith("flightrecd") and "--config" in me[0]["cmdline"],
           "with exe and cmdline read from /proc", me)

    s = show(path)
    tap.eq(s["triggers"][0]["type"], "signal", "show --json: trigger type")
    tap.ok(str(os.getpid()) in s["triggers"][0]["reason"], "the trigger names the sender's pid")
    tap.ok(abs((s["window"]["end"] - s["window"]["start"]) - 20 * 10**9) < 10**6,
           "the window spans the configured 20 s")
    tap.ok(s["window"]["watermark"] >= s["window"]["end"], "the watermark passed the trigger")
    tap.ok("bpf_reserve_failed" in s["losses"], "loss counters reach the dump")
    tap.eq(s["meta"]["frequency"], 99, "the sampling frequency is recorded")
    tap.ok(s["meta"]["event_source"] in ("cycles", "cpu-clock"), "and the event source")
    tap.ok("[recorder]" in s["meta"]["config"], "and the effective config")
    tap.ok(any(t["pid"] == spin.pid for t in s["top_processes"]), "the workload is a top process")
    rc, text, _ = flightrec("show", path)
    tap.ok(rc == 0 and "frspin" in text and "fr_spin_leaf" in text, "show prints a text summary")

    rc, folded, _ = flightrec("folded", path)
    line = [l for l in folded.splitlines() if l.startswith("frspin;")]
    tap.ok(rc == 0 and any("fr_spin_outer;fr_spin_middle;fr_spin_leaf" in l for l in line),
           "folded: comm;root;...;leaf, root first", line[:3])
    tap.ok(all(l.rsplit(" ", 1)[1].isdigit() for l in folded.splitlines()), "each line ends in a count")
    total = sum(int(l.rsplit(" ", 1)[1]) for l in folded.splitlines())
    tap.eq(total, len([e for e in evs if e["type"] == "sample"]), "folded counts add up to the samples")
    rc, folded_pid, _ = flightrec("folded", "--pid", path)
    tap.ok(any(l.startswith(f"frspin-{spin.pid};") for l in folded_pid.splitlines()),
           "folded --pid prefixes comm-PID")

    # The stacks were named as they entered the window: the dump copied their names.
    m = d.wait_line(r"dump written to .*, (\d+) stacks, ", 5)
    m2 = d.wait_line(r"dump took: freeze [\d.]+ ms, .* names [\d.]+ \((\d+) stacks named, (\d+) of "
                     r"them the daemon's own; the rest kept from before\), lines [\d.]+ \((\d+) frames "
                     r"looked up\), encode and write [\d.]+, fsync and rename [\d.]+", 5)
    rc, out, _ = flightrec("status", "--json", "--socket", d.socket)
    nm = __import__("json").loads(out).get("names", {}) if rc == 0 else {}
    # The daemon's own stacks are left to the dump (naming them ahead fed the
    # namer its own samples, and cost it CPU at all times for the dumps' sake).
    # A stack is named ahead once its event is 300 ms old (FR_NAME_AFTER_NS);
    # younger ones are the dump's by design (the harness's own, as it sends
    # the signal), with 200 ms more for the namer's 100 ms tick and 50 ms
    # slices (ASan: 18 of 33 named by the dump, most of them that young).
    last = max((e["ts"] for e in evs), default=0)
    first = {}
    for e in evs:
        if e["pid"] != d.proc.pid and e.get("stack"):
            first[tuple(e["stack"])] = min(first.get(tuple(e["stack"]), e["ts"]), e["ts"])
    young = sum(1 for ts in first.values() if ts >= last - 500 * 1000 * 1000)
    total = int(m.group(1)) if m else 0
    named, own = (int(m2.group(1)), int(m2.group(2))) if m2 else (0, 0)
    tap.ok(m and m2 and 0 <= own <= named and named - own <= young + (total - own - young) // 2,
           f"the dump named at most the young stacks ({young}) and half of the other processes' "
           f"older ones itself ({named - own} of {total - own}; and its own {own}): the rest were "
           f"named before the trigger", d.log()[-2000:])
    # Its threads are named (worker__start()), so that a dump tells them apart.
    # (io_uring's workers, iou-wrk-TID, are the kernel's threads in our process.)
    names = {"flightrecd", "fr-namer", "fr-dump", "fr-proc", "fr-attach"}
    threads = {e.get("comm") or "" for e in evs if e["pid"] == d.proc.pid and e["type"] == "sample"}
    tap.ok(threads & (names - {"flightrecd"}) and
           all(t in names or t.startswith("iou-") for t in threads),
           f"the daemon's threads are named in its samples ({sorted(threads)})")
    tap.ok(nm.get("named_ahead", 0) > 0 and 0 < nm.get("named_ahead", 0) <= nm.get("announced", 0) and
           0 < nm.get("bytes", 0) <= nm.get("budget", 0) and nm.get("queue_full", 1) == 0,
           "status: names kept between dumps, within their budget, none lost to a full queue",
           nm)

    # The workload has exited: the next dump has its exit with the counters.
    path2 = d.dump()
    ex = [e for e in events(path2) if e["pid"] == spin.pid and e["type"] == "exit"] if path2 else []
    tap.ok(len(ex) == 1 and ex[0]["code"] == 0 and ex[0]["start"] in starts,
           "the exit event of the workload's incarnation is in the next dump", ex)
    tap.ok(ex and ex[0]["utime"] + ex[0]["stime"] >= 2 * 10**9 and ex[0]["rss_peak"] > 0,
           "with CPU time and peak RSS at death", ex)

    # SIGHUP: a bad config is refused and the old one kept; a good one applies.
    with open(d.conf, "a") as f:
        f.write("bogus = 1\n")
    n = d.nlines()
    d.proc.send_signal(signal.SIGHUP)
    m = d.wait_line(r"failed to reload config: .*flightrec.conf:\d+.*bogus.*keeping", 10, n)
    tap.ok(m is not None, "SIGHUP with a bad config logs why and keeps the old one", d.log())
    tap.ok(d.dump() is not None, "and recording goes on")
    write_config(d.conf, window="7s", directory=d.out, socket=d.socket)
    n = d.nlines()
    d.proc.send_signal(signal.SIGHUP)
    tap.ok(d.wait_line(r"config reloaded .*window 7000 ms", 10, n) is not None, "SIGHUP applies a good config")
    path3 = d.dump()
    s3 = show(path3) if path3 else {}
    tap.ok(s3 and s3["window"]["end"] - s3["window"]["start"] == 7 * 10**9,
           "the next dump uses the new window", s3.get("window"))

    rc = d.stop()
    tap.eq(rc, 0, "SIGTERM stops cleanly with exit status 0")
    tap.ok("stopping" in d.log(), "and says so")
finally:
    d.cleanup()
    nsock.close()
    __import__("shutil").rmtree(nsock_dir, ignore_errors=True)

tap.done()
