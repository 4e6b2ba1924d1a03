// Tests of the strided walk: for_each_element, for_each_contiguous_slice, copy, pad and fill,
// including randomized comparisons with naive references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <type_traits>
#include <vector>

#include "coords.h"
#include "slinky/runtime/buffer.h"

namespace slinky {

namespace {

using test::dims_of;
using test::for_each_coord;

}  // namespace

TEST(for_each_element, order_and_lower_rank) {
  buffer<int, 2> a({3, 2});
  buffer<int, 1> row({3});
  a.allocate();
  row.allocate();
  for (int i = 0; i < 3; ++i) row(i) = i * 10;
  std::vector<int*> visited;
  for_each_element(
      [&](int* pa, int* pr) {
        visited.push_back(pa);
        *pa = *pr;
      },
      a, row);
  ASSERT_EQ(visited.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(visited[i], a.base() + i);
  EXPECT_EQ(a(2, 1), 20);
  EXPECT_EQ(a(1, 0), 10);
}

TEST(for_each_element, partial_coverage_and_folds) {
  buffer<int, 1> a({10});
  buffer<int, 1> b({10});
  a.allocate();
  b.allocate();
  b.crop(0, 3, 6);
  // A folded buffer covering everything: addresses wrap.
  buffer<int, 1> f({4});
  f.allocate();
  f.mutable_dim(0).set_bounds(0, 9).set_fold_factor(4);
  int n = 0;
  for_each_element(
      [&](int* pa, int* pb, int* pf) {
        const index_t x = pa - a.base();
        EXPECT_EQ(pb, b.contains(x) ? &b(x) : nullptr);
        EXPECT_EQ(pf, f.base() + x % 4);
        ++n;
      },
      a, b, f);
  EXPECT_EQ(n, 10);
}

TEST(for_each_element, rank0_and_empty) {
  int value = 3;
  buffer<int> scalar;
  scalar.raw_buffer::base = &value;
  int calls = 0;
  for_each_element([&](int* p) { calls += *p; }, scalar);
  EXPECT_EQ(calls, 3);
  buffer<int, 2> empty({3, 0});
  empty.allocate();
  for_each_element([&](int*) { ++calls; }, empty);
  EXPECT_EQ(calls, 3);
}

// Walks with more dims than the loop nest run at the call site holds (for_each_max_rank), and
// walks whose first buffer has no memory, visit the same elements with the same pointers.
TEST(for_each_element, many_dims_and_null_first_buffer) {
  // 10 dims of extent 2, padded so that none fuse.
  std::vector<dim> dims;
  index_t stride = sizeof(int);
  for (int d = 0; d < 10; ++d) {
    dims.emplace_back(0, 1, stride);
    stride = stride * 2 + static_cast<index_t>(sizeof(int));
  }
  std::vector<int> mem_a(stride / sizeof(int)), mem_b(stride / sizeof(int));
  const raw_buffer a{mem_a.data(), sizeof(int), dims.size(), dims.data()};
  const raw_buffer b{mem_b.data(), sizeof(int), dims.size(), dims.data()};
  std::vector<const void*> expected_a, expected_b;
  for_each_coord(dims, [&](span<const index_t> c) {
    expected_a.push_back(a.address_at(c));
    expected_b.push_back(b.address_at(c));
  });
  std::size_t i = 0;
  for_each_element(
      [&](void* pa, void* pb) {
        ASSERT_LT(i, expected_a.size());
        EXPECT_EQ(pa, expected_a[i]);
        EXPECT_EQ(pb, expected_b[i]);
        ++i;
      },
      a, b);
  EXPECT_EQ(i, expected_a.size());
  i = 0;
  for_each_contiguous_slice(
      a,
      [&](index_t n, void* pa, void* pb) {
        ASSERT_LT(i, expected_a.size());
        EXPECT_EQ(n, 2);
        EXPECT_EQ(pa, expected_a[i]);
        EXPECT_EQ(pb, expected_b[i]);
        i += n;
      },
      b);
  EXPECT_EQ(i, expected_a.size());

  // A first buffer without memory over the first two dims: its pointers are null, the others' are
  // not (b's dims past 2 are at their min), and runs are still contiguous.
  const raw_buffer none{nullptr, sizeof(int), 2, dims.data()};
  std::vector<const void*> expected;
  for_each_coord({dims[0], dims[1]}, [&](span<const index_t> c) { expected.push_back(b.address_at(c)); });
  i = 0;
  for_each_element(
      [&](int* pn, const int* pb) {
        ASSERT_LT(i, expected.size());
        EXPECT_EQ(pn, nullptr);
        EXPECT_EQ(pb, expected[i++]);
      },
      none.cast<int>(), b.cast<const int>());
  EXPECT_EQ(i, expected.size());
  i = 0;
  for_each_contiguous_slice(
      none,
      [&](index_t n, void* pn, void* pb) {
        ASSERT_LT(i, expected.size());
        EXPECT_EQ(n, 2);
        EXPECT_EQ(pn, nullptr);
        EXPECT_EQ(pb, expected[i]);
        i += n;
      },
      b);
  EXPECT_EQ(i, expected.size());
}

TEST(for_each_contiguous_slice, call_counts) {
  buffer<int, 3> dense({8, 4, 2});
  dense.allocate();
  int calls = 0;
  index_t total = 0;
  auto count = [&](index_t n, int*) {
    ++calls;
    total += n;
  };
  for_each_contiguous_slice(dense, count);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(total, 64);

  // Rows padded by one element: one call per row.
  buffer<int, 2> padded({8, 4});
  padded.mutable_dim(1).set_stride(9 * 4);
  padded.allocate();
  calls = total = 0;
  for_each_contiguous_slice(padded, count);
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(total, 32);

  // Contiguous along dim 1 only (a transposed layout): one call per column, runs along dim 1.
  buffer<int, 2> transposed({8, 4});
  transposed.mutable_dim(0).set_stride(16);
  transposed.mutable_dim(1).set_stride(4);
  transposed.allocate();
  calls = total = 0;
  for_each_contiguous_slice(transposed, count);
  EXPECT_EQ(calls, 8);
  EXPECT_EQ(total, 32);

  // Not contiguous at all: one call per element.
  buffer<int, 2> sparse({8, 4});
  sparse.mutable_dim(0).set_stride(8);
  sparse.mutable_dim(1).set_stride(64);
  sparse.allocate();
  calls = total = 0;
  for_each_contiguous_slice(sparse, count);
  EXPECT_EQ(calls, 32);

  // Extent-1 dims do not split runs.
  buffer<int, 3> thin({8, 1, 4});
  thin.mutable_dim(1).set_stride(1000);
  thin.allocate();
  calls = 0;
  for_each_contiguous_slice(thin, count);
  EXPECT_EQ(calls, 1);

  int value = 0;
  buffer<int> scalar;
  scalar.raw_buffer::base = &value;
  calls = total = 0;
  for_each_contiguous_slice(scalar, count);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(total, 1);
  buffer<int, 2> empty({0, 4});
  calls = 0;
  for_each_contiguous_slice(empty, count);
  EXPECT_EQ(calls, 0);
}

// The runs go along any dim contiguous in every buffer, folded or not: each element visited
// once, at the right address in each buffer.
TEST(for_each_contiguous_slice, any_contiguous_dim) {
  // a is transposed (dim 1 dense), b likewise with dim 1 folded by 8 over [0, 7] (no wrap).
  buffer<int, 2> a({4, 8});
  a.mutable_dim(0).set_stride(8 * sizeof(int));
  a.mutable_dim(1).set_stride(sizeof(int));
  a.allocate();
  buffer<int, 2> b({4, 8});
  b.mutable_dim(0).set_stride(8 * sizeof(int));
  b.mutable_dim(1).set_stride(sizeof(int));
  b.allocate();
  b.mutable_dim(1).set_fold_factor(8);
  for (index_t y = 0; y < 8; ++y) {
    for (index_t x = 0; x < 4; ++x) {
      a(x, y) = static_cast<int>(x * 10 + y);
      b(x, y) = 0;
    }
  }
  int calls = 0;
  for_each_contiguous_slice(
      a,
      [&](index_t n, int* pa, int* pb) {
        ++calls;
        EXPECT_EQ(n, 8);
        for (index_t i = 0; i < n; ++i) pb[i] += pa[i] + 1;
      },
      b);
  EXPECT_EQ(calls, 4);
  for (index_t y = 0; y < 8; ++y) {
    for (index_t x = 0; x < 4; ++x) ASSERT_EQ(b(x, y), x * 10 + y + 1);
  }
}

TEST(for_each_contiguous_slice, other_buffers_split_runs) {
  buffer<int, 2> a({6, 3});
  a.allocate();
  // A lower rank buffer broadcasts over rows: runs are rows.
  buffer<short, 1> row({6});
  row.allocate();
  std::vector<index_t> runs;
  for_each_contiguous_slice(
      a,
      [&](index_t n, int* pa, short* pr) {
        runs.push_back(n);
        EXPECT_EQ(pr, row.base());
        EXPECT_EQ((pa - a.base()) % 6, 0);
      },
      row);
  EXPECT_EQ(runs, (std::vector<index_t>{6, 6, 6}));

  // A buffer covering part of the rows: runs split at its bounds, null outside.
  buffer<int, 2> part({6, 3});
  part.allocate();
  part.crop(0, 2, 3);
  runs.clear();
  for_each_contiguous_slice(
      a,
      [&](index_t n, int* pa, int* pp) {
        runs.push_back(n);
        const index_t x = (pa - a.base()) % 6, y = (pa - a.base()) / 6;
        EXPECT_EQ(pp, x == 2 ? &part(2, y) : nullptr);
      },
      part);
  EXPECT_EQ(runs, (std::vector<index_t>{2, 2, 2, 2, 2, 2, 2, 2, 2}));

  // A folded buffer splits runs where its fold wraps.
  buffer<int, 1> ring({4});
  ring.allocate();
  ring.mutable_dim(0).set_bounds(0, 5).set_fold_factor(4);
  buffer<int, 1> line({6});
  line.allocate();
  runs.clear();
  for_each_contiguous_slice(
      line,
      [&](index_t n, int* pl, int* pr) {
        runs.push_back(n);
        EXPECT_EQ(pr, ring.base() + (pl - line.base()) % 4);
      },
      ring);
  EXPECT_EQ(runs, (std::vector<index_t>{4, 2}));
}

TEST(copy, contiguous_translated_and_lower_rank) {
  buffer<int, 2> src({6, 4});
  buffer<int, 2> dst({6, 4});
  src.allocate();
  dst.allocate();
  for_each_coord(dims_of(src), [&](span<const index_t> c) { src(c) = c[0] + 10 * c[1]; });
  copy(src, dst);
  EXPECT_EQ(dst(5, 3), 35);
  EXPECT_EQ(dst(0, 0), 0);

  // dst only needs part of src; coordinates are absolute.
  dst.translate({2, 1});
  dst.crop(0, 2, 5).crop(1, 1, 3);
  copy(src, dst);
  EXPECT_EQ(dst(2, 1), 12);
  EXPECT_EQ(dst(5, 3), 35);

  // A rank-1 src broadcasts over dst's rows.
  buffer<int, 1> row({6});
  row.allocate();
  for (int i = 0; i < 6; ++i) row(i) = 100 + i;
  buffer<int, 2> out({6, 3});
  out.allocate();
  copy(row, out);
  for_each_coord(dims_of(out), [&](span<const index_t> c) { EXPECT_EQ(out(c), 100 + c[0]); });
}

TEST(copy, padding) {
  buffer<short, 2> src({3, 2});
  src.allocate();
  for_each_coord(dims_of(src), [&](span<const index_t> c) { src(c) = 1 + c[0] + 10 * c[1]; });
  src.translate({1, 1});
  buffer<short, 2> dst({5, 4});
  dst.allocate();
  const scalar<short> p(-1);
  copy(src, dst, p);
  for_each_coord(dims_of(dst), [&](span<const index_t> c) {
    const short expected = src.contains(c) ? src(c) : -1;
    EXPECT_EQ(dst(c), expected) << c[0] << ", " << c[1];
  });
  // Without pad, elements outside src are left alone.
  std::fill_n(dst.base(), 20, 7);
  copy(src, dst);
  EXPECT_EQ(dst(0, 0), 7);
  EXPECT_EQ(dst(4, 3), 7);
  EXPECT_EQ(dst(1, 1), 1);
  // An empty or null src: everything is padding.
  raw_buffer none = src;
  none.base = nullptr;
  copy(none, dst, p);
  EXPECT_EQ(dst(2, 2), -1);
}

TEST(copy, pad_buffer_at_same_coordinates) {
  buffer<int, 1> src({2});
  src.allocate();
  src(0) = 1;
  src(1) = 2;
  buffer<int, 1> pad_values({6});
  pad_values.allocate();
  for (int i = 0; i < 6; ++i) pad_values(i) = 50 + i;
  buffer<int, 1> dst({6});
  dst.allocate();
  src.translate(2);
  copy(src, dst, pad_values);
  EXPECT_EQ(std::vector<int>(dst.base(), dst.base() + 6), (std::vector<int>{50, 51, 1, 2, 54, 55}));

  // A pad whose bounds are the single point 0 is used at every coordinate it is needed. src has
  // rank 1, so it broadcasts over dst's rows.
  int pv = 9;
  buffer<int, 2> point(&pv, {1, 1});
  buffer<int, 2> dst2({3, 2});
  dst2.allocate();
  copy(src, dst2, point);
  EXPECT_EQ(std::vector<int>(dst2.base(), dst2.base() + 6), (std::vector<int>{9, 9, 1, 9, 9, 1}));
}

TEST(copy, folded_dst_row_of_ring_buffer) {
  // Fill one row of a cropped ring buffer: a folded dim next to an extent-1 crop.
  buffer<int, 2> ring({4, 3});
  ring.allocate();
  std::fill_n(ring.base(), 12, 0);
  ring.mutable_dim(1).set_bounds(0, 9).set_fold_factor(3);
  buffer<int, 2> src({4, 10});
  src.allocate();
  for_each_coord(dims_of(src), [&](span<const index_t> c) { src(c) = 1 + c[0] + 10 * c[1]; });
  for (index_t y = 0; y < 10; ++y) {
    buffer<int, 2> row = ring;
    row.crop(1, y, y);
    copy(src, row);
    for (index_t x = 0; x < 4; ++x) ASSERT_EQ(ring.base()[x + 4 * (y % 3)], 1 + x + 10 * y);
    // The other rows of the ring are untouched.
    if (y >= 1) {
      ASSERT_EQ(ring.base()[4 * ((y - 1) % 3)], 1 + 10 * (y - 1));
    }
  }
  // A window of 3 rows wrapping around the fold.
  buffer<int, 2> window = ring;
  window.crop(1, 4, 6);
  copy(src, window);
  for (index_t y = 4; y <= 6; ++y) EXPECT_EQ(window(2, y), 3 + 10 * y);

  // A folded src read into a linear dst.
  buffer<int, 2> out({4, 3});
  out.allocate();
  out.translate(0, 4);
  copy(window, out);
  for_each_coord(dims_of(out), [&](span<const index_t> c) { EXPECT_EQ(out(c), 1 + c[0] + 10 * c[1]); });
}

TEST(copy, negative_strides_and_transpose) {
  buffer<int, 2> src({5, 3});
  src.allocate();
  for_each_coord(dims_of(src), [&](span<const index_t> c) { src(c) = c[0] + 10 * c[1]; });
  // A flipped view of src: x -> 4 - x.
  buffer<int, 2> flipped = src;
  flipped.raw_buffer::base = &src(4, 0);
  flipped.mutable_dim(0).set_stride(-4);
  buffer<int, 2> dst({5, 3});
  dst.allocate();
  copy(flipped, dst);
  for_each_coord(dims_of(dst), [&](span<const index_t> c) { EXPECT_EQ(dst(c), 4 - c[0] + 10 * c[1]); });

  buffer<int, 2> t({3, 5});
  t.allocate();
  buffer<int, 2> tview = t;
  tview.mutable_dim(0) = t.dim(1);
  tview.mutable_dim(1) = t.dim(0);
  copy(src, tview);
  for_each_coord(dims_of(t), [&](span<const index_t> c) { EXPECT_EQ(t(c), c[1] + 10 * c[0]); });
}

TEST(copy, large_transpose) {
  // Large enough to be copied in tiles, with extents that are not multiples of the tile.
  buffer<std::uint16_t, 2> src({45, 70});
  src.allocate();
  for_each_coord(dims_of(src), [&](span<const index_t> c) { src(c) = c[0] * 100 + c[1]; });
  buffer<std::uint16_t, 2> dst({70, 45});
  dst.allocate();
  buffer<std::uint16_t, 2> view = dst;
  view.mutable_dim(0) = dst.dim(1);
  view.mutable_dim(1) = dst.dim(0);
  copy(src, view);
  for_each_coord(dims_of(dst), [&](span<const index_t> c) { ASSERT_EQ(dst(c), c[1] * 100 + c[0]); });
}

TEST(copy, shared_memory) {
  buffer<int, 1> b({16});
  b.allocate();
  std::iota(b.base(), b.base() + 16, 0);
  // In place: nothing changes.
  copy(b, b);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(b(i), i);
  // Disjoint halves of one allocation.
  buffer<int, 1> lo = b, hi = b;
  lo.crop(0, 0, 7);
  hi.crop(0, 8, 15);
  hi.translate(-8);
  copy(lo, hi);
  for (int i = 8; i < 16; ++i) EXPECT_EQ(b(i), i - 8);
  // dst a crop of src: every element is read from the address it is written to.
  buffer<int, 1> inner = b;
  inner.crop(0, 3, 12);
  copy(b, inner);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b(i), i);
}

TEST(copy, rank0_broadcast_and_empty) {
  int a = 5, b = 0;
  copy(raw_buffer::make_scalar_ref(a), raw_buffer::make_scalar_ref(b));
  EXPECT_EQ(b, 5);

  // A broadcast (stride 0) src dim.
  buffer<std::uint8_t, 2> src({3, 1});
  src.allocate();
  src(0, 0) = 1;
  src(1, 0) = 2;
  src(2, 0) = 3;
  src.mutable_dim(1) = dim::broadcast();
  buffer<std::uint8_t, 2> dst({3, 4});
  dst.allocate();
  copy(src, dst);
  for_each_coord(dims_of(dst), [&](span<const index_t> c) { EXPECT_EQ(dst(c), 1 + c[0]); });

  // An empty dst: nothing happens (and nothing is dereferenced).
  buffer<std::uint8_t, 2> empty({3, 0});
  empty.raw_buffer::base = reinterpret_cast<std::uint8_t*>(16);
  copy(src, empty);
  fill(empty, &a);
}

TEST(pad, writes_only_outside_bounds) {
  buffer<int, 2> dst({5, 4});
  dst.allocate();
  std::fill_n(dst.base(), 20, 1);
  dim inside[] = {dim(1, 2), dim(1, 1)};
  pad(inside, dst, scalar<int>(8));
  for_each_coord(dims_of(dst), [&](span<const index_t> c) {
    const bool in = c[0] >= 1 && c[0] <= 2 && c[1] == 1;
    EXPECT_EQ(dst(c), in ? 1 : 8);
  });
  // Bounds disjoint from dst: everything is padded.
  dim outside[] = {dim(10, 12), dim(0, 3)};
  pad(outside, dst, scalar<int>(3));
  for_each_coord(dims_of(dst), [&](span<const index_t> c) { EXPECT_EQ(dst(c), 3); });
}

TEST(pad, broadcast_bounds_are_unbounded) {
  buffer<int, 2> dst({5, 4});
  dst.allocate();
  std::fill_n(dst.base(), 20, 1);
  const dim inside[] = {dim(1, 2), dim::broadcast()};
  pad(inside, dst, scalar<int>(8));
  for_each_coord(dims_of(dst), [&](span<const index_t> c) { EXPECT_EQ(dst(c), c[0] >= 1 && c[0] <= 2 ? 1 : 8); });
  // Any stride-0 entry, whatever its bounds.
  std::fill_n(dst.base(), 20, 1);
  const dim rows[] = {dim(7, 9, 0), dim(1, 2)};
  pad(rows, dst, scalar<int>(8));
  for_each_coord(dims_of(dst), [&](span<const index_t> c) { EXPECT_EQ(dst(c), c[1] >= 1 && c[1] <= 2 ? 1 : 8); });
}

TEST(copy, to_lower_rank_reads_index_zero) {
  // src's extra dim is [-2, 1]: dst reads its row 0, not its first row.
  buffer<int, 2> src({3, 4});
  src.translate(0, -2);
  src.allocate();
  for_each_coord(dims_of(src), [&](span<const index_t> c) { src(c) = static_cast<int>(c[0] + 10 * c[1]); });
  buffer<int, 1> dst({3});
  dst.allocate();
  copy(src, dst);
  for (index_t x = 0; x < 3; ++x) EXPECT_EQ(dst(x), x);
  // Folded there: coordinate 0 through the fold.
  src.dims[1] = dim(-2, 1, src.dim(1).stride(), 4);
  copy(src, dst);
  for (index_t x = 0; x < 3; ++x) EXPECT_EQ(dst(x), static_cast<int>(src(x, 0)));
  // No row 0: only padding, or nothing.
  src.dims[1] = dim(1, 4, src.dim(1).stride());
  std::fill_n(dst.base(), 3, 5);
  copy(src, dst);
  for (index_t x = 0; x < 3; ++x) EXPECT_EQ(dst(x), 5);
  copy(src, dst, scalar<int>(6));
  for (index_t x = 0; x < 3; ++x) EXPECT_EQ(dst(x), 6);
  // A stride-0 extra dim contains 0 wherever its bounds are.
  src.dims[1] = dim(3, 3, 0);
  copy(src, dst);
  for (index_t x = 0; x < 3; ++x) EXPECT_EQ(dst(x), static_cast<int>(src(x, 3)));
}

TEST(fill, patterns) {
  buffer<std::uint32_t, 2> b({37, 3});
  b.mutable_dim(1).set_stride(40 * 4);
  b.allocate();
  std::fill_n(b.base(), b.size_bytes() / 4, 0);
  const std::uint32_t same = 0x5a5a5a5a, pattern = 0x01020304;
  fill(b, &same);
  EXPECT_EQ(b(36, 2), same);
  EXPECT_EQ(b.base()[37], 0u);  // Row padding is untouched.
  fill(b, &pattern);
  for_each_coord(dims_of(b), [&](span<const index_t> c) { EXPECT_EQ(b(c), pattern); });

  // An element size that is not a power of two, over more than one chunk of the pattern fill.
  struct rgb {
    std::uint8_t r, g, b;
  };
  buffer<rgb, 1> colors({5000});
  colors.allocate();
  const rgb c = {1, 2, 3};
  fill(colors, &c);
  for (index_t i = 0; i < 5000; ++i) ASSERT_TRUE(colors(i).r == 1 && colors(i).g == 2 && colors(i).b == 3) << i;
}

TEST(copy, elem_size_mismatch_fails) {
  buffer<int, 1> a({4});
  buffer<short, 1> b({4});
  a.allocate();
  b.allocate();
  EXPECT_DEATH(copy(a, b), "elem_size");
}

namespace {

// The seed of the randomized tests: SLINKY_TEST_SEED if set, otherwise a fresh one (printed on
// failure so that the case can be reproduced).
unsigned test_seed() {
  if (const char* env = std::getenv("SLINKY_TEST_SEED")) return std::strtoul(env, nullptr, 10);
  return std::random_device()();
}

index_t random_int(std::mt19937& rng, index_t lo, index_t hi) {
  return lo + static_cast<index_t>(rng() % (hi - lo + 1));
}
bool chance(std::mt19937& rng, int one_in) { return rng() % one_in == 0; }

// Mostly small extents, sometimes 0, sometimes one long dim (to exercise long runs).
index_t random_extent(std::mt19937& rng, bool& long_used) {
  if (chance(rng, 30)) return 0;
  if (!long_used && chance(rng, 6)) {
    long_used = true;
    return random_int(rng, 8, 70);
  }
  return random_int(rng, 1, 5);
}

// Bounds near `d`: equal, shifted, larger, or unrelated (possibly empty).
dim random_bounds_near(std::mt19937& rng, const dim& d) {
  switch (rng() % 4) {
  case 0: return dim(d.min(), d.max());
  case 1: return dim(d.min() + random_int(rng, -3, 3), d.max() + random_int(rng, -3, 3));
  case 2: return dim(d.min() - random_int(rng, 0, 2), d.max() + random_int(rng, 0, 2));
  default: return dim(random_int(rng, -5, 5), random_int(rng, -5, 5));
  }
}

// A buffer with a random layout (order of dims, padding, negative strides) in its own memory, with
// guard bytes around it. Dims with stride 0 stay broadcasts; folds are kept.
class random_buffer {
public:
  std::vector<dim> dims;
  std::vector<std::uint8_t> mem;
  raw_buffer buf;
  static constexpr index_t guard = 16;

