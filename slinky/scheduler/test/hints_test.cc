// The funcs' hints (func::cost_hints) in schedule(): a preferred multiple of rows per call makes
// the loop's steps multiples of it (and every call gets such a block), a cost per call or per
// point enters the estimates exactly, and hints that mean nothing are ignored.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/schedule.h"

namespace slinky {

namespace {

// A small machine, so that small test buffers exceed its caches (as schedule_test's).
machine small_machine() {
  machine m;
  m.l1_bytes = 4 * 1024;
  m.l2_bytes = 32 * 1024;
  m.l3_bytes = 256 * 1024;
  m.threads = 1;
  m.call_overhead_ns = 30;
  const double ns_per_byte[4] = {0.02, 0.03, 0.06, 0.1};
  std::copy(std::begin(ns_per_byte), std::end(ns_per_byte), std::begin(m.ns_per_byte));
  return m;
}

constexpr index_t n = 128;

// The matrix chain abc = (a x b) x c of n x n floats; each call of a product records how many rows
// it computed.
struct product_chain {
  node_context ctx;
  buffer_expr_ptr a, b, c, ab, abc;
  std::vector<func> funcs;
  std::shared_ptr<std::vector<index_t>> rows_per_call = std::make_shared<std::vector<index_t>>();

  explicit product_chain(const func::cost_hints& ab_hints = {}, const func::cost_hints& abc_hints = {}) {
    var i(ctx, "i"), j(ctx, "j");
    a = buffer_expr::make(ctx, "a", 2, sizeof(float));
    b = buffer_expr::make(ctx, "b", 2, sizeof(float));
    c = buffer_expr::make(ctx, "c", 2, sizeof(float));
    ab = buffer_expr::make(ctx, "ab", 2, sizeof(float));
    abc = buffer_expr::make(ctx, "abc", 2, sizeof(float));
    std::shared_ptr<std::vector<index_t>> calls = rows_per_call;
    auto product = [calls](const buffer<const float>& x, const buffer<const float>& y,
                           const buffer<float>& o) -> index_t {
      calls->push_back(o.dim(1).extent());
      for (index_t r = o.dim(1).min(); r <= o.dim(1).max(); ++r) {
        for (index_t col = o.dim(0).min(); col <= o.dim(0).max(); ++col) {
          float s = 0;
          for (index_t k = 0; k < n; ++k) s += x(k, r) * y(col, k);
          o(col, r) = s;
        }
      }
      return 0;
    };
    const interval_expr k = bounds(0, n - 1);
    funcs.reserve(2);
    funcs.push_back(func::make(product, {{a, {k, point(i)}}, {b, {point(j), k}}}, {{ab, {j, i}}}, {.name = "ab"}));
    funcs.push_back(func::make(product, {{ab, {k, point(i)}}, {c, {point(j), k}}}, {{abc, {j, i}}}, {.name = "abc"}));
    funcs[0].hints(ab_hints);
    funcs[1].hints(abc_hints);
  }

  schedule_report schedule_it() {
    return schedule({a, b, c}, {abc}, schedule_shapes().add(a, {n, n}).add(b, {n, n}).add(c, {n, n}).add(abc, {n, n}),
                    small_machine());
  }

