#!/usr/bin/env bash
# Regenerates the plots of docs/plots/: builds the four benchmarks they show (1, 3, 4 and 7; only
# those targets, in Release), runs them with --csv, and turns the CSVs into PNGs with
# tools/plots.py. The PNGs and the CSVs go to docs/plots/ (or OUT_DIR), the programs' reports to
# build/plots/*.txt. Takes several minutes (the benchmarks' full sizes); --quick runs the
# benchmarks' --quick sizes instead, for a look, not for committing.
# Usage: tools/plots.sh [--quick] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
if [ "${1:-}" = "--quick" ]; then
  quick=(--quick)
  shift
fi
out=${1:-docs/plots}

tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target overhead_benchmark elementwise_benchmark stencil_benchmark parallel_benchmark

csv=build/plots
rm -rf "$csv"
mkdir -p "$csv" "$out"
# The conditions of the run, printed at the foot of every plot and in OUT_DIR/README.md.
date=$(date -u +%Y-%m-%d)
load=$(cut -d' ' -f1 /proc/loadavg)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
compiler="g++ $(c++ -dumpfullversion 2>/dev/null || echo '?')"
note="$date, $(nproc) hardware threads (${cpu:-unknown CPU}) shared with other jobs (load average $load at the"
note+=" start), $compiler, Release build"

bench() {  # bench NAME CSV_NAME ARGS...: runs build/apps/NAME with --csv, its report to build/plots
  local name=$1 csv_name=$2
  shift 2
  echo "plots: $name $*"
  "build/apps/$name" "${quick[@]}" "$@" --csv "$csv/$csv_name.csv" >"$csv/$csv_name.txt"
}
bench overhead_benchmark overhead
bench elementwise_benchmark elementwise
bench stencil_benchmark stencil
# Speed-up against threads: one run per thread count, 2 up to the hardware threads.
for ((t = 2; t <= $(nproc) || t == 2; t++)); do
  bench parallel_benchmark "parallel_${t}threads" --threads "$t"
done

tools/plots.py --note "$note" --out "$out" "$csv"
rm -f "$out"/parallel*.csv
cp "$csv"/*.csv "$out"/
{
  echo "# Plots of the benchmarks"
  echo
  echo "Written by \`tools/plots.sh${quick:+ --quick}\` on $date: $(nproc) hardware threads (${cpu:-unknown CPU}),"
  echo "$compiler, Release build, on a machine shared with other jobs (load average $load when the"
  echo "run started). On such a machine, read the ratios between variants of one run (they are timed"
  echo "interleaved); absolute times are orientation only. docs/benchmarks.md says what each benchmark"
  echo "measures and why; the CSVs beside the plots are the data (\`--csv\` of each program)."
  echo
  echo "Targets of docs/benchmarks.md in this run:"
  echo
  for report in "$csv"/{overhead,elementwise,stencil}.txt "$csv"/parallel_*threads.txt; do
    grep -h -E ": (PASS|MISS)$|machine's .* ceiling" "$report" | sed "s/^/- $(basename "$report" .txt): /"
  done
  echo
  for name in overhead elementwise stencil parallel; do
    echo "![$name]($name.png)"
    echo
  done
} >"$out/README.md"
echo "plots: written to $out/ (the programs' reports: $csv/*.txt)"
