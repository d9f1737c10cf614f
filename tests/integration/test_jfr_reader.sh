#!/usr/bin/env bash
# test_jfr_reader.sh - the JFR reader (model/jfr*.c) against the JDK's own
# reader on recordings made here of a real JVM:
#   1. JfrWorkload (tests/integration/JfrWorkload.java) runs under
#      -XX:StartFlightRecording with the profile settings, TLAB allocation
#      events and old-object samples with paths to GC roots;
#   2. every jdk.GarbageCollection (and the Young/OldGarbageCollection
#      naming its gcId), GCHeapSummary, GCPhasePause,
#      ObjectAllocationSample, ObjectAllocationInNewTLAB/OutsideTLAB and
#      OldObjectSample that `jfr print --json` shows (turned into TSV by jq)
#      must be a line of tests/tools/jfr_dump's output, and the reverse,
#      value for value: times in ns, types, weights, sizes, threads, whole
#      stack traces, old objects' reference chains and roots; so must every
#      jdk.ActiveRecording and ActiveSetting, and the JVM's description
#      be one of its jdk.JVMInformation events; the event counts must be
#      `jfr summary`'s;
#   3. the same on a recording of several chunks (one JVM that starts and
#      stops a second recording: a new chunk at each)
#      and on two recordings concatenated (JFR files concatenate chunk by
#      chunk);
#   4. a recording cut inside its second chunk reads its first chunk with
#      a warning naming the file and offset; cut inside the first, it is
#      refused with the offset;
#   5. with JDK 25 (/usr/lib/jvm/temurin-25-jdk-amd64) where installed,
#      1-3 again with its java and jfr (skipped, and said so, without it).
# Skipped as a whole (exit 0, with a message) when java is absent.
#
# Usage: HEAPFS=/abs/path/build/heapfs bash tests/integration/test_jfr_reader.sh
# (jfr_dump is looked for beside it: BUILD/tools/jfr_dump, which make
# integration builds.)
. "$(dirname "$0")/mountlib.bash"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DUMP=$(dirname "$HEAPFS")/tools/jfr_dump
[ -x "$DUMP" ] || fail "no $DUMP (make BUILD=... integration builds it)"
command -v jq >/dev/null || fail "jq not found (make deps installs it)"
JDK17=${JDK17:-$(dirname "$(dirname "$(readlink -f "$(command -v java 2>/dev/null || echo /nonexistent)")")")}
JDK25=${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}
if [ ! -x "$JDK17/bin/java" ] || [ ! -x "$JDK17/bin/jfr" ]; then
	echo "# SKIP: no java and jfr found (make deps installs default-jdk-headless)"
	exit 0
fi

