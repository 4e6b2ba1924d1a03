// The heap allocations of one evaluator that are live, innermost last, and the blocks handed on
// among them at run time (docs/runtime.md, "Memory handed on at run time"). A free() intrinsic
// ends a buffer's use of its memory early; the memory is then *parked* rather than given back,
// when a later allocation may take it: the next heap allocation of the evaluator takes a parked
// block if it fits and wastes at most a quarter of it, else the parked blocks are given back
// before it allocates, and so they are before any call, copy, async task or parallel loop. A
// parked block is held only while nothing else runs or allocates, so parking never raises the
// peak memory that an allocate hook sees; a block handed on this way makes one heap allocation
// serve buffers whose sizes the builder could not prove equal. Not part of the public API.
//
// Blocks go back through `free(sym, buf, allocation)`, a callable the evaluator passes to the
// functions that may give one back (its free hook).
#ifndef SLINKY_RUNTIME_LIVE_ALLOCATIONS_H
#define SLINKY_RUNTIME_LIVE_ALLOCATIONS_H

#include <cstddef>
#include <vector>

#include "slinky/runtime/buffer.h"
#include "slinky/runtime/expr.h"

namespace slinky {
namespace internal {

class live_allocations {
public:
  struct record {
    var sym;           // the buffer this statement allocates
    raw_buffer* buf;   // its descriptor (base set to null once freed)
    void* allocation;  // what the free hook gets, or null (nothing to give back, or done)
    // The block as the allocate hook made it: the buffer it was made for and that buffer's
    // descriptor and base (the free hook gets these), its size in bytes.
    var owner_sym;
    const raw_buffer* owner_buf;
    void* owner_base;
    std::size_t owner_bytes;
    bool parked;
  };

  bool any_parked() const { return parked_ > 0; }

  // An allocation statement's buffer is live until the matching pop.
  void push(const record& r) { records_.push_back(r); }
  // Ends the innermost allocation, giving its block back (unless nothing is left to give).
  template <typename Free>
  void pop(Free free) {
    record done = records_.back();
    records_.pop_back();
    give_back(done, free);
  }

  // Gives every parked block back.
  template <typename Free>
  void give_back_parked(Free free) {
    for (auto i = records_.rbegin(); parked_ > 0 && i != records_.rend(); ++i) {
      if (i->parked) give_back(*i, free);
    }
  }

  // The parked block that buf (of size bytes, with its base at the start of its memory) fits
  // best, if one wastes at most a quarter of its bytes; null if none does.
  record* find_parked(const raw_buffer& buf, std::size_t size) {
    if (size == 0 || internal::base_offset(buf) != 0) return nullptr;
    record* best = nullptr;
    for (record& r : records_) {
      if (!r.parked || r.owner_bytes < size || r.owner_bytes - size > r.owner_bytes / 4) continue;
      if (!best || r.owner_bytes < best->owner_bytes) best = &r;
    }
    return best;
  }

  // Hands the parked block of donor (from find_parked) on to buf, sym's descriptor: sets buf.base
  // and returns the record to push for buf, which now owns the block.
  record hand_on(record& donor, var sym, raw_buffer& buf) {
    record r = donor;
    donor.parked = false;
    donor.allocation = nullptr;
    --parked_;
    buf.base = r.owner_base;
    r.sym = sym;
    r.buf = &buf;
    r.parked = false;
    return r;
  }

  // free(sym): the innermost live buffer sym no longer uses its memory. Its base becomes null and
  // its block is parked, or given back if it cannot be handed on. False if sym is not live here.
  template <typename Free>
  bool free_early(var sym, Free free) {
    for (auto i = records_.rbegin(); i != records_.rend(); ++i) {
      if (i->sym != sym) continue;
      i->buf->base = nullptr;
      if (!i->allocation || i->parked) return true;
      // A block whose base is not at its start (negative strides) is not handed on. (Blocks a
      // worker keeps have no allocation here: they are never freed early.)
      if (i->owner_bytes > 0 && internal::base_offset(*i->owner_buf) == 0) {
        i->parked = true;
        ++parked_;
      } else {
        give_back(*i, free);
      }
      return true;
    }
    return false;
  }

private:
  std::vector<record> records_;
  int parked_ = 0;

  // Gives r's block back to the allocate hook's owner of it.
  template <typename Free>
  void give_back(record& r, Free free) {
    if (r.parked) --parked_;
    r.parked = false;
    if (!r.allocation) return;
    raw_buffer owner = *r.owner_buf;
    owner.base = r.owner_base;
    free(r.owner_sym, &owner, r.allocation);
    r.allocation = nullptr;
  }
};

}  // namespace internal
}  // namespace slinky

#endif  // SLINKY_RUNTIME_LIVE_ALLOCATIONS_H
