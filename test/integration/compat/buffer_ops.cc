// Compatibility tests for the free functions of slinky/runtime/buffer.h: copy, pad,
// for_each_element, for_each_contiguous_slice and the dimension optimizers (docs/api.md section 3;
// checklist item 6 of README.md).
#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>
#include <vector>

#include "slinky/runtime/buffer.h"

namespace {

using slinky::buffer;
using slinky::dim;
using slinky::index_t;
using slinky::raw_buffer;

template <typename T, std::size_t N>
void fill_iota(buffer<T, N>& b, T start) {
  T v = start;
  slinky::for_each_element([&](T* p) { *p = v++; }, b);
}

}  // namespace

TEST(compat_copy, copy_and_pad) {
  buffer<int, 2> src({4, 3});
  src.translate(2, 1);
  src.allocate();
  for (index_t y = 1; y < 4; ++y) {
    for (index_t x = 2; x < 6; ++x) src(x, y) = x + 10 * y;
  }
  buffer<int, 2> dst({8, 5});
  dst.allocate();
  slinky::copy(src, dst, slinky::scalar<int>(-1));
  for (index_t y = 0; y < 5; ++y) {
    for (index_t x = 0; x < 8; ++x) {
      EXPECT_EQ(dst(x, y), src.contains(x, y) ? x + 10 * y : -1) << x << " " << y;
    }
  }
  // Without padding, every element of dst is inside src.
  buffer<int, 2> inner({2, 2});
  inner.translate(3, 2);
  inner.allocate();
  slinky::copy(src, inner);
  EXPECT_EQ(inner(4, 3), 34);

  // pad writes only the part of dst outside src_bounds.
  buffer<int, 2> p({8, 5});
  p.allocate();
  for (index_t y = 0; y < 5; ++y) {
    for (index_t x = 0; x < 8; ++x) p(x, y) = 7;
  }
  const int zero = 0;
  slinky::pad(src.dims, p, raw_buffer::make_scalar_ref(sizeof(int), const_cast<int*>(&zero)));
  for (index_t y = 0; y < 5; ++y) {
    for (index_t x = 0; x < 8; ++x) EXPECT_EQ(p(x, y), src.contains(x, y) ? 7 : 0) << x << " " << y;
  }
}

TEST(compat_copy, broadcast_source) {
  buffer<int, 1> row({5});
  row.allocate();
  for (index_t x = 0; x < 5; ++x) row(x) = x * x;
  buffer<int, 2> dst({5, 3});
  dst.allocate();
  slinky::copy(row, dst);  // dim 1 of row is an implicit broadcast
  for (index_t y = 0; y < 3; ++y) {
    for (index_t x = 0; x < 5; ++x) EXPECT_EQ(dst(x, y), x * x);
  }
}

TEST(compat_for_each, element_pointer_types_and_nulls) {
  buffer<int, 2> a({4, 3});
  a.allocate();
  fill_iota(a, 0);
  buffer<float, 1> b({2});  // lower rank: broadcast in dim 1; null outside [0, 1] in dim 0
  b.allocate();
  b(0) = 0.5f;
  b(1) = 1.5f;
  int visited = 0, nulls = 0;
  slinky::for_each_element(
      [&](int* pa, const float* pb) {
        ++visited;
        if (!pb) ++nulls;
        EXPECT_NE(pa, nullptr);
      },
      a, b.cast<const float>());
  EXPECT_EQ(visited, 12);
  EXPECT_EQ(nulls, 6);

  // raw_buffer (and classes derived from it, like scalar) give void*.
  const raw_buffer& ra = a;
  int sum = 0;
  slinky::for_each_element(
      [&](auto* p, auto* s) {
        static_assert(std::is_same_v<decltype(p), void*>, "raw_buffer elements are void*");
        static_assert(std::is_same_v<decltype(s), void*>, "scalar elements are void*");
        sum += *static_cast<int*>(p) * *static_cast<int*>(s);
      },
      ra, slinky::scalar<int>(2));
  EXPECT_EQ(sum, 2 * (11 * 12 / 2));
}

TEST(compat_for_each, contiguous_slices) {
  buffer<int, 2> dense({10, 5});
  dense.allocate();
  fill_iota(dense, 0);
  int calls = 0;
  index_t elements = 0;
  slinky::for_each_contiguous_slice(dense, [&](index_t extent, int* p) {
    ++calls;
    elements += extent;
    for (index_t i = 0; i < extent; ++i) p[i] += 1;
  });
  EXPECT_EQ(calls, 1);  // dense dims fuse into one maximal run
  EXPECT_EQ(elements, 50);
  EXPECT_EQ(dense(9, 4), 50);

  // Padded rows: one run per row; a second buffer follows along.
  buffer<int, 2> padded({10, 5});
  padded.mutable_dim(1).set_stride(48);
  padded.allocate();
  buffer<int, 2> other({10, 5});
  other.allocate();
  fill_iota(other, 100);
  calls = 0;
  slinky::for_each_contiguous_slice(
      padded,
      [&](index_t extent, int* dst, const int* src) {
        ++calls;
        ASSERT_NE(src, nullptr);
        for (index_t i = 0; i < extent; ++i) dst[i] = src[i];
      },
      other.cast<const int>());
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(padded(3, 4), other(3, 4));
}

