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

namespace slinky {

namespace {

// A small machine, so that small test buffers exceed its caches and get loops (and, scaled down
// with them, every block comes fresh from the allocator).
machine small_machine() {
  machine m;
  m.l1_bytes = 1024;
  m.l2_bytes = 8 * 1024;
  m.l3_bytes = 64 * 1024;
  m.fresh_block_bytes = 0;
  m.threads = 1;
  m.call_overhead_ns = 30;
  // Slow memory for its calls (the figures the tests were first written with), whatever the
  // defaults are: the tests check the decisions of this machine's model.
  const double ns_per_byte[4] = {0.02, 0.03, 0.06, 0.1};
  std::copy(std::begin(ns_per_byte), std::end(ns_per_byte), std::begin(m.ns_per_byte));
  return m;
}

// out = in * 2 + 1, over out's crop.
index_t scale(const buffer<const float>& in, const buffer<float>& out) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x, y) = in(x, y) * 2 + 1;
  }
  return 0;
}

// A 3x3 box sum that counts its calls with a non-empty output.
struct box3x3 {
  std::atomic<int>* calls;
  index_t operator()(const buffer<const float>& in, const buffer<float>& out) const {
    // Not the warm-up calls of a sliding loop (empty crops).
    if (out.dim(0).extent() > 0 && out.dim(1).extent() > 0) calls->fetch_add(1, std::memory_order_relaxed);
    for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
      for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) {
        float s = 0;
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) s += in(x + dx, y + dy);
        }
        out(x, y) = s;
      }
    }
    return 0;
  }
};

// in -> e = in * 2 + 1 -> b1 = box(e) -> out = box(b1).
struct stencil_graph {
  node_context ctx;
  var x{ctx, "x"}, y{ctx, "y"};
  buffer_expr_ptr in, e, b1, out;
  std::atomic<int> box1_calls{0}, box2_calls{0};
  std::vector<func> funcs;

  stencil_graph() {
    const box_expr pt = {point(x), point(y)};
    const box_expr nbhd = {bounds(x - 1, x + 1), bounds(y - 1, y + 1)};
    in = buffer_expr::make(ctx, "in", 2, sizeof(float));
    e = buffer_expr::make(ctx, "e", 2, sizeof(float));
    b1 = buffer_expr::make(ctx, "b1", 2, sizeof(float));
    out = buffer_expr::make(ctx, "out", 2, sizeof(float));
    funcs.push_back(func::make(scale, {{in, pt}}, {{e, {x, y}}}, {.name = "e"}));
    funcs.push_back(func::make(box3x3{&box1_calls}, {{e, nbhd}}, {{b1, {x, y}}}, {.name = "box1"}));
    funcs.push_back(func::make(box3x3{&box2_calls}, {{b1, nbhd}}, {{out, {x, y}}}, {.name = "box2"}));
  }
  func& output_func() { return funcs.back(); }
};

// The output for a w x h output (the input has a border of 2), evaluated in ctx if given.
buffer<float, 2> run(const auto_pipeline& p, index_t w, index_t h, index_t* result = nullptr,
                     eval_context* ctx = nullptr) {
  buffer<float, 2> in({w + 4, h + 4}), out({w, h});
  in.translate(-2, -2);
  in.allocate();
  out.allocate();
  for (index_t y = -2; y < h + 2; ++y) {
    for (index_t x = -2; x < w + 2; ++x) in(x, y) = static_cast<float>((x * 7 + y * 13) % 17) - 8;
  }
  const index_t r = ctx ? p.evaluate({&in}, {&out}, *ctx) : p.evaluate({&in}, {&out});
  if (result) *result = r;
  EXPECT_EQ(r, 0);
  return out;
}

// run() in a context whose thread pool has one worker (two threads with the caller).
buffer<float, 2> run_on_a_pool(const auto_pipeline& p, index_t w, index_t h) {
  thread_pool_impl pool(1);
  eval_config config;
  config.thread_pool = &pool;
  eval_context with_pool;
  with_pool.config = &config;
  return run(p, w, h, nullptr, &with_pool);
}

// The output of the unscheduled pipeline.
buffer<float, 2> reference(index_t w, index_t h) {
  stencil_graph g;
  const pipeline p = build_pipeline(g.ctx, {g.in}, {g.out});
  buffer<float, 2> in({w + 4, h + 4}), out({w, h});
  in.translate(-2, -2);
  in.allocate();
  out.allocate();
  for (index_t y = -2; y < h + 2; ++y) {
    for (index_t x = -2; x < w + 2; ++x) in(x, y) = static_cast<float>((x * 7 + y * 13) % 17) - 8;
  }
  EXPECT_EQ(p.evaluate({&in}, {&out}), 0);
  return out;
}

// The number of elements of a and b that differ (all of them if the shapes differ).
std::size_t mismatches(const buffer<float, 2>& a, const buffer<float, 2>& b) {
  if (a.dim(0).extent() != b.dim(0).extent() || a.dim(1).extent() != b.dim(1).extent()) return a.elem_count() + 1;
  std::size_t wrong = 0;
  for (index_t y = 0; y < a.dim(1).extent(); ++y) {
    for (index_t x = 0; x < a.dim(0).extent(); ++x) wrong += a(x, y) != b(x, y);
  }
  return wrong;
}

}  // namespace

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

