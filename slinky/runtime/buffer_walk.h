// Internal to the runtime (not installed): the strided walk behind copy, pad, fill,
// for_each_element and for_each_contiguous_slice (buffer_walk.cc), used by the copies
// (buffer_copy.cc) and the for_each walks (buffer_for_each.cc).
#ifndef SLINKY_RUNTIME_BUFFER_WALK_H
#define SLINKY_RUNTIME_BUFFER_WALK_H

#include <alloca.h>

#include <cstddef>
#include <cstdint>

#include "slinky/base/arithmetic.h"
#include "slinky/runtime/buffer.h"

namespace slinky {
namespace internal {
namespace strided_walk {

inline bool any_empty(const raw_buffer& b) {
  for (std::size_t d = 0; d < b.rank; ++d) {
    if (b.dims[d].empty()) return true;
  }
  return false;
}

// True if coordinates of d are addressed through its fold (a ring buffer), not linearly.
inline bool has_fold(const dim& d) { return d.fold_factor() > 0 && d.stride() != 0; }

// The strided walk. It visits the elements of a reference buffer (dst for copies, bufs[0] for
// for_each_*) together with the elements of up to 64 operands at the same coordinates. Dims are
// zero-based relative to the reference's min. An operand is "present" at a coordinate if it has an
// element there; the walk calls a segment function for each run of the innermost dim along which
// every present operand is addressed linearly (no fold wraps) and presence does not change.

using segment_fn = void (*)(void* user, index_t n, void** ptrs, const index_t* strides, std::uint64_t present);

constexpr std::size_t max_operands = 64;
constexpr std::uint64_t bit(std::size_t k) { return std::uint64_t{1} << k; }

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
bool describe_operand(walk_plan& p, std::size_t k, const raw_buffer& ref, const raw_buffer& op, unsigned kind);
// Drops dims of extent 1 (their offsets are already in p.offsets) and fuses neighbouring dims.
void simplify(walk_plan& p);
// Moves the dims with the smallest |stride| in operand 0 innermost, for walks whose order does not
// matter (copies). Stride-0 dims go outermost.
void sort_walk_dims(walk_plan& p);
// Runs the walk: p.fn for each run of the innermost dim.
void run(walk_plan& p);
// True if operand k is present over the whole walk.
bool covers(const walk_plan& p, std::size_t k);

}  // namespace strided_walk
}  // namespace internal
}  // namespace slinky

#endif  // SLINKY_RUNTIME_BUFFER_WALK_H
