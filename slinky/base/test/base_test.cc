// Tests of the base layer: Euclidean, checked and saturating arithmetic, staircase bounds,
// gcd/lcm, alignment, reference counting, span, function_ref, sets, allocators, util.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <type_traits>
#include <vector>

#include "slinky/base/allocator.h"
#include "slinky/base/arithmetic.h"
#include "slinky/base/assert.h"
#include "slinky/base/function_ref.h"
#include "slinky/base/ref_count.h"
#include "slinky/base/set.h"
#include "slinky/base/span.h"
#include "slinky/base/util.h"

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
        // Beyond 32 bits, and with power-of-two moduli (a mask).
        const i64 big = a * (i64{1} << 40) + a;
        ASSERT_EQ(euclidean_mod_positive_modulus(big, b), euclidean_mod(big, b)) << big << " " << b;
        ASSERT_EQ(euclidean_mod_positive_modulus(a, b << 40), euclidean_mod(a, b << 40)) << a << " " << b;
      }
    }
  }
  EXPECT_EQ(euclidean_mod_positive_modulus(min_i64, i64{1} << 62), 0);
  EXPECT_EQ(euclidean_mod_positive_modulus(min_i64 + 1, i64{1} << 62), 1);
  EXPECT_EQ(euclidean_mod_positive_modulus(min_i64 + ((i64{1} << 62) - 1), i64{1} << 62), (i64{1} << 62) - 1);
  EXPECT_EQ(euclidean_mod_positive_modulus(max_i64, max_i64), 0);
  EXPECT_EQ(euclidean_mod_positive_modulus(min_i64, max_i64), max_i64 - 1);
  EXPECT_EQ(euclidean_mod_positive_modulus<int>(-7, 4), 1);
  EXPECT_EQ(euclidean_mod_positive_modulus<unsigned>(7, 3), 1u);
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
  // Alignments that are not powers of two (a division; powers of two take a mask).
  EXPECT_EQ(align_down<i64>(13, 6), 12);
  EXPECT_EQ(align_down<i64>(-13, 6), -18);
  EXPECT_EQ(align_up<i64>(13, 3), 15);
  EXPECT_EQ(align_up<i64>(-13, 3), -12);
  EXPECT_EQ(align_up<std::size_t>(17, 12), 24u);
  EXPECT_EQ(align_up<i64>(-16, 1), -16);
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

TEST(arithmetic, reference_names) {
  EXPECT_EQ(euclidean_div<i64>(5, 0, 7), 7);
  EXPECT_EQ(euclidean_mod<i64>(5, 0, 7), 7);
  EXPECT_EQ(euclidean_div<i64>(5, 0), 0);
  for (i64 a = -20; a <= 20; ++a) {
    for (i64 b = 1; b <= 7; ++b) {
      ASSERT_EQ(euclidean_div_positive_divisor(a, b), euclidean_div(a, b)) << a << " " << b;
      // Nearest integer, halves up: floor(a / b + 1 / 2) == floor((2a + b) / 2b).
      ASSERT_EQ(round_div(a, b), euclidean_div(2 * a + b, 2 * b)) << a << " " << b;
    }
  }
  EXPECT_EQ(round_div<i64>(5, 2), 3);
  EXPECT_EQ(round_div<i64>(-5, 2), -2);
  EXPECT_EQ(round_div<i64>(7, 3), 2);
  EXPECT_EQ(add_sat<i64>(max_i64, 1), max_i64);
  EXPECT_EQ(add_sat<i64>(min_i64, -1), min_i64);
  EXPECT_EQ(sub_sat<i64>(min_i64, 1), min_i64);
  EXPECT_EQ(sub_sat<i64>(max_i64, -1), max_i64);
  EXPECT_EQ(mul_sat<i64>(min_i64, 2), min_i64);
  EXPECT_EQ(mul_sat<i64>(-3, 4), -12);
  EXPECT_EQ(div_sat<i64>(min_i64, -1), max_i64);
  EXPECT_EQ(div_sat<i64>(-7, 2), -4);
  EXPECT_EQ(div_sat<i64>(7, 0), 0);
  EXPECT_EQ(sign<i64>(-5), -1);
  EXPECT_EQ(sign<i64>(0), 0);
  EXPECT_EQ(sign<i64>(9), 1);
  EXPECT_EQ(sign<int>(std::numeric_limits<int>::min()), -1);
}

