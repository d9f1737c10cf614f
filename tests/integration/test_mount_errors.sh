#!/usr/bin/env bash
# test_mount_errors.sh - what the mount command refuses, and how:
#   bad options       exit 2, the message names the option, nothing mounted;
#   damaged traces    exit non-zero, the message names the file and the
#                     offset, nothing mounted (also in the foreground);
#   truncated trace   mounts; status and stderr say it is truncated;
#   bad mount points  exit non-zero with a message.
#
# Usage: HEAPFS=/abs/path/build/heapfs bash tests/integration/test_mount_errors.sh
. "$(dirname "$0")/mountlib.bash"

TRACE=$WORK/T.htr
make_trace "$TRACE" multicache -n 1000 -g 5
MNT=$WORK/mnt
mkdir -p "$MNT"
MOUNTS+=("$MNT")

# expect_refused WHAT EXIT MESSAGE-REGEX heapfs-args...
expect_refused() {
	local what=$1 want_rc=$2 msg=$3 rc=0
	shift 3
	t "$HEAPFS" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	if [ "$rc" -eq 0 ]; then fail "$what: exit 0"; fi
	if [ "$rc" -eq 124 ]; then fail "$what: timed out"; fi
	if [ "$want_rc" != any ] && [ "$rc" -ne "$want_rc" ]; then
		fail "$what: exit $rc, expected $want_rc ($(cat "$WORK/err"))"
	fi
	grep -qE -- "$msg" "$WORK/err" || fail "$what: stderr lacks /$msg/: $(cat "$WORK/err")"
	if mountpoint -q "$MNT"; then fail "$what: mounted anyway"; fi
	ok "$what: exit $rc, '$(head -n 1 "$WORK/err")'"
}

# --- options ---
expect_refused "unknown option" 2 "heapfs: unknown option 'foo=bar'" -o foo=bar "$TRACE" "$MNT"
expect_refused "unknown flag" 2 "heapfs: unknown option '-x'" -x "$TRACE" "$MNT"
expect_refused "cache_mb=abc" 2 \
	"heapfs: invalid value for cache_mb: 'abc' \(expected an integer 16\.\.1048576\)" \
	-o cache_mb=abc "$TRACE" "$MNT"
expect_refused "cache_mb=0" 2 "invalid value for cache_mb: '0'" -o cache_mb=0 "$TRACE" "$MNT"
expect_refused "threads=" 2 "invalid value for threads: ''" -o threads= "$TRACE" "$MNT"
expect_refused "unknown among good ones" 2 "unknown option 'nonempty'" \
	-o allow_other,cache_mb=64,nonempty "$TRACE" "$MNT"
expect_refused "bad FUSE value" 2 "invalid value for umask: '999'" -o umask=999 "$TRACE" "$MNT"
expect_refused "-s with fuse_threads" 2 "conflicts with fuse_threads=4" -s -o fuse_threads=4 "$TRACE" "$MNT"
expect_refused "missing mountpoint" 2 "missing MOUNTPOINT" "$TRACE"
expect_refused "extra argument" 2 "unexpected argument" "$TRACE" "$MNT" extra

# --help works through the mount entry point too
t "$HEAPFS" -f --help >"$WORK/help" || fail "heapfs -f --help failed"
grep -q "cache_mb=N" "$WORK/help" || fail "mount help lacks cache_mb"
ok "mount --help lists the options"

# --- mount points ---
expect_refused "missing mount point" 1 "heapfs: mountpoint .*: No such file or directory" \
	"$TRACE" "$WORK/nonexistent"
expect_refused "mount point is a file" 1 "Not a directory" "$TRACE" "$TRACE"

# --- damaged traces ---
cp "$TRACE" "$WORK/badmagic.htr"
printf 'XXXXXXXX' | dd of="$WORK/badmagic.htr" bs=1 seek=0 conv=notrunc status=none
expect_refused "bad magic" any "heapfs: $WORK/badmagic.htr: offset 0: .*magic" \
	"$WORK/badmagic.htr" "$MNT"
expect_refused "bad magic, foreground" any "heapfs: $WORK/badmagic.htr: offset 0: " \
	-f "$WORK/badmagic.htr" "$MNT"

