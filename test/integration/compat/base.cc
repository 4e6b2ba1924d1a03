// Compatibility tests for slinky/base: ref_count, function_ref, span and the arithmetic helpers,
// written as a client of the original slinky would use them (docs/api.md section 10; checklist
// item 11 of README.md).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <type_traits>
#include <vector>

#include "slinky/base/arithmetic.h"
#include "slinky/base/function_ref.h"
#include "slinky/base/ref_count.h"
#include "slinky/base/span.h"
#include "slinky/runtime/buffer.h"  // index_t

namespace {

using slinky::index_t;

constexpr index_t index_max = std::numeric_limits<index_t>::max();
constexpr index_t index_min = std::numeric_limits<index_t>::min();

int destroyed_nodes = 0;

class node : public slinky::ref_counted<node> {
public:
  int value = 0;
  explicit node(int value = 0) : value(value) {}
  static void destroy(node* n) {
    ++destroyed_nodes;
    delete n;
  }
};

class derived_node : public node {
public:
  explicit derived_node(int value) : node(value) {}
};

}  // namespace

TEST(compat_ref_count, ref_counted_has_virtual_destructor_and_copies_leave_the_count_alone) {
  static_assert(std::has_virtual_destructor_v<slinky::ref_counted<node>>, "ref_counted has a virtual destructor");
  static_assert(std::is_move_constructible_v<node> && std::is_move_assignable_v<node>, "move ops");
  slinky::ref_count<node> a = new node(1);
  EXPECT_EQ(a->ref_count(), 1);
  node copy(*a);
  EXPECT_EQ(copy.ref_count(), 0);
  node moved(std::move(copy));
  EXPECT_EQ(moved.ref_count(), 0);
  *a = moved;
  EXPECT_EQ(a->ref_count(), 1);
  *a = std::move(moved);
  EXPECT_EQ(a->ref_count(), 1);
}

TEST(compat_ref_count, implicit_pointer_conversions) {
  destroyed_nodes = 0;
  {
    slinky::ref_count<node> a = new node(1);
    slinky::ref_count<node> b = a;
    slinky::ref_count<node> c = new node(2);
    slinky::ref_count<node> null = nullptr;
    // Comparisons through the implicit conversion to T*.
    EXPECT_TRUE(a == b);
    EXPECT_FALSE(a == c);
    EXPECT_TRUE(null == nullptr);
    EXPECT_FALSE(a == nullptr);
    const node* p = a;
    EXPECT_EQ(p, a.get());
    node* q = c;
    EXPECT_EQ(q->value, 2);
    bool found = false;
    if (a) found = true;
    EXPECT_TRUE(found);
    if (null) found = false;
    EXPECT_TRUE(found);
    // Handles as keys of ordered containers.
    std::map<slinky::ref_count<node>, int> m;
    m[a] = 1;
    m[b] = 2;
    m[c] = 3;
    EXPECT_EQ(m.size(), 2u);
    EXPECT_EQ(m[a], 2);
    EXPECT_EQ(a->ref_count(), 3);  // a, b, and the map's key
    // Dereference.
    EXPECT_EQ((*a).value, 1);
    const slinky::ref_count<node>& ca = a;
    EXPECT_EQ(ca->value, 1);
    EXPECT_EQ((*ca).value, 1);
  }
  EXPECT_EQ(destroyed_nodes, 2);
}

TEST(compat_ref_count, conversion_to_base_take_and_assume) {
  destroyed_nodes = 0;
  {
    slinky::ref_count<derived_node> d = new derived_node(5);
    slinky::ref_count<node> base = d;
    EXPECT_EQ(base->value, 5);
    EXPECT_EQ(d->ref_count(), 2);

    node* raw = base.take();
    EXPECT_EQ(base.get(), nullptr);
    EXPECT_EQ(raw->ref_count(), 2);  // take does not touch the count
    slinky::ref_count<node> adopted = slinky::ref_count<node>::assume(raw);
    EXPECT_EQ(raw->ref_count(), 2);  // assume does not add a reference
    EXPECT_EQ(adopted.get(), raw);
  }
  EXPECT_EQ(destroyed_nodes, 1);
}

namespace {

int call_or(slinky::function_ref<int(int)> f, int x, int otherwise) { return f ? f(x) : otherwise; }
bool is_set(slinky::function_ref<void()> f = nullptr) {
  bool b = f;  // implicit operator bool
  return b;
}

}  // namespace

TEST(compat_function_ref, nullptr_and_implicit_bool) {
  slinky::function_ref<void()> f = nullptr;
  EXPECT_FALSE(f);
  slinky::function_ref<void()> g;
  EXPECT_FALSE(g);
  EXPECT_FALSE(is_set());
  int calls = 0;
  auto inc = [&]() { ++calls; };
  EXPECT_TRUE(is_set(inc));
  slinky::function_ref<void()> h = inc;
  h();
  h();
  EXPECT_EQ(calls, 2);

  const auto twice = [](int x) { return 2 * x; };
  EXPECT_EQ(call_or(twice, 21, -1), 42);
  EXPECT_EQ(call_or(nullptr, 21, -1), -1);
}

