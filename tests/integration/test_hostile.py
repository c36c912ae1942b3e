#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hostile neighbours: an unprivileged user (nobody) tries to stop, blind or
mislead the recorder, or the person reading its dumps, with what it
controls: its JIT perf map (a FIFO, a symlink or hard link to root's files,
a 10 GiB sparse file), the ELF files it maps (the crafted ones of
tests/fuzz/corpus/elf), and the names it picks (escape sequences, a newline,
markup). The daemon must write every dump, on time, with nothing of root's
files in it and every refusal counted in LOSS; stop on SIGTERM in time; and
every text command must print the names escaped, the JSON must parse, the
report must show them as text."""
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, Tap, events, flightrec, require_root_bpf, show, FRTOOL  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus", "elf")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# The bound a stop is held to: the dump thread gets 5 s, the /proc worker 2 s
# (recorder/dump/dumper.h, util.h); with every read bounded neither is needed.
STOP_BOUND_S = 7
# Raw control bytes a terminal acts on (newline and tab excepted: the
# commands' own layout); none may reach a text command's output.
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")

tap = Tap()
require_root_bpf(tap)
NOBODY = pwd.getpwnam("nobody")
work = tempfile.mkdtemp(prefix="fr-hostile-")
os.chmod(work, 0o755)
tool = os.path.join(work, "frtool")
shutil.copy(FRTOOL, tool)
os.chmod(tool, 0o755)


def as_nobody():
    os.setgroups([])
    os.setgid(NOBODY.pw_gid)
    os.setuid(NOBODY.pw_uid)


def nobody_run(*argv):
    """Run @argv as nobody; its exit code."""
    return subprocess.run(list(argv), preexec_fn=as_nobody, capture_output=True).returncode


class Spinner:
    """A nobody process spinning in code at a known address."""

    def __init__(self, argv, executable=None):
        self.p = subprocess.Popen(argv, executable=executable, preexec_fn=as_nobody,
                                  stdout=subprocess.PIPE, text=True)
        pid, addr = self.p.stdout.readline().split()
        self.pid, self.addr = int(pid), int(addr, 16)
        self.map = f"/tmp/perf-{self.pid}.map"

    def stop(self):
        self.p.kill()
        self.p.wait()
        if os.path.lexists(self.map):
            os.unlink(self.map)


def losses(path):
    return show(path)["losses"] if path else {}


def timed_dump(d):
    t = time.monotonic()
    path = d.dump(timeout=60)
    return path, time.monotonic() - t


def samples_of(path, pid):
    return [e for e in events(path) if e["pid"] == pid and e["type"] == "sample"] if path else []


def decompressed(path):
    p = subprocess.run(["lz4", "-dc", path], capture_output=True)
    return p.stdout


def fifo_perf_map(d):
    """The attack that stopped every dump: a FIFO as perf map."""
    _, normal = timed_dump(d)
    s = Spinner([tool, "jit-bare", "60"])
    tap.eq(nobody_run("mkfifo", s.map), 0, "FIFO: nobody makes its perf map a FIFO")
    time.sleep(1.0)
    path, took = timed_dump(d)
    tap.ok(path is not None, "FIFO: the dump of that moment is written")
    tap.ok(path is not None and took <= normal + 0.25 + 2.0,
           f"FIFO: within the normal latency plus resolve_timeout (250 ms) and 2 s of slack "
           f"({took:.2f} s; normal {normal:.2f} s)")
    loss = losses(path)
    tap.ok(loss.get("dump_perfmaps_refused", 0) >= 1 and loss.get("untrusted_refused_type", 0) >= 1,
           "FIFO: the refused perf map is counted in LOSS (dump_perfmaps_refused, untrusted_refused_type)",
           {k: v for k, v in loss.items() if "refused" in k})
    tap.ok(len(samples_of(path, s.pid)) >= 10, "FIFO: the process's samples are in the dump")
    nxt, took = timed_dump(d)
    tap.ok(nxt is not None and took <= normal + 2.25, f"FIFO: the next dump is normal ({took:.2f} s)")
    s.stop()


def perf_map_leads_to_root(d):
    """A symlink or hard link to root's secret, shaped as a perf map that would name the frames."""
    control = Spinner([tool, "jit-bare", "60"])
    with open(os.path.join(work, "map"), "w") as f:
        f.write(f"{control.addr:x} 100 fr_nobody_jit\n")
    os.chmod(os.path.join(work, "map"), 0o644)
    tap.eq(nobody_run("cp", os.path.join(work, "map"), control.map), 0,
           "control: nobody writes its own perf map")
    victims = []
    secret_dir = tempfile.mkdtemp(prefix="fr-secret-")      # 0700, root's
    for kind in ("symlink", "hardlink"):
        s = Spinner([tool, "jit-bare", "60"])
        if kind == "symlink":
            secret = os.path.join(secret_dir, "root-only.map")
        else:
            secret = f"/tmp/fr-secret-{s.pid}.map"          # the same file system as /tmp
        with open(secret, "w") as f:
            f.write(f"{s.addr:x} 100 FR_ROOT_SECRET_{kind}\n")
        os.chmod(secret, 0o600)
        if kind == "symlink":
            made = nobody_run("ln", "-s", secret, s.map) == 0
            how = "nobody symlinks its perf map to root's 0600 file"
        else:
            made = nobody_run("ln", secret, s.map) == 0
            how = "nobody hard-links its perf map to root's 0600 file"
            if not made:
                # fs.protected_hardlinks = 1 here stops nobody; machines with 0 do not.
                os.link(secret, s.map)
                made, how = True, how + " (made by root: fs.protected_hardlinks = 1 here)"
        tap.ok(made, how)
        victims.append((kind, s, secret))
    time.sleep(1.0)
    before = losses(d.dump())
    path = d.dump()
    loss = losses(path)
    ev = events(path) if path else []
    named = [e for e in ev if e["pid"] == control.pid and e["type"] == "sample"
             and e["stack"] and e["stack"][0] == "fr_nobody_jit"]
    tap.ok(len(named) >= 10, f"control: nobody's own perf map names its frames ({len(named)})")
    raw = decompressed(path) if path else b""
    for kind, s, secret in victims:
        tap.ok(path and b"FR_ROOT_SECRET" not in raw and len(samples_of(path, s.pid)) >= 10,
               f"{kind}: nothing of root's file is in the dump, which has the process's samples")
    tap.ok(loss.get("untrusted_refused_link", 0) > before.get("untrusted_refused_link", 0),
           "symlink: the refusal is counted (untrusted_refused_link)")
    tap.ok(loss.get("untrusted_refused_owner", 0) > before.get("untrusted_refused_owner", 0),
           "hardlink: the refusal is counted (untrusted_refused_owner)")
    tap.ok(loss.get("dump_perfmaps_refused", 0) >= 2, "both are in this dump's dump_perfmaps_refused")
    for d_path in d.dumps():
        tap.ok(b"FR_ROOT_SECRET" not in decompressed(d_path), f"nor in any dump ({os.path.basename(d_path)})")
    for _, s, secret in victims:
        s.stop()
        if os.path.exists(secret):
            os.unlink(secret)
    control.stop()
    shutil.rmtree(secret_dir, ignore_errors=True)


