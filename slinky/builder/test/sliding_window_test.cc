// Sliding window and storage folding: in a serial loop each value is computed once, and
// intermediates hold only the live window (asserted through the allocate hook with
// auto_stack_threshold = 0, and callbacks that count what they produce).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"
#include "test_funcs.h"

namespace slinky {
namespace {

using test::memory_counter;
using test::write_counter;

index_t times_2(const buffer<const int>& in, const buffer<int>& out) {
  return test::elementwise<int>(in, out, [](int v) { return v * 2; });
}
index_t sum_3x3(const buffer<const int>& in, const buffer<int>& out) { return test::box_sum<int>(in, out, 1, 1); }

int reference_stencil(const buffer<int, 2>& in, int x, int y) {
  int sum = 0;
  for (int dy = -1; dy <= 1; ++dy) {
    for (int dx = -1; dx <= 1; ++dx) sum += in(x + dx, y + dy) * 2;
  }
  return sum;
}

struct stencil_case {
  index_t step;
  index_t w, h;
  index_t x0, y0;  // the output's mins
};

class stencil_sliding : public testing::TestWithParam<stencil_case> {};

// The README's 2-stage stencil looped over y: each intermediate element computed once, and
// the intermediate holds (W + 2) x (step + 2) elements.
TEST_P(stencil_sliding, computes_once_and_folds) {
  const stencil_case c = GetParam();
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  write_counter writes;
  func mul = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        writes.record(b);
        return times_2(a, b);
      },
      {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func sum = func::make(sum_3x3, {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
  sum.loops({{y, c.step}});
  pipeline p = build_pipeline(ctx, {in}, {out});

  buffer<int, 2> in_buf({c.w + 2, c.h + 2});
  in_buf.translate(c.x0 - 1, c.y0 - 1);
  buffer<int, 2> out_buf({c.w, c.h});
  out_buf.translate(c.x0, c.y0);
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 1);
  memory_counter m;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  for (int j = 0; j < c.h; ++j) {
    for (int i = 0; i < c.w; ++i) {
      ASSERT_EQ(out_buf(c.x0 + i, c.y0 + j), reference_stencil(in_buf, c.x0 + i, c.y0 + j)) << i << " " << j;
    }
  }
  EXPECT_EQ(writes.max_count(), 1) << p.body;
  EXPECT_EQ(writes.elements(), static_cast<std::size_t>((c.w + 2) * (c.h + 2)));
  ASSERT_EQ(m.allocations, 1);
  const index_t rows = std::min(c.step + 2, c.h + 2);
  EXPECT_LE(m.sizes[0], (c.w + 2) * rows * static_cast<index_t>(sizeof(int))) << p.body;
}

INSTANTIATE_TEST_SUITE_P(steps, stencil_sliding,
                         testing::Values(stencil_case{1, 20, 10, 0, 0}, stencil_case{2, 20, 10, 0, 0},
                                         stencil_case{3, 20, 10, 0, 0}, stencil_case{4, 20, 10, -3, 5},
                                         stencil_case{7, 9, 10, 2, -7}, stencil_case{16, 8, 5, 0, 0},
                                         stencil_case{1, 5, 1, 0, 0}, stencil_case{3, 4, 2, 1, 1}));

// Loops over both x and y with step 1: at most 3 rows of full width, nothing computed twice.
TEST(sliding_window, loops_over_x_and_y) {
  const int w = 12, h = 9;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  write_counter writes;
  func mul = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        writes.record(b);
        return times_2(a, b);
      },
      {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func sum = func::make(sum_3x3, {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
  sum.loops({x, y});
  pipeline p = build_pipeline(ctx, {in}, {out});

  buffer<int, 2> in_buf({w + 2, h + 2});
  in_buf.translate(-1, -1);
  buffer<int, 2> out_buf({w, h});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 2);
  memory_counter m;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  for (int j = 0; j < h; ++j) {
    for (int i = 0; i < w; ++i) ASSERT_EQ(out_buf(i, j), reference_stencil(in_buf, i, j));
  }
  EXPECT_EQ(writes.max_count(), 1) << p.body;
  ASSERT_EQ(m.allocations, 1);
  EXPECT_LE(m.sizes[0], (w + 2) * 3 * static_cast<index_t>(sizeof(int))) << p.body;
}

// elementwise -> 3x3 -> 3x3, looped over y with step s: two allocations of at most
// width x (s + 2) each (plus the halo of the next stage in x), each value computed once.
TEST(sliding_window, three_stage_chain) {
  for (index_t s : {1, 2, 3}) {
    const int w = 10, h = 11;
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    write_counter writes_a, writes_b;
    func fa = func::make(
        [&](const buffer<const int>& i, const buffer<int>& o) {
          writes_a.record(o);
          return times_2(i, o);
        },
        {{in, {point(x), point(y)}}}, {{a, {x, y}}});
    func fb = func::make(
        [&](const buffer<const int>& i, const buffer<int>& o) {
          writes_b.record(o);
          return sum_3x3(i, o);
        },
        {{a, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{b, {x, y}}});
    func fc = func::make(sum_3x3, {{b, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
    fc.loops({{y, s}});
    pipeline p = build_pipeline(ctx, {in}, {out});

    buffer<int, 2> in_buf({w + 4, h + 4});
    in_buf.translate(-2, -2);
    buffer<int, 2> out_buf({w, h});
    in_buf.allocate();
    out_buf.allocate();
    test::fill_random(in_buf, 3);
    memory_counter m;
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
    for (int j = 0; j < h; ++j) {
      for (int i = 0; i < w; ++i) {
        int expected = 0;
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) expected += reference_stencil(in_buf, i + dx, j + dy);
        }
        ASSERT_EQ(out_buf(i, j), expected) << i << " " << j << " step " << s;
      }
    }
    EXPECT_EQ(writes_a.max_count(), 1) << p.body;
    EXPECT_EQ(writes_b.max_count(), 1) << p.body;
    ASSERT_EQ(m.allocations, 2);
    for (index_t size : m.sizes) EXPECT_LE(size, (w + 4) * (s + 2) * static_cast<index_t>(sizeof(int))) << p.body;
  }
}

// 2x nearest-neighbour upsampling looped over rows: the intermediate is one row.
TEST(sliding_window, upsample) {
  const int w = 8, h = 10;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  write_counter writes;
  func mul = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        writes.record(b);
        return times_2(a, b);
      },
      {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func up = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t j = b.dim(1).min(); j <= b.dim(1).max(); ++j) {
          for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i, j) = a(i / 2, j / 2);
        }
        return 0;
      },
      {{intm, {point(x / 2), point(y / 2)}}}, {{out, {x, y}}});
  up.loops({y});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({w / 2, h / 2}), out_buf({w, h});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 4);
  memory_counter m;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  for (int j = 0; j < h; ++j) {
    for (int i = 0; i < w; ++i) ASSERT_EQ(out_buf(i, j), in_buf(i / 2, j / 2) * 2);
  }
  EXPECT_EQ(writes.max_count(), 1) << p.body;
  ASSERT_EQ(m.allocations, 1);
  EXPECT_LE(m.sizes[0], (w / 2) * 1 * static_cast<index_t>(sizeof(int))) << p.body;
}

// A 2-level pyramid: downsample by 2 (averaging pairs of rows), then upsample back; looped over
// rows of the output, the intermediate is at most two rows.
TEST(sliding_window, pyramid) {
  const int w = 8, h = 12;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto down = buffer_expr::make(ctx, "down", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  write_counter writes;
  func fd = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        writes.record(b);
        for (index_t j = b.dim(1).min(); j <= b.dim(1).max(); ++j) {
          for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i, j) = a(i, 2 * j) + a(i, 2 * j + 1);
        }
        return 0;
      },
      {{in, {point(x), bounds(2 * y, 2 * y + 1)}}}, {{down, {x, y}}});
  func fu = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t j = b.dim(1).min(); j <= b.dim(1).max(); ++j) {
          for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i, j) = a(i, j / 2) + a(i, (j + 1) / 2);
        }
        return 0;
      },
      {{down, {point(x), bounds(y / 2, (y + 1) / 2)}}}, {{out, {x, y}}});
  fu.loops({y});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({w, h + 2}), out_buf({w, h});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 5);
  memory_counter m;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  auto d = [&](int i, int j) { return in_buf(i, 2 * j) + in_buf(i, 2 * j + 1); };
  for (int j = 0; j < h; ++j) {
    for (int i = 0; i < w; ++i) ASSERT_EQ(out_buf(i, j), d(i, j / 2) + d(i, (j + 1) / 2)) << i << " " << j;
  }
  EXPECT_EQ(writes.max_count(), 1) << p.body;
  ASSERT_EQ(m.allocations, 1);
  EXPECT_LE(m.sizes[0], w * 2 * static_cast<index_t>(sizeof(int))) << p.body;
}

