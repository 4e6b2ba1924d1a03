// Rewrite rules for addition and subtraction (see rewrite.h for the rule language). Canonical
// forms: constants are added last (x - c becomes x + -c), and constants are pulled out of sums
// (unless folding them overflowed, hence the !is_constant predicates).
#ifndef SLINKY_BUILDER_SIMPLIFY_RULES_ADD_H
#define SLINKY_BUILDER_SIMPLIFY_RULES_ADD_H

#include "slinky/builder/rewrite.h"

namespace slinky {
namespace rewrite_rules {

template <typename R>
bool apply_add_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constants and infinities.
      r.rewrite(c0 + c1, eval(c0 + c1)) ||
      r.rewrite(oo + oo, oo) ||
      r.rewrite(-oo + -oo, -oo) ||
      r.rewrite(x + oo, oo, is_finite(x)) ||
      r.rewrite(x + -oo, -oo, is_finite(x)) ||
      r.rewrite(x + 0, x) ||

      // Reassociation: constants move outward.
      r.rewrite((x + c0) + c1, x + eval(c0 + c1)) ||
      r.rewrite((c0 - x) + c1, eval(c0 + c1) - x) ||
      r.rewrite((x + c0) + (y + c1), (x + y) + eval(c0 + c1)) ||
      r.rewrite((x + c0) + (c1 - y), (x - y) + eval(c0 + c1)) ||
      r.rewrite((c0 - x) + (c1 - y), eval(c0 + c1) - (x + y)) ||
      r.rewrite((x + c0) + y, (x + y) + c0, !is_constant(y)) ||
      r.rewrite((c0 - x) + y, (y - x) + c0, !is_constant(y)) ||
      r.rewrite(select(x, c0, c1) + c2, select(x, eval(c0 + c2), eval(c1 + c2))) ||

      // Cancellation.
      r.rewrite((x - y) + y, x) ||
      r.rewrite((x - y) + (y - z), x - z) ||

      // Collecting terms.
      r.rewrite(x + x, x * 2) ||
      r.rewrite(x * c0 + x, x * eval(c0 + 1)) ||
      r.rewrite(x * c0 + x * c1, x * eval(c0 + c1)) ||
      r.rewrite(x * y + x * z, x * (y + z)) ||
      r.rewrite(x / c0 * c0 + x % c0, x, c0 != 0) ||

      // Offsets that cancel the offset of a min or max operand.
      r.rewrite(min(x + c0, y) + c1, min(x, y + c1), c0 + c1 == 0) ||
      r.rewrite(max(x + c0, y) + c1, max(x, y + c1), c0 + c1 == 0) ||
      r.rewrite(min(x, y - z) + z, min(x + z, y)) ||
      r.rewrite(max(x, y - z) + z, max(x + z, y)) ||
      false;
  // clang-format on
}

template <typename R>
bool apply_sub_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constants and infinities.
      r.rewrite(c0 - c1, eval(c0 - c1)) ||
      r.rewrite(oo - -oo, oo) ||
      r.rewrite(-oo - oo, -oo) ||
      r.rewrite(oo - x, oo, is_finite(x)) ||
      r.rewrite(-oo - x, -oo, is_finite(x)) ||
      r.rewrite(x - oo, -oo, is_finite(x)) ||
      r.rewrite(x - -oo, oo, is_finite(x)) ||
      r.rewrite(x - 0, x) ||
      r.rewrite(x - c0, x + eval(-c0)) ||
      r.rewrite(x - x, 0) ||

      // Reassociation: constants move outward.
      r.rewrite(c0 - (c1 - x), x + eval(c0 - c1)) ||
      r.rewrite(c0 - (x + c1), eval(c0 - c1) - x) ||
      r.rewrite((x + c0) - (y + c1), (x - y) + eval(c0 - c1)) ||
      r.rewrite((c0 - x) - (c1 - y), (y - x) + eval(c0 - c1)) ||
      r.rewrite((x + c0) - (c1 - y), (x + y) + eval(c0 - c1)) ||
      r.rewrite((c0 - x) - (y + c1), eval(c0 - c1) - (x + y)) ||
      r.rewrite((x + c0) - y, (x - y) + c0) ||
      r.rewrite(x - (y + c0), (x - y) + eval(-c0)) ||
      r.rewrite((c0 - x) - y, c0 - (x + y)) ||
      r.rewrite(x - (c0 - y), (x + y) + eval(-c0)) ||
      r.rewrite(c0 - select(x, c1, c2), select(x, eval(c0 - c1), eval(c0 - c2))) ||
      r.rewrite(0 - x * c0, x * eval(-c0)) ||

      // Cancellation.
      r.rewrite((x + y) - x, y) ||
      r.rewrite(x - (x + y), 0 - y) ||
      r.rewrite((x - y) - x, 0 - y) ||
      r.rewrite(x - (x - y), y) ||
      r.rewrite((x + y) - (x + z), y - z) ||
      r.rewrite((x - y) - (x - z), z - y) ||
      r.rewrite((x - y) - (z - y), x - z) ||
      r.rewrite((x + y) - (x - z), y + z) ||
      r.rewrite((x - y) - (x + z), 0 - (y + z)) ||

      // Collecting terms.
      r.rewrite(x * c0 - x, x * eval(c0 - 1)) ||
      r.rewrite(x - x * c0, x * eval(1 - c0)) ||
      r.rewrite(x * c0 - x * c1, x * eval(c0 - c1)) ||
      r.rewrite(x * y - x * z, x * (y - z)) ||
      r.rewrite(x - x / c0 * c0, x % c0, c0 != 0) ||
      r.rewrite(x - x % c0, x / c0 * c0, c0 != 0) ||

      // Differences of min and max with one of their operands (extents of bounds).
      r.rewrite(min(x, y) - x, min(y - x, 0)) ||
      r.rewrite(max(x, y) - x, max(y - x, 0)) ||
      r.rewrite(x - min(x, y), max(x - y, 0)) ||
      r.rewrite(x - max(x, y), min(x - y, 0)) ||
      r.rewrite(min(x + c0, y) - x, min(y - x, c0)) ||
      r.rewrite(max(x + c0, y) - x, max(y - x, c0)) ||
      r.rewrite(x - min(x + c0, y), max(x - y, eval(-c0))) ||
      r.rewrite(x - max(x + c0, y), min(x - y, eval(-c0))) ||
      r.rewrite(max(x, y) - min(x, y), abs(x - y)) ||
      false;
  // clang-format on
}

}  // namespace rewrite_rules
}  // namespace slinky

#endif  // SLINKY_BUILDER_SIMPLIFY_RULES_ADD_H
