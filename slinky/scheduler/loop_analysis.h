// The scheduler's analysis of one candidate loop (internal): for the head of a group (an
// output's func, or a func at the root heading a subgroup) and one of its dims, which funcs of the
// group can be computed inside a loop over that dim, and what one iteration touches as functions
// of the step, as counts (bytes, calls, the callbacks' footprints) for the cost model
// (cost_model.h). docs/scheduler.md, "The algorithm".
#ifndef SLINKY_SCHEDULER_LOOP_ANALYSIS_H
#define SLINKY_SCHEDULER_LOOP_ANALYSIS_H

#include <vector>

#include "slinky/scheduler/cost_model.h"
#include "slinky/scheduler/sched_graph.h"

namespace slinky {
namespace scheduler_internal {

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

// The outer loop of a tile: the head's output dim `dim` cut into chunks of `step` elements. The
// analysis of the inner loop then describes one such chunk (a strip of the output), probed away
// from the ends of the dim.
struct strip {
  int dim = -1;
  index_t step = 0;
  bool active() const { return dim >= 0 && step > 0; }
};

// The analysis of a loop over one dim of a group's head.
struct loop_analysis {
  bool ok = false;
  // The output's dim and the loop variable's slot in the head's variables.
  int dim = -1;
  int slot = -1;
  // The outer loop of a tile (inactive if none): the analysis is of one strip of the output.
  strip outer;
  // With a tile, the strips of the output (the outer loop's iterations).
  index_t strips = 1;
  // Steps should be multiples of this: a func in the loop moves by one element every
  // `granularity` elements of the loop (a consumer reading whole panels or blocks of it, j / 64
  // say), and a step that is not a multiple makes iterations straddle its blocks (each computing
  // and reading partial blocks twice). The least common multiple over the loop's funcs.
  index_t granularity = 1;
  // The largest multiple a func in the loop asked for (func::cost_hints), part of granularity; 1
  // if none.
  index_t hinted_multiple = 1;
  // Analyzed for a data-parallel loop: no func slides; those whose windows overlap are recomputed.
  bool recompute = false;
  int recomputed = 0;
  // What one iteration touches, for the cost model.
  loop_counts counts;
  // Per node (indexed like sched_graph::nodes; only the group's entries are meaningful, and
  // analyze resets only those): computed in the loop, why, the dim of its outputs that moves with
  // the loop (-1 if none), and the elements of its window in one iteration.
  std::vector<char> in_loop;
  std::vector<place_reason> reason;
  std::vector<int> moving_dim;
  std::vector<linear_in_step> elements;

  index_t extent() const { return counts.extent; }
  double probe_step() const { return counts.probe_step; }
};

// Analyzes candidate loops of the groups of one graph, with scratch space reused across analyses.
class loop_analyzer {
public:
  // g and full (the whole regions, full_regions) must outlive the analyzer; model decides which
  // level each whole buffer is in.
  loop_analyzer(const sched_graph& g, const std::vector<index_range>& full, const cost_model& model)
      : g_(g), full_(full), model_(model) {}

  // Analyzes a loop over output dim `dim` of head h (members: the group's nodes, consumers first,
  // h first; h is an output's func, or a func at the root heading a subgroup, whose members all
  // feed it) into `result`. recompute: analyze a data-parallel loop, in which every func in the
  // loop computes its whole window in each iteration (none slides).
  // outer: the outer loop of a tile (the loop over `dim` is then the inner one, and the analysis
  // is of one strip of the output: the head's window on outer.dim cut to outer.step elements).
  void analyze(int h, int dim, const std::vector<int>& members, bool recompute, loop_analysis& result,
               strip outer = strip());

  // The group with no loop: every func at the root, into `roots`; members as for analyze (the
  // head first: its consumers, outside the group, are not counted).
  void unscheduled(const std::vector<int>& members, std::vector<root_term>& roots) const;

  // Scratch space reused across analyses (sized by the first use).
  struct scratch {
    std::vector<index_range> window[3], produce[3];
    std::vector<double> reads[3];
    // The rows of the funcs in the loop reading a func row by row, each counted as its share of
    // the window (sched_node::row_window_share), and the largest share.
    std::vector<double> rows[3];
    std::vector<double> row_share;
    std::vector<char> failed;
    std::vector<index_range> needed;
    // The members of the analysis being made: member_mark[i] == mark.
    std::vector<int> member_mark;
    int mark = 0;
    // Per member: its position in the order the loop's funcs run (producers first).
    std::vector<std::size_t> position;
    // The blocks of storage shared within an iteration: the size class of the buffers in each
    // (their windows' bytes at probes 0 and 2, element size, rank, memory) and the position of
    // the last user of any of them.
    struct storage_block {
      double bytes[2];
      index_t elem_size;
      std::size_t rank;
      memory_type storage;
      std::size_t free_after;
    };
    std::vector<storage_block> blocks;
  };

private:
  const sched_graph& g_;
  const std::vector<index_range>& full_;
  const cost_model& model_;
  scratch scratch_;
};

// The largest power of two <= x (1 for x < 2).
index_t floor_power_of_two(index_t x);

}  // namespace scheduler_internal
}  // namespace slinky

#endif  // SLINKY_SCHEDULER_LOOP_ANALYSIS_H
