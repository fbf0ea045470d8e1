#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The DKMS path as a user takes it, on this host's real DKMS tree:
#   host:  make dkms-remove (a clean start), dkms-add, dkms-build and
#          dkms-install for every kernel with headers (timed); the module
#          lands in /lib/modules/KVER/updates/dkms, depmod lists it so that
#          modprobe would find it, and nothing loads it here;
#          make dkms-add/dkms-install again succeed (idempotent).  A kernel
#          whose headers only build in a root of its own release
#          (scripts/kernels.sh) gets the same make targets and checks in
#          that root, with its own dkms, as on a host of that release;
#   guest: each kernel booted with the DKMS-installed file (vm-run -m, .ko.xz
#          on kernels that compress modules), which must be that build
#          (srcversion), making an ALLOC and running npu-smi (DKMS_FULL=1:
#          also the whole install-status test);
#   end:   make dkms-remove leaves no /var/lib/dkms/npu-mem, no
#          /usr/src/npu-mem-*, no module file or modules.dep entry, here
#          and in every root used.
# Cleans up on any exit, and starts with make dkms-remove: an npu-mem of
# this version installed through DKMS before the test is gone after it.
# Needs root; exit 77 without it or without dkms.
#   KVERS="..." limits the kernels; NO_VM=1 skips the guests.
# Prints "N passed, N failed".
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
cd "$TOP" || exit 1
VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
NAME=npu-mem
[ "$(id -u)" = 0 ] || { echo "needs root (dkms)"; exit 77; }
command -v dkms >/dev/null || { echo "dkms not installed (scripts/deps.sh)"; exit 77; }

pass=0 fail=0
ok() { echo "ok   - $*"; pass=$((pass + 1)); }
nok() { echo "FAIL - $*"; fail=$((fail + 1)); }
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
RES=$TOP/build/test-results/dkms
mkdir -p "$RES"
MAKE=(make --no-print-directory)

