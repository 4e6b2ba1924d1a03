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

namespace slinky {

/// The integer type of coordinates, strides and extents: int64_t on 64-bit targets (int32_t on
/// 32-bit ones), always wide enough to hold a pointer.
using index_t = std::conditional_t<sizeof(void*) == 8, std::int64_t, std::int32_t>;

/// A tag usable in place of an index: that dimension is skipped (contributes no offset and is
/// always contained). Also spelled decltype(slinky::slice).
struct slice_tag {};
/// The slice_tag value, used as an index: `b.address_at(x, slice, z)`.
inline constexpr slice_tag slice{};

/// A slice coordinate known to be inside the bounds of the dimension sliced (see
/// raw_buffer::slice(d, in_bounds)).
struct in_bounds {
  /// The coordinate.
  index_t x;
};

/// `p` moved by `offset` bytes (p must not be null).
template <typename T>
T* offset_bytes_non_null(T* p, std::ptrdiff_t offset) {
  using byte = std::conditional_t<std::is_const<T>::value, const char, char>;
  using cv_void = std::conditional_t<std::is_const<T>::value, const void, void>;
  return static_cast<T*>(static_cast<cv_void*>(static_cast<byte*>(static_cast<cv_void*>(p)) + offset));
}
/// `p` moved by `offset` bytes; a null `p` stays null.
template <typename T>
T* offset_bytes(T* p, std::ptrdiff_t offset) {
  return p ? offset_bytes_non_null(p, offset) : nullptr;
}
/// `p` rounded up to a multiple of `alignment` (a power of two).
template <typename T>
T* align_up(T* p, std::size_t alignment) {
  const std::uintptr_t i = reinterpret_cast<std::uintptr_t>(p);
  return reinterpret_cast<T*>((i + alignment - 1) & ~(static_cast<std::uintptr_t>(alignment) - 1));
}

/// One dimension of a buffer: the inclusive range of coordinates [min, max], the distance in bytes
/// between neighbouring elements, and a fold factor. A dim is folded when its fold factor is
/// positive: coordinate i then lives at euclidean_mod(i, fold) * stride (a ring buffer, independent
/// of min); unfolded (fold factor `unfolded`), at (i - min) * stride. A dim with a non-zero stride
/// must have a fold factor that is `unfolded` or positive; on a stride-0 dim the fold factor is
/// not used for addressing (clients may carry data in it).
class alignas(16) dim {
  index_t min_;
  index_t max_;
  index_t stride_;
  index_t fold_factor_;

public:
  /// A stride to be filled in by init_strides or an allocation.
  static constexpr index_t auto_stride = std::numeric_limits<index_t>::max();
  /// The fold factor of a dimension that is not folded.
  static constexpr index_t unfolded = -1;

  /// The empty range [0, -1], with an automatic stride, unfolded.
  constexpr dim() : min_(0), max_(-1), stride_(auto_stride), fold_factor_(unfolded) {}
  /// [min, max] with the given stride (bytes) and fold factor.
  constexpr dim(index_t min, index_t max, index_t stride = auto_stride, index_t fold_factor = unfolded)
      : min_(min), max_(max), stride_(stride), fold_factor_(fold_factor) {}

  /// The dim of every coordinate beyond a buffer's rank: the point 0 with stride 0 (which contains
  /// every coordinate) and fold factor 0.
  static const dim& broadcast() {
    static constexpr dim b(0, 0, 0, 0);
    return b;
  }

  /// The first coordinate.
  constexpr index_t min() const { return min_; }
  /// The last coordinate (inclusive).
  constexpr index_t max() const { return max_; }
  /// The first coordinate (min).
  constexpr index_t begin() const { return min_; }
  /// One past the last coordinate (max + 1).
  constexpr index_t end() const { return max_ + 1; }
  /// The number of coordinates, 0 if empty; saturates at the largest index_t rather than wrap
  /// (e.g. [min, max] = [-2^63, 2^63 - 1]).
  constexpr index_t extent() const {
    if (max_ < min_) return 0;
    index_t e = 0;
    if (__builtin_sub_overflow(max_, min_, &e) || e == std::numeric_limits<index_t>::max()) {
      return std::numeric_limits<index_t>::max();
    }
    return e + 1;
  }
  /// The distance in bytes between neighbouring coordinates (auto_stride if not chosen yet).
  constexpr index_t stride() const { return stride_; }
  /// The fold factor: positive if folded, `unfolded` (-1) if not.
  constexpr index_t fold_factor() const { return fold_factor_; }
  /// True if max < min (no coordinates).
  constexpr bool empty() const { return max_ < min_; }
  /// min == max, and min == max == x.
  ///@{
  constexpr bool is_point() const { return min_ == max_; }
  constexpr bool is_point(index_t x) const { return min_ == x && max_ == x; }
  ///@}
  /// The bounds and stride of dim::broadcast() (the fold factor is not compared).
  constexpr bool is_broadcast() const { return min_ == 0 && max_ == 0 && stride_ == 0; }

