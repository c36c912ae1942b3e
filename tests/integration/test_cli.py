#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The command lines: help, version and exit codes of every command, clear
errors for bad dumps (never a crash), and flightrecd's config errors."""
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from harness import FLIGHTRECD, FR_CONF, Daemon, Tap, flightrec, write_config  # noqa: E402

COMMANDS = ["show", "events", "folded", "processes"]

tap = Tap()
tmp = tempfile.mkdtemp(prefix="fr-cli-")

rc, out, err = flightrec()
tap.eq(rc, 2, "no command: usage error (2)")
rc, out, _ = flightrec("--help")
tap.ok(rc == 0 and all(c in out for c in COMMANDS), "--help lists every command")
rc, out, _ = flightrec("--version")
tap.ok(rc == 0 and out.startswith("flightrec "), "--version")
rc, _, err = flightrec("frobnicate")
tap.ok(rc == 2 and "unknown command 'frobnicate'" in err, "unknown command: 2 and a message")
for c in COMMANDS:
    rc, out, _ = flightrec(c, "--help")
    tap.ok(rc == 0 and out.startswith(f"Usage: flightrec {c}"), f"{c} --help")
    rc, out, _ = flightrec(c, "--version")
    tap.ok(rc == 0 and out.startswith("flightrec "), f"{c} --version")
    rc, _, err = flightrec(c)
    tap.ok(rc == 2 and "missing DUMP" in err, f"{c} without a dump: 2", err)
    rc, _, err = flightrec(c, "--bogus", "x.frd")
    tap.ok(rc == 2 and "unknown option '--bogus'" in err, f"{c} with a bad option: 2", err)
    rc, _, err = flightrec(c, os.path.join(tmp, "nope.frd"))
    tap.ok(rc == 1 and "nope.frd" in err and "No such file" in err,
           f"{c} on a missing file: 1 and the file named", err)
for c in ("snapshot", "status"):
    rc, out, _ = flightrec(c, "--help")
    tap.ok(rc == 0 and out.startswith(f"Usage: flightrec {c}"), f"{c} --help")
    rc, out, _ = flightrec(c, "--version")
    tap.ok(rc == 0 and out.startswith("flightrec "), f"{c} --version")
    rc, _, err = flightrec(c, "--bogus")
    tap.ok(rc == 2 and "unknown option '--bogus'" in err, f"{c} with a bad option: 2", err)
    rc, _, err = flightrec(c, "extra")
    tap.ok(rc == 2 and "unexpected argument 'extra'" in err, f"{c} with a stray argument: 2", err)
    rc, _, err = flightrec(c, "--socket", os.path.join(tmp, "none.sock"))
    tap.ok(rc == 1 and "none.sock" in err, f"{c} without a daemon: 1 and the socket named", err)
rc, _, err = flightrec("snapshot", "--timeout", "0")
tap.ok(rc == 2 and "--timeout" in err, "snapshot --timeout 0: usage error")
rc, _, err = flightrec("snapshot", "--reason", "a\nb")
tap.ok(rc == 2 and "--reason" in err, "snapshot --reason with a newline: usage error")
rc, _, err = flightrec("show", "--top", "-3", "x")
tap.ok(rc == 2 and "--top" in err, "show --top with a bad number: 2")
rc, _, err = flightrec("events", "--type", "nap", "x")
tap.ok(rc == 2 and "unknown --type 'nap'" in err, "events --type with a bad type: 2")
# An option given last without its value is named as such, not as unknown.
for args in (("show", "--top"), ("events", "--type"), ("folded", "--from"), ("export", "--format"),
             ("report", "--from"), ("snapshot", "--reason"), ("status", "--socket")):
    rc, _, err = flightrec(*args)
    tap.ok(rc == 2 and f"option '{args[1]}' needs a value" in err,
           f"{' '.join(args)} without its value: 2 and says so", err)

# Damaged dumps: a real one when root can record, else only synthetic damage.
good = None
if os.geteuid() == 0 and os.path.exists("/sys/kernel/btf/vmlinux"):
    d = Daemon(tap, window="5s")
    if d.ready():
        good = d.dump()
        if good:
            shutil.copy(good, os.path.join(tmp, "good.frd"))
            good = os.path.join(tmp, "good.frd")
    d.cleanup()
