// Failure behaviour: builder misuse is reported with the names of the funcs and buffers
// involved (in release builds too), and bad buffers given to a built pipeline fail a check that
// names the buffer and dimension, make evaluate return non-zero, and touch nothing.
#include <gtest/gtest.h>

#include <string>

#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"
#include "test_funcs.h"

namespace slinky {
namespace {

index_t copy_1d(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t i = out.dim(0).min(); i <= out.dim(0).max(); ++i) out(i) = in(i);
  return 0;
}

TEST(builder_misuse, cycle) {
  auto build = [] {
    node_context ctx;
    auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    var x(ctx, "x");
    func f = func::make(copy_1d, {{a, {point(x)}}}, {{b, {x}}}, {.name = "f"});
    func g = func::make(copy_1d, {{b, {point(x)}}}, {{a, {x}}}, {.name = "g"});
    func h = func::make(copy_1d, {{b, {point(x)}}}, {{out, {x}}}, {.name = "h"});
    build_pipeline(ctx, {}, {out});
  };
  EXPECT_DEATH(build(), "cycle: func (f|g)");
}

TEST(builder_misuse, loop_over_a_variable_of_no_output) {
  auto build = [] {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    var x(ctx, "x"), z(ctx, "z");
    func f = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}}, {.name = "f"});
    f.loops({{z, 1}});
    build_pipeline(ctx, {in}, {out});
  };
  EXPECT_DEATH(build(), "func f loops over z, which indexes none of its outputs");
}

TEST(builder_misuse, buffer_produced_twice) {
  auto build = [] {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    var x(ctx, "x");
    func f = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}}, {.name = "first"});
    func g = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}}, {.name = "second"});
    // Reported by build_pipeline, where the buffer has its name.
    build_pipeline(ctx, {in}, {out});
  };
  EXPECT_DEATH(build(), "buffer out is produced twice: by func first and by func second");
}

// A second producer that is gone (destroyed, or the first one destroyed) is no error.
TEST(builder_misuse, a_destroyed_second_producer_is_forgotten) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}}, {.name = "first"});
  { func g = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}}, {.name = "second"}); }
  EXPECT_EQ(out->producer(), &f);
  EXPECT_EQ(out->second_producer(), nullptr);
  {
    func g = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}}, {.name = "second"});
    f = func();
    EXPECT_EQ(out->producer(), &g);
  }
  EXPECT_EQ(out->producer(), nullptr);
}

TEST(builder_misuse, bounds_of_wrong_rank) {
  auto build = [] {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    var x(ctx, "x");
    func f = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}}, {.name = "flat"});
    build_pipeline(ctx, {in}, {out});
  };
  EXPECT_DEATH(build(), "func flat: the bounds of input in have 1 dimensions, but in has rank 2");
}

TEST(builder_misuse, output_dims_of_wrong_rank) {
  auto build = [] {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x");
    func f = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}}, {.name = "short_dims"});
    build_pipeline(ctx, {in}, {out});
  };
  EXPECT_DEATH(build(), "func short_dims: output out is indexed by 1 variables, but has rank 2");
}

// A copy may leave out the variables of the dims its sources slice (output_slice), and only those.
TEST(builder_misuse, sliced_copy_output_dims) {
  auto build = [](bool two_sources) {
    node_context ctx;
    auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 3, sizeof(int));
    var x(ctx, "x");
    func::input ia{a, {point(x)}, {}, {}, {expr(), 0}};
    func::input ib{b, {point(x)}, {}, {}, {expr(), expr(), 1}};
    // Alone, a slices one dim of three, and the output has one variable: a dim has none. With b,
    // which slices another dim, the sources do not slice the same dims.
    func f = two_sources ? func::make_copy({ia, ib}, {out, {x}}) : func::make_copy(ia, {out, {x}});
    build_pipeline(ctx, {a, b}, {out});
  };
  EXPECT_DEATH(build(false), "func copy to out: output out is indexed by 1 variables, but has rank 3 \\(its inputs' "
                             "output_slice slices 1 dims\\)");
  EXPECT_DEATH(build(true), "output out is indexed by 1 variables, but has rank 3 \\(every source must slice the "
                            "same dims\\)");
}

