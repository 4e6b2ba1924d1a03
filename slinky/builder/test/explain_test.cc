// explain_pipeline: the key facts of its account for pipelines of the benchmarks' kinds (where
// funcs are computed, what slides and folds, which copies are removed, parallel and pipelined
// loops), each checked against the program build_pipeline makes of the same graph.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "slinky/builder/explain.h"
#include "slinky/builder/pipeline.h"

namespace slinky {
namespace {

index_t no_op(const buffer<const int>&, const buffer<int>&) { return 0; }

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(explain, stencil_in_strips_slides_and_folds) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func mul = func::make(no_op, {{in, {point(x), point(y)}}}, {{intm, {x, y}}}, {.name = "mul"});
  func sum =
      func::make(no_op, {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}}, {.name = "sum"});
  sum.loops({{y, 16}});
  const std::string text = explain_pipeline(ctx, {in}, {out});
  EXPECT_TRUE(has(text, "- mul: computed at loop y of sum.")) << text;
  EXPECT_TRUE(has(text, "slides along loop y of sum in y")) << text;
  EXPECT_TRUE(has(text, "- sum: computed at the root")) << text;
  EXPECT_TRUE(has(text, "loop y, step 16, serial.")) << text;
  EXPECT_TRUE(has(text, "- intm: an intermediate produced by mul, stored at the root")) << text;
  EXPECT_TRUE(has(text, "dim 1 folds into a ring buffer of at most 18 elements")) << text;
  EXPECT_TRUE(has(text, "along loop y of sum")) << text;
  EXPECT_FALSE(has(text, "dim 0 folds")) << text;
  // The program agrees: intm is allocated with a fold factor in dim 1, outside the loop.
  std::ostringstream program;
  program << build_pipeline(ctx, {in}, {out}).body;
  EXPECT_TRUE(has(program.str(), "intm = allocate(")) << program.str();
}

TEST(explain, copies_removed_and_kept) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(no_op, {{in, {point(x)}}}, {{t, {x}}}, {.name = "f"});
  func c = func::make_copy({t, {point(x)}}, {out, {x}});
  const std::string text = explain_pipeline(ctx, {in}, {out});
  EXPECT_TRUE(has(text, "the copy from t is removed")) << text;
  EXPECT_TRUE(has(text, "- t: an intermediate produced by f")) << text;
  EXPECT_TRUE(has(text, "has no memory of its own")) << text;
  // Without aliasing, the copy is kept and t has memory of its own.
  build_options no_alias;
  no_alias.no_alias_buffers = true;
  const std::string kept = explain_pipeline(ctx, {in}, {out}, no_alias);
  EXPECT_TRUE(has(kept, "the copy from t is kept")) << kept;
  EXPECT_FALSE(has(kept, "has no memory of its own")) << kept;
}

// A copy whose destination is the view (of a pipeline input here, which no producer writes): the
// account names the destination as the view, not the source.
TEST(explain, copy_removed_destination_is_the_view) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func c = func::make_copy({in, {point(x)}}, {t, {x}});
  func f = func::make(no_op, {{t, {point(x)}}}, {{out, {x}}}, {.name = "f"});
  const std::string text = explain_pipeline(ctx, {in}, {out});
  EXPECT_TRUE(has(text, "the copy from in is removed: the destination t is a view of in")) << text;
  EXPECT_FALSE(has(text, "in is a view of the destination")) << text;
  EXPECT_TRUE(has(text, "a view of in")) << text;
  // The program agrees: t has no allocation of its own.
  std::ostringstream program;
  program << build_pipeline(ctx, {in}, {out}).body;
  EXPECT_FALSE(has(program.str(), "t = allocate(")) << program.str();
}

// The source is the view: written in place by its producer into the destination.
TEST(explain, copy_removed_source_is_the_view) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(no_op, {{in, {point(x)}}}, {{t, {x}}}, {.name = "f"});
  func c = func::make_copy({t, {point(x)}}, {out, {x}});
  const std::string text = explain_pipeline(ctx, {in}, {out});
  EXPECT_TRUE(has(text, "the copy from t is removed: t is a view of the destination")) << text;
  EXPECT_FALSE(has(text, "the destination out is a view")) << text;
}

// An intermediate moving with two nested loops folds along each in its own dimension.
TEST(explain, folds_along_two_loops) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func mul = func::make(no_op, {{in, {point(x), point(y)}}}, {{intm, {x, y}}}, {.name = "mul"});
  func add = func::make(no_op, {{intm, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "add"});
  add.loops({{x, 4}, {y, 2}});
  const std::string text = explain_pipeline(ctx, {in}, {out});
  EXPECT_TRUE(has(text, "dim 0 folds into a ring buffer of at most 4 elements")) << text;
  EXPECT_TRUE(has(text, "along loop x of add")) << text;
  EXPECT_TRUE(has(text, "dim 1 folds into a ring buffer of at most 2 elements")) << text;
  EXPECT_TRUE(has(text, "along loop y of add")) << text;
}

TEST(explain, parallel_and_pipelined_loops) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func mul = func::make(no_op, {{in, {point(x), point(y)}}}, {{intm, {x, y}}}, {.name = "mul"});
  func sum = func::make(no_op, {{intm, {point(x), bounds(y - 1, y + 1)}}}, {{out, {x, y}}}, {.name = "sum"});
  sum.loops({{y, 4, loop::parallel}});
  const std::string text = explain_pipeline(ctx, {in}, {out});
  EXPECT_TRUE(has(text, "loop y, step 4, parallel, pipelined (")) << text;
  EXPECT_TRUE(has(text, "slides along loop y of sum")) << text;
  EXPECT_TRUE(has(text, "- in: a pipeline input.")) << text;
  EXPECT_TRUE(has(text, "- out: a pipeline output.")) << text;
  // Elementwise: nothing slides, nothing is pipelined, intm is stored in each iteration.
  node_context ctx2;
  auto in2 = buffer_expr::make(ctx2, "in", 1, sizeof(int));
  auto t2 = buffer_expr::make(ctx2, "t", 1, sizeof(int));
  auto out2 = buffer_expr::make(ctx2, "out", 1, sizeof(int));
  var x2(ctx2, "x");
  func f = func::make(no_op, {{in2, {point(x2)}}}, {{t2, {x2}}}, {.name = "f"});
  func g = func::make(no_op, {{t2, {point(x2)}}}, {{out2, {x2}}}, {.name = "g"});
  g.loops({{x2, 8, loop::parallel}});
  const std::string text2 = explain_pipeline(ctx2, {in2}, {out2});
  EXPECT_TRUE(has(text2, "loop x, step 8, parallel.")) << text2;
  EXPECT_FALSE(has(text2, "slides")) << text2;
  EXPECT_TRUE(has(text2, "stored at loop x of g")) << text2;
  EXPECT_TRUE(has(text2, "not folded: allocated in each iteration")) << text2;
}

}  // namespace
}  // namespace slinky
