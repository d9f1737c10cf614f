#!/usr/bin/env bash
# The roles issue's acceptance on a real JVM: a recorded run of the Company
# program gives, inside the Company's transitive closure, the same roles per
# type as the synthetic company scenario (which follows the paper's
# Listing 1).  Objects outside the closure (the JDK's own HashSets and
# ArrayLists) are left out on both sides.  The recorded GC compared is the
# last with a graph that holds the Company.  A GC whose successor starts
# before the agent's walk gets no graph (agent/README.md), and the program
# calls System.gc() in a loop, so on a loaded machine only the last GC may
# have one, walked after main has returned; Main keeps the Company in a
# static field for that walk.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HEAPFS=${HEAPFS:-$PWD/$BUILD/heapfs}
${MAKE:-make} -s BUILD="$BUILD" agent examples-classes >/dev/null
AGENT=$PWD/$BUILD/libheapfs-agent.so
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

java -Xmx128m "-agentpath:$AGENT=out=$TMP/rec.htr,graph=every" -cp "$BUILD/examples/classes" \
	example.company.Main 400 5 >"$TMP/rec.out"
"$HEAPFS" synth company -n 400 -o "$TMP/syn.htr" >/dev/null

roles_in_closure() { # TRACE GC
	local ty
	for ty in example.company.Company example.company.Department example.company.Employee \
		java.util.ArrayList java.util.LinkedList 'java.util.LinkedList$Node' java.util.HashSet \
		java.util.HashMap 'java.util.HashMap$Node[]' java.lang.String; do
		printf '%s\t%s\n' "$ty" "$("$HEAPFS" cat "$1" \
			"gc/$2/by-type/example.company.Company/closure/transitive/by-type/$ty/by-role/table" |
			awk -F'\t' 'NR > 1 { print $1 }' | sort | tr '\n' ' ')"
	done
}
chosen=
for g in $("$HEAPFS" ls "$TMP/rec.htr" gc | grep -v latest | sort -r); do
	# (files read whole first: grep -q would close the pipe early, and
	# pipefail would take heapfs's SIGPIPE for a failure)
	info=$("$HEAPFS" cat "$TMP/rec.htr" "gc/$g/info")
	types=$("$HEAPFS" cat "$TMP/rec.htr" "gc/$g/by-type/table")
	if grep -q $'^graph\tyes' <<<"$info" && grep -q $'^example.company.Company\t' <<<"$types"; then
		chosen=$g
		break
	fi
done
[ -n "$chosen" ] || fail "no recorded GC with a graph holds the Company: $("$HEAPFS" cat "$TMP/rec.htr" gc/latest/info)"
roles_in_closure "$TMP/syn.htr" latest >"$TMP/syn.roles"
roles_in_closure "$TMP/rec.htr" "$chosen" >"$TMP/rec.roles"
grep -q $'^example.company.Company\tcontainer mcontainer $' "$TMP/syn.roles" || fail "synthetic Company roles: $(cat "$TMP/syn.roles")"
diff "$TMP/syn.roles" "$TMP/rec.roles" >"$TMP/diff" || fail "recorded roles differ from the synthetic ones: $(cat "$TMP/diff")"
echo "ok: recorded Company run (GC $chosen) has the synthetic scenario's roles for all $(wc -l <"$TMP/syn.roles") types"
echo "PASS: test_agent_roles.sh"
