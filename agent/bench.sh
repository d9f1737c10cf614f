#!/usr/bin/env bash
# make bench-agent: what recording costs, per example: run time without
# the agent (plain), with allocation recording (allocs: graph=none, every
# other option at its default), with a heap walk after every GC (graphs:
# graph=every) and the same without gcwait (nowait: GC calls do not
# wait for the walks, so a GC the next one follows before its walk gets
# none).  Median of RUNS (5) runs of wall-clock and of CPU time (user +
# system, all threads: less disturbed by other work on the machine than
# wall time), ratios to the plain run, trace bytes per object, heap walks
# (the last run's).
#
# Then where the time goes, on the allocation-heavy example (churn) and on
# MultiCache (two allocating threads): each row adds one step, so the
# difference to the row above is that step's cost (also per allocation).
#   noalloc   agent loaded, allocation events off   fixed costs (measurement
#   events    allocation callbacks return at once   only: HEAPFS_AGENT_ABLATE,
#   record    all but SetTag; no sites, no deaths   agent/agent.c)
#   +tags     SetTag (object ids)                   graph=none,depth=0,deaths=off
#   +deaths   ObjectFree                            graph=none,depth=0
#   +site 1   GetStackTrace, 1 frame                graph=none,depth=1
#   +site 2   2 frames (the default)                graph=none
#   +graphs   heap walk after every GC              graph=every
#   site 4    4 frames instead of 2 (step from +site 2)  graph=none,depth=4
# Last, churn with 20 M allocations instead of 3 M: the plain run's start-up
# (~0.1 s) is most of the 3 M run, so the ratio of a long run is larger
# (its events row: the JVM's part alone, step from plain).
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

