// Reshapes: copies whose src coordinates are the digits (flat / Q) % E of the dst's flat index
// (docs/copies.md, "Reshapes"), with constant and symbolic extents, dense and padded rows, in
// loops and in chains. Outputs against a plain reference; the copy impl's calls counted against
// the runs of elements contiguous in both buffers.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "slinky/base/arithmetic.h"
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

// A buffer of these extents, dim 0 dense, each row padded by row_pad elements, each plane (dims
// 0 and 1) by plane_pad elements.
buffer<int> make_padded(const std::vector<index_t>& extents, index_t row_pad, index_t plane_pad = 0) {
  buffer<int> b(extents.size());
  index_t stride = sizeof(int);
  for (std::size_t d = 0; d < extents.size(); ++d) {
    b.dims[d] = dim(0, extents[d] - 1, stride);
    stride *= extents[d] + (d == 0 ? row_pad : 0);
    if (d == 1) stride += plane_pad * sizeof(int);
  }
  b.allocate();
  return b;
}

index_t product(const std::vector<index_t>& v) {
  index_t p = 1;
  for (index_t e : v) p *= e;
  return p;
}

// The digits of flat index i in the radix of extents.
std::vector<index_t> digits(index_t i, const std::vector<index_t>& extents) {
  std::vector<index_t> c(extents.size());
  for (std::size_t d = 0; d < extents.size(); ++d) {
    c[d] = i % extents[d];
    i /= extents[d];
  }
  return c;
}

int value_at(const buffer<int>& b, const std::vector<index_t>& c) {
  return *static_cast<const int*>(b.address_at(span<const index_t>(c.data(), c.size())));
}

// A run of elements contiguous in both src and dst: where it starts in each, and its length.
struct run {
  const char* src;
  const char* dst;
  index_t length;
};

// The runs of elements contiguous in both src and dst, for dst flat indices [begin, end).
std::vector<run> runs(const buffer<int>& src, const buffer<int>& dst, index_t begin, index_t end) {
  std::vector<run> result;
  std::vector<index_t> se(src.rank), de(dst.rank);
  for (std::size_t d = 0; d < src.rank; ++d) se[d] = src.dim(d).extent();
  for (std::size_t d = 0; d < dst.rank; ++d) de[d] = dst.dim(d).extent();
  for (index_t i = begin; i < end; ++i) {
    const std::vector<index_t> sc = digits(i, se), dc = digits(i, de);
    const char* ps = static_cast<const char*>(src.address_at(span<const index_t>(sc.data(), sc.size())));
    const char* pd = static_cast<const char*>(dst.address_at(span<const index_t>(dc.data(), dc.size())));
    if (!result.empty()) {
      run& last = result.back();
      if (ps == last.src + last.length * sizeof(int) && pd == last.dst + last.length * sizeof(int)) {
        ++last.length;
        continue;
      }
    }
    result.push_back({ps, pd, 1});
  }
  return result;
}

// The calls of a copy that copies consecutive runs of equal length, evenly spaced in both
// buffers, as one 2-D view: runs grouped greedily in order.
int evenly_spaced_groups(const std::vector<run>& r) {
  int groups = 0;
  for (std::size_t i = 0; i < r.size();) {
    std::size_t j = i + 1;
    if (j < r.size() && r[j].length == r[i].length) {
      const std::ptrdiff_t ds = r[j].src - r[i].src, dd = r[j].dst - r[i].dst;
      while (j < r.size() && r[j].length == r[i].length && r[j].src - r[j - 1].src == ds &&
             r[j].dst - r[j - 1].dst == dd) {
        ++j;
      }
    }
    ++groups;
    i = j;
  }
  return groups;
}

struct reshape_case {
  std::vector<index_t> src_extents;
  std::vector<index_t> dst_extents;
  bool symbolic = false;
  index_t row_pad = 0;       // Elements of padding after each src row.
  index_t loop_step = 0;     // Split the dst's outermost dim (0: no loop).
  bool top_modulus = false;  // The last digit written with % too, as the original's tests do.
  int expected_calls = -1;   // The calls of the copy impl, if known by hand.
  index_t plane_pad = 0;     // Elements of padding after each src plane.
};

// The flat index of the dst point x and the src coordinates it reads, written with % and / of
// the extents.
box_expr reshape_bounds(const std::vector<var>& x, const std::vector<expr>& src_e, const std::vector<expr>& dst_e,
                        bool top_modulus) {
  expr flat = x[0];
  expr p = dst_e[0];
  for (std::size_t j = 1; j < x.size(); ++j) {
    flat = flat + x[j] * p;
    p = p * dst_e[j];
  }
  box_expr b;
  expr q = 1;
  for (std::size_t k = 0; k < src_e.size(); ++k) {
    expr digit = k == 0 ? flat : flat / q;
    if (k + 1 < src_e.size() || top_modulus) digit = digit % src_e[k];
    b.push_back(point(digit));
    q = q * src_e[k];
  }
  return b;
}

std::vector<expr> extents_of(const buffer_expr_ptr& b, const std::vector<index_t>& constant, bool symbolic) {
  std::vector<expr> e;
  for (std::size_t d = 0; d < constant.size(); ++d) e.push_back(symbolic ? b->dim(d).extent() : expr(constant[d]));
  return e;
}

