// The cost model's pricing of operands the callbacks read row by row (loop_analysis.h and
// cost_model.h, internal): a product's operand read whole for every row, one block of it per row
// where the product's reduction is split in blocks, and the windows every iteration reads whole
// again. docs/scheduler.md, "The cost model".
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/cost_model.h"
#include "slinky/scheduler/loop_analysis.h"
#include "slinky/scheduler/schedule.h"
#include "slinky/scheduler/test/schedule_test_util.h"

namespace slinky {

using namespace scheduler_internal;

namespace {

index_t product_kernel(const buffer<const float>&, const buffer<const float>&, const buffer<float>&) { return 0; }
index_t split_kernel(const buffer<const float>&, const buffer<const float>&, const buffer<float>&) { return 0; }
index_t stencil_kernel(const buffer<const float>&, const buffer<float>&) { return 0; }

// The development machine's description (48 KiB L1, 1 MiB L2, 8 MiB L3), one thread.
machine test_machine() { return schedule_test::development_machine(1); }

// partial(j, i, s) = sum over k in block s of a(k, i) b(j, k), `blocks` blocks of `block`: each
// row of partial (a run along j) reads one block of b's rows.
struct split_product {
  node_context ctx;
  buffer_expr_ptr a, b, partial;
  std::vector<func> funcs;
  sched_graph g;
  std::vector<index_range> full;
  std::unique_ptr<cost_model> model;
  std::unique_ptr<loop_analyzer> analyzer;

  split_product(index_t m_rows, index_t n, index_t block, index_t blocks, const machine& m) {
    var i(ctx, "i"), j(ctx, "j"), s(ctx, "s");
    a = buffer_expr::make(ctx, "a", 2, sizeof(float));
    b = buffer_expr::make(ctx, "b", 2, sizeof(float));
    partial = buffer_expr::make(ctx, "partial", 3, sizeof(float));
    const interval_expr ks = bounds(s * block, s * block + block - 1);
    funcs.push_back(func::make(split_kernel, {{a, {ks, point(i)}}, {b, {point(j), ks}}}, {{partial, {j, i, s}}},
                               {.name = "partial"}));
    const index_t k = block * blocks;
    const schedule_shapes shapes =
        schedule_shapes().add(a, {k, m_rows}).add(b, {n, k}).add(partial, {n, m_rows, blocks});
    build_sched_graph({a, b}, {partial}, shapes, g);
    model = std::make_unique<cost_model>(m, 0.5);
    full_regions(g, *model, full);
    analyzer = std::make_unique<loop_analyzer>(g, full, *model);
  }
  loop_analysis plan(int dim) {
    loop_analysis p;
    analyzer->analyze(0, dim, {0}, /*recompute=*/false, p);
    return p;
  }
};

// c = a x b (c(j, i) = sum_k a(k, i) b(j, k)) of m_rows x n, depth k, analyzed for machine m.
struct product {
  node_context ctx;
  buffer_expr_ptr a, b, c;
  func f_c;
  schedule_shapes shapes;
  sched_graph g;
  cost_model model;
  std::vector<index_range> full;

