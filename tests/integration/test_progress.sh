#!/usr/bin/env bash
# Progress on standard error (issue 33 item 1): heapfs cat, ls, check,
# synth and import say what they are doing: redrawn in place on a terminal
# (here a pseudo-terminal made by script(1)), one line per phase in a pipe
# or a file, nothing with -q; standard output is the same either way.
# HEAPFS_PROGRESS_AFTER_MS=0 shows phases however short (by default a
# terminal line appears after 0.5 s and a pipe line after 1 s of a phase),
# so that a small trace shows them.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
TOOLS=$(dirname "$HEAPFS")/tools
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }
export HEAPFS_PROGRESS_AFTER_MS=0
T=$TMP/m.htr

"$HEAPFS" synth multicache -n 60000 -g 4 -o "$T" 2>"$TMP/synth.err"
grep -q "^heapfs: writing multicache, GCs: [0-9]*/4 (" "$TMP/synth.err" || fail "synth: no progress line: $(cat "$TMP/synth.err")"
"$HEAPFS" synth multicache -q -n 60000 -g 4 -o "$TMP/q.htr" 2>"$TMP/synthq.err"
[ ! -s "$TMP/synthq.err" ] || fail "synth -q printed: $(cat "$TMP/synthq.err")"
cmp -s "$T" "$TMP/q.htr" || fail "synth -q wrote another trace"
ok "synth: progress in GCs; -q silent, same trace"

# a pipe: one line per phase, each "heapfs: PHASE..." on its own line
"$HEAPFS" cat "$T" gc/latest/dominators/top >"$TMP/top" 2>"$TMP/top.err"
"$HEAPFS" cat -q "$T" gc/latest/dominators/top >"$TMP/topq" 2>"$TMP/topq.err"
cmp -s "$TMP/top" "$TMP/topq" || fail "cat: -q changed the output"
[ ! -s "$TMP/topq.err" ] || fail "cat -q printed: $(cat "$TMP/topq.err")"
grep -q "^heapfs: dominator tree of GC 4 (objects, 3 passes): " "$TMP/top.err" ||
	fail "cat: no dominator-tree line: $(cat "$TMP/top.err")"
grep -q $'\r' "$TMP/top.err" && fail "cat into a pipe redrew lines"
n=$(wc -l <"$TMP/top.err")
phases=$(sort -u "$TMP/top.err" | sed 's/:.*//' | sort -u | wc -l)
[ "$n" -eq "$(sed 's/:.*//' "$TMP/top.err" | wc -l)" ] && [ "$n" -le 12 ] ||
	fail "cat: $n lines for $phases phases: $(cat "$TMP/top.err")"
ok "cat into a pipe: $n phase lines ($(sed 's/^heapfs: //; s/ (.*//' "$TMP/top.err" | paste -sd, -)); -q: none, same output"

# a terminal: the line is redrawn in place (\r, erase to end of line) and
# erased at the end, and the file's own lines come out whole
if command -v script >/dev/null; then
	script -qec "$HEAPFS cat $T gc/latest/by-type/table" /dev/null >"$TMP/tty.out" </dev/null
	grep -q $'\r\033\\[Kheapfs: ' "$TMP/tty.out" || fail "cat on a terminal: no redrawn line: $(od -c "$TMP/tty.out" | head)"
	# what stays on the screen: each line from its last erase on (the
	# terminal's \r\n made \n); it must be the file, whole
	"$HEAPFS" cat -q "$T" gc/latest/by-type/table >"$TMP/table"
	tr -d '\r' <"$TMP/tty.out" | sed 's/.*\x1b\[K//' >"$TMP/tty.screen"
	cmp -s "$TMP/tty.screen" "$TMP/table" || fail "cat on a terminal: the screen is not the file: $(diff "$TMP/tty.screen" "$TMP/table" | head -5)"
	ok "cat on a terminal: $(grep -o $'\033\\[K' "$TMP/tty.out" | wc -l) redraws and erases; what stays is the file"
	script -qec "$HEAPFS cat -q $T gc/latest/by-type/table" /dev/null >"$TMP/ttyq.out" </dev/null
	grep -q 'heapfs: ' "$TMP/ttyq.out" && fail "cat -q on a terminal printed progress"
	ok "cat -q on a terminal: no progress"
