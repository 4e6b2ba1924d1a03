// The scheduler's tiles and parallel loops: a wide stencil or a product whose rows do not fit the
// L2 gets a tile, a narrow one none; parallel loops where there are threads, pipelined or
// data-parallel with the overlaps recomputed, their strips sized between the L2 and L3 budgets.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/schedule.h"
#include "slinky/scheduler/test/schedule_test_util.h"

namespace slinky {

using namespace schedule_test;

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
  const machine m = development_machine(2);
  schedule_report r = schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 2, h + 2}).add(g->out, {w, h}), m);
  const std::string text = r.to_string(&g->ctx);
  const schedule_report::loop_decision& l = r.loops[0];
  ASSERT_TRUE(l.looped) << text;
  EXPECT_EQ(l.dim, 1) << text;
  EXPECT_TRUE(l.parallel) << text;
  EXPECT_LE(l.working_set_bytes, m.l3_bytes / 2) << text;
  EXPECT_EQ(l.step, 32) << text;
}

// ... and within the threads' share of a larger L3 (cost_model::l3_bytes_per_thread each): the
// 3-stage parallel stencil of 4096 x 4096 on 2 threads of an L3 of 32 MiB was pipelined in strips
// of 128 rows (8.1 MiB), no faster than strips of 32 (2.1 MiB). On 8 threads the share is the
// whole L3. Scheduled only (not evaluated).
TEST(schedule, parallel_strips_stay_within_the_threads_share_of_a_large_l3) {
  const index_t w = 4096, h = 4096;
  for (int threads : {2, 8}) {
    auto g = stencil_chain(3);
    machine m = development_machine(threads);
    m.l3_bytes = 32 * 1024 * 1024;
    schedule_report r =
        schedule({g->in}, {g->out}, schedule_shapes().add(g->in, {w + 4, h + 4}).add(g->out, {w, h}), m);
    const std::string text = r.to_string(&g->ctx);
    const schedule_report::loop_decision& l = r.loops[0];
    ASSERT_TRUE(l.looped) << text;
    EXPECT_EQ(l.dim, 1) << text;
    EXPECT_TRUE(l.parallel) << text;
    const index_t share = std::min<index_t>(m.l3_bytes, threads * 4 * 1024 * 1024) / 2;
    EXPECT_LE(l.working_set_bytes, share) << text;
    if (threads == 2) {
      EXPECT_LE(l.memory_bytes, 4 * 1024 * 1024) << text;
    }
  }
}

}  // namespace slinky

namespace slinky {

using namespace schedule_test;

namespace {

// partial(j, i, s) = sum over k in block s of a(k, i) b(j, k); out(j, i) = sum over s of
// partial(j, i, s): a product whose reduction is split in blocks, each row of partial reading one
// block of b's rows.
struct split_product_graph {
  node_context ctx;
  buffer_expr_ptr a, b, partial, out;
  std::vector<func> funcs;

  explicit split_product_graph(index_t block, index_t blocks) {
    var i(ctx, "i"), j(ctx, "j"), s(ctx, "s");
    a = buffer_expr::make(ctx, "a", 2, sizeof(float));
    b = buffer_expr::make(ctx, "b", 2, sizeof(float));
    partial = buffer_expr::make(ctx, "partial", 3, sizeof(float));
    out = buffer_expr::make(ctx, "out", 2, sizeof(float));
    auto partial_sums = [block](const buffer<const float>& a, const buffer<const float>& b, const buffer<float>& p) {
      for (index_t s = p.dim(2).min(); s <= p.dim(2).max(); ++s) {
        for (index_t i = p.dim(1).min(); i <= p.dim(1).max(); ++i) {
          for (index_t j = p.dim(0).min(); j <= p.dim(0).max(); ++j) {
            float sum = 0.0f;
            for (index_t k = s * block; k < (s + 1) * block; ++k) sum += a(k, i) * b(j, k);
            p(j, i, s) = sum;
          }
        }
      }
      return 0;
    };
    auto sum_blocks = [](const buffer<const float>& p, const buffer<float>& out) {
      for (index_t i = out.dim(1).min(); i <= out.dim(1).max(); ++i) {
        for (index_t j = out.dim(0).min(); j <= out.dim(0).max(); ++j) {
          float sum = 0.0f;
          for (index_t s = p.dim(2).min(); s <= p.dim(2).max(); ++s) sum += p(j, i, s);
          out(j, i) = sum;
        }
      }
      return 0;
    };
    const interval_expr ks = bounds(s * block, s * block + block - 1);
    funcs.push_back(func::make(std::move(partial_sums), {{a, {ks, point(i)}}, {b, {point(j), ks}}},
                               {{partial, {j, i, s}}}, {.name = "partial"}));
    funcs.push_back(func::make(std::move(sum_blocks), {{partial, {point(j), point(i), bounds(0, blocks - 1)}}},
                               {{out, {j, i}}}, {.name = "out"}));
  }
};

}  // namespace

// The split product on a machine whose L2 holds one block of b but not b: looping over the rows
// of partial one at a time, every iteration would read all of b from the L3 again (one block per
// row of each block). The scheduler takes fewer iterations (larger steps, a tile whose strips of
// b fit the L2, or no loop), and the pipeline computes the product.
TEST(schedule, split_product_reads_its_operand_from_beyond_the_l2_in_few_iterations) {
  const index_t m_rows = 64, n = 64, block = 32, blocks = 16, k = block * blocks;
  const machine m = small_machine();
  ASSERT_GT(n * k * index_t{sizeof(float)}, m.l2_bytes);
  ASSERT_LE(n * block * index_t{sizeof(float)}, m.l2_bytes / 2);
  split_product_graph g(block, blocks);
  schedule_report r = schedule({g.a, g.b}, {g.out},
                               schedule_shapes().add(g.a, {k, m_rows}).add(g.b, {n, k}).add(g.out, {n, m_rows}), m);
  const std::string text = r.to_string(&g.ctx);
  // b read whole (untiled) by every iteration: at most a quarter as many iterations as rows.
  if (r.loops[0].looped && r.loops[0].outer_dim < 0) {
    EXPECT_LE(r.loops[0].iterations, m_rows / 4) << text;
  }
  buffer<float, 2> a_buf({k, m_rows}), b_buf({n, k}), out_buf({n, m_rows});
  for (auto* x : {&a_buf, &b_buf, &out_buf}) x->allocate();
  for (index_t i = 0; i < m_rows; ++i) {
    for (index_t kk = 0; kk < k; ++kk) a_buf(kk, i) = static_cast<float>((i * 7 + kk * 3) % 11) - 5.0f;
  }
  for (index_t kk = 0; kk < k; ++kk) {
    for (index_t j = 0; j < n; ++j) b_buf(j, kk) = static_cast<float>((kk * 5 + j) % 13) - 6.0f;
  }
  pipeline p = build_pipeline(g.ctx, {g.a, g.b}, {g.out});
  const raw_buffer* inputs[] = {&a_buf, &b_buf};
  const raw_buffer* outputs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(inputs, outputs), 0) << text;
  for (index_t i = 0; i < m_rows; ++i) {
    for (index_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (index_t kk = 0; kk < k; ++kk) sum += a_buf(kk, i) * b_buf(j, kk);
      ASSERT_EQ(out_buf(j, i), sum) << i << ", " << j;
    }
  }
}

}  // namespace slinky