TEST(builder_misuse, compute_at_missing_loop) {
  auto build = [] {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    var x(ctx, "x"), z(ctx, "z");
    func f = func::make(copy_1d, {{in, {point(x)}}}, {{intm, {x}}}, {.name = "producer"});
    func g = func::make(copy_1d, {{intm, {point(x)}}}, {{out, {x}}}, {.name = "consumer"});
    g.loops({x});
    f.compute_at({&g, z});
    build_pipeline(ctx, {in}, {out});
  };
  EXPECT_DEATH(build(), "compute_at of func producer names loop z of func consumer, which has no such loop");
}

TEST(builder_misuse, compute_at_loop_that_cannot_contain) {
  auto build = [] {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
    auto out1 = buffer_expr::make(ctx, "out1", 1, sizeof(int));
    auto out2 = buffer_expr::make(ctx, "out2", 1, sizeof(int));
    var x(ctx, "x");
    func f = func::make(copy_1d, {{in, {point(x)}}}, {{intm, {x}}}, {.name = "producer"});
    func g1 = func::make(copy_1d, {{intm, {point(x)}}}, {{out1, {x}}}, {.name = "looped"});
    func g2 = func::make(copy_1d, {{intm, {point(x)}}}, {{out2, {x}}}, {.name = "other"});
    g1.loops({x});
    f.compute_at({&g1, x});
    build_pipeline(ctx, {in}, {out1, out2});
  };
  EXPECT_DEATH(build(), "loop x of func looped cannot contain func producer, because its consumer other");
}

TEST(builder_misuse, store_at_loop_that_does_not_contain_producer) {
  auto build = [] {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    var x(ctx, "x");
    func f = func::make(copy_1d, {{in, {point(x)}}}, {{intm, {x}}}, {.name = "producer"});
    func g = func::make(copy_1d, {{intm, {point(x)}}}, {{out, {x}}}, {.name = "consumer"});
    g.loops({x});
    f.compute_root();
    intm->store_at({&g, x});
    build_pipeline(ctx, {in}, {out});
  };
  EXPECT_DEATH(build(), "store_at of buffer intm: loop x of func consumer does not contain func producer");
}

