#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""User stacks without frame pointers, against perf's DWARF unwinding.

Each workload runs once for RUN_S, sampled at the same time by flightrecd
(499 Hz) and by `perf record -F 499 --call-graph dwarf,16384 -p PID` (-k
boottime, so that both clocks agree); ours are read from `flightrec events
--json` (each sample's time, end code and frames; `folded` has neither time
nor end). Only the workload's pid counts on either side, and only the
window both saw, from 1 s after the process started (before its unwind
table exists flightrecd walks frame pointers and says so: "no_table").
Per workload:

  completeness: the share of samples whose user stack reaches the outermost
    frame. Ours: the sample's end code ("user_stack_end" of `events --json`,
    else bits 5..7 of its flags), and separately from the frames alone (the
    root is an entry point, below). perf: from its frames. Wherever perf
    reaches it in >= 90% of samples, ours must in >= 95%, by both measures.
  no_table: the samples walked before the table existed are < 10% of all.
  leaf agreement: the overlap sum(min(ours, perf)) of the distributions of
    leaf frames >= 0.95.
  stack agreement: the same overlap of whole user stacks (leaf first, up to
    20 frames) >= 0.90.
  ground truth (our programs): the known call chain in >= 90% of samples.

A frame is compared as its symbol when it has one, else as the basename of
the file it is in (perf: "[unknown] (/usr/bin/python3.11)"; ours:
"python3.11+0x1bc9", or a bare address placed with the process's maps read
while it ran). Named frames are compared by name alone because `events
--json` names no file for them. The two print names differently, so both
are brought to one spelling (norm_sym): perf's symbol version suffix
(@@GLIBC_2.34) is dropped, and C++ names become the qualified name alone,
as perf prints them: without return type, parameters, qualifiers and GCC's
"[clone .isra.0]" (ours print the full signature, cut at NAME_MAX_OURS
bytes). Nothing else is renamed. Neither side shows inlined frames (perf
script --no-inline), so whole stacks are compared exactly.

The workloads: the stock Debian /usr/bin/python3, /usr/bin/xz and
/usr/bin/perl (no frame pointers, stripped: partly unnamed), frcxx
(tests/workloads/cxxwork.cc, C++ at -O2 -fomit-frame-pointer) and frmix
(tests/workloads/mixmain.c with frame pointers calling mixlib.c without,
which calls back)."""
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import FLIGHTREC, Daemon, Tap, require_root_bpf, FRCXX, FRMIX  # noqa: E402
from stackcmp import (NAME_MAX_OURS, Maps, Sample, our_frame, python_as_eval,  # noqa: E402
                      perf_samples, reaches_entry)

FREQ = 499
# perf and the workload, per workload: ~5000 samples to compare. Two samplers
# never pick the same instants, so even a perfect unwinder's distributions
# differ from perf's by sampling noise: at 8 s (~3500 samples a side) the
# noise alone takes the leaf overlap of perl and frcxx (many leaves of a few
# % each) to 0.95..0.98; at 12 s it stays above ~0.965. A workload whose
# rounds take a steady time adds more than that: a 499 Hz sampler can lock
# onto its phase (two perf records of one frcxx run: leaf overlap 0.92), so
# frcxx's rounds vary in length (16 perf-against-perf runs: >= 0.965).
RUN_S = 12.0
WARMUP_NS = 10**9	# a process's first second: its table may not exist yet
MAX_FRAMES = 20
COMPLETE_PERF = 0.90	# where perf reaches the outermost frame this often,
COMPLETE_OURS = 0.95	# ours must reach it this often
NO_TABLE_MAX = 0.10
LEAF_OVERLAP = 0.95
STACK_OVERLAP = 0.90
CHAIN_MIN = 0.90
MIN_SAMPLES = 300	# per side, in the compared window

UEND = ["none", "outermost", "no_info", "read_error", "depth", "no_table", "bad_pc", "invalid"]
PY_SRC = """
def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s

