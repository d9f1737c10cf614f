#!/usr/bin/env bash
# test_writes.sh - writes fail at write(), are all or nothing, and never
# commit a cut line; shells' truncate-then-write defines a classifier with
# no error; a classifier written again never answers with the old bytes.
#
# Before: errors came only at close() (`echo 999999999 >> members` exited
# 0), a line cut by the 1 MiB cap was committed as another object, and
# `echo EXPR > classifiers/NAME` logged "empty definition" (bash's early
# close of the O_TRUNC descriptor was committed as an empty definition).
#
# Usage: HEAPFS=/abs/path/build/heapfs bash tests/integration/test_writes.sh
. "$(dirname "$0")/mountlib.bash"

TRACE=$WORK/T.htr
make_trace "$TRACE" multicache -n 2000 -g 5
MNT=$WORK/mnt
mount_trace "$TRACE" "$MNT"

# --- classifiers/NAME
echo 'size > 20' >"$MNT/classifiers/big" || fail "echo EXPR > classifiers/big failed"
[ ! -s "$MNT/classifiers/errors" ] || fail "a good definition logged: $(cat "$MNT/classifiers/errors")"
[ "$(cat "$MNT/classifiers/big")" = 'size > 20' ] || fail "definition text"
ok "echo EXPR > classifiers/NAME: defined, nothing logged"

# The counts of a filter come from the objects' sizes (heapfs cat gives the
# sizes independently of the classifier: gc/latest/by-size is predefined).
n20=$(t cat "$MNT/gc/latest/only-big/count")
echo 'size > 1000000' >"$MNT/classifiers/big"
n_big=$(t cat "$MNT/gc/latest/only-big/count")
[ "$n_big" = 0 ] || fail "only-big/count after redefinition: $n_big, want 0 (was $n20: old bytes?)"
echo 'size > 20' >"$MNT/classifiers/big"
[ "$(t cat "$MNT/gc/latest/only-big/count")" = "$n20" ] || fail "only-big/count back to the first definition"
ok "a classifier written again: only-big/count $n20, 0, $n20"

if echo 'size >> 3' >"$MNT/classifiers/big" 2>"$WORK/err"; then
	fail "a bad definition was accepted by write()"
fi
grep -q 'Invalid argument' "$WORK/err" || fail "the shell did not see EINVAL: $(cat "$WORK/err")"
[ "$(cat "$MNT/classifiers/big")" = 'size > 20' ] || fail "a refused write changed the definition"
grep -q 'column 7' "$MNT/classifiers/errors" || fail "errors lacks the refusal"
! grep -q 'empty definition' "$MNT/classifiers/errors" || fail "a refused write committed an empty definition"
ok "a bad definition fails at write() (EINVAL), the old one stays"

# A definition split over several writes is complete only at the end.
python3 - "$MNT/classifiers/split" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
for part in (b"size ", b"> ", b"20\n"):
    os.write(fd, part)
os.close(fd)
EOF
[ "$(t cat "$MNT/gc/latest/only-split/count")" = "$n20" ] || fail "definition written in three parts"
ok "a definition written in three writes"

# cp stats the file it created before writing: the tree has not seen it
# yet, the mount must (before: "cp: cannot fstat", nothing defined).
echo 'size > 20' >"$WORK/good.def"
t cp "$WORK/good.def" "$MNT/classifiers/copied" || fail "cp of a good definition failed"
[ "$(t cat "$MNT/gc/latest/only-copied/count")" = "$n20" ] || fail "copied definition not in effect"
echo 'if size > 100 than "big" else "small"' >"$WORK/bad.def"
t cp "$WORK/bad.def" "$MNT/classifiers/copied2" 2>"$WORK/err" && fail "cp of a bad definition succeeded"
grep -q "error writing.*Invalid argument" "$WORK/err" || fail "cp did not fail at write: $(cat "$WORK/err")"
[ ! -e "$MNT/classifiers/copied2" ] || fail "a refused new definition left a file"
ok "cp of a definition to a new file: defined; a bad one fails at write"

# --- groups/NAME/members
mkdir "$MNT/groups/g"
if echo 999999999 >>"$MNT/groups/g/members" 2>"$WORK/err"; then
	fail "echo 999999999 >> members exited 0"
fi
grep -q 'Invalid argument' "$WORK/err" || fail "no EINVAL for a bad member: $(cat "$WORK/err")"
[ ! -s "$MNT/groups/g/members" ] || fail "a refused member was committed"
ok "a bad member fails at write()"

id=$(t head -n 1 "$MNT/gc/latest/objects/all")
id2=$(t sed -n 2p "$MNT/gc/latest/objects/all")
echo "$id" >>"$MNT/groups/g/members" || fail "a good member refused"
[ "$(cat "$MNT/groups/g/count")" = 1 ] || fail "count after one member"
# one write() of two lines (python: the shell's printf may write twice)
python3 - "$MNT/groups/g/members" "$id2" <<'EOF' && fail "a write with a bad line accepted"
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
try:
    os.write(fd, (sys.argv[2] + "\n999999999\n").encode())
except OSError:
    sys.exit(1)
EOF
[ "$(cat "$MNT/groups/g/count")" = 1 ] || fail "a refused write committed part of its lines"
ok "a write with one bad line commits none of its lines"

# 600,000 lines of "ID\n" are more than the 1 MiB cap: the write that
# crosses it fails, and the line it cut is not committed.  Every complete
# line names $id2; a cut one would name a prefix of it (another object).
yes "$id2" | head -n 600000 >>"$MNT/groups/g/members" 2>/dev/null && fail "1 MiB cap not enforced"
sort -u "$MNT/groups/g/members" | grep -vxF -e "$id" -e "$id2" && fail "a cut line was committed"
[ "$(cat "$MNT/groups/g/count")" = 2 ] || fail "count after the capped append: $(cat "$MNT/groups/g/count")"
ok "the write past the cap fails, no cut line committed (count 2)"
unmount "$MNT"