  buffer<float, 2> run() {
    pipeline p = build_pipeline(ctx, {a, b, c}, {abc});
    buffer<float, 2> ba({n, n}), bb({n, n}), bc({n, n}), out({n, n});
    for (auto* x : {&ba, &bb, &bc, &out}) x->allocate();
    for (index_t y = 0; y < n; ++y) {
      for (index_t x = 0; x < n; ++x) {
        ba(x, y) = static_cast<float>((x + 2 * y) % 7) - 3;
        bb(x, y) = static_cast<float>((3 * x + y) % 5) - 2;
        bc(x, y) = static_cast<float>((x * y) % 3) - 1;
      }
    }
    rows_per_call->clear();
    EXPECT_EQ(p.evaluate({&ba, &bb, &bc}, {&out}), 0);
    return out;
  }
};

void expect_equal(const buffer<float, 2>& x, const buffer<float, 2>& y) {
  for (index_t r = 0; r < n; ++r) {
    for (index_t col = 0; col < n; ++col) ASSERT_EQ(x(col, r), y(col, r)) << col << ", " << r;
  }
}

buffer<float, 2> unscheduled_result() {
  product_chain plain;
  return plain.run();
}

}  // namespace

TEST(hints, a_multiple_of_rows_per_call_steps_the_loop_in_multiples) {
  const buffer<float, 2> expected = unscheduled_result();
  // Without hints the model takes single rows here (no call costs more than its overhead).
  product_chain unhinted;
  const schedule_report u = unhinted.schedule_it();
  ASSERT_TRUE(u.loops[0].looped) << u.to_string(&unhinted.ctx);
  EXPECT_EQ(u.loops[0].step, 1) << u.to_string(&unhinted.ctx);
  EXPECT_EQ(u.loops[0].hinted_multiple, 1);

  for (index_t m : {4, 6}) {
    const func::cost_hints h{.dim = 1, .multiple = m};
    product_chain g(h, h);
    const schedule_report r = g.schedule_it();
    const std::string text = r.to_string(&g.ctx);
    ASSERT_TRUE(r.loops[0].looped) << text;
    EXPECT_EQ(r.loops[0].dim, 1) << text;
    EXPECT_EQ(r.loops[0].step % m, 0) << text;
    EXPECT_EQ(r.loops[0].hinted_multiple, m) << text;
    EXPECT_NE(text.find("a func's hint"), std::string::npos) << text;
    expect_equal(g.run(), expected);
    // Every call gets a multiple of m rows, but the last of each func (n = 128 is not a multiple of 6).
    const std::vector<index_t>& calls = *g.rows_per_call;
    ASSERT_EQ(static_cast<index_t>(calls.size()), 2 * r.loops[0].iterations) << text;
    int not_multiples = 0;
    for (index_t rows : calls) not_multiples += rows % m != 0;
    EXPECT_EQ(not_multiples, n % m == 0 ? 0 : 2) << text;
  }
}

TEST(hints, a_multiple_on_another_dim_or_of_one_changes_nothing) {
  product_chain unhinted;
  const schedule_report u = unhinted.schedule_it();
  const func::cost_hints other_dim{.dim = 0, .multiple = 4};
  const func::cost_hints one{.dim = 1, .multiple = 1};
  const func::cost_hints zero{.dim = 1, .multiple = 0};
  const func::cost_hints nonsense{.dim = -3, .multiple = 4, .ns_per_call = std::nan(""), .ns_per_point = -5};
  for (const func::cost_hints& h : {one, zero, nonsense}) {
    product_chain g(h, h);
    const schedule_report r = g.schedule_it();
    EXPECT_EQ(r.to_string(&g.ctx), u.to_string(&unhinted.ctx));
    EXPECT_EQ(r.loops[0].cost_ns, u.loops[0].cost_ns);
  }
  // On dim 0 (columns): the loop over rows (dim 1) is not stepped by it.
  product_chain g(other_dim, other_dim);
  const schedule_report r = g.schedule_it();
  EXPECT_EQ(r.loops[0].dim, 1) << r.to_string(&g.ctx);
  EXPECT_EQ(r.loops[0].hinted_multiple, 1) << r.to_string(&g.ctx);
}

TEST(hints, a_cost_per_call_is_charged_per_call) {
  product_chain unhinted;
  const schedule_report u = unhinted.schedule_it();
  // With no loop each func is called once: the unscheduled estimate grows by the two calls' cost.
  const double per_call = 1e6;
  product_chain g({.ns_per_call = per_call}, {.ns_per_call = per_call});
  const schedule_report r = g.schedule_it();
  const std::string text = r.to_string(&g.ctx);
  EXPECT_NEAR(r.loops[0].unscheduled_cost_ns - u.loops[0].unscheduled_cost_ns, 2 * per_call, 1e-6 * per_call);
  // 1 ms per call outweighs the whole chain's bytes: no loop (one call per func) instead of the
  // single rows without it.
  EXPECT_TRUE(u.loops[0].looped);
  EXPECT_FALSE(r.loops[0].looped) << text;
  const buffer<float, 2> expected = unscheduled_result();
  expect_equal(g.run(), expected);
  EXPECT_EQ(g.rows_per_call->size(), 2u) << text;
}

TEST(hints, a_cost_per_point_replaces_the_footprint_estimate) {
  // ab's n x n points at 100 and at 200 ns: the unscheduled estimates differ by n * n * 100 ns.
  product_chain g100({.ns_per_point = 100}), g200({.ns_per_point = 200});
  const schedule_report r100 = g100.schedule_it(), r200 = g200.schedule_it();
  const double diff = r200.loops[0].unscheduled_cost_ns - r100.loops[0].unscheduled_cost_ns;
  EXPECT_NEAR(diff, n * n * 100.0, 1e-6 * n * n * 100.0);
  // In the loop too: the chosen loop's estimate grows by the same work (the rows of ab are
  // computed once either way).
  ASSERT_TRUE(r100.loops[0].looped && r200.loops[0].looped);
  ASSERT_EQ(r100.loops[0].step, r200.loops[0].step);
  EXPECT_NEAR(r200.loops[0].cost_ns - r100.loops[0].cost_ns, n * n * 100.0, 1e-3 * n * n * 100.0);
}

// Time equal, memory decides, against no loop too: with caches holding the whole chain and each
// point costing 10 us (hinted), no loop is priced the cheapest by the loop's calls alone, and the
// loop over rows, within cost_model::step_cost_tolerance of it, holds a few rows of ab instead of
// all of it.
TEST(hints, a_loop_priced_as_no_loop_with_less_memory_is_taken) {
  product_chain g({.ns_per_point = 1e4}, {.ns_per_point = 1e4});
  machine m = small_machine();
  m.l1_bytes = 1 << 20;
  m.l2_bytes = 8 << 20;
  m.l3_bytes = 64 << 20;
  const schedule_report r =
      schedule({g.a, g.b, g.c}, {g.abc},
               schedule_shapes().add(g.a, {n, n}).add(g.b, {n, n}).add(g.c, {n, n}).add(g.abc, {n, n}), m);
  const std::string text = r.to_string(&g.ctx);
  ASSERT_EQ(r.loops.size(), 1u) << text;
  const schedule_report::loop_decision& l = r.loops[0];
  ASSERT_TRUE(l.looped) << text;
  EXPECT_GT(l.cost_ns, l.unscheduled_cost_ns) << text;
  EXPECT_LE(l.cost_ns, 1.01 * l.unscheduled_cost_ns) << text;
  EXPECT_LT(l.memory_bytes, static_cast<index_t>(n * n * sizeof(float))) << text;
  const buffer<float, 2> expected = unscheduled_result();
  expect_equal(g.run(), expected);
  EXPECT_GT(g.rows_per_call->size(), 2u) << text;
}

TEST(hints, kept_by_the_func_and_ignored_by_the_builder) {
  product_chain g({.dim = 1, .multiple = 8, .ns_per_call = 5, .ns_per_point = 7});
  EXPECT_EQ(g.funcs[0].hints().dim, 1);
  EXPECT_EQ(g.funcs[0].hints().multiple, 8);
  EXPECT_EQ(g.funcs[0].hints().ns_per_call, 5);
  EXPECT_EQ(g.funcs[0].hints().ns_per_point, 7);
  // Defaults: none.
  EXPECT_EQ(g.funcs[1].hints().dim, -1);
  EXPECT_EQ(g.funcs[1].hints().multiple, 1);
  EXPECT_LT(g.funcs[1].hints().ns_per_call, 0);
  EXPECT_LT(g.funcs[1].hints().ns_per_point, 0);
  // A moved func keeps them.
  func moved = std::move(g.funcs[0]);
  EXPECT_EQ(moved.hints().multiple, 8);
  g.funcs[0] = std::move(moved);
  EXPECT_EQ(g.funcs[0].hints().ns_per_point, 7);
  // Unscheduled, the pipeline is what it is without hints: one call per func.
  const buffer<float, 2> expected = unscheduled_result();
  expect_equal(g.run(), expected);
  EXPECT_EQ(g.rows_per_call->size(), 2u);
}

}  // namespace slinky
