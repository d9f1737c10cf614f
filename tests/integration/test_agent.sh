#!/usr/bin/env bash
# Records real JVM runs with the JVMTI agent and checks the traces against
# what the programs print: with build/tests/agent_count (counts straight
# from the trace's events, independent of fs/) and with `heapfs cat`.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
${MAKE:-make} -s BUILD="$BUILD" agent "$BUILD/tests/agent_count" examples-classes >/dev/null
AGENT=$PWD/$BUILD/libheapfs-agent.so
COUNT=$PWD/$BUILD/tests/agent_count
CP=$PWD/$BUILD/examples/classes
JAVA=${JAVA:-java}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# value of key $1 in "key<TAB>value" lines on stdin
val() { awk -F'\t' -v k="$1" '$1 == k { print $2; exit }'; }
# count of allocations of type $2 at allocating frame $3 in trace $1
site_count() { "$COUNT" "$1" | awk -F'\t' -v t="$2" -v s="$3" '$1 == "type-site" && $2 == t && $3 == s { n += $4 } END { print n + 0 }'; }
# the same, by the innermost frame in the example's own code
app_count() { "$COUNT" "$1" | awk -F'\t' -v t="$2" -v s="$3" '$1 == "type-app" && $2 == t && $3 == s { n += $4 } END { print n + 0 }'; }
expect() { [ "$2" = "$3" ] || fail "$1: expected $3, got $2"; echo "ok: $1 = $2"; }
record() { local out=$1; shift; "$JAVA" -Xmx128m "-agentpath:$AGENT=out=$out$OPTS" -cp "$CP" "$@"; }

echo "== options: help prints the options, a bad option stops the JVM"
if "$JAVA" "-agentpath:$AGENT=help" -version >"$TMP/help.out" 2>&1; then fail "help: JVM started"; fi
grep -q "graph=MODE" "$TMP/help.out" || fail "help text missing"
# every option help lists has its entry in the man page (22 options: jdk= came with f3b7f4c, start= with issue 31's start objects)
keys=$(sed -n 's/^  \([a-z][a-z]*\)[= ].*/\1/p' "$TMP/help.out")
[ "$(echo "$keys" | wc -l)" -eq 22 ] || fail "help lists $(echo "$keys" | wc -l) options, the agent takes 22"
for key in $keys; do
	grep -Eq "^\.B[IR]? $key(=|$| )" docs/heapfs-agent.7 || fail "docs/heapfs-agent.7 has no entry for $key"
done
if "$JAVA" "-agentpath:$AGENT=out=$TMP/x.htr,colour=blue" -version >"$TMP/bad.out" 2>&1; then
	fail "bad option: JVM started"
fi
grep -q "unknown option 'colour=blue'" "$TMP/bad.out" || fail "bad option not named: $(cat "$TMP/bad.out")"
echo "ok: options"

echo "== MultiCache: allocation counts per site, Products under both static roots"
OPTS=",graph=every"
record "$TMP/mc.htr" example.multicache.Main 5000 4 >"$TMP/mc.out"
products=$(sed -n 's/^products=//p' "$TMP/mc.out")
"$COUNT" "$TMP/mc.htr" >"$TMP/mc.count"
expect "duplicate ids" "$(val duplicate_ids <"$TMP/mc.count")" 0
expect "deaths of unknown objects" "$(val deaths_unallocated <"$TMP/mc.count")" 0
# a GC whose successor starts before the agent's walk gets no graph (README);
# the last one always has time for it
expect "last GC has a graph" "$(val last_gc_graph <"$TMP/mc.count")" 1
expect "Products allocated at Loader.load" \
	"$(site_count "$TMP/mc.htr" example.multicache.Product example.multicache.Loader.load:15)" "$products"
expect "int[] allocated in Product.<init>" \
	"$(site_count "$TMP/mc.htr" 'int[]' 'example.multicache.Product.<init>:13')" "$products"
expect "StringBuilders allocated at Loader.load" \
	"$(site_count "$TMP/mc.htr" java.lang.StringBuilder example.multicache.Loader.load:14)" "$products"
