// Bugs found by the random pipeline tester with the copy kinds and schedule features of issue 7
// (padded copies, concatenations, stacks, flips, reshapes, folds, constants), each shrunk to a
// small graph and schedule, with what went wrong. A test of a bug not fixed yet is DISABLED_ (run
// them with --gtest_also_run_disabled_tests).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "random_pipeline_build.h"
#include "slinky/base/thread_pool.h"

namespace slinky {
namespace {

// Bug C1 (open; found with seed 1, case 1783, reshapes_up on; shrunk, the reshape became a func
// reading t3 at y * 5 + x). out4 is [5, 5] x [0, 0] x [0, 0]. t1 (stored at the root) is read by
// f1 at a window fixed in f3's loop over y ([y.f2, y.f2 + 1], from f2's loop) and by f2 at x,
// which moves by 5 with f3's y: its window over f3's loop is the hull of a fixed and a moving part.
// The builder folds t1 by 5 (the allocation is [0, 5] with fold factor 5), but in the warm-up
// iteration y.f2 = -1 of f2's loop, f0 is asked to compute the crop [0, 5] of t1 in one call:
// t1(5) lands on t1(0)'s slot, and f1 then reads t1(5)'s value as t1(0) for t2(5, 0), so
// out4(5, 0, 0) is wrong. The fold factor is one less than the hull's extent (6). reshapes_up
// stays off in the tester's features.
TEST(random_regressions, DISABLED_fold_of_hull_window_moving_by_a_reshape_stride) {
  // mismatch: output out4 at (5, 0, 0) expected 2073142405, got -1799317947
  random_test::monitor m;
  m.allowed = {{}, {{0, 5}}, {{5, 5}, {0, 1}}, {{5, 5}, {0, 0}}, {{5, 5}, {0, 0}, {0, 0}}};
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
  auto in0 = buffer_expr::make(ctx, "in0", 2, 4);
  auto t1 = buffer_expr::make(ctx, "t1", 1, 4);
  auto t2 = buffer_expr::make(ctx, "t2", 2, 4);
  auto t3 = buffer_expr::make(ctx, "t3", 2, 4);
  auto out4 = buffer_expr::make(ctx, "out4", 3, 4);
  func f0(random_test::kernel({0, {{{0, 1, 1, 0, 0}, {-1, 1, 1, 0, 0}}}, {1}}, &m), {{in0, {point(x), point(0)}}},
          {{t1, {x}}}, {.name = "f0"});
  func f1(random_test::kernel({1, {{{1, 1, 1, 0, 0}}}, {2}}, &m), {{t1, {point(y)}}}, {{t2, {x, y}}}, {.name = "f1"});
  func f2(random_test::kernel({2, {{{0, 1, 1, 0, 0}, {1, 1, 1, 0, 1}}, {{0, 1, 1, 0, 0}}}, {3}}, &m),
          {{t2, {point(x), bounds(y, y + 1)}}, {t1, {point(x)}}}, {{t3, {x, y}}}, {.name = "f2"});
  func f3(random_test::kernel({3, {{{0, 1, 1, 0, 0, false, 0, 1, 5}, {2, 1, 1, 0, 0}}}, {4}}, &m),
          {{t3, {point(y * 5 + x), point(z)}}}, {{out4, {x, y, z}}}, {.name = "f3"});
  pipeline unscheduled = build_pipeline(ctx, {in0}, {out4});
  f2.loops({{y, 1}});
  f3.loops({{y, 1}});
  build_options options;
  pipeline scheduled = build_pipeline(ctx, {in0}, {out4}, options);
  random_test::host_buffer in0_buf(4, {{0, 5}, {0, 0}});
  random_test::fill(in0_buf, 10627921868803421944ull);
  random_test::host_buffer out4_a(4, {{5, 5}, {0, 0}, {0, 0}});
  random_test::host_buffer out4_b(4, {{5, 5}, {0, 0}, {0, 0}});
  random_test::eval_hooks a_hooks, b_hooks;
  ASSERT_EQ(unscheduled.evaluate({&in0_buf.raw()}, {&out4_a.raw()}, a_hooks.context), 0);
  EXPECT_EQ(a_hooks.check() + m.failure(), "");
  ASSERT_EQ(scheduled.evaluate({&in0_buf.raw()}, {&out4_b.raw()}, b_hooks.context), 0);
  EXPECT_EQ(b_hooks.check() + m.failure(), "");
  EXPECT_EQ(b_hooks.allocations(), b_hooks.frees());
  EXPECT_TRUE(random_test::equal(out4_a, out4_b));
}

}  // namespace
}  // namespace slinky
