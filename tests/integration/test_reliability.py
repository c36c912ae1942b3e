#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Faults injected for real: SIGKILL in the middle of dumps, a full disk,
io_uring disabled, BPF ring overflow, a dump during memory thrashing, the
output directory removed or swapped for a symlink; and the security rules:
unsafe directories, dump modes and groups, command-line privacy,
capabilities dropped after start-up."""
import grp
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import (FLIGHTRECD, FRSPIN, Daemon, Tap, events, flightrec, daemon_asan,  # noqa: E402
                     processes, require_root_bpf, show, write_config, FRTOOL, control, remove_cgroup,
                     LATE_BPF, CHURN_SH)


tap = Tap()
require_root_bpf(tap)


def reads_back(path):
    return flightrec("show", path)[0] == 0


def wait_tmp(out, t0, limit=30):
    """Poll @out every 2 ms until one of the daemon's "<dump>.tmp" files is
    there; the seconds since @t0 when it was seen, or None."""
    while time.monotonic() - t0 < limit:
        if any(f.startswith("flightrec-2") and f.endswith(".tmp") for f in os.listdir(out)):
            return time.monotonic() - t0
        if any(f.endswith(".frd") for f in os.listdir(out)):
            return None
        time.sleep(0.002)
    return None


def atomic_dumps():
    out = tempfile.mkdtemp(prefix="fr-kill-")
    os.chmod(out, 0o700)
    foreign = [os.path.join(out, "notes.tmp"), os.path.join(out, "flightrec-bogus.frd.tmp")]
    for p in foreign:
        with open(p, "w") as f:
            f.write("not ours\n")
    tmp_seen = 0
    cleaned = False
    bad = []
    # A slow disk (5 ms per write of the encoder) makes the write phase
    # last long enough to kill the daemon inside it, at several depths.
    env = dict(os.environ, FLIGHTREC_FAULT_WRITE_DELAY_US="5000")
    # How long a dump encodes before it writes depends on what it holds and on
    # the machine's load (0.5-1.2 s under ASan): a kill aimed at a time after
    # SIGUSR1 lands inside the write phase only by luck. So the kills come in
    # two kinds: at fixed times after SIGUSR1 (before, around and after the
    # write), and at fixed times after the daemon's .tmp file is seen (inside).
    delays = [(0, False), (0.01, False), (0.05, False), (0.1, False),
              (0, True), (0.02, True), (0.05, True), (0.1, True),
              (1.0, False), (1.5, False)]
    inside = []
    for delay, after_tmp in delays:
        d = Daemon(tap, window="20s", frequency=999, extra_args=("--output-dir", out), env=env)
        try:
            if not d.ready():
                bad.append(("not ready", d.log()))
                continue
            spin = subprocess.Popen([FRSPIN, "--seconds", "1.5", "--threads", "2"])
            spin.wait()
            d.proc.send_signal(signal.SIGUSR1)
            seen = wait_tmp(out, time.monotonic()) if after_tmp else 0
            time.sleep(delay)
            d.proc.send_signal(signal.SIGKILL)
            d.proc.wait()
        finally:
            d.cleanup()
            cleaned = cleaned or "removed leftover temporary file" in d.log()
        tmps = [f for f in os.listdir(out) if f.startswith("flightrec-2") and f.endswith(".tmp")]
        tmp_seen += bool(tmps)
        if after_tmp:
            inside.append((delay, seen, bool(tmps)))
        for f in os.listdir(out):
            if f.endswith(".frd") and not reads_back(os.path.join(out, f)):
                bad.append((delay, f))
    tap.eq(bad, [], f"SIGKILL at {len(delays)} points during dumps never left a .frd that fails to read")
    tap.diag(f"kills after the .tmp appeared (delay, seen at, left a .tmp): {inside}")
    landed = sum(t for _, _, t in inside)
    tap.ok(landed >= 2, f"{landed} of {len(inside)} kills aimed inside a write landed there "
           f"(a temporary file was left behind; {tmp_seen} of {len(delays)} in all)", inside)
    d = Daemon(tap, extra_args=("--output-dir", out))
    try:
        tap.ok(d.ready(), "the daemon starts on that directory", d.log())
        left = [f for f in os.listdir(out) if f.endswith(".tmp")]
        tap.eq(sorted(left), sorted(os.path.basename(p) for p in foreign),
               "leftover temporary files are removed at start, and only the daemon's own")
        if tmp_seen:
            tap.ok(cleaned or "removed leftover temporary file" in d.log(),
                   "and their removal is logged")
    finally:
        d.cleanup()
        shutil.rmtree(out, ignore_errors=True)


def full_disk():
    base = tempfile.mkdtemp(prefix="fr-enospc-")
    out = os.path.join(base, "out")
    os.mkdir(out)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k,mode=0700", "tmpfs", out]).returncode:
        tap.ok(True, "# SKIP cannot mount a tmpfs here (not root?)")
        return
    d = Daemon(tap, window="10s", extra_args=("--output-dir", out))
    try:
        tap.ok(d.ready(), "daemon writing to a 4 KiB tmpfs is ready", d.log())
        subprocess.run([FRSPIN, "--seconds", "1", "--threads", "2"])
        n = d.nlines()
        d.proc.send_signal(signal.SIGUSR1)
        m = d.wait_line(r"failed to .*No space left on device", 20, n)
        tap.ok(m is not None, "a full disk gives a clear error", d.log())
        tap.eq(os.listdir(out), [], "and leaves no partial file")
        rc, outp, _ = flightrec("status", "--socket", d.socket)
        tap.ok(d.proc.poll() is None and rc == 0 and "recording" in outp, "recording goes on")
        subprocess.run(["mount", "-o", "remount,size=16m", out], check=True)
        path = d.dump()
        tap.ok(path is not None and reads_back(path), "once there is space the next dump succeeds")
    finally:
        d.cleanup()
        subprocess.run(["umount", out])
        shutil.rmtree(base, ignore_errors=True)


def no_io_uring():
    knob = "/proc/sys/kernel/io_uring_disabled"
    if not os.path.exists(knob):
        tap.ok(True, "# SKIP kernel.io_uring_disabled does not exist (kernel < 6.6)")
        return
    old = open(knob).read().strip()
    try:
        with open(knob, "w") as f:
            f.write("2")
        d = Daemon(tap, window="5s")
        try:
            tap.ok(d.ready(), "daemon starts with kernel.io_uring_disabled=2", d.log())
            path = d.dump()
            tap.ok(path and ", pwrite" in d.log() and reads_back(path),
                   "the dump falls back to pwrite and fsync, and reads back")
        finally:
            d.cleanup()
    finally:
        with open(knob, "w") as f:
            f.write(old)
    d = Daemon(tap, window="5s")
    try:
        d.ready()
        path = d.dump()
        tap.ok(path and ", io_uring" in d.log(), "with io_uring back, dumps use it again")
    finally:
        d.cleanup()


def ring_overflow():
    d = Daemon(tap, window="10s", frequency=10000, recorder_extra="ring = 16K\n")
    try:
        tap.ok(d.ready() and "ring 16 KiB" in d.log(), "daemon with a 16 KiB ring at 10 kHz is ready", d.log())
        spin = subprocess.Popen([FRSPIN, "--seconds", "3", "--threads", "8"])
        spin.wait()
        path = d.dump()
        s = show(path) if path else {"losses": {}}
        per_cpu = s["losses"].get("bpf_reserve_failed", [])
        tap.ok(sum(per_cpu) > 0, f"ring overflow is counted per CPU in the dump ({per_cpu})")
        rc, out, _ = flightrec("status", "--json", "--socket", d.socket)
        st = json.loads(out) if rc == 0 else {}
        tap.ok(st.get("losses", {}).get("bpf_reserve_failed", 0) >= sum(per_cpu),
               "and in status")

        def status():
            # On the socket from this process: a `flightrec status` run is a new
            # process, whose sampling, /proc read and table attach at 10 kHz
            # overflow a 16 KiB ring by themselves, inside the quiet 3 s.
            try:
                st = json.loads(control(d.socket, "status json"))
            except (OSError, ValueError):
                st = {}
            return st.get("losses", {}).get("bpf_reserve_failed", -1), st.get("unwind", {}).get("files_built")

        # The daemon samples itself too. The runs of flightrec above make it
        # build the unwind rows of each file flightrec maps: 250 ms of CPU
        # under ASan, 2,500 of its own samples at 10 kHz, more than a 16 KiB
        # ring holds. That is load as well; the claim is about the daemon once
        # nothing is loading it, so wait until no file has been built for 2 s
        # (at most 20 s).
        built, quiet = status()[1], 0
        for _ in range(20):
            time.sleep(1)
            now = status()[1]
            quiet = quiet + 1 if now == built else 0
            built = now
            if quiet >= 2:
                break
        l1 = status()[0]
        time.sleep(3)
        l2 = status()[0]
        tap.ok(l1 >= 0 and l2 - l1 < 50,
               f"once the load stops the daemon keeps up: losses stop ({l1} -> {l2} over 3 s, "
               f"after {built} files built and none for {quiet} s)")
        tap.ok(d.dump() is not None, "and it still writes dumps")
    finally:
        d.cleanup()


def dump_under_memory_pressure():
    v1 = "/sys/fs/cgroup/memory"
    if not os.path.exists(os.path.join(v1, "memory.limit_in_bytes")):
        tap.ok(True, "# SKIP no cgroup v1 memory controller to thrash in")
        return
    cg = os.path.join(v1, f"fr-rel-{os.getpid()}")
    os.makedirs(cg, exist_ok=True)
    with open(os.path.join(cg, "memory.limit_in_bytes"), "w") as f:
        f.write(str(32 << 20))
    data = tempfile.mktemp(prefix="fr-thrash-", dir="/var/tmp")
    d = Daemon(tap, window="20s")
    try:
        tap.ok(d.ready(), "daemon ready", d.log())
        p = subprocess.Popen([FRTOOL, "thrash", os.path.join(cg, "cgroup.procs"), "256", "8", data],
                             stdout=subprocess.DEVNULL)
        time.sleep(4)
        t0 = time.monotonic()
        path = d.dump(timeout=60)
        took = time.monotonic() - t0
        m = d.wait_line(r"dump written to .*, ([0-9.]+) ms", 1)
        tap.ok(path is not None and reads_back(path),
               f"a dump taken while a memory cgroup thrashes completes ({took:.2f} s; "
               f"{m.group(1) if m else '?'} ms trigger to durable file)")
        tap.ok("failed to lock memory" not in d.log(), "the daemon's memory is locked (mlockall)")
        p.wait()
    finally:
        d.cleanup()
        try:
            os.unlink(data)
        except OSError:
            pass
        remove_cgroup(cg)


def outdir_removed_and_symlinked():
    d = Daemon(tap, window="5s")
    try:
        tap.ok(d.ready(), "daemon ready", d.log())
        shutil.rmtree(d.out)
        path = d.dump()
        st = os.stat(d.out)
        tap.ok(path and reads_back(path) and stat.S_IMODE(st.st_mode) == 0o700,
               "a removed output directory is recreated with mode 0700 and the dump written")
        victim = tempfile.mkdtemp(prefix="fr-victim-")
        shutil.rmtree(d.out)
        os.symlink(victim, d.out)
        n = d.nlines()
        d.proc.send_signal(signal.SIGUSR1)
        m = d.wait_line(r"failed to open '.*': .*symlinks are not followed|failed to open", 20, n)
        tap.ok(m is not None, "an output directory swapped for a symlink is refused", d.log())
        tap.eq(os.listdir(victim), [], "and nothing is written through the symlink")
        os.unlink(d.out)
        tap.ok(d.dump() is not None, "recording went on: the next dump succeeds")
        shutil.rmtree(victim, ignore_errors=True)
    finally:
        d.cleanup()
    base = tempfile.mkdtemp(prefix="fr-unsafe-")
    real = os.path.join(base, "real")
    os.mkdir(real, 0o700)
    link = os.path.join(base, "link")
    os.symlink(real, link)
    p = subprocess.run([FLIGHTRECD, "--config", write_tmp_config(base), "--output-dir", link],
                       capture_output=True, text=True, timeout=60)
    tap.ok(p.returncode != 0 and "symlinks are not followed" in p.stderr,
           "a symlinked output directory is refused at start", p.stderr)
    ww = os.path.join(base, "ww")
    os.mkdir(ww)
    os.chmod(ww, 0o777)
    p = subprocess.run([FLIGHTRECD, "--config", write_tmp_config(base), "--output-dir", ww],
                       capture_output=True, text=True, timeout=60)
    tap.ok(p.returncode != 0 and "world-writable" in p.stderr and ww in p.stderr,
           "a world-writable output directory is refused at start", p.stderr)
    other = os.path.join(base, "other")
    os.mkdir(other, 0o700)
    os.chown(other, 65534, 65534)
    p = subprocess.run([FLIGHTRECD, "--config", write_tmp_config(base), "--output-dir", other],
                       capture_output=True, text=True, timeout=60)
    tap.ok(p.returncode != 0 and "owned by someone else" in p.stderr,
           "an output directory owned by someone else is refused", p.stderr)
    shutil.rmtree(base, ignore_errors=True)


def outdir_parent_of_nobody():
    """An output directory in a parent another user owns: that user could swap it for their
    own and stop every dump. Refused at start, and at reload (the current one kept)."""
    base = tempfile.mkdtemp(prefix="fr-parent-")
    os.chmod(base, 0o755)
    theirs = os.path.join(base, "nobodys")
    os.mkdir(theirs, 0o755)
    os.chown(theirs, 65534, 65534)
    unsafe = os.path.join(theirs, "dumps")
    p = subprocess.run([FLIGHTRECD, "--config", write_tmp_config(base), "--output-dir", unsafe],
                       capture_output=True, text=True, timeout=60)
    tap.ok(p.returncode != 0 and f"its parent '{theirs}'" in p.stderr and "another user" in p.stderr,
           "an output directory whose parent nobody owns is refused at start, the parent named",
           p.stderr)
    tap.ok(not os.path.exists(unsafe), "and nothing was made there")
    d = Daemon(tap, window="5s")
    try:
        tap.ok(d.ready(), "daemon ready", d.log())
        write_config(d.conf, window="5s", directory=unsafe, socket=d.socket)
        n = d.nlines()
        d.proc.send_signal(signal.SIGHUP)
        m = d.wait_line(r"refusing output directory '.*': its parent '.*nobodys'.*; keeping '", 20, n)
        tap.ok(m is not None and d.wait_line(r"config reloaded", 10, n) is not None,
               "a reload to it is refused with the parent named, the current directory kept", d.log())
        path = d.dump()
        tap.ok(path is not None and os.path.dirname(path) == d.out and not os.path.exists(unsafe),
               "dumps still go to the current directory", path)
    finally:
        d.cleanup()
        shutil.rmtree(base, ignore_errors=True)


def write_tmp_config(base):
    conf = os.path.join(base, "c.conf")
    write_config(conf, directory=os.path.join(base, "unused"), socket=os.path.join(base, "s.sock"))
    return conf


def group_and_privacy():
    d = Daemon(tap, window="5s", output_extra="group = nogroup\n",
               extra="[privacy]\ncmdline = false\n")
    try:
        tap.ok(d.ready(), "daemon with a dump group and cmdline privacy is ready", d.log())
        spin = subprocess.Popen([FRSPIN, "--seconds", "1", "--threads", "1"])
        time.sleep(0.5)
        path = d.dump()
        spin.wait()
        st = os.stat(path)
        gid = grp.getgrnam("nogroup").gr_gid
        tap.ok(stat.S_IMODE(st.st_mode) == 0o640 and st.st_gid == gid,
               f"dumps are 0640 and group-owned ({oct(stat.S_IMODE(st.st_mode))}, gid {st.st_gid})")
        dst = os.stat(d.out)
        tap.ok(stat.S_IMODE(dst.st_mode) == 0o750 and dst.st_gid == gid,
               "the directory is 0750 for that group")
        procs = processes(path)
        tap.ok(procs and all(p["cmdline"] == "" for p in procs), "with cmdline = false no command line is stored")
        tap.ok(any(p["pid"] == spin.pid and p["exe"].endswith("frspin") for p in procs),
               "while executables still are")
    finally:
        d.cleanup()
    d = Daemon(tap, window="5s")
    try:
        d.ready()
        path = d.dump()
        tap.eq(stat.S_IMODE(os.stat(path).st_mode), 0o600, "without a group, dumps are 0600")
    finally:
        d.cleanup()


def sampling_at_ready():
    """ "ready" means sampling is live: a process started at that line, and ended
    before the stall, off-CPU and OOM-victim programs are attached (about 2 s later),
    is in the dump with its samples. No wait for the rest of the programs. Until the
    sampler's unwinder is in place (0.5-1 s after "ready") the entry program walks
    frame pointers and copies the stack: a stock binary without frame pointers run
    then still has stacks that reach their outermost frame, most of them walked later
    from the copies once its files' rows are built."""
    d = Daemon(tap, window="20s")
    try:
        if not tap.ok(d.ready(all_programs=False), "daemon ready", d.log()):
            return
        start = d.nlines()
        # The ASan daemon builds rows 3-5 times slower: libc's took 0.5 s (and one of its
        # own files 1.1 s) on the attacher's one thread, so a 0.6 s sha256sum could end
        # before its turn came, and once it is gone its own binary can no longer be
        # opened (map_files) to build the rows its copies need: 0 of 21 walked in one CI
        # run, 2 runs in 5 here. It lives three times as long there; the plain daemon is
        # held to the 0.6 s that users meet.
        life = "1.8" if daemon_asan() else "0.6"
        spin = subprocess.Popen([FRSPIN, "--seconds", "0.5", "--threads", "2"])
        stock = subprocess.Popen(["timeout", life, "sha256sum", "/dev/zero"],
                                 stdout=subprocess.DEVNULL)
        spin.wait()
        stock.wait()
        early = d.wait_line(LATE_BPF, 0, start) is None
        tap.ok(d.wait_line(LATE_BPF, 60, start) is not None, "the late programs' line comes")
        path = d.dump()
        n = len([e for e in events(path) if e["pid"] == spin.pid and e["type"] == "sample"]) \
            if path else 0
        tap.ok(n >= 10, f"a process run right at \"ready\" has its samples ({n}; it ended "
               f"{'before' if early else 'after'} the late programs were attached)")
        status = json.loads(control(d.socket, "status json"))
        st = status["startup"]
        tap.ok(0 < st.get("unwinder_ns", 0) <= st.get("late_programs_ns", 0),
               f"the unwinder was put in place after \"ready\" and before the last late program "
               f"({st.get('unwinder_ns', 0) / 1e6:.0f} and {st.get('late_programs_ns', 0) / 1e6:.0f} ms "
               f"after the BPF object's open)", st)
        us = next((p["user_stacks"] for p in (show(path)["top_processes"] if path else [])
                   if p["comm"] == "sha256sum"), {})
        # By frame pointers alone it would reach it in almost none (a walk stops after a
        # frame or two); the copies are walked with the process's table, or once it has
        # ended with the maps its exit sent. Not all of them (CI: 4 of 19 left to frame
        # pointers, 15 reached the outermost frame; here 19 of 21; why those 4 had no
        # copy walked was not found: a copy is skipped while the ring is a quarter
        # full, and a held one is walked at most 10 s later). Under ASan the rows of libc may not be built
        # by the time the copies are walked (the daemon's start-up work is several times
        # slower, beside two spinning threads): those walks end at libc ("no_info", 16 of
        # 18 in a run), so there the claim is about the copies alone.
        n = us.get("samples", 0)
        tap.ok(n >= 10 and us.get("no_table", n) <= n / 3 and
               (daemon_asan() or us.get("outermost", 0) >= 2 * n / 3),
               f"sha256sum (no frame pointers) run right at \"ready\": its stacks reach their "
               f"outermost frame, walked later from their copies ({us})",
               status.get("unwind", {}).get("stack_copies", status.get("stack_copies")))
    finally:
        d.cleanup()


