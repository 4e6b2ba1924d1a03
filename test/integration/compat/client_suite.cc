// Compatibility tests of the behaviours the largest known client's own test suite relies on
// (API_COMPAT 5.1): buffers of element size 0 as a reduction's dummy output, input bounds longer
// than the input's rank, undefined expressions given to the simplifier's queries, inputs used only
// for their shape, and packed-index bounds. Each is written the way that client writes it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/builder/simplify.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/depends_on.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/pipeline.h"

namespace {

using namespace slinky;

// Counts the heap allocations made through the eval_config hook.
struct counted_config {
  eval_config config;
  int allocations = 0;
  counted_config() {
    config.allocate = [this](var, raw_buffer* b) {
      ++allocations;
      return b->allocate();
    };
    config.free = [](var, raw_buffer*, void* p) { ::free(p); };
  }
};

// One row of `rows` x `k` floats summed into out(row): the reduction dimension k is a second output
// of element size 0 and stride 0 that nothing consumes (a dot's or a reduce's "reduction" buffer).
// The split factor of the reduction reaches the callback as the fold factor of that dimension.
struct reduction_case {
  index_t rows, k, split;
  int calls = 0;
  int bad_descriptors = 0;

  void run(bool parallel_rows) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(float));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(float));
    auto reduction = buffer_expr::make(ctx, "reduction", 1, 0);
    var r(ctx, "r"), i(ctx, "i");
    reduction->dim(0).bounds = min_extent(0, in->dim(0).extent());
    reduction->dim(0).stride = 0;
    reduction->dim(0).fold_factor = split;

    func f = func::make(
        [this](const buffer<const float>& a, const buffer<float>& c, const raw_buffer& red) -> index_t {
          ++calls;
          const dim& rd = red.dim(0);
          if (red.elem_size != 0 || rd.stride() != 0 || rd.fold_factor() != split) ++bad_descriptors;
          // The chunk of the reduction this call covers: the loop's step, truncated at the end.
          if (rd.min() % split != 0 || rd.max() != std::min(rd.min() + split, k) - 1) ++bad_descriptors;
          for (index_t y = c.dim(0).begin(); y < c.dim(0).end(); ++y) {
            float sum = rd.min() == 0 ? 0.0f : c(y);
            for (index_t x = rd.min(); x <= rd.max(); ++x) sum += a(x, y);
            c(y) = sum;
          }
          return 0;
        },
        {{in, {point(r), point(i)}}}, {{out, {i}}, {reduction, {r}}});
    std::vector<func::loop_info> loops = {{r, split}};
    if (parallel_rows) loops.push_back({i, 2, loop::parallel});
    f.loops(loops);
    pipeline p = build_pipeline(ctx, {in}, {out});

    buffer<float, 2> in_buf({k, rows});
    buffer<float, 1> out_buf({rows});
    in_buf.allocate();
    out_buf.allocate();
    for (index_t y = 0; y < rows; ++y) {
      for (index_t x = 0; x < k; ++x) in_buf(x, y) = static_cast<float>((x + 3 * y) % 7);
    }
    counted_config hooks;
    thread_pool_impl pool(2);
    hooks.config.thread_pool = &pool;
    eval_context ectx;
    ectx.config = &hooks.config;
    const raw_buffer* inputs[] = {&in_buf};
    const raw_buffer* outputs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(inputs, outputs, ectx), 0);
    EXPECT_EQ(hooks.allocations, 0) << "a buffer of element size 0 is allocated as nothing";
    for (index_t y = 0; y < rows; ++y) {
      float expected = 0;
      for (index_t x = 0; x < k; ++x) expected += in_buf(x, y);
      EXPECT_EQ(out_buf(y), expected) << y;
    }
  }
};

}  // namespace

TEST(compat_client, element_size_zero_reduction_output) {
  reduction_case c{5, 10, 4};
  c.run(/*parallel_rows=*/false);
  EXPECT_EQ(c.calls, 3);  // [0, 3], [4, 7], [8, 9]
  EXPECT_EQ(c.bad_descriptors, 0);
}

TEST(compat_client, element_size_zero_reduction_output_parallel) {
  reduction_case c{7, 9, 3};
  c.run(/*parallel_rows=*/true);
  EXPECT_EQ(c.calls, 3 * 4);  // 3 chunks of the reduction, 4 chunks of rows
  EXPECT_EQ(c.bad_descriptors, 0);
}

