#!/usr/bin/env bash
# test_windows.sh - suspicious time windows, the per-GC series and the
# memory plot on the synthetic scenarios whose phases docs/scenarios.md
# fixes (defaults):
#   leakdrops -n 1000 -g 40   reachable memory halves at GC big = 10, then
#                             grows to GC 40 with two tolerated 10% drops
#   gcstress  -g 30           stress GCs 11..20 (80% of the time in GC)
#   churn     -g 30           churn GCs 11..20 (~50 MB freed per second)
# Mostly `heapfs cat` (no FUSE); one mount checks the window options.
#
# Usage: HEAPFS=/abs/path/build/heapfs bash tests/integration/test_windows.sh
. "$(dirname "$0")/mountlib.bash"

for s in leakdrops gcstress churn; do
	t "$HEAPFS" synth "$s" -o "$WORK/$s.htr" >/dev/null || fail "synth $s"
done
LD=$WORK/leakdrops.htr GS=$WORK/gcstress.htr CH=$WORK/churn.htr

# kv TRACE FILE KEY: the value of KEY in a key<TAB>value file.
kv() {
	t "$HEAPFS" cat "$1" "$2" | awk -F'\t' -v k="$3" '$1 == k { print $2; found = 1 }
		END { if (!found) exit 1 }' || fail "$2 of ${1##*/}: no key $3"
}
expect_kv() {
	local got
	got=$(kv "$1" "$2" "$3")
	[ "$got" = "$4" ] || fail "${1##*/} $2: $3 = '$got', expected '$4'"
}

# --- leakdrops: the leak window starts after the large drop, runs to the end
expect_kv "$LD" windows/leak found yes
expect_kv "$LD" windows/leak start_gc 10
expect_kv "$LD" windows/leak end_gc 40
expect_kv "$LD" windows/leak series "reachable (40 of 40 GCs)"
# the drop itself, from the per-GC series: reachable at GC 10 is below 75%
# of GC 9's (L_9 = 9000 sessions, L_10 = 4500), GC 20's above 75% of GC 19's
CSV=$(t "$HEAPFS" cat "$LD" timeline/gcs.csv)
reach() { echo "$CSV" | awk -F, -v g="$1" '$1 == g { print $8 }'; }
[ "$(echo "$CSV" | wc -l)" -eq 41 ] || fail "gcs.csv: not 40 rows and a header"
echo "$CSV" | awk -F, 'NR > 1 && $8 == "" { exit 1 }' || fail "gcs.csv: a graph GC without reachable"
[ $(( $(reach 10) * 4 )) -lt $(( $(reach 9) * 3 )) ] || fail "no large drop at GC 10"
[ $(( $(reach 20) * 4 )) -ge $(( $(reach 19) * 3 )) ] || fail "the drop at GC 20 is not small"
ok "leakdrops: leak window 10..40, right after the 50% drop"

# leak-narrow lies inside, 10%..50% of the 31 points (4..15)
ns=$(kv "$LD" windows/leak-narrow start_gc)
ne=$(kv "$LD" windows/leak-narrow end_gc)
np=$(kv "$LD" windows/leak-narrow points)
expect_kv "$LD" windows/leak-narrow found yes
[ "$ns" -ge 10 ] && [ "$ne" -le 40 ] && [ "$ns" -lt "$ne" ] || fail "leak-narrow $ns..$ne not inside 10..40"
[ "$np" -ge 4 ] && [ "$np" -le 15 ] || fail "leak-narrow: $np points, not 4..15"
ok "leakdrops: leak-narrow $ns..$ne inside the leak window"
expect_kv "$LD" windows/leak-regression found yes
expect_kv "$LD" windows/leak-regression end_gc 40
# no GC overhead, no churn: found no, with the failed condition
expect_kv "$LD" windows/gc-overhead found no
kv "$LD" windows/gc-overhead reason | grep -q "below the 10% threshold" || fail "gc-overhead reason"
expect_kv "$LD" windows/churn found no
ok "leakdrops: no gc-overhead or churn window, with reasons"

# windows/diff/leak: links to the window's GCs and to the diff node
LS=$(t "$HEAPFS" ls -l "$LD" windows/diff/leak)
echo "$LS" | grep -q "start -> \.\./\.\./\.\./gc/010$" || fail "diff/leak/start: $LS"
echo "$LS" | grep -q "end -> \.\./\.\./\.\./gc/040$" || fail "diff/leak/end: $LS"
echo "$LS" | grep -q "diff -> \.\./\.\./\.\./gc/040/diff/010$" || fail "diff/leak/diff: $LS"
expect_kv "$LD" windows/diff/leak/start/info gc 10
expect_kv "$LD" windows/diff/leak/diff/summary group diff/010
# sessions: L_40 - L_10 = 29035 - 4500 = 24535 more, 24 bytes each
G=$(t "$HEAPFS" cat "$LD" windows/diff/leak/growing)
echo "$G" | head -n 1 | grep -q "^classifier	name	net_bytes	net_count	born_count" || fail "growing header"
echo "$G" | grep -q "^type	example.leakdrops.Session	588840	24535	" || fail "growing: Session row: $G"
echo "$G" | awk -F'\t' '$1 == "type" && NR > 1 { print $3 }' | sort -g -r -c 2>/dev/null ||
	fail "growing: type rows not ranked by net growth"
