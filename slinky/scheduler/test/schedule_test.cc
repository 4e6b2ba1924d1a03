// The scheduler: auto-scheduled pipelines compute what the unscheduled ones compute, the chosen
// steps keep an iteration's working set within the cache budget of the machine described, funcs
// the client scheduled are left alone, and the schedule is deterministic.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/schedule.h"

namespace slinky {

namespace {

// prefix followed by i (built by appending: GCC 12 warns, falsely, on "literal" + std::string).
std::string numbered(const char* prefix, index_t i) {
  std::string s = prefix;
  s += std::to_string(i);
  return s;
}

// A small machine, so that small test buffers exceed its caches.
machine small_machine(index_t l2 = 32 * 1024) {
  machine m;
  m.l1_bytes = 4 * 1024;
  m.l2_bytes = l2;
  m.l3_bytes = 8 * l2;
  m.threads = 1;
  m.call_overhead_ns = 30;
  // Slow memory for its calls (the figures the tests were first written with), whatever the
  // defaults are: the tests check the decisions of this machine's model.
  const double ns_per_byte[4] = {0.02, 0.03, 0.06, 0.1};
  std::copy(std::begin(ns_per_byte), std::end(ns_per_byte), std::begin(m.ns_per_byte));
  return m;
}

// out = in * a + b, over out's crop (element by element: buffers may be folded).
struct scale_offset {
  float a, b;
  index_t operator()(const buffer<const float>& in, const buffer<float>& out) const {
    for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
      for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x, y) = in(x, y) * a + b;
    }
    return 0;
  }
};

struct scale_offset_1d {
  float a, b;
  index_t operator()(const buffer<const float>& in, const buffer<float>& out) const {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x) = in(x)*a + b;
    return 0;
  }
};

index_t box3x3(const buffer<const float>& in, const buffer<float>& out) {
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

// A graph: its buffers and funcs, made fresh for each schedule.
struct graph {
  node_context ctx;
  std::vector<buffer_expr_ptr> bufs;
  std::vector<func> funcs;
  buffer_expr_ptr in, out;

  pipeline build() { return build_pipeline(ctx, {in}, {out}); }
};

// in -> b1 -> ... -> b(K-1) -> out, 1-D.
std::unique_ptr<graph> elementwise_chain(int k) {
  auto g = std::make_unique<graph>();
  var x(g->ctx, "x");
  g->in = buffer_expr::make(g->ctx, "in", 1, sizeof(float));
  buffer_expr_ptr prev = g->in;
  for (int i = 0; i < k; ++i) {
    buffer_expr_ptr next = i + 1 == k ? buffer_expr::make(g->ctx, "out", 1, sizeof(float))
                                      : buffer_expr::make(g->ctx, numbered("b", i + 1), 1, sizeof(float));
    g->funcs.push_back(func::make(scale_offset_1d{0.5f + 0.125f * (i % 4), 0.25f * (i % 3)}, {{prev, {point(x)}}},
                                  {{next, {x}}}, {.name = numbered("f", i)}));
    prev = next;
  }
  g->out = prev;
  return g;
}

// in -> e = in * 2 + 1 -> box -> [box ->] out; stages = 2 or 3.
std::unique_ptr<graph> stencil_chain(int stages) {
  auto g = std::make_unique<graph>();
  var x(g->ctx, "x"), y(g->ctx, "y");
  const box_expr pt = {point(x), point(y)};
  const box_expr nbhd = {bounds(x - 1, x + 1), bounds(y - 1, y + 1)};
  g->in = buffer_expr::make(g->ctx, "in", 2, sizeof(float));
  auto e = buffer_expr::make(g->ctx, "e", 2, sizeof(float));
  g->funcs.push_back(func::make(scale_offset{2, 1}, {{g->in, pt}}, {{e, {x, y}}}, {.name = "e"}));
  buffer_expr_ptr prev = e;
  for (int s = 1; s < stages; ++s) {
    auto b = buffer_expr::make(g->ctx, s + 1 == stages ? "out" : numbered("b", s), 2, sizeof(float));
    g->funcs.push_back(func::make(box3x3, {{prev, nbhd}}, {{b, {x, y}}}, {.name = numbered("box", s)}));
    prev = b;
  }
  g->out = prev;
  return g;
}

// in -> e = in * 2 -> total = sum of e (a reduction over every element, rank 0);
// in -> g = in + 1 -> h = g * 3; out = h + total.
std::unique_ptr<graph> reduction_chain() {
  auto g = std::make_unique<graph>();
  var x(g->ctx, "x"), y(g->ctx, "y");
  const box_expr pt = {point(x), point(y)};
  g->in = buffer_expr::make(g->ctx, "in", 2, sizeof(float));
  auto e = buffer_expr::make(g->ctx, "e", 2, sizeof(float));
  auto total = buffer_expr::make(g->ctx, "total", 0, sizeof(float));
  auto gb = buffer_expr::make(g->ctx, "g", 2, sizeof(float));
  auto hb = buffer_expr::make(g->ctx, "h", 2, sizeof(float));
  g->out = buffer_expr::make(g->ctx, "out", 2, sizeof(float));
  g->funcs.push_back(func::make(scale_offset{2, 0}, {{g->in, pt}}, {{e, {x, y}}}, {.name = "e"}));
  g->funcs.push_back(func::make(
      [](const buffer<const float>& e, const buffer<float>& t) -> index_t {
        float s = 0;
        for (index_t j = e.dim(1).min(); j <= e.dim(1).max(); ++j) {
          for (index_t i = e.dim(0).min(); i <= e.dim(0).max(); ++i) s += e(i, j);
        }
        t() = s;
        return 0;
      },
      {{e, {g->in->dim(0).bounds, g->in->dim(1).bounds}}}, {{total, {}}}, {.name = "total"}));
  g->funcs.push_back(func::make(scale_offset{1, 1}, {{g->in, pt}}, {{gb, {x, y}}}, {.name = "g"}));
  g->funcs.push_back(func::make(scale_offset{3, 0}, {{gb, pt}}, {{hb, {x, y}}}, {.name = "h"}));
  g->funcs.push_back(func::make(
      [](const buffer<const float>& h, const buffer<const float>& t, const buffer<float>& out) -> index_t {
        for (index_t j = out.dim(1).min(); j <= out.dim(1).max(); ++j) {
          for (index_t i = out.dim(0).min(); i <= out.dim(0).max(); ++i) out(i, j) = h(i, j) + t();
        }
        return 0;
      },
      {{hb, pt}, {total, {}}}, {{g->out, {x, y}}}, {.name = "out"}));
  return g;
}

// in -> e1 = in * 0.5 + 1 -> e2 = e1 * 3 -> partial(p) = sum of e2 over [p * chunk, p * chunk +
// chunk - 1] -> out(0) = sum of the partials (1-D, one element). Counts e1's calls.
struct partial_reduction {
  node_context ctx;
  buffer_expr_ptr in, out;
  std::vector<func> funcs;
  std::shared_ptr<std::atomic<int>> e1_calls = std::make_shared<std::atomic<int>>(0);

  explicit partial_reduction(index_t chunk) {
    var x(ctx, "x"), p(ctx, "p"), z(ctx, "z");
    in = buffer_expr::make(ctx, "in", 1, sizeof(float));
    auto e1 = buffer_expr::make(ctx, "e1", 1, sizeof(float));
    auto e2 = buffer_expr::make(ctx, "e2", 1, sizeof(float));
    auto partials = buffer_expr::make(ctx, "partials", 1, sizeof(float));
    out = buffer_expr::make(ctx, "out", 1, sizeof(float));
    std::shared_ptr<std::atomic<int>> calls = e1_calls;
    funcs.push_back(func::make(
        [calls](const buffer<const float>& i, const buffer<float>& o) {
          ++*calls;
          return scale_offset_1d{0.5f, 1}(i, o);
        },
        {{in, {point(x)}}}, {{e1, {x}}}, {.name = "e1"}));
    funcs.push_back(func::make(scale_offset_1d{3, 0}, {{e1, {point(x)}}}, {{e2, {x}}}, {.name = "e2"}));
    funcs.push_back(func::make(
        [chunk](const buffer<const float>& e, const buffer<float>& o) -> index_t {
          for (index_t q = o.dim(0).min(); q <= o.dim(0).max(); ++q) {
            float s = 0;
            for (index_t i = q * chunk; i < (q + 1) * chunk; ++i) s += e(i);
            o(q) = s;
          }
          return 0;
        },
        {{e2, {bounds(p * chunk, p * chunk + chunk - 1)}}}, {{partials, {p}}}, {.name = "partial"}));
    funcs.push_back(func::make(
        [](const buffer<const float>& ps, const buffer<float>& o) -> index_t {
          float s = 0;
          for (index_t q = ps.dim(0).min(); q <= ps.dim(0).max(); ++q) s += ps(q);
          o(o.dim(0).min()) = s;
          return 0;
        },
        {{partials, {bounds(in->dim(0).min() / chunk, in->dim(0).max() / chunk)}}}, {{out, {z}}}, {.name = "total"}));
  }

  float run(pipeline& pl, index_t n, eval_context* ctx = nullptr) {
    buffer<float, 1> i({n}), o({1});
    i.allocate();
    o.allocate();
    for (index_t x = 0; x < n; ++x) i(x) = static_cast<float>(x % 101) * 0.01f;
    const index_t r = ctx ? pl.evaluate({&i}, {&o}, *ctx) : pl.evaluate({&i}, {&o});
    EXPECT_EQ(r, 0);
    return o(0);
  }
};

// Runs a pipeline on an input of the given extents (with a border of `border` on each side) and
// returns the output.
buffer<float, 2> run2d(pipeline& p, index_t w, index_t h, int border, eval_context* ctx = nullptr) {
  buffer<float, 2> in({w + 2 * border, h + 2 * border}), out({w, h});
  in.translate(-border, -border);
  in.allocate();
  out.allocate();
  for (index_t y = -border; y < h + border; ++y) {
    for (index_t x = -border; x < w + border; ++x) in(x, y) = static_cast<float>((x * 7 + y * 13) % 17) - 8;
  }
  const index_t r = ctx ? p.evaluate({&in}, {&out}, *ctx) : p.evaluate({&in}, {&out});
  EXPECT_EQ(r, 0);
  return out;
}

buffer<float, 1> run1d(pipeline& p, index_t n, eval_context* ctx = nullptr) {
  buffer<float, 1> in({n}), out({n});
  in.allocate();
  out.allocate();
  for (index_t x = 0; x < n; ++x) in(x) = static_cast<float>(x % 101) * 0.01f;
  const index_t r = ctx ? p.evaluate({&in}, {&out}, *ctx) : p.evaluate({&in}, {&out});
  EXPECT_EQ(r, 0);
  return out;
}

// What the unscheduled stencil chain of `stages` computes on run2d's input of w x h.
buffer<float, 2> unscheduled_stencil(int stages, index_t w, index_t h) {
  auto plain = stencil_chain(stages);
  pipeline p = plain->build();
  return run2d(p, w, h, stages - 1);
}

// Builds g's pipeline and runs it (run2d) on a thread pool of 2 threads (one worker).
buffer<float, 2> run2d_on_two_threads(graph& g, index_t w, index_t h, int border) {
  thread_pool_impl pool(1);
  eval_config config;
  config.thread_pool = &pool;
  eval_context ctx;
  ctx.config = &config;
  pipeline p = g.build();
  return run2d(p, w, h, border, &ctx);
}

template <typename T, std::size_t N>
void expect_equal(const buffer<T, N>& a, const buffer<T, N>& b) {
  ASSERT_EQ(a.elem_count(), b.elem_count());
  const T* pa = a.base();
  const T* pb = b.base();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < a.elem_count(); ++i) wrong += pa[i] != pb[i];
  EXPECT_EQ(wrong, 0u);
}

