#!/usr/bin/env bash
# Two builds of the agent side by side: OLD=/path/libheapfs-agent.so
# NEW=/path/libheapfs-agent.so bash agent/bench_ab.sh [OPTS]
# Runs each program without the agent, with OLD and with NEW (mode=count
# and the agent options OPTS, e.g. ",atomic=on"), in turns, RUNS times
# (default 11), and prints the medians of wall-clock and CPU time (user +
# system: less disturbed by other work on the machine) and NEW/OLD.
# Programs: tests/bench/CallLoop (a tiny allocating method called 10^8
# times: the worst case for a per-call cost), the examples churn,
# multicache (2 allocating threads) and threads (main and 4 workers).
# Build the examples first (make BUILD=... examples-classes).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
JAVA=${JAVA:-java}
JAVAC=${JAVAC:-javac}
RUNS=${RUNS:-11}
: "${OLD:?OLD=path of the agent to compare against}" "${NEW:?NEW=path of the agent}"
OPTS=${1:-}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$JAVAC" -d "$OUT/cls" tests/bench/CallLoop.java
CP=$PWD/$BUILD/examples/classes:$OUT/cls
median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
row() {
	local name=$1; shift
	local -A wall cpu
	for _ in $(seq "$RUNS"); do
		for v in plain old new; do
			local a=()
			case $v in
			old) a=("-agentpath:$OLD=out=$OUT/t.htr,mode=count$OPTS") ;;
			new) a=("-agentpath:$NEW=out=$OUT/t.htr,mode=count$OPTS") ;;
			esac
			{ TIMEFORMAT='%R %U %S'; time "$JAVA" -Xmx256m -XX:+UseG1GC "${a[@]}" -cp "$CP" "$@" >/dev/null 2>"$OUT/err"; } \
				2>"$OUT/time" || { cat "$OUT/err" >&2; exit 1; }
			wall[$v]+=" $(awk '{ printf "%d", $1 * 1000 }' "$OUT/time")"
			cpu[$v]+=" $(awk '{ printf "%d", ($2 + $3) * 1000 }' "$OUT/time")"
		done
	done
	local wp wo wn cp co cn
	wp=$(median ${wall[plain]}); wo=$(median ${wall[old]}); wn=$(median ${wall[new]})
	cp=$(median ${cpu[plain]}); co=$(median ${cpu[old]}); cn=$(median ${cpu[new]})
	printf '%-11s %6d %6d %6d %6.3f   %6d %6d %6d %6.3f\n' "$name" "$wp" "$wo" "$wn" "$(echo "$wn / $wo" | bc -l)" \
		"$cp" "$co" "$cn" "$(echo "$cn / $co" | bc -l)"
}
echo "mode=count$OPTS: median of $RUNS runs in turns (ms)"
printf '%-11s %6s %6s %6s %6s   %6s %6s %6s %6s\n' program wall old new new/old cpu old new new/old
row callloop CallLoop 100000000
row churn example.churn.Server 3000000 20000
row multicache example.multicache.Main 20000 8
row threads example.threads.Main 4 3000000
