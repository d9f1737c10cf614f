#!/usr/bin/env bash
# mode=count (DuckTracks path counters) against mode=full: the per-site
# allocation counts of both must be equal, on single-threaded runs, on runs
# where exceptions cut paths short (the Exception-event corrections), and
# with atomic=on on multi-threaded runs (plain increments lose counts there:
# measured and reported).  Every instrumented class runs under
# -Xverify:all.  Programs: the examples and generated methods
# (tests/integration/gen_alloc_methods.c: nested branches, loops, switches,
# early returns, try/finally; with `exc` also throw/catch mid-path)
# compiled with javac.  The trace's COUNT_SITE events name valid METHOD ids.
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
# The Debian applications at the end: AGENT_COUNT_APPS=all (make realapps)
# runs every counter variant on each; short (make test, the default) runs
# path counters against mode=full on Ant, ANTLR 3 and BeanShell (with
# counting=sites on BeanShell), the rest of the variants being tested on
# the generated methods above them.
AGENT_COUNT_APPS=${AGENT_COUNT_APPS:-short}
case $AGENT_COUNT_APPS in short | all) ;; *) fail "AGENT_COUNT_APPS: short or all, not '$AGENT_COUNT_APPS'" ;; esac
all_apps() { [ "$AGENT_COUNT_APPS" = all ]; }
# part NAME: the time the part before took, then NAME's heading (part ''
# at the end: the last part's time)
part() {
	[ -n "${part_name:-}" ] && echo "== $part_name: $((SECONDS - part_t0)) s"
	part_name=$1 part_t0=$SECONDS
	[ -z "$1" ] || echo "== $1"
}
fail() { echo "FAIL: $*" >&2; exit 1; }

# Per-site counts "Class.method:line<TAB>type<TAB>count" of sites whose name
# starts with $2, from mode=count's counts file ...
count_sites() {
	awk -F'\t' -v p="$2" '!/^#/ && index($1, p) == 1 { n[$1 "\t" $2] += $3 }
		END { for (s in n) if (n[s]) print s "\t" n[s] }' "$1" | sort
}
# ... and from a mode=full trace TRACE (allocating frame) for the sites
# starting with PREFIX: trace_sites TRACE PREFIX ...
trace_sites() {
	"$COUNT" "$1" | awk -F'\t' -v p="$2" '$1 == "type-site" && index($3, p) == 1 { n[$3 "\t" $2] += $4 }
		END { for (s in n) print s "\t" n[s] }' | sort
}
# ... and only for the (site, type) pairs of COUNTS (full_sites TRACE PREFIX
# COUNTS): the JVM also allocates at a site while it resolves the
# instruction the first time (class-name Strings, byte[], Object[]),
# objects of other types that no bytecode counter can see.
full_sites() {
	trace_sites "$1" "$2" >"$TMP/full-all.tsv"
	awk -F'\t' 'NR == FNR { want[$1 "\t" $2] = 1; next } ($1 "\t" $2) in want' "$3" "$TMP/full-all.tsv"
}

# compare NAME PREFIX CP CLASS ARGS...  (COPTS: more mode=count options)
compare() {
	local name=$1 prefix=$2 cp=$3; shift 3
	"$JAVA" -Xverify:all -Xmx256m "-agentpath:$AGENT=out=$TMP/c.htr,mode=count,counts=$TMP/c.tsv,verbose${COPTS:+,$COPTS}" \
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
	# every counted site names a METHOD event of the trace (ids shared with
	# mode=full's, symbols.c), the same method and bytecode index as counts=
	"$COUNT" "$TMP/c.htr" >"$TMP/c.dump"
	awk -F'\t' '$1 == "count-site" && $7 != 0 { print $4 "\t" $5 "\t" $6 }' "$TMP/c.dump" | sort >"$TMP/ids.tsv"
	awk -F'\t' '!/^#/ { m = $1; sub(/:[0-9]+$/, "", m); print m $4 "\t" $5 "\t" $2 }' "$TMP/c.tsv" | sort >"$TMP/ids-want.tsv"
	cmp -s "$TMP/ids.tsv" "$TMP/ids-want.tsv" || { diff "$TMP/ids.tsv" "$TMP/ids-want.tsv" | head >&2; fail "$name: COUNT_SITE method ids do not name the sites' methods"; }
	"$HEAPFS" cat "$TMP/c.htr" allocs/stats >"$TMP/stats"
	[ "$(awk -F'\t' '$1 == "increments" { print $2 }' "$TMP/stats")" = "$(sed -n 's/^#increments\t//p' "$TMP/c.tsv")" ] ||
		fail "$name: allocs/stats increments differ from counts="
	# exactness as allocs/stats states it; THREADS (default 1), MIN-MAX or
	# N: the most threads that ran instrumented code alive at once, from the program's
	# construction (how many overlap depends on scheduling)
	local tmax exact range=${THREADS:-1}
	tmax=$(awk -F'\t' '$1 == "threads_max" { print $2 }' "$TMP/stats")
	exact=$(awk -F'\t' '$1 == "exact" { print $2 }' "$TMP/stats")
	[ "$tmax" -ge "${range%-*}" ] && [ "$tmax" -le "${range#*-}" ] ||
		fail "$name: allocs/stats threads_max is $tmax, the program has $range"
	# the agent says the same on stderr at exit, only when it matters
	if [ "$tmax" -ge 2 ] && ! case ${COPTS-} in *atomic=on*) true ;; *) false ;; esac; then
		grep -q "threads that ran instrumented code were alive at once" "$TMP/c.err" || fail "$name: no notice of racing threads"
	else
		! grep -q "threads that ran instrumented code were alive at once" "$TMP/c.err" || fail "$name: a notice of racing threads"
	fi
	case "$tmax,${COPTS-}" in
	1,* | *atomic=on*) [ "$exact" = yes ] || fail "$name: allocs/stats exact: $exact" ;;
	*) case $exact in "not guaranteed: $tmax threads"*) ;; *) fail "$name: allocs/stats exact: $exact" ;; esac ;;
	esac
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

part "examples (single-threaded ones)"
compare company example. "$CP" example.company.Main 200 2
compare buggystack example. "$CP" example.buggystack.BuggyMain 2000
compare gcstress example. "$CP" example.gcstress.Pipeline 20000 4
compare slowleak example. "$CP" example.slowleak.Main 40000 5

part "generated methods"
${MAKE:-make} -s BUILD="$BUILD" "$BUILD/tests/gen_alloc_methods" >/dev/null
for seed in ${SEEDS:-1 2 3 4 5 6 7 8}; do
	mkdir -p "$TMP/gen$seed"
	"$BUILD/tests/gen_alloc_methods" "$seed" 30 Gen >"$TMP/gen$seed/Gen.java"
	"$JAVAC" -d "$TMP/gen$seed" "$TMP/gen$seed/Gen.java" || fail "javac (seed $seed)"
	compare "generated seed $seed" Gen "$TMP/gen$seed" Gen
done
part "counter array growth"
# Counters.c starts at 4096 counters and is replaced by larger arrays as
# classes need more: 700 generated methods need over 8000 (atomic=on too)
mkdir -p "$TMP/big"
"$BUILD/tests/gen_alloc_methods" 9 700 Gen >"$TMP/big/Gen.java"
"$JAVAC" -d "$TMP/big" "$TMP/big/Gen.java" || fail "javac (big)"
compare "700 generated methods" Gen "$TMP/big" Gen 1
n=$(sed -n 's/.* \([0-9]*\) counters,.*/\1/p' "$TMP/c.err")
[ "${n:-0}" -gt 4096 ] || fail "growth not exercised: $n counters"
COPTS=atomic=on compare "700 generated methods, atomic=on" Gen "$TMP/big" Gen 1

part "exceptions cutting paths short (corrected by handlers in the bytecode, or by the Exception event)"
# Without the corrections the counts are off: measured against the last
# compare's mode=full counts ($TMP/full.tsv) and reported.
# exceptions_off PREFIX CLASSDIR MAIN ARGS...  (XOPTS: more options)
exceptions_off() {
	local prefix=$1 dir=$2
	shift 2
	"$JAVA" -Xmx256m "-agentpath:$AGENT=out=$TMP/o.htr,mode=count,counts=$TMP/o.tsv,exceptions=off${XOPTS:+,$XOPTS}" \
		-cp "$dir" "$@" >/dev/null 2>&1 || fail "exceptions=off run"
	count_sites "$TMP/o.tsv" "$prefix" | awk -F'\t' 'NR == FNR { w[$1 "\t" $2] = $3; next }
		{ t++; d = $3 - w[$1 "\t" $2]; if (d) { n++; off += d < 0 ? -d : d } }
		END { printf "    exceptions=off: %d of %d sites off, |deviation| %d allocations\n", n, t, off }' "$TMP/full.tsv" -
	"$HEAPFS" cat "$TMP/o.htr" allocs/stats | grep -q '^exact	not guaranteed: .*exceptions=off' ||
		fail "exceptions=off: allocs/stats does not say the counts may be off"
}
for seed in ${EXC_SEEDS:-1 2 3}; do
	mkdir -p "$TMP/exc$seed"
	"$BUILD/tests/gen_alloc_methods" "$seed" 30 Gen exc >"$TMP/exc$seed/Gen.java"
	"$JAVAC" -d "$TMP/exc$seed" "$TMP/exc$seed/Gen.java" || fail "javac (exc seed $seed)"
	# the default: corrections as handlers in the bytecode
	compare "generated seed $seed, throwing" Gen "$TMP/exc$seed" Gen 20
	n=$(sed -n 's/.* \([0-9]*\) correction handlers.*/\1/p' "$TMP/c.err")
	[ "${n:-0}" -gt 0 ] || fail "exc seed $seed: no correction handler: $(cat "$TMP/c.err")"
	# the JVMTI Exception event walking the frames instead
	COPTS=exceptions=events compare "generated seed $seed, throwing, exceptions=events" Gen "$TMP/exc$seed" Gen 20
	grep -q " 0 frames corrected" "$TMP/c.err" && fail "exc seed $seed: no frame was corrected: $(cat "$TMP/c.err")"
	exceptions_off Gen "$TMP/exc$seed" Gen 20
