#!/bin/sh
# run-fuzz.sh - build the libFuzzer targets with clang (ASan + UBSan) and run
# each for a while over a copy of the committed corpus; print TAP.
#
#   tests/fuzz/run-fuzz.sh [BUILD_DIR]       default build-fuzz
#
#   FR_FUZZ_SECONDS   seconds per fuzzer (default 30); all run at once;
#                     0 only replays the corpus
#   CLANG             the compiler (default clang)
#
# The committed corpus (tests/fuzz/corpus/) is never written to: the fuzzers
# run over BUILD_DIR/corpus/, a fresh copy plus the seeds make_seeds writes
# with the current writer. A crash, leak, sanitizer report or timeout is a
# "not ok" line with the report; the input is kept as
# BUILD_DIR/crashes/<fuzzer>-crash-<sha1> (rerun: BUILD_DIR/<fuzzer> FILE).
# The TAP output also goes to BUILD_DIR/fuzz.tap. Exit status 1 on any
# failure, 0 otherwise (also when skipped: no clang or no fuzzer runtime).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
B=${1:-build-fuzz}
secs=${FR_FUZZ_SECONDS:-30}
cc=${CLANG:-clang}
fuzzers="fuzz_dump fuzz_config fuzz_elf fuzz_perfmap fuzz_cfi fuzz_pycode"

mkdir -p "$B" || exit 1
B=$(cd "$B" && pwd)
tap="$B/fuzz.tap"
: > "$tap"

out() {
	echo "$@"
	echo "$@" >> "$tap"
}

case $secs in
''|*[!0-9]*)
	out "1..1"
	out "not ok 1 - FR_FUZZ_SECONDS must be a number of seconds, not '$secs'"
	exit 2
	;;
esac

# Copy a log to the TAP stream as diagnostics.
diag_file() {
	sed -e 's/^/# /' "$1" | tee -a "$tap"
}

skip_all() {
	out "1..0 # SKIP $1"
	exit 0
}

command -v "$cc" >/dev/null 2>&1 ||
	skip_all "$cc is not installed (Debian: apt-get install clang)"
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);
int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' > "$B/probe.c"
"$cc" -fsanitize=fuzzer,address,undefined "$B/probe.c" -o "$B/probe" 2> "$B/probe.log" ||
	skip_all "$cc cannot link -fsanitize=fuzzer: no libFuzzer runtime (Debian 12: apt-get install libclang-rt-14-dev)"
rm -f "$B/probe" "$B/probe.c" "$B/probe.log"

# The quotes around fuzz are meant literally: FR_VERSION is a C string.
# shellcheck disable=SC2089
flags="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
	-fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE -DFR_VERSION=\"fuzz\"
	-Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
	-Irecorder/common -Irecorder/format -Irecorder/record -Irecorder/symbols -Irecorder/proc
	-Irecorder/dump -Irecorder/unwind -Ibpf -Iconf"
libs="-llz4 -luring -linih -ldw -lelf -llzma -liberty -lpthread -lm"
dump_src="recorder/format/format.c recorder/format/format_write.c recorder/format/format_read.c
	recorder/format/crc32c.c recorder/format/kvlist.c recorder/format/evtype.c recorder/format/lz4read.c recorder/format/json.c
	recorder/format/text.c recorder/common/hashmap.c"
write_src="recorder/dump/lz4out.c recorder/dump/writer.c"
# The sources each fuzzer is built from, besides tests/fuzz/NAME.c.
src_fuzz_dump=$dump_src
src_fuzz_config="conf/config.c conf/schema.c"
sym_src="recorder/symbols/symbols.c recorder/symbols/strpool.c recorder/symbols/procmaps.c
	recorder/symbols/kallsyms.c recorder/symbols/perfmap.c recorder/symbols/debuginfo.c recorder/symbols/demangle.c
	recorder/symbols/srcline.c recorder/symbols/untrusted.c recorder/common/hashmap.c"
src_fuzz_elf=$sym_src
src_fuzz_perfmap=$sym_src
src_fuzz_cfi="recorder/unwind/rows.c recorder/unwind/pydetect.c"
# The code-object reader, without its cache (pycache.c, which needs the unwinder).
src_fuzz_pycode="recorder/proc/pycode.c"

# shellcheck disable=SC2086
set -- $fuzzers
out "1..$#"
# libFuzzer takes -max_total_time=0 as "no limit"
limit="-max_total_time=$secs"
[ "$secs" -eq 0 ] && limit="-runs=0"

# Build the fuzzers and the seed writer, all at once.
for f in $fuzzers; do
	eval "src=\$src_$f"
	# shellcheck disable=SC2086,SC2090
	{
		"$cc" $flags -fsanitize=fuzzer "tests/fuzz/$f.c" $src $libs \
			-o "$B/$f" > "$B/build-$f.log" 2>&1
		echo $? > "$B/build-$f.rc"
	} &
