// Leaks: a small pipeline (an intermediate on the heap, a loop, checks) evaluated a million times
// keeps its allocations and frees balanced through the eval_config hooks, and the process's
// resident memory and heap do not grow. Failures (a failed check, a failed callback) on some of
// the evaluations must not leak either.
//
// SLINKY_LEAK_EVALUATIONS sets the number of evaluations (default 1000000, about 2 s in
// Release). Under AddressSanitizer the memory figures are not meaningful (freed blocks sit in
// ASan's quarantine), so only the hook counts are asserted and LeakSanitizer checks for leaks at
// exit.
#include <gtest/gtest.h>

#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "slinky/builder/pipeline.h"

#if defined(__SANITIZE_ADDRESS__)
#define SLINKY_LEAK_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLINKY_LEAK_TEST_ASAN 1
#endif
#endif

namespace slinky {
namespace {

long evaluations() {
  const char* s = std::getenv("SLINKY_LEAK_EVALUATIONS");
  return s ? std::atol(s) : 1000000;
}

// Resident set size in bytes, from /proc/self/statm.
long resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  long size = 0, resident = 0;
  const int n = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * 4096 : -1;
}

// Bytes of the heap in use.
long heap_bytes() { return static_cast<long>(mallinfo2().uordblks); }

TEST(leak, a_million_evaluations) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  bool fail_call = false;
  func f = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) {
        for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = a(i) * 2;
        return 0;
      },
      {{in, {point(x)}}}, {{intm, {x}}}, {.name = "twice"});
  func g = func::make(
      [&fail_call](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        if (fail_call) return 1;
        for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = a(i - 1) + a(i + 1);
        return 0;
      },
      {{intm, {bounds(x - 1, x + 1)}}}, {{out, {x}}}, {.name = "sum"});
  g.loops({{x, 2}});
  intm->store_in(memory_type::heap);
  pipeline p = build_pipeline(ctx, {in}, {out});

  buffer<int, 1> in_buf({6}), small_in({3}), out_buf({4});
  in_buf.translate(-1);
  in_buf.allocate();
  small_in.allocate();
  out_buf.allocate();
  for (index_t i = -1; i <= 4; ++i) in_buf(i) = static_cast<int>(i);

  long allocations = 0, frees = 0, checks_failed = 0, calls_failed = 0;
  eval_config config;
  config.allocate = [&](var sym, raw_buffer* buf) {
    ++allocations;
    return default_allocate(sym, buf, 64);
  };
  config.free = [&](var sym, raw_buffer* buf, void* allocation) {
    ++frees;
    default_free(sym, buf, allocation);
  };
  config.check_failed = [&](const expr&) { ++checks_failed; };
  config.call_failed = [&](const call_stmt*) { ++calls_failed; };

  const long n = evaluations();
  const long warm_up = std::min<long>(10000, n);
  long rss_after_warm_up = 0, heap_after_warm_up = 0;
  long expected_checks_failed = 0, expected_calls_failed = 0, expected_allocations = 0;
  for (long i = 0; i < n; ++i) {
    if (i == warm_up) {
      rss_after_warm_up = resident_bytes();
      heap_after_warm_up = heap_bytes();
    }
    eval_context context;
    context.config = &config;
    // Every 97th evaluation fails a check (the input is too small), every 89th a callback.
    const bool bad_input = i % 97 == 0;
    fail_call = !bad_input && i % 89 == 0;
    const index_t result = p.evaluate({bad_input ? &small_in : &in_buf}, {&out_buf}, context);
    ASSERT_EQ(result != 0, bad_input || fail_call) << "evaluation " << i;
    expected_checks_failed += bad_input;
    expected_calls_failed += fail_call;
    expected_allocations += !bad_input;
    if (i == 0) continue;
    if (!bad_input && !fail_call) {
      ASSERT_EQ(out_buf(1), 2 * 0 + 2 * 2) << "evaluation " << i;
    }
  }
  EXPECT_EQ(allocations, expected_allocations);
  EXPECT_EQ(frees, allocations);
  EXPECT_EQ(checks_failed, expected_checks_failed);
  EXPECT_EQ(calls_failed, expected_calls_failed);

  const long rss_growth = resident_bytes() - rss_after_warm_up;
  const long heap_growth = heap_bytes() - heap_after_warm_up;
  std::printf("%ld evaluations; growth after evaluation %ld: resident %ld bytes, heap %ld bytes\n", n, warm_up,
              rss_growth, heap_growth);
#ifndef SLINKY_LEAK_TEST_ASAN
  if (n > warm_up) {
    // Leaking one block (at least 32 bytes with glibc's malloc) per evaluation would grow the
    // heap by 30 MB here. The resident size moves by a few pages (malloc's top chunk, stacks),
    // whatever the number of evaluations.
    EXPECT_LT(heap_growth, 16 * 1024);
    EXPECT_LT(rss_growth, 1024 * 1024);
  }
#endif
}

}  // namespace
}  // namespace slinky
