// Internal to the builder (not installed): the maps from a copy's destination coordinates to its
// source's that let the destination be a view of the source (alias.cc, "From the source";
// docs/copies.md): linear maps, and the flat index of a reshape.
#ifndef SLINKY_BUILDER_ALIAS_VIEWS_H
#define SLINKY_BUILDER_ALIAS_VIEWS_H

#include <functional>
#include <optional>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/runtime/expr.h"

namespace slinky {

// True if i is one point (its ends the same expression, or proven equal by match).
bool is_point_interval(const interval_expr& i);

// src_x[k] = sum over j of coeff[k][j] * x[j] + (src_x[k] at x = 0), with coefficients free of
// x: a view of the source indexed by x has stride sum over k of coeff[k][j] * the source's
// stride k in dimension j. A coefficient that is not a constant (a stride or dilation given at
// run time) may use only the variables `invariant` accepts (defined wherever the view is made,
// with one value for the whole copy); such a coefficient may be 0 at run time.
struct linear_map {
  std::vector<std::vector<expr>> coeff;
  std::vector<expr> at;

  // Matches the source coordinates of `in` against x; false if one is not linear in x with
  // coefficients `invariant` accepts.
  bool match(const func::input& in, const std::vector<var>& x, const std::function<bool(const expr&)>& invariant);
};

// A reshape's destination as a view of its source.
struct reshape_view {
  // The source's coordinates of the destination's min (the view's base).
  std::vector<expr> src_at;
  // The destination's dims: its region, strides F's coefficients times the element size.
  std::vector<dim_expr> dims;
  // The strides (bytes) the source's allocation must have: Q_k times the element size (where
  // the condition holds).
  std::vector<expr> strides;
  // Undefined if the view is proven exact. Otherwise what remains to check at run time: each
  // radix that is not proven to fit is at least 1 and at least the extent of the source's region
  // in its dim. Where it does not hold, the view is not exact (a radix 0 makes every higher digit
  // 0, a negative one breaks the mixed radix: the flat index is then not sum_k digit_k * Q_k),
  // and the copy must run.
  expr condition;
};

// The view, if the copy from `src` (read at one point per dim, src_x, of the destination's
// variables x) into `dst` is a reshape whose destination can address the source by its flat index:
// each src coordinate is a digit (F / Q_k) % E_k of one flat index F of the destination, the last
// without %, and these are proven: Q_0 = 1 and Q_k+1 = Q_k * E_k, each digit's linear form equals
// F modulo Q_k * E_k, each radix but the last is at least 1 and at least the extent of the
// source's region in that dim (src_region), and the divisors, radices and F's coefficients are
// `known_here` (one value for the whole copy, defined where the source is allocated). Then the
// source allocated with strides Q_k elements holds its element at the digits of F F elements
// after its element at digits 0, and the destination over dst_region is the view returned.
// Radices that are not proven to fit (values known only at run time, such as extents, which may
// be 0) make the view conditional (reshape_view::condition) rather than impossible.
std::optional<reshape_view> match_reshape_view(const buffer_expr& src, const buffer_expr& dst,
                                               const std::vector<expr>& src_x, const std::vector<var>& x,
                                               const box_expr& src_region, const box_expr& dst_region,
                                               const std::function<bool(const expr&)>& known_here);

}  // namespace slinky

#endif  // SLINKY_BUILDER_ALIAS_VIEWS_H
