/// \file
/// The automatic scheduler's just-in-time entry: a pipeline that schedules and builds itself on
/// the first evaluation of each shape class of its buffers, and caches what it built.
/// docs/scheduler.md describes the shape classes and the cost of a new class.
///
///   auto_pipeline p(ctx, {in}, {out});
///   p.evaluate({&in_buf}, {&out_buf});   // schedules and builds for this class, then runs
///   p.evaluate({&in_buf}, {&out_buf});   // runs the cached pipeline
#ifndef SLINKY_SCHEDULER_AUTO_PIPELINE_H
#define SLINKY_SCHEDULER_AUTO_PIPELINE_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/scheduler/machine.h"
#include "slinky/scheduler/schedule.h"

namespace slinky {

/// Measured refinement of the schedule of each new shape class (off by default): on the first
/// evaluation of a class, after schedule(), the evaluation's own buffers are run through the
/// model's choice and through neighbouring candidates, and the fastest is kept. The neighbours of a
/// candidate: each looped output's step doubled and halved (in multiples of its granularity, the
/// funcs' hints included), a tile's strips doubled (up to one strip) and halved (measured only
/// where none of the other neighbours is faster beyond min_gain), alone and with the inner step
/// halved and doubled (the same area in another shape), the cost model's next-best candidate for
/// the output in place of the model's loop (a loop over another dim, or no loop:
/// schedule_report::loop_decision::has_next; an output the model left without a loop is refined
/// from its next-best loop), and its loop made parallel or serial (with more than one thread, not
/// for a data-parallel loop). The model's choice is schedule()'s for the evaluation's own extents; its
/// choice for the class's largest extents (where larger) and for other prefetch windows (prefetch_windows)
/// are evaluated first; from the fastest of these and the model's choice, a walk: the untried neighbours of the current
/// candidate are evaluated, and the fastest becomes the current one unless slower than it by more than min_gain (so the
/// walk crosses plateaus: a kernel blocked by 4 rows is as slow on 2 rows as on 1; a neighbour that only switches a
/// loop, serial or parallel, pipelined or data-parallel, only where faster), until no neighbour is left or the
/// walk stops; a neighbour slower by less than 4 times min_gain is first timed again with the current candidate,
/// interleaved (the load may have made the difference). With budget left, the step of each loop of the fastest
/// candidate is followed further, one doubling or halving at a time, past the steps tried (a time may rise and fall
/// again along a step; down first, to its end, where the step doubled was timed within 4 times equal_time of the
/// fastest), and the walk goes on from a step faster than that candidate; all until max_evaluations candidates were
/// evaluated. Of the candidates measured within equal_time of the fastest (the model's choice included), the one with
/// the smallest steps is kept (memory when time is equal: a loop's intermediates grow with the part of its dim one
/// iteration covers; no loop covers all of it), a parallel loop's smaller steps counted with the synchronisation their
/// iterations add (cost_model's price of a parallel iteration), and a parallel one only if within equal_time of the
/// fastest in at least half of the interleaved rounds, round by round (below), and steps smaller than the model's
/// choice's only if within min_gain of the fastest (the model sized its steps to the caches: smaller ones save memory
/// they did not need, at the price of more calls). Deterministic for a fixed timer. Not done (the model's choice is
/// kept) where an output's memory overlaps an input's or another output's: evaluating again would read what the
/// previous evaluation wrote.
struct refine_options {
  /// The most candidates evaluated per class beyond the model's choice (0: no refinement).
  int max_evaluations = 0;
  /// Evaluations timed per candidate (the median counts), after one untimed evaluation to warm
  /// up (without an injected timer). A candidate stops being timed after
  /// an evaluation that takes longer than max_slowdown times the model's choice's time: the cost
  /// of a bad candidate is bounded by that factor.
  int repetitions = 3;
  /// The bound above.
  double max_slowdown = 2;
  /// The walk goes on from a neighbour slower than the current candidate by at most this fraction,
  /// and from a step probed beyond the walk that is faster than the fastest by more than it; a
  /// candidate with smaller steps than the model's choice is kept (over the fastest) only if slower
  /// than the fastest by at most this fraction.
  double min_gain = 0.02;
  /// Times within this fraction of the fastest are taken as equal in the choice of what is kept
  /// (the fraction of scheduler_benchmark's memory target: the smallest hand schedule within 5% of
  /// the fastest), widened by an eighth of it for each halving of the steps (the memory) from the
  /// fastest's to the candidate's, up to twice it; a candidate whose parallel loops have more
  /// iterations than the fastest's counts with the synchronisation they add, as the cost model
  /// prices it. The fastest candidate and up to 3 others with smaller steps within 4 times this
  /// fraction of it (first those the walk timed within this fraction of it, the smallest steps
  /// first, then the fastest), and the model's choice where it is not the fastest, whatever the
  /// walk timed it at, are timed again in `repetitions` interleaved rounds
  /// (3 times as many where one has a parallel loop; not counted in max_evaluations), and the
  /// choice is made on those times. Where the candidate chosen has at least 4 times the steps of
  /// the model's choice (it would multiply its memory), they are timed in more rounds, up to 3
  /// times `repetitions`, and the choice is made again on the medians of all of them. Where it or
  /// the fastest has a parallel loop, a candidate is taken as equal only if, with the
  /// synchronisation it adds, it is also within that widened fraction of the fastest's time in the
  /// same round in at least half of those rounds: the pairs cancel most of the load, to which parallel
  /// loops' times are far more sensitive than serial ones'.
  double equal_time = 0.05;
  /// The time in seconds of one evaluation of the candidate named `candidate` (the looped outputs'
  /// funcs with their steps, "out: step 8" or "out: step 8, parallel", joined by "; "), given
  /// `run`, which evaluates it once and returns its wall-clock time. Null: run's, taken again (at
  /// most twice) where a speed probe before or after it shows the core running more than 1.2 times
  /// slower than the fastest probe seen (a core shared with another tenant runs stretches of
  /// milliseconds 1.5 to 2 times slower). Tests inject a table of timings here. A time that is not
  /// a number, infinite or negative counts as infinitely slow; if no candidate gets a finite time,
  /// the model's choice is kept.
  std::function<double(const std::string& candidate, const std::function<double()>& run)> timer;
  /// Prefetch windows (machine::prefetch_bytes) for which the model's choice is computed again:
  /// those choices (their steps and strips on the model's loops) are evaluated first, before the
  /// walk, which starts from the fastest of them and the model's choice (where faster beyond
  /// min_gain). machine::host() measures the window, and the moment decides the measure: the same
  /// 2-core machine measured 1.9 KiB in most processes and 0 to 0.7 KiB in some (other tenants'
  /// load), which moves an elementwise chain's steps from 512 elements to 8192 (1.6x slower
  /// there). Windows equal to the machine's are skipped, and so are choices the same as the
  /// model's; each choice evaluated counts in max_evaluations. Empty: none.
  std::vector<index_t> prefetch_windows = {0, machine::host_prefetch_bytes};
};

/// A pipeline scheduled just in time. On each evaluation it computes the shape class of the
/// buffers given (each extent rounded up to a power of two, and each element size) and the
/// threads its parallel loops can run on (the eval_config's thread_pool's thread_count() + 1, at
/// most machine::threads; 1 without a pool, where parallel loops run serially); the first
/// evaluation of a class schedules the graph with schedule() for the largest shapes of that class
/// (refined: for that evaluation's own extents, on which the refinement measures) and those
/// threads, and builds it with build_pipeline; later evaluations of the class run the pipeline
/// built then.
/// At most `capacity` classes are kept, the least recently used is evicted.
///
/// Thread-safe: evaluations of classes already built run concurrently (a lock is held only to
/// look the class up); scheduling and building a new class are serialized, because they change
/// the funcs' schedules and the node_context. The funcs' schedules are restored after each
/// build, so the graph is left as the client made it. The node_context, the funcs and the
/// buffer_exprs of the graph must outlive this object, and must not be changed or built by
/// anything else while an evaluation may build.
class auto_pipeline {
public:
  /// The scalar arguments of evaluate, as pipeline::scalars.
  using scalars = pipeline::scalars;
  /// The buffer arguments of evaluate, as pipeline::buffers.
  using buffers = pipeline::buffers;

