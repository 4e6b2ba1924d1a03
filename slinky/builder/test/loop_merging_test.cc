// Loops that need not exist (docs/builder.md): a serial loop whose body is one call that nothing
// else in it depends on runs as that call over the loop's whole range; every other loop is kept.
// Each case asserts the calls made, the crops the callback saw, and the outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/explain.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"
#include "test_funcs.h"

namespace slinky {
namespace {

// The region of one dim of an output a call wrote.
struct crop {
  index_t min, max;
  bool operator==(const crop& o) const { return min == o.min && max == o.max; }
};
std::ostream& operator<<(std::ostream& os, const crop& c) { return os << "[" << c.min << ", " << c.max << "]"; }

std::string printed(const pipeline& p) { return to_string(p.body, p.body.symbols.get()); }
bool has_loop(const pipeline& p) { return printed(p).find("loop(") != std::string::npos; }

// out(x) = in(x) + 1 with f looped over x in steps of `step`, out over [-5, 14]. Records the crop
// of each call.
struct one_func {
  node_context ctx;
  buffer_expr_ptr in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  buffer_expr_ptr out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x{ctx, "x"};
  std::mutex mutex;
  std::vector<crop> crops;
  std::vector<crop> input_crops;
  func f;

  explicit one_func(expr step, expr max_workers = loop::serial) {
    f = func::make(
        [this](const buffer<const int>& a, const buffer<int>& b) {
          std::lock_guard<std::mutex> lock(mutex);
          crops.push_back({b.dim(0).min(), b.dim(0).max()});
          input_crops.push_back({a.dim(0).min(), a.dim(0).max()});
          return test::elementwise<int>(a, b, [](int v) { return v + 1; });
        },
        {{in, {point(x)}}}, {{out, {x}}}, {.name = "f"});
    f.loops({{x, step, max_workers}});
  }

  // Runs p on out over [-5, 14] and checks the result.
  void run(const pipeline& p, eval_context& c) {
    buffer<int, 1> in_buf({20}), out_buf({20});
    in_buf.translate(-5);
    out_buf.translate(-5);
    in_buf.allocate();
    out_buf.allocate();
    test::fill_random(in_buf, 3);
    crops.clear();
    input_crops.clear();
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, c), 0);
    for (index_t i = -5; i < 15; ++i) ASSERT_EQ(out_buf(i), in_buf(i) + 1) << i;
  }
  void run(const pipeline& p) {
    eval_context c;
    run(p, c);
  }
};

TEST(loop_merging, lone_func_in_serial_loop_is_one_call) {
  for (index_t step : {1, 3, 32}) {
    one_func t(step);
    pipeline p = build_pipeline(t.ctx, {t.in}, {t.out});
    EXPECT_FALSE(has_loop(p)) << printed(p);
    t.run(p);
    // One call on the union of the crops: the whole output; the input as always (whole).
    EXPECT_EQ(t.crops, std::vector<crop>({{-5, 14}})) << step;
    EXPECT_EQ(t.input_crops, std::vector<crop>({{-5, 14}})) << step;
  }
}

TEST(loop_merging, keep_loops_keeps_the_loop_with_truncated_tails) {
  one_func t(3);
  pipeline p = build_pipeline(t.ctx, {t.in}, {t.out}, {.keep_loops = true});
  EXPECT_TRUE(has_loop(p)) << printed(p);
  t.run(p);
  std::vector<crop> expected;
  for (index_t x = -5; x <= 14; x += 3) expected.push_back({x, std::min<index_t>(x + 2, 14)});
  EXPECT_EQ(t.crops, expected);
  EXPECT_EQ(t.crops.back(), (crop{13, 14}));
}

TEST(loop_merging, step_that_is_not_positive_still_fails) {
  one_func t(1);
  var s(t.ctx, "s");
  t.f.loops({{t.x, s}});
  pipeline p = build_pipeline(t.ctx, {s}, {t.in}, {t.out});
  EXPECT_FALSE(has_loop(p)) << printed(p);
  buffer<int, 1> in_buf({8}), out_buf({8});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 1);
  // A positive step: one call over everything.
  const index_t four[] = {4};
  ASSERT_EQ(p.evaluate(four, {&in_buf}, {&out_buf}), 0);
  EXPECT_EQ(t.crops, std::vector<crop>({{0, 7}}));
  for (index_t i = 0; i < 8; ++i) EXPECT_EQ(out_buf(i), in_buf(i) + 1);
  // A step of 0 fails the loop's check, as the loop itself would, and calls nothing.
  t.crops.clear();
  int failures = 0;
  eval_config cfg;
  cfg.check_failed = [&](const expr&) { ++failures; };
  eval_context c;
  c.config = &cfg;
  const index_t zero[] = {0};
  EXPECT_NE(p.evaluate(zero, {&in_buf}, {&out_buf}, c), 0);
  EXPECT_EQ(failures, 1);
  EXPECT_TRUE(t.crops.empty());
}

