#!/usr/bin/env bash
# make bench-agent: run time of the examples without the agent, with
# allocation recording only (graph=none) and with a heap walk after every
# GC (graph=every); median of RUNS (5) wall-clock runs, ratios to the plain
# run, trace bytes per allocation.  The allocation-heavy example (churn) and
# MultiCache also run cost-breakdown variants:
#   bare     graph=none,depth=0,deaths=off   callback + tag + record only
#   +deaths  graph=none,depth=0              ObjectFree on
#   +sites   graph=none (depth 4)            GetStackTrace + site lookup
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
JAVA=${JAVA:-java}
RUNS=${RUNS:-5}
AGENT=$PWD/$BUILD/libheapfs-agent.so
CP=$PWD/$BUILD/examples/classes
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
JVM="-Xmx256m -XX:+UseG1GC"

# median wall time in ms of RUNS runs; the last run's trace stays in $OUT/t.htr
median_ms() {
	local times=()
	for _ in $(seq "$RUNS"); do
		local t0 t1
		t0=$(date +%s%N)
		"$JAVA" $JVM "$@" >/dev/null 2>"$OUT/err" || { cat "$OUT/err" >&2; return 1; }
		t1=$(date +%s%N)
		times+=($(( (t1 - t0) / 1000000 )))
	done
	printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"
}

row() { # name variant opts class args...
	local name=$1 variant=$2 opts=$3; shift 3
	local ms
	if [ "$opts" = "-" ]; then
		ms=$(median_ms -cp "$CP" "$@")
		BASE=$ms
		printf '%-11s %-9s %8d %7s %10s %12s\n' "$name" "$variant" "$ms" "1.0" "-" "-"
		return
	fi
	ms=$(median_ms "-agentpath:$AGENT=out=$OUT/t.htr,verbose,$opts" -cp "$CP" "$@")
	local ids bytes
	ids=$(sed -n 's/.*: \([0-9]*\) object ids.*/\1/p' "$OUT/err")
	bytes=$(stat -c %s "$OUT/t.htr")
	printf '%-11s %-9s %8d %7.1f %10d %12.1f\n' "$name" "$variant" "$ms" \
		"$(echo "$ms / $BASE" | bc -l)" "$ids" "$(echo "$bytes / $ids" | bc -l)"
}

echo "heapfs agent benchmark: median of $RUNS runs, $(nproc) cores, $("$JAVA" -version 2>&1 | head -n 1)"
printf '%-11s %-9s %8s %7s %10s %12s\n' example variant ms ratio objects bytes/object
bench() { # name class args...
	local name=$1; shift
	row "$name" plain - "$@"
	if [ "$name" = churn ] || [ "$name" = multicache ]; then
		row "$name" bare "graph=none,depth=0,deaths=off" "$@"
		row "$name" +deaths "graph=none,depth=0" "$@"
	fi
	row "$name" allocs "graph=none" "$@"
	row "$name" graphs "graph=every" "$@"
}
bench churn example.churn.Server 3000000 20000
bench multicache example.multicache.Main 20000 8
bench company example.company.Main 2000 3
bench buggystack example.buggystack.BuggyMain 20000
bench gcstress example.gcstress.Pipeline 200000 8
bench slowleak example.slowleak.Main 400000 20
echo "(the last run's statistics line: $(cat "$OUT/err"))"
