#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What a user sees before the module is loaded (runs in a guest booted with
# vm-run -M): npu-smi exits 9 and says the driver is not loaded, in text and
# JSON, and libaclmem's aclrtSetDevice returns ACL_ERROR_RT_NO_DEVICE
# (207004) with a hint when NPU_MEM_LOG is set.
# Prints "N passed, N failed"; exit 77 if the driver is loaded after all.
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
SMI=$TOP/build/tools/npu-smi
PROBE=$TOP/build/tests/install/acl-probe
if [ -e /dev/npu-mem ] || [ -d /sys/module/npu_mem ]; then
	echo "npu_mem is loaded: not the no-driver case"
	exit 77
fi
unset NPU_MEM_DEVICE NPU_MEM_LOG
pass=0 fail=0
check() {
	local d=$1
	shift
	if "$@"; then echo "ok   - $d"; pass=$((pass + 1)); else echo "FAIL - $d"; fail=$((fail + 1)); fi
}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

"$SMI" >"$W/o" 2>"$W/e"
rc=$?
check "npu-smi: exit 9 (got $rc)" [ "$rc" = 9 ]
check "npu-smi: says the driver is not loaded ($(cat "$W/e"))" grep -q 'driver is not loaded' "$W/e"
"$SMI" --json >"$W/j" 2>/dev/null
check "npu-smi --json: error object with exit_status 9" \
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["exit_status"] != 9)' "$W/j"
NPU_MEM_LOG=error "$PROBE" >"$W/o" 2>"$W/e"
check "aclrtSetDevice = 207004 ACL_ERROR_RT_NO_DEVICE ($(cat "$W/o"))" grep -qx 'aclrtSetDevice=207004' "$W/o"
check "NPU_MEM_LOG=error: hint on stderr ($(head -n1 "$W/e"))" grep -q 'npu_mem module loaded' "$W/e"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
