#!/usr/bin/env bash
# bench.sh - heapfs performance figures against the goals, on one synthetic
# multicache trace whose last GC has at least 10^7 live objects.
#
#   bash tests/bench/bench.sh /abs/path/to/build/heapfs     (what `make bench` runs)
#   BENCH_N=100000 bash tests/bench/bench.sh build/heapfs   (a quick run)
#
# Environment: BENCH_N (Products; default 1430000: 7 objects per Product plus
# 20 fixed ones = 10,010,020 live objects at the last GC, see
# model/synth_multicache.c), BENCH_N2 (objects of the two-references heap,
# default 10^7, tests/bench/gen_tworefs.c), BENCH_REPS (default 3), BENCH_TMP (scratch dir
# for the trace, default a mktemp dir under /tmp; removed at exit).
#
# Every timing runs BENCH_REPS times; the table shows the median.  In-process
# figures (open, rebuild, by-type grouping, memory) come from
# tests/bench/bench_rebuild.c, built here against build/libheapfs.a; peak RSS
# from /usr/bin/time -v.  Goals (DESIGN): reconstruction >= 10 M objects/s
# including edges on one core, by-type grouping >= 100 M objects/s,
# <= 48 bytes per live object all in.
set -u -o pipefail

HEAPFS=${1:?usage: bench.sh /abs/path/to/heapfs}
HEAPFS=$(cd "$(dirname "$HEAPFS")" && pwd)/$(basename "$HEAPFS")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
N=${BENCH_N:-1430000}
REPS=${BENCH_REPS:-3}
GOAL_REBUILD=10000000
GOAL_GROUP=100000000
GOAL_BYTES=48

die() { echo "bench.sh: $*" >&2; exit 1; }
[ -x "$HEAPFS" ] || die "$HEAPFS is not an executable"
[ -f "$ROOT/build/libheapfs.a" ] || die "$ROOT/build/libheapfs.a missing (make build first)"
[ -x /usr/bin/time ] || die "/usr/bin/time is needed for peak RSS (apt-get install time)"