"$COUNT" "$TMP/mc.htr" --reach example.multicache.Product >"$TMP/mc.reach"
expect "Products reachable from IdCache.byId" \
	"$(val static:example.multicache.IdCache.byId <<<"$(cut -f2- "$TMP/mc.reach")")" "$products"
expect "Products reachable from NameCache.byName" \
	"$(val static:example.multicache.NameCache.byName <<<"$(cut -f2- "$TMP/mc.reach")")" "$products"
expect "gc/latest Product count (heapfs cat)" \
	"$("$HEAPFS" cat "$TMP/mc.htr" gc/latest/by-type/example.multicache.Product/count)" "$products"
roots=$("$HEAPFS" cat "$TMP/mc.htr" gc/latest/roots/table)
grep -q "example.multicache.IdCache.byId" <<<"$roots" || fail "roots: no IdCache.byId"
grep -q "example.multicache.NameCache.byName" <<<"$roots" || fail "roots: no NameCache.byName"
echo "ok: both static roots in roots/table"
# MultiCache ends every round with System.gc(): the last GC is a full one,
# with its heap use (from the JVM's performance counters, or the beans)
info=$("$HEAPFS" cat "$TMP/mc.htr" gc/latest/info)
expect "last GC full" "$(val full <<<"$info")" yes
[ "$(val used_after <<<"$info")" -gt 0 ] || fail "last GC: no heap use: $info"
[ "$(val capacity <<<"$info")" -ge "$(val used_after <<<"$info")" ] || fail "last GC: capacity < use: $info"
case "$(val cause <<<"$info")" in "" | "GC pause") fail "last GC: no cause: $info" ;; esac
echo "ok: last GC full, $(val used_after <<<"$info") bytes used, cause $(val cause <<<"$info")"
# MultiCache's GCs follow 0.3-0.5 MB of allocation, less than the JVM's
# counters see (G1: one region), which gave a use before each GC equal to
# the last GC's use after.  Use before is at least the last GC's use after
# plus what was allocated since (trace events, summed by the reader) where
# the collector frees only in its pauses (G1 here, Serial); ZGC keeps the
# JVM's figure.  (GC 1's "allocated" also counts the objects found at start.)
floor_ok() {
	"$HEAPFS" cat "$1" timeline/gcs.csv | awk -F, 'NR > 2 && $6 < prev + $10 {
		print "GC " $1 ": used_before " $6 " < " prev " + " $10; bad = 1 }
		NR > 1 { prev = $7 } END { exit bad }'
}
floor_ok "$TMP/mc.htr" || fail "G1: use before a GC below the floor"
[ "$("$HEAPFS" cat "$TMP/mc.htr" trace/info | val gc.used_before_raised)" -gt 0 ] ||
	fail "G1: no GC's use before raised"
OPTS="" record "$TMP/mc-serial.htr" -XX:+UseSerialGC example.multicache.Main 2000 3 >/dev/null
floor_ok "$TMP/mc-serial.htr" || fail "Serial: use before a GC below the floor"
if "$JAVA" -XX:+UseZGC -version >/dev/null 2>&1; then
	OPTS="" record "$TMP/mc-z.htr" -XX:+UseZGC example.multicache.Main 2000 3 >/dev/null
	expect "ZGC: GCs with use before raised" \
		"$("$HEAPFS" cat "$TMP/mc-z.htr" trace/info | val gc.used_before_raised)" 0
fi
echo "ok: use before each GC at least the last use after plus the bytes allocated since"

echo "== BuggyStack: the leak chain local -> BuggyStack.elements -> Object[] -> TestObject"
record "$TMP/bs.htr" example.buggystack.BuggyMain 5000 >"$TMP/bs.out"
leaked=$(sed -n 's/^leaked=//p' "$TMP/bs.out")
first=$(sed -n 's/^first_round=//p' "$TMP/bs.out")
second=$(sed -n 's/^second_round=//p' "$TMP/bs.out")
expect "TestObjects of the first round" \
	"$(site_count "$TMP/bs.htr" example.buggystack.TestObject example.buggystack.BuggyMain.main:12)" "$first"