  /// The pipeline of the graph that produces `outputs` from `inputs`, with scalar arguments
  /// `args` (as build_pipeline). Nothing is scheduled or built before the first evaluation.
  /// `build` is given to build_pipeline, `m` and `options` to schedule(); funcs the client
  /// scheduled are kept unless options.reschedule. `capacity` (at least 1) is the number of shape
  /// classes whose pipelines are kept.
  auto_pipeline(node_context& ctx, std::vector<var> args, std::vector<buffer_expr_ptr> inputs,
                std::vector<buffer_expr_ptr> outputs, const build_options& build = build_options(),
                const machine& m = machine::host(), const schedule_options& options = schedule_options(),
                std::size_t capacity = 8);
  /// The same, without scalar arguments.
  auto_pipeline(node_context& ctx, std::vector<buffer_expr_ptr> inputs, std::vector<buffer_expr_ptr> outputs,
                const build_options& build = build_options(), const machine& m = machine::host(),
                const schedule_options& options = schedule_options(), std::size_t capacity = 8);

  /// Not copyable (it owns a cache and locks).
  auto_pipeline(const auto_pipeline&) = delete;
  /// Not assignable.
  auto_pipeline& operator=(const auto_pipeline&) = delete;

  /// Runs the pipeline built for the shape class of these buffers, scheduling and building it
  /// first if that class has none cached. Returns what pipeline::evaluate returns; non-zero,
  /// without building anything, if the numbers of arguments do not match or a buffer is null
  /// (reported to the eval_config's check_failed if there is one, else on stderr).
  ///@{
  index_t evaluate(scalars args, buffers inputs, buffers outputs, eval_context& ctx) const;
  index_t evaluate(scalars args, buffers inputs, buffers outputs) const;
  index_t evaluate(buffers inputs, buffers outputs, eval_context& ctx) const;
  index_t evaluate(buffers inputs, buffers outputs) const;
  ///@}

