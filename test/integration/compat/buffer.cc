// Compatibility tests for raw_buffer, buffer<T, N> and scalar<T> (docs/api.md section 3; silent
// items S2, S3, S8 to S12 and checklist items 4 to 6 of README.md), written as a client of the
// original slinky would use them.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "slinky/base/ref_count.h"
#include "slinky/runtime/buffer.h"

namespace {

using slinky::buffer;
using slinky::dim;
using slinky::index_t;
using slinky::raw_buffer;

constexpr index_t index_max = std::numeric_limits<index_t>::max();

bool is_aligned(const void* p, std::size_t alignment) { return reinterpret_cast<std::uintptr_t>(p) % alignment == 0; }
const void* base_of(const raw_buffer& b) { return b.base; }

}  // namespace

TEST(compat_raw_buffer, layout_and_pointer_types) {
  static_assert(std::is_same_v<slinky::index_t, std::int64_t>, "index_t is int64_t on 64-bit targets");
  static_assert(sizeof(raw_buffer) == 32, "raw_buffer is {base, elem_size, rank, dims}");
  static_assert(std::is_trivially_copyable_v<raw_buffer>, "raw_buffer is a plain aggregate");
  static_assert(!std::is_base_of_v<slinky::ref_counted<raw_buffer>, raw_buffer>, "raw_buffer has no base class");
  static_assert(std::is_same_v<slinky::raw_buffer_ptr, std::shared_ptr<raw_buffer>>, "raw_buffer_ptr");
  static_assert(std::is_same_v<slinky::const_raw_buffer_ptr, std::shared_ptr<const raw_buffer>>, "const ptr");
  static_assert(std::is_same_v<raw_buffer::element, void> && std::is_same_v<raw_buffer::pointer, void*>, "typedefs");
  static_assert(std::is_same_v<buffer<const float>::element, const float>, "element");
  static_assert(std::is_same_v<buffer<const float>::pointer, const float*>, "pointer");

  dim dims[2] = {dim(0, 9, 4), dim(0, 1, 40)};
  int data[20] = {};
  raw_buffer r{data, sizeof(int), 2, dims};
  EXPECT_EQ(r.dim(1).extent(), 2);
  slinky::raw_buffer_ptr p = raw_buffer::make(2, sizeof(int), dims);
  slinky::const_raw_buffer_ptr cp = p;
  EXPECT_EQ(p.use_count(), 2);
  cp.reset();
  EXPECT_EQ(p.use_count(), 1);
  EXPECT_NE(p, nullptr);
}

TEST(compat_raw_buffer, translate_is_variadic) {
  // S2: translate(a, b) moves dim 0 by a and dim 1 by b.
  buffer<int, 2> b({10, 20});
  b.translate(1, 2);
  EXPECT_EQ(b.dim(0).min(), 1);
  EXPECT_EQ(b.dim(0).max(), 10);
  EXPECT_EQ(b.dim(1).min(), 2);
  EXPECT_EQ(b.dim(1).max(), 21);
  b.translate(5);
  EXPECT_EQ(b.dim(0).min(), 6);
  EXPECT_EQ(b.dim(1).min(), 2);
  const index_t offsets[] = {-6, -2};
  b.translate(offsets);
  EXPECT_EQ(b.dim(0).min(), 0);
  EXPECT_EQ(b.dim(1).min(), 0);
  raw_buffer& r = b;
  r.translate(3, 4);
  EXPECT_EQ(r.dim(0).min(), 3);
  EXPECT_EQ(r.dim(1).min(), 4);
}

TEST(compat_raw_buffer, implicit_broadcast_dims) {
  // S3: dims beyond the rank are dim::broadcast(): loops over them run once.
  buffer<int> b({10});
  int n = 0;
  for (index_t y = b.dim(1).begin(); y < b.dim(1).end() && n < 100; ++y) ++n;
  EXPECT_EQ(n, 1);
  EXPECT_EQ(b.dim(3).extent(), 1);
  EXPECT_EQ(b.dim(3).stride(), 0);
  b.allocate();
  for (int x = 0; x < 10; ++x) b(x) = x;
  // Indices past the rank are ignored.
  EXPECT_EQ(b(4, 7, 9), 4);
  EXPECT_TRUE(b.contains(4, 100));
  EXPECT_FALSE(b.contains(10, 0));
}