else
	echo "skip - script(1) missing: no terminal test"
fi

# ls computes the listing first, then prints it whole
"$HEAPFS" ls "$T" gc/latest/by-type >"$TMP/ls" 2>"$TMP/ls.err"
grep -qx "java.util.HashMap" "$TMP/ls" || fail "ls lost entries: $(head -3 "$TMP/ls")"
ok "ls: listing whole ($(wc -l <"$TMP/ls") entries), $(wc -l <"$TMP/ls.err") phase lines"

"$HEAPFS" check "$T" >"$TMP/check" 2>"$TMP/check.err"
grep -q "^heapfs: reading the heap at GC [0-9]* (trace bytes): " "$TMP/check.err" ||
	fail "check: no rebuild line: $(cat "$TMP/check.err")"
"$HEAPFS" check -q "$T" >"$TMP/checkq" 2>"$TMP/checkq.err"
cmp -s "$TMP/check" "$TMP/checkq" && [ ! -s "$TMP/checkq.err" ] || fail "check -q: other output or progress"
ok "check: rebuild phases; -q silent"

# import: phases of a dump, its summary lines still whole
"$TOOLS/gen_hprof" -n 20000 -o "$TMP/d.hprof"
"$HEAPFS" import "$TMP/d.hprof" -o "$TMP/d.htr" 2>"$TMP/imp.err"
grep -q "^heapfs: scanning d.hprof (bytes): " "$TMP/imp.err" || fail "import: no scanning line: $(cat "$TMP/imp.err")"
grep -q "^heapfs import: wrote $TMP/d.htr " "$TMP/imp.err" || fail "import: no summary: $(cat "$TMP/imp.err")"
"$HEAPFS" import -q "$TMP/d.hprof" -o "$TMP/d2.htr" 2>"$TMP/impq.err"
[ ! -s "$TMP/impq.err" ] || fail "import -q printed: $(cat "$TMP/impq.err")"
ok "import: scanning and writing phases, summary kept; -q silent"

# a mount in the foreground: its log has a line per phase of what it
# computes for the files read (every piece of work, as status lists it),
# and none of the old per-build lines
mkdir "$TMP/mnt"
"$HEAPFS" "$T" "$TMP/mnt" -f 2>"$TMP/fg.err" &
fg=$!
for _ in $(seq 1 100); do mountpoint -q "$TMP/mnt" && break; sleep 0.1; done
mountpoint -q "$TMP/mnt" || fail "mount -f: not mounted: $(cat "$TMP/fg.err")"
cat "$TMP/mnt/gc/004/dominators/top" >"$TMP/fgtop"
fusermount3 -u "$TMP/mnt"
wait "$fg" || fail "mount -f: exit $?: $(cat "$TMP/fg.err")"
cmp -s "$TMP/fgtop" "$TMP/top" || fail "mount -f: dominators/top differs from cat's"
grep -q "^heapfs: dominator tree of GC 4 (objects, 3 passes): " "$TMP/fg.err" ||
	fail "mount -f: no dominator-tree line in the log: $(cat "$TMP/fg.err")"
grep -q "^heapfs: reading the heap at GC 4 (trace bytes): " "$TMP/fg.err" ||
	fail "mount -f: no rebuild line in the log: $(cat "$TMP/fg.err")"
grep -qE "rebuilding GC [0-9]+: +[0-9]+%|dominator tree of [0-9]+ objects" "$TMP/fg.err" &&
	fail "mount -f: the old per-build lines are back: $(cat "$TMP/fg.err")"
ok "mount -f: its log has the phases of what it computed ($(grep -c '^heapfs: ' "$TMP/fg.err") lines)"
