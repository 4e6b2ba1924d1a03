// The just-in-time entry: an auto_pipeline computes what the unscheduled pipeline computes for
// every shape, builds once per shape class, evicts the least recently used class, is safe to
// evaluate from several threads, and keeps (and restores) the client's schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/auto_pipeline.h"
#include "slinky/scheduler/test/auto_pipeline_test_util.h"

namespace slinky {

using namespace auto_pipeline_test;

TEST(auto_pipeline, computes_the_reference_for_many_shapes) {
  stencil_graph g;
  const auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  const std::pair<index_t, index_t> shapes[] = {{40, 30}, {1, 1}, {3, 100}, {100, 3}, {64, 64}, {65, 17}, {50, 20}};
  for (auto [w, h] : shapes) {
    EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u) << w << "x" << h;
  }
  // The schedule is a real one: a loop over the rows, the intermediates sliding in it.
  EXPECT_NE(p.last_report().find("loop over dim 1"), std::string::npos) << p.last_report();
}

TEST(auto_pipeline, builds_once_per_shape_class) {
  stencil_graph g;
  const auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  EXPECT_EQ(p.builds(), 0u);
  EXPECT_EQ(p.cache_size(), 0u);
  EXPECT_EQ(p.last_report(), "");
  // in 44 x 34 (64 x 64), out 40 x 30 (64 x 32).
  EXPECT_EQ(mismatches(run(p, 40, 30), reference(40, 30)), 0u);
  EXPECT_EQ(p.builds(), 1u);
  EXPECT_NE(p.last_report(), "");
  // in 54 x 36, out 50 x 32: the same class.
  EXPECT_EQ(mismatches(run(p, 50, 32), reference(50, 32)), 0u);
  EXPECT_EQ(mismatches(run(p, 40, 30), reference(40, 30)), 0u);
  // in 37 x 33, out 33 x 29: the same class again, the smallest shapes of it.
  EXPECT_EQ(mismatches(run(p, 33, 29), reference(33, 29)), 0u);
  EXPECT_EQ(p.builds(), 1u);
  EXPECT_EQ(p.cache_size(), 1u);
  // out 70 x 30: a new class (128 wide).
  EXPECT_EQ(mismatches(run(p, 70, 30), reference(70, 30)), 0u);
  EXPECT_EQ(p.builds(), 2u);
  EXPECT_EQ(p.cache_size(), 2u);
  // out 40 x 33: a new class (64 tall).
  EXPECT_EQ(mismatches(run(p, 40, 33), reference(40, 33)), 0u);
  EXPECT_EQ(p.builds(), 3u);
  EXPECT_EQ(p.cache_size(), 3u);

  // The same pipeline object for the same class, another for another.
  buffer<float, 2> in1({44, 34}), out1({40, 30}), in2({54, 36}), out2({50, 32}), out3({70, 30});
  const raw_buffer* ins1[] = {&in1};
  const raw_buffer* outs1[] = {&out1};
  const raw_buffer* ins2[] = {&in2};
  const raw_buffer* outs2[] = {&out2};
  const raw_buffer* outs3[] = {&out3};
  const auto a = p.pipeline_for({}, ins1, outs1);
  const auto b = p.pipeline_for({}, ins2, outs2);
  const auto c = p.pipeline_for({}, ins1, outs3);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // in 44 x 34 with out 70 x 30 is a fourth class (the class covers every buffer).
  EXPECT_EQ(p.builds(), 4u);
}

TEST(auto_pipeline, evicts_the_least_recently_used_class) {
  stencil_graph g;
  const auto_pipeline p(g.ctx, {}, {g.in}, {g.out}, build_options(), small_machine(), schedule_options(), 2);
  run(p, 10, 10);  // class A
  run(p, 20, 10);  // class B
  EXPECT_EQ(p.builds(), 2u);
  run(p, 10, 10);  // A again: cached, now the most recently used
  EXPECT_EQ(p.builds(), 2u);
  run(p, 40, 10);  // class C evicts B
  EXPECT_EQ(p.builds(), 3u);
  EXPECT_EQ(p.cache_size(), 2u);
  run(p, 10, 10);  // A is still cached
  EXPECT_EQ(p.builds(), 3u);
  EXPECT_EQ(mismatches(run(p, 20, 10), reference(20, 10)), 0u);  // B was evicted: built again
  EXPECT_EQ(p.builds(), 4u);
  EXPECT_EQ(p.cache_size(), 2u);
  run(p, 40, 10);  // C was evicted by B
  EXPECT_EQ(p.builds(), 5u);
}

