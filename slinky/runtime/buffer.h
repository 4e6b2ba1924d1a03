// Buffers: type-erased descriptors of strided, possibly folded (ring buffer) memory, the typed
// buffer<T, N>, and the operations on them (copy, pad, for_each_element, ...). Coordinates are
// absolute: a dimension [min, max] is indexed by min..max, not 0..extent-1.
#ifndef SLINKY_RUNTIME_BUFFER_H
#define SLINKY_RUNTIME_BUFFER_H

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <type_traits>
#include <utility>

#include "slinky/base/arithmetic.h"
#include "slinky/base/ref_count.h"
#include "slinky/base/span.h"

namespace slinky {

// A signed integer as wide as a pointer.
using index_t = std::ptrdiff_t;

// A tag usable in place of an index: that dimension is skipped (contributes no offset and
// is always contained).
struct slice_tag {};
inline constexpr slice_tag slice{};

// One dimension of a buffer: the inclusive range of coordinates [min, max], the distance in
// bytes between neighbouring elements, and an optional fold factor. With fold factor f,
// coordinate i lives at euclidean_mod(i, f) * stride (a ring buffer, independent of min);
// unfolded, at (i - min) * stride.
class dim {
  index_t min_;
  index_t max_;
  index_t stride_;
  index_t fold_factor_;

public:
  // A stride to be filled in by init_strides or an allocation.
  static constexpr index_t auto_stride = std::numeric_limits<index_t>::min();
  // The fold factor of a dimension that is not folded.
  static constexpr index_t unfolded = std::numeric_limits<index_t>::max();

  dim() : min_(0), max_(-1), stride_(auto_stride), fold_factor_(unfolded) {}
  dim(index_t min, index_t max, index_t stride = auto_stride, index_t fold_factor = unfolded)
      : min_(min), max_(max), stride_(stride), fold_factor_(fold_factor) {}

  // A dimension of unbounded extent and stride 0: every coordinate is the same element. The
  // bounds are symmetric so that extent() (max - min + 1) does not overflow.
  static const dim& broadcast() {
    static const dim b(-(std::numeric_limits<index_t>::max() / 2), std::numeric_limits<index_t>::max() / 2, 0);
    return b;
  }

  index_t min() const { return min_; }
  index_t max() const { return max_; }
  index_t begin() const { return min_; }
  index_t end() const { return max_ + 1; }
  // The number of coordinates, 0 if empty; saturates at the largest index_t rather than wrap
  // (e.g. [min, max] = [-2^63, 2^63 - 1]).
  index_t extent() const {
    if (max_ < min_) return 0;
    index_t e;
    if (sub_overflows(max_, min_, &e) || e == std::numeric_limits<index_t>::max()) {
      return std::numeric_limits<index_t>::max();
    }
    return e + 1;
  }
  index_t stride() const { return stride_; }
  index_t fold_factor() const { return fold_factor_; }
  bool empty() const { return max_ < min_; }
  bool is_folded() const { return fold_factor_ != unfolded; }
  // True if the range [min, max] of this dimension wraps around its fold.
  bool is_folded(index_t min, index_t max) const {
    return fold_factor_ != unfolded &&
           (max - min >= fold_factor_ || euclidean_div(min, fold_factor_) != euclidean_div(max, fold_factor_));
  }
  bool is_broadcast() const { return stride_ == 0; }

  bool contains(index_t i) const { return min_ <= i && i <= max_; }
  bool contains(slice_tag) const { return true; }
  // True if every coordinate of `other` is in this dimension (an empty `other` is contained).
  bool contains(const dim& other) const { return other.empty() || (min_ <= other.min_ && other.max_ <= max_); }

  dim& set_bounds(index_t min, index_t max) {
    min_ = min;
    max_ = max;
    return *this;
  }
  dim& set_min_extent(index_t min, index_t extent) { return set_bounds(min, min + extent - 1); }
  // Keeps min.
  dim& set_extent(index_t extent) { return set_bounds(min_, min_ + extent - 1); }
  // [begin, end): end is one past the last coordinate.
  dim& set_range(index_t begin, index_t end) { return set_bounds(begin, end - 1); }
  dim& set_point(index_t x) { return set_bounds(x, x); }
  dim& set_stride(index_t stride) {
    stride_ = stride;
    return *this;
  }
  dim& set_fold_factor(index_t fold_factor) {
    fold_factor_ = fold_factor;
    return *this;
  }
  dim& translate(index_t offset) { return set_bounds(min_ + offset, max_ + offset); }

