// Sliding windows and warm-up starts (docs/builder.md, "Sliding window and folding").
//
// Contract: decide_slides(fi) runs in the first, consumers-first pass of bounds_inference, after
// the func's full and steady views are known and after every consumer's own decision. It sets,
// for each of the func's variables, the loop of its compute chain the dimension slides with (or
// -1) and the direction, the steady_produce view (the steady window less what the previous
// iteration computed), and records for that loop the latest start at which the window is warm
// by its first value. compute_loop_starts() then turns those records into one start per loop,
// moved earlier by whole steps; loop_start() and has_warm_up() answer from it for the second
// pass and for the emitter. A dimension that cannot be shown to slide (the loop is outside the
// storage, the window moves with several loops or in several dimensions, is not monotonic, or
// its start cannot be solved) is left unslid: recomputed in each iteration, correct and slower.
#include <algorithm>
#include <optional>

#include "slinky/base/arithmetic.h"
#include "slinky/builder/bounds.h"
#include "slinky/builder/bounds_internal.h"
#include "slinky/runtime/node_mutator.h"

namespace slinky {

using internal::is_monotonic;
using internal::monotonic;

namespace {

// A value w of v such that the increasing expression e is <= t at v = w (and so for every v <=
// w), as large as the structure of e allows; undefined if none can be found.
expr solve_upper(const expr& e, var v, const expr& t) {
  if (!depends_on(e, v)) return expr();
  if (const variable* x = e.as<variable>()) return x->sym == v && x->field == buffer_field::none ? t : expr();
  if (const add* op = e.as<add>()) {
    if (!depends_on(op->b, v)) return solve_upper(op->a, v, t - op->b);
    if (!depends_on(op->a, v)) return solve_upper(op->b, v, t - op->a);
    return expr();
  }
  if (const sub* op = e.as<sub>()) {
    if (!depends_on(op->b, v)) return solve_upper(op->a, v, t + op->b);
    return expr();
  }
  if (const mul* op = e.as<mul>()) {
    std::optional<index_t> c = as_constant(op->b);
    // a * c <= t if a <= floor(t / c).
    if (c && *c > 0) return solve_upper(op->a, v, t / *c);
    return expr();
  }
  if (const div* op = e.as<div>()) {
    std::optional<index_t> c = as_constant(op->b);
    // floor(a / c) <= t if a <= t * c + c - 1.
    if (c && *c > 0) return solve_upper(op->a, v, t * *c + (*c - 1));
    return expr();
  }
  if (const minimum* op = e.as<minimum>()) {
    // min(a, b) <= t if either is.
    expr a = solve_upper(op->a, v, t);
    expr b = solve_upper(op->b, v, t);
    if (a.defined() && b.defined()) return max(a, b);
    return a.defined() ? a : b;
  }
  if (const maximum* op = e.as<maximum>()) {
    // max(a, b) <= t if both are; a term without v must be shown <= t.
    expr a = depends_on(op->a, v) ? solve_upper(op->a, v, t) : expr();
    expr b = depends_on(op->b, v) ? solve_upper(op->b, v, t) : expr();
    if (!depends_on(op->a, v) && prove_true(op->a <= t)) return b;
    if (!depends_on(op->b, v) && prove_true(op->b <= t)) return a;
    if (a.defined() && b.defined()) return min(a, b);
    return expr();
  }
  return expr();
}

}  // namespace

// Decides which dimensions of func fi slide with which loop: a serial loop inside the storage
// of its outputs (so what earlier iterations computed is still there), a dimension that moves
// with that loop alone and monotonically, and a warm-up start that can be solved for. Each
// iteration then computes only the part of the steady window the previous one did not.
void bounds_inference::decide_slides(int fi) {
  func_bounds& fb = funcs[fi];
  const func_node& fn = g_.funcs[fi];
  fb.slides.assign(fb.vars.size(), -1);
  fb.slides_up.assign(fb.vars.size(), true);
  fb.steady_produce = fb.steady;
  const std::size_t depth = storage_depth(fi);
  if (depth >= fn.compute_chain.size()) return;
  const loop_level storage = depth == 0 ? loop_level() : fn.compute_chain[depth - 1];
  box_expr total(fb.full.begin(), fb.full.end());
  total = lift(total, fn.compute_chain, storage, view::full);
  for (std::size_t k = depth; k < fn.compute_chain.size(); ++k) {
    const loop_level l = fn.compute_chain[k];
    // A parallel loop slides too: it is then pipelined (see find_pipelined_loops).
    const func::loop_info& info = g_.loop(l);
    const var v = g_.loop_var(l);
    // The loop's owner must compute its whole range of v: a loop that is itself a slice of a
    // sliding window would restart its warm-up over values computed before.
    if (funcs[l.func].slides[index_of_var(l.func, g_.user_var(l))] >= 0) continue;
    // A loop inside l whose range moves with l (over a diagonal, say) is empty in some
    // iterations of l, its warm-up ones first: the func does not run in them, and the part of
    // its window they should compute never would be.
    bool inner_loop_moves = false;
    for (std::size_t m = k + 1; m < fn.compute_chain.size(); ++m) {
      inner_loop_moves = inner_loop_moves || depends_on(loop_bounds(fn.compute_chain[m], view::full), v);
    }
    if (inner_loop_moves) continue;
    // A window moving in several dimensions with one loop does not leave a box to compute.
    int moving = 0;
    for (const interval_expr& i : fb.steady) moving += depends_on(i, v) ? 1 : 0;
    if (moving > 1) continue;
    for (std::size_t j = 0; j < fb.vars.size(); ++j) {
      const interval_expr& i = fb.steady[j];
      if (fb.slides[j] >= 0 || !depends_on(i, v)) continue;
      bool other_loop = false;
      for (loop_level other : fn.compute_chain) {
        other_loop = other_loop || (other != l && depends_on(i, g_.loop_var(other)));
      }
      if (other_loop) continue;
      const monotonic lo = is_monotonic(i.min, v);
      const monotonic hi = is_monotonic(i.max, v);
      const interval_expr prev = substitute(i, v, v - info.step);
      interval_expr trimmed = i;
      expr last_before;
      const bool up = lo == monotonic::increasing && hi == monotonic::increasing;
      const bool down = lo == monotonic::decreasing && hi == monotonic::decreasing;
      if (up) {
        trimmed.min = max(i.min, prev.max + 1);
        last_before = solve_upper(i.max, v, total[j].min - 1);
      } else if (down) {
        trimmed.max = min(i.max, prev.min - 1);
        last_before = solve_upper(simplify(-i.min), v, -(total[j].max + 1));
      }
      if (!last_before.defined()) continue;
      fb.slides[j] = static_cast<int>(k);
      fb.slides_up[j] = up;
      fb.steady_produce[j] = simplify(trimmed);
      starts_.emplace_back(l, simplify(last_before + info.step));
    }
  }
}

void bounds_inference::compute_loop_starts() {
  std::vector<std::pair<loop_level, expr>> earliest;
  for (const auto& s : starts_) {
    auto i = std::find_if(earliest.begin(), earliest.end(), [&](const auto& e) { return e.first == s.first; });
    if (i == earliest.end()) {
      earliest.push_back(s);
    } else {
      i->second = simplify(min(i->second, s.second));
    }
  }
  for (const auto& e : earliest) {
    // Whole steps before the first value, so the iterations after warm-up are the same. The first
    // value is the full region's: the loop's owner is computed before (it is a consumer).
    const loop_level l = e.first;
    const expr first = loop_bounds(l, view::full).min;
    const expr step = g_.loop(l).step;
    const expr start = simplify(first - align_up(max(first - e.second, 0), step));
    loop_starts_.emplace_back(l, start);
    if (!is_zero(simplify(first - start))) warm_up_.push_back(l);
  }
}

bool bounds_inference::has_warm_up(loop_level l) const {
  return std::find(warm_up_.begin(), warm_up_.end(), l) != warm_up_.end();
}

expr bounds_inference::loop_start(loop_level l) const {
  for (const auto& s : loop_starts_) {
    if (s.first == l) return s.second;
  }
  return loop_bounds(l).min;
}

bool bounds_inference::slides_with(int fi, loop_level l) const {
  const func_node& fn = g_.funcs[fi];
  for (int k : funcs[fi].slides) {
    if (k >= 0 && fn.compute_chain[k] == l) return true;
  }
  return false;
}

}  // namespace slinky