def daemon_rchar(d):
    with open(f"/proc/{d.proc.pid}/io") as f:
        return int(next(l for l in f if l.startswith("rchar:")).split()[1])


def huge_perf_map(d):
    s = Spinner([tool, "jit-bare", "60"])
    tap.eq(nobody_run("truncate", "-s", "10G", s.map), 0, "huge: nobody's perf map is a 10 GiB sparse file")
    time.sleep(1.0)
    before = losses(d.dump())
    r0 = daemon_rchar(d)
    path = d.dump()
    read = daemon_rchar(d) - r0
    loss = losses(path)
    tap.ok(path and loss.get("untrusted_refused_size", 0) > before.get("untrusted_refused_size", 0),
           "huge: refused by its size and counted (untrusted_refused_size)")
    tap.ok(read < 256 << 20, f"huge: with no read of it (the daemon read {read >> 20} MiB meanwhile)")
    s.stop()


def crafted_elfs(d):
    files = sorted(f for f in os.listdir(CORPUS) if f.endswith(".elf"))
    spinners = {}
    for f in files:
        copy = os.path.join(work, f)
        shutil.copy(os.path.join(CORPUS, f), copy)
        os.chmod(copy, 0o644)
        spinners[f] = Spinner([tool, "map-exec", copy, "0x1000", "60"])
    time.sleep(3.0)
    path = d.dump()
    tap.ok(path is not None and d.proc.poll() is None,
           f"crafted ELF: with {len(files) - 1} crafted files mapped, the daemon stays up and writes the dump")
    ev = events(path) if path else []
    loss = losses(path)
    # The user leaf: the first frame after the kernel's (a sample may land in a page fault).
    leaf = {f: [e["stack"][e["kernel_frames"]] for e in ev
                if e["pid"] == s.pid and e["type"] == "sample" and len(e["stack"]) > e["kernel_frames"]]
            for f, s in spinners.items()}
    # Most leaves are the loop; the rest are frtool's own, libc's, the vDSO's or the
    # sanitizer runtime's (ASan build), and python3's before the exec.
    good = leaf["valid.elf"]
    named = [x for x in good if x == "fr_crafted_loop"]
    tap.ok(len(named) >= 10 and len(named) * 5 >= len(good) * 4,
           f"control: the valid file's loop is named ({len(named)} of {len(good)} leaves)", good[:5])
    bad = leaf["huge-shnum.elf"]

    def unnamed_in(x, f):
        """An unnamed frame: its address, or its file and offset ("f+0x1000")."""
        return x.startswith("0x") or x.startswith(f + "+0x")

    unnamed = [x for x in bad if unnamed_in(x, "huge-shnum.elf")]
    tap.ok(len(unnamed) >= 10 and unnamed_in(max(set(bad), key=bad.count), "huge-shnum.elf"),
           f"crafted ELF: huge-shnum.elf's frames (its loop) are left unresolved "
           f"({len(unnamed)} of {len(bad)} leaves)", bad[:5])
    tap.ok(loss.get("symbols_bad_elf", 0) >= 1 and loss.get("dump_user_frames_no_symbols", 0) >= 1,
           "and counted (symbols_bad_elf, dump_user_frames_no_symbols)",
           {k: loss.get(k) for k in ("symbols_bad_elf", "dump_user_frames_no_symbols")})
    # The loop in the crafted file is where each process spends nearly all its time, so
    # its most common leaf is that frame: its name, if any, may only be text of the file
    # (other leaves are frtool's, libc's or the vDSO's, and python3's before the exec).
    odd = {}
    for f, names in leaf.items():
        with open(os.path.join(CORPUS, f), "rb") as fh:
            content = fh.read()
        top = max(set(names), key=names.count) if names else None
        if top is None or (not unnamed_in(top, f) and top.encode() not in content):
            odd[f] = top
    tap.ok(not odd, f"the loop's frame in each of the {len(files)} files is unnamed or named from "
           "that file's own text", odd)
    for s in spinners.values():
        s.stop()


