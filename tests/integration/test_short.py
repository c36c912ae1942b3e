#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Short stock processes, walked from their first sample, against perf.

What a build, a script or a cron job is made of: Debian's sha256sum,
gzip -c and sort, stripped and without frame pointers, run one after the
other on inputs that take each 20-60 ms, from a shell loop. Nothing waits
for the daemon between processes: each starts the moment the last one
ends. The loop runs twice, as a build runs its compiler many times:

Cold: the three programs are new to the daemon, which has no rows for
their files yet; their first processes end before it has built them, and
are walked by frame pointers until then, or on from a copy of their
stack if their table gets the rows before they end. Said in
diagnostics; checked: every
process has a table from its first samples (no_table <= 5 %), which the
BPF side builds from its VMAs.

Warm: the same loop again. Checked: <= 1 % of our user frames are bare
addresses, in both builds. A process gone before the daemon's /proc
read (the ASan daemon, 3-5 times slower, was late for 3-5 % of frames)
is named from the code mappings the kernel sends at its exit
(struct fr_rec_maps) with the symbols the daemon holds for those files.

Loaded: the loop again, fewer rounds, while two shell loops spin on the
two CPUs (a machine in trouble: the /proc worker gets its turn late).
Checked: <= 1 % of user frames are bare; said: how many exits sent
their mappings and were named from them.

Stalled: the daemon is stopped (SIGSTOP) while 8 rounds run, and goes on
once they have ended: no /proc read of theirs can come while they live.
Checked: every one of their sampled processes was named from the
mappings its exit sent, and <= 1 % of their user frames are bare (all
were, before exits sent them).

Beside perf: the same loop, recorded by `perf record -F 499 --call-graph
dwarf,16384` (which follows the shell's children) while flightrecd (499
Hz) records everything. Per command, over the processes perf saw:
  completeness: the share of samples whose user stack reaches the
    outermost frame (ours: the sample's end code; perf: its frames end in
    an entry point) is >= 90 % of perf's.
  no_table: <= 5 % of our samples were walked without a table.
  bare frames: <= 1 % of our user frames (with perf copying 16 KiB of
    stack per sample on two CPUs, the ASan daemon's /proc read of a
    process came after its end for 3-5 % of frames, before exits sent
    their mappings).

A file new to the daemon: a fresh copy of Debian's python3.11 (a file
the daemon has never seen, so no rows) runs a 0.5 s loop at once, beside
perf dwarf. Its samples until the daemon has built its rows carry a copy
of their stack and are walked on from it once the rows exist. Checked:
>= 90 % of our samples reach the outermost frame, also in its first
300 ms, and >= 90 % of perf's share; some were finished from copies.

