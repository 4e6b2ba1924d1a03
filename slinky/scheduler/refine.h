// auto_pipeline's measured refinement (internal): candidates near the model's schedule of a shape
// class built and timed on an evaluation's buffers, and the one kept (refine_options;
// docs/scheduler.md, "Measured refinement").
#ifndef SLINKY_SCHEDULER_REFINE_H
#define SLINKY_SCHEDULER_REFINE_H

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/scheduler/auto_pipeline.h"
#include "slinky/scheduler/sched_graph.h"
#include "slinky/scheduler/schedule.h"

namespace slinky {
namespace scheduler_internal {

// One output of the model's schedule that the refinement may change: its loop (or none), and the
// model's next-best candidate for it.
struct refined_loop {
  func* f;
  // The model's loop: over v in steps of `step` (none: the model left the output without a loop).
  bool none;
  var v;
  index_t step;
  bool parallel;
  index_t granularity;
  index_t iterations;
  bool recomputes;
  // A tile's outer loop as the scheduler set it (empty without one): the refinement walks its
  // step (the strip's width, strip_extent the dim's extent rounded up to whole strips) beside the
  // inner loop's.
  std::vector<func::loop_info> outer;
  index_t strip, strip_extent;
  bool outer_parallel;
  // The model's next-best candidate (schedule_report::loop_decision::has_next): a loop over
  // next_v, or no loop (next_none).
  bool has_next;
  bool next_none;
  var next_v;
  index_t next_step, next_granularity, next_iterations;
  bool next_parallel;
  // The outputs of the funcs computed in the model's loop (not a tile's): stored in the loop
  // where a candidate makes it data-parallel (each iteration its own windows), else where the
  // builder stores them (pipelined when the loop is parallel).
  std::vector<buffer_expr_ptr> in_loop;
  // The outputs of the funcs computed in the model's tile: stored at its outer loop where a
  // candidate is the tile, else where the builder stores them (the next-best candidate, the loop
  // the tile beat, has no outer loop).
  std::vector<buffer_expr_ptr> in_tile;
};
// A candidate's setting of one refined_loop: the model's dim (which 0) or the next-best
// candidate's (which 1), in steps of `step`, parallel or not; with the model's tile, in strips of
// `strip` (0 without a tile), and then `parallel` is the strips' (the outer loop's; the inner one
// is serial).
struct loop_setting {
  int which;
  index_t step;
  bool parallel;
  index_t strip;
  // The model's loop, parallel, with the funcs in it stored in it (data-parallel) rather than
  // pipelined.
  bool data_parallel;
  bool operator==(const loop_setting& o) const {
    return which == o.which && step == o.step && parallel == o.parallel && strip == o.strip &&
           data_parallel == o.data_parallel;
  }
};
using candidate_loops = std::vector<loop_setting>;

// The loops of the model's schedule `report` of graph g that the refinement may change: the
// loops the scheduler set (a client's are left alone), and an output without a loop where the
// model priced a loop for it.
std::vector<refined_loop> refined_loops(const schedule_report& report, const sched_graph& g);

// The model's choice as a candidate: each loop as the model set it.
candidate_loops model_setting(const std::vector<refined_loop>& loops);

// The candidate that the schedule `other` of the same graph (for another description of the
// machine) takes on `loops`: for each loop, other's step (and a tile's strips) where other loops
// its output over the same variable in the same shape (a tile where the model has one, a single
// loop where it has none); the model's next-best where other takes that (no loop, or a loop over
// the next-best's variable); else the model's setting.
candidate_loops other_setting(const std::vector<refined_loop>& loops, const schedule_report& other);

// A candidate measured before the walk, and why (for the report).
struct first_candidate {
  candidate_loops c;
  std::string why;
};

// The refinement of one shape class: from the model's choice, a walk over the neighbouring
// candidates, the steps of the fastest followed further, the finalists timed again, and the
// choice (refine_options says how). Deterministic for a fixed refine_options::timer.
//
//   refinement r(ctx, options, refined_loops(report, g), threads, build, evaluate);
//   p = r.run(p, report_text);
class refinement {
public:
  // Builds the pipeline of the loops set on the funcs now.
  using build_fn = std::function<std::shared_ptr<const pipeline>()>;
  // Evaluates a pipeline once on the buffers being timed.
  using evaluate_fn = std::function<void(const pipeline&)>;

