#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Stage the root file system of the arm64 guests (configs/arm64.conf):
# build/arm64/root/, which vm-run shares read-only with the guest (HOSTROOT).
# It holds the arm64 static busybox (with its applets, /usr/bin/env among
# them) and bash from scripts/arm64-deps.sh's sysroot, and, at the same
# paths as in this tree, tests/guest/run-suites.sh, tests/vm/report-patterns
# and the cross-built programs: build/tests-arm64/SUITE/* appear as
# build/tests/SUITE/* and build/examples-arm64/* as build/examples/*, so
# run-suites.sh runs them as it does on x86_64.
# Rebuilt from scratch each time (a few MB, well under a second).
set -euo pipefail
TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
SR=$("$TOP/scripts/arm64-deps.sh" --print-dir)/sysroot
ROOT=$TOP/build/arm64/root
if [ ! -x "$SR/bin/busybox" ] || [ ! -x "$SR/bin/bash-static" ]; then
	echo "arm64-root: no arm64 sysroot (scripts/arm64-deps.sh)" >&2
	exit 1
fi

rm -rf "$ROOT.new"
mkdir -p "$ROOT.new"
cd "$ROOT.new"
mkdir -p bin sbin usr/bin usr/sbin proc sys dev tmp run etc lib/modules
cp "$SR/bin/busybox" bin/busybox
cp "$SR/bin/bash-static" bin/bash
# The host's busybox is the same Debian version: same applets.
for a in $(/bin/busybox --list); do
	case $a in busybox | bash) continue ;; esac
	ln -s busybox "bin/$a"
done
ln -s ../../bin/busybox usr/bin/env
echo "root:x:0:0:root:/tmp:/bin/sh" >etc/passwd
echo "root:x:0:" >etc/group

t=.$TOP
mkdir -p "$t/tests/guest" "$t/tests/vm" "$t/build"
cp "$TOP/tests/guest/run-suites.sh" "$t/tests/guest/"
cp "$TOP/tests/vm/report-patterns" "$t/tests/vm/"
for d in tests examples; do
	if [ -d "$TOP/build/$d-arm64" ]; then
		cp -a "$TOP/build/$d-arm64" "$t/build/$d"
	fi
done
# Kernel modules the tests load themselves (dmabuf_vgem: modprobe vgem),
# with their dependencies, uncompressed (busybox), for every extracted
# kernel; depmod writes the modules.dep busybox modprobe reads.
MODULES=${NPU_MEM_ARM64_ROOT_MODULES:-vgem}
kroot=$(dirname "$SR")/kernel
for k in $("$TOP/scripts/arm64-deps.sh" --kvers); do
	declare -A seen=()
	chain() {
		local m=$1 d f
		[ -n "${seen[$m]:-}" ] && return
		seen[$m]=1
		for d in $(modinfo -b "$kroot/$k" -k "$k" -F depends "$m" | tr ',' ' '); do
			chain "$d"
		done
		f=$(modinfo -b "$kroot/$k" -k "$k" -n "$m") || return 0
		[ "$f" = "(builtin)" ] || echo "$f"
	}
	mkdir -p "lib/modules/$k/kernel"
	cp "$kroot/$k/lib/modules/$k"/modules.{order,builtin,builtin.modinfo} "lib/modules/$k/" 2>/dev/null || true
	for f in $(for m in $MODULES; do chain "$m"; done); do
		rel=${f#"$kroot/$k/lib/modules/$k/"}
		mkdir -p "lib/modules/$k/$(dirname "$rel")"
		case $f in
		*.ko.xz) xz -dc "$f" >"lib/modules/$k/${rel%.xz}" ;;
		*) cp "$f" "lib/modules/$k/$rel" ;;
		esac
	done
	depmod -b "$ROOT.new" "$k"
	unset seen
done

cd "$TOP"
rm -rf "$ROOT"
mv "$ROOT.new" "$ROOT"
echo "arm64-root: $ROOT ($(du -sh "$ROOT" | cut -f1))"
