// Compatibility tests for interval_expr and dim_expr (docs/api.md section 2; silent item S23 and
// checklist item 13 of README.md), written as a client of the original slinky would use them.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <utility>

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

// Checks that [i.min, i.max] (evaluated with `values`) contains f(x) for every x in [lo, hi].
template <typename F>
void expect_contains(const interval_expr& i, index_t lo, index_t hi, F f,
                     std::initializer_list<std::pair<var, index_t>> values = {}) {
  ASSERT_TRUE(i.min.defined());
  ASSERT_TRUE(i.max.defined());
  const index_t min = eval(i.min, values), max = eval(i.max, values);
  for (index_t x = lo; x <= hi; ++x) {
    EXPECT_LE(min, f(x)) << "x = " << x;
    EXPECT_GE(max, f(x)) << "x = " << x;
  }
}

}  // namespace

TEST(compat_interval, division_is_euclidean) {
  // bounds(-5, 3) / -2 contains x / -2 (Euclidean) for every x in [-5, 3].
  expect_contains(bounds(-5, 3) / -2, -5, 3, [](index_t x) { return euclidean_div<index_t>(x, -2); });
  interval_expr r = bounds(1, 5) / -2;
  EXPECT_EQ(eval(r.min), -2);
  EXPECT_EQ(eval(r.max), 0);
  expect_contains(bounds(-7, 7) / 3, -7, 7, [](index_t x) { return euclidean_div<index_t>(x, 3); });
  interval_expr m = bounds(-3, 4) * -2;
  EXPECT_EQ(eval(m.min), -8);
  EXPECT_EQ(eval(m.max), 6);
}

TEST(compat_interval, unknown_sign_scaling) {
  // S23: scaling by an expression of unknown sign is the hull of both orders.
  var s(0), lo(1), hi(2);
  const interval_expr i = bounds(lo, hi);
  for (index_t sv : {-3, -1, 0, 2, 5}) {
    expect_contains(i * s, -4, 6, [&](index_t x) { return x * sv; }, {{s, sv}, {lo, -4}, {hi, 6}});
    expect_contains(i / s, -4, 6, [&](index_t x) { return euclidean_div(x, sv); }, {{s, sv}, {lo, -4}, {hi, 6}});
    expect_contains(s * i, -4, 6, [&](index_t x) { return x * sv; }, {{s, sv}, {lo, -4}, {hi, 6}});
  }
  // Provably non-negative and negative scales keep or swap the ends.
  interval_expr pos = i * abs(s);
  EXPECT_EQ(eval(pos.min, {{s, -2}, {lo, 1}, {hi, 3}}), 2);
  EXPECT_EQ(eval(pos.max, {{s, -2}, {lo, 1}, {hi, 3}}), 6);
}

TEST(compat_interval, undefined_ends_are_unbounded) {
  var x(0);
  const interval_expr upper(expr(), expr(5));
  interval_expr shifted = upper + 1;
  EXPECT_FALSE(shifted.min.defined());
  EXPECT_EQ(eval(shifted.max), 6);
  interval_expr scaled = upper * 2;
  EXPECT_FALSE(scaled.min.defined());
  EXPECT_EQ(eval(scaled.max), 10);
  interval_expr flipped = upper * -2;
  EXPECT_EQ(eval(flipped.min), -10);
  EXPECT_FALSE(flipped.max.defined());
  interval_expr negated = -upper;
  EXPECT_EQ(eval(negated.min), -5);
  EXPECT_FALSE(negated.max.defined());
  // Union keeps a side only if both are defined; intersection takes the defined one.
  interval_expr u = bounds(1, 5) | upper;
  EXPECT_FALSE(u.min.defined());
  EXPECT_EQ(eval(u.max), 5);
  interval_expr n = bounds(1, 8) & upper;
  EXPECT_EQ(eval(n.min), 1);
  EXPECT_EQ(eval(n.max), 5);
  // An interval with an undefined end scaled by an unknown sign stays undefined there (no
  // nodes with undefined operands).
  interval_expr unknown = interval_expr(expr(x), expr()) * var(1);
  EXPECT_TRUE(!unknown.min.defined() || !unknown.max.defined());
}

TEST(compat_interval, shifts_and_points) {
  var x(0), y(1);
  interval_expr p = point(x);
  interval_expr shifted = p + 3;
  EXPECT_TRUE(shifted.is_point());  // points stay points
  EXPECT_EQ(eval(shifted.min, {{x, 2}}), 5);
  interval_expr left = expr(y) + bounds(1, 2);
  EXPECT_EQ(eval(left.min, {{y, 10}}), 11);
  EXPECT_EQ(eval(left.max, {{y, 10}}), 12);
  interval_expr sub = expr(y) - bounds(1, 2);
  EXPECT_EQ(eval(sub.min, {{y, 10}}), 8);
  EXPECT_EQ(eval(sub.max, {{y, 10}}), 9);
  interval_expr mul = expr(3) * bounds(x, y);
  EXPECT_EQ(eval(mul.min, {{x, 1}, {y, 2}}), 3);
  EXPECT_EQ(eval(mul.max, {{x, 1}, {y, 2}}), 6);

  const expr ex = x;
  const interval_expr px = point(ex);
  EXPECT_TRUE(px.is_point(ex));
  EXPECT_FALSE(px.is_point(expr(y)));
  EXPECT_EQ(px.as_point().get(), ex.get());
  EXPECT_FALSE(bounds(0, 9).as_point().defined());
  EXPECT_FALSE(interval_expr().is_point());
}

