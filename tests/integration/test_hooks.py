#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""[output] on_dump: run after each durable dump with the path as the last
argument, never through a shell, asynchronously, killed after its timeout;
its failures are logged and never affect recording."""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, Tap, flightrec, require_root_bpf  # noqa: E402

tap = Tap()
require_root_bpf(tap)
base = tempfile.mkdtemp(prefix="fr-hook-")
os.chmod(base, 0o755)
log = os.path.join(base, "hook.log")
pwned = os.path.join(base, "pwned")
hook = os.path.join(base, "hook.sh")
with open(hook, "w") as f:
    f.write(f"#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> {log}\n"
            f"echo --- >> {log}\ncase \"$1\" in sleep) sleep 100;; fail) exit 3;; esac\n")
os.chmod(hook, 0o755)


def daemon(args, timeout="60s"):
    return Daemon(tap, window="5s",
                  output_extra=f"on_dump = {hook} {args}\non_dump_timeout = {timeout}\n")


try:
    d = daemon(f'"one two" "$(touch {pwned})" three')
    try:
        tap.ok(d.ready(), "daemon with an on_dump hook is ready", d.log())
        path = d.dump()
        m = d.wait_line(r"on_dump for '.*' done", 10)
        tap.ok(m is not None, "the hook runs after the dump and its end is logged", d.log())
        words = open(log).read().split("---\n")[0].splitlines() if os.path.exists(log) else []
        tap.eq(words, ["one two", f"$(touch {pwned})", "three", path],
               "its words arrive as written, the dump's path last")
        tap.ok(not os.path.exists(pwned), "nothing went through a shell")
    finally:
        d.cleanup()

    d = daemon("sleep", timeout="1s")
    try:
        d.ready()
        t0 = time.monotonic()
        p1 = d.dump()
        took = time.monotonic() - t0
        tap.ok(p1 is not None and took < 5, f"a slow hook does not delay the dump ({took:.2f} s)")
        rc, out, _ = flightrec("status", "--socket", d.socket)
        tap.ok(rc == 0, "the daemon answers while the hook runs")
        m = d.wait_line(r"on_dump for '.*' killed after its timeout", 10)
        tap.ok(m is not None, "a hook past on_dump_timeout is killed and logged", d.log())
        tap.ok(d.dump() is not None, "recording goes on")
    finally:
        d.cleanup()

    d = daemon("fail")
    try:
        d.ready()
        d.dump()
        m = d.wait_line(r"on_dump for '.*' failed with exit status 3", 10)
        tap.ok(m is not None, "a failing hook is logged", d.log())
        tap.ok(d.dump() is not None and d.proc.poll() is None, "and changes nothing else")
    finally:
        d.cleanup()
finally:
    shutil.rmtree(base, ignore_errors=True)
tap.done()