void test_reshape(const reshape_case& rc) {
  SCOPED_TRACE(testing::Message() << "symbolic " << rc.symbolic << " row_pad " << rc.row_pad << " loop " << rc.loop_step
                                  << " top_modulus " << rc.top_modulus);
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", rc.src_extents.size(), sizeof(int));
  auto out = buffer_expr::make(ctx, "out", rc.dst_extents.size(), sizeof(int));
  const char* names[] = {"x", "y", "z", "w"};
  std::vector<var> x;
  for (std::size_t d = 0; d < rc.dst_extents.size(); ++d) x.emplace_back(ctx, names[d]);
  counting_copy cc;
  box_expr b = reshape_bounds(x, extents_of(in, rc.src_extents, rc.symbolic),
                              extents_of(out, rc.dst_extents, rc.symbolic), rc.top_modulus);
  func f = func::make_copy({in, b}, {out, x}, cc.impl());
  if (rc.loop_step > 0) f.loops({{x.back(), rc.loop_step}});
  pipeline p = build_pipeline(ctx, {in}, {out});

  buffer<int> in_buf = make_padded(rc.src_extents, rc.row_pad, rc.plane_pad);
  buffer<int> out_buf = make_padded(rc.dst_extents, 0);
  const index_t n = product(rc.dst_extents);
  ASSERT_EQ(n, product(rc.src_extents));
  for (index_t i = 0; i < n; ++i) {
    const std::vector<index_t> c = digits(i, rc.src_extents);
    *static_cast<int*>(in_buf.address_at(span<const index_t>(c.data(), c.size()))) = static_cast<int>(i * 3 + 1);
  }
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs), 0);
  for (index_t i = 0; i < n; ++i) {
    ASSERT_EQ(value_at(out_buf, digits(i, rc.dst_extents)), static_cast<int>(i * 3 + 1)) << i;
  }
  // Within each iteration of the loop, one call per run contiguous in both buffers, or per group
  // of consecutive runs of equal length evenly spaced in both.
  const index_t outer = rc.dst_extents.back();
  const index_t step = rc.loop_step > 0 ? rc.loop_step : outer;
  const index_t row = n / outer;
  int expected = 0;
  for (index_t y = 0; y < outer; y += step) {
    expected += evenly_spaced_groups(runs(in_buf, out_buf, y * row, std::min(y + step, outer) * row));
  }
  EXPECT_EQ(cc.calls, expected);
  if (rc.expected_calls >= 0) {
    EXPECT_EQ(cc.calls, rc.expected_calls);
  }
}

class reshape : public testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(symbolic, reshape, testing::Bool());

TEST_P(reshape, dense_3d_to_2d_is_one_call) {
  for (bool top_modulus : {false, true}) {
    test_reshape({{8, 5, 3}, {20, 6}, GetParam(), 0, 0, top_modulus});
  }
}

TEST_P(reshape, dense_2d_to_3d_is_one_call) {
  for (bool top_modulus : {false, true}) {
    test_reshape({{20, 6}, {8, 5, 3}, GetParam(), 0, 0, top_modulus});
  }
}

TEST_P(reshape, the_originals_3d_to_3d) { test_reshape({{8, 5, 3}, {5, 3, 8}, GetParam(), 0, 0, true}); }

TEST_P(reshape, padded_src_rows_one_call_per_run) {
  for (bool top_modulus : {false, true}) {
    test_reshape({{8, 5, 3}, {20, 6}, GetParam(), 3, 0, top_modulus});
    test_reshape({{20, 6}, {8, 5, 3}, GetParam(), 1, 0, top_modulus});
    test_reshape({{7, 3, 5, 2}, {15, 14}, GetParam(), 2, 0, top_modulus});
  }
}

// Runs of equal length evenly spaced in both buffers (src rows padded, dst dense) are one call
// on a 2-D view: 15 rows of 8 in one call (one call per row piece otherwise); with planes padded
// too, one call per plane; in a loop over dst rows of 20, a head, a body of whole rows and a tail
// per iteration, two calls each.
TEST_P(reshape, evenly_spaced_runs_are_one_2d_call) {
  for (bool top_modulus : {false, true}) {
    test_reshape({{8, 5, 3}, {20, 6}, GetParam(), 3, 0, top_modulus, 1});
    test_reshape({{8, 5, 3}, {20, 6}, GetParam(), 3, 0, top_modulus, 3, 7});
    test_reshape({{8, 5, 3}, {20, 6}, GetParam(), 3, 1, top_modulus, 12});
    test_reshape({{7, 3, 5, 2}, {15, 14}, GetParam(), 2, 0, top_modulus, 1});
  }
}

// The impl sees the rows as one 2-D view: runs of 8 elements, 15 of them, at the padded rows'
// stride in src and dense in dst.
TEST(reshape_views, rows_as_a_2d_view) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 3, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  std::vector<std::vector<dim>> src_dims, dst_dims;
  box_expr b = reshape_bounds({x, y}, extents_of(in, {8, 5, 3}, true), extents_of(out, {20, 6}, true), false);
  func f = func::make_copy({in, b}, {out, {x, y}}, [&](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
    src_dims.emplace_back(s.dims, s.dims + s.rank);
    dst_dims.emplace_back(d.dims, d.dims + d.rank);
    copy(s, d, p);
  });
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int> in_buf = make_padded({8, 5, 3}, 3);
  buffer<int> out_buf = make_padded({20, 6}, 0);
  for (index_t i = 0; i < 120; ++i) {
    const std::vector<index_t> c = digits(i, {8, 5, 3});
    *static_cast<int*>(in_buf.address_at(span<const index_t>(c.data(), c.size()))) = static_cast<int>(i);
  }
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs), 0);
  for (index_t i = 0; i < 120; ++i) ASSERT_EQ(value_at(out_buf, digits(i, {20, 6})), static_cast<int>(i)) << i;
  ASSERT_EQ(src_dims.size(), 1);
  ASSERT_EQ(src_dims[0].size(), 2);
  ASSERT_EQ(dst_dims[0].size(), 2);
  EXPECT_EQ(src_dims[0][0].extent(), 8);
  EXPECT_EQ(src_dims[0][0].stride(), sizeof(int));
  EXPECT_EQ(src_dims[0][1].extent(), 15);
  EXPECT_EQ(src_dims[0][1].stride(), 11 * sizeof(int));
  EXPECT_EQ(dst_dims[0][0].extent(), 8);
  EXPECT_EQ(dst_dims[0][0].stride(), sizeof(int));
  EXPECT_EQ(dst_dims[0][1].extent(), 15);
  EXPECT_EQ(dst_dims[0][1].stride(), 8 * sizeof(int));
}

