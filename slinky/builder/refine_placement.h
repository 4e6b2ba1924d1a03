// Refinements of the default placement that need the bounds of the schedule.
//
// Default storage in parallel loops: an intermediate produced inside a parallel loop is stored
// inside it by default (a block per worker), unless its consumers' windows overlap between
// iterations of the loop (stencils). Then that storage would make every iteration recompute the
// overlap, so the buffer is stored outside the loop instead: its producer slides with the loop,
// which is pipelined (docs/threads.md, "Default storage in parallel loops").
#ifndef SLINKY_BUILDER_REFINE_PLACEMENT_H
#define SLINKY_BUILDER_REFINE_PLACEMENT_H

#include "slinky/builder/bounds.h"
#include "slinky/builder/graph.h"

namespace slinky {

// One round of the decision, given the bounds of the current schedule: moves the default storage
// of each intermediate whose windows overlap across the innermost parallel loop it is stored in
// to outside that loop, and moves back inside a loop the storage of a buffer moved out of it in
// an earlier round whose producer turned out not to slide with it (its windows would then be
// written by several iterations at once). Returns whether the schedule changed: the caller then
// infers the bounds again and calls this again.
bool share_overlapping_windows(graph& g, const bounds_inference& bounds);

// Funcs placed by default (no compute_at) in a loop whose iterations all need the same region of
// them (a producer read the same way in every row of its consumer, say) would compute that region
// once per iteration: one round moves each such func out of the innermost loop of its compute
// chain its region does not move with, unless a compute_at or store_at of the client names that
// loop or one inside it along the func's chain (which must stay around the func). A move forgets
// which buffers share_overlapping_windows moved back inside a loop: a producer that could not
// slide along a loop whose owner slid along an outer one may slide once the owner is out of it.
// Returns whether the schedule changed, like share_overlapping_windows.
bool hoist_invariant_funcs(graph& g, const bounds_inference& bounds);

}  // namespace slinky

#endif  // SLINKY_BUILDER_REFINE_PLACEMENT_H
