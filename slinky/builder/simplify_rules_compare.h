// Rewrite rules for comparisons (see rewrite.h for the rule language). Canonical forms: a
// constant offset is moved to the side that has a bare constant, or to the right. The last
// rules of each family decide comparisons that bounds prove.
#ifndef SLINKY_BUILDER_SIMPLIFY_RULES_COMPARE_H
#define SLINKY_BUILDER_SIMPLIFY_RULES_COMPARE_H

#include "slinky/builder/rewrite.h"

namespace slinky {
namespace rewrite_rules {

template <typename R>
bool apply_less_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constants and infinities.
      r.rewrite(c0 < c1, eval(c0 < c1)) ||
      r.rewrite(x < oo, 1, is_finite(x)) ||
      r.rewrite(-oo < x, 1, is_finite(x)) ||
      r.rewrite(oo < x, 0) ||
      r.rewrite(x < -oo, 0) ||
      r.rewrite(x < x, 0) ||

      // Offsets.
      r.rewrite(x + c0 < x + c1, eval(c0 < c1)) ||
      r.rewrite(x + c0 < x, eval(c0 < 0)) ||
      r.rewrite(x < x + c0, eval(0 < c0)) ||
      r.rewrite(x + y < x, y < 0) ||
      r.rewrite(x < x + y, 0 < y) ||
      r.rewrite(x + y < x + z, y < z) ||
      r.rewrite(x + c0 < c1, x < eval(c1 - c0)) ||
      r.rewrite(c0 < x + c1, eval(c0 - c1) < x) ||
      r.rewrite(x + c0 < y + c1, x < y + eval(c1 - c0)) ||
      r.rewrite(x + c0 < y, x < y + eval(-c0)) ||
      r.rewrite(c0 - x < c1, eval(c0 - c1) < x) ||
      r.rewrite(c0 < c1 - x, x < eval(c1 - c0)) ||
      r.rewrite(x - y < c0, x < y + c0) ||
      r.rewrite(c0 < x - y, y < x + eval(-c0)) ||

      // Scaling.
      r.rewrite(x * c0 < c1, x<eval((c1 + c0 - 1) / c0), c0> 0) ||
      r.rewrite(c0<x * c1, eval(c0 / c1) < x, c1> 0) ||
      r.rewrite(x * c0 < y * c0, x<y, c0> 0) ||
      r.rewrite(x * c0 < y * c0, y < x, c0 < 0) ||
      r.rewrite(x / c0 < c1, x<eval(c1 * c0), c0> 0) ||
      r.rewrite(c0<x / c1, eval(c0 * c1 + c1 - 1) < x, c1> 0) ||

      // Min and max.
      r.rewrite(min(x, y) < x, y < x) ||
      r.rewrite(x < min(x, y), 0) ||
      r.rewrite(max(x, y) < x, 0) ||
      r.rewrite(x < max(x, y), x < y) ||
      r.rewrite(min(x, c0) < c1, 1, c0 < c1) ||
      r.rewrite(min(x, c0) < c1, x < c1, c1 <= c0) ||
      r.rewrite(max(x, c0) < c1, 0, c1 <= c0) ||
      r.rewrite(max(x, c0) < c1, x < c1, c0 < c1) ||
      r.rewrite(c0 < min(x, c1), 0, c1 <= c0) ||
      r.rewrite(c0 < min(x, c1), c0 < x, c0 < c1) ||
      r.rewrite(c0 < max(x, c1), 1, c0 < c1) ||
      r.rewrite(c0 < max(x, c1), c0 < x, c1 <= c0) ||
      r.rewrite(select(x, c0, c1) < c2, select(x, eval(c0 < c2), eval(c1 < c2))) ||
      r.rewrite(c0 < select(x, c1, c2), select(x, eval(c0 < c1), eval(c0 < c2))) ||

      // Bounds.
      r.rewrite(x < y, 1, is_negative(x - y)) ||
      r.rewrite(x < y, 0, is_non_negative(x - y)) ||
      false;
  // clang-format on
}

template <typename R>
bool apply_less_equal_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constants and infinities.
      r.rewrite(c0 <= c1, eval(c0 <= c1)) ||
      r.rewrite(x <= oo, 1) ||
      r.rewrite(-oo <= x, 1) ||
      r.rewrite(oo <= x, 0, is_finite(x)) ||
      r.rewrite(x <= -oo, 0, is_finite(x)) ||
      r.rewrite(x <= x, 1) ||

      // Offsets.
      r.rewrite(x + c0 <= x + c1, eval(c0 <= c1)) ||
      r.rewrite(x + c0 <= x, eval(c0 <= 0)) ||
      r.rewrite(x <= x + c0, eval(0 <= c0)) ||
      r.rewrite(x + y <= x, y <= 0) ||
      r.rewrite(x <= x + y, 0 <= y) ||
      r.rewrite(x + y <= x + z, y <= z) ||
      r.rewrite(x + c0 <= c1, x <= eval(c1 - c0)) ||
      r.rewrite(c0 <= x + c1, eval(c0 - c1) <= x) ||
      r.rewrite(x + c0 <= y + c1, x <= y + eval(c1 - c0)) ||
      r.rewrite(x + c0 <= y, x <= y + eval(-c0)) ||
      r.rewrite(c0 - x <= c1, eval(c0 - c1) <= x) ||
      r.rewrite(c0 <= c1 - x, x <= eval(c1 - c0)) ||
      r.rewrite(x - y <= c0, x <= y + c0) ||
      r.rewrite(c0 <= x - y, y <= x + eval(-c0)) ||

