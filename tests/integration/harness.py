# SPDX-License-Identifier: LGPL-2.1-or-later
"""Integration test harness: TAP output and a real flightrecd under test.

The tests run the real daemon as root with real BPF. Paths to the binaries
come from the environment that meson sets (FLIGHTRECD, FLIGHTREC, FRSPIN,
FR_CONF).
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

FLIGHTRECD = os.environ.get("FLIGHTRECD", "build/recorder/flightrecd")
FLIGHTREC = os.environ.get("FLIGHTREC", "build/tools/flightrec")
FRSPIN = os.environ.get("FRSPIN", "build/tests/integration/frspin")
FR_CONF = os.environ.get("FR_CONF", "conf/flightrec.conf")
# The workloads with known answers (tests/workloads/), as meson built them.
FRTOOL = os.environ.get("FRTOOL", "build/tests/integration/frtool")
FRSTALL = os.environ.get("FRSTALL", "build/tests/integration/frstall")
FRMEM = os.environ.get("FRMEM", "build/tests/integration/frmem")
FRCXX = os.environ.get("FRCXX", "build/tests/integration/frcxx")
FRMIX = os.environ.get("FRMIX", "build/tests/integration/frmix")
FRDL = os.environ.get("FRDL", "build/tests/integration/libfrdl.so")
FRDL2 = os.environ.get("FRDL2", "build/tests/integration/libfrdl2.so")


class Tap:
    """Minimal TAP producer: one ok() per check, plan printed at the end."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, what, diag=None):
        self.n += 1
        if not cond:
            self.failed += 1
        print(f"{'ok' if cond else 'not ok'} {self.n} - {what}", flush=True)
        if not cond and diag:
            for line in str(diag).splitlines()[:40]:
                print(f"#   {line}", flush=True)
        return cond

    def eq(self, got, want, what):
        return self.ok(got == want, what, f"got {got!r}, want {want!r}")

    def diag(self, msg):
        for line in str(msg).splitlines():
            print(f"# {line}", flush=True)

    def skip_all(self, why):
        print(f"1..0 # SKIP {why}", flush=True)
        sys.exit(0)

    def done(self):
        print(f"1..{self.n}", flush=True)
        sys.exit(1 if self.failed else 0)


def require_root_bpf(tap):
    """Skip the whole test where the kernel features truly are absent."""
    if os.geteuid() != 0:
        tap.skip_all("needs root to load BPF programs")
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        tap.skip_all("kernel has no BTF (/sys/kernel/btf/vmlinux)")


def daemon_asan():
    """Is the daemon under test built with ASan (several times slower)?"""
    daemon = os.environ.get("FLIGHTRECD", "build/recorder/flightrecd")
    try:
        libs = subprocess.run(["ldd", daemon], capture_output=True, text=True).stdout
    except OSError:
        libs = ""
    return "libasan" in libs


def daemon_env():
    """The daemon's environment for tests that judge its RSS: no MALLOC_PERTURB_,
    and in an ASan build a small quarantine (8 MiB, not 256), so that what ASan
    keeps of freed memory to catch use-after-free is not taken for the daemon's."""
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_PERTURB_"}
    if daemon_asan():
        opts = env.get("ASAN_OPTIONS", "")
        env["ASAN_OPTIONS"] = (opts + ":" if opts else "") + "quarantine_size_mb=8"
    return env


def memory_cgroup(limit, prefix="fr-test"):
    """A fresh memory cgroup (v1 or v2) limited to @limit bytes: (dir, procs file), or
    None where there is no memory controller. The caller removes it (remove_cgroup())."""
    name = f"{prefix}-{os.getpid()}-{time.monotonic_ns() % 10**9}"
    v1 = "/sys/fs/cgroup/memory"
    if os.path.exists(os.path.join(v1, "memory.limit_in_bytes")):
        cg, knob = os.path.join(v1, name), "memory.limit_in_bytes"
    else:
        for v2 in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
            ctl = os.path.join(v2, "cgroup.controllers")
            if os.path.exists(ctl) and "memory" in open(ctl).read().split():
                cg, knob = os.path.join(v2, name), "memory.max"
                break
        else:
            return None
    os.makedirs(cg, exist_ok=True)
    with open(os.path.join(cg, knob), "w") as f:
        f.write(str(limit))
    return cg, os.path.join(cg, "cgroup.procs")


def remove_cgroup(cg, tries=50):
    """Remove cgroup directory @cg, waiting up to @tries tenths of a second for
    its last processes to be gone (a killed task leaves it a moment later).
    Gone already is fine; one still busy after that is left, not an error."""
    for _ in range(tries):
        try:
            os.rmdir(cg)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(0.1)
    return False


def write_config(path, window="30s", memory="64M", frequency=99, directory="/tmp",
                 socket=None, extra="", output_extra="", recorder_extra=""):
    """A config file for a test daemon; @extra holds more sections (triggers)."""
    socket = socket or os.path.join(os.path.dirname(path), "control.sock")
    with open(path, "w") as f:
        f.write(f"[recorder]\nwindow = {window}\nmemory = {memory}\n{recorder_extra}"
                f"frequency = {frequency}\n\n[output]\ndirectory = {directory}\n"
                f"{output_extra}\n[control]\nsocket = {socket}\n\n{extra}")
    os.chmod(path, 0o600)


