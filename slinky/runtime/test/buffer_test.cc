// Tests of buffer descriptors: dim, raw_buffer (indexing, crop/slice/translate, sizes, layout,
// allocation, factories), buffer<T, N>, scalar<T>, validate_buffer and the dim optimizers. The
// walks (copy, pad, fill, for_each_*) are tested in buffer_walk_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "coords.h"
#include "slinky/runtime/buffer.h"

namespace slinky {

namespace {

constexpr index_t max_index = std::numeric_limits<index_t>::max();

using test::dims_of;
using test::for_each_coord;

bool is_aligned(const void* p, std::uintptr_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

}  // namespace

// The types and layouts clients rely on.
static_assert(std::is_same_v<index_t, std::int64_t>);
static_assert(alignof(dim) == 16 && sizeof(dim) == 32);
static_assert(sizeof(raw_buffer) == 32 && alignof(raw_buffer) == 16);
static_assert(std::is_aggregate_v<raw_buffer>);
static_assert(std::is_same_v<raw_buffer::element, void> && std::is_same_v<raw_buffer::pointer, void*>);
static_assert(std::is_same_v<buffer<const float, 2>::element, const float>);
static_assert(std::is_same_v<buffer<const float, 2>::pointer, const float*>);
static_assert(std::is_same_v<raw_buffer_ptr, std::shared_ptr<raw_buffer>>);
static_assert(std::is_same_v<const_raw_buffer_ptr, std::shared_ptr<const raw_buffer>>);
static_assert(std::is_same_v<decltype(std::declval<dim>().flat_offset_bytes(0)), std::ptrdiff_t>);
static_assert(std::is_same_v<decltype(std::declval<raw_buffer>().init_strides()), std::optional<std::size_t>>);

TEST(dim, constexpr_values) {
  constexpr dim d(0, 9);
  static_assert(d.extent() == 10 && d.stride() == dim::auto_stride && d.fold_factor() == dim::unfolded);
  constexpr dim e;
  static_assert(e.empty() && e.min() == 0 && e.max() == -1);
  static_assert(dim::auto_stride == std::numeric_limits<std::int64_t>::max());
  static_assert(dim::unfolded == -1);
  EXPECT_EQ(dim().fold_factor(), -1);
}

TEST(dim, accessors_and_setters) {
  dim d(3, 7, 4);
  EXPECT_EQ(d.min(), 3);
  EXPECT_EQ(d.max(), 7);
  EXPECT_EQ(d.begin(), 3);
  EXPECT_EQ(d.end(), 8);
  EXPECT_EQ(d.extent(), 5);
  EXPECT_EQ(d.stride(), 4);
  EXPECT_FALSE(d.empty());
  EXPECT_FALSE(d.is_folded());
  EXPECT_FALSE(d.is_broadcast());
  EXPECT_TRUE(d.contains(3));
  EXPECT_TRUE(d.contains(7));
  EXPECT_FALSE(d.contains(8));
  EXPECT_FALSE(d.contains(2));
  EXPECT_TRUE(d.contains(slice));
  EXPECT_TRUE(d.contains(dim(4, 6)));
  EXPECT_FALSE(d.contains(dim(2, 6)));

  d.set_min_extent(-2, 3);
  EXPECT_EQ(d.min(), -2);
  EXPECT_EQ(d.max(), 0);
  d.set_extent(10);
  EXPECT_EQ(d.max(), 7);
  d.set_range(1, 4);
  EXPECT_EQ(d.min(), 1);
  EXPECT_EQ(d.max(), 3);
  d.set_point(5);
  EXPECT_EQ(d.extent(), 1);
  EXPECT_EQ(d.min(), 5);
  d.set_bounds(2, 1);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.extent(), 0);
  d.set_bounds(0, 9).set_stride(8).set_fold_factor(4);
  EXPECT_EQ(d.stride(), 8);
  EXPECT_EQ(d.fold_factor(), 4);
  d.translate(3);
  EXPECT_EQ(d.min(), 3);
  EXPECT_EQ(d.max(), 12);
  EXPECT_EQ(dim(1, 2, 3, 4), dim(1, 2, 3, 4));
  EXPECT_NE(dim(1, 2, 3, 4), dim(1, 2, 3, 5));
}

TEST(dim, contains) {
  // contains(a, b): the whole range; an empty range is contained only if its bounds are.
  const dim d(0, 9, 4);
  EXPECT_TRUE(d.contains(2, 5));
  EXPECT_FALSE(d.contains(-1, 5));
  EXPECT_FALSE(d.contains(5, 10));
  EXPECT_TRUE(d.contains(dim(5, 4)));
  EXPECT_FALSE(d.contains(dim(20, 19)));
  // A stride-0 dim contains every coordinate, whatever its bounds.
  const dim b(0, 0, 0);
  EXPECT_TRUE(b.contains(100));
  EXPECT_TRUE(b.contains(-5, 7));
  EXPECT_TRUE(b.contains(dim(-3, 8)));
  EXPECT_TRUE(dim(2, 3, 0).contains(-1000));
}

TEST(dim, points) {
  EXPECT_TRUE(dim(3, 3).is_point());
  EXPECT_FALSE(dim(3, 4).is_point());
  EXPECT_TRUE(dim(3, 3).is_point(3));
  EXPECT_FALSE(dim(3, 3).is_point(4));
  EXPECT_FALSE(dim(3, 4).is_point(3));
}

TEST(dim, broadcast) {
  const dim& b = dim::broadcast();
  EXPECT_EQ(b, dim(0, 0, 0, 0));
  EXPECT_EQ(b.extent(), 1);
  EXPECT_EQ(b.begin(), 0);
  EXPECT_EQ(b.end(), 1);
  EXPECT_TRUE(b.is_broadcast());
  EXPECT_TRUE(b.contains(-1000000000000));
  EXPECT_TRUE(b.contains(1000000000000));
  EXPECT_EQ(b.flat_offset_bytes(12345), 0);
  EXPECT_FALSE(b.is_folded());
  // is_broadcast is [0, 0] with stride 0: a stride-0 dim of other bounds is not one.
  EXPECT_FALSE(dim(0, 9, 0).is_broadcast());
  EXPECT_FALSE(dim(0, 0, 4).is_broadcast());
  EXPECT_TRUE(dim(0, 0, 0, 7).is_broadcast());
}

TEST(dim, is_folded) {
  // The no-argument form asks whether the dim's own range crosses a fold boundary.
  const dim f(0, 2, 4, 4);
  EXPECT_FALSE(f.is_folded());
  EXPECT_TRUE(dim(2, 5, 4, 4).is_folded());
  EXPECT_FALSE(dim(4, 7, 4, 4).is_folded());
  EXPECT_TRUE(f.is_folded(3, 4));
  EXPECT_FALSE(f.is_folded(-4, -1));
  EXPECT_TRUE(f.is_folded(dim(-1, 0)));
  EXPECT_FALSE(f.is_folded(dim(8, 11)));
  // Unfolded, stride 0, or a fold factor that is not positive: never folded.
  EXPECT_FALSE(dim(0, 100, 4).is_folded(0, 100));
  EXPECT_FALSE(dim(0, 100, 0, 4).is_folded());
  EXPECT_FALSE(dim(0, 100, 4, 0).is_folded());
  EXPECT_FALSE(dim(0, 100, 4, -3).is_folded());
}

// is_folded(min, max) is min / fold != max / fold (Euclidean division), without dividing: checked
// against the division for power-of-two and other folds, negative coordinates, ranges of one,
// several folds and beyond 32 bits, and ends near the limits of index_t.
TEST(dim, is_folded_is_a_change_of_fold) {
  const index_t big = index_t(1) << 40;
  const index_t lo = std::numeric_limits<index_t>::min();
  const index_t hi = std::numeric_limits<index_t>::max();
  for (index_t fold : {index_t(1), index_t(2), index_t(3), index_t(4), index_t(7), index_t(8), big + 3, hi}) {
    const dim d(0, 0, 4, fold);
    std::vector<index_t> points;
    for (index_t x = -20; x <= 20; ++x) points.push_back(x);
    for (index_t x : {big - 1, big, big + 5, -big, lo, lo + 1, hi - 1, hi, fold - 1, fold, -fold}) points.push_back(x);
    for (index_t min : points) {
      for (index_t max : points) {
        const bool expected = max >= min && euclidean_div(min, fold) != euclidean_div(max, fold);
        if (d.is_folded(min, max) != expected) {
          ADD_FAILURE() << "fold " << fold << ", [" << min << ", " << max << "]: expected " << expected;
        }
      }
    }
  }
}

TEST(dim, flat_offset) {
  dim d(10, 20, 4);
  EXPECT_EQ(d.flat_offset_bytes(10), 0);
  EXPECT_EQ(d.flat_offset_bytes(13), 12);
  EXPECT_EQ(d.flat_offset_bytes(slice), 0);
  // Folded storage is independent of min and wraps for negative coordinates.
  dim f(10, 20, 4, 3);
  EXPECT_EQ(f.flat_offset_bytes(10), 4);
  EXPECT_EQ(f.flat_offset_bytes(12), 0);
  EXPECT_EQ(f.flat_offset_bytes(-1), 8);
  EXPECT_EQ(f.flat_offset_bytes(-3), 0);
  // Stride 0 addresses nothing, whatever the fold factor (which may carry data).
  EXPECT_EQ(dim(10, 20, 0, 3).flat_offset_bytes(11), 0);
  EXPECT_EQ(dim(10, 20, 0, 0).flat_offset_bytes(11), 0);
}

TEST(raw_buffer, implicit_broadcast_dims) {
  int data[6] = {0, 1, 2, 3, 4, 5};
  dim dims[] = {dim(0, 2, 4), dim(0, 1, 12)};
  raw_buffer b{data, 4, 2, dims};
  EXPECT_EQ(&b.dim(2), &dim::broadcast());
  // Loops over a dim past the rank run once.
  int iterations = 0;
  for (index_t z = b.dim(2).begin(); z < b.dim(2).end(); ++z) ++iterations;
  EXPECT_EQ(iterations, 1);
  EXPECT_EQ(b.address_at(1, 1), &data[4]);
  EXPECT_EQ(b.address_at(1, 1, 7, -3), &data[4]);
  EXPECT_EQ(b.address_at(1, slice), &data[1]);
  EXPECT_EQ(b.address_at(slice, 1), &data[3]);
  EXPECT_EQ(b.address_at(), &data[0]);
  EXPECT_EQ(b.flat_offset_bytes(2, 1), 20);
  EXPECT_EQ(b.flat_offset_bytes(), 0);
  const index_t at[] = {2, 0, 9};
  EXPECT_EQ(b.address_at(span<const index_t>(at)), &data[2]);
  EXPECT_TRUE(b.contains(2, 1, 100));
  EXPECT_TRUE(b.contains(slice, 1));
  EXPECT_TRUE(b.contains());
  EXPECT_FALSE(b.contains(3, 1));
  EXPECT_TRUE(b.contains(span<const index_t>(at)));
  // Cropping, slicing and translating implicit dims are no-ops.
  b.crop(5, 1, 1).slice(3).slice(2, 8);
  b.translate(0, 0, 4, 10);
  EXPECT_EQ(b.rank, 2u);
  EXPECT_EQ(b.base, data);
  EXPECT_EQ(b.dim(0), dim(0, 2, 4));
}

TEST(raw_buffer, index_containers) {
  int data[6] = {0, 1, 2, 3, 4, 5};
  dim dims[] = {dim(0, 2, 4), dim(0, 1, 12)};
  raw_buffer b{data, 4, 2, dims};
  // Arrays and vectors of indices go to the span overloads.
  const std::vector<index_t> v = {1, 1};
  const std::array<index_t, 2> a = {2, 1};
  EXPECT_EQ(b.address_at(v), &data[4]);
  EXPECT_EQ(b.address_at(a), &data[5]);
  EXPECT_EQ(b.flat_offset_bytes(a), 20);
  EXPECT_TRUE(b.contains(v));
  EXPECT_FALSE(b.contains(std::vector<index_t>{3, 0}));
  // A null base gives null addresses.
  raw_buffer null_base{nullptr, 4, 2, dims};
  EXPECT_EQ(null_base.address_at(1, 1), nullptr);
  EXPECT_EQ(null_base.address_at(v), nullptr);
}

TEST(raw_buffer, crop) {
  int data[100];
  dim dims[] = {dim(0, 9, 4), dim(0, 9, 40)};
  raw_buffer b{data, 4, 2, dims};
  b.crop(0, 2, 5);
  EXPECT_EQ(b.dim(0).min(), 2);
  EXPECT_EQ(b.dim(0).max(), 5);
  EXPECT_EQ(b.base, &data[2]);
  b.crop(1, -5, 3);  // Clamped to the existing bounds.
  EXPECT_EQ(b.dim(1).min(), 0);
  EXPECT_EQ(b.dim(1).max(), 3);
  b.crop(1, 2, 100);
  EXPECT_EQ(b.base, &data[22]);
  EXPECT_EQ(b.address_at(3, 3), &data[33]);
  b.crop(0, 6, 8);  // Outside the bounds: empty, null base.
  EXPECT_TRUE(b.dim(0).empty());
  EXPECT_EQ(b.base, nullptr);
  b.crop(1, 2, 2);
  EXPECT_EQ(b.base, nullptr);

  // A negative stride moves the base down.
  dim rdims[] = {dim(0, 9, -4)};
  raw_buffer r{&data[9], 4, 1, rdims};
  r.crop(0, 3, 9);
  EXPECT_EQ(r.base, &data[6]);
  EXPECT_EQ(r.address_at(9), &data[0]);

  // A folded dim's base does not move; addresses are unchanged.
  dim fdims[] = {dim(0, 9, 4, 4)};
  raw_buffer f{data, 4, 1, fdims};
  f.crop(0, 5, 7);
  EXPECT_EQ(f.base, data);
  EXPECT_EQ(f.address_at(6), &data[2]);

  // A stride-0 dim contains every coordinate: a crop outside its bounds changes nothing (a
  // broadcast never becomes empty).
  dim bdims[] = {dim(0, 9, 4), dim::broadcast()};
  raw_buffer bc{data, 4, 2, bdims};
  bc.crop(1, 5, 7);
  EXPECT_EQ(bc.dim(1), dim::broadcast());
  EXPECT_EQ(bc.base, data);
  EXPECT_EQ(bc.address_at(3, 6), &data[3]);

  // One that overlaps its bounds narrows them (a reduction's dummy dims tell the callback which
  // part it gets so), truncated at the end; the base and the fold factor (data) stay.
  dim rdims0[] = {dim(0, 9, 0, 4)};
  raw_buffer red{nullptr, 0, 1, rdims0};
  red.crop(0, 8, 11);
  EXPECT_EQ(red.dim(0), dim(8, 9, 0, 4));
  EXPECT_EQ(red.base, nullptr);
  bc.crop(1, -3, 0);
  EXPECT_EQ(bc.dim(1), dim::broadcast());
  EXPECT_EQ(bc.base, data);
}

TEST(raw_buffer, slice) {
  int data[60];
  dim dims[] = {dim(0, 2, 4), dim(1, 4, 12), dim(-1, 3, 48, 5)};
  raw_buffer b{data, 4, 3, dims};

  // slice(0) advances the dims pointer, leaving the dims array (which copies of a raw_buffer
  // share) and the base intact.
  raw_buffer s0 = b;
  s0.slice(0);
  ASSERT_EQ(s0.rank, 2u);
  EXPECT_EQ(s0.dims, dims + 1);
  EXPECT_EQ(s0.dim(0), dim(1, 4, 12));
  EXPECT_EQ(b.dim(0), dim(0, 2, 4));
  EXPECT_EQ(s0.base, data);

  dim dims1[] = {dim(0, 2, 4), dim(1, 4, 12), dim(-1, 3, 48, 5)};
  raw_buffer s{data, 4, 3, dims1};
  s.slice(1, 2);
  ASSERT_EQ(s.rank, 2u);
  EXPECT_EQ(s.base, &data[3]);
  EXPECT_EQ(s.dim(1), dim(-1, 3, 48, 5));
  EXPECT_EQ(s.address_at(1, 3), b.address_at(1, 2, 3));

  // Slicing a folded dim at a coordinate uses its fold.
  dim fdims[] = {dim(0, 2, 4), dim(1, 4, 12), dim(-1, 3, 48, 5)};
  raw_buffer sf{data, 4, 3, fdims};
  sf.slice(2, -1);
  EXPECT_EQ(sf.base, &data[48]);

  // slice(d) without a coordinate never moves the base, not even for a folded dim whose min is
  // not a multiple of its fold.
  dim kdims[] = {dim(0, 2, 4), dim(1, 4, 12, 3)};
  raw_buffer k{data, 4, 2, kdims};
  k.slice(1);
  EXPECT_EQ(k.rank, 1u);
  EXPECT_EQ(k.base, data);
  dim udims[] = {dim(0, 2, 4), dim(1, 4, 12)};
  raw_buffer u{data, 4, 2, udims};
  u.slice(1);
  EXPECT_EQ(u.base, data);

  // Out of bounds: null base.
  dim odims[] = {dim(0, 2, 4), dim(1, 4, 12), dim(-1, 3, 48, 5)};
  raw_buffer so{data, 4, 3, odims};
  so.slice(1, 5);
  EXPECT_EQ(so.base, nullptr);
  EXPECT_EQ(so.rank, 2u);
  // A stride-0 dim contains every coordinate.
  dim zdims[] = {dim(0, 2, 4), dim(0, 0, 0)};
  raw_buffer sz{data, 4, 2, zdims};
  sz.slice(1, 7);
  EXPECT_EQ(sz.base, data);

  // in_bounds: the same as a coordinate, for one known to be inside.
  dim idims[] = {dim(0, 2, 4), dim(1, 4, 12)};
  raw_buffer si{data, 4, 2, idims};
  si.slice(1, in_bounds{3});
  EXPECT_EQ(si.base, &data[6]);
  EXPECT_EQ(si.rank, 1u);

  // Several dims at once, without moving the base.
  int data2[60];
  dim dims2[] = {dim(0, 2, 4), dim(1, 4, 12), dim(5, 7, 48)};
  raw_buffer m{data2, 4, 3, dims2};
  m.slice({0, 2});
  ASSERT_EQ(m.rank, 1u);
  EXPECT_EQ(m.dim(0), dim(1, 4, 12));
  EXPECT_EQ(m.base, &data2[0]);
  m.slice(0, 3);
  EXPECT_EQ(m.rank, 0u);
  EXPECT_EQ(m.base, &data2[6]);
  dim dims3[] = {dim(0, 2, 4), dim(1, 4, 12), dim(5, 7, 48), dim(0, 1, 200)};
  raw_buffer n{data2, 4, 4, dims3};
  const std::vector<std::size_t> ds = {1, 3};
  n.slice(ds);
  ASSERT_EQ(n.rank, 2u);
  EXPECT_EQ(n.dim(0), dim(0, 2, 4));
  EXPECT_EQ(n.dim(1), dim(5, 7, 48));
}

// Slicing leading dims (with trailing ones, in any order) only advances the dims pointer and lowers
// the rank: a dims array shared with another descriptor is never written (API_COMPAT 5.2 item 8).
TEST(raw_buffer, slice_leading_dims_leaves_shared_dims_alone) {
  int data[60];
  const dim original[] = {dim(0, 2, 4), dim(1, 4, 12), dim(5, 7, 48), dim(0, 1, 200)};
  dim shared[4] = {original[0], original[1], original[2], original[3]};
  const raw_buffer whole{data, 4, 4, shared};
  auto unchanged = [&]() {
    for (int d = 0; d < 4; ++d) {
      if (shared[d] != original[d]) return false;
    }
    return true;
  };

  for (const std::vector<std::size_t>& ds : std::vector<std::vector<std::size_t>>{
           {0, 1}, {1, 0}, {0, 1, 2}, {0, 3}, {0, 1, 3}, {0, 2, 3}, {0, 1, 2, 3}, {0, 7}}) {
    raw_buffer b = whole;
    b.slice(ds);
    EXPECT_TRUE(unchanged());
    EXPECT_EQ(b.base, data);
    // The dims left are the ones not in ds, in order.
    std::vector<dim> kept;
    for (std::size_t d = 0; d < 4; ++d) {
      if (std::find(ds.begin(), ds.end(), d) == ds.end()) kept.push_back(original[d]);
    }
    ASSERT_EQ(b.rank, kept.size());
    for (std::size_t d = 0; d < kept.size(); ++d) EXPECT_EQ(b.dim(d), kept[d]);
    if (std::find(ds.begin(), ds.end(), std::size_t{1}) != ds.end() && !kept.empty()) {
      // Leading dims 0 and 1 (and 2 if given) went by advancing the pointer.
      EXPECT_GE(b.dims, shared + 2);
    }
  }
  // The initializer_list and buffer<T, N> forms.
  raw_buffer b = whole;
  b.slice({0, 1});
  EXPECT_EQ(b.dims, shared + 2);
  EXPECT_EQ(b.rank, 2u);
  EXPECT_TRUE(unchanged());
  buffer<int, 4> t;
  for (int d = 0; d < 4; ++d) t.mutable_dim(d) = original[d];
  raw_buffer view = t;
  view.slice({0, 1, 2});
  EXPECT_EQ(view.rank, 1u);
  EXPECT_EQ(view.dim(0), original[3]);
  for (int d = 0; d < 4; ++d) EXPECT_EQ(t.dim(d), original[d]);

  // Removing a dim between two kept ones has to shift the later dims (as slice(d) does): only then
  // is the array written.
  raw_buffer middle = whole;
  middle.slice({0, 2});
  EXPECT_EQ(middle.dims, shared + 1);
  EXPECT_EQ(middle.dim(0), original[1]);
  EXPECT_EQ(middle.dim(1), original[3]);
}

TEST(raw_buffer, translate) {
  int data[20];
  dim dims[] = {dim(0, 4, 4), dim(0, 3, 20)};
  raw_buffer b{data, 4, 2, dims};
  // translate(a, b) moves dim 0 by a and dim 1 by b.
  b.translate(1, 2);
  EXPECT_EQ(b.dim(0).min(), 1);
  EXPECT_EQ(b.dim(1).min(), 2);
  EXPECT_EQ(b.address_at(3, 3), &data[7]);
  b.translate(10);
  EXPECT_EQ(b.dim(0).min(), 11);
  EXPECT_EQ(b.dim(1).min(), 2);
  b.translate({-12, 3, 7});
  EXPECT_EQ(b.dim(0).min(), -1);
  EXPECT_EQ(b.dim(1).min(), 5);
  EXPECT_EQ(b.address_at(-1, 5), data);
  const std::vector<index_t> offsets = {1};
  b.translate(offsets);
  EXPECT_EQ(b.dim(0).min(), 0);
  EXPECT_EQ(b.dim(1).min(), 5);
}

TEST(raw_buffer, size_bytes_and_elem_count) {
  dim dims[] = {dim(0, 9, 4), dim(0, 4, 48)};
  raw_buffer b{nullptr, 4, 2, dims};
  EXPECT_EQ(b.size_bytes(), 4u + 9 * 4 + 4 * 48);
  EXPECT_EQ(b.elem_count(), 50u);
  dims[1].set_stride(-48);
  EXPECT_EQ(b.size_bytes(), 4u + 9 * 4 + 4 * 48);
  // A folded dim spans its whole fold, whether larger or smaller than its extent.
  dims[1].set_fold_factor(8);
  EXPECT_EQ(b.size_bytes(), 4u + 9 * 4 + 7 * 48);
  dims[1].set_fold_factor(2);
  EXPECT_EQ(b.size_bytes(), 4u + 9 * 4 + 1 * 48);
  EXPECT_EQ(b.elem_count(), 50u);
  dims[1].set_stride(0);
  EXPECT_EQ(b.size_bytes(), 4u + 9 * 4);
  dims[0].set_bounds(3, 2);
  EXPECT_EQ(b.size_bytes(), 0u);
  EXPECT_EQ(b.elem_count(), 0u);
  raw_buffer scalar{nullptr, 8, 0, nullptr};
  EXPECT_EQ(scalar.size_bytes(), 8u);
  EXPECT_EQ(scalar.elem_count(), 1u);
}

// Sizes that do not fit in an index_t read as 0 (and internal::checked_size_bytes says so).
TEST(raw_buffer, sizes_do_not_wrap) {
  constexpr index_t min_index = std::numeric_limits<index_t>::min();
  EXPECT_EQ(dim(min_index, max_index).extent(), max_index);
  EXPECT_EQ(dim(-1, max_index - 1).extent(), max_index);
  EXPECT_EQ(dim(0, max_index - 1).extent(), max_index);
  EXPECT_EQ(dim(1, max_index).extent(), max_index);
  EXPECT_EQ(dim(max_index, min_index).extent(), 0);

  // Extent 2^62 with stride 4: (2^62 - 1) * 4 + 4 bytes wraps to 0.
  dim huge[] = {dim(0, (index_t{1} << 62) - 1, 4)};
  raw_buffer b{nullptr, 4, 1, huge};
  EXPECT_EQ(b.size_bytes(), 0u);
  EXPECT_EQ(internal::checked_size_bytes(b), std::nullopt);
  EXPECT_EQ(b.elem_count(), std::size_t{1} << 62);
  huge[0].set_stride(-4);
  EXPECT_EQ(b.size_bytes(), 0u);
  // Each span fits, their sum does not.
  dim sum[] = {dim(0, 1, max_index / 2 + 1), dim(0, 1, max_index / 2 + 1)};
  EXPECT_EQ((raw_buffer{nullptr, 4, 2, sum}.size_bytes()), 0u);
  // The largest size that fits.
  dim fits[] = {dim(0, 1, max_index - 8)};
  EXPECT_EQ((raw_buffer{nullptr, 8, 1, fits}.size_bytes()), static_cast<std::size_t>(max_index));
  EXPECT_EQ((raw_buffer{nullptr, 8, 1, fits}.size_bytes()), *internal::checked_size_bytes({nullptr, 8, 1, fits}));
  EXPECT_EQ((raw_buffer{nullptr, 9, 1, fits}.size_bytes()), 0u);
  // The evaluator's forms: the same sizes as index_t, -1 for those that do not fit.
  EXPECT_EQ(internal::size_bytes_or_negative(b), -1);
  EXPECT_EQ(internal::size_bytes_or_negative({nullptr, 8, 1, fits}), max_index);
  EXPECT_EQ(internal::size_bytes_or_negative({nullptr, 9, 1, fits}), -1);
  EXPECT_EQ(internal::size_bytes_or_negative({nullptr, 4, 2, sum}), -1);
  // An auto stride on a dim of extent > 1 has no size; on extent 1 it does not matter.
  dim autos[] = {dim(0, 9)};
  EXPECT_EQ((raw_buffer{nullptr, 4, 1, autos}.size_bytes()), 0u);
  dim auto_point[] = {dim(3, 3)};
  EXPECT_EQ((raw_buffer{nullptr, 4, 1, auto_point}.size_bytes()), 4u);
  // elem_count: 2^32 * 2^32 elements saturate.
  dim many[] = {dim(0, (index_t{1} << 32) - 1, 0), dim(0, (index_t{1} << 32) - 1, 0)};
  raw_buffer m{nullptr, 4, 2, many};
  EXPECT_EQ(m.elem_count(), std::numeric_limits<std::size_t>::max());
  EXPECT_EQ(m.size_bytes(), 4u);

  // buffer<T> from extents whose product overflows: saturated strides, no size.
  buffer<int, 3> typed({index_t{1} << 40, index_t{1} << 30, 2});
  EXPECT_EQ(typed.dim(2).stride(), max_index);
  EXPECT_EQ(typed.size_bytes(), 0u);
}

TEST(raw_buffer, init_strides) {
  dim dims[] = {dim(0, 9), dim(0, 4), dim(0, 2)};
  raw_buffer b{nullptr, 2, 3, dims};
  EXPECT_EQ(b.init_strides(), 2u + 9 * 2 + 4 * 20 + 2 * 100);
  EXPECT_EQ(dims[0].stride(), 2);
  EXPECT_EQ(dims[1].stride(), 20);
  EXPECT_EQ(dims[2].stride(), 100);

  // Rows and planes are aligned; elements stay adjacent. The size is rounded up too.
  dim aligned[] = {dim(0, 9), dim(0, 4), dim(0, 2)};
  raw_buffer a{nullptr, 2, 3, aligned};
  EXPECT_EQ(a.init_strides(16), 480u);
  EXPECT_EQ(aligned[0].stride(), 2);
  EXPECT_EQ(aligned[1].stride(), 32);
  EXPECT_EQ(aligned[2].stride(), 160);
  // An alignment that is not a power of two: rows of 20 bytes at multiples of 12, the size 116
  // rounded up to 120; the evaluator's form gives the same size.
  dim twelve[] = {dim(0, 9), dim(0, 4)};
  raw_buffer t{nullptr, 2, 2, twelve};
  EXPECT_EQ(t.init_strides(12), 120u);
  EXPECT_EQ(twelve[1].stride(), 24);
  dim twelve_again[] = {dim(0, 9), dim(0, 4)};
  raw_buffer t2{nullptr, 2, 2, twelve_again};
  EXPECT_EQ(internal::init_strides_or_negative(t2, 12), 120);
  EXPECT_EQ(twelve_again[1].stride(), 24);

  // An auto dim 0 under a known dim 1 stays dense: it fits in one step of dim 1.
  dim under[] = {dim(0, 9), dim(0, 4, 40)};
  raw_buffer u{nullptr, 4, 2, under};
  EXPECT_EQ(u.init_strides(), 4u + 9 * 4 + 4 * 40);
  EXPECT_EQ(under[0].stride(), 4);
  // ... but not if dim 1's step is too small for it: then it goes past dim 1's footprint.
  dim over[] = {dim(0, 9), dim(0, 4, 4)};
  raw_buffer o{nullptr, 4, 2, over};
  o.init_strides();
  EXPECT_EQ(over[0].stride(), 20);

  // Auto strides go past the dims placed before; a folded dim spans its fold.
  dim mixed[] = {dim(0, 9), dim(0, 4, 4), dim(0, 9, dim::auto_stride, 3)};
  raw_buffer m{nullptr, 4, 3, mixed};
  m.init_strides();
  EXPECT_EQ(mixed[1].stride(), 4);
  EXPECT_EQ(mixed[0].stride(), 20);
  EXPECT_EQ(mixed[2].stride(), 200);
  EXPECT_EQ(m.size_bytes(), 4u + 4 * 4 + 9 * 20 + 2 * 200);

  // A known negative stride spans as much as a positive one.
  dim neg[] = {dim(0, 3, -4), dim(0, 2)};
  raw_buffer n{nullptr, 4, 2, neg};
  n.init_strides();
  EXPECT_EQ(neg[1].stride(), 16);

  // Stride-0 dims are left alone and take no room; auto dims of extent 1 get elem_size.
  dim zero[] = {dim(0, 9, 0), dim(5, 5), dim(0, 3)};
  raw_buffer z{nullptr, 4, 3, zero};
  EXPECT_EQ(z.init_strides(), 16u);
  EXPECT_EQ(zero[0].stride(), 0);
  EXPECT_EQ(zero[1].stride(), 4);
  EXPECT_EQ(zero[2].stride(), 4);

  // An empty dim: strides are filled in, the size is 0.
  dim empty[] = {dim(0, 9), dim(0, -1)};
  raw_buffer e{nullptr, 4, 2, empty};
  EXPECT_EQ(e.init_strides(), 0u);
  EXPECT_EQ(empty[0].stride(), 4);
  EXPECT_NE(empty[1].stride(), dim::auto_stride);

  // Overflow: nullopt, and the strides are filled in (not left as auto_stride).
  dim layout[] = {dim(0, (index_t{1} << 40) - 1), dim(0, (index_t{1} << 30) - 1), dim(0, 1)};
  raw_buffer l{nullptr, 4, 3, layout};
  EXPECT_EQ(l.init_strides(64), std::nullopt);
  EXPECT_EQ(layout[0].stride(), 4);
  EXPECT_EQ(layout[1].stride(), index_t{1} << 42);
  EXPECT_NE(layout[2].stride(), dim::auto_stride);
  EXPECT_EQ(l.size_bytes(), 0u);
}

TEST(raw_buffer, allocate) {
  dim dims[] = {dim(-3, 4), dim(2, 5), dim(0, 9, dim::auto_stride, 4)};
  raw_buffer b{nullptr, 4, 3, dims};
  void* block = b.allocate();
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(b.base, block);
  EXPECT_EQ(b.size_bytes(), 4u * 8 * 4 * 4);
  // Every element is inside the block (ASan checks the writes).
  for_each_coord(dims_of(b), [&](span<const index_t> c) { *static_cast<int*>(b.address_at(c)) = 1; });
  std::free(block);

  // Base and stride alignment.
  for (index_t alignment : {16, 64, 256}) {
    dim adims[] = {dim(0, 6), dim(0, 2)};
    raw_buffer a{nullptr, 1, 2, adims};
    block = a.allocate(alignment, 32);
    ASSERT_NE(block, nullptr);
    EXPECT_TRUE(is_aligned(a.base, alignment));
    EXPECT_EQ(adims[1].stride(), 32);
    for_each_coord(dims_of(a), [&](span<const index_t> c) { *static_cast<char*>(a.address_at(c)) = 1; });
    std::free(block);
  }

  // Negative strides: the base is offset so that every element is in the block.
  dim ndims[] = {dim(0, 4, -4), dim(1, 3, 20), dim(0, 2, -60)};
  raw_buffer n{nullptr, 4, 3, ndims};
  block = n.allocate();
  EXPECT_EQ(n.base, static_cast<char*>(block) + 16 + 120);
  for_each_coord(dims_of(n), [&](span<const index_t> c) {
    char* p = static_cast<char*>(n.address_at(c));
    EXPECT_GE(p, static_cast<char*>(block));
    EXPECT_LE(p + 4, static_cast<char*>(block) + n.size_bytes());
  });
  std::free(block);

  // A folded dim with a negative stride: slot 0 is at the base, the other slots below it.
  dim fdims[] = {dim(0, 9, -8, 3), dim(0, 1, 4)};
  raw_buffer f{nullptr, 4, 2, fdims};
  block = f.allocate();
  EXPECT_EQ(f.size_bytes(), 4u + 2 * 8 + 4);
  EXPECT_EQ(f.base, static_cast<char*>(block) + 16);
  EXPECT_EQ(f.address_at(2, 1), static_cast<char*>(block) + 4);
  std::free(block);

  dim edims[] = {dim(0, -1)};
  raw_buffer e{nullptr, 4, 1, edims};
  block = e.allocate();
  EXPECT_NE(block, nullptr);
  std::free(block);
}

TEST(raw_buffer, allocate_overflowing_size) {
  // The size overflows: nothing is allocated, null is returned and the base is unchanged.
  dim huge[] = {dim(0, (index_t{1} << 62) - 1)};
  raw_buffer b{nullptr, 4, 1, huge};
  EXPECT_EQ(b.allocate(), nullptr);
  EXPECT_EQ(b.base, nullptr);
  dim sum[] = {dim(0, 1, max_index / 2 + 1), dim(0, 1, max_index / 2 + 1)};
  raw_buffer s{nullptr, 4, 2, sum};
  EXPECT_EQ(s.allocate(), nullptr);
  // buffer<T>::allocate leaves a null base.
  buffer<int, 2> typed({index_t{1} << 40, index_t{1} << 30});
  typed.allocate();
  EXPECT_EQ(typed.base(), nullptr);
}

TEST(raw_buffer, make) {
  // Dims given: descriptor, dims and data in one block; the base is writable.
  dim dims[] = {dim(0, 3, 4), dim(1, 2, 16)};
  raw_buffer_ptr b = raw_buffer::make(2, 4, dims);
  EXPECT_EQ(b->rank, 2u);
  EXPECT_EQ(b->elem_size, 4u);
  ASSERT_NE(b->base, nullptr);
  EXPECT_EQ(b->dim(1), dims[1]);
  EXPECT_NE(b->dims, dims);
  for_each_coord(dims_of(*b), [&](span<const index_t> c) { *static_cast<int*>(b->address_at(c)) = 7; });
  EXPECT_EQ(*static_cast<int*>(b->address_at(3, 2)), 7);
  EXPECT_TRUE(is_aligned(b->base, alignof(std::max_align_t)));

  // Rank 0: one element.
  raw_buffer_ptr s = raw_buffer::make(0, 8);
  ASSERT_NE(s->base, nullptr);
  *static_cast<double*>(s->base) = 1.5;
  EXPECT_EQ(s->cast<double>()(), 1.5);
  EXPECT_EQ(raw_buffer::make(0, 0)->base, nullptr);

  // Without dims: default dims and no data.
  raw_buffer_ptr e = raw_buffer::make(3, 1);
  EXPECT_EQ(e->dim(2), dim());
  EXPECT_EQ(e->base, nullptr);
  // Dims with auto strides or empty: no data (strides are not filled in).
  dim autos[] = {dim(0, 3), dim(0, 1, 16)};
  raw_buffer_ptr a = raw_buffer::make(2, 4, autos);
  EXPECT_EQ(a->base, nullptr);
  EXPECT_EQ(a->dim(0).stride(), dim::auto_stride);
  dim empty[] = {dim(0, -1, 4)};
  EXPECT_EQ(raw_buffer::make(1, 4, empty)->base, nullptr);

  // Alignment, and a negative stride (the base is the element of min coordinates).
  dim neg[] = {dim(0, 9, -4)};
  raw_buffer_ptr al = raw_buffer::make(1, 4, neg, 128);
  EXPECT_TRUE(is_aligned(static_cast<char*>(al->base) - 36, 128));
  for (index_t i = 0; i < 10; ++i) *static_cast<int*>(al->address_at(i)) = i;

  // A shared_ptr: shared, counted, convertible to const.
  raw_buffer_ptr shared = b;
  EXPECT_EQ(b.use_count(), 2);
  const_raw_buffer_ptr c = shared;
  EXPECT_EQ(c.get(), b.get());
  shared.reset();
  EXPECT_EQ(b.use_count(), 2);
  EXPECT_NE(b, nullptr);
}

TEST(raw_buffer, make_copy) {
  buffer<int, 2> src({5, 4});
  src.allocate();
  for_each_coord(dims_of(src), [&](span<const index_t> c) { src(c) = c[0] * 10 + c[1]; });
  src.translate(3);
  src.crop(1, 1, 2);
  // A folded source: the copy has the same dims (strides and fold factors included).
  src.mutable_dim(1).set_fold_factor(4);
  src.mutable_dim(1).set_bounds(1, 2);
  raw_buffer_ptr c = raw_buffer::make_copy(src);
  ASSERT_EQ(c->rank, 2u);
  EXPECT_EQ(c->dim(0), src.dim(0));
  EXPECT_EQ(c->dim(1), src.dim(1));
  EXPECT_NE(c->base, src.base());
  for_each_coord(dims_of(*c), [&](span<const index_t> x) { EXPECT_EQ(*static_cast<int*>(c->address_at(x)), src(x)); });

  // A broadcast source dim stays one: one row of memory.
  buffer<int, 2> row({3, 1});
  row.allocate();
  for (int i = 0; i < 3; ++i) row(i, 0) = i + 1;
  row.mutable_dim(1) = dim(0, 99, 0);
  raw_buffer_ptr r = raw_buffer::make_copy(row, 64);
  EXPECT_EQ(r->dim(1).stride(), 0);
  EXPECT_EQ(r->size_bytes(), 12u);
  EXPECT_TRUE(is_aligned(r->base, 64));
  EXPECT_EQ(*static_cast<int*>(r->address_at(2, 50)), 3);

  // An empty source makes an empty copy.
  buffer<int, 2> empty({0, 3});
  raw_buffer_ptr e = raw_buffer::make_copy(empty);
  EXPECT_EQ(e->elem_count(), 0u);
  EXPECT_EQ(e->size_bytes(), 0u);
}

TEST(raw_buffer, make_scalar) {
  raw_buffer_ptr s = raw_buffer::make_scalar<double>(2.5);
  EXPECT_EQ(s->rank, 0u);
  EXPECT_EQ(s->elem_size, sizeof(double));
  EXPECT_EQ(s->cast<double>()(), 2.5);
  const std::int16_t v = -3;
  raw_buffer_ptr t = raw_buffer::make_scalar(sizeof(v), &v, 32);
  EXPECT_TRUE(is_aligned(t->base, 32));
  EXPECT_EQ(*static_cast<std::int16_t*>(t->base), -3);
  raw_buffer_ptr u = raw_buffer::make_scalar<int>(9, 256);
  EXPECT_TRUE(is_aligned(u->base, 256));

  // A reference to the caller's value, not a copy.
  int x = 4;
  raw_buffer ref = raw_buffer::make_scalar_ref(x);
  EXPECT_EQ(ref.base, &x);
  EXPECT_EQ(ref.rank, 0u);
  EXPECT_EQ(ref.elem_size, sizeof(int));
  raw_buffer ref2 = raw_buffer::make_scalar_ref(sizeof(int), &x);
  EXPECT_EQ(ref2.base, &x);
}

TEST(raw_buffer, cast) {
  buffer<float, 1> b({4});
  b.allocate();
  raw_buffer& raw = b;
  raw.cast<float>()(2) = 1.5f;
  EXPECT_EQ(b(2), 1.5f);
  const raw_buffer& craw = b;
  EXPECT_EQ(craw.cast<float>()(2), 1.5f);
  // void and const void need no matching element size.
  const buffer<const void>& v = craw.cast<const void>();
  EXPECT_EQ(v.address_at(2), &b(2));
  buffer<void>& w = raw.cast<void>();
  EXPECT_EQ(w.base(), b.base());
}

TEST(buffer, default_rank_is_dims_size) {
  buffer<int, 2> b;
  EXPECT_EQ(b.rank, 2u);
  EXPECT_EQ(b.elem_size, sizeof(int));
  EXPECT_EQ(b.dim(0), dim());
  EXPECT_EQ(b.dim(1), dim());
  buffer<int> scalar;
  EXPECT_EQ(scalar.rank, 0u);
  // A default buffer is filled in and allocated by the client.
  b.mutable_dim(0).set_bounds(0, 2);
  b.mutable_dim(1).set_bounds(0, 1);
  b.allocate();
  b(2, 1) = 5;
  EXPECT_EQ(b.base()[5], 5);
}

TEST(buffer, construction_and_access) {
  buffer<int, 3> b({4, 3, 2});
  EXPECT_EQ(b.rank, 3u);
  EXPECT_EQ(b.elem_size, sizeof(int));
  EXPECT_EQ(b.dim(0), dim(0, 3, 4));
  EXPECT_EQ(b.dim(1), dim(0, 2, 16));
  EXPECT_EQ(b.dim(2), dim(0, 1, 48));
  EXPECT_EQ(b.base(), nullptr);
  b.allocate();
  ASSERT_NE(b.base(), nullptr);
  for_each_coord(dims_of(b), [&](span<const index_t> c) { b(c) = c[0] + 10 * c[1] + 100 * c[2]; });
  EXPECT_EQ(b(3, 2, 1), 123);
  EXPECT_EQ(b.at(1, 0, 1), 101);
  EXPECT_EQ(&b(1, 2, 0), b.base() + 9);
  // Vectors and arrays of indices.
  EXPECT_EQ(b(std::vector<index_t>{1, 2}), 21);
  EXPECT_EQ(b.at(std::array<index_t, 3>{3, 1, 1}), 113);
  EXPECT_EQ(b(slice, 1), 10);
  b.crop(0, 1, 2).slice(2, 1);
  EXPECT_EQ(b(1, 1), 111);
  b.translate(-1);
  EXPECT_EQ(b(0, 1), 111);

  // Over existing memory: extents, or rank 1 of a size.
  int data[6] = {1, 2, 3, 4, 5, 6};
  buffer<const int, 2> view(data, {3, 2});
  EXPECT_EQ(view(2, 1), 6);
  static_assert(std::is_same_v<decltype(view(0, 0)), const int&>);
  buffer<int> line(data, 6);
  EXPECT_EQ(line.rank, 1u);
  EXPECT_EQ(line.dim(0), dim(0, 5, 4));
  EXPECT_EQ(line(4), 5);
  // Rank 0: the element at base.
  buffer<int> scalar(data, span<const index_t>());
  EXPECT_EQ(scalar(), 1);
  EXPECT_EQ(scalar.at(), 1);
}

TEST(buffer, void_elements) {
  // buffer<void> has elem_size 0 unless given one.
  buffer<void> unsized({4, 2});
  EXPECT_EQ(unsized.elem_size, 0u);
  buffer<void, 2> b({4, 2}, sizeof(short));
  EXPECT_EQ(b.elem_size, sizeof(short));
  EXPECT_EQ(b.dim(1), dim(0, 1, 8));
  b.allocate();
  ASSERT_NE(b.base(), nullptr);
  static_assert(std::is_same_v<decltype(b.base()), void*>);
  b.cast<short>()(3, 1) = 9;
  EXPECT_EQ(static_cast<short*>(b.base())[7], 9);
  buffer<const void> cb = b;
  EXPECT_EQ(cb.address_at(3, 1), b.address_at(3, 1));
  const std::vector<index_t> extents = {3, 2};
  buffer<void> from_span(extents, 8);
  EXPECT_EQ(from_span.dim(1), dim(0, 1, 24));
  buffer<void> r(3, 4);
  EXPECT_EQ(r.rank, 3u);
  EXPECT_EQ(r.elem_size, 4u);
  short s = 3;
  buffer<void> over(&s, 1, sizeof(short));
  EXPECT_EQ(over.cast<short>()(0), 3);
}

TEST(buffer, copies_do_not_own_memory) {
  buffer<int, 1> owner({8});
  owner.allocate();
  std::fill_n(owner.base(), 8, 7);
  {
    buffer<int, 1> copy = owner;
    EXPECT_EQ(copy.base(), owner.base());
    buffer<int, 1> assigned;
    assigned = owner;
    EXPECT_EQ(assigned(3), 7);
    // From another DimsSize, and from a raw_buffer.
    buffer<int, 4> wider = owner;
    EXPECT_EQ(wider(5), 7);
    const raw_buffer& raw = owner;
    buffer<int> from_raw = raw;
    EXPECT_EQ(from_raw(2), 7);
  }
  // The copies are gone; the memory is still the owner's (ASan would flag a use after free).
  EXPECT_EQ(owner(5), 7);
  buffer<int, 1> moved(std::move(owner));
  EXPECT_EQ(moved(5), 7);
  moved.free();
  EXPECT_EQ(moved.base(), nullptr);
}

TEST(buffer, allocate_alignment) {
  for (index_t alignment : {1, 16, 128, 4096}) {
    buffer<std::uint8_t, 2> b({3, 5});
    b.allocate(alignment);
    ASSERT_NE(b.base(), nullptr);
    EXPECT_TRUE(is_aligned(b.base(), alignment));
    b(2, 4) = 1;
  }
}

TEST(buffer, inline_and_heap_dims) {
  buffer<char, 2> small({2, 3});
  const char* begin = reinterpret_cast<const char*>(&small);
  const char* dims = reinterpret_cast<const char*>(small.dims);
  EXPECT_TRUE(dims >= begin && dims < begin + sizeof(small));
  buffer<char, 2> large({2, 3, 4, 5});
  EXPECT_EQ(large.rank, 4u);
  begin = reinterpret_cast<const char*>(&large);
  dims = reinterpret_cast<const char*>(large.dims);
  EXPECT_FALSE(dims >= begin && dims < begin + sizeof(large));
  EXPECT_EQ(large.dim(3), dim(0, 4, 24));
  buffer<char, 2> copy = large;
  EXPECT_NE(copy.dims, large.dims);
  EXPECT_EQ(copy.dim(3), large.dim(3));
  large.allocate();
  large(1, 2, 3, 4) = 'x';
  EXPECT_EQ(*static_cast<char*>(large.address_at(1, 2, 3, 4)), 'x');
}

TEST(buffer, mutable_dim_raises_rank) {
  buffer<int, 4> b({10});
  ASSERT_EQ(b.rank, 1u);
  dim& d3 = b.mutable_dim(3);
  EXPECT_EQ(b.rank, 4u);
  EXPECT_EQ(&d3, &b.dims[3]);
  EXPECT_EQ(b.dim(1), dim::broadcast());
  EXPECT_EQ(b.dim(2), dim::broadcast());
  EXPECT_EQ(b.dim(3), dim::broadcast());
  // Still inline.
  const char* begin = reinterpret_cast<const char*>(&b);
  EXPECT_TRUE(reinterpret_cast<const char*>(b.dims) >= begin &&
              reinterpret_cast<const char*>(b.dims) < begin + sizeof(b));
  // A broadcast has fold factor 0, which a non-zero stride must not keep: assign a whole dim.
  d3 = dim(0, 1, 40);
  b.allocate();
  b(9, 0, 0, 1) = 3;
  EXPECT_EQ(b.base()[19], 3);
  // Past the inline room, the dims move to the heap.
  buffer<int, 1> c({5});
  c.mutable_dim(2) = dim(0, 1, 20);
  EXPECT_EQ(c.rank, 3u);
  EXPECT_EQ(c.dim(0), dim(0, 4, 4));
  EXPECT_EQ(c.dim(1), dim::broadcast());
}

TEST(buffer, unslice) {
  int data[24];
  buffer<int, 3> b(data, {2, 3, 4});
  const dim d0 = b.dim(0), d1 = b.dim(1);
  dim* dims = b.dims;
  // After slice(0), unslice(0) steps the dims pointer back.
  b.slice(0);
  EXPECT_EQ(b.dims, dims + 1);
  b.unslice(0, d0);
  EXPECT_EQ(b.dims, dims);
  EXPECT_EQ(b.rank, 3u);
  EXPECT_EQ(b.dim(0), d0);
  EXPECT_EQ(&b(1, 2, 3), &data[1 + 2 * 2 + 3 * 6]);
  // After slice(1), unslice(1) inserts the dim back.
  b.slice(1);
  EXPECT_EQ(b.rank, 2u);
  EXPECT_EQ(b.dim(1), dim(0, 3, 24));
  b.unslice(1, d1);
  EXPECT_EQ(b.rank, 3u);
  EXPECT_EQ(b.dim(1), d1);
  EXPECT_EQ(&b(1, 2, 3), &data[1 + 2 * 2 + 3 * 6]);
  // With no inline room left, the dims move to the heap.
  buffer<int, 1> c(data, {4});
  c.slice(0);
  c.unslice(0, dim(0, 3, 4));
  c.unslice(1, dim(0, 5, 16));
  EXPECT_EQ(c.rank, 2u);
  EXPECT_EQ(&c(3, 5), &data[23]);
}

TEST(scalar, value_and_copies) {
  scalar<int> s(5);
  EXPECT_EQ(s.rank, 0u);
  EXPECT_EQ(s.elem_size, sizeof(int));
  EXPECT_EQ(s.base, &s.value);
  EXPECT_EQ(s(), 5);
  s() = 6;
  EXPECT_EQ(s.value, 6);
  // A copy refers to its own value.
  scalar<int> t = s;
  EXPECT_EQ(t.base, &t.value);
  EXPECT_EQ(t(), 6);
  scalar<double> d;
  EXPECT_EQ(d(), 0.0);

  // As a pad value.
  buffer<int, 1> src({2});
  src.allocate();
  src(0) = 1;
  src(1) = 2;
  src.translate(1);
  buffer<int, 1> dst({4});
  dst.allocate();
  copy(src, dst, scalar<int>(-1));
  EXPECT_EQ(std::vector<int>(dst.base(), dst.base() + 4), (std::vector<int>{-1, 1, 2, -1}));
  // As a copy destination.
  scalar<int> out;
  copy(buffer<int>(&src(2), span<const index_t>()), out);
  EXPECT_EQ(out(), 2);
  // for_each passes void* for it (Buf::pointer of raw_buffer).
  for_each_element(
      [&](int* p, void* v) {
        static_assert(std::is_same_v<decltype(v), void*>);
        *p = *static_cast<int*>(v);
      },
      dst, scalar<int>(8));
  EXPECT_EQ(dst(3), 8);
}

TEST(for_each, pointer_types) {
  int data[4] = {1, 2, 3, 4};
  buffer<const int, 1> in(data, 4);
  buffer<int, 1> out({4});
  out.allocate();
  raw_buffer& raw_out = out;
  int sum = 0;
  for_each_element(
      [&](void* o, const int* i) {
        *static_cast<int*>(o) = *i * 2;
        sum += *i;
      },
      raw_out, in);
  EXPECT_EQ(sum, 10);
  EXPECT_EQ(out(3), 8);
  index_t n = 0;
  for_each_contiguous_slice(
      in,
      [&](index_t extent, const int* i, int* o) {
        n += extent;
        EXPECT_EQ(*o, *i * 2);
      },
      out);
  EXPECT_EQ(n, 4);
}

TEST(free_functions, offset_and_align) {
  int data[4];
  EXPECT_EQ(offset_bytes(data, 8), &data[2]);
  EXPECT_EQ(offset_bytes(static_cast<int*>(nullptr), 8), nullptr);
  const void* p = data;
  EXPECT_EQ(offset_bytes_non_null(p, 4), static_cast<const void*>(&data[1]));
  static_assert(std::is_same_v<decltype(offset_bytes(p, 4)), const void*>);
  char* c = reinterpret_cast<char*>(64 * 100 + 3);
  EXPECT_EQ(align_up(c, 64), reinterpret_cast<char*>(64 * 101));
  EXPECT_EQ(align_up(reinterpret_cast<char*>(64 * 100), 64), reinterpret_cast<char*>(64 * 100));
}

TEST(validate_buffer, offsets_and_addresses) {
  dim dims[] = {dim(0, 9, 4), dim(0, 4, 40)};
  EXPECT_TRUE(validate_buffer(raw_buffer{nullptr, 4, 2, dims}));
  int data[50];
  EXPECT_TRUE(validate_buffer(raw_buffer{data, 4, 2, dims}));
  // Offsets that overflow.
  dim huge[] = {dim(0, index_t{1} << 61, 8)};
  EXPECT_FALSE(validate_buffer(raw_buffer{nullptr, 4, 1, huge}));
  dim sum[] = {dim(0, 1, max_index / 2 + 1), dim(0, 1, max_index / 2 + 1)};
  EXPECT_FALSE(validate_buffer(raw_buffer{nullptr, 4, 2, sum}));
  // Fits in index_t but wraps around the address space from this base.
  dim big[] = {dim(0, 1, max_index / 2)};
  EXPECT_TRUE(validate_buffer(raw_buffer{nullptr, 4, 1, big}));
  EXPECT_FALSE(validate_buffer(raw_buffer{reinterpret_cast<void*>(~std::uintptr_t{0} - 100), 4, 1, big}));
  // Negative strides below address 0.
  dim neg[] = {dim(0, 9, -4)};
  EXPECT_FALSE(validate_buffer(raw_buffer{reinterpret_cast<void*>(16), 4, 1, neg}));
  EXPECT_TRUE(validate_buffer(raw_buffer{&data[9], 4, 1, neg}));
  // Folds bound the offsets; stride 0 adds nothing; empty buffers are valid.
  dim folded[] = {dim(0, max_index / 2, 8, 4)};
  EXPECT_TRUE(validate_buffer(raw_buffer{data, 4, 1, folded}));
  dim broadcast[] = {dim(-(max_index / 2), max_index / 2, 0)};
  EXPECT_TRUE(validate_buffer(raw_buffer{data, 4, 1, broadcast}));
  dim empty[] = {dim(0, index_t{1} << 61, 8), dim(0, -1, 4)};
  EXPECT_TRUE(validate_buffer(raw_buffer{nullptr, 4, 2, empty}));
}

TEST(optimize_dims, can_fuse_and_fuse) {
  // Contiguous: outer stride == inner stride * inner extent.
  EXPECT_TRUE(can_fuse(dim(0, 9, 4), dim(0, 4, 40)));
  EXPECT_FALSE(can_fuse(dim(0, 9, 4), dim(0, 4, 44)));
  EXPECT_FALSE(can_fuse(dim(0, -1, 4), dim(0, 4, 0)));
  // A point outer dim fuses whatever its stride; a broadcast with a broadcast.
  EXPECT_TRUE(can_fuse(dim(0, 9, 4), dim(3, 3, 1000)));
  EXPECT_TRUE(can_fuse(dim(0, 9, 0), dim(0, 4, 0)));
  EXPECT_FALSE(can_fuse(dim(0, 9, 4), dim::broadcast()));
  // A folded inner dim does not.
  EXPECT_FALSE(can_fuse(dim(0, 9, 4, 10), dim(0, 4, 40)));

  EXPECT_EQ(fuse(dim(0, 9, 4), dim(0, 4, 40)), dim(0, 49, 4));
  EXPECT_EQ(fuse(dim(2, 11, 4), dim(1, 4, 40)), dim(10, 49, 4));
  EXPECT_EQ(fuse(dim(0, 9, 4), dim(0, 4, 40, 2)), dim(0, 49, 4, 20));
  EXPECT_EQ(fuse(dim(0, 9, 0), dim::broadcast()), dim::broadcast());

  // The fused dim addresses what the two did.
  int data[100];
  dim dims[] = {dim(2, 11, 4), dim(1, 4, 40), dim(0, 1, 200)};
  raw_buffer b{data, 4, 3, dims};
  const void* at = b.address_at(5, 3, 1);
  fuse<fuse_type::remove>(0, 1, b);
  EXPECT_EQ(b.rank, 2u);
  EXPECT_EQ(b.address_at(3 * 10 + (5 - 2), 1), at);
  dim kdims[] = {dim(0, 9, 4), dim(0, 4, 40)};
  raw_buffer k{data, 4, 2, kdims};
  fuse<fuse_type::keep>(0, 1, k);
  EXPECT_EQ(k.rank, 2u);
  EXPECT_EQ(k.dim(1).min(), 0);
  EXPECT_EQ(k.dim(1).max(), 0);
  EXPECT_EQ(k.dim(0), dim(0, 49, 4));
  dim udims[] = {dim(0, 9, 4), dim(0, 4, 40)};
  raw_buffer u{data, 4, 2, udims};
  fuse<fuse_type::undef>(0, 1, u);
  EXPECT_EQ(u.dim(0), dim(0, 49, 4));
  EXPECT_EQ(u.dim(1), dim(0, 4, 40));
  // A dim past the rank is a broadcast.
  dim sdims[] = {dim(0, 9, 0)};
  raw_buffer s{data, 4, 1, sdims};
  fuse<fuse_type::remove>(0, 1, s);
  EXPECT_EQ(s.rank, 1u);
  EXPECT_EQ(s.dim(0), dim::broadcast());
}

TEST(optimize_dims, sort_and_fuse) {
  // A transposed buffer: sort_dims puts the smaller stride first (in every buffer).
  dim t[] = {dim(0, 3, 40), dim(0, 9, 4)};
  dim o[] = {dim(0, 3, 4), dim(0, 9, 16)};
  raw_buffer tb{nullptr, 4, 2, t}, ob{nullptr, 4, 2, o};
  EXPECT_TRUE(sort_dims(tb, ob));
  EXPECT_EQ(tb.dim(0), dim(0, 9, 4));
  EXPECT_EQ(tb.dim(1), dim(0, 3, 40));
  EXPECT_EQ(ob.dim(0), dim(0, 9, 16));
  EXPECT_FALSE(sort_dims(tb, ob));
  // dim_sets: only dims of the same set move.
  dim t3[] = {dim(0, 1, 100), dim(0, 3, 40), dim(0, 9, 4)};
  raw_buffer t3b{nullptr, 4, 3, t3};
  const int sets[] = {0, 1, 1};
  EXPECT_TRUE(sort_dims(sets, t3b));
  EXPECT_EQ(t3b.dim(0).stride(), 100);
  EXPECT_EQ(t3b.dim(1).stride(), 4);
  EXPECT_EQ(t3b.dim(2).stride(), 40);

  // fuse_contiguous_dims: dense dims fuse; bounds must match in the inner dim of every buffer.
  dim a[] = {dim(0, 9, 4), dim(0, 4, 40), dim(0, 2, 200)};
  dim c[] = {dim(0, 9, 2), dim(0, 4, 20), dim(0, 2, 400)};
  raw_buffer ab{nullptr, 4, 3, a}, cb{nullptr, 2, 3, c};
  EXPECT_EQ(fuse_contiguous_dims(ab, cb), 1);
  EXPECT_EQ(ab.rank, 2u);
  EXPECT_EQ(ab.dim(0), dim(0, 49, 4));
  EXPECT_EQ(ab.dim(1), dim(0, 2, 200));
  EXPECT_EQ(cb.dim(0), dim(0, 49, 2));
  EXPECT_EQ(cb.dim(1), dim(0, 2, 400));
  // A buffer of lower rank (broadcast in the dims it lacks) does not keep them apart: dims 1 and 2
  // fuse; dims 0 and 1 do not (the rank-1 buffer has dim 0 but broadcasts in dim 1).
  dim e[] = {dim(0, 9, 4), dim(0, 4, 40), dim(0, 2, 200)};
  dim r[] = {dim(0, 9, 4)};
  raw_buffer eb{nullptr, 4, 3, e}, rb{nullptr, 4, 1, r};
  EXPECT_EQ(fuse_contiguous_dims(eb, rb), 1);
  EXPECT_EQ(eb.rank, 2u);
  EXPECT_EQ(eb.dim(0), dim(0, 9, 4));
  EXPECT_EQ(eb.dim(1), dim(0, 14, 40));
  EXPECT_EQ(rb.rank, 1u);
  EXPECT_EQ(rb.dim(0), dim(0, 9, 4));
  // The first buffer of lower rank too.
  dim e2[] = {dim(0, 9, 4), dim(0, 4, 40), dim(0, 2, 200)};
  dim r2[] = {dim(0, 9, 4)};
  raw_buffer eb2{nullptr, 4, 3, e2}, rb2{nullptr, 4, 1, r2};
  EXPECT_EQ(fuse_contiguous_dims(rb2, eb2), 1);
  EXPECT_EQ(eb2.rank, 2u);
  EXPECT_EQ(eb2.dim(1), dim(0, 14, 40));
  // dim_sets keep dims of different sets apart.
  dim d[] = {dim(0, 9, 4), dim(0, 4, 40)};
  raw_buffer db{nullptr, 4, 2, d};
  const int apart[] = {0, 1};
  EXPECT_EQ(fuse_contiguous_dims(apart, db), 0);
  EXPECT_EQ(db.rank, 2u);
}

TEST(optimize_dims, transposed_strided_and_broadcast) {
  // Transposed dense: sorted, then fused into one dim.
  int data[40];
  dim t[] = {dim(0, 3, 40), dim(0, 9, 4)};
  raw_buffer tb{data, 4, 2, t};
  EXPECT_EQ(optimize_dims(tb), 1);
  ASSERT_EQ(tb.rank, 1u);
  EXPECT_EQ(tb.dim(0), dim(0, 39, 4));
  EXPECT_EQ(tb.base, data);

  // Strided rows (padding between rows) do not fuse; sorted anyway.
  dim s[] = {dim(0, 4, 48), dim(0, 9, 4)};
  raw_buffer sb{nullptr, 4, 2, s};
  EXPECT_EQ(optimize_dims(sb), 0);
  EXPECT_EQ(sb.rank, 2u);
  EXPECT_EQ(sb.dim(0), dim(0, 9, 4));
  EXPECT_EQ(sb.dim(1), dim(0, 4, 48));

  // A broadcast dim of the source against a dense destination: fuses only where both can.
  dim dst[] = {dim(0, 9, 4), dim(0, 4, 40), dim(0, 1, 200)};
  dim src[] = {dim(0, 9, 4), dim(0, 4, 0), dim(0, 1, 40)};
  raw_buffer dstb{nullptr, 4, 3, dst}, srcb{nullptr, 4, 3, src};
  EXPECT_EQ(optimize_dims(dstb, srcb), 0);
  EXPECT_EQ(dstb.rank, 3u);

  // Dims where every buffer is the same single point are removed, at the point.
  int ring[40];
  dim p[] = {dim(0, 9, 4), dim(6, 6, 40, 4)};
  dim q[] = {dim(0, 9, 4), dim(6, 6, 40)};
  raw_buffer pb{ring, 4, 2, p}, qb{ring, 4, 2, q};
  const void* p_at = pb.address_at(3, 6);
  EXPECT_EQ(optimize_dims(pb, qb), 1);
  EXPECT_EQ(pb.rank, 1u);
  EXPECT_EQ(qb.rank, 1u);
  EXPECT_EQ(pb.address_at(3), p_at);
  EXPECT_EQ(qb.address_at(3), &ring[3]);

  // With dim_sets, points are not removed and only dims of one set fuse or move.
  dim ds_a[] = {dim(0, 3, 40), dim(0, 9, 4), dim(0, 0, 160), dim(0, 1, 160)};
  raw_buffer dsb{nullptr, 4, 4, ds_a};
  const int sets[] = {0, 0, 1, 1};
  EXPECT_EQ(optimize_dims(sets, dsb), 2);
  ASSERT_EQ(dsb.rank, 2u);
  EXPECT_EQ(dsb.dim(0), dim(0, 39, 4));
  EXPECT_EQ(dsb.dim(1), dim(0, 1, 160));

  // Lower rank buffers: their missing dims are broadcasts.
  dim full[] = {dim(0, 9, 4), dim(0, 4, 40)};
  dim row[] = {dim(0, 9, 4)};
  raw_buffer fb{nullptr, 4, 2, full}, rb{nullptr, 4, 1, row};
  EXPECT_EQ(optimize_dims(fb, rb), 0);
  EXPECT_EQ(fb.rank, 2u);
}

}  // namespace slinky
