// Tests of the IR's client-facing API as the original slinky defines it: symbols, node kinds,
// inspection helpers, intervals with unbounded ends, dim_expr, symbol_map, and the statements
// async, constant_buffer, closures and call scalars, evaluated.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <map>
#include <set>
#include <type_traits>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/node_mutator.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/runtime/print.h"
#include "slinky/runtime/stmt.h"

namespace slinky {
namespace {

TEST(var, ids_and_ordering) {
  node_context ctx;
  var a(ctx, "a");
  var b(ctx, "b");
  std::set<var> s = {b, a, a};
  EXPECT_EQ(s.size(), 2);
  EXPECT_EQ(*s.begin(), a);
  std::map<var, int> m;
  m[b] = 2;
  m[a] = 1;
  EXPECT_EQ(m.begin()->second, 1);
  // -var builds an expression.
  EXPECT_TRUE(match(-a, 0 - expr(a)));
  EXPECT_EQ(var(7).id, 7);
  std::optional<var> found = ctx.lookup("b");
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, b);
}

TEST(expr, node_kinds_and_names) {
  node_context ctx;
  var x(ctx, "x");
  var y(ctx, "y");
  expr e = min(x, y);
  ASSERT_NE(e.as<class min>(), nullptr);
  EXPECT_EQ(e.type(), expr_node_type::min);
  EXPECT_NE(max(x, y).as<class max>(), nullptr);
  EXPECT_NE(select(expr(x) < y, x, y).as<class select>(), nullptr);
  // The aliases name the same classes.
  EXPECT_EQ(e.as<minimum>(), e.as<class min>());
  EXPECT_EQ(expr().type(), expr_node_type::none);
  EXPECT_EQ(stmt().type(), stmt_node_type::none);
  EXPECT_STREQ(to_string(expr_node_type::select), "select");
  // Binary nodes share binary_op.
  const expr sum = expr(x) + y;
  const binary_op* b = static_cast<const binary_op*>(sum.get());
  EXPECT_TRUE(is_variable(b->a, x));
  EXPECT_TRUE(add::commutative);
  EXPECT_FALSE(sub::commutative);
  // make does not fold; the operators do (a deliberate difference, see README).
  EXPECT_NE(add::make(2, 3).as<add>(), nullptr);
  EXPECT_TRUE(is_constant(expr(2) + 3, 5));
  EXPECT_TRUE(should_commute(expr_node_type::constant, expr_node_type::variable));
  EXPECT_FALSE(should_commute(expr_node_type::variable, expr_node_type::add));
}

TEST(expr, inspection_helpers) {
  node_context ctx;
  var x(ctx, "x");
  var b(ctx, "b");
  EXPECT_EQ(as_constant(expr(3)), 3);
  EXPECT_FALSE(as_constant(expr(x)));
  // A client's "is the constant 0" test reads naturally.
  EXPECT_TRUE(as_constant(expr(0)) == 0);
  EXPECT_FALSE(as_constant(expr(x)) == 0);
  EXPECT_EQ(as_variable(expr(x)), x);
  EXPECT_FALSE(as_variable(buffer_min(b, 0)));
  EXPECT_EQ(as_variable(buffer_min(b, 0), buffer_field::min), b);
  EXPECT_TRUE(is_variable(buffer_min(b, 1), b, buffer_field::min, 1));
  EXPECT_FALSE(is_variable(buffer_min(b, 1), b, buffer_field::min, 0));
  EXPECT_TRUE(is_true(expr(3)));
  EXPECT_TRUE(is_false(expr(0)));
  EXPECT_FALSE(is_true(expr(x)));
  EXPECT_EQ(is_infinity(positive_infinity()), 1);
  EXPECT_EQ(is_infinity(negative_infinity()), -1);
  EXPECT_EQ(is_infinity(expr(x)), 0);
  EXPECT_LT(is_infinity(infinity(-1)), 0);
  EXPECT_TRUE(is_finite(expr(4)));
  EXPECT_FALSE(is_finite(expr(x)));
  EXPECT_TRUE(is_non_negative(abs(x)));
  EXPECT_TRUE(is_positive(abs(expr(2))));
  EXPECT_FALSE(is_positive(abs(x)));
  EXPECT_TRUE(is_positive(expr(2)));
  EXPECT_TRUE(is_negative(negative_infinity()));
  EXPECT_TRUE(is_non_positive(expr(0)));
  EXPECT_NE(as_intrinsic(abs(x), intrinsic::abs), nullptr);
  EXPECT_EQ(as_intrinsic(expr(x), intrinsic::abs), nullptr);
  EXPECT_TRUE(is_boolean(expr(x) < 3));
  EXPECT_FALSE(is_boolean(expr(x)));
  EXPECT_TRUE(match(boolean(x), expr(x) != 0));
  EXPECT_EQ(boolean(5), 1);
  // Buffer metadata is a variable node with a field.
  const expr stride = buffer_stride(b, 2);
  const variable* v = stride.as<variable>();
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->sym, b);
  EXPECT_EQ(v->field, buffer_field::stride);
  EXPECT_EQ(v->dim, 2);
  EXPECT_EQ(to_string(buffer_min(b, 0), &ctx), "buffer_min(b, 0)");
  EXPECT_EQ(to_string(buffer_rank(b), &ctx), "buffer_rank(b)");
}