HOSTILE_NAME = "\x1b]0;pwned\x07<script>x"
HOSTILE_ARGS = ["\x1b[2J\x1b[31mred", "<img src=x onerror=document.body.dataset.pwned=1>",
                "\nFORGED-LINE 1 2 3", "c1\u009b31m"]


def hostile_names(d):
    binary = os.path.join(work, HOSTILE_NAME)
    shutil.copy(FRTOOL, binary)
    os.chmod(binary, 0o755)
    s = Spinner([HOSTILE_NAME, "jit-bare", "60", *HOSTILE_ARGS], executable=binary)
    time.sleep(1.5)
    path = d.dump()
    s.stop()
    if not tap.ok(path is not None, "names: a dump with the hostile process"):
        return
    outs = {}
    for cmd in (["show"], ["events"], ["processes"], ["folded"], ["folded", "--pid"],
                ["processes", "--pid", str(s.pid)]):
        rc, out, err = flightrec(*cmd, path)
        outs[" ".join(cmd)] = out
        bad = RAW_CONTROL.search(out)
        tap.ok(rc == 0 and not bad, f"names: 'flightrec {' '.join(cmd)}' prints no raw control byte",
               f"rc {rc}, {err[-300:]}, found {bad.group(0)!r} at {bad.start()}" if bad else err[-300:])
        tap.ok(not any(line.startswith("FORGED-LINE") for line in out.splitlines()),
               f"names: a newline in argv forges no line of 'flightrec {' '.join(cmd)}'")
    tap.ok("\\x1b]0;pwned\\a<script>" in outs["processes"],
           "names: 'processes' shows the name C-escaped (\\x1b, \\a)",
           [l for l in outs["processes"].splitlines() if str(s.pid) in l])
    for cmd in (["events", "--json"], ["processes", "--json"], ["show", "--json"]):
        rc, out, _ = flightrec(*cmd, path)
        try:
            docs = [json.loads(line) for line in out.splitlines() if line.strip()] \
                if cmd[0] == "events" else [json.loads(out)]
            parsed = rc == 0 and bool(docs)
        except ValueError as e:
            parsed, docs = False, str(e)
        tap.ok(parsed, f"names: 'flightrec {' '.join(cmd)}' parses as JSON", docs if not parsed else None)
    procs = json.loads(flightrec("processes", "--json", path)[1])
    mine = [p for p in procs["processes"] if p["pid"] == s.pid] if isinstance(procs, dict) else \
        [p for p in procs if p["pid"] == s.pid]
    tap.ok(mine and all(a in mine[0]["cmdline"] for a in ("\x1b[2J", "<img src=x")),
           "names: the JSON keeps the exact bytes, escaped as JSON", mine[:1])
    report = os.path.join(work, "report.html")
    rc, _, err = flightrec("report", path, "-o", report)
    with open(report, encoding="utf-8", errors="replace") as f:
        page = f.read()
    tap.ok(rc == 0 and "<img src=x" not in page and "\x1b" not in page,
           "names: the report holds the names only escaped", err[-300:])
    chromium = "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else shutil.which("chromium")
    if not tap.ok(chromium, "names: chromium is installed (tools/bootstrap.sh deps)"):
        return
    profile = tempfile.mkdtemp(prefix="profile-", dir=work)
    p = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                        "--virtual-time-budget=5000", "--dump-dom", "file://" + report],
                       capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    dom = p.stdout
    tap.ok(p.returncode == 0 and "<body" in dom and "data-pwned" not in dom,
           "names: the report renders and no name became markup (no onerror ran)", p.stderr[-500:])
    tap.ok("&lt;img src=x onerror" in dom or "&lt;script&gt;x" in dom,
           "names: the report shows the names as text")


