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

Checked, over the script's samples (both threads):
  - >= 90 % show the chain root to leaf, each frame "qualname
    (file:line)" with the script's file and the line of the call (the
    loop's lines for leaf());
  - the main thread's samples have <module> under outer(), the second
    thread's Thread.run (threading.py) under it;
  - the native frames stay: >= 90 % of the samples still reach the
    interpreter's outermost native frames (_start for the main thread,
    start_thread for the other), and <= 5 % still name the eval loop (its
    frames became Python functions; the rest are moments the interpreter
    had no chain to read: start-up, a frame being pushed);
A process that is not Python (frspin) has no Python frame.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import FRSPIN, Daemon, Tap, events, require_root_bpf  # noqa: E402

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
        time.sleep(0.5)
        dump = d.dump()
        tap.ok(dump is not None, "dump taken after the script exited")
        if not dump:
            return tap.done()
        evs = [e for e in events(dump) if e["type"] == "sample"]
        mine = [e for e in evs if e["pid"] == p.pid]
        threads = {e["tid"] for e in mine}
        tap.ok(len(mine) > 1000 and len(threads) == 2,
               f"{len(mine)} samples of the script, in {len(threads)} threads")
        chain = main_ok = thread_ok = native = evalloop = 0
        for e in mine:
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
        n = max(1, len(mine))
        nmain = max(1, sum(1 for e in mine if e["tid"] == p.pid))
        nthr = max(1, len(mine) - nmain)
        tap.ok(chain >= 0.9 * n, f"{chain} of {len(mine)} samples ({100 * chain / n:.1f} %) show "
               "leaf() <- Worker.middle() <- outer() with the script's file and lines")
        tap.ok(main_ok >= 0.9 * nmain, f"main thread: {main_ok} of {nmain} have <module> under "
               f"outer() at line {want_module}")
        tap.ok(thread_ok >= 0.9 * nthr, f"second thread: {thread_ok} of {nthr} have Thread.run "
               "(threading.py) under outer()")
        tap.ok(native >= 0.9 * n, f"native frames kept: {native} of {len(mine)} reach the "
               "outermost native frame")
        # The interpreter's own moments without a frame chain to read (start-up, a
        # frame being pushed or a GIL handed over): 0.7-2.5 % of samples here.
        tap.ok(evalloop <= 0.05 * n, f"{evalloop} of {len(mine)} samples still show the eval "
               "loop (each of its frames became its Python functions)")
        if chain < 0.9 * n:
            for e in mine[:5]:
                tap.diag(" <- ".join(e["stack"][e.get("kernel_frames", 0):]))
        others = [e for e in evs if e["comm"] == "frspin"]
        tap.ok(others and not any(py_frames(e["stack"]) for e in others),
               f"frspin's {len(others)} samples have no Python frame")
    finally:
        d.cleanup()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
