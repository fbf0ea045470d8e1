#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The guest side of make check-debug (tests/debug/check.sh), run by vm-run
# on the debug kernel with npu_mem loaded:
#   1. the full guest suites (kernel lib python), then a kmemleak scan;
#   2. the ioctl fuzzer (build/tests/fuzz/, NPU_MEM_FUZZ_SECONDS), then a
#      kmemleak scan;
#   3. fault injection (build/tests/fault/), then a kmemleak scan.  Last,
#      because a failure injected into DMA-API debugging's own bookkeeping
#      (its radix tree) switches that debugging off for the rest of the boot.
# Each scan is one more result line in $VM_OUTDIR/results.txt (run-suites
# format): passed when kmemleak reports nothing, its report in
# $VM_OUTDIR/kmemleak-<phase>.txt otherwise.  The scan after rmmod is
# init.sh's (kmemleak.txt), judged on the host.
#   tests/debug/guest.sh [PHASE...]     phases: suites fuzz fault (default all)
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
cd "$TOP" || exit 2
OUT=${VM_OUTDIR:?run me through vm-run}
RESULTS=$OUT/results.txt
SUITES=$TOP/tests/guest/run-suites.sh
KMEMLEAK=/sys/kernel/debug/kmemleak

# kmemleak PHASE: scan, record a result line, forget what was reported.
kmemleak() {
	local phase=$1 f=$OUT/kmemleak-$1.txt n
	if [ ! -w "$KMEMLEAK" ]; then
		echo "0 0 1 debug/kmemleak-after-$phase skipped: no $KMEMLEAK" >>"$RESULTS"
		return
	fi
	# Objects younger than 5 s are never reported: let them age, then scan
	# twice as Documentation/dev-tools/kmemleak.rst recommends.
	sleep 6
	echo scan >"$KMEMLEAK"
	echo scan >"$KMEMLEAK"
	cat "$KMEMLEAK" >"$f"
	n=$(grep -c '^unreferenced object' "$f")
	if [ "$n" = 0 ]; then
		rm -f "$f"
		echo "1 0 0 debug/kmemleak-after-$phase" >>"$RESULTS"
		echo "PASS debug/kmemleak-after-$phase: no leaks"
	else
		echo "0 1 0 debug/kmemleak-after-$phase $n leaks: $f" >>"$RESULTS"
		echo "FAIL debug/kmemleak-after-$phase: $n unreferenced objects:"
		head -n 60 "$f"
	fi
	echo clear >"$KMEMLEAK"
}

# DMA-API debugging prints only its first error unless told otherwise: every
# error must reach dmesg, where run-suites pins it on the program.
DMA_API=/sys/kernel/debug/dma-api
[ -w "$DMA_API/all_errors" ] && echo 1 >"$DMA_API/all_errors"

phases=${*:-suites fuzz fault}
rc=0
for phase in $phases; do
	case $phase in
	# alloc_many and exhaustion spend minutes under KASAN filling memory,
	# on paths the stock kernels' guests run as well.
	suites) "$SUITES" -r "$RESULTS" kernel lib python \
		'!kernel/alloc_many' '!kernel/exhaustion' || rc=1 ;;
	fault) "$SUITES" -r "$RESULTS" fault || rc=1 ;;
	fuzz) "$SUITES" -r "$RESULTS" fuzz || rc=1 ;;
	*) echo "guest.sh: unknown phase $phase" >&2; exit 2 ;;
	esac
	kmemleak "$phase"
	if dmesg | grep -q 'DMA-API: .*disabl'; then
		echo "note: DMA-API debugging is off after phase $phase: $(dmesg | grep -m1 'DMA-API: .*disabl')"
	fi
done
if [ -r "$DMA_API/error_count" ]; then
	echo "DMA-API debugging: $(cat "$DMA_API/error_count") errors, disabled: $(cat "$DMA_API/disabled")"
fi
awk '{ p += $1; f += $2; s += $3 } END { printf "%d passed, %d failed, %d skipped\n", p, f, s }' "$RESULTS"
if awk '{ f += $2 } END { exit !(f > 0) }' "$RESULTS"; then rc=1; fi
exit "$rc"
