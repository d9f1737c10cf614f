#!/usr/bin/env bash
# test_mount.sh - mount a synthetic trace for real and use it with ordinary
# tools: listing, reading with cat/head/tail/grep/awk/sort/wc/cp/less/python
# and dd at odd offsets, recursive walks, ls -l without computation,
# read-only behaviour, concurrent readers.  The reading battery runs once
# multithreaded (the default) and once single-threaded (-s).  The walks over
# the whole tree (ls -l of every directory, find: 263,521 entries, about
# 50 s, each FUSE request a round trip) run on the multithreaded mount; the
# single-threaded one walks all but gc/002 and later, which hold the same
# kinds of directories as gc/001.
#
# Reference bytes come from `heapfs cat` (no FUSE, separate process): the
# mount must serve exactly what the tree renders.  Counts come from the
# synth parameters (-n 1000 -g 5).
#
# Usage: HEAPFS=/abs/path/build/heapfs bash tests/integration/test_mount.sh
. "$(dirname "$0")/mountlib.bash"

NOBJ=1000
NGC=5
PRODUCT=example.multicache.Product
TRACE=$WORK/T.htr
make_trace "$TRACE" multicache -n "$NOBJ" -g "$NGC"

# ref PATH: the tree's bytes for PATH, via heapfs cat, cached in $WORK/ref.
ref() {
	local f
	f="$WORK/ref/$(printf '%s' "$1" | tr '/' '_')"
	if [ ! -e "$f" ]; then
		mkdir -p "$WORK/ref"
		t "$HEAPFS" cat "$TRACE" "$1" >"$f" || fail "heapfs cat $1"
	fi
	printf '%s\n' "$f"
}

# Files that need a heap state and that nobody has read through the mount
# M yet: each reading tool gets its own, so it meets the size-unknown path.
pick_fresh() {
	local m=$1 want=$2 g f
	FRESH=()
	for g in $(ls "$m/gc" | grep -v '^latest$'); do
		for f in by-type/table by-site/table by-thread/table by-type/table.csv \
			by-type/table.json summary objects/all info; do
			if [ -e "$m/gc/$g/$f" ]; then FRESH+=("gc/$g/$f"); fi
		done
	done
	[ "${#FRESH[@]}" -ge "$want" ] || fail "only ${#FRESH[@]} expensive files to test with"
	FRESH=("${FRESH[@]:0:$want}")
}

check_listing() {
	local m=$1
	# every GC and only those: -g 5 gives 5 GCs, zero-padded to >= 3 digits
	local names expected
	names=$(t ls "$m/gc" | grep -v '^latest$')
	[ "$(printf '%s\n' "$names" | wc -l)" -eq "$NGC" ] || fail "ls gc: $(echo $names), expected $NGC GCs"
	if printf '%s\n' "$names" | grep -qvE '^[0-9]{3,}$'; then fail "ls gc: bad names: $(echo $names)"; fi
	# the same GCs as the timeline lists (gc column, padded like the names)
	local width
	width=$(printf '%s\n' "$names" | head -n 1 | tr -d '\n' | wc -c)
	expected=$(t tail -n +2 "$m/timeline/gcs.csv" | cut -d, -f1 |
		while read -r n; do printf '%0*d\n' "$width" "$n"; done | sort)
	[ "$(printf '%s\n' "$names" | sort)" = "$expected" ] || fail "ls gc vs timeline/gcs.csv: $names / $expected"
	t ls "$m/gc" | grep -qx latest || fail "gc/latest missing"
	ok "ls gc: $NGC GCs $(echo $names) and latest"

	local latest last
	latest=$(t readlink "$m/gc/latest")
	last=$(printf '%s\n' "$names" | sort | tail -n 1)
	[ "$latest" = "$last" ] || fail "readlink gc/latest = '$latest', expected '$last'"
	ok "readlink gc/latest = $latest"

	local count via_cat
	count=$(t cat "$m/gc/latest/by-type/$PRODUCT/count")
	[ "$count" = "$NOBJ" ] || fail "$PRODUCT count $count, expected $NOBJ"
	via_cat=$(t "$HEAPFS" cat "$TRACE" "gc/latest/by-type/$PRODUCT/count")
	[ "$count" = "$via_cat" ] || fail "mount says $count, heapfs cat says $via_cat"
	ok "gc/latest/by-type/$PRODUCT/count = $count = heapfs cat"

	# multicache: GC k of G sees floor(N*k/G) Products
	local k=0 g c
	for g in $(printf '%s\n' "$names" | sort); do
		k=$((k + 1))
		c=$(t cat "$m/gc/$g/by-type/$PRODUCT/count")
		[ "$c" = $((NOBJ * k / NGC)) ] || fail "gc/$g: $c Products, expected $((NOBJ * k / NGC))"
	done
	ok "Products per GC: floor($NOBJ*k/$NGC)"

	t cat "$m/README" | grep -q . || fail "README empty"
	t cat "$m/trace/info" | grep -q "$(printf '\t')" || fail "trace/info has no key<TAB>value"
	ok "README, trace/info readable"
}

