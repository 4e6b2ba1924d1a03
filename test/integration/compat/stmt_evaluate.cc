// Compatibility tests for statements, the evaluator and the runtime pipeline (docs/api.md sections
// 1, 7 and 9; silent items S17 to S19, S22, S25 and checklist items 8 (call_stmt) and 9 of
// README.md), written as a client that builds and runs programs without the builder would.
#include <gtest/gtest.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/runtime/stmt.h"

namespace {

using namespace slinky;

index_t as_value(const raw_buffer* b) { return reinterpret_cast<index_t>(b); }

// A call that copies its (rank-1 int) input to its output, adding the first scalar (0 if none).
stmt add_scalar_call(var in, var out, std::vector<expr> scalars, int* calls = nullptr) {
  return call_stmt::make(
      [calls](const call_stmt* op, eval_context& ctx) -> index_t {
        if (calls) ++*calls;
        const index_t k = op->scalars.empty() ? 0 : evaluate(op->scalars[0], ctx);
        const buffer<const int>* src = ctx.lookup_buffer<const int>(op->inputs[0]);
        const buffer<int>* dst = ctx.lookup_buffer<int>(op->outputs[0]);
        if (!src || !dst) return 1;
        for (index_t x = dst->dim(0).begin(); x < dst->dim(0).end(); ++x) (*dst)(x) = (*src)(x) + k;
        return 0;
      },
      {in}, {out}, std::move(scalars), {});
}

}  // namespace

TEST(compat_stmt, undefined_and_node_types) {
  // S25
  EXPECT_EQ(stmt().type(), stmt_node_type::none);
  EXPECT_FALSE(stmt().defined());
  var x(0);
  stmt c = check::make(expr(x) < 3);
  EXPECT_EQ(c.type(), stmt_node_type::check);
  stmt_ref r = c;
  EXPECT_EQ(r.type(), stmt_node_type::check);
  EXPECT_EQ(r.get(), c.get());
  stmt back = r;
  EXPECT_TRUE(back.same_as(c));
  EXPECT_NE(back.as<check>(), nullptr);
}

TEST(compat_stmt, call_stmt_scalars_and_attributes) {
  static_assert(std::is_same_v<call_stmt::symbol_list, std::vector<var>>, "nested symbol_list");
  call_stmt::attributes attrs;
  EXPECT_TRUE(attrs.allow_in_place == 0);
  EXPECT_TRUE(attrs.min_rank == INT_MAX);
  EXPECT_TRUE(attrs.name.empty());
  attrs.name = "add";
  attrs.allow_in_place = 1;

  node_context nodes;
  var in(nodes, "in"), out(nodes, "out"), k(nodes, "k");
  int calls = 0;
  stmt s = add_scalar_call(in, out, {expr(k) * 2}, &calls);
  const call_stmt* op = s.as<call_stmt>();
  ASSERT_NE(op, nullptr);
  ASSERT_EQ(op->scalars.size(), 1u);
  EXPECT_EQ(op->inputs.size(), 1u);
  stmt named = call_stmt::make(op->target, {in}, {out}, {}, attrs);
  EXPECT_EQ(named.as<call_stmt>()->attrs.name, "add");
  EXPECT_TRUE(named.as<call_stmt>()->scalars.empty());

  buffer<int, 1> a({5}), b({5});
  a.allocate();
  b.allocate();
  for (int i = 0; i < 5; ++i) a(i) = i;
  eval_context ctx;
  ctx[in] = as_value(&a);
  ctx[out] = as_value(&b);
  ctx[k] = 10;
  ASSERT_EQ(evaluate(s, ctx), 0);
  EXPECT_EQ(calls, 1);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(b(i), i + 20);
}

