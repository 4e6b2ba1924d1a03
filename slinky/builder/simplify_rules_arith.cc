// The arithmetic rule families (add, sub, mul, div, mod) instantiated for the simplifier, in a
// translation unit of their own because rule lists are slow to compile.
#include "slinky/builder/simplify_internal.h"
#include "slinky/builder/simplify_rules_add.h"
#include "slinky/builder/simplify_rules_divmod.h"
#include "slinky/builder/simplify_rules_mul.h"

namespace slinky {
namespace internal {

bool apply_add_rules(rule_applicator& r) { return rewrite_rules::apply_add_rules(r); }
bool apply_sub_rules(rule_applicator& r) { return rewrite_rules::apply_sub_rules(r); }
bool apply_mul_rules(rule_applicator& r) { return rewrite_rules::apply_mul_rules(r); }
bool apply_div_rules(rule_applicator& r) { return rewrite_rules::apply_div_rules(r); }
bool apply_mod_rules(rule_applicator& r) { return rewrite_rules::apply_mod_rules(r); }

}  // namespace internal
}  // namespace slinky
