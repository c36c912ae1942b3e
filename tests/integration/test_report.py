#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""flightrec report end to end: a real dump from the real daemon (CPU-bound
workload with known function names, a process that exits 3, a command line
holding "</script>", a vfork parent blocked for a known time), the HTML
page it makes (self-contained, data that cannot close its script element,
the filters, the stall lanes, the off-CPU flame graph's data and the PSI
comparison as `flightrec stalls` has them), and the page rendered in
headless Chromium: no script error, the flame graph shows the workload's
functions, clicking, searching, choosing a process and sorting work, the
vfork parent has its stall lane and its blocked time in the off-CPU tab, an
empty range and a synthetic dump of thousands of processes and tens of
thousands of stacks render too, and a screenshot is a real picture."""
import collections
import html.parser
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(__file__))
from harness import (FLIGHTREC, FRSPIN, Daemon, Tap, events, flightrec,  # noqa: E402
                     require_root_bpf, show, FRSTALL)

VFORK_MS = 500

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars"]
SPIN_FUNCS = ("fr_spin_leaf", "fr_spin_middle", "fr_spin_outer")
HOSTILE = "</script><b>x"

tap = Tap()
tmp = tempfile.mkdtemp(prefix="fr-report-")


def find_chromium():
    """The browser and None, or None and why it cannot run here."""
    exe = next((p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and os.access(p, os.X_OK)), None)
    if not exe:
        return None, "chromium is not installed (Debian package 'chromium', tools/bootstrap.sh deps installs it)"
    page = os.path.join(tmp, "smoke.html")
    with open(page, "w") as f:
        f.write("<!DOCTYPE html><body><script>document.body.dataset.ok='1'</script></body>")
    rc, out, err = chromium(exe, ["--dump-dom"], page)
    if rc != 0 or 'data-ok="1"' not in out:
        last = err.strip().splitlines()[-1] if err.strip() else "no output"
        return None, f"chromium cannot run here (exit {rc}): {last}"
    return exe, None


def chromium(exe, args, page, window="1400,1000"):
    """Run headless Chromium on @page with a fresh profile; (rc, stdout, stderr)."""
    profile = tempfile.mkdtemp(prefix="profile-", dir=tmp)
    try:
        p = subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                            "--virtual-time-budget=5000", f"--window-size={window}", *args,
                            "file://" + os.path.abspath(page)],
                           capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return -1, e.stdout or "", f"timed out: {e.stderr or ''}"
    finally:
        shutil.rmtree(profile, ignore_errors=True)


class Dom(html.parser.HTMLParser):
    """Body attributes, the text under each element with an id, and the
    text of every flame graph frame (class "f" inside #flame)."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.body = {}
        self.open = []          # (tag, id or None, is_frame)
        self.texts = {}
        self.frames = []
        self.count = {}
        self.proc_rows = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        in_flame = any(i == "flame" for _, i, _ in self.open)
        frame = in_flame and tag == "div" and "f" in (a.get("class") or "").split()
        if frame:
            self.frames.append("")
        for key in ("class", "id"):
            for v in (a.get(key) or "").split():
                self.count[f"{tag}.{v}" if key == "class" else f"#{v}"] = \
                    self.count.get(f"{tag}.{v}" if key == "class" else f"#{v}", 0) + 1
        self.count[tag] = self.count.get(tag, 0) + 1
        if tag == "tr" and any(i == "procs" for _, i, _ in self.open) and any(t == "tbody" for t, _, _ in self.open):
            self.proc_rows += 1
        if tag not in ("br", "input", "meta", "img", "hr", "link", "col", "area", "wbr"):
            self.open.append((tag, a.get("id"), frame))

    def handle_endtag(self, tag):
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i][0] == tag:
                del self.open[i:]
                break

    def handle_data(self, data):
        for _, i, frame in self.open:
            if i:
                self.texts[i] = self.texts.get(i, "") + data
        if self.open and self.open[-1][2]:
            self.frames[-1] += data

    def text(self, i):
        return self.texts.get(i, "")


def data_of(page):
    """The JSON data object of a report page, and its raw text."""
    with open(page, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'<script type="application/json" id="fr-data">(.*?)</script>', text, re.S)
    if not m:
        return None, "", text
    return json.loads(m.group(1)), m.group(1), text