# One reading tool per fresh file, then the same tools again on the now
# rendered (exact-size, page-cached) files.
check_reading_tools() {
	local m=$1 f r out=$WORK/out pass i
	pick_fresh "$m" 12
	for f in "${FRESH[@]}"; do
		[ "$(stat -c %s "$m/$f")" = 0 ] || fail "$f has a size before anyone read it"
	done
	for pass in fresh cached; do
		i=0
		for f in "${FRESH[@]}"; do
			r=$(ref "$f")
			case $i in
			0) t cat "$m/$f" >"$out"; same_bytes "$out" "$r" "cat $f" ;;
			1) [ "$(t head -c 100 "$m/$f" | od -An -c)" = "$(head -c 100 "$r" | od -An -c)" ] || fail "head -c $f"
			   [ "$(t head -n 2 "$m/$f")" = "$(head -n 2 "$r")" ] || fail "head -n $f" ;;
			2) [ "$(t tail -n 3 "$m/$f")" = "$(tail -n 3 "$r")" ] || fail "tail -n $f"
			   [ "$(t tail -c 17 "$m/$f" | od -An -c)" = "$(tail -c 17 "$r" | od -An -c)" ] || fail "tail -c $f" ;;
			3) [ "$(t grep -c . "$m/$f")" = "$(grep -c . "$r")" ] || fail "grep -c $f"
			   [ "$(t grep -n 0 "$m/$f" || true)" = "$(grep -n 0 "$r" || true)" ] || fail "grep 0 $f" ;;
			4) [ "$(t awk '{ n++; b += length($0) + 1 } END { print n, b }' "$m/$f")" = \
			     "$(awk '{ n++; b += length($0) + 1 } END { print n, b }' "$r")" ] || fail "awk $f" ;;
			5) [ "$(t sort "$m/$f")" = "$(sort "$r")" ] || fail "sort $f" ;;
			6) [ "$(t wc -c <"$m/$f")" = "$(wc -c <"$r")" ] || fail "wc -c $f"
			   [ "$(t wc -l <"$m/$f")" = "$(wc -l <"$r")" ] || fail "wc -l $f" ;;
			7) rm -f "$WORK/copy"; t cp "$m/$f" "$WORK/copy"; same_bytes "$WORK/copy" "$r" "cp $f" ;;
			8) LESS= LESSOPEN= t less "$m/$f" </dev/null | cat >"$out"; same_bytes "$out" "$r" "less $f" ;;
			9) t python3 -c 'import sys; sys.stdout.write(open(sys.argv[1], newline="").read())' "$m/$f" >"$out"
			   same_bytes "$out" "$r" "python3 open().read() $f" ;;
			10) check_dd "$m/$f" "$r" ;;
			11) check_interleaved "$m/$f" "$r" ;;
			esac
			i=$((i + 1))
		done
		ok "reading tools ($pass files): cat head tail grep awk sort wc cp less python3 dd pread"
	done
	for f in "${FRESH[@]}"; do
		[ "$(stat -c %s "$m/$f")" = "$(wc -c <"$(ref "$f")")" ] || fail "size of $f after reading: $(stat -c %s "$m/$f")"
	done
	ok "sizes exact once rendered"

	# A size seen as 0 just before the first read must not make the next
	# open (exact size now, page cache) read an empty file.
	local g
	for g in $(ls "$m/gc" | grep -v latest); do
		f=gc/$g/by-type/table.json
		stat "$m/$f" >/dev/null
		t cat "$m/$f" >"$out.1"
		t cat "$m/$f" >"$out.2"
		t head -c 5 "$m/$f" >"$out.3"
		same_bytes "$out.1" "$(ref "$f")" "first cat of $f"
		same_bytes "$out.2" "$(ref "$f")" "second cat of $f"
		[ "$(cat "$out.3")" = "$(head -c 5 "$(ref "$f")")" ] || fail "head -c 5 of $f after cat"
	done
	ok "stat, cat, cat: the second open reads the whole file"
}