head -c 20000 /dev/urandom >"$WORK/garbage.htr"
expect_refused "garbage" any "heapfs: $WORK/garbage.htr: offset [0-9]+: " "$WORK/garbage.htr" "$MNT"

# a good file header followed by garbage: no footer, the scan meets the
# garbage where the first frame header should be (offset 32)
{ head -c 32 "$TRACE"; head -c 5000 /dev/urandom; } >"$WORK/garbage2.htr"
expect_refused "header + garbage" any "heapfs: $WORK/garbage2.htr: offset 32: " "$WORK/garbage2.htr" "$MNT"

: >"$WORK/empty.htr"
expect_refused "empty file" any "heapfs: $WORK/empty.htr: offset [0-9]+: " "$WORK/empty.htr" "$MNT"

expect_refused "missing trace" any "heapfs: $WORK/nope.htr: .*No such file" "$WORK/nope.htr" "$MNT"

# damage inside the first frame's compressed payload (header 32 bytes, frame
# header 32 bytes): the offset named is past 0
cp "$TRACE" "$WORK/badframe.htr"
printf '\377\377\377\377' | dd of="$WORK/badframe.htr" bs=1 seek=100 conv=notrunc status=none
rc=0
t "$HEAPFS" "$WORK/badframe.htr" "$MNT" 2>"$WORK/err" || rc=$?
if [ "$rc" -eq 0 ]; then
	# a reader may rebuild the index from the footer and find the damage
	# only when the frame is read; then reading must fail, not crash
	MOUNTS+=("$MNT")
	if t cat "$MNT/gc/latest/count" >/dev/null 2>"$WORK/err2"; then
		fail "damaged first frame: mounted and read the first GC without error"
	fi
	grep -q "Input/output error" "$WORK/err2" || fail "damaged frame: reading says $(cat "$WORK/err2")"
	grep -qE "offset [1-9][0-9]*: " "$MNT/status" || fail "damaged frame: status does not name the offset"
	mountpoint -q "$MNT" || fail "damaged frame: the daemon died"
	unmount "$MNT"
	ok "damaged first frame: mounted from the footer, reading fails with an error, daemon alive"
else
	grep -qE "heapfs: $WORK/badframe.htr: offset [1-9][0-9]*: " "$WORK/err" ||
		fail "damaged frame: $(cat "$WORK/err")"
	ok "damaged first frame refused: $(head -n 1 "$WORK/err")"
fi
cmp -s "$TRACE" "$WORK/badframe.htr" && fail "test setup: badframe.htr not damaged"

# --- truncated trace: mounts up to its last complete part ---
size=$(stat -c %s "$TRACE")
head -c $((size * 2 / 3)) "$TRACE" >"$WORK/trunc.htr"
cp "$WORK/trunc.htr" "$WORK/trunc.before"
t "$HEAPFS" "$WORK/trunc.htr" "$MNT" 2>"$WORK/err" || fail "truncated trace did not mount: $(cat "$WORK/err")"
wait_mounted "$MNT"
grep -qi "truncated" "$WORK/err" || fail "no word about truncation on stderr: $(cat "$WORK/err")"
[ "$(status_value "$MNT" truncated)" = yes ] || fail "status: truncated = '$(status_value "$MNT" truncated)'"
ngc=$(ls "$MNT/gc" | grep -vc latest || true)
[ "$ngc" -ge 1 ] && [ "$ngc" -lt 5 ] || fail "truncated trace shows $ngc GCs, expected 1..4"
t cat "$MNT/gc/latest/count" >/dev/null || fail "cannot read the last complete GC"
unmount "$MNT"
cmp -s "$WORK/trunc.htr" "$WORK/trunc.before" || fail "mounting changed the trace file"
ok "truncated trace mounts ($ngc of 5 GCs), status truncated=yes, stderr says so"