TEST(arithmetic, overflow_predicates) {
  EXPECT_FALSE(add_overflows<i64>(1, 2));
  EXPECT_TRUE(add_overflows<i64>(max_i64, 1));
  EXPECT_FALSE(add_overflows<i64>(max_i64, -1));
  EXPECT_TRUE(sub_overflows<i64>(min_i64, 1));
  EXPECT_FALSE(sub_overflows<i64>(-1, min_i64));
  EXPECT_TRUE(sub_overflows<i64>(0, min_i64));
  EXPECT_TRUE(mul_overflows<i64>(max_i64 / 2 + 1, 2));
  EXPECT_FALSE(mul_overflows<i64>(max_i64 / 2, 2));
  EXPECT_TRUE(mul_overflows<i64>(min_i64, -1));
  EXPECT_TRUE(add_overflows<std::int8_t>(100, 100));

  i64 r = 42;
  EXPECT_FALSE(add_with_overflow<i64>(3, 4, r));
  EXPECT_EQ(r, 7);
  EXPECT_TRUE(add_with_overflow<i64>(max_i64, 1, r));
  EXPECT_EQ(r, 0);
  r = 42;
  EXPECT_FALSE(sub_with_overflow<i64>(3, 4, r));
  EXPECT_EQ(r, -1);
  EXPECT_TRUE(sub_with_overflow<i64>(min_i64, 1, r));
  EXPECT_EQ(r, 0);
  r = 42;
  EXPECT_FALSE(mul_with_overflow<i64>(-3, 4, r));
  EXPECT_EQ(r, -12);
  EXPECT_TRUE(mul_with_overflow<i64>(min_i64, -1, r));
  EXPECT_EQ(r, 0);
}

TEST(arithmetic, staircase) {
  for (i64 x = -30; x <= 30; ++x) {
    ASSERT_EQ(staircase<i64>(x, 3, 4, 5), euclidean_div<i64>(x + 3, 4) * 5);
    ASSERT_EQ(staircase<i64>(x, 3, -4, 5), euclidean_div<i64>(x + 3, -4) * 5);
    ASSERT_EQ(staircase<i64>(x, 3, 0, 5), 0);
  }
  interval<int> a{1, 2};
  EXPECT_EQ(a, (interval<int>{1, 2}));
  EXPECT_NE(a, (interval<int>{1, std::nullopt}));
  EXPECT_NE(a, (interval<int>{}));
  EXPECT_EQ((interval<int>{}), (interval<int>{std::nullopt, std::nullopt}));
  // The one- and two-argument constructors (API_COMPAT 5.2 item 11): one value is a point.
  EXPECT_EQ(interval<int>(1, 2), a);
  EXPECT_EQ(interval<int>(3), (interval<int>{3, 3}));
  EXPECT_EQ(interval<int>(std::nullopt), interval<int>());
  EXPECT_EQ(interval<int>(std::nullopt, 4).max, 4);
  EXPECT_FALSE(interval<int>(std::nullopt, 4).min);
  const interval<i64> p = [] { return interval<i64>(5); }();
  EXPECT_EQ(p.min, 5);
  EXPECT_EQ(p.max, 5);
  // x / 4 * 4 - x / 2 * 2 is 0 or -2.
  EXPECT_EQ(staircase_sum_bounds(0, 4, 4, 0, 2, -2), (interval<int>{-2, 0}));
  // x / 2 + x / 3 grows without bound.
  EXPECT_EQ(staircase_sum_bounds(0, 2, 1, 0, 3, 1), (interval<int>{}));
  // (x + 3) / 3 * 3 - x is in [1, 3].
  EXPECT_EQ(staircase_sum_bounds(3, 3, 3, 0, 1, -1), (interval<int>{1, 3}));
}