done

mkdir -p "$TMP/mix"
"$JAVAC" -d "$TMP/mix" tests/integration/ExcMix.java || fail "javac ExcMix"
# (ExcMix starts one thread, which allocates in ExcMix, and joins it: 2
# threads that ran instrumented code alive at once)
THREADS=2 compare "reflection, <clinit>, constructors, threads, library code, recursion" ExcMix "$TMP/mix" ExcMix
THREADS=2 COPTS=exceptions=events compare "the same, exceptions=events" ExcMix "$TMP/mix" ExcMix
grep -q " 0 frames corrected" "$TMP/c.err" && fail "ExcMix: no frame was corrected"
exceptions_off ExcMix "$TMP/mix" ExcMix

part "the JDK's own sites (jdk=on, the default)"
# JdkMix (see its comment): Long.valueOf allocates A + B Longs, all made by
# the program's a() and b(); compared site for site with mode=full
# (-XX:-DoEscapeAnalysis: a box the JIT removes is counted but not
# recorded), single-threaded: threads_max 1 and exact although the JDK's
# own threads (Reference Handler, Common-Cleaner) run instrumented JDK code.
"$JAVAC" -d "$TMP/jdk" tests/integration/JdkMix.java || fail "javac JdkMix"
compare "JDK sites: Long.valueOf" java.lang.Long.valueOf "$TMP/jdk" JdkMix 30000 7000
n=$(awk -F'\t' '$1 ~ /^java[.]lang[.]Long[.]valueOf:/ && $2 == "java.lang.Long" { n += $3 } END { print n + 0 }' "$TMP/c.tsv")
[ "$n" = 37000 ] || fail "JDK sites: Long.valueOf counted $n Longs, the program made 37000"
"$HEAPFS" cat "$TMP/c.htr" allocs/by-site | awk -F'\t' '$1 ~ /^java[.]lang[.]Long[.]valueOf:/ && $2 == "java.lang.Long" { n += $3 } END { exit n != 37000 }' ||
	fail "JDK sites: allocs/by-site does not list Long.valueOf with 37000"
