// visualize's pages for builder pipelines: elementwise in chunks, a stencil in strips (a ring
// buffer), a matrix product chain by rows, a padded copy, a parallel loop, buffers of 1 to 4
// dims (one transposed), and a chain of 120 funcs. Each pipeline runs for real first, counting its
// calls and copies (every call_stmt and copy_stmt the evaluator runs, including the builder's own,
// e.g. the call that fills a padded copy's border); the page must say it replays that many.
//
// With SLINKY_VISUALIZE_PAGES=dir, each test also writes dir/<name>.html and dir/<name>.json
// (the real run's count and the outputs' element counts), which check_visualize_pages.py loads
// in headless Chromium (CTest: slinky_builder_visualize_browser).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/builder/test/test_funcs.h"
#include "slinky/runtime/node_mutator.h"
#include "slinky/runtime/visualize.h"

namespace slinky {
namespace {

// The user's callbacks run (none must run while visualizing).
std::atomic<int> callbacks{0};

// Wraps every call and copy of a program so that it counts itself, then does its work.
class count_calls : public stmt_mutator {
  std::atomic<int>& n_;

public:
  explicit count_calls(std::atomic<int>& n) : n_(n) {}
  using stmt_mutator::visit;

  void visit(const call_stmt* op) override {
    std::atomic<int>& n = n_;
    call_stmt::callable impl = op->target;
    set_result(call_stmt::make(
        [&n, impl](const call_stmt* c, eval_context& ctx) -> index_t {
          ++n;
          return impl(c, ctx);
        },
        op->inputs, op->outputs, op->scalars, op->attrs));
  }
  void visit(const copy_stmt* op) override {
    std::atomic<int>& n = n_;
    copy_stmt::callable impl = op->impl;
    set_result(copy_stmt::make(
        [&n, impl](const raw_buffer& src, const raw_buffer& dst, const raw_buffer& pad) {
          ++n;
          impl(src, dst, pad);
        },
        op->src, op->src_x, op->dst, op->dst_x, op->pad));
  }
};

template <typename Fn>
auto counted(Fn f) {
  return [f](const buffer<const int>& in, const buffer<int>& out) -> index_t {
    ++callbacks;
    return test::elementwise<int>(in, out, f);
  };
}

copy_stmt::callable counted_copy() {
  return [](const raw_buffer& src, const raw_buffer& dst, const raw_buffer& pad) {
    ++callbacks;
    copy(src, dst, pad);
  };
}

// Writes the page and what the browser test checks, when SLINKY_VISUALIZE_PAGES is set; checks
// what can be checked without a browser.
void write_page(const std::string& name, const std::string& html, int calls,
                const std::vector<std::pair<std::string, std::size_t>>& outputs) {
  EXPECT_NE(html.find("\"calls\":" + std::to_string(calls) + ","), std::string::npos) << name;
  EXPECT_NE(html.find("\"failed\":false"), std::string::npos) << name;
  EXPECT_EQ(html.find("http"), std::string::npos) << name;
  const char* dir = std::getenv("SLINKY_VISUALIZE_PAGES");
  if (!dir || !*dir) return;
  std::ofstream page(std::string(dir) + "/" + name + ".html");
  page << html;
  std::ofstream expect(std::string(dir) + "/" + name + ".json");
  expect << "{\"calls\": " << calls << ", \"outputs\": {";
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    expect << (i > 0 ? ", " : "") << "\"" << outputs[i].first << "\": " << outputs[i].second;
  }
  expect << "}}\n";
  ASSERT_TRUE(page && expect) << "cannot write to " << dir;
}

// Runs p for real (with pool, if given), counting its callbacks, then writes its page.
void run_and_visualize(const std::string& name, const pipeline& p, node_context& ctx, pipeline::buffers ins,
                       pipeline::buffers outs, const std::vector<std::string>& output_names,
                       thread_pool* pool = nullptr) {
  callbacks = 0;
  std::atomic<int> calls{0};
  pipeline counting = p;
  counting.body = named_stmt(count_calls(calls).mutate(p.body), p.body.symbols);
  eval_config config;
  config.thread_pool = pool;
  eval_context c;
  c.config = &config;
  ASSERT_EQ(counting.evaluate(ins, outs, c), 0) << name;
  ASSERT_GT(callbacks, 0);
  ASSERT_GE(calls, callbacks);

  callbacks = 0;
  std::ostringstream html;
  visualize(html, p, ins, outs, &ctx);
  EXPECT_EQ(callbacks, 0) << "visualize ran a callback";
  std::vector<std::pair<std::string, std::size_t>> outputs;
  for (std::size_t i = 0; i < outs.size(); ++i) outputs.push_back({output_names[i], outs[i]->elem_count()});
  write_page(name, html.str(), calls, outputs);
}

TEST(visualize_pages, elementwise) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func mul = func::make(counted([](int v) { return v * 2; }), {{in, {point(x)}}}, {{intm, {x}}}, {.name = "mul"});
  func add = func::make(counted([](int v) { return v + 1; }), {{intm, {point(x)}}}, {{out, {x}}}, {.name = "add"});
  add.loops({{x, 8}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> in_buf({64}), out_buf({64});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 0);
  run_and_visualize("elementwise", p, ctx, {&in_buf}, {&out_buf}, {"out"});
  EXPECT_EQ(out_buf(5), in_buf(5) * 2 + 1);
}

index_t sum3x3(const buffer<const int>& in, const buffer<int>& out) {
  ++callbacks;
  return test::box_sum<int>(in, out, 1, 1);
}

TEST(visualize_pages, stencil_folded) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func mul =
      func::make(counted([](int v) { return v * 2; }), {{in, {point(x), point(y)}}}, {{intm, {x, y}}}, {.name = "mul"});
  func sum =
      func::make(sum3x3, {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}}, {.name = "sum3x3"});
  sum.loops({{y, 4}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({26, 34}), out_buf({24, 32});
  in_buf.translate(-1, -1);
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 1);
  run_and_visualize("stencil_folded", p, ctx, {&in_buf}, {&out_buf}, {"out"});
  // intm is a ring buffer of 6 rows of 26 (4 rows per strip and 2 of overlap), not 34 rows.
  std::ostringstream html;
  visualize(html, p, {&in_buf}, {&out_buf}, &ctx);
  EXPECT_NE(html.str().find("{\"name\":\"intm\",\"elem\":4,\"size\":156,\"kind\":\"allocation\",\"base\":0,"
                            "\"dims\":[[26,4,0],[6,104,1]]}"),
            std::string::npos)
      << html.str();
}