TEST(expr, builders_evaluate) {
  node_context ctx;
  var x(ctx, "x");
  var y(ctx, "y");
  eval_context c;
  c[x] = 9;
  c[y] = -4;
  EXPECT_EQ(evaluate(euclidean_div(expr(x), expr(y)), c), -2);
  EXPECT_EQ(evaluate(euclidean_mod(expr(y), expr(3)), c), 2);
  std::vector<expr> xs = {x, y, 3};
  EXPECT_EQ(evaluate(min(xs), c), -4);
  EXPECT_EQ(evaluate(max(xs), c), 9);
  EXPECT_FALSE(min(span<expr>()).defined());
  EXPECT_EQ(evaluate(clamp(x, expr(), 5), c), 5);
  EXPECT_EQ(evaluate(clamp(y, 0, expr()), c), 0);
  EXPECT_EQ(evaluate(clamp(x, bounds(0, 4)), c), 4);
  EXPECT_EQ(evaluate(and_then(expr(x) > 0, expr(y) > 0), c), 0);
  EXPECT_EQ(evaluate(or_else(expr(x) > 0, expr(y) > 0), c), 1);
  // and_then stops at the first false operand: the division by zero's side is never reached,
  // and a user function after it is never called.
  int calls = 0;
  expr counted = call::make([&](const call*, eval_context&) -> index_t { return ++calls; }, {});
  EXPECT_EQ(evaluate(and_then(expr(y) > 0, counted), c), 0);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(evaluate(or_else(expr(x) > 0, counted), c), 1);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(evaluate(counted + 10, c), 11);
  EXPECT_EQ(calls, 1);
  // A user function may evaluate its arguments.
  expr twice = call::make([](const call* op, eval_context& ctx) { return 2 * evaluate(op->args[0], ctx); }, {x});
  EXPECT_EQ(evaluate(twice, c), 18);
  EXPECT_EQ(evaluate(constant::make(static_cast<const void*>(&calls)), c), reinterpret_cast<index_t>(&calls));
  EXPECT_EQ(as_constant(expr(constant::get(1000))), 1000);
  EXPECT_TRUE(constant::get(1000).same_as(constant::get(1000)));
}

TEST(expr, buffer_metadata_and_validate) {
  node_context ctx;
  var b(ctx, "b");
  dim dims[2] = {dim(-2, 7, 4), dim(0, 4, 40)};
  int storage[50];
  raw_buffer buf(storage + 2, 4, 2, dims);
  eval_context c;
  c[b] = reinterpret_cast<index_t>(&buf);
  EXPECT_EQ(evaluate(buffer_rank(b), c), 2);
  EXPECT_EQ(evaluate(buffer_elem_size(b), c), 4);
  EXPECT_EQ(evaluate(buffer_min(b, 0), c), -2);
  EXPECT_EQ(evaluate(buffer_extent(b, 1), c), 5);
  EXPECT_EQ(evaluate(buffer_stride(b, 1), c), 40);
  EXPECT_EQ(evaluate(validate_buffer(b), c), 1);
  // Dims past the rank are broadcasts.
  EXPECT_EQ(evaluate(buffer_stride(b, 5), c), 0);
  // A null buffer reads as zeros and is not valid.
  c[b] = 0;
  EXPECT_EQ(evaluate(buffer_rank(b), c), 0);
  EXPECT_EQ(evaluate(validate_buffer(b), c), 0);
  // A buffer whose offsets overflow is not valid.
  dim huge[1] = {dim(0, std::numeric_limits<index_t>::max() / 2, 8)};
  raw_buffer bad(storage, 4, 1, huge);
  c[b] = reinterpret_cast<index_t>(&bad);
  EXPECT_EQ(evaluate(validate_buffer(b), c), 0);
  // Metadata follows a buffer renamed by substitution.
  var b2(ctx, "b2");
  EXPECT_TRUE(match(substitute(buffer_max(b, 1) + 1, b, expr(b2)), buffer_max(b2, 1) + 1));
  EXPECT_TRUE(match(substitute(buffer_max(b, 1) + b, b, expr(5)), buffer_max(b, 1) + 5));
}

