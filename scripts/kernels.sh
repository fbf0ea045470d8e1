#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Debian kernels whose headers cannot build on this Debian 12 host, each in a
# minimal root of its own release, made with Debian's mmdebstrap and cached in
# ${NPU_MEM_ROOTS:-/var/cache/npu-mem/roots}/<release>/:
#   bullseye          5.10 (bullseye-security's newest): its headers want
#                     gcc-10, which Debian 12 does not have
#   trixie-backports  7.x: its linux-kbuild needs libc6 >= 2.38 (Debian 12
#                     has 2.36)
# A root holds make, that release's gcc, sparse, kmod, dkms and the kernel's
# linux-image (vmlinuz and lib/modules for the guests: vm-run boots it) and
# linux-headers.  Guests keep the host's root for user space: Debian 12's
# programs run on both kernels.  The suites and mirror are on mmdebstrap's
# command line; the host's apt sources are never touched.
#
#   scripts/kernels.sh             make the roots that are missing (root)
#   scripts/kernels.sh --kvers     every kernel release: the host's
#                                  (/lib/modules/*/build) and the roots'
#   scripts/kernels.sh --root KVER the root holding KVER (nothing, status 1,
#                                  for a host kernel)
#   scripts/kernels.sh --print-dir the roots' directory
#   scripts/kernels.sh --run KVER CMD...
#                                  CMD where KVER's headers work: here for a
#                                  host kernel, else chrooted into its root
#                                  with this tree (and NPU_MEM_BIND, a list
#                                  of directories) bind-mounted at the same
#                                  paths, in the same directory, in a mount
#                                  namespace of its own (nothing to undo)
#
# A root is made in <release>.new and renamed once complete, its .done
# marker written last; a root with a .done is used as it is, so this is
# idempotent and an interrupted run is redone.
#
# On unless NPU_MEM_FOREIGN_KERNELS=0: then no root is made and --kvers
# lists the host's kernels only, so make check and make modules-all leave
# the roots' kernels alone (make run does so: its demo needs one kernel).
set -euo pipefail

ROOTS=${NPU_MEM_ROOTS:-/var/cache/npu-mem/roots}
MIRROR=${NPU_MEM_DEB_MIRROR:-http://deb.debian.org/debian}
SECURITY=${NPU_MEM_DEB_SECURITY:-http://deb.debian.org/debian-security}
RELEASES="bullseye trixie-backports"

# The kernel releases in ROOT (one; a root holds only its release's).
root_kvers() {
	local m
	for m in "$1"/lib/modules/*/; do
		[ -e "$m/modules.dep" ] && basename "$m"
	done
	return 0
}

case ${1:-} in
--print-dir) echo "$ROOTS"; exit 0 ;;
--kvers)
	{
		for b in /lib/modules/*/build; do
			[ -e "$b" ] && basename "$(dirname "$b")"
		done
		[ "${NPU_MEM_FOREIGN_KERNELS:-1}" = 1 ] || exit 0
		for d in "$ROOTS"/*/.done; do
			[ -e "$d" ] && root_kvers "$(dirname "$d")"
		done
	} | sort -Vu
	exit 0 ;;
--root)
	[ -n "${2:-}" ] || { echo "kernels: --root KVER" >&2; exit 2; }
	[ ! -e "/lib/modules/$2/build" ] || exit 1
	for d in "$ROOTS"/*/.done; do
		[ -e "$d" ] || continue
		if [ -e "$(dirname "$d")/lib/modules/$2/modules.dep" ]; then
			dirname "$d"
			exit 0
		fi
	done
	exit 1 ;;
--run)
	[ $# -ge 3 ] || { echo "kernels: --run KVER CMD..." >&2; exit 2; }
	kver=$2
	shift 2
	root=$("$0" --root "$kver") || {
		[ -e "/lib/modules/$kver/build" ] || { echo "kernels: no kernel $kver" >&2; exit 1; }
		exec "$@"
	}
	top=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
	export NPU_MEM_BIND="$top ${NPU_MEM_BIND:-}"
	# The kernel build needs /proc only for the odd $(shell); dkms more.
	# shellcheck disable=SC2016 # expanded by the inner shell
	exec unshare -m --propagation private -- bash -c '
		set -e
		root=$1 cwd=$2
		shift 2
		for d in $NPU_MEM_BIND; do
			mkdir -p "$root$d"
			mount --bind "$d" "$root$d"
		done
		mount -t proc proc "$root/proc"
		exec chroot "$root" /usr/bin/env -C "$cwd" "$@"' \
		kernels-run "$root" "$PWD" "$@"
	;;
"") ;;
*) sed -n '/^#   scripts/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac

msg() { echo "kernels: $*" >&2; }
[ "${NPU_MEM_FOREIGN_KERNELS:-1}" = 1 ] || exit 0
[ "$(id -u)" = 0 ] || { msg "must run as root (mmdebstrap)"; exit 1; }
if ! command -v mmdebstrap >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap
fi

# The packages the module's build, sparse check and DKMS test need, no
# recommends.  The kernel comes from the image and headers meta packages,
# from backports where the release's kernel lives there.
PKGS=make,gcc,libc6-dev,sparse,kmod,dkms
mkdir -p "$ROOTS"
exec 9>"$ROOTS/.lock"
flock 9
for rel in $RELEASES; do
	root=$ROOTS/$rel
	[ -e "$root/.done" ] && continue
	hooks=()
	case $rel in
	bullseye)
		suite=bullseye
		sources=("deb $MIRROR bullseye main" "deb $SECURITY bullseye-security main")
		pkgs=$PKGS,linux-image-amd64,linux-headers-amd64 ;;
	trixie-backports)
		suite=trixie
		sources=("deb $MIRROR trixie main" "deb $MIRROR trixie-backports main")
		pkgs=$PKGS
		# shellcheck disable=SC2016 # "$1" is mmdebstrap's, for the hook
		hooks=(--customize-hook='chroot "$1" apt-get install -y -qq --no-install-recommends -t trixie-backports linux-image-amd64 linux-headers-amd64') ;;
	esac
	msg "making the $rel root (mmdebstrap, once per machine): $root"
	t0=$(date +%s)
	rm -rf "$root.new" "$root"
	# Nothing boots the root itself (vm-run makes its own initramfs): its
	# initrd.img and apt's package cache are only weight.
	# shellcheck disable=SC2016 # "$1" is mmdebstrap's, for the hook
	mmdebstrap --quiet --mode=root --variant=minbase \
		--aptopt='Apt::Install-Recommends "false"' --include="$pkgs" "${hooks[@]}" \
		--customize-hook='rm -f "$1"/boot/initrd.img-*' \
		"$suite" "$root.new" "${sources[@]}" >&2
	[ -n "$(root_kvers "$root.new")" ] || { msg "no kernel in the $rel root"; exit 1; }
	mv "$root.new" "$root"
	echo "$rel root, $(date -u +%FT%TZ): $(root_kvers "$root")" >"$root/.done"
	msg "made in $(($(date +%s) - t0)) s, $(du -sh "$root" | cut -f1)"
done
msg "ok: $("$0" --kvers | tr '\n' ' ')"
