#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Stall truth: who was stuck, where and for how long, against answers
known in advance and the kernel's own counts. Workloads:
tests/workloads/frstall.c and frtool thrash.

  vfork      a parent vfork()s; its child sleeps 300 ms, then execs: the
             parent waits in a killable (D) sleep for 300 ms. One offcpu
             event, within 5 % of 300 ms, its kernel stack through the
             vfork wait and its user stack through fr_vfork_wait.
  inode lock a second blocking path: a thread writes a tmpfs file from a
             page that faults to a userfaultfd, so it sleeps holding the
             file's inode lock for 300 ms; another thread's one-byte write
             to the file waits for that lock, uninterruptible. One block of
             the waiter, within 5 % of its write call's length and no
             longer, its kernel stack the write, its user stack
             fr_inode_wait.
  memcg      a process thrashes a 256 MiB file mapping in a 64 MiB memory
             cgroup. The reference count is the kernel's own tracepoint
             count, `perf stat -e vmscan:mm_vmscan_memcg_reclaim_begin` on
             the process: each memcg reclaim fires it once, perf counts it
             in the kernel with no buffer to lose. Cgroup v1 has no count
             of reclaims in its files (memory.failcnt counts failed charge
             attempts: two or more per reclaim, and many that reclaim
             nothing, 1.85 M for 33.5 k reclaims here), so failcnt is only
             checked as an upper bound; on a cgroup v2 machine
             memory.events' max counts exactly one per reclaim at the limit
             and is compared too. Ours (recorded + summed short + lost)
             must match perf within 5 %, sum to no more than the run's wall
             time, and the process must come first in `flightrec stalls`.
  storm      min_stall = min_block = 0s and a 16 KiB ring; the daemon is
             stopped (SIGSTOP) for 1.5 s in a reclaim storm, so the ring
             overflows. Every lost record is counted (LOSS, and per
             incarnation in stallsum), and for each kind the recorded
             events + the short + the lost add up to all the kernel side
             saw, which still matches perf's count within 5 %.
  stock      Debian's binaries, stripped and without frame pointers, side by
             side with perf --call-graph dwarf in the same run: python3
             blocked in fsync (perf's sched_switch samples) and dd in a
             64 MiB cgroup stalled in memcg reclaim (perf's samples of
             mm_vmscan_memcg_reclaim_end, where ours are taken too). Each of
             our user stacks must be one perf recorded for the same thread,
             frame for frame, down to the program's entry. (perf refuses
             CLOCK_BOOTTIME for tracepoint events here, so the samples are
             not paired by time.)"""
import collections
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import (Daemon, Tap, control, daemon_asan, events, flightrec,  # noqa: E402
                     memory_cgroup, require_root_bpf, show, FRTOOL, FRSTALL, remove_cgroup)
from stackcmp import Maps, our_frame, perf_samples, reaches_entry  # noqa: E402

MS = 10**6
MIB = 1 << 20
VFORK_MS = 300
LOCK_MS = 300
TOL = 0.05
# The frstall workloads block at once, without pausing first: a new process
# has an unwind table from its exec (the BPF side builds it from its VMAs
# with the rows the daemon has for its files), and the exec wakes the
# drain, so that its /proc facts are read while it blocks. Before that,
# they paused 400 ms (1.5 s under ASan) for the daemon to get there. The
# ASan daemon paused them 1.5 s until its /proc worker stopped building
# rows itself: its reads, which name the frames, waited behind other
# files' rows and came after the process's end. Their pause argument is 0.
# Python does not pause before its first fsync, nor dd before its writes:
# the rows of /usr/bin/python3.11 and /usr/bin/dd, new to this daemon,
# come after their first blocks and stalls (under ASan python3's came
# 0.9-1.5 s after its exec), and those are walked on from a copy of their
# stack once the rows are there (bpf/contract.h: struct fr_ucopy), while
# the process lives: python3 writes and fsyncs for FSYNC_S, and each of
# its blocks is checked against perf's, the first ones too. A copy of a
# process that ended before its rows were built is not finished (not
# done). Before, python3 paused 0.6 s (2.5 s under ASan) and dd 0.8 s.
FSYNC_S = 2.5 if daemon_asan() else 1.0
KILLABLE = 0x100        # TASK_WAKEKILL in the task state

tap = Tap()
require_root_bpf(tap)
work = tempfile.mkdtemp(prefix="fr-stalls-", dir="/var/tmp")


def run(args, timeout=120):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def stack_text(e):
    return " <- ".join(e.get("stack", []))


def vfork_case(d):
    rc, out, err = run([FRSTALL, "vfork", str(VFORK_MS), "0"])
    if not tap.ok(rc == 0 and len(out.split()) == 4, f"frstall vfork {VFORK_MS} ran", err):
        return None
    pid, tid, t0, t1 = (int(x) for x in out.split())
    return pid, tid, t0, t1


def check_vfork(evs, v):
    pid, tid, t0, t1 = v
    offs = [e for e in evs if e["type"] == "offcpu" and e["pid"] == pid and e["tid"] == tid and
            e["begin_ns"] >= t0 and e["ts"] <= t1 + 50 * MS]
    long = [e for e in offs if e["duration_ns"] >= VFORK_MS * MS / 2]
    tap.ok(len(long) == 1, f"vfork: one long offcpu event of the parent {pid}/{tid} "
           f"(got {len(long)} of {len(offs)})", [(e["duration_ns"], e["kind"]) for e in offs])
    if len(long) != 1:
        return
    e = long[0]
    dur = e["duration_ns"] / MS
    tap.diag(f"vfork: blocked {dur:.3f} ms (the vfork call took {(t1 - t0) / MS:.3f} ms), "
             f"state {e['state']:#x}; {stack_text(e)}")
    tap.ok(abs(dur - VFORK_MS) <= TOL * VFORK_MS,
           f"vfork: its duration {dur:.1f} ms is within 5 % of {VFORK_MS} ms")
    tap.ok(e["ts"] - e["begin_ns"] <= t1 - t0,
           "vfork: and no longer than the vfork call as the parent timed it")
    tap.ok(e["kind"] == "blocked" and e["state"] & 2 and e["state"] & KILLABLE,
           f"vfork: a killable uninterruptible (D) wait (kind {e['kind']}, state {e['state']:#x})")
    kernel = e["stack"][:e["kernel_frames"]]
    user = e["stack"][e["kernel_frames"]:]
    tap.ok(any(re.search(r"kernel_clone|wait_for_vfork_done|sys_vfork", f) for f in kernel),
           "vfork: its kernel stack goes through the vfork wait", kernel)
    tap.ok(any(f.startswith("fr_vfork_wait") for f in user) and any(f.startswith("main") for f in user),
           "vfork: its user stack names fr_vfork_wait and main (captured as it left the CPU)", user)


def lock_case():
    rc, out, err = run([FRSTALL, "inodelock", str(LOCK_MS), "0"])
    if not tap.ok(rc == 0 and len(out.split()) == 4, f"frstall inodelock {LOCK_MS} ran", err):
        return None
    return tuple(int(x) for x in out.split())


def check_lock(evs, w, dump):
    """The waiter blocked on the inode lock for as long as its write call took."""
    pid, tid, t0, t1 = w
    offs = [e for e in evs if e["type"] == "offcpu" and e["pid"] == pid and e["tid"] == tid and
            e["begin_ns"] >= t0 and e["ts"] <= t1]
    long = [e for e in offs if e["duration_ns"] >= LOCK_MS * MS / 2]
    call = t1 - t0
    if not tap.ok(len(long) == 1, f"inode lock: one long block of the waiter {pid}/{tid} inside its "
                  f"write call (got {len(long)} of {len(offs)})", [e["duration_ns"] for e in offs]):
        sh = show(dump)
        tap.diag(f"inode lock: the call {t0}..{t1}; the process's events "
                 f"{[(e['type'], e['tid'], e['ts'] - t0, e.get('duration_ns')) for e in evs if e['pid'] == pid]}; "
                 f"losses { {k: v for k, v in sh.get('losses', {}).items() if v} }; stall sums "
                 f"{[e for e in evs if e['type'] == 'stallsum' and e['pid'] == pid]}")
        return
    e = long[0]
    tap.diag(f"inode lock: blocked {e['duration_ns'] / MS:.3f} ms, the write call took "
             f"{call / MS:.3f} ms, state {e['state']:#x}; {stack_text(e)}")
    tap.ok(e["kind"] == "blocked" and e["state"] & 2 and not e["state"] & KILLABLE and
           call * (1 - TOL) <= e["duration_ns"] <= call,
           f"inode lock: an uninterruptible wait of {e['duration_ns'] / MS:.1f} ms, within 5 % of the "
           f"write call's {call / MS:.1f} ms and no longer")
    kernel = e["stack"][:e["kernel_frames"]]
    user = e["stack"][e["kernel_frames"]:]
    tap.ok(any(f.startswith("shmem_file_write_iter") for f in kernel) and
           any(f.startswith("vfs_write") for f in kernel),
           "inode lock: its kernel stack is the write that waits for the lock "
           "(the rwsem's own functions are the scheduler's, left out of a sleeping task's stack)",
           kernel)
    tap.ok(any(f.startswith("fr_inode_wait") for f in user), "inode lock: its user stack names fr_inode_wait",
           user)


# Debian's python3 (stripped, no frame pointers) blocks in fsync after a pause
# that lets the daemon give it an unwind table.
PY_FSYNC = """
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
buf = bytes(range(256)) * 4096
t = time.monotonic()
while time.monotonic() - t < float(sys.argv[2]):
    os.lseek(fd, 0, os.SEEK_SET)
    for i in range(4):
        os.write(fd, buf)
    os.fsync(fd)