TEST(compat_buffer, default_rank_is_dims_size) {
  // S8
  buffer<int, 3> b;
  EXPECT_EQ(b.rank, 3u);
  EXPECT_EQ(b.elem_size, sizeof(int));
  for (std::size_t d = 0; d < 3; ++d) {
    EXPECT_EQ(b.dim(d).min(), 0);
    EXPECT_EQ(b.dim(d).max(), -1);
    EXPECT_EQ(b.dim(d).stride(), dim::auto_stride);
    EXPECT_EQ(b.dim(d).fold_factor(), dim::unfolded);
  }
  buffer<int> rank0;
  EXPECT_EQ(rank0.rank, 0u);
  buffer<float> explicit_rank(2);
  EXPECT_EQ(explicit_rank.rank, 2u);
  buffer<char> wide(1, 8);
  EXPECT_EQ(wide.elem_size, 8u);
}

TEST(compat_raw_buffer, make_allocates_data) {
  // S9: with dims (all strides known), make allocates the data in the same block.
  dim dims[2] = {dim(0, 9, 4), dim(0, 4, 40)};
  slinky::raw_buffer_ptr p = raw_buffer::make(2, sizeof(int), dims);
  ASSERT_NE(p->base, nullptr);
  EXPECT_EQ(p->rank, 2u);
  EXPECT_EQ(p->elem_size, sizeof(int));
  EXPECT_EQ(p->dim(1), dims[1]);
  EXPECT_NE(p->dims, dims);  // copied
  for (index_t y = 0; y < 5; ++y) {
    for (index_t x = 0; x < 10; ++x) *static_cast<int*>(p->address_at(x, y)) = x + 10 * y;
  }
  EXPECT_EQ(p->cast<int>()(3, 4), 43);

  slinky::raw_buffer_ptr s = raw_buffer::make(0, sizeof(double));
  ASSERT_NE(s->base, nullptr);
  *static_cast<double*>(s->base) = 2.5;
  EXPECT_EQ(*static_cast<double*>(s->base), 2.5);

  // Aligned.
  slinky::raw_buffer_ptr a = raw_buffer::make(2, sizeof(int), dims, 64);
  ASSERT_NE(a->base, nullptr);
  EXPECT_TRUE(is_aligned(a->base, 64));

  // Without dims: default [0, -1] dims and no data.
  slinky::raw_buffer_ptr e = raw_buffer::make(2, sizeof(int));
  EXPECT_EQ(e->base, nullptr);
  EXPECT_EQ(e->dim(0).min(), 0);
  EXPECT_EQ(e->dim(0).max(), -1);
  EXPECT_EQ(e->dim(1).stride(), dim::auto_stride);
  // A stride still automatic with extent > 1: no data.
  dim auto_dims[1] = {dim(0, 9)};
  EXPECT_EQ(raw_buffer::make(1, sizeof(int), auto_dims)->base, nullptr);
}

TEST(compat_raw_buffer, make_copy_keeps_the_source_layout) {
  buffer<int, 2> src({4, 3});
  src.mutable_dim(0).set_stride(8);  // padded rows
  src.mutable_dim(1).set_stride(32);
  src.allocate();
  for (index_t y = 0; y < 3; ++y) {
    for (index_t x = 0; x < 4; ++x) src(x, y) = x * 7 + y;
  }
  slinky::raw_buffer_ptr c = raw_buffer::make_copy(src, 32);
  ASSERT_NE(c->base, nullptr);
  EXPECT_TRUE(is_aligned(c->base, 32));
  EXPECT_EQ(c->dim(0), src.dim(0));
  EXPECT_EQ(c->dim(1), src.dim(1));
  EXPECT_NE(c->base, src.base());
  for (index_t y = 0; y < 3; ++y) {
    for (index_t x = 0; x < 4; ++x) EXPECT_EQ(c->cast<int>()(x, y), x * 7 + y);
  }
}

