// Compatibility tests for symbols and expressions of slinky/runtime/expr.h (docs/api.md section 2;
// silent items S1, S13, S15, S16, S24, S25 and checklist items 7 and 12 of README.md), written as
// a client of the original slinky would use them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>
#include <vector>

#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/print.h"

namespace {

using namespace slinky;

index_t eval(const expr& e, std::initializer_list<std::pair<var, index_t>> values = {}) {
  eval_context ctx;
  for (const auto& v : values) ctx[v.first] = v.second;
  return evaluate(e, ctx);
}

}  // namespace

TEST(compat_symbols, var_makes_a_new_symbol_every_time) {
  // S1
  node_context ctx;
  var x(ctx, "x");
  var y(ctx, "x");
  var z(ctx, "x");
  EXPECT_NE(x, y);
  EXPECT_NE(y, z);
  EXPECT_EQ(ctx.name(x), "x");
  EXPECT_EQ(ctx.name(y), "x#0");
  EXPECT_EQ(ctx.name(z), "x#1");
}

TEST(compat_symbols, node_context) {
  node_context ctx;
  var a = ctx.insert("a");
  var a2 = ctx.insert("a");
  EXPECT_EQ(a, a2);  // insert: get or create
  EXPECT_EQ(ctx.name(a), "a");
  var u = ctx.insert_unique("a");
  EXPECT_NE(u, a);
  EXPECT_EQ(ctx.name(u), "a#0");
  var fresh = ctx.insert_unique("fresh");
  EXPECT_EQ(ctx.name(fresh), "fresh");
  var underscore = ctx.insert_unique();
  EXPECT_EQ(ctx.name(underscore), "_");
  var underscore2 = ctx.insert_unique();
  EXPECT_EQ(ctx.name(underscore2), "_#0");

  // S13: lookup returns std::optional<var>.
  std::optional<var> found = ctx.lookup("a");
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, a);
  EXPECT_FALSE(ctx.lookup("nope"));
  bool branch = false;
  if (ctx.lookup("a")) branch = true;
  EXPECT_TRUE(branch);
  if (ctx.lookup("nope")) branch = false;
  EXPECT_TRUE(branch);
  // The first symbol of a context has id 0: "found" must not depend on the id.
  node_context first;
  var zero(first, "zero");
  EXPECT_EQ(zero.id, 0u);
  EXPECT_TRUE(first.lookup("zero").has_value());

  EXPECT_EQ(ctx.name(var(12345)), "<12345>");
  EXPECT_EQ(ctx.name(var()), "<>");
}

TEST(compat_symbols, var) {
  static_assert(std::is_same_v<var::type, std::size_t>, "var::type");
  static_assert(var::invalid == static_cast<std::size_t>(-1), "var::invalid");
  static_assert(std::is_same_v<decltype(std::declval<var>() < std::declval<var>()), bool>, "var < var is bool");
  var undefined;
  EXPECT_FALSE(undefined.defined());
  EXPECT_EQ(undefined.id, var::invalid);
  var v(3);
  EXPECT_TRUE(v.defined());
  EXPECT_EQ(v.id, 3u);
  EXPECT_TRUE(var(1) < var(2));
  EXPECT_FALSE(var(2) < var(1));
  std::set<var> s = {var(3), var(1), var(3)};
  EXPECT_EQ(s.size(), 2u);
  std::vector<var> sorted = {var(5), var(2), var(9)};
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted.front(), var(2));
  // Unary minus builds an expression.
  expr neg = -v;
  EXPECT_EQ(eval(neg, {{v, 4}}), -4);
}

TEST(compat_expr, constructors_and_types) {
  // S25
  EXPECT_EQ(expr().type(), expr_node_type::none);
  EXPECT_FALSE(expr().defined());
  expr from_int = 3;
  expr from_int64 = std::int64_t{-4};
  expr from_size = std::size_t{5};
  EXPECT_EQ(from_int.type(), expr_node_type::constant);
  EXPECT_EQ(eval(from_int64), -4);
  EXPECT_EQ(eval(from_size), 5);
  // No explicit bool constructor: copy-list-initialization from bool works.
  expr t = {true};
  EXPECT_EQ(eval(t), 1);
  std::vector<expr> list = {true, false};
  EXPECT_EQ(eval(list[1]), 0);
  var x(0);
  expr ex = x;
  EXPECT_EQ(ex.type(), expr_node_type::variable);
  EXPECT_TRUE(ex.as<variable>() != nullptr);
  EXPECT_EQ(ex.as<variable>()->sym, x);
  expr compound = x;
  compound += 2;
  compound *= 3;
  compound -= 1;
  compound /= 2;
  compound %= 4;
  EXPECT_EQ(eval(compound, {{x, 5}}), ((5 + 2) * 3 - 1) / 2 % 4);
  EXPECT_TRUE(ex.same_as(ex));
}