index_t matmul(const buffer<const int>& a, const buffer<const int>& b, const buffer<int>& c) {
  ++callbacks;
  for (index_t i = c.dim(1).begin(); i < c.dim(1).end(); ++i) {
    for (index_t j = c.dim(0).begin(); j < c.dim(0).end(); ++j) {
      int sum = 0;
      for (index_t k = a.dim(0).begin(); k < a.dim(0).end(); ++k) sum += a(k, i) * b(j, k);
      c(j, i) = sum;
    }
  }
  return 0;
}

TEST(visualize_pages, matmul) {
  node_context ctx;
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
  auto c = buffer_expr::make(ctx, "c", 2, sizeof(int));
  auto ab = buffer_expr::make(ctx, "ab", 2, sizeof(int));
  auto abc = buffer_expr::make(ctx, "abc", 2, sizeof(int));
  var i(ctx, "i"), j(ctx, "j");
  const interval_expr k_ab = bounds(buffer_min(a->sym(), 0), buffer_max(a->sym(), 0));
  const interval_expr k_abc = bounds(buffer_min(b->sym(), 0), buffer_max(b->sym(), 0));
  func f = func::make(matmul, {{a, {k_ab, point(i)}}, {b, {point(j), k_ab}}}, {{ab, {j, i}}}, {.name = "ab"});
  func g = func::make(matmul, {{ab, {k_abc, point(i)}}, {c, {point(j), k_abc}}}, {{abc, {j, i}}}, {.name = "abc"});
  g.loops({{i, 2}});
  pipeline p = build_pipeline(ctx, {a, b, c}, {abc});
  buffer<int, 2> a_buf({12, 12}), b_buf({12, 12}), c_buf({12, 12}), out({12, 12});
  for (auto* buf : {&a_buf, &b_buf, &c_buf, &out}) buf->allocate();
  test::fill_random(a_buf, 5);
  test::fill_random(b_buf, 6);
  test::fill_random(c_buf, 7);
  run_and_visualize("matmul", p, ctx, {&a_buf, &b_buf, &c_buf}, {&out}, {"abc"});
}

