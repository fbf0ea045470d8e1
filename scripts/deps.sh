#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install, from Debian's packages only, everything building and testing needs.
# Idempotent: packages already present are skipped, and apt is not touched at
# all when nothing is missing.  Adds bookworm-backports for the 6.12 kernel;
# scripts/kernels.sh adds bullseye's 5.10 and trixie-backports' 7.x.
#   scripts/deps.sh        everything (make check)
#   scripts/deps.sh --run  what make run's demo needs: a compiler, QEMU,
#                          Debian 12's own kernel with its headers, python3's
#                          headers and json-c (the library); nothing else
set -euo pipefail

[ "$(id -u)" = 0 ] || { echo "deps: must run as root (apt-get)" >&2; exit 1; }

export DEBIAN_FRONTEND=noninteractive

BASE_PKGS="build-essential gcc-multilib pkg-config make python3 python3-dev
	python3-numpy qemu-system-x86 busybox-static cpio kmod check libdrm-dev sparse dwarves
	linux-image-amd64 linux-headers-amd64 valgrind dkms udev libjson-c-dev cmake
	liburing-dev libibverbs-dev ibverbs-providers rdma-core shellcheck
	openmpi-bin libopenmpi-dev libucx0 ucx-utils"
BPO_PKGS="linux-image-amd64 linux-headers-amd64"
RUN_PKGS="build-essential pkg-config make python3 python3-dev qemu-system-x86
	busybox-static cpio kmod linux-image-amd64 linux-headers-amd64 libjson-c-dev"

missing() {
	local p out=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || out="$out $p"
	done
	echo "$out"
}

# make run: the demo's packages only.
if [ "${1:-}" = --run ]; then
	# shellcheck disable=SC2086 # a list of package names
	todo=$(missing $RUN_PKGS)
	if [ -n "$todo" ]; then
		apt-get update -qq
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $todo
	fi
	ls /lib/modules/*/build/Makefile >/dev/null 2>&1 ||
		{ echo "deps: no kernel headers in /lib/modules/*/build" >&2; exit 1; }
	echo "deps: ok (make run)"
	exit 0
fi

bpo_list=/etc/apt/sources.list.d/bookworm-backports.list
need_update=0
if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "deb http://deb.debian.org/debian bookworm-backports main" >"$bpo_list"
	need_update=1
fi

have_bpo_kernel() {
	ls /lib/modules/6.1[2-9]*/build/Makefile >/dev/null 2>&1
}

# shellcheck disable=SC2086 # a list of package names
todo=$(missing $BASE_PKGS)
if [ -n "$todo" ] || ! have_bpo_kernel || [ "$need_update" = 1 ]; then
	if [ "$need_update" = 1 ] || [ ! -d /var/lib/apt/lists ] ||
	   [ -z "$(ls /var/lib/apt/lists/*bookworm-backports* 2>/dev/null)" ] ||
	   [ -n "$todo" ]; then
		apt-get update -qq
	fi
	# shellcheck disable=SC2086 # lists of package names
	[ -n "$todo" ] && apt-get install -y -qq --no-install-recommends $todo
	if ! have_bpo_kernel; then
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends \
			-t bookworm-backports $BPO_PKGS
	fi
fi
# 5.10 and 7.x, whose headers only build in a root of their own Debian
# release (made once, cached; NPU_MEM_FOREIGN_KERNELS=0 skips them).
bash "$(dirname "$(readlink -f "$0")")/kernels.sh"
# Kernels' vmlinuz must be readable by the (root) harness; nothing else to do.
kvers=""
for d in /lib/modules/*/build; do
	d=${d%/build}
	kvers="$kvers${d#/lib/modules/} "
done
# The roots' kernels (NPU_MEM_FOREIGN_KERNELS=1); grep finds none otherwise.
kvers="$kvers$(bash "$(dirname "$(readlink -f "$0")")/kernels.sh" --kvers |
	{ grep -vxF -f <(ls /lib/modules) || true; } | tr '\n' ' ')"
echo "deps: ok ($kvers)"
