#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Memory truth: the RSS ledger against the kernel's own counts (VmRSS, the
death counters, dmesg's OOM report, the memory cgroup's files), per
incarnation across PID reuse, attributed to the owner when another task
reclaims its pages; the OOM dossier; identity in a PID namespace and a
cgroup of its own. Workloads: tests/workloads/frmem.c."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import (Daemon, Tap, events, flightrec, memory_cgroup, processes,  # noqa: E402
                     require_root_bpf, FRMEM, remove_cgroup)

MIB = 1 << 20
STEP = 4 * MIB          # the default rss_step
PCT = 0.02              # and rss_step_percent

tap = Tap()
require_root_bpf(tap)


def tolerance(value):
    """How far a logged value may be from the truth: the step, or 2 % of it."""
    return max(STEP, value * PCT) + 2 * PCT * value


def curve_of(evs, pid, start):
    """[(changed_ns, total, members, entry)] of incarnation (pid, start)."""
    cur = {}
    out = []
    for e in evs:
        if e["type"] != "rss" or e["pid"] != pid or e["start"] != start:
            continue
        cur[e["member"]] = e["value"]
        total = cur.get("file", 0) + cur.get("anon", 0) + cur.get("shmem", 0)
        out.append((e["changed_ns"], total, dict(cur), e))
    return out


def at(curve, ts):
    """The curve's value as of @ts (the last entry reached by then), or None."""
    v = None
    for changed, total, _, _ in curve:
        if changed <= ts:
            v = total
    return v


def run_lines(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, timeout=120, **kw)
    return p.returncode, p.stdout.splitlines(), p.stderr


def rss_curve(d):
    rc, lines, err = run_lines([FRMEM, "curve"])
    if not tap.ok(rc == 0, "frmem curve ran", err):
        return
    pid = int(lines[0].split()[1])
    steps = {int(w[1]): (int(w[2]), int(w[3]), int(w[4]) * 1024)
             for w in (l.split() for l in lines[1:]) if w[0] == "step"}
    time.sleep(1.5)
    path = d.dump()
    evs = events(path) if path else []
    starts = {e["start"] for e in evs if e["pid"] == pid and e["type"] == "rss"}
    if not tap.eq(len(starts), 1, f"frmem {pid}: one incarnation in the ledger"):
        return
    start = starts.pop()
    cv = curve_of(evs, pid, start)
    tap.diag(f"{len(cv)} ledger entries for {pid}; steps {steps}")
    nexts = {1: steps[2][0], 2: steps[3][0], 3: None}
    exits = [e for e in evs if e["type"] == "exit" and e["pid"] == pid and e["start"] == start]
    for k in (1, 2, 3):
        begin, end, truth = steps[k]
        until = nexts[k] if nexts[k] else (exits[0]["ts"] if exits else end + 10**9)
        v = at(cv, until - 1)
        tap.ok(v is not None and abs(v - truth) <= tolerance(truth),
               f"step {k}: the ledger reaches VmRSS's plateau {truth / MIB:.1f} MiB before the next "
               f"step (logged {v and v / MIB:.1f} MiB, allowed +-{tolerance(truth) / MIB:.1f})")
        # the entry that reached it was stamped inside the step
        after = steps[k - 1][1] if k > 1 else 0   # a fall passes the way a rise came: not before
        reach = [c for c in cv if abs(c[1] - truth) <= tolerance(truth) and after <= c[0] < until]
        first = reach[0][0] if reach else None
        tap.ok(first is not None and begin <= first <= end + 1,
               f"step {k}: stamped within the step's interval "
               f"({first and (first - begin) / 1e6:.1f} ms after its start; it lasted "
               f"{(end - begin) / 1e6:.1f} ms)")
    if not tap.eq(len(exits), 1, "the death counters are in the dump"):
        return
    x = exits[0]
    last = cv[-1][2] if cv else {}
    tap.ok(last.get("anon") == x["rss_anon"] and last.get("file") == x["rss_file"] and
           last.get("shmem", 0) == x["rss_shmem"],
           f"the ledger ends equal to the death counters (ledger {last}, exit anon "
           f"{x['rss_anon']} file {x['rss_file']} shmem {x['rss_shmem']})")
    tap.ok(cv and cv[-1][3]["why"] in ("exit", "age", "step") and cv[-1][0] <= x["ts"],
           "its last entry precedes the exit")
    rc, out, err = flightrec("memory", "--json", path)
    mem = json.loads(out) if rc == 0 else {}
    g = [p for p in mem.get("growers", []) if p["pid"] == pid and p["start"] == start]
    rise = steps[2][2] - (at(cv, steps[1][0] - 1) or 0)
    tap.ok(g and abs(g[0]["rise"] - rise) <= tolerance(steps[2][2]) and
           # it starts at step 1, or at a small rise of its own before it (stdio buffers)
           start <= g[0]["rise_from_ts"] <= steps[1][1] and
           steps[2][0] <= g[0]["rise_to_ts"] <= steps[2][1] + 1,
           f"flightrec memory: a rise of {g and g[0]['rise'] / MIB:.1f} MiB from step 1 to the "
           f"end of step 2 (VmRSS: {rise / MIB:.1f} MiB)", err or (g, steps))
    rc, out, _ = flightrec("memory", path)
    tap.ok(rc == 0 and re.search(rf"^\s+{pid}\s", out, re.M) is not None,
           "its text view lists the process among the growers", out[:2000])
    rc, out, _ = flightrec("events", "--type", "rss", f"--pid={pid}", path)
    tap.ok(rc == 0 and out.count("\n") == len(cv) and all(" rss " in l for l in out.splitlines()),
           f"events --type rss --pid={pid} lists exactly its {len(cv)} entries")
    exports(path, pid, start, cv)


