// The blocks a worker of a parallel loop keeps between iterations (worker_block_cache.h, internal):
// which allocation may take which kept block.
#include <gtest/gtest.h>

#include <vector>

#include "slinky/runtime/worker_block_cache.h"

namespace slinky {
namespace internal {

namespace {

// A buffer description of rank dims.size() (no memory), viewing `dims`.
raw_buffer shape(std::vector<dim>& dims, std::size_t elem_size = 4) {
  raw_buffer b;
  b.base = nullptr;
  b.elem_size = elem_size;
  b.rank = dims.size();
  b.dims = dims.data();
  return b;
}

}  // namespace

TEST(worker_block_cache, same_shape_takes_the_block) {
  node_context ctx;
  var a(ctx, "a"), other(ctx, "other");
  worker_block_cache cache;
  char block[1024];
  std::vector<dim> d = {dim(0, 15, 4), dim(0, 3, 64)};
  raw_buffer buf = shape(d);
  buf.base = block;
  const std::size_t kept = cache.keep(a, buf, block);
  // In use: not taken again.
  std::vector<dim> d2 = d;
  raw_buffer again = shape(d2);
  EXPECT_EQ(cache.take(a, again), worker_block_cache::none);
  cache.release(kept);
  // Another buffer's block is not taken.
  EXPECT_EQ(cache.take(other, again), worker_block_cache::none);
  EXPECT_EQ(cache.take(a, again), kept);
  EXPECT_EQ(again.base, block);
}

// The last iteration of a loop whose step does not divide the extent allocates a smaller buffer:
// it takes a block of the full iterations' shape (same strides, larger extents), so a worker keeps
// one block per buffer, not a second for the truncated iteration.
TEST(worker_block_cache, smaller_extent_with_the_same_strides_takes_a_larger_block) {
  node_context ctx;
  var a(ctx, "a");
  worker_block_cache cache;
  char block[1024];
  std::vector<dim> full = {dim(0, 15, 4), dim(0, 3, 64)};
  raw_buffer buf = shape(full);
  buf.base = block;
  cache.release(cache.keep(a, buf, block));

  // Rows 12 to 13 of the loop's last iteration: 2 rows instead of 4, the same strides. And one
  // row: init_strides gives a dim of extent 1 the smallest stride, which places nothing (its one
  // element is at offset 0).
  std::vector<dim> tail = {dim(0, 15, 4), dim(12, 13, 64)};
  std::vector<dim> one_row = {dim(0, 15, 4), dim(21, 21, 4)};
  for (std::vector<dim>* d : {&tail, &one_row}) {
    raw_buffer t = shape(*d);
    const std::size_t taken = cache.take(a, t);
    ASSERT_NE(taken, worker_block_cache::none);
    EXPECT_EQ(t.base, block);
    cache.release(taken);
  }

  // Not: a larger extent, another stride, another fold factor, element size or rank.
  std::vector<dim> taller = {dim(0, 15, 4), dim(0, 4, 64)};
  std::vector<dim> strided = {dim(0, 15, 4), dim(0, 1, 128)};
  std::vector<dim> folded = {dim(0, 15, 4), dim(0, 1, 64, 2)};
  std::vector<dim> flat = {dim(0, 15, 4)};
  for (std::vector<dim>* d : {&taller, &strided, &folded, &flat}) {
    raw_buffer b = shape(*d);
    EXPECT_EQ(cache.take(a, b), worker_block_cache::none);
  }
  raw_buffer wide = shape(tail, 8);
  EXPECT_EQ(cache.take(a, wide), worker_block_cache::none);
}

// With a block of the buffer's own shape and a larger one, the buffer takes its own shape's (the
// larger stays free for the allocation it was made for).
TEST(worker_block_cache, an_exact_shape_is_taken_first) {
  node_context ctx;
  var a(ctx, "a");
  worker_block_cache cache;
  char large[1024], small[1024];
  std::vector<dim> full = {dim(0, 15, 4), dim(0, 3, 64)};
  std::vector<dim> tail = {dim(0, 15, 4), dim(0, 1, 64)};
  raw_buffer f = shape(full), t = shape(tail);
  f.base = large;
  t.base = small;
  const std::size_t large_index = cache.keep(a, f, large);
  const std::size_t small_index = cache.keep(a, t, small);
  cache.release(large_index);
  cache.release(small_index);
  std::vector<dim> tail2 = tail;
  raw_buffer t2 = shape(tail2);
  EXPECT_EQ(cache.take(a, t2), small_index);
  EXPECT_EQ(t2.base, small);
  std::vector<dim> full2 = full;
  raw_buffer f2 = shape(full2);
  EXPECT_EQ(cache.take(a, f2), large_index);
  EXPECT_EQ(f2.base, large);
}

}  // namespace internal
}  // namespace slinky
