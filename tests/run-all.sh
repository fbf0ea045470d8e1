#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The test runner of "make check" and "make check-full", run after
# everything is built:
#   1. on this machine: build/tests/host/*, shellcheck on every script, the
#      CANN-style samples built against both toolkits, the mutation
#      catalogue, the module's W=1 + sparse builds, the installation tests
#      (DKMS on every kernel, with guests booted from what it installed);
#      and the self-tests proving that vm-run really fails on a kernel
#      WARNING and on a module that cannot be unloaded, and that a guest
#      reads its module tree as the host changes it;
#   2. one QEMU guest per row and kernel of the matrix below, which runs
#      tests/guest/run-suites.sh with the driver loaded, and fails on kernel
#      reports, rmmod failure or timeout (tests/vm/vm-run); then libaclmem's
#      programs under valgrind.
# Each step is a job of tests/jobs.sh: up to two run side by side (a TCG
# guest keeps about one CPU busy), longest first.  The last line is
# "N passed, N failed, N skipped"; exit status 1 if anything failed.
# Per-program logs, guest dmesg and console: build/test-results/run-all/;
# each program's time: tests/times.sh.
#
# Environment:
#   RUN_ALL_PROFILE       check (default) or full; see the matrix
#   KVERS                 only these kernels (default: every kernel with headers
#                         and a vmlinuz: the host's, and those of the Debian
#                         roots of scripts/kernels.sh)
#   JOBS_MAX              jobs side by side (default: CPUs, at most 2)
#   VM_TIMEOUT            hard limit per guest, seconds (default 1800: the
#                         longest guest takes about 4 minutes on an idle
#                         2-core host; the limit only catches a hang, so it
#                         leaves room for a host loaded several times over)
#   NPU_MEM_TEST_TIMEOUT  limit per test program, seconds (default 600, the
#                         same reasoning)
#   RUN_ALL_BUDGET        seconds for all of this (default 4200): a guest gets
#                         at most what is left, and one that cannot start is
#                         counted as failed, so that make check ends within
#                         CI's 90 minutes, with make check-arm64 after it,
#                         whatever hangs
set -uo pipefail

