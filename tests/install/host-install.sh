#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make install / make uninstall into a DESTDIR, on the host (no device needed):
#   - PREFIX=/usr installs exactly the expected files, links and modes, with
#     a pkg-config file for /usr, and touches nothing outside DESTDIR (no
#     group created);
#   - examples/acl_demo.c builds against the staged tree with only
#     "pkg-config --cflags --libs aclmem" (shared, and --static), and the
#     Python module imports from the staged site directory;
#   - PREFIX=/usr/local puts the udev rule and sysusers entry in /etc (where
#     udev and systemd look) and Python's module where that python searches;
#   - the man pages format without warnings;
#   - make uninstall leaves no file behind.
# Prints "N passed, N failed".
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
cd "$TOP" || exit 1
PY=/usr/bin/python3
pass=0 fail=0
ok() { echo "ok   - $*"; pass=$((pass + 1)); }
nok() { echo "FAIL - $*"; fail=$((fail + 1)); }
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
MAKE=(make --no-print-directory)

# Everything a user gets, relative to DESTDIR, for PREFIX=/usr.
PYEXT=$($PY-config --extension-suffix)
UDEVDIR=$(pkg-config --variable=udevdir udev 2>/dev/null || echo /usr/lib/udev)
expected() {
	local p=$1 f
	echo "$p/bin/npu-smi"
	for f in libaclmem.so.1.0.0 libaclmem.so.1 libaclmem.so libaclmem.a pkgconfig/aclmem.pc; do
		echo "$p/lib/$f"
	done
	(cd include && find acl aclmem -name '*.h') | sed "s|^|$p/include/|"
	echo "$p/include/linux/npu_mem.h"
	for f in doc/man/*.[1-9]; do echo "$p/share/man/man${f##*.}/$(basename "$f")"; done
	# CANN's toolkit layout (lib/mktoolkit.sh): set_env.sh and links.
	for f in set_env.sh include/acl include/aclmem include/linux/npu_mem.h \
		lib64/libaclmem.so.1 runtime/include runtime/lib64 \
		python/site-packages/acl$PYEXT; do
		echo "$p/lib/aclmem/toolkit/$f"
	done
	for f in libascendcl.so libacl_rt.so libacl_rt_impl.so libacl_dvpp.so \
		libmsprofiler.so libprofapi.so libacl_tdt_channel.so \
		libacl_tdt_queue.so libaclmem.so; do
		echo "$p/lib/aclmem/toolkit/lib64/$f"
		echo "$p/lib/aclmem/toolkit/lib64/stub/$f"
	done
	# AscendC (lib/ascendc): its files, and the toolkit's links to them.
	(cd lib/ascendc && find include cmake -type f) | sed "s|^|$p/lib/aclmem/ascendc/|"
	for f in bin/setenv.bash compiler/tikcpp/tikcfw \
		compiler/tikcpp/ascendc_kernel_cmake tools/tikcpp \
		tools/tikicpulib/lib/cmake/tikicpulib; do
		echo "$p/lib/aclmem/toolkit/$f"
	done
}
list_files() { (cd "$1" && find . \( -type f -o -type l \) | sed 's|^\.||' | LC_ALL=C sort); }

group_before=$(getent group npu || true)

# ---- PREFIX=/usr ------------------------------------------------------------------
D=$W/usr-root
if "${MAKE[@]}" install DESTDIR="$D" PREFIX=/usr >"$W/install.log" 2>&1; then
	ok "make install DESTDIR=... PREFIX=/usr"
else
	nok "make install DESTDIR=... PREFIX=/usr"; tail -n 30 "$W/install.log"
fi
{
	expected /usr
	echo "/usr/lib/python3/dist-packages/acl$PYEXT"
	echo "$UDEVDIR/rules.d/60-npu-mem.rules"
	echo "/usr/lib/sysusers.d/npu-mem.conf"
} | LC_ALL=C sort >"$W/want"
list_files "$D" >"$W/got"
if diff -u "$W/want" "$W/got" >"$W/diff"; then
	ok "installs exactly the $(wc -l <"$W/want") expected files"
else
	nok "installed files differ from the expected list:"; cat "$W/diff"
fi
check "libaclmem.so -> libaclmem.so.1 -> libaclmem.so.1.0.0" \
	[ "$(readlink "$D/usr/lib/libaclmem.so"):$(readlink "$D/usr/lib/libaclmem.so.1")" = \
	  "libaclmem.so.1:libaclmem.so.1.0.0" ]
check "SONAME is libaclmem.so.1" \
	grep -q 'SONAME.*\[libaclmem.so.1\]' <(readelf -d "$D/usr/lib/libaclmem.so.1.0.0")
check "npu-smi mode 755, rule 644" \
	[ "$(stat -c %a "$D/usr/bin/npu-smi") $(stat -c %a "$D$UDEVDIR/rules.d/60-npu-mem.rules")" = "755 644" ]
check "aclmem.pc says prefix=/usr" grep -qx 'prefix=/usr' "$D/usr/lib/pkgconfig/aclmem.pc"
check "set_env.sh names the final toolkit path" \
	grep -qx 'export ASCEND_TOOLKIT_HOME="/usr/lib/aclmem/toolkit"' "$D/usr/lib/aclmem/toolkit/set_env.sh"
toolkit_links() {
	local t=$D/usr/lib/aclmem/toolkit f
	# Every library name CANN's build files link is the one library.
	for f in libascendcl.so libacl_rt.so libacl_rt_impl.so libacl_dvpp.so \
		libmsprofiler.so libprofapi.so libacl_tdt_channel.so \
		libacl_tdt_queue.so libaclmem.so; do
		[ "$(readlink -f "$t/lib64/$f")" = "$D/usr/lib/libaclmem.so.1.0.0" ] || return 1
		[ "$(readlink -f "$t/lib64/stub/$f")" = "$D/usr/lib/libaclmem.so.1.0.0" ] || return 1
	done
	[ -f "$t/include/acl/acl.h" ] && [ -f "$t/include/linux/npu_mem.h" ] &&
		[ -f "$t/python/site-packages/acl$PYEXT" ] &&
		[ -f "$t/tools/tikcpp/tikcfw/kernel_operator.h" ] &&
		[ -f "$t/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake" ] &&
		[ -f "$t/tools/tikicpulib/lib/cmake/tikicpulib/tikicpulibConfig.cmake" ]
}
check "toolkit links resolve inside DESTDIR" toolkit_links
check "sysusers entry creates group npu" grep -Eq '^g[[:space:]]+npu[[:space:]]' "$D/usr/lib/sysusers.d/npu-mem.conf"
check "no group created with DESTDIR" [ "$(getent group npu || true)" = "$group_before" ]
"${MAKE[@]}" install DESTDIR="$D" PREFIX=/usr >"$W/install2.log" 2>&1
check "make install again (idempotent)" [ $? = 0 ]
check "... same files" diff -q "$W/got" <(list_files "$D")

# ---- building against it with pkg-config only ----------------------------------------
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_LIBDIR=$D/usr/lib/pkgconfig
flags=$(pkg-config --cflags --libs aclmem)
check "pkg-config --cflags --libs aclmem ($flags)" [ -n "$flags" ]
# shellcheck disable=SC2086 # flags are words
gcc -std=c99 -Wall -Werror -o "$W/demo" examples/acl_demo.c $flags 2>"$W/cc.log"
check "examples/acl_demo.c builds with the pkg-config flags only" [ $? = 0 ]
[ -s "$W/cc.log" ] && cat "$W/cc.log"
check "demo needs libaclmem.so.1" grep -q 'NEEDED.*\[libaclmem.so.1\]' <(readelf -d "$W/demo" 2>/dev/null)
check "demo resolves libaclmem from DESTDIR" \
	grep -q "$D/usr/lib/libaclmem.so.1" <(LD_LIBRARY_PATH=$D/usr/lib ldd "$W/demo" 2>/dev/null)
# Without a device the demo must fail cleanly, not crash.
NPU_MEM_DEVICE=$W/none LD_LIBRARY_PATH=$D/usr/lib timeout 20 "$W/demo" >"$W/demo.log" 2>&1
rc=$?
check "demo without a device exits cleanly (status $rc < 124)" [ "$rc" -lt 124 ]
sflags=$(pkg-config --static --cflags --libs aclmem)
# shellcheck disable=SC2086
gcc -std=c99 -static -o "$W/demo-static" examples/acl_demo.c $sflags 2>"$W/cc.log"
check "static build with pkg-config --static ($sflags)" [ $? = 0 ]
check "static demo does not need libaclmem.so" \
	bash -c "! readelf -d '$W/demo-static' 2>/dev/null | grep -q libaclmem"
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
# The CPython module imports from the staged directory, and that directory
# (less DESTDIR) is one this python searches.
got=$(cd / && PYTHONPATH=$D/usr/lib/python3/dist-packages LD_LIBRARY_PATH=$D/usr/lib \
	$PY -c 'import acl; print(acl.__file__)' 2>&1)
check "python3 imports acl from DESTDIR ($got)" [ "$got" = "$D/usr/lib/python3/dist-packages/acl$PYEXT" ]
check "/usr/lib/python3/dist-packages is on $PY's path" \
	$PY -c 'import sys; sys.exit("/usr/lib/python3/dist-packages" not in sys.path)'

# ---- man pages -------------------------------------------------------------------------
for m in "$D"/usr/share/man/man*/*; do
	LC_ALL=C groff -t -man -ww -z "$m" >"$W/groff.log" 2>&1
	check "man page $(basename "$m") formats without warnings" [ ! -s "$W/groff.log" ]
	[ -s "$W/groff.log" ] && cat "$W/groff.log"
done

# ---- uninstall ---------------------------------------------------------------------------
"${MAKE[@]}" uninstall DESTDIR="$D" PREFIX=/usr >"$W/uninstall.log" 2>&1
check "make uninstall DESTDIR=... PREFIX=/usr" [ $? = 0 ]
left=$(list_files "$D")
check "uninstall leaves no file${left:+ (left: ${left//$'\n'/ })}" [ -z "$left" ]

# ---- PREFIX=/usr/local (the default) --------------------------------------------------------
D=$W/local-root
"${MAKE[@]}" install DESTDIR="$D" >"$W/install3.log" 2>&1
check "make install DESTDIR=... (PREFIX=/usr/local)" [ $? = 0 ]
pydir=$($PY -c 'import sys; print([p for p in sys.path if p.startswith("/usr/local/lib/python3") and p.endswith("-packages")][0])')
{
	expected /usr/local
	echo "$pydir/acl$PYEXT"
	echo "/etc/udev/rules.d/60-npu-mem.rules"
	echo "/etc/sysusers.d/npu-mem.conf"
} | LC_ALL=C sort >"$W/want"
list_files "$D" >"$W/got"
if diff -u "$W/want" "$W/got" >"$W/diff"; then
	ok "/usr/local: rule and group entry in /etc, python module in $pydir"
else
	nok "/usr/local: installed files differ:"; cat "$W/diff"
fi
check "/usr/local: aclmem.pc says prefix=/usr/local" grep -qx 'prefix=/usr/local' "$D/usr/local/lib/pkgconfig/aclmem.pc"
"${MAKE[@]}" uninstall DESTDIR="$D" >"$W/uninstall3.log" 2>&1
left=$(list_files "$D")
check "/usr/local: uninstall leaves no file${left:+ (left: ${left//$'\n'/ })}" [ -z "$left" ]

# ---- a real install, without DESTDIR, in a private mount namespace ------------------------
# /usr/local and /etc get overlays on a tmpfs, so what make install does to
# the running system (group, ldconfig, files where the system looks) is
# seen from inside and thrown away with the namespace.  The user's view:
# python3 imports acl, the example builds with pkg-config alone and runs,
# npu-smi is on PATH, man finds the pages; then make uninstall.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
   unshare -m sh -c "mount -t tmpfs tmpfs '$W' 2>/dev/null" 2>/dev/null; then
	N=$W/ns
	mkdir -p "$N"
	unshare -m bash -s "$TOP" "$N" "$PY" >"$W/ns.log" 2>&1 <<'EOS'
set -u
TOP=$1 N=$2 PY=$3
cd "$TOP" || exit 1
mount -t tmpfs tmpfs "$N" || exit 1
for d in /usr/local /etc; do
	u=$N/$(echo "$d" | tr / _)
	mkdir -p "$u/up" "$u/work"
	mount -t overlay overlay -o "lowerdir=$d,upperdir=$u/up,workdir=$u/work" "$d" || exit 1
done
r() { if "${@:2}"; then echo "ok   - ns: $1"; else echo "FAIL - ns: $1"; fi; }
had_group=$(getent group npu >/dev/null && echo yes || echo no)
make --no-print-directory install >"$N/install.log" 2>&1
r "make install (PREFIX=/usr/local, no DESTDIR)" [ $? = 0 ]
[ "$had_group" = yes ] || r "group npu created" bash -c "getent group npu >/dev/null"
r "ldconfig knows libaclmem.so.1" grep -q 'libaclmem.so.1 .*=> /usr/local/lib/libaclmem.so.1' <(ldconfig -p)
r "python3 imports acl with no PYTHONPATH" \
	env -u PYTHONPATH -u LD_LIBRARY_PATH $PY -c 'import acl' 
cp examples/acl_demo.c "$N/app.c"
(cd "$N" && env -u PKG_CONFIG_PATH -u PKG_CONFIG_LIBDIR \
	gcc -o app app.c $(pkg-config --cflags --libs aclmem)) 
r "app builds with pkg-config --cflags --libs aclmem alone" [ -x "$N/app" ]
env -u LD_LIBRARY_PATH NPU_MEM_DEVICE=$N/none "$N/app" >/dev/null 2>&1
rc=$?
r "app runs, libaclmem found by ld.so (status $rc < 124)" [ "$rc" -lt 124 ]
PATH=/usr/local/bin:/usr/bin:/bin npu-smi -d "$N/none" >/dev/null 2>&1
rc=$?
r "npu-smi on PATH, exit 9 with no device (got $rc)" [ "$rc" = 9 ]
r "man finds npu-smi(1) and aclrtMalloc(3)" \
	bash -c 'man -w npu-smi | grep -q /usr/local/ && man -w 3 aclrtMalloc | grep -q /usr/local/'
r "udev rule in /etc/udev/rules.d" [ -f /etc/udev/rules.d/60-npu-mem.rules ]
make --no-print-directory uninstall >"$N/uninstall.log" 2>&1
r "make uninstall" [ $? = 0 ]
r "ldconfig forgot libaclmem" bash -c '! ldconfig -p | grep -q libaclmem'
left=$(cd "$N" && find _usr_local/up _etc/up \( -type f -o -type l \) \
	\( -name '*aclmem*' -o -name '*npu*' -o -name 'acl.*' -o -name 'acl*.[1-9]' -o -name '*.h' \) 2>/dev/null)
r "uninstall leaves none of our files${left:+ (left: $(echo $left))}" [ -z "$left" ]
EOS
	cat "$W/ns.log"
	pass=$((pass + $(grep -c '^ok ' "$W/ns.log"))) fail=$((fail + $(grep -c '^FAIL ' "$W/ns.log")))
	grep -q '^ok   - ns: make install' "$W/ns.log" || nok "namespace install did not run"
	# shellcheck disable=SC2016 # $1 is bash -c's
	check "host untouched by the namespace install" \
		bash -c '[ ! -e /usr/local/bin/npu-smi ] && [ ! -e /usr/local/lib/libaclmem.so.1 ] &&
			[ ! -e /etc/udev/rules.d/60-npu-mem.rules ] && [ "$(getent group npu || true)" = "$1" ]' _ "$group_before"
else
	echo "skip: real install in a mount namespace (needs root and unshare -m)"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
