#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs inside the vm-run guest (bench/run.sh starts it): load vgem for the
# dma-buf comparison, then the benchmark, results into the vm-run share.
# Arguments go to npu_mem_bench.
TOP=$(cd "$(dirname "$0")/.." && pwd)
modprobe vgem 2>/dev/null || echo "bench: vgem not loadable: its rows are n/a" >&2
exec "$TOP/build/bench/npu_mem_bench" -o "$VM_OUTDIR" "$@"
