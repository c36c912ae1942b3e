#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Unwind tables follow a process's code: never another file's rows.

- dlswap: frtool (frame pointers) loads libfrdl.so, spins in it, unloads
  it and loads libfrdl2.so (no frame pointers, frames of another shape,
  one page of code like frdl's, so it takes frdl's place at the same
  address and leaves exec_vm as it was). After the swap, stacks must go
  through frdl2's three frames to dlswap and main and end at the
  outermost frame: walked with frdl's rows they break. The daemon must
  have found the table stale (the mmap-lock hook) and built a new one.
- exec: frtool spins, then execs Debian's xz in the same incarnation;
  after the exec the stacks are xz's, complete, with no frame of frtool.
- lifetime: the files' rows are kept while a process maps them, then idle,
  then reused: `status --json` counts them.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import FLIGHTREC, FRDL, FRDL2, FRTOOL, Daemon, Tap, events, require_root_bpf, show  # noqa: E402

SETTLE_S = 0.4		# a new table is attached well within this after a change

tap = Tap()
require_root_bpf(tap)


def boottime():
    return time.clock_gettime_ns(time.CLOCK_BOOTTIME)


def user_frames(ev):
    """The user part of a sample's stack, leaf first."""
    return ev["stack"][ev["kernel_frames"]:]


def samples_of(path, pid):
    return [e for e in events(path) if e["type"] == "sample" and e["pid"] == pid]


def status(d):
    import json
    p = subprocess.run([FLIGHTREC, "status", "--json", "--socket", d.socket],
                       capture_output=True, text=True)
    return json.loads(p.stdout) if p.returncode == 0 else {}