# dd with small blocks and odd skips equals the same slice of the reference.
check_dd() {
	local p=$1 r=$2 bs skip size
	size=$(wc -c <"$r")
	t dd if="$p" bs=1 status=none >"$WORK/dd1"
	same_bytes "$WORK/dd1" "$r" "dd bs=1 $p"
	for bs in 3 7 13 333 4096; do
		for skip in 0 1 5 17; do
			t dd if="$p" bs="$bs" skip="$skip" status=none >"$WORK/dd2"
			dd if="$r" bs="$bs" skip="$skip" status=none >"$WORK/dd3"
			same_bytes "$WORK/dd2" "$WORK/dd3" "dd bs=$bs skip=$skip $p"
		done
	done
	# a read starting beyond the end returns nothing
	t dd if="$p" bs=1 skip=$((size + 10)) status=none >"$WORK/dd4" 2>/dev/null || true
	[ ! -s "$WORK/dd4" ] || fail "dd beyond EOF returned bytes"
}

# Two open file descriptions read in interleaved random slices (pread).
check_interleaved() {
	t python3 - "$1" "$2" <<'EOF' || fail "interleaved pread $1"
import os, random, sys
p, r = sys.argv[1], sys.argv[2]
want = open(r, "rb").read()
a, b = os.open(p, os.O_RDONLY), os.open(p, os.O_RDONLY)
rnd = random.Random(7)
for i in range(300):
    fd = a if i % 2 else b
    off = rnd.randrange(0, len(want) + 20)
    n = rnd.choice([1, 2, 3, 7, 100, 4096, 70000])
    got = os.pread(fd, n, off)
    if got != want[off:off + n]:
        sys.exit("slice %d+%d differs" % (off, n))
EOF
}

# walk_find M EXPRESSION...: find M EXPRESSION, but with gc/002 and later
# pruned when WALK_PRUNE is yes (run_battery sets it).  Exported, so that
# `t` (timeout) can run it through bash.
walk_find() {
	local m=$1
	shift
	if [ "$WALK_PRUNE" = yes ]; then
		find "$m" \( -path "$m/gc/*" ! -path "$m/gc/*/*" ! -name 001 ! -name latest \) -prune -o "$@"
	else
		find "$m" "$@"
	fi
}
export -f walk_find

