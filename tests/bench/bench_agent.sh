#!/usr/bin/env bash
# tests/bench/bench_agent.sh - the agent side by side with the JDK's own
# allocation profiling (issue 31 item 4; `make bench-agent` runs it;
# docs/bench.md, "make bench-agent", explains every column).
#
#   make BUILD=build-x build agent examples-classes
#   BUILD=build-x bash tests/bench/bench_agent.sh        # about 13 min
#   BENCH_REPS=1 BENCH_PROGRAMS="company antlr3" BENCH_BREAKDOWN= \
#     BUILD=build-x bash tests/bench/bench_agent.sh      # about 1 min
#
# For each program, BENCH_REPS (default 5) rounds; each round runs every
# variant once, in turns (the order rotated by one each round), so that a
# change of load on the machine hits them alike:
#   no agent      plain java
#   JFR profile   -XX:StartFlightRecording=settings=profile (allocation
#                 samples: jdk.ObjectAllocationSample, throttled to 300/s)
#   mode=sample   the agent's heap sampling (default interval 512 KiB)
#   sample FINE   the same at interval=BENCH_FINE (default 32k), on the
#                 programs run for the accuracy check only (marked acc)
#   mode=count    exact allocation counts per site (path counters), with
#                 the JDK's java.* sites since jdk=on (f3b7f4c, the default);
#                 whether a run counted JDK sites is read from its
#                 allocs/by-site (jdk=off or an older agent: none)
#   mode=full     every object (the agent's defaults: graph=every); in the
#                 first BENCH_FULL_REPS (3) rounds, once on the long runs,
#                 never on churn-20M (BENCH_FULL=all: every round;
#                 BENCH_FULL=none: never)
# and prints the medians of wall-clock and CPU time (user + system, all the
# JVM's threads), their ratios to the median without the agent, and the
# load average before and after the program's rounds.
#
# Then whether the top allocation sites agree.  The reference is
# mode=count's exact count per site ("Class.method:line" of the `new`, and
# its type) times the type's instance size (tests/bench/SizeOf.java, run
# with the program's heap options): an exact figure that neither sampler
# had a hand in.  Count mode sees no array lengths, so the bytes ranking
# covers the sites of non-array types; array sites are compared by count.
# For the 10 biggest sites: mode=sample's estimate (est_bytes of its
# allocs/by-site; sd%: the standard deviation Poisson sampling alone gives
# that site's estimate) and JFR's (est_bytes of the recording's
# allocs/by-site: the sum of its jdk.ObjectAllocationSample weights), the
# error of each, how many are within 10% and how many within 2 sd, in the
# last round and in each round; how many of each estimator's own top 10
# (over the sites count mode sees) are count mode's; the sum over all
# reference sites (a bias shows there, where the noise has averaged out).
# mode=full's exact count, where it ran, is printed beside: escape analysis
# removes objects from the heap (so from full, sample and JFR) that count
# mode still counts (agent/README.md, "Exactness").  Last, the sites sample
# and JFR see that count mode does not (JDK methods until it counts them).
#
# Last, where mode=full's time goes (BENCH_BREAKDOWN, default antlr3: one
# step per row, HEAPFS_AGENT_ABLATE as agent/bench.sh's breakdown), over
# BENCH_BREAKDOWN_REPS (3) rounds in turns.
#
# Knobs: BENCH_REPS, BENCH_PROGRAMS (names, default all below), BENCH_FULL
# (auto|all|none), BENCH_FULL_REPS, BENCH_FINE (an interval, or none),
# BENCH_SAMPLE_OPTS (appended to mode=sample's options, e.g. ,interval=64k),
# BENCH_BREAKDOWN (program names, empty: none), BENCH_BREAKDOWN_REPS,
# BENCH_ANTLR_LONG (antlr3-long's grammar copies, 820), BENCH_JVM_OPTS
# (added to every program's JVM options: -XX:-DoEscapeAnalysis makes
# count mode's reference the heap's allocations), KEEP_WORK=1 (keep the
# work directory).  The real applications need Debian's antlr3,
# libguava-java, libjackson2-databind-java and libcommons-collections4-java
# (`make bench-agent` installs them); a program whose jars are missing is
# skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
JAVA=${JAVA:-java}
JAVAC=${JAVAC:-javac}
REPS=${BENCH_REPS:-5}
FULL=${BENCH_FULL:-auto}
FULL_REPS=${BENCH_FULL_REPS:-3}
FINE=${BENCH_FINE:-32k}
JVM_OPTS=${BENCH_JVM_OPTS:-}
SAMPLE_OPTS=${BENCH_SAMPLE_OPTS:-}
BREAKDOWN=${BENCH_BREAKDOWN-antlr3}
BD_REPS=${BENCH_BREAKDOWN_REPS:-3}
HEAPFS=$ROOT/$BUILD/heapfs
AGENT=$ROOT/$BUILD/libheapfs-agent.so
EXCP=$ROOT/$BUILD/examples/classes
J=/usr/share/java
EXAMPLES="churn multicache company buggystack gcstress slowleak threads"
ALL="$EXAMPLES churn-20M antlr3 antlr3-x14 boxingchurn cacheleak emptybloat listenerleak"
PROGRAMS=${BENCH_PROGRAMS:-$ALL}
for f in "$HEAPFS" "$AGENT" "$EXCP/example/churn/Server.class"; do
	[ -e "$f" ] || { echo "bench_agent: $f missing (make BUILD=$BUILD build agent examples-classes)" >&2; exit 1; }
