// Copies that must cost no more than the original's (shared contract, API_COMPAT.md 5.2, the
// resource items): the calls of the copy's impl, counted by a wrapper around slinky::copy, and
// the heap allocations, counted through the allocate hook, each asserted against the count the
// contract states; every output checked against a plain reference.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "test_funcs.h"

namespace slinky {
namespace {

using test::memory_counter;

struct counting_copy {
  std::atomic<int> calls{0};
  copy_stmt::callable impl() {
    return [this](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
      ++calls;
      copy(s, d, p);
    };
  }
};

int value(index_t x, index_t y) { return static_cast<int>(x * 1000 + y * 7 + 3); }
int pad_value(index_t x, index_t y) { return static_cast<int>(-(x * 100 + y) - 1); }

buffer<int, 2> make_2d(index_t x0, index_t x1, index_t y0, index_t y1, int (*fn)(index_t, index_t)) {
  buffer<int, 2> b({x1 - x0 + 1, y1 - y0 + 1});
  b.translate(x0, y0);
  b.allocate();
  for (index_t y = y0; y <= y1; ++y) {
    for (index_t x = x0; x <= x1; ++x) b(x, y) = fn(x, y);
  }
  return b;
}

// A 2-D copy padded from a buffer (the pad read at the output's coordinates): one call of the
// impl on the whole shapes, src, dst and pad as strided views; constant and symbolic crops.
class pad_from_a_buffer : public testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(symbolic, pad_from_a_buffer, testing::Bool());

TEST_P(pad_from_a_buffer, is_one_call) {
  const bool symbolic = GetParam();
  // At the root, and in a loop over the output's rows in steps of 3 (4 iterations): one call
  // per iteration.
  for (index_t step : {0, 3}) {
    SCOPED_TRACE(step);
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto pad = buffer_expr::make(ctx, "pad", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    counting_copy cc;
    box_expr crop = symbolic ? box_expr{in->dim(0).bounds, in->dim(1).bounds} : box_expr{bounds(0, 9), bounds(0, 5)};
    func f = func::make_copy({in, {point(x), point(y)}, crop}, {out, {x, y}}, {pad, {point(x), point(y)}}, cc.impl());
    if (step > 0) f.loops({{y, step}});
    pipeline p = build_pipeline(ctx, {in, pad}, {out});

    buffer<int, 2> in_buf = make_2d(0, 9, 0, 5, value);
    buffer<int, 2> pad_buf = make_2d(-3, 12, -2, 8, pad_value);
    buffer<int, 2> out_buf({16, 11});
    out_buf.translate(-3, -2);
    out_buf.allocate();
    const raw_buffer* ins[] = {&in_buf, &pad_buf};
    const raw_buffer* outs[] = {&out_buf};
    memory_counter mem;
    ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
    for (index_t yy = -2; yy <= 8; ++yy) {
      for (index_t xx = -3; xx <= 12; ++xx) {
        const bool inside = 0 <= xx && xx <= 9 && 0 <= yy && yy <= 5;
        ASSERT_EQ(out_buf(xx, yy), inside ? value(xx, yy) : pad_value(xx, yy)) << xx << ", " << yy;
      }
    }
    EXPECT_EQ(cc.calls, step > 0 ? 4 : 1);
    EXPECT_EQ(mem.allocations, 0);
  }
}

// Source coordinates chosen by a run-time condition free of the output's variables (a flip or a
// transpose decided by a buffer's shape): one call, whichever way the condition goes.
TEST(select_indices, run_time_flip_is_one_call) {
  for (index_t w : {6, 10}) {
    SCOPED_TRACE(w);
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    counting_copy cc;
    const expr flip = in->dim(0).extent() > 8;
    const expr w_max = in->dim(0).max();
    func f = func::make_copy({in, {point(select(flip, w_max - x, x)), point(y)}}, {out, {x, y}}, cc.impl());
    pipeline p = build_pipeline(ctx, {in}, {out});
    buffer<int, 2> in_buf = make_2d(0, w - 1, 0, 11, value);
    buffer<int, 2> out_buf({w, 12});
    out_buf.allocate();
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    memory_counter mem;
    ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
    for (index_t yy = 0; yy < 12; ++yy) {
      for (index_t xx = 0; xx < w; ++xx) ASSERT_EQ(out_buf(xx, yy), value(w > 8 ? w - 1 - xx : xx, yy));
    }
    EXPECT_EQ(cc.calls, 1);
  }
}

TEST(select_indices, run_time_transpose_is_one_call) {
  for (bool transpose : {false, true}) {
    SCOPED_TRACE(transpose);
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    counting_copy cc;
    const expr t = in->dim(1).extent() == 9;
    func f = func::make_copy({in, {point(select(t, y, x)), point(select(t, x, y))}}, {out, {x, y}}, cc.impl());
    pipeline p = build_pipeline(ctx, {in}, {out});
    buffer<int, 2> in_buf = transpose ? make_2d(0, 6, 0, 8, value) : make_2d(0, 8, 0, 6, value);
    buffer<int, 2> out_buf({9, transpose ? 7 : 6});
    out_buf.allocate();
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(ins, outs), 0);
    for (index_t yy = 0; yy < out_buf.dim(1).extent(); ++yy) {
      for (index_t xx = 0; xx < 9; ++xx) ASSERT_EQ(out_buf(xx, yy), transpose ? value(yy, xx) : value(xx, yy));
    }
    EXPECT_EQ(cc.calls, 1);
  }
}

index_t add_one_1d(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x) = in(x) + 1;
  return 0;
}

index_t add_one_2d(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x, y) = in(x, y) + 1;
  }
  return 0;
}

