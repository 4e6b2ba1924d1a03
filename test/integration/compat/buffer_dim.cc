// Compatibility tests for slinky::dim (docs/api.md section 3; silent items S3 to S7 and checklist
// item 3 of README.md), written as a client of the original slinky would use it.
#include <gtest/gtest.h>

#include <cstddef>
#include <limits>
#include <type_traits>

#include "slinky/runtime/buffer.h"

namespace {

using slinky::dim;
using slinky::index_t;

constexpr index_t index_max = std::numeric_limits<index_t>::max();

}  // namespace

TEST(compat_dim, constants_and_defaults) {
  // S6
  static_assert(dim::auto_stride == index_max, "auto_stride is the largest index_t");
  static_assert(dim::unfolded == -1, "unfolded is -1");
  // dim's constructors are constexpr.
  constexpr dim d(0, 9);
  EXPECT_EQ(d.min(), 0);
  EXPECT_EQ(d.max(), 9);
  EXPECT_EQ(d.stride(), dim::auto_stride);
  EXPECT_EQ(d.fold_factor(), dim::unfolded);
  constexpr dim def;
  EXPECT_EQ(def.min(), 0);
  EXPECT_EQ(def.max(), -1);
  EXPECT_TRUE(def.empty());
  EXPECT_EQ(def.extent(), 0);
  constexpr dim full(2, 5, 8, 4);
  EXPECT_EQ(full.extent(), 4);
  EXPECT_EQ(full.begin(), 2);
  EXPECT_EQ(full.end(), 6);
  EXPECT_EQ(full.stride(), 8);
  EXPECT_EQ(full.fold_factor(), 4);
}

TEST(compat_dim, broadcast) {
  // S3: the broadcast dim is {0, 0, 0, 0}.
  const dim& b = dim::broadcast();
  EXPECT_EQ(b.min(), 0);
  EXPECT_EQ(b.max(), 0);
  EXPECT_EQ(b.stride(), 0);
  EXPECT_EQ(b.fold_factor(), 0);
  EXPECT_EQ(b.extent(), 1);
  EXPECT_EQ(b.begin(), 0);
  EXPECT_EQ(b.end(), 1);
  int n = 0;
  for (index_t i = b.begin(); i < b.end() && n < 10; ++i) ++n;
  EXPECT_EQ(n, 1);
  // Its fold factor is 0, which means unfolded: it is not folded.
  EXPECT_FALSE(b.is_folded());
  EXPECT_TRUE(b.is_broadcast());
  EXPECT_EQ(b.flat_offset_bytes(12345), 0);
  // S4: a stride-0 dim contains every coordinate.
  EXPECT_TRUE(b.contains(-1000));
  EXPECT_TRUE(b.contains(1000));
  EXPECT_TRUE(b.contains(-5, 5));
}

TEST(compat_dim, contains) {
  const dim d(0, 9, 4);
  EXPECT_TRUE(d.contains(0));
  EXPECT_TRUE(d.contains(9));
  EXPECT_FALSE(d.contains(10));
  EXPECT_FALSE(d.contains(-1));
  EXPECT_TRUE(d.contains(2, 7));
  EXPECT_FALSE(d.contains(2, 10));
  EXPECT_TRUE(d.contains(dim(3, 5)));
  EXPECT_FALSE(d.contains(dim(3, 12)));
  // contains(o) is contains(o.min(), o.max()): an empty o outside is not contained.
  EXPECT_FALSE(d.contains(dim(20, 19)));
  EXPECT_TRUE(d.contains(dim(5, 4)));
  // S4: stride 0 contains everything, whatever its bounds.
  const dim s(3, 4, 0);
  EXPECT_TRUE(s.contains(100));
  EXPECT_TRUE(s.contains(-100, 100));
  EXPECT_TRUE(s.contains(dim(-50, 50)));
}

