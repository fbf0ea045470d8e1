# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# rxe-mpi.sh: sourced by the MPI test (tests/mpi/guest-mpi.sh) and the MPI
# benchmark (bench/mpi/guest.sh), in a vm-run guest, as root: one soft-RoCE
# device on a veth, and mpirun with two ranks whose UCX talks through it.
#
#   mpi_rxe_setup        make the device; 0, or 1 with the reason in
#                        $MPI_RXE_WHY (cannot be had: skip), or 2 (it came
#                        up wrong: fail).  Sets MPI_RXE_PORT (sysfs) and
#                        MPI_RXE_GID_INDEX.
#   mpi_rxe_teardown     remove it
#   mpi_rxe_counter NAME one of rxe's hw_counters (sent_pkts...)
#   mpi_rxe_mpirun [-x VAR=VAL]... PROG ARGS...
#                        two ranks of PROG, at most 240 s
#
# Why one rxe device rather than one per network namespace: on the kernels
# before rxe learnt network namespaces (6.12 among them), rxe's UDP socket
# and its route look-ups live in the initial namespace only, so two ranks
# in two namespaces cannot reach each other through it; two rxe devices on
# the two ends of one veth pair in the initial namespace do not talk either
# (tests/common/nmtest_rdma.h).  Both ranks on one device take rxe's
# loopback path: the whole RC protocol (segmentation, ACKs, RDMA READs into
# and out of registered memory) without the wire.
MPI_RXE=nmmpirxe0
MPI_RXE_VETH_A=nmmpiveth0
MPI_RXE_VETH_B=nmmpiveth1

mpi_rxe_teardown() {
	rdma link delete "$MPI_RXE" 2>/dev/null
	ip link del "$MPI_RXE_VETH_A" 2>/dev/null
}

mpi_rxe_setup() {
	local state gid type i deadline

	MPI_RXE_WHY=""
	mpi_rxe_teardown
	# Loaded by hand, as nm_rxe_setup() does (its comment says why).  lo
	# must be up: mpirun's own channels and UCX's address exchange use it.
	modprobe -q crc32_generic
	if ! MPI_RXE_WHY=$(set -e; modprobe rdma_rxe; modprobe ib_uverbs
		modprobe veth
		ip link set lo up
		ip link add "$MPI_RXE_VETH_A" type veth peer name "$MPI_RXE_VETH_B"
		sysctl -qw "net.ipv6.conf.$MPI_RXE_VETH_A.accept_dad=0"
		ip addr add 10.77.17.1/24 dev "$MPI_RXE_VETH_A"
		ip link set "$MPI_RXE_VETH_A" up
		ip link set "$MPI_RXE_VETH_B" up
		rdma link add "$MPI_RXE" type rxe netdev "$MPI_RXE_VETH_A" 2>&1); then
		MPI_RXE_WHY="soft-RoCE (rdma_rxe over a veth) cannot be set up here: $MPI_RXE_WHY"
		mpi_rxe_teardown
		return 1
	fi

	# The port becomes active, and its GIDs appear, from rxe's work
	# queue: poll for both, with a deadline (a loaded guest runs it late).
	# UCX is given the IPv6 link-local GID (RoCE v2), not the IPv4-mapped
	# one: over that one, UCX 1.13's UD transport, which wires up rc, drops
	# what rxe delivers (its endpoints time out after rxe counted every
	# packet sent and received), while over the link-local one rc and UD
	# work.  The veth skips duplicate address detection, so that the
	# address is usable at once rather than tentative for a second or more.
	MPI_RXE_PORT=/sys/class/infiniband/$MPI_RXE/ports/1
	MPI_RXE_GID_INDEX=""
	deadline=$((SECONDS + 60))
	while :; do
		state=""
		read -r state <"$MPI_RXE_PORT/state" 2>/dev/null
		if [[ $state == *ACTIVE ]]; then
			for i in 0 1 2 3; do
				gid="" type=""
				read -r gid <"$MPI_RXE_PORT/gids/$i" 2>/dev/null
				read -r type <"$MPI_RXE_PORT/gid_attrs/types/$i" 2>/dev/null
				if [[ $gid == fe80:* && $type == "RoCE v2" ]]; then
					MPI_RXE_GID_INDEX=$i
					break 2
				fi
			done
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			MPI_RXE_WHY="$MPI_RXE: port '$state', no RoCE v2 link-local GID after 60 s"
			return 2
		fi
		sleep 0.1
	done
	if ip -6 addr show dev "$MPI_RXE_VETH_A" | grep -q 'scope link.*tentative'; then
		MPI_RXE_WHY="$MPI_RXE_VETH_A: link-local address tentative with DAD off"
		return 2
	fi
	echo "$MPI_RXE active, GID $MPI_RXE_GID_INDEX $gid"
}

mpi_rxe_counter() {
	local v
	read -r v <"$MPI_RXE_PORT/hw_counters/$1"
	echo "$v"
}

# mpirun wants a host name, which the guest has not got: the ranks get one
# in a UTS namespace of their own.  UCX: rc_verbs (and ud_verbs, which rc
# needs to wire up) on the rxe device's link-local GID, and self for a
# rank's messages to itself; no shared-memory transport, so nothing
# bypasses rxe.  The library comes from the build tree.
mpi_rxe_mpirun() {
	local x=()

	while [ "${1:-}" = -x ]; do
		x+=(-x "$2")
		shift 2
	done
	# shellcheck disable=SC2016 # expanded by that sh
	timeout -k 10 240 unshare -u sh -c 'hostname nmmpi && exec "$@"' _ \
		mpirun --allow-run-as-root -np 2 --host localhost:2 \
		--mca pml ucx --mca btl self --mca osc ^ucx \
		-x LD_LIBRARY_PATH="$TOP/build/lib" \
		-x UCX_TLS=rc,self -x UCX_NET_DEVICES="$MPI_RXE:1" \
		-x UCX_IB_GID_INDEX="$MPI_RXE_GID_INDEX" "${x[@]}" \
		stdbuf -oL "$@"
}
