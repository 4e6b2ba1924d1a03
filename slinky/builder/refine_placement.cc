// Refinements of the default placement (see refine_placement.h).
#include "slinky/builder/refine_placement.h"

#include <algorithm>

#include "slinky/runtime/depends_on.h"

namespace slinky {

namespace {

bool contains(const std::vector<loop_level>& levels, loop_level l) {
  return std::find(levels.begin(), levels.end(), l) != levels.end();
}

// Whether a compute_at or store_at of the client names a loop inside l (or l itself, if
// `or_l`) along fn's compute chain: the funcs computed or stored there (fn's producers, say) must
// stay inside it, so fn must too.
bool pins_inside(const graph& g, const func_node& fn, loop_level l, bool or_l = false) {
  auto at = std::find(fn.compute_chain.begin(), fn.compute_chain.end(), l);
  if (at == fn.compute_chain.end()) return false;
  if (!or_l) ++at;
  auto inside = [&](loop_level x) { return std::find(at, fn.compute_chain.end(), x) != fn.compute_chain.end(); };
  for (const func_node& other : g.funcs) {
    if (other.f->compute_at() && inside(other.compute)) return true;
  }
  for (const buffer_node& b : g.buffers) {
    if (b.buffer->store_at() && inside(b.store)) return true;
  }
  return false;
}

// Whether `holds` is true of a serial loop outside loop l on func fi's compute chain.
template <typename Pred>
bool any_serial_loop_outside(const graph& g, int fi, loop_level l, Pred holds) {
  for (loop_level outer : g.funcs[fi].compute_chain) {
    if (outer == l) return false;
    if (!g.loop(outer).is_parallel() && holds(outer)) return true;
  }
  return false;
}

}  // namespace

bool share_overlapping_windows(graph& g, const bounds_inference& bounds) {
  bool changed = false;
  for (std::size_t bi = 0; bi < g.buffers.size(); ++bi) {
    buffer_node& b = g.buffers[bi];
    if (b.producer < 0 || b.is_output || b.is_input || b.buffer->store_at()) continue;
    // A loop this buffer was moved out of must now slide its producer; otherwise every iteration
    // computes its whole window into the shared buffer (several at once), and the block per
    // worker was better.
    bool reverted = false;
    for (auto i = b.shared_across.begin(); i != b.shared_across.end();) {
      const auto slides = [&](loop_level l) { return bounds.slides_with(b.producer, l); };
      if (slides(*i) || any_serial_loop_outside(g, b.producer, *i, slides)) {
        ++i;
        continue;
      }
      b.not_shared_across.push_back(*i);
      func_node& producer = g.funcs[b.producer];
      if (producer.hoisted_to == *i) producer.hoisted_to = loop_level();
      i = b.shared_across.erase(i);
      reverted = true;
    }
    if (reverted) {
      changed = true;
      continue;
    }
    if (b.store.root()) continue;
    const func::loop_info& info = g.loop(b.store);
    if (!info.is_parallel() || contains(b.not_shared_across, b.store)) continue;
    if (bounds.windows_overlap(static_cast<int>(bi), b.store)) {
      b.shared_across.push_back(b.store);
      // A producer computed in a loop inside b.store would be part of the pipelined loop's last
      // stage, with its consumers: one stage, which a pipeline runs serially. Computed at the loop
      // itself, it is a stage of its own, and the iterations overlap.
      func_node& producer = g.funcs[b.producer];
      if (!producer.f->compute_at() && producer.compute != b.store && !pins_inside(g, producer, b.store)) {
        producer.hoisted_to = b.store;
      }
      changed = true;
    } else if (any_serial_loop_outside(g, b.producer, b.store,
                                       [&](loop_level l) { return bounds.windows_overlap(static_cast<int>(bi), l); })) {
      // The iterations of the parallel loop write disjoint parts of the buffer, and its producer
      // can slide along a serial loop outside: stored outside the parallel loop too, the buffer
      // keeps what earlier iterations of that loop computed, as it does serially.
      b.shared_across.push_back(b.store);
      changed = true;
    }
  }
  if (changed) {
    const bool scheduled = schedule_locations(g);
    SLINKY_ASSERT(scheduled, "the client's locations were resolved before");
  }
  return changed;
}

bool hoist_invariant_funcs(graph& g, const bounds_inference& bounds) {
  bool changed = false;
  for (std::size_t fi = 0; fi < g.funcs.size(); ++fi) {
    func_node& fn = g.funcs[fi];
    if (fn.f->compute_at() || fn.compute.root()) continue;
    // The outermost loop of the chain whose iterations all need the same region: the region the
    // func computes over one of its iterations (over all the loops inside it) does not depend
    // on its variable.
    const box_expr whole(bounds.funcs[fi].full.begin(), bounds.funcs[fi].full.end());
    for (std::size_t k = 0; k < fn.compute_chain.size(); ++k) {
      const loop_level l = fn.compute_chain[k];
      const box_expr lifted = bounds.lift(whole, fn.compute_chain, l, bounds_inference::view::full);
      bool moves = false;
      for (const interval_expr& i : lifted) moves = moves || depends_on(i, g.loop_var(l));
      if (moves || pins_inside(g, fn, l, /*or_l=*/true)) continue;
      fn.invariant_at = k == 0 ? loop_level() : fn.compute_chain[k - 1];
      changed = true;
      break;
    }
  }
  if (changed) {
    // A buffer kept inside a parallel loop because its producer could not slide with it may now
    // be able to (the loop's owner, hoisted out of a loop it slid along, no longer restarts its
    // warm-up in each iteration of it): share_overlapping_windows decides again.
    for (buffer_node& b : g.buffers) b.not_shared_across.clear();
    const bool scheduled = schedule_locations(g);
    SLINKY_ASSERT(scheduled, "the client's locations were resolved before");
  }
  return changed;
}

}  // namespace slinky