# The matrix: which suites run where.  Columns: the profiles a row belongs
# to (check: make check; full: make check-full), the configuration
# (tests/vm/configs/), the kernels, what it runs (run-suites.sh arguments:
# a suite, suite/glob for some of its programs, !suite/glob to leave some
# out).  Kernels: "all", "newest", "host", "other", or version prefixes
# ("6.1" selects 6.1.0-*, not 6.12.*), comma-separated; "!" before one
# leaves its kernels out.  "newest" is the
# host's newest kernel; "host" the host's (/lib/modules/*/build), "other"
# those of other Debian releases (scripts/kernels.sh: 5.10, 7.x).
#
# make check runs every suite at least once and every kernel-specific one on
# every kernel, each where it proves something:
#  - x86_64: the kernel suite and the ioctl fuzzer (tests/fuzz/npu_mem_fuzz.c)
#    on every kernel; on 6.1 only what the swiotlb guest leaves out, as that
#    guest runs the rest of the suite on 6.1 (through bounce buffers, the
#    stricter DMA path); the library, Python and the CANN-style samples (built
#    on the host against both toolkits) on the newest only: they reach the
#    kernel through the same ioctls the kernel suite covers everywhere.
#    The MPI test (mpi: Open MPI over UCX and soft-RoCE on npu-mem buffers,
#    tests/mpi/guest-mpi.sh) runs on the other release's 7.x only: its
#    subject is user-space MPI moving the buffers, not a kernel path, and
#    there rxe has a socket per network namespace, so its two ranks sit in
#    two namespaces and every byte crosses a veth pair between two rxe
#    devices.  That covers what the one-device layout of older kernels
#    proves (the same user space on rxe's loopback path), which make
#    check-full still runs on the newest host kernel.
#    alloc_race runs in the race guests, made for it.  install-status
#    (npu-smi against known allocations: the tool's parsing, the same on
#    every kernel) runs beside the library; the DKMS guests of the
#    installation tests run npu-smi on the newest kernel and the other
#    releases' ones.
#  - x86_64-iommu-edu: the programs whose behaviour depends on the device,
#    QEMU's edu DMA engine behind the Intel IOMMU (the others would repeat
#    the plain guest's run at twice the cost); dev_remove last, although it
#    gives the device back (dmabuf_import, one of kernel/dmabuf*, unbinds it
#    too, and gives it back as well).
#  - x86_64-race: one vCPU and init_on_free=1, where use-after-free races
#    between ioctls on one handle show up as wrong data or an oops; every
#    kernel, as alloc_race found such a bug in 20-second runs.  The same
#    guest is the multi-device guest without an IOMMU (four edu devices on
#    two NUMA nodes, device addresses physical): multi_npu and peer_map run
#    there on every kernel, which puts each kernel's NUMA placement, PCI
#    removal and direct-DMA peer mapping under test without another boot,
#    and peer_map's racing threads on the one vCPU with init_on_free.
#  - x86_64-swiotlb-edu: every mapping bounces (SEV/TDX guests, 32-bit
#    devices), so a missing or misdirected sync loses data visibly.  Left
#    out: the dma-buf programs and coherence_stress write through the CPU
#    mapping without a SYNC, which bounce buffering forbids (their dma-bufs'
#    importers bounce too); exhaustion and huge_fallback measure RAM, where
#    the bounce pool runs out first.  make check also leaves out what
#    another guest of 6.1 runs (alloc_race: the race guest) and what does
#    not depend on the DMA path (install-status: npu-smi's parsing;
#    acl_exhaust and acl_stress: running out of memory, threads).  make
#    check runs it on 6.1 and the
#    IOMMU guest on the newest kernel, so each DMA path meets both kernels'
#    DMA code across the two.
#  - x86_64-noinit: the kernel zeroes nothing (init_on_alloc=0), so only the
#    driver's own zeroing keeps old data out of new buffers.
#  - x86_64-multi-edu: four edu devices on two NUMA nodes, one module
#    serving them all (multi_npu, with host registrations per device;
#    peer_map: one device's DMA through another's buffer; dmabuf_import:
#    a foreign dma-buf imported for two devices; acl_multi_device, the ACL calls on several devices;
#    the two-device samples peer_copy and ipc_event_devices; the Python
#    tests, whose test_multi_device runs only here; the other programs
#    skip there or repeat the IOMMU guest).  Boot included, 49 s on a
#    quiet host and 95 s on a loaded one before peer_map joined
#    (2026-12-06), which main's row measured at about a minute alone.
#    make check runs it on the newest kernel (the race guests carry
#    multi_npu and peer_map to every kernel without an IOMMU); make
#    check-full on every kernel, so each kernel's intel-iommu meets
#    several domains and peer mappings.
# make check-full adds: the whole kernel suite in the plain 6.1 guest; the
# library, Python and samples on every host kernel and the library on the
# others; the IOMMU and swiotlb guests on both host kernels; alloc_race in
# every plain guest; the fuzzer in the race guests; the multi-device
# guest on every kernel; and longer soaks (below).
MATRIX=(
	# profiles  config             kernels      suites
	"check      x86_64             newest       lib python samples kernel/install-status"
	"full       x86_64             newest       lib python samples kernel/install-status mpi"
	"check,full x86_64             7            mpi"
	"full       x86_64             host,!newest lib python samples"
	"check      x86_64-swiotlb-edu 6.1          kernel lib !kernel/dmabuf* !kernel/coherence_stress !kernel/exhaustion !kernel/huge_fallback !kernel/alloc_race !kernel/install-status !lib/acl_exhaust !lib/acl_stress"
	"full       x86_64-swiotlb-edu newest,6.1   kernel lib !kernel/dmabuf* !kernel/coherence_stress !kernel/exhaustion !kernel/huge_fallback"
	"check      x86_64             all,!6.1     kernel !kernel/alloc_race !kernel/install-status fuzz"
	"check      x86_64             6.1          kernel/dmabuf* kernel/coherence_stress kernel/exhaustion kernel/huge_fallback fuzz"
	"full       x86_64             all          kernel fuzz"
	"full       x86_64             other        lib"
	"check      x86_64-iommu-edu   newest       kernel/edu_dma kernel/sync kernel/sync_trace kernel/alloc_policy kernel/get_info kernel/visibility kernel/dmabuf* kernel/alloc_race kernel/host_register kernel/ipc_mem kernel/pmd_map kernel/dev_remove kernel/reserve"
	"full       x86_64-iommu-edu   newest,6.1   kernel/edu_dma kernel/sync kernel/sync_trace kernel/alloc_policy kernel/get_info kernel/visibility kernel/dmabuf* kernel/alloc_race kernel/host_register kernel/ipc_mem kernel/pmd_map kernel/dev_remove kernel/reserve"
	"check      x86_64-race        all          kernel/alloc_race kernel/ipc_mem kernel/multi_npu kernel/peer_map"
	"full       x86_64-race        all          kernel/alloc_race kernel/ipc_mem kernel/multi_npu kernel/peer_map fuzz"
	"check,full x86_64-noinit      newest       kernel/content_zero kernel/leak_memcg kernel/reserve fault/reserve_fault"
	"check      x86_64-multi-edu   newest       kernel/multi_npu kernel/peer_map kernel/dmabuf_import kernel/reserve lib/acl_multi_device samples/peer_copy* samples/ipc_event_devices* python"
	"full       x86_64-multi-edu   all          kernel/multi_npu kernel/peer_map kernel/dmabuf_import kernel/reserve lib/acl_multi_device samples/peer_copy* samples/ipc_event_devices* python"
)

