#!/usr/bin/env bash
# Builds the demo (the founding document's examples; only the libraries and apps/demo, not the
# tests) in Release and runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --build-only
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target demo
mkdir -p build/demo
./build/apps/demo --visualize build/demo "$@"
echo "Plots of the benchmarks (overhead, elementwise, stencil, parallel): docs/plots/ (tools/plots.sh regenerates them)"
