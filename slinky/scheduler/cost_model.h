// The scheduler's cost model (internal): what it prices, as counts (bytes moved at each cache
// level, calls, the callbacks' work), and how, as nanoseconds. The analysis (loop_analysis.h)
// counts; this turns counts into time and decides which cache level a working set is served
// from. Every constant and rate of the model is here, documented where it is defined.
// docs/scheduler.md, "The cost model".
#ifndef SLINKY_SCHEDULER_COST_MODEL_H
#define SLINKY_SCHEDULER_COST_MODEL_H

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "slinky/scheduler/machine.h"

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
  // The value at `step`, for probes at S = s and 2S; never negative.
  double operator()(double step, double s) const;
};

// The cache levels: 0 (L1), 1 (L2), 2 (L3), 3 (main memory).
constexpr int memory_level = 3;

// Bytes read from a buffer, and the level they are served from (the first whose budget holds the
// whole buffer).
struct read_counts {
  double bytes = 0;
  int level = memory_level;
};

// Bytes moved in each iteration of a loop, as a function of the step, from the level their
// whole buffer is in.
struct level_bytes {
  linear_in_step bytes;
  int level = memory_level;
  // Each iteration's bytes continue the previous iteration's in memory (a window moving along its
  // buffer's outermost dim, its inner dims whole: not a strip of a tile), so that the hardware
  // prefetcher, running along the stream, fetches the start of the next iteration's
  // (cost_model::prefetched_ns). A strip's rows, or a column's, start anew in each iteration.
  bool continuing = false;
};

// The callback's own work in each iteration of a loop: the points a func computes, as a function
// of the step, and the bytes of one point's footprint (cost_model::work_ns).
struct work_counts {
  linear_in_step points;
  double footprint_bytes = 0;
  // The func's hinted cost per point (func::cost_hints::ns_per_point), negative if none.
  double hinted_point_ns = -1;
  // A copy the runtime runs element by element (sched_node::strided_copy).
  bool strided_copy = false;
};

// What a func does computed whole at the root, once per evaluation.
struct root_counts {
  // Its whole region (all outputs), written once and read by each consumer at the root, at the
  // level it fits in.
  double region_bytes = 0;
  int region_level = memory_level;
  // What it reads from outside its group, input by input.
  std::vector<read_counts> reads;
  // Its points and the bytes of one point's footprint (its work, cost_model::work_ns).
  double points = 0;
  double footprint_bytes = 0;
  // Its hinted costs (func::cost_hints): per point (negative if none) and per call (0 if none).
  double hinted_point_ns = -1;
  double hinted_call_ns = 0;
  // A copy the runtime runs element by element (sched_node::strided_copy).
  bool strided_copy = false;
  // Its region is an intermediate allocated on every evaluation (not an output's).
  bool allocated = false;
  // A copy the builder makes a view of its source at the root (sched_node::view_of_source): it
  // costs only its consumers' reads of its region, from the level its source fits in.
  bool view = false;
  int view_level = memory_level;
  // The operands it reads whole for each row of its region (loop_counts::rereads): the bytes read
  // beyond the first read, from the level their window fits in.
  std::vector<read_counts> rereads;
};

// A func at the root in a loop's (or no loop's) estimate: what it does, and how many of its
// consumers read its whole region at the root too (the others read windows of it in the loop).
struct root_term {
  const root_counts* counts = nullptr;
  int root_consumers = 0;
  // A copy the builder removes (sched_node::writes_into_copy) with its producer, both at the root:
  // the copy (`removed_copy`) neither writes its region nor works, its consumers still read it;
  // the producer (`into_copy`, root_consumers 0) writes into the copy's region and allocates
  // nothing.
  bool removed_copy = false;
  bool into_copy = false;
};