KERNELS=$TOP/scripts/kernels.sh
KVERS=${KVERS:-$(bash "$KERNELS" --kvers | tr '\n' ' ')}
# shellcheck disable=SC2206
kvers=($KVERS)
[ ${#kvers[@]} -gt 0 ] || { echo "no kernel headers in /lib/modules/*/build"; exit 77; }

# No /proc/modules: a container, where nothing can load a module anyway.
loaded() { [ -r /proc/modules ] && grep -c '^npu_mem ' /proc/modules || echo none; }
loaded_before=$(loaded)

# The root a kernel's DKMS lives in: "" for the host's.  in_k KVER CMD...
# runs CMD there (kernels.sh --run runs a host kernel's here).
declare -A root=()
for k in "${kvers[@]}"; do root[$k]=$(bash "$KERNELS" --root "$k" || true); done
in_k() { bash "$KERNELS" --run "$@"; }
# One kernel per root: where make dkms-remove has to run.
declare -A where=([host]="")
for k in "${kvers[@]}"; do [ -z "${root[$k]}" ] || where[${root[$k]}]=$k; done

cleanup_done=0 remove_rc=0
cleanup() {
	local w
	[ "$cleanup_done" = 1 ] && return
	cleanup_done=1
	for w in "${!where[@]}"; do
		if [ "$w" = host ]; then
			"${MAKE[@]}" dkms-remove
		else
			in_k "${where[$w]}" "${MAKE[@]}" dkms-remove
		fi >>"$RES/remove.log" 2>&1 || remove_rc=$?
	done
}
trap cleanup EXIT

# ---- host: add, build, install ----------------------------------------------------
"${MAKE[@]}" dkms-remove >"$RES/remove-before.log" 2>&1
check "make dkms-remove before starting" [ $? = 0 ]
for w in "${!where[@]}"; do
	[ "$w" = host ] && continue
	in_k "${where[$w]}" "${MAKE[@]}" dkms-remove >>"$RES/remove-before.log" 2>&1
	check "make dkms-remove before starting, in $w" [ $? = 0 ]
done
"${MAKE[@]}" dkms-add >"$RES/add.log" 2>&1
check "make dkms-add" [ $? = 0 ]
check "sources in /usr/src/$NAME-$VERSION" [ -f "/usr/src/$NAME-$VERSION/dkms.conf" ]
check "dkms status: added" grep -q "$NAME/$VERSION" <(dkms status -m $NAME -v "$VERSION" 2>/dev/null)
"${MAKE[@]}" dkms-add >"$RES/add2.log" 2>&1
check "make dkms-add again" [ $? = 0 ]

declare -A kofile=()
for k in "${kvers[@]}"; do
	r=${root[$k]}
	t0=$(date +%s.%N)
	in_k "$k" "${MAKE[@]}" dkms-build DKMS_KVERS="$k" >"$RES/build-$k.log" 2>&1
	rc=$?
	t=$(echo "$(date +%s.%N) - $t0" | bc)
	check "$k: make dkms-build${r:+ in $r} (${t%???????}s)" [ "$rc" = 0 ]
	[ "$rc" = 0 ] || tail -n 30 "$r/var/lib/dkms/$NAME/$VERSION/build/make.log" 2>/dev/null
	in_k "$k" "${MAKE[@]}" dkms-install DKMS_KVERS="$k" >"$RES/install-$k.log" 2>&1
	check "$k: make dkms-install" [ $? = 0 ]
	check "$k: install log has no modprobe" bash -c "! grep -qi modprobe '$RES/install-$k.log'"
	check "$k: dkms status says installed" \
		grep -q "installed" <(in_k "$k" dkms status -m $NAME -v "$VERSION" -k "$k" 2>/dev/null)
	# Paths as the kernel's own system sees them, and from here.
	f=$(find "$r/lib/modules/$k/updates/dkms" -name 'npu_mem.ko*' 2>/dev/null | head -n1)
	f=${f#"$r"}
	kofile[$k]=${f:+$r$f}
	check "$k: module file ${f:-missing}" [ -n "$f" ]
	[ -n "$f" ] || continue
	check "$k: modules.dep lists it (modprobe finds it)" \
		grep -q '^updates/dkms/npu_mem\.ko[.a-z]*:' "$r/lib/modules/$k/modules.dep"
	check "$k: modinfo -k resolves npu_mem to it" \
		[ "$(in_k "$k" modinfo -k "$k" -n npu_mem 2>/dev/null)" = "$f" ]
	check "$k: vermagic $k" [ "$(in_k "$k" modinfo -F vermagic "$f" | cut -d' ' -f1)" = "$k" ]
	check "$k: version $VERSION" [ "$(in_k "$k" modinfo -F version "$f")" = "$VERSION" ]
done
in_k "${kvers[0]}" "${MAKE[@]}" dkms-install DKMS_KVERS="${kvers[0]}" >"$RES/install-again.log" 2>&1
check "make dkms-install again (${kvers[0]})" [ $? = 0 ]
check "nothing loaded npu_mem on the host" [ "$(loaded)" = "$loaded_before" ]

# ---- guests booted with the DKMS-installed module ----------------------------------------
if [ "${NO_VM:-}" = 1 ]; then
	echo "NO_VM=1: guests skipped"
else
	# Only what the guests run, so another suite's build break is not ours.
	{ "${MAKE[@]}" -C tools && "${MAKE[@]}" -C tests "$TOP/build/tests/install/npu-hold" \
		"$TOP/build/tests/kernel/install-status"; } >"$RES/tests-build.log" 2>&1 ||
		nok "building the test programs (see $RES/tests-build.log)"
	for k in "${kvers[@]}"; do
		f=${kofile[$k]:-}
		[ -n "$f" ] || continue
		[ -e "${root[$k]}/boot/vmlinuz-$k" ] || { echo "skip guest $k: no vmlinuz-$k"; continue; }
		src=$(in_k "$k" modinfo -F srcversion "${f#"${root[$k]}"}")
		out=$RES/guest-$k
		# shellcheck disable=SC2016 # expanded in the guest
		tests/vm/vm-run -q -t 300 -o "$out" -k "$k" -m "$f" -e "WANT_SRC=$src" \
			-e "DKMS_FULL=${DKMS_FULL:-0}" -- sh -c '
			got=$(cat /sys/module/npu_mem/srcversion)
			echo "srcversion: $got (want $WANT_SRC)"
			[ "$got" = "$WANT_SRC" ] || exit 10
			build/tests/install/npu-hold 1M 2M:first </dev/null || exit 11
			build/tools/npu-smi || exit 12
			if [ "$DKMS_FULL" = 1 ]; then build/tests/kernel/install-status || exit 13; fi
			' >"$out.log" 2>&1
		rc=$?
		case $rc in
		0) ok "$k: guest with the DKMS module: srcversion, ALLOC, npu-smi${DKMS_FULL:+, install-status}" ;;
		10) nok "$k: guest loaded another build than DKMS's (see $out/console.log)" ;;
		*) nok "$k: guest smoke failed, exit $rc ($(tail -n1 "$out.log"); see $out/console.log)" ;;
		esac
	done
fi

# ---- remove ---------------------------------------------------------------------------------
cleanup
check "make dkms-remove" [ "$remove_rc" = 0 ]
for w in "${!where[@]}"; do
	r=${w#host}
	in=${r:+ in $r}
	check "no /var/lib/dkms/$NAME$in" [ ! -e "$r/var/lib/dkms/$NAME" ]
	check "no /usr/src/$NAME-*$in" bash -c "! compgen -G '$r/usr/src/$NAME-*' >/dev/null"
	left=$(find "$r"/lib/modules/*/updates -name 'npu_mem.ko*' 2>/dev/null)
	check "no module file left$in${left:+: $left}" [ -z "$left" ]
	check "no modules.dep entry left$in" bash -c "! grep -q 'npu_mem' '$r'/lib/modules/*/modules.dep"
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
