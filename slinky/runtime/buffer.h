/// \file
/// Buffers: type-erased descriptors of strided, possibly folded (ring buffer) memory, the typed
/// buffer<T, N> and scalar<T>, and the operations on them (copy, pad, for_each_element, the dim
/// optimizers, ...). Coordinates are absolute: a dimension [min, max] is indexed by min..max.
#ifndef SLINKY_RUNTIME_BUFFER_H
#define SLINKY_RUNTIME_BUFFER_H

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "slinky/base/arithmetic.h"
#include "slinky/base/span.h"
#include "slinky/base/util.h"
#include "slinky/runtime/dim.h"

namespace slinky {

// index_t, slice, in_bounds and dim are declared in dim.h (included above).

template <typename T, std::size_t DimsSize>
class buffer;

class raw_buffer;
/// Buffers made by the raw_buffer factories: the descriptor, its dims and its data in one malloc
/// block, freed with std::free when the last reference goes.
using raw_buffer_ptr = std::shared_ptr<raw_buffer>;
/// A raw_buffer_ptr to a buffer that may not be modified through it.
using const_raw_buffer_ptr = std::shared_ptr<const raw_buffer>;

namespace internal {

// The size of an element of type T: 0 for void (type-erased elements).
template <typename T>
struct type_size : std::integral_constant<std::size_t, sizeof(T)> {};
template <>
struct type_size<void> : std::integral_constant<std::size_t, 0> {};
template <>
struct type_size<const void> : std::integral_constant<std::size_t, 0> {};

inline std::ptrdiff_t flat_offset_dim(const dim& d, index_t i) { return d.flat_offset_bytes(i); }
inline std::ptrdiff_t flat_offset_dim(const dim&, slice_tag) { return 0; }
inline bool contains_dim(const dim& d, index_t i) { return d.contains(i); }
inline bool contains_dim(const dim&, slice_tag) { return true; }

// Crops a stride-0 dim, which addresses nothing: its bounds become their intersection with
// [min, max] when that is not empty (a reduction's dummy dims tell the callback which part of the
// reduction it gets so), and stay as they are otherwise (a broadcast dim holds every coordinate,
// and must not become empty). The base never moves.
inline void crop_stride_zero(dim& d, index_t min, index_t max) {
  const index_t new_min = std::max(min, d.min());
  const index_t new_max = std::min(max, d.max());
  if (new_min <= new_max) d.set_bounds(new_min, new_max);
}

}  // namespace internal

/// A type-erased buffer descriptor: a plain aggregate of a base pointer, the size of one element,
/// the rank, and a pointer to `rank` dims. It owns neither its memory nor its dims array (unless
/// made by one of the raw_buffer::make... factories).
///
/// A buffer has infinitely many implicit trailing dims: dim(i) for i >= rank is dim::broadcast(),
/// and indexing, cropping, slicing or translating them is a no-op.
class raw_buffer {
public:
  /// The element type: unknown.
  using element = void;
  /// The type of pointers to elements (what for_each_element passes for this buffer).
  using pointer = void*;

  /// The address of the element at the min coordinates of every dim (null: no memory).
  alignas(16) void* base = nullptr;
  /// The size of an element in bytes.
  std::size_t elem_size = 0;
  /// The number of dims.
  std::size_t rank = 0;
  /// `rank` dims, dim 0 first (not owned).
  slinky::dim* dims = nullptr;

  /// Dim i; dim::broadcast() for i >= rank.
  const slinky::dim& dim(std::size_t i) const { return i < rank ? dims[i] : slinky::dim::broadcast(); }
  /// Dim i, modifiable (i < rank; asserted in debug builds).
  slinky::dim& mutable_dim(std::size_t i) {
    assert(i < rank);
    return dims[i];
  }

