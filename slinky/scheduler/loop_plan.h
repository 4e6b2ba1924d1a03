// The scheduler's analysis of one candidate loop (internal): for an output's func and one of its
// dims, which funcs of the output's group can be computed inside a loop over that dim, what one
// iteration's working set and traffic are as functions of the step, and what a step costs.
// docs/scheduler.md, "The cost model".
#ifndef SLINKY_SCHEDULER_LOOP_PLAN_H
#define SLINKY_SCHEDULER_LOOP_PLAN_H

#include <vector>

#include "slinky/scheduler/graph_walk.h"

namespace slinky {
namespace scheduler_internal {

// A quantity measured with the loop's step at S and at 2S, taken as linear in the step (exact
// for translations and scalings of the loop's chunk, which is what the scheduler keeps in a loop).
struct linear_in_step {
  double at_s = 0, at_2s = 0;
  void add(double a, double b) {
    at_s += a;
    at_2s += b;
  }
  double operator()(double step, double s) const;
};

// Why a func of a group is where it is.
enum class place_reason {
  output,
  slides,
  moves,
  pinned_root,
  consumer_at_root,
  invariant,
  // In a data-parallel loop: its window overlaps the previous iteration's, and each iteration
  // computes it whole (its halo again) instead of sliding.
  recomputed,
  not_a_translation,
  // Its window is empty at some probe of the loop (clamped by a crop: a part of a concatenation
  // along the loop's dim); the windows are not one translation.
  empty_window,
  unknown_region,
};

struct loop_plan {
  bool ok = false;
  // The output's dim and the loop variable's slot in the head's variables.
  int dim = -1;
  int slot = -1;
  index_t extent = 0;
  double probe_step = 1;  // S
  // Steps should be multiples of this: a func in the loop moves by one element every
  // `granularity` elements of the loop (a consumer reading whole panels or blocks of it, j / 64
  // say), and a step that is not a multiple makes iterations straddle its blocks (each computing
  // and reading partial blocks twice). The least common multiple over the loop's funcs.
  index_t granularity = 1;
  // One iteration's working set: the windows of the intermediates computed in the loop (their
  // folds), of the buffers read from outside the loop, and the output's chunk; in bytes.
  linear_in_step fold, external_window, output_chunk;
  // Bytes written and read per iteration in buffers computed in the loop (served from the level
  // the working set fits in), bytes of external windows already read by earlier iterations (the
  // same level), and the time of the new part of external windows and of the output chunk (from
  // the level their whole buffers fit in), in ns.
  linear_in_step internal_bytes, external_cached_bytes, streamed_ns;
  // The time of the external windows' bytes already read by earlier iterations, from the level
  // their whole buffers fit in: where a parallel loop's previous iteration ran on another core,
  // and they are not in this one's cache.
  linear_in_step external_cached_ns;
  // The windows read whole by every iteration from outside the loop (the same box each time: the
  // operands of a reduction, like b and c in (a x b) x c looped over rows): their bytes, and the
  // time to read them once. A callback reading a whole operand for each of its output rows reads
  // it that many times whatever the schedule, so the model charges these reads once per
  // evaluation, as for no loop. They count in the working set of a cache level they fit in alone
  // (the callbacks re-read them from there, and a loop's windows must leave them room), not in
  // that of a smaller level (they stream from a larger one whatever the step).
  double invariant_bytes = 0, invariant_read_ns = 0;
  // The callbacks' own work per iteration (the points each func in the loop computes times its
  // work per point), in ns: the same for every step of a loop whose funcs slide, larger for
  // smaller steps where the overlaps are recomputed.
  linear_in_step work_ns;
  // The bytes one iteration's shift adds to the windows of the funcs that slide: a pipelined
  // parallel loop with K iterations in flight holds K - 1 more of them.
  linear_in_step sliding_shift_bytes;
  // The bytes of the windows of the funcs that slide that earlier iterations computed (each
  // window less its new part): in a pipelined parallel loop the previous iteration ran on
  // another core, and its consumers read these from that core's cache.
  linear_in_step overlap_bytes;
  // Planned for a data-parallel loop: no func slides; those whose windows overlap are recomputed.
  bool recompute = false;
  int recomputed = 0;
  int calls_per_iteration = 0;
  // The buffers one iteration streams through: those computed in the loop and the windows read
  // from outside that move with it (not those read whole by every iteration).
  int buffers = 0;
  int sliding = 0;
  // The time of the group's funcs computed at the root, in ns.
  double root_ns = 0;
  // Per node (indexed like sched_graph::nodes; only the group's entries are meaningful, and
  // plan_loop resets only those).
  std::vector<char> in_loop;
  std::vector<place_reason> reason;
  std::vector<int> moving_dim;
  std::vector<linear_in_step> elements;
};

// Scratch space reused across plans (sized by the first use).
struct plan_scratch {
  std::vector<index_range> window[3], produce[3];
  std::vector<double> reads[3];
  std::vector<char> failed;
  std::vector<index_range> needed;
  // The members of the plan being made: member_mark[i] == mark.
  std::vector<int> member_mark;
  int mark = 0;
};

// Analyzes a loop over output dim `dim` of head `h` (members: the group's nodes, consumers
// first, h first; h is an output's func, or a func at the root heading a subgroup, whose members
// all feed it). full: the whole regions (full_regions). recompute: plan a data-parallel loop, in
// which every func in the loop computes its whole window in each iteration (none slides).
void plan_loop(const sched_graph& g, int h, int dim, const std::vector<int>& members,
               const std::vector<index_range>& full, const machine& m, double cache_fraction, plan_scratch& scratch,
               loop_plan& plan, bool recompute = false);

// The largest power of two <= x (1 for x < 2).
index_t floor_power_of_two(index_t x);

// `step` made a multiple of the plan's granularity: rounded down, or up to the granularity itself
// (both at most max_step).
index_t aligned_step(const loop_plan& plan, index_t step, index_t max_step);

// The estimated time of the group with the plan's loop in steps of `step`, with `workers`
// iterations in flight (1: serial; pipelined if some func slides, else data-parallel), in ns;
// also the working set of one iteration and the cache level it is served from (0: L1 ... 3:
// memory; the L3 holds the working sets of all the workers of a data-parallel loop).
double plan_cost(const loop_plan& plan, index_t step, int workers, const machine& m, double cache_fraction,
                 double* working_set = nullptr, int* level = nullptr);

// The time of the group with no loop (every func at the root), in ns; members as for plan_loop
// (the head first: its consumers, outside the group, are not priced).
double unscheduled_cost(const sched_graph& g, const std::vector<int>& members, const machine& m, double cache_fraction);

// The largest step whose working set (with `workers` iterations in flight) fits in `budget`
// bytes, rounded down to 3 significant bits and to a multiple of the plan's granularity (where
// it is at least that), at most max_step; 0 if even a step of 1 does not fit.
index_t largest_step_within(const loop_plan& plan, double budget, int workers, index_t max_step);

}  // namespace scheduler_internal
}  // namespace slinky

#endif  // SLINKY_SCHEDULER_LOOP_PLAN_H
