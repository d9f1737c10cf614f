#!/usr/bin/env bash
# mode=count (DuckTracks path counters) against mode=full: on single-threaded
# runs where no exception unwinds an instrumented method, the per-site
# allocation counts of both must be equal.  Every instrumented class runs
# under -Xverify:all.  Programs: the single-threaded examples and generated
# methods (tests/integration/gen_alloc_methods.c: nested branches, loops,
# switches, early returns, try/finally) compiled with javac.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
${MAKE:-make} -s BUILD="$BUILD" agent "$BUILD/tests/agent_count" examples-classes "$BUILD/heapfs" >/dev/null
AGENT=$PWD/$BUILD/libheapfs-agent.so
COUNT=$PWD/$BUILD/tests/agent_count
CP=$PWD/$BUILD/examples/classes
JAVA=${JAVA:-java}
JAVAC=${JAVAC:-javac}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Per-site counts "Class.method:line<TAB>type<TAB>count" of sites whose name
# starts with $2, from mode=count's counts file ...
count_sites() {
	awk -F'\t' -v p="$2" '!/^#/ && index($1, p) == 1 { n[$1 "\t" $2] += $3 }
		END { for (s in n) if (n[s]) print s "\t" n[s] }' "$1" | sort
}
# ... and from a mode=full trace (allocating frame), for the (site, type)
# pairs of the first: the JVM also allocates at a site while it resolves
# the instruction the first time (class-name Strings, byte[], Object[]),
# objects of other types that no bytecode counter can see.
full_sites() {
	"$COUNT" "$1" | awk -F'\t' -v p="$2" '$1 == "type-site" && index($3, p) == 1 { n[$3 "\t" $2] += $4 }
		END { for (s in n) print s "\t" n[s] }' | sort >"$TMP/full-all.tsv"
	awk -F'\t' 'NR == FNR { want[$1 "\t" $2] = 1; next } ($1 "\t" $2) in want' "$3" "$TMP/full-all.tsv"
}

# compare NAME PREFIX CP CLASS ARGS...
compare() {
	local name=$1 prefix=$2 cp=$3; shift 3
	"$JAVA" -Xverify:all -Xmx256m "-agentpath:$AGENT=out=$TMP/c.htr,mode=count,counts=$TMP/c.tsv,verbose" \
		-cp "$cp" "$@" >"$TMP/c.out" 2>"$TMP/c.err" || { cat "$TMP/c.err"; fail "$name: mode=count run"; }
	grep -q "VerifyError" "$TMP/c.err" && fail "$name: VerifyError"
	"$JAVA" -XX:-DoEscapeAnalysis -Xmx256m "-agentpath:$AGENT=out=$TMP/f.htr,graph=none,deaths=off,depth=1" \
		-cp "$cp" "$@" >"$TMP/f.out" 2>"$TMP/f.err" || { cat "$TMP/f.err"; fail "$name: mode=full run"; }
	cmp -s "$TMP/c.out" "$TMP/f.out" || fail "$name: the program printed different output under the two modes"
	count_sites "$TMP/c.tsv" "$prefix" >"$TMP/count.tsv"
	full_sites "$TMP/f.htr" "$prefix" "$TMP/count.tsv" >"$TMP/full.tsv"
	[ -s "$TMP/count.tsv" ] || fail "$name: no allocation sites counted"
	# allocations mode=full attributes to these methods that no allocating
	# instruction made (resolution, invokedynamic linkage): reported only
	local other
	other=$(awk -F'\t' 'NR == FNR { have[$1 "\t" $2] = 1; next } !(($1 "\t" $2) in have) { n += $3 } END { print n + 0 }' \
		"$TMP/count.tsv" "$TMP/full-all.tsv")
	if ! diff "$TMP/full.tsv" "$TMP/count.tsv" >"$TMP/diff"; then
		head -n 20 "$TMP/diff" >&2
		fail "$name: per-site counts differ (< full, > count)"
	fi
	# the trace carries the same counts: allocs/ in the tree (mode=count)
	"$HEAPFS" cat "$TMP/c.htr" allocs/by-site | awk -F'\t' -v p="$prefix" 'NR > 1 && index($1, p) == 1 { n[$1 "\t" $2] += $3 }
		END { for (s in n) print s "\t" n[s] }' | sort >"$TMP/tree.tsv"
	cmp -s "$TMP/tree.tsv" "$TMP/count.tsv" || { diff "$TMP/tree.tsv" "$TMP/count.tsv" | head >&2; fail "$name: allocs/by-site differs from counts="; }
	"$HEAPFS" cat "$TMP/c.htr" allocs/stats >"$TMP/stats"
	[ "$(awk -F'\t' '$1 == "increments" { print $2 }' "$TMP/stats")" = "$(sed -n 's/^#increments\t//p' "$TMP/c.tsv")" ] ||
		fail "$name: allocs/stats increments differ from counts="
	# and allocs/ of the full recording counts its allocation events
	"$HEAPFS" cat "$TMP/f.htr" allocs/by-site | awk -F'\t' -v p="$prefix" 'NR > 1 && index($1, p) == 1 { print $1 "\t" $2 "\t" $3 }' |
		sort >"$TMP/ftree.tsv"
	sort "$TMP/full-all.tsv" | cmp -s - "$TMP/ftree.tsv" || fail "$name: allocs/by-site of mode=full differs from its events"
	local sites allocs incr per_site
	sites=$(wc -l <"$TMP/full.tsv")
	allocs=$(awk -F'\t' '{ n += $3 } END { print n }' "$TMP/full.tsv")
	incr=$(sed -n 's/^#increments\t//p' "$TMP/c.tsv")
	per_site=$(sed -n 's/^#per_site_increments\t//p' "$TMP/c.tsv")
	echo "ok: $name: $sites (site, type) pairs, $allocs allocations equal ($other VM-made objects at those lines not compared); increments $incr vs $per_site per-site"
}

