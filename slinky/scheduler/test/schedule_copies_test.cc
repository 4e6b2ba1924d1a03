// The scheduler on graphs with copies and multi-output funcs (docs/scheduler.md, "What this step
// handles"): a concatenation, a stack, a padded copy and a func with two outputs. Each scheduled
// pipeline computes what the unscheduled one computes; the decisions are those the doc states.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/schedule.h"

namespace slinky {

namespace {

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

// out = in * a + b over out's crop.
struct scale_offset {
  float a, b;
  index_t operator()(const buffer<const float>& in, const buffer<float>& out) const {
    for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
      for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x, y) = in(x, y) * a + b;
    }
    return 0;
  }
};

void fill_with(buffer<float, 2>& b, const std::function<float(index_t, index_t)>& f) {
  for (index_t y = b.dim(1).min(); y <= b.dim(1).max(); ++y) {
    for (index_t x = b.dim(0).min(); x <= b.dim(0).max(); ++x) b(x, y) = f(x, y);
  }
}

void expect_equal(const buffer<float, 2>& a, const buffer<float, 2>& b) {
  ASSERT_EQ(a.dim(0).extent(), b.dim(0).extent());
  ASSERT_EQ(a.dim(1).extent(), b.dim(1).extent());
  for (index_t y = a.dim(1).min(); y <= a.dim(1).max(); ++y) {
    for (index_t x = a.dim(0).min(); x <= a.dim(0).max(); ++x) ASSERT_EQ(a(x, y), b(x, y)) << x << ", " << y;
  }
}

// The decision on the func writing the buffer named `name` (copies have no names of their own).
schedule_report::func_decision decision_on(const schedule_report& r, const node_context& ctx, const std::string& name) {
  for (const schedule_report::func_decision& d : r.funcs) {
    for (const func::output& o : d.f->outputs()) {
      if (ctx.name(o.buffer->sym()) == name) return d;
    }
  }
  ADD_FAILURE() << "no decision on the func writing " << name;
  return {};
}

using placement = schedule_report::placement;

}  // namespace