  /// Byte offsets and addresses of elements. Indices past the rank are ignored (broadcast); a
  /// slice tag skips its dimension. The first index is an index_t (or the tag) so that arrays,
  /// vectors and spans of indices go to the span overloads.
  ///@{
  std::ptrdiff_t flat_offset_bytes() const { return 0; }
  template <typename... Indices>
  std::ptrdiff_t flat_offset_bytes(index_t i0, Indices... indices) const {
    return offset_impl(0, i0, indices...);
  }
  template <typename... Indices>
  std::ptrdiff_t flat_offset_bytes(slice_tag i0, Indices... indices) const {
    return offset_impl(0, i0, indices...);
  }
  std::ptrdiff_t flat_offset_bytes(span<const index_t> indices) const {
    std::ptrdiff_t offset = 0;
    for (std::size_t i = 0; i < indices.size() && i < rank; ++i) offset += dims[i].flat_offset_bytes(indices[i]);
    return offset;
  }
  ///@}
  /// The address of an element; null if the base is null.
  ///@{
  void* address_at() const { return base; }
  template <typename... Indices>
  void* address_at(index_t i0, Indices... indices) const {
    return offset_bytes(base, flat_offset_bytes(i0, indices...));
  }
  template <typename... Indices>
  void* address_at(slice_tag i0, Indices... indices) const {
    return offset_bytes(base, flat_offset_bytes(i0, indices...));
  }
  void* address_at(span<const index_t> indices) const { return offset_bytes(base, flat_offset_bytes(indices)); }
  ///@}
  /// True if every index is in its dim (dim::contains: a stride-0 dim contains everything).
  ///@{
  bool contains() const { return true; }
  template <typename... Indices>
  bool contains(index_t i0, Indices... indices) const {
    return contains_impl(0, i0, indices...);
  }
  template <typename... Indices>
  bool contains(slice_tag i0, Indices... indices) const {
    return contains_impl(0, i0, indices...);
  }
  bool contains(span<const index_t> indices) const {
    for (std::size_t i = 0; i < indices.size() && i < rank; ++i) {
      if (!dims[i].contains(indices[i])) return false;
    }
    return true;
  }
  ///@}

  /// Moves dims 0, 1, ... by the given offsets (translate(1, 2): dim 0 by 1, dim 1 by 2).
  /// Offsets past the rank are ignored.
  ///@{
  template <typename... Offsets>
  raw_buffer& translate(index_t o0, Offsets... offsets) {
    const index_t all[] = {o0, static_cast<index_t>(offsets)...};
    return translate(span<const index_t>(all, 1 + sizeof...(Offsets)));
  }
  raw_buffer& translate(span<const index_t> offsets) {
    for (std::size_t d = 0; d < offsets.size() && d < rank; ++d) dims[d].translate(offsets[d]);
    return *this;
  }
  ///@}