TEST(auto_pipeline, schedules_for_the_thread_pool_it_runs_on) {
  // A machine of 2 threads: a pipeline evaluated on a pool of 2 (1 background thread and the
  // caller) gets a parallel loop; evaluated without a pool (its parallel loops would run
  // serially, recomputing the overlaps of a data-parallel loop for nothing), a serial one. The
  // two are separate classes of the same shapes.
  stencil_graph g;
  machine m = small_machine();
  m.threads = 2;
  const auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), m);
  const buffer<float, 2> expected = reference(64, 256);
  buffer<float, 2> in({64 + 4, 256 + 4}), out({64, 256});
  in.translate(-2, -2);
  in.allocate();
  out.allocate();
  for (index_t y = -2; y < 256 + 2; ++y) {
    for (index_t x = -2; x < 64 + 2; ++x) in(x, y) = static_cast<float>((x * 7 + y * 13) % 17) - 8;
  }

  thread_pool_impl pool(1);
  eval_config config;
  config.thread_pool = &pool;
  eval_context with_pool;
  with_pool.config = &config;
  ASSERT_EQ(p.evaluate({&in}, {&out}, with_pool), 0);
  EXPECT_EQ(mismatches(out, expected), 0u);
  EXPECT_EQ(p.builds(), 1u);
  EXPECT_NE(p.last_report().find(", parallel"), std::string::npos) << p.last_report();

  eval_context no_pool;
  ASSERT_EQ(p.evaluate({&in}, {&out}, no_pool), 0);
  EXPECT_EQ(mismatches(out, expected), 0u);
  EXPECT_EQ(p.builds(), 2u);
  EXPECT_EQ(p.last_report().find(", parallel"), std::string::npos) << p.last_report();
  // Without a context: an empty one, no pool: the serial class, cached.
  run(p, 64, 256);
  EXPECT_EQ(p.builds(), 2u);

  // A pool with more threads than the machine has is used with the machine's: the class of the
  // pool of 2.
  thread_pool_impl big_pool(3);
  config.thread_pool = &big_pool;
  ASSERT_EQ(p.evaluate({&in}, {&out}, with_pool), 0);
  EXPECT_EQ(mismatches(out, expected), 0u);
  EXPECT_EQ(p.builds(), 2u);
  EXPECT_EQ(p.cache_size(), 2u);

  // pipeline_for without a context schedules for the machine's threads: the class of the pool.
  EXPECT_NE(p.pipeline_for({}, {&in}, {&out}), nullptr);
  EXPECT_EQ(p.builds(), 2u);
}

TEST(auto_pipeline, concurrent_evaluations) {
  stencil_graph g;
  const auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  const std::pair<index_t, index_t> shapes[] = {{40, 30}, {50, 32}, {70, 30}, {20, 20}, {64, 60}, {9, 40}};
  std::vector<buffer<float, 2>> expected;
  for (auto [w, h] : shapes) expected.push_back(reference(w, h));
  // One class built before the threads start; the others are new to some threads and cached for
  // the rest.
  run(p, 40, 30);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 12; ++i) {
        const std::size_t s = (t + i) % std::size(shapes);
        index_t r = 0;
        const buffer<float, 2> out = run(p, shapes[s].first, shapes[s].second, &r);
        if (r != 0 || mismatches(out, expected[s]) != 0) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  // Each class was built exactly once: {40x30, 50x32} share one; the other four are distinct.
  EXPECT_EQ(p.builds(), 5u);
  EXPECT_EQ(p.cache_size(), 5u);
}

