#!/usr/bin/env bash
# Classification end to end (the classification paper's scenarios, and
# the gc-roots paper's by-indirect-root):
#   - without FUSE (`heapfs cat/ls TRACE PATH`): the Figure 15 path on
#     buggystack, by-site counts and caller nesting on multicache, the
#     indirectly-rooted Products;
#   - through a mount: a feature map putting one site in two features (each
#     counts it, the parent once), a bad -o classifiers=FILE refused with
#     line and column, `find` and `grep -r` over a GC terminating.
# Expected counts come from docs/scenarios.md.
. "$(dirname "$0")/mountlib.bash"

BS=$WORK/bs.htr
MC=$WORK/mc.htr
t "$HEAPFS" synth buggystack -n 1000 -g 10 -o "$BS" >/dev/null
t "$HEAPFS" synth multicache -n 300 -g 3 -o "$MC" >/dev/null

cat_() { t "$HEAPFS" cat "$@"; }
expect() { # TRACE PATH WANT WHAT
	local got
	got=$(cat_ "$1" "$2") || fail "$4: cat $2 failed"
	[ "$got" = "$3" ] || fail "$4: $2 is '$got', expected '$3'"
}
# first data row's name and count of a table, as "name count"
row_of() { # TRACE TABLE NAME
	cat_ "$1" "$2" | awk -F'\t' -v n="$3" 'NR > 1 && $1 == n { print $1, $2 }'
}

# ---- buggystack: Figure 15 (TestObject <- Object[] <- BuggyStack) ----
# N = 1000 pushes, M = 100 more: at GC 10 all 1000 TestObjects are live in
# one Object[] held by the one BuggyStack.
F15=gc/010/by-type/example.buggystack.TestObject/pointed-from/by-type/java.lang.Object[]/pointed-from/by-type
expect "$BS" gc/010/by-type/example.buggystack.TestObject/count 1000 "TestObjects"
expect "$BS" gc/010/by-type/example.buggystack.TestObject/pointed-from/by-type/java.lang.Object[]/count 1 \
	"the Object[] referencing them"
expect "$BS" "$F15/example.buggystack.BuggyStack/count" 1 "Figure 15: the BuggyStack"
[ "$(row_of "$BS" "$F15/table" example.buggystack.BuggyStack)" = "example.buggystack.BuggyStack 1" ] \
	|| fail "Figure 15 table: $(cat_ "$BS" "$F15/table")"
ok "Figure 15 path: 1000 TestObjects <- 1 Object[] <- 1 BuggyStack"

# ---- multicache: by-site counts and nesting ----
P=gc/latest/by-type/example.multicache.Product
[ "$(row_of "$MC" "$P/by-site/table" example.multicache.Loader.load:30)" = \
	"example.multicache.Loader.load:30 300" ] || fail "Product sites: $(cat_ "$MC" "$P/by-site/table")"
expect "$MC" "$P/by-site/example.multicache.Loader.load:30/example.multicache.Loader.run:22/count" 300 \
	"caller level"
expect "$MC" "$P/by-site/example.multicache.Loader.load:30/example.multicache.Loader.run:22/java.lang.Thread.run:833/count" \
	300 "outermost caller"
# every Product has a Long (IdCache.put:17) and two HashMap$Nodes: their
# sites nest under the put calls
expect "$MC" "gc/latest/by-type/java.lang.Long/by-site/java.lang.Long.valueOf:1211/example.multicache.IdCache.put:17/count" \
	300 "Long.valueOf <- IdCache.put"
ok "by-site: Loader.load:30 x300, callers nest (run:22, Thread.run:833)"

# ---- multicache: by-indirect-root (gc-roots paper §4.3.2) ----
R=$P/by-indirect-root/static
expect "$MC" "$R/example.multicache.IdCache/byId/count" 300 "Products under IdCache.byId"
expect "$MC" "$R/example.multicache.NameCache/byName/count" 300 "Products under NameCache.byName"
expect "$MC" "$R/count" 300 "parent of both fields"
expect "$MC" "$P/count" 300 "Products"
ok "by-indirect-root: both static fields hold all 300 Products, parents count each once"

# ---- through a mount: features, bad definitions, walks ----
FEAT=$WORK/features
cat > "$FEAT" <<'EOF'
# Loader.load (every Product's site) is in both features
loading example.multicache.Loader.load
caching example.multicache.*Cache.put example.multicache.Loader.load
EOF
M=$WORK/mnt
mount_trace "$MC" "$M" -o "features=$FEAT"
FP=$M/gc/latest/by-type/example.multicache.Product
[ "$(cat "$FP/by-feature/loading/count")" = 300 ] || fail "feature loading"
[ "$(cat "$FP/by-feature/caching/count")" = 300 ] || fail "feature caching"
[ "$(cat "$FP/count")" = 300 ] || fail "parent of the features counts $(cat "$FP/count")"
ok "one site in two features: each counts 300, the parent 300"

# find and grep -r finish (bounded listings), and find sees the tables
n=$(t find "$M/gc/latest/" | wc -l) || fail "find gc/latest did not finish"
[ "$n" -gt 100 ] || fail "find gc/latest listed only $n entries"
[ -n "$(t find "$M/gc/latest/" -path '*/latest/by-type/table')" ] || fail "find missed by-type/table"
t grep -r -c . "$M/gc/latest/by-type" >/dev/null || [ $? -eq 1 ] || fail "grep -r did not finish"
ok "find gc/latest ($n entries) and grep -r gc/latest/by-type terminate"

# A hierarchy's second level is two steps deep for listings: it lists its
# files and next level, not the classifiers again (which still resolve).
# Without it, each of a real heap's thousands of static/<class> groups
# listed every classifier and find over a GC met millions of names.
S=$M/gc/latest/by-root/static
ls "$S" | grep -qx by-type || fail "by-root/static (one level) does not offer by-type"
C=$(ls "$S" | grep -F example.multicache. | head -n 1)
[ -n "$C" ] || fail "by-root/static lists no example class: $(ls "$S" | tr '\n' ' ')"
ls "$S/$C" | grep -q '^by-' && fail "by-root/static/$C offers steps: $(ls "$S/$C" | grep '^by-' | head -n 3 | tr '\n' ' ')"
ls "$S/$C" | grep -qx table || fail "by-root/static/$C lacks its table"
[ -n "$(ls "$S/$C/by-type")" ] || fail "by-root/static/$C/by-type does not resolve"
ok "by-root/static/$C lists files and fields, no steps; by-type below it resolves"
unmount "$M"

# a bad definition file: the mount is refused, the message names the file,
# line and column
BAD=$WORK/bad.classifiers
printf 'good = type\nbroken = if size > 1 then "a"\n  else 3\n' > "$BAD"
M2=$WORK/mnt2
mkdir -p "$M2"
if t "$HEAPFS" -o "classifiers=$BAD" "$MC" "$M2" 2>"$WORK/bad.err"; then
	MOUNTS+=("$M2")
	fail "a bad classifiers file was accepted"
fi
grep -q "line 3, column" "$WORK/bad.err" || fail "no line/column in: $(cat "$WORK/bad.err")"
grep -q "bad.classifiers" "$WORK/bad.err" || fail "file not named in: $(cat "$WORK/bad.err")"
ok "bad -o classifiers refused: $(head -n 1 "$WORK/bad.err")"