def reload_under_load():
    """A frequency reload (99 -> 999 Hz) with both CPUs busy and short stock
    processes starting, then 20 status requests on the socket. Each is answered,
    the new rate is the rate asked for, and nothing is lost. Before the fix, on a
    machine with cpu-clock (no PMU, as here) the reload set a 999 ns period:
    147,000 samples a second, a drain that never caught up, and no request
    answered (each waited out its timeout). How fast each is answered is a
    figure of the benchmark (tools/bench, "control under load"); here the bound
    is a stall's: 1 s."""
    hz = 999
    d = Daemon(tap, window="30s", memory="128M", frequency=99)
    load = []
    try:
        if not tap.ok(d.ready(), "daemon ready", d.log()):
            return
        ncpu = os.cpu_count()
        load.append(subprocess.Popen([FRSPIN, "--seconds", "20", "--threads", str(ncpu)]))
        load.append(subprocess.Popen(CHURN_SH))
        before = json.loads(control(d.socket, "status json"))["losses"]
        write_config(d.conf, "30s", "128M", hz, d.out, d.socket)
        n = d.nlines()
        d.proc.send_signal(signal.SIGHUP)
        t_reload = time.monotonic()
        lat, failed = [], []
        for _ in range(20):
            t = time.monotonic()
            try:
                json.loads(control(d.socket, "status json", timeout=5))
                lat.append(time.monotonic() - t)
            except (OSError, ValueError) as e:
                failed.append(str(e))
            time.sleep(0.05)
        tap.ok(d.wait_line(rf"config reloaded .*{hz} Hz", 10, n) is not None, f"the reload to {hz} Hz applied",
               d.log())
        tap.ok(not failed and max(lat) < 1.0,
               f"20 status requests after it are each answered, none stalled ({len(lat)} answered, slowest "
               f"{max(lat, default=0) * 1000:.0f} ms, median {sorted(lat)[len(lat) // 2] * 1000 if lat else 0:.0f} ms)",
               failed[:3])
        time.sleep(max(0.0, 2.5 - (time.monotonic() - t_reload)))
        try:
            after = json.loads(control(d.socket, "status json", timeout=5))["losses"]
        except (OSError, ValueError):
            after = {k: -1 for k in before}
        path = d.dump(timeout=30)
        for p in load:
            p.kill()
            p.wait()
        load = []
        lost = {k: after[k] - before[k] for k in ("bpf_reserve_failed", "drain_dropped")}
        tap.ok(not any(lost.values()), f"nothing lost across the reload ({lost})")
        evs = events(path) if path else []
        ts = [e["ts"] for e in evs if e["type"] == "sample"]
        # The second before the dump, at the new rate on every CPU (all busy).
        end = max(ts, default=0)
        rate = sum(1 for t in ts if end - 10**9 < t <= end)
        want = hz * ncpu
        tap.ok(0.5 * want <= rate <= 1.2 * want,
               f"the new rate is the one asked for: {rate} samples in the last second on {ncpu} busy CPUs "
               f"at {hz} Hz (want about {want})")
    finally:
        for p in load:
            p.kill()
            p.wait()
        d.cleanup()


