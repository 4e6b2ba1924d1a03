// Storage folding (docs/builder.md, "Sliding window and folding").
//
// Contract: fold_factors(buffer) runs for each intermediate after both passes of
// bounds_inference, when regions, loop starts, pipelined loops and the buffer's needed region
// are final. An intermediate folds along fold_loop(buffer), the outermost loop inside its
// storage level on its producer's compute chain; in each dimension whose live window moves with
// that loop, the fold factor is an upper bound of the window's extent over the loop (over the
// iterations in flight of a pipelined loop), at most the buffer's needed extent and at least 1.
// A dimension whose extent cannot be bounded, and a buffer that has no such loop or folds along a
// parallel loop that is not pipelined, is not folded (the factor is undefined).
#include <algorithm>
#include <optional>

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

std::vector<expr> bounds_inference::fold_factors(int buffer) const {
  const buffer_node& b = g_.buffers[buffer];
  const int fi = b.producer;
  const func_node& fn = g_.funcs[fi];
  std::vector<expr> result(b.buffer->rank());
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
  box_expr window;
  for (const func::output& o : fn.f->outputs()) {
    if (o.buffer.get() != b.buffer.get()) continue;
    for (var v : o.dims) window.push_back(live[index_of_var(fi, v)]);
  }
  // Over the loops inside l, including their warm-up iterations: the func runs in them too
  // (a window moving with both an inner loop and l is wider by the inner warm-up).
  window = lift(window, fn.compute_chain, l, view::steady, /*warm_up=*/true);
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
    expr extent = simplify(window[d].max - window[d].min + 1);
    expr largest = bounds_of(extent, loop_range.map()).max;

    expr difference = difference_upper_bound(window[d].max, window[d].min);
    if (difference.defined()) largest = largest.defined() ? min(largest, difference + 1) : difference + 1;
    if (!largest.defined() || is_infinity(largest)) continue;
    // Never larger than the whole allocation (when the step exceeds the extent).
    result[d] = simplify(max(min(largest, needed[buffer][d].extent()), 1));
  }
  return result;
}

}  // namespace slinky
