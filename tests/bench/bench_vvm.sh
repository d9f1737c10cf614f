#!/usr/bin/env bash
# bench_vvm.sh - heapfs and VisualVM's heap library side by side on the same
# heap dumps, in one run (issue 29 item 4; docs/bench.md):
#
#   bash tests/bench/bench_vvm.sh /abs/path/to/build/heapfs   (make bench runs it last)
#   BENCH_REPS=1 BENCH_SKIP_BIG=1 bash tests/bench/bench_vvm.sh build/heapfs   (quick)
#
# Dumps (each made once, kept under /tmp for the next runs):
#   MultiCache  examples/java/example/multicache (BENCH_MC_PRODUCTS products,
#               default 200000, 2 GCs) held by example.dumpgen.Hold and dumped
#               with `jcmd PID GC.heap_dump` (BENCH_MC, default
#               /tmp/heapfs-bench-multicache-N.hprof; about 71 MB, 1.4 M objects)
#   H2          example.dumpgen.H2Rows: the H2 database (Debian libh2-java)
#               with BENCH_H2_ROWS orders in memory (default 400000), held and
#               dumped the same way (BENCH_H2, default
#               /tmp/heapfs-bench-h2-N.hprof; about 240 MB, 4.8 M objects)
#   1 GB        DumpGen's 4 M products (tests/bench/dumps.bash, BENCH_BIG)
#
# Stages, each timed from a cold start:
#   histogram  every class's instance count and bytes.  heapfs: a mount
#              (`heapfs -f DUMP MNT`) until `grep '' MNT/gc/000/by-type/*/count
#              MNT/gc/000/by-type/*/shallow_size` has read them (the cheapest
#              class histogram a user can read: by-type/table of a GC with a
#              graph has closure columns; per-type counts and sizes do not
#              compute closures).  VisualVM: JavaClass.getInstancesCount and
#              getAllInstancesSize of every class.
#   retained   every single object's retained size.  heapfs: `heapfs cat
#              DUMP gc/000/dominators/top` (the dominator tree).  VisualVM:
#              Heap.getBiggestObjectsByRetainedSize(100)
#              (HprofHeap.computeRetainedSize: every instance).
#   bytype     the by-type table with retained columns.  heapfs: `heapfs
#              cat DUMP gc/000/by-type/table` (every type's GC closure).
#              VisualVM: JavaClass.getRetainedSizeByClass of every class.
# heapfs runs each stage in its own process at HEAPFS_THREADS=1, 2 and
# nproc (duplicates dropped: on 2 cores "2" is "all cores"); wall and CPU
# time and peak RSS from /usr/bin/time -v (the mount: from its start to the
# end of the reads, its VmHWM and CPU from /proc before unmounting).
# VisualVM (examples/java/example/dumpgen/VvmBench.java) runs the three
# stages one after the other in one JVM and reports, at the end of each,
# wall and CPU seconds since the JVM started and its VmHWM: each stage needs
# what the one before computed (the index; every retained size), so the
# time to a stage is that of a cold run stopping there.  Its cache
# directory (DUMP.hwcache, which would let a second run skip the work) is
# made beside a symlink in a scratch directory and removed after every run.
#
# Each repetition runs heapfs's stages, then VisualVM, so that both see the
# same load; figures are medians of BENCH_REPS (default 3) repetitions,
# ratios are median over median (VisualVM / heapfs at all cores, for time
# and for peak RSS) and the median of the repetitions' own ratios.
#
# Before the figures, heapfs's and VisualVM's answers are compared on each
# dump (first repetition): every class's instance count and bytes
# (java.lang.Class: heapfs counts the class objects too, so VisualVM's
# count + the dump's classes; docs/hprof.md); the retained sizes of
# VisualVM's 100 largest objects as heapfs's objects/<id>/retained_size:
# each must be equal, or equal in `heapfs import --keep-referents` of the
# dump (VisualVM's dominator step counts references from objects only
# referents reach, heapfs drops those: docs/hprof.md), or be a class object
# or class loader, or refer to class objects (VisualVM's graph has class
# nodes holding their statics),
# or be larger in heapfs by under 1% (VisualVM also counts references from
# objects nothing reaches: docs/bench.md);
# and, informative, per-class retained sizes (VisualVM sums the instances
# no instance of the same class dominates, heapfs's by-type retained_size
# is the group's GC closure, which also counts what several instances own
# together: docs/closures.md).
#
# Environment: BENCH_REPS (3), BENCH_SKIP_BIG=1 (no 1 GB dump),
# BENCH_SKIP_H2=1, BENCH_SKIP_MC=1, BENCH_VVM_REPS_BIG (VisualVM's runs on
# the 1 GB dump, default BENCH_REPS: about 3.5 min each), BENCH_VVM_TIMEOUT
# (seconds per VisualVM run, default 1800; stages not reached print
# "timeout"), BENCH_VVM_XMX (VisualVM's -Xmx, default 768m: what VisualVM
# runs with, /etc/visualvm/visualvm.conf; a bigger heap only grows its
# RSS: with -Xmx16g the 1 GB dump took 245 s and 19.7 GB instead of 176 s
# and 4.6 GB, docs/bench.md), BENCH_THREADS (heapfs's thread counts, default "1 2 N" with N = nproc).
# Needs javac, jcmd, /usr/bin/time, FUSE; VisualVM's jar (apt-get install
# visualvm) and H2 (apt-get install libh2-java), else that part is skipped.
set -u -o pipefail

