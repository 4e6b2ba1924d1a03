#!/usr/bin/env python3
"""Prints the peak-memory columns of the benchmarks of two builds side by side.

Usage: tools/compare_peaks.py BEFORE_BUILD_DIR AFTER_BUILD_DIR [APP ...]

Runs each benchmark program (apps/<name> in each build directory; by default every one that
prints a peak-memory column), reads the markdown tables it prints, and prints one row per table
row: the row's descriptive columns, the first column whose header says "peak" in each build,
and the "allocations" column where there is one. Peak memory and allocation counts do not
depend on timing, so the machine's load does not matter.
"""
import re
import subprocess
import sys

APPS = ["alias_benchmark", "attention_benchmark", "elementwise_benchmark", "matmul_benchmark",
        "stencil_benchmark", "parallel_benchmark"]
# Columns that are measurements, not descriptions of the row.
MEASURED = re.compile(r"time|ms|speed|gb/s|gflop|relative|vs |cpu|peak|alloc|bound|block|points|repetitions|target|calls")


def tables(text):
    """The rows of every markdown table in text, each with its table's header."""
    rows, header = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif not all(set(c) <= set("- ") for c in cells):
            rows.append((header, cells))
    return rows


def run(build, app):
    return subprocess.run([f"{build}/apps/{app}"], capture_output=True, text=True, check=True).stdout


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    before, after = sys.argv[1], sys.argv[2]
    apps = sys.argv[3:] or APPS
    print("| benchmark | row | peak before | peak after | allocations before | allocations after |")
    print("| --- | --- | --- | --- | --- | --- |")
    for app in apps:
        for (header, b), (_, a) in zip(tables(run(before, app)), tables(run(after, app))):
            peaks = [i for i, h in enumerate(header) if "peak" in h.lower()]
            if not peaks:
                continue
            allocs = [i for i, h in enumerate(header) if h.lower().startswith("allocations")]
            key = ", ".join(c for h, c in zip(header, b) if not MEASURED.search(h.lower()))
            alloc_b, alloc_a = (b[allocs[0]], a[allocs[0]]) if allocs else ("", "")
            print(f"| {app.replace('_benchmark', '')} | {key} | {b[peaks[0]]} | {a[peaks[0]]} | {alloc_b} | {alloc_a} |")


if __name__ == "__main__":
    main()
