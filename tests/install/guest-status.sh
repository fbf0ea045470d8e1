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
if [ ! -x "$SMI" ] || [ ! -x "$HOLD" ]; then echo "build first: $SMI $HOLD"; exit 1; fi
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
for _ in $(seq 600); do grep -q '^ready\|^open\|^ALLOC' "$W/hold.out" && break; sleep 0.1; done
line=$(cat "$W/hold.out")
echo "helper: $line"
if [[ $line != ready* ]]; then
	nok "helper allocated its buffers ($line)"
	echo "$pass passed, $fail failed"
	exit 1
fi
kv() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$line"; }
h_pid=$(kv pid) h_buf=$(kv buffers) h_bytes=$(kv bytes)
h_huge=$(kv huge_pages) h_normal=$(kv normal_pages)

# ---- JSON, from debugfs (root) ----------------------------------------------
# One python3 per document (it starts slowly in a TCG guest): flatten it to
# "a.b.c=value" lines, processes keyed by pid, then query with sed.
# jflat FILE... writes FILE.flat for each; fails if any does not parse.
jflat() {
	$PY - "$@" <<'EOF_PY'
import json, sys
def walk(out, path, v):
    if isinstance(v, dict):
        for k, x in v.items():
            walk(out, path + [k], x)
    elif path == ["processes"]:
        for x in v:
            walk(out, path + [str(x["pid"])], x)
    else:
        print(".".join(path) + "=" + (v if isinstance(v, str) else json.dumps(v)), file=out)
bad = 0
for name in sys.argv[1:]:
    with open(name + ".flat", "w") as out:
        try:
            walk(out, [], json.load(open(name)))
        except ValueError as e:
            print(name, e, file=sys.stderr)
            bad = 1
sys.exit(bad)
EOF_PY
}
jv() { sed -n "s/^$2=//p" "$1.flat"; }		# jv FILE KEY: values of KEY
jn() { grep -c "^$2=" "$1.flat"; }		# jn FILE KEY-REGEX: how many

"$SMI" --json >"$W/j1" 2>"$W/e1"
rc=$?
# The fallback's document is made now too, to parse both in one go.
NPU_MEM_DEBUGFS=$W/nonexistent "$SMI" --json >"$W/j2" 2>"$W/e2"
rc2=$?
check "npu-smi --json exits 0 (got $rc)" [ "$rc" = 0 ]
check "--json output parses (both views)" jflat "$W/j1" "$W/j2"
P=processes.$h_pid
check "driver version is /sys/module/npu_mem/version" \
	[ "$(jv "$W/j1" driver.version)" = "$(cat /sys/module/npu_mem/version)" ]
check "ABI compatible" [ "$(jv "$W/j1" driver.abi_compatible)" = true ]
check "processes from debugfs" [ "$(jv "$W/j1" processes_source)" = debugfs ]
check "helper pid listed once" [ "$(jn "$W/j1" "$P\.pid")" = 1 ]
check "helper command" [ "$(jv "$W/j1" "$P.command")" = npu-hold ]
check "helper buffers = $h_buf" [ "$(jv "$W/j1" "$P.buffers")" = "$h_buf" ]
check "helper bytes = $h_bytes" [ "$(jv "$W/j1" "$P.bytes")" = "$h_bytes" ]
check "helper huge pages = $h_huge" [ "$(jv "$W/j1" "$P.huge_pages")" = "$h_huge" ]
check "helper normal pages = $h_normal" [ "$(jv "$W/j1" "$P.normal_pages")" = "$h_normal" ]
check "tool does not list itself" [ "$(grep -c '^processes\.[0-9]*\.command=npu-smi$' "$W/j1.flat")" = 0 ]
check "global allocated_bytes >= helper's" [ "$(jv "$W/j1" memory.allocated_bytes)" -ge "$h_bytes" ]
check "global buffers >= helper's" [ "$(jv "$W/j1" memory.buffers)" -ge "$h_buf" ]
check "retained_bytes 0: nothing holds a freed buffer" [ "$(jv "$W/j1" memory.retained_bytes)" = 0 ]
lb=$(jv "$W/j1" limits.limit_bytes) tr=$(jv "$W/j1" memory.total_ram)
check "0 < limit_bytes ($lb) <= total_ram ($tr)" test "${lb:-0}" -gt 0 -a "${lb:-0}" -le "${tr:-0}"
dev=/sys/kernel/debug/npu_mem/device
if [ -r $dev ]; then
	want_coh=$([ "$(sed -n 's/^coherent:\t//p' $dev)" = yes ] && echo true || echo false)
	want_iommu=$([ "$(sed -n 's/^iommu:\t//p' $dev)" = yes ] && echo true || echo false)
	check "coherent matches debugfs ($want_coh)" [ "$(jv "$W/j1" device.coherent)" = "$want_coh" ]
	check "iommu matches debugfs ($want_iommu)" [ "$(jv "$W/j1" device.iommu)" = "$want_iommu" ]
	check "device name matches debugfs" \
		[ "$(jv "$W/j1" device.bus) $(jv "$W/j1" device.name)" = "$(sed -n 's/^device:\t//p' $dev)" ]
fi

# ---- the fdinfo fallback (what a non-root user gets) -------------------------
check "fallback: exit 0 (got $rc2)" [ "$rc2" = 0 ]
check "fallback: processes from fdinfo" [ "$(jv "$W/j2" processes_source)" = fdinfo ]
check "fallback: helper buffers = $h_buf" [ "$(jv "$W/j2" "$P.buffers")" = "$h_buf" ]
check "fallback: helper bytes = $h_bytes" [ "$(jv "$W/j2" "$P.bytes")" = "$h_bytes" ]
check "fallback: helper command" [ "$(jv "$W/j2" "$P.command")" = npu-hold ]

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

# ---- exit statuses --------------------------------------------------------------
NPU_MEM_DEVICE=$W/no-such-node "$SMI" >/dev/null 2>"$W/e4"
rc=$?
check "no device node: exit 9 (got $rc)" [ "$rc" = 9 ]
check "no device node: says why" grep -q "not loaded\|node is missing" "$W/e4"
NPU_MEM_DEVICE=$W/no-such-node "$SMI" --json >"$W/j4" 2>/dev/null
jflat "$W/j3" "$W/j4"
check "helper gone after exit" [ "$(jn "$W/j3" "$P\.pid")" = 0 ]
check "no device node: --json error object" [ "$(jv "$W/j4" exit_status)" = 9 ]
"$SMI" -d /dev/null >/dev/null 2>&1
rc=$?
check "not an npu-mem node: exit 6 (got $rc)" [ "$rc" = 6 ]
"$SMI" frobnicate >/dev/null 2>&1
rc=$?
check "bad usage: exit 2 (got $rc)" [ "$rc" = 2 ]

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
