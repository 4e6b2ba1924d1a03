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

#include "slinky/scheduler/test/schedule_test_util.h"

namespace slinky {

using namespace schedule_test;

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
    // Not much smaller than the budget allows: eight times the step would not fit. (The step with
    // the least memory of those priced within cost_model::step_cost_tolerance of the cheapest:
    // at 1 MiB, strips of 8 rows rather than the budget's 32, the rows each strip reads again of
    // the previous one's mostly hidden behind the work: cost_model::overlap_hidden.)
    EXPECT_GT(stencil2_working_set(w, 8 * step), r.loops[0].budget_bytes);
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

namespace slinky {
namespace schedule_test {

// A chain over buffers in memory takes chunks of each stream within the prefetcher's window
// (machine::prefetch_bytes: 2 KiB, chunks of 512 floats), where the same machine without it takes
// chunks as large as its L1 budget allows; it computes what it computed unscheduled.
TEST(elementwise_steps, chunks_of_streams_from_memory_fit_the_prefetch_window) {
  machine m = development_machine(1);
  const index_t n = 16 << 20;
  auto step_of = [&](const machine& mm, schedule_report* out) {
    auto g = elementwise_chain(4);
    schedule_report r = schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {n}).add(g->out, {n}), mm);
    EXPECT_TRUE(r.loops[0].looped) << r.to_string(&g->ctx);
    if (out) *out = r;
    return r.loops[0].step;
  };
  EXPECT_GE(step_of(m, nullptr), 1024);
  m.prefetch_bytes = 2048;
  EXPECT_EQ(step_of(m, nullptr), 512);
  // Two threads: the parallel loop, in chunks beyond the window. Priced with what the prefetcher
  // hides, it is about as fast as the serial chunks of 512; with every byte from memory paid, it
  // beats them by the margin a parallel loop must win by (cost_model::parallel_gain), and that is
  // how it is judged (on the AMD development machine the serial chunks ran 6.5 to 7.2 ms, the
  // parallel loop 4.7 to 5.7).
  m.threads = 2;
  schedule_report r;
  EXPECT_GT(step_of(m, &r), 512);
  EXPECT_TRUE(r.loops[0].parallel);

  // What it computes, on a smaller chain (the same steps, its buffers in memory on this machine).
  auto g = elementwise_chain(4);
  const index_t small = 1 << 20;
  m.threads = 1;
  m.l3_bytes = 1024 * 1024;
  schedule_report rs = schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {small}).add(g->out, {small}), m);
  EXPECT_EQ(rs.loops[0].step, 512) << rs.to_string(&g->ctx);
  auto plain = elementwise_chain(4);
  pipeline p0 = plain->build();
  pipeline p = g->build();
  expect_equal(run1d(p, small), run1d(p0, small));
}

}  // namespace schedule_test
}  // namespace slinky
