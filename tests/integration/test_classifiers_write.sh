#!/usr/bin/env bash
# Writable classifiers/ through a real FUSE mount: a good definition appears
# as by-NAME/ at once (no remount), a bad one fails at close with EINVAL and
# its message (line and column) lands in classifiers/errors, rm removes it,
# and nothing else in the tree becomes writable.
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

# a bad definition: close fails (bash ignores close errors of redirections;
# cp reports them), message names line and column
echo 'if size > 100 than "big" else "small"' > "$WORK/bad.def"
if cp "$WORK/bad.def" "$M/classifiers/bigness" 2>"$WORK/cp.err"; then
	fail "a bad definition was accepted"
fi
grep -q "Invalid argument" "$WORK/cp.err" || fail "cp did not see EINVAL: $(cat "$WORK/cp.err")"
grep -q "line 1, column" "$M/classifiers/errors" || fail "classifiers/errors lacks line/column: $(cat "$M/classifiers/errors")"
[ ! -d "$M/gc/latest/by-bigness" ] || fail "bad definition produced by-bigness/"
ok "bad definition refused at close; errors file names line and column"

rm "$M/classifiers/shape" || fail "rm of a definition failed"
[ ! -e "$M/gc/latest/by-shape" ] || fail "by-shape/ still there after rm"
ok "rm removes the classifier"

# everything else stays read-only
if (echo x > "$M/gc/latest/info") 2>/dev/null; then fail "wrote gc/latest/info"; fi
if touch "$M/trace/new" 2>/dev/null; then fail "created trace/new"; fi
ok "the rest of the tree stays read-only"