TEST(compat_dim, is_point_and_is_broadcast) {
  EXPECT_TRUE(dim(3, 3).is_point());
  EXPECT_FALSE(dim(3, 4).is_point());
  EXPECT_TRUE(dim(3, 3).is_point(3));
  EXPECT_FALSE(dim(3, 3).is_point(4));
  EXPECT_FALSE(dim(3, 4).is_point(3));
  // S5: is_broadcast means min == 0 && max == 0 && stride == 0.
  EXPECT_TRUE(dim(0, 0, 0).is_broadcast());
  EXPECT_FALSE(dim(0, 9, 0).is_broadcast());
  EXPECT_FALSE(dim(1, 1, 0).is_broadcast());
  EXPECT_FALSE(dim(0, 0, 4).is_broadcast());
}

TEST(compat_dim, folds) {
  // S7: is_folded() asks whether the current range crosses a fold boundary.
  EXPECT_FALSE(dim(0, 9, 4, 10).is_folded());
  EXPECT_TRUE(dim(5, 14, 4, 10).is_folded());
  EXPECT_FALSE(dim(8, 11, 4, 4).is_folded());
  EXPECT_TRUE(dim(7, 8, 4, 4).is_folded());
  EXPECT_FALSE(dim(0, 100, 4).is_folded());  // unfolded
  EXPECT_FALSE(dim(0, 100, 4, dim::unfolded).is_folded());
  EXPECT_FALSE(dim(0, 100, 0, 4).is_folded());  // stride 0
  EXPECT_FALSE(dim(0, 100, 4, 0).is_folded());  // fold factor <= 0 is unfolded
  const dim f(0, 3, 4, 4);
  EXPECT_FALSE(f.is_folded(0, 3));
  EXPECT_TRUE(f.is_folded(2, 5));
  EXPECT_FALSE(f.is_folded(4, 7));
  EXPECT_TRUE(f.is_folded(dim(3, 4)));
  EXPECT_FALSE(f.is_folded(dim(8, 11)));
}

TEST(compat_dim, flat_offset_bytes) {
  static_assert(std::is_same_v<decltype(dim().flat_offset_bytes(0)), std::ptrdiff_t>, "returns ptrdiff_t");
  const dim unfolded(5, 14, 8);
  EXPECT_EQ(unfolded.flat_offset_bytes(5), 0);
  EXPECT_EQ(unfolded.flat_offset_bytes(7), 16);
  const dim folded(5, 14, 8, 4);
  // Folded storage is independent of min: euclidean_mod(i, fold) * stride.
  EXPECT_EQ(folded.flat_offset_bytes(5), 8);
  EXPECT_EQ(folded.flat_offset_bytes(8), 0);
  EXPECT_EQ(folded.flat_offset_bytes(-1), 24);
  // A fold factor that is not a power of two, and coordinates beyond 32 bits.
  const dim folded3(5, 14, 8, 3);
  EXPECT_EQ(folded3.flat_offset_bytes(7), 8);
  EXPECT_EQ(folded3.flat_offset_bytes(-7), 16);
  EXPECT_EQ(folded3.flat_offset_bytes(index_t{3} << 40), 0);
  EXPECT_EQ(folded3.flat_offset_bytes((index_t{3} << 40) - 1), 16);
  const dim zero_stride(5, 14, 0, 4);
  EXPECT_EQ(zero_stride.flat_offset_bytes(9), 0);
}

TEST(compat_dim, setters_and_equality) {
  dim d(0, 9, 4);
  d.set_bounds(2, 5);
  EXPECT_EQ(d, dim(2, 5, 4));
  d.set_min_extent(1, 3);
  EXPECT_EQ(d, dim(1, 3, 4));
  d.set_extent(5);
  EXPECT_EQ(d, dim(1, 5, 4));
  d.set_range(0, 2);
  EXPECT_EQ(d, dim(0, 1, 4));
  d.set_point(7);
  EXPECT_EQ(d, dim(7, 7, 4));
  d.set_stride(12);
  d.set_fold_factor(3);
  EXPECT_EQ(d, dim(7, 7, 12, 3));
  d.translate(-2);
  EXPECT_EQ(d, dim(5, 5, 12, 3));
  EXPECT_NE(d, dim(5, 5, 12));
}
