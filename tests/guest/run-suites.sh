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
#              !SUITE/GLOB anywhere leaves those programs out of every
#              SUITE argument (kernel '!kernel/dmabuf*');
#              examples: every program in build/examples/ (they exit
#              non-zero when a step fails);
#              python: python3 -m unittest discover -s tests/python
#   -t SECS    per-program time limit (default $NPU_MEM_TEST_TIMEOUT or 300)
#   -r FILE    append one line per program to FILE (default
#              $VM_OUTDIR/results.txt in a guest, else
#              build/test-results/results.txt):
#                  <passed> <failed> <skipped> <suite>/<program> <note...>
#              Each program's output goes to logs/<suite>/<program>.log next
#              to FILE, and is printed when the program fails.
#
# Counting: a Check program's "NN%: Checks: C, Failures: F, Errors: E" lines
# give C-F-E passed and F+E failed, less one pass per "NM-SKIP: " line (a
# test that could not run its assertion: nm_skip()), which counts as a
# skip; exit 77 is one skip (its last output
# line is the reason); any other non-zero exit without failures reported,
# or a timeout, adds one failure; exit 0 without a Check line is one pass.
# unittest: "Ran N tests" and "FAILED (failures=F, errors=E, skipped=S)".
# In a guest, a kernel report (tests/vm/report-patterns) in dmesg while a
# program ran adds one failure to it.
# Last line: "N passed, N failed, N skipped"; exit status 1 if any failed.
#
# Under TCG every exec costs a lot (a fraction of a second on a busy host),
# so the per-program path uses shell builtins wherever it can.
set -uo pipefail

self=$(readlink -f "$0")
TOP=${self%/tests/guest/*}
cd "$TOP" || exit 2

timeout_s=${NPU_MEM_TEST_TIMEOUT:-300}
results=""
while getopts t:r: opt; do
	case $opt in
	t) timeout_s=$OPTARG ;;
	r) results=$OPTARG ;;
	*) sed -n '/^#   tests\/guest/,/^#   -r/s/^# \{0,1\}//p' "$self" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ -z "$results" ]; then
	if [ -n "${VM_OUTDIR:-}" ]; then results=$VM_OUTDIR/results.txt
	else results=$TOP/build/test-results/results.txt; fi
fi
logdir=${results%/*}/logs
mkdir -p "$logdir"
: >>"$results"

export LD_LIBRARY_PATH=$TOP/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$TOP/build/python${PYTHONPATH:+:$PYTHONPATH}
# Check's default 4 s per test assumes real hardware; TCG is several times
# slower.  Callers that set it themselves win.
if [ "${VM_RUN:-}" = 1 ]; then export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-5}; fi

# In a guest, mark each program in the kernel log, so that a kernel report
# is pinned on the program that caused it (vm-run fails the guest for it).
REPORT_RE=""
while read -r line; do
	case $line in '#'* | '') continue ;; esac
	REPORT_RE+=${REPORT_RE:+|}$line
done <"$TOP/tests/vm/report-patterns"
kmsg_ok=0
if [ "${VM_RUN:-}" = 1 ] && [ -w /dev/kmsg ]; then kmsg_ok=1; fi

tot_p=0 tot_f=0 tot_s=0

# record NAME PASSED FAILED SKIPPED NOTE LOG
record() {
	local name=$1 p=$2 f=$3 s=$4 note=$5 log=$6 word=PASS
	tot_p=$((tot_p + p)) tot_f=$((tot_f + f)) tot_s=$((tot_s + s))
	if [ "$f" -gt 0 ]; then word=FAIL; elif [ "$s" -gt 0 ] && [ "$p" = 0 ]; then word=SKIP; fi
	echo "$p $f $s $name $note" >>"$results"
	if [ "$f" -gt 0 ]; then
		echo "---- output of $name ----"
		tail -n 200 "$log"
		echo "----"
	fi
	printf '%s %-40s %s passed, %s failed, %s skipped  %s\n' "$word" "$name" "$p" "$f" "$s" "$note"
}

# run_prog NAME LOG CMD...: CMD with the time limit, output to LOG.  Sets
# $status, $secs, and $note for a timeout or a death by signal.
run_prog() {
	local name=$1 log=$2 t0=$SECONDS
	shift 2
	if [ "$kmsg_ok" = 1 ]; then echo "run-suites: start $name ----" >/dev/kmsg; fi
	# The braces keep bash's own "Segmentation fault" notice out of the way;
	# the note says it instead.
	{ timeout -k 10 "$timeout_s" "$@" >"$log" 2>&1 </dev/null; } 2>/dev/null
	status=$?
	secs=$((SECONDS - t0))
	note="(${secs}s)"
	if [ "$status" = 124 ] || [ "$status" = 137 ]; then
		note="timed out after ${timeout_s}s"
	elif [ "$status" -gt 128 ] && [ "$status" -lt 160 ]; then
		note="killed by SIG$(kill -l $((status - 128))) $note"
	elif [ "$status" != 0 ] && [ "$status" != 77 ]; then
		note="exit status $status $note"
	fi
}

# kernel_reports NAME LOG: in a guest, fail NAME (sets $kreport) if the
# kernel reported problems since its marker; the lines go to LOG.
kernel_reports() {
	local k
	kreport=""
	[ "$kmsg_ok" = 1 ] || return 0
	k=$(dmesg | awk -v m="run-suites: start $1 ----" -v re="$REPORT_RE" \
		'index($0, m) { on = 1; next } on && $0 ~ re')
	if [ -n "$k" ]; then
		printf -- '---- kernel reports while %s ran:\n%s\n' "$1" "$k" >>"$2"
		kreport="kernel reports in dmesg"
	fi
}

run_check_prog() {
	local prog=$1 suite=$2 name log p=0 f=0 s=0 checks=0 line last=""
	name=$suite/${prog##*/}
	log=$logdir/$name.log
	run_prog "$name" "$log" "$prog"
	local re='^[0-9]+%: Checks: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+)'
	while IFS= read -r line; do
		if [[ $line =~ $re ]]; then
			checks=1
			p=$((p + BASH_REMATCH[1] - BASH_REMATCH[2] - BASH_REMATCH[3]))
			f=$((f + BASH_REMATCH[2] + BASH_REMATCH[3]))
		elif [[ $line == NM-SKIP:\ * ]]; then
			s=$((s + 1))
		fi
		[[ $line == *[![:space:]]* ]] && last=$line
	done <"$log"
	if [ "$status" = 77 ]; then
		p=0 f=0 s=1 note="skipped: ${last:-no reason given}"
	elif [ "$status" != 0 ]; then
		# Whatever it reported, dying or hanging is a failure of its own
		# unless it already counted one.
		if [ "$f" = 0 ] || [ "$status" = 124 ] || [ "$status" = 137 ]; then
			f=$((f + 1))
		fi
	elif [ "$checks" = 0 ]; then
		p=1 s=0
	fi
	# A skipped Check test ran to its end, so Check counted it as a pass.
	if [ "$status" != 77 ] && [ "$s" -gt 0 ]; then
		p=$((p - s))
		if [ "$p" -lt 0 ]; then p=0; fi
		note="$note ($s skipped: grep NM-SKIP $log)"
	fi
	kernel_reports "$name" "$log"
	if [ -n "$kreport" ]; then f=$((f + 1)) note="$kreport $note"; fi
	record "$name" "$p" "$f" "$s" "$note" "$log"
}

