#!/usr/bin/env bash
# Bloat from empty collections on a real program (issue: empty HashMaps
# were missed and value wrappers called collections).  EmptyCollections
# plants 25,000 empty HashMaps (20,000 of its own, 5,000 inside empty
# HashSets), 10,000 empty ArrayLists, 5,000 empty HashSets, 2,000 maps of
# one entry, and a Guava cache of 20,000 entries (value references: one
# reference each, not collections).  jcmd dumps it; suspects must name the
# empty collections with their numbers (the JDK's own few empty ones may
# add to each) and no value wrapper.
# Skipped (exit 0, with a message) without a JDK or without Guava (Debian
# package libguava-java).
# shellcheck disable=SC2016
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
GUAVA=${GUAVA:-/usr/share/java/guava.jar}
if ! command -v javac >/dev/null || ! command -v jcmd >/dev/null; then
	echo "(no JDK: test_bloat.sh skipped)"
	exit 0
fi
if [ ! -r "$GUAVA" ]; then
	echo "($GUAVA missing (Debian package libguava-java): test_bloat.sh skipped)"
	exit 0
fi
TMP=$(mktemp -d)
JPID=
trap '[ -n "$JPID" ] && kill "$JPID" 2>/dev/null; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }

"${JAVAC:-javac}" -cp "$GUAVA" -d "$TMP/cls" tests/integration/EmptyCollections.java ||
	fail "javac EmptyCollections"
java -Xmx256m -cp "$TMP/cls:$GUAVA" EmptyCollections "$TMP/ready" "$TMP/done" >"$TMP/java.out" 2>&1 &
JPID=$!
for _ in $(seq 600); do [ -e "$TMP/ready" ] || ! kill -0 "$JPID" 2>/dev/null && break; sleep 0.05; done
[ -e "$TMP/ready" ] || fail "EmptyCollections did not get ready: $(cat "$TMP/java.out")"
jcmd "$JPID" GC.heap_dump "$TMP/dump.hprof" >"$TMP/jcmd.out" || fail "jcmd: $(cat "$TMP/jcmd.out")"
touch "$TMP/done"
wait "$JPID" || fail "EmptyCollections failed: $(cat "$TMP/java.out")"
JPID=

"$HEAPFS" cat "$TMP/dump.hprof" suspects >"$TMP/sus.txt" 2>"$TMP/sus.err" ||
	fail "cat suspects: $(cat "$TMP/sus.err")"
# "E of N reachable TYPE are empty (B bytes)"
empty_of() { awk -v t="$1" '$2 == "of" && $4 == "reachable" && $5 == t && $6 == "are" && $7 == "empty" { print $1, $3 }' "$TMP/sus.txt"; }
count_of() { "$HEAPFS" cat "$TMP/dump.hprof" "gc/latest/by-type/$1/only-reachable/count"; }
check() { # TYPE PLANTED
	local got e n all
	got=$(empty_of "$1")
	[ -n "$got" ] || fail "suspects does not name the empty $1: $(grep -i empty "$TMP/sus.txt")"
	read -r e n <<<"$got"
	all=$(count_of "$1")
	[ "$n" = "$all" ] || fail "$1: of $n, but gc/latest/by-type/$1/only-reachable/count is $all"
	# the planted ones, and at most the JDK's own besides (every instance
	# the program did not plant empty)
	[ "$e" -ge "$2" ] || fail "$1: $e empty, $2 planted"
	[ "$e" -le "$((all - $3))" ] || fail "$1: $e empty of $all, but $3 of them hold elements"
	ok "$1: $e of $all empty ($2 planted)"
}
check java.util.HashMap 25000 2000
check java.util.ArrayList 10000 3001
check java.util.HashSet 5000 0
grep -q 'structures are empty or hold one' "$TMP/sus.txt" && fail "structures called empty: $(grep 'hold one' "$TMP/sus.txt")"
if grep -E '^ +[0-9]+ of [0-9]+ reachable [^ ]+ are empty' "$TMP/sus.txt" | grep -v -E ' java\.util\.[A-Za-z]+ are empty'; then
	fail "a type other than a java.util collection is called empty"
fi
ok "no value wrapper (Guava's 20,000 value references) is called an empty collection"

