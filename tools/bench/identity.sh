#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# identity.sh BUILD_DIR OUT_DIR - what a refactor must leave byte for byte:
# the same synthetic windows (fr-bench-ingest --dump, seeds 1 and 2)
# written through the real encoder, LZ4 writer and file writer, kept as
# the decompressed stream (header and every section) and as the reader's
# 'events --json' and 'processes --json'. Run it before and after a move
# and compare the two OUT_DIRs with 'diff -r'.
set -eu
build=$1
out=$2
mkdir -p "$out"
for seed in 1 2; do
	dir=$(mktemp -d)
	path=$("$build/tools/bench/fr-bench-ingest" --events 200000 --procs 64 \
		--churn 8 --seed "$seed" --dump "$dir" | sed -n 's/^dump=//p')
	lz4 -dqf "$path" "$out/seed$seed.stream"
	"$build/tools/flightrec" events --json "$path" >"$out/seed$seed.events.json"
	"$build/tools/flightrec" processes --json "$path" >"$out/seed$seed.processes.json"
	rm -rf "$dir"
done