const schedule_report::func_decision& decision(const schedule_report& r, const std::string& name) {
  for (const auto& d : r.funcs) {
    if (d.f->name() == name) return d;
  }
  static schedule_report::func_decision none;
  ADD_FAILURE() << "no decision for " << name;
  return none;
}

}  // namespace

class elementwise : public testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(k, elementwise, testing::Values(4, 8));

TEST_P(elementwise, computes_what_unscheduled_computes) {
  const int k = GetParam();
  const index_t n = 1 << 16;
  auto plain = elementwise_chain(k);
  pipeline p0 = plain->build();
  const buffer<float, 1> expected = run1d(p0, n);

  auto g = elementwise_chain(k);
  const machine m = small_machine();
  schedule_report r = schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {n}).add(g->out, {n}), m);
  ASSERT_EQ(r.loops.size(), 1u);
  ASSERT_TRUE(r.loops[0].looped) << r.to_string(&g->ctx);
  EXPECT_EQ(r.loops[0].dim, 0);
  EXPECT_FALSE(r.loops[0].parallel);
  ASSERT_EQ(g->funcs.back().loops().size(), 1u);
  EXPECT_EQ(as_constant(g->funcs.back().loops()[0].step), r.loops[0].step);
  // Every intermediate is computed in the loop, by default.
  for (int i = 0; i + 1 < k; ++i) {
    EXPECT_EQ(decision(r, numbered("f", i)).where, schedule_report::placement::in_loop);
    EXPECT_FALSE(g->funcs[i].compute_at().has_value());
  }
  // One iteration's working set: the input's and the output's chunks and the k - 1 intermediates'
  // in two blocks (each takes the memory of the one before its producer: docs/builder.md).
  const index_t step = r.loops[0].step;
  EXPECT_EQ(r.loops[0].working_set_bytes, 4 * step * 4);
  EXPECT_LE(r.loops[0].working_set_bytes, r.loops[0].budget_bytes);
  EXPECT_LE(r.loops[0].budget_bytes, m.l2_bytes);

  pipeline p = g->build();
  expect_equal(run1d(p, n), expected);
}

class stencil : public testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(stages, stencil, testing::Values(2, 3));

TEST_P(stencil, computes_what_unscheduled_computes) {
  const int stages = GetParam();
  const index_t w = 256, h = 200;
  auto plain = stencil_chain(stages);
  pipeline p0 = plain->build();
  const buffer<float, 2> expected = run2d(p0, w, h, stages - 1);

  auto g = stencil_chain(stages);
  schedule_report r =
      schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 2, h + 2}).add(g->out, {w, h}), small_machine());
  ASSERT_TRUE(r.loops[0].looped) << r.to_string(&g->ctx);
  // Strips of rows: the intermediates slide down the image.
  EXPECT_EQ(r.loops[0].dim, 1);
  EXPECT_EQ(decision(r, "e").where, schedule_report::placement::in_loop);
  EXPECT_EQ(decision(r, "e").moving_dim, 1);
  pipeline p = g->build();
  expect_equal(run2d(p, w, h, stages - 1), expected);
}

// The working set of one strip of the 2-stage stencil, computed here independently: the ring
// buffer of e (step + 2 rows of w + 2), the rows of the input e computes in one iteration (step
// rows of w + 2) and the output's strip (step rows of w), in floats.
index_t stencil2_working_set(index_t w, index_t step) { return 4 * ((step + 2) * (w + 2) + step * (w + 2) + step * w); }

TEST(stencil_steps, fit_the_cache_budget) {
  const index_t w = 1024, h = 1024;
  index_t previous_step = 0;
  for (index_t l2 : {64 * 1024, 256 * 1024, 1024 * 1024}) {
    auto g = stencil_chain(2);
    const machine m = small_machine(l2);
    schedule_report r =
        schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 2, h + 2}).add(g->out, {w, h}), m);
    ASSERT_TRUE(r.loops[0].looped) << r.to_string(&g->ctx);
    const index_t step = r.loops[0].step;
    SCOPED_TRACE(numbered("L2 ", l2) + numbered(", step ", step));
    EXPECT_EQ(r.loops[0].dim, 1);
    EXPECT_EQ(r.loops[0].working_set_bytes, stencil2_working_set(w, step));
    EXPECT_LE(stencil2_working_set(w, step), m.l2_bytes / 2);
    EXPECT_LE(stencil2_working_set(w, step), r.loops[0].budget_bytes);
    // Not much smaller than the budget allows: four times the step would not fit. (The step with
    // the least memory of those priced within cost_model::step_cost_tolerance of the cheapest: at
    // 1 MiB, strips of 16 rows rather than the budget's 32.)
    EXPECT_GT(stencil2_working_set(w, 4 * step), r.loops[0].budget_bytes);
    EXPECT_GE(step, previous_step);
    previous_step = step;
  }
  EXPECT_GT(previous_step, 1);
}

// The chain of 8 streams through 4 buffers per iteration (the input, the output, and the 7
// intermediates in two blocks of storage shared within the iteration).
TEST(elementwise_steps, fit_the_cache_budget) {
  const index_t n = 1 << 20;
  index_t previous_step = 0;
  for (index_t l2 : {64 * 1024, 256 * 1024, 2048 * 1024}) {
    auto g = elementwise_chain(8);
    const machine m = small_machine(l2);
    schedule_report r = schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {n}).add(g->out, {n}), m);
    ASSERT_TRUE(r.loops[0].looped) << r.to_string(&g->ctx);
    const index_t step = r.loops[0].step;
    SCOPED_TRACE(numbered("L2 ", l2) + numbered(", step ", step));
    EXPECT_EQ(r.loops[0].working_set_bytes, 4 * 4 * step);
    EXPECT_LE(4 * 4 * step, m.l2_bytes / 2);
    EXPECT_LE(4 * 4 * step, r.loops[0].budget_bytes);
    // Larger caches, larger steps (not always the budget's: at 2 MiB, chunks of 8192 rather than
    // 32768, for the least memory of the steps priced about alike).
    EXPECT_GE(step, previous_step);
    previous_step = step;
  }
  EXPECT_GE(previous_step, 4096);
}

