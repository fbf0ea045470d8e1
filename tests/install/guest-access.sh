#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Access control as installed (runs in a guest with the driver loaded, as
# build/tests/lib/install-access): group "npu" is made from our sysusers.d
# entry, udev/60-npu-mem.rules is applied by a real systemd-udevd (or, where
# there is none, by chgrp/chmod as the rule says), and then:
#   - root and a member of "npu" can open the device and allocate;
#   - a user outside the group gets EACCES on open, npu-smi says so with
#     exit 4, and libaclmem's aclrtSetDevice returns ACL_ERROR_RT_NO_PERMISSION
#     (207006), with a message on stderr only when NPU_MEM_LOG asks for one;
#   - npu-smi run by the group member falls back to fdinfo and sees that
#     user's own allocations.
# The guest's root file system is the host's, read-only: /etc/group is
# replaced by a bind mount for the duration, and everything is put back.
# Prints "N passed, N failed"; exit 77 without /dev/npu-mem or root.
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)
RULE=$TOP/udev/60-npu-mem.rules
SYSUSERS=$TOP/udev/npu-mem.sysusers
SMI=$TOP/build/tools/npu-smi
HOLD=$TOP/build/tests/install/npu-hold
PROBE=$TOP/build/tests/install/acl-probe
NODE=/dev/npu-mem
USER_ID=65534	# nobody: exists everywhere, in no group we care about
PY=/usr/bin/python3
[ -x $PY ] || PY=python3

[ "$(id -u)" = 0 ] || { echo "needs root"; exit 77; }
[ -c $NODE ] || { echo "no $NODE (driver not loaded)"; exit 77; }
[ "${VM_RUN:-}" = 1 ] || { echo "changes /etc/group and $NODE: guest only"; exit 77; }
# Access control does not depend on the device behind the driver: once per
# kernel (the plain configuration) is enough for make check's time budget.
if [ "${VM_CONFIG:-x86_64}" != x86_64 ] && [ "${NPU_MEM_INSTALL_ALL:-}" != 1 ]; then
	echo "access control is tested in the x86_64 configuration (NPU_MEM_INSTALL_ALL=1 for all)"
	exit 77
fi
command -v setpriv >/dev/null || { echo "no setpriv (util-linux)"; exit 77; }
for f in "$SMI" "$HOLD" "$PROBE"; do
	[ -x "$f" ] || { echo "build first: $f"; exit 1; }
done
unset NPU_MEM_DEVICE NPU_MEM_DEBUGFS NPU_MEM_LOG

pass=0 fail=0
ok() { echo "ok   - $*"; pass=$((pass + 1)); }
nok() { echo "FAIL - $*"; fail=$((fail + 1)); }
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}

W=$(mktemp -d)
mounted=0 udevd=0 holder=""
orig_mode=$(stat -c '%a %u:%g' $NODE)
cleanup() {
	if [ -n "$holder" ]; then exec 7>&-; wait "$holder" 2>/dev/null; fi
	[ "$udevd" = 1 ] && SYSTEMD_IGNORE_CHROOT=1 udevadm control --exit 2>/dev/null
	chmod "${orig_mode%% *}" $NODE
	chown "${orig_mode##* }" $NODE
	[ "$mounted" = 1 ] && umount /etc/group
	rm -rf "$W" /run/udev/rules.d/60-npu-mem.rules
}
trap cleanup EXIT

# ---- group "npu", from the sysusers.d entry make install ships ----------------
if ! getent group npu >/dev/null; then
	mkdir -p "$W/root/etc"
	cp /etc/group /etc/gshadow /etc/passwd /etc/shadow "$W/root/etc/" 2>/dev/null
	if command -v systemd-sysusers >/dev/null; then
		# --root reads its config relative to the root: feed it on stdin.
		systemd-sysusers --root="$W/root" - <"$SYSUSERS"
	else
		echo "npu:x:$(awk -F: 'BEGIN { g = 999 } { u[$3] = 1 } END { while (u[g]) g--; print g }' /etc/group):" >>"$W/root/etc/group"
	fi
	mount --bind "$W/root/etc/group" /etc/group && mounted=1
fi
gid=$(getent group npu | cut -d: -f3)
check "group npu exists (gid ${gid:-none})" [ -n "$gid" ]
[ -n "$gid" ] || { echo "$pass passed, $fail failed"; exit 1; }

# ---- the rule's effect ------------------------------------------------------------
# What the rule says, to check the result against (and apply without udevd).
want_group=$(sed -n '/^KERNEL=="npu-mem"/s/.*GROUP="\([^"]*\)".*/\1/p' "$RULE")
want_mode=$(sed -n '/^KERNEL=="npu-mem"/s/.*MODE="\([^"]*\)".*/\1/p' "$RULE")
check "rule sets GROUP=npu MODE=0660 (has $want_group $want_mode)" \
	[ "$want_group $want_mode" = "npu 0660" ]
