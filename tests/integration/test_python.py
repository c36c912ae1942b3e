#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Python functions in the stacks of Debian's python3.11 (issue 27).

Ground truth by construction: a script spins in
leaf() <- Worker.middle() <- outer() <- <module> in its main thread, and in
leaf() <- Worker.middle() <- outer() <- Thread.run() in a second thread,
for 3 s, run by the stock /usr/bin/python3.11 (stripped, no frame
pointers, its eval loop split in two). The daemon is ready before it
starts, nothing waits for the daemon after that, and the dump is taken
after the script has exited: the names must outlive the process.

Checked: at most 10 % of the script's samples (20 % under ASan) come
before its first one with Python frames (python3.11's rows are built as
it starts, by a daemon that never saw it: 1 % here, 7-12 % under ASan);
over the samples from that one on (both threads):
  - >= 90 % show the chain root to leaf, each frame "qualname
    (file:line)" with the script's file and the line of the call (the
    loop's lines for leaf());
  - the main thread's samples have <module> under outer(), the second
    thread's Thread.run (threading.py) under it;
  - the Chrome export's samples and the report's flame graph name them
    as the dump's text does;
  - `flightrec folded --python` folds the interpreter's frames away:
    >= 90 % of the samples read root first as Python functions only, down
    to leaf();
  - the native frames stay: >= 90 % of the samples still reach the
    interpreter's outermost native frames (_start for the main thread,
    start_thread for the other), and <= 5 % still name the eval loop (its
    frames became Python functions; the rest are moments the interpreter
    had no chain to read);
A process that is not Python (frspin) has no Python frame.

Stock programs, judged against their own source (no profiler we can run
here names Python functions: perf shows the eval loop):
  - Debian's /usr/bin/pygmentize (python3-pygments) highlights 2 MB of C:
    >= 90 % of its samples from its first with Python frames on have
    pygments' functions (and that first one comes as for the script);
    every Python frame's qualname is a function of the file it names,
    defined around the line it names (parsed with ast from the same file;
    "<frozen importlib._bootstrap>" from the stdlib's
    importlib/_bootstrap.py; "<string>" and "<frozen getpath>" have no
    source to judge by); the lexer's get_tokens_unprocessed is among them;
  - a multiprocessing.Pool(2) script (fork workers): each worker shows
    crunch() <- work() with the script's lines under its own incarnation
    in >= 80 % of its samples from its first with Python frames on, and
    the parent, which only waits, never does.

With `[recorder] python = false` the same script's samples have no Python
frame, and its eval loop's native frames stay.

