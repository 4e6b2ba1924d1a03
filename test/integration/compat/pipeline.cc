// Compatibility tests for the graph API of slinky/builder/pipeline.h (docs/api.md sections 4 to 7
// and 9; silent items S1 (buffer_expr), S14, S21 and checklist item 8 of README.md), written as a
// client of the original slinky would build and run pipelines. C++20 for designated initializers.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/runtime/stmt.h"

namespace {

using namespace slinky;

index_t double_it(const buffer<const int>& a, const buffer<int>& b) {
  for (index_t x = b.dim(0).begin(); x < b.dim(0).end(); ++x) b(x) = a(x) * 2;
  return 0;
}

// Runs a rank-1 pipeline from `in` to `out` over [min, min + n) and checks out(x) == f(in(x)).
template <typename F>
void run_and_check_1d(const pipeline& p, F f, index_t min = 0, index_t n = 20, eval_context* ctx = nullptr) {
  buffer<int, 1> in_buf({n}), out_buf({n});
  in_buf.translate(min);
  out_buf.translate(min);
  in_buf.allocate();
  out_buf.allocate();
  for (index_t x = min; x < min + n; ++x) in_buf(x) = static_cast<int>(x * 3 - 7);
  const raw_buffer* inputs[] = {&in_buf};
  const raw_buffer* outputs[] = {&out_buf};
  eval_context default_ctx;
  ASSERT_EQ(p.evaluate(inputs, outputs, ctx ? *ctx : default_ctx), 0);
  for (index_t x = min; x < min + n; ++x) ASSERT_EQ(out_buf(x), f(in_buf(x))) << "x = " << x;
}

}  // namespace

TEST(compat_builder, buffer_expr_names_are_unique) {
  // S1: buffer_expr::make and make_constant use insert_unique.
  node_context ctx;
  buffer_expr_ptr a = buffer_expr::make(ctx, "in", 1, sizeof(int));
  buffer_expr_ptr b = buffer_expr::make(ctx, "in", 1, sizeof(int));
  EXPECT_NE(a->sym(), b->sym());
  EXPECT_EQ(ctx.name(a->sym()), "in");
  EXPECT_EQ(ctx.name(b->sym()), "in#0");
  buffer_expr_ptr c = buffer_expr::make_constant(ctx, "in", raw_buffer::make_scalar<int>(3));
  EXPECT_NE(c->sym(), a->sym());
  EXPECT_NE(c->sym(), b->sym());
  buffer_expr_ptr s = buffer_expr::make_scalar<int>(ctx, "in", 4);
  EXPECT_NE(s->sym(), c->sym());

  // Two pipelines' worth of buffers with the same names build and run independently.
  var x(ctx, "x");
  buffer_expr_ptr out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  func f = func::make(double_it, {{a, {point(x)}}}, {{out, {x}}});
  pipeline p = build_pipeline(ctx, {a}, {out});
  run_and_check_1d(p, [](int v) { return v * 2; });
}