echo "== examples (single-threaded ones)"
compare company example. "$CP" example.company.Main 200 2
compare buggystack example. "$CP" example.buggystack.BuggyMain 2000
compare gcstress example. "$CP" example.gcstress.Pipeline 20000 4
compare slowleak example. "$CP" example.slowleak.Main 40000 5

echo "== generated methods"
${MAKE:-make} -s BUILD="$BUILD" "$BUILD/tests/gen_alloc_methods" >/dev/null
for seed in ${SEEDS:-1 2 3 4 5 6 7 8}; do
	mkdir -p "$TMP/gen$seed"
	"$BUILD/tests/gen_alloc_methods" "$seed" 30 Gen >"$TMP/gen$seed/Gen.java"
	"$JAVAC" -d "$TMP/gen$seed" "$TMP/gen$seed/Gen.java" || fail "javac (seed $seed)"
	compare "generated seed $seed" Gen "$TMP/gen$seed" Gen
done
echo "== the JIT compiles instrumented methods"
# C1 refuses methods whose handler block has a trapping instruction under
# its own handler (a counter snippet inside a javac self-covering range)
g=$TMP/jit; mkdir -p "$g"
"$BUILD/tests/gen_alloc_methods" 11 60 Gen >"$g/Gen.java"
"$JAVAC" -d "$g" "$g/Gen.java" || fail "javac (jit)"
"$JAVA" -XX:TieredStopAtLevel=1 -XX:+PrintCompilation "-agentpath:$AGENT=out=$TMP/j.htr,mode=count,hot=0" -cp "$g" Gen 100 \
	>"$TMP/jit.out" 2>&1 || fail "jit run"
skipped=$(grep "Gen::" "$TMP/jit.out" | grep -c "COMPILE SKIPPED" || true)
compiled=$(grep -c "Gen::m" "$TMP/jit.out" || true)
[ "$skipped" = 0 ] || { grep "COMPILE SKIPPED" "$TMP/jit.out" | head -3 >&2; fail "C1 skipped $skipped instrumented methods"; }
echo "ok: C1 compiled $compiled Gen methods, skipped none"

echo "== hot paths: re-instrumented from measured frequencies (hot=N)"
# Counts from every instrumentation version add up: a run whose methods are
# retransformed (hot=20) counts what a run with static paths only (hot=0)
# counts; the verifier accepts every version.
for seed in 3 5; do
	g=$TMP/hot$seed
	mkdir -p "$g"
	"$BUILD/tests/gen_alloc_methods" "$seed" 30 Gen >"$g/Gen.java"
	"$JAVAC" -d "$g" "$g/Gen.java" || fail "javac (seed $seed)"
	"$JAVA" -Xverify:all "-agentpath:$AGENT=out=$TMP/h0.htr,mode=count,counts=$TMP/h0.tsv,hot=0" -cp "$g" Gen 300 >"$TMP/h0.out" 2>&1 ||
		{ cat "$TMP/h0.out"; fail "hot=0 run"; }
	"$JAVA" -Xverify:all "-agentpath:$AGENT=out=$TMP/h1.htr,mode=count,counts=$TMP/h1.tsv,hot=20,verbose" -cp "$g" Gen 300 \
		>"$TMP/h1.out" 2>"$TMP/h1.err" || { cat "$TMP/h1.err"; fail "hot=20 run"; }
	grep -q VerifyError "$TMP/h1.out" "$TMP/h1.err" && fail "hot=20: VerifyError"
	n=$(sed -n 's/.* \([0-9]*\) classes retransformed.*/\1/p' "$TMP/h1.err")
	[ "${n:-0}" -ge 1 ] || fail "seed $seed: nothing was retransformed: $(cat "$TMP/h1.err")"
	count_sites "$TMP/h0.tsv" Gen >"$TMP/h0.sites"
	count_sites "$TMP/h1.tsv" Gen >"$TMP/h1.sites"
	cmp -s "$TMP/h0.sites" "$TMP/h1.sites" || { diff "$TMP/h0.sites" "$TMP/h1.sites" | head >&2; fail "seed $seed: hot=20 counts differ from hot=0"; }
	echo "ok: generated seed $seed x300: $n class(es) retransformed, counts equal; increments $(sed -n 's/^#increments\t//p' "$TMP/h1.tsv") (hot=20) vs $(sed -n 's/^#increments\t//p' "$TMP/h0.tsv") (static) vs $(sed -n 's/^#per_site_increments\t//p' "$TMP/h0.tsv") per-site"
