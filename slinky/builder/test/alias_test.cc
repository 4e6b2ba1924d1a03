// Aliasing: copies removed by making one side a view of the other, and calls run in place.
// Outcomes are asserted through the allocate hook (auto_stack_threshold = 0, so every
// allocation is seen) and a counting copy impl; results against plain references, with
// aliasing on and off (build_options::no_alias_buffers).
#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "test_funcs.h"

namespace slinky {
namespace {

using test::memory_counter;

constexpr index_t W = 20;
constexpr index_t H = 12;

// out(x, y) = in(x - 1, y) + 2 in(x, y) + in(x + 1, y), over out's crop.
index_t stencil(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) {
      out(x, y) = in(x - 1, y) + 2 * in(x, y) + in(x + 1, y);
    }
  }
  return 0;
}

index_t add_one(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x, y) = in(x, y) + 1;
  }
  return 0;
}

index_t times_three(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x, y) = in(x, y) * 3;
  }
  return 0;
}

int input_value(index_t x, index_t y) { return static_cast<int>(x * 7 + y * 1000 + 3); }

buffer<int, 2> make_input(index_t x0, index_t x1, index_t y0, index_t y1) {
  buffer<int, 2> b({x1 - x0 + 1, y1 - y0 + 1});
  b.translate(x0, y0);
  b.allocate();
  for (index_t y = y0; y <= y1; ++y) {
    for (index_t x = x0; x <= x1; ++x) b(x, y) = input_value(x, y);
  }
  return b;
}

int stencil_value(index_t x, index_t y) {
  return input_value(x - 1, y) + 2 * input_value(x, y) + input_value(x + 1, y);
}

struct counting_copy {
  std::atomic<int> calls{0};
  copy_stmt::callable impl() {
    return [this](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
      ++calls;
      copy(s, d, p);
    };
  }
};

class alias : public testing::TestWithParam<bool> {
protected:
  bool aliasing() const { return GetParam(); }
  build_options options() const {
    build_options o;
    o.no_alias_buffers = !aliasing();
    return o;
  }
};

// A stencil copied (translated by (2, -1)) into the output: the stencil writes into the output.
TEST_P(alias, stencil_into_translated_output) {
  for (bool loop : {false, true}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    counting_copy cc;
    func s = func::make(stencil, {{in, {bounds(x - 1, x + 1), point(y)}}}, {{intm, {x, y}}});
    func c = func::make_copy({intm, {point(x + 2), point(y - 1)}}, {out, {x, y}}, cc.impl());
    if (loop) c.loops({{y, 2}});
    pipeline p = build_pipeline(ctx, {in}, {out}, options());

    buffer<int, 2> in_buf = make_input(1, W + 4, -1, H);
    buffer<int, 2> out_buf({W, H});
    out_buf.allocate();
    memory_counter mem;
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
    for (index_t yy = 0; yy < H; ++yy) {
      for (index_t xx = 0; xx < W; ++xx) ASSERT_EQ(out_buf(xx, yy), stencil_value(xx + 2, yy - 1));
    }
    if (aliasing()) {
      EXPECT_EQ(mem.allocations, 0);
      EXPECT_EQ(cc.calls, 0);
    } else {
      EXPECT_GT(mem.allocations, 0);
      EXPECT_GT(cc.calls, 0);
    }
  }
}

// The same into a transposed output.
TEST_P(alias, stencil_into_transposed_output) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  counting_copy cc;
  func s = func::make(stencil, {{in, {bounds(x - 1, x + 1), point(y)}}}, {{intm, {x, y}}});
  func c = func::make_copy({intm, {point(y), point(x)}}, {out, {x, y}}, cc.impl());
  pipeline p = build_pipeline(ctx, {in}, {out}, options());

  buffer<int, 2> in_buf = make_input(-1, H, 0, W - 1);
  buffer<int, 2> out_buf({W, H});
  out_buf.allocate();
  memory_counter mem;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
  for (index_t yy = 0; yy < H; ++yy) {
    for (index_t xx = 0; xx < W; ++xx) ASSERT_EQ(out_buf(xx, yy), stencil_value(yy, xx));
  }
  EXPECT_EQ(mem.allocations, aliasing() ? 0 : 1);
  EXPECT_EQ(cc.calls, aliasing() ? 0 : 1);
}