TEST(schedule, small_pipelines_get_no_loop) {
  // Everything fits in L1: a loop would only add calls.
  auto g = elementwise_chain(4);
  const index_t n = 256;
  schedule_report r = schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {n}).add(g->out, {n}), small_machine());
  EXPECT_FALSE(r.loops[0].looped) << r.to_string(&g->ctx);
  for (const func& f : g->funcs) {
    EXPECT_TRUE(f.loops().empty());
    EXPECT_FALSE(f.compute_at().has_value());
  }
}

TEST(reduction, computes_what_unscheduled_computes) {
  const index_t w = 256, h = 256;
  auto plain = reduction_chain();
  pipeline p0 = plain->build();
  const buffer<float, 2> expected = run2d(p0, w, h, 0);

  auto g = reduction_chain();
  schedule_report r =
      schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w, h}).add(g->out, {w, h}), small_machine());
  ASSERT_TRUE(r.loops[0].looped) << r.to_string(&g->ctx);
  // The reduction reads all of e in every iteration: it and e are computed once, at the root.
  EXPECT_EQ(decision(r, "total").where, schedule_report::placement::root);
  EXPECT_EQ(decision(r, "e").where, schedule_report::placement::root);
  EXPECT_EQ(decision(r, "g").where, schedule_report::placement::in_loop);
  EXPECT_EQ(decision(r, "h").where, schedule_report::placement::in_loop);
  EXPECT_TRUE(g->funcs[1].compute_at().has_value() && g->funcs[1].compute_at()->root());
  pipeline p = g->build();
  expect_equal(run2d(p, w, h, 0), expected);
}

TEST(reduction, partial_reduction_gets_a_loop_of_its_own) {
  // The output is one element: no loop over it. The partial reduction, at the root, heads the
  // funcs feeding only it and gets a loop over its partials, computing the chain chunk by chunk.
  const index_t chunk = 256, n = 512 * 1024;
  partial_reduction plain(chunk);
  pipeline p0 = build_pipeline(plain.ctx, {plain.in}, {plain.out});
  const float expected = plain.run(p0, n);
  EXPECT_EQ(*plain.e1_calls, 1);

  for (int threads : {1, 2}) {
    partial_reduction g(chunk);
    // An L2 of 256 KiB: iterations of tens of microseconds, which pay for their hand-off to a
    // worker (with 32 KiB, 5 partials per iteration took 1.7 us, and no parallel loop paid).
    machine m = small_machine(256 * 1024);
    m.threads = threads;
    schedule_report r = schedule({g.in}, {g.out}, schedule_shapes().add(g.in, {n}).add(g.out, {1}), m);
    const std::string text = r.to_string(&g.ctx);
    ASSERT_EQ(r.loops.size(), 2u) << text;
    EXPECT_FALSE(r.loops[0].looped) << text;
    EXPECT_TRUE(r.loops[0].produces_output);
    const schedule_report::loop_decision& l = r.loops[1];
    ASSERT_TRUE(l.looped) << text;
    EXPECT_FALSE(l.produces_output);
    EXPECT_EQ(l.f, &g.funcs[2]);
    EXPECT_EQ(l.parallel, threads > 1) << text;
    EXPECT_GE(l.iterations, 2) << text;
    EXPECT_LE(l.working_set_bytes, l.budget_bytes) << text;
    EXPECT_NE(text.find("loop of partial (at the root"), std::string::npos) << text;
    EXPECT_TRUE(g.funcs[3].loops().empty());
    ASSERT_EQ(g.funcs[2].loops().size(), 1u);
    EXPECT_EQ(as_constant(g.funcs[2].loops()[0].step), l.step);
    EXPECT_EQ(decision(r, "partial").where, schedule_report::placement::root);
    EXPECT_EQ(decision(r, "e1").where, schedule_report::placement::in_loop);
    EXPECT_EQ(decision(r, "e2").where, schedule_report::placement::in_loop);
    EXPECT_EQ(decision(r, "e2").elements_per_iteration, l.step * chunk) << text;
    for (int i : {0, 1}) EXPECT_FALSE(g.funcs[i].compute_at().has_value());

    pipeline p = build_pipeline(g.ctx, {g.in}, {g.out});
    thread_pool_impl pool(1);
    eval_config config;
    config.thread_pool = &pool;
    eval_context ctx;
    ctx.config = &config;
    EXPECT_EQ(g.run(p, n, threads > 1 ? &ctx : nullptr), expected);
    // The same sums in the same order, one call of e1 per iteration.
    EXPECT_EQ(*g.e1_calls, l.iterations);
  }
}

TEST(reduction, pyramid_of_partial_reductions) {
  // level k(p) = level k-1(2p) + level k-1(2p + 1), down to one element: no loop over the output;
  // the level below it heads the others (scaled copies of each other along its loop), whose loop
  // of 2 iterations does not pay. The schedule is what the unscheduled pipeline computes.
  const int levels = 14;
  const index_t n = index_t{1} << levels;
  auto make = [&](node_context& ctx, buffer_expr_ptr& in, buffer_expr_ptr& out, std::vector<func>& funcs) {
    var x(ctx, "x");
    in = buffer_expr::make(ctx, "in", 1, sizeof(float));
    buffer_expr_ptr prev = in;
    funcs.reserve(levels + 1);
    funcs.push_back(func::make(scale_offset_1d{0.5f, 1}, {{in, {point(x)}}},
                               {{prev = buffer_expr::make(ctx, "l0", 1, sizeof(float)), {x}}}, {.name = "l0"}));
    for (int k = 1; k <= levels; ++k) {
      auto next = buffer_expr::make(ctx, k == levels ? "out" : numbered("l", k), 1, sizeof(float));
      funcs.push_back(func::make(
          [](const buffer<const float>& a, const buffer<float>& o) -> index_t {
            for (index_t q = o.dim(0).min(); q <= o.dim(0).max(); ++q) o(q) = a(2 * q) + a(2 * q + 1);
            return 0;
          },
          {{prev, {bounds(2 * x, 2 * x + 1)}}}, {{next, {x}}}, {.name = numbered("l", k)}));
      prev = next;
    }
    out = prev;
  };
  auto run = [&](node_context& ctx, buffer_expr_ptr in, buffer_expr_ptr out) {
    pipeline p = build_pipeline(ctx, {in}, {out});
    buffer<float, 1> i({n}), o({n >> levels});
    i.allocate();
    o.allocate();
    for (index_t x = 0; x < n; ++x) i(x) = static_cast<float>(x % 13);
    EXPECT_EQ(p.evaluate({&i}, {&o}), 0);
    std::vector<float> result(o.base(), o.base() + o.elem_count());
    return result;
  };
  node_context c0;
  buffer_expr_ptr in0, out0;
  std::vector<func> f0;
  make(c0, in0, out0, f0);
  const std::vector<float> expected = run(c0, in0, out0);

  node_context c;
  buffer_expr_ptr in, out;
  std::vector<func> f;
  make(c, in, out, f);
  schedule_report r = schedule({in}, {out}, schedule_shapes().add(in, {n}).add(out, {1}), small_machine());
  const std::string text = r.to_string(&c);
  EXPECT_FALSE(r.loops[0].looped) << text;
  EXPECT_EQ(run(c, in, out), expected) << text;
}

TEST(schedule, steps_are_multiples_of_the_blocks_a_consumer_reads) {
  // blocks(x, b) = in(64 b + x) * 2 (blocks of 64), out(j) = blocks(j % 64, j / 64) + 1: the
  // blocks move by one every 64 output elements, so the steps are multiples of 64 (a step of 160
  // would compute 3 or 4 blocks per iteration for 2.5 blocks' worth of output).
  const index_t block = 64, n = 64 * 1024;
  auto make = [&](graph& g) {
    var x(g.ctx, "x"), b(g.ctx, "b"), j(g.ctx, "j");
    g.in = buffer_expr::make(g.ctx, "in", 1, sizeof(float));
    auto blocks = buffer_expr::make(g.ctx, "blocks", 2, sizeof(float));
    g.out = buffer_expr::make(g.ctx, "out", 1, sizeof(float));
    g.funcs.reserve(2);
    g.funcs.push_back(func::make(
        [block](const buffer<const float>& in, const buffer<float>& o) -> index_t {
          for (index_t bi = o.dim(1).min(); bi <= o.dim(1).max(); ++bi) {
            for (index_t xi = o.dim(0).min(); xi <= o.dim(0).max(); ++xi) o(xi, bi) = in(bi * block + xi) * 2;
          }
          return 0;
        },
        {{g.in, {bounds(b * block, b * block + block - 1)}}}, {{blocks, {x, b}}}, {.name = "blocks"}));
    g.funcs.push_back(func::make(
        [block](const buffer<const float>& bl, const buffer<float>& o) -> index_t {
          for (index_t ji = o.dim(0).min(); ji <= o.dim(0).max(); ++ji) o(ji) = bl(ji % block, ji / block) + 1;
          return 0;
        },
        {{blocks, {bounds(0, block - 1), point(j / block)}}}, {{g.out, {j}}}, {.name = "out"}));
  };
  graph plain;
  make(plain);
  pipeline p0 = plain.build();
  const buffer<float, 1> expected = run1d(p0, n);
  // L2 budgets whose largest steps, rounded to 3 significant bits, are 160 and 224.
  for (index_t l2 : {4000, 5500}) {
    graph g;
    make(g);
    machine m = small_machine();
    m.l1_bytes = 64;
    m.l2_bytes = l2;
    m.l3_bytes = 64 * l2;
    schedule_report r = schedule({g.in}, {g.out}, schedule_shapes().add(g.in, {n}).add(g.out, {n}), m);
    const std::string text = r.to_string(&g.ctx);
    ASSERT_TRUE(r.loops[0].looped) << text;
    EXPECT_EQ(r.loops[0].step % block, 0) << text;
    EXPECT_EQ(r.loops[0].granularity, block) << text;
    EXPECT_NE(text.find("steps in multiples of 64 (blocks read)"), std::string::npos) << text;
    // Each iteration computes the blocks of its own output elements, no more.
    EXPECT_EQ(decision(r, "blocks").elements_per_iteration, r.loops[0].step) << text;
    EXPECT_EQ(decision(r, "blocks").where, schedule_report::placement::in_loop) << text;
    pipeline p = g.build();
    expect_equal(run1d(p, n), expected);
  }
}