namespace {

// The step of the output's loop in a candidate's name ("box2: step 8" or "box2: step 8, parallel").
index_t step_of(const std::string& candidate) {
  const std::size_t at = candidate.find("step ");
  return at == std::string::npos ? -1 : std::stoll(candidate.substr(at + 5));
}

// Evaluates p again (the pipeline refinement kept) and expects the reference, with box2 called
// once per iteration of a loop of `step` rows.
void expect_kept_rows(const auto_pipeline& p, stencil_graph& g, index_t w, index_t h, index_t step,
                      const std::string& report) {
  g.box2_calls = 0;
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  EXPECT_EQ(g.box2_calls.load(), static_cast<int>((h + step - 1) / step)) << report;
}

// The model's next-best candidate in a candidate's name: a loop over another dim or no loop.
bool is_next_best(const std::string& candidate) {
  return candidate.find("over ") != std::string::npos || candidate.find("no loop") != std::string::npos;
}

// The steps of the candidates timed, in the order they were, the model's next-best ones left out.
std::vector<index_t> steps_timed(const std::vector<std::string>& calls) {
  std::vector<index_t> order;
  for (const std::string& c : calls) {
    if (!is_next_best(c)) order.push_back(step_of(c));
  }
  return order;
}

// An injected measurement table: the time of a candidate, a function of its step, fastest at
// `best_step` (the model's next-best candidate slow); every call also runs the candidate (its
// result is checked by the final evaluate).
struct timing_table {
  index_t best_step;
  std::vector<std::string>* calls;
  double operator()(const std::string& candidate, const std::function<double()>& run) const {
    calls->push_back(candidate);
    run();
    if (is_next_best(candidate)) return 10e-3;
    const double s = static_cast<double>(step_of(candidate));
    return 1e-3 * (1 + std::abs(std::log2(s) - std::log2(static_cast<double>(best_step))));
  }
};

}  // namespace

TEST(auto_pipeline, refinement_keeps_the_fastest_measured_neighbour) {
  const index_t w = 64, h = 256;
  stencil_graph plain;
  const auto_pipeline unrefined(plain.ctx, {plain.in}, {plain.out}, build_options(), small_machine());
  ASSERT_EQ(mismatches(run(unrefined, w, h), reference(w, h)), 0u);
  const std::string model_report = unrefined.last_report();
  // The model's step on this machine (the report: "in steps of N").
  const std::size_t at = model_report.find("in steps of ");
  ASSERT_NE(at, std::string::npos) << model_report;
  const index_t model_step = std::stoll(model_report.substr(at + 12));
  ASSERT_LT(model_step, 32) << model_report;
  EXPECT_EQ(model_report.find("refinement"), std::string::npos);

  // The table is fastest at 8 times the model's step: doubling three times gets there, each
  // round trying the step doubled and halved (the halved ones slower).
  for (int budget : {20, 3, 1}) {
    std::vector<std::string> calls;
    stencil_graph g;
    auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
    refine_options o;
    o.max_evaluations = budget;
    o.repetitions = 1;
    o.timer = timing_table{8 * model_step, &calls};
    p.set_refinement(o);
    EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
    const std::string report = p.last_report();
    // The model's choice, then `budget` candidates, none twice; then, timed again (not counted in
    // the budget), the fastest and the model's choice with its smaller step, and nothing else: in
    // one round, and 2 more where the step kept after it is at least 4 times the model's (keeping
    // it would multiply the model's memory).
    ASSERT_GE(calls.size(), 2u) << report;
    const std::size_t evaluated_at = report.find(" candidates evaluated");
    ASSERT_NE(evaluated_at, std::string::npos) << report;
    const int explored = std::stoi(report.substr(report.rfind(' ', evaluated_at - 1) + 1));
    EXPECT_LE(explored, budget) << report;
    const std::size_t walk = 1 + static_cast<std::size_t>(explored);
    EXPECT_EQ(step_of(calls[0]), model_step);
    for (std::size_t i = 0; i < walk; ++i) {
      for (std::size_t j = 0; j < i; ++j) EXPECT_NE(calls[i], calls[j]);
    }
    // Within the budget, the largest step reached: 2, 4, then 8 times the model's (the first
    // round tries doubled, halved and the model's next-best: 3 evaluations; the next rounds
    // doubled only, the halved step was tried).
    const index_t kept = budget >= 5 ? 8 * model_step : budget >= 4 ? 4 * model_step : 2 * model_step;
    const std::size_t rounds = kept >= 4 * model_step ? 3 : 1;
    ASSERT_EQ(calls.size(), walk + 2 * rounds) << report;
    EXPECT_NE(std::find(calls.begin(), calls.begin() + walk, calls[walk]), calls.begin() + walk) << report;
    for (std::size_t r = 0; r < rounds; ++r) {
      EXPECT_EQ(calls[walk + 2 * r], calls[walk]) << report;
      EXPECT_EQ(calls[walk + 2 * r + 1], calls[0]) << report;
    }
    EXPECT_NE(report.find("timed again, interleaved, 1 rounds:"), std::string::npos) << report;
    EXPECT_EQ(report.find("timed again, interleaved, 2 rounds more (the one kept after 1 takes 8 times the steps of "
                          "the model's choice):") != std::string::npos,
              rounds == 3)
        << report;
    EXPECT_NE(report.find("refinement kept: a measured neighbour"), std::string::npos) << report;
    EXPECT_NE(report.find("box2: step " + std::to_string(kept) + "\n"), std::string::npos) << report;
    // The pipeline evaluated from now on is the kept one: box2 called once per iteration.
    expect_kept_rows(p, g, w, h, kept, report);
    EXPECT_EQ(p.builds(), 1u);
  }
}

