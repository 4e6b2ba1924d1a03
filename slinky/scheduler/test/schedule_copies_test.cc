// The scheduler on graphs with copies and multi-output funcs (docs/scheduler.md, "What it
// handles"): concatenations, a stack, a padded copy and a func with two outputs. Each scheduled
// pipeline computes what the unscheduled one computes; the decisions are those the doc states.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/schedule.h"

namespace slinky {

namespace {

// Caches of a few KiB, so that the test images exceed them; slow memory (the figures the other
// scheduler tests use), so that loops pay.
machine tiny_cache_machine() {
  machine m;
  m.l1_bytes = 4 * 1024;
  m.l2_bytes = 32 * 1024;
  m.l3_bytes = 256 * 1024;
  m.call_overhead_ns = 30;
  const double ns_per_byte[4] = {0.02, 0.03, 0.06, 0.1};
  std::copy(std::begin(ns_per_byte), std::end(ns_per_byte), std::begin(m.ns_per_byte));
  return m;
}

// out = in * a + b over out's crop, 2-D.
struct affine {
  float a, b;
  index_t operator()(const buffer<const float>& in, const buffer<float>& out) const {
    for_each_element([this](float* o, const float* i) { *o = *i * a + b; }, out, in);
    return 0;
  }
};

// out = the 3x3 box sum of in (+ plus(x, y), if given) over out's crop.
index_t box3x3(const buffer<const float>& in, const buffer<const float>* plus, const buffer<float>& out) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) {
      float s = plus ? (*plus)(x, y) : 0.0f;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) s += in(x + dx, y + dy);
      }
      out(x, y) = s;
    }
  }
  return 0;
}

void fill_with(buffer<float, 2>& b, const std::function<float(index_t, index_t)>& f) {
  for (index_t y = b.dim(1).min(); y <= b.dim(1).max(); ++y) {
    for (index_t x = b.dim(0).min(); x <= b.dim(0).max(); ++x) b(x, y) = f(x, y);
  }
}

template <std::size_t N>
void expect_equal(const buffer<float, N>& a, const buffer<float, N>& b) {
  for (std::size_t d = 0; d < N; ++d) ASSERT_EQ(a.dim(d).extent(), b.dim(d).extent());
  for_each_element([](const float* x, const float* y) { ASSERT_EQ(*x, *y); }, a, b);
}

// A graph made by a test's make function: its inputs, its output and its funcs.
struct graph {
  node_context ctx;
  std::vector<buffer_expr_ptr> ins;
  buffer_expr_ptr out;
  std::vector<func> funcs;

  pipeline build() { return build_pipeline(ctx, ins, {out}); }
};

// The same graph made twice: `plain` unscheduled, `g` scheduled for tiny_cache_machine() with the
// extents `shapes` of its inputs then its output.
struct scheduled_case {
  graph plain, g;
  schedule_report r;
  std::string text;

  scheduled_case(const std::function<void(graph&)>& make, const std::vector<std::vector<index_t>>& shapes) {
    make(plain);
    make(g);
    schedule_shapes s;
    for (std::size_t i = 0; i < g.ins.size(); ++i) s.add(g.ins[i], shapes[i]);
    s.add(g.out, shapes.back());
    r = schedule(g.ins, {g.out}, s, tiny_cache_machine());
    text = r.to_string(&g.ctx);
  }

  // Where the func writing the buffer named `name` goes (copies have no names of their own).
  schedule_report::placement where(const std::string& name) const {
    for (const schedule_report::func_decision& d : r.funcs) {
      for (const func::output& o : d.f->outputs()) {
        if (g.ctx.name(o.buffer->sym()) == name) return d.where;
      }
    }
    ADD_FAILURE() << "no decision on the func writing " << name;
    return schedule_report::placement::left_alone;
  }
};

using placement = schedule_report::placement;