// (a x b) x c looped over rows of the result with step s: ab holds at most s rows.
TEST(sliding_window, matrix_product_rows) {
  for (index_t s : {1, 2, 4}) {
    const int n = 8;
    node_context ctx;
    auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto c = buffer_expr::make(ctx, "c", 2, sizeof(int));
    auto ab = buffer_expr::make(ctx, "ab", 2, sizeof(int));
    auto d = buffer_expr::make(ctx, "d", 2, sizeof(int));
    var i(ctx, "i"), j(ctx, "j");
    auto matmul = [](const buffer<const int>& x, const buffer<const int>& y, const buffer<int>& z) -> index_t {
      for (index_t r = z.dim(0).min(); r <= z.dim(0).max(); ++r) {
        for (index_t col = z.dim(1).min(); col <= z.dim(1).max(); ++col) {
          int sum = 0;
          for (index_t k = x.dim(1).min(); k <= x.dim(1).max(); ++k) sum += x(r, k) * y(k, col);
          z(r, col) = sum;
        }
      }
      return 0;
    };
    func f_ab =
        func::make(matmul, {{a, {point(i), a->dim(1).bounds}}, {b, {a->dim(1).bounds, point(j)}}}, {{ab, {i, j}}});
    func f_d =
        func::make(matmul, {{ab, {point(i), c->dim(0).bounds}}, {c, {c->dim(0).bounds, point(j)}}}, {{d, {i, j}}});
    f_d.loops({{i, s}});
    pipeline p = build_pipeline(ctx, {a, b, c}, {d});
    buffer<int, 2> a_buf({n, n}), b_buf({n, n}), c_buf({n, n}), d_buf({n, n});
    for (auto* buf : {&a_buf, &b_buf, &c_buf, &d_buf}) buf->allocate();
    test::fill_random(a_buf, 6);
    test::fill_random(b_buf, 7);
    test::fill_random(c_buf, 8);
    memory_counter m;
    ASSERT_EQ(p.evaluate({&a_buf, &b_buf, &c_buf}, {&d_buf}, m.context), 0);
    for (int r = 0; r < n; ++r) {
      for (int col = 0; col < n; ++col) {
        int expected = 0;
        for (int k = 0; k < n; ++k) {
          int ab_rk = 0;
          for (int q = 0; q < n; ++q) ab_rk += a_buf(r, q) * b_buf(q, k);
          expected += ab_rk * c_buf(k, col);
        }
        ASSERT_EQ(d_buf(r, col), expected);
      }
    }
    ASSERT_EQ(m.allocations, 1);
    EXPECT_LE(m.sizes[0], s * n * static_cast<index_t>(sizeof(int))) << p.body;
  }
}