TEST(auto_pipeline, refinement_with_a_faulty_timer) {
  // A timer that returns a time that is not a number, infinite or negative: such a candidate
  // counts as infinitely slow. With every time faulty, the model's choice is kept; with the
  // faulty times on the steps above the model's, one of the others.
  const index_t w = 64, h = 256;
  const double faulty[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), -1e-3};
  for (double bad : faulty) {
    for (bool all : {true, false}) {
      std::vector<std::string> calls;
      stencil_graph g;
      auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
      refine_options o;
      o.max_evaluations = 8;
      o.repetitions = 1;
      index_t model_step = -1;
      o.timer = [&](const std::string& candidate, const std::function<double()>& run) {
        calls.push_back(candidate);
        if (model_step < 0) model_step = step_of(candidate);
        run();
        if (all || is_next_best(candidate) || step_of(candidate) > model_step) return bad;
        return 1e-3 * static_cast<double>(step_of(candidate));
      };
      p.set_refinement(o);
      EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
      const std::string report = p.last_report();
      ASSERT_GE(model_step, 2) << report;
      ASSERT_GE(calls.size(), 2u) << report;
      // With finite times below the model's step (a time proportional to the step), the
      // smallest step tried is the fastest.
      index_t kept = model_step;
      if (!all) {
        for (const std::string& c : calls) {
          if (!is_next_best(c)) kept = std::min(kept, step_of(c));
        }
      }
      EXPECT_LT(kept, all ? model_step + 1 : model_step) << report;
      expect_kept_rows(p, g, w, h, kept, report);
    }
  }
}

TEST(auto_pipeline, refinement_is_deterministic_and_bounded) {
  const index_t w = 64, h = 256;
  std::string reports[2];
  for (std::string& report : reports) {
    std::vector<std::string> calls;
    stencil_graph g;
    auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
    refine_options o;
    o.max_evaluations = 6;
    o.repetitions = 3;
    o.max_slowdown = 1.5;
    // Every other step than the model's is 3x slower: one repetition each (past max_slowdown),
    // and the model's choice is kept.
    index_t model_step = -1;
    o.timer = [&](const std::string& candidate, const std::function<double()>&) {
      calls.push_back(candidate);
      if (model_step < 0) model_step = step_of(candidate);
      return step_of(candidate) == model_step ? 1e-3 : 3e-3;
    };
    p.set_refinement(o);
    EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
    report = p.last_report();
    EXPECT_NE(report.find("refinement kept: the model's choice"), std::string::npos) << report;
    EXPECT_NE(report.find("the slowest 3.00x the model's choice"), std::string::npos) << report;
    // The model's choice 3 times; the neighbours (doubled, halved, the model's next-best: no
    // others on one thread) once, then the budget's 3 left on the step's line further up and
    // down (4 times, a quarter, 8 times the model's step), once each.
    ASSERT_GE(calls.size(), 6u) << report;
    EXPECT_EQ(calls.size(), 3u + 6u) << report;
    EXPECT_TRUE(is_next_best(calls[5])) << report;
    EXPECT_NE(report.find("6 candidates evaluated"), std::string::npos) << report;
  }
  EXPECT_EQ(reports[0], reports[1]);
}

TEST(auto_pipeline, refinement_crosses_a_plateau) {
  // As slow on 2 times the model's step as on it, twice as fast from 4 times: the walk goes on
  // across the equal neighbour and keeps 4 times the model's step.
  const index_t w = 64, h = 256;
  stencil_graph g;
  auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  refine_options o;
  o.max_evaluations = 8;
  o.repetitions = 1;
  index_t model_step = -1;
  std::vector<std::string> calls;
  o.timer = [&](const std::string& candidate, const std::function<double()>& run) {
    calls.push_back(candidate);
    run();
    if (model_step < 0) model_step = step_of(candidate);
    return step_of(candidate) >= 4 * model_step ? 0.5e-3 : 1e-3;
  };
  p.set_refinement(o);
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  const std::string report = p.last_report();
  ASSERT_LT(model_step, 32) << report;
  EXPECT_NE(report.find("refinement kept: a measured neighbour"), std::string::npos) << report;
  EXPECT_NE(report.find("box2: step " + std::to_string(4 * model_step) + "\n"), std::string::npos) << report;
  expect_kept_rows(p, g, w, h, 4 * model_step, report);
}

TEST(auto_pipeline, refinement_goes_on_past_a_slower_step) {
  // Faster at half the model's step, slower below it and at twice, twice as fast from 4 times the
  // model's step up: the walk goes down to half and stops there (no neighbour left, or a slower
  // one), then, with budget left, follows the step's line up past the slower twice, finds 4
  // times faster, walks on from there and keeps it (the smallest of the fastest steps).
  const index_t w = 64, h = 256;
  stencil_graph g;
  auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  refine_options o;
  o.max_evaluations = 8;
  o.repetitions = 1;
  index_t model_step = -1;
  std::vector<std::string> calls;
  o.timer = [&](const std::string& candidate, const std::function<double()>& run) {
    calls.push_back(candidate);
    run();
    if (model_step < 0) model_step = step_of(candidate);
    if (is_next_best(candidate)) return 10e-3;
    const index_t s = step_of(candidate);
    if (s >= 4 * model_step) return 0.5e-3;
    if (s == 2 * model_step) return 1.2e-3;
    if (s == model_step / 2) return 0.95e-3;
    return s < model_step ? 1.2e-3 : 1e-3;
  };
  p.set_refinement(o);
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  const std::string report = p.last_report();
  ASSERT_GE(model_step, 2) << report;
  ASSERT_LE(model_step, 16) << report;
  EXPECT_NE(report.find("8 candidates evaluated"), std::string::npos) << report;
  // The walk: doubled, halved, the next-best, then on from half; the line followed up after
  // that.
  const std::vector<index_t> order = steps_timed(calls);
  const auto first = [&](index_t s) { return std::find(order.begin(), order.end(), s) - order.begin(); };
  ASSERT_LT(first(4 * model_step), static_cast<std::ptrdiff_t>(order.size())) << report;
  EXPECT_LT(first(model_step / 2), first(4 * model_step)) << report;
  EXPECT_GE(first(4 * model_step), 3) << report;
  EXPECT_LT(first(4 * model_step), first(8 * model_step)) << report;
  EXPECT_NE(report.find("refinement kept: a measured neighbour"), std::string::npos) << report;
  EXPECT_NE(report.find("box2: step " + std::to_string(4 * model_step) + "\n", report.find("refinement kept")),
            std::string::npos)
      << report;
  expect_kept_rows(p, g, w, h, 4 * model_step, report);
}

