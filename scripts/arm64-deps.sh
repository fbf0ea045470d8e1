#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Everything the arm64 build and guests need, from Debian's
# packages only.  Idempotent: what is present is skipped, and apt-get update
# runs only when a package it needs is unknown to apt.
#
#   scripts/arm64-deps.sh                install/extract what is missing
#   scripts/arm64-deps.sh --print-dir    print the cache directory only
#   scripts/arm64-deps.sh --kvers        print the arm64 kernel releases
#                                        extracted (one a line)
#
# Host packages: qemu-system-arm (qemu-system-aarch64) and the cross
# binutils for arm64 and armhf (they conflict with nothing, and the extracted
# ones would need their libbfd in the host's library path); no cross gcc is
# installed, so the amd64 toolchain (gcc-multilib) is left alone.
# Extracted, never installed (dpkg -x), into
#   ${NPU_MEM_ARM64_CACHE:-/var/cache/npu-mem/arm64}/
#     toolchain/usr/bin/aarch64-linux-gnu-{gcc,gcc-12,cpp-12}: gcc 12 for
#                       arm64 with the arm64 libc (extracted:
#                       gcc-multilib conflicts with the installed cross gcc)
#     toolchain-armhf/usr/bin/arm-linux-gnueabihf-gcc: the same for 32-bit
#                       ARM (armhf), extracted for the same reason: the 32-bit
#                       helper of tests/kernel/compat32, run by the arm64
#                       kernel's compat layer
#     kernel/<kver>/    linux-image-<abi>-arm64 + linux-headers-<abi>-arm64:
#                       boot/vmlinuz-<kver>, lib/modules/<kver>/,
#                       usr/src/linux-headers-<kver>/ (kbuild: the host's
#                       linux-kbuild-<ver>, same as for amd64)
#     sysroot/          check, libsubunit, libdrm-dev, libdrm2, json-c, busybox-static
#                       and bash-static, arm64 (static libraries; busybox and
#                       bash for the guest's root, tests/vm/arm64-root.sh)
# Kernels: the arm64 flavour of every installed amd64 Debian kernel
# (/lib/modules/*-amd64/build), found at run time; one Debian has no arm64
# package for is skipped with a note.  NPU_MEM_ARM64_KABIS="6.1.0-56 ..."
# restricts to these ABI names.
set -euo pipefail