done
OUT=$(mktemp -d "${TMPDIR:-/tmp}/heapfs-bench-agent.XXXXXX")
cleanup() { if [ -n "${KEEP_WORK:-}" ]; then echo "(work kept in $OUT)"; else rm -rf "$OUT"; fi; }
trap cleanup EXIT

median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
# paired A B: the median of the per-round ratios b[k] / a[k] of two lists
# of run times in round order (each round runs every variant once, so a
# round's pair shares the machine's state of the moment; this machine's
# speed drifts 20-25% between minutes, which the ratio of two medians
# taken over the whole program's rounds does not cancel)
paired() {
	paste <(printf '%s\n' $1) <(printf '%s\n' $2) |
		awk 'NF == 2 && $1 > 0 { print $2 / $1 }' | sort -g |
		awk '{ v[++n] = $1 } END { if (n) printf "%.2f", v[int((n + 1) / 2)]; else printf "-" }'
}

# the helpers: SizeOf, the real-application programs, ANTLR 3's grammars
"$JAVAC" -nowarn -d "$OUT/sizeof" tests/bench/SizeOf.java 2>"$OUT/javac.err" ||
	{ cat "$OUT/javac.err" >&2; exit 1; }
RA_JARS="$J/guava.jar:$J/jackson-databind.jar:$J/jackson-core.jar:$J/jackson-annotations.jar:$J/commons-collections4.jar"
RA_OK=1
for j in ${RA_JARS//:/ }; do [ -r "$j" ] || RA_OK=0; done
if [ "$RA_OK" = 1 ]; then
	"$JAVAC" -nowarn -cp "$RA_JARS" -d "$OUT/ra" tests/realapps/common/Pause.java tests/realapps/*/*.java \
		2>"$OUT/javac.err" || { cat "$OUT/javac.err" >&2; exit 1; }
fi
ANTLR_CP=$J/stringtemplate4.jar:$J/antlr3.jar:$J/antlr3-runtime.jar
ANTLR_OK=1
for j in ${ANTLR_CP//:/ }; do [ -r "$j" ] || ANTLR_OK=0; done
# 14 copies of MiniLang.g, each its own grammar: one run of >= 10^7
# allocations at the sites count mode sees (one copy: ~0.75 M)
mkdir -p "$OUT/grammars"
GRAMMARS=() LONG_GRAMMARS=()
# antlr3-long (not in the default list): BENCH_ANTLR_LONG copies (820:
# 10^8 allocations, and ~400 MB at the 10th biggest site, so ~800 samples
# at 512 KiB: the accuracy goal within reach of sampling, see bench.md)
LONG_COPIES=${BENCH_ANTLR_LONG:-820}
ncopies=14
[[ " $PROGRAMS " == *" antlr3-long "* ]] && ncopies=$((LONG_COPIES > 14 ? LONG_COPIES : 14))
for i in $(seq 1 "$ncopies"); do
	sed "s/MiniLang/MiniLang$i/g" tests/integration/MiniLang.g >"$OUT/grammars/MiniLang$i.g"
	[ "$i" -le 14 ] && GRAMMARS+=("$OUT/grammars/MiniLang$i.g")
	LONG_GRAMMARS+=("$OUT/grammars/MiniLang$i.g")
done

# program NAME: sets P_JVM (heap options), P_CP, P_ARGS (main class and
# arguments), P_FULL (rounds: mode=full in the first BENCH_FULL_REPS
# rounds; once: the first round only; never: only with BENCH_FULL=all),
# P_ACC (1: the accuracy check's program, with the sample FINE variant),
# P_APP (1: a real application); fails when the program's packages are
# missing
program() {
	P_JVM="-Xmx256m -XX:+UseG1GC" P_CP=$EXCP P_FULL=rounds P_ACC=0 P_APP=0
	case $1 in
	churn) P_ARGS=(example.churn.Server 3000000 20000) ;;
	churn-20M) P_ARGS=(example.churn.Server 20000000 20000) P_FULL=never ;;
	multicache) P_ARGS=(example.multicache.Main 20000 8) ;;
	company) P_ARGS=(example.company.Main 2000 3) ;;
	buggystack) P_ARGS=(example.buggystack.BuggyMain 20000) ;;
	gcstress) P_ARGS=(example.gcstress.Pipeline 200000 8) ;;
	slowleak) P_ARGS=(example.slowleak.Main 400000 20) ;;
	threads) P_ARGS=(example.threads.Main 4 500000) ;;
	antlr3 | antlr3-x14 | antlr3-long)
		[ "$ANTLR_OK" = 1 ] || return 1
		P_CP=$ANTLR_CP P_APP=1
		case $1 in
		antlr3) P_ARGS=(org.antlr.Tool -fo "$OUT/antlr-out" tests/integration/MiniLang.g) ;;
		antlr3-x14) P_ARGS=(org.antlr.Tool -fo "$OUT/antlr-out" "${GRAMMARS[@]}") P_FULL=once P_ACC=1 ;;
		*) P_ARGS=(org.antlr.Tool -fo "$OUT/antlr-out" "${LONG_GRAMMARS[@]}") P_FULL=never P_ACC=1 ;;
		esac ;;
	boxingchurn | cacheleak | emptybloat | listenerleak)
		[ "$RA_OK" = 1 ] || return 1
		P_CP=$OUT/ra:$RA_JARS P_JVM=-Xmx256m P_APP=1 # as tests/realapps/run.sh
		case $1 in
		# 10^7 Longs from Long.valueOf (a JDK site)
		boxingchurn) P_JVM="-Xmx64m -Xmn4m" P_ARGS=(realapps.boxingchurn.BoxingChurn 2 5000000) P_FULL=once P_ACC=1 ;;
		cacheleak) P_ARGS=(realapps.cacheleak.CacheLeak 2 20000) ;;
		emptybloat) P_ARGS=(realapps.emptybloat.EmptyBloat 2 10000) ;;
		listenerleak) P_ARGS=(realapps.listenerleak.ListenerLeak 2 10000) ;;
		esac ;;
	*) echo "bench_agent: unknown program $1" >&2; exit 1 ;;
	esac
	P_JVM+=${JVM_OPTS:+ $JVM_OPTS}
}

# by_site FILE: "site<TAB>type<TAB>count<TAB>est_bytes<TAB>est_count<TAB>samples"
# from allocs/by-site, summed over the rows of one site and type (bci,
# descriptor); absent columns are 0
by_site() {
	"$HEAPFS" cat "$1" allocs/by-site | awk -F'\t' '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ k = $c["site"] "\t" $c["type"]; seen[k] = 1
		  if ("count" in c) n[k] += $c["count"]
		  if ("est_bytes" in c) b[k] += $c["est_bytes"]
		  if ("est_count" in c) e[k] += $c["est_count"]
		  if ("samples" in c) s[k] += $c["samples"] }
		END { for (k in seen) printf "%s\t%.0f\t%.0f\t%.0f\t%.0f\n", k, n[k], b[k], e[k], s[k] }'
}
# interval STATS: the sampling interval in bytes an allocs/stats names
interval() { sed -n 's/.*a mean interval of \([0-9]*\) bytes.*/\1/p' "$1"; }

declare -A LABEL=([plain]="no agent" [jfr]="JFR profile" [sample]="mode=sample" [fine]="sample $FINE"
	[count]="mode=count" [full]="mode=full")
SUMMARY=()
SUMMARY_LONG=()

# one_run DIR VARIANT ROUND: one run; appends to WALL[variant],
# CPU[variant]; keeps what the comparison needs from the trace, then
# deletes it (full's are large).  Fails with the run's error output.
one_run() {
	local d=$1 v=$2 r=$3 a=() TIMEFORMAT='%R %U %S'
	case $v in
	jfr) a=("-XX:StartFlightRecording=settings=profile,filename=$d/jfr.$r.jfr") ;;
	sample) a=("-agentpath:$AGENT=out=$d/sample.$r.htr,mode=sample$SAMPLE_OPTS") ;;
	fine) a=("-agentpath:$AGENT=out=$d/fine.$r.htr,mode=sample,interval=$FINE") ;;
	count) a=("-agentpath:$AGENT=out=$d/count.$r.htr,mode=count,verbose") ;;
	full) a=("-agentpath:$AGENT=out=$d/full.$r.htr,verbose") ;;
	esac
	# shellcheck disable=SC2086
	if ! { time "$JAVA" $P_JVM "${a[@]}" -cp "$P_CP" "${P_ARGS[@]}" </dev/null >"$d/$v.out" 2>"$d/$v.err"; } 2>"$d/time"; then
		echo "bench_agent: $v run of ${P_ARGS[0]} failed: $(tail -n 5 "$d/$v.err")" >&2
		return 1
	fi
	WALL[$v]+=" $(awk '{ printf "%d", $1 * 1000 }' "$d/time")"
	CPU[$v]+=" $(awk '{ printf "%d", ($2 + $3) * 1000 }' "$d/time")"
	N[$v]=$((${N[$v]:-0} + 1))
	case $v in
	jfr) by_site "$d/jfr.$r.jfr" >"$d/jfr.$r.tsv"; rm -f "$d/jfr.$r.jfr" ;;
	sample | fine) by_site "$d/$v.$r.htr" >"$d/$v.$r.tsv"; "$HEAPFS" cat "$d/$v.$r.htr" allocs/stats >"$d/$v.stats"
		rm -f "$d/$v.$r.htr" ;;
	count) by_site "$d/count.$r.htr" >"$d/count.tsv"; "$HEAPFS" cat "$d/count.$r.htr" allocs/stats >"$d/count.stats"
		cp "$d/count.err" "$d/count.last.err"; rm -f "$d/count.$r.htr" ;;
	full) by_site "$d/full.$r.htr" >"$d/full.tsv"; "$HEAPFS" cat "$d/full.$r.htr" allocs/stats >"$d/full.stats"
		cp "$d/full.err" "$d/full.last.err"; rm -f "$d/full.$r.htr" ;;
	esac
}