namespace {

index_t sum(slinky::span<index_t> s) {
  index_t r = 0;
  for (const index_t& i : s) r += i;
  return r;
}
std::size_t count(slinky::span<const int> s) { return s.size(); }

}  // namespace

TEST(compat_span, read_only_views_of_const_containers) {
  // span<T> is a read-only view whatever T is: it binds const containers.
  static_assert(std::is_same_v<decltype(std::declval<slinky::span<int>>()[0]), const int&>, "span<int> is read-only");
  static_assert(std::is_same_v<decltype(std::declval<slinky::span<int>>().data()), const int*>, "read-only data");
  const std::vector<index_t> v = {1, 2, 3, 4};
  EXPECT_EQ(sum(v), 10);
  const std::array<index_t, 3> a = {5, 6, 7};
  EXPECT_EQ(sum(a), 18);
  const index_t c_array[] = {1, 1};
  EXPECT_EQ(sum(c_array), 2);
  EXPECT_EQ(sum(slinky::span<index_t>(v.data(), 2)), 3);
  EXPECT_EQ(sum(slinky::span<index_t>(v.data() + 1, v.data() + 3)), 5);
  EXPECT_EQ(count({1, 2, 3}), 3u);  // ours' initializer_list constructor (a superset)

  slinky::span<index_t> s(v);
  EXPECT_FALSE(s.empty());
  EXPECT_EQ(s.front(), 1);
  EXPECT_EQ(s.back(), 4);
  EXPECT_EQ(s.subspan(1).size(), 3u);
  EXPECT_EQ(s.subspan(1, 2)[1], 3);
  EXPECT_EQ(s.end() - s.begin(), 4);
  EXPECT_TRUE(slinky::span<index_t>().empty());
}

TEST(compat_span, fixed_extent) {
  static_assert(slinky::dynamic_extent == std::numeric_limits<std::size_t>::max(), "dynamic_extent");
  static_assert(std::is_same_v<slinky::span<int>, slinky::span<int, slinky::dynamic_extent>>, "default extent");
  static_assert(slinky::span<int, 3>::size() == 3, "size() of a fixed-extent span is a static constexpr");
  std::array<int, 3> a = {1, 2, 3};
  slinky::span<int, 3> s(a);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s[2], 3);
  slinky::span<int> tail = s.subspan(1);
  EXPECT_EQ(tail.size(), 2u);
  EXPECT_EQ(tail[0], 2);

  int x = 0, y = 0;
  const int* pointers[] = {&x, &y};
  slinky::span<const int*, 2> two(pointers);
  EXPECT_EQ(two[1], &y);
}

TEST(compat_span, mutable_span_and_permute) {
  std::vector<int> v = {1, 2, 3};
  slinky::mutable_span<int> m(v);
  m[0] = 10;
  m.back() = 30;
  EXPECT_EQ(v, (std::vector<int>{10, 2, 30}));
  int c[2] = {0, 0};
  slinky::mutable_span<int, 2> fixed(c);
  fixed[1] = 7;
  EXPECT_EQ(c[1], 7);

  const int perm[] = {1, 0, 5, -1};
  std::vector<index_t> permuted = slinky::permute<index_t>(perm, {10, 20});
  EXPECT_EQ(permuted, (std::vector<index_t>{20, 10, 0, 0}));
  std::vector<index_t> with_default = slinky::permute<index_t>(perm, {10, 20}, -1);
  EXPECT_EQ(with_default, (std::vector<index_t>{20, 10, -1, -1}));
}

TEST(compat_arithmetic, euclidean_division) {
  EXPECT_EQ(slinky::euclidean_div<index_t>(-7, 2), -4);
  EXPECT_EQ(slinky::euclidean_div<index_t>(7, -2), -3);
  EXPECT_EQ(slinky::euclidean_div<index_t>(-7, -2), 4);
  EXPECT_EQ(slinky::euclidean_mod<index_t>(-7, 2), 1);
  EXPECT_EQ(slinky::euclidean_mod<index_t>(-7, -2), 1);
  EXPECT_EQ(slinky::euclidean_div<index_t>(7, 0), 0);
  EXPECT_EQ(slinky::euclidean_mod<index_t>(7, 0), 0);
  EXPECT_EQ(slinky::euclidean_div<index_t>(7, 0, 42), 42);
  EXPECT_EQ(slinky::euclidean_mod<index_t>(7, 0, 3), 3);
  EXPECT_EQ(slinky::euclidean_div_positive_divisor<index_t>(-7, 2), -4);
  EXPECT_EQ(slinky::euclidean_div_positive_divisor<index_t>(9, 3), 3);
  for (index_t a = -9; a <= 9; ++a) {
    for (index_t b : {-3, -2, 2, 3}) {
      index_t q = slinky::euclidean_div(a, b), r = slinky::euclidean_mod(a, b);
      EXPECT_EQ(q * b + r, a);
      EXPECT_GE(r, 0);
      EXPECT_LT(r, b < 0 ? -b : b);
    }
  }
  // Rounding to nearest (non-ties only: the contract does not say how ties go).
  EXPECT_EQ(slinky::round_div<index_t>(11, 4), 3);
  EXPECT_EQ(slinky::round_div<index_t>(9, 4), 2);
  EXPECT_EQ(slinky::round_div<index_t>(-9, 4), -2);
  EXPECT_EQ(slinky::sign<index_t>(-5), -1);
  EXPECT_EQ(slinky::sign<index_t>(0), 0);
  EXPECT_EQ(slinky::sign<index_t>(3), 1);
}

