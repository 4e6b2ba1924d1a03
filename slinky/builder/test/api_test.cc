// Tests of the graph API as the original slinky defines it: callback forms, scalars, copy
// constructors, loop_id and loop_info, storage at a func's own location, symbolic element sizes,
// constants, the trace option and pipeline::setup with a built pipeline.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"
#include "test_funcs.h"

namespace slinky {
namespace {

using test::memory_counter;

void fill_iota(buffer<int, 1>& b) {
  for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = static_cast<int>(i);
}

index_t twice(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t i = out.dim(0).min(); i <= out.dim(0).max(); ++i) out(i) = in(i)*2;
  return 0;
}

TEST(api, callback_forms) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 1, sizeof(int));
  auto c = buffer_expr::make(ctx, "c", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  // A function pointer with explicit element types.
  func f1 = func::make<const int, int>(twice, {{in, {point(x)}}}, {{a, {x}}});
  // A func::callable.
  func::callable<const int, int> add_one = [](const buffer<const int>& i, const buffer<int>& o) -> index_t {
    for (index_t k = o.dim(0).min(); k <= o.dim(0).max(); ++k) o(k) = i(k) + 1;
    return 0;
  };
  func f2 = func::make(std::move(add_one), {{a, {point(x)}}}, {{b, {x}}});
  // Type-erased parameters: const raw_buffer* and buffer<const void>/buffer<void>.
  func f3 = func::make(
      [](const raw_buffer* i, const buffer<void>& o) -> index_t {
        for (index_t k = o.dim(0).min(); k <= o.dim(0).max(); ++k) {
          *static_cast<int*>(o.address_at(k)) = *static_cast<const int*>(i->address_at(k)) + 10;
        }
        return 0;
      },
      {{b, {point(x)}}}, {{c, {x}}});
  func f4 = func::make(
      [](const buffer<const void>& i, raw_buffer o) -> index_t {
        for (index_t k = o.dim(0).min(); k <= o.dim(0).max(); ++k) {
          *static_cast<int*>(o.address_at(k)) = *static_cast<const int*>(i.address_at(k)) * 3;
        }
        return 0;
      },
      {{c, {point(x)}}}, {{out, {x}}});
  f4.loops({{x, 4}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> in_buf({10});
  in_buf.allocate();
  fill_iota(in_buf);
  buffer<int, 1> out_buf({10});
  out_buf.allocate();
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  for (index_t i = 0; i < 10; ++i) EXPECT_EQ(out_buf(i), ((i * 2 + 1) + 10) * 3);
}

TEST(api, scalars_reach_the_callback) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  var n(ctx, "n");
  std::vector<index_t> chunk_mins;
  func f(
      [&](const call_stmt* op, eval_context& c) -> index_t {
        const raw_buffer* i = c.lookup_buffer(op->inputs[0]);
        const raw_buffer* o = c.lookup_buffer(op->outputs[0]);
        const index_t add = evaluate(op->scalars[0], c);
        chunk_mins.push_back(evaluate(op->scalars[1], c));
        for (index_t k = o->dim(0).min(); k <= o->dim(0).max(); ++k) {
          *static_cast<int*>(o->address_at(k)) = *static_cast<const int*>(i->address_at(k)) + static_cast<int>(add);
        }
        return 0;
      },
      {{in, {point(x)}}}, {{out, {x}}}, {expr(n) * 2, x}, {.name = "add_n"});
  EXPECT_TRUE(f.defined());
  f.loops({{x, 3}});
  pipeline p = build_pipeline(ctx, {n}, {in}, {out}, {}, {});
  buffer<int, 1> in_buf({7});
  in_buf.allocate();
  fill_iota(in_buf);
  buffer<int, 1> out_buf({7});
  out_buf.allocate();
  const index_t args[] = {5};
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(args, ins, outs), 0);
  for (index_t i = 0; i < 7; ++i) EXPECT_EQ(out_buf(i), i + 10);
  // The loop variable reads as each chunk's min.
  EXPECT_EQ(chunk_mins, (std::vector<index_t>{0, 3, 6}));
}

