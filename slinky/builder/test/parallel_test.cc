// Parallel loops: parallel and serial runs give identical results, intermediates of a parallel
// loop stay small, failures in one worker stop the others and are reported once. Runs under
// ThreadSanitizer in CI.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"
#include "test_funcs.h"

namespace slinky {
namespace {

using test::memory_counter;

index_t times_3(const buffer<const int>& in, const buffer<int>& out) {
  return test::elementwise<int>(in, out, [](int v) { return v * 3 + 1; });
}
index_t sum_3x3(const buffer<const int>& in, const buffer<int>& out) { return test::box_sum<int>(in, out, 1, 1); }

// A 2-stage stencil (elementwise then 3x3) with a loop over y of the given step and workers.
struct stencil_pipeline {
  node_context ctx;
  buffer_expr_ptr in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  buffer_expr_ptr intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  buffer_expr_ptr out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x{ctx, "x"};
  var y{ctx, "y"};
  func f, g;
  pipeline p;

  stencil_pipeline(index_t step, expr workers) {
    f = func::make(times_3, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
    g = func::make(sum_3x3, {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
    g.loops({{y, step, workers}});
    p = build_pipeline(ctx, {in}, {out});
  }
};

buffer<int, 2> run_stencil(index_t step, expr workers, thread_pool* pool, memory_counter* m = nullptr) {
  const int w = 37, h = 29;
  stencil_pipeline s(step, workers);
  buffer<int, 2> in_buf({w + 2, h + 2});
  in_buf.translate(0, -1).translate(1, -1);
  buffer<int, 2> out_buf({w, h});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 17);
  memory_counter local;
  memory_counter& counter = m ? *m : local;
  counter.config.thread_pool = pool;
  EXPECT_EQ(s.p.evaluate({&in_buf}, {&out_buf}, counter.context), 0);
  return out_buf;
}

bool same(const buffer<int, 2>& a, const buffer<int, 2>& b) {
  for (index_t y = a.dim(1).min(); y <= a.dim(1).max(); ++y) {
    for (index_t x = a.dim(0).min(); x <= a.dim(0).max(); ++x) {
      if (a(x, y) != b(x, y)) return false;
    }
  }
  return true;
}

TEST(parallel, stencil_matches_serial) {
  thread_pool_impl pool(2);
  buffer<int, 2> serial = run_stencil(1, loop::serial, nullptr);
  for (index_t step : {1, 2, 5, 64}) {
    for (expr workers : {expr(loop::parallel), expr(2)}) {
      buffer<int, 2> parallel = run_stencil(step, workers, &pool);
      EXPECT_TRUE(same(serial, parallel)) << "step " << step;
    }
  }
  // Without a pool, parallel loops run serially and correctly.
  EXPECT_TRUE(same(serial, run_stencil(3, loop::parallel, nullptr)));
}

// The default schedule keeps a parallel loop's intermediates small: each iteration (each
// worker) has its own buffer of the chunk plus the halo.
TEST(parallel, intermediates_stay_small) {
  thread_pool_impl pool(2);
  memory_counter m;
  run_stencil(4, loop::parallel, &pool, &m);
  EXPECT_GT(m.allocations, 0);
  for (index_t size : m.sizes) EXPECT_LE(size, (37 + 2) * (4 + 2) * static_cast<index_t>(sizeof(int)));
  EXPECT_EQ(m.allocations, m.frees);
}

// An elementwise chain of 4 funcs, looped in parallel chunks, many times: races show up as
// wrong results (and under ThreadSanitizer).
TEST(parallel, elementwise_chain_repeated) {
  thread_pool_impl pool(3);
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 1, sizeof(int));
  auto c = buffer_expr::make(ctx, "c", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f1 = func::make(times_3, {{in, {point(x)}}}, {{a, {x}}});
  func f2 = func::make(times_3, {{a, {point(x)}}}, {{b, {x}}});
  func f3 = func::make(times_3, {{b, {point(x)}}}, {{c, {x}}});
  func f4 = func::make(times_3, {{c, {point(x)}}}, {{out, {x}}});
  f4.loops({{x, 7, loop::parallel}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  const int n = 300;
  buffer<int, 1> in_buf({n}), out_buf({n});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 18);
  eval_config config;
  config.thread_pool = &pool;
  for (int rep = 0; rep < 200; ++rep) {
    for_each_element([](int* v) { *v = 0; }, out_buf);
    eval_context context;
    context.config = &config;
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, context), 0);
    for (int i = 0; i < n; ++i) {
      int v = in_buf(i);
      for (int k = 0; k < 4; ++k) v = v * 3 + 1;
      ASSERT_EQ(out_buf(i), v) << "rep " << rep;
    }
  }
}

// Parallel loops over y and, inside, over x.
TEST(parallel, nested_loops) {
  thread_pool_impl pool(2);
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func f = func::make(times_3, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func g = func::make(sum_3x3, {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
  g.loops({{x, 4, loop::parallel}, {y, 3, loop::parallel}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({39, 31});
  in_buf.translate(0, -1).translate(1, -1);
  buffer<int, 2> out_buf({37, 29});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 17);
  eval_config config;
  config.thread_pool = &pool;
  eval_context context;
  context.config = &config;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, context), 0);
  EXPECT_TRUE(same(out_buf, run_stencil(1, loop::serial, nullptr)));
}

// A callback failing in one worker stops the loop; call_failed is called once.
TEST(parallel, failure_in_one_worker) {
  thread_pool_impl pool(2);
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  std::atomic<int> calls{0};
  func f = func::make(
      [&](const buffer<const int>&, const buffer<int>& o) -> index_t {
        ++calls;
        return o.dim(0).min() == 40 ? 5 : 0;
      },
      {{in, {point(x)}}}, {{out, {x}}}, {.name = "sometimes_fails"});
  f.loops({{x, 1, loop::parallel}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> in_buf({1000}), out_buf({1000});
  in_buf.allocate();
  out_buf.allocate();
  std::atomic<int> failures{0};
  eval_config config;
  config.thread_pool = &pool;
  config.call_failed = [&](const call_stmt*) { ++failures; };
  eval_context context;
  context.config = &config;
  EXPECT_EQ(p.evaluate({&in_buf}, {&out_buf}, context), 5);
  EXPECT_EQ(failures, 1);
  // The other workers stopped promptly: nowhere near all 1000 iterations ran.
  EXPECT_LT(calls, 1000);
}

}  // namespace
}  // namespace slinky