TEST(interval_expr, unbounded_ends_and_signs) {
  node_context ctx;
  var x(ctx, "x");
  var s(ctx, "s");
  eval_context c;
  // Division by a negative constant bounds x / -2 for every x in the interval.
  interval_expr q = bounds(-5, 3) / -2;
  EXPECT_EQ(evaluate(q.min, c), -1);
  EXPECT_EQ(evaluate(q.max, c), 3);
  interval_expr p = bounds(1, 5) * -2;
  EXPECT_EQ(evaluate(p.min, c), -10);
  EXPECT_EQ(evaluate(p.max, c), -2);
  // A scale of unknown sign gives the hull of both orders.
  interval_expr u = bounds(1, 5) * expr(s);
  for (index_t sv : {-3, 0, 4}) {
    c[s] = sv;
    EXPECT_EQ(evaluate(u.min, c), std::min(sv, 5 * sv));
    EXPECT_EQ(evaluate(u.max, c), std::max(sv, 5 * sv));
  }
  // Undefined ends are unbounded and stay so.
  interval_expr half(expr(), x);
  interval_expr shifted = half + 3;
  EXPECT_FALSE(shifted.min.defined());
  EXPECT_TRUE(match(shifted.max, expr(x) + 3));
  EXPECT_FALSE((half | bounds(0, 1)).min.defined());
  EXPECT_TRUE(match((half & bounds(0, 1)).min, 0));
  interval_expr neg = -half;
  EXPECT_FALSE(neg.max.defined());
  EXPECT_TRUE(match(neg.min, -expr(x)));
  // expr op interval.
  EXPECT_TRUE(match((3 + bounds(x, 10)).max, 13));
  interval_expr d = 10 - bounds(1, 4);
  EXPECT_TRUE(match(d.min, 6));
  EXPECT_TRUE(match(d.max, 9));
  EXPECT_TRUE(match((2 * bounds(1, 4)).max, 8));
  // Points stay points.
  EXPECT_TRUE((point(x) + 1).is_point());
  EXPECT_TRUE((point(x) * s).is_point());
  interval_expr px = point(x);
  EXPECT_TRUE(px.is_point(px.min));
  EXPECT_TRUE(px.as_point().same_as(px.min));
  EXPECT_FALSE(bounds(0, x).as_point().defined());
  EXPECT_FALSE(bounds(0, x).is_point(expr(x)));
  EXPECT_FALSE(interval_expr().is_point());
  // contains, select, align.
  c[x] = 4;
  EXPECT_EQ(evaluate(bounds(0, 9).contains(expr(x)), c), 1);
  EXPECT_EQ(evaluate(bounds(5, 9).contains(expr(x)), c), 0);
  EXPECT_EQ(evaluate(interval_expr(expr(), 3).contains(expr(x)), c), 0);
  EXPECT_TRUE(is_one(interval_expr().contains(expr(x))));
  interval_expr sel = select(expr(x) < 3, bounds(0, 1), bounds(10, 11));
  EXPECT_EQ(evaluate(sel.min, c), 10);
  EXPECT_TRUE(select(expr(x) < 3, point(1), point(2)).is_point());
  interval_expr al = align(bounds(3, 9), 4);
  EXPECT_EQ(evaluate(al.min, c), 0);
  EXPECT_EQ(evaluate(al.max, c), 11);
  EXPECT_EQ(evaluate(clamp(x, interval_expr(expr(), 2)), c), 2);
}