// An input copied (translated) into a stencil's input: the stencil reads the input directly.
TEST_P(alias, input_copied_into_stencil_input) {
  for (bool loop : {false, true}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto shifted = buffer_expr::make(ctx, "shifted", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    counting_copy cc;
    func c = func::make_copy({in, {point(x - 3), point(y + 1)}}, {shifted, {x, y}}, cc.impl());
    func s = func::make(stencil, {{shifted, {bounds(x - 1, x + 1), point(y)}}}, {{out, {x, y}}});
    if (loop) s.loops({{y, 1}});
    pipeline p = build_pipeline(ctx, {in}, {out}, options());

    buffer<int, 2> in_buf = make_input(-4, W - 2, 1, H);
    buffer<int, 2> out_buf({W, H});
    out_buf.allocate();
    memory_counter mem;
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
    for (index_t yy = 0; yy < H; ++yy) {
      for (index_t xx = 0; xx < W; ++xx) {
        const int expected =
            input_value(xx - 4, yy + 1) + 2 * input_value(xx - 3, yy + 1) + input_value(xx - 2, yy + 1);
        ASSERT_EQ(out_buf(xx, yy), expected);
      }
    }
    EXPECT_EQ(mem.allocations == 0, aliasing());
    EXPECT_EQ(cc.calls == 0, aliasing());
  }
}

// Two producers concatenated (along y) or stacked into the output write their slots directly.
TEST_P(alias, concatenated_and_stacked_outputs) {
  for (bool stack : {false, true}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", stack ? 3 : 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
    counting_copy cc;
    func fa = func::make(add_one, {{in, {point(x), point(y)}}}, {{a, {x, y}}});
    func fb = func::make(times_three, {{in, {point(x), point(y)}}}, {{b, {x, y}}});
    func c = stack ? func::make_stack({a, b}, {out, {x, y, z}}, 2, cc.impl())
                   : func::make_concat({a, b}, {out, {x, y}}, 1, {0, 5, H}, cc.impl());
    pipeline p = build_pipeline(ctx, {in}, {out}, options());

    buffer<int, 2> in_buf = make_input(0, W - 1, 0, H - 1);
    buffer<int, 3> out3({W, H, 2});
    buffer<int, 2> out2({W, H});
    out3.allocate();
    out2.allocate();
    memory_counter mem;
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {stack ? static_cast<const raw_buffer*>(&out3) : &out2};
    ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
    for (index_t yy = 0; yy < H; ++yy) {
      for (index_t xx = 0; xx < W; ++xx) {
        if (stack) {
          ASSERT_EQ(out3(xx, yy, 0), input_value(xx, yy) + 1);
          ASSERT_EQ(out3(xx, yy, 1), input_value(xx, yy) * 3);
        } else {
          const int expected = yy < 5 ? input_value(xx, yy) + 1 : input_value(xx, yy - 5) * 3;
          ASSERT_EQ(out2(xx, yy), expected) << xx << " " << yy;
        }
      }
    }
    EXPECT_EQ(mem.allocations, aliasing() ? 0 : 2);
    EXPECT_EQ(cc.calls, aliasing() ? 0 : 2);
  }
}

// in -> copy -> b1 -> copy -> b2 -> copy -> out, each shifted: at most one copy is left.
TEST_P(alias, chain_of_shifted_copies) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto b1 = buffer_expr::make(ctx, "b1", 2, sizeof(int));
  auto b2 = buffer_expr::make(ctx, "b2", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  counting_copy cc;
  func c1 = func::make_copy({in, {point(x + 1), point(y)}}, {b1, {x, y}}, cc.impl());
  func c2 = func::make_copy({b1, {point(x), point(y + 2)}}, {b2, {x, y}}, cc.impl());
  func c3 = func::make_copy({b2, {point(x - 3), point(y - 1)}}, {out, {x, y}}, cc.impl());
  pipeline p = build_pipeline(ctx, {in}, {out}, options());

  buffer<int, 2> in_buf = make_input(-2, W - 3, 1, H);
  buffer<int, 2> out_buf({W, H});
  out_buf.allocate();
  memory_counter mem;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
  for (index_t yy = 0; yy < H; ++yy) {
    for (index_t xx = 0; xx < W; ++xx) ASSERT_EQ(out_buf(xx, yy), input_value(xx - 2, yy + 1));
  }
  if (aliasing()) {
    EXPECT_LE(cc.calls, 1);
    EXPECT_EQ(mem.allocations, 0);
  } else {
    EXPECT_EQ(cc.calls, 3);
  }
}

// A stencil padded into the output: the stencil writes the inside, only the padding is copied.
TEST_P(alias, padded_stencil_output) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  auto pad = buffer_expr::make_scalar<int>(ctx, "pad", -5);
  var x(ctx, "x"), y(ctx, "y");
  counting_copy cc;
  func s = func::make(stencil, {{in, {bounds(x - 1, x + 1), point(y)}}}, {{intm, {x, y}}});
  // Inside [2, W - 3] x [1, H - 2] the stencil, outside the pad.
  func c = func::make_copy({intm, {point(x), point(y)}, {bounds(2, W - 3), bounds(1, H - 2)}}, {out, {x, y}}, {pad, {}},
                           cc.impl());
  pipeline p = build_pipeline(ctx, {in}, {out}, options());

  buffer<int, 2> in_buf = make_input(1, W - 2, 1, H - 2);
  buffer<int, 2> out_buf({W, H});
  out_buf.allocate();
  memory_counter mem;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
  for (index_t yy = 0; yy < H; ++yy) {
    for (index_t xx = 0; xx < W; ++xx) {
      const bool inside = 2 <= xx && xx <= W - 3 && 1 <= yy && yy <= H - 2;
      ASSERT_EQ(out_buf(xx, yy), inside ? stencil_value(xx, yy) : -5) << xx << " " << yy;
    }
  }
  EXPECT_EQ(mem.allocations, aliasing() ? 0 : 1);
  EXPECT_EQ(cc.calls, aliasing() ? 0 : 1);
}

