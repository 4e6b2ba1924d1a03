// Failure behaviour: builder misuse is reported with the names of the funcs and buffers
// involved (in release builds too), and bad buffers given to a built pipeline fail a check that
// names the buffer and dimension, make evaluate return non-zero, and touch nothing.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <thread>

#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"
#include "test_funcs.h"

namespace slinky {
namespace {

index_t copy_1d(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t i = out.dim(0).min(); i <= out.dim(0).max(); ++i) out(i) = in(i);
  return 0;
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

// Each misuse of the builder: a graph (or a mistake made describing it) and the message that
// reports it. Each case is run twice: by default it aborts with the message; under a
// builder_errors it returns with the message collected and nothing built.
struct misuse_case {
  const char* name;
  // Describes the graph and builds it (if it gets that far), returning what build_pipeline did.
  pipeline (*build)();
  // A regular expression the message matches.
  const char* message;
};

pipeline cycle() {
  node_context ctx;
  auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(copy_1d, {{a, {point(x)}}}, {{b, {x}}}, {.name = "f"});
  func g = func::make(copy_1d, {{b, {point(x)}}}, {{a, {x}}}, {.name = "g"});
  func h = func::make(copy_1d, {{b, {point(x)}}}, {{out, {x}}}, {.name = "h"});
  return build_pipeline(ctx, {}, {out});
}

pipeline loop_over_a_variable_of_no_output() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x"), z(ctx, "z");
  func f = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}}, {.name = "f"});
  f.loops({{z, 1}});
  return build_pipeline(ctx, {in}, {out});
}

pipeline buffer_produced_twice() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}}, {.name = "first"});
  func g = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}}, {.name = "second"});
  // Reported by build_pipeline, where the buffer has its name.
  return build_pipeline(ctx, {in}, {out});
}

// (Allowed for a pipeline input or a constant, which is then read whole in the missing dims; not
// for a buffer a func produces.)
pipeline bounds_shorter_than_the_rank() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func f = func::make_copy({in, {point(x), point(y)}}, {t, {x, y}});
  func g = func::make(copy_1d, {{t, {point(x)}}}, {{out, {x}}}, {.name = "flat"});
  return build_pipeline(ctx, {in}, {out});
}

// (Fewer variables than the rank are allowed for a call: the trailing dims are computed whole.)
pipeline output_dims_of_wrong_rank() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func f = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x, y}}}, {.name = "long_dims"});
  return build_pipeline(ctx, {in}, {out});
}

// in -> producer -> intm -> consumer -> out, consumer looping over x; `schedule` places the
// producer or its buffer.
template <typename Schedule>
pipeline producer_consumer(const Schedule& schedule) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x"), z(ctx, "z");
  func f = func::make(copy_1d, {{in, {point(x)}}}, {{intm, {x}}}, {.name = "producer"});
  func g = func::make(copy_1d, {{intm, {point(x)}}}, {{out, {x}}}, {.name = "consumer"});
  g.loops({x});
  schedule(f, g, intm, x, z);
  return build_pipeline(ctx, {in}, {out});
}

pipeline compute_at_missing_loop() {
  return producer_consumer([](func& f, func& g, buffer_expr_ptr&, var, var z) { f.compute_at({&g, z}); });
}

pipeline compute_at_loop_of_no_var() {
  return producer_consumer([](func& f, func& g, buffer_expr_ptr&, var, var) { f.compute_at({&g, var()}); });
}

pipeline compute_at_own_loop() {
  return producer_consumer([](func& f, func&, buffer_expr_ptr&, var x, var) {
    f.loops({x});
    f.compute_at({&f, x});
  });
}

pipeline compute_at_a_func_not_in_the_pipeline() {
  func stranger;
  return producer_consumer([&](func& f, func&, buffer_expr_ptr&, var x, var) { f.compute_at({&stranger, x}); });
}

pipeline store_at_a_func_not_in_the_pipeline() {
  func stranger;
  return producer_consumer([&](func&, func&, buffer_expr_ptr& intm, var, var) { intm->store_at({&stranger, var()}); });
}

pipeline store_at_loop_that_does_not_contain_producer() {
  return producer_consumer([](func& f, func& g, buffer_expr_ptr& intm, var x, var) {
    f.compute_root();
    intm->store_at({&g, x});
  });
}

pipeline compute_at_loop_that_cannot_contain() {
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
  return build_pipeline(ctx, {in}, {out1, out2});
}

pipeline output_computed_in_a_loop() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out1 = buffer_expr::make(ctx, "out1", 1, sizeof(int));
  auto out2 = buffer_expr::make(ctx, "out2", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(copy_1d, {{in, {point(x)}}}, {{out1, {x}}}, {.name = "first"});
  func g = func::make(copy_1d, {{out1, {point(x)}}}, {{out2, {x}}}, {.name = "second"});
  g.loops({x});
  f.compute_at({&g, x});
  return build_pipeline(ctx, {in}, {out1, out2});
}