// out(x) = the sum of in(x, dx) over dx in [0, 2].
index_t sum_taps(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) {
    int sum = 0;
    for (index_t dx = 0; dx <= 2; ++dx) sum += in(x, dx);
    out(x) = sum;
  }
  return 0;
}

// A stencil copy b(x, dx) = in(x * S + dx * D) read by a func summing the taps: b is a strided
// view of in (no allocation, no copy), with constant or run-time S and D (S = 0 too: a stride-0
// view), at the root or in a loop over x in steps of 2.
TEST(stencil_copy, is_a_strided_view) {
  for (bool run_time : {false, true}) {
    for (index_t loop : {0, 2}) {
      for (auto sd : std::vector<std::pair<index_t, index_t>>{{1, 1}, {2, 3}, {3, 1}, {0, 2}}) {
        const index_t S = sd.first, D = sd.second;
        SCOPED_TRACE(testing::Message() << "run_time " << run_time << " loop " << loop << " S " << S << " D " << D);
        node_context ctx;
        auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
        auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
        auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
        var x(ctx, "x"), dx(ctx, "dx"), s(ctx, "s"), d(ctx, "d");
        counting_copy cc;
        const expr se = run_time ? expr(s) : expr(S);
        const expr de = run_time ? expr(d) : expr(D);
        func c = func::make_copy({in, {point(x * se + dx * de)}}, {b, {x, dx}}, cc.impl());
        func g = func::make(sum_taps, {{b, {point(x), bounds(0, 2)}}}, {{out, {x}}});
        if (loop > 0) g.loops({{x, loop}});
        pipeline p = run_time ? build_pipeline(ctx, {s, d}, {in}, {out}) : build_pipeline(ctx, {in}, {out});
        buffer<int, 1> in_buf({40});
        in_buf.allocate();
        for (index_t i = 0; i < 40; ++i) in_buf(i) = static_cast<int>(i * i + 5);
        buffer<int, 1> out_buf({9});
        out_buf.allocate();
        const raw_buffer* ins[] = {&in_buf};
        const raw_buffer* outs[] = {&out_buf};
        const index_t args[] = {S, D};
        memory_counter mem;
        ASSERT_EQ(run_time ? p.evaluate(args, ins, outs, mem.context) : p.evaluate(ins, outs, mem.context), 0);
        for (index_t xx = 0; xx < 9; ++xx) {
          int expected = 0;
          for (index_t k = 0; k < 3; ++k) expected += in_buf(xx * S + k * D);
          ASSERT_EQ(out_buf(xx), expected) << xx;
        }
        EXPECT_EQ(mem.allocations, 0);
        EXPECT_EQ(cc.calls, 0);
      }
    }
  }
}

