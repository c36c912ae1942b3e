#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Install into a DESTDIR with `meson install`, then use the installed
files: start the installed daemon with the installed config, take a
snapshot and render a report with the installed reader."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, Tap, require_root_bpf  # noqa: E402

BUILD = os.environ.get("FR_BUILD_ROOT", "build")

tap = Tap()
require_root_bpf(tap)
dest = tempfile.mkdtemp(prefix="fr-destdir-")
try:
    p = subprocess.run(["meson", "install", "-C", BUILD, "--destdir", dest, "--no-rebuild",
                        "--quiet"], capture_output=True, text=True)
    tap.ok(p.returncode == 0, "meson install into a DESTDIR", p.stdout + p.stderr)
    files = {
        "usr/sbin/flightrecd": "the daemon",
        "usr/bin/flightrec": "the reader",
        "etc/flightrec/flightrec.conf": "the default config",
        "usr/lib/systemd/system/flightrecd.service": "the systemd unit",
        "usr/share/man/man8/flightrecd.8": "flightrecd(8)",
        "usr/share/man/man1/flightrec.1": "flightrec(1)",
        "usr/share/man/man5/flightrec.conf.5": "flightrec.conf(5)",
        "usr/share/bash-completion/completions/flightrec": "bash completion",
    }
    for rel, what in files.items():
        tap.ok(os.path.isfile(os.path.join(dest, rel)), f"installed: {what} (/{rel})")
    unit = open(os.path.join(dest, "usr/lib/systemd/system/flightrecd.service")).read() \
        if os.path.exists(os.path.join(dest, "usr/lib/systemd/system/flightrecd.service")) else ""
    tap.ok("Type=notify" in unit and
           "ExecStart=/usr/sbin/flightrecd --config /etc/flightrec/flightrec.conf" in unit,
           "the unit is Type=notify and starts the installed daemon with the installed config")
    tap.ok("ProtectSystem=strict" in unit and "ReadWritePaths=/var/lib/flightrec" in unit and
           "ExecReload=" in unit, "with sandboxing that leaves the dump directory writable, and reload")
    if shutil.which("systemd-analyze"):
        v = subprocess.run(["systemd-analyze", "verify",
                            os.path.join(dest, "usr/lib/systemd/system/flightrecd.service")],
                           capture_output=True, text=True)
        tap.diag(f"systemd-analyze verify: rc {v.returncode} {v.stderr.strip()[:300]}")
    else:
        tap.diag("systemd-analyze is not installed here: the unit is checked by reading it")

    # The installed daemon with the installed config (output and socket moved into the temp dir).
    conf = os.path.join(dest, "etc/flightrec/flightrec.conf")
    text = open(conf).read()
    text = re.sub(r"(?m)^directory = .*$", f"directory = {dest}/var/lib/flightrec", text)
    text = re.sub(r"(?m)^socket = .*$", f"socket = {dest}/run/flightrec/control.sock", text)
    os.makedirs(os.path.join(dest, "run/flightrec"), mode=0o700, exist_ok=True)
    # As on a real root, /var/lib exists; the daemon creates only its own directory.
    os.makedirs(os.path.join(dest, "var/lib"), mode=0o755, exist_ok=True)
    with open(conf, "w") as f:
        f.write(text)
    os.chmod(conf, 0o644)
    d = Daemon.__new__(Daemon)
    d.tap, d.dir, d.lines, d.cond = tap, dest, [], threading.Condition()
    d.out = os.path.join(dest, "var/lib/flightrec")
    d.socket = os.path.join(dest, "run/flightrec/control.sock")
    d.proc = subprocess.Popen([os.path.join(dest, "usr/sbin/flightrecd"), "--config", conf],
                              stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    d.reader = threading.Thread(target=d._read, daemon=True)
    d.reader.start()
    try:
        tap.ok(d.ready(), "the installed daemon starts with the installed config", d.log())
        reader = os.path.join(dest, "usr/bin/flightrec")
        s = subprocess.run([reader, "snapshot", "--socket", d.socket, "--reason", "install test"],
                           capture_output=True, text=True, timeout=120)
        path = s.stdout.strip()
        tap.ok(s.returncode == 0 and path.endswith(".frd") and os.path.exists(path),
               "the installed reader takes a snapshot", s.stderr)
        r = subprocess.run([reader, "show", path], capture_output=True, text=True)
        tap.ok(r.returncode == 0 and "install test" in r.stdout, "and reads it back")
        html = os.path.join(dest, "report.html")
        r = subprocess.run([reader, "report", path, "-o", html], capture_output=True, text=True)
        tap.ok(r.returncode == 0 and os.path.getsize(html) > 1000 if os.path.exists(html) else False,
               "and renders a report", r.stderr)
        tap.eq(d.stop(), 0, "the installed daemon stops cleanly")
    finally:
        if d.proc.poll() is None:
            d.proc.kill()
finally:
    shutil.rmtree(dest, ignore_errors=True)
tap.done()