def png_ok(path):
    """(ok, why): a PNG of 1400x1000 whose pixels are not all alike."""
    try:
        with open(path, "rb") as f:
            b = f.read()
    except OSError as e:
        return False, str(e)
    if not b.startswith(b"\x89PNG\r\n\x1a\n") or b[12:16] != b"IHDR":
        return False, "not a PNG"
    w, h, depth, ctype = struct.unpack(">IIBB", b[16:26])
    idat, pos = b"", 8
    while pos + 8 <= len(b):
        n, typ = struct.unpack(">I4s", b[pos:pos + 8])
        if typ == b"IDAT":
            idat += b[pos + 8:pos + 8 + n]
        pos += 12 + n
    try:
        raw = zlib.decompress(idat)
    except zlib.error as e:
        return False, f"bad image data: {e}"
    bpp = {2: 3, 6: 4}.get(ctype, 1) * depth // 8
    if (w, h) != (1400, 1000) or len(raw) != h * (1 + w * bpp):
        return False, f"{w}x{h}, color type {ctype}, {len(raw)} bytes of pixels"
    distinct = len(set(raw[::7]))
    if len(b) < 20000 or distinct < 40:
        return False, f"too plain: {len(b)} bytes, {distinct} distinct byte values"
    return True, f"{w}x{h}, {len(b)} bytes"


# Interactions, run inside the rendered page after the report's own script.
DRIVER = r"""
<script>
(function () {
var out = {};
function q(s) { return document.querySelector(s); }
function qa(s) { return Array.prototype.slice.call(document.querySelectorAll(s)); }
function named(n) { return qa('#flame .f').filter(function (f) { return f.textContent === n; }); }
function pids() { return qa('#procs tbody tr').map(function (tr) { return +tr.cells[0].textContent; }); }
function done() { q('#driver').textContent = JSON.stringify(out); }
try {
	out.frames = qa('#flame .f').length;
	named('fr_spin_leaf')[0].dispatchEvent(new MouseEvent('mousemove', { bubbles: true, clientX: 50, clientY: 50 }));
	out.tip = q('#tip').textContent;
	named('fr_spin_outer')[0].click();
	out.path = q('#flame-path').textContent;
	out.zoomed = q('#flame .f.z') ? [q('#flame .f.z').textContent, q('#flame .f.z').style.width] : null;
	out.faded = qa('#flame .f.anc').length;
	out.inzoom = qa('#flame .f').filter(function (f) { return !f.classList.contains('anc'); }).length;
	q('#flame-reset').click();
	out.reset = q('#flame-path').textContent;
	var s = q('#flame-search');
	s.value = 'fr_spin_(leaf|middle)';
	s.dispatchEvent(new Event('input'));
	setTimeout(function () {
		try {
			out.match = q('#flame-match').textContent;
			out.matched = +q('#flame-match').dataset.matched;
			out.hl = qa('#flame .f.m').map(function (f) { return f.textContent; });
			var sel = q('#flame-proc');
			var opt = Array.prototype.slice.call(sel.options).filter(function (o) { return o.textContent.indexOf('frspin @PID@ ') === 0; })[0];
			sel.value = opt.value;
			sel.dispatchEvent(new Event('change'));
			out.total = q('#flame-total').textContent;
			out.top = qa('#flame .f').filter(function (f) { return f.style.top === '0px'; }).map(function (f) { return f.textContent; });
			q('#procs th[data-key="pid"]').click();
			out.asc = pids();
			q('#procs th[data-key="pid"]').click();
			out.desc = pids();
			q('#procs th[data-key="samples"]').click();
			out.bysamples = qa('#procs tbody tr').map(function (tr) { return +tr.cells[4].textContent.replace(/,/g, '') || 0; });
			var pf = q('#procs-filter');
			pf.value = 'script><b';
			pf.dispatchEvent(new Event('input'));
		} catch (e) {
			out.error = String(e && e.stack || e);
			return done();
		}
		setTimeout(function () {
			out.filtered = qa('#procs tbody tr').map(function (tr) { return [tr.cells[2].textContent, tr.cells[3].title]; });
			done();
		}, 500);
	}, 500);
} catch (e) {
	out.error = String(e && e.stack || e);
	done();
}
})();
</script>
<pre id="driver"></pre>
"""


