// The scheduler's cost model: counts to nanoseconds (docs/scheduler.md, "The cost model").
#include "slinky/scheduler/cost_model.h"

#include <algorithm>
#include <cmath>

namespace slinky {
namespace scheduler_internal {

double linear_in_step::operator()(double step, double s) const {
  return std::max(0.0, at_s + (at_2s - at_s) * (step - s) / s);
}

double loop_counts::folds(double step, int workers) const {
  const double S = probe_step;
  const double shared = pipelined(workers) ? 0 : shared_bytes(step, S);
  return std::max(0.0, fold(step, S) - shared) + (workers - 1) * sliding_shift_bytes(step, S);
}

double loop_counts::moving_bytes(double step, int workers) const {
  const double S = probe_step;
  return folds(step, workers) + external_window(step, S) + output_chunk(step, S);
}

double loop_counts::memory_bytes(double step, int workers) const {
  // The workers of a data-parallel loop each have their own windows.
  const double copies = workers > 1 && sliding == 0 ? workers : 1;
  return copies * folds(step, workers) + root_bytes;
}

namespace {

// The machine description the cost model can use: a client fills it in by hand, and zeros,
// negatives, NaNs and huge sizes must not turn into undefined conversions or endless loops.
machine usable_machine(const machine& given) {
  const machine defaults;
  machine m = given;
  // No cache is larger than 2^50 bytes; budgets computed from these stay far from index_t's limit.
  const index_t largest = index_t{1} << 50;
  for (index_t* bytes : {&m.l1_bytes, &m.l2_bytes, &m.l3_bytes}) *bytes = std::clamp<index_t>(*bytes, 0, largest);
  m.threads = std::clamp(m.threads, 1, 1 << 16);
  auto time = [](double t, double fallback) { return std::isfinite(t) && t >= 0 ? t : fallback; };
  m.call_overhead_ns = time(m.call_overhead_ns, defaults.call_overhead_ns);
  for (int i = 0; i < 4; ++i) m.ns_per_byte[i] = time(m.ns_per_byte[i], defaults.ns_per_byte[i]);
  m.page_touch_ns = time(m.page_touch_ns, defaults.page_touch_ns);
  m.l1_buffers = std::max(0, m.l1_buffers);
  m.fresh_block_bytes = std::max<index_t>(0, m.fresh_block_bytes);
  m.prefetch_bytes = std::clamp<index_t>(m.prefetch_bytes, 0, largest);
  return m;
}

double usable_cache_fraction(double f) {
  if (!(f > 0)) return 0.5;  // 0, negative or NaN: schedule_options' default
  return std::min(f, 1.0);
}

}  // namespace

cost_model::cost_model(const machine& m, double cache_fraction)
    : m_(usable_machine(m)), fraction_(usable_cache_fraction(cache_fraction)) {}

index_t cost_model::capacity(int level) const {
  switch (level) {
  case 0: return m_.l1_bytes;
  case 1: return m_.l2_bytes;
  case 2: return m_.l3_bytes;
  default: return 0;
  }
}

int cost_model::level_of(double bytes) const {
  for (int l = 0; l < memory_level; ++l) {
    if (capacity(l) > 0 && bytes <= budget(l)) return l;
  }
  return memory_level;
}

double cost_model::page_ns(double block_bytes) const {
  return block_bytes >= static_cast<double>(m_.fresh_block_bytes) ? block_bytes / page_bytes * m_.page_touch_ns : 0;
}

double cost_model::root_ns(const root_term& r) const {
  const root_counts& f = *r.counts;
  if (f.view) return f.region_bytes * m_.ns_per_byte[f.view_level] * r.root_consumers;
  double reads_ns = 0;
  for (const read_counts& x : f.reads) reads_ns += x.bytes * m_.ns_per_byte[x.level];
  const double c = m_.ns_per_byte[f.region_level];
  const double writes = r.removed_copy ? 0 : 1;
  double t = f.region_bytes * c * (writes + r.root_consumers) + reads_ns + m_.call_overhead_ns + f.hinted_call_ns +
             root_work_ns(r);
  if (f.allocated && !r.into_copy) t += page_ns(f.region_bytes);
  return t;
}

double cost_model::root_work_ns(const root_term& r) const {
  const root_counts& f = *r.counts;
  return r.removed_copy ? 0 : f.points * point_ns(f.footprint_bytes, f.hinted_point_ns, f.strided_copy);
}

double cost_model::roots_ns(const std::vector<root_term>& roots) const {
  double t = 0;
  for (const root_term& r : roots) t += root_ns(r);
  return t;
}

double cost_model::roots_reread_ns(const std::vector<root_term>& roots, int& level) const {
  double t = 0;
  for (const root_term& r : roots) {
    const root_counts& f = *r.counts;
    if (f.rereads.empty()) continue;
    double reread = 0;
    for (const read_counts& x : f.rereads) {
      reread += x.bytes * m_.ns_per_byte[x.level];
      level = std::max(level, x.level);
    }
    // Behind the func's own work (the rereads' law: cost_model.h, at roots_reread_ns).
    t += std::max(0.0, reread - root_work_ns(r));
  }
  return t;
}

double cost_model::rereads_ns(const loop_counts& c, index_t step) const {
  const double st = static_cast<double>(step);
  double t = 0;
  for (const loop_counts::reread& r : c.rereads) {
    const double bytes = static_cast<double>(c.extent) / st * r.bytes(st, c.probe_step) - r.window;
    t += std::max(0.0, bytes) * m_.ns_per_byte[r.level];
  }
  return t;
}

double cost_model::prefetched_ns(const loop_counts& c, double step, double iteration_ns) const {
  const double window = static_cast<double>(m_.prefetch_bytes);
  if (window <= 0) return 0;
  double streams_ns = 0, hidden_ns = 0;
  for (const level_bytes& b : c.streamed) {
    if (b.level != memory_level || !b.continuing) continue;
    const double bytes = b.bytes(step, c.probe_step);
    streams_ns += bytes * m_.ns_per_byte[memory_level];
    // All of a chunk within the window; beyond it, less and less, none from 4 windows on.
    hidden_ns += prefetch_hidden_bytes(bytes, window) * m_.ns_per_byte[memory_level];
  }
  // The prefetches run behind the iteration's other work only: at most as long as it.
  return std::min(hidden_ns, std::max(0.0, iteration_ns - streams_ns));
}

loop_prices cost_model::price(const loop_counts& c) const {
  loop_prices p;
  for (const level_bytes& b : c.streamed) {
    const double r = m_.ns_per_byte[b.level];
    p.streamed_ns.add(b.bytes.at_s * r, b.bytes.at_2s * r);
  }
  for (const level_bytes& b : c.external_cached) {
    const double r = m_.ns_per_byte[b.level];
    p.external_cached_ns.add(b.bytes.at_s * r, b.bytes.at_2s * r);
  }
  for (const work_counts& w : c.work) {
    const double per_point = point_ns(w.footprint_bytes, w.hinted_point_ns, w.strided_copy);
    p.work_ns.add(w.points.at_s * per_point, w.points.at_2s * per_point);
  }
  p.roots_ns = roots_ns(c.roots);
  for (const read_counts& r : c.invariant_reads) p.invariant_ns += r.bytes * m_.ns_per_byte[r.level];
  p.roots_reread_ns = roots_reread_ns(c.roots, p.roots_reread_level);
  for (const loop_counts::reread& r : c.rereads) {
    p.refetch_ns += r.window * std::max(0.0, m_.ns_per_byte[r.window_level] - m_.ns_per_byte[r.level]);
  }
  for (const read_counts& r : c.refetched) {
    p.refetch_ns += r.bytes * std::max(0.0, m_.ns_per_byte[r.level] - m_.ns_per_byte[0]);
  }
  return p;
}

loop_estimate cost_model::loop(const loop_counts& c, const loop_prices& p, index_t step, int workers) const {
  const double S = c.probe_step;
  const double st = static_cast<double>(step);
  const double iterations = std::ceil(static_cast<double>(c.extent) / st);
  const double fold = c.folds(st, workers);
  const double moving = c.moving_bytes(st, workers);
  // The working set as level l sees it (the invariant windows where they fit alone), and what
  // it must fit (the workers of a data-parallel loop share the L3, each with its own working set).
  auto seen_by = [&](int l) {
    const double sharing = l == 2 && workers > 1 && c.sliding == 0 ? workers : 1;
    return moving * sharing + c.invariant_within(budget(l));
  };
  // The first level holding the working set.
  loop_estimate e;
  e.memory = c.memory_bytes(st, workers);
  e.working_set = moving + c.invariant_bytes;
  for (int l = 0; l < memory_level && e.level == memory_level; ++l) {
    if (capacity(l) > 0 && seen_by(l) <= budget(l)) {
      e.level = l;
      e.working_set = moving + c.invariant_within(budget(l));
    }
  }
  // L1's rate only for serial loops over few buffers (machine::l1_buffers).
  const bool l1_rate = workers == 1 && c.streamed_buffers(workers) <= m_.l1_buffers;
  auto rate = [&](int l) { return m_.ns_per_byte[l == 0 && !l1_rate ? 1 : l]; };
  double r = rate(e.level);
  // Beyond a level's budget but within its capacity, the rate rises from that level's to the
  // next one's: the budget leaves room for other data and conflicts, which take a growing share
  // of the level as the working set grows, not all of it at once.
  for (int l = e.level - 1; l >= 0; --l) {
    if (capacity(l) <= 0) continue;
    const double b = budget(l);
    const double cap = static_cast<double>(capacity(l));
    const double w = seen_by(l);
    if (w < cap && cap > b) r = rate(l) + (rate(e.level) - rate(l)) * (w - b) / (cap - b);
    break;
  }
  const double calls_ns = c.calls_per_iteration * m_.call_overhead_ns + c.hinted_call_ns;
  // In a parallel loop the previous iteration ran on another core (the workers take turns): the
  // parts of the external windows it read come from where their buffers are, not from this
  // core's cache.
  // A serial loop's windows' overlap with the previous iteration's, where the working set is in
  // L1 or L2: mostly hidden behind the work (overlap_hidden). A parallel loop's previous iteration
  // ran on another core (above; a pipelined one's hand-off: handoff_ns, below).
  const double overlap_share = workers == 1 && e.level <= 1 ? overlap_hidden : 0;
  const double cached_ns =
      workers > 1 ? p.external_cached_ns(st, S) : (1 - overlap_share) * c.external_cached_bytes(st, S) * r;
  const double internal_ns = std::max(0.0, c.internal_bytes(st, S) - overlap_share * c.overlap_bytes(st, S)) * r;
  const double work_ns = p.work_ns(st, S);
  const double work_and_bytes_ns = internal_ns + cached_ns + p.streamed_ns(st, S) + work_ns;
  // The part of the streams from memory the prefetcher fetches while the rest of the iteration
  // runs, on each worker's core alike.
  const double hidden_ns = prefetched_ns(c, st, calls_ns + work_and_bytes_ns);
  double loop_ns;
  if (workers > 1) {
    // The critical path: the iterations of the busiest worker.
    const double per_worker = std::ceil(iterations / workers);
    // A pipelined iteration reads the overlap of its windows from the core that ran the previous
    // iteration (handoff_memory_ratio).
    const double handoff_ns =
        c.sliding > 0 ? c.overlap_bytes(st, S) * std::max(0.0, handoff_memory_ratio * m_.ns_per_byte[3] - r) : 0;
    loop_ns = per_worker *
                  (calls_ns + work_and_bytes_ns - hidden_ns + handoff_ns + parallel_iteration_ns + p.refetch_ns) /
                  parallel_efficiency +
              fork_join_ns;
    e.prefetched_ns = per_worker * hidden_ns / parallel_efficiency;
  } else {
    // Every iteration calls; the bytes are those of the whole extent (the last chunk is truncated).
    loop_ns = iterations * calls_ns + static_cast<double>(c.extent) / st * (work_and_bytes_ns - hidden_ns) +
              (iterations - 1) * p.refetch_ns;
    e.prefetched_ns = static_cast<double>(c.extent) / st * hidden_ns;
  }
  e.ns = loop_ns + p.roots_ns + p.invariant_ns + page_ns(fold);
  // The loop's rereads behind its callbacks' work (cost_model.h, at roots_reread_ns).
  e.reread_ns = std::max(0.0, rereads_ns(c, step) - static_cast<double>(c.extent) / st * work_ns) + p.roots_reread_ns;
  e.reread_level = p.roots_reread_level;
  for (const loop_counts::reread& r : c.rereads) e.reread_level = std::max(e.reread_level, r.level);
  return e;
}

double settled_prefetch_window(const std::vector<prefetch_estimate>& estimates, int& settled) {
  settled = 0;
  if (estimates.empty()) return 0;
  double fastest = estimates[0].cached_ns;
  for (const prefetch_estimate& e : estimates) fastest = std::min(fastest, e.cached_ns);
  std::vector<double> windows;
  for (const prefetch_estimate& e : estimates) {
    if (e.cached_ns <= settled_speed * fastest) windows.push_back(e.window);
  }
  std::sort(windows.begin(), windows.end());
  settled = static_cast<int>(windows.size());
  // Of two middle ones, the smaller: the window is a discount on memory's time, and too large a
  // discount makes steps too small, which costs more than too small a one.
  return windows[(windows.size() - 1) / 2];
}

bool prefetch_estimates_done(const std::vector<prefetch_estimate>& estimates, int made, double elapsed_ms) {
  if (elapsed_ms >= prefetch_span_ms) return true;
  if (made < 3) return false;
  if (estimates.empty()) return true;  // the flush does not reach memory
  int settled = 0;
  const double window = settled_prefetch_window(estimates, settled);
  return settled >= 3 && (window >= least_usual_prefetch_bytes || elapsed_ms >= prefetch_low_span_ms);
}

index_t usual_prefetch_bytes(index_t measured) {
  return measured >= least_usual_prefetch_bytes ? measured : machine::host_prefetch_bytes;
}

}  // namespace scheduler_internal
}  // namespace slinky