# compare REF EST INTERVAL: for the top 10 of REF (site type count size
# bytes, by bytes), how many EST (a by_site file) estimates within 10%
# (w10) and within 2 standard deviations of Poisson sampling at INTERVAL
# bytes (w2sd; 0 when INTERVAL is 0), how many of EST's own top 10 over
# REF's sites (estimate > 0) are REF's (top), then the sums over all of
# REF's sites: exact and estimated bytes.  Prints "w10 w2sd top exact est".
compare() {
	awk -F'\t' -v ref="$1" -v I="$3" '
		BEGIN { while ((getline l < ref) > 0) { split(l, f, "\t"); k = f[1] "\t" f[2]; n++; rank[k] = n
				cnt[k] = f[3]; sz[k] = f[4]; ex[k] = f[5]; tot += f[5] } }
		{ k = $1 "\t" $2; if (k in rank) est[k] += $4 }
		END {
			top = n < 10 ? n : 10
			for (k in rank) { e = est[k] + 0; all += e
				if (rank[k] > top) continue
				d = e - ex[k]; if (d < 0) d = -d
				if (d <= 0.1 * ex[k]) w++
				if (I > 0) { p = 1 - exp(-sz[k] / I); if (d <= 2 * ex[k] * sqrt((1 - p) / (cnt[k] * p))) z++ } }
			m = 0; for (k in rank) if (est[k] > 0) { m++; key[m] = k; v[m] = est[k] }
			for (i = 1; i <= top && i <= m; i++) { b = i; for (j = i + 1; j <= m; j++) if (v[j] > v[b]) b = j
				t = key[i]; key[i] = key[b]; key[b] = t; t = v[i]; v[i] = v[b]; v[b] = t
				if (rank[key[i]] <= top) o++ }
			printf "%d %d %d %.0f %.0f\n", w, z, o, tot, all }' "$2"
}
pct() { awk -v e="$1" -v x="$2" 'BEGIN { if (x > 0) printf "%+.1f%%", 100 * (e - x) / x; else printf "-" }'; }

