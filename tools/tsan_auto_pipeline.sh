#!/usr/bin/env bash
# Builds the just-in-time scheduler's test (slinky_scheduler_auto_pipeline_test) with
# ThreadSanitizer, with the flags of tools/test.sh's ThreadSanitizer phase and in the same build
# directory (build-tsan), and runs it.
# Usage: tools/tsan_auto_pipeline.sh [build dir]   (default: build-tsan)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-tsan}
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DSLINKY_SANITIZE=thread -DSLINKY_BUILD_APPS=OFF >/dev/null
cmake --build "$dir" --target slinky_scheduler_auto_pipeline_test
ctest --test-dir "$dir" --output-on-failure -R "^slinky_scheduler_auto_pipeline_test$"
