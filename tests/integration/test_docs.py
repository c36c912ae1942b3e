#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The man pages and the bash completion against the real programs.

flightrec.conf(5) has an entry for every key of conf/flightrec.conf (the
commented-out ones too) in the right section, with its default and range;
flightrecd(8) documents every option of 'flightrecd --help', the signals,
exit codes, files and the capabilities privs.c keeps; flightrec(1) has a
section for every command of 'flightrec --help' with every option of its
'--help'; every page uses man(7) macros only and renders without a warning
at 80 columns; the completion offers every command and option and the
values of --format and --type, and .frd files for DUMP.

Needs no root and no BPF: it runs only --help. Rendering needs man-db and
groff-base (Debian packages).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from harness import FLIGHTREC, FLIGHTRECD, Tap  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MAN = os.path.join(ROOT, "docs", "man")
PAGES = {
    "flightrecd.8": ("FLIGHTRECD", "8"),
    "flightrec.1": ("FLIGHTREC", "1"),
    "flightrec.conf.5": ("FLIGHTREC.CONF", "5"),
}
COMPLETION = os.path.join(ROOT, "tools", "completion", "flightrec.bash")
CONF = os.path.join(ROOT, "conf", "flightrec.conf")
PRIVS = os.path.join(ROOT, "recorder", "daemon", "privs.c")
# man(7) only: no mdoc, nothing a man page reader may lack.
MACROS = {"TH", "SH", "SS", "TP", "IP", "PP", "RS", "RE", "EX", "EE", "br",
          "B", "I", "BR", "BI", "IB", "IR", "RB", "RI"}
# Commands being added; documented (and completed) from their specification
# even before 'flightrec --help' lists them.
SPECIFIED_COMMANDS = ["export", "report"]
SPECIFIED_KEYS = [("output", "on_dump"), ("output", "on_dump_timeout")]

tap = Tap()


def binary(path):
    """@path as given, else relative to the source tree (run from anywhere)."""
    if os.path.exists(path) or os.path.isabs(path):
        return path
    return os.path.join(ROOT, path)


def run(*argv, **kw):
    try:
        p = subprocess.run(list(argv), capture_output=True, text=True, timeout=60, **kw)
    except (OSError, subprocess.TimeoutExpired) as e:
        return 127, "", f"{argv[0]}: {e}"
    return p.returncode, p.stdout, p.stderr


# ------------------------------------------------------------------ roff

ESCAPES = {"aq": "'", "dq": '"', "em": "\u2014", "bu": "\u2022", "lq": '"', "rq": '"'}


def plain(s):
    """Roff text to the characters it shows."""
    s = s.replace("\\-", "-").replace("\\&", "").replace("\\|", "").replace("\\c", "")
    s = s.replace("\\%", "")
    s = re.sub(r"\\f[BIRP]", "", s)
    s = re.sub(r"\\\((\w\w)", lambda m: ESCAPES.get(m.group(1), ""), s)
    return s.replace("\\e", "\\")


def macro_args(line):
    """The arguments of a macro line, quotes honoured."""
    args, cur, quoted, started = [], "", False, False
    for ch in line.split(None, 1)[1] if " " in line else "":
        if ch == '"':
            quoted, started = not quoted, True
        elif ch in " \t" and not quoted:
            if started:
                args.append(cur)
            cur, started = "", False
        else:
            cur, started = cur + ch, True
    if started:
        args.append(cur)
    return args


def text_of(line):
    """What a line shows: a macro line's arguments joined, or the text."""
    if line.startswith("."):
        return plain("".join(macro_args(line)))
    return plain(line)