// Min and max of the sum of two staircases over [lo, hi], by brute force.
std::pair<i64, i64> brute_bounds(i64 lo, i64 hi, i64 a1, i64 b1, i64 c1, i64 a2, i64 b2, i64 c2) {
  i64 mn = max_i64, mx = min_i64;
  for (i64 x = lo; x <= hi; ++x) {
    i64 v = staircase(x, a1, b1, c1) + staircase(x, a2, b2, c2);
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  return {mn, mx};
}

TEST(arithmetic, staircase_sum_bounds_brute_force) {
  std::mt19937 rng(1234);
  auto small = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int bounded = 0, unbounded = 0;
  for (int rep = 0; rep < 20000; ++rep) {
    // Cancelling slopes are rare among random values: make half the cases cancel on purpose.
    i64 a1 = small(-20, 20), b1 = small(-8, 8), c1 = small(-9, 9);
    i64 a2 = small(-20, 20), b2 = small(-8, 8), c2 = small(-9, 9);
    if (rep % 2 == 0 && b1 != 0 && b2 != 0) {
      // c1 / b1 == -c2 / b2: c2 = -c1 * b2 / b1 with c1 a multiple of b1 / gcd(b1, b2).
      const i64 k = small(-3, 3);
      c1 = k * (b1 / gcd(b1, b2));
      c2 = -c1 * b2 / b1;
    }
    interval<i64> b = staircase_sum_bounds(a1, b1, c1, a2, b2, c2);
    ASSERT_EQ(b.min.has_value(), b.max.has_value());
    // Every period (at most lcm(8, 7) = 56) is covered several times over.
    const std::pair<i64, i64> near = brute_bounds(-400, 400, a1, b1, c1, a2, b2, c2);
    if (b.min) {
      ++bounded;
      ASSERT_EQ(*b.min, near.first) << a1 << " " << b1 << " " << c1 << " " << a2 << " " << b2 << " " << c2;
      ASSERT_EQ(*b.max, near.second) << a1 << " " << b1 << " " << c1 << " " << a2 << " " << b2 << " " << c2;
      // Far away the sum stays within the bounds.
      const std::pair<i64, i64> far = brute_bounds(100000, 100200, a1, b1, c1, a2, b2, c2);
      ASSERT_GE(far.first, *b.min);
      ASSERT_LE(far.second, *b.max);
    } else {
      ++unbounded;
      // Unbounded: the sum goes further out on a wider range, on both sides.
      const std::pair<i64, i64> wide = brute_bounds(-2000, 2000, a1, b1, c1, a2, b2, c2);
      ASSERT_LT(wide.first, near.first) << a1 << " " << b1 << " " << c1 << " " << a2 << " " << b2 << " " << c2;
      ASSERT_GT(wide.second, near.second) << a1 << " " << b1 << " " << c1 << " " << a2 << " " << b2 << " " << c2;
    }
  }
  // Both outcomes were exercised many times.
  EXPECT_GT(bounded, 5000);
  EXPECT_GT(unbounded, 5000);
}

TEST(arithmetic, staircase_sum_bounds_extremes) {
  // Large divisors and offsets: computed without overflow.
  const i64 big = max_i64 / 3;
  interval<i64> b = staircase_sum_bounds<i64>(5, big, big, 0, -big, big);
  // c1 / b1 == 1 and c2 / b2 == -1 cancel: the sum is big * ((x + 5) / big - x / big).
  EXPECT_EQ(b, (interval<i64>{0, big}));
  // (x + min) / min - x / min == 1 for every x.
  EXPECT_EQ(staircase_sum_bounds<i64>(min_i64, min_i64, 1, 0, min_i64, -1), (interval<i64>{1, 1}));
  // Bounds that do not fit are missing: (x + 2) * max - x * max == 2 * max.
  EXPECT_EQ(staircase_sum_bounds<i64>(2, 1, max_i64, 0, 1, -max_i64), (interval<i64>{}));
  EXPECT_EQ(staircase_sum_bounds<i64>(0, 2, max_i64, 0, 2, -max_i64), (interval<i64>{0, 0}));
  EXPECT_EQ(staircase_sum_bounds<i64>(0, 1, max_i64, 0, 1, -max_i64), (interval<i64>{0, 0}));
  EXPECT_EQ(staircase_sum_bounds<int>(0, 0, 1, 0, 5, 0), (interval<int>{0, 0}));
  EXPECT_EQ(staircase_sum_bounds<int>(0, 0, 1, 0, 5, 1), (interval<int>{}));
}

struct node : public ref_counted<node> {
  static int live;
  int value;
  explicit node(int value = 0) : value(value) { ++live; }
  node(const node& other) : ref_counted<node>(other), value(other.value) { ++live; }
  node& operator=(const node&) = default;
  ~node() override { --live; }
};
int node::live = 0;
struct derived_node : node {
  static int destroyed;
  explicit derived_node(int value) : node(value) {}
  ~derived_node() override { ++destroyed; }
};
int derived_node::destroyed = 0;

int value_of(const node* n) { return n ? n->value : -1; }

TEST(ref_count, pointer_conversions) {
  using node_ptr = ref_count<node>;
  node_ptr a = new node(1), b = new node(2), c = a;
  EXPECT_TRUE(a == c);
  EXPECT_FALSE(a == b);
  EXPECT_TRUE(a != b);
  EXPECT_FALSE(a == nullptr);
  node_ptr null;
  EXPECT_TRUE(null == nullptr);
  node_ptr from_null = nullptr;
  EXPECT_FALSE(from_null.defined());
  if (null) ADD_FAILURE() << "a null handle is true";
  if (!a) ADD_FAILURE() << "a non-null handle is false";
  bool implicit = a;  // Through the implicit conversion to node*.
  EXPECT_TRUE(implicit);
  const node* p = a;
  EXPECT_EQ(p, a.get());
  EXPECT_EQ(value_of(a), 1);
  EXPECT_EQ(value_of(null), -1);
  const node_ptr& ca = a;
  EXPECT_EQ((*ca).value, 1);
  EXPECT_EQ(ca->value, 1);

  // Handles order as pointers: usable as map keys.
  std::map<node_ptr, int> m;
  m[a] = 10;
  m[b] = 20;
  m[c] += 1;
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m[a], 11);
  EXPECT_EQ(a->ref_count(), 3);  // a, c and the key.
  m.clear();
  EXPECT_EQ(a->ref_count(), 2);

  // To a handle of a base or const type.
  ref_count<derived_node> d = new derived_node(3);
  ref_count<node> as_base = d;
  ref_count<const node> as_const = as_base;
  EXPECT_EQ(d->ref_count(), 3);
  EXPECT_EQ(as_const->value, 3);
  static_assert(!std::is_convertible_v<ref_count<node>, ref_count<derived_node>>);
  static_assert(std::is_convertible_v<ref_count<derived_node>, ref_count<const node>>);
}

