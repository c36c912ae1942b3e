#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""flightrec export: a real dump (the real daemon sampling frspin, and a PID
reused by frtool) exported as a Chrome/Perfetto trace, a pprof profile and
folded stacks; each checked against its schema, the pprof one with a real
decoder (protoc --decode on the gunzipped bytes), and --pid/--from/--to
checked to select the same samples in every export. A vfork parent's wait
(frstall vfork) is a complete slice on its thread, as long as the dump's
event, inside the bounds the workload measured. frspin is built with
-g: its pprof Line records and the report's frame positions must name
tests/workloads/spin.c at the lines of its functions (a return address at
its call's line), and inlined levels come innermost first."""
import codecs
import collections
import gzip
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import (memory_cgroup, FLIGHTREC, FRSPIN, Daemon, Tap, events, flightrec,  # noqa: E402
                     processes, require_root_bpf, show, FRTOOL, FRSTALL, remove_cgroup)

VFORK_MS = 300
SLICE_NAMES = {"reclaim": "direct reclaim", "memcg": "memcg reclaim", "compaction": "compaction",
               "throttle": "reclaim throttle", "blocked": "blocked", "sleep": "sleep"}
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PROTO = os.path.join(ROOT, "tools", "profile.proto")
SPIN_SRC = os.path.join(ROOT, "tests", "workloads", "spin.c")
HAVE_PSI = os.path.exists("/proc/pressure/memory")

tap = Tap()
require_root_bpf(tap)


def export(*args):
    """Run `flightrec export ARGS`; return (rc, stdout bytes, stderr text)."""
    p = subprocess.run([FLIGHTREC, "export", *args], capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def chrome(path, *args):
    rc, out, err = export("--format", "chrome", *args, path)
    if rc:
        raise RuntimeError(f"export chrome failed ({rc}): {err}")
    return json.loads(out)


def parse_text_format(text):
    """protoc's text format as nested dicts whose values are all lists."""
    root, stack = {}, []
    cur = root
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.endswith("{"):
            obj = {}
            cur.setdefault(line[:-1].strip(), []).append(obj)
            stack.append(cur)
            cur = obj
        elif line == "}":
            cur = stack.pop()
        else:
            key, val = line.split(":", 1)
            val = val.strip()
            if val.startswith('"'):
                val = codecs.escape_decode(val[1:-1].encode())[0].decode("utf-8", "replace")
            elif val in ("true", "false"):
                val = val == "true"
            else:
                val = int(val)
            cur.setdefault(key, []).append(val)
    return root


def one(obj, key, default=0):
    return obj.get(key, [default])[0]


class Profile:
    """A pprof profile decoded by protoc, with its references resolved."""

    def __init__(self, gz):
        self.raw = gzip.decompress(gz)
        try:
            p = subprocess.run(["protoc", f"--proto_path={os.path.dirname(PROTO)}", "--decode",
                                "perftools.profiles.Profile", PROTO],
                               input=self.raw, capture_output=True)
            self.rc, self.text, self.err = p.returncode, p.stdout.decode(), p.stderr.decode()
        except FileNotFoundError:
            self.rc, self.text, self.err = 127, "", "protoc is missing: tools/bootstrap.sh deps installs it"
        m = parse_text_format(self.text) if self.rc == 0 else {}
        self.msg = m
        self.strings = m.get("string_table", [])
        s = self.strings
        self.functions = {one(f, "id"): s[one(f, "name")] for f in m.get("function", [])}
        self.func_files = {one(f, "id"): s[one(f, "filename")] for f in m.get("function", [])}
        self.mappings = {one(x, "id"): x for x in m.get("mapping", [])}
        self.locations = {one(x, "id"): x for x in m.get("location", [])}
        self.samples = []
        for x in m.get("sample", []):
            labels = {}
            for lb in x.get("label", []):
                k = s[one(lb, "key")]
                labels[k] = s[one(lb, "str")] if "str" in lb else one(lb, "num")
                if "num_unit" in lb:
                    labels[k + "_unit"] = s[one(lb, "num_unit")]
            self.samples.append({"locs": x.get("location_id", []), "value": x.get("value", []),
                                 "labels": labels})

    def own(self, loc):
        """The name of @loc's own frame as the dump's text spells it: its last
        line's function; a Python frame (a location in no mapping, whose
        function has a file) reads "qualname (file:line)" there."""
        lines = loc.get("line", [])
        if not lines:
            return None
        fid = one(lines[-1], "function_id")
        name = self.functions.get(fid, "?")
        if not loc.get("mapping_id") and self.func_files.get(fid):
            return f"{name} ({self.func_files[fid]}:{one(lines[-1], 'line')})"
        return name

    def names(self, sample):
        """The names of @sample's locations (their frames' own: the last
        line, into which the others were inlined), leaf first."""
        out = []
        for lid in sample["locs"]:
            name = self.own(self.locations.get(lid, {}))
            if name is not None:
                out.append(name)
        return out

    def levels(self, loc):
        """A location's lines as (function, file, line), innermost first."""
        return [(self.functions.get(one(ln, "function_id"), "?"),
                 self.func_files.get(one(ln, "function_id"), ""), one(ln, "line"))
                for ln in loc.get("line", [])]

    def value_types(self, key):
        return [(self.strings[one(v, "type")], self.strings[one(v, "unit")]) for v in self.msg.get(key, [])]

    def count(self, pid=None):
        return sum(x["value"][0] for x in self.samples if pid is None or x["labels"].get("pid") == pid)


def pprof(path, *args):
    rc, out, err = export("--format", "pprof", *args, path)
    if rc:
        raise RuntimeError(f"export pprof failed ({rc}): {err}")
    return Profile(out)


def folded_total(path, *args):
    rc, out, err = export("--format", "folded", *args, path)
    if rc:
        raise RuntimeError(f"export folded failed ({rc}): {err}")
    return sum(int(line.rsplit(" ", 1)[1]) for line in out.decode().splitlines())


def elf_build_id(path):
    """The GNU build-id note of an ELF64 little-endian file, in hex, or None."""
    with open(path, "rb") as f:
        hdr = f.read(64)
        if hdr[:4] != b"\x7fELF" or hdr[4] != 2:
            return None
        shoff = struct.unpack_from("<Q", hdr, 0x28)[0]
        shentsize, shnum = struct.unpack_from("<HH", hdr, 0x3a)
        f.seek(shoff)
        shdrs = f.read(shentsize * shnum)
        for i in range(shnum):
            sh = i * shentsize
            if struct.unpack_from("<I", shdrs, sh + 4)[0] != 7:  # SHT_NOTE
                continue
            off, size = struct.unpack_from("<QQ", shdrs, sh + 0x18)
            f.seek(off)
            data = f.read(min(size, 1 << 16))
            p = 0
            while p + 12 <= len(data):
                namesz, descsz, ntype = struct.unpack_from("<III", data, p)
                desc = p + 12 + ((namesz + 3) & ~3)
                if ntype == 3 and data[p + 12:p + 12 + namesz].rstrip(b"\0") == b"GNU":
                    return data[desc:desc + descsz].hex()
                p = desc + ((descsz + 3) & ~3)
    return None


UNSYMBOLIZED = ("the dump has no symbolized frame of frspin (the daemon did not read its maps in "
                "time; test_recorder checks that): compared with events --json only")


UNRESOLVED = re.compile(r"^(0x[0-9a-f]+|\S+\+0x[0-9a-f]+)$")


def unresolved(name):
    """Is @name how events --json shows an unresolved frame: its address, or
    "file+0xoffset" in a known binary (pprof: a location without lines)?"""
    return UNRESOLVED.match(name) is not None


def symbolized(evs, pid):
    """Does the dump name frspin's functions in @pid's samples?"""
    return any("fr_spin_leaf" in e["stack"] for e in evs if e["pid"] == pid and e["type"] == "sample")


def cpu_samples(trace, track=None):
    return [e for e in trace["traceEvents"] if e["ph"] == "i" and e.get("cat") == "cpu" and
            (track is None or e["pid"] == track)]


def process_tracks(trace, pid):
    """{synthetic pid: process_name args} for the incarnations of real @pid."""
    return {e["pid"]: e["args"] for e in trace["traceEvents"]
            if e["ph"] == "M" and e["name"] == "process_name" and e["args"].get("pid") == pid}


def check_cli(path, tmp):
    rc, out, _ = flightrec("--help")
    tap.ok(rc == 0 and "export" in out, "flightrec --help lists export")
    rc, out, _ = export("--help")
    out = out.decode()
    tap.ok(rc == 0 and all(w in out for w in ("chrome", "pprof", "folded", "--pid", "--from", "-o FILE")),
           "export --help names the formats and options", out)
    rc, out, _ = export("--version")
    tap.ok(rc == 0 and out.decode().startswith("flightrec "), "export --version")
    bad = [
        ((path,), "missing --format"),
        (("--format", "svg", path), "unknown --format"),
        (("--format", "chrome"), "missing DUMP"),
        (("--format", "chrome", path, path), "one DUMP only"),
        (("--format", "chrome", "--pid=abc", path), "bad --pid"),
        (("--format", "chrome", "--from=soon", path), "bad --from"),
        (("--format", "chrome", "--bogus", path), "unknown option"),
        (("--format", "chrome", "-o"), "needs a value"),
    ]
    for args, what in bad:
        rc, out, err = export(*args)
        tap.ok(rc == 2 and what in err and not out, f"usage error exits 2: {what}", f"rc={rc} err={err!r}")

    missing = os.path.join(tmp, "nope.frd")
    dest = os.path.join(tmp, "never.json")
    rc, out, err = export("--format", "chrome", "-o", dest, missing)
    tap.ok(rc == 1 and "nope.frd" in err, "an unreadable dump exits 1 and names it", err)
    tap.ok(not os.path.exists(dest) and not [f for f in os.listdir(tmp) if f.startswith("never")],
           "and leaves no output file behind", os.listdir(tmp))
    cut = os.path.join(tmp, "cut.frd")
    with open(path, "rb") as f, open(cut, "wb") as g:
        g.write(f.read()[:2000])
    for fmt in ("chrome", "pprof", "folded"):
        rc, out, err = export("--format", fmt, "-o", os.path.join(tmp, f"cut.{fmt}"), cut)
        tap.ok(rc == 1 and "cut.frd" in err and not os.path.exists(os.path.join(tmp, f"cut.{fmt}")),
               f"{fmt}: a truncated dump is a runtime error (exit 1), no file written", err)
    rc, out, err = export("--format", "pprof", "-o", os.path.join(tmp, "no", "such", "dir.pb.gz"), path)
    tap.ok(rc == 1 and "failed to create" in err, "an output file that cannot be created exits 1", err)

    # pprof is binary: never onto a terminal.
    master, slave = pty.openpty()
    try:
        p = subprocess.run([FLIGHTREC, "export", "--format", "pprof", path], stdout=slave,
                           stderr=subprocess.PIPE, timeout=60)
        os.set_blocking(master, False)
        try:
            leaked = os.read(master, 4096)
        except BlockingIOError:
            leaked = b""
    finally:
        os.close(slave)
        os.close(master)
    tap.ok(p.returncode == 2 and b"terminal" in p.stderr and not leaked,
           "pprof to a terminal is refused (exit 2), nothing written", f"rc={p.returncode} {p.stderr!r}")


def check_chrome(path, spin_pid, reuse_pid, evs, summary):
    rc, out, err = export("--format", "chrome", path)
    try:
        trace = json.loads(out)
    except ValueError as e:
        tap.ok(False, "chrome: the export parses as JSON", f"{e}; rc={rc} err={err}")
        return None
    tap.ok(rc == 0 and isinstance(trace, dict), "chrome: the export parses as one JSON object")
    tap.ok(isinstance(trace.get("traceEvents"), list) and trace.get("displayTimeUnit") == "ms" and
           isinstance(trace.get("metadata"), dict),
           "chrome: traceEvents, displayTimeUnit ms and metadata at the top level", list(trace))
    te = trace["traceEvents"]
    bad = [e for e in te if not {"ph", "ts", "pid", "tid", "name"} <= set(e) or
           not isinstance(e["pid"], int) or not isinstance(e["tid"], int) or
           not isinstance(e["ts"], (int, float)) or e["ts"] < 0 or not isinstance(e["name"], str)]
    tap.ok(te and not bad, f"chrome: each of the {len(te)} events has ph, ts >= 0, pid, tid, name", bad[:3])
    tap.ok(all(e["ph"] in ("M", "i", "C", "X") for e in te) and
           all(e.get("s") in ("t", "p", "g") for e in te if e["ph"] == "i"),
           "chrome: only M, i (with a scope), C and X events")
    tap.ok(all(e["name"] in ("process_name", "process_sort_index", "thread_name") and
               isinstance(e.get("args"), dict) for e in te if e["ph"] == "M"),
           "chrome: metadata events are process/thread names and sort indexes")
    names = [e for e in te if e["ph"] == "M" and e["name"] == "process_name"]
    tap.eq(len({e["pid"] for e in names}), len(names), "chrome: one process_name per track")

    starts = {e["start"] for e in evs if e["pid"] == spin_pid}
    tracks = process_tracks(trace, spin_pid)
    tap.ok(len(tracks) == 1 and list(tracks.values())[0]["start_ns"] in starts and
           list(tracks.values())[0]["name"].startswith(f"frspin [pid {spin_pid}, start "),
           "chrome: the workload's process has its name metadata: comm [pid P, start S s]", tracks)
    track = list(tracks)[0] if tracks else None
    tnames = {e["tid"]: e["args"]["name"] for e in te
              if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == track}
    want = [e for e in evs if e["pid"] == spin_pid and e["type"] == "sample"]
    tap.ok(len(tnames) >= 2 and {e["tid"] for e in want} <= set(tnames),
           f"chrome: thread_name for each sampled thread of the workload ({sorted(tnames)})")
    got = cpu_samples(trace, track)
    tap.eq(len(got), len(want), "chrome: one instant per CPU sample of the workload")
    ws = summary["window"]["start"]
    tap.eq(sorted(round(e["ts"] * 1000) + ws for e in got), sorted(e["ts"] for e in want),
           "chrome: ts is microseconds from the window start, to the nanosecond")
    tap.eq(sorted((round(e["ts"] * 1000) + ws, e["tid"], tuple(e["args"]["stack"])) for e in got),
           sorted((e["ts"], e["tid"], tuple(e["stack"])) for e in want),
           "chrome: each sample has its thread and its stack, leaf first, in args.stack")
    tap.ok(all(e["name"] == (e["args"]["stack"] or ["[no_stack]"])[0] for e in got),
           "chrome: a sample is named by its leaf frame")
    full = [e for e in got if {"fr_spin_leaf", "fr_spin_middle", "fr_spin_outer"} <= set(e["args"]["stack"])]
    if symbolized(evs, spin_pid):
        tap.ok(len(full) >= len(got) // 2 and
               all(e["args"]["stack"].index("fr_spin_leaf") < e["args"]["stack"].index("fr_spin_middle") <
                   e["args"]["stack"].index("fr_spin_outer") for e in full),
               f"chrome: the workload's stacks read fr_spin_leaf, fr_spin_middle, fr_spin_outer "
               f"({len(full)}/{len(got)})", got[:2])
    else:
        tap.ok(True, f"# SKIP {UNSYMBOLIZED}")
    tap.ok(all(e["s"] == "t" for e in got), "chrome: samples are thread-scoped instants")

    rstarts = sorted({e["start"] for e in evs if e["pid"] == reuse_pid})
    rtracks = process_tracks(trace, reuse_pid)
    tap.ok(len(rtracks) == 2 and sorted(a["start_ns"] for a in rtracks.values()) == rstarts,
           f"chrome: the reused PID {reuse_pid} shows as two process tracks, one per start", rtracks)
    by_start = {a["start_ns"]: t for t, a in rtracks.items()}
    if len(rstarts) == 2 and len(by_start) == 2:
        # Each track holds exactly its incarnation's samples and stacks.
        same = True
        for s in rstarts:
            got_s = sorted((round(e["ts"] * 1000) + ws, tuple(e["args"]["stack"]))
                           for e in cpu_samples(trace, by_start[s]))
            want_s = sorted((e["ts"], tuple(e["stack"])) for e in evs
                            if e["pid"] == reuse_pid and e["start"] == s and e["type"] == "sample")
            same = same and got_s == want_s and len(got_s) > 0
        first, second = (cpu_samples(trace, by_start[s]) for s in rstarts)
        f1 = [e for e in first if any(x.startswith("fr_reuse") for x in e["args"]["stack"])]
        f2 = [e for e in second if any(x.startswith("fr_reuse") for x in e["args"]["stack"])]
        tap.ok(same and not [e for e in f1 if "fr_reuse_second" in e["args"]["stack"]] and
               not [e for e in f2 if "fr_reuse_first" in e["args"]["stack"]],
               f"chrome: each track has exactly its own incarnation's samples and stacks "
               f"({len(first)}, {len(second)}; in fr_reuse_*: {len(f1)}, {len(f2)})")
        if not f1 or not f2:
            tap.diag("the dump has no symbolized fr_reuse_* frames for an incarnation (daemon side)")
        ex = {s: [e for e in te if e.get("cat") == "process" and e["args"].get("type") == "exit" and
                  e["pid"] == by_start[s]] for s in rstarts}
        tap.ok([e["args"]["status"] for e in ex[rstarts[0]]] == ["exit 11"] and
               [e["args"]["status"] for e in ex[rstarts[1]]] == ["exit 22"] and
               all("utime_ns" in e["args"] and "rss_peak" in e["args"] for s in rstarts for e in ex[s]),
               "chrome: each incarnation's exit is an instant on its own track, with counters", ex)
    else:
        tap.ok(False, "chrome: each track has its own incarnation's samples", rtracks)
        tap.ok(False, "chrome: each incarnation's exit is an instant on its own track", rtracks)

    forks = [e for e in te if e.get("cat") == "process" and e["args"].get("type") == "fork" and
             e["args"].get("child_pid") == spin_pid]
    tap.ok(len(forks) == 1 and forks[0]["args"]["child_track"] == track and
           forks[0]["args"]["child_start_ns"] in starts,
           "chrome: the fork instant names the child incarnation and its track", forks)
    execs = [e for e in te if e.get("cat") == "process" and e["args"].get("type") == "exec" and e["pid"] == track]
    tap.ok(len(execs) == 1 and execs[0]["args"]["filename"].endswith("frspin"),
           "chrome: the exec instant has the filename", execs)
    # One spelling per field: every field of a process instant's args is in the event's
    # `events --json` object under the same key, with the same value.
    own = {(e["ts"], e["type"], e["pid"], e["tid"]): e for e in evs}
    mismatched = []
    for e in te:
        if e.get("cat") != "process" or e["args"].get("type") not in ("exit", "fork", "exec", "oom"):
            continue
        a = e["args"]
        mine = [o for k, o in own.items() if k[1] == a["type"] and k[2] == a["pid"] and k[3] == e["tid"]
                and o["start"] == a["start_ns"]]
        fields = {k: v for k, v in a.items() if k not in ("type", "pid", "start_ns", "comm", "child_track")}
        if not any(all(o.get(k) == v for k, v in fields.items()) for o in mine):
            mismatched.append((a, mine[:1]))
    tap.ok(not mismatched, "chrome args and events --json spell every field of an event alike",
           mismatched[:2])

    counters = [e for e in te if e["ph"] == "C"]
    if HAVE_PSI:
        mem = [e for e in counters if e["name"].startswith("memory pressure")]
        tap.ok(len(mem) >= 2 and all(isinstance(e["args"].get("some_avg10"), (int, float)) for e in mem),
               f"chrome: memory pressure is a counter track with some_avg10 ({len(mem)} readings)")
        tap.ok(any("some_stall_ms_per_s" in e["args"] for e in mem) and
               all(e["args"].get("some_stall_ms_per_s", 0) >= 0 for e in mem),
               "chrome: with the stall per second from the total= deltas", mem[:3])
        psi = [e for e in counters if " pressure " in e["name"]]
        series = {e["name"] for e in psi}
        tap.ok({"cpu pressure system", "memory pressure system", "io pressure system"} <= series and
               len({e["pid"] for e in psi}) == 1,
               f"chrome: one counter series per (resource, source) on one track ({sorted(series)})")
    else:
        tap.ok(True, "# SKIP /proc/pressure is missing: no PSI history to export")
        tap.ok(True, "# SKIP /proc/pressure is missing")
        tap.ok(True, "# SKIP /proc/pressure is missing")

    trig = [e for e in te if e["ph"] == "i" and e.get("s") == "g"]
    tap.ok(len(trig) == len(summary["triggers"]) and trig and trig[0]["args"]["type"] == "signal" and
           str(os.getpid()) in trig[0]["args"]["reason"],
           "chrome: each trigger is a global instant marker with its reason", trig)
    tap.ok(trig and round(trig[0]["ts"] * 1000) + ws == trig[0]["args"]["ts_boottime_ns"],
           "chrome: at the trigger's time")
    md = trace["metadata"]
    meta = summary["meta"]
    tap.ok(md.get("window_start_boottime_ns") == ws and
           md.get("window_start_realtime_ns") == meta["clock_realtime_ns"] + ws - meta["clock_boottime_ns"] and
           md.get("window_start_utc", "").endswith("UTC") and md.get("frequency") == meta["frequency"],
           "chrome: metadata has the window start as CLOCK_BOOTTIME and wall clock", md)
    return trace


def stalls_recorded(path):
    """Does the dump record stalls (format 1.5 and [stalls] on)?"""
    rc, out, _ = flightrec("stalls", "--json", path)
    return rc == 0 and json.loads(out).get("recorded") is True


def check_chrome_stalls(path, trace, evs, summary, vfork):
    """Stall and offcpu events are complete slices on their thread's track."""
    te = trace["traceEvents"]
    ws = summary["window"]["start"]
    want = [e for e in evs if e["type"] in ("stall", "offcpu")]
    got = [e for e in te if e["ph"] == "X"]
    if not stalls_recorded(path):
        for _ in range(5):
            tap.ok(True, "# SKIP the dump records no stalls (a kernel without the stall and "
                   "off-CPU tracepoints, or [stalls] off)")
        return
    tap.eq(len(got), len(want), "chrome: one X slice per stall and offcpu event of the dump")
    tap.ok(all(e.get("cat") == ("offcpu" if e["args"]["type"] == "offcpu" else "stall") and
               e["dur"] >= 0 and SLICE_NAMES.get(e["args"]["kind"]) == e["name"] for e in got),
           "chrome: a slice's cat is stall/offcpu, its name says its kind, its dur is >= 0", got[:2])
    # One spelling per field, as events --json has it; ts and dur are the event's [begin, end].
    own = {(e["pid"], e["start"], e["tid"], e["begin_ns"], e["kind"]): e for e in want}
    bad = []
    for e in got:
        a = e["args"]
        o = own.get((a["pid"], a["start_ns"], e["tid"], a["begin_ns"], a["kind"]))
        fields = {k: v for k, v in a.items() if k not in ("type", "pid", "start_ns", "comm", "thread")}
        clipped = a["begin_ns"] < ws
        if (o is None or any(o.get(k) != v for k, v in fields.items()) or
                (not clipped and abs(round(e["ts"] * 1000) + ws - a["begin_ns"]) > 1) or
                abs(round((e["ts"] + e["dur"]) * 1000) + ws - (a["begin_ns"] + a["duration_ns"])) > 1):
            bad.append((e, o))
    tap.ok(not bad, "chrome: each slice spans its event's [begin, end] and its args spell the "
           "fields as events --json does", bad[:2])
    no_oom = [e for e in te if e["ph"] == "i" and e["name"].startswith("oom kill") and
              e["args"].get("type") != "oom"]
    tap.ok(not no_oom, "chrome: no stall event is mistaken for an OOM kill instant", no_oom[:2])

    pid, tid, t0, t1 = vfork
    mine = [e for e in want if e["type"] == "offcpu" and e["kind"] == "blocked" and e["pid"] == pid and
            e["tid"] == tid and t0 <= e["begin_ns"] and e["begin_ns"] + e["duration_ns"] <= t1]
    ev = max(mine, key=lambda e: e["duration_ns"]) if mine else None
    if not tap.ok(ev is not None and ev["duration_ns"] >= VFORK_MS * 0.9e6,
                  f"the dump has the vfork parent's blocked wait ({VFORK_MS} ms) inside the bounds "
                  f"frstall measured", [e for e in want if e["pid"] == pid]):
        return
    tracks = process_tracks(trace, pid)
    sl = [e for e in got if e["pid"] in tracks and tracks[e["pid"]]["start_ns"] == ev["start"] and
          e["tid"] == tid and e["name"] == "blocked" and e["cat"] == "offcpu" and
          abs(round(e["ts"] * 1000) + ws - ev["begin_ns"]) <= 1]
    tap.ok(len(sl) == 1 and abs(sl[0]["dur"] * 1000 - ev["duration_ns"]) <= 0.05 * ev["duration_ns"] and
           t0 <= round(sl[0]["ts"] * 1000) + ws and round((sl[0]["ts"] + sl[0]["dur"]) * 1000) + ws <= t1 and
           sl[0]["args"]["pid"] == pid,
           f"chrome: the vfork parent's wait is an X slice \"blocked\" on its process's track and its "
           f"thread {tid}, dur within 5% of the event's {ev['duration_ns'] / 1e6:.3f} ms",
           [sl, ev, tracks])


def check_pprof(path, tmp, spin_pid, reuse_pid, evs, summary):  # noqa: C901
    out = os.path.join(tmp, "profile.pb.gz")
    rc, _, err = export("--format", "pprof", "-o", out, path)
    data = open(out, "rb").read() if os.path.exists(out) else b""
    tap.ok(rc == 0 and data[:2] == b"\x1f\x8b", "pprof: -o writes a gzip file", err)
    rc2, stdout_bytes, _ = export("--format", "pprof", path)
    tap.ok(rc2 == 0 and gzip.decompress(stdout_bytes) == gzip.decompress(data),
           "pprof: stdout (not a terminal) gets the same profile")
    prof = Profile(data)
    tap.ok(prof.rc == 0 and prof.text, "pprof: protoc --decode perftools.profiles.Profile reads it", prof.err)
    tap.eq(prof.strings[:1], [""], "pprof: string_table[0] is empty")
    tap.eq(prof.value_types("sample_type"), [("samples", "count"), ("cpu", "nanoseconds"), ("offcpu", "nanoseconds")],
           "pprof: sample_type samples/count, cpu/nanoseconds, offcpu/nanoseconds")
    period = 10**9 // summary["meta"]["frequency"]
    tap.ok(prof.value_types("period_type") == [("cpu", "nanoseconds")] and one(prof.msg, "period") == period,
           f"pprof: period_type cpu/nanoseconds, period {period} (1e9 / frequency)")
    tap.ok(all(len(s["value"]) == 3 and s["value"][1] == s["value"][0] * period and s["value"][2] >= 0
               for s in prof.samples),
           "pprof: every sample has count, count x period ns and its ns off the CPU")
    nsamp = len([e for e in evs if e["type"] == "sample"])
    tap.eq(prof.count(), nsamp, "pprof: the counts add up to the dump's samples")
    tap.eq(sum(s["value"][2] for s in prof.samples),
           sum(e["duration_ns"] for e in evs if e["type"] == "offcpu"),
           "pprof: the offcpu values add up to the dump's offcpu events' time")
    # The test's own processes: another process that dlcloses and dlopens a
    # library at another address has two stacks with the same locations
    # (a location's address is its offset in the file).
    keys = [(tuple(s["locs"]), s["labels"]["pid"], s["labels"]["start"], s["labels"]["thread"])
            for s in prof.samples if s["labels"]["pid"] in (spin_pid, reuse_pid)]
    tap.ok(keys and len(set(keys)) == len(keys),
           "pprof: one sample per distinct (stack, incarnation, thread name) of the workloads",
           f"{len(set(keys))} distinct of {len(keys)}")
    tap.ok(all({"pid", "start", "comm", "thread"} <= set(s["labels"]) and
               isinstance(s["labels"]["pid"], int) and isinstance(s["labels"]["comm"], str) and
               s["labels"]["start_unit"] == "nanoseconds" for s in prof.samples),
           "pprof: labels pid, start (numbers, start in ns) and comm, thread (strings)", prof.samples[:1])
    fn = {prof.own(x) for x in prof.locations.values() if x.get("line")}
    named = {f for e in evs if e["type"] in ("sample", "offcpu") for f in e["stack"] if not unresolved(f)}
    if any(e["type"] in ("sample", "offcpu") and not e["stack"] for e in evs):
        named.add("[no_stack]")
    tap.ok(fn == named and ({"fr_spin_leaf", "fr_spin_middle", "fr_spin_outer"} <= fn or
                            not symbolized(evs, spin_pid)),
           f"pprof: the locations' own functions (last lines) are the dump's resolved frames, "
           f"the workload's among them ({len(fn)})",
           f"missing {sorted(named - fn)[:5]}, extra {sorted(fn - named)[:5]}")
    mine = [s for s in prof.samples if s["labels"]["pid"] == spin_pid]
    starts = {e["start"] for e in evs if e["pid"] == spin_pid}
    tap.ok(mine and all(s["labels"]["comm"] == "frspin" and s["labels"]["start"] in starts for s in mine),
           "pprof: the workload's samples carry its comm and start")
    # Every sample, as (incarnation, thread, resolved frames leaf first), as often as in the dump.
    comm = {(x["pid"], x["start"]): x["comm"] for x in processes(path)}
    want = collections.Counter(
        (e["pid"], e["start"], e["comm"] or comm.get((e["pid"], e["start"]), ""),
         tuple(f for f in e["stack"] if not unresolved(f)) if e["stack"] else ("[no_stack]",))
        for e in evs if e["type"] == "sample")
    got = collections.Counter()
    for x in prof.samples:
        lb = x["labels"]
        got[(lb["pid"], lb["start"], lb["thread"], tuple(prof.names(x)))] += x["value"][0]
    tap.ok(got == want, "pprof: every sample's incarnation, thread and frames, leaf first, as in the dump",
           f"missing {list((want - got).items())[:2]}, extra {list((got - want).items())[:2]}")
    rstarts = {s["labels"]["start"] for s in prof.samples if s["labels"]["pid"] == reuse_pid}
    tap.eq(len(rstarts), 2, f"pprof: the reused PID {reuse_pid} has samples of two incarnations (start labels)")

    maps = {prof.strings[one(m, "filename")]: m for m in prof.mappings.values()}
    spin_maps = [m for f, m in maps.items() if f == os.path.realpath(FRSPIN)]
    want_id = elf_build_id(os.path.realpath(FRSPIN))
    if symbolized(evs, spin_pid):
        tap.ok(spin_maps and want_id and prof.strings[one(spin_maps[0], "build_id")] == want_id,
               f"pprof: frspin's mapping has its build_id ({want_id})",
               [(f, prof.strings[one(m, 'build_id')]) for f, m in maps.items()])
    else:
        tap.ok(True, f"# SKIP {UNSYMBOLIZED}")
    # System binaries do not change under the test: their build-ids must match.
    with_id = [f for f, m in maps.items() if prof.strings[one(m, "build_id")] and
               f.startswith("/usr/") and os.path.exists(f)]
    tap.ok(with_id and all(prof.strings[one(maps[f], "build_id")] == elf_build_id(f) for f in with_id),
           f"pprof: mappings carry their binaries' build-ids ({len(with_id)} under /usr checked)",
           [(f, prof.strings[one(maps[f], 'build_id')], elf_build_id(f)) for f in with_id])
    kern = maps.get("[kernel.kallsyms]")
    kernel_locs = [x for x in prof.locations.values() if kern and one(x, "mapping_id") == one(kern, "id")]
    tap.ok(kern is not None and kernel_locs and
           all(one(kern, "memory_start") <= one(x, "address") < one(kern, "memory_limit") for x in kernel_locs),
           "pprof: kernel frames are in a [kernel.kallsyms] mapping that spans their addresses")
    bad = [x for x in prof.locations.values()
           if (one(x, "mapping_id") and one(x, "mapping_id") not in prof.mappings) or
           any(one(ln, "function_id") not in prof.functions for ln in x.get("line", []))]
    tap.ok(not bad, "pprof: locations reference existing mappings and functions", bad[:3])
    # An unresolved frame is a location with only its address: outside any
    # binary the address events --json shows, in a binary its file offset
    # (and that mapping does not claim to have every function).
    hexes = {f for e in evs if e["type"] in ("sample", "offcpu") for f in e["stack"] if f.startswith("0x")}
    unres = [x for x in prof.locations.values() if not x.get("line")]
    bad = [x for x in unres if (not one(x, "mapping_id") and hex(one(x, "address")) not in hexes) or
           (one(x, "mapping_id") and one(prof.mappings[one(x, "mapping_id")], "has_functions", False))]
    tap.ok(not bad, f"pprof: unresolved frames are locations with only an address ({len(unres)})", bad[:3])
    tap.ok(all(lid in prof.locations for s in prof.samples for lid in s["locs"]),
           "pprof: samples reference existing locations")
    ws, we = summary["window"]["start"], summary["window"]["end"]
    meta = summary["meta"]
    tap.ok(one(prof.msg, "time_nanos") == meta["clock_realtime_ns"] + ws - meta["clock_boottime_ns"] and
           one(prof.msg, "duration_nanos") == we - ws,
           "pprof: time_nanos is the window start's wall clock, duration_nanos its length")
    tap.ok(prof.strings[one(prof.msg, "default_sample_type")] == "cpu", "pprof: default sample type cpu")

    check_pprof_lines(prof, spin_pid, evs)

    if shutil.which("go"):
        env = dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "gocache"))
        p = subprocess.run(["go", "tool", "pprof", "-raw", out], capture_output=True, text=True, env=env)
        tap.ok(p.returncode == 0 and "pid:[" in p.stdout and
               ("fr_spin_leaf" in p.stdout or not symbolized(evs, spin_pid)),
               "pprof: go tool pprof -raw reads it", p.stderr[-2000:])
    else:
        tap.diag("go tool pprof is not available here (no go toolchain); protoc --decode is the decoder")
    return prof


