// copy, pad and fill over the strided walk (buffer_walk.h), with the kernels for their runs and the
// fast paths for plain loop nests.
#include <alloca.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "slinky/base/arithmetic.h"
#include "slinky/base/assert.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/buffer_walk.h"

namespace slinky {

using namespace internal::strided_walk;

// Copy kernels for one run of n elements: dst[i * ds] = src[i * ss].

template <typename T>
static void strided_copy(char* dst, index_t ds, const char* src, index_t ss, index_t n) {
  for (index_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * ss, sizeof(T));
    std::memcpy(dst + i * ds, &v, sizeof(T));
  }
}

template <typename T>
static void strided_fill(char* dst, index_t ds, const char* value, index_t n) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  for (index_t i = 0; i < n; ++i) std::memcpy(dst + i * ds, &v, sizeof(T));
}

static bool all_bytes_equal(const char* value, std::size_t n) {
  for (std::size_t i = 1; i < n; ++i) {
    if (value[i] != value[0]) return false;
  }
  return true;
}

static void fill_run(char* dst, index_t ds, const char* value, index_t n, std::size_t elem_size) {
  if (ds != static_cast<index_t>(elem_size)) {
    switch (elem_size) {
    case 1: strided_fill<std::uint8_t>(dst, ds, value, n); return;
    case 2: strided_fill<std::uint16_t>(dst, ds, value, n); return;
    case 4: strided_fill<std::uint32_t>(dst, ds, value, n); return;
    case 8: strided_fill<std::uint64_t>(dst, ds, value, n); return;
    default:
      for (index_t i = 0; i < n; ++i) std::memmove(dst + i * ds, value, elem_size);
      return;
    }
  }
  const std::size_t bytes = n * elem_size;
  if (all_bytes_equal(value, elem_size)) {
    std::memset(dst, value[0], bytes);
    return;
  }
  // Replicate the first element by doubling, in chunks small enough that the source stays in L1.
  std::memmove(dst, value, elem_size);
  const std::size_t max_chunk = std::max<std::size_t>(elem_size, 4096 / elem_size * elem_size);
  for (std::size_t filled = elem_size; filled < bytes;) {
    const std::size_t chunk = std::min({filled, max_chunk, bytes - filled});
    std::memcpy(dst + filled, dst, chunk);
    filled += chunk;
  }
}

static bool overlaps(const char* a, const char* b, std::size_t bytes) {
  const std::uintptr_t ia = reinterpret_cast<std::uintptr_t>(a);
  const std::uintptr_t ib = reinterpret_cast<std::uintptr_t>(b);
  return ia < ib + bytes && ib < ia + bytes;
}

static void copy_run(char* dst, index_t ds, const char* src, index_t ss, index_t n, std::size_t elem_size) {
  if (ds < 0) {
    // Visit the run backwards so dst ascends; the order of a copy's elements does not matter.
    dst += (n - 1) * ds;
    src += (n - 1) * ss;
    ds = -ds;
    ss = -ss;
  }
  if (ss == 0) {
    fill_run(dst, ds, src, n, elem_size);
    return;
  }
  if (dst == src && ds == ss) return;  // An in-place copy.
  const index_t e = elem_size;
  if (ds == e && ss == e) {
    const std::size_t bytes = n * elem_size;
    if (overlaps(dst, src, bytes)) {
      std::memmove(dst, src, bytes);
    } else {
      std::memcpy(dst, src, bytes);
    }
    return;
  }
  switch (elem_size) {
  case 1: strided_copy<std::uint8_t>(dst, ds, src, ss, n); return;
  case 2: strided_copy<std::uint16_t>(dst, ds, src, ss, n); return;
  case 4: strided_copy<std::uint32_t>(dst, ds, src, ss, n); return;
  case 8: strided_copy<std::uint64_t>(dst, ds, src, ss, n); return;
  default:
    for (index_t i = 0; i < n; ++i) std::memmove(dst + i * ds, src + i * ss, elem_size);
    return;
  }
}

// Operands of a copy walk; copies without padding have only the first two.
constexpr std::size_t copy_dst = 0;
constexpr std::size_t copy_src = 1;
constexpr std::size_t copy_pad = 2;

namespace {

struct copy_context {
  std::size_t elem_size;
  std::size_t ops;
};

}  // namespace

