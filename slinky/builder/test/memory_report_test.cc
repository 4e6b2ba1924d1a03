// report_memory against real runs: what the allocate hook sees (peak bytes, number of
// allocations) must be the same, for pipelines of the benchmarks' kinds, with intermediates on the
// stack and on the heap; and the report's own account (sizes, counts, loops, placement).
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include "slinky/builder/pipeline.h"
#include "slinky/runtime/memory_report.h"

namespace slinky {
namespace {

index_t copy_1d(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t x = out.dim(0).begin(); x < out.dim(0).end(); ++x) out(x) = in(x);
  return 0;
}

index_t copy_2d(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t y = out.dim(1).begin(); y < out.dim(1).end(); ++y) {
    for (index_t x = out.dim(0).begin(); x < out.dim(0).end(); ++x) out(x, y) = in(x, y);
  }
  return 0;
}

index_t sum3(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t y = out.dim(1).begin(); y < out.dim(1).end(); ++y) {
    for (index_t x = out.dim(0).begin(); x < out.dim(0).end(); ++x) out(x, y) = in(x, y - 1) + in(x, y) + in(x, y + 1);
  }
  return 0;
}

// What the allocate and free hooks of a real run see.
struct hook_view {
  std::size_t peak = 0, allocations = 0;
};
hook_view real_run(const pipeline& p, pipeline::buffers ins, pipeline::buffers outs, std::size_t threshold) {
  hook_view v;
  std::map<void*, std::size_t> live;
  std::size_t bytes = 0;
  eval_config config;
  config.auto_stack_threshold = threshold;
  config.allocate = [&](var sym, raw_buffer* b) {
    void* block = default_allocate(sym, b, eval_config::default_heap_alignment);
    live[block] = b->size_bytes();
    bytes += b->size_bytes();
    v.peak = std::max(v.peak, bytes);
    ++v.allocations;
    return block;
  };
  config.free = [&](var sym, raw_buffer* b, void* block) {
    bytes -= live[block];
    live.erase(block);
    default_free(sym, b, block);
  };
  eval_context c;
  c.config = &config;
  EXPECT_EQ(p.evaluate(ins, outs, c), 0);
  return v;
}

void expect_exact(const pipeline& p, const raw_buffer* in, const raw_buffer* out) {
  for (std::size_t threshold : {std::size_t(0), std::size_t(4096), std::size_t(1) << 30}) {
    eval_config config;
    config.auto_stack_threshold = threshold;
    const raw_buffer* ins[] = {in};
    const raw_buffer* outs[] = {out};
    const memory_report r = report_memory(p, ins, outs, &config);
    const hook_view v = real_run(p, ins, outs, threshold);
    EXPECT_EQ(r.result, 0);
    EXPECT_EQ(r.peak_heap_bytes, v.peak) << "threshold " << threshold << "\n" << r;
    EXPECT_EQ(r.heap_allocations, v.allocations) << "threshold " << threshold << "\n" << r;
  }
}

// A chain of n copies through intermediates, optionally in chunks of `chunk` along x.
pipeline chain(int n, index_t chunk) {
  node_context ctx;
  std::vector<buffer_expr_ptr> bufs;
  for (int i = 0; i <= n; ++i) {
    std::string name = "b";
    name += std::to_string(i);
    bufs.push_back(buffer_expr::make(ctx, name, 1, sizeof(int)));
  }
  var x(ctx, "x");
  std::vector<func> funcs;
  for (int i = 0; i < n; ++i) funcs.push_back(func::make(copy_1d, {{bufs[i], {point(x)}}}, {{bufs[i + 1], {x}}}));
  if (chunk > 0) funcs.back().loops({{x, chunk}});
  return build_pipeline(ctx, {bufs.front()}, {bufs.back()});
}

TEST(memory_report, chains_are_exact) {
  buffer<int, 1> in({10000}), out({10000});
  in.allocate();
  out.allocate();
  for (int n : {2, 4}) {
    for (index_t chunk : {0, 1, 256}) expect_exact(chain(n, chunk), &in, &out);
  }
}

