#!/usr/bin/env bash
# Writable classifiers/ through a real FUSE mount: a good definition appears
# as by-NAME/ at once (no remount), a bad one fails at close with EINVAL and
# its message (line and column) lands in classifiers/errors, rm removes it,
# an expression whose arithmetic overflows classifies objects under <error>
# and counts them in classifiers/errors, and nothing else in the tree
# becomes writable.
. "$(dirname "$0")/mountlib.bash"

T=$WORK/mc.htr
M=$WORK/mnt
t "$HEAPFS" synth multicache -n 300 -g 3 -o "$T" >/dev/null
mount_trace "$T" "$M"

# one-to-one string classifier: arrays vs instances, by the expression
echo 'if is_array then "array" else "instance"' > "$M/classifiers/shape" \
	|| fail "writing a good definition failed"
[ -d "$M/gc/latest/by-shape" ] || fail "by-shape/ did not appear"
want=$("$HEAPFS" cat "$T" gc/latest/by-type/example.multicache.Product/count)
[ "$want" = 300 ] || fail "Product count $want, expected 300 (scenario)"
inst=$(cat "$M/gc/latest/by-type/example.multicache.Product/by-shape/instance/count")
[ "$inst" = 300 ] || fail "Products classified as instance: $inst, expected 300"
[ ! -e "$M/gc/latest/by-type/example.multicache.Product/by-shape/array" ] \
	|| fail "a Product was classified as an array"
ok "good definition: by-shape/ appears without remount, Products all 'instance'"

# rewriting replaces the definition (O_TRUNC)
echo 'if is_array then "A" else "I"' > "$M/classifiers/shape" || fail "rewrite failed"
[ -d "$M/gc/latest/by-shape/I" ] || fail "rewritten definition not in effect"
ok "rewrite replaces the definition"

# Every usual way of writing a file defines the classifier and logs
# nothing: shells (echo, printf: open with O_TRUNC, dup, close the first
# descriptor, then write), cat and tee from a pipe, and an editor's
# truncate-then-write on one descriptor; each to a new name and again to
# the same name.  (Before: bash's early close of the O_TRUNC descriptor was
# committed as a definition of its own, "NAME: line 1, column 1: empty
# definition".)  A definition that really is empty is still reported.
sentinel='if type == "example.multicache.Product" then "p" else "o"'
errors_clean() {
	# read, not tested with -s: the size a stat gives is not the text
	errs=$(cat "$M/classifiers/errors")
	[ -z "$errs" ] || fail "$1 logged: $errs"
	[ -d "$M/gc/latest/by-$2" ] || fail "$1: by-$2/ did not appear"
	n=$(cat "$M/gc/latest/by-$2/p/count")
	[ "$n" = 300 ] || fail "$1: by-$2/p/count is $n, expected the 300 Products"
}
for round in new again; do
	echo "$sentinel" > "$M/classifiers/w-echo" || fail "echo failed"
	errors_clean "echo > ($round)" w-echo
	printf '%s\n' "$sentinel" > "$M/classifiers/w-printf" || fail "printf failed"
	errors_clean "printf > ($round)" w-printf
	echo "$sentinel" | cat > "$M/classifiers/w-cat" || fail "cat failed"
	errors_clean "cat > ($round)" w-cat
	echo "$sentinel" | tee "$M/classifiers/w-tee" >/dev/null || fail "tee failed"
	errors_clean "tee ($round)" w-tee
	# an editor saving in place: open read-write, truncate to 0, write, fsync, close
	python3 - "$M/classifiers/w-edit" "$sentinel" <<'PY' || fail "editor-style write failed"
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.ftruncate(fd, 0)
os.lseek(fd, 0, os.SEEK_SET)
os.write(fd, (sys.argv[2] + "\n").encode())
os.fsync(fd)
os.close(fd)
PY
	errors_clean "truncate+write ($round)" w-edit
done
ok "echo, printf, cat, tee, truncate+write: defined, nothing in classifiers/errors"
: > "$M/classifiers/w-echo"
grep -qxF 'w-echo: line 1, column 1: empty definition' "$M/classifiers/errors" \
	|| fail "an emptied definition was not reported: $(cat "$M/classifiers/errors")"