// A copy that broadcasts an intermediate (or an input) along y: b is a stride-0 view of it (the
// only allocation is the intermediate's), at the root and in a loop over y.
TEST(broadcast_copy, is_a_stride_0_view) {
  for (bool from_input : {false, true}) {
    for (index_t loop : {0, 1, 3}) {
      SCOPED_TRACE(testing::Message() << "from_input " << from_input << " loop " << loop);
      node_context ctx;
      auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
      auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
      auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
      auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
      var x(ctx, "x"), y(ctx, "y");
      counting_copy cc;
      func f = func::make(add_one_1d, {{in, {point(x)}}}, {{a, {x}}});
      func c = func::make_copy({from_input ? in : a, {point(x)}}, {b, {x, y}}, cc.impl());
      func g = func::make(add_one_2d, {{b, {point(x), point(y)}}}, {{out, {x, y}}});
      if (loop > 0) g.loops({{y, loop}});
      pipeline p = build_pipeline(ctx, {in}, {out});
      buffer<int, 1> in_buf({10});
      in_buf.allocate();
      for (index_t i = 0; i < 10; ++i) in_buf(i) = static_cast<int>(i * 3);
      buffer<int, 2> out_buf({10, 7});
      out_buf.allocate();
      const raw_buffer* ins[] = {&in_buf};
      const raw_buffer* outs[] = {&out_buf};
      memory_counter mem;
      ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
      for (index_t yy = 0; yy < 7; ++yy) {
        for (index_t xx = 0; xx < 10; ++xx) ASSERT_EQ(out_buf(xx, yy), xx * 3 + (from_input ? 1 : 2));
      }
      EXPECT_EQ(mem.allocations, from_input ? 0 : 1);
      EXPECT_EQ(cc.calls, 0);
    }
  }
}

// A column of an input broadcast along x (the view's innermost dim has stride 0): a view in a
// loop too.
TEST(broadcast_copy, of_a_column_in_a_loop) {
  for (index_t loop : {0, 1, 3}) {
    SCOPED_TRACE(loop);
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    counting_copy cc;
    func c = func::make_copy({in, {point(0), point(y)}}, {b, {x, y}}, cc.impl());
    func g = func::make(add_one_2d, {{b, {point(x), point(y)}}}, {{out, {x, y}}});
    if (loop > 0) g.loops({{y, loop}});
    pipeline p = build_pipeline(ctx, {in}, {out});
    buffer<int, 2> in_buf = make_2d(0, 4, 0, 6, value);
    buffer<int, 2> out_buf({10, 7});
    out_buf.allocate();
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    memory_counter mem;
    ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
    for (index_t yy = 0; yy < 7; ++yy) {
      for (index_t xx = 0; xx < 10; ++xx) ASSERT_EQ(out_buf(xx, yy), value(0, yy) + 1);
    }
    EXPECT_EQ(mem.allocations, 0);
    EXPECT_EQ(cc.calls, 0);
  }
}

index_t box_3x3(const buffer<const int>& in, const buffer<int>& out) { return test::box_sum<int>(in, out, 1, 1); }

// A padded copy of an intermediate computed at the root, in a loop over the rows of its consumer
// (stored at the root and folded by default, or stored inside the loop, or in a parallel loop):
// its destination is a view of the source, allocated once at the padded size; the copy writes
// only the padding (the impl is not called, the padding is not a copy). One allocation, where a
// destination of its own took a second one (or one per iteration when stored in the loop), and a
// call of the impl per row. The consumer reads the padded buffer pointwise, or as a 3x3 stencil
// (a padded stencil); the pad is a scalar or a buffer; the input_crop is constant or symbolic;
// the copy untranslated or translated by (1, -2).
class padded_copy_in_a_loop : public testing::TestWithParam<std::tuple<bool, bool, bool, bool>> {};
INSTANTIATE_TEST_SUITE_P(stencil_symbolic_pad_translated, padded_copy_in_a_loop,
                         testing::Combine(testing::Bool(), testing::Bool(), testing::Bool(), testing::Bool()));