TEST(compat_builder, buffer_expr_api) {
  node_context ctx;
  buffer_expr_ptr b = buffer_expr::make(ctx, "b", 2, sizeof(short));
  static_assert(std::is_same_v<buffer_expr_ptr, ref_count<buffer_expr>>, "buffer_expr_ptr");
  EXPECT_EQ(b->rank(), 2u);
  EXPECT_EQ(b->dims().size(), 2u);
  EXPECT_EQ(b->bounds().size(), 2u);
  const expr& elem_size = b->elem_size();
  EXPECT_EQ(as_constant(elem_size), 2);
  EXPECT_EQ(b->producer(), nullptr);
  EXPECT_EQ(b->constant(), nullptr);
  // elem_size is an expr.
  buffer_expr_ptr e = buffer_expr::make(ctx, "e", 1, expr(8));
  EXPECT_EQ(as_constant(e->elem_size()), 8);
  // Implicit conversions of the handle.
  const buffer_expr* raw = b;
  EXPECT_EQ(raw, b.get());
  buffer_expr_ptr same = b;
  EXPECT_TRUE(same == b);
  EXPECT_FALSE(b == nullptr);
  b->store_in(memory_type::stack);
  EXPECT_EQ(b->storage(), memory_type::stack);

  // Constants: dims are the constant bounds, strides and fold factors of the buffer.
  buffer<int, 2> data({3, 4});
  data.allocate();
  const_raw_buffer_ptr constant = raw_buffer::make_copy(data);
  buffer_expr_ptr c = buffer_expr::make_constant(ctx, "c", constant);
  EXPECT_EQ(c->constant(), constant);
  EXPECT_EQ(as_constant(c->dim(1).min()), 0);
  EXPECT_EQ(as_constant(c->dim(1).max()), 3);
  EXPECT_EQ(as_constant(c->dim(1).stride), 12);
  var sym(ctx, "scalar");
  buffer_expr_ptr s = buffer_expr::make_scalar<float>(sym, 1.5f);
  EXPECT_EQ(s->sym(), sym);
  EXPECT_EQ(s->rank(), 0u);
  ASSERT_NE(s->constant(), nullptr);
  EXPECT_EQ(*static_cast<const float*>(s->constant()->base), 1.5f);
}

TEST(compat_builder, func_make_callback_forms) {
  node_context ctx;
  var x(ctx, "x");

  // Lambdas taking raw_buffer pointers, void element types, raw_buffer by value and by reference.
  {
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    func f = func::make(
        [](const raw_buffer* a, const raw_buffer* b) -> index_t {
          for (index_t i = b->dim(0).begin(); i < b->dim(0).end(); ++i) {
            *static_cast<int*>(b->address_at(i)) = *static_cast<const int*>(a->address_at(i)) + 1;
          }
          return 0;
        },
        {{in, {point(x)}}}, {{out, {x}}});
    run_and_check_1d(build_pipeline(ctx, {in}, {out}), [](int v) { return v + 1; });
  }
  {
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    func f = func::make(
        [](const buffer<const void>& a, const buffer<void>& b) -> index_t {
          EXPECT_EQ(a.elem_size, sizeof(int));
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) {
            *static_cast<int*>(b.address_at(i)) = *static_cast<const int*>(a.address_at(i)) - 1;
          }
          return 0;
        },
        {{in, {point(x)}}}, {{out, {x}}});
    run_and_check_1d(build_pipeline(ctx, {in}, {out}), [](int v) { return v - 1; });
  }
  {
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    func f = func::make(
        [](raw_buffer a, const raw_buffer& b) -> index_t {
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) {
            *static_cast<int*>(b.address_at(i)) = *static_cast<const int*>(a.address_at(i)) * 5;
          }
          return 0;
        },
        {{in, {point(x)}}}, {{out, {x}}});
    run_and_check_1d(build_pipeline(ctx, {in}, {out}), [](int v) { return v * 5; });
  }
  // A function pointer, a func::callable (std::function) and explicit element types.
  {
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    func f = func::make(double_it, {{in, {point(x)}}}, {{out, {x}}});
    EXPECT_TRUE(f.defined());
    run_and_check_1d(build_pipeline(ctx, {in}, {out}), [](int v) { return v * 2; });
  }
  {
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    func::callable<const int, int> fn = [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
      for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i) = -a(i);
      return 0;
    };
    static_assert(std::is_same_v<func::callable<const int, int>,
                                 std::function<index_t(const buffer<const int>&, const buffer<int>&)>>,
                  "func::callable");
    func f = func::make(std::move(fn), {{in, {point(x)}}}, {{out, {x}}});
    run_and_check_1d(build_pipeline(ctx, {in}, {out}), [](int v) { return -v; });
  }
  {
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    auto lambda = [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
      for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i) = a(i) + 100;
      return 0;
    };
    func f = func::make<const int, int>(lambda, {{in, {point(x)}}}, {{out, {x}}}, {.name = "plus100"});
    EXPECT_EQ(f.attrs().name, "plus100");
    run_and_check_1d(build_pipeline(ctx, {in}, {out}), [](int v) { return v + 100; });
  }
}