check_walks() {
	local m=$1 what=find
	t bash -c 'walk_find "$@"' _ "$m" -print >"$WORK/find.out" ||
		fail "find $m did not finish"
	grep -qx "$m/gc/latest" "$WORK/find.out" || fail "find: no gc/latest"
	grep -q "/by-type/$PRODUCT/count\$" "$WORK/find.out" || fail "find: no by-type/$PRODUCT/count"
	grep -q "/gc/001/diff/" "$WORK/find.out" || fail "find: nothing under gc/001/diff"
	t grep -r . "$m/gc/latest/by-type" >/dev/null || fail "grep -r gc/latest/by-type did not finish"
	# du stats every entry, as ls -l did: one GC's tree is enough
	t du -s "$m/gc/001" "$m/timeline" "$m/allocs" >/dev/null || fail "du -s did not finish"
	[ "$WALK_PRUNE" = yes ] && what="find, all but gc/002 and later"
	ok "$what ($(wc -l <"$WORK/find.out") entries), grep -r, du gc/001 terminate"
}

# ls -l does not build heap states (sizes of expensive files are 0 until read).
check_ls_cheap() {
	local m=$1 b0 b1 start end g
	b0=$(status_value "$m" state_builds)
	[ -n "$b0" ] || fail "status has no state_builds"
	start=$(date +%s%N)
	t ls -l "$m" "$m/gc" "$m/trace" "$m/timeline" >/dev/null
	for g in $(ls "$m/gc" | grep -v latest); do
		t ls -l "$m/gc/$g" >/dev/null
		t ls -l "$m/gc/$g/" >/dev/null
		[ "$(stat -c %s "$m/gc/$g/summary")" = 0 ] || fail "gc/$g/summary has a size before anyone read it"
	done
	end=$(date +%s%N)
	b1=$(status_value "$m" state_builds)
	[ "$b0" = "$b1" ] || fail "ls -l gc/NNN built heap states (state_builds $b0 -> $b1)"
	[ $(((end - start) / 1000000)) -lt 5000 ] || fail "ls -l of the GC directories took $(((end - start) / 1000000)) ms"
	ok "ls -l gc/NNN: no heap state built (state_builds stays $b0), $(((end - start) / 1000000)) ms"
	# ls -l on every directory, 100 to an ls, two ls at a time, each ls
	# bounded (an ls per directory took 70 s of make test's time; two at a
	# time take 22 s where one at a time took 30)
	local n
	t bash -c 'walk_find "$@"' _ "$m" -type d -print0 >"$WORK/dirs" || fail "find -type d $m did not finish"
	n=$(tr -cd '\0' <"$WORK/dirs" | wc -c)
	[ "$n" -gt 1000 ] || fail "only $n directories to list"
	xargs -0 -n 100 -P 2 timeout "$STEP_TIMEOUT" ls -l <"$WORK/dirs" >/dev/null ||
		fail "ls -l on the directories: a listing failed or hung (above)"
	ok "ls -l on $n directories$([ "$WALK_PRUNE" = yes ] && echo ', all but gc/002 and later')"
}

expect_erofs() {
	local what=$1 err=$WORK/err
	shift
	if t "$@" 2>"$err"; then fail "$what succeeded"; fi
	grep -q "Read-only file system" "$err" || fail "$what: $(cat "$err")"
}

check_read_only() {
	local m=$1
	expect_erofs "touch new file" touch "$m/newfile"
	expect_erofs "touch status" touch "$m/status"
	expect_erofs "mkdir" mkdir "$m/gc/newdir"
	expect_erofs "echo > status" bash -c 'echo x > "$1"' _ "$m/status"
	expect_erofs "echo >> README" bash -c 'echo x >> "$1"' _ "$m/README"
	expect_erofs "rm" rm -f "$m/README"
	expect_erofs "rmdir" rmdir "$m/trace"
	expect_erofs "mv" mv "$m/README" "$m/README2"
	expect_erofs "chmod" chmod 666 "$m/README"
	expect_erofs "ln -s" ln -s README "$m/link"
	expect_erofs "truncate" truncate -s 0 "$m/README"
	t python3 - "$m/README" <<'EOF' || fail "python open(w) did not fail with EROFS"
import errno, sys
try:
    open(sys.argv[1], "w")
except OSError as e:
    sys.exit(0 if e.errno == errno.EROFS else "errno %d" % e.errno)
sys.exit("opened for writing")
EOF
	if [ -w "$m/README" ]; then fail "test -w README is true"; fi
	if [ -e "$m/newfile" ]; then fail "newfile exists"; fi
	ok "writes fail with EROFS (touch mkdir echo> rm rmdir mv chmod ln truncate open(w))"
}

