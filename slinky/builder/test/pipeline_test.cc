// End-to-end pipeline tests: graphs built through the builder API, each run under several
// schedules, asserting outputs against plain references and resources (allocations, callback
// calls, elements computed) through the eval_config hooks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"
#include "test_funcs.h"

namespace slinky {
namespace {

using test::memory_counter;
using test::write_counter;

enum class schedule { none, loop_step_1, loop_step_2, loop_step_3, compute_root, store_in_loop_on_stack };

const schedule all_schedules[] = {schedule::none,        schedule::loop_step_1,  schedule::loop_step_2,
                                  schedule::loop_step_3, schedule::compute_root, schedule::store_in_loop_on_stack};

index_t step_of(schedule s) {
  switch (s) {
  case schedule::loop_step_2: return 2;
  case schedule::loop_step_3: return 3;
  default: return 1;
  }
}

class elementwise_1d : public testing::TestWithParam<schedule> {};

TEST_P(elementwise_1d, chain) {
  const schedule s = GetParam();
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");

  write_counter mul_writes, add_writes;
  func mul = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        mul_writes.record(b);
        return test::elementwise<int>(a, b, [](int v) { return v * 2; });
      },
      {{in, {point(x)}}}, {{intm, {x}}}, {.name = "mul"});
  func add = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        add_writes.record(b);
        return test::elementwise<int>(a, b, [](int v) { return v + 1; });
      },
      {{intm, {point(x)}}}, {{out, {x}}}, {.name = "add"});
  if (s != schedule::none) add.loops({{x, step_of(s)}});
  if (s == schedule::compute_root) mul.compute_root();
  if (s == schedule::store_in_loop_on_stack) intm->store_at({&add, x}).store_in(memory_type::stack);

  pipeline p = build_pipeline(ctx, {in}, {out});

  const int n = 20;
  buffer<int, 1> in_buf({n});
  in_buf.translate(-5);
  buffer<int, 1> out_buf({n});
  out_buf.translate(-5);
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 1);
  memory_counter m;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  for (index_t i = -5; i < n - 5; ++i) ASSERT_EQ(out_buf(i), in_buf(i) * 2 + 1) << i;

  EXPECT_EQ(mul_writes.max_count(), 1);
  EXPECT_EQ(add_writes.max_count(), 1);
  EXPECT_EQ(mul_writes.elements(), n);
  // With mul computed at the root, add is alone in its loop, which runs as one call.
  const int expected_calls = s == schedule::none || s == schedule::compute_root ? 1 : (n + step_of(s) - 1) / step_of(s);
  EXPECT_EQ(add_writes.calls, expected_calls);
  if (s == schedule::store_in_loop_on_stack) {
    EXPECT_EQ(m.allocations, 0);
  } else {
    EXPECT_EQ(m.allocations, 1);
    EXPECT_LE(m.sizes[0], n * static_cast<index_t>(sizeof(int)));
  }
  EXPECT_EQ(m.allocations, m.frees);
}

INSTANTIATE_TEST_SUITE_P(schedules, elementwise_1d, testing::ValuesIn(all_schedules));

struct loops_2d {
  bool loop_x;
  bool loop_y;
  index_t step;
};

class elementwise_2d : public testing::TestWithParam<loops_2d> {};

TEST_P(elementwise_2d, chain) {
  const loops_2d l = GetParam();
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(short));
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(short));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(short));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(short));
  var x(ctx, "x"), y(ctx, "y");
  write_counter writes[3];
  auto op = [&](int k) {
    return [&writes, k](const buffer<const short>& i, const buffer<short>& o) {
      writes[k - 1].record(o);
      return test::elementwise<short>(i, o, [k](short v) { return static_cast<short>(v * 3 + k); });
    };
  };
  func f1 = func::make(op(1), {{in, {point(x), point(y)}}}, {{a, {x, y}}});
  func f2 = func::make(op(2), {{a, {point(x), point(y)}}}, {{b, {x, y}}});
  func f3 = func::make(op(3), {{b, {point(x), point(y)}}}, {{out, {x, y}}});
  std::vector<func::loop_info> loops;
  if (l.loop_x) loops.push_back({x, l.step});
  if (l.loop_y) loops.push_back({y, l.step});
  f3.loops(loops);
  pipeline p = build_pipeline(ctx, {in}, {out});

  const int w = 9, h = 7;
  buffer<short, 2> in_buf({w, h}), out_buf({w, h});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 2);
  memory_counter m;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  for (int j = 0; j < h; ++j) {
    for (int i = 0; i < w; ++i) {
      short v = in_buf(i, j);
      v = v * 3 + 1;
      v = v * 3 + 2;
      v = v * 3 + 3;
      ASSERT_EQ(out_buf(i, j), v);
    }
  }
  // No element of any buffer is computed twice.
  for (const write_counter& w : writes) EXPECT_EQ(w.max_count(), 1);
  EXPECT_EQ(m.allocations, 2);
}