def spin_source():
    """spin.c's functions: {name: (first line, last line)} of their bodies,
    and {callee: line} of the calls fr_spin_middle and fr_spin_outer make."""
    with open(SPIN_SRC) as f:
        text = f.read().splitlines()
    bodies, calls, cur = {}, {}, None
    for n, line in enumerate(text, 1):
        m = re.match(r"__attribute__\(\(noinline\)\) void (fr_spin_\w+)\(double until\)$", line)
        if m:
            cur = m.group(1)
            bodies[cur] = [n, n]
        elif cur and line == "}":
            bodies[cur][1] = n
            cur = None
        elif cur:
            c = re.match(r"\t(fr_spin_\w+)\(until\);$", line)
            if c:
                calls[c.group(1)] = n
    return bodies, calls


def check_pprof_lines(prof, spin_pid, evs):
    """frspin (built with -g) has Line records: spin.c, its lines."""
    if not symbolized(evs, spin_pid):
        for _ in range(5):
            tap.ok(True, f"# SKIP {UNSYMBOLIZED}")
        return
    bodies, calls = spin_source()
    spin_map = [i for i, m in prof.mappings.items() if prof.strings[one(m, "filename")] == os.path.realpath(FRSPIN)]
    locs = {}
    for x in prof.locations.values():
        if one(x, "mapping_id") in spin_map and x.get("line"):
            lv = prof.levels(x)
            locs.setdefault(lv[-1][0], []).append(lv)
    leaf = locs.get("fr_spin_leaf", [])
    lo, hi = bodies.get("fr_spin_leaf", (0, 0))
    tap.ok(leaf and all(len(lv) == 1 and os.path.realpath(lv[0][1]) == os.path.realpath(SPIN_SRC) and
                        lo < lv[0][2] <= hi for lv in leaf),
           f"pprof: fr_spin_leaf's locations have one Line each, in {os.path.relpath(SPIN_SRC, ROOT)} "
           f"lines {lo + 1}..{hi} ({sorted({lv[0][2] for lv in leaf})})", leaf[:5])
    tap.ok(all(prof.func_files.get(f) and os.path.realpath(prof.func_files[f]) == os.path.realpath(SPIN_SRC)
               for f, name in prof.functions.items() if name.startswith("fr_spin_")),
           "pprof: the workload's Functions have spin.c as their filename",
           [(n, prof.func_files.get(f)) for f, n in prof.functions.items() if n.startswith("fr_spin_")])
    for fn, callee in (("fr_spin_middle", "fr_spin_leaf"), ("fr_spin_outer", "fr_spin_middle")):
        got = sorted({lv[-1][2] for lv in locs.get(fn, [])})
        tap.ok(got == [calls.get(callee)],
               f"pprof: {fn} (a return address, looked up at addr - 1) is at the line of its call "
               f"to {callee}, spin.c:{calls.get(callee)}", f"got lines {got}")
    # Inlined levels, wherever the dump has some (libc, the daemon, ...).
    multi = [prof.levels(x) for x in prof.locations.values() if len(x.get("line", [])) > 1]
    tap.ok(all(all(f != "?" and file for f, file, _ in lv) for lv in multi),
           f"pprof: locations with inlined functions name a function and a file at every level "
           f"({len(multi)} such locations)", multi[:3])