TEST(compat_client, input_bounds_longer_than_the_rank) {
  // out(x, y) = table(in(x, y)) + bias: the rank-1 table and the rank-0 bias are given the
  // output's box (the first rank entries are used, the rest ignored).
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(uint8_t));
  auto table = buffer_expr::make(ctx, "table", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  auto bias = buffer_expr::make_scalar<int>(ctx, "bias", 1000);
  func f = func::make(
      [](const buffer<const uint8_t>& a, const buffer<const int>& t, const buffer<const int>& b,
         const buffer<int>& c) -> index_t {
        if (t.rank != 1 || b.rank != 0) return 1;
        for (index_t j = c.dim(1).begin(); j < c.dim(1).end(); ++j) {
          for (index_t i = c.dim(0).begin(); i < c.dim(0).end(); ++i) c(i, j) = t(a(i, j)) + b();
        }
        return 0;
      },
      {{in, {point(x), point(y)}}, {table, {table->dim(0).bounds, point(y), point(x)}}, {bias, {point(x), point(y)}}},
      {{out, {x, y}}});
  f.loops({{y, 1}});
  pipeline p = build_pipeline(ctx, {in, table}, {out});

  buffer<uint8_t, 2> in_buf({5, 3});
  buffer<int, 1> table_buf({256});
  buffer<int, 2> out_buf({5, 3});
  in_buf.allocate();
  table_buf.allocate();
  out_buf.allocate();
  for (index_t i = 0; i < 256; ++i) table_buf(i) = static_cast<int>(i * i);
  for (index_t j = 0; j < 3; ++j) {
    for (index_t i = 0; i < 5; ++i) in_buf(i, j) = static_cast<uint8_t>(i * 40 + j);
  }
  const raw_buffer* inputs[] = {&in_buf, &table_buf};
  const raw_buffer* outputs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(inputs, outputs), 0);
  for (index_t j = 0; j < 3; ++j) {
    for (index_t i = 0; i < 5; ++i) EXPECT_EQ(out_buf(i, j), in_buf(i, j) * in_buf(i, j) + 1000);
  }
}

