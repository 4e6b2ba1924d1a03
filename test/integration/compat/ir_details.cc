// Compatibility tests for the IR details the original's own tests and inspecting clients use
// (docs/api.md section 2, docs/runtime.md "The IR"; checklist items 16 to 18 of README.md): buffer
// metadata as variable + buffer_field, user calls, the new intrinsics, expr_ref, binary_op,
// should_commute, recursive_node_visitor, and printing of vars and buffer fields.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/print.h"
#include "slinky/runtime/stmt.h"

namespace {

using namespace slinky;

// Counts variable nodes and their symbols, in expressions and statements (the default traversal
// visits every child).
class variable_counter : public recursive_node_visitor {
public:
  std::set<var> seen;
  int count = 0;
  void visit(const variable* op) override {
    ++count;
    seen.insert(op->sym);
  }
};

}  // namespace

TEST(compat_ir, buffer_metadata_is_a_variable_with_a_field) {
  static_assert(static_cast<unsigned>(buffer_field::none) == 0, "buffer_field::none is 0");
  static_assert(std::is_same_v<std::underlying_type_t<buffer_field>, unsigned>, "unsigned");
  const buffer_field fields[] = {buffer_field::rank,       buffer_field::elem_size, buffer_field::size_bytes,
                                 buffer_field::min,        buffer_field::max,       buffer_field::stride,
                                 buffer_field::fold_factor};
  EXPECT_EQ(sizeof(fields) / sizeof(fields[0]), 7u);
  var b(4);
  expr e = buffer_min(b, 1);
  const variable* v = e.as<variable>();
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->sym, b);
  EXPECT_EQ(v->field, buffer_field::min);
  EXPECT_EQ(v->dim, 1);
  EXPECT_TRUE(is_variable(e, b, buffer_field::min, 1));
  EXPECT_FALSE(is_variable(e, b, buffer_field::max, 1));
  EXPECT_EQ(as_variable(e, buffer_field::min), b);
  EXPECT_FALSE(as_variable(e));  // not a plain variable
  expr rank = buffer_rank(b);
  const variable* r = rank.as<variable>();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->field, buffer_field::rank);

  buffer<int, 2> buf({4, 6});
  buf.allocate();
  eval_context ctx;
  ctx[b] = reinterpret_cast<index_t>(static_cast<const raw_buffer*>(&buf));
  EXPECT_EQ(evaluate(variable::make(b, buffer_field::stride, 1), ctx), 16);
  EXPECT_EQ(evaluate(variable::make(b, buffer_field::size_bytes), ctx), 96);
  EXPECT_EQ(evaluate(variable::make(b, buffer_field::elem_size), ctx), 4);
  EXPECT_EQ(evaluate(variable::make(b, buffer_field::max, 0), ctx), 3);
  EXPECT_EQ(evaluate(buffer_extent(b, 1), ctx), 6);
  EXPECT_EQ(evaluate(validate_buffer(b), ctx), 1);

  std::stringstream s;
  s << buffer_field::fold_factor;
  EXPECT_NE(s.str().find("fold_factor"), std::string::npos) << s.str();
  EXPECT_NE(std::string(to_string(buffer_field::stride)).find("stride"), std::string::npos);
}

TEST(compat_ir, user_calls_and_intrinsics) {
  var x(0);
  int calls = 0;
  expr twice = call::make(
      [&](const call* op, eval_context& ctx) -> index_t {
        ++calls;
        return evaluate(op->args[0], ctx) * 2;
      },
      {expr(x)});
  const call* c = twice.as<call>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->intrinsic, intrinsic::none);
  EXPECT_TRUE(static_cast<bool>(c->target));
  eval_context ctx;
  ctx[x] = 21;
  EXPECT_EQ(evaluate(twice, ctx), 42);
  EXPECT_EQ(calls, 1);
  // and_then / or_else short-circuit.
  EXPECT_EQ(evaluate(and_then(expr(x) == 0, twice), ctx), 0);
  EXPECT_EQ(evaluate(or_else(expr(x) != 0, twice), ctx), 1);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(evaluate(and_then(expr(x) != 0, twice), ctx), 1);
  EXPECT_EQ(calls, 2);
  expr a = call::make(intrinsic::and_then, {expr(x) > 0, expr(x) < 100});
  EXPECT_EQ(evaluate(a, ctx), 1);
  expr o = call::make(intrinsic::or_else, {expr(x) < 0, expr(x) > 100});
  EXPECT_EQ(evaluate(o, ctx), 0);
  const intrinsic more[] = {intrinsic::none, intrinsic::and_then, intrinsic::or_else, intrinsic::wait_for,
                            intrinsic::validate_buffer};
  EXPECT_EQ(sizeof(more) / sizeof(more[0]), 5u);
}

TEST(compat_ir, expr_ref_binary_op_should_commute) {
  var x(0), y(1);
  expr e = expr(x) + y;
  expr_ref r = e;
  EXPECT_TRUE(r.defined());
  EXPECT_EQ(r.type(), expr_node_type::add);
  EXPECT_EQ(r.get(), e.get());
  ASSERT_NE(r.as<add>(), nullptr);
  expr_ref from_node = e.get();
  EXPECT_EQ(from_node.get(), e.get());
  expr back = r;
  EXPECT_TRUE(back.same_as(e));
  EXPECT_EQ(expr_ref().type(), expr_node_type::none);

  static_assert(std::is_base_of_v<binary_op, add> && std::is_base_of_v<binary_op, class min> &&
                    std::is_base_of_v<binary_op, less>,
                "binary nodes share binary_op");
  const binary_op* b = static_cast<const binary_op*>(e.get());
  EXPECT_TRUE(is_variable(b->a, x) || is_variable(b->b, x));

  EXPECT_TRUE(should_commute(expr_node_type::constant, expr_node_type::variable));
  EXPECT_FALSE(should_commute(expr_node_type::variable, expr_node_type::constant));
  EXPECT_TRUE(should_commute(expr(3), expr(x)));
  EXPECT_FALSE(should_commute(expr(x), expr(3)));
}

TEST(compat_ir, recursive_node_visitor) {
  var x(0), y(1), out(2);
  variable_counter counter;
  expr e = select(expr(x) < y, expr(x) * 2, min(y, 3));
  e.accept(&counter);
  EXPECT_EQ(counter.count, 4);
  EXPECT_EQ(counter.seen, (std::set<var>{x, y}));

  variable_counter in_stmt;
  stmt s = let_stmt::make({{out, expr(x) + 1}}, check::make(expr(out) < y));
  s.accept(&in_stmt);
  EXPECT_EQ(in_stmt.seen, (std::set<var>{x, out, y}));
}

TEST(compat_ir, printing_vars) {
  node_context ctx;
  var x(ctx, "width");
  std::stringstream named;
  print(named, x, &ctx);
  EXPECT_EQ(named.str(), "width");
  std::stringstream unnamed;
  print(unnamed, x);
  EXPECT_FALSE(unnamed.str().empty());
  EXPECT_FALSE(to_string(x).empty());
  EXPECT_NE(std::string(to_string(memory_type::heap)).find("heap"), std::string::npos);
  EXPECT_NE(std::string(to_string(stmt_node_type::loop)).find("loop"), std::string::npos);
  EXPECT_NE(std::string(to_string(expr_node_type::select)).find("select"), std::string::npos);
  EXPECT_NE(std::string(to_string(intrinsic::abs)).find("abs"), std::string::npos);
}
