#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs shellcheck on every shell script of the tree: the *.sh files and the
# files whose first line runs sh or bash.  Clean means no finding at all
# (style included); a finding that is meant carries a disable directive
# with its reason, next to the code.  Prints "N passed, N failed, 0
# skipped" (one per script) for tests/run-all.sh.
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$TOP" || exit 1
command -v shellcheck >/dev/null || {
	echo "shellcheck: not installed (scripts/deps.sh installs it)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}

scripts=()
while IFS= read -r f; do
	case $f in
	*.sh) scripts+=("$f") ;;
	*) head -n1 "$f" 2>/dev/null | grep -qE '^#!.*/(env +)?(ba)?sh( |$)' &&
		scripts+=("$f") ;;
	esac
done < <(git ls-files 2>/dev/null || find . -type f -not -path './build/*' -not -path './.git/*')

pass=0 fail=0
for f in "${scripts[@]}"; do
	# -x: follow what the scripts source, as they name it.
	if out=$(shellcheck -x "$f" 2>&1); then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		printf '%s\n' "$out"
	fi
done
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
