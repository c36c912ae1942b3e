#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A compile, walked against perf: Debian's gcc -O2 on this project's sources.

A build is the flight recorder's common case of processes that come and
go: the gcc driver, cc1 (a 30 MB stripped binary whose .eh_frame is
2.3 MB, with deep recursive stacks) and as (15 ms each, with libbfd,
libopcodes, libsframe and libz mapped by ld.so after the exec). Each file
is compiled by its own gcc -c, one after the other, from a shell loop, so
that nothing waits for the daemon.

The loop runs three times: cold (cc1 and as are new to the daemon: their
rows are built while they run), warm, and beside perf (`perf record -F
499 --call-graph dwarf,16384`, which follows the shell's children) while
flightrecd records everything.

Checked, for cc1 and as, over the processes perf saw:
  completeness: the share of samples whose user stack reaches the
    outermost frame is >= 90 % of perf's (perf's 16 KiB copy of the
    stack often ends before cc1's outermost frame), and so is cc1's
    share over the cold loop, where the first cc1 processes end
    (0.15 s) before cc1's rows are built (0.3 s, 3-5 s in the ASan
    daemon): their copies are finished after their exit, with the
    mappings it sent (90 % -> 95-98 %; 40-47 % -> 83-86 % under ASan;
    as, cold, is said: 66-84 %);
  no_table: <= 5 % of our samples were walked without a table;
  marks: cold cc1 samples walked on later from a copy are marked so in
    the dump (format 1.6), and `show` counts them per process as the
    events do;