TEST_P(reshape, in_a_loop_over_dst_rows) {
  for (index_t step : {1, 2, 4}) {
    test_reshape({{8, 5, 3}, {20, 6}, GetParam(), 0, step});
    test_reshape({{8, 5, 3}, {20, 6}, GetParam(), 3, step});
    test_reshape({{20, 6}, {8, 5, 3}, GetParam(), 2, step});
  }
}

TEST_P(reshape, other_radices) {
  test_reshape({{3, 7, 11}, {33, 7}, GetParam()});
  test_reshape({{33, 7}, {3, 7, 11}, GetParam(), 5});
  test_reshape({{6, 10}, {4, 15}, GetParam(), 1});
  test_reshape({{60}, {4, 3, 5}, GetParam()});
}

// out = in + 1 and out = in * 2, elementwise over any rank.
index_t add_one(const buffer<const int>& in, const buffer<int>& out) {
  for_each_element([](int* o, const int* i) { *o = *i + 1; }, out, in);
  return 0;
}

index_t twice(const buffer<const int>& in, const buffer<int>& out) {
  for_each_element([](int* o, const int* i) { *o = *i * 2; }, out, in);
  return 0;
}

// in (8 x 5 x 3) -> +1 -> reshape to 20 x 6 -> *2 -> out, at the root or in a loop over out's
// rows: at the root, no call of the copy, with constant or symbolic extents (its destination is a
// view of its source, see reshape_view below); in the loop, where the source is a ring buffer, one
// call per iteration and ring buffer wrap at most. The results exact.
TEST_P(reshape, in_the_middle_of_a_chain) {
  const bool symbolic = GetParam();
  const std::vector<index_t> se = {8, 5, 3}, de = {20, 6};
  for (index_t step : {0, 1, 2, 3}) {
    SCOPED_TRACE(step);
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 3, sizeof(int));
    auto a = buffer_expr::make(ctx, "a", 3, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
    counting_copy cc;
    func f1 = func::make(add_one, {{in, {point(x), point(y), point(z)}}}, {{a, {x, y, z}}});
    func r =
        func::make_copy({a, reshape_bounds({x, y}, extents_of(in, se, symbolic), extents_of(out, de, symbolic), false)},
                        {b, {x, y}}, cc.impl());
    func f2 = func::make(twice, {{b, {point(x), point(y)}}}, {{out, {x, y}}});
    if (step > 0) f2.loops({{y, step}});
    pipeline p = build_pipeline(ctx, {in}, {out});

    buffer<int> in_buf = make_padded(se, 0);
    buffer<int> out_buf = make_padded(de, 0);
    for (index_t i = 0; i < 120; ++i) {
      const std::vector<index_t> c = digits(i, se);
      *static_cast<int*>(in_buf.address_at(span<const index_t>(c.data(), c.size()))) = static_cast<int>(i * 5 - 7);
    }
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    memory_counter mem;
    ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
    for (index_t i = 0; i < 120; ++i) {
      ASSERT_EQ(value_at(out_buf, digits(i, de)), static_cast<int>((i * 5 - 7 + 1) * 2)) << i;
    }
    // a slides along z in the loop (a ring buffer of planes of 40 elements): a run may end
    // where a plane ends, where the ring buffer may wrap, as well as where an iteration ends.
    const index_t rows = step > 0 ? step : 6;
    int iterations = 0, plane_ends = 0;
    for (index_t y = 0; y < 6; y += rows) {
      ++iterations;
      const index_t f0 = y * 20, f1 = std::min<index_t>(y + rows, 6) * 20 - 1;
      plane_ends += f1 / 40 - f0 / 40;
    }
    if (step == 0) {
      EXPECT_EQ(cc.calls, 0);
    } else {
      EXPECT_GE(cc.calls, iterations);
      EXPECT_LE(cc.calls, iterations + plane_ends);
    }
  }
}

// The chain in -> +1 -> a -> reshape -> b -> *2 -> out, with a and b intermediates: where a is
// laid out by the builder and b's view of it is proven exact, b is a view of a (docs/copies.md,
// "From the source"): no call of the copy, no allocation of b, a allocated dense (one allocation
// of exactly its elements, whatever the stride alignment). With symbolic extents (the extents
// of in and out) the radices are not proven positive: the view is made where they are at run time
// (below, reshape_view_params for other radices). The results against a plain reference.
struct chain_case {
  std::vector<index_t> src_extents;
  std::vector<index_t> dst_extents;
  bool symbolic = false;
  index_t step = 0;            // A loop over out's last dim (0: none).
  bool producer_root = false;  // a computed at the root (else inside the loop, as a ring buffer).
  bool aliasing = true;
  bool top_modulus = false;
  index_t padded_stride = 0;  // Declared padding of a's rows, in elements (0: none declared).
  std::size_t stride_alignment = 1;
};