def capabilities():
    names = {0: "chown", 1: "dac_override", 2: "dac_read_search", 5: "kill", 12: "net_admin",
             14: "ipc_lock", 19: "sys_ptrace", 21: "sys_admin", 24: "sys_resource", 34: "syslog",
             38: "perfmon", 39: "bpf", 40: "checkpoint_restore"}
    d = Daemon(tap, window="5s")
    try:
        tap.ok(d.ready(), "daemon ready", d.log())
        status = open(f"/proc/{d.proc.pid}/status").read()
        eff = int([l for l in status.splitlines() if l.startswith("CapEff:")][0].split()[1], 16)
        bnd = int([l for l in status.splitlines() if l.startswith("CapBnd:")][0].split()[1], 16)
        kept = sorted(names.get(c, str(c)) for c in range(64) if eff >> c & 1)
        tap.diag(f"capabilities kept: {kept}")
        allowed = {"kill", "ipc_lock", "sys_ptrace", "syslog", "bpf", "checkpoint_restore", "sys_resource"}
        tap.ok(set(kept) <= allowed and "sys_admin" not in kept and "dac_override" not in kept,
               "after start-up only the documented capabilities remain")
        tap.eq(bnd, eff, "and the bounding set is cut to them")
        tap.ok("NoNewPrivs:\t1" in status, "no_new_privs is set")
        # Capabilities are a thread's own: the workers (the /proc reader, the unwind
        # attacher, the dump thread) read files and memory other users control. They
        # kept every capability root has before each dropped its own at its start.
        threads = {}
        for tid in os.listdir(f"/proc/{d.proc.pid}/task"):
            try:
                st = open(f"/proc/{d.proc.pid}/task/{tid}/status").read()
            except OSError:
                continue
            f = dict(l.split(":", 1) for l in st.splitlines() if ":" in l)
            threads[tid] = (int(f["CapEff"], 16), int(f["CapBnd"], 16), f["NoNewPrivs"].strip())
        bad = {t: v for t, v in threads.items() if v != (eff, bnd, "1")}
        tap.ok(len(threads) >= 4 and not bad, f"every thread of the daemon ({len(threads)}) has "
               "the main thread's capabilities, bounding set and no_new_privs",
               str({t: (hex(v[0]), hex(v[1]), v[2]) for t, v in bad.items()}))
        lines = d.log().splitlines()
        at = [i for i, l in enumerate(lines) if l.endswith("; ready")] + \
             [i for i, l in enumerate(lines) if "all BPF programs attached" in l]
        tap.ok(len(at) == 2 and at[0] < at[1], "\"ready\" comes once sampling is live, and a "
               "line says when the programs loaded after it are attached", "\n".join(lines[-8:]))
        subprocess.run(["chmod", "755", FRSPIN])

        def as_nobody():
            os.setgid(65534)
            os.setuid(65534)
        spin = subprocess.Popen([FRSPIN, "--seconds", "1.5"], preexec_fn=as_nobody)
        time.sleep(1.0)
        path = d.dump()
        spin.wait()
        evs = [e for e in events(path) if e["pid"] == spin.pid and e["type"] == "sample"] if path else []
        procs = [p for p in processes(path) if p["pid"] == spin.pid] if path else []
        tap.ok(evs and any("fr_spin_leaf" in e["stack"] for e in evs) and procs and
               procs[0]["exe"].endswith("frspin"),
               "with those, another user's process is still fully read and symbolized")
        allk = [e for e in events(path) if e["type"] == "sample" and e["kernel_frames"]] if path else []
        bare = [f"{e['comm']} ({e['tid']}): {e['stack'][:e['kernel_frames'] + 3]}" for e in allk
                if e["stack"][0].startswith("0x")]
        tap.ok(allk and not bare,
               f"kernel frames still resolve from /proc/kallsyms (CAP_SYSLOG, {len(allk)} samples)",
               "\n".join(bare[:10]))
    finally:
        d.cleanup()
    # The dump thread was started at nice -10 before the capability drop.
    d = Daemon(tap, window="5s")
    try:
        tap.ok(d.ready(), "daemon ready", d.log())
        nices = {}
        for tid in os.listdir(f"/proc/{d.proc.pid}/task"):
            st = open(f"/proc/{d.proc.pid}/task/{tid}/stat").read()
            nices[int(tid)] = int(st.rsplit(")", 1)[1].split()[16])
        tap.diag(f"nice values of the daemon's threads: {nices}")
        tap.eq(nices.get(d.proc.pid), 0, "the main thread (drain, triggers) runs at nice 0")
        tap.eq(sorted(nices.values()).count(-10), 1,
               "one thread, the dump writer, runs at nice -10 without CAP_SYS_NICE kept")
        path = d.dump()
        tap.ok(path and reads_back(path), "and it writes dumps")
    finally:
        d.cleanup()


