# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# rxe-mpi.sh: sourced by the MPI test (tests/mpi/guest-mpi.sh) and the MPI
# benchmark (bench/mpi/guest.sh), in a vm-run guest, as root: soft-RoCE on
# a veth pair, and mpirun with two ranks whose UCX talks through it.
#
#   mpi_rxe_setup        make the devices; 0, or 1 with the reason in
#                        $MPI_RXE_WHY (cannot be had: skip), or 2 (they came
#                        up wrong: fail).  Sets MPI_RXE_LAYOUT and
#                        MPI_RXE_DEVS (below).
#   mpi_rxe_teardown     remove them
#   mpi_rxe_counter DEV NAME
#                        one of DEV's rxe hw_counters (sent_pkts...)
#   mpi_rxe_mpirun [-x VAR=VAL]... PROG ARGS...
#                        two ranks of PROG, at most 240 s
#
# Two layouts, MPI_RXE_LAYOUT:
#   netns  one network namespace per rank, joined by the veth pair, an rxe
#          device on each end: rank 0 on $MPI_RXE in $MPI_RXE_NS_A, rank 1
#          on $MPI_RXE_B in $MPI_RXE_NS_B.  Every byte leaves one rxe device
#          as UDP, crosses the veth and enters the other: two hosts in one.
#          mpirun starts rank 1 through tests/mpi/netns-rsh.sh, its rsh agent.
#   one    both ranks on $MPI_RXE, in the initial namespace, taking rxe's
#          loopback path: the whole RC protocol (segmentation, ACKs, RDMA
#          READs into and out of registered memory) without the wire.
# The first where rxe keeps a UDP socket in each namespace that has an rxe
# device (rxe_ns.c, 7.x); the second where it does not (6.12 and older): its
# socket and route look-ups live in the initial namespace only, so ranks in
# two namespaces cannot reach each other through it (doc/mpi.md has what
# was measured), and two rxe devices on the two ends of one veth pair in
# the initial namespace send to each other through lo, where no rxe device
# listens (tests/common/nmtest_rdma.h).  Which one is decided by that
# behaviour, not by the kernel's version: setup makes the two namespaces,
# and keeps them if rank 1's namespace got a socket on RoCE v2's port.
MPI_RXE=nmmpirxe0
MPI_RXE_B=nmmpirxe1
MPI_RXE_VETH_A=nmmpiveth0
MPI_RXE_VETH_B=nmmpiveth1
MPI_RXE_NS_A=nmmpia
MPI_RXE_NS_B=nmmpib
MPI_RXE_SUBNET=10.77.17.0/24
MPI_RXE_LAYOUT=""
MPI_RXE_DEVS=()
# Per device: the GID index UCX is to use.
declare -A MPI_RXE_GID_INDEX=()

mpi_rxe_teardown() {
	rdma link delete "$MPI_RXE" 2>/dev/null
	rdma link delete "$MPI_RXE_B" 2>/dev/null
	ip link del "$MPI_RXE_VETH_A" 2>/dev/null
	ip netns del "$MPI_RXE_NS_A" 2>/dev/null
	ip netns del "$MPI_RXE_NS_B" 2>/dev/null
}

# _mpi_rxe_wait DEV: wait for DEV's port to become active and to have its
# RoCE v2 link-local GID, and note that GID's index.  The port and its GIDs
# come up from rxe's work queue: poll for both, with a deadline (a loaded
# guest runs it late).  UCX is given the IPv6 link-local GID (RoCE v2), not
# the IPv4-mapped one: over that one, UCX 1.13's UD transport, which wires
# up rc, drops what rxe delivers (its endpoints time out after rxe counted
# every packet sent and received), while over the link-local one rc and UD
# work.  The veths skip duplicate address detection, so that the address is
# usable at once rather than tentative for a second or more.
_mpi_rxe_wait() {
	local dev=$1 port=/sys/class/infiniband/$1/ports/1
	local state gid type i deadline=$((SECONDS + 60))

	while :; do
		state=""
		read -r state <"$port/state" 2>/dev/null
		if [[ $state == *ACTIVE ]]; then
			for i in 0 1 2 3; do
				gid="" type=""
				read -r gid <"$port/gids/$i" 2>/dev/null
				read -r type <"$port/gid_attrs/types/$i" 2>/dev/null
				if [[ $gid == fe80:* && $type == "RoCE v2" ]]; then
					MPI_RXE_GID_INDEX[$dev]=$i
					echo "$dev active, GID $i $gid"
					return 0
				fi
			done
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			MPI_RXE_WHY="$dev: port '$state', no RoCE v2 link-local GID after 60 s"
			return 2
		fi
		sleep 0.1
	done
}

# _mpi_rxe_up NS VETH ADDR RXE: VETH in namespace NS (or the initial one
# for ""), up with ADDR, and the rxe device RXE on it, made in NS.
_mpi_rxe_up() {
	local ns=(ip netns exec "$1") veth=$2 addr=$3 rxe=$4

	[ -n "$1" ] || ns=()
	[ -z "$1" ] || ip link set "$veth" netns "$1" || return
	"${ns[@]}" ip link set lo up &&
		"${ns[@]}" sysctl -qw "net.ipv6.conf.$veth.accept_dad=0" &&
		"${ns[@]}" ip addr add "$addr" dev "$veth" &&
		"${ns[@]}" ip link set "$veth" up &&
		"${ns[@]}" rdma link add "$rxe" type rxe netdev "$veth"
}

