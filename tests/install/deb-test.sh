#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The Debian packages (make deb: build/deb/*.deb) as a user installs them:
#   root:    a clean Debian 12 root with the 6.1 and 6.12 kernels and
#            their headers (scripts/deb-root.sh test, cached), used through
#            an overlay so the cache stays clean; users alice and bob;
#   install: apt install ./build/deb/*.deb, apt resolving the rest from
#            Debian's archive; DKMS builds the module for both kernels, a
#            production build (no test DMA engine); group npu exists; the
#            example of libaclmem-dev builds with pkg-config, shared and
#            static; alice is added to group npu;
#   guests:  each kernel booted from that root (vm-run with HOSTROOT and
#            MODROOT, -M: the guest loads the module itself through
#            modules-load.d, with udev running): tests/install/deb-guest.sh;
#   purge:   apt purge --autoremove of the five packages removes the module
#            (files, modules.dep, /var/lib/dkms), the sources and every
#            file; once the dependencies that apt keeps are purged too, the
#            root is as before the install but for apt's and dpkg's records
#            and group npu, which stays as Debian's packages leave their
#            system groups (files elsewhere may still belong to it).
# Needs root and network access to Debian's mirrors.  NO_VM=1 skips the
# guests.  Results: build/test-results/deb/.  Prints "N passed, N failed".
# Single-quoted dpkg-query formats and sh -c scripts are meant to reach
# their program unexpanded.
# shellcheck disable=SC2016
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
cd "$TOP" || exit 1
VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
PKGS="npu-mem-dkms libaclmem1 libaclmem-dev python3-acl npu-mem-tools"
RES=$TOP/build/test-results/deb
[ "$(id -u)" = 0 ] || { echo "needs root (chroot, mount)"; exit 77; }

pass=0 fail=0
ok() { echo "ok   - $*"; pass=$((pass + 1)); }
nok() { echo "FAIL - $*"; fail=$((fail + 1)); }
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
	exit
}

debs=()
for p in $PKGS; do
	f=$(ls build/deb/"${p}"_"$VERSION"_*.deb 2>/dev/null)
	[ -n "$f" ] || { echo "no build/deb/${p}_${VERSION}_*.deb: make deb first"; exit 1; }
	debs+=("$f")
done

lower=$(bash scripts/deb-root.sh test) || { echo "cannot make the test root"; exit 1; }
mnt=$RES/root
cleanup() {
	local m
	for m in dev/pts dev sys proc ""; do
		mountpoint -q "$mnt/$m" 2>/dev/null && umount -l "$mnt/$m"
	done
	rm -rf "$RES/upper" "$RES/work"
}
trap cleanup EXIT
cleanup
rm -rf "$RES"
mkdir -p "$RES/upper" "$RES/work" "$mnt"
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$RES/upper,workdir=$RES/work" "$mnt" ||
	{ echo "cannot mount the overlay"; exit 1; }
mount -t proc proc "$mnt/proc"
mount -t sysfs sysfs "$mnt/sys"
mount --bind /dev "$mnt/dev"
mount --bind /dev/pts "$mnt/dev/pts"
in_root() {
	chroot "$mnt" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# Packages started in a chroot would run on this host: no service starts
# (what mmdebstrap does while it bootstraps).  In the root before and
# after, so not a difference.
printf '#!/bin/sh\nexit 101\n' >"$mnt/usr/sbin/policy-rc.d"
chmod 755 "$mnt/usr/sbin/policy-rc.d"
in_root useradd -M -s /bin/sh alice
in_root useradd -M -s /bin/sh bob

# The root's files: path, type, mode, owner, group, size (not for
# directories), and the content of /etc and /usr/lib/modules-load.d-like
# configuration; less the records that apt and dpkg keep by design.
snapshot() {
	(cd "$mnt" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev \
		-o -path ./tmp -o -path ./run -o -path ./var/lib/apt -o -path ./var/cache \
		-o -path ./var/log -o -path ./var/lib/dpkg \) -prune -o \
		\( -type d -printf '%p %y %m %u %g\n' \) -o -printf '%p %y %m %u %g %s\n' |
		LC_ALL=C sort
	 cd "$mnt" && find ./etc -xdev -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum)
}
kvers=$(for d in "$mnt"/lib/modules/*/; do
	v=$(basename "$d")
	# (build is a link to /usr/src: look in the root, not on this host)
	[ -e "$mnt/boot/vmlinuz-$v" ] && [ -d "$mnt/usr/src/linux-headers-$v" ] && echo "$v"
done | sort -V)
echo "root: $lower, kernels: $(echo "$kvers" | tr "\n" " ")"
check "two kernels with headers in the root (6.1 and 6.12)" \
	[ "$(echo "$kvers" | grep -c -e '^6\.1\.' -e '^6\.12\.')" = 2 ]
in_root apt-get update -qq >"$RES/apt-update.log" 2>&1
check "apt-get update" [ $? = 0 ]
# What someone building against libaclmem-dev has anyway (Debian's -dev
# packages do not depend on it): part of the root before the install.
in_root apt-get install -y -qq pkg-config >"$RES/apt-pkg-config.log" 2>&1
check "apt-get install pkg-config (the user's, before the test)" [ $? = 0 ]
snapshot >"$RES/before.txt"
cp "$mnt/etc/group" "$RES/group-before"
in_root dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 != "un" { print $2 }' |
	LC_ALL=C sort >"$RES/packages-before.txt"

# ---- install ---------------------------------------------------------------------
mkdir -p "$mnt/tmp/debs"
cp "${debs[@]}" "$mnt/tmp/debs/"
t0=$(date +%s)
in_root sh -c "cd /tmp/debs && apt-get install -y $(printf './%s ' "${debs[@]##*/}")" \
	>"$RES/apt-install.log" 2>&1
