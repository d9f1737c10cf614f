#!/usr/bin/env bash
# test_soak.sh - 16 concurrent readers under eviction pressure: every read
# must return the bytes a single reader got, never an empty file, never an
# error, and the daemon's memory must stay within its documented bound.
#
# The trace (synth multicache -n 150000 -g 30) is mounted twice: a
# reference mount with the default cache, read once by one reader, and the
# mount under test with -o cache_mb=64, far less than the files read need
# (so states and rendered files are evicted and rebuilt all the time).
# 16 readers cat files picked at random from a fixed list (every GC's info
# and type table, type groups' counts, sizes, closures and paths, roots,
# windows, objects, suspects), one more lists directories, for
# SOAK_SECONDS (make test: 60; make soak: 600).  Every read is compared
# with the reference bytes.
#
# Memory: the daemon's peak RSS (VmHWM) must stay within cache_mb plus
# the largest single computation's working set plus the fixed overhead
# that status reports (memory_bound); status must report each expensive
# result computed once while cached (render_size_changed 0).
#
# Usage: HEAPFS=/abs/path/build/heapfs [SOAK_SECONDS=N] bash tests/integration/test_soak.sh
. "$(dirname "$0")/mountlib.bash"

SOAK_SECONDS=${SOAK_SECONDS:-60}
READERS=${SOAK_READERS:-16}
CACHE_MB=64
TRACE=$WORK/soak.htr
make_trace "$TRACE" multicache -n 150000 -g 30

REF=$WORK/ref-mnt
MNT=$WORK/mnt
mount_trace "$TRACE" "$REF"
mount_trace "$TRACE" "$MNT" -o cache_mb=$CACHE_MB

# The file list: fixed, from the reference mount's listings.
LIST=$WORK/files
{
	echo suspects
	echo timeline/gcs.csv
	for k in leak leak-narrow leak-regression gc-overhead churn summary; do echo "windows/$k"; done
	for g in $(t ls "$REF/gc" | grep -v latest); do
		echo "gc/$g/info"
		echo "gc/$g/count"
		echo "gc/$g/by-type/table"
		for ty in java.util.HashMap example.multicache.Product 'java.lang.Object[]'; do
			for f in count shallow_size summary; do echo "gc/$g/by-type/$ty/$f"; done
		done
	done
	for g in $(t ls "$REF/gc" | grep -v latest | awk 'NR % 6 == 0'); do
		echo "gc/$g/roots/table"
		echo "gc/$g/by-type/example.multicache.Product/retained_size"
		echo "gc/$g/by-type/example.multicache.Product/paths"
		echo "gc/$g/by-type/java.util.HashMap/deep_size"
	done
	for id in $(t head -n 40 "$REF/gc/latest/objects/all" | awk 'NR % 4 == 1'); do
		for f in info refs referrers retained_size; do echo "gc/latest/objects/$id/$f"; done
	done
} | while read -r f; do [ -e "$REF/$f" ] && printf '%s\n' "$f"; done >"$LIST"
NFILES=$(wc -l <"$LIST")
[ "$NFILES" -gt 200 ] || fail "file list too short ($NFILES)"

# Reference bytes: one reader, one file at a time.
mkdir -p "$WORK/ref"
i=0
while read -r f; do
	t cat "$REF/$f" >"$WORK/ref/$i" || fail "reference read of $f failed"
	i=$((i + 1))
done <"$LIST"
ok "reference pass: $NFILES files"
unmount "$REF"

DPID=$(pgrep -f -- "-f -o cache_mb=$CACHE_MB $TRACE $MNT" | head -n 1)
[ -n "$DPID" ] || fail "no daemon pid"
mapfile -t FILES <"$LIST"

reader() {
	local id=$1 end=$2 n=0 bad=0 empty=0 err=0 k out="$WORK/r$1.out"
	RANDOM=$((id * 7919))
	while [ "$(date +%s)" -lt "$end" ]; do
		k=$(((RANDOM * 32768 + RANDOM) % NFILES))
		if ! cat "$MNT/${FILES[$k]}" >"$out" 2>"$WORK/r$id.err"; then
			err=$((err + 1))
			echo "error: ${FILES[$k]}: $(cat "$WORK/r$id.err")" >>"$WORK/r$id.log"
		elif ! cmp -s "$out" "$WORK/ref/$k"; then
			if [ -s "$out" ]; then bad=$((bad + 1)); else empty=$((empty + 1)); fi
			echo "differs: ${FILES[$k]} ($(wc -c <"$out") bytes, want $(wc -c <"$WORK/ref/$k"))" >>"$WORK/r$id.log"
		fi
		n=$((n + 1))
	done
	echo "$n $bad $empty $err" >"$WORK/r$id.sum"
}

lister() {
	local end=$1 n=0
	while [ "$(date +%s)" -lt "$end" ]; do
		for g in 001 010 020 030; do
			ls -R "$MNT/gc/$g/by-type/example.multicache.Product" >/dev/null 2>>"$WORK/ls.err" ||
				echo "ls -R gc/$g failed" >>"$WORK/ls.log"
			n=$((n + 1))
		done
	done
	echo "$n" >"$WORK/ls.sum"
}

END=$(($(date +%s) + SOAK_SECONDS))
pids=()
for r in $(seq 1 "$READERS"); do
	reader "$r" "$END" &
	pids+=($!)
done
lister "$END" &
pids+=($!)
# RSS samples while the readers run
peak=0
while [ "$(date +%s)" -lt "$END" ]; do
	rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$DPID/status" 2>/dev/null || echo 0)
	[ "${rss:-0}" -gt "$peak" ] && peak=$rss
	sleep 1
done
for p in "${pids[@]}"; do wait "$p"; done

reads=0 bad=0 empty=0 errs=0
for r in $(seq 1 "$READERS"); do
	read -r n b e x <"$WORK/r$r.sum"
	reads=$((reads + n)) bad=$((bad + b)) empty=$((empty + e)) errs=$((errs + x))
done
cat "$WORK"/r*.log 2>/dev/null | sort | uniq -c | sort -rn | head -n 10 >&2 || true
echo "soak: $READERS readers, ${SOAK_SECONDS} s: $reads reads ($NFILES files), $bad differing," \
	"$empty empty, $errs errors; $(cat "$WORK/ls.sum") ls -R; peak RSS $((peak / 1024)) MB"
[ "$errs" -eq 0 ] || fail "$errs reads failed"
[ "$empty" -eq 0 ] || fail "$empty reads were empty"
[ "$bad" -eq 0 ] || fail "$bad reads differed from the reference"
[ ! -s "$WORK/ls.log" ] || fail "listings failed: $(head -n 3 "$WORK/ls.log")"
ok "every read equal to the reference"

changed=$(status_value "$MNT" render_size_changed)
[ "$changed" = 0 ] || fail "status: render_size_changed $changed (a result rendered twice differed)"
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$DPID/status")
bound=$(status_value "$MNT" memory_bound)
[ -n "$bound" ] || fail "status has no memory_bound"
echo "status: $(grep -E '^(state_cache_used|render_cache_used|render_results|render_recomputed|largest_working_set|memory_bound)' "$MNT/status" | tr '\t\n' '= ')"
[ "$((hwm * 1024))" -le "$bound" ] ||
	fail "peak RSS $((hwm / 1024)) MB above the documented bound $((bound / 1048576)) MB"
ok "peak RSS $((hwm / 1024)) MB within the bound $((bound / 1048576)) MB"
unmount "$MNT"