HEAPFS=${1:?usage: bench_vvm.sh /abs/path/to/heapfs}
HEAPFS=$(cd "$(dirname "$HEAPFS")" && pwd)/$(basename "$HEAPFS")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/dumps.bash
. "$ROOT/tests/bench/dumps.bash"   # BENCH_BIG, DUMP_BIG_PRODUCTS, make_dump
REPS=${BENCH_REPS:-3}
VVM_JAR=${VVM_JAR:-/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar}
H2_JAR=${H2_JAR:-/usr/share/java/h2.jar}
MC_PRODUCTS=${BENCH_MC_PRODUCTS:-200000}
H2_ROWS=${BENCH_H2_ROWS:-400000}
MC=${BENCH_MC:-/tmp/heapfs-bench-multicache-$MC_PRODUCTS.hprof}
H2=${BENCH_H2:-/tmp/heapfs-bench-h2-$H2_ROWS.hprof}
VVM_TIMEOUT=${BENCH_VVM_TIMEOUT:-1800}
VVM_REPS_BIG=${BENCH_VVM_REPS_BIG:-$REPS}
VVM_XMX=-Xmx${BENCH_VVM_XMX:-768m}
NPROC=$(nproc)
# shellcheck disable=SC2086 # the list is split on purpose
THREADS=$(printf '%s\n' ${BENCH_THREADS:-1 2 "$NPROC"} | awk '!seen[$1]++' | tr '\n' ' ')
read -r -a TLIST <<<"$THREADS"
TALL=${TLIST[-1]}
STAGES=(histogram retained bytype)