  // The byte offset of coordinate i from the buffer's base.
  index_t flat_offset_bytes(index_t i) const {
    if (fold_factor_ == unfolded) return (i - min_) * stride_;
    return euclidean_mod_positive_modulus(i, fold_factor_) * stride_;
  }
  index_t flat_offset_bytes(slice_tag) const { return 0; }

  bool operator==(const dim& other) const {
    return min_ == other.min_ && max_ == other.max_ && stride_ == other.stride_ && fold_factor_ == other.fold_factor_;
  }
  bool operator!=(const dim& other) const { return !(*this == other); }
};

template <typename T, std::size_t DimsSize>
class buffer;

class raw_buffer;
using raw_buffer_ptr = ref_count<raw_buffer>;
using const_raw_buffer_ptr = ref_count<const raw_buffer>;

// A type-erased buffer descriptor: a base pointer, the size of one element, and `rank`
// dimensions. It does not own its memory or its dims array unless made by one of the
// factories below (raw_buffer::make...), which put the descriptor, dims and data in one
// reference counted block.
//
// A buffer has infinitely many implicit trailing broadcast dimensions: dim(i) for i >= rank
// is dim::broadcast(), and indexing, cropping or slicing them is a no-op.
class raw_buffer : public ref_counted<raw_buffer> {
protected:
  static index_t flat_offset_bytes_impl(const slinky::dim* dims, std::size_t rank, std::size_t d) {
    (void)dims;
    (void)rank;
    (void)d;
    return 0;
  }
  template <typename Index, typename... Indices>
  static index_t flat_offset_bytes_impl(const slinky::dim* dims, std::size_t rank, std::size_t d, Index i0,
                                        Indices... is) {
    index_t offset = d < rank ? dims[d].flat_offset_bytes(i0) : 0;
    return offset + flat_offset_bytes_impl(dims, rank, d + 1, is...);
  }
  static bool contains_impl(const slinky::dim* dims, std::size_t rank, std::size_t d) {
    (void)dims;
    (void)rank;
    (void)d;
    return true;
  }
  template <typename Index, typename... Indices>
  static bool contains_impl(const slinky::dim* dims, std::size_t rank, std::size_t d, Index i0, Indices... is) {
    return (d >= rank || dims[d].contains(i0)) && contains_impl(dims, rank, d + 1, is...);
  }

public:
  void* base = nullptr;
  std::size_t elem_size = 0;
  std::size_t rank = 0;
  slinky::dim* dims = nullptr;

  raw_buffer() = default;
  raw_buffer(void* base, std::size_t elem_size, std::size_t rank, slinky::dim* dims)
      : base(base), elem_size(elem_size), rank(rank), dims(dims) {}

  const slinky::dim& dim(std::size_t i) const { return i < rank ? dims[i] : slinky::dim::broadcast(); }
  slinky::dim& mutable_dim(std::size_t i) {
    assert(i < rank);
    return dims[i];
  }

  // Byte offset and address of an element; indices past the rank are ignored (broadcast).
  template <typename... Indices>
  index_t flat_offset_bytes(Indices... indices) const {
    return flat_offset_bytes_impl(dims, rank, 0, indices...);
  }
  index_t flat_offset_bytes(span<const index_t> indices) const {
    index_t offset = 0;
    for (std::size_t i = 0; i < indices.size() && i < rank; ++i) offset += dims[i].flat_offset_bytes(indices[i]);
    return offset;
  }
  // The address of an element (the buffer must have a base: address_at is for elements that
  // exist).
  template <typename... Indices>
  void* address_at(Indices... indices) const {
    return static_cast<char*>(base) + flat_offset_bytes(indices...);
  }
  void* address_at(span<const index_t> indices) const { return static_cast<char*>(base) + flat_offset_bytes(indices); }
  template <typename... Indices>
  bool contains(Indices... indices) const {
    return contains_impl(dims, rank, 0, indices...);
  }
  bool contains(span<const index_t> indices) const {
    for (std::size_t i = 0; i < indices.size() && i < rank; ++i) {
      if (!dims[i].contains(indices[i])) return false;
    }
    return true;
  }

