// Run by CTest twice: plainly, and with SLINKY_TRACE set (slinky_builder_trace_passes_json), in
// which case build_pipeline traces each lowering pass and the evaluation of a parallel pipeline is
// traced into the same file through eval_config's hooks; check_build_trace.py then reads the file
// with a JSON parser and checks the events' names, nesting and threads.
#include <gtest/gtest.h>

#include "slinky/base/chrome_trace.h"
#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"

namespace slinky {
namespace {

index_t twice(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t y = out.dim(1).begin(); y < out.dim(1).end(); ++y) {
    for (index_t x = out.dim(0).begin(); x < out.dim(0).end(); ++x) out(x, y) = in(x, y) * 2;
  }
  return 0;
}

TEST(trace_passes, build_and_evaluation_in_one_trace) {
  chrome_trace* trace = chrome_trace::global();
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func a = func::make(twice, {{in, {point(x), point(y)}}}, {{intm, {x, y}}}, {.name = "a"});
  func b = func::make(twice, {{intm, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "b"});
  b.loops({{y, 1, loop::parallel}});
  build_options options;
  options.trace = true;
  pipeline p = build_pipeline(ctx, {in}, {out}, options);

  buffer<int, 2> in_buf({8, 64}), out_buf({8, 64});
  in_buf.allocate();
  out_buf.allocate();
  for (index_t j = 0; j < 64; ++j) {
    for (index_t i = 0; i < 8; ++i) in_buf(i, j) = static_cast<int>(i + j);
  }
  thread_pool_impl pool(2);
  eval_config config;
  config.thread_pool = &pool;
  if (trace) {
    config.trace_begin = [trace](const char* name) {
      trace->begin(name);
      return reinterpret_cast<index_t>(name);
    };
    config.trace_end = [trace](index_t token) { trace->end(reinterpret_cast<const char*>(token)); };
  }
  eval_context c;
  c.config = &config;
  // Several evaluations, so that both workers are likely to take iterations.
  for (int i = 0; i < 20; ++i) ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, c), 0);
  for (index_t j = 0; j < 64; ++j) {
    for (index_t i = 0; i < 8; ++i) ASSERT_EQ(out_buf(i, j), (i + j) * 4);
  }
}

}  // namespace
}  // namespace slinky