CACHE=${NPU_MEM_ARM64_CACHE:-/var/cache/npu-mem/arm64}
case ${1:-} in
--print-dir) echo "$CACHE"; exit 0 ;;
--kvers)
	for d in "$CACHE"/kernel/*/.done; do
		[ -e "$d" ] && basename "$(dirname "$d")"
	done | sort -V
	exit 0 ;;
"") ;;
*) sed -n '/^#   scripts/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac

[ "$(id -u)" = 0 ] || { echo "arm64-deps: must run as root (apt-get)" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
msg() { echo "arm64-deps: $*" >&2; }

HOST_PKGS="qemu-system-arm binutils-aarch64-linux-gnu binutils-arm-linux-gnueabihf"
# The cross compiler is extracted, not installed: Debian's gcc-multilib (the
# project's -m32 tests need it) Conflicts with gcc-12-aarch64-linux-gnu, so
# installing one removes the other.  GCC is relocatable: run from
# toolchain/usr/bin it finds its cc1, libgcc and the target's libc in the
# same tree, and the installed binutils through a link to /usr/<triplet>/bin.
TOOLCHAIN_PKGS="gcc-12-aarch64-linux-gnu cpp-12-aarch64-linux-gnu
	libgcc-12-dev-arm64-cross libc6-dev-arm64-cross
	libc6-arm64-cross linux-libc-dev-arm64-cross"
ARMHF_TOOLCHAIN_PKGS="gcc-12-arm-linux-gnueabihf cpp-12-arm-linux-gnueabihf
	libgcc-12-dev-armhf-cross libc6-dev-armhf-cross
	libc6-armhf-cross linux-libc-dev-armhf-cross"
SYSROOT_PKGS="check libsubunit-dev libsubunit0 libdrm-dev libdrm2 busybox-static
	bash-static libjson-c-dev libjson-c5"

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}
updated=0
update_once() {
	[ "$updated" = 1 ] && return
	msg "apt-get update"
	apt-get update -qq
	updated=1
}
known() { apt-cache show "$1" >/dev/null 2>&1; }

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64
	update_once
fi

todo=""
for p in $HOST_PKGS; do installed "$p" || todo="$todo $p"; done
todo=${todo# }
if [ -n "$todo" ]; then
	known "${todo%% *}" || update_once
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $todo
fi

# download_extract DEST PKG...: dpkg -x each PKG (arch-qualified) into DEST.
download_extract() {
	local dest=$1 dl p
	shift
	for p in "$@"; do known "$p" || update_once; done
	dl=$(mktemp -d "$CACHE/.dl.XXXXXX")
	# apt-get download drops to _apt, which must be able to write here.
	chmod 755 "$dl"; chown _apt "$dl" 2>/dev/null || true
	# shellcheck disable=SC2064
	trap "rm -rf '$dl'" RETURN
	(cd "$dl" && apt-get download -qq "$@") || return 1
	for p in "$dl"/*.deb; do dpkg -x "$p" "$dest"; done
}

mkdir -p "$CACHE/kernel"

# ---- cross toolchains ------------------------------------------------------
# extract_toolchain DIR TRIPLET PKG...: the cross gcc 12 for TRIPLET in DIR,
# checked by linking a static program.
extract_toolchain() {
	local tc=$1 triplet=$2
	shift 2
	[ -e "$tc/.done" ] && return
	msg "extracting the $triplet cross toolchain"
	rm -rf "$tc"
	mkdir -p "$tc"
	download_extract "$tc" "$@"
	# Debian's unversioned names (the kernel's Makefile wants gcc-12).
	ln -sf "$triplet-gcc-12" "$tc/usr/bin/$triplet-gcc"
	# The relocated gcc looks for as and ld in its own tree's tooldir,
	# not the installed one's.
	ln -sfn "/usr/$triplet/bin" "$tc/usr/$triplet/bin"
	echo 'int main(void) { return 0; }' >"$tc/t.c"
	"$tc/usr/bin/$triplet-gcc-12" -static -o "$tc/t" "$tc/t.c" ||
		{ msg "the extracted $triplet cross compiler does not work"; exit 1; }
	rm -f "$tc/t" "$tc/t.c"
	touch "$tc/.done"
}
# shellcheck disable=SC2086 # one package a word
extract_toolchain "$CACHE/toolchain" aarch64-linux-gnu $TOOLCHAIN_PKGS
# shellcheck disable=SC2086
extract_toolchain "$CACHE/toolchain-armhf" arm-linux-gnueabihf $ARMHF_TOOLCHAIN_PKGS

# ---- sysroot ---------------------------------------------------------------
# The stamp holds the package list: a sysroot extracted for another list
# (an older tree's) is extracted again.
sr=$CACHE/sysroot
# shellcheck disable=SC2086,SC2116 # the list with its whitespace normalised
want=$(echo $SYSROOT_PKGS)
if [ "$(cat "$sr/.done" 2>/dev/null)" != "$want" ]; then
	msg "extracting the arm64 sysroot ($SYSROOT_PKGS)"
	rm -rf "$sr"
	mkdir -p "$sr"
	# shellcheck disable=SC2046,SC2086
	download_extract "$sr" $(printf '%s:arm64 ' $SYSROOT_PKGS)
	echo "$want" >"$sr/.done"
fi

# ---- kernels ---------------------------------------------------------------
abis=${NPU_MEM_ARM64_KABIS:-$(for b in /lib/modules/*-amd64/build; do
	[ -e "$b" ] || continue
	v=$(basename "$(dirname "$b")")
	echo "${v%-amd64}"
done)}
[ -n "$abis" ] || { msg "no amd64 Debian kernel installed (scripts/deps.sh)"; exit 1; }
for abi in $abis; do
	kver=$abi-arm64
	dir=$CACHE/kernel/$kver
	[ -e "$dir/.done" ] && continue
	img=linux-image-$kver:arm64 hdr=linux-headers-$kver:arm64
	if ! known "$img"; then update_once; fi
	if ! known "$img" || ! known "$hdr"; then
		msg "note: Debian has no arm64 $img/$hdr: skipped"
		continue
	fi
	msg "extracting arm64 kernel $kver"
	rm -rf "$dir"
	mkdir -p "$dir"
	download_extract "$dir" "$img" "$hdr"
	# The headers' "common" part is arch-all: the amd64 kernel's, installed.
	[ -d "$dir/usr/src/linux-headers-$kver" ] || { msg "no headers in $hdr"; exit 1; }
	[ -r "$dir/boot/vmlinuz-$kver" ] || { msg "no vmlinuz in $img"; exit 1; }
	# Its scripts/ and tools/ links are relative (../../lib/linux-kbuild-X):
	# point them at the host's linux-kbuild-X, installed with the amd64
	# headers of the same version.
	kb=$(readlink "$dir/usr/src/linux-headers-$kver/scripts")
	kb=${kb#../../lib/} kb=${kb%%/*}
	[ -d "/usr/lib/$kb" ] || { msg "no /usr/lib/$kb (amd64 headers of this version)"; exit 1; }
	mkdir -p "$dir/usr/lib"
	ln -sfn "/usr/lib/$kb" "$dir/usr/lib/$kb"
	# Debian ships no modules.dep: the harness resolves the 9p/virtio chain
	# with modinfo -b, which needs it.
	depmod -b "$dir" "$kver"
	touch "$dir/.done"
done
msg "ok: $CACHE ($("$0" --kvers | tr '\n' ' '))"
