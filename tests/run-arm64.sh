#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The test runner of "make check-arm64", run after make arm64: the
# kernel and lib suites (build/tests-arm64/, static arm64 programs) in one
# arm64 QEMU guest per Debian arm64 kernel extracted by scripts/arm64-deps.sh
# (tests/vm/configs/arm64.conf), counted by tests/guest/run-suites.sh as on
# x86_64, and in the newest kernel's guest the C example too (the library
# is the same on every kernel); then, on the newest, the device-dependent
# programs with the edu DMA engine behind an SMMUv3, four of them for the
# programs of several NPUs (configs/arm64-iommu-edu.conf).  compat32 runs
# its armhf helper through the arm64 kernel's AArch32 compat layer (QEMU's
# -cpu max has AArch32 at EL0).  Not run on arm64: the python suite and
# demo (no python in the guest's root), and the valgrind pass.
# The last line is "N passed, N failed, N skipped"; exit status 1 if
# anything failed.  Logs: build/test-results/arm64/<kver>-<config>/.
#
# Environment:
#   ARM64_KVERS           only these kernels (default: all extracted)
#   VM_TIMEOUT            hard limit per guest, seconds (default 1800; it only
#                         catches a hang: an idle host takes about 4 minutes)
#   NPU_MEM_TEST_TIMEOUT  limit per test program, seconds (default 600)
#   JOBS_MAX              guests side by side (tests/jobs.sh)
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$TOP" || exit 1
RES=$TOP/build/test-results/arm64
export NPU_MEM_TEST_TIMEOUT=${NPU_MEM_TEST_TIMEOUT:-600}
vm_timeout=${VM_TIMEOUT:-1800}

rm -rf "$RES"
mkdir -p "$RES"
bash tests/vm/arm64-root.sh || exit 1

kvers=${ARM64_KVERS:-$(bash scripts/arm64-deps.sh --kvers)}
# shellcheck source=tests/summary.sh
. "$TOP/tests/summary.sh"
# shellcheck source=tests/jobs.sh
. "$TOP/tests/jobs.sh"
JOBS_DIR=$RES/jobs
[ -n "$kvers" ] || add "arm64 guests" 0 1 0 "no arm64 kernel (scripts/arm64-deps.sh)"
# run-suites.sh passes over a suite without programs uncounted: a build
# that lost one must fail here instead.
for g in 'build/tests-arm64/kernel/*' 'build/tests-arm64/lib/*' build/examples-arm64/acl_demo; do
	compgen -G "$g" >/dev/null || add "$g" 0 1 0 "missing (make arm64)"
done

# guest CONFIG KVER SUITE...: one guest, its tally added to the summary.
guest() {
	local config=$1 k=$2 label out rc p f s note t0
	shift 2
	label="$k $config" out=$RES/$k-$config
	mkdir -p "$out"
	echo "$label: $*"
	t0=$(date +%s)
	tests/vm/vm-run -q -c "$config" -k "$k" -t "$vm_timeout" -o "$out" -- \
		"$TOP/tests/guest/run-suites.sh" -r "$out/results.txt" "$@"
	rc=$?
	grep -E '^(PASS|FAIL|SKIP) ' "$out/console.log" 2>/dev/null
	read -r p f s < <(tally "$out/results.txt")
	note=""
	if [ "$rc" = 245 ] && grep -q 'kernel reports in dmesg' "$out/results.txt" 2>/dev/null; then
		: # run-suites already failed the program that caused them
	elif [ "$rc" -ge 240 ] && [ "$rc" -le 246 ]; then
		f=$((f + 1)) note="vm-run exit $rc"
	elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		f=1 note="guest command exited $rc"
	fi
	add "$label" "$p" "$f" "$s" "$note ($(($(date +%s) - t0))s)"
	[ "$f" = 0 ] || failures "$label" "$out"
}

# shellcheck disable=SC2086 # one release a word
sorted=$(printf '%s\n' $kvers | sort -rV)
newest=$(echo "$sorted" | head -n1)
for k in $sorted; do
	if [ "$k" = "$newest" ]; then
		job "$k-arm64" guest arm64 "$k" kernel lib examples
	else
		job "$k-arm64" guest arm64 "$k" kernel lib
	fi
done
# The edu DMA engine behind an SMMUv3, newest kernel only (as on x86_64,
# only the programs whose behaviour depends on the device); four of them,
# each in its own SMMU domain, for the programs of several NPUs.
for k in $newest; do
	job "$k-arm64-iommu-edu" guest arm64-iommu-edu "$k" kernel/edu_dma kernel/sync kernel/get_info \
		kernel/alloc_policy 'kernel/dmabuf*' kernel/multi_npu kernel/peer_map lib/acl_multi_device
done

jobs_run

summary_print arm64
[ "$tot_f" = 0 ]
