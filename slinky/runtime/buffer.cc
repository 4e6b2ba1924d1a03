// Buffer descriptors: cropping and slicing, sizes, layout (init_strides) and allocation, the
// raw_buffer factories, validate_buffer and the dim optimizers. The strided walk behind copy, pad,
// fill and for_each_* is in buffer_walk.cc.
#include "slinky/runtime/buffer.h"

#include <alloca.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>

#include "slinky/base/arithmetic.h"
#include "slinky/base/assert.h"

namespace slinky {

namespace {

constexpr index_t max_index = std::numeric_limits<index_t>::max();

// The number of elements a dim occupies in memory: a folded dim holds its whole fold.
index_t alloc_extent(const dim& d) { return d.fold_factor() > 0 ? d.fold_factor() : d.extent(); }

std::size_t align_size(std::size_t n, std::size_t alignment) { return (n + alignment - 1) / alignment * alignment; }

bool any_empty(const raw_buffer& b) {
  for (std::size_t d = 0; d < b.rank; ++d) {
    if (b.dims[d].empty()) return true;
  }
  return false;
}

// The footprint of a placed dim for init_strides: alloc_extent * |stride| (nullopt on overflow).
std::optional<index_t> footprint(const dim& d) {
  index_t result;
  if (d.stride() == std::numeric_limits<index_t>::min() ||
      __builtin_mul_overflow(alloc_extent(d), abs_value(d.stride()), &result)) {
    return std::nullopt;
  }
  return result;
}

// True if a dim of `extent` elements with `stride` does not overlap the placed dim `other`: one
// of them fits in a single step of the other.
bool no_overlap(index_t stride, index_t extent, const dim& other) {
  const std::optional<index_t> other_footprint = footprint(other);
  if (other_footprint && *other_footprint <= stride) return true;
  index_t this_footprint;
  return !__builtin_mul_overflow(extent, stride, &this_footprint) && this_footprint <= abs_value(other.stride());
}

}  // namespace

raw_buffer& raw_buffer::slice(span<const std::size_t> ds) {
  // The leading dims among ds (0, 1, ... k - 1) go by advancing dims by k, and the others are
  // removed highest first (so the indices of those still to remove do not move, and trailing
  // ones only lower the rank): only dims between two kept dims shift in place. A dims array
  // shared with another descriptor is then written only when that cannot be avoided.
  std::size_t leading = 0;
  while (leading < rank && std::find(ds.begin(), ds.end(), leading) != ds.end()) ++leading;
  std::size_t below = rank;
  for (;;) {
    std::size_t next = 0;
    bool found = false;
    for (std::size_t d : ds) {
      if (d >= leading && d < below && (!found || d > next)) {
        next = d;
        found = true;
      }
    }
    if (!found) break;
    slice(next);
    below = next;
  }
  dims += leading;
  rank -= leading;
  return *this;
}

namespace internal {

index_t base_offset(const raw_buffer& b) {
  index_t offset = 0;
  for (std::size_t d = 0; d < b.rank; ++d) {
    const dim& dd = b.dims[d];
    if (dd.stride() < 0 && alloc_extent(dd) > 0) offset -= (alloc_extent(dd) - 1) * dd.stride();
  }
  return offset;
}

index_t size_bytes_or_negative(const raw_buffer& b) {
  if (b.elem_size > static_cast<std::size_t>(max_index)) return -1;
  if (any_empty(b)) return 0;
  index_t bytes = static_cast<index_t>(b.elem_size);
  for (std::size_t d = 0; d < b.rank; ++d) {
    const dim& dd = b.dims[d];
    if (dd.stride() == 0) continue;
    if (dd.stride() == std::numeric_limits<index_t>::min()) return -1;
    index_t span;
    if (__builtin_mul_overflow(alloc_extent(dd) - 1, abs_value(dd.stride()), &span)) return -1;
    if (__builtin_add_overflow(bytes, span, &bytes)) return -1;
  }
  return bytes;
}

std::optional<std::size_t> checked_size_bytes(const raw_buffer& b) {
  const index_t bytes = size_bytes_or_negative(b);
  if (bytes < 0) return std::nullopt;
  return static_cast<std::size_t>(bytes);
}

}  // namespace internal

std::size_t raw_buffer::size_bytes() const { return internal::checked_size_bytes(*this).value_or(0); }

std::size_t raw_buffer::elem_count() const {
  std::size_t count = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    if (__builtin_mul_overflow(count, static_cast<std::size_t>(dims[d].extent()), &count)) {
      return std::numeric_limits<std::size_t>::max();
    }
  }
  return count;
}