// The same with a crop bounded on one side only (x >= 2) and not at all in y.
TEST_P(alias, padded_output_with_partial_crop) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  auto pad = buffer_expr::make_scalar<int>(ctx, "pad", -5);
  var x(ctx, "x"), y(ctx, "y");
  counting_copy cc;
  func s = func::make(add_one, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func c = func::make_copy({intm, {point(x), point(y)}, {interval_expr(2, expr()), interval_expr()}}, {out, {x, y}},
                           {pad, {}}, cc.impl());
  pipeline p = build_pipeline(ctx, {in}, {out}, options());

  buffer<int, 2> in_buf = make_input(2, W - 1, 0, H - 1);
  buffer<int, 2> out_buf({W, H});
  out_buf.allocate();
  memory_counter mem;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
  for (index_t yy = 0; yy < H; ++yy) {
    for (index_t xx = 0; xx < W; ++xx) ASSERT_EQ(out_buf(xx, yy), xx >= 2 ? input_value(xx, yy) + 1 : -5);
  }
  EXPECT_EQ(mem.allocations, aliasing() ? 0 : 1);
  EXPECT_EQ(cc.calls, aliasing() ? 0 : 1);
}

// An intermediate read by the copy and by another func must not become a view of the output
// (the other consumer reads it after... nothing would be wrong here, but the copy's source must
// be read by nothing else to be written in place of the destination).
TEST_P(alias, intermediate_consumed_twice) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out1 = buffer_expr::make(ctx, "out1", 2, sizeof(int));
  auto out2 = buffer_expr::make(ctx, "out2", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  counting_copy cc;
  func s = func::make(add_one, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func c = func::make_copy({intm, {point(x + 1), point(y)}}, {out1, {x, y}}, cc.impl());
  func g = func::make(stencil, {{intm, {bounds(x - 1, x + 1), point(y)}}}, {{out2, {x, y}}});
  pipeline p = build_pipeline(ctx, {in}, {out1, out2}, options());

  buffer<int, 2> in_buf = make_input(-1, W + 1, 0, H - 1);
  buffer<int, 2> o1({W, H}), o2({W, H});
  o1.allocate();
  o2.allocate();
  memory_counter mem;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&o1, &o2};
  ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
  for (index_t yy = 0; yy < H; ++yy) {
    for (index_t xx = 0; xx < W; ++xx) {
      ASSERT_EQ(o1(xx, yy), input_value(xx + 1, yy) + 1);
      ASSERT_EQ(o2(xx, yy), stencil_value(xx, yy) + 4);
    }
  }
  EXPECT_EQ(mem.allocations, 1);
  EXPECT_EQ(cc.calls, 1);
}

// An input transposed into the input of an elementwise func: at the root the elementwise func
// reads the input through a transposed view; in a loop the copy is kept (it is a cache-blocked
// transpose of each chunk, better than strided reads).
TEST_P(alias, transposed_input) {
  for (bool loop : {false, true}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    counting_copy cc;
    func c = func::make_copy({in, {point(y), point(x)}}, {t, {x, y}}, cc.impl());
    func f = func::make(add_one, {{t, {point(x), point(y)}}}, {{out, {x, y}}});
    if (loop) f.loops({{y, 4}});
    pipeline p = build_pipeline(ctx, {in}, {out}, options());

    buffer<int, 2> in_buf = make_input(0, H - 1, 0, W - 1);
    buffer<int, 2> out_buf({W, H});
    out_buf.allocate();
    memory_counter mem;
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
    for (index_t yy = 0; yy < H; ++yy) {
      for (index_t xx = 0; xx < W; ++xx) ASSERT_EQ(out_buf(xx, yy), input_value(yy, xx) + 1);
    }
    const bool viewed = aliasing() && !loop;
    EXPECT_EQ(cc.calls == 0, viewed);
    EXPECT_EQ(mem.allocations == 0, viewed);
  }
}