TEST(auto_pipeline, refinement_times_again_a_neighbour_slower_by_a_little) {
  // Twice the model's step timed 5% slower the first time (the machine was busy then), as fast
  // after; 4 times twice as fast. The walk's neighbour is beyond min_gain but within the noise:
  // it and the current candidate are timed again, interleaved, and the walk goes on through it to
  // 4 times the model's step within a budget of 4.
  const index_t w = 64, h = 256;
  stencil_graph g;
  auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  refine_options o;
  o.max_evaluations = 4;
  o.repetitions = 1;
  index_t model_step = -1;
  int doubled_timings = 0;
  std::vector<std::string> calls;
  o.timer = [&](const std::string& candidate, const std::function<double()>& run) {
    calls.push_back(candidate);
    run();
    if (model_step < 0) model_step = step_of(candidate);
    if (is_next_best(candidate)) return 10e-3;
    const index_t s = step_of(candidate);
    if (s == 2 * model_step) return doubled_timings++ == 0 ? 1.05e-3 : 1e-3;
    if (s >= 4 * model_step) return 0.5e-3;
    return s < model_step ? 1.2e-3 : 1e-3;
  };
  p.set_refinement(o);
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  const std::string report = p.last_report();
  ASSERT_GE(model_step, 2) << report;
  EXPECT_NE(report.find("timed again (a neighbour slower by a little)"), std::string::npos) << report;
  // The model's choice, doubled, halved, the next-best; the model's choice and doubled again; then
  // 4 times the model's step, a neighbour of the doubled.
  ASSERT_GE(calls.size(), 7u) << report;
  EXPECT_EQ(step_of(calls[4]), model_step) << report;
  EXPECT_EQ(step_of(calls[5]), 2 * model_step) << report;
  EXPECT_EQ(step_of(calls[6]), 4 * model_step) << report;
  EXPECT_EQ(doubled_timings, 2) << report;
  EXPECT_NE(report.find("box2: step " + std::to_string(4 * model_step) + "\n", report.find("refinement kept")),
            std::string::npos)
      << report;
}

TEST(auto_pipeline, refinement_takes_the_smallest_steps_when_times_are_equal) {
  // Every candidate 1 ms, but the doubled step 1% faster (within min_gain and equal_time): the
  // walk crosses the plateau, and of the equal candidates the smallest step is kept, half the
  // model's.
  const index_t w = 64, h = 256;
  stencil_graph g;
  auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  refine_options o;
  o.max_evaluations = 4;
  o.repetitions = 1;
  index_t model_step = -1;
  o.timer = [&](const std::string& candidate, const std::function<double()>&) {
    if (model_step < 0) model_step = step_of(candidate);
    return step_of(candidate) == 2 * model_step ? 0.99e-3 : 1e-3;
  };
  p.set_refinement(o);
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  const std::string report = p.last_report();
  ASSERT_GE(model_step, 2) << report;
  EXPECT_NE(report.find("4 candidates evaluated"), std::string::npos) << report;
  EXPECT_NE(report.find("box2: step " + std::to_string(model_step / 2) + "\n"), std::string::npos) << report;
  expect_kept_rows(p, g, w, h, model_step / 2, report);
}

TEST(auto_pipeline, refinement_tries_the_models_next_best_candidate) {
  // The model's next-best candidate (a loop over another dim, or no loop) twice as fast as every
  // step of the model's loop: kept, and the pipeline computes what the model's does.
  const index_t w = 64, h = 256;
  stencil_graph g;
  auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  refine_options o;
  o.max_evaluations = 4;
  o.repetitions = 1;
  std::vector<std::string> calls;
  o.timer = [&](const std::string& candidate, const std::function<double()>& run) {
    calls.push_back(candidate);
    run();
    return is_next_best(candidate) ? 0.5e-3 : 1e-3;
  };
  p.set_refinement(o);
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  const std::string report = p.last_report();
  // The model's choice, its step doubled and halved, then the next-best.
  ASSERT_GE(calls.size(), 4u) << report;
  EXPECT_FALSE(is_next_best(calls[0])) << report;
  EXPECT_TRUE(is_next_best(calls[3])) << report;
  const std::size_t kept = report.find("refinement kept: a measured neighbour");
  ASSERT_NE(kept, std::string::npos) << report;
  // The kept candidate (the line after) is the next-best or a step of its loop.
  EXPECT_TRUE(is_next_best(report.substr(report.find('\n', kept)))) << report;
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  EXPECT_EQ(p.builds(), 1u);
}