std::optional<std::size_t> raw_buffer::init_strides(index_t alignment) {
  const index_t size = internal::init_strides_or_negative(*this, alignment);
  if (size < 0) return std::nullopt;
  return static_cast<std::size_t>(size);
}

namespace internal {

index_t init_strides_or_negative(raw_buffer& b, index_t alignment) {
  const std::size_t rank = b.rank, elem_size = b.elem_size;
  slinky::dim* dims = b.dims;
  alignment = std::max<index_t>(alignment, 1);
  bool overflow = elem_size > static_cast<std::size_t>(max_index);
  const index_t elem = overflow ? max_index : static_cast<index_t>(elem_size);
  // The dims placed so far: known strides first, then the auto ones in order.
  std::size_t* placed = static_cast<std::size_t*>(alloca(sizeof(std::size_t) * (rank + 1)));
  std::size_t placed_count = 0;
  for (std::size_t d = 0; d < rank; ++d) {
    const index_t stride = dims[d].stride();
    if (stride != slinky::dim::auto_stride && stride != 0 && alloc_extent(dims[d]) > 1) placed[placed_count++] = d;
  }
  for (std::size_t d = 0; d < rank; ++d) {
    slinky::dim& dd = dims[d];
    if (dd.stride() != slinky::dim::auto_stride) continue;
    const index_t extent = alloc_extent(dd);
    if (extent <= 1) {
      dd.set_stride(elem);
      continue;
    }
    auto fits = [&](index_t stride) {
      for (std::size_t i = 0; i < placed_count; ++i) {
        if (!no_overlap(stride, extent, dims[placed[i]])) return false;
      }
      return true;
    };
    std::optional<index_t> best;
    if (fits(elem)) best = elem;
    for (std::size_t i = 0; i < placed_count; ++i) {
      const std::optional<index_t> f = footprint(dims[placed[i]]);
      index_t candidate;
      if (!f || __builtin_add_overflow(*f, alignment - 1, &candidate)) continue;
      candidate = align_down(candidate, alignment);
      if ((!best || candidate < *best) && fits(candidate)) best = candidate;
    }
    if (!best) {
      // Every candidate overflows. The largest aligned stride below auto_stride stands in (the
      // size overflows anyway).
      overflow = true;
      best = (max_index - 1) / alignment * alignment;
    }
    dd.set_stride(*best);
    placed[placed_count++] = d;
  }
  if (overflow) return -1;
  const index_t size = size_bytes_or_negative(b);
  if (size <= 0) return size;
  index_t rounded;
  if (__builtin_add_overflow(size, alignment - 1, &rounded)) return -1;
  return align_down(rounded, alignment);
}

}  // namespace internal

void* raw_buffer::allocate(index_t base_alignment, index_t stride_alignment) {
  const std::optional<std::size_t> size = init_strides(stride_alignment);
  base_alignment = std::max<index_t>(base_alignment, 1);
  if (!size || *size > static_cast<std::size_t>(max_index - base_alignment)) return nullptr;
  char* block = static_cast<char*>(std::malloc(std::max<std::size_t>(*size + base_alignment - 1, 1)));
  if (!block) return nullptr;
  base = align_up(block, base_alignment) + (*size > 0 ? internal::base_offset(*this) : 0);
  return block;
}

