#!/usr/bin/env bash
# bench_export.sh - heapfs export of a 10^7-object GC (issue 33's goal: at
# least 200 MB/s of table data; peak memory within the mount's own for
# that GC).  What `make bench-export` runs:
#
#   bash tests/bench/bench_export.sh /abs/path/to/build/heapfs
#   BENCH_N=100000 bash tests/bench/bench_export.sh build/heapfs   (a quick run)
#
# The trace: heapfs synth multicache -n BENCH_N -g 2 (default 1430000:
# 10,010,020 live objects and 12.9 M references at the last GC).  Each of
# BENCH_REPS runs (default 5) exports that GC (--gcs latest) into a fresh
# directory; medians are printed.  Figures:
#   values MB     the Parquet pages' bytes before compression (what readers
#                 decode), from export's summary line
#   csv MB        the same rows as CSV text (DuckDB's COPY of the export,
#                 without the partition columns), when tests/export has
#                 DuckDB; the format-neutral size of the table data
#   total s       the whole command: opening the trace, rebuilding the GC,
#                 its by-type closures and dominator tree, writing, syncing
#   writing s     the row loops and file closes, summed over the
#                 threads (export's summary line)
#   peak RSS      /usr/bin/time's maximum resident size, beside heapfs cat's
#                 for the same GC's by-type/table and dominators/top (what a
#                 mount computes to serve them) and status's memory_bound
#   disk          dd of 1 GiB with fdatasync into the same directory
set -u -o pipefail

HEAPFS=${1:?usage: bench_export.sh /abs/path/to/heapfs}
HEAPFS=$(cd "$(dirname "$HEAPFS")" && pwd)/$(basename "$HEAPFS")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
N=${BENCH_N:-1430000}
REPS=${BENCH_REPS:-5}
die() { echo "bench_export.sh: $*" >&2; exit 1; }
[ -x /usr/bin/time ] || die "/usr/bin/time is needed for peak RSS (apt-get install time)"
WORK=${BENCH_TMP:-$(mktemp -d /tmp/heapfs-bench-export-XXXXXX)}
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
T=$WORK/mc.htr

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# heapfs synth multicache -n $N -g 2"
"$HEAPFS" synth multicache -q -n "$N" -g 2 -o "$T" || die "synth failed"
objects=$("$HEAPFS" cat -q "$T" gc/latest/info | sed -n 's/^objects\t//p')
edges=$("$HEAPFS" cat -q "$T" gc/latest/info | sed -n 's/^edges\t//p')
echo "# last GC: $objects objects, $edges references; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

: >"$WORK/runs"
for r in $(seq 1 "$REPS"); do
	rm -rf "$WORK/out"
	/usr/bin/time -f "rss %M" "$HEAPFS" export "$T" --gcs latest -o "$WORK/out" 2>"$WORK/err" >/dev/null ||
		die "export failed: $(cat "$WORK/err")"
	line=$(grep "^heapfs export: .* rows" "$WORK/err")
	rows=$(sed -E 's/.*, ([0-9]+) rows.*/\1/' <<<"$line")
	values=$(sed -E 's/.* rows, ([0-9.]+) MB of values.*/\1/' <<<"$line")
	written=$(sed -E 's/.*values, ([0-9.]+) MB written.*/\1/' <<<"$line")
	total=$(sed -E 's/.*written, ([0-9.]+) s \(.*/\1/' <<<"$line")
	writing=$(sed -E 's/.*\(([0-9.]+) s writing rows\).*/\1/' <<<"$line")
	rss=$(sed -n 's/^rss //p' "$WORK/err")
	echo "$total $writing $rss" >>"$WORK/runs"
	printf 'run %d: %s rows, %s MB of values, %s MB written, %s s (%s s writing), peak RSS %d MB\n' \
		"$r" "$rows" "$values" "$written" "$total" "$writing" $((rss / 1024))
done
total=$(cut -d' ' -f1 "$WORK/runs" | median)
writing=$(cut -d' ' -f2 "$WORK/runs" | median)
rss=$(cut -d' ' -f3 "$WORK/runs" | median)

csv=
if command -v node >/dev/null && [ -f "$ROOT/tests/export/node_modules/@duckdb/node-api/package.json" ]; then
	cat >"$ROOT/tests/export/.bench-csv.mjs" <<'EOF'
import { DuckDBInstance } from '@duckdb/node-api';
const [dir, tmp] = process.argv.slice(2);
const c = await (await DuckDBInstance.create(':memory:')).connect();
for (const t of ['objects', 'edges', 'roots', 'histogram', 'gcs', 'allocs'])
  await c.run(`COPY (SELECT * FROM read_parquet('${dir}/${t}/**/*.parquet', hive_partitioning = false)) TO '${tmp}/${t}.csv' (HEADER)`);
EOF
	mkdir -p "$WORK/csv"
	(cd "$ROOT/tests/export" && node .bench-csv.mjs "$WORK/out" "$WORK/csv") && csv=$(du -cb "$WORK/csv"/*.csv | tail -n 1 | cut -f1)
	rm -f "$ROOT/tests/export/.bench-csv.mjs" "$WORK"/csv/*.csv
fi

/usr/bin/time -f "rss %M" "$HEAPFS" cat -q "$T" gc/latest/by-type/table gc/latest/dominators/top status \
	>"$WORK/cat.out" 2>"$WORK/cat.err" || die "cat failed: $(cat "$WORK/cat.err")"
cat_rss=$(sed -n 's/^rss //p' "$WORK/cat.err")
bound=$(sed -n 's/^memory_bound\t//p' "$WORK/cat.out")

dd if=/dev/zero of="$WORK/dd" bs=1M count=1024 conv=fdatasync 2>"$WORK/dd.err" >/dev/null
disk=$(sed -nE 's/.* ([0-9.]+) ([MG])B\/s$/\1 \2/p' "$WORK/dd.err" | awk '{ print $2 == "G" ? $1 * 1000 : $1 }')
rm -f "$WORK/dd"

values=$(sed -E 's/.* rows, ([0-9.]+) MB of values.*/\1/' <<<"$line")
echo
echo "medians of $REPS runs, export --gcs latest of $objects objects and $edges references:"
awk -v v="$values" -v t="$total" -v w="$writing" 'BEGIN {
	printf "  total   %6.2f s   %6.0f MB/s of values\n", t, v / t
	printf "  writing %6.2f s   %6.0f MB/s of values (summed over threads)\n", w, v / w }'
if [ -n "$csv" ]; then
	awk -v c="$csv" -v t="$total" -v w="$writing" 'BEGIN {
	printf "  as CSV: %.0f MB of table data: %.0f MB/s in total, %.0f MB/s writing (goal: 200)\n", c / 1e6, c / 1e6 / t, c / 1e6 / w }'
fi
echo "  peak RSS $((rss / 1024)) MB; heapfs cat of that GC's by-type/table and dominators/top: $((cat_rss / 1024)) MB (memory_bound $((bound / 1048576)) MB)"
echo "  disk: dd 1 GiB with fdatasync ${disk:-?} MB/s"