expect "TestObjects of the second round" \
	"$(site_count "$TMP/bs.htr" example.buggystack.TestObject example.buggystack.BuggyMain.main:17)" "$second"
"$COUNT" "$TMP/bs.htr" --reach example.buggystack.TestObject >"$TMP/bs.reach"
expect "TestObjects reachable from BuggyMain.main's local 'stack' (slot 3)" \
	"$(val local:example.buggystack.BuggyMain.main:3 <<<"$(cut -f2- "$TMP/bs.reach")")" "$leaked"
obj=$("$HEAPFS" cat "$TMP/bs.htr" gc/latest/by-type/example.buggystack.TestObject/objects | sed -n 1p)
arr=$("$HEAPFS" cat "$TMP/bs.htr" "gc/latest/objects/$obj/referrers" | awk -F'\t' 'NR == 2 && $2 == "java.lang.Object[]" { print $1 }')
[ -n "$arr" ] || fail "TestObject $obj is not referenced from an Object[]"
"$HEAPFS" cat "$TMP/bs.htr" "gc/latest/objects/$arr/referrers" |
	awk -F'\t' '$2 == "example.buggystack.BuggyStack" && $3 == "elements" { ok = 1 } END { exit !ok }' ||
	fail "Object[] $arr is not BuggyStack.elements"
echo "ok: chain"

echo "== back-to-back System.gc(): with gcwait (the default) every GC has a graph"
# Company calls System.gc() 5 times in a row; without gcwait the agent's
# walk of one GC usually loses the race against the next (measured: GCs 1-4
# without a graph in most runs, even on an idle machine)
OPTS=",graph=every,verbose"
record "$TMP/co.htr" example.company.Main 400 5 >/dev/null 2>"$TMP/co.err"
"$COUNT" "$TMP/co.htr" >"$TMP/co.count"
[ "$(val gcs <"$TMP/co.count")" -ge 5 ] || fail "company: fewer than 5 GCs: $(cat "$TMP/co.count")"
expect "company: GCs with a graph" "$(val graph_gcs <"$TMP/co.count")" "$(val gcs <"$TMP/co.count")"
grep -q "GC calls waited for the agent [1-9][0-9]* times, .* ms in all; allocations waited .*; 0 timed out" "$TMP/co.err" ||
	fail "company: no gcwait statistics: $(cat "$TMP/co.err")"
for g in 001 002 003 004 005; do
	expect "company: Employees in the Company's closure at GC $g" \
		"$("$HEAPFS" cat "$TMP/co.htr" "gc/$g/by-type/example.company.Company/closure/transitive/by-type/example.company.Employee/count")" 400
done
expect "company: GCs whose graph was dropped" "$(val dropped_graph_gcs <"$TMP/co.count")" 0
# without gcwait a GC without a graph says why: every GC wanted one
# (graph=every), so each of them was dropped for the next GC
OPTS=",graph=every,gcwait=off"
record "$TMP/co-off.htr" example.company.Main 400 5 >/dev/null
"$COUNT" "$TMP/co-off.htr" >"$TMP/co-off.count"
expect "gcwait=off: GCs with a graph + GCs whose graph was dropped" \
	"$(($(val graph_gcs <"$TMP/co-off.count") + $(val dropped_graph_gcs <"$TMP/co-off.count")))" \
	"$(val gcs <"$TMP/co-off.count")"
for g in $("$HEAPFS" ls "$TMP/co-off.htr" gc | grep -v latest); do
	info=$("$HEAPFS" cat "$TMP/co-off.htr" "gc/$g/info")
	expect "gcwait=off: GC $g: graph_dropped is the opposite of graph" \
		"$(val graph_dropped <<<"$info")" "$([ "$(val graph <<<"$info")" = yes ] && echo no || echo yes)"
