#!/bin/bash
# check.sh - heapfs export read by DuckDB and arrow-rs
# (tests/export/check.mjs): the export of several traces, each compared
# with heapfs's own files.
#   HEAPFS=/abs/build/heapfs bash tests/export/check.sh
# Inputs, made here: a synthetic multicache trace (4 GCs with graphs, the
# last one's objects in 2 parts at HEAPFS_THREADS=2, set here), a
# heap dump from tests/tools/gen_hprof (beside HEAPFS in tools/), the
# bundled examples/multicache.htr, and a JDK Flight Recorder recording of
# examples/java's MultiCache when java and javac are installed.
# Needs node and tests/export/node_modules (make export-check installs it).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HEAPFS=${HEAPFS:?HEAPFS=/abs/path/to/heapfs}
TOOLS=$(dirname "$HEAPFS")/tools
WORK=$(mktemp -d "${TMPDIR:-/tmp}/heapfs-export-check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

export HEAPFS_THREADS=2
"$HEAPFS" synth multicache -n 40000 -g 4 -q -o "$WORK/synth-multicache.htr"
"$TOOLS/gen_hprof" -n 60000 -g 1000 -o "$WORK/gendump.hprof" > /dev/null
cp "$ROOT/examples/multicache.htr" "$WORK/multicache.htr"
TRACES=("$WORK/synth-multicache.htr" "$WORK/gendump.hprof" "$WORK/multicache.htr")

JDK=$(dirname "$(dirname "$(readlink -f "$(command -v javac || echo /nonexistent/bin/javac)")")")
if [ -x "$JDK/bin/java" ] && [ -x "$JDK/bin/javac" ]; then
	"$JDK/bin/javac" -d "$WORK/mc" "$ROOT"/examples/java/example/multicache/*.java
	"$JDK/bin/java" -Xmx256m "-XX:StartFlightRecording=filename=$WORK/mc-recording.jfr,settings=profile,path-to-gc-roots=true" \
		-cp "$WORK/mc" example.multicache.Main 100000 6 > "$WORK/mc.out" 2> "$WORK/mc.err"
	TRACES+=("$WORK/mc-recording.jfr")
else
	echo "# no java and javac: the check runs without a JFR recording"
fi

"$HEAPFS" export -q "${TRACES[@]}" -o "$WORK/all"
"$HEAPFS" export -q "${TRACES[@]}" --gcs latest -o "$WORK/latest"
# the two traces of several GCs: docs/export.md's "types that grow in
# every instance" has an answer to check there
"$HEAPFS" export -q "$WORK/synth-multicache.htr" "$WORK/multicache.htr" -o "$WORK/growth"
cd "$ROOT/tests/export"
GROWTH_DIR=$WORK/growth GROWTH_TRACES="$WORK/synth-multicache.htr $WORK/multicache.htr" \
	node check.mjs "$HEAPFS" "$WORK/all" "$WORK/latest" "${TRACES[@]}"