os.close(fd)
"""


def perf_record(event, argv, data):
    """perf record -e @event --call-graph dwarf -- @argv: (rc, stderr). perf refuses
    another clock for tracepoint events here ("wrong clockid"), so its samples cannot
    be matched to ours by time: stacks are compared as sets, per thread. The run has
    no address randomization (setarch -R): under about half of the random layouts,
    perf script (6.1, libunwind) finds no CFI for libc's write and follows rbp
    instead, which ends dd's stacks after one frame (same registers and stack
    bytes in both runs; measured 4 of 8 runs cut short, 0 of 8 with -R)."""
    p = subprocess.run(["setarch", "-R", "perf", "record", "-q", "-e", event, "--call-graph",
                        "dwarf,16384", "-o", data, "--"] + argv, capture_output=True, text=True,
                       timeout=120)
    return p.returncode, p.stderr


def user_frames(e):
    """Our event @e's user frames, in the one spelling of stackcmp."""
    maps = Maps()
    return [our_frame(f, maps) for f in e["stack"][e["kernel_frames"]:]]


def compare_stock(what, ours, theirs):
    """Each of @ours (events) against perf's samples of the same thread at the same
    tracepoint in the same run: its user stack must be one of theirs, frame for
    frame, and reach the program's entry."""
    seen = collections.defaultdict(set)
    for t in theirs:
        seen[t.tid].add(tuple(f.key() for f in t.frames))
    bad = [e for e in ours if tuple(f.key() for f in user_frames(e)) not in seen[e["tid"]]]
    tap.diag(f"{what}: {len(ours)} of ours, against {sum(len(v) for v in seen.values())} distinct "
             f"stacks in perf's {len(theirs)} samples; e.g. {stack_text(ours[0]) if ours else '-'}")
    tap.ok(ours and not bad, f"{what}: each of our user stacks is one perf --call-graph dwarf "
           f"recorded for the same thread, frame for frame ({len(ours) - len(bad)} of {len(ours)})",
           "\n".join(f"ours {[f.key() for f in user_frames(e)]}\nperf {sorted(seen[e['tid']])[:3]}"
                      for e in bad[:2]))
    whole = [e for e in ours if reaches_entry(user_frames(e))]
    tap.ok(ours and len(whole) == len(ours), f"{what}: ours reach the program's entry "
           f"({len(whole)} of {len(ours)})", [stack_text(e) for e in ours if e not in whole][:2])