def check_report_lines(path, tmp, spin_pid, evs):
    """The report's data carries the frames' source positions."""
    if not symbolized(evs, spin_pid):
        tap.ok(True, f"# SKIP {UNSYMBOLIZED}")
        return
    page = os.path.join(tmp, "lines.html")
    rc, _, err = flightrec("report", path, "-o", page)
    with open(page, encoding="utf-8") as f:
        m = re.search(r'<script type="application/json" id="fr-data">(.*?)</script>', f.read(), re.S)
    data = json.loads(m.group(1)) if rc == 0 and m else {}
    names, srcs = data.get("names", []), data.get("srcs", [])
    _, calls = spin_source()
    mid = srcs[names.index("fr_spin_middle")] if "fr_spin_middle" in names and len(srcs) == len(names) else []
    tap.ok(mid and all(len(c) == 1 and c[0][0] == "fr_spin_middle" and
                       os.path.realpath(c[0][1]) == os.path.realpath(SPIN_SRC) and
                       c[0][2] == calls.get("fr_spin_leaf") for c in mid),
           f"report: the data gives fr_spin_middle's position as spin.c:{calls.get('fr_spin_leaf')} "
           "(its frames' tooltip)", f"rc={rc} {err} srcs={mid}")


def check_filters(path, spin_pid, reuse_pid, evs, summary, trace, prof):
    """--pid and --from/--to select the same samples in every export."""
    for pid, what in ((spin_pid, "the workload"), (reuse_pid, "the reused PID")):
        arg = f"--pid={pid}"
        n_ev = len([e for e in events(path) if e["pid"] == pid and e["type"] == "sample"])
        ft = folded_total(path, arg)
        tr = chrome(path, arg)
        ct = len(cpu_samples(tr))
        pt = pprof(path, arg).count()
        tap.ok(n_ev > 0 and ft == ct == pt == n_ev,
               f"{arg} ({what}): samples equal in folded, chrome, pprof and events ({ft}, {ct}, {pt}, {n_ev})")
        tracks = {e["pid"] for e in tr["traceEvents"]
                  if e["ph"] == "M" and e["name"] == "process_name" and "start_ns" in e["args"]}
        tap.ok(all(e["args"].get("pid") == pid for e in tr["traceEvents"]
                   if e["ph"] == "M" and e["name"] == "process_name" and "start_ns" in e["args"]) and
               not [e for e in tr["traceEvents"] if e["ph"] == "C" and
                    not (e["name"] == "RSS" and e["pid"] in tracks)],
               f"{arg}: chrome keeps only that PID's tracks (its RSS counters among them); "
               "pressure and memory readings have no process, so none")
        tap.ok(len(cpu_samples(trace, None)) > ct and prof.count() > pt, f"{arg}: and really filters")

    # A range inside the workload's run, well before the trigger.
    origin = summary["triggers"][0]["ts"]
    ts = [e["ts"] for e in evs if e["pid"] == spin_pid and e["type"] == "sample"]
    lo, hi = (min(ts) - origin) / 1e9 + 0.3, (max(ts) - origin) / 1e9 - 0.3
    rng = (f"--from={lo:.3f}", f"--to={hi:.3f}")
    span = (round(hi * 1000) - round(lo * 1000)) * 10**6
    rc, out, _ = flightrec("events", "--json", *rng, path)
    evr = [json.loads(line) for line in out.splitlines() if line.strip()]
    n_ev = len([e for e in evr if e["type"] == "sample"])
    ft = folded_total(path, *rng)
    tr = chrome(path, *rng)
    ct = len(cpu_samples(tr))
    pr = pprof(path, *rng)
    pt = pr.count()
    tap.ok(n_ev > 0 and ft == ct == pt == n_ev,
           f"{' '.join(rng)}: samples equal in folded, chrome, pprof and events ({ft}, {ct}, {pt}, {n_ev})")
    tap.ok(len(cpu_samples(tr)) < len(cpu_samples(trace)), "--from/--to: and really filters")
    te = tr["traceEvents"]
    md = tr["metadata"]
    tap.ok(all(0 <= e["ts"] * 1000 <= span + 1000 for e in te if e["ph"] != "M") and
           abs(md["window_end_boottime_ns"] - md["window_start_boottime_ns"] - span) < 1000 and
           abs(md["window_start_boottime_ns"] - origin - round(lo * 1000) * 10**6) < 1000,
           "--from/--to: chrome times run from the range's start to its end", md)
    n_psi = len([e for e in evr if e["type"] == "pressure"])
    tap.eq(len([e for e in te if e["ph"] == "C" and " pressure " in e["name"]]), n_psi,
           "--from/--to: chrome keeps the pressure readings in range")
    n_mem = len([e for e in evr if e["type"] in ("rss", "memory", "memcg")])
    tap.eq(len([e for e in te if e["ph"] == "C" and " pressure " not in e["name"]]), n_mem,
           "--from/--to: and the RSS ledger entries and memory readings in range, as counters")
    tap.ok(abs(one(pr.msg, "duration_nanos") - span) < 1000, "--from/--to: pprof duration_nanos is the range")
    tap.ok(not [e for e in te if e["ph"] == "i" and e.get("s") == "g"],
           "--from/--to: a trigger outside the range is not marked")
    rng0 = ("--from=-1", "--to=1")
    tap.ok([e for e in chrome(path, *rng0)["traceEvents"] if e.get("s") == "g"],
           "--from/--to: a trigger inside the range is marked")