// What one iteration of a loop touches, as functions of the step. The working set of an
// iteration is moving_bytes plus the invariant windows where they fit (cost_model::loop).
struct loop_counts {
  // The loop's extent, and the step S of the probes the linear quantities were measured at.
  index_t extent = 0;
  double probe_step = 1;
  // One iteration's working set: the windows of the intermediates computed in the loop (their
  // folds), of the buffers read from outside the loop that move with it, and the output's chunk.
  linear_in_step fold, external_window, output_chunk;
  // The bytes one iteration's shift adds to the windows of the funcs that slide: a pipelined
  // parallel loop with K iterations in flight holds K - 1 more of them.
  linear_in_step sliding_shift_bytes;
  // The windows read whole by every iteration from outside the loop (the same box each time: the
  // operands of a reduction, like b and c in (a x b) x c looped over rows), in bytes. A callback
  // reading a whole operand for each of its output rows reads it that many times whatever the
  // schedule, so their reads are charged once per evaluation (invariant_reads), as for no loop. They
  // count in the working set of a cache level they fit in alone (the callbacks re-read them from
  // there, and a loop's windows must leave them room), not in that of a smaller level (they
  // stream from a larger one whatever the step).
  double invariant_bytes = 0;
  // Bytes written and read per iteration in the buffers computed in the loop: served from the
  // level the working set is in.
  linear_in_step internal_bytes;
  // Bytes of the external windows already read by earlier iterations: from the working set's level
  // in a serial loop; from the levels their whole buffers are in (external_cached) in a parallel
  // loop, whose previous iteration ran on another core.
  linear_in_step external_cached_bytes;
  std::vector<level_bytes> external_cached;
  // The new part of each external window, and the output chunk, from the levels their whole
  // buffers are in.
  std::vector<level_bytes> streamed;
  // The bytes of the windows of the funcs that slide that earlier iterations computed (each window
  // less its new part): in a pipelined parallel loop the previous iteration ran on another core,
  // and its consumers read these from that core's cache.
  linear_in_step overlap_bytes;
  // The work of each func in the loop: the same for every step of a loop whose funcs slide,
  // larger for smaller steps where the overlaps are recomputed.
  std::vector<work_counts> work;
  // The funcs at the root, and the invariant windows' reads (once per evaluation, at the levels
  // of their whole buffers).
  std::vector<root_term> roots;
  std::vector<read_counts> invariant_reads;
  // The invariant windows that the callbacks read again row by row (a row: a run along the
  // reading func's output dim 0; sched_node::row_window_share): the operand b of a product c =
  // a x b, whose window is the same for every row of c, or one block of it per row where the
  // product's reduction is split in blocks. Per iteration, the bytes the rows read (`bytes`),
  // from the level one row's part of the window fits in (`level`); beyond the window's first
  // read, these reads are the same for a loop over rows and for no loop (each row reads its part),
  // and they are charged apart from the estimate (loop_estimate::reread_ns, cost_model::rereads_ns):
  // they decide between a tile, whose strips read a strip of the operand that may fit a cache, and
  // the rest. Where the whole window (`window` bytes) fits only a farther level than one row's
  // part (`window_level`: b's 6.5 MB beyond the L2, its blocks of 800 KB in it), each iteration
  // after the first reads it from there once, in the estimate (loop_prices::refetch_ns): that
  // part grows with the iterations.
  struct reread {
    linear_in_step bytes;
    double window = 0;
    int level = memory_level;
    int window_level = memory_level;
  };
  std::vector<reread> rereads;
  // The invariant windows not read row by row: every iteration reads each of them whole (what the
  // callbacks read of them within an iteration is their work, at L1's rate), each iteration after
  // the first from the level it fits in alone (loop_prices::refetch_ns): the operand a of a
  // product split in blocks of its reduction, looped over the columns of b.
  std::vector<read_counts> refetched;
  int calls_per_iteration = 0;
  // The hinted costs per call of the funcs in the loop (func::cost_hints::ns_per_call), summed:
  // charged once per iteration beside the calls' overhead.
  double hinted_call_ns = 0;
  // The buffers one iteration streams through: those computed in the loop and the windows read
  // from outside that move with it (not those read whole by every iteration).
  int buffers = 0;
  // The funcs in the loop that slide (a parallel loop over them is pipelined).
  int sliding = 0;
  // The bytes of the intermediates computed at the root, allocated whole on every evaluation.
  double root_bytes = 0;
  // Storage shared within an iteration (docs/builder.md): where the loop is not pipelined, the
  // builder gives an intermediate in the loop that does not slide the memory of an earlier one of
  // the same size whose users are all done before it is computed, so a chain of K funcs in chunks
  // stores two blocks, not K - 1. The bytes of the folds this saves, and the buffers it saves an
  // iteration from streaming through (fold and buffers count every intermediate).
  linear_in_step shared_bytes;
  int shared_buffers = 0;

