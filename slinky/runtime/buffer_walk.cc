// The strided walk behind copy, pad, fill, for_each_element and for_each_contiguous_slice
// (buffer_walk.h): one loop nest over a reference buffer's dims with up to 64 operands, fusing,
// sorting and splitting dims so that the innermost runs are plain memcpy/memset/strided loops.
#include "slinky/runtime/buffer_walk.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "slinky/base/arithmetic.h"
#include "slinky/base/assert.h"
#include "slinky/runtime/buffer.h"

namespace slinky {
namespace internal {
namespace strided_walk {

// Describes `op` as operand k of the walk over the dims of `ref`. Returns false if `op` is absent
// everywhere (its bounds do not meet ref's).
bool describe_operand(walk_plan& p, std::size_t k, const raw_buffer& ref, const raw_buffer& op, unsigned kind) {
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
void simplify(walk_plan& p) {
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
void sort_walk_dims(walk_plan& p) {
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

void run(walk_plan& p) {
  if (~p.present & p.skip_if_absent) return;
  walk(p, p.rank, p.offsets, p.present);
}

bool covers(const walk_plan& p, std::size_t k) {
  for (std::size_t d = 0; d < p.rank; ++d) {
    if (p.at(d, k).lo != 0 || p.at(d, k).hi != p.extents[d] - 1) return false;
  }
  return true;
}

}  // namespace strided_walk
}  // namespace internal
}  // namespace slinky
