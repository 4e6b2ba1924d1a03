#!/usr/bin/env bash
# The test of the plots (CTest: slinky_plots_test): runs the four plotted benchmarks at tiny sizes
# with --csv, then tools/plots.py on their CSVs, and checks that each plot is a non-empty PNG.
# Exits 77 (skipped) when matplotlib is missing. Takes a few seconds.
# Usage: tools/plots_test.sh APPS_BUILD_DIR WORK_DIR
set -euo pipefail
apps=$1
work=$2
plots=$(cd "$(dirname "$0")" && pwd)/plots.py
if ! command -v python3 >/dev/null; then
  echo "skipped: no python3 (tools/setup.sh installs python3-matplotlib)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
# Tiny sizes, one repetition: the numbers mean nothing, the files' shape is what is tested.
"$apps/overhead_benchmark" --quick --reps 1 --csv "$work/overhead.csv" >"$work/overhead.txt"
"$apps/elementwise_benchmark" --quick --reps 1 --n 16384 --csv "$work/elementwise.csv" >"$work/elementwise.txt"
"$apps/stencil_benchmark" --quick --reps 1 --size 64 --csv "$work/stencil.csv" >"$work/stencil.txt"
"$apps/parallel_benchmark" --quick --reps 1 --n 65536 --size 64 --csv "$work/parallel.csv" >"$work/parallel.txt"
status=0
"$plots" --note "plots_test.sh" --out "$work/plots" "$work" || status=$?
if [ "$status" -eq 77 ]; then
  echo "skipped: matplotlib is missing (tools/setup.sh installs python3-matplotlib)"
  exit 77
fi
[ "$status" -eq 0 ] || { echo "FAILED: plots.py exited with $status"; exit 1; }
for name in overhead elementwise stencil parallel; do
  png="$work/plots/$name.png"
  if [ ! -s "$png" ] || [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ]; then
    echo "FAILED: $png is missing, empty or not a PNG"
    exit 1
  fi
  echo "$png: $(wc -c <"$png") bytes"
done