TEST(schedule, product_chain_loops_over_rows) {
  // ab = a x b, abc = ab x c (n x n floats, matmul(j, i) = sum_k x(k, i) y(j, k), row by row):
  // every row reads all of b or c whatever the schedule, so the loop over rows is charged those
  // reads once (as no loop is) and ab's rows are computed in it, not stored whole (64 KiB, twice
  // the L2). b and c (128 KiB together) do not fit the L2 budget alone: they are not in the
  // working set.
  const index_t n = 128;
  auto matmul = [n](const buffer<const float>& x, const buffer<const float>& y, const buffer<float>& o) -> index_t {
    for (index_t i = o.dim(1).min(); i <= o.dim(1).max(); ++i) {
      for (index_t j = o.dim(0).min(); j <= o.dim(0).max(); ++j) o(j, i) = 0;
      for (index_t k = 0; k < n; ++k) {
        for (index_t j = o.dim(0).min(); j <= o.dim(0).max(); ++j) o(j, i) += x(k, i) * y(j, k);
      }
    }
    return 0;
  };
  auto make = [&](graph& g, buffer_expr_ptr& b, buffer_expr_ptr& c) {
    var i(g.ctx, "i"), j(g.ctx, "j");
    g.in = buffer_expr::make(g.ctx, "a", 2, sizeof(float));
    b = buffer_expr::make(g.ctx, "b", 2, sizeof(float));
    c = buffer_expr::make(g.ctx, "c", 2, sizeof(float));
    auto ab = buffer_expr::make(g.ctx, "ab", 2, sizeof(float));
    g.out = buffer_expr::make(g.ctx, "abc", 2, sizeof(float));
    const interval_expr k = bounds(0, n - 1);
    g.funcs.reserve(2);
    g.funcs.push_back(func::make(matmul, {{g.in, {k, point(i)}}, {b, {point(j), k}}}, {{ab, {j, i}}}, {.name = "ab"}));
    g.funcs.push_back(
        func::make(matmul, {{ab, {k, point(i)}}, {c, {point(j), k}}}, {{g.out, {j, i}}}, {.name = "abc"}));
  };
  auto run = [&](graph& g, buffer_expr_ptr b, buffer_expr_ptr c) {
    pipeline p = build_pipeline(g.ctx, {g.in, b, c}, {g.out});
    buffer<float, 2> ba({n, n}), bb({n, n}), bc({n, n}), out({n, n});
    for (auto* x : {&ba, &bb, &bc, &out}) x->allocate();
    for (index_t y = 0; y < n; ++y) {
      for (index_t x = 0; x < n; ++x) {
        ba(x, y) = static_cast<float>((x + 2 * y) % 7) - 3;
        bb(x, y) = static_cast<float>((3 * x + y) % 5) - 2;
        bc(x, y) = static_cast<float>((x * y) % 3) - 1;
      }
    }
    EXPECT_EQ(p.evaluate({&ba, &bb, &bc}, {&out}), 0);
    return out;
  };
  graph plain;
  buffer_expr_ptr pb, pc;
  make(plain, pb, pc);
  const buffer<float, 2> expected = run(plain, pb, pc);

  graph g;
  buffer_expr_ptr b, c;
  make(g, b, c);
  schedule_report r =
      schedule({g.in, b, c}, {g.out},
               schedule_shapes().add(g.in, {n, n}).add(b, {n, n}).add(c, {n, n}).add(g.out, {n, n}), small_machine());
  const std::string text = r.to_string(&g.ctx);
  ASSERT_TRUE(r.loops[0].looped) << text;
  EXPECT_EQ(r.loops[0].dim, 1) << text;
  EXPECT_EQ(decision(r, "ab").where, schedule_report::placement::in_loop) << text;
  EXPECT_LT(r.loops[0].working_set_bytes, 2 * n * n * index_t{sizeof(float)}) << text;
  EXPECT_EQ(r.loops[0].invariant_bytes, 2 * n * n * index_t{sizeof(float)}) << text;
  EXPECT_NE(text.find("131072 bytes read whole by every iteration"), std::string::npos) << text;
  expect_equal(run(g, b, c), expected);
}

// A stencil chain whose rows are too wide for the L2: a loop over rows would stream its windows
// from the L3, and a loop over columns would cut every row into pieces of a few elements; the
// scheduler takes a tile, strips of columns with rows inside, the intermediates stored at the
// strip (sliding down it), and the pipeline computes what the unscheduled one does.
TEST(schedule, wide_stencil_gets_a_tile) {
  const index_t w = 2048, h = 512;
  const machine m = small_machine();
  const buffer<float, 2> expected = unscheduled_stencil(3, w, h);
  auto g = stencil_chain(3);
  schedule_report r = schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 4, h + 4}).add(g->out, {w, h}), m);
  const std::string text = r.to_string(&g->ctx);
  ASSERT_TRUE(r.loops[0].looped) << text;
  // Both steps: rows inside strips of columns.
  EXPECT_EQ(r.loops[0].dim, 1) << text;
  EXPECT_EQ(r.loops[0].outer_dim, 0) << text;
  EXPECT_GE(r.loops[0].outer_step, 32) << text;
  EXPECT_LT(r.loops[0].outer_step, w) << text;
  EXPECT_EQ(r.loops[0].outer_iterations, (w + r.loops[0].outer_step - 1) / r.loops[0].outer_step) << text;
  EXPECT_EQ(r.loops[0].iterations, (h + r.loops[0].step - 1) / r.loops[0].step) << text;
  // The strip's working set fits the L2's budget, which the windows of one row of the image do
  // not (3 rows of 2 intermediates).
  EXPECT_LE(r.loops[0].working_set_bytes, r.loops[0].budget_bytes) << text;
  EXPECT_LE(r.loops[0].level, 2) << text;
  EXPECT_GT(3 * w * index_t{sizeof(float)} * 2, m.l2_bytes / 2);
  EXPECT_NE(text.find("inside a loop over dim 0 (x) in steps of " + std::to_string(r.loops[0].outer_step)),
            std::string::npos)
      << text;
  EXPECT_EQ(decision(r, "e").where, schedule_report::placement::in_loop) << text;
  EXPECT_EQ(decision(r, "box1").where, schedule_report::placement::in_loop) << text;
  EXPECT_EQ(decision(r, "e").moving_dim, 1) << text;
  // The funcs are computed in the inner loop: the head's loops, innermost first.
  ASSERT_EQ(g->funcs.back().loops().size(), 2u);
  EXPECT_EQ(g->funcs.back().loops()[0].var, g->funcs.back().outputs()[0].dims[1]);
  EXPECT_EQ(g->funcs.back().loops()[1].var, g->funcs.back().outputs()[0].dims[0]);
  pipeline p = g->build();
  expect_equal(run2d(p, w, h, 2), expected);
}

// A stencil chain of 32768 x 32 floats on the default machine description: a loop over columns
// would slide its intermediates along dim 0, whose buffers the builder then folds along dim 0,
// cutting the rows every callback reads at the fold's boundary; the scheduler takes rows (in a
// tile of strips of columns, or a loop over rows) instead, with the funcs sliding along dim 1,
// and the pipeline computes what the unscheduled one does.
TEST(schedule, stencil_does_not_slide_along_dim_0) {
  const index_t w = 32768, h = 32;
  const buffer<float, 2> expected = unscheduled_stencil(3, w, h);
  for (int threads : {1, 2}) {
    machine m;
    m.threads = threads;
    auto g = stencil_chain(3);
    schedule_report r =
        schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 4, h + 4}).add(g->out, {w, h}), m);
    const std::string text = r.to_string(&g->ctx);
    ASSERT_TRUE(r.loops[0].looped) << text;
    EXPECT_EQ(r.loops[0].dim, 1) << text;
    for (const char* name : {"e", "box1"}) {
      if (decision(r, name).where == schedule_report::placement::in_loop) {
        EXPECT_EQ(decision(r, name).moving_dim, 1) << text;
      }
    }
    EXPECT_EQ(text.find("moving along dim 0"), std::string::npos) << text;
    pipeline p = g->build();
    expect_equal(run2d(p, w, h, 2), expected);
  }
}