TEST(compat_builder, call_func_with_scalars) {
  // func(impl, inputs, outputs, scalars, attrs): scalars reach every call_stmt.
  node_context ctx;
  var x(ctx, "x"), k(ctx, "k");
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  std::atomic<int> calls{0};
  call_stmt::callable impl = [&](const call_stmt* op, eval_context& c) -> index_t {
    ++calls;
    if (op->scalars.size() != 1) return 1;
    const index_t offset = evaluate(op->scalars[0], c);
    const buffer<const int>& a = *c.lookup_buffer<const int>(op->inputs[0]);
    const buffer<int>& b = *c.lookup_buffer<int>(op->outputs[0]);
    for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i) = a(i) + static_cast<int>(offset);
    return 0;
  };
  func f(impl, {{in, {point(x)}}}, {{out, {x}}}, {expr(k) * 2}, call_stmt::attributes{.name = "offset"});
  f.loops({{x, 5}});
  EXPECT_EQ(f.attrs().name, "offset");
  pipeline p = build_pipeline(ctx, {k}, {in}, {out});

  buffer<int, 1> in_buf({20}), out_buf({20});
  in_buf.allocate();
  out_buf.allocate();
  for (int i = 0; i < 20; ++i) in_buf(i) = i;
  const index_t args[] = {21};
  const raw_buffer* inputs[] = {&in_buf};
  const raw_buffer* outputs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(args, inputs, outputs), 0);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(out_buf(i), i + 42);
  EXPECT_GE(calls, 1);  // the builder may merge the chunks of a loop with nothing else inside
}

TEST(compat_builder, attributes_and_options) {
  const call_stmt::attributes attrs{.allow_in_place = 1, .name = "x"};
  EXPECT_TRUE(attrs.allow_in_place == 1);
  EXPECT_EQ(attrs.name, "x");
  EXPECT_EQ(attrs.min_rank, std::numeric_limits<int>::max());
  const call_stmt::attributes ranked{.allow_in_place = 0, .min_rank = 2, .name = "y"};
  EXPECT_EQ(ranked.min_rank, 2);
  const build_options positional{true, false, true};
  EXPECT_TRUE(positional.no_checks);
  EXPECT_FALSE(positional.no_alias_buffers);
  EXPECT_TRUE(positional.trace);
  const build_options designated{.no_alias_buffers = true};
  EXPECT_TRUE(designated.no_alias_buffers);
  EXPECT_FALSE(designated.trace);
}

