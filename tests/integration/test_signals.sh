#!/usr/bin/env bash
# test_signals.sh - signals to readers and to the daemon.
#
# A reader interrupted in the middle of a slow read (Ctrl-C, timeout -s
# INT) gets its read interrupted and dies at once; the daemon goes on
# serving, and the computation it abandoned finishes into the cache.  Before
# heapfs polled fuse_interrupted(), the first such interrupt killed the
# daemon with SIGUSR1 and left "Transport endpoint is not connected".
# SIGTERM, SIGINT and SIGHUP to the daemon unmount cleanly, even while a
# computation runs, and even when the mount point was given as a relative
# path (the daemon leaves its working directory).
#
# Usage: HEAPFS=/abs/path/build/heapfs bash tests/integration/test_signals.sh
. "$(dirname "$0")/mountlib.bash"

TRACE=$WORK/big.htr
make_trace "$TRACE" multicache -n 1000000 -g 30
MNT=$WORK/mnt
mount_trace_daemon "$TRACE" "$MNT"
DPID=$(pgrep -f -- "$HEAPFS $TRACE $MNT" | head -n 1)
[ -n "$DPID" ] || fail "no daemon"

# suspects on 10^6 objects takes seconds: each reader is interrupted
# after 1 s, ten times; each must end within a second of its signal.
for i in $(seq 1 10); do
	s=$(date +%s%N)
	rc=0
	timeout -s INT 1 cat "$MNT/suspects" >/dev/null 2>&1 || rc=$?
	ms=$((($(date +%s%N) - s) / 1000000))
	[ "$ms" -lt 2500 ] || fail "interrupted reader $i took $ms ms to end"
	kill -0 "$DPID" 2>/dev/null || fail "the daemon died after interrupt $i"
	[ "$rc" = 124 ] || [ "$rc" = 0 ] || fail "reader $i: exit $rc"
done
t ls "$MNT/gc" >/dev/null || fail "ls gc after the interrupts"
ok "ten interrupted readers of suspects, daemon alive, ls gc works"

t cat "$MNT/suspects" >"$WORK/suspects.mnt" || fail "cat suspects after the interrupts"
t "$HEAPFS" cat "$TRACE" suspects >"$WORK/suspects.ref" || fail "heapfs cat suspects"
same_bytes "$WORK/suspects.mnt" "$WORK/suspects.ref" "suspects after interrupts"
[ "$(status_value "$MNT" reads_interrupted)" -ge 1 ] || fail "status counts no interrupted read"
ok "suspects whole after the interrupts ($(wc -l <"$WORK/suspects.ref") lines)"

# Interrupted listings and reads of many kinds, then the tree read whole.
for f in gc/030/dominators/top gc/029/by-type/table gc/028/roots/table timeline/gcs.csv; do
	timeout -s INT 0.2 cat "$MNT/$f" >/dev/null 2>&1 || true
	timeout -s INT 0.2 ls "$MNT/gc/027/by-type" >/dev/null 2>&1 || true
done
kill -0 "$DPID" 2>/dev/null || fail "the daemon died after interrupted reads and listings"
for f in gc/030/dominators/top gc/029/by-type/table gc/028/roots/table timeline/gcs.csv; do
	t cat "$MNT/$f" >"$WORK/a" || fail "cat $f"
	t "$HEAPFS" cat "$TRACE" "$f" >"$WORK/b" || fail "heapfs cat $f"
	same_bytes "$WORK/a" "$WORK/b" "$f after interrupts"
done
ok "interrupted reads and listings of other files: bytes right afterwards"
unmount "$MNT"

# Signals to the daemon: a clean unmount while a computation runs.  The
# mount point is relative, from another directory than the daemon ends in.
cd "$WORK"
for sig in TERM INT HUP; do
	t "$HEAPFS" "$TRACE" mnt || fail "mount for SIG$sig"
	MOUNTS+=("$WORK/mnt")
	pid=$(pgrep -f -- "$HEAPFS $TRACE mnt" | head -n 1)
	cat mnt/gc/015/dominators/top >/dev/null 2>&1 &
	sleep 0.5
	kill -"$sig" "$pid"
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	! kill -0 "$pid" 2>/dev/null || fail "daemon alive 10 s after SIG$sig"
	! mountpoint -q mnt || fail "still mounted after SIG$sig"
	ls mnt >/dev/null 2>&1 || fail "mount point broken after SIG$sig (not unmounted)"
	wait || true
	ok "SIG$sig to the daemon: unmounted cleanly"
done