def copies_done(d, what):
    """The stock workload ended: the dump comes once no copy of its stacks waits
    for rows (python3.11's and dd's, new to this daemon, are built while they
    run; under ASan in CI that took over 1.5 s, and a dump gives up what still
    waits). How long it took is said; never more than 20 s."""
    s = d.copies_done()
    st = json.loads(control(d.socket, "status json"))["unwind"]["stack_copies"]
    tap.ok(s is not None, f"stock: after {what}, no stack copy waits for rows "
           f"({'%.1f s' % s if s is not None else 'still held after 20 s'})", str(st))


def stock_offcpu(d):
    """Debian's python3 blocked in fsync: our offcpu events' user stacks, captured as it
    left the CPU, against perf's sched_switch samples of the same switches."""
    data, path = os.path.join(work, "py.perf"), os.path.join(work, "py.dat")
    rc, err = perf_record("sched:sched_switch", ["/usr/bin/python3", "-I", "-c", PY_FSYNC, path,
                                                 str(FSYNC_S)], data)
    if not tap.ok(rc == 0, "stock: perf record of /usr/bin/python3's fsync ran", err[-2000:]):
        return
    copies_done(d, "python3's fsync")
    dump = d.dump()
    evs = events(dump) if dump else []
    pids = {e["pid"] for e in evs if e["type"] == "exec" and e.get("filename", "").endswith("python3")}
    # The machine runs other python3 processes (this suite's, a neighbour's):
    # the one perf recorded is ours.
    pids = {p for p in pids if perf_samples(data, p)}
    if not tap.ok(len(pids) == 1, f"stock: one python3 in the dump recorded by perf too ({pids})"):
        return
    pid = pids.pop()
    ours = [e for e in evs if e["type"] == "offcpu" and e["pid"] == pid and e["kind"] == "blocked" and
            any("fsync" in f for f in e["stack"])]
    compare_stock("stock python3 fsync blocks", ours, perf_samples(data, pid))