TEST(compat_builder, copies_take_the_callable_first) {
  node_context ctx;
  var x(ctx, "x");
  // A copy whose callable is null uses slinky::copy; copies are not "defined" (S21).
  {
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    func c(copy_stmt::callable(), {{in, {point(expr(x) + 1)}}}, {out, {x}});
    EXPECT_FALSE(c.defined());
    EXPECT_FALSE(c.is_padded_copy());
    EXPECT_FALSE(func().defined());
    pipeline p = build_pipeline(ctx, {in}, {out});
    buffer<int, 1> in_buf({11}), out_buf({10});
    in_buf.allocate();
    out_buf.allocate();
    for (int i = 0; i < 11; ++i) in_buf(i) = i * i;
    const raw_buffer* inputs[] = {&in_buf};
    const raw_buffer* outputs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(inputs, outputs), 0);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(out_buf(i), (i + 1) * (i + 1));
  }
  // A padded copy with a custom implementation.
  {
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto pad = buffer_expr::make_scalar<int>(ctx, "pad", -9);
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    int impl_calls = 0;
    copy_stmt::callable impl = [&](const raw_buffer& src, const raw_buffer& dst, const raw_buffer& p) {
      ++impl_calls;
      slinky::copy(src, dst, p);
    };
    func c(impl, {in, {point(x)}, {bounds(2, 5)}}, {out, {x}}, {pad, {}});
    EXPECT_TRUE(c.is_padded_copy());
    EXPECT_FALSE(c.defined());
    ASSERT_EQ(c.inputs().size(), 2u);
    pipeline p = build_pipeline(ctx, {in}, {out});
    buffer<int, 1> in_buf({10}), out_buf({10});
    in_buf.allocate();
    out_buf.allocate();
    for (int i = 0; i < 10; ++i) in_buf(i) = i;
    const raw_buffer* inputs[] = {&in_buf};
    const raw_buffer* outputs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(inputs, outputs), 0);
    EXPECT_GE(impl_calls, 1);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(out_buf(i), i >= 2 && i <= 5 ? i : -9) << i;
  }
  // make_copy forms, concat and stack.
  {
    auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 1, sizeof(int));
    auto cat = buffer_expr::make(ctx, "cat", 1, sizeof(int));
    auto stacked = buffer_expr::make(ctx, "stacked", 2, sizeof(int));
    var y(ctx, "y");
    func concat = func::make_concat({a, b}, {cat, {x}}, 0, {0, 4, 10});
    func stack = func::make_stack({a, b}, {stacked, {x, y}}, 1);
    EXPECT_FALSE(concat.defined());
    pipeline p = build_pipeline(ctx, {a, b}, {cat, stacked});
    buffer<int, 1> a_buf({10}), b_buf({10}), cat_buf({10});
    buffer<int, 2> stacked_buf({4, 2});
    a_buf.allocate();
    b_buf.allocate();
    cat_buf.allocate();
    stacked_buf.allocate();
    for (int i = 0; i < 10; ++i) {
      a_buf(i) = i;
      b_buf(i) = 100 + i;
    }
    const raw_buffer* inputs[] = {&a_buf, &b_buf};
    const raw_buffer* outputs[] = {&cat_buf, &stacked_buf};
    ASSERT_EQ(p.evaluate(inputs, outputs), 0);
    // Each source is indexed from the start of its part of the concatenation.
    for (int i = 0; i < 10; ++i) EXPECT_EQ(cat_buf(i), i < 4 ? i : 100 + i - 4) << i;
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(stacked_buf(i, 0), i);
      EXPECT_EQ(stacked_buf(i, 1), 100 + i);
    }
  }
}

// func::input's output_crop and output_slice written by the client (what make_concat and
// make_stack build): each source of a multi-input copy writes only its crop of the output, and a
// sliced source writes one plane of a higher-rank output.
TEST(compat_builder, copy_inputs_with_output_crop_and_slice) {
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 1, sizeof(int));
  auto joined = buffer_expr::make(ctx, "joined", 1, sizeof(int));
  auto planes = buffer_expr::make(ctx, "planes", 2, sizeof(int));
  // joined = a on [0, 3), b shifted by 3 on [3, 8).
  func::input from_a{a, {point(x)}, {}, {bounds(0, 2)}, {}};
  func::input from_b{b, {point(expr(x) - 3)}, {}, {bounds(3, 7)}, {}};
  func join(copy_stmt::callable(), {from_a, from_b}, func::output{joined, {x}});
  // planes(x, 0) = a(x), planes(x, 1) = b(x): each source is sliced into its plane.
  func::input plane0{a, {point(x)}, {}, {interval_expr::all(), point(0)}, {expr(), 0}};
  func::input plane1{b, {point(x)}, {}, {interval_expr::all(), point(1)}, {expr(), 1}};
  func stack(copy_stmt::callable(), {plane0, plane1}, func::output{planes, {x, y}});
  pipeline p = build_pipeline(ctx, {a, b}, {joined, planes});

  buffer<int, 1> a_buf({8}), b_buf({8}), joined_buf({8});
  buffer<int, 2> planes_buf({8, 2});
  for (auto* buf : {&a_buf, &b_buf, &joined_buf}) buf->allocate();
  planes_buf.allocate();
  for (int i = 0; i < 8; ++i) {
    a_buf(i) = 10 + i;
    b_buf(i) = 20 + i;
  }
  const raw_buffer* inputs[] = {&a_buf, &b_buf};
  const raw_buffer* outputs[] = {&joined_buf, &planes_buf};
  ASSERT_EQ(p.evaluate(inputs, outputs), 0);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(joined_buf(i), i < 3 ? 10 + i : 20 + i - 3) << i;
    EXPECT_EQ(planes_buf(i, 0), 10 + i) << i;
    EXPECT_EQ(planes_buf(i, 1), 20 + i) << i;
  }
}

