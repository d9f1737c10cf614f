#!/usr/bin/env bash
# callers.sh - who calls the methods with one allocation site, on the Debian
# applications of `make bench-agent` (agent/README.md, "Who calls those
# single-site methods").  Counter inlining (inline=on) can only take a
# callee's increment into a caller that has a counter of its own, so this
# splits the path increments of single-site methods by their caller:
#   jdk         a JDK class or a hidden lambda class (not instrumented)
#   no-alloc    an application method without any allocation site (no
#               counter: counting there moves the increment)
#   allocates   an application method with an allocation site somewhere (a
#               generous stand-in for "the call's path has a counter")
# and prints the saving against per-site counting if every "allocates"
# increment went away: what one-level inlining could reach at best.
#
#   bash agent/callers.sh [ant|maven|antlr3 ...]     (default: all three)
#
# Two runs per application: mode=count,inline=on with HEAPFS_AGENT_METHODS
# (increments per method), and mode=full,depth=2 (each allocation with its
# caller, counted by build/tests/agent_count's site-caller lines).  The two
# runs are separate, so the caller split of a method is applied to its
# increments as a proportion.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
${MAKE:-make} -s BUILD="$BUILD" agent "$BUILD/tests/agent_count" >/dev/null
AGENT=$PWD/$BUILD/libheapfs-agent.so
COUNT=$PWD/$BUILD/tests/agent_count
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# run APP OPTS [ENV...]: one run of APP with agent options OPTS
run() {
	local app=$1 opts="-agentpath:$AGENT=$2"
	shift 2
	case $app in
	ant)
		mkdir -p "$OUT/antp/src/p"
		printf 'package p;\npublic class A { public static void main(String[] a) { System.out.println(a.length); } }\n' >"$OUT/antp/src/p/A.java"
		printf '<project name="t" default="all"><target name="all"><mkdir dir="out"/><javac srcdir="src" destdir="out" includeantruntime="false"/><jar destfile="t.jar" basedir="out"/><copy todir="copy"><fileset dir="src"/></copy><delete dir="copy"/></target></project>\n' >"$OUT/antp/build.xml"
		(cd "$OUT/antp" && rm -rf out t.jar && env "$@" ANT_OPTS="$opts" ant -q >/dev/null 2>&1) ;;
	maven)
		mkdir -p "$OUT/mvnp"
		printf '<project><modelVersion>4.0.0</modelVersion><groupId>t</groupId><artifactId>t</artifactId><version>1</version><packaging>pom</packaging></project>\n' >"$OUT/mvnp/pom.xml"
		(cd "$OUT/mvnp" && env "$@" MAVEN_OPTS="$opts" mvn -o -q validate >/dev/null 2>&1) ;;
	antlr3)
		env "$@" java "$opts" -cp /usr/share/java/stringtemplate4.jar:/usr/share/java/antlr3.jar:/usr/share/java/antlr3-runtime.jar \
			org.antlr.Tool -fo "$OUT/antlr3" tests/integration/MiniLang.g >/dev/null 2>&1 ;;
	esac
}

available() {
	case $1 in
	ant) command -v ant >/dev/null ;;
	maven) command -v mvn >/dev/null ;;
	antlr3) [ -r /usr/share/java/antlr3.jar ] && [ -r /usr/share/java/stringtemplate4.jar ] ;;
	*) echo "callers.sh: unknown application '$1' (ant, maven, antlr3)" >&2; exit 2 ;;
	esac
}

printf 'app\tpath_increments\tper_site\tsaving_pct\tsingle_site_pct\tjdk_pct\tno_alloc_pct\tallocates_pct\tbest_one_level_pct\n'
for app in "${@:-ant maven antlr3}"; do
	for a in $app; do
		available "$a" || { echo "callers.sh: $a is not installed, skipped" >&2; continue; }
		run "$a" "out=$OUT/$a-c.htr,mode=count,inline=on" HEAPFS_AGENT_METHODS="$OUT/$a.methods"
		run "$a" "out=$OUT/$a-f.htr,depth=2,graph=none,deaths=off"
		"$COUNT" "$OUT/$a-f.htr" | grep '^site-caller	' >"$OUT/$a.callers"
		awk -F'\t' -v app="$a" '
		function cat(c) {
			if (c == "-" || c ~ /\$\$Lambda/ || c ~ /^(java|javax|jdk|sun|com\.sun)\./) return "jdk"
			return (c in allocating) ? "allocates" : "no-alloc"
		}
		FNR == NR {                     # the methods file: every version of a method
			if ($1 ~ /^#/) next
			sites[$1] = $2; inc[$1] += $4; allocs[$1] += $5
			P += $4; S += $5
			if ($2 >= 1) { n = $1; sub(/\(.*/, "", n); allocating[n] = 1 }
			next
		}
		($2 in sites) && sites[$2] == 1 { by[$2, cat($3)] += $4; tot[$2] += $4 }
		END {
			for (m in sites) if (sites[m] == 1) {
				single += inc[m]
				if (!tot[m]) continue
				split("jdk no-alloc allocates", ks, " ")
				for (i = 1; i <= 3; i++) w[ks[i]] += inc[m] * by[m, ks[i]] / tot[m]
			}
			if (!S) { print app "\tno counts" > "/dev/stderr"; exit 1 }
			printf "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\n", app, P, S, 100 * (1 - P / S),
			       100 * single / P, 100 * w["jdk"] / P, 100 * w["no-alloc"] / P, 100 * w["allocates"] / P,
			       100 * (1 - (P - w["allocates"]) / S)
		}' "$OUT/$a.methods" "$OUT/$a.callers"
	done
done