pipeline unproduced_buffer() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto orphan = buffer_expr::make(ctx, "orphan", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func g = func::make(copy_1d, {{orphan, {point(x)}}}, {{out, {x}}}, {.name = "reader"});
  return build_pipeline(ctx, {in}, {out});
}

pipeline unproduced_output() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  return build_pipeline(ctx, {in}, {out});
}

pipeline input_and_output() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(copy_1d, {{in, {point(x)}}}, {{in, {x}}}, {.name = "f"});
  return build_pipeline(ctx, {in}, {in});
}

pipeline null_input() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}}, {.name = "f"});
  return build_pipeline(ctx, {in, buffer_expr_ptr()}, {out});
}

pipeline null_output() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  return build_pipeline(ctx, {in}, {buffer_expr_ptr()});
}

pipeline input_without_a_buffer() {
  node_context ctx;
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(copy_1d, {{buffer_expr_ptr(), {point(x)}}}, {{out, {x}}}, {.name = "bufferless"});
  return build_pipeline(ctx, {}, {out});
}

pipeline output_without_a_buffer() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make([](const buffer<const int>&, const buffer<int>&, const buffer<int>&) -> index_t { return 0; },
                      {{in, {point(x)}}}, {{out, {x}}, {buffer_expr_ptr(), {x}}}, {.name = "two_outputs"});
  return build_pipeline(ctx, {in}, {out});
}

pipeline callback_arity() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(copy_1d, {{in, {point(x)}}, {in, {point(x)}}}, {{out, {x}}}, {.name = "three"});
  return build_pipeline(ctx, {in}, {out});
}

pipeline null_constant() {
  node_context ctx;
  auto c = buffer_expr::make_constant(ctx, "table", const_raw_buffer_ptr());
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(copy_1d, {{c, {point(x)}}}, {{out, {x}}}, {.name = "f"});
  return build_pipeline(ctx, {}, {out});
}

pipeline concat_bounds_miscounted() {
  node_context ctx;
  auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make_concat({a, b}, {out, {x}}, 0, {0, 4});
  return build_pipeline(ctx, {a, b}, {out});
}

pipeline negative_element_size() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, -4);
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make_copy({in, {point(x)}}, {out, {x}});
  return build_pipeline(ctx, {in}, {out});
}

// A copy may leave out the variables of the dims its sources slice (output_slice), and only those.
// Alone, a slices one dim of three, and the output has one variable: a dim has none. With b, which
// slices another dim, the sources do not slice the same dims.
pipeline sliced_copy_output_dims(bool two_sources) {
  node_context ctx;
  auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 3, sizeof(int));
  var x(ctx, "x");
  func::input ia{a, {point(x)}, {}, {}, {expr(), 0}};
  func::input ib{b, {point(x)}, {}, {}, {expr(), expr(), 1}};
  func f = two_sources ? func::make_copy({ia, ib}, {out, {x}}) : func::make_copy(ia, {out, {x}});
  return build_pipeline(ctx, {a, b}, {out});
}
pipeline sliced_copy_output_dims_miscounted() { return sliced_copy_output_dims(false); }
pipeline sliced_copy_output_dims_differ() { return sliced_copy_output_dims(true); }