  random_buffer(std::mt19937& rng, std::vector<dim> bounds, std::size_t elem_size) : dims(std::move(bounds)) {
    std::vector<std::size_t> order(dims.size());
    std::iota(order.begin(), order.end(), 0);
    if (chance(rng, 2)) std::shuffle(order.begin(), order.end(), rng);
    const index_t es = elem_size;
    index_t next = es, bytes = es, base_offset = guard;
    for (std::size_t d : order) {
      if (dims[d].stride() == 0) continue;
      const index_t span = std::max<index_t>(1, dims[d].fold_factor() > 0 ? dims[d].fold_factor() : dims[d].extent());
      index_t stride = next + (chance(rng, 3) ? es * random_int(rng, 1, 2) : 0);
      next = stride * span;
      bytes += (span - 1) * stride;
      if (chance(rng, 4)) {
        stride = -stride;
        base_offset += (span - 1) * -stride;
      }
      dims[d].set_stride(stride);
    }
    mem.resize(bytes + 2 * guard);
    for (std::uint8_t& b : mem) b = rng();
    buf = raw_buffer{mem.data() + base_offset, elem_size, dims.size(), dims.data()};
    if (buf.elem_count() > 0) {
      EXPECT_EQ(buf.size_bytes(), static_cast<std::size_t>(bytes));
    }
  }
  random_buffer(const random_buffer&) = delete;
};

std::string describe(const raw_buffer& b) {
  std::ostringstream s;
  s << "{es=" << b.elem_size << (b.base ? "" : " null") << " dims=";
  for (std::size_t d = 0; d < b.rank; ++d) {
    const dim& x = b.dims[d];
    s << "[" << x.min() << "," << x.max() << " s=" << x.stride();
    if (x.fold_factor() > 0) s << " f=" << x.fold_factor();
    s << "]";
  }
  s << "}";
  return s.str();
}

std::vector<dim> random_dst_bounds(std::mt19937& rng, std::size_t rank) {
  bool long_used = false;
  std::vector<dim> dims(rank);
  for (dim& d : dims) {
    d.set_min_extent(random_int(rng, -4, 4), random_extent(rng, long_used));
    // Folds of dst never alias two coordinates of the buffer.
    if (chance(rng, 5) && d.extent() > 0) d.set_fold_factor(d.extent() + random_int(rng, 0, 2));
  }
  return dims;
}

// Bounds of a buffer read at the coordinates of `ref`: maybe lower rank, folded, broadcast.
std::vector<dim> random_other_bounds(std::mt19937& rng, const std::vector<dim>& ref) {
  const std::size_t rank = chance(rng, 2) ? ref.size() : random_int(rng, 0, ref.size());
  std::vector<dim> dims(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    dims[d] = random_bounds_near(rng, ref[d]);
    if (chance(rng, 8)) dims[d].set_stride(0);
    if (chance(rng, 5)) dims[d].set_fold_factor(random_int(rng, 1, std::max<index_t>(1, dims[d].extent()) + 2));
  }
  return dims;
}

// A pad buffer for dst: a scalar, or a buffer covering dst where some dims are single points.
std::unique_ptr<random_buffer> random_pad(std::mt19937& rng, const std::vector<dim>& dst, std::size_t elem_size) {
  if (chance(rng, 2)) return std::make_unique<random_buffer>(rng, std::vector<dim>(), elem_size);
  std::vector<dim> dims(random_int(rng, 0, dst.size()));
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (chance(rng, 4)) {
      dims[d].set_point(chance(rng, 2) ? 0 : random_int(rng, -4, 4));
    } else {
      dims[d].set_bounds(dst[d].min() - random_int(rng, 0, 1), std::max(dst[d].min(), dst[d].max()) + 1);
    }
    if (chance(rng, 8)) dims[d].set_fold_factor(random_int(rng, 1, dims[d].extent()));
  }
  return std::make_unique<random_buffer>(rng, std::move(dims), elem_size);
}

// The pad value at c: dims of extent 1 are used everywhere.
const void* pad_address(const raw_buffer& pad, span<const index_t> c) {
  std::vector<index_t> pc(c.begin(), c.end());
  for (std::size_t d = 0; d < pad.rank && d < pc.size(); ++d) {
    if (pad.dims[d].extent() == 1) pc[d] = pad.dims[d].min();
  }
  return pad.address_at(span<const index_t>(pc));
}

const std::size_t elem_sizes[] = {1, 2, 4, 8, 3};

// The offset of the first byte where a and b differ, or -1.
index_t first_difference(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] != b[i]) return i;
  }
  return a.size() == b.size() ? -1 : std::min(a.size(), b.size());
}

}  // namespace

