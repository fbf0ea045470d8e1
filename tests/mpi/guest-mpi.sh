#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# mpi_rxe (suite "mpi", in a vm-run guest): Open MPI over UCX over
# soft-RoCE, the ranks' messages going directly out of and into npu-mem
# buffers.  Two ranks of samples/mpi_allreduce (built by tests/Makefile into
# build/tests/mpi-bin/) under mpirun, pml ucx restricted to the rc_verbs
# transport (UD for its wire-up) on one rxe device, no shared memory: every
# byte between the ranks goes through rxe's packet engine, which copies
# from and to the pages UCX registered.  It passes when
#   - the program says PASS: every rank compared every byte it received,
#     by MPI_Send/MPI_Recv and by MPI_Allreduce, HUGE_FIRST and NORMAL_ONLY;
#   - each of those buffers (both ranks, send and receive, both policies)
#     lies inside a memory region its own rank registered successfully
#     (ibv_reg_mr_iova2, logged by build/tests/mpi-bin/libibv_reg_trace.so:
#     Debian's UCX is built without its debug log, so UCX_LOG_LEVEL cannot
#     show registrations);
#   - UCX chose rc_verbs on the rxe device for the tag lane (its info log);
#   - rxe's own counters saw at least the point-to-point bytes go by.
#
# Why one rxe device rather than one per network namespace: on the kernels
# before rxe learnt network namespaces (6.12 among them), rxe's UDP socket
# and its route look-ups live in the initial namespace only, so two ranks in
# two namespaces cannot reach each other through it; two rxe devices on the
# two ends of one veth pair in the initial namespace do not talk either
# (tests/common/nmtest_rdma.h).  Both ranks on one device take rxe's
# loopback path: the whole RC protocol (segmentation, ACKs, RDMA READs
# into and out of registered memory) without the wire.  doc/mpi.md says how
# to run the same program across two hosts.
#
# Exit 77 (skip) outside a guest, without /dev/npu-mem, without Open MPI or
# the built helpers, or where rxe cannot be set up.
set -uo pipefail

self=$(readlink -f "$0")
TOP=${self%/build/tests/*}
BIN=$TOP/build/tests/mpi-bin
RXE=nmmpirxe0
VETH_A=nmmpiveth0
VETH_B=nmmpiveth1
BYTES=$((4 << 20))

skip() { echo "$*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "${VM_RUN:-}" = 1 ] || skip "runs in a vm-run guest only: it adds network and RDMA devices"
[ -c /dev/npu-mem ] || skip "no /dev/npu-mem: the module is not loaded"
command -v mpirun >/dev/null || skip "no mpirun (openmpi-bin, scripts/deps.sh)"
if [ ! -x "$BIN/mpi_allreduce" ] || [ ! -f "$BIN/libibv_reg_trace.so" ]; then
	skip "no $BIN/mpi_allreduce or libibv_reg_trace.so (make tests, with mpicxx)"
fi

work=$(mktemp -d) || fail "mktemp"
teardown() {
	rdma link delete "$RXE" 2>/dev/null
	ip link del "$VETH_A" 2>/dev/null
	rm -rf "$work"
}
trap teardown EXIT

# Loaded by hand, as nm_rxe_setup() does (its comment says why).  lo must be
# up: mpirun's own channels and UCX's address exchange go through it.
modprobe -q crc32_generic
if ! out=$(set -e; modprobe rdma_rxe; modprobe ib_uverbs; modprobe veth
	ip link set lo up
	ip link add "$VETH_A" type veth peer name "$VETH_B"
	sysctl -qw "net.ipv6.conf.$VETH_A.accept_dad=0"
	ip addr add 10.77.17.1/24 dev "$VETH_A"
	ip link set "$VETH_A" up
	ip link set "$VETH_B" up
	rdma link add "$RXE" type rxe netdev "$VETH_A" 2>&1); then
	skip "soft-RoCE (rdma_rxe over a veth) cannot be set up here: $out"
fi

# The port becomes active, and its GIDs appear, from rxe's work queue: poll
# for both, with a deadline (a loaded guest runs it late).  UCX is given
# the IPv6 link-local GID (RoCE v2), not the IPv4-mapped one: over that
# one, UCX 1.13's UD transport, which wires up rc, drops what rxe delivers
# (the endpoints time out after rxe counted every packet sent and
# received), while over the link-local one rc and UD work.  The veth
# skips duplicate address detection, so that the address is usable at
# once rather than tentative for a second or more.
port=/sys/class/infiniband/$RXE/ports/1
deadline=$((SECONDS + 60))
gid_index=""
while :; do
	state=""
	read -r state <"$port/state" 2>/dev/null
	if [[ $state == *ACTIVE ]]; then
		for i in 0 1 2 3; do
			gid="" type=""
			read -r gid <"$port/gids/$i" 2>/dev/null
			read -r type <"$port/gid_attrs/types/$i" 2>/dev/null
			if [[ $gid == fe80:* && $type == "RoCE v2" ]]; then
				gid_index=$i
				break 2
			fi
		done
	fi
	[ "$SECONDS" -lt "$deadline" ] ||
		fail "$RXE: port '$state', no RoCE v2 link-local GID after 60 s"
	sleep 0.1
done
ip -6 addr show dev "$VETH_A" | grep -q 'scope link.*tentative' &&
	fail "$VETH_A: link-local address still tentative with DAD off"
echo "ok: $RXE active, GID $gid_index $gid"

counter() { local v; read -r v <"$port/hw_counters/$1"; echo "$v"; }
sent0=$(counter sent_pkts)

# mpirun wants a host name, which the guest has not got: the ranks get one
# in a UTS namespace of their own.  UCX: rc_verbs (and ud_verbs, which rc
# needs to wire up) on the rxe device's link-local GID, and self for a rank's messages to
# itself; no shared-memory transport, so nothing bypasses rxe.
# shellcheck disable=SC2016 # expanded by that sh
timeout -k 10 240 unshare -u sh -c 'hostname nmmpi && exec "$@"' _ \
	mpirun --allow-run-as-root -np 2 --host localhost:2 \
	--mca pml ucx --mca btl self --mca osc ^ucx \
	-x LD_LIBRARY_PATH="$TOP/build/lib" \
	-x LD_PRELOAD="$BIN/libibv_reg_trace.so" -x NM_IBV_TRACE="$work/reg.txt" \
	-x UCX_TLS=rc,self -x UCX_NET_DEVICES="$RXE:1" -x UCX_IB_GID_INDEX="$gid_index" \
	-x UCX_LOG_LEVEL=info \
	stdbuf -oL "$BIN/mpi_allreduce" "$BYTES" >"$work/out.txt" 2>&1
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

grep -q "tag(.*rc_verbs/$RXE:1" "$work/out.txt" ||
	fail "UCX's info log names no tag lane on rc_verbs/$RXE:1"

# The point-to-point round alone moves 2 ranks x 2 policies x BYTES, in
# packets of at most 4 KiB.
sent=$(($(counter sent_pkts) - sent0))
[ "$sent" -ge $((4 * BYTES / 4096)) ] ||
	fail "$RXE sent $sent packets, fewer than the data needs"
echo "ok: $RXE sent $sent packets"
echo "PASS mpi_rxe"