  // Whether a loop with `workers` iterations in flight is pipelined: parallel, with funcs that
  // slide (their storage is shared by the workers, and none of it is shared within an iteration).
  bool pipelined(int workers) const { return workers > 1 && sliding > 0; }
  // The intermediates' windows stored for the loop, with `workers` iterations in flight: the folds
  // less what storage shared within an iteration saves, and the extra shifts of the sliding funcs.
  double folds(double step, int workers) const;
  // The buffers one iteration streams through, with storage shared within an iteration.
  int streamed_buffers(int workers) const { return buffers - (pipelined(workers) ? 0 : shared_buffers); }
  // One iteration's working set without the windows read whole, with `workers` iterations in
  // flight: the folds, the moving external windows, the output's chunk.
  double moving_bytes(double step, int workers) const;
  // The windows read whole as a working set fitted to `budget` counts them: where they fit alone.
  double invariant_within(double budget) const { return invariant_bytes <= budget ? invariant_bytes : 0; }
  // The intermediates' memory with this loop, in bytes: the folds of those in the loop (with
  // `workers` iterations in flight, the extra shifts of the sliding ones, or a copy per worker
  // where none slides) and the whole regions of those at the root. (All counted at once: an
  // upper bound of the peak, the same for every step but for the folds.)
  double memory_bytes(double step, int workers) const;
};

// The parts of a loop's estimate that do not depend on the workers, priced once per analysis
// (cost_model::price), in ns: linear in the step, or once per evaluation.
struct loop_prices {
  linear_in_step streamed_ns, external_cached_ns, work_ns;
  double roots_ns = 0, invariant_ns = 0;
  // The rereads of the funcs at the root (root_counts::rereads), once per evaluation, and the
  // deepest level they are served from (-1 if none).
  double roots_reread_ns = 0;
  int roots_reread_level = -1;
  // What each iteration after the first pays to read again the windows of loop_counts::rereads
  // that fit only a farther level than one row's part of them, beyond that part's level's rate.
  double refetch_ns = 0;
};

// The estimate of a loop at one step.
struct loop_estimate {
  // The time of the group with the loop, in ns.
  double ns = 0;
  // The working set of one iteration, in bytes, and the level it is served from (the L3 holds the
  // working sets of all the workers of a data-parallel loop).
  double working_set = 0;
  int level = memory_level;
  // The intermediates' memory (loop_counts::memory_bytes), in bytes.
  double memory = 0;
  // The time of the rereads of operands read whole for each row (loop_counts::rereads and
  // root_counts::rereads), in ns, not part of ns; the deepest level they are served from (-1 if
  // there are none).
  double reread_ns = 0;
  int reread_level = -1;
  // The part of memory's time the estimate takes off as hidden by the prefetcher
  // (cost_model::prefetched_ns, over all the iterations), in ns: ns + prefetched_ns is the loop's
  // time with every byte from memory paid.
  double prefetched_ns = 0;
};