// The wide stencil with threads: the strips of its tile are independent (each computes its own
// windows, stored at the strip), and run in parallel where that is cheaper than serially by
// cost_model::parallel_gain, at least two per worker; the inner loop stays serial. Computed on a
// pool of 2 threads and without a pool, the result is the unscheduled one's; without the
// parallel option the strips are serial.
TEST(schedule, wide_stencil_tile_strips_run_in_parallel) {
  const index_t w = 2048, h = 512;
  machine m = small_machine();
  m.threads = 2;
  const buffer<float, 2> expected = unscheduled_stencil(3, w, h);
  auto g = stencil_chain(3);
  schedule_report r = schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 4, h + 4}).add(g->out, {w, h}), m);
  const std::string text = r.to_string(&g->ctx);
  ASSERT_TRUE(r.loops[0].looped) << text;
  EXPECT_EQ(r.loops[0].dim, 1) << text;
  ASSERT_EQ(r.loops[0].outer_dim, 0) << text;
  EXPECT_TRUE(r.loops[0].outer_parallel) << text;
  EXPECT_FALSE(r.loops[0].parallel) << text;
  EXPECT_GE(r.loops[0].outer_iterations, 2 * m.threads) << text;
  EXPECT_LE(r.loops[0].working_set_bytes, r.loops[0].budget_bytes) << text;
  EXPECT_NE(text.find("in steps of " + std::to_string(r.loops[0].outer_step) + ", parallel, "), std::string::npos)
      << text;
  ASSERT_EQ(g->funcs.back().loops().size(), 2u);
  EXPECT_EQ(as_constant(g->funcs.back().loops()[1].max_workers), std::optional<index_t>(loop::parallel));
  EXPECT_EQ(as_constant(g->funcs.back().loops()[0].max_workers), std::optional<index_t>(loop::serial));
  expect_equal(run2d_on_two_threads(*g, w, h, 2), expected);
  pipeline p = g->build();
  expect_equal(run2d(p, w, h, 2), expected);

  auto g2 = stencil_chain(3);
  schedule_options serial;
  serial.parallel = false;
  schedule_report r2 =
      schedule({g2->in}, {g2->out}, schedule_shapes().add(g2->in, {w + 4, h + 4}).add(g2->out, {w, h}), m, serial);
  ASSERT_EQ(r2.loops[0].outer_dim, 0) << r2.to_string(&g2->ctx);
  EXPECT_FALSE(r2.loops[0].outer_parallel) << r2.to_string(&g2->ctx);
}

// Where one row fits the L2, no tile: the loop over rows of fit_the_cache_budget.
TEST(schedule, narrow_stencil_gets_no_tile) {
  auto g = stencil_chain(3);
  schedule_report r = schedule(
      {g->in}, {g->out}, schedule_shapes().add(g->in, {256 + 4, 1024 + 4}).add(g->out, {256, 1024}), small_machine());
  ASSERT_TRUE(r.loops[0].looped) << r.to_string(&g->ctx);
  EXPECT_EQ(r.loops[0].dim, 1);
  EXPECT_EQ(r.loops[0].outer_dim, -1);
  EXPECT_EQ(r.loops[0].outer_step, 0);
  EXPECT_EQ(g->funcs.back().loops().size(), 1u);
}

// A product c = a x b whose right-hand side b exceeds the L3 budget: the callback reads all of b
// for every row of c, whatever the loop over rows, so no loop is as cheap as any; a tile (strips
// of c's columns, rows inside) reads a strip of b for every row, which fits the L2. The strip's
// window of b fits the L2 budget, and the pipeline computes what the unscheduled one does. The
// same product with a b that fits the L2 gets no tile.
TEST(schedule, product_beyond_the_l2_gets_a_tile) {
  const index_t rows = 64, k = 32;
  auto matmul = [](const buffer<const float>& x, const buffer<const float>& y, const buffer<float>& o) -> index_t {
    for (index_t i = o.dim(1).min(); i <= o.dim(1).max(); ++i) {
      for (index_t j = o.dim(0).min(); j <= o.dim(0).max(); ++j) o(j, i) = 0;
      for (index_t kk = x.dim(0).min(); kk <= x.dim(0).max(); ++kk) {
        for (index_t j = o.dim(0).min(); j <= o.dim(0).max(); ++j) o(j, i) += x(kk, i) * y(j, kk);
      }
    }
    return 0;
  };
  for (index_t n : {4096, 64}) {
    auto make = [&](graph& g, buffer_expr_ptr& b) {
      var i(g.ctx, "i"), j(g.ctx, "j");
      g.in = buffer_expr::make(g.ctx, "a", 2, sizeof(float));
      b = buffer_expr::make(g.ctx, "b", 2, sizeof(float));
      g.out = buffer_expr::make(g.ctx, "c", 2, sizeof(float));
      g.funcs.push_back(func::make(matmul, {{g.in, {bounds(0, k - 1), point(i)}}, {b, {point(j), bounds(0, k - 1)}}},
                                   {{g.out, {j, i}}}, {.name = "c"}));
    };
    auto run = [&](graph& g, buffer_expr_ptr b) {
      pipeline p = build_pipeline(g.ctx, {g.in, b}, {g.out});
      buffer<float, 2> ba({k, rows}), bb({n, k}), out({n, rows});
      for (auto* x : {&ba, &bb, &out}) x->allocate();
      for (index_t y = 0; y < rows; ++y) {
        for (index_t x = 0; x < k; ++x) ba(x, y) = static_cast<float>((x + 2 * y) % 7) - 3;
      }
      for (index_t y = 0; y < k; ++y) {
        for (index_t x = 0; x < n; ++x) bb(x, y) = static_cast<float>((3 * x + y) % 5) - 2;
      }
      EXPECT_EQ(p.evaluate({&ba, &bb}, {&out}), 0);
      return out;
    };
    graph plain;
    buffer_expr_ptr pb;
    make(plain, pb);
    const buffer<float, 2> expected = run(plain, pb);

    graph g;
    buffer_expr_ptr b;
    make(g, b);
    const machine m = small_machine();
    schedule_report r =
        schedule({g.in, b}, {g.out}, schedule_shapes().add(g.in, {k, rows}).add(b, {n, k}).add(g.out, {n, rows}), m);
    const std::string text = r.to_string(&g.ctx);
    const index_t b_bytes = n * k * sizeof(float);
    if (n == 64) {
      // b (8 KiB) fits the L2 budget: no tile.
      ASSERT_LE(b_bytes, m.l2_bytes / 2);
      EXPECT_EQ(r.loops[0].outer_dim, -1) << text;
      EXPECT_LE(g.funcs.back().loops().size(), 1u) << text;
    } else {
      ASSERT_GT(b_bytes, m.l3_bytes / 2);
      ASSERT_TRUE(r.loops[0].looped) << text;
      EXPECT_EQ(r.loops[0].dim, 1) << text;
      EXPECT_EQ(r.loops[0].outer_dim, 0) << text;
      EXPECT_GE(r.loops[0].outer_step, 32) << text;
      // The strip of b read by every row fits the L2 budget.
      EXPECT_LE(r.loops[0].outer_step * k * index_t{sizeof(float)}, m.l2_bytes / 2) << text;
      EXPECT_EQ(r.loops[0].outer_iterations, (n + r.loops[0].outer_step - 1) / r.loops[0].outer_step) << text;
      ASSERT_EQ(g.funcs.back().loops().size(), 2u) << text;
      EXPECT_EQ(g.funcs.back().loops()[1].var, g.funcs.back().outputs()[0].dims[0]);
    }
    expect_equal(run(g, b), expected);
  }
}

TEST(schedule, parallel_when_large_and_threads) {
  const index_t w = 512, h = 512;
  const buffer<float, 2> expected = unscheduled_stencil(3, w, h);

  auto g = stencil_chain(3);
  machine m = small_machine();
  m.threads = 2;
  schedule_report r = schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 4, h + 4}).add(g->out, {w, h}), m);
  ASSERT_TRUE(r.loops[0].looped) << r.to_string(&g->ctx);
  // The loop over rows, or the strips of a tile (a row's windows, 24 KiB, exceed this machine's
  // L2 budget): parallel.
  if (r.loops[0].outer_dim >= 0) {
    EXPECT_TRUE(r.loops[0].outer_parallel) << r.to_string(&g->ctx);
    EXPECT_GE(r.loops[0].outer_iterations, 4);
  } else {
    EXPECT_TRUE(r.loops[0].parallel) << r.to_string(&g->ctx);
    EXPECT_GE(r.loops[0].iterations, 4);
  }
  // Without the option: serial.
  auto g2 = stencil_chain(3);
  schedule_options serial;
  serial.parallel = false;
  schedule_report r2 =
      schedule({g2->in}, {g2->out}, schedule_shapes().add(g2->in, {w + 4, h + 4}).add(g2->out, {w, h}), m, serial);
  EXPECT_FALSE(r2.loops[0].parallel);
  EXPECT_FALSE(r2.loops[0].outer_parallel);

  expect_equal(run2d_on_two_threads(*g, w, h, 2), expected);
  // Without a thread pool, the parallel loop runs serially.
  pipeline p = g->build();
  expect_equal(run2d(p, w, h, 2), expected);
}