INSTANTIATE_TEST_SUITE_P(loops, elementwise_2d,
                         testing::Values(loops_2d{false, false, 1}, loops_2d{true, false, 1}, loops_2d{false, true, 2},
                                         loops_2d{true, true, 1}, loops_2d{true, true, 3}));

// The README's 2-stage stencil: intm = in * 2; out = the 3x3 sum of intm.
class stencil : public testing::TestWithParam<schedule> {};

TEST_P(stencil, correct_under_schedule) {
  const schedule s = GetParam();
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func mul = func::make([](const buffer<const int>& a,
                           const buffer<int>& b) { return test::elementwise<int>(a, b, [](int v) { return v * 2; }); },
                        {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func sum = func::make([](const buffer<const int>& a, const buffer<int>& b) { return test::box_sum<int>(a, b, 1, 1); },
                        {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
  if (s != schedule::none) sum.loops({{y, step_of(s)}});
  if (s == schedule::compute_root) mul.compute_root();
  if (s == schedule::store_in_loop_on_stack) intm->store_at({&sum, y}).store_in(memory_type::stack);
  pipeline p = build_pipeline(ctx, {in}, {out});

  const int w = 12, h = 10;
  buffer<int, 2> in_buf({w + 2, h + 2});
  in_buf.translate(-1, -1);
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
        for (int dx = -1; dx <= 1; ++dx) expected += in_buf(i + dx, j + dy) * 2;
      }
      ASSERT_EQ(out_buf(i, j), expected) << i << " " << j;
    }
  }
  if (s == schedule::store_in_loop_on_stack) {
    EXPECT_EQ(m.allocations, 0);
  }
  EXPECT_EQ(m.allocations, m.frees);
}

INSTANTIATE_TEST_SUITE_P(schedules, stencil, testing::ValuesIn(all_schedules));

TEST(pipeline, two_outputs) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto sum = buffer_expr::make(ctx, "sum", 1, sizeof(int));
  auto diff = buffer_expr::make(ctx, "diff", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func both = func::make(
      [](const buffer<const int>& a, const buffer<int>& s, const buffer<int>& d) -> index_t {
        for (index_t i = s.dim(0).min(); i <= s.dim(0).max(); ++i) {
          s(i) = a(i) + 10;
          d(i) = a(i) - 10;
        }
        return 0;
      },
      {{in, {point(x)}}}, {{sum, {x}}, {diff, {x}}});
  func mul = func::make(
      [](const buffer<const int>& s, const buffer<const int>& d, const buffer<int>& o) -> index_t {
        for (index_t i = o.dim(0).min(); i <= o.dim(0).max(); ++i) o(i) = s(i) * d(i);
        return 0;
      },
      {{sum, {point(x)}}, {diff, {point(x)}}}, {{out, {x}}});
  for (bool loop : {false, true}) {
    if (loop) mul.loops({{x, 3}});
    pipeline p = build_pipeline(ctx, {in}, {out});
    buffer<int, 1> in_buf({10}), out_buf({10});
    in_buf.allocate();
    out_buf.allocate();
    test::fill_random(in_buf, 4);
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
    for (int i = 0; i < 10; ++i) ASSERT_EQ(out_buf(i), (in_buf(i) + 10) * (in_buf(i) - 10));
  }
}

TEST(pipeline, outer_product) {
  node_context ctx;
  auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var i(ctx, "i"), j(ctx, "j");
  func outer = func::make(
      [](const buffer<const int>& a, const buffer<const int>& b, const buffer<int>& o) -> index_t {
        for (index_t y = o.dim(1).min(); y <= o.dim(1).max(); ++y) {
          for (index_t x = o.dim(0).min(); x <= o.dim(0).max(); ++x) o(x, y) = a(x) * b(y);
        }
        return 0;
      },
      {{a, {point(i)}}, {b, {point(j)}}}, {{out, {i, j}}});
  outer.loops({{j, 2}});
  pipeline p = build_pipeline(ctx, {a, b}, {out});
  buffer<int, 1> a_buf({6}), b_buf({5});
  buffer<int, 2> out_buf({6, 5});
  a_buf.allocate();
  b_buf.allocate();
  out_buf.allocate();
  test::fill_random(a_buf, 5);
  test::fill_random(b_buf, 6);
  ASSERT_EQ(p.evaluate({&a_buf, &b_buf}, {&out_buf}), 0);
  for (int y = 0; y < 5; ++y) {
    for (int x = 0; x < 6; ++x) ASSERT_EQ(out_buf(x, y), a_buf(x) * b_buf(y));
  }
}

// One producer, two stencil consumers with different halos, combined.
TEST(pipeline, diamond) {
  for (bool loop : {false, true}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto p0 = buffer_expr::make(ctx, "p0", 2, sizeof(int));
    auto s1 = buffer_expr::make(ctx, "s1", 2, sizeof(int));
    auto s2 = buffer_expr::make(ctx, "s2", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    write_counter producer_writes;
    func f0 = func::make(
        [&](const buffer<const int>& a, const buffer<int>& b) {
          producer_writes.record(b);
          return test::elementwise<int>(a, b, [](int v) { return v + 1; });
        },
        {{in, {point(x), point(y)}}}, {{p0, {x, y}}});
    func f1 =
        func::make([](const buffer<const int>& a, const buffer<int>& b) { return test::box_sum<int>(a, b, 1, 0); },
                   {{p0, {bounds(x - 1, x + 1), point(y)}}}, {{s1, {x, y}}});
    func f2 =
        func::make([](const buffer<const int>& a, const buffer<int>& b) { return test::box_sum<int>(a, b, 0, 2); },
                   {{p0, {point(x), bounds(y - 2, y + 2)}}}, {{s2, {x, y}}});
    func f3 = func::make(
        [](const buffer<const int>& a, const buffer<const int>& b, const buffer<int>& o) -> index_t {
          for (index_t j = o.dim(1).min(); j <= o.dim(1).max(); ++j) {
            for (index_t i = o.dim(0).min(); i <= o.dim(0).max(); ++i) o(i, j) = a(i, j) - b(i, j);
          }
          return 0;
        },
        {{s1, {point(x), point(y)}}, {s2, {point(x), point(y)}}}, {{out, {x, y}}});
    if (loop) f3.loops({{y, 2}});
    pipeline p = build_pipeline(ctx, {in}, {out});
    const int w = 8, h = 9;
    buffer<int, 2> in_buf({w + 2, h + 4});
    in_buf.translate(-1, -2);
    buffer<int, 2> out_buf({w, h});
    in_buf.allocate();
    out_buf.allocate();
    test::fill_random(in_buf, 7);
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
    for (int j = 0; j < h; ++j) {
      for (int i = 0; i < w; ++i) {
        int a = 0, b = 0;
        for (int d = -1; d <= 1; ++d) a += in_buf(i + d, j) + 1;
        for (int d = -2; d <= 2; ++d) b += in_buf(i, j + d) + 1;
        ASSERT_EQ(out_buf(i, j), a - b) << i << " " << j;
      }
    }
    // Without a loop, the producer runs once, over the bounding box of what both consumers need.
    if (!loop) {
      EXPECT_EQ(producer_writes.calls, 1);
      EXPECT_EQ(producer_writes.elements(), static_cast<std::size_t>((w + 2) * (h + 4)));
    }
  }
}

// One intermediate feeding two pipeline outputs.
TEST(pipeline, fork) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  auto out1 = buffer_expr::make(ctx, "out1", 1, sizeof(int));
  auto out2 = buffer_expr::make(ctx, "out2", 1, sizeof(int));
  var x(ctx, "x");
  write_counter writes;
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        writes.record(b);
        return test::elementwise<int>(a, b, [](int v) { return v * 5; });
      },
      {{in, {point(x)}}}, {{intm, {x}}});
  func g1 = func::make([](const buffer<const int>& a,
                          const buffer<int>& b) { return test::elementwise<int>(a, b, [](int v) { return v + 1; }); },
                       {{intm, {point(x)}}}, {{out1, {x}}});
  func g2 = func::make([](const buffer<const int>& a,
                          const buffer<int>& b) { return test::elementwise<int>(a, b, [](int v) { return v - 1; }); },
                       {{intm, {point(x)}}}, {{out2, {x}}});
  pipeline p = build_pipeline(ctx, {in}, {out1, out2});
  buffer<int, 1> in_buf({10}), o1({10}), o2({10});
  in_buf.allocate();
  o1.allocate();
  o2.allocate();
  test::fill_random(in_buf, 8);
  ASSERT_EQ(p.evaluate({&in_buf}, {&o1, &o2}), 0);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(o1(i), in_buf(i) * 5 + 1);
    ASSERT_EQ(o2(i), in_buf(i) * 5 - 1);
  }
  EXPECT_EQ(writes.max_count(), 1);
}