  static void* offset_bytes(void* p, index_t offset) {
    return p ? static_cast<void*>(static_cast<char*>(p) + offset) : nullptr;
  }

  // Moves the coordinates of every dimension (or of the first indices.size() ones) by offset.
  raw_buffer& translate(std::size_t d, index_t offset) {
    if (d < rank) dims[d].translate(offset);
    return *this;
  }
  raw_buffer& translate(span<const index_t> offsets) {
    for (std::size_t d = 0; d < offsets.size() && d < rank; ++d) dims[d].translate(offsets[d]);
    return *this;
  }

  // Restricts dimension d to [min, max] intersected with its current bounds, moving the base so
  // the remaining elements keep their addresses. If the result is empty, the base becomes null.
  raw_buffer& crop(std::size_t d, index_t min, index_t max);
  // Removes dimension d; the buffer then refers to the elements at coordinate `at` of d. If
  // `at` is outside d's bounds, the base becomes null. slice(d) is slice(d, dim(d).min()).
  // Slicing dim 0 only advances `dims`; slicing another dim shifts the later dims down in place,
  // which other descriptors sharing the dims array see.
  raw_buffer& slice(std::size_t d, index_t at);
  raw_buffer& slice(std::size_t d);
  // Removes the dimensions ds (distinct, any order), each at its min.
  raw_buffer& slice(std::initializer_list<std::size_t> ds);

  // The value size_bytes() and elem_count() return when the true value does not fit.
  static constexpr std::size_t size_overflow = std::numeric_limits<std::size_t>::max();
  // The number of bytes spanned by the elements of the buffer (with folded dimensions
  // spanning their whole fold); 0 if any dimension is empty. If the span does not fit in an
  // index_t (the byte offsets of the elements would overflow), or a folded dimension has a fold
  // factor that is not positive, returns size_overflow.
  std::size_t size_bytes() const;
  // The number of elements (the product of the extents), or size_overflow if it does not fit.
  std::size_t elem_count() const;
  // Fills in every dimension whose stride is dim::auto_stride: dense, innermost first, placed
  // after the dimensions whose strides are already known so that no two elements overlap. A
  // folded dimension spans its fold factor. Each auto stride except that of the first dimension
  // laid out (which is elem_size) is rounded up to a multiple of `alignment` bytes. Strides that
  // would overflow saturate at the largest index_t: such a layout then has size_bytes() ==
  // size_overflow (unless the saturated dims have extent 1, whose stride is never used).
  void init_strides(index_t alignment = 1);
  // Allocates size_bytes() (at least one byte) for this buffer, after init_strides, and sets
  // base. Returns the pointer to release with std::free. Aborts (like running out of memory) if
  // the size overflows (size_bytes() == size_overflow).
  void* allocate();

  template <typename T>
  const buffer<T, 0>& cast() const;
  template <typename T>
  buffer<T, 0>& cast();

