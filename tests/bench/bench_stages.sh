#!/usr/bin/env bash
# bench_stages.sh - opening a heap dump and its suspects report, stage by
# stage, on 1, 2 and every core: where the threads help and where not.
#
#   bash tests/bench/bench_stages.sh /abs/path/to/build/heapfs [DUMP...]
#
# DUMP defaults to the 1 GB DumpGen dump (tests/bench/dumps.bash: BENCH_BIG)
# and the H2 database's dump that bench_vvm.sh makes (BENCH_H2, default
# /tmp/heapfs-bench-h2-400000.hprof); a dump that is not there is skipped
# with a line saying so (`make bench` runs this after the scripts that make
# them).  Each run is a fresh `HEAPFS_TIMING=1 heapfs cat -q DUMP suspects`
# (model/timing.h prints a line per stage); the thread counts take turns,
# BENCH_STAGE_REPS rounds (default BENCH_REPS, else 3), and each cell is the
# median wall time of its stage.  Stages: the five of opening the dump
# (model/hprof.c, model/hprof_state.c), the report's two rounds
# (analyses/suspects_find.c), and what is left of the whole command.
#
# The state of the machine's free memory moves these figures more than
# most changes do: on a virtual machine that hands free pages back to its
# host, memory first touched after a few seconds free costs ~2 ms a MB
# (tests/bench/firsttouch.c prints the rates, first).  BENCH_MEMORY says
# how each run finds it: "warm" (firsttouch touches and frees 1.5 times the
# dump's size, plus 256 MB, just before the run), "cold" (6 s idle before
# the run), "asis" (neither), or several of them, a table each (default:
# "warm cold").
#
# Goals (issue 29): on the 1 GB dump, 2 threads at least 1.7x one thread,
# and `suspects` in at most 6 s; on the H2 dump (4.8 M objects, a real
# application), in at most 1.5 s on 2 cores.
set -u -o pipefail

HEAPFS=${1:?usage: bench_stages.sh /abs/path/to/heapfs [DUMP...]}
shift
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/dumps.bash
. "$ROOT/tests/bench/dumps.bash"
H2=${BENCH_H2:-/tmp/heapfs-bench-h2-${BENCH_H2_ROWS:-400000}.hprof}
REPS=${BENCH_STAGE_REPS:-${BENCH_REPS:-3}}
[ $# -gt 0 ] || set -- "$BENCH_BIG" "$H2"
WORK=$(mktemp -d /tmp/heapfs-stages-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

MEMORY=${BENCH_MEMORY:-warm cold}
FIRSTTOUCH=$WORK/firsttouch
cc -O2 -o "$FIRSTTOUCH" "$ROOT/tests/bench/firsttouch.c" || { echo "bench_stages.sh: cannot build firsttouch" >&2; exit 1; }

CORES=$(nproc)
THREADS="1 2"
[ "$CORES" -gt 2 ] && THREADS="$THREADS $CORES"
STAGES=("import: scan" "import: classes and id index" "import: objects"
	"import: roots and graph" "import: heap state"
	"suspects: health and dominators" "suspects: closures and structures")

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# one DUMP T: a timed run; its stage lines and "whole <wall> <cpu> <rss>"
# into $WORK/DUMPTAG.T.R
one() {
	local dump=$1 t=$2 out=$3 mb
	case $STATE in
	warm)
		mb=$(($(stat -c %s "$dump") / 1048576 * 3 / 2 + 256))
		"$FIRSTTOUCH" warm "$mb" || return 1 ;;
	cold) sleep 6 ;;
	esac
	HEAPFS_THREADS=$t HEAPFS_TIMING=1 /usr/bin/time -f 'whole %e %U %S %M' -o "$out.time" \
		"$HEAPFS" cat -q "$dump" suspects >/dev/null 2>"$out" || return 1
	cat "$out.time" >>"$out"
}

# stage_wall FILE STAGE: the stage's wall seconds in a run's lines
stage_wall() {
	awk -v st="heapfs: $2" 'index($0, st) == 1 { for (i = 1; i <= NF; i++) if ($(i + 1) == "s" && $(i + 2) == "wall") { print $i; exit } }' "$1"
}

bench_dump() {
	local dump=$1 tag r t
	tag=$(basename "$dump" .hprof).$STATE
	for r in $(seq "$REPS"); do
		for t in $THREADS; do
			one "$dump" "$t" "$WORK/$tag.$t.$r" || { echo "  heapfs cat $dump suspects failed at $t threads"; return 1; }
		done
	done
	local objects
	objects=$("$HEAPFS" cat -q "$dump" gc/000/count 2>/dev/null)
	echo "$dump: $objects objects; memory $STATE; medians of $REPS runs per column, the thread counts taking turns; load $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '  %-36s' "stage (wall s)"
	for t in $THREADS; do printf ' %8s' "$t thr"; done
	printf ' %8s\n' "2 over 1"
	local st v vals med1 med2 sum
	declare -A total
	for st in "${STAGES[@]}" "rest" "whole command"; do
		printf '  %-36s' "$st"
		for t in $THREADS; do
			vals=()
			for r in $(seq "$REPS"); do
				local f="$WORK/$tag.$t.$r" w
				w=$(awk '$1 == "whole" { print $2 }' "$f")
				case $st in
				"whole command") v=$w ;;
				rest)
					sum=0
					for s2 in "${STAGES[@]}"; do
						sum=$(awk -v a="$sum" -v b="$(stage_wall "$f" "$s2")" 'BEGIN { print a + b }')
					done
					v=$(awk -v a="$w" -v b="$sum" 'BEGIN { printf "%.3f", a - b }') ;;
				*) v=$(stage_wall "$f" "$st") ;;
				esac
				vals+=("${v:-0}")
			done
			total[$t]=$(median "${vals[@]}")
			printf ' %8s' "${total[$t]}"
		done
		med1=${total[1]}; med2=${total[2]}
		awk -v a="$med1" -v b="$med2" 'BEGIN { if (b > 0) printf " %7.2fx\n", a / b; else print "" }'
	done
	# CPU and peak of the whole command, medians
	for t in $THREADS; do
		local cpu=() rss=() sys=()
		for r in $(seq "$REPS"); do
			read -r _ _ u s m < <(grep '^whole' "$WORK/$tag.$t.$r")
			cpu+=("$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')")
			rss+=("$m")
			sys+=("$s")
		done
		echo "  $t thr: CPU $(median "${cpu[@]}") s (kernel $(median "${sys[@]}") s), peak RSS $(median "${rss[@]}") KB ($(awk -v k="$(median "${rss[@]}")" -v n="${objects:-0}" 'BEGIN { if (n > 0) printf "%.1f", k * 1024 / n; else printf "?" }') B/object)"
	done
}

echo "opening a dump and its suspects report, stage by stage ($CORES cores)"
"$FIRSTTOUCH"
for dump in "$@"; do
	if [ ! -s "$dump" ]; then
		echo "$dump: not there (made by bench_hprof.sh / bench_vvm.sh): skipped"
		continue
	fi
	for STATE in $MEMORY; do
		case $STATE in
		warm | cold | asis) bench_dump "$dump" ;;
		*) echo "bench_stages.sh: BENCH_MEMORY: $STATE is not warm, cold or asis" >&2; exit 2 ;;
		esac
	done
done