// The client declared the intermediate's stride (rows padded to 64 elements): its layout is
// the client's, so it is not a view of the output.
TEST_P(alias, declared_stride_is_respected) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  intm->dim(1).stride = 64 * static_cast<index_t>(sizeof(int));
  index_t seen_stride = 0;
  func s = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        seen_stride = b.dim(1).stride();
        return add_one(a, b);
      },
      {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func c = func::make_copy({intm, {point(y), point(x)}}, {out, {x, y}});
  pipeline p = build_pipeline(ctx, {in}, {out}, options());

  buffer<int, 2> in_buf = make_input(0, H - 1, 0, W - 1);
  buffer<int, 2> out_buf({W, H});
  out_buf.allocate();
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs), 0);
  EXPECT_EQ(seen_stride, 64 * static_cast<index_t>(sizeof(int)));
  for (index_t yy = 0; yy < H; ++yy) {
    for (index_t xx = 0; xx < W; ++xx) ASSERT_EQ(out_buf(xx, yy), input_value(yy, xx) + 1);
  }
}

// Intermediates whose declared strides are those of the view they would be (the client's layout
// and the view's agree) are views all the same: a copy of an input whose destination declares the
// input's strides, and a producer's output declaring the strides of the output it is copied into
// (translated by (1, 2)). The inputs and outputs have rows padded to 32 elements, so the strides
// are not the dense ones; the callbacks see the declared strides either way. A declared stride
// that differs from the view's (64 elements) keeps the copy.
TEST_P(alias, declared_strides_that_agree) {
  enum kind { from_input, into_output, differ };
  for (kind k : {from_input, into_output, differ}) {
    SCOPED_TRACE(k);
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    counting_copy cc;
    index_t seen_stride = 0;
    auto record = [&](const buffer<const int>& a, const buffer<int>& b) {
      seen_stride = k == from_input ? a.dim(1).stride() : b.dim(1).stride();
      return add_one(a, b);
    };
    func f, c;
    if (k == from_input) {
      for (int d = 0; d < 2; ++d) intm->dim(d).stride = in->dim(d).stride;
      c = func::make_copy({in, {point(x), point(y)}}, {intm, {x, y}}, cc.impl());
      f = func::make(record, {{intm, {point(x), point(y)}}}, {{out, {x, y}}});
    } else {
      for (int d = 0; d < 2; ++d) intm->dim(d).stride = out->dim(d).stride;
      if (k == differ) intm->dim(1).stride = 64 * static_cast<index_t>(sizeof(int));
      f = func::make(record, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
      c = func::make_copy({intm, {point(x + 1), point(y + 2)}}, {out, {x, y}}, cc.impl());
    }
    pipeline p = build_pipeline(ctx, {in}, {out}, options());

    buffer<int, 2> in_buf({32, H + 2});
    in_buf.mutable_dim(0).set_extent(W + 1);
    in_buf.allocate();
    for (index_t yy = 0; yy < H + 2; ++yy) {
      for (index_t xx = 0; xx <= W; ++xx) in_buf(xx, yy) = input_value(xx, yy);
    }
    buffer<int, 2> out_buf({32, H});
    out_buf.mutable_dim(0).set_extent(W);
    out_buf.allocate();
    ASSERT_EQ(in_buf.dim(1).stride(), 32 * static_cast<index_t>(sizeof(int)));
    ASSERT_EQ(out_buf.dim(1).stride(), 32 * static_cast<index_t>(sizeof(int)));
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    memory_counter mem;
    ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
    for (index_t yy = 0; yy < H; ++yy) {
      for (index_t xx = 0; xx < W; ++xx) {
        ASSERT_EQ(out_buf(xx, yy), k == from_input ? input_value(xx, yy) + 1 : input_value(xx + 1, yy + 2) + 1);
      }
    }
    const index_t declared = k == differ ? 64 * sizeof(int) : 32 * sizeof(int);
    EXPECT_EQ(seen_stride, declared);
    const bool viewed = aliasing() && k != differ;
    EXPECT_EQ(mem.allocations, viewed ? 0 : 1);
    EXPECT_EQ(cc.calls, viewed ? 0 : 1);
  }
}

// out(x, y) = in(x, y) + 1 where in has y (its crop), -7 elsewhere.
index_t add_one_inside_crop(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) {
      out(x, y) = in.dim(1).min() <= y && y <= in.dim(1).max() ? in(x, y) + 1 : -7;
    }
  }
  return 0;
}