TEST(copy, randomized_against_reference) {
  const unsigned seed = test_seed();
  for (int i = 0; i < 6000; ++i) {
    std::mt19937 rng(seed + i);
    const std::size_t rank = random_int(rng, 0, 4);
    const std::size_t es = elem_sizes[rng() % 5];
    random_buffer dst(rng, random_dst_bounds(rng, rank), es);
    random_buffer src(rng, random_other_bounds(rng, dst.dims), es);
    if (chance(rng, 20)) src.buf.base = nullptr;
    std::unique_ptr<random_buffer> pad = chance(rng, 3) ? nullptr : random_pad(rng, dst.dims, es);

    std::vector<std::uint8_t> expected = dst.mem;
    for_each_coord(dst.dims, [&](span<const index_t> c) {
      const index_t at = static_cast<std::uint8_t*>(dst.buf.address_at(c)) - dst.mem.data();
      // A buffer with an empty dim has no elements, even if that dim has stride 0 (which
      // contains every coordinate).
      if (src.buf.base && src.buf.elem_count() > 0 && src.buf.contains(c)) {
        std::memcpy(&expected[at], src.buf.address_at(c), es);
      } else if (pad) {
        std::memcpy(&expected[at], pad_address(pad->buf, c), es);
      }
    });
    copy(src.buf, dst.buf, pad ? pad->buf : no_padding);
    ASSERT_EQ(first_difference(dst.mem, expected), -1)
        << "seed " << seed << " case " << i << " (SLINKY_TEST_SEED=" << seed + i << " reproduces it as case 0)\nsrc "
        << describe(src.buf) << "\ndst " << describe(dst.buf) << "\npad " << (pad ? describe(pad->buf) : "none");
  }
}