// in -> e = in * 2 + 1 (counting the points it computes) -> out = the sum of e over a column of
// 2 * radius + 1 rows.
struct tall_stencil_graph : graph {
  std::shared_ptr<std::atomic<index_t>> e_points = std::make_shared<std::atomic<index_t>>(0);
  var x{ctx, "x"}, y{ctx, "y"};

  explicit tall_stencil_graph(int radius) {
    in = buffer_expr::make(ctx, "in", 2, sizeof(float));
    auto e = buffer_expr::make(ctx, "e", 2, sizeof(float));
    out = buffer_expr::make(ctx, "out", 2, sizeof(float));
    std::shared_ptr<std::atomic<index_t>> points = e_points;
    funcs.push_back(func::make(
        [points](const buffer<const float>& a, const buffer<float>& b) -> index_t {
          *points += b.dim(0).extent() * b.dim(1).extent();
          return scale_offset{2, 1}(a, b);
        },
        {{in, {point(x), point(y)}}}, {{e, {x, y}}}, {.name = "e"}));
    funcs.push_back(func::make(
        [radius](const buffer<const float>& a, const buffer<float>& b) -> index_t {
          for (index_t j = b.dim(1).min(); j <= b.dim(1).max(); ++j) {
            for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) {
              float sum = 0;
              for (int d = -radius; d <= radius; ++d) sum += a(i, j + d);
              b(i, j) = sum;
            }
          }
          return 0;
        },
        {{e, {point(x), bounds(y - radius, y + radius)}}}, {{out, {x, y}}}, {.name = "column"}));
  }
};

// A parallel loop over a stencil is either pipelined (the intermediate slides, each value is
// computed once, at most one iteration in flight per func) or data-parallel (the intermediate is
// stored inside the loop, every worker busy, each iteration computing its whole window): the
// cheaper for the machine.
TEST(schedule, parallel_stencil_recomputes_when_it_frees_more_workers_than_it_costs) {
  const index_t w = 256, h = 256;
  const int radius = 1;
  tall_stencil_graph plain(radius);
  pipeline p0 = plain.build();
  const buffer<float, 2> expected = run2d(p0, w, h, radius);
  ASSERT_EQ(*plain.e_points, w * (h + 2 * radius));

  thread_pool_impl pool(3);
  eval_config config;
  config.thread_pool = &pool;
  eval_context ctx;
  ctx.config = &config;

  // 8 threads: pipelined, a 2-func loop has at most 2 iterations in flight; data-parallel keeps 8
  // busy for a halo of 2 rows.
  tall_stencil_graph g(radius);
  machine m = small_machine();
  m.threads = 8;
  schedule_report r = schedule({g.in}, {g.out}, schedule_shapes().add(g.in, {w, h + 2}).add(g.out, {w, h}), m);
  const schedule_report::loop_decision& l = r.loops[0];
  ASSERT_TRUE(l.looped) << r.to_string(&g.ctx);
  EXPECT_TRUE(l.parallel) << r.to_string(&g.ctx);
  EXPECT_TRUE(l.recomputes) << r.to_string(&g.ctx);
  EXPECT_EQ(l.dim, 1);
  EXPECT_EQ(decision(r, "e").where, schedule_report::placement::in_loop);
  EXPECT_NE(std::string(decision(r, "e").why).find("recomputes the overlap"), std::string::npos);
  // Stored inside the loop: each iteration its own window.
  const std::optional<loop_id>& at = g.funcs[0].outputs()[0].buffer->store_at();
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(at->func, &g.funcs[1]);
  EXPECT_EQ(at->var, g.funcs[1].outputs()[0].dims[1]);
  EXPECT_NE(r.to_string(&g.ctx).find("data-parallel, overlaps recomputed"), std::string::npos);

  pipeline p = g.build();
  expect_equal(run2d(p, w, h, radius, &ctx), expected);
  // Each iteration computed the 2 * radius rows of overlap again.
  const index_t step = l.step;
  index_t rows = 0;
  for (index_t y = 0; y < h; y += step) rows += std::min(step, h - y) + 2 * radius;
  EXPECT_EQ(*g.e_points, w * rows);
  EXPECT_GT(*g.e_points, *plain.e_points);

  // 2 threads and a halo of 64 rows per strip of rows (at most 64 rows fit): recomputing would cost
  // more than it gains. The loop is parallel without recomputing: pipelined over rows (e slides)
  // or, as the model prefers here, data-parallel over columns (e's columns do not overlap); either
  // way e is computed once.
  const int tall = 32;
  const index_t h2 = 2048;
  tall_stencil_graph plain2(tall);
  pipeline p1 = plain2.build();
  const buffer<float, 2> expected2 = run2d(p1, w, h2, tall);
  tall_stencil_graph g2(tall);
  machine m2 = small_machine(256 * 1024);
  m2.threads = 2;
  schedule_report r2 =
      schedule({g2.in}, {g2.out}, schedule_shapes().add(g2.in, {w, h2 + 2 * tall}).add(g2.out, {w, h2}), m2);
  ASSERT_TRUE(r2.loops[0].looped) << r2.to_string(&g2.ctx);
  EXPECT_TRUE(r2.loops[0].parallel) << r2.to_string(&g2.ctx);
  EXPECT_FALSE(r2.loops[0].recomputes) << r2.to_string(&g2.ctx);
  EXPECT_EQ(decision(r2, "e").where, schedule_report::placement::in_loop);
  EXPECT_FALSE(g2.funcs[0].outputs()[0].buffer->store_at().has_value());
  pipeline p2 = g2.build();
  expect_equal(run2d(p2, w, h2, tall, &ctx), expected2);
  EXPECT_EQ(*g2.e_points, w * (h2 + 2 * tall));

  // Serial loops never recompute: they slide.
  tall_stencil_graph g3(radius);
  m.threads = 1;
  schedule_report r3 = schedule({g3.in}, {g3.out}, schedule_shapes().add(g3.in, {w, h + 2}).add(g3.out, {w, h}), m);
  ASSERT_TRUE(r3.loops[0].looped);
  EXPECT_FALSE(r3.loops[0].parallel);
  EXPECT_FALSE(r3.loops[0].recomputes);
  EXPECT_FALSE(g3.funcs[0].outputs()[0].buffer->store_at().has_value());
}

// Data-parallel strips of a 3x3 stencil chain recompute 2 rows per stage and strip: the smaller
// the strip, the larger the share of the callbacks' work done twice. The model counts that work
// (every input element a point reads, from L1), so the strips grow beyond the L2 budget, here to
// the largest power of two whose working sets, one per worker, fit the shared L3's budget together.
// Counting bytes alone, the model kept this loop serial, in strips of the L2 budget (6 rows): the
// work that parallel strips share out was not in its estimate. With 4 threads: pipelined, the
// loop of 3 funcs would keep at most 3 busy.
TEST(schedule, data_parallel_strips_grow_while_recomputing_costs_more_than_the_slower_level) {
  const index_t w = 1024, h = 1024;
  auto plain = stencil_chain(3);
  pipeline p0 = plain->build();
  const buffer<float, 2> expected = run2d(p0, w, h, 2);

  auto g = stencil_chain(3);
  machine m = small_machine(256 * 1024);
  m.threads = 4;
  schedule_report r = schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 4, h + 4}).add(g->out, {w, h}), m);
  const std::string text = r.to_string(&g->ctx);
  const schedule_report::loop_decision& l = r.loops[0];
  ASSERT_TRUE(l.looped) << text;
  EXPECT_TRUE(l.recomputes) << text;
  EXPECT_EQ(l.dim, 1) << text;
  // Beyond the L2 budget, within the L3's for all the workers.
  EXPECT_EQ(l.level, 3) << text;
  EXPECT_EQ(l.workers, m.threads) << text;
  EXPECT_GT(l.working_set_bytes, m.l2_bytes / 2) << text;
  EXPECT_LE(m.threads * l.working_set_bytes, m.l3_bytes / 2) << text;
  EXPECT_NE(text.find("L3, shared by 4 iterations at once"), std::string::npos) << text;
  EXPECT_GE(l.step, 8) << text;
  EXPECT_EQ(l.step & (l.step - 1), 0) << text;
  EXPECT_GE(l.iterations, 2 * m.threads) << text;
  // Strips of twice the rows would not fit the L3 budget for all the workers: one strip holds about
  // 4 * step + 10 rows (in, e and b1 with their halos, the output's strip).
  const index_t row = (w + 4) * index_t{sizeof(float)};
  EXPECT_GT(m.threads * (4 * 2 * l.step + 10) * row, m.l3_bytes / 2) << text;

  expect_equal(run2d_on_two_threads(*g, w, h, 2), expected);
}