// d, read through a crop to rows [2, H - 3] by a padded copy (pad -5) into out1 and by
// add_one_inside_crop into out2. With two consumers d is never a view of an output.
struct read_through_crops {
  func pad_copy, call;
  read_through_crops(const buffer_expr_ptr& d, const buffer_expr_ptr& out1, const buffer_expr_ptr& out2,
                     const buffer_expr_ptr& pad, var x, var y) {
    const box_expr crop = {interval_expr(), bounds(2, H - 3)};
    pad_copy = func::make_copy({d, {point(x), point(y)}, crop}, {out1, {x, y}}, {pad, {}});
    call = func::make(add_one_inside_crop, {{d, {point(x), point(y)}, crop}}, {{out2, {x, y}}});
  }
  static bool inside(index_t y) { return 2 <= y && y <= H - 3; }
};

// An input broadcast along y (a view of it would have stride 0 in y, and a stride-0 dim
// contains every coordinate: cropping it removes nothing), read through crops in y: the
// broadcast is not a view of the input, so that the crops hold
// (random_regressions.padded_transposing_copy_into_a_user_folded_buffer).
TEST_P(alias, broadcast_read_through_a_crop) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
  auto out1 = buffer_expr::make(ctx, "out1", 2, sizeof(int));
  auto out2 = buffer_expr::make(ctx, "out2", 2, sizeof(int));
  auto pad = buffer_expr::make_scalar<int>(ctx, "pad", -5);
  var x(ctx, "x"), y(ctx, "y");
  counting_copy cc;
  func c = func::make_copy({in, {point(x)}}, {b, {x, y}}, cc.impl());
  read_through_crops consumers(b, out1, out2, pad, x, y);
  pipeline p = build_pipeline(ctx, {in}, {out1, out2}, options());

  buffer<int, 1> in_buf({W});
  in_buf.allocate();
  for (index_t xx = 0; xx < W; ++xx) in_buf(xx) = input_value(xx, 0);
  buffer<int, 2> o1({W, H}), o2({W, H});
  o1.allocate();
  o2.allocate();
  memory_counter mem;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&o1, &o2};
  ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
  for (index_t yy = 0; yy < H; ++yy) {
    const bool inside = read_through_crops::inside(yy);
    for (index_t xx = 0; xx < W; ++xx) {
      ASSERT_EQ(o1(xx, yy), inside ? input_value(xx, 0) : -5) << xx << " " << yy;
      ASSERT_EQ(o2(xx, yy), inside ? input_value(xx, 0) + 1 : -7) << xx << " " << yy;
    }
  }
  EXPECT_EQ(mem.allocations, 1);
  EXPECT_EQ(cc.calls, 1);
}

// The same with a pointwise copy of an input that has stride 0 in y at run time (a view of
// it would too): not a view either.
TEST_P(alias, copy_of_an_input_read_through_a_crop) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
  auto out1 = buffer_expr::make(ctx, "out1", 2, sizeof(int));
  auto out2 = buffer_expr::make(ctx, "out2", 2, sizeof(int));
  auto pad = buffer_expr::make_scalar<int>(ctx, "pad", -5);
  var x(ctx, "x"), y(ctx, "y");
  counting_copy cc;
  func c = func::make_copy({in, {point(x + 1), point(y)}}, {t, {x, y}}, cc.impl());
  read_through_crops consumers(t, out1, out2, pad, x, y);
  pipeline p = build_pipeline(ctx, {in}, {out1, out2}, options());

  // One row, repeated along y by a stride of 0.
  buffer<int, 2> in_buf = make_input(1, W, 0, 0);
  in_buf.dims[1] = dim(0, H - 1, 0);
  buffer<int, 2> o1({W, H}), o2({W, H});
  o1.allocate();
  o2.allocate();
  memory_counter mem;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&o1, &o2};
  ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
  for (index_t yy = 0; yy < H; ++yy) {
    const bool inside = read_through_crops::inside(yy);
    for (index_t xx = 0; xx < W; ++xx) {
      ASSERT_EQ(o1(xx, yy), inside ? input_value(xx + 1, 0) : -5) << xx << " " << yy;
      ASSERT_EQ(o2(xx, yy), inside ? input_value(xx + 1, 0) + 1 : -7) << xx << " " << yy;
    }
  }
  EXPECT_EQ(mem.allocations, 1);
  EXPECT_EQ(cc.calls, 1);
}

