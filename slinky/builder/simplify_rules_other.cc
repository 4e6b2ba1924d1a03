// The min, max, logical, select and abs rule families instantiated for the simplifier, in a
// translation unit of their own because rule lists are slow to compile.
#include "slinky/builder/simplify_internal.h"
#include "slinky/builder/simplify_rules_logical.h"
#include "slinky/builder/simplify_rules_minmax.h"
#include "slinky/builder/simplify_rules_select.h"

namespace slinky {
namespace internal {

bool apply_min_rules(rule_applicator& r) { return rewrite_rules::apply_min_rules(r); }
bool apply_max_rules(rule_applicator& r) { return rewrite_rules::apply_max_rules(r); }
bool apply_logical_and_rules(rule_applicator& r) { return rewrite_rules::apply_logical_and_rules(r); }
bool apply_logical_or_rules(rule_applicator& r) { return rewrite_rules::apply_logical_or_rules(r); }
bool apply_logical_not_rules(rule_applicator& r) { return rewrite_rules::apply_logical_not_rules(r); }
bool apply_select_rules(rule_applicator& r) { return rewrite_rules::apply_select_rules(r); }
bool apply_abs_rules(rule_applicator& r) { return rewrite_rules::apply_abs_rules(r); }

}  // namespace internal
}  // namespace slinky