// In a pipelined parallel loop the previous iteration ran on another core: each iteration reads
// the overlap of its windows (the rows of e and b1 that iteration computed) from that core's
// cache. The model prices those bytes at twice memory's rate, beside a fixed cost per parallel
// iteration, so the strips grow past the L2 budget until the hand-offs are a small share, and the
// loop stays pipelined, computing each value once, where two workers gain too little from
// recomputing every strip's halos. (On the 2-core benchmark machine, the 3-stage parallel
// stencil of 4096 x 4096 pipelined in strips of 4 rows, the largest within the L2 budget, took
// 11.2 to 11.6 ms; in strips of 8 to 64, 9.5 to 9.9 ms: scheduler_benchmark --cpu-time --only
// "parallel stencil, 3" --explain --sweep.)
TEST(schedule, pipelined_strips_grow_past_the_l2_budget_to_amortize_the_hand_offs) {
  const index_t w = 1024, h = 1024;
  const buffer<float, 2> expected = unscheduled_stencil(3, w, h);

  auto g = stencil_chain(3);
  machine m;
  m.l1_bytes = 32 * 1024;
  m.l2_bytes = 256 * 1024;
  m.l3_bytes = 8 * 1024 * 1024;
  m.threads = 2;
  m.call_overhead_ns = 30;
  schedule_report r = schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 4, h + 4}).add(g->out, {w, h}), m);
  const std::string text = r.to_string(&g->ctx);
  const schedule_report::loop_decision& l = r.loops[0];
  ASSERT_TRUE(l.looped) << text;
  EXPECT_EQ(l.dim, 1) << text;
  EXPECT_TRUE(l.parallel) << text;
  EXPECT_FALSE(l.recomputes) << text;
  EXPECT_EQ(decision(r, "e").where, schedule_report::placement::in_loop) << text;
  EXPECT_NE(std::string(decision(r, "e").why).find("slides"), std::string::npos) << text;
  EXPECT_GT(l.working_set_bytes, m.l2_bytes / 2) << text;
  EXPECT_GE(l.iterations, 2 * m.threads) << text;

  expect_equal(run2d_on_two_threads(*g, w, h, 2), expected);
}

// ... but not past the L3's budget while some step fits L2's: the 2-stage parallel stencil of
// 4096 x 4096 on the benchmark machine's description was pipelined in strips of 64 rows, whose
// ring buffers and windows (4 MiB) the model serves from memory, and which took 5.7 to 7.9 ms
// from run to run against 5.6 to 5.7 in strips of 32 (2 MiB). Scheduled only (not evaluated).
TEST(schedule, parallel_strips_stay_within_the_l3_budget) {
  const index_t w = 4096, h = 4096;
  auto g = stencil_chain(2);
  machine m;
  m.l1_bytes = 48 * 1024;
  m.l2_bytes = 1024 * 1024;
  m.l3_bytes = 8 * 1024 * 1024;
  m.l1_buffers = 6;
  m.threads = 2;
  m.call_overhead_ns = 11;
  schedule_report r = schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 2, h + 2}).add(g->out, {w, h}), m);
  const std::string text = r.to_string(&g->ctx);
  const schedule_report::loop_decision& l = r.loops[0];
  ASSERT_TRUE(l.looped) << text;
  EXPECT_EQ(l.dim, 1) << text;
  EXPECT_TRUE(l.parallel) << text;
  EXPECT_LE(l.working_set_bytes, m.l3_bytes / 2) << text;
  EXPECT_EQ(l.step, 32) << text;
}

TEST(schedule, leaves_client_schedules_alone) {
  const index_t n = 1 << 16;
  // The output's func has loops: nothing of its output is touched.
  auto g = elementwise_chain(4);
  var x = g->funcs.back().outputs()[0].dims[0];
  g->funcs.back().loops({{x, 100}});
  schedule_report r = schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {n}).add(g->out, {n}), small_machine());
  EXPECT_FALSE(r.loops[0].looped);
  ASSERT_EQ(g->funcs.back().loops().size(), 1u);
  EXPECT_EQ(as_constant(g->funcs.back().loops()[0].step), 100);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(g->funcs[i].compute_at().has_value());
  EXPECT_EQ(decision(r, "f1").where, schedule_report::placement::left_alone);

  // An intermediate computed at the root by the client stays there; the rest is scheduled around it.
  auto g2 = elementwise_chain(4);
  g2->funcs[1].compute_root();
  schedule_report r2 =
      schedule({g2->in}, {g2->out}, schedule_shapes().add(g2->in, {n}).add(g2->out, {n}), small_machine());
  ASSERT_TRUE(r2.loops[0].looped) << r2.to_string(&g2->ctx);
  EXPECT_TRUE(g2->funcs[1].compute_at()->root());
  EXPECT_EQ(decision(r2, "f1").where, schedule_report::placement::left_alone);
  EXPECT_EQ(decision(r2, "f2").where, schedule_report::placement::in_loop);
  // f0 feeds f1, at the root: it is computed there too.
  EXPECT_EQ(decision(r2, "f0").where, schedule_report::placement::root);
  auto plain = elementwise_chain(4);
  pipeline p0 = plain->build();
  pipeline p2 = g2->build();
  expect_equal(run1d(p2, n), run1d(p0, n));

  // reschedule: the client's schedule is replaced.
  auto g3 = elementwise_chain(4);
  g3->funcs.back().loops({{g3->funcs.back().outputs()[0].dims[0], 100}});
  g3->funcs[1].compute_root();
  schedule_options o;
  o.reschedule = true;
  schedule_report r3 =
      schedule({g3->in}, {g3->out}, schedule_shapes().add(g3->in, {n}).add(g3->out, {n}), small_machine(), o);
  ASSERT_TRUE(r3.loops[0].looped);
  EXPECT_NE(as_constant(g3->funcs.back().loops()[0].step), 100);
  EXPECT_FALSE(g3->funcs[1].compute_at().has_value());
}

TEST(schedule, two_outputs_sharing_a_func) {
  // in -> e -> a -> out1 and e -> b -> out2: each output gets its loop; e feeds both and stays
  // at the root; a and b are computed in their output's loop.
  const index_t n = 1 << 16;
  auto make = [](node_context& ctx, std::vector<func>& funcs, buffer_expr_ptr& in, buffer_expr_ptr& out1,
                 buffer_expr_ptr& out2) {
    var x(ctx, "x");
    in = buffer_expr::make(ctx, "in", 1, sizeof(float));
    auto e = buffer_expr::make(ctx, "e", 1, sizeof(float));
    auto a = buffer_expr::make(ctx, "a", 1, sizeof(float));
    auto b = buffer_expr::make(ctx, "b", 1, sizeof(float));
    out1 = buffer_expr::make(ctx, "out1", 1, sizeof(float));
    out2 = buffer_expr::make(ctx, "out2", 1, sizeof(float));
    funcs.push_back(func::make(scale_offset_1d{2, 1}, {{in, {point(x)}}}, {{e, {x}}}, {.name = "e"}));
    funcs.push_back(func::make(scale_offset_1d{3, 0}, {{e, {point(x)}}}, {{a, {x}}}, {.name = "a"}));
    funcs.push_back(func::make(scale_offset_1d{1, 2}, {{a, {point(x)}}}, {{out1, {x}}}, {.name = "out1"}));
    funcs.push_back(func::make(scale_offset_1d{0.5f, 0}, {{e, {point(x)}}}, {{b, {x}}}, {.name = "b"}));
    funcs.push_back(func::make(scale_offset_1d{1, -1}, {{b, {point(x)}}}, {{out2, {x}}}, {.name = "out2"}));
  };
  auto run = [n](pipeline& p, buffer<float, 1>& o1, buffer<float, 1>& o2) {
    buffer<float, 1> in({n});
    in.allocate();
    o1.allocate();
    o2.allocate();
    for (index_t x = 0; x < n; ++x) in(x) = static_cast<float>(x % 13);
    ASSERT_EQ(p.evaluate({&in}, {&o1, &o2}), 0);
  };
  node_context ctx0;
  std::vector<func> funcs0;
  buffer_expr_ptr in0, a0, b0;
  make(ctx0, funcs0, in0, a0, b0);
  pipeline p0 = build_pipeline(ctx0, {in0}, {a0, b0});
  buffer<float, 1> e1({n}), e2({n});
  run(p0, e1, e2);

  node_context ctx;
  std::vector<func> funcs;
  buffer_expr_ptr in, out1, out2;
  make(ctx, funcs, in, out1, out2);
  schedule_report r =
      schedule({in}, {out1, out2}, schedule_shapes().add(in, {n}).add(out1, {n}).add(out2, {n}), small_machine());
  ASSERT_EQ(r.loops.size(), 2u);
  EXPECT_TRUE(r.loops[0].looped && r.loops[1].looped) << r.to_string(&ctx);
  EXPECT_EQ(decision(r, "e").where, schedule_report::placement::root);
  EXPECT_EQ(decision(r, "a").where, schedule_report::placement::in_loop);
  EXPECT_EQ(decision(r, "b").where, schedule_report::placement::in_loop);
  pipeline p = build_pipeline(ctx, {in}, {out1, out2});
  buffer<float, 1> o1({n}), o2({n});
  run(p, o1, o2);
  expect_equal(o1, e1);
  expect_equal(o2, e2);
}