// An empty output needs nothing: a stencil chain computing an empty output runs no callback,
// allocates nothing and does not require its input to cover the stencil's halo (widening the
// empty [0, -1] by the halo would give [-1, 0]). A fork into an empty and a non-empty output
// computes the non-empty one exactly, reading only what it needs.
TEST(pipeline, empty_outputs_need_nothing) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  auto out1 = buffer_expr::make(ctx, "out1", 1, sizeof(int));
  auto out2 = buffer_expr::make(ctx, "out2", 1, sizeof(int));
  var x(ctx, "x");
  int calls = 0;
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        ++calls;
        return test::elementwise<int>(a, b, [](int v) { return v * 5; });
      },
      {{in, {point(x)}}}, {{intm, {x}}}, {.name = "f"});
  // out1(x) = intm(x - 1) + intm(x + 1); out2(x) = intm(x) - 1.
  func g1 = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        ++calls;
        for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = a(i - 1) + a(i + 1);
        return 0;
      },
      {{intm, {bounds(x - 1, x + 1)}}}, {{out1, {x}}}, {.name = "g1"});
  func g2 = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        ++calls;
        return test::elementwise<int>(a, b, [](int v) { return v - 1; });
      },
      {{intm, {point(x)}}}, {{out2, {x}}}, {.name = "g2"});
  for (bool loop : {false, true}) {
    if (loop) g1.loops({{x, 2}});
    pipeline single = build_pipeline(ctx, {in}, {out1});
    pipeline both = build_pipeline(ctx, {in}, {out1, out2});
    memory_counter memory;

    // Only the empty out1: the input may be anything, even without memory.
    buffer<int, 1> none({0}), o1_empty({0});
    calls = 0;
    EXPECT_EQ(single.evaluate({&none}, {&o1_empty}, memory.context), 0);
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(memory.allocations, 0);

    // out1 empty, out2 over [0, 9]: the input needs only [0, 9], f and g2 run once each.
    buffer<int, 1> in_buf({10}), o2({10});
    in_buf.allocate();
    o2.allocate();
    test::fill_random(in_buf, 3);
    calls = 0;
    ASSERT_EQ(both.evaluate({&in_buf}, {&o1_empty, &o2}, memory.context), 0);
    for (int i = 0; i < 10; ++i) ASSERT_EQ(o2(i), in_buf(i) * 5 - 1);
    EXPECT_EQ(calls, 2);

    // Both non-empty: the halo is required again.
    buffer<int, 1> o1({10});
    o1.allocate();
    EXPECT_NE(both.evaluate({&in_buf}, {&o1, &o2}), 0);
  }
}