done
# shellcheck disable=SC2086,SC2090
"$cc" $flags tests/fuzz/make_seeds.c $dump_src $write_src $libs -o "$B/make_seeds" \
	> "$B/build-make_seeds.log" 2>&1
seeds_rc=$?
wait

# A fresh working copy of the corpus, never the committed one.
rm -rf "$B/corpus" "$B/crashes"
mkdir -p "$B/crashes" "$B/corpus"
for c in dump config elf perfmap pycode; do
	cp -R "tests/fuzz/corpus/$c" "$B/corpus/$c" || exit 1
done
# Real binaries next to the crafted ones (tests/fuzz/make_elf_seeds.py).
for f in /usr/bin/true /usr/lib/x86_64-linux-gnu/libdl.so.2 /usr/lib/x86_64-linux-gnu/libpthread.so.0; do
	[ -f "$f" ] && cp "$f" "$B/corpus/elf/real-$(basename "$f")"
done
# DWARF for the source-line reader: a small program built here with -g, an
# inlined function in it (GCC's and, if there, clang's DWARF 5).
printf '%s\n' 'static inline __attribute__((always_inline)) int add(int x) { return x * 3 + 1; }' \
	'__attribute__((noinline)) int caller(int x) { return add(x) ^ 5; }' \
	'int main(int c, char **v) { (void)v; return caller(c); }' > "$B/dwarf-seed.c"
for c in gcc "$cc"; do
	command -v "$c" >/dev/null 2>&1 &&
		"$c" -O2 -g -o "$B/corpus/elf/real-dwarf-$(basename "$c")" "$B/dwarf-seed.c" 2>/dev/null
done
rm -f "$B/dwarf-seed.c"
# The CFI fuzzer starts from the same ELF files: crafted and real .eh_frame.
cp -R "$B/corpus/elf" "$B/corpus/cfi" || exit 1
mkdir -p "$B/corpus/dump/generated"
if [ "$seeds_rc" -ne 0 ]; then
	echo "# make_seeds did not build; fuzzing the committed seeds only:" | tee -a "$tap"
	diag_file "$B/build-make_seeds.log"
elif ! "$B/make_seeds" "$B/corpus/dump/generated" > "$B/make_seeds.log" 2>&1; then
	echo "# make_seeds failed; fuzzing the committed seeds only:" | tee -a "$tap"
	diag_file "$B/make_seeds.log"
fi

# Run every fuzzer that built, at the same time.
mkdir -p "$B/tmp"
for f in $fuzzers; do
	[ "$(cat "$B/build-$f.rc")" = 0 ] || continue
	dict=
	[ "$f" = fuzz_dump ] && dict=-dict=tests/fuzz/dump.dict
	[ "$f" = fuzz_config ] && dict=-dict=tests/fuzz/config.dict
	# shellcheck disable=SC2086
	TMPDIR="$B/tmp" "$B/$f" "$limit" -timeout=10 \
		-rss_limit_mb=2048 $dict -print_final_stats=1 \
		-artifact_prefix="$B/crashes/$f-" "$B/corpus/${f#fuzz_}" \
		> "$B/$f.log" 2>&1 &
	echo $! > "$B/$f.pid"
done

n=0
status=0
for f in $fuzzers; do
	n=$((n + 1))
	if [ "$(cat "$B/build-$f.rc")" != 0 ]; then
		out "not ok $n - $f: does not build with $cc"
		diag_file "$B/build-$f.log"
		status=1
		continue
	fi
	wait "$(cat "$B/$f.pid")"
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$B/$f.log")
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$B/$f.log")
	took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$B/$f.log")
	cov=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$B/$f.log" | tail -n 1 |
	      sed -e 's/^#[0-9]*[[:space:]]*DONE[[:space:]]*//' -e 's/ *exec.*//')
	crash=
	for a in "$B/crashes/$f-"*; do
		[ -e "$a" ] && crash=$a && break
	done
	if [ "$rc" -eq 0 ] && [ -z "$crash" ]; then
		out "ok $n - $f: ${runs:-?} runs in ${took:-$secs} s (${speed:-?} exec/s), no crash"
		echo "# $f: $cov" | tee -a "$tap"
	else
		out "not ok $n - $f: exit status $rc after ${runs:-?} runs${crash:+, input saved as $crash}"
		[ -n "$crash" ] && echo "# reproduce: $B/$f $crash" | tee -a "$tap"
		# the report from its first line, or the end of the log
		if grep -q -E '^==[0-9]+==ERROR|runtime error|^fuzz_' "$B/$f.log"; then
			sed -n '/^==[0-9]*==ERROR\|runtime error\|^fuzz_/,$p' "$B/$f.log" |
				head -n 60 > "$B/$f.report"
		else
			tail -n 60 "$B/$f.log" > "$B/$f.report"
		fi
		diag_file "$B/$f.report"
		status=1
	fi
done
rm -rf "$B/tmp"
exit $status
