// Unit tests of the simplifier: specific simplifications with exact results, the tightness of
// bounds_of, proofs, and statement simplifications.
#include "slinky/builder/simplify.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "slinky/base/arithmetic.h"
#include "slinky/runtime/depends_on.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/print.h"

namespace slinky {
namespace {

node_context ctx;
// Symbols are vx, vy, ...; x, y, ... are the expressions of them (comparisons of vars are not IR).
const var vx(ctx, "x"), vy(ctx, "y"), vz(ctx, "z"), vw(ctx, "w");
const var va(ctx, "a"), vb(ctx, "b"), vs(ctx, "s"), vm(ctx, "m"), vt(ctx, "t"), vu(ctx, "u");
const var buf(ctx, "buf"), buf2(ctx, "buf2"), out(ctx, "out");
const expr x = vx, y = vy, z = vz, w = vw, a = va, b = vb, s = vs, m = vm, t = vt, u = vu;

const expr oo = positive_infinity();
const expr neg_oo = negative_infinity();

std::string str(const expr& e) { return to_string(e, &ctx); }
std::string str(const interval_expr& e) { return to_string(e, &ctx); }
std::string str(const stmt& e) { return to_string(e, &ctx); }

// Checks that simplifying `input` gives exactly `expected` (and that the result is a fixed point).
void test_simplify(const expr& input, const expr& expected, const bounds_map& bounds = bounds_map()) {
  const expr result = simplify(input, bounds);
  EXPECT_TRUE(match(result, expected)) << str(input) << " -> " << str(result) << ", expected " << str(expected);
  const expr again = simplify(result, bounds);
  EXPECT_TRUE(again.same_as(result)) << str(result) << " -> " << str(again);
}

void test_bounds(const expr& input, const interval_expr& expected, const bounds_map& bounds = bounds_map()) {
  const interval_expr result = bounds_of(input, bounds);
  EXPECT_TRUE(match(result.min, expected.min) && match(result.max, expected.max))
      << "bounds_of(" << str(input) << ") = " << str(result) << ", expected " << str(expected);
}

// Unsimplified nodes, so constant folding is left to the simplifier.
expr add_node(expr a, expr b) { return add::make(std::move(a), std::move(b)); }

TEST(simplify, constant_folding) {
  test_simplify(add_node(3, 4), 7);
  test_simplify(sub::make(3, 4), -1);
  test_simplify(mul::make(3, -4), -12);
  test_simplify(div::make(-7, 2), -4);
  test_simplify(div::make(7, -2), -3);
  test_simplify(div::make(-7, -2), 4);
  test_simplify(div::make(7, 0), 0);
  test_simplify(mod::make(-7, 2), 1);
  test_simplify(mod::make(7, -2), 1);
  test_simplify(mod::make(7, 0), 0);
  test_simplify(minimum::make(3, -4), -4);
  test_simplify(maximum::make(3, -4), 3);
  test_simplify(equal::make(3, 3), 1);
  test_simplify(not_equal::make(3, 3), 0);
  test_simplify(less::make(3, 4), 1);
  test_simplify(less_equal::make(4, 3), 0);
  test_simplify(logical_and::make(3, 0), 0);
  test_simplify(logical_or::make(3, 0), 1);
  test_simplify(logical_not::make(5), 0);
  test_simplify(conditional::make(2, x, y), x);
  test_simplify(conditional::make(0, x, y), y);
  test_simplify(call::make(intrinsic::abs, {-5}), 5);
  test_simplify(mul::make(add_node(2, 3), sub::make(10, 4)), 30);
}

TEST(simplify, undefined_operands_are_unknown) {
  // A client's unknown extent is an undefined expr inside the expressions it queries.
  const expr unknown;
  EXPECT_FALSE(simplify(max(1, min(64, unknown))).defined());
  EXPECT_FALSE(simplify(let::make({{vx, unknown}}, x + 1)).defined());
  EXPECT_FALSE(simplify(abs(unknown)).defined());
  EXPECT_FALSE(prove_true(unknown == 5));
  EXPECT_FALSE(prove_false(unknown == 5));
  EXPECT_FALSE(prove_true(x == 0 && unknown == x));
  EXPECT_FALSE(attempt_to_prove(unknown < 2).has_value());
  EXPECT_TRUE(is_infinity(constant_upper_bound(x + unknown)) > 0);
  EXPECT_FALSE(evaluate_constant_lower_bound(unknown).has_value());
  // The hull of the bounds of both ends: unbounded where one end is unknown.
  const interval_expr b = bounds_of(interval_expr(x, unknown + 1), {{vx, interval_expr(0, 3)}});
  EXPECT_FALSE(b.min.defined());
  EXPECT_FALSE(b.max.defined());
  const interval_expr si = simplify(interval_expr(x + 0, min(unknown, 3)));
  EXPECT_TRUE(match(si.min, x));
  EXPECT_FALSE(si.max.defined());
  EXPECT_FALSE(simplify(static_cast<const add*>(nullptr), x, unknown).defined());
  // The semaphore intrinsics' optional counts are not unknowns.
  EXPECT_TRUE(simplify(semaphore_signal(x)).defined());
}

TEST(simplify, overflow_is_not_folded) {
  const index_t max = std::numeric_limits<index_t>::max();
  const index_t min = std::numeric_limits<index_t>::min();
  test_simplify(add_node(max, 1), add_node(max, 1));
  test_simplify(mul::make(max, 2), mul::make(max, 2));
  // x / -1 and abs(x) for negative x are 0 - x, which overflows too.
  test_simplify(div::make(min, -1), sub::make(0, min));
  test_simplify(call::make(intrinsic::abs, {min}), sub::make(0, min));
  test_simplify(add_node(add_node(x, 1), max), add_node(add_node(x, 1), max));
  test_simplify(mul::make(mul::make(x, max), 2), mul::make(mul::make(x, max), 2));
  test_simplify(add_node(add_node(x, max), 1), add_node(add_node(x, max), 1));
}

TEST(simplify, canonical_order) {
  test_simplify(add_node(3, x), x + 3);
  test_simplify(y + x, x + y);
  EXPECT_TRUE(match(simplify(x * y + z), simplify(z + y * x)));
  EXPECT_TRUE(match(simplify(min(y, x)), simplify(min(x, y))));
  EXPECT_TRUE(match(simplify(x == y), simplify(y == x)));
  EXPECT_TRUE(match(simplify((x < 3) && (y < 3)), simplify((y < 3) && (x < 3))));
  test_simplify(expr(x) - 1, x + -1);
  test_simplify(0 - x * 3, x * -3);
}

TEST(simplify, add_sub) {
  test_simplify(add_node(x, 0), x);
  test_simplify(expr(x) - x, 0);
  test_simplify((x + 1) + 2, x + 3);
  test_simplify((x + 3) - (x + 1), 2);
  test_simplify((x + 1) + (y + 2), (x + y) + 3);
  test_simplify((x - y) + y, x);
  test_simplify(x + x, x * 2);
  test_simplify(x * 3 + x, x * 4);
  test_simplify((x + y) - x, y);
  test_simplify(10 - (x + 3), 7 - x);
  test_simplify(min(x, y) + 1 - min(x, y), 1);
  test_simplify(x - min(x, y), max(x - y, 0));
  test_simplify(max(x, y) - min(x, y), abs(x - y));
}

TEST(simplify, mul_div_mod) {
  test_simplify(x * 1, x);
  test_simplify(x * 0, 0);
  test_simplify((x * 2) * 3, x * 6);
  test_simplify((x + 1) * 4, x * 4 + 4);
  test_simplify((x + 1) * 4 - x * 4, 4);
  test_simplify(x / 1, x);
  test_simplify(div::make(x, 0), 0);
  test_simplify(mod::make(x, 0), 0);
  test_simplify(x % 1, 0);
  // Only exact divisions cancel multiplications.
  test_simplify(x / 4 * 4, x / 4 * 4);
  test_simplify((x * 4) / 4, x);
  test_simplify((x * 8) / 4, x * 2);
  test_simplify((x * 2) / 4, x / 2);
  test_simplify((x * 4 + y) / 4, y / 4 + x);
  test_simplify((x + 8) / 4, x / 4 + 2);
  test_simplify((x + 5) / 4, (x + 5) / 4);
  test_simplify(x / 4 * 4 + x % 4, x);
  test_simplify(x - x / 4 * 4, x % 4);
  test_simplify(x / 2 / 3, x / 6);
  // Euclidean modulo.
  test_simplify((x + 8) % 4, x % 4);
  test_simplify((x + 5) % 4, (x + 1) % 4);
  test_simplify((x - 1) % 4, (x + 3) % 4);
  test_simplify(x % -4, x % 4);
  test_simplify(x % 8 % 4, x % 4);
  test_simplify((x * 6) % 3, 0);
}

TEST(simplify, min_max) {
  test_simplify(min(x, x), x);
  test_simplify(min(x, x + 1), x);
  test_simplify(max(x, x + 1), x + 1);
  test_simplify(min(x - 1, x), x + -1);
  test_simplify(min(x + 2, y + 2), min(x, y) + 2);
  test_simplify(min(x + 2, y + 5), min(y + 3, x) + 2);
  test_simplify(min(min(x, 3), 2), min(x, 2));
  test_simplify(max(max(x, 3), 2), max(x, 3));
  test_simplify(min(min(x, 3), y), min(min(x, y), 3));
  test_simplify(min(x, max(x, y)), x);
  test_simplify(max(x, min(x, y)), x);
  test_simplify(min(x + y, x + z), min(y, z) + x);
  test_simplify(min(x * 2, y * 2), min(x, y) * 2);
  test_simplify(min(x * -2, y * -2), max(x, y) * -2);
  test_simplify(max(min(x, 10), 0), min(max(x, 0), 10));
  test_simplify(min(max(x, 10), 5), 5);
  test_simplify(min(x + 3, 10), min(x, 7) + 3);
}

TEST(simplify, compare) {
  test_simplify(x < x, 0);
  test_simplify(x <= x, 1);
  test_simplify(x == x, 1);
  test_simplify(x != x, 0);
  test_simplify(x + 1 < x + 2, 1);
  test_simplify(x + 2 <= x + 1, 0);
  test_simplify(x < x + 1, 1);
  test_simplify(x + 3 < 5, x < 2);
  test_simplify(5 < x + 3, 2 < x);
  test_simplify(x + 3 < y + 5, x < y + 2);
  test_simplify(x - y < 0, x < y);
  test_simplify(x * 4 < 10, x < 3);
  test_simplify(x * 4 <= 10, x <= 2);
  test_simplify(x / 4 < 3, x < 12);
  test_simplify(x + 1 == 3, x == 2);
  test_simplify(x * 2 == 3, 0);
  test_simplify(x * 2 == 4, x == 2);
  test_simplify(min(x, 3) < 5, 1);
  test_simplify(max(x, 7) < 5, 0);
  test_simplify(min(x, y) <= x, 1);
  test_simplify(x < max(x, y), x < y);
  test_simplify(select(x < 3, 5, 7) < 6, x < 3);
  test_simplify(x > y, y < x);
}

TEST(simplify, logical) {
  test_simplify(!!(x < y), x < y);
  test_simplify(!!x, x != 0);
  test_simplify(!(x < y), y <= x);
  test_simplify(!(x <= y), y < x);
  test_simplify(!(x == y), x != y);
  test_simplify((x < y) && 1, x < y);
  test_simplify(x && 1, x != 0);
  test_simplify(x && 0, 0);
  test_simplify(x || 1, 1);
  test_simplify((x < y) || 0, x < y);
  test_simplify((x < y) && (x < y), x < y);
  test_simplify((x < y) && !(x < y), 0);
  test_simplify((x < y) || !(x < y), 1);
  test_simplify(x < y && y < x, 0);
  test_simplify(x <= y && y <= x, x == y);
  test_simplify(x < 3 && x < 5, x < 3);
  test_simplify(x < 3 || x < 5, x < 5);
  test_simplify(x < 3 && 5 < x, 0);
  test_simplify(x < 5 || 3 < x, 1);
  test_simplify((x == 1) == 0, x != 1);
  test_simplify((x < y) != 0, x < y);
}

TEST(simplify, select) {
  test_simplify(select(x < y, z, z), z);
  test_simplify(select(x < y, x, y), min(x, y));
  test_simplify(select(x < y, y, x), max(x, y));
  test_simplify(select(x < y, 1, 0), x < y);
  test_simplify(select(x < y, 0, 1), y <= x);
  test_simplify(select(!(x < y), z, w), select(y <= x, z, w));
  test_simplify(select(!x, z, w), select(x, w, z));
  test_simplify(select(x, select(x, y, z), w), select(x, y, w));
  test_simplify(select(x, y + 1, y + 2), select(x, 1, 2) + y);
  test_simplify(select(x, 3, 4) + 1, select(x, 4, 5));
}

TEST(simplify, abs) {
  test_simplify(abs(abs(x)), abs(x));
  test_simplify(abs(0 - x), abs(x));
  test_simplify(abs(x * -3), abs(x) * 3);
  test_simplify(abs(x), x, {{vx, bounds(0, 10)}});
  test_simplify(abs(x), 0 - x, {{vx, bounds(-10, 0)}});
}

TEST(simplify, infinities) {
  test_simplify(x + oo, oo);
  test_simplify(x - oo, neg_oo);
  test_simplify(oo - x, oo);
  test_simplify(neg_oo + 3, neg_oo);
  test_simplify(oo + oo, oo);
  test_simplify(oo * 2, oo);
  test_simplify(oo * -2, neg_oo);
  test_simplify(oo / 2, oo);
  test_simplify(min(x, oo), x);
  test_simplify(min(x, neg_oo), neg_oo);
  test_simplify(max(x, neg_oo), x);
  test_simplify(max(x, oo), oo);
  test_simplify(x < oo, 1);
  test_simplify(neg_oo < x, 1);
  test_simplify(oo < x, 0);
  test_simplify(x <= neg_oo, 0);
  test_simplify(x == oo, 0);
  test_simplify(abs(neg_oo), oo);
  // Indeterminate forms stay, except that x - x is 0 for any x.
  test_simplify(oo + neg_oo, add::make(neg_oo, oo));
  test_simplify(neg_oo - neg_oo, 0);
  test_simplify(x * oo, x * oo);
}

TEST(simplify, bounds) {
  const bounds_map x_0_10 = {{vx, bounds(0, 10)}};
  test_simplify(min(x, 20), x, x_0_10);
  test_simplify(max(x, 20), 20, x_0_10);
  test_simplify(min(x, y), x, {{vx, bounds(0, 5)}, {vy, bounds(10, 20)}});
  test_simplify(max(x, y), x, {{vx, bounds(y, y + 10)}});
  test_simplify(x < 11, 1, x_0_10);
  test_simplify(x < 10, x < 10, x_0_10);
  test_simplify(x < 0, 0, x_0_10);
  test_simplify(x == 11, 0, x_0_10);
  test_simplify(x != -1, 1, x_0_10);
  test_simplify(x / 16, 0, x_0_10);
  test_simplify(x % 16, x, x_0_10);
  test_simplify(select(x < 11, y, z), y, x_0_10);
  test_simplify(x && y, y != 0, {{vx, bounds(1, 10)}});
  test_simplify(x % 4 < 4, 1);
  test_simplify(min(x % 4, 5), x % 4);
  // Bounds that depend on other bounded symbols.
  test_simplify(x <= 10, 1, {{vx, bounds(0, y)}, {vy, bounds(0, 10)}});
  // Unbounded sides.
  test_simplify(x < 11, 1, {{vx, bounds(neg_oo, 10)}});
  test_simplify(x < 11, x < 11, {{vx, bounds(0, oo)}});
  test_simplify(x < 11, 1, {{vx, bounds(expr(), 10)}});
  test_simplify(0 < x, 0 < x, {{vx, bounds(expr(), 10)}});
}

TEST(simplify, lets) {
  test_simplify(let::make(vt, 3, t + x), x + 3);
  test_simplify(let::make(vt, y, t + x), x + y);
  test_simplify(let::make(vt, x * y, t + t), let::make(vt, x * y, t * 2));
  test_simplify(let::make(vt, x * y, x + 1), x + 1);
  test_simplify(let::make({{vt, x * y}, {vu, t + 1}}, u * u), let::make({{vt, x * y}, {vu, t + 1}}, u * u));
  // The value's bounds are known in the body.
  test_simplify(let::make(vt, x % 8, t < 8), 1);
  test_simplify(let::make(vt, x * y, min(t, t + 1)), let::make(vt, x * y, t));
  // A variable value is not substituted where the body redeclares it (the second simplification
  // substitutes it, as the redeclaration is gone).
  const expr shadowed = let::make(vt, y, let::make(vy, 5, t + y));
  EXPECT_EQ(str(simplify(shadowed)), str(let::make(vt, y, t + 5)));
}

TEST(bounds_of, monotonic) {
  test_bounds(x - 1, bounds(a + -1, b + -1), {{vx, bounds(a, b)}});
  test_bounds(min(x + s - 1, m), bounds(min(a + s + -1, m), min(b + s + -1, m)), {{vx, bounds(a, b)}});
  test_bounds(x * 2, bounds(a * 2, b * 2), {{vx, bounds(a, b)}});
  test_bounds(x * -2, bounds(b * -2, a * -2), {{vx, bounds(a, b)}});
  test_bounds(x / 2, bounds(a / 2, b / 2), {{vx, bounds(a, b)}});
  test_bounds(x / -2, bounds(b / -2, a / -2), {{vx, bounds(a, b)}});
  test_bounds(max(x, y), bounds(max(y, a), max(y, b)), {{vx, bounds(a, b)}});
  test_bounds(0 - x, bounds(0 - b, 0 - a), {{vx, bounds(a, b)}});
  test_bounds(x + y, bounds(a + 1, b + 5), {{vx, bounds(a, b)}, {vy, bounds(1, 5)}});
  // Free symbols are their own bounds.
  test_bounds(x, point(x));
  test_bounds(x * y + 3, point(x * y + 3));
}

TEST(bounds_of, constant) {
  const bounds_map x_m3_5 = {{vx, bounds(-3, 5)}};
  test_bounds(x + 1, bounds(-2, 6), x_m3_5);
  test_bounds(x * x, bounds(-15, 25), x_m3_5);
  test_bounds(x / 2, bounds(-2, 2), x_m3_5);
  test_bounds(x % 4, bounds(0, 3), x_m3_5);
  test_bounds(x % 8, bounds(0, 7), x_m3_5);
  test_bounds(x % 8, bounds(0, 5), {{vx, bounds(0, 5)}});
  test_bounds(y % 8, bounds(0, 7));
  test_bounds(abs(x), bounds(0, 5), x_m3_5);
  test_bounds(abs(x), bounds(3, 7), {{vx, bounds(-7, -3)}});
  test_bounds(select(z, x, y), bounds(-3, 8), {{vx, bounds(-3, 5)}, {vy, bounds(2, 8)}, {vz, bounds(0, 1)}});
  // A condition of free symbols has one value: the bounds are those of the value it selects.
  test_bounds(select(z, x, y), bounds(select(z, -3, 2), select(z, 5, 8)), {{vx, bounds(-3, 5)}, {vy, bounds(2, 8)}});
  test_bounds(select(z, x, y), point(select(z, x, y)));
  test_bounds(x * y, bounds(-24, 40), {{vx, bounds(-3, 5)}, {vy, bounds(2, 8)}});
  test_bounds(x / y, bounds(-3, 5), {{vx, bounds(-3, 5)}, {vy, bounds(1, 8)}});
  test_bounds(x / y, bounds(2, 10), {{vx, bounds(10, 20)}, {vy, bounds(2, 5)}});
  test_bounds(x / y, bounds(-10, -2), {{vx, bounds(10, 20)}, {vy, bounds(-5, -2)}});
  test_bounds(x / y, bounds(-20, 20), {{vx, bounds(10, 20)}, {vy, bounds(-5, 5)}});
  test_bounds(x % y, bounds(0, 4), {{vx, bounds(10, 20)}, {vy, bounds(-5, 5)}});
  test_bounds(x < 6, point(1), x_m3_5);
  test_bounds(x < 0, bounds(0, 1), x_m3_5);
  test_bounds(x < y, bounds(0, 1));
  test_bounds(x < 0 && y < 0, bounds(0, 1));
  test_bounds(clamp(x, 0, 10), bounds(0, 10), {{vx, bounds(-5, 20)}});
  test_bounds(clamp(x, 0, 10) + min(y, 3), bounds(min(y, 3), min(y, 3) + 10), {{vx, bounds(-5, 20)}});
  // Free symbols are exact; the prover bounds them further.
  test_bounds(clamp(x, 0, 10), point(clamp(x, 0, 10)));
}

TEST(bounds_of, infinite) {
  test_bounds(x + 1, bounds(1, oo), {{vx, bounds(0, oo)}});
  test_bounds(x - 1, bounds(neg_oo, 9), {{vx, bounds(neg_oo, 10)}});
  test_bounds(x * -2, bounds(neg_oo, 0), {{vx, bounds(0, oo)}});
  test_bounds(min(x, 5), bounds(0, 5), {{vx, bounds(0, oo)}});
  test_bounds(x * y, bounds(neg_oo, oo), {{vx, bounds(0, oo)}});
  test_bounds(x / 2, bounds(neg_oo, oo), {{vx, interval_expr::all()}});
  test_bounds(x / y, bounds(0, 20), {{vx, bounds(0, 20)}, {vy, bounds(1, oo)}});
  test_bounds(x % y, bounds(0, oo), {{vx, bounds(neg_oo, 0)}, {vy, bounds(1, oo)}});
}

// x / y for y of any sign (0 too: x / 0 is 0), where x's bounds have infinite parts: a region
// that may be empty (select(z, oo, a), select(z, -oo, b)), the hull of two such, and one side
// unbounded. Checked by evaluation against every x in the bounds: the bounds hold, are the exact
// range of x / y where y != 0, and stay empty where x's are empty by an infinity and y != 0.
TEST(bounds_of, divide_by_a_point_of_unknown_sign_with_infinite_parts) {
  const interval_expr maybe_empty(select(z, oo, a), select(z, neg_oo, b));
  const interval_expr hull(min(select(z, oo, a), select(w, oo, s)), max(select(z, neg_oo, b), select(w, neg_oo, t)));
  const interval_expr cases[] = {maybe_empty, hull, {neg_oo, select(z, neg_oo, b)}, {select(z, oo, a), oo}};
  for (const interval_expr& xb : cases) {
    const interval_expr r = bounds_of(x / y, {{vx, xb}});
    // Not the bound |x / y| <= |x|, which is not exact.
    EXPECT_TRUE(depends_on(r.min, vy).var) << str(r);
    for (index_t zv : {0, 1}) {
      for (index_t wv : {0, 1}) {
        for (index_t av = -7; av <= 7; ++av) {
          for (index_t bv = av - 1; bv <= 7; ++bv) {
            for (index_t yv = -4; yv <= 4; ++yv) {
              eval_context c;
              c[vz] = zv;
              c[vw] = wv;
              c[va] = av;
              c[vb] = bv;
              c[vs] = -av;
              c[vt] = bv + 3;
              c[vy] = yv;
              const index_t lo = evaluate(xb.min, c), hi = evaluate(xb.max, c);
              const index_t rlo = evaluate(r.min, c), rhi = evaluate(r.max, c);
              SCOPED_TRACE(testing::Message() << str(xb) << " -> " << str(r) << " with z = " << zv << ", w = " << wv
                                              << ", a = " << av << ", b = " << bv << ", y = " << yv);
              if (lo > hi) {
                // Empty by an infinity (a finite empty interval may divide to a non-empty one).
                if (yv != 0 &&
                    (lo == std::numeric_limits<index_t>::max() || hi == std::numeric_limits<index_t>::min())) {
                  ASSERT_GT(rlo, rhi);
                }
                continue;
              }
              const bool infinite =
                  lo == std::numeric_limits<index_t>::min() || hi == std::numeric_limits<index_t>::max();
              index_t seen_lo = std::numeric_limits<index_t>::max(), seen_hi = std::numeric_limits<index_t>::min();
              for (index_t xv = std::max<index_t>(lo, -40); xv <= std::min<index_t>(hi, 40); ++xv) {
                const index_t q = euclidean_div(xv, yv);
                ASSERT_LE(rlo, q) << xv;
                ASSERT_LE(q, rhi) << xv;
                seen_lo = std::min(seen_lo, q);
                seen_hi = std::max(seen_hi, q);
              }
              if (yv != 0 && !infinite) {
                ASSERT_EQ(rlo, seen_lo);
                ASSERT_EQ(rhi, seen_hi);
              }
              if (yv != 0 && infinite) {
                // Infinite on the side x / y goes to without bound.
                ASSERT_TRUE(rlo == std::numeric_limits<index_t>::min() || rhi == std::numeric_limits<index_t>::max());
              }
            }
          }
        }
      }
    }
  }
}

// A region read through a run-time radix q (of unknown sign) under nested loops, lifted out of
// them one loop at a time as bounds inference does (the bounds of each endpoint over one loop,
// simplified, then over the next). Each endpoint keeps one endpoint of the numerator per division
// (select(0 < q, lo / q, hi / q), each branch bounded knowing q's sign), so the region grows by a
// constant with each loop; as min(lo / q, hi / q) it held both and doubled with each loop (the
// random tester's seed 7394 case 2980: a 16 MB program after three loops and two radices).
// Checked by evaluation: exact for every q (the numerator is monotonic in each loop variable).
TEST(bounds_of, divide_by_a_point_of_unknown_sign_over_nested_loops) {
  const expr numerator = x + y * 8 + w * 3 - 1;
  interval_expr r = point(numerator / z);
  const std::pair<var, interval_expr> loops[] = {
      {vy, bounds(a, a + 2)}, {vw, bounds(b, min(b + 4, t))}, {vx, bounds(s, s + 5)}};
  std::size_t sizes[3];
  for (std::size_t i = 0; i < 3; ++i) {
    const bounds_map loop = {{loops[i].first, loops[i].second}};
    r = simplify(interval_expr(bounds_of(r.min, loop).min, bounds_of(r.max, loop).max));
    sizes[i] = str(r).size();
  }
  // Linear: 156, 180 and 180 characters after each lift (as min and max: 136 after the first,
  // 670 after the third).
  EXPECT_LT(sizes[2], 2 * sizes[0]) << str(r);
  for (index_t qv = -3; qv <= 3; ++qv) {
    for (index_t av = -2; av <= 2; ++av) {
      for (index_t bv = -2; bv <= 2; ++bv) {
        for (index_t tv : {bv + 1, bv + 4}) {
          eval_context c;
          c[vz] = qv;
          c[va] = av;
          c[vb] = bv;
          c[vs] = av - bv;
          c[vt] = tv;
          index_t lo = std::numeric_limits<index_t>::max(), hi = std::numeric_limits<index_t>::min();
          for (index_t yv = av; yv <= av + 2; ++yv) {
            for (index_t wv = bv; wv <= std::min(bv + 4, tv); ++wv) {
              for (index_t xv = av - bv; xv <= av - bv + 5; ++xv) {
                const index_t v = euclidean_div(xv + yv * 8 + wv * 3 - 1, qv);
                lo = std::min(lo, v);
                hi = std::max(hi, v);
              }
            }
          }
          SCOPED_TRACE(testing::Message()
                       << str(r) << " with q = " << qv << ", a = " << av << ", b = " << bv << ", t = " << tv);
          ASSERT_EQ(evaluate(r.min, c), lo);
          ASSERT_EQ(evaluate(r.max, c), hi);
        }
      }
    }
  }
}

TEST(bounds_of, interval) {
  const interval_expr r = bounds_of(interval_expr(x, x + 10), {{vx, bounds(a, b)}});
  EXPECT_TRUE(match(r.min, a) && match(r.max, b + 10)) << str(r);
}

TEST(prove, prove_true) {
  EXPECT_TRUE(prove_true(x + 1 > x));
  EXPECT_TRUE(prove_true(x < 11, {{vx, bounds(0, 10)}}));
  EXPECT_FALSE(prove_true(x < 10, {{vx, bounds(0, 10)}}));
  EXPECT_FALSE(prove_true(x < y));
  EXPECT_TRUE(prove_true(x % 4 < 4));
  EXPECT_TRUE(prove_true(x <= 10, {{vx, bounds(0, y)}, {vy, bounds(0, 10)}}));
  EXPECT_TRUE(prove_true(x * 2 + 1 != 0));
  EXPECT_TRUE(prove_true(max(x, 3)));
  EXPECT_TRUE(prove_true(clamp(x, 0, 10) <= 10));
  EXPECT_TRUE(prove_true(abs(x) + 1 > 0));
  EXPECT_TRUE(prove_true(min(x % 5, y) < 5));
  EXPECT_EQ(attempt_to_prove(x < 0, {{vx, bounds(0, 10)}}), false);
  EXPECT_EQ(attempt_to_prove(x < 5, {{vx, bounds(0, 10)}}), std::nullopt);
  EXPECT_EQ(attempt_to_prove(x >= 0, {{vx, bounds(0, 10)}}), true);
  EXPECT_EQ(attempt_to_prove(min(x, 0) > 0), false);
}

// Statements.

stmt call_of(var in, var o) { return call_stmt::make(nullptr, {in}, {o}, {}, {}); }

void test_simplify(const stmt& input, const stmt& expected, const bounds_map& bounds = bounds_map()) {
  const stmt result = simplify(input, bounds);
  EXPECT_EQ(str(result), str(expected)) << "input:\n" << str(input);
  const stmt again = simplify(result, bounds);
  EXPECT_TRUE(again.same_as(result)) << "simplifying again changed\n" << str(result) << "to\n" << str(again);
}

TEST(simplify_stmt, checks) {
  test_simplify(check::make(x < x + 1), stmt());
  test_simplify(block::make({check::make(x < x + 1), check::make(x < y)}), check::make(x < y));
  test_simplify(check::make(x < 11), stmt(), {{vx, bounds(0, 10)}});
  // A check that fails stays.
  test_simplify(check::make(x < 0), check::make(0), {{vx, bounds(0, 10)}});
}

TEST(simplify_stmt, loops) {
  const stmt body = call_of(buf, out);
  // Empty loops are removed, loops of one iteration become lets.
  test_simplify(loop::make(vx, loop::serial, bounds(10, 0), 1, body), stmt());
  test_simplify(loop::make(vx, loop::serial, bounds(y + 1, y), 1, body), stmt());
  test_simplify(loop::make(vx, loop::serial, bounds(y, y + 3), 4, check::make(x < z)), check::make(y < z));
  test_simplify(loop::make(vx, loop::serial, bounds(y, y + 3), 2, check::make(x < z)),
                loop::make(vx, loop::serial, bounds(y, y + 3), 2, check::make(x < z)));
  // A step that is not provably positive keeps the loop (the evaluator fails it).
  test_simplify(loop::make(vx, loop::serial, bounds(10, 0), s, body),
                loop::make(vx, loop::serial, bounds(10, 0), s, body));
  // The loop variable has the loop's bounds in the body.
  test_simplify(loop::make(vx, loop::serial, bounds(0, 9), 1, block::make(check::make(x < 10), check::make(x < y))),
                loop::make(vx, loop::serial, bounds(0, 9), 1, check::make(x < y)));
  // Loop invariant lets are hoisted.
  test_simplify(
      loop::make(vx, loop::serial, bounds(0, 9), 1, let_stmt::make({{vt, y * z}, {vu, x * t}}, check::make(t < u))),
      let_stmt::make(vt, y * z,
                     loop::make(vx, loop::serial, bounds(0, 9), 1, let_stmt::make(vu, x * t, check::make(t < u)))));
}

TEST(simplify_stmt, if_then_else) {
  const stmt a = check::make(x < y), b = check::make(y < z);
  test_simplify(if_then_else::make(x < x + 1, a, b), a);
  test_simplify(if_then_else::make(x < 0, a, b), b, {{vx, bounds(0, 10)}});
  test_simplify(if_then_else::make(x < z, a, b), if_then_else::make(x < z, a, b));
  test_simplify(if_then_else::make(x < z, stmt(), stmt()), stmt());
  // The condition holds in the true body: an inner if on it is its true body.
  test_simplify(if_then_else::make(x < z, block::make({a, if_then_else::make(x < z, b, a)})),
                if_then_else::make(x < z, block::make({a, b})));
}

TEST(simplify_stmt, lets) {
  test_simplify(let_stmt::make(vt, 3, check::make(t < y)), check::make(3 < y));
  test_simplify(let_stmt::make(vt, x * y, check::make(x < y)), check::make(x < y));
  test_simplify(let_stmt::make(vt, x * y, check::make(t < y)), let_stmt::make(vt, x * y, check::make(t < y)));
  test_simplify(let_stmt::make(vt, x % 4, check::make(t < 4)), stmt());
}

TEST(simplify_stmt, buffers) {
  const stmt body = call_of(buf, out);
  // Declarations whose symbol is not used are removed.
  test_simplify(allocate::make(buf2, memory_type::heap, 4, {{bounds(0, 9), 4, expr()}}, body), body);
  test_simplify(crop_dim::make(buf2, buf, 0, bounds(0, 9), body), body);
  test_simplify(slice_dim::make(buf2, buf, 0, 3, body), body);
  test_simplify(clone_buffer::make(buf2, buf, body), body);
  test_simplify(transpose::make(buf2, buf, {1, 0}, body), body);
  // Crops to the bounds of the buffer they crop do nothing.
  test_simplify(crop_dim::make(buf, buf, 0, buffer_bounds(buf, 0), body), body);
  test_simplify(crop_dim::make(buf, buf, 1, bounds(neg_oo, oo), body), body);
  test_simplify(crop_buffer::make(buf, buf, {buffer_bounds(buf, 0), buffer_bounds(buf, 1)}, body), body);
  test_simplify(crop_dim::make(buf2, buf, 0, buffer_bounds(buf, 0), call_of(buf2, out)),
                clone_buffer::make(buf2, buf, call_of(buf2, out)));
  // Clamps to the bounds of the cropped buffer are redundant.
  test_simplify(crop_dim::make(buf, buf, 0, bounds(max(buffer_min(buf, 0), x), min(y, buffer_max(buf, 0))), body),
                crop_dim::make(buf, buf, 0, bounds(x, y), body));
  test_simplify(crop_buffer::make(buf, buf, {bounds(x, y), buffer_bounds(buf, 1)}, body),
                crop_buffer::make(buf, buf, {bounds(x, y)}, body));
  // Expressions inside are simplified.
  test_simplify(crop_dim::make(buf2, buf, 0, bounds(x + 0, y * 1), call_of(buf2, out)),
                crop_dim::make(buf2, buf, 0, bounds(x, y), call_of(buf2, out)));
}

TEST(simplify_stmt, crops_to_the_allocated_bounds) {
  // Inside an allocation, a crop of a dim to the bounds it was allocated with does nothing: it is
  // dropped (a crop left with one dim is a crop_dim).
  const stmt use = call_of(buf2, out);
  auto alloc = [](stmt body, expr fold = expr()) {
    return allocate::make(buf, memory_type::heap, 4, {{bounds(x, y), 4, expr()}, {bounds(0, z), expr(), fold}}, body);
  };
  test_simplify(alloc(crop_buffer::make(buf2, buf, {bounds(x, y), bounds(w, w)}, use)),
                alloc(crop_dim::make(buf2, buf, 1, point(w), use)));
  test_simplify(alloc(crop_buffer::make(buf2, buf, {bounds(x, y), bounds(0, z)}, use)),
                alloc(clone_buffer::make(buf2, buf, use)));
  test_simplify(alloc(crop_dim::make(buf2, buf, 0, bounds(x, y), use)), alloc(clone_buffer::make(buf2, buf, use)));
  // Not when the bounds are other ones, or use a symbol declared again in between (the loop's x
  // is not the allocation's x), or the buffer is another one of the same name.
  test_simplify(alloc(crop_dim::make(buf2, buf, 0, bounds(x, z), use)),
                alloc(crop_dim::make(buf2, buf, 0, bounds(x, z), use)));
  const stmt in_loop = loop::make(vx, loop::serial, bounds(0, 9), 1, crop_dim::make(buf2, buf, 0, bounds(x, y), use));
  test_simplify(alloc(in_loop), alloc(in_loop));
  const stmt in_crop = crop_dim::make(buf, buf, 0, bounds(x + 1, y), crop_dim::make(buf2, buf, 0, bounds(x, y), use));
  test_simplify(alloc(in_crop), alloc(in_crop));
  // Not a folded dim: its crop can unfold it.
  const stmt folded = crop_dim::make(buf2, buf, 1, bounds(0, z), use);
  test_simplify(alloc(folded, 4), alloc(folded, 4));
}

TEST(simplify_stmt, crop_clamps_to_the_allocated_bounds) {
  // A crop clamps to the bounds of what it crops, so inside an allocation a crop bound clamped to
  // the allocation's bounds is the bound alone, folded dims included (the chunk of a loop over a
  // ring buffer: [x, min(x + 7, z)] of a dim allocated [0, z] is [x, x + 7]).
  const stmt use = call_of(buf2, out);
  auto alloc = [](stmt body, expr fold = expr()) {
    return allocate::make(buf, memory_type::heap, 4, {{bounds(0, z), 4, fold}}, body);
  };
  auto crop = [&](expr min, expr max) {
    return loop::make(vx, loop::serial, bounds(0, z), 8, crop_dim::make(buf2, buf, 0, bounds(min, max), use));
  };
  test_simplify(alloc(crop(x, min(x + 7, z))), alloc(crop(x, x + 7)));
  test_simplify(alloc(crop(x, min(z, x + 7)), 8), alloc(crop(x, x + 7), 8));
  test_simplify(alloc(crop(max(x - 1, 0), min(x + 7, z)), 8), alloc(crop(x - 1, x + 7), 8));
  // Not a clamp to other bounds, nor when the bound's symbol was declared again in between (z in
  // the loop is not the allocation's z), nor inside a crop of the buffer of the same name.
  test_simplify(alloc(crop(x, min(x + 7, y))), alloc(crop(x, min(x + 7, y))));
  const stmt shadowed =
      loop::make(vz, loop::serial, bounds(0, 3), 1, crop_dim::make(buf2, buf, 0, bounds(x, min(x + 7, z)), use));
  test_simplify(alloc(shadowed), alloc(shadowed));
  const stmt recropped =
      crop_dim::make(buf, buf, 0, bounds(1, y), crop_dim::make(buf2, buf, 0, bounds(x, min(x + 7, z)), use));
  test_simplify(alloc(recropped), alloc(recropped));
}

TEST(simplify_stmt, declarations_used_deep_inside_are_kept) {
  // A nest of 200 allocations around a block that uses every third buffer, in a call, an
  // expression or as the source of a crop: the others are dropped (whether a declaration's body
  // uses its symbol is found once per statement, not by searching the nest again for each one).
  std::vector<var> bufs;
  for (int i = 0; i < 200; ++i) {
    std::string name = "n";
    name += std::to_string(i);
    bufs.emplace_back(ctx, name);
  }
  std::vector<stmt> uses;
  for (int i = 0; i < 200; i += 3) {
    if (i % 9 == 0) {
      uses.push_back(call_of(bufs[i], out));
    } else if (i % 9 == 3) {
      uses.push_back(check::make(buffer_max(bufs[i], 0) > 0));
    } else {
      uses.push_back(crop_dim::make(buf2, bufs[i], 0, bounds(x, y), call_of(buf2, out)));
    }
  }
  const stmt inner = block::make(uses);
  auto nest = [&](bool only_used) {
    stmt result = inner;
    for (int i = 0; i < 200; ++i) {
      if (only_used && i % 3 != 0) continue;
      result = allocate::make(bufs[i], memory_type::heap, 4, {{bounds(0, z), 4, expr()}}, result);
    }
    return result;
  };
  test_simplify(nest(false), nest(true));
}

TEST(simplify_stmt, shadowing) {
  // Inside a redeclaration of y, bounds in terms of the outer y do not apply (x <= y + 1 would be
  // proven with x in [0, y] for the inner y).
  const stmt body = loop::make(vy, loop::serial, bounds(0, 1), 1, check::make(x <= y + 1));
  test_simplify(loop::make(vx, loop::serial, bounds(0, y), 1, body),
                loop::make(vx, loop::serial, bounds(0, y), 1, body));
  // Crops redeclare buffers: facts about the uncropped buffer's metadata do not apply inside.
  const stmt crop = crop_dim::make(buf, buf, 0, bounds(x, x + 1), check::make(buffer_max(buf, 0) < x + 5));
  test_simplify(let_stmt::make(vt, x * 2, crop), crop, {{vx, bounds(buffer_max(buf, 0) + 10, oo)}});
}

TEST(simplify_stmt, copy) {
  const var vd(ctx, "d");
  const stmt c = copy_stmt::make(nullptr, buf, {vd + 0, min(x, x + 1)}, out, {vd});
  test_simplify(c, copy_stmt::make(nullptr, buf, {vd, x}, out, {vd}));
  // The copy's coordinates are not the outer symbols of the same name.
  test_simplify(let_stmt::make(vd, 3, c), copy_stmt::make(nullptr, buf, {vd, x}, out, {vd}));
}

TEST(symbol_map, scoped_value) {
  symbol_map<int> m;
  EXPECT_FALSE(m.contains(vx));
  EXPECT_EQ(m.find(vx), nullptr);
  m[vx] = 3;
  EXPECT_EQ(*m.lookup(vx), 3);
  {
    auto s = m.bind(vx, 5);
    EXPECT_EQ(*m.find(vx), 5);
    {
      symbol_map<int>::scoped_value unbind(m, vx, std::nullopt);
      EXPECT_FALSE(m.contains(vx));
    }
    EXPECT_EQ(*m.find(vx), 5);
  }
  EXPECT_EQ(*m.lookup(vx), 3);
  m.erase(vx);
  EXPECT_FALSE(m.lookup(vx).has_value());
  EXPECT_FALSE(m.contains(var(1000)));
}

TEST(simplify_stmt, same_node) {
  // A simplified program comes back as the very same node.
  const stmt program = allocate::make(
      buf2, memory_type::heap, 4, {{bounds(0, y + 9), 4, expr()}},
      block::make({
          check::make(x < y),
          loop::make(vz, loop::parallel, bounds(0, y + 9), 2,
                     crop_dim::make(buf2, buf2, 0, bounds(z, min(y + 8, z) + 1),
                                    let_stmt::make(vt, y * z, block::make(call_of(buf, buf2), check::make(t < w))))),
          slice_dim::make(buf, buf2, 0, 3, call_of(buf, out)),
      }));
  EXPECT_TRUE(simplify(program).same_as(program)) << str(simplify(program));
  const expr e = min(x * 2 + y, z) < w;
  EXPECT_TRUE(simplify(e).same_as(e));
}

}  // namespace
}  // namespace slinky
