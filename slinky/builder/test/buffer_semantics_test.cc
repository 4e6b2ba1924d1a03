// Pipelines relying on buffer semantics clients use (docs/api.md section 11): broadcast (stride 0)
// dims of outputs and intermediates, fold factors carried as data on stride-0 dims, and a rank-0
// constant with a null base standing for an absent optional input.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "test_funcs.h"

namespace slinky {
namespace {

using test::memory_counter;

// out(x, y) = in(x) * 2, written over whatever region the callback is given.
struct broadcast_output_pipeline {
  node_context ctx;
  buffer_expr_ptr in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  buffer_expr_ptr out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x{ctx, "x"}, y{ctx, "y"};
  int calls = 0;
  func f;
  pipeline p;

  explicit broadcast_output_pipeline(bool loop_y) {
    f = func::make(
        [this](const buffer<const int>& a, const buffer<int>& b) {
          ++calls;
          if (!b.base()) return 1;
          for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
            for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i) * 2;
          }
          return 0;
        },
        {{in, {point(x)}}}, {{out, {x, y}}}, {.name = "f"});
    if (loop_y) f.loops({{y, 1}});
    p = build_pipeline(ctx, {in}, {out});
  }
};

TEST(buffer_semantics, output_with_broadcast_dim) {
  for (bool loop_y : {false, true}) {
    buffer<int, 1> in_buf({10});
    in_buf.allocate();
    for (index_t i = 0; i < 10; ++i) in_buf(i) = static_cast<int>(i) + 1;

    // dim::broadcast(): the point 0, stride 0, fold factor 0.
    broadcast_output_pipeline b(loop_y);
    buffer<int, 2> out_buf({10, 1});
    out_buf.allocate();
    out_buf.mutable_dim(1) = dim::broadcast();
    ASSERT_EQ(b.p.evaluate({&in_buf}, {&out_buf}), 0);
    EXPECT_EQ(b.calls, 1);
    for (index_t i = 0; i < 10; ++i) {
      EXPECT_EQ(out_buf(i, 0), in_buf(i) * 2);
      // Every row is the same memory.
      EXPECT_EQ(&out_buf(i, 5), &out_buf(i, 0));
    }

    // A stride-0 dim of extent 5: every row is written to the same memory.
    broadcast_output_pipeline e(loop_y);
    buffer<int, 2> out5({10, 1});
    out5.allocate();
    out5.mutable_dim(1) = dim(0, 4, 0);
    ASSERT_EQ(e.p.evaluate({&in_buf}, {&out5}), 0);
    EXPECT_EQ(e.calls, loop_y ? 5 : 1);
    for (index_t i = 0; i < 10; ++i) EXPECT_EQ(out5(i, 3), in_buf(i) * 2);
  }
}

TEST(buffer_semantics, intermediate_with_broadcast_dim) {
  for (int schedule = 0; schedule < 3; ++schedule) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    // intm is a row broadcast along y.
    intm->dim(1) = dim::broadcast();

    int f_calls = 0;
    bool f_saw_broadcast = true;
    func f = func::make(
        [&](const buffer<const int>& a, const buffer<int>& b) {
          ++f_calls;
          f_saw_broadcast = f_saw_broadcast && b.dim(1).stride() == 0 && b.base();
          if (!b.base()) return 1;
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, 0) = a(i) + 1;
          return 0;
        },
        {{in, {point(x)}}}, {{intm, {x, y}}}, {.name = "f"});
    func g = func::make(
        [&](const buffer<const int>& a, const buffer<int>& b) {
          for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
            for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i, j) * 3;
          }
          return 0;
        },
        {{intm, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "g"});
    if (schedule >= 1) g.loops({{y, 1}});
    // f is computed inside g's loop by default.
    if (schedule == 1) f.compute_root();
    pipeline p = build_pipeline(ctx, {in}, {out});

    const index_t w = 8, h = 6;
    buffer<int, 1> in_buf({w});
    in_buf.allocate();
    for (index_t i = 0; i < w; ++i) in_buf(i) = static_cast<int>(i * i);
    buffer<int, 2> out_buf({w, h});
    out_buf.allocate();
    memory_counter m;
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0) << schedule;
    for (index_t j = 0; j < h; ++j) {
      for (index_t i = 0; i < w; ++i) ASSERT_EQ(out_buf(i, j), (in_buf(i) + 1) * 3) << i << ", " << j;
    }
    EXPECT_TRUE(f_saw_broadcast);
    // f writes the declared bounds of the broadcast dim ([0, 0]) whatever row g reads: inside g's
    // loop too, the later iterations find that row computed.
    EXPECT_EQ(f_calls, 1);
    // The allocation holds one row.
    for (index_t size : m.sizes) EXPECT_EQ(size, w * static_cast<index_t>(sizeof(int)));
  }
}

