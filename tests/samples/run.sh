#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The CANN-style samples (samples/), built the way their users build them:
# "source <toolkit>/set_env.sh", then cmake with nothing but each sample's
# own CMakeLists.txt, against two toolkits:
#   tree       build/toolkit, which "make lib" lays out
#   installed  a real "make install-files" into build/samples/prefix (a
#              real PREFIX, not a DESTDIR: set_env.sh holds its final path,
#              and the guests see build/ at the same path)
#
#   tests/samples/run.sh build
#       On the host, after "make lib": the install, each sample against each
#       toolkit (warnings are errors), the checks of the layout itself
#       (set_env.sh under bash and dash, -lascendcl records libaclmem.so.1,
#       pkg-config from the build tree), each kernel-launch sample's
#       RUN_MODE=cpu (CANN's CPU debug mode) built and run here, and for
#       every sample that built a program (but an MPI one, which the suite
#       "mpi" runs) in build/tests/samples/ for the guests' "samples" suite
#       (tests/guest/run-suites.sh): NAME (tree), NAME-installed, and
#       python-NAME[-installed] for samples/python/NAME.py.  A sample that
#       calls a function the toolkit's headers do not declare yet is
#       skipped, with its name.  Prints "ok"/"FAIL"/"skip" lines and
#       "N passed, N failed, N skipped"; exit status 1 if anything failed.
#   tests/samples/run.sh run TOOLKIT NAME CMD...
#       What those programs run, in a guest: CMD with nothing but
#       TOOLKIT/set_env.sh's environment; passes when it exits 0 with the
#       last line "PASS NAME", and libaclmem and the acl module came from
#       TOOLKIT.  Exit 77 (skipped) without /dev/npu-mem, or when CMD
#       exits 77 (a sample that needs two devices, in a one-device guest).
#
# Logs: build/samples/logs/.
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
W=$TOP/build/samples
TREE_TK=$TOP/build/toolkit
PREFIX_DIR=$W/prefix
PY=/usr/bin/python3

# A clean environment of CANN's variables: none of the caller's may leak in.
clean_env() {
	env -u LD_LIBRARY_PATH -u PYTHONPATH -u ASCEND_TOOLKIT_HOME \
		-u ASCEND_HOME_PATH -u ASCEND_OPP_PATH -u ASCEND_AICPU_PATH \
		-u ASCEND_CANN_PACKAGE_PATH -u ASCENDC_CMAKE_DIR "$@"
}