def test_dlswap(d):
    p = subprocess.Popen([FRTOOL, "dlswap", os.path.abspath(FRDL), os.path.abspath(FRDL2), "8"],
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().split()
    t_swap = boottime()
    p.wait(30)
    ok = tap.ok(len(line) == 3 and line[0] == "swap", "frtool dlswap ran and swapped libraries")
    if not ok:
        return
    a1, a2 = int(line[1], 16), int(line[2], 16)
    tap.diag(f"dlswap: fr_dl_spin at {a1:#x}, fr_dl2_spin at {a2:#x}: "
             f"{'the same page' if a1 >> 12 == a2 >> 12 else 'different pages'}")
    tap.ok(a1 >> 12 == a2 >> 12, "libfrdl2.so took libfrdl.so's place (the case that needs the check)")
    path = d.dump()
    if not tap.ok(path is not None, "dump written"):
        return
    ss = samples_of(path, p.pid)
    after = [e for e in ss if e["ts"] > t_swap + SETTLE_S * 1e9]
    # The first table of a new process waits behind the attacher's queue and,
    # on a loaded machine, may take longer than SETTLE_S; until then the walk
    # stops in libc's start code. The before part starts 1 s in.
    before = [e for e in ss if e["ts"] < t_swap - 0.2e9 and e["ts"] > ss[0]["ts"] + 1e9]
    tap.ok(len(after) > 300 and len(before) > 300,
           f"samples before ({len(before)}) and after ({len(after)}) the swap")

    def through(ev, n_lib):
        """n_lib frames in the library, then dlswap, then main, then outermost."""
        u = user_frames(ev)
        return (len(u) > n_lib + 1 and u[n_lib] == "dlswap" and u[n_lib + 1] == "main"
                and ev.get("user_stack_end") == "outermost")

    good_before = sum(through(e, 1) for e in before)
    good_after = sum(through(e, 3) for e in after)
    tap.ok(good_before >= 0.9 * len(before),
           f"before: 1 library frame, dlswap, main, outermost in {good_before}/{len(before)}",
           [((e["ts"] - ss[0]["ts"]) / 1e9, user_frames(e)[:6], e.get("user_stack_end"))
            for e in before if not through(e, 1)][::20][:12])
    bad = [user_frames(e)[:6] + [e.get("user_stack_end")] for e in after if not through(e, 3)]
    if not tap.ok(good_after >= 0.9 * len(after),
                  f"after: frdl2's 3 frames, dlswap, main, outermost in {good_after}/{len(after)}"):
        for b in bad[:5]:
            tap.diag(f"  {b}")
    tap.diag(f"dlswap: a stack before: {user_frames(before[len(before) // 2])[:4]}, "
             f"after: {user_frames(after[len(after) // 2])[:6]}")
    named_before = sum(user_frames(e)[:1] == ["fr_dl_spin"] for e in before)
    named_after = sum(user_frames(e)[:3] == ["fr_dl2_inner", "fr_dl2_middle", "fr_dl2_spin"]
                      for e in after)
    meta = show(path).get("meta", {})
    tap.ok(named_before >= 0.9 * len(before),
           f"before: named with libfrdl.so's symbols in {named_before}/{len(before)} "
           "(the image of their time, though libfrdl2.so now lives there)",
           f"the /proc worker: {({k: v for k, v in meta.items() if k.startswith('procinfo_')})}; "
           f"first sample {ss[0]['ts']}, swap {t_swap}")
    tap.ok(named_after >= 0.9 * len(after),
           f"after: named with libfrdl2.so's symbols in {named_after}/{len(after)}")
    loss = show(path).get("losses", {})
    stale = sum(loss.get("unwind_stale_samples", []) or [0])
    st = status(d).get("unwind", {})
    tap.diag(f"dlswap: unwind_stale_samples {stale}; status: {st}")


def test_dlchurn(d):
    """A new process swaps frdl and frdl2 in 10 ms round trips for 0.3 s, then
    spins in frdl2 for 2 s: the swaps land while its first table is being
    built (read at one library, installed when the other one, of the same
    size, is mapped in its place). That build must fail and start again, or
    the table describes the wrong file and stays (nothing changes the code
    again), as do the names."""
    p = subprocess.Popen([FRTOOL, "dlswap", os.path.abspath(FRDL), os.path.abspath(FRDL2), "2", "30"],
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().split()
    t_swap = boottime()
    p.wait(60)
    if not tap.ok(len(line) == 3 and line[0] == "swap", "frtool dlswap with 30 round trips ran"):
        return
    path = d.dump()
    if not tap.ok(path is not None, "dump written after the churn"):
        return
    after = [e for e in samples_of(path, p.pid) if e["ts"] > t_swap + SETTLE_S * 1e9]
    good = sum(user_frames(e)[:3] == ["fr_dl2_inner", "fr_dl2_middle", "fr_dl2_spin"] and
               len(user_frames(e)) > 4 and user_frames(e)[3:5] == ["dlswap", "main"] and
               e.get("user_stack_end") == "outermost" for e in after)
    tap.ok(len(after) > 300 and good >= 0.9 * len(after),
           f"after the churn: frdl2's 3 frames, dlswap, main, outermost in {good}/{len(after)}",
           [user_frames(e)[:6] + [e.get("user_stack_end")] for e in after][:3])
    named = sum(user_frames(e)[:1] == ["fr_dl2_inner"] for e in after)
    tap.ok(named >= 0.9 * len(after), f"after the churn: named with libfrdl2.so's symbols in "
           f"{named}/{len(after)}")


def test_exec(d):
    data = tempfile.NamedTemporaryFile(prefix="fr-xz-", delete=False)
    # 6 MiB of 4-bit text without long repeats: xz -6 -T1 takes ~3.5 s on it
    # (repeated random blocks would be matched and done in a fraction of that).
    table = bytes((b"abcdefghijklmnop  \n" * 14)[:256])
    for _ in range(6):
        data.write(os.urandom(1 << 20).translate(table))
    data.close()
    p = subprocess.Popen([FRTOOL, "exec-after", "2", "/usr/bin/xz", "-6", "-T1", "-c", data.name],
                         stdout=subprocess.DEVNULL)
    t0 = boottime()
    p.wait(120)
    os.unlink(data.name)
    path = d.dump()
    if not tap.ok(path is not None, "dump written after the exec"):
        return
    ss = samples_of(path, p.pid)
    xs = [e for e in ss if e["comm"] == "xz"]
    if not tap.ok(len(xs) > 200, f"samples of xz after the exec ({len(xs)})"):
        return
    t_exec = xs[0]["ts"]
    later = [e for e in xs if e["ts"] > t_exec + SETTLE_S * 1e9]
    pre = [e for e in ss if e["ts"] < t_exec and e["ts"] > t0]
    if not tap.ok(any("fr_preexec_spin" in user_frames(e) for e in pre),
                  f"before the exec, frtool's frames ({len(pre)} samples)",
                  [(e["ts"] - t_exec, e["comm"], user_frames(e)[:4], e.get("user_stack_end"))
                   for e in pre[::max(1, len(pre) // 8)]]):
        meta = show(path).get("meta", {})
        tap.diag({k: v for k, v in meta.items() if k.startswith(("procinfo", "dump_user"))})
        tap.diag([(e["type"], e["ts"] - t_exec, e.get("filename")) for e in events(path)
                  if e.get("pid") == p.pid and e["type"] in ("exec", "fork", "exit")])
    leak = sum(1 for e in later if any(f.startswith("fr_") or f in ("exec_after", "dlswap")
                                       for f in user_frames(e)))
    tap.ok(leak == 0, f"after the exec, no frame of frtool's image ({leak} of {len(later)})")
    done = sum(1 for e in later if e.get("user_stack_end") == "outermost")
    tap.ok(len(later) > 100 and done >= 0.95 * len(later),
           f"after the exec, xz's stacks reach the outermost frame in {done}/{len(later)}",
           [user_frames(e)[:6] + [e.get("user_stack_end")] for e in later
            if e.get("user_stack_end") != "outermost"][:5])


def test_lifetime(d):
    st = status(d).get("unwind", {})
    tap.ok(st.get("enabled") and st.get("files", 0) > 0,
           f"status reports the tables: {st.get('files')} files, {st.get('bytes')} bytes, "
           f"{st.get('rows_used')} rows")
    tap.ok(st.get("bytes", 0) <= 64 << 20, "their memory is within the default bound")
    tap.ok(st.get("files_idle", 0) > 0,
           f"files of exited processes are kept idle for reuse ({st.get('files_idle')})")


d = Daemon(tap, window="30s", frequency=499)
try:
    if tap.ok(d.ready(), "flightrecd ready"):
        test_dlswap(d)
        test_dlchurn(d)
        test_exec(d)
        time.sleep(1.5)		# the tick collects the exited processes' tables
        test_lifetime(d)
finally:
    d.cleanup()
tap.done()