TEST(dim_expr, constructors_and_fields) {
  node_context ctx;
  var b(ctx, "b");
  dim_expr d = dim::broadcast();
  EXPECT_TRUE(is_constant(d.stride, 0));
  eval_context c;
  EXPECT_EQ(evaluate(d.is_broadcast(), c), dim::broadcast().min() == 0 && dim::broadcast().max() == 0 ? 1 : 0);
  dim_expr e(bounds(1, 8), 4);
  EXPECT_TRUE(is_constant(e.get_field(buffer_field::max), 8));
  EXPECT_TRUE(is_constant(e.get_field(buffer_field::stride), 4));
  EXPECT_FALSE(e.get_field(buffer_field::fold_factor).defined());
  EXPECT_EQ(evaluate(e.extent(), c), 8);
  dim_expr bd = buffer_dim(b, 1);
  EXPECT_TRUE(is_variable(bd.min(), b, buffer_field::min, 1));
  EXPECT_TRUE(is_variable(bd.fold_factor, b, buffer_field::fold_factor, 1));
  std::vector<dim_expr> dims = buffer_dims(b, 3);
  ASSERT_EQ(dims.size(), 3);
  box_expr box = dims_bounds(dims);
  ASSERT_EQ(box.size(), 3);
  EXPECT_TRUE(is_variable(box[2].max, b, buffer_field::max, 2));
  dim rd[2] = {dim(0, 3, 4), dim(2, 5, 16)};
  raw_buffer rb(nullptr, 4, 2, rd);
  std::vector<dim_expr> constants = buffer_dims(rb);
  EXPECT_TRUE(is_constant(constants[1].min(), 2));
  EXPECT_TRUE(is_constant(constants[1].stride, 16));
}

TEST(symbol_map, original_api) {
  node_context ctx;
  var a(ctx, "a");
  var b(ctx, "b");
  symbol_map<int> m = {{a, 1}};
  EXPECT_EQ(m.lookup(a), 1);
  EXPECT_FALSE(m.lookup(b));
  EXPECT_EQ(m.lookup(b, 7), 7);
  const symbol_map<int>& cm = m;
  EXPECT_EQ(cm[a], 1);
  EXPECT_FALSE(cm[b]);
  {
    scoped_value_in_symbol_map<int> s(m, a, 5);
    EXPECT_EQ(m.lookup(a), 5);
    EXPECT_EQ(s.old_value(), 1);
    EXPECT_EQ(s.sym(), a);
    auto t = set_value_in_scope(m, b, 3);
    EXPECT_EQ(m.lookup(b), 3);
    auto u = set_value_in_scope(m, a, std::nullopt);
    EXPECT_FALSE(m.lookup(a));
    u.exit_scope();
    EXPECT_EQ(m.lookup(a), 5);
  }
  EXPECT_EQ(m.lookup(a), 1);
  EXPECT_FALSE(m.lookup(b));
  int slots = 0;
  for (const std::optional<int>& i : m) slots += i.has_value();
  EXPECT_EQ(slots, 1);
}

TEST(stmt, original_statement_api) {
  node_context ctx;
  var x(ctx, "x");
  var b(ctx, "b");
  var t(ctx, "t");
  stmt c1 = check::make(expr(x) > 0);
  stmt c2 = check::make(expr(x) < 10);
  stmt bl = block::make({c1}, c2);
  ASSERT_NE(bl.as<block>(), nullptr);
  EXPECT_EQ(bl.as<block>()->stmts.size(), 2);
  stmt_ref r = bl;
  EXPECT_EQ(r.type(), stmt_node_type::block);
  EXPECT_TRUE(stmt(r).same_as(bl));
  stmt tr = transpose::make_truncate(t, b, 2, c1);
  ASSERT_NE(tr.as<transpose>(), nullptr);
  EXPECT_TRUE(tr.as<transpose>()->is_truncate());
  EXPECT_FALSE(transpose::is_truncate(std::vector<int>{1, 0}));
  EXPECT_EQ(transpose::new_dim, std::numeric_limits<int>::max());
  stmt closure = let_stmt::make({{t, x}}, c1, true);
  EXPECT_NE(is_closure(closure), nullptr);
  EXPECT_EQ(is_closure(c1), nullptr);
}