# _mpi_rxe_ns_socket NS: whether NS has a UDP socket on port 4791 (RoCE v2).
_mpi_rxe_ns_socket() {
	ip netns exec "$1" cat /proc/net/udp /proc/net/udp6 2>/dev/null |
		awk '$2 ~ /:12B7$/ { found = 1 } END { exit !found }'
}

mpi_rxe_setup() {
	local dev

	MPI_RXE_WHY=""
	MPI_RXE_LAYOUT=""
	MPI_RXE_DEVS=()
	mpi_rxe_teardown
	# Loaded by hand, as nm_rxe_setup() does (its comment says why).  lo
	# must be up: mpirun's own channels and UCX's address exchange use it.
	modprobe -q crc32_generic
	if ! MPI_RXE_WHY=$(set -e; modprobe rdma_rxe; modprobe ib_uverbs
		modprobe veth
		ip link set lo up
		ip link add "$MPI_RXE_VETH_A" type veth peer name "$MPI_RXE_VETH_B" 2>&1); then
		MPI_RXE_WHY="soft-RoCE (rdma_rxe over a veth) cannot be set up here: $MPI_RXE_WHY"
		mpi_rxe_teardown
		return 1
	fi

	if ! ip netns add "$MPI_RXE_NS_A" || ! ip netns add "$MPI_RXE_NS_B" ||
		! _mpi_rxe_up "$MPI_RXE_NS_A" "$MPI_RXE_VETH_A" 10.77.17.1/24 "$MPI_RXE" ||
		! _mpi_rxe_up "$MPI_RXE_NS_B" "$MPI_RXE_VETH_B" 10.77.17.2/24 "$MPI_RXE_B"; then
		echo "no rxe devices in two network namespaces here: both ranks on one device"
	elif ! _mpi_rxe_ns_socket "$MPI_RXE_NS_B"; then
		echo "rxe has no socket in $MPI_RXE_NS_B, its devices' namespace: both ranks on one device"
	else
		MPI_RXE_LAYOUT=netns
		MPI_RXE_DEVS=("$MPI_RXE" "$MPI_RXE_B")
	fi
	if [ "$MPI_RXE_LAYOUT" != netns ]; then
		mpi_rxe_teardown
		if ! MPI_RXE_WHY=$(set -e
			ip link add "$MPI_RXE_VETH_A" type veth peer name "$MPI_RXE_VETH_B"
			ip link set "$MPI_RXE_VETH_B" up
			_mpi_rxe_up "" "$MPI_RXE_VETH_A" 10.77.17.1/24 "$MPI_RXE" 2>&1); then
			MPI_RXE_WHY="soft-RoCE (rdma_rxe over a veth) cannot be set up here: $MPI_RXE_WHY"
			mpi_rxe_teardown
			return 1
		fi
		MPI_RXE_LAYOUT=one
		MPI_RXE_DEVS=("$MPI_RXE")
	fi
	for dev in "${MPI_RXE_DEVS[@]}"; do
		_mpi_rxe_wait "$dev" || return
	done
	echo "layout $MPI_RXE_LAYOUT: ${MPI_RXE_DEVS[*]}"
}

mpi_rxe_counter() {
	local v
	read -r v <"/sys/class/infiniband/$1/ports/1/hw_counters/$2"
	echo "$v"
}

# mpirun wants a host name, which the guest has not got: the ranks get one
# in a UTS namespace of their own, in the netns layout the name of their
# network namespace (which netns-rsh.sh takes for a host's).  UCX: rc_verbs
# (and ud_verbs, which rc needs to wire up) on the rank's rxe device and its
# link-local GID, and self for a rank's messages to itself; no
# shared-memory transport, so nothing bypasses rxe.  A rank finds its device
# in NM_MPI_RXE_MAP by the namespace it runs in.  The library comes from
# the build tree.
mpi_rxe_mpirun() {
	local x=() map="" run=() hosts=(--host localhost:2)

	while [ "${1:-}" = -x ]; do
		x+=(-x "$2")
		shift 2
	done
	if [ "$MPI_RXE_LAYOUT" = netns ]; then
		map="$MPI_RXE_NS_A=$MPI_RXE:1:${MPI_RXE_GID_INDEX[$MPI_RXE]}"
		map+=" $MPI_RXE_NS_B=$MPI_RXE_B:1:${MPI_RXE_GID_INDEX[$MPI_RXE_B]}"
		run=(ip netns exec "$MPI_RXE_NS_A")
		hosts=(--host "$MPI_RXE_NS_A:1,$MPI_RXE_NS_B:1"
			--mca plm_rsh_agent "$TOP/tests/mpi/netns-rsh.sh"
			--mca oob_tcp_if_include "$MPI_RXE_SUBNET")
	else
		map="=$MPI_RXE:1:${MPI_RXE_GID_INDEX[$MPI_RXE]}"
	fi
	# shellcheck disable=SC2016 # expanded by those shells
	timeout -k 10 240 "${run[@]}" unshare -u sh -c 'hostname "$0" && exec "$@"' \
		"${run[3]:-nmmpi}" \
		mpirun --allow-run-as-root -np 2 "${hosts[@]}" \
		--mca pml ucx --mca btl self --mca osc ^ucx \
		-x LD_LIBRARY_PATH="$TOP/build/lib" \
		-x UCX_TLS=rc,self -x NM_MPI_RXE_MAP="$map" "${x[@]}" \
		sh -c 'ns=$(ip netns identify 2>/dev/null)
		for m in $NM_MPI_RXE_MAP; do
			[ "${m%%=*}" = "$ns" ] || continue
			m=${m#*=}
			export UCX_NET_DEVICES=${m%:*} UCX_IB_GID_INDEX=${m##*:}
		done
		exec stdbuf -oL "$@"' _ "$@"
}
