#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Process truth: every sample, exit and counter belongs to the exact
incarnation (pid, start), even across PID reuse, after the binary is
deleted or replaced, when the main thread exits first, and under churn."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import (FLIGHTREC, memory_cgroup, FRSPIN, Daemon, Tap, daemon_env, events,  # noqa: E402
                     flightrec, processes, require_root_bpf, show, FRTOOL, remove_cgroup)


tap = Tap()
require_root_bpf(tap)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pid_reuse(d):
    p = subprocess.Popen([FRTOOL, "reuse", "1.2"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    rc = p.wait()
    if not line.isdigit() or rc != 0:
        tap.ok(False, "frtool reuse forked two incarnations of one PID",
               f"rc={rc} out={line!r} err={p.stderr.read()!r}")
        return
    pid = int(line)
    path = d.dump()
    evs = events(path) if path else []
    mine = [e for e in evs if e["pid"] == pid]
    starts = sorted({e["start"] for e in mine})
    tap.eq(len(starts), 2, f"PID {pid} appears as two incarnations (two start times)")
    if len(starts) != 2:
        return
    first, second = starts
    s1 = [e for e in mine if e["type"] == "sample" and e["start"] == first]
    s2 = [e for e in mine if e["type"] == "sample" and e["start"] == second]
    tap.ok(len(s1) >= 30 and len(s2) >= 30, f"both have samples ({len(s1)}, {len(s2)})")
    tap.ok(all("fr_reuse_first" in e["stack"] and "fr_reuse_second" not in e["stack"]
               for e in s1 if any(f.startswith("fr_reuse") for f in e["stack"])),
           "the first incarnation's samples show only fr_reuse_first")
    tap.ok(all("fr_reuse_second" in e["stack"] and "fr_reuse_first" not in e["stack"]
               for e in s2 if any(f.startswith("fr_reuse") for f in e["stack"])),
           "the second's show only fr_reuse_second")
    tap.ok(sum("fr_reuse_first" in e["stack"] for e in s1) >= len(s1) // 2 and
           sum("fr_reuse_second" in e["stack"] for e in s2) >= len(s2) // 2,
           "and most of them are in those functions")
    tap.ok(max(e["ts"] for e in s1) < min(e["ts"] for e in s2), "the first's samples all precede the second's")
    x1 = [e for e in mine if e["type"] == "exit" and e["start"] == first]
    x2 = [e for e in mine if e["type"] == "exit" and e["start"] == second]
    tap.ok(len(x1) == 1 and x1[0]["code"] == 11 << 8, "the first incarnation exited with status 11", x1)
    tap.ok(len(x2) == 1 and x2[0]["code"] == 22 << 8, "the second with status 22", x2)
    tap.ok(x1 and x1[0]["utime"] + x1[0]["stime"] > 5 * 10**8 and
           x2 and x2[0]["utime"] + x2[0]["stime"] > 5 * 10**8,
           "each exit carries that incarnation's own CPU time")
    procs = [x for x in processes(path) if x["pid"] == pid]
    tap.eq(sorted((x["start"], x["exit_code"]) for x in procs if x["exited"]),
           [(first, 11 << 8), (second, 22 << 8)],
           "the process table has both incarnations with their exits")
    rc, out, err = flightrec("processes", "--json", f"--pid={pid}", path)
    only = json.loads(out) if rc == 0 else []
    tap.ok(rc == 0 and sorted(x["start"] for x in only) == sorted(x["start"] for x in procs)
           and {x["pid"] for x in only} == {pid},
           f"processes --pid={pid} lists exactly its {len(procs)} incarnations", err)
    rc, out, _ = flightrec("processes", f"--pid={pid}", path)
    rows = [r.split() for r in out.splitlines()[1:]]
    tap.ok(rc == 0 and len(rows) == len(procs) and all(r[0] == str(pid) for r in rows),
           "and the table shows one row for each", out)
    forks = [e for e in evs if e["type"] == "fork" and e.get("child_pid") == pid]
    tap.eq(sorted(e["child_start"] for e in forks), starts, "each fork names its own child incarnation")


def deleted_binary(d, replace):
    tmp = tempfile.mkdtemp(prefix="fr-bin-")
    copy = os.path.join(tmp, "frspin-copy")
    shutil.copy(FRSPIN, copy)
    os.chmod(copy, 0o755)
    p = subprocess.Popen([copy, "--seconds", "1.2"])
    p.wait()
    what = "replaced" if replace else "deleted"
    if replace:
        other = os.path.join(tmp, "other")
        shutil.copy("/bin/true", other)
        os.rename(other, copy)
    else:
        os.unlink(copy)
    path = d.dump()
    evs = events(path) if path else []
    samples = [e for e in evs if e["pid"] == p.pid and e["type"] == "sample"]
    named = [e for e in samples if {"fr_spin_leaf", "fr_spin_middle", "fr_spin_outer", "main"}
             <= set(e["stack"])]
    tap.ok(len(samples) >= 30 and len(named) >= len(samples) // 2,
           f"{what} binary: the exited process's samples are fully symbolized "
           f"({len(named)}/{len(samples)})", samples[:2])
    procs = [x for x in processes(path) if x["pid"] == p.pid] if path else []
    tap.ok(procs and procs[0]["exe"].startswith(copy) and procs[0]["exited"],
           f"{what} binary: its exe path is in the process table", procs)
    tap.ok(procs and "--seconds" in procs[0]["cmdline"], f"{what} binary: and its cmdline")
    shutil.rmtree(tmp, ignore_errors=True)


def main_thread_exit(d):
    p = subprocess.Popen([FRTOOL, "pthread-exit", "2.0"])
    time.sleep(1.2)
    path = d.dump()
    evs = events(path) if path else []
    mine = [e for e in evs if e["pid"] == p.pid]
    tap.ok(not [e for e in mine if e["type"] == "exit"],
           "pthread_exit of the main thread is not a process exit")
    procs = [x for x in processes(path) if x["pid"] == p.pid] if path else []
    tap.ok(procs and procs[0]["live"] and not procs[0]["exited"], "the process is live in the dump", procs)
    starts = {e["start"] for e in mine}
    worker = [e for e in mine if e["type"] == "sample" and e["tid"] != p.pid and
              "fr_pthexit_worker" in e["stack"]]
    tap.ok(len(worker) >= 30 and len(starts) == 1 and procs and procs[0]["start"] in starts,
           f"the worker's samples are attributed to the process's incarnation ({len(worker)})")
    p.wait()
    path = d.dump()
    ex = [e for e in events(path) if e["pid"] == p.pid and e["type"] == "exit"] if path else []
    tap.ok(len(ex) == 1 and ex[0]["start"] in starts and ex[0]["tid"] != p.pid,
           "the exit comes when the last thread (the worker) ends", ex)


def lines_cache(d):
    """The daemon's DWARF line cache now (status --json "lines"), {} if unreadable."""
    p = subprocess.run([FLIGHTREC, "status", "--json", "--socket", d.socket],
                       capture_output=True, text=True)
    return json.loads(p.stdout).get("lines", {}) if p.returncode == 0 else {}


def churn(d):
    base = d.dump()
    m0 = show(base)["meta"] if base else {}
    rss0 = rss_kib(d.proc.pid)
    lc0 = lines_cache(d)
    for _ in range(3):
        subprocess.run([FRTOOL, "churn", "2000"], check=False)
    path = d.dump()
    m1 = show(path)["meta"] if path else {}
    tap.ok(m1.get("proctable_created", 0) - m0.get("proctable_created", 0) >= 1000,
           f"the fork storm created process entries ({m1.get('proctable_created', 0) - m0.get('proctable_created', 0)})")
    time.sleep(4.5)  # the window is 3 s: every churn event ages out
    path = d.dump()
    m2 = show(path)["meta"] if path else {}
    rss2 = rss_kib(d.proc.pid)
    lc2 = lines_cache(d)
    tap.diag(f"process table: {m0.get('proctable_live')} before, {m1.get('proctable_live')} "
             f"during, {m2.get('proctable_live')} after; daemon RSS {rss0} KiB -> {rss2} KiB")
    tap.diag(f"line cache: {lc0} before, {lc2} after")
    procs = processes(path)
    live = sum(1 for x in procs if x["live"])
    recent = sum(1 for x in procs if x["exited"])
    tap.ok(m2.get("proctable_live", 10**9) <= live + recent + 5,
           f"once the window passed, the table holds only live processes ({live}) and "
           f"those that exited within the window ({recent}): {m2.get('proctable_live')}")
    tap.ok(m2.get("proctable_live", 10**9) <= m0.get("proctable_live", 0) + 200,
           "which is near the baseline, not the thousands of the storm")
    # The storm's stacks reach libc, whose DWARF (libc6-dbg) the dumps read for
    # lines and keep: a cache with a budget of its own, judged apart.
    lines_kib = (lc2.get("bytes", 0) - lc0.get("bytes", 0)) // 1024
    tap.ok(lc2 and lc2.get("bytes", 1 << 60) <= lc2.get("budget", 0),
           f"the line cache is within its budget after the dumps ({lc2.get('bytes')} bytes, "
           f"budget {lc2.get('budget')})", lc2)
    tap.ok(rss2 - rss0 - lines_kib < 32 * 1024,
           f"the daemon's RSS stayed bounded (+{rss2 - rss0} KiB, of which the line cache "
           f"+{lines_kib} KiB)")
    tap.ok(not [x for x in procs if x["comm"] == "frtool" and x["exited"]],
           "no exited churn process lingers in the dump")


def exec_eras(d):
    p = subprocess.Popen([FRTOOL, "exec-after", "1.0", FRSPIN, "--seconds", "1.0"])
    p.wait()
    path = d.dump()
    evs = [e for e in events(path) if e["pid"] == p.pid] if path else []
    ex = [e for e in evs if e["type"] == "exec" and e["filename"].endswith("frspin")]
    tap.ok(len(ex) == 1, "one exec of frspin in the incarnation", ex)
    if not ex:
        return
    t = ex[0]["ts"]
    before = [e for e in evs if e["type"] == "sample" and e["ts"] < t]
    after = [e for e in evs if e["type"] == "sample" and e["ts"] > t]
    tap.ok(len({e["start"] for e in evs}) == 1, "exec keeps the incarnation")
    tap.ok(len(before) >= 30 and sum("fr_preexec_spin" in e["stack"] for e in before) >= len(before) // 2
           and not any("fr_spin_leaf" in e["stack"] for e in before),
           f"samples before the exec resolve in the old image ({len(before)})")
    tap.ok(len(after) >= 30 and sum("fr_spin_leaf" in e["stack"] for e in after) >= len(after) // 2
           and not any("fr_preexec_spin" in e["stack"] for e in after),
           f"samples after it in the new one ({len(after)})")


def dlopen_run(d, seconds):
    """frtool dlopen: 0.3 s after its exec it loads libfrdl.so and spins in it
    for @seconds. After its exit, a dump: (exit code, its samples, those
    that name fr_dl_spin, the dump's META, what to print on a failure)."""
    lib = os.environ.get("FRDL", "build/tests/integration/libfrdl.so")
    p = subprocess.Popen([FRTOOL, "dlopen", lib, str(seconds)])
    p.wait()
    path = d.dump()
    samples = [e for e in events(path) if e["pid"] == p.pid and e["type"] == "sample"] if path else []
    named = [e for e in samples if "fr_dl_spin" in e["stack"]]
    m = show(path)["meta"] if path else {}
    return p.returncode, samples, named, m, (samples[-2:], {k: v for k, v in m.items()
                                                             if k.startswith("procinfo_")})


def dlopen_after_start(d):
    rc, samples, named, m, why = dlopen_run(d, 1.2)
    tap.ok(rc == 0 and len(named) >= 30,
           f"a library dlopen'ed after the first read is symbolized after exit ({len(named)} "
           f"of {len(samples)})", why)
    # Re-read for its new stack's unknown address, or, the dlopen being in
    # the image's first second, as the loader's (either while it lived).
    rereads = m.get("procinfo_rereads", 0) + m.get("procinfo_loader_rereads", 0)
    tap.ok(rereads >= 1, f"because its maps were re-read while it lived ({rereads})", why)


def dlopen_young(d):
    """A library dlopen'ed 0.3 s after the exec, by a process that lives 0.7 s:
    its maps were read at the exec, before the library; the re-read that its
    new stacks ask for comes at once (the image's first second is the
    loader's), not after the 1 s rate limit, when it has exited."""
    rc, samples, named, m, why = dlopen_run(d, 0.4)
    tap.ok(rc == 0 and len(named) >= 25 and len(named) >= 0.8 * len(samples),
           f"a library dlopen'ed in a 0.7 s process's first second is named ({len(named)} of "
           f"{len(samples)} samples)", why)
    tap.ok(m.get("procinfo_loader_rereads", 0) >= 1,
           f"because its maps were read again at once (procinfo_loader_rereads "
           f"{m.get('procinfo_loader_rereads')})")


def jit_perf_map(d):
    p = subprocess.Popen([FRTOOL, "jit", "1.5"], stderr=subprocess.PIPE)
    time.sleep(1.0)
    path = d.dump()
    p.wait()
    if p.returncode == 3:
        tap.ok(True, "# SKIP JIT workload needs x86-64")
        return
    samples = [e for e in events(path) if e["pid"] == p.pid and e["type"] == "sample"] if path else []
    jitted = [e for e in samples if e["stack"] and e["stack"][0] == "fr_jit_spin"]
    tap.ok(len(jitted) >= 20, f"JIT code is named from /tmp/perf-PID.map ({len(jitted)}/{len(samples)})",
           samples[:2])
    try:
        os.unlink(f"/tmp/perf-{p.pid}.map")
    except OSError:
        pass


def oom_kill(d):
    cg = memory_cgroup(48 << 20)
    if not cg:
        tap.diag("no memory cgroup controller (v1 or v2) here: OOM kill not tested")
        tap.ok(True, "# SKIP no memory cgroup controller")
        return
    cgdir, procs_file = cg
    p = subprocess.Popen([FRTOOL, "hog", "512", procs_file], stdout=subprocess.PIPE, text=True)
    p.communicate(timeout=60)
    path = d.dump()
    evs = events(path) if path else []
    oom = [e for e in evs if e["type"] == "oom" and e["pid"] == p.pid]
    ex = [e for e in evs if e["type"] == "exit" and e["pid"] == p.pid]
    tap.ok(len(oom) == 1, f"the OOM kill of pid {p.pid} is an event (returncode {p.returncode})", oom)
    tap.ok(oom and oom[0]["rss_anon"] > 16 << 20, "with the victim's memory", oom)
    tap.ok(len(ex) == 1 and ex[0]["code"] & 0x7f == 9 and oom and ex[0]["start"] == oom[0]["start"],
           "and its exit by SIGKILL belongs to the same incarnation", ex)
    remove_cgroup(cgdir)


d = Daemon(tap, window="3s" if "churn" in sys.argv else "30s")
try:
    tap.ok(d.ready(), "flightrecd is ready", d.log())
    pid_reuse(d)
    deleted_binary(d, replace=False)
    deleted_binary(d, replace=True)
    main_thread_exit(d)
    exec_eras(d)
    dlopen_after_start(d)
    dlopen_young(d)
    jit_perf_map(d)
    oom_kill(d)
finally:
    d.cleanup()

env = daemon_env()	# the RSS is judged: ASan's quarantine kept small
if "quarantine_size_mb" in env.get("ASAN_OPTIONS", ""):
    tap.diag("ASan build: daemon runs with ASAN_OPTIONS=" + env["ASAN_OPTIONS"])
d = Daemon(tap, window="3s", env=env)
try:
    tap.ok(d.ready(), "flightrecd (3 s window) is ready", d.log())
    churn(d)
finally:
    d.cleanup()
tap.done()
