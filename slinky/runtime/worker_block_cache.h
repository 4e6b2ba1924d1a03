// The heap blocks a worker of a parallel loop keeps from one iteration to the next, so that an
// intermediate stored inside the loop is allocated once per worker and shape, not once per
// iteration (docs/threads.md, "Default storage in parallel loops"). A block is reused by the
// next allocation of the same buffer (symbol) with the same element size, rank, strides and fold
// factors and extents no larger (the last iteration of a loop whose step does not divide its
// extent is smaller), and given back when the worker is done. The evaluator keeps one cache per
// worker. Not part of the public API.
#ifndef SLINKY_RUNTIME_WORKER_BLOCK_CACHE_H
#define SLINKY_RUNTIME_WORKER_BLOCK_CACHE_H

#include <cstddef>
#include <vector>

#include "slinky/runtime/buffer.h"
#include "slinky/runtime/expr.h"

namespace slinky {
namespace internal {

class worker_block_cache {
public:
  // No block.
  static constexpr std::size_t none = static_cast<std::size_t>(-1);

  // Finds a block kept for sym, not in use, that can hold buf: of buf's shape, else (a loop's
  // last, truncated iteration) of the same element size, rank, strides and fold factors with
  // extents at least buf's, whose elements at buf's coordinates then lie within it (a dim of
  // extent 1 may have any stride: only its one element's offset, 0, is used). Marks it in use,
  // sets buf.base to its base and returns its index; none if there is no such block.
  std::size_t take(var sym, raw_buffer& buf) {
    std::size_t larger = none;
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      block& k = blocks_[i];
      if (k.in_use || k.sym != sym || k.elem_size != buf.elem_size || k.dims.size() != buf.rank) continue;
      bool same = true, holds = true;
      for (std::size_t d = 0; d < buf.rank && holds; ++d) {
        const dim& a = k.dims[d];
        const dim& b = buf.dims[d];
        same = same && a.extent() == b.extent() && a.stride() == b.stride() && a.fold_factor() == b.fold_factor();
        holds = a.extent() >= b.extent() && a.fold_factor() == b.fold_factor() &&
                (a.stride() == b.stride() || b.extent() <= 1);
      }
      if (!holds) continue;
      if (same) return use(i, buf);
      if (larger == none) larger = i;
    }
    return larger == none ? none : use(larger, buf);
  }

  // Keeps buf's block, in use: `allocation` is what the allocate hook returned for sym and buf.
  // Returns its index.
  std::size_t keep(var sym, const raw_buffer& buf, void* allocation) {
    blocks_.push_back(
        {sym, buf.elem_size, std::vector<dim>(buf.dims, buf.dims + buf.rank), buf.base, allocation, true});
    return blocks_.size() - 1;
  }

  // The buffer using the block at `index` (from take or keep) is done with it.
  void release(std::size_t index) { blocks_[index].in_use = false; }

  // Gives every block back, by free(sym, &buf, allocation) with the buffer it was allocated for,
  // and forgets them.
  template <typename Free>
  void free_all(Free free) {
    for (block& k : blocks_) {
      raw_buffer buf{k.base, k.elem_size, k.dims.size(), k.dims.data()};
      free(k.sym, &buf, k.allocation);
    }
    blocks_.clear();
  }

private:
  std::size_t use(std::size_t i, raw_buffer& buf) {
    blocks_[i].in_use = true;
    buf.base = blocks_[i].base;
    return i;
  }

  struct block {
    var sym;
    std::size_t elem_size;
    std::vector<dim> dims;
    void* base;
    void* allocation;
    bool in_use;
  };
  std::vector<block> blocks_;
};

}  // namespace internal
}  // namespace slinky

#endif  // SLINKY_RUNTIME_WORKER_BLOCK_CACHE_H