Memory: a script allocates 300 MiB in grow(): the RSS ledger's sites (the
stack of the thread whose own fault logged each step) name grow() <- main()
for at least 80 % of it, in `memory --json` and in the text view. And a
script that grows in grow() until its memory cgroup's OOM killer
takes it. The OOM event's invoker stack reads grow() <- <module> at the
script's lines, under the fault's native frames (the BPF side walks the
invoker's Python frames at the kill, into the record itself).

Hostile: a forged interpreter (frfakepy, run as nobody) exports the
symbols of python3.11 and lays garbage where they point: a frame chain
that loops, code objects that claim the type "code" with strings of 2^40
bytes and control bytes, pointers into unmapped memory, all rewritten as
it spins. The daemon stays up; the forger's stacks hold at most 48 Python
frames (the walk's bound); every frame name read from it is text (no
control character); the reads that found no code object are counted
(status python.code_refused, code_stale) and stop after 64 for the
incarnation (code_given_up): a forger does not keep the namer reading;
and the ground-truth script, recorded by the same daemon meanwhile, is
named as above.
"""
import ast
import gzip
import html
import json
import os
import pwd
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from harness import (FRSPIN, Daemon, Tap, control, daemon_asan, events,  # noqa: E402
                     memory_cgroup, remove_cgroup, require_root_bpf)

FRFAKEPY = os.environ["FRFAKEPY"]

PYTHON = "/usr/bin/python3.11"

SCRIPT = """\
import sys, threading, time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


class Worker:
    def middle(self, deadline):
        while time.monotonic() < deadline:
            leaf(3000)


def outer(deadline):
    Worker().middle(deadline)


deadline = time.monotonic() + float(sys.argv[1])
t = threading.Thread(target=outer, args=(deadline,))
t.start()
outer(deadline)
t.join()
"""


def line_of(text):
    """The 1-based line of the script that holds @text."""
    for i, line in enumerate(SCRIPT.splitlines(), 1):
        if text in line:
            return i
    raise KeyError(text)


PYFRAME = re.compile(r"^(.+) \((.+):(\d+)\)$")
PYFOLD = re.compile(r"^(.+)_\((.+):(\d+)\)$")	# folded: blanks become "_"


def py_frames(stack):
    """The Python frames of a stack (leaf first): (qualname, file, line)."""
    out = []
    for f in stack:
        m = PYFRAME.match(f)
        if m:
            out.append((m.group(1), m.group(2), int(m.group(3))))
    return out


def main():
    tap = Tap()
    require_root_bpf(tap)
    if not os.access(PYTHON, os.X_OK):
        tap.ok(False, f"{PYTHON} is installed (tools/bootstrap.sh deps installs it)")
        return tap.done()
    work = tempfile.mkdtemp(prefix="fr-py-")
    script = os.path.join(work, "truth.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    want_leaf = {line_of("for i in range(n)"), line_of("s += i * i")}
    want_middle = line_of("leaf(3000)")
    want_outer = line_of("Worker().middle(deadline)")
    want_module = [i for i, ln in enumerate(SCRIPT.splitlines(), 1) if ln == "outer(deadline)"][0]

    d = Daemon(tap, frequency=499)
    try:
        tap.ok(d.ready(), "daemon ready")
        p = subprocess.Popen([PYTHON, script, "3"])
        spin = subprocess.Popen([FRSPIN, "--seconds", "1"], stdout=subprocess.DEVNULL)
        p.wait()
        spin.wait()
        tap.ok(p.returncode == 0, "the script ran 3 s and exited")
        dump = d.dump()
        tap.ok(dump is not None, "dump taken after the script exited")
        if not dump:
            return tap.done()
        evs = [e for e in events(dump) if e["type"] == "sample"]
        mine = [e for e in evs if e["pid"] == p.pid]
        threads = {e["tid"] for e in mine}
        tap.ok(len(mine) > 1000 and len(threads) == 2,
               f"{len(mine)} samples of the script, in {len(threads)} threads")
        # Until python3.11's rows exist (a daemon that never saw it builds them as the
        # script starts: 6.8 MB, seconds under ASan), its table names no interpreter.
        first_py = min((e["ts"] for e in mine if py_frames(e["stack"])), default=None)
        cold = sum(1 for e in mine if first_py is None or e["ts"] < first_py)
        # The ASan daemon builds the 6.8 MB file's rows 3-5 times slower.
        cold_max = 0.2 if daemon_asan() else 0.1
        tap.ok(cold <= cold_max * len(mine), f"{cold} of {len(mine)} samples came before the "
               f"first one with Python frames (<= {cold_max:.0%}: python3.11's rows built as the "
               "script starts)")
        warm = [e for e in mine if first_py is not None and e["ts"] >= first_py]
        chain = main_ok = thread_ok = native = evalloop = 0
        for e in warm:
            user = e["stack"][e.get("kernel_frames", 0):]
            py = [x for x in py_frames(user) if x[1] == script]
            names = [x[0] for x in py]
            ok = (len(py) >= 3 and names[:3] == ["leaf", "Worker.middle", "outer"] and
                  py[0][2] in want_leaf and py[1][2] == want_middle and
                  py[2][2] == want_outer)
            chain += ok
            if e["tid"] == p.pid:
                main_ok += ok and len(py) == 4 and py[3][0] == "<module>" and \
                    py[3][2] == want_module
            else:
                allpy = py_frames(user)
                thread_ok += ok and len(allpy) > 3 and allpy[3][0] == "Thread.run" and \
                    allpy[3][1].endswith("threading.py")
            # A stripped program's _start is unnamed: __libc_start_main is above it.
            native += bool(user) and (user[-1] in ("_start", "start_thread", "clone3", "clone") or
                                      (len(user) > 1 and user[-2].startswith("__libc_start")))
            evalloop += any(f.startswith("_PyEval_EvalFrameDefault") for f in user)
        n = max(1, len(warm))
        nmain = max(1, sum(1 for e in warm if e["tid"] == p.pid))
        nthr = max(1, len(warm) - nmain)
        tap.ok(chain >= 0.9 * n, f"{chain} of those {len(warm)} samples ({100 * chain / n:.1f} %) "
               "show leaf() <- Worker.middle() <- outer() with the script's file and lines")
        tap.ok(main_ok >= 0.9 * nmain, f"main thread: {main_ok} of {nmain} have <module> under "
               f"outer() at line {want_module}")
        tap.ok(thread_ok >= 0.9 * nthr, f"second thread: {thread_ok} of {nthr} have Thread.run "
               "(threading.py) under outer()")
        tap.ok(native >= 0.9 * n, f"native frames kept: {native} of {len(warm)} reach the "
               "outermost native frame")
        # The interpreter's own moments without a frame chain to read (start-up, a
        # frame being pushed or a GIL handed over): 0.7-2.5 % of samples here.
        tap.ok(evalloop <= 0.05 * n, f"{evalloop} of them still show the eval loop (each of "
               "its frames became its Python functions)")
        if chain < 0.9 * n:
            for e in mine[:5]:
                tap.diag(" <- ".join(e["stack"][e.get("kernel_frames", 0):]))
        # flightrec folded --python: the interpreter's frames folded away.
        r = subprocess.run([os.environ["FLIGHTREC"], "folded", "--python", f"--pid={p.pid}", dump],
                           capture_output=True, text=True)
        clean = total = 0
        for line in r.stdout.splitlines():
            stack, _, cnt = line.rpartition(" ")
            frames = stack.split(";")[1:]
            py_at = [i for i, f in enumerate(frames) if PYFOLD.match(f)]
            total += int(cnt)
            clean += int(cnt) * bool(py_at and py_at == list(range(len(py_at))) and
                                    frames[py_at[-1]].startswith("leaf_("))
        tap.ok(r.returncode == 0 and clean >= 0.9 * (total - cold),
               f"folded --python: {clean} of {total} samples ({cold} before the first with Python "
               "frames) read root first as Python functions only, down to leaf()")
        pprof_functions(tap, dump, script)
        chrome_and_report(tap, dump, p.pid, [{f"leaf ({script}:{n})" for n in want_leaf},
                                             {f"Worker.middle ({script}:{want_middle})"},
                                             {f"outer ({script}:{want_outer})"}], cold)
        others = [e for e in evs if e["comm"] == "frspin"]
        tap.ok(others and not any(py_frames(e["stack"]) for e in others),
               f"frspin's {len(others)} samples have no Python frame")
        stock_tool(tap, d, work)
        pool(tap, d, work)
        oom_in_python(tap, d, work)
        rss_sites(tap, d, work)
        hostile(tap, d, script)
    finally:
        d.cleanup()
    python_off(tap, script)
    return tap.done()


def python_off(tap, script):
    """[recorder] python = false: the interpreter's native frames only."""
    d = Daemon(tap, frequency=499, recorder_extra="python = false\n")
    try:
        if not tap.ok(d.ready(), "daemon with python = false ready"):
            return
        p = subprocess.Popen([PYTHON, script, "1"])
        p.wait()
        st = json.loads(control(d.socket, "status json"))["unwind"]["python"]
        dump = d.dump()
        mine = [e for e in (events(dump) if dump else []) if e["type"] == "sample" and
                e["pid"] == p.pid]
        evalloop = sum(1 for e in mine if any(f.startswith("_PyEval_EvalFrameDefault")
                                              for f in e["stack"]))
        tap.ok(len(mine) > 200 and not any(py_frames(e["stack"]) for e in mine) and
               evalloop >= 0.5 * len(mine) and not st.get("samples"),
               f"python = false: none of the script's {len(mine)} samples has a Python frame; "
               f"{evalloop} show the eval loop", st)
    finally:
        d.cleanup()


def pprof_functions(tap, dump, script):
    """The pprof export names each Python function by its qualified name and file (protoc)."""
    out = dump + ".pb.gz"
    r = subprocess.run([os.environ["FLIGHTREC"], "export", "--format", "pprof", "-o", out, dump],
                       capture_output=True, text=True)
    proto = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "profile.proto")
    text = ""
    if r.returncode == 0:
        with open(out, "rb") as f:
            raw = gzip.decompress(f.read())
        q = subprocess.run(["protoc", f"--proto_path={os.path.dirname(proto)}", "--decode",
                            "perftools.profiles.Profile", os.path.basename(proto)],
                           input=raw, capture_output=True)
        text = q.stdout.decode(errors="replace")
    strs = re.findall(r'string_table: "(.*)"', text)
    fns = {(strs[int(n)], strs[int(f)]) for n, f in
           re.findall(r"function \{\s*id: \d+\s*name: (\d+)\s*(?:system_name: \d+\s*)?"
                      r"filename: (\d+)", text)}
    want = {(q, script) for q in ("leaf", "Worker.middle", "outer", "<module>")}
    tap.ok(want <= fns, "pprof: Function name and filename of each Python function "
           f"({len(want & fns)} of 4)")