if [ $# -gt 0 ]; then
	echo "usage: [RUN_ALL_PROFILE=check|full] tests/run-all.sh (no arguments: make check" \
		"and make check-full run it after the build; doc/testing.md)" >&2
	exit 2
fi
TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$TOP" || exit 1
RES=$TOP/build/test-results/run-all
VMRUN=$TOP/tests/vm/vm-run
SUITES=$TOP/tests/guest/run-suites.sh
profile=${RUN_ALL_PROFILE:-check}
case $profile in
check | full) ;;
*) echo "run-all: RUN_ALL_PROFILE must be check or full, not '$profile'" >&2; exit 2 ;;
esac
export NPU_MEM_TEST_TIMEOUT=${NPU_MEM_TEST_TIMEOUT:-600}
# Soaks: make check keeps durations that found real bugs (alloc_race's
# use-after-free showed in every 20-second run); make check-full goes
# longer.  A caller's setting wins.
if [ "$profile" = full ]; then
	export NPU_MEM_FUZZ_SECONDS=${NPU_MEM_FUZZ_SECONDS:-60}
	export NPU_MEM_RACE_SECONDS=${NPU_MEM_RACE_SECONDS:-60}
else
	export NPU_MEM_FUZZ_SECONDS=${NPU_MEM_FUZZ_SECONDS:-10}
	export NPU_MEM_RACE_SECONDS=${NPU_MEM_RACE_SECONDS:-20}
fi
vm_timeout=${VM_TIMEOUT:-1800}
deadline=$(($(date +%s) + ${RUN_ALL_BUDGET:-4200}))

rm -rf "$RES"
mkdir -p "$RES"
JOBS_DIR=$RES/jobs

# shellcheck source=tests/summary.sh
. "$TOP/tests/summary.sh"
# shellcheck source=tests/jobs.sh
. "$TOP/tests/jobs.sh"

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