TEST(stmt, call_scalars_are_evaluated_and_substituted) {
  node_context ctx;
  var x(ctx, "x");
  var out(ctx, "out");
  index_t seen = 0;
  stmt call = call_stmt::make(
      [&](const call_stmt* op, eval_context& c) -> index_t {
        seen = evaluate(op->scalars[0], c);
        return 0;
      },
      {}, {out}, {expr(x) * 3}, {});
  eval_context c;
  c[x] = 5;
  EXPECT_EQ(evaluate(call, c), 0);
  EXPECT_EQ(seen, 15);
  // Scalars are uses of the symbols they read.
  EXPECT_TRUE(depends_on(call, x));
  stmt substituted = substitute(call, x, expr(2));
  EXPECT_EQ(evaluate(substituted, c), 0);
  EXPECT_EQ(seen, 6);
}

TEST(stmt, constant_buffer_binds_the_buffer) {
  node_context ctx;
  var k(ctx, "k");
  raw_buffer_ptr value = raw_buffer::make_scalar<int>(42);
  int read = 0;
  stmt body = call_stmt::make(
      [&](const call_stmt* op, eval_context& c) -> index_t {
        read = *static_cast<const int*>(c.lookup_buffer(op->inputs[0])->base);
        return 0;
      },
      {k}, {}, {}, {});
  EXPECT_EQ(evaluate(constant_buffer::make(k, value, body)), 0);
  EXPECT_EQ(read, 42);
}

void test_async(thread_pool* pool) {
  node_context ctx;
  var t(ctx, "t");
  std::atomic<int> order{0};
  int task_at = -1;
  int body_at = -1;
  int after_wait = -1;
  stmt task = call_stmt::make(
      [&](const call_stmt*, eval_context&) -> index_t {
        task_at = order++;
        return 0;
      },
      {}, {}, {}, {});
  stmt body = block::make({
      check::make(wait_for(t)),
      call_stmt::make(
          [&](const call_stmt*, eval_context&) -> index_t {
            // The task finished before wait_for returned.
            after_wait = task_at;
            body_at = order++;
            return 0;
          },
          {}, {}, {}, {}),
  });
  eval_config cfg;
  cfg.thread_pool = pool;
  eval_context c;
  c.config = &cfg;
  EXPECT_EQ(evaluate(async::make(t, task, body), c), 0);
  EXPECT_EQ(task_at, 0);
  EXPECT_EQ(body_at, 1);
  EXPECT_EQ(after_wait, 0);

  // A failing task makes the whole statement fail.
  stmt failing = call_stmt::make([](const call_stmt*, eval_context&) -> index_t { return 3; }, {}, {}, {}, {});
  int failures = 0;
  cfg.call_failed = [&](const call_stmt*) { ++failures; };
  EXPECT_EQ(evaluate(async::make(t, failing, check::make(1)), c), 3);
  EXPECT_EQ(failures, 1);
}

TEST(expr, semaphores_in_pairs) {
  index_t s0 = 0;
  index_t s1 = 5;
  const expr sems[] = {constant::make(static_cast<const void*>(&s0)), constant::make(static_cast<const void*>(&s1))};
  const expr counts[] = {2, expr()};
  eval_context c;
  EXPECT_EQ(evaluate(semaphore_signal(sems, counts), c), 1);
  EXPECT_EQ(s0, 2);
  EXPECT_EQ(s1, 6);
  EXPECT_EQ(evaluate(semaphore_wait(sems, counts), c), 1);
  EXPECT_EQ(s0, 0);
  EXPECT_EQ(s1, 5);
  EXPECT_EQ(evaluate(semaphore_init(sems[1]), c), 1);
  EXPECT_EQ(s1, 0);
  EXPECT_EQ(evaluate(semaphore_init(sems[1], 3), c), 1);
  EXPECT_EQ(s1, 3);

  // With a pool, a wait on two semaphores returns only when both have their counts: the task
  // signals them one at a time.
  thread_pool_impl pool(1);
  eval_config cfg;
  cfg.thread_pool = &pool;
  c.config = &cfg;
  s0 = 0;
  s1 = 0;
  node_context ctx;
  var t(ctx, "t");
  stmt task = block::make({check::make(semaphore_signal(sems[0], 1)), check::make(semaphore_signal(sems[1], 1))});
  const expr ones[] = {1, expr()};
  stmt body = check::make(semaphore_wait(sems, ones));
  EXPECT_EQ(evaluate(async::make(t, task, body), c), 0);
  EXPECT_EQ(s0, 0);
  EXPECT_EQ(s1, 0);
}

