#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs a command (default: make check) beside a CPU hog: one busy loop per
# CPU, at the same priority, for the whole run, as a host that runs other
# work would.  A test whose verdict changes here depends on how fast the host
# is, which is a bug of the test.  Run it before saying a change to the
# tests is done; doc/testing.md has the last results.
#
#   tests/under-load.sh [-n HOGS] [-- CMD...]
#
# Exit status: CMD's.  Prints the wall time and the hogs' count at the end.
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$TOP" || exit 1
hogs=$(nproc)
while getopts n: opt; do
	case $opt in
	n) hogs=$OPTARG ;;
	*) sed -n '/^#   tests\/under-load.sh/p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" != -- ] || shift
[ $# -gt 0 ] || set -- make check

pids=()
stop() {
	[ "${#pids[@]}" -gt 0 ] && kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	pids=()
}
trap stop EXIT
for _ in $(seq "$hogs"); do
	sh -c 'while :; do :; done' &
	pids+=($!)
done
echo "under-load: $hogs busy loops beside: $*"
t0=$(date +%s)
"$@"
rc=$?
stop
echo "under-load: '$*' exited $rc after $(($(date +%s) - t0)) s beside $hogs busy loops"
exit "$rc"
