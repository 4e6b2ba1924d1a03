#!/usr/bin/env bash
# Installs what building and testing slinky needs on a Debian machine, if it is missing; and
# Chromium, which the visualizer's browser test (slinky_builder_visualize_browser) runs headless,
# unless given --no-browser (tools/demo.sh). If Chromium cannot be installed, that test is skipped
# and says so.
set -euo pipefail
browser=1
[ "${1:-}" = "--no-browser" ] && browser=0
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
command -v pkg-config >/dev/null || need+=(pkg-config)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
[ -f /usr/include/benchmark/benchmark.h ] || need+=(libbenchmark-dev)
updated=0
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  $sudo_cmd apt-get update -qq
  updated=1
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}"
fi
if [ $browser -eq 1 ] && ! command -v chromium >/dev/null && [ -z "${SLINKY_CHROMIUM:-}" ]; then
  # Without recommends: 24 packages instead of 129 (no fonts beyond what is there, no extras).
  echo "setup: installing chromium (headless, for the visualizer's browser test)"
  if ! { { [ $updated -eq 1 ] || $sudo_cmd apt-get update -qq; } &&
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; then
    echo "setup: could not install chromium; slinky_builder_visualize_browser will be skipped"
  fi
fi