TEST(api, copy_constructors_take_the_callable_first) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto padded = buffer_expr::make(ctx, "padded", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  auto pad = buffer_expr::make_scalar<int>(ctx, "pad", -1);
  var x(ctx, "x");
  int copies = 0;
  copy_stmt::callable counting = [&](const raw_buffer& src, const raw_buffer& dst, const raw_buffer& p) {
    ++copies;
    copy(src, dst, p);
  };
  func::input src{in, {point(x)}};
  src.input_crop = {bounds(0, 3)};
  func pad_copy(counting, src, {padded, {x}}, {pad, {}});
  func shift(nullptr, {{padded, {point(x - 1)}}}, {out, {x}});
  // Copies do not call a callback.
  EXPECT_FALSE(pad_copy.defined());
  EXPECT_FALSE(shift.defined());
  EXPECT_TRUE(pad_copy.is_padded_copy());
  pipeline p = build_pipeline(ctx, {in}, {out}, build_options{.no_alias_buffers = true});
  buffer<int, 1> in_buf({8});
  in_buf.allocate();
  fill_iota(in_buf);
  buffer<int, 1> out_buf({8});
  out_buf.allocate();
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  EXPECT_GT(copies, 0);
  const int expected[] = {-1, 0, 1, 2, 3, -1, -1, -1};
  for (index_t i = 0; i < 8; ++i) EXPECT_EQ(out_buf(i), expected[i]) << i;
}

TEST(api, loop_id_and_loop_info) {
  node_context ctx;
  var x(ctx, "x");
  var y(ctx, "y");
  func f;
  func g;
  loop_id root;
  loop_id fx{&f, x};
  loop_id f_inner{&f, var()};
  EXPECT_TRUE(root.root());
  EXPECT_EQ(root, loop_id());
  EXPECT_EQ(fx.sym(), x);
  expr e = fx.sym();
  EXPECT_TRUE(match(e, expr(x)));
  EXPECT_NE(fx, (loop_id{&f, y}));
  EXPECT_NE(fx, (loop_id{&g, x}));
  EXPECT_TRUE(f_inner.innermost(&f));
  EXPECT_FALSE(fx.innermost(&f));
  func::loop_info l(x, 4, loop::parallel);
  EXPECT_EQ(l.var, x);
  EXPECT_EQ(l.sym(), x);
  EXPECT_TRUE(l.defined());
  EXPECT_TRUE(l.is_parallel());
  EXPECT_FALSE(func::loop_info().defined());
  func::loop_info bare = x;
  EXPECT_TRUE(is_one(bare.step));
}

// A producer stored at its own location ({&f, var()}, or store_outputs_innermost) is allocated
// around each of its calls: one row at a time inside the consumer's loop.
TEST(api, store_at_a_funcs_own_location) {
  for (int variant = 0; variant < 2; ++variant) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x");
    var y(ctx, "y");
    auto elementwise = [](const buffer<const int>& i, const buffer<int>& o) -> index_t {
      for (index_t b = o.dim(1).min(); b <= o.dim(1).max(); ++b) {
        for (index_t a = o.dim(0).min(); a <= o.dim(0).max(); ++a) o(a, b) = i(a, b) + 1;
      }
      return 0;
    };
    func f = func::make(elementwise, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
    func g = func::make(elementwise, {{intm, {point(x), point(y)}}}, {{out, {x, y}}});
    g.loops({{y, 1}});
    f.compute_root();
    if (variant == 0) {
      intm->store_at({&f, var()});
    } else {
      f.store_outputs_innermost();
    }
    // Computed at the root but stored at its own location: the whole buffer, once.
    memory_counter mem;
    pipeline p = build_pipeline(ctx, {in}, {out});
    buffer<int, 2> in_buf({6, 5});
    in_buf.allocate();
    for (index_t b = 0; b < 5; ++b) {
      for (index_t a = 0; a < 6; ++a) in_buf(a, b) = static_cast<int>(a + 10 * b);
    }
    buffer<int, 2> out_buf({6, 5});
    out_buf.allocate();
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, mem.context), 0);
    for (index_t b = 0; b < 5; ++b) {
      for (index_t a = 0; a < 6; ++a) EXPECT_EQ(out_buf(a, b), a + 10 * b + 2);
    }
    EXPECT_EQ(mem.allocations, 1);
    EXPECT_EQ(mem.total_bytes, 6 * 5 * 4);
  }
}

