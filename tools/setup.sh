#!/usr/bin/env bash
# Installs what building and testing slinky needs on a Debian machine, if it is missing.
# Usage: tools/setup.sh [--build-only]: with --build-only, only what building the library and the
# apps needs (tools/demo.sh), not the tools some tests use: matplotlib (the plots), doxygen (the API
# reference) and Chromium, which the visualizer's browser test (slinky_builder_visualize_browser)
# runs headless. If Chromium cannot be installed, that test is skipped and says so.
set -euo pipefail
build_only=0
[ "${1:-}" = --build-only ] && build_only=1
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
command -v pkg-config >/dev/null || need+=(pkg-config)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
[ -f /usr/include/benchmark/benchmark.h ] || need+=(libbenchmark-dev)
if [ $build_only = 0 ]; then
  # The plots of the benchmarks (tools/plots.sh) and their test: matplotlib for Debian's python3.
  [ -d /usr/lib/python3/dist-packages/matplotlib ] || need+=(python3-matplotlib)
  # The API reference (tools/apidoc.sh) and its test, slinky_apidoc_warnings.
  command -v doxygen >/dev/null || need+=(doxygen)
fi
updated=0
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  $sudo_cmd apt-get update -qq
  updated=1
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}"
fi
if [ $build_only = 0 ] && ! command -v chromium >/dev/null && [ -z "${SLINKY_CHROMIUM:-}" ]; then
  # Without recommends: 24 packages instead of 129 (no fonts beyond what is there, no extras).
  echo "setup: installing chromium (headless, for the visualizer's browser test)"
  if ! { { [ $updated -eq 1 ] || $sudo_cmd apt-get update -qq; } &&
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; then
    echo "setup: could not install chromium; slinky_builder_visualize_browser will be skipped"
  fi
fi
