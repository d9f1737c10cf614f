#!/usr/bin/env bash
# bench_hprof.sh - the figures for heap dumps (docs/hprof.md, "Scale"):
#
#   bash tests/bench/bench_hprof.sh /abs/path/to/build/heapfs
#
# On a dump of >= 1 GB made once by examples/java/example/dumpgen/DumpGen
# (BENCH_BIG, default /tmp/heapfs-bench-1g.hprof: 4,000,000 products, about
# 24 M objects and 1.1 GB; about 15 s to make, kept for the next run):
#   - indexing throughput: `heapfs import` of the dump, dump bytes/s, and its
#     peak RSS per GB of dump;
#   - mounted directly (`heapfs -f DUMP MNT`: one pass over the dump writes
#     a temporary trace and builds the heap state, docs/hprof.md "Mounting
#     a dump directly"): time until mounted, time to the first
#     gc/000/by-type/table (which at a GC with a graph has the deep and
#     retained columns, i.e. a GC closure per type), time until
#     gc/000/dominators/top too (the dominator tree: every object's retained
#     size), and the mount's peak RSS per GB of dump.
# On a ~73 MB dump of ~1.5 M objects (BENCH_SMALL, DumpGen 240000 products:
# the size of the issue's anchor, where VisualVM took 26.7 s and 2.6 GB),
# the same for heapfs, and VisualVM's heap library computing every retained
# size on the same dump (VvmRetained top 10: HprofHeap.computeRetainedSize)
# with its wall time and peak RSS.  Goal: >= 20x faster in <= 1/10 of the
# memory.  BENCH_VVM_BIG=1 also runs VisualVM on the big dump (slow).
#
# Every figure is the median of BENCH_REPS runs (default 3; the machine is
# shared, so single runs vary by +-50 %).  For the speedup, heapfs (mount to
# every retained size) and VisualVM run alternately on the same dump, so
# that both see the same load: speedup = median of VisualVM's times over
# median of heapfs's times in those pairs (and the median of the pairs'
# own ratios); the CPU seconds each used are shown too (VisualVM's are
# spread over threads, heapfs's are one thread's).  BENCH_SKIP_BIG=1 runs
# only the anchor-sized dump.
#
# Needs javac/java; VisualVM's jar (apt-get install visualvm) for the
# comparison, else that part is skipped.
set -u -o pipefail