TEST(visualize_pages, padded_copy) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  auto zero = buffer_expr::make_scalar<int>(ctx, "zero", 0);
  var x(ctx, "x"), y(ctx, "y");
  func f =
      func::make(counted([](int v) { return v * 3; }), {{in, {point(x), point(y)}}}, {{t, {x, y}}}, {.name = "triple"});
  // out is t inside [0, 15] x [0, 11] and 0 in a border of 2 around it.
  func pad = func::make_copy({t, {point(x), point(y)}, {bounds(0, 15), bounds(0, 11)}}, {out, {x, y}}, {zero, {}},
                             counted_copy());
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({16, 12}), out_buf({20, 16});
  out_buf.translate(-2, -2);
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 2);
  // t aliases the inside of out: the copy becomes a call that fills the border.
  run_and_visualize("padded_copy", p, ctx, {&in_buf}, {&out_buf}, {"out"});
  EXPECT_EQ(out_buf(-2, -2), 0);
  EXPECT_EQ(out_buf(3, 4), in_buf(3, 4) * 3);
  // Without aliasing, t is an allocation of its own and the copy runs.
  build_options no_alias;
  no_alias.no_alias_buffers = true;
  pipeline q = build_pipeline(ctx, {in}, {out}, no_alias);
  run_and_visualize("padded_copy_kept", q, ctx, {&in_buf}, {&out_buf}, {"out"});
  EXPECT_EQ(out_buf(-2, -2), 0);
  EXPECT_EQ(out_buf(3, 4), in_buf(3, 4) * 3);
}

