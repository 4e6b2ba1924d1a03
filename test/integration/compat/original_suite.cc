// Compatibility tests of behaviours the original slinky's own test suite relies on (API_COMPAT 5.2,
// correctness items 2, 3, 5, 6, 7 and 9), written the way a client of the original writes them:
// copies whose output takes no variable in the dims their inputs slice, declared dims in terms of
// a buffer's own bounds, folded pipeline outputs, the rank of buffers made by statements, copies
// into a destination of lower rank, and pad with broadcast bounds.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/runtime/stmt.h"

namespace {

using namespace slinky;

// Counts the heap allocations made through the eval_config hook and records their sizes; every
// automatic allocation goes through it (auto_stack_threshold = 0).
struct counting_context {
  eval_config config;
  eval_context context;
  int allocations = 0;
  std::vector<std::size_t> sizes;
  counting_context() {
    config.auto_stack_threshold = 0;
    config.allocate = [this](var, raw_buffer* b) {
      ++allocations;
      sizes.push_back(b->size_bytes());
      return b->allocate();
    };
    config.free = [](var, raw_buffer*, void* p) { ::free(p); };
    context.config = &config;
  }
};

int value_at(index_t x, index_t y, int which) { return static_cast<int>(x + 10 * y + 1000 * which); }

// A rank-2 buffer [0, w) x [0, h) holding value_at(x, y, which).
buffer<int, 2> make_image(index_t w, index_t h, int which) {
  buffer<int, 2> b({w, h});
  b.allocate();
  for (index_t y = 0; y < h; ++y) {
    for (index_t x = 0; x < w; ++x) b(x, y) = value_at(x, y, which);
  }
  return b;
}

// out(x, y) = in(x, y) + 1 over out's crop.
index_t add_one(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t y = out.dim(1).begin(); y < out.dim(1).end(); ++y) {
    for (index_t x = out.dim(0).begin(); x < out.dim(0).end(); ++x) out(x, y) = in(x, y) + 1;
  }
  return 0;
}

// Item 2: make_stack given one variable fewer than the output's rank. The stacked dim takes no
// variable; the sources are indexed by all of the output's variables. Stacked along the last dim
// and along dim 0, from inputs and from intermediates, with and without a loop and aliasing.
TEST(compat_original, stack_indexed_by_fewer_variables_than_its_rank) {
  const index_t w = 7, h = 5;
  for (std::size_t stack_dim : {std::size_t{2}, std::size_t{0}}) {
    for (bool intermediates : {false, true}) {
      for (bool split : {false, true}) {
        for (bool no_alias : {false, true}) {
          node_context ctx;
          auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
          auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
          auto a1 = buffer_expr::make(ctx, "a1", 2, sizeof(int));
          auto b1 = buffer_expr::make(ctx, "b1", 2, sizeof(int));
          auto out = buffer_expr::make(ctx, "out", 3, sizeof(int));
          var x(ctx, "x"), y(ctx, "y");
          func fa = func::make(add_one, {{a, {point(x), point(y)}}}, {{a1, {x, y}}});
          func fb = func::make(add_one, {{b, {point(x), point(y)}}}, {{b1, {x, y}}});
          std::vector<buffer_expr_ptr> srcs =
              intermediates ? std::vector<buffer_expr_ptr>{a1, b1} : std::vector<buffer_expr_ptr>{a, b};
          func stack = func::make_stack(srcs, {out, {x, y}}, stack_dim);
          if (split) stack.loops({{y, 2}});
          build_options options;
          options.no_alias_buffers = no_alias;
          pipeline p = build_pipeline(ctx, {a, b}, {out}, options);

          buffer<int, 2> a_buf = make_image(w, h, 0), b_buf = make_image(w, h, 1);
          buffer<int, 3> out_buf(stack_dim == 2 ? std::vector<index_t>{w, h, 2} : std::vector<index_t>{2, w, h});
          out_buf.allocate();
          const raw_buffer* ins[] = {&a_buf, &b_buf};
          const raw_buffer* outs[] = {&out_buf};
          ASSERT_EQ(p.evaluate(ins, outs), 0);
          const int plus = intermediates ? 1 : 0;
          for (int s = 0; s < 2; ++s) {
            for (index_t yy = 0; yy < h; ++yy) {
              for (index_t xx = 0; xx < w; ++xx) {
                const int got = stack_dim == 2 ? out_buf(xx, yy, s) : out_buf(s, xx, yy);
                ASSERT_EQ(got, value_at(xx, yy, s) + plus) << stack_dim << intermediates << split << no_alias;
              }
            }
          }
        }
      }
    }
  }
}