TEST(compat_arithmetic, saturating_and_overflow_helpers) {
  EXPECT_EQ(slinky::add_sat(index_max, index_t(1)), index_max);
  EXPECT_EQ(slinky::add_sat(index_min, index_t(-1)), index_min);
  EXPECT_EQ(slinky::add_sat(index_t(2), index_t(3)), 5);
  EXPECT_EQ(slinky::sub_sat(index_min, index_t(1)), index_min);
  EXPECT_EQ(slinky::sub_sat(index_max, index_t(-1)), index_max);
  EXPECT_EQ(slinky::mul_sat(index_max, index_t(2)), index_max);
  EXPECT_EQ(slinky::mul_sat(index_max, index_t(-2)), index_min);
  EXPECT_EQ(slinky::mul_sat(index_t(-4), index_t(5)), -20);
  EXPECT_EQ(slinky::div_sat(index_min, index_t(-1)), index_max);
  EXPECT_EQ(slinky::div_sat(index_t(-7), index_t(2)), -4);

  // Two arguments, returning whether the operation overflows.
  EXPECT_TRUE(slinky::add_overflows(index_max, index_t(1)));
  EXPECT_FALSE(slinky::add_overflows(index_t(1), index_t(2)));
  EXPECT_TRUE(slinky::sub_overflows(index_min, index_t(1)));
  EXPECT_FALSE(slinky::sub_overflows(index_t(1), index_t(2)));
  EXPECT_TRUE(slinky::mul_overflows(index_max, index_t(2)));
  EXPECT_FALSE(slinky::mul_overflows(index_t(-3), index_t(2)));

  index_t r = 7;
  EXPECT_TRUE(slinky::add_with_overflow(index_max, index_t(1), r));
  EXPECT_EQ(r, 0);
  EXPECT_FALSE(slinky::add_with_overflow(index_t(2), index_t(3), r));
  EXPECT_EQ(r, 5);
  r = 7;
  EXPECT_TRUE(slinky::sub_with_overflow(index_min, index_t(1), r));
  EXPECT_EQ(r, 0);
  EXPECT_FALSE(slinky::sub_with_overflow(index_t(2), index_t(3), r));
  EXPECT_EQ(r, -1);
  r = 7;
  EXPECT_TRUE(slinky::mul_with_overflow(index_max, index_t(3), r));
  EXPECT_EQ(r, 0);
  EXPECT_FALSE(slinky::mul_with_overflow(index_t(-2), index_t(3), r));
  EXPECT_EQ(r, -6);
}

TEST(compat_arithmetic, staircases) {
  EXPECT_EQ(slinky::staircase<index_t>(5, 1, 4, 3), 3);
  EXPECT_EQ(slinky::staircase<index_t>(-1, 0, 4, 2), -2);
  for (index_t x = -10; x <= 10; ++x) {
    EXPECT_EQ(slinky::staircase<index_t>(x, 3, 4, -2), slinky::euclidean_div<index_t>(x + 3, 4) * -2);
  }

  slinky::interval<int> i{1, std::nullopt};
  EXPECT_TRUE(i == (slinky::interval<int>{1, std::nullopt}));
  EXPECT_FALSE(i == (slinky::interval<int>{1, 2}));

  // Two staircases whose slopes cancel: the sum is bounded, and the bounds hold for every x.
  const int cases[][6] = {{0, 4, 1, 0, 4, -1}, {0, 4, 4, 2, 4, -4}, {1, 3, 2, 0, 6, -4}};
  for (const auto& c : cases) {
    slinky::interval<int> b = slinky::staircase_sum_bounds(c[0], c[1], c[2], c[3], c[4], c[5]);
    ASSERT_TRUE(b.min && b.max);
    for (int x = -50; x <= 50; ++x) {
      int s = slinky::staircase(x, c[0], c[1], c[2]) + slinky::staircase(x, c[3], c[4], c[5]);
      EXPECT_LE(*b.min, s) << x;
      EXPECT_GE(*b.max, s) << x;
    }
  }
  EXPECT_EQ(slinky::staircase_sum_bounds(0, 4, 1, 0, 4, -1), (slinky::interval<int>{0, 0}));
  // A sum that grows with x has no bounds.
  slinky::interval<int> unbounded = slinky::staircase_sum_bounds(0, 4, 1, 0, 2, 1);
  EXPECT_FALSE(unbounded.min.has_value());
  EXPECT_FALSE(unbounded.max.has_value());
}