TEST(auto_pipeline, refinement_of_a_tile_walks_its_strips) {
  // Rows of 1024 floats on a machine with an L2 of 8 KiB: the model takes a tile (strips of
  // columns, rows inside, the intermediates stored at the strip). The walk tries the inner loop's
  // step and the strips doubled and halved (no next-best candidate for a tile), every candidate
  // computes the reference, and a table fastest at other strips keeps those: the kept pipeline
  // calls box2 once per row block of every strip.
  const index_t w = 1024, h = 1024;
  index_t model_strip = -1, model_step = -1;
  {
    stencil_graph g;
    const auto_pipeline unrefined(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
    ASSERT_EQ(mismatches(run(unrefined, w, h), reference(w, h)), 0u);
    const std::string report = unrefined.last_report();
    const std::size_t inside = report.find("inside a loop over dim 0 (x) in steps of ");
    ASSERT_NE(inside, std::string::npos) << report;
    model_strip = std::stoll(report.substr(inside + 41));
    model_step = std::stoll(report.substr(report.find("in steps of ") + 12));
    ASSERT_GE(model_strip, 32) << report;
    ASSERT_LT(model_strip, w) << report;
  }
  // Halved if that is still a strip of at least 32 columns, else doubled.
  const index_t target = model_strip / 2 >= 32 ? model_strip / 2 : model_strip * 2;
  auto strip_of = [](const std::string& candidate) -> index_t {
    const std::size_t at = candidate.find("strips of ");
    return at == std::string::npos ? -1 : std::stoll(candidate.substr(at + 10));
  };
  stencil_graph g;
  auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  refine_options o;
  o.max_evaluations = 4;
  o.repetitions = 1;
  std::vector<std::string> calls;
  o.timer = [&](const std::string& candidate, const std::function<double()>& run) {
    calls.push_back(candidate);
    run();
    const index_t strip = strip_of(candidate);
    return strip == target && step_of(candidate) == model_step ? 0.5e-3 : 1e-3;
  };
  p.set_refinement(o);
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  const std::string report = p.last_report();
  ASSERT_NE(report.find("(a tile)"), std::string::npos) << report;
  ASSERT_GE(calls.size(), 2u) << report;
  EXPECT_EQ(strip_of(calls[0]), model_strip) << report;
  bool tried_target = false;
  for (const std::string& c : calls) {
    EXPECT_FALSE(is_next_best(c)) << report;
    // Every candidate keeps the tile: strips of 32 columns or more.
    EXPECT_GE(strip_of(c), 32) << report;
    tried_target = tried_target || (strip_of(c) == target && step_of(c) == model_step);
  }
  EXPECT_TRUE(tried_target) << report;
  const std::string kept = "box2: step " + std::to_string(model_step) + ", strips of " + std::to_string(target) + "\n";
  EXPECT_NE(report.find("refinement kept: a measured neighbour"), std::string::npos) << report;
  EXPECT_NE(report.find("  " + kept, report.find("refinement kept")), std::string::npos) << report;
  g.box2_calls = 0;
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  EXPECT_EQ(g.box2_calls.load(), static_cast<int>(((w + target - 1) / target) * ((h + model_step - 1) / model_step)))
      << report;
}

TEST(auto_pipeline, refinement_tries_pipelined_and_data_parallel) {
  // On a pool of 2 threads the model takes a parallel loop over rows, pipelined or data-parallel
  // (intermediates stored in the loop). The walk tries the other form of the same loop; a table
  // where only that form is fast keeps it, the report names it, and the kept pipeline computes
  // the reference (on the pool), as does every candidate.
  const index_t w = 64, h = 256;
  stencil_graph g;
  machine m = small_machine();
  m.threads = 2;
  auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), m);
  refine_options o;
  o.max_evaluations = 8;
  o.repetitions = 1;
  std::vector<std::string> calls;
  bool model_data_parallel = false;
  o.timer = [&](const std::string& candidate, const std::function<double()>& run) {
    if (calls.empty()) model_data_parallel = candidate.find("data-parallel") != std::string::npos;
    calls.push_back(candidate);
    run();
    const bool data_parallel = candidate.find("data-parallel") != std::string::npos;
    return data_parallel != model_data_parallel && candidate.find(", parallel") != std::string::npos ? 0.5e-3 : 1e-3;
  };
  p.set_refinement(o);
  const buffer<float, 2> expected = reference(w, h);
  const buffer<float, 2> out = run_on_a_pool(p, w, h);
  EXPECT_EQ(mismatches(out, expected), 0u);
  const std::string report = p.last_report();
  ASSERT_FALSE(calls.empty()) << report;
  ASSERT_NE(calls[0].find(", parallel"), std::string::npos) << report;
  const std::size_t kept = report.find("refinement kept: a measured neighbour");
  ASSERT_NE(kept, std::string::npos) << report;
  const std::string kept_line = report.substr(report.find('\n', kept) + 1);
  EXPECT_NE(kept_line.find(", parallel"), std::string::npos) << report;
  EXPECT_EQ(kept_line.substr(0, kept_line.find('\n')).find("data-parallel") != std::string::npos, !model_data_parallel)
      << report;
  EXPECT_EQ(mismatches(run_on_a_pool(p, w, h), expected), 0u);
  EXPECT_EQ(p.builds(), 1u);
}

TEST(auto_pipeline, refinement_counts_the_synchronisation_of_smaller_parallel_steps) {
  // A parallel loop on a pool of 2 threads, every parallel candidate timed alike (serial ones and
  // the next-best twice as slow). Where a candidate takes 100 ms, the synchronisation a smaller
  // step adds (cost_model::parallel_iteration_ns per iteration) is lost in equal_time and a
  // smaller step than the model's is kept (memory when time is equal); where it takes 50 us, a
  // smaller step adds more than equal_time of it and the model's step is kept.
  const index_t w = 64, h = 256;
  for (double t : {100e-3, 50e-6}) {
    stencil_graph g;
    machine m = small_machine();
    m.threads = 2;
    auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), m);
    refine_options o;
    o.max_evaluations = 6;
    o.repetitions = 1;
    index_t model_step = -1;
    o.timer = [&](const std::string& candidate, const std::function<double()>&) {
      if (model_step < 0) model_step = step_of(candidate);
      const bool parallel = candidate.find(", parallel") != std::string::npos;
      return parallel && !is_next_best(candidate) ? t : 2 * t;
    };
    p.set_refinement(o);
    const buffer<float, 2> out = run_on_a_pool(p, w, h);
    EXPECT_EQ(mismatches(out, reference(w, h)), 0u);
    const std::string report = p.last_report();
    ASSERT_GE(model_step, 2) << report;
    ASSERT_LE(model_step, 32) << report;
    const std::size_t kept = report.find("refinement kept: ");
    ASSERT_NE(kept, std::string::npos) << report;
    const std::string kept_line = report.substr(report.find('\n', kept) + 1);
    EXPECT_NE(kept_line.find(", parallel"), std::string::npos) << report;
    EXPECT_FALSE(is_next_best(kept_line.substr(0, kept_line.find('\n')))) << report;
    if (t > 1e-3) {
      EXPECT_LT(step_of(kept_line), model_step) << report;
    } else {
      EXPECT_EQ(step_of(kept_line), model_step) << report;
    }
  }
}