# summary_from_log LABEL LOG: the "N passed, N failed[, N skipped]" line a
# step printed last, added under LABEL; a log that does not end with one
# (the step died) is a failure.
summary_from_log() {
	local p="" f=0 s=0
	read -r p f s < <(tail -n 1 "$2" |
		sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed\(, \([0-9]*\) skipped\)\{0,1\}.*/\1 \2 \4/p')
	if [ -n "${p:-}" ]; then
		add "$1" "$p" "$f" "${s:-0}"
	else
		tail -n 20 "$2"
		add "$1" 0 1 0 "no summary line, see $2"
	fi
}

# ---- 1. steps on this machine ----------------------------------------------
step_host() {
	mkdir -p "$RES/host"
	"$SUITES" -r "$RES/host/results.txt" host
	read -r p f s < <(tally "$RES/host/results.txt")
	add host "$p" "$f" "$s"
	[ "$f" = 0 ] || failures host "$RES/host"
}

step_shellcheck() {
	bash "$TOP/tests/shellcheck.sh" >"$RES/shellcheck.log" 2>&1
	cat "$RES/shellcheck.log"
	summary_from_log shellcheck "$RES/shellcheck.log"
}

# The CANN-style samples (samples/), built with cmake against the build
# tree's toolkit and an installed one (tests/samples/run.sh); the guests of
# the matrix run them (suite "samples"), so this runs before any guest.
step_samples() {
	bash "$TOP/tests/samples/run.sh" build >"$RES/samples-build.log" 2>&1
	grep -E '^(FAIL|skip) ' "$RES/samples-build.log"
	summary_from_log "samples: build against the toolkit" "$RES/samples-build.log"
}

# Every planted bug of make mutation must still apply to the code, or the
# catalogue has silently stopped testing what it names (seconds; the
# mutants themselves take half an hour: make mutation).
step_mutation() {
	if python3 "$TOP/tests/mutation/run.py" --check >"$RES/mutation-check.log" 2>&1; then
		add "mutation catalogue applies" 1 0 0
	else
		tail -n 20 "$RES/mutation-check.log"
		add "mutation catalogue applies" 0 1 0 "see $RES/mutation-check.log"
	fi
}

# The module must build without a warning (W=1) and sparse-clean against
# every kernel: the logs of the build the guests load (the Makefile's
# build/kmod/ rule runs sparse, C=1, over every file).  A kernel whose kbuild
# refuses the release's sparse (7.x's headers use __typeof_unqual__, which
# Debian's sparse 0.6.4 cannot parse) gets W=1 alone: counted as one skip.
step_sparse() {
	local k log bad=() nosparse=0
	for k in "${kernels[@]}"; do
		log=$TOP/build/kmod/$k/build.log
		if [ ! -s "$log" ]; then
			bad+=("$k: no build log $log (make modules-all)")
		elif grep -E 'warning|error' "$log"; then
			bad+=("$k: warnings, see $log")
		elif grep -q 'is not available or not up to date' "$log"; then
			echo "sparse: not run on $k: its kbuild refused sparse (W=1 only)"
			nosparse=$((nosparse + 1))
		elif ! grep -q '^ *CHECK ' "$log"; then
			bad+=("$k: sparse did not run (is it installed?), see $log")
		fi
	done
	if [ "${#bad[@]}" = 0 ]; then
		add "module W=1 + sparse clean" 1 0 "$nosparse"
	else
		printf '%s\n' "${bad[@]}"
		add "module W=1 + sparse clean" 0 1 0 "${bad[0]}"
	fi
}

# Installation: make install into a DESTDIR, DKMS for every kernel and
# guests booted with the DKMS-installed module (tests/install/run.sh).
# make check takes DKMS through each release's own dkms once: the newest
# host kernel and every other release's kernel (the host's older kernel
# meets the same dkms and dkms.conf; modules-all builds the module for it).
step_install() {
	local k dkms_kvers=()
	for k in "${kernels[@]}"; do
		[ "$profile" = full ] || selected "$k" "newest,other" || continue
		dkms_kvers+=("$k")
	done
	KVERS="${dkms_kvers[*]}" bash "$TOP/tests/install/run.sh" >"$RES/install.log" 2>&1
	cat "$RES/install.log"
	summary_from_log "install (dkms, make install, no driver)" "$RES/install.log"
}

# ---- kernels ------------------------------------------------------------------
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

# selected KVER SELECTORS: KVER matches one of the comma-separated
# selectors and none of those written !SELECTOR.
selected() {
	local sel hit=1
	for sel in ${2//,/ }; do
		if [[ $sel == !* ]]; then
			selector "$1" "${sel#!}" && return 1
		elif selector "$1" "$sel"; then
			hit=0
		fi
	done
	return $hit
}
selector() {
	case $2 in
	all) return 0 ;;
	newest) [ "$1" = "$newest" ] ;;
	host) [ -z "${other[$1]:-}" ] ;;
	other) [ -n "${other[$1]:-}" ] ;;
	*) [[ $1 == "$2" || $1 == "$2".* || $1 == "$2"-* ]] ;;
	esac
}

# guest OUTDIR VM-RUN-ARGS... -- CMD...: vm-run within the time budget;
# sets $rc.
guest() {
	local out=$1 left t
	shift
	left=$((deadline - $(date +%s)))
	if [ "$left" -lt 60 ]; then
		echo "run-all: no time left in RUN_ALL_BUDGET"
		rc=999
		return
	fi
	t=$vm_timeout
	[ "$left" -lt "$t" ] && t=$left
	rm -rf "$out"
	mkdir -p "$out"
	"$VMRUN" -q -t "$t" -o "$out" "$@"
	rc=$?
}