const misuse_case misuse_cases[] = {
    {"cycle", cycle, "cycle: func (f|g)"},
    {"loop_over_a_variable_of_no_output", loop_over_a_variable_of_no_output,
     "func f loops over z, which indexes none of its outputs"},
    {"buffer_produced_twice", buffer_produced_twice, "buffer out is produced twice: by func first and by func second"},
    {"bounds_shorter_than_the_rank", bounds_shorter_than_the_rank,
     "func flat: the bounds of input t have 1 dimensions, but t has rank 2"},
    {"output_dims_of_wrong_rank", output_dims_of_wrong_rank,
     "func long_dims: output out is indexed by 2 variables, but has rank 1"},
    {"compute_at_missing_loop", compute_at_missing_loop,
     "compute_at of func producer names loop z of func consumer, which has no such loop"},
    {"compute_at_loop_of_no_var", compute_at_loop_of_no_var,
     "compute_at of func producer names no loop of func consumer \\(a loop_id without a var"},
    {"compute_at_own_loop", compute_at_own_loop, "compute_at of func producer names one of its own loops"},
    {"compute_at_a_func_not_in_the_pipeline", compute_at_a_func_not_in_the_pipeline,
     "compute_at of func producer names a loop of a func that is not part of the pipeline"},
    {"store_at_a_func_not_in_the_pipeline", store_at_a_func_not_in_the_pipeline,
     "store_at of buffer intm names the location of a func that is not part of the pipeline"},
    {"store_at_loop_that_does_not_contain_producer", store_at_loop_that_does_not_contain_producer,
     "store_at of buffer intm: loop x of func consumer does not contain func producer"},
    {"compute_at_loop_that_cannot_contain", compute_at_loop_that_cannot_contain,
     "loop x of func looped cannot contain func producer, because its consumer other"},
    {"output_computed_in_a_loop", output_computed_in_a_loop,
     "compute_at of func first: func first produces a pipeline output, which must be computed at the root"},
    {"unproduced_buffer", unproduced_buffer, "buffer orphan is read by func reader but is not a pipeline input"},
    {"unproduced_output", unproduced_output, "pipeline output out is not produced by any func"},
    {"input_and_output", input_and_output, "buffer in is both an input and an output"},
    {"null_input", null_input, "a pipeline input is null"},
    {"null_output", null_output, "a pipeline output is null"},
    {"input_without_a_buffer", input_without_a_buffer, "func bufferless has an input without a buffer"},
    {"output_without_a_buffer", output_without_a_buffer, "func two_outputs: an output has no buffer"},
    {"callback_arity", callback_arity,
     "the callback takes 2 buffers, but 2 inputs and 1 outputs were given \\(func three\\)"},
    {"null_constant", null_constant, "make_constant: the constant buffer of symbol [0-9]+ is null"},
    {"concat_bounds_miscounted", concat_bounds_miscounted, "make_concat: expected 3 bounds for 2 inputs, got 2"},
    {"negative_element_size", negative_element_size, "buffer in has a negative element size \\(-4\\)"},
    {"sliced_copy_output_dims_miscounted", sliced_copy_output_dims_miscounted,
     "func copy to out: output out is indexed by 1 variables, but has rank 3 \\(its inputs' output_slice slices 1 "
     "dims\\)"},
    {"sliced_copy_output_dims_differ", sliced_copy_output_dims_differ,
     "output out is indexed by 1 variables, but has rank 3 \\(every source must slice the same dims\\)"},
};

class builder_misuse : public testing::TestWithParam<misuse_case> {};

INSTANTIATE_TEST_SUITE_P(each, builder_misuse, testing::ValuesIn(misuse_cases),
                         [](const testing::TestParamInfo<misuse_case>& i) { return std::string(i.param.name); });

// By default, misuse aborts with its message.
TEST_P(builder_misuse, aborts_with_its_message) { EXPECT_DEATH(GetParam().build(), GetParam().message); }

// Under a builder_errors, it is collected instead: nothing aborts, nothing is built, the first
// message is kept (later misuse in the same scope does not replace it).
TEST_P(builder_misuse, is_collected_by_builder_errors) {
  builder_errors errors;
  EXPECT_FALSE(errors.failed());
  pipeline p = GetParam().build();
  ASSERT_TRUE(errors.failed());
  EXPECT_TRUE(std::regex_search(errors.message(), std::regex(GetParam().message))) << errors.message();
  EXPECT_FALSE(p.body.defined());
  const std::string first = errors.message();
  GetParam().build();
  EXPECT_EQ(errors.message(), first);
}

TEST(builder_errors, nest_and_leave_other_threads_alone) {
  builder_errors outer;
  {
    builder_errors inner;
    EXPECT_EQ(builder_errors::current(), &inner);
    unproduced_output();
    EXPECT_TRUE(inner.failed());
  }
  EXPECT_EQ(builder_errors::current(), &outer);
  EXPECT_FALSE(outer.failed());
  // Another thread has no builder_errors: its misuse would abort.
  builder_errors* seen = &outer;
  std::thread([&] { seen = builder_errors::current(); }).join();
  EXPECT_EQ(seen, nullptr);
}

TEST(builder_errors, a_correct_graph_builds_as_usual) {
  builder_errors errors;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  EXPECT_FALSE(errors.failed());
  EXPECT_TRUE(errors.message().empty());
  buffer<int, 1> in_buf({4}), out_buf({4});
  in_buf.allocate();
  out_buf.allocate();
  for (index_t i = 0; i < 4; ++i) in_buf(i) = static_cast<int>(i * 3);
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}), 0);
  for (index_t i = 0; i < 4; ++i) EXPECT_EQ(out_buf(i), i * 3);
}

TEST(builder_errors, build_after_earlier_misuse_builds_nothing) {
  // Misuse while describing the graph is remembered: the build that follows does nothing.
  builder_errors errors;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func wrong = func::make(copy_1d, {{in, {point(x)}}, {in, {point(x)}}}, {{out, {x}}}, {.name = "three"});
  EXPECT_FALSE(wrong.defined());
  func right = func::make(copy_1d, {{in, {point(x)}}}, {{out, {x}}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  EXPECT_FALSE(p.body.defined());
  EXPECT_NE(errors.message().find("func three"), std::string::npos);
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
      std::string expected = side == 0 ? "buffer_min(in, " : "buffer_max(in, ";
      expected += std::to_string(d);
      expected += ")";
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
  // (A declared stride constrains only dims of more than one element.)
  EXPECT_EQ(r.second, "buffer_max(in, 0) <= buffer_min(in, 0) || buffer_stride(in, 0) == 4");
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
