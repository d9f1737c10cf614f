#!/usr/bin/env bash
# test_roles.sh - gc/N/ds/{roles,heads,table} and the top-level ds link,
# through `heapfs cat`/`ls` and through a real mount.
#
# Expected values come from the scenarios' construction (docs/scenarios.md)
# and the paper's Figure 9 (docs/roles.md): synth company -n 12 has 12
# Employees in 3 Departments of 4; synth multicache -n 200 has 200 Products
# in two HashMaps.
#
# Usage: HEAPFS=/abs/path/build/heapfs bash tests/integration/test_roles.sh
. "$(dirname "$0")/mountlib.bash"

CO=$WORK/company.htr
t "$HEAPFS" synth company -n 12 -g 2 -o "$CO" >/dev/null || fail "synth company"

# ---- ds/roles: Figure 9 ------------------------------------------------
t "$HEAPFS" cat "$CO" gc/latest/ds/roles >"$WORK/roles" || fail "cat gc/latest/ds/roles"
head -1 "$WORK/roles" | grep -qx $'id\ttype\troles' || fail "ds/roles header"
# type -> the set of role lists its objects have, one line per type
awk -F'\t' 'NR > 1 { print $2 "\t" $3 }' "$WORK/roles" | sort -u |
	awk -F'\t' '{ if ($1 in r) v = r[$1] "|" $2; else v = $2; r[$1] = v } END { for (t in r) print t "\t" r[t] }' |
	sort >"$WORK/by_type"
expect_type() { # TYPE ROLES: every object of TYPE has exactly ROLES
	grep -qxF "$1"$'\t'"$2" "$WORK/by_type" ||
		fail "$1: want '$2', have '$(awk -F'\t' -v t="$1" '$1 == t { print $2 }' "$WORK/by_type")'"
}
expect_type example.company.Company mcontainer,container
expect_type java.util.LinkedList container
expect_type 'java.util.LinkedList$Node' recursive,transition
expect_type java.util.HashSet container,hcontainer
expect_type java.util.HashMap icontainer
expect_type example.company.Employee container,hcontainer
expect_type java.lang.String true-data
expect_type 'char[]' primitive-array
expect_type 'byte[]' primitive-array
expect_type 'java.util.HashMap$Node[]' reference-array
ok "ds/roles matches Figure 9"
# one line per live object
objects=$(t "$HEAPFS" cat "$CO" gc/latest/info | awk -F'\t' '$1 == "objects" { print $2 }')
[ "$(($(wc -l <"$WORK/roles") - 1))" = "$objects" ] || fail "ds/roles: not one line per object"
ok "ds/roles has one line per object ($objects)"

# ---- ds/heads: the HashSet over its HashMap is one structure -------------
t "$HEAPFS" cat "$CO" ds/heads >"$WORK/heads" || fail "cat ds/heads"
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["type"] == "java.util.HashSet" {
		sets++
		if ($c["icontainer_type"] != "java.util.HashMap") bad = "icontainer " $c["icontainer_type"]
		if ($c["elements"] != 4) bad = "elements " $c["elements"]
		if ($c["heads_held"] != 4) bad = "heads_held " $c["heads_held"]
	}
	$c["type"] == "java.util.HashMap" { bad = "a HashMap is a head" }
	$c["type"] == "java.util.LinkedList" && $c["elements"] != 12 { bad = "LinkedList elements" }
	END { if (bad != "" || sets != 3) { print bad, sets; exit 1 } }' "$WORK/heads" ||
	fail "ds/heads: HashSets ($(cat "$WORK/heads" | head -20))"
ok "ds/heads: 3 HashSets, each with its HashMap as IContainer and 4 Employees"

# ---- ds/table ------------------------------------------------------------
t "$HEAPFS" cat "$CO" ds/table >"$WORK/table" || fail "cat ds/table"
awk -F'\t' '$1 == "example.company.Employee" && $2 == 12 { e = 1 }
	$1 == "java.util.HashSet" && $2 == 3 && $5 == 12 { s = 1 }
	END { exit !(e && s) }' "$WORK/table" || fail "ds/table: $(cat "$WORK/table")"
ok "ds/table aggregates the heads by type"

# ---- nested heads: multicache's Products inside the two HashMaps ---------
MC=$WORK/multicache.htr
t "$HEAPFS" synth multicache -n 200 -g 2 -o "$MC" >/dev/null || fail "synth multicache"
t "$HEAPFS" cat "$MC" ds/heads >"$WORK/mc_heads" || fail "cat multicache ds/heads"
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["type"] == "java.util.HashMap" { map[$c["id"]] = 1; held += $c["heads_held"] }
	$c["type"] == "example.multicache.Product" { p++; outer[$c["outer"]]++ }
	END { n = 0; for (o in outer) if (!(o in map)) bad = 1
	      exit !(p == 200 && held == 400 && !bad) }' "$WORK/mc_heads" ||
	fail "multicache: Products are not nested heads of the maps"
ok "nested heads: 200 Products held by the two maps (400 holdings)"

# ---- the tree: listings, the ds link --------------------------------------
[ "$(t "$HEAPFS" ls "$CO" gc/latest/ds | tr '\n' ' ')" = "roles heads table collections collections.csv collections.json collections-by-site collections-by-site.csv collections-by-site.json " ] ||
	fail "ls gc/latest/ds"
t "$HEAPFS" ls "$CO" / | grep -qx ds || fail "no top-level ds"
cmp -s <(t "$HEAPFS" cat "$CO" ds/roles) "$WORK/roles" || fail "ds/roles differs from gc/latest/ds/roles"
ok "ls gc/latest/ds, and /ds is gc/latest/ds"

# ---- through a mount -------------------------------------------------------
M=$WORK/mnt
mount_trace "$CO" "$M"
[ "$(readlink "$M/ds")" = gc/latest/ds ] || fail "readlink ds"
cmp "$M/ds/roles" "$WORK/roles" || fail "mounted ds/roles differs from heapfs cat"
cmp "$M/gc/latest/ds/heads" "$WORK/heads" || fail "mounted ds/heads differs"
[ "$(stat -c %s "$M/ds/heads")" = "$(wc -c <"$WORK/heads")" ] || fail "size after read"
unmount "$M"
ok "mounted ds/ serves the same bytes"