// Counts to nanoseconds, for one machine description and the part of each cache level a working
// set may fill.
class cost_model {
public:
  // Any description is accepted: a negative cache size counts as no such level (sizes above 2^50
  // as 2^50), threads below 1 as 1, a negative or non-finite time (call overhead, per-byte cost,
  // page touch) as machine's default, and a cache_fraction that is not in (0, 1] as 0.5 (or 1
  // above 1).
  cost_model(const machine& m, double cache_fraction);

  // The machine description, made usable as above.
  const machine& target() const { return m_; }
  double cache_fraction() const { return fraction_; }
  // The capacity of cache level l (0 to 2) in bytes, 0 if there is no such level, and the part of
  // it a working set may fill (the rest is for the streams of inputs and outputs, the callbacks'
  // own data and what other threads use).
  index_t capacity(int level) const;
  double budget(int level) const { return fraction_ * static_cast<double>(capacity(level)); }
  // The L3's budget for the working set of a parallel loop on `workers` threads: their share of it
  // (l3_bytes_per_thread each), at most budget(2).
  double l3_share_budget(int workers) const {
    const double l3 = static_cast<double>(capacity(2));
    return l3 > 0 ? budget(2) * std::min(1.0, static_cast<double>(workers) * l3_bytes_per_thread / l3) : 0;
  }
  // The first level whose budget holds `bytes` (memory_level if none).
  int level_of(double bytes) const;
  // The first touch of the pages of a block of `bytes` allocated on every evaluation, if the
  // allocator hands such blocks out as fresh pages (machine::fresh_block_bytes: for the folds of a
  // loop, their sum stands for the largest).
  double page_ns(double block_bytes) const;

  // The time of a func computed whole at the root, with root_consumers of its consumers reading
  // its region at the root too (and the term's copy flags).
  double root_ns(const root_term& r) const;
  // The callback's own work in root_ns (none for a removed copy).
  double root_work_ns(const root_term& r) const;
  // The time of funcs at the root, summed in order.
  double roots_ns(const std::vector<root_term>& roots) const;
  // Rereads (loop_counts::rereads, root_counts::rereads) are an operand read again in order for
  // every row, a stream the hardware prefetches while the callbacks compute: only their time
  // beyond the work of the callbacks that read them is charged (a func at the root: its own work;
  // a loop: the work of all the funcs in it). Measured on the AMD EPYC of family 25 (L2 of 1 MiB,
  // L3 at 0.016 ns per byte): the register-blocked product of two products into one output (b of
  // 1 MiB read whole for every row) took 2.58 ms in full rows and 2.56 in strips of 512 columns
  // whose part of b fits the L2, the matrix product whose b (8 MiB) exceeds the L2 65-73 ms in
  // full rows, panels and tiles alike, where the rereads summed with the work priced full rows
  // 1.7 times the tiles (scheduler_measurements.md, twenty-sixth session). The model's
  // work of a product (its footprint at L1's rate) is a third of what the callbacks take, so
  // without a hinted cost per point (func::cost_hints::ns_per_point) most rereads beyond the L2
  // still count.
  // The time of the rereads of funcs at the root (root_counts::rereads) beyond their work, and
  // the deepest level they are served from (into `level`, which is not lowered).
  double roots_reread_ns(const std::vector<root_term>& roots, int& level) const;
  // The time of a loop's rereads (loop_counts::rereads) in steps of `step`: every row's read of
  // the window but the first of the evaluation (which invariant_reads charges); loop() takes off
  // the part hidden behind the work.
  double rereads_ns(const loop_counts& c, index_t step) const;
  // The time per iteration of a loop in steps of `step` that the streams from memory
  // (loop_counts::streamed at memory_level, continuing) spend within the hardware prefetcher's
  // reach, hidden behind the iteration's other work: at most that work, the iteration's time
  // `iteration_ns` less the streams' own. Of a stream's chunk of b bytes, with W the machine's
  // prefetch_bytes: all of it up to W, then (4W - b) / 3, none from 4W on. Measured on the 2-core
  // development machine (a chain of 4 elementwise passes over two streams in memory and
  // intermediates in L1, chunks of 1, 2, 4, 8 and 16 KiB per buffer): 95, 90, 79, 29 and 0% of
  // the streams' time hidden; the model's estimates of chunks of 16 KiB and more, which hide
  // nothing, were within 2% of their times. 0 where prefetch_bytes is 0.
  double prefetched_ns(const loop_counts& c, double step, double iteration_ns) const;
  // The law prefetched_ns applies to each chunk of `chunk_bytes` of a continuing stream from
  // memory, with a window of `window` bytes (machine::prefetch_bytes): the bytes it hides.
  static double prefetch_hidden_bytes(double chunk_bytes, double window) {
    return chunk_bytes <= window ? chunk_bytes : std::max(0.0, (4 * window - chunk_bytes) / 3);
  }
  // Its inverse, for measure_prefetch_bytes: the window with which chunks of `chunk_bytes` stall
  // for a fraction `stall` in (0, 1] of their streams' time from memory (1 - hidden / chunk):
  // (4 - 3 stall) chunk / 4, from a quarter of the chunk (stall 1: nothing hidden) to the chunk.
  static double prefetch_window(double chunk_bytes, double stall) { return (4 - 3 * stall) * chunk_bytes / 4; }
  // The parts of a loop's time priced once (loop_prices).
  loop_prices price(const loop_counts& c) const;
  // The time of a group with a loop in steps of `step`, with `workers` iterations in flight (1:
  // serial; pipelined if some func slides, else data-parallel), its working set and level; p is
  // price(c).
  loop_estimate loop(const loop_counts& c, const loop_prices& p, index_t step, int workers) const;
  loop_estimate loop(const loop_counts& c, index_t step, int workers) const { return loop(c, price(c), step, workers); }