// e1 = in1 * 2 + 1, e2 = in2 * 3 - 1, cat = e1 and e2 concatenated along `dim` (n1 of e1 then n2
// of e2 along it), out = cat * 0.5. The other dim has extent m.
void concat_case(int dim, index_t n1, index_t n2, index_t m) {
  auto shape = [&](index_t n) { return dim == 0 ? std::vector<index_t>{n, m} : std::vector<index_t>{m, n}; };
  auto make = [&](graph& g) {
    var x(g.ctx, "x"), y(g.ctx, "y");
    g.ins = {buffer_expr::make(g.ctx, "in1", 2, sizeof(float)), buffer_expr::make(g.ctx, "in2", 2, sizeof(float))};
    auto e1 = buffer_expr::make(g.ctx, "e1", 2, sizeof(float));
    auto e2 = buffer_expr::make(g.ctx, "e2", 2, sizeof(float));
    auto cat = buffer_expr::make(g.ctx, "cat", 2, sizeof(float));
    g.out = buffer_expr::make(g.ctx, "out", 2, sizeof(float));
    const box_expr pt = {point(x), point(y)};
    g.funcs.push_back(func::make(affine{2, 1}, {{g.ins[0], pt}}, {{e1, {x, y}}}, {.name = "e1"}));
    g.funcs.push_back(func::make(affine{3, -1}, {{g.ins[1], pt}}, {{e2, {x, y}}}, {.name = "e2"}));
    g.funcs.push_back(func::make_concat({e1, e2}, {cat, {x, y}}, dim, {0, n1, n1 + n2}));
    g.funcs.push_back(func::make(affine{0.5f, 0}, {{cat, pt}}, {{g.out, {x, y}}}, {.name = "out"}));
  };
  auto run = [&](pipeline p) {
    buffer<float, 2> in1(shape(n1)), in2(shape(n2)), out(shape(n1 + n2));
    in1.allocate();
    in2.allocate();
    out.allocate();
    fill_with(in1, [](index_t x, index_t y) { return static_cast<float>((x + y) % 7); });
    fill_with(in2, [](index_t x, index_t y) { return static_cast<float>((x * y) % 5); });
    EXPECT_EQ(p.evaluate({&in1, &in2}, {&out}), 0);
    return out;
  };
  scheduled_case c(make, {shape(n1), shape(n2), shape(n1 + n2)});
  ASSERT_TRUE(c.r.loops[0].looped) << c.text;
  EXPECT_EQ(c.r.loops[0].dim, 1) << c.text;
  EXPECT_EQ(c.where("cat"), placement::in_loop) << c.text;
  if (dim == 0) {
    // Each part's rows move with the loop over rows.
    EXPECT_EQ(c.where("e1"), placement::in_loop) << c.text;
    EXPECT_EQ(c.where("e2"), placement::in_loop) << c.text;
  } else {
    // Along the loop's dim, a part's window is clamped to its rows of the concatenation (empty in
    // the iterations of the other part's rows): not a translation, the parts stay at the root,
    // without loops of their own (one func alone gains nothing from a loop).
    EXPECT_EQ(c.where("e1"), placement::root) << c.text;
    EXPECT_EQ(c.where("e2"), placement::root) << c.text;
    EXPECT_NE(c.text.find("e1: root (its window is empty in some iterations"), std::string::npos) << c.text;
    EXPECT_EQ(c.r.loops.size(), 1u) << c.text;
  }
  expect_equal(run(c.g.build()), run(c.plain.build()));
}

}  // namespace

TEST(schedule_copies, concat_along_the_inner_dim) { concat_case(0, 100, 156, 256); }
TEST(schedule_copies, concat_along_the_loop_dim) { concat_case(1, 100, 156, 256); }