TEST(ref_count, take_and_assume) {
  const int live = node::live;
  {
    ref_count<node> a = new node(4);
    node* raw = a.take();
    EXPECT_FALSE(a.defined());
    EXPECT_EQ(raw->ref_count(), 1);
    ref_count<node> b = ref_count<node>::assume(raw);
    EXPECT_EQ(b->ref_count(), 1);
    EXPECT_EQ(node::live, live + 1);
  }
  EXPECT_EQ(node::live, live);
}

TEST(ref_count, virtual_destructor_and_copies) {
  const int destroyed = derived_node::destroyed;
  const int live = node::live;
  {
    // Destroyed through a handle of the base type: the derived destructor runs.
    ref_count<node> a = new derived_node(5);
  }
  EXPECT_EQ(derived_node::destroyed, destroyed + 1);
  EXPECT_EQ(node::live, live);

  // Copies and moves of objects start with no references; assignment keeps the target's.
  ref_count<node> a = new node(6);
  ref_count<node> b = a;
  node copy(*a);
  EXPECT_EQ(copy.ref_count(), 0);
  node moved(std::move(copy));
  EXPECT_EQ(moved.ref_count(), 0);
  *b = moved;
  EXPECT_EQ(a->ref_count(), 2);
  ref_count<node> c = new node(7);
  *c = std::move(*a);
  EXPECT_EQ(c->ref_count(), 1);
  EXPECT_EQ(c->value, 6);
}

int sum_dynamic(span<int> s) {
  int result = 0;
  for (const int& i : s) result += i;
  return result;
}

int sum_fixed(span<int, 3> s) { return s[0] + s[1] + s[2]; }