else:
    tap.diag("not root or no BTF: damaged copies of a real dump are not tested")


def damaged(name, data):
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


cases = [("empty.frd", b"", "empty"), ("zeros.frd", b"\0" * 4096, "bad magic"),
         ("text.frd", b"hello, this is not a dump\n" * 10, "bad magic")]
if good:
    raw = open(good, "rb").read()
    flip = bytearray(raw)
    flip[len(raw) // 2] ^= 0x55
    cases += [("truncated.frd", raw[: len(raw) * 2 // 3], "truncated"),
              ("flipped.frd", bytes(flip), "checksum"),
              ("trailing.frd", raw + b"garbage", "trailing")]
    rc, _, _ = flightrec("show", good)
    tap.eq(rc, 0, "the undamaged dump reads")
for name, data, word in cases:
    p = damaged(name, data)
    for c in COMMANDS:
        rc, _, err = flightrec(c, p)
        tap.ok(rc == 1 and name in err and word in err.lower(),
               f"{c} rejects {name} with a message saying '{word}'", f"rc={rc} err={err}")
if good:
    random.seed(3)
    raw = open(good, "rb").read()
    crashes = 0
    for i in range(200):
        b = bytearray(raw)
        for _ in range(random.randint(1, 8)):
            b[random.randrange(len(b))] = random.randrange(256)
        p = damaged("fuzz.frd", bytes(b[: random.randint(0, len(b))] if i % 3 == 0 else b))
        rc = subprocess.run([os.environ.get("FLIGHTREC", "build/tools/flightrec"), "events", p],
                            capture_output=True).returncode
        if rc not in (0, 1):
            crashes += 1
    tap.eq(crashes, 0, "200 randomly damaged dumps: exit 0 or 1, never a crash")

# flightrecd's own command line and config errors (no BPF needed for these).
p = subprocess.run([FLIGHTRECD, "--help"], capture_output=True, text=True)
tap.ok(p.returncode == 0 and "--config" in p.stdout, "flightrecd --help")
p = subprocess.run([FLIGHTRECD, "--version"], capture_output=True, text=True)
tap.ok(p.returncode == 0 and p.stdout.startswith("flightrecd "), "flightrecd --version")
p = subprocess.run([FLIGHTRECD, "--frob"], capture_output=True, text=True)
tap.eq(p.returncode, 2, "flightrecd with a bad option: 2")
conf = os.path.join(tmp, "good.conf")
write_config(conf, directory=tmp)
p = subprocess.run([FLIGHTRECD, "--config", conf, "--check-config"], capture_output=True, text=True)
tap.ok(p.returncode == 0 and "ok" in p.stdout, "--check-config accepts a good file")
shipped = os.path.join(tmp, "shipped.conf")
shutil.copy(FR_CONF, shipped)
os.chmod(shipped, 0o644)
p = subprocess.run([FLIGHTRECD, "--config", shipped, "--check-config"], capture_output=True, text=True)
tap.ok(p.returncode == 0, "--check-config accepts the shipped default config", p.stderr)
bad = os.path.join(tmp, "bad.conf")
with open(bad, "w") as f:
    f.write("[recorder]\nwindow = 30s\nfrequency = lots\n")
os.chmod(bad, 0o600)
p = subprocess.run([FLIGHTRECD, "--config", bad, "--check-config"], capture_output=True, text=True)
tap.ok(p.returncode == 2 and f"{bad}:3" in p.stderr and "frequency" in p.stderr and "lots" in p.stderr,
       "--check-config names file, line, key and value of a bad setting", p.stderr)
p = subprocess.run([FLIGHTRECD, "--config", bad], capture_output=True, text=True, timeout=30)
tap.ok(p.returncode == 2 and "ready" not in p.stderr and "sampling" not in p.stderr,
       "the daemon refuses a bad config before touching BPF", p.stderr)
with open(bad, "w") as f:
    f.write("[recorder]\n[tracing]\n")
p = subprocess.run([FLIGHTRECD, "--config", bad, "--check-config"], capture_output=True, text=True)
tap.ok(p.returncode == 2 and "tracing" in p.stderr and "recorder" in p.stderr,
       "an unknown section is named, with the accepted ones", p.stderr)

shutil.rmtree(tmp, ignore_errors=True)
tap.done()