# jq: jfr print --json's events as jfr_dump's lines.  Times become ns
# since the epoch (built as strings: they exceed a double's exact range;
# jfr print leaves out zero seconds, "2026-11-28T00:29Z"), durations ns.
JQ='
def ts: if . == null then "null" else
	capture("^(?<d>[0-9-]+T[0-9]+:[0-9]+)(:(?<s>[0-9]+))?(\\.(?<f>[0-9]+))?Z$") as $c |
	(($c.d + ":" + ($c.s // "00") + "Z") | fromdateiso8601 | floor | tostring) +
	((($c.f // "") + "000000000")[0:9]) end;
def dur: if . == null then "null" else
	capture("^PT((?<h>[0-9]+)H)?((?<m>[0-9]+)M)?((?<s>-?[0-9]+)(\\.(?<f>[0-9]+))?S)?$") as $c |
	((($c.h // "0") | tonumber) * 3600 + (($c.m // "0") | tonumber) * 60 + (($c.s // "0") | tonumber))
	* 1000000000 + ((($c.f // "") + "000000000")[0:9] | tonumber) | tostring end;
def s: if . == null then "null" else tostring end;
def stack: if . == null then "null" else
	([if .truncated then "truncated" else "complete" end] +
	 [.frames[] | "\(.method.type.name | s).\(.method.name | s) \(.method.descriptor | s) \(.lineNumber) \(.bytecodeIndex) \(.type | s)"])
	| join(" | ") end;
def obj: "\(.address):\(.type.name | s):\(.description | s)";
def chain: if . == null then "" else
	[obj] + [recurse(.referrer.object; . != null) | select(.referrer != null) |
		" <- \(.referrer.field.name | s)[\(.referrer.array.index // -1)/\(.referrer.array.size // -1)]+\(.referrer.skip) \(.referrer.object | obj)"]
	| join("") end;
def thread: .eventThread.javaName | s;
.recording.events[] | .type as $t | .values as $v |
if $t == "jdk.GarbageCollection" then
	["gc", ($v.gcId | s), ($v.name | s), ($v.cause | s), ($v.startTime | ts), ($v.duration | dur),
	 ($v.sumOfPauses | dur), ($v.longestPause | dur)]
elif $t == "jdk.YoungGarbageCollection" then
	["gen", ($v.gcId | s), "1"]
elif $t == "jdk.OldGarbageCollection" then
	["gen", ($v.gcId | s), "2"]
elif $t == "jdk.GCHeapSummary" then
	["heap", ($v.gcId | s), ($v.when | s), ($v.startTime | ts), ($v.heapUsed | s),
	 ($v.heapSpace.committedSize | s), ($v.heapSpace.reservedSize | s)]
elif $t == "jdk.GCPhasePause" then
	["pause", ($v.gcId | s), ($v.name | s), ($v.startTime | ts), ($v.duration | dur)]
elif $t == "jdk.ObjectAllocationSample" then
	["alloc", $t, ($v.startTime | ts), ($v.objectClass.name | s), ($v.weight | s), "0", ($v | thread), ($v.stackTrace | stack)]
elif $t == "jdk.ObjectAllocationInNewTLAB" then
	["alloc", $t, ($v.startTime | ts), ($v.objectClass.name | s), ($v.allocationSize | s), ($v.tlabSize | s), ($v | thread), ($v.stackTrace | stack)]
elif $t == "jdk.ObjectAllocationOutsideTLAB" then
	["alloc", $t, ($v.startTime | ts), ($v.objectClass.name | s), ($v.allocationSize | s), "0", ($v | thread), ($v.stackTrace | stack)]
elif $t == "jdk.OldObjectSample" then
	["old", ($v.startTime | ts), ($v.allocationTime | ts), ($v.objectAge | dur), ($v.lastKnownHeapUsage | s),
	 ($v.arrayElements | s), ($v | thread),
	 "\($v.root.system | s)/\($v.root.type | s)/\($v.root.description | s)", ($v.object | chain), ($v.stackTrace | stack)]
else empty end | join("\t")'
# The JVM, the recordings and their settings (jfr_dump's setup lines);
# the defs above come first.
JQ_SETUP='
.recording.events[] | .type as $t | .values as $v |
if $t == "jdk.JVMInformation" then
	["jvm", ($v.jvmName | s), ($v.jvmVersion | s), ($v.jvmArguments | s), ($v.jvmFlags | s),
	 ($v.javaArguments | s), ($v.jvmStartTime | ts), ($v.pid | s)]
elif $t == "jdk.ActiveRecording" then
	["recording", ($v.id | s), ($v.name | s), ($v.destination | s), ($v.maxSize | s), ($v.recordingStart | ts)]
elif $t == "jdk.ActiveSetting" then
	["setting", ($v.id | s), ($v.name | s), ($v.value | s)]
else empty end | join("\t")'
JQ_DEFS=${JQ%%.recording.events*}
EVENTS=jdk.GarbageCollection,jdk.YoungGarbageCollection,jdk.OldGarbageCollection,jdk.GCHeapSummary,jdk.GCPhasePause,jdk.ObjectAllocationSample,jdk.ObjectAllocationInNewTLAB,jdk.ObjectAllocationOutsideTLAB,jdk.OldObjectSample

# compare JDK REC NAME [PART...]: jfr_dump's lines against jfr print's
# (of the PARTs the recording was concatenated from, when given), and
# event counts against jfr summary's; prints how many of each were
# compared.
compare() {
	local jdk=$1 rec=$2 name=$3 w=$WORK/$3 p
	shift 3
	for p in "${@:-$rec}"; do
		t "$jdk/bin/jfr" print --json --stack-depth 4096 --events "$EVENTS" "$p" >"$w.json" ||
			fail "$name: jfr print failed"
		jq -r "$JQ" "$w.json"
	done | LC_ALL=C sort >"$w.jdk"
	t "$DUMP" "$rec" gc gen heap pause alloc old 2>"$w.err" | LC_ALL=C sort >"$w.ours" ||
		fail "$name: jfr_dump failed: $(cat "$w.err")"
	[ ! -s "$w.err" ] || fail "$name: jfr_dump warned: $(cat "$w.err")"
	if ! cmp -s "$w.jdk" "$w.ours"; then
		diff "$w.jdk" "$w.ours" | head -n 20 | cut -c1-300 >&2
		fail "$name: jfr_dump and jfr print differ ($(diff "$w.jdk" "$w.ours" | grep -c '^[<>]') lines)"
	fi
	# the JVM (the reader keeps the last of the JVMInformation events, one
	# per chunk), every ActiveRecording and ActiveSetting event
	for p in "${@:-$rec}"; do
		t "$jdk/bin/jfr" print --json --events jdk.JVMInformation,jdk.ActiveRecording,jdk.ActiveSetting "$p" |
			jq -r "$JQ_DEFS $JQ_SETUP"
	done | LC_ALL=C sort >"$w.jdk-setup"
	"$DUMP" "$rec" setup | LC_ALL=C sort >"$w.setup"
	grep -qxF "$(grep '^jvm' "$w.setup")" "$w.jdk-setup" ||
		fail "$name: jvm line not among jfr print's: $(grep '^jvm' "$w.setup" | cut -c1-200)"
	cmp -s <(grep -v '^jvm' "$w.jdk-setup") <(grep -v '^jvm' "$w.setup") || {
		diff <(grep -v '^jvm' "$w.jdk-setup") <(grep -v '^jvm' "$w.setup") | head >&2
		fail "$name: recordings or settings differ from jfr print's"
	}
	# jfr summary: " name  count  bytes"; types with events only, and
	# not jdk.Metadata and jdk.CheckPoint (JDK 25: Checkpoint), which it counts.
	# Of each part (jfr summary of two JVMs' recordings concatenated counts
	# the second's events under the first's names for their type ids).
	for p in "${@:-$rec}"; do t "$jdk/bin/jfr" summary "$p"; done |
		awk '$1 ~ /^[a-z]+\./ && $1 != "jdk.Metadata" && $1 != "jdk.CheckPoint" && $1 != "jdk.Checkpoint" { n[$1] += $2 }
			END { for (k in n) if (n[k] > 0) print "count\t" k "\t" n[k] }' |
		LC_ALL=C sort >"$w.sum"
	"$DUMP" "$rec" count | LC_ALL=C sort >"$w.cnt"
	cmp -s "$w.sum" "$w.cnt" || { diff "$w.sum" "$w.cnt" | head >&2; fail "$name: event counts differ from jfr summary"; }
	local chunks
	chunks=$("$DUMP" "$rec" info | awk -F'\t' '$2 == "chunks" { print $3 }')
	ok "$name: $(cut -f1 "$w.ours" | sort | uniq -c | awk '{ printf "%s%s %s", sep, $1, $2; sep=", " }') \
($(cut -f2 "$w.ours" | grep -c ObjectAllocationSample) allocation samples) as jfr print shows them; \
$(wc -l <"$w.cnt") event types counted as jfr summary; JVM, \
$(grep -c '^recording' "$w.setup") recording and $(grep -c '^setting' "$w.setup") setting events as jfr print; $chunks chunk(s)"
}

# record JDK OUT [extra -XX options] -- ARGS: JfrWorkload under JFR
record() {
	local jdk=$1 out=$2
	shift 2
	local opts=()
	while [ "$1" != "--" ]; do opts+=("$1"); shift; done
	shift
	t "$jdk/bin/java" -Xmx256m "${opts[@]}" \
		"-XX:StartFlightRecording:filename=$out,settings=profile,jdk.OldObjectSample#enabled=true,jdk.OldObjectSample#path-to-gc-roots=true,jdk.OldObjectSample#cutoff=infinity,jdk.ObjectAllocationInNewTLAB#enabled=true,jdk.ObjectAllocationOutsideTLAB#enabled=true" \
		-cp "$CLASSES" JfrWorkload "$@" >"$out.log" 2>&1 || fail "java failed: $(tail -n 5 "$out.log")"
	[ -s "$out" ] || fail "no recording $out"
}

CLASSES=$WORK/classes
mkdir -p "$CLASSES"
t "$JDK17/bin/javac" --release 11 -d "$CLASSES" "$ROOT/tests/integration/JfrWorkload.java" || fail "javac JfrWorkload"

run_jdk() {
	local jdk=$1 tag=$2
	record "$jdk" "$WORK/$tag.jfr" -- 16 2
	compare "$jdk" "$WORK/$tag.jfr" "$tag"
	# several chunks from one JVM: starting and stopping a second
	# recording makes it begin a new chunk each time
	record "$jdk" "$WORK/$tag-multi.jfr" -- 64 2 rotate
	compare "$jdk" "$WORK/$tag-multi.jfr" "$tag-multi"
	local n
	n=$("$DUMP" "$WORK/$tag-multi.jfr" info | awk -F'\t' '$2 == "chunks" { print $3 }')
	[ "$n" -ge 2 ] || fail "$tag-multi: expected several chunks, read $n"
	# two recordings end to end: compared with jfr print of each (jfr
	# print of the whole shows, for some events of the second JVM, the
	# stack traces of the first's that had the same pool key: it carries
	# resolved pool values over from chunk to chunk, docs/jfr.md)
	cat "$WORK/$tag.jfr" "$WORK/$tag-multi.jfr" >"$WORK/$tag-cat.jfr"
	compare "$jdk" "$WORK/$tag-cat.jfr" "$tag-cat" "$WORK/$tag.jfr" "$WORK/$tag-multi.jfr"
}

run_jdk "$JDK17" jdk17

# --- 4. cut recordings -----------------------------------------------------
REC=$WORK/jdk17-cat.jfr
first=$(stat -c %s "$WORK/jdk17.jfr")
head -c $((first + 1000)) "$REC" >"$WORK/cut2.jfr"
t "$DUMP" "$WORK/cut2.jfr" info >"$WORK/cut2.out" 2>"$WORK/cut2.err" || fail "cut in chunk 2: refused: $(cat "$WORK/cut2.err")"
grep -q "cut2.jfr: offset $first: .*cut" "$WORK/cut2.err" || fail "cut in chunk 2: warning does not name file, offset and cut: $(cat "$WORK/cut2.err")"
grep -qx "info	chunks	1" "$WORK/cut2.out" || fail "cut in chunk 2: expected 1 chunk read: $(cat "$WORK/cut2.out")"
"$DUMP" "$WORK/jdk17.jfr" gc heap alloc old >"$WORK/first.tsv"
"$DUMP" "$WORK/cut2.jfr" gc heap alloc old 2>/dev/null >"$WORK/cut2.tsv"
cmp -s "$WORK/first.tsv" "$WORK/cut2.tsv" || fail "cut in chunk 2: the first chunk's records differ from the whole first recording's"
ok "cut inside chunk 2: the first chunk read whole, with the warning '$(cat "$WORK/cut2.err")'"
head -c $((first / 2)) "$REC" >"$WORK/cut1.jfr"
if t "$DUMP" "$WORK/cut1.jfr" info >/dev/null 2>"$WORK/cut1.err"; then fail "cut in chunk 1: opened"; fi
grep -q "cut1.jfr: offset [0-9]*: .*cut" "$WORK/cut1.err" || fail "cut in chunk 1: message: $(cat "$WORK/cut1.err")"
ok "cut inside chunk 1: refused ($(cat "$WORK/cut1.err"))"

# --- 5. JDK 25 ---------------------------------------------------------------
if [ -x "$JDK25/bin/java" ] && [ -x "$JDK25/bin/jfr" ]; then
	run_jdk "$JDK25" jdk25
else
	echo "# SKIP: JDK 25 not installed at $JDK25: its recordings not tested"
fi
