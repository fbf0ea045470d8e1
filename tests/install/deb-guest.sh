#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Inside a guest booted from the root that tests/install/deb-test.sh
# installed the packages in (vm-run -M: nothing loaded the module): what a
# boot and a login do there, step by step.
#   deb-guest.sh DIR     DIR holds acl_demo and acl_demo_static, built from
#                        the installed libaclmem-dev's example
# One "ok"/"FAIL" line per check, then "N passed, N failed"; exit 1 on a
# failure.  Users: alice (in group npu), bob (not).
dir=$1
pass=0 fail=0
ok() { echo "ok   - $*"; pass=$((pass + 1)); }
nok() { echo "FAIL - $*"; fail=$((fail + 1)); }
check() {
	d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
as() { u=$1; shift; setpriv --reuid="$u" --regid="$u" --init-groups env HOME=/tmp "$@"; }
k=$(uname -r)

# udev as at boot, then the modules that modules-load.d names, as
# systemd-modules-load.service loads them at boot.
/lib/systemd/systemd-udevd --daemon
check "$k: systemd-udevd started" sh -c "pidof systemd-udevd >/dev/null"
/lib/systemd/systemd-modules-load
check "$k: systemd-modules-load loaded npu_mem (usr/lib/modules-load.d/npu-mem.conf)" \
	[ -d /sys/module/npu_mem ]
f=$(modinfo -n npu_mem)
echo "module file: $f"
check "$k: the module loaded is DKMS's" [ "${f#/lib/modules/"$k"/updates/dkms/}" != "$f" ]
check "$k: same build as that file (srcversion)" \
	[ "$(cat /sys/module/npu_mem/srcversion)" = "$(modinfo -F srcversion "$f")" ]
check "$k: production build: debugfs has no dma_copy (no test DMA engine)" \
	sh -c '[ -d /sys/kernel/debug/npu_mem ] && [ ! -e /sys/kernel/debug/npu_mem/dma_copy ]'
# udevadm settle does nothing in a chroot ("Running in chroot, ignoring
# request"): wait for the rule's effect itself.
n=0
while [ "$(stat -c %G /dev/npu-mem 2>/dev/null)" != npu ] && [ $n -lt 300 ]; do
	sleep 0.1
	n=$((n + 1))
done
ls -l /dev/npu-mem
check "$k: udev: /dev/npu-mem is root:npu 0660" \
	[ "$(stat -c '%U:%G %a' /dev/npu-mem)" = "root:npu 660" ]

echo "--- alice ($(id alice)): the C demo, its static build, the Python demo, npu-smi"
# Buffers count against RLIMIT_MEMLOCK (8 MiB here, the kernel's default):
# 1 MiB as the Python demo uses, and the C demo's own 8 MiB with the limit
# that doc/install.md has the group given in limits.d (setpriv runs no PAM).
grep "Max locked memory" /proc/self/limits
as alice "$dir/acl_demo" 1048576 >"$dir/alice-c.log" 2>&1
check "$k: alice: acl_demo 1048576 (exit $?)" [ $? = 0 ]
sed 's/^/    /' "$dir/alice-c.log"
as alice "$dir/acl_demo_static" 1048576 >"$dir/alice-static.log" 2>&1
check "$k: alice: acl_demo linked with libaclmem.a (exit $?)" [ $? = 0 ]
prlimit --memlock=unlimited:unlimited setpriv --reuid=alice --regid=alice --init-groups \
	env HOME=/tmp "$dir/acl_demo" >"$dir/alice-c-8m.log" 2>&1
check "$k: alice: acl_demo (8 MiB) with memlock unlimited as in limits.d (exit $?)" [ $? = 0 ]
as alice python3 /usr/share/doc/python3-acl/examples/acl_demo.py >"$dir/alice-py.log" 2>&1
check "$k: alice: acl_demo.py (exit $?)" [ $? = 0 ]
sed 's/^/    /' "$dir/alice-py.log"
as alice npu-smi >"$dir/alice-smi.log" 2>&1
check "$k: alice: npu-smi (exit $?)" [ $? = 0 ]
sed -n '1,12s/^/    /p' "$dir/alice-smi.log"

echo "--- bob ($(id bob)): refused"
as bob "$dir/acl_demo" 1048576 >"$dir/bob-c.log" 2>&1
rc=$?
sed 's/^/    /' "$dir/bob-c.log"
check "$k: bob: acl_demo fails (exit $rc)" [ $rc = 1 ]
check "$k: bob: aclrtSetDevice = 207006 (ACL_ERROR_RT_NO_PERMISSION)" \
	grep -q '^aclrtSetDevice(0) = 207006$' "$dir/bob-c.log"
as bob python3 /usr/share/doc/python3-acl/examples/acl_demo.py >"$dir/bob-py.log" 2>&1
check "$k: bob: acl_demo.py gets 207006" grep -q 'set_device(0) = 207006' "$dir/bob-py.log"
as bob npu-smi >/dev/null 2>&1
rc=$?
check "$k: bob: npu-smi exits 4 (may not open the device; got $rc)" [ $rc = 4 ]
as bob sh -c 'exec 3</dev/npu-mem' 2>"$dir/bob-open.log"
check "$k: bob: open(/dev/npu-mem) refused ($(cat "$dir/bob-open.log"))" \
	grep -q 'Permission denied' "$dir/bob-open.log"

modprobe -r npu_mem
check "$k: modprobe -r npu_mem" [ ! -d /sys/module/npu_mem ]
kill "$(pidof systemd-udevd)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
