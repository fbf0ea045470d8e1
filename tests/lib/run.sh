#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Run all of libaclmem's tests: the host tests here, then the device tests,
# Python tests, demos and a valgrind pass inside a QEMU guest per kernel.
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
	*) sed -n '4,12s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done

pass=0 fail=0
for t in build/tests/host/acl_*; do
	[ -x "$t" ] || continue
	if "$t" >"/tmp/$(basename "$t").$$.log" 2>&1; then
		pass=$((pass + 1)); echo "PASS host/$(basename "$t")"
	else
		fail=$((fail + 1)); echo "FAIL host/$(basename "$t")"
		tail -n 40 "/tmp/$(basename "$t").$$.log" | sed 's/^/    /'
	fi
	rm -f "/tmp/$(basename "$t").$$.log"
done

if [ "$host_only" = 0 ]; then
	if [ ${#kvers[@]} = 0 ]; then
		for ko in "$kmod"/*/npu_mem.ko; do
			[ -e "$ko" ] && kvers+=("$(basename "$(dirname "$ko")")")
		done
	fi
	[ ${#kvers[@]} = 0 ] && { echo "no module built (make modules-all)"; fail=$((fail + 1)); }
	for k in "${kvers[@]}"; do
		echo "== guest $k"
		log=$(mktemp)
		tests/vm/vm-run -k "$k" -m "$kmod/$k/npu_mem.ko" -t 3000 \
			-e ACLTEST_VALGRIND=$valgrind -- tests/lib/guest-run.sh \
			>"$log" 2>&1
		st=$?
		grep -E '^(PASS|FAIL|SKIP|    )' "$log"
		line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n1)
		if [ -n "$line" ]; then
			p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
			pass=$((pass + p)); fail=$((fail + f))
		fi
		if [ "$st" != 0 ] && { [ -z "$line" ] || [ "${f:-0}" = 0 ]; }; then
			echo "FAIL guest $k: $(tail -n1 "$log")"
			fail=$((fail + 1))
		fi
		rm -f "$log"
	done
fi
echo "libaclmem: $pass passed, $fail failed"
[ "$fail" = 0 ]