WORK=$(mktemp -d /tmp/heapfs-bench-vvm-XXXXXX)
MNT=$WORK/mnt
PID=
HOLD_PID=
cleanup() {
	if mountpoint -q "$MNT" 2>/dev/null; then fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT"; fi
	[ -n "$PID" ] && kill "$PID" 2>/dev/null
	[ -n "$HOLD_PID" ] && kill "$HOLD_PID" 2>/dev/null
	rm -rf --one-file-system "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { echo "bench_vvm.sh: $*" >&2; exit 1; }
log() { echo "bench_vvm: $*" >&2; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
median() { printf '%s\n' "$@" | grep -v '^timeout$' | sort -g |
	awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "timeout" }'; }
# ratio A B [FORMAT]: A / B, or "-" when either is missing
ratio() { awk -v a="$1" -v b="$2" -v f="${3:-%.1f}" 'BEGIN {
	if (a == "timeout" || a == "" || a == "-") { print ">"; exit }
	if (b == "timeout" || b == "" || b == "-" || b + 0 == 0) { print "-"; exit }
	printf f, a / b }'; }
# from /usr/bin/time -v output: wall s, CPU s, peak RSS kB
tv_wall() { awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
	for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s }' "$1"; }
tv_cpu() { awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$1"; }
tv_rss() { awk -F': ' '/Maximum resident set size/ { print $2 }' "$1"; }
command -v javac >/dev/null || die "javac not found"
command -v jcmd >/dev/null || die "jcmd not found"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"
if [ ! -r "$VVM_JAR" ]; then
	echo "# VisualVM's heap library not found at $VVM_JAR (apt-get install visualvm): no comparison"
	exit 0
fi

CLASSES=$WORK/classes
mkdir -p "$CLASSES" "$MNT"
javac -d "$CLASSES" "$ROOT"/examples/java/example/multicache/*.java \
	"$ROOT/examples/java/example/dumpgen/Hold.java" "$ROOT/examples/java/example/dumpgen/DumpGen.java" ||
	die "javac of the examples failed"
javac -cp "$VVM_JAR" -d "$CLASSES" "$ROOT/examples/java/example/dumpgen/VvmBench.java" || die "javac VvmBench"
have_h2=0
if [ -r "$H2_JAR" ] && javac -cp "$H2_JAR" -d "$CLASSES" "$ROOT/examples/java/example/dumpgen/H2Rows.java"; then
	have_h2=1
fi
# shellcheck disable=SC2034 # read by make_dump (dumps.bash)
DUMPGEN_CLASSES=$CLASSES   # make_dump's DumpGen

# hold_dump FILE XMX CLASSPATH MAIN ARGS...: runs MAIN under example.dumpgen.Hold
# and dumps it with jcmd GC.heap_dump once it is ready, unless FILE exists
hold_dump() {
	local file=$1 xmx=$2 cp=$3 t0 _
	shift 3
	[ -s "$file" ] && return 0
	echo "making $file ($*) ..."
	t0=$EPOCHREALTIME
	java "$xmx" -cp "$cp" example.dumpgen.Hold "$@" >"$WORK/hold.out" 2>&1 &
	HOLD_PID=$!
	while ! grep -q '^ready' "$WORK/hold.out"; do
		kill -0 "$HOLD_PID" 2>/dev/null || { cat "$WORK/hold.out" >&2; HOLD_PID=; return 1; }
		sleep 0.2
	done
	rm -f "$file.tmp.hprof"
	jcmd "$HOLD_PID" GC.heap_dump "$file.tmp.hprof" >"$WORK/jcmd.out" 2>&1 ||
		{ cat "$WORK/jcmd.out" >&2; return 1; }
	kill "$HOLD_PID"; wait "$HOLD_PID" 2>/dev/null; HOLD_PID=
	[ -s "$file.tmp.hprof" ] || { cat "$WORK/jcmd.out" >&2; return 1; }
	mv "$file.tmp.hprof" "$file"
	echo "  made in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s: $(stat -c %s "$file") bytes"
}

# ---- heapfs -----------------------------------------------------------------
# Sets R_WALL R_CPU (s) and R_RSS (kB) of one cold stage.
heapfs_histogram() {
	local dump=$1 t0 t1
	sync
	# waits are bash builtins (a read with a timeout on a FIFO nobody
	# writes): nothing is spawned beside heapfs while it is timed
	[ -p "$WORK/tick" ] || mkfifo "$WORK/tick"
	exec 9<>"$WORK/tick"
	t0=$EPOCHREALTIME
	HEAPFS_THREADS=$2 "$HEAPFS" -f "$dump" "$MNT" 2>"$WORK/mount.err" &
	PID=$!
	while [ ! -e "$MNT/README" ] && [ -d "/proc/$PID" ]; do read -r -t 0.005 -u 9 _; done
	exec 9>&-
	[ -e "$MNT/README" ] || die "mount of $dump failed: $(cat "$WORK/mount.err")"
	grep '' "$MNT"/gc/000/by-type/*/count "$MNT"/gc/000/by-type/*/shallow_size >"$WORK/h.histogram" ||
		die "reading by-type/*/count failed"
	t1=$EPOCHREALTIME
	R_RSS=$(awk '/VmHWM/ { print $2 }' "/proc/$PID/status")
	R_CPU=$(awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$PID/stat")
	fusermount3 -u "$MNT"
	wait "$PID" 2>/dev/null
	PID=
	R_WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}
heapfs_cat() { # DUMP THREADS PATH OUT
	sync
	HEAPFS_THREADS=$2 /usr/bin/time -v -o "$WORK/h.time" "$HEAPFS" cat "$1" "$3" >"$4" 2>"$WORK/h.err" ||
		die "heapfs cat $1 $3 failed: $(head -c 500 "$WORK/h.err")"
	R_WALL=$(tv_wall "$WORK/h.time"); R_CPU=$(tv_cpu "$WORK/h.time"); R_RSS=$(tv_rss "$WORK/h.time")
}
heapfs_stage() { # STAGE DUMP THREADS
	case $1 in
	histogram) heapfs_histogram "$2" "$3" ;;
	retained) heapfs_cat "$2" "$3" gc/000/dominators/top "$WORK/h.retained" ;;
	bytype) heapfs_cat "$2" "$3" gc/000/by-type/table "$WORK/h.bytype" ;;
	esac
}