// e1 = in * 2 + 1 and e2 = in * 3 - 1 stacked along a new dim 2 (of extent 2): st; out = st * 0.5.
// The stack reads each input through a slice of its output; the input's bounds are in terms of the
// output's variables (the sliced one unused), so e1 and e2 move with a loop over rows like the copy.
TEST(schedule_copies, stack) {
  const index_t w = 256, h = 256;
  auto make = [&](graph& g) {
    var x(g.ctx, "x"), y(g.ctx, "y"), z(g.ctx, "z");
    g.ins = {buffer_expr::make(g.ctx, "in", 2, sizeof(float))};
    auto e1 = buffer_expr::make(g.ctx, "e1", 2, sizeof(float));
    auto e2 = buffer_expr::make(g.ctx, "e2", 2, sizeof(float));
    auto st = buffer_expr::make(g.ctx, "st", 3, sizeof(float));
    g.out = buffer_expr::make(g.ctx, "out", 3, sizeof(float));
    g.funcs.push_back(func::make(affine{2, 1}, {{g.ins[0], {point(x), point(y)}}}, {{e1, {x, y}}}, {.name = "e1"}));
    g.funcs.push_back(func::make(affine{3, -1}, {{g.ins[0], {point(x), point(y)}}}, {{e2, {x, y}}}, {.name = "e2"}));
    g.funcs.push_back(func::make_stack({e1, e2}, {st, {x, y, z}}, 2));
    g.funcs.push_back(
        func::make(affine{0.5f, 0}, {{st, {point(x), point(y), point(z)}}}, {{g.out, {x, y, z}}}, {.name = "out"}));
  };
  auto run = [&](pipeline p) {
    buffer<float, 2> in({w, h});
    buffer<float, 3> out({w, h, 2});
    in.allocate();
    out.allocate();
    fill_with(in, [](index_t x, index_t y) { return static_cast<float>((x + 3 * y) % 11); });
    EXPECT_EQ(p.evaluate({&in}, {&out}), 0);
    return out;
  };
  scheduled_case c(make, {{w, h}, {w, h, 2}});
  ASSERT_TRUE(c.r.loops[0].looped) << c.text;
  EXPECT_EQ(c.r.loops[0].dim, 1) << c.text;
  for (const char* name : {"st", "e1", "e2"}) EXPECT_EQ(c.where(name), placement::in_loop) << name << "\n" << c.text;
  expect_equal(run(c.g.build()), run(c.plain.build()));
}

