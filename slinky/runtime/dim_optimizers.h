/// \file
/// The dim optimizers, for callbacks and copies that want fewer, larger dims: can_fuse, fuse,
/// sort_dims, fuse_contiguous_dims, optimize_dims, over any number of buffers together. Inline:
/// callbacks call them on every call. Included by buffer.h (include that).
#ifndef SLINKY_RUNTIME_DIM_OPTIMIZERS_H
#define SLINKY_RUNTIME_DIM_OPTIMIZERS_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "slinky/base/span.h"
#include "slinky/runtime/buffer.h"

namespace slinky {

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

}  // namespace slinky

#endif  // SLINKY_RUNTIME_DIM_OPTIMIZERS_H
