// Tests of the simplifier's alignment facts (simplify, bounds_of and proofs with an alignment_map,
// checked exactly and against evaluation with random aligned values) and of simplify.h's other
// additions: prove_false, can_evaluate, constant bounds, evaluate_constant, simplify_intersection,
// the per-node simplify and bounds_of helpers, and printing of alignments.
#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "slinky/base/arithmetic.h"
#include "slinky/builder/simplify.h"
#include "slinky/builder/substitute.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/print.h"

namespace slinky {
namespace {

node_context ctx;
const var vx(ctx, "x"), vy(ctx, "y"), vz(ctx, "z"), vb(ctx, "b");
const expr x = vx, y = vy, z = vz;

std::string str(const expr& e) { return to_string(e, &ctx); }
std::string str(const interval_expr& e) { return to_string(e, &ctx); }

alignment_map aligned_x(index_t m, index_t r) {
  alignment_map a;
  a[vx] = alignment_type(m, r);
  return a;
}

void test_simplify(const expr& input, const expr& expected, const bounds_map& bounds, const alignment_map& alignment) {
  const expr result = simplify(input, bounds, alignment);
  EXPECT_TRUE(match(result, expected)) << str(input) << " -> " << str(result) << ", expected " << str(expected);
  EXPECT_TRUE(simplify(result, bounds, alignment).same_as(result)) << str(result);
}
void test_simplify(const expr& input, const expr& expected, const alignment_map& alignment) {
  test_simplify(input, expected, bounds_map(), alignment);
}

TEST(simplify_alignment, symbols) {
  const alignment_map a = aligned_x(8, 3);
  test_simplify(x % 4, 3, a);
  test_simplify(x % 8, 3, a);
  test_simplify(x % 2, 1, a);
  test_simplify(x % -4, 3, a);
  test_simplify(mod::make(x, 16), mod::make(x, 16), a);
  test_simplify(x % 8 == 3, 1, a);
  test_simplify(x % 8 == 2, 0, a);
  test_simplify(x % 8 != 3, 0, a);
  test_simplify(x % 4 < 3, 0, a);
  test_simplify(x % 4 <= 3, 1, a);
  test_simplify((x / 4) * 4, x + -3, a);
  test_simplify((x / 8) * 8, x + -3, a);
  test_simplify((x / 16) * 16, (x / 16) * 16, a);
  // x - 5 is never 0: x is 3 modulo 8.
  test_simplify(x == 5, 0, a);
  test_simplify(x != 5, 1, a);
  test_simplify(x == y * 8 + 4, 0, a);
  test_simplify(x == y, x == y, a);
  test_simplify(x == 11, x == 11, a);
  // Compound expressions of aligned symbols.
  test_simplify((x * 2 + 1) % 4, 3, a);
  test_simplify((x + y * 8) % 8, 3, a);
  test_simplify(min(x, x + 8) % 8, 3, a);
  test_simplify(select(y < 0, x, x + 16) % 4, 3, a);
  test_simplify((x * y) % 8, (x * y) % 8, a);
  // A constant alignment.
  test_simplify(x % 3, 2, aligned_x(0, 5));
  // Without facts, the structure still gives some.
  test_simplify((y * 4 + 1) % 2, 1, alignment_map());
  test_simplify(y * 6 + 3 == 8, 0, alignment_map());
  // Facts as braced lists, as clients write them.
  EXPECT_TRUE(match(simplify(x % 4, {{vx, bounds(0, 100)}}, {{vx, alignment_type(8, 3)}}), 3));
  EXPECT_TRUE(prove_true(x != 0, {}, {{vx, alignment_type(8, 3)}}));
  // No facts: nothing changes.
  test_simplify(x % 4, x % 4, alignment_map());
  test_simplify(x % 4, x % 4, aligned_x(1, 0));
}

TEST(simplify_alignment, proofs_and_bounds) {
  const alignment_map a = aligned_x(8, 3);
  EXPECT_TRUE(prove_true(x != 0, bounds_map(), a));
  EXPECT_TRUE(prove_true(x % 2 == 1, bounds_map(), a));
  EXPECT_TRUE(prove_false(x % 2 == 0, bounds_map(), a));
  EXPECT_EQ(attempt_to_prove(x == 0, bounds_map(), a), false);
  EXPECT_FALSE(attempt_to_prove(x == 3, bounds_map(), a).has_value());
  EXPECT_FALSE(prove_true(x != 0));

  bounds_map b;
  b[vx] = bounds(0, 10);
  // The constant bounds of x shrink to its members.
  interval_expr r = bounds_of(x, b, a);
  EXPECT_TRUE(match(r.min, 3) && match(r.max, 3)) << str(r);
  b[vx] = bounds(0, 20);
  r = bounds_of(x, b, a);
  EXPECT_TRUE(match(r.min, 3) && match(r.max, 19)) << str(r);
  r = bounds_of(x * 2, b, a);
  EXPECT_TRUE(match(r.min, 6) && match(r.max, 38)) << str(r);
  r = bounds_of(bounds(x, x + 1), b, a);
  EXPECT_TRUE(match(r.min, 3) && match(r.max, 20)) << str(r);
  EXPECT_TRUE(prove_true(x >= 3, b, a));
  EXPECT_FALSE(prove_true(x >= 3, b));
  // Bounds containing no member are left alone.
  b[vx] = bounds(4, 10);
  r = bounds_of(x, b, a);
  EXPECT_TRUE(match(r.min, 4) && match(r.max, 10)) << str(r);
  // An interval is simplified with the facts too.
  const interval_expr i = simplify(bounds(x % 4, x % 8 + 1), bounds_map(), a);
  EXPECT_TRUE(match(i.min, 3) && match(i.max, 4)) << str(i);
}

TEST(simplify_alignment, declarations) {
  const alignment_map a = aligned_x(8, 3);
  // Lets: the alignment of the value.
  test_simplify(let::make(vy, y * 4 + 2, y % 4), 2, alignment_map());
  test_simplify(let::make(vy, x * 2, y % 16), 6, a);
  // A let of x hides the outer x's alignment (here substituted: y % 4 stays).
  test_simplify(let::make(vx, y, x % 4), y % 4, a);
  test_simplify(let::make(vx, y * 3, x % 4), let::make(vx, y * 3, x % 4), a);

  // Loop variables: min + k * step.
  const stmt call = call_stmt::make(nullptr, {vb}, {}, {}, {});
  const stmt body = block::make({check::make(x % 4 == 1), call});
  const stmt l = loop::make(vx, loop::serial, bounds(5, 100), 4, body);
  stmt s = simplify(l);
  const loop* lp = s.as<loop>();
  ASSERT_TRUE(lp) << s;
  EXPECT_TRUE(lp->body.same_as(call)) << s;
  // A step that is not a multiple of 4.
  s = simplify(loop::make(vx, loop::serial, bounds(5, 100), 2, body));
  ASSERT_TRUE(s.as<loop>());
  EXPECT_TRUE(match(s.as<loop>()->body, body)) << s;
  // The loop's x hides the outer x's alignment.
  s = simplify(loop::make(vx, loop::serial, bounds(y, 100), 1, body), bounds_map(), aligned_x(4, 1));
  EXPECT_TRUE(match(s.as<loop>()->body, body)) << s;
  // ... while the outer alignment is used outside the loop.
  s = simplify(block::make({check::make(x % 4 == 1), l}), bounds_map(), aligned_x(4, 1));
  EXPECT_TRUE(s.as<loop>()) << s;
  // A symbolic min with a known alignment, and a symbolic step.
  alignment_map ay;
  ay[vy] = alignment_type(8, 1);
  s = simplify(loop::make(vx, loop::serial, bounds(y, 100), 4, body), bounds_map(), ay);
  EXPECT_TRUE(s.as<loop>()->body.same_as(call)) << s;
  s = simplify(loop::make(vx, loop::serial, bounds(1, 100), z * 4, body));
  EXPECT_TRUE(s.as<loop>()->body.same_as(call)) << s;
}

// Random expressions over x and y whose values come from their alignment sets: simplifying with
// the facts must not change the value.
TEST(simplify_alignment, evaluation) {
  std::mt19937_64 rng(1234);
  auto random = [&](index_t lo, index_t hi) { return std::uniform_int_distribution<index_t>(lo, hi)(rng); };
  std::function<expr(int)> random_expr = [&](int depth) -> expr {
    const int kind = random(0, depth > 0 ? 9 : 2);
    switch (kind) {
    case 0: return x;
    case 1: return y;
    case 2: return random(-10, 10);
    case 3: return add::make(random_expr(depth - 1), random_expr(depth - 1));
    case 4: return sub::make(random_expr(depth - 1), random_expr(depth - 1));
    case 5: return mul::make(random_expr(depth - 1), random(-4, 8));
    case 6: return div::make(random_expr(depth - 1), random(-8, 8));
    case 7: return mod::make(random_expr(depth - 1), random(-8, 8));
    case 8: return minimum::make(random_expr(depth - 1), random_expr(depth - 1));
    default: return equal::make(random_expr(depth - 1), random_expr(depth - 1));
    }
  };
  int changed = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    alignment_map a;
    a[vx] = alignment_type(random(0, 12), random(-6, 6));
    if (random(0, 1)) a[vy] = alignment_type(random(1, 12), random(0, 11));
    const expr e = random_expr(3);
    const expr s = simplify(e, bounds_map(), a);
    if (!match(s, simplify(e))) ++changed;
    for (int i = 0; i < 10; ++i) {
      eval_context values;
      for (var v : {vx, vy}) {
        const alignment_type av = a[v] ? *a[v] : alignment_type();
        values[v] = av.modulus * random(-20, 20) + av.remainder;
      }
      ASSERT_EQ(evaluate(e, values), evaluate(s, values))
          << str(e) << " -> " << str(s) << " with x = " << values[vx] << " in (" << a[vx]->modulus << ", "
          << a[vx]->remainder << "), y = " << values[vy];
    }
  }
  // The facts make a difference often.
  EXPECT_GT(changed, 100);
}

TEST(simplify, prove_false) {
  EXPECT_TRUE(prove_false(x < x));
  EXPECT_FALSE(prove_false(x < y));
  EXPECT_FALSE(prove_false(x <= x));
  bounds_map b;
  b[vx] = bounds(0, 10);
  EXPECT_TRUE(prove_false(x > 10, b));
  EXPECT_FALSE(prove_false(x > 9, b));
}

TEST(simplify, can_evaluate) {
  EXPECT_TRUE(can_evaluate(intrinsic::abs));
  EXPECT_TRUE(can_evaluate(intrinsic::and_then));
  EXPECT_TRUE(can_evaluate(intrinsic::or_else));
  for (intrinsic i : {intrinsic::none, intrinsic::positive_infinity, intrinsic::negative_infinity,
                      intrinsic::indeterminate, intrinsic::buffer_at, intrinsic::semaphore_init,
                      intrinsic::semaphore_signal, intrinsic::semaphore_wait, intrinsic::wait_for,
                      intrinsic::trace_begin, intrinsic::trace_end, intrinsic::free, intrinsic::validate_buffer}) {
    EXPECT_FALSE(can_evaluate(i)) << i;
  }
  // The simplifier evaluates them.
  EXPECT_TRUE(match(simplify(call::make(intrinsic::abs, {-3})), 3));
  EXPECT_TRUE(match(simplify(and_then({1, sub::make(2, 2)})), 0));
  EXPECT_TRUE(match(simplify(and_then({1, 2})), 1));
  EXPECT_TRUE(match(simplify(or_else({0, add::make(1, 0)})), 1));
  EXPECT_TRUE(match(simplify(or_else({0, 0})), 0));
  // The short circuit decides even with an unknown operand after it.
  EXPECT_TRUE(match(simplify(and_then({0, x})), 0));
  EXPECT_TRUE(match(simplify(or_else({1, x})), 1));
  const expr unknown = and_then({x, 1});
  EXPECT_TRUE(simplify(unknown).same_as(unknown));
}

TEST(simplify, constant_bounds) {
  EXPECT_TRUE(match(constant_upper_bound(min(x, 4) * 2), 8));
  EXPECT_TRUE(match(constant_lower_bound(min(x, 4) * 2), negative_infinity()));
  EXPECT_TRUE(match(constant_lower_bound(max(x, 4) * -2), negative_infinity()));
  EXPECT_TRUE(match(constant_upper_bound(max(x, 4) * -2), -8));
  EXPECT_TRUE(match(constant_upper_bound(x), positive_infinity()));
  EXPECT_TRUE(match(constant_lower_bound(x % 5), 0));
  EXPECT_TRUE(match(constant_upper_bound(x % 5), 4));
  EXPECT_TRUE(match(constant_upper_bound(select(x < y, 3, min(y, 1))), 3));
  EXPECT_TRUE(match(constant_lower_bound(select(x < y, 3, max(y, 1))), 1));
  EXPECT_TRUE(match(constant_upper_bound(clamp(x, 0, 10) + clamp(y, -1, 2)), 12));
  EXPECT_TRUE(match(constant_lower_bound(clamp(x, 0, 10) + clamp(y, -1, 2)), -1));
  EXPECT_TRUE(match(constant_upper_bound(x < y), 1));
  EXPECT_TRUE(match(constant_lower_bound(7), 7));
  EXPECT_EQ(evaluate_constant_upper_bound(min(x, 4) * 2), 8);
  EXPECT_EQ(evaluate_constant_lower_bound(abs(x)), 0);
  EXPECT_FALSE(evaluate_constant_lower_bound(min(x, 4)).has_value());
  EXPECT_FALSE(evaluate_constant_upper_bound(x).has_value());

  EXPECT_EQ(evaluate_constant(add::make(3, mul::make(4, 5))), 23);
  EXPECT_EQ(evaluate_constant(x - x + 2), 2);
  EXPECT_FALSE(evaluate_constant(x + 1).has_value());
  EXPECT_FALSE(evaluate_constant(positive_infinity()).has_value());
}

TEST(simplify, simplify_intersection) {
  interval_expr r = simplify_intersection(bounds(0, 10), bounds(2, 20));
  EXPECT_TRUE(match(r.min, 2) && match(r.max, 10)) << str(r);
  r = simplify_intersection(bounds(x, y), bounds(x + 1, y + 1));
  EXPECT_TRUE(match(r.min, x + 1) && match(r.max, y)) << str(r);
  r = simplify_intersection(bounds(x, expr()), bounds(expr(), y));
  EXPECT_TRUE(match(r.min, x) && match(r.max, y)) << str(r);
  r = simplify_intersection(interval_expr::all(), bounds(0, y));
  EXPECT_TRUE(match(r.min, 0) && match(r.max, y)) << str(r);
}

TEST(simplify, per_node) {
  const expr e = add::make(x, y);
  const add* op = e.as<add>();
  EXPECT_TRUE(simplify(op, op->a, op->b).same_as(e));
  EXPECT_TRUE(match(simplify(static_cast<const add*>(nullptr), x, 0), x));
  EXPECT_TRUE(match(simplify(op, x, 0), x));
  EXPECT_TRUE(match(simplify(static_cast<const add*>(nullptr), 3, 4), 7));
  EXPECT_TRUE(match(simplify(static_cast<const add*>(nullptr), y, x), simplify(e)));
  EXPECT_TRUE(match(simplify(static_cast<const sub*>(nullptr), x, x), 0));
  EXPECT_TRUE(match(simplify(static_cast<const mul*>(nullptr), x, 1), x));
  EXPECT_TRUE(match(simplify(static_cast<const div*>(nullptr), x, 1), x));
  EXPECT_TRUE(match(simplify(static_cast<const mod*>(nullptr), x, 1), 0));
  EXPECT_TRUE(match(simplify(static_cast<const class min*>(nullptr), x, x), x));
  EXPECT_TRUE(match(simplify(static_cast<const class max*>(nullptr), x, x + 1), x + 1));
  EXPECT_TRUE(match(simplify(static_cast<const equal*>(nullptr), x, x), 1));
  EXPECT_TRUE(match(simplify(static_cast<const not_equal*>(nullptr), x, x), 0));
  EXPECT_TRUE(match(simplify(static_cast<const less*>(nullptr), x, x + 1), 1));
  EXPECT_TRUE(match(simplify(static_cast<const less_equal*>(nullptr), x + 1, x), 0));
  EXPECT_TRUE(match(simplify(static_cast<const logical_and*>(nullptr), x < y, 1), x < y));
  EXPECT_TRUE(match(simplify(static_cast<const logical_or*>(nullptr), x < y, 1), 1));
  EXPECT_TRUE(match(simplify(static_cast<const logical_not*>(nullptr), less::make(x, y)), y <= x));
  EXPECT_TRUE(match(simplify(static_cast<const class select*>(nullptr), 1, x, y), x));
  EXPECT_TRUE(match(simplify(static_cast<const class select*>(nullptr), x < y, z, z), z));
  EXPECT_TRUE(match(simplify(static_cast<const call*>(nullptr), intrinsic::abs, {-5}), 5));
  EXPECT_TRUE(match(simplify(static_cast<const call*>(nullptr), intrinsic::or_else, {0, 1}), 1));
  const expr c = call::make(intrinsic::abs, {x});
  EXPECT_TRUE(simplify(c.as<call>(), c.as<call>()->args).same_as(c));
  EXPECT_TRUE(match(simplify(c.as<call>(), {abs(x)}), abs(x)));
  // A user function keeps its target when rebuilt.
  const expr user = call::make([](const call*, eval_context&) -> index_t { return 42; }, {x});
  const expr user2 = simplify(user.as<call>(), {add::make(1, 2)});
  ASSERT_TRUE(user2.as<call>());
  EXPECT_TRUE(static_cast<bool>(user2.as<call>()->target));
  EXPECT_EQ(evaluate(user2), 42);
  // Lets: unused ones go, constants are substituted.
  EXPECT_TRUE(match(simplify(static_cast<const let*>(nullptr), {{vy, 3}}, y + 1), 4));
  EXPECT_TRUE(match(simplify(static_cast<const let*>(nullptr), {{vz, x * y}}, x), x));
  const expr l = simplify(let::make(vz, x * y, z + z));
  ASSERT_TRUE(l.as<let>());
  EXPECT_TRUE(simplify(l.as<let>(), l.as<let>()->lets, l.as<let>()->body).same_as(l));
}

TEST(simplify, per_node_bounds) {
  auto check = [](const interval_expr& r, const expr& min, const expr& max) {
    EXPECT_TRUE(match(r.min, min) && match(r.max, max))
        << str(r) << ", expected [" << str(min) << ", " << str(max) << "]";
  };
  const interval_expr a = bounds(0, 1), b = bounds(2, 3);
  check(bounds_of(static_cast<const add*>(nullptr), a, b), 2, 4);
  check(bounds_of(static_cast<const sub*>(nullptr), a, b), -3, -1);
  check(bounds_of(static_cast<const mul*>(nullptr), a, b), 0, 3);
  check(bounds_of(static_cast<const mul*>(nullptr), bounds(-2, 1), point(-3)), -3, 6);
  check(bounds_of(static_cast<const div*>(nullptr), bounds(4, 9), point(2)), 2, 4);
  check(bounds_of(static_cast<const div*>(nullptr), bounds(4, 9), b), 1, 4);
  check(bounds_of(static_cast<const mod*>(nullptr), bounds(0, 100), point(8)), 0, 7);
  check(bounds_of(static_cast<const mod*>(nullptr), a, point(8)), 0, 1);
  check(bounds_of(static_cast<const class min*>(nullptr), a, b), 0, 1);
  check(bounds_of(static_cast<const class max*>(nullptr), a, b), 2, 3);
  check(bounds_of(static_cast<const less*>(nullptr), a, b), 1, 1);
  check(bounds_of(static_cast<const less*>(nullptr), b, a), 0, 0);
  check(bounds_of(static_cast<const less_equal*>(nullptr), a, bounds(1, 2)), 1, 1);
  check(bounds_of(static_cast<const equal*>(nullptr), a, b), 0, 0);
  check(bounds_of(static_cast<const equal*>(nullptr), a, a), 0, 1);
  check(bounds_of(static_cast<const not_equal*>(nullptr), a, b), 1, 1);
  check(bounds_of(static_cast<const logical_and*>(nullptr), point(1), bounds(2, 3)), 1, 1);
  check(bounds_of(static_cast<const logical_and*>(nullptr), point(0), bounds(2, 3)), 0, 0);
  check(bounds_of(static_cast<const logical_or*>(nullptr), a, point(0)), 0, 1);
  check(bounds_of(static_cast<const logical_not*>(nullptr), point(0)), 1, 1);
  check(bounds_of(static_cast<const logical_not*>(nullptr), b), 0, 0);
  check(bounds_of(static_cast<const class select*>(nullptr), point(1), a, b), 0, 1);
  check(bounds_of(static_cast<const class select*>(nullptr), point(0), a, b), 2, 3);
  check(bounds_of(static_cast<const class select*>(nullptr), a, a, b), 0, 3);
  check(bounds_of(static_cast<const call*>(nullptr), intrinsic::abs, {bounds(-3, 2)}), 0, 3);
  check(bounds_of(static_cast<const call*>(nullptr), intrinsic::validate_buffer, {point(vb)}), 0, 1);
  check(bounds_of(static_cast<const call*>(nullptr), intrinsic::buffer_at, {point(vb)}), negative_infinity(),
        positive_infinity());
  // Symbolic operands: points give the node.
  const expr e = add::make(x, y);
  const add* op = e.as<add>();
  check(bounds_of(op, point(x), point(y)), e, e);
  check(bounds_of(static_cast<const add*>(nullptr), bounds(x, y), point(1)), x + 1, y + 1);
  const expr c = abs(x);
  check(bounds_of(c.as<call>(), {point(x)}), 0, c);
}

TEST(simplify, print_alignment) {
  std::stringstream ss;
  ss << alignment_type(8, 3) << " " << alignment_type() << " " << modulus_remainder<int>(0, -2);
  EXPECT_EQ(ss.str(), "(8, 3) (1, 0) (0, -2)");
}

}  // namespace
}  // namespace slinky
