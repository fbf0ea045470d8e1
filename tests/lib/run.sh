#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Run all of libaclmem's tests: the host tests here, then the device tests,
# Python tests, demos and a valgrind pass inside a QEMU guest per kernel.
# The tally is tests/summary.sh's, as in make check: one line per part,
# then "N passed, N failed, N skipped".  Logs: build/test-results/lib/.
#
#   tests/lib/run.sh [-k KVER]... [-m KMOD_DIR] [-V] [-H]
#     -k KVER      kernel to test on (repeatable; default: every kernel that
#                  has build/kmod/KVER/npu_mem.ko)
#     -m KMOD_DIR  take modules from KMOD_DIR/KVER/npu_mem.ko instead
#     -V           skip the valgrind pass (it is slow under TCG)
#     -H           host tests only
# Build first: make lib tests (and make modules-all for the guests).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 2
kvers=() kmod=$TOP/build/kmod valgrind=1 host_only=0
while getopts k:m:VH opt; do
	case $opt in
	k) kvers+=("$OPTARG") ;;
	m) kmod=$OPTARG ;;
	V) valgrind=0 ;;
	H) host_only=1 ;;
	*) sed -n '4,15s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done

# shellcheck source=tests/summary.sh
. "$TOP/tests/summary.sh"
RES=$TOP/build/test-results/lib
mkdir -p "$RES"

# The host programs, counted by the runner every suite uses.
rm -f "$RES/host.txt"
tests/guest/run-suites.sh -r "$RES/host.txt" 'host/acl_*'
read -r p f s < <(tally "$RES/host.txt")
add "host (libaclmem)" "$p" "$f" "$s"

# One guest: its device tests, Python, demos and (unless -V) valgrind, as
# tests/lib/guest-run.sh counts them in its last line.
guest() {
	local k=$1 log=$RES/guest-$1.log line p f s st note=""

	echo "== guest $k"
	tests/vm/vm-run -k "$k" -m "$kmod/$k/npu_mem.ko" -t 3000 \
		-e ACLTEST_VALGRIND=$valgrind -- tests/lib/guest-run.sh \
		>"$log" 2>&1
	st=$?
	grep -E '^(PASS|FAIL|SKIP|    )' "$log"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n1)
	if [ -z "$line" ]; then
		p=0 f=1 s=0 note="no summary line, see $log"
	else
		p=${line%% passed*} f=${line#*passed, } s=${line#*failed, }
		f=${f%% failed*} s=${s%% skipped*}
		if [ "$st" != 0 ] && [ "$f" = 0 ]; then
			f=1 note="vm-run exit $st, see $log"
		fi
	fi
	add "guest $k" "$p" "$f" "$s" "$note"
}

if [ "$host_only" = 0 ]; then
	if [ ${#kvers[@]} = 0 ]; then
		for ko in "$kmod"/*/npu_mem.ko; do
			[ -e "$ko" ] && kvers+=("$(basename "$(dirname "$ko")")")
		done
	fi
	[ ${#kvers[@]} = 0 ] && add guests 0 1 0 "no module built (make modules-all)"
	for k in "${kvers[@]}"; do
		guest "$k"
	done
fi
summary_print libaclmem
[ "$tot_f" = 0 ]