run_python() {
	local name=python/unittest log p=0 f=0 s=0 ran="" res="" line k n
	if ! compgen -G "tests/python/test_*.py" >/dev/null; then
		echo "SKIP python: no tests/python/test_*.py"
		return
	fi
	log=$logdir/python/unittest.log
	mkdir -p "$logdir/python"
	run_prog "$name" "$log" python3 -m unittest discover -v -s tests/python
	local ran_re='^Ran ([0-9]+) tests? in' res_re='^(OK|FAILED)( [(].*[)])?$' k_re
	while IFS= read -r line; do
		if [[ $line =~ $ran_re ]]; then ran=${BASH_REMATCH[1]}; fi
		if [[ $line =~ $res_re ]]; then res=$line; fi
	done <"$log"
	if [ -n "$ran" ]; then
		for k in failures errors skipped 'unexpected successes'; do
			# "[(,] *" so that "expected failures=" is not failures.
			n=0 k_re="[(,] *$k=([0-9]+)"
			if [[ $res =~ $k_re ]]; then n=${BASH_REMATCH[1]}; fi
			case $k in
			skipped) s=$n ;;
			*) f=$((f + n)) ;;
			esac
		done
		p=$((ran - f - s))
		if [ "$p" -lt 0 ]; then p=0; fi
	fi
	if [ "$status" = 124 ] || [ "$status" = 137 ]; then
		f=$((f + 1))
	elif [ "$status" != 0 ] && [ "$f" = 0 ]; then
		f=1
	fi
	kernel_reports "$name" "$log"
	if [ -n "$kreport" ]; then f=$((f + 1)) note="$kreport $note"; fi
	record "$name" "$p" "$f" "$s" "$note" "$log"
}

[ $# -ge 1 ] || { echo "run-suites: no suite given" >&2; exit 2; }
excluded=()
for arg in "$@"; do
	if [[ $arg == '!'* ]]; then excluded+=("build/tests/${arg#!}"); fi
done
is_excluded() {
	local x
	for x in "${excluded[@]}"; do
		# shellcheck disable=SC2053 # $x is a glob on purpose
		[[ $1 == $x ]] && return 0
	done
	return 1
}
for arg in "$@"; do
	[[ $arg == '!'* ]] && continue
	suite=${arg%%/*}
	case $arg in
	python) run_python ;;
	*)
		# SUITE or SUITE/GLOB (e.g. kernel/dmabuf*)
		pat='*'
		if [ "$suite" != "$arg" ]; then pat=${arg#*/}; fi
		dir=build/tests/$suite
		if [ "$suite" = examples ]; then dir=build/examples; fi
		found=0
		for prog in "$dir"/$pat; do
			if [ ! -f "$prog" ] || [ ! -x "$prog" ]; then continue; fi
			if is_excluded "$prog"; then continue; fi
			[ "$found" = 1 ] || mkdir -p "$logdir/$suite"
			found=1
			run_check_prog "$prog" "$suite"
		done
		if [ "$found" = 0 ]; then echo "SKIP $arg: no programs in $dir"; fi
		;;
	esac
done

echo "$tot_p passed, $tot_f failed, $tot_s skipped"
[ "$tot_f" = 0 ]