// A buffer_expr's element size may be any expression: here the intermediate takes the input's
// element size, read at run time, so one pipeline moves 2- and 4-byte elements.
TEST(compat_builder, symbolic_element_size) {
  node_context ctx;
  var x(ctx, "x");
  auto in = buffer_expr::make(ctx, "in", 1, expr());
  auto intm = buffer_expr::make(ctx, "intm", 1, buffer_elem_size(in->sym()));
  auto out = buffer_expr::make(ctx, "out", 1, buffer_elem_size(in->sym()));
  EXPECT_FALSE(as_constant(intm->elem_size()));
  auto copy_bytes = [](const buffer<const void>& src, const buffer<void>& dst) -> index_t {
    for (index_t i = dst.dim(0).begin(); i < dst.dim(0).end(); ++i) {
      std::memcpy(dst.address_at(i), src.address_at(i), dst.elem_size);
    }
    return 0;
  };
  func first = func::make(copy_bytes, {{in, {point(x)}}}, {{intm, {x}}});
  func second = func::make(copy_bytes, {{intm, {point(x)}}}, {{out, {x}}});
  pipeline p = build_pipeline(ctx, {in}, {out});

  index_t allocated = 0;
  eval_config cfg;
  cfg.auto_stack_threshold = 0;
  cfg.allocate = [&](var, raw_buffer* b) {
    allocated += static_cast<index_t>(b->size_bytes());
    return b->allocate();
  };
  eval_context ectx;
  ectx.config = &cfg;
  auto check = [&](auto value) {
    using T = decltype(value);
    buffer<T, 1> in_buf({16}), out_buf({16});
    in_buf.allocate();
    out_buf.allocate();
    for (int i = 0; i < 16; ++i) in_buf(i) = static_cast<T>(value * i + 1);
    allocated = 0;
    const raw_buffer* inputs[] = {&in_buf};
    const raw_buffer* outputs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(inputs, outputs, ectx), 0);
    EXPECT_EQ(allocated, 16 * static_cast<index_t>(sizeof(T)));
    for (int i = 0; i < 16; ++i) EXPECT_EQ(out_buf(i), static_cast<T>(value * i + 1));
  };
  check(static_cast<short>(300));
  check(70000);
}

TEST(compat_builder, loop_info_and_loop_id) {
  node_context ctx;
  var x(ctx, "x");
  func::loop_info def;
  EXPECT_FALSE(def.defined());
  func::loop_info serial(x);
  EXPECT_EQ(serial.var, x);
  EXPECT_EQ(serial.sym(), x);
  EXPECT_TRUE(serial.defined());
  EXPECT_EQ(as_constant(serial.step), 1);
  EXPECT_EQ(as_constant(serial.max_workers), loop::serial);
  func::loop_info par(x, 4, loop::parallel);
  EXPECT_EQ(as_constant(par.max_workers), loop::parallel);
  EXPECT_EQ(as_constant(par.step), 4);

  func f;
  loop_id root;
  EXPECT_TRUE(root.root());
  EXPECT_TRUE(root == loop_id());
  loop_id at{&f, x};
  EXPECT_FALSE(at.root());
  // S14: sym() is the var, so it converts to a variable expression.
  expr e = at.sym();
  EXPECT_EQ(e.type(), expr_node_type::variable);
  EXPECT_EQ(as_variable(e), x);
  loop_id innermost{&f, var()};
  EXPECT_TRUE(innermost.innermost(&f));
  EXPECT_FALSE(at.innermost(&f));
  EXPECT_FALSE(innermost == at);
  EXPECT_TRUE(at == (loop_id{&f, x}));
}

