#!/usr/bin/env bash
# Sampled recordings (the agent's mode=sample, issue 31 item 1): the tree
# shows estimates, says so, and the estimates are right.
#
# The oracle: a full synthetic trace (heapfs synth multicache: every
# object recorded, exact counts) thinned by tests/tools/sample_trace with
# HotSpot's sampling rule (a Poisson process over each thread's allocated
# bytes, mean interval I: an object of s bytes is sampled with probability
# p = 1 - exp(-s/I)).  For a type of N objects of one size s alive at a
# GC, its samples k are Binomial(N, p): k must lie within 5 standard
# deviations of N p, and the estimate k/p within 5 of its own
# (sqrt(N (1-p) / p)) of N.  N comes from the full trace, never from the
# sampled one.  The seed is fixed, so the run is repeatable; the bounds are
# what sampling allows, not what this seed happened to give.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
TOOLS=$(dirname "$HEAPFS")/tools
TMP=$(mktemp -d)
MNT=$TMP/mnt
PID=
cleanup() {
	if mountpoint -q "$MNT" 2>/dev/null; then fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT"; fi
	[ -n "$PID" ] && kill "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }
c() { "$HEAPFS" cat "$@"; }

FULL=$TMP/full.htr
"$HEAPFS" synth multicache -n 100000 -g 10 -o "$FULL" >/dev/null

# within5 NAME N P K EST: the Binomial bounds above
within5() {
	awk -v name="$1" -v n="$2" -v p="$3" -v k="$4" -v est="$5" 'BEGIN {
		mk = n * p; sk = sqrt(n * p * (1 - p)); se = sqrt(n * (1 - p) / p)
		if (k < mk - 5 * sk || k > mk + 5 * sk) { printf "%s: %d samples, expected %.1f +- %.1f\n", name, k, mk, sk; exit 1 }
		if (est < n - 5 * se || est > n + 5 * se) { printf "%s: estimate %d, truth %d +- %.0f\n", name, est, n, se; exit 1 }
		printf "%s: %d samples (expected %.1f +- %.1f), estimate %d (truth %d, sd %.0f)\n", name, k, mk, sk, est, n, se }'
}
row() { awk -F'\t' -v n="$2" '$1 == n' <<<"$1"; }

