#!/usr/bin/env bash
# make demo: write a demo trace, mount it at ./mnt, show what to look at.
set -euo pipefail
HEAPFS=${1:-build/heapfs}
cd "$(dirname "$0")/.."
# A real recording: examples/java/example/multicache run under the agent
# (make demo-trace re-records it); MultiCache printed examples/multicache.out.
TRACE=examples/multicache.htr
MNT=$PWD/mnt

if mountpoint -q "$MNT" 2>/dev/null; then
	fusermount3 -u "$MNT"
fi
mkdir -p "$MNT"

echo "== mounting $TRACE, a recorded run of MultiCache: two static caches that"
echo "   keep every Product alive (the program printed: $(tr '\n' ' ' < examples/multicache.out))"
"$HEAPFS" "$TRACE" "$MNT"
for _ in $(seq 100); do mountpoint -q "$MNT" && break; sleep 0.1; done
mountpoint -q "$MNT" || { echo "demo: mount did not come up" >&2; exit 1; }

run() {
	echo
	echo "\$ $*"
	(cd "$MNT" && eval "$@")
}
run "grep -E '^(vm|command|gcs|allocations)' trace/info"
run "ls gc/"
run "cut -d, -f1,3,6,7,8 timeline/gcs.csv"
echo
echo "# Reachable memory grows at every GC: the leak detector finds the window."
run "grep -E '^(found|start_gc|end_gc|growth_bytes)' windows/leak"
echo
echo "# What grew: types by size at the last GC, then who keeps the Products alive."
run "head -n 8 gc/latest/by-type/table | cut -f1,2,3,7"
run "cat gc/latest/by-type/example.multicache.Product/count"
run "head -n 3 roots/table"
run "cut -f1,2 gc/latest/by-type/example.multicache.Product/by-indirect-root/static/table"
echo
echo "# The guided summary: every claim with the path that shows it."
run "sed -n '/^1\\. Leak/,/^   type java.lang.String/p' suspects | head -n 24"
id=$(head -n 1 "$MNT/gc/latest/by-type/example.multicache.Product/objects")
run "cat gc/latest/objects/$id/referrers"

cat <<MSG

The trace is mounted at ./mnt: browse it with ls, cat, grep, awk, sort.
Both static caches (roots/table) hold every Product through HashMap\$Node
(referrers above): the growth in windows/leak is the caches never evicting.
Without FUSE the same tree answers to:  $HEAPFS ls $TRACE gc/latest
                                        $HEAPFS cat $TRACE gc/latest/info
Unmount with:  fusermount3 -u mnt
MSG