TEST(memory_report, stencil_in_strips_is_exact) {
  for (index_t strip : {0, 1, 8}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    func f = func::make(copy_2d, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
    func g = func::make(sum3, {{intm, {point(x), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
    if (strip > 0) g.loops({{y, strip}});
    pipeline p = build_pipeline(ctx, {in}, {out});
    buffer<int, 2> in_buf({300, 66}), out_buf({300, 64});
    in_buf.translate(0, -1);
    in_buf.allocate();
    out_buf.allocate();
    for_each_element([](int* v) { *v = 1; }, in_buf);
    expect_exact(p, &in_buf, &out_buf);

    // The report's account: intm is one allocation, outside the loop, of its fold's rows.
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    const memory_report r = report_memory(p, ins, outs);
    ASSERT_EQ(r.allocations.size(), 1u) << r;
    const allocation_report& a = r.allocations[0];
    EXPECT_EQ(a.name, "intm");
    EXPECT_EQ(a.count, 1u);
    EXPECT_TRUE(a.loops.empty());
    const std::size_t rows = strip == 0 ? 66 : strip + 2;
    EXPECT_EQ(a.bytes, 300 * rows * sizeof(int)) << r;
    EXPECT_EQ(a.on_stack, a.bytes <= 4096);
    EXPECT_EQ(r.total_allocations, 1u);
  }
}

// The kinds of the other benchmark pipelines: a matrix product chain in row blocks (benchmark 5), and
// copies (a padded copy of an intermediate, a concatenation of two intermediates).
index_t matmul(const buffer<const int>& a, const buffer<const int>& b, const buffer<int>& c) {
  for (index_t i = c.dim(1).begin(); i < c.dim(1).end(); ++i) {
    for (index_t j = c.dim(0).begin(); j < c.dim(0).end(); ++j) {
      int sum = 0;
      for (index_t k = a.dim(0).begin(); k < a.dim(0).end(); ++k) sum += a(k, i) * b(j, k);
      c(j, i) = sum;
    }
  }
  return 0;
}

TEST(memory_report, matmul_chain_in_row_blocks_is_exact) {
  for (index_t rows : {0, 1, 4}) {
    node_context ctx;
    auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto c = buffer_expr::make(ctx, "c", 2, sizeof(int));
    auto ab = buffer_expr::make(ctx, "ab", 2, sizeof(int));
    auto abc = buffer_expr::make(ctx, "abc", 2, sizeof(int));
    var i(ctx, "i"), j(ctx, "j");
    func f = func::make(matmul,
                        {{a, {bounds(buffer_min(a->sym(), 0), buffer_max(a->sym(), 0)), point(i)}},
                         {b, {point(j), bounds(buffer_min(a->sym(), 0), buffer_max(a->sym(), 0))}}},
                        {{ab, {j, i}}});
    func g = func::make(matmul,
                        {{ab, {bounds(buffer_min(b->sym(), 0), buffer_max(b->sym(), 0)), point(i)}},
                         {c, {point(j), bounds(buffer_min(b->sym(), 0), buffer_max(b->sym(), 0))}}},
                        {{abc, {j, i}}});
    if (rows > 0) g.loops({{i, rows}});
    pipeline p = build_pipeline(ctx, {a, b, c}, {abc});
    buffer<int, 2> a_buf({32, 32}), b_buf({32, 32}), c_buf({32, 32}), out({32, 32});
    for (auto* buf : {&a_buf, &b_buf, &c_buf, &out}) {
      buf->allocate();
      for_each_element([](int* v) { *v = 1; }, *buf);
    }
    const raw_buffer* ins[] = {&a_buf, &b_buf, &c_buf};
    const raw_buffer* outs[] = {&out};
    for (std::size_t threshold : {std::size_t(0), std::size_t(4096)}) {
      eval_config config;
      config.auto_stack_threshold = threshold;
      const memory_report r = report_memory(p, ins, outs, &config);
      const hook_view v = real_run(p, ins, outs, threshold);
      EXPECT_EQ(r.peak_heap_bytes, v.peak) << r;
      EXPECT_EQ(r.heap_allocations, v.allocations) << r;
      ASSERT_EQ(r.allocations.size(), 1u) << r;
      EXPECT_EQ(r.allocations[0].bytes, 32 * sizeof(int) * (rows > 0 ? rows : 32)) << r;
    }
  }
}

TEST(memory_report, copies_are_exact) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto t1 = buffer_expr::make(ctx, "t1", 1, sizeof(int));
  auto t2 = buffer_expr::make(ctx, "t2", 1, sizeof(int));
  auto padded = buffer_expr::make(ctx, "padded", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  auto zero = buffer_expr::make_scalar<int>(ctx, "zero", 0);
  var x(ctx, "x");
  func f1 = func::make(copy_1d, {{in, {point(x)}}}, {{t1, {x}}});
  func f2 = func::make(copy_1d, {{in, {point(x + 3)}}}, {{t2, {x}}});
  func pad = func::make_copy({t1, {point(x)}, {bounds(0, 99)}}, {padded, {x}}, {zero, {}});
  func cat = func::make_concat({padded, t2}, {out, {x}}, 0, {0, 150, 300});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> in_buf({400}), out_buf({300});
  in_buf.allocate();
  out_buf.allocate();
  expect_exact(p, &in_buf, &out_buf);
  // Without aliasing, each copy has a destination of its own.
  build_options no_alias;
  no_alias.no_alias_buffers = true;
  pipeline q = build_pipeline(ctx, {in}, {out}, no_alias);
  expect_exact(q, &in_buf, &out_buf);
}

TEST(memory_report, allocations_inside_loops_are_counted) {
  // f computed and stored at g's loop over y: one allocation per row.
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func f = func::make(copy_2d, {{in, {point(x), point(y)}}}, {{t, {x, y}}});
  func g = func::make(copy_2d, {{t, {point(x), point(y)}}}, {{out, {x, y}}});
  g.loops({{y, 1}});
  t->store_at({&g, y});
  f.compute_at({&g, y});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({2000, 10}), out_buf({2000, 10});
  in_buf.allocate();
  out_buf.allocate();
  expect_exact(p, &in_buf, &out_buf);
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  const memory_report r = report_memory(p, ins, outs);
  ASSERT_EQ(r.allocations.size(), 1u) << r;
  EXPECT_EQ(r.allocations[0].count, 10u);
  EXPECT_EQ(r.allocations[0].bytes, 2000 * sizeof(int));
  EXPECT_FALSE(r.allocations[0].on_stack);
  ASSERT_EQ(r.allocations[0].loops.size(), 1u);
  EXPECT_EQ(r.allocations[0].loops[0].substr(0, 1), "y");
  EXPECT_EQ(r.heap_allocations, 10u);
  EXPECT_EQ(r.peak_heap_bytes, 2000 * sizeof(int));
  std::ostringstream text;
  text << r;
  EXPECT_NE(text.str().find("| t | 8000 | 10 | automatic | heap | y"), std::string::npos) << text.str();
}

TEST(memory_report, runs_no_callback_and_touches_no_buffer) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  int calls = 0;
  auto counting = [&](const buffer<const int>&, const buffer<int>&) -> index_t {
    ++calls;
    return 0;
  };
  func f = func::make(counting, {{in, {point(x)}}}, {{t, {x}}});
  func g = func::make(counting, {{t, {point(x)}}}, {{out, {x}}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> in_buf({100}), out_buf({100});
  in_buf.allocate();
  out_buf.allocate();
  out_buf(5) = -3;
  const raw_buffer* ins[] = {&in_buf};
  const raw_buffer* outs[] = {&out_buf};
  const memory_report r = report_memory(p, ins, outs);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(out_buf(5), -3);
  EXPECT_EQ(r.total_allocations, 1u);
  // A failing check (an input too small): reported, with what ran before it.
  buffer<int, 1> small({10});
  small.allocate();
  const raw_buffer* small_ins[] = {&small};
  EXPECT_NE(report_memory(p, small_ins, outs).result, 0);
}

}  // namespace
}  // namespace slinky