// A translated copy of an intermediate the builder lays out (read by another func too, so not
// a view of the copy's destination), read through crops: its view has the intermediate's
// strides, which are not 0, so the crops hold and the copy is still removed.
TEST_P(alias, copy_of_an_intermediate_read_through_a_crop) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto s = buffer_expr::make(ctx, "s", 2, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
  auto out1 = buffer_expr::make(ctx, "out1", 2, sizeof(int));
  auto out2 = buffer_expr::make(ctx, "out2", 2, sizeof(int));
  auto out3 = buffer_expr::make(ctx, "out3", 2, sizeof(int));
  auto pad = buffer_expr::make_scalar<int>(ctx, "pad", -5);
  var x(ctx, "x"), y(ctx, "y");
  counting_copy cc;
  func fs = func::make(add_one, {{in, {point(x), point(y)}}}, {{s, {x, y}}});
  func c = func::make_copy({s, {point(x + 1), point(y)}}, {t, {x, y}}, cc.impl());
  func f3 = func::make(times_three, {{s, {point(x), point(y)}}}, {{out3, {x, y}}});
  read_through_crops consumers(t, out1, out2, pad, x, y);
  pipeline p = build_pipeline(ctx, {in}, {out1, out2, out3}, options());

  buffer<int, 2> in_buf = make_input(0, W, 0, H - 1);
  buffer<int, 2> o1({W, H}), o2({W, H}), o3({W, H});
  o1.allocate();
  o2.allocate();
  o3.allocate();
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&o1, &o2, &o3};
  ASSERT_EQ(p.evaluate(ins, outs), 0);
  for (index_t yy = 0; yy < H; ++yy) {
    const bool inside = read_through_crops::inside(yy);
    for (index_t xx = 0; xx < W; ++xx) {
      ASSERT_EQ(o1(xx, yy), inside ? input_value(xx + 1, yy) + 1 : -5) << xx << " " << yy;
      ASSERT_EQ(o2(xx, yy), inside ? input_value(xx + 1, yy) + 2 : -7) << xx << " " << yy;
      ASSERT_EQ(o3(xx, yy), (input_value(xx, yy) + 1) * 3) << xx << " " << yy;
    }
  }
  EXPECT_EQ(cc.calls, aliasing() ? 0 : 1);
}

// A folded output cannot hold a view with plain strides: the pipeline refuses it.
TEST(alias_checks, folded_output_is_refused) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func s = func::make(add_one, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func c = func::make_copy({intm, {point(x), point(y)}}, {out, {x, y}});
  pipeline p = build_pipeline(ctx, {in}, {out});

  buffer<int, 2> in_buf = make_input(0, W - 1, 0, H - 1);
  buffer<int, 2> out_buf({W, 4});
  out_buf.allocate();
  out_buf.dims[1] = dim(0, H - 1, out_buf.dim(1).stride(), 4);
  eval_config config;
  std::string failed;
  config.check_failed = [&](const expr& e) { failed = std::to_string(e.defined()); };
  eval_context context;
  context.config = &config;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  EXPECT_NE(p.evaluate(ins, outs, context), 0);
  EXPECT_EQ(failed, "1");
}