  /// True if the coordinates [min, max] (not empty) fall in different folds of this dim, i.e. they
  /// cannot be addressed as one linear range. Always false for a stride-0 or unfolded dim.
  constexpr bool is_folded(index_t min, index_t max) const {
    if (stride_ == 0 || fold_factor_ <= 0 || max < min) return false;
    // min / fold != max / fold (Euclidean): the range is at least a fold long, or runs past the
    // end of min's fold. Callbacks ask this on every call, so no 64-bit division.
    const std::size_t span = static_cast<std::size_t>(max) - static_cast<std::size_t>(min);
    const std::size_t room = static_cast<std::size_t>(fold_factor_ - euclidean_mod_positive_modulus(min, fold_factor_));
    return span >= room;
  }
  /// is_folded(other.min(), other.max()).
  constexpr bool is_folded(const dim& other) const { return is_folded(other.min_, other.max_); }
  /// True if this dim's own range crosses a fold boundary.
  constexpr bool is_folded() const { return is_folded(min_, max_); }

  /// True if a stride-0 dim (which contains every coordinate), or min <= a and b <= max.
  constexpr bool contains(index_t a, index_t b) const { return stride_ == 0 || (min_ <= a && b <= max_); }
  /// contains(x, x).
  constexpr bool contains(index_t x) const { return contains(x, x); }
  /// True: a sliced dimension is always contained.
  constexpr bool contains(slice_tag) const { return true; }
  /// contains(other.min(), other.max()): an empty `other` is contained only if its bounds are.
  constexpr bool contains(const dim& other) const { return contains(other.min_, other.max_); }

  /// Sets the range to [min, max]; returns this dim.
  dim& set_bounds(index_t min, index_t max) {
    min_ = min;
    max_ = max;
    return *this;
  }
  /// Sets the range to [min, min + extent - 1].
  dim& set_min_extent(index_t min, index_t extent) { return set_bounds(min, min + extent - 1); }
  /// Sets the number of coordinates; keeps min.
  dim& set_extent(index_t extent) { return set_bounds(min_, min_ + extent - 1); }
  /// Sets the range to [begin, end): end is one past the last coordinate.
  dim& set_range(index_t begin, index_t end) { return set_bounds(begin, end - 1); }
  /// Sets the range to [x, x].
  dim& set_point(index_t x) { return set_bounds(x, x); }
  /// Sets the stride (bytes).
  dim& set_stride(index_t stride) {
    stride_ = stride;
    return *this;
  }
  /// Sets the fold factor (positive, or `unfolded`).
  dim& set_fold_factor(index_t fold_factor) {
    fold_factor_ = fold_factor;
    return *this;
  }
  /// Moves the range by offset: [min + offset, max + offset] (the stride and fold are kept).
  dim& translate(index_t offset) { return set_bounds(min_ + offset, max_ + offset); }