  /// Restricts dimension d to [min, max] intersected with its current bounds. An unfolded dim
  /// moves the base to the new min (addresses of the remaining elements are unchanged); a folded
  /// one keeps it. If the result is empty, the base becomes null. A stride-0 dim (which contains
  /// every coordinate and addresses nothing) takes the intersection as its bounds when it is not
  /// empty, and is left as it is otherwise; its base never moves. d >= rank is a no-op.
  raw_buffer& crop(std::size_t d, index_t min, index_t max) {
    // Inline, like the slices below: callbacks crop and slice on every call.
    if (d >= rank) return *this;
    slinky::dim& cd = dims[d];
    if (cd.stride() == 0) {
      internal::crop_stride_zero(cd, min, max);
      return *this;
    }
    const index_t new_min = std::max(min, cd.min());
    const index_t new_max = std::min(max, cd.max());
    if (new_max < new_min) {
      base = nullptr;
    } else if (base && cd.fold_factor() <= 0) {
      // A folded dim addresses coordinates independently of its min, so its base stays put.
      base = offset_bytes_non_null(base, (new_min - cd.min()) * cd.stride());
    }
    cd.set_bounds(new_min, new_max);
    return *this;
  }
  /// Removes dimension d without moving the base (so the buffer then refers to the elements at
  /// coordinate min of an unfolded d, or at the coordinate of d that is a multiple of the fold of
  /// a folded one). d >= rank is a no-op. Removing dim 0 only advances `dims`; removing another
  /// shifts the later dims down in place, which other descriptors sharing the array see.
  raw_buffer& slice(std::size_t d) {
    if (d >= rank) return *this;
    if (d == 0) {
      // Dropping the first dim needs no writes to a dims array other descriptors may share.
      ++dims;
    } else {
      for (std::size_t i = d; i + 1 < rank; ++i) dims[i] = dims[i + 1];
    }
    --rank;
    return *this;
  }
  /// Moves the base to coordinate `at` of d (to null if d does not contain `at`; a null base stays
  /// null), then removes d.
  raw_buffer& slice(std::size_t d, index_t at) {
    if (d >= rank) return *this;
    if (base) base = dims[d].contains(at) ? offset_bytes_non_null(base, dims[d].flat_offset_bytes(at)) : nullptr;
    return slice(d);
  }
  /// The same for an `at` known to be in d; the base must not be null.
  raw_buffer& slice(std::size_t d, in_bounds at) {
    if (d >= rank) return *this;
    assert(base && dims[d].contains(at.x));
    base = offset_bytes_non_null(base, dims[d].flat_offset_bytes(at.x));
    return slice(d);
  }
  /// Removes the dims ds (the reference requires ascending order, any order works here; indices
  /// >= rank are ignored), without moving the base. Leading dims (0, 1, ..., k - 1 all in ds)
  /// are removed by advancing `dims` by k and trailing ones by lowering the rank, so
  /// `slice({0, 1})` never writes to a dims array it shares with another descriptor; only the dims
  /// between two kept ones shift down in place (as in slice(d)).
  ///@{
  raw_buffer& slice(span<const std::size_t> ds);
  raw_buffer& slice(std::initializer_list<std::size_t> ds) {
    return slice(span<const std::size_t>(ds.begin(), ds.size()));
  }
  ///@}

  /// The bytes spanned by the elements: elem_size plus, for each dim, (extent - 1) * |stride|
  /// (a folded dim spans its whole fold, a stride-0 dim nothing). 0 if any dim is empty, and 0 if
  /// the size does not fit in an index_t (e.g. a stride still auto_stride on a dim of extent > 1).
  std::size_t size_bytes() const;
  /// The number of elements (the product of the extents; the largest size_t if it overflows).
  std::size_t elem_count() const;
  /// Fills in every stride that is dim::auto_stride. Stride-0 dims are ignored; an auto dim of
  /// allocation extent (the fold factor if folded, else the extent) <= 1 gets elem_size. Every
  /// other auto dim, in dim order, gets the smallest stride that does not overlap the dims placed
  /// so far (the known ones, then the earlier auto ones): elem_size, or the footprint
  /// (allocation extent * |stride|) of a placed dim rounded up to `alignment` (a power of 2). Two
  /// dims do not overlap if the footprint of one fits in one step of the other. Returns the
  /// allocation size, the span of the elements plus elem_size rounded up to `alignment` (0 if a
  /// dim is empty), or nullopt if it overflows (the strides are still filled in then).
  std::optional<std::size_t> init_strides(index_t alignment = 1);
  /// init_strides(stride_alignment), then mallocs the allocation size (plus room to align), and
  /// sets base to the element of min coordinates in it, aligned to base_alignment (a power of 2).
  /// Returns what to give std::free, or null (allocating nothing, base unchanged) if the size
  /// overflows or malloc fails.
  void* allocate(index_t base_alignment = 1, index_t stride_alignment = 1);

  /// This buffer as a buffer<NewT> (asserting that elem_size is sizeof(NewT), unless NewT is void).
  ///@{
  template <typename NewT>
  const buffer<NewT, 0>& cast() const;
  template <typename NewT>
  buffer<NewT, 0>& cast();
  ///@}