TEST(pipeline, unrelated_subgraphs) {
  node_context ctx;
  auto in1 = buffer_expr::make(ctx, "in1", 1, sizeof(int));
  auto in2 = buffer_expr::make(ctx, "in2", 1, sizeof(int));
  auto out1 = buffer_expr::make(ctx, "out1", 1, sizeof(int));
  auto out2 = buffer_expr::make(ctx, "out2", 1, sizeof(int));
  var x(ctx, "x");
  func f1 = func::make([](const buffer<const int>& a,
                          const buffer<int>& b) { return test::elementwise<int>(a, b, [](int v) { return v + 100; }); },
                       {{in1, {point(x)}}}, {{out1, {x}}});
  func f2 = func::make([](const buffer<const int>& a,
                          const buffer<int>& b) { return test::elementwise<int>(a, b, [](int v) { return v - 100; }); },
                       {{in2, {point(x)}}}, {{out2, {x}}});
  f2.loops({x});
  pipeline p = build_pipeline(ctx, {in1, in2}, {out1, out2});
  buffer<int, 1> a({5}), b({7}), o1({5}), o2({7});
  for (auto* buf : {&a, &b, &o1, &o2}) buf->allocate();
  test::fill_random(a, 9);
  test::fill_random(b, 10);
  ASSERT_EQ(p.evaluate({&a, &b}, {&o1, &o2}), 0);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(o1(i), a(i) + 100);
  for (int i = 0; i < 7; ++i) ASSERT_EQ(o2(i), b(i) - 100);
}