def stock_stall(d):
    """Debian's dd writing 160 MiB in a 64 MiB memory cgroup: our memcg reclaim stalls'
    user stacks against perf's samples of mm_vmscan_memcg_reclaim_end, where ours are
    taken too."""
    mc = memory_cgroup(64 * MIB)
    if not tap.ok(mc is not None, "stock: a memory cgroup for dd"):
        return
    cg, procs = mc
    fifo, data, out = (os.path.join(work, n) for n in ("dd.fifo", "dd.perf", "dd.out"))
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as f:
            for _ in range(160):
                f.write(bytes(MIB))
    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    rc, err = perf_record("vmscan:mm_vmscan_memcg_reclaim_end",
                          ["/bin/sh", "-c", f"echo $$ > {procs}; exec /usr/bin/dd if={fifo} of={out} "
                           "bs=1M count=160 iflag=fullblock status=none"], data)
    feeder.join(30)
    for f in (out, fifo):
        if os.path.exists(f):
            os.unlink(f)
    remove_cgroup(cg)
    if not tap.ok(rc == 0, "stock: perf record of /usr/bin/dd in a 64 MiB cgroup ran", err[-2000:]):
        return
    copies_done(d, "dd's writes")
    dump = d.dump()
    evs = events(dump) if dump else []
    pids = {e["pid"] for e in evs if e["type"] == "stall" and e["kind"] == "memcg" and e["comm"] == "dd"}
    pids = {p for p in pids if perf_samples(data, p)}  # not another dd on the machine
    if not tap.ok(len(pids) == 1, f"stock: dd's memcg reclaim stalls are in the dump ({pids})"):
        return
    pid = pids.pop()
    ours = [e for e in evs if e["type"] == "stall" and e["pid"] == pid and e["kind"] == "memcg"]
    tap.ok(all(any("try_to_free_mem_cgroup_pages" in f for f in e["stack"][:e["kernel_frames"]])
               for e in ours), "stock: their kernel stacks go through try_to_free_mem_cgroup_pages")
    compare_stock("stock dd memcg reclaim", ours, perf_samples(data, pid))


