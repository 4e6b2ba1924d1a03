#!/usr/bin/env python3
"""Turns the CSVs of the benchmarks (written with --csv FILE) into plots.

Usage: tools/plots.py [--out DIR] [--note TEXT] [--svg] CSV_DIR

Reads from CSV_DIR whichever of these it finds and writes the matching plot into DIR (default:
CSV_DIR), as PNG (and SVG with --svg):

  overhead.csv     -> overhead.png     benchmark 1: loop / no-loop throughput vs row size, a line
                                       per total size
  elementwise.csv  -> elementwise.png  benchmark 3: time and peak intermediate memory vs chunk
                                       size, the hand-written limits as horizontal lines
  stencil.csv      -> stencil.png      benchmark 4: time and peak memory of each schedule
  parallel*.csv    -> parallel.png     benchmark 7: speed-up vs threads (one CSV per thread
                                       count, as parallel_benchmark --threads T writes them)

--note TEXT is printed at the foot of every plot (the machine and the date of the run). A CSV
without the expected columns is an error. Needs matplotlib (Debian: python3-matplotlib, which
tools/setup.sh installs); without it, the script exits with status 77 (the tests' "skipped").
tools/plots.sh runs the benchmarks and this script in one go.
"""
import argparse
import csv
import glob
import os
import sys

SKIP = 77

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter
except ImportError:
    # Debian's python3-matplotlib belongs to the system interpreter; another python3 may come
    # first in PATH (pyenv, a virtual environment).
    system = "/usr/bin/python3"
    if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system):
        os.execv(system, [system] + sys.argv)
    print("plots.py: matplotlib is missing (Debian: apt-get install python3-matplotlib, or tools/setup.sh)",
          file=sys.stderr)
    sys.exit(SKIP)


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(row, column):
    """The number in row[column], or None for an empty cell; a missing column is an error."""
    value = row[column]
    return float(value) if value != "" else None


def size_label(nbytes):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            value = nbytes / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{nbytes:.0f} B"


def count_label(n):
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale:.0f}{unit}"
    return f"{n:.0f}"


def ms_label(t):
    return f"{t:.0f} ms" if t >= 100 else f"{t:.3g} ms"


bytes_axis = FuncFormatter(lambda x, _: size_label(x))
count_axis = FuncFormatter(lambda x, _: count_label(x))


class figures:
    def __init__(self, out, note, svg):
        self.out, self.note, self.svg = out, note, svg
        self.written = []

    def save(self, fig, name):
        if self.note:
            fig.text(0.01, 0.005, self.note, fontsize=7, color="0.35", va="bottom")
        fig.tight_layout(rect=(0, 0.03 if self.note else 0, 1, 1))
        for ext in ["png"] + (["svg"] if self.svg else []):
            path = os.path.join(self.out, f"{name}.{ext}")
            # No software version or date in the file: regenerating unchanged data changes nothing.
            metadata = {"Software": None} if ext == "png" else {"Date": None}
            fig.savefig(path, dpi=90, metadata=metadata, **({"pil_kwargs": {"optimize": True}} if ext == "png" else {}))
            self.written.append(path)
        plt.close(fig)