# a single-threaded foreground mount stops cleanly on SIGTERM
# (its log: a line per phase however short, HEAPFS_PROGRESS_AFTER_MS=0)
HEAPFS_PROGRESS_AFTER_MS=0 mount_trace_fg "$TRACE" "$MNT" "$WORK/fg.log" -s
t cat "$MNT/gc/latest/count" >/dev/null || fail "-f -s mount unreadable"
grep -qE "indexing|reading the heap at GC" "$WORK/fg.log" || fail "-f: no progress on stderr: $(cat "$WORK/fg.log")"
pid=${BG_PIDS[-1]}
kill -TERM "$pid"
rc=0
t tail --pid="$pid" -f /dev/null || fail "the foreground daemon did not stop on SIGTERM"
wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "foreground daemon exited $rc on SIGTERM"
if mountpoint -q "$MNT"; then fail "still mounted after SIGTERM"; fi
ok "foreground -s mount: SIGTERM unmounts, exit 0"

# --- files heapfs writes: a failed command never loses the old file ---------
# (written beside the target, renamed over it at the end)
no_temp_beside() { # DIR NAME WHAT: no .NAME.XXXXXX left in DIR
	local left
	left=$(find "$1" -maxdepth 1 -name ".$2.*")
	[ -z "$left" ] || fail "$3: temporary file left behind: $left"
}
OUTD=$WORK/outdir
mkdir -p "$OUTD"
echo precious >"$OUTD/keep.htr"
printf 'not a dump' >"$WORK/bad.hprof"
expect_refused "import of a non-dump onto an existing file" 1 "bad.hprof: not an HPROF heap dump" \
	import "$WORK/bad.hprof" -o "$OUTD/keep.htr"
[ "$(cat "$OUTD/keep.htr")" = precious ] || fail "a failed import lost the existing output"
no_temp_beside "$OUTD" keep.htr "failed import"
ok "a failed import leaves the existing output as it was, and no temporary file"
cp "$WORK/bad.hprof" "$WORK/bad.before"
expect_refused "import onto its own dump under another name" 2 "the output would overwrite a dump" \
	import "$WORK/bad.hprof" -o "$WORK/./bad.hprof"
cmp -s "$WORK/bad.hprof" "$WORK/bad.before" || fail "import changed its own dump"

# SIGTERM in the middle of a synth: the old file stays, the temporary goes
"$HEAPFS" synth multicache -n 3000000 -g 20 -o "$OUTD/keep.htr" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do
	[ -n "$(find "$OUTD" -maxdepth 1 -name '.keep.htr.*')" ] && break
	sleep 0.05
done
[ -n "$(find "$OUTD" -maxdepth 1 -name '.keep.htr.*')" ] || fail "synth made no temporary file beside its output"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 143 ] || fail "synth killed by SIGTERM: exit $rc, expected 143"
[ "$(cat "$OUTD/keep.htr")" = precious ] || fail "an interrupted synth lost the existing output"
no_temp_beside "$OUTD" keep.htr "synth killed by SIGTERM"
ok "SIGTERM during synth: the existing output stays, the temporary file is removed"

expect_refused "synth onto a directory" 1 "is a directory, not a regular file" \
	synth multicache -n 10 -o "$OUTD"
# (a FIFO of ours stands for a device: a heapfs that renamed over its
# target would replace /dev/null itself when run as root)
mkfifo "$OUTD/out.fifo"
expect_refused "synth onto a FIFO" 1 "out.fifo: is a FIFO, not a regular file" \
	synth multicache -n 10 -o "$OUTD/out.fifo"
[ -p "$OUTD/out.fifo" ] || fail "synth replaced the FIFO it was given as output"
no_temp_beside "$OUTD" out.fifo "synth onto a FIFO"

# --- inputs that are not regular files: refused by kind, never waited on ----
FIFO=$WORK/fifo.htr
mkfifo "$FIFO"
expect_refused "FIFO as trace (check)" 1 "^heapfs: $FIFO: is a FIFO, not a regular file$" check "$FIFO"
expect_refused "FIFO as trace (ls)" 1 "^heapfs: $FIFO: is a FIFO, not a regular file$" ls "$FIFO"
expect_refused "FIFO as trace (mount)" any "heapfs: $FIFO: .*is a FIFO, not a regular file" "$FIFO" "$MNT"
expect_refused "FIFO as dump (import)" 1 "$FIFO: is a FIFO, not a regular file" import "$FIFO" -o "$OUTD/f.htr"
expect_refused "device as trace" 1 "^heapfs: /dev/zero: is a character device, not a regular file$" \
	check /dev/zero
expect_refused "directory as trace" 1 "^heapfs: $WORK: is a directory, not a regular file$" check "$WORK"