# ---- VisualVM ---------------------------------------------------------------
# vvm_run DUMP XMX: sets V_WALL[s] V_CPU[s] V_RSS[s] per stage s ("timeout" for
# stages not reached in BENCH_VVM_TIMEOUT seconds)
declare -A V_WALL V_CPU V_RSS
vvm_run() {
	local dump=$1 xmx=$2 s rc w c r
	rm -rf "$WORK/vvm"; mkdir -p "$WORK/vvm/tmp" "$WORK/vvm/out"
	ln -s "$dump" "$WORK/vvm/d.hprof"
	sync
	# shellcheck disable=SC2086 # xmx: one option
	timeout --signal=KILL "$VVM_TIMEOUT" java $xmx -Djava.io.tmpdir="$WORK/vvm/tmp" -cp "$CLASSES:$VVM_JAR" \
		example.dumpgen.VvmBench "$WORK/vvm/d.hprof" "$WORK/vvm/out" "${STAGES[@]}" \
		>"$WORK/vvm.stages" 2>"$WORK/vvm.err"
	rc=$?
	for s in "${STAGES[@]}"; do
		V_WALL[$s]=timeout; V_CPU[$s]=timeout; V_RSS[$s]=timeout
	done
	while IFS=$'\t' read -r s w c r; do
		s=${s#stage }
		V_WALL[$s]=$w; V_CPU[$s]=$c; V_RSS[$s]=$r
	done <"$WORK/vvm.stages"
	if [ "$rc" = 137 ]; then
		log "VisualVM stopped after $VVM_TIMEOUT s (BENCH_VVM_TIMEOUT)"
	elif [ "$rc" != 0 ]; then
		log "VisualVM failed ($rc): $(tail -n 3 "$WORK/vvm.err" | tr '\n' ' ')"
	fi
	rm -rf "$WORK/vvm/d.hprof.hwcache" "$WORK/vvm/tmp"
}

# ---- the check: do both give the same answers? ------------------------------
# retained_of TRACE LIST [plain]: heapfs's objects/<id>/retained_size of each
# id (LIST: id TAB class TAB VisualVM's size), one mount, one line each ("-"
# where there is no such object), then TAB yes/no: where heapfs's is the
# smaller, whether the object refers to a class object (unless "plain")
retained_of() {
	"$HEAPFS" -f "$1" "$MNT" 2>"$WORK/mount.err" &
	PID=$!
	while [ ! -e "$MNT/README" ] && [ -d "/proc/$PID" ]; do sleep 0.01; done
	[ -e "$MNT/README" ] || die "mount of $1 failed: $(cat "$WORK/mount.err")"
	local id o=$MNT/gc/000/objects r h t
	while IFS=$'\t' read -r id _ v; do
		r=$(cat "$o/$id/retained_size" 2>/dev/null) || r=-
		# does it refer to a class object, itself or through a small object (a list's array)?
		h=no
		if [ "${3:-}" = plain ] || [ "$r" = - ] || [ "$r" -ge "$v" ]; then
			:
		elif grep -q $'\tjava.lang.Class$' "$o/$id/refs" 2>/dev/null; then
			h=yes
		elif [ "$(wc -l <"$o/$id/refs" 2>/dev/null)" -le 5 ]; then
			while read -r t; do
				grep -q $'\tjava.lang.Class$' "$o/$t/refs" 2>/dev/null && h=yes
			done < <(awk -F'\t' 'NR > 1 { print $2 }' "$o/$id/refs" 2>/dev/null)
		fi
		printf '%s\t%s\n' "$r" "$h"
	done <"$2"
	fusermount3 -u "$MNT"; wait "$PID" 2>/dev/null; PID=
}

# check_answers DUMP LABEL: compares heapfs's files with VisualVM's (from the
# first repetition); prints the result
check_answers() {
	local dump=$1 label=$2 classes o=$WORK/vvm/out ok=1 line
	echo "check on $label: heapfs against VisualVM's heap library, same dump"
	classes=$("$HEAPFS" cat "$dump" trace/info | awk -F'\t' '$1 == "hprof.0.classes" { print $2 }')
	# heapfs's histogram: MNT/gc/000/by-type/NAME/{count,shallow_size}:N, names
	# escaped (%2F, %25, a % prefix before a reserved name)
	sed -e "s#^$MNT/gc/000/by-type/##" -e 's#/\(count\|shallow_size\):#\t\1\t#' "$WORK/h.histogram" |
		awk -F'\t' '{ n = $1; if (n ~ /^%/ && n !~ /^%2[5F]/) n = substr(n, 2)
			gsub(/%2F/, "/", n); gsub(/%25/, "%", n)
			if ($2 == "count") c[n] = $3; else b[n] = $3 }
			END { for (n in c) print n "\t" c[n] "\t" b[n] }' | sort >"$WORK/c.h"
	if [ -s "$o/histogram" ]; then
		sort "$o/histogram" >"$WORK/c.v"
		line=$(join -t$'\t' -a1 -a2 -e missing -o 0,1.2,1.3,2.2,2.3 "$WORK/c.h" "$WORK/c.v" | awk -F'\t' -v k="$classes" '
			$1 == "java.lang.Class" { if ($2 == $4 + k) cls = "count equal (" $2 " = " $4 " + " k " classes)"
				else { cls = "count DIFFERS (" $2 " vs " $4 " + " k ")"; bad++ }; next }
			{ n++; if ($2 == $4 && $3 == $5) eq++; else { bad++; if (bad <= 5) ex = ex " " $1 ":" $2 "," $3 "/" $4 "," $5 } }
			END { printf "%d of %d classes: the same count and bytes; java.lang.Class %s%s\t%d", eq, n, cls,
				(ex ? "; differ (heapfs/VisualVM):" ex : ""), bad }')
		echo "  histogram: ${line%$'\t'*}"
		[ "${line##*$'\t'}" = 0 ] || ok=0
	else
		echo "  histogram: VisualVM gave none"; ok=0
	fi
	if [ -s "$o/retained" ] && [ -s "$WORK/h.retained" ]; then
		# heapfs's objects/<id>/retained_size of VisualVM's 100 largest, from
		# the dump and from `heapfs import --keep-referents` of it (every
		# referent edge kept: VisualVM's dominator step counts referents too)
		retained_of "$dump" "$o/retained" >"$WORK/c.hr"
		"$HEAPFS" import -q --keep-referents "$dump" -o "$WORK/keep.htr" || die "heapfs import --keep-referents failed"
		retained_of "$WORK/keep.htr" "$o/retained" plain | cut -f1 >"$WORK/c.kr"
		rm -f "$WORK/keep.htr"
		line=$(paste "$o/retained" "$WORK/c.hr" "$WORK/c.kr" | awk -F'\t' '
			{ n++; if ($3 == $4) { eq++; next } }
			$4 == "-" { miss++; next }
			$6 == $3 { ref++; d = ($4 - $3) / $3; if (d < 0) d = -d; if (d > dref) dref = d; next }
			$4 < $3 && ($2 == "java.lang.Class" || $2 ~ /ClassLoader/ || $5 == "yes") { cls++; t[$2]++; next }
			$4 > $3 && ($4 - $3) / $3 < 0.01 { un++; ux = ux " " $2 " " $1 " (heapfs " $4 ", VisualVM " $3 ")"; next }
			{ bad++; ex = ex " " $1 " " $2 " (heapfs " $4 ", with --keep-referents " $6 ", VisualVM " $3 ")" }
			END { printf "%d of %d equal", eq, n
				if (ref) printf "; %d equal once referents are kept (heapfs import --keep-referents; they differed by up to %.1f%%)", ref, dref * 100
				if (cls) { printf "; %d class objects, loaders and lists of classes, smaller in heapfs (in VisualVM a class holds its statics):", cls
					for (x in t) printf " %s x%d", x, t[x] }
				if (un) printf "; %d larger in heapfs by under 1%% (VisualVM counts references from unreachable objects too, e.g. a Class$ReflectionData only the dump-less Class.reflectionData held; docs/bench.md):%s", un, ux
				if (miss) printf "; %d not objects in heapfs", miss
				if (bad) printf "; UNEXPLAINED:%s", ex
				printf "\t%d", bad + miss }')
		echo "  retained sizes of VisualVM's 100 largest objects (heapfs's objects/<id>/retained_size): ${line%$'\t'*}"
		[ "${line##*$'\t'}" = 0 ] || ok=0
		# the statically rooted objects of heapfs's top 100 that VisualVM's top 100 holds too
		line=$(awk -F'\t' 'NR == FNR { v[$1] = $3; next } FNR > 1 && $7 ~ /^static / && ($1 in v) {
				r = substr($7, 8); sub(/;.*/, "", r); n++
				if (v[$1] == $3) { eq++; if (eq <= 3) names = names " " r "=" $3 }
				else bad = bad " " r "(heapfs " $3 ", VisualVM " v[$1] ")" }
			END { if (!n) { printf "none in both"; exit }
				printf "%d of %d equal%s%s%s", eq, n, (eq ? ":" names : ""), (eq > 3 ? " ..." : ""),
				(bad ? "; differ:" bad : "") }' "$o/retained" "$WORK/h.retained")
		echo "  statically rooted objects in both top-100 lists: $line"
	else
		echo "  retained sizes: VisualVM gave none"; ok=0
	fi
	if [ -s "$o/bytype" ]; then
		awk -F'\t' 'NR == FNR { v[$1] = $3; next } FNR > 1 && ($1 in v) { n++; if (v[$1] == $7) eq++ }
			END { printf "  per-class retained sizes (informative, different definitions): %d of %d classes equal\n", eq, n }' \
			"$o/bytype" "$WORK/h.bytype"
	fi
	if [ "$ok" = 1 ]; then
		echo "  => AGREE: every class's count and bytes; every retained size compared, or the documented reason it differs"
	else
		echo "  => DISAGREE: the figures below compare different answers"
	fi
	CHECK[$label]=$([ "$ok" = 1 ] && echo agree || echo DISAGREE)
}

# ---- one dump ---------------------------------------------------------------
declare -A CHECK
SUMMARY=()
# shellcheck disable=SC2086 # the figures' lists (" 1.2 1.3 1.1") are split on purpose
bench_dump() { # LABEL DUMP VVM_REPS XMX
	local label=$1 dump=$2 vreps=$3 xmx=$4 r s t size objs
	size=$(stat -c %s "$dump")
	objs=$("$HEAPFS" cat "$dump" trace/info | awk -F'\t' '$1 == "hprof.0.objects" { print $2 }')
	echo
	echo "== $label: $dump ($size bytes, $objs objects), load average $(loadavg)"
	declare -A HW HC HR VW VC VR RT RR
	for r in $(seq 1 "$REPS"); do
		for s in "${STAGES[@]}"; do
			for t in "${TLIST[@]}"; do
				log "$label rep $r/$REPS: heapfs $s, $t threads"
				heapfs_stage "$s" "$dump" "$t"
				HW[$s,$t]+=" $R_WALL"; HC[$s,$t]+=" $R_CPU"; HR[$s,$t]+=" $R_RSS"
			done
		done
		if [ "$r" -le "$vreps" ]; then
			log "$label rep $r/$REPS: VisualVM ${STAGES[*]} (timeout $VVM_TIMEOUT s)"
			vvm_run "$dump" "$xmx"
			for s in "${STAGES[@]}"; do
				VW[$s]+=" ${V_WALL[$s]}"; VC[$s]+=" ${V_CPU[$s]}"; VR[$s]+=" ${V_RSS[$s]}"
			done
			[ "$r" = 1 ] && check_answers "$dump" "$label"
		fi
		# per-repetition ratios against heapfs at all cores
		for s in "${STAGES[@]}"; do
			[ "$r" -le "$vreps" ] || continue
			local hw vw hr vr
			hw=$(echo "${HW[$s,$TALL]}" | awk '{ print $NF }'); vw=$(echo "${VW[$s]}" | awk '{ print $NF }')
			hr=$(echo "${HR[$s,$TALL]}" | awk '{ print $NF }'); vr=$(echo "${VR[$s]}" | awk '{ print $NF }')
			RT[$s]+=" $(ratio "$vw" "$hw")"
			RR[$s]+=" $(ratio "$vr" "$hr")"
		done
	done
	# the table
	echo
	printf '%-10s %-10s' "$label" "stage"
	for t in "${TLIST[@]}"; do printf ' %10s' "heapfs $t"; done
	printf ' %9s %9s %10s %9s %9s | %8s %8s %8s %8s\n' "hfs CPU" "hfs MB" "VisualVM" "VVM CPU" "VVM MB" "time x" "pairs x" "RSS x" "hfs/VVM"
	for s in "${STAGES[@]}"; do
		local hws=() m vmw vmc vmr hmw hmr
		printf '%-10s %-10s' "" "$s"
		for t in "${TLIST[@]}"; do
			m=$(median ${HW[$s,$t]}); hws+=("$m")
			printf ' %10s' "$m"
		done
		hmw=${hws[-1]}
		hmr=$(median ${HR[$s,$TALL]})
		vmw=$(median ${VW[$s]:-timeout}); vmc=$(median ${VC[$s]:-timeout}); vmr=$(median ${VR[$s]:-timeout})
		printf ' %9s %9s %10s %9s %9s | %8s %8s %8s %8s\n' "$(median ${HC[$s,$TALL]})" "$((hmr / 1024))" \
			"$vmw" "$vmc" "$([ "$vmr" = timeout ] && echo timeout || echo $((vmr / 1024)))" \
			"$(ratio "$vmw" "$hmw")" "$(median ${RT[$s]:-timeout})" "$(ratio "$vmr" "$hmr")" \
			"$(ratio "$hmr" "$vmr" "%.3f")"
		SCALE[$label,$s]="${hws[*]}"
		if [ "$s" = retained ]; then
			local tx rx verdict
			tx=$(ratio "$vmw" "$hmw"); rx=$(ratio "$hmr" "$vmr" "%.3f")
			if [ "$vmw" = timeout ]; then
				verdict="VisualVM timed out after $VVM_TIMEOUT s: speed-up > $(ratio "$VVM_TIMEOUT" "$hmw")"
			elif awk -v t="$tx" -v m="$rx" 'BEGIN { exit !(t >= 50 && m <= 0.10) }'; then
				verdict="meets goal (>= 50x, <= 0.10 of the memory)"
			else
				verdict="MISSES goal (>= 50x faster, <= 0.10 of the memory)"
			fi
			SUMMARY+=("$(printf '%-10s every retained size: %sx faster, %s of the memory: %s' "$label" "$tx" "$rx" "$verdict")")
		fi
	done
	echo "  runs (s): $(for s in "${STAGES[@]}"; do printf '%s heapfs %s:%s VisualVM:%s; ' "$s" "$TALL" "${HW[$s,$TALL]}" "${VW[$s]:- none}"; done)"
	printf '  thread scaling (heapfs, speed-up over 1 thread):'
	for s in "${STAGES[@]}"; do
		read -r -a v <<<"${SCALE[$label,$s]}"
		printf ' %s' "$s"
		for ((i = 1; i < ${#TLIST[@]}; i++)); do printf ' %s thr %sx' "${TLIST[$i]}" "$(ratio "${v[0]}" "${v[$i]}" "%.2f")"; done
		printf ';'
	done
	echo
	echo "  load average after: $(loadavg)"
}
declare -A SCALE

echo "heapfs against VisualVM's heap library ($(basename "$VVM_JAR"), java $VVM_XMX), $REPS repetitions, medians"
echo "$NPROC cores, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo); heapfs threads: $THREADS(the last = all cores); load average at start: $(loadavg)"
echo "columns: heapfs T = wall s with HEAPFS_THREADS=T; hfs CPU, hfs MB = CPU s and peak RSS at all cores;"
echo "VisualVM = wall s to the stage in one JVM (CPU s, peak RSS MB); time x = VisualVM / heapfs (all cores), median over"
echo "median; pairs x = median of the repetitions' own ratios; RSS x = VisualVM / heapfs peak RSS; hfs/VVM its inverse"

if [ "${BENCH_SKIP_MC:-0}" != 1 ]; then
	hold_dump "$MC" -Xmx2g "$CLASSES" example.multicache.Main "$MC_PRODUCTS" 2 || die "no MultiCache dump"
	bench_dump MultiCache "$MC" "$REPS" "$VVM_XMX"
fi
if [ "${BENCH_SKIP_H2:-0}" != 1 ]; then
	if [ "$have_h2" = 1 ]; then
		hold_dump "$H2" -Xmx4g "$CLASSES:$H2_JAR" example.dumpgen.H2Rows "$H2_ROWS" || die "no H2 dump"
		bench_dump H2 "$H2" "$REPS" "$VVM_XMX"
	else
		echo "# H2 not found at $H2_JAR (apt-get install libh2-java): no real-application dump"
	fi
fi
if [ "${BENCH_SKIP_BIG:-0}" != 1 ]; then
	make_dump "$BENCH_BIG" "$DUMP_BIG_PRODUCTS" || die "no 1 GB dump"
	bench_dump "1GB" "$BENCH_BIG" "$VVM_REPS_BIG" "$VVM_XMX"
fi
echo
echo "summary (goal: at least 50x faster to every single-object retained size, in at most 1/10 of VisualVM's memory):"
for l in "${SUMMARY[@]}"; do echo "  $l"; done
for k in "${!CHECK[@]}"; do echo "  answers on $k: ${CHECK[$k]}"; done
echo "load average at end: $(loadavg)"
