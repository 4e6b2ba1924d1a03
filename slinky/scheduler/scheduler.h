// The scheduler object behind schedule() (internal): holds the graph's analysis, the cost model
// and the report of one call, and schedules the groups of funcs one by one: an output's group,
// then the subgroups its loop leaves at the root. For each group the search (search.cc) chooses a
// candidate (candidate.h) from the loops the analysis describes (loop_analysis.h) and the cost
// model prices (cost_model.h); the scheduler (scheduler.cc) sets it on the funcs and reports it.
#ifndef SLINKY_SCHEDULER_SCHEDULER_H
#define SLINKY_SCHEDULER_SCHEDULER_H

#include <optional>
#include <utility>
#include <vector>

#include "slinky/scheduler/candidate.h"
#include "slinky/scheduler/cost_model.h"
#include "slinky/scheduler/loop_analysis.h"
#include "slinky/scheduler/sched_graph.h"
#include "slinky/scheduler/schedule.h"

namespace slinky {
namespace scheduler_internal {

class scheduler {
public:
  // Walks the graph producing `outputs` from `inputs` and analyzes its whole regions for `shapes`
  // (after clearing the client's schedule if options.reschedule); nothing is scheduled yet.
  scheduler(const std::vector<buffer_expr_ptr>& inputs, const std::vector<buffer_expr_ptr>& outputs,
            const schedule_shapes& shapes, const machine& m, const schedule_options& options);
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  // Schedules every group, sets the schedules on the funcs and returns the report (once).
  schedule_report run();

private:
  // The search's result for one group.
  struct group_choice {
    // Some loop could be analyzed (a dim of extent >= 2 with known regions).
    bool considered = false;
    // The chosen candidate (no loop if no loop is cheaper), and the group's time with no loop.
    candidate best;
    double unscheduled_ns = 0;
    // The rereads of operands read whole for every row with no loop (loop_estimate::reread_ns).
    double unscheduled_reread_ns = 0;
    // The next-best candidate priced: a loop over another dim or no loop (none if nothing else
    // was priced), for the measured refinement to try.
    std::optional<candidate> next;
    // Takes c if it is cheaper than the best (which becomes the next-best) or than the next-best.
    void offer(candidate c);
    // Takes c as the next-best if it is cheaper than the next-best (the parallel loop a serial one
    // kept out: not priced below cost_model::parallel_gain times the serial loop's time).
    void offer_next(candidate c);
  };

  // The search (search.cc).
  // The cheapest candidate of head h's group: a loop over one of its dims, serial or parallel, or
  // none.
  group_choice choose(int h, const std::vector<int>& members);
  // The best candidate of a loop over dim d of head h (analyzed into analysis_), serial or
  // parallel (the data-parallel one analyzed into recompute_analysis_); into `kept_out`, where
  // the serial one is kept, the cheapest parallel one (none without threads).
  candidate best_loop(int h, int d, const std::vector<int>& members, std::optional<candidate>& kept_out);
  // The best step of an analyzed loop with `workers` iterations in flight, at most max_step.
  candidate best_step(const loop_analysis& a, int workers, index_t max_step) const;
  // Where the chosen serial loop's working set is served beyond the L2 (a row of the output or of
  // an intermediate is too large for it, or an operand read whole by every iteration is), or
  // where no loop was chosen and the callbacks read operands whole for every row from beyond the
  // L2: a tile of two serial loops if one is cheaper, into `best`.
  void consider_tiles(int h, const std::vector<int>& members, group_choice& best);

  // Setting and reporting (scheduler.cc).
  // Decides, sets and reports the schedule of head h's group (subgroup: the funcs feeding only a
  // func left at the root by its group's loop). Appends to at_root the members left at the root
  // that may head subgroups.
  void schedule_group(int h, const std::vector<int>& group, bool subgroup, std::vector<int>& at_root);
  // Why an output's group is left as the client made it, or null.
  const char* left_alone(int h, const std::vector<int>& group) const;
  // Reports a group left without a loop.
  void report_unlooped(int h, const std::vector<int>& group, const group_choice& c, schedule_report::loop_decision& ld);
  // Where each member of c's group goes (from the analysis of c's loop, made again), into c.sites.
  void place(int h, const std::vector<int>& group, candidate& c);
  // Sets c's schedule on the funcs of head h's group; appends the members set at the root.
  void apply(int h, const candidate& c, std::vector<int>& at_root);
  // Reports c's loop and the decision for each member.
  void report_loop(int h, const candidate& c, schedule_report::loop_decision& ld);
  // The subgroups among at_root (members of one group left at the root, consumers first), queued.
  void find_subgroups(const std::vector<int>& at_root, int round);

  cost_model model_;
  schedule_options options_;
  sched_graph g_;
  // The whole region of every func (full_regions).
  std::vector<index_range> full_;
  loop_analyzer analyzer_;
  // The analyses of the loop being considered, of its data-parallel variant, and of a tile's.
  loop_analysis analysis_, recompute_analysis_, tile_analysis_;
  // The funcs of a group with no loop (scratch).
  std::vector<root_term> roots_;
  schedule_report report_;
  // The groups to schedule, in order: the outputs', then the subgroups as they are found (head,
  // members). claim_[i] holds (round, subgroup head) for the funcs placed in find_subgroups'
  // round.
  std::vector<std::pair<int, std::vector<int>>> queue_;
  std::vector<std::pair<int, int>> claim_;
};

}  // namespace scheduler_internal
}  // namespace slinky

#endif  // SLINKY_SCHEDULER_SCHEDULER_H
