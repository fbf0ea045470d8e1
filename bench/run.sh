#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The guest half of `make bench`: boot one kernel in the benchmark guest
# (tests/vm/configs/x86_64-bench.conf) with npu_mem loaded, run
# build/bench/npu_mem_bench there (bench/guest.sh), then plot the results
# on the host.  Everything lands in build/bench/results/: summary.txt (the
# tables), alloc.csv, bandwidth.csv, latency.csv, live.csv, numa.csv,
# targets.csv, reserve_refill.csv, meta.txt, alloc.png, and the guest's
# console.log and dmesg.txt.
#
# Environment:
#   KVER           kernel under /lib/modules (default: vm-run's, the newest)
#   BENCH_ARGS     extra npu_mem_bench arguments, e.g. "-q" for a short run
#   BENCH_RESULTS  results directory (default build/bench/results)
#   BENCH_TIMEOUT  limit for the whole guest, seconds (default 3600)
#   BENCH_CONFIG   guest configuration (default x86_64-bench; on an idle
#                  host x86_64-bench-tsc, whose clock reads are cheaper)
#
# Exit status: vm-run's (0 when the benchmark ran and the kernel stayed
# quiet).  Missed targets do not fail it: they are results.
set -euo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$TOP"
res=${BENCH_RESULTS:-$TOP/build/bench/results}
args=(-c "${BENCH_CONFIG:-x86_64-bench}" -t "${BENCH_TIMEOUT:-3600}" -o "$res")
[ -n "${KVER:-}" ] && args+=(-k "$KVER")

[ -x build/bench/npu_mem_bench ] || { echo "bench: build it first (make bench)" >&2; exit 1; }
mkdir -p "$res"
rm -f "$res"/*.csv "$res"/*.png "$res"/summary.txt "$res"/meta.txt

set +e
# shellcheck disable=SC2086 # BENCH_ARGS is a list of arguments
tests/vm/vm-run "${args[@]}" -- sh bench/guest.sh ${BENCH_ARGS:-}
rc=$?
set -e

if [ -s "$res/alloc.csv" ]; then
	/usr/bin/python3 bench/plot.py "$res" ||
		echo "bench: no plot (python3-matplotlib: make bench-deps)" >&2
fi
echo "bench: results in $res (summary.txt, *.csv, alloc.png)" >&2
exit "$rc"
