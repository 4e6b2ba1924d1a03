// Dims of an intermediate declared in terms of its own bounds or extent
// (`t->dim(0).bounds = align(t->dim(0).bounds, 4)`): they mean the bounds bounds inference finds
// for it. Its producer computes the declared region (aligned crops), and it is allocated there.
// Asserted: the crops callbacks get, allocation sizes through the allocate hook, and outputs
// against a plain reference, at the root, in a loop and sliding.
#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "test_funcs.h"

namespace slinky {
namespace {

using test::memory_counter;

int in_value(index_t x, index_t y) { return static_cast<int>(3 * x + 100 * y + 1); }

buffer<int, 2> make_input(index_t w, index_t h) {
  buffer<int, 2> b({w, h});
  b.allocate();
  for (index_t y = 0; y < h; ++y) {
    for (index_t x = 0; x < w; ++x) b(x, y) = in_value(x, y);
  }
  return b;
}

// Records the crops of the outputs of a callback.
struct crops {
  std::mutex mutex;
  std::vector<std::vector<dim>> seen;
  void record(const raw_buffer& b) {
    std::lock_guard<std::mutex> lock(mutex);
    seen.emplace_back(b.dims, b.dims + b.rank);
  }
};

// out(x, y) = t(x, y - 1) + t(x, y) + t(x, y + 1), t(x, y) = 2 in(x, y); t aligned to 4 in x
// and to 2 in y.
struct aligned_stencil {
  crops t_crops;
  memory_counter mem;

