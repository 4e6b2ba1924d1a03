#!/usr/bin/env bash
# Builds slinky in Release and runs the demo (the founding document's examples).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
./build/apps/demo "$@"
