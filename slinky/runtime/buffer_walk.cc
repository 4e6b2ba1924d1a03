// The strided walk behind copy, pad, fill, for_each_element and for_each_contiguous_slice: one
// loop nest over a reference buffer's dims with up to 64 operands, fusing, sorting and splitting
// dims so that the innermost runs are plain memcpy/memset/strided loops.
#include <alloca.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "slinky/base/arithmetic.h"
#include "slinky/base/assert.h"
#include "slinky/runtime/buffer.h"

namespace slinky {

static bool any_empty(const raw_buffer& b) {
  for (std::size_t d = 0; d < b.rank; ++d) {
    if (b.dims[d].empty()) return true;
  }
  return false;
}

// True if coordinates of d are addressed through its fold (a ring buffer), not linearly.
static bool has_fold(const dim& d) { return d.fold_factor() > 0 && d.stride() != 0; }

// The strided walk. It visits the elements of a reference buffer (dst for copies, bufs[0] for
// for_each_*) together with the elements of up to 64 operands at the same coordinates. Dims are
// zero-based relative to the reference's min. An operand is "present" at a coordinate if it has an
// element there; the walk calls a segment function for each run of the innermost dim along which
// every present operand is addressed linearly (no fold wraps) and presence does not change.

using segment_fn = void (*)(void* user, index_t n, void** ptrs, const index_t* strides, std::uint64_t present);

constexpr std::size_t max_operands = 64;
static constexpr std::uint64_t bit(std::size_t k) { return std::uint64_t{1} << k; }

namespace {

struct op_dim {
  index_t stride;
  // dim::unfolded, or the fold factor: then coordinate x is at euclidean_mod(x + phase, fold) * stride.
  index_t fold;
  index_t phase;
  // The coordinates where the operand is present.
  index_t lo;
  index_t hi;

  index_t offset(index_t x) const {
    return fold == dim::unfolded ? x * stride : euclidean_mod_positive_modulus(x + phase, fold) * stride;
  }
};

class walk_plan {
public:
  std::size_t rank;
  std::size_t ops;
  index_t* extents;        // [rank]
  op_dim* dims;            // [rank][ops]
  char** bases;            // [ops]
  index_t* offsets;        // [ops]: the offset of coordinate 0 in every dim
  index_t* level_offsets;  // [rank][ops]: scratch for the walk
  void** ptrs;             // [ops]: scratch for the segment function
  index_t* strides;        // [ops]: scratch for the segment function
  std::uint64_t present = 0;
  // A segment (or a whole outer coordinate, for skip_if_absent) is skipped when one of these
  // operands is present / absent.
  std::uint64_t skip_if_present = 0;
  std::uint64_t skip_if_absent = 0;
  segment_fn fn = nullptr;
  void* user = nullptr;

  static std::size_t scratch_bytes(std::size_t rank, std::size_t ops) {
    return sizeof(index_t) * (rank + 1) + sizeof(op_dim) * rank * ops +
           ops * (sizeof(char*) + sizeof(index_t) * (rank + 2) + sizeof(void*));
  }

  // `scratch` is scratch_bytes(rank, ops) of 8-byte aligned memory (from alloca in the caller).
  walk_plan(void* scratch, std::size_t rank, std::size_t ops) : rank(rank), ops(ops) {
    char* p = static_cast<char*>(scratch);
    auto carve = [&p](std::size_t bytes) {
      char* r = p;
      p += bytes;
      return r;
    };
    extents = reinterpret_cast<index_t*>(carve(sizeof(index_t) * (rank + 1)));
    dims = reinterpret_cast<op_dim*>(carve(sizeof(op_dim) * rank * ops));
    bases = reinterpret_cast<char**>(carve(sizeof(char*) * ops));
    offsets = reinterpret_cast<index_t*>(carve(sizeof(index_t) * ops));
    level_offsets = reinterpret_cast<index_t*>(carve(sizeof(index_t) * rank * ops));
    ptrs = reinterpret_cast<void**>(carve(sizeof(void*) * ops));
    strides = reinterpret_cast<index_t*>(carve(sizeof(index_t) * ops));
  }