def bad_config_files():
    base = tempfile.mkdtemp(prefix="fr-badconf-")
    conf = write_tmp_config(base)
    os.chmod(conf, 0o666)
    p = subprocess.run([FLIGHTRECD, "--config", conf, "--check-config"], capture_output=True, text=True)
    tap.ok(p.returncode == 2 and conf in p.stderr and "writable" in p.stderr,
           "a world-writable config is refused", p.stderr)
    os.chmod(conf, 0o600)
    with open(conf, "a") as f:
        f.write("[recorder]\nwindow = 5s\n")
    p = subprocess.run([FLIGHTRECD, "--config", conf, "--check-config"], capture_output=True, text=True)
    tap.ok(p.returncode == 2 and "duplicate" in p.stderr, "a duplicate section is refused", p.stderr)
    p = subprocess.run([FLIGHTRECD, "--config", os.path.join(base, "missing.conf"), "--check-config"],
                       capture_output=True, text=True)
    tap.ok(p.returncode == 2 and "missing.conf" in p.stderr, "a missing config is refused by name", p.stderr)
    shutil.rmtree(base, ignore_errors=True)


bad_config_files()
outdir_removed_and_symlinked()
outdir_parent_of_nobody()
group_and_privacy()
capabilities()
sampling_at_ready()
reload_under_load()
no_io_uring()
full_disk()
ring_overflow()
dump_under_memory_pressure()
atomic_dumps()
tap.done()
