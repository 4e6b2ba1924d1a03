// What the tests of the just-in-time entry share (auto_pipeline_test.cc, the refinement's in
// auto_pipeline_refine_test.cc and auto_pipeline_refine_choice_test.cc): a small machine, a
// stencil chain (a scale, two 3x3 box sums) that counts its box calls, its evaluation and
// reference, the reading of the refinement's candidate names, and the stencil refined under a
// table of timings (refined_stencil).
#ifndef SLINKY_SCHEDULER_TEST_AUTO_PIPELINE_TEST_UTIL_H
#define SLINKY_SCHEDULER_TEST_AUTO_PIPELINE_TEST_UTIL_H

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
#include "slinky/scheduler/test/schedule_test_util.h"

namespace slinky {
namespace auto_pipeline_test {

// A small machine, so that small test buffers exceed its caches and get loops (and, scaled down
// with them, every block comes fresh from the allocator).
inline machine small_machine() {
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
inline index_t scale(const buffer<const float>& in, const buffer<float>& out) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x, y) = in(x, y) * 2 + 1;
  }
  return 0;
}

// A 3x3 box sum (schedule_test's) that counts its calls with a non-empty output.
struct box3x3 {
  std::atomic<int>* calls;
  index_t operator()(const buffer<const float>& in, const buffer<float>& out) const {
    // Not the warm-up calls of a sliding loop (empty crops).
    if (out.dim(0).extent() > 0 && out.dim(1).extent() > 0) calls->fetch_add(1, std::memory_order_relaxed);
    return schedule_test::box3x3(in, out);
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

// The input of a w x h output: a border of 2, values from -8 to 8.
inline buffer<float, 2> stencil_input(index_t w, index_t h) {
  buffer<float, 2> in({w + 4, h + 4});
  in.translate(-2, -2);
  in.allocate();
  for (index_t y = -2; y < h + 2; ++y) {
    for (index_t x = -2; x < w + 2; ++x) in(x, y) = static_cast<float>((x * 7 + y * 13) % 17) - 8;
  }
  return in;
}

// The output for a w x h output, evaluated in ctx if given.
inline buffer<float, 2> run(const auto_pipeline& p, index_t w, index_t h, index_t* result = nullptr,
                            eval_context* ctx = nullptr) {
  buffer<float, 2> in = stencil_input(w, h), out({w, h});
  out.allocate();
  const index_t r = ctx ? p.evaluate({&in}, {&out}, *ctx) : p.evaluate({&in}, {&out});
  if (result) *result = r;
  EXPECT_EQ(r, 0);
  return out;
}

// run() in a context whose thread pool has one worker (two threads with the caller).
inline buffer<float, 2> run_on_a_pool(const auto_pipeline& p, index_t w, index_t h) {
  thread_pool_impl pool(1);
  eval_config config;
  config.thread_pool = &pool;
  eval_context with_pool;
  with_pool.config = &config;
  return run(p, w, h, nullptr, &with_pool);
}

// The output of the unscheduled pipeline.
inline buffer<float, 2> reference(index_t w, index_t h) {
  stencil_graph g;
  const pipeline p = build_pipeline(g.ctx, {g.in}, {g.out});
  buffer<float, 2> in = stencil_input(w, h), out({w, h});
  out.allocate();
  EXPECT_EQ(p.evaluate({&in}, {&out}), 0);
  return out;
}

// The number of elements of a and b that differ (all of them if the shapes differ).
inline std::size_t mismatches(const buffer<float, 2>& a, const buffer<float, 2>& b) {
  if (a.dim(0).extent() != b.dim(0).extent() || a.dim(1).extent() != b.dim(1).extent()) return a.elem_count() + 1;
  std::size_t wrong = 0;
  for (index_t y = 0; y < a.dim(1).extent(); ++y) {
    for (index_t x = 0; x < a.dim(0).extent(); ++x) wrong += a(x, y) != b(x, y);
  }
  return wrong;
}

// The step of the output's loop in a candidate's name ("box2: step 8" or "box2: step 8, parallel").
inline index_t step_of(const std::string& candidate) {
  const std::size_t at = candidate.find("step ");
  return at == std::string::npos ? -1 : std::stoll(candidate.substr(at + 5));
}

// Evaluates p again (the pipeline refinement kept) and expects the reference, with box2 called
// once per iteration of a loop of `step` rows.
inline void expect_kept_rows(const auto_pipeline& p, stencil_graph& g, index_t w, index_t h, index_t step,
                             const std::string& report) {
  g.box2_calls = 0;
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  EXPECT_EQ(g.box2_calls.load(), static_cast<int>((h + step - 1) / step)) << report;
}

// The model's next-best candidate in a candidate's name: a loop over another dim or no loop.
inline bool is_next_best(const std::string& candidate) {
  return candidate.find("over ") != std::string::npos || candidate.find("no loop") != std::string::npos;
}

// The steps of the candidates timed, in the order they were, the model's next-best ones left out.
inline std::vector<index_t> steps_timed(const std::vector<std::string>& calls) {
  std::vector<index_t> order;
  for (const std::string& c : calls) {
    if (!is_next_best(c)) order.push_back(step_of(c));
  }
  return order;
}

// What most refinement tests set up: the stencil chain just in time on the small machine (with
// `threads` 2, a parallel loop, evaluated on a pool of one worker), refined under an injected
// table of timings, its w x h output evaluated once and checked against the reference.
struct refined_stencil {
  // The time of a candidate, from its name and the model's step (the first candidate's: the
  // refinement times the model's choice first).
  using table_fn = std::function<double(const std::string& candidate, index_t model_step)>;

  index_t w, h;
  int threads;
  stencil_graph g;
  auto_pipeline p;
  index_t model_step = -1;
  // The candidates timed, in order.
  std::vector<std::string> calls;
  std::string report;

  explicit refined_stencil(index_t w = 64, index_t h = 256, int threads = 1)
      : w(w), h(h), threads(threads), p(g.ctx, {g.in}, {g.out}, build_options(), machine_with(threads)) {}

  // Refines with `o` (its timer replaced by `table`'s; every candidate timed is also run, so that
  // a wrong candidate would show in the evaluations after), evaluates and checks the output, and
  // keeps the report.
  void refine(refine_options o, const table_fn& table) {
    o.timer = [this, table](const std::string& candidate, const std::function<double()>& run) {
      calls.push_back(candidate);
      run();
      if (model_step < 0) model_step = step_of(candidate);
      return table(candidate, model_step);
    };
    p.set_refinement(o);
    const buffer<float, 2> out = threads > 1 ? run_on_a_pool(p, w, h) : run(p, w, h);
    EXPECT_EQ(mismatches(out, reference(w, h)), 0u);
    report = p.last_report();
  }
  // One timing per candidate, at most `evaluations` of them beyond the model's choice, the walk
  // alone (no choices for other prefetch windows first: auto_pipeline_refine_first_test.cc).
  void refine(int evaluations, const table_fn& table) {
    refine_options o;
    o.max_evaluations = evaluations;
    o.repetitions = 1;
    o.prefetch_windows.clear();
    refine(o, table);
  }

  // The line naming the candidate kept (after "refinement kept: ..."), empty if none.
  std::string kept_line() const {
    const std::size_t kept = report.find("refinement kept: ");
    if (kept == std::string::npos) return std::string();
    const std::size_t begin = report.find('\n', kept) + 1;
    return report.substr(begin, report.find('\n', begin) - begin);
  }
  // Expects `step` rows (a serial loop) kept: named after "refinement kept", and box2 called once
  // per row block when evaluated again.
  void expect_kept(index_t step) {
    EXPECT_NE(report.find("box2: step " + std::to_string(step) + "\n", report.find("refinement kept")),
              std::string::npos)
        << report;
    expect_kept_rows(p, g, w, h, step, report);
  }

private:
  static machine machine_with(int threads) {
    machine m = small_machine();
    m.threads = threads;
    return m;
  }
};

}  // namespace auto_pipeline_test
}  // namespace slinky

#endif  // SLINKY_SCHEDULER_TEST_AUTO_PIPELINE_TEST_UTIL_H
