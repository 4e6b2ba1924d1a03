// Copies: every kind of copy docs/api.md section 6 names, checked against a plain reference over
// translated buffers, with and without loops, and the number of calls of the copy's impl
// (a counting wrapper around slinky::copy) bounded.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "test_funcs.h"

namespace slinky {
namespace {

// The value stored at src coordinates c.
int src_value(const std::vector<index_t>& c) {
  int v = 7;
  for (index_t i : c) v = v * 131 + static_cast<int>(i);
  return v;
}

constexpr int pad_value = -12345;
constexpr int untouched = -999;

struct copy_case {
  // Bounds of src and dst (translated: mins are not 0).
  std::vector<std::pair<index_t, index_t>> src_bounds;
  std::vector<std::pair<index_t, index_t>> dst_bounds;
  // The src coordinates read for dst coordinates x, as point functions of the dst variables.
  std::function<box_expr(const std::vector<var>& x, const buffer_expr_ptr& src)> bounds;
  // The same in plain C++.
  std::function<std::vector<index_t>(const std::vector<index_t>& x)> reference;
  // Where the copy is padded: the src region that is read (the rest comes from the pad).
  std::vector<std::pair<index_t, index_t>> input_crop = {};
  // Loop over this dst dimension with this step (0: no loop).
  int loop_dim = -1;
  index_t loop_step = 0;
};

buffer<int> make_buffer(const std::vector<std::pair<index_t, index_t>>& bounds) {
  std::vector<dim> dims;
  for (const auto& b : bounds) dims.emplace_back(b.first, b.second);
  buffer<int> result(bounds.size());
  for (std::size_t d = 0; d < bounds.size(); ++d) result.dims[d] = dims[d];
  result.init_strides();
  result.allocate();
  return result;
}

template <typename Fn>
void for_each_coord(const std::vector<std::pair<index_t, index_t>>& bounds, const Fn& fn) {
  std::vector<index_t> c(bounds.size());
  for (std::size_t d = 0; d < bounds.size(); ++d) {
    c[d] = bounds[d].first;
    if (bounds[d].first > bounds[d].second) return;
  }
  for (;;) {
    fn(c);
    std::size_t d = 0;
    for (; d < c.size(); ++d) {
      if (c[d] < bounds[d].second) {
        ++c[d];
        break;
      }
      c[d] = bounds[d].first;
    }
    if (d == c.size()) return;
  }
}

bool contains(const std::vector<std::pair<index_t, index_t>>& bounds, const std::vector<index_t>& c) {
  for (std::size_t d = 0; d < bounds.size(); ++d) {
    if (c[d] < bounds[d].first || c[d] > bounds[d].second) return false;
  }
  return true;
}

// Builds and runs the copy; returns the number of impl calls, checks the output.
int run_copy(const copy_case& cc) {
  node_context ctx;
  auto src = buffer_expr::make(ctx, "src", cc.src_bounds.size(), sizeof(int));
  auto dst = buffer_expr::make(ctx, "dst", cc.dst_bounds.size(), sizeof(int));
  const char* names[] = {"x", "y", "z", "w"};
  std::vector<var> x;
  for (std::size_t d = 0; d < cc.dst_bounds.size(); ++d) x.emplace_back(ctx, names[d]);

  std::atomic<int> calls{0};
  copy_stmt::callable counting = [&](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
    ++calls;
    copy(s, d, p);
  };
  func f;
  if (cc.input_crop.empty()) {
    f = func::make_copy({src, cc.bounds(x, src)}, {dst, x}, counting);
  } else {
    auto pad = buffer_expr::make_scalar<int>(ctx, "pad", pad_value);
    box_expr crop;
    for (const auto& b : cc.input_crop) crop.push_back(bounds(b.first, b.second));
    f = func::make_copy({src, cc.bounds(x, src), crop}, {dst, x}, {pad, {}}, counting);
  }
  if (cc.loop_dim >= 0) f.loops({{x[cc.loop_dim], cc.loop_step}});
  pipeline p = build_pipeline(ctx, {src}, {dst});

  buffer<int> src_buf = make_buffer(cc.src_bounds);
  buffer<int> dst_buf = make_buffer(cc.dst_bounds);
  for_each_coord(cc.src_bounds, [&](const std::vector<index_t>& c) {
    *static_cast<int*>(src_buf.address_at(span<const index_t>(c.data(), c.size()))) = src_value(c);
  });
  for_each_coord(cc.dst_bounds, [&](const std::vector<index_t>& c) {
    *static_cast<int*>(dst_buf.address_at(span<const index_t>(c.data(), c.size()))) = untouched;
  });
  const raw_buffer* ins[] = {&src_buf};
  const raw_buffer* outs[] = {&dst_buf};
  EXPECT_EQ(p.evaluate(ins, outs), 0);

  int errors = 0;
  for_each_coord(cc.dst_bounds, [&](const std::vector<index_t>& c) {
    const std::vector<index_t> s = cc.reference(c);
    int expected;
    if (!cc.input_crop.empty()) {
      expected = contains(cc.input_crop, s) ? src_value(s) : pad_value;
    } else {
      expected = src_value(s);
    }
    const int actual = *static_cast<const int*>(dst_buf.address_at(span<const index_t>(c.data(), c.size())));
    if (actual != expected && errors++ < 5) {
      ADD_FAILURE() << "dst(" << testing::PrintToString(c) << ") = " << actual << ", expected " << expected;
    }
  });
  return calls;
}

using bounds_fn = std::function<box_expr(const std::vector<var>&, const buffer_expr_ptr&)>;
using reference_fn = std::function<std::vector<index_t>(const std::vector<index_t>&)>;

// Runs a case without a loop (asserting at most max_calls calls) and with loops over each dst
// dimension (steps 1 and 3), which must stay correct.
void test_copy(copy_case cc, int max_calls) {
  EXPECT_LE(run_copy(cc), max_calls);
  for (std::size_t d = 0; d < cc.dst_bounds.size(); ++d) {
    for (index_t step : {1, 3}) {
      SCOPED_TRACE("loop over dst dim " + std::to_string(d) + " step " + std::to_string(step));
      copy_case looped = cc;
      looped.loop_dim = static_cast<int>(d);
      looped.loop_step = step;
      run_copy(looped);
    }
  }
}

TEST(copy, translation) {
  test_copy({{{-3, 20}, {5, 16}},
             {{0, 15}, {0, 9}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr {
               return {point(x[0] + 2), point(x[1] + 6)};
             },
             [](const std::vector<index_t>& x) -> std::vector<index_t> {
               return {x[0] + 2, x[1] + 6};
             }},
            1);
}

TEST(copy, transpose) {
  test_copy({{{2, 12}, {-4, 9}, {1, 3}},
             {{-4, 9}, {1, 3}, {2, 12}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr {
               return {point(x[2]), point(x[0]), point(x[1])};
             },
             [](const std::vector<index_t>& x) -> std::vector<index_t> {
               return {x[2], x[0], x[1]};
             }},
            1);
}

TEST(copy, transpose_to_higher_rank) {
  // dst(x, y, z) = src(y, x): a transpose broadcast along z.
  test_copy({{{0, 7}, {3, 12}},
             {{3, 12}, {0, 7}, {-1, 2}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr {
               return {point(x[1]), point(x[0])};
             },
             [](const std::vector<index_t>& x) -> std::vector<index_t> {
               return {x[1], x[0]};
             }},
            1);
}

TEST(copy, broadcast_missing_dim) {
  test_copy({{{-2, 13}},
             {{-2, 13}, {4, 9}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr { return {point(x[0])}; },
             [](const std::vector<index_t>& x) -> std::vector<index_t> { return {x[0]}; }},
            1);
}

TEST(copy, broadcast_extent_one_dim) {
  test_copy({{{-2, 13}, {5, 5}},
             {{-2, 13}, {4, 9}},
             [](const std::vector<var>& x, const buffer_expr_ptr& src) -> box_expr {
               return {point(x[0]), point(src->dim(1).min())};
             },
             [](const std::vector<index_t>& x) -> std::vector<index_t> {
               return {x[0], 5};
             }},
            1);
}

TEST(copy, slice) {
  test_copy({{{0, 9}, {-3, 3}, {0, 11}},
             {{0, 9}, {0, 11}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr {
               return {point(x[0]), point(2), point(x[1])};
             },
             [](const std::vector<index_t>& x) -> std::vector<index_t> {
               return {x[0], 2, x[1]};
             }},
            1);
}

TEST(copy, downsample) {
  test_copy({{{-8, 40}, {0, 30}},
             {{-4, 19}, {0, 14}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr {
               return {point(x[0] * 2), point(x[1] * 2 + 1)};
             },
             [](const std::vector<index_t>& x) -> std::vector<index_t> {
               return {x[0] * 2, x[1] * 2 + 1};
             }},
            1);
}

TEST(copy, stride_three) {
  test_copy({{{0, 100}},
             {{1, 30}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr { return {point(3 * x[0] + 4)}; },
             [](const std::vector<index_t>& x) -> std::vector<index_t> { return {3 * x[0] + 4}; }},
            1);
}

TEST(copy, flip) {
  test_copy({{{0, 20}, {-2, 5}},
             {{0, 20}, {-2, 5}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr {
               return {point(20 - x[0]), point(x[1])};
             },
             [](const std::vector<index_t>& x) -> std::vector<index_t> {
               return {20 - x[0], x[1]};
             }},
            1);
}

TEST(copy, tile) {
  // dst(xi, xo) = src(xo * 4 + xi).
  test_copy({{{-8, 39}},
             {{0, 3}, {-2, 9}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr { return {point(x[1] * 4 + x[0])}; },
             [](const std::vector<index_t>& x) -> std::vector<index_t> { return {x[1] * 4 + x[0]}; }},
            1);
}

TEST(copy, untile) {
  // dst(x) = src(x % 4, x / 4): a head, a body of whole blocks and a tail.
  test_copy({{{0, 3}, {-3, 10}},
             {{-10, 41}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr {
               return {point(x[0] % 4), point(x[0] / 4)};
             },
             [](const std::vector<index_t>& x) -> std::vector<index_t> {
               return {euclidean_mod<index_t>(x[0], 4), euclidean_div<index_t>(x[0], 4)};
             }},
            3);
}

TEST(copy, upsample) {
  test_copy({{{-3, 12}, {0, 9}},
             {{-5, 22}, {1, 18}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr {
               return {point(x[0] / 2), point((x[1] + 1) / 2)};
             },
             [](const std::vector<index_t>& x) -> std::vector<index_t> {
               return {euclidean_div<index_t>(x[0], 2), euclidean_div<index_t>(x[1] + 1, 2)};
             }},
            9);
}

TEST(copy, reshape_2d_to_1d) {
  // The width is only known at run time: the body is still one call.
  test_copy({{{0, 6}, {0, 8}},
             {{0, 62}},
             [](const std::vector<var>& x, const buffer_expr_ptr& src) -> box_expr {
               expr w = src->dim(0).extent();
               return {point(x[0] % w), point(x[0] / w)};
             },
             [](const std::vector<index_t>& x) -> std::vector<index_t> {
               return {x[0] % 7, x[0] / 7};
             }},
            3);
}

TEST(copy, reshape_1d_to_2d) {
  test_copy({{{0, 62}},
             {{0, 6}, {0, 8}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr { return {point(x[1] * 7 + x[0])}; },
             [](const std::vector<index_t>& x) -> std::vector<index_t> { return {x[1] * 7 + x[0]}; }},
            1);
}

TEST(copy, diagonal) {
  test_copy({{{0, 9}, {0, 9}},
             {{1, 8}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr {
               return {point(x[0]), point(x[0])};
             },
             [](const std::vector<index_t>& x) -> std::vector<index_t> {
               return {x[0], x[0]};
             }},
            1);
}

TEST(copy, not_affine) {
  // dst(x) = src(x * x): correct, one call per element.
  test_copy({{{0, 100}},
             {{0, 9}},
             [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr { return {point(x[0] * x[0])}; },
             [](const std::vector<index_t>& x) -> std::vector<index_t> { return {x[0] * x[0]}; }},
            10);
}

TEST(copy, padded) {
  // src covers [2, 9] x [0, 4] of a dst [0, 11] x [-2, 6]; the rest is padding.
  copy_case cc{{{2, 9}, {0, 4}},
               {{0, 11}, {-2, 6}},
               [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr {
                 return {point(x[0]), point(x[1])};
               },
               [](const std::vector<index_t>& x) -> std::vector<index_t> {
                 return {x[0], x[1]};
               },
               {{2, 9}, {0, 4}}};
  test_copy(cc, 1);
}

TEST(copy, padded_crop_inside_src) {
  // Only [4, 6] of src is read; a transposed, padded copy.
  copy_case cc{{{0, 9}, {0, 9}},
               {{-2, 12}, {-1, 11}},
               [](const std::vector<var>& x, const buffer_expr_ptr&) -> box_expr {
                 return {point(x[1]), point(x[0])};
               },
               [](const std::vector<index_t>& x) -> std::vector<index_t> {
                 return {x[1], x[0]};
               },
               {{4, 6}, {0, 9}}};
  test_copy(cc, 1);
}

// Concat and stack: one call per input.
TEST(copy, concat) {
  node_context ctx;
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
  auto c = buffer_expr::make(ctx, "c", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  std::atomic<int> calls{0};
  auto counting = [&](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
    ++calls;
    copy(s, d, p);
  };
  func f = func::make_concat({a, b, c}, {out, {x, y}}, 1, {0, 3, 4, 9}, counting);
  pipeline p = build_pipeline(ctx, {a, b, c}, {out});

  buffer<int, 2> ab({6, 3}), bb({6, 1}), cb({6, 5}), ob({6, 9});
  for (auto* buf : {&ab, &bb, &cb, &ob}) buf->allocate();
  int n = 0;
  for (auto* buf : {&ab, &bb, &cb}) {
    for_each_element([&](int* v) { *v = n++; }, *buf);
  }
  const raw_buffer* ins[] = {&ab, &bb, &cb};
  const raw_buffer* outs[] = {&ob};
  ASSERT_EQ(p.evaluate(ins, outs), 0);
  EXPECT_EQ(calls, 3);
  for (index_t j = 0; j < 9; ++j) {
    for (index_t i = 0; i < 6; ++i) {
      const int expected = j < 3 ? ab(i, j) : j < 4 ? bb(i, j - 3) : cb(i, j - 4);
      ASSERT_EQ(ob(i, j), expected) << i << " " << j;
    }
  }
}

// The multi-input form: the left half of dst from a, the right half from b transposed.
TEST(copy, multiple_inputs) {
  node_context ctx;
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  std::atomic<int> calls{0};
  auto counting = [&](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
    ++calls;
    copy(s, d, p);
  };
  func::input ia{a, {point(x), point(y)}, {}, {bounds(0, 3), {}}};
  func::input ib{b, {point(y), point(x - 4)}, {}, {bounds(4, 9), {}}};
  func f = func::make_copy({ia, ib}, {out, {x, y}}, counting);
  f.loops({{y, 2}});
  pipeline p = build_pipeline(ctx, {a, b}, {out});

  buffer<int, 2> ab({4, 5}), bb({5, 6}), ob({10, 5});
  for (auto* buf : {&ab, &bb, &ob}) buf->allocate();
  int n = 0;
  for (auto* buf : {&ab, &bb}) {
    for_each_element([&](int* v) { *v = n++; }, *buf);
  }
  const raw_buffer* ins[] = {&ab, &bb};
  const raw_buffer* outs[] = {&ob};
  ASSERT_EQ(p.evaluate(ins, outs), 0);
  EXPECT_EQ(calls, 2 * 3);  // Two inputs, three chunks of rows.
  for (index_t j = 0; j < 5; ++j) {
    for (index_t i = 0; i < 10; ++i) ASSERT_EQ(ob(i, j), i < 4 ? ab(i, j) : bb(j, i - 4)) << i << " " << j;
  }
}

TEST(copy, stack) {
  node_context ctx;
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 3, sizeof(int));
  var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
  std::atomic<int> calls{0};
  auto counting = [&](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
    ++calls;
    copy(s, d, p);
  };
  for (std::size_t dim : {std::size_t{1}, std::size_t{2}}) {
    calls = 0;
    std::vector<var> dims = dim == 1 ? std::vector<var>{x, z, y} : std::vector<var>{x, y, z};
    func f = func::make_stack({a, b}, {out, dims}, dim, counting);
    pipeline p = build_pipeline(ctx, {a, b}, {out});
    buffer<int, 2> ab({5, 4}), bb({5, 4});
    ab.allocate();
    bb.allocate();
    int n = 0;
    for_each_element([&](int* v) { *v = n++; }, ab);
    for_each_element([&](int* v) { *v = n++; }, bb);
    buffer<int, 3> ob = dim == 1 ? buffer<int, 3>({5, 2, 4}) : buffer<int, 3>({5, 4, 2});
    ob.allocate();
    const raw_buffer* ins[] = {&ab, &bb};
    const raw_buffer* outs[] = {&ob};
    ASSERT_EQ(p.evaluate(ins, outs), 0);
    EXPECT_EQ(calls, 2);
    for (index_t k = 0; k < 2; ++k) {
      for (index_t j = 0; j < 4; ++j) {
        for (index_t i = 0; i < 5; ++i) {
          const int expected = k == 0 ? ab(i, j) : bb(i, j);
          ASSERT_EQ(dim == 1 ? ob(i, k, j) : ob(i, j, k), expected) << i << " " << j << " " << k;
        }
      }
    }
  }
}

// A stack whose output takes one variable fewer than its rank (output_slice): the stacked dim
// takes none. From inputs and from intermediates (which aliasing makes views of their slice of the
// output: no copy runs), in a loop or not, along each dim.
TEST(copy, stack_indexed_by_fewer_variables) {
  const index_t w = 5, h = 4;
  for (std::size_t dim : {std::size_t{0}, std::size_t{1}, std::size_t{2}}) {
    for (bool intermediates : {false, true}) {
      for (bool aliasing : {false, true}) {
        node_context ctx;
        auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
        auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
        auto a2 = buffer_expr::make(ctx, "a2", 2, sizeof(int));
        auto b2 = buffer_expr::make(ctx, "b2", 2, sizeof(int));
        auto out = buffer_expr::make(ctx, "out", 3, sizeof(int));
        var x(ctx, "x"), y(ctx, "y");
        std::atomic<int> calls{0};
        auto counting = [&](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
          ++calls;
          copy(s, d, p);
        };
        auto twice = [](const buffer<const int>& in, const buffer<int>& o) -> index_t {
          for (index_t j = o.dim(1).begin(); j < o.dim(1).end(); ++j) {
            for (index_t i = o.dim(0).begin(); i < o.dim(0).end(); ++i) o(i, j) = 2 * in(i, j);
          }
          return 0;
        };
        func fa = func::make(twice, {{a, {point(x), point(y)}}}, {{a2, {x, y}}});
        func fb = func::make(twice, {{b, {point(x), point(y)}}}, {{b2, {x, y}}});
        const std::vector<buffer_expr_ptr> srcs =
            intermediates ? std::vector<buffer_expr_ptr>{a2, b2} : std::vector<buffer_expr_ptr>{a, b};
        func f = func::make_stack(srcs, {out, {x, y}}, dim, counting);
        f.loops({{y, 3}});
        build_options options;
        options.no_alias_buffers = !aliasing;
        pipeline p = build_pipeline(ctx, {a, b}, {out}, options);

        buffer<int, 2> ab({w, h}), bb({w, h});
        ab.allocate();
        bb.allocate();
        int n = 0;
        for_each_element([&](int* v) { *v = n++; }, ab);
        for_each_element([&](int* v) { *v = n++; }, bb);
        std::vector<index_t> extents = {w, h};
        extents.insert(extents.begin() + dim, 2);
        buffer<int, 3> ob(extents);
        ob.allocate();
        test::memory_counter mem;
        const raw_buffer* ins[] = {&ab, &bb};
        const raw_buffer* outs[] = {&ob};
        ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
        // Two sources, two chunks of rows, unless the sources write into the output.
        EXPECT_EQ(calls, intermediates && aliasing ? 0 : 4) << dim;
        EXPECT_EQ(mem.allocations, intermediates && !aliasing ? 2 : 0);
        for (index_t k = 0; k < 2; ++k) {
          for (index_t j = 0; j < h; ++j) {
            for (index_t i = 0; i < w; ++i) {
              std::vector<index_t> at = {i, j};
              at.insert(at.begin() + dim, k);
              const int expected = (k == 0 ? ab(i, j) : bb(i, j)) * (intermediates ? 2 : 1);
              ASSERT_EQ(ob(at), expected) << dim << intermediates << aliasing << " " << i << " " << j << " " << k;
            }
          }
        }
      }
    }
  }
}

// Sources that slice the output themselves (output_slice, written by the client): the output is
// indexed by the variables of the other dims, in order. The slice coordinate may be any
// expression (here of the output's bounds), and an output_crop of the source narrows the slice
// further. A padded copy into a slice pads that slice only, also when its source is a view.
TEST(copy, output_slice_takes_no_variable) {
  for (bool aliasing : {false, true}) {
    node_context ctx;
    auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
    auto a2 = buffer_expr::make(ctx, "a2", 1, sizeof(int));
    auto zero = buffer_expr::make_scalar<int>(ctx, "zero", 0);
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x");
    func f = func::make(
        [](const buffer<const int>& in, const buffer<int>& o) -> index_t {
          for (index_t i = o.dim(0).begin(); i < o.dim(0).end(); ++i) o(i) = in(i) + 1;
          return 0;
        },
        {{a, {point(x)}}}, {{a2, {x}}});
    // out(x, max of out's rows) = a2(x - 1) where x - 1 is in [0, 3], else 0; x < 5 only.
    func::input src{a2, {point(x - 1)}, {bounds(0, 3)}, {bounds(-100, 4), {}}, {expr(), buffer_max(out->sym(), 1)}};
    func copy = func::make_copy(src, {out, {x}}, {zero, {}});
    build_options options;
    options.no_alias_buffers = !aliasing;
    pipeline p = build_pipeline(ctx, {a}, {out}, options);

    buffer<int, 1> ab({4});
    ab.allocate();
    for (index_t i = 0; i < 4; ++i) ab(i) = static_cast<int>(10 * i);
    buffer<int, 2> ob({7, 3});
    ob.allocate();
    for_each_element([](int* v) { *v = untouched; }, ob);
    const raw_buffer* ins[] = {&ab};
    const raw_buffer* outs[] = {&ob};
    ASSERT_EQ(p.evaluate(ins, outs), 0);
    for (index_t j = 0; j < 3; ++j) {
      for (index_t i = 0; i < 7; ++i) {
        int expected = untouched;
        if (j == 2 && i <= 4) expected = i >= 1 && i <= 4 ? static_cast<int>(10 * (i - 1) + 1) : 0;
        ASSERT_EQ(ob(i, j), expected) << aliasing << " " << i << " " << j;
      }
    }
  }
}

}  // namespace
}  // namespace slinky