TEST(builder_misuse, unproduced_buffer) {
  auto build = [] {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto orphan = buffer_expr::make(ctx, "orphan", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    var x(ctx, "x");
    func g = func::make(copy_1d, {{orphan, {point(x)}}}, {{out, {x}}}, {.name = "reader"});
    build_pipeline(ctx, {in}, {out});
  };
  EXPECT_DEATH(build(), "buffer orphan is read by func reader but is not a pipeline input");
}

TEST(builder_misuse, callback_arity) {
  auto build = [] {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    var x(ctx, "x");
    func f = func::make(copy_1d, {{in, {point(x)}}, {in, {point(x)}}}, {{out, {x}}}, {.name = "three"});
  };
  EXPECT_DEATH(build(), "the callback takes 2 buffers, but 2 inputs and 1 outputs were given \\(func three\\)");
}

// A 2-D pipeline with a 3x3 stencil, for the bad-buffer tests.
struct stencil_pipeline {
  node_context ctx;
  buffer_expr_ptr in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  buffer_expr_ptr out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x{ctx, "x"};
  var y{ctx, "y"};
  func f;
  pipeline p;

  stencil_pipeline() {
    f = func::make([](const buffer<const int>& a, const buffer<int>& b) { return test::box_sum<int>(a, b, 1, 1); },
                   {{in, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}}, {.name = "box"});
    f.loops({{y, 2}});
    in->dim(0).stride = sizeof(int);
    p = build_pipeline(ctx, {in}, {out});
  }

  // Runs the pipeline, returning evaluate's result and the failure message.
  std::pair<index_t, std::string> run(const raw_buffer* in_buf, const raw_buffer* out_buf) {
    eval_config config;
    std::string message;
    config.check_failed = [&](const expr& c) { message = to_string(c, p.body.symbols.get()); };
    eval_context context;
    context.config = &config;
    index_t result = p.evaluate({in_buf}, {out_buf}, context);
    return {result, message};
  }
};

TEST(bad_input, each_check_names_the_buffer) {
  stencil_pipeline s;
  buffer<int, 2> out({8, 6});
  out.allocate();
  for_each_element([](int* p) { *p = 12345; }, out);
  auto untouched = [&] {
    bool result = true;
    for_each_element([&](int* p) { result = result && *p == 12345; }, out);
    return result;
  };

  // Good input works.
  buffer<int, 2> good({10, 8});
  good.translate(-1, -1);
  good.allocate();
  for_each_element([](int* p) { *p = 1; }, good);
  EXPECT_EQ(s.run(&good, &out).first, 0);
  EXPECT_EQ(out(3, 3), 9);
  for_each_element([](int* p) { *p = 12345; }, out);

  // Null buffer.
  auto r = s.run(nullptr, &out);
  EXPECT_NE(r.first, 0);
  EXPECT_NE(r.second.find("in"), std::string::npos) << r.second;
  EXPECT_TRUE(untouched());

  // Wrong rank.
  buffer<int, 1> flat({100});
  flat.allocate();
  r = s.run(&flat, &out);
  EXPECT_NE(r.first, 0);
  EXPECT_EQ(r.second, "buffer_rank(in) == 2");
  EXPECT_TRUE(untouched());

  // Wrong element size.
  buffer<short, 2> shorts({10, 8});
  shorts.translate(-1, -1);
  shorts.allocate();
  r = s.run(&shorts, &out);
  EXPECT_NE(r.first, 0);
  EXPECT_EQ(r.second, "buffer_elem_size(in) == 4");
  EXPECT_TRUE(untouched());

  // Unallocated.
  buffer<int, 2> unallocated({10, 8});
  unallocated.translate(-1, -1);
  r = s.run(&unallocated, &out);
  EXPECT_NE(r.first, 0);
  EXPECT_NE(r.second.find("buffer_at(in) != 0"), std::string::npos) << r.second;
  EXPECT_TRUE(untouched());

  // Too small in each dimension and direction.
  for (int d = 0; d < 2; ++d) {
    for (int side = 0; side < 2; ++side) {
      buffer<int, 2> small({10, 8});
      small.translate(-1, -1);
      small.mutable_dim(d).set_bounds(small.dim(d).min() + (side == 0), small.dim(d).max() - (side == 1));
      small.allocate();
      r = s.run(&small, &out);
      EXPECT_NE(r.first, 0);
      const std::string expected = (side == 0 ? "buffer_min(in, " : "buffer_max(in, ") + std::to_string(d) + ")";
      EXPECT_NE(r.second.find(expected), std::string::npos) << r.second;
      EXPECT_TRUE(untouched());
    }
  }

  // A declared constraint (dim 0 is dense) violated.
  buffer<int, 2> transposed({8, 10});
  transposed.allocate();
  std::swap(transposed.mutable_dim(0), transposed.mutable_dim(1));
  transposed.translate(-1, -1);
  r = s.run(&transposed, &out);
  EXPECT_NE(r.first, 0);
  EXPECT_EQ(r.second, "buffer_stride(in, 0) == 4");
  EXPECT_TRUE(untouched());

  // A bad output.
  buffer<int, 1> flat_out({8});
  flat_out.allocate();
  r = s.run(&good, &flat_out);
  EXPECT_NE(r.first, 0);
  EXPECT_EQ(r.second, "buffer_rank(out) == 2");
}

TEST(bad_input, default_message_names_buffer_and_dimension) {
  stencil_pipeline s;
  buffer<int, 2> out({8, 6});
  out.allocate();
  buffer<int, 2> small({9, 8});
  small.translate(-1, -1);
  small.allocate();
  testing::internal::CaptureStderr();
  EXPECT_NE(s.p.evaluate({&small}, {&out}), 0);
  std::string message = testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("check failed"), std::string::npos) << message;
  // The condition names the buffers and the dimension; the values of both sides follow.
  EXPECT_NE(message.find("buffer_max(out, 0)"), std::string::npos) << message;
  EXPECT_NE(message.find("buffer_max(in, 0)"), std::string::npos) << message;
  EXPECT_NE(message.find("buffer_max(out, 0) = 7"), std::string::npos) << message;
  EXPECT_NE(message.find("buffer_max(in, 0) - 1 = 6"), std::string::npos) << message;
}

