# mountlib.bash - helpers for the FUSE integration tests (sourced, not run:
# the Makefile runs tests/integration/*.sh only).
#
# Every test gets a mktemp work directory, every mount is recorded and
# unmounted by the EXIT trap even when the test fails, and every step that
# could hang runs under `timeout`.

set -euo pipefail

: "${HEAPFS:?set HEAPFS to the absolute path of build/heapfs}"
STEP_TIMEOUT=${STEP_TIMEOUT:-60}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/heapfs-it.XXXXXX")
MOUNTS=()
BG_PIDS=()
DAEMON_LOGS=()

cleanup() {
	local rc=$?
	set +e
	# a failed test shows what its daemons said, and how they ended
	if [ "$rc" -ne 0 ]; then
		for l in "${DAEMON_LOGS[@]}"; do
			[ -s "$l" ] && { echo "--- ${l##*/}:"; tail -n 20 "$l"; } >&2
		done
	fi
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for m in "${MOUNTS[@]}"; do
		if mountpoint -q "$m"; then
			timeout 20 fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null
		fi
	done
	# --one-file-system: never descend into a mount that failed to go away
	rm -rf --one-file-system "$WORK" 2>/dev/null
	if [ "$rc" -eq 0 ]; then echo "PASS: ${0##*/}"; else echo "FAIL: ${0##*/} (exit $rc)"; fi
	exit "$rc"
}
trap cleanup EXIT

fail() { echo "not ok - $*" >&2; exit 1; }
ok() { echo "ok - $*"; }

# Runs a command bounded in time.
t() { timeout "$STEP_TIMEOUT" "$@"; }

# wait_mounted DIR [PID [WHAT]]: until DIR is a mount point (at most
# ~20 s); with PID, failing as soon as that process (the mounting heapfs)
# is gone, WHAT saying why.
wait_mounted() {
	local i
	for i in $(seq 1 200); do
		mountpoint -q "$1" && return 0
		[ -z "${2:-}" ] || kill -0 "$2" 2>/dev/null || fail "mount on $1 failed: ${3:-}"
		sleep 0.1
	done
	fail "$1 did not become a mount point"
}

# mount_trace TRACE DIR [heapfs options...]: a mount in the background of
# this shell, waited for.  It runs in the foreground (-f) so that its
# stderr, and how it ended (a signal, an exit status), land in a log that
# a failing test prints: a daemonized heapfs has its stderr on /dev/null.
# mount_trace_daemon mounts as users do.
mount_trace() {
	local trace=$1 dir=$2
	shift 2
	local log=$WORK/daemon-${#DAEMON_LOGS[@]}.log
	DAEMON_LOGS+=("$log")
	mkdir -p "$dir"
	MOUNTS+=("$dir")
	{
		"$HEAPFS" -f "$@" "$trace" "$dir"
		echo "heapfs on $dir ended: exit status $? (128 + N: signal N)"
	} 2>>"$log" >>"$log" &
	BG_PIDS+=($!)
	wait_mounted "$dir" $! "see $log"
}

# mount_trace_daemon TRACE DIR [heapfs options...]: heapfs daemonizes and
# its exit status says whether the mount worked.
mount_trace_daemon() {
	local trace=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	MOUNTS+=("$dir")
	t "$HEAPFS" "$@" "$trace" "$dir" || fail "mount of $trace on $dir failed (exit $?)"
	wait_mounted "$dir"
}

# mount_trace_fg TRACE DIR LOG [options...]: foreground (-f) mount in the
# background of this shell, stderr to LOG.
mount_trace_fg() {
	local trace=$1 dir=$2 log=$3
	shift 3
	mkdir -p "$dir"
	MOUNTS+=("$dir")
	"$HEAPFS" -f "$@" "$trace" "$dir" 2>"$log" &
	BG_PIDS+=($!)
	wait_mounted "$dir"
}

unmount() {
	t fusermount3 -u "$1" || fail "fusermount3 -u $1 failed"
	local i
	for i in $(seq 1 100); do
		mountpoint -q "$1" || return 0
		sleep 0.1
	done
	fail "$1 still mounted after fusermount3 -u"
}

# status_value MNT KEY: a key of the status file.
status_value() {
	t awk -F'\t' -v k="$2" '$1 == k { print $2; exit }' "$1/status"
}

# same_bytes A B WHAT: byte-identical files or fail.
same_bytes() {
	cmp -s "$1" "$2" || fail "$3: bytes differ ($(wc -c <"$1") vs $(wc -c <"$2"))"
}

# make_trace OUT [synth args...]: a synthetic trace.
make_trace() {
	local out=$1
	shift
	t "$HEAPFS" synth "$@" -o "$out" >/dev/null || fail "heapfs synth $* failed"
	[ -s "$out" ] || fail "heapfs synth wrote nothing"
}
