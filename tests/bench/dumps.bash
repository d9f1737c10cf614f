# dumps.bash - the heap dumps the bench scripts share (sourced by
# bench_hprof.sh and bench_suspects.sh, not run by itself).
#
# A dump is made once by examples/java/example/dumpgen/DumpGen and kept at
# its path for the next runs (making the big one takes ~15 s and 8 GB of
# Java heap).  Defaults:
#   BENCH_BIG     /tmp/heapfs-bench-1g.hprof   DUMP_BIG_PRODUCTS products:
#                 about 24 M objects, 1.1 GB
#   BENCH_SMALL   /tmp/heapfs-bench-73m.hprof  DUMP_SMALL_PRODUCTS products:
#                 about 1.5 M objects, 71 MB
BENCH_BIG=${BENCH_BIG:-/tmp/heapfs-bench-1g.hprof}
BENCH_SMALL=${BENCH_SMALL:-/tmp/heapfs-bench-73m.hprof}
# shellcheck disable=SC2034 # used by the scripts that source this file
DUMP_BIG_PRODUCTS=4000000
# shellcheck disable=SC2034
DUMP_SMALL_PRODUCTS=240000

# make_dump FILE PRODUCTS [CLASSES]: DumpGen's dump of PRODUCTS products at
# FILE unless FILE already exists.  CLASSES: a directory holding the
# compiled example.dumpgen.DumpGen (default $DUMPGEN_CLASSES; when neither
# is set, DumpGen is compiled into a temporary directory).  Returns 1 with
# a message on stderr on failure.
make_dump() {
	local file=$1 products=$2 classes=${3:-${DUMPGEN_CLASSES:-}} tmp='' t0 rc=0
	[ -s "$file" ] && return 0
	local root
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	if [ -z "$classes" ]; then
		tmp=$(mktemp -d /tmp/heapfs-dumpgen-XXXXXX) || return 1
		classes=$tmp
		javac -d "$classes" "$root/examples/java/example/dumpgen/DumpGen.java" ||
			{ echo "make_dump: javac DumpGen failed" >&2; rm -rf "$tmp"; return 1; }
	fi
	t0=$(date +%s.%N)
	echo "making $file (DumpGen $products products) ..."
	if ! java -Xmx8g -cp "$classes" example.dumpgen.DumpGen "${file%.hprof}" "$products" 1 >/dev/null; then
		echo "make_dump: DumpGen failed" >&2
		rc=1
	elif ! mv "${file%.hprof}-0.hprof" "$file"; then
		echo "make_dump: DumpGen wrote no ${file%.hprof}-0.hprof" >&2
		rc=1
	else
		echo "  made in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s: $(stat -c %s "$file") bytes"
	fi
	[ -n "$tmp" ] && rm -rf "$tmp"
	return "$rc"
}