struct chain_counts {
  int calls = 0;
  int allocations = 0;
  std::vector<index_t> sizes;
};

chain_counts run_chain(const chain_case& cc_) {
  SCOPED_TRACE(testing::Message() << "symbolic " << cc_.symbolic << " step " << cc_.step << " root "
                                  << cc_.producer_root << " aliasing " << cc_.aliasing);
  const std::vector<index_t>& se = cc_.src_extents;
  const std::vector<index_t>& de = cc_.dst_extents;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", se.size(), sizeof(int));
  auto a = buffer_expr::make(ctx, "a", se.size(), sizeof(int));
  auto b = buffer_expr::make(ctx, "b", de.size(), sizeof(int));
  auto out = buffer_expr::make(ctx, "out", de.size(), sizeof(int));
  if (cc_.padded_stride > 0) {
    a->dim(0).stride = static_cast<index_t>(sizeof(int));
    index_t stride = (se[0] + cc_.padded_stride) * sizeof(int);
    for (std::size_t d = 1; d < se.size(); ++d) {
      a->dim(d).stride = stride;
      stride *= se[d];
    }
  }
  const char* names[] = {"x", "y", "z", "w"};
  std::vector<var> xs, xd;
  for (std::size_t d = 0; d < se.size(); ++d) xs.emplace_back(ctx, names[d]);
  for (std::size_t d = 0; d < de.size(); ++d) xd.emplace_back(ctx, names[d]);
  box_expr points_s, points_d;
  for (var v : xs) points_s.push_back(point(v));
  for (var v : xd) points_d.push_back(point(v));
  counting_copy cc;
  func f1 = func::make(add_one, {{in, points_s}}, {{a, xs}});
  func r = func::make_copy(
      {a, reshape_bounds(xd, extents_of(in, se, cc_.symbolic), extents_of(out, de, cc_.symbolic), cc_.top_modulus)},
      {b, xd}, cc.impl());
  func f2 = func::make(twice, {{b, points_d}}, {{out, xd}});
  if (cc_.step > 0) f2.loops({{xd.back(), cc_.step}});
  if (cc_.producer_root) f1.compute_root();
  build_options options;
  options.no_alias_buffers = !cc_.aliasing;
  pipeline p = build_pipeline(ctx, {in}, {out}, options);

  buffer<int> in_buf = make_padded(se, 0);
  buffer<int> out_buf = make_padded(de, 0);
  const index_t n = product(se);
  EXPECT_EQ(n, product(de));
  for (index_t i = 0; i < n; ++i) {
    const std::vector<index_t> c = digits(i, se);
    *static_cast<int*>(in_buf.address_at(span<const index_t>(c.data(), c.size()))) = static_cast<int>(i * 5 - 7);
  }
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  memory_counter mem;
  mem.config.stride_alignment = cc_.stride_alignment;
  EXPECT_EQ(p.evaluate(ins, outs, mem.context), 0);
  for (index_t i = 0; i < n; ++i) {
    EXPECT_EQ(value_at(out_buf, digits(i, de)), static_cast<int>((i * 5 - 7 + 1) * 2)) << i;
  }
  chain_counts result;
  result.calls = cc.calls;
  result.allocations = mem.allocations;
  result.sizes = mem.sizes;
  return result;
}

class reshape_view : public testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(symbolic, reshape_view, testing::Bool());

// At the root: b is a view of a (no call, a's one allocation of 120 ints); without aliasing, one
// call and two allocations. 3-D -> 2-D and the inverse, and another radix.
TEST_P(reshape_view, at_the_root_no_copy) {
  const bool symbolic = GetParam();
  const std::vector<std::pair<std::vector<index_t>, std::vector<index_t>>> shapes = {
      {{8, 5, 3}, {20, 6}}, {{20, 6}, {8, 5, 3}}, {{3, 7, 11}, {33, 7}}, {{7, 3, 5, 2}, {15, 14}}};
  for (const auto& sd : shapes) {
    const index_t n = product(sd.first);
    const chain_counts on = run_chain({sd.first, sd.second, symbolic});
    EXPECT_EQ(on.calls, 0);
    EXPECT_EQ(on.allocations, 1);
    EXPECT_EQ(on.sizes, std::vector<index_t>{n * static_cast<index_t>(sizeof(int))});
    chain_case off{sd.first, sd.second, symbolic};
    off.aliasing = false;
    const chain_counts c = run_chain(off);
    EXPECT_EQ(c.calls, 1);
    EXPECT_EQ(c.allocations, 2);
  }
}

// The view is of a dense allocation even where the evaluator rounds strides up (a's allocation
// takes the view's strides): still no copy, and exact results.
TEST(reshape_view_constant, dense_whatever_the_stride_alignment) {
  chain_case c{{8, 5, 3}, {20, 6}, false};
  c.stride_alignment = 64;
  const chain_counts r = run_chain(c);
  EXPECT_EQ(r.calls, 0);
  EXPECT_EQ(r.allocations, 1);
  EXPECT_EQ(r.sizes, std::vector<index_t>{120 * static_cast<index_t>(sizeof(int))});
}

