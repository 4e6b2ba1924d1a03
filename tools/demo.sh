#!/usr/bin/env bash
# Builds the demo (the founding document's examples; only the libraries and apps/demo, not the
# tests) in Release and runs it. It writes a page replaying a pipeline and a trace to build/demo
# and says so after its table. The demo needs none of the test tools: set-up installs only what building needs.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --build-only
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target demo
./build/apps/demo --out build/demo "$@"
echo "Plots of the benchmarks (overhead, elementwise, stencil, parallel): docs/plots/ (tools/plots.sh regenerates them)"