TEST(buffer_semantics, copy_into_a_broadcast_dim_reads_its_declared_bounds) {
  // A single-row input is copied into an intermediate whose dim 1 is declared dim::broadcast();
  // the consumer reads every row of it. The copy writes (and reads from the input) only the
  // declared row [0, 0], so the input needs one row, not the output's height (ynnpack's product
  // of a broadcast operand packs it so).
  for (bool loop_y : {false, true}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    intm->dim(1) = dim::broadcast();
    func copy = func::make_copy({in, {point(x), point(y)}}, {intm, {x, y}});
    int g_calls = 0;
    func g = func::make(
        [&](const buffer<const int>& a, const buffer<int>& b) {
          ++g_calls;
          for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
            for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i, j) * 3 + static_cast<int>(j);
          }
          return 0;
        },
        {{intm, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "g"});
    if (loop_y) g.loops({{y, 2}});
    pipeline p = build_pipeline(ctx, {in}, {out});

    const index_t w = 5, h = 7;
    buffer<int, 2> in_buf({w, 1});
    in_buf.allocate();
    for (index_t i = 0; i < w; ++i) in_buf(i, 0) = static_cast<int>(10 + i);
    buffer<int, 2> out_buf({w, h});
    out_buf.allocate();
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0) << loop_y;
    EXPECT_EQ(g_calls, loop_y ? 4 : 1);
    for (index_t j = 0; j < h; ++j) {
      for (index_t i = 0; i < w; ++i) ASSERT_EQ(out_buf(i, j), (10 + i) * 3 + j) << i << ", " << j;
    }
  }
}

TEST(buffer_semantics, fold_factor_as_data) {
  // `meta` has element size 0 and a stride-0 dim whose fold factor is a split size for the
  // callback: it reaches the callback unchanged, and nothing is folded or allocated for it.
  for (bool loop_x : {false, true}) {
    node_context ctx;
    auto meta = buffer_expr::make(ctx, "meta", 1, 0);
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    var x(ctx, "x");
    // An intermediate carrying data in a fold factor too.
    intm->dim(0) = dim(0, 0, 0, 5);

    std::vector<index_t> seen_meta, seen_intm;
    func f = func::make(
        [&](const raw_buffer& m, const buffer<const int>& a, const buffer<int>& b) {
          seen_meta.push_back(m.dim(0).fold_factor());
          seen_intm.push_back(b.dim(0).fold_factor());
          b(0) = a(0) + 100;
          return 0;
        },
        {{meta, {point(expr(0))}}, {in, {point(expr(0))}}}, {{intm, {x}}}, {.name = "f"});
    func g = func::make(
        [&](const buffer<const int>& a, const buffer<int>& b) {
          seen_intm.push_back(a.dim(0).fold_factor());
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i) = a(i) + static_cast<int>(i);
          return 0;
        },
        {{intm, {point(x)}}}, {{out, {x}}}, {.name = "g"});
    if (loop_x) {
      g.loops({{x, 2}});
      f.compute_at({&g, x});
    }
    pipeline p = build_pipeline(ctx, {meta, in}, {out});

    char dummy = 0;
    dim meta_dim(0, 0, 0, 16);
    raw_buffer meta_buf{&dummy, 0, 1, &meta_dim};
    buffer<int, 1> in_buf({1});
    in_buf.allocate();
    in_buf(0) = 7;
    buffer<int, 1> out_buf({6});
    out_buf.allocate();
    memory_counter m;
    ASSERT_EQ(p.evaluate({&meta_buf, &in_buf}, {&out_buf}, m.context), 0);
    for (index_t i = 0; i < 6; ++i) EXPECT_EQ(out_buf(i), 107 + i);
    ASSERT_FALSE(seen_meta.empty());
    for (index_t f : seen_meta) EXPECT_EQ(f, 16);
    for (index_t f : seen_intm) EXPECT_EQ(f, 5);
    // intm holds one element, not a fold of 5.
    for (index_t size : m.sizes) EXPECT_EQ(size, static_cast<index_t>(sizeof(int)));
  }
}