TEST(compat_expr, node_classes_min_max_select) {
  var x(0), y(1), c(2);
  expr m = min(x, y);
  ASSERT_NE(m.as<class min>(), nullptr);
  EXPECT_EQ(m.type(), expr_node_type::min);
  EXPECT_EQ(m.as<minimum>(), m.as<class min>());
  expr M = max(x, y);
  ASSERT_NE(M.as<class max>(), nullptr);
  EXPECT_EQ(M.type(), expr_node_type::max);
  expr s = select(c, x, y);
  ASSERT_NE(s.as<class select>(), nullptr);
  EXPECT_EQ(s.type(), expr_node_type::select);
  EXPECT_TRUE(s.as<class select>()->condition.same_as(s.as<conditional>()->condition));
  EXPECT_EQ(eval(s, {{c, 0}, {x, 1}, {y, 2}}), 2);
  static_assert(minimum::static_type == expr_node_type::min, "static_type");
  static_assert(add::commutative && !sub::commutative, "commutative");
  // make does not fold, it only orders the operands of commutative nodes (a.type() <= b.type()).
  expr a = add::make(2, x);
  ASSERT_NE(a.as<add>(), nullptr);
  EXPECT_EQ(a.as<add>()->a.type(), expr_node_type::variable);
  EXPECT_EQ(a.as<add>()->b.type(), expr_node_type::constant);
  expr d = sub::make(2, x);
  EXPECT_EQ(d.as<sub>()->a.type(), expr_node_type::constant);
}

TEST(compat_expr, constant_folding_of_operators) {
  // S24 (deliberate difference, kept): operators on constants fold.
  std::optional<index_t> five = as_constant(expr(2) + 3);
  ASSERT_TRUE(five);
  EXPECT_EQ(*five, 5);
  EXPECT_EQ(as_constant(min(expr(1), 2)), 1);
  EXPECT_EQ(as_constant(expr(7) / -2), -3);
}

TEST(compat_expr, as_constant_as_variable) {
  // S16: as_constant returns std::optional<index_t>.
  static_assert(std::is_same_v<decltype(as_constant(expr())), std::optional<index_t>>, "as_constant");
  var x(4);
  EXPECT_TRUE(as_constant(expr(0)) == 0);
  EXPECT_FALSE(as_constant(expr(3)) == 0);
  EXPECT_FALSE(as_constant(expr(x)) == 0);
  EXPECT_FALSE(as_constant(expr(x)));
  EXPECT_FALSE(as_constant(expr()));
  // The inspection helpers take expr_ref: clients pass exprs.
  const expr ex = x;
  std::optional<var> v = as_variable(ex);
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, x);
  EXPECT_FALSE(as_variable(expr(1)));
  EXPECT_TRUE(is_variable(ex, x));
  EXPECT_FALSE(is_variable(ex, var(5)));
  EXPECT_TRUE(is_constant(expr(7), 7));
  EXPECT_TRUE(is_zero(expr(0)));
  EXPECT_TRUE(is_one(expr(1)));
  EXPECT_FALSE(is_one(ex));
  EXPECT_TRUE(is_true(expr(3)));
  EXPECT_FALSE(is_true(expr(0)));
  EXPECT_FALSE(is_true(ex));
  EXPECT_TRUE(is_false(expr(0)));
  EXPECT_FALSE(is_false(ex));
}

TEST(compat_expr, infinities) {
  // S15: is_infinity returns +1, -1 or 0.
  static_assert(std::is_same_v<decltype(is_infinity(expr())), int>, "is_infinity returns int");
  EXPECT_EQ(is_infinity(positive_infinity()), 1);
  EXPECT_EQ(is_infinity(negative_infinity()), -1);
  EXPECT_EQ(is_infinity(expr(3)), 0);
  EXPECT_TRUE(is_infinity(negative_infinity()) < 0);
  EXPECT_TRUE(infinity().same_as(positive_infinity()));
  EXPECT_TRUE(infinity(1).same_as(positive_infinity()));
  EXPECT_TRUE(infinity(-1).same_as(negative_infinity()));
  EXPECT_TRUE(is_positive_infinity(positive_infinity()));
  EXPECT_TRUE(is_negative_infinity(negative_infinity()));
  EXPECT_TRUE(is_indeterminate(indeterminate()));
  EXPECT_TRUE(is_finite(expr(3)));
  EXPECT_FALSE(is_finite(positive_infinity()));
  EXPECT_NE(as_intrinsic(positive_infinity(), intrinsic::positive_infinity), nullptr);
  EXPECT_EQ(as_intrinsic(expr(1), intrinsic::positive_infinity), nullptr);
}