  /// A buffer of the given rank and element size with dims copied from `dims` (default dims
  /// [0, -1] without it), in one malloc block. When rank == 0 or dims are given, the block also
  /// holds size_bytes() of data and base points at it (aligned to `alignment`); base is null if
  /// that size is 0 (an empty dim, an auto stride on a dim of extent > 1, or elem_size 0 at rank
  /// 0). Strides are not filled in.
  static raw_buffer_ptr make(std::size_t rank, std::size_t elem_size = 0, const slinky::dim* dims = nullptr,
                             index_t alignment = 1);
  /// make(src.rank, src.elem_size, src.dims, alignment) (src's strides and fold factors are kept),
  /// then copy(src, result).
  static raw_buffer_ptr make_copy(const raw_buffer& src, index_t alignment = 1);
  /// A rank-0 buffer holding a copy of the elem_size bytes at value.
  static raw_buffer_ptr make_scalar(std::size_t elem_size, const void* value, index_t alignment = 1);
  /// A rank-0 buffer holding a copy of value (of a trivially copyable T).
  template <typename T>
  static raw_buffer_ptr make_scalar(const T& value, index_t alignment = 1) {
    static_assert(std::is_trivially_copyable<T>::value, "make_scalar needs a trivially copyable type");
    return make_scalar(sizeof(T), &value, alignment);
  }
  /// A rank-0 descriptor of the caller's value (not a copy).
  ///@{
  static raw_buffer make_scalar_ref(std::size_t elem_size, void* value) { return {value, elem_size, 0, nullptr}; }
  template <typename T>
  static raw_buffer make_scalar_ref(T& value) {
    return make_scalar_ref(sizeof(T), const_cast<std::remove_const_t<T>*>(&value));
  }
  ///@}

private:
  template <typename I0, typename... Indices>
  std::ptrdiff_t offset_impl(std::size_t d, I0 i0, Indices... indices) const {
    const std::ptrdiff_t offset = d < rank ? internal::flat_offset_dim(dims[d], i0) : 0;
    if constexpr (sizeof...(Indices) == 0) {
      return offset;
    } else {
      return offset + offset_impl(d + 1, indices...);
    }
  }
  template <typename I0, typename... Indices>
  bool contains_impl(std::size_t d, I0 i0, Indices... indices) const {
    if (d < rank && !internal::contains_dim(dims[d], i0)) return false;
    if constexpr (sizeof...(Indices) == 0) {
      return true;
    } else {
      return contains_impl(d + 1, indices...);
    }
  }
};

/// A pad buffer meaning "no padding".
inline const raw_buffer no_padding{};

namespace internal {

// b.size_bytes(), or nullopt if it does not fit in an index_t (size_bytes() is then 0).
std::optional<std::size_t> checked_size_bytes(const raw_buffer& b);
// The same as an index_t, -1 if it does not fit: for the evaluator's paths run per loop iteration
// (GCC returns a std::optional<std::size_t> through memory with a byte store and an 8-byte load,
// a failed store-to-load forward on every call: 10 to 15% of a small parallel iteration's time).
index_t size_bytes_or_negative(const raw_buffer& b);
// b.init_strides(alignment) as an index_t, -1 where it returns nullopt.
index_t init_strides_or_negative(raw_buffer& b, index_t alignment);

// The offset in bytes from the start of b's memory to its base (the element of min
// coordinates): dims with negative strides put that element at the end of their span.
index_t base_offset(const raw_buffer& b);

}  // namespace internal

/// Copies dst's elements from src over dst's own bounds. Where dst is outside src, the value
/// comes from pad, indexed at the same coordinates (a rank-0 pad is a single value broadcast
/// everywhere, and a pad dimension of extent 1, e.g. the point [0, 0], is used at every
/// coordinate). With no pad (null base or empty), elements of dst outside src are left unchanged.
/// src, dst and pad must have the same elem_size. A stride-0 dim of src or pad (and any dim past
/// their rank) has a value at every coordinate; folded dims of any operand are handled; src and
/// dst may share memory if each element of dst is read only from the same address in src (an
/// in-place copy) or the regions do not overlap.
void copy(const raw_buffer& src, const raw_buffer& dst, const raw_buffer& pad = no_padding);
/// Writes pad to the elements of dst that are outside src_bounds (src_bounds has dst.rank dims;
/// only their min and max are used, whatever their strides).
void pad(const dim* src_bounds, const raw_buffer& dst, const raw_buffer& pad_value);
/// Sets every element of dst to the elem_size bytes at value.
void fill(const raw_buffer& dst, const void* value);

/// True if the byte offsets of all elements (relative to base) fit in an index_t and, with a
/// non-null base, the addresses base + offset (and their elem_size bytes) do not wrap around the
/// address space. An empty buffer is valid.
bool validate_buffer(const raw_buffer& buf);

/// A rank-0 buffer holding its own value: e.g. copy(src, dst, scalar<int>(0)) pads with 0. A copy
/// refers to its own value.
template <typename T>
class scalar : public raw_buffer {
public:
  /// The value; base points at it.
  T value;