static void copy_segment(void* user, index_t n, void** ptrs, const index_t* strides, std::uint64_t present) {
  const copy_context& c = *static_cast<const copy_context*>(user);
  const std::size_t from = (present & bit(copy_src)) ? copy_src : copy_pad;
  if (from >= c.ops || !ptrs[copy_dst] || !ptrs[from]) return;
  copy_run(static_cast<char*>(ptrs[copy_dst]), strides[copy_dst], static_cast<const char*>(ptrs[from]), strides[from],
           n, c.elem_size);
}

// True if every present operand covers every dim of the walk without folds: then the walk is a
// plain loop nest.
static bool is_regular(const walk_plan& p) {
  for (std::size_t d = 0; d < p.rank; ++d) {
    for (std::size_t k = 0; k < p.ops; ++k) {
      if (!(p.present & bit(k))) continue;
      const op_dim& o = p.at(d, k);
      if (o.fold != dim::unfolded || o.lo != 0 || o.hi != p.extents[d] - 1) return false;
    }
  }
  return true;
}

namespace {

// A copy where every element of dst comes from src at linear offsets: a plain loop nest.
struct copy_nest {
  std::size_t rank;
  const index_t* extents;
  const index_t* dst_strides;
  const index_t* src_strides;
};

}  // namespace

// The edge of the square tiles a transposing copy is done in: a tile of both src and dst stays in
// L1 while its lines are read or written across, instead of touching a new line per element.
constexpr index_t transpose_tile = 16;

// Copies the 2-D block of dims 0 and 1 in tiles.
static void copy_tiled(const copy_nest& n, char* dst, const char* src, std::size_t elem_size) {
  const index_t n0 = n.extents[0], n1 = n.extents[1];
  const index_t ds0 = n.dst_strides[0], ds1 = n.dst_strides[1];
  const index_t ss0 = n.src_strides[0], ss1 = n.src_strides[1];
  for (index_t y0 = 0; y0 < n1; y0 += transpose_tile) {
    const index_t y1 = std::min(n1, y0 + transpose_tile);
    for (index_t x0 = 0; x0 < n0; x0 += transpose_tile) {
      const index_t nx = std::min(transpose_tile, n0 - x0);
      for (index_t y = y0; y < y1; ++y) {
        copy_run(dst + (x0 * ds0 + y * ds1), ds0, src + (x0 * ss0 + y * ss1), ss0, nx, elem_size);
      }
    }
  }
}

// The lowest and highest byte addresses of a nest's elements from `base` with `strides`.
static void nest_span(const copy_nest& n, const char* base, const index_t* strides, std::size_t elem_size,
                      std::uintptr_t& lo, std::uintptr_t& hi) {
  index_t below = 0, above = static_cast<index_t>(elem_size);
  for (std::size_t d = 0; d < n.rank; ++d) {
    const index_t reach = (n.extents[d] - 1) * strides[d];
    (reach < 0 ? below : above) += reach;
  }
  lo = reinterpret_cast<std::uintptr_t>(base) + below;
  hi = reinterpret_cast<std::uintptr_t>(base) + above;
}

// A dim of n to make the innermost instead of dim 0, or 0: where dim 0's runs are shorter than a
// cache line and another dim is at least short_run_factor times longer, one strided run along that
// dim per element of the others costs far less than a call per short run (a stencil view copied
// from a ring buffer, `view(dx, dy, x, y) = e(2x + dx, 2y + dy)`, copies runs of 3 elements: the
// pooling of scheduler_benchmark in rows of 4, 1024x1024, took 5.6 ms so and 2.4 ms with x the
// innermost, docs/copies.md). Only a dim whose strided runs span at most short_run_span bytes, so
// that the passes dim 0's elements now make over them find them in cache; not where dst and src
// overlap (the order of the elements would then matter).
constexpr index_t short_run_bytes = 64;
constexpr index_t short_run_factor = 8;
constexpr index_t short_run_span = 256 * 1024;
static std::size_t long_inner_dim(const copy_nest& n, const char* dst, const char* src, std::size_t elem_size) {
  if (n.rank < 2 || n.extents[0] * static_cast<index_t>(elem_size) >= short_run_bytes) return 0;
  std::size_t best = 0;
  for (std::size_t d = 1; d < n.rank; ++d) {
    const index_t stride = std::max(abs_value(n.dst_strides[d]), abs_value(n.src_strides[d]));
    if (n.extents[d] >= short_run_factor * n.extents[0] && n.extents[d] > n.extents[best] &&
        n.extents[d] <= short_run_span / std::max<index_t>(1, stride)) {
      best = d;
    }
  }
  if (best == 0) return 0;
  std::uintptr_t dlo, dhi, slo, shi;
  nest_span(n, dst, n.dst_strides, elem_size, dlo, dhi);
  nest_span(n, src, n.src_strides, elem_size, slo, shi);
  return dlo < shi && slo < dhi ? 0 : best;
}

