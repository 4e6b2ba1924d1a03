// Unit tests of the builder's passes (build_pipeline.cc runs them in this order): check_graph,
// schedule_graph, bounds inference with the storage rounds of parallel loops, alias planning and
// emission, each on a small hand-built graph. They assert the decisions each pass makes (order,
// locations, regions, sliding, fold factors, pipelining, aliases, allocations), not printed
// programs; the end-to-end tests check what those decisions compute.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "slinky/builder/alias.h"
#include "slinky/builder/bounds.h"
#include "slinky/builder/emit.h"
#include "slinky/builder/graph.h"
#include "slinky/builder/refine_placement.h"
#include "slinky/builder/pipeline.h"
#include "slinky/builder/simplify.h"
#include "slinky/runtime/node_finder.h"
#include "slinky/runtime/print.h"

namespace slinky {
namespace {

index_t no_op(const buffer<const int>&, const buffer<int>&) { return 0; }

// The passes of build_pipeline up to bounds inference, with the same storage rounds.
struct lowered {
  graph g;
  std::optional<bounds_inference> bounds;

  lowered(node_context& ctx, const std::vector<buffer_expr_ptr>& inputs, const std::vector<buffer_expr_ptr>& outputs)
      : g(check_graph(ctx, inputs, outputs)) {
    schedule_graph(g);
    bounds.emplace(g);
    for (int round = 0; round < 8; ++round) {
      if (!share_overlapping_windows(g, *bounds) && !hoist_invariant_funcs(g, *bounds)) break;
      bounds.emplace(g);
    }
  }

