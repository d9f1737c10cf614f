#!/usr/bin/env bash
# A leak names the application type that accumulates, not only the JDK
# containers that hold its data.  SessionLeak adds 5,000 sessions before
# each of 3 heap dumps and never releases them; byte[], String,
# HashMap$Node and four more JDK types grow more bytes than the sessions
# themselves, which retain all of them.  Imported as one trace, suspects'
# "groups that grew most" must list SessionLeak$Session first (largest
# retained size) with its +10,000 objects (truth: the program's counts).
# Skipped (exit 0, with a message) without a JDK.
# shellcheck disable=SC2016
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
if ! command -v javac >/dev/null; then
	echo "(no JDK: test_leak_app.sh skipped)"
	exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }

"${JAVAC:-javac}" -d "$TMP/cls" tests/integration/SessionLeak.java || fail "javac SessionLeak"
java -Xmx256m -cp "$TMP/cls" SessionLeak "$TMP/s" 3 >"$TMP/java.out" 2>&1 || fail "SessionLeak: $(cat "$TMP/java.out")"
"$HEAPFS" import -q "$TMP"/s-0.hprof "$TMP"/s-1.hprof "$TMP"/s-2.hprof -o "$TMP/s.htr" ||
	fail "import of the 3 dumps"
"$HEAPFS" cat "$TMP/s.htr" suspects >"$TMP/sus.txt" 2>"$TMP/sus.err" || fail "cat suspects: $(cat "$TMP/sus.err")"
# the grower lines: "type NAME: +B bytes, +N objects"
awk '$1 == "type" && $3 ~ /^\+/ { sub(":", "", $2); print $2, $5 }' "$TMP/sus.txt" >"$TMP/growers.txt"
[ -s "$TMP/growers.txt" ] || fail "no growing types in suspects: $(head -n 30 "$TMP/sus.txt")"
first=$(head -n 1 "$TMP/growers.txt")
[ "$first" = 'SessionLeak$Session +10000' ] ||
	fail "first grower is '$first', expected SessionLeak\$Session +10000; all: $(tr '\n' ';' <"$TMP/growers.txt")"
# the JDK types outgrew it in bytes (what hid it before)
jdk=$("$HEAPFS" cat "$TMP/s.htr" windows/diff/leak/growing | awk -F'\t' '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	$1 == "type" && $2 == "SessionLeak$Session" { s = $col["net_bytes"] }
	$1 == "type" { nb[$2] = $col["net_bytes"] }
	END { n = 0; for (k in nb) if (k ~ /^java\./ && nb[k] > s) n++; print n }')
[ "$jdk" -ge 6 ] || fail "only $jdk JDK types outgrew the sessions: the test no longer plants what it says"
ok "SessionLeak\$Session named first among the growers (+10,000), though $jdk JDK types grew more bytes"

# One dump alone (no window): the first finding says, as MAT's leak
# suspects do, how many sessions accumulated where, under which root, and
# what they retain.  Truth: 15,000 sessions after the third dump, held by
# the static SESSIONS list (its Object[] the accumulation point); their
# bytes are the sessions' group retained size (disjoint: no session holds
# another), read from the tree's own closure file as the brute force.
"$HEAPFS" cat "$TMP/s-2.hprof" suspects >"$TMP/one.txt" 2>"$TMP/one.err" || fail "cat suspects of one dump: $(cat "$TMP/one.err")"
want_b=$("$HEAPFS" cat "$TMP/s-2.hprof" 'gc/000/by-type/SessionLeak$Session/retained_size')
first=$(awk '/^1\. /, /^$/' "$TMP/one.txt" | tr -s ' \n' ' ')
case "$first" in
*"15000 instances of SessionLeak\$Session, retained through java.lang.Object[] (object "*") under static SessionLeak.SESSIONS, occupy $want_b bytes"*) ;;
*) fail "the first finding of one dump does not name 15000 sessions, Object[], static SessionLeak.SESSIONS and $want_b bytes: $first" ;;
esac
ok "one dump: the first finding names 15000 SessionLeak\$Session, the accumulation point Object[], static SessionLeak.SESSIONS, $want_b bytes"
echo "PASS: test_leak_app.sh"
