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

# ---- mode=count: path counters (DuckTracks) against per-site counters --------
# ms and ratio to the plain run for: mode=full allocation recording
# (graph=none, depth=1), mode=count with path counters, mode=count with one
# counter per site; increments the path counters executed against those of
# per-site counting (= allocations at instrumented sites), and the saving.
count_row() { # name class args...
	local name=$1; shift
	local base full paths sites incr per_site
	base=$(median_ms -cp "$CP" "$@")
	full=$(median_ms "-agentpath:$AGENT=out=$OUT/t.htr,graph=none,deaths=off,depth=1" -cp "$CP" "$@")
	paths=$(median_ms "-agentpath:$AGENT=out=$OUT/t.htr,mode=count,counts=$OUT/c.tsv" -cp "$CP" "$@")
	incr=$(sed -n 's/^#increments\t//p' "$OUT/c.tsv")
	per_site=$(sed -n 's/^#per_site_increments\t//p' "$OUT/c.tsv")
	sites=$(median_ms "-agentpath:$AGENT=out=$OUT/t.htr,mode=count,counting=sites" -cp "$CP" "$@")
	printf '%-11s %7d %6d %5.2f %6d %5.2f %6d %5.2f %12d %12d %6.1f%%\n' "$name" "$base" "$full" \
		"$(echo "$full / $base" | bc -l)" "$paths" "$(echo "$paths / $base" | bc -l)" "$sites" \
		"$(echo "$sites / $base" | bc -l)" "$incr" "$per_site" \
		"$(echo "if ($per_site > 0) 100 * (1 - $incr / $per_site) else 0" | bc -l)"
}
echo
echo "mode=count: median of $RUNS runs (ms; x = ratio to the plain run)"
printf '%-11s %7s %6s %5s %6s %5s %6s %5s %12s %12s %7s\n' example plain full x paths x sites x \
	increments per-site saved
count_row churn example.churn.Server 3000000 20000
count_row multicache example.multicache.Main 20000 8
count_row company example.company.Main 2000 3
count_row buggystack example.buggystack.BuggyMain 20000
count_row gcstress example.gcstress.Pipeline 200000 8
count_row slowleak example.slowleak.Main 400000 20
# generated methods (tests/integration/gen_alloc_methods.c): branchy code, 50 rounds
if [ -x "$BUILD/tests/gen_alloc_methods" ] && command -v javac >/dev/null; then
	mkdir -p "$OUT/gen"
	"$BUILD/tests/gen_alloc_methods" 11 60 Gen >"$OUT/gen/Gen.java"
	javac -d "$OUT/gen" "$OUT/gen/Gen.java"
	CP_SAVED=$CP; CP=$OUT/gen
	count_row generated Gen 50
	CP=$CP_SAVED
fi
# a Debian application: Apache Ant building a small project
if command -v ant >/dev/null; then
	mkdir -p "$OUT/antp/src/p"
	printf 'package p;\npublic class A { public static void main(String[] a) { System.out.println(a.length); } }\n' >"$OUT/antp/src/p/A.java"
	printf '<project name="t" default="all"><target name="all"><mkdir dir="out"/><javac srcdir="src" destdir="out" includeantruntime="false"/><jar destfile="t.jar" basedir="out"/><copy todir="copy"><fileset dir="src"/></copy><delete dir="copy"/></target></project>\n' >"$OUT/antp/build.xml"
	ant_ms() { # median ms of ant runs with ANT_OPTS=$1
		local times=()
		for _ in $(seq "$RUNS"); do
			rm -rf "$OUT/antp/out" "$OUT/antp/t.jar"
			local t0 t1; t0=$(date +%s%N)
			(cd "$OUT/antp" && ANT_OPTS="$1" ant -q >/dev/null 2>&1)
			t1=$(date +%s%N); times+=($(( (t1 - t0) / 1000000 )))
		done
		printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"
	}
	base=$(ant_ms "")
	full=$(ant_ms "-agentpath:$AGENT=out=$OUT/t.htr,graph=none,deaths=off,depth=1")
	paths=$(ant_ms "-agentpath:$AGENT=out=$OUT/t.htr,mode=count,counts=$OUT/c.tsv")
	incr=$(sed -n 's/^#increments\t//p' "$OUT/c.tsv"); per_site=$(sed -n 's/^#per_site_increments\t//p' "$OUT/c.tsv")
	sites=$(ant_ms "-agentpath:$AGENT=out=$OUT/t.htr,mode=count,counting=sites")
	printf '%-11s %7d %6d %5.2f %6d %5.2f %6d %5.2f %12d %12d %6.1f%%\n' ant "$base" "$full" \
		"$(echo "$full / $base" | bc -l)" "$paths" "$(echo "$paths / $base" | bc -l)" "$sites" \
		"$(echo "$sites / $base" | bc -l)" "$incr" "$per_site" "$(echo "100 * (1 - $incr / $per_site)" | bc -l)"
fi
