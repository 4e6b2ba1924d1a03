#!/usr/bin/env bash
# Installs a built slinky into a temporary prefix and builds a small client against it, once with
# pkg-config and once with find_package(slinky CONFIG), to keep the installed package usable.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
g++ -std=c++17 -o "$prefix/client_pc" tools/client/client.cc $(pkg-config --cflags --libs --static slinky)
"$prefix/client_pc"

cmake -S tools/client -B "$prefix/client_build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/client_build" >/dev/null
"$prefix/client_build/client"
echo "install check: pkg-config and find_package clients build and run"