  int func(const std::string& name) const {
    for (std::size_t i = 0; i < g.funcs.size(); ++i) {
      if (g.name(g.funcs[i]) == name) return static_cast<int>(i);
    }
    ADD_FAILURE() << "no func " << name;
    return -1;
  }
  int buffer(const buffer_expr_ptr& b) const { return g.buffer_index(b.get()); }
  // Loop `index` (innermost first, as func::loops lists them) of the named func.
  loop_level loop(const std::string& name, int index) const { return loop_level{func(name), index}; }
};

bool proved(const expr& e) { return prove_true(simplify(e)); }

// in -> a (pointwise) -> b (3x3) -> out (pointwise), each func declared before its producer.
struct stencil_chain {
  node_context ctx;
  var x{ctx, "x"}, y{ctx, "y"};
  buffer_expr_ptr in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  buffer_expr_ptr a = buffer_expr::make(ctx, "a", 2, sizeof(int));
  buffer_expr_ptr b = buffer_expr::make(ctx, "b", 2, sizeof(int));
  buffer_expr_ptr out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  func f_out = func::make(no_op, {{b, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "f_out"});
  func f_b = func::make(no_op, {{a, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{b, {x, y}}}, {.name = "f_b"});
  func f_a = func::make(no_op, {{in, {point(x), point(y)}}}, {{a, {x, y}}}, {.name = "f_a"});
};

TEST(passes, check_graph_orders_producers_first_and_links_buffers) {
  stencil_chain c;
  graph g = check_graph(c.ctx, {c.in}, {c.out});
  ASSERT_EQ(g.funcs.size(), 3u);
  EXPECT_EQ(g.name(g.funcs[0]), "f_a");
  EXPECT_EQ(g.name(g.funcs[1]), "f_b");
  EXPECT_EQ(g.name(g.funcs[2]), "f_out");
  const buffer_node& in = g.buffers[g.buffer_index(c.in.get())];
  const buffer_node& a = g.buffers[g.buffer_index(c.a.get())];
  const buffer_node& out = g.buffers[g.buffer_index(c.out.get())];
  EXPECT_TRUE(in.is_input);
  EXPECT_EQ(in.producer, -1);
  EXPECT_EQ(in.consumers, std::vector<int>{0});
  EXPECT_FALSE(a.is_input || a.is_output);
  EXPECT_EQ(a.producer, 0);
  EXPECT_EQ(a.consumers, std::vector<int>{1});
  EXPECT_TRUE(out.is_output);
  EXPECT_EQ(out.producer, 2);
  EXPECT_TRUE(g.funcs[2].produces_output);
  EXPECT_EQ(g.funcs[0].consumers, std::vector<int>{1});
}

TEST(passes, check_graph_reports_a_buffer_with_two_producers) {
  auto build = [] {
    node_context ctx;
    var x(ctx, "x");
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    func f = func::make(no_op, {{in, {point(x)}}}, {{out, {x}}}, {.name = "f"});
    func g = func::make(no_op, {{in, {point(x)}}}, {{out, {x}}}, {.name = "g"});
    check_graph(ctx, {in}, {out});
  };
  EXPECT_DEATH(build(), "buffer out is produced twice: by func f and by func g");
}

// Without compute_at, a func runs in the innermost loop containing its consumers; without
// store_at, an intermediate lives outside the serial loops around its producer.
TEST(passes, schedule_graph_places_funcs_at_their_consumers_loop) {
  stencil_chain c;
  c.f_out.loops({{c.y, 2}});
  lowered l(c.ctx, {c.in}, {c.out});
  const loop_level y = l.loop("f_out", 0);
  for (const char* name : {"f_a", "f_b"}) {
    const func_node& f = l.g.funcs[l.func(name)];
    EXPECT_TRUE(f.compute == y) << name;
    ASSERT_EQ(f.compute_chain.size(), 1u) << name;
    EXPECT_TRUE(f.compute_chain[0] == y) << name;
  }
  EXPECT_TRUE(l.g.buffers[l.buffer(c.a)].store.root());
  EXPECT_TRUE(l.g.buffers[l.buffer(c.b)].store.root());
  EXPECT_TRUE(l.g.funcs[l.func("f_out")].compute.root());
}

// The region a func computes is what its consumers read: the 3x3 stencil's producer covers the
// output grown by one on each side.
TEST(passes, bounds_of_a_stencil_producer_grow_by_its_halo) {
  stencil_chain c;
  lowered l(c.ctx, {c.in}, {c.out});
  const box_expr& a = l.bounds->needed[l.buffer(c.a)];
  ASSERT_EQ(a.size(), 2u);
  for (int d = 0; d < 2; ++d) {
    EXPECT_TRUE(proved(a[d].min == buffer_min(c.out->sym(), d) - 1)) << a[d].min;
    EXPECT_TRUE(proved(a[d].max == buffer_max(c.out->sym(), d) + 1)) << a[d].max;
  }
  const box_expr& b = l.bounds->needed[l.buffer(c.b)];
  for (int d = 0; d < 2; ++d) {
    EXPECT_TRUE(proved(b[d].min == buffer_min(c.out->sym(), d))) << b[d].min;
    EXPECT_TRUE(proved(b[d].max == buffer_max(c.out->sym(), d))) << b[d].max;
  }
  // Unscheduled: nothing slides, nothing folds.
  for (int bi : {l.buffer(c.a), l.buffer(c.b)}) {
    for (const expr& f : l.bounds->folds[bi]) EXPECT_FALSE(f.defined()) << f;
  }
}

// Rows in a serial loop of step s: a and b slide along it (each iteration computes only the rows
// earlier ones did not), and fold: b to the s rows of an iteration, a to the s + 2 rows the
// stencil reads.
TEST(passes, serial_loop_slides_and_folds_to_the_window) {
  for (index_t step : {1, 3}) {
    stencil_chain c;
    c.f_out.loops({{c.y, step}});
    lowered l(c.ctx, {c.in}, {c.out});
    const loop_level y = l.loop("f_out", 0);
    EXPECT_TRUE(l.bounds->slides_with(l.func("f_a"), y));
    EXPECT_FALSE(l.bounds->pipelined(y));
    const std::vector<expr>& a_folds = l.bounds->folds[l.buffer(c.a)];
    ASSERT_EQ(a_folds.size(), 2u);
    EXPECT_FALSE(a_folds[0].defined());
    ASSERT_TRUE(a_folds[1].defined());
    EXPECT_TRUE(proved(a_folds[1] <= step + 2)) << a_folds[1];
    EXPECT_TRUE(proved(a_folds[1] >= 1)) << a_folds[1];
    const std::vector<expr>& b_folds = l.bounds->folds[l.buffer(c.b)];
    ASSERT_TRUE(b_folds[1].defined());
    EXPECT_TRUE(proved(b_folds[1] <= step)) << b_folds[1];
    // Buffers moving with the loop only in y.
    EXPECT_FALSE(l.bounds->windows_overlap(l.buffer(c.b), y));
    EXPECT_TRUE(l.bounds->windows_overlap(l.buffer(c.a), y));
  }
}

// The same loop parallel (at most 2 workers): a's windows overlap across iterations, so it is
// stored outside the loop, slides with it, and the loop is pipelined with K = 2 iterations in
// flight, folding a over s + (s + 2) rows; b's windows do not overlap, so b stays inside the
// loop (a block per worker) and is not folded.
TEST(passes, parallel_loop_over_a_stencil_is_pipelined) {
  for (index_t step : {1, 3}) {
    stencil_chain c;
    c.f_out.loops({{c.y, step, 2}});
    lowered l(c.ctx, {c.in}, {c.out});
    const loop_level y = l.loop("f_out", 0);
    EXPECT_TRUE(l.g.buffers[l.buffer(c.a)].store.root());
    EXPECT_TRUE(l.g.buffers[l.buffer(c.b)].store == y);
    EXPECT_TRUE(l.bounds->pipelined(y));
    EXPECT_EQ(l.bounds->pipeline_workers(y), 2);
    EXPECT_TRUE(l.bounds->slides_with(l.func("f_a"), y));
    const std::vector<expr>& a_folds = l.bounds->folds[l.buffer(c.a)];
    ASSERT_TRUE(a_folds[1].defined());
    EXPECT_TRUE(proved(a_folds[1] <= 2 * step + 2)) << a_folds[1];
    for (const expr& f : l.bounds->folds[l.buffer(c.b)]) EXPECT_FALSE(f.defined()) << f;
  }
}

// Elementwise funcs in a parallel loop: nothing overlaps, nothing is pipelined, every
// intermediate is stored inside the loop (a block per worker).
TEST(passes, parallel_elementwise_chain_keeps_blocks_per_worker) {
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  func f_a = func::make(no_op, {{in, {point(x), point(y)}}}, {{a, {x, y}}}, {.name = "f_a"});
  func f_out = func::make(no_op, {{a, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "f_out"});
  f_out.loops({{y, 4, loop::parallel}});
  lowered l(ctx, {in}, {out});
  const loop_level loop_y = l.loop("f_out", 0);
  EXPECT_FALSE(l.bounds->windows_overlap(l.buffer(a), loop_y));
  EXPECT_FALSE(l.bounds->pipelined(loop_y));
  EXPECT_TRUE(l.g.buffers[l.buffer(a)].store == loop_y);
  for (const expr& f : l.bounds->folds[l.buffer(a)]) EXPECT_FALSE(f.defined()) << f;
}

// A column factor read in every row: hoisted out of the row loop (computed once).
TEST(passes, invariant_producer_is_hoisted_out_of_the_loop) {
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto col = buffer_expr::make(ctx, "col", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  func f_col = func::make(no_op, {{in, {point(x)}}}, {{col, {x}}}, {.name = "f_col"});
  func f_out = func::make(no_op, {{col, {point(x)}}}, {{out, {x, y}}}, {.name = "f_out"});
  f_out.loops({{y, 1}});
  lowered l(ctx, {in}, {out});
  const func_node& f = l.g.funcs[l.func("f_col")];
  EXPECT_TRUE(f.compute.root());
  ASSERT_TRUE(f.invariant_at.has_value());
  EXPECT_TRUE(f.invariant_at->root());
}

// A copy of an intermediate read by nothing else: the intermediate becomes a view of the copy's
// destination (its producer writes straight into the output) and the copy is removed; with
// aliasing off, neither.
TEST(passes, alias_plan_removes_a_copy_into_the_output) {
  for (bool enabled : {true, false}) {
    node_context ctx;
    var x(ctx, "x"), y(ctx, "y");
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    func f_a = func::make(no_op, {{in, {point(x), point(y)}}}, {{a, {x, y}}}, {.name = "f_a"});
    func copy = func::make_copy({a, {point(x), point(y)}}, {out, {x, y}});
    lowered l(ctx, {in}, {out});
    alias_plan plan = plan_aliases(l.g, *l.bounds, enabled);
    const int ai = l.buffer(a);
    EXPECT_EQ(plan.is_alias(ai), enabled);
    if (enabled) {
      EXPECT_EQ(plan.buffers[ai].target, l.buffer(out));
      EXPECT_EQ(plan.depth(ai), 1);
    }
    const int copy_index = l.g.func_index(&copy);
    ASSERT_GE(copy_index, 0);
    ASSERT_EQ(plan.removed[copy_index].size(), 1u);
    EXPECT_EQ(plan.removed[copy_index][0], enabled);
    EXPECT_FALSE(plan.is_alias(l.buffer(out)));
  }
}

// The number of nodes of a kind in a statement.
template <typename T>
int count_nodes(const stmt& s) {
  int n = 0;
  any_node(s, [&](const T*) {
    ++n;
    return node_search::search_children;
  });
  return n;
}

// Emission: one allocation per intermediate that is not an alias, one call per func, and a loop
// per loop of the schedule (before simplification).
TEST(passes, emit_program_allocates_each_intermediate_once) {
  stencil_chain c;
  c.f_out.loops({{c.y, 2}});
  lowered l(c.ctx, {c.in}, {c.out});
  alias_plan plan = plan_aliases(l.g, *l.bounds, true);
  stmt body = emit_program(l.g, *l.bounds, plan, c.ctx);
  EXPECT_EQ(count_nodes<allocate>(body), 2) << body;
  EXPECT_EQ(count_nodes<call_stmt>(body), 3) << body;
  EXPECT_EQ(count_nodes<loop>(body), 1) << body;
}

}  // namespace
}  // namespace slinky