class Page:
    def __init__(self, name):
        self.name = name
        self.path = os.path.join(MAN, name)
        self.lines = open(self.path, encoding="utf-8").read().splitlines() \
            if os.path.exists(self.path) else []

    def blocks(self, level):
        """(title, first, end) of each .SH (level 'SH') or .SS section."""
        heads = [i for i, l in enumerate(self.lines)
                 if l.startswith(".SH") or (level == "SS" and l.startswith(".SS"))]
        out = []
        for k, i in enumerate(heads):
            if not self.lines[i].startswith("." + level):
                continue
            end = heads[k + 1] if k + 1 < len(heads) else len(self.lines)
            out.append((text_of(self.lines[i]), i + 1, end))
        return out

    def section(self, title, level="SH"):
        """The lines of the first section whose title starts with @title
        (a title "[name]" also finds "[name NAME] ...")."""
        for t, a, b in self.blocks(level):
            if t.startswith(title) or (title.endswith("]") and t.startswith(title[:-1] + " ")):
                return self.lines[a:b]
        return None

    @staticmethod
    def tags(lines):
        """[(tag text, entry lines)] of every .TP item in @lines; an entry
        ends at the next .TP, .SH or .SS outside its .RS/.RE nesting."""
        out = []
        for i, l in enumerate(lines):
            if l != ".TP" or i + 1 >= len(lines):
                continue
            depth, j = 0, i + 2
            while j < len(lines):
                m = lines[j]
                if m.startswith(".RS"):
                    depth += 1
                elif m.startswith(".RE"):
                    depth -= 1
                    if depth < 0:
                        break
                elif depth == 0 and (m == ".TP" or m.startswith((".SH", ".SS"))):
                    break
                j += 1
            out.append((text_of(lines[i + 1]), lines[i + 2:j]))
        return out

    @staticmethod
    def joined(lines):
        return " ".join(text_of(l) for l in lines if not l.startswith('.\\"'))


pages = {n: Page(n) for n in PAGES}

# ------------------------------------------------------- every page: form

env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8")
env.pop("MANPAGER", None)
env.pop("PAGER", None)
have_man, have_groff = shutil.which("man"), shutil.which("groff")
tap.ok(have_man, "man is installed (man-db)", "apt-get install man-db groff-base")
for name, (title, sec) in PAGES.items():
    p = pages[name]
    if not tap.ok(p.lines, f"{name} exists", p.path):
        continue
    th = [l for l in p.lines if l.startswith(".TH")]
    tap.ok(len(th) == 1 and macro_args(th[0])[:2] == [title, sec],
           f"{name}: one .TH {title} {sec}", th)
    used = {m.group(1) for l in p.lines for m in [re.match(r"\.([A-Za-z]+)", l)] if m}
    tap.ok(used <= MACROS, f"{name}: man(7) macros only (no mdoc)", sorted(used - MACROS))
    heads = [text_of(l) for l in p.lines if l.startswith(".SH")]
    tap.ok(heads[:3] == ["NAME", "SYNOPSIS", "DESCRIPTION"] and "SEE ALSO" in heads,
           f"{name}: NAME, SYNOPSIS, DESCRIPTION ... SEE ALSO", heads)
    bad = [f"{i + 1}: {l}" for i, l in enumerate(p.lines)
           if not l.startswith(".") and re.match(r"['.]", l)]
    tap.ok(not bad, f"{name}: no text line starts with a control character", bad)
    if have_man:
        rc, out, err = run("man", "--warnings", "-l", p.path, env=env)
        tap.ok(rc == 0 and not err.strip(), f"{name}: 'man --warnings -l' renders it "
               "without warnings (MANWIDTH=80)", err or f"rc {rc}")
        wide = [f"{len(l)}: {l}" for l in out.splitlines() if len(l) > 80]
        tap.ok(out and not wide, f"{name}: no rendered line is wider than 80 columns", wide)
    if have_groff:
        rc, _, err = run("groff", "-man", "-Tutf8", "-ww", "-z", p.path, env=env)
        tap.ok(rc == 0 and not err.strip(), f"{name}: 'groff -man -Tutf8 -ww' gives no warning",
               err or f"rc {rc}")

# -------------------------------------------------- flightrec.conf(5): keys


def conf_keys(path):
    """[(section, key, value, commented)] of @path, commented-out keys and
    sections included, and the trigger keys its comments document."""
    keys, section = [], None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        m = re.match(r"#?\[\s*([a-z]+)\b[^\]]*\]", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"(#?)([a-z_]+)\s*=\s*(.*?)\s*(\s;.*)?$", line)
        if m and section:
            keys.append((section, m.group(2), m.group(3), m.group(1) == "#"))
            continue
        m = re.match(r"#   ([a-z_]+) {2,}\S", line)
        if m:
            keys.append(("trigger", m.group(1), None, True))
    return keys