# Sparse collections (fill ratio): the 3,000 ArrayLists with room for 100
# and one element each: 300,000 slots, 3,000 used, 297,000 unused slots of
# at least 4 bytes (compressed references; 8 without).  ds/collections
# counts them with the program's others (KEEP, the JDK's); suspects names
# them with ds/collections' numbers.
row=$("$HEAPFS" cat "$TMP/dump.hprof" gc/latest/ds/collections | awk -F'\t' '$1 == "java.util.ArrayList"')
[ -n "$row" ] || fail "ds/collections has no ArrayList row"
IFS=$'\t' read -r _ cnt _ _ ws slots used fill sparse wasted <<<"$row"
[ "$slots" -ge 300000 ] && [ "$used" -ge 3000 ] && [ "$sparse" -ge 3000 ] && [ "$wasted" -ge $((297000 * 4)) ] ||
	fail "ds/collections ArrayList: slots $slots used $used sparse $sparse wasted $wasted, planted 300000/3000/3000/1188000"
[ "$ws" -le "$cnt" ] && [ "$fill" -eq $((used * 100 / slots)) ] || fail "ds/collections ArrayList: inconsistent row: $row"
line=$(tr -s ' \n' ' ' <"$TMP/sus.txt" | grep -o "[0-9]* of [0-9]* reachable java.util.ArrayList use under 25% of their slots ([0-9]* bytes" || true)
[ -n "$line" ] || fail "suspects does not name the sparse ArrayLists: $(grep -i slots "$TMP/sus.txt")"
read -r s_n _ s_all _ _ _ _ _ _ _ _ s_b _ <<<"$line"
[ "$s_n" = "$sparse" ] && [ "$s_all" = "$cnt" ] && [ "${s_b#(}" = "$wasted" ] ||
	fail "suspects' sparse ArrayLists ($line) differ from ds/collections ($sparse of $cnt, $wasted bytes)"
ok "sparse: $sparse of $cnt ArrayLists under 25% full, $wasted bytes of unused slots ($slots slots, $used used)"

# The same program recorded with the agent (a graph at every GC; the
# fields named as the JVM names them): the recorded graph shows the same
# planted bloat as the dump.
AGENT=$(dirname "$HEAPFS")/libheapfs-agent.so
if [ -f "$AGENT" ]; then
	rm -f "$TMP/ready" "$TMP/done"
	java -Xmx256m "-agentpath:$AGENT=out=$TMP/rec.htr,graph=every" -cp "$TMP/cls:$GUAVA" EmptyCollections \
		"$TMP/ready" "$TMP/done" >"$TMP/java2.out" 2>&1 &
	JPID=$!
	for _ in $(seq 600); do [ -e "$TMP/ready" ] || ! kill -0 "$JPID" 2>/dev/null && break; sleep 0.05; done
	[ -e "$TMP/ready" ] || fail "EmptyCollections under the agent did not get ready: $(cat "$TMP/java2.out")"
	jcmd "$JPID" GC.run >/dev/null || fail "jcmd GC.run"
	touch "$TMP/done"
	wait "$JPID" || fail "EmptyCollections under the agent failed: $(cat "$TMP/java2.out")"
	JPID=
	"$HEAPFS" cat "$TMP/rec.htr" gc/latest/ds/collections >"$TMP/rec.coll" || fail "ds/collections of the recording"
	rrow() { awk -F'\t' -v t="$1" '$1 == t' "$TMP/rec.coll"; }
	IFS=$'\t' read -r _ cnt e _ _ slots used _ sparse wasted <<<"$(rrow java.util.ArrayList)"
	[ "${e:-0}" -ge 10000 ] && [ "${sparse:-0}" -ge 3000 ] && [ "${slots:-0}" -ge 300000 ] && [ "${wasted:-0}" -ge $((297000 * 4)) ] ||
		fail "recording: ArrayList row '$(rrow java.util.ArrayList)' misses the planted 10000 empty, 3000 sparse"
	IFS=$'\t' read -r _ _ e _ <<<"$(rrow java.util.HashMap)"
	[ "${e:-0}" -ge 25000 ] || fail "recording: $e empty HashMaps, 25000 planted"
	ok "agent recording: ds/collections shows the planted bloat too (ArrayList: $sparse sparse, $wasted wasted bytes; $e empty HashMaps)"
else
	echo "(no $AGENT: the agent part is skipped)"
fi
echo "PASS: test_bloat.sh"
