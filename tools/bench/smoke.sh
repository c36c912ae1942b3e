#!/bin/sh
# smoke.sh - the benchmark suite's quick mode as a TAP stream, for CI:
# one "ok" per benchmark that ran and produced its numbers, "not ok" when a
# benchmark crashed or produced no number. No assertions on timings.
#
#   tools/bench/smoke.sh [BUILD_DIR]     (default: build)
#
# Needs root and BPF (skips the whole plan where they are absent); writes no
# report (bench.py --quick without --out).
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP the benchmarks need root (BPF, perf -a)"
	exit 0
fi
if [ ! -e /sys/kernel/btf/vmlinux ]; then
	echo "1..0 # SKIP kernel has no BTF (/sys/kernel/btf/vmlinux)"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fr-bench-smoke.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
python3 tools/bench/bench.py --quick --build "$build" --json "$tmp/results.json" \
	>"$tmp/output" 2>&1
rc=$?
# The offline dump of the ingest feed (how refactors are shown to keep dumps).
mkdir -p "$tmp/dump"
"$build/tools/bench/fr-bench-ingest" --events 100000 --memory 32 --window 5 --dump "$tmp/dump" \
	>"$tmp/ingest-dump.out" 2>&1
dump=$(sed -n 's/^dump=//p' "$tmp/ingest-dump.out")
"$build/tools/flightrec" show --json "$dump" >"$tmp/ingest-dump.json" 2>>"$tmp/ingest-dump.out"
python3 - "$tmp/results.json" "$tmp/output" "$rc" "$tmp/ingest-dump.json" "$tmp/ingest-dump.out" <<'EOF'
import json
import sys

names = ["overhead", "dump", "memcap", "ingest", "startup", "stacks", "footprint", "memory",
         "stalls", "control"]
path, output, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    bench = json.load(open(path))["benchmarks"]
except (OSError, ValueError, KeyError):
    bench = {}
log = open(output, errors="replace").read().splitlines()
print(f"1..{len(names) + 1}")
failed = 0
for i, name in enumerate(names, 1):
    b = bench.get(name)
    nums = (b or {}).get("numbers") or {}
    good = bool(b and b.get("ok") and nums)
    print(f"{'ok' if good else 'not ok'} {i} - {name}: "
          f"{'produced its numbers' if good else 'crashed or produced no number'}")
    if good:
        for k, v in nums.items():
            if isinstance(v, float):
                v = f"{v:.6g}"
            print(f"#   {k} = {v}")
    else:
        failed += 1
        why = (b or {}).get("error") or f"no result (bench.py exit status {rc})"
        print(f"#   {why}")
try:
    summary = json.load(open(sys.argv[4]))
    samples = summary["counts"]["samples"]
except (OSError, ValueError, KeyError, TypeError):
    summary, samples = None, 0
good = bool(summary) and samples > 0
print(f"{'ok' if good else 'not ok'} {len(names) + 1} - ingest --dump: the synthetic window "
      f"written through the dumper reads back ({samples} samples)")
if not good:
    failed += 1
    for line in open(sys.argv[5], errors="replace").read().splitlines()[-10:]:
        print(f"#   {line}")
if failed:
    print("# bench.py output (last 40 lines):")
    for line in log[-40:]:
        print(f"#   {line}")
sys.exit(1 if failed else 0)
EOF
