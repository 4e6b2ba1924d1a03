// The comparison rule families (less, less_equal, equal, not_equal) instantiated for the
// simplifier, in a translation unit of their own because rule lists are slow to compile.
#include "slinky/builder/simplify_rules_compare.h"
#include "slinky/builder/simplify_internal.h"

namespace slinky {
namespace internal {

bool apply_less_rules(rule_applicator& r) { return rewrite_rules::apply_less_rules(r); }
bool apply_less_equal_rules(rule_applicator& r) { return rewrite_rules::apply_less_equal_rules(r); }
bool apply_equal_rules(rule_applicator& r) { return rewrite_rules::apply_equal_rules(r); }
bool apply_not_equal_rules(rule_applicator& r) { return rewrite_rules::apply_not_equal_rules(r); }

}  // namespace internal
}  // namespace slinky