chown root:root $NODE
chmod 600 $NODE
udevd_bin=$(command -v systemd-udevd || echo /lib/systemd/systemd-udevd)
if [ -x "$udevd_bin" ] && command -v udevadm >/dev/null; then
	# udev reads /run/udev/rules.d too; systemd tools refuse to act in a
	# chroot unless told it is fine.
	export SYSTEMD_IGNORE_CHROOT=1
	mkdir -p /run/udev/rules.d
	cp "$RULE" /run/udev/rules.d/
	"$udevd_bin" --daemon && udevd=1
	udevadm trigger --action=add --sysname-match=npu-mem
	udevadm settle --timeout=30
	how="systemd-udevd"
else
	chgrp "$want_group" $NODE
	chmod "$want_mode" $NODE
	how="chgrp/chmod as the rule says"
fi
check "udev rule applied by $how: $NODE is root:npu 660 (is $(stat -c '%U:%G %a' $NODE))" \
	[ "$(stat -c '%U:%G %a' $NODE)" = "root:npu 660" ]

# The users run copies in $W: the tree may sit in a directory only root can
# enter (a clone in mktemp -d, a 0700 home), and the probe finds its
# library through an absolute runpath into it.
chmod 755 "$W"
cp "$SMI" "$HOLD" "$PROBE" "$TOP"/build/lib/libaclmem.so.1 "$W"/
SMI=$W/${SMI##*/} HOLD=$W/${HOLD##*/} PROBE=$W/${PROBE##*/}
export LD_LIBRARY_PATH=$W
# With the 8 MiB RLIMIT_MEMLOCK kernels give users from 5.16 on: 5.10's
# 64 KiB default is less than a 64 KiB buffer and the library's padding.
as_member() { (ulimit -l 8192 && setpriv --reuid=$USER_ID --regid=$USER_ID --groups="$gid" "$@"); }
as_other() { (ulimit -l 8192 && setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups "$@"); }

# ---- root, a member, an outsider ---------------------------------------------------
"$HOLD" 64K </dev/null >"$W/o" 2>&1
check "root: open and ALLOC ($(head -n1 "$W/o"))" grep -q '^ready' "$W/o"
as_member "$HOLD" 64K </dev/null >"$W/o" 2>&1
check "member of npu: open and ALLOC ($(head -n1 "$W/o"))" grep -q '^ready' "$W/o"
as_other "$HOLD" -o </dev/null >"$W/o" 2>&1
rc=$?
check "outsider: open refused (exit $rc: $(head -n1 "$W/o"))" [ "$rc" = 3 ]
check "outsider: ... with EACCES" grep -q 'Permission denied' "$W/o"

# ---- libaclmem ----------------------------------------------------------------------
as_member "$PROBE" >"$W/o" 2>"$W/e"
rc=$?
check "member: aclrtSetDevice and aclrtMalloc succeed (exit $rc: $(tr '\n' ' ' <"$W/o"))" \
	[ "$rc" = 0 ]
as_other "$PROBE" >"$W/o" 2>"$W/e"
check "outsider: aclrtSetDevice = 207006 ACL_ERROR_RT_NO_PERMISSION ($(tr '\n' ' ' <"$W/o"))" \
	grep -qx 'aclrtSetDevice=207006' "$W/o"
check "outsider, NPU_MEM_LOG unset: library quiet on stderr" [ ! -s "$W/e" ]
as_other env NPU_MEM_LOG=error "$PROBE" >"$W/o" 2>"$W/e"
check "outsider, NPU_MEM_LOG=error: still 207006" grep -qx 'aclrtSetDevice=207006' "$W/o"
check "outsider, NPU_MEM_LOG=error: stderr names the node and the reason ($(head -n1 "$W/e"))" \
	grep -q "libaclmem: error:.*$NODE.*Permission denied" "$W/e"

# ---- npu-smi as these users ------------------------------------------------------------
as_other "$SMI" >"$W/o" 2>"$W/e"
rc=$?
check "outsider: npu-smi exit 4 (got $rc)" [ "$rc" = 4 ]
check "outsider: npu-smi says permission denied" grep -qi 'permission denied' "$W/e"

mkfifo "$W/in"
as_member "$HOLD" 256K 4K <"$W/in" >"$W/hold.out" 2>&1 &
holder=$!
exec 7>"$W/in"
for _ in $(seq 600); do grep -q '^ready\|^open\|^ALLOC' "$W/hold.out" && break; sleep 0.1; done
line=$(cat "$W/hold.out")
if [[ $line == ready* ]]; then
	kv() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$line"; }
	pid=$(kv pid) buffers=$(kv buffers) bytes=$(kv bytes)
	as_member "$SMI" --json >"$W/j" 2>"$W/e"
	check "member: npu-smi --json exit 0" [ $? = 0 ]
	got=$($PY -c 'import json,sys; d=json.load(open(sys.argv[1]))
p=[x for x in d["processes"] if x["pid"] == int(sys.argv[2])]
print(d["processes_source"], d["processes_complete"], p and p[0]["buffers"], p and p[0]["bytes"])' \
		"$W/j" "$pid" 2>&1)
	check "member: fdinfo view of own helper (want 'fdinfo False $buffers $bytes', got '$got')" \
		[ "$got" = "fdinfo False $buffers $bytes" ]
else
	nok "member: helper holding buffers ($line)"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