  // The cost of starting and joining a parallel loop (enqueue, wake the workers, wait). Not
  // measured yet.
  static constexpr double fork_join_ns = 5000;
  // The share of the ideal speed-up a parallel loop reaches, pipelined or data-parallel: measured
  // alike on 2 workers once the pipelined loop's hand-offs (the overlap its iterations read from
  // the core that computed it) are priced apart. scheduler_benchmark --sweep measures the
  // stencil chains of 4096 x 4096 in strips of 32 to 64 rows, 5.5 to 6.1 ms (2 stages) and 9.2 to
  // 10.2 ms (3 stages) either way, against 10.3 and 17.1 to 18.4 ms serially.
  static constexpr double parallel_efficiency = 0.9;
  // The cost of one iteration of a parallel loop beyond its calls: handing it to a worker (atomics
  // and cache lines moving between cores) and allocating the buffers of its funcs, which a
  // parallel loop cannot hoist out of its iterations. An estimate from the chain into a parallel
  // reduction (scheduler_benchmark): 256 iterations on 2 workers took 0.10 to 0.15 ms
  // longer than 32, about 1 us of CPU time per iteration, where its 3 calls cost 0.07 us. (The
  // 3-stage data-parallel stencil in strips of 4 and 8 rows took 2 to 4 us per iteration more
  // than estimated: the term is a floor.) The hand-off alone is far less
  // (apps/parallel_iteration_benchmark, AMD EPYC of family 25: 180 to 280 ns with its 3 calls,
  // about as much where the callbacks run long), but the term also stands for what the model does
  // not price in small parallel iterations: at 130 ns it moved the 2-stage parallel stencil from
  // strips of 32 rows to 8, data-parallel, which scheduler_benchmark's rounds timed 6% slower
  // (scheduler_measurements.md, twenty-third session).
  static constexpr double parallel_iteration_ns = 1000;
  // The time per byte of the overlap a pipelined iteration reads from the core that computed it,
  // as a multiple of memory's: lines held modified in another core's cache move one by one
  // through the coherence protocol, no prefetcher streams them. Measured on the 2-core
  // development machine (stencil chains of 4096 x 4096 pipelined in strips of 2 to 8 rows): each
  // iteration took 1.6 us (2 stages: 32 KiB of overlap) and 4.5 us (3 stages: 64 KiB) more than
  // the model without hand-offs, 0.05 to 0.07 ns per byte beyond the L2's rate, where memory
  // streams at 0.035.
  static constexpr double handoff_memory_ratio = 2;
  // The share of the overlap of a serial loop's windows with the previous iteration's (the rows
  // of a stencil's input the next iteration reads again: overlap_bytes for the funcs that slide,
  // external_cached_bytes for the buffers read from outside) whose reads hide behind the
  // callbacks' work where the working set is in L1 or L2: they come from a near cache in short
  // streams the hardware prefetches while the callbacks compute, where the model otherwise adds
  // every byte's time to the work's. (Not beyond: from the L3 or memory they stall.) On the
  // Xeon of the eighteenth and nineteenth sessions (L1 48 KiB, L2 2 MiB per core), the 2-stage
  // 3x3 stencil on 4096 x 4096 floats ran single rows as fast as blocks of 8 (18.3 and 18.0 ms:
  // scheduler_benchmark --cpu-time --only stencil), its uint16 version 12% faster, where the
  // model charging the whole overlap priced single rows 7% and 8% slower; on the AMD development
  // machine blocks of 4 rows ran 4-5% slower than 8. With three quarters hidden, the stencils
  // take blocks of 2 to 4 rows on both machines' descriptions (docs/scheduler_measurements.md,
  // nineteenth session).
  static constexpr double overlap_hidden = 0.75;
  // The size of a page first touched in a fresh block (page_touch_ns is per page).
  static constexpr double page_bytes = 4096;
  // Time taken as equal: of the steps of a serial loop priced within this fraction of the
  // cheapest, the search takes the one with the least memory. The model underprices small steps
  // (the callbacks' own cost per call and the runtime's per iteration are more than the calibrated
  // call overhead), so the fraction is small: on the 2-core development machine
  // (scheduler_benchmark --cpu-time, hand steps of every power of two), the elementwise chain of 8
  // funcs in chunks of 4096, priced 1.4% above the L2 budget's 14336, took 7-11% longer than
  // chunks of 16384; in chunks of 8192 (0.4% above) 1-4% longer; the 2-stage stencil in strips of
  // 4 rows, priced 1.5% above 8, took 4-5% longer. At 3% both took those smaller steps.
  static constexpr double step_cost_tolerance = 0.01;
  // The share of the L3 a thread of a parallel loop counts on (a parallel step's working set
  // beyond the threads' share is not a candidate): the L3 of a many-core part is shared by its
  // cores and, on a virtual machine, by other tenants; 4 MiB per core is the most current server
  // parts give (AMD EPYC of Zen 3 and 4: 32 MiB per 8 cores; Intel Xeon: 1.4 to 2 MiB per core).
  // On the 2-core AMD EPYC of family 25 (an L3 of 32 MiB, a budget of 16), the 3-stage stencil on
  // 4096 x 4096 floats pipelined in strips of 128 rows (8.1 MiB of memory, the L3 budget's largest
  // power of two), priced 3% below strips of 32 (2.1 MiB), ran 0.94 to 1.1 of their time in three
  // full runs of scheduler_benchmark (scheduler_measurements.md, twenty-first session); on the
  // development machine (an L3 of 8 MiB) the steps stop at 32 anyway.
  static constexpr double l3_bytes_per_thread = 4 * 1024 * 1024;
  // A parallel loop is taken only if it is estimated at most this fraction of the serial loop's
  // time: the model does not see memory bandwidth shared by the cores. Both are priced with every
  // byte from memory paid (loop_estimate::prefetched_ns added back: scheduler::best_loop).
  static constexpr double parallel_gain = 0.8;
  // A tile is taken only if it is estimated at most this fraction of the best loop's time: the
  // model prices bytes, not the shorter rows a strip cuts the output's into (shorter loops in the
  // callbacks, partial cache lines at the strips' edges).
  static constexpr double tile_gain = 0.9;
  // The narrowest strip of a tile, in elements of its dim: narrower strips make rows too short
  // for the callbacks' vector loops, which the model does not price.
  static constexpr index_t min_strip = 32;