TEST(api, store_at_innermost_of_a_func_in_a_loop) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x");
  var y(ctx, "y");
  auto elementwise = [](const buffer<const int>& i, const buffer<int>& o) -> index_t {
    for (index_t b = o.dim(1).min(); b <= o.dim(1).max(); ++b) {
      for (index_t a = o.dim(0).min(); a <= o.dim(0).max(); ++a) o(a, b) = i(a, b) * 3;
    }
    return 0;
  };
  func f = func::make(elementwise, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func g = func::make(elementwise, {{intm, {point(x), point(y)}}}, {{out, {x, y}}});
  g.loops({{y, 1}});
  f.store_outputs_innermost();
  memory_counter mem;
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({4, 3});
  in_buf.allocate();
  for (index_t b = 0; b < 3; ++b) {
    for (index_t a = 0; a < 4; ++a) in_buf(a, b) = static_cast<int>(a + b);
  }
  buffer<int, 2> out_buf({4, 3});
  out_buf.allocate();
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, mem.context), 0);
  for (index_t b = 0; b < 3; ++b) {
    for (index_t a = 0; a < 4; ++a) EXPECT_EQ(out_buf(a, b), (a + b) * 9);
  }
  // One row per iteration of g's loop.
  EXPECT_EQ(mem.allocations, 3);
  EXPECT_EQ(mem.peak_bytes, 4 * 4);
}

TEST(api, symbolic_element_size) {
  node_context ctx;
  var es(ctx, "es");
  auto in = buffer_expr::make(ctx, "in", 1, es);
  auto intm = buffer_expr::make(ctx, "intm", 1, es);
  auto out = buffer_expr::make(ctx, "out", 1, es);
  var x(ctx, "x");
  auto byte_copy = [](const raw_buffer& i, const raw_buffer& o) -> index_t {
    copy(i, o);
    return 0;
  };
  func f = func::make(byte_copy, {{in, {point(x)}}}, {{intm, {x}}});
  func g = func::make(byte_copy, {{intm, {point(x)}}}, {{out, {x}}});
  EXPECT_TRUE(match(intm->elem_size(), expr(es)));
  pipeline p = build_pipeline(ctx, {es}, {in}, {out}, {}, {});
  for (index_t size : {2, 8}) {
    std::vector<char> in_data(5 * size), out_data(5 * size, 0);
    for (std::size_t i = 0; i < in_data.size(); ++i) in_data[i] = static_cast<char>(i + 1);
    dim in_dim(0, 4, size);
    dim out_dim(0, 4, size);
    raw_buffer in_buf(in_data.data(), size, 1, &in_dim);
    raw_buffer out_buf(out_data.data(), size, 1, &out_dim);
    const index_t args[] = {size};
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(args, ins, outs), 0);
    EXPECT_EQ(in_data, out_data);
    // A buffer of another element size fails the check.
    const index_t wrong[] = {size + 1};
    eval_config quiet;
    quiet.check_failed = [](const expr&) {};
    eval_context c;
    c.config = &quiet;
    EXPECT_NE(p.evaluate(wrong, ins, outs, c), 0);
  }
}