TEST(bad_input, callback_failure_stops_the_pipeline) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  int consumer_calls = 0;
  func f =
      func::make([](const buffer<const int>&, const buffer<int>& b) -> index_t { return b.dim(0).min() >= 4 ? 17 : 0; },
                 {{in, {point(x)}}}, {{intm, {x}}}, {.name = "fails_at_4"});
  func g = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) {
        ++consumer_calls;
        return copy_1d(a, b);
      },
      {{intm, {point(x)}}}, {{out, {x}}}, {.name = "consumer"});
  g.loops({x});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> in_buf({10}), out_buf({10});
  in_buf.allocate();
  out_buf.allocate();
  int failures = 0;
  eval_config config;
  config.call_failed = [&](const call_stmt* op) {
    ++failures;
    EXPECT_EQ(op->attrs.name, "fails_at_4");
  };
  eval_context context;
  context.config = &config;
  EXPECT_EQ(p.evaluate({&in_buf}, {&out_buf}, context), 17);
  EXPECT_EQ(failures, 1);
  EXPECT_EQ(consumer_calls, 4);
}

// in is read by two funcs, each into its own output (a copy, and a sum of 3 neighbours): what
// is needed of in depends on which outputs are empty, in selects, and its bounds checks name that
// condition once, as the symbol in.unread, instead of repeating it in each. A bad input still
// fails with a message naming the buffer and the dimension; an input that only an empty output
// would read is not checked.
TEST(bad_input, bounds_checks_of_an_input_of_two_outputs) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out1 = buffer_expr::make(ctx, "out1", 1, sizeof(int));
  auto out2 = buffer_expr::make(ctx, "out2", 1, sizeof(int));
  var x(ctx, "x");
  func f1 = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = a(i);
        return 0;
      },
      {{in, {point(x)}}}, {{out1, {x}}}, {.name = "copy"});
  func f2 = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = a(i - 1) + a(i) + a(i + 1);
        return 0;
      },
      {{in, {bounds(x - 1, x + 1)}}}, {{out2, {x}}}, {.name = "sum3"});
  pipeline p = build_pipeline(ctx, {in}, {out1, out2});
  const std::string program = to_string(p.body, p.body.symbols.get());
  std::size_t definitions = 0;
  for (std::size_t at = program.find("in.unread = "); at != std::string::npos;
       at = program.find("in.unread = ", at + 1)) {
    ++definitions;
  }
  EXPECT_EQ(definitions, 1) << program;
  EXPECT_NE(program.find("|| in.unread)"), std::string::npos) << program;

  auto run = [&](const raw_buffer* in_buf, const raw_buffer* o1, const raw_buffer* o2) {
    eval_config config;
    std::string message;
    config.check_failed = [&](const expr& c) { message = to_string(c, p.body.symbols.get()); };
    eval_context context;
    context.config = &config;
    const index_t result = p.evaluate({in_buf}, {o1, o2}, context);
    return std::make_pair(result, message);
  };
  buffer<int, 1> good({12}), small({10}), o1({10}), o2({10}), none({0});
  good.translate(-1);
  for (auto* b : {&good, &small, &o1, &o2}) b->allocate();
  for (index_t i = -1; i <= 10; ++i) good(i) = static_cast<int>(i * i);
  for (index_t i = 0; i <= 9; ++i) small(i) = static_cast<int>(i);

  auto r = run(&good, &o1, &o2);
  ASSERT_EQ(r.first, 0) << r.second;
  for (index_t i = 0; i <= 9; ++i) {
    EXPECT_EQ(o1(i), i * i);
    EXPECT_EQ(o2(i), (i - 1) * (i - 1) + i * i + (i + 1) * (i + 1));
  }
  // The sum of neighbours needs in(-1) and in(10). The default message shows the value of
  // in.unread too.
  r = run(&small, &o1, &o2);
  EXPECT_NE(r.first, 0);
  EXPECT_NE(r.second.find("buffer_min(in, 0)"), std::string::npos) << r.second;
  EXPECT_NE(r.second.find("in.unread"), std::string::npos) << r.second;
  testing::internal::CaptureStderr();
  EXPECT_NE(p.evaluate({&small}, {&o1, &o2}), 0);
  const std::string message = testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("buffer_min(in, 0) = 0"), std::string::npos) << message;
  EXPECT_NE(message.find("in.unread = 0"), std::string::npos) << message;
  // Without the sum, the copy needs only in(0 .. 9); with both outputs empty, nothing (an empty
  // input without memory will do).
  r = run(&small, &o1, &none);
  EXPECT_EQ(r.first, 0) << r.second;
  for (index_t i = 0; i <= 9; ++i) EXPECT_EQ(o1(i), i);
  r = run(&none, &none, &none);
  EXPECT_EQ(r.first, 0) << r.second;
  r = run(&none, &none, &o2);
  EXPECT_NE(r.first, 0);
}

}  // namespace
}  // namespace slinky