  // The callbacks' own work, from the bytes of their footprints: each point reads every element
  // of its inputs' regions for that point (9 for a 3x3 stencil, a row and a column for a matrix
  // product) and writes its outputs' elements, at L1's rate (a simple streaming loop's: high for
  // vectorized kernels, but the same for every schedule where nothing is recomputed).
  double work_ns(double footprint_bytes) const { return footprint_bytes * m_.ns_per_byte[0]; }
  // A point's work: the func's hinted cost per point where it gave one (func::cost_hints), else,
  // for a copy the runtime runs element by element, strided_copy_element_ns, else work_ns of its
  // footprint.
  double point_ns(double footprint_bytes, double hinted_point_ns, bool strided_copy = false) const {
    if (hinted_point_ns >= 0) return hinted_point_ns;
    return strided_copy ? std::max(strided_copy_element_ns, work_ns(footprint_bytes)) : work_ns(footprint_bytes);
  }
  // The runtime's copy (docs/copies.md, "Running a copy") moves runs contiguous in source and
  // destination with memcpy, at about the rate of a streaming callback (work_ns of 2 elements a
  // point). Where the runs are shorter than a cache line (contiguous_run_bytes), or the source
  // does not advance along the destination's dim 0 by one element, it copies element by element
  // through strides: measured on the 2-core development machine (slinky::copy of views in L1 and
  // L2, `-O2`), 0.38 to 0.42 ns per float for a transpose of 64x64 to 256x256, 0.32 to 0.35 for a
  // downsampling by 2, 0.37 to 0.54 for the pooling's gather of 3x3 windows in steps of 2 (rows of
  // 255 to 2047 windows), against 0.08 to 0.10 for contiguous rows. A copy's point so priced
  // includes its loads and stores; the bytes it moves between cache levels are priced apart, like
  // every func's.
  static constexpr double strided_copy_element_ns = 0.35;
  static constexpr double contiguous_run_bytes = 64;

private:
  machine m_;
  double fraction_;
};