TEST_P(padded_copy_in_a_loop, reuses_the_source_allocated_at_the_padded_size) {
  const bool stencil = std::get<0>(GetParam());
  const bool symbolic = std::get<1>(GetParam());
  const bool pad_buffer = std::get<2>(GetParam());
  const bool translated = std::get<3>(GetParam());
  const index_t W = 20, H = 30, tx = translated ? 1 : 0, ty = translated ? -2 : 0;
  enum schedule { root_storage, store_in_loop, parallel };
  for (schedule sched : {root_storage, store_in_loop, parallel}) {
    for (index_t step : {1, 4}) {
      SCOPED_TRACE(testing::Message() << "schedule " << sched << " step " << step);
      node_context ctx;
      auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
      auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
      auto padded = buffer_expr::make(ctx, "padded", 2, sizeof(int));
      auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
      auto pad_scalar = buffer_expr::make_scalar<int>(ctx, "pad_scalar", -7);
      auto pad_buf = buffer_expr::make(ctx, "pad", 2, sizeof(int));
      var x(ctx, "x"), y(ctx, "y");
      counting_copy cc;
      func f = func::make(add_one_2d, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
      // intm holds in's box; the copy reads it at (x + tx, y + ty).
      const box_expr crop =
          symbolic ? box_expr{in->dim(0).bounds, in->dim(1).bounds} : box_expr{bounds(0, W - 1), bounds(0, H - 1)};
      func::input pad_in = pad_buffer ? func::input{pad_buf, {point(x), point(y)}} : func::input{pad_scalar, {}};
      func c = func::make_copy({intm, {point(x + tx), point(y + ty)}, crop}, {padded, {x, y}}, pad_in, cc.impl());
      func g = stencil ? func::make(box_3x3, {{padded, {bounds(-1, 1) + x, bounds(-1, 1) + y}}}, {{out, {x, y}}})
                       : func::make(add_one_2d, {{padded, {point(x), point(y)}}}, {{out, {x, y}}});
      g.loops({{y, step, sched == parallel ? loop::parallel : loop::serial}});
      f.compute_root();
      if (sched == store_in_loop) padded->store_at({&g, y});
      pipeline p = pad_buffer ? build_pipeline(ctx, {in, pad_buf}, {out}) : build_pipeline(ctx, {in}, {out});

      // The output reaches 3 beyond the input on each side (the padding, and more for the stencil).
      const index_t m = 3;
      buffer<int, 2> in_buf = make_2d(0, W - 1, 0, H - 1, value);
      buffer<int, 2> pad_values = make_2d(-m - 1, W + m, -m - 1, H + m, pad_value);
      buffer<int, 2> out_buf({W + 2 * m, H + 2 * m});
      out_buf.translate(-m, -m);
      out_buf.allocate();
      const raw_buffer* ins1[] = {&in_buf};
      const raw_buffer* ins2[] = {&in_buf, &pad_values};
      const raw_buffer* outs[] = {&out_buf};
      memory_counter mem;
      ASSERT_EQ(pad_buffer ? p.evaluate(ins2, outs, mem.context) : p.evaluate(ins1, outs, mem.context), 0);

      auto padded_at = [&](index_t xx, index_t yy) {
        const index_t sx = xx + tx, sy = yy + ty;
        if (0 <= sx && sx < W && 0 <= sy && sy < H) return value(sx, sy) + 1;
        return pad_buffer ? pad_value(xx, yy) : -7;
      };
      for (index_t yy = -m; yy < H + m; ++yy) {
        for (index_t xx = -m; xx < W + m; ++xx) {
          int expected = 0;
          if (stencil) {
            for (index_t dy = -1; dy <= 1; ++dy) {
              for (index_t dx = -1; dx <= 1; ++dx) expected += padded_at(xx + dx, yy + dy);
            }
          } else {
            expected = padded_at(xx, yy) + 1;
          }
          ASSERT_EQ(out_buf(xx, yy), expected) << xx << ", " << yy;
        }
      }
      EXPECT_EQ(mem.allocations, 1);
      EXPECT_EQ(cc.calls, 0);
      // The one allocation is intm at the padded size: padded's box (the output's, and one more
      // on each side for the stencil) translated into intm's coordinates.
      const index_t r = stencil ? 1 : 0;
      ASSERT_EQ(mem.sizes.size(), 1u);
      EXPECT_EQ(mem.sizes[0], (W + 2 * m + 2 * r) * (H + 2 * m + 2 * r) * static_cast<index_t>(sizeof(int)));
    }
  }
}

}  // namespace
}  // namespace slinky