// An output whose fold factor is at least its extent is accepted: a view of it untranslated
// addresses it through its fold (also where its range crosses a turn of the fold); a translated
// view addresses it linearly, so the range must lie within one turn. Declared unfolded
// (out->dim(d).fold_factor = dim::unfolded), the output is viewed linearly and checked to be so.
TEST_P(alias, output_with_a_fold_at_least_its_extent) {
  struct output_case {
    index_t dy;          // The copy reads intm(x, y + dy).
    index_t ymin, fold;  // out's rows [ymin, ymin + 4] with this fold factor (-1: unfolded).
    bool declared;       // out->dim(1).fold_factor = dim::unfolded.
    bool accepted;
  };
  const output_case cases[] = {
      {0, 0, 5, false, true},  {0, 3, 5, false, true},   // crosses a turn of the fold
      {0, 2, 8, false, true},  {0, 0, 3, false, false},  // a ring buffer smaller than the output
      {2, 3, 8, false, true},                            // translated, within one turn
      {2, 3, 5, false, false},                           // translated, crossing a turn: refused when aliased
      {2, 3, -1, true, true},  {2, 0, 5, true, false},   // declared unfolded, given folded
  };
  for (const output_case& oc : cases) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    if (oc.declared) out->dim(1).fold_factor = dim::unfolded;
    counting_copy cc;
    func s = func::make(add_one, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
    func c = func::make_copy({intm, {point(x), point(y + oc.dy)}}, {out, {x, y}}, cc.impl());
    pipeline p = build_pipeline(ctx, {in}, {out}, options());

    buffer<int, 2> in_buf = make_input(0, W - 1, 0, oc.ymin + 4 + oc.dy);
    buffer<int, 2> out_buf({W, oc.fold > 0 ? oc.fold : 5});
    out_buf.allocate();
    out_buf.dims[1] = dim(oc.ymin, oc.ymin + 4, out_buf.dim(1).stride(), oc.fold);
    memory_counter mem;
    int failures = 0;
    mem.config.check_failed = [&](const expr&) { ++failures; };
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    const index_t result = p.evaluate(ins, outs, mem.context);
    // Without aliasing only the declaration is checked.
    const bool accepted = oc.accepted || (!aliasing() && !oc.declared);
    ASSERT_EQ(result == 0, accepted) << oc.dy << " " << oc.ymin << " " << oc.fold;
    if (!accepted) {
      EXPECT_EQ(failures, 1);
      EXPECT_EQ(mem.allocations, 0);
      continue;
    }
    for (index_t yy = oc.ymin; yy <= oc.ymin + 4; ++yy) {
      // A ring buffer of 3 rows holds the last 3.
      if (oc.fold > 0 && oc.fold < 5 && yy < oc.ymin + 5 - oc.fold) continue;
      for (index_t xx = 0; xx < W; ++xx) ASSERT_EQ(out_buf(xx, yy), input_value(xx, yy + oc.dy) + 1);
    }
    EXPECT_EQ(mem.allocations, aliasing() ? 0 : 1);
    EXPECT_EQ(cc.calls > 0, !aliasing());
  }
}

// A chain of copies into an output: the view of the output takes its fold, and so does a view of
// that view where it is untranslated; translated along such a dim, the first copy stays.
TEST_P(alias, chain_of_copies_into_a_folded_output) {
  for (index_t dy : {0, 1}) {
    for (index_t fold : {index_t{5}, dim::unfolded}) {
      node_context ctx;
      auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
      auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
      auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
      auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
      var x(ctx, "x"), y(ctx, "y");
      counting_copy cc;
      func f = func::make(add_one, {{in, {point(x), point(y)}}}, {{a, {x, y}}});
      func c1 = func::make_copy({a, {point(x), point(y + dy)}}, {b, {x, y}}, cc.impl());
      func c2 = func::make_copy({b, {point(x), point(y)}}, {out, {x, y}}, cc.impl());
      pipeline p = build_pipeline(ctx, {in}, {out}, options());

      buffer<int, 2> in_buf = make_input(0, W - 1, 0, 9);
      buffer<int, 2> out_buf({W, 5});
      out_buf.allocate();
      // Rows [3, 7]: with fold 5, they cross a turn of the fold.
      out_buf.dims[1] = dim(3, 7, out_buf.dim(1).stride(), fold);
      memory_counter mem;
      const raw_buffer* ins[] = {&in_buf};
      const raw_buffer* outs[] = {&out_buf};
      ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0) << dy << " " << fold;
      for (index_t yy = 3; yy <= 7; ++yy) {
        for (index_t xx = 0; xx < W; ++xx) ASSERT_EQ(out_buf(xx, yy), input_value(xx, yy + dy) + 1);
      }
      if (aliasing()) {
        EXPECT_EQ(mem.allocations, dy == 0 ? 0 : 1);
        EXPECT_EQ(cc.calls > 0, dy != 0);
      }
    }
  }
}

// A func allowed to write its output over its input does, when nothing else reads the input.
TEST_P(alias, in_place) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  const int* a_base = nullptr;
  const int* b_base = nullptr;
  func fa = func::make(add_one, {{in, {point(x), point(y)}}}, {{a, {x, y}}});
  func fb = func::make(
      [&](const buffer<const int>& i, const buffer<int>& o) {
        a_base = &i(i.dim(0).min(), i.dim(1).min());
        b_base = &o(o.dim(0).min(), o.dim(1).min());
        return times_three(i, o);
      },
      {{a, {point(x), point(y)}}}, {{b, {x, y}}},
      {.allow_in_place = 1, .min_rank = std::numeric_limits<int>::max(), .name = "in_place"});
  func fo = func::make(stencil, {{b, {bounds(x - 1, x + 1), point(y)}}}, {{out, {x, y}}});
  pipeline p = build_pipeline(ctx, {in}, {out}, options());

  buffer<int, 2> in_buf = make_input(-1, W, 0, H - 1);
  buffer<int, 2> out_buf({W, H});
  out_buf.allocate();
  memory_counter mem;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
  for (index_t yy = 0; yy < H; ++yy) {
    for (index_t xx = 0; xx < W; ++xx) {
      const int expected =
          (input_value(xx - 1, yy) + 1) * 3 + 2 * (input_value(xx, yy) + 1) * 3 + (input_value(xx + 1, yy) + 1) * 3;
      ASSERT_EQ(out_buf(xx, yy), expected);
    }
  }
  EXPECT_EQ(mem.allocations, aliasing() ? 1 : 2);
  EXPECT_EQ(a_base == b_base, aliasing());
}

