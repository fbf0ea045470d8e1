#!/bin/sh
# SPDX-License-Identifier: MIT
#
# libaclmem's device tests, run inside a guest by tests/lib/run.sh (through
# tests/vm/vm-run), from the top of the tree: every build/tests/lib/acl_*
# Check program, the Python unittests, the C and Python demos, and with
# ACLTEST_VALGRIND=1 the Check programs again under valgrind (CK_FORK=no, so
# valgrind sees the tests themselves), failing on any error or leak;
# ACLTEST_VALGRIND=only runs just that pass (make check's valgrind guest).
# Prints one line per program and a closing "N passed, N failed, N skipped".
cd "$(dirname "$0")/../.." || exit 2
B=build/tests/lib
pass=0 fail=0 skip=0

run() {	# name command...
	name=$1
	shift
	"$@" >"$OUT/$name.log" 2>&1
	st=$?
	# Tests that could not run their check say so (nm_skip): skips.
	n=$(grep -c '^NM-SKIP: ' "$OUT/$name.log")
	skip=$((skip + n))
	case $st in
	0) pass=$((pass + 1))
	   if [ "$n" -gt 0 ]; then echo "PASS $name ($n skipped)"; else echo "PASS $name"; fi ;;
	77) skip=$((skip + 1)); echo "SKIP $name" ;;
	*) fail=$((fail + 1)); echo "FAIL $name (exit $st)"
	   sed 's/^/    /' "$OUT/$name.log" | tail -n 40 ;;
	esac
}

OUT=${VM_OUTDIR:-/tmp}/acl-logs
mkdir -p "$OUT"
if [ "${ACLTEST_VALGRIND:-0}" != only ]; then
	for t in "$B"/acl_*; do
		[ -x "$t" ] || continue
		run "$(basename "$t")" "$t"
	done
	run python-unittest env PYTHONPATH=build/python \
		/usr/bin/python3 -m unittest discover -s tests/python -v
	run acl_demo build/examples/acl_demo
	run acl_demo.py env PYTHONPATH=build/python \
		/usr/bin/python3 examples/acl_demo.py
fi

if [ "${ACLTEST_VALGRIND:-0}" != 0 ]; then
	for t in "$B"/acl_*; do
		[ -x "$t" ] || continue
		n=$(basename "$t")
		# The stress test spends its time in worker threads, and the
		# fork test in forked children valgrind follows: minutes under
		# TCG, for code the other programs cover.
		case $n in acl_stress|acl_fork) continue ;; esac
		run "valgrind-$n" env CK_FORK=no CK_DEFAULT_TIMEOUT=600 \
			ACLTEST_UNDER_VALGRIND=1 \
			valgrind -q --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect \
			--show-leak-kinds=definite,indirect "$t"
	done
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