TEST(compat_raw_buffer, make_scalar_forms) {
  slinky::raw_buffer_ptr a = raw_buffer::make_scalar<int>(42);
  EXPECT_EQ(a->rank, 0u);
  EXPECT_EQ(a->elem_size, sizeof(int));
  EXPECT_EQ(*static_cast<const int*>(a->base), 42);
  slinky::raw_buffer_ptr b = raw_buffer::make_scalar<double>(1.5, 64);
  EXPECT_TRUE(is_aligned(b->base, 64));
  EXPECT_EQ(*static_cast<const double*>(b->base), 1.5);
  const short value = 7;
  slinky::raw_buffer_ptr c = raw_buffer::make_scalar(sizeof(short), &value);
  EXPECT_EQ(c->elem_size, sizeof(short));
  EXPECT_NE(c->base, &value);  // a copy
  EXPECT_EQ(*static_cast<const short*>(c->base), 7);

  // make_scalar_ref: a descriptor by value pointing at the caller's value.
  int target = 5;
  raw_buffer ref = raw_buffer::make_scalar_ref(sizeof(int), &target);
  EXPECT_EQ(ref.rank, 0u);
  EXPECT_EQ(ref.base, &target);
  raw_buffer typed_ref = raw_buffer::make_scalar_ref(target);
  EXPECT_EQ(typed_ref.base, &target);
  EXPECT_EQ(typed_ref.elem_size, sizeof(int));
}

TEST(compat_raw_buffer, init_strides) {
  // S10: auto dim 0 under a known dim 1 stays dense.
  buffer<int, 2> b({10, 5});
  b.mutable_dim(0).set_stride(dim::auto_stride);
  b.mutable_dim(1).set_stride(40);
  std::optional<std::size_t> size = b.init_strides();
  EXPECT_EQ(b.dim(0).stride(), 4);
  EXPECT_EQ(b.dim(1).stride(), 40);
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(*size, 200u);

  // Transposed: known dim 0 stride 20 (5 elements of dim 1 inside each step of dim 0).
  buffer<int, 2> t({10, 5});
  t.mutable_dim(0).set_stride(20);
  t.mutable_dim(1).set_stride(dim::auto_stride);
  t.init_strides();
  EXPECT_EQ(t.dim(1).stride(), 4);

  // Alignment of the placed strides and of the size.
  buffer<int, 2> a({3, 2});
  a.mutable_dim(0).set_stride(dim::auto_stride);
  a.mutable_dim(1).set_stride(dim::auto_stride);
  std::optional<std::size_t> aligned = a.init_strides(16);
  EXPECT_EQ(a.dim(0).stride(), 4);
  EXPECT_EQ(a.dim(1).stride(), 16);
  ASSERT_TRUE(aligned.has_value());
  EXPECT_EQ(*aligned, 32u);

  // Dims of extent 1 get elem_size; stride 0 dims are left alone.
  buffer<int, 3> p({6, 1, 4});
  for (std::size_t d = 0; d < 3; ++d) p.mutable_dim(d).set_stride(dim::auto_stride);
  p.mutable_dim(2).set_stride(0);
  p.init_strides();
  EXPECT_EQ(p.dim(0).stride(), 4);
  EXPECT_EQ(p.dim(1).stride(), 4);
  EXPECT_EQ(p.dim(2).stride(), 0);

  // Overflow: nullopt.
  buffer<int, 2> huge(2);
  huge.mutable_dim(0) = dim(0, index_max / 4);
  huge.mutable_dim(1) = dim(0, 9);
  EXPECT_FALSE(huge.init_strides().has_value());
}

TEST(compat_raw_buffer, size_bytes_and_elem_count) {
  buffer<int, 2> b({10, 5});
  EXPECT_EQ(b.size_bytes(), 200u);
  EXPECT_EQ(b.elem_count(), 50u);
  buffer<int, 2> folded({10, 5});
  folded.mutable_dim(1).set_fold_factor(2);
  EXPECT_EQ(folded.size_bytes(), 80u);
  buffer<int, 2> broadcast({10, 5});
  broadcast.mutable_dim(1).set_stride(0);
  EXPECT_EQ(broadcast.size_bytes(), 40u);
  buffer<int, 2> empty({10, 0});
  EXPECT_EQ(empty.size_bytes(), 0u);
  // S11: overflow gives 0.
  buffer<int, 2> huge(2);
  huge.mutable_dim(0) = dim(0, index_max / 2, 8);
  huge.mutable_dim(1) = dim(0, 9, 8);
  EXPECT_EQ(huge.size_bytes(), 0u);
}

