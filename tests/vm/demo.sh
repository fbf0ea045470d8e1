#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# "make run": boot the newest kernel with the freshly built npu_mem.ko and run
# the demo, C and Python.  Arguments go to vm-run (e.g. -c x86_64-iommu-edu,
# -k KVER, -p PARAMS, -i).
set -euo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
cd "$TOP"

# The richest program built wins: the ACL demo (make lib), else npu-smi,
# which shows the driver and its memory (make tools).
c_demo=""
for p in build/examples/acl_demo build/tools/npu-smi; do
	if [ -x "$p" ]; then c_demo=$p; break; fi
done

# shellcheck disable=SC2016 # expanded in the guest
script='set -e
echo "== npu-mem demo on $(uname -r) ($VM_CONFIG)"
grep "^npu_mem " /proc/modules
ls -l /dev/npu-mem
'
if [ -n "$c_demo" ]; then
	script+="echo '== $c_demo'; $c_demo
"
fi
if [ -f examples/acl_demo.py ]; then
	script+="echo '== python3 examples/acl_demo.py'; python3 examples/acl_demo.py
"
fi

exec "$TOP/tests/vm/vm-run" "$@" \
	-e "LD_LIBRARY_PATH=$TOP/build/lib" -e "PYTHONPATH=$TOP/build/python" \
	-- sh -c "$script"