TEST(copy, randomized_in_place) {
  const unsigned seed = test_seed();
  for (int i = 0; i < 1000; ++i) {
    std::mt19937 rng(seed + i);
    const std::size_t rank = random_int(rng, 0, 4);
    random_buffer src(rng, random_dst_bounds(rng, rank), elem_sizes[rng() % 5]);
    // dst views part of src's memory at the same coordinates: copying must change nothing.
    std::vector<dim> dims = src.dims;
    raw_buffer dst{src.buf.base, src.buf.elem_size, rank, dims.data()};
    for (std::size_t d = 0; d < rank; ++d) dst.crop(d, random_int(rng, -5, 5), random_int(rng, -5, 5) + 3);
    const std::vector<std::uint8_t> before = src.mem;
    copy(src.buf, dst);
    ASSERT_EQ(first_difference(src.mem, before), -1)
        << "seed " << seed << " case " << i << "\nsrc " << describe(src.buf);
  }
}

// A source of higher rank than dst is read at coordinate 0 of its extra dims; where it has no
// element there, dst gets the padding (or is left alone).
TEST(copy, randomized_from_higher_rank) {
  const unsigned seed = test_seed();
  for (int i = 0; i < 3000; ++i) {
    std::mt19937 rng(seed + i);
    const std::size_t rank = random_int(rng, 0, 3);
    const std::size_t extra = random_int(rng, 1, 2);
    const std::size_t es = elem_sizes[rng() % 5];
    random_buffer dst(rng, random_dst_bounds(rng, rank), es);
    std::vector<dim> bounds(rank + extra);
    for (std::size_t d = 0; d < bounds.size(); ++d) {
      bounds[d] = random_bounds_near(rng, d < rank ? dst.dims[d] : dim(-1, 1));
      if (chance(rng, 8)) bounds[d].set_stride(0);
      if (chance(rng, 5)) bounds[d].set_fold_factor(random_int(rng, 1, std::max<index_t>(1, bounds[d].extent()) + 2));
    }
    random_buffer src(rng, std::move(bounds), es);
    std::unique_ptr<random_buffer> pad = chance(rng, 3) ? nullptr : random_pad(rng, dst.dims, es);

    std::vector<std::uint8_t> expected = dst.mem;
    for_each_coord(dst.dims, [&](span<const index_t> c) {
      const index_t at = static_cast<std::uint8_t*>(dst.buf.address_at(c)) - dst.mem.data();
      std::vector<index_t> at_zero(c.begin(), c.end());
      at_zero.resize(rank + extra, 0);
      if (src.buf.elem_count() > 0 && src.buf.contains(span<const index_t>(at_zero))) {
        std::memcpy(&expected[at], src.buf.address_at(span<const index_t>(at_zero)), es);
      } else if (pad) {
        std::memcpy(&expected[at], pad_address(pad->buf, c), es);
      }
    });
    copy(src.buf, dst.buf, pad ? pad->buf : no_padding);
    ASSERT_EQ(first_difference(dst.mem, expected), -1)
        << "seed " << seed << " case " << i << " (SLINKY_TEST_SEED=" << seed + i << " reproduces it as case 0)\nsrc "
        << describe(src.buf) << "\ndst " << describe(dst.buf) << "\npad " << (pad ? describe(pad->buf) : "none");
  }
}