done
# trace/info counts them as the events do (agent_count reads them without fs/)
tinfo=$("$HEAPFS" cat "$TMP/co-off.htr" trace/info)
expect "gcwait=off: trace/info graph_gcs" "$(val graph_gcs <<<"$tinfo")" "$(val graph_gcs <"$TMP/co-off.count")"
expect "gcwait=off: trace/info graph_dropped_gcs" "$(val graph_dropped_gcs <<<"$tinfo")" \
	"$(val dropped_graph_gcs <"$TMP/co-off.count")"
echo "ok: gcwait=off: $(val graph_gcs <"$TMP/co-off.count") of $(val gcs <"$TMP/co-off.count") GCs with a graph"
# threads asking at once pass one at a time (gcwait.c's gate), whether they
# call System.gc(), Runtime.gc() or MemoryMXBean.gc() (gcwait=off: 3-4 of 24)
"${JAVAC:-javac}" -d "$TMP/gcc" tests/integration/GcCalls.java || fail "javac GcCalls"
OPTS=",graph=every"
"$JAVA" -Xmx128m "-agentpath:$AGENT=out=$TMP/gcc.htr$OPTS" -cp "$TMP/gcc" GcCalls 4 6 mixed >"$TMP/gcc.out"
"$COUNT" "$TMP/gcc.htr" >"$TMP/gcc.count"
[ "$(val gcs <"$TMP/gcc.count")" -ge 24 ] || fail "GcCalls: fewer GCs than the 24 calls: $(cat "$TMP/gcc.count")"
expect "GcCalls, 4 threads x 6 calls of the three kinds: GCs with a graph" \
	"$(val graph_gcs <"$TMP/gcc.count")" "$(val gcs <"$TMP/gcc.count")"

echo "== allocation-triggered GCs milliseconds apart: each gets a graph"
# AllocBursts: 2 threads allocate 256 KB arrays in a row; a 4 MB young
# generation fills every 16 of them, so the allocations start GC after GC
# within milliseconds (no call gcwait could hold).  Allocations after a GC
# wait for its walk; under Serial (no concurrent cycle, whose pauses follow
# one another by themselves) every GC has its graph (3 of 16 before).
"${JAVAC:-javac}" -d "$TMP/ab" tests/integration/AllocBursts.java || fail "javac AllocBursts"
"$JAVA" -Xmx64m -Xmn4m -XX:+UseSerialGC "-agentpath:$AGENT=out=$TMP/ab.htr,graph=every" -cp "$TMP/ab" \
	AllocBursts 2 100 >"$TMP/ab.out"
"$COUNT" "$TMP/ab.htr" >"$TMP/ab.count"
[ "$(val gcs <"$TMP/ab.count")" -ge 8 ] || fail "AllocBursts: too few GCs to tell: $(cat "$TMP/ab.count")"
expect "AllocBursts under Serial: GCs with a graph" "$(val graph_gcs <"$TMP/ab.count")" \
	"$(val gcs <"$TMP/ab.count")"
# under G1 the bursts start concurrent cycles, whose remark and cleanup
# pauses have no cause of their own: named after the collector that counted
# them (G1 counts them before it posts their GC start), never "GC pause"
"$JAVA" -Xmx64m -Xmn4m -XX:+UseG1GC "-agentpath:$AGENT=out=$TMP/ab-g1.htr,graph=every" -cp "$TMP/ab" \
	AllocBursts 2 100 >/dev/null
"$HEAPFS" cat "$TMP/ab-g1.htr" timeline/gcs.csv >"$TMP/ab-g1.csv"
if awk -F, 'NR > 1 && $5 == "GC pause"' "$TMP/ab-g1.csv" | grep -q .; then
	fail "G1: GCs without a cause: $(cat "$TMP/ab-g1.csv")"
fi
echo "ok: G1: every GC has its cause or collector ($(grep -c 'concurrent cycle' "$TMP/ab-g1.csv") concurrent-cycle pauses)"

