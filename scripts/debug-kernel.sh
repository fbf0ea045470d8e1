#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build (once per machine) the npu-mem debug kernel: Debian's linux-source-6.1
# configured as tinyconfig + kvm_guest.config + tests/vm/debug-kernel.config
# (KASAN, kmemleak, lockdep, DEBUG_VM, DMA-API debugging, failslab,
# fail_page_alloc, 9p/virtio built in, vgem, dma-buf heaps, udmabuf, the
# Intel IOMMU), then bzImage and modules (so Module.symvers has the real
# symbols for out-of-tree modules).
#
#   scripts/debug-kernel.sh              build unless cached; print the tree
#   scripts/debug-kernel.sh --print-dir  print the tree's path, build nothing
#                                        (exit 1 if linux-source-6.1 is absent)
#   scripts/debug-kernel.sh --cached     exit 0 if the kernel is built, else 1
#
# The tree lives outside the clone, in
#   ${NPU_MEM_DEBUG_CACHE:-/var/cache/npu-mem/debug-kernel}/<key>/linux/
# where <key> is a hash of the config fragment, the linux-source-6.1 package
# version, the compiler and RECIPE below: changing any of them builds a new
# tree (old ones are not deleted).  The image is <tree>/arch/x86/boot/bzImage,
# the release <tree>/include/config/kernel.release (6.1.N-npudebug-<key>).
# Last line of stdout: the tree's path.  Build log: <key>/build.log.
# A cached kernel costs nothing: the script prints the path and stops.
set -euo pipefail

# Bump when the steps below change in a way that changes the kernel.
RECIPE="tinyconfig+kvm_guest+fragment+localversion v1"

TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
FRAG=$TOP/tests/vm/debug-kernel.config
CACHE=${NPU_MEM_DEBUG_CACHE:-/var/cache/npu-mem/debug-kernel}
SRC_PKG=linux-source-6.1
SRC_TAR=/usr/src/linux-source-6.1.tar.xz
PKGS="$SRC_PKG bc bison flex libelf-dev libssl-dev"

msg() { echo "debug-kernel: $*" >&2; }
die() { msg "error: $*"; exit 1; }

src_version() {
	dpkg-query -W -f='${Status} ${Version}\n' "$SRC_PKG" 2>/dev/null |
		sed -n 's/^install ok installed //p'
}

key() {
	local v
	v=$(src_version)
	[ -n "$v" ] || return 1
	{ cat "$FRAG"; echo "$SRC_PKG $v"; echo "$RECIPE"
	  ${CC:-gcc} --version 2>/dev/null | head -n1; } | sha256sum | cut -c1-16
}

tree_of() { echo "$CACHE/$1/linux"; }

case ${1:-} in
--print-dir)
	k=$(key) || die "$SRC_PKG is not installed (run scripts/debug-kernel.sh)"
	tree_of "$k"
	exit 0 ;;
--cached)
	k=$(key) || exit 1
	[ -e "$CACHE/$k/done" ]
	exit ;;
"") ;;
*) sed -n '/^#   scripts/,/^#.*absent)/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac

# ---- cached? -----------------------------------------------------------------
if k=$(key) && [ -e "$CACHE/$k/done" ]; then
	tree_of "$k"
	exit 0
fi

# ---- packages (idempotent: apt only when something is missing) ---------------
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] || die "missing packages:$missing (run as root)"
	msg "installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	# Other engineers' apt runs hold the lock for a while: wait for it.
	apt_get() { apt-get -o DPkg::Lock::Timeout=900 "$@"; }
	# shellcheck disable=SC2086
	apt_get install -y -qq --no-install-recommends $missing >/dev/null ||
		{ apt_get update -qq && apt_get install -y -qq --no-install-recommends $missing; }
fi
[ -r "$SRC_TAR" ] || die "$SRC_TAR missing after installing $SRC_PKG"
k=$(key) || die "cannot read the version of $SRC_PKG"
dir=$CACHE/$k
tree=$(tree_of "$k")

# ---- one builder per key; the others wait and reuse its result ---------------
mkdir -p "$dir"
exec 9>"$dir/lock"
if ! flock -n 9; then
	msg "another build of $k is running; waiting for it"
	flock 9
