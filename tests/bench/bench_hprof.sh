#!/usr/bin/env bash
# bench_hprof.sh - issue 8's figures for heap dumps (docs/hprof.md, "Scale"):
#
#   bash tests/bench/bench_hprof.sh /abs/path/to/build/heapfs
#
# On a dump of >= 1 GB made once by examples/java/example/dumpgen/DumpGen
# (BENCH_BIG, default /tmp/heapfs-bench-1g.hprof: 4,000,000 products, about
# 24 M objects and 1.1 GB; about 15 s to make, kept for the next run):
#   - indexing throughput: `heapfs import` of the dump, dump bytes/s, and its
#     peak RSS per GB of dump;
#   - mounted directly (`heapfs -f DUMP MNT`, which imports into a temporary
#     trace and indexes it): time until mounted, time to the first
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
# Needs javac/java; VisualVM's jar (apt-get install visualvm) for the
# comparison, else that part is skipped.
set -u -o pipefail

HEAPFS=${1:?usage: bench_hprof.sh /abs/path/to/heapfs}
HEAPFS=$(cd "$(dirname "$HEAPFS")" && pwd)/$(basename "$HEAPFS")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIG=${BENCH_BIG:-/tmp/heapfs-bench-1g.hprof}
SMALL=${BENCH_SMALL:-/tmp/heapfs-bench-73m.hprof}
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

# make_dump FILE PRODUCTS: DumpGen, once
make_dump() {
	[ -s "$1" ] && return 0
	local t0
	t0=$(now)
	echo "making $1 (DumpGen $2 products) ..."
	java -Xmx8g -cp "$CLASSES" example.dumpgen.DumpGen "${1%.hprof}" "$2" 1 >/dev/null ||
		die "DumpGen failed"
	mv "${1%.hprof}-0.hprof" "$1" || die "no dump"
	echo "  made in $(secs "$t0" "$(now)") s: $(stat -c %s "$1") bytes"
}

# bench_heapfs DUMP: prints the figures for one dump
bench_heapfs() {
	local dump=$1 size gb t0 t1 t2 t3 objs
	size=$(stat -c %s "$dump")
	gb=$(awk -v s="$size" 'BEGIN { print s / 1e9 }')
	echo "== heapfs on $dump ($size bytes)"
	sync
	/usr/bin/time -v "$HEAPFS" import -q "$dump" -o "$WORK/d.htr" 2>"$WORK/import.time" ||
		die "import failed: $(cat "$WORK/import.time")"
	local wall rss
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
		for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$WORK/import.time")
	rss=$(maxrss "$WORK/import.time")
	objs=$("$HEAPFS" cat "$WORK/d.htr" trace/info | awk -F'\t' '$1 == "hprof.0.objects" { print $2 }')
	rm -f "$WORK/d.htr"
	printf 'objects\t%s\n' "$objs"
	printf 'import_s\t%s\n' "$wall"
	printf 'index_throughput_MB_per_s\t%s\n' "$(awk -v s="$size" -v w="$wall" 'BEGIN { printf "%.0f", s / 1e6 / w }')"
	printf 'import_peak_rss_MB_per_GB\t%s\n' "$(awk -v r="$rss" -v g="$gb" 'BEGIN { printf "%.0f", r / 1024 / g }')"

	t0=$(now)
	"$HEAPFS" -f "$dump" "$MNT" 2>"$WORK/mount.err" &
	PID=$!
	# peak anonymous memory (RssAnon): RSS without the pages of the mapped
	# dump and trace, which the kernel can drop at any time
	(peak=0; while [ -r "/proc/$PID/status" ]; do
		a=$(awk '/RssAnon/ { print $2 }' "/proc/$PID/status" 2>/dev/null)
		[ -n "$a" ] && [ "$a" -gt "$peak" ] && peak=$a && echo "$peak" >"$WORK/anon"
		sleep 0.05; done) &
	for _ in $(seq 1 6000); do mountpoint -q "$MNT" && break; kill -0 "$PID" 2>/dev/null || break; sleep 0.05; done
	mountpoint -q "$MNT" || die "mount failed: $(cat "$WORK/mount.err")"
	t1=$(now)
	cat "$MNT/gc/000/by-type/table" >"$WORK/table" || die "by-type/table failed"
	t2=$(now)
	cat "$MNT/gc/000/dominators/top" >"$WORK/top" || die "dominators/top failed"
	t3=$(now)
	rss=$(awk '/VmHWM/ { print $2 }' "/proc/$PID/status")
	fusermount3 -u "$MNT"
	wait "$PID" 2>/dev/null
	PID=
	printf 'mounted_s\t%s\n' "$(secs "$t0" "$t1")"
	printf 'first_by_type_table_s\t%s\t(from the start of the mount; the table has deep and retained columns)\n' "$(secs "$t0" "$t2")"
	printf 'all_retained_sizes_s\t%s\t(by-type table, then dominators/top: every object'"'"'s retained size)\n' "$(secs "$t0" "$t3")"
	local anon
	anon=$(cat "$WORK/anon" 2>/dev/null || echo 0)
	printf 'mount_peak_rss_MB\t%s\t(includes the mapped dump'"'"'s pages)\n' "$((rss / 1024))"
	printf 'mount_peak_anon_MB\t%s\t(RssAnon sampled every 50 ms: heapfs'"'"'s own memory)\n' "$((anon / 1024))"
	printf 'mount_peak_anon_MB_per_GB\t%s\n' "$(awk -v r="$anon" -v g="$gb" 'BEGIN { printf "%.0f", r / 1024 / g }')"
	printf 'mount_peak_rss_MB_per_GB\t%s\n' "$(awk -v r="$rss" -v g="$gb" 'BEGIN { printf "%.0f", r / 1024 / g }')"
	printf 'bytes_per_object\t%s\n' "$(awk -v r="$rss" -v n="$objs" 'BEGIN { printf "%.0f", r * 1024 / n }')"
	HEAPFS_ALL_S=$(secs "$t0" "$t3")
	HEAPFS_RSS_MB=$((rss / 1024))
	head -n 3 "$WORK/top" | sed 's/^/  top: /'
}

