#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check-debug: the module on the debug kernel.
#   1. builds the debug kernel unless cached (scripts/debug-kernel.sh) and
#      the module against it (make debug-module);
#   2. boots it (tests/vm/configs/x86_64-debug.conf: q35, Intel IOMMU, the
#      edu DMA engine, 3 GiB) and runs tests/debug/guest.sh there: the full
#      guest suites, fault injection, the ioctl fuzzer, with a kmemleak scan
#      after each; vm-run fails the guest on any KASAN, lockdep, DMA-API,
#      WARNING or kmemleak line in dmesg;
#   3. judges the kmemleak scan init.sh makes after rmmod.
# The last line is "N passed, N failed, N skipped"; exit 1 if anything
# failed.  Results, logs, dmesg, console: build/test-results/debug/.
#
# Environment:
#   NPU_MEM_FUZZ_SECONDS  fuzzing budget (default 120)
#   NPU_MEM_FUZZ_SEED     fuzzer seed (default 1: every run replays)
#   NPU_MEM_TEST_TIMEOUT  limit per test program, seconds (default 900)
#   DEBUG_VM_TIMEOUT      limit for the whole guest, seconds (default 5400)
#   DEBUG_PHASES          guest phases, default "suites fuzz fault"
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
cd "$TOP" || exit 1
RES=$TOP/build/test-results/debug
export NPU_MEM_FUZZ_SECONDS=${NPU_MEM_FUZZ_SECONDS:-120}
export NPU_MEM_FUZZ_SEED=${NPU_MEM_FUZZ_SEED:-1}
export NPU_MEM_TEST_TIMEOUT=${NPU_MEM_TEST_TIMEOUT:-900}
# Check's per-test timeouts assume real hardware; KASAN under TCG is slower
# still than the stock kernels run-suites.sh already scales for.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-20}

fail() { echo "check-debug: $*"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

t0=$(date +%s)
kdir=$(bash scripts/debug-kernel.sh | tail -n1) || fail "building the debug kernel failed"
kver=$(cat "$kdir/include/config/kernel.release") || fail "no kernel.release in $kdir"
echo "check-debug: kernel $kver ($kdir), $(cat "$kdir/../done" 2>/dev/null)"
make -s debug-module >/dev/null || fail "building the module against $kver failed"

rm -rf "$RES"
mkdir -p "$RES"
out=$RES/guest
t1=$(date +%s)
# shellcheck disable=SC2086 # DEBUG_PHASES is a list of phases
NPU_MEM_DEBUG_KDIR=$kdir tests/vm/vm-run -c x86_64-debug -t "${DEBUG_VM_TIMEOUT:-5400}" \
	-o "$out" -- tests/debug/guest.sh ${DEBUG_PHASES:-}
rc=$?
secs=$(($(date +%s) - t1))

touch "$out/results.txt"
# The scan after rmmod (init.sh) - the module's last chance to leak.
if [ -s "$out/kmemleak.txt" ] && grep -q '^unreferenced object' "$out/kmemleak.txt"; then
	echo "0 1 0 debug/kmemleak-after-rmmod $(grep -c '^unreferenced object' "$out/kmemleak.txt") leaks: $out/kmemleak.txt" >>"$out/results.txt"
	echo "FAIL kmemleak after rmmod:"
	head -n 60 "$out/kmemleak.txt"
elif [ -e "$out/kmemleak.txt" ]; then
	echo "1 0 0 debug/kmemleak-after-rmmod" >>"$out/results.txt"
fi
read -r p f s < <(awk '{ p += $1; f += $2; s += $3 } END { printf "%d %d %d\n", p, f, s }' "$out/results.txt")
note=""
case $rc in
0) ;;
242) note="guest timed out" ;;
243) note="insmod failed" ;;
244) note="rmmod failed" ;;
245) note="kernel reported problems (KASAN/lockdep/DMA-API/WARNING/kmemleak, see above)" ;;
*) note="vm-run exit $rc" ;;
esac
if [ -n "$note" ]; then
	# run-suites already failed the program a kernel report came from.
	if ! { [ "$rc" = 245 ] && grep -q 'kernel reports in dmesg' "$out/results.txt"; }; then
		f=$((f + 1))
	fi
fi

echo
echo "==== check-debug summary ($kver, guest ${secs}s, total $(($(date +%s) - t0))s) ===="
sed -n 's/^\([0-9]*\) \([0-9]*\) \([0-9]*\) \([^ ]*\)\(.*\)/\4: \1 passed, \2 failed, \3 skipped\5/p' "$out/results.txt"
grep -h '^npu_mem_fuzz: \(PASS\|FAIL\)\|^\(fault_inject\|reserve_fault\): \(PASS\|FAIL\)' \
	"$out"/logs/fuzz/*.log "$out"/logs/fault/*.log 2>/dev/null
[ -n "$note" ] && echo "vm-run: $note"
echo "$p passed, $f failed, $s skipped"
[ "$f" = 0 ]