# Short stock processes, one after another, until killed: new processes for the
# daemon to read and attach while other work runs (the reload test, the bench).
CHURN_SH = ["/bin/sh", "-c", "while :; do sort /etc/services >/dev/null; gzip -c /bin/sh >/dev/null; "
            "sha256sum /bin/sh >/dev/null; done"]

# The daemon's line once the programs loaded after "ready" are attached, or failed.
LATE_BPF = r"all BPF programs attached|failed to (load|attach) BPF program"


class Daemon:
    """A flightrecd process with its log collected line by line."""

    def __init__(self, tap, window="30s", memory="64M", frequency=99, extra_args=(),
                 env=None, extra="", output_extra="", recorder_extra=""):
        self.tap = tap
        self.dir = tempfile.mkdtemp(prefix="fr-it-")
        self.out = os.path.join(self.dir, "dumps")
        self.conf = os.path.join(self.dir, "flightrec.conf")
        self.socket = os.path.join(self.dir, "control.sock")
        write_config(self.conf, window, memory, frequency, self.out, self.socket, extra,
                     output_extra, recorder_extra)
        self.lines = []
        self.cond = threading.Condition()
        self.proc = subprocess.Popen(
            [FLIGHTRECD, "--config", self.conf, *extra_args],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
            env=env)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_line(self, pattern, timeout=30, start=0):
        """Wait for a log line matching @pattern at index >= start; return its match."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines[start:]:
                    m = rx.search(line)
                    if m:
                        return m
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self.reader.is_alive()):
                    return None
                self.cond.wait(min(left, 0.5))

    def log(self):
        with self.cond:
            return "\n".join(self.lines)

    def nlines(self):
        with self.cond:
            return len(self.lines)

    def ready(self, timeout=60, all_programs=True):
        """The "; ready" line came (sampling is live). With @all_programs, also wait
        for the programs loaded after it (stalls, blocks, OOM victims): the checks of
        this suite need them from their first step."""
        if self.wait_line(r"; ready$", timeout) is None:
            return False
        if all_programs:
            self.wait_line(LATE_BPF, timeout)
        return True

    def dump(self, timeout=60):
        """Send SIGUSR1; return the path of the dump it produced, or None."""
        start = self.nlines()
        self.proc.send_signal(signal.SIGUSR1)
        m = self.wait_line(r"dump written to '([^']+)'|failed to", timeout, start)
        if not m or not m.group(1):
            self.tap.diag(self.log())
            return None
        return m.group(1)

    def dumps(self):
        """The .frd files in the output directory, oldest first."""
        if not os.path.isdir(self.out):
            return []
        return sorted(os.path.join(self.out, f) for f in os.listdir(self.out) if f.endswith(".frd"))

    def cpu_seconds(self):
        """User + system CPU time the daemon has used so far."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def settle(self, max_s=20.0, quiet=0.05):
        """Wait (at most @max_s) until a second passes with the daemon using less than
        @quiet s of CPU: its start-up work (the /proc scan, symbol and unwind tables
        for what runs) is done. True when it settled."""
        end = time.monotonic() + max_s
        while time.monotonic() < end:
            c0 = self.cpu_seconds()
            time.sleep(1.0)
            if self.cpu_seconds() - c0 < quiet:
                return True
        return False

    def copies_done(self, max_s=20.0):
        """After a workload ended: wait (at most @max_s) until the daemon holds no
        sample waiting for its file's rows (status stack_copies.held), as a
        trigger's post time would let it. Not a wait for the daemon to be ready
        for a process: that process ran and ended without one. Returns the
        seconds waited, or None if copies were still held at the end."""
        t0 = time.monotonic()
        while True:
            st = json.loads(control(self.socket, "status json"))
            if not st["unwind"]["stack_copies"]["held"]:
                return time.monotonic() - t0
            if time.monotonic() - t0 > max_s:
                return None
            time.sleep(0.1)

    def stop(self, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.reader.join(5)
        return rc

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def flightrec(*args, check=False):
    """Run the reader; return (returncode, stdout, stderr)."""
    p = subprocess.run([FLIGHTREC, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def events(path):
    rc, out, err = flightrec("events", "--json", path)
    if rc:
        raise RuntimeError(f"flightrec events failed ({rc}): {err}")
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def show(path):
    rc, out, err = flightrec("show", "--json", path)
    if rc:
        raise RuntimeError(f"flightrec show failed ({rc}): {err}")
    return json.loads(out)


def processes(path):
    rc, out, err = flightrec("processes", "--json", path)
    if rc:
        raise RuntimeError(f"flightrec processes failed ({rc}): {err}")
    return json.loads(out)


def lz4_test(path):
    """`lz4 -t FILE`: None when the CLI is absent, else its exit code."""
    if not shutil.which("lz4"):
        return None
    return subprocess.run(["lz4", "-t", path], capture_output=True).returncode


def notify_socket(dirpath):
    """A datagram socket that plays systemd's NOTIFY_SOCKET."""
    path = os.path.join(dirpath, "notify")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(30)
    return s, path


def control(sock_path, request, timeout=30):
    """Send @request ("status json", ...) on the daemon's control socket from
    this process and return the reply. Unlike running `flightrec status`, this
    starts no process: a new process is work the daemon samples, reads and
    attaches unwind tables for, which a test measuring a quiet daemon must
    not cause itself."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(sock_path)
        s.sendall(request.encode() + b"\n")
        chunks = []
        while True:
            b = s.recv(65536)
            if not b:
                break
            chunks.append(b)
    return b"".join(chunks).decode(errors="replace")