WORK=${BENCH_TMP:-$(mktemp -d /tmp/heapfs-bench-XXXXXX)}
mkdir -p "$WORK"
MNT="$WORK/mnt"
MOUNT_PID=
cleanup() {
	if [ -n "$MOUNT_PID" ]; then
		fusermount3 -u "$MNT" 2>/dev/null
		kill "$MOUNT_PID" 2>/dev/null
		wait "$MOUNT_PID" 2>/dev/null
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# calc EXPR: awk arithmetic, printed with 2 decimals unless the format is given
calc() { awk "BEGIN { printf \"${2:-%.2f}\", $1 }"; }
log() { echo "bench: $*" >&2; }

TRACE="$WORK/multicache.htr"
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
LOAD_START=$(loadavg)

# ---- synth --------------------------------------------------------------
synth_t=()
for r in $(seq "$REPS"); do
	log "synth multicache -n $N ($r/$REPS)"
	t0=$(now)
	"$HEAPFS" synth multicache -n "$N" -o "$TRACE" >/dev/null || die "synth failed"
	synth_t+=("$(elapsed "$t0" "$(now)")")
done
TRACE_BYTES=$(stat -c %s "$TRACE")

# ---- in-process bench: open, rebuild, by-type, memory -------------------
BENCH_BIN="$WORK/bench_rebuild"
CC=${CC:-cc}
build_bench() {
	# shellcheck disable=SC2046 # pkg-config output is meant to be split
	"$CC" -std=gnu11 -O2 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$ROOT" \
		$(pkg-config --cflags fuse3 libzstd) "$@" -o "$BENCH_BIN" \
		"$ROOT/tests/bench/bench_rebuild.c" "$ROOT/build/libheapfs.a" \
		$(pkg-config --libs fuse3 libzstd) -lpthread -lm
}
GROUP_IN_PROCESS=1
if ! build_bench 2>"$WORK/cc.log"; then
	log "bench_rebuild with fs/classify failed to build ($(head -1 "$WORK/cc.log")); without by-type"
	GROUP_IN_PROCESS=0
	build_bench -DBENCH_NO_CLASSIFY || die "cannot build tests/bench/bench_rebuild.c"
fi

open_t=(); build_t=(); build_cpu_t=(); group_t=(); group_obj_t=(); rss_kb=()
for r in $(seq "$REPS"); do
	log "rebuild of the last GC ($r/$REPS)"
	/usr/bin/time -v -o "$WORK/time.txt" "$BENCH_BIN" "$TRACE" >"$WORK/bench.txt" ||
		die "bench_rebuild failed"
	get() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$WORK/bench.txt"; }
	open_t+=("$(get open_s)")
	build_t+=("$(get build_s)")
	build_cpu_t+=("$(get build_cpu_s)")
	if [ "$GROUP_IN_PROCESS" = 1 ]; then
		group_t+=("$(get bytype_s)")
		group_obj_t+=("$(get bytype_obj_s)")
	fi
	rss_kb+=("$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$WORK/time.txt")")
done
OBJECTS=$(get objects)
EDGES=$(get edges)
GCS=$(get gcs)
INFOS=$(get infos)
STATE_BYTES=$(get state_bytes)
[ "$(get has_graph)" = 1 ] || log "warning: the last GC carries no graph; rebuild excludes edges"
[ "$OBJECTS" -ge 10000000 ] || log "note: $OBJECTS live objects at the last GC (< 10^7; BENCH_N=$N)"

# ---- through the tree: heapfs cat (open + rebuild + render) ----------------
cat_info_t=(); cat_table_t=()
for r in $(seq "$REPS"); do
	log "heapfs cat gc/latest/info, gc/latest/by-type/table ($r/$REPS)"
	t0=$(now)
	"$HEAPFS" cat "$TRACE" gc/latest/info >"$WORK/info.txt" || die "heapfs cat gc/latest/info failed"
	cat_info_t+=("$(elapsed "$t0" "$(now)")")
	t0=$(now)
	"$HEAPFS" cat "$TRACE" gc/latest/by-type/table >"$WORK/table.txt" ||
		die "heapfs cat gc/latest/by-type/table failed"
	cat_table_t+=("$(elapsed "$t0" "$(now)")")
done
TABLE_ROWS=$(($(wc -l <"$WORK/table.txt") - 1))

# ---- mount to first ls ------------------------------------------------------
# Foreground mount in the background; time until `ls MNT` lists the tree.
mkdir -p "$MNT"
mount_start() {
	"$HEAPFS" -f "$TRACE" "$MNT" >"$WORK/mount.log" 2>&1 &
	MOUNT_PID=$!
}
# Waits (60 s at most) until ls MNT shows the tree; 1 if the daemon died or timed out.
mount_wait() {
	local _
	for _ in $(seq 6000); do
		# shellcheck disable=SC2010 # `ls` succeeding on the mount is what is measured
		ls "$MNT" 2>/dev/null | grep -q '^gc$' && return 0
		kill -0 "$MOUNT_PID" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}
mount_stop() {
	fusermount3 -u "$MNT" 2>/dev/null
	kill "$MOUNT_PID" 2>/dev/null
	wait "$MOUNT_PID" 2>/dev/null
	MOUNT_PID=
}
mount_t=(); fuse_t=(); MOUNT_HOW="FUSE mount (heapfs -f) to first successful ls"
for r in $(seq "$REPS"); do
	log "mount to first ls, then cat by-type/table through FUSE ($r/$REPS)"
	t0=$(now)
	mount_start
	if ! mount_wait; then
		mount_stop
		log "mounting failed ($(head -c 300 "$WORK/mount.log" | tr '\n' ' ')); timing heapfs ls TRACE / instead"
		MOUNT_HOW="heapfs ls TRACE / (FUSE mount unavailable)"
		mount_t=(); fuse_t=()
		for _ in $(seq "$REPS"); do
			t0=$(now)
			"$HEAPFS" ls "$TRACE" / >/dev/null || die "heapfs ls failed"
			mount_t+=("$(elapsed "$t0" "$(now)")")
		done
		break
	fi
	mount_t+=("$(elapsed "$t0" "$(now)")")
	# one cold read of the by-type table through FUSE (rebuild + group + render)
	t0=$(now)
	cat "$MNT/gc/latest/by-type/table" >/dev/null && fuse_t+=("$(elapsed "$t0" "$(now)")")
	mount_stop
done
fuse_table_med=""
[ "${#fuse_t[@]}" -gt 0 ] && fuse_table_med=$(median "${fuse_t[@]}")

# ---- the table ----------------------------------------------------------
SYNTH=$(median "${synth_t[@]}")
OPEN=$(median "${open_t[@]}")
BUILD=$(median "${build_t[@]}")
BUILD_CPU=$(median "${build_cpu_t[@]}")
RSS_KB=$(median "${rss_kb[@]}")
MOUNT=$(median "${mount_t[@]}")
CAT_INFO=$(median "${cat_info_t[@]}")
CAT_TABLE=$(median "${cat_table_t[@]}")
REBUILD_RATE=$(calc "$OBJECTS / $BUILD" "%.0f")
REBUILD_CPU_RATE=$(calc "$OBJECTS / $BUILD_CPU" "%.0f")
STATE_PER_OBJ=$(calc "$STATE_BYTES / $OBJECTS")
RSS_PER_OBJ=$(calc "$RSS_KB * 1024 / $OBJECTS")

row() { printf '%-46s %18s  %s\n' "$1" "$2" "${3:-}"; }
ratio() { calc "$1 / $2" "%.2fx"; }
verdict() { # value goal higher|lower
	if awk -v v="$1" -v g="$2" -v d="$3" 'BEGIN { exit !(d == "higher" ? v >= g : v <= g) }'; then
		echo "meets goal"
	else
		echo "MISSES goal"
	fi
}

echo
echo "heapfs bench: synth multicache -n $N, $REPS runs each, medians; $(nproc) cores, $(uname -m)"
echo "trace $TRACE_BYTES bytes, $GCS GCs; last GC: $OBJECTS live objects, $EDGES edges, $INFOS interned infos"
echo "load average at start: $LOAD_START, at end: $(loadavg) (timings are only comparable on an idle machine)"
echo
row "figure" "value" "vs goal"
row "------" "-----" "-------"
row "trace bytes" "$TRACE_BYTES" "$(calc "$TRACE_BYTES / $OBJECTS") bytes per live object at the last GC"
row "synth time (s)" "$SYNTH"
row "mount to first ls (s)" "$MOUNT" "$MOUNT_HOW"
row "trace_open (s)" "$OPEN"
row "rebuild last GC, heap_state_build (s)" "$BUILD"
row "reconstruction (objects/s, with edges)" "$REBUILD_RATE" \
	"goal >= $GOAL_REBUILD: $(ratio "$REBUILD_RATE" "$GOAL_REBUILD") $(verdict "$REBUILD_RATE" "$GOAL_REBUILD" higher)"
row "rebuild last GC, CPU time (s)" "$BUILD_CPU" "one thread: the process's CPU time"
row "reconstruction (objects per CPU second)" "$REBUILD_CPU_RATE" \
	"goal >= $GOAL_REBUILD on one core: $(ratio "$REBUILD_CPU_RATE" "$GOAL_REBUILD") $(verdict "$REBUILD_CPU_RATE" "$GOAL_REBUILD" higher)"
row "reconstruction (edges/s)" "$(calc "$EDGES / $BUILD" "%.0f")"
# rate_row LABEL SECONDS: objects/s of a grouping against the goal
rate_row() {
	local rate
	if awk -v g="$2" 'BEGIN { exit !(g > 0) }'; then
		rate=$(calc "$OBJECTS / $2" "%.0f")
		row "$1" "$rate" "goal >= $GOAL_GROUP: $(ratio "$rate" "$GOAL_GROUP") $(verdict "$rate" "$GOAL_GROUP" higher)"
	else
		row "$1" "inf" "below clock resolution (meets goal)"
	fi
}
if [ "$GROUP_IN_PROCESS" = 1 ]; then
	GROUP=$(median "${group_t[@]}")
	GROUP_OBJ=$(median "${group_obj_t[@]}")
	row "by-type from census: census+classify (s)" "$GROUP" "what by-type/table takes after the rebuild"
	rate_row "by-type from census (objects/s)" "$GROUP"
	row "by-type per object: classify_objects (s)" "$GROUP_OBJ" "the path per-object classifiers take"
	rate_row "by-type per object (objects/s)" "$GROUP_OBJ"
else
	row "by-type grouping in-process" "-" "not measured: bench_rebuild.c does not build against fs/classify.h"
fi
row "heapfs cat gc/latest/info (s)" "$CAT_INFO" "process: open + rebuild + render"
row "heapfs cat gc/latest/by-type/table (s)" "$CAT_TABLE" "$TABLE_ROWS rows; process: open + rebuild + group + render"
CAT_GROUP=$(calc "$CAT_TABLE - $CAT_INFO" "%.3f")
row "  table minus info (s)" "$CAT_GROUP" "grouping + rendering as seen through the tree"
[ -n "$fuse_table_med" ] && row "cat MNT/gc/latest/by-type/table (s)" "$fuse_table_med" "through FUSE, fresh mount"
row "peak RSS of bench_rebuild (bytes)" "$((RSS_KB * 1024))"
row "heap_state_memory (bytes)" "$STATE_BYTES"
row "bytes per live object, heap_state_memory" "$STATE_PER_OBJ" \
	"goal <= $GOAL_BYTES: $(ratio "$STATE_PER_OBJ" "$GOAL_BYTES") $(verdict "$STATE_PER_OBJ" "$GOAL_BYTES" lower)"
row "bytes per live object, peak RSS" "$RSS_PER_OBJ" \
	"goal <= $GOAL_BYTES: $(ratio "$RSS_PER_OBJ" "$GOAL_BYTES") $(verdict "$RSS_PER_OBJ" "$GOAL_BYTES" lower)"
echo
echo "runs: synth ${synth_t[*]} | open ${open_t[*]} | rebuild ${build_t[*]} | rebuild CPU ${build_cpu_t[*]}"
[ "$GROUP_IN_PROCESS" = 1 ] && echo "      by-type census ${group_t[*]} | by-type per object ${group_obj_t[*]}"
echo "      mount ${mount_t[*]} | cat info ${cat_info_t[*]} | cat table ${cat_table_t[*]}${fuse_t:+ | FUSE cat table ${fuse_t[*]}} | rss_kb ${rss_kb[*]}"
# ---- the memory goal's own heap: two references per object ----------------
# (multicache has about 1.3; DESIGN states the goal for about two)
N2=${BENCH_N2:-10000000}
echo; echo "two references per live object (tests/bench/gen_tworefs.c, $N2 objects, random second references):"
TWO="$WORK/tworefs.htr"
# shellcheck disable=SC2046
if "$CC" -std=gnu11 -O2 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$ROOT" -o "$WORK/gen_tworefs" \
	"$ROOT/tests/bench/gen_tworefs.c" "$ROOT/build/libheapfs.a" $(pkg-config --libs fuse3 libzstd) -lpthread -lm &&
	"$WORK/gen_tworefs" "$N2" "$TWO"; then
	two_t=(); two_cpu_t=(); two_rss=()
	for r in $(seq "$REPS"); do
		/usr/bin/time -v -o "$WORK/time2.txt" "$BENCH_BIN" "$TWO" >"$WORK/bench2.txt" || die "bench_rebuild on $TWO failed"
		get2() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$WORK/bench2.txt"; }
		two_t+=("$(get2 build_s)"); two_cpu_t+=("$(get2 build_cpu_s)")
		two_rss+=("$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$WORK/time2.txt")")
	done
	O2=$(get2 objects); E2=$(get2 edges); SB2=$(get2 state_bytes)
	B2=$(median "${two_t[@]}"); C2=$(median "${two_cpu_t[@]}"); R2=$(median "${two_rss[@]}")
	row "  objects, edges (edges per object)" "$O2 $E2" "$(calc "$E2 / $O2")"
	row "  rebuild (s), objects/s" "$B2" "$(calc "$O2 / $B2" "%.0f")"
	row "  rebuild CPU (s), objects per CPU second" "$C2" "$(calc "$O2 / $C2" "%.0f")"
	row "  bytes per live object, heap_state_memory" "$(calc "$SB2 / $O2")" \
		"goal <= $GOAL_BYTES: $(verdict "$(calc "$SB2 / $O2")" "$GOAL_BYTES" lower)"
	row "  bytes per live object, peak RSS" "$(calc "$R2 * 1024 / $O2")" \
		"goal <= $GOAL_BYTES: $(verdict "$(calc "$R2 * 1024 / $O2")" "$GOAL_BYTES" lower)"
	echo "  runs: rebuild ${two_t[*]} | CPU ${two_cpu_t[*]} | rss_kb ${two_rss[*]}"
	rm -f "$TWO"
else
	log "gen_tworefs failed: no two-references figures"
fi
# ---- windows: detectors, timeline/gcs.csv, memory.svg at 10^6 GCs ----
echo; echo "windows at 10^6 GCs (goals: each detector, gcs.csv <= 1 s; memory.svg < 2 MB):"
# shellcheck disable=SC2046
"$CC" -std=gnu11 -O2 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$ROOT" $(pkg-config --cflags fuse3) -o "$WORK/bench_windows" "$ROOT/tests/bench/bench_windows.c" "$ROOT/build/libheapfs.a" $(pkg-config --libs fuse3 libzstd) -lpthread -lm && "$WORK/bench_windows" 1000000 "$WORK" | sed 's/^/  /' || log "bench_windows: a goal missed or it failed"
# ---- classification and root classifiers on the same trace ----
echo; echo "classification of the last GC (goals: by-type, by-site >= 100 M objects/s; type/site/thread >= 30 M; expression >= 10 M; diff <= 2 s):"
# shellcheck disable=SC2046
"$CC" -std=gnu11 -O2 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$ROOT" $(pkg-config --cflags fuse3) -o "$WORK/bench_classify" "$ROOT/tests/bench/bench_classify.c" "$ROOT/build/libheapfs.a" $(pkg-config --libs fuse3 libzstd) -lpthread -lm && "$WORK/bench_classify" "$TRACE" | sed 's/^/  /' || log "bench_classify failed"
# ---- closures and dominators on the same trace ----
echo; echo "closures and dominators of the last GC (goals: dominator tree <= 3 s; GC closure >= 20 M closure objects/s; by-type table with retained sizes <= 10 s):"
BENCH_TRACE="$TRACE" bash "$ROOT/tests/bench/bench_closures.sh" "$HEAPFS" 2>&1 | sed 's/^/  /' || log "bench_closures: a goal missed or it failed"
# ---- data-structure roles on the same trace ----
echo; echo "data-structure roles of the last GC (goals: roles <= 5 s; ds/heads <= 2 s after that):"
# shellcheck disable=SC2046
"$CC" -std=gnu11 -O2 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$ROOT" $(pkg-config --cflags fuse3) -o "$WORK/bench_roles" "$ROOT/tests/bench/bench_roles.c" "$ROOT/build/libheapfs.a" $(pkg-config --libs fuse3 libzstd) -lpthread -lm && "$WORK/bench_roles" "$TRACE" | sed 's/^/  /' || log "bench_roles failed"
# ---- heap dumps: import throughput, first table, retained sizes, memory; VisualVM on ~73 MB ----
echo; echo "heap dumps (HPROF):"
bash "$ROOT/tests/bench/bench_hprof.sh" "$HEAPFS" 2>&1 | sed 's/^/  /' || log "bench_hprof: a goal missed or it failed"
# ---- suspects: cold cat suspects on 10^7 objects x 1,000 GCs (goal <= 20 s) and on the >= 1 GB dump (goal <= 30 s) ----
echo; echo "suspects:"
bash "$ROOT/tests/bench/bench_suspects.sh" "$HEAPFS" 2>&1 | sed 's/^/  /' || log "bench_suspects: a goal missed or it failed"
# ---- JFR: a 100 MB recording mounted cold (goal <= 2 s), MB/s next to jfr print's ----
echo; echo "JDK Flight Recorder recording:"
bash "$ROOT/tests/bench/bench_jfr.sh" "$HEAPFS" 2>&1 | sed 's/^/  /' || log "bench_jfr: a goal missed or it failed"
# ---- heapfs and VisualVM's heap library side by side: MultiCache, H2 (a real application), the 1 GB dump ----
echo; echo "heapfs against VisualVM's heap library, same dumps, one run (histogram, every retained size, by-type table with retained columns; threads):"
bash "$ROOT/tests/bench/bench_vvm.sh" "$HEAPFS" | sed 's/^/  /' || log "bench_vvm failed"
# ---- the same dumps' suspects, stage by stage, on 1, 2 and every core ----
echo; echo "opening a dump and its suspects, stage by stage (goals: 2 threads >= 1.7x one on the 1 GB dump; suspects <= 6 s there, <= 1.5 s on H2, at 2 threads):"
bash "$ROOT/tests/bench/bench_stages.sh" "$HEAPFS" | sed 's/^/  /' || log "bench_stages failed"
