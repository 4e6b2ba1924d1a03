// Tests of the base layer: Euclidean and saturating arithmetic, gcd/lcm, alignment, reference
// counting, span and function_ref.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "slinky/base/arithmetic.h"
#include "slinky/base/function_ref.h"
#include "slinky/base/ref_count.h"
#include "slinky/base/span.h"

namespace slinky {
namespace {

using i64 = std::int64_t;
constexpr i64 max_i64 = std::numeric_limits<i64>::max();
constexpr i64 min_i64 = std::numeric_limits<i64>::min();

TEST(arithmetic, euclidean_division) {
  EXPECT_EQ(euclidean_div<i64>(7, 2), 3);
  EXPECT_EQ(euclidean_div<i64>(-7, 2), -4);
  EXPECT_EQ(euclidean_div<i64>(7, -2), -3);
  EXPECT_EQ(euclidean_div<i64>(-7, -2), 4);
  EXPECT_EQ(euclidean_mod<i64>(-7, 2), 1);
  EXPECT_EQ(euclidean_mod<i64>(7, -2), 1);
  EXPECT_EQ(euclidean_mod<i64>(-7, -2), 1);
  EXPECT_EQ(euclidean_div<i64>(5, 0), 0);
  EXPECT_EQ(euclidean_mod<i64>(5, 0), 0);
  EXPECT_EQ(euclidean_div<i64>(min_i64, -1), max_i64);
  EXPECT_EQ(euclidean_mod<i64>(min_i64, -1), 0);
  for (i64 a = -50; a <= 50; ++a) {
    for (i64 b = -9; b <= 9; ++b) {
      if (b == 0) continue;
      i64 q = euclidean_div(a, b);
      i64 r = euclidean_mod(a, b);
      ASSERT_EQ(a, q * b + r) << a << " " << b;
      ASSERT_GE(r, 0);
      ASSERT_LT(r, b < 0 ? -b : b);
      if (b > 0) {
        ASSERT_EQ(euclidean_mod_positive_modulus(a, b), r);
      }
    }
  }
  EXPECT_EQ(ceil_div<i64>(7, 2), 4);
  EXPECT_EQ(ceil_div<i64>(-7, 2), -3);
  EXPECT_EQ(floor_div<i64>(-7, 2), -4);
}

TEST(arithmetic, overflow_and_saturation) {
  i64 r;
  EXPECT_FALSE(add_overflows<i64>(1, 2, &r));
  EXPECT_EQ(r, 3);
  EXPECT_TRUE(add_overflows<i64>(max_i64, 1, &r));
  EXPECT_TRUE(sub_overflows<i64>(min_i64, 1, &r));
  EXPECT_TRUE(mul_overflows<i64>(max_i64 / 2 + 1, 2, &r));
  EXPECT_EQ(saturate_add<i64>(max_i64, 1), max_i64);
  EXPECT_EQ(saturate_add<i64>(min_i64, -1), min_i64);
  EXPECT_EQ(saturate_sub<i64>(min_i64, 1), min_i64);
  EXPECT_EQ(saturate_sub<i64>(max_i64, -1), max_i64);
  EXPECT_EQ(saturate_mul<i64>(max_i64, 2), max_i64);
  EXPECT_EQ(saturate_mul<i64>(max_i64, -2), min_i64);
  EXPECT_EQ(saturate_mul<i64>(min_i64, -1), max_i64);
  EXPECT_EQ(saturate_negate<i64>(min_i64), max_i64);
  EXPECT_EQ(saturate_add<i64>(3, 4), 7);
}

TEST(arithmetic, gcd_lcm_alignment) {
  EXPECT_EQ(gcd<i64>(12, 18), 6);
  EXPECT_EQ(gcd<i64>(-12, 18), 6);
  EXPECT_EQ(gcd<i64>(0, 5), 5);
  EXPECT_EQ(gcd<i64>(0, 0), 0);
  EXPECT_EQ(lcm<i64>(4, 6), 12);
  EXPECT_EQ(lcm<i64>(0, 6), 0);
  EXPECT_EQ(align_down<i64>(13, 4), 12);
  EXPECT_EQ(align_down<i64>(-13, 4), -16);
  EXPECT_EQ(align_up<i64>(13, 4), 16);
  EXPECT_EQ(align_up<i64>(-13, 4), -12);
  EXPECT_EQ(align_up<i64>(16, 4), 16);
  EXPECT_EQ(align_up<std::size_t>(17, 8), 24u);
  EXPECT_TRUE(is_power_of_two<i64>(64));
  EXPECT_FALSE(is_power_of_two<i64>(0));
  EXPECT_FALSE(is_power_of_two<i64>(12));
}

struct counted : public ref_counted<counted> {
  static int live;
  counted() { ++live; }
  ~counted() { --live; }
};
int counted::live = 0;

TEST(ref_count, lifetime) {
  {
    ref_count<counted> a = new counted();
    EXPECT_EQ(counted::live, 1);
    EXPECT_EQ(a->ref_count(), 1);
    ref_count<counted> b = a;
    EXPECT_EQ(a->ref_count(), 2);
    ref_count<counted> c = std::move(b);
    EXPECT_FALSE(b.defined());
    EXPECT_EQ(a->ref_count(), 2);
    c = nullptr;
    EXPECT_EQ(a->ref_count(), 1);
    a = a;  // self-assignment keeps the object alive
    EXPECT_EQ(counted::live, 1);
    ref_count<const counted> d = a;
    EXPECT_EQ(a->ref_count(), 2);
  }
  EXPECT_EQ(counted::live, 0);
}

int sum(span<const int> s) {
  int result = 0;
  for (int i : s) result += i;
  return result;
}

struct base_type {
  int value;
};
struct derived_type : base_type {};
int sum_pointers(span<const base_type* const> s) {
  int result = 0;
  for (const base_type* i : s) result += i->value;
  return result;
}

TEST(span, conversions) {
  int array[] = {1, 2, 3};
  std::vector<int> vector = {4, 5};
  EXPECT_EQ(sum(array), 6);
  EXPECT_EQ(sum(vector), 9);
  EXPECT_EQ(sum({7, 8, 9}), 24);
  EXPECT_EQ(sum({}), 0);
  EXPECT_EQ(sum(span<const int>(array, 2)), 3);
  span<const int> s(array);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s.front(), 1);
  EXPECT_EQ(s.back(), 3);
  EXPECT_EQ(sum(s.subspan(1)), 5);
  derived_type a{{10}}, b{{20}};
  EXPECT_EQ(sum_pointers({&a, &b}), 30);
}

int apply(function_ref<int(int)> f, int x) { return f(x); }

TEST(function_ref, calls_without_owning) {
  int offset = 5;
  EXPECT_EQ(apply([&](int x) { return x + offset; }, 1), 6);
  auto twice = [](int x) { return x * 2; };
  EXPECT_EQ(apply(twice, 21), 42);
  function_ref<int(int)> empty;
  EXPECT_FALSE(empty);
}

}  // namespace
}  // namespace slinky
