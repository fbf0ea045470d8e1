#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Plot npu_mem_bench results: time per size per method (alloc.png).

    bench/plot.py RESULTS_DIR

Reads RESULTS_DIR/alloc.csv (and meta.txt for the title) and writes
RESULTS_DIR/alloc.png: on the left the median time of one cycle (get, first
touch, release) against the buffer size, log-log; on the right the same
divided by the floor (memset over mapped memory).  Run on the host after the
guest run (bench/run.sh does it); needs python3-matplotlib.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)


def size_label(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def read_meta(path):
    meta = {}
    try:
        with open(path) as f:
            for line in f:
                key, _, val = line.rstrip("\n").partition("=")
                meta[key] = val
    except OSError:
        pass
    return meta


# One colour per method, the same in every plot.
COLORS = {
    "npu_huge_first": "#1f77b4", "npu_huge_only": "#ff7f0e",
    "npu_normal_only": "#2ca02c", "acl_pool_off": "#d62728",
    "acl_pool_on": "#9467bd", "anon_populate_mlock": "#8c564b",
    "anon_populate_mlock_4k": "#e377c2", "hugetlb": "#7f7f7f",
    "thp_madvise": "#bcbd22", "vgem": "#17becf", "dma_heap_system": "#393b79",
    "udmabuf": "#e7969c",
}


def style(key):
    if key.startswith("floor"):
        return {"color": "black", "linestyle": "--" if key == "floor" else ":",
                "linewidth": 1.5, "marker": None}
    kw = {"color": COLORS.get(key)}
    if key.startswith("npu_"):
        kw.update(linewidth=2.6, marker="o", markersize=4)
    elif key.startswith("acl_"):
        kw.update(linewidth=2.0, marker="s", markersize=4)
    else:
        kw.update(linewidth=1.2, marker=".", markersize=5, alpha=0.85)
    return kw


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    res = sys.argv[1]
    series, labels, floor = {}, {}, {}
    with open(os.path.join(res, "alloc.csv")) as f:
        for row in csv.DictReader(f):
            if row["status"] != "ok":
                continue
            key, size = row["method"], int(row["size"])
            med = float(row["median_ns"]) / 1e3
            series.setdefault(key, []).append((size, med))
            labels[key] = row["label"]
            if key == "floor":
                floor[size] = med
    if not series:
        sys.exit("plot: no rows in alloc.csv")
    meta = read_meta(os.path.join(res, "meta.txt"))

    fig, (ax, axr) = plt.subplots(1, 2, figsize=(16, 7.5))
    for key, pts in series.items():
        pts.sort()
        xs = [p[0] for p in pts]
        kw = style(key)
        ax.plot(xs, [p[1] for p in pts], label=labels[key], **kw)
        rx = [s for s in xs if s in floor]
        axr.plot(rx, [dict(pts)[s] / floor[s] for s in rx], label=labels[key], **kw)
    ticks = sorted({s for pts in series.values() for s, _ in pts})
    for a in (ax, axr):
        a.set_xscale("log", base=2)
        a.set_yscale("log")
        a.set_xticks(ticks)
        a.set_xticklabels([size_label(t) for t in ticks])
        a.set_xlabel("buffer size")
        a.grid(True, which="both", alpha=0.3)
    ax.set_ylabel("median time per cycle, us (get + first touch + release)")
    axr.set_ylabel("x floor (memset(0) over mapped memory)")
    axr.axhline(1.3, color="red", linewidth=0.8, linestyle="--")
    axr.text(ticks[0], 1.35, "target for >= 64M: 1.3x floor", color="red",
             fontsize=8)
    ax.legend(fontsize=8, loc="upper left")
    fig.suptitle(
        "npu-mem vs alternatives, kernel %s, THP %s - %s" % (
            meta.get("kernel", "?"), meta.get("thp_enabled", "?"),
            "QEMU TCG guest: absolute times are not hardware times, "
            "compare ratios" if meta.get("emulated", "").startswith("yes")
            else "ratios within one run are what count"),
        fontsize=11)
    fig.tight_layout()
    out = os.path.join(res, "alloc.png")
    fig.savefig(out, dpi=110)
    print(f"plot: {out}")


if __name__ == "__main__":
    main()