# The harness's self-tests (they vouch for the rest): one guest whose
# command writes a WARNING into the kernel log and leaves a process holding
# /dev/npu-mem, so vm-run must report the dmesg line and a failed rmmod.
# fd 3 is opened before the background child forks, so the reference is
# held by the time the command returns.
# First the same guest reads a file in its kernel's module tree, which this
# host then replaces (as depmod replaces modules.dep.bin when the
# installation tests run DKMS beside the guests); the guest must read the
# new file, not a mix of its cached old pages and the new ones.
step_selftest() {
	local out=$RES/selftest log=$RES/selftest.log result r probe watcher
	r=$(bash "$TOP/scripts/kernels.sh" --root "$newest") || r=""
	probe=$r/lib/modules/$newest/npu-mem-selftest
	head -c 12288 /dev/zero | tr '\0' a >"$probe"
	rm -rf "$out"
	(
		until [ -e "$out/ready" ]; do sleep 0.2; done
		head -c 16384 /dev/zero | tr '\0' b >"$probe.new" && mv -f "$probe.new" "$probe"
		: >"$out/go"
	) &
	watcher=$!
	# shellcheck disable=SC2016 # expanded in the guest
	guest "$out" -k "$newest" -- sh -c '
		f=/lib/modules/$VM_KVER/npu-mem-selftest n=0
		if head -c 4096 "$f" >/dev/null && : >"$VM_OUTDIR/ready"; then
			until [ -e "$VM_OUTDIR/go" ] || [ $n -ge 3000 ]; do n=$((n + 1)); sleep 0.2; done
			md5sum <"$f" >"$VM_OUTDIR/seen"
		fi
		echo "<4>WARNING: npu-mem scanner self-test" >/dev/kmsg
		[ -c /dev/npu-mem ] || { echo "no /dev/npu-mem"; exit 77; }
		exec 3<>/dev/npu-mem
		sleep 600 <&3 &
		exit 0' 2>"$log"
	kill "$watcher" 2>/dev/null
	wait "$watcher" 2>/dev/null
	if [ -e "$out/go" ] && [ "$(cut -d' ' -f1 "$out/seen" 2>/dev/null)" = \
		"$(md5sum <"$probe" | cut -d' ' -f1)" ]; then
		add "self-test: the guest sees its module tree change" 1 0 0
	else
		add "self-test: the guest sees its module tree change" 0 1 0 \
			"stale or no read of $probe (see $out/seen)"
	fi
	rm -f "$probe" "$probe.new"
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
}

# step_guest LABEL OUTDIR CONFIG KVER SUITE...: one guest of the matrix.
step_guest() {
	local label=$1 out=$2 config=$3 k=$4 t0 p f s note
	shift 4
	echo "$label: $*"
	t0=$(date +%s)
	guest "$out" -c "$config" -k "$k" -- "$SUITES" -r "$out/results.txt" "$@"
	grep -E '^(PASS|FAIL|SKIP) ' "$out/console.log" 2>/dev/null
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
}

# libaclmem's Check programs under valgrind, newest kernel only (slow under
# TCG; the library is the same on every kernel).
step_valgrind() {
	local out=$RES/$newest-valgrind t0 p f s note
	t0=$(date +%s)
	guest "$out" -k "$newest" -e ACLTEST_VALGRIND=only -- \
		"$TOP/tests/lib/guest-run.sh" 2>"$RES/valgrind.log"
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
}

# ---- the run ------------------------------------------------------------------
printf '==== run-all: profile %s, up to %s jobs side by side, kernels: %s ====\n' \
	"$profile" "$JOBS_MAX" "${kernels[*]}"

# One pool, queued longest first so that the last job to end is a short one
# (doc/testing.md has the times): valgrind, the samples' build (their guest
# waits for it), the two longest guests (the matrix lists them first), the
# installation tests, the other guests, the steps of seconds.  The
# installation tests run beside the guests (what DKMS installs into
# /lib/modules is the host's npu_mem, which no guest loads from there, and
# guests read lib/modules uncached, so depmod's new files reach them), but
# after the samples' build: both "make install" with their own PREFIX, which
# remakes build/lib/aclmem.pc, so side by side one installs the other's.
[ -z "$newest" ] || job "$newest-valgrind" step_valgrind
job samples-build step_samples
if [ -z "$newest" ]; then
	add "guests" 0 1 0 "no kernel with /lib/modules/*/build and /boot/vmlinuz-*"
fi
mapfile -t by_newest < <(printf '%s\n' "${kernels[@]}" | tac | sed '/^$/d')
n=0
for row in "${MATRIX[@]}"; do
	# read -a: no pathname expansion of "kernel/dmabuf*" here.
	read -r profiles config sel rest <<<"$row"
	[[ ,$profiles, == *,$profile,* ]] || continue
	read -ra suites <<<"$rest"
	# The samples' programs (suite samples, or some: samples/GLOB) wait
	# for their build.
	after=""
	for arg in "${suites[@]}"; do
		case $arg in samples | samples/*) after=:samples-build ;; esac
	done
	for k in "${by_newest[@]}"; do
		selected "$k" "$sel" || continue
		n=$((n + 1))
		id=$k-$config-$n
		job "$id$after" step_guest "$k $config: ${suites[*]}" "$RES/$id" \
			"$config" "$k" "${suites[@]}"
		[ "$n" != 2 ] || job install:samples-build step_install
	done
done
[ "$n" -ge 2 ] || job install:samples-build step_install
job sparse step_sparse
[ -z "$newest" ] || job selftest step_selftest
job host step_host
job shellcheck step_shellcheck
job mutation-check step_mutation
jobs_run

summary_print "$profile"
[ "$tot_f" = 0 ]