static void copy_nest_loops(const copy_nest& n, char* dst, const char* src, std::size_t elem_size) {
  if (n.rank == 0) {
    copy_run(dst, 0, src, 0, 1, elem_size);
    return;
  }
  if (const std::size_t inner = long_inner_dim(n, dst, src, elem_size)) {
    // The same nest with dims 0 and `inner` swapped.
    index_t* arrays = static_cast<index_t*>(alloca(sizeof(index_t) * 3 * n.rank));
    const copy_nest swapped{n.rank, arrays, arrays + n.rank, arrays + 2 * n.rank};
    for (std::size_t d = 0; d < n.rank; ++d) {
      const std::size_t from = d == 0 ? inner : d == inner ? 0 : d;
      arrays[d] = n.extents[from];
      arrays[n.rank + d] = n.dst_strides[from];
      arrays[2 * n.rank + d] = n.src_strides[from];
    }
    copy_nest_loops(swapped, dst, src, elem_size);
    return;
  }
  // dst's dims are sorted by stride; if src's dim 1 is the denser one, the copy transposes (a
  // broadcast along dim 1 does not).
  const bool tiled = n.rank >= 2 && n.src_strides[1] != 0 &&
                     abs_value(n.src_strides[1]) < abs_value(n.src_strides[0]) &&
                     std::max(n.extents[0], n.extents[1]) > transpose_tile;
  const std::size_t outer = tiled ? 2 : 1;
  index_t* index = n.rank > outer ? static_cast<index_t*>(alloca(sizeof(index_t) * n.rank)) : nullptr;
  for (std::size_t d = outer; d < n.rank; ++d) index[d] = 0;
  index_t dst_offset = 0, src_offset = 0;
  while (true) {
    if (tiled) {
      copy_tiled(n, dst + dst_offset, src + src_offset, elem_size);
    } else {
      copy_run(dst + dst_offset, n.dst_strides[0], src + src_offset, n.src_strides[0], n.extents[0], elem_size);
    }
    // Step the outer dims like an odometer.
    std::size_t d = outer;
    for (; d < n.rank; ++d) {
      if (++index[d] < n.extents[d]) {
        dst_offset += n.dst_strides[d];
        src_offset += n.src_strides[d];
        break;
      }
      dst_offset -= (n.extents[d] - 1) * n.dst_strides[d];
      src_offset -= (n.extents[d] - 1) * n.src_strides[d];
      index[d] = 0;
    }
    if (d == n.rank) return;
  }
}

// Copies from operand `from` to dst over a regular walk.
static void copy_regular(const walk_plan& p, std::size_t from, std::size_t elem_size) {
  index_t* arrays = static_cast<index_t*>(alloca(sizeof(index_t) * (3 * p.rank + 1)));
  const copy_nest n{p.rank, arrays, arrays + p.rank, arrays + 2 * p.rank};
  for (std::size_t d = 0; d < p.rank; ++d) {
    arrays[d] = p.extents[d];
    arrays[p.rank + d] = p.at(d, copy_dst).stride;
    arrays[2 * p.rank + d] = p.at(d, from).stride;
  }
  copy_nest_loops(n, p.bases[copy_dst] + p.offsets[copy_dst], p.bases[from] + p.offsets[from], elem_size);
}

// The common case, without the setup of the general walk (which dominates small copies): src
// covers dst, nothing is folded, and dst's dims are already in order of increasing stride. Returns
// false if the copy is not of this kind.
static bool try_copy_simple(const raw_buffer& src, const raw_buffer& dst) {
  constexpr std::size_t max_rank = 8;
  if (dst.rank > max_rank || !src.base) return false;
  index_t extents[max_rank], dst_strides[max_rank], src_strides[max_rank];
  std::size_t rank = 0;
  index_t src_offset = 0, last_stride = 0;
  for (std::size_t d = 0; d < dst.rank; ++d) {
    const dim& dd = dst.dims[d];
    const dim& sd = src.dim(d);
    if (has_fold(dd) || has_fold(sd) || !sd.contains(dd)) return false;
    if (sd.stride() != 0) src_offset += (dd.min() - sd.min()) * sd.stride();
    const index_t extent = dd.extent();
    if (extent == 1) continue;
    if (abs_value(dd.stride()) < last_stride) return false;
    last_stride = abs_value(dd.stride());
    if (rank > 0 && extents[rank - 1] * dst_strides[rank - 1] == dd.stride() &&
        extents[rank - 1] * src_strides[rank - 1] == sd.stride()) {
      extents[rank - 1] *= extent;
      continue;
    }
    extents[rank] = extent;
    dst_strides[rank] = dd.stride();
    src_strides[rank] = sd.stride();
    ++rank;
  }
  const copy_nest n{rank, extents, dst_strides, src_strides};
  copy_nest_loops(n, static_cast<char*>(dst.base), static_cast<const char*>(src.base) + src_offset, dst.elem_size);
  return true;
}