// In the bounds given to pad, a stride-0 entry (a broadcast) contains every coordinate: nothing
// is padded along it.
TEST(pad, randomized_against_reference) {
  const unsigned seed = test_seed();
  for (int i = 0; i < 3000; ++i) {
    std::mt19937 rng(seed + i);
    const std::size_t rank = random_int(rng, 0, 4);
    const std::size_t es = elem_sizes[rng() % 5];
    random_buffer dst(rng, random_dst_bounds(rng, rank), es);
    std::vector<dim> inside(rank);
    for (std::size_t d = 0; d < rank; ++d) {
      inside[d] = random_bounds_near(rng, dst.dims[d]);
      if (chance(rng, 6)) inside[d] = chance(rng, 2) ? dim::broadcast() : inside[d].set_stride(0);
    }
    std::unique_ptr<random_buffer> value = random_pad(rng, dst.dims, es);

    std::vector<std::uint8_t> expected = dst.mem;
    for_each_coord(dst.dims, [&](span<const index_t> c) {
      bool in = true;
      for (std::size_t d = 0; d < rank; ++d) in = in && inside[d].contains(c[d]);
      if (in) return;
      const index_t at = static_cast<std::uint8_t*>(dst.buf.address_at(c)) - dst.mem.data();
      std::memcpy(&expected[at], pad_address(value->buf, c), es);
    });
    pad(inside.data(), dst.buf, value->buf);
    ASSERT_EQ(first_difference(dst.mem, expected), -1)
        << "seed " << seed << " case " << i << "\ndst " << describe(dst.buf) << "\npad " << describe(value->buf);
  }
}

