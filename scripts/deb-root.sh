#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The clean Debian 12 roots of make deb and make check-deb, made with
# mmdebstrap once per machine and cached in /var/cache/npu-mem/deb/
# (NPU_MEM_DEB_CACHE).  Prints the root's directory.
#   scripts/deb-root.sh build   variant buildd (build-essential) plus only
#                               debian/control's Build-Depends, installed by
#                               apt-get build-dep: a build that succeeds in it
#                               proves them complete
#   scripts/deb-root.sh test    the default variant (Priority important), and
#                               the 6.1 kernel (bookworm) and 6.12 kernel
#                               (bookworm-backports) with their headers, for
#                               tests/install/deb-test.sh
# Each root is named after a hash of its recipe (and, for build, of the
# Build-Depends), so a changed recipe makes a new one and the old ones are
# removed; an existing root is reused as it is.  Made in a temporary
# directory and renamed when complete, under a lock: idempotent, and safe
# against an interrupted or parallel run.
set -euo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
CACHE=${NPU_MEM_DEB_CACHE:-/var/cache/npu-mem/deb}
MIRROR=${NPU_MEM_DEB_MIRROR:-http://deb.debian.org/debian}
SECURITY=${NPU_MEM_DEB_SECURITY:-http://deb.debian.org/debian-security}
kind=${1:-}
[ "$(id -u)" = 0 ] || { echo "deb-root: needs root (mmdebstrap, chroot)" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "deb-root: no mmdebstrap (scripts/deb-deps.sh)" >&2; exit 1; }

sources=("deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main"
	"deb $SECURITY bookworm-security main")
case $kind in
build)
	# apt-get build-dep reads debian/control from a directory.
	recipe="--variant=buildd
--customize-hook=mkdir -p \"\$1/tmp/bd/debian\" && cp $TOP/debian/control $TOP/debian/changelog \"\$1/tmp/bd/debian/\"
--customize-hook=chroot \"\$1\" apt-get build-dep -y --no-install-recommends /tmp/bd
--customize-hook=rm -rf \"\$1/tmp/bd\""
	key_extra=$(sed -n '/^Build-Depends/,/^[^ ]/p' "$TOP/debian/control")
	;;
test)
	# The 6.1 kernel comes with the bookworm meta packages; installing the
	# backports ones moves them to 6.12, and the 6.1 packages are marked
	# manual so that an "apt purge --autoremove" in the test keeps them.
	# initramfs-tools' hook runs as on any install (vm-run builds its own
	# initramfs, but the root stays an ordinary Debian 12 one).
	sources+=("deb $MIRROR bookworm-backports main")
	recipe="--include=linux-image-amd64,linux-headers-amd64
--customize-hook=chroot \"\$1\" sh -c 'apt-mark manual \$(dpkg-query -W -f=\"\\\${Package}\\\\n\" \"linux-image-6.1*\" \"linux-headers-6.1*\" \"linux-kbuild-6.1*\")'
--customize-hook=chroot \"\$1\" apt-get install -y -t bookworm-backports linux-image-amd64 linux-headers-amd64"
	key_extra=""
	;;
*)
	echo "usage: $0 build|test" >&2
	exit 2
	;;
esac

key=$( { echo "$recipe"; printf '%s\n' "${sources[@]}"; echo "$key_extra"; } | sha256sum | cut -c1-12)
root=$CACHE/$kind-root-$key
mkdir -p "$CACHE"
exec 9>"$CACHE/.$kind.lock"
flock 9
if [ ! -e "$root/.done" ]; then
	rm -rf "$root.new"
	opts=()
	while IFS= read -r l; do opts+=("$l"); done <<<"$recipe"
	echo "deb-root: making the $kind root (mmdebstrap, once per machine): $root" >&2
	t0=$(date +%s)
	mmdebstrap --quiet --mode=root "${opts[@]}" bookworm "$root.new" "${sources[@]}" >&2
	echo "$kind root, $(date -u +%FT%TZ): ${opts[*]}" >"$root.new/.done"
	mv "$root.new" "$root"
	echo "deb-root: made in $(( $(date +%s) - t0 )) s, $(du -sh "$root" | cut -f1)" >&2
	# Older recipes' roots.
	for d in "$CACHE/$kind-root-"*; do
		[ "$d" = "$root" ] || rm -rf "$d"
	done
fi
echo "$root"
