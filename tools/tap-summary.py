#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Count every TAP test case in meson's testlog.json files, and in plain
.tap files (one TAP stream each, e.g. build-fuzz/fuzz.tap), and print
"N passed, N failed" as the last line. A test program that failed without
reporting a failing case (a crash, a timeout, a .tap file without its plan
or with fewer results than planned) counts as one failure.

Each failing case is printed again at the end, with the diagnostic lines
that follow it (at most 12), so that the tail of a CI log, which is often
all that is kept, says what failed and why."""
import json
import os
import re
import sys


def tap_record(path, text):
    """A .tap file as a testlog.json line: OK when its plan is complete."""
    plan = re.search(r"^1\.\.(\d+)", text, re.M)
    n = len(re.findall(r"^(?:not )?ok \d+", text, re.M))
    good = plan is not None and int(plan.group(1)) == n
    return json.dumps({"name": os.path.basename(path), "stdout": text,
                       "result": "OK" if good else "FAIL"})

FAIL_LINES = 12


def failures(out):
    """Each "not ok" line of a TAP stream with the "#" lines after it."""
    found, lines = [], out.splitlines()
    for i, l in enumerate(lines):
        if not re.match(r"^not ok \d+", l):
            continue
        diag = []
        for d in lines[i + 1:]:
            if not d.startswith("#") or len(diag) == FAIL_LINES:
                break
            diag.append(d[:300])
        found.append([l[:300]] + diag)
    return found


passed = failed = skipped = 0
report = []
for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
        if path.endswith(".tap"):
            lines = [tap_record(path, "\n".join(lines))]
    except OSError as e:
        print(f"tap-summary: failed to read '{path}': {e.strerror}")
        failed += 1
        continue
    for line in lines:
        t = json.loads(line)
        out = t.get("stdout") or ""
        p = f = s = 0
        for l in out.splitlines():
            if re.match(r"^ok \d+", l):
                if "# SKIP" in l:
                    s += 1
                else:
                    p += 1
            elif re.match(r"^not ok \d+", l):
                f += 1
            elif re.match(r"^1\.\.0 # SKIP", l):
                s += 1
        if t.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL") and f == 0:
            f = 1
            report.append((path, t["name"], [f"# {t.get('result')} without a failing case; "
                                             "its last lines:"] +
                           [l[:300] for l in out.splitlines()[-FAIL_LINES:]]))
        report += [(path, t["name"], x) for x in failures(out)]
        print(f"{path.split('/')[0]:<11} {t['name']:<40} {p:5} passed {f:3} failed {s:3} skipped")
        passed += p
        failed += f
        skipped += s
for path, name, lines in report:
    print(f"--- failed in {path.split('/')[0]} {name}:")
    print("\n".join(lines))
print(f"{skipped} skipped")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