TEST(compat_evaluate, eval_config_defaults) {
  // S19: field types and defaults.
  eval_config cfg;
  static_assert(std::is_same_v<decltype(cfg.base_alignment), std::size_t>, "base_alignment is size_t");
  static_assert(std::is_same_v<decltype(cfg.stride_alignment), std::size_t>, "stride_alignment is size_t");
  static_assert(std::is_same_v<decltype(cfg.auto_stack_threshold), std::size_t>, "threshold is size_t");
  static_assert(std::is_same_v<decltype(cfg.thread_pool), slinky::thread_pool*>, "thread_pool");
  EXPECT_EQ(cfg.base_alignment, sizeof(std::max_align_t));
  EXPECT_EQ(cfg.stride_alignment, 1u);
  EXPECT_EQ(cfg.auto_stack_threshold, 4096u);
  EXPECT_EQ(cfg.thread_pool, nullptr);
  EXPECT_FALSE(cfg.trace_begin);
  EXPECT_FALSE(cfg.trace_end);
  EXPECT_FALSE(cfg.check_failed);
  EXPECT_FALSE(cfg.call_failed);

  // S18: the default allocate and free are real functions a wrapper can call.
  ASSERT_TRUE(cfg.allocate);
  ASSERT_TRUE(cfg.free);
  std::function<void*(var, raw_buffer*)> prev_allocate = cfg.allocate;
  std::function<void(var, raw_buffer*, void*)> prev_free = cfg.free;
  int allocations = 0, frees = 0;
  cfg.allocate = [&](var v, raw_buffer* buf) {
    ++allocations;
    return prev_allocate(v, buf);
  };
  cfg.free = [&](var v, raw_buffer* buf, void* allocation) {
    ++frees;
    prev_free(v, buf, allocation);
  };
  buffer<int, 2> b({10, 10});
  void* allocation = cfg.allocate(var(), &b);
  ASSERT_NE(allocation, nullptr);
  ASSERT_NE(b.base(), nullptr);
  b(9, 9) = 1;
  cfg.free(var(), &b, allocation);
  EXPECT_EQ(allocations, 1);
  EXPECT_EQ(frees, 1);
}

TEST(compat_evaluate, eval_context) {
  // S17: a default eval_context points at a default config.
  eval_context ctx;
  ASSERT_NE(ctx.config, nullptr);
  ASSERT_TRUE(ctx.config->allocate);
  buffer<char, 1> b({100});
  void* allocation = ctx.config->allocate(var(), &b);
  ASSERT_NE(b.base(), nullptr);
  ctx.config->free(var(), &b, allocation);
  EXPECT_EQ(ctx.config->thread_pool, nullptr);

  var x(3), y(7);
  ctx[x] = 5;
  EXPECT_GE(ctx.size(), 4u);
  EXPECT_EQ(ctx.lookup(x), 5);
  const eval_context& cctx = ctx;
  EXPECT_EQ(cctx[x], 5);
  ctx.reserve(10);
  EXPECT_GE(ctx.size(), 10u);
  EXPECT_EQ(ctx.set(y, 2), 0);  // returns the previous value
  EXPECT_EQ(ctx.set(y, 3), 2);
  EXPECT_EQ(ctx[y], 3);

  buffer<int, 1> ints({4});
  var buf(5);
  ctx[buf] = as_value(&ints);
  EXPECT_EQ(ctx.lookup_buffer(buf), &ints);
  const buffer<int>* typed = ctx.lookup_buffer<int>(buf);
  EXPECT_EQ(typed, static_cast<const raw_buffer*>(&ints));
  ctx[buf] = 0;
  EXPECT_EQ(ctx.lookup_buffer<int>(buf), nullptr);
}

TEST(compat_evaluate, failures_return_non_zero) {
  // S22 (deliberate difference, kept): with no hook, a failing check or callback prints a
  // message and evaluate returns non-zero instead of aborting.
  var x(0);
  stmt failing_check = check::make(expr(x) < 3);
  eval_context ctx;
  ctx[x] = 5;
  EXPECT_NE(evaluate(failing_check, ctx), 0);
  ctx[x] = 1;
  EXPECT_EQ(evaluate(failing_check, ctx), 0);

  int calls = 0;
  stmt failing_call =
      call_stmt::make([&](const call_stmt*, eval_context&) -> index_t { return ++calls, 7; }, {}, {}, {}, {});
  EXPECT_NE(evaluate(failing_call), 0);
  EXPECT_EQ(calls, 1);

  // With hooks: each is called once with what failed.
  eval_config cfg;
  int check_failures = 0, call_failures = 0;
  const call_stmt* failed_call = nullptr;
  cfg.check_failed = [&](const expr& condition) {
    ++check_failures;
    EXPECT_TRUE(condition.defined());
  };
  cfg.call_failed = [&](const call_stmt* op) {
    ++call_failures;
    failed_call = op;
  };
  eval_context hooked;
  hooked.config = &cfg;
  hooked[x] = 5;
  EXPECT_NE(evaluate(failing_check, hooked), 0);
  EXPECT_EQ(check_failures, 1);
  EXPECT_NE(evaluate(block::make({failing_call, failing_check}), hooked), 0);
  EXPECT_EQ(call_failures, 1);
  EXPECT_EQ(failed_call, failing_call.as<call_stmt>());
  EXPECT_EQ(check_failures, 1);  // the program stopped at the call
}