done

# A real application from a Debian package: Apache Ant building a small
# project (javac, jar, copy, delete).  Ant catches exceptions of its own
# (reflection probes), so path counters may be off where an exception cut a
# path short; per-site counters are not.  The deviation is measured and
# bounded, and every instrumented Ant class must pass the verifier.
# ant_run OUT OPTS: builds the project with the agent options OPTS.
ant_run() {
	local dir=$TMP/antp
	rm -rf "$dir"; mkdir -p "$dir/src/p"
	printf 'package p;\npublic class A { public static void main(String[] a) { System.out.println(a.length); } }\n' >"$dir/src/p/A.java"
	cat >"$dir/build.xml" <<'XML'
<project name="t" default="all">
  <target name="all">
    <mkdir dir="out"/>
    <javac srcdir="src" destdir="out" includeantruntime="false"/>
    <jar destfile="t.jar" basedir="out"/>
    <copy todir="copy"><fileset dir="src"/></copy>
    <delete dir="copy"/>
  </target>
</project>
XML
	(cd "$dir" && ANT_OPTS="$1" ant -q) >"$TMP/ant.out" 2>"$TMP/ant.err" || { cat "$TMP/ant.out" "$TMP/ant.err"; fail "ant ($1)"; }
	grep -q "VerifyError" "$TMP/ant.out" "$TMP/ant.err" && fail "ant: VerifyError"
	return 0
}
# deviation NAME COUNTS_TSV MIN_EQUAL_PERCENT: compares with $TMP/ant-full.tsv
deviation() {
	count_sites "$2" org.apache >"$TMP/ant-count.tsv"
	awk -F'\t' 'NR == FNR { c[$1 "\t" $2] = $3; next } ($1 "\t" $2) in c { t++; d = c[$1 "\t" $2] - $3; if (d == 0) eq++;
		else { off += d < 0 ? -d : d } ; all += $3 }
		END { printf "%d %d %d %d\n", t, eq, off, all }' "$TMP/ant-count.tsv" "$TMP/ant-full.tsv" >"$TMP/dev"
	read -r pairs equal off all <"$TMP/dev"
	[ "$pairs" -gt 100 ] || fail "$1: only $pairs sites compared"
	[ $((equal * 100)) -ge $((pairs * $3)) ] || fail "$1: only $equal of $pairs sites equal"
	echo "ok: $1: $equal of $pairs (site, type) pairs equal to mode=full; |deviation| $off of $all allocations"
}
if command -v ant >/dev/null; then
	echo "== a Debian application: ant"
	ant_run "-XX:-DoEscapeAnalysis -agentpath:$AGENT=out=$TMP/af.htr,graph=none,deaths=off,depth=1"
	"$COUNT" "$TMP/af.htr" | awk -F'\t' '$1 == "type-site" && index($3, "org.apache") == 1 { n[$3 "\t" $2] += $4 }
		END { for (s in n) print s "\t" n[s] }' | sort >"$TMP/ant-full.tsv"
	ant_run "-Xverify:all -agentpath:$AGENT=out=$TMP/ac.htr,mode=count,counts=$TMP/ac.tsv"
	deviation "ant, path counters" "$TMP/ac.tsv" 98
	ant_run "-Xverify:all -agentpath:$AGENT=out=$TMP/as.htr,mode=count,counting=sites,counts=$TMP/as.tsv"
	deviation "ant, counting=sites" "$TMP/as.tsv" 99
	echo "ok: ant increments: paths $(sed -n 's/^#increments\t//p' "$TMP/ac.tsv"), sites $(sed -n 's/^#increments\t//p' "$TMP/as.tsv")"
else
	echo "(ant not installed: the Debian application part is skipped)"
fi
echo "test_agent_count: all passed"
