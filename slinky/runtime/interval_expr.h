/// \file
/// Intervals and boxes of expressions (interval_expr, box_expr) and the symbolic dimensions of a
/// buffer (dim_expr). Included by expr.h (include that).
#ifndef SLINKY_RUNTIME_INTERVAL_EXPR_H
#define SLINKY_RUNTIME_INTERVAL_EXPR_H

#include <utility>
#include <vector>

#include "slinky/runtime/expr.h"

namespace slinky {

/// An inclusive interval [min, max] of expressions. It is empty if max < min. An undefined end
/// means unbounded on that side.
class interval_expr {
public:
  ///@{
  /// The ends (inclusive); undefined is unbounded.
  expr min, max;
  ///@}

  /// Both ends undefined (unbounded).
  interval_expr() = default;
  /// The point [point, point] (both ends the same node).
  explicit interval_expr(expr point) : min(point), max(std::move(point)) {}
  /// [min, max].
  interval_expr(expr min, expr max) : min(std::move(min)), max(std::move(max)) {}

  /// [-oo, oo] and [oo, -oo].
  ///@{
  static const interval_expr& all();
  static const interval_expr& none();
  ///@}
  /// none(): x | none() is x.
  static const interval_expr& union_identity() { return none(); }
  /// all(): x & all() is x.
  static const interval_expr& intersection_identity() { return all(); }

  /// A point: both ends are the same node (and defined).
  bool is_point() const { return min.defined() && min.same_as(max); }
  /// Both ends are x.
  bool is_point(expr_ref x) const { return min.same_as(x) && max.same_as(x); }
  /// min if this is a point, else null.
  expr_ref as_point() const { return is_point() ? expr_ref(min) : expr_ref(); }
  /// True if both ends are the same nodes as other's.
  bool same_as(const interval_expr& other) const { return min.same_as(other.min) && max.same_as(other.max); }

  /// max - min + 1 (1 for a point).
  expr extent() const;
  /// min.
  const expr& begin() const { return min; }
  /// max + 1.
  expr end() const;
  /// The interval is empty (as an expression).
  expr empty() const;
  /// min <= x && x <= max, dropping an undefined side (1 if both are undefined).
  expr contains(expr_ref x) const;

  /// Sets max to min + extent - 1.
  interval_expr& set_extent(expr extent);

  /// *this = *this | r, *this & r, *this + r, ... (the operators below).
  ///@{
  interval_expr& operator|=(const interval_expr& r);
  interval_expr& operator&=(const interval_expr& r);
  interval_expr& operator+=(const expr& r);
  interval_expr& operator-=(const expr& r);
  interval_expr& operator*=(const expr& r);
  interval_expr& operator/=(const expr& r);
  ///@}
};

/// Union (the smallest interval containing both; an unbounded side of either stays unbounded)
/// and intersection (an unbounded side takes the other's).
///@{
interval_expr operator|(interval_expr a, const interval_expr& b);
interval_expr operator&(interval_expr a, const interval_expr& b);
///@}
/// Shifts by an expression (undefined ends stay undefined; points stay points).
///@{
interval_expr operator+(interval_expr a, const expr& b);
interval_expr operator-(interval_expr a, const expr& b);
interval_expr operator+(const expr& a, interval_expr b);
interval_expr operator-(const expr& a, const interval_expr& b);
///@}
/// Scales by an expression: an interval containing x * b (or x / b, Euclidean) for every x in a.
/// The ends are swapped when b is provably negative; when the sign of b is unknown, the result
/// is the hull of both orders.
///@{
interval_expr operator*(interval_expr a, const expr& b);
interval_expr operator*(const expr& a, interval_expr b);
interval_expr operator/(interval_expr a, const expr& b);
///@}
/// [-max, -min] (undefined ends stay undefined; a point stays a point).
interval_expr operator-(const interval_expr& a);
/// select(c, t, f) per end (a point if both are points).
interval_expr select(const expr& c, interval_expr t, interval_expr f);
/// The smallest interval of whole multiples of a containing x: [align_down(min, a),
/// align_up(max + 1, a) - 1].
interval_expr align(interval_expr x, const expr& a);

/// The point [x, x].
inline interval_expr point(expr x) { return interval_expr(std::move(x)); }
/// [min, max].
inline interval_expr bounds(expr min, expr max) { return interval_expr(std::move(min), std::move(max)); }
/// [min, min + extent - 1].
interval_expr min_extent(const expr& min, const expr& extent);
/// [begin, end - 1].
interval_expr range(const expr& begin, const expr& end);
/// [buffer_min(buf, dim), buffer_max(buf, dim)].
interval_expr buffer_bounds(var buf, int dim);
/// x clamped to [b.min, b.max] (undefined ends do not clamp).
expr clamp(expr x, const interval_expr& b);

/// One interval per dimension.
using box_expr = std::vector<interval_expr>;
/// Union and intersection per dimension; a box with fewer dims is all() in the dims it lacks.
///@{
box_expr operator|(box_expr a, const box_expr& b);
box_expr operator&(box_expr a, const box_expr& b);
///@}

/// The symbolic description of one dimension of a buffer.
class dim_expr {
public:
  /// The range of coordinates.
  interval_expr bounds;
  /// The stride in bytes (undefined: not constrained).
  expr stride;
  /// The fold factor (undefined: not constrained).
  expr fold_factor;

  /// Everything undefined.
  dim_expr() = default;
  /// The given bounds, stride and fold factor.
  dim_expr(interval_expr bounds, expr stride = expr(), expr fold_factor = expr())
      : bounds(std::move(bounds)), stride(std::move(stride)), fold_factor(std::move(fold_factor)) {}
  /// The constants of a runtime dim (so `b->dim(k) = dim::broadcast();` works).
  dim_expr(const slinky::dim& d);

  /// bounds.min.
  const expr& min() const { return bounds.min; }
  /// bounds.max.
  const expr& max() const { return bounds.max; }
  /// bounds.extent().
  expr extent() const { return bounds.extent(); }
  /// The expression of a per-dimension field (min, max, stride or fold_factor); undefined for
  /// the other fields.
  const expr& get_field(buffer_field field) const;
  /// min == 0 && max == 0 && stride == 0, as an expression.
  expr is_broadcast() const;
  /// True if the bounds, stride and fold factor are the same nodes as other's.
  bool same_as(const dim_expr& other) const {
    return bounds.same_as(other.bounds) && stride.same_as(other.stride) && fold_factor.same_as(other.fold_factor);
  }
};

/// The bounds, stride and fold factor of dimension dim of the buffer bound to buf, as
/// expressions (buffer_bounds, buffer_stride, buffer_fold_factor).
dim_expr buffer_dim(var buf, int dim);
/// buffer_dim(buf, d) for d in [0, rank).
std::vector<dim_expr> buffer_dims(var buf, int rank);
/// The dims of a runtime buffer, as constants.
std::vector<dim_expr> buffer_dims(const raw_buffer& buf);
/// The bounds of each of dims.
box_expr dims_bounds(span<const dim_expr> dims);

}  // namespace slinky

#endif  // SLINKY_RUNTIME_INTERVAL_EXPR_H