// store_at inside the row loop with stack storage: no heap allocation at all.
TEST(sliding_window, store_in_row_loop_on_stack) {
  const int w = 16, h = 8;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func mul = func::make(times_2, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func sum = func::make(sum_3x3, {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
  sum.loops({y});
  intm->store_at({&sum, y}).store_in(memory_type::stack);
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({w + 2, h + 2});
  in_buf.translate(-1, -1);
  buffer<int, 2> out_buf({w, h});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 9);
  memory_counter m;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  for (int j = 0; j < h; ++j) {
    for (int i = 0; i < w; ++i) ASSERT_EQ(out_buf(i, j), reference_stencil(in_buf, i, j));
  }
  EXPECT_EQ(m.allocations, 0);
}

// A fold factor the user sets on an intermediate is honoured.
TEST(sliding_window, user_fold_factor) {
  const int w = 6, h = 9;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func mul = func::make(times_2, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func sum = func::make(sum_3x3, {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
  sum.loops({y});
  intm->dim(1).fold_factor = 4;
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({w + 2, h + 2});
  in_buf.translate(-1, -1);
  buffer<int, 2> out_buf({w, h});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 10);
  memory_counter m;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  for (int j = 0; j < h; ++j) {
    for (int i = 0; i < w; ++i) ASSERT_EQ(out_buf(i, j), reference_stencil(in_buf, i, j));
  }
  ASSERT_EQ(m.allocations, 1);
  EXPECT_EQ(m.sizes[0], (w + 2) * 4 * static_cast<index_t>(sizeof(int)));
}

// A window that moves down as the loop goes up (a vertical flip) slides too.
TEST(sliding_window, decreasing_window) {
  const int w = 5, h = 9;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  write_counter writes;
  func mul = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        writes.record(b);
        return times_2(a, b);
      },
      {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func flip = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t j = b.dim(1).min(); j <= b.dim(1).max(); ++j) {
          for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) {
            b(i, j) = a(i, h - 1 - j) + a(i, h - 2 - j);
          }
        }
        return 0;
      },
      {{intm, {point(x), bounds(h - 2 - y, h - 1 - y)}}}, {{out, {x, y}}});
  flip.loops({y});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({w, h + 1});
  in_buf.translate(0, -1);
  buffer<int, 2> out_buf({w, h});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 11);
  memory_counter m;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  for (int j = 0; j < h; ++j) {
    for (int i = 0; i < w; ++i) {
      ASSERT_EQ(out_buf(i, j), in_buf(i, h - 1 - j) * 2 + in_buf(i, h - 2 - j) * 2);
    }
  }
  EXPECT_EQ(writes.max_count(), 1) << p.body;
  ASSERT_EQ(m.allocations, 1);
  EXPECT_LE(m.sizes[0], w * 2 * static_cast<index_t>(sizeof(int))) << p.body;
}