def check_folded(path, tmp, spin_pid):
    for args in ((), (f"--pid={spin_pid}",), ("--from=-5", "--to=-1")):
        rc1, a, _ = flightrec("folded", *args, path)
        rc2, b, _ = export("--format", "folded", *args, path)
        tap.ok(rc1 == rc2 == 0 and a and a == b.decode(),
               f"folded: export is byte for byte 'flightrec folded' {' '.join(args)}".rstrip())
    dest = os.path.join(tmp, "stacks.folded")
    rc, _, err = export("--format", "folded", "-o", dest, path)
    rc1, a, _ = flightrec("folded", path)
    tap.ok(rc == 0 and open(dest).read() == a, "folded: -o FILE holds the same", err)
    dest = os.path.join(tmp, "trace.json")
    rc, _, err = export("--format", "chrome", "-o", dest, path)
    _, b, _ = export("--format", "chrome", path)
    tap.ok(rc == 0 and open(dest, "rb").read() == b and not [f for f in os.listdir(tmp) if ".tmp." in f],
           "chrome: -o FILE holds what stdout gets, no temporary file left", err)


def check_oom():
    cg = memory_cgroup(48 << 20)
    if not cg:
        for _ in range(3):
            tap.ok(True, "# SKIP no memory cgroup controller to cause an OOM kill in")
        return
    cgdir, procs = cg
    d = Daemon(tap, extra="[trigger oom]\ntype = oom\npost = 500ms\ncooldown = 60s\n")
    try:
        if not tap.ok(d.ready(), "daemon with an oom trigger is ready", d.log()):
            return
        p = subprocess.Popen([FRTOOL, "hog", "512", procs], stdout=subprocess.DEVNULL)
        p.wait()
        m = d.wait_line(r"dump written to '([^']+)'", 20)
        if not tap.ok(m is not None and p.returncode == -9, "an OOM kill produces a dump", d.log()):
            return
        te = chrome(m.group(1))["traceEvents"]
        marks = [e for e in te if e["ph"] == "i" and e.get("s") == "g" and e["args"].get("type") == "oom"]
        tap.ok(marks and marks[0]["args"].get("victim", {}).get("pid") == p.pid,
               "chrome: the OOM trigger is a global marker naming its victim", marks)
        tracks = process_tracks({"traceEvents": te}, p.pid)
        kills = [e for e in te if e.get("cat") == "process" and e["args"].get("type") == "oom" and
                 e["pid"] in tracks]
        tap.ok(kills and kills[0]["args"]["rss_anon"] > 0 and "total_vm" in kills[0]["args"] and
               marks and marks[0]["args"]["victim"]["track"] == kills[0]["pid"],
               "chrome: the OOM kill is an instant on the victim's track with its memory", kills)
    finally:
        d.cleanup()
        remove_cgroup(cgdir)