TEST(pipeline, constant_and_scalar_inputs) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  buffer<int, 1> table({4});
  table.allocate();
  for (int i = 0; i < 4; ++i) table(i) = i * i;
  auto lut = buffer_expr::make_constant(ctx, "lut", raw_buffer::make_copy(table));
  auto k = buffer_expr::make_scalar<int>(ctx, "k", 7);
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(
      [](const buffer<const int>& a, const buffer<const int>& l, const buffer<const int>& s,
         const buffer<int>& o) -> index_t {
        for (index_t i = o.dim(0).min(); i <= o.dim(0).max(); ++i) o(i) = l(a(i) % 4) + s();
        return 0;
      },
      {{in, {point(x)}}, {lut, {lut->dim(0).bounds}}, {k, {}}}, {{out, {x}}});
  f.loops({{x, 2}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  // The constants outlive the graph that described them.
  buffer<int, 1> in_buf({9}), out_buf({9});
  in_buf.allocate();
  out_buf.allocate();
  for (int i = 0; i < 9; ++i) in_buf(i) = i;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  for (int i = 0; i < 9; ++i) ASSERT_EQ(out_buf(i), (i % 4) * (i % 4) + 7);
}

TEST(pipeline, scalar_arg_as_step) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x"), step(ctx, "step");
  write_counter writes;
  func f = func::make([](const buffer<const int>& a,
                         const buffer<int>& b) { return test::elementwise<int>(a, b, [](int v) { return v * 2; }); },
                      {{in, {point(x)}}}, {{intm, {x}}});
  func g = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        writes.record(b);
        return test::elementwise<int>(a, b, [](int v) { return v + 3; });
      },
      {{intm, {point(x)}}}, {{out, {x}}});
  g.loops({{x, step}});
  pipeline p = build_pipeline(ctx, {step}, {in}, {out});
  for (index_t s : {1, 4, 50}) {
    writes.calls = 0;
    buffer<int, 1> in_buf({20}), out_buf({20});
    in_buf.allocate();
    out_buf.allocate();
    test::fill_random(in_buf, 11);
    ASSERT_EQ(p.evaluate({s}, {&in_buf}, {&out_buf}), 0);
    for (int i = 0; i < 20; ++i) ASSERT_EQ(out_buf(i), in_buf(i) * 2 + 3);
    EXPECT_EQ(writes.calls, (20 + s - 1) / s);
  }
}

TEST(pipeline, lets) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x"), s(ctx, "s");
  func f = func::make([](const buffer<const int>& a,
                         const buffer<int>& b) { return test::elementwise<int>(a, b, [](int v) { return v + 1; }); },
                      {{in, {point(x)}}}, {{out, {x}}});
  f.loops({{x, s}});
  pipeline p = build_pipeline(ctx, {}, {in}, {out}, {{s, 3}});
  buffer<int, 1> in_buf({10}), out_buf({10});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 12);
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(out_buf(i), in_buf(i) + 1);
}

