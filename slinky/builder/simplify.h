/// \file
/// The simplifier: rewrites expressions and statements into simpler equivalent ones (constant
/// folding, rewrite rules, facts proven from bounds), and interval arithmetic (bounds_of) and
/// proofs built on it. For example, simplify(min(x + 1, x) * 2) is x * 2.
#ifndef SLINKY_BUILDER_SIMPLIFY_H
#define SLINKY_BUILDER_SIMPLIFY_H

#include <optional>
#include <utility>
#include <vector>

#include "slinky/base/modulus_remainder.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

/// Known bounds of symbols: each value of the symbol is in the interval. An undefined endpoint
/// means that side is unknown; an infinite one that it is unbounded. Symbols without an entry
/// are free: they are unbounded, and results may refer to them.
using bounds_map = symbol_map<interval_expr>;

/// Known alignment of symbols: each value of the symbol is in the set {modulus * k + remainder}.
/// The simplifier derives the alignment of compound expressions with modulus_remainder
/// arithmetic (constants are exact; x * 4 is in (4, 0) whatever x is), and of let symbols and loop
/// variables from their values and bounds (a loop variable is in alignment(min) + (step, 0) for a
/// constant step). It uses alignment to:
/// - fold x % c where the alignment of x fixes its remainder (x in (8, 3): x % 4 is 3);
/// - rewrite (x / c) * c as x - k where x % c is known to be k;
/// - decide x == y and x != y where x - y is never (or always) 0 by alignment, and prove x != 0;
/// - tighten constant bounds of an aligned symbol to its nearest members (x in [0, 10] and
///   (8, 3): [3, 3]).
///
/// Symbols without an entry have no known alignment (modulus 1). Every function below that takes
/// an alignment_map takes its facts as given, like those of bounds: "for every assignment of the
/// symbols within bounds and alignment".
///@{
using alignment_type = modulus_remainder<index_t>;
using alignment_map = symbol_map<alignment_type>;
///@}

/// Returns an expression equal to e for every value of the symbols within `bounds` and
/// `alignment` (ignoring
/// index_t overflow, as the rewrite rules assume unbounded integers), in canonical form:
/// constants folded, constants on the right of commutative operators (and other operands in a
/// fixed order, so x + y and y + x give the same result), and simplified by the rules of
/// simplify_rules_*.h. Infinities are handled symbolically (x + oo is oo for finite x).
/// Simplifying a simplified expression gives a structurally equal one; if nothing changes, the
/// very same node is returned.
expr simplify(const expr& e, const bounds_map& bounds = bounds_map(), const alignment_map& alignment = alignment_map());

/// Simplifies every expression in s (loop variables have the loop's bounds within its body, let
/// symbols the bounds of their values) and simplifies the program's structure: checks proven
/// true, loops proven empty, block elements that become undefined, and buffer declarations
/// (allocate, make_buffer, clone_buffer, crop_*, slice_*, transpose) whose symbol the body does
/// not use are removed; crops to the bounds of the buffer they crop (or beyond) are removed; a
/// loop proven to run exactly once becomes a let of its variable; lets of constants (and of
/// variables that are not redeclared) are substituted, unused lets are removed, and let_stmts at
/// the top of a loop body that do not depend on the loop are hoisted out of the loop. An
/// untouched program comes back as the same node. The result may be undefined (nothing to do).
stmt simplify(const stmt& s, const bounds_map& bounds = bounds_map(), const alignment_map& alignment = alignment_map());

/// Simplifies both endpoints (keeping a point a point).
interval_expr simplify(const interval_expr& i, const bounds_map& bounds = bounds_map(),
                       const alignment_map& alignment = alignment_map());

/// An interval containing the value of e for every assignment of the symbols within `bounds`;
/// the endpoints are simplified expressions of the free symbols (those without bounds) and the
/// symbols used by the bounds, evaluated with the same assignment. Endpoints may be infinite.
/// Tight for monotonic expressions: bounds_of(x - 1) with x in [a, b] is [a - 1, b - 1], and
/// bounds_of(min(x + s - 1, m)) is [min(a + s - 1, m), min(b + s - 1, m)] for free s and m.
interval_expr bounds_of(const expr& e, const bounds_map& bounds = bounds_map(),
                        const alignment_map& alignment = alignment_map());

/// The union of bounds_of(i.min) and bounds_of(i.max): for every assignment within bounds where
/// i is not empty, it contains every point of i.
interval_expr bounds_of(const interval_expr& i, const bounds_map& bounds = bounds_map(),
                        const alignment_map& alignment = alignment_map());