TEST(compat_expr, sign_predicates) {
  const expr x = var(0);
  EXPECT_TRUE(is_positive(expr(3)));
  EXPECT_FALSE(is_positive(expr(0)));
  EXPECT_TRUE(is_positive(positive_infinity()));
  EXPECT_TRUE(is_non_negative(expr(0)));
  EXPECT_TRUE(is_non_negative(abs(x)));
  EXPECT_FALSE(is_positive(abs(x)));
  EXPECT_TRUE(is_positive(abs(positive_infinity())));
  EXPECT_FALSE(is_non_negative(x));
  EXPECT_TRUE(is_negative(expr(-2)));
  EXPECT_TRUE(is_negative(negative_infinity()));
  EXPECT_TRUE(is_non_positive(expr(0)));
  EXPECT_FALSE(is_non_positive(expr(1)));
  EXPECT_FALSE(is_negative(x));
}

TEST(compat_expr, booleans_and_constants) {
  EXPECT_EQ(boolean(index_t(5)), 1);
  EXPECT_EQ(boolean(index_t(0)), 0);
  var x(0), y(1);
  EXPECT_TRUE(is_boolean(expr(x) < y));
  EXPECT_FALSE(is_boolean(expr(x)));
  EXPECT_EQ(eval(boolean(expr(x)), {{x, 7}}), 1);
  static_assert(is_boolean_node(expr_node_type::less), "less is boolean");
  static_assert(!is_boolean_node(expr_node_type::add), "add is not");
  const int value = 1;
  expr address = constant::make(&value);
  ASSERT_TRUE(as_constant(address));
  EXPECT_EQ(*as_constant(address), reinterpret_cast<index_t>(&value));
  EXPECT_EQ(constant::make(index_t(9)).as<constant>()->value, 9);
}

TEST(compat_expr, euclidean_semantics) {
  var a(0), b(1);
  // Euclidean division and modulo, x / 0 == x % 0 == 0.
  const index_t cases[][4] = {{-7, 2, -4, 1}, {7, -2, -3, 1}, {-7, -2, 4, 1}, {7, 0, 0, 0}, {-7, 0, 0, 0}};
  for (const auto& c : cases) {
    EXPECT_EQ(eval(expr(a) / b, {{a, c[0]}, {b, c[1]}}), c[2]);
    EXPECT_EQ(eval(expr(a) % b, {{a, c[0]}, {b, c[1]}}), c[3]);
    EXPECT_EQ(eval(euclidean_div(expr(a), expr(b)), {{a, c[0]}, {b, c[1]}}), c[2]);
    EXPECT_EQ(eval(euclidean_mod(expr(a), expr(b)), {{a, c[0]}, {b, c[1]}}), c[3]);
  }
  EXPECT_EQ(eval(align_down(expr(a), 4), {{a, -3}}), -4);
  EXPECT_EQ(eval(align_up(expr(a), 4), {{a, -3}}), 0);
  EXPECT_EQ(eval(align_up(expr(a), 4), {{a, 5}}), 8);
  EXPECT_EQ(eval(expr(a) == b, {{a, 2}, {b, 2}}), 1);
  EXPECT_EQ(eval(expr(a) != b, {{a, 2}, {b, 2}}), 0);
  EXPECT_EQ(eval(expr(a) <= b, {{a, 2}, {b, 2}}), 1);
  EXPECT_EQ(eval(expr(a) > b, {{a, 2}, {b, 2}}), 0);
  EXPECT_EQ(eval(expr(a) >= b, {{a, 2}, {b, 2}}), 1);
  EXPECT_EQ(eval(!(expr(a) < b), {{a, 2}, {b, 2}}), 1);
  EXPECT_EQ(eval(expr(a) && b, {{a, 2}, {b, 0}}), 0);
  EXPECT_EQ(eval(expr(a) || b, {{a, 2}, {b, 0}}), 1);
  EXPECT_EQ(eval(abs(a), {{a, -9}}), 9);
}