// Item 2: output_slice written by the client: each input slices dim 1 of the rank-3 output, which
// is indexed by the variables of the other two dims (x, then z). A slice at a coordinate of the
// output's own metadata works like a constant one.
TEST(compat_original, copy_output_slice_takes_no_variable) {
  const index_t w = 6, d = 3;
  node_context ctx;
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 3, sizeof(int));
  var x(ctx, "x"), z(ctx, "z");
  func::input ia{a, {point(x), point(z)}, {}, {}, {expr(), buffer_min(out->sym(), 1), expr()}};
  func::input ib{b, {point(x), point(z)}, {}, {}, {expr(), buffer_min(out->sym(), 1) + 1, expr()}};
  func copy = func::make_copy({ia, ib}, {out, {x, z}});
  pipeline p = build_pipeline(ctx, {a, b}, {out});

  buffer<int, 2> a_buf = make_image(w, d, 0), b_buf = make_image(w, d, 1);
  buffer<int, 3> out_buf({w, 2, d});
  out_buf.translate(0, 5, 0);
  out_buf.allocate();
  const raw_buffer* ins[] = {&a_buf, &b_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs), 0);
  for (index_t zz = 0; zz < d; ++zz) {
    for (index_t xx = 0; xx < w; ++xx) {
      EXPECT_EQ(out_buf(xx, 5, zz), value_at(xx, zz, 0));
      EXPECT_EQ(out_buf(xx, 6, zz), value_at(xx, zz, 1));
    }
  }
}

// Item 3: dims declared in terms of the buffer's own bounds mean its inferred bounds. The
// intermediate t is aligned to 4 in x: its producer is called with aligned crops only, and t is
// allocated over the aligned region (so it must read its input there too).
TEST(compat_original, declared_bounds_refer_to_the_inferred_bounds) {
  for (bool split : {false, true}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    t->dim(0).bounds = align(t->dim(0).bounds, 4);
    int misaligned = 0;
    func f = func::make(
        [&](const buffer<const int>& a, const buffer<int>& b) -> index_t {
          if (b.dim(0).min() % 4 != 0 || b.dim(0).extent() % 4 != 0) ++misaligned;
          return add_one(a, b);
        },
        {{in, {point(x), point(y)}}}, {{t, {x, y}}});
    func g = func::make(add_one, {{t, {point(x), point(y)}}}, {{out, {x, y}}});
    if (split) {
      g.loops({{y, 1}});
      f.compute_at({&g, y});
    }
    pipeline p = build_pipeline(ctx, {in}, {out});

    // out is [1, 9] x [0, 2]: t is needed over [1, 9], allocated and computed over [0, 11].
    buffer<int, 2> in_buf = make_image(12, 3, 0);
    buffer<int, 2> out_buf({9, 3});
    out_buf.translate(1, 0);
    out_buf.allocate();
    counting_context c;
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(ins, outs, c.context), 0);
    EXPECT_EQ(misaligned, 0);
    for (index_t yy = 0; yy < 3; ++yy) {
      for (index_t xx = 1; xx <= 9; ++xx) ASSERT_EQ(out_buf(xx, yy), value_at(xx, yy, 0) + 2);
    }
    ASSERT_EQ(c.allocations, 1);
    EXPECT_EQ(c.sizes[0], (split ? 1 : 3) * 12 * sizeof(int));
  }
}