TEST(compat_builder, accessors_and_store_at_innermost) {
  // t->store_at({&f, var()}) stores t where f is computed: inside g's loop over y, one row at a
  // time. store_root allocates once, outside the loop.
  for (bool innermost : {true, false}) {
    node_context ctx;
    var x(ctx, "x"), y(ctx, "y");
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    auto add1 = [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
      for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
        for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i, j) + 1;
      }
      return 0;
    };
    func f = func::make(add1, {{in, {point(x), point(y)}}}, {{t, {x, y}}}, {.name = "f"});
    func g = func::make(add1, {{t, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "g"});
    g.loops({{y, 1}});
    f.compute_at({&g, y});
    if (innermost) {
      t->store_at({&f, var()});
    } else {
      t->store_root();
    }
    t->store_in(memory_type::heap);
    int user_data = 7;
    f.user_data() = &user_data;
    const func& cf = f;
    EXPECT_EQ(cf.user_data(), &user_data);
    EXPECT_EQ(g.loops().size(), 1u);
    EXPECT_EQ(g.loops()[0].var, y);
    ASSERT_TRUE(f.compute_at());
    EXPECT_TRUE(*f.compute_at() == (loop_id{&g, y}));
    EXPECT_EQ(f.inputs().size(), 1u);
    EXPECT_EQ(f.outputs().size(), 1u);
    EXPECT_EQ(f.inputs()[0].sym(), in->sym());
    EXPECT_EQ(f.outputs()[0].sym(), t->sym());
    EXPECT_TRUE(static_cast<bool>(f.impl()));
    EXPECT_EQ(t->producer(), &f);
    EXPECT_EQ(f.make_call().type(), stmt_node_type::call_stmt);

    pipeline p = build_pipeline(ctx, {in}, {out});
    const int w = 8, h = 5;
    buffer<int, 2> in_buf({w, h}), out_buf({w, h});
    in_buf.allocate();
    out_buf.allocate();
    for (int j = 0; j < h; ++j) {
      for (int i = 0; i < w; ++i) in_buf(i, j) = i * j;
    }
    eval_config cfg;
    std::vector<index_t> t_rows;
    auto prev = cfg.allocate;
    cfg.allocate = [&](var sym, raw_buffer* b) {
      t_rows.push_back(b->dim(1).extent());
      return prev(sym, b);
    };
    eval_context ectx;
    ectx.config = &cfg;
    const raw_buffer* inputs[] = {&in_buf};
    const raw_buffer* outputs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(inputs, outputs, ectx), 0);
    for (int j = 0; j < h; ++j) {
      for (int i = 0; i < w; ++i) ASSERT_EQ(out_buf(i, j), i * j + 2);
    }
    ASSERT_FALSE(t_rows.empty());
    if (innermost) {
      for (index_t rows : t_rows) EXPECT_EQ(rows, 1);
    } else {
      EXPECT_EQ(t_rows.size(), 1u);
    }
  }
}