TEST(span, read_only_views) {
  const std::vector<int> v = {1, 2, 3};
  const std::array<int, 3> a = {4, 5, 6};
  const int c[] = {7, 8, 9};
  EXPECT_EQ(sum_dynamic(v), 6);
  EXPECT_EQ(sum_dynamic(a), 15);
  EXPECT_EQ(sum_dynamic(c), 24);
  EXPECT_EQ(sum_dynamic({1, 1}), 2);
  EXPECT_EQ(sum_dynamic(span<int>(v.data(), 2)), 3);
  EXPECT_EQ(sum_dynamic(span<int>(v.data() + 1, v.data() + 3)), 5);
  // span<T> hands out const T whatever T is.
  span<int> s(v);
  static_assert(std::is_same_v<decltype(s[0]), const int&>);
  static_assert(std::is_same_v<decltype(s.data()), const int*>);
  static_assert(std::is_same_v<decltype(*s.begin()), const int&>);
  static_assert(!std::is_assignable_v<decltype(s.front()), int>);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_FALSE(s.empty());
  EXPECT_EQ(s.front(), 1);
  EXPECT_EQ(s.back(), 3);
  EXPECT_EQ(sum_dynamic(s.subspan(1)), 5);
  EXPECT_EQ(sum_dynamic(s.subspan(1, 1)), 2);
  EXPECT_TRUE(span<int>().empty());
  EXPECT_EQ(span<int>().size(), 0u);

  // Fixed extents: size() is a constant; subspan gives the dynamic form.
  EXPECT_EQ(sum_fixed(a), 15);
  EXPECT_EQ(sum_fixed(c), 24);
  EXPECT_EQ(sum_fixed(v), 6);
  span<int, 3> f(a);
  static_assert(span<int, 3>::size() == 3);
  static_assert(sizeof(span<int, 3>) == sizeof(int*));
  static_assert(std::is_same_v<decltype(f.subspan(1)), span<int>>);
  EXPECT_EQ(f.subspan(1).size(), 2u);
  static_assert(!std::is_constructible_v<span<int, 2>, const int(&)[3]>);
  static_assert(std::is_constructible_v<span<int>, const std::vector<int>&>);
  static_assert(std::is_constructible_v<span<const int>, std::vector<int>&>);
  static_assert(span<int>::extent == dynamic_extent);
  static_assert(dynamic_extent == std::numeric_limits<std::size_t>::max());
  span<int> dynamic_from_fixed = f;
  EXPECT_EQ(dynamic_from_fixed.size(), 3u);
}

TEST(span, pointer_elements) {
  derived_type a{{10}}, b{{20}};
  // Both spellings of a span of pointers to const, from braced lists of derived pointers.
  auto first = [](span<const base_type*> s) { return s.size() == 0 ? 0 : s[0]->value; };
  auto total = [](span<const base_type* const> s) {
    int result = 0;
    for (const base_type* i : s) result += i->value;
    return result;
  };
  EXPECT_EQ(first({&a, &b}), 10);
  EXPECT_EQ(total({&a, &b}), 30);
  std::vector<const base_type*> pointers = {&a, &b};
  span<const base_type*> s = pointers;
  EXPECT_EQ(total(s), 30);
  span<const base_type*, 2> fixed = pointers;
  EXPECT_EQ(total(fixed), 30);
  // Arrays of derived objects do not convert (the elements have other sizes).
  static_assert(!std::is_constructible_v<span<const base_type>, std::vector<derived_type>&>);
  static_assert(!std::is_constructible_v<span<const base_type*>, std::vector<derived_type*>&>);
}

void fill(mutable_span<int> s, int value) {
  for (int& i : s) i = value;
}

