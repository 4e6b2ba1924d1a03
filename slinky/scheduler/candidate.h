// A candidate schedule of one group of funcs (internal): the loop nest of the group's head and
// where each func of the group is computed and stored, with the cost model's estimate. The search
// (search.cc) makes and prices candidates; the scheduler (scheduler.cc) sets the chosen one on
// the funcs and reports it.
#ifndef SLINKY_SCHEDULER_CANDIDATE_H
#define SLINKY_SCHEDULER_CANDIDATE_H

#include <vector>

#include "slinky/scheduler/cost_model.h"

namespace slinky {
namespace scheduler_internal {

// One loop of a nest: over output dim `dim` of the head's func, in steps of `step`.
struct loop_level {
  int dim = -1;
  index_t step = 0;
  bool parallel = false;
};

// Where a func of the group is computed and where its outputs are stored.
struct func_site {
  // The func (an index into sched_graph::nodes).
  int node = -1;
  // Computed inside the nest's innermost loop (the builder's default placement: the innermost
  // loop containing its consumers), else at the root (or where the client put it).
  bool in_loop = false;
  // Its outputs stored inside that loop, each iteration with its own windows (a data-parallel loop
  // recomputing overlaps); else where the builder stores them by default (outside a serial loop,
  // folded to the window; per worker or shared and pipelined in a parallel one, docs/threads.md).
  bool stored_in_loop = false;
  // Scheduled by the client (compute_root): left as it is.
  bool client = false;
};

// A candidate schedule of the group of one head.
struct candidate {
  // The loops of the head's func, outermost first; empty: no loop. One loop, or two over
  // different dims (a tile: the funcs of the group are computed in the inner loop, each iteration
  // of the outer one a strip of the output).
  std::vector<loop_level> loops;
  // Iterations in flight at once: 1 for a serial loop; the threads of a data-parallel loop; at
  // most one per func in it for a pipelined one.
  int workers = 1;
  // Parallel, and data-parallel although the windows of some funcs in the loop overlap: those
  // are stored in the loop and recompute the overlap in each iteration instead of sliding.
  bool recompute = false;
  // The estimate of this candidate (with no loop: the group's unscheduled time).
  loop_estimate estimate;
  // The cheapest estimate of the steps of this candidate's loop, by which loops are compared
  // with each other and with no loop (what a loop can do at best; estimate.ns when the search
  // preferred a step with a smaller working set).
  double cheapest_ns = 0;
  // The cheapest of the steps' estimates with nothing hidden by the prefetcher (ns +
  // prefetched_ns), as best_step priced them: what scheduler::best_loop compares a serial and a
  // parallel loop by (not kept up to date for a tile's strips, which it does not compare).
  double cheapest_unhidden_ns = 0;
  // One per member of the group, in the group's order: set for the chosen candidate only.
  std::vector<func_site> sites;

  // The bytes read whole by every iteration of the (inner) loop (loop_counts::invariant_bytes).
  double invariant_bytes = 0;
  // The iterations of the innermost loop in all, and the strips of a tile (1 without one).
  index_t iterations = 0;
  // The steps of the innermost loop are multiples of this (loop_analysis::granularity).
  index_t granularity = 1;
  index_t strips = 1;

  bool looped() const { return !loops.empty(); }
  bool tiled() const { return loops.size() == 2; }
  // The loop the group's funcs are computed in.
  const loop_level& inner() const { return loops.back(); }
};

}  // namespace scheduler_internal
}  // namespace slinky

#endif  // SLINKY_SCHEDULER_CANDIDATE_H