median() { printf '%s\n' "$@" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"; }

# RUNS runs of java "$@" with the environment variable assignment $1 (or
# "-"): sets MS and CPU (medians, ms)
measure() {
	local env=$1; shift
	local walls=() cpus=() TIMEFORMAT='%R %U %S'
	for _ in $(seq "$RUNS"); do
		{ time env ${env/#-/} "$JAVA" $JVM "$@" >/dev/null 2>"$OUT/err"; } 2>"$OUT/time" ||
			{ cat "$OUT/err" >&2; return 1; }
		walls+=("$(awk '{ printf "%d", $1 * 1000 }' "$OUT/time")")
		cpus+=("$(awk '{ printf "%d", ($2 + $3) * 1000 }' "$OUT/time")")
	done
	MS=$(median "${walls[@]}")
	CPU=$(median "${cpus[@]}")
}

ratio() { echo "$1 / $2" | bc -l; }

# name variant env opts|- class args...: one table row; BASE_MS/BASE_CPU
# are set by the plain row, PREV_CPU by every row; NOBJ[name] (objects of
# the allocs row, which comes first) divides the steps
declare -A NOBJ
row() {
	local name=$1 variant=$2 env=$3 opts=$4; shift 4
	if [ "$opts" = "-" ]; then
		measure "$env" -cp "$CP" "$@"
		BASE_MS=$MS BASE_CPU=$CPU PREV_CPU=$CPU
		printf '%-11s %-9s %7d %6.1f %7d %6.1f %10s %9s %9s %5s\n' "$name" "$variant" "$MS" 1 "$CPU" 1 - - - -
		return
	fi
	measure "$env" "-agentpath:$AGENT=out=$OUT/t.htr,verbose,$opts" -cp "$CP" "$@"
	local ids bytes step walks
	ids=$(sed -n 's/.*: \([0-9]*\) object ids.*/\1/p' "$OUT/err")
	walks=$(sed -n 's/.* \([0-9]*\) heap walks.*/\1/p' "$OUT/err")
	bytes=$(stat -c %s "$OUT/t.htr")
	[ "$variant" = allocs ] && NOBJ[$name]=$ids
	step=-
	[ -n "${NOBJ[$name]:-}" ] && step=$(printf '%.2f' "$(echo "1000 * ($CPU - $PREV_CPU) / ${NOBJ[$name]}" | bc -l)")
	PREV_CPU=$CPU
	printf '%-11s %-9s %7d %6.1f %7d %6.1f %10s %9s %9s %5s\n' "$name" "$variant" "$MS" \
		"$(ratio "$MS" "$BASE_MS")" "$CPU" "$(ratio "$CPU" "$BASE_CPU")" "${ids:--}" \
		"$( [ "${ids:-0}" -gt 0 ] && printf '%.1f' "$(ratio "$bytes" "$ids")" || echo -)" "$step" "${walks:--}"
}

header() {
	printf '%-11s %-9s %7s %6s %7s %6s %10s %9s %9s %5s\n' example variant wall_ms x cpu_ms x objects \
		bytes/obj step_us walks
}

echo "heapfs agent benchmark: median of $RUNS runs, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)," \
	"$("$JAVA" -version 2>&1 | head -n 1)"
# BENCH_ONLY=count: only the mode=count table at the end; full: only the next
if [ "${BENCH_ONLY:-}" != count ]; then
echo "(x: ratio to plain; step_us: CPU of this row minus the row above, per object the allocs row recorded)"
header
bench() { # name class args...
	local name=$1; shift
	row "$name" plain - - "$@"
	row "$name" allocs - "graph=none" "$@"
	local allocs_cpu=$CPU
	row "$name" graphs - "graph=every" "$@"
	PREV_CPU=$allocs_cpu # nowait's step: from allocs, as graphs'
	row "$name" nowait - "graph=every,gcwait=off" "$@"
}
bench churn example.churn.Server 3000000 20000
bench multicache example.multicache.Main 20000 8
bench company example.company.Main 2000 3
bench buggystack example.buggystack.BuggyMain 20000
bench gcstress example.gcstress.Pipeline 200000 8
bench slowleak example.slowleak.Main 400000 20
echo "(the last run's statistics line: $(cat "$OUT/err"))"
# BENCH_ONLY=full: only this first table
[ "${BENCH_ONLY:-}" = full ] && exit 0

echo
echo "where the time goes: each row adds one step to the row above"
header
breakdown() { # name class args...
	local name=$1; shift
	row "$name" plain - - "$@"
	row "$name" noalloc HEAPFS_AGENT_ABLATE=noalloc "graph=none,depth=0,deaths=off" "$@"
	row "$name" events HEAPFS_AGENT_ABLATE=events "graph=none,depth=0,deaths=off" "$@"
	row "$name" record HEAPFS_AGENT_ABLATE=notag "graph=none,depth=0,deaths=off" "$@"
	row "$name" +tags - "graph=none,depth=0,deaths=off" "$@"
	row "$name" +deaths - "graph=none,depth=0" "$@"
	row "$name" "+site 1" - "graph=none,depth=1" "$@"
	row "$name" "+site 2" - "graph=none" "$@"
	local site2=$CPU
	row "$name" +graphs - "graph=every" "$@"
	PREV_CPU=$site2 # depth 4 instead of the default 2: step from "+site 2"
	row "$name" "site 4" - "graph=none,depth=4" "$@"
}
breakdown churn example.churn.Server 3000000 20000
breakdown multicache example.multicache.Main 20000 8

echo
echo "a longer churn run (20 M allocations): start-up no longer dominates the plain run"
header
row churn-20M plain - - example.churn.Server 20000000 20000
row churn-20M allocs - "graph=none" example.churn.Server 20000000 20000
PREV_CPU=$BASE_CPU
row churn-20M events HEAPFS_AGENT_ABLATE=events "graph=none,depth=0,deaths=off" example.churn.Server 20000000 20000
fi

# ---- mode=count: path counters (DuckTracks) against per-site counters --------
# ms and ratio to the plain run for: mode=full allocation recording
# (graph=none, depth=1), mode=count with path counters, mode=count with one
# counter per site, path counters with atomic=on; increments the path
# counters executed against those of per-site counting (= allocations at
# instrumented sites), and the saving.
# interleaved_ms VAR=ARGS... : the variants run in turns (one run of each per
# round, RUNS rounds) so that a load change on the machine hits them alike;
# sets ms_<VAR> to each variant's median.  Each variant runs as
# "$RUN_VARIANT ARGS" (default java_args: ARGS are java arguments with '|'
# between them).
interleaved_ms() {
	local -A t
	local v t0 t1
	for _ in $(seq "$RUNS"); do
		for v in "$@"; do
			local key=${v%%=*}
			t0=$(date +%s%N)
			"${RUN_VARIANT:-java_args}" "${v#*=}" || return 1
			t1=$(date +%s%N)
			t[$key]="${t[$key]:-} $(( (t1 - t0) / 1000000 ))"
		done
	done
	for v in "$@"; do
		local key=${v%%=*}
		printf -v "ms_$key" '%s' "$(median ${t[$key]})"
	done
}
# java_args ARGS: java with the '|'-separated arguments (empty ones dropped)
java_args() {
	local a all args=()
	IFS='|' read -r -a all <<<"$1"
	for a in "${all[@]}"; do [ -n "$a" ] && args+=("$a"); done
	"$JAVA" $JVM "${args[@]}" >/dev/null 2>"$OUT/err" || { cat "$OUT/err" >&2; return 1; }
}
# The variants of a mode=count row, as NAME=JVM option ("" for the plain run)
COUNT_VARIANTS=("base=" "full=-agentpath:$AGENT=out=$OUT/t.htr,graph=none,deaths=off,depth=1"
	"paths=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,counts=$OUT/c.tsv"
	"sites=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,counting=sites"
	"atomic=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,atomic=on"
	"inline=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,inline=on,counts=$OUT/ci.tsv")
# count_row_print NAME: the row from ms_<variant> and the paths and inline
# runs' counts
count_row_print() {
	local base=$ms_base full=$ms_full paths=$ms_paths sites=$ms_sites atomic=$ms_atomic inline=$ms_inline
	local incr per_site inl
	incr=$(sed -n 's/^#increments\t//p' "$OUT/c.tsv")
	inl=$(sed -n 's/^#increments\t//p' "$OUT/ci.tsv")
	per_site=$(sed -n 's/^#per_site_increments\t//p' "$OUT/c.tsv")
	printf '%-11s %7d %6d %5.2f %6d %5.2f %6d %5.2f %6d %5.2f %6d %5.2f %10d %10d %6.1f%% %10d %6.1f%%\n' "$1" \
		"$base" "$full" "$(echo "$full / $base" | bc -l)" "$paths" "$(echo "$paths / $base" | bc -l)" "$sites" \
		"$(echo "$sites / $base" | bc -l)" "$atomic" "$(echo "$atomic / $base" | bc -l)" "$inline" \
		"$(echo "$inline / $base" | bc -l)" "$incr" "$per_site" \
		"$(echo "if ($per_site > 0) 100 * (1 - $incr / $per_site) else 0" | bc -l)" "$inl" \
		"$(echo "if ($per_site > 0) 100 * (1 - $inl / $per_site) else 0" | bc -l)"
}
count_row() { # name class args...
	local name=$1 v cls variants=()
	shift
	cls=$(printf '%s|' -cp "$CP" "$@")
	cls=${cls%|}
	for v in "${COUNT_VARIANTS[@]}"; do variants+=("$v|$cls"); done
	interleaved_ms "${variants[@]}" && count_row_print "$name"
}
echo
echo "mode=count: median of $RUNS runs, the variants of a row in turns (ms; x = ratio to the plain run)"
printf '%-11s %7s %6s %5s %6s %5s %6s %5s %6s %5s %6s %5s %10s %10s %7s %10s %7s\n' example plain full x paths x \
	sites x atomic x inline x increments per-site saved inline saved
# start-up alone: company with 10 employees and no GC (the agent's fixed costs)
count_row start-up example.company.Main 10 0
count_row churn example.churn.Server 3000000 20000
count_row multicache example.multicache.Main 20000 8
count_row company example.company.Main 2000 3
count_row buggystack example.buggystack.BuggyMain 20000
count_row gcstress example.gcstress.Pipeline 200000 8
count_row slowleak example.slowleak.Main 400000 20
count_row threads example.threads.Main 4 500000
# generated methods (tests/integration/gen_alloc_methods.c): branchy code, 50 rounds
if [ -x "$BUILD/tests/gen_alloc_methods" ] && command -v javac >/dev/null; then
	mkdir -p "$OUT/gen"
	"$BUILD/tests/gen_alloc_methods" 11 60 Gen >"$OUT/gen/Gen.java"
	javac -d "$OUT/gen" "$OUT/gen/Gen.java"
	CP_SAVED=$CP; CP=$OUT/gen
	count_row generated Gen 50
	# the same kind of methods throwing and catching mid-path (`exc`)
	mkdir -p "$OUT/genx"
	"$BUILD/tests/gen_alloc_methods" 1 30 Gen exc >"$OUT/genx/Gen.java"
	javac -d "$OUT/genx" "$OUT/genx/Gen.java"
	CP=$OUT/genx
	count_row gen-throws Gen 20
	# what the exception corrections cost there: handlers in the bytecode
	# (the default), the Exception event's capability and one stack walk
	# per exception (events), none (off)
	interleaved_ms "off=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,exceptions=off|-cp|$CP|Gen|20" \
		"bytecode=-agentpath:$AGENT=out=$OUT/t.htr,mode=count|-cp|$CP|Gen|20" \
		"events=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,exceptions=events,verbose|-cp|$CP|Gen|20"
	echo "  (gen-throws: exceptions=bytecode $ms_bytecode ms, exceptions=events $ms_events ms, exceptions=off $ms_off ms;" \
		"$(sed -n 's/.*increments[^;]*; \([0-9]* exceptions, [0-9]* frames corrected\).*/\1/p' "$OUT/err"))"
	# counted loops (loops=on, "mode=count" 10): the generated for loops
	CP=$OUT/gen
	interleaved_ms "lo=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,counts=$OUT/lo.tsv|-cp|$CP|Gen|50" \
		"ln=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,loops=on,counts=$OUT/ln.tsv|-cp|$CP|Gen|50"
	echo "  (generated, loops=on: $ms_ln ms, $(sed -n 's/^#increments\t//p' "$OUT/ln.tsv") increments;" \
		"loops=off: $ms_lo ms, $(sed -n 's/^#increments\t//p' "$OUT/lo.tsv"))"
	CP=$CP_SAVED
fi
# app_row NAME DIR OPTS_VAR COMMAND: the row of an application that a
# script starts, taking its JVM options from the environment variable
# OPTS_VAR (ANT_OPTS, MAVEN_OPTS); COMMAND runs in DIR under bash.
app_row() {
	APP_DIR=$2 APP_VAR=$3 APP_CMD=$4 RUN_VARIANT=app_args interleaved_ms "${COUNT_VARIANTS[@]}" &&
		count_row_print "$1"
}
# app_args OPTS: app_row's command with OPTS in its variable
app_args() {
	(cd "$APP_DIR" && env "$APP_VAR=$1" bash -c "$APP_CMD" >/dev/null 2>&1)
}
# a Debian application: Apache Ant building a small project
if command -v ant >/dev/null; then
	mkdir -p "$OUT/antp/src/p"
	printf 'package p;\npublic class A { public static void main(String[] a) { System.out.println(a.length); } }\n' >"$OUT/antp/src/p/A.java"
	printf '<project name="t" default="all"><target name="all"><mkdir dir="out"/><javac srcdir="src" destdir="out" includeantruntime="false"/><jar destfile="t.jar" basedir="out"/><copy todir="copy"><fileset dir="src"/></copy><delete dir="copy"/></target></project>\n' >"$OUT/antp/build.xml"
	app_row ant "$OUT/antp" ANT_OPTS "rm -rf out t.jar && ant -q"
fi
# Apache Maven validating a one-line POM offline (as in test_agent_count.sh)
if command -v mvn >/dev/null; then
	mkdir -p "$OUT/mvnp"
	printf '<project><modelVersion>4.0.0</modelVersion><groupId>t</groupId><artifactId>t</artifactId><version>1</version><packaging>pom</packaging></project>\n' >"$OUT/mvnp/pom.xml"
	app_row maven "$OUT/mvnp" MAVEN_OPTS "mvn -o -q validate"
fi
# another Debian application: ANTLR 3 (package antlr3) generating the lexer
# and parser of tests/integration/MiniLang.g (as in test_agent_count.sh)
if [ -r /usr/share/java/antlr3.jar ] && [ -r /usr/share/java/stringtemplate4.jar ]; then
	CP_SAVED=$CP; CP=/usr/share/java/stringtemplate4.jar:/usr/share/java/antlr3.jar:/usr/share/java/antlr3-runtime.jar
	count_row antlr3 org.antlr.Tool -fo "$OUT/antlr3" tests/integration/MiniLang.g
	# hot=20: re-planned from measured frequencies, demoted to per-site
	# counters where paths lose; what the retransformations cost
	tool="|-cp|$CP|org.antlr.Tool|-fo|$OUT/antlr3|tests/integration/MiniLang.g"
	# profile=FILE: the plans hot=N would make, measured by two earlier
	# runs (the second adds one counter per site where the first run's
	# static counters lost and could not be measured), used at load; with
	# inline=on, its clone links (the second run links callers to clones
	# the first found too late)
	rm -f "$OUT/p.prof" "$OUT/pi.prof" "$OUT/pl.prof" "$OUT/pn.prof"
	for i in 1 2; do
		"$JAVA" "-agentpath:$AGENT=out=$OUT/t.htr,mode=count,inline=on,loops=on,profile=$OUT/pn.prof" -cp "$CP" \
			org.antlr.Tool -fo "$OUT/antlr3" tests/integration/MiniLang.g >/dev/null 2>&1
		"$JAVA" "-agentpath:$AGENT=out=$OUT/t.htr,mode=count,inline=on,loops=on,hot=20,profile=$OUT/pl.prof" -cp "$CP" \
			org.antlr.Tool -fo "$OUT/antlr3" tests/integration/MiniLang.g >/dev/null 2>&1
		"$JAVA" "-agentpath:$AGENT=out=$OUT/t.htr,mode=count,profile=$OUT/p.prof" -cp "$CP" org.antlr.Tool \
			-fo "$OUT/antlr3" tests/integration/MiniLang.g >/dev/null 2>&1
		"$JAVA" "-agentpath:$AGENT=out=$OUT/t.htr,mode=count,inline=on,profile=$OUT/pi.prof" -cp "$CP" org.antlr.Tool \
			-fo "$OUT/antlr3" tests/integration/MiniLang.g >/dev/null 2>&1
	done
	cp "$OUT/pi.prof" "$OUT/ph.prof" # hot=20 adds to its own copy
	interleaved_ms "plain=$tool" \
		"h0=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,counts=$OUT/h0.tsv$tool" \
		"h20=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,hot=20,counts=$OUT/h20.tsv$tool" \
		"h20i=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,hot=20,inline=on,counts=$OUT/h20i.tsv$tool" \
		"pf=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,profile=$OUT/p.prof,counts=$OUT/pf.tsv$tool" \
		"pfi=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,inline=on,profile=$OUT/pi.prof,counts=$OUT/pfi.tsv$tool" \
		"pfh=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,inline=on,hot=20,profile=$OUT/ph.prof,counts=$OUT/pfh.tsv$tool" \
		"pfl=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,inline=on,loops=on,hot=20,profile=$OUT/pl.prof,counts=$OUT/pfl.tsv$tool" \
		"pfn=-agentpath:$AGENT=out=$OUT/t.htr,mode=count,inline=on,loops=on,profile=$OUT/pn.prof,counts=$OUT/pfn.tsv$tool"
	echo "  (antlr3 hot=20: $ms_h20 ms, $(sed -n 's/^#increments\t//p' "$OUT/h20.tsv") increments;" \
		"hot=20,inline=on: $ms_h20i ms, $(sed -n 's/^#increments\t//p' "$OUT/h20i.tsv") increments;" \
		"profile: $ms_pf ms, $(sed -n 's/^#increments\t//p' "$OUT/pf.tsv") increments;" \
		"profile,inline=on: $ms_pfi ms, $(sed -n 's/^#increments\t//p' "$OUT/pfi.tsv") increments;" \
		"profile,inline=on,hot=20: $ms_pfh ms, $(sed -n 's/^#increments\t//p' "$OUT/pfh.tsv") increments;" \
		"the same with loops=on (counting clones): $ms_pfl ms, $(sed -n 's/^#increments\t//p' "$OUT/pfl.tsv") increments;" \
		"profile,inline=on,loops=on without hot=N (clone links, no retransformation): $ms_pfn ms, $(sed -n 's/^#increments\t//p' "$OUT/pfn.tsv") increments;" \
		"hot=0: $ms_h0 ms, $(sed -n 's/^#increments\t//p' "$OUT/h0.tsv") increments;" \
		"per-site $(sed -n 's/^#per_site_increments\t//p' "$OUT/h0.tsv"); no agent: $ms_plain ms)"
	# the instrumenter alone on every class of the three jars (the part of
	# the load-time cost that is ours, without the JVM)
	mkdir -p "$OUT/antlr3-classes"
	for j in ${CP//:/ }; do
		(cd "$OUT/antlr3-classes" && "$(dirname "$JAVA")/jar" xf "$j")
	done
	"$BUILD/tests/bench_instrument" -r "$RUNS" "$OUT/antlr3-classes" >"$OUT/bi" &&
		echo "  (instrumenter alone on ANTLR 3's jars: $(sed -n 's/^classes\t\([0-9]*\) (\([0-9]*\) bytes.*/\1 classes, \2 bytes/p' "$OUT/bi")," \
			"median $(sed -n 's/^median_ms\t//p' "$OUT/bi") ms, $(sed -n 's/^us_per_class\t//p' "$OUT/bi") us per class," \
			"$(sed -n 's/^mb_per_s\t//p' "$OUT/bi") MB/s)"
	CP=$CP_SAVED
fi
