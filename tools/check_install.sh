#!/usr/bin/env bash
# Installs a built slinky into a temporary prefix and builds a small client against it, once with
# pkg-config and once with find_package(slinky CONFIG), to keep the installed package usable, and
# a host's client (test/integration/client/hosts.cc) with RTTI on and off and under the sanitizers. Then
# builds and runs the compatibility suite (test/integration/compat) against the same prefix.
# Usage: tools/check_install.sh [build dir] [extra C++ flags for the compat suite]
#   [optimization flags of the compat suite, default "-O2 -g"; the sanitizer run uses -O0, which
#   compiles it about five times faster under AddressSanitizer]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
compat_flags=${2:-}
compat_opt=${3:-"-O2 -g"}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
# A build with shared libraries (SLINKY_SHARED) is found at run time there.
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
g++ -std=c++17 $compat_flags -o "$prefix/client_pc" test/integration/client/client.cc $(pkg-config --cflags --libs --static slinky)
"$prefix/client_pc"
# The scheduler's library and headers (slinky_scheduler, on top of the builder).
# shellcheck disable=SC2046,SC2086
g++ -std=c++17 $compat_flags -o "$prefix/scheduler_client" test/integration/client/scheduler_client.cc \
  $(pkg-config --cflags --libs --static slinky)
"$prefix/scheduler_client"

cmake -S test/integration/client -B "$prefix/client_build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_FLAGS="$compat_flags" >/dev/null
cmake --build "$prefix/client_build" >/dev/null
"$prefix/client_build/client"
"$prefix/client_build/client_original_names"
echo "install check: pkg-config and find_package clients (and the scheduler's client) build and run"

# A host's client (its own thread_pool subclass, an IR visitor subclass) in the usual client
# configurations, against the same installed package (once, in the plain install check).
if [ -z "$compat_flags" ]; then
  for flags in "" "-fno-rtti" "-fsanitize=address,undefined -fno-sanitize-recover=all" "-fsanitize=thread"; do
    # shellcheck disable=SC2046,SC2086
    g++ -std=c++17 -Wall -Wextra -Werror $flags -o "$prefix/hosts" test/integration/client/hosts.cc \
      $(pkg-config --cflags --libs --static slinky)
    "$prefix/hosts"
  done
  echo "install check: a host's client builds and runs with RTTI, without, under ASan+UBSan, and under TSan"

  # A client's shared library with the static libraries linked in (position-independent code).
  # shellcheck disable=SC2046
  g++ -std=c++17 -shared -fPIC -Wall -Wextra -Werror -o "$prefix/libslinky_plugin.so" test/integration/client/plugin.cc \
    $(pkg-config --cflags --libs --static slinky)
  g++ -std=c++17 -o "$prefix/plugin_main" test/integration/client/plugin_main.cc -L"$prefix" -lslinky_plugin -Wl,-rpath,"$prefix"
  "$prefix/plugin_main"

  # The source tree as a sub-project (add_subdirectory, as FetchContent does): only the libraries.
  cmake -S test/integration/subproject -B "$prefix/subproject_build" -G Ninja -DSLINKY_SOURCE_DIR="$PWD" >/dev/null
  cmake --build "$prefix/subproject_build" --target client >/dev/null
  "$prefix/subproject_build/client"
  echo "install check: slinky as a sub-project builds only its libraries, without target clashes"
fi

# The compatibility suite: client code written against the original slinky's API.
# SLINKY_SKIP_COMPAT=1 skips it (e.g. while the library is still catching up with the contract).
if [ "${SLINKY_SKIP_COMPAT:-0}" = 1 ]; then
  echo "install check: compat suite skipped (SLINKY_SKIP_COMPAT=1)"
  exit 0
fi
cmake -S test/integration/compat -B "$prefix/compat_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_FLAGS="$compat_flags" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$compat_opt -DNDEBUG" >/dev/null
cmake --build "$prefix/compat_build"
"$prefix/compat_build/compat_test"
echo "install check: compat suite passes"