TEST(auto_pipeline, refinement_compares_parallel_steps_round_by_round) {
  // A parallel loop on a pool of 2 threads, the model's step and larger ones timed alike (serial
  // candidates and the next-best twice as slow), 100 ms per evaluation (the synchronisation a
  // smaller step adds is lost in equal_time). The parallel finalists are timed again in 3 times
  // `repetitions` rounds. In the first case the load changes from round to round: the model's
  // step takes 90, 90, then 100 ms, the smaller steps 96, 96, 106, 106, 100 and 100: at the
  // medians (100 ms each) they are equal, but each is beyond equal_time of the model's step in
  // the same round in 4 of the 6 rounds, and the model's step is kept. In the second the smaller
  // steps are 4% slower and 3% faster in turn (within equal_time in every round): the smallest
  // is kept, memory when time is equal.
  const index_t w = 64, h = 256;
  for (bool often_beyond : {true, false}) {
    stencil_graph g;
    machine m = small_machine();
    m.threads = 2;
    auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), m);
    refine_options o;
    o.max_evaluations = 6;
    o.repetitions = 2;
    index_t model_step = -1;
    std::string model;
    std::map<std::string, int> timings;
    int rounds = 0;
    o.timer = [&](const std::string& candidate, const std::function<double()>&) {
      if (model_step < 0) {
        model_step = step_of(candidate);
        model = candidate;
      }
      const int n = timings[candidate]++;
      // The model's choice (the fastest, the first measured of the equal ones) is timed 2 times,
      // then once in each round of the end (round n - 2).
      rounds += candidate == model && n >= 2;
      const bool parallel = candidate.find(", parallel") != std::string::npos;
      if (!parallel || is_next_best(candidate)) return 200e-3;
      if (candidate == model && often_beyond && n >= 2 && n < 4) return 90e-3;
      if (step_of(candidate) >= model_step) return 100e-3;
      if (often_beyond) return n < 2 ? 104e-3 : n < 4 ? 96e-3 : n < 6 ? 106e-3 : 100e-3;
      return n % 2 == 0 ? 104e-3 : 97e-3;
    };
    p.set_refinement(o);
    const buffer<float, 2> out = run_on_a_pool(p, w, h);
    EXPECT_EQ(mismatches(out, reference(w, h)), 0u);
    const std::string report = p.last_report();
    ASSERT_GE(model_step, 2) << report;
    ASSERT_NE(model.find(", parallel"), std::string::npos) << report;
    EXPECT_NE(report.find("timed again, interleaved, 6 rounds"), std::string::npos) << report;
    EXPECT_EQ(rounds, 6) << report;
    const std::size_t kept = report.find("refinement kept: ");
    ASSERT_NE(kept, std::string::npos) << report;
    const std::string kept_line = report.substr(report.find('\n', kept) + 1);
    EXPECT_NE(kept_line.find(", parallel"), std::string::npos) << report;
    if (often_beyond) {
      EXPECT_NE(report.find("beyond equal_time of the fastest in 4 of 6 rounds (more than half), not kept"),
                std::string::npos)
          << report;
      EXPECT_EQ(step_of(kept_line), model_step) << report;
    } else {
      EXPECT_EQ(report.find("beyond equal_time of the fastest in "), std::string::npos) << report;
      EXPECT_LT(step_of(kept_line), model_step) << report;
    }
  }
}

TEST(auto_pipeline, refinement_times_the_smaller_steps_again) {
  // Every candidate 1 ms, but the first timing of half the model's step 15% slower (the machine
  // was busy then): the walk's times alone keep the model's step; timed again, interleaved with
  // the fastest, half the model's step is as fast, and is kept.
  const index_t w = 64, h = 256;
  stencil_graph g;
  auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  refine_options o;
  o.max_evaluations = 3;
  o.repetitions = 1;
  index_t model_step = -1;
  int half_timings = 0;
  std::vector<std::string> calls;
  o.timer = [&](const std::string& candidate, const std::function<double()>&) {
    calls.push_back(candidate);
    if (model_step < 0) model_step = step_of(candidate);
    if (step_of(candidate) == model_step / 2 && half_timings++ == 0) return 1.15e-3;
    return 1e-3;
  };
  p.set_refinement(o);
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  const std::string report = p.last_report();
  ASSERT_GE(model_step, 2) << report;
  EXPECT_NE(report.find("3 candidates evaluated"), std::string::npos) << report;
  EXPECT_NE(report.find("timed again, interleaved, 1 rounds"), std::string::npos) << report;
  EXPECT_EQ(half_timings, 2) << report;
  // The model's choice, 3 candidates, then the fastest (the model's choice, the first measured of
  // the equally fast) and the halved step again.
  ASSERT_EQ(calls.size(), 6u) << report;
  EXPECT_EQ(step_of(calls[4]), model_step) << report;
  EXPECT_EQ(step_of(calls[5]), model_step / 2) << report;
  EXPECT_NE(report.find("box2: step " + std::to_string(model_step / 2) + "\n"), std::string::npos) << report;
  expect_kept_rows(p, g, w, h, model_step / 2, report);
}