TEST(api, constants_and_scalars) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var k_sym(ctx, "k");
  auto k = buffer_expr::make_scalar<int>(k_sym, 7);
  EXPECT_EQ(k->sym(), k_sym);
  EXPECT_EQ(k->rank(), 0);
  buffer<int, 1> table_data({3});
  table_data.allocate();
  for (index_t i = 0; i < 3; ++i) table_data(i) = static_cast<int>(100 * i);
  auto table = buffer_expr::make_constant(ctx, "table", raw_buffer::make_copy(table_data));
  // A constant's dims are constants.
  EXPECT_TRUE(is_constant(table->dim(0).max(), 2));
  EXPECT_TRUE(is_constant(table->dim(0).stride, 4));
  var x(ctx, "x");
  func f = func::make(
      [](const buffer<const int>& i, const buffer<const int>& kb, const buffer<const int>& t, const buffer<int>& o) {
        for (index_t a = o.dim(0).min(); a <= o.dim(0).max(); ++a) o(a) = i(a) + kb() + t(a % 3);
        return 0;
      },
      {{in, {point(x)}}, {k, {}}, {table, {bounds(0, 2)}}}, {{out, {x}}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> in_buf({6});
  in_buf.allocate();
  fill_iota(in_buf);
  buffer<int, 1> out_buf({6});
  out_buf.allocate();
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  for (index_t i = 0; i < 6; ++i) EXPECT_EQ(out_buf(i), i + 7 + 100 * (i % 3));
}

TEST(api, trace_option_brackets_pipeline_loops_iterations_and_calls) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make<const int, int>(twice, {{in, {point(x)}}}, {{intm, {x}}}, {.name = "f"});
  func g = func::make<const int, int>(twice, {{intm, {point(x)}}}, {{out, {x}}}, {.name = "g"});
  g.loops({{x, 2}});
  std::vector<std::string> events;
  eval_config cfg;
  cfg.trace_begin = [&](const char* name) -> index_t {
    events.push_back(std::string("begin ") + name);
    return static_cast<index_t>(events.size());
  };
  cfg.trace_end = [&](index_t token) { events.push_back("end " + std::to_string(token)); };
  eval_context c;
  c.config = &cfg;
  buffer<int, 1> in_buf({4});
  in_buf.allocate();
  fill_iota(in_buf);
  buffer<int, 1> out_buf({4});
  out_buf.allocate();

  // Without the option, nothing is traced.
  pipeline untraced = build_pipeline(ctx, {in}, {out});
  ASSERT_EQ(untraced.evaluate({&in_buf}, {&out_buf}, c), 0);
  EXPECT_TRUE(events.empty());

  pipeline traced = build_pipeline(ctx, {in}, {out}, build_options{.trace = true});
  ASSERT_EQ(traced.evaluate({&in_buf}, {&out_buf}, c), 0);
  for (index_t i = 0; i < 4; ++i) EXPECT_EQ(out_buf(i), i * 4);
  auto count = [&](const std::string& e) { return std::count(events.begin(), events.end(), e); };
  EXPECT_EQ(events.front(), "begin pipeline");
  EXPECT_EQ(count("begin pipeline"), 1);
  EXPECT_EQ(count("begin loop x"), 1);
  EXPECT_EQ(count("begin loop x iteration"), 2);
  EXPECT_EQ(count("begin f"), 2);
  EXPECT_EQ(count("begin g"), 2);
  // Every begin has its end, with its token.
  int begins = 0;
  int ends = 0;
  for (const std::string& e : events) (e.rfind("begin ", 0) == 0 ? begins : ends)++;
  EXPECT_EQ(begins, ends);
  EXPECT_EQ(events.back(), "end 1");
}

