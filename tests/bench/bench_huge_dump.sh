#!/usr/bin/env bash
# bench_huge_dump.sh - a heap dump of at least 10 GB (issue 29 item 3):
# written directly in HPROF format by tests/tools/gen_hprof (no JVM on a
# 24 GB machine can hold a 10 GB heap and dump it beside heapfs), opened by
# heapfs, the files of the issue read from it, each checked against the
# figures the construction fixes (tests/integration/test_gen_hprof.sh), and
# each stage's time and peak memory printed with bytes per object.
#
#   make bench-huge              (BUILD=build)
#   HUGE_N=3000000 make bench-huge      a 1 GB version, for a quick run
#
# Knobs: HUGE_N entries (default 30,000,000: 60 M reachable objects, about
# 11.1 GB), HUGE_G unreachable objects (default 1,000,000), HUGE_DUMP (kept
# there for the next run: default /tmp/heapfs-huge-N-G.hprof), HUGE_TMP (the
# imported trace, removed at the end).  Needs the dump's size free on disk
# plus ~2%, and /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
GEN=$(dirname "$HEAPFS")/tools/gen_hprof
N=${HUGE_N:-30000000}
G=${HUGE_G:-1000000}
DUMP=${HUGE_DUMP:-/tmp/heapfs-huge-$N-$G.hprof}
WORK=$(mktemp -d "${HUGE_TMP:-/tmp}/heapfs-huge.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
for f in "$HEAPFS" "$GEN" /usr/bin/time; do
	[ -x "$f" ] || { echo "bench_huge_dump: $f missing (make BUILD=$BUILD build $BUILD/tools/gen_hprof)" >&2; exit 1; }
done

# run NAME CMD...: runs CMD under /usr/bin/time, output to $WORK/NAME.out;
# prints one table row (wall s, CPU s, peak RSS MB, bytes per object).
OBJECTS=$((2 * N + G + 3))
run() {
	local name=$1 f
	shift
	f=$WORK/$(tr -c 'A-Za-z0-9_.\n-' _ <<<"$name")
	/usr/bin/time -v -o "$f.time" "$@" >"$f.out" 2>"$f.err" ||
		{ echo "bench_huge_dump: $name failed:" >&2; tail -5 "$f.err" >&2; exit 1; }
	awk -v name="$name" -v objs="$OBJECTS" -F': ' '
		/Elapsed \(wall clock\)/ { n = split($2, p, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + p[i] }
		/User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident/ { r = $2 }
		END { printf "| %s | %.1f | %.1f | %.0f | %.1f |\n", name, w, u + s, r / 1024, r * 1024 / objs }' "$f.time"
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ! -s "$DUMP" ]; then
	echo "writing $DUMP (gen_hprof -n $N -g $G) ..."
	t0=$(date +%s)
	"$GEN" -n "$N" -g "$G" -o "$DUMP"
	echo "  written in $(($(date +%s) - t0)) s"
fi
size=$(stat -c %s "$DUMP")
echo "dump: $DUMP, $size bytes ($(awk -v s="$size" 'BEGIN { printf "%.2f", s / 2^30 }') GiB), $OBJECTS objects"
echo
echo "| stage | wall s | CPU s | peak RSS MB | bytes/object at peak |"
echo "|---|---|---|---|---|"
run "import to a trace" "$HEAPFS" import "$DUMP" -o "$WORK/huge.htr"
for f in gc/000/info gc/000/by-type/table gc/000/dominators/top suspects windows/leak; do
	run "trace: $f" "$HEAPFS" cat "$WORK/huge.htr" "$f"
done
run "dump: gc/000/by-type/table" "$HEAPFS" cat "$DUMP" gc/000/by-type/table
echo "trace: $(stat -c %s "$WORK/huge.htr") bytes; load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "the files against the construction (tests/integration/test_gen_hprof.sh):"
GEN_SAME=1 GEN_N=$N GEN_G=$G DUMP=$DUMP READ=$WORK/huge.htr HEAPFS=$HEAPFS bash tests/integration/test_gen_hprof.sh
# the dump opened directly gave the same table as the trace
cmp -s "$WORK/trace__gc_000_by-type_table.out" "$WORK/dump__gc_000_by-type_table.out" ||
	{ echo "FAIL: by-type/table differs between the dump and its imported trace" >&2; exit 1; }
echo "ok - by-type/table read from the dump equals the imported trace's"
