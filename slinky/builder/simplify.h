// The simplifier: rewrites expressions and statements into simpler equivalent ones (constant
// folding, rewrite rules, facts proven from bounds), and interval arithmetic (bounds_of) and
// proofs built on it. For example, simplify(min(x + 1, x) * 2) is x * 2.
#ifndef SLINKY_BUILDER_SIMPLIFY_H
#define SLINKY_BUILDER_SIMPLIFY_H

#include <optional>

#include "slinky/builder/symbol_map.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

// Known bounds of symbols: each value of the symbol is in the interval. An undefined endpoint
// means that side is unknown; an infinite one that it is unbounded. Symbols without an entry
// are free: they are unbounded, and results may refer to them.
using bounds_map = symbol_map<interval_expr>;

// Returns an expression equal to e for every value of the symbols within `bounds` (ignoring
// index_t overflow, as the rewrite rules assume unbounded integers), in canonical form:
// constants folded, constants on the right of commutative operators (and other operands in a
// fixed order, so x + y and y + x give the same result), and simplified by the rules of
// simplify_rules_*.h. Infinities are handled symbolically (x + oo is oo for finite x).
// Simplifying a simplified expression gives a structurally equal one; if nothing changes, the
// very same node is returned.
expr simplify(const expr& e, const bounds_map& bounds = bounds_map());

// Simplifies every expression in s (loop variables have the loop's bounds within its body, let
// symbols the bounds of their values) and simplifies the program's structure: checks proven
// true, loops proven empty, block elements that become undefined, and buffer declarations
// (allocate, make_buffer, clone_buffer, crop_*, slice_*, transpose) whose symbol the body does
// not use are removed; crops to the bounds of the buffer they crop (or beyond) are removed; a
// loop proven to run exactly once becomes a let of its variable; lets of constants (and of
// variables that are not redeclared) are substituted, unused lets are removed, and let_stmts at
// the top of a loop body that do not depend on the loop are hoisted out of the loop. An
// untouched program comes back as the same node. The result may be undefined (nothing to do).
stmt simplify(const stmt& s, const bounds_map& bounds = bounds_map());

// Simplifies both endpoints (keeping a point a point).
interval_expr simplify(const interval_expr& i, const bounds_map& bounds = bounds_map());

// An interval containing the value of e for every assignment of the symbols within `bounds`;
// the endpoints are simplified expressions of the free symbols (those without bounds) and the
// symbols used by the bounds, evaluated with the same assignment. Endpoints may be infinite.
// Tight for monotonic expressions: bounds_of(x - 1) with x in [a, b] is [a - 1, b - 1], and
// bounds_of(min(x + s - 1, m)) is [min(a + s - 1, m), min(b + s - 1, m)] for free s and m.
interval_expr bounds_of(const expr& e, const bounds_map& bounds = bounds_map());

// The union of bounds_of(i.min) and bounds_of(i.max): for every assignment within bounds where
// i is not empty, it contains every point of i.
interval_expr bounds_of(const interval_expr& i, const bounds_map& bounds = bounds_map());

// True only if e is non-zero for every assignment of the symbols within bounds; false when that
// is not so or cannot be shown.
bool prove_true(const expr& e, const bounds_map& bounds = bounds_map());

// True if e is provably non-zero (as prove_true), false if it is provably zero for every
// assignment within bounds, and empty if neither can be shown.
std::optional<bool> attempt_to_prove(const expr& e, const bounds_map& bounds = bounds_map());

}  // namespace slinky

#endif  // SLINKY_BUILDER_SIMPLIFY_H
