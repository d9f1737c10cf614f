#!/usr/bin/env bash
# bench_suspects.sh - the report's figures: cold `heapfs cat TRACE suspects`
# (a fresh process each time: open, index, every analysis the report
# needs, render), with the default options.
#
#   bash tests/bench/bench_suspects.sh /abs/path/to/build/heapfs
#
# On two inputs:
#   - the synthetic multicache trace with 10^7 live objects at its last GC
#     and 1,000 GCs (`heapfs synth multicache -n 1430000 -g 1000`:
#     10,010,020 objects, every GC with its graph, ~4.6 GB), made once and
#     kept at BENCH_SUS_TRACE (default /tmp/heapfs-bench-sus-1e7x1000.htr);
#     goal <= 20 s;
#   - the >= 1 GB heap dump of bench_hprof.sh (tests/bench/dumps.bash:
#     BENCH_BIG, made once by DumpGen and shared), opened directly; goal
#     <= 30 s.
# Each figure is the median of BENCH_SUS_REPS runs (default 3), wall clock,
# with the process's CPU time (user + sys) and peak RSS from /usr/bin/time:
# the machine may be shared, and CPU time is what load does not inflate.
# The files stay in the page cache between runs (what "cold" leaves out is
# the disk, not heapfs's work).  The last run of each input repeats with
# HEAPFS_TIMING=1: the time of each part of the report (analyses/suspects_find.c).
#
# The trace's run is long with the defaults: reachable memory at every one
# of the 1,000 GCs (reachable_every=1, the paper's §3.2.1) rebuilds 1,000
# heap states of up to 10^7 objects.  BENCH_SUS_EVERY=K adds runs with
# -o reachable_every=K for comparison (default 100; 0: none).
# BENCH_SUS_SKIP_TRACE=1 / BENCH_SUS_SKIP_DUMP=1 leave one input out;
# BENCH_SUS_SKIP_DEFAULT=1 leaves out the trace's runs with the defaults
# (~500 s each on 2 shared cores) and keeps the reachable_every=K ones.
set -u -o pipefail

HEAPFS=${1:?usage: bench_suspects.sh /abs/path/to/heapfs}
HEAPFS=$(cd "$(dirname "$HEAPFS")" && pwd)/$(basename "$HEAPFS")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/dumps.bash
. "$ROOT/tests/bench/dumps.bash"   # BENCH_BIG, make_dump
TRACE=${BENCH_SUS_TRACE:-/tmp/heapfs-bench-sus-1e7x1000.htr}
N=1430000        # Products: 7 N + 20 = 10,010,020 objects at the last GC
GCS=1000
REPS=${BENCH_SUS_REPS:-3}
EVERY=${BENCH_SUS_EVERY:-100}
GOAL_TRACE=20
GOAL_DUMP=30
WORK=$(mktemp -d /tmp/heapfs-bench-sus-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

die() { echo "bench_suspects.sh: $*" >&2; exit 1; }
log() { echo "bench_suspects: $*" >&2; }
[ -x "$HEAPFS" ] || die "$HEAPFS is not an executable"
[ -x /usr/bin/time ] || die "/usr/bin/time is needed (apt-get install time)"
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# from /usr/bin/time -f '%e %U %S %M' output: wall, cpu (user + sys), peak RSS MB
time_fields() { awk 'END { printf "%s %.2f %.0f\n", $1, $2 + $3, $4 / 1024 }' "$1"; }
verdict() { awk -v v="$1" -v g="$2" 'BEGIN { print (v <= g ? "meets goal" : "MISSES goal") }'; }

# the trace: made once, checked to be the one described above
trace_ok() {
	local info
	info=$("$HEAPFS" cat "$TRACE" trace/info 2>/dev/null) || return 1
	awk -F'\t' -v n="$N" -v g="$GCS" '$1 == "scenario" && $2 == "multicache" { s = 1 }
		$1 == "scenario.objects" && $2 == n { o = 1 } $1 == "scenario.gcs" && $2 == g { c = 1 }
		END { exit !(s && o && c) }' <<<"$info"
}
make_trace() {
	trace_ok && return 0
	log "making $TRACE (synth multicache -n $N -g $GCS; a few minutes, ~4.6 GB) ..."
	local t0=$SECONDS
	"$HEAPFS" synth multicache -n "$N" -g "$GCS" -o "$TRACE" >/dev/null || die "synth failed"
	log "  made in $((SECONDS - t0)) s: $(stat -c %s "$TRACE") bytes"
}

# runs INPUT LABEL [heapfs cat options...]: REPS cold runs; prints one row
runs() {
	local input=$1 label=$2 r wall=() cpu=() rss=() f
	shift 2
	for r in $(seq "$REPS"); do
		log "$label: cat suspects ($r/$REPS)"
		/usr/bin/time -f '%e %U %S %M' -o "$WORK/time" \
			"$HEAPFS" cat "$@" "$input" suspects >"$WORK/out" 2>"$WORK/err" ||
			die "$label: heapfs cat suspects failed: $(tail -n 3 "$WORK/err")"
		read -r -a f <<<"$(time_fields "$WORK/time")"
		wall+=("${f[0]}"); cpu+=("${f[1]}"); rss+=("${f[2]}")
	done
	ROW_WALL=$(median "${wall[@]}")
	printf '%-44s %8s %8s %8s   %s\n' "$label" "$ROW_WALL" "$(median "${cpu[@]}")" \
		"$(median "${rss[@]}")" "runs ${wall[*]}"
}

# breakdown INPUT [options...]: one more run with HEAPFS_TIMING=1
breakdown() {
	local input=$1
	shift
	HEAPFS_TIMING=1 "$HEAPFS" cat "$@" "$input" suspects >/dev/null 2>"$WORK/timing" ||
		die "timing run failed"
	sed -n 's/^heapfs: suspects: /    /p' "$WORK/timing"
}

header() {
	printf '%-44s %8s %8s %8s\n' "cold heapfs cat INPUT suspects" "wall s" "cpu s" "rss MB"
}

echo "suspects: cold \`heapfs cat INPUT suspects\`, medians of $REPS runs; $(nproc) cores"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
header
if [ "${BENCH_SUS_SKIP_TRACE:-0}" != 1 ]; then
	make_trace
	if [ "${BENCH_SUS_SKIP_DEFAULT:-0}" != 1 ]; then
		runs "$TRACE" "trace 10^7 objects x $GCS GCs, defaults"
		echo "  goal <= $GOAL_TRACE s: $(verdict "$ROW_WALL" "$GOAL_TRACE")"
		breakdown "$TRACE"
	fi
	if [ "$EVERY" -gt 0 ]; then
		runs "$TRACE" "trace, -o reachable_every=$EVERY" -o "reachable_every=$EVERY"
		breakdown "$TRACE" -o "reachable_every=$EVERY"
	fi
fi
if [ "${BENCH_SUS_SKIP_DUMP:-0}" != 1 ]; then
	make_dump "$BENCH_BIG" "$DUMP_BIG_PRODUCTS" >&2 || die "no heap dump"
	runs "$BENCH_BIG" "heap dump $(($(stat -c %s "$BENCH_BIG") / 1000000)) MB, direct"
	echo "  goal <= $GOAL_DUMP s: $(verdict "$ROW_WALL" "$GOAL_DUMP")"
	breakdown "$BENCH_BIG"
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
