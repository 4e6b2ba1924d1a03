// Tests of expression and statement construction: symbols, operators, canonical order,
// intervals, structural comparison, mutators and substitution.
#include <gtest/gtest.h>

#include "slinky/runtime/expr.h"
#include "slinky/runtime/node_mutator.h"
#include "slinky/runtime/stmt.h"

namespace slinky {
namespace {

TEST(node_context, names) {
  node_context ctx;
  var x(ctx, "x");
  var y(ctx, "y");
  EXPECT_NE(x, y);
  // var(ctx, name) always makes a new symbol (the original's insert_unique), also for a name
  // that is taken: a client's two buffers named "in" are two buffers.
  var x2(ctx, "x");
  EXPECT_NE(x2, x);
  EXPECT_EQ(ctx.name(x2), "x#0");
  EXPECT_EQ(ctx.name(var(ctx, "x")), "x#1");
  EXPECT_EQ(ctx.name(x), "x");
  EXPECT_EQ(ctx.name(x.sym()), "x");
  // insert finds an existing name.
  EXPECT_EQ(ctx.insert("y"), y);
  EXPECT_EQ(ctx.lookup("y"), y);
  EXPECT_FALSE(ctx.lookup("nope"));
  EXPECT_TRUE(ctx.lookup("x"));
  var t = ctx.insert_unique("x");
  EXPECT_NE(t, x);
  EXPECT_EQ(ctx.name(t), "x#2");
  EXPECT_EQ(ctx.name(ctx.insert_unique()), "_");
  EXPECT_EQ(ctx.name(var(12345)), "<12345>");
  EXPECT_EQ(ctx.name(var()), "<>");
  EXPECT_FALSE(var().defined());
  EXPECT_TRUE(x.defined());
  EXPECT_EQ(x.id, x.sym());
  EXPECT_EQ(var().id, var::invalid);
  // < compares ids, so vars sort and go in sets.
  EXPECT_TRUE(x < y);
  EXPECT_FALSE(y < x);
}

TEST(expr, construction_and_folding) {
  node_context ctx;
  var x(ctx, "x");
  expr e = x + 1;
  ASSERT_NE(e.as<add>(), nullptr);
  EXPECT_TRUE(match(e.as<add>()->a, x));
  EXPECT_TRUE(is_constant(e.as<add>()->b, 1));
  // Constants go on the right of commutative operators.
  expr f = 1 + expr(x);
  ASSERT_NE(f.as<add>(), nullptr);
  EXPECT_TRUE(match(e, f));
  EXPECT_TRUE(match(min(3, x), min(x, 3)));
  EXPECT_FALSE(match(expr(3) - x, expr(x) - 3));
  // Constant operands fold.
  EXPECT_TRUE(is_constant(expr(3) + 4, 7));
  EXPECT_TRUE(is_constant(expr(-7) / 2, -4));
  EXPECT_TRUE(is_constant(expr(-7) % 2, 1));
  EXPECT_TRUE(is_constant(min(expr(3), expr(4)), 3));
  EXPECT_TRUE(is_constant(expr(3) < 4, 1));
  EXPECT_TRUE(is_constant(select(expr(0), 1, 2), 2));
  EXPECT_TRUE(is_constant(abs(expr(-5)), 5));
  // Folding that would overflow is left to evaluation.
  expr big = std::numeric_limits<index_t>::max();
  EXPECT_NE((big + 1).as<add>(), nullptr);
  // Identity vs structure.
  EXPECT_FALSE((x + 1).same_as(x + 1));
  EXPECT_TRUE(match(x + 1, x + 1));
  EXPECT_NE(compare(x + 1, x + 2), 0);
  EXPECT_EQ(compare(x + 1, x + 2), -compare(x + 2, x + 1));
}

TEST(expr, infinities) {
  EXPECT_TRUE(is_positive_infinity(positive_infinity()));
  EXPECT_TRUE(is_negative_infinity(negative_infinity()));
  EXPECT_TRUE(is_infinity(interval_expr::all().min));
  EXPECT_FALSE(is_infinity(expr(3)));
}

TEST(interval_expr, operations) {
  node_context ctx;
  var x(ctx, "x");
  var y(ctx, "y");
  interval_expr p = point(x);
  EXPECT_TRUE(p.is_point());
  EXPECT_TRUE(is_constant(p.extent(), 1));
  interval_expr r = min_extent(x, 10);
  EXPECT_TRUE(match(r.max, x + 10 - 1));
  interval_expr u = bounds(x, y) | bounds(0, 10);
  EXPECT_TRUE(match(u.min, min(x, 0)));
  EXPECT_TRUE(match(u.max, max(y, 10)));
  interval_expr i = bounds(x, y) & bounds(0, 10);
  EXPECT_TRUE(match(i.min, max(x, 0)));
  EXPECT_TRUE(match(i.max, min(y, 10)));
  // all() and none() are identities of intersection and union.
  EXPECT_TRUE((bounds(x, y) & interval_expr::all()).same_as(bounds(x, y)) ||
              match((bounds(x, y) & interval_expr::all()).min, x));
  interval_expr n = bounds(x, y) | interval_expr::none();
  EXPECT_TRUE(match(n.min, x));
  EXPECT_TRUE(match(n.max, y));
  interval_expr s = bounds(1, 3) * -2;
  EXPECT_TRUE(is_constant(s.min, -6));
  EXPECT_TRUE(is_constant(s.max, -2));
  interval_expr t = bounds(x, y) + 1;
  EXPECT_TRUE(match(t.min, x + 1));
  box_expr b = box_expr{bounds(0, 1)} | box_expr{bounds(2, 3), bounds(4, 5)};
  ASSERT_EQ(b.size(), 2u);
  EXPECT_TRUE(is_constant(b[0].min, 0));
  EXPECT_TRUE(is_constant(b[0].max, 3));
}

TEST(stmt, block_flattens) {
  stmt a = check::make(1);
  stmt b = check::make(2);
  stmt c = block::make({a, block::make({b, stmt()}), stmt()});
  ASSERT_NE(c.as<block>(), nullptr);
  EXPECT_EQ(c.as<block>()->stmts.size(), 2u);
  EXPECT_TRUE(block::make({stmt(), a}).same_as(a));
  EXPECT_FALSE(block::make(std::vector<stmt>{}).defined());
}

TEST(node_mutator, returns_same_node_when_unchanged) {
  node_context ctx;
  var x(ctx, "x");
  var b(ctx, "b");
  expr e = select(x < 3, min(x, 4) * 2, abs(x) + buffer_min(b, 0));
  node_mutator m;
  EXPECT_TRUE(m.mutate(e).same_as(e));
  stmt s = loop::make(x, loop::serial, bounds(0, 10), 2,
                      crop_dim::make(b, b, 0, point(x), block::make({check::make(x < 11), check::make(x >= 0)})));
  EXPECT_TRUE(m.mutate(s).same_as(s));
}

TEST(node_mutator, rewrite_one_kind) {
  node_context ctx;
  var x(ctx, "x");
  expr e = min(x + 1, x + 2) * 3;
  expr r = rewrite<add>(e, [](const add* op, node_mutator&) -> expr { return sub::make(op->a, op->b); });
  EXPECT_TRUE(match(r, min(sub::make(x, 1), sub::make(x, 2)) * 3));
}

TEST(substitute, respects_shadowing) {
  node_context ctx;
  var x(ctx, "x");
  var y(ctx, "y");
  EXPECT_TRUE(match(substitute(x + y, x, 5), 5 + expr(y)));
  expr shadow = let::make(x, 2, x + y);
  EXPECT_TRUE(substitute(shadow, x, 5).same_as(shadow));
  expr inner = let::make(y, x, x + y);
  EXPECT_TRUE(match(substitute(inner, x, 5), let::make(y, 5, 5 + expr(y))));
  stmt l = loop::make(x, loop::serial, bounds(0, x), 1, check::make(expr(x) < y));
  stmt sl = substitute(l, x, 7);
  ASSERT_NE(sl.as<loop>(), nullptr);
  EXPECT_TRUE(is_constant(sl.as<loop>()->bounds.max, 7));
  EXPECT_TRUE(sl.as<loop>()->body.same_as(l.as<loop>()->body));
  // Nothing to substitute: the very same node comes back.
  stmt unchanged = loop::make(x, loop::serial, bounds(0, 10), 1, check::make(expr(x) < y));
  EXPECT_TRUE(substitute(unchanged, x, 7).same_as(unchanged));
  expr free_of_x = y + 1;
  EXPECT_TRUE(substitute(free_of_x, x, 7).same_as(free_of_x));
  EXPECT_TRUE(depends_on(x + 1, x));
  EXPECT_FALSE(depends_on(y + 1, x));
  EXPECT_TRUE(depends_on(l, y));
}

}  // namespace
}  // namespace slinky