namespace {

// Checks the pointers a for_each walk passes for the elements of `ref` against the other
// buffers, and that each element is visited once: in for_each_coord order if `ordered`
// (for_each_element), in any order otherwise (for_each_contiguous_slice).
struct walk_checker {
  const random_buffer& ref;
  const random_buffer* others[2];
  bool ordered;
  std::map<const void*, std::size_t> index_of;
  std::vector<std::vector<index_t>> coords;
  std::vector<bool> visited;
  std::size_t next = 0;

  walk_checker(const random_buffer& ref, const random_buffer& a, const random_buffer& b, bool ordered = true)
      : ref(ref), others{&a, &b}, ordered(ordered) {
    for_each_coord(ref.dims, [&](span<const index_t> c) {
      index_of[ref.buf.address_at(c)] = coords.size();
      coords.emplace_back(c.begin(), c.end());
    });
    visited.resize(coords.size(), false);
  }

  // Returns false (after reporting) on the first wrong pointer.
  bool visit(const void* p0, const void* p1, const void* p2) {
    auto it = index_of.find(p0);
    const bool known = it != index_of.end() && (ordered ? it->second == next : !visited[it->second]);
    EXPECT_TRUE(known) << "element out of order, unknown or visited twice";
    if (!known) return false;
    visited[it->second] = true;
    ++next;
    const span<const index_t> c(coords[it->second]);
    const void* ps[] = {p1, p2};
    for (int k = 0; k < 2; ++k) {
      const raw_buffer& o = others[k]->buf;
      const void* expected = o.base && o.elem_count() > 0 && o.contains(c) ? o.address_at(c) : nullptr;
      EXPECT_EQ(ps[k], expected) << "buffer " << k + 1 << " at element " << next - 1;
      if (ps[k] != expected) return false;
    }
    return true;
  }
};

}  // namespace