// One func with two outputs: lo = in * 2 + 1 and hi = in * 3 - 1 (one call computes both); out
// is a 3x3 box of lo plus hi. The func is in the loop (both its outputs slide with it).
TEST(schedule_copies, func_with_two_outputs) {
  const index_t w = 256, h = 256;
  auto make = [&](graph& g) {
    var x(g.ctx, "x"), y(g.ctx, "y");
    g.ins = {buffer_expr::make(g.ctx, "in", 2, sizeof(float))};
    auto lo = buffer_expr::make(g.ctx, "lo", 2, sizeof(float));
    auto hi = buffer_expr::make(g.ctx, "hi", 2, sizeof(float));
    g.out = buffer_expr::make(g.ctx, "out", 2, sizeof(float));
    g.funcs.push_back(func::make(
        [](const buffer<const float>& a, const buffer<float>& l, const buffer<float>& u) {
          affine{2, 1}(a, l);
          affine{3, -1}(a, u);
          return index_t{0};
        },
        {{g.ins[0], {point(x), point(y)}}}, {{lo, {x, y}}, {hi, {x, y}}}, {.name = "split"}));
    g.funcs.push_back(func::make([](const buffer<const float>& l, const buffer<const float>& u,
                                    const buffer<float>& o) { return box3x3(l, &u, o); },
                                 {{lo, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}, {hi, {point(x), point(y)}}},
                                 {{g.out, {x, y}}}, {.name = "out"}));
  };
  auto run = [&](pipeline p) {
    buffer<float, 2> in({w + 2, h + 2}), out({w, h});
    in.translate(-1, -1);
    in.allocate();
    out.allocate();
    fill_with(in, [](index_t x, index_t y) { return static_cast<float>((2 * x + y) % 13); });
    EXPECT_EQ(p.evaluate({&in}, {&out}), 0);
    return out;
  };
  scheduled_case c(make, {{w + 2, h + 2}, {w, h}});
  ASSERT_TRUE(c.r.loops[0].looped) << c.text;
  EXPECT_EQ(c.r.loops[0].dim, 1) << c.text;
  EXPECT_EQ(c.where("lo"), placement::in_loop) << c.text;
  EXPECT_EQ(c.where("hi"), placement::in_loop) << c.text;
  EXPECT_NE(c.text.find("split: in loop"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("slides with the loop"), std::string::npos) << c.text;
  expect_equal(run(c.g.build()), run(c.plain.build()));
}

// scaled = in * 2 + 1; padded = scaled inside in's bounds, 0 outside (a padded copy); out = a 3x3
// box of padded, the same size as in. The copy and scaled move with a loop over rows (the copy's
// window is clamped to in's rows only at the first and last iterations, away from the probes).
TEST(schedule_copies, padded_copy) {
  const index_t w = 256, h = 256;
  auto make = [&](graph& g) {
    var x(g.ctx, "x"), y(g.ctx, "y");
    g.ins = {buffer_expr::make(g.ctx, "in", 2, sizeof(float))};
    auto scaled = buffer_expr::make(g.ctx, "scaled", 2, sizeof(float));
    auto padded = buffer_expr::make(g.ctx, "padded", 2, sizeof(float));
    g.out = buffer_expr::make(g.ctx, "out", 2, sizeof(float));
    auto zero = buffer_expr::make_scalar<float>(g.ctx, "zero", 0.0f);
    g.funcs.push_back(
        func::make(affine{2, 1}, {{g.ins[0], {point(x), point(y)}}}, {{scaled, {x, y}}}, {.name = "scaled"}));
    g.funcs.push_back(
        func::make_copy({scaled, {point(x), point(y)}, g.ins[0]->bounds()}, {padded, {x, y}}, {zero, {}}));
    g.funcs.push_back(
        func::make([](const buffer<const float>& a, const buffer<float>& o) { return box3x3(a, nullptr, o); },
                   {{padded, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{g.out, {x, y}}}, {.name = "out"}));
  };
  auto run = [&](pipeline p) {
    buffer<float, 2> in({w, h}), out({w, h});
    in.allocate();
    out.allocate();
    fill_with(in, [](index_t x, index_t y) { return static_cast<float>((x + 5 * y) % 9); });
    EXPECT_EQ(p.evaluate({&in}, {&out}), 0);
    return out;
  };
  scheduled_case c(make, {{w, h}, {w, h}});
  ASSERT_TRUE(c.r.loops[0].looped) << c.text;
  EXPECT_EQ(c.r.loops[0].dim, 1) << c.text;
  EXPECT_EQ(c.where("padded"), placement::in_loop) << c.text;
  EXPECT_EQ(c.where("scaled"), placement::in_loop) << c.text;
  const buffer<float, 2> expected = run(c.plain.build());
  // The zero padding is there in the unscheduled result.
  EXPECT_EQ(expected(0, 0), (0 * 2 + 1) + (1 * 2 + 1) + (5 * 2 + 1) + (6 * 2 + 1));
  expect_equal(run(c.g.build()), expected);
}

// t(x, y) = e(y, x), e = in * 2 + 1, out = t * 0.5; the transpose by a copy (view: true), which
// the builder turns into a view of e where both are at the root, or by a callback.
void transpose_graph(graph& g, bool view) {
  var x(g.ctx, "x"), y(g.ctx, "y");
  g.ins = {buffer_expr::make(g.ctx, "in", 2, sizeof(float))};
  auto e = buffer_expr::make(g.ctx, "e", 2, sizeof(float));
  auto t = buffer_expr::make(g.ctx, "t", 2, sizeof(float));
  g.out = buffer_expr::make(g.ctx, "out", 2, sizeof(float));
  g.funcs.push_back(func::make(affine{2, 1}, {{g.ins[0], {point(x), point(y)}}}, {{e, {x, y}}}, {.name = "e"}));
  if (view) {
    g.funcs.push_back(func::make_copy({e, {point(y), point(x)}}, {t, {x, y}}));
  } else {
    g.funcs.push_back(func::make(
        [](const buffer<const float>& a, const buffer<float>& o) {
          for (index_t yy = o.dim(1).min(); yy <= o.dim(1).max(); ++yy) {
            for (index_t xx = o.dim(0).min(); xx <= o.dim(0).max(); ++xx) o(xx, yy) = a(yy, xx);
          }
          return 0;
        },
        {{e, {point(y), point(x)}}}, {{t, {x, y}}}, {.name = "t"}));
  }
  g.funcs.push_back(func::make(affine{0.5f, 0}, {{t, {point(x), point(y)}}}, {{g.out, {x, y}}}, {.name = "out"}));
}

TEST(schedule_copies, copy_made_a_view_of_its_source_at_the_root) {
  // With no schedule the builder makes the transposing copy's destination a view of e: nothing is
  // copied and t takes no memory. The model's estimate of no schedule is that of the graph with
  // the transpose done by a callback, less t's writes, the copy's work and its allocation.
  const index_t n = 512;
  scheduled_case as_copy([](graph& g) { transpose_graph(g, true); }, {{n, n}, {n, n}});
  scheduled_case as_callback([](graph& g) { transpose_graph(g, false); }, {{n, n}, {n, n}});
  ASSERT_EQ(as_copy.r.loops.size(), 1u) << as_copy.text;
  ASSERT_EQ(as_callback.r.loops.size(), 1u) << as_callback.text;
  const double view_ns = as_copy.r.loops[0].unscheduled_cost_ns;
  const double callback_ns = as_callback.r.loops[0].unscheduled_cost_ns;
  // t's region written once at the level a 1 MiB buffer is served from (memory, 0.1 ns per byte
  // on this machine), at least.
  EXPECT_LT(view_ns, callback_ns - 0.1 * n * n * sizeof(float)) << as_copy.text << as_callback.text;
  EXPECT_GT(view_ns, 0) << as_copy.text;
  // The scheduled pipelines compute what the unscheduled ones do.
  auto run = [&](pipeline p) {
    buffer<float, 2> in({n, n}), out({n, n});
    in.allocate();
    out.allocate();
    fill_with(in, [](index_t x, index_t y) { return static_cast<float>((3 * x + y) % 11); });
    EXPECT_EQ(p.evaluate({&in}, {&out}), 0);
    return out;
  };
  const buffer<float, 2> expected = run(as_copy.plain.build());
  EXPECT_EQ(expected(1, 0), 0.5f * ((3 * 0 + 1) % 11 * 2 + 1));
  expect_equal(run(as_copy.g.build()), expected);
  expect_equal(run(as_callback.g.build()), expected);
}

// out = a copy of in, out(x, y) = in(src_x(x, y)), for n x m of out from an input of `in_shape`
// (its rank the input's).
double copy_estimate(const std::function<box_expr(const var&, const var&)>& src_x, std::vector<index_t> in_shape,
                     std::vector<index_t> out_shape) {
  graph g;
  var x(g.ctx, "x"), y(g.ctx, "y");
  g.ins = {buffer_expr::make(g.ctx, "in", in_shape.size(), sizeof(float))};
  g.out = buffer_expr::make(g.ctx, "out", 2, sizeof(float));
  g.funcs.push_back(func::make_copy({g.ins[0], src_x(x, y)}, {g.out, {x, y}}));
  schedule_shapes s;
  s.add(g.ins[0], in_shape);
  s.add(g.out, out_shape);
  const schedule_report r = schedule(g.ins, {g.out}, s, tiny_cache_machine());
  EXPECT_EQ(r.loops.size(), 1u) << r.to_string(&g.ctx);
  return r.loops.empty() ? 0 : r.loops[0].unscheduled_cost_ns;
}

TEST(schedule_copies, copies_run_element_by_element_are_priced_per_element) {
  // The runtime copies contiguous runs by memcpy and the others element by element through
  // strides, several times slower (cost_model::strided_copy_element_ns, 0.35 ns per element,
  // against 8 bytes of footprint at tiny_cache_machine's L1 rate, 0.16 ns). Each case copies
  // 256 x 256 floats from a source of the same bytes, so only the copy's work per point differs.
  const index_t n = 256;
  const double per_element = 0.35 - 8 * 0.02;
  const double plain = copy_estimate(
      [](const var& x, const var& y) {
        return box_expr{point(x), point(y)};
      },
      {n, n}, {n, n});
  const double transposed = copy_estimate(
      [](const var& x, const var& y) {
        return box_expr{point(y), point(x)};
      },
      {n, n}, {n, n});
  EXPECT_NEAR(transposed - plain, per_element * n * n, 0.01 * per_element * n * n);
  // From a source of another rank, runs along dim 0 still contiguous (rows of a flat buffer):
  // priced as the plain copy.
  const double from_flat =
      copy_estimate([=](const var& x, const var& y) { return box_expr{point(x + y * n)}; }, {n * n}, {n, n});
  EXPECT_NEAR(from_flat, plain, 0.01 * plain);
  // Runs of 3 floats (12 bytes, shorter than a cache line) of a source with 4 per row: strided.
  // The same runs over a source of 3 floats per row: the runtime fuses them into one run, priced
  // as the plain copy.
  const index_t m = n * n / 3;
  const double short_runs = copy_estimate(
      [](const var& x, const var& y) {
        return box_expr{point(x), point(y)};
      },
      {4, m}, {3, m});
  const double fused = copy_estimate(
      [](const var& x, const var& y) {
        return box_expr{point(x), point(y)};
      },
      {3, m}, {3, m});
  EXPECT_NEAR(fused, plain, 0.01 * plain);
  EXPECT_NEAR(short_runs - fused, per_element * 3 * m, 0.01 * per_element * 3 * m);
}

// o(x, y) = the average of the window w(0..2, 0..2, x, y), over o's crop.
index_t average_window(const buffer<const float>& w, const buffer<float>& o) {
  for (index_t yy = o.dim(1).min(); yy <= o.dim(1).max(); ++yy) {
    for (index_t xx = o.dim(0).min(); xx <= o.dim(0).max(); ++xx) {
      float sum = 0;
      for (index_t j = 0; j < 3; ++j) {
        for (index_t i = 0; i < 3; ++i) sum += w(i, j, xx, yy);
      }
      o(xx, yy) = sum / 9;
    }
  }
  return 0;
}

// What a pooling graph (the two tests below) computes from an input of 2n + 1 x 2n + 1: n x n.
buffer<float, 2> run_pooling(pipeline p, index_t n) {
  buffer<float, 2> in({2 * n + 1, 2 * n + 1}), out({n, n});
  in.allocate();
  out.allocate();
  fill_with(in, [](index_t x, index_t y) { return static_cast<float>((5 * x + 3 * y) % 13); });
  EXPECT_EQ(p.evaluate({&in}, {&out}), 0);
  return out;
}

// The pooling of kernel libraries (scheduler_benchmark's, at a smaller size): a copy gathers each
// output pixel's 3x3 window in steps of 2 from e, a callback averages it. At the root the builder
// makes the window a view of e and nothing is copied; in a loop, e is a ring buffer and the copy
// runs element by element, 9 floats per pixel: the model takes no loop.
TEST(schedule_copies, pooling_views_are_not_copied_in_a_loop) {
  auto make = [](graph& g) {
    var x(g.ctx, "x"), y(g.ctx, "y"), dx(g.ctx, "dx"), dy(g.ctx, "dy");
    g.ins = {buffer_expr::make(g.ctx, "in", 2, sizeof(float))};
    auto e = buffer_expr::make(g.ctx, "e", 2, sizeof(float));
    auto view = buffer_expr::make(g.ctx, "view", 4, sizeof(float));
    g.out = buffer_expr::make(g.ctx, "out", 2, sizeof(float));
    g.funcs.push_back(func::make(affine{2, 1}, {{g.ins[0], {point(x), point(y)}}}, {{e, {x, y}}}, {.name = "e"}));
    g.funcs.push_back(func::make_copy({e, {point(2 * x + dx), point(2 * y + dy)}}, {view, {dx, dy, x, y}}));
    g.funcs.push_back(func::make(average_window, {{view, {bounds(0, 2), bounds(0, 2), point(x), point(y)}}},
                                 {{g.out, {x, y}}}, {.name = "out"}));
  };
  const index_t n = 255;
  scheduled_case c(make, {{2 * n + 1, 2 * n + 1}, {n, n}});
  ASSERT_EQ(c.r.loops.size(), 1u) << c.text;
  EXPECT_FALSE(c.r.loops[0].looped) << c.text;
  EXPECT_EQ(c.where("view"), placement::root) << c.text;
  expect_equal(run_pooling(c.g.build(), n), run_pooling(c.plain.build(), n));
}

// out = 2 * the 3x3 average of in in steps of 2, through p = the average: gathered by a copy
// (view(dx, dy, x, y) = in(2x + dx, 2y + dy)) or read from `in` directly by p's callback.
void pooling_of_input_graph(graph& g, bool view) {
  var x(g.ctx, "x"), y(g.ctx, "y"), dx(g.ctx, "dx"), dy(g.ctx, "dy");
  g.ins = {buffer_expr::make(g.ctx, "in", 2, sizeof(float))};
  auto p = buffer_expr::make(g.ctx, "p", 2, sizeof(float));
  g.out = buffer_expr::make(g.ctx, "out", 2, sizeof(float));
  if (view) {
    auto v = buffer_expr::make(g.ctx, "view", 4, sizeof(float));
    g.funcs.push_back(func::make_copy({g.ins[0], {point(2 * x + dx), point(2 * y + dy)}}, {v, {dx, dy, x, y}}));
    g.funcs.push_back(func::make(average_window, {{v, {bounds(0, 2), bounds(0, 2), point(x), point(y)}}}, {{p, {x, y}}},
                                 {.name = "p"}));
  } else {
    g.funcs.push_back(func::make(
        [](const buffer<const float>& a, const buffer<float>& o) {
          for (index_t yy = o.dim(1).min(); yy <= o.dim(1).max(); ++yy) {
            for (index_t xx = o.dim(0).min(); xx <= o.dim(0).max(); ++xx) {
              float sum = 0;
              for (index_t j = 0; j < 3; ++j) {
                for (index_t i = 0; i < 3; ++i) sum += a(2 * xx + i, 2 * yy + j);
              }
              o(xx, yy) = sum / 9;
            }
          }
          return 0;
        },
        {{g.ins[0], {bounds(2 * x, 2 * x + 2), bounds(2 * y, 2 * y + 2)}}}, {{p, {x, y}}}, {.name = "p"}));
  }
  g.funcs.push_back(func::make(affine{2, 0}, {{p, {point(x), point(y)}}}, {{g.out, {x, y}}}, {.name = "out"}));
}

TEST(schedule_copies, view_of_an_input_in_a_loop_is_not_stored_or_called) {
  // In a loop, a copy gathering windows of an input is a view of it (the builder makes it one
  // where its source is an input or at the root): no storage, no call, no work. The model's loop
  // is the one it takes for the same average read from the input by the callback itself, with the
  // same memory and calls (the view's reads of the input stand for the callback's).
  const index_t n = 255;
  scheduled_case as_view([](graph& g) { pooling_of_input_graph(g, true); }, {{2 * n + 1, 2 * n + 1}, {n, n}});
  scheduled_case direct([](graph& g) { pooling_of_input_graph(g, false); }, {{2 * n + 1, 2 * n + 1}, {n, n}});
  ASSERT_EQ(as_view.r.loops.size(), 1u) << as_view.text;
  ASSERT_EQ(direct.r.loops.size(), 1u) << direct.text;
  const schedule_report::loop_decision& v = as_view.r.loops[0];
  const schedule_report::loop_decision& d = direct.r.loops[0];
  ASSERT_TRUE(d.looped) << direct.text;
  ASSERT_TRUE(v.looped) << as_view.text;
  EXPECT_EQ(v.dim, d.dim) << as_view.text << direct.text;
  EXPECT_EQ(v.step, d.step) << as_view.text << direct.text;
  EXPECT_EQ(v.memory_bytes, d.memory_bytes) << as_view.text << direct.text;
  EXPECT_EQ(v.calls, d.calls) << as_view.text << direct.text;
  EXPECT_EQ(as_view.where("view"), placement::in_loop) << as_view.text;
  const buffer<float, 2> expected = run_pooling(as_view.plain.build(), n);
  expect_equal(run_pooling(as_view.g.build(), n), expected);
  expect_equal(run_pooling(direct.g.build(), n), expected);
}

}  // namespace slinky