  product(index_t m_rows, index_t k, index_t n, const machine& m, const func::cost_hints& hints = {}) : model(m, 0.5) {
    var i(ctx, "i"), j(ctx, "j");
    a = buffer_expr::make(ctx, "a", 2, sizeof(float));
    b = buffer_expr::make(ctx, "b", 2, sizeof(float));
    c = buffer_expr::make(ctx, "c", 2, sizeof(float));
    f_c = func::make(product_kernel, {{a, {bounds(0, k - 1), point(i)}}, {b, {point(j), bounds(0, k - 1)}}},
                     {{c, {j, i}}}, {.name = "c"});
    f_c.hints(hints);
    shapes = schedule_shapes().add(a, {k, m_rows}).add(b, {n, k}).add(c, {n, m_rows});
    build_sched_graph({a, b}, {c}, shapes, g);
    full_regions(g, model, full);
  }
};

}  // namespace

// A product c = a x b (c(j, i) = sum_k a(k, i) b(j, k)) reads all of b for every row of c: the
// analysis counts those reads (b's window times the rows, per iteration) apart from the single
// read of b the estimate charges, and the cost model prices every read but the first at the rate
// of the level b's window fits in. Computed whole at the root, c reads b again for each of its rows
// but the first; a strip of c's columns reads the matching strip of b for each of its rows.
TEST(cost_model, rows_read_an_operand_read_whole_again) {
  const index_t m_rows = 64, k = 32, n = 1024;
  machine m = test_machine();
  m.threads = 1;
  product p(m_rows, k, n, m);
  const sched_graph& g = p.g;
  const cost_model& model = p.model;
  const std::vector<index_range>& full = p.full;
  ASSERT_EQ(g.nodes.size(), 1u);
  const sched_node& node = g.nodes[0];
  const double b_bytes = static_cast<double>(n * k * sizeof(float));
  // a is read a row per row of c, b whole for every row.
  ASSERT_EQ(node.row_window_share.size(), 2u);
  EXPECT_EQ(node.row_window_share[0], 0);
  EXPECT_EQ(node.row_window_share[1], 1);
  ASSERT_EQ(node.at_root.rereads.size(), 1u);
  EXPECT_DOUBLE_EQ(node.at_root.rereads[0].bytes, (m_rows - 1) * b_bytes);
  EXPECT_EQ(node.at_root.rereads[0].level, model.level_of(b_bytes));
  // Charged beyond the callback's work (its footprint at L1's rate here): b of 128 KiB in the L2
  // hides behind it.
  const double reread = (m_rows - 1) * b_bytes * m.ns_per_byte[model.level_of(b_bytes)];
  const double work = static_cast<double>(m_rows * n) * model.point_ns(node.at_root.footprint_bytes, -1);
  EXPECT_GT(work, 0);
  int level = -1;
  EXPECT_DOUBLE_EQ(model.roots_reread_ns({{&node.at_root, 0}}, level), std::max(0.0, reread - work));
  EXPECT_EQ(level, model.level_of(b_bytes));

  loop_analyzer analyzer(g, full, model);
  loop_analysis rows;
  analyzer.analyze(0, 1, {0}, /*recompute=*/false, rows);
  ASSERT_TRUE(rows.ok);
  ASSERT_EQ(rows.counts.rereads.size(), 1u);
  const loop_counts::reread& r = rows.counts.rereads[0];
  EXPECT_DOUBLE_EQ(r.window, b_bytes);
  EXPECT_EQ(r.level, model.level_of(b_bytes));
  // Per iteration: its rows times b.
  EXPECT_DOUBLE_EQ(r.bytes(1, rows.probe_step()), b_bytes);
  EXPECT_DOUBLE_EQ(r.bytes(4, rows.probe_step()), 4 * b_bytes);
  // Whatever the step, every row reads b: the same as at the root.
  for (index_t step : {1, 4, 16}) {
    EXPECT_DOUBLE_EQ(model.rereads_ns(rows.counts, step), node.at_root.rereads[0].bytes * m.ns_per_byte[r.level]);
    const loop_estimate e = model.loop(rows.counts, step, 1);
    EXPECT_DOUBLE_EQ(e.reread_ns, std::max(0.0, model.rereads_ns(rows.counts, step) - work));
    EXPECT_EQ(e.reread_level, r.level);
  }

  // A strip of 64 columns of c: a strip of b (8 KiB) read by every row of the strip.
  loop_analysis tile;
  analyzer.analyze(0, 1, {0}, /*recompute=*/false, tile, strip{0, 64});
  ASSERT_TRUE(tile.ok);
  EXPECT_EQ(tile.strips, n / 64);
  ASSERT_EQ(tile.counts.rereads.size(), 1u);
  const double strip_bytes = 64.0 * k * sizeof(float);
  EXPECT_DOUBLE_EQ(tile.counts.rereads[0].window, strip_bytes);
  EXPECT_EQ(tile.counts.rereads[0].level, model.level_of(strip_bytes));
  EXPECT_LT(model.level_of(strip_bytes), model.level_of(b_bytes));
  EXPECT_DOUBLE_EQ(model.rereads_ns(tile.counts, 2),
                   (m_rows - 1) * strip_bytes * m.ns_per_byte[model.level_of(strip_bytes)]);
}

// Rereads are a stream the hardware prefetches while the callbacks compute: only their time beyond
// the work of the funcs that read them is charged. A product c = a x b whose b (1 MiB) exceeds the
// L2's budget reads it again from the L3 for every row, a strip of c's columns a strip of b from
// the L2: with no work to hide behind (a hinted cost per point of 0) the rereads are all charged
// and a tile wins; behind a product's work of 100 ns per point (what its author says it costs),
// none is charged, the tile's strips gain nothing, and rows are taken whole.
TEST(cost_model, rereads_hide_behind_the_callbacks_work) {
  const index_t m_rows = 64, k = 256, n = 1024;
  const machine m = test_machine();
  for (double point_ns : {0.0, 100.0}) {
    product p(m_rows, k, n, m, {.ns_per_point = point_ns});
    const sched_graph& g = p.g;
    const cost_model& model = p.model;
    const double b_bytes = static_cast<double>(n * k * sizeof(float));
    ASSERT_GT(model.level_of(b_bytes), 1);
    const sched_node& node = g.nodes[0];
    const double reread = (m_rows - 1) * b_bytes * m.ns_per_byte[model.level_of(b_bytes)];
    const double work = static_cast<double>(m_rows * n) * point_ns;
    // b's rereads from the L3: 16 MiB per 64 K points, 1 KiB (16 to 20 ns) per point.
    ASSERT_LT(reread, static_cast<double>(m_rows * n) * 100.0);
    int level = -1;
    EXPECT_DOUBLE_EQ(model.roots_reread_ns({{&node.at_root, 0}}, level), std::max(0.0, reread - work));
    loop_analyzer analyzer(g, p.full, model);
    loop_analysis rows;
    analyzer.analyze(0, 1, {0}, /*recompute=*/false, rows);
    ASSERT_TRUE(rows.ok);
    for (index_t step : {1, 4}) {
      EXPECT_DOUBLE_EQ(model.rereads_ns(rows.counts, step), reread);
      EXPECT_DOUBLE_EQ(model.loop(rows.counts, step, 1).reread_ns, point_ns > 0 ? 0 : reread);
    }

    const schedule_report r = schedule({p.a, p.b}, {p.c}, p.shapes, m);
    const std::string text = r.to_string(&p.ctx);
    ASSERT_EQ(r.loops.size(), 1u) << text;
    if (point_ns > 0) {
      EXPECT_EQ(r.loops[0].outer_dim, -1) << text;
      EXPECT_EQ(r.loops[0].reread_cost_ns, 0) << text;
    } else {
      EXPECT_EQ(r.loops[0].outer_dim, 0) << text;
      EXPECT_GT(r.loops[0].reread_cost_ns, 0) << text;
      EXPECT_LT(r.loops[0].reread_cost_ns, r.loops[0].unscheduled_reread_cost_ns) << text;
    }
  }
}

// A product whose reduction is split in blocks (partial(j, i, s) over block s of b's rows) reads
// one block of b for each row of partial: an eighth of b's window per row, the rows of one block
// (along i) reading the same one. The rows' reads beyond the first read of b are priced at the
// level one block fits in (the L2 here), the same for every step; where b as a whole fits only
// the L3, each iteration after the first reads it from there once more (loop_prices::refetch_ns,
// in the estimate): fewer, larger iterations read it fewer times.
TEST(cost_model, rows_read_a_block_of_an_operand_whose_reduction_is_split) {
  const index_t m_rows = 64, n = 1024, block = 32, blocks = 8;
  const machine m = test_machine();
  split_product p(m_rows, n, block, blocks, m);
  const cost_model& model = *p.model;
  ASSERT_EQ(p.g.nodes.size(), 1u);
  const sched_node& node = p.g.nodes[0];
  const double b_bytes = static_cast<double>(n * block * blocks * sizeof(float));
  const double block_bytes = b_bytes / blocks;
  ASSERT_EQ(model.level_of(block_bytes), 1);
  ASSERT_EQ(model.level_of(b_bytes), 2);
  // a's rows read disjoint pieces of it (along i and along s): not read row by row.
  ASSERT_EQ(node.row_window_share.size(), 2u);
  EXPECT_EQ(node.row_window_share[0], 0);
  EXPECT_DOUBLE_EQ(node.row_window_share[1], 1.0 / blocks);
  // At the root: m_rows * blocks rows read a block each, b's first read aside.
  ASSERT_EQ(node.at_root.rereads.size(), 1u);
  EXPECT_DOUBLE_EQ(node.at_root.rereads[0].bytes, (m_rows - 1) * b_bytes);
  EXPECT_EQ(node.at_root.rereads[0].level, 1);

  const loop_analysis rows = p.plan(1);
  ASSERT_TRUE(rows.ok);
  ASSERT_EQ(rows.counts.rereads.size(), 1u);
  const loop_counts::reread& r = rows.counts.rereads[0];
  EXPECT_DOUBLE_EQ(r.window, b_bytes);
  EXPECT_EQ(r.level, 1);
  EXPECT_EQ(r.window_level, 2);
  EXPECT_DOUBLE_EQ(r.bytes(1, rows.probe_step()), b_bytes);
  EXPECT_DOUBLE_EQ(r.bytes(4, rows.probe_step()), 4 * b_bytes);
  EXPECT_TRUE(rows.counts.refetched.empty());
  const loop_prices prices = model.price(rows.counts);
  const double refetch = b_bytes * (m.ns_per_byte[2] - m.ns_per_byte[1]);
  EXPECT_DOUBLE_EQ(prices.refetch_ns, refetch);
  // The same counts with b's whole window in the L2 price none.
  loop_counts in_l2 = rows.counts;
  in_l2.rereads[0].window_level = 1;
  EXPECT_DOUBLE_EQ(model.price(in_l2).refetch_ns, 0);
  for (index_t step : {1, 4, 16}) {
    // The rows' reads: as at the root, whatever the step.
    EXPECT_DOUBLE_EQ(model.rereads_ns(rows.counts, step), (m_rows - 1) * b_bytes * m.ns_per_byte[1]);
    const double iterations = static_cast<double>(m_rows / step);
    const loop_estimate e = model.loop(rows.counts, step, 1);
    EXPECT_NEAR(e.ns - model.loop(in_l2, step, 1).ns, (iterations - 1) * refetch, 1e-6 * e.ns) << step;
  }
  EXPECT_GT(model.loop(rows.counts, 1, 1).ns, model.loop(rows.counts, 16, 1).ns);
}

// A window every iteration reads whole that its funcs do not read row by row (a of the split
// product looped over the columns of b: every column needs all of a) is read again by each
// iteration after the first, from the level it fits in alone, beyond what the callbacks' work
// prices at L1's rate.
TEST(cost_model, windows_every_iteration_reads_whole_are_read_again_by_each) {
  const index_t m_rows = 1024, n = 1024, block = 32, blocks = 8;
  const machine m = test_machine();
  split_product p(m_rows, n, block, blocks, m);
  const cost_model& model = *p.model;
  const double a_bytes = static_cast<double>(m_rows * block * blocks * sizeof(float));
  ASSERT_EQ(model.level_of(a_bytes), 2);
  const loop_analysis columns = p.plan(0);
  ASSERT_TRUE(columns.ok);
  // b moves with the columns: not invariant, not read again.
  EXPECT_TRUE(columns.counts.rereads.empty());
  ASSERT_EQ(columns.counts.refetched.size(), 1u);
  EXPECT_DOUBLE_EQ(columns.counts.refetched[0].bytes, a_bytes);
  EXPECT_EQ(columns.counts.refetched[0].level, 2);
  const double refetch = a_bytes * (m.ns_per_byte[2] - m.ns_per_byte[0]);
  EXPECT_DOUBLE_EQ(model.price(columns.counts).refetch_ns, refetch);
  loop_counts none = columns.counts;
  none.refetched.clear();
  for (index_t step : {16, 64}) {
    const double iterations = static_cast<double>(n / step);
    EXPECT_NEAR(model.loop(columns.counts, step, 1).ns - model.loop(none, step, 1).ns, (iterations - 1) * refetch,
                1e-6 * refetch * iterations)
        << step;
  }
}

// A stencil's rows read windows overlapping their neighbours' (along y): not read row by row,
// whatever other dims share them.
TEST(cost_model, stencil_rows_are_not_read_row_by_row) {
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y"), c(ctx, "c");
  auto in = buffer_expr::make(ctx, "in", 3, sizeof(float));
  auto out = buffer_expr::make(ctx, "out", 3, sizeof(float));
  func f = func::make(stencil_kernel, {{in, {bounds(x - 1, x + 1), bounds(y - 1, y + 1), bounds(0, 15)}}},
                      {{out, {x, y, c}}}, {.name = "out"});
  const schedule_shapes shapes = schedule_shapes().add(in, {258, 258, 16}).add(out, {256, 256, 16});
  sched_graph g;
  build_sched_graph({in}, {out}, shapes, g);
  const cost_model model(test_machine(), 0.5);
  std::vector<index_range> full;
  full_regions(g, model, full);
  ASSERT_EQ(g.nodes.size(), 1u);
  ASSERT_EQ(g.nodes[0].row_window_share.size(), 1u);
  EXPECT_EQ(g.nodes[0].row_window_share[0], 0);
  EXPECT_TRUE(g.nodes[0].at_root.rereads.empty());
}

}  // namespace slinky
