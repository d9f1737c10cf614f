#!/usr/bin/env bash
# Objects alive only through java.lang.ref.Reference objects or through
# java.lang.Class's own fields are in a recorded graph, and referents keep
# nothing alive in it, as in an imported dump (docs/hprof.md, "Retained
# sizes").  AgentRefs (its TRUTH at the top) is recorded with graph=every
# and dumped with jcmd GC.heap_dump at the end (the dump's GC is the
# recording's last graph); the dump is the independent oracle:
#   - by-type counts of the recording's last graph GC equal the dump's
#     for the classes planted (the soft-only graph, the weakly and strongly
#     held objects, the References, the enum's cached values clone,
#     Class$ReflectionData) and equal the TRUTH where it is known;
#   - retained sizes of the static lists holding the references equal the
#     dump's (a soft referent retained by nothing: SOFTS retains the list,
#     its array and the SoftReferences only);
#   - the lambda's hidden class has the dump's name (Foo$$Lambda$N+0x...).
# Skipped (exit 0) without a JDK.
# shellcheck disable=SC2016
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
if ! command -v javac >/dev/null || ! command -v jcmd >/dev/null; then
	echo "(no JDK: test_agent_refs.sh skipped)"
	exit 0
fi
${MAKE:-make} -s BUILD="$BUILD" agent >/dev/null
AGENT=$PWD/$BUILD/libheapfs-agent.so
TMP=$(mktemp -d)
JPID=
trap '[ -n "$JPID" ] && kill "$JPID" 2>/dev/null; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
N=400 M=300

"${JAVAC:-javac}" -d "$TMP/cls" tests/integration/AgentRefs.java || fail "javac AgentRefs"
java -Xmx512m -Xshare:off "-agentpath:$AGENT=out=$TMP/rec.htr,graph=every" -cp "$TMP/cls" \
	AgentRefs "$TMP/ready" "$TMP/done" "$N" "$M" >"$TMP/java.out" 2>&1 &
JPID=$!
for _ in $(seq 600); do [ -e "$TMP/ready" ] || ! kill -0 "$JPID" 2>/dev/null && break; sleep 0.05; done
[ -e "$TMP/ready" ] || fail "AgentRefs did not get ready: $(cat "$TMP/java.out")"
jcmd "$JPID" GC.heap_dump "$TMP/dump.hprof" >"$TMP/jcmd.out" || fail "jcmd: $(cat "$TMP/jcmd.out")"
touch "$TMP/done"
wait "$JPID" || fail "AgentRefs failed: $(cat "$TMP/java.out")"
JPID=

gc=
for g in $("$HEAPFS" ls "$TMP/rec.htr" gc | grep -v latest | sort -r); do
	if "$HEAPFS" cat "$TMP/rec.htr" "gc/$g/info" | grep -q $'^graph\tyes'; then gc=$g; break; fi
done
[ -n "$gc" ] || fail "no recorded GC has a graph"

count() { "$HEAPFS" cat "$1" "gc/$2/by-type/$3/count" 2>/dev/null || echo 0; }
for c in 'AgentRefs$SoftHeld' 'AgentRefs$SoftLeaf' 'AgentRefs$WeakHeld' java.lang.ref.SoftReference \
	java.lang.ref.WeakReference 'AgentRefs$Color[]' 'java.lang.Class$ReflectionData' long[]; do
	r=$(count "$TMP/rec.htr" "$gc" "$c")
	d=$(count "$TMP/dump.hprof" 000 "$c")
	[ "$r" = "$d" ] || fail "$c: $r recorded at GC $gc, $d in the dump of that GC"
	echo "ok - $c: $r recorded = dump"
done
for x in 'AgentRefs$SoftHeld':$N 'AgentRefs$SoftLeaf':$N 'AgentRefs$WeakHeld':$M 'AgentRefs$Color[]':2; do
	c=${x%:*} want=${x##*:}
	r=$(count "$TMP/rec.htr" "$gc" "$c")
	[ "$r" = "$want" ] || fail "$c: $r recorded, the program made $want"
done
[ "$(count "$TMP/rec.htr" "$gc" 'java.lang.Class$ReflectionData')" -ge 1 ] || fail "no Class\$ReflectionData recorded"

# retained sizes of the static lists: the recording's equal the dump's
rs() { "$HEAPFS" cat "$1" "gc/$2/roots/static/AgentRefs/$3" | awk -F'\t' 'NR == 2 { print $3 }'; }
for s in SOFTS WEAKS STRONG; do
	r=$(rs "$TMP/rec.htr" "$gc" "$s")
	d=$(rs "$TMP/dump.hprof" 000 "$s")
	[ -n "$r" ] && [ "$r" = "$d" ] || fail "AgentRefs.$s retains $r bytes in the recording, $d in the dump"
	echo "ok - AgentRefs.$s retained_size $r = dump"
done
# SOFTS retains no SoftHeld: less than the soft referents' own bytes added
soft_deep=$("$HEAPFS" cat "$TMP/dump.hprof" 'gc/000/by-type/AgentRefs$SoftHeld/deep_size')
r=$(rs "$TMP/rec.htr" "$gc" SOFTS)
[ "$r" -lt "$soft_deep" ] || fail "SOFTS retains $r bytes, as much as its referents' $soft_deep: referents kept alive"

# the lambda's hidden class: the dump's spelling
lam_d=$("$HEAPFS" ls "$TMP/dump.hprof" gc/000/by-type | grep -F 'AgentRefs$$Lambda$' || true)
lam_r=$("$HEAPFS" ls "$TMP/rec.htr" "gc/$gc/by-type" | grep -F 'AgentRefs$$Lambda$' || true)
[ -n "$lam_d" ] && [ "$lam_r" = "$lam_d" ] || fail "the lambda's class: '$lam_r' recorded, '$lam_d' in the dump"
echo "ok - hidden class named $lam_r as in the dump"
echo "test_agent_refs: ok (GC $gc)"