// The stencil refined under a table where the time falls from half the model's step to 8 times
// it, 16 times and beyond slower: 4 times is timed 6% slower the first time (the machine was
// busy), as fast as 8 times after; half the model's step is timed 18% slower, or, where
// `half_fast_later`, as fast as 8 times after its first timing.
struct falling_times_refinement {
  static constexpr index_t w = 64, h = 256;
  stencil_graph g;
  auto_pipeline p;
  index_t model_step = -1;
  int quadruple_timings = 0, half_timings = 0;
  std::string report;

  explicit falling_times_refinement(bool half_fast_later)
      : p(g.ctx, {g.in}, {g.out}, build_options(), small_machine()) {
    refine_options o;
    o.max_evaluations = 8;
    o.repetitions = 1;
    o.timer = [this, half_fast_later](const std::string& candidate, const std::function<double()>&) {
      if (model_step < 0) model_step = step_of(candidate);
      if (is_next_best(candidate)) return 10e-3;
      const index_t s = step_of(candidate);
      if (s == 4 * model_step) return quadruple_timings++ == 0 ? 1.06e-3 : 1e-3;
      if (s == 8 * model_step) return 1e-3;
      if (s > 8 * model_step) return 1.1e-3;
      if (s == model_step / 2 && half_fast_later) return half_timings++ == 0 ? 1.18e-3 : 1e-3;
      return s == 2 * model_step ? 1.12e-3 : s == model_step ? 1.15e-3 : 1.18e-3;
    };
    p.set_refinement(o);
    EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
    report = p.last_report();
  }

  void expect_kept(index_t step) {
    EXPECT_NE(report.find("box2: step " + std::to_string(step) + "\n", report.find("refinement kept")),
              std::string::npos)
        << report;
    expect_kept_rows(p, g, w, h, step, report);
  }
};

TEST(auto_pipeline, refinement_times_again_the_fastest_of_the_smaller_steps) {
  // Of the smaller steps than the fastest (8 times the model's), the fastest three besides the
  // model's choice are timed again (and the model's choice), in one round and then 2 more (4
  // times the model's step, chosen after the first, would multiply its memory), and 4 times the
  // model's step is kept.
  falling_times_refinement r(/*half_fast_later=*/false);
  ASSERT_GE(r.model_step, 1) << r.report;
  ASSERT_LE(r.model_step, 16) << r.report;
  EXPECT_EQ(r.quadruple_timings, 1 + 3) << r.report;
  r.expect_kept(4 * r.model_step);
}

TEST(auto_pipeline, refinement_times_again_smaller_steps_besides_the_models_choice) {
  // Half the model's step, timed 18% slower by the walk (slower than the model's choice, within
  // the band of those timed again), is as fast as the fastest after. The model's choice is timed
  // again and takes none of the three places of the others (4 and 2 times its step, and half), so
  // half its step is timed again too, and kept: the smallest step as fast as the fastest.
  falling_times_refinement r(/*half_fast_later=*/true);
  ASSERT_GE(r.model_step, 2) << r.report;
  ASSERT_LE(r.model_step, 16) << r.report;
  EXPECT_EQ(r.half_timings, 2) << r.report;
  r.expect_kept(r.model_step / 2);
}

