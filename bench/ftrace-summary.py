#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Sum a function_graph trace written by bench/trace.sh, per marked cycle.

    bench/ftrace-summary.py ftrace.txt [FILTER]

The trace holds one section per "/* bench: ... */" marker (an npu-mem cycle
of some size, or a cycle at some number of live buffers).  For each kind of
section (marker text) it prints, per function, the median over sections of
its inclusive time and the calls per section, nesting shown by indentation.
FILTER keeps only sections whose marker contains it.  A trace of kprobe
entry/return events (bench/trace.sh with KPROBES=) is summed the same way.
Times are inflated by the tracer itself, much more under TCG: compare them
with each other.
"""
import re
import statistics
import sys
from collections import OrderedDict, defaultdict

MARK = re.compile(r"/\* (bench: .*) \*/")
# " 1) + 10.791 us   |        alloc_pages_noprof();"  (leaf)
# " 1) ! 100.702 us  |    }"                            (close)
# " 1)               |    npu_mem_alloc_ioctl [npu_mem]() {" (open)
LINE = re.compile(r"^\s*\d+\)\s+(?:[-\w]+\s+=>?\s*)?([+!#*@$ ]?)\s*([\d.]+)?\s*(us)?\s*\|(\s*)(.*)$")


def parse(path, filt):
    """{kind: [ {key: [us, calls]} per traced section ]}"""
    kinds = defaultdict(list)
    cur = None
    stack = []
    with open(path, errors="replace") as f:
        for raw in f:
            m = MARK.search(raw)
            if m:
                kind = m.group(1)
                cur = None
                if not filt or filt in kind:
                    cur = defaultdict(lambda: [0.0, 0])
                    kinds[kind].append(cur)
                stack = []
                continue
            if cur is None:
                continue
            m = LINE.match(raw)
            if not m:
                continue
            dur, body = m.group(2), m.group(5).rstrip()
            depth = len(m.group(4)) // 2
            if body.endswith("{"):
                name = body[:-1].strip().rstrip("()").replace(" [npu_mem]", "")
                stack.append((depth, name))
                continue
            if body.startswith("}"):
                if not stack:
                    continue
                d, name = stack.pop()
            elif body.endswith(";"):
                d = depth
                name = body[:-1].strip().rstrip("()").replace(" [npu_mem]", "")
            else:
                continue
            if dur:
                key = ("  " * d) + name
                cur[key][0] += float(dur)
                cur[key][1] += 1
    return kinds


# "... 123.456789: kp_mtree_erase: (mtree_erase+0x0/0x90)" and kr_ for returns
KPROBE = re.compile(r"\s([\d.]+): k([pr])_(\w+):")


def parse_kprobes(path, filt):
    """{kind: [ {function: [us, calls]} per traced section ]} from kprobes."""
    kinds = defaultdict(list)
    cur, start = None, {}
    with open(path, errors="replace") as f:
        for raw in f:
            m = MARK.search(raw)
            if m:
                kind = m.group(1)
                cur = None
                if not filt or filt in kind:
                    cur = defaultdict(lambda: [0.0, 0])
                    kinds[kind].append(cur)
                start = {}
                continue
            m = KPROBE.search(raw)
            if not m or cur is None:
                continue
            ts, kind, fn = float(m.group(1)), m.group(2), m.group(3)
            if kind == "p":
                start[fn] = ts
            elif fn in start:
                cur[fn][0] += (ts - start.pop(fn)) * 1e6
                cur[fn][1] += 1
    return kinds


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    filt = sys.argv[2] if len(sys.argv) > 2 else None
    kinds = parse(sys.argv[1], filt)
    if not any(kinds.values()):
        kinds = parse_kprobes(sys.argv[1], filt)
    for kind, secs in kinds.items():
        keys = OrderedDict()
        for sec in secs:
            for key in sec:
                keys.setdefault(key, None)
        rows = []
        for key in keys:
            us = statistics.median(sec[key][0] if key in sec else 0.0
                                   for sec in secs)
            calls = statistics.median(sec[key][1] if key in sec else 0
                                      for sec in secs)
            rows.append((us, calls, key))
        print(f"== {kind}  ({len(secs)} traced, medians)")
        for us, calls, key in sorted(rows, reverse=True):
            if us >= 2.0:
                print(f"  {us:12.1f} us  {calls:8.0f} calls  {key}")
        print()


if __name__ == "__main__":
    main()
