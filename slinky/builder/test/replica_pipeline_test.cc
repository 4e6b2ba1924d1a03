// define_replica_pipeline's round trip: the replicas of replica_pipelines.h, printed at build time
// by replica_generate and compiled here, must build the same program as the originals (printed
// the same) and compute the same outputs. And the stand-in callback against a reference.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>

#include "replica_pipelines.h"
#include "slinky/builder/replica_pipeline.h"

namespace slinky {
namespace {

#include "replicas.inc"

std::string program_text(const pipeline& p) {
  std::ostringstream os;
  os << p.body;
  return os.str();
}

pipeline original(const char* name) {
  for (const replica_test::named_def& d : replica_test::all()) {
    if (std::string(d.name) != name) continue;
    node_context ctx;
    replica_test::graph_def g = d.make(ctx);
    return build_pipeline(ctx, g.args, g.inputs, g.outputs, g.lets, g.options);
  }
  ADD_FAILURE() << "no pipeline " << name;
  return pipeline();
}

template <typename T, std::size_t N>
void fill(buffer<T, N>& b, int seed) {
  b.allocate();
  std::size_t i = 0;
  for_each_element([&](T* x) { *x = static_cast<T>(seed + 37 * i++); }, b);
}

template <typename T, std::size_t N>
bool same(const buffer<T, N>& a, const buffer<T, N>& b) {
  return std::memcmp(a.base(), b.base(), a.size_bytes()) == 0;
}

TEST(replica_pipeline, stencil) {
  pipeline p = original("stencil"), q = replica_stencil();
  EXPECT_EQ(program_text(p), program_text(q));
  buffer<short, 2> in({18, 14});
  in.translate(-1, -1);
  fill(in, 1);
  buffer<short, 2> out_p({16, 12}), out_q({16, 12});
  fill(out_p, 0);
  fill(out_q, 5);
  ASSERT_EQ(p.evaluate({&in}, {&out_p}), 0);
  ASSERT_EQ(q.evaluate({&in}, {&out_q}), 0);
  EXPECT_TRUE(same(out_p, out_q));
}

TEST(replica_pipeline, multiple_outputs) {
  pipeline p = original("multiple_outputs"), q = replica_multiple_outputs();
  EXPECT_EQ(program_text(p), program_text(q));
  const index_t n = 2;
  // join reads b one row up (select(y > w, y - 1, y)): in needs a row above out.
  buffer<int, 2> in({12, 9});
  in.translate(0, -1);
  fill(in, 3);
  buffer<int, 2> out_p({10, 8}), out_q({10, 8});
  fill(out_p, 0);
  fill(out_q, 9);
  ASSERT_EQ(p.evaluate({&n, 1}, {&in}, {&out_p}), 0);
  ASSERT_EQ(q.evaluate({&n, 1}, {&in}, {&out_q}), 0);
  EXPECT_TRUE(same(out_p, out_q));
}

TEST(replica_pipeline, copies) {
  pipeline p = original("copies"), q = replica_copies();
  EXPECT_EQ(program_text(p), program_text(q));
  buffer<int, 2> in({8, 6}), in2({8, 2});
  fill(in, 1);
  fill(in2, 100);
  buffer<int, 2> out_p({6, 8}), out_q({6, 8});
  fill(out_p, 0);
  fill(out_q, 9);
  ASSERT_EQ(p.evaluate({&in, &in2}, {&out_p}), 0);
  ASSERT_EQ(q.evaluate({&in, &in2}, {&out_q}), 0);
  EXPECT_TRUE(same(out_p, out_q));
  // The pad (a constant 7) where in's crop does not reach: out(y, x) = padded(x, y) for y < 4.
  EXPECT_EQ(out_q(0, 0), 7);
  EXPECT_EQ(out_q(0, 1), in(1, 0));
}

TEST(replica_pipeline, constant_and_compute_at) {
  pipeline p = original("constant_and_compute_at"), q = replica_constant_and_compute_at();
  EXPECT_EQ(program_text(p), program_text(q));
  buffer<char, 1> in({14});
  in.translate(-2);
  fill(in, 1);
  buffer<char, 1> out_p({12}), out_q({12});
  fill(out_p, 0);
  fill(out_q, 9);
  ASSERT_EQ(p.evaluate({&in}, {&out_p}), 0);
  ASSERT_EQ(q.evaluate({&in}, {&out_q}), 0);
  EXPECT_TRUE(same(out_p, out_q));
}

// The stand-in: each output element is the XOR of the input elements in the declared region,
// within the input buffer.
TEST(replica_pipeline, handler_xors_the_declared_region) {
  node_context ctx;
  var x(ctx, "x");
  auto in_expr = buffer_expr::make(ctx, "in", 1, sizeof(int));
  buffer<int, 1> in({10}), out({10});
  in.allocate();
  out.allocate();
  for (index_t i = 0; i < 10; ++i) in(i) = static_cast<int>(i * 3 + 1);
  const buffer<const void>* ins[] = {reinterpret_cast<const buffer<const void>*>(static_cast<const raw_buffer*>(&in))};
  const buffer<void>* outs[] = {reinterpret_cast<const buffer<void>*>(static_cast<const raw_buffer*>(&out))};
  func::input fins[] = {{in_expr, {bounds(x - 1, x + 1)}}};
  std::vector<var> dims[] = {{x}};
  ASSERT_EQ(internal::replica_pipeline_handler(ins, outs, fins, dims), 0);
  for (index_t i = 0; i < 10; ++i) {
    int expected = 0;
    for (index_t j = std::max<index_t>(0, i - 1); j <= std::min<index_t>(9, i + 1); ++j) expected ^= in(j);
    EXPECT_EQ(out(i), expected) << i;
  }
}

// The source names the schedule and the options.
TEST(replica_pipeline, source_has_the_schedule) {
  node_context ctx;
  replica_test::graph_def g = replica_test::multiple_outputs(ctx);
  const std::string src = define_replica_pipeline(ctx, g.args, g.inputs, g.outputs, g.lets, g.options, "q");
  EXPECT_NE(src.find("auto q = []() -> ::slinky::pipeline {"), std::string::npos) << src;
  EXPECT_NE(src.find(".loops({{y, expr(4), expr(" + std::to_string(loop::parallel) + ")}, })"), std::string::npos)
      << src;
  EXPECT_NE(src.find("options.no_checks = false;"), std::string::npos) << src;
  EXPECT_NE(src.find("var n(ctx, \"n\");"), std::string::npos) << src;
}

}  // namespace
}  // namespace slinky
