#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-layers.py - the build lets a stage see only the stages below it.

    tools/check-layers.py [--tap] [BUILD_DIR]      default build

The recorder's stages, lowest first (recorder/meson.build):

    common, format, record, symbols, unwind, proc, dump, daemon

and conf/ and triggers/, which only the daemon sees. For each stage from
record up, the compile command of one of its sources (BUILD_DIR's
compile_commands.json, so the include path the build really gives it)
compiles, with -fsyntax-only, a probe file outside the tree holding one
line: #include "<header>", for every header of every stage. A header of
the stage itself or of one below must compile (a header is
self-contained); one of a stage above must not: a backwards include
fails the build. Besides, no project source includes by a relative path
("../"), which would walk around the include path. Exit status 1 on any
violation, 2 without compile_commands.json.
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGES = ("common", "format", "record", "symbols", "unwind", "proc", "dump", "daemon")
# Folders outside recorder/ and the lowest stage that may see them.
OUTSIDE = {"conf": "daemon", "triggers": "daemon", "bpf": "record"}
RELATIVE = re.compile(r'^\s*#\s*include\s+"\.\./', re.M)


def rank(stage):
    return STAGES.index(stage)


def headers():
    """(header file name, the rank of the lowest stage allowed to see it)."""
    out = []
    for st in STAGES:
        d = os.path.join(ROOT, "recorder", st)
        out += [(f, rank(st)) for f in sorted(os.listdir(d)) if f.endswith(".h")]
    for folder, lowest in OUTSIDE.items():
        d = os.path.join(ROOT, folder)
        out += [(f, rank(lowest)) for f in sorted(os.listdir(d))
                if f.endswith(".h") and not f.endswith((".skel.h", ".bpf.h", "vmlinux.h"))]
    return out


def probe_command(entry, probe):
    """@entry's compile command, compiling @probe with -fsyntax-only instead."""
    args = shlex.split(entry["command"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MQ", "-MF", "-c"):
            skip = True
            continue
        if a in ("-MD", "-MMD") or a.startswith("-fdiagnostics-color"):
            continue
        out.append(a)
    return out + ["-fsyntax-only", probe]


def stage_commands(build):
    """One compile command per stage from record up: {stage: entry}."""
    path = os.path.join(build, "compile_commands.json")
    if not os.path.exists(path):
        return None
    cmds = {}
    for e in json.load(open(path)):
        f = os.path.relpath(os.path.join(e["directory"], e["file"]), ROOT)
        parts = f.split(os.sep)
        if len(parts) == 3 and parts[0] == "recorder" and parts[1] in STAGES[2:] \
                and f.endswith(".c") and parts[1] not in cmds:
            cmds[parts[1]] = e
    return cmds


def relative_includes():
    """Project sources that include by a relative path."""
    bad = []
    for d in ("recorder", "conf", "triggers", "tools"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, d)):
            for f in files:
                if f.endswith((".c", ".h")):
                    p = os.path.join(dirpath, f)
                    with open(p, errors="replace") as fh:
                        if RELATIVE.search(fh.read()):
                            bad.append(os.path.relpath(p, ROOT))
    return bad


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    tap = "--tap" in sys.argv[1:]
    build = os.path.abspath(args[0] if args else os.path.join(ROOT, "build"))
    cmds = stage_commands(build)
    if cmds is None:
        print(f"check-layers: no compile_commands.json in '{build}'", file=sys.stderr)
        return 2
    hdrs = headers()
    tmp = tempfile.mkdtemp(prefix="fr-layers-")
    jobs = []
    for st, entry in sorted(cmds.items(), key=lambda x: rank(x[0])):
        for h, lowest in hdrs:
            probe = os.path.join(tmp, f"{st}-{h}.c")
            with open(probe, "w") as f:
                f.write(f'#include "{h}"\n')
            jobs.append((st, h, lowest <= rank(st), entry["directory"], probe_command(entry, probe)))

    def run(job):
        st, h, want, cwd, cmd = job
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        return st, h, want, p.returncode == 0, p.stderr

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as ex:
        results = list(ex.map(run, jobs))
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)

    failed = 0
    n = 0
    missing = [st for st in STAGES[2:] if st not in cmds]
    checks = []
    checks.append((not missing, f"every stage from record up has a compile command "
                   f"({len(cmds)} stages)", f"missing: {missing}"))
    for st in sorted(cmds, key=rank):
        mine = [r for r in results if r[0] == st]
        wrong_in = [f"{h}: {err.strip().splitlines()[0] if err.strip() else '?'}"
                    for _, h, want, ok, err in mine if want and not ok]
        wrong_out = [h for _, h, want, ok, _ in mine if not want and ok]
        seen = sum(1 for r in mine if r[2])
        checks.append((not wrong_in, f"{st}: the {seen} headers of its own stage and those below "
                       f"compile from its include path", "; ".join(wrong_in[:5])))
        checks.append((not wrong_out, f"{st}: none of the {len(mine) - seen} headers of the "
                       f"stages above it compiles from its include path", ", ".join(wrong_out)))
    rel = relative_includes()
    checks.append((not rel, "no source includes by a relative path (\"../\")", ", ".join(rel)))
    for ok, name, why in checks:
        n += 1
        failed += not ok
        if tap:
            print(f"{'ok' if ok else 'not ok'} {n} - {name}")
            if not ok:
                print(f"#   {why}")
        elif not ok:
            print(f"check-layers: {name}: {why}")
    if tap:
        print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
