#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Where npu-mem's kernel time goes, without perf: run inside a vm-run guest,
# it sets up ftrace's function_graph tracer on npu-mem's entry points (ioctl,
# mmap) and on munmap, then runs npu_mem_bench with NPU_MEM_BENCH_TRACE=1,
# which switches tracing on only around the first timed npu-mem cycle of
# each size and the first cycles of each live-buffer point.  The trace goes
# to $VM_OUTDIR/ftrace.txt; bench/ftrace-summary.py sums it per function.
#
#   tests/vm/vm-run -c x86_64-bench -o DIR -- sh bench/trace.sh \
#           -s alloc -M npu_huge_first,npu_huge_only -m 64M -n 1
#   (DEPTH=N, default 4: call depth below the entry points, via -e DEPTH=N;
#    -e KPROBES="fn ..." times those functions with kprobes instead)
#
# Function tracing costs a lot per traced call, more so under TCG: use the
# trace for where time goes, the benchmark for how much.
T=/sys/kernel/tracing
TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BENCH_BIN:-$TOP/build/bench/npu_mem_bench}

[ -e $T/tracing_on ] || mount -t tracefs nodev $T || exit 1
echo 0 >$T/tracing_on
echo nop >$T/current_tracer
echo >$T/trace
echo 65536 >$T/buffer_size_kb
echo >$T/kprobe_events
if [ -n "${KPROBES:-}" ]; then
	# Entry/return probes instead: they also reach functions that
	# function tracing cannot (lib/ helpers such as the maple tree's).
	for f in $KPROBES; do
		echo "p:kp_$f $f" >>$T/kprobe_events &&
		echo "r:kr_$f $f" >>$T/kprobe_events ||
		echo "trace: no kprobe on $f" >&2
	done
	echo 1 >$T/events/kprobes/enable
else
	echo "npu_mem_ioctl npu_mem_mmap __x64_sys_munmap" >$T/set_graph_function
	echo "${DEPTH:-4}" >$T/max_graph_depth
	echo funcgraph-proc >$T/trace_options 2>/dev/null
	echo function_graph >$T/current_tracer
fi
NPU_MEM_BENCH_TRACE=1 "$BIN" -o "$VM_OUTDIR" "$@"
rc=$?
echo 0 >$T/tracing_on
cat $T/trace >"$VM_OUTDIR/ftrace.txt"
echo nop >$T/current_tracer
if [ -n "${KPROBES:-}" ]; then
	echo 0 >$T/events/kprobes/enable
	echo >$T/kprobe_events
fi
echo "trace: $(wc -l <"$VM_OUTDIR/ftrace.txt") lines in $VM_OUTDIR/ftrace.txt" >&2
exit $rc