echo > "$M/classifiers/w-blank" 2>/dev/null || true
grep -qxF 'w-blank: line 2, column 1: empty definition' "$M/classifiers/errors" \
	|| fail "a blank definition was not reported: $(cat "$M/classifiers/errors")"
ok "a really empty definition is still reported"
rm -f "$M"/classifiers/w-*

# a bad definition: the write fails (EINVAL), cp reports it; the message
# names line and column
echo 'if size > 100 than "big" else "small"' > "$WORK/bad.def"
if cp "$WORK/bad.def" "$M/classifiers/bigness" 2>"$WORK/cp.err"; then
	fail "a bad definition was accepted"
fi
grep -q "Invalid argument" "$WORK/cp.err" || fail "cp did not see EINVAL: $(cat "$WORK/cp.err")"
grep -q "line 1, column" "$M/classifiers/errors" || fail "classifiers/errors lacks line/column: $(cat "$M/classifiers/errors")"
[ ! -d "$M/gc/latest/by-bigness" ] || fail "bad definition produced by-bigness/"
ok "bad definition refused at close; errors file names line and column"

# Checked arithmetic: a value that overflows is <error>, never a wrapped
# number.  A Product is 32 bytes (header 12 + long 8 + two references 4 + 4
# = 28, aligned to 8), and 32 * 2^58 = 2^63 is one past INT64_MAX.  The
# '*' is at column 51 of the definition.
echo 'if type == "example.multicache.Product" then size * 288230376151711744 else 0' \
	> "$M/classifiers/ovf" || fail "writing the overflowing definition failed"
ls "$M/gc/latest/by-ovf" | grep -qxF '<error>' \
	|| fail "by-ovf/ has no <error> child: $(ls "$M/gc/latest/by-ovf" | tr '\n' ' ')"
n=$(cat "$M/gc/latest/by-ovf/<error>/count")
[ "$n" = 300 ] || fail "by-ovf/<error>/count is $n, expected the 300 Products"
b=$(cat "$M/gc/latest/by-ovf/<error>/shallow_size")
[ "$b" = 9600 ] || fail "by-ovf/<error>/shallow_size is $b, expected 300 * 32 = 9600"
types=$(tail -n +2 "$M/gc/latest/by-ovf/<error>/by-type/table" | cut -f1)
[ "$types" = example.multicache.Product ] || fail "under <error>: $types, expected only Products"
grep -qxF 'ovf: gc/003: 300 objects: line 1, column 51: integer overflow in *' "$M/classifiers/errors" \
	|| fail "classifiers/errors lacks the ovf line: $(cat "$M/classifiers/errors")"
ok "an overflow is <error> (300 Products, 9600 bytes), counted in classifiers/errors"

# the issue's filter: size > INT64_MAX + 1 was true for every object; now
# no object has a value, so none passes, and all are counted ('+': column 28)
echo 'size > 9223372036854775807 + 1' > "$M/classifiers/big" || fail "writing big failed"
n=$(cat "$M/gc/latest/only-big/count")
[ "$n" = 0 ] || fail "only-big/count is $n, expected 0"
all=$(cat "$M/gc/003/count")
grep -qxF "big: gc/003: $all objects: line 1, column 28: integer overflow in +" "$M/classifiers/errors" \
	|| fail "classifiers/errors lacks the big line ($all objects): $(cat "$M/classifiers/errors")"
ok "a filter leaves objects without a value out and counts them"
rm "$M/classifiers/ovf" "$M/classifiers/big"

rm "$M/classifiers/shape" || fail "rm of a definition failed"
[ ! -e "$M/gc/latest/by-shape" ] || fail "by-shape/ still there after rm"
ok "rm removes the classifier"

# everything else stays read-only
if (echo x > "$M/gc/latest/info") 2>/dev/null; then fail "wrote gc/latest/info"; fi
if touch "$M/trace/new" 2>/dev/null; then fail "created trace/new"; fi
ok "the rest of the tree stays read-only"
