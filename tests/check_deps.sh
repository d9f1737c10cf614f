#!/usr/bin/env bash
# check_deps.sh - dependencies run one way: fs -> analyses -> model, with
# mountopts beside fs (fs uses it, never the reverse) and agent on model
# alone.  Reads every #include "..." of the modules' .c and .h files and
# fails on one that reaches a module above its own (an include of the same
# folder is always fine).  With every include going down, no circle can
# cross modules.
#
# Usage: bash tests/check_deps.sh   (from anywhere; make test runs it)
set -euo pipefail
cd "$(dirname "$0")/.."

# What each module may include besides itself.
allowed() {
	case $1 in
	model) echo "" ;;
	analyses) echo "model" ;;
	mountopts) echo "model analyses" ;;
	agent) echo "model" ;;
	fs) echo "model analyses mountopts" ;;
	esac
}

bad=0 n=0
for mod in model analyses mountopts agent fs; do
	ok_mods=$(allowed "$mod")
	for f in "$mod"/*.c "$mod"/*.h; do
		[ -e "$f" ] || continue
		while IFS= read -r inc; do
			n=$((n + 1))
			case $inc in
			*/*) target=${inc%%/*} ;;
			*) continue ;; # same folder
			esac
			[ "$target" = "$mod" ] && continue
			case " $ok_mods " in
			*" $target "*) continue ;;
			esac
			echo "check_deps: $f includes \"$inc\": $mod may not depend on $target" >&2
			bad=$((bad + 1))
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done
done
if [ "$bad" -ne 0 ]; then
	echo "check_deps: $bad upward includes" >&2
	exit 1
fi
echo "check_deps: $n includes, all one way (fs -> analyses -> model; mountopts beside fs; agent on model)"