raw_buffer_ptr raw_buffer::make(std::size_t rank, std::size_t elem_size, const slinky::dim* dims, index_t alignment) {
  const std::size_t data_alignment = std::max<std::size_t>(std::max<index_t>(alignment, 1), alignof(std::max_align_t));
  const std::size_t dims_offset = align_size(sizeof(raw_buffer), alignof(slinky::dim));
  const std::size_t data_offset = dims_offset + rank * sizeof(slinky::dim);
  std::size_t data_bytes = 0;
  if (rank == 0 || dims) {
    const raw_buffer layout{nullptr, elem_size, rank, const_cast<slinky::dim*>(dims)};
    data_bytes = layout.size_bytes();
  }
  // size_bytes() fits in an index_t, so this does not overflow.
  const std::size_t block_bytes = data_offset + data_bytes + (data_bytes > 0 ? data_alignment - 1 : 0);
  char* block = static_cast<char*>(std::malloc(block_bytes));
  SLINKY_CHECK(block, "raw_buffer::make: out of memory");
  slinky::dim* block_dims = reinterpret_cast<slinky::dim*>(block + dims_offset);
  for (std::size_t d = 0; d < rank; ++d) new (&block_dims[d]) slinky::dim(dims ? dims[d] : slinky::dim());
  raw_buffer* buf = new (block) raw_buffer{nullptr, elem_size, rank, block_dims};
  if (data_bytes > 0) buf->base = align_up(block + data_offset, data_alignment) + internal::base_offset(*buf);
  return raw_buffer_ptr(buf, [](raw_buffer* p) { std::free(p); });
}

raw_buffer_ptr raw_buffer::make_copy(const raw_buffer& src, index_t alignment) {
  raw_buffer_ptr result = make(src.rank, src.elem_size, src.dims, alignment);
  copy(src, *result);
  return result;
}

raw_buffer_ptr raw_buffer::make_scalar(std::size_t elem_size, const void* value, index_t alignment) {
  raw_buffer_ptr result = make(0, elem_size, nullptr, alignment);
  if (result->base) std::memcpy(result->base, value, elem_size);
  return result;
}

bool validate_buffer(const raw_buffer& buf) {
  if (any_empty(buf)) return true;
  if (buf.elem_size > static_cast<std::size_t>(max_index)) return false;
  // The least and greatest byte offsets of the elements.
  index_t lo = 0, hi = 0;
  for (std::size_t d = 0; d < buf.rank; ++d) {
    const dim& dd = buf.dims[d];
    const index_t stride = dd.stride();
    if (stride == 0) continue;
    // The range [a, b] of the coefficient of stride (see dim::flat_offset_bytes).
    index_t a = 0, b = 0;
    if (dd.fold_factor() == dim::unfolded) {
      if (__builtin_sub_overflow(dd.max(), dd.min(), &b)) return false;
    } else if (dd.fold_factor() != 0) {
      if (dd.fold_factor() == std::numeric_limits<index_t>::min()) return false;
      const index_t f = abs_value(dd.fold_factor());
      b = f - 1;
      if (dd.extent() < f) {
        const index_t m0 = euclidean_mod(dd.min(), f);
        const index_t m1 = m0 + (dd.max() - dd.min());
        if (m1 < f) a = m0, b = m1;
      }
    }
    index_t offset_a, offset_b;
    if (__builtin_mul_overflow(a, stride, &offset_a) || __builtin_mul_overflow(b, stride, &offset_b)) return false;
    if (__builtin_add_overflow(lo, std::min(offset_a, offset_b), &lo)) return false;
    if (__builtin_add_overflow(hi, std::max(offset_a, offset_b), &hi)) return false;
  }
  index_t end;
  if (__builtin_add_overflow(hi, static_cast<index_t>(buf.elem_size), &end)) return false;
  if (!buf.base) return true;
  const std::uintptr_t p = reinterpret_cast<std::uintptr_t>(buf.base);
  // lo <= 0 <= end: the first address must not be below 0, the last past the end of memory.
  const std::uintptr_t below = static_cast<std::uintptr_t>(0) - static_cast<std::uintptr_t>(lo);
  if (lo < 0 && p < below) return false;
  return std::numeric_limits<std::uintptr_t>::max() - p >= static_cast<std::uintptr_t>(end);
}

}  // namespace slinky