def chrome_and_report(tap, dump, pid, want, cold):
    """The Chrome export's samples of @pid and the report's flame graph read
    the Python frames @want (leaf first, each a set of spellings: a frame
    on one of its lines) as the dump's text does; @cold samples came before
    the first with Python frames."""
    fr = os.environ["FLIGHTREC"]
    r = subprocess.run([fr, "export", "--format", "chrome", dump], capture_output=True,
                       text=True)
    trace = json.loads(r.stdout) if r.returncode == 0 else {}
    te = trace.get("traceEvents", [])
    tracks = {e["pid"] for e in te if e["ph"] == "M" and e["name"] == "process_name" and
              e["args"].get("pid") == pid}	# one synthetic track per incarnation
    stacks = [e["args"]["stack"] for e in te
              if e.get("ph") == "i" and e["pid"] in tracks and "stack" in e.get("args", {})]
    def chain(st):
        at = [next((i for i, f in enumerate(st) if f in w), None) for w in want]
        return None not in at and at == sorted(at)
    full = sum(1 for st in stacks if chain(st))
    tap.ok(stacks and full >= 0.9 * (len(stacks) - cold),
           f"chrome: {full} of the script's {len(stacks)} samples ({cold} before the first with "
           "Python frames) hold leaf() <- Worker.middle() <- outer() at the script's lines, "
           "leaf first, in args.stack")
    out = dump + ".html"
    r = subprocess.run([fr, "report", "-o", out, f"--pid={pid}", dump], capture_output=True,
                       text=True)
    page = html.unescape(open(out).read()) if r.returncode == 0 and os.path.exists(out) else ""
    found = sum(any(x in page for x in w) for w in want)
    tap.ok(found == len(want), "report: its flame graph names the script's Python functions "
           f"as the dump does ({found} of {len(want)})", r.stderr[-300:])


