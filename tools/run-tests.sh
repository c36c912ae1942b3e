#!/bin/sh
# run-tests.sh - build twice (plain, and ASan+UBSan) and run the whole test
# suite in both, then the fuzzers (tests/fuzz/run-fuzz.sh); end with
# "N passed, N failed" over every TAP test case.
set -u
cd "$(dirname "$0")/.."

# The same as the meson test setup in meson.build; here for the fuzzers.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

status=0
[ -f build/build.ninja ] || meson setup build --buildtype=debugoptimized || exit 1
[ -f build-asan/build.ninja ] || meson setup build-asan --buildtype=debug \
	-Db_sanitize=address,undefined -Db_lundef=false || exit 1
ninja -C build || exit 1
ninja -C build-asan || exit 1

for b in build build-asan; do
	echo "=== meson test in $b ==="
	meson test -C "$b" --print-errorlogs || status=1
done
# libFuzzer targets (clang, ASan+UBSan); FR_FUZZ_SECONDS per fuzzer, both at once
echo "=== fuzzing in build-fuzz ==="
tests/fuzz/run-fuzz.sh build-fuzz || status=1
# Every benchmark in its quick mode: they must run and produce numbers (no timings judged).
echo "=== benchmark smoke test ==="
tools/bench/smoke.sh build > build/bench-smoke.tap || status=1
python3 tools/tap-summary.py build/meson-logs/testlog.json \
	build-asan/meson-logs/testlog.json build-fuzz/fuzz.tap build/bench-smoke.tap || status=1
exit $status