fi
if [ -e "$dir/done" ]; then echo "$tree"; exit 0; fi

t0=$(date +%s)
log=$dir/build.log
: >"$log"
msg "building in $dir (log: $log)"
run() { "$@" >>"$log" 2>&1 || { tail -n 40 "$log" >&2; die "failed: $*"; }; }

# An interrupted build resumes: make is incremental and the configuration
# steps are deterministic, so an unchanged .config rebuilds nothing.  A new
# key starts from a copy of the newest finished tree of the same source
# version when there is one: Kbuild then recompiles only what the changed
# options touch (minutes instead of a full build).
src_v=$(src_version)
if [ ! -e "$tree/Makefile" ]; then
	seed=""
	# shellcheck disable=SC2045 # newest first; the cache's names have no spaces
	for d in $(ls -td "$CACHE"/*/done 2>/dev/null); do
		d=$(dirname "$d")
		if [ "$d" != "$dir" ] && [ "$(cat "$d/source-version" 2>/dev/null)" = "$src_v" ] &&
		   [ -e "$d/linux/Makefile" ]; then
			seed=$d/linux
			break
		fi
	done
	rm -rf "$dir/unpack"
	mkdir -p "$dir/unpack"
	if [ -n "$seed" ]; then
		msg "starting from the tree of $(basename "$(dirname "$seed")") (incremental)"
		run cp -a "$seed" "$dir/unpack/linux-source-6.1"
	else
		msg "unpacking $SRC_TAR"
		run tar -xf "$SRC_TAR" -C "$dir/unpack"
	fi
	mv "$dir/unpack/linux-source-6.1" "$tree"
	rmdir "$dir/unpack"
fi
echo "$src_v" >"$dir/source-version"
cd "$tree"
kmake() { make ARCH=x86_64 "$@"; }

msg "configuring: tinyconfig + kvm_guest.config + $(basename "$FRAG")"
cp "$FRAG" "$dir/fragment.config"
run kmake tinyconfig
run kmake kvm_guest.config
run scripts/kconfig/merge_config.sh -m .config "$dir/fragment.config"
run scripts/config --set-str LOCALVERSION "-npudebug-${k:0:8}" -d LOCALVERSION_AUTO
run kmake olddefconfig

# Every option the fragment sets must be in the final .config as written:
# Kconfig drops an option silently when one of its dependencies is off.
bad=0
while IFS= read -r line; do
	opt=${line%%=*} val=${line#*=}
	if [ "$val" = n ]; then
		if grep -q "^$opt=" .config; then
			msg "option did not stick: $line (have: $(grep "^$opt=" .config))"
			bad=1
		fi
	elif ! grep -qxF "$line" .config; then
		msg "option did not stick: $line (have: $(grep -E "^(# )?${opt}[= ]" .config || echo unset))"
		bad=1
	fi
done < <(grep -E '^CONFIG_[A-Za-z0-9_]+=' "$FRAG")
[ "$bad" = 0 ] || die "configuration incomplete: fix $FRAG (see above)"
msg "configuration verified ($(grep -cE '^CONFIG_[A-Za-z0-9_]+=' "$FRAG") options)"

msg "building bzImage and modules (nice -n 19, -j${NPU_MEM_DEBUG_JOBS:-2})"
run nice -n 19 make ARCH=x86_64 -j"${NPU_MEM_DEBUG_JOBS:-2}" bzImage modules
if [ ! -s arch/x86/boot/bzImage ] || [ ! -s Module.symvers ]; then
	die "build finished without bzImage or Module.symvers"
fi

secs=$(($(date +%s) - t0))
# CPU time of everything above (user, system): the wall time depends on
# what else the machine runs, the CPU time does not.
times >"$dir/times"	# not in $(...): a subshell has no children
cpu=$(tail -n1 "$dir/times")
echo "$(cat include/config/kernel.release) built in ${secs}s (CPU user/sys: $cpu) on $(date -u +%FT%TZ)" >"$dir/done"
msg "built $(cat include/config/kernel.release) in ${secs}s (CPU user/sys: $cpu)"
echo "$tree"
