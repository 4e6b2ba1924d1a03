// Tests of the original slinky's node_mutator API through builder/node_mutator.h: clone_with for
// every statement with a body, stmt_mutator, mutated_expr/mutated_stmt and set_result of nodes,
// and the check that each visit sets one result.
#include <gtest/gtest.h>

#include <vector>

#include "slinky/builder/node_mutator.h"
#include "slinky/builder/substitute.h"
#include "slinky/runtime/print.h"

namespace slinky {
namespace {

struct symbols {
  node_context ctx;
  var x{ctx, "x"}, y{ctx, "y"}, b{ctx, "b"}, c{ctx, "c"};
};

stmt call_of(std::vector<var> in, std::vector<var> out) { return call_stmt::make(nullptr, in, out, {}, {}); }

template <typename T>
void check_clone_with(const stmt& s, var new_sym) {
  const T* op = s.as<T>();
  ASSERT_NE(op, nullptr);
  const stmt new_body = check::make(1);
  // Nothing changes: op itself.
  EXPECT_TRUE(clone_with(op, op->body).same_as(s));
  EXPECT_TRUE(clone_with(op, op->sym, op->body).same_as(s));
  // A new body: everything else is kept.
  const stmt b = clone_with(op, new_body);
  ASSERT_TRUE(b.as<T>());
  EXPECT_TRUE(b.as<T>()->body.same_as(new_body));
  EXPECT_EQ(b.as<T>()->sym, op->sym);
  T expected = *op;
  expected.body = new_body;
  EXPECT_TRUE(match(b, stmt(new T(expected))));
  // A new symbol too.
  const stmt c = clone_with(op, new_sym, new_body);
  ASSERT_TRUE(c.as<T>());
  EXPECT_EQ(c.as<T>()->sym, new_sym);
  EXPECT_TRUE(c.as<T>()->body.same_as(new_body));
  const stmt d = clone_with(op, new_sym, op->body);
  EXPECT_EQ(d.as<T>()->sym, new_sym);
  EXPECT_TRUE(d.as<T>()->body.same_as(op->body));
}

TEST(node_mutator, clone_with) {
  symbols s;
  const stmt body = call_of({s.b}, {s.c});
  check_clone_with<loop>(loop::make(s.x, loop::serial, bounds(0, 10), 2, body), s.y);
  check_clone_with<allocate>(allocate::make(s.c, memory_type::stack, 4, {dim_expr(bounds(0, 9))}, body), s.y);
  check_clone_with<make_buffer>(make_buffer::make(s.c, 0, 4, {dim_expr(bounds(0, 9), 4)}, body), s.y);
  check_clone_with<constant_buffer>(constant_buffer::make(s.c, nullptr, body), s.y);
  check_clone_with<clone_buffer>(clone_buffer::make(s.c, s.b, body), s.y);
  check_clone_with<crop_buffer>(crop_buffer::make(s.c, s.b, {bounds(0, s.x)}, body), s.y);
  check_clone_with<crop_dim>(crop_dim::make(s.c, s.b, 1, bounds(0, s.x), body), s.y);
  check_clone_with<slice_buffer>(slice_buffer::make(s.c, s.b, {expr(), s.x}, body), s.y);
  check_clone_with<slice_dim>(slice_dim::make(s.c, s.b, 1, s.x, body), s.y);
  check_clone_with<transpose>(transpose::make(s.c, s.b, {1, 0}, body), s.y);
  check_clone_with<async>(async::make(s.c, check::make(s.x), body), s.y);

  const stmt l = let_stmt::make({{s.x, 1}, {s.y, s.x}}, body, true);
  const let_stmt* op = l.as<let_stmt>();
  EXPECT_TRUE(clone_with(op, body).same_as(l));
  const stmt l2 = clone_with(op, check::make(s.y));
  EXPECT_TRUE(match(l2, let_stmt::make({{s.x, 1}, {s.y, s.x}}, check::make(s.y), true)));
  EXPECT_TRUE(l2.as<let_stmt>()->is_closure);
}

// Counts the loops and replaces every check by a check of 0; expressions are not visited.
class loop_counter : public stmt_mutator {
public:
  int loops = 0;
  int variables = 0;
  using stmt_mutator::visit;
  void visit(const loop* op) override {
    ++loops;
    stmt_mutator::visit(op);
  }
  void visit(const check*) override { set_result(check::make(0)); }
  void visit(const variable* op) override {
    ++variables;
    stmt_mutator::visit(op);
  }
};

TEST(node_mutator, stmt_mutator) {
  symbols s;
  const stmt inner = loop::make(s.y, loop::serial, bounds(0, s.x), 1, check::make(expr(s.y) < 3));
  const stmt st = loop::make(s.x, loop::serial, bounds(0, 10), 1, block::make({inner, call_of({s.b}, {s.c})}));
  loop_counter m;
  const stmt result = m.mutate(st);
  EXPECT_EQ(m.loops, 2);
  EXPECT_EQ(m.variables, 0);
  EXPECT_TRUE(match(result, loop::make(s.x, loop::serial, bounds(0, 10), 1,
                                       block::make({loop::make(s.y, loop::serial, bounds(0, s.x), 1, check::make(0)),
                                                    call_of({s.b}, {s.c})}))));
  // Expressions come back untouched, intervals too.
  const expr e = expr(s.x) + 1;
  EXPECT_TRUE(m.mutate(e).same_as(e));
  const interval_expr i = bounds(s.x, s.y);
  EXPECT_TRUE(m.mutate(i).same_as(i));
  EXPECT_EQ(m.variables, 0);
  // A stmt_mutator is a node_mutator.
  node_mutator& base = m;
  EXPECT_TRUE(base.mutate(e).same_as(e));
}

// Uses accept and mutated_expr/mutated_stmt directly, and set_result with node pointers.
class negate_constants : public node_mutator {
public:
  using node_mutator::visit;
  void visit(const constant* op) override {
    if (op->value == 0) return set_result(op);
    set_result(constant::make(-op->value));
  }
  void visit(const add* op) override {
    op->a.accept(this);
    expr a = mutated_expr();
    op->b.accept(this);
    expr b = mutated_expr();
    set_result(add::make(a, b));
  }
  void visit(const check* op) override {
    if (is_zero(op->condition)) return set_result(op);
    node_mutator::visit(op);
    EXPECT_TRUE(mutated_stmt().defined());
  }
};

TEST(node_mutator, mutated_results) {
  symbols s;
  negate_constants m;
  EXPECT_TRUE(match(m.mutate(expr(s.x) + 3), add::make(s.x, -3)));
  const expr zero = 0;
  EXPECT_TRUE(m.mutate(zero).same_as(zero));
  const stmt c0 = check::make(0);
  EXPECT_TRUE(m.mutate(c0).same_as(c0));
  EXPECT_TRUE(match(m.mutate(check::make(expr(s.x) < 2)), check::make(less::make(s.x, -2))));
}

// Visits that break the rule of a result per visit.
class forgets_result : public node_mutator {
public:
  using node_mutator::visit;
  void visit(const constant*) override {}
};
// A visit that calls the default visit and then replaces its result (allowed: the last counts).
class replaces_result : public node_mutator {
public:
  using node_mutator::visit;
  void visit(const check* op) override {
    node_mutator::visit(op);
    set_result(check::make(0));
  }
};
class sets_an_expr_for_a_stmt : public node_mutator {
public:
  using node_mutator::visit;
  void visit(const check* op) override { set_result(op->condition); }
};

TEST(node_mutator, one_result_per_visit) {
  symbols s;
  // The results of nested mutations are their own: each visit below sets one.
  node_mutator m;
  const stmt body = check::make(expr(s.x) < 2);
  const stmt l = loop::make(s.y, loop::serial, bounds(0, 3), 1, body);
  EXPECT_TRUE(m.mutate(l).same_as(l));
  EXPECT_TRUE(match(rewrite<constant>(l, [](const constant* c, node_mutator&) { return expr(c->value + 1); }),
                    loop::make(s.y, 2, bounds(1, 4), 2, check::make(expr(s.x) < 3))));
  replaces_result r;
  EXPECT_TRUE(match(r.mutate(check::make(s.x)), check::make(0)));
#ifndef NDEBUG
  forgets_result f;
  EXPECT_DEATH(f.mutate(expr(s.x) + 1), "set no result of the kind mutated");
  sets_an_expr_for_a_stmt e;
  EXPECT_DEATH(e.mutate(check::make(s.x)), "set no result of the kind mutated");
#endif
}

TEST(node_mutator, unchanged) {
  symbols s;
  const expr a = expr(s.x) + 1;
  const expr a2 = expr(s.x) + 1;
  EXPECT_TRUE(unchanged());
  EXPECT_TRUE(unchanged(a, a));
  // Identity, not structural equality.
  EXPECT_FALSE(unchanged(a, a2));
  EXPECT_TRUE(unchanged(a, a, s.x, s.x, bounds(a, a), bounds(a, a)));
  EXPECT_FALSE(unchanged(a, a, s.x, s.y));
  const std::vector<expr> v = {a, a2};
  EXPECT_TRUE(unchanged(v, std::vector<expr>{a, a2}));
  EXPECT_FALSE(unchanged(v, std::vector<expr>{a, a}));
  EXPECT_FALSE(unchanged(v, std::vector<expr>{a}));
  using lets = std::vector<std::pair<var, expr>>;
  EXPECT_TRUE(unchanged(lets{{s.x, a}}, lets{{s.x, a}}));
  EXPECT_FALSE(unchanged(lets{{s.x, a}}, lets{{s.y, a}}));
  // The default visits return the node itself when nothing changed.
  node_mutator m;
  const stmt st = crop_dim::make(s.b, s.c, 0, bounds(a, a2), check::make(a));
  EXPECT_TRUE(m.mutate(st).same_as(st));
}

}  // namespace
}  // namespace slinky
