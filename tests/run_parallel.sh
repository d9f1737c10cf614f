#!/usr/bin/env bash
# run_parallel.sh - run test commands a few at a time, each one's output
# kept apart and printed whole when it ends, so that a suite's log reads
# as if they had run one after another (make unit, asan, integration).
#
#   bash tests/run_parallel.sh JOBS COMMAND...
#
# Each COMMAND is one word run by `bash -c`; they start in the order given
# (so give the longest first: with two lanes the long ones then overlap
# the many short ones).  After each, its output and "== COMMAND: N s";
# a failing one's output ends with "== COMMAND FAILED (exit N)".  The
# others still run; the exit status is 1 if any failed, and the failures
# are listed again at the end.  JOBS 1 is the plain sequential loop.
#
# Why: one test at a time leaves one of the machines' two cores idle much
# of the time (a JVM starting, a mount settling, a test binary on one
# thread).  Two at a time: the integration suite's tests 591 -> 442 s,
# the TSan tests 195 -> 96 s.  Every test works in its own mktemp
# directory, so two never share a file.
set -u

JOBS=${1:?usage: run_parallel.sh JOBS COMMAND...}
shift
case $JOBS in '' | *[!0-9]* | 0) echo "run_parallel.sh: JOBS must be a positive number, not '$JOBS'" >&2; exit 2 ;; esac

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/heapfs-run.XXXXXX") || exit 2
trap 'rm -rf "$LOGS"' EXIT

declare -A name_of start_of
failed=()
running=0
n=0

# Waits for any one running command, prints its log and time.
reap_one() {
	local pid rc
	wait -n -p pid
	rc=$?
	running=$((running - 1))
	local i=${name_of[$pid]}
	cat "$LOGS/$i.log"
	if [ "$rc" -eq 0 ]; then
		echo "== ${CMDS[$i]}: $(($(date +%s) - start_of[$pid])) s"
	else
		echo "== ${CMDS[$i]} FAILED (exit $rc) after $(($(date +%s) - start_of[$pid])) s"
		failed+=("${CMDS[$i]}")
	fi
}

CMDS=("$@")
for cmd in "${CMDS[@]}"; do
	while [ "$running" -ge "$JOBS" ]; do reap_one; done
	bash -c "$cmd" > "$LOGS/$n.log" 2>&1 < /dev/null &
	name_of[$!]=$n
	start_of[$!]=$(date +%s)
	running=$((running + 1))
	n=$((n + 1))
done
while [ "$running" -gt 0 ]; do reap_one; done

if [ "${#failed[@]}" -gt 0 ]; then
	printf 'FAILED: %s\n' "${failed[@]}"
	exit 1
fi
exit 0
