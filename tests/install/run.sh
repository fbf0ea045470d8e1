#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Installation tests, for make check (tests/run-all.sh calls this after the
# build; everything must already be built):
#   host-install.sh  make install/uninstall into a DESTDIR, build against it
#                    with pkg-config only (on the host)
#   dkms-test.sh     dkms add/build/install on every kernel, guests booted
#                    with the installed module, dkms remove (root; the real
#                    DKMS tree, cleaned up afterwards)
#   nodriver.sh      a guest without the module: npu-smi and libaclmem say so
# The guest-side tests of the status tool and of access control run in every
# guest of the suite runner (build/tests/kernel/install-status,
# build/tests/lib/install-access).
#
# Environment: NO_DKMS=1 skips dkms-test.sh, NO_VM=1 every guest, KVERS
# limits the kernels.  Logs: build/test-results/install/.
# Last line: "N passed, N failed" (skipped scripts are listed before it);
# exit status 1 if anything failed.
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
cd "$TOP" || exit 1
RES=$TOP/build/test-results/install
mkdir -p "$RES"
tot_p=0 tot_f=0
skipped=()

# run NAME CMD...: CMD's output to RES/NAME.log and the console; its last
# "N passed, N failed" line is added up; exit 77 is a skip, any other
# failure without a count one failure.
run() {
	local name=$1 rc line p f
	shift
	echo "==== $name"
	"$@" 2>&1 | tee "$RES/$name.log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$RES/$name.log" | tail -n1)
	if [ "$rc" = 77 ]; then
		skipped+=("$name: $(grep -v '^[[:space:]]*$' "$RES/$name.log" | tail -n1)")
		return
	fi
	read -r p _ f _ <<<"${line:-0 passed, 0 failed}"
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; echo "$name: exit status $rc"; fi
	tot_p=$((tot_p + p)) tot_f=$((tot_f + f))
}

run host-install tests/install/host-install.sh
if [ "${NO_DKMS:-}" = 1 ]; then
	skipped+=("dkms-test: NO_DKMS=1")
else
	run dkms-test tests/install/dkms-test.sh
fi
if [ "${NO_VM:-}" = 1 ]; then
	skipped+=("nodriver: NO_VM=1")
else
	# vm-run's own status is the script's when the guest was clean.
	run nodriver tests/vm/vm-run -M -t 300 -o "$RES/nodriver" -- tests/install/nodriver.sh
fi

for s in "${skipped[@]}"; do echo "skipped: $s"; done
echo "$tot_p passed, $tot_f failed"
[ "$tot_f" = 0 ]
