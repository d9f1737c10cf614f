#!/usr/bin/env bash
# heapfs export (issue 33 item 2) without DuckDB: the partitioned layout,
# each file's Parquet framing, columns and row count (its footer, read by
# tests/tools/pq_info) against heapfs's own files, re-export replacing a
# trace's partitions and leaving the others alone, an interrupted export
# leaving the directory as it was, and the error messages.
# tests/export/check.sh (make export-check) has DuckDB read the values.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
TOOLS=$(dirname "$HEAPFS")/tools
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }
[ -x "$TOOLS/pq_info" ] || fail "no $TOOLS/pq_info (make $BUILD/tools/pq_info)"

A=$TMP/a.htr B=$TMP/b.hprof C=$TMP/multicache.htr
"$HEAPFS" synth multicache -q -n 20000 -g 3 -o "$A"
"$TOOLS/gen_hprof" -n 6000 -g 100 -o "$B" >/dev/null
cp examples/multicache.htr "$C"
F=$TMP/fleet

"$HEAPFS" export -q "$A" "$B" "$C" -o "$F" 2>"$TMP/err" || fail "export: $(cat "$TMP/err")"
[ ! -s "$TMP/err" ] || fail "export -q printed: $(cat "$TMP/err")"

# ---- layout, columns and rows ----
cols_objects=id,type,size,array_length,site,thread,birth_gc,reachable,retained_size,retained_count,dominator
cols_edges=source,target,field,index
cols_roots=kind,object,class,field,thread,method,depth,slot,name
cols_histogram=type,count,shallow_size,deep_count,deep_size,retained_count,retained_size,samples
cols_gcs=gc,start_ms,end_ms,pause_ms,cause,used_before,used_after,reachable,freed,allocated,graph
cols_allocs=site,type,count,bytes,samples,bci,descriptor,top_caller,top_caller_count,callers

# part FILE TABLE ROWS: the file is Parquet with the table's columns and ROWS rows
part() {
	[ -f "$1" ] || fail "missing $1"
	local info cols
	info=$("$TOOLS/pq_info" "$1") || fail "$1: not Parquet"
	cols=cols_$2
	grep -qx "columns ${!cols}" <<<"$info" || fail "$1: columns $(grep columns <<<"$info"), want ${!cols}"
	grep -qx "rows $3" <<<"$info" || fail "$1: $(grep '^rows' <<<"$info"), want $3 (heapfs's files)"
}
lines() { "$HEAPFS" cat -q "$1" "$2" | tail -n +2 | wc -l; }
infokey() { "$HEAPFS" cat -q "$1" "gc/$2/info" | sed -n "s/^$3\t//p"; }