TEST(for_each, randomized_against_reference) {
  const unsigned seed = test_seed();
  for (int i = 0; i < 3000; ++i) {
    std::mt19937 rng(seed + i);
    const std::size_t rank = random_int(rng, 0, 4);
    std::vector<dim> bounds = random_dst_bounds(rng, rank);
    random_buffer ref(rng, bounds, elem_sizes[rng() % 5]);
    random_buffer a(rng, random_other_bounds(rng, bounds), elem_sizes[rng() % 5]);
    random_buffer b(rng, random_other_bounds(rng, bounds), elem_sizes[rng() % 5]);
    if (chance(rng, 10)) b.buf.base = nullptr;
    const std::string context = "seed " + std::to_string(seed) + " case " + std::to_string(i) + "\nref " +
                                describe(ref.buf) + "\na " + describe(a.buf) + "\nb " + describe(b.buf);

    walk_checker elements(ref, a, b);
    bool ok = true;
    for_each_element([&](void* p0, void* p1, void* p2) { ok = ok && elements.visit(p0, p1, p2); }, ref.buf, a.buf,
                     b.buf);
    ASSERT_TRUE(ok) << context;
    ASSERT_EQ(elements.next, elements.coords.size()) << context;

    walk_checker slices(ref, a, b, /*ordered=*/false);
    for_each_contiguous_slice(
        ref.buf,
        [&](index_t n, void* p0, void* p1, void* p2) {
          ASSERT_GE(n, 1);
          for (index_t j = 0; j < n && ok; ++j) {
            auto step = [j](void* p, const raw_buffer& buf) {
              return p ? static_cast<const void*>(static_cast<char*>(p) + j * buf.elem_size) : nullptr;
            };
            ok = slices.visit(step(p0, ref.buf), step(p1, a.buf), step(p2, b.buf));
          }
        },
        a.buf, b.buf);
    ASSERT_TRUE(ok) << context;
    ASSERT_EQ(slices.next, slices.coords.size()) << context;
  }
}

}  // namespace slinky