# ---- run (in a guest) --------------------------------------------------------------
if [ "${1:-}" = run ]; then
	[ $# -ge 4 ] || { echo "usage: run.sh run TOOLKIT NAME CMD..." >&2; exit 2; }
	tk=$2 name=$3
	shift 3
	[ -c /dev/npu-mem ] || { echo "no /dev/npu-mem: the module is not loaded"; exit 77; }
	unset LD_LIBRARY_PATH PYTHONPATH ASCEND_TOOLKIT_HOME ASCEND_HOME_PATH \
		ASCEND_OPP_PATH ASCEND_AICPU_PATH ASCEND_CANN_PACKAGE_PATH \
		ASCENDC_CMAKE_DIR
	# shellcheck disable=SC1091
	. "$tk/set_env.sh" || exit 1
	if [[ $1 == *.py ]]; then
		from=$(cd / && "$PY" -c 'import acl; print(acl.__file__)' 2>&1)
		what="acl module"
	else
		from=$(ldd "$1" | sed -n 's/^[[:space:]]*libaclmem\.so\.1 => \([^ ]*\).*/\1/p')
		what="libaclmem.so.1"
	fi
	echo "$what: $from"
	case $from in
	"$tk"/*) ;;
	*) echo "FAIL: $what does not come from $tk"; exit 1 ;;
	esac
	if [[ $1 == *.py ]]; then set -- "$PY" "$@"; fi
	# The tree is read-only in a guest: the output stays in memory.
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	last=$(printf '%s\n' "$out" | grep -v '^[[:space:]]*$' | tail -n 1)
	# A sample that needs what this guest lacks (peer_copy: two devices).
	if [ "$rc" = 77 ]; then exit 77; fi
	if [ "$rc" != 0 ]; then echo "FAIL: exit status $rc"; exit 1; fi
	case $last in
	"PASS $name") exit 0 ;;
	*) echo "FAIL: last line is not \"PASS $name\""; exit 1 ;;
	esac
fi

[ "${1:-}" = build ] || { sed -n '/^#   tests\/samples/,/^# Logs/s/^# \{0,1\}//p' "$0" >&2; exit 2; }

# ---- build (on the host) ------------------------------------------------------------
cd "$TOP" || exit 1
LOGS=$W/logs
BIN=$TOP/build/tests/samples
rm -rf "$LOGS" "$BIN"
mkdir -p "$LOGS" "$BIN"
pass=0 fail=0 skip=0
ok() { echo "ok   - $*"; pass=$((pass + 1)); }
nok() { echo "FAIL - $*"; fail=$((fail + 1)); }
skipped() { echo "skip - $*"; skip=$((skip + 1)); }
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}

# wrapper PROGRAM TOOLKIT NAME CMD...: build/tests/samples/PROGRAM runs CMD
# in a guest, and expects "PASS NAME".
wrapper() {
	local prog=$1 tk=$2 name=$3 arg
	shift 3
	{
		echo '#!/bin/sh'
		echo "# Made by tests/samples/run.sh build: $name against $tk."
		printf 'exec %q run %q %q' "$TOP/tests/samples/run.sh" "$tk" "$name"
		for arg in "$@"; do printf ' %q' "$arg"; done
		echo
	} >"$BIN/$prog"
	chmod 755 "$BIN/$prog"
}

# The build tree's toolkit: made by "make lib".
if [ ! -f "$TREE_TK/set_env.sh" ]; then
	nok "build/toolkit/set_env.sh exists (run make lib first)"
	echo "$pass passed, $fail failed, $skip skipped"
	exit 1
fi

# set_env.sh must work when sourced by bash and by dash, from any directory,
# and set what CANN's set_env.sh sets.
envcheck() { # SHELL TOOLKIT
	local got want
	want="$2|$2|$2/lib64|$2/python/site-packages|$2/opp|$2"
	got=$(cd / && clean_env "$1" -c ". '$2/set_env.sh' && echo \"\$ASCEND_TOOLKIT_HOME|\$ASCEND_HOME_PATH|\$LD_LIBRARY_PATH|\$PYTHONPATH|\$ASCEND_OPP_PATH|\$ASCEND_AICPU_PATH\"" 2>&1)
	[ "$got" = "$want" ] || { echo "    got:  $got"; echo "    want: $want"; return 1; }
}
check "build/toolkit/set_env.sh sourced by bash" envcheck bash "$TREE_TK"
check "build/toolkit/set_env.sh sourced by dash" envcheck dash "$TREE_TK"
appended() { # set_env.sh keeps what was there, after its own entries
	local got
	got=$(cd / && LD_LIBRARY_PATH=/x PYTHONPATH=/y dash -c ". '$TREE_TK/set_env.sh' && echo \"\$LD_LIBRARY_PATH \$PYTHONPATH\"")
	[ "$got" = "$TREE_TK/lib64:/x $TREE_TK/python/site-packages:/y" ]
}
check "set_env.sh prepends to LD_LIBRARY_PATH and PYTHONPATH" appended
# CANN's samples' run.sh source bin/setenv.bash; AscendC build files find
# ascendc.cmake through ASCENDC_CMAKE_DIR or the toolkit's tikcpp dirs.
setenvbash() { # TOOLKIT
	local got want
	want="$1|$1/lib64|$1/compiler/tikcpp/ascendc_kernel_cmake"
	# shellcheck disable=SC2016 # expanded by that bash
	got=$(cd / && clean_env bash -c '. "$1/bin/setenv.bash" && echo "$ASCEND_HOME_PATH|$LD_LIBRARY_PATH|$ASCENDC_CMAKE_DIR"' _ "$1" 2>&1)
	[ "$got" = "$want" ] || { echo "    got:  $got"; echo "    want: $want"; return 1; }
	[ -f "$1/tools/tikcpp/ascendc_kernel_cmake/ascendc.cmake" ] &&
		[ -f "$1/compiler/tikcpp/tikcfw/kernel_operator.h" ]
}
check "build/toolkit/bin/setenv.bash, ASCENDC_CMAKE_DIR and tikcpp" setenvbash "$TREE_TK"

# pkg-config from the build tree: aclmem-uninstalled.pc, found by itself.
pcflags=$(PKG_CONFIG_PATH=$TOP/build/lib pkg-config --cflags --libs aclmem 2>&1)
pcflags=${pcflags% }
# (Other packages' flags, from Requires.private, may come along.)
pcbuildtree() {
	[[ " $pcflags " == *" -I$TREE_TK/include "* && " $pcflags " == *" -L$TOP/build/lib -laclmem "* ]]
}
check "PKG_CONFIG_PATH=build/lib pkg-config --cflags --libs aclmem: $pcflags" pcbuildtree
# shellcheck disable=SC2086 # flags are words
g++ -std=c++11 -Wall -Werror -o "$W/pkgconfig-memcpy_basic" \
	samples/memcpy_basic/src/main.cpp $pcflags >"$LOGS/pkgconfig.log" 2>&1
check "samples/memcpy_basic builds with those flags alone" [ $? = 0 ]

# The installed toolkit: the real install rule, everything under one PREFIX.
rm -rf "$PREFIX_DIR"
INSTALL_VARS=(PREFIX="$PREFIX_DIR" UDEVRULESDIR="$PREFIX_DIR/etc/udev/rules.d"
	SYSUSERSDIR="$PREFIX_DIR/etc/sysusers.d")
make --no-print-directory -C "$TOP" install-files "${INSTALL_VARS[@]}" \
	>"$LOGS/install.log" 2>&1
rc=$?
INST_TK=$PREFIX_DIR/lib/aclmem/toolkit
check "make install-files PREFIX=build/samples/prefix" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -n 20 "$LOGS/install.log"
check "installed set_env.sh sourced by dash" envcheck dash "$INST_TK"
check "installed bin/setenv.bash, ASCENDC_CMAKE_DIR and tikcpp" setenvbash "$INST_TK"

# Every acl* function a sample calls must be declared by the toolkit's
# headers, or the sample waits for the library to catch up.
undeclared() { # SOURCE TOOLKIT
	local f out=""
	for f in $(grep -o '\bacl[A-Za-z]*[[:space:]]*(' "$1" | tr -d '( \t' | sort -u); do
		grep -qw "$f" "$2"/include/acl/*.h || out+=" $f"
	done
	echo "${out# }"
}

# build NAME TOOLKIT DIR LABEL [CMAKE-ARGS...]: configure and build
# samples/NAME in DIR against TOOLKIT; the log is LABEL.log.
build() {
	local name=$1 tk=$2 dir=$3 log=$LOGS/$4.log
	shift 4
	# shellcheck disable=SC2016 # expanded by that bash
	clean_env bash -c '. "$1/set_env.sh" && cmake -S "$2" -B "$3" -DCMAKE_CXX_FLAGS=-Werror "${@:4}" &&
		cmake --build "$3"' _ "$tk" "$TOP/samples/$name" "$dir" "$@" >"$log" 2>&1 ||
		{ tail -n 30 "$log"; return 1; }
}

# needs_aclmem PROGRAM: linked with -lascendcl, a program that calls ACL
# must need libaclmem.so.1 (the SONAME), which set_env.sh's
# LD_LIBRARY_PATH finds in lib64.
needs_aclmem() {
	readelf -d "$1" | grep -q 'NEEDED.*\[libaclmem\.so\.1\]' ||
		{ echo "    $1 does not need libaclmem.so.1"; return 1; }
}

# cpu_debug NAME TOOLKIT DIR LABEL: a kernel-launch sample's RUN_MODE=cpu
# (CANN's CPU debug mode: ICPU_RUN_KF, no device, no stream) runs here, on
# the host, with nothing but TOOLKIT/set_env.sh's environment.
cpu_debug() {
	local name=$1 tk=$2 dir=$3 label=$4 out
	build "$name" "$tk" "$dir" "$label" -DRUN_MODE=cpu || return 1
	# shellcheck disable=SC2016 # expanded by that bash
	out=$(cd / && clean_env bash -c '. "$1/set_env.sh" && "$2"' _ "$tk" "$dir/$name" 2>&1) ||
		{ printf '%s\n' "$out" | tail -n 20; return 1; }
	[ "$(printf '%s\n' "$out" | tail -n 1)" = "PASS $name" ] ||
		{ printf '%s\n' "$out" | tail -n 20; return 1; }
}

for cm in samples/*/CMakeLists.txt; do
	name=$(basename "$(dirname "$cm")")
	# CANN's AscendC samples keep main.cpp beside their kernels.
	for src in samples/$name/src/main.cpp samples/$name/src/main.c \
		samples/$name/main.cpp; do
		[ -f "$src" ] && break
	done
	missing=$(undeclared "$src" "$TREE_TK")
	if [ -n "$missing" ]; then
		skipped "samples/$name: include/acl does not declare $missing yet"
		continue
	fi
	for variant in tree installed; do
		tk=$TREE_TK label=$name
		if [ "$variant" = installed ]; then tk=$INST_TK label=$name-installed; fi
		dir=$W/$variant/$name
		if build "$name" "$tk" "$dir" "$label" && needs_aclmem "$dir/$name"; then
			ok "samples/$name: cmake against the $variant toolkit"
			# An MPI program runs under mpirun, over a network the
			# suite "mpi" sets up (tests/mpi/guest-mpi.sh).
			grep -q 'find_package(MPI' "$cm" ||
				wrapper "$label" "$tk" "$name" "$dir/$name"
		else
			nok "samples/$name: cmake against the $variant toolkit (see $LOGS/$label.log)"
		fi
		[ -f "samples/$name/cmake/cpu_lib.cmake" ] || continue
		if cpu_debug "$name" "$tk" "$dir-cpu" "$label-cpu"; then
			ok "samples/$name: RUN_MODE=cpu against the $variant toolkit, run on the host"
		else
			nok "samples/$name: RUN_MODE=cpu against the $variant toolkit (see $LOGS/$label-cpu.log)"
		fi
	done
done

for py in samples/python/*.py; do
	[ -f "$py" ] || continue
	name=$(basename "$py" .py)
	for variant in tree installed; do
		tk=$TREE_TK label=python-$name
		if [ "$variant" = installed ]; then tk=$INST_TK label=python-$name-installed; fi
		# shellcheck disable=SC2016 # expanded by that bash
		got=$(cd / && clean_env bash -c '. "$1/set_env.sh" && "$2" -c "import acl; print(acl.__file__)"' \
			_ "$tk" "$PY" 2>&1)
		if [[ $got == "$tk"/python/site-packages/acl*.so ]]; then
			ok "samples/python/$name.py: acl found through the $variant toolkit's PYTHONPATH"
			wrapper "$label" "$tk" "$name.py" "$TOP/$py"
		else
			nok "samples/python/$name.py: import acl through the $variant toolkit: $got"
		fi
	done
done

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