TEST(compat_stmt, let_block_loop) {
  node_context nodes;
  var i(nodes, "i"), n(nodes, "n"), k(nodes, "k");
  std::vector<index_t> seen;
  stmt body = call_stmt::make(
      [&](const call_stmt*, eval_context& ctx) -> index_t {
        seen.push_back(ctx[i] * 100 + ctx[k]);
        return 0;
      },
      {}, {}, {}, {});
  stmt l = loop::make(i, loop::serial, bounds(0, expr(n) - 1), 2, body);
  stmt with_let = let_stmt::make({{k, 7}}, l);
  EXPECT_FALSE(with_let.as<let_stmt>()->is_closure);
  stmt closure = let_stmt::make({{k, expr(n)}}, l, true);
  EXPECT_TRUE(closure.as<let_stmt>()->is_closure);
  eval_context ctx;
  ctx[n] = 5;
  ASSERT_EQ(evaluate(with_let, ctx), 0);
  EXPECT_EQ(seen, (std::vector<index_t>{7, 207, 407}));

  seen.clear();
  stmt tail = call_stmt::make(
      [&](const call_stmt*, eval_context&) -> index_t {
        seen.push_back(-1);
        return 0;
      },
      {}, {}, {}, {});
  stmt b = block::make({body, body}, tail);
  ctx[i] = 1;
  ctx[k] = 2;
  ASSERT_EQ(evaluate(b, ctx), 0);
  EXPECT_EQ(seen, (std::vector<index_t>{102, 102, -1}));
}

TEST(compat_stmt, parallel_loop_and_async) {
  thread_pool_impl pool(2);
  eval_config cfg;
  cfg.thread_pool = &pool;
  eval_context ctx;
  ctx.config = &cfg;

  var i(0), task(1);
  std::atomic<int> sum{0};
  stmt body = call_stmt::make(
      [&](const call_stmt*, eval_context& c) -> index_t {
        sum += static_cast<int>(c[i]);
        return 0;
      },
      {}, {}, {}, {});
  ASSERT_EQ(evaluate(loop::make(i, loop::parallel, bounds(0, 99), 1, body), ctx), 0);
  EXPECT_EQ(sum, 99 * 100 / 2);

  std::atomic<int> task_runs{0}, body_runs{0};
  stmt task_stmt =
      call_stmt::make([&](const call_stmt*, eval_context&) -> index_t { return ++task_runs, 0; }, {}, {}, {}, {});
  stmt body_stmt =
      call_stmt::make([&](const call_stmt*, eval_context&) -> index_t { return ++body_runs, 0; }, {}, {}, {}, {});
  ASSERT_EQ(evaluate(async::make(task, task_stmt, body_stmt), ctx), 0);
  EXPECT_EQ(task_runs, 1);  // waited for before evaluate returns
  EXPECT_EQ(body_runs, 1);
}

// The semaphore and wait_for builders of expr.h make the intrinsic calls the evaluator runs:
// a semaphore initialized to 0 is signaled by an async task and waited on by the body.
TEST(compat_stmt, semaphore_builders) {
  // A semaphore is an index_t in memory: here the one element of a rank-0 stack buffer.
  var sem_buf(0), task(1);
  expr sem = buffer_at(sem_buf);
  expr init = semaphore_init(sem, 0);
  const call* c = init.as<call>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->intrinsic, intrinsic::semaphore_init);
  EXPECT_EQ(semaphore_signal(sem).as<call>()->intrinsic, intrinsic::semaphore_signal);
  EXPECT_EQ(semaphore_wait(sem).as<call>()->intrinsic, intrinsic::semaphore_wait);

  thread_pool_impl pool(1);
  eval_config cfg;
  cfg.thread_pool = &pool;
  eval_context ctx;
  ctx.config = &cfg;
  std::atomic<int> step{0};
  int seen_by_body = -1;
  stmt producer = block::make({
      call_stmt::make([&](const call_stmt*, eval_context&) -> index_t { return step = 1, 0; }, {}, {}, {}, {}),
      check::make(semaphore_signal(sem)),
  });
  stmt consumer = block::make({
      check::make(semaphore_wait(sem)),
      call_stmt::make([&](const call_stmt*, eval_context&) -> index_t { return seen_by_body = step, 0; }, {}, {}, {},
                      {}),
  });
  stmt program =
      allocate::make(sem_buf, memory_type::stack, static_cast<index_t>(sizeof(index_t)), {},
                     block::make({check::make(semaphore_init(sem, 0)), async::make(task, producer, consumer)}));
  ASSERT_EQ(evaluate(program, ctx), 0);
  EXPECT_EQ(seen_by_body, 1);
}