and, warm, bare addresses are <= 1 % of our user frames, in both builds:
a frame is bare when the /proc read that names it came before ld.so
mapped the library (as: 5 % of its frames, until an exec's read waited 3
ms and a re-read too soon was parked), or never came while the process
lived (the ASan daemon in CI, still building cc1's rows: 83 of 796 of
as's frames, until exits sent their code mappings, struct fr_rec_maps).
The gcc driver's completeness is said, not judged; its samples without
a table are <= 10 % (12-20 % when its vfork children, which run in its
mm until they exec, were walked without its table, and samples in
execve, whose user registers are the old image's once the new mm is in
place, counted as walked without a table). Samples with no user stack
(in execve, or exiting with the mm gone) carry no user frames; a sample
taken while the BPF side built its table walks with the table of before.
"""
import collections
import glob
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, Tap, events, flightrec, require_root_bpf  # noqa: E402
from stackcmp import ours_by_command, perf_samples, reaches_entry  # noqa: E402

FREQ = 499
JUDGED = ("cc1", "as")
SAID = ("gcc",)
BARE_MAX = 0.01
SRC = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("FR_BUILD_ROOT", os.path.join(SRC, "build"))

tap = Tap()
require_root_bpf(tap)


# The stages whose sources are compiled: with symbols/ and unwind/ too,
# `as` runs long enough for 50 samples of it in each run (with three stages
# it had 38-41 in one CI run, on a quiet machine, and the check failed).
STAGES = ("format", "common", "record", "symbols", "unwind")


def sources():
    """This project's sources that compile alone (the BPF skeleton from the build)."""
    out = []
    for d in STAGES:
        out += [s for s in sorted(glob.glob(os.path.join(SRC, "recorder", d, "*.c")))
                if not s.endswith("sampler.c")]
    return out


def script(srcs):
    inc = " ".join(f"-I{shlex.quote(os.path.join(SRC, p))}" for p in
                   [f"recorder/{d}" for d in STAGES] + ["bpf"])
    inc += f" -I{shlex.quote(BUILD)} -I{shlex.quote(os.path.join(BUILD, 'bpf'))}"
    return " ; ".join(f"gcc -D_GNU_SOURCE -O2 -c {inc} -o /dev/null {shlex.quote(s)}"
                      for s in srcs)


def boottime():
    return time.clock_gettime_ns(time.CLOCK_BOOTTIME)


def ends(c):
    return {k[4:]: v for k, v in c.items() if k.startswith("end:")}


def check_marks(dump, evs, t1):
    """The samples walked on later from a copy are marked one by one (format
    1.6), and `show` counts them per process as the events do."""
    later = collections.Counter((e["pid"], e["start"]) for e in evs
                                if e["type"] == "sample" and e.get("walked_later"))
    cold = sum(n for (pid, start), n in later.items()
               if any(e["pid"] == pid and e["start"] == start and e["ts"] <= t1 and
                      e["comm"] == "cc1" for e in evs if e["type"] == "sample"))
    tap.ok(cold > 0, f"cold cc1 samples walked on later from a copy are marked ({cold})")
    rc, out, err = flightrec("show", "--json", "--top", "256", dump)
    if not tap.ok(rc == 0, "flightrec show --json", err):
        return
    s = json.loads(out)
    tap.ok(s["user_stacks"]["walked_later"] == sum(later.values()),
           f"show's walked_later ({s['user_stacks']['walked_later']}) is the marked samples' "
           f"count ({sum(later.values())})")
    wrong = [(p["pid"], p["user_stacks"]["walked_later"], later.get((p["pid"], p["start"]), 0))
             for p in s["top_processes"]
             if p["user_stacks"]["walked_later"] != later.get((p["pid"], p["start"]), 0)]
    tap.ok(not wrong, f"and per process, for the {len(s['top_processes'])} it lists", wrong[:5])


def test_compile(d, tmp):
    srcs = sources()
    sh = script(srcs)
    first = subprocess.run(["sh", "-c", sh], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
    if not tap.ok(first.returncode == 0 and len(srcs) >= 10,
                  f"gcc -O2 compiled {len(srcs)} of our sources", first.stderr[-2000:]):
        return
    t1 = boottime()
    subprocess.run(["sh", "-c", sh], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t2 = boottime()
    pdata = os.path.join(tmp, "perf.data")
    perf = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(FREQ), "-k",
                           "boottime", "--call-graph", "dwarf,16384", "-o", pdata, "--",
                           "sh", "-c", sh],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if not tap.ok(perf.returncode == 0 and os.path.exists(pdata), "perf record ran the compile",
                  f"exit status {perf.returncode}: {perf.stderr[-2000:]}"):
        return
    dump = d.dump()
    if not tap.ok(dump is not None, "flightrecd wrote a dump"):
        return
    theirs = perf_samples(pdata, None, set(JUDGED + SAID))
    pids = {s.tid for s in theirs}
    by_cmd = collections.defaultdict(list)
    for s in theirs:
        by_cmd[s.comm].append(s)
    evs = events(dump)
    warm = ours_by_command(evs, JUDGED + SAID, lambda e: t1 < e["ts"] <= t2)
    ours = ours_by_command(evs, JUDGED + SAID, lambda e: e["pid"] in pids)
    cold = ours_by_command(evs, JUDGED + SAID, lambda e: e["ts"] <= t1)
    warm_on = ours_by_command(evs, SAID, lambda e: e["ts"] > t1)
    for cmd in JUDGED + SAID:
        c = cold.get(cmd, collections.Counter())
        tap.diag(f"{cmd}, cold: outermost in {c['outermost'] / max(1, c['n']):.1%} of {c['n']}; "
                 f"{c['bare']} of {c['frames']} frames bare; ends {ends(c)}")
    for cmd in JUDGED:
        w = warm.get(cmd, collections.Counter())
        tap.ok(w["n"] >= 50 and w["bare"] <= BARE_MAX * w["frames"],
               f"{cmd}, warm: {w['bare']} of {w['frames']} user frames are bare addresses "
               f"(<= {BARE_MAX:.0%}; {w['n']} samples)")
    for cmd in JUDGED + SAID:
        t = by_cmd.get(cmd, [])
        o = ours.get(cmd, collections.Counter())
        perf_share = sum(1 for s in t if reaches_entry(s.frames)) / max(1, len(t))
        our_share = o["outermost"] / max(1, o["n"])
        line = (f"{cmd}: outermost frame in {our_share:.1%} of our {o['n']} samples, "
                f"perf {perf_share:.1%} of {len(t)}")
        if cmd in SAID:
            # The driver is sampled a few times a run (3-6 of perf's processes in CI):
            # judged on all its samples once warm, the loop run twice.
            a = warm_on.get(cmd, collections.Counter())
            tap.diag(f"{line}; ours ended {ends(o)}")
            tap.ok(a["n"] >= 10 and a["end:no_table"] <= 0.1 * a["n"],
                   f"{cmd}: {a['end:no_table']} of {a['n']} samples without a table once warm "
                   "(<= 10 %: its vfork children walk with its table, and execve has no user "
                   "stack)")
            continue
        if not tap.ok(len(t) >= 50 and o["n"] >= 50, f"{cmd}: both sampled it (ours {o['n']}, "
                      f"perf {len(t)})"):
            continue
        tap.ok(our_share >= 0.9 * perf_share, f"{line} (>= 90 % of perf's)")
        c = cold.get(cmd, collections.Counter())
        cold_share = c["outermost"] / max(1, c["n"])
        line = (f"{cmd}, cold: outermost frame in {cold_share:.1%} of our {c['n']} samples "
                f"(>= 90 % of perf's {perf_share:.1%})")
        if cmd == "cc1":
            tap.ok(c["n"] >= 50 and cold_share >= 0.9 * perf_share, line)
        else:
            tap.diag(line)	# as: 15 ms each; under ASan its libraries' rows come later
        tap.ok(o["end:no_table"] <= 0.05 * o["n"],
               f"{cmd}: {o['end:no_table']} of {o['n']} samples without a table (<= 5 %)")
        tap.ok(o["end:read_error"] <= 0.03 * o["n"],
               f"{cmd}: {o['end:read_error']} of {o['n']} walks failed to read the stack (<= 3 %; "
               "as had 8 % when a table built while execve mapped the new image walked the old "
               "image's registers)")
        tap.diag(f"{cmd}: how ours ended: {ends(o)}; {o['bare']} of {o['frames']} frames bare")
    check_marks(dump, evs, t1)
    none = [e for e in evs if e["type"] == "sample" and e["comm"] in JUDGED + SAID and
            e.get("user_stack_end") in (None, "none")]
    tap.ok(none and all(len(e["stack"]) == e.get("kernel_frames", 0) for e in none),
           f"the {len(none)} samples with no user stack (in execve, or exiting with the mm gone) "
           "carry no user frames", [" <- ".join(e["stack"]) for e in none
                                    if len(e["stack"]) != e.get("kernel_frames", 0)][:3])
    # A sample that interrupts the BPF side's build of its process's new
    # table (at ld.so's mmap) walks with the table of before: 1 % of as's
    # samples had no table there.
    building = [e for e in evs if e["type"] == "sample" and
                any(f.endswith("_uproc_build [bpf]") for f in e["stack"][:e.get("kernel_frames", 0)])]
    tap.ok(all(e.get("user_stack_end") != "no_table" for e in building),
           f"the {len(building)} samples taken while their table was being built were walked "
           "with the one of before", [" <- ".join(e["stack"]) for e in building
                                      if e.get("user_stack_end") == "no_table"][:3])
    os.unlink(pdata)


tmp = tempfile.mkdtemp(prefix="fr-compile-")
d = Daemon(tap, window="120s", memory="256M", frequency=FREQ)
try:
    if tap.ok(d.ready(), "flightrecd ready"):
        test_compile(d, tmp)
finally:
    d.stop()
    subprocess.run(["rm", "-rf", tmp])
tap.done()