rc=$?
check "apt install ./build/deb/*.deb ($(( $(date +%s) - t0 )) s)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || { tail -n 40 "$RES/apt-install.log"; finish; }
grep -E '^(Building for|Building initial module|Done\.|The following NEW packages)' "$RES/apt-install.log"
sed -n '/^The following NEW packages/,/^[0-9]* upgraded/p' "$RES/apt-install.log" | sed 's/^/  /'
for p in $PKGS; do
	check "$p installed" [ "$(in_root dpkg-query -W -f='${Status}' "$p")" = "install ok installed" ]
done
in_root dkms status 2>/dev/null | sed 's/^/  dkms status: /'
for k in $kvers; do
	check "$k: dkms status: installed" \
		grep -q "^npu-mem/$VERSION, $k, .*: installed" <(in_root dkms status -m npu-mem -v "$VERSION" -k "$k" 2>/dev/null)
	f=$(cd "$mnt" && ls lib/modules/"$k"/updates/dkms/npu_mem.ko* 2>/dev/null)
	check "$k: module file /${f:-missing}" [ -n "$f" ]
	[ -n "$f" ] || continue
	check "$k: modules.dep lists it" grep -q '^updates/dkms/npu_mem\.ko[.a-z]*:' "$mnt/lib/modules/$k/modules.dep"
	case $f in
	*.xz) xz -dc "$mnt/$f" ;;
	*) cat "$mnt/$f" ;;
	esac >"$RES/npu_mem-$k.ko"
	check "$k: production build: no test DMA engine (no edu symbol, no dma_copy)" \
		sh -c "! nm '$RES/npu_mem-$k.ko' | grep -q npu_mem_edu && ! grep -qa dma_copy '$RES/npu_mem-$k.ko'"
	check "$k: version $VERSION" [ "$(modinfo -F version "$RES/npu_mem-$k.ko")" = "$VERSION" ]
done
grp=$(in_root getent group npu)
check "group npu created by sysusers.d: $grp" sh -c "[ -n '$grp' ] && [ \$(echo '$grp' | cut -d: -f3) -lt 1000 ]"
check "udev rule in /lib/udev/rules.d" [ -f "$mnt/lib/udev/rules.d/60-npu-mem.rules" ]
in_root usermod -aG npu alice
check "alice added to group npu" grep -q '^npu:.*alice' "$mnt/etc/group"

# The example from libaclmem-dev, as its users build it.
cp "$mnt/usr/share/doc/libaclmem-dev/examples/acl_demo.c" "$mnt/tmp/"
in_root sh -c 'cc -o /tmp/acl_demo /tmp/acl_demo.c $(pkg-config --cflags --libs aclmem)' \
	>"$RES/cc.log" 2>&1
check "cc acl_demo.c \$(pkg-config --cflags --libs aclmem)" [ $? = 0 ]
in_root sh -c 'cc -static -o /tmp/acl_demo_static /tmp/acl_demo.c $(pkg-config --static --cflags --libs aclmem)' \
	>>"$RES/cc.log" 2>&1
check "cc -static acl_demo.c \$(pkg-config --static --cflags --libs aclmem)" [ $? = 0 ]
check "acl_demo uses the installed libaclmem.so.1" \
	grep -q "libaclmem.so.1 => /lib/x86_64-linux-gnu/libaclmem.so.1\|libaclmem.so.1 => /usr/lib/x86_64-linux-gnu/libaclmem.so.1" \
	<(in_root ldd /tmp/acl_demo)

# ---- guests -------------------------------------------------------------------------
if [ "${NO_VM:-}" = 1 ]; then
	echo "NO_VM=1: guests skipped"
