// Rewrite rules for select and abs (see rewrite.h for the rule language). The condition of a
// select is true when non-zero.
#ifndef SLINKY_BUILDER_SIMPLIFY_RULES_SELECT_H
#define SLINKY_BUILDER_SIMPLIFY_RULES_SELECT_H

#include "slinky/builder/rewrite.h"

namespace slinky {
namespace rewrite_rules {

template <typename R>
bool apply_select_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constant or redundant conditions.
      r.rewrite(select(c0, x, y), x, c0 != 0) ||
      r.rewrite(select(c0, x, y), y, c0 == 0) ||
      r.rewrite(select(x, y, y), y) ||
      r.rewrite(select(x, 1, 0), x != 0) ||
      r.rewrite(select(x, 0, 1), !x) ||
      r.rewrite(select(!x, y, z), select(x, z, y)) ||
      r.rewrite(select(x != 0, y, z), select(x, y, z)) ||
      r.rewrite(select(x == 0, y, z), select(x, z, y)) ||
      r.rewrite(select(x, select(x, y, z), w), select(x, y, w)) ||
      r.rewrite(select(x, y, select(x, z, w)), select(x, y, w)) ||

      // Common terms move outward.
      r.rewrite(select(x, y + z, y + w), y + select(x, z, w)) ||
      r.rewrite(select(x, y - z, y - w), y - select(x, z, w)) ||
      r.rewrite(select(x, y - z, w - z), select(x, y, w) - z) ||

      // Min and max.
      r.rewrite(select(x < y, x, y), min(x, y)) ||
      r.rewrite(select(x < y, y, x), max(x, y)) ||
      r.rewrite(select(x <= y, x, y), min(x, y)) ||
      r.rewrite(select(x <= y, y, x), max(x, y)) ||

      // Bounds.
      r.rewrite(select(x, y, z), y, is_true(x)) ||
      r.rewrite(select(x, y, z), z, is_false(x)) ||
      false;
  // clang-format on
}

template <typename R>
bool apply_abs_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      r.rewrite(abs(c0), eval(abs(c0))) ||
      r.rewrite(abs(oo), oo) ||
      r.rewrite(abs(-oo), oo) ||
      r.rewrite(abs(abs(x)), abs(x)) ||
      r.rewrite(abs(0 - x), abs(x)) ||
      r.rewrite(abs(x * c0), abs(x) * eval(abs(c0))) ||
      r.rewrite(abs(x), x, is_non_negative(x)) ||
      r.rewrite(abs(x), 0 - x, is_non_positive(x)) ||
      false;
  // clang-format on
}

}  // namespace rewrite_rules
}  // namespace slinky

#endif  // SLINKY_BUILDER_SIMPLIFY_RULES_SELECT_H