struct nested_fold_case {
  index_t sc, sb;  // the steps of the loops over c (inner) and b (outer)
  bool symbolic;   // the row the sums read: the input's bounds, or constants
};

void PrintTo(const nested_fold_case& t, std::ostream* os) {
  *os << "sc " << t.sc << ", sb " << t.sb << (t.symbolic ? ", symbolic" : ", constant");
}

class nested_fold : public testing::TestWithParam<nested_fold_case> {};

INSTANTIATE_TEST_SUITE_P(steps, nested_fold,
                         testing::Values(nested_fold_case{1, 1, false}, nested_fold_case{1, 1, true},
                                         nested_fold_case{3, 2, false}, nested_fold_case{4, 1, true},
                                         nested_fold_case{2, 3, true}, nested_fold_case{20, 1, false}));

// Softmax-shaped, with two splits: e = in + 1 and the row sums s are computed per iteration of
// the output's loop over rows b; n = e * 1000 / s per iteration of the inner loop over c; out =
// n * 2. n is stored at the root and moves with both loops, and nothing of it crosses an
// iteration of the outer loop: folded along both, it holds sc x sb elements (4 bytes for steps
// of 1), not a whole row per row of the outer step.
TEST_P(nested_fold, softmax_with_two_splits) {
  const nested_fold_case t = GetParam();
  const int C = 10, B = 3;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto e = buffer_expr::make(ctx, "e", 2, sizeof(int));
  auto s = buffer_expr::make(ctx, "s", 1, sizeof(int));
  auto n = buffer_expr::make(ctx, "n", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var c(ctx, "c"), b(ctx, "b");
  write_counter n_writes;
  func f_e = func::make([](const buffer<const int>& a,
                           const buffer<int>& r) { return test::elementwise<int>(a, r, [](int v) { return v + 1; }); },
                        {{in, {point(c), point(b)}}}, {{e, {c, b}}});
  const interval_expr row = t.symbolic ? in->dim(0).bounds : bounds(0, C - 1);
  func f_s = func::make(
      [](const buffer<const int>& a, const buffer<int>& r) -> index_t {
        for (index_t j = r.dim(0).min(); j <= r.dim(0).max(); ++j) {
          int sum = 0;
          for (index_t i = a.dim(0).min(); i <= a.dim(0).max(); ++i) sum += a(i, j);
          r(j) = sum;
        }
        return 0;
      },
      {{e, {row, point(b)}}}, {{s, {b}}});
  func f_n = func::make(
      [&](const buffer<const int>& a, const buffer<const int>& sums, const buffer<int>& r) -> index_t {
        n_writes.record(r);
        for (index_t j = r.dim(1).min(); j <= r.dim(1).max(); ++j) {
          for (index_t i = r.dim(0).min(); i <= r.dim(0).max(); ++i) r(i, j) = a(i, j) * 1000 / sums(j);
        }
        return 0;
      },
      {{e, {point(c), point(b)}}, {s, {point(b)}}}, {{n, {c, b}}});
  func f_out = func::make(times_2, {{n, {point(c), point(b)}}}, {{out, {c, b}}});
  f_out.loops({{c, t.sc}, {b, t.sb}});
  f_e.compute_at({&f_out, b});
  f_s.compute_at({&f_out, b});
  pipeline p = build_pipeline(ctx, {in}, {out});

  buffer<int, 2> in_buf({C, B});
  buffer<int, 2> out_buf({C, B});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 12);
  for_each_element([](int* v) { *v += 50; }, in_buf);
  memory_counter m;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  for (int j = 0; j < B; ++j) {
    int sum = 0;
    for (int i = 0; i < C; ++i) sum += in_buf(i, j) + 1;
    for (int i = 0; i < C; ++i) ASSERT_EQ(out_buf(i, j), (in_buf(i, j) + 1) * 1000 / sum * 2) << i << " " << j;
  }
  EXPECT_EQ(n_writes.max_count(), 1);
  EXPECT_EQ(n_writes.elements(), static_cast<std::size_t>(C * B));
  // e (a row per row of the step) and s (a value per row) fold along b; n along both loops.
  const index_t rows = std::min<index_t>(t.sb, B);
  const index_t cols = std::min<index_t>(t.sc, C);
  const index_t e_bytes = C * rows * static_cast<index_t>(sizeof(int));
  const index_t s_bytes = rows * static_cast<index_t>(sizeof(int));
  const index_t n_bytes = cols * rows * static_cast<index_t>(sizeof(int));
  ASSERT_EQ(m.allocations, 3) << p.body;
  std::vector<index_t> sizes = m.sizes;
  std::sort(sizes.begin(), sizes.end());
  std::vector<index_t> expected = {e_bytes, s_bytes, n_bytes};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sizes, expected) << p.body;
}