TEST(compat_client, copy_bounds_longer_than_the_rank) {
  // A copy broadcasting a rank-1 row into every row of a rank-2 output, the row given the
  // output's box.
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  func f = func::make_copy({in, {point(x), point(y)}}, {out, {x, y}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> in_buf({4});
  buffer<int, 2> out_buf({4, 3});
  in_buf.allocate();
  out_buf.allocate();
  for (index_t i = 0; i < 4; ++i) in_buf(i) = static_cast<int>(7 * i + 1);
  const raw_buffer* inputs[] = {&in_buf};
  const raw_buffer* outputs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(inputs, outputs), 0);
  for (index_t j = 0; j < 3; ++j) {
    for (index_t i = 0; i < 4; ++i) EXPECT_EQ(out_buf(i, j), 7 * i + 1);
  }
}

TEST(compat_client, undefined_expressions_in_queries) {
  node_context ctx;
  var x(ctx, "x");
  const expr unknown;
  // Proofs about an unknown extent are not proven, either way.
  EXPECT_FALSE(prove_true(unknown == 5));
  EXPECT_FALSE(prove_false(unknown == 5));
  EXPECT_FALSE(prove_true(unknown));
  EXPECT_FALSE(prove_true(x == 0 && unknown == x));
  EXPECT_FALSE(prove_true(unknown == unknown));
  EXPECT_FALSE(attempt_to_prove(unknown > 1).has_value());
  // Simplifying gives undefined.
  EXPECT_FALSE(simplify(unknown).defined());
  EXPECT_FALSE(simplify(max(1, min(64, unknown))).defined());
  EXPECT_FALSE(simplify(select(x < 3, unknown, 2)).defined());
  EXPECT_FALSE(evaluate_constant(unknown + 1).has_value());
  // Bounds of an unknown are unbounded (undefined ends).
  interval_expr b = bounds_of(unknown + 1);
  EXPECT_FALSE(b.min.defined());
  EXPECT_FALSE(b.max.defined());
  interval_expr s = simplify(interval_expr(x + 0, unknown));
  EXPECT_TRUE(match(s.min, x));
  EXPECT_FALSE(s.max.defined());
  // Defined parts still simplify and prove as before.
  EXPECT_TRUE(prove_true(max(1, min(64, x)) >= 1));
  EXPECT_TRUE(match(simplify(max(1, min(64, expr(5)))), 5));
  // The other queries walk past undefined operands.
  EXPECT_TRUE(depends_on(max(1, min(x, unknown)), x).any());
  EXPECT_FALSE(depends_on(unknown + 1, x).any());
  EXPECT_TRUE(is_pure(min(x, unknown)));
}

namespace {

// out = in broadcast to the shape of `shape`, a pipeline input read for its extents only.
void run_shape_only(std::size_t shape_rank) {
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto shape = buffer_expr::make(ctx, "shape", shape_rank, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  // The broadcast's second dimension takes the shape's extent when in has extent 1 there.
  expr ext = shape_rank > 0 ? select(in->dim(1).extent() == 1, shape->dim(0).extent(), in->dim(1).extent())
                            : in->dim(1).extent();
  func f = func::make_copy({in, {point(x), point(select(in->dim(1).extent() == 1, 0, y))}}, {out, {x, y}});
  out->dim(1).bounds = min_extent(0, ext);
  pipeline p = build_pipeline(ctx, {in, shape}, {out});

  buffer<int, 2> in_buf({3, 1});
  in_buf.allocate();
  for (index_t i = 0; i < 3; ++i) in_buf(i, 0) = static_cast<int>(i + 10);
  // The shape's descriptor has no memory.
  buffer<int, 2> shape_buf({4, 2});
  shape_buf.rank = shape_rank;
  ASSERT_EQ(shape_buf.base(), nullptr);
  const index_t rows = shape_rank > 0 ? 4 : 1;
  buffer<int, 2> out_buf({3, rows});
  out_buf.allocate();
  const raw_buffer* inputs[] = {&in_buf, &shape_buf};
  const raw_buffer* outputs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(inputs, outputs), 0) << shape_rank;
  for (index_t j = 0; j < rows; ++j) {
    for (index_t i = 0; i < 3; ++i) EXPECT_EQ(out_buf(i, j), i + 10);
  }
}

}  // namespace

TEST(compat_client, inputs_nothing_reads_need_no_data) {
  run_shape_only(0);
  run_shape_only(1);
  run_shape_only(2);
}

TEST(compat_client, input_read_by_a_func_still_needs_data) {
  // An input some func reads must have memory: one failed check, evaluate returns non-zero.
  node_context ctx;
  var x(ctx, "x");
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  func f = func::make_copy({in, {point(x)}}, {out, {x}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> in_buf({4});
  buffer<int, 1> out_buf({4});
  out_buf.allocate();
  int failures = 0;
  eval_config cfg;
  cfg.check_failed = [&](const expr&) { ++failures; };
  eval_context ectx;
  ectx.config = &cfg;
  const raw_buffer* inputs[] = {&in_buf};
  const raw_buffer* outputs[] = {&out_buf};
  EXPECT_NE(p.evaluate(inputs, outputs, ectx), 0);
  EXPECT_EQ(failures, 1);
}

TEST(compat_client, packed_index_bounds) {
  // Four 2-bit indices per byte: the output's x reads byte x / 4 of the index, which a producer
  // computes (here, a copy of a pipeline input). The producer computes exactly the bytes holding
  // the indices each chunk of the output needs, the last partial byte included.
  node_context ctx;
  var x(ctx, "x"), b(ctx, "b");
  auto packed = buffer_expr::make(ctx, "packed", 1, sizeof(uint8_t));
  auto index = buffer_expr::make(ctx, "index", 1, sizeof(uint8_t));
  auto table = buffer_expr::make(ctx, "table", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  std::vector<std::pair<index_t, index_t>> produced, consumed;
  func unpack = func::make(
      [&](const buffer<const uint8_t>& in, const buffer<uint8_t>& idx) -> index_t {
        produced.emplace_back(idx.dim(0).min(), idx.dim(0).max());
        for (index_t i = idx.dim(0).begin(); i < idx.dim(0).end(); ++i) idx(i) = in(i);
        return 0;
      },
      {{packed, {point(b)}}}, {{index, {b}}});
  func gather = func::make(
      [&](const buffer<const uint8_t>& idx, const buffer<const int>& t, const buffer<int>& c) -> index_t {
        consumed.emplace_back(c.dim(0).min(), c.dim(0).max());
        for (index_t i = c.dim(0).begin(); i < c.dim(0).end(); ++i) {
          const int bits = idx(euclidean_div<index_t>(i, 4));
          c(i) = t((bits >> (2 * euclidean_mod<index_t>(i, 4))) & 3);
        }
        return 0;
      },
      {{index, {point(x) / 4}}, {table, {table->dim(0).bounds, point(x)}}}, {{out, {x}}});
  for (index_t step : {1, 3, 4, 5, 11}) {
    gather.loops({{x, step}});
    unpack.compute_at({&gather, x});
    pipeline p = build_pipeline(ctx, {packed, table}, {out});
    const index_t n = 11;
    buffer<uint8_t, 1> packed_buf({(n + 3) / 4});
    buffer<int, 1> table_buf({4});
    buffer<int, 1> out_buf({n});
    packed_buf.allocate();
    table_buf.allocate();
    out_buf.allocate();
    for (index_t i = 0; i < 4; ++i) table_buf(i) = static_cast<int>(100 + i);
    for (index_t i = 0; i < packed_buf.dim(0).extent(); ++i) packed_buf(i) = static_cast<uint8_t>(0x1b + 37 * i);
    produced.clear();
    consumed.clear();
    const raw_buffer* inputs[] = {&packed_buf, &table_buf};
    const raw_buffer* outputs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(inputs, outputs), 0) << step;
    for (index_t i = 0; i < n; ++i) {
      EXPECT_EQ(out_buf(i), 100 + ((packed_buf(i / 4) >> (2 * (i % 4))) & 3)) << i << " step " << step;
    }
    // Every byte is produced once, each within the bytes of the chunk it was produced for.
    ASSERT_EQ(produced.size(), consumed.size()) << step;
    std::vector<int> times(packed_buf.dim(0).extent(), 0);
    for (std::size_t k = 0; k < produced.size(); ++k) {
      EXPECT_GE(produced[k].first, consumed[k].first / 4) << step;
      EXPECT_LE(produced[k].second, consumed[k].second / 4) << step;
      for (index_t i = produced[k].first; i <= produced[k].second; ++i) ++times.at(i);
    }
    for (int t : times) EXPECT_EQ(t, 1) << step;
  }
}

TEST(compat_client, empty_reduction_input_has_a_base) {
  // A reduction over an empty dim: its input, an intermediate, is allocated empty, and the
  // callback slices the non-empty dims of it (at coordinates they contain) before it finds the
  // empty one, so every buffer it gets has a base (ynnpack's reduce does this), whether the
  // input is cropped per chunk of rows or not.
  for (index_t step : {0, 2}) {
    node_context ctx;
    var x(ctx, "x");
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    var y(ctx, "y");
    func copy = func::make_copy({in, {point(x), point(y)}}, {t, {x, y}});
    int calls = 0, null_bases = 0;
    func sum = func::make(
        [&](const buffer<const int>& a, const buffer<int>& c) -> index_t {
          ++calls;
          if (!a.base() || !c.base()) ++null_bases;
          for (index_t i = c.dim(0).begin(); i < c.dim(0).end(); ++i) {
            int s = 0;
            for (index_t k = a.dim(1).begin(); k < a.dim(1).end(); ++k) s += a(i, k);
            c(i) = s;
          }
          return 0;
        },
        {{t, {point(x), in->dim(1).bounds}}}, {{out, {x}}});
    if (step > 0) sum.loops({{x, step}});
    pipeline p = build_pipeline(ctx, {in}, {out});
    buffer<int, 2> in_buf({5, 0});
    in_buf.allocate();
    buffer<int, 1> out_buf({5});
    out_buf.allocate();
    for (index_t i = 0; i < 5; ++i) out_buf(i) = -1;
    const raw_buffer* inputs[] = {&in_buf};
    const raw_buffer* outputs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(inputs, outputs), 0) << step;
    EXPECT_EQ(calls, step > 0 ? 3 : 1);
    EXPECT_EQ(null_bases, 0) << step;
    for (index_t i = 0; i < 5; ++i) EXPECT_EQ(out_buf(i), 0) << i;
  }
}

TEST(compat_client, copy_into_a_broadcast_dim_reads_its_declared_bounds) {
  // An operand with one row, packed by a copy into an intermediate whose dim 1 is declared
  // dim::broadcast(), is read by a consumer over every row: the copy writes the declared row
  // only, so the input needs one row (ynnpack's product with a broadcast operand).
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto packed = buffer_expr::make(ctx, "packed", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  packed->dim(1) = dim::broadcast();
  func pack = func::make_copy({in, {point(x), point(y)}}, {packed, {x, y}});
  func use = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i, j) + static_cast<int>(j);
        }
        return 0;
      },
      {{packed, {point(x), point(y)}}}, {{out, {x, y}}});
  use.loops({{y, 3}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({4, 1});
  in_buf.allocate();
  for (index_t i = 0; i < 4; ++i) in_buf(i, 0) = static_cast<int>(7 * i);
  buffer<int, 2> out_buf({4, 8});
  out_buf.allocate();
  const raw_buffer* inputs[] = {&in_buf};
  const raw_buffer* outputs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(inputs, outputs), 0);
  for (index_t j = 0; j < 8; ++j) {
    for (index_t i = 0; i < 4; ++i) EXPECT_EQ(out_buf(i, j), 7 * i + j) << i << ", " << j;
  }
}

TEST(compat_client, builder_misuse_collected_instead_of_aborting) {
  // A host building a graph it got wrong (an intermediate of rank 2 read with one interval) gets
  // the message back instead of a process abort.
  builder_errors errors;
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  func f = func::make_copy({in, {point(x), point(y)}}, {t, {x, y}});
  call_stmt::attributes attrs;
  attrs.name = "flat";
  func g = func::make([](const buffer<const int>&, const buffer<int>&) -> index_t { return 0; }, {{t, {point(x)}}},
                      {{out, {x}}}, attrs);
  pipeline p = build_pipeline(ctx, {in}, {out});
  ASSERT_TRUE(errors.failed());
  EXPECT_NE(errors.message().find("func flat"), std::string::npos) << errors.message();
  EXPECT_FALSE(p.body.defined());
}
