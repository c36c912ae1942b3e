# SPDX-License-Identifier: LGPL-2.1-or-later
"""Stacks compared with perf's: one spelling of a frame for both tools.

A frame is compared as its symbol when it has one, else as the basename of
the file it is in (perf: "[unknown] (/usr/bin/python3.11)"; ours:
"python3.11+0x1bc9", or a bare address placed with the process's maps read
while it ran). The two print names differently, so both are brought to one
spelling (norm_sym): perf's symbol version suffix (@@GLIBC_2.34) is dropped,
and C++ names become the qualified name alone, as perf prints them: without
return type, parameters, qualifiers and GCC's "[clone .isra.0]" (ours print
the full signature, cut at NAME_MAX_OURS bytes). Used by test_stacks (CPU
samples) and test_stalls (stacks of blocks and stalls)."""
import collections
import os
import re
import subprocess

NAME_MAX_OURS = 511	# the longest frame name flightrec prints: longer ones are cut

# Roots that are the outermost frame: the program's entry, a thread's start.
ENTRY_ROOTS = {"_start", "__libc_start_main", "__libc_start_main_impl", "clone", "clone3",
               "__clone", "__clone3", "__clone_internal", "start_thread"}
LIBC_START = re.compile(r"^__libc_start_(main|call_main)")
GLIBC_ALIAS = re.compile(r"^(__GI_)?(__libc_|__)?")


class Frame(tuple):
    """(dso basename or None, symbol or None); key() is what is compared."""

    def __new__(cls, dso, sym):
        return tuple.__new__(cls, (dso, sym))

    @property
    def dso(self):
        return self[0]

    @property
    def sym(self):
        return self[1]

    def key(self):
        """The name without glibc's alias prefixes (one function is write,
        __write, __libc_write and __GI___libc_write; each tool picks one),
        or [dso] for an unnamed frame."""
        return GLIBC_ALIAS.sub("", self.sym) if self.sym else f"[{self.dso or '?'}]"


def strip_params(s):
    """A demangled C++ name without its return type, parameter list and
    qualifiers: "void ns::f<int>(int) const" -> "ns::f<int>". Read left to
    right, so that a name cut short inside its parameters (ours are bounded,
    see NAME_MAX_OURS) keeps its qualified name."""
    depth, i, cut = 0, 0, -1
    while i < len(s):
        ch = s[i]
        if s.startswith("operator", i) and (i == 0 or not (s[i - 1].isalnum() or s[i - 1] == "_")):
            i += len("operator")
            m = re.match(r"\(\)|\[\]|[<>=!+\-*/%&|^~,]+| (new|delete)(\[\])?", s[i:])
            i += m.end() if m else 0
            i += s.startswith(" <", i)	# "operator< <int>": the template's arguments follow
            continue
        if s.startswith("(anonymous namespace)", i):
            i += len("(anonymous namespace)")
            continue
        if ch in "<{[":
            depth += 1
        elif ch in ">}]":
            depth -= 1
        elif ch == "(" and depth == 0:
            s = s[:i]
            break
        elif ch == " " and depth == 0:
            cut = i
        i += 1
    return s[cut + 1:] if cut >= 0 else s


def norm_sym(s):
    """One spelling of a name for both tools: perf drops C++ parameter lists,
    return types and GCC clone suffixes ("[clone .isra.0]") and adds symbol
    versions (__libc_start_main@@GLIBC_2.34); ours prints the full demangled
    signature. Both become the qualified name alone."""
    s = re.sub(r"@@?[A-Za-z0-9_.]+$", "", s)
    s = re.sub(r"(\s*\[clone [^\]]*\])+$", "", s)
    return strip_params(s) if ("::" in s or "(" in s or "<" in s) else s


def reaches_entry(frames):
    """Frames alone (leaf first): does the stack end in an entry point?
    A stripped program's _start is unnamed: then the frame above it is
    __libc_start_main (or __libc_start_call_main)."""
    if not frames:
        return False
    root = frames[-1]
    if root.sym:
        return root.sym in ENTRY_ROOTS
    return len(frames) >= 2 and bool(frames[-2].sym and LIBC_START.match(frames[-2].sym))