TEST(compat_dim_optimizers, can_fuse_and_fuse) {
  EXPECT_TRUE(slinky::can_fuse(dim(0, 9, 4), dim(0, 4, 40)));
  EXPECT_FALSE(slinky::can_fuse(dim(0, 9, 4), dim(0, 4, 44)));
  EXPECT_FALSE(slinky::can_fuse(dim(0, -1, 4), dim(0, 4, 0)));      // empty inner
  EXPECT_TRUE(slinky::can_fuse(dim(0, 9, 4), dim(3, 3, 100)));      // outer is a point with non-zero stride
  EXPECT_TRUE(slinky::can_fuse(dim(0, 9, 0), dim(0, 4, 0)));        // broadcasts
  EXPECT_FALSE(slinky::can_fuse(dim(0, 9, 4, 10), dim(0, 4, 40)));  // folded inner

  EXPECT_EQ(slinky::fuse(dim(0, 9, 4), dim(2, 4, 40)), dim(20, 49, 4));
  EXPECT_EQ(slinky::fuse(dim(0, 9, 4), dim::broadcast()), dim::broadcast());
  const dim folded = slinky::fuse(dim(0, 9, 4), dim(0, 7, 40, 2));
  EXPECT_EQ(folded.min(), 0);
  EXPECT_EQ(folded.max(), 79);
  EXPECT_EQ(folded.fold_factor(), 20);
}

TEST(compat_dim_optimizers, fuse_in_place) {
  buffer<int, 3> r({10, 5, 3});
  slinky::fuse<slinky::fuse_type::remove>(0, 1, r);
  EXPECT_EQ(r.rank, 2u);
  EXPECT_EQ(r.dim(0), dim(0, 49, 4));
  EXPECT_EQ(r.dim(1), dim(0, 2, 200));

  buffer<int, 3> k({10, 5, 3});
  slinky::fuse<slinky::fuse_type::keep>(0, 1, k);
  EXPECT_EQ(k.rank, 3u);
  EXPECT_EQ(k.dim(0), dim(0, 49, 4));
  EXPECT_TRUE(k.dim(1).is_point(0));
  EXPECT_EQ(k.dim(2), dim(0, 2, 200));

  buffer<int, 3> u({10, 5, 3});
  const dim outer = u.dim(1);
  slinky::fuse<slinky::fuse_type::undef>(0, 1, u);
  EXPECT_EQ(u.dim(0), dim(0, 49, 4));
  EXPECT_EQ(u.dim(1), outer);
}

TEST(compat_dim_optimizers, sort_fuse_optimize) {
  // The first buffer's strides decide the order; the others follow.
  buffer<int, 2> t({5, 10});
  t.mutable_dim(0).set_stride(40);
  t.mutable_dim(1).set_stride(4);
  buffer<int, 2> o({5, 10});
  EXPECT_TRUE(slinky::sort_dims(t, o));
  EXPECT_EQ(t.dim(0), dim(0, 9, 4));
  EXPECT_EQ(t.dim(1), dim(0, 4, 40));
  EXPECT_EQ(o.dim(0), dim(0, 9, 20));
  EXPECT_EQ(o.dim(1), dim(0, 4, 4));
  EXPECT_FALSE(slinky::sort_dims(t, o));

  buffer<int, 3> a({10, 5, 3}), b({10, 5, 3});
  EXPECT_EQ(slinky::fuse_contiguous_dims(a, b), 2);
  EXPECT_EQ(a.rank, 1u);
  EXPECT_EQ(a.dim(0), dim(0, 149, 4));
  EXPECT_EQ(b.dim(0), dim(0, 149, 4));

  // dim_sets: dims 0 and 1 may fuse, dim 2 may not join them.
  buffer<int, 3> c({10, 5, 3});
  const int sets[] = {0, 0, 1};
  EXPECT_EQ(slinky::fuse_contiguous_dims(sets, c), 1);
  EXPECT_EQ(c.rank, 2u);
  EXPECT_EQ(c.dim(0), dim(0, 49, 4));

  // optimize_dims slices the dims where every buffer is one point, then fuses.
  buffer<int, 3> d({10, 1, 5}), e({10, 1, 5});
  EXPECT_EQ(slinky::optimize_dims(d, e), 2);
  EXPECT_EQ(d.rank, 1u);
  EXPECT_EQ(d.dim(0).extent(), 50);
  EXPECT_EQ(e.dim(0).extent(), 50);
}
