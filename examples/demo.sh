#!/usr/bin/env bash
# make demo: write a demo trace, mount it at ./mnt, show what to look at.
set -euo pipefail
HEAPFS=${1:-build/heapfs}
cd "$(dirname "$0")/.."
TRACE=build/demo.htr
MNT=$PWD/mnt

if mountpoint -q "$MNT" 2>/dev/null; then
	fusermount3 -u "$MNT"
fi
mkdir -p "$MNT"

echo "== writing a demo trace: two static caches that keep 20000 products alive"
"$HEAPFS" synth multicache -n 20000 -g 12 -o "$TRACE"
echo "== mounting $TRACE at ./mnt"
"$HEAPFS" "$TRACE" "$MNT"
for _ in $(seq 100); do mountpoint -q "$MNT" && break; sleep 0.1; done
mountpoint -q "$MNT" || { echo "demo: mount did not come up" >&2; exit 1; }

run() {
	echo
	echo "\$ $*"
	(cd "$MNT" && eval "$@")
}
run "cat trace/info | head -n 12"
run "ls gc/"
run "head -n 5 timeline/gcs.csv"
run "cat gc/latest/info"
run "head -n 8 gc/latest/by-type/table"
run "cat gc/latest/by-type/example.multicache.Product/count"
run "head -n 3 gc/latest/by-type/example.multicache.Product/objects"
id=$(head -n 1 "$MNT/gc/latest/by-type/example.multicache.Product/objects")
run "cat gc/latest/objects/$id/info"
run "cat gc/latest/objects/$id/referrers"

cat <<MSG

The trace is mounted at ./mnt: browse it with ls, cat, grep, awk, sort.
Without FUSE the same tree answers to:  $HEAPFS ls $TRACE gc/latest
                                        $HEAPFS cat $TRACE gc/latest/info
Unmount with:  fusermount3 -u mnt
MSG
