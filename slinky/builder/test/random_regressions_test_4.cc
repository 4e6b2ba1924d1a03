// Bugs found by the random pipeline tester, continued from random_regressions_test_3.cc (the same
// test executable, slinky_builder_random_regressions_test). New regression tests go at the end of
// this file.
#include <gtest/gtest.h>

#include "random_pipeline/regression_check.h"

#include "random_regressions.h"

namespace slinky {
namespace {

using random_test::expect_generated_case_passes;

// Found by a soak of the tester (seed 7421 case 5571). The client stores t1 at f2's parallel loop
// over z (steps of 6), where f0 is computed; f1, reading t1, is computed inside the parallel loop
// over y within it, and f2 reads f1's t2 at 3 z + x, x in [0, 3]: in each iteration of z,
// [3 z, 3 z + 18], one element of it the next iteration's. Serially, t2 slides along z (a warm-up
// iteration computes its first element) and t1, allocated in each iteration, holds the new part
// (12 x 4 elements); in parallel, each iteration computes t2's whole window, and t1 holds all of
// it (13 x 4). The oracle's prediction of a window overlapping across a parallel loop (the rule
// kept_inside_an_inner_parallel_loop: t1 bounded by the unscheduled size only) did not count the
// loop of a second variable of a read (z in 3 z + x) as widening the window: wide_windows now adds
// the loops of var2 and var3 as window_deps does.
TEST(random_regressions, client_storage_under_a_parallel_loop_read_through_the_hull_of_two_variables) {
  random_test::monitor m;
  m.allowed = {{}, {{0, 12}, {0, 3}}, {{0, 12}, {0, 3}}, {{0, 3}, {0, 3}, {0, 3}}, {{0, 3}}};
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
  auto in0 = buffer_expr::make(ctx, "in0", 1, 4);
  auto t1 = buffer_expr::make(ctx, "t1", 2, 4);
  auto t2 = buffer_expr::make(ctx, "t2", 2, 4);
  auto t3 = buffer_expr::make(ctx, "t3", 3, 4);
  auto out4 = buffer_expr::make(ctx, "out4", 1, 4);
  func f0(random_test::kernel({.stage = 0, .inputs = {{{.var = 0}}}, .outputs = {1}}, &m), {{in0, {point(x)}}},
          {{t1, {x, y}}}, {}, {.name = "f0"});
  func f1(random_test::kernel({.stage = 1, .inputs = {{{.var = 0}, {.var = 1}}}, .outputs = {2}}, &m),
          {{t1, {point(x), point(y)}}}, {{t2, {x, y}}}, {}, {.name = "f1"});
  func f2(
      random_test::kernel({.stage = 2, .inputs = {{{.var = 0, .var2 = 2, .mul2 = 3}, {.var = 1}}}, .outputs = {3}}, &m),
      {{t2, {point(z * 3 + x), point(y)}}}, {{t3, {x, y, z}}}, {}, {.name = "f2"});
  func f3(
      random_test::kernel({.stage = 3,
                           .inputs = {{{.var = 0, .flat = true}, {.var = 0, .flat = true}, {.var = 0, .flat = true}}},
                           .outputs = {4}},
                          &m),
      {{t3, {point(x), point(x), point(x)}}}, {{out4, {x}}}, {}, {.name = "f3"});
  pipeline unscheduled = build_pipeline(ctx, {in0}, {out4});
  f0.compute_at({&f2, z});
  f2.loops({{y, 1, loop::parallel}, {z, 6, loop::parallel}});
  t1->store_at({&f2, z});
  build_options options;
  pipeline scheduled = build_pipeline(ctx, {in0}, {out4}, options);
  f2.loops({{y, 1}, {z, 6}});
  pipeline serial = build_pipeline(ctx, {in0}, {out4}, options);
  f2.loops({{y, 1 * random_test::in_flight()}, {z, 6 * random_test::in_flight()}});
  pipeline serial_in_flight = build_pipeline(ctx, {in0}, {out4}, options);
  f2.loops({{y, 1}, {z, 6}});
  f1.compute_at({&f2, z});
  pipeline serial_staged = build_pipeline(ctx, {in0}, {out4}, options);
  // t1 is bounded by the unscheduled size only; the others by the serial schedules'.
  random_test::expect_same(unscheduled, scheduled,
                           {.inputs = {{.bounds = {{0, 12}}, .seed = 9256859150852275115ull}},
                            .outputs = {{.bounds = {{0, 3}}}},
                            .monitor = &m,
                            .no_larger = {t2, t3},
                            .bounded_by = {&serial, &serial_in_flight, &serial_staged}});
  // The case as generated, with every schedule.
  expect_generated_case_passes(7421, 5571);
}

}  // namespace
}  // namespace slinky
