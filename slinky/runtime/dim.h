/// \file
/// One dimension of a buffer (dim), the coordinate type index_t, slice and in_bounds tags, and
/// pointer offset helpers. Included by buffer.h (include that).
#ifndef SLINKY_RUNTIME_DIM_H
#define SLINKY_RUNTIME_DIM_H

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "slinky/base/arithmetic.h"
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

}  // namespace slinky

#endif  // SLINKY_RUNTIME_DIM_H