def plot_overhead(rows, figs):
    fig, ax = plt.subplots(figsize=(8, 5))
    totals = sorted({num(r, "total_bytes") for r in rows})
    for total in totals:
        points = sorted((num(r, "row_bytes"), num(r, "loop_over_no_loop_throughput"))
                        for r in rows if num(r, "total_bytes") == total)
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=f"{size_label(total)} in total")
    ax.axhline(1.0, color="0.5", linewidth=0.8)
    ax.plot([1024, 2048], [0.85, 0.95], linestyle="none", marker="_", markersize=22, markeredgewidth=2.5,
            color="crimson", label="targets: >= 0.85 with 1 KiB rows, >= 0.95 with 2 KiB (totals <= 2 MiB)")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(bytes_axis)
    ax.set_xlabel("row size (bytes per callback call in the loop)")
    ax.set_ylabel("throughput, rows in a loop / one call for all")
    ax.set_title("Benchmark 1: interpreter overhead (copy through an intermediate)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    figs.save(fig, "overhead")


def plot_elementwise(rows, figs):
    ks = sorted({int(num(r, "k_funcs")) for r in rows})
    fig, axes = plt.subplots(2, len(ks), figsize=(5 * len(ks), 7.5), squeeze=False)
    for col, k in enumerate(ks):
        mine = [r for r in rows if int(num(r, "k_funcs")) == k]
        by = lambda variant: [r for r in mine if r["variant"] == variant]
        chunked = sorted(by("slinky_chunks"), key=lambda r: num(r, "chunk_elements"))
        chunks = [num(r, "chunk_elements") for r in chunked]
        elements = int(num(mine[0], "elements"))

        ax = axes[0][col]
        ax.plot(chunks, [num(r, "time_ms") for r in chunked], marker="o", color="tab:blue",
                label="slinky, output in chunks")
        limits = [("hand_chunk_loop", "best hand-written chunk loop", "tab:green", "--"),
                  ("hand_fused", "hand-fused single pass", "tab:purple", ":"),
                  ("no_schedule_memory_reused", "slinky, no schedule (memory reused)", "tab:orange", "-."),
                  ("no_schedule_malloc", "slinky, no schedule (malloc)", "tab:red", "-.")]
        limit_ms = {v: min(num(r, "time_ms") for r in by(v)) for v, _, _, _ in limits if by(v)}
        # The unscheduled run with fresh pages can be many times slower than the rest: it is cut
        # off (its time is in the legend) rather than flatten everything else.
        top = 1.25 * max([num(r, "time_ms") for r in chunked] +
                         [t for v, t in limit_ms.items() if v != "no_schedule_malloc"])
        for variant, label, color, style in limits:
            if variant in limit_ms:
                t = limit_ms[variant]
                label += f": {ms_label(t)}" + (" (off the scale)" if t > top else "")
                ax.axhline(t, color=color, linestyle=style, label=label)
        ax.set_ylim(0, top)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(count_axis)
        ax.set_xlabel("chunk (elements)")
        ax.set_ylabel("time (ms)")
        ax.set_title(f"K = {k} funcs, {count_label(elements)} floats")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)

        ax = axes[1][col]
        ax.plot(chunks, [num(r, "peak_intermediate_bytes") for r in chunked], marker="o", color="tab:blue",
                label="slinky, output in chunks")
        if by("no_schedule_memory_reused"):
            peak = num(by("no_schedule_memory_reused")[0], "peak_intermediate_bytes")
            ax.axhline(peak, color="tab:orange", linestyle="-.", label=f"slinky, no schedule: {size_label(peak)}")
        ax.axhline(2 << 20, color="crimson", linewidth=0.8, label="target for the best chunk: 2 MiB")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.xaxis.set_major_formatter(count_axis)
        ax.yaxis.set_major_formatter(bytes_axis)
        ax.set_xlabel("chunk (elements)")
        ax.set_ylabel("peak intermediate memory")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("Benchmark 3: elementwise chains, time and memory vs chunk size")
    figs.save(fig, "elementwise")


def stencil_label(r):
    if r["schedule"] == "no_schedule_malloc":
        return "no schedule\n(malloc)"
    if r["schedule"] == "no_schedule_memory_reused":
        return "no schedule\n(memory reused)"
    strip = int(num(r, "strip_rows"))
    return "rows" if strip == 1 else f"strips of\n{strip} rows"


def plot_stencil(rows, figs):
    stages = sorted({int(num(r, "stages")) for r in rows})
    labels = []
    for r in rows:
        if stencil_label(r) not in labels:
            labels.append(stencil_label(r))
    fig, (time_ax, mem_ax) = plt.subplots(1, 2, figsize=(11, 5))
    width = 0.8 / len(stages)
    for i, s in enumerate(stages):
        mine = {stencil_label(r): r for r in rows if int(num(r, "stages")) == s}
        xs = [j + (i - (len(stages) - 1) / 2) * width for j in range(len(labels))]
        size = int(num(next(iter(mine.values())), "size"))
        times = [num(mine[l], "time_ms") for l in labels]
        bars = time_ax.bar(xs, times, width, label=f"{s} stages, {size}x{size}")
        for bar, t in zip(bars, times):
            time_ax.annotate(f"{t:.0f}" if t >= 10 else f"{t:.2g}", (bar.get_x() + bar.get_width() / 2, t),
                             ha="center", va="bottom", fontsize=7)
        mem_ax.bar(xs, [num(mine[l], "peak_intermediate_bytes") for l in labels], width,
                   label=f"{s} stages")
    for ax in (time_ax, mem_ax):
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=8)
    # Fresh pages make the unscheduled run with malloc much slower than the rest.
    time_ax.set_yscale("log")
    time_ax.set_ylabel("time (ms, log scale)")
    time_ax.set_title("time", fontsize=10)
    mem_ax.set_yscale("log", base=2)
    mem_ax.yaxis.set_major_formatter(bytes_axis)
    mem_ax.set_ylabel("peak intermediate memory")
    mem_ax.set_title("peak intermediate memory", fontsize=10)
    fig.suptitle("Benchmark 4: stencil chains (elementwise, then 3x3 boxes), schedules")
    figs.save(fig, "stencil")


LOOPS = {"parallel": "default storage (pipelined)", "parallel_store_inside": "store_at inside (data-parallel)",
         "parallel_store_root": "store_root (pipelined)"}