TEST(compat_raw_buffer, slice) {
  // S12: slice(d) of a folded dim keeps the base.
  buffer<int, 2> b({10, 8});
  b.mutable_dim(1) = dim(5, 6, 40, 4);  // min % fold != 0
  b.allocate();
  void* base = b.base();
  raw_buffer s = b;
  s.slice(1);
  EXPECT_EQ(s.base, base);
  EXPECT_EQ(s.rank, 1u);
  raw_buffer s_list = b;
  s_list.slice({1});
  EXPECT_EQ(s_list.base, base);
  EXPECT_EQ(s_list.rank, 1u);
  // slice(d, at) moves the base to coordinate `at`.
  buffer<int, 2> at_copy = b;
  at_copy.slice(1, 6);
  EXPECT_EQ(at_copy.base(), static_cast<int*>(base) + 20);
  buffer<int, 2> in_bounds_copy = b;
  in_bounds_copy.slice(1, slinky::in_bounds{6});
  EXPECT_EQ(in_bounds_copy.base(), static_cast<int*>(base) + 20);
  buffer<int, 2> outside = b;
  outside.slice(1, 7);
  EXPECT_EQ(outside.base(), nullptr);
  // Slicing past the rank does nothing.
  buffer<int, 2> past = b;
  past.slice(5);
  EXPECT_EQ(past.rank, 2u);
  EXPECT_EQ(past.base(), base);

  // slice(0) advances dims and leaves base alone.
  buffer<int, 3> c({4, 5, 6});
  c.allocate();
  raw_buffer r = c;
  const dim* dims = r.dims;
  r.slice(0);
  EXPECT_EQ(r.dims, dims + 1);
  EXPECT_EQ(r.base, c.base());
  EXPECT_EQ(r.rank, 2u);
  EXPECT_EQ(r.dim(0).extent(), 5);

  // Several dims in ascending order; base unchanged.
  buffer<int, 3> m({4, 5, 6});
  m.allocate();
  raw_buffer mr = m;
  const std::size_t ds[] = {0, 2};
  mr.slice(ds);
  EXPECT_EQ(mr.rank, 1u);
  EXPECT_EQ(mr.dim(0).extent(), 5);
  EXPECT_EQ(mr.base, m.base());
}

TEST(compat_raw_buffer, crop) {
  buffer<int, 2> b({10, 10});
  b.allocate();
  int* base = b.base();
  buffer<int, 2> c = b;
  c.crop(0, 2, 20);
  EXPECT_EQ(c.dim(0).min(), 2);
  EXPECT_EQ(c.dim(0).max(), 9);
  EXPECT_EQ(c.base(), base + 2);
  c.crop(1, -5, 3);
  EXPECT_EQ(c.dim(1).min(), 0);
  EXPECT_EQ(c.dim(1).max(), 3);
  EXPECT_EQ(c.base(), base + 2);
  c.crop(0, 12, 14);
  EXPECT_TRUE(c.dim(0).empty());
  EXPECT_EQ(c.base(), nullptr);
  buffer<int, 2> d = b;
  d.crop(4, 0, 0);  // d >= rank: no-op
  EXPECT_EQ(d.base(), base);
}

TEST(compat_raw_buffer, allocate_with_alignment) {
  buffer<int, 2> b({7, 3});
  for (std::size_t d = 0; d < 2; ++d) b.mutable_dim(d).set_stride(dim::auto_stride);
  raw_buffer& r = b;
  void* allocation = r.allocate(64, 16);
  ASSERT_NE(allocation, nullptr);
  EXPECT_TRUE(is_aligned(r.base, 64));
  EXPECT_EQ(r.dim(0).stride(), 4);
  EXPECT_EQ(r.dim(1).stride(), 32);
  std::memset(r.base, 0, r.size_bytes());
  std::free(allocation);

  buffer<int, 2> huge(2);
  huge.mutable_dim(0) = dim(0, index_max / 4);
  huge.mutable_dim(1) = dim(0, 9);
  raw_buffer& hr = huge;
  EXPECT_EQ(hr.allocate(), nullptr);

  buffer<double, 1> owned({5});
  owned.allocate(128);
  EXPECT_TRUE(is_aligned(owned.base(), 128));
  owned(4) = 1.0;
  owned.free();
  EXPECT_EQ(owned.base(), nullptr);
}

