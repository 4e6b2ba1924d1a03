// Cases the random pipeline tester's auto mode (docs/random_testing.md, "Auto mode") found,
// shrunk and printed by it: the graph, the schedule set before the scheduler, the call of
// schedule(), and the check of the tester's regression tests (random_pipeline/regression_check.h, expect_same).
// A test of a bug not fixed yet is DISABLED_ (run them with --gtest_also_run_disabled_tests).
#include <gtest/gtest.h>

#include "random_pipeline/build.h"
#include "random_pipeline/regression_check.h"
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

// Seed 2, case 4260 (random_pipelines --seed 2 --case 4260 --features auto_store_at; also case
// 16577), auto mode keep on machine tiny_4_threads. The client loops f1 over x and stores t1, f0's output, in that loop
// (f0 itself has neither loops nor compute_at: it is computed in f1's loop by default). The scheduler, with its default
// options, leaves f1 alone but computes f0 at the root, outside t1's storage, and build_pipeline aborts: "store_at of
// buffer t1: loop x of func f1 does not contain func f0, which produces it". Not fixed yet: the scheduler should leave
// alone (or not move out of the client's storage) a func whose output the client stored somewhere.
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

TEST(random_schedule_regressions, store_at_of_an_unscheduled_func_kept) { store_at_of_an_unscheduled_func(false); }

TEST(random_schedule_regressions, store_at_of_an_unscheduled_func_rescheduled) {
  store_at_of_an_unscheduled_func(true);
}

// Seed 4, case 17607 (random_pipelines --seed 4 --case 17607 --features auto_only,auto_store_at),
// auto mode keep on machine tiny. The same bug one func further: the
// client loops f0 (over y) and f2 (over x), stores t2 (f0's output) in f2's loop x, and leaves f1,
// between them, unscheduled. The scheduler computes f1 at the root, f0 follows its consumer out
// of f2's loop, and build_pipeline aborts: "store_at of buffer t2: loop x of func f2 does not
// contain func f0, which produces it".
TEST(random_schedule_regressions, store_at_across_an_unscheduled_func_kept) {
  random_test::monitor m;
  m.allowed = {{}, {}, {{0, 0}, {0, 4}}, {{0, 0}, {0, 3}}, {{0, 3}}, {{0, 3}}, {{0, 3}}};
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  random_test::host_buffer c0_data(4, {{0, 0}, {0, 4}});
  random_test::fill(c0_data, 3771958044407656506ull);
  auto c0 = buffer_expr::make_constant(ctx, "c0", raw_buffer::make_copy(c0_data.raw()));
  random_test::host_buffer c1_data(4, {{0, 0}});
  random_test::fill(c1_data, 3771958044407656507ull);
  auto c1 = buffer_expr::make_constant(ctx, "c1", raw_buffer::make_copy(c1_data.raw()));
  auto t2 = buffer_expr::make(ctx, "t2", 2, 4);
  auto t3 = buffer_expr::make(ctx, "t3", 2, 4);
  auto t4 = buffer_expr::make(ctx, "t4", 1, 2);
  auto t5 = buffer_expr::make(ctx, "t5", 1, 4);
  auto out6 = buffer_expr::make(ctx, "out6", 1, 4);
  func f0(random_test::kernel({.stage = 0, .inputs = {{{.var = 0}, {.var = 1}}}, .outputs = {2}}, &m),
          {{c0, {point(x), point(y)}}}, {{t2, {x, y}}}, {}, {.name = "f0"});
  func f1(random_test::kernel({.stage = 1, .inputs = {{{.var = 0}}, {{.var = 0}, {.var = 1, .hi = 1}}}, .outputs = {3}},
                              &m),
          {{c1, {point(x)}}, {t2, {point(x), bounds(y, y + 1)}}}, {{t3, {x, y}}}, {}, {.name = "f1"});
  func f2(random_test::kernel({.stage = 2, .inputs = {{{.var = -1}, {.var = 0}}}, .outputs = {4}}, &m),
          {{t3, {point(0), point(x)}}}, {{t4, {x}}}, {}, {.name = "f2"});
  func f3(random_test::kernel({.stage = 3, .inputs = {{{.var = 0}}}, .outputs = {5}}, &m), {{t4, {point(x)}}},
          {{t5, {x}}}, {}, {.name = "f3"});
  func f4(random_test::kernel({.stage = 4, .inputs = {{{.var = 0}}}, .outputs = {6}}, &m), {{t5, {point(x)}}},
          {{out6, {x}}}, {}, {.name = "f4"});
  pipeline unscheduled = build_pipeline(ctx, {}, {out6});
  f0.loops({{y, 1}});
  f2.loops({{x, 1}});
  f3.compute_root();
  t2->store_at({&f2, x});
  machine target;
  target.l1_bytes = 4096;
  target.l2_bytes = 16384;
  target.l3_bytes = 65536;
  schedule_shapes shapes;
  shapes.buffers.push_back({out6, {{0, 3}}});
  schedule({}, {out6}, shapes, target);
  pipeline scheduled = build_pipeline(ctx, {}, {out6});
  random_test::expect_same(unscheduled, scheduled, {.inputs = {}, .outputs = {{.bounds = {{0, 3}}}}, .monitor = &m});
}

}  // namespace slinky