def perf_count(out):
    m = re.search(r"^(\d+),[^,]*,vmscan:mm_vmscan_memcg_reclaim_begin", out, re.M)
    return int(m.group(1)) if m else None


def memcg_events_max(cg):
    p = os.path.join(cg, "memory.events")
    if not os.path.exists(p):
        return None
    for line in open(p):
        k, v = line.split()
        if k == "max":
            return int(v)
    return None


def thrash(seconds, during=None):
    """frtool thrash in a fresh 64 MiB cgroup under perf stat: (perf count, failcnt
    delta, events.max delta or None, wall s, cgroup path), or None."""
    mc = memory_cgroup(64 * MIB)
    if not tap.ok(mc is not None, "a memory cgroup controller to limit the thrash"):
        return None
    cg, procs = mc
    fail = os.path.join(cg, "memory.failcnt")
    fc0 = int(open(fail).read()) if os.path.exists(fail) else None
    ev0 = memcg_events_max(cg)
    t0 = time.monotonic()
    p = subprocess.Popen(["perf", "stat", "-x,", "-e", "vmscan:mm_vmscan_memcg_reclaim_begin", "--",
                          FRTOOL, "thrash", procs, "256", str(seconds), os.path.join(work, "thrash.dat")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if during:
        during()
    _, err = p.communicate(timeout=300)
    wall = time.monotonic() - t0
    fc1 = int(open(fail).read()) if fc0 is not None else None
    ev1 = memcg_events_max(cg)
    remove_cgroup(cg)
    n = perf_count(err)
    tap.ok(p.returncode == 0 and n is not None and n > 100,
           f"memcg: the thrash reclaimed at its limit ({n} reclaims counted by perf in {wall:.1f} s)", err)
    return n, (fc1 - fc0 if fc0 is not None else None), (ev1 - ev0 if ev0 is not None else None), wall, cg


def ours(evs, pid):
    """Per kind for incarnation pid: recorded (n, ns), stallsum (short, lost, all)."""
    rec = collections.defaultdict(lambda: [0, 0])
    sums = collections.defaultdict(lambda: collections.Counter())
    for e in evs:
        if e.get("pid") != pid:
            continue
        if e["type"] in ("stall", "offcpu"):
            rec[e["kind"]][0] += 1
            rec[e["kind"]][1] += e["duration_ns"]
        elif e["type"] == "stallsum":
            for k in ("short_count", "short_ns", "lost_count", "lost_ns", "all_count", "all_ns"):
                sums[e["kind"]][k] += e[k]
    return rec, sums


def thrash_pid(evs, cg):
    """The thrashing incarnation: the frtool whose memcg stalls name our cgroup."""
    name = "/" + os.path.basename(cg)
    pids = {e["pid"] for e in evs if e["type"] == "stall" and e["comm"] == "frtool" and
            e.get("memcg", "").endswith(name)}
    pids |= {e["pid"] for e in evs if e["type"] == "stallsum" and e["comm"] == "frtool" and
             e["kind"] == "memcg"}
    return pids


def first_kinds(p):
    """What made @p (a process of `stalls --json`) first: per kind, its time, count,
    longest and top stack."""
    return {k: (v["ns"], v["count"], v["max_ns"], v["stacks"][0]["frames"] if v["stacks"] else None)
            for k, v in p.get("kinds", {}).items()}


def check_memcg(d, res):
    n_perf, failcnt, evmax, wall, cg = res
    time.sleep(2.5)     # the stall sums are read once a second: let the last reads in
    dump = d.dump()
    if not tap.ok(dump is not None, "memcg: a dump after the thrash"):
        return
    evs = events(dump)
    pids = thrash_pid(evs, cg)
    if not tap.ok(len(pids) == 1, f"memcg: one thrashing incarnation in the dump ({pids})"):
        return
    pid = pids.pop()
    rec, sums = ours(evs, pid)
    n = rec["memcg"][0] + sums["memcg"]["short_count"] + sums["memcg"]["lost_count"]
    ns = rec["memcg"][1] + sums["memcg"]["short_ns"] + sums["memcg"]["lost_ns"]
    tap.diag(f"memcg: ours {n} ({rec['memcg'][0]} recorded, {sums['memcg']['short_count']} short, "
             f"{sums['memcg']['lost_count']} lost; {ns / MS:.1f} ms), perf {n_perf}, failcnt +{failcnt}, "
             f"events.max +{evmax}; blocked {rec['blocked'][0]} recorded ({rec['blocked'][1] / MS:.1f} ms); "
             f"stall_untracked {sum(show(dump).get('losses', {}).get('stall_untracked', []) or [0])}")
    tap.ok(abs(n - n_perf) <= TOL * n_perf,
           f"memcg: our count of memcg reclaim stalls {n} within 5 % of the kernel's tracepoint count {n_perf}")
    if failcnt is not None:
        tap.ok(n <= failcnt, f"memcg: no more than the failed charges (memory.failcnt +{failcnt})")
    if evmax is not None:
        tap.ok(abs(n - evmax) <= TOL * max(evmax, 1),
               f"memcg: within 5 % of memory.events max +{evmax} (cgroup v2)")
    tap.ok(ns <= wall * 1e9, f"memcg: they sum to {ns / MS:.1f} ms, no more than the run's {wall:.2f} s")
    rc, out, err = flightrec("stalls", "--json", dump)
    first = json.loads(out)["processes"][0] if rc == 0 and json.loads(out)["processes"] else {}
    tap.ok(first.get("pid") == pid, f"memcg: the thrashing process {pid} comes first in `flightrec stalls` "
           f"(first: {first.get('pid')} {first.get('comm')})", first_kinds(first))
    rc, out, err = flightrec("stalls", "--kind=memcg", "--json", dump)
    first = json.loads(out)["processes"][0] if rc == 0 and json.loads(out)["processes"] else {}
    tap.ok(first.get("pid") == pid and first["kinds"]["memcg"]["stacks"] and
           any("try_to_free_mem_cgroup_pages" in f for f in first["kinds"]["memcg"]["stacks"][0]["frames"]),
           "memcg: and first by memcg time, its top stack through try_to_free_mem_cgroup_pages")
    rc, out, err = flightrec("stalls", dump)
    tap.ok(rc == 0 and "PSI" in out and "need not agree" in out,
           "memcg: `flightrec stalls` sets PSI's memory stall time beside the recorded one, and says why they differ",
           out[-600:])
    rc, out, err = flightrec("show", dump)
    tap.ok(rc == 0 and re.search(rf"^stalls: .*\n\s+frtool-{pid} ", out, re.M),
           "memcg: `flightrec show` lists it first among the stallers", out)


def check_storm(d, res):
    n_perf, _, _, _, cg = res
    time.sleep(2.5)     # the stall sums are read once a second: let the last reads in
    dump = d.dump()
    if not tap.ok(dump is not None, "storm: a dump after the storm"):
        return
    evs = events(dump)
    pids = thrash_pid(evs, cg)
    if not tap.ok(len(pids) == 1, f"storm: one thrashing incarnation ({pids})"):
        return
    pid = pids.pop()
    rec, sums = ours(evs, pid)
    rc, out, _ = flightrec("show", "--json", dump)
    loss = json.loads(out)["losses"] if rc == 0 else {}
    reserve = sum(loss.get("bpf_reserve_failed", [0]))
    lost = sum(s["lost_count"] for s in sums.values())
    tap.diag(f"storm: LOSS bpf_reserve_failed {reserve}; " +
             "; ".join(f"{k}: recorded {rec[k][0]}, short {s['short_count']}, lost {s['lost_count']}, "
                       f"all {s['all_count']}" for k, s in sums.items()))
    tap.ok(reserve > 0 and lost > 0, f"storm: the ring overflowed and it is counted "
           f"(LOSS bpf_reserve_failed {reserve}; {lost} of the process's stalls counted lost)")
    tap.ok(lost <= reserve, "storm: the process's lost stalls are among the records the ring refused")
    for kind, s in sorted(sums.items()):
        tap.ok(rec[kind][0] + s["short_count"] + s["lost_count"] == s["all_count"],
               f"storm: {kind}: recorded {rec[kind][0]} + short {s['short_count']} + lost "
               f"{s['lost_count']} = all {s['all_count']}")
    n = sums["memcg"]["all_count"]
    tap.ok(abs(n - n_perf) <= TOL * n_perf,
           f"storm: all memcg stalls {n} within 5 % of perf's count {n_perf}")


d = None
try:
    ok = tap.ok(subprocess.run(["perf", "--version"], capture_output=True).returncode == 0,
                "perf is installed (tools/bootstrap.sh: linux-perf), the reference count")
    for prog in (FRSTALL, FRTOOL):
        ok &= tap.ok(os.access(prog, os.X_OK), f"{prog} is there")
    if ok:
        # Defaults: min_stall = min_block = 1ms.
        d = Daemon(tap, window="60s", memory="128M")
        if tap.ok(d.ready(), "flightrecd is ready (default [stalls])", d.log()):
            d.settle()
            v = vfork_case(d)
            dump = d.dump() if v else None
            if v and tap.ok(dump is not None, "vfork: a dump"):
                check_vfork(events(dump), v)
                rc, out, _ = flightrec("folded", "--offcpu", f"--pid={v[0]}", dump)
                w = [int(line.rsplit(" ", 1)[1]) for line in out.splitlines() if "fr_vfork_wait" in line]
                tap.ok(rc == 0 and w and abs(max(w) / MS - VFORK_MS) <= TOL * VFORK_MS,
                       f"vfork: `folded --offcpu` weighs its stack by the time blocked ({w} ns)", out[-800:])
            res = thrash(4)
            if res:
                check_memcg(d, res)
        d.cleanup()
        d = Daemon(tap, window="60s", memory="128M",
                   extra="[stalls]\nmin_stall = 0s\nmin_block = 0s\n")
        if tap.ok(d.ready(), "flightrecd is ready (min_stall = min_block = 0s)", d.log()):
            d.settle()
            w = lock_case()
            dump = d.dump() if w else None
            if w and tap.ok(dump is not None, "inode lock: a dump"):
                check_lock(events(dump), w, dump)
            stock_offcpu(d)
            stock_stall(d)
            st = json.loads(control(d.socket, "status json"))
            tap.diag(f"stack copies: {st['unwind']['stack_copies']}")
        d.cleanup()
        d = Daemon(tap, window="60s", memory="128M", recorder_extra="ring = 16K\n",
                   extra="[stalls]\nmin_stall = 0s\nmin_block = 0s\n")
        if tap.ok(d.ready(), "flightrecd is ready (0s thresholds, a 16 KiB ring)", d.log()):
            d.settle()

            def stop_daemon():
                time.sleep(1.0)
                d.proc.send_signal(signal.SIGSTOP)
                time.sleep(1.5)
                d.proc.send_signal(signal.SIGCONT)
            res = thrash(4, during=stop_daemon)
            if res:
                check_storm(d, res)
        d.cleanup()
        d = None
finally:
    if d:
        d.proc.send_signal(signal.SIGCONT)
        d.cleanup()
    subprocess.run(["rm", "-rf", work])

tap.done()