for I in 16384 524288; do
	S=$TMP/s$I.htr
	out=$("$TOOLS/sample_trace" "$FULL" "$S" "$I" 7) || fail "sample_trace $I"
	read -r _ nall _ nsampled _ npre <<<"$out"

	# ---- what the files say ----
	info=$(c "$S" trace/info)
	grep -qx "sampled_allocations	$((nsampled + npre))" <<<"$info" ||
		fail "I=$I: trace/info sampled_allocations is not $((nsampled + npre)): $(grep sampled <<<"$info")"
	grep -qx 'allocations	' <<<"$info" || fail "I=$I: trace/info states an allocation count"
	ls_gc=$("$HEAPFS" ls "$S" gc/latest)
	for f in samples est_count est_shallow_size; do
		grep -qx "$f" <<<"$ls_gc" || fail "I=$I: gc/latest has no $f"
	done
	for f in count shallow_size; do
		! grep -qx "$f" <<<"$ls_gc" || fail "I=$I: gc/latest has $f in a sampled trace"
		! c "$S" "gc/latest/$f" >/dev/null 2>&1 || fail "I=$I: gc/latest/$f reads in a sampled trace"
	done
	c "$S" gc/latest/summary | grep -q "^estimate	from [0-9]* sampled objects: .*interval of $I bytes" ||
		fail "I=$I: gc/latest/summary does not say how it estimates"
	c "$S" gc/latest/info | grep -q "^estimate	" || fail "I=$I: gc/latest/info does not say it estimates"
	hdr=$(c "$S" gc/latest/by-type/table | head -1)
	[ "$hdr" = "$(printf 'name\tsamples\test_count\test_shallow_size')" ] ||
		fail "I=$I: by-type/table header: $hdr"
	c "$S" gc/latest/diff/001/by-type/table | head -1 | grep -q 'est_born_count' ||
		fail "I=$I: diff table without est_ columns"
	c "$S" allocs/stats | grep -q "^source	sampled allocations (the agent's mode=sample)" ||
		fail "I=$I: allocs/stats does not say it is sampled"
	c "$S" suspects | head -3 | tr '\n' ' ' | tr -s ' ' | grep -q "counts and bytes of objects are estimates" ||
		fail "I=$I: suspects does not say it estimates"
	ok "I=$I: files named and headed as estimates; trace/info: $nsampled samples + $npre pre-existing of $nall"

	# ---- samples = the recorded objects alive ----
	k=$(c "$S" gc/latest/samples)
	n=$(c "$S" gc/latest/objects/all | wc -l)
	[ "$k" = "$n" ] || fail "I=$I: gc/latest/samples $k, objects/all lists $n"

	# ---- estimates against the full trace, type by type ----
	full=$(c "$FULL" gc/latest/by-type/table)
	smp=$(c "$S" gc/latest/by-type/table)
	for ty in example.multicache.Product 'java.util.HashMap$Node' java.lang.Long; do
		read -r _ N B _ <<<"$(row "$full" "$ty")"
		size=$((B / N))
		[ $((size * N)) = "$B" ] || fail "$ty: objects of several sizes ($B bytes / $N)"
		read -r _ K EST EB <<<"$(row "$smp" "$ty")"
		p=$(awk -v s="$size" -v i="$I" 'BEGIN { printf "%.12g", 1 - exp(-s / i) }')
		msg=$(within5 "I=$I $ty" "$N" "$p" "${K:-0}" "${EST:-0}") || fail "$msg"
		# bytes: the same objects, each s bytes
		[ "${EB:-0}" -ge $(( (${EST:-0} - 1) * size )) ] && [ "${EB:-0}" -le $(( (${EST:-0} + 1) * size )) ] ||
			fail "I=$I $ty: est_shallow_size $EB is not est_count $EST x $size"
		ok "$msg"
	done

	# ---- allocs/by-site: allocations estimated from the samples ----
	full_alloc=$(c "$FULL" allocs/by-site | awk -F'\t' '$1 == "java.lang.Long.valueOf:1211" { print $3 }')
	read -r K EB EST <<<"$(c "$S" allocs/by-site | awk -F'\t' '$1 == "java.lang.Long.valueOf:1211" { print $3, $4, $5 }')"
	p=$(awk -v i="$I" 'BEGIN { printf "%.12g", 1 - exp(-24 / i) }')
	msg=$(within5 "I=$I allocs Long.valueOf" "$full_alloc" "$p" "${K:-0}" "${EST:-0}") || fail "$msg"
	ok "$msg"
done

# ---- mounted with FUSE: the names a script sees ----
S=$TMP/s16384.htr
mkdir -p "$MNT"
"$HEAPFS" -f "$S" "$MNT" 2>"$TMP/mount.err" &
PID=$!
for _ in $(seq 100); do mountpoint -q "$MNT" && break; sleep 0.1; done
mountpoint -q "$MNT" || fail "mount: $(cat "$TMP/mount.err")"
[ -e "$MNT/gc/latest/est_count" ] && [ ! -e "$MNT/gc/latest/count" ] ||
	fail "mounted: est_count missing or count present"
[ "$(cat "$MNT/gc/latest/est_count")" = "$(c "$S" gc/latest/est_count)" ] || fail "mounted est_count differs from heapfs cat"
head -1 "$MNT/windows/diff/leak/growing" | grep -q '^classifier	name	est_net_bytes' ||
	fail "windows growing without est_ columns: $(head -1 "$MNT/windows/diff/leak/growing")"
fusermount3 -u "$MNT"
wait "$PID" || fail "the mount exited with an error: $(cat "$TMP/mount.err")"
PID=
ok "mounted: est_count read, no count file, windows growing estimated"