bench_program() {
	local name=$1 d=$OUT/$1 v r i
	program "$name" || { echo; echo "== $name: skipped (its Debian packages are missing)"; return 0; }
	mkdir -p "$d"
	local vars=(plain jfr sample count full) nfull=$FULL_REPS
	[ "$P_ACC" = 1 ] && [ "$FINE" != none ] && vars+=(fine)
	case $FULL:$P_FULL in
	none:* | auto:never) nfull=0 ;;
	all:*) nfull=$REPS ;;
	auto:once) nfull=1 ;;
	esac
	declare -gA WALL=() CPU=() N=()
	local load0 nv=${#vars[@]} t0=$SECONDS
	load0=$(load)
	for r in $(seq 1 "$REPS"); do
		for i in $(seq 0 $((nv - 1))); do
			v=${vars[$(((i + r - 1) % nv))]}
			[ "$v" = full ] && [ "$r" -gt "$nfull" ] && continue
			one_run "$d" "$v" "$r" || { echo; echo "== $name: FAILED ($v run, round $r; above)"; return 0; }
		done
	done
	echo
	echo "== $name: ${P_ARGS[*]##*/} ($P_JVM); $REPS rounds in turns, $((SECONDS - t0)) s; load $load0 before, $(load) after"
	printf '%-13s %4s %9s %6s %9s %6s %6s  %s\n' variant runs wall_ms x cpu_ms x paired "allocations (last run)"
	local bw bc mw mc note ws=() ps=() last
	bw=$(median ${WALL[plain]}) bc=$(median ${CPU[plain]})
	for v in plain jfr sample fine count full; do
		[[ " ${vars[*]} " == *" $v "* ]] || continue
		if [ -z "${N[$v]:-}" ]; then
			printf '%-13s %4s %9s\n' "${LABEL[$v]}" 0 skipped
			ws+=(-)
			ps+=(-)
			continue
		fi
		last=$REPS
		mw=$(median ${WALL[$v]}) mc=$(median ${CPU[$v]})
		case $v in
		plain) note= ;;
		jfr) note="$(awk -F'\t' '{ s += $6; b += $4 } END { printf "%d samples, est %.1f MB", s, b / 1e6 }' "$d/jfr.$last.tsv")" ;;
		sample | fine) note="$(awk -F'\t' '{ s += $6; b += $4; e += $5 } END { printf "%d samples, est %.1f MB, %.0f objects", s, b / 1e6, e }' "$d/$v.$last.tsv")" ;;
		count) note="$(awk -F'\t' '$1 == "allocations" { a = $2 } $1 == "threads_max" { t = $2 } $1 == "exact" { e = $2 }
			END { printf "%s (threads_max %s, exact %s)", a, t, e }' "$d/count.stats")" ;;
		full) note="$(awk -F'\t' '$1 == "allocations" { print $2 " objects" }' "$d/full.stats")" ;;
		esac
		local pw
		pw=$(paired "${WALL[plain]}" "${WALL[$v]}")
		printf '%-13s %4d %9d %6s %9d %6s %6s  %s\n' "${LABEL[$v]}" "${N[$v]}" "$mw" "$(ratio "$mw" "$bw")" "$mc" \
			"$(ratio "$mc" "$bc")" "$pw" "$note"
		ws+=("$(ratio "$mw" "$bw")/$(ratio "$mc" "$bc")")
		ps+=("$pw")
	done
	# mode=full's own accounting: heap walks, writing, waits
	[ -s "$d/full.last.err" ] && sed -n 's/^heapfs-agent: [^:]*: \([0-9]* object ids\).*\( [0-9]* GCs, [0-9]* heap walks ([^)]*)\), \(death flushes [0-9.]* ms, writing [0-9.]* ms\).*/  (mode=full: \1,\2, \3)/p; s/^heapfs-agent: GC calls.*\(allocations waited for walks [0-9]* times, [0-9.]* ms in all\).*/  (mode=full: \1)/p' "$d/full.last.err"

	# ---- do the top sites agree? ----
	cut -f2 "$d/count.tsv" | sort -u | "$JAVA" $P_JVM -cp "$OUT/sizeof:$P_CP" SizeOf >"$d/sizes.tsv"
	# the reference, sites of non-array types: site type count size bytes, by bytes
	awk -F'\t' -v sz="$d/sizes.tsv" 'BEGIN { while ((getline l < sz) > 0) { split(l, f, "\t"); s[f[1]] = f[2] } }
		$3 > 0 && s[$2] != "" && s[$2] != "-" { printf "%s\t%s\t%s\t%s\t%.0f\n", $1, $2, $3, s[$2], $3 * s[$2] }' "$d/count.tsv" |
		sort -t $'\t' -k5,5nr -k1,1 >"$d/ref.tsv"
	local total nref nsites njdk top
	total=$(awk -F'\t' '{ s += $3 } END { printf "%d", s }' "$d/count.tsv")
	nref=$(wc -l <"$d/ref.tsv")
	nsites=$(awk -F'\t' '$3 > 0' "$d/count.tsv" | wc -l)
	njdk=$(awk -F'\t' '$3 > 0 && $1 ~ /^(java|javax|jdk|sun|com\.sun)\./' "$d/count.tsv" | wc -l)
	top=$((nref < 10 ? nref : 10))
	local isamp ifine=0 fullhdr=full
	isamp=$(interval "$d/sample.stats")
	[ -s "$d/fine.stats" ] && ifine=$(interval "$d/fine.stats")
	[ -s "$d/full.tsv" ] || fullhdr=-
	if [ "$njdk" -gt 0 ]; then
		echo "reference: mode=count's exact count x instance size, $total allocations at $nsites sites ($njdk of them in JDK" \
			"classes), last round; the top 10 of its $nref sites of non-array types by bytes:"
	else
		echo "reference: mode=count's exact count x instance size, $total allocations at $nsites sites, last round;" \
			"this mode=count counted no allocation inside JDK methods (jdk=off, or an agent before f3b7f4c: listed below);" \
			"the top 10 of its $nref sites of non-array types by bytes:"
	fi
	printf '%-4s %-52s %-26s %9s %11s %9s | %11s %7s %5s %5s | %11s %7s %4s' rank site type count bytes "$fullhdr" \
		sample err sd% smp jfr err smp
	[ "$ifine" -gt 0 ] && printf ' | %11s %7s %5s %5s' "$FINE" err sd% smp
	echo
	awk -F'\t' 'NR <= 10' "$d/ref.tsv" | awk -F'\t' -v S="$d/sample.$REPS.tsv" -v F="$d/jfr.$REPS.tsv" -v U="$d/full.tsv" \
		-v X="$d/fine.$REPS.tsv" -v I="$isamp" -v IF="$ifine" '
		function err(e, x) { return x > 0 ? sprintf("%+.1f%%", 100 * (e - x) / x) : "-" }
		function sd(n, s, i,   p) { p = 1 - exp(-s / i); return 100 * sqrt((1 - p) / (n * p)) }
		BEGIN {
			while ((getline l < S) > 0) { split(l, f, "\t"); k = f[1] "\t" f[2]; sb[k] = f[4]; se[k] = f[5]; ss[k] = f[6] }
			while ((getline l < F) > 0) { split(l, f, "\t"); k = f[1] "\t" f[2]; jb[k] = f[4]; js[k] = f[6] }
			while ((getline l < U) > 0) { split(l, f, "\t"); k = f[1] "\t" f[2]; fc[k] = f[3] }
			if (IF > 0) while ((getline l < X) > 0) { split(l, f, "\t"); k = f[1] "\t" f[2]; xb[k] = f[4]; xs[k] = f[6] }
		}
		{ k = $1 "\t" $2; n++
		  printf "%-4d %-52s %-26s %9d %11.0f %9s | %11.0f %7s %5.1f %5d | %11.0f %7s %4d", n, substr($1, 1, 52), substr($2, 1, 26),
			$3, $5, (k in fc) ? fc[k] : "-", sb[k], err(sb[k], $5), sd($3, $4, I), ss[k], jb[k], err(jb[k], $5), js[k]
		  if (IF > 0) printf " | %11.0f %7s %5.1f %5d", xb[k], err(xb[k], $5), sd($3, $4, IF), xs[k]
		  printf "\n"
		  # SizeOf against the sizes of the sampled objects (est_bytes / est_count)
		  if (se[k] > 0) { m++; if (sprintf("%.0f", sb[k] / se[k]) != $4) { bad++; badl = badl " " $2 " " $4 "/" sprintf("%.0f", sb[k] / se[k]) } } }
		END { if (m) printf "(instance sizes: SizeOf equals the sampled objects'"'"' size at %d of the %d sites sampled%s)\n", m - bad, m, bad ? ": not at" badl : "" }'
	local sw=() s2=() so=() jw=() jo=() xw=() x2=() xo=() a=()
	local sums_s sums_j sums_x=""
	for r in $(seq 1 "$REPS"); do
		read -r -a a <<<"$(compare "$d/ref.tsv" "$d/sample.$r.tsv" "$isamp")"
		sw+=("${a[0]}") s2+=("${a[1]}") so+=("${a[2]}") sums_s="${a[3]} ${a[4]}"
		read -r -a a <<<"$(compare "$d/ref.tsv" "$d/jfr.$r.tsv" 0)"
		jw+=("${a[0]}") jo+=("${a[2]}") sums_j="${a[3]} ${a[4]}"
		if [ "$ifine" -gt 0 ]; then
			read -r -a a <<<"$(compare "$d/ref.tsv" "$d/fine.$r.tsv" "$ifine")"
			xw+=("${a[0]}") x2+=("${a[1]}") xo+=("${a[2]}") sums_x="${a[3]} ${a[4]}"
		fi
	done
	echo "within 10% (last round; each round): mode=sample ${sw[-1]}/$top (${sw[*]}), JFR ${jw[-1]}/$top (${jw[*]})$(
		[ "$ifine" -gt 0 ] && echo ", sample $FINE ${xw[-1]}/$top (${xw[*]})")"
	echo "within 2 sd of Poisson sampling: mode=sample ${s2[-1]}/$top (${s2[*]})$(
		[ "$ifine" -gt 0 ] && echo ", sample $FINE ${x2[-1]}/$top (${x2[*]})")"
	echo "own top $top (over these sites) in mode=count's: mode=sample ${so[-1]}/$top (${so[*]}), JFR ${jo[-1]}/$top (${jo[*]})$(
		[ "$ifine" -gt 0 ] && echo ", sample $FINE ${xo[-1]}/$top (${xo[*]})")"
	# shellcheck disable=SC2086
	set -- $sums_s
	local exact=$1 line
	line="all $nref sites, last round: exact $(awk -v b="$exact" 'BEGIN { printf "%.1f MB", b / 1e6 }'), mode=sample $(pct "$2" "$exact")"
	# shellcheck disable=SC2086
	set -- $sums_j
	line+=", JFR $(pct "$2" "$exact")"
	if [ -n "$sums_x" ]; then
		# shellcheck disable=SC2086
		set -- $sums_x
		line+=", sample $FINE $(pct "$2" "$exact")"
	fi
	echo "$line"
	# the same over the sites whose objects reach the heap: mode=full's
	# count within 1% of count mode's (the JIT's escape analysis removes
	# the others' objects, which no sampler can see)
	local heap=- hw=() h2=() hx=() htop=0
	if [ -s "$d/full.tsv" ]; then
		awk -F'\t' -v U="$d/full.tsv" 'BEGIN { while ((getline l < U) > 0) { split(l, f, "\t"); fc[f[1] "\t" f[2]] = f[3] } }
			fc[$1 "\t" $2] >= 0.99 * $3' "$d/ref.tsv" >"$d/refheap.tsv"
		htop=$(awk 'END { print (NR < 10 ? NR : 10) }' "$d/refheap.tsv")
		for r in $(seq 1 "$REPS"); do
			read -r -a a <<<"$(compare "$d/refheap.tsv" "$d/sample.$r.tsv" "$isamp")"
			hw+=("${a[0]}") h2+=("${a[1]}")
			if [ "$ifine" -gt 0 ]; then
				read -r -a a <<<"$(compare "$d/refheap.tsv" "$d/fine.$r.tsv" "$ifine")"
				hx+=("${a[0]}")
			fi
		done
		read -r -a a <<<"$(compare "$d/refheap.tsv" "$d/jfr.$REPS.tsv" 0)"
		heap="${hw[-1]}/$htop"
		echo "the top $htop sites whose objects reach the heap (mode=full's count within 1% of count's;" \
			"$(awk -F'\t' -v U="$d/full.tsv" 'BEGIN { while ((getline l < U) > 0) { split(l, f, "\t"); fc[f[1] "\t" f[2]] = f[3] } }
				NR <= 10 && fc[$1 "\t" $2] < 0.99 * $3 { n++ } END { printf "%d", n }' "$d/ref.tsv") of the top $top above are not:" \
			"escape analysis): within 10%: mode=sample ${hw[-1]}/$htop (${hw[*]}), JFR ${a[0]}/$htop$(
			[ "$ifine" -gt 0 ] && echo ", sample $FINE ${hx[-1]}/$htop (${hx[*]})"); within 2 sd: mode=sample ${h2[-1]}/$htop (${h2[*]})"
	fi
	local goal=-
	if [ "$total" -ge 10000000 ] && [ "$top" -gt 0 ]; then
		goal=$([ "${sw[-1]}" = "$top" ] && echo met || echo "not met")
		echo "goal (>= 10^7 allocations: the 10 biggest sites within 10% under mode=sample): $goal" \
			"(${sw[-1]}/$top in the last round; each round ${sw[*]}$([ "$heap" != - ] && echo "; reaching the heap: $heap"))"
	fi

	# array sites: by count (est_count)
	echo "array sites (count mode sees no lengths): top 5 by count, est_count against count"
	printf '%-4s %-52s %-26s %9s %9s | %11s %7s %5s\n' rank site type count "$fullhdr" sample err smp
	awk -F'\t' '$3 > 0 && $2 ~ /\]$/' "$d/count.tsv" | sort -t $'\t' -k3,3nr -k1,1 | awk 'NR <= 5' |
		awk -F'\t' -v S="$d/sample.$REPS.tsv" -v U="$d/full.tsv" '
		BEGIN { while ((getline l < S) > 0) { split(l, f, "\t"); k = f[1] "\t" f[2]; se[k] = f[5]; ss[k] = f[6] }
			while ((getline l < U) > 0) { split(l, f, "\t"); k = f[1] "\t" f[2]; fc[k] = f[3] } }
		{ k = $1 "\t" $2; n++
		  printf "%-4d %-52s %-26s %9d %9s | %11.0f %7s %5d\n", n, substr($1, 1, 52), substr($2, 1, 26), $3,
			(k in fc) ? fc[k] : "-", se[k], sprintf("%+.1f%%", 100 * (se[k] - $3) / $3), ss[k] }'

	# what sample and JFR see that count mode does not
	awk -F'\t' -v C="$d/count.tsv" -v S="$d/sample.$REPS.tsv" -v F="$d/jfr.$REPS.tsv" -v SH="$d/uncounted.share" '
		BEGIN { while ((getline l < C) > 0) { split(l, f, "\t"); if (f[3] > 0) c[f[1] "\t" f[2]] = 1 }
			while ((getline l < S) > 0) { split(l, f, "\t"); k = f[1] "\t" f[2]; st += f[4]; if (!(k in c)) { sb[k] = f[4]; ss[k] = f[6]; su += f[4]; u[k] = 1 } }
			while ((getline l < F) > 0) { split(l, f, "\t"); k = f[1] "\t" f[2]; jt += f[4]; if (!(k in c)) { jb[k] = f[4]; js[k] = f[6]; ju += f[4]; u[k] = 1 } }
			for (k in u) { split(k, f, "\t"); w = f[1] ~ /^(java|javax|jdk|sun|com\.sun)\./ ? "jdk" : f[1] ~ /^</ ? "nosite" : "other"
				printf "%.0f\t%s\t%s\t%.0f\t%d\t%.0f\t%d\t%s\n", sb[k] + jb[k], f[1], f[2], sb[k], ss[k], jb[k], js[k], w }
			printf "%.1f\t%.1f\n", (st > 0 ? 100 * su / st : 0), (jt > 0 ? 100 * ju / jt : 0) > SH }' >"$d/uncounted.tsv"
	echo "sites mode=sample and JFR see that mode=count does not: $(cut -f1 "$d/uncounted.share")% of mode=sample's" \
		"estimated bytes, $(cut -f2 "$d/uncounted.share")% of JFR's; the biggest 6:"
	printf '%-4s %-52s %-26s %11s %5s | %11s %4s  %s\n' rank site type sample smp jfr smp ""
	sort -t $'\t' -k1,1nr -k2,2 "$d/uncounted.tsv" | awk 'NR <= 6' |
		awk -F'\t' '{ n++; printf "%-4d %-52s %-26s %11.0f %5d | %11.0f %4d  %s\n", n, substr($2, 1, 52), substr($3, 1, 26), $4, $5, $6, $7,
			$8 == "jdk" ? "" : $8 == "nosite" ? "(no Java frame)" : "(not a JDK class)" }'
	local fine_w=-
	[ "$ifine" -gt 0 ] && fine_w="${xw[-1]}/$top"
	SUMMARY+=("$(printf '%-13s %11s %11s %11s %11s %11s | %9s %6s %6s %6s %6s %6s %7s' "$name" "${ws[1]}" "${ws[2]}" \
		"$([ "$ifine" -gt 0 ] && echo "${ws[3]}" || echo -)" "${ws[-2]}" "${ws[-1]}" "$total" "${sw[-1]}/$top" \
		"${jw[-1]}/$top" "$fine_w" "$heap" "${so[-1]}/$top" "$goal")")
	# for the goals: name, app, sample wall, count wall, and the same as
	# medians of the per-round ratios
	SUMMARY_LONG+=("$name $P_APP ${ws[2]%/*} ${ws[-2]%/*} ${ps[2]} ${ps[-2]}")
}

