#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run test suites and tally them.  Runs inside a vm-run guest (kernel, lib,
# python) and on the host (host), always from the top of the repository.
#
#   tests/guest/run-suites.sh [-t SECS] [-r RESULTS] SUITE...
#
#   SUITE      kernel, lib, host: every executable in build/tests/SUITE/,
#              or SUITE/GLOB: those matching GLOB (kernel/dmabuf*);
#              python: python3 -m unittest discover -s tests/python
#   -t SECS    per-program time limit (default $NPU_MEM_TEST_TIMEOUT or 300)
#   -r FILE    append one line per program to FILE (default
#              $VM_OUTDIR/results.txt in a guest, else
#              build/test-results/results.txt):
#                  <passed> <failed> <skipped> <suite>/<program> <note...>
#              Each program's output goes to logs/<suite>/<program>.log next
#              to FILE, and is printed when the program fails or skips.
#
# Counting: a Check program's "NN%: Checks: C, Failures: F, Errors: E" lines
# give C-F-E passed and F+E failed; exit 77 is one skip (its last output
# line is the reason); any other non-zero exit without failures reported,
# or a timeout, adds one failure; exit 0 without a Check line is one pass.
# unittest: "Ran N tests" and "FAILED (failures=F, errors=E, skipped=S)".
# Last line: "N passed, N failed, N skipped"; exit status 1 if any failed.
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
cd "$TOP" || exit 2

timeout_s=${NPU_MEM_TEST_TIMEOUT:-300}
results=""
while getopts t:r: opt; do
	case $opt in
	t) timeout_s=$OPTARG ;;
	r) results=$OPTARG ;;
	*) sed -n '/^#   tests\/guest/,/^#   -r/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ -z "$results" ]; then
	if [ -n "${VM_OUTDIR:-}" ]; then results=$VM_OUTDIR/results.txt
	else results=$TOP/build/test-results/results.txt; fi
fi
logdir=$(dirname "$results")/logs
mkdir -p "$logdir"
touch "$results"

export LD_LIBRARY_PATH=$TOP/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$TOP/build/python${PYTHONPATH:+:$PYTHONPATH}
# Check's default 4 s per test assumes real hardware; TCG is several times
# slower.  Callers that set it themselves win.
if [ "${VM_RUN:-}" = 1 ]; then export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-5}; fi

# In a guest, mark each program in the kernel log, so a kernel report can be
# pinned on the program that caused it (vm-run fails the guest for it).
REPORT_RE=$(grep -v -e '^#' -e '^$' "$TOP/tests/vm/report-patterns" | paste -sd'|')
kmsg_ok=0
if [ "${VM_RUN:-}" = 1 ] && [ -w /dev/kmsg ]; then kmsg_ok=1; fi
kernel_reports_since() {
	[ "$kmsg_ok" = 1 ] || return 0
	dmesg | awk -v m="$1" -v re="$REPORT_RE" 'index($0, m) { on = 1; next } on && $0 ~ re'
}

tot_p=0 tot_f=0 tot_s=0

# record SUITE/NAME PASSED FAILED SKIPPED NOTE LOG SHOW_LOG
record() {
	local name=$1 p=$2 f=$3 s=$4 note=$5 log=$6 show=$7 word=PASS
	tot_p=$((tot_p + p)) tot_f=$((tot_f + f)) tot_s=$((tot_s + s))
	if [ "$f" -gt 0 ]; then word=FAIL; elif [ "$s" -gt 0 ] && [ "$p" = 0 ]; then word=SKIP; fi
	echo "$p $f $s $name $note" >>"$results"
	if [ "$show" = 1 ]; then
		echo "---- output of $name ----"
		tail -n 200 "$log"
		echo "----"
	fi
	printf '%s %-40s %s passed, %s failed, %s skipped  %s\n' "$word" "$name" "$p" "$f" "$s" "$note"
}

# run_prog SUITE/NAME LOG CMD...: runs CMD with the time limit, output to LOG;
# sets $status and $secs.
run_prog() {
	local name=$1 log=$2 t0
	shift 2
	t0=$(date +%s)
	if [ "$kmsg_ok" = 1 ]; then echo "run-suites: start $name ----" >/dev/kmsg; fi
	# The braces keep bash's own "Segmentation fault" notice out of the way;
	# the note says it instead.
	{ timeout -k 10 "$timeout_s" "$@" >"$log" 2>&1 </dev/null; } 2>/dev/null
	status=$?
	secs=$(($(date +%s) - t0))
}