TEST(loop_merging, nested_loops_are_one_call) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  std::vector<std::vector<crop>> calls;
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        calls.push_back({{b.dim(0).min(), b.dim(0).max()}, {b.dim(1).min(), b.dim(1).max()}});
        return test::elementwise<int>(a, b, [](int v) { return v * 3; });
      },
      {{in, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "f"});
  f.loops({{x, 4}, {y, 2}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  EXPECT_FALSE(has_loop(p)) << printed(p);
  buffer<int, 2> in_buf({10, 7}), out_buf({10, 7});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 2);
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], std::vector<crop>({{0, 9}, {0, 6}}));
  for (index_t j = 0; j < 7; ++j) {
    for (index_t i = 0; i < 10; ++i) ASSERT_EQ(out_buf(i, j), in_buf(i, j) * 3);
  }
}

// f computed in g's loop over y has a loop of its own over x with nothing else in it: that loop is
// one call per iteration of g's loop, over the row g needs; g's loop (which computes f) stays.
TEST(loop_merging, inner_loop_of_a_func_computed_in_another_loop) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  std::vector<std::vector<crop>> f_calls;
  int g_calls = 0;
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        f_calls.push_back({{b.dim(0).min(), b.dim(0).max()}, {b.dim(1).min(), b.dim(1).max()}});
        return test::elementwise<int>(a, b, [](int v) { return v + 2; });
      },
      {{in, {point(x), point(y)}}}, {{intm, {x, y}}}, {.name = "f"});
  func g = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        ++g_calls;
        return test::elementwise<int>(a, b, [](int v) { return v * 2; });
      },
      {{intm, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "g"});
  g.loops({{y, 1}});
  f.compute_at({&g, y}).loops({{x, 2}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({6, 3}), out_buf({6, 3});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 4);
  test::memory_counter m;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  EXPECT_EQ(g_calls, 3);
  ASSERT_EQ(f_calls.size(), 3u);
  for (index_t y = 0; y < 3; ++y) EXPECT_EQ(f_calls[y], std::vector<crop>({{0, 5}, {y, y}}));
  for (index_t j = 0; j < 3; ++j) {
    for (index_t i = 0; i < 6; ++i) ASSERT_EQ(out_buf(i, j), (in_buf(i, j) + 2) * 2);
  }
  EXPECT_EQ(m.allocations, m.frees);
}

TEST(loop_merging, loop_with_two_funcs_is_kept) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  int f_calls = 0, g_calls = 0;
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        ++f_calls;
        return test::elementwise<int>(a, b, [](int v) { return v + 1; });
      },
      {{in, {point(x)}}}, {{intm, {x}}}, {.name = "f"});
  func g = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        ++g_calls;
        return test::elementwise<int>(a, b, [](int v) { return v * 2; });
      },
      {{intm, {point(x)}}}, {{out, {x}}}, {.name = "g"});
  g.loops({{x, 2}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  EXPECT_TRUE(has_loop(p)) << printed(p);
  buffer<int, 1> in_buf({10}), out_buf({10});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 5);
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  EXPECT_EQ(f_calls, 5);
  EXPECT_EQ(g_calls, 5);
  for (index_t i = 0; i < 10; ++i) EXPECT_EQ(out_buf(i), (in_buf(i) + 1) * 2);
}

TEST(loop_merging, parallel_loop_is_kept) {
  for (bool with_pool : {false, true}) {
    one_func t(4, loop::parallel);
    pipeline p = build_pipeline(t.ctx, {t.in}, {t.out});
    EXPECT_TRUE(has_loop(p)) << printed(p);
    thread_pool_impl pool(1);
    eval_config cfg;
    if (with_pool) cfg.thread_pool = &pool;
    eval_context c;
    c.config = &cfg;
    t.run(p, c);
    EXPECT_EQ(t.crops.size(), 5u);
  }
}

TEST(loop_merging, traced_pipeline_keeps_its_loops) {
  one_func t(5);
  pipeline p = build_pipeline(t.ctx, {t.in}, {t.out}, {.trace = true});
  EXPECT_TRUE(has_loop(p)) << printed(p);
  std::vector<std::string> events;
  eval_config cfg;
  cfg.trace_begin = [&](const char* name) -> index_t {
    events.push_back(name);
    return 1;
  };
  cfg.trace_end = [](index_t) {};
  eval_context c;
  c.config = &cfg;
  t.run(p, c);
  EXPECT_EQ(t.crops.size(), 4u);
  EXPECT_EQ(std::count(events.begin(), events.end(), "loop x"), 1);
  EXPECT_EQ(std::count(events.begin(), events.end(), "loop x iteration"), 4);
  EXPECT_EQ(std::count(events.begin(), events.end(), "f"), 4);
}