TEST(visualize_pages, parallel) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func a =
      func::make(counted([](int v) { return v * 2; }), {{in, {point(x), point(y)}}}, {{intm, {x, y}}}, {.name = "a"});
  func b =
      func::make(counted([](int v) { return v + 1; }), {{intm, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "b"});
  b.loops({{y, 2, loop::parallel}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({16, 32}), out_buf({16, 32});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 8);
  thread_pool_impl pool(2);
  run_and_visualize("parallel", p, ctx, {&in_buf}, {&out_buf}, {"out"}, &pool);
}

// Buffers of 1, 3 and 4 dims; the 3-D input is stored transposed (dim 2 innermost); loops over
// dims 2 and 3, not only over dim 1.
TEST(visualize_pages, dims_1_to_4) {
  node_context ctx;
  auto in1 = buffer_expr::make(ctx, "in1", 1, sizeof(int));
  auto in3 = buffer_expr::make(ctx, "in3", 3, sizeof(int));
  auto in4 = buffer_expr::make(ctx, "in4", 4, sizeof(int));
  auto t1 = buffer_expr::make(ctx, "t1", 1, sizeof(int));
  auto t3 = buffer_expr::make(ctx, "t3", 3, sizeof(int));
  auto t4 = buffer_expr::make(ctx, "t4", 4, sizeof(int));
  auto out1 = buffer_expr::make(ctx, "out1", 1, sizeof(int));
  auto out3 = buffer_expr::make(ctx, "out3", 3, sizeof(int));
  auto out4 = buffer_expr::make(ctx, "out4", 4, sizeof(int));
  var x(ctx, "x"), y(ctx, "y"), z(ctx, "z"), w(ctx, "w");
  auto twice = counted([](int v) { return v * 2; });
  auto plus1 = counted([](int v) { return v + 1; });
  func f1 = func::make(twice, {{in1, {point(x)}}}, {{t1, {x}}}, {.name = "f1"});
  func g1 = func::make(plus1, {{t1, {point(x)}}}, {{out1, {x}}}, {.name = "g1"});
  g1.loops({{x, 4}});
  func f3 = func::make(twice, {{in3, {point(x), point(y), point(z)}}}, {{t3, {x, y, z}}}, {.name = "f3"});
  func g3 = func::make(plus1, {{t3, {point(x), point(y), point(z)}}}, {{out3, {x, y, z}}}, {.name = "g3"});
  g3.loops({{z, 1}});
  func f4 = func::make(twice, {{in4, {point(x), point(y), point(z), point(w)}}}, {{t4, {x, y, z, w}}}, {.name = "f4"});
  func g4 = func::make(plus1, {{t4, {point(x), point(y), point(z), point(w)}}}, {{out4, {x, y, z, w}}}, {.name = "g4"});
  g4.loops({{w, 1}, {y, 2}});
  pipeline p = build_pipeline(ctx, {in1, in3, in4}, {out1, out3, out4});
  buffer<int, 1> in1_buf({10}), out1_buf({10});
  buffer<int, 3> in3_buf({5, 4, 3}), out3_buf({5, 4, 3});
  // Transposed: dim 2 is the dense one, then dim 0, then dim 1.
  in3_buf.mutable_dim(2).set_stride(sizeof(int));
  in3_buf.mutable_dim(0).set_stride(sizeof(int) * 3);
  in3_buf.mutable_dim(1).set_stride(sizeof(int) * 3 * 5);
  buffer<int, 4> in4_buf({4, 6, 3, 2}), out4_buf({4, 6, 3, 2});
  // (buffer<T, N>::allocate owns the memory; raw_buffer::allocate hands it to the caller.)
  in1_buf.allocate();
  out1_buf.allocate();
  in3_buf.allocate();
  out3_buf.allocate();
  in4_buf.allocate();
  out4_buf.allocate();
  test::fill_random(in1_buf, 9);
  test::fill_random(in3_buf, 3);
  test::fill_random(in4_buf, 10);
  run_and_visualize("dims_1_to_4", p, ctx, {&in1_buf, &in3_buf, &in4_buf}, {&out1_buf, &out3_buf, &out4_buf},
                    {"out1", "out3", "out4"});
  EXPECT_EQ(out3_buf(4, 3, 2), in3_buf(4, 3, 2) * 2 + 1);
}

// A chain of 120 funcs, computed a row at a time: the page must stay responsive.
TEST(visualize_pages, chain_of_120) {
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  std::vector<buffer_expr_ptr> bufs;
  // (Names built with += : operator+ on a literal trips a false -Wrestrict of GCC 12.)
  for (int i = 0; i <= 120; ++i) {
    std::string name = "b";
    name += std::to_string(i);
    bufs.push_back(buffer_expr::make(ctx, name, 2, sizeof(int)));
  }
  std::vector<func> funcs;
  for (int i = 0; i < 120; ++i) {
    std::string name = "f";
    name += std::to_string(i);
    funcs.push_back(func::make(counted([](int v) { return v + 1; }), {{bufs[i], {point(x), point(y)}}},
                               {{bufs[i + 1], {x, y}}}, {.name = name}));
  }
  funcs.back().loops({{y, 1}});
  pipeline p = build_pipeline(ctx, {bufs.front()}, {bufs.back()});
  buffer<int, 2> in_buf({16, 8}), out_buf({16, 8});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 4);
  run_and_visualize("chain_of_120", p, ctx, {&in_buf}, {&out_buf}, {"b120"});
  EXPECT_EQ(out_buf(7, 5), in_buf(7, 5) + 120);
}

}  // namespace
}  // namespace slinky
