#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The test runner of "make check", run after everything is built:
#   1. build/tests/host/* on this machine, and shellcheck on every script;
#   2. self-tests proving that vm-run really fails on a kernel WARNING and on
#      a module that cannot be unloaded;
#   3. one QEMU guest per (kernel, configuration) of the matrix below, which
#      runs tests/guest/run-suites.sh with the driver loaded, and fails on
#      kernel reports, rmmod failure or timeout (tests/vm/vm-run).
# The last line is "N passed, N failed, N skipped"; exit status 1 if anything
# failed.  Per-program logs, guest dmesg and console:
# build/test-results/run-all/.
#
# Environment:
#   KVERS                 only these kernels (default: every kernel with headers
#                         and a vmlinuz: the host's, and those of the Debian
#                         roots of scripts/kernels.sh)
#   VM_TIMEOUT            hard limit per guest, seconds (default 600: the
#                         longest row takes about 240 s on an idle 2-core
#                         host, and load can double that)
#   NPU_MEM_TEST_TIMEOUT  limit per test program, seconds (default 180)
#   RUN_ALL_BUDGET        seconds for all of this (default 2700): a guest gets
#                         at most what is left, and one that cannot start is
#                         counted as failed, so that make check ends within
#                         CI's time whatever hangs
set -uo pipefail

# Configurations (tests/vm/configs/), the kernels each runs on, and what
# it runs (run-suites.sh arguments: a suite, suite/glob for some of its
# programs, !suite/glob to leave some out).  Kernels: "all", "newest",
# "host", "other", or version prefixes ("6.1" selects 6.1.0-*, not 6.12.*),
# comma-separated.  "newest" is the host's newest kernel; "host" the host's
# (/lib/modules/*/build), "other" those of other Debian releases
# (scripts/kernels.sh: 5.10, 7.x), which run the kernel and library suites
# and the fuzzer: python and the samples add nothing kernel-specific there.
# Guests run in this order (rows, then newest kernel first), so a blown
# budget loses the least useful ones.
#  - x86_64: everything, on every host kernel; fuzz is the ioctl fuzzer
#    (tests/fuzz/npu_mem_fuzz.c) for its default 20 s (NPU_MEM_FUZZ_SECONDS;
#    make check-debug runs it longer on the debug kernel); samples are the
#    CANN-style samples, built by step 1b against both toolkits.
#  - x86_64-iommu-edu: the programs whose behaviour depends on the device
#    (the others would repeat the plain guest's run at twice the cost);
#    dev_remove last, although it gives the device back (dmabuf_import,
#    one of kernel/dmabuf*, unbinds it too, and gives it back as well).
#  - x86_64-race: one vCPU and init_on_free=1, where use-after-free races
#    between ioctls on one handle show up as wrong data or an oops.
#  - x86_64-swiotlb-edu: every mapping bounces (SEV/TDX guests, 32-bit
#    devices), so a missing or misdirected sync loses data visibly.  Left
#    out: the dma-buf programs and coherence_stress write through the CPU
#    mapping without a SYNC, which bounce buffering forbids (their dma-bufs'
#    importers bounce too); exhaustion and huge_fallback measure RAM, where
#    the bounce pool runs out first.
#  - x86_64-noinit: the kernel zeroes nothing (init_on_alloc=0), so only the
#    driver's own zeroing keeps old data out of new buffers.
MATRIX=(
	# config            kernels      suites
	"x86_64             host         kernel lib python fuzz samples"
	"x86_64-iommu-edu   newest,6.1   kernel/edu_dma kernel/sync kernel/sync_trace kernel/alloc_policy kernel/get_info kernel/visibility kernel/dmabuf* kernel/alloc_race kernel/host_register kernel/ipc_mem kernel/pmd_map kernel/dev_remove"
	"x86_64-race        all          kernel/alloc_race kernel/ipc_mem fuzz"
	"x86_64-swiotlb-edu newest,6.1   kernel lib !kernel/dmabuf* !kernel/coherence_stress !kernel/exhaustion !kernel/huge_fallback"
	"x86_64-noinit      newest       kernel/content_zero kernel/leak_memcg"
	"x86_64             other        kernel lib fuzz"
)

TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$TOP" || exit 1
RES=$TOP/build/test-results/run-all
VMRUN=$TOP/tests/vm/vm-run
SUITES=$TOP/tests/guest/run-suites.sh
export NPU_MEM_TEST_TIMEOUT=${NPU_MEM_TEST_TIMEOUT:-180}
vm_timeout=${VM_TIMEOUT:-600}
deadline=$(($(date +%s) + ${RUN_ALL_BUDGET:-2700}))

rm -rf "$RES"
mkdir -p "$RES"

# shellcheck source=tests/summary.sh
. "$TOP/tests/summary.sh"

vm_failure() {
	case $1 in
	240) echo "vm-run: host-side error" ;;
	241) echo "vm-run: guest did not boot" ;;
	242) echo "vm-run: timed out" ;;
	243) echo "vm-run: insmod failed" ;;
	244) echo "vm-run: rmmod failed" ;;
	245) echo "vm-run: kernel reported problems" ;;
	246) echo "vm-run: guest died" ;;
	999) echo "not run: RUN_ALL_BUDGET used up" ;;
	*) ;;
	esac
}