echo "== Churn without graphs: every Integer of the churn phase"
OPTS=",graph=none"
record "$TMP/ch.htr" example.churn.Server 300000 2000 >"$TMP/ch.out"
"$COUNT" "$TMP/ch.htr" >"$TMP/ch.count"
expect "Integers at Worker.sum" \
	"$(app_count "$TMP/ch.htr" java.lang.Integer example.churn.Worker.sum:22)" "$(sed -n 's/^integers=//p' "$TMP/ch.out")"
expect "GCs with graph" "$(val graph_gcs <"$TMP/ch.count")" 0
[ "$(val gcs <"$TMP/ch.count")" -gt 0 ] || fail "churn: no GC recorded"

echo "== a JVM killed with SIGKILL leaves a trace readable up to its last GC"
OPTS=",graph=2"
"$JAVA" -Xmx64m "-agentpath:$AGENT=out=$TMP/kill.htr$OPTS" -cp "$CP" example.gcstress.Pipeline 50000000 8 \
	>/dev/null 2>&1 &
pid=$!
for _ in $(seq 300); do
	sleep 0.1
	n=$("$COUNT" "$TMP/kill.htr" 2>/dev/null | val gcs || true)
	[ "${n:-0}" -ge 3 ] && break
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
"$COUNT" "$TMP/kill.htr" >"$TMP/kill.count" || fail "killed trace does not open"
[ "$(val gcs <"$TMP/kill.count")" -ge 3 ] || fail "killed trace: fewer than 3 GCs"
# (truncated is 1 when the kill tore a frame, 0 when it fell between two)
"$HEAPFS" check "$TMP/kill.htr" >"$TMP/kill.check" 2>"$TMP/kill.check.err" ||
	fail "heapfs check: $(cat "$TMP/kill.check" "$TMP/kill.check.err")"
# check prints trace/info's lines, then its own findings
grep -v '^warning	\|^heap_states	\|^reachable_summaries	\|^last_gc_' "$TMP/kill.check" >"$TMP/kill.summary"
"$HEAPFS" cat "$TMP/kill.htr" trace/info | cmp -s - "$TMP/kill.summary" ||
	fail "check's summary is not trace/info: $(diff <("$HEAPFS" cat "$TMP/kill.htr" trace/info) "$TMP/kill.summary")"
[ "$(val gcs <"$TMP/kill.check")" = "$(val gcs <"$TMP/kill.count")" ] || fail "check: gcs differ from agent_count's"
want=no; [ "$(val truncated <"$TMP/kill.count")" = 1 ] && want=yes
[ "$(val truncated <"$TMP/kill.check")" = $want ] || fail "check: truncated is not $want"
if [ $want = yes ]; then
	grep -q "truncated at offset $(val truncated_at <"$TMP/kill.check")" "$TMP/kill.check.err" ||
		fail "check: the truncation offset differs between stdout and stderr"
fi
"$HEAPFS" cat "$TMP/kill.htr" gc/latest/info | grep -q "^graph" || fail "killed trace: no gc/latest/info"
echo "ok: killed trace opens with $(val gcs <"$TMP/kill.count") GCs"
# the agent's time taken from the program, per GC (agent.overhead): the
# GC windows run on the program's own time
n_over=$("$HEAPFS" cat "$TMP/mc.htr" trace/info | awk -F'\t' '$1 == "agent.overhead" { print $2 + 0 }')
n_gcs=$("$HEAPFS" cat "$TMP/mc.htr" trace/info | val gcs)
[ "${n_over:-0}" = "$n_gcs" ] || fail "agent.overhead: ${n_over:-0} GCs of $n_gcs"
"$HEAPFS" cat "$TMP/mc.htr" windows/churn | grep -q '^clock	program: the recording.s time less the [0-9]* ms' ||
	fail "windows/churn: not on the program's own time: $("$HEAPFS" cat "$TMP/mc.htr" windows/churn | grep clock)"
echo "ok: agent.overhead for each of $n_gcs GCs; windows on the program's own time"
echo "test_agent: all passed"