  op_dim& at(std::size_t d, std::size_t k) { return dims[d * ops + k]; }
  const op_dim& at(std::size_t d, std::size_t k) const { return dims[d * ops + k]; }
  bool skipped(std::uint64_t pr) const { return (pr & skip_if_present) || (~pr & skip_if_absent); }
};

}  // namespace

// Allocates the scratch of a walk_plan in the caller's frame.
#define SLINKY_WALK_PLAN(name, rank, ops) walk_plan name(alloca(walk_plan::scratch_bytes(rank, ops)), rank, ops)

// How an operand takes part in a walk (flags).
// Pointers into the operand are needed, so its strides constrain the walk.
constexpr unsigned op_addressed = 1;
// The operand is absent outside its bounds.
constexpr unsigned op_bounded = 2;
// A dim of extent 1 is used at every coordinate (pad values).
constexpr unsigned op_point_broadcast = 4;

// Describes `op` as operand k of the walk over the dims of `ref`. Returns false if `op` is absent
// everywhere (its bounds do not meet ref's).
static bool describe_operand(walk_plan& p, std::size_t k, const raw_buffer& ref, const raw_buffer& op, unsigned kind) {
  index_t offset = 0;
  bool present = true;
  for (std::size_t d = 0; d < ref.rank; ++d) {
    const dim& rd = ref.dims[d];
    const dim& od = op.dim(d);
    op_dim& o = p.at(d, k);
    o = {0, dim::unfolded, 0, 0, rd.extent() - 1};
    p.extents[d] = rd.extent();
    // A stride-0 dim of an operand that is read contains every coordinate (dim::contains); the
    // bounds of an operand only bounding the walk (pad's src_bounds) count whatever the stride.
    const bool everywhere = (kind & op_addressed) && od.stride() == 0;
    if ((kind & op_bounded) && !everywhere) {
      o.lo = std::max(rd.min(), od.min()) - rd.min();
      o.hi = std::min(rd.max(), od.max()) - rd.min();
      present = present && o.lo <= o.hi;
    }
    if (!(kind & op_addressed) || od.stride() == 0) continue;
    if ((kind & op_point_broadcast) && od.extent() == 1) {
      offset += od.flat_offset_bytes(od.min());
      continue;
    }
    o.stride = od.stride();
    if (!has_fold(od)) {
      offset += (rd.min() - od.min()) * od.stride();
      continue;
    }
    o.fold = od.fold_factor();
    o.phase = rd.min();
    // Within one turn of the fold addresses are linear; such dims can then fuse with others.
    if (o.lo <= o.hi && floor_div(o.lo + o.phase, o.fold) == floor_div(o.hi + o.phase, o.fold)) {
      offset += o.offset(o.lo) - o.lo * o.stride;
      o.fold = dim::unfolded;
    }
  }
  p.bases[k] = static_cast<char*>(op.base);
  p.offsets[k] = offset;
  return present;
}

static void copy_dim(walk_plan& p, std::size_t to, std::size_t from) {
  if (to == from) return;
  p.extents[to] = p.extents[from];
  for (std::size_t k = 0; k < p.ops; ++k) p.at(to, k) = p.at(from, k);
}

// Dims `inner` and `outer` can be walked as one if every present operand is linear across both.
static bool can_fuse_walk(const walk_plan& p, std::size_t inner, std::size_t outer) {
  const index_t extent = p.extents[inner];
  index_t fused;
  if (mul_overflows(extent, p.extents[outer], &fused)) return false;
  for (std::size_t k = 0; k < p.ops; ++k) {
    if (!(p.present & bit(k))) continue;
    const op_dim& a = p.at(inner, k);
    const op_dim& b = p.at(outer, k);
    if (a.fold != dim::unfolded || b.fold != dim::unfolded) return false;
    if (a.lo != 0 || a.hi != extent - 1) return false;
    index_t stride;
    if (mul_overflows(extent, a.stride, &stride) || stride != b.stride) return false;
  }
  return true;
}

static void fuse_walk(walk_plan& p, std::size_t inner, std::size_t outer) {
  const index_t extent = p.extents[inner];
  for (std::size_t k = 0; k < p.ops; ++k) {
    if (!(p.present & bit(k))) continue;
    op_dim& a = p.at(inner, k);
    const op_dim& b = p.at(outer, k);
    a.lo = b.lo * extent;
    a.hi = (b.hi + 1) * extent - 1;
  }
  p.extents[inner] = extent * p.extents[outer];
}

// Drops dims of extent 1 (their offsets are already in p.offsets) and fuses neighbouring dims.
static void simplify(walk_plan& p) {
  std::size_t kept = 0;
  for (std::size_t d = 0; d < p.rank; ++d) {
    if (p.extents[d] == 1) continue;
    if (kept > 0 && can_fuse_walk(p, kept - 1, d)) {
      fuse_walk(p, kept - 1, d);
      continue;
    }
    copy_dim(p, kept++, d);
  }
  p.rank = kept;
}

// Moves the dims with the smallest |stride| in operand 0 innermost, for walks whose order does not
// matter (copies). Stride-0 dims go outermost.
static void sort_walk_dims(walk_plan& p) {
  auto key = [&p](std::size_t d) {
    const index_t s = abs_value(p.at(d, 0).stride);
    return s == 0 ? std::numeric_limits<index_t>::max() : s;
  };
  for (std::size_t i = 1; i < p.rank; ++i) {
    for (std::size_t j = i; j > 0 && key(j) < key(j - 1); --j) {
      std::swap(p.extents[j], p.extents[j - 1]);
      for (std::size_t k = 0; k < p.ops; ++k) std::swap(p.at(j, k), p.at(j - 1, k));
    }
  }
}

static void emit(walk_plan& p, const index_t* offs, std::uint64_t pr, index_t x, index_t n) {
  for (std::size_t k = 0; k < p.ops; ++k) {
    p.ptrs[k] = nullptr;
    p.strides[k] = 0;
    if (!(pr & bit(k))) continue;
    const op_dim* o = p.rank > 0 ? &p.at(0, k) : nullptr;
    if (p.bases[k]) p.ptrs[k] = p.bases[k] + (offs[k] + (o ? o->offset(x) : 0));
    if (o) p.strides[k] = o->stride;
  }
  p.fn(p.user, n, p.ptrs, p.strides, pr);
}

// Walks the innermost dim, splitting it where an operand's presence changes or its fold wraps.
static void walk_inner(walk_plan& p, const index_t* offs, std::uint64_t present) {
  if (p.rank == 0) {
    if (!p.skipped(present)) emit(p, offs, present, 0, 1);
    return;
  }
  const index_t extent = p.extents[0];
  for (index_t x = 0; x < extent;) {
    index_t end = extent - 1;
    std::uint64_t pr = present;
    for (std::size_t k = 0; k < p.ops; ++k) {
      if (!(present & bit(k))) continue;
      const op_dim& o = p.at(0, k);
      if (x < o.lo || x > o.hi) {
        pr &= ~bit(k);
        if (x < o.lo) end = std::min(end, o.lo - 1);
        continue;
      }
      end = std::min(end, o.hi);
      if (o.fold != dim::unfolded)
        end = std::min(end, x + o.fold - 1 - euclidean_mod_positive_modulus(x + o.phase, o.fold));
    }
    if (!p.skipped(pr)) emit(p, offs, pr, x, end - x + 1);
    x = end + 1;
  }
}

// Walks dims [0, d) with `offs` the offsets of the coordinates chosen in the dims above.
static void walk(walk_plan& p, std::size_t d, const index_t* offs, std::uint64_t present) {
  if (d <= 1) {
    walk_inner(p, offs, present);
    return;
  }
  const std::size_t dd = d - 1;
  index_t* next = p.level_offsets + dd * p.ops;
  for (index_t x = 0; x < p.extents[dd]; ++x) {
    std::uint64_t pr = present;
    for (std::size_t k = 0; k < p.ops; ++k) {
      if (!(present & bit(k))) continue;
      const op_dim& o = p.at(dd, k);
      if (x < o.lo || x > o.hi) {
        pr &= ~bit(k);
        continue;
      }
      next[k] = offs[k] + o.offset(x);
    }
    if (~pr & p.skip_if_absent) continue;
    walk(p, dd, next, pr);
  }
}

static void run(walk_plan& p) {
  if (~p.present & p.skip_if_absent) return;
  walk(p, p.rank, p.offsets, p.present);
}

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

static void copy_nest_loops(const copy_nest& n, char* dst, const char* src, std::size_t elem_size) {
  if (n.rank == 0) {
    copy_run(dst, 0, src, 0, 1, elem_size);
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

static bool covers(const walk_plan& p, std::size_t k) {
  for (std::size_t d = 0; d < p.rank; ++d) {
    if (p.at(d, k).lo != 0 || p.at(d, k).hi != p.extents[d] - 1) return false;
  }
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

namespace {

// Calls the segment function of for_each_element / for_each_contiguous_slice (templates in
// buffer.h) for the runs of the general walk.
struct for_each_context {
  span<const raw_buffer* const> bufs;
  internal::for_each_segment_fn segment;
  void* user;
};

}  // namespace

static void for_each_segment(void* user, index_t n, void** ptrs, const index_t* strides, std::uint64_t) {
  const for_each_context& c = *static_cast<const for_each_context*>(user);
  // Contiguous when every buffer with a pointer (and the first, whatever its base) has
  // stride == elem_size; null pointers then stay null.
  const std::size_t ops = c.bufs.size();
  index_t* steps = static_cast<index_t*>(alloca(sizeof(index_t) * ops));
  bool contiguous = true;
  for (std::size_t k = 0; k < ops; ++k) {
    if ((k == 0 || ptrs[k]) && strides[k] != static_cast<index_t>(c.bufs[k]->elem_size)) contiguous = false;
    steps[k] = ptrs[k] ? strides[k] : 0;
  }
  c.segment(c.user, n, ptrs, steps, contiguous);
}

// The first buffer's elements in the other buffers of a for_each walk whose loop nest is run at the
// call site: every buffer either covers bufs[0] linearly (no fold wraps within its bounds), or is
// absent everywhere (no memory, or its bounds do not meet bufs[0]'s) and gets null pointers. Sets
// nest.bases; false if the buffers are not of this kind. The same analysis as describe_operand,
// without its generality.
static bool nest_bases(span<const raw_buffer* const> bufs, internal::for_each_nest& nest) {
  const raw_buffer& ref = *bufs[0];
  for (std::size_t k = 0; k < bufs.size(); ++k) {
    const raw_buffer& b = *bufs[k];
    nest.bases[k] = nullptr;
    // Buffers without memory get null pointers everywhere (the first one is walked regardless).
    if (k > 0 && (!b.base || any_empty(b))) continue;
    bool meets = true, covers = true, wraps = false;
    index_t offset = 0;
    for (std::size_t d = 0; d < ref.rank; ++d) {
      const dim& rd = ref.dims[d];
      const dim& od = b.dim(d);
      // A stride-0 dim contains every coordinate and addresses nothing.
      if (od.stride() == 0) continue;
      if (od.max() < rd.min() || od.min() > rd.max()) {
        meets = false;
        break;
      }
      covers = covers && od.min() <= rd.min() && rd.max() <= od.max();
      if (has_fold(od)) {
        wraps = wraps || od.is_folded(rd.min(), rd.max());
        offset += euclidean_mod_positive_modulus(rd.min(), od.fold_factor()) * od.stride();
      } else {
        offset += (rd.min() - od.min()) * od.stride();
      }
    }
    if (!meets) continue;
    if (!covers || wraps) return false;
    nest.bases[k] = b.base ? static_cast<char*>(b.base) + offset : nullptr;
  }
  return true;
}

// nest_bases for the common case, in one cheap pass: every buffer with memory covers bufs[0], with
// no folded and no empty dims. False (nothing decided) if that does not hold.
static bool nest_bases_simple(span<const raw_buffer* const> bufs, internal::for_each_nest& nest) {
  const raw_buffer& ref = *bufs[0];
  for (std::size_t k = 0; k < bufs.size(); ++k) {
    const raw_buffer& b = *bufs[k];
    if (k > 0 && !b.base) {
      nest.bases[k] = nullptr;
      continue;
    }
    const std::size_t rank = std::min(b.rank, ref.rank);
    index_t offset = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      const dim& rd = ref.dims[d];
      const dim& od = b.dims[d];
      if (od.stride() == 0) {
        if (od.empty()) return false;
        continue;
      }
      if (od.fold_factor() > 0 || od.min() > rd.min() || od.max() < rd.max()) return false;
      offset += (rd.min() - od.min()) * od.stride();
    }
    for (std::size_t d = rank; d < b.rank; ++d) {
      if (b.dims[d].empty()) return false;
    }
    nest.bases[k] = b.base ? static_cast<char*>(b.base) + offset : nullptr;
  }
  return true;
}

// The loop nest of a for_each walk (see nest_bases); false if the walk is not of this kind or has
// more than for_each_max_rank dims after fusing. This runs on every call of a callback's for_each:
// the common case takes the cheap paths.
static bool plan_for_each_nest(span<const raw_buffer* const> bufs, internal::for_each_nest& nest) {
  if (!nest_bases_simple(bufs, nest) && !nest_bases(bufs, nest)) return false;
  const raw_buffer& ref = *bufs[0];
  const std::size_t ops = bufs.size();
  // Dims of extent 1 are dropped (their offsets are in the bases); neighbours fuse when every
  // buffer with a pointer, and the first one, steps through both linearly.
  auto stride = [&](std::size_t k, std::size_t d) -> index_t {
    return k == 0 || nest.bases[k] ? bufs[k]->dim(d).stride() : 0;
  };
  std::size_t rank = 0;
  for (std::size_t d = 0; d < ref.rank; ++d) {
    const index_t extent = ref.dims[d].extent();
    if (extent == 1) continue;
    if (rank > 0) {
      const index_t inner = nest.extents[rank - 1];
      const index_t* inner_strides = nest.strides + (rank - 1) * ops;
      index_t fused;
      bool fuse = !mul_overflows(inner, extent, &fused);
      for (std::size_t k = 0; k < ops && fuse; ++k) {
        index_t s;
        fuse = !mul_overflows(inner, inner_strides[k], &s) && s == stride(k, d);
      }
      if (fuse) {
        nest.extents[rank - 1] = fused;
        continue;
      }
    }
    if (rank == internal::for_each_max_rank) return false;
    nest.extents[rank] = extent;
    for (std::size_t k = 0; k < ops; ++k) nest.strides[rank * ops + k] = stride(k, d);
    ++rank;
  }
  if (rank == 0) {
    nest.extents[0] = 1;
    for (std::size_t k = 0; k < ops; ++k) nest.strides[k] = 0;
    rank = 1;
  }
  nest.rank = rank;
  auto contiguous = [&](std::size_t d) {
    for (std::size_t k = 0; k < ops; ++k) {
      if ((k == 0 || nest.bases[k]) && nest.strides[d * ops + k] != static_cast<index_t>(bufs[k]->elem_size)) {
        return false;
      }
    }
    return true;
  };
  nest.contiguous = contiguous(0);
  if (!nest.contiguous && nest.any_inner) {
    // The runs may go along another dim contiguous in every buffer: make it the innermost.
    for (std::size_t d = 1; d < rank; ++d) {
      if (!contiguous(d)) continue;
      std::swap(nest.extents[0], nest.extents[d]);
      for (std::size_t k = 0; k < ops; ++k) std::swap(nest.strides[k], nest.strides[d * ops + k]);
      nest.contiguous = true;
      break;
    }
  }
  // A first buffer without memory: its pointer stays null.
  if (!nest.bases[0]) {
    for (std::size_t d = 0; d < rank; ++d) nest.strides[d * ops] = 0;
  }
  // The odometer's steps of dims 2 and up (for_each_nest).
  for (std::size_t k = 0; k < ops; ++k) {
    index_t back = 0;
    for (std::size_t d = 2; d < rank; ++d) {
      index_t& s = nest.strides[d * ops + k];
      const index_t stride = s;
      s = stride - back;
      back += (nest.extents[d] - 1) * stride;
    }
  }
  return true;
}

// The walks that are not a loop nest, with runs split where a buffer's bounds end or a fold
// wraps. Out of line from for_each_walk so that the common case does not pay for its frame.
SLINKY_NO_INLINE static void for_each_general(span<const raw_buffer* const> bufs, internal::for_each_segment_fn segment,
                                              void* user) {
  const raw_buffer& ref = *bufs[0];
  SLINKY_WALK_PLAN(p, ref.rank, bufs.size());
  describe_operand(p, 0, ref, ref, op_addressed);
  p.present = bit(0);
  for (std::size_t k = 1; k < bufs.size(); ++k) {
    const raw_buffer& b = *bufs[k];
    // Buffers without memory get null pointers everywhere, so they need not shape the walk.
    const bool here = b.base && !any_empty(b);
    if (describe_operand(p, k, ref, b, op_bounded | (here ? op_addressed : 0)) && here) p.present |= bit(k);
  }
  for_each_context context{bufs, segment, user};
  p.fn = for_each_segment;
  p.user = &context;
  simplify(p);
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

namespace internal {

bool for_each_walk(span<const raw_buffer* const> bufs, for_each_nest& nest, for_each_segment_fn segment, void* user) {
  SLINKY_CHECK(!bufs.empty() && bufs.size() <= max_operands, "for_each: between 1 and 64 buffers");
  if (any_empty(*bufs[0])) return false;
  if (plan_for_each_nest(bufs, nest)) return true;
  for_each_general(bufs, segment, user);
  return false;
}

}  // namespace internal

}  // namespace slinky