TEST(span, mutable_views) {
  std::vector<int> v(3, 0);
  std::array<int, 2> a = {0, 0};
  int c[4] = {0, 0, 0, 0};
  fill(v, 1);
  fill(a, 2);
  fill(c, 3);
  EXPECT_EQ(v, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(a[1], 2);
  EXPECT_EQ(c[3], 3);
  mutable_span<int> m(c);
  m[0] = 9;
  m.back() = 8;
  EXPECT_EQ(c[0], 9);
  EXPECT_EQ(c[3], 8);
  fill(m.subspan(1, 2), 5);
  EXPECT_EQ(c[1], 5);
  EXPECT_EQ(c[2], 5);
  EXPECT_EQ(c[3], 8);
  mutable_span<int, 2> fixed(a);
  static_assert(mutable_span<int, 2>::size() == 2);
  fixed[0] = 7;
  EXPECT_EQ(a[0], 7);
  // To a read-only span; not from const containers.
  EXPECT_EQ(sum_dynamic(m), 9 + 5 + 5 + 8);
  EXPECT_EQ(sum_fixed(mutable_span<int, 3>(v)), 3);
  static_assert(!std::is_constructible_v<mutable_span<int>, const std::vector<int>&>);
  static_assert(!std::is_constructible_v<mutable_span<int>, std::vector<int>&&>);
  static_assert(std::is_constructible_v<mutable_span<const int>, const std::vector<int>&>);
  static_assert(!std::is_convertible_v<span<int>, mutable_span<int>>);
}

TEST(span, permute) {
  const std::vector<int> x = {10, 11, 12};
  EXPECT_EQ(permute<int>({2, 0, 1}, x), (std::vector<int>{12, 10, 11}));
  // Indices out of range give the default value.
  EXPECT_EQ(permute<int>({2, -1, 3, 0}, x), (std::vector<int>{12, 0, 0, 10}));
  EXPECT_EQ(permute<int>({5, 1}, x, -7), (std::vector<int>{-7, 11}));
  EXPECT_EQ(permute<int>({}, x), (std::vector<int>{}));
  const std::vector<int> p = {1, 1};
  EXPECT_EQ(permute<std::int64_t>(p, {4, 5}), (std::vector<std::int64_t>{5, 5}));
}

TEST(function_ref, null_and_bool) {
  function_ref<int(int)> null = nullptr;
  EXPECT_FALSE(null);
  bool is_set = null;
  EXPECT_FALSE(is_set);
  auto add = [](int x) { return x + 1; };
  function_ref<int(int)> f = add;
  is_set = f;
  EXPECT_TRUE(is_set);
  EXPECT_EQ(f(1), 2);
  // As a default argument.
  auto call_or = [](int x, function_ref<int(int)> g = nullptr) { return g ? g(x) : -x; };
  EXPECT_EQ(call_or(3), -3);
  EXPECT_EQ(call_or(3, add), 4);
  // Mutable callables are called as they are, with their state.
  int calls = 0;
  auto count = [calls]() mutable { return ++calls; };
  function_ref<int()> counter = count;
  EXPECT_EQ(counter(), 1);
  EXPECT_EQ(counter(), 2);
  EXPECT_EQ(count(), 3);
}

TEST(set, empty_intersection) {
  const std::vector<int> a = {1, 3, 5, 7};
  const std::vector<int> b = {2, 4, 6, 8};
  const std::vector<int> c = {0, 7, 9};
  const std::vector<int> none;
  EXPECT_TRUE(empty_intersection(a.begin(), a.end(), b.begin(), b.end()));
  EXPECT_FALSE(empty_intersection(a.begin(), a.end(), c.begin(), c.end()));
  EXPECT_FALSE(empty_intersection(c.begin(), c.end(), a.begin(), a.end()));
  EXPECT_TRUE(empty_intersection(a.begin(), a.end(), none.begin(), none.end()));
  EXPECT_TRUE(empty_intersection(none.begin(), none.end(), none.begin(), none.end()));
  EXPECT_TRUE(empty_intersection(std::set<int>{1, 2}, std::set<int>{3, 4}));
  EXPECT_FALSE(empty_intersection(std::set<int>{1, 2, 3}, std::set<int>{3, 4}));
  EXPECT_TRUE(empty_intersection(std::set<int>{}, std::set<int>{3, 4}));
}

struct counted_construction {
  static int defaults;
  int value;
  counted_construction() : value(17) { ++defaults; }
  explicit counted_construction(int v) : value(v) {}
};
int counted_construction::defaults = 0;

TEST(allocator, uninitialized) {
  // Value-initializing construct() would zero the byte; default-initialization leaves it.
  uninitialized_allocator<unsigned char> alloc;
  unsigned char* p = alloc.allocate(4);
  p[0] = 0xab;
  std::allocator_traits<uninitialized_allocator<unsigned char>>::construct(alloc, p);
  EXPECT_EQ(p[0], 0xab);
  std::allocator_traits<uninitialized_allocator<unsigned char>>::construct(alloc, p, 3);
  EXPECT_EQ(p[0], 3);
  alloc.deallocate(p, 4);

  std::vector<int, uninitialized_allocator<int>> v;
  v.resize(100);
  for (int i = 0; i < 100; ++i) v[i] = i;
  v.push_back(100);
  v.resize(1000);
  EXPECT_EQ(v.size(), 1000u);
  for (int i = 0; i <= 100; ++i) ASSERT_EQ(v[i], i);
  std::vector<int, uninitialized_allocator<int>> filled(3, 5);
  EXPECT_EQ(filled[2], 5);
  // Types with constructors still get them.
  std::vector<counted_construction, uninitialized_allocator<counted_construction>> objects;
  objects.resize(4);
  EXPECT_EQ(counted_construction::defaults, 4);
  EXPECT_EQ(objects[3].value, 17);
  objects.emplace_back(5);
  EXPECT_EQ(objects.back().value, 5);
  EXPECT_TRUE(uninitialized_allocator<int>() == uninitialized_allocator<char>());
  EXPECT_FALSE(uninitialized_allocator<int>() != uninitialized_allocator<int>());
}

SLINKY_NO_INLINE SLINKY_NO_STACK_PROTECTOR int sum_on_stack(int n) {
  double* values = SLINKY_ALLOCA(double, n);
  struct alignas(64) wide {
    char c;
  };
  wide* aligned = SLINKY_ALLOCA(wide, 2);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(values) % alignof(double), 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % 64, 0u);
  for (int i = 0; i < n; ++i) values[i] = i;
  int result = 0;
  for (int i = 0; i < n; ++i) result += static_cast<int>(values[i]);
  return result;
}