// One estimate of measure_prefetch_bytes: the window its runs gave (cost_model::prefetch_window),
// and the time of its slowest round of runs with the streams in cache, which tells the machine's
// speed at that moment.
struct prefetch_estimate {
  double window = 0;
  double cached_ns = 0;
};

// measure_prefetch_bytes's reading of its estimates: the median of the settled ones, those whose
// runs in cache took at most settled_speed times the fastest's (the smaller of the middle two of
// an even count); `settled` gets their count. On the 2-core AMD EPYC of family 25 (twenty-second
// session), a process runs stretches of 1 to 55 ms (and some of seconds) 1.6 to 2 times slower
// throughout (an L1 loop as much as the runs in cache: the core shared with another tenant), and
// estimates taken there give 0 to 750 bytes where the settled ones give 1.8 to 2 KiB. There the
// prefetcher hides nothing (a chain of 4 elementwise passes over 256 MiB: chunks of 1, 2 and 16
// KiB alike, where the usual state runs the first two 1.6 to 1.7 times faster), but the schedule
// is for the usual state.
double settled_prefetch_window(const std::vector<prefetch_estimate>& estimates, int& settled);
constexpr double settled_speed = 1.2;

// The smallest window machine::host() takes as measured (usual_prefetch_bytes): three quarters of
// machine::host_prefetch_bytes. The usual speed of the 2-core AMD EPYC of family 25 gives 1.8 to
// 2.05 KiB; its slow stretches 0 to 1 KiB; a 2-core Xeon VM 0.65 to 1.1 KiB.
constexpr index_t least_usual_prefetch_bytes = machine::host_prefetch_bytes * 3 / 4;