else
	# vm-run binds the results directory at the same path in the guest's
	# root: it creates that path in the overlay, removed again below.
	top=/$(echo "$RES" | cut -d/ -f2)
	had_top=0
	[ -e "$mnt$top" ] && had_top=1
	cat >"$RES/guest.conf" <<-CONF
	# shellcheck shell=bash disable=SC2034
	. $TOP/tests/vm/configs/x86_64.conf
	HOSTROOT=$mnt
	MODROOT=$mnt
	KIMAGE=$mnt/boot/vmlinuz-%s
	CONF
	for k in $kvers; do
		g=$RES/guest-$k
		mkdir -p "$g"
		cp tests/install/deb-guest.sh "$mnt/tmp/acl_demo" "$mnt/tmp/acl_demo_static" "$g/"
		t0=$(date +%s)
		(cd "$g" && "$TOP/tests/vm/vm-run" -q -M -t 900 -c "$RES/guest.conf" -k "$k" -o "$g" \
			-- sh -c 'sh "$1/deb-guest.sh" "$1" >"$1/guest.txt" 2>&1; rc=$?; cat "$1/guest.txt"; exit $rc' \
			sh "$g") >"$g.log" 2>&1
		rc=$?
		grep -E '^(ok|FAIL|[0-9]+ passed)|^module file|^Max locked|^crw|^    (aclrtSetDevice|set_device|aclrtMallocCached|malloc_cached)' "$g/guest.txt" |
			sed 's/^/  /'
		check "$k: guest booted from the root: deb-guest.sh ($(( $(date +%s) - t0 )) s; $(tail -n1 "$g.log" | sed 's/.*result: //'))" \
			[ "$rc" = 0 ]
	done
	[ "$had_top" = 1 ] || rm -rf "${mnt:?}$top"
fi

# ---- purge ----------------------------------------------------------------------------
rm -rf "$mnt/tmp/debs" "$mnt/tmp/acl_demo"*
# dkms recommends sudo, which refuses its own removal in a root without a
# root password unless told that this is intended.
# shellcheck disable=SC2086
in_root SUDO_FORCE_REMOVE=yes apt-get purge -y --autoremove $PKGS >"$RES/apt-purge.log" 2>&1
check "apt purge --autoremove $PKGS" [ $? = 0 ]
grep -E '^(Purging|Removing|Deleting)' "$RES/apt-purge.log" | sed 's/^/  /' | head -40
# shellcheck disable=SC2086 # PKGS is a list of package names
left=$(in_root dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' $PKGS 2>/dev/null | grep -v ' un *$')
check "dpkg knows none of them any more${left:+: $left}" [ -z "$left" ]
left=$(cd "$mnt" && ls -d lib/modules/*/updates/dkms/npu_mem* usr/src/npu-mem-* var/lib/dkms/npu-mem 2>/dev/null)
check "no module, source or DKMS tree left${left:+: $left}" [ -z "$left" ]
check "no modules.dep entry left" sh -c "! grep -q npu_mem '$mnt'/lib/modules/*/modules.dep"
check "group npu kept (Debian leaves system groups on purge)" in_root getent group npu
# apt keeps some of the dependencies it installed (APT::AutoRemove::
# RecommendsImportant, SuggestsImportant: gcc, fakeroot and the like, which
# other packages recommend).  Purge them too, so that the comparison below
# sees every file that the install left outside dpkg's records.
kept=$(comm -13 "$RES/packages-before.txt" <(in_root dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' |
	awk '$1 != "un" { print $2 }' | LC_ALL=C sort))
echo "kept by apt after the purge: $(tr '\n' ' ' <<<"$kept")"
if [ -n "$kept" ]; then
	# shellcheck disable=SC2086
	in_root apt-get purge -y $kept >"$RES/apt-purge-kept.log" 2>&1
	check "apt purge of those" [ $? = 0 ]
fi
snapshot >"$RES/after.txt"
# Allowed differences: group npu and alice's membership in it, and the
# Secure Boot signing key that dkms made for its first build, which the
# dkms package keeps when purged (it may be enrolled in the firmware).
diff "$RES/before.txt" "$RES/after.txt" >"$RES/diff.txt"
unexpected=$(grep '^[<>]' "$RES/diff.txt" | grep -v -E \
	-e '^[<>] [0-9a-f]{32}  \./etc/(group|gshadow)-?$' -e '^[<>] \./etc/(group|gshadow)-? f ' \
	-e '^> \./var/lib/dkms d ' -e '^> \./var/lib/dkms/mok\.(key|pub) f ')
gdiff=$(diff "$RES/group-before" "$mnt/etc/group" | grep '^[<>]')
check "/etc/group: only group npu added ($gdiff)" [ "$gdiff" = "> npu:x:${grp#npu:x:}alice" ]
echo "root after purge vs before install (less apt/dpkg records):"
sed 's/^/  /' "$RES/diff.txt"
check "root as before the install, but for group npu${unexpected:+ (unexpected: see above)}" [ -z "$unexpected" ]
rm -f "$mnt/usr/sbin/policy-rc.d"
finish