  /// The pipeline for the shape class of these buffers (scheduled and built if not cached), e.g.
  /// for pipeline::setup; null if the arguments are wrong as for evaluate. It stays valid after
  /// being evicted. Scheduled for the thread pool of ctx's config (see the class), or for
  /// machine::threads without ctx.
  std::shared_ptr<const pipeline> pipeline_for(scalars args, buffers inputs, buffers outputs,
                                               const eval_context* ctx = nullptr) const;

  /// The number of pipelines scheduled and built so far (including evicted ones).
  std::size_t builds() const;
  /// The number of shape classes cached now.
  std::size_t cache_size() const;
  /// The schedule_report of the last schedule, as text with the funcs' names (empty before),
  /// followed by what the refinement measured and kept, if it ran.
  std::string last_report() const;

  /// Refines the schedules of the shape classes built from now on (refine_options). Not
  /// thread-safe: call it before evaluating.
  void set_refinement(refine_options options) { refine_ = std::move(options); }

private:
  struct entry {
    std::vector<index_t> key;
    std::shared_ptr<const pipeline> p;
    std::uint64_t last_use = 0;
  };

  // The threads a parallel loop of an evaluation in `ctx` runs on: its thread pool's, at most
  // the machine's; 1 without a pool; the machine's without a context.
  int workers_for(const eval_context* ctx) const;
  // The shape class of the arguments and the workers of ctx, or false (after reporting) if the
  // arguments are wrong.
  bool shape_class(scalars args, buffers inputs, buffers outputs, const eval_context* ctx,
                   std::vector<index_t>& key) const;
  // The cached pipeline of `key` (marked as used now), or null.
  std::shared_ptr<const pipeline> lookup(const std::vector<index_t>& key) const;
  // Schedules and builds the pipeline of `key`, caches and returns it (serialized). With a
  // refinement, times candidates on these buffers in ctx (a default context if null).
  std::shared_ptr<const pipeline> build(const std::vector<index_t>& key, scalars args, buffers inputs, buffers outputs,
                                        const eval_context* ctx) const;

  node_context& ctx_;
  std::vector<var> args_;
  std::vector<buffer_expr_ptr> inputs_;
  std::vector<buffer_expr_ptr> outputs_;
  build_options build_options_;
  machine machine_;
  schedule_options schedule_options_;
  std::size_t capacity_;
  refine_options refine_;

  // Guards entries_, clock_, builds_ and report_; held only briefly.
  mutable std::mutex cache_mutex_;
  mutable std::vector<entry> entries_;
  mutable std::uint64_t clock_ = 0;
  mutable std::size_t builds_ = 0;
  mutable std::string report_;
  // Serializes scheduling and building.
  mutable std::mutex build_mutex_;
};

}  // namespace slinky

#endif  // SLINKY_SCHEDULER_AUTO_PIPELINE_H