// e1 = in1 * 2 + 1, e2 = in2 * 3 - 1, cat = e1 and e2 concatenated along `dim` (e1 first, n1
// along it; e2 n2), out = cat * 0.5. The other dim has extent m.
void concat_case(int dim, index_t n1, index_t n2, index_t m) {
  auto shape = [&](index_t n) { return dim == 0 ? std::vector<index_t>{n, m} : std::vector<index_t>{m, n}; };
  auto make = [&](node_context& ctx, buffer_expr_ptr& in1, buffer_expr_ptr& in2, buffer_expr_ptr& out,
                  std::vector<func>& funcs) {
    var x(ctx, "x"), y(ctx, "y");
    in1 = buffer_expr::make(ctx, "in1", 2, sizeof(float));
    in2 = buffer_expr::make(ctx, "in2", 2, sizeof(float));
    auto e1 = buffer_expr::make(ctx, "e1", 2, sizeof(float));
    auto e2 = buffer_expr::make(ctx, "e2", 2, sizeof(float));
    auto cat = buffer_expr::make(ctx, "cat", 2, sizeof(float));
    out = buffer_expr::make(ctx, "out", 2, sizeof(float));
    funcs.push_back(func::make(scale_offset{2, 1}, {{in1, {point(x), point(y)}}}, {{e1, {x, y}}}, {.name = "e1"}));
    funcs.push_back(func::make(scale_offset{3, -1}, {{in2, {point(x), point(y)}}}, {{e2, {x, y}}}, {.name = "e2"}));
    funcs.push_back(func::make_concat({e1, e2}, {cat, {x, y}}, dim, {0, n1, n1 + n2}));
    funcs.push_back(func::make(scale_offset{0.5f, 0}, {{cat, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "out"}));
  };
  auto run = [&](pipeline& p) {
    buffer<float, 2> in1(shape(n1)), in2(shape(n2)), out(shape(n1 + n2));
    in1.allocate();
    in2.allocate();
    out.allocate();
    fill_with(in1, [](index_t x, index_t y) { return static_cast<float>((x + y) % 7); });
    fill_with(in2, [](index_t x, index_t y) { return static_cast<float>((x * y) % 5); });
    EXPECT_EQ(p.evaluate({&in1, &in2}, {&out}), 0);
    return out;
  };
  node_context c0;
  buffer_expr_ptr a0, b0, o0;
  std::vector<func> f0;
  make(c0, a0, b0, o0, f0);
  pipeline p0 = build_pipeline(c0, {a0, b0}, {o0});
  node_context ctx;
  buffer_expr_ptr in1, in2, out;
  std::vector<func> funcs;
  make(ctx, in1, in2, out, funcs);
  schedule_report r = schedule({in1, in2}, {out},
                               schedule_shapes().add(in1, shape(n1)).add(in2, shape(n2)).add(out, shape(n1 + n2)),
                               small_machine());
  const std::string text = r.to_string(&ctx);
  ASSERT_TRUE(r.loops[0].looped) << text;
  EXPECT_EQ(r.loops[0].dim, 1) << text;
  EXPECT_EQ(decision_on(r, ctx, "cat").where, placement::in_loop) << text;
  if (dim == 0) {
    // Each part's rows move with the loop over rows.
    EXPECT_EQ(decision_on(r, ctx, "e1").where, placement::in_loop) << text;
    EXPECT_EQ(decision_on(r, ctx, "e2").where, placement::in_loop) << text;
  } else {
    // Along the loop's dim, a part's window is clamped to its rows of the concatenation (empty in
    // the iterations of the other part's rows): not a translation, the parts stay at the root,
    // without loops of their own (one func alone gains nothing from a loop).
    EXPECT_EQ(decision_on(r, ctx, "e1").where, placement::root) << text;
    EXPECT_EQ(decision_on(r, ctx, "e2").where, placement::root) << text;
    EXPECT_NE(text.find("e1: root (its window is empty in some iterations"), std::string::npos) << text;
    EXPECT_EQ(r.loops.size(), 1u) << text;
  }
  pipeline p = build_pipeline(ctx, {in1, in2}, {out});
  const buffer<float, 2> expected = run(p0), got = run(p);
  expect_equal(got, expected);
}

TEST(schedule_copies, concat_along_the_inner_dim) { concat_case(0, 100, 156, 256); }
TEST(schedule_copies, concat_along_the_loop_dim) { concat_case(1, 100, 156, 256); }

// e1 = in * 2 + 1 and e2 = in * 3 - 1 stacked along a new dim 2 (of extent 2): st; out = st * 0.5.
// The stack reads each input through a slice of its output; the input's bounds are in terms of the
// output's variables (the sliced one unused), so e1 and e2 move with a loop over rows like the copy.
TEST(schedule_copies, stack) {
  const index_t w = 256, h = 256;
  auto make = [&](node_context& ctx, buffer_expr_ptr& in, buffer_expr_ptr& out, std::vector<func>& funcs) {
    var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
    in = buffer_expr::make(ctx, "in", 2, sizeof(float));
    auto e1 = buffer_expr::make(ctx, "e1", 2, sizeof(float));
    auto e2 = buffer_expr::make(ctx, "e2", 2, sizeof(float));
    auto st = buffer_expr::make(ctx, "st", 3, sizeof(float));
    out = buffer_expr::make(ctx, "out", 3, sizeof(float));
    funcs.push_back(func::make(scale_offset{2, 1}, {{in, {point(x), point(y)}}}, {{e1, {x, y}}}, {.name = "e1"}));
    funcs.push_back(func::make(scale_offset{3, -1}, {{in, {point(x), point(y)}}}, {{e2, {x, y}}}, {.name = "e2"}));
    funcs.push_back(func::make_stack({e1, e2}, {st, {x, y, z}}, 2));
    funcs.push_back(func::make(
        [](const buffer<const float>& a, const buffer<float>& o) {
          for_each_element([](float* d, const float* s) { *d = *s * 0.5f; }, o, a);
          return index_t{0};
        },
        {{st, {point(x), point(y), point(z)}}}, {{out, {x, y, z}}}, {.name = "out"}));
  };
  auto run = [&](pipeline& p) {
    buffer<float, 2> in({w, h});
    buffer<float, 3> out({w, h, 2});
    in.allocate();
    out.allocate();
    fill_with(in, [](index_t x, index_t y) { return static_cast<float>((x + 3 * y) % 11); });
    EXPECT_EQ(p.evaluate({&in}, {&out}), 0);
    return out;
  };
  node_context c0;
  buffer_expr_ptr i0, o0;
  std::vector<func> f0;
  make(c0, i0, o0, f0);
  pipeline p0 = build_pipeline(c0, {i0}, {o0});
  node_context ctx;
  buffer_expr_ptr in, out;
  std::vector<func> funcs;
  make(ctx, in, out, funcs);
  schedule_report r =
      schedule({in}, {out}, schedule_shapes().add(in, {w, h}).add(out, {w, h, 2}), small_machine());
  const std::string text = r.to_string(&ctx);
  ASSERT_TRUE(r.loops[0].looped) << text;
  EXPECT_EQ(r.loops[0].dim, 1) << text;
  for (const char* name : {"st", "e1", "e2"}) EXPECT_EQ(decision_on(r, ctx, name).where, placement::in_loop) << text;
  pipeline p = build_pipeline(ctx, {in}, {out});
  const buffer<float, 3> expected = run(p0), got = run(p);
  for (index_t z = 0; z < 2; ++z) {
    for (index_t y = 0; y < h; ++y) {
      for (index_t x = 0; x < w; ++x) ASSERT_EQ(got(x, y, z), expected(x, y, z)) << x << ", " << y << ", " << z;
    }
  }
}

// One func with two outputs: lo = in * 2 + 1 and hi = in * 3 - 1 (one call computes both); out
// is a 3x3 box of lo plus hi. The func is in the loop (both its outputs slide with it).
TEST(schedule_copies, func_with_two_outputs) {
  const index_t w = 256, h = 256;
  auto make = [&](node_context& ctx, buffer_expr_ptr& in, buffer_expr_ptr& out, std::vector<func>& funcs) {
    var x(ctx, "x"), y(ctx, "y");
    in = buffer_expr::make(ctx, "in", 2, sizeof(float));
    auto lo = buffer_expr::make(ctx, "lo", 2, sizeof(float));
    auto hi = buffer_expr::make(ctx, "hi", 2, sizeof(float));
    out = buffer_expr::make(ctx, "out", 2, sizeof(float));
    funcs.push_back(func::make(
        [](const buffer<const float>& a, const buffer<float>& l, const buffer<float>& u) {
          scale_offset{2, 1}(a, l);
          scale_offset{3, -1}(a, u);
          return index_t{0};
        },
        {{in, {point(x), point(y)}}}, {{lo, {x, y}}, {hi, {x, y}}}, {.name = "split"}));
    funcs.push_back(func::make(
        [](const buffer<const float>& l, const buffer<const float>& u, const buffer<float>& o) {
          for (index_t y = o.dim(1).min(); y <= o.dim(1).max(); ++y) {
            for (index_t x = o.dim(0).min(); x <= o.dim(0).max(); ++x) {
              float s = u(x, y);
              for (int dy = -1; dy <= 1; ++dy) {
                for (int dx = -1; dx <= 1; ++dx) s += l(x + dx, y + dy);
              }
              o(x, y) = s;
            }
          }
          return index_t{0};
        },
        {{lo, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}, {hi, {point(x), point(y)}}}, {{out, {x, y}}},
        {.name = "out"}));
  };
  auto run = [&](pipeline& p) {
    buffer<float, 2> in({w + 2, h + 2}), out({w, h});
    in.translate(-1, -1);
    in.allocate();
    out.allocate();
    fill_with(in, [](index_t x, index_t y) { return static_cast<float>((2 * x + y) % 13); });
    EXPECT_EQ(p.evaluate({&in}, {&out}), 0);
    return out;
  };
  node_context c0;
  buffer_expr_ptr i0, o0;
  std::vector<func> f0;
  make(c0, i0, o0, f0);
  pipeline p0 = build_pipeline(c0, {i0}, {o0});
  node_context ctx;
  buffer_expr_ptr in, out;
  std::vector<func> funcs;
  make(ctx, in, out, funcs);
  schedule_report r = schedule({in}, {out}, schedule_shapes().add(in, {w + 2, h + 2}).add(out, {w, h}), small_machine());
  const std::string text = r.to_string(&ctx);
  ASSERT_TRUE(r.loops[0].looped) << text;
  EXPECT_EQ(r.loops[0].dim, 1) << text;
  EXPECT_EQ(decision_on(r, ctx, "lo").where, placement::in_loop) << text;
  EXPECT_EQ(decision_on(r, ctx, "hi").where, placement::in_loop) << text;
  EXPECT_NE(text.find("split: in loop"), std::string::npos) << text;
  EXPECT_NE(text.find("slides with the loop"), std::string::npos) << text;
  pipeline p = build_pipeline(ctx, {in}, {out});
  expect_equal(run(p), run(p0));
}

// scaled = in * 2 + 1; padded = scaled inside in's bounds, 0 outside (a padded copy); out = a 3x3
// box of padded, the same size as in. The copy and scaled move with a loop over rows (the copy's
// window is clamped to in's rows only at the first and last iterations, away from the probes).
TEST(schedule_copies, padded_copy) {
  const index_t w = 256, h = 256;
  auto make = [&](node_context& ctx, buffer_expr_ptr& in, buffer_expr_ptr& out, std::vector<func>& funcs) {
    var x(ctx, "x"), y(ctx, "y");
    in = buffer_expr::make(ctx, "in", 2, sizeof(float));
    auto scaled = buffer_expr::make(ctx, "scaled", 2, sizeof(float));
    auto padded = buffer_expr::make(ctx, "padded", 2, sizeof(float));
    out = buffer_expr::make(ctx, "out", 2, sizeof(float));
    auto zero = buffer_expr::make_scalar<float>(ctx, "zero", 0.0f);
    funcs.push_back(
        func::make(scale_offset{2, 1}, {{in, {point(x), point(y)}}}, {{scaled, {x, y}}}, {.name = "scaled"}));
    funcs.push_back(func::make_copy({scaled, {point(x), point(y)}, in->bounds()}, {padded, {x, y}}, {zero, {}}));
    funcs.push_back(func::make(
        [](const buffer<const float>& a, const buffer<float>& o) {
          for (index_t y = o.dim(1).min(); y <= o.dim(1).max(); ++y) {
            for (index_t x = o.dim(0).min(); x <= o.dim(0).max(); ++x) {
              float s = 0;
              for (int dy = -1; dy <= 1; ++dy) {
                for (int dx = -1; dx <= 1; ++dx) s += a(x + dx, y + dy);
              }
              o(x, y) = s;
            }
          }
          return index_t{0};
        },
        {{padded, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}}, {.name = "out"}));
  };
  auto run = [&](pipeline& p) {
    buffer<float, 2> in({w, h}), out({w, h});
    in.allocate();
    out.allocate();
    fill_with(in, [](index_t x, index_t y) { return static_cast<float>((x + 5 * y) % 9); });
    EXPECT_EQ(p.evaluate({&in}, {&out}), 0);
    return out;
  };
  node_context c0;
  buffer_expr_ptr i0, o0;
  std::vector<func> f0;
  make(c0, i0, o0, f0);
  pipeline p0 = build_pipeline(c0, {i0}, {o0});
  node_context ctx;
  buffer_expr_ptr in, out;
  std::vector<func> funcs;
  make(ctx, in, out, funcs);
  schedule_report r = schedule({in}, {out}, schedule_shapes().add(in, {w, h}).add(out, {w, h}), small_machine());
  const std::string text = r.to_string(&ctx);
  ASSERT_TRUE(r.loops[0].looped) << text;
  EXPECT_EQ(r.loops[0].dim, 1) << text;
  EXPECT_EQ(decision_on(r, ctx, "padded").where, placement::in_loop) << text;
  EXPECT_EQ(decision_on(r, ctx, "scaled").where, placement::in_loop) << text;
  pipeline p = build_pipeline(ctx, {in}, {out});
  const buffer<float, 2> expected = run(p0);
  // The reference: the zero padding is there in the unscheduled result.
  EXPECT_EQ(expected(0, 0), (0 * 2 + 1) + (1 * 2 + 1) + (5 * 2 + 1) + (6 * 2 + 1));
  expect_equal(run(p), expected);
}

}  // namespace slinky
