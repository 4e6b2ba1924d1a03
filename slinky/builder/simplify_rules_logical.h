// Rewrite rules for logical and, or and not (see rewrite.h for the rule language). Operands are
// true when non-zero and results are 0 or 1, so `x && 1` is `x != 0`, which is `x` only when x
// is boolean.
#ifndef SLINKY_BUILDER_SIMPLIFY_RULES_LOGICAL_H
#define SLINKY_BUILDER_SIMPLIFY_RULES_LOGICAL_H

#include "slinky/builder/rewrite.h"

namespace slinky {
namespace rewrite_rules {

template <typename R>
bool apply_logical_and_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constants.
      r.rewrite(c0 && c1, eval(c0 && c1)) ||
      r.rewrite(x && 0, 0) ||
      r.rewrite(x && c0, x != 0, c0 != 0) ||

      // Redundant operands.
      r.rewrite(x && x, x != 0) ||
      r.rewrite(x && !x, 0) ||
      r.rewrite(x && (x && y), x && y) ||
      r.rewrite(x && (x || y), x != 0) ||
      r.rewrite(x && (!x || y), x && y) ||
      r.rewrite(!x && !y, !(x || y)) ||

      // Comparisons of the same values.
      r.rewrite(x < y && y < x, 0) ||
      r.rewrite(x < y && y <= x, 0) ||
      r.rewrite(x <= y && y <= x, x == y) ||
      r.rewrite(x < c0 && x < c1, x < eval(min(c0, c1))) ||
      r.rewrite(c0 < x && c1 < x, eval(max(c0, c1)) < x) ||
      r.rewrite(x <= c0 && x <= c1, x <= eval(min(c0, c1))) ||
      r.rewrite(c0 <= x && c1 <= x, eval(max(c0, c1)) <= x) ||
      r.rewrite(x < c0 && c1 < x, 0, c0 <= c1 + 1) ||
      r.rewrite(x <= c0 && c1 <= x, 0, c0 < c1) ||
      r.rewrite(x < c0 && c1 <= x, 0, c0 <= c1) ||
      r.rewrite(x <= c0 && c1 < x, 0, c0 <= c1) ||
      r.rewrite(x == c0 && x == c1, 0, c0 != c1) ||

      // Bounds.
      r.rewrite(x && y, y != 0, is_true(x)) ||
      r.rewrite(x && y, 0, is_false(x)) ||
      false;
  // clang-format on
}

template <typename R>
bool apply_logical_or_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constants.
      r.rewrite(c0 || c1, eval(c0 || c1)) ||
      r.rewrite(x || 0, x != 0) ||
      r.rewrite(x || c0, 1, c0 != 0) ||

      // Redundant operands.
      r.rewrite(x || x, x != 0) ||
      r.rewrite(x || !x, 1) ||
      r.rewrite(x || (x || y), x || y) ||
      r.rewrite(x || (x && y), x != 0) ||
      r.rewrite(x || (!x && y), x || y) ||
      r.rewrite(!x || !y, !(x && y)) ||

      // Comparisons of the same values.
      r.rewrite(x < y || y < x, x != y) ||
      r.rewrite(x < y || y <= x, 1) ||
      r.rewrite(x <= y || y <= x, 1) ||
      r.rewrite(x < c0 || x < c1, x < eval(max(c0, c1))) ||
      r.rewrite(c0 < x || c1 < x, eval(min(c0, c1)) < x) ||
      r.rewrite(x <= c0 || x <= c1, x <= eval(max(c0, c1))) ||
      r.rewrite(c0 <= x || c1 <= x, eval(min(c0, c1)) <= x) ||
      r.rewrite(x < c0 || c1 < x, 1, c1 < c0) ||
      r.rewrite(x <= c0 || c1 <= x, 1, c1 <= c0 + 1) ||
      r.rewrite(x < c0 || c1 <= x, 1, c1 <= c0) ||
      r.rewrite(x <= c0 || c1 < x, 1, c1 <= c0) ||
      r.rewrite(x != c0 || x != c1, 1, c0 != c1) ||

      // Bounds.
      r.rewrite(x || y, 1, is_true(x)) ||
      r.rewrite(x || y, y != 0, is_false(x)) ||
      false;
  // clang-format on
}

template <typename R>
bool apply_logical_not_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      r.rewrite(!c0, eval(c0 == 0)) ||
      r.rewrite(!!x, x != 0) ||
      r.rewrite(!(x < y), y <= x) ||
      r.rewrite(!(x <= y), y < x) ||
      r.rewrite(!(x == y), x != y) ||
      r.rewrite(!(x != y), x == y) ||
      false;
  // clang-format on
}

}  // namespace rewrite_rules
}  // namespace slinky

#endif  // SLINKY_BUILDER_SIMPLIFY_RULES_LOGICAL_H