TEST(compat_buffer, constructors) {
  buffer<int, 2> b({3, 4});
  EXPECT_EQ(b.rank, 2u);
  EXPECT_EQ(b.dim(0), dim(0, 2, 4));
  EXPECT_EQ(b.dim(1), dim(0, 3, 12));
  const index_t extents[] = {5, 2};
  buffer<short, 2> s(extents);
  EXPECT_EQ(s.dim(1).stride(), 10);

  int data[10];
  buffer<int> over(data, 10);
  EXPECT_EQ(over.rank, 1u);
  EXPECT_EQ(over.dim(0), dim(0, 9, 4));
  EXPECT_EQ(over.base(), data);
  over(3) = 33;
  EXPECT_EQ(data[3], 33);

  // Copies share the memory; only the allocating buffer frees it.
  buffer<int, 2> a({3, 4});
  a.allocate();
  a(1, 2) = 12;
  buffer<int, 2> copy = a;
  EXPECT_EQ(copy.base(), a.base());
  EXPECT_EQ(copy(1, 2), 12);
  buffer<int, 2> from_raw = static_cast<const raw_buffer&>(a);
  EXPECT_EQ(from_raw.base(), a.base());
  EXPECT_EQ(from_raw.rank, 2u);
  buffer<const int, 2> as_const = a;
  EXPECT_EQ(as_const(1, 2), 12);
}

TEST(compat_buffer, void_element_types) {
  buffer<void, 1> v({10}, 4);
  EXPECT_EQ(v.elem_size, 4u);
  EXPECT_EQ(v.dim(0).stride(), 4);
  v.allocate();
  buffer<const void, 1> cv = v;
  EXPECT_EQ(base_of(cv), base_of(v));
  buffer<void> unsized(2);
  EXPECT_EQ(unsized.elem_size, 0u);
  static_assert(std::is_same_v<buffer<void>::pointer, void*>, "pointer of buffer<void>");

  buffer<int, 1> ints({10});
  ints.allocate();
  const raw_buffer& r = ints;
  const buffer<void>& as_void = r.cast<void>();
  EXPECT_EQ(base_of(as_void), ints.base());
  const buffer<const void>& as_const_void = r.cast<const void>();
  EXPECT_EQ(as_const_void.elem_size, sizeof(int));
  const buffer<int>& as_int = r.cast<int>();
  EXPECT_EQ(as_int.base(), ints.base());
}

TEST(compat_buffer, indexing_forms) {
  buffer<int, 3> b({4, 5, 6});
  b.allocate();
  for (index_t z = 0; z < 6; ++z) {
    for (index_t y = 0; y < 5; ++y) {
      for (index_t x = 0; x < 4; ++x) b(x, y, z) = x + 10 * y + 100 * z;
    }
  }
  const std::array<index_t, 3> a = {1, 2, 3};
  const std::vector<index_t> v = {3, 4, 5};
  const index_t c_array[] = {2, 1, 0};
  EXPECT_EQ(b(a), 321);
  EXPECT_EQ(b(v), 543);
  EXPECT_EQ(b(c_array), 12);
  EXPECT_EQ(b.at(a), 321);
  EXPECT_EQ(b.at(slinky::span<const index_t>(v)), 543);
  EXPECT_EQ(b.address_at(a), &b(1, 2, 3));
  EXPECT_EQ(b.flat_offset_bytes(a), b.flat_offset_bytes(1, 2, 3));
  EXPECT_TRUE(b.contains(a));
  const std::vector<index_t> outside = {3, 5, 0};
  EXPECT_FALSE(b.contains(outside));
  // The slice tag skips a dimension.
  EXPECT_EQ(b(slinky::slice, 2, 3), b(0, 2, 3));
  EXPECT_EQ(b.flat_offset_bytes(slinky::slice, 1), b.flat_offset_bytes(0, 1));
  EXPECT_TRUE(b.contains(slinky::slice, 4));
  // Zero-argument forms.
  EXPECT_EQ(b.flat_offset_bytes(), 0);
  EXPECT_EQ(b.address_at(), b.base());
  EXPECT_TRUE(b.contains());
  // address_at of a null base is null.
  buffer<int, 1> null_base({4});
  EXPECT_EQ(null_base.address_at(2), nullptr);
  // Const-correct access.
  const buffer<const int, 3>& cb = b.cast<const int>();
  static_assert(std::is_same_v<decltype(cb(0, 0, 0)), const int&>, "buffer<const T> gives const T&");
  EXPECT_EQ(cb(1, 1, 1), 111);
}