# 10 readers of one expensive file at once: same bytes for all, and no more
# heap-state builds than a single reader needs (measured on a second fresh
# mount).
check_concurrent() {
	local opts=$1 m1=$WORK/mc1 m2=$WORK/mc2 f b0 b1 one ten i
	mount_trace "$TRACE" "$m1" $opts
	f=$(cd "$m1" && ls -d gc/[0-9]* | head -n 1)/by-type/table
	b0=$(status_value "$m1" state_builds)
	local pids=()
	for i in $(seq 1 10); do
		t cat "$m1/$f" >"$WORK/conc.$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || fail "a concurrent reader failed"; done
	b1=$(status_value "$m1" state_builds)
	ten=$((b1 - b0))
	for i in $(seq 1 10); do same_bytes "$WORK/conc.$i" "$(ref "$f")" "concurrent reader $i of $f"; done

	mount_trace_daemon "$TRACE" "$m2" $opts
	b0=$(status_value "$m2" state_builds)
	t cat "$m2/$f" >/dev/null
	b1=$(status_value "$m2" state_builds)
	one=$((b1 - b0))
	[ "$one" -ge 1 ] || fail "reading $f built no heap state: the check would prove nothing"
	[ "$ten" = "$one" ] || fail "10 concurrent readers built $ten states, 1 reader builds $one"
	ok "10 concurrent readers of $f: same bytes, $ten state build(s) like 1 reader"
	unmount "$m1"
	unmount "$m2"
}

run_battery() {
	local opts=$1
	local m=$WORK/m${opts//[^a-z]/}
	echo "# mount options: '${opts:-default}'"
	export WALK_PRUNE=no
	case $opts in *-s*) WALK_PRUNE=yes ;; esac
	mount_trace "$TRACE" "$m" $opts
	grep -q " $m fuse.heapfs " /proc/mounts || fail "/proc/mounts has no fuse.heapfs entry for $m"
	check_ls_cheap "$m"
	check_listing "$m"
	check_reading_tools "$m"
	check_walks "$m"
	check_read_only "$m"
	unmount "$m"
	check_concurrent "$opts"
}

# A heap state larger than the states' budget (cache_mb=16: 12 MiB) is kept
# while it is the newest, not rebuilt for every file that needs it: three
# files of one GC, one build.  (Before: a build per file, the state freed
# as soon as its reader let it go.)
check_state_over_budget() {
	local big=$WORK/big.htr m=$WORK/mbig b0 b1 f
	"$HEAPFS" synth multicache -q -n 60000 -g 2 -o "$big"
	mount_trace "$big" "$m" -o cache_mb=16
	b0=$(status_value "$m" state_builds)
	for f in by-type/table dominators/top roots/table; do
		t cat "$m/gc/002/$f" >/dev/null || fail "cat gc/002/$f over budget"
	done
	b1=$(status_value "$m" state_builds)
	local largest budget
	largest=$(status_value "$m" largest_state)
	budget=$(status_value "$m" state_cache_budget)
	[ "$largest" -gt "$budget" ] || fail "the state ($largest B) fits the budget ($budget B): the check proves nothing"
	[ $((b1 - b0)) -eq 1 ] || fail "3 files of one GC over budget built $((b1 - b0)) states, want 1"
	ok "a state over the budget ($largest B > $budget B) is kept for the next reads: 3 files, 1 build"
	unmount "$m"
}

run_battery ""
run_battery "-s"
check_state_over_budget