# The off-CPU tab, driven inside the rendered page.
OFF_DRIVER = r"""
<pre id="driver"></pre>
<script>
(function () {
var out = {};
function q(s) { return document.querySelector(s); }
function qa(s) { return Array.prototype.slice.call(document.querySelectorAll(s)); }
try {
	q('#flame-tab-off').click();
	out.title = q('#flame-title').textContent;
	out.selected = q('#flame-tab-off').getAttribute('aria-selected');
	out.all = q('#flame-total').textContent;
	out.frames = qa('#flame .f').map(function (f) { return f.textContent; });
	var f = qa('#flame .f').filter(function (f) { return f.textContent === 'kernel_clone'; })[0];
	if (f) {
		f.dispatchEvent(new MouseEvent('mousemove', { bubbles: true, clientX: 50, clientY: 50 }));
		out.tip = q('#tip').textContent;
	}
	var sel = q('#flame-proc');
	var opt = Array.prototype.slice.call(sel.options).filter(function (o) { return o.textContent.indexOf('frstall @PID@ ') === 0; })[0];
	out.option = opt ? opt.textContent : null;
	if (opt) {
		sel.value = opt.value;
		sel.dispatchEvent(new Event('change'));
		out.total = q('#flame-total').textContent;
		out.top = qa('#flame .f').filter(function (f) { return f.style.top === '0px'; }).map(function (f) { return f.textContent; });
	}
	q('#flame-tab-cpu').click();
	out.back = q('#flame-title').textContent;
} catch (e) {
	out.error = String(e && e.stack || e);
}
q('#driver').textContent = JSON.stringify(out);
})();
</script>
"""


def fmt_ns(ns):
    """Nanoseconds as the page writes them (fmtNs)."""
    if ns >= 1e9:
        return f"{ns / 1e9:.3f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.3f} ms"
    return f"{ns / 1e3:.1f} \u00b5s"


