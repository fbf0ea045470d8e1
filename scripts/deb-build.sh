#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make deb: the Debian packages, built by "dpkg-buildpackage -us -uc -b" in a
# clean Debian 12 root that holds only build-essential and debian/control's
# Build-Depends (scripts/deb-root.sh build), so a missing build dependency
# fails here as it would on a buildd.  The cached root is never written: the
# build runs on an overlay of it that is thrown away.  The source is the
# working tree as it is (uncommitted changes included), less build/ and .git.
# Output: build/deb/*.deb, .changes, .buildinfo and build.log.
# DEB_BUILD_OPTIONS defaults to "noddebs": build/deb/ then holds exactly the
# installable packages (set it to "" for the -dbgsym ones).
set -euo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$TOP"
OUT=$TOP/build/deb
WORK=$TOP/build/deb-build
VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
[ "$(id -u)" = 0 ] || { echo "deb-build: needs root (chroot, mount)" >&2; exit 1; }

# The check debian/rules makes, early and without a root.
cl=$(dpkg-parsechangelog -S Version)
if [ "$cl" != "$VERSION" ]; then
	echo "deb-build: debian/changelog is at $cl, dkms.conf at $VERSION:" \
		"add an entry (dch -v $VERSION)" >&2
	exit 1
fi

lower=$(bash scripts/deb-root.sh build)

mnt=$WORK/root
cleanup() {
	local m
	for m in dev/pts dev proc ""; do
		mountpoint -q "$mnt/$m" 2>/dev/null && umount -l "$mnt/$m"
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
cleanup
mkdir -p "$WORK/upper" "$WORK/work" "$mnt"
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$WORK/upper,workdir=$WORK/work" "$mnt"
mount -t proc proc "$mnt/proc"
mount --bind /dev "$mnt/dev"
mount --bind /dev/pts "$mnt/dev/pts"

src=/build/npu-mem-$VERSION
mkdir -p "$mnt$src"
tar -C "$TOP" --exclude=./build --exclude=./.git -cf - . | tar -C "$mnt$src" -xf -

rm -rf "$OUT"
mkdir -p "$OUT"
t0=$(date +%s)
echo "deb-build: dpkg-buildpackage -us -uc -b in a clean root (log: $OUT/build.log)"
if ! chroot "$mnt" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
	LANG=C.UTF-8 DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS-noddebs}" \
	sh -c "cd $src && dpkg-buildpackage -us -uc -b" >"$OUT/build.log" 2>&1; then
	tail -n 40 "$OUT/build.log" >&2
	echo "deb-build: FAILED (all of it: $OUT/build.log)" >&2
	exit 1
fi
cp "$mnt/build/"*.deb "$mnt/build/"*.changes "$mnt/build/"*.buildinfo "$OUT/"
echo "deb-build: $(( $(date +%s) - t0 )) s:"
for f in "$OUT"/*.deb; do
	echo "  ${f##*/}"
done
