// Rewrite rules for Euclidean division and modulo (see rewrite.h for the rule language): the
// remainder is in [0, |d|), x / 0 == x % 0 == 0. Rules that move a multiplication through a
// division apply only where the division is exact.
#ifndef SLINKY_BUILDER_SIMPLIFY_RULES_DIVMOD_H
#define SLINKY_BUILDER_SIMPLIFY_RULES_DIVMOD_H

#include "slinky/builder/rewrite.h"

namespace slinky {
namespace rewrite_rules {

template <typename R>
bool apply_div_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constants and infinities.
      r.rewrite(c0 / c1, eval(c0 / c1)) ||
      r.rewrite(oo / c0, oo, c0 > 0) ||
      r.rewrite(oo / c0, -oo, c0 < 0) ||
      r.rewrite(-oo / c0, -oo, c0 > 0) ||
      r.rewrite(-oo / c0, oo, c0 < 0) ||
      r.rewrite(x / 0, 0) ||
      r.rewrite(0 / x, 0) ||
      r.rewrite(x / 1, x) ||
      r.rewrite(x / -1, 0 - x) ||
      r.rewrite(x / x, 1, is_true(x)) ||

      // Exact divisions.
      r.rewrite((x * c0) / c1, x * eval(c0 / c1), c1 != 0 && c0 % c1 == 0) ||
      r.rewrite((x * c0) / c1, x / eval(c1 / c0), c0 > 0 && c1 % c0 == 0) ||
      r.rewrite((x + y * c0) / c0, x / c0 + y, c0 != 0) ||
      r.rewrite((x + c0) / c1, x / c1 + eval(c0 / c1), c1 != 0 && c0 % c1 == 0) ||
      r.rewrite((x / c0) / c1, x / eval(c0 * c1), c0 > 0 && c1 > 0) ||
      r.rewrite(select(x, c0, c1) / c2, select(x, eval(c0 / c2), eval(c1 / c2))) ||

      // Divisions of values known to be in [-c0, c0).
      r.rewrite(x / c0, 0, c0 > 0 && is_non_negative(x) && is_negative(x - c0)) ||
      r.rewrite(x / c0, -1, c0 > 0 && is_negative(x) && is_non_negative(x + c0)) ||
      false;
  // clang-format on
}

template <typename R>
bool apply_mod_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constants.
      r.rewrite(c0 % c1, eval(c0 % c1)) ||
      r.rewrite(x % 0, 0) ||
      r.rewrite(x % 1, 0) ||
      r.rewrite(x % -1, 0) ||
      r.rewrite(0 % x, 0) ||
      r.rewrite(x % x, 0) ||
      r.rewrite(x % c0, x % eval(-c0), c0 < 0) ||

      // Multiples of the modulus.
      r.rewrite((x * c0) % c1, 0, c1 != 0 && c0 % c1 == 0) ||
      r.rewrite((x + y * c0) % c0, x % c0) ||
      r.rewrite((x + c0) % c1, (x + eval(c0 % c1)) % c1, c1 > 0 && (c0 < 0 || c1 <= c0)) ||
      r.rewrite((x % c0) % c1, x % c1, c0 != 0 && c1 != 0 && c0 % c1 == 0) ||
      r.rewrite(select(x, c0, c1) % c2, select(x, eval(c0 % c2), eval(c1 % c2))) ||

      // Values known to be in [0, c0).
      r.rewrite(x % c0, x, c0 > 0 && is_non_negative(x) && is_negative(x - c0)) ||
      false;
  // clang-format on
}

}  // namespace rewrite_rules
}  // namespace slinky

#endif  // SLINKY_BUILDER_SIMPLIFY_RULES_DIVMOD_H
