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