# breakdown NAME: where mode=full's time goes, one step per row
# (HEAPFS_AGENT_ABLATE, agent/agent.c: measurement only), BD_REPS rounds
# of every row in turns
breakdown() {
	local name=$1 d=$OUT/bd-$1 r v i t0=$SECONDS load0
	program "$name" || { echo; echo "== where mode=full's time goes, $name: skipped (packages missing)"; return 0; }
	mkdir -p "$d"
	local rows=(plain noalloc events record tags deaths sites graphs)
	declare -A env=([noalloc]=noalloc [events]=events [record]=notag)
	declare -A opts=([noalloc]="graph=none,depth=0,deaths=off" [events]="graph=none,depth=0,deaths=off"
		[record]="graph=none,depth=0,deaths=off" [tags]="graph=none,depth=0,deaths=off" [deaths]="graph=none,depth=0"
		[sites]="graph=none" [graphs]="graph=every")
	declare -A what=([plain]="no agent" [noalloc]="agent loaded, allocation events off"
		[events]="JVMTI posts every allocation, callback returns" [record]="the record: class, clock, buffer, compression"
		[tags]="SetTag (the JVM's tag table)" [deaths]="ObjectFree" [sites]="GetStackTrace, 2 frames (the default)"
		[graphs]="heap walk after every GC (graph=every): mode=full")
	declare -A W=() C=()
	local nr=${#rows[@]} TIMEFORMAT='%R %U %S' a
	load0=$(load)
	for r in $(seq 1 "$BD_REPS"); do
		for i in $(seq 0 $((nr - 1))); do
			v=${rows[$(((i + r - 1) % nr))]}
			a=()
			[ "$v" = plain ] || a=("-agentpath:$AGENT=out=$d/t.htr,verbose,${opts[$v]}")
			# shellcheck disable=SC2086
			if ! { time env ${env[$v]:+HEAPFS_AGENT_ABLATE=${env[$v]}} "$JAVA" $P_JVM "${a[@]}" -cp "$P_CP" "${P_ARGS[@]}" \
				</dev/null >/dev/null 2>"$d/$v.err"; } 2>"$d/time"; then
				echo "bench_agent: breakdown $v of $name failed: $(tail -n 5 "$d/$v.err")" >&2
				return 0
			fi
			W[$v]+=" $(awk '{ printf "%d", $1 * 1000 }' "$d/time")"
			C[$v]+=" $(awk '{ printf "%d", ($2 + $3) * 1000 }' "$d/time")"
			rm -f "$d/t.htr"
		done
	done
	local nobj
	nobj=$(sed -n 's/.*: \([0-9]*\) object ids.*/\1/p' "$d/sites.err")
	echo
	echo "== where mode=full's time goes, $name: ${P_ARGS[*]##*/} ($P_JVM); each row adds one step to the row above;" \
		"$BD_REPS rounds in turns, $((SECONDS - t0)) s; load $load0 before, $(load) after; $nobj objects"
	printf '%-8s %-50s %8s %6s %8s %6s %9s %7s\n' row "what it adds" wall_ms x cpu_ms x step_cpu us/obj
	local bw bc mw mc prev=
	bw=$(median ${W[plain]}) bc=$(median ${C[plain]})
	for v in "${rows[@]}"; do
		mw=$(median ${W[$v]}) mc=$(median ${C[$v]})
		if [ -n "$prev" ]; then
			printf '%-8s %-50s %8d %6s %8d %6s %9d %7s\n' "$v" "${what[$v]}" "$mw" "$(ratio "$mw" "$bw")" "$mc" \
				"$(ratio "$mc" "$bc")" $((mc - prev)) "$(awk -v s=$((mc - prev)) -v n="${nobj:-0}" 'BEGIN { if (n > 0) printf "%.2f", 1000 * s / n; else printf "-" }')"
		else
			printf '%-8s %-50s %8d %6s %8d %6s %9s %7s\n' "$v" "${what[$v]}" "$mw" 1.00 "$mc" 1.00 - -
		fi
		prev=$mc
	done
	sed -n 's/^heapfs-agent: [^:]*: \([0-9]* object ids\).*\( [0-9]* GCs, [0-9]* heap walks ([^)]*)\), \(death flushes [0-9.]* ms, writing [0-9.]* ms\).*/  (graphs row, last run: \1,\2, \3)/p' "$d/graphs.err"
}

T0=$SECONDS
echo "heapfs agent against JFR: $REPS rounds, $(nproc) cores, load $(load), $("$JAVA" -version 2>&1 | head -n 1)," \
	"agent $AGENT"
echo "(x: ratio of the median to the median without the agent, wall and CPU (user + system); paired: the median of each" \
	"round's wall ratio to that round's run without the agent; err: (estimate - exact) /" \
	"exact; sd%: the standard deviation of mode=sample's estimate for that site from Poisson sampling alone;" \
	"smp: samples behind it)"
for p in $PROGRAMS; do bench_program "$p"; done
if [ -n "$BREAKDOWN" ]; then
	for p in $BREAKDOWN; do breakdown "$p"; done
fi
echo
echo "summary: wall/CPU ratios of the medians to no agent; count mode's allocations; of count mode's top 10 sites by bytes, how many" \
	"each estimator has within 10% (last round); heap: mode=sample within 10% over the top sites whose objects reach the heap;" \
	"top10: sample's own top 10 in count's"
printf '%-13s %11s %11s %11s %11s %11s | %9s %6s %6s %6s %6s %6s %7s\n' program JFR sample "sample $FINE" count full allocs \
	sample JFR "$FINE" heap top10 goal
printf '%s\n' "${SUMMARY[@]}"
# the run-time goals
awk '{ n++; if ($3 != "-" && $3 <= 1.05) s++; if ($2 == 1) { a++; if ($4 != "-" && $4 <= 1.3) c++ }
	if ($5 != "-" && $5 <= 1.05) ps++; if ($2 == 1 && $6 != "-" && $6 <= 1.3) pc++ }
	END { printf "goals: mode=sample <= 1.05x wall on %d of %d programs; mode=count <= 1.3x wall on %d of %d real applications\n", s, n, c, a
	      printf "goals, medians of the per-round ratios: mode=sample <= 1.05x on %d of %d; mode=count <= 1.3x on %d of %d\n", ps, n, pc, a }' \
	< <(printf '%s\n' "${SUMMARY_LONG[@]}")
echo "bench_agent: $((SECONDS - T0)) s; load at the end: $(load)"