HEAPFS=${1:?usage: bench_hprof.sh /abs/path/to/heapfs}
HEAPFS=$(cd "$(dirname "$HEAPFS")" && pwd)/$(basename "$HEAPFS")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/dumps.bash
. "$ROOT/tests/bench/dumps.bash"   # BENCH_BIG, BENCH_SMALL, make_dump
BIG=$BENCH_BIG
SMALL=$BENCH_SMALL
REPS=${BENCH_REPS:-3}
VVM_JAR=${VVM_JAR:-/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar}
WORK=$(mktemp -d /tmp/heapfs-bench-hprof-XXXXXX)
MNT=$WORK/mnt
PID=
cleanup() {
	if mountpoint -q "$MNT" 2>/dev/null; then fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT"; fi
	[ -n "$PID" ] && kill "$PID" 2>/dev/null
	rm -rf --one-file-system "$WORK"
}
trap cleanup EXIT
die() { echo "bench_hprof.sh: $*" >&2; exit 1; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# peak RSS (kB) from /usr/bin/time -v output
maxrss() { awk -F': ' '/Maximum resident set size/ { print $2 }' "$1"; }
# wall time (s) from /usr/bin/time -v output
wallsecs() { awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
	for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$1"; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# all VALUES...: "median (min-max, n runs)"
spread() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%s\t(%s-%s, %d runs)", v[int((NR + 1) / 2)], v[1], v[NR], NR }'; }
command -v javac >/dev/null || die "javac not found"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"

CLASSES=$WORK/classes
mkdir -p "$CLASSES" "$MNT"
javac -d "$CLASSES" "$ROOT/examples/java/example/dumpgen/DumpGen.java" || die "javac DumpGen"
have_vvm=0
if [ -r "$VVM_JAR" ]; then
	javac -cp "$VVM_JAR" -d "$CLASSES" "$ROOT/examples/java/example/dumpgen/VvmRetained.java" &&
		have_vvm=1
fi

# make_dump FILE PRODUCTS: DumpGen, once (tests/bench/dumps.bash, shared
# with bench_suspects.sh)
DUMPGEN_CLASSES=$CLASSES

# mount_once DUMP: one direct mount; sets M_MOUNT M_TABLE M_ALL (s from the
# start of the mount), M_CPU (user + system s of the heapfs process until
# then), M_RSS M_ANON (kB)
mount_once() {
	local dump=$1 t0 t1 t2 t3 _
	rm -f "$WORK/anon"
	sync
	# Nothing is spawned between t0 and t3 but heapfs and the two cats:
	# clocks, waits and the memory sampler are bash builtins, so that on a
	# loaded machine the bench's own processes do not slow heapfs down
	# (reading from a FIFO nobody writes is a builtin sleep).
	[ -p "$WORK/tick" ] || mkfifo "$WORK/tick"
	exec 9<>"$WORK/tick"
	t0=$EPOCHREALTIME
	"$HEAPFS" -f "$dump" "$MNT" 2>"$WORK/mount.err" &
	PID=$!
	# peak anonymous memory (RssAnon): RSS without the pages of the mapped
	# dump and trace, which the kernel can drop at any time
	(peak=0; while [ -r "/proc/$PID/status" ]; do
		while read -r k v _; do
			[ "$k" = RssAnon: ] || continue
			[ "$v" -gt "$peak" ] && peak=$v && echo "$peak" >"$WORK/anon"
			break
		done <"/proc/$PID/status" 2>/dev/null
		read -r -t 0.05 -u 9 _
	done) &
	# mounted: the tree's README exists (before, the directory is empty)
	while [ ! -e "$MNT/README" ] && [ -d "/proc/$PID" ]; do read -r -t 0.005 -u 9 _; done
	[ -e "$MNT/README" ] || die "mount failed: $(cat "$WORK/mount.err")"
	t1=$EPOCHREALTIME
	cat "$MNT/gc/000/by-type/table" >"$WORK/table" || die "by-type/table failed"
	t2=$EPOCHREALTIME
	cat "$MNT/gc/000/dominators/top" >"$WORK/top" || die "dominators/top failed"
	t3=$EPOCHREALTIME
	M_RSS=$(awk '/VmHWM/ { print $2 }' "/proc/$PID/status")
	M_CPU=$(awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$PID/stat")
	fusermount3 -u "$MNT"
	wait "$PID" 2>/dev/null
	PID=
	wait 2>/dev/null   # the RssAnon sampler
	exec 9>&-
	M_MOUNT=$(secs "$t0" "$t1")
	M_TABLE=$(secs "$t0" "$t2")
	M_ALL=$(secs "$t0" "$t3")
	M_ANON=$(cat "$WORK/anon" 2>/dev/null || echo 0)
}

# bench_heapfs DUMP: prints the figures for one dump (medians of REPS runs)
bench_heapfs() {
	local dump=$1 size gb objs r
	local imp=() irss=() mnt=() tab=() all=() rss=() anon=()
	size=$(stat -c %s "$dump")
	gb=$(awk -v s="$size" 'BEGIN { print s / 1e9 }')
	echo "== heapfs on $dump ($size bytes), medians of $REPS runs"
	for r in $(seq 1 "$REPS"); do
		sync
		/usr/bin/time -v "$HEAPFS" import -q "$dump" -o "$WORK/d.htr" 2>"$WORK/import.time" ||
			die "import failed: $(cat "$WORK/import.time")"
		imp+=("$(wallsecs "$WORK/import.time")")
		irss+=("$(maxrss "$WORK/import.time")")
		[ "$r" = 1 ] && objs=$("$HEAPFS" cat "$WORK/d.htr" trace/info |
			awk -F'\t' '$1 == "hprof.0.objects" { print $2 }')
		rm -f "$WORK/d.htr"
	done
	for r in $(seq 1 "$REPS"); do
		mount_once "$dump"
		mnt+=("$M_MOUNT"); tab+=("$M_TABLE"); all+=("$M_ALL"); rss+=("$M_RSS"); anon+=("$M_ANON")
	done
	local wall irss_m rss_m anon_m
	wall=$(median "${imp[@]}")
	irss_m=$(median "${irss[@]}")
	rss_m=$(median "${rss[@]}")
	anon_m=$(median "${anon[@]}")
	printf 'objects\t%s\n' "$objs"
	printf 'import_s\t%s\n' "$(spread "${imp[@]}")"
	printf 'index_throughput_MB_per_s\t%s\n' "$(awk -v s="$size" -v w="$wall" 'BEGIN { printf "%.0f", s / 1e6 / w }')"
	printf 'import_peak_rss_MB_per_GB\t%s\n' "$(awk -v r="$irss_m" -v g="$gb" 'BEGIN { printf "%.0f", r / 1024 / g }')"
	printf 'mounted_s\t%s\n' "$(spread "${mnt[@]}")"
	printf 'first_by_type_table_s\t%s\t(from the start of the mount; the table has deep and retained columns)\n' "$(spread "${tab[@]}")"
	printf 'all_retained_sizes_s\t%s\t(by-type table, then dominators/top: every object'"'"'s retained size)\n' "$(spread "${all[@]}")"
	printf 'mount_peak_rss_MB\t%s\t(includes the mapped dump'"'"'s pages)\n' "$((rss_m / 1024))"
	printf 'mount_peak_anon_MB\t%s\t(RssAnon sampled every 50 ms: heapfs'"'"'s own memory)\n' "$((anon_m / 1024))"
	printf 'mount_peak_anon_MB_per_GB\t%s\n' "$(awk -v r="$anon_m" -v g="$gb" 'BEGIN { printf "%.0f", r / 1024 / g }')"
	printf 'mount_peak_rss_MB_per_GB\t%s\n' "$(awk -v r="$rss_m" -v g="$gb" 'BEGIN { printf "%.0f", r / 1024 / g }')"
	printf 'bytes_per_object\t%s\n' "$(awk -v r="$rss_m" -v n="$objs" 'BEGIN { printf "%.0f", r * 1024 / n }')"
	HEAPFS_ALL_S=$(median "${all[@]}")
	HEAPFS_RSS_MB=$((rss_m / 1024))
	head -n 3 "$WORK/top" | sed 's/^/  top: /'
}

# vvm_once DUMP: VisualVM's library computing all retained sizes; sets
# V_S (wall s), V_CPU (user + system s), V_RSS (MB)
vvm_once() {
	cp "$1" "$WORK/vvm.hprof"   # it writes a cache directory next to the dump
	/usr/bin/time -v java -cp "$CLASSES:$VVM_JAR" example.dumpgen.VvmRetained "$WORK/vvm.hprof" top 10 \
		>"$WORK/vvm.out" 2>"$WORK/vvm.time" || die "VisualVM failed: $(tail -n 5 "$WORK/vvm.time")"
	rm -rf "$WORK/vvm.hprof" "$WORK/vvm.hprof.hwcache"
	V_S=$(wallsecs "$WORK/vvm.time")
	V_CPU=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$WORK/vvm.time")
	V_RSS=$(($(maxrss "$WORK/vvm.time") / 1024))
	grep '^vvm:' "$WORK/vvm.time" | sed 's/^/  /'
}

# bench_pairs DUMP: heapfs (mount to every retained size) and VisualVM
# (every retained size) alternately, REPS pairs; prints both and the ratios
bench_pairs() {
	local dump=$1 r hs=() hcpu=() hrss=() vs=() vcpu=() vrss=() ratios=()
	echo "== heapfs and VisualVM's heap library alternately on $dump, $REPS pairs"
	for r in $(seq 1 "$REPS"); do
		mount_once "$dump"
		vvm_once "$dump"
		hs+=("$M_ALL"); hcpu+=("$M_CPU"); hrss+=("$((M_RSS / 1024))")
		vs+=("$V_S"); vcpu+=("$V_CPU"); vrss+=("$V_RSS")
		ratios+=("$(awk -v v="$V_S" -v h="$M_ALL" 'BEGIN { printf "%.1f", v / h }')")
		printf 'pair %s\theapfs %s s (cpu %s s)\tVisualVM %s s (cpu %s s)\tratio %s\n' "$r" "$M_ALL" "$M_CPU" \
			"$V_S" "$V_CPU" "${ratios[-1]}"
	done
	HEAPFS_ALL_S=$(median "${hs[@]}")
	HEAPFS_RSS_MB=$(median "${hrss[@]}")
	VVM_S=$(median "${vs[@]}")
	VVM_RSS_MB=$(median "${vrss[@]}")
	printf 'heapfs_all_retained_sizes_s\t%s\n' "$(spread "${hs[@]}")"
	printf 'heapfs_cpu_s\t%s\n' "$(spread "${hcpu[@]}")"
	printf 'heapfs_peak_rss_MB\t%s\n' "$(spread "${hrss[@]}")"
	printf 'vvm_all_retained_sizes_s\t%s\n' "$(spread "${vs[@]}")"
	printf 'vvm_cpu_s\t%s\n' "$(spread "${vcpu[@]}")"
	printf 'vvm_peak_rss_MB\t%s\n' "$(spread "${vrss[@]}")"
	head -n 3 "$WORK/vvm.out" | sed 's/^/  top: /'
	echo "== on the anchor-sized dump"
	printf 'speedup\t%s\t(median VisualVM / median heapfs; goal >= 20)\n' \
		"$(awk -v v="$VVM_S" -v h="$HEAPFS_ALL_S" 'BEGIN { printf "%.1f", v / h }')"
	printf 'speedup_per_pair\t%s\n' "$(spread "${ratios[@]}")"
	printf 'cpu_ratio\t%s\t(median CPU seconds, VisualVM / heapfs)\n' \
		"$(awk -v v="$(median "${vcpu[@]}")" -v h="$(median "${hcpu[@]}")" 'BEGIN { printf "%.1f", v / h }')"
	printf 'memory_ratio\t%s\t(goal <= 0.10)\n' \
		"$(awk -v v="$VVM_RSS_MB" -v h="$HEAPFS_RSS_MB" 'BEGIN { printf "%.3f", h / v }')"
}

# bench_vvm DUMP: VisualVM alone, REPS runs (BENCH_VVM_BIG)
bench_vvm() {
	local r vs=() vrss=()
	echo "== VisualVM's heap library on $1, medians of $REPS runs"
	for r in $(seq 1 "$REPS"); do
		vvm_once "$1"
		vs+=("$V_S"); vrss+=("$V_RSS")
	done
	printf 'vvm_all_retained_sizes_s\t%s\n' "$(spread "${vs[@]}")"
	printf 'vvm_peak_rss_MB\t%s\n' "$(spread "${vrss[@]}")"
}

if [ "${BENCH_SKIP_BIG:-0}" != 1 ]; then
	make_dump "$BIG" "$DUMP_BIG_PRODUCTS" || die "no dump"
	bench_heapfs "$BIG"
	[ "${BENCH_VVM_BIG:-0}" = 1 ] && [ "$have_vvm" = 1 ] && bench_vvm "$BIG"
fi
make_dump "$SMALL" "$DUMP_SMALL_PRODUCTS" || die "no dump"
bench_heapfs "$SMALL"
if [ "$have_vvm" = 1 ]; then
	bench_pairs "$SMALL"
else
	echo "# VisualVM's heap library not found at $VVM_JAR: no comparison"
fi
