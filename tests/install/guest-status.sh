#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# npu-smi against known allocations (runs in a guest with the driver loaded,
# as build/tests/kernel/install-status): a helper process holds buffers whose
# sizes the driver returned, and the tool must report exactly those for its
# pid, from debugfs and from the fdinfo fallback, in JSON and in the table.
# Also its exit status without a driver, with a non-npu-mem node, with bad
# usage.  Prints "N passed, N failed"; exit 77 without /dev/npu-mem or root.
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)
SMI=$TOP/build/tools/npu-smi
HOLD=$TOP/build/tests/install/npu-hold
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 77; }
[ -c /dev/npu-mem ] || { echo "no /dev/npu-mem (driver not loaded)"; exit 77; }
[ -x "$SMI" ] && [ -x "$HOLD" ] || { echo "build first: $SMI $HOLD"; exit 1; }
unset NPU_MEM_DEVICE NPU_MEM_DEBUGFS

pass=0 fail=0
ok() { echo "ok   - $*"; pass=$((pass + 1)); }
nok() { echo "FAIL - $*"; fail=$((fail + 1)); }
check() { # check DESCRIPTION CMD...
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
W=$(mktemp -d)
holder=""
cleanup() {
	[ -n "$holder" ] && { exec 7>&- 2>/dev/null; wait "$holder" 2>/dev/null; }
	rm -rf "$W"
}
trap cleanup EXIT

# ---- the helper: 3 normal-page buffers (one rounded up) and a huge-first one
mkfifo "$W/in"
"$HOLD" 64K 128K 5000 4M:first <"$W/in" >"$W/hold.out" 2>&1 &
holder=$!
exec 7>"$W/in"
for _ in $(seq 100); do grep -q '^ready\|^open\|^ALLOC' "$W/hold.out" && break; sleep 0.1; done
line=$(cat "$W/hold.out")
echo "helper: $line"
if [[ $line != ready* ]]; then
	nok "helper allocated its buffers ($line)"
	echo "$pass passed, $fail failed"
	exit 1
fi
eval "${line#ready }"	# pid= buffers= bytes= huge_pages= normal_pages=
h_pid=$pid h_buf=$buffers h_bytes=$bytes h_huge=$huge_pages h_normal=$normal_pages

# ---- JSON, from debugfs (root) ----------------------------------------------
"$SMI" --json >"$W/j1" 2>"$W/e1"
rc=$?
check "npu-smi --json exits 0 (got $rc)" [ "$rc" = 0 ]
check "--json output parses" $PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$W/j1"

# jq-less queries: jget FILE EXPR, EXPR a Python expression over d (the doc)
jget() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
proc() { # proc FILE PID FIELD
	jget "$1" "[p['$3'] for p in d['processes'] if p['pid'] == $2]"
}
check "driver version is /sys/module/npu_mem/version" \
	[ "$(jget "$W/j1" "d['driver']['version']")" = "$(cat /sys/module/npu_mem/version)" ]
check "ABI compatible" [ "$(jget "$W/j1" "d['driver']['abi_compatible']")" = True ]
check "processes from debugfs" [ "$(jget "$W/j1" "d['processes_source']")" = debugfs ]
check "helper pid listed once" [ "$(proc "$W/j1" "$h_pid" pid)" = "[$h_pid]" ]
check "helper command" [ "$(proc "$W/j1" "$h_pid" command)" = "['npu-hold']" ]
check "helper buffers = $h_buf" [ "$(proc "$W/j1" "$h_pid" buffers)" = "[$h_buf]" ]
check "helper bytes = $h_bytes" [ "$(proc "$W/j1" "$h_pid" bytes)" = "[$h_bytes]" ]
check "helper huge pages = $h_huge" [ "$(proc "$W/j1" "$h_pid" huge_pages)" = "[$h_huge]" ]
check "helper normal pages = $h_normal" [ "$(proc "$W/j1" "$h_pid" normal_pages)" = "[$h_normal]" ]
check "tool does not list itself" \
	[ "$(jget "$W/j1" "len([p for p in d['processes'] if p['command'] == 'npu-smi'])")" = 0 ]
check "global allocated_bytes >= helper's" \
	[ "$(jget "$W/j1" "d['memory']['allocated_bytes'] >= $h_bytes")" = True ]
check "global buffers >= helper's" \
	[ "$(jget "$W/j1" "d['memory']['buffers'] >= $h_buf")" = True ]
check "limit_bytes <= total_ram, > 0" \
	[ "$(jget "$W/j1" "0 < d['limits']['limit_bytes'] <= d['memory']['total_ram']")" = True ]
dev=/sys/kernel/debug/npu_mem/device
if [ -r $dev ]; then
	want_coh=$([ "$(sed -n 's/^coherent:\t//p' $dev)" = yes ] && echo True || echo False)
	want_iommu=$([ "$(sed -n 's/^iommu:\t//p' $dev)" = yes ] && echo True || echo False)
	check "coherent matches debugfs ($want_coh)" [ "$(jget "$W/j1" "d['device']['coherent']")" = "$want_coh" ]
	check "iommu matches debugfs ($want_iommu)" [ "$(jget "$W/j1" "d['device']['iommu']")" = "$want_iommu" ]
	check "device name matches debugfs" \
		[ "$(jget "$W/j1" "d['device']['bus'] + ' ' + d['device']['name']")" = "$(sed -n 's/^device:\t//p' $dev)" ]
fi

# ---- the fdinfo fallback (what a non-root user gets) -------------------------
NPU_MEM_DEBUGFS=$W/nonexistent "$SMI" --json >"$W/j2" 2>"$W/e2"
check "fallback: exit 0" [ $? = 0 ]
check "fallback: processes from fdinfo" [ "$(jget "$W/j2" "d['processes_source']")" = fdinfo ]
check "fallback: helper buffers = $h_buf" [ "$(proc "$W/j2" "$h_pid" buffers)" = "[$h_buf]" ]
check "fallback: helper bytes = $h_bytes" [ "$(proc "$W/j2" "$h_pid" bytes)" = "[$h_bytes]" ]
check "fallback: helper command" [ "$(proc "$W/j2" "$h_pid" command)" = "['npu-hold']" ]

# ---- the human table ----------------------------------------------------------
"$SMI" info >"$W/t" 2>&1
check "npu-smi info exits 0" [ $? = 0 ]
check "table has the helper's row (pid, command, 1 file, $h_buf buffers)" \
	grep -Eq "^ +$h_pid +npu-hold +1 +$h_buf " "$W/t"
for s in Driver Device Memory Limits Processes; do
	check "table has section $s" grep -q "^$s" "$W/t"
done
[ "$fail" = 0 ] || cat "$W/t"

# ---- after the helper exits, it is gone ---------------------------------------
exec 7>&-
wait "$holder"
holder=""
"$SMI" --json >"$W/j3"
check "helper gone after exit" [ "$(proc "$W/j3" "$h_pid" pid)" = "[]" ]

# ---- exit statuses --------------------------------------------------------------
NPU_MEM_DEVICE=$W/no-such-node "$SMI" >/dev/null 2>"$W/e4"
rc=$?
check "no device node: exit 9 (got $rc)" [ "$rc" = 9 ]
check "no device node: says why" grep -q "not loaded\|node is missing" "$W/e4"
NPU_MEM_DEVICE=$W/no-such-node "$SMI" --json >"$W/j4" 2>/dev/null
check "no device node: --json error object" \
	[ "$(jget "$W/j4" "d['exit_status']")" = 9 ]
"$SMI" -d /dev/null >/dev/null 2>&1
rc=$?
check "not an npu-mem node: exit 6 (got $rc)" [ "$rc" = 6 ]
"$SMI" frobnicate >/dev/null 2>&1
rc=$?
check "bad usage: exit 2 (got $rc)" [ "$rc" = 2 ]

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
