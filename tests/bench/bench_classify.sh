#!/usr/bin/env bash
# bench_classify.sh HEAPFS [OBJECTS] - classification throughput.
# Times `heapfs cat` of classification tables on a synthetic buggystack
# trace.  Each figure includes opening the trace and rebuilding the heap
# state, so it is a lower bound of the classification rate; the "state"
# line (gc/NNN/count: rebuild + census) is printed so it can be subtracted.
set -euo pipefail
HEAPFS=${1:?usage: bench_classify.sh HEAPFS [OBJECTS]}
N=${2:-5000000}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
T="$DIR/bs.htr"
"$HEAPFS" synth buggystack -n "$N" -g 4 -o "$T" >/dev/null
OBJS=$("$HEAPFS" cat "$T" gc/latest/count)
secs() { local s e; s=$(date +%s.%N); "$HEAPFS" cat "$T" "$@" >/dev/null; e=$(date +%s.%N); echo "$e - $s" | bc; }
base=$(secs gc/latest/count)
report() { # name seconds
	local net; net=$(echo "$2 - $base" | bc)
	awk -v n="$1" -v t="$2" -v net="$net" -v o="$OBJS" 'BEGIN {
		r = net > 0.0005 ? o / net / 1e6 : 0;
		printf "%-34s %8.3f s total  %8.3f s net  %9.1f M objects/s net\n", n, t, net, r }'
}
echo "objects at gc/latest: $OBJS (state rebuild + census: $base s)"
report "by-type" "$(secs gc/latest/by-type/table)"
report "by-site" "$(secs gc/latest/by-site/table)"
report "type -> site -> thread" "$(secs gc/latest/by-type/example.buggystack.TestObject/by-site/example.buggystack.BuggyMain.main:43/by-thread/table)"
report "by-age (per object)" "$(secs gc/latest/by-age/table)"
report "by-collection-health (expr)" "$(secs gc/latest/by-collection-health/table)"
report "diff gc/latest/diff/001 by-type" "$(secs gc/latest/diff/001/by-type/table)"
