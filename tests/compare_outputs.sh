#!/usr/bin/env bash
# compare_outputs.sh OLD_HEAPFS NEW_HEAPFS - byte-identical output before
# and after a restructuring.  Both binaries `heapfs cat` the same fixed
# list of files (every kind of node: trace files, windows, suspects, each
# GC's info and type tables, classifications, closures, paths, roots,
# dominators, roles, diffs, objects, allocs) on the six synthetic
# scenarios, the recorded examples/multicache.htr, and a heap dump that
# DumpGen (examples/java) writes when a JDK is there.  Prints each
# differing file and exits 1 if any differs.
#
# Volatile lines are left out: status (cache use, memory) is not compared.
set -euo pipefail
OLD=${1:?usage: compare_outputs.sh OLD_HEAPFS NEW_HEAPFS}
NEW=${2:?usage: compare_outputs.sh OLD_HEAPFS NEW_HEAPFS}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/heapfs-cmp.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

traces=()
for s in multicache buggystack company churn gcstress leakdrops; do
	"$OLD" synth "$s" -n 3000 -g 10 -o "$WORK/$s.htr" >/dev/null
	traces+=("$WORK/$s.htr")
done
traces+=("$ROOT/examples/multicache.htr")
if command -v javac >/dev/null && command -v java >/dev/null; then
	mkdir -p "$WORK/classes"
	javac -d "$WORK/classes" "$ROOT/examples/java/example/dumpgen/DumpGen.java"
	java -Xmx256m -cp "$WORK/classes" example.dumpgen.DumpGen "$WORK/dg" 3000 2 >/dev/null
	for d in "$WORK"/dg*.hprof; do traces+=("$d"); break; done
fi

# The files of one trace: fixed kinds, over names its own tree lists.
file_list() {
	local h=$1 t=$2 g ty
	printf '%s\n' README trace/info timeline/gcs.csv windows/leak windows/leak-narrow \
		windows/leak-regression windows/gc-overhead windows/churn windows/summary suspects \
		suspects.json allocs/by-site allocs/by-method allocs/stats classifiers/list \
		classifiers/README
	for g in $("$h" ls "$t" gc | grep -v latest); do
		printf 'gc/%s/%s\n' "$g" info count shallow_size summary by-type/table by-type/table.csv \
			by-type/table.json by-package/table by-site/table by-age/table
	done
	printf 'gc/latest/%s\n' deep_count deep_size retained_count retained_size paths \
		dominators/top roots/table ds/roles ds/heads ds/table by-role/table by-ds/table \
		by-indirect-root/table by-root/table by-first-root/table by-collection-health/table \
		by-instance-health/table only-reachable/count points-to/count pointed-from/count \
		closure/retained/count closure/transitive/by-type/table objects/all
	for ty in $("$h" ls "$t" gc/latest/by-type | grep -v '^table' | head -n 4); do
		printf 'gc/latest/by-type/%s/%s\n' "$ty" count summary retained_size deep_size paths roots \
			pointed-from/by-type/table by-site/table
	done
	# groups named after roots: their paths start at those roots
	for k in $("$h" ls "$t" gc/latest/by-indirect-root 2>/dev/null | grep -v '^table' | head -n 3); do
		printf 'gc/latest/by-indirect-root/%s/%s\n' "$k" count paths roots
	done
	for g in $("$h" ls "$t" gc/latest/diff 2>/dev/null | head -n 2); do
		printf 'gc/latest/diff/%s/%s\n' "$g" count by-type/table
	done
	for id in $("$h" cat "$t" gc/latest/objects/all 2>/dev/null | awk 'NR % 500 == 1' | head -n 4); do
		printf 'gc/latest/objects/%s/%s\n' "$id" info refs referrers retained_size dominator \
			path-to-root
	done
}

differ=0 files=0
for t in "${traces[@]}"; do
	while read -r f; do
		a=0 b=0
		"$OLD" cat "$t" "$f" >"$WORK/old" 2>"$WORK/old.err" || a=$?
		"$NEW" cat "$t" "$f" >"$WORK/new" 2>"$WORK/new.err" || b=$?
		files=$((files + 1))
		if [ "$a" != "$b" ] || ! cmp -s "$WORK/old" "$WORK/new"; then
			echo "differs: ${t##*/} $f (exit $a vs $b)"
			differ=$((differ + 1))
		fi
	done < <(file_list "$OLD" "$t")
done
echo "compare_outputs: $files files over ${#traces[@]} traces, $differ differing"
[ "$differ" -eq 0 ]