// Item 3: the extent of the buffer itself, in a declared dim: t's rows are padded to a multiple
// of 8 elements, and its allocation has that extent.
TEST(compat_original, declared_extent_refers_to_the_inferred_extent) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  t->dim(0).bounds = min_extent(t->dim(0).min(), align_up(t->dim(0).extent(), 8));
  std::vector<index_t> extents;
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        extents.push_back(b.dim(0).extent());
        for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i) = a(i) * 2;
        return 0;
      },
      {{in, {point(x)}}}, {{t, {x}}});
  func g = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i) = a(i) + 1;
        return 0;
      },
      {{t, {point(x)}}}, {{out, {x}}});
  pipeline p = build_pipeline(ctx, {in}, {out});

  buffer<int, 1> in_buf({16}), out_buf({10});
  in_buf.allocate();
  out_buf.allocate();
  for (index_t i = 0; i < 16; ++i) in_buf(i) = static_cast<int>(i);
  counting_context c;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs, c.context), 0);
  for (index_t i = 0; i < 10; ++i) EXPECT_EQ(out_buf(i), 2 * i + 1);
  EXPECT_EQ(extents, std::vector<index_t>{16});
  ASSERT_EQ(c.allocations, 1);
  EXPECT_EQ(c.sizes[0], 16 * sizeof(int));
}

// Item 5: a pipeline output whose fold factor is at least its extent is accepted and written
// correctly, also when its range crosses a fold boundary ([3, 7] with fold 5), and when the copy
// into it could be removed by aliasing. Reading of the item: the original then keeps the copy
// (aliasing into an output needs its fold factors declared unfolded); a client can rely on the
// values, not on the number of copies, so this test asserts the values only. Declared unfolded,
// the copy is removed in both libraries.
TEST(compat_original, output_with_a_fold_at_least_its_extent) {
  const index_t w = 6;
  for (index_t ymin : {index_t{0}, index_t{3}}) {
    for (index_t fold : {index_t{5}, index_t{8}}) {
      node_context ctx;
      auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
      auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
      auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
      var x(ctx, "x"), y(ctx, "y");
      func f = func::make(add_one, {{in, {point(x), point(y)}}}, {{t, {x, y}}});
      func c = func::make_copy({t, {point(x), point(y)}}, {out, {x, y}});
      pipeline p = build_pipeline(ctx, {in}, {out});

      buffer<int, 2> in_buf = make_image(w, ymin + 5, 0);
      buffer<int, 2> out_buf({w, fold});
      out_buf.allocate();
      // out's rows [ymin, ymin + 4] in a ring of `fold` rows.
      out_buf.dims[1] = dim(ymin, ymin + 4, out_buf.dim(1).stride(), fold);
      const raw_buffer* ins[] = {&in_buf};
      const raw_buffer* outs[] = {&out_buf};
      ASSERT_EQ(p.evaluate(ins, outs), 0) << ymin << " " << fold;
      for (index_t yy = ymin; yy <= ymin + 4; ++yy) {
        for (index_t xx = 0; xx < w; ++xx) ASSERT_EQ(out_buf(xx, yy), value_at(xx, yy, 0) + 1);
      }
    }
  }
}

TEST(compat_original, output_declared_unfolded_is_aliased) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  out->dim(0).fold_factor = dim::unfolded;
  out->dim(1).fold_factor = dim::unfolded;
  int copies = 0;
  func f = func::make(add_one, {{in, {point(x), point(y)}}}, {{t, {x, y}}});
  func c = func::make_copy({t, {point(x + 1), point(y)}}, {out, {x, y}},
                           [&](const raw_buffer& s, const raw_buffer& d, const raw_buffer& pad) {
                             ++copies;
                             copy(s, d, pad);
                           });
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf = make_image(8, 4, 0);
  buffer<int, 2> out_buf({7, 4});
  out_buf.allocate();
  counting_context cc;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs, cc.context), 0);
  for (index_t yy = 0; yy < 4; ++yy) {
    for (index_t xx = 0; xx < 7; ++xx) ASSERT_EQ(out_buf(xx, yy), value_at(xx + 1, yy, 0) + 1);
  }
  EXPECT_EQ(copies, 0);
  EXPECT_EQ(cc.allocations, 0);
}