// In a loop over out's rows, a computed at the root: b, stored in the loop, is each iteration's
// view of a (no call, a's allocation only). Without aliasing, one call per iteration and an
// allocation of b.
TEST_P(reshape_view, in_a_loop_over_the_output_rows) {
  const bool symbolic = GetParam();
  for (index_t step : {1, 2, 4}) {
    for (bool inverse : {false, true}) {
      const std::vector<index_t> se = inverse ? std::vector<index_t>{20, 6} : std::vector<index_t>{8, 5, 3};
      const std::vector<index_t> de = inverse ? std::vector<index_t>{8, 5, 3} : std::vector<index_t>{20, 6};
      const index_t iterations = (de.back() + step - 1) / step;
      chain_case c{se, de, symbolic, step, true};
      const chain_counts on = run_chain(c);
      EXPECT_EQ(on.calls, 0);
      EXPECT_EQ(on.allocations, 1);
      c.aliasing = false;
      const chain_counts off = run_chain(c);
      EXPECT_EQ(off.calls, iterations);
      EXPECT_EQ(off.allocations, 2);
    }
  }
}

// Where a view is not proven exact, the copy stays: a computed inside the loop (a ring buffer,
// whose rows a view addressing it by the flat index would cross), a's rows padded by a declared
// stride (not in flat order), the last digit written with % too (the digits wrap around at the
// size of a, which is not proven to hold out's flat range).
TEST_P(reshape_view, copy_kept_where_not_dense) {
  const bool symbolic = GetParam();
  {
    chain_case c{{8, 5, 3}, {20, 6}, symbolic, 2, false};
    const chain_counts r = run_chain(c);
    EXPECT_GE(r.calls, 3);
  }
  {
    chain_case c{{8, 5, 3}, {20, 6}, symbolic};
    c.padded_stride = 3;
    const chain_counts r = run_chain(c);
    EXPECT_EQ(r.calls, 1);
    EXPECT_EQ(r.allocations, 2);
  }
  {
    chain_case c{{8, 5, 3}, {20, 6}, symbolic};
    c.top_modulus = true;
    const chain_counts r = run_chain(c);
    EXPECT_EQ(r.calls, 1);
    EXPECT_EQ(r.allocations, 2);
  }
}