      // Scaling.
      r.rewrite(x * c0 <= c1, x <= eval(c1 / c0), c0 > 0) ||
      r.rewrite(c0 <= x * c1, eval((c0 + c1 - 1) / c1) <= x, c1 > 0) ||
      r.rewrite(x * c0 <= y * c0, x <= y, c0 > 0) ||
      r.rewrite(x * c0 <= y * c0, y <= x, c0 < 0) ||
      r.rewrite(x / c0 <= c1, x <= eval(c1 * c0 + c0 - 1), c0 > 0) ||
      r.rewrite(c0 <= x / c1, eval(c0 * c1) <= x, c1 > 0) ||

      // Min and max.
      r.rewrite(min(x, y) <= x, 1) ||
      r.rewrite(x <= min(x, y), x <= y) ||
      r.rewrite(max(x, y) <= x, y <= x) ||
      r.rewrite(x <= max(x, y), 1) ||
      r.rewrite(min(x, c0) <= c1, 1, c0 <= c1) ||
      r.rewrite(min(x, c0) <= c1, x <= c1, c1 < c0) ||
      r.rewrite(max(x, c0) <= c1, 0, c1 < c0) ||
      r.rewrite(max(x, c0) <= c1, x <= c1, c0 <= c1) ||
      r.rewrite(c0 <= min(x, c1), 0, c1 < c0) ||
      r.rewrite(c0 <= min(x, c1), c0 <= x, c0 <= c1) ||
      r.rewrite(c0 <= max(x, c1), 1, c0 <= c1) ||
      r.rewrite(c0 <= max(x, c1), c0 <= x, c1 < c0) ||
      r.rewrite(select(x, c0, c1) <= c2, select(x, eval(c0 <= c2), eval(c1 <= c2))) ||
      r.rewrite(c0 <= select(x, c1, c2), select(x, eval(c0 <= c1), eval(c0 <= c2))) ||

      // Bounds.
      r.rewrite(x <= y, 1, is_non_positive(x - y)) ||
      r.rewrite(x <= y, 0, is_positive(x - y)) ||
      false;
  // clang-format on
}

template <typename R>
bool apply_equal_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constants and infinities.
      r.rewrite(c0 == c1, eval(c0 == c1)) ||
      r.rewrite(x == oo, 0, is_finite(x)) ||
      r.rewrite(x == -oo, 0, is_finite(x)) ||
      r.rewrite(x == x, 1) ||

      // Offsets.
      r.rewrite(x == x + c0, 0, c0 != 0) ||
      r.rewrite(x + y == x, y == 0) ||
      r.rewrite(x + y == x + z, y == z) ||
      r.rewrite(x + c0 == c1, x == eval(c1 - c0)) ||
      r.rewrite(x + c0 == y + c1, x == y + eval(c1 - c0)) ||
      r.rewrite(c0 - x == c1, x == eval(c0 - c1)) ||
      r.rewrite(x - y == 0, x == y) ||

      // Scaling.
      r.rewrite(x * c0 == c1, x == eval(c1 / c0), c0 != 0 && c1 % c0 == 0) ||
      r.rewrite(x * c0 == c1, 0, c0 != 0 && c1 % c0 != 0) ||
      r.rewrite(x * c0 == y * c0, x == y, c0 != 0) ||
      r.rewrite(select(x, c0, c1) == c2, select(x, eval(c0 == c2), eval(c1 == c2))) ||

      // Booleans.
      r.rewrite(x == 0, !x, is_boolean(x)) ||
      r.rewrite(x == 1, x, is_boolean(x)) ||

      // Bounds.
      r.rewrite(x == y, 0, is_true(x - y)) ||
      r.rewrite(x == y, 1, is_false(x - y)) ||
      false;
  // clang-format on
}

template <typename R>
bool apply_not_equal_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constants and infinities.
      r.rewrite(c0 != c1, eval(c0 != c1)) ||
      r.rewrite(x != oo, 1, is_finite(x)) ||
      r.rewrite(x != -oo, 1, is_finite(x)) ||
      r.rewrite(x != x, 0) ||

      // Offsets.
      r.rewrite(x != x + c0, 1, c0 != 0) ||
      r.rewrite(x + y != x, y != 0) ||
      r.rewrite(x + y != x + z, y != z) ||
      r.rewrite(x + c0 != c1, x != eval(c1 - c0)) ||
      r.rewrite(x + c0 != y + c1, x != y + eval(c1 - c0)) ||
      r.rewrite(c0 - x != c1, x != eval(c0 - c1)) ||
      r.rewrite(x - y != 0, x != y) ||

      // Scaling.
      r.rewrite(x * c0 != c1, x != eval(c1 / c0), c0 != 0 && c1 % c0 == 0) ||
      r.rewrite(x * c0 != c1, 1, c0 != 0 && c1 % c0 != 0) ||
      r.rewrite(x * c0 != y * c0, x != y, c0 != 0) ||
      r.rewrite(select(x, c0, c1) != c2, select(x, eval(c0 != c2), eval(c1 != c2))) ||

      // Booleans.
      r.rewrite(x != 0, x, is_boolean(x)) ||
      r.rewrite(x != 1, !x, is_boolean(x)) ||

      // Bounds.
      r.rewrite(x != y, 1, is_true(x - y)) ||
      r.rewrite(x != y, 0, is_false(x - y)) ||
      false;
  // clang-format on
}

}  // namespace rewrite_rules
}  // namespace slinky

#endif  // SLINKY_BUILDER_SIMPLIFY_RULES_COMPARE_H