TEST(stmt, async_without_pool) { test_async(nullptr); }

TEST(stmt, async_on_pool) {
  thread_pool_impl pool(2);
  test_async(&pool);
}

TEST(eval_context, defaults_are_usable) {
  eval_context c;
  ASSERT_NE(c.config, nullptr);
  static_assert(std::is_same_v<decltype(eval_config::base_alignment), std::size_t>);
  static_assert(std::is_same_v<decltype(eval_config::auto_stack_threshold), std::size_t>);
  EXPECT_EQ(c.config->base_alignment, sizeof(std::max_align_t));
  EXPECT_EQ(c.config->stride_alignment, 1);
  EXPECT_EQ(c.config->auto_stack_threshold, 4096);
  // The default hooks are callable: a hook wrapping them works.
  eval_config cfg;
  auto prev_allocate = cfg.allocate;
  auto prev_free = cfg.free;
  int allocations = 0;
  cfg.allocate = [&](var v, raw_buffer* b) {
    ++allocations;
    return prev_allocate(v, b);
  };
  dim d(0, 99);
  raw_buffer buf(nullptr, 4, 1, &d);
  void* allocation = cfg.allocate(var(), &buf);
  ASSERT_NE(buf.base, nullptr);
  EXPECT_EQ(allocations, 1);
  EXPECT_EQ(d.stride(), 4);
  static_cast<int*>(buf.base)[99] = 1;
  prev_free(var(), &buf, allocation);

  node_context ctx;
  var x(ctx, "x");
  var b(ctx, "b");
  EXPECT_EQ(c.set(x, 3), 0);
  EXPECT_EQ(c.set(x, 5), 3);
  const eval_context& cc = c;
  EXPECT_EQ(cc[x], 5);
  EXPECT_EQ(cc[b], 0);
  EXPECT_EQ(c.lookup_buffer<int>(b), nullptr);
  c[b] = reinterpret_cast<index_t>(&buf);
  EXPECT_EQ(static_cast<const raw_buffer*>(c.lookup_buffer<int>(b)), &buf);
}

TEST(pipeline, setup_then_evaluate_repeatedly) {
  node_context ctx;
  var in(ctx, "in");
  var out(ctx, "out");
  var n(ctx, "n");
  // out[i] = in[i] + n, as a hand-built program.
  pipeline p;
  p.args = {n};
  p.inputs = {in};
  p.outputs = {out};
  p.body = call_stmt::make(
      [](const call_stmt* op, eval_context& c) -> index_t {
        const raw_buffer* i = c.lookup_buffer(op->inputs[0]);
        const raw_buffer* o = c.lookup_buffer(op->outputs[0]);
        const index_t add = evaluate(op->scalars[0], c);
        for (index_t k = o->dim(0).min(); k <= o->dim(0).max(); ++k) {
          *static_cast<int*>(o->address_at(k)) = *static_cast<const int*>(i->address_at(k)) + static_cast<int>(add);
        }
        return 0;
      },
      {in}, {out}, {expr(n)}, {});
  int in_data[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  int out_data[8] = {};
  dim in_dim(0, 3, 4);
  dim out_dim(0, 3, 4);
  raw_buffer in_buf(in_data, 4, 1, &in_dim);
  raw_buffer out_buf(out_data, 4, 1, &out_dim);
  eval_context c;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  const index_t args[] = {10};
  p.setup(args, ins, outs, c);
  ASSERT_EQ(p.evaluate(c), 0);
  EXPECT_EQ(out_data[3], 13);
  EXPECT_EQ(out_data[4], 0);
  // The same descriptors, moved: evaluate again without another setup.
  in_buf.base = in_data + 4;
  out_buf.base = out_data + 4;
  ASSERT_EQ(p.evaluate(c), 0);
  EXPECT_EQ(out_data[4], 14);
  EXPECT_EQ(out_data[7], 17);
}

}  // namespace
}  // namespace slinky