// (a x b) x c, looped over rows of the result.
TEST(pipeline, matrix_product) {
  for (index_t rows : {0, 1, 3}) {
    node_context ctx;
    auto a = buffer_expr::make(ctx, "a", 2, sizeof(float));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(float));
    auto c = buffer_expr::make(ctx, "c", 2, sizeof(float));
    auto ab = buffer_expr::make(ctx, "ab", 2, sizeof(float));
    auto d = buffer_expr::make(ctx, "d", 2, sizeof(float));
    var i(ctx, "i"), j(ctx, "j");
    // Matrices are indexed (row, column): dim 0 is the row.
    auto matmul = [](const buffer<const float>& x, const buffer<const float>& y, const buffer<float>& z) -> index_t {
      for (index_t r = z.dim(0).min(); r <= z.dim(0).max(); ++r) {
        for (index_t col = z.dim(1).min(); col <= z.dim(1).max(); ++col) {
          float sum = 0;
          for (index_t k = x.dim(1).min(); k <= x.dim(1).max(); ++k) sum += x(r, k) * y(k, col);
          z(r, col) = sum;
        }
      }
      return 0;
    };
    interval_expr k_ab = a->dim(1).bounds;
    interval_expr k_d = c->dim(0).bounds;
    func f_ab = func::make(matmul, {{a, {point(i), k_ab}}, {b, {k_ab, point(j)}}}, {{ab, {i, j}}});
    func f_d = func::make(matmul, {{ab, {point(i), k_d}}, {c, {k_d, point(j)}}}, {{d, {i, j}}});
    if (rows > 0) f_d.loops({{i, rows}});
    pipeline p = build_pipeline(ctx, {a, b, c}, {d});
    const int n = 7;
    buffer<float, 2> a_buf({n, n}), b_buf({n, n}), c_buf({n, n}), d_buf({n, n});
    for (auto* buf : {&a_buf, &b_buf, &c_buf, &d_buf}) buf->allocate();
    test::fill_random(a_buf, 13);
    test::fill_random(b_buf, 14);
    test::fill_random(c_buf, 15);
    memory_counter m;
    ASSERT_EQ(p.evaluate({&a_buf, &b_buf, &c_buf}, {&d_buf}, m.context), 0);
    for (int r = 0; r < n; ++r) {
      for (int col = 0; col < n; ++col) {
        float expected = 0;
        for (int k = 0; k < n; ++k) {
          float ab_rk = 0;
          for (int q = 0; q < n; ++q) ab_rk += a_buf(r, q) * b_buf(q, k);
          expected += ab_rk * c_buf(k, col);
        }
        ASSERT_NEAR(d_buf(r, col), expected, 1e-2f * (1 + std::abs(expected)));
      }
    }
    EXPECT_EQ(m.allocations, 1);
  }
}

TEST(pipeline, evaluate_twice_and_built_pipeline_outlives_graph) {
  pipeline p;
  {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    var x(ctx, "x");
    func f = func::make([](const buffer<const int>& a,
                           const buffer<int>& b) { return test::elementwise<int>(a, b, [](int v) { return -v; }); },
                        {{in, {point(x)}}}, {{out, {x}}});
    f.loops({x});
    // The loop is kept, so that the printed program names its variable.
    p = build_pipeline(ctx, {in}, {out}, {.keep_loops = true});
  }
  for (int rep = 0; rep < 2; ++rep) {
    buffer<int, 1> in_buf({4}), out_buf({4});
    in_buf.allocate();
    out_buf.allocate();
    test::fill_random(in_buf, rep);
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
    for (int i = 0; i < 4; ++i) ASSERT_EQ(out_buf(i), -in_buf(i));
  }
  std::string printed = to_string(p.body, p.body.symbols.get());
  EXPECT_NE(printed.find("loop(x in"), std::string::npos) << printed;
}

// func::make marks its direct entry as taking const views (internal::call_entry::const_views)
// only when every buffer parameter is one, so that the executable form refreshes a loop's crops
// only around callbacks that cannot change the descriptors they are given.
TEST(pipeline, direct_entries_say_whether_their_callbacks_take_const_views) {
  node_context ctx;
  auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 1, sizeof(int));
  var x(ctx, "x");
  auto views = [&](auto fn) {
    func f = func::make(fn, {{a, {point(x)}}}, {{b, {x}}});
    return internal::entry_of(f).const_views;
  };
  EXPECT_TRUE(views([](const buffer<const int>&, const buffer<int>&) -> index_t { return 0; }));
  EXPECT_TRUE(views([](const raw_buffer&, const raw_buffer*) -> index_t { return 0; }));
  EXPECT_TRUE(views([](const buffer<const int, 1>&, const raw_buffer* const) -> index_t { return 0; }));
  EXPECT_FALSE(views([](const buffer<const int>&, buffer<int>&) -> index_t { return 0; }));
  EXPECT_FALSE(views([](const buffer<const int>&, raw_buffer&) -> index_t { return 0; }));
  EXPECT_FALSE(views([](raw_buffer*, const raw_buffer*) -> index_t { return 0; }));
  EXPECT_FALSE(views([](buffer<const int>, const buffer<int>&) -> index_t { return 0; }));
}

}  // namespace
}  // namespace slinky