echo "$G" | grep -q "^site	example.leakdrops.SessionStore.open:25	588840	" || fail "growing: site row"
t "$HEAPFS" ls "$LD" windows/diff | tr '\n' ' ' | grep -qx "leak leak-narrow leak-regression " ||
	fail "windows/diff lists kinds that found nothing"
ok "leakdrops: windows/diff/leak start, end, diff node, growing"

# --- gcstress: the gc-overhead window is the stress phase exactly
expect_kv "$GS" windows/gc-overhead found yes
expect_kv "$GS" windows/gc-overhead start_gc 11
expect_kv "$GS" windows/gc-overhead end_gc 20
expect_kv "$GS" windows/gc-overhead gc_overhead_pct 80
expect_kv "$GS" windows/churn found no
# no growth at the end (the queue is cleared at GC 21): found no, and why
expect_kv "$GS" windows/leak found no
kv "$GS" windows/leak reason | grep -q "no growth at the end" || fail "gcstress leak reason"
ok "gcstress: gc-overhead window 11..20; leak found no (no growth at the end)"

# --- churn: the churn window is the churn phase exactly
expect_kv "$CH" windows/churn found yes
expect_kv "$CH" windows/churn start_gc 11
expect_kv "$CH" windows/churn end_gc 20
expect_kv "$CH" windows/gc-overhead found no
expect_kv "$CH" windows/leak found no
kv "$CH" windows/leak reason | grep -q "no growth" || fail "churn leak reason"
ok "churn: churn window 11..20; no leak, no gc overhead"

# --- summary: a header and one row per kind
S=$(t "$HEAPFS" cat "$GS" windows/summary)
[ "$(echo "$S" | wc -l)" -eq 6 ] || fail "summary: $(echo "$S" | wc -l) lines"
echo "$S" | head -n 1 | grep -q "^kind	found	start_gc	end_gc	start_ms	end_ms	gcs	metric	value	threshold	reason$" ||
	fail "summary header"
echo "$S" | grep -q "^gc-overhead	yes	11	20	" || fail "summary gc-overhead row"
ok "windows/summary"

# --- the plot: valid SVG with both curves, the shaded window and a legend
SVG=$WORK/m.svg
t "$HEAPFS" cat "$LD" timeline/memory.svg >"$SVG"
if command -v xmllint >/dev/null; then xmllint --noout "$SVG" || fail "memory.svg is not well-formed"; fi
grep -q "<svg xmlns=\"http://www.w3.org/2000/svg\"" "$SVG" || fail "no svg element"
[ "$(grep -c "<polyline" "$SVG")" -ge 2 ] || fail "memory.svg: used and reachable curves missing"
grep -q "<title>leak: GC 10..40</title>" "$SVG" || fail "memory.svg: leak window not shaded"
grep -q ">reachable<" "$SVG" && grep -q ">heap used<" "$SVG" || fail "memory.svg: legend"
ok "timeline/memory.svg ($(wc -c <"$SVG") bytes)"

# --- the options, through a mount: reachable_every, a threshold
MNT=$WORK/mnt
mount_trace "$GS" "$MNT" -o reachable_every=2,gc_overhead_min_pct=90
[ "$(awk -F'\t' '$1 == "found" { print $2 }' "$MNT/windows/gc-overhead")" = no ] ||
	fail "gc_overhead_min_pct=90 still reports the 80% window"
grep -q "below the 90% threshold" "$MNT/windows/gc-overhead" || fail "reason without the 90% threshold"
# every second graph GC: reachable at GCs 1, 3, 5, ... only
awk -F, 'NR > 1 { if (($1 % 2 == 1) != ($8 != "")) exit 1 }' "$MNT/timeline/gcs.csv" ||
	fail "reachable_every=2: $(cut -d, -f1,8 "$MNT/timeline/gcs.csv" | head -5)"
grep -q "^reachable_every	2$" "$MNT/status" || fail "status lacks reachable_every"
grep -q "^reachable_series	done$" "$MNT/status" || fail "status: reachable series not done"
[ ! -e "$MNT/windows/diff/gc-overhead" ] || fail "windows/diff/gc-overhead exists without a window"
unmount "$MNT"
# the stress phase spends exactly 80% in GC: 80 is reported, 81 is not
mount_trace "$GS" "$MNT" -o gc_overhead_min_pct=81
grep -q "^found	no$" "$MNT/windows/gc-overhead" || fail "gc_overhead_min_pct=81 reports the 80% window"
unmount "$MNT"
mount_trace "$GS" "$MNT" -o gc_overhead_min_pct=80
grep -q "^found	yes$" "$MNT/windows/gc-overhead" || fail "gc_overhead_min_pct=80 misses the 80% window"
# the links resolve through the kernel too
[ -L "$MNT/windows/diff/gc-overhead/start" ] && [ -f "$MNT/windows/diff/gc-overhead/start/info" ] &&
	[ -f "$MNT/windows/diff/gc-overhead/diff/summary" ] || fail "windows/diff/gc-overhead links"
grep -q "^group	diff/011$" "$MNT/windows/diff/gc-overhead/diff/summary" || fail "diff node of 11..20"
unmount "$MNT"
ok "mount: -o reachable_every=2, gc_overhead_min_pct=90/81/80, links through FUSE"