SLINKY_INLINE SLINKY_PURE int twice(const int* x) { return *x * 2; }

int classify(int x) {
  if (SLINKY_LIKELY(x > 0)) return 1;
  if (SLINKY_UNLIKELY(x < 0)) return -1;
  return 0;
}

struct SLINKY_TRIVIAL_ABI trivial_abi_type {
  int x;
};

template <typename T>
SLINKY_UNIQUE T copy_first(const T* src, T* dst) {
  *dst = *src;
  return *dst;
}

TEST(util, macros) {
  EXPECT_EQ(sum_on_stack(10), 45);
  int x = 21;
  EXPECT_EQ(twice(&x), 42);
  EXPECT_EQ(classify(5), 1);
  EXPECT_EQ(classify(-5), -1);
  EXPECT_EQ(classify(0), 0);
  SLINKY_UNUSED int unused = 0;
  EXPECT_EQ(trivial_abi_type{3}.x, 3);
  int y = 0;
  EXPECT_EQ(copy_first(&x, &y), 21);
#if SLINKY_HAS_ATTRIBUTE(noinline)
  SUCCEED();
#else
  ADD_FAILURE() << "SLINKY_HAS_ATTRIBUTE does not see noinline";
#endif
}

int checked_kind(int kind) {
  switch (kind) {
  case 0: return 10;
  case 1: return 11;
  }
  SLINKY_UNREACHABLE << "unknown kind " << kind;
}

TEST(util, unreachable) {
  EXPECT_EQ(checked_kind(1), 11);
#ifndef NDEBUG
  EXPECT_DEATH(checked_kind(5), "unreachable executed at .*base_test.cc:[0-9]+: unknown kind 5");
#endif
}

// SLINKY_CHECK holds in every build; SLINKY_ASSERT in builds without NDEBUG and in those that
// define SLINKY_ASSERTIONS (tools/test.sh's sanitizer builds), and its condition is not even
// evaluated in the others.
TEST(assert, check_always_assert_where_asked) {
  SLINKY_CHECK(2 + 2 == 4, "arithmetic");
  EXPECT_DEATH(SLINKY_CHECK(2 + 2 == 5, "arithmetic"),
               "base_test.cc:[0-9]+: assertion failed: 2 \\+ 2 == 5: arithmetic");
  int evaluated = 0;
  SLINKY_ASSERT(++evaluated > 0, "counts its evaluations");
#if !defined(NDEBUG) || defined(SLINKY_ASSERTIONS)
  EXPECT_EQ(evaluated, 1);
  EXPECT_DEATH(SLINKY_ASSERT(2 + 2 == 5, "an invariant"), "assertion failed: 2 \\+ 2 == 5: an invariant");
#else
  EXPECT_EQ(evaluated, 0);
#endif
}

}  // namespace
}  // namespace slinky
