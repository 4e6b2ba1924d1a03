#!/usr/bin/env bash
# Checks the host pool adapters (slinky/adapters, docs/threads.md "Host pools"): installs
# pthreadpool and oneTBB with apt-get when missing, builds the adapters and their tests with
# ThreadSanitizer in build-adapters/, and runs, on each adapter:
# - its own tests and the threaded tests of the bundled pool with test_pool switched to it
#   (slinky/adapters/test: thread_pool_test, parallel_test, parallel_sliding_test);
# - benchmark 7 (apps/parallel_benchmark, small sizes, --pool), whose callback points per
#   variant must equal the bundled pool's (each run also checks its outputs);
# - the installed package: a client finds the adapters as components of find_package(slinky
#   CONFIG) and of pkg-config, and a package without them still works without components.
# An adapter whose package cannot be installed is skipped with a message.
# Usage: tools/check_adapters.sh [build dir, default build-adapters]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-adapters}
start=$SECONDS
phase() { echo "== adapters: $1 (at $((SECONDS - start)) s)"; }

tools/setup.sh
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
# The adapters whose library is present (installing its package if needed).
specs=(pthreadpool:libpthreadpool-dev:/usr/include/pthreadpool.h tbb:libtbb-dev:/usr/include/oneapi/tbb.h)
updated=0
adapters=()
for spec in "${specs[@]}"; do
  IFS=: read -r name package header <<<"$spec"
  if [ ! -f "$header" ]; then
    echo "adapters: installing $package"
    if [ $updated = 0 ]; then
      $sudo_cmd apt-get update -qq || true
      updated=1
    fi
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "$package" || true
  fi
  if [ -f "$header" ]; then
    adapters+=("$name")
  else
    echo "adapters: SKIPPING the $name adapter: $package could not be installed"
  fi
done
if [ ${#adapters[@]} -eq 0 ]; then
  echo "adapters: SKIPPED: neither libpthreadpool-dev nor libtbb-dev could be installed"
  exit 0
fi
on() { [[ " ${adapters[*]} " == *" $1 "* ]] && echo ON || echo OFF; }

phase "configure and build ${adapters[*]} under ThreadSanitizer in $build"
# As tools/test.sh builds build-tsan: -O1 with line tables.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DSLINKY_SANITIZE=thread -DSLINKY_BUILD_TESTS=ON -DSLINKY_BUILD_APPS=ON -DSLINKY_BUILD_ADAPTER_TESTS=ON \
  -DSLINKY_PTHREADPOOL="$(on pthreadpool)" -DSLINKY_TBB="$(on tbb)" >/dev/null
targets=(parallel_benchmark)
for a in "${adapters[@]}"; do
  for t in test thread_pool_test parallel_test parallel_sliding_test; do targets+=("slinky_${a}_$t"); done
done
cmake --build "$build" --target "${targets[@]}"

phase "tests on ${adapters[*]}"
pattern=$(IFS='|'; echo "${adapters[*]}")
ctest --test-dir "$build" --output-on-failure -j 2 -R "^slinky_($pattern)_"

phase "benchmark 7 on the bundled pool and on ${adapters[*]}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for pool in bundled "${adapters[@]}"; do
  # Small sizes (ThreadSanitizer); the benchmark exits non-zero on a wrong output.
  "$build/apps/parallel_benchmark" --quick --reps 1 --size 256 --n 65536 --pool "$pool" --csv "$out/$pool.csv" \
    >"$out/$pool.txt" || { cat "$out/$pool.txt"; exit 1; }
  # The callback points of each variant: the last column.
  awk -F, 'NR > 1 { print $NF }' "$out/$pool.csv" >"$out/$pool.points"
  if ! cmp -s "$out/bundled.points" "$out/$pool.points"; then
    echo "adapters: benchmark 7 on $pool computed other callback points than on the bundled pool:"
    paste "$out/bundled.points" "$out/$pool.points"
    exit 1
  fi
done
echo "adapters: benchmark 7 gives the bundled pool's outputs and callback points ($(wc -l <"$out/bundled.points") variants)"

phase "the installed package's components"
prefix="$out/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
flags="-fsanitize=thread"
cmake -S test/integration/client_adapters -B "$out/client" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_FLAGS="$flags" "-DSLINKY_COMPONENTS=$(IFS=';'; echo "${adapters[*]}")" >/dev/null
cmake --build "$out/client" >/dev/null
"$out/client/adapters"
pc_modules=()
pc_defines=()
for a in "${adapters[@]}"; do
  pc_modules+=("slinky-$a")
  pc_defines+=("-DSLINKY_HAVE_${a^^}")
done
# shellcheck disable=SC2046
g++ -std=c++17 $flags "${pc_defines[@]}" -o "$out/adapters_pc" test/integration/client_adapters/adapters.cc \
  $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs --static "${pc_modules[@]}")
"$out/adapters_pc"
# A package installed without the adapters: found without components, refused with them.
rm -f "$prefix"/lib/cmake/slinky/slinky_{pthreadpool,tbb}_targets*.cmake
cmake -S test/integration/client_adapters -B "$out/client_none" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
if cmake -S test/integration/client_adapters -B "$out/client_refused" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  "-DSLINKY_COMPONENTS=${adapters[0]}" >/dev/null 2>&1; then
  echo "adapters: find_package(slinky COMPONENTS ${adapters[0]}) succeeded without the component"
  exit 1
fi
echo "adapters: find_package(slinky CONFIG COMPONENTS ...) and pkg-config find the adapters; without them the package still works"

phase "done: ${adapters[*]} pass"
