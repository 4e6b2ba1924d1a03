// Compatibility tests for slinky/runtime/visualize.h and slinky/builder/replica_pipeline.h
// (docs/api.md; API_COMPAT sections 2.7 and 3.2): the declarations a client calls, used as a
// client of the original would use them. What the page and the source contain is ours.
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "slinky/base/span.h"
#include "slinky/builder/pipeline.h"
#include "slinky/builder/replica_pipeline.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/visualize.h"

namespace {

using namespace slinky;

index_t add_one(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t x = out.dim(0).begin(); x < out.dim(0).end(); ++x) out(x) = in(x) + 1;
  return 0;
}

TEST(compat_tools, visualize_both_overloads) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x"), n(ctx, "n");
  func f = func::make(add_one, {{in, {point(x)}}}, {{out, {x}}});
  f.loops({{x, 4}});
  pipeline p = build_pipeline(ctx, {n}, {in}, {out});
  buffer<int, 1> in_buf({16}), out_buf({16});
  in_buf.allocate();
  out_buf.allocate();
  const raw_buffer* inputs[] = {&in_buf};
  const raw_buffer* outputs[] = {&out_buf};
  const index_t args[] = {3};
  std::ostringstream a, b;
  visualize(a, p, args, inputs, outputs, &ctx);
  visualize(b, p, args, inputs, outputs);
  EXPECT_NE(a.str().find("<html"), std::string::npos);
  // f is alone in its loop, which runs as one call over all of out (docs/builder.md, "Loops that
  // need not exist").
  EXPECT_NE(a.str().find("\"calls\":1,"), std::string::npos);
  EXPECT_EQ(a.str(), b.str());
}

TEST(compat_tools, define_replica_pipeline_both_overloads) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(add_one, {{in, {point(x)}}}, {{out, {x}}});
  const std::string a = define_replica_pipeline(ctx, {in}, {out});
  const std::string b = define_replica_pipeline(ctx, {}, {in}, {out}, {}, build_options{}, "p");
  EXPECT_NE(a.find("auto p = "), std::string::npos) << a;
  EXPECT_EQ(a, b);
  build_options options;
  options.no_checks = true;
  const std::string c = define_replica_pipeline(ctx, {in}, {out}, options, "replica");
  EXPECT_NE(c.find("auto replica = "), std::string::npos) << c;
  EXPECT_NE(c.find("options.no_checks = true;"), std::string::npos) << c;
}

TEST(compat_tools, replica_pipeline_handler) {
  node_context ctx;
  var x(ctx, "x");
  auto in_expr = buffer_expr::make(ctx, "in", 1, sizeof(std::uint8_t));
  buffer<std::uint8_t, 1> in({4}), out({4});
  in.allocate();
  out.allocate();
  for (index_t i = 0; i < 4; ++i) in(i) = static_cast<std::uint8_t>(1 << i);
  const buffer<const void>* ins[] = {reinterpret_cast<const buffer<const void>*>(static_cast<const raw_buffer*>(&in))};
  const buffer<void>* outs[] = {reinterpret_cast<const buffer<void>*>(static_cast<const raw_buffer*>(&out))};
  func::input fins[] = {{in_expr, {bounds(0, x)}}};
  std::vector<var> dims[] = {{x}};
  ASSERT_EQ(internal::replica_pipeline_handler(ins, outs, fins, dims), 0);
  // out(x) is the XOR of in(0..x): 1, 3, 7, 15.
  for (index_t i = 0; i < 4; ++i) EXPECT_EQ(out(i), (1 << (i + 1)) - 1) << i;
}

}  // namespace