TEST(schedule, no_shape_no_schedule) {
  auto g = elementwise_chain(4);
  schedule_report r = schedule({g->in}, {g->out}, schedule_shapes(), small_machine());
  EXPECT_FALSE(r.loops[0].looped);
  EXPECT_STREQ(r.loops[0].why, "no shape given for this output");
  EXPECT_TRUE(g->funcs.back().loops().empty());
  // Braced extents, one or several (one could be ambiguous with the raw_buffer overload).
  const schedule_shapes braced = schedule_shapes().add(g->in, {0}).add(g->out, {7, 5});
  ASSERT_EQ(braced.buffers.size(), 2u);
  ASSERT_EQ(braced.buffers[0].bounds.size(), 1u);
  EXPECT_EQ(braced.buffers[0].bounds[0], std::make_pair(index_t{0}, index_t{-1}));
  ASSERT_EQ(braced.buffers[1].bounds.size(), 2u);
  EXPECT_EQ(braced.buffers[1].bounds[1], std::make_pair(index_t{0}, index_t{4}));
  // An empty output: nothing to compute, and the report says so (not that no shape was given).
  auto e = elementwise_chain(4);
  schedule_report re = schedule({e->in}, {e->out}, schedule_shapes().add(e->in, {0}).add(e->out, {0}), small_machine());
  EXPECT_FALSE(re.loops[0].looped);
  EXPECT_STREQ(re.loops[0].why, "the output is empty: nothing to compute");
  EXPECT_NE(re.to_string(&e->ctx).find("the output is empty"), std::string::npos);
  EXPECT_TRUE(e->funcs.back().loops().empty());
  pipeline p = e->build();
  EXPECT_EQ(run1d(p, 0).elem_count(), 0u);
}

TEST(schedule, deterministic) {
  const index_t w = 700, h = 300;
  std::string first;
  std::vector<index_t> steps;
  for (int i = 0; i < 3; ++i) {
    auto g = stencil_chain(3);
    schedule_report r =
        schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 4, h + 4}).add(g->out, {w, h}), small_machine());
    const std::string s = r.to_string(&g->ctx);
    if (i == 0) first = s;
    EXPECT_EQ(s, first);
    steps.push_back(r.loops[0].step);
    // Scheduling again with reschedule gives the same.
    schedule_options o;
    o.reschedule = true;
    EXPECT_EQ(schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 4, h + 4}).add(g->out, {w, h}),
                       small_machine(), o)
                  .to_string(&g->ctx),
              first);
  }
  EXPECT_EQ(steps[0], steps[1]);
  EXPECT_EQ(steps[1], steps[2]);
}

TEST(schedule, any_machine_description_gives_a_correct_schedule) {
  // A client fills machine in by hand: zeros, negatives, NaN and huge figures must neither crash
  // the scheduler nor hang it, and whatever it decides computes what the unscheduled pipeline
  // computes.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<machine> machines;
  auto add = [&](auto change) {
    machine m = small_machine();
    change(m);
    machines.push_back(m);
  };
  add([](machine& m) { m.l1_bytes = m.l2_bytes = m.l3_bytes = 0; });
  add([](machine& m) { m.l1_bytes = m.l2_bytes = m.l3_bytes = -1; });
  add([](machine& m) { m.l1_bytes = m.l2_bytes = m.l3_bytes = std::numeric_limits<index_t>::max(); });
  add([](machine& m) { m.threads = 0; });
  add([](machine& m) { m.threads = -3; });
  add([](machine& m) { m.threads = 1 << 20; });
  add([&](machine& m) { m.call_overhead_ns = nan; });
  add([&](machine& m) { m.call_overhead_ns = inf; });
  add([](machine& m) { m.call_overhead_ns = -5; });
  add([&](machine& m) { std::fill(std::begin(m.ns_per_byte), std::end(m.ns_per_byte), nan); });
  add([](machine& m) { std::fill(std::begin(m.ns_per_byte), std::end(m.ns_per_byte), 0.0); });
  add([](machine& m) { std::fill(std::begin(m.ns_per_byte), std::end(m.ns_per_byte), -1.0); });
  add([](machine& m) { m.l1_buffers = -1; });
  add([&](machine& m) { m.page_touch_ns = nan; });
  add([](machine& m) { m.fresh_block_bytes = -1; });
  const index_t w = 200, h = 120;
  auto plain = stencil_chain(2);
  pipeline p0 = plain->build();
  const buffer<float, 2> expected = run2d(p0, w, h, 2);
  for (double fraction : {0.5, 0.0, -1.0, 2.0, nan}) {
    for (std::size_t i = 0; i < machines.size(); ++i) {
      SCOPED_TRACE("machine " + std::to_string(i) + ", cache_fraction " + std::to_string(fraction));
      auto g = stencil_chain(2);
      schedule_options o;
      o.cache_fraction = fraction;
      const schedule_report r =
          schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 4, h + 4}).add(g->out, {w, h}), machines[i], o);
      EXPECT_FALSE(r.to_string(&g->ctx).empty());
      if (r.loops[0].looped) {
        EXPECT_GE(r.loops[0].step, 1);
        EXPECT_LE(r.loops[0].step, h);
      }
      pipeline p = g->build();
      thread_pool_impl pool(2);
      eval_config config;
      config.thread_pool = &pool;
      eval_context ctx;
      ctx.config = &config;
      expect_equal(run2d(p, w, h, 2, &ctx), expected);
    }
  }
}

TEST(schedule, any_shape_gives_a_schedule_that_builds) {
  // Shapes as a client may give them by mistake or at the extremes: wrong ranks, empty and
  // reversed ranges, one element, huge extents, negative element sizes. schedule() must return
  // (no crash, no undefined arithmetic), and the pipeline must build and compute what the
  // unscheduled one computes on a real buffer.
  const index_t big = index_t{1} << 40;
  std::vector<std::pair<std::vector<std::pair<index_t, index_t>>, index_t>> shapes = {
      {{{0, 99}}, 4},                          // rank 1 for a rank-2 buffer
      {{{0, 99}, {0, 49}, {0, 9}}, 4},         // rank 3
      {{{0, -1}, {0, 49}}, 4},                 // empty
      {{{10, 0}, {5, -5}}, 4},                 // reversed
      {{{0, 0}, {0, 0}}, 4},                   // one element
      {{{0, big}, {0, big}}, 4},               // huge
      {{{-big, big}, {0, 1}}, 4},              // huge, negative min
      {{{0, 99}, {0, 49}}, -4},                // negative element size
      {{{0, 99}, {0, 49}}, index_t{1} << 40},  // huge element size
  };
  const index_t w = 60, h = 40;
  auto plain = stencil_chain(2);
  pipeline p0 = plain->build();
  const buffer<float, 2> expected = run2d(p0, w, h, 2);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    SCOPED_TRACE("shape " + std::to_string(i));
    auto g = stencil_chain(2);
    schedule_shapes sh;
    schedule_shapes::buffer_shape in_shape, out_shape;
    in_shape.buffer = g->in;
    out_shape.buffer = g->out;
    in_shape.bounds = out_shape.bounds = shapes[i].first;
    in_shape.elem_size = out_shape.elem_size = shapes[i].second;
    sh.buffers = {in_shape, out_shape};
    const schedule_report r = schedule({g->in}, {g->out}, sh, small_machine());
    EXPECT_FALSE(r.to_string(&g->ctx).empty());
    if (r.loops[0].looped) {
      EXPECT_GE(r.loops[0].step, 1);
    }
    if (i < 2) {
      // The report says what is wrong with the shape.
      EXPECT_FALSE(r.loops[0].looped);
      EXPECT_STREQ(r.loops[0].why, "the shape given for this output has another rank than its buffer");
    }
    pipeline p = g->build();
    expect_equal(run2d(p, w, h, 2), expected);
  }
}

TEST(schedule, long_chain) {
  // 120 funcs: the walk is iterative and the schedule builds and runs. (With a smaller L2, 120 calls
  // per iteration of a small step would cost more than the memory traffic saved: no loop.)
  const index_t n = 1 << 17;
  auto g = elementwise_chain(120);
  schedule_report r =
      schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {n}).add(g->out, {n}), small_machine(256 * 1024));
  ASSERT_TRUE(r.loops[0].looped) << r.to_string(&g->ctx);
  EXPECT_EQ(r.funcs.size(), 120u);
  auto plain = elementwise_chain(120);
  pipeline p0 = plain->build();
  pipeline p = g->build();
  expect_equal(run1d(p, n), run1d(p0, n));
}

}  // namespace slinky