banner() { printf '\n==== %s ====\n' "$*"; }

# ---- 1. host ---------------------------------------------------------------
banner "host tests"
mkdir -p "$RES/host"
"$SUITES" -r "$RES/host/results.txt" host
read -r p f s < <(tally "$RES/host/results.txt")
add host "$p" "$f" "$s"

banner "shellcheck: every shell script"
log=$RES/shellcheck.log
bash "$TOP/tests/shellcheck.sh" >"$log" 2>&1
cat "$log"
if read -r p _ f _ s _ < <(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n1); then
	add shellcheck "$p" "$f" "$s"
else
	add shellcheck 0 1 0 "no summary line, see $log"
fi

# ---- 1b. the CANN-style samples (samples/), built with cmake against the
# build tree's toolkit and an installed one (tests/samples/run.sh); the
# guests of the matrix run them (suite "samples").
banner "samples: cmake against the toolkit (build tree, installed)"
log=$RES/samples-build.log
bash "$TOP/tests/samples/run.sh" build >"$log" 2>&1
grep -E '^(FAIL|skip) ' "$log"
p="" f=0 s=0
read -r p f s < <(tail -n 1 "$log" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
if [ -n "${p:-}" ]; then
	add "samples: build against the toolkit" "$p" "$f" "$s"
else
	tail -n 20 "$log"
	add "samples: build against the toolkit" 0 1 0 "no summary line, see $log"
fi

# Every planted bug of make mutation must still apply to the code, or the
# catalogue has silently stopped testing what it names (seconds; the
# mutants themselves take half an hour: make mutation).
banner "mutation catalogue applies"
if python3 "$TOP/tests/mutation/run.py" --check >"$RES/mutation-check.log" 2>&1; then
	add "mutation catalogue applies" 1 0 0
else
	tail -n 20 "$RES/mutation-check.log"
	add "mutation catalogue applies" 0 1 0 "see $RES/mutation-check.log"
fi

# The module must build without a warning (W=1) and sparse-clean (C=2)
# against every installed kernel.  A kernel whose kbuild refuses the
# release's sparse (7.x's headers use __typeof_unqual__, which Debian's
# sparse 0.6.4 cannot parse) gets W=1 alone: counted as one skip.
banner "module: W=1 + sparse, every kernel"
if make -s -C "$TOP" sparse >"$RES/sparse.log" 2>&1; then
	nosparse=$(grep -c '^sparse: not run on' "$RES/sparse.log")
	grep '^sparse: not run on' "$RES/sparse.log"
	add "module W=1 + sparse clean" 1 0 "$nosparse"
else
	grep -E 'warning|error' "$RES/sparse.log" | head -n 20
	add "module W=1 + sparse clean" 0 1 0 "see $RES/sparse.log"
fi

# ---- kernels and helpers for the guests ----------------------------------------
kernels=() newest=""
declare -A other=()
while read -r v; do
	if [ -n "${KVERS:-}" ] && [[ " $KVERS " != *" $v "* ]]; then continue; fi
	if root=$(bash "$TOP/scripts/kernels.sh" --root "$v"); then
		[ -e "$root/boot/vmlinuz-$v" ] || continue
		other[$v]=1
	else
		[ -e "/boot/vmlinuz-$v" ] || continue
		newest=$v	# sorted: the last host kernel is the newest
	fi
	kernels+=("$v")
done < <(bash "$TOP/scripts/kernels.sh" --kvers)
# Only other releases' kernels selected: the newest of them.
if [ -z "$newest" ] && [ "${#kernels[@]}" -gt 0 ]; then
	newest=${kernels[${#kernels[@]} - 1]}
fi
if [ -z "$newest" ]; then
	add "guests" 0 1 0 "no kernel with /lib/modules/*/build and /boot/vmlinuz-*"
fi

selected() { # selected KVER SELECTORS
	local sel
	for sel in ${2//,/ }; do
		case $sel in
		all) return 0 ;;
		newest) [ "$1" = "$newest" ] && return 0 ;;
		host) [ -z "${other[$1]:-}" ] && return 0 ;;
		other) [ -n "${other[$1]:-}" ] && return 0 ;;
		*) [[ $1 == "$sel" || $1 == "$sel".* || $1 == "$sel"-* ]] && return 0 ;;
		esac
	done
	return 1
}

# guest LABEL OUTDIR VM-RUN-ARGS... -- CMD...: vm-run with the time budget;
# sets $rc.
guest() {
	local label=$1 out=$2 left t
	shift 2
	left=$((deadline - $(date +%s)))
	if [ "$left" -lt 60 ]; then
		echo "run-all: no time left in RUN_ALL_BUDGET for $label"
		rc=999
		return
	fi
	t=$vm_timeout
	[ "$left" -lt "$t" ] && t=$left
	rm -rf "$out"
	mkdir -p "$out"
	"$VMRUN" -t "$t" -o "$out" "$@"
	rc=$?
}