class Maps:
    """A process's mappings, read while it runs, to place bare addresses."""

    def __init__(self):
        self.ranges = set()

    def read(self, pid):
        try:
            with open(f"/proc/{pid}/maps") as f:
                for line in f:
                    parts = line.split(None, 5)
                    lo, hi = (int(x, 16) for x in parts[0].split("-"))
                    path = parts[5].strip() if len(parts) > 5 else ""
                    self.ranges.add((lo, hi, os.path.basename(path) if path else "[anon]"))
        except OSError:
            pass

    def find(self, addr):
        for lo, hi, name in self.ranges:
            if lo <= addr < hi:
                return name
        return None


# A Python function in our stacks (issue 27): "qualname (file:line)", "qualname
# (file)", or one whose code object could not be read.
PYTHON_FRAME = re.compile(r"^(.+ \(.+(:\d+)?\)|\[python code 0x[0-9a-f]+\])$")


def python_as_eval(user):
    """Our user frames (leaf first) as perf sees them: each run of Python
    functions stands where one native frame of the interpreter's eval loop
    was, so it becomes that frame."""
    out = []
    for f in user:
        if PYTHON_FRAME.match(f):
            if not out or out[-1] is not EVAL_LOOP:
                out.append(EVAL_LOOP)
            continue
        out.append(f)
    return [f if f is not EVAL_LOOP else "_PyEval_EvalFrameDefault" for f in out]


EVAL_LOOP = object()


def our_frame(s, maps):
    m = re.fullmatch(r"(.+)\+0x([0-9a-f]+)", s)
    if m and "(" not in m.group(1):
        return Frame(os.path.basename(m.group(1)), None)
    if re.fullmatch(r"0x[0-9a-f]+", s):
        return Frame(maps.find(int(s, 16)) or "?", None)
    return Frame(None, norm_sym(s))


class Sample:
    __slots__ = ("ts", "tid", "frames", "end", "comm")

    def __init__(self, ts, tid, frames, end, comm=None):
        self.ts, self.tid, self.frames, self.end, self.comm = ts, tid, frames, end, comm


PERF_HEAD = re.compile(r"\s(\d+)/(\d+)\s+(\d+)\.(\d+):\s*$")
PERF_FRAME = re.compile(r"^\s+([0-9a-f]+) (.*) \(([^()]*)\)$")


def perf_samples(data, pid, comms=None):
    """perf's samples of @pid (None: any), or of the processes named in @comms."""
    p = subprocess.run(["perf", "script", "-i", data, "--no-inline", "-F", "comm,pid,tid,time,ip,sym,dso"],
                       capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"perf script failed ({p.returncode}): {p.stderr[-2000:]}")
    out, cur = [], None
    for line in p.stdout.splitlines():
        if not line.strip():
            cur = None
            continue
        if not line[0].isspace():
            m = PERF_HEAD.search(line)
            cur = None
            comm = line[:m.start()].strip() if m else None
            if m and (pid is None or int(m.group(1)) == pid) and (comms is None or comm in comms):
                ns = int(m.group(3)) * 10**9 + int(m.group(4).ljust(9, "0")[:9])
                cur = Sample(ns, int(m.group(2)), [], None, comm)
                out.append(cur)
            continue
        if cur is None:
            continue
        m = PERF_FRAME.match(line)
        if not m:
            cur.frames.append(Frame("?", None))
            continue
        ip, sym, dso = int(m.group(1), 16), m.group(2).strip(), m.group(3)
        if dso.startswith("[kernel") or dso.startswith("[guest.kernel") or \
           (dso == "[unknown]" and ip >= 0xffff800000000000):
            continue
        cur.frames.append(Frame(os.path.basename(dso) if dso.startswith("/") else dso,
                                None if sym == "[unknown]" else norm_sym(sym)))
    return out


def ours_by_command(evs, comms, keep):
    """Our samples of the commands @comms that @keep, by command: counts of
    samples, of those that reached the outermost frame, of each end
    ("end:" + code), of user frames and of bare ones."""
    out = collections.defaultdict(collections.Counter)
    for e in evs:
        if e["type"] != "sample" or e["comm"] not in comms or not keep(e):
            continue
        c = out[e["comm"]]
        user = e["stack"][e.get("kernel_frames", 0):]
        c["n"] += 1
        c["outermost"] += e.get("user_stack_end") == "outermost"
        c["end:" + str(e.get("user_stack_end"))] += 1
        c["frames"] += len(user)
        c["bare"] += sum(1 for f in user if f.startswith("0x"))
    return out
