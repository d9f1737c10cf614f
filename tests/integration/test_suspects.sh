#!/usr/bin/env bash
# test_suspects.sh - the `suspects` file through `heapfs cat` (no
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
# each grower's path starts at one of the two caches: the path is of a member
# its first root keeps, not of the group's oldest member (a HashMap$Node of
# the JDK's system properties, before)
n=$(grep -c '^ *path: ' "$R")
[ "$n" -ge 3 ] || fail "recorded: $n path lines"
grep '^ *path: ' "$R" | grep -vE '^ *path: static example\.multicache\.(IdCache\.byId|NameCache\.byName) ' &&
	fail "recorded: a path does not start at a cache"
ok "recorded multicache: the $n growers' paths start at a cache"

# Thresholds through `heapfs cat -o` (and `heapfs ls -o`): the same options
# as a mount.  multicache's two maps each retain less than 40% of the heap
# (the Products and their names are shared by both: dominated by neither),
# so at suspect_big_pct=40 no single object is a big retainer; at the
# default 10% both maps are.  suspect_top=1 keeps one group per ranking:
# one type and one site among the leak's growers instead of three each.
D="$WORK/multicache.htr.suspects"
t "$HEAPFS" cat -o suspect_big_pct=40 "$WORK/multicache.htr" suspects >"$WORK/big40" ||
	fail "cat -o suspect_big_pct=40 suspects"
has "$WORK/big40" "big retainers (40% of the heap)"
has "$WORK/big40" "retaining at least 40% of"
hasnt "$WORK/big40" "(java.util.HashMap) retains"
has "$D" "(java.util.HashMap) retains"
t "$HEAPFS" cat -o suspect_top=1 -o suspect_big_pct=10 "$WORK/multicache.htr" suspects >"$WORK/top1" ||
	fail "cat -o suspect_top=1 suspects"
growers() { grep -cE '^   (type|site) [^ ]+: \+[0-9]+ bytes' "$1" || true; }
[ "$(growers "$D")" = 6 ] || fail "default: $(growers "$D") leak groups, expected 3 types + 3 sites"
[ "$(growers "$WORK/top1")" = 2 ] || fail "suspect_top=1: $(growers "$WORK/top1") leak groups, expected 2"
ok "heapfs cat -o: suspect_big_pct and suspect_top change the report"

# refused: an unknown option, a value out of range, a FUSE option; each
# named in the message, exit status 2, nothing on stdout
refused() { # WANT ARGS...: heapfs ARGS... must fail with 2 naming WANT
	local want=$1 rc=0
	shift
	t "$HEAPFS" "$@" >"$WORK/ref.out" 2>"$WORK/ref.err" || rc=$?
	[ "$rc" = 2 ] || fail "heapfs $*: exit $rc, expected 2"
	has "$WORK/ref.err" "$want"
	[ ! -s "$WORK/ref.out" ] || fail "heapfs $*: printed on stdout"
}
refused "unknown option 'suspect_bogus=1'" cat -o suspect_bogus=1 "$WORK/multicache.htr" suspects
refused "invalid value for suspect_top: '9'" cat -o suspect_top=9 "$WORK/multicache.htr" suspects
refused "option 'allow_other' is a mount option" cat -o allow_other "$WORK/multicache.htr" suspects
refused "unknown option 'nope'" ls -o cache_mb=64,nope "$WORK/multicache.htr"
refused "missing argument after -o" cat "$WORK/multicache.htr" suspects -o
t "$HEAPFS" ls -l -o suspect_top=2 "$WORK/multicache.htr" / >"$WORK/ls.out" || fail "ls -l -o suspect_top=2"
has "$WORK/ls.out" "suspects"
ok "heapfs cat/ls -o: bad options refused, named"
