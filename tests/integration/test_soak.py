#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Soak: minutes of fork/exit churn, PID reuse, periodic triggers and SIGHUP
reloads. The daemon's RSS, open fds and process table must stay flat.

Bounds (asserted after a warm-up of a fifth of the run):
  RSS grows by at most 24 MiB: the window's memory (16 MiB) is reserved at
  start and its pages count once first touched; the event ring's head walks
  through every slot before it laps (6 MiB of slots) and the tables touch
  more of their share as they fill, so RSS may rise through the run by up
  to the window's 16 MiB, which leaves 8 MiB for everything else;
  open fds vary by at most 8,
  the process table holds at most the live processes plus those that
  exited within the window, plus 100.
FR_SOAK_SECONDS sets the length (default 150).

The daemon runs as in production: without meson's MALLOC_PERTURB_ (glibc
then writes every byte it hands out or takes back, so reserved capacity
that a daemon never touches would count in RSS), and, in an ASan build,
with an 8 MiB quarantine instead of 256 MiB of held frees. LeakSanitizer
checks for leaks at exit."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import (Daemon, Tap, daemon_env, flightrec, processes,  # noqa: E402
                     require_root_bpf, show)

FRTOOL = os.environ.get("FRTOOL", "build/tests/integration/frtool")
SECONDS = int(os.environ.get("FR_SOAK_SECONDS", "150"))

tap = Tap()
require_root_bpf(tap)


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def nfds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


env = daemon_env()
if "quarantine_size_mb" in env.get("ASAN_OPTIONS", ""):
    tap.diag("ASan build: daemon runs with ASAN_OPTIONS=" + env["ASAN_OPTIONS"])
d = Daemon(tap, window="5s", memory="16M", output_extra="max_dumps = 5\n", env=env)
try:
    tap.ok(d.ready(), "daemon ready for the soak", d.log())
    start = time.monotonic()
    samples = []
    table = []
    next_sig = next_snap = next_hup = next_reuse = next_sample = start
    reuse_fail = 0
    churners = []
    while time.monotonic() - start < SECONDS and d.proc.poll() is None:
        now = time.monotonic()
        churners = [p for p in churners if p.poll() is None]
        if len(churners) < 2:
            churners.append(subprocess.Popen([FRTOOL, "churn", "300"]))
        if now >= next_reuse:
            reuse_fail += subprocess.run([FRTOOL, "reuse", "0.2"], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL).returncode != 0
            next_reuse = now + 10
        if now >= next_sig:
            d.proc.send_signal(signal.SIGUSR1)
            next_sig = now + 5
        if now >= next_snap:
            subprocess.Popen([os.environ.get("FLIGHTREC", "build/tools/flightrec"), "snapshot",
                              "--socket", d.socket], stdout=subprocess.DEVNULL)
            next_snap = now + 7
        if now >= next_hup:
            d.proc.send_signal(signal.SIGHUP)
            next_hup = now + 10
        if now >= next_sample:
            samples.append((now - start, rss_kib(d.proc.pid), nfds(d.proc.pid)))
            next_sample = now + 5
        time.sleep(0.2)
    for p in churners:
        p.wait()
    alive = d.proc.poll() is None
    tap.ok(alive, f"the daemon survived {SECONDS} s of churn, PID reuse, triggers and reloads")
    time.sleep(6)  # let the window pass the last churn
    path = d.dump()
    tap.ok(path is not None, "and still writes dumps")
    if path:
        live = sum(1 for p in processes(path) if p["live"])
        exited = sum(1 for p in processes(path) if p["exited"])
        table = show(path)["meta"]["proctable_live"]
        tap.ok(table <= live + exited + 100,
               f"process table flat: {table} entries for {live} live and {exited} recently exited")
    warm = [s for s in samples if s[0] >= SECONDS / 5]
    if warm:
        rss = [s[1] for s in warm]
        fds = [s[2] for s in warm]
        tap.diag("RSS KiB by second: " + " ".join(f"{int(t)}:{r}" for t, r, _ in samples))
        tap.diag(f"RSS KiB after warm-up: min {min(rss)} max {max(rss)}; fds: min {min(fds)} max {max(fds)}")
        tap.ok(max(rss) - min(rss) <= 24 * 1024, f"RSS flat within 24 MiB ({max(rss) - min(rss)} KiB)")
        tap.ok(max(fds) - min(fds) <= 8, f"open fds flat within 8 ({min(fds)}..{max(fds)})")
    tap.ok(len(d.dumps()) <= 5, f"retention kept the directory bounded ({len(d.dumps())} dumps)")
    tap.ok(d.log().count("config reloaded") >= SECONDS // 10 - 1, "every SIGHUP reloaded the config")
    tap.eq(reuse_fail, 0, "every PID reuse round ran")
    rc, out, _ = flightrec("status", "--socket", d.socket)
    tap.ok(rc == 0, "status still answers")
    tap.eq(d.stop(), 0, "and the daemon stops cleanly")
finally:
    d.cleanup()
tap.done()