def middle(n):
    return leaf(n) + leaf(n // 2)

while True:
    middle(20000)
"""
PERL_SRC = "sub f { my $s = 0; $s += $_ * $_ for 1 .. 5000; $s } my $t = 0; while (1) { $t += f() }"

tap = Tap()
require_root_bpf(tap)
work = tempfile.mkdtemp(prefix="fr-stacks-")


def our_samples(dump, pid, maps):
    """The dump's samples of @pid: (samples, process start, how ends were read,
    the names that reached NAME_MAX_OURS)."""
    p = subprocess.run([FLIGHTREC, "events", "--json", "--pid", str(pid), "--type", "sample", dump],
                       capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"flightrec events failed ({p.returncode}): {p.stderr}")
    out, start, source, cut = [], None, set(), set()
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        e = json.loads(line)
        if e.get("type") != "sample" or e.get("pid") != pid:
            continue
        start = e["start"] if start is None else min(start, e["start"])
        user = python_as_eval(e["stack"][e.get("kernel_frames", 0):])
        cut.update(f for f in user if len(f.encode()) >= NAME_MAX_OURS)
        frames = [our_frame(s, maps) for s in user]
        if "user_stack_end" in e:
            end = e["user_stack_end"]
            source.add("user_stack_end")
        elif "flags" in e:
            code = (e["flags"] >> 5) & 7
            end = UEND[code]
            source.add("flags")
        else:
            end = None
            source.add("frames")
        out.append(Sample(e["ts"], e["tid"], frames, end))
    return out, start, source, cut


def dist(keys):
    c = collections.Counter(keys)
    n = sum(c.values())
    return {k: v / n for k, v in c.items()} if n else {}


def overlap(a, b):
    return sum(min(a.get(k, 0.0), b.get(k, 0.0)) for k in set(a) | set(b))


def worst(a, b, n=8):
    """The keys that differ most between distributions @a (ours) and @b (perf)."""
    ks = sorted(set(a) | set(b), key=lambda k: -abs(a.get(k, 0) - b.get(k, 0)))[:n]
    return "\n".join(f"ours {a.get(k, 0) * 100:5.1f}%  perf {b.get(k, 0) * 100:5.1f}%  {k}" for k in ks)


def leaf_key(s):
    return s.frames[0].key() if s.frames else "(no user frames)"


def stack_key(s):
    return " <- ".join(f.key() for f in s.frames[:MAX_FRAMES]) or "(no user frames)"


def share(n, d):
    return n / d if d else 0.0


def pct(x):
    return f"{x * 100:.1f}%"


def chain_at(frames, chain):
    """Does @chain (regexes, leaf first) match consecutive frames of @frames?
    With chain[0] None the chain must start at the leaf."""
    at_leaf = chain[0] is None
    chain = chain[1:] if at_leaf else chain
    starts = [0] if at_leaf else range(len(frames) - len(chain) + 1)
    for i in starts:
        if len(frames) - i >= len(chain) and \
           all(frames[i + j].sym and re.search(c, frames[i + j].sym) for j, c in enumerate(chain)):
            return True
    return False


def run_workload(d, name, argv, chain=None, chain_what=None):
    """Run @argv under both samplers; check and print the figures."""
    pdata = os.path.join(work, f"{name}.perf.data")
    maps = Maps()
    w = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    perf = None
    try:
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(FREQ), "-k", "boottime",
                                 "--call-graph", "dwarf,16384", "-p", str(w.pid), "-o", pdata],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        t0 = time.monotonic()
        time.sleep(2.0)
        maps.read(w.pid)
        time.sleep(max(0.0, RUN_S - (time.monotonic() - t0)))
        maps.read(w.pid)
        alive = w.poll() is None
        perf.send_signal(signal.SIGINT)
        try:
            _, perr = perf.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            perf.kill()
            _, perr = perf.communicate()
        dump = d.dump()
    finally:
        for p in (perf, w):
            if p and p.poll() is None:
                p.kill()
                p.wait()
    tap.ok(alive, f"{name}: the workload ran throughout the {RUN_S:.0f} s (pid {w.pid})",
           f"it exited early with status {w.returncode}")
    # perf record ends on SIGINT by raising it again once its data is written.
    tap.ok(perf.returncode in (0, -signal.SIGINT) and os.path.exists(pdata), f"{name}: perf record ran",
           f"exit status {perf.returncode}: {perr}")
    tap.ok(dump is not None, f"{name}: flightrecd wrote a dump")
    if dump is None or not os.path.exists(pdata):
        return
    try:
        ours_all, start, source, cut = our_samples(dump, w.pid, maps)
        theirs_all = perf_samples(pdata, w.pid)
    except (RuntimeError, ValueError) as e:
        tap.ok(False, f"{name}: flightrec events and perf script read the samples", e)
        return
    os.unlink(pdata)
    if not ours_all or not theirs_all:
        tap.ok(False, f"{name}: both sampled the workload (ours {len(ours_all)}, perf {len(theirs_all)})")
        return

    # no_table: over all of the process's samples; the rest after its first second,
    # in the window both saw.
    no_table = sum(1 for s in ours_all if s.end == "no_table")
    lo = max(start + WARMUP_NS, min(s.ts for s in theirs_all))
    hi = min(max(s.ts for s in ours_all), max(s.ts for s in theirs_all))
    ours = [s for s in ours_all if lo <= s.ts <= hi]
    theirs = [s for s in theirs_all if lo <= s.ts <= hi]
    late_no_table = sum(1 for s in ours if s.end == "no_table")
    ends = collections.Counter(s.end for s in ours)

    perf_done = share(sum(1 for s in theirs if reaches_entry(s.frames)), len(theirs))
    ours_frames = share(sum(1 for s in ours if reaches_entry(s.frames)), len(ours))
    have_end = "frames" not in source
    ours_end = share(ends.get("outermost", 0), len(ours)) if have_end else None
    leaf_ov = overlap(dist(leaf_key(s) for s in ours), dist(leaf_key(s) for s in theirs))
    stack_ov = overlap(dist(stack_key(s) for s in ours), dist(stack_key(s) for s in theirs))

    tap.diag(f"{name}: samples: ours {len(ours_all)} ({len(ours)} compared), perf {len(theirs_all)} "
             f"({len(theirs)} compared), window {(hi - lo) / 1e9:.2f} s from {(lo - start) / 1e9:.2f} s "
             f"after the process started")
    first = min(s.ts for s in ours_all)
    walked = [s.ts for s in ours_all if s.end not in ("no_table", None)]
    table_ms = f"{(min(walked) - first) / 1e6:.0f} ms" if walked else "never"
    tap.diag(f"{name}: no_table: {pct(share(no_table, len(ours_all)))} of all ours ({no_table}), "
             f"{late_no_table} after the first second; the first sample walked with the table came "
             f"{table_ms} after the process's first sample")
    tap.diag(f"{name}: outermost: ours {pct(ours_end) if have_end else 'n/a'} by end code "
             f"(from {'/'.join(sorted(source))}), {pct(ours_frames)} by frames; perf {pct(perf_done)}")
    tap.diag(f"{name}: our end codes: " +
             ", ".join(f"{k} {v} ({pct(share(v, len(ours)))})" for k, v in ends.most_common()))
    # Two samplers of one process never pick the same instants: even a perfect
    # unwinder differs from perf by sampling noise. perf against itself (its
    # alternate samples, each half the size) shows how much, for the record.
    halves = theirs[0::2], theirs[1::2]
    self_leaf = overlap(*(dist(leaf_key(s) for s in h) for h in halves))
    self_stack = overlap(*(dist(stack_key(s) for s in h) for h in halves))
    tap.diag(f"{name}: leaf overlap {leaf_ov:.3f}, stack overlap {stack_ov:.3f} "
             f"(perf's alternate samples against each other: leaf {self_leaf:.3f}, stack {self_stack:.3f})")
    if cut:
        tap.diag(f"{name}: {len(cut)} of our frame names are {NAME_MAX_OURS} bytes long, cut short "
                 f"(compared by the qualified name before the cut), e.g. {min(cut)[:100]}...")
    for line in worst(dist(leaf_key(s) for s in ours), dist(leaf_key(s) for s in theirs), 3).splitlines():
        tap.diag(f"{name}: leaf {line}")

    tap.ok(len(ours) >= MIN_SAMPLES and len(theirs) >= MIN_SAMPLES,
           f"{name}: >= {MIN_SAMPLES} samples each to compare (ours {len(ours)}, perf {len(theirs)})")
    tap.ok(share(no_table, len(ours_all)) < NO_TABLE_MAX,
           f"{name}: no_table (frame pointers before the table) < {pct(NO_TABLE_MAX)} of samples "
           f"({pct(share(no_table, len(ours_all)))}, {no_table}/{len(ours_all)})")
    if perf_done >= COMPLETE_PERF:
        not_out = [s for s in ours if s.end != "outermost"][:5]
        if have_end:
            tap.ok(ours_end >= COMPLETE_OURS,
                   f"{name}: ours reach the outermost frame (end code) in >= {pct(COMPLETE_OURS)} "
                   f"({pct(ours_end)}; perf {pct(perf_done)})",
                   "\n".join(f"{s.end}: {stack_key(s)}" for s in not_out))
        short = [s for s in ours if not reaches_entry(s.frames)][:5]
        tap.ok(ours_frames >= COMPLETE_OURS,
               f"{name}: ours end in an entry point (frames) in >= {pct(COMPLETE_OURS)} "
               f"({pct(ours_frames)}; perf {pct(perf_done)})",
               "\n".join(f"{s.end}: {stack_key(s)}" for s in short))
    else:
        tap.ok(True, f"{name}: outermost-frame bar # SKIP perf reaches the outermost frame in "
                     f"{pct(perf_done)} < {pct(COMPLETE_PERF)} of samples")
    tap.ok(leaf_ov >= LEAF_OVERLAP, f"{name}: leaf distributions overlap >= {LEAF_OVERLAP} ({leaf_ov:.3f})",
           worst(dist(leaf_key(s) for s in ours), dist(leaf_key(s) for s in theirs)))
    tap.ok(stack_ov >= STACK_OVERLAP,
           f"{name}: stack distributions overlap >= {STACK_OVERLAP} ({stack_ov:.3f})",
           worst(dist(stack_key(s) for s in ours), dist(stack_key(s) for s in theirs), 6))
    if chain:
        mine = [s for s in ours if chain_at(s.frames, chain)]
        perf_chain = share(sum(1 for s in theirs if chain_at(s.frames, chain)), len(theirs))
        tap.ok(share(len(mine), len(ours)) >= CHAIN_MIN,
               f"{name}: {chain_what} in >= {pct(CHAIN_MIN)} of ours ({pct(share(len(mine), len(ours)))}; "
               f"perf {pct(perf_chain)})",
               "\n".join([f"{s.end}: {stack_key(s)}" for s in ours if not chain_at(s.frames, chain)][:6]))
        return ours, mine
    return ours, None


def xz_data():
    """24 MiB of 4-bit text without long repeats: xz -6 -T1 takes ~40 s on it."""
    path = os.path.join(work, "xz.in")
    table = bytes((b"abcdefghijklmnop  \n" * 14)[:256])
    with open(path, "wb") as f:
        for _ in range(24):
            f.write(os.urandom(1 << 20).translate(table))
    return path


d = None
try:
    perf_bin = shutil.which("perf")
    ok = tap.ok(perf_bin is not None and
                subprocess.run(["perf", "--version"], capture_output=True).returncode == 0,
                "perf is installed (tools/bootstrap.sh: linux-perf)")
    for prog in (FRCXX, FRMIX, "/usr/bin/python3", "/usr/bin/xz", "/usr/bin/perl"):
        ok &= tap.ok(os.access(prog, os.X_OK), f"{prog} is there")
    if ok:
        xzin = xz_data()
        d = Daemon(tap, window="20s", frequency=FREQ)
        if tap.ok(d.ready(), "flightrecd is ready", d.log()):
            # What no_table measures is how soon a process started on a running
            # recorder is walked with rows, so the first workload does not start
            # while the start-up work (the /proc scan, the tables of what was
            # sampled in the first second) is still going on.
            if not d.settle():
                tap.diag("flightrecd did not settle within 20 s")
            t = time.monotonic()
            run_workload(d, "python", ["/usr/bin/python3", "-I", "-c", PY_SRC])
            run_workload(d, "xz", ["/usr/bin/xz", "-6", "-T1", "-c", xzin])
            run_workload(d, "perl", ["/usr/bin/perl", "-e", PERL_SRC])
            run_workload(d, "cxx", [FRCXX],
                         chain=[r"^work::level3$", r"^work::level2<unsigned int>$", r"^work::level1$",
                                r"^main$"],
                         chain_what="work::level3 <- work::level2<> <- work::level1 <- main")
            r = run_workload(d, "mix", [FRMIX],
                             chain=[None, r"^mix_spin$", r"^mix_callback$", r"^mixlib_step$",
                                    r"^mixlib_run$", r"^mix_outer$", r"^main$"],
                             chain_what="mix_spin <- mix_callback <- mixlib_step <- mixlib_run "
                                        "<- mix_outer <- main, leaf first")
            if r and r[1] is not None:
                ours, chained = r
                out = sum(1 for s in chained if s.end == "outermost")
                tap.ok(share(out, len(ours)) >= CHAIN_MIN,
                       f"mix: that chain, ending 'outermost', in >= {pct(CHAIN_MIN)} of ours "
                       f"({pct(share(out, len(ours)))})",
                       collections.Counter(s.end for s in chained).most_common())
            tap.diag(f"workloads took {time.monotonic() - t:.1f} s")
        d.stop()
finally:
    if d:
        d.cleanup()
    shutil.rmtree(work, ignore_errors=True)

tap.done()