# ---- 2. self-tests of the harness (first: short, and they vouch for the rest)
# One guest: the command writes a WARNING into the kernel log and leaves a
# process holding /dev/npu-mem, so vm-run must report the dmesg line and a
# failed rmmod.  fd 3 is opened before the background child forks, so the
# reference is held by the time the command returns.
if [ -n "$newest" ]; then
	banner "self-test of vm-run (must fail) on $newest"
	out=$RES/selftest
	log=$RES/selftest.log
	guest "self-test" "$out" -q -k "$newest" -- sh -c '
		echo "<4>WARNING: npu-mem scanner self-test" >/dev/kmsg
		[ -c /dev/npu-mem ] || { echo "no /dev/npu-mem"; exit 77; }
		exec 3<>/dev/npu-mem
		sleep 600 <&3 &
		exit 0' 2>"$log"
	result=$(cat "$out/.vm-run/result" 2>/dev/null)
	echo "vm-run exit $rc: $result"

	if [ "$rc" = 245 ] && grep -q 'WARNING: npu-mem scanner self-test' "$log"; then
		add "self-test: dmesg WARNING detected" 1 0 0
	else
		add "self-test: dmesg WARNING detected" 0 1 0 "vm-run exit $rc, see $log"
	fi
	case " $result " in
	*" cmd=77 "*) add "self-test: rmmod failure detected" 0 0 1 "module has no /dev/npu-mem" ;;
	*" rmmod=1 "*) add "self-test: rmmod failure detected" 1 0 0 ;;
	*) add "self-test: rmmod failure detected" 0 1 0 "vm-run exit $rc, see $log" ;;
	esac
fi

# ---- 3. the matrix -----------------------------------------------------------
mapfile -t by_newest < <(printf '%s\n' "${kernels[@]}" | tac | sed '/^$/d')
for row in "${MATRIX[@]}"; do
	# read -a: no pathname expansion of "kernel/dmabuf*" here.
	read -r config sel rest <<<"$row"
	read -ra suites <<<"$rest"
	for k in "${by_newest[@]}"; do
		selected "$k" "$sel" || continue
		label="$k $config"
		out=$RES/$k-$config
		banner "$label: ${suites[*]}"
		t0=$(date +%s)
		guest "$label" "$out" -c "$config" -k "$k" -- \
			"$SUITES" -r "$out/results.txt" "${suites[@]}"
		read -r p f s < <(tally "$out/results.txt")
		note=$(vm_failure "$rc")
		if [ "$rc" = 245 ] && grep -q 'kernel reports in dmesg' "$out/results.txt" 2>/dev/null; then
			: # run-suites already failed the program that caused them
		elif [ -n "$note" ]; then
			f=$((f + 1))
		elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
			# run-suites fails only when it counted a failure.
			f=1 note="guest command exited $rc"
		fi
		add "$label" "$p" "$f" "$s" "$note ($(($(date +%s) - t0))s)"
		[ "$f" = 0 ] || failures "$label" "$out"
	done
done

# ---- 3b. libaclmem's Check programs under valgrind, newest kernel only
# (slow under TCG; the library is the same on every kernel)
if [ -n "$newest" ]; then
	banner "$newest valgrind: libaclmem tests"
	out=$RES/$newest-valgrind
	t0=$(date +%s)
	vm_timeout=$((vm_timeout * 2)) # valgrind under TCG
	guest "valgrind" "$out" -q -k "$newest" -e ACLTEST_VALGRIND=only -- \
		"$TOP/tests/lib/guest-run.sh" 2>"$RES/valgrind.log"
	vm_timeout=$((vm_timeout / 2))
	# -q keeps the guest's output out of the terminal: it is in console.log.
	grep -E '^(PASS|FAIL|SKIP) |^    ' "$out/console.log" 2>/dev/null
	cat "$RES/valgrind.log"
	read -r p f s < <(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/console.log" 2>/dev/null |
		tail -n 1 | sed 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\).*/\1 \2 \3/')
	note=$(vm_failure "$rc")
	if [ -z "${p:-}" ]; then
		p=0 f=1 s=0 note="${note:-no summary line}"
	elif [ -n "$note" ]; then
		f=$((f + 1))
	fi
	add "$newest valgrind" "$p" "$f" "$s" "$note ($(($(date +%s) - t0))s)"
fi

# ---- 4. installation: make install into a DESTDIR, DKMS for every kernel and
# guests booted with the DKMS-installed module (tests/install/run.sh)
banner "installation tests"
log=$RES/install.log
bash "$TOP/tests/install/run.sh" 2>&1 | tee "$log"
read -r p f < <(tail -n 1 "$log" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p')
if [ -n "${p:-}" ]; then
	add "install (dkms, make install, no driver)" "$p" "$f" 0
else
	add "install (dkms, make install, no driver)" 0 1 0 "no summary line, see $log"
fi

summary_print ""
[ "$tot_f" = 0 ]