  // A buffer of the given rank and element size with dims (copied when given, otherwise
  // empty) in one block, without data.
  static raw_buffer_ptr make(std::size_t rank, std::size_t elem_size, const slinky::dim* dims = nullptr);
  // A buffer with the same rank, element size and bounds as `src`, dense strides, and its own
  // copy of src's elements.
  static raw_buffer_ptr make_copy(const raw_buffer& src);
  // A rank-0 buffer holding one value.
  template <typename T>
  static raw_buffer_ptr make_scalar(const T& value);
  // Frees a block made by make/make_copy/make_scalar (called when its last reference goes).
  static void destroy(raw_buffer* buf);
};

// A pad buffer meaning "no padding".
inline const raw_buffer no_padding{};

// Copies dst's elements from src over dst's own bounds. Where dst is outside src, the value
// comes from pad, indexed at the same coordinates (a rank-0 pad is a single value broadcast
// everywhere, and a pad dimension of extent 1, e.g. the point [0, 0], is used at every
// coordinate). With no pad (null base or empty), elements of dst outside src are left unchanged.
// src, dst and pad must have the same elem_size. Broadcast and folded dimensions of any
// operand are handled; src and dst may share memory if each element of dst is read only from
// the same address in src (an in-place copy) or the regions do not overlap.
void copy(const raw_buffer& src, const raw_buffer& dst, const raw_buffer& pad = no_padding);
// Writes pad to the elements of dst that are outside src_bounds (src_bounds has dst.rank dims;
// only their min and max are used).
void pad(const dim* src_bounds, const raw_buffer& dst, const raw_buffer& pad_value);
// Sets every element of dst to the elem_size bytes at value.
void fill(const raw_buffer& dst, const void* value);

namespace internal {

// Calls fn(extent, ptrs...) for each maximal contiguous run of elements of bufs[0]; the
// pointers of the other buffers are at the same coordinates (null where those buffers don't
// contain the run). Implemented in buffer.cc for the type-erased case.
void for_each_contiguous_slice(span<const raw_buffer*> bufs, void (*fn)(void* user, index_t extent, void** ptrs),
                               void* user);
// Calls fn(ptrs...) for each element of bufs[0].
void for_each_element(span<const raw_buffer*> bufs, void (*fn)(void* user, void** ptrs), void* user);

// The pointer type a buffer's elements are passed to callbacks as: T* for buffer<T, N>, void*
// for raw_buffer.
template <typename B>
struct elem_pointer {
  using type = void*;
};
template <typename T, std::size_t N>
struct elem_pointer<buffer<T, N>> {
  using type = T*;
};

template <typename... Bufs, typename Fn, std::size_t... Is>
void call_with_pointers(const Fn& fn, void** ptrs, std::index_sequence<Is...>) {
  fn(static_cast<typename elem_pointer<Bufs>::type>(ptrs[Is])...);
}
template <typename... Bufs, typename Fn, std::size_t... Is>
void call_with_extent_and_pointers(const Fn& fn, index_t extent, void** ptrs, std::index_sequence<Is...>) {
  fn(extent, static_cast<typename elem_pointer<Bufs>::type>(ptrs[Is])...);
}

}  // namespace internal

// Calls fn(T*, U*...) for every element of buf (pointers to the element at the same coordinates
// in each of bufs; null where a buffer does not contain the element). Other buffers may have
// lower rank: their missing dimensions broadcast.
template <typename Fn, typename Buf, typename... Bufs>
void for_each_element(const Fn& fn, const Buf& buf, const Bufs&... bufs) {
  const raw_buffer* all[] = {&buf, static_cast<const raw_buffer*>(&bufs)...};
  auto call = [](void* user, void** ptrs) {
    const Fn& f = *static_cast<const Fn*>(user);
    internal::call_with_pointers<Buf, Bufs...>(f, ptrs, std::index_sequence_for<Buf, Bufs...>());
  };
  internal::for_each_element(all, call, const_cast<void*>(static_cast<const void*>(&fn)));
}

// Calls fn(extent, T*, U*...) for every maximal run of elements of buf that is contiguous in
// buf (dimensions fused where the strides allow). The other buffers' pointers are at the same
// coordinates; a run is split where it would leave another buffer's bounds or stop being
// contiguous there, and their pointer is null where they do not contain the run.
template <typename Buf, typename Fn, typename... Bufs>
void for_each_contiguous_slice(const Buf& buf, const Fn& fn, const Bufs&... bufs) {
  const raw_buffer* all[] = {&buf, static_cast<const raw_buffer*>(&bufs)...};
  auto call = [](void* user, index_t extent, void** ptrs) {
    const Fn& f = *static_cast<const Fn*>(user);
    internal::call_with_extent_and_pointers<Buf, Bufs...>(f, extent, ptrs, std::index_sequence_for<Buf, Bufs...>());
  };
  internal::for_each_contiguous_slice(all, call, const_cast<void*>(static_cast<const void*>(&fn)));
}

// A typed buffer with room for DimsSize dims inline (more are allocated on the heap). Made from
// extents it has min 0 and dense strides with dim 0 innermost; allocate() owns its memory.
template <typename T, std::size_t DimsSize = 0>
class buffer : public raw_buffer {
  slinky::dim dims_storage_[DimsSize == 0 ? 1 : DimsSize];
  slinky::dim* heap_dims_ = nullptr;
  void* to_free_ = nullptr;

