// Pipelined parallel loops (docs/threads.md).
//
// Contract: find_pipelined_loops() runs once, after the sliding decisions and loop starts and
// before the second pass of bounds_inference, and uses only the full view. A parallel loop is
// pipelined when a func slides with it, or when an intermediate stored outside it would fold
// along it with windows that move with the loop and are disjoint across its iterations; each
// pipelined loop gets a number of workers (the iterations that may run at once, which its ring
// buffers are folded for). pipelined() and pipeline_workers() answer from that list;
// window_in_iteration(), window_moves() and windows_overlap() describe what the consumers of a
// buffer need of it in one iteration of a loop, in the full view, and are valid at any time after
// the first pass.
#include <algorithm>
#include <optional>
#include <thread>

#include "slinky/base/assert.h"
#include "slinky/builder/bounds.h"
#include "slinky/builder/bounds_internal.h"
#include "slinky/runtime/node_mutator.h"

namespace slinky {

using internal::is_monotonic;
using internal::monotonic;

namespace {

// A loop level names a loop of a func of the graph (never the root, whose -1 indices would
// index nothing).
void assert_loop(const graph& g, loop_level l) {
  SLINKY_ASSERT(!l.root(), "a loop level, not the root");
  SLINKY_ASSERT(l.func >= 0 && static_cast<std::size_t>(l.func) < g.funcs.size(), "a loop of a func of the graph");
  SLINKY_ASSERT(l.loop >= 0 && static_cast<std::size_t>(l.loop) < g.funcs[l.func].f->loops().size(),
                "a loop the func has");
}

void assert_buffer(const graph& g, int buffer) {
  SLINKY_ASSERT(buffer >= 0 && static_cast<std::size_t>(buffer) < g.buffers.size(), "a buffer of the graph");
}

}  // namespace

void bounds_inference::find_pipelined_loops() {
  SLINKY_ASSERT(pipelined_.empty(), "find_pipelined_loops runs once");
  SLINKY_ASSERT(funcs.size() == g_.funcs.size(), "bounds for every func of the graph");
  // Each iteration in flight holds its window of the ring buffers, so the workers are bounded at
  // build time.
  auto pipeline = [&](loop_level l, bool ordered_stages) {
    assert_loop(g_, l);
    SLINKY_ASSERT(!pipelined(l), "a loop is pipelined once");
    const func::loop_info& info = g_.funcs[l.func].f->loops()[l.loop];
    // Stages wait for the previous iteration's, so more workers than stages would mostly wait.
    // A loop whose only stage is its owner (which starts at once and only finishes in order)
    // runs on as many workers as there are hardware threads.
    index_t stages = 1;
    for (const func_node& other : g_.funcs) stages += other.compute == l ? 1 : 0;
    const unsigned hw = std::thread::hardware_concurrency();
    index_t workers = ordered_stages || stages > 1 ? stages : std::max<index_t>(1, hw);
    // No more iterations run at once than the machine has hardware threads: folding for more
    // only makes the ring buffers larger (and slower, once they leave the cache).
    if (hw) workers = std::min<index_t>(workers, hw);
    if (std::optional<index_t> c = as_constant(info.max_workers)) workers = std::max<index_t>(1, std::min(workers, *c));
    // Inside another parallel loop, which gives the parallelism, a pipelined loop runs serially:
    // a worker waiting on a stage may run another pipeline's items (thread_pool.h), which could
    // wait in turn for the first one.
    const std::vector<loop_level> chain = g_.chain(l);
    for (std::size_t j = 0; j + 1 < chain.size(); ++j) {
      if (g_.funcs[chain[j].func].f->loops()[chain[j].loop].is_parallel()) workers = 1;
    }
    SLINKY_ASSERT(workers >= 1, "a pipelined loop runs on at least one worker");
    pipelined_.emplace_back(l, workers);
  };
  for (std::size_t fi = 0; fi < g_.funcs.size(); ++fi) {
    for (int k : funcs[fi].slides) {
      // -1: the func does not slide (along that loop).
      if (k < 0) continue;
      SLINKY_ASSERT(static_cast<std::size_t>(k) < g_.funcs[fi].compute_chain.size(),
                    "a func slides along a loop of its compute chain");
      const loop_level l = g_.funcs[fi].compute_chain[k];
      const func::loop_info& info = g_.funcs[l.func].f->loops()[l.loop];
      if (!info.is_parallel() || pipelined(l)) continue;
      // Iterations that write disjoint windows of what fi produces need no order among them,
      // unless a buffer would fold along l (the outermost loop inside its storage): iterations in
      // flight then take turns in its rows. (A buffer kept outside the loop to slide along a
      // serial loop further out folds along that one.)
      bool ordered = false;
      for (const func::output& o : g_.funcs[fi].f->outputs()) {
        const int bi = g_.buffer_index(o.buffer.get());
        assert_buffer(g_, bi);
        if (g_.buffers[bi].is_output) continue;
        ordered = ordered || windows_overlap(bi, l) || fold_loop(bi) == l;
      }
      if (ordered) pipeline(l, /*ordered_stages=*/true);
    }
  }
  // A buffer stored outside a parallel loop whose producer does not slide with it (it runs in a
  // loop inside l whose range moves with l, say) but whose windows move with l and are disjoint
  // across its iterations: pipelined, the iterations in flight take turns in a ring buffer of
  // their windows, instead of each writing its own part of a buffer as large as all of them.
  // (Windows that overlap without sliding are left as they are: iterations in flight would write
  // the same elements.)
  for (std::size_t bi = 0; bi < g_.buffers.size(); ++bi) {
    const buffer_node& b = g_.buffers[bi];
    if (b.producer < 0 || b.is_output || b.is_input) continue;
    const std::optional<loop_level> l = fold_loop(static_cast<int>(bi));
    if (!l || pipelined(*l) || !g_.funcs[l->func].f->loops()[l->loop].is_parallel()) continue;
    if (!window_moves(static_cast<int>(bi), *l) || windows_overlap(static_cast<int>(bi), *l)) continue;
    pipeline(*l, /*ordered_stages=*/false);
  }
}

box_expr bounds_inference::window_in_iteration(int buffer, loop_level l) const {
  assert_buffer(g_, buffer);
  assert_loop(g_, l);
  const buffer_node& b = g_.buffers[buffer];
  if (b.producer < 0) return {};
  const int fi = b.producer;
  SLINKY_ASSERT(static_cast<std::size_t>(fi) < funcs.size(), "bounds of the producer exist");
  const func_node& fn = g_.funcs[fi];
  if (std::find(fn.compute_chain.begin(), fn.compute_chain.end(), l) == fn.compute_chain.end()) return {};
  box_expr window;
  for (const func::output& o : fn.f->outputs()) {
    if (o.buffer.get() != b.buffer.get()) continue;
    for (var v : o.dims) {
      const std::size_t d = index_of_var(fi, v);
      SLINKY_ASSERT(d < funcs[fi].full.size(), "an output dim is a variable of its func");
      window.push_back(funcs[fi].full[d]);
    }
  }
  // Over the loops inside l: what one iteration of l needs.
  return lift(window, fn.compute_chain, l, view::full, /*warm_up=*/false);
}

bool bounds_inference::window_moves(int buffer, loop_level l) const {
  const box_expr window = window_in_iteration(buffer, l);
  const var v = g_.loop_var(l);
  return std::any_of(window.begin(), window.end(), [&](const interval_expr& i) { return depends_on(i, v); });
}

bool bounds_inference::windows_overlap(int buffer, loop_level l) const {
  const box_expr window = window_in_iteration(buffer, l);
  const var v = g_.loop_var(l);
  const expr& step = g_.funcs[l.func].f->loops()[l.loop].step;
  // Within the loop (after its first iteration, which has no previous one). The first iteration
  // is the warm-up's when the loop starts early: a loop whose full range is one iteration has
  // iterations before it then, whose windows the first one's may overlap.
  scratch_bounds loop_range(*this);
  const interval_expr range = loop_bounds(l, view::full);
  const expr first = has_warm_up(l) ? loop_start(l) : range.min;
  loop_range[v] = interval_expr(simplify(first + step), range.max);
  // Two boxes are disjoint when they are in one dimension: a window moving in two dimensions with
  // the loop (a diagonal read, (y, [y, y + 1])) overlaps the previous one in its second dimension
  // and not in the first, so no element is in both.
  bool overlaps = false;
  for (const interval_expr& i : window) {
    if (!depends_on(i, v)) continue;
    const interval_expr prev = substitute(i, v, v - step);
    const monotonic lo = is_monotonic(i.min, v);
    const monotonic hi = is_monotonic(i.max, v);
    // Overlapping unless proven disjoint in every iteration: a window that overlaps the previous
    // one in some iterations only (x / 2 over x, say) still computes those values twice.
    if (lo == monotonic::increasing && hi == monotonic::increasing) {
      if (prove_true(prev.max < i.min, loop_range.map())) return false;
      overlaps = true;
    } else if (lo == monotonic::decreasing && hi == monotonic::decreasing) {
      if (prove_true(i.max < prev.min, loop_range.map())) return false;
      overlaps = true;
    }
  }
  return overlaps;
}

bool bounds_inference::pipelined(loop_level l) const {
  return std::any_of(pipelined_.begin(), pipelined_.end(), [&](const auto& p) { return p.first == l; });
}

index_t bounds_inference::pipeline_workers(loop_level l) const {
  assert_loop(g_, l);
  for (const auto& p : pipelined_) {
    if (p.first == l) return p.second;
  }
  return 1;
}

}  // namespace slinky
