#!/usr/bin/env bash
# Installs what building and testing slinky needs on a Debian machine, if it is missing.
# Usage: tools/setup.sh [--build-only]: with --build-only, only what building the library and the
# apps needs (tools/demo.sh), not the tools some tests use (matplotlib, doxygen).
set -euo pipefail
build_only=0
[ "${1:-}" = --build-only ] && build_only=1
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
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}"
fi