TEST(api, setup_with_a_built_pipeline) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make<const int, int>(twice, {{in, {point(x)}}}, {{out, {x}}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  std::vector<int> in_data = {1, 2, 3, 4, 5, 6};
  std::vector<int> out_data(6, 0);
  dim in_dim(0, 2, 4);
  dim out_dim(0, 2, 4);
  raw_buffer in_buf(in_data.data(), 4, 1, &in_dim);
  raw_buffer out_buf(out_data.data(), 4, 1, &out_dim);
  eval_context c;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  p.setup(ins, outs, c);
  ASSERT_EQ(p.evaluate(c), 0);
  EXPECT_EQ(out_data, (std::vector<int>{2, 4, 6, 0, 0, 0}));
  // Move the same descriptors to the second half and run again.
  in_buf.base = in_data.data() + 3;
  out_buf.base = out_data.data() + 3;
  ASSERT_EQ(p.evaluate(c), 0);
  EXPECT_EQ(out_data, (std::vector<int>{2, 4, 6, 8, 10, 12}));
  // The same context may evaluate other expressions of the pipeline's symbols.
  EXPECT_EQ(evaluate(buffer_max(in->sym(), 0), c), 2);
}

// input_crop on a call func: the callback gets its input cropped to it, empty for the chunks
// outside, and is still called for them.
TEST(api, input_crop_of_a_call) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  int calls = 0;
  int empty_inputs = 0;
  func::input input{in, {point(x)}};
  input.input_crop = {bounds(0, 3)};
  func f = func::make(
      [&](const buffer<const int>& i, const buffer<int>& o) -> index_t {
        ++calls;
        if (i.dim(0).empty()) ++empty_inputs;
        for (index_t k = o.dim(0).min(); k <= o.dim(0).max(); ++k) o(k) = i.dim(0).contains(k) ? i(k) : -1;
        return 0;
      },
      {input}, {{out, {x}}});
  f.loops({{x, 2}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> in_buf({4});
  in_buf.allocate();
  fill_iota(in_buf);
  buffer<int, 1> out_buf({8});
  out_buf.allocate();
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(empty_inputs, 2);
  for (index_t i = 0; i < 8; ++i) EXPECT_EQ(out_buf(i), i < 4 ? i : -1);
}

TEST(api, element_size_zero_output_carries_a_reduction_loop) {
  // out(i) = sum over r of in(r, i), the reduction dimension r being a second output that nothing
  // consumes, of element size 0 and stride 0, computed over its declared bounds; its fold factor
  // (4) is data for the callback. It is allocated as nothing, and each call's crop of it tells the
  // callback its chunk of the reduction.
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  auto red = buffer_expr::make(ctx, "reduction", 1, 0);
  red->dim(0) = dim_expr(min_extent(0, in->dim(0).extent()), 0, 4);
  var r(ctx, "r"), i(ctx, "i");
  std::vector<dim> chunks;
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& c, const raw_buffer& rb) -> index_t {
        chunks.push_back(rb.dim(0));
        if (rb.elem_size != 0) return 1;
        for (index_t y = c.dim(0).min(); y <= c.dim(0).max(); ++y) {
          int sum = rb.dim(0).min() == 0 ? 0 : c(y);
          for (index_t x = rb.dim(0).min(); x <= rb.dim(0).max(); ++x) sum += a(x, y);
          c(y) = sum;
        }
        return 0;
      },
      {{in, {point(r), point(i)}}}, {{out, {i}}, {red, {r}}});
  f.loops({{r, 4}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({10, 3});
  in_buf.allocate();
  for (index_t y = 0; y < 3; ++y) {
    for (index_t x = 0; x < 10; ++x) in_buf(x, y) = static_cast<int>(x * 10 + y);
  }
  buffer<int, 1> out_buf({3});
  out_buf.allocate();
  memory_counter m;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  EXPECT_EQ(m.allocations, 0);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0], dim(0, 3, 0, 4));
  EXPECT_EQ(chunks[1], dim(4, 7, 0, 4));
  EXPECT_EQ(chunks[2], dim(8, 9, 0, 4));
  for (index_t y = 0; y < 3; ++y) EXPECT_EQ(out_buf(y), 450 + 10 * y);
}

