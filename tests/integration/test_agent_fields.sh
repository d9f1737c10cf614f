#!/usr/bin/env bash
# Field names in recorded graphs equal a heap dump's.  FieldNames (a Guava
# cache in a static field, and classes of its own that extend JDK classes
# and implement interfaces with static fields at several levels) is
# recorded with the agent (a graph after every GC), and the same process
# is dumped with jcmd GC.heap_dump at the end; the dump's GC is also the
# recording's last.  The dump is the independent source: the JVM writes
# field names into it itself.  Compared, per class of interest:
#   - every reference of every object, as "class, field, target type" with
#     its number of objects (objects/<id>/refs of both);
#   - the static fields of the program's classes and interfaces and of
#     java.io.ObjectStreamConstants (roots/static/<class>/<field>);
#   - and references whose field is known by construction (FieldNames's
#     fields each point at an object of a type of their own).
# Skipped (exit 0, with a message) without a JDK or without Guava (Debian
# package libguava-java).
# (class names hold '$': single-quoted on purpose)
# shellcheck disable=SC2016
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
GUAVA=${GUAVA:-/usr/share/java/guava.jar}
if ! command -v javac >/dev/null || ! command -v jcmd >/dev/null; then
	echo "(no JDK: test_agent_fields.sh skipped)"
	exit 0
fi
if [ ! -r "$GUAVA" ]; then
	echo "($GUAVA missing (Debian package libguava-java): test_agent_fields.sh skipped)"
	exit 0
fi
${MAKE:-make} -s BUILD="$BUILD" agent >/dev/null
AGENT=$PWD/$BUILD/libheapfs-agent.so
TMP=$(mktemp -d)
JPID=
trap '[ -n "$JPID" ] && kill "$JPID" 2>/dev/null; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"${JAVAC:-javac}" -cp "$GUAVA" -d "$TMP/cls" tests/integration/FieldNames.java || fail "javac FieldNames"
java -Xmx128m "-agentpath:$AGENT=out=$TMP/rec.htr,graph=every" -cp "$TMP/cls:$GUAVA" \
	FieldNames "$TMP/ready" "$TMP/done" >"$TMP/java.out" 2>&1 &
JPID=$!
for _ in $(seq 600); do [ -e "$TMP/ready" ] || ! kill -0 "$JPID" 2>/dev/null && break; sleep 0.05; done
[ -e "$TMP/ready" ] || fail "FieldNames did not get ready: $(cat "$TMP/java.out")"
jcmd "$JPID" GC.heap_dump "$TMP/dump.hprof" >"$TMP/jcmd.out" || fail "jcmd: $(cat "$TMP/jcmd.out")"
touch "$TMP/done"
wait "$JPID" || fail "FieldNames failed: $(cat "$TMP/java.out")"
JPID=

# the recording's last GC with a graph
gc=
for g in $("$HEAPFS" ls "$TMP/rec.htr" gc | grep -v latest | sort -r); do
	info=$("$HEAPFS" cat "$TMP/rec.htr" "gc/$g/info")
	if grep -q $'^graph\tyes' <<<"$info"; then gc=$g; break; fi
done
[ -n "$gc" ] || fail "no recorded GC has a graph"

CLASSES=(
	'com.google.common.cache.LocalCache$Segment' com.google.common.cache.LocalCache
	'com.google.common.cache.LocalCache$LocalManualCache' 'com.google.common.cache.LocalCache$StrongEntry'
	'com.google.common.cache.LocalCache$StrongValueReference' java.util.concurrent.atomic.AtomicReferenceArray
	'FieldNames$Guard' 'FieldNames$Guard2' 'FieldNames$Out' 'java.io.ObjectOutputStream$BlockDataOutputStream'
)
STATIC_CLASSES=(FieldNames 'FieldNames$Base' 'FieldNames$Mid' 'FieldNames$Side' 'FieldNames$Top'
	'FieldNames$Guard' 'FieldNames$Guard2' 'FieldNames$Out' java.io.ObjectStreamConstants)

# refs FILE GC: "count<TAB>class<TAB>field<TAB>target type" over every
# object of the CLASSES
refs() {
	local c paths
	for c in "${CLASSES[@]}"; do
		mapfile -t paths < <("$HEAPFS" cat "$1" "gc/$2/by-type/$c/objects" 2>/dev/null |
			awk -v g="$2" '{ print "gc/" g "/objects/" $1 "/refs" }')
		[ "${#paths[@]}" -gt 0 ] || continue
		"$HEAPFS" cat "$1" "${paths[@]}" |
			awk -F'\t' -v c="$c" '$1 != "field" { print c "\t" $1 "\t" $3 }'
	done | sort | uniq -c | awk '{ n = $1; sub(/^ *[0-9]+ /, ""); print n "\t" $0 }'
}
# statics FILE GC: "class<TAB>field<TAB>target type" of the STATIC_CLASSES
# (the dump's pseudo-fields such as <resolved_references> left out)
statics() {
	local c f
	for c in "${STATIC_CLASSES[@]}"; do
		for f in $("$HEAPFS" ls "$1" "gc/$2/roots/static/$c" 2>/dev/null | grep -v '^<'); do
			printf '%s\t%s\t%s\n' "$c" "$f" \
				"$("$HEAPFS" cat "$1" "gc/$2/roots/static/$c/$f" | awk -F'\t' 'NR == 2 { print $2 }')"
		done
	done | sort
}