  // Refines `loops` (not empty), with `threads` for parallel loops; names the funcs and
  // variables with ctx. ctx and options must outlive this object.
  refinement(const node_context& ctx, const refine_options& options, std::vector<refined_loop> loops, int threads,
             build_fn build, evaluate_fn evaluate);

  // Times `model` (the pipeline of the model's choice), then the candidates of `first` (in turn,
  // those not tried yet, within the budget), walks from the fastest of these and returns the
  // pipeline kept; appends what was measured and kept to `text`. The funcs are left with the
  // loops of the last candidate built (the caller restores their schedule). Called once.
  std::shared_ptr<const pipeline> run(std::shared_ptr<const pipeline> model, std::string& text,
                                      const std::vector<first_candidate>& first = {});

private:
  // Every candidate measured, in order, with its time and pipeline.
  struct measured_candidate {
    candidate_loops c;
    double s;
    std::shared_ptr<const pipeline> p;
  };

  std::function<double()> runner(const pipeline& cp) const;
  double time_once(const std::string& name, const std::function<double()>& run) const;
  std::shared_ptr<const pipeline> build_candidate(const candidate_loops& c) const;
  double time_candidate(const pipeline& cp, const std::string& name, double limit) const;
  std::size_t measure(const candidate_loops& n, const std::string& why = std::string());
  void time_again(const std::vector<std::size_t>& which, const char* why);
  bool is_leaf(const candidate_loops& n, const candidate_loops& from) const;
  void walk(std::size_t at);
  int fastest_looped() const;
  std::optional<candidate_loops> next_on_line(const candidate_loops& base, std::size_t i, bool up) const;
  std::optional<candidate_loops> next_probe(int from, std::size_t& next_line) const;
  void follow_steps();
  double steps(const candidate_loops& c) const;
  double sync_s(const candidate_loops& c) const;
  double added_sync_s(const candidate_loops& c, const candidate_loops& than) const;
  bool has_parallel(const candidate_loops& c) const;
  std::vector<const measured_candidate*> choose_finalists(double fastest, const measured_candidate* fastest_c) const;
  void time_finalists(const measured_candidate* fastest_c, std::vector<const measured_candidate*> finalists);
  void time_rounds(int rounds, const std::string& why);
  const measured_candidate* equal_smallest();
  double time_ratio(const measured_candidate& c, const measured_candidate& than) const;
  double equal_band(const measured_candidate& c, const measured_candidate& fastest) const;
  int rounds_beyond_band(const measured_candidate& c, const measured_candidate* fastest_chosen,
                         std::size_t& rounds) const;
  const measured_candidate& choose();
  void report(const measured_candidate& keep, std::string& text) const;

  const node_context& ctx_;
  const refine_options& refine_;
  const std::vector<refined_loop> loops_;
  const int threads_;
  const build_fn build_;
  const evaluate_fn evaluate_;
  // The model's choice, its name and time, and the time beyond which a candidate's repetitions
  // stop (max_slowdown times the model's).
  candidate_loops model_;
  std::string model_name_;
  double model_s_ = 0;
  double limit_ = 0;
  // The candidates tried, and those measured (the model's choice first).
  std::vector<candidate_loops> tried_;
  std::vector<measured_candidate> measured_;
  // The candidates evaluated beyond the model's choice, and the slowest's time over the model's.
  int explored_ = 0;
  double worst_ = 1;
  // What was measured, for the report.
  std::string log_;
  // The speed the timings are judged against (settled_time), and the timings taken again.
  mutable speed_reference speed_;
  // The finalists timed again (the fastest first), their medians, and their times in each round
  // (round r of every candidate taken together), for the comparison of parallel candidates.
  std::vector<measured_candidate> confirmed_;
  std::vector<std::vector<double>> rounds_s_;
  // The candidates timed again (the fastest first), in the order of confirmed_.
  std::vector<const measured_candidate*> finalists_;
};

}  // namespace scheduler_internal
}  // namespace slinky

#endif  // SLINKY_SCHEDULER_REFINE_H