// Item 6: allocate, make_buffer and transpose drop trailing broadcast dims: the buffer the body
// sees has the lower rank. A broadcast dim followed by another dim stays.
TEST(compat_original, statements_drop_trailing_broadcast_dims) {
  var b(0), c(1);
  std::vector<std::size_t> ranks;
  stmt record = call_stmt::make(
      [&](const call_stmt* op, eval_context& ctx) -> index_t {
        ranks.push_back(ctx.lookup_buffer(op->outputs[0])->rank);
        return 0;
      },
      {}, {c}, {}, {});
  const dim_expr broadcast = dim::broadcast();
  const dim_expr row{bounds(0, 9), expr(), expr()};
  stmt clone = clone_buffer::make(c, b, record);
  ASSERT_EQ(evaluate(allocate::make(b, memory_type::heap, 4, {row, broadcast, broadcast}, clone)), 0);
  ASSERT_EQ(evaluate(allocate::make(b, memory_type::heap, 4, {row, broadcast, row}, clone)), 0);
  ASSERT_EQ(evaluate(allocate::make(b, memory_type::heap, 4, {broadcast}, clone)), 0);
  EXPECT_EQ(ranks, (std::vector<std::size_t>{1, 3, 0}));

  ranks.clear();
  buffer<int, 2> src({4, 3});
  src.allocate();
  eval_context ctx;
  ctx[b] = reinterpret_cast<index_t>(static_cast<raw_buffer*>(&src));
  const dim_expr d0{bounds(0, 3), 4, expr()};
  ASSERT_EQ(evaluate(make_buffer::make(c, buffer_at(b), 4, {d0, broadcast}, record), ctx), 0);
  ASSERT_EQ(evaluate(transpose::make(c, b, {1, 0, 2, 5}, record), ctx), 0);
  ASSERT_EQ(evaluate(transpose::make(c, b, {0, 2, 1}, record), ctx), 0);
  ASSERT_EQ(evaluate(transpose::make_truncate(c, b, 4, record), ctx), 0);
  EXPECT_EQ(ranks, (std::vector<std::size_t>{1, 2, 3, 2}));
}

// Item 7: copy into a destination of lower rank reads the source at index 0 of its extra dims
// (not at their min); where the source has no element there, the destination is padded.
TEST(compat_original, copy_to_lower_rank_reads_index_zero) {
  buffer<int, 3> src({4, 3, 2});
  src.translate(0, -1, 0);
  src.allocate();
  for (index_t z = 0; z < 2; ++z) {
    for (index_t y = -1; y <= 1; ++y) {
      for (index_t x = 0; x < 4; ++x) src(x, y, z) = static_cast<int>(x + 10 * y + 100 * z);
    }
  }
  buffer<int, 1> dst({4});
  dst.allocate();
  copy(src, dst);
  for (index_t x = 0; x < 4; ++x) EXPECT_EQ(dst(x), x);

  buffer<int, 2> dst2({4, 3});
  dst2.translate(0, -1);
  dst2.allocate();
  copy(src, dst2);
  for (index_t y = -1; y <= 1; ++y) {
    for (index_t x = 0; x < 4; ++x) EXPECT_EQ(dst2(x, y), x + 10 * y);
  }

  // Rows 2 and 3 do not contain y = 0: nothing of src is read, dst is all padding.
  src.translate(0, 3, 0);
  scalar<int> nine(9);
  copy(src, dst, nine);
  for (index_t x = 0; x < 4; ++x) EXPECT_EQ(dst(x), 9);
}

// Item 9: in pad, a broadcast entry of the in-bounds box is unbounded: nothing is padded along it.
TEST(compat_original, pad_with_broadcast_bounds) {
  buffer<int, 2> dst({5, 4});
  dst.allocate();
  for (index_t y = 0; y < 4; ++y) {
    for (index_t x = 0; x < 5; ++x) dst(x, y) = 1;
  }
  const dim inside[] = {dim(1, 2), dim::broadcast()};
  pad(inside, dst, scalar<int>(7));
  for (index_t y = 0; y < 4; ++y) {
    for (index_t x = 0; x < 5; ++x) EXPECT_EQ(dst(x, y), x >= 1 && x <= 2 ? 1 : 7) << x << " " << y;
  }
  // Both broadcast: nothing is padded.
  const dim everywhere[] = {dim::broadcast(), dim::broadcast()};
  pad(everywhere, dst, scalar<int>(3));
  EXPECT_EQ(dst(0, 0), 7);
  EXPECT_EQ(dst(1, 3), 1);
}

}  // namespace
