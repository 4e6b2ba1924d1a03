/// \file
/// Structural comparison and substitution of IR nodes: match and compare (a total order on
/// expressions and statements), substitute (a symbol by an expression, respecting shadowing),
/// substitute_buffer (a buffer's metadata by expressions) and structural substitution.
#ifndef SLINKY_BUILDER_SUBSTITUTE_H
#define SLINKY_BUILDER_SUBSTITUTE_H

#include <vector>

#include "slinky/runtime/expr.h"
#include "slinky/runtime/node_mutator.h"
#include "slinky/runtime/stmt.h"
#include "slinky/runtime/substitutor.h"

namespace slinky {

/// Structural equality. `match(const expr&, const expr&)` and `compare(const expr&, const expr&)`
/// are declared in runtime/expr.h; the overloads here cover references, symbols and constants
/// (a var matches the variable node reading its value, an integer the constant node of that
/// value; a var never matches an integer), statements, intervals, dims and boxes. Undefined nodes
/// match only undefined nodes.
///@{
bool match(expr_ref a, expr_ref b);
bool match(expr_ref a, const expr& b);
bool match(const expr& a, expr_ref b);
bool match(expr_ref a, var b);
bool match(const expr& a, var b);
bool match(var a, expr_ref b);
bool match(var a, const expr& b);
bool match(var a, var b);
bool match(expr_ref a, index_t b);
bool match(const expr& a, index_t b);
bool match(index_t a, expr_ref b);
bool match(index_t a, const expr& b);
bool match(var a, index_t b);
bool match(index_t a, var b);
bool match(stmt_ref a, stmt_ref b);
bool match(const interval_expr& a, const interval_expr& b);
bool match(const dim_expr& a, const dim_expr& b);
bool match(const box_expr& a, const box_expr& b);
///@}

/// A total order: 0 if a and b match, negative if a comes first, positive otherwise. Symbols
/// are ordered by id. Nodes are ordered by kind, then field by field. What cannot be compared
/// structurally is ordered by identity: user call targets (call, call_stmt) and copy
/// implementations are equal only if both are empty or they belong to the same node.
/// constant_buffer values are compared by contents: element size, rank, bounds, then the
/// elements (strides and fold factors are layout and do not count).
///@{
int compare(const var& a, const var& b);
int compare(expr_ref a, expr_ref b);
int compare(expr_ref a, const expr& b);
int compare(const expr& a, expr_ref b);
int compare(stmt_ref a, stmt_ref b);
///@}

/// A comparator for ordered containers of vars, expressions or statements, by compare.
struct node_less {
  /// True if a comes before b (compare(a, b) < 0; vars by id).
  ///@{
  bool operator()(const var& a, const var& b) const { return a < b; }
  bool operator()(expr_ref a, expr_ref b) const { return compare(a, b) < 0; }
  bool operator()(const expr& a, const expr& b) const { return compare(a, b) < 0; }
  bool operator()(stmt_ref a, stmt_ref b) const { return compare(a, b) < 0; }
  bool operator()(const stmt& a, const stmt& b) const { return compare(stmt_ref(a), stmt_ref(b)) < 0; }
  ///@}
};

/// substitute(expr | stmt | interval_expr, var, const expr&) is declared in runtime/node_mutator.h
/// (see there: shadowing is respected, and a buffer replaced by another symbol takes its metadata
/// reads along). This adds the dims.
dim_expr substitute(const dim_expr& d, var target, const expr& replacement);

/// Replaces the reads of buffer's metadata in e (or s) by the given description, in the scope
/// where buffer is not redeclared:
/// - buffer_min/max/stride/fold_factor(buffer, d) by the field of dims[d], if d < dims.size() and
///   that field is defined;
/// - buffer_elem_size(buffer) by elem_size, if defined;
/// - buffer_rank(buffer) by def's rank if def is defined, else by dims.size();
/// - without def, buffer_stride(buffer, d) for d >= dims.size() by 0: dims then describes the
///   whole buffer, and a dimension beyond its rank is an implicit broadcast;
/// - reads not given above (undefined fields, dimensions beyond dims, an undefined elem_size) by
///   the same read of def, if def is defined; otherwise they are left alone. buffer_size_bytes and
///   other uses of buffer (its value, buffer_at, calls, copies) are always left alone.
/// Typically def is the buffer a crop or slice was made from: substituting the crop's bounds with
/// def = its source describes the crop without the crop's symbol.
///@{
expr substitute_buffer(const expr& e, var buffer, const expr& elem_size, const std::vector<dim_expr>& dims,
                       var def = var());
expr substitute_buffer(const expr& e, var buffer, const std::vector<dim_expr>& dims, var def = var());
interval_expr substitute_buffer(const interval_expr& e, var buffer, const expr& elem_size,
                                const std::vector<dim_expr>& dims, var def = var());
interval_expr substitute_buffer(const interval_expr& e, var buffer, const std::vector<dim_expr>& dims, var def = var());
stmt substitute_buffer(const stmt& s, var buffer, const expr& elem_size, const std::vector<dim_expr>& dims,
                       var def = var());
stmt substitute_buffer(const stmt& s, var buffer, const std::vector<dim_expr>& dims, var def = var());
///@}

/// Dims with the given bounds and undefined strides and fold factors (for substitute_buffer: the
/// strides and fold factors are then def's).
std::vector<dim_expr> make_dims_from_bounds(const box_expr& bounds);
/// dim + 1 dims, all undefined except dimension `dim`, which has the given bounds (the dims of a
/// crop_dim); no dims for a negative dim.
std::vector<dim_expr> make_dims_from_bounds(int dim, const interval_expr& bounds);

/// Replaces every subexpression of e that matches target by replacement, outermost first (a
/// replacement is not searched again). Purely structural: shadowing is ignored. Undefined
/// targets replace nothing.
expr substitute(const expr& e, const expr& target, const expr& replacement);

}  // namespace slinky

#endif  // SLINKY_BUILDER_SUBSTITUTE_H