# Root's workload: stock perl (libperl, no frame pointers), which nothing
# else on the machine runs, so that its rows are idle between its runs and
# an attacker's files may take their place (python3.11 is the test
# runner's own interpreter: always mapped, its rows never idle).
POOL_PL = ("sub leaf { my $s = 0; $s += $_ * $_ for 1 .. 2000; $s } sub mid { leaf() + 1 } "
           "my $end = time + 1.5; my $t = 0; while (time < $end) { $t += mid() }")


def status_json(d):
    rc, out, _ = flightrec("status", "--json", "--socket", d.socket)
    return json.loads(out) if rc == 0 and out else {}


def root_perl(d, what):
    """Root's stock perl for 1-2 s: the share of its samples whose user
    stack reached the outermost frame."""
    p = subprocess.Popen(["/usr/bin/perl", "-e", POOL_PL])
    p.wait()
    path = d.dump()
    evs = [e for e in events(path) if e["pid"] == p.pid and e["type"] == "sample"] if path else []
    whole = sum(1 for e in evs if e.get("user_stack_end") == "outermost")
    tap.diag(f"pool: root's perl {what}: outermost in {whole} of {len(evs)} samples")
    return whole / len(evs) if len(evs) >= 50 else 0.0


def pool_attack():
    """nobody runs 12 copies of /usr/bin/python3.11 (each a distinct file of
    its own, 0.4 MB of CFI, tens of thousands of rows) to fill an 8 MiB row
    pool; root's perl must keep its complete stacks during the attack
    and after it (issue 25)."""
    d = Daemon(tap, window="20s", recorder_extra="unwind_memory = 8M\n")
    spinners = []
    try:
        if not tap.ok(d.ready(), "pool: a daemon with an 8 MiB (1048576-row) unwind pool"):
            return
        # The share to keep is that of perl on this daemon once its files
        # have rows: perl's first run, new to the daemon, is walked by frame
        # pointers until they are built (49 % whole under ASan in CI).
        root_perl(d, "new to the daemon")
        before = root_perl(d, "before the attack")
        tap.ok(before >= 0.8, f"pool: before the attack, root's perl walks whole ({before:.0%})")
        adir = tempfile.mkdtemp(prefix="pool-", dir=work)
        os.chmod(adir, 0o777)
        env = dict(os.environ, PYTHONHOME="/usr")
        for i in range(12):
            copy = os.path.join(adir, f"py{i}")
            tap.eq(nobody_run("cp", "/usr/bin/python3.11", copy), 0, f"pool: nobody copies python3.11 ({i})")
            spinners.append(subprocess.Popen([copy, "-I", "-c", "while True: pass"], env=env,
                                             preexec_fn=as_nobody))
        # The attack is in place once the daemon has tried to build the copies' rows.
        end, u = time.monotonic() + 30, {}
        while time.monotonic() < end:
            u = status_json(d).get("unwind", {})
            if u.get("files_over_share", 0) + u.get("files_full", 0) >= 6 or \
               u.get("rows_used", 0) > 0.95 * u.get("rows_cap", 1):
                break
            time.sleep(0.5)
        tap.diag(f"pool: under attack: {u.get('rows_used')} of {u.get('rows_cap')} rows used, "
                 f"files over their owner's share {u.get('files_over_share')}, full {u.get('files_full')}")
        tap.ok(u.get("files_over_share", 0) >= 6 and u.get("files_full", 0) == 0,
               "pool: past a quarter of the pool, nobody's copies are refused (files_over_share >= 6), "
               "and the pool is not full")
        # Stopped, the copies stay mapped and their tables keep their rows;
        # root's perl gets the CPUs.
        for sp in spinners:
            sp.send_signal(signal.SIGSTOP)
        during = root_perl(d, "during the attack")
        tap.ok(during >= 0.9 * before, f"pool: during the attack, root's perl keeps >= 90 % of its "
               f"share ({during:.0%} against {before:.0%})")
        for sp in spinners:
            sp.kill()
            sp.wait()
        spinners = []
        after = root_perl(d, "after the attack")
        tap.ok(after >= 0.9 * before, f"pool: after the attack, root's perl keeps >= 90 % of its "
               f"share ({after:.0%} against {before:.0%})")
    finally:
        for sp in spinners:
            sp.kill()
            sp.wait()
        d.cleanup()


