#!/usr/bin/env bash
# bench_jfr.sh - a JDK Flight Recorder recording of at least 100 MB mounted
# cold: `heapfs cat REC windows/leak allocs/by-site` in one process (read
# every chunk, import, index, both files), against the goal of issue 30
# (at most 2 s), its throughput in MB/s, and `jfr print --json`'s
# throughput on 30 chunks of the same recording.
#
#   bash tests/bench/bench_jfr.sh /abs/path/to/build/heapfs
#
# The recording: JfrWorkload (tests/integration) under the profile
# settings with TLAB allocation events and old-object samples, one
# recording of BENCH_JFR_ROUNDS rounds (default 40); its chunks repeated
# (JFR files concatenate chunk by chunk, and the JDK's tools read the
# result) up to BENCH_JFR_MB (default 100) MB.  BENCH_REPS runs (default
# 3), median shown.  Skipped without java, javac and jfr.
set -u -o pipefail

HEAPFS=${1:?usage: bench_jfr.sh /abs/path/to/heapfs}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${BENCH_REPS:-3}
MB=${BENCH_JFR_MB:-100}
ROUNDS=${BENCH_JFR_ROUNDS:-40}
GOAL_S=2

JDK=$(dirname "$(dirname "$(readlink -f "$(command -v java 2>/dev/null || echo /nonexistent)")")")
if [ ! -x "$JDK/bin/jfr" ] || [ ! -x "$JDK/bin/javac" ]; then
	echo "bench_jfr: SKIP: no java, javac and jfr"
	exit 0
fi
WORK=$(mktemp -d /tmp/heapfs-bench-jfr-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
now() { date +%s.%N; }

"$JDK/bin/javac" -d "$WORK/jw" "$ROOT/tests/integration/JfrWorkload.java" || exit 1
"$JDK/bin/java" -Xmx256m "-XX:StartFlightRecording:filename=$WORK/one.jfr,settings=profile,path-to-gc-roots=true,jdk.ObjectAllocationInNewTLAB#enabled=true,jdk.ObjectAllocationOutsideTLAB#enabled=true" \
	-cp "$WORK/jw" JfrWorkload "$ROUNDS" 2 > /dev/null 2>&1 || { echo "bench_jfr: JfrWorkload failed"; exit 1; }
one=$(stat -c %s "$WORK/one.jfr")
: > "$WORK/big.jfr"
while [ "$(stat -c %s "$WORK/big.jfr")" -lt $((MB << 20)) ]; do cat "$WORK/one.jfr" >> "$WORK/big.jfr"; done
size=$(stat -c %s "$WORK/big.jfr")
copies=$((size / one))
events=$("$JDK/bin/jfr" summary "$WORK/one.jfr" | awk '$1 ~ /^jdk\./ { n += $2 } END { print n }')

ts=(); rss=()
for _ in $(seq "$REPS"); do
	t0=$(now)
	/usr/bin/time -f %M -o "$WORK/rss" "$HEAPFS" cat "$WORK/big.jfr" windows/leak allocs/by-site > "$WORK/out" 2> /dev/null ||
		{ echo "bench_jfr: heapfs cat failed"; exit 1; }
	ts+=("$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')")
	rss+=("$(cat "$WORK/rss")")
done
t=$(median "${ts[@]}")
# jfr print on 30 copies (10 MB): its JVM's start-up counts less
for _ in $(seq 30); do cat "$WORK/one.jfr"; done > "$WORK/some.jfr"
some=$(stat -c %s "$WORK/some.jfr")
t0=$(now)
"$JDK/bin/jfr" print --json "$WORK/some.jfr" > /dev/null
tj=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
grep -q "^found" "$WORK/out" || { echo "bench_jfr: no windows/leak in the output"; exit 1; }
echo "recording: $copies copies of a $((one >> 10)) KB recording ($events events each), $((size >> 20)) MB"
printf "heapfs cat REC windows/leak allocs/by-site, cold: %s s median (runs %s), %.0f MB/s, peak RSS %d MB; goal <= %s s: %s\n" \
	"$t" "${ts[*]}" "$(awk -v s="$size" -v t="$t" 'BEGIN { print s / 1048576 / t }')" \
	"$(( $(median "${rss[@]}") >> 10 ))" "$GOAL_S" \
	"$(awk -v t="$t" -v g="$GOAL_S" 'BEGIN { print (t <= g) ? "met" : "MISSED" }')"
printf "jfr print --json, 30 copies (%d MB): %s s, %.2f MB/s\n" "$((some >> 20))" "$tj" \
	"$(awk -v s="$some" -v t="$tj" 'BEGIN { print s / 1048576 / t }')"
awk -v t="$t" -v g="$GOAL_S" 'BEGIN { exit !(t <= g) }'