// A scalar that reads the loop variable gives each call its own value: the loop is kept.
TEST(loop_merging, scalar_of_the_loop_variable_keeps_the_loop) {
  for (bool uses_x : {false, true}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    var x(ctx, "x");
    std::vector<index_t> scalars;
    func f(
        [&](const call_stmt* op, eval_context& c) -> index_t {
          scalars.push_back(evaluate(op->scalars[0], c));
          const raw_buffer* b = c.lookup_buffer(op->outputs[0]);
          for (index_t i = b->dim(0).min(); i <= b->dim(0).max(); ++i) *static_cast<int*>(b->address_at(i)) = 0;
          return 0;
        },
        {{in, {point(x)}}}, {{out, {x}}}, {uses_x ? expr(x) * 10 : expr(7)}, {.name = "f"});
    f.loops({{x, 2}});
    pipeline p = build_pipeline(ctx, {in}, {out});
    EXPECT_EQ(has_loop(p), uses_x) << printed(p);
    buffer<int, 1> in_buf({6}), out_buf({6});
    in_buf.allocate();
    out_buf.allocate();
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
    if (uses_x) {
      EXPECT_EQ(scalars, std::vector<index_t>({0, 20, 40}));
    } else {
      EXPECT_EQ(scalars, std::vector<index_t>({7}));
    }
  }
}

// An input_crop crops the input per call (to what each call needs within it): the loop is kept.
TEST(loop_merging, input_crop_keeps_the_loop) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  std::vector<crop> input_crops;
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        input_crops.push_back({a.dim(0).min(), a.dim(0).max()});
        for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = a.contains(i) ? a(i) : -1;
        return 0;
      },
      {{in, {point(x)}, {bounds(2, 5)}}}, {{out, {x}}}, {.name = "f"});
  f.loops({{x, 2}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  EXPECT_TRUE(has_loop(p)) << printed(p);
  buffer<int, 1> in_buf({8}), out_buf({8});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 6);
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  ASSERT_EQ(input_crops.size(), 4u);
  EXPECT_EQ(input_crops[0], (crop{2, 1}));
  EXPECT_EQ(input_crops[1], (crop{2, 3}));
  EXPECT_EQ(input_crops[2], (crop{4, 5}));
  for (index_t i = 0; i < 8; ++i) EXPECT_EQ(out_buf(i), i >= 2 && i <= 5 ? in_buf(i) : -1);
}

// An output whose layout the client declared may have coordinates sharing memory: the loop is
// kept. dim::unfolded is a promise that it has none.
TEST(loop_merging, declared_layout_of_the_output_keeps_the_loop) {
  for (int declared : {0, 1, 2}) {
    one_func t(4);
    if (declared == 1) t.out->dim(0).stride = sizeof(int);
    if (declared == 2) t.out->dim(0).fold_factor = dim::unfolded;
    pipeline p = build_pipeline(t.ctx, {t.in}, {t.out});
    EXPECT_EQ(has_loop(p), declared == 1) << printed(p);
    t.run(p);
    EXPECT_EQ(t.crops.size(), declared == 1 ? 5u : 1u);
  }
}

// A copy is never a call: its loop is kept.
TEST(loop_merging, copy_keeps_its_loop) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  int copies = 0;
  func c = func::make_copy({in, {point(x + 1)}}, {out, {x}},
                           [&](const raw_buffer& s, const raw_buffer& d, const raw_buffer& pad) {
                             ++copies;
                             copy(s, d, pad);
                           });
  c.loops({{x, 3}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  EXPECT_TRUE(has_loop(p)) << printed(p);
  buffer<int, 1> in_buf({10}), out_buf({9});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 7);
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  EXPECT_EQ(copies, 3);
  for (index_t i = 0; i < 9; ++i) EXPECT_EQ(out_buf(i), in_buf(i + 1));
}

TEST(loop_merging, explain_says_which_loops_run_as_one_call) {
  one_func t(4);
  const std::string text = explain_pipeline(t.ctx, {t.in}, {t.out});
  EXPECT_NE(text.find("loop x, step 4, serial, runs as one call over its whole range"), std::string::npos) << text;
  const std::string kept = explain_pipeline(t.ctx, {t.in}, {t.out}, {.keep_loops = true});
  EXPECT_NE(kept.find("loop x, step 4, serial.\n"), std::string::npos) << kept;
}

// A failing callback of a merged loop is reported once, through call_failed.
TEST(loop_merging, failure_of_the_one_call_is_reported) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make([](const buffer<const int>&, const buffer<int>&) -> index_t { return 3; }, {{in, {point(x)}}},
                      {{out, {x}}}, {.name = "fails"});
  f.loops({{x, 2}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  std::vector<std::string> failed;
  eval_config cfg;
  cfg.call_failed = [&](const call_stmt* op) { failed.push_back(op->attrs.name); };
  eval_context c;
  c.config = &cfg;
  buffer<int, 1> in_buf({6}), out_buf({6});
  in_buf.allocate();
  out_buf.allocate();
  EXPECT_EQ(p.evaluate({&in_buf}, {&out_buf}, c), 3);
  EXPECT_EQ(failed, std::vector<std::string>({"fails"}));
}

}  // namespace
}  // namespace slinky
