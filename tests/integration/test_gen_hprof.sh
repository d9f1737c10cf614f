#!/usr/bin/env bash
# A heap dump written directly in HPROF format by tests/tools/gen_hprof
# (the generator of the 10 GB dump of tests/bench/bench_huge_dump.sh, here
# at 60,000 entries): heapfs's info, by-type/table, dominators/top and
# suspects agree with the figures the construction fixes (gen_hprof -t).
#
#   GEN_N=30000000 GEN_G=1000000 DUMP=/big/x.hprof bash tests/integration/test_gen_hprof.sh
#     checks a dump of that size instead and keeps the dump when DUMP is
#     given; READ=X.htr (heapfs import DUMP -o X.htr) reads that trace
#     instead of opening the dump for each file (the bench runs it so).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
TOOLS=$(dirname "$HEAPFS")/tools
N=${GEN_N:-60000}
G=${GEN_G:-3000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
DUMP=${DUMP:-$TMP/gen.hprof}
TRUTH=$TMP/truth
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }

[ -s "$DUMP" ] || "$TOOLS/gen_hprof" -n "$N" -g "$G" -o "$DUMP" || fail "gen_hprof"
# the truth always comes from a run of the generator, never from heapfs;
# the dump is checked to be that run's (GEN_SAME=1: the caller made it with
# these -n and -g and a second 10 GB copy is not worth writing)
if [ -n "${GEN_SAME:-}" ]; then
	"$TOOLS/gen_hprof" -n "$N" -g "$G" -t "$TRUTH" || fail "gen_hprof -t"
else
	"$TOOLS/gen_hprof" -n "$N" -g "$G" -o "$TMP/again.hprof" -t "$TRUTH" || fail "gen_hprof -t"
	cmp -s "$DUMP" "$TMP/again.hprof" || fail "$DUMP is not gen_hprof -n $N -g $G's dump"
	rm -f "$TMP/again.hprof"
fi
truth() { awk -v k="$1" '$1 == k { print $2 }' "$TRUTH"; }
READ=${READ:-$DUMP}

info=$("$HEAPFS" cat "$READ" gc/000/info)
field() { awk -v k="$1" '$1 == k { print $2 }' <<<"$info"; }
[ "$(field objects)" = "$(truth objects)" ] || fail "objects $(field objects), built $(truth objects)"
[ "$(field reachable_objects)" = "$(truth reachable)" ] ||
	fail "reachable_objects $(field reachable_objects), built $(truth reachable)"
ok "info: $(truth objects) objects, $(truth reachable) reachable"

table=$("$HEAPFS" cat "$READ" gc/000/by-type/table)
col() { awk -F'\t' -v t="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
	$1 == t { print $(k[c]) }' <<<"$table"; }
for t in app.Entry 'byte[]' 'java.lang.Object[]' app.Shared app.Garbage; do
	[ "$(col "$t" count)" = "$(truth "count.$t")" ] || fail "$t count $(col "$t" count), built $(truth "count.$t")"
	[ "$(col "$t" shallow_size)" = "$(truth "shallow.$t")" ] ||
		fail "$t shallow_size $(col "$t" shallow_size), built $(truth "shallow.$t")"
done
for t in app.Entry 'java.lang.Object[]'; do
	[ "$(col "$t" retained_count)" = "$(truth "group_retained_count.$t")" ] ||
		fail "$t retained_count $(col "$t" retained_count), built $(truth "group_retained_count.$t")"
	[ "$(col "$t" retained_size)" = "$(truth "group_retained.$t")" ] ||
		fail "$t retained_size $(col "$t" retained_size), built $(truth "group_retained.$t")"
done
ok "by-type/table: counts, shallow sizes and two groups' retained sizes as built"

top=$("$HEAPFS" cat "$READ" gc/000/dominators/top | head -3)
read -r _ type size count _ <<<"$(sed -n 2p <<<"$top")"
[ "$type $size $count" = "java.lang.Object[] $(truth retained.buckets) $(truth retained_count.buckets)" ] ||
	fail "dominators/top first: $type $size $count, built the bucket array retaining $(truth retained.buckets) bytes"
grep -q "app.Shared	$(truth retained.shared)	$(truth retained_count.shared)	" <<<"$top" ||
	fail "dominators/top: no app.Shared retaining $(truth retained.shared) bytes: $top"
ok "dominators/top: the bucket array retains $(truth retained.buckets) bytes, Shared $(truth retained.shared)"

sus=$("$HEAPFS" cat "$READ" suspects)
grep -q "instances of app.Entry, retained through java.lang.Object\[\]" <<<"$sus" &&
	grep -q "under static app.Registry.ENTRIES" <<<"$sus" || fail "suspects does not name the registry: $sus"
ok "suspects: app.Entry retained under static app.Registry.ENTRIES"
"$HEAPFS" cat "$READ" windows/leak | grep -q "^found	no$" || fail "windows/leak of one dump found a window"
ok "windows/leak: no window in one dump"