TEST(auto_pipeline, refinement_times_again_in_more_rounds_before_multiplying_the_memory) {
  // The time falls from the model's step to 8 times it, 16 times and more slower, smaller steps
  // slower. The finalists, timed again, are 8, 4 and 2 times the model's step and the model's
  // choice, which is timed 30% slower in the first of those rounds and as fast as 8 times its step
  // after. After one round, 8 times its step would be kept: it would multiply the model's memory,
  // so the finalists are timed in 2 more rounds, and the model's choice, as fast at the median, is
  // kept.
  const index_t w = 64, h = 256;
  stencil_graph g;
  auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  refine_options o;
  o.max_evaluations = 8;
  o.repetitions = 1;
  index_t model_step = -1;
  int model_timings = 0;
  o.timer = [&](const std::string& candidate, const std::function<double()>&) {
    if (model_step < 0) model_step = step_of(candidate);
    if (is_next_best(candidate)) return 10e-3;
    const index_t s = step_of(candidate);
    if (s == model_step) {
      const int i = model_timings++;
      return i == 0 ? 1.1e-3 : i == 1 ? 1.3e-3 : 1e-3;
    }
    if (s == 2 * model_step) return 1.08e-3;
    if (s == 4 * model_step) return 1.06e-3;
    if (s == 8 * model_step) return 1e-3;
    return s > 8 * model_step ? 1.1e-3 : 1.5e-3;
  };
  p.set_refinement(o);
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  const std::string report = p.last_report();
  ASSERT_GE(model_step, 1) << report;
  ASSERT_LE(model_step, 16) << report;
  EXPECT_EQ(model_timings, 1 + 3) << report;
  EXPECT_NE(report.find("timed again, interleaved, 2 rounds more (the one kept after 1 takes 8 times the steps of the "
                        "model's choice)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("refinement kept: the model's choice"), std::string::npos) << report;
  expect_kept_rows(p, g, w, h, model_step, report);
}

TEST(auto_pipeline, refinement_times_the_models_choice_again) {
  // The model's step timed 30% slower the first time (the machine was busy then), as fast as
  // twice it after; every other candidate slower. The walk goes to twice the model's step, and
  // the model's choice, beyond the band of the smaller steps timed again, is timed again with
  // it, interleaved, all the same: equal, the model's smaller step is kept.
  const index_t w = 64, h = 256;
  stencil_graph g;
  auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  refine_options o;
  o.max_evaluations = 3;
  o.repetitions = 1;
  index_t model_step = -1;
  int model_timings = 0;
  std::vector<std::string> calls;
  o.timer = [&](const std::string& candidate, const std::function<double()>& run) {
    calls.push_back(candidate);
    run();
    if (model_step < 0) model_step = step_of(candidate);
    if (is_next_best(candidate)) return 10e-3;
    const index_t s = step_of(candidate);
    if (s == model_step) return model_timings++ == 0 ? 1.3e-3 : 1e-3;
    return s == 2 * model_step ? 1e-3 : 1.5e-3;
  };
  p.set_refinement(o);
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  const std::string report = p.last_report();
  ASSERT_GE(model_step, 2) << report;
  ASSERT_LE(model_step, 16) << report;
  EXPECT_NE(report.find("3 candidates evaluated"), std::string::npos) << report;
  EXPECT_EQ(model_timings, 2) << report;
  // The model's choice, 3 candidates, then the fastest (twice the model's step) and the model's
  // choice again.
  ASSERT_EQ(calls.size(), 6u) << report;
  EXPECT_EQ(step_of(calls[4]), 2 * model_step) << report;
  EXPECT_EQ(step_of(calls[5]), model_step) << report;
  EXPECT_NE(report.find("refinement kept: the model's choice"), std::string::npos) << report;
  expect_kept_rows(p, g, w, h, model_step, report);
}

TEST(auto_pipeline, refinement_goes_down_a_plateau_before_going_further_up) {
  // The elementwise chain of 8 on the development machine: twice and 4 times the model's step 7%
  // faster than it, larger steps as fast as those (within equal_time: a plateau), half and a
  // quarter of the model's step slower, an eighth as fast as the fastest. The walk climbs the
  // plateau; the budget left goes down the step's line first (the larger steps are as fast and
  // only larger), reaches an eighth of the model's step and keeps it. Following the lines up
  // and down in turn, the budget runs out on the plateau before it gets there.
  const index_t w = 16, h = 2048;
  stencil_graph g;
  auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  refine_options o;
  o.max_evaluations = 7;
  o.repetitions = 1;
  // The steps down the line: the model's halved, halved again, and again.
  index_t model_step = -1, half = -1, quarter = -1, eighth = -1;
  std::vector<std::string> calls;
  o.timer = [&](const std::string& candidate, const std::function<double()>& run) {
    calls.push_back(candidate);
    run();
    if (model_step < 0) {
      model_step = step_of(candidate);
      half = model_step / 2;
      quarter = half / 2;
      eighth = quarter / 2;
    }
    if (is_next_best(candidate)) return 10e-3;
    const index_t s = step_of(candidate);
    if (s == model_step) return 1e-3;
    if (s == eighth) return 0.935e-3;
    if (s == half) return 1.16e-3;
    if (s < model_step) return 1.25e-3;
    if (s == 2 * model_step) return 0.93e-3;
    if (s == 4 * model_step) return 0.94e-3;
    return s == 8 * model_step ? 0.96e-3 : 0.95e-3;
  };
  p.set_refinement(o);
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  const std::string report = p.last_report();
  ASSERT_GE(eighth, 1) << report;
  ASSERT_LE(model_step, 32) << report;
  EXPECT_NE(report.find("7 candidates evaluated"), std::string::npos) << report;
  // The walk: doubled, halved, the next-best, 4 and 8 times the model's step; then down the line
  // (a quarter, an eighth), before 16 times the model's step.
  const std::vector<index_t> order = steps_timed(calls);
  const auto first = [&](index_t s) { return std::find(order.begin(), order.end(), s) - order.begin(); };
  ASSERT_LT(first(eighth), static_cast<std::ptrdiff_t>(order.size())) << report;
  EXPECT_LT(first(quarter), first(eighth)) << report;
  EXPECT_LT(first(eighth), first(16 * model_step)) << report;
  EXPECT_NE(report.find("box2: step " + std::to_string(eighth) + "\n", report.find("refinement kept")),
            std::string::npos)
      << report;
  expect_kept_rows(p, g, w, h, eighth, report);
}

TEST(auto_pipeline, no_refinement_in_place) {
  // out = in * 2 + 1 computed in place (out is in's memory): evaluating it again for timing would
  // scale it again. The refinement does not run, the result is that of one evaluation.
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(float));
  auto mid = buffer_expr::make(ctx, "mid", 2, sizeof(float));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(float));
  std::vector<func> funcs;
  funcs.push_back(func::make(scale, {{in, {point(x), point(y)}}}, {{mid, {x, y}}}, {.name = "s1"}));
  funcs.push_back(func::make(scale, {{mid, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "s2"}));
  auto_pipeline p(ctx, {in}, {out}, build_options(), small_machine());
  refine_options o;
  o.max_evaluations = 4;
  int timed = 0;
  o.timer = [&](const std::string&, const std::function<double()>& run) {
    ++timed;
    return run();
  };
  p.set_refinement(o);
  const index_t w = 64, h = 256;
  buffer<float, 2> buf({w, h});
  buf.allocate();
  for (index_t j = 0; j < h; ++j) {
    for (index_t i = 0; i < w; ++i) buf(i, j) = static_cast<float>((i + j) % 5);
  }
  ASSERT_EQ(p.evaluate({&buf}, {&buf}), 0);
  EXPECT_EQ(timed, 0);
  const std::string report = p.last_report();
  ASSERT_NE(report.find("loop over"), std::string::npos) << report;
  EXPECT_NE(report.find("refinement: none, an output overlaps an input"), std::string::npos) << report;
  for (index_t j = 0; j < h; ++j) {
    for (index_t i = 0; i < w; ++i) ASSERT_EQ(buf(i, j), static_cast<float>((i + j) % 5) * 4 + 3) << i << ", " << j;
  }
}

TEST(auto_pipeline, no_refinement_by_default) {
  stencil_graph g;
  const auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  run(p, 64, 256);
  EXPECT_EQ(p.last_report().find("refinement"), std::string::npos) << p.last_report();
}

}  // namespace slinky