/// True only if e is non-zero for every assignment of the symbols within bounds; false when that
/// is not so or cannot be shown.
bool prove_true(const expr& e, const bounds_map& bounds = bounds_map(),
                const alignment_map& alignment = alignment_map());

/// True if e is provably non-zero (as prove_true), false if it is provably zero for every
/// assignment within bounds, and empty if neither can be shown.
std::optional<bool> attempt_to_prove(const expr& e, const bounds_map& bounds = bounds_map(),
                                     const alignment_map& alignment = alignment_map());

/// True if e is provably zero for every assignment within bounds (attempt_to_prove gives false).
bool prove_false(const expr& e, const bounds_map& bounds = bounds_map(),
                 const alignment_map& alignment = alignment_map());

/// True if a call of fn with constant arguments has a value the simplifier can compute at build
/// time (abs, and_then, or_else): fn is pure and needs no run time state.
bool can_evaluate(intrinsic fn);

/// The best constant bound of e over every value of its symbols (taken as unbounded): a constant,
/// or the infinity on that side if there is no finite constant bound. For example,
/// constant_upper_bound(min(x, 4) * 2) is 8 and constant_lower_bound(min(x, 4)) is -oo.
///@{
expr constant_lower_bound(const expr& e);
expr constant_upper_bound(const expr& e);
///@}
/// The value of e if it simplifies to a constant (it uses no symbols, or they cancel out).
std::optional<index_t> evaluate_constant(const expr& e);
/// The constant bounds above, or nothing where they are infinite.
///@{
std::optional<index_t> evaluate_constant_lower_bound(const expr& e);
std::optional<index_t> evaluate_constant_upper_bound(const expr& e);
///@}

/// The intersection of a and b (the larger min and the smaller max; an undefined end of one takes
/// the other's), simplified.
interval_expr simplify_intersection(const interval_expr& a, const interval_expr& b);

// Per-node simplification: the simplified node of kind T made of the operands given, which are
// taken as already simplified (only the rules of the new node apply; no bounds or alignment of
// symbols are known). op may be null; if it is not, the operands are op's own and no rule
// applies, op itself is returned. For example, simplify(static_cast<const add*>(nullptr), x, 0)
// is x. There is one for each binary operator (SLINKY_FOR_EACH_BINARY_NODE).
#define SLINKY_X(name)                                                                                                 \
  /** The simplified name node of operands a and b, taken as already simplified (only the rules of                     \
   * the new node apply). op may be null; if a and b are op's own and no rule applies, op is returned. */              \
  expr simplify(const class name* op, expr a, expr b);
SLINKY_FOR_EACH_BINARY_NODE(SLINKY_X)
#undef SLINKY_X
/// The simplified !a (a simplified; op: null, or the node it comes from).
expr simplify(const logical_not* op, expr a);
/// The simplified select(c, t, f) (operands simplified; op: null, or the node they come from).
expr simplify(const class select* op, expr c, expr t, expr f);
/// A call of fn (op's intrinsic, which op must then have, in the form without fn).
///@{
expr simplify(const call* op, intrinsic fn, std::vector<expr> args);
expr simplify(const call* op, std::vector<expr> args);
///@}
/// let lets in body, simplified as a whole (simplifying the simplified lets and body again
/// changes nothing): unused lets are removed, lets of constants and variables substituted.
expr simplify(const let* op, std::vector<std::pair<var, expr>> lets, expr body);

// Per-node bounds: an interval containing the value of the node of kind T for every value of its
// operands within the intervals given (undefined ends are unbounded), computed like bounds_of:
// the ends are expressions of the symbols the intervals use. op may be null; only the call forms
// use it (for the intrinsic and a user target). There is one for each binary operator.
#define SLINKY_X(name)                                                                                                 \
  /** An interval containing name(x, y) for every x in a and y in b (undefined ends are unbounded). */                 \
  interval_expr bounds_of(const class name* op, interval_expr a, interval_expr b);
SLINKY_FOR_EACH_BINARY_NODE(SLINKY_X)
#undef SLINKY_X
/// The bounds of !x for every x in a.
interval_expr bounds_of(const logical_not* op, interval_expr a);
/// The bounds of select(x, y, z) for every x in c, y in t and z in f.
interval_expr bounds_of(const class select* op, interval_expr c, interval_expr t, interval_expr f);
/// The bounds of a call of fn (op's intrinsic in the form without fn) for arguments in args.
///@{
interval_expr bounds_of(const call* op, intrinsic fn, std::vector<interval_expr> args);
interval_expr bounds_of(const call* op, std::vector<interval_expr> args);
///@}

}  // namespace slinky

#endif  // SLINKY_BUILDER_SIMPLIFY_H