  void run(int schedule) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    t->dim(0).bounds = align(t->dim(0).bounds, 4);
    t->dim(1).bounds = align(t->dim(1).bounds, 2);
    func f = func::make(
        [this](const buffer<const int>& a, const buffer<int>& b) -> index_t {
          t_crops.record(b);
          for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
            for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = 2 * a(i, j);
          }
          return 0;
        },
        {{in, {point(x), point(y)}}}, {{t, {x, y}}});
    func g = func::make(
        [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
          for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
            for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i, j - 1) + a(i, j) + a(i, j + 1);
          }
          return 0;
        },
        {{t, {point(x), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
    // 0: at the root; 1: f computed in g's rows (t stored inside the loop); 2: f computed in g's
    // rows, t stored outside (sliding and folding).
    if (schedule > 0) {
      g.loops({{y, 1}});
      f.compute_at({&g, y});
      if (schedule == 1) t->store_at({&g, y});
    }
    pipeline p = build_pipeline(ctx, {in}, {out});

    // out is [1, 9] x [1, 5]: t is needed over [1, 9] x [0, 6], aligned [0, 11] x [0, 7].
    buffer<int, 2> in_buf = make_input(12, 8);
    buffer<int, 2> out_buf({9, 5});
    out_buf.translate(1, 1);
    out_buf.allocate();
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
    for (index_t j = 1; j <= 5; ++j) {
      for (index_t i = 1; i <= 9; ++i) {
        ASSERT_EQ(out_buf(i, j), 2 * (in_value(i, j - 1) + in_value(i, j) + in_value(i, j + 1))) << i << " " << j;
      }
    }
  }
};

TEST(declared_dims, aligned_at_the_root) {
  aligned_stencil s;
  s.run(0);
  ASSERT_EQ(s.t_crops.seen.size(), 1);
  EXPECT_EQ(s.t_crops.seen[0][0].min(), 0);
  EXPECT_EQ(s.t_crops.seen[0][0].max(), 11);
  EXPECT_EQ(s.t_crops.seen[0][1].min(), 0);
  EXPECT_EQ(s.t_crops.seen[0][1].max(), 7);
  EXPECT_EQ(s.mem.sizes, (std::vector<index_t>{12 * 8 * sizeof(int)}));
}

TEST(declared_dims, aligned_in_a_loop) {
  // Each row y of out needs t's rows [y - 1, y + 1], aligned: 4 rows, computed per row.
  aligned_stencil s;
  s.run(1);
  ASSERT_EQ(s.t_crops.seen.size(), 5);
  for (const std::vector<dim>& c : s.t_crops.seen) {
    EXPECT_EQ(c[0].min(), 0);
    EXPECT_EQ(c[0].max(), 11);
    EXPECT_EQ(c[1].min() % 2, 0);
    EXPECT_EQ(c[1].extent(), 4);
  }
  EXPECT_EQ(s.mem.allocations, 5);
  for (index_t size : s.mem.sizes) EXPECT_EQ(size, 12 * 4 * sizeof(int));
}

TEST(declared_dims, aligned_and_sliding) {
  // Sliding: each iteration computes the aligned rows the previous ones did not, so every row of
  // [0, 7] once, in chunks that start and end on the alignment.
  aligned_stencil s;
  s.run(2);
  index_t rows = 0;
  for (const std::vector<dim>& c : s.t_crops.seen) {
    EXPECT_EQ(c[0].min(), 0);
    EXPECT_EQ(c[0].max(), 11);
    if (c[1].empty()) continue;
    EXPECT_EQ(c[1].min() % 2, 0);
    EXPECT_EQ(c[1].extent() % 2, 0);
    rows += c[1].extent();
  }
  EXPECT_EQ(rows, 8);
  ASSERT_EQ(s.mem.allocations, 1);
  EXPECT_LE(s.mem.sizes[0], 12 * 8 * sizeof(int));
}

TEST(declared_dims, extent_and_stride_refer_to_the_inferred_bounds) {
  // t's extent is rounded up to a multiple of 8, and its rows are 16 bytes longer than that.
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  t->dim(0).bounds = min_extent(t->dim(0).min(), align_up(t->dim(0).extent(), 8));
  t->dim(0).stride = sizeof(int);
  t->dim(1).stride = t->dim(0).extent() * static_cast<index_t>(sizeof(int)) + 16;
  crops t_crops;
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        t_crops.record(b);
        for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i, j) + 1;
        }
        return 0;
      },
      {{in, {point(x), point(y)}}}, {{t, {x, y}}});
  func g = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i, j) * 3;
        }
        return 0;
      },
      {{t, {point(x), point(y)}}}, {{out, {x, y}}});
  pipeline p = build_pipeline(ctx, {in}, {out});

  buffer<int, 2> in_buf = make_input(16, 3);
  buffer<int, 2> out_buf({10, 3});
  out_buf.allocate();
  memory_counter mem;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
  for (index_t j = 0; j < 3; ++j) {
    for (index_t i = 0; i < 10; ++i) ASSERT_EQ(out_buf(i, j), 3 * (in_value(i, j) + 1));
  }
  ASSERT_EQ(t_crops.seen.size(), 1);
  EXPECT_EQ(t_crops.seen[0][0], dim(0, 15, 4));
  EXPECT_EQ(t_crops.seen[0][1], dim(0, 2, 16 * 4 + 16));
  EXPECT_EQ(mem.sizes, (std::vector<index_t>{2 * (16 * 4 + 16) + 16 * 4}));
}

TEST(declared_dims, bounds_not_referring_to_the_buffer_decide_its_allocation_only) {
  // Constant declared bounds: t is allocated over them, its producer computes what is needed.
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  t->dim(0).bounds = bounds(-4, 20);
  crops t_crops;
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        t_crops.record(b);
        for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i, j) + 1;
        }
        return 0;
      },
      {{in, {point(x), point(y)}}}, {{t, {x, y}}});
  func g = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i, j);
        }
        return 0;
      },
      {{t, {point(x), point(y)}}}, {{out, {x, y}}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf = make_input(10, 2);
  buffer<int, 2> out_buf({10, 2});
  out_buf.allocate();
  memory_counter mem;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
  ASSERT_EQ(t_crops.seen.size(), 1);
  EXPECT_EQ(t_crops.seen[0][0].min(), 0);
  EXPECT_EQ(t_crops.seen[0][0].max(), 9);
  EXPECT_EQ(mem.sizes, (std::vector<index_t>{25 * 2 * sizeof(int)}));
  EXPECT_EQ(out_buf(9, 1), in_value(9, 1) + 1);
}

}  // namespace
}  // namespace slinky