def source_functions(path, cache={}):
    """The functions of Python file @path as {qualname: [(first, last) line]},
    as CPython 3.11 names their code objects ("<module>" for the file)."""
    if path in cache:
        return cache[path]
    out = {}
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        cache[path] = None
        return None
    out["<module>"] = [(1, 1 << 30)]

    def walk(node, prefix):
        for c in ast.iter_child_nodes(node):
            if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = prefix + c.name
                first = min([c.lineno] + [x.lineno for x in c.decorator_list])
                if not isinstance(c, ast.ClassDef):
                    out.setdefault(q, []).append((first, c.end_lineno))
                    walk(c, q + ".<locals>.")
                else:
                    out.setdefault(q, []).append((first, c.end_lineno))  # its body's code
                    walk(c, q + ".")
            else:
                walk(c, prefix)
    walk(tree, "")
    cache[path] = out
    return out


def in_source(qualname, path, line):
    """Is (@qualname, @line) a function of @path defined around that line?
    Comprehensions, lambdas and generator expressions are judged by the
    function (or module) that holds them. None: @path names no file (code
    compiled from a string, "<string>")."""
    frozen = re.match(r"^<frozen ([\w.]+)>$", path)
    if frozen:	# deep-frozen into the interpreter; its source is in the stdlib
        path = "/usr/lib/python3.11/" + frozen.group(1).replace(".", "/") + ".py"
        if not os.path.exists(path):
            return None	# getpath's is not installed
    elif path.startswith("<"):
        return None
    funcs = source_functions(path)
    if funcs is None:
        return False
    parts = qualname.split(".")
    while parts and parts[-1].startswith("<") and parts[-1] != "<module>":
        parts.pop()
        if parts and parts[-1] == "<locals>":
            parts.pop()
    q = ".".join(parts) or "<module>"
    return any(a <= line <= b for a, b in funcs.get(q, []))