// Copies src (or, if !src_values, only its bounds: those elements are left alone) and pad into dst.
static void copy_impl(const raw_buffer& src, bool src_values, const raw_buffer& dst, const raw_buffer& pad) {
  if (!dst.base || any_empty(dst)) return;
  const bool has_src = src_values ? src.base && !any_empty(src) : !any_empty(src);
  const bool has_pad = pad.base && !any_empty(pad);
  SLINKY_CHECK(!src_values || !has_src || src.elem_size == dst.elem_size, "copy: src and dst elem_size differ");
  SLINKY_CHECK(!has_pad || pad.elem_size == dst.elem_size, "copy: pad and dst elem_size differ");
  if (src_values && has_src && try_copy_simple(src, dst)) return;

  SLINKY_WALK_PLAN(p, dst.rank, has_pad ? 3 : 2);
  describe_operand(p, copy_dst, dst, dst, op_addressed);
  const unsigned src_kind = op_bounded | (src_values ? op_addressed : 0);
  const bool src_present = describe_operand(p, copy_src, dst, src, src_kind) && has_src;
  if (has_pad) describe_operand(p, copy_pad, dst, pad, op_addressed | op_point_broadcast);
  const bool src_covers = src_present && covers(p, copy_src);
  if (src_covers && !src_values) return;  // pad() with nothing outside the bounds.
  // Drop the operands that will not be read, so that they do not constrain the walk.
  p.present = bit(copy_dst);
  if (src_present) p.present |= bit(copy_src);
  if (has_pad && !src_covers) p.present |= bit(copy_pad);
  if (!has_pad) {
    if (!src_values || !src_present) return;
    p.skip_if_absent = bit(copy_src);
  }
  if (!src_values) p.skip_if_present = bit(copy_src);

  sort_walk_dims(p);
  simplify(p);
  if (src_covers || !src_present) {
    if (is_regular(p)) {
      copy_regular(p, src_covers ? copy_src : copy_pad, dst.elem_size);
      return;
    }
  }
  copy_context context{dst.elem_size, p.ops};
  p.fn = copy_segment;
  p.user = &context;
  run(p);
}

void copy(const raw_buffer& src, const raw_buffer& dst, const raw_buffer& pad) {
  if (src.rank <= dst.rank) {
    copy_impl(src, true, dst, pad);
    return;
  }
  // A source of higher rank is read at coordinate 0 of its extra dims (as in the original
  // slinky): the walk sees the source of dst's rank based there, or no source (only padding)
  // if it has no element there. A stride-0 dim contains every coordinate.
  raw_buffer lower{src.base, src.elem_size, dst.rank, src.dims};
  for (std::size_t d = dst.rank; d < src.rank && lower.base; ++d) {
    const dim& sd = src.dims[d];
    if (sd.empty() || !sd.contains(0)) {
      lower.base = nullptr;
    } else if (sd.stride() != 0) {
      lower.base = static_cast<char*>(lower.base) + sd.flat_offset_bytes(0);
    }
  }
  copy_impl(lower, true, dst, pad);
}

void pad(const dim* src_bounds, const raw_buffer& dst, const raw_buffer& pad_value) {
  // A stride-0 entry (a broadcast) contains every coordinate (dim::contains): it bounds nothing.
  dim* bounds_dims = static_cast<dim*>(alloca(sizeof(dim) * (dst.rank + 1)));
  for (std::size_t d = 0; d < dst.rank; ++d) {
    bounds_dims[d] = src_bounds[d].stride() == 0 ? dst.dims[d] : src_bounds[d];
  }
  const raw_buffer bounds{nullptr, dst.elem_size, dst.rank, bounds_dims};
  copy_impl(bounds, false, dst, pad_value);
}

void fill(const raw_buffer& dst, const void* value) {
  const raw_buffer scalar{const_cast<void*>(value), dst.elem_size, 0, nullptr};
  copy_impl(scalar, true, dst, no_padding);
}

}  // namespace slinky
