// The out-of-line part of for_each_element and for_each_contiguous_slice (for_each.h): the plan of
// the loop nest run at the call site, or the strided walk (buffer_walk.h) where that does not fit.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "slinky/base/arithmetic.h"
#include "slinky/base/assert.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/buffer_walk.h"

namespace slinky {

using namespace internal::strided_walk;

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