// An in-place chain into a pipeline output: in -> add_one -> a -> times_three -> b -> add_one ->
// out, the last two allowed to write over their inputs, in a loop over out's rows (a serial loop
// with the default storage, a serial loop with a and b stored inside it, a parallel loop, which
// stores them inside it). The chain is computed in the output's memory, in each iteration in
// its slice: no allocation (two per iteration, or two at the root, without aliasing), and both
// in-place funcs see their input where their output is (stored in the loop, the very same
// buffer). Output extents given at run time, or declared constant.
TEST_P(alias, in_place_chain_into_the_output) {
  enum schedule { serial, stored_in_loop, parallel };
  for (bool constant : {false, true}) {
    for (schedule sched : {serial, stored_in_loop, parallel}) {
      for (index_t step : {1, 5}) {
        SCOPED_TRACE(testing::Message() << "constant " << constant << " schedule " << sched << " step " << step);
        node_context ctx;
        auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
        auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
        auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
        auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
        if (constant) {
          out->dim(0).bounds = bounds(0, W - 1);
          out->dim(1).bounds = bounds(0, H - 1);
        }
        var x(ctx, "x"), y(ctx, "y");
        std::atomic<int> calls{0}, same_base{0}, same_memory{0};
        auto in_place = [&](index_t (*fn)(const buffer<const int>&, const buffer<int>&)) {
          return [&calls, &same_base, &same_memory, fn](const buffer<const int>& i, const buffer<int>& o) {
            ++calls;
            if (i.base() == o.base() && i.dim(0).min() == o.dim(0).min() && i.dim(1).min() == o.dim(1).min()) {
              ++same_base;
            }
            if (&i(o.dim(0).min(), o.dim(1).min()) == o.base()) ++same_memory;
            return fn(i, o);
          };
        };
        const call_stmt::attributes attrs{
            .allow_in_place = 1, .min_rank = std::numeric_limits<int>::max(), .name = "in_place"};
        func fa = func::make(add_one, {{in, {point(x), point(y)}}}, {{a, {x, y}}});
        func fb = func::make(in_place(times_three), {{a, {point(x), point(y)}}}, {{b, {x, y}}}, attrs);
        func fo = func::make(in_place(add_one), {{b, {point(x), point(y)}}}, {{out, {x, y}}}, attrs);
        fo.loops({{y, step, sched == parallel ? loop::parallel : loop::serial}});
        if (sched == stored_in_loop) {
          a->store_at({&fo, y});
          b->store_at({&fo, y});
        }
        pipeline p = build_pipeline(ctx, {in}, {out}, options());

        buffer<int, 2> in_buf = make_input(0, W - 1, 0, H - 1);
        buffer<int, 2> out_buf({W, H});
        out_buf.allocate();
        memory_counter mem;
        const raw_buffer* ins[] = {&in_buf};
        const raw_buffer* outs[] = {&out_buf};
        ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
        for (index_t yy = 0; yy < H; ++yy) {
          for (index_t xx = 0; xx < W; ++xx) ASSERT_EQ(out_buf(xx, yy), (input_value(xx, yy) + 1) * 3 + 1);
        }
        const int iterations = static_cast<int>((H + step - 1) / step);
        EXPECT_EQ(calls, 2 * iterations);
        if (aliasing()) {
          EXPECT_EQ(mem.allocations, 0);
          EXPECT_EQ(same_memory, calls);
          // Stored in the loop, the input is the output's slice itself; stored outside, it is the
          // whole of the chain's memory (the output), of which the output's slice is a crop.
          EXPECT_EQ(same_base, sched == serial ? 2 : calls.load());
        } else {
          EXPECT_EQ(mem.allocations, sched == serial ? 2 : 2 * iterations);
          EXPECT_EQ(same_memory, 0);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(on_and_off, alias, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) { return info.param ? "aliased" : "copied"; });

}  // namespace
}  // namespace slinky