def main():
    tmp = tempfile.mkdtemp(prefix="fr-exp-")
    # The subject is what the lines say, not how many fit in the deadline:
    # under ASan the DWARF of libc and libasan alone takes about 200 ms of
    # the default 250 ms, and the coldest of frspin's frames (one sample)
    # were left without lines in 5 runs of 8.
    d = Daemon(tap, window="20s", output_extra="resolve_timeout = 10s\n")
    try:
        if not tap.ok(d.ready(), "flightrecd is ready", d.log()):
            return
        spin = subprocess.Popen([FRSPIN, "--seconds", "3", "--threads", "2"])
        reuse = subprocess.Popen([FRTOOL, "reuse", "1.2"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        line = reuse.stdout.readline().strip()
        rrc = reuse.wait()
        spin.wait()
        if not tap.ok(line.isdigit() and rrc == 0, "frtool reuse ran two incarnations of one PID",
                      f"rc={rrc} out={line!r} err={reuse.stderr.read()!r}"):
            return
        reuse_pid = int(line)
        p = subprocess.run([FRSTALL, "vfork", str(VFORK_MS)], capture_output=True, text=True)
        vfork = [int(x) for x in p.stdout.split()]
        if not tap.ok(p.returncode == 0 and len(vfork) == 4, "frstall vfork ran", p.stderr):
            return
        time.sleep(1)
        path = d.dump()
        if not tap.ok(path is not None, "SIGUSR1 writes a dump", d.log()):
            return
        evs = events(path)
        summary = show(path)
        tap.ok(len({e["start"] for e in evs if e["pid"] == reuse_pid}) == 2,
               "the dump holds both incarnations of the reused PID")

        check_cli(path, tmp)
        trace = check_chrome(path, spin.pid, reuse_pid, evs, summary)
        if trace is not None:
            check_chrome_stalls(path, trace, evs, summary, vfork)
        prof = check_pprof(path, tmp, spin.pid, reuse_pid, evs, summary)
        check_report_lines(path, tmp, spin.pid, evs)
        skipped = summary["losses"].get("dump_lines_skipped")
        tap.ok(isinstance(skipped, int) and skipped >= 0,
               f"LOSS has dump_lines_skipped (source lines not looked up past the deadline: {skipped})",
               summary["losses"])
        check_folded(path, tmp, spin.pid)
        if trace is not None:
            check_filters(path, spin.pid, reuse_pid, evs, summary, trace, prof)
    finally:
        d.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    check_oom()


main()
tap.done()
