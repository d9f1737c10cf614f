#!/usr/bin/env bash
# End to end: closure metrics, dominators, roots, paths and stacks
# through `heapfs cat`, and ad-hoc groups (mkdir, echo >> members, rmdir)
# through a real FUSE mount, on synth multicache.  Expected values from the
# scenario's construction (docs/scenarios.md): with N Products each map's
# table is a HashMap$Node[cap(N)] (N = 1000: 2048 slots, 8208 bytes);
# HashMap 48, HashMap$Node 32, Product 32, Long 24, String 24, name byte[15]
# 32 bytes; int[] lengths are random (bytes taken from the census).
. "$(dirname "$0")/mountlib.bash"

N=1000
TABLE=8208
T=$WORK/mc.htr
M=$WORK/mnt
make_trace "$T" multicache -n $N -g 3
c() { t "$HEAPFS" cat "$T" "$@"; }

byid=$((48 + TABLE + N * (32 + 24)))
byname=$((48 + TABLE + N * 32))
ints=$(c gc/latest/by-type/int[]/shallow_size)
both=$((2 * (48 + TABLE) + N * (2 * 32 + 32 + 24 + 24 + 32) + ints))

# roots/: the two static fields with their maps' retained sizes
line=$(c gc/latest/roots/static/example.multicache.IdCache/byId | sed -n 2p)
A=$(cut -f1 <<<"$line")
[ "$(cut -f2 <<<"$line")" = java.util.HashMap ] || fail "IdCache.byId: $line"
[ "$(cut -f3 <<<"$line")" = $byid ] || fail "IdCache.byId retained: $line, want $byid"
B=$(c gc/latest/roots/static/example.multicache.NameCache/byName | sed -n 2p | cut -f1)
[ "$(c gc/latest/objects/$B/retained_size)" = $byname ] || fail "byName retained_size"
[ "$(c gc/latest/objects/$A/dominator)" = roots ] || fail "byId dominator"
ok "roots/static/<class>/<field> and objects/<id>/retained_size from construction"

# roots/table sorted by retained size: byId first
[ "$(c gc/latest/roots/table | sed -n 2p | cut -f2)" = "$A" ] || fail "roots/table order"
ok "roots/table sorted by retained size"

# dominators/top: the maps and their tables, byId's named by its field
top=$(c gc/latest/dominators/top)
[ "$(sed -n 2p <<<"$top" | cut -f3)" = $byid ] || fail "top row: $(sed -n 2p <<<"$top")"
[ "$(sed -n 3p <<<"$top" | cut -f2)" = 'java.util.HashMap$Node[]' ] || fail "table not 2nd"
[ "$(sed -n 3p <<<"$top" | cut -f3)" = $((byid - 48)) ] || fail "table retained"
sed -n 2p <<<"$top" | grep -q 'IdCache.byId' || fail "top row not named by its root"
ok "dominators/top"

# the by-type table: retained columns, sorted by retained size
hdr=$(c gc/latest/by-type/table | sed -n 1p) # sed reads all: no SIGPIPE under pipefail
[ "$hdr" = "$(printf 'name\tcount\tshallow_size\tdeep_count\tdeep_size\tretained_count\tretained_size')" ] \
	|| fail "by-type/table header: $hdr"
c gc/latest/by-type/table | awk -F'\t' 'NR > 2 && $7 > prev { bad = 1 } NR > 1 { prev = $7 } END { exit bad }' \
	|| fail "by-type/table not sorted by retained size"
[ "$(c gc/latest/by-type/java.util.HashMap/retained_size)" = $both ] || fail "HashMap group retained"
P=gc/latest/by-type/example.multicache.Product
[ "$(c $P/closure/retained/count)" = $((2 * N)) ] || fail "Product closure/retained count"
[ "$(c $P/closure/transitive/by-type/java.lang.String/count)" = $N ] || fail "closure/transitive by-type"
ok "group metrics, table columns and closure groups"

# bottom-up: the Products' roots are the two static maps; a path per sample
[ "$(c $P/roots | tail -n +2 | cut -f1 | sort | tr '\n' ' ')" = "$(printf '%s\n' $A $B | sort | tr '\n' ' ')" ] \
	|| fail "Product roots: $(c $P/roots)"
p=$(c $P/objects | sed -n 1p)
path=$(c gc/latest/objects/$p/path-to-root)
[ "$(wc -l <<<"$path")" = 5 ] || fail "path-to-root: $path"
[ "$(tail -1 <<<"$path" | cut -f3)" = value ] || fail "path-to-root last field: $path"
grep -q '^# object ' <<<"$(c $P/paths)" || fail "paths"
ok "roots, paths and path-to-root"

# threads/<thread>/stack from the local roots
grep -q "^0	example.multicache.Loader.run	0	" <<<"$(c gc/latest/threads/loader-1/stack)" \
	|| fail "loader-1 stack: $(c gc/latest/threads/loader-1/stack)"
ok "threads/<thread>/stack"

# ad-hoc groups through FUSE
mount_trace "$T" "$M"
mkdir "$M/groups/caches" || fail "mkdir groups/caches"
echo "$A" >> "$M/groups/caches/members" || fail "append 1"
[ "$(cat "$M/groups/caches/retained_size")" = $byid ] || fail "one map: $(cat "$M/groups/caches/retained_size")"
[ ! -e "$M/groups/caches/closure/retained/by-type/example.multicache.Product" ] \
	|| fail "one map retains Products"
echo "$B" >> "$M/groups/caches/members" || fail "append 2"
[ "$(wc -l <"$M/groups/caches/members")" = 2 ] || fail "members after two appends: $(cat "$M/groups/caches/members")"
[ "$(cat "$M/groups/caches/retained_size")" = $both ] || fail "both maps: $(cat "$M/groups/caches/retained_size"), want $both"
for ty in example.multicache.Product java.lang.String 'byte[]' 'int[]'; do
	[ "$(cat "$M/groups/caches/closure/retained/by-type/$ty/count")" = $N ] || fail "both maps retain $ty"
done
ok "ad-hoc group: one map retains no Product, both retain every Product, String, byte[], int[]"

mkdir "$M/groups/bytype"
echo gc/latest/by-type/java.util.HashMap > "$M/groups/bytype/members" || fail "path selector"
[ "$(cat "$M/groups/bytype/count")" = 2 ] || fail "path selector count"
if cp /dev/stdin "$M/groups/bytype/members" <<<"no/such/node" 2>"$WORK/cp.err"; then
	fail "a bad selector was accepted"
fi
grep -q "Invalid argument" "$WORK/cp.err" || fail "bad selector: $(cat "$WORK/cp.err")"
[ "$(cat "$M/groups/bytype/count")" = 2 ] || fail "a refused write changed the group"
[ -d "$M/groups/bytype/gc/001" ] || fail "groups/NAME/gc/NNN"
rmdir "$M/groups/bytype" || fail "rmdir"
[ ! -e "$M/groups/bytype" ] || fail "rmdir left the group"
if mkdir "$M/gc/nope" 2>/dev/null; then fail "mkdir outside groups/"; fi
ok "path selectors, refused selectors, groups/NAME/gc/NNN, rmdir"
unmount "$M"