  void init_dims(std::size_t r) {
    rank = r;
    if (r <= DimsSize) {
      dims = dims_storage_;
    } else {
      heap_dims_ = new slinky::dim[r];
      dims = heap_dims_;
    }
  }
  void assign_from(const raw_buffer& other) {
    raw_buffer::base = other.base;
    elem_size = other.elem_size;
    init_dims(other.rank);
    for (std::size_t d = 0; d < rank; ++d) dims[d] = other.dims[d];
  }
  void release() {
    std::free(to_free_);
    to_free_ = nullptr;
    delete[] heap_dims_;
    heap_dims_ = nullptr;
  }

public:
  using value_type = T;

  buffer() {
    elem_size = sizeof(T);
    init_dims(0);
  }
  explicit buffer(std::size_t rank) {
    elem_size = sizeof(T);
    init_dims(rank);
  }
  buffer(span<const index_t> extents) {
    elem_size = sizeof(T);
    init_dims(extents.size());
    index_t stride = sizeof(T);
    for (std::size_t d = 0; d < rank; ++d) {
      dims[d] = slinky::dim(0, extents[d] - 1, stride);
      // Saturates rather than wrap for extents whose product overflows (size_bytes() then
      // reports the overflow).
      stride = saturate_mul(stride, extents[d]);
    }
  }
  buffer(std::initializer_list<index_t> extents) : buffer(span<const index_t>(extents.begin(), extents.size())) {}
  // A buffer over existing memory.
  buffer(T* base, span<const index_t> extents) : buffer(extents) {
    raw_buffer::base = const_cast<std::remove_const_t<T>*>(base);
  }

  // Copies describe the same memory; only the original owns it.
  buffer(const buffer& other) : raw_buffer() { assign_from(other); }
  buffer(const raw_buffer& other) : raw_buffer() { assign_from(other); }
  buffer(buffer&& other) noexcept : raw_buffer() {
    assign_from(other);
    to_free_ = other.to_free_;
    other.to_free_ = nullptr;
  }
  buffer& operator=(const buffer& other) {
    if (this == &other) return *this;
    release();
    assign_from(other);
    return *this;
  }
  buffer& operator=(buffer&& other) noexcept {
    if (this == &other) return *this;
    release();
    assign_from(other);
    to_free_ = other.to_free_;
    other.to_free_ = nullptr;
    return *this;
  }
  ~buffer() { release(); }

  T* base() const { return static_cast<T*>(raw_buffer::base); }

  // Allocates memory for the buffer (filling in automatic strides) and owns it.
  void allocate() {
    std::free(to_free_);
    to_free_ = raw_buffer::allocate();
  }
  void free() {
    std::free(to_free_);
    to_free_ = nullptr;
    raw_buffer::base = nullptr;
  }

  template <typename... Indices>
  T& operator()(Indices... indices) const {
    return *static_cast<T*>(address_at(indices...));
  }
  T& operator()(span<const index_t> indices) const { return *static_cast<T*>(address_at(indices)); }
  template <typename... Indices>
  T& at(Indices... indices) const {
    return *static_cast<T*>(address_at(indices...));
  }
  T& at(span<const index_t> indices) const { return *static_cast<T*>(address_at(indices)); }

  buffer& crop(std::size_t d, index_t min, index_t max) {
    raw_buffer::crop(d, min, max);
    return *this;
  }
  buffer& slice(std::size_t d, index_t at) {
    raw_buffer::slice(d, at);
    return *this;
  }
  buffer& slice(std::size_t d) {
    raw_buffer::slice(d);
    return *this;
  }
  buffer& slice(std::initializer_list<std::size_t> ds) {
    raw_buffer::slice(ds);
    return *this;
  }
  buffer& translate(std::size_t d, index_t offset) {
    raw_buffer::translate(d, offset);
    return *this;
  }
  buffer& translate(span<const index_t> offsets) {
    raw_buffer::translate(offsets);
    return *this;
  }
};

template <typename T>
const buffer<T, 0>& raw_buffer::cast() const {
  assert(elem_size == sizeof(T));
  return *reinterpret_cast<const buffer<T, 0>*>(this);
}
template <typename T>
buffer<T, 0>& raw_buffer::cast() {
  assert(elem_size == sizeof(T));
  return *reinterpret_cast<buffer<T, 0>*>(this);
}

template <typename T>
raw_buffer_ptr raw_buffer::make_scalar(const T& value) {
  raw_buffer scalar(const_cast<T*>(&value), sizeof(T), 0, nullptr);
  return make_copy(scalar);
}

}  // namespace slinky

#endif  // SLINKY_RUNTIME_BUFFER_H