echo "ok: JDK sites: Long.valueOf 37000 (30000 + 7000), equal to mode=full, threads_max 1, exact"
# the callers (COUNT_CALLERS, allocs/by-caller): by construction every
# Long of Long.valueOf comes from a()'s call (30000) or b()'s (7000) on
# the one counting thread, so no "<no caller>" row; the lines are those
# of the calls in JdkMix.java
la=$(grep -n 'total += Long.valueOf' tests/integration/JdkMix.java | cut -d: -f1)
lb=$(grep -n 'sink = Long.valueOf' tests/integration/JdkMix.java | cut -d: -f1)
"$HEAPFS" cat "$TMP/c.htr" allocs/by-caller >"$TMP/callers.tsv" || fail "JDK sites: allocs/by-caller unreadable"
awk -F'\t' '$1 ~ /^java[.]lang[.]Long[.]valueOf:/ && $2 == "java.lang.Long" { print $3 "\t" $4 }' "$TMP/callers.tsv" | sort >"$TMP/lv.tsv"
printf 'JdkMix.a:%s\t30000\nJdkMix.b:%s\t7000\n' "$la" "$lb" | sort >"$TMP/lv-expect.tsv"
cmp -s "$TMP/lv.tsv" "$TMP/lv-expect.tsv" || { cat "$TMP/lv.tsv" >&2; fail "JDK sites: allocs/by-caller's Long.valueOf rows are not a() 30000 and b() 7000"; }
# every site's rows in by-caller (callers and the rest) add up to its by-site count
"$HEAPFS" cat "$TMP/c.htr" allocs/by-site >"$TMP/sites.tsv"
bad=$(awk -F'\t' 'FNR == 1 { next } NR == FNR { k = $1 "\t" $2 "\t" $5; sum[k] += $4; next }
	{ k = $1 "\t" $2 "\t" $4; if (k in sum) { seen++; if (sum[k] != $3) print k "\t" sum[k] "\t" $3 } }
	END { if (!seen) print "no site in both" }' "$TMP/callers.tsv" "$TMP/sites.tsv")
[ -z "$bad" ] || { echo "$bad" | head >&2; fail "JDK sites: allocs/by-caller does not add up to allocs/by-site"; }
echo "ok: JDK sites: allocs/by-caller: Long.valueOf 30000 under JdkMix.a:$la, 7000 under JdkMix.b:$lb; every site's callers add up to its count"
# allocs/by-site names the caller too (the issue's acceptance): its
# Long.valueOf row carries a() as top caller with 30000, of 2 callers; an
# application site (JdkMix's own `new`) has no caller columns
got=$(awk -F'\t' 'NR == 1 { print $6 "\t" $7 "\t" $8 } $1 ~ /^java[.]lang[.]Long[.]valueOf:/ && $2 == "java.lang.Long" { print $3 "\t" $6 "\t" $7 "\t" $8 }' "$TMP/sites.tsv")
want=$(printf 'top_caller\ttop_caller_count\tcallers\n37000\tJdkMix.a:%s\t30000\t2' "$la")
[ "$got" = "$want" ] || { printf '%s\n' "$got" >&2; fail "JDK sites: allocs/by-site's Long.valueOf row does not name JdkMix.a:$la (30000 of 37000, 2 callers)"; }
awk -F'\t' 'NR > 1 && $1 ~ /^JdkMix[.]/ && ($6 != "" || $7 != "" || $8 != "") { bad = 1 } END { exit bad }' "$TMP/sites.tsv" ||
	fail "JDK sites: an application site in allocs/by-site has caller columns"
echo "ok: JDK sites: allocs/by-site: Long.valueOf 37000, top caller JdkMix.a:$la (30000), 2 callers"
# without the CDS archive (-Xshare:off, or flags that make it unusable) the
# JVM keeps no stack maps for the boot classes it loads before VMInit, and
# rebuilds them without: the agent instruments the runtime image's class
# file instead (agent/jimage.h).  Before that, Long.valueOf went uncounted.
"$JAVA" -Xshare:off "-agentpath:$AGENT=out=$TMP/x.htr,mode=count,verbose" -cp "$TMP/jdk" JdkMix 30000 7000 \
	>/dev/null 2>"$TMP/x.err" || { cat "$TMP/x.err" >&2; fail "JDK sites, -Xshare:off: run"; }
grep -qE 'jdk=on: [0-9]+ JDK classes instrumented \([1-9][0-9]* from the runtime image' "$TMP/x.err" ||
	fail "JDK sites, -Xshare:off: no class instrumented from the runtime image: $(grep 'jdk=on' "$TMP/x.err")"
grep -qE 'classes instrumented \(0 failed\), [0-9]+ methods \([0-9]+ without allocations, 0 left alone\)' "$TMP/x.err" ||
	fail "JDK sites, -Xshare:off: classes failed or methods left alone: $(grep 'classes instrumented' "$TMP/x.err" | cut -c1-200)"
got=$("$HEAPFS" cat "$TMP/x.htr" allocs/by-site | awk -F'\t' '$1 ~ /^java[.]lang[.]Long[.]valueOf:/ && $2 == "java.lang.Long" { print $3 "\t" $6 "\t" $7 }')
[ "$got" = "$(printf '37000\tJdkMix.a:%s\t30000' "$la")" ] ||
	fail "JDK sites, -Xshare:off: allocs/by-site's Long.valueOf row is '$got', want 37000 under JdkMix.a:$la (30000)"
echo "ok: JDK sites, -Xshare:off: Long.valueOf 37000, top caller JdkMix.a:$la; no class failed, no method left alone"
# methods left uninstrumented make the counts inexact, and allocs/stats
# says so: counters=4096 runs out on JdkMix with the JDK's classes, and the
# agent's own notice at exit says how many methods went uncounted
"$JAVA" "-agentpath:$AGENT=out=$TMP/u.htr,mode=count,counters=4096" -cp "$TMP/jdk" JdkMix 300 70 \
	>/dev/null 2>"$TMP/u.err" || { cat "$TMP/u.err" >&2; fail "counters=4096: run"; }
nu=$(sed -n 's/^heapfs-agent: mode=count: \([0-9]*\) methods not counted: all 4096 counters in use.*/\1/p' "$TMP/u.err")
[ -n "$nu" ] && [ "$nu" -gt 0 ] || fail "counters=4096: no notice of methods not counted: $(cat "$TMP/u.err")"
"$HEAPFS" cat "$TMP/u.htr" allocs/stats >"$TMP/u.stats"
[ "$(awk -F'\t' '$1 == "uncounted_methods" { print $2 }' "$TMP/u.stats")" = "$nu" ] ||
	fail "counters=4096: $(grep '^uncounted_methods' "$TMP/u.stats"), the agent said $nu"
grep -q "^exact	not guaranteed: $nu methods with allocation sites were left uninstrumented" "$TMP/u.stats" ||
	fail "counters=4096: $(grep '^exact' "$TMP/u.stats")"
"$HEAPFS" cat "$TMP/x.htr" allocs/stats | grep -qx $'uncounted_methods\t0' ||
	fail "JDK sites, -Xshare:off: methods uncounted: $("$HEAPFS" cat "$TMP/x.htr" allocs/stats | grep '^uncounted')"
echo "ok: counters=4096: $nu methods uncounted, exact not guaranteed; -Xshare:off: none uncounted"
JDKOFF=$("$JAVA" "-agentpath:$AGENT=out=$TMP/o.htr,mode=count,jdk=off,counts=$TMP/o.tsv" -cp "$TMP/jdk" JdkMix 300 70 >/dev/null &&
	grep -c '^java[.]' "$TMP/o.tsv" || true)
[ "$JDKOFF" = 0 ] || fail "jdk=off: $JDKOFF JDK sites counted"
echo "ok: jdk=off counts no JDK site"

part "the JDK's allocating intrinsics (Arrays.copyOf, copyOfRange)"
# CopyOfMix (see its comment): where C2 compiles a call of
# Arrays.copyOf(T[], int, Class) or copyOfRange(T[], int, int, Class) it
# allocates the copy itself, and a counter inside them never runs: the
# agent counts the call as the allocation (its caller's site), and nothing
# inside them.  By construction: grow() makes A copies through
# Arrays.copyOf(T[], int), direct() B and range() C through the intrinsics
# themselves, 10^5 each (C2 compiles the loops).  Before: direct() and
# range() had no site, and of grow()'s copies 40,526 of 509,916 were
# counted on ANTLR 3 ×14 (the rest compiled).
"$JAVAC" -d "$TMP/cpy" tests/integration/CopyOfMix.java || fail "javac CopyOfMix"
"$JAVA" -Xverify:all -Xmx256m "-agentpath:$AGENT=out=$TMP/cpy.htr,mode=count" -cp "$TMP/cpy" CopyOfMix 100000 100000 100000 \
	>"$TMP/cpy.out" 2>"$TMP/cpy.err" || { cat "$TMP/cpy.err" >&2; fail "CopyOfMix: run"; }
[ "$(cat "$TMP/cpy.out")" = "7 3 3" ] || fail "CopyOfMix printed $(cat "$TMP/cpy.out")"
lg=$(grep -n 'keep\[0\] = Arrays.copyOf' tests/integration/CopyOfMix.java | cut -d: -f1)
ld=$(grep -n 'keep\[1\] = Arrays.copyOf' tests/integration/CopyOfMix.java | cut -d: -f1)
lr=$(grep -n 'keep\[2\] = Arrays.copyOfRange' tests/integration/CopyOfMix.java | cut -d: -f1)
"$HEAPFS" cat "$TMP/cpy.htr" allocs/by-site >"$TMP/cpy-sites.tsv" || fail "CopyOfMix: allocs/by-site"
"$HEAPFS" cat "$TMP/cpy.htr" allocs/by-caller >"$TMP/cpy-callers.tsv" || fail "CopyOfMix: allocs/by-caller"
# the intrinsics called by the program itself: its own sites, B and C
got=$(awk -F'\t' -v d="CopyOfMix.direct:$ld" -v r="CopyOfMix.range:$lr" '($1 == d || $1 == r) { print $1 "\t" $2 "\t" $3 }' \
	"$TMP/cpy-sites.tsv" | sort)
want=$(printf 'CopyOfMix.direct:%s\tjava.lang.Object[]\t100000\nCopyOfMix.range:%s\tjava.lang.Object[]\t100000' "$ld" "$lr" | sort)
[ "$got" = "$want" ] || { printf '%s\n' "$got" >&2; fail "CopyOfMix: the calls of copyOf and copyOfRange in direct() and range() are not sites of 100000 Object[] each"; }
# grow()'s copies: A under its call of Arrays.copyOf(T[], int), whatever
# the JIT did, and none counted twice (a site inside the intrinsics' code
# would add the calls the interpreter ran); none of direct()'s or
# range()'s inside the JDK
got=$(awk -F'\t' -v g="CopyOfMix.grow:$lg" -v d="CopyOfMix.direct:$ld" -v r="CopyOfMix.range:$lr" \
	'$1 ~ /^java[.]util[.]Arrays[.]copyOf/ && $2 == "java.lang.Object[]" && ($3 == g || $3 == d || $3 == r) { n[$3] += $4 }
	END { printf "%d %d %d", n[g], n[d], n[r] }' "$TMP/cpy-callers.tsv")
[ "$got" = "100000 0 0" ] || fail "CopyOfMix: Object[] counted in java.util.Arrays under grow(), direct(), range(): $got, want 100000 0 0"
"$HEAPFS" cat "$TMP/cpy.htr" allocs/stats | grep -qx $'exact\tyes' || fail "CopyOfMix: $("$HEAPFS" cat "$TMP/cpy.htr" allocs/stats | grep '^exact')"
echo "ok: the JDK's allocating intrinsics: direct() and range() 100000 each at their calls, grow() 100000 under Arrays.copyOf(T[], int), none twice"

part "threads_max: the threads that ran instrumented code"
# ThreadsMax (see its comment): main alone; main with threads of the
# program that run only JDK code (a sleeper, a Timer, a shutdown hook):
# 1 and exact; main and a thread both running counted code: 2
mkdir -p "$TMP/tmax"
"$JAVAC" -d "$TMP/tmax" tests/integration/ThreadsMax.java || fail "javac ThreadsMax"
compare "threads_max, single-threaded" ThreadsMax "$TMP/tmax" ThreadsMax single
compare "threads_max, threads that run JDK code only" ThreadsMax "$TMP/tmax" ThreadsMax idle
THREADS=2 COPTS=atomic=on compare "threads_max, two threads counting, atomic=on" ThreadsMax "$TMP/tmax" ThreadsMax two
for copts in "" ",counting=sites" ",exceptions=events" ",inline=on,loops=on"; do
	"$JAVA" -Xverify:all "-agentpath:$AGENT=out=$TMP/t.htr,mode=count$copts" -cp "$TMP/tmax" ThreadsMax two \
		>"$TMP/t.out" 2>"$TMP/t.err" || { cat "$TMP/t.err"; fail "threads_max, two$copts: run"; }
	"$HEAPFS" cat "$TMP/t.htr" allocs/stats >"$TMP/tstats"
	[ "$(awk -F'\t' '$1 == "threads_max" { print $2 }' "$TMP/tstats")" = 2 ] ||
		fail "threads_max, two$copts: $(grep '^threads_max' "$TMP/tstats"), not 2"
	grep -q "^exact	not guaranteed: 2 threads that ran instrumented code were alive at once" "$TMP/tstats" ||
		fail "threads_max, two$copts: $(grep '^exact' "$TMP/tstats")"
	grep -q "^heapfs-agent: mode=count: 2 threads that ran instrumented code were alive at once" "$TMP/t.err" ||
		fail "threads_max, two$copts: no notice at exit"
done
echo "ok: threads_max, two threads counting, plain increments (paths, sites, exceptions=events, inline and loops): 2, not guaranteed"

part "counter inlining (inline=on): methods counted by their callers"
# InlineMix (see its comment): by construction 11 methods get a clone:
# the constructors Node(int), Node(), Leaf, Thrower, Early, SubThrower and
# Priv (not those with an allocation on a branch, in a loop, before
# super() or under a handler of their own, nor Node(int, boolean), which
# allocates nothing itself), the final Node.copy, the static Node.pair,
# Calls.nest and InlineMix.main; and 14 calls are redirected to them,
# those with an allocation of the caller in their block: in Calls.run the
# constructor calls but Node(i, true) (7), pair and copy before an
# allocation (2), but not the nest call nor the pair call alone in its
# branch; nest's new Priv(); the this()/super() calls of Node(), Leaf,
# SubThrower and ArgAlloc (4), not Node(int, boolean)'s.
mkdir -p "$TMP/inl"
"$JAVAC" -d "$TMP/inl" tests/integration/InlineMix.java || fail "javac InlineMix"
compare "InlineMix, inline=off" InlineMix "$TMP/inl" InlineMix
inl_off=$(sed -n 's/^#increments\t//p' "$TMP/c.tsv")
COPTS=inline=on compare "InlineMix, inline=on" InlineMix "$TMP/inl" InlineMix
inl_on=$(sed -n 's/^#increments\t//p' "$TMP/c.tsv")
read -r clones calls < <(sed -n 's/.* \([0-9]*\) clones and \([0-9]*\) calls of them.*/\1 \2/p' "$TMP/c.err")
[ "$clones" = 11 ] && [ "$calls" = 14 ] || fail "InlineMix: $clones clones and $calls calls, want 11 and 14"
[ "$inl_on" -lt "$inl_off" ] || fail "InlineMix: inline=on executed $inl_on increments, inline=off $inl_off"
echo "ok: InlineMix: 11 clones, 14 calls of them; increments $inl_on (inline=on) vs $inl_off"
XOPTS=inline=on exceptions_off InlineMix "$TMP/inl" InlineMix
# SerialIds prints the serialVersionUIDs of Serializable classes that get
# clones: the mode=count run must print what the mode=full run does.  By
# construction 11 clones: Plain(), Plain(int), Plain.make, Plain.list,
# Plain.hidden, Nested(int), Nested.of, Failure(String), Kind's
# constructor and $values(), Declared().
mkdir -p "$TMP/ser"
"$JAVAC" -d "$TMP/ser" tests/integration/SerialIds.java || fail "javac SerialIds"
COPTS=inline=on compare "SerialIds, inline=on: serialVersionUIDs as without clones" SerialIds "$TMP/ser" SerialIds
n=$(sed -n 's/.* \([0-9]*\) clones and.*/\1/p' "$TMP/c.err")
[ "${n:-0}" = 11 ] || fail "SerialIds: $n clones, want 11"
THREADS=2 COPTS=inline=on compare "ExcMix, inline=on" ExcMix "$TMP/mix" ExcMix
# the generated programs' static methods call each other, and the throwing
# ones throw out of callees mid-way
COPTS=inline=on compare "generated seed 1, inline=on" Gen "$TMP/gen1" Gen
COPTS=inline=on compare "generated seed 1, throwing, inline=on" Gen "$TMP/exc1" Gen 20
n=$(sed -n 's/.* \([0-9]*\) calls of them.*/\1/p' "$TMP/c.err")
[ "${n:-0}" -gt 0 ] || fail "generated seed 1, throwing: no call redirected: $(cat "$TMP/c.err")"
COPTS=inline=on,atomic=on compare "company, inline=on, atomic=on" example. "$CP" example.company.Main 200 2

part "counted loops (loops=on): a loop's count added once at its exits"
# LoopExits (see its comment): by construction 3 loops counted at their
# exits, 5 with inline=on; exceptions leave two of them mid-way (from a
# callee, and the JVM's ArrayIndexOutOfBoundsException), whose handlers
# (exceptions=bytecode) add the turns made so far.  Counts equal
# mode=full's; fewer increments than loops=off.
mkdir -p "$TMP/loops"
"$JAVAC" -d "$TMP/loops" tests/integration/LoopExits.java || fail "javac LoopExits"
compare "LoopExits, loops=off" LoopExits "$TMP/loops" LoopExits 300
loops_off=$(sed -n 's/^#increments\t//p' "$TMP/c.tsv")
COPTS=loops=on compare "LoopExits, loops=on" LoopExits "$TMP/loops" LoopExits 300
loops_on=$(sed -n 's/^#increments\t//p' "$TMP/c.tsv")
n=$(sed -n 's/.* \([0-9]*\) counted loops.*/\1/p' "$TMP/c.err")
[ "$n" = 3 ] || fail "LoopExits: $n counted loops, want 3"
[ "$loops_on" -lt "$loops_off" ] || fail "LoopExits: loops=on executed $loops_on increments, loops=off $loops_off"
COPTS=loops=on,inline=on compare "LoopExits, loops=on, inline=on" LoopExits "$TMP/loops" LoopExits 300
n=$(sed -n 's/.* \([0-9]*\) counted loops.*/\1/p' "$TMP/c.err")
[ "$n" = 5 ] || fail "LoopExits, inline=on: $n counted loops, want 5"
echo "ok: LoopExits: increments $loops_on (loops=on) vs $loops_off"
COPTS=loops=on,hot=20 compare "LoopExits, loops=on, hot=20" LoopExits "$TMP/loops" LoopExits 300
# counting clones: a clone whose counted loop calls clones counts those
# calls (CloneChain's comment: Work.fill's at once, by construction; the
# recursions' once hot=N relinked Work), with exceptions thrown deep in a
# recursion of clones
mkdir -p "$TMP/chain"
"$JAVAC" -d "$TMP/chain" tests/integration/CloneChain.java || fail "javac CloneChain"
COPTS=loops=on,inline=on compare "CloneChain, loops=on, inline=on" CloneChain "$TMP/chain" CloneChain 3000
n=$(sed -n "s/.* \([0-9]*\) clones counting their loops' calls.*/\1/p" "$TMP/c.err")
[ "$n" = 1 ] || fail "CloneChain: $n clones counting their loops' calls, want 1"
static_incr=$(sed -n 's/^#increments\t//p' "$TMP/c.tsv")
COPTS=loops=on,inline=on,hot=20 compare "CloneChain, loops=on, inline=on, hot=20" CloneChain "$TMP/chain" CloneChain 3000
hot_incr=$(sed -n 's/^#increments\t//p' "$TMP/c.tsv")
# The relinking itself waits for the agent thread's poll, which backs off
# to one every 100 ms while nothing changes: 3000 rounds are over in about
# 10 ms of a 0.9 s run, and on a slow machine (a fresh-clone CI run, once)
# may end before it.  300,000 rounds (mode=count alone, about 1 s of work)
# span ten polls at the slowest.
"$JAVA" -Xmx256m "-agentpath:$AGENT=out=$TMP/hot.htr,mode=count,verbose,loops=on,inline=on,hot=20" \
	-cp "$TMP/chain" CloneChain 300000 >/dev/null 2>"$TMP/hot.err" || { cat "$TMP/hot.err"; fail "CloneChain, hot=20, 300,000 rounds: mode=count run"; }
n=$(sed -n "s/.* \([0-9]*\) clones counting their loops' calls.*/\1/p" "$TMP/hot.err")
[ "${n:-0}" -gt 1 ] || fail "CloneChain, hot=20: $n clones counting their loops' calls (no relinked recursion)"
echo "ok: CloneChain: increments $hot_incr with hot=20, $static_incr without; $n counting clone versions once relinked"
# the generated methods' for loops (with break and continue; the throwing
# programs throw out of callees in them)
for seed in 1 2 3; do
	COPTS=loops=on compare "generated seed $seed, loops=on" Gen "$TMP/gen$seed" Gen
	n=$(sed -n 's/.* \([0-9]*\) counted loops.*/\1/p' "$TMP/c.err")
	[ "${n:-0}" -gt 0 ] || fail "generated seed $seed: no counted loop"
	COPTS=loops=on,inline=on compare "generated seed $seed, throwing, loops=on, inline=on" Gen "$TMP/exc$seed" Gen 20
done
THREADS=2 COPTS=loops=on,inline=on compare "ExcMix, loops=on, inline=on" ExcMix "$TMP/mix" ExcMix
# more than 2^32 turns of one loop over the run (TripMany's comment): 3 x
# 1.5 billion allocations counted, 3 adds; the packed value alone would
# give 205,032,704 (4.5 billion modulo 2^32); jdk=off: the increments
# are the program's alone (the JDK's start-up makes ~1,500)
"$JAVAC" -d "$TMP/loops" tests/integration/TripMany.java || fail "javac TripMany"
"$JAVA" -Xverify:all "-agentpath:$AGENT=out=$TMP/c.htr,mode=count,counts=$TMP/c.tsv,loops=on,jdk=off" -cp "$TMP/loops" \
	TripMany 3 1500000000 >"$TMP/c.out" 2>"$TMP/c.err" || { cat "$TMP/c.err"; fail "TripMany: mode=count run"; }
n=$(awk -F'\t' '$1 ~ /^TripMany\.spin:/ { n += $3 } END { printf "%.0f\n", n }' "$TMP/c.tsv")
[ "$n" = 4500000000 ] || fail "TripMany: $n allocations counted, want 4500000000"
n=$(sed -n 's/^#increments\t//p' "$TMP/c.tsv")
[ "$n" = 3 ] || fail "TripMany: $n increments, want 3 (one add per call)"
"$HEAPFS" cat "$TMP/c.htr" allocs/by-site | grep -q "	4500000000	" || fail "TripMany: allocs/by-site lacks the count"
echo "ok: TripMany: 4,500,000,000 turns of one counted loop counted exactly, 3 adds"
# exceptions=events cannot correct them: the option is ignored, said so
COPTS=loops=on,exceptions=events compare "LoopExits, loops=on, exceptions=events" LoopExits "$TMP/loops" LoopExits 300
grep -q "loops=on is ignored with exceptions=events" "$TMP/c.err" || fail "loops=on with exceptions=events: no notice"
grep -q " 0 counted loops" "$TMP/c.err" || fail "loops=on with exceptions=events: loops counted"

part "threads racing on counters"
# example.threads: 4 threads calling one allocating method; it prints its
# per-site counts from its own loop counts.  atomic=on must be exact
# (against mode=full and against the printout; 4 x 100000 calls); plain
# increments lose some (4 x 500000 calls, 3 runs): measured and reported.
want_threads() { # the program's printout as "type<TAB>count"
	awk -F'\t' '$1 == "Item" { print "example.threads.Main$Item\t" $2 } $1 == "int[]" || $1 == "long[]" { print $1 "\t" $2 }
		$1 == "StringBuilder" { print "java.lang.StringBuilder\t" $2 }' "$1" | sort
}
# (main, which joins them, and 4 workers: 2 to 5 threads alive at once)
THREADS=2-5 COPTS=atomic=on compare "threads, atomic=on" example.threads.Main.step "$CP" example.threads.Main 4 100000
grep -q "atomic increments" "$TMP/c.err" || fail "atomic=on: not reported as atomic"
want_threads "$TMP/c.out" >"$TMP/tw.tsv"
awk -F'\t' '{ print $2 "\t" $3 }' "$TMP/count.tsv" | sort >"$TMP/tg.tsv"
cmp -s "$TMP/tw.tsv" "$TMP/tg.tsv" || { diff "$TMP/tw.tsv" "$TMP/tg.tsv" >&2; fail "atomic=on: counts differ from the program's own"; }
echo "ok: threads, atomic=on: equal to the program's own counts"
lost=0; total=0
for run in 1 2 3; do
	"$JAVA" "-agentpath:$AGENT=out=$TMP/p.htr,mode=count,counts=$TMP/p.tsv" -cp "$CP" example.threads.Main 4 500000 \
		>"$TMP/p.out" 2>&1 || fail "threads, plain run"
	want_threads "$TMP/p.out" >"$TMP/tw.tsv"
	read -r l n < <(count_sites "$TMP/p.tsv" example.threads.Main.step | awk -F'\t' '{ print $2 "\t" $3 }' |
		sort | awk -F'\t' 'NR == FNR { w[$1] = $2; next } { l += w[$1] - $2; n += w[$1] } END { print l + 0, n + 0 }' "$TMP/tw.tsv" -)
	lost=$((lost + l)); total=$((total + n))
	"$HEAPFS" cat "$TMP/p.htr" allocs/stats >"$TMP/pstats"
	tmax=$(awk -F'\t' '$1 == "threads_max" { print $2 }' "$TMP/pstats")
	[ "$tmax" -ge 2 ] && [ "$tmax" -le 5 ] || fail "threads, plain: allocs/stats threads_max is $tmax, not 2 to 5"
	grep -q "^heapfs-agent: mode=count: $tmax threads that ran instrumented code were alive at once and increments are plain" \
		"$TMP/p.out" || fail "threads, plain: the agent did not say at exit that counts may be low"
	grep -q "^exact	not guaranteed: $tmax threads that ran instrumented code were alive at once and increments are plain" "$TMP/pstats" ||
		fail "threads, plain: allocs/stats does not say the counts may be low: $(grep '^exact' "$TMP/pstats")"
done
echo "ok: threads, plain increments (default): $lost of $total allocations lost over 3 runs"

part "the JIT compiles instrumented methods"
# C1 refuses methods whose handler block has a trapping instruction under
# its own handler (a counter snippet inside a javac self-covering range)
# c1_compiles NAME CP ARGS...: Gen run with C1 only; no method skipped
c1_compiles() {
	local name=$1 cp=$2 skipped compiled
	shift 2
	"$JAVA" -XX:TieredStopAtLevel=1 -XX:+PrintCompilation "-agentpath:$AGENT=out=$TMP/j.htr,mode=count,hot=0" -cp "$cp" Gen "$@" \
		>"$TMP/jit.out" 2>&1 || fail "jit run ($name)"
	skipped=$(grep "Gen::" "$TMP/jit.out" | grep -c "COMPILE SKIPPED" || true)
	compiled=$(grep -c "Gen::m" "$TMP/jit.out" || true)
	[ "$skipped" = 0 ] || { grep "COMPILE SKIPPED" "$TMP/jit.out" | head -3 >&2; fail "C1 skipped $skipped $name"; }
	echo "ok: C1 compiled $compiled $name, skipped none"
}
g=$TMP/jit; mkdir -p "$g"
"$BUILD/tests/gen_alloc_methods" 11 60 Gen >"$g/Gen.java"
"$JAVAC" -d "$g" "$g/Gen.java" || fail "javac (jit)"
c1_compiles "Gen methods" "$g" 100
# ... nor a handler reached by both normal and exceptional control flow
# (exceptions=bytecode: a method's own handler behind correction stubs)
c1_compiles "throwing Gen methods (correction handlers)" "$(ls -d "$TMP"/exc* | head -n 1)" 20

part "hot paths: re-instrumented from measured frequencies (hot=N)"
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
	# verbose times the instrumenter at load and at retransformation, and
	# RetransformClasses, which includes the latter
	read -r t_load t_re t_rc < <(sed -n 's/.*; \([0-9.]*\) ms instrumenting at load, \([0-9.]*\) ms at retransformation, \([0-9.]*\) ms in RetransformClasses$/\1 \2 \3/p' "$TMP/h1.err")
	awk -v a="${t_load:--1}" -v b="${t_re:--1}" -v c="${t_rc:--1}" 'BEGIN { exit !(a > 0 && b > 0 && c >= b) }' ||
		fail "seed $seed: verbose times: load ${t_load:-?} ms, retransformation ${t_re:-?} ms, RetransformClasses ${t_rc:-?} ms"
	count_sites "$TMP/h0.tsv" Gen >"$TMP/h0.sites"
	count_sites "$TMP/h1.tsv" Gen >"$TMP/h1.sites"
	cmp -s "$TMP/h0.sites" "$TMP/h1.sites" || { diff "$TMP/h0.sites" "$TMP/h1.sites" | head >&2; fail "seed $seed: hot=20 counts differ from hot=0"; }
	echo "ok: generated seed $seed x300: $n class(es) retransformed, counts equal; increments $(sed -n 's/^#increments\t//p' "$TMP/h1.tsv") (hot=20) vs $(sed -n 's/^#increments\t//p' "$TMP/h0.tsv") (static) vs $(sed -n 's/^#per_site_increments\t//p' "$TMP/h0.tsv") per-site"
done

part "profile=FILE: plans measured by one run, used by the next"
# The first run finds no profile and writes what its counters measured;
# the second plans from it at load (no retransformation) and counts what
# the static run (h0) counted.  The program is deterministic, so the
# second run's frequencies are the first's: every method it plans from
# them executes at most one increment per allocation (instrument.c
# compares paths with one counter per site at those frequencies), and a
# method the first run could not measure but whose static counters lost
# gets one counter per site: no more increments than per-site counting,
# and nothing new to write (the file stays as it was).
for seed in 3 5; do
	g=$TMP/hot$seed prof=$TMP/gen$seed.prof
	"$JAVA" -Xverify:all "-agentpath:$AGENT=out=$TMP/h0.htr,mode=count,counts=$TMP/h0.tsv" -cp "$g" Gen 300 >/dev/null 2>&1 ||
		fail "seed $seed: static run"
	count_sites "$TMP/h0.tsv" Gen >"$TMP/h0.sites"
	for run in 1 2; do
		HEAPFS_AGENT_METHODS=$TMP/pm$run.tsv "$JAVA" -Xverify:all \
			"-agentpath:$AGENT=out=$TMP/pr.htr,mode=count,counts=$TMP/pr$run.tsv,profile=$prof,verbose" \
			-cp "$g" Gen 300 >"$TMP/pr.out" 2>"$TMP/pr$run.err" || { cat "$TMP/pr$run.err"; fail "seed $seed: profile run $run"; }
		grep -q VerifyError "$TMP/pr.out" "$TMP/pr$run.err" && fail "seed $seed: profile run $run: VerifyError"
		count_sites "$TMP/pr$run.tsv" Gen >"$TMP/pr.sites"
		cmp -s "$TMP/h0.sites" "$TMP/pr.sites" || { diff "$TMP/h0.sites" "$TMP/pr.sites" | head >&2; fail "seed $seed: profile run $run counts differ from the static run"; }
		[ "$run" = 1 ] && cp "$prof" "$TMP/prof1"
	done
	head -n 1 "$prof" | grep -qx '# heapfs-agent profile 2' || fail "seed $seed: profile header: $(head -n 1 "$prof")"
	plans=$(grep -c -P '^Gen\t[^\t]+\t[^\t]+\t[0-9a-f]{16}\t[0-9]+\t[0-9]+\tpaths\t[0-9,]+$' "$prof")
	[ "$plans" -ge 10 ] || fail "seed $seed: $plans path plans in the profile: $(cat "$prof")"
	planned=$(sed -n 's/.*profile .*: \([0-9]*\) method versions planned from it.*/\1/p' "$TMP/pr2.err")
	[ "${planned:-0}" -ge "$plans" ] || fail "seed $seed: run 2 planned ${planned:-0} methods from the profile, it has $plans plans"
	grep -q 'classes retransformed' "$TMP/pr2.err" && ! grep -q ' 0 classes retransformed' "$TMP/pr2.err" &&
		fail "seed $seed: run 2 retransformed classes"
	cmp -s "$TMP/prof1" "$prof" || { diff "$TMP/prof1" "$prof" | head -n 4 >&2; fail "seed $seed: run 2 rewrote the profile"; }
	i1=$(sed -n 's/^#increments\t//p' "$TMP/pr1.tsv") i2=$(sed -n 's/^#increments\t//p' "$TMP/pr2.tsv")
	ps=$(sed -n 's/^#per_site_increments\t//p' "$TMP/pr2.tsv")
	[ "$i2" -le "$ps" ] || fail "seed $seed: with the profile $i2 increments, more than per-site counting's $ps"
	# HEAPFS_AGENT_METHODS labels "per-site" every version the instrumenter
	# gave one counter per site (its own tally in verbose), also where it
	# chose so itself because the profile's frequencies made paths dearer;
	# such a version executes one increment per allocation
	chosen=$(sed -n 's/.* \([0-9]*\) method versions with one counter per site.* \([0-9]*\) constructors per site.*/\1 \2/p' "$TMP/pr2.err")
	[ -n "$chosen" ] || fail "seed $seed: verbose has no tally of per-site versions"
	labelled=$(awk -F'\t' '$6 == "per-site" { n++ } END { print n + 0 }' "$TMP/pm2.tsv")
	[ "$labelled" = $(( ${chosen% *} + ${chosen#* } )) ] || fail "seed $seed: $labelled versions labelled per-site, the instrumenter made '$chosen'"
	awk -F'\t' '$6 == "per-site" && $4 != $5 { bad = 1; print } END { exit bad }' "$TMP/pm2.tsv" >&2 ||
		fail "seed $seed: a per-site version executed other than one increment per allocation"
	echo "ok: generated seed $seed x300: $plans plans; increments $i1 (static) -> $i2 (from the profile) vs $ps per-site; counts equal; $labelled per-site versions labelled"
done
# clone links (LinkAhead's comment): the first run links the 4 methods
# whose clones came too late for their callers, the next calls those
# clones at once and executes fewer increments; the same profile on
# changed bytes (V2: no clone of their own) gives trampolines and drops
# the links; every run counts what mode=full records
mkdir -p "$TMP/la1" "$TMP/la2"
"$JAVAC" -d "$TMP/la1" tests/integration/LinkAhead.java || fail "javac LinkAhead"
sed -e '/\/\/V1/d' -e 's|//V2 ||' tests/integration/LinkAhead.java >"$TMP/la2/LinkAhead.java"
"$JAVAC" -d "$TMP/la2" "$TMP/la2/LinkAhead.java" || fail "javac LinkAhead V2"
rm -f "$TMP/la.prof"
links_of() { sed -n "s/.* \([0-9]*\) clones linked ahead from the profile, \([0-9]*\) trampolines.*/\1 \2/p" "$TMP/c.err"; }
COPTS=inline=on,profile=$TMP/la.prof compare "LinkAhead, first run" LinkAhead "$TMP/la1" LinkAhead 1000
i1=$(sed -n 's/^#increments\t//p' "$TMP/c.tsv")
[ "$(links_of)" = "0 0" ] || fail "LinkAhead, first run: $(links_of) clones linked ahead and trampolines, want 0 0"
[ "$(grep -c '	clone$' "$TMP/la.prof")" = 4 ] || fail "LinkAhead: clone links in the profile: $(grep clone "$TMP/la.prof")"
COPTS=inline=on,profile=$TMP/la.prof compare "LinkAhead, linked" LinkAhead "$TMP/la1" LinkAhead 1000
i2=$(sed -n 's/^#increments\t//p' "$TMP/c.tsv")
[ "$(links_of)" = "4 0" ] || fail "LinkAhead, linked: $(links_of) clones linked ahead and trampolines, want 4 0"
[ "$i2" -lt "$i1" ] || fail "LinkAhead: linked $i2 increments, not fewer than $i1"
COPTS=inline=on,profile=$TMP/la.prof compare "LinkAhead V2, trampolines" LinkAhead "$TMP/la2" LinkAhead 1000
[ "$(links_of)" = "3 4" ] || fail "LinkAhead V2: $(links_of) clones linked ahead and trampolines, want 3 4"
grep -q '	clone$' "$TMP/la.prof" && fail "LinkAhead V2: links to trampolines kept: $(grep clone "$TMP/la.prof")"
COPTS=inline=on,profile=$TMP/la.prof compare "LinkAhead V2, unlinked" LinkAhead "$TMP/la2" LinkAhead 1000
[ "$(links_of)" = "0 0" ] || fail "LinkAhead V2, unlinked: $(links_of) clones linked ahead and trampolines, want 0 0"
echo "ok: LinkAhead: increments $i1 -> $i2 with 4 clone links; changed bytes: 4 trampolines, links dropped"
# a clone link across class loaders (LinkLoaders' comment): the callers'
# loader delegates to the one that defines the clone's class
mkdir -p "$TMP/ll" "$TMP/llc"
"$JAVAC" -d "$TMP/ll" tests/integration/LinkLoaders.java || fail "javac LinkLoaders"
"$JAVAC" -cp "$TMP/ll" -d "$TMP/llc" tests/integration/LinkCaller.java || fail "javac LinkCaller"
rm -f "$TMP/ll.prof"
COPTS=inline=on,profile=$TMP/ll.prof compare "LinkLoaders, first run" Link "$TMP/ll" LinkLoaders "$TMP/llc" 1000
[ "$(links_of)" = "0 0" ] || fail "LinkLoaders, first run: $(links_of) clones linked ahead and trampolines, want 0 0"
COPTS=inline=on,profile=$TMP/ll.prof compare "LinkLoaders, linked across loaders" Link "$TMP/ll" LinkLoaders "$TMP/llc" 1000
[ "$(links_of)" = "1 0" ] || fail "LinkLoaders, linked: $(links_of) clones linked ahead and trampolines, want 1 0"
echo "ok: LinkLoaders: a clone linked across class loaders counts what it makes"
# a profile whose code hashes do not match plans nothing, and counts the same
sed -E 's/\t[0-9a-f]{16}\t/\t0000000000000000\t/' "$TMP/gen5.prof" >"$TMP/stale.prof"
"$JAVA" -Xverify:all "-agentpath:$AGENT=out=$TMP/pr.htr,mode=count,counts=$TMP/pr3.tsv,profile=$TMP/stale.prof,verbose" \
	-cp "$TMP/hot5" Gen 300 >/dev/null 2>"$TMP/pr3.err" || { cat "$TMP/pr3.err"; fail "stale profile run"; }
grep -q 'profile .*: 0 method versions planned from it' "$TMP/pr3.err" || fail "stale profile: $(grep profile "$TMP/pr3.err")"
count_sites "$TMP/pr3.tsv" Gen >"$TMP/pr.sites"
count_sites "$TMP/pr1.tsv" Gen >"$TMP/pr1.sites"
cmp -s "$TMP/pr1.sites" "$TMP/pr.sites" || fail "stale profile: counts differ"
# a file that is not a profile stops the JVM with a message naming it
echo "not a profile" >"$TMP/bad.prof"
if "$JAVA" "-agentpath:$AGENT=out=$TMP/pr.htr,mode=count,profile=$TMP/bad.prof" -cp "$TMP/hot5" Gen 1 >"$TMP/bad.out" 2>&1; then
	fail "a bad profile was accepted"
fi
grep -q "heapfs-agent: profile $TMP/bad.prof: line 1: not a heapfs-agent profile" "$TMP/bad.out" ||
	fail "bad profile: $(cat "$TMP/bad.out")"
echo "ok: a stale profile plans nothing; a bad one is refused"

# Demotion: PhaseShift's first calls all allocate, then almost none do.  The
# version planned from the first calls' frequencies executes more
# increments than it counts and is replaced by one counter per site
# (HEAPFS_AGENT_METHODS shows the versions); the counts stay those of hot=0.
mkdir -p "$TMP/ps"
"$JAVAC" -d "$TMP/ps" tests/integration/PhaseShift.java || fail "javac PhaseShift"
"$JAVA" -Xverify:all "-agentpath:$AGENT=out=$TMP/p0.htr,mode=count,counts=$TMP/p0.tsv" -cp "$TMP/ps" PhaseShift 200000 \
	>"$TMP/p0.out" 2>&1 || { cat "$TMP/p0.out"; fail "PhaseShift hot=0"; }
HEAPFS_AGENT_METHODS=$TMP/pm.tsv "$JAVA" -Xverify:all "-agentpath:$AGENT=out=$TMP/p1.htr,mode=count,counts=$TMP/p1.tsv,hot=20" \
	-cp "$TMP/ps" PhaseShift 200000 >"$TMP/p1.out" 2>&1 || { cat "$TMP/p1.out"; fail "PhaseShift hot=20"; }
cmp -s "$TMP/p0.out" "$TMP/p1.out" || fail "PhaseShift: outputs differ"
count_sites "$TMP/p0.tsv" PhaseShift >"$TMP/p0.sites"
count_sites "$TMP/p1.tsv" PhaseShift >"$TMP/p1.sites"
cmp -s "$TMP/p0.sites" "$TMP/p1.sites" || { diff "$TMP/p0.sites" "$TMP/p1.sites" >&2; fail "PhaseShift: hot=20 counts differ from hot=0"; }
# every call of work allocates 1 object, and 3 more in the first 500 calls
# and then in 1 call in 1000
want=$(( 500 + 2 * 200000 + 3 * (500 + 2 * 200) ))
got=$(awk -F'\t' '$1 ~ /^PhaseShift.work:/ { n += $3 } END { print n + 0 }' "$TMP/p1.tsv")
[ "$got" = "$want" ] || fail "PhaseShift.work: $got allocations counted, $want made"
versions=$(awk -F'\t' '$1 ~ /^PhaseShift\.work\(/ { print $6 }' "$TMP/pm.tsv" | tr '\n' ' ')
case "$versions" in
*measured*demoted*per-site*) ;;
*) fail "PhaseShift.work: versions '$versions', want measured, demoted (hot paths) and per-site" ;;
esac
# the per-site version executed one increment per allocation
awk -F'\t' '$1 ~ /^PhaseShift\.work\(/ && $6 == "per-site" && $4 != $5 { exit 1 }' "$TMP/pm.tsv" ||
	fail "PhaseShift.work: the per-site version's increments differ from its allocations"
echo "ok: PhaseShift: versions $versions; counts equal hot=0 ($got allocations)"

# app_run NAME DIR OPTS_VAR COMMAND OPTS: an application that a script
# starts, taking JVM options from the environment variable OPTS_VAR, run in
# DIR with OPTS; a failure or a VerifyError fails the test.
app_run() {
	(cd "$2" && env "$3=$5" bash -c "$4") >"$TMP/$1.out" 2>"$TMP/$1.err" ||
		{ cat "$TMP/$1.out" "$TMP/$1.err"; fail "$1 ($5)"; }
	grep -q "VerifyError" "$TMP/$1.out" "$TMP/$1.err" && fail "$1: VerifyError"
	return 0
}

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
	app_run ant "$dir" ANT_OPTS "ant -q" "$1"
}
# deviation NAME COUNTS_TSV MIN_EQUAL_PERCENT [FULL_TSV PREFIX [WHAT]]:
# compares the sites starting with PREFIX (org.apache) with FULL_TSV
# ($TMP/ant-full.tsv), WHAT (mode=full) naming it
deviation() {
	count_sites "$2" "${5:-org.apache}" >"$TMP/dev-count.tsv"
	awk -F'\t' 'NR == FNR { c[$1 "\t" $2] = $3; next } ($1 "\t" $2) in c { t++; d = c[$1 "\t" $2] - $3; if (d == 0) eq++;
		else { off += d < 0 ? -d : d } ; all += $3 }
		END { printf "%d %d %d %d\n", t, eq, off, all }' "$TMP/dev-count.tsv" "${4:-$TMP/ant-full.tsv}" >"$TMP/dev"
	read -r pairs equal off all <"$TMP/dev"
	[ "$pairs" -gt 100 ] || fail "$1: only $pairs sites compared"
	[ $((equal * 100)) -ge $((pairs * $3)) ] || fail "$1: only $equal of $pairs sites equal"
	echo "ok: $1: $equal of $pairs (site, type) pairs equal to ${6:-mode=full}; |deviation| $off of $all allocations"
}
if command -v ant >/dev/null; then
	part "a Debian application: ant"
	ant_run "-XX:-DoEscapeAnalysis -agentpath:$AGENT=out=$TMP/af.htr,graph=none,deaths=off,depth=1"
	trace_sites "$TMP/af.htr" org.apache >"$TMP/ant-full.tsv"
	ant_run "-Xverify:all -agentpath:$AGENT=out=$TMP/ac.htr,mode=count,counts=$TMP/ac.tsv"
	deviation "ant, path counters" "$TMP/ac.tsv" 99
	if all_apps; then
		ant_run "-Xverify:all -agentpath:$AGENT=out=$TMP/as.htr,mode=count,counting=sites,counts=$TMP/as.tsv"
		deviation "ant, counting=sites" "$TMP/as.tsv" 99
		ant_run "-Xverify:all -agentpath:$AGENT=out=$TMP/ai.htr,mode=count,inline=on,counts=$TMP/ai.tsv"
		deviation "ant, path counters, inline=on" "$TMP/ai.tsv" 99
		ant_run "-Xverify:all -agentpath:$AGENT=out=$TMP/al.htr,mode=count,loops=on,inline=on,counts=$TMP/al.tsv"
		deviation "ant, path counters, loops=on, inline=on" "$TMP/al.tsv" 99
		rm -f "$TMP/ant.prof"
		for run in 1 2; do
			ant_run "-Xverify:all -agentpath:$AGENT=out=$TMP/ap.htr,mode=count,inline=on,profile=$TMP/ant.prof,counts=$TMP/ap.tsv,verbose"
		done
		n=$(sed -n 's/.* \([0-9]*\) clones linked ahead from the profile.*/\1/p' "$TMP/ant.err")
		[ "${n:-0}" -gt 0 ] || fail "ant, profile: no clone linked ahead"
		deviation "ant, inline=on, $n clones linked ahead by the profile" "$TMP/ap.tsv" 99
		echo "ok: ant increments: paths $(sed -n 's/^#increments\t//p' "$TMP/ac.tsv"), inline=on $(sed -n 's/^#increments\t//p' "$TMP/ai.tsv"), loops=on and inline=on $(sed -n 's/^#increments\t//p' "$TMP/al.tsv"), sites $(sed -n 's/^#increments\t//p' "$TMP/as.tsv")"
	fi
else
	echo "(ant not installed: the Debian application part is skipped)"
fi

# A second Debian application: ANTLR 3 (package antlr3) generating the lexer
# and parser of tests/integration/MiniLang.g, a Java-like grammar with
# backtracking: grammar analysis and StringTemplate code generation, ~0.8 M
# allocations at instrumented sites, single-threaded.  The JVM options of
# /usr/bin/antlr3 cannot be set, so java runs org.antlr.Tool itself.
# -XX:-OptimizeStringConcat for mode=full: C2 removes the StringBuilder of
# a compiled "a" + b, which the counters (bytecode) still count.  Runs
# differ at a site or two (Tool.getCurrentTimeStamp pads the time of day),
# hence the threshold.
# antlr3_run OUT_DIR JAVA_OPTS...: ANTLR with the agent options
ANTLR3_CP=/usr/share/java/stringtemplate4.jar:/usr/share/java/antlr3.jar:/usr/share/java/antlr3-runtime.jar
antlr3_run() {
	local out=$1; shift
	rm -rf "$out"; mkdir -p "$out"
	"$JAVA" -Xmx256m "$@" -cp "$ANTLR3_CP" org.antlr.Tool -fo "$out" tests/integration/MiniLang.g \
		>"$TMP/antlr3.out" 2>"$TMP/antlr3.err" || { cat "$TMP/antlr3.out" "$TMP/antlr3.err"; fail "antlr3 ($*)"; }
	grep -q "VerifyError" "$TMP/antlr3.out" "$TMP/antlr3.err" && fail "antlr3: VerifyError"
	[ -s "$out/MiniLangParser.java" ] || fail "antlr3 ($*): no parser generated"
	return 0
}
if [ -r /usr/share/java/antlr3.jar ] && [ -r /usr/share/java/stringtemplate4.jar ]; then
	part "a Debian application: antlr3"
	antlr3_run "$TMP/g-full" -XX:-DoEscapeAnalysis -XX:-OptimizeStringConcat \
		"-agentpath:$AGENT=out=$TMP/gf.htr,graph=none,deaths=off,depth=1"
	trace_sites "$TMP/gf.htr" org. >"$TMP/antlr3-full.tsv"
	antlr3_run "$TMP/g-count" -Xverify:all "-agentpath:$AGENT=out=$TMP/gc.htr,mode=count,counts=$TMP/gc.tsv"
	deviation "antlr3, path counters" "$TMP/gc.tsv" 99 "$TMP/antlr3-full.tsv" org.
	# single-threaded: only main runs instrumented code (the JVM's and
	# JDK's threads of the program do not count)
	"$HEAPFS" cat "$TMP/gc.htr" allocs/stats >"$TMP/gcstats"
	grep -q "^threads_max	1$" "$TMP/gcstats" && grep -q "^exact	yes$" "$TMP/gcstats" ||
		fail "antlr3: $(grep -E '^(threads_max|exact)' "$TMP/gcstats" | tr '\n' ' ')"
	echo "ok: antlr3: threads_max 1, exact yes"
	if all_apps; then
		antlr3_run "$TMP/g-sites" -Xverify:all "-agentpath:$AGENT=out=$TMP/gs.htr,mode=count,counting=sites,counts=$TMP/gs.tsv"
		deviation "antlr3, counting=sites" "$TMP/gs.tsv" 99 "$TMP/antlr3-full.tsv" org.
		# hot=20: methods re-planned from measurements or demoted to per-site
		# counters while ANTLR runs; the counts stay those of mode=full
		antlr3_run "$TMP/g-hot" -Xverify:all "-agentpath:$AGENT=out=$TMP/gh.htr,mode=count,hot=20,verbose,counts=$TMP/gh.tsv"
		deviation "antlr3, path counters, hot=20" "$TMP/gh.tsv" 99 "$TMP/antlr3-full.tsv" org.
		# most hot methods' measured frequencies plan the counters they have:
		# those are kept, their classes not retransformed (count_poll)
		read -r retr kept < <(sed -n 's/.* \([0-9]*\) classes retransformed (hot=20; \([0-9]*\) hot methods kept.*/\1 \2/p' "$TMP/antlr3.err")
		[ "${kept:-0}" -gt "${retr:-0}" ] ||
			fail "antlr3, hot=20: $kept hot methods kept, $retr classes retransformed: $(cat "$TMP/antlr3.err")"
		echo "ok: antlr3, hot=20: $kept hot methods kept as they were, $retr classes retransformed"
		antlr3_run "$TMP/g-inl" -Xverify:all "-agentpath:$AGENT=out=$TMP/gi.htr,mode=count,inline=on,counts=$TMP/gi.tsv"
		deviation "antlr3, path counters, inline=on" "$TMP/gi.tsv" 99 "$TMP/antlr3-full.tsv" org.
		antlr3_run "$TMP/g-inlh" -Xverify:all "-agentpath:$AGENT=out=$TMP/gih.htr,mode=count,inline=on,hot=20,verbose,counts=$TMP/gih.tsv"
		deviation "antlr3, path counters, inline=on, hot=20" "$TMP/gih.tsv" 99 "$TMP/antlr3-full.tsv" org.
		relinked=$(sed -n 's/.* \([0-9]*\) classes relinked.*/\1/p' "$TMP/antlr3.err")
		[ "${relinked:-0}" -gt 0 ] || fail "antlr3, inline=on, hot=20: no caller relinked: $(cat "$TMP/antlr3.err")"
		antlr3_run "$TMP/g-loops" -Xverify:all "-agentpath:$AGENT=out=$TMP/gl.htr,mode=count,loops=on,inline=on,hot=20,verbose,counts=$TMP/gl.tsv"
		deviation "antlr3, path counters, loops=on, inline=on, hot=20" "$TMP/gl.tsv" 99 "$TMP/antlr3-full.tsv" org.
		loops=$(sed -n 's/.* \([0-9]*\) counted loops.*/\1/p' "$TMP/antlr3.err")
		[ "${loops:-0}" -gt 0 ] || fail "antlr3, loops=on: no counted loop: $(cat "$TMP/antlr3.err")"
		# the profile's plans and clone links: no class retransformed
		rm -f "$TMP/antlr3.prof"
		for run in 1 2; do
			antlr3_run "$TMP/g-prof" -Xverify:all "-agentpath:$AGENT=out=$TMP/gp.htr,mode=count,loops=on,inline=on,profile=$TMP/antlr3.prof,verbose,counts=$TMP/gp.tsv"
		done
		deviation "antlr3, loops=on, inline=on, profile (second run)" "$TMP/gp.tsv" 99 "$TMP/antlr3-full.tsv" org.
		n=$(sed -n 's/.* \([0-9]*\) clones linked ahead from the profile.*/\1/p' "$TMP/antlr3.err")
		[ "${n:-0}" -gt 10 ] || fail "antlr3, profile: ${n:-0} clones linked ahead"
		echo "ok: antlr3, loops=on, inline=on, profile: $n clones linked ahead; increments $(sed -n 's/^#increments\t//p' "$TMP/gp.tsv")"
	fi
	# the generated code does not depend on the agent
	diff -r "$TMP/g-full" "$TMP/g-count" >"$TMP/antlr3.diff" || true
	awk '/^[<>]/ && !/^[<>] \/\/ \$ANTLR 3/ { bad = 1 } END { exit !bad }' "$TMP/antlr3.diff" &&
		fail "antlr3: generated code differs under mode=count"
	if all_apps; then
		echo "ok: antlr3 increments: paths $(sed -n 's/^#increments\t//p' "$TMP/gc.tsv"), hot=20 $(sed -n 's/^#increments\t//p' "$TMP/gh.tsv"), inline=on $(sed -n 's/^#increments\t//p' "$TMP/gi.tsv"), inline=on hot=20 $(sed -n 's/^#increments\t//p' "$TMP/gih.tsv"), sites $(sed -n 's/^#increments\t//p' "$TMP/gs.tsv")" \
			"(per-site $(sed -n 's/^#per_site_increments\t//p' "$TMP/gc.tsv"))"
	fi
else
	echo "(antlr3 not installed (Debian package antlr3): the second Debian application is skipped)"
fi

# A third Debian application: Apache Maven (package maven, on these
# machines though not in DEBS) validating a one-line POM offline: Plexus
# class realms, Sisu/Guice injection, reflection, about 1,000 classes.
# Maven's own counts vary from run to run: Sisu keeps bindings in weak
# caches that a GC may clear (then it builds them again: in one run 159
# RankedBindings, MildElements, ... where another had 140), and class
# loading takes locks in varying number.  So path counters are compared
# with one counter per site (both under -Xverify:all, which loads classes
# of its own) and with mode=full (without it): at least 97% of the sites
# equal.  Measured: in 2 of 4 runs under load, and every idle run, all
# 1353 sites equal counting=sites; the others differed at 11 and 15 of
# those weak-cache and lock sites, consistently (every RankedBindings
# with its MildElements, ReferenceQueue, ...); with atomic=on (no lost
# increments) 4 runs under load differed at 5 to 19 such sites.
mvn_run() {
	local dir=$TMP/mvnp
	mkdir -p "$dir"
	printf '<project><modelVersion>4.0.0</modelVersion><groupId>t</groupId><artifactId>t</artifactId><version>1</version><packaging>pom</packaging></project>\n' >"$dir/pom.xml"
	app_run maven "$dir" MAVEN_OPTS "mvn -o -q validate" "$1"
}
if ! all_apps; then
	echo "(Maven: AGENT_COUNT_APPS=all, make realapps)"
elif command -v mvn >/dev/null; then
	part "a Debian application: maven"
	mvn_run "-XX:-DoEscapeAnalysis -agentpath:$AGENT=out=$TMP/mf.htr,graph=none,deaths=off,depth=1"
	trace_sites "$TMP/mf.htr" org. >"$TMP/mvn-full.tsv"
	mvn_run "-Xverify:all -agentpath:$AGENT=out=$TMP/mc.htr,mode=count,counts=$TMP/mc.tsv"
	echo "   maven: $("$HEAPFS" cat "$TMP/mc.htr" allocs/stats | grep -E '^(threads_max|exact)' | tr '\t\n' '  ')"
	mvn_run "-Xverify:all -agentpath:$AGENT=out=$TMP/ms.htr,mode=count,counting=sites,counts=$TMP/ms.tsv"
	count_sites "$TMP/ms.tsv" org. >"$TMP/ms-sites.tsv"
	[ "$(wc -l <"$TMP/ms-sites.tsv")" -gt 500 ] || fail "maven: only $(wc -l <"$TMP/ms-sites.tsv") sites counted"
	deviation "maven, path counters" "$TMP/mc.tsv" 97 "$TMP/ms-sites.tsv" org. "counting=sites"
	deviation "maven, path counters" "$TMP/mc.tsv" 97 "$TMP/mvn-full.tsv" org.
	mvn_run "-Xverify:all -agentpath:$AGENT=out=$TMP/mi.htr,mode=count,inline=on,counts=$TMP/mi.tsv"
	deviation "maven, path counters, inline=on" "$TMP/mi.tsv" 97 "$TMP/ms-sites.tsv" org. "counting=sites"
	# clone links: Maven's Plexus realms are class loaders that import
	# from one another, so callers link to clones other loaders define
	rm -f "$TMP/mvn.prof"
	for run in 1 2; do
		mvn_run "-Xverify:all -agentpath:$AGENT=out=$TMP/mp.htr,mode=count,inline=on,profile=$TMP/mvn.prof,counts=$TMP/mp.tsv,verbose"
	done
	n=$(sed -n 's/.* \([0-9]*\) clones linked ahead from the profile.*/\1/p' "$TMP/maven.err")
	[ "${n:-0}" -gt 10 ] || fail "maven, profile: ${n:-0} clones linked ahead"
	deviation "maven, inline=on, $n clones linked ahead by the profile" "$TMP/mp.tsv" 97 "$TMP/ms-sites.tsv" org. "counting=sites"
	echo "ok: maven increments: paths $(sed -n 's/^#increments\t//p' "$TMP/mc.tsv"), sites $(sed -n 's/^#increments\t//p' "$TMP/ms.tsv")"
else
	echo "(mvn not installed: the Maven part is skipped)"
fi

# A fourth Debian application: BeanShell (package libbsh-java, on these
# machines as Maven's, not in DEBS) interpreting tests/integration/Interp.bsh:
# an interpreter, reflection, and exceptions caught after unwinding through
# its frames.  Debian builds bsh.jar without line numbers (sites :-1).
# mode=count gives the same counts in every run, and path counters (every
# variant) the same as one counter per site at every site.  mode=full
# varies from run to run at a site or two: C2 removes allocations whose
# objects are never used, even without escape analysis (in 4 runs,
# Primitive.promotePrimitives's Object[] 13,003 to 14,003 of the 14,003
# its bytecode executes; always 14,003 under -Xint or C1 alone), hence
# 97% against mode=full.
BSH_JAR=/usr/share/java/bsh.jar
bsh_run() { # OUT_PREFIX JAVA_OPTS...: prints sum=1498500 list=2000
	local out=$1; shift
	"$JAVA" -Xmx256m "$@" -cp "$BSH_JAR" bsh.Interpreter tests/integration/Interp.bsh >"$out.out" 2>"$out.err" ||
		{ cat "$out.err"; fail "bsh ($*)"; }
	grep -q "VerifyError" "$out.out" "$out.err" && fail "bsh ($*): VerifyError"
	grep -qx "sum=1498500 list=2000" "$out.out" || fail "bsh ($*): printed $(cat "$out.out")"
}
if [ -r "$BSH_JAR" ]; then
	part "a Debian application: BeanShell"
	bsh_run "$TMP/bf" -XX:-DoEscapeAnalysis -XX:-OptimizeStringConcat \
		"-agentpath:$AGENT=out=$TMP/bf.htr,graph=none,deaths=off,depth=1"
	trace_sites "$TMP/bf.htr" bsh. >"$TMP/bsh-full.tsv"
	bsh_run "$TMP/b-sites" -Xverify:all "-agentpath:$AGENT=out=$TMP/b.htr,mode=count,counting=sites,counts=$TMP/b-sites.tsv"
	count_sites "$TMP/b-sites.tsv" bsh. >"$TMP/bsh-sites.tsv"
	deviation "bsh, counting=sites" "$TMP/b-sites.tsv" 97 "$TMP/bsh-full.tsv" bsh.
	variants="paths:"
	all_apps && variants="$variants inline:,inline=on hot:,hot=20,inline=on"
	for v in $variants; do
		bsh_run "$TMP/b-${v%%:*}" -Xverify:all "-agentpath:$AGENT=out=$TMP/b.htr,mode=count,counts=$TMP/b-${v%%:*}.tsv${v#*:}"
		deviation "bsh, path counters${v#*:}" "$TMP/b-${v%%:*}.tsv" 100 "$TMP/bsh-sites.tsv" bsh. "counting=sites"
	done
	deviation "bsh, path counters" "$TMP/b-paths.tsv" 97 "$TMP/bsh-full.tsv" bsh.
	all_apps && echo "ok: bsh increments: paths $(sed -n 's/^#increments\t//p' "$TMP/b-paths.tsv"), inline=on $(sed -n 's/^#increments\t//p' "$TMP/b-inline.tsv"), sites $(sed -n 's/^#increments\t//p' "$TMP/b-sites.tsv")"
else
	echo "(BeanShell not installed (Debian package libbsh-java): the fourth Debian application is skipped)"
fi
part ''
echo "test_agent_count: all passed"
