// Tests of modulus_remainder: each operator against brute force over random small sets (the result
// must contain every result of the operation on members of the operands), exact results of
// typical cases, normalization and overflow.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <random>

#include "slinky/base/arithmetic.h"
#include "slinky/base/modulus_remainder.h"

namespace slinky {
namespace {

using mr = modulus_remainder<std::int64_t>;
using i64 = std::int64_t;
constexpr i64 max_i64 = std::numeric_limits<i64>::max();
constexpr i64 min_i64 = std::numeric_limits<i64>::min();

TEST(modulus_remainder, construction) {
  EXPECT_EQ(mr().modulus, 1);
  EXPECT_EQ(mr().remainder, 0);
  EXPECT_EQ(mr(8, 11), mr(8, 3));
  EXPECT_EQ(mr(-8, 3), mr(8, 3));
  EXPECT_EQ(mr(8, -1), mr(8, 7));
  EXPECT_EQ(mr(0, -5).remainder, -5);
  EXPECT_EQ(mr(1, 17), mr());
  EXPECT_EQ(mr(min_i64, 3), mr());
  EXPECT_NE(mr(8, 3), mr(8, 4));
  EXPECT_TRUE(mr(0, 4).is_constant());
  EXPECT_FALSE(mr(4, 0).is_constant());
  EXPECT_TRUE(mr(8, 3).contains(-5));
  EXPECT_TRUE(mr(8, 3).contains(11));
  EXPECT_FALSE(mr(8, 3).contains(4));
  EXPECT_TRUE(mr(0, -5).contains(-5));
  EXPECT_FALSE(mr(0, -5).contains(3));
  EXPECT_EQ(mr::constant(7), mr(0, 7));
  EXPECT_EQ(mr::unknown(), mr());
  modulus_remainder<int> small(6, 8);
  EXPECT_EQ(small.modulus, 6);
  EXPECT_EQ(small.remainder, 2);
}

TEST(modulus_remainder, exact_results) {
  EXPECT_EQ(mr(8, 3) + mr(4, 1), mr(4, 0));
  EXPECT_EQ(mr(8, 3) + 5, mr(8, 0));
  EXPECT_EQ(5 + mr(8, 3), mr(8, 0));
  EXPECT_EQ(mr(8, 3) - mr(0, 3), mr(8, 0));
  EXPECT_EQ(10 - mr(8, 3), mr(8, 7));
  EXPECT_EQ(mr(8, 3) * 2, mr(16, 6));
  EXPECT_EQ(mr(8, 3) * -1, mr(8, 5));
  EXPECT_EQ(mr(8, 3) * mr(4, 2), mr(4, 2));
  EXPECT_EQ(mr(8, 3) * 0, mr(0, 0));
  EXPECT_EQ(mr(8, 3) / 2, mr(4, 1));
  EXPECT_EQ(mr(8, 3) / -2, mr(4, 3));
  EXPECT_EQ(mr(8, 3) / 3, mr());
  EXPECT_EQ(mr(8, 3) / 0, mr(0, 0));
  EXPECT_EQ(mr(8, 3) / mr(8, 1), mr());
  EXPECT_EQ(mr(0, -7) / 2, mr(0, -4));
  EXPECT_EQ(mr(8, 3) % 4, mr(0, 3));
  EXPECT_EQ(mr(8, 3) % 8, mr(0, 3));
  EXPECT_EQ(mr(8, 3) % -4, mr(0, 3));
  EXPECT_EQ(mr(8, 3) % 6, mr(2, 1));
  EXPECT_EQ(mr(8, 3) % 0, mr(0, 0));
  EXPECT_EQ(mr(0, -7) % 3, mr(0, 2));
  // y may be 0 (y in (4, 0)): x % y is also 0 sometimes.
  EXPECT_EQ(mr(8, 3) % mr(4, 0), mr(1, 0));
  EXPECT_EQ(mr(8, 4) % mr(4, 0), mr(4, 0));
  EXPECT_EQ(mr(8, 4) % mr(12, 6), mr(2, 0));
  EXPECT_EQ(mr(4, 1) | mr(4, 3), mr(2, 1));
  EXPECT_EQ(mr(0, 3) | mr(0, 3), mr(0, 3));
  EXPECT_EQ(mr(0, 3) | mr(0, 7), mr(4, 3));
  EXPECT_EQ(mr(4, 1) & mr(6, 3), mr(12, 9));
  EXPECT_EQ(mr(4, 1) & mr(8, 5), mr(8, 5));
  EXPECT_EQ(mr(4, 1) & mr(0, 9), mr(0, 9));
  EXPECT_EQ(mr(3, 1) & mr(5, 2), mr(15, 7));
  EXPECT_EQ(mr() & mr(6, 3), mr(6, 3));
  // An empty intersection: either operand is conservative.
  const mr empty = mr(4, 1) & mr(4, 2);
  EXPECT_TRUE(empty == mr(4, 1) || empty == mr(4, 2));

  mr x(8, 3);
  x += mr(0, 1);
  EXPECT_EQ(x, mr(8, 4));
  x *= mr(0, 2);
  EXPECT_EQ(x, mr(16, 8));
  x /= mr(0, 4);
  EXPECT_EQ(x, mr(4, 2));
  x -= mr(0, 2);
  EXPECT_EQ(x, mr(4, 0));
  x %= mr(0, 2);
  EXPECT_EQ(x, mr(0, 0));
  x |= mr(0, 6);
  EXPECT_EQ(x, mr(6, 0));
  x &= mr(4, 0);
  EXPECT_EQ(x, mr(12, 0));
}

TEST(modulus_remainder, overflow) {
  const i64 big = i64(1) << 62;
  EXPECT_EQ(mr(big, 1) * mr(4, 1), mr());
  EXPECT_EQ(mr(0, max_i64) + 1, mr());
  EXPECT_EQ(mr(0, min_i64) - 1, mr());
  EXPECT_EQ(mr(0, min_i64) / -1, mr());
  EXPECT_EQ(mr(0, min_i64) | mr(0, 1), mr());
  EXPECT_EQ(mr(4, 1) % mr(0, min_i64), mr());
  EXPECT_EQ(mr(big, 0) * mr(big, 0), mr());
  // Moduli whose lcm overflows: the intersection falls back to one operand.
  const mr a(big + 1, 0), b(big - 1, 0);
  const mr ab = a & b;
  EXPECT_TRUE(ab == a || ab == b);
}

// A random set with a small modulus (sometimes a constant or every integer).
mr random_set(std::mt19937_64& rng) {
  std::uniform_int_distribution<i64> modulus(0, 12);
  std::uniform_int_distribution<i64> remainder(-20, 20);
  return mr(modulus(rng), remainder(rng));
}

i64 random_member(std::mt19937_64& rng, const mr& s) {
  std::uniform_int_distribution<i64> k(-10, 10);
  return s.modulus * k(rng) + s.remainder;
}

void check_operator(const char* name, std::function<mr(const mr&, const mr&)> op,
                    std::function<i64(i64, i64)> value_op) {
  std::mt19937_64 rng(0x5eed);
  for (int trial = 0; trial < 3000; ++trial) {
    const mr a = random_set(rng);
    const mr b = random_set(rng);
    const mr r = op(a, b);
    EXPECT_GE(r.modulus, 0);
    if (r.modulus > 0) {
      EXPECT_GE(r.remainder, 0);
      EXPECT_LT(r.remainder, r.modulus);
    }
    for (int i = 0; i < 20; ++i) {
      const i64 x = random_member(rng, a);
      const i64 y = random_member(rng, b);
      ASSERT_TRUE(a.contains(x) && b.contains(y));
      const i64 v = value_op(x, y);
      ASSERT_TRUE(r.contains(v)) << "(" << a.modulus << ", " << a.remainder << ") " << name << " (" << b.modulus << ", "
                                 << b.remainder << ") = (" << r.modulus << ", " << r.remainder << ") does not contain "
                                 << x << " " << name << " " << y << " = " << v;
    }
  }
}

TEST(modulus_remainder, brute_force_add) {
  check_operator(
      "+", [](const mr& a, const mr& b) { return a + b; }, [](i64 x, i64 y) { return x + y; });
}
TEST(modulus_remainder, brute_force_sub) {
  check_operator(
      "-", [](const mr& a, const mr& b) { return a - b; }, [](i64 x, i64 y) { return x - y; });
}
TEST(modulus_remainder, brute_force_mul) {
  check_operator(
      "*", [](const mr& a, const mr& b) { return a * b; }, [](i64 x, i64 y) { return x * y; });
}
TEST(modulus_remainder, brute_force_div) {
  check_operator(
      "/", [](const mr& a, const mr& b) { return a / b; }, [](i64 x, i64 y) { return euclidean_div(x, y); });
}
TEST(modulus_remainder, brute_force_mod) {
  check_operator(
      "%", [](const mr& a, const mr& b) { return a % b; }, [](i64 x, i64 y) { return euclidean_mod(x, y); });
}
TEST(modulus_remainder, brute_force_union) {
  // Every member of either operand is in the union.
  check_operator(
      "|", [](const mr& a, const mr& b) { return a | b; }, [](i64 x, i64) { return x; });
  check_operator(
      "|", [](const mr& a, const mr& b) { return a | b; }, [](i64, i64 y) { return y; });
}
TEST(modulus_remainder, brute_force_constants) {
  // The operators with a constant operand are those of the constant's set.
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<i64> constant(-12, 12);
  for (int trial = 0; trial < 3000; ++trial) {
    const mr a = random_set(rng);
    const i64 c = constant(rng);
    const mr cs = mr::constant(c);
    EXPECT_EQ(a + c, a + cs);
    EXPECT_EQ(c + a, cs + a);
    EXPECT_EQ(a - c, a - cs);
    EXPECT_EQ(c - a, cs - a);
    EXPECT_EQ(a * c, a * cs);
    EXPECT_EQ(c * a, cs * a);
    EXPECT_EQ(a / c, a / cs);
    EXPECT_EQ(c / a, cs / a);
    EXPECT_EQ(a % c, a % cs);
    EXPECT_EQ(c % a, cs % a);
    EXPECT_EQ(a | c, a | cs);
    EXPECT_EQ(a & c, a & cs);
    for (int i = 0; i < 10; ++i) {
      const i64 x = random_member(rng, a);
      EXPECT_TRUE((a + c).contains(x + c));
      EXPECT_TRUE((a * c).contains(x * c));
      EXPECT_TRUE((a / c).contains(euclidean_div(x, c)));
      EXPECT_TRUE((a % c).contains(euclidean_mod(x, c)));
      EXPECT_TRUE((c % a).contains(euclidean_mod(c, x)));
    }
  }
}
TEST(modulus_remainder, brute_force_intersection) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<i64> value(-200, 200);
  int members = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const mr a = random_set(rng);
    const mr b = random_set(rng);
    const mr r = a & b;
    // The intersection is within the union of both (it is one of them or smaller than both).
    for (int i = 0; i < 50; ++i) {
      const i64 x = value(rng);
      if (!a.contains(x) || !b.contains(x)) continue;
      ++members;
      ASSERT_TRUE(r.contains(x)) << "(" << a.modulus << ", " << a.remainder << ") & (" << b.modulus << ", "
                                 << b.remainder << ") = (" << r.modulus << ", " << r.remainder << ") does not contain "
                                 << x;
    }
    // Where both are sets of several values and the intersection is not empty, it is exact: its
    // modulus is the lcm.
    if (!a.is_constant() && !b.is_constant() && (b.remainder - a.remainder) % gcd(a.modulus, b.modulus) == 0) {
      EXPECT_EQ(r.modulus, lcm(a.modulus, b.modulus));
    }
  }
  EXPECT_GT(members, 1000);
}

}  // namespace
}  // namespace slinky
