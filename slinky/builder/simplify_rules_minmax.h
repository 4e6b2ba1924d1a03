// Rewrite rules for min and max (see rewrite.h for the rule language). Canonical forms: constants
// last and pulled out, common offsets and factors pulled out, clamps written min(max(x, lo), hi).
// The last rules drop an operand that bounds prove is never chosen.
#ifndef SLINKY_BUILDER_SIMPLIFY_RULES_MINMAX_H
#define SLINKY_BUILDER_SIMPLIFY_RULES_MINMAX_H

#include "slinky/builder/rewrite.h"

namespace slinky {
namespace rewrite_rules {

template <typename R>
bool apply_min_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constants and infinities.
      r.rewrite(min(c0, c1), eval(min(c0, c1))) ||
      r.rewrite(min(x, oo), x) ||
      r.rewrite(min(x, -oo), -oo) ||

      // Redundant operands.
      r.rewrite(min(x, x), x) ||
      r.rewrite(min(x, min(x, y)), min(x, y)) ||
      r.rewrite(min(x, max(x, y)), x) ||
      r.rewrite(min(max(x, c0), c1), c1, c1 <= c0) ||
      r.rewrite(min(x, x + c0), x, c0 > 0) ||
      r.rewrite(min(x, x + c0), x + c0, c0 < 0) ||
      r.rewrite(min(min(x, y), min(x, z)), min(x, min(y, z))) ||
      r.rewrite(min(min(x, y), y + c0), min(x, y), c0 > 0) ||
      r.rewrite(min(min(x, y), y + c0), min(x, y + c0), c0 < 0) ||
      r.rewrite(min(min(x, y + c0), y), min(x, y + c0), c0 < 0) ||
      r.rewrite(min(min(x, y + c0), y), min(x, y), c0 > 0) ||

      // Constants move outward.
      r.rewrite(min(min(x, c0), c1), min(x, eval(min(c0, c1)))) ||
      r.rewrite(min(min(x, c0), y), min(min(x, y), c0)) ||
      r.rewrite(min(x + c0, y + c1), min(x, y + eval(c1 - c0)) + c0) ||
      r.rewrite(min(x + c0, c1), min(x, eval(c1 - c0)) + c0) ||
      r.rewrite(min(select(x, c0, c1), c2), select(x, eval(min(c0, c2)), eval(min(c1, c2)))) ||

      // Common terms and monotonic functions move outward.
      r.rewrite(min(x + y, x + z), x + min(y, z)) ||
      r.rewrite(min(x - y, x - z), x - max(y, z)) ||
      r.rewrite(min(x - y, z - y), min(x, z) - y) ||
      r.rewrite(min(x * c0, y * c0), min(x, y) * c0, c0 > 0) ||
      r.rewrite(min(x * c0, y * c0), max(x, y) * c0, c0 < 0) ||
      r.rewrite(min(x / c0, y / c0), min(x, y) / c0, c0 > 0) ||
      r.rewrite(min(x / c0, y / c0), max(x, y) / c0, c0 < 0) ||

      // Bounds.
      r.rewrite(min(x, y), x, is_non_positive(x - y)) ||
      false;
  // clang-format on
}

template <typename R>
bool apply_max_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constants and infinities.
      r.rewrite(max(c0, c1), eval(max(c0, c1))) ||
      r.rewrite(max(x, oo), oo) ||
      r.rewrite(max(x, -oo), x) ||

      // Redundant operands.
      r.rewrite(max(x, x), x) ||
      r.rewrite(max(x, max(x, y)), max(x, y)) ||
      r.rewrite(max(x, min(x, y)), x) ||
      r.rewrite(max(min(x, c0), c1), c1, c0 <= c1) ||
      r.rewrite(max(x, x + c0), x + c0, c0 > 0) ||
      r.rewrite(max(x, x + c0), x, c0 < 0) ||
      r.rewrite(max(max(x, y), max(x, z)), max(x, max(y, z))) ||
      r.rewrite(max(max(x, y), y + c0), max(x, y + c0), c0 > 0) ||
      r.rewrite(max(max(x, y), y + c0), max(x, y), c0 < 0) ||
      r.rewrite(max(max(x, y + c0), y), max(x, y + c0), c0 > 0) ||
      r.rewrite(max(max(x, y + c0), y), max(x, y), c0 < 0) ||

      // Clamps are min(max(x, lo), hi).
      r.rewrite(max(min(x, c0), c1), min(max(x, c1), c0), c1 < c0) ||

      // Constants move outward.
      r.rewrite(max(max(x, c0), c1), max(x, eval(max(c0, c1)))) ||
      r.rewrite(max(max(x, c0), y), max(max(x, y), c0)) ||
      r.rewrite(max(x + c0, y + c1), max(x, y + eval(c1 - c0)) + c0) ||
      r.rewrite(max(x + c0, c1), max(x, eval(c1 - c0)) + c0) ||
      r.rewrite(max(select(x, c0, c1), c2), select(x, eval(max(c0, c2)), eval(max(c1, c2)))) ||

      // Common terms and monotonic functions move outward.
      r.rewrite(max(x + y, x + z), x + max(y, z)) ||
      r.rewrite(max(x - y, x - z), x - min(y, z)) ||
      r.rewrite(max(x - y, z - y), max(x, z) - y) ||
      r.rewrite(max(x * c0, y * c0), max(x, y) * c0, c0 > 0) ||
      r.rewrite(max(x * c0, y * c0), min(x, y) * c0, c0 < 0) ||
      r.rewrite(max(x / c0, y / c0), max(x, y) / c0, c0 > 0) ||
      r.rewrite(max(x / c0, y / c0), min(x, y) / c0, c0 < 0) ||

      // Bounds.
      r.rewrite(max(x, y), x, is_non_negative(x - y)) ||
      false;
  // clang-format on
}

}  // namespace rewrite_rules
}  // namespace slinky

#endif  // SLINKY_BUILDER_SIMPLIFY_RULES_MINMAX_H