refs "$TMP/rec.htr" "$gc" >"$TMP/rec.refs"
refs "$TMP/dump.hprof" latest >"$TMP/dump.refs"
statics "$TMP/rec.htr" "$gc" >"$TMP/rec.statics"
statics "$TMP/dump.hprof" latest >"$TMP/dump.statics"

# by construction (FieldNames.java, and the fields of Guava's and the
# JDK's classes that point at a type nothing else does)
cat >"$TMP/expected" <<'EOF'
com.google.common.cache.LocalCache$Segment	sync	java.util.concurrent.locks.ReentrantLock$NonfairSync
com.google.common.cache.LocalCache$Segment	map	com.google.common.cache.LocalCache
com.google.common.cache.LocalCache$Segment	table	java.util.concurrent.atomic.AtomicReferenceArray
com.google.common.cache.LocalCache$Segment	readCount	java.util.concurrent.atomic.AtomicInteger
com.google.common.cache.LocalCache$StrongValueReference	referent	FieldNames$Value
FieldNames$Guard	sync	java.util.concurrent.locks.ReentrantLock$NonfairSync
FieldNames$Guard	payload	FieldNames$GuardPayload
FieldNames$Guard	other	FieldNames$GuardOther
FieldNames$Guard2	sync	java.util.concurrent.locks.ReentrantLock$NonfairSync
FieldNames$Guard2	payload	FieldNames$GuardPayload
FieldNames$Guard2	other	FieldNames$GuardOther
FieldNames$Guard2	p2	FieldNames$Guard2Payload
FieldNames$Out	mine	FieldNames$OutPayload
FieldNames$Out	bout	java.io.ObjectOutputStream$BlockDataOutputStream
EOF
cat >"$TMP/expected.statics" <<'EOF'
FieldNames$Base	BASE_TOKEN	FieldNames$BaseToken
FieldNames$Base	BASE_TOKEN2	FieldNames$BaseToken2
FieldNames$Mid	MID_TOKEN	FieldNames$MidToken
FieldNames$Side	SIDE_TOKEN	FieldNames$SideToken
FieldNames$Top	TOP_TOKEN	FieldNames$TopToken
FieldNames$Guard	GUARD_STATIC	FieldNames$GuardStatic
FieldNames$Guard	guardStatic2	FieldNames$GuardStatic2
FieldNames$Guard2	G2_STATIC	FieldNames$Guard2Static
FieldNames$Out	OUT_STATIC	FieldNames$OutStatic
FieldNames	GUARD	FieldNames$Guard
java.io.ObjectStreamConstants	SUBSTITUTION_PERMISSION	java.io.SerializablePermission
EOF
missing=$(cut -f2- "$TMP/rec.refs" | sort | comm -13 - <(sort "$TMP/expected")) || true
[ -z "$missing" ] || fail "recorded refs lack, by construction: $missing$(printf '\n-- recorded:\n'; cat "$TMP/rec.refs")"
missing=$(comm -13 "$TMP/rec.statics" <(sort "$TMP/expected.statics")) || true
[ -z "$missing" ] || fail "recorded statics lack, by construction: $missing$(printf '\n-- recorded:\n'; cat "$TMP/rec.statics")"
echo "ok: $(wc -l <"$TMP/expected") references and $(wc -l <"$TMP/expected.statics") static fields known by construction are named right"

[ "$(wc -l <"$TMP/dump.refs")" -ge "$(wc -l <"$TMP/expected")" ] || fail "dump refs: $(cat "$TMP/dump.refs")"
diff "$TMP/dump.refs" "$TMP/rec.refs" >"$TMP/refs.diff" ||
	fail "recorded references differ from the heap dump's (< dump, > recording):
$(cat "$TMP/refs.diff")"
diff "$TMP/dump.statics" "$TMP/rec.statics" >"$TMP/statics.diff" ||
	fail "recorded static fields differ from the heap dump's (< dump, > recording):
$(cat "$TMP/statics.diff")"
nrefs=$(awk -F'\t' '{ n += $1 } END { print n }' "$TMP/rec.refs")
echo "ok: recorded GC $gc and the heap dump agree on $nrefs references ($(wc -l <"$TMP/rec.refs") class/field/target kinds," \
	"${#CLASSES[@]} classes) and $(wc -l <"$TMP/rec.statics") static fields of ${#STATIC_CLASSES[@]} classes"
echo "PASS: test_agent_fields.sh"
