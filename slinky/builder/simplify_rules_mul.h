// Rewrite rules for multiplication (see rewrite.h for the rule language). Canonical forms:
// constant factors last and pulled out of products, and products of sums with constants
// distributed.
#ifndef SLINKY_BUILDER_SIMPLIFY_RULES_MUL_H
#define SLINKY_BUILDER_SIMPLIFY_RULES_MUL_H

#include "slinky/builder/rewrite.h"

namespace slinky {
namespace rewrite_rules {

template <typename R>
bool apply_mul_rules(R& r) {
  using namespace wildcards;
  // clang-format off
  return
      // Constants and infinities.
      r.rewrite(c0 * c1, eval(c0 * c1)) ||
      r.rewrite(oo * oo, oo) ||
      r.rewrite(-oo * -oo, oo) ||
      r.rewrite(oo * -oo, -oo) ||
      r.rewrite(oo * c0, oo, c0 > 0) ||
      r.rewrite(oo * c0, -oo, c0 < 0) ||
      r.rewrite(-oo * c0, -oo, c0 > 0) ||
      r.rewrite(-oo * c0, oo, c0 < 0) ||
      r.rewrite(x * 0, 0) ||
      r.rewrite(x * 1, x) ||
      r.rewrite(x * -1, 0 - x) ||

      // Reassociation and distribution of constants.
      r.rewrite((x * c0) * c1, x * eval(c0 * c1)) ||
      r.rewrite((x + c0) * c1, x * c1 + eval(c0 * c1)) ||
      r.rewrite((c0 - x) * c1, eval(c0 * c1) - x * c1) ||
      r.rewrite((x * c0) * y, (x * y) * c0, !is_constant(y)) ||
      r.rewrite(select(x, c0, c1) * c2, select(x, eval(c0 * c2), eval(c1 * c2))) ||
      false;
  // clang-format on
}

}  // namespace rewrite_rules
}  // namespace slinky

#endif  // SLINKY_BUILDER_SIMPLIFY_RULES_MUL_H
