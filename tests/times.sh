#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Where a run of tests/run-all.sh spent its time, from its results
# (build/test-results/run-all/): each guest's seconds, then each program's
# seconds in every guest that ran it and in all of them together, largest
# first, as Markdown tables for doc/testing.md.
#
#   tests/times.sh [RESULTS_DIR] [TOP_N]    (default: all programs)
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
RES=${1:-$TOP/build/test-results/run-all}
top_n=${2:-0}
[ -d "$RES" ] || { echo "no results in $RES (make check first)" >&2; exit 1; }

echo "| guest | seconds | passed | failed | skipped |"
echo "|---|---:|---:|---:|---:|"
for d in "$RES"/*/; do
	r=$d/.vm-run/result
	[ -r "$r" ] || continue
	t=$(sed -n 's/.* time=\([0-9.]*\)s.*/\1/p' "$r")
	read -r p f s < <(awk '{ p += $1; f += $2; s += $3 } END { print p + 0, f + 0, s + 0 }' \
		"$d/results.txt" 2>/dev/null)
	printf '| %s | %.0f | %s | %s | %s |\n' "$(basename "$d")" "$t" "${p:-0}" "${f:-0}" "${s:-0}"
done

echo
echo "| program | seconds in all | runs | each guest's seconds |"
echo "|---|---:|---:|---|"
for f in "$RES"/*/results.txt; do
	g=$(basename "$(dirname "$f")")
	# "<p> <f> <s> <suite/program> ... (Ns)": the last "(Ns)" is its time.
	sed -n 's/^[0-9]* [0-9]* [0-9]* \([^ ]*\) .*(\([0-9]*\)s).*/\1 \2/p' "$f" |
		while read -r prog secs; do echo "$prog $secs $g"; done
done | awk '
	{ tot[$1] += $2; n[$1]++; each[$1] = each[$1] (each[$1] ? ", " : "") $3 " " $2 }
	END { for (p in tot) printf "%d\t| %s | %d | %d | %s |\n", tot[p], p, tot[p], n[p], each[p] }' |
	sort -rn | cut -f2- | if [ "$top_n" -gt 0 ]; then head -n "$top_n"; else cat; fi