def synthetic(real):
    """A data object of the page's schema at scale: 3000 processes, 30000
    stacks up to 60 frames deep, 2000 frame names, long pressure series,
    thousands of exits, an OOM kill and its trigger."""
    rnd = random.Random(7)
    d = dict(real)
    nproc, nstack, nname, nbins = 3000, 30000, 2000, 300
    d["procs"] = [[1000 + i, 1, 5_000_000_000 + i * 1000, f"comm{i % 97}", f"/usr/bin/prog{i}",
                   f"prog{i} --arg {i}", "S", 4096 * i, 2 if i % 3 else 1, -5_000_000 + i if i % 3 else "",
                   "exit 1" if i % 3 else "", 0, "/"] for i in range(nproc)]
    d["names"] = [f"func_{i}_{'x' * (i % 30)}" for i in range(nname)]
    d["kinds"] = [i % 2 for i in range(nname)]
    d["stacks"] = [[4 * i + rnd.randrange(4) for i in range(rnd.randrange(1, 8))] +
                   [rnd.randrange(nname) for _ in range(rnd.randrange(0, 60))] for _ in range(nstack)]
    samples = {}
    for _ in range(60000):
        k = (rnd.randrange(nproc), rnd.randrange(-1, nstack))
        samples[k] = samples.get(k, 0) + 1
    d["samples"] = sorted([p, s, n] for (p, s), n in samples.items())
    per = {}
    for p, s, n in d["samples"]:
        per[p] = per.get(p, 0) + n
    for p, n in per.items():
        d["procs"][p][11] = n
    d["counts"] = dict(real["counts"], samples=60000, exits=nproc * 2 // 3, ooms=1)
    d["range"] = {"from": -3_600_000_000, "to": 0}
    d["timeline"] = {"bins": nbins, "series": [{"proc": p, "counts": [rnd.randrange(50) for _ in range(nbins)]}
                                              for p in list(range(10)) + [-1]]}
    d["pressure"] = [{"resource": r, "source": src, "t": [-3_600_000_000 + i * 1_000_000 for i in range(3600)],
                      "some": [rnd.randrange(5000) for _ in range(3600)], "full": [-1] * 3600,
                      "total": list(range(3600)), "has_full": False, "stall_us": 123456}
                     for r in ("cpu", "memory", "io") for src in ("system", "app.slice")]
    d["marks"] = {"exit": [[-3_600_000_000 + i * 1_000_000, i, "exit 1"] for i in range(nproc) if i % 3],
                  "oom": [[-1_000_000, 5, 123456789]]}
    d["triggers"] = [{"name": "oom", "type": "oom", "reason": "OOM kill of prog5", "detail": "",
                      "t": -1_000_000, "time": "2026-01-01 00:00:00.000000 UTC",
                      "victim": {"proc": 5, "pid": 1005, "start": 5_000_005, "comm": "comm5"}}]
    return d


def with_data(text, blob, data, extra=""):
    """The page @text with its data replaced (escaped like the C side) and @extra before </body>."""
    enc = json.dumps(data).replace("<", "\\u003c")
    text = text.replace(blob, enc, 1)
    return text.replace("</body>", extra + "</body>", 1) if extra else text


def render(exe, page, what):
    """Dump the DOM of @page; a Dom, or None after a failed check."""
    rc, out, err = chromium(exe, ["--dump-dom"], page)
    if not tap.ok(rc == 0 and "<body" in out, f"{what}: chromium renders the page", err[-2000:]):
        return None
    dom = Dom(out)
    tap.eq(dom.body.get("data-ready"), "1", f"{what}: rendering finished (data-ready=1)")
    tap.ok(dom.body.get("data-errors") == "0", f"{what}: no script error (data-errors=0)",
           f"data-errors={dom.body.get('data-errors')}\n{dom.text('errors')}")
    return dom


# --- the command line, no dump needed ---
rc, out, _ = flightrec("--help")
tap.ok(rc == 0 and re.search(r"^\s+report\s", out, re.M), "flightrec --help lists report")
rc, out, _ = flightrec("report", "--help")
tap.ok(rc == 0 and out.startswith("Usage: flightrec report") and "--pid" in out and "-o" in out,
       "report --help: 0 and the options")
rc, out, _ = flightrec("report", "--version")
tap.ok(rc == 0 and out.startswith("flightrec "), "report --version")
rc, _, err = flightrec("report")
tap.ok(rc == 2 and "missing DUMP" in err, "report without a dump: 2", err)
rc, _, err = flightrec("report", "--bogus", "x.frd")
tap.ok(rc == 2 and "unknown option '--bogus'" in err, "report with a bad option: 2", err)
rc, _, err = flightrec("report", "--pid=12x", "x.frd")
tap.ok(rc == 2 and "bad --pid '12x'" in err, "report --pid with a bad list: 2", err)
rc, _, err = flightrec("report", "--from=soon", "x.frd")
tap.ok(rc == 2 and "bad --from 'soon'" in err, "report --from with a bad number: 2", err)
rc, _, err = flightrec("report", "--from=5", "--to=1", "x.frd")
tap.ok(rc == 2 and "--from" in err and "--to" in err, "report --from after --to: 2", err)
rc, _, err = flightrec("report", "x.frd", "-o")
tap.ok(rc == 2 and "needs a value" in err, "report -o without a file: 2", err)
rc, _, err = flightrec("report", "a.frd", "b.frd")
tap.ok(rc == 2 and "one DUMP only" in err, "report with two dumps: 2", err)
rc, _, err = flightrec("report", os.path.join(tmp, "nope.frd"))
tap.ok(rc == 1 and "nope.frd" in err and "No such file" in err, "report on a missing file: 1, file named", err)

browser, why_not = find_chromium()
if why_not:
    tap.diag(f"browser checks skipped: {why_not}")

require_root_bpf(tap)

# --- a real dump ---
d = Daemon(tap, window="20s")
dump = os.path.join(tmp, "test.frd")
try:
    tap.ok(d.ready(), "flightrecd is ready", d.log())
    spin = subprocess.Popen([FRSPIN, "--seconds", "3", "--threads", "2"])
    hostile = subprocess.Popen(["sh", "-c", "sleep 6", HOSTILE])
    subprocess.run(["sh", "-c", "exit 3"])
    vf = subprocess.run([FRSTALL, "vfork", str(VFORK_MS)], capture_output=True, text=True)
    vfork = [int(x) for x in vf.stdout.split()] if vf.returncode == 0 else []
    time.sleep(1.5)
    path = d.dump()
    spin.wait()
    hostile.kill()
    hostile.wait()
    if path:
        shutil.copy(path, dump)
        dump_size = os.path.getsize(dump)
finally:
    d.cleanup()
if not tap.ok(path is not None, "SIGUSR1 writes a dump"):
    shutil.rmtree(tmp, ignore_errors=True)
    tap.done()
evs = events(dump)
summary = show(dump)
spin_samples = [e for e in evs if e["pid"] == spin.pid and e["type"] == "sample"]

page = os.path.join(tmp, "report.html")
rc, _, err = flightrec("report", dump, "-o", page)
tap.ok(rc == 0 and os.path.getsize(page) > 10000, "report -o FILE writes the page", err)
tap.eq(os.stat(page).st_mode & 0o777, 0o600, "a new page has mode 0600 (it holds command lines)")
p = subprocess.run([FLIGHTREC, "report", dump], capture_output=True)
with open(page, "rb") as f:
    tap.ok(p.returncode == 0 and p.stdout == f.read(), "without -o the same page goes to stdout")
rc, _, err = flightrec("report", dump, "-o", dump)
tap.ok(rc == 2 and "is the dump itself" in err and os.path.getsize(dump) == dump_size,
       "-o naming the dump itself: 2, the dump kept", err)
rc, _, err = flightrec("report", dump, "-o", os.path.join(tmp, "no", "such", "dir.html"))
tap.ok(rc == 1 and "no/such/dir.html" in err, "an unwritable output: 1 and the path named", err)

data, blob, text = data_of(page)
tap.ok(data is not None, "the page holds its data as one JSON object")
remote = re.findall(r"""(?:\b(?:src|href|action|poster)\s*=\s*["']?\s*|url\(\s*["']?|@import\s+["']?)(?:https?:)?//""",
                    text, re.I)
tap.eq(remote, [], "self-contained: no http(s) or protocol-relative src/href/url()/@import")
tap.ok(not re.search(r"<link\b|<script[^>]*\bsrc\s*=|<iframe\b|<img\b[^>]*\bsrc\s*=\s*[\"']?(?!data:)", text, re.I),
       "no <link>, <script src>, <iframe> or remote <img>")
tap.ok("default-src 'none'" in text, "a Content-Security-Policy forbids every fetch")
tap.ok("</" not in blob and HOSTILE not in text, "no '</' inside the data: a command line cannot close the script")
hostile_rows = [x for x in data["procs"] if HOSTILE in x[data["proc_fields"].index("cmdline")]]
tap.ok(len(hostile_rows) == 1, "and that command line is in the data, intact", [x[:6] for x in data["procs"]][:5])
hostile_cmd = hostile_rows[0][data["proc_fields"].index("cmdline")] if hostile_rows else None

F = {k: i for i, k in enumerate(data["proc_fields"])}
spin_rows = [i for i, x in enumerate(data["procs"]) if x[F["pid"]] == spin.pid]
tap.ok(len(spin_rows) == 1 and data["procs"][spin_rows[0]][F["comm"]] == "frspin",
       "the workload's incarnation is in the process table")
tap.eq(sum(n for _, _, n in data["samples"]), summary["counts"]["samples"], "every sample of the window is counted")
tap.eq(sum(n for pi, _, n in data["samples"] if spin_rows and pi == spin_rows[0]), len(spin_samples),
       "the workload's samples, per incarnation")
names = data["names"]
tap.ok(all(f in names for f in SPIN_FUNCS), "the frame names hold fr_spin_leaf, fr_spin_middle, fr_spin_outer")
full = [s for s in data["stacks"] if all(names.index(f) in s for f in SPIN_FUNCS)]
tap.ok(full and all(s.index(names.index("fr_spin_outer")) < s.index(names.index("fr_spin_middle")) <
                    s.index(names.index("fr_spin_leaf")) for s in full), "stacks run root first")
tap.eq(len(data["pressure"]) > 0, summary["counts"]["pressure"] > 0, "pressure series when the dump has readings")
exits = [m for m in data["marks"]["exit"] if m[2] == "exit 3"]
tap.ok(len(exits) >= 1, "the exit of 'sh -c \"exit 3\"' is a timeline mark", data["marks"]["exit"][:5])
tap.ok(sum(sum(s["counts"]) for s in data["timeline"]["series"]) == summary["counts"]["samples"],
       "the timeline bins hold every sample")
tap.ok(data["triggers"] and data["triggers"][0]["type"] == "signal" and str(os.getpid()) in data["triggers"][0]["reason"],
       "the trigger, with its reason")
tap.ok(any(l["key"] == "bpf_reserve_failed" and "cpus" in l for l in data["losses"]), "the loss counters, per CPU")

# --- stalls: the lanes, the off-CPU flame graph's data, PSI beside the recorded memory stalls ---
rc, out, _ = flightrec("stalls", "--json", dump)
sv = json.loads(out) if rc == 0 else {}
tap.ok(len(vfork) == 4, "frstall vfork ran", vf.stderr)
vpid, vtid, vt0, vt1 = vfork if len(vfork) == 4 else (0, 0, 0, 0)
vrow = [i for i, x in enumerate(data["procs"]) if x[F["pid"]] == vpid]
vev = max([e for e in evs if e["type"] == "offcpu" and e["kind"] == "blocked" and e["pid"] == vpid and
           e["tid"] == vtid and vt0 <= e["begin_ns"] and e["begin_ns"] + e["duration_ns"] <= vt1],
          key=lambda e: e["duration_ns"], default=None)
ST = data.get("stalls", {})
tap.eq(ST.get("recorded"), sv.get("recorded"), "the data says whether the dump records stalls, as `stalls` does")
if not sv.get("recorded"):
    for _ in range(6):
        tap.ok(True, "# SKIP the dump records no stalls (a kernel without the stall and off-CPU "
               "tracepoints, or [stalls] off)")
else:
    tap.ok(vev is not None and vev["duration_ns"] >= VFORK_MS * 0.9e6 and len(vrow) == 1,
           f"the dump has the vfork parent's blocked wait ({VFORK_MS} ms)", [e for e in evs if e["pid"] == vpid][:3])
    kinds = ST.get("kinds", [])
    tap.eq([ST.get("kind_count", [None])[k] for k in range(len(kinds))],
           [sv["kinds"][k]["count"] for k in kinds], "the stall counts per kind are those of `flightrec stalls`")
    lanes = ST.get("lanes", [])
    want = [(x["pid"], x["start"] // 1000) for x in sv["processes"][:8]]
    got = [(data["procs"][ln["proc"]][F["pid"]], data["procs"][ln["proc"]][F["start"]]) for ln in lanes]
    tap.eq(got, want, "a stall lane for each of the 8 processes that stalled longest, in `stalls` order")
    vl = [ln for ln in lanes if vrow and ln["proc"] == vrow[0]]
    blocked = kinds.index("blocked") if "blocked" in kinds else -1
    seg = [sg for ln in vl for sg in ln["segs"] if sg[2] == blocked and sg[3] == vtid and vev and
           abs(sg[0] * 1000 - (vev["begin_ns"] - data["origin_boot_us"] * 1000)) < 2000]
    tap.ok(len(vl) == 1 and len(seg) == 1 and
           abs((seg[0][1] - seg[0][0]) * 1000 - vev["duration_ns"]) <= 0.05 * vev["duration_ns"],
           "the vfork parent's lane has its blocked wait as a segment [begin, end] on its thread",
           [vl[:1], vev])
    O = data.get("offcpu", {})
    want_off = {}
    for e in evs:
        if e["type"] == "offcpu":
            want_off[(e["pid"], e["start"])] = want_off.get((e["pid"], e["start"]), 0) + e["duration_ns"]
    got_off = {}
    for p_, _s, _k, ns in O.get("samples", []):
        key = (data["procs"][p_][F["pid"]], data["procs"][p_][F["start"]])
        got_off[key] = got_off.get(key, 0) + ns
    tap.ok(O.get("ns") == sum(want_off.values()) and
           {(p_, s_ // 1000): n for (p_, s_), n in want_off.items()} == got_off,
           "the off-CPU flame graph's data weighs each process's stacks by its offcpu events' time",
           [O.get("ns"), sum(want_off.values())])
    vstacks = [data["stacks"][s_] for p_, s_, _k, _n in O.get("samples", []) if vrow and p_ == vrow[0] and s_ >= 0]
    tap.ok(any(st and names[st[-1]] == "kernel_clone" for st in vstacks),
           "the vfork parent's off-CPU stacks, root first, include one that ends in kernel_clone",
           [[names[x] for x in st] for st in vstacks][:2])
    P_ = ST.get("psi", {})
    tap.ok(P_.get("present") == sv["psi"]["present"] and "PSI" in P_.get("note", "") and
           all(P_.get(k) == sv["psi"].get(k) for k in ("note", "some_us", "full_us", "recorded_memory_stall_ns")
               if sv["psi"]["present"]),
           "the PSI comparison: some and full stall time, the recorded memory stalls and why they "
           "differ, as `stalls` has them", [P_, sv.get("psi")])

pid_page = os.path.join(tmp, "pid.html")
rc, _, err = flightrec("report", f"--pid={spin.pid}", dump, "-o", pid_page)
pdata = data_of(pid_page)[0] if rc == 0 else None
tap.ok(pdata and {x[F["pid"]] for x in pdata["procs"]} == {spin.pid} and
       sum(n for _, _, n in pdata["samples"]) == len(spin_samples),
       "--pid=PID: only that process and its samples", err)
tap.eq(len(pdata["pressure"]) if pdata else -1, len(data["pressure"]), "--pid keeps the pressure curves")
empty_page = os.path.join(tmp, "empty.html")
rc, _, err = flightrec("report", "--from=1000", dump, "-o", empty_page)
edata = data_of(empty_page)[0] if rc == 0 else None
tap.ok(edata and not edata["samples"] and not edata["pressure"] and not edata["marks"]["exit"],
       "--from after the window: a page with no samples, pressure or exits", err)
tap.ok(edata and not edata["stalls"]["lanes"] and not edata["offcpu"]["samples"] and edata["offcpu"]["ns"] == 0,
       "--from after the window: no stall lane, no off-CPU time")
if len(vfork) == 4 and vev:
    vpage = os.path.join(tmp, "vfork.html")
    rc, _, err = flightrec("report", f"--pid={vpid}", dump, "-o", vpage)
    vdata = data_of(vpage)[0] if rc == 0 else None
    vlanes = vdata["stalls"]["lanes"] if vdata else []
    tap.ok(len(vlanes) == 1 and vdata["procs"][vlanes[0]["proc"]][F["pid"]] == vpid and
           vdata["offcpu"]["ns"] == sum(e["duration_ns"] for e in evs if e["type"] == "offcpu" and e["pid"] == vpid),
           "--pid=PID: the stall lane and the off-CPU time of that process alone", err)

# --- in the browser ---
if not browser:
    tap.ok(True, f"# SKIP rendering in Chromium: {why_not}")
    shutil.rmtree(tmp, ignore_errors=True)
    tap.done()

dom = render(browser, page, "report")
if dom:
    frames = dom.frames
    tap.ok(all(f in frames for f in SPIN_FUNCS),
           "the flame graph draws fr_spin_leaf, fr_spin_middle and fr_spin_outer as frames",
           sorted(set(frames))[:30])
    tap.ok("frspin" in frames, "and a frame for the workload's command")
    nrows = min(500, len(data["procs"]))
    tap.eq(dom.proc_rows, nrows, "the process table lists the incarnations")
    tap.ok(f"{spin.pid}" in dom.text("procs") and "frspin" in dom.text("procs"), "the workload is in the table")
    tap.ok(dom.count.get("path", 0) >= 1 and dom.count.get("svg", 0) == 2,
           "the timeline draws sample areas (and the memory section its own chart)")
    npsi = sum(1 for s in data["pressure"] if s["t"])
    tap.ok(dom.count.get("polyline.psi", 0) >= npsi and dom.count.get("span.psi", 0) == len(data["pressure"]),
           f"a pressure curve and legend entry per series ({npsi})")
    tap.ok(dom.count.get("line.trig", 0) == 1 and dom.count.get("line.exit", 0) >= 1,
           "markers for the trigger and the exits")
    tap.ok("signal" in dom.text("triggers") and str(os.getpid()) in dom.text("triggers"), "the trigger section")
    tap.ok("bpf_reserve_failed" in dom.text("losses"), "the loss table")
    if sv.get("recorded") and vev and vrow:
        li = [k for k, ln in enumerate(ST["lanes"]) if ln["proc"] == vrow[0]]
        lbl = dom.text(f"stall-lane-{li[0]}") if li else ""
        tap.ok(lbl.startswith(f"frstall {vpid} ") and "blocked (D) " in lbl and
               dom.count.get("rect.k-blocked", 0) >= 1 and dom.count.get("rect.stall-lane", 0) == len(ST["lanes"]),
               "the timeline draws a stall lane per process, the vfork parent's labelled with its blocked time",
               [lbl, dom.count.get("rect.k-blocked"), dom.count.get("rect.stall-lane")])
        tap.ok("blocked (D)" in dom.text("stall-legend") and "memcg reclaim" in dom.text("stall-legend"),
               "a legend names the stall kinds and their colours", dom.text("stall-legend"))
        ps, cmp_ = ST["psi"], dom.text("stall-psi")
        tap.ok(ps["note"] in cmp_ and (not ps["present"] or
                                       f"PSI some {fmt_ns(ps['some_us'] * 1000)}" in cmp_ and
                                       fmt_ns(ps["recorded_memory_stall_ns"]) in cmp_),
               "the page shows PSI memory some beside the recorded memory stalls, and why they differ", cmp_)
    else:
        for _ in range(3):
            tap.ok(True, "# SKIP no recorded stalls or no vfork wait in the dump (checked above)")

drv_page = os.path.join(tmp, "driven.html")
with open(drv_page, "w", encoding="utf-8") as f:
    f.write(text.replace("</body>", DRIVER.replace("@PID@", str(spin.pid)) + "</body>", 1))
dom = render(browser, drv_page, "interactions")
drv = {}
if dom:
    try:
        drv = json.loads(dom.text("driver"))
    except ValueError:
        drv = {"error": f"no driver output: {dom.text('driver')!r}"}
    tap.ok("error" not in drv, "the interaction script ran", drv.get("error"))
tap.ok("fr_spin_leaf" in drv.get("tip", "") and "samples" in drv.get("tip", ""),
       "hovering a frame shows its name and samples", drv.get("tip"))
tap.ok((drv.get("zoomed") or [""])[0] == "fr_spin_outer" and drv["zoomed"][1] in ("100%", "100.0000%") and "fr_spin_outer" in drv.get("path", "") and
       drv.get("faded", 0) >= 2, "clicking fr_spin_outer zooms into it, ancestors faded", drv)
tap.ok(0 < drv.get("inzoom", 0) < drv.get("frames", 0), "zoomed: only its subtree is drawn",
       [drv.get("inzoom"), drv.get("frames")])
tap.ok(drv.get("reset", "x").strip() == "Zoom: all", "reset zooms out", drv.get("reset"))
tap.ok(drv.get("matched", 0) > 0 and "Matched:" in drv.get("match", "") and "%" in drv.get("match", ""),
       "search shows the matched percentage", drv.get("match"))
tap.ok(drv.get("matched", 0) <= sum(n for _, _, n in data["samples"]) and
       set(drv.get("hl", [])) == {"fr_spin_leaf", "fr_spin_middle"}, "and highlights the matching frames", drv.get("hl"))
tap.ok(f"frspin {spin.pid}" in drv.get("total", "") and drv.get("top", [""])[0].startswith(f"frspin {spin.pid} "),
       "choosing a process draws only its flame graph", [drv.get("total"), drv.get("top")])
asc, desc = drv.get("asc", []), drv.get("desc", [])
tap.ok(asc and asc == sorted(asc) and desc == sorted(desc, reverse=True) and asc[0] != desc[0],
       "clicking PID sorts the table, again reverses it", [asc[:5], desc[:5]])
bys = drv.get("bysamples", [])
# The top row is the process with the most samples in the dump: frspin, or the
# daemon itself, sampled while the kernel verified its late programs (2 threads, ~2 s).
per_pid = collections.Counter(e["pid"] for e in evs if e["type"] == "sample")
comm_of = {e["pid"]: e.get("comm") for e in evs if e["type"] == "sample"}
tap.ok(bys and bys == sorted(bys, reverse=True) and bys[0] == max(per_pid.values()) and
       len(spin_samples) in bys, "sorting by samples: the top row has the most samples, "
       "frspin's count among them", [bys[:5], [(p, comm_of[p], n) for p, n in per_pid.most_common(3)], len(spin_samples)])

tap.ok(len(drv.get("filtered", [])) == 1 and drv["filtered"][0][1] == hostile_cmd,
       "the table filter finds the '</script>' command line, shown as text", drv.get("filtered"))

off_page = os.path.join(tmp, "offcpu.html")
with open(off_page, "w", encoding="utf-8") as f:
    f.write(text.replace("</body>", OFF_DRIVER.replace("@PID@", str(vpid)) + "</body>", 1))
dom = render(browser, off_page, "off-CPU tab")
off = {}
if dom:
    try:
        off = json.loads(dom.text("driver"))
    except ValueError:
        off = {"error": f"no driver output: {dom.text('driver')!r}"}
if sv.get("recorded") and vev:
    vns = sum(e["duration_ns"] for e in evs if e["type"] == "offcpu" and e["pid"] == vpid)
    tap.ok("error" not in off and "blocked time" in off.get("title", "") and off.get("selected") == "true" and
           fmt_ns(data["offcpu"]["ns"]) + " blocked" in off.get("all", ""),
           "the off-CPU tab: its title and total say blocked time", off)
    tap.ok("kernel_clone" in off.get("frames", []) and "blocked" in off.get("tip", ""),
           "the off-CPU flame graph draws the vfork wait's kernel_clone, hovering it shows blocked time",
           [off.get("tip"), len(off.get("frames", []))])
    tap.ok(f"frstall {vpid} " in (off.get("option") or "") and
           off.get("total", "").startswith(f"\u2014 {fmt_ns(vns)} blocked of frstall {vpid} ") and
           (off.get("top") or [""])[0].startswith(f"frstall {vpid} "),
           f"choosing the vfork parent draws its {fmt_ns(vns)} blocked alone", [off.get("option"), off.get("total")])
    tap.eq(off.get("back"), "CPU flame graph", "the CPU tab comes back")
else:
    for _ in range(4):
        tap.ok(True, "# SKIP no recorded stalls or no vfork wait in the dump (checked above)")

dom = render(browser, empty_page, "empty range")
if dom:
    tap.ok("No CPU samples" in dom.text("flame") and dom.body.get("data-ready") == "1",
           "empty range: says there are no samples")

big_page = os.path.join(tmp, "big.html")
big = synthetic(data)
with open(big_page, "w", encoding="utf-8") as f:
    f.write(with_data(text, blob, big))
dom = render(browser, big_page, "3000 processes, 30000 stacks")
if dom:
    tap.ok(len(dom.frames) > 100, f"the flame graph draws the visible frames ({len(dom.frames)})")
    tap.ok(dom.proc_rows == 500 and "Show all 3,000" in dom.text("procs-more"),
           "the table shows 500 rows and offers the rest")
    tap.ok(dom.count.get("polyline.psi", 0) == 6 and dom.count.get("path.oom", 0) == 1,
           "six pressure curves and the OOM kill")
    tap.ok("OOM victim" in dom.text("triggers") and "comm5" in dom.text("triggers"), "the OOM victim is named")

shot = os.path.join(tmp, "report.png")
rc, _, err = chromium(browser, [f"--screenshot={shot}"], page)
ok, why = png_ok(shot) if rc == 0 else (False, err[-2000:])
tap.ok(ok, f"a screenshot is a real picture ({why})", why)

shutil.rmtree(tmp, ignore_errors=True)
tap.done()