  /// The byte offset of coordinate i from the buffer's base: (i - min) * stride if the fold factor
  /// is exactly `unfolded` or the stride is 0, otherwise euclidean_mod(i, fold_factor) * stride.
  /// Callbacks index on every element: the unfolded case is a subtraction and a multiplication
  /// inline, the rest (a modulo) out of line.
  std::ptrdiff_t flat_offset_bytes(index_t i) const {
    if (__builtin_expect(fold_factor_ == unfolded, 1)) return (i - min_) * stride_;
    return folded_offset_bytes(i);
  }
  /// 0: a sliced dimension contributes no offset.
  constexpr std::ptrdiff_t flat_offset_bytes(slice_tag) const { return 0; }

private:
  SLINKY_NO_INLINE std::ptrdiff_t folded_offset_bytes(index_t i) const {
    if (stride_ == 0) return 0;
    // A positive fold factor (a ring buffer) takes the cheaper modulo.
    if (fold_factor_ > 0) return euclidean_mod_positive_modulus(i, fold_factor_) * stride_;
    return euclidean_mod(i, fold_factor_) * stride_;
  }

public:
  /// True if the bounds, strides and fold factors are equal.
  friend constexpr bool operator==(const dim& a, const dim& b) {
    return a.min_ == b.min_ && a.max_ == b.max_ && a.stride_ == b.stride_ && a.fold_factor_ == b.fold_factor_;
  }
  /// Not operator==.
  friend constexpr bool operator!=(const dim& a, const dim& b) { return !(a == b); }
};

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

// Dimension optimizers, for callbacks and copies that want fewer, larger dims.

/// True if the dims `inner` and `outer` of a buffer can be addressed as one dim (fuse()): inner is
/// not empty, and either outer is a single unfolded point with a non-zero stride, or
/// outer.stride == inner.stride * inner.extent and (that stride is 0 or inner is unfolded).
inline bool can_fuse(const dim& inner, const dim& outer) {
  if (inner.empty()) return false;
  const bool inner_linear = inner.stride() == 0 || inner.fold_factor() <= 0;
  // A point outer dim adds no offset, unless it is folded (its offset is then its slot's).
  if (outer.is_point() && outer.stride() != 0) return inner_linear && outer.fold_factor() <= 0;
  index_t fused_stride;
  if (__builtin_mul_overflow(inner.stride(), inner.extent(), &fused_stride)) return false;
  return outer.stride() == fused_stride && inner_linear;
}
/// The dim addressing what inner and outer (can_fuse) address together: coordinate
/// outer_x * e + (inner_x - inner.min) with e = inner.extent(), so [outer.begin * e, outer.end * e)
/// with inner's stride, folded by outer.fold * e if outer is folded. A broadcast outer gives outer.
inline dim fuse(dim inner, const dim& outer) {
  if (outer.is_broadcast()) return outer;
  const index_t e = inner.extent();
  inner.set_range(outer.begin() * e, outer.end() * e);
  if (outer.fold_factor() > 0) inner.set_fold_factor(outer.fold_factor() * e);
  return inner;
}

/// What fuse<>(inner, outer, buf) does with the outer dim.
enum class fuse_type {
  undef,   ///< Leaves it as it was (the caller overwrites or ignores it).
  keep,    ///< Sets it to the point 0.
  remove,  ///< Removes it (slice).
};

/// Fuses dims inner and outer of buf in place (can_fuse must hold); dims past the rank are
/// broadcasts.
template <fuse_type type>
void fuse(index_t inner, index_t outer, raw_buffer& buf) {
  const std::size_t in = static_cast<std::size_t>(inner), out = static_cast<std::size_t>(outer);
  if (in < buf.rank) buf.dims[in] = fuse(buf.dims[in], buf.dim(out));
  if (out >= buf.rank) return;
  if constexpr (type == fuse_type::keep) {
    buf.dims[out].set_point(0);
  } else if constexpr (type == fuse_type::remove) {
    buf.slice(out);
  }
}

namespace internal {

// The dim optimizers over a fixed number of buffers, inline: callbacks call them on every call, and
// with the number of buffers known the loops over them unroll.

inline bool same_set(span<const int> dim_sets, std::size_t a, std::size_t b) {
  if (dim_sets.empty()) return true;
  return a < dim_sets.size() && b < dim_sets.size() && dim_sets[a] == dim_sets[b];
}

template <std::size_t N>
std::size_t max_rank(raw_buffer* const (&bufs)[N]) {
  std::size_t rank = 0;
  for (const raw_buffer* b : bufs) rank = std::max(rank, b->rank);
  return rank;
}

template <std::size_t N>
bool sort_dims(span<const int> dim_sets, raw_buffer* const (&bufs)[N]) {
  std::size_t rank = bufs[0]->rank;
  for (const raw_buffer* b : bufs) rank = std::min(rank, b->rank);
  const dim* first = bufs[0]->dims;
  auto key = [first](std::size_t d) { return static_cast<std::uint64_t>(abs_value(first[d].stride())); };
  bool moved = false;
  // An insertion sort of each set's dims among the positions of that set (stable).
  for (std::size_t i = 1; i < rank; ++i) {
    for (std::size_t j = i; j > 0;) {
      // The nearest earlier position of j's set.
      std::size_t q = j - 1;
      while (q > 0 && !same_set(dim_sets, q, j)) --q;
      if (!same_set(dim_sets, q, j) || key(j) >= key(q)) break;
      for (raw_buffer* b : bufs) std::swap(b->dims[q], b->dims[j]);
      moved = true;
      j = q;
    }
  }
  return moved;
}

template <std::size_t N>
int fuse_contiguous_dims(span<const int> dim_sets, raw_buffer* const (&bufs)[N]) {
  int fused = 0;
  for (std::size_t d = max_rank(bufs); d-- > 1;) {
    if (!same_set(dim_sets, d - 1, d)) continue;
    // A buffer of rank below d has neither dim (it broadcasts in both): fusing leaves it alone.
    const raw_buffer* ref = nullptr;
    for (const raw_buffer* b : bufs) {
      if (!ref && b->rank >= d) ref = b;
    }
    const dim& inner0 = ref->dim(d - 1);
    bool ok = true;
    for (const raw_buffer* b : bufs) {
      if (b->rank < d) continue;
      const dim& inner = b->dim(d - 1);
      ok = ok && inner.min() == inner0.min() && inner.max() == inner0.max() && can_fuse(inner, b->dim(d));
    }
    if (!ok) continue;
    for (raw_buffer* b : bufs) fuse<fuse_type::remove>(d - 1, d, *b);
    ++fused;
  }
  return fused;
}

template <std::size_t N>
int optimize_dims(span<const int> dim_sets, bool slice_points, raw_buffer* const (&bufs)[N]) {
  int removed = 0;
  if (slice_points) {
    for (std::size_t d = max_rank(bufs); d-- > 0;) {
      const index_t at = bufs[0]->dim(d).min();
      bool point = true;
      for (const raw_buffer* b : bufs) point = point && b->dim(d).is_point(at);
      if (!point) continue;
      // At the point's own coordinate: a folded point is not at offset 0.
      for (raw_buffer* b : bufs) b->slice(d, at);
      ++removed;
    }
  }
  removed += fuse_contiguous_dims(dim_sets, bufs);
  if (sort_dims(dim_sets, bufs)) removed += fuse_contiguous_dims(dim_sets, bufs);
  return removed;
}

}  // namespace internal

/// Permutes the dims of all the buffers together (within the smallest of their ranks) so that the
/// first buffer's |strides| ascend (a stable sort). With dim_sets (indexed by dim), only dims with
/// equal set ids are swapped. Returns true if any dim moved.
///@{
template <typename... Bufs>
bool sort_dims(span<const int> dim_sets, raw_buffer& buf, Bufs&... bufs) {
  raw_buffer* const all[] = {&buf, static_cast<raw_buffer*>(&bufs)...};
  return internal::sort_dims(dim_sets, all);
}
template <typename... Bufs>
bool sort_dims(raw_buffer& buf, Bufs&... bufs) {
  raw_buffer* const all[] = {&buf, static_cast<raw_buffer*>(&bufs)...};
  return internal::sort_dims(span<const int>(), all);
}
///@}

/// From the outermost pair of dims down, fuses dims d - 1 and d of all the buffers (removing d)
/// when every buffer has the same bounds in d - 1 and can_fuse(d - 1, d) (and, with dim_sets, the
/// two dims have the same set id). A buffer of rank below d has neither dim (it broadcasts in
/// both) and does not prevent the fusion. Returns the number of dims removed.
///@{
template <typename... Bufs>
int fuse_contiguous_dims(span<const int> dim_sets, raw_buffer& buf, Bufs&... bufs) {
  raw_buffer* const all[] = {&buf, static_cast<raw_buffer*>(&bufs)...};
  return internal::fuse_contiguous_dims(dim_sets, all);
}
template <typename... Bufs>
int fuse_contiguous_dims(raw_buffer& buf, Bufs&... bufs) {
  raw_buffer* const all[] = {&buf, static_cast<raw_buffer*>(&bufs)...};
  return internal::fuse_contiguous_dims(span<const int>(), all);
}
///@}

/// Without dim_sets, first removes every dim in which all the buffers are the same single point
/// (moving their bases to it); then fuse_contiguous_dims, sort_dims, and fuse_contiguous_dims again
/// if the sort moved anything. Returns the number of dims removed.
///@{
template <typename... Bufs>
int optimize_dims(span<const int> dim_sets, raw_buffer& buf, Bufs&... bufs) {
  raw_buffer* const all[] = {&buf, static_cast<raw_buffer*>(&bufs)...};
  return internal::optimize_dims(dim_sets, false, all);
}
template <typename... Bufs>
int optimize_dims(raw_buffer& buf, Bufs&... bufs) {
  raw_buffer* const all[] = {&buf, static_cast<raw_buffer*>(&bufs)...};
  return internal::optimize_dims(span<const int>(), true, all);
}
///@}

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

// for_each_element and for_each_contiguous_slice, whose loops run at the call site.
#include "slinky/runtime/for_each.h"  // IWYU pragma: export

#endif  // SLINKY_RUNTIME_BUFFER_H
