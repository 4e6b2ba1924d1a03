// Compatibility tests for slinky/builder/substitute.h, builder/node_mutator.h and the extended
// builder/simplify.h (docs/api.md section 1; checklist item 18 of README.md).
#include <gtest/gtest.h>

#include <initializer_list>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>
#include <vector>

#include "slinky/base/modulus_remainder.h"
#include "slinky/builder/node_mutator.h"
#include "slinky/builder/simplify.h"
#include "slinky/builder/substitute.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"

namespace {

using namespace slinky;

index_t eval(const expr& e, std::initializer_list<std::pair<var, index_t>> values = {}) {
  eval_context ctx;
  for (const auto& v : values) ctx[v.first] = v.second;
  return evaluate(e, ctx);
}

// Renames one variable.
class renamer : public node_mutator {
  var from_, to_;

public:
  renamer(var from, var to) : from_(from), to_(to) {}
  using node_mutator::visit;
  void visit(const variable* op) override {
    if (op->sym == from_ && op->field == buffer_field::none) {
      set_result(variable::make(to_));
    } else {
      set_result(expr(op));
    }
  }
};

}  // namespace

TEST(compat_substitute, match_compare_node_less) {
  var x(0), y(1);
  EXPECT_TRUE(match(expr(x) + 1, expr(x) + 1));
  EXPECT_FALSE(match(expr(x) + 1, expr(y) + 1));
  EXPECT_EQ(compare(x, x), 0);
  EXPECT_NE(compare(x, y), 0);
  EXPECT_EQ(compare(expr(x) * 2, expr(x) * 2), 0);
  EXPECT_EQ(compare(expr(x) * 2, expr(y) * 2), -compare(expr(y) * 2, expr(x) * 2));
  std::set<expr, node_less> s = {expr(x) + 1, expr(x) + 1, expr(y)};
  EXPECT_EQ(s.size(), 2u);
  static_assert(std::is_base_of_v<node_mutator, substitutor>, "substitutor is a node_mutator");
}

TEST(compat_substitute, substitute_respects_shadowing) {
  var x(0), y(1), z(2);
  expr e = substitute(expr(x) + y, x, 3);
  EXPECT_EQ(eval(e, {{y, 4}}), 7);
  // let x = 1 in x + y: the x inside is not the one substituted.
  expr shadowed = let::make(x, 1, expr(x) + y);
  EXPECT_EQ(eval(substitute(shadowed, x, 100), {{y, 4}}), 5);
  // Structural substitution of a sub-expression.
  expr structural = substitute(expr(x) * 2 + y, expr(x) * 2, expr(z));
  EXPECT_EQ(eval(structural, {{x, 100}, {y, 1}, {z, 2}}), 3);
  interval_expr i = substitute(bounds(x, expr(x) + 5), x, 2);
  EXPECT_EQ(eval(i.max), 7);
}

TEST(compat_substitute, substitute_buffer_and_dims_from_bounds) {
  var b(0);
  const std::vector<dim_expr> dims = {dim_expr(bounds(2, 9), 4), dim_expr(bounds(0, 3), 32)};
  expr e = substitute_buffer(buffer_min(b, 0) + buffer_extent(b, 1) * 10 + buffer_stride(b, 1), b, dims);
  EXPECT_EQ(eval(e), 2 + 40 + 32);
  std::vector<dim_expr> from_box = make_dims_from_bounds({bounds(1, 4), bounds(-2, 2)});
  ASSERT_EQ(from_box.size(), 2u);
  EXPECT_EQ(eval(from_box[1].min()), -2);
  EXPECT_EQ(eval(from_box[1].max()), 2);
}

TEST(compat_node_mutator, forwarding_header) {
  var x(0), y(1);
  renamer r(x, y);
  expr e = r.mutate(expr(x) * 3 + 1);
  EXPECT_EQ(eval(e, {{x, 100}, {y, 2}}), 7);
  // Unchanged nodes come back as the same node.
  expr unchanged = expr(y) + 1;
  EXPECT_TRUE(r.mutate(unchanged).same_as(unchanged));
}

TEST(compat_simplify, bounds_alignment_and_proofs) {
  var x(0), y(1);
  EXPECT_EQ(as_constant(simplify(expr(x) + 1 - x)), 1);
  alignment_map alignment;
  alignment[x] = alignment_type(4, 0);
  EXPECT_EQ(as_constant(simplify(expr(x) % 4, bounds_map(), alignment)), 0);
  bounds_map bounds_of_x = {{x, bounds(0, 5)}};
  interval_expr b = bounds_of(expr(x) * 2 + 1, bounds_of_x);
  EXPECT_EQ(as_constant(simplify(b.min)), 1);
  EXPECT_EQ(as_constant(simplify(b.max)), 11);
  EXPECT_TRUE(prove_true(expr(x) + 1 > x));
  EXPECT_TRUE(prove_false(expr(x) < x));
  EXPECT_FALSE(prove_true(expr(x) < y));
  EXPECT_TRUE(prove_true(expr(x) % 4 == 0, bounds_map(), alignment));
  std::optional<bool> proved = attempt_to_prove(expr(x) <= 5, bounds_of_x);
  ASSERT_TRUE(proved);
  EXPECT_TRUE(*proved);
  EXPECT_FALSE(attempt_to_prove(expr(x) < y));
}

TEST(compat_simplify, constant_bounds_and_helpers) {
  var x(0);
  EXPECT_TRUE(can_evaluate(intrinsic::abs));
  EXPECT_EQ(as_constant(constant_upper_bound(min(expr(x), 5))), 5);
  EXPECT_EQ(as_constant(constant_lower_bound(max(expr(x), 3))), 3);
  EXPECT_EQ(evaluate_constant(expr(2) * 3), 6);
  EXPECT_FALSE(evaluate_constant(expr(x)));
  EXPECT_EQ(evaluate_constant_lower_bound(max(expr(x), 3)), 3);
  EXPECT_EQ(evaluate_constant_upper_bound(min(expr(x), 8)), 8);
  EXPECT_FALSE(evaluate_constant_upper_bound(expr(x)));
  interval_expr i = simplify_intersection(bounds(0, 10), bounds(5, 20));
  EXPECT_EQ(as_constant(i.min), 5);
  EXPECT_EQ(as_constant(i.max), 10);
  // Per-node helpers (the node may be null).
  EXPECT_EQ(as_constant(simplify(static_cast<const add*>(nullptr), expr(2), expr(3))), 5);
  expr same = simplify(static_cast<const add*>(nullptr), expr(x), expr(0));
  EXPECT_TRUE(is_variable(same, x));
  interval_expr sum = bounds_of(static_cast<const add*>(nullptr), bounds(0, 1), bounds(2, 3));
  EXPECT_EQ(as_constant(sum.min), 2);
  EXPECT_EQ(as_constant(sum.max), 4);
}