TEST(buffer_semantics, allocate_hook_aligns_with_raw_buffer_allocate) {
  // Clients allocate in the hook with buffer->allocate(64) and count allocations per tile.
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  bool aligned = true;
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        aligned = aligned && reinterpret_cast<std::uintptr_t>(&b(b.dim(0).min())) % 64 == 0;
        for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i) = a(i) * 5;
        return 0;
      },
      {{in, {point(x)}}}, {{intm, {x}}}, {.name = "f"});
  func g = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i) = a(i) + 1;
        return 0;
      },
      {{intm, {point(x)}}}, {{out, {x}}}, {.name = "g"});
  g.loops({{x, 4}});
  // One allocation per tile.
  intm->store_at({&g, x}).store_in(memory_type::heap);
  pipeline p = build_pipeline(ctx, {in}, {out});

  int allocations = 0, frees = 0;
  eval_config config;
  config.allocate = [&](var, raw_buffer* b) -> void* {
    ++allocations;
    return b->allocate(64);
  };
  config.free = [&](var, raw_buffer*, void* p) {
    ++frees;
    std::free(p);
  };
  eval_context c;
  c.config = &config;
  buffer<int, 1> in_buf({12});
  in_buf.allocate();
  for (index_t i = 0; i < 12; ++i) in_buf(i) = static_cast<int>(i);
  buffer<int, 1> out_buf({12});
  out_buf.allocate();
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, c), 0);
  for (index_t i = 0; i < 12; ++i) EXPECT_EQ(out_buf(i), i * 5 + 1);
  EXPECT_EQ(allocations, 3);
  EXPECT_EQ(frees, 3);
  EXPECT_TRUE(aligned);
}

TEST(buffer_semantics, null_rank0_constant_is_an_absent_input) {
  for (bool present : {false, true}) {
    node_context ctx;
    raw_buffer_ptr bias_value = raw_buffer::make_scalar<int>(10);
    if (!present) bias_value->base = nullptr;
    auto bias = buffer_expr::make_constant(ctx, "bias", bias_value);
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    var x(ctx, "x");
    int null_calls = 0;
    func f = func::make(
        [&](const buffer<const int>& opt, const buffer<const int>& a, const buffer<int>& b) {
          if (!opt.base()) ++null_calls;
          const int add = opt.base() ? opt() : 0;
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i) = a(i) + add;
          return 0;
        },
        {{bias, {}}, {in, {point(x)}}}, {{out, {x}}}, {.name = "f"});
    f.loops({{x, 2}});
    pipeline p = build_pipeline(ctx, {in}, {out});

    buffer<int, 1> in_buf({4});
    in_buf.allocate();
    for (index_t i = 0; i < 4; ++i) in_buf(i) = static_cast<int>(i);
    buffer<int, 1> out_buf({4});
    out_buf.allocate();
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
    for (index_t i = 0; i < 4; ++i) EXPECT_EQ(out_buf(i), i + (present ? 10 : 0));
    EXPECT_EQ(null_calls, present ? 0 : 2);
  }
}

}  // namespace
}  // namespace slinky