def stock_tool(tap, d, work):
    """Debian's own pygmentize doing real work, named as its source says."""
    tool = "/usr/bin/pygmentize"
    if not tap.ok(os.access(tool, os.X_OK), f"{tool} is installed (tools/bootstrap.sh deps "
                  "installs python3-pygments)"):
        return
    src = os.path.join(work, "big.c")
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    with open(src, "w") as out:
        for _ in range(3):
            for sub in sorted(os.listdir(os.path.join(root, "recorder"))):
                dd = os.path.join(root, "recorder", sub)
                for name in sorted(os.listdir(dd)) if os.path.isdir(dd) else []:
                    if name.endswith(".c"):
                        with open(os.path.join(dd, name)) as f:
                            out.write(f.read())
    p = subprocess.Popen([tool, "-l", "c", "-f", "html", "-o", os.devnull, src])
    p.wait()
    tap.ok(p.returncode == 0, f"pygmentize highlighted {os.path.getsize(src) >> 10} KiB of C")
    dump = d.dump()
    if not tap.ok(dump is not None, "pygmentize: dumped after it exited"):
        return
    mine = [e for e in events(dump) if e["type"] == "sample" and e["pid"] == p.pid]
    first_py = min((e["ts"] for e in mine if py_frames(e["stack"])), default=None)
    warm = [e for e in mine if first_py is not None and e["ts"] >= first_py]
    pkg = "/usr/lib/python3/dist-packages/pygments/"
    named = frames = right = 0
    wrong, funcs = [], set()
    for e in warm:
        py = py_frames(e["stack"])
        named += any(x[1].startswith(pkg) for x in py)
        for q, path, line in py:
            ok = in_source(q, path, line)
            if ok is None:	# "<string>": nothing to judge it by
                continue
            frames += 1
            if ok:
                right += 1
                funcs.add(q)
            elif len(wrong) < 5:
                wrong.append((q, path, line))
    n = max(1, len(warm))
    cold_max = 0.2 if daemon_asan() else 0.1	# as for the script: rows built as it starts
    tap.ok(len(mine) > 100 and named >= 0.9 * n and len(mine) - len(warm) <= cold_max * len(mine),
           f"pygmentize: {named} of {len(warm)} samples show pygments' functions "
           f"({len(mine) - len(warm)} of {len(mine)} came before its first with Python frames, "
           f"<= {cold_max:.0%})")
    tap.ok(frames and right == frames and "RegexLexer.get_tokens_unprocessed" in funcs,
           f"pygmentize: {right} of {frames} Python frames are a function of the file they "
           f"name, around the line they name ({len(funcs)} functions, "
           "RegexLexer.get_tokens_unprocessed among them)", wrong)


POOL = """\
import multiprocessing, os, sys, time


def crunch(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def work(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        crunch(2000)
    return os.getpid()


if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    with multiprocessing.Pool(2) as pool:
        pids = set(pool.map(work, [0.5] * 6, chunksize=1))
    print(" ".join(str(x) for x in sorted(pids)))
"""