expected=0
for t in "$A" "$B" "$C"; do
	n=$(basename "$t"); n=${n%.*}
	part "$F/gcs/trace=$n/part-0.parquet" gcs "$(lines "$t" timeline/gcs.csv)"
	part "$F/allocs/trace=$n/part-0.parquet" allocs "$(lines "$t" allocs/by-site)"
	expected=$((expected + 2))
	graphs=0
	for d in $("$HEAPFS" ls -q "$t" gc | grep -E '^[0-9]+$'); do
		g=$((10#$d))
		part "$F/histogram/trace=$n/gc=$g/part-0.parquet" histogram "$(lines "$t" "gc/$d/by-type/table")"
		expected=$((expected + 1))
		if [ "$(infokey "$t" "$d" graph)" = yes ]; then
			part "$F/objects/trace=$n/gc=$g/part-0.parquet" objects "$(infokey "$t" "$d" objects)"
			part "$F/edges/trace=$n/gc=$g/part-0.parquet" edges "$(infokey "$t" "$d" edges)"
			part "$F/roots/trace=$n/gc=$g/part-0.parquet" roots "$(infokey "$t" "$d" roots)"
			expected=$((expected + 3)) graphs=$((graphs + 1))
		else
			[ ! -e "$F/objects/trace=$n/gc=$g" ] || fail "$n gc $g has no graph but an objects partition"
		fi
	done
	ok "$n: every table's partitions, columns and row counts as heapfs's files say ($graphs GCs with a graph)"
done
got=$(find "$F" -type f | wc -l)
[ "$got" -eq "$expected" ] || fail "$got files in the export, $expected expected: $(find "$F" -type f | sort)"
[ -z "$(find "$F" -name '.heapfs-export-*')" ] || fail "a staging directory was left"
ok "$got files and nothing else (no staging directory left)"

# ---- a GC's objects in parts, one per thread (none under 131,072 rows) ----
P=$TMP/p.htr
"$HEAPFS" synth multicache -q -n 40000 -g 2 -o "$P"
pn=$(infokey "$P" 002 objects)
[ "$pn" -ge 262144 ] || fail "p.htr has $pn objects at GC 2, too few for two parts"
for th in 1 2 4; do
	rm -rf "$TMP/p$th"
	HEAPFS_THREADS=$th "$HEAPFS" export -q "$P" --gcs 2 -o "$TMP/p$th"
	parts=$(ls "$TMP/p$th/objects/trace=p/gc=2")
	want=$((th < pn / 131072 ? th : pn / 131072))
	[ "$(wc -l <<<"$parts")" -eq "$want" ] || fail "threads=$th: objects parts $(echo $parts), want $want"
	for k in $(seq 0 $((want - 1))); do
		part "$TMP/p$th/objects/trace=p/gc=2/part-$k.parquet" objects $((pn * (k + 1) / want - pn * k / want))
	done
	ok "threads=$th: GC 2's $pn objects in $want part(s), part k rows [k*n/parts, (k+1)*n/parts)"
done

# a trace without graphs (the agent's mode=sample: tests/tools/sample_trace
# thins a full trace so) has no objects/edges/roots; its histogram carries
# the samples
make_sampled() { "$TOOLS/sample_trace" "$C" "$TMP/s.htr" 16384 1 >/dev/null; }
if make_sampled && [ "$("$HEAPFS" cat -q "$TMP/s.htr" trace/info | sed -n 's/^graph_gcs\t//p')" = 0 ]; then
	"$HEAPFS" export -q "$TMP/s.htr" -o "$TMP/s"
	[ ! -e "$TMP/s/objects" ] && [ ! -e "$TMP/s/edges" ] && [ ! -e "$TMP/s/roots" ] ||
		fail "a trace without graphs got objects/edges/roots"
	part "$TMP/s/histogram/trace=s/gc=8/part-0.parquet" histogram "$(lines "$TMP/s.htr" gc/008/by-type/table)"
	ok "a sampled trace without graphs: histogram (samples and estimates), gcs, allocs; no objects, edges or roots"
else
	fail "sample_trace made no trace without graphs"
fi

# ---- re-export replaces one trace's partitions; the others are left alone ----
sums() { (cd "$F" && find . -type f -path "*trace=$1/*" | sort | xargs md5sum); }
sums b >"$TMP/b.before"
sums multicache >"$TMP/c.before"
"$HEAPFS" export -q "$A" --gcs 2-3 -o "$F"
[ ! -e "$F/histogram/trace=a/gc=1" ] && [ ! -e "$F/objects/trace=a/gc=1" ] ||
	fail "re-export with --gcs 2-3 kept a's gc=1"
[ -f "$F/histogram/trace=a/gc=2/part-0.parquet" ] && [ -f "$F/objects/trace=a/gc=3/part-0.parquet" ] ||
	fail "re-export with --gcs 2-3 lacks a's gc=2 or gc=3"
part "$F/gcs/trace=a/part-0.parquet" gcs 2
sums b | cmp -s - "$TMP/b.before" || fail "re-exporting a changed b's partitions"
sums multicache | cmp -s - "$TMP/c.before" || fail "re-exporting a changed multicache's partitions"
ok "re-export of a with --gcs 2-3: a's partitions are GCs 2-3 only (gcs: 2 rows); b's and multicache's byte for byte the same"

# ---- an interrupted export (SIGINT, SIGTERM, SIGHUP) leaves DIR as it was ----
"$HEAPFS" synth multicache -q -n 400000 -g 4 -o "$TMP/a.htr.big"
mv "$TMP/a.htr.big" "$A"
sums a >"$TMP/a.before"
"$HEAPFS" export -q "$A" -o "$F" &
pid=$!
for _ in $(seq 1 400); do
	[ -n "$(find "$F" -maxdepth 1 -name '.heapfs-export-a.*' 2>/dev/null)" ] && break
	sleep 0.025
done
[ -n "$(find "$F" -maxdepth 1 -name '.heapfs-export-a.*')" ] || fail "no staging directory seen"
sleep 0.3
# SIGTERM: a background job of a script ignores SIGINT
kill -TERM "$pid"
st=0; wait "$pid" || st=$?
[ "$st" -eq 143 ] || fail "the interrupted export exited $st, not 143 (SIGTERM)"
sums a | cmp -s - "$TMP/a.before" || fail "an interrupted export changed a's partitions"
[ -z "$(find "$F" -name '.heapfs-export-*')" ] || fail "an interrupted export left its staging directory"
ok "SIGTERM during an export: exit 143, a's partitions as they were, no staging directory left"

# ---- --gcs forms: A-B, A, A-, -B, latest ----
for r in 2-3:2,3 5:5 7-:7,8 -2:1,2 latest:8; do
	rm -rf "$TMP/g"
	"$HEAPFS" export -q "$C" --gcs "${r%%:*}" -o "$TMP/g"
	got=$(ls "$TMP/g/histogram/trace=multicache" | sed 's/gc=//' | sort -n | paste -sd, -)
	[ "$got" = "${r#*:}" ] || fail "--gcs ${r%%:*}: GCs $got, want ${r#*:}"
done
ok "--gcs 2-3, 5, 7-, -2 and latest select GCs 2,3 / 5 / 7,8 / 1,2 / 8"

# ---- progress, without -q, one line per phase in a pipe ----
HEAPFS_PROGRESS_AFTER_MS=0 "$HEAPFS" export "$C" --gcs latest -o "$TMP/p" 2>"$TMP/p.err"
grep -q "^heapfs: export multicache: objects of GC 8: " "$TMP/p.err" || fail "no progress line: $(cat "$TMP/p.err")"
grep -q "^heapfs export: .*multicache.htr: trace=multicache, [0-9]* rows" "$TMP/p.err" || fail "no summary: $(cat "$TMP/p.err")"
ok "progress: $(grep -c '^heapfs: export' "$TMP/p.err") phase lines and a summary; -q: none"

# ---- errors ----
err() { # err STATUS PATTERN ARGS...: exit status and message
	local want=$1 pat=$2 st=0
	shift 2
	"$HEAPFS" export "$@" >"$TMP/o" 2>"$TMP/e" || st=$?
	[ "$st" -eq "$want" ] || fail "export $*: exit $st, want $want ($(cat "$TMP/e"))"
	grep -q -- "$pat" "$TMP/e" || fail "export $*: message $(cat "$TMP/e"), want $pat"
}
err 2 "unknown option '--bogus'" "$C" --bogus -o "$TMP/e1"
err 2 "-o DIR is missing" "$C"
err 2 "no TRACE given" -o "$TMP/e1"
err 1 "nosuch.htr: No such file or directory" "$C" "$TMP/nosuch.htr" -o "$TMP/e2"
[ ! -e "$TMP/e2/histogram" ] || fail "an unreadable second trace let the first be exported"
err 1 "$TMP: is a directory" "$TMP" -o "$TMP/e1"
err 1 "multicache.htr: --gcs 3-99 is out of range: the trace's GCs are 1-8" "$C" --gcs 3-99 -o "$TMP/e1"
err 2 "--gcs 9-3: the range is empty" "$C" --gcs 9-3 -o "$TMP/e1"
err 1 "multicache.htr: --gcs 9- is out of range: the trace's GCs are 1-8" "$C" --gcs 9- -o "$TMP/e1"
err 2 "--gcs x: not a range" "$C" --gcs x -o "$TMP/e1"
err 2 "would both be trace=multicache" "$C" examples/multicache.htr -o "$TMP/e1"
printf 'HTR1 not a trace' >"$TMP/bad.htr"
err 1 "bad.htr" "$TMP/bad.htr" -o "$TMP/e1"
[ -z "$(find "$TMP/e1" -mindepth 1 2>/dev/null)" ] || fail "a failed export wrote into DIR: $(find "$TMP/e1")"
"$HEAPFS" export --help >"$TMP/h" || fail "export --help failed"
grep -q "^usage: heapfs export TRACE... -o DIR" "$TMP/h" || fail "export --help: $(head -n 2 "$TMP/h")"
ok "errors: unknown option, -o missing, no trace, unreadable and damaged traces, --gcs out of range, empty or malformed, two traces of one name; --help"