// measure_prefetch_bytes's rule for when it has estimates enough, after `made` estimates (those
// whose flush reached memory in `estimates`) taken over `elapsed_ms`: at least three made, then
// when none reached memory, or three are settled and give at least least_usual_prefetch_bytes;
// where they give less, only once prefetch_low_span_ms has passed (a slow stretch may cover the
// first milliseconds: the estimates after it unsettle those before); at prefetch_span_ms in any
// case. A process of the AMD EPYC runs its first 5 to 330 ms 1.6 to 2 times slower in about a
// third of the processes started one after another (twenty-fourth session): waiting those out
// would cost a machine whose window is small every time; usual_prefetch_bytes takes what a stretch
// that outlasts the wait leaves.
bool prefetch_estimates_done(const std::vector<prefetch_estimate>& estimates, int made, double elapsed_ms);
constexpr double prefetch_low_span_ms = 30;
constexpr double prefetch_span_ms = 40;

// machine::host()'s prefetch_bytes from measure_prefetch_bytes's `measured`: that window where it
// is at least least_usual_prefetch_bytes, else machine::host_prefetch_bytes. A smaller window comes
// from a slow stretch that outlasted the measurement (where the prefetcher hides nothing, and chunks
// of every size stream alike) or from a prefetcher that reaches less far (the Xeon), and its
// choices were no faster than the default's on either machine, with up to 16 times the memory: the
// elementwise chains in chunks of 8192 or 16384 against 512, 1.4 to 1.6 times slower at the AMD's
// usual speed (docs/scheduler_measurements.md, twenty-first session), as fast on the Xeon
// (eighteenth). The window is a discount on memory's time that favours small steps: too small a
// discount costs memory, and time where the prefetcher does reach.
index_t usual_prefetch_bytes(index_t measured);

// How fast the core runs at this moment: the time in ns of the fastest of three short runs of a
// streaming loop over 8 KiB in L1 (under a microsecond each on the 2-core machines). A core shared
// with another tenant runs it 1.6 to 2 times slower in those stretches (a chain of dependent
// multiplies keeps its time: the other hardware thread, not the clock); the refinement compares
// it, before and after each evaluation, to the fastest it saw (settled_speed). Thread-safe.
double speed_probe_ns();
// The fastest speed_probe_ns of this process so far (infinity before the first); machine::host()'s
// calibration takes one with each of measure_prefetch_bytes's estimates.
double fastest_speed_probe_ns();

// The speed against which the refinement judges its timings (settled_time): the fastest speed
// probe seen (-1 before the first timing), and the timings taken again.
struct speed_reference {
  double fastest = -1;
  int retimed = 0;
};

// One evaluation timed while the core ran at the reference speed: `run` (which evaluates and
// returns its time) between two calls of `probe` (speed_probe_ns), taken as settled where the
// slower of the two is within settled_speed of ref.fastest (which starts from `process_fastest`,
// fastest_speed_probe_ns, and takes every probe's time). Else it ran in a stretch where the core
// was slower: once the probes show the speed back (at most `max_wait` of probes), it is timed
// again, at most twice; still slower after that, that speed becomes the reference (a clock
// lowered for good must not make every evaluation three). Returns run's last time.
double settled_time(const std::function<double()>& run, const std::function<double()>& probe, double process_fastest,
                    std::chrono::nanoseconds max_wait, speed_reference& ref);

}  // namespace scheduler_internal
}  // namespace slinky

#endif  // SLINKY_SCHEDULER_COST_MODEL_H