def exports(path, pid, start, cv):
    """The Chrome trace's counter track and the report's memory timeline."""
    p = subprocess.run([os.environ.get("FLIGHTREC", "build/tools/flightrec"), "export", "--format",
                        "chrome", path], capture_output=True)
    tr = json.loads(p.stdout) if p.returncode == 0 else {"traceEvents": []}
    names = {e["pid"]: e["args"]["name"] for e in tr["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    track = [k for k, v in names.items() if f"{pid}" in v]
    cnt = [e for e in tr["traceEvents"] if e.get("ph") == "C" and e.get("name") == "RSS" and
           e["pid"] in track]
    tap.ok(len(cnt) == len(cv) and cnt and
           max(e["args"]["anon"] + e["args"]["file"] + e["args"]["shmem"] for e in cnt) ==
           max(t for _, t, _, _ in cv),
           f"the Chrome trace has an RSS counter track on the process ({len(cnt)} points, "
           f"peak as the ledger's)")
    tap.ok(any(e.get("ph") == "C" and e.get("name") == "memory system" for e in tr["traceEvents"]),
           "and a counter track of the system's memory")
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "r.html")
        rc, _, err = flightrec("report", "-o", page, path)
        text = open(page, encoding="utf-8").read() if rc == 0 else ""
    m = re.search(r'<script type="application/json" id="fr-data">(.*?)</script>', text, re.S)
    data = json.loads(m.group(1)) if m else {}
    procs = data.get("procs", [])
    fields = data.get("proc_fields", [])
    idx = [i for i, r in enumerate(procs) if r[fields.index("pid")] == pid] if fields else []
    mem = data.get("memory", {})
    curves = [c for c in mem.get("curves", []) if c["proc"] in idx]
    tap.ok(curves and max(curves[0]["v"]) == max(t for _, t, _, _ in cv) and
           'id="sec-memory"' in text and mem.get("sys", {}).get("t"),
           "the report's memory timeline has its curve and the system's MemAvailable", err)


def pid_reuse(d):
    rc, lines, err = run_lines([FRMEM, "reuse", "48", "160"])
    if not tap.ok(rc == 0, "frmem reuse made two incarnations of one PID", err):
        return
    pid = int(lines[0].split()[1])
    inc = {int(w[1]): (int(w[2]), int(w[3]), int(w[4]), int(w[5]) * 1024)
           for w in (l.split() for l in lines[1:]) if w[0] == "inc"}
    time.sleep(1.2)
    path = d.dump()
    evs = events(path) if path else []
    starts = sorted({e["start"] for e in evs if e["pid"] == pid and e["type"] == "rss"})
    if not tap.eq(len(starts), 2, f"PID {pid}: two incarnations in the ledger"):
        return
    c1, c2 = curve_of(evs, pid, starts[0]), curve_of(evs, pid, starts[1])
    p1 = max(t for _, t, _, _ in c1)
    p2 = max(t for _, t, _, _ in c2)
    tap.ok(abs(p1 - inc[1][3]) <= tolerance(inc[1][3]) and abs(p2 - inc[2][3]) <= tolerance(inc[2][3]),
           f"each reaches its own VmRSS: {p1 / MIB:.1f} vs {inc[1][3] / MIB:.1f} MiB, "
           f"{p2 / MIB:.1f} vs {inc[2][3] / MIB:.1f} MiB")
    tap.ok(p1 < inc[2][3] - tolerance(inc[2][3]),
           "none of the second's values lands on the first (its peak stays below the second's)")
    tap.ok(max(c for c, _, _, _ in c1) < min(c for c, _, _, _ in c2),
           "the first's entries all precede the second's")


def reclaim_by_others(d):
    cg = memory_cgroup(64 * MIB)
    if not cg:
        tap.ok(False, "a memory cgroup for the reclaim case (no memory controller)")
        return
    cgdir, procs = cg
    tmp = tempfile.mkdtemp(prefix="fr-mem-")
    holder = subprocess.Popen([FRMEM, "maphold", procs, "256", "6", os.path.join(tmp, "f")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = holder.stdout.readline().split()
        if not tap.ok(ready and ready[0] == "ready",
                      "frmem maphold wrote, mapped and read a 256 MiB file in a 64 MiB cgroup", ready):
            return
        hpid, rss0 = int(ready[1]), int(ready[2]) * 1024
        # Others in the cgroup need the memory: their charges reclaim the holder's pages.
        for _ in range(3):
            subprocess.run([FRMEM, "hog", "40", procs, "0"], capture_output=True, timeout=60)
        end = holder.stdout.readline().split()
        holder.wait(30)
        if not tap.ok(end and end[0] == "end", "the holder held its mapping to the end",
                      (holder.returncode, holder.stderr.read())):
            return
        rss1 = int(end[1]) * 1024
        path = d.dump()
        evs = events(path) if path else []
        mine = [e for e in evs if e["type"] == "rss" and e["pid"] == hpid and e["member"] == "file"]
        by = [e for e in mine if e["by_pid"] and e["by_pid"] != hpid]
        tap.diag(f"holder {hpid}: VmRSS {rss0 / MIB:.1f} -> {rss1 / MIB:.1f} MiB; {len(mine)} file "
                 f"entries, {len(by)} made by others: {sorted({e['by_pid'] for e in by})}")
        tap.ok(rss1 < rss0 - 8 * MIB, "the holder lost pages to the others' reclaim (VmRSS says)")
        tap.ok(by and all(e["pid"] == hpid for e in by),
               "its file RSS decreases are logged on it, made by other processes")
        lo = min((e["value"] for e in mine if e["changed_ns"] <= int(end[2])), default=None)
        tap.ok(lo is not None and lo <= rss1 + tolerance(rss0),
               f"and reach VmRSS's low ({lo and lo / MIB:.1f} MiB logged, VmRSS {rss1 / MIB:.1f} MiB)")
    finally:
        if holder.poll() is None:
            holder.kill()
        subprocess.run(["rm", "-rf", tmp])
        time.sleep(0.3)
        remove_cgroup(cgdir)


def dmesg_kill(pid):
    """dmesg's "Killed process PID" line as a dict of its fields, or None."""
    out = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    rx = re.compile(rf"Killed process {pid} \(([^)]*)\) total-vm:(\d+)kB, anon-rss:(\d+)kB, "
                    rf"file-rss:(\d+)kB, shmem-rss:(\d+)kB, UID:(\d+) pgtables:(\d+)kB "
                    rf"oom_score_adj:(-?\d+)")
    m = None
    for m in rx.finditer(out):
        pass
    if not m:
        return None
    return {"comm": m.group(1), "total_vm": int(m.group(2)) * 1024, "anon": int(m.group(3)) * 1024,
            "file": int(m.group(4)) * 1024, "shmem": int(m.group(5)) * 1024,
            "pgtables": int(m.group(7)) * 1024, "adj": int(m.group(8))}


def oom_dossier(d):
    cg = memory_cgroup(64 * MIB)
    if not cg:
        tap.ok(False, "a memory cgroup for the OOM case (no memory controller)")
        return
    cgdir, procs = cg
    rel = "/" + os.path.basename(cgdir)
    limit = int(open(os.path.join(cgdir, "memory.limit_in_bytes" if os.path.exists(
        os.path.join(cgdir, "memory.limit_in_bytes")) else "memory.max")).read())
    sleeper = subprocess.Popen([FRMEM, "sleeper", procs, "300", "8"], stdout=subprocess.PIPE,
                               text=True)
    try:
        spid = int(sleeper.stdout.readline().split()[1])
        with open(f"/proc/{spid}/oom_score_adj") as f:
            sadj = int(f.read())
        hog = subprocess.Popen([FRMEM, "hog", "256", procs, "800"], stdout=subprocess.PIPE, text=True)
        hpid = int(hog.stdout.readline().split()[1])
        rc = hog.wait(60)
        tap.ok(rc == -9, f"the hog ({hpid}) was OOM-killed (rc {rc})")
        time.sleep(1.0)
        path = d.dump()
        evs = events(path) if path else []
        ooms = [e for e in evs if e["type"] == "oom" and e["pid"] == hpid]
        if not tap.eq(len(ooms), 1, "one OOM event for the hog"):
            return
        o = ooms[0]
        tap.ok(o.get("invoker_pid") == hpid and o.get("invoker_comm") == "frmem",
               f"the invoker is the hog itself, whose allocation ran out ({o.get('invoker_pid')})")
        stack = o.get("invoker_stack", [])
        tap.ok(any("fault" in f for f in stack) and any(f.startswith("touch") for f in stack) and
               any(f.startswith("__libc_start_main") for f in stack),
               "its stack: the page fault in frmem's touch, walked down through Debian's libc "
               "(no frame pointers) to __libc_start_main", stack[:40])
        tap.ok(o.get("memcg") == rel and o.get("memcg_limit") == limit and not o.get("global"),
               f"the memory cgroup at its limit: {o.get('memcg')} limit {o.get('memcg_limit')} "
               f"(memory file: {rel}, {limit})")
        k = dmesg_kill(hpid)
        tap.ok(k is not None and k["anon"] == o["rss_anon"] and k["file"] == o["rss_file"] and
               k["shmem"] == o["rss_shmem"] and k["adj"] == o["oom_score_adj"] == 800 and
               k["pgtables"] == o["pgtables"],
               f"it matches dmesg's Killed process line ({k}; dump: anon {o['rss_anon']} file "
               f"{o['rss_file']} shmem {o['rss_shmem']} pgtables {o['pgtables']} "
               f"adj {o['oom_score_adj']})")
        rc, out, err = flightrec("memory", "--json", path)
        mem = json.loads(out) if rc == 0 else {}
        doss = [x for x in mem.get("ooms", []) if x["pid"] == hpid]
        cands = doss[0]["candidates"] if doss else []
        sc = [c for c in cands if c["pid"] == spid]
        tap.ok(sc and sc[0]["oom_score_adj"] == sadj == 300 and sc[0]["memcg"] == rel,
               f"the candidates list the sleeper with its oom_score_adj as /proc had it ({sadj})",
               err or cands)
        tap.ok(all(c["memcg"].startswith(rel) for c in cands), "and only processes of that cgroup")
        adj = [e for e in evs if e["type"] == "oom_score_adj" and e["pid"] in (spid, hpid)]
        tap.ok({(e["pid"], e["oom_score_adj"]) for e in adj} >= {(spid, 300), (hpid, 800)},
               "both oom_score_adj writes are events of the window", adj)
        rc, out, _ = flightrec("memory", path)
        tap.ok(rc == 0 and "invoked by" in out and rel in out, "the text view shows the dossier",
               out[-3000:])
    finally:
        sleeper.kill()
        sleeper.wait()
        time.sleep(0.3)
        remove_cgroup(cgdir)


def container(d):
    cg = memory_cgroup(512 * MIB)
    if not cg:
        tap.ok(False, "a memory cgroup for the container case (no memory controller)")
        return
    cgdir, procs = cg
    rel = "/" + os.path.basename(cgdir)
    p = subprocess.Popen(["unshare", "--pid", "--fork", "--", FRMEM, "sleeper", procs, "0", "6"],
                         stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline().split()
        tap.ok(line and line[1] == "1", f"the sleeper is pid 1 in its own PID namespace ({line})")
        host = [int(x) for x in open(os.path.join(cgdir, "cgroup.procs")).read().split()]
        time.sleep(1.0)
        path = d.dump()
        procs_ = processes(path) if path else []
        mine = [x for x in procs_ if x["pid"] in host]
        tap.ok(len(mine) == 1 and mine[0]["nspid"] == 1 and mine[0]["memcg"] == rel,
               f"recorded with its host pid {host}, NSpid 1 and cgroup {rel}", mine)
        rc, out, _ = flightrec("events", "--json", f"--cgroup={rel}", path)
        evs = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
        tap.ok(evs and all(e["pid"] in host or e["type"] == "memcg" for e in evs),
               f"events --cgroup={rel} keeps only its events ({len(evs)})")
    finally:
        p.wait(30)
        time.sleep(0.3)
        remove_cgroup(cgdir)


d = Daemon(tap, window="30s", memory="64M", frequency=49)
try:
    if tap.ok(d.ready(), "flightrecd is ready with the RSS ledger on", d.log()):
        rss_curve(d)
        pid_reuse(d)
        reclaim_by_others(d)
        oom_dossier(d)
        container(d)
finally:
    d.cleanup()
tap.done()
