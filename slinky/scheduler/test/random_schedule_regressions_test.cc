// Cases the random pipeline tester's auto mode (docs/random_testing.md, "Auto mode") found,
// shrunk and printed by it: the graph, the schedule set before the scheduler, the call of
// schedule(), and the check of the tester's regression tests (random_regression.h, expect_same).
// A test of a bug not fixed yet is DISABLED_ (run them with --gtest_also_run_disabled_tests).
#include <gtest/gtest.h>

#include "random_pipeline/build.h"
#include "random_regression.h"
#include "slinky/scheduler/schedule.h"

namespace slinky {

namespace {

// The tester's tiny_4_threads machine.
machine tiny_4_threads() {
  machine target;
  target.l1_bytes = 4096;
  target.l2_bytes = 16384;
  target.l3_bytes = 65536;
  target.threads = 4;
  return target;
}

}  // namespace

// Seed 2, case 4260 (random_pipelines --seed 2 --case 4260), auto mode keep on machine
// tiny_4_threads. The client loops f1 over x and stores t1, f0's output, in that loop (f0 itself
// has neither loops nor compute_at: it is computed in f1's loop by default). The scheduler, with
// its default options, leaves f1 alone but computes f0 at the root, outside t1's storage, and
// build_pipeline aborts: "store_at of buffer t1: loop x of func f1 does not contain func f0,
// which produces it". Not fixed yet: the scheduler should leave alone (or not move out of the
// client's storage) a func whose output the client stored somewhere.
void store_at_of_an_unscheduled_func(bool reschedule) {
  random_test::monitor m;
  m.allowed = {{}, {{0, 0}, {0, 0}}, {{0, 0}, {0, 0}, {0, 2}}, {{0, 0}, {0, 0}, {0, 1}}};
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
  random_test::host_buffer c0_data(4, {{0, 0}, {0, 0}});
  random_test::fill(c0_data, 13284550414161080021ull);
  auto c0 = buffer_expr::make_constant(ctx, "c0", raw_buffer::make_copy(c0_data.raw()));
  auto t1 = buffer_expr::make(ctx, "t1", 2, 4);
  auto t2 = buffer_expr::make(ctx, "t2", 3, 4);
  auto out3 = buffer_expr::make(ctx, "out3", 3, 4);
  func f0(random_test::kernel({.stage = 0, .inputs = {{{.var = 0}, {.var = 1}}}, .outputs = {1}}, &m),
          {{c0, {point(x), point(y)}}}, {{t1, {x, y}}}, {}, {.name = "f0"});
  func f1(random_test::kernel({.stage = 1, .inputs = {{{.var = 0}, {.var = 1}}}, .outputs = {2}}, &m),
          {{t1, {point(x), point(y)}}}, {{t2, {x, y, z}}}, {}, {.name = "f1"});
  func f2(
      random_test::kernel({.stage = 2, .inputs = {{{.var = 0}, {.var = 1}, {.var = 2, .hi = 1}}}, .outputs = {3}}, &m),
      {{t2, {point(x), point(y), bounds(z, z + 1)}}}, {{out3, {x, y, z}}}, {}, {.name = "f2"});
  pipeline unscheduled = build_pipeline(ctx, {}, {out3});
  f1.loops({{x, 1}});
  t1->store_at({&f1, x});
  schedule_shapes shapes;
  shapes.buffers.push_back({out3, {{0, 0}, {0, 0}, {0, 1}}});
  schedule_options auto_options;
  auto_options.reschedule = reschedule;
  schedule({}, {out3}, shapes, tiny_4_threads(), auto_options);
  pipeline scheduled = build_pipeline(ctx, {}, {out3});
  random_test::expect_same(unscheduled, scheduled,
                           {.inputs = {}, .outputs = {{.bounds = {{0, 0}, {0, 0}, {0, 1}}}}, .monitor = &m});
}

TEST(random_schedule_regressions, DISABLED_store_at_of_an_unscheduled_func_kept) {
  store_at_of_an_unscheduled_func(false);
}

TEST(random_schedule_regressions, store_at_of_an_unscheduled_func_rescheduled) {
  store_at_of_an_unscheduled_func(true);
}

}  // namespace slinky
