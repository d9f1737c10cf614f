#!/usr/bin/env bash
# bench_closures.sh - the closures' figures against the goals, on a synthetic
# multicache trace whose last GC has >= 10^7 live objects (BENCH_N Products,
# 7 objects each plus 20: -n 1430000 gives 10,010,020).
#
#   bash tests/bench/bench_closures.sh /abs/path/to/build/heapfs
#   BENCH_N=100000 bash tests/bench/bench_closures.sh build/heapfs   (quick)
#   BENCH_TRACE=/tmp/big.htr ...   (reuse a trace instead of writing one)
#
# Also every type's closures at once (analyses/groupclo.c: allgroups_*,
# against the one-closure-per-type loop; allgroups_equal must be 1).
#
# Goals: dominator tree <= 3 s; GC closure >= 20 M closure
# objects/s; gc/latest/by-type/table with deep and retained sizes for every
# type <= 10 s (figures: with the heap state built, and from a fresh open
# including the reconstruction).  Exit 1 if a goal is missed.
set -u -o pipefail

HEAPFS=${1:?usage: bench_closures.sh /abs/path/to/heapfs}
HEAPFS=$(cd "$(dirname "$HEAPFS")" && pwd)/$(basename "$HEAPFS")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
N=${BENCH_N:-1430000}
CC=${CC:-cc}
WORK=$(mktemp -d /tmp/heapfs-bench-clo-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
die() { echo "bench_closures.sh: $*" >&2; exit 1; }
# BENCH_LIB: the library to link (default build/libheapfs.a; another
# BUILD directory's when that is what was built)
LIB=${BENCH_LIB:-$ROOT/build/libheapfs.a}
[ -f "$LIB" ] || die "$LIB missing (make build first)"

"$CC" -std=gnu11 -O2 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$ROOT" $(pkg-config --cflags fuse3) \
	-o "$WORK/bench_closures" "$ROOT/tests/bench/bench_closures.c" "$LIB" \
	-lfuse3 -lpthread -lzstd -lm || die "cannot build tests/bench/bench_closures.c"

TRACE=${BENCH_TRACE:-}
if [ -z "$TRACE" ]; then
	TRACE="$WORK/multicache.htr"
	echo "writing multicache -n $N ..."
	"$HEAPFS" synth multicache -n "$N" -o "$TRACE" >/dev/null || die "synth failed"
fi
"$WORK/bench_closures" "$TRACE" > "$WORK/out" || die "bench_closures failed"
cat "$WORK/out"

val() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$WORK/out"; }
status=0
check() { # name value op goal
	if awk -v v="$2" -v g="$4" -v op="$3" 'BEGIN { exit !(op == "<=" ? v <= g : v >= g) }'; then
		printf '%-34s %14s  goal %s %s  ok\n' "$1" "$2" "$3" "$4"
	else
		printf '%-34s %14s  goal %s %s  MISSED\n' "$1" "$2" "$3" "$4"
		status=1
	fi
}
echo
echo "objects at the last GC: $(val objects)"
check "dominator tree (s)" "$(val dominators_s)" "<=" 3
check "GC closure (objects/s)" "$(val closure_objects_per_s)" ">=" 20000000
check "every type's closures at once agree" "$(val allgroups_equal)" ">=" 1
check "the same on 2 threads" "$(val allgroups_threads_2_equal)" ">=" 1
check "by-type/table, state built (s)" "$(val by_type_table_s)" "<=" 10
check "by-type/table, fresh open (s)" "$(val by_type_table_fresh_s)" "<=" 10
exit $status