def pool(tap, d, work):
    """multiprocessing.Pool: each worker's functions under its own incarnation."""
    script = os.path.join(work, "pool.py")
    with open(script, "w") as f:
        f.write(POOL)
    lines = POOL.splitlines()
    crunch_at = {i for i, ln in enumerate(lines, 1) if "for i in range(n)" in ln or "s += i" in ln}
    work_at = [i for i, ln in enumerate(lines, 1) if "crunch(2000)" in ln][0]
    r = subprocess.Popen([PYTHON, script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    out, err = r.communicate()
    workers = [int(x) for x in out.split()]
    if not tap.ok(r.returncode == 0 and len(workers) == 2,
                  f"the Pool script ran in 2 workers ({workers})", err[-500:]):
        return
    dump = d.dump()
    if not tap.ok(dump is not None, "Pool: dumped after it exited"):
        return
    evs = [e for e in events(dump) if e["type"] == "sample"]
    for w in workers:
        mine = [e for e in evs if e["pid"] == w]
        starts = {e["start"] for e in mine}
        first_py = min((e["ts"] for e in mine if py_frames(e["stack"])), default=None)
        warm = [e for e in mine if first_py is not None and e["ts"] >= first_py]
        good = 0
        for e in warm:
            py = [x for x in py_frames(e["stack"]) if x[1] == script]
            good += (len(py) >= 2 and [x[0] for x in py[:2]] == ["crunch", "work"] and
                     py[0][2] in crunch_at and py[1][2] == work_at)
        tap.ok(len(starts) == 1 and len(mine) > 50 and good >= 0.8 * max(1, len(warm)),
               f"Pool worker {w}: crunch() <- work() at the script's lines in {good} of "
               f"{len(warm)} samples ({len(mine)} in all), one incarnation")
    parent = [e for e in evs if e["pid"] == r.pid]
    tap.ok(not any(x[0] == "crunch" for e in parent for x in py_frames(e["stack"])),
           f"Pool: the parent, which only waits, never shows crunch() ({len(parent)} samples "
           "of it)")


GROW = """\
import os, sys


def grow(chunks):
    while True:
        chunks.append(bytearray(8 << 20))


with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
grow([])
"""


def oom_in_python(tap, d, work):
    """A script that grows in grow() until its memory cgroup's OOM killer
    takes it: the OOM event's invoker stack names grow() and <module> at
    the script's lines, under the native frames of the fault."""
    script = os.path.join(work, "grow.py")
    with open(script, "w") as f:
        f.write(GROW)
    lines = GROW.splitlines()
    grow_at = [i for i, ln in enumerate(lines, 1) if "bytearray(8 << 20)" in ln][0]
    module_at = [i for i, ln in enumerate(lines, 1) if ln == "grow([])"][0]
    cg = memory_cgroup(64 << 20, prefix="fr-py")
    if not tap.ok(cg is not None, "a memory cgroup for the Python OOM (no memory controller)"):
        return
    cgdir, procs = cg
    try:
        p = subprocess.Popen([PYTHON, script, procs], stderr=subprocess.DEVNULL)
        rc = p.wait(60)
        tap.ok(rc == -9, f"the script growing in grow() was OOM-killed in its cgroup (rc {rc})")
        dump = d.dump()
        ooms = [e for e in (events(dump) if dump else []) if e["type"] == "oom" and
                e["pid"] == p.pid]
        if not tap.ok(len(ooms) == 1, f"one OOM event for it ({len(ooms)})"):
            return
        o = ooms[0]
        stack = o.get("invoker_stack", [])
        py = py_frames(stack)
        user = [f for f in stack if PYFRAME.match(f)]
        tap.ok(o.get("invoker_pid") == p.pid and py[:2] == [("grow", script, grow_at),
                                                           ("<module>", script, module_at)],
               f"its OOM invoker's stack: grow() at line {grow_at} <- <module> at line "
               f"{module_at}", stack[:40])
        at = stack.index(user[0]) if user else 0
        tap.ok(user and any("fault" in f for f in stack[:at]) and
               not any(f.startswith("_PyEval_EvalFrameDefault") for f in stack),
               "with the page fault's native frames above it, and the eval loop's frame "
               "turned into the Python functions", stack[:40])
    finally:
        remove_cgroup(cgdir)


ALLOC = """\
def grow(n):
    chunks = []
    for _ in range(n):
        chunks.append(bytearray(10 << 20))
    return chunks


def main():
    return grow(30)


main()
"""


def rss_sites(tap, d, work):
    """300 MiB allocated in grow(): the RSS ledger's growth names it. Where
    the owner's own thread grew its memory by a step, its stack (with its
    Python frames) is in the dump: `memory --json` sums them by stack."""
    script = os.path.join(work, "alloc.py")
    with open(script, "w") as f:
        f.write(ALLOC)
    lines = ALLOC.splitlines()
    grow_at = [i for i, ln in enumerate(lines, 1) if "bytearray(10 << 20)" in ln][0]
    main_at = [i for i, ln in enumerate(lines, 1) if "return grow(30)" in ln][0]
    p = subprocess.Popen([PYTHON, script])
    p.wait()
    dump = d.dump()
    r = subprocess.run([os.environ["FLIGHTREC"], "memory", "--json", dump], capture_output=True,
                       text=True)
    mem = json.loads(r.stdout) if r.returncode == 0 else {}
    g = next((x for x in mem.get("growers", []) if x["pid"] == p.pid), None)
    if not tap.ok(g is not None and g.get("sites"), f"the script's RSS grew, with its sites "
                  f"({len(g.get('sites', [])) if g else 0} stacks)", r.stderr[-300:]):
        return
    want = [("grow", script, grow_at), ("main", script, main_at)]
    named = sum(s["grown"] for s in g["sites"] if py_frames(s["stack"])[:2] == want)
    tap.ok(named >= 0.8 * (300 << 20) and named <= g["peak"],
           f"the growth's sites name grow() at line {grow_at} <- main(): {named >> 20} MiB of the "
           f"300 MiB it allocated (the ledger's peak: {g['peak'] >> 20} MiB)",
           [(s["grown"], s["stack"][:8]) for s in g["sites"][:3]])
    r = subprocess.run([os.environ["FLIGHTREC"], "memory", dump], capture_output=True, text=True)
    line = next((ln for ln in r.stdout.splitlines() if "grew" in ln and
                 f"grow ({script}:{grow_at})" in ln), None)
    tap.ok(line is not None, "flightrec memory prints where it grew", r.stdout[-2000:])


def as_nobody():
    os.setgid(pwd.getpwnam("nobody").pw_gid)
    os.setuid(pwd.getpwnam("nobody").pw_uid)


def hostile(tap, d, script):
    """The forged interpreter beside the real one, in the same daemon."""
    st0 = json.loads(control(d.socket, "status json"))["unwind"]["python"]
    fake = subprocess.Popen([FRFAKEPY, "3"], preexec_fn=as_nobody)
    real = subprocess.Popen([PYTHON, script, "2"])
    real.wait()
    fake.wait()
    tap.ok(d.proc.poll() is None, "forged interpreter: the daemon stays up")
    st = json.loads(control(d.socket, "status json"))["unwind"]["python"]
    dump = d.dump()
    if not tap.ok(dump is not None, "forged interpreter: dumped after it"):
        return
    evs = [e for e in events(dump) if e["type"] == "sample"]
    forged = [e for e in evs if e["pid"] == fake.pid]
    pyf = [[f for f in e["stack"] if f.startswith("[python code") or PYFRAME.match(f)]
           for e in forged]
    most = max((len(x) for x in pyf), default=0)
    tap.ok(forged and most and most <= 48,
           f"forged interpreter: {len(forged)} samples walked, at most {most} Python frames "
           "each (the walk's bound: its chain loops)")
    bad = [f for x in pyf for f in x if any(ord(ch) < 0x20 or ord(ch) == 0x7f for ch in f)]
    tap.ok(not bad, f"forged interpreter: every name read from it is text ({len(bad)} not)")
    st = {k: st[k] - st0.get(k, 0) for k in ("code_refused", "code_stale", "code_given_up")}
    failed = st["code_refused"] + st["code_stale"]
    # 64 per incarnation, then none; the real script's own few (objects read while
    # the interpreter built them: 0-12 here) count too. Counted from before the two
    # start: pygmentize and the Pool, run before them, had their own few too.
    tap.ok(0 < failed <= 128 and st["code_given_up"] > 0,
           f"forged interpreter: its failed reads are counted and bounded: {failed} in all "
           f"(refused {st['code_refused']}, stale {st['code_stale']}; 64 per incarnation, then "
           f"none: {st['code_given_up']} code objects not read)")
    mine = [e for e in evs if e["pid"] == real.pid]
    good = sum(1 for e in mine
               if [x[0] for x in py_frames(e["stack"]) if x[1] == script][:3] ==
               ["leaf", "Worker.middle", "outer"])
    tap.ok(mine and good >= 0.9 * len(mine), f"forged interpreter: the real script beside it "
           f"is named all the same ({good} of {len(mine)} samples)")


if __name__ == "__main__":
    sys.exit(main())
