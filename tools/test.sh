#!/usr/bin/env bash
# Builds and runs every test: a Release build, then a build with AddressSanitizer and
# UndefinedBehaviorSanitizer (and the compatibility suite against it, installed), then the threaded
# tests under ThreadSanitizer, on the bundled pool and on the host pool adapters, then the
# installed package from a client and the compatibility suite.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/check_no_rtti.sh
jobs=$(nproc)
start=$SECONDS
phase() { echo "== $1 (at $((SECONDS - start)) s)"; }
# Sanitizer builds at -O1 with line tables only: the level the sanitizers recommend, and it
# compiles the test files 2.5 times faster than -O2 -g. The library's internal assertions
# (SLINKY_ASSERT, slinky/base/assert.h) are checked there.
sanitizer_opt="-O1 -g1 -DNDEBUG -DSLINKY_ASSERTIONS"

run() {  # run <build dir> <cmake args...>
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir"
}

phase "Release build and tests"
# The library and apps at -O3; the test executables at -O1 (a quarter faster to compile; the
# tests spend their time in the library).
run build -DCMAKE_BUILD_TYPE=Release -DSLINKY_TEST_COMPILE_OPTIONS=-O1
# The random pipeline tester for 60 s here (its default, 120 s, under the sanitizers below): it is
# the longest test, and the others take about as long on the other core.
SLINKY_RANDOM_SECONDS=60 ctest --test-dir build --output-on-failure -j "$jobs"

phase "AddressSanitizer + UndefinedBehaviorSanitizer"
# Shared libraries here (static in the other builds), so that both kinds are built, tested and
# installed (the compat suite below links the shared ones). The test executables at -O0: under AddressSanitizer they compile several times faster than at
# -O1, and the tests spend their time in the library, which stays at -O1.
run build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$sanitizer_opt" \
  -DSLINKY_SANITIZE=address,undefined -DSLINKY_BUILD_APPS=OFF -DSLINKY_TEST_COMPILE_OPTIONS=-O0 -DSLINKY_SHARED=ON
ctest --test-dir build-asan --output-on-failure -j "$jobs"

phase "Compatibility suite (test/integration/compat) against the installed sanitizer build"
# With the vptr check: the library is built with RTTI (it never uses it), so a client built with
# -fsanitize=undefined finds the type info of library classes it derives from or calls through.
tools/check_install.sh build-asan \
  "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" "-O0 -g1"

phase "ThreadSanitizer (the threaded tests)"
threaded="slinky_base_thread_pool_test slinky_builder_parallel_test slinky_builder_parallel_sliding_test slinky_scheduler_auto_pipeline_test
slinky_scheduler_auto_pipeline_refine_test slinky_scheduler_auto_pipeline_refine_choice_test slinky_scheduler_auto_pipeline_refine_first_test"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$sanitizer_opt" \
  -DSLINKY_SANITIZE=thread -DSLINKY_BUILD_APPS=OFF >/dev/null
# shellcheck disable=SC2086
cmake --build build-tsan --target $threaded
ctest --test-dir build-tsan --output-on-failure -j "$jobs" -R "^slinky_(base_thread_pool|builder_parallel|scheduler_auto_pipeline)"

phase "Host pool adapters (pthreadpool, oneTBB) under ThreadSanitizer"
# Installs the two packages when missing, and reuses build-tsan's libraries (docs/threads.md).
tools/check_adapters.sh build-tsan

phase "Install and use from a client (pkg-config and CMake package), and the compatibility suite"
tools/check_install.sh build

phase "All tests passed"
