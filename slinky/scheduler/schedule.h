/// \file
/// The automatic scheduler's explicit entry point: given a pipeline's graph, the shapes of its
/// inputs and outputs and a machine description, sets loops on the funcs that produce the
/// outputs and compute_at on the others, so that each iteration's working set fits in cache.
/// docs/scheduler.md describes the cost model and what is handled.
///
///   schedule_shapes shapes;
///   shapes.add(in, {4096, 4096}).add(out, {4096, 4096});
///   schedule_report r = schedule({in}, {out}, shapes, machine::host());
///   pipeline p = build_pipeline(ctx, {in}, {out});
#ifndef SLINKY_SCHEDULER_SCHEDULE_H
#define SLINKY_SCHEDULER_SCHEDULE_H

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/machine.h"

namespace slinky {

/// The known or expected shapes of a pipeline's buffers and the values of its scalar arguments.
/// Outputs need a shape to be scheduled; inputs need one wherever a func's bounds read their
/// metadata (buffer_min, buffer_max, e.g. the reduction range of a matrix product) and for the
/// cost of reading them.
struct schedule_shapes {
  /// The shape of one buffer.
  struct buffer_shape {
    /// The buffer.
    buffer_expr_ptr buffer;
    /// [min, max] of each dim.
    std::vector<std::pair<index_t, index_t>> bounds;
    /// Bytes per element, used where the buffer_expr's element size is not a constant (a
    /// constant one wins); 0 or negative: 4.
    index_t elem_size = 0;
  };
  /// The shapes given, in the order given.
  std::vector<buffer_shape> buffers;
  /// The scalar arguments' values.
  std::vector<std::pair<var, index_t>> scalars;