def workload_label(w):
    """elementwise_k4 -> "elementwise, K = 4", stencil_2stages -> "stencil, 2 stages"."""
    if w.startswith("elementwise_k"):
        return f"elementwise, K = {w[len('elementwise_k'):]}"
    if w.startswith("stencil_") and w.endswith("stages"):
        return f"stencil, {w[len('stencil_'):-len('stages')]} stages"
    return w


def plot_parallel(rows, figs):
    work = [r for r in rows if not r["workload"].startswith("ceiling")]
    ceilings = {}
    for r in rows:
        if r["workload"].startswith("ceiling"):
            ceilings.setdefault(int(num(r, "threads")), []).append(num(r, "speedup_vs_serial"))
    workloads = list(dict.fromkeys(r["workload"] for r in work))
    threads = sorted({int(num(r, "threads")) for r in work if r["loop"] != "serial"})
    most = threads[-1]
    fig, (line_ax, bar_ax) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [1, 1.4]})

    # Left: the best speed-up of the default storage at each thread count, per workload.
    line_ax.plot([1, most], [1, most], color="0.6", linestyle=":", label="ideal")
    if ceilings:
        ts = sorted(ceilings)
        line_ax.plot([1] + ts, [1] + [min(ceilings[t]) for t in ts], color="black", marker="x",
                     label="ceiling: compute loop without memory traffic")
    for w in workloads:
        best = [max(num(r, "speedup_vs_serial") for r in work
                    if r["workload"] == w and r["loop"] == "parallel" and int(num(r, "threads")) == t) for t in threads]
        line_ax.plot([1] + threads, [1] + best, marker="o", label=workload_label(w))
    line_ax.plot([2], [1.7], linestyle="none", marker="_", markersize=22, markeredgewidth=2.5, color="crimson",
                 label="target, stencils on 2 threads")
    line_ax.set_xticks([1] + threads)
    line_ax.set_xlabel("threads")
    line_ax.set_ylabel("speed-up vs serial (best chunk or strip)")
    line_ax.set_title("default storage", fontsize=10)
    line_ax.grid(alpha=0.3)
    line_ax.legend(fontsize=7)

    # Right: every parallel loop at the largest thread count, best chunk or strip of each.
    loops = [l for l in LOOPS if any(r["loop"] == l for r in work)]
    width = 0.8 / len(loops)
    for i, l in enumerate(loops):
        xs, ys = [], []
        for j, w in enumerate(workloads):
            mine = [num(r, "speedup_vs_serial") for r in work
                    if r["workload"] == w and r["loop"] == l and int(num(r, "threads")) == most]
            if mine:
                xs.append(j + (i - (len(loops) - 1) / 2) * width)
                ys.append(max(mine))
        bar_ax.bar(xs, ys, width, label=LOOPS[l])
    if most in ceilings:
        bar_ax.axhline(min(ceilings[most]), color="black", linestyle="--", linewidth=0.8, label="ceiling")
    bar_ax.axhline(1, color="0.5", linewidth=0.8)
    bar_ax.set_xticks(range(len(workloads)))
    bar_ax.set_xticklabels([workload_label(w).replace(", ", "\n") for w in workloads], fontsize=8)
    bar_ax.set_ylabel("speed-up vs serial (best chunk or strip)")
    bar_ax.set_title(f"{most} threads, by storage of the intermediates", fontsize=10)
    bar_ax.grid(alpha=0.3, axis="y")
    bar_ax.legend(fontsize=7)
    fig.suptitle("Benchmark 7: parallel loops, speed-up vs threads")
    figs.save(fig, "parallel")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv_dir")
    parser.add_argument("--out", help="where to write the plots (default: CSV_DIR)")
    parser.add_argument("--note", default="", help="text at the foot of every plot")
    parser.add_argument("--svg", action="store_true", help="also write SVG")
    args = parser.parse_args()
    out = args.out or args.csv_dir
    os.makedirs(out, exist_ok=True)
    figs = figures(out, args.note, args.svg)
    found = False
    for name, plot in (("overhead", plot_overhead), ("elementwise", plot_elementwise), ("stencil", plot_stencil)):
        path = os.path.join(args.csv_dir, f"{name}.csv")
        if os.path.exists(path):
            found = True
            plot(read(path), figs)
    parallel = sorted(glob.glob(os.path.join(args.csv_dir, "parallel*.csv")))
    if parallel:
        found = True
        plot_parallel([r for p in parallel for r in read(p)], figs)
    if not found:
        sys.exit(f"plots.py: no benchmark CSV in {args.csv_dir}")
    for path in figs.written:
        print(path)


if __name__ == "__main__":
    main()