// A stencil along the inner loop only: the intermediate slides along x (its window overlaps
// between iterations of the inner loop) and moves with y without overlapping: folded along both,
// (sx + 2) x sy elements, each computed once.
TEST(sliding_window, slides_along_inner_loop_moves_with_outer) {
  for (index_t sx : {1, 3}) {
    for (index_t sy : {1, 2}) {
      const int w = 11, h = 7;
      node_context ctx;
      auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
      auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
      auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
      var x(ctx, "x"), y(ctx, "y");
      write_counter writes;
      func mul = func::make(
          [&](const buffer<const int>& a, const buffer<int>& r) {
            writes.record(r);
            return times_2(a, r);
          },
          {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
      func sum =
          func::make([](const buffer<const int>& a, const buffer<int>& r) { return test::box_sum<int>(a, r, 1, 0); },
                     {{intm, {bounds(x - 1, x + 1), point(y)}}}, {{out, {x, y}}});
      sum.loops({{x, sx}, {y, sy}});
      pipeline p = build_pipeline(ctx, {in}, {out});
      buffer<int, 2> in_buf({w + 2, h});
      in_buf.translate(-1, 0);
      buffer<int, 2> out_buf({w, h});
      in_buf.allocate();
      out_buf.allocate();
      test::fill_random(in_buf, 13);
      memory_counter m;
      ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
      for (int j = 0; j < h; ++j) {
        for (int i = 0; i < w; ++i) {
          ASSERT_EQ(out_buf(i, j), (in_buf(i - 1, j) + in_buf(i, j) + in_buf(i + 1, j)) * 2) << i << " " << j;
        }
      }
      EXPECT_EQ(writes.max_count(), 1) << p.body;
      ASSERT_EQ(m.allocations, 1);
      EXPECT_LE(m.sizes[0], (sx + 2) * sy * static_cast<index_t>(sizeof(int))) << sx << " " << sy << " " << p.body;
    }
  }
}

}  // namespace
}  // namespace slinky