TEST(compat_buffer, mutable_dim_grows_and_unslice) {
  buffer<int, 3> b({10});
  b.mutable_dim(2) = dim(0, 3, 40);
  EXPECT_EQ(b.rank, 3u);
  EXPECT_EQ(b.dim(1), dim::broadcast());
  EXPECT_EQ(b.dim(2), dim(0, 3, 40));

  buffer<int, 2> c({10, 20});
  const dim d0 = c.dim(0);
  c.slice(0);
  EXPECT_EQ(c.rank, 1u);
  c.unslice(0, d0);
  EXPECT_EQ(c.rank, 2u);
  EXPECT_EQ(c.dim(0), d0);
  EXPECT_EQ(c.dim(1), dim(0, 19, 40));

  buffer<int, 3> e({4, 5, 6});
  const dim d1 = e.dim(1);
  e.slice(1);
  EXPECT_EQ(e.dim(1).extent(), 6);
  e.unslice(1, d1);
  EXPECT_EQ(e.rank, 3u);
  EXPECT_EQ(e.dim(1), d1);
  EXPECT_EQ(e.dim(2), dim(0, 5, 80));
}

TEST(compat_scalar, scalar_buffer) {
  slinky::scalar<int> s(5);
  EXPECT_EQ(s.rank, 0u);
  EXPECT_EQ(s.elem_size, sizeof(int));
  EXPECT_EQ(s.base, &s.value);
  EXPECT_EQ(s(), 5);
  s() = 6;
  EXPECT_EQ(*static_cast<int*>(s.base), 6);
  slinky::scalar<int> copy = s;
  EXPECT_EQ(copy(), 6);
  EXPECT_EQ(copy.base, &copy.value);  // its own base
  const slinky::scalar<float> f;
  EXPECT_EQ(f(), 0.0f);

  // As a pad value and as a rank-0 copy destination.
  buffer<int, 1> src({4});
  src.translate(2);
  src.allocate();
  for (index_t x = 2; x < 6; ++x) src(x) = x;
  buffer<int, 1> dst({8});
  dst.allocate();
  slinky::copy(src, dst, slinky::scalar<int>(-1));
  for (index_t x = 0; x < 8; ++x) EXPECT_EQ(dst(x), x >= 2 && x < 6 ? x : -1) << x;
  slinky::scalar<int> one;
  buffer<int, 1> at3 = src;
  at3.slice(0, 3);
  slinky::copy(at3, one);
  EXPECT_EQ(one(), 3);
}

TEST(compat_buffer_helpers, offset_bytes_align_up_validate_buffer) {
  int data[4] = {};
  EXPECT_EQ(slinky::offset_bytes(data, 8), &data[2]);
  EXPECT_EQ(slinky::offset_bytes(static_cast<int*>(nullptr), 8), nullptr);
  const int* cdata = data;
  EXPECT_EQ(slinky::offset_bytes_non_null(cdata, 4), &data[1]);
  char* p = reinterpret_cast<char*>(0x1001);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(slinky::align_up(p, 16)), 0x1010u);

  buffer<int, 2> ok({10, 10});
  ok.allocate();
  EXPECT_TRUE(slinky::validate_buffer(ok));
  buffer<int, 2> overflows(2);
  overflows.mutable_dim(0) = dim(0, index_max / 2, 4);
  overflows.mutable_dim(1) = dim(0, 9, 4);
  EXPECT_FALSE(slinky::validate_buffer(overflows));
  // The base plus the offsets would wrap the address space.
  buffer<int, 1> wraps({100});
  static_cast<raw_buffer&>(wraps).base = reinterpret_cast<void*>(std::numeric_limits<std::uintptr_t>::max() - 64);
  EXPECT_FALSE(slinky::validate_buffer(wraps));
  buffer<int, 1> null_base({100});
  EXPECT_TRUE(slinky::validate_buffer(null_base));
}