TEST(compat_expr, builders) {
  var x(0), lo(1), hi(2);
  // clamp with a missing bound.
  EXPECT_EQ(eval(clamp(x, expr(), hi), {{x, 10}, {hi, 5}}), 5);
  EXPECT_EQ(eval(clamp(x, expr(), hi), {{x, -10}, {hi, 5}}), -10);
  EXPECT_EQ(eval(clamp(x, lo, expr()), {{x, -10}, {lo, 0}}), 0);
  EXPECT_EQ(eval(clamp(x, lo, hi), {{x, 7}, {lo, 0}, {hi, 5}}), 5);
  EXPECT_EQ(eval(clamp(x, bounds(lo, hi)), {{x, -7}, {lo, 0}, {hi, 5}}), 0);
  // min/max of a list.
  const std::vector<expr> list = {expr(x), expr(lo), expr(hi)};
  EXPECT_EQ(eval(min(span<expr>(list)), {{x, 4}, {lo, -2}, {hi, 9}}), -2);
  EXPECT_EQ(eval(max(span<expr>(list)), {{x, 4}, {lo, -2}, {hi, 9}}), 9);
  EXPECT_FALSE(min(span<expr>()).defined());
  // Short-circuiting logical operators.
  EXPECT_EQ(eval(and_then(x, lo), {{x, 0}, {lo, 1}}), 0);
  EXPECT_EQ(eval(and_then(x, lo), {{x, 3}, {lo, 4}}), 1);
  EXPECT_EQ(eval(or_else(x, lo), {{x, 0}, {lo, 0}}), 0);
  EXPECT_EQ(eval(or_else(x, lo), {{x, 0}, {lo, 2}}), 1);
}

TEST(compat_expr, buffer_metadata) {
  node_context ctx;
  var b(ctx, "b"), i(ctx, "i"), j(ctx, "j");
  buffer<int, 2> buf({10, 20});
  buf.translate(3, -2);
  buf.mutable_dim(1).set_fold_factor(8);
  buf.allocate();
  eval_context values;
  values[b] = reinterpret_cast<index_t>(static_cast<const raw_buffer*>(&buf));
  EXPECT_EQ(evaluate(buffer_rank(b), values), 2);
  EXPECT_EQ(evaluate(buffer_elem_size(b), values), 4);
  EXPECT_EQ(evaluate(buffer_min(b, 0), values), 3);
  EXPECT_EQ(evaluate(buffer_max(b, 1), values), 17);
  EXPECT_EQ(evaluate(buffer_extent(b, 1), values), 20);
  EXPECT_EQ(evaluate(buffer_stride(b, 1), values), 40);
  EXPECT_EQ(evaluate(buffer_fold_factor(b, 1), values), 8);
  interval_expr bb = buffer_bounds(b, 0);
  EXPECT_EQ(evaluate(bb.min, values), 3);
  EXPECT_EQ(evaluate(bb.max, values), 12);
  dim_expr d = buffer_dim(b, 1);
  EXPECT_EQ(evaluate(d.stride, values), 40);
  EXPECT_EQ(evaluate(d.extent(), values), 20);
  std::vector<dim_expr> ds = buffer_dims(b, 2);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(evaluate(ds[0].min(), values), 3);
  box_expr box = dims_bounds(ds);
  ASSERT_EQ(box.size(), 2u);
  EXPECT_EQ(evaluate(box[1].max, values), 17);
  // Constant dims of a runtime buffer.
  std::vector<dim_expr> constant_dims = buffer_dims(buf);
  ASSERT_EQ(constant_dims.size(), 2u);
  EXPECT_EQ(as_constant(constant_dims[1].fold_factor), 8);
  EXPECT_EQ(as_constant(constant_dims[0].stride), 4);
  // buffer_at: the address of an element.
  values[i] = 5;
  values[j] = 4;
  EXPECT_EQ(evaluate(buffer_at(b), values), reinterpret_cast<index_t>(buf.base()));
  const var at[] = {i, j};
  EXPECT_EQ(evaluate(buffer_at(b, span<const var>(at)), values), reinterpret_cast<index_t>(&buf(5, 4)));
  EXPECT_EQ(evaluate(buffer_at(b, expr(i), expr(j)), values), reinterpret_cast<index_t>(&buf(5, 4)));
}

TEST(compat_expr, printing_uses_names) {
  node_context ctx;
  var x(ctx, "x");
  std::stringstream s;
  print(s, expr(x) + 1, &ctx);
  EXPECT_NE(s.str().find('x'), std::string::npos);
}