exit_note() {
	if [ "$status" -gt 128 ] && [ "$status" -lt 160 ]; then
		echo "killed by SIG$(kill -l $((status - 128)))"
	else
		echo "exit status $status"
	fi
}

# A kernel report while the program ran fails it, whatever it says itself.
# Sets $kreport (a note, empty if none) and appends the lines to the log.
check_kernel_reports() {
	local k
	kreport=""
	k=$(kernel_reports_since "run-suites: start $1 ----")
	if [ -n "$k" ]; then
		{ echo "---- kernel reports while $1 ran:"; echo "$k"; } >>"$2"
		kreport="kernel reports in dmesg"
	fi
}

run_check_prog() {
	local prog=$1 suite=$2 name log p=0 f=0 s=0 note show=0 c fl e line
	name=$suite/$(basename "$prog")
	log=$logdir/$name.log
	mkdir -p "$(dirname "$log")"
	run_prog "$name" "$log" "$prog"
	note="(${secs}s)"
	while read -r c fl e; do
		[ -n "$c" ] || continue
		p=$((p + c - fl - e)) f=$((f + fl + e))
	done <<<"$(sed -n 's/^[0-9]*%: Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' "$log")"
	if [ "$status" = 77 ]; then
		p=0 f=0 s=1
		line=$(grep -v '^[[:space:]]*$' "$log" | tail -n1)
		note="skipped: ${line:-no reason given}"
	elif [ "$status" = 124 ] || [ "$status" = 137 ]; then
		f=$((f + 1)) show=1 note="timed out after ${timeout_s}s"
	elif [ "$status" != 0 ]; then
		if [ "$f" = 0 ]; then f=$((f + 1)); fi
		show=1 note="$(exit_note) $note"
	elif ! grep -q '^[0-9]*%: Checks:' "$log"; then
		p=1
	fi
	check_kernel_reports "$name" "$log"
	if [ -n "$kreport" ]; then f=$((f + 1)) note="$kreport $note"; fi
	[ "$f" -gt 0 ] && show=1
	record "$name" "$p" "$f" "$s" "$note" "$log" "$show"
}

run_python() {
	local name=python/unittest log p=0 f=0 s=0 show=0 note ran res n k
	if ! compgen -G "tests/python/test_*.py" >/dev/null; then
		echo "SKIP python: no tests/python/test_*.py"
		return
	fi
	log=$logdir/python/unittest.log
	mkdir -p "$(dirname "$log")"
	run_prog "$name" "$log" python3 -m unittest discover -v -s tests/python
	note="(${secs}s)"
	ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$log" | tail -n1)
	res=$(grep -E '^(OK|FAILED)( \(.*\))?$' "$log" | tail -n1)
	if [ -n "$ran" ]; then
		for k in failures errors skipped 'unexpected successes'; do
			# "[(,] *" so that "expected failures=" is not failures.
			n=$(sed -n "s/.*[(,] *$k=\([0-9]*\).*/\1/p" <<<"$res")
			n=${n:-0}
			case $k in
			skipped) s=$n ;;
			*) f=$((f + n)) ;;
			esac
		done
		p=$((ran - f - s))
		[ "$p" -lt 0 ] && p=0
	fi
	if [ "$status" = 124 ] || [ "$status" = 137 ]; then
		f=$((f + 1)) note="timed out after ${timeout_s}s"
	elif [ "$status" != 0 ] && [ "$f" = 0 ]; then
		f=1 note="$(exit_note) $note"
	fi
	check_kernel_reports "$name" "$log"
	if [ -n "$kreport" ]; then f=$((f + 1)) note="$kreport $note"; fi
	[ "$f" -gt 0 ] && show=1
	record "$name" "$p" "$f" "$s" "$note" "$log" "$show"
}

[ $# -ge 1 ] || { echo "run-suites: no suite given" >&2; exit 2; }
for arg in "$@"; do
	suite=${arg%%/*}
	case $arg in
	python) run_python ;;
	*)
		# SUITE or SUITE/GLOB (e.g. kernel/dmabuf*)
		pat='*'
		if [ "$suite" != "$arg" ]; then pat=${arg#*/}; fi
		dir=build/tests/$suite
		found=0
		for prog in "$dir"/$pat; do
			if [ ! -f "$prog" ] || [ ! -x "$prog" ]; then continue; fi
			found=1
			run_check_prog "$prog" "$suite"
		done
		if [ "$found" = 0 ]; then echo "SKIP $arg: no programs in $dir"; fi
		;;
	esac
done

echo "$tot_p passed, $tot_f failed, $tot_s skipped"
[ "$tot_f" = 0 ]