TEST(compat_interval, select_align_contains) {
  var c(0), x(1);
  interval_expr s = select(expr(c), point(x), point(expr(x) + 1));
  EXPECT_TRUE(s.is_point());
  EXPECT_EQ(eval(s.min, {{c, 0}, {x, 4}}), 5);
  interval_expr s2 = select(expr(c), bounds(0, 3), bounds(5, 9));
  EXPECT_EQ(eval(s2.min, {{c, 1}}), 0);
  EXPECT_EQ(eval(s2.max, {{c, 0}}), 9);

  interval_expr a = align(bounds(3, 10), 4);
  EXPECT_EQ(eval(a.min), 0);
  EXPECT_EQ(eval(a.max), 11);

  const interval_expr r = bounds(0, 9);
  EXPECT_EQ(eval(r.contains(expr(x)), {{x, 5}}), 1);
  EXPECT_EQ(eval(r.contains(expr(x)), {{x, 10}}), 0);
  EXPECT_EQ(eval(r.contains(expr(x)), {{x, -1}}), 0);
  EXPECT_EQ(eval(interval_expr(expr(), expr(3)).contains(expr(x)), {{x, -100}}), 1);
  EXPECT_EQ(eval(interval_expr().contains(expr(x)), {{x, 7}}), 1);
}

TEST(compat_interval, basics) {
  interval_expr i = min_extent(2, 5);
  EXPECT_EQ(eval(i.min), 2);
  EXPECT_EQ(eval(i.max), 6);
  EXPECT_EQ(eval(i.extent()), 5);
  EXPECT_EQ(eval(i.begin()), 2);
  EXPECT_EQ(eval(i.end()), 7);
  interval_expr r = range(2, 7);
  EXPECT_EQ(eval(r.max), 6);
  EXPECT_TRUE(is_negative_infinity(interval_expr::all().min));
  EXPECT_TRUE(is_positive_infinity(interval_expr::all().max));
  EXPECT_TRUE(is_positive_infinity(interval_expr::none().min));
  const interval_expr& u = interval_expr::union_identity();
  const interval_expr& n = interval_expr::intersection_identity();
  EXPECT_TRUE(u.same_as(interval_expr::none()));
  EXPECT_TRUE(n.same_as(interval_expr::all()));
  interval_expr un = bounds(0, 3) | bounds(5, 9);
  EXPECT_EQ(eval(un.min), 0);
  EXPECT_EQ(eval(un.max), 9);
  interval_expr in = bounds(0, 6) & bounds(5, 9);
  EXPECT_EQ(eval(in.min), 5);
  EXPECT_EQ(eval(in.max), 6);
  box_expr box = {bounds(0, 1), point(3)};
  EXPECT_EQ(box.size(), 2u);
}

TEST(compat_dim_expr, constructors_and_fields) {
  dim_expr def;
  EXPECT_FALSE(def.stride.defined());
  dim_expr d(bounds(1, 4), 8);
  EXPECT_EQ(eval(d.min()), 1);
  EXPECT_EQ(eval(d.max()), 4);
  EXPECT_EQ(eval(d.extent()), 4);
  EXPECT_EQ(eval(d.stride), 8);
  EXPECT_FALSE(d.fold_factor.defined());
  dim_expr f(bounds(0, 9), 4, 3);
  EXPECT_EQ(eval(f.fold_factor), 3);
  EXPECT_TRUE(d.same_as(d));

  // Implicit from a runtime dim (constants): b->dim(k) = dim::broadcast() on a buffer_expr.
  dim_expr b = dim::broadcast();
  EXPECT_EQ(eval(b.min()), 0);
  EXPECT_EQ(eval(b.max()), 0);
  EXPECT_EQ(eval(b.stride), 0);
  EXPECT_EQ(eval(b.is_broadcast()), 1);
  dim_expr from_dim = dim(2, 5, 12, 4);
  EXPECT_EQ(eval(from_dim.stride), 12);
  EXPECT_EQ(eval(from_dim.fold_factor), 4);
  EXPECT_EQ(eval(from_dim.is_broadcast()), 0);
  EXPECT_TRUE(from_dim.get_field(buffer_field::min).same_as(from_dim.bounds.min));
  EXPECT_TRUE(from_dim.get_field(buffer_field::max).same_as(from_dim.bounds.max));
  EXPECT_TRUE(from_dim.get_field(buffer_field::stride).same_as(from_dim.stride));
  EXPECT_TRUE(from_dim.get_field(buffer_field::fold_factor).same_as(from_dim.fold_factor));
}
