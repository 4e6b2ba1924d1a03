// The scheduler's search: for a group of funcs, the candidate loops (a dim of the head, a step,
// serial or parallel) and the cheapest of them by the cost model (docs/scheduler.md, "Steps"
// and "Which dim").
#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>

#include "slinky/base/assert.h"
#include "slinky/scheduler/scheduler.h"

namespace slinky {
namespace scheduler_internal {

namespace {

// The largest step whose working set (with `workers` iterations in flight) fits in `budget`
// bytes, rounded down to 3 significant bits and to a multiple of the analysis's granularity (where
// it is at least that), at most max_step; 0 if even a step of 1 does not fit.
index_t largest_step_within(const loop_analysis& a, double budget, int workers, index_t max_step) {
  const loop_counts& c = a.counts;
  const double S = c.probe_step;
  const double invariant = c.invariant_within(budget);
  auto ws = [&](double st) { return c.moving_bytes(st, workers) + invariant; };
  if (ws(1) > budget) return 0;
  // The working set is linear in the step: solve ws(step) <= budget.
  const double slope = ws(S + 1) - ws(S);
  index_t step = max_step;
  if (slope > 0) {
    const double s = 1 + (budget - ws(1)) / slope;
    if (s < static_cast<double>(max_step)) step = std::max<index_t>(1, static_cast<index_t>(s));
  }
  // Keep 3 significant bits: steps like 14336 rather than 14563 keep chunks aligned.
  index_t bits = 0;
  while ((step >> bits) >= 8) ++bits;
  step = (step >> bits) << bits;
  while (step > 1 && ws(static_cast<double>(step)) > budget) --step;
  const index_t g = a.granularity;
  if (step >= g) step -= step % g;
  return std::max<index_t>(1, step);
}

// `step` made a multiple of the analysis's granularity: rounded down, or up to the granularity
// itself (both at most max_step).
index_t aligned_step(const loop_analysis& a, index_t step, index_t max_step) {
  const index_t g = a.granularity;
  step = step >= g ? step - step % g : g;
  return std::max<index_t>(1, std::min(step, max_step));
}

// A step and its estimate.
struct priced {
  index_t step;
  loop_estimate e;
};

// The step to take of the n priced ones with `workers` iterations in flight; sets `cheapest` to
// the cheapest estimate. Memory when time is equal: of the steps of a serial loop priced within
// cost_model::step_cost_tolerance of the cheapest, the one with the least memory, then the
// smallest working set (more room in the caches for what the model does not see), then the larger
// step. Not for a parallel loop: its smaller steps cost more than the model sees (more iterations
// handed out, chunks of 16384 of the parallel chain of 4 took 0.89-0.94 of the time of 24576's at
// 3% more estimated).
const priced& pick(const priced* steps, int n, int workers, double& cheapest) {
  cheapest = steps[0].e.ns;
  for (int i = 1; i < n; ++i) cheapest = std::min(cheapest, steps[i].e.ns);
  const double limit = cheapest * (1 + (workers == 1 ? cost_model::step_cost_tolerance : 0));
  const priced* best = nullptr;
  for (int i = 0; i < n; ++i) {
    const priced& p = steps[i];
    if (p.e.ns > limit) continue;
    if (!best || p.e.memory < best->e.memory ||
        (p.e.memory == best->e.memory &&
         (p.e.working_set < best->e.working_set || (p.e.working_set == best->e.working_set && p.step > best->step)))) {
      best = &p;
    }
  }
  return *best;
}

}  // namespace

// The candidates: 1 and the largest steps fitting the L1 and L2 budgets, each a multiple of the
// granularity; the L3 budget is considered only when not even a step of 1 fits L2. L2 is the
// core's own; L3 is shared with the other cores and processes, and the model's figures for it
// are the least reliable. A parallel loop also prices the powers of two up to max_step. Of these,
// pick's.
candidate scheduler::best_step(const loop_analysis& a, int workers, index_t max_step) const {
  const loop_prices prices = model_.price(a.counts);
  // At most 1 + 2 per level + one per power of two.
  priced steps[72];
  int n = 0;
  // Prices `step` (once) and returns its price (null where the table is full).
  auto consider = [&](index_t step) -> const priced* {
    for (int i = 0; i < n; ++i) {
      if (steps[i].step == step) return &steps[i];
    }
    if (n == static_cast<int>(std::size(steps))) return nullptr;
    steps[n++] = {step, model_.loop(a.counts, prices, step, workers)};
    return &steps[n - 1];
  };
  consider(aligned_step(a, 1, max_step));
  bool fits_l2 = false;
  for (int level = 0; level < memory_level; ++level) {
    if (model_.capacity(level) <= 0 || (level == 2 && fits_l2)) continue;
    double budget = model_.budget(level);
    // The workers of a data-parallel loop share the L3, each with its own working set.
    if (level == 2 && workers > 1 && a.counts.sliding == 0) budget /= workers;
    index_t step = largest_step_within(a, budget, workers, max_step);
    if (step == 0) continue;
    // L1's step along dim 0 is a power of two: chunks of a page or less that are not one run
    // slower than both powers of two around them (the elementwise chains in chunks of 768 and
    // 1536 against 512 and 1024: docs/scheduler_measurements.md).
    if (level == 0 && a.dim == 0) step = floor_power_of_two(step);
    consider(aligned_step(a, step, max_step));
    // A parallel loop also tries the power of two below: with a power-of-two extent its
    // iterations are then all whole and spread evenly over the workers.
    if (workers > 1) {
      const index_t p = floor_power_of_two(step);
      if (p != step) consider(aligned_step(a, p, max_step));
    }
    fits_l2 = true;
  }
  // A serial loop also prices the powers of two below its largest step: pick takes the one with
  // the least memory of those priced about as fast (an elementwise chain of 8 funcs in chunks of
  // 4096 rather than the L2 budget's 14336, at 1.7% more estimated: a quarter of the memory).
  if (workers == 1) {
    index_t largest = 1;
    for (int i = 0; i < n; ++i) largest = std::max(largest, steps[i].step);
    for (index_t p = 2; p < largest; p *= 2) consider(aligned_step(a, p, max_step));
  }
  // A parallel loop's larger steps have fewer iterations to hand to workers (and, pipelined, fewer
  // overlaps to pass between cores; data-parallel, fewer to recompute): the powers of two beyond
  // the budgets are priced too (the model weighs these against the slower level the larger
  // working set is served from), up to the last whose working set fits the L3's budget (when
  // some step fits L2's). Beyond, the times were erratic: the 2-stage stencil pipelined in strips
  // of 64 rows (4 MiB of ring buffers and windows) took 5.7 ms in one run of
  // `scheduler_benchmark --cpu-time --only parallel` and 7.7 and 7.9 ms in two others, where
  // strips of 32 (2 MiB) took 5.6 to 5.7 ms in all three; the 3-stage one in strips of 64, 10.2
  // to 12.8 ms against 9.3 to 9.6 in strips of 32. The L3's budget here is at most the share of
  // `workers` threads (cost_model::l3_bytes_per_thread each): a larger L3 is shared with more cores.
  if (workers > 1) {
    const double l3_budget = model_.l3_share_budget(workers);
    for (index_t p = 2; p <= max_step; p *= 2) {
      const int before = n;
      const priced* s = consider(aligned_step(a, p, max_step));
      if (fits_l2 && (!s || s->e.level > 2 || (s->e.level == 2 && s->e.working_set > l3_budget))) {
        // Served from memory, or beyond the threads' share of the L3: not a candidate, nor any
        // larger step.
        n = before;
        break;
      }
    }
  }
  SLINKY_ASSERT(n > 0, "a step of 1 is always priced");
  candidate c;
  const priced& best = pick(steps, n, workers, c.cheapest_ns);
  c.cheapest_unhidden_ns = steps[0].e.ns + steps[0].e.prefetched_ns;
  for (int i = 1; i < n; ++i)
    c.cheapest_unhidden_ns = std::min(c.cheapest_unhidden_ns, steps[i].e.ns + steps[i].e.prefetched_ns);
  SLINKY_ASSERT(best.step >= 1 && best.step <= std::max<index_t>(1, max_step), "a step within the loop");
  c.loops.push_back({a.dim, best.step, workers > 1});
  c.workers = workers;
  c.recompute = a.recompute;
  c.estimate = best.e;
  c.invariant_bytes = a.counts.invariant_bytes;
  c.iterations = (a.extent() + best.step - 1) / best.step;
  c.granularity = a.granularity;
  return c;
}

void scheduler::group_choice::offer(candidate c) {
  // Against no loop, a loop priced within cost_model::step_cost_tolerance of it that holds less
  // memory (the intermediates' windows instead of their whole regions) is taken: time equal,
  // memory decides.
  const bool leaner = !best.looped() && c.estimate.memory < best.estimate.memory &&
                      c.estimate.ns <= best.cheapest_ns * (1 + cost_model::step_cost_tolerance);
  if (c.cheapest_ns < best.cheapest_ns || leaner) {
    next = std::move(best);
    best = std::move(c);
  } else if (!next || c.cheapest_ns < next->cheapest_ns) {
    next = std::move(c);
  }
}

void scheduler::group_choice::offer_next(candidate c) {
  if (!next || c.cheapest_ns < next->cheapest_ns) next = std::move(c);
}

// The tiles: for each pair of the head's dims (the inner one not dim 0), an outer loop over one in
// strips of a power of two (from half the dim down to cost_model::min_strip elements) and the
// inner loop over the other, its step chosen as a serial loop's for one strip (best_step). The
// strip's estimate, less what it charges once per evaluation (the funcs at the root), is
// multiplied by the strips: each strip computes the windows of its funcs whole across the outer
// dim (the overlaps of neighbouring strips, a stencil's halo, are computed again). Only strips
// whose working set fits the L2 are candidates, and a tile must be cheaper than the best
// candidate (a loop, or no loop) by cost_model::tile_gain, both priced with the rereads of the
// operands the callbacks read whole for every row (loop_estimate::reread_ns): a strip reads a strip
// of such an operand, which may fit a cache where the whole does not (a product c = a x b whose b
// exceeds the L2). Of the strips of one pair of dims, the widest that beats the limit, unless a
// narrower one beats that one by tile_gain again (a strip of the operand fitting a nearer
// level). The funcs in a tile's loop are stored at its outer loop (scheduler::apply), where they
// slide along the inner one.
void scheduler::consider_tiles(int h, const std::vector<int>& members, group_choice& best) {
  const candidate& one = best.best;
  if (one.tiled()) return;
  const sched_node& head = g_.nodes[h];
  const int rank = static_cast<int>(head.out_slots[0].size());
  const machine& m = model_.target();
  const bool threads = options_.parallel && m.threads > 1;
  if (one.looped() && one.inner().parallel) {
    // A parallel loop's steps pass the L2 budget by design (fewer, larger iterations); a tile
    // only where one row of it, serially, does not fit the L2.
    if (!threads) return;
    analyzer_.analyze(h, one.inner().dim, members, /*recompute=*/false, tile_analysis_);
    if (!tile_analysis_.ok || model_.loop(tile_analysis_.counts, 1, 1).level <= 1) return;
  } else if (one.looped()) {
    // Where a loop over the outermost dim fits the L2, no tile: only where the loop's working set
    // is served beyond it, where an operand read whole is too large for it, or where the search
    // went to an inner dim (the outer ones' loops did not fit).
    if (one.estimate.level <= 1 && model_.level_of(one.invariant_bytes) <= 1 && one.inner().dim == rank - 1) return;
  } else if (!best.considered || one.estimate.reread_level <= 1) {
    // No loop: a tile only where the callbacks read operands again row by row from beyond the L2.
    return;
  }
  double limit = cost_model::tile_gain * (one.estimate.ns + one.estimate.reread_ns);
  std::optional<candidate> tile;
  // The inner loop is not over dim 0: its steps would cut the rows the callbacks walk into
  // pieces as short as one element (strided reads, partial cache lines), which the model does not
  // price; a strip of dim 0 keeps rows of at least min_strip elements.
  for (int inner = rank - 1; inner >= 1; --inner) {
    for (int outer = rank - 1; outer >= 0; --outer) {
      const int slot = head.out_slots[0][outer];
      if (outer == inner || slot < 0) continue;
      const index_t extent = full_[head.slot + slot].extent();
      for (index_t s = floor_power_of_two(extent / 2); s >= cost_model::min_strip; s /= 2) {
        analyzer_.analyze(h, inner, members, /*recompute=*/false, tile_analysis_, strip{outer, s});
        if (!tile_analysis_.ok) break;
        candidate t = best_step(tile_analysis_, 1, tile_analysis_.extent());
        if (t.estimate.level > 1) continue;
        const loop_prices p = model_.price(tile_analysis_.counts);
        const double strips = static_cast<double>(tile_analysis_.strips);
        auto all_strips = [&](double ns, double once) { return strips * (ns - once) + once; };
        t.estimate.ns = all_strips(t.estimate.ns, p.roots_ns);
        t.cheapest_ns = all_strips(t.cheapest_ns, p.roots_ns);
        t.estimate.reread_ns = all_strips(t.estimate.reread_ns, p.roots_reread_ns);
        t.strips = tile_analysis_.strips;
        t.iterations *= t.strips;
        t.loops.insert(t.loops.begin(), loop_level{outer, s, false});
        // The strips in parallel where a loop would be (at least two per worker, at most
        // cost_model::parallel_gain of the serial tile): each strip computes its own windows
        // (stored at the strip), so they are independent iterations, like a data-parallel
        // loop's, each worker with its own windows.
        if (threads && t.strips >= 2 * m.threads) {
          const double per_worker = std::ceil(strips / m.threads);
          const double strip_ns = t.estimate.ns - p.roots_ns;
          candidate par = t;
          par.loops[0].parallel = true;
          par.workers = m.threads;
          par.estimate.ns = (per_worker / strips * strip_ns + per_worker * cost_model::parallel_iteration_ns) /
                                cost_model::parallel_efficiency +
                            cost_model::fork_join_ns + p.roots_ns;
          par.cheapest_ns = par.estimate.ns + (t.cheapest_ns - t.estimate.ns) * per_worker / strips;
          par.estimate.reread_ns =
              per_worker / strips * (t.estimate.reread_ns - p.roots_reread_ns) / cost_model::parallel_efficiency +
              p.roots_reread_ns;
          par.estimate.memory =
              m.threads * (t.estimate.memory - tile_analysis_.counts.root_bytes) + tile_analysis_.counts.root_bytes;
          if (par.estimate.ns + par.estimate.reread_ns <
              cost_model::parallel_gain * (t.estimate.ns + t.estimate.reread_ns)) {
            t = std::move(par);
          }
        }
        const double ns = t.estimate.ns + t.estimate.reread_ns;
        // The widest strip that beats the limit: narrower strips compute more of the overlaps
        // again and cut rows shorter, which the model prices only in part (the wide stencil's
        // tiles took 15.0, 11.1 and 9.4 ms in strips of 1024, 4096 and 16384 columns); a
        // narrower one only if it beats that by tile_gain again.
        if (ns < limit) {
          limit = cost_model::tile_gain * ns;
          tile = std::move(t);
        }
      }
    }
  }
  if (tile) {
    SLINKY_ASSERT(tile->tiled() && tile->loops[0].dim != tile->loops[1].dim, "a tile's loops are over two dims");
    SLINKY_ASSERT(tile->inner().dim >= 1 && tile->loops[0].step >= cost_model::min_strip, "a tile's strips");
    best.next = std::move(best.best);
    best.best = std::move(*tile);
  }
}

candidate scheduler::best_loop(int h, int d, const std::vector<int>& members, std::optional<candidate>& kept_out) {
  kept_out.reset();
  candidate c = best_step(analysis_, 1, analysis_.extent());
  const machine& m = model_.target();
  if (!options_.parallel || m.threads <= 1) return c;
  // At least two iterations per worker.
  const index_t max_step = std::max<index_t>(1, analysis_.extent() / (2 * m.threads));
  // Parallel only for a clear gain (cost_model::parallel_gain), both loops priced with every
  // byte from memory paid: what the prefetcher hides is the model's least certain part, and it is
  // largest in the serial loop's smallest steps (on the Xeon of the nineteenth session, with a
  // window measured at 1.2 KiB and 8.2 ns per call, the parallel chain of 4 took serial chunks of
  // 256 priced as hiding all of memory's time: 20.5 ms against the parallel loop's 10.9).
  // Between parallel loops, the cheaper.
  const double serial_limit = cost_model::parallel_gain * c.cheapest_unhidden_ns;
  auto consider_parallel = [&](const loop_analysis& a, int workers) {
    if (workers < 2) return;
    candidate p = best_step(a, workers, max_step);
    if (c.loops[0].parallel ? p.cheapest_ns < c.cheapest_ns : p.cheapest_unhidden_ns < serial_limit) {
      c = std::move(p);
      kept_out.reset();
    } else if (!c.loops[0].parallel && (!kept_out || p.cheapest_ns < kept_out->cheapest_ns)) {
      kept_out = std::move(p);
    }
  };
  // A loop whose funcs slide is pipelined: at most one iteration in flight per func in it.
  const loop_counts& counts = analysis_.counts;
  consider_parallel(analysis_, counts.sliding > 0 ? std::min(m.threads, counts.calls_per_iteration) : m.threads);
  if (counts.sliding > 0) {
    // Or data-parallel, every iteration computing its funcs' whole windows: all the workers,
    // independent iterations, the overlaps computed again.
    analyzer_.analyze(h, d, members, /*recompute=*/true, recompute_analysis_);
    if (recompute_analysis_.ok) consider_parallel(recompute_analysis_, m.threads);
  }
  return c;
}

scheduler::group_choice scheduler::choose(int h, const std::vector<int>& members) {
  group_choice best;
  analyzer_.unscheduled(members, roots_);
  best.unscheduled_ns = model_.roots_ns(roots_);
  best.best.estimate.ns = best.best.cheapest_ns = best.unscheduled_ns;
  // With no loop every intermediate of the group is allocated whole.
  for (int i : members) {
    if (g_.nodes[i].at_root.allocated) best.best.estimate.memory += g_.nodes[i].full_bytes;
  }
  best.best.estimate.reread_ns = model_.roots_reread_ns(roots_, best.best.estimate.reread_level);
  best.unscheduled_reread_ns = best.best.estimate.reread_ns;
  const sched_node& head = g_.nodes[h];
  // The outermost dims first: on a tie the outer dim wins (longer contiguous rows per call).
  for (int d = static_cast<int>(head.out_slots[0].size()) - 1; d >= 0; --d) {
    analyzer_.analyze(h, d, members, /*recompute=*/false, analysis_);
    if (!analysis_.ok) continue;
    best.considered = true;
    std::optional<candidate> kept_out;
    candidate c = best_loop(h, d, members, kept_out);
    // A loop over dim 0 of a head of rank 2 or more in steps narrower than cost_model::min_strip
    // cuts every row the callbacks walk into short pieces, which the model does not price: not
    // taken where a loop over an outer dim beats no loop (the 3-stage stencil on 131072 x 64 floats
    // in columns of 16, the model's cheapest loop, took 443 ms where rows one at a time took 9).
    if (d == 0 && head.out_slots[0].size() > 1 && c.loops[0].step < cost_model::min_strip && best.best.looped()) {
      continue;
    }
    // Nor a loop over dim 0 of such a head along which a func in it slides: the builder folds that
    // func's buffer along dim 0 (a ring of a little more than a window's columns), so every
    // window its callbacks and its consumers' read is cut at the fold's boundary, and callbacks
    // written for contiguous rows take their element-by-element path (the 3-stage stencil on
    // 32768 x 32 floats in columns of 32 sliding along x took 58 ms, rows one at a time 1.1 ms).
    if (d == 0 && head.out_slots[0].size() > 1 && !c.recompute && analysis_.counts.sliding > 0 && best.best.looped()) {
      continue;
    }
    const bool parallel = c.loops[0].parallel;
    const double working_set = c.estimate.working_set;
    best.offer(std::move(c));
    // The parallel loop the serial one kept out is priced too: the next-best candidate, which the
    // refinement measures, if no other is cheaper.
    if (kept_out) best.offer_next(std::move(*kept_out));
    // The model prices bytes and calls, not the shape of the pieces: a loop over an inner dim cuts
    // rows into short, strided pieces (partial cache lines, short loops in the callbacks). So the
    // outermost dim whose loop beats no loop with a working set within the L2 budget is taken, and
    // so is the outermost dim whose loop is parallel (its steps pass the budgets where fewer,
    // larger iterations pay: the workers' hand-offs and recomputed overlaps).
    if (best.best.looped() && best.best.loops[0].dim == d && (parallel || model_.level_of(working_set) <= 1)) break;
  }
  consider_tiles(h, members, best);
  return best;
}

}  // namespace scheduler_internal
}  // namespace slinky
