# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The tally every test runner ends with (sourced by tests/run-all.sh and
# tests/run-arm64.sh): one summary line per part, then the total line
# "N passed, N failed, N skipped" that make check's callers read.

tot_p=0 tot_f=0 tot_s=0
summary=() details=()

# add LABEL PASSED FAILED SKIPPED [NOTE]
add() {
	tot_p=$((tot_p + $2)) tot_f=$((tot_f + $3)) tot_s=$((tot_s + $4))
	summary+=("$(printf '%-40s %3d passed, %3d failed, %3d skipped  %s' "$1" "$2" "$3" "$4" "${5:-}")")
}

# Sum of a run-suites results file: "passed failed skipped".
tally() {
	awk '{ p += $1; f += $2; s += $3 } END { printf "%d %d %d\n", p, f, s }' "$1" 2>/dev/null ||
		echo "0 0 0"
}

# failures LABEL OUTDIR: under the summary, what failed in a guest's run:
# its failing programs and their failing checks, and what the kernel
# reported (vm-run's reports.txt), so that a failure can be told from the
# summary alone.
failures() {
	local f="" line log last
	# each failing program, then its own words: Check's F:/E: lines, else
	# its last lines (a crash, a timeout, a script's message)
	while read -r line; do
		f+=${f:+$'\n'}"  $1: $line"
		log=$2/logs/$(awk '{ print $4 }' <<<"$line").log
		[ -s "$log" ] || continue
		f+=$'\n'$({ grep -E '^[^ ]+:[0-9]+:[EF]:' "$log" || tail -n 5 "$log"; } |
			head -n 8 | cut -c 1-400 | sed 's/^/    /')
	done < <(awk '$2 > 0' "$2/results.txt" 2>/dev/null | head -n 10)
	# a guest that ended (time limit, crash) while a program ran: which
	# one, from its start marker with no result line after it
	last=$(grep -o 'run-suites: start [^ ]*' "$2/console.log" 2>/dev/null |
		tail -n 1 | cut -d ' ' -f 3)
	if [ -n "$last" ] &&
		! awk -v p="$last" '$4 == p { n++ } END { exit !n }' "$2/results.txt" 2>/dev/null; then
		f+=${f:+$'\n'}"  $1: the guest ended while $last ran"
	fi
	if [ -s "$2/reports.txt" ]; then
		f+=${f:+$'\n'}"  $1: the kernel reported, $(head -n 1 "$2/reports.txt") running:"
		f+=$'\n'$(sed -n '2,/^---- context$/{/^---- context$/!p}' "$2/reports.txt" |
			head -n 12 | sed 's/^/    /')
		f+=$'\n'$(sed -n '/^---- context$/,$p' "$2/reports.txt" |
			tail -n +2 | head -n 40 | sed 's/^/      /')
	fi
	[ -z "$f" ] || details+=("$f")
}

# summary_print TITLE: the lines added, what failed, then the total.
summary_print() {
	printf '\n==== summary%s ====\n' "${1:+ ($1)}"
	printf '%s\n' "${summary[@]}"
	if [ "${#details[@]}" -gt 0 ]; then
		echo "---- what failed ----"
		printf '%s\n' "${details[@]}"
	fi
	echo "$tot_p passed, $tot_f failed, $tot_s skipped"
}