# Root's own large binaries (gcc-12's, installed by tools/bootstrap.sh deps):
# 2.3-2.6 MB of CFI each, about 430k-480k rows, more than an 8 MiB pool
# holds together. Files of root are the system's, outside any owner's share.
GCC_DIR = "/usr/lib/gcc/x86_64-linux-gnu/12"

# nobody maps cc1plus and lto1 executable, spins until the daemon has
# sampled it and built their rows, and is then stopped: mapped, never run
# in them.
MAPPER_PY = """
import mmap, sys
held = []
for p in sys.argv[1:]:
    with open(p, "rb") as f:
        held.append(mmap.mmap(f.fileno(), 0, flags=mmap.MAP_PRIVATE,
                              prot=mmap.PROT_READ | mmap.PROT_EXEC))
print("mapped", flush=True)
while True:
    pass
"""

def system_libs():
    """Root's shared libraries, 100 KB to 20 MB (what the build's packages
    install), but libc's and perl's, which root's workload maps itself: at
    most 96, so that with the mapper's own they fit one process table."""
    out = []
    d = "/usr/lib/x86_64-linux-gnu"
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        if ".so" not in n or n.startswith(("libc.so", "libperl", "ld-linux")) or \
           os.path.islink(p) or not os.path.isfile(p):
            continue
        st = os.stat(p)
        if st.st_uid == 0 and 100 << 10 <= st.st_size <= 20 << 20:
            with open(p, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    out.append(p)
    return out[:96]


# FR_UNWIND_COLD_EPOCHS (recorder/unwind/tables.c): 10 x 1.07 s without a walk.
COLD_S = 11.5


def unwind_until(d, pred, timeout):
    """status's unwind section once @pred holds of it, or the last one read."""
    end, u = time.monotonic() + timeout, {}
    while time.monotonic() < end:
        u = status_json(d).get("unwind", {})
        if pred(u):
            break
        time.sleep(0.5)
    return u


def pool_system_files():
    """nobody runs cc1 (a compile of ~40 s) and stops it, then maps cc1plus,
    lto1 and root's libraries and stops too: root's own files fill an 8 MiB pool, pinned by
    live processes that do not run. The owner share cannot help (the files
    are root's); eviction by use must. Root's perl, new to the pool during
    the attack, keeps >= 90 % of its share on a fresh daemon, and warm, of
    its warm share; cc1, resumed, walks whole again, with its rows back where
    they went cold (issue 25)."""
    d = Daemon(tap, window="20s", recorder_extra="unwind_memory = 8M\n")
    procs = []
    try:
        if not tap.ok(d.ready(), "system files: a daemon with an 8 MiB (1048576-row) unwind pool"):
            return
        big = [os.path.join(GCC_DIR, n) for n in ("cc1", "cc1plus", "lto1")]
        missing = [f for f in big if not os.access(f, os.X_OK)]
        if not tap.ok(not missing, f"system files: gcc-12's cc1, cc1plus and lto1 are installed "
                      f"(tools/bootstrap.sh deps) {missing}"):
            return
        fresh = root_perl(d, "new to a fresh daemon")
        before = root_perl(d, "warm, before the attack")
        tap.ok(fresh >= 0.5 and before >= 0.8,
               f"system files: before the attack, root's perl walks whole ({fresh:.0%} new, "
               f"{before:.0%} warm)")
        src = os.path.join(work, "big.c")
        with open(src, "w") as f:
            for i in range(8000):
                f.write(f"int f{i}(int *a, int n) {{ int s = {i}; for (int j = 0; j < n; j++) "
                        f"{{ s += a[j] * {i % 7 + 1}; if (s > {i}) s ^= a[(j + {i}) % n]; }} "
                        f"return s; }}\n")
        base = status_json(d).get("unwind", {}).get("rows_used", 0)
        with open(src) as f:
            cc1 = subprocess.Popen([big[0], "-quiet", "-O2", "-o", "/dev/null"], stdin=f,
                                   preexec_fn=as_nobody)
        procs.append(cc1)
        u = unwind_until(d, lambda u: u.get("rows_used", 0) >= base + 300000, 60)
        tap.ok(u.get("rows_used", 0) >= base + 300000,
               f"system files: nobody's cc1 runs with its rows ({u.get('rows_used', 0) - base} more)")
        cc1.send_signal(signal.SIGSTOP)
        libs = system_libs()
        mapper = subprocess.Popen(["/usr/bin/python3", "-I", "-c", MAPPER_PY, *big[1:], *libs],
                                  preexec_fn=as_nobody, stdout=subprocess.PIPE, text=True)
        procs.append(mapper)
        tap.eq(mapper.stdout.readline().strip(), "mapped",
               f"system files: nobody maps cc1plus, lto1 and {len(libs)} libraries executable")
        # Full, and every file with rows held by a table: the mapper's own, installed.
        u = unwind_until(d, lambda u: u.get("rows_used", 0) >= 0.97 * u.get("rows_cap", 1) and
                         u.get("files_idle", 99) < 10, 90)
        mapper.send_signal(signal.SIGSTOP)
        tap.diag(f"system files: under attack: {u.get('rows_used')} of {u.get('rows_cap')} rows "
                 f"used, full {u.get('files_full')}, cold {u.get('files_cold')}, idle "
                 f"{u.get('files_idle')}")
        tap.ok(u.get("rows_used", 0) >= 0.97 * u.get("rows_cap", 1),
               "system files: nobody's mappings fill the pool (>= 97 %)")
        # No walk comes to them from now on; COLD_S after their last build (the
        # attacher goes on building the mapped files for a few seconds after the
        # pool is full: each build stamps its file) their rows may go.
        settle_end, last, still = time.monotonic() + 30, None, 0
        while time.monotonic() < settle_end and still < 2:
            time.sleep(1)
            now = status_json(d).get("unwind", {})
            key = (now.get("files_built"), now.get("files_full"), now.get("rows_used"))
            still = still + 1 if key == last else 0
            last = key
        time.sleep(COLD_S)
        # A root program whose file is new to the pool (a fresh copy of python3.11:
        # tens of thousands of rows) needs room that only cold rows can give. Perl
        # alone did not always: its libraries may be among those nobody maps, and
        # its own few rows fitted in what the attack left free (877 rows in CI).
        fresh_py = os.path.join(work, "python3-root")
        shutil.copy("/usr/bin/python3.11", fresh_py)
        pinned = status_json(d).get("unwind", {})
        py = subprocess.run([fresh_py, "-I", "-c", "import time\nt = time.monotonic()\n"
                             "while time.monotonic() - t < 0.5: sum(i * i for i in range(2000))"])
        first = root_perl(d, "new to the pool during the attack")
        during = root_perl(d, "warm during the attack")
        u = status_json(d).get("unwind", {})
        tap.diag(f"system files: cold {u.get('files_cold')} (now {u.get('files_cold_now')}), "
                 f"moved {u.get('files_moved')}, full {u.get('files_full')}")
        # The check is of files live processes pin. In some runs (1 in 5 here, plain
        # build) the stopped mapper's table was dropped after its stop (status: files
        # built and refused for room again and again) and its files were idle, no table
        # holding them: the pool gives idle rows first, which is then all root's
        # python3.11 needs, and no rows are cold to take. Not the attack this check is
        # about: said, and the shares below still judged. Why the table goes was not
        # found (a stop note says so); test_tables checks cold eviction on its own.
        idle = pinned.get("files_idle", 0)
        tap.diag(f"system files: before root's python3.11, {idle} idle files (no table holds "
                 f"them), {pinned.get('files_full')} left out for room so far")
        tap.ok(py.returncode == 0 and (u.get("files_cold", 0) >= 1 or idle >= 10),
               f"system files: the rows of mapped files no walk came to were evicted for root's "
               f"new python3.11 (files_cold {u.get('files_cold')}"
               f"{'' if idle < 10 else f'; not pinned: {idle} idle files gave the room'})")
        tap.ok(first >= 0.9 * fresh, f"system files: during the attack, root's perl new to the "
               f"pool keeps >= 90 % of its fresh-daemon share ({first:.0%} against {fresh:.0%})")
        tap.ok(during >= 0.9 * before, f"system files: during the attack, root's warm perl keeps "
               f">= 90 % of its share ({during:.0%} against {before:.0%})")
        # cc1 runs again. Whether its own rows went cold depends on how much
        # room root's perl took meanwhile: the least recently walked go first,
        # and those may be only cc1's libraries (libisl, libmpfr, ...), which
        # cc1 does not call on this input: then no walk asks for a refill,
        # and none is due (CI, plain build: no refill in 60 s, cc1 whole).
        # What must hold: cc1 walks whole again, with rows it kept or got back;
        # and samples of it walked without rows bring a refill.
        refilled = u.get("files_refilled", 0)
        cc1.send_signal(signal.SIGCONT)
        # Its last second of samples (Debian's cc1 has no frame pointers). Its
        # libraries come back one after another, cc1's own 567k rows taking
        # seconds under ASan: within 40 s of the resume.
        t0, whole, recent, cold_seen = time.monotonic(), 0, [], 0
        while time.monotonic() - t0 < 40 and cc1.poll() is None:
            time.sleep(2)
            path = d.dump()
            evs = [e for e in events(path) if e["pid"] == cc1.pid and e["type"] == "sample"] \
                if path else []
            last = max((e["ts"] for e in evs), default=0)
            recent = [e for e in evs if e["ts"] >= last - 1000000000]
            whole = sum(1 for e in recent if e.get("user_stack_end") == "outermost")
            cold_seen = max(cold_seen, len(recent) - whole)
            if len(recent) >= 20 and whole >= 0.8 * len(recent):
                break
        now = status_json(d).get("unwind", {}).get("files_refilled", 0)
        tap.ok(len(recent) >= 20 and whole >= 0.8 * len(recent),
               f"system files: cc1, running again, walks whole within 40 s "
               f"({time.monotonic() - t0:.1f} s: {whole} of {len(recent)} in its last second)")
        tap.ok(cold_seen < 20 or now > refilled,
               f"system files: cc1's samples walked without rows brought its rows back "
               f"(up to {cold_seen} a second not whole; refilled {refilled} -> {now})")
        for p in procs:
            p.kill()
            p.wait()
        procs = []
        after = root_perl(d, "after the attack")
        tap.ok(after >= 0.9 * before, f"system files: after the attack, root's perl keeps >= 90 % "
               f"of its share ({after:.0%} against {before:.0%})")
    finally:
        for p in procs:
            p.kill()
            p.wait()
        d.cleanup()

d = Daemon(tap, window="20s")
try:
    if tap.ok(d.ready(), "daemon ready"):
        fifo_perf_map(d)
        t = time.monotonic()
        rc = d.stop(timeout=30)
        took = time.monotonic() - t
        tap.ok(rc == 0 and took <= STOP_BOUND_S,
               f"FIFO: SIGTERM stops the daemon cleanly within {STOP_BOUND_S} s ({took:.2f} s, exit {rc})")
        d.cleanup()
        d = Daemon(tap, window="20s")
        if tap.ok(d.ready(), "daemon ready again"):
            perf_map_leads_to_root(d)
            huge_perf_map(d)
            crafted_elfs(d)
            hostile_names(d)
        d.cleanup()
        pool_attack()
        pool_system_files()
finally:
    d.cleanup()
    shutil.rmtree(work, ignore_errors=True)
tap.done()