TEST(compat_builder, store_outputs_innermost_and_defaults) {
  node_context ctx;
  var x(ctx, "x");
  pipeline empty;  // default constructible
  func moved_to;
  pipeline p;
  {
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto t = buffer_expr::make(ctx, "t", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    func f = func::make(double_it, {{in, {point(x)}}}, {{t, {x}}});
    func g = func::make(double_it, {{t, {point(x)}}}, {{out, {x}}});
    g.loops({{x, 4}});
    f.compute_at({&g, x});
    f.store_outputs_innermost();
    moved_to = std::move(f);  // funcs are movable
    EXPECT_TRUE(moved_to.defined());
    p = build_pipeline(ctx, {in}, {out});
  }
  // The pipeline does not depend on the funcs and buffer_exprs that described it.
  moved_to = func();
  run_and_check_1d(p, [](int v) { return v * 4; });
}

TEST(compat_builder, failures) {
  node_context ctx;
  var x(ctx, "x");
  auto in = buffer_expr::make(ctx, "input_image", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  func f = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i) = a(i - 1) + a(i + 1);
        return 0;
      },
      {{in, {bounds(expr(x) - 1, expr(x) + 1)}}}, {{out, {x}}});
  pipeline p = build_pipeline(ctx, {in}, {out});

  // An input too small for the required bounds fails a check, which names the buffer.
  buffer<int, 1> small({10}), out_buf({10});
  small.allocate();
  out_buf.allocate();
  const raw_buffer* inputs[] = {&small};
  const raw_buffer* outputs[] = {&out_buf};
  testing::internal::CaptureStderr();
  const index_t result = p.evaluate(inputs, outputs);
  const std::string message = testing::internal::GetCapturedStderr();
  EXPECT_NE(result, 0);
  EXPECT_NE(message.find("input_image"), std::string::npos) << message;

  eval_config cfg;
  int check_failures = 0;
  cfg.check_failed = [&](const expr&) { ++check_failures; };
  eval_context ectx;
  ectx.config = &cfg;
  EXPECT_NE(p.evaluate(inputs, outputs, ectx), 0);
  EXPECT_EQ(check_failures, 1);

  // Big enough: runs.
  buffer<int, 1> big({12});
  big.translate(-1);
  big.allocate();
  for (index_t i = -1; i < 11; ++i) big(i) = static_cast<int>(i);
  const raw_buffer* big_inputs[] = {&big};
  ASSERT_EQ(p.evaluate(big_inputs, outputs, ectx), 0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out_buf(i), 2 * i);
}

TEST(compat_builder, callback_failure_stops_parallel_loops) {
  node_context ctx;
  var x(ctx, "x");
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  std::atomic<int> calls{0};
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        ++calls;
        if (b.dim(0).contains(40)) return -3;
        for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i) = a(i);
        return 0;
      },
      {{in, {point(x)}}}, {{out, {x}}}, {.name = "fails_at_40"});
  f.loops({{x, 1, loop::parallel}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  thread_pool_impl pool(2);
  eval_config cfg;
  cfg.thread_pool = &pool;
  int call_failures = 0;
  std::string failed_name;
  cfg.call_failed = [&](const call_stmt* op) {
    ++call_failures;
    failed_name = op->attrs.name;
  };
  eval_context ectx;
  ectx.config = &cfg;
  buffer<int, 1> in_buf({100}), out_buf({100});
  in_buf.allocate();
  out_buf.allocate();
  for (int i = 0; i < 100; ++i) in_buf(i) = i;
  const raw_buffer* inputs[] = {&in_buf};
  const raw_buffer* outputs[] = {&out_buf};
  EXPECT_NE(p.evaluate(inputs, outputs, ectx), 0);
  EXPECT_EQ(call_failures, 1);
  EXPECT_EQ(failed_name, "fails_at_40");
  EXPECT_GE(calls, 1);
}

TEST(compat_builder_death, misuse_is_reported_with_names) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto build_twice_produced = []() {
    node_context ctx;
    var x(ctx, "x");
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "produced_twice", 1, sizeof(int));
    func f = func::make(double_it, {{in, {point(x)}}}, {{out, {x}}});
    func g = func::make(double_it, {{in, {point(x)}}}, {{out, {x}}});
    build_pipeline(ctx, {in}, {out});
  };
  EXPECT_DEATH(build_twice_produced(), "produced_twice");
}