// A src coordinate that is not a digit (a batch dim, y here): not a flat reshape, the copy
// stays (one call per row); the results exact.
TEST(reshape_view_constant, batch_dim_keeps_the_copy) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 3, sizeof(int));
  auto a = buffer_expr::make(ctx, "a", 3, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
  counting_copy cc;
  func f1 = func::make(add_one, {{in, {point(x), point(y), point(z)}}}, {{a, {x, y, z}}});
  func r = func::make_copy({a, {point(x % 3), point(x / 3), point(y)}}, {b, {x, y}}, cc.impl());
  func f2 = func::make(twice, {{b, {point(x), point(y)}}}, {{out, {x, y}}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int> in_buf = make_padded({3, 4, 5}, 0);
  buffer<int> out_buf = make_padded({12, 5}, 0);
  for (index_t i = 0; i < 60; ++i) {
    const std::vector<index_t> c = digits(i, {3, 4, 5});
    *static_cast<int*>(in_buf.address_at(span<const index_t>(c.data(), c.size()))) = static_cast<int>(i * 3);
  }
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(ins, outs), 0);
  for (index_t i = 0; i < 60; ++i)
    ASSERT_EQ(value_at(out_buf, digits(i, {12, 5})), static_cast<int>((i * 3 + 1) * 2)) << i;
  EXPECT_GE(cc.calls, 1);
}

// The chain in -> +1 -> a -> reshape -> b -> *2 -> out with the radices as scalar arguments of
// the pipeline: src coordinate k of the point x of b is the digit (F / Q_k) % E_k of its flat
// index F = x_0 + x_1 * W_0 + x_2 * W_0 * W_1 + ..., with Q_k = E_0 * ... * E_(k-1) and the
// last digit without %, E and W given at run time. Radices may be anything at run time (0 or
// negative: a legal if meaningless pipeline), so b is a view of a only where each radix but the
// last is at least 1 (checked once per evaluation, docs/copies.md, "From the source"); the copy
// runs otherwise. The results are checked against a plain model of the copy (Euclidean division,
// x / 0 = x % 0 = 0), whatever the radices.
struct param_case {
  std::vector<index_t> dst_extents;  // out's (and b's) extents.
  std::vector<index_t> radices;      // E_0, ..., E_(rank(a) - 2): the last digit has no radix.
  std::vector<index_t> rows;         // W_0, ..., W_(rank(b) - 2).
  std::size_t src_rank = 3;
  index_t step = 0;            // A loop over out's last dim (0: none).
  bool producer_root = false;  // a computed at the root (else inside the loop, as a ring buffer).
  bool aliasing = true;
  bool top_modulus = false;   // The last digit with % E_last too (E_last = 1 + the largest digit).
  index_t padded_stride = 0;  // Declared padding of a's rows, in elements (0: none declared).
};

struct param_result {
  index_t status = -1;
  int calls = 0;
  int allocations = 0;
  std::vector<index_t> sizes;
};

// The flat index of out's point c in the radix of rows.
index_t param_flat(const std::vector<index_t>& c, const std::vector<index_t>& rows) {
  index_t f = c[0], p = 1;
  for (std::size_t j = 1; j < c.size(); ++j) {
    p *= rows[j - 1];
    f += c[j] * p;
  }
  return f;
}

// The src coordinates of flat index f: the digits in the radix of radices, as the copy computes them.
std::vector<index_t> param_digits(index_t f, const param_case& pc) {
  std::vector<index_t> d(pc.src_rank);
  index_t q = 1;
  for (std::size_t k = 0; k < pc.src_rank; ++k) {
    const index_t digit = euclidean_div(f, q);
    if (k + 1 < pc.src_rank) {
      d[k] = euclidean_mod(digit, pc.radices[k]);
      q *= pc.radices[k];
    } else {
      d[k] = digit;
    }
  }
  return d;
}

param_result run_param_chain(const param_case& pc) {
  SCOPED_TRACE(testing::Message() << "step " << pc.step << " root " << pc.producer_root << " aliasing " << pc.aliasing
                                  << " radix " << pc.radices[0]);
  const std::size_t rs = pc.src_rank, rd = pc.dst_extents.size();
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", rs, sizeof(int));
  auto a = buffer_expr::make(ctx, "a", rs, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", rd, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", rd, sizeof(int));
  const char* names[] = {"x", "y", "z", "w"};
  std::vector<var> xs, xd, args;
  for (std::size_t d = 0; d < rs; ++d) xs.emplace_back(ctx, names[d]);
  for (std::size_t d = 0; d < rd; ++d) xd.emplace_back(ctx, names[d]);
  std::vector<expr> radix, row;
  for (std::size_t k = 0; k + 1 < rs; ++k) {
    std::string name = "E";
    name += std::to_string(k);
    args.emplace_back(ctx, name);
    radix.push_back(args.back());
  }
  for (std::size_t j = 0; j + 1 < rd; ++j) {
    std::string name = "W";
    name += std::to_string(j);
    args.emplace_back(ctx, name);
    row.push_back(args.back());
  }
  // The top digit's radix, when written with % too: 1 + the largest top digit.
  var top(ctx, "T");
  if (pc.top_modulus) args.push_back(top);
  if (pc.padded_stride > 0) {
    // Rows of a padded, at strides the radices give (dense otherwise).
    a->dim(0).stride = static_cast<index_t>(sizeof(int));
    expr stride = (radix[0] + pc.padded_stride) * static_cast<index_t>(sizeof(int));
    for (std::size_t d = 1; d < rs; ++d) {
      a->dim(d).stride = stride;
      if (d < radix.size()) stride = stride * radix[d];
    }
  }
  expr flat = xd[0], p = 1;
  for (std::size_t j = 1; j < rd; ++j) {
    p = p * row[j - 1];
    flat = flat + xd[j] * p;
  }
  box_expr src_x, points_s, points_d;
  expr q = 1;
  for (std::size_t k = 0; k < rs; ++k) {
    expr digit = k == 0 ? flat : flat / q;
    if (k + 1 < rs) {
      digit = digit % radix[k];
      q = q * radix[k];
    } else if (pc.top_modulus) {
      digit = digit % top;
    }
    src_x.push_back(point(digit));
  }
  for (var v : xs) points_s.push_back(point(v));
  for (var v : xd) points_d.push_back(point(v));
  counting_copy cc;
  func f1 = func::make(add_one, {{in, points_s}}, {{a, xs}});
  func r = func::make_copy({a, src_x}, {b, xd}, cc.impl());
  func f2 = func::make(twice, {{b, points_d}}, {{out, xd}});
  if (pc.step > 0) f2.loops({{xd.back(), pc.step}});
  if (pc.producer_root) f1.compute_root();
  build_options options;
  options.no_alias_buffers = !pc.aliasing;
  pipeline pl = build_pipeline(ctx, args, {in}, {out}, {}, options);

  // The digits out reads, and in over a range covering them (and the bounds the pipeline may
  // require beyond them: a digit % E may be anything in [0, max(|E|, 1) - 1]).
  const index_t n = product(pc.dst_extents);
  std::vector<std::vector<index_t>> read(n);
  std::vector<index_t> lo(rs, 0), hi(rs, 0);
  index_t top_radix = 1;
  for (index_t i = 0; i < n; ++i) {
    read[i] = param_digits(param_flat(digits(i, pc.dst_extents), pc.rows), pc);
    top_radix = std::max(top_radix, read[i].back() + 1);
  }
  for (std::size_t k = 0; k < rs; ++k) {
    if (k + 1 < rs) hi[k] = std::max<index_t>(std::abs(pc.radices[k]), 1) - 1;
    for (const std::vector<index_t>& c : read) {
      lo[k] = std::min(lo[k], c[k]);
      hi[k] = std::max(hi[k], c[k]);
    }
  }
  buffer<int> in_buf(rs);
  for (std::size_t k = 0; k < rs; ++k) in_buf.dims[k] = dim(lo[k], hi[k]);
  in_buf.allocate();
  std::vector<index_t> ext(rs);
  for (std::size_t k = 0; k < rs; ++k) ext[k] = hi[k] - lo[k] + 1;
  for (index_t i = 0; i < product(ext); ++i) {
    std::vector<index_t> c = digits(i, ext);
    index_t v = 3;
    for (std::size_t k = 0; k < rs; ++k) {
      c[k] += lo[k];
      v = v * 131 + c[k];
    }
    *static_cast<int*>(in_buf.address_at(span<const index_t>(c.data(), c.size()))) = static_cast<int>(v);
  }
  buffer<int> out_buf = make_padded(pc.dst_extents, 0);
  std::vector<index_t> scalars;
  for (std::size_t k = 0; k + 1 < rs; ++k) scalars.push_back(pc.radices[k]);
  for (std::size_t j = 0; j + 1 < rd; ++j) scalars.push_back(pc.rows[j]);
  if (pc.top_modulus) scalars.push_back(top_radix);
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  memory_counter mem;
  param_result result;
  result.status = pl.evaluate(scalars, ins, outs, mem.context);
  if (result.status != 0) return result;
  for (index_t i = 0; i < n; ++i) {
    EXPECT_EQ(value_at(out_buf, digits(i, pc.dst_extents)), (value_at(in_buf, read[i]) + 1) * 2) << i;
  }
  result.calls = cc.calls;
  result.allocations = mem.allocations;
  result.sizes = mem.sizes;
  return result;
}

// 8 x 5 x 3 read as 20 x 6, and the inverse, with the radices and row lengths given at run time:
// b is a view of a, a allocated once with exactly its 120 elements, no call of the copy; without
// aliasing, one call and two allocations.
TEST(reshape_view_params, at_the_root_no_copy) {
  for (bool inverse : {false, true}) {
    param_case pc = inverse ? param_case{{8, 5, 3}, {20}, {8, 5}, 2} : param_case{{20, 6}, {8, 5}, {20}, 3};
    const param_result on = run_param_chain(pc);
    ASSERT_EQ(on.status, 0);
    EXPECT_EQ(on.calls, 0);
    EXPECT_EQ(on.allocations, 1);
    EXPECT_EQ(on.sizes, std::vector<index_t>{120 * static_cast<index_t>(sizeof(int))});
    pc.aliasing = false;
    const param_result off = run_param_chain(pc);
    ASSERT_EQ(off.status, 0);
    EXPECT_EQ(off.calls, 1);
    EXPECT_EQ(off.allocations, 2);
  }
}

// In a loop over out's rows, a computed at the root: b is each iteration's view of a (no call, a's
// allocation only). Without aliasing, a call per iteration and b allocated too.
TEST(reshape_view_params, in_a_loop_over_the_output_rows) {
  for (index_t step : {1, 2, 4}) {
    for (bool inverse : {false, true}) {
      param_case pc = inverse ? param_case{{8, 5, 3}, {20}, {8, 5}, 2} : param_case{{20, 6}, {8, 5}, {20}, 3};
      pc.step = step;
      pc.producer_root = true;
      const index_t iterations = (pc.dst_extents.back() + step - 1) / step;
      const param_result on = run_param_chain(pc);
      ASSERT_EQ(on.status, 0);
      EXPECT_EQ(on.calls, 0);
      EXPECT_EQ(on.allocations, 1);
      pc.aliasing = false;
      const param_result off = run_param_chain(pc);
      ASSERT_EQ(off.status, 0);
      EXPECT_EQ(off.calls, iterations);
      EXPECT_EQ(off.allocations, 2);
    }
  }
}

// Radices for which the view would not be exact (0: every higher digit is 0; negative: the digits
// are no mixed radix number; at the root and in the loop): the pipeline runs the copy, as it does
// without aliasing (same calls, same allocations), and the results are the copy's.
TEST(reshape_view_params, radices_below_one_run_the_copy) {
  for (index_t e0 : {0, -3, -8}) {
    for (index_t step : {0, 2}) {
      for (bool inverse : {false, true}) {
        param_case pc = inverse ? param_case{{8, 5, 3}, {e0}, {8, 5}, 2} : param_case{{20, 6}, {e0, 5}, {20}, 3};
        pc.step = step;
        pc.producer_root = step > 0;
        const param_result on = run_param_chain(pc);
        pc.aliasing = false;
        const param_result off = run_param_chain(pc);
        ASSERT_EQ(on.status, 0);
        ASSERT_EQ(off.status, 0);
        EXPECT_GE(on.calls, 1);
        EXPECT_EQ(on.calls, off.calls);
        EXPECT_EQ(on.allocations, off.allocations);
      }
    }
    // A radix 0 or less above the first.
    param_case pc{{20, 6}, {8, e0}, {20}, 3};
    const param_result on = run_param_chain(pc);
    pc.aliasing = false;
    const param_result off = run_param_chain(pc);
    ASSERT_EQ(on.status, 0);
    ASSERT_EQ(off.status, 0);
    EXPECT_EQ(on.calls, off.calls);
    EXPECT_EQ(on.allocations, off.allocations);
  }
}

// Rows of b read at a row length of 0 (every row reads the first 20 elements) or other than the
// radices: still a view, with the rows' stride W_0 elements.
TEST(reshape_view_params, any_row_length) {
  for (index_t w : {0, 7, 20, 33}) {
    param_case pc{{20, 6}, {8, 5}, {w}, 3};
    const param_result on = run_param_chain(pc);
    ASSERT_EQ(on.status, 0);
    EXPECT_EQ(on.calls, 0);
    EXPECT_EQ(on.allocations, 1);
  }
}

// Where b is not a view exact for every value of the radices, the copy stays: a computed inside
// the loop (a ring buffer), a's rows padded by a declared stride, the last digit with % too.
TEST(reshape_view_params, copy_kept_where_not_dense) {
  {
    param_case pc{{20, 6}, {8, 5}, {20}, 3, 2, false};
    const param_result r = run_param_chain(pc);
    ASSERT_EQ(r.status, 0);
    EXPECT_GE(r.calls, 3);
  }
  {
    param_case pc{{20, 6}, {8, 5}, {20}, 3};
    pc.padded_stride = 3;
    const param_result r = run_param_chain(pc);
    ASSERT_EQ(r.status, 0);
    EXPECT_EQ(r.calls, 1);
    EXPECT_EQ(r.allocations, 2);
  }
  {
    param_case pc{{20, 6}, {8, 5}, {20}, 3};
    pc.top_modulus = true;
    const param_result r = run_param_chain(pc);
    ASSERT_EQ(r.status, 0);
    EXPECT_EQ(r.calls, 1);
    EXPECT_EQ(r.allocations, 2);
  }
}

// An extent 0 at run time, the radices the extents of in and out: out empty, nothing runs (no call,
// no allocation), as without aliasing; in empty in a dim whose radix it gives while out is not, the
// pipeline fails its bounds check (in does not hold the digit 0 that out reads), with and without
// aliasing.
TEST(reshape_view_symbolic, empty_extents) {
  struct shapes {
    std::vector<index_t> in, out;
    bool runs;
  };
  const shapes cases[] = {{{8, 5, 3}, {20, 0}, true},
                          {{0, 5, 3}, {0, 6}, true},
                          {{8, 0, 3}, {20, 0}, true},
                          {{0, 5, 3}, {20, 6}, false},
                          {{8, 0, 3}, {20, 6}, false}};
  for (bool aliasing : {true, false}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 3, sizeof(int));
    auto a = buffer_expr::make(ctx, "a", 3, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
    counting_copy cc;
    func f1 = func::make(add_one, {{in, {point(x), point(y), point(z)}}}, {{a, {x, y, z}}});
    func r = func::make_copy(
        {a, reshape_bounds({x, y}, extents_of(in, {8, 5, 3}, true), extents_of(out, {20, 6}, true), false)},
        {b, {x, y}}, cc.impl());
    func f2 = func::make(twice, {{b, {point(x), point(y)}}}, {{out, {x, y}}});
    build_options options;
    options.no_alias_buffers = !aliasing;
    pipeline p = build_pipeline(ctx, {in}, {out}, options);
    for (const shapes& c : cases) {
      SCOPED_TRACE(testing::Message() << "aliasing " << aliasing << " in " << c.in[0] << "x" << c.in[1] << " out "
                                      << c.out[0] << "x" << c.out[1]);
      buffer<int> in_buf = make_padded(c.in, 0);
      buffer<int> out_buf = make_padded(c.out, 0);
      const raw_buffer* ins[] = {&in_buf};
      const raw_buffer* outs[] = {&out_buf};
      memory_counter mem;
      cc.calls = 0;
      const index_t status = p.evaluate(ins, outs, mem.context);
      EXPECT_EQ(status == 0, c.runs);
      EXPECT_EQ(mem.allocations, 0);
      EXPECT_EQ(cc.calls, 0);
    }
  }
}

// in (E0 x E1, extents known at run time) flattened by a copy into mid (mid(f) = in(f % E0,
// f / E0)), read by two outputs. With two outputs, mid's region is the hull of two regions that
// may each be empty, whose bounds are selects with infinite sides; the top digit f / E0 must
// still be bounded by the digits of mid's region, so an input exactly as large as what is read
// passes the bounds check, and mid is allocated at exactly the outputs' region.
TEST(reshape_run_time_radix, two_outputs_require_only_the_rows_read) {
  for (index_t e0 : {8, 1, 3}) {
    for (index_t e1 : {5, 1, 7}) {
      SCOPED_TRACE(testing::Message() << "in " << e0 << " x " << e1);
      node_context ctx;
      auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
      auto mid = buffer_expr::make(ctx, "mid", 1, sizeof(int));
      auto out1 = buffer_expr::make(ctx, "out1", 1, sizeof(int));
      auto out2 = buffer_expr::make(ctx, "out2", 1, sizeof(int));
      var f(ctx, "f");
      const expr q = in->dim(0).extent();
      counting_copy cc;
      func c = func::make_copy({in, {point(f % q), point(f / q)}}, {mid, {f}}, cc.impl());
      func g1 = func::make(add_one, {{mid, {point(f)}}}, {{out1, {f}}});
      func g2 = func::make(twice, {{mid, {point(f)}}}, {{out2, {f}}});
      pipeline p = build_pipeline(ctx, {in}, {out1, out2});

      const index_t n = e0 * e1;
      buffer<int> in_buf = make_padded({e0, e1}, 0);
      for (index_t i = 0; i < n; ++i) {
        const std::vector<index_t> d = digits(i, {e0, e1});
        *static_cast<int*>(in_buf.address_at(span<const index_t>(d.data(), d.size()))) = static_cast<int>(i * 3 + 1);
      }
      buffer<int> o1 = make_padded({n}, 0), o2 = make_padded({n}, 0);
      memory_counter mem;
      const raw_buffer* ins[] = {&in_buf};
      const raw_buffer* outs[] = {&o1, &o2};
      ASSERT_EQ(p.evaluate(ins, outs, mem.context), 0);
      for (index_t i = 0; i < n; ++i) {
        ASSERT_EQ(value_at(o1, {i}), static_cast<int>(i * 3 + 2)) << i;
        ASSERT_EQ(value_at(o2, {i}), static_cast<int>(i * 6 + 2)) << i;
      }
      // mid is allocated with exactly the outputs' n elements, and filled by one call (in is
      // dense: its elements are one run in both buffers).
      EXPECT_EQ(mem.allocations, 1);
      EXPECT_EQ(mem.sizes, std::vector<index_t>{n * static_cast<index_t>(sizeof(int))});
      EXPECT_EQ(cc.calls, 1);
    }
  }
}

}  // namespace
}  // namespace slinky