  /// A scalar holding value.
  scalar(const T& value = T()) : raw_buffer{nullptr, sizeof(T), 0, nullptr}, value(value) { base = &this->value; }
  /// A scalar holding other's value (base points at the copy's own value).
  scalar(const scalar& other) : raw_buffer{nullptr, sizeof(T), 0, nullptr}, value(other.value) { base = &this->value; }
  /// Copies other's value (base still points at this object's value).
  scalar& operator=(const scalar& other) {
    value = other.value;
    return *this;
  }

  /// The value.
  ///@{
  T& operator()() { return value; }
  const T& operator()() const { return value; }
  ///@}
};

/// A typed buffer with room for DimsSize dims inline (more are allocated on the heap). A default
/// constructed buffer has rank DimsSize with default dims [0, -1]. Made from extents it has min 0
/// and dense strides with dim 0 innermost; allocate() owns its memory. Copies and conversions are
/// shallow: they describe the same memory, and only the object that allocated it frees it.
template <typename T, std::size_t DimsSize = 0>
class buffer : public raw_buffer {
  std::array<slinky::dim, DimsSize> dims_storage_;
  slinky::dim* heap_dims_ = nullptr;
  std::size_t heap_capacity_ = 0;
  void* to_free_ = nullptr;

  static constexpr std::size_t default_elem_size = internal::type_size<T>::value;

  slinky::dim* storage() { return heap_dims_ ? heap_dims_ : dims_storage_.data(); }
  std::size_t capacity() const { return heap_dims_ ? heap_capacity_ : DimsSize; }