UNITS = {"ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9,
         "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def value_of(v):
    """A config value as what it means: 1m and 60s are the same duration."""
    m = re.fullmatch(r"(\d+)(ms|s|m|h|K|M|G|KiB|MiB|GiB)?", v)
    if not m:
        return v
    unit = m.group(2) or ""
    kind = "d" if unit in ("ms", "s", "m", "h") else "n"
    return (kind, int(m.group(1)) * UNITS.get(unit, 1))


def default_in(text, value):
    """Does the 'Default' of an entry's @text say @value?"""
    at = text.find("Default")
    words = re.findall(r"[\w/.-]+", text[at:at + 80]) if at >= 0 else []
    want = value_of(value)
    return any(value_of(w.rstrip(".")) == want for w in words)


conf5 = pages["flightrec.conf.5"]
keys = conf_keys(CONF) if os.path.exists(CONF) else []
tap.ok(len({(s, k) for s, k, _, _ in keys}) >= 20 and any(c for *_, c in keys),
       f"conf/flightrec.conf lists keys, commented-out ones among them ({len(keys)} lines)")
seen = set()
for sec in sorted({s for s, *_ in keys}):
    tap.ok(conf5.section(f"[{sec}]") is not None,
           f"flightrec.conf.5 has a section for [{sec}]")
for sec, key, value, commented in keys + [(s, k, None, True) for s, k in SPECIFIED_KEYS]:
    if (sec, key) in seen:
        continue
    seen.add((sec, key))
    lines = conf5.section(f"[{sec}]") or []
    entries = [(t, e) for t, e in Page.tags(lines) if re.split(r"[\s=]", t, 1)[0] == key]
    if not tap.ok(entries, f"flightrec.conf.5 documents [{sec}] {key}"):
        continue
    text = Page.joined(entries[0][1])
    if sec == "trigger":
        tap.ok("Default" in text or "Required" in text,
               f"[{sec}] {key}: its default, or that it is required", text[:300])
    else:
        tap.ok("Default" in text, f"[{sec}] {key}: its default", text[:300])
    if value is not None and not commented and sec != "trigger":
        tap.ok(default_in(text, value),
               f"[{sec}] {key}: the default {value} of conf/flightrec.conf", text[:300])
    if value is not None and re.fullmatch(r"\d+(ms|s|m|h|K|M|G)?", value):
        tap.ok("Accepted" in text, f"[{sec}] {key}: the accepted range", text[:300])
timeout = [e for t, e in Page.tags(conf5.section("[output]") or []) if t.startswith("on_dump_timeout")]
tap.ok(timeout and "60s" in Page.joined(timeout[0]) and "1s..1h" in Page.joined(timeout[0]),
       "[output] on_dump_timeout: default 60s, accepted 1s..1h")
c5 = Page.joined(conf5.lines)
for what in ("CAP_SYS_RESOURCE", "multiples of 2s", "stall <= window", "owned by root",
             "group- or world-writable", "/etc/flightrec/flightrec.conf", "[trigger manual]",
             "type = signal"):
    tap.ok(what in c5, f"flightrec.conf.5 mentions {what!r}")

# ------------------------------------------------- flightrecd(8): options

FLIGHTRECD_BIN = binary(FLIGHTRECD)
d8 = pages["flightrecd.8"]
rc, dhelp, err = run(FLIGHTRECD_BIN, "--help")
tap.ok(rc == 0 and dhelp.startswith("Usage: flightrecd"), "flightrecd --help", err)
opts = sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", dhelp)))
shorts = sorted(set(re.findall(r"^\s+(-[A-Za-z]),", dhelp, re.M)))
tap.ok(len(opts) >= 7, f"flightrecd --help lists its options ({' '.join(opts)})")
opt_tags = " ".join(t for t, _ in Page.tags(d8.section("OPTIONS") or []))
for o in opts + shorts:
    tap.ok(re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", opt_tags),
           f"flightrecd.8 OPTIONS documents {o}")
sig_tags = " ".join(t for t, _ in Page.tags(d8.section("SIGNALS") or []))
for s in sorted(set(re.findall(r"\bSIG[A-Z0-9]+\b", dhelp))):
    tap.ok(s in sig_tags, f"flightrecd.8 SIGNALS documents {s}")
m = re.search(r"\(default (/\S+)\)", dhelp)
tap.ok(m and m.group(1) in Page.joined(d8.lines), "flightrecd.8 names the default config path",
       m and m.group(1))
exit_tags = [t for t, _ in Page.tags(d8.section("EXIT STATUS") or [])]
tap.eq(exit_tags, ["0", "1", "2"], "flightrecd.8 EXIT STATUS: 0, 1, 2")
caps = sorted(set(re.findall(r"\bCAP_[A-Z_]+\b", open(PRIVS).read().split("*/")[0]))) \
    if os.path.exists(PRIVS) else []
cap_text = Page.joined(d8.section("CAPABILITIES") or [])
tap.ok(caps, "recorder/daemon/privs.c names the capabilities it keeps")
for c in caps:
    tap.ok(re.search(r"\b" + c + r"\b", cap_text), f"flightrecd.8 CAPABILITIES explains {c}")
d8text = Page.joined(d8.lines)
for what in ("/etc/flightrec/flightrec.conf", "/var/lib/flightrec", "/run/flightrec/control.sock",
             ".frd.tmp", "/tmp/perf-PID.map", "/proc/pressure", "flightrecd.service",
             "NOTIFY_SOCKET", "JOURNAL_STREAM", "READY=1", "no_new_privs", "cooldown",
             "max_per_hour", "once per second", "command line", "RENAME_NOREPLACE"):
    tap.ok(what in d8text, f"flightrecd.8 covers {what!r}")
for t in ("What a dump contains",):
    tap.ok(d8.section(t, "SS") is not None, f"flightrecd.8 has '{t}'")

# ------------------------------------------------ flightrec(1): commands

FLIGHTREC_BIN = binary(FLIGHTREC)
f1 = pages["flightrec.1"]
rc, fhelp, err = run(FLIGHTREC_BIN, "--help")
tap.ok(rc == 0 and "Commands:" in fhelp, "flightrec --help", err)
listed = re.findall(r"^  ([a-z][a-z-]*)\s", fhelp.split("Commands:", 1)[-1], re.M)
tap.ok(len(listed) >= 6, f"flightrec --help lists commands ({' '.join(listed)})")
commands = listed + [c for c in SPECIFIED_COMMANDS if c not in listed]
common = " ".join(t for t, _ in Page.tags(f1.section("COMMON OPTIONS") or []))
cmd_opts = {}
for c in commands:
    sec = f1.section(c, "SS")
    if not tap.ok(sec is not None and (f1.section("COMMANDS") or []),
                  f"flightrec.1 has a section for '{c}'"):
        continue
    if c not in listed:
        tap.diag(f"'{c}' is not in 'flightrec --help' yet: documented from its specification")
        continue
    rc, out, err = run(FLIGHTREC_BIN, c, "--help")
    if not tap.ok(rc == 0 and out.startswith(f"Usage: flightrec {c}"), f"flightrec {c} --help", err):
        continue
    longs = sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", out)))
    shorts = sorted(set(re.findall(r"^\s+(-[A-Za-z])[,\s]", out, re.M)))
    cmd_opts[c] = longs
    tags = " ".join(t for t, _ in Page.tags(sec))
    for o in longs + shorts:
        where = common if o in ("--help", "--version") else tags
        tap.ok(re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", where),
               f"flightrec.1 documents 'flightrec {c} {o}'")
for t in ("0", "1", "2"):
    tap.ok(t in [x for x, _ in Page.tags(f1.section("EXIT STATUS") or [])],
           f"flightrec.1 EXIT STATUS: {t}")
f1text = Page.joined(f1.lines)
for what in ("FLIGHTREC_SOCKET", "/run/flightrec/control.sock", "chrome", "pprof", "folded",
             "report.html", ".frd"):
    tap.ok(what in f1text, f"flightrec.1 covers {what!r}")
tap.ok(f1.section("EXAMPLES") and ".EX" in f1.section("EXAMPLES"), "flightrec.1 has examples")
for name, p in pages.items():
    see = Page.joined(p.section("SEE ALSO") or [])
    others = [o for o in ("flightrecd(8)", "flightrec(1)", "flightrec.conf(5)")
              if not o.startswith(name.rsplit(".", 1)[0] + "(")]
    tap.ok(all(o in see for o in others), f"{name}: SEE ALSO names the other pages", see)

# ------------------------------------------------------ bash completion

rc, _, err = run("bash", "-n", COMPLETION)
tap.ok(os.path.exists(COMPLETION) and rc == 0, "flightrec.bash passes bash -n", err)
work = tempfile.mkdtemp(prefix="fr-docs-")
for f in ("a.frd", "b.txt", "c d.frd"):
    open(os.path.join(work, f), "w").close()
os.mkdir(os.path.join(work, "sub"))
cases = {
    "cmd": ["flightrec", "ex"],
    "all": ["flightrec", ""],
    "format": ["flightrec", "export", "--format", ""],
    "format=": ["flightrec", "export", "--format", "=", ""],
    "format=pp": ["flightrec", "export", "--format", "=", "pp"],
    "type": ["flightrec", "events", "--type", ""],
    "dump": ["flightrec", "show", ""],
    "after-dump": ["flightrec", "show", "a.frd", ""],
    "dump-after-opt": ["flightrec", "events", "--type", "exit", ""],
    "snapshot": ["flightrec", "snapshot", ""],
}
for c in commands:
    cases["opts-" + c] = ["flightrec", c, "-"]


def q(w):
    return "'" + w.replace("'", "'\\''") + "'"


script = [f"source {q(COMPLETION)} || exit 3", "complete -p flightrec >/dev/null || exit 4",
          't() { local n=$1; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); '
          'COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=(); _flightrec; '
          'printf "%s" "$n"; printf "\\t%s" "${COMPREPLY[@]}"; printf "\\n"; }']
script += ["t " + " ".join(q(w) for w in [n] + words) for n, words in cases.items()]
rc, out, err = run("bash", "--norc", "--noprofile", "-c", "\n".join(script), cwd=work)
tap.ok(rc == 0 and not err.strip(), "the completion loads, registers _flightrec and runs", err
       or f"rc {rc}")
got = {}
for line in out.splitlines():
    n, *vals = line.split("\t")
    got[n] = sorted(v.rstrip("=") for v in vals if v)
tap.eq(got.get("cmd"), ["export"], "completing 'flightrec ex' gives export")
tap.ok(set(commands) <= set(got.get("all", [])), "'flightrec <TAB>' offers every command",
       got.get("all"))
for n in ("format", "format="):
    tap.eq(got.get(n), ["chrome", "folded", "pprof"],
           f"'flightrec export --format{' =' if n.endswith('=') else ''} <TAB>' gives chrome, pprof, folded")
tap.eq(got.get("format=pp"), ["pprof"], "'--format=pp<TAB>' gives pprof")
m = re.search(r"only events of this type:(.*?)\(", run(FLIGHTREC_BIN, "events", "--help")[1], re.S)
types = sorted(re.findall(r"[a-z_]+", m.group(1))) if m else []
tap.ok(types and got.get("type") == types, "'flightrec events --type <TAB>' gives the types of "
       "'events --help'", f"got {got.get('type')}, help says {types}")
tap.eq(got.get("dump"), ["a.frd", "c d.frd", "sub"], "a DUMP completes to .frd files and directories")
tap.eq(got.get("after-dump"), [], "nothing after the DUMP")
tap.eq(got.get("dump-after-opt"), ["a.frd", "c d.frd", "sub"], "a DUMP after an option's value")
tap.eq(got.get("snapshot"), [], "snapshot takes no DUMP")
for c, longs in cmd_opts.items():
    missing = [o for o in longs if o not in got.get("opts-" + c, [])]
    tap.ok(not missing, f"'flightrec {c} -<TAB>' offers every option of its --help", missing)
for c in SPECIFIED_COMMANDS:
    tap.ok("--help" in got.get("opts-" + c, []), f"'flightrec {c} -<TAB>' offers options")
shutil.rmtree(work, ignore_errors=True)

tap.done()