# bench_vvm DUMP: VisualVM's library computing all retained sizes
bench_vvm() {
	local dump=$1
	echo "== VisualVM's heap library on $dump"
	cp "$dump" "$WORK/vvm.hprof"   # it writes a cache directory next to the dump
	/usr/bin/time -v java -cp "$CLASSES:$VVM_JAR" example.dumpgen.VvmRetained "$WORK/vvm.hprof" top 10 \
		>"$WORK/vvm.out" 2>"$WORK/vvm.time" || die "VisualVM failed: $(tail -n 5 "$WORK/vvm.time")"
	rm -rf "$WORK/vvm.hprof" "$WORK/vvm.hprof.hwcache"
	VVM_S=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
		for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$WORK/vvm.time")
	VVM_RSS_MB=$(($(maxrss "$WORK/vvm.time") / 1024))
	printf 'vvm_all_retained_sizes_s\t%s\n' "$VVM_S"
	printf 'vvm_peak_rss_MB\t%s\n' "$VVM_RSS_MB"
	grep '^vvm:' "$WORK/vvm.time" | sed 's/^/  /'
	head -n 3 "$WORK/vvm.out" | sed 's/^/  top: /'
}

make_dump "$BIG" 4000000
make_dump "$SMALL" 240000
bench_heapfs "$BIG"
[ "${BENCH_VVM_BIG:-0}" = 1 ] && [ "$have_vvm" = 1 ] && bench_vvm "$BIG"
bench_heapfs "$SMALL"
if [ "$have_vvm" = 1 ]; then
	bench_vvm "$SMALL"
	echo "== on the anchor-sized dump"
	printf 'speedup\t%s\t(goal >= 20)\n' "$(awk -v v="$VVM_S" -v h="$HEAPFS_ALL_S" 'BEGIN { printf "%.1f", v / h }')"
	printf 'memory_ratio\t%s\t(goal <= 0.10)\n' "$(awk -v v="$VVM_RSS_MB" -v h="$HEAPFS_RSS_MB" 'BEGIN { printf "%.3f", h / v }')"
else
	echo "# VisualVM's heap library not found at $VVM_JAR: no comparison"
fi