  // Sets the rank to r with dims in this object's storage (contents unspecified).
  void init_dims(std::size_t r) {
    rank = r;
    if (r <= DimsSize) {
      dims = dims_storage_.data();
    } else {
      heap_dims_ = new slinky::dim[r];
      heap_capacity_ = r;
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
    heap_capacity_ = 0;
  }
  // Makes room for n dims at `dims` (moving them to the heap if this object's storage after
  // `dims` is too small).
  void reserve_dims(std::size_t n) {
    const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(storage());
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(dims);
    const std::uintptr_t end = begin + capacity() * sizeof(slinky::dim);
    if (dims && at >= begin && at + n * sizeof(slinky::dim) <= end) return;
    slinky::dim* grown = new slinky::dim[n];
    for (std::size_t d = 0; d < rank; ++d) grown[d] = dims[d];
    delete[] heap_dims_;
    heap_dims_ = grown;
    heap_capacity_ = n;
    dims = grown;
  }
  void set_dense(span<const index_t> extents) {
    index_t stride = static_cast<index_t>(elem_size);
    for (std::size_t d = 0; d < rank; ++d) {
      dims[d] = slinky::dim(0, extents[d] - 1, stride);
      // Saturates rather than wrap for extents whose product overflows (the layout then does not
      // validate and cannot be allocated).
      stride = saturate_mul(stride, extents[d]);
    }
  }

public:
  /// The element type.
  using element = T;
  /// The type of pointers to elements (what for_each_element passes for this buffer).
  using pointer = T*;
  /// The element type.
  using value_type = T;

  /// Rank DimsSize, default dims [0, -1] (automatic strides), no memory; elem_size is sizeof(T)
  /// (0 for void).
  buffer() : raw_buffer{nullptr, default_elem_size, 0, nullptr} { init_dims(DimsSize); }
  /// The given rank and element size, default dims [0, -1] (automatic strides), no memory.
  explicit buffer(std::size_t rank, std::size_t elem_size = default_elem_size)
      : raw_buffer{nullptr, elem_size, 0, nullptr} {
    init_dims(rank);
  }
  /// Dims [0, extent - 1] for the given extents, with dense strides (dim 0 innermost), no memory
  /// (allocate() allocates it).
  ///@{
  buffer(span<const index_t> extents, std::size_t elem_size = default_elem_size)
      : raw_buffer{nullptr, elem_size, 0, nullptr} {
    init_dims(extents.size());
    set_dense(extents);
  }
  buffer(std::initializer_list<index_t> extents, std::size_t elem_size = default_elem_size)
      : buffer(span<const index_t>(extents.begin(), extents.size()), elem_size) {}
  ///@}
  /// Buffers over existing memory: rank 1 of `size` elements, or dense with the given extents.
  /// Note that buffer<T>(p, {}) is the first (rank 1, size 0); a rank-0 view of p is
  /// buffer<T>(p, span<const index_t>()) (or scalar<T>, raw_buffer::make_scalar_ref).
  ///@{
  buffer(T* base, index_t size, std::size_t elem_size = default_elem_size)
      : buffer(span<const index_t>(&size, 1), elem_size) {
    raw_buffer::base = const_cast<std::remove_const_t<T>*>(base);
  }
  buffer(T* base, span<const index_t> extents, std::size_t elem_size = default_elem_size) : buffer(extents, elem_size) {
    raw_buffer::base = const_cast<std::remove_const_t<T>*>(base);
  }
  ///@}

  /// A view of other's memory (base, elem_size and a copy of its dims); owns no memory.
  ///@{
  buffer(const buffer& other) : raw_buffer() { assign_from(other); }
  buffer(const raw_buffer& other) : raw_buffer() { assign_from(other); }
  ///@}
  /// A view of other's memory that also takes over the memory other allocated (other then frees
  /// nothing).
  buffer(buffer&& other) noexcept : raw_buffer() {
    assign_from(other);
    to_free_ = other.to_free_;
    other.to_free_ = nullptr;
  }
  /// Frees the memory this buffer allocated, then views other's memory (owning none).
  buffer& operator=(const buffer& other) {
    if (this == &other) return *this;
    release();
    assign_from(other);
    return *this;
  }
  /// Frees the memory this buffer allocated, then views other's memory and takes over the memory
  /// other allocated.
  buffer& operator=(buffer&& other) noexcept {
    if (this == &other) return *this;
    release();
    assign_from(other);
    to_free_ = other.to_free_;
    other.to_free_ = nullptr;
    return *this;
  }
  /// Frees the memory this buffer allocated (if any).
  ~buffer() { release(); }

  /// The base pointer as a T*.
  T* base() const { return static_cast<T*>(raw_buffer::base); }

  /// Allocates memory for the buffer (filling in automatic strides) with its base aligned to
  /// `alignment`, and owns it. If the size overflows (or malloc fails), the base becomes null.
  void allocate(index_t alignment = 1) {
    free();
    to_free_ = raw_buffer::allocate(alignment);
  }
  /// Frees the memory this buffer allocated (if any) and sets the base to null.
  void free() {
    std::free(to_free_);
    to_free_ = nullptr;
    raw_buffer::base = nullptr;
  }

  /// Dim d, first raising the rank to d + 1 with broadcast dims if d >= rank. A broadcast's fold
  /// factor is 0: to give such a dim a non-zero stride, assign it a whole dim (or also set its fold
  /// factor to dim::unfolded).
  slinky::dim& mutable_dim(std::size_t d) {
    if (d >= rank) {
      reserve_dims(d + 1);
      for (std::size_t i = rank; i <= d; ++i) dims[i] = slinky::dim::broadcast();
      rank = d + 1;
    }
    return dims[d];
  }

  /// The inverse of slice(d): inserts `dim` as dim d, raising the rank (after a slice(0), just
  /// steps `dims` back). Meant for dims sliced from this buffer's own dims.
  buffer& unslice(std::size_t d, const slinky::dim& dim) {
    if (d == 0 && reinterpret_cast<std::uintptr_t>(dims) > reinterpret_cast<std::uintptr_t>(storage()) &&
        reinterpret_cast<std::uintptr_t>(dims) <=
            reinterpret_cast<std::uintptr_t>(storage()) + capacity() * sizeof(slinky::dim)) {
      --dims;
      dims[0] = dim;
      ++rank;
      return *this;
    }
    if (d > rank) mutable_dim(d - 1);
    reserve_dims(rank + 1);
    for (std::size_t i = rank; i > d; --i) dims[i] = dims[i - 1];
    dims[d] = dim;
    ++rank;
    return *this;
  }

  /// Element access with the index forms of address_at.
  ///@{
  auto& operator()() const { return *base(); }
  template <typename... Indices>
  auto& operator()(index_t i0, Indices... indices) const {
    return *static_cast<T*>(address_at(i0, indices...));
  }
  template <typename... Indices>
  auto& operator()(slice_tag i0, Indices... indices) const {
    return *static_cast<T*>(address_at(i0, indices...));
  }
  auto& operator()(span<const index_t> indices) const { return *static_cast<T*>(address_at(indices)); }
  auto& at() const { return *base(); }
  template <typename... Indices>
  auto& at(index_t i0, Indices... indices) const {
    return *static_cast<T*>(address_at(i0, indices...));
  }
  template <typename... Indices>
  auto& at(slice_tag i0, Indices... indices) const {
    return *static_cast<T*>(address_at(i0, indices...));
  }
  auto& at(span<const index_t> indices) const { return *static_cast<T*>(address_at(indices)); }
  ///@}

  /// raw_buffer::crop, raw_buffer::slice and raw_buffer::translate, returning this buffer.
  ///@{
  buffer& crop(std::size_t d, index_t min, index_t max) {
    raw_buffer::crop(d, min, max);
    return *this;
  }
  buffer& slice(std::size_t d) {
    raw_buffer::slice(d);
    return *this;
  }
  buffer& slice(std::size_t d, index_t at) {
    raw_buffer::slice(d, at);
    return *this;
  }
  buffer& slice(std::size_t d, in_bounds at) {
    raw_buffer::slice(d, at);
    return *this;
  }
  buffer& slice(span<const std::size_t> ds) {
    raw_buffer::slice(ds);
    return *this;
  }
  buffer& slice(std::initializer_list<std::size_t> ds) {
    raw_buffer::slice(ds);
    return *this;
  }
  template <typename... Offsets>
  buffer& translate(index_t o0, Offsets... offsets) {
    raw_buffer::translate(o0, offsets...);
    return *this;
  }
  buffer& translate(span<const index_t> offsets) {
    raw_buffer::translate(offsets);
    return *this;
  }
  ///@}
};

template <typename NewT>
const buffer<NewT, 0>& raw_buffer::cast() const {
  assert(internal::type_size<NewT>::value == 0 || elem_size == sizeof(NewT));
  return *reinterpret_cast<const buffer<NewT, 0>*>(this);
}
template <typename NewT>
buffer<NewT, 0>& raw_buffer::cast() {
  assert(internal::type_size<NewT>::value == 0 || elem_size == sizeof(NewT));
  return *reinterpret_cast<buffer<NewT, 0>*>(this);
}

}  // namespace slinky

// The dim optimizers (fuse_contiguous_dims, sort_dims, optimize_dims, ...), inline.
#include "slinky/runtime/dim_optimizers.h"  // IWYU pragma: export
// for_each_element and for_each_contiguous_slice, whose loops run at the call site.
#include "slinky/runtime/for_each.h"  // IWYU pragma: export

#endif  // SLINKY_RUNTIME_BUFFER_H