TEST(compat_stmt, constant_buffer_and_transpose) {
  var c(0), out(1);
  buffer<int, 1> src({3});
  src.allocate();
  src(0) = 4;
  src(1) = 5;
  src(2) = 6;
  const_raw_buffer_ptr value = raw_buffer::make_copy(src);
  int sum = 0;
  stmt body = call_stmt::make(
      [&](const call_stmt* op, eval_context& ctx) -> index_t {
        const raw_buffer* b = ctx.lookup_buffer(op->inputs[0]);
        for (index_t x = b->dim(0).begin(); x < b->dim(0).end(); ++x) sum += *static_cast<const int*>(b->address_at(x));
        return 0;
      },
      {c}, {}, {}, {});
  stmt s = constant_buffer::make(c, value, body);
  EXPECT_EQ(s.type(), stmt_node_type::constant_buffer);
  ASSERT_EQ(evaluate(s), 0);
  EXPECT_EQ(sum, 15);

  const int truncate[] = {0, 1};
  const int permute[] = {1, 0};
  EXPECT_TRUE(transpose::is_truncate(truncate));
  EXPECT_FALSE(transpose::is_truncate(permute));
  stmt t = transpose::make_truncate(out, c, 1, body);
  ASSERT_NE(t.as<transpose>(), nullptr);
  EXPECT_TRUE(t.as<transpose>()->is_truncate());
  static_assert(transpose::new_dim == INT_MAX, "new_dim");
}

TEST(compat_runtime_pipeline, setup_then_evaluate_repeatedly) {
  // A pipeline assembled by hand (a runtime-only client): setup binds buffers by address, so the
  // same raw_buffer objects may change between evaluations.
  node_context nodes;
  var in(nodes, "in"), out(nodes, "out"), k(nodes, "k");
  pipeline p;
  p.args = {k};
  p.inputs = {in};
  p.outputs = {out};
  p.body = add_scalar_call(in, out, {expr(k)});

  buffer<int, 1> a({4}), b({4});
  a.allocate();
  b.allocate();
  for (int x = 0; x < 4; ++x) a(x) = x;
  dim in_dim = a.dim(0), out_dim = b.dim(0);
  raw_buffer in_buf{a.base(), sizeof(int), 1, &in_dim};
  raw_buffer out_buf{b.base(), sizeof(int), 1, &out_dim};
  const index_t args[] = {100};
  const raw_buffer* inputs[] = {&in_buf};
  const raw_buffer* outputs[] = {&out_buf};
  eval_context ctx;
  p.setup(args, inputs, outputs, ctx);
  ASSERT_EQ(p.evaluate(ctx), 0);
  for (int x = 0; x < 4; ++x) EXPECT_EQ(b(x), x + 100);

  // Change the same buffers' data and bounds, then evaluate again without setup.
  buffer<int, 1> a2({6}), b2({6});
  a2.translate(-3);
  b2.translate(-3);
  a2.allocate();
  b2.allocate();
  for (index_t x = -3; x < 3; ++x) a2(x) = static_cast<int>(x * 3);
  in_buf.base = a2.base();
  out_buf.base = b2.base();
  in_dim = a2.dim(0);
  out_dim = b2.dim(0);
  ASSERT_EQ(p.evaluate(ctx), 0);
  for (index_t x = -3; x < 3; ++x) EXPECT_EQ(b2(x), x * 3 + 100);

  // The other setup overload and the one-shot forms.
  pipeline q;
  q.inputs = {in};
  q.outputs = {out};
  q.body = add_scalar_call(in, out, {});
  eval_context ctx2;
  q.setup(inputs, outputs, ctx2);
  EXPECT_EQ(ctx2.lookup_buffer(in), &in_buf);
  EXPECT_EQ(ctx2.lookup_buffer(out), &out_buf);
  buffer<int, 1> c({4}), d({4});
  c.allocate();
  d.allocate();
  for (int x = 0; x < 4; ++x) c(x) = 2 * x;
  const raw_buffer* cin[] = {&c};
  const raw_buffer* dout[] = {&d};
  ASSERT_EQ(q.evaluate(cin, dout), 0);
  EXPECT_EQ(d(3), 6);
  ASSERT_EQ(p.evaluate(args, cin, dout), 0);
  EXPECT_EQ(d(3), 106);
}
