#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A short process exits and SIGUSR1 follows at once: its exit must be in
the dump, every time. The trigger forces a drain up to the trigger time
instead of waiting for the next tick."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import FRSPIN, Daemon, Tap, events, require_root_bpf  # noqa: E402

RUNS = 20

tap = Tap()
require_root_bpf(tap)
d = Daemon(tap, window="10s")
try:
    tap.ok(d.ready(), "flightrecd is ready", d.log())
    missing = []
    for i in range(RUNS):
        code = 1 + i % 100
        child = subprocess.Popen([FRSPIN, "--exit", str(code)])
        child.wait()
        path = d.dump()
        found = []
        if path:
            found = [e for e in events(path)
                     if e["type"] == "exit" and e["pid"] == child.pid]
        good = len(found) == 1 and found[0]["code"] == code << 8 and found[0]["comm"] == "frspin"
        if not good:
            missing.append((i, child.pid, path, found))
        tap.ok(good, f"run {i + 1}: exit of pid {child.pid} (status {code}) is in the dump", found)
    tap.eq(missing, [], f"the exit was in the dump in all {RUNS} runs")
finally:
    d.cleanup()
tap.done()
