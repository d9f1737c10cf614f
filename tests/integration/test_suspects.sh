#!/usr/bin/env bash
# test_suspects.sh - the `suspects` file (issue 10) through `heapfs cat` (no
# FUSE) on the synthetic scenarios and the recorded example, with what
# docs/scenarios.md constructs:
#   multicache   Products held by the two static maps IdCache.byId and
#                NameCache.byName: a leak with shared ownership (gc-roots
#                paper 5.1); Products allocated at Loader.load:30
#   buggystack   the stack's Object[] keeps every popped TestObject
#   churn        Integers (Integer.valueOf:1081) born and dead in GCs 11..20
#   gcstress     80% of the time in GC over GCs 11..20
#   company      nothing grows: no leak
#   examples/multicache.htr   the same program recorded from a JVM
# Every path a report names must resolve (`heapfs ls` on its directory, or
# `heapfs cat` of the file), and the text stays under 200 lines.
#
# Usage: HEAPFS=/abs/path/build/heapfs bash tests/integration/test_suspects.sh
. "$(dirname "$0")/mountlib.bash"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

for s in multicache buggystack churn gcstress company; do
	t "$HEAPFS" synth "$s" -o "$WORK/$s.htr" >/dev/null || fail "synth $s"
done
cp "$ROOT/examples/multicache.htr" "$WORK/recorded.htr" || fail "examples/multicache.htr missing"

# report TRACE: the suspects text, checked for size and paths
report() {
	local out="$WORK/${1##*/}.suspects" lines path
	t "$HEAPFS" cat "$1" suspects >"$out" || fail "cat suspects of ${1##*/}"
	lines=$(wc -l <"$out")
	[ "$lines" -lt 200 ] || fail "${1##*/}: $lines lines"
	while read -r path; do
		case "$path" in
		*/) t "$HEAPFS" ls "$1" "$path" >/dev/null || fail "${1##*/}: names missing $path" ;;
		*) t "$HEAPFS" cat "$1" "$path" >/dev/null ||
			t "$HEAPFS" ls "$1" "$path" >/dev/null || fail "${1##*/}: names missing $path" ;;
		esac
	done < <(sed -n 's/^ *-> //p' "$out")
	t "$HEAPFS" cat "$1" suspects.json >"$out.json" || fail "cat suspects.json of ${1##*/}"
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out.json" 2>/dev/null ||
		! command -v python3 >/dev/null || fail "${1##*/}: suspects.json is not JSON"
	echo "$out"
}
has() { grep -qF -- "$2" "$1" || fail "${1##*/}: does not say '$2'"; }
hasnt() { ! grep -qF -- "$2" "$1" || fail "${1##*/}: says '$2'"; }

R=$(report "$WORK/multicache.htr")
has "$R" "1. Leak"
has "$R" "static/example.multicache.IdCache/byId"
has "$R" "static/example.multicache.NameCache/byName"
has "$R" "type example.multicache.Product:"
has "$R" "site example.multicache.Loader.load:30"
has "$R" "shared ownership"
ok "multicache: both cache fields, Product, its site, shared ownership"

R=$(report "$WORK/buggystack.htr")
has "$R" "type java.lang.Object[]:"
has "$R" "example.buggystack.BuggyStack"
ok "buggystack: the stack's Object[]"

R=$(report "$WORK/churn.htr")
has "$R" "Churn ("
has "$R" "type java.lang.Integer: 1000000 objects, 16000000 bytes"
has "$R" "site java.lang.Integer.valueOf:1081"
ok "churn: Integer and its site"

R=$(report "$WORK/gcstress.htr")
has "$R" "80% of the time in GC over GC 011..020"
ok "gcstress: the window"

R=$(report "$WORK/company.htr")
hasnt "$R" "Leak ("
has "$R" "no leak window"
ok "company: no leak"

R=$(report "$WORK/recorded.htr")
has "$R" "1. Leak"
has "$R" "static/example.multicache.IdCache/byId"
has "$R" "static/example.multicache.NameCache/byName"
has "$R" "example.multicache.Product"
has "$R" "example.multicache.Loader.load:15"
has "$R" "shared ownership"
ok "recorded multicache: both cache fields, Product, its site, shared ownership"