TEST(api, input_bounds_longer_than_the_rank) {
  // A rank-1 input given the box of the rank-2 output: the first entry is used.
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func f = func::make(
      [](const buffer<const int>& a, const buffer<int>& c) -> index_t {
        for (index_t j = c.dim(1).min(); j <= c.dim(1).max(); ++j) {
          for (index_t k = c.dim(0).min(); k <= c.dim(0).max(); ++k) c(k, j) = a(k) + static_cast<int>(j);
        }
        return 0;
      },
      {{in, {point(x), point(y)}}}, {{out, {x, y}}});
  f.loops({{y, 1}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> in_buf({4});
  in_buf.allocate();
  fill_iota(in_buf);
  buffer<int, 2> out_buf({4, 2});
  out_buf.allocate();
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  for (index_t j = 0; j < 2; ++j) {
    for (index_t k = 0; k < 4; ++k) EXPECT_EQ(out_buf(k, j), k + j);
  }
}

TEST(api, input_bounds_shorter_than_the_rank_of_a_pipeline_input) {
  // A rank-2 input given one interval: the callback reads it whole in dim 1, and no requirement
  // is checked there; dim 0 is still checked.
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(
      [](const buffer<const int>& a, const buffer<int>& c) -> index_t {
        for (index_t k = c.dim(0).min(); k <= c.dim(0).max(); ++k) {
          int sum = 0;
          for (index_t j = a.dim(1).min(); j <= a.dim(1).max(); ++j) sum += a(k, j);
          c(k) = sum;
        }
        return 0;
      },
      {{in, {point(x)}}}, {{out, {x}}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({4, 3});
  in_buf.allocate();
  for (index_t j = 0; j < 3; ++j) {
    for (index_t k = 0; k < 4; ++k) in_buf(k, j) = static_cast<int>(k + 10 * j);
  }
  buffer<int, 1> out_buf({4});
  out_buf.allocate();
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  for (index_t k = 0; k < 4; ++k) EXPECT_EQ(out_buf(k), 3 * k + 30);
  // Too small in dim 0: the check fails.
  buffer<int, 1> long_out({5});
  long_out.allocate();
  memory_counter m;
  int failures = 0;
  m.config.check_failed = [&](const expr&) { ++failures; };
  EXPECT_NE(p.evaluate({&in_buf}, {&long_out}, m.context), 0);
  EXPECT_EQ(failures, 1);
}

TEST(api, declared_broadcast_of_a_single_element_input_dim) {
  // The client declares dim 0 of `in` a broadcast (it knows the extent is 1, e.g. four 2-bit
  // indices packed in one byte); the caller's buffer has extent 1 there with a stride of 1 byte.
  // A dim of one element addresses nothing with its stride: accepted. Two elements are not.
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(uint8_t));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var y(ctx, "y");
  in->dim(0) = dim::broadcast();
  func f = func::make(
      [](const buffer<const uint8_t>& a, const buffer<int>& c) -> index_t {
        for (index_t j = c.dim(0).min(); j <= c.dim(0).max(); ++j) c(j) = a(0, j);
        return 0;
      },
      {{in, {point(0), point(y)}}}, {{out, {y}}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<uint8_t, 2> in_buf({1, 3});
  in_buf.allocate();
  for (index_t j = 0; j < 3; ++j) in_buf(0, j) = static_cast<uint8_t>(j + 7);
  ASSERT_EQ(in_buf.dim(0).stride(), 1);
  buffer<int, 1> out_buf({3});
  out_buf.allocate();
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  for (index_t j = 0; j < 3; ++j) EXPECT_EQ(out_buf(j), j + 7);
  buffer<uint8_t, 2> wide({2, 3});
  wide.allocate();
  wide.translate(-1, 0);
  memory_counter m;
  int failures = 0;
  m.config.check_failed = [&](const expr&) { ++failures; };
  EXPECT_NE(p.evaluate({&wide}, {&out_buf}, m.context), 0);
  EXPECT_EQ(failures, 1);
}

TEST(api, output_indexed_by_fewer_variables_than_its_rank) {
  // t(x, j) = in(x) * (j + 1) for both j of a pair (a min-max reduction writes its pair so): dim 1
  // has no variable and is computed whole, as a pipeline output and as an intermediate.
  for (bool intermediate : {false, true}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    std::vector<dim> pair_dims;
    func f = func::make(
        [&](const buffer<const int>& a, const buffer<int>& c) -> index_t {
          pair_dims.push_back(c.dim(1));
          for (index_t j = c.dim(1).min(); j <= c.dim(1).max(); ++j) {
            for (index_t i = c.dim(0).min(); i <= c.dim(0).max(); ++i) c(i, j) = a(i) * static_cast<int>(j + 1);
          }
          return 0;
        },
        {{in, {point(x)}}}, {{intermediate ? t : out, {x}}});
    func g;
    if (intermediate) {
      g = func::make(
          [](const buffer<const int>& a, const buffer<int>& c) -> index_t {
            for (index_t j = c.dim(1).min(); j <= c.dim(1).max(); ++j) {
              for (index_t i = c.dim(0).min(); i <= c.dim(0).max(); ++i) c(i, j) = a(i, j) + 100;
            }
            return 0;
          },
          {{t, {point(x), point(y)}}}, {{out, {x, y}}});
      g.loops({{x, 2}});
    } else {
      f.loops({{x, 2}});
    }
    pipeline p = build_pipeline(ctx, {in}, {out});
    buffer<int, 1> in_buf({5});
    in_buf.allocate();
    fill_iota(in_buf);
    buffer<int, 2> out_buf({5, 2});
    out_buf.allocate();
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
    ASSERT_EQ(pair_dims.size(), 3u);
    for (const dim& d : pair_dims) EXPECT_EQ(d.min(), 0) << intermediate;
    for (const dim& d : pair_dims) EXPECT_EQ(d.max(), 1) << intermediate;
    for (index_t j = 0; j < 2; ++j) {
      for (index_t i = 0; i < 5; ++i) EXPECT_EQ(out_buf(i, j), i * (j + 1) + (intermediate ? 100 : 0));
    }
  }
}

TEST(api, lets_are_bound_after_the_lets_they_use) {
  // A host gave `step` a value naming `split`, a let it defines later (it updated the earlier let
  // after making the later one): the lets are bound in dependency order.
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x"), step(ctx, "step"), split(ctx, "split");
  std::vector<index_t> extents;
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& c) -> index_t {
        extents.push_back(c.dim(0).extent());
        return twice(a, c);
      },
      {{in, {point(x)}}}, {{out, {x}}});
  f.loops({{x, step}});
  pipeline p = build_pipeline(ctx, {}, {in}, {out}, {{step, split * 1}, {split, 3}});
  buffer<int, 1> in_buf({7});
  in_buf.allocate();
  fill_iota(in_buf);
  buffer<int, 1> out_buf({7});
  out_buf.allocate();
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  EXPECT_EQ(extents, (std::vector<index_t>{3, 3, 1}));
  for (index_t k = 0; k < 7; ++k) EXPECT_EQ(out_buf(k), 2 * k);
}

TEST(api, an_input_nothing_reads_needs_no_memory) {
  // shape is given for its extent only: no check of its memory.
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto shape = buffer_expr::make(ctx, "shape", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make<const int, int>(twice, {{in, {point(x)}}}, {{out, {x}}});
  out->dim(0).bounds = min_extent(0, shape->dim(0).extent());
  pipeline p = build_pipeline(ctx, {in, shape}, {out});
  buffer<int, 1> in_buf({5});
  in_buf.allocate();
  fill_iota(in_buf);
  buffer<int, 1> shape_buf({5});
  buffer<int, 1> out_buf({5});
  out_buf.allocate();
  ASSERT_EQ(p.evaluate({&in_buf, &shape_buf}, {&out_buf}), 0);
  for (index_t k = 0; k < 5; ++k) EXPECT_EQ(out_buf(k), 2 * k);
}

TEST(api, make_call_runs_the_callback_on_whole_buffers) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make<const int, int>(twice, {{in, {point(x)}}}, {{out, {x}}});
  stmt call = f.make_call();
  ASSERT_NE(call.as<call_stmt>(), nullptr);
  buffer<int, 1> in_buf({3});
  in_buf.allocate();
  fill_iota(in_buf);
  buffer<int, 1> out_buf({3});
  out_buf.allocate();
  eval_context c;
  c[in->sym()] = reinterpret_cast<index_t>(static_cast<raw_buffer*>(&in_buf));
  c[out->sym()] = reinterpret_cast<index_t>(static_cast<raw_buffer*>(&out_buf));
  ASSERT_EQ(evaluate(call, c), 0);
  EXPECT_EQ(out_buf(2), 4);
}

}  // namespace
}  // namespace slinky
