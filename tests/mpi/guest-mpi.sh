#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# mpi_rxe (suite "mpi", in a vm-run guest): Open MPI over UCX over
# soft-RoCE, the ranks' messages going directly out of and into npu-mem
# buffers.  Two ranks of samples/mpi_allreduce (built by tests/Makefile into
# build/tests/mpi-bin/) under mpirun, pml ucx restricted to the rc_verbs
# transport (UD for its wire-up) on one rxe device, no shared memory: every
# byte between the ranks goes through rxe's packet engine, which copies
# from and to the pages UCX registered.  Where rxe has a socket per network
# namespace, each rank runs in a namespace of its own with an rxe device on
# its end of a veth pair; elsewhere both share one device (rxe-mpi.sh).
# It passes when
#   - the program says PASS: every rank compared every byte it received,
#     by MPI_Send/MPI_Recv and by MPI_Allreduce, HUGE_FIRST and NORMAL_ONLY;
#   - each of those buffers (both ranks, send and receive, both policies)
#     lies inside a memory region its own rank registered successfully
#     (ibv_reg_mr_iova2, logged by build/tests/mpi-bin/libibv_reg_trace.so:
#     Debian's UCX is built without its debug log, so UCX_LOG_LEVEL cannot
#     show registrations);
#   - UCX chose rc_verbs on each rxe device for the tag lane (its info log);
#   - each rxe device's own counters saw at least the point-to-point bytes
#     it carries go by.
#
# tests/mpi/rxe-mpi.sh sets up the devices and says when there is one, not
# one per network namespace.  doc/mpi.md says how to run the same program
# across two hosts.
#
# Exit 77 (skip) outside a guest, without /dev/npu-mem, without Open MPI or
# the built helpers, or where rxe cannot be set up.
set -uo pipefail

self=$(readlink -f "$0")
TOP=${self%/build/tests/*}
BIN=$TOP/build/tests/mpi-bin
BYTES=$((4 << 20))

skip() { echo "$*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "${VM_RUN:-}" = 1 ] || skip "runs in a vm-run guest only: it adds network and RDMA devices"
[ -c /dev/npu-mem ] || skip "no /dev/npu-mem: the module is not loaded"
command -v mpirun >/dev/null || skip "no mpirun (openmpi-bin, scripts/deps.sh)"
if [ ! -x "$BIN/mpi_allreduce" ] || [ ! -f "$BIN/libibv_reg_trace.so" ]; then
	skip "no $BIN/mpi_allreduce or libibv_reg_trace.so (make tests, with mpicxx)"
fi

# shellcheck source=tests/mpi/rxe-mpi.sh
. "$TOP/tests/mpi/rxe-mpi.sh"
work=$(mktemp -d) || fail "mktemp"
teardown() {
	mpi_rxe_teardown
	rm -rf "$work"
}
trap teardown EXIT

mpi_rxe_setup
case $? in
0) ;;
1) skip "$MPI_RXE_WHY" ;;
*) fail "$MPI_RXE_WHY" ;;
esac
declare -A sent0 rcvd0
for dev in "${MPI_RXE_DEVS[@]}"; do
	sent0[$dev]=$(mpi_rxe_counter "$dev" sent_pkts)
	rcvd0[$dev]=$(mpi_rxe_counter "$dev" rcvd_pkts)
done

mpi_rxe_mpirun -x LD_PRELOAD="$BIN/libibv_reg_trace.so" \
	-x NM_IBV_TRACE="$work/reg.txt" -x UCX_LOG_LEVEL=info \
	"$BIN/mpi_allreduce" "$BYTES" >"$work/out.txt" 2>&1
rc=$?
cat "$work/out.txt"
echo "---- registrations"
cat "$work/reg.txt" 2>/dev/null
[ "$rc" = 0 ] || fail "mpirun exit status $rc"
grep -qx 'PASS mpi_allreduce' "$work/out.txt" || fail "no 'PASS mpi_allreduce'"

# Every buffer inside a region its rank registered.
nbuf=0
while read -r _ rank _ pid _ policy kind range; do
	lo=$((${range%-*})) hi=$((${range#*-})) found=0
	while read -r _ _ rpid _ addr _ len status _; do
		if [ "$rpid" != "$pid" ] || [ "$status" != ok ]; then continue; fi
		if [ $((addr)) -le "$lo" ] && [ $((addr + len)) -ge "$hi" ]; then
			found=1
			break
		fi
	done <"$work/reg.txt"
	[ "$found" = 1 ] ||
		fail "rank $rank: $policy $kind buffer $range is in no region that pid $pid registered"
	echo "ok: rank $rank $policy $kind buffer $range registered"
	nbuf=$((nbuf + 1))
done < <(grep -E '^rank [0-9]+ pid [0-9]+ buffer ' "$work/out.txt")
[ "$nbuf" = 8 ] || fail "$nbuf buffer lines, want 8 (2 ranks, 2 policies, send and receive)"

# The point-to-point round alone moves 2 ranks x 2 policies x BYTES, in
# packets of at most 4 KiB: each rank's half leaves its device, and with a
# device per rank enters the other.
want=$((4 * BYTES / 4096 / ${#MPI_RXE_DEVS[@]}))
for dev in "${MPI_RXE_DEVS[@]}"; do
	grep -q "tag(.*rc_verbs/$dev:1" "$work/out.txt" ||
		fail "UCX's info log names no tag lane on rc_verbs/$dev:1"
	sent=$(($(mpi_rxe_counter "$dev" sent_pkts) - sent0[$dev]))
	rcvd=$(($(mpi_rxe_counter "$dev" rcvd_pkts) - rcvd0[$dev]))
	[ "$sent" -ge "$want" ] ||
		fail "$dev sent $sent packets, fewer than the data needs ($want)"
	[ "$rcvd" -ge "$want" ] ||
		fail "$dev received $rcvd packets, fewer than the data needs ($want)"
	echo "ok: $dev ($MPI_RXE_LAYOUT layout) sent $sent and received $rcvd packets"
done
echo "PASS mpi_rxe"
