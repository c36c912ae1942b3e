#!/bin/sh
# bootstrap.sh - set up a fresh Debian 12 machine (as root) and build.
#
#   tools/bootstrap.sh run    install what is missing, build, run flightrecd
#                             in the foreground with conf/flightrec.conf,
#                             dumps in ./dumps (kill -USR1 it for a dump)
#   tools/bootstrap.sh test   install what is missing, build, run every test
#                             (plain and ASan+UBSan builds)
#   tools/bootstrap.sh deps   only install what is missing
set -eu
cd "$(dirname "$0")/.."

DEPS="gcc libc6-dev make pkg-config meson ninja-build python3 clang bpftool
libbpf-dev liburing-dev liblz4-dev lz4 libinih-dev libelf-dev zlib1g-dev
libdw-dev liblzma-dev libiberty-dev libc6-dbg elfutils xz-utils binutils g++ perl gzip bzip2
python3-pygments
libclang-rt-14-dev
chromium fonts-dejavu-core
protobuf-c-compiler libprotobuf-c-dev protobuf-compiler
man-db groff-base linux-perf"

deps() {
	missing=""
	for p in $DEPS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		echo "bootstrap: installing$missing"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
	fi
}

build() {
	[ -f build/build.ninja ] || meson setup build --buildtype=debugoptimized
	ninja -C build
}

case "${1:-}" in
deps)
	deps
	;;
run)
	deps
	build
	mkdir -p dumps
	chmod go-w conf/flightrec.conf
	exec build/recorder/flightrecd --config conf/flightrec.conf --output-dir "$PWD/dumps"
	;;
test)
	deps
	exec tools/run-tests.sh
	;;
*)
	echo "usage: $0 run|test|deps" >&2
	exit 2
	;;
esac