# option files: their own prefix (the option and the file, never the trace
# and an offset), refused by kind, capped in size
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' '#' >"$WORK/big.features"
for c in "features=/dev/zero|is a character device, not a regular file" \
	 "classifiers=/dev/zero|is a character device, not a regular file" \
	 "classifiers=$WORK|is a directory, not a regular file" \
	 "features=$FIFO|is a FIFO, not a regular file" \
	 "classifiers=$FIFO|is a FIFO, not a regular file" \
	 "features=$WORK/big.features|is larger than 1048576 bytes"; do
	opt=${c%%|*}
	what=${c#*|}
	expect_refused "ls -o $opt" 1 "^heapfs: $opt: $what" ls -o "$opt" "$TRACE"
	expect_refused "mount -o $opt" any "$opt: $what" -o "$opt" "$TRACE" "$MNT"
done

# an error in a file that is not ours says line, column and what, never
# the text: a line of /etc/shadow's shape is one word, a feature without a
# pattern, at the column after the line's end
secret='root:S3cr3tHash.x:19000:0:99999:7:::'
printf '%s\n' "$secret" >"$WORK/shadow"
expect_refused "features= with a bad line" 1 \
	"^heapfs: features=$WORK/shadow: line 1, column $(( ${#secret} + 1 )): " \
	ls -o "features=$WORK/shadow" "$TRACE"
grep -q "S3cr3t" "$WORK/err" && fail "the features error quotes the file: $(cat "$WORK/err")"
printf 'secretword otherword\n' >"$WORK/bad.classifiers"
expect_refused "classifiers= with a bad line" 1 \
	"^heapfs: classifiers=$WORK/bad.classifiers: line 1, column 12: expected '='$" \
	ls -o "classifiers=$WORK/bad.classifiers" "$TRACE"
grep -q "otherword" "$WORK/err" && fail "the classifiers error quotes the file: $(cat "$WORK/err")"
expect_refused "mount -o features= with a bad line" any \
	"^heapfs: features=$WORK/shadow: line 1, column $(( ${#secret} + 1 )): " -o "features=$WORK/shadow" "$TRACE" "$MNT"
grep -q "S3cr3t" "$WORK/err" && fail "the mount's features error quotes the file: $(cat "$WORK/err")"
ok "option-file errors name the option and file, line and column, and quote nothing"

# --- a trace cut before its first GC ended: every place says why gc/ is empty
# (the first frame header starts at 32, its payload is longer than 68 bytes)
head -c 100 "$TRACE" >"$WORK/nogc.htr"
t "$HEAPFS" check "$WORK/nogc.htr" >"$WORK/out" 2>"$WORK/err" || fail "check of a trace cut before its first GC: $(cat "$WORK/err")"
grep -qx "gcs	0" "$WORK/out" || fail "check: $(grep gcs "$WORK/out")"
grep -qx "truncated	yes" "$WORK/out" || fail "check does not say truncated"
grep -q "^warning	no complete GC: the trace was cut at offset 32 before its first GC ended" "$WORK/out" ||
	fail "check's warnings lack 'no complete GC': $(grep warning "$WORK/out")"
grep -qx "heapfs: $WORK/nogc.htr: no complete GC: the trace was cut before its first GC ended" "$WORK/err" ||
	fail "check's stderr lacks 'no complete GC': $(cat "$WORK/err")"
expect_refused "cat gc/latest/info of a trace without a GC" 1 \
	"^heapfs: cat: gc/latest/info: No such file or directory: $WORK/nogc.htr has no complete GC: it was cut before its first GC ended$" \
	cat "$WORK/nogc.htr" gc/latest/info
t "$HEAPFS" "$WORK/nogc.htr" "$MNT" 2>"$WORK/err" || fail "a trace without a GC did not mount: $(cat "$WORK/err")"
wait_mounted "$MNT"
grep -q "no complete GC" "$WORK/err" || fail "the mount's stderr lacks 'no complete GC': $(cat "$WORK/err")"
grep -q "^warning	no complete GC: " "$MNT/status" || fail "status lacks 'no complete GC'"
unmount "$MNT"
ok "a trace cut before its first GC: check, cat, the mount's stderr and status say it has no complete GC"