  /// A buffer with these extents (mins 0).
  schedule_shapes& add(buffer_expr_ptr b, const std::vector<index_t>& extents);
  /// The same for a braced list, `add(b, {0})` or `add(b, {w, h})`: without it a list of one
  /// element could also convert to a raw_buffer, and the call would be ambiguous.
  schedule_shapes& add(buffer_expr_ptr b, std::initializer_list<index_t> extents) {
    return add(std::move(b), std::vector<index_t>(extents));
  }
  /// A buffer with the bounds and element size of `like`.
  schedule_shapes& add(buffer_expr_ptr b, const raw_buffer& like);
  /// The value of the scalar argument v.
  schedule_shapes& add_scalar(var v, index_t value);
};

/// How schedule() may schedule.
struct schedule_options {
  /// Also schedule the funcs the client already scheduled (their loops, compute_at and the
  /// store_at of their outputs are cleared first). By default a func with loops or compute_at is
  /// left as it is, and so is every func of an output whose func the client scheduled.
  bool reschedule = false;
  /// May make a loop parallel (only if machine::threads > 1). A parallel loop runs serially when
  /// the eval_config has no thread pool.
  bool parallel = true;
  /// The part of a cache level a loop iteration's working set may fill: the rest is for the
  /// streams of inputs and outputs, the callbacks' own data and what other threads use.
  double cache_fraction = 0.5;
};

/// What the scheduler decided, and the estimates behind it (printable with to_string).
struct schedule_report {
  /// Where a func is computed.
  enum class placement {
    /// Produces a pipeline output; computed at the root, possibly in its own loop.
    output,
    /// Computed inside the loop of the output it feeds (the builder's default placement), sliding
    /// along the loop where windows of consecutive iterations overlap (or, in a data-parallel loop,
    /// loop_decision::recomputes, stored inside it and computing the overlap again).
    in_loop,
    /// Computed at the root (compute_root) on the scheduler's decision.
    root,
    /// Left as the client scheduled it, or not scheduled because its output is left alone.
    left_alone,
  };
  /// What was decided for one func.
  struct func_decision {
    /// The func.
    const func* f = nullptr;
    /// Where it is computed.
    placement where = placement::left_alone;
    /// Why (a constant string).
    const char* why = "";
    /// In a loop: the elements of its region in one iteration (the fold, for a sliding func), and
    /// the dim of its outputs that moves with the loop (-1 if none).
    index_t elements_per_iteration = 0;
    /// The dim of its outputs that moves with the loop (-1 if none).
    int moving_dim = -1;
  };
  /// What was decided for one output, or for a func at the root given a loop of its own.
  struct loop_decision {
    /// The func producing the output, and its output buffer.
    const func* f = nullptr;
    /// True for an output's func; false for a func at the root (left there by its output's loop)
    /// given a loop of its own, computing inside it the funcs that feed only it.
    bool produces_output = true;
    /// False if the output is left without a loop (then the fields below describe nothing).
    bool looped = false;
    /// Why (a constant string).
    const char* why = "";
    /// The loop: over output dim `dim` (variable `var`) in steps of `step`.
    int dim = -1;
    /// The loop's variable.
    var loop_var;
    /// The loop's step.
    index_t step = 0;
    /// True if the loop is parallel.
    bool parallel = false;
    /// True if the loop is parallel and data-parallel although the windows of some funcs in it
    /// overlap from one iteration to the next: those funcs are stored inside the loop and each
    /// iteration computes their whole windows (recomputing the overlap), instead of sliding in a
    /// pipelined loop (docs/threads.md). Their placement is `in_loop`.
    bool recomputes = false;
    /// A tile: the loop above runs inside an outer loop over output dim `outer_dim` (variable
    /// `outer_var`) in steps of `outer_step`, `outer_iterations` strips of the output; the funcs
    /// in the loop are computed in the inner loop, each strip computing its own windows. -1: no
    /// outer loop.
    int outer_dim = -1;
    /// The outer loop's variable.
    var outer_var;
    /// The outer loop's step (0 without one).
    index_t outer_step = 0;
    /// The outer loop's iterations (0 without one).
    index_t outer_iterations = 0;
    /// The outer loop is parallel: its strips run at once on the workers, each with its own
    /// windows (the funcs are stored at the outer loop).
    bool outer_parallel = false;
    /// The loop's iterations for the given shapes (with a tile: in each strip).
    index_t iterations = 0;
    /// The working set of one iteration (intermediates' windows, the windows of the inputs read,
    /// the output chunk), in bytes, and the budget it was fitted to.
    index_t working_set_bytes = 0;
    /// The budget the working set was fitted to, in bytes.
    index_t budget_bytes = 0;
    /// The estimated memory of the intermediates with this loop, in bytes: the windows of those
    /// computed in it (the builder's folds, one per iteration in flight, those sharing storage
    /// within an iteration counted once per block) and the whole regions of those at the root.
    index_t memory_bytes = 0;
    /// Iterations in flight at once: 1 for a serial loop; the threads of a data-parallel loop;
    /// at most one per func in it for a pipelined one.
    int workers = 1;
    /// The cache level the working set is served from (1, 2, 3; 4 for none). The L3 is shared:
    /// the working sets of the iterations a data-parallel loop runs at once must fit it together.
    int level = 0;
    /// Calls of callbacks per evaluation.
    index_t calls = 0;
    /// Estimated time of the output's funcs with this loop and with no schedule, in ns.
    double cost_ns = 0;
    /// The same estimate with no schedule, in ns.
    double unscheduled_cost_ns = 0;
    /// The estimated time of the callbacks' reads of operands they read whole for every row they
    /// compute (a product's right-hand side), beyond the first read and beyond the callbacks' work
    /// they hide behind (a stream the hardware prefetches), with this loop, in ns: not part of the
    /// estimates above (they are alike for a loop over rows and no loop), they decide where a tile
    /// pays (its strips read a strip of the operand, which may fit a cache).
    double reread_cost_ns = 0;
    /// The same reads again with no schedule, in ns.
    double unscheduled_reread_cost_ns = 0;
    /// The steps considered were multiples of this: a func in the loop moves by one element
    /// every `granularity` elements of the loop (it is read in blocks, like packed panels).
    index_t granularity = 1;
    /// The largest multiple of elements per call a func in the loop asked for (func::hints), a
    /// factor of granularity; 1 if none.
    index_t hinted_multiple = 1;
    /// The bytes read whole by every iteration from outside the loop (a reduction's operands),
    /// charged once per evaluation.
    index_t invariant_bytes = 0;
    /// The cost model's next-best candidate for this output, which the measured refinement tries
    /// (auto_pipeline::set_refinement): has_next false if there is none (nothing else was
    /// priced, or the next-best is a data-parallel loop, whose funcs need storage in it, or a
    /// tile); else a loop over dim `next_dim` (variable `next_var`) in steps of `next_step`,
    /// parallel or not, `next_iterations` iterations, steps in multiples of `next_granularity`,
    /// or no loop (`next_dim` -1); estimated `next_cost_ns`. Where the chosen loop is a tile, the
    /// loop (or no loop) the tile beat; where it is a serial loop, the best parallel loop of its
    /// dim where that is priced below any other candidate (a parallel loop must beat the serial one
    /// by a margin to be chosen). Also set for an output left without a loop.
    bool has_next = false;
    /// The next-best loop's dim (-1: no loop).
    int next_dim = -1;
    /// The next-best loop's variable.
    var next_var;
    /// The next-best loop's step, iterations and granularity.
    index_t next_step = 0;
    /// The next-best loop's iterations.
    index_t next_iterations = 0;
    /// The next-best loop's granularity.
    index_t next_granularity = 1;
    /// True if the next-best loop is parallel.
    bool next_parallel = false;
    /// The next-best candidate's estimate, in ns.
    double next_cost_ns = 0;
  };
  /// One per output, then one per func at the root given a loop of its own.
  std::vector<loop_decision> loops;
  /// One per func reachable from the outputs.
  std::vector<func_decision> funcs;

  /// One line per output and per func. The report holds pointers to the funcs: print it while
  /// they exist. ctx names the funcs and variables (optional).
  std::string to_string(const node_context* ctx = nullptr) const;
};

/// Schedules the funcs that produce `outputs` from `inputs` (the graph build_pipeline would
/// build) for the given shapes and machine: for each output, a loop over one of its dims, in
/// steps chosen by the cost model of docs/scheduler.md (or no loop when the cost model prefers
/// none), with the funcs feeding it computed inside the loop where their regions slide or move
/// with it, and at the root otherwise (reductions over the loop's dim, funcs shared by several
/// outputs, bounds the scheduler cannot evaluate). Deterministic: the same graph, shapes, machine
/// and options give the same schedule. Does not build the pipeline. Any machine description is
/// accepted: a negative cache size counts as no such level, threads below 1 as 1, a negative or
/// non-finite time as machine's default, and a cache_fraction that is not in (0, 1] as 0.5 (or 1
/// above 1).
schedule_report schedule(const std::vector<buffer_expr_ptr>& inputs, const std::vector<buffer_expr_ptr>& outputs,
                         const schedule_shapes& shapes, const machine& m = machine::host(),
                         const schedule_options& options = schedule_options());

}  // namespace slinky

#endif  // SLINKY_SCHEDULER_SCHEDULE_H
