// Storage folding (docs/builder.md, "Sliding window and folding").
//
// Contract: fold_factors(buffer) runs for each intermediate after both passes of
// bounds_inference, when regions, loop starts, pipelined loops and the buffer's needed region
// are final. An intermediate folds along fold_loop(buffer), the outermost loop inside its
// storage level on its producer's compute chain; in each dimension whose live window moves with
// that loop, the fold factor is an upper bound of the window's extent over the loop (over the
// iterations in flight of a pipelined loop), at most the buffer's needed extent and at least 1.
// A dimension that does not move with that loop but only with a serial loop further in folds along
// that one, when nothing the buffer holds crosses an iteration of the loops outside it (see
// fold_factors). A dimension whose extent cannot be bounded, and a buffer that has no such loop
// or folds along a parallel loop that is not pipelined, is not folded (the factor is undefined).
#include <algorithm>
#include <optional>
#include <set>

#include "slinky/base/arithmetic.h"
#include "slinky/builder/bounds.h"
#include "slinky/builder/bounds_internal.h"
#include "slinky/runtime/node_mutator.h"

namespace slinky {

using internal::is_monotonic;
using internal::monotonic;
using internal::simplify_or_empty;

namespace {

// An upper bound of hi - lo, where the interval arithmetic of bounds_of cannot see one: the two
// are the same expression up to constant offsets, products and floor divisions by the same
// constant and clamps ((y + 1) / 2 - y / 2 <= 1; min(y + 1, n) - min(y - 1, n) <= 2; a clamp of the high end,
// the last chunk of a loop, only lowers it). Each step takes one operand apart; the search stops
// this many steps deep (the max and min cases look at both sides, which could otherwise grow
// exponentially with the depth of nested clamps).
constexpr int max_difference_depth = 12;

std::optional<index_t> difference_bound(const expr& hi, const expr& lo, int depth = 0) {
  if (match(hi, lo)) return 0;
  if (depth >= max_difference_depth) return std::nullopt;
  // The bound of a part of hi - lo, one step deeper.
  auto part = [depth](const expr& h, const expr& l) { return difference_bound(h, l, depth + 1); };
  // (a + k1) - (b + k2) = (a - b) + k1 - k2.
  auto split = [](const expr& e, expr& a) -> index_t {
    a = e;
    if (const add* op = e.as<add>()) {
      if (std::optional<index_t> k = as_constant(op->b)) {
        a = op->a;
        return *k;
      }
    }
    return 0;
  };
  expr a, b;
  const index_t ka = split(hi, a), kb = split(lo, b);
  if (ka != 0 || kb != 0) {
    std::optional<index_t> d = part(a, b);
    if (d) return *d + ka - kb;
  }
  // p * c - q * c = (p - q) * c <= bound(p - q) * c for c > 0 (strided windows: x * 2).
  const mul* ma = hi.as<mul>();
  const mul* mb = lo.as<mul>();
  if (ma && mb) {
    std::optional<index_t> c = as_constant(ma->b);
    if (c && *c > 0 && as_constant(mb->b) == c) {
      std::optional<index_t> inner = part(ma->a, mb->a);
      if (inner) return *inner * *c;
    }
  }
  // floor(p / d) - floor(q / d) <= ceil((p - q) / d) for d > 0.
  const div* da = hi.as<div>();
  const div* db = lo.as<div>();
  if (da && db) {
    std::optional<index_t> d = as_constant(da->b);
    if (d && *d > 0 && as_constant(db->b) == d) {
      std::optional<index_t> inner = part(da->a, db->a);
      if (inner) return ceil_div<index_t>(*inner, *d);
    }
  }
  // min(p, n) - min(q, n) <= max(p - q, 0), and the same for max.
  const minimum* mina = hi.as<minimum>();
  const minimum* minb = lo.as<minimum>();
  const maximum* maxa = hi.as<maximum>();
  const maximum* maxb = lo.as<maximum>();
  auto same_clamp = [&part](const expr& pa, const expr& pb, const expr& qa, const expr& qb) -> std::optional<index_t> {
    std::optional<index_t> d;
    if (match(pb, qb)) d = part(pa, qa);
    if (!d && match(pa, qa)) d = part(pb, qb);
    if (!d && match(pa, qb)) d = part(pb, qa);
    if (!d && match(pb, qa)) d = part(pa, qb);
    if (d) return std::max<index_t>(*d, 0);
    return std::nullopt;
  };
  if (mina && minb) {
    if (std::optional<index_t> d = same_clamp(mina->a, mina->b, minb->a, minb->b)) return d;
  }
  if (maxa && maxb) {
    if (std::optional<index_t> d = same_clamp(maxa->a, maxa->b, maxb->a, maxb->b)) return d;
  }
  // min(p, q) <= p, and max(p, q) >= p: the tightest bound through either side.
  std::optional<index_t> best;
  auto consider = [&](std::optional<index_t> d) {
    if (d && (!best || *d < *best)) best = d;
  };
  if (mina) {
    consider(part(mina->a, lo));
    consider(part(mina->b, lo));
  }
  if (maxb) {
    consider(part(hi, maxb->a));
    consider(part(hi, maxb->b));
  }
  // max(p, q) - r <= max(p - r, q - r), and r - min(p, q) <= max(r - p, r - q): both sides
  // bounded (a window whose high end is the larger of two clamps).
  auto both = [&](const expr& h1, const expr& l1, const expr& h2, const expr& l2) {
    std::optional<index_t> d1 = part(h1, l1);
    if (!d1) return;
    std::optional<index_t> d2 = part(h2, l2);
    if (d2) consider(std::max(*d1, *d2));
  };
  if (maxa) both(maxa->a, lo, maxa->b, lo);
  if (minb) both(hi, minb->a, hi, minb->b);
  return best;
}

// Adds the symbols e reads (variables and buffers whose fields it reads) to `to`.
void add_symbols(const expr& e, std::set<var>& to) {
  if (!e.defined()) return;
  rewrite<variable>(e, [&to](const variable* v, node_mutator&) -> expr {
    to.insert(v->sym);
    return expr(v);
  });
}

expr difference_upper_bound(const expr& hi, const expr& lo) {
  std::optional<index_t> d = difference_bound(hi, lo);
  return d ? expr(*d) : expr();
}

}  // namespace

std::optional<loop_level> bounds_inference::fold_loop(int buffer) const {
  const buffer_node& b = g_.buffers[buffer];
  const std::vector<loop_level>& chain = g_.funcs[b.producer].compute_chain;
  // The outermost loop inside the storage level: the buffer lives across its iterations.
  std::size_t k = 0;
  if (!b.store.root()) {
    auto i = std::find(chain.begin(), chain.end(), b.store);
    if (i == chain.end()) return std::nullopt;
    k = i - chain.begin() + 1;
  }
  if (k >= chain.size()) return std::nullopt;
  return chain[k];
}

std::vector<expr> bounds_inference::fold_factors(int buffer, std::vector<loop_level>& along) const {
  const buffer_node& b = g_.buffers[buffer];
  const int fi = b.producer;
  const func_node& fn = g_.funcs[fi];
  std::vector<expr> result(b.buffer->rank());
  along.assign(b.buffer->rank(), loop_level());
  const std::optional<loop_level> folded_along = fold_loop(buffer);
  if (!folded_along) return result;
  const loop_level l = *folded_along;
  const func::loop_info& info = g_.loop(l);
  // The iterations of a parallel loop that is not pipelined may all run at once.
  if (info.is_parallel() && !pipelined(l)) return result;
  // What is live in one iteration of that loop: the steady window (warm-up and the last
  // iterations only ever need less). A func moved out of a loop to be a stage of a pipelined loop
  // of its own (see refine_placement.h) is computed outside its consumers' inner loops: its
  // steady window is their needs over those whole loops, which do not slide the way the
  // consumers do; what they actually read in one iteration bounds what is live.
  std::vector<interval_expr> actual_needs;
  if (!fn.hoisted_to.root()) {
    actual_needs = needs_of_consumers(fi, view::actual);
    for (interval_expr& i : actual_needs) i = simplify_or_empty(i);
  }
  const std::vector<interval_expr>& live = fn.hoisted_to.root() ? funcs[fi].steady : actual_needs;
  box_expr in_iteration;
  for (const func::output& o : fn.f->outputs()) {
    if (o.buffer.get() != b.buffer.get()) continue;
    for (var v : o.dims) in_iteration.push_back(live[index_of_var(fi, v)]);
  }
  // An upper bound of the extent of window w over the iterations of loop level m given by
  // `range` (undefined if there is none): the interval arithmetic of bounds_of, or the
  // structural difference of its ends, at most the buffer's needed extent and at least 1.
  auto fold_of = [&](const interval_expr& w, std::size_t d, const scratch_bounds& range) -> expr {
    expr extent = simplify(w.max - w.min + 1);
    expr largest = bounds_of(extent, range.map()).max;
    expr difference = difference_upper_bound(w.max, w.min);
    if (difference.defined()) largest = largest.defined() ? min(largest, difference + 1) : difference + 1;
    if (!largest.defined() || is_infinity(largest)) return expr();
    // Never larger than the whole allocation (when the step exceeds the extent).
    return simplify(max(min(largest, needed[buffer][d].extent()), 1));
  };
  // Over the loops inside l, including their warm-up iterations: the func runs in them too
  // (a window moving with both an inner loop and l is wider by the inner warm-up).
  box_expr window = lift(in_iteration, fn.compute_chain, l, view::steady, /*warm_up=*/true);
  scratch_bounds loop_range(*this);
  const var v = g_.loop_var(l);
  loop_range[v] = interval_expr(loop_start(l), loop_bounds(l).max);
  // A pipelined loop has up to `workers` consecutive iterations in flight (its iterations finish
  // in order): what is live is the hull of their windows.
  const index_t workers = info.is_parallel() ? pipeline_workers(l) : 1;
  for (std::size_t d = 0; d < window.size(); ++d) {
    if (!depends_on(window[d], v)) continue;
    if (workers > 1) {
      const interval_expr last = substitute(window[d], v, v + info.step * (workers - 1));
      const monotonic lo = is_monotonic(window[d].min, v);
      const monotonic hi = is_monotonic(window[d].max, v);
      if (lo == monotonic::increasing && hi == monotonic::increasing) {
        window[d].max = simplify(last.max);
      } else if (lo == monotonic::decreasing && hi == monotonic::decreasing) {
        window[d].min = simplify(last.min);
      } else {
        // Not monotonic: the hull of the first and last window need not bound the others.
        continue;
      }
    }
    result[d] = fold_of(window[d], d, loop_range);
    if (result[d].defined()) along[d] = l;
  }

  // The loops inside l. A dimension whose window moves with one of them alone folds along it
  // too, while what the buffer holds never crosses an iteration of a loop further out: every
  // loop out to l is serial (the iterations of a parallel one may run at once, in the same
  // slots), the func does not slide with it or its windows do not overlap between iterations (an
  // iteration computes all it reads of the func), and
  // every consumer is computed inside the loop (none reads the buffer after its iterations).
  // Each iteration of the loop further out then uses the buffer as one stored inside it would.
  // A dimension folded along l keeps that fold (it covers the inner windows).
  if (!fn.hoisted_to.root() || info.is_parallel()) return result;
  const std::vector<loop_level>& chain = fn.compute_chain;
  const std::size_t outer = std::find(chain.begin(), chain.end(), l) - chain.begin();
  // A fold is evaluated where the buffer is allocated: it may read only what the buffer's region
  // and the outer fold's window and loop bounds read there.
  std::set<var> valid;
  for (const interval_expr& i : needed[buffer]) {
    add_symbols(i.min, valid);
    add_symbols(i.max, valid);
  }
  for (const interval_expr& i : window) {
    add_symbols(i.min, valid);
    add_symbols(i.max, valid);
  }
  add_symbols(loop_start(l), valid);
  add_symbols(loop_bounds(l).max, valid);
  valid.erase(v);
  for (std::size_t k = outer + 1; k < chain.size(); ++k) {
    const loop_level prev = chain[k - 1];
    const loop_level inner = chain[k];
    if (g_.loop(prev).is_parallel()) break;
    if (slides_with(fi, prev)) {
      // Sliding computes only what the previous iteration did not: nothing is left to reuse when
      // the windows of all the func's outputs are disjoint between iterations.
      bool overlap = false;
      for (const func::output& o : fn.f->outputs())
        overlap = overlap || windows_overlap(g_.buffer_index(o.buffer.get()), prev);
      if (overlap) break;
    }
    if (g_.loop(inner).is_parallel()) break;
    bool consumers_inside = true;
    for (int c : b.consumers) {
      const std::vector<loop_level>& cc = g_.funcs[c].call_chain;
      consumers_inside = consumers_inside && std::find(cc.begin(), cc.end(), inner) != cc.end();
    }
    if (!consumers_inside) break;
    const box_expr w = lift(in_iteration, chain, inner, view::steady, /*warm_up=*/true);
    const var iv = g_.loop_var(inner);
    scratch_bounds range(*this);
    for (std::size_t j = outer; j <= k; ++j) {
      range[g_.loop_var(chain[j])] = interval_expr(loop_start(chain[j]), loop_bounds(chain[j]).max);
    }
    for (std::size_t d = 0; d < w.size(); ++d) {
      if (result[d].defined() || !depends_on(w[d], iv)) continue;
      bool other_loop = false;
      for (loop_level o : chain) other_loop = other_loop || (o != inner && depends_on(w[d], g_.loop_var(o)));
      if (other_loop) continue;
      expr fold = fold_of(w[d], d, range);
      if (!fold.defined()) continue;
      std::set<var> reads;
      add_symbols(fold, reads);
      if (!std::includes(valid.begin(), valid.end(), reads.begin(), reads.end())) continue;
      result[d] = fold;
      along[d] = inner;
    }
  }
  return result;
}

}  // namespace slinky