TEST(auto_pipeline, keeps_the_client_schedule) {
  stencil_graph g;
  // The client computes the output in strips of 3 rows.
  g.output_func().loops({{g.y, 3}});
  const auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  EXPECT_EQ(mismatches(run(p, 40, 30), reference(40, 30)), 0u);
  // The output's func is left alone: 10 strips of 3 rows.
  EXPECT_EQ(g.box2_calls.load(), 10);
  EXPECT_NE(p.last_report().find("left alone"), std::string::npos) << p.last_report();
  ASSERT_EQ(g.output_func().loops().size(), 1u);
  EXPECT_TRUE(as_constant(g.output_func().loops()[0].step) == 3);

  // Another func scheduled by the client: e at the root. The scheduler loops the output with box1
  // sliding in the loop, and keeps e at the root; the funcs' schedules are restored after building.
  stencil_graph h;
  h.funcs[0].compute_root();
  const auto_pipeline q(h.ctx, {h.in}, {h.out}, build_options(), small_machine());
  EXPECT_EQ(mismatches(run(q, 40, 30), reference(40, 30)), 0u);
  const std::string report = q.last_report();
  EXPECT_NE(report.find("loop over dim 1"), std::string::npos) << report;
  EXPECT_NE(report.find("e: left alone"), std::string::npos) << report;
  EXPECT_NE(report.find("box1: in loop"), std::string::npos) << report;
  EXPECT_GT(h.box1_calls.load(), 1);
  EXPECT_GT(h.box2_calls.load(), 1);
  EXPECT_TRUE(h.output_func().loops().empty());
  EXPECT_FALSE(h.funcs[1].compute_at().has_value());
  ASSERT_TRUE(h.funcs[0].compute_at().has_value());
  EXPECT_TRUE(*h.funcs[0].compute_at() == loop_id());

  // reschedule: the client's schedule is replaced in the built pipeline, and restored in the graph.
  stencil_graph k;
  k.output_func().loops({{k.y, 3}});
  schedule_options reschedule;
  reschedule.reschedule = true;
  const auto_pipeline r(k.ctx, {k.in}, {k.out}, build_options(), small_machine(), reschedule);
  EXPECT_EQ(mismatches(run(r, 40, 30), reference(40, 30)), 0u);
  EXPECT_EQ(r.last_report().find("left alone"), std::string::npos) << r.last_report();
  EXPECT_NE(k.box2_calls.load(), 10);
  ASSERT_EQ(k.output_func().loops().size(), 1u);
  EXPECT_TRUE(as_constant(k.output_func().loops()[0].step) == 3);
}

TEST(auto_pipeline, wrong_arguments_build_nothing) {
  stencil_graph g;
  const auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  buffer<float, 2> in({10, 10}), out({6, 6});
  std::vector<expr> failed;
  eval_config config;
  config.check_failed = [&](const expr& c) { failed.push_back(c); };
  eval_context ctx;
  ctx.config = &config;
  EXPECT_NE(p.evaluate({&in}, {}, ctx), 0);
  EXPECT_NE(p.evaluate({&in, &in}, {&out}, ctx), 0);
  EXPECT_NE(p.evaluate({1}, {&in}, {&out}, ctx), 0);
  EXPECT_NE(p.evaluate({nullptr}, {&out}, ctx), 0);
  EXPECT_EQ(failed.size(), 4u);
  // The null buffer is named in the failed condition.
  EXPECT_TRUE(match(failed.back(), expr(variable::make(g.in->sym())) != 0));
  EXPECT_EQ(p.builds(), 0u);
}

// Extents too large to round up to a power of two are classes of their own (no overflow): the
// shape class of such a buffer is computed without building for a wrong call.
TEST(auto_pipeline, huge_extents_do_not_overflow_the_shape_class) {
  stencil_graph g;
  const auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  raw_buffer in;
  dim in_dims[2] = {dim(0, std::numeric_limits<index_t>::max() - 1), dim(0, 3)};
  in.rank = 2;
  in.elem_size = sizeof(float);
  in.dims = in_dims;
  eval_config config;
  int failures = 0;
  config.check_failed = [&](const expr&) { ++failures; };
  eval_context ctx;
  ctx.config = &config;
  // A null output: rejected after the classes of the input's extents were computed (without the
  // cap, rounding 2^63 - 2 up to a power of two overflows and never ends).
  EXPECT_NE(p.evaluate({&in}, {nullptr}, ctx), 0);
  EXPECT_EQ(failures, 1);
  EXPECT_EQ(p.builds(), 0u);
}

}  // namespace slinky