Without kernel tables (`unwind_kernel_tables = false`, what a kernel
without the VMA iterator, before 6.7, gets): a second daemon builds no
table in the kernel and sends no exit's mappings; Debian's bzip2, running
1-2 s, still reaches its outermost frame in >= 90 % of its samples once
past its first 300 ms (the daemon's own table, from /proc), and the short
loop's figures are said.

Then a fork storm of shell subshells that never exec (each a copy of
the shell, spinning ~10 ms): after it, the BPF table of process unwind
tables (uprocs, read with bpftool) holds live processes only (a table
installed after its process's exit stayed until the PID came back), and
it and ugen have room for as many processes as can live.
"""
import collections
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, Tap, control, events, require_root_bpf, show  # noqa: E402
from stackcmp import ours_by_command, perf_samples, reaches_entry  # noqa: E402

FREQ = 499
ROUNDS = 100
COMMANDS = ("sha256sum", "gzip", "sort")
BARE_MAX = 0.01
LOADED_ROUNDS = 40
STOPPED_ROUNDS = 8

tap = Tap()
require_root_bpf(tap)


def make_inputs(d):
    rnd = random.Random(1)
    paths = {k: os.path.join(d, k + ".in") for k in COMMANDS}
    with open(paths["sha256sum"], "wb") as f:
        f.write(rnd.randbytes(8 << 20))
    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
    with open(paths["gzip"], "w") as f:
        f.write(" ".join(rnd.choice(words) + str(rnd.randint(0, 999)) for _ in range(50000)))
    with open(paths["sort"], "w") as f:
        f.write("\n".join(str(rnd.random()) for _ in range(15000)) + "\n")
    return paths


def script(paths, rounds=ROUNDS):
    """The shell loop: each command as soon as the last has ended."""
    return (f"i=0; while [ $i -lt {rounds} ]; do "
            f"sha256sum {paths['sha256sum']} >/dev/null; "
            f"gzip -c {paths['gzip']} >/dev/null; "
            f"sort {paths['sort']} >/dev/null; "
            "i=$((i+1)); done")


def boottime():
    return time.clock_gettime_ns(time.CLOCK_BOOTTIME)


def exit_maps_after(d, before, want=1, timeout=10.0):
    """The daemon's exit_maps status once the stalled rounds' exits are
    handled: the /proc worker names them after the drain took them, and
    the dump waits for neither; read again while `named` still grows."""
    end = time.monotonic() + timeout
    last = None
    while True:
        xm = json.loads(control(d.socket, "status json"))["unwind"]["exit_maps"]
        if (last and xm["named"] == last["named"] and xm["named"] - before["named"] >= want) \
                or time.monotonic() > end:
            return xm
        last = xm
        time.sleep(0.2)


def check_no_table_view(dump, evs):
    """`flightrec show --json`'s user_stacks.no_table against the events: the
    samples walked by frame pointers for want of a table, per process, and
    how long after its exec (or start) its first walk with rows came."""
    since, fp, total, rows = {}, collections.Counter(), collections.Counter(), {}
    for e in evs:
        key = (e["pid"], e["start"])
        since.setdefault(key, e["start"])
        if e["type"] == "exec":
            since[key] = max(since[key], e["ts"])
    for e in evs:
        if e["type"] != "sample":
            continue
        key = (e["pid"], e["start"])
        total[key] += 1
        end = e.get("user_stack_end")
        if end == "no_table":
            fp[key] += 1
        elif end not in (None, "none") and e["ts"] >= since[key]:
            rows[key] = min(rows.get(key, e["ts"]), e["ts"])
    nt = show(dump)["user_stacks"].get("no_table", {})
    tap.ok(nt.get("samples") == sum(fp.values()) and nt.get("processes") == len(fp),
           f"show --json: {nt.get('samples')} samples of {nt.get('processes')} processes walked "
           f"without a table, as the events say ({sum(fp.values())} of {len(fp)})")
    bad = []
    for m in nt.get("most", []):
        key = (m["pid"], m["start"])
        want = rows[key] - since[key] if key in rows else -1
        if (m["no_table"], m["samples"], m["rows_after_ns"]) != (fp[key], total[key], want):
            bad.append((m, fp[key], total[key], want))
    top = sorted(fp.values(), reverse=True)[:len(nt.get("most", []))]
    tap.ok(not bad and [m["no_table"] for m in nt.get("most", [])] == top and
           len(nt.get("most", [])) == min(3, len(fp)),
           f"show --json: the processes with the most, each with its samples and when rows came "
           f"({[(m['comm'], m['no_table'], m['rows_after_ns']) for m in nt.get('most', [])]})", bad)


def test_short(d, tmp):
    paths = make_inputs(tmp)
    pdata = os.path.join(tmp, "perf.data")
    t0 = boottime()
    subprocess.run(["sh", "-c", script(paths)], check=False)
    t1 = boottime()
    subprocess.run(["sh", "-c", script(paths)], check=False)
    t2 = boottime()
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2)]
    try:
        subprocess.run(["sh", "-c", script(paths, LOADED_ROUNDS)], check=False)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    t3 = boottime()
    xm = json.loads(control(d.socket, "status json"))["unwind"]["exit_maps"]
    os.kill(d.proc.pid, signal.SIGSTOP)
    try:
        subprocess.run(["sh", "-c", script(paths, STOPPED_ROUNDS)], check=False)
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)
    t4 = boottime()
    perf = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(FREQ), "-k", "boottime",
                           "--call-graph", "dwarf,16384", "-o", pdata, "--", "sh", "-c", script(paths)],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    if not tap.ok(perf.returncode == 0 and os.path.exists(pdata), "perf record ran the shell loop",
                  f"exit status {perf.returncode}: {perf.stderr[-2000:]}"):
        return
    dump = d.dump()
    if not tap.ok(dump is not None, "flightrecd wrote a dump"):
        return
    xm2 = exit_maps_after(d, xm)
    theirs = perf_samples(pdata, None, set(COMMANDS))
    pids = {s.tid for s in theirs}	# single-threaded: tid == pid
    by_cmd = collections.defaultdict(list)
    for s in theirs:
        by_cmd[s.comm].append(s)
    evs = events(dump)
    check_no_table_view(dump, evs)
    cold = ours_by_command(evs, COMMANDS, lambda e: t0 <= e["ts"] <= t1)
    warm = ours_by_command(evs, COMMANDS, lambda e: t1 < e["ts"] <= t2)
    loaded = ours_by_command(evs, COMMANDS, lambda e: t2 < e["ts"] <= t3)
    ours = ours_by_command(evs, COMMANDS, lambda e: e["pid"] in pids)
    tap.diag(f"{len(pids)} processes perf sampled; {ROUNDS} rounds of {', '.join(COMMANDS)}")
    for cmd in COMMANDS:
        c = cold.get(cmd, collections.Counter())
        ends = {k[4:]: v for k, v in c.items() if k.startswith("end:")}
        tap.diag(f"{cmd}, cold: outermost in {c['outermost'] / max(1, c['n']):.1%} of {c['n']}; "
                 f"{c['bare']} of {c['frames']} frames bare; ends {ends}")
        tap.ok(c["n"] > 100 and c["end:no_table"] <= 0.05 * c["n"],
               f"{cmd}, cold: {c['end:no_table']} of {c['n']} samples without a table (<= 5 %)")
        w = warm.get(cmd, collections.Counter())
        tap.ok(w["n"] > 100 and w["bare"] <= BARE_MAX * w["frames"],
               f"{cmd}, warm: {w['bare']} of {w['frames']} user frames are bare addresses "
               f"(<= {BARE_MAX:.0%})")
        lo = loaded.get(cmd, collections.Counter())
        tap.ok(lo["n"] > 20 and lo["bare"] <= BARE_MAX * lo["frames"],
               f"{cmd}, loaded (two CPU hogs): {lo['bare']} of {lo['frames']} user frames are "
               f"bare addresses (<= {BARE_MAX:.0%}; {lo['n']} samples)")
    tap.diag(f"exits that sent their code mappings: {xm['sent']} ({xm['skipped']} not sent: ring "
             f"busy), {xm['named']} gave a process its image ({xm['unnamed_files']} files not in "
             f"the symbol cache), {xm['current']} came after a read of the same code")
    stopped = ours_by_command(evs, COMMANDS, lambda e: t3 < e["ts"] <= t4)
    procs = {(e["pid"], e["start"]) for e in evs if e["type"] == "sample" and
             e["comm"] in COMMANDS and t3 < e["ts"] <= t4}
    named = xm2["named"] - xm["named"]
    tap.ok(procs and named >= len(procs),
           f"stalled daemon: {named} processes named from their exits' mappings, of "
           f"{len(procs)} sampled ones (sent {xm2['sent'] - xm['sent']}, not sent "
           f"{xm2['skipped'] - xm['skipped']})")
    for cmd in COMMANDS:
        st = stopped.get(cmd, collections.Counter())
        tap.ok(st["n"] > 10 and st["bare"] <= BARE_MAX * st["frames"],
               f"{cmd}, stalled daemon: {st['bare']} of {st['frames']} user frames are bare "
               f"addresses (<= {BARE_MAX:.0%}; {st['n']} samples)")
    for cmd in COMMANDS:
        t = by_cmd.get(cmd, [])
        o = ours.get(cmd, collections.Counter())
        if not tap.ok(len(t) > 100 and o["n"] > 100,
                      f"{cmd}: both sampled it (ours {o['n']}, perf {len(t)})"):
            continue
        perf_share = sum(1 for s in t if reaches_entry(s.frames)) / len(t)
        our_share = o["outermost"] / o["n"]
        ends = {k[4:]: v for k, v in o.items() if k.startswith("end:")}
        tap.ok(our_share >= 0.9 * perf_share,
               f"{cmd}: outermost frame in {our_share:.1%} of our samples, perf {perf_share:.1%} "
               f"(>= 90 % of perf's)")
        tap.ok(o["end:no_table"] <= 0.05 * o["n"],
               f"{cmd}: {o['end:no_table']} of {o['n']} samples without a table (<= 5 %)")
        tap.diag(f"{cmd}: how ours ended: {ends}")
        tap.ok(o["bare"] <= BARE_MAX * o["frames"],
               f"{cmd}: beside perf, {o['bare']} of {o['frames']} user frames are bare addresses "
               f"(<= {BARE_MAX:.0%})")
    os.unlink(pdata)


PY_LOOP = """
import time
t = time.monotonic()
while time.monotonic() - t < 0.5:
    sum(i * i for i in range(2000))
"""


def test_new_file(d, tmp):
    """A copy of python3.11 the daemon has never seen, from its first sample."""
    exe = os.path.join(tmp, "python3-fresh")
    pdata = os.path.join(tmp, "py.data")
    subprocess.run(["cp", "/usr/bin/python3.11", exe], check=True)
    before = json.loads(control(d.socket, "status json"))["unwind"]["stack_copies"]
    perf = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(FREQ), "-k", "boottime",
                           "--call-graph", "dwarf,16384", "-o", pdata, "--", exe, "-I", "-c", PY_LOOP],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    if not tap.ok(perf.returncode == 0, "new file: perf record ran a fresh copy of python3.11",
                  perf.stderr[-2000:]):
        return
    dump = d.dump()
    after = json.loads(control(d.socket, "status json"))["unwind"]["stack_copies"]
    if not tap.ok(dump is not None, "new file: a dump"):
        return
    evs = events(dump)
    theirs = perf_samples(pdata, None, {"python3-fresh"})
    pids = {s.tid for s in theirs}
    execs = {e["pid"]: e["ts"] for e in evs if e["type"] == "exec" and e["pid"] in pids}
    ours = [e for e in evs if e["type"] == "sample" and e["pid"] in execs]
    young = [e for e in ours if e["ts"] - execs[e["pid"]] <= 300 * 10**6]
    full = sum(1 for e in ours if e.get("user_stack_end") == "outermost")
    full_young = sum(1 for e in young if e.get("user_stack_end") == "outermost")
    perf_share = sum(1 for s in theirs if reaches_entry(s.frames)) / max(1, len(theirs))
    ends = collections.Counter(e.get("user_stack_end") for e in ours)
    tap.diag(f"new file: stack copies {before} -> {after}; our ends {dict(ends)}")
    if not tap.ok(len(ours) > 100 and len(theirs) > 100,
                  f"new file: both sampled it (ours {len(ours)}, perf {len(theirs)})"):
        return
    tap.ok(full >= 0.9 * len(ours) and full / len(ours) >= 0.9 * perf_share,
           f"new file: outermost frame in {full / len(ours):.1%} of our samples, "
           f"perf {perf_share:.1%} (>= 90 %, and >= 90 % of perf's)")
    tap.ok(young and full_young >= 0.9 * len(young),
           f"new file: in its first 300 ms too, before its rows were built: "
           f"{full_young} of {len(young)}")
    tap.ok(after["finished"] > before["finished"],
           f"new file: samples were walked on from copies of their stack "
           f"({after['finished'] - before['finished']} finished, "
           f"{after['expired'] - before['expired']} expired)")
    later = show(dump).get("user_stacks", {}).get("walked_later", 0)
    tap.ok(0 < later <= after["finished"],
           f"new file: show says how many of the dump's samples were walked on later ({later})")
    os.unlink(pdata)
    os.unlink(exe)


def map_ids(pid):
    """The BPF maps process @pid holds, by their ids in its fds' fdinfo."""
    ids = set()
    fdinfo = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(fdinfo):
        try:
            with open(os.path.join(fdinfo, fd)) as f:
                ids.update(int(line.split()[1]) for line in f if line.startswith("map_id:"))
        except OSError:
            pass
    return ids


def daemon_map(daemon_pid, name):
    """bpftool's description of the daemon's map @name, or None."""
    mine = map_ids(daemon_pid)
    maps = json.loads(subprocess.run(["bpftool", "map", "show", "-j"], capture_output=True,
                                     text=True).stdout or "[]")
    found = [m for m in maps if m.get("name") == name and m.get("id") in mine]
    return found[0] if found else None


def uprocs_keys(daemon_pid):
    """The PIDs with a table in the daemon's uprocs map (and its flags), or None."""
    m = daemon_map(daemon_pid, "uprocs")
    if not m:
        return None
    p = subprocess.Popen(["bpftool", "map", "dump", "id", str(m["id"]), "-j"],
                         stdout=subprocess.PIPE, text=True)
    dump = json.loads(p.communicate()[0] or "[]")
    keys = {}
    for e in dump:
        f = e.get("formatted", {})
        keys[f.get("key")] = f.get("value", {}).get("flags")
    keys.pop(p.pid, None)	# bpftool itself, alive while it dumped: a young process has one
    return keys


def test_storm(d):
    storm = ("i=0; while [ $i -lt 300 ]; do "
             "( j=0; while [ $j -lt 2000 ]; do j=$((j+1)); done ); i=$((i+1)); done")
    subprocess.run(["sh", "-c", storm], check=False)
    time.sleep(1.5)		# the daemon's tick collects what exited
    keys = uprocs_keys(d.proc.pid)
    if not tap.ok(keys is not None, "bpftool shows the daemon's uprocs map"):
        return
    dead = {k: v for k, v in keys.items() if not os.path.exists(f"/proc/{k}")}
    tap.ok(not dead, f"after a storm of 300 forks: {len(keys)} tables in uprocs, "
           f"{len(dead)} of exited processes", f"dead (pid: flags): {dead}")
    # Live processes: one entry each at most, and there are never more of
    # them than min(pid_max, threads-max); the maps are sized for that.
    limit = min(int(open(f"/proc/sys/kernel/{k}").read()) for k in ("pid_max", "threads-max"))
    limit = min(limit, 1 << 20)
    for name in ("uprocs", "ugen"):
        m = daemon_map(d.proc.pid, name) or {}
        tap.ok(m.get("max_entries", 0) >= limit, f"{name} holds {m.get('max_entries')} processes: "
               f"as many as can live (min(pid_max, threads-max) = {limit}, 2^20 at most)")


def test_no_kernel_tables(tmp):
    paths = make_inputs(tmp)
    d2 = Daemon(tap, window="60s", frequency=FREQ, recorder_extra="unwind_kernel_tables = false\n")
    try:
        if not tap.ok(d2.ready(), "no kernel tables: flightrecd ready"):
            return
        u = json.loads(control(d2.socket, "status json"))["unwind"]
        tap.ok(u.get("enabled") and u.get("kernel_build") is False,
               f"no kernel tables: status says rows on, kernel build off ({u.get('enabled')}, "
               f"{u.get('kernel_build')})")
        t0 = boottime()
        subprocess.run(["sh", "-c", script(paths, 30)], check=False)
        t1 = boottime()
        with open(paths["sha256sum"], "rb") as f:
            bz = subprocess.Popen(["bzip2", "-9", "-c"], stdin=f, stdout=subprocess.DEVNULL)
            bz.wait()
        dump = d2.dump()
        if not tap.ok(dump is not None, "no kernel tables: a dump"):
            return
        evs = events(dump)
        short = ours_by_command(evs, COMMANDS, lambda e: t0 <= e["ts"] <= t1)
        for cmd in COMMANDS:
            c = short.get(cmd, collections.Counter())
            tap.diag(f"no kernel tables: {cmd}: outermost in {c['outermost'] / max(1, c['n']):.1%} "
                     f"of {c['n']}; no_table {c['end:no_table']}; {c['bare']} of {c['frames']} "
                     f"frames bare")
        mine = sorted((e for e in evs if e["type"] == "sample" and e["pid"] == bz.pid),
                      key=lambda e: e["ts"])
        late = [e for e in mine if mine and e["ts"] >= mine[0]["ts"] + 300000000]
        whole = sum(1 for e in late if e.get("user_stack_end") == "outermost")
        tap.ok(len(late) >= 100 and whole >= 0.9 * len(late),
               f"no kernel tables: bzip2 past its first 300 ms reaches its outermost frame in "
               f"{whole} of {len(late)} samples (>= 90 %)")
        u = json.loads(control(d2.socket, "status json"))["unwind"]
        tap.ok(u.get("kernel_tables") == 0 and u["exit_maps"]["sent"] == 0,
               f"no kernel tables: none built in the kernel ({u.get('kernel_tables')}), no exit "
               f"sent its mappings ({u['exit_maps']['sent']})")
    finally:
        d2.cleanup()


tmp = tempfile.mkdtemp(prefix="fr-short-")
d = Daemon(tap, window="60s", frequency=FREQ)
try:
    if tap.ok(d.ready(), "flightrecd ready"):
        test_short(d, tmp)
        test_new_file(d, tmp)
        test_storm(d)
finally:
    d.stop()
try:
    test_no_kernel_tables(tmp)
finally:
    subprocess.run(["rm", "-rf", tmp])
tap.done()
