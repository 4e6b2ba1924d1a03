// slinky::copy of nests whose innermost runs are short (buffer_copy.cc, long_inner_dim): a
// stencil view gathered from a buffer (runs of 3 elements, a long dim outside them), the same with
// a long dim too wide to be made the innermost, and short runs read backwards from a broadcast.
// Each result against the element-by-element definition.
#include <gtest/gtest.h>

#include <numeric>

#include "slinky/runtime/buffer.h"

namespace slinky {

namespace {

// view(dx, dy, x, y) = src(2x + dx, 2y + dy), 3x3 windows in steps of 2 over x in [0, w) and y in
// [0, h): the view as strided dims of src (src's dims 0 and 1 at strides s0 and s1 bytes).
buffer<const int, 4> stencil_view(const buffer<int, 2>& src, index_t w, index_t h) {
  buffer<const int, 4> v({3, 3, w, h});
  v.raw_buffer::base = const_cast<int*>(&src(0, 0));
  const index_t s0 = src.dim(0).stride(), s1 = src.dim(1).stride();
  v.mutable_dim(0) = dim(0, 2, s0);
  v.mutable_dim(1) = dim(0, 2, s1);
  v.mutable_dim(2) = dim(0, w - 1, 2 * s0);
  v.mutable_dim(3) = dim(0, h - 1, 2 * s1);
  return v;
}

void expect_stencil(const buffer<int, 4>& dst, const buffer<int, 2>& src, index_t w, index_t h) {
  for (index_t y = 0; y < h; ++y) {
    for (index_t x = 0; x < w; ++x) {
      for (index_t dy = 0; dy < 3; ++dy) {
        for (index_t dx = 0; dx < 3; ++dx) {
          ASSERT_EQ(dst(dx, dy, x, y), src(2 * x + dx, 2 * y + dy)) << dx << " " << dy << " " << x << " " << y;
        }
      }
    }
  }
}

// Copies the stencil view of a (2w + 1) x (2h + 1) image of distinct values and checks it.
void check_stencil_copy(index_t w, index_t h) {
  buffer<int, 2> src({2 * w + 1, 2 * h + 1});
  src.allocate();
  std::iota(src.base(), src.base() + src.dim(0).extent() * src.dim(1).extent(), 1);
  buffer<int, 4> dst({3, 3, w, h});
  dst.allocate();
  copy(stencil_view(src, w, h), dst);
  expect_stencil(dst, src, w, h);
}

}  // namespace

// Runs of 3 ints along dim 0 with x (100 long) outside: x is made the innermost.
TEST(copy_short_runs, stencil_view) { check_stencil_copy(100, 7); }

// x 40000 long, its strided runs spanning more than 256 KiB of dst: dim 0 stays the innermost.
TEST(copy_short_runs, stencil_view_wider_than_the_span) { check_stencil_copy(40000, 2); }

TEST(copy_short_runs, flipped_and_broadcast) {
  // Runs of 2 ints read backwards (stride -4) from a source broadcast along the long dim (stride
  // 0): dst(c, x) = src(1 - c) for x in [0, 300).
  buffer<int, 1> src({2});
  src.allocate();
  src(0) = 7;
  src(1) = 9;
  buffer<const int, 2> view({2, 300});
  view.raw_buffer::base = &src(1);
  view.mutable_dim(0) = dim(0, 1, -static_cast<index_t>(sizeof(int)));
  view.mutable_dim(1) = dim(0, 299, 0);
  buffer<int, 2> dst({2, 300});
  dst.allocate();
  copy(view, dst);
  for (index_t x = 0; x < 300; ++x) {
    ASSERT_EQ(dst(0, x), 9);
    ASSERT_EQ(dst(1, x), 7);
  }
}

}  // namespace slinky
