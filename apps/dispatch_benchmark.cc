// Benchmark 2 of BENCHMARKS.md: the interpreter's cost per loop iteration. A 1-D pipeline of two
// trivial elementwise callbacks runs in a loop of step 1 over 1M elements: each iteration crops
// two buffers and calls two callbacks. The figure is ns per iteration; target <= 15 ns.
//
// This version builds the program by hand (runtime only). Usage: dispatch_benchmark [--csv FILE]
#include <cstdio>
#include <vector>

#include "benchmark_util.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

using namespace slinky;
using namespace slinky_bench;

namespace {

// out(x) = in(x) * 2 over the (one element) crop of out.
index_t multiply_2(const call_stmt* op, eval_context& ctx) {
  const raw_buffer* in = ctx.lookup_buffer(op->inputs[0]);
  const raw_buffer* out = ctx.lookup_buffer(op->outputs[0]);
  const dim& d = out->dim(0);
  for (index_t x = d.min(); x <= d.max(); ++x) {
    *static_cast<int*>(out->address_at(x)) = *static_cast<const int*>(in->address_at(x)) * 2;
  }
  return 0;
}

index_t add_1(const call_stmt* op, eval_context& ctx) {
  const raw_buffer* in = ctx.lookup_buffer(op->inputs[0]);
  const raw_buffer* out = ctx.lookup_buffer(op->outputs[0]);
  const dim& d = out->dim(0);
  for (index_t x = d.min(); x <= d.max(); ++x) {
    *static_cast<int*>(out->address_at(x)) = *static_cast<const int*>(in->address_at(x)) + 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  print_machine("Benchmark 2: dispatch cost per loop iteration (hand-built program)");
  const index_t n = std::stol(arg(argc, argv, "--n", "1048576"));
  node_context ctx;
  var in(ctx, "in"), out(ctx, "out"), intm(ctx, "intm"), x(ctx, "x");

  // intm is a ring buffer of one element: each iteration produces and consumes one.
  stmt body = block::make({
      crop_dim::make(intm, intm, 0, point(x), call_stmt::make(multiply_2, {in}, {intm}, {.name = "multiply_2"})),
      crop_dim::make(out, out, 0, point(x), call_stmt::make(add_1, {intm}, {out}, {.name = "add_1"})),
  });
  stmt program =
      allocate::make(intm, memory_type::automatic, 4, {{bounds(buffer_min(out, 0), buffer_max(out, 0)), expr(), 1}},
                     loop::make(x, loop::serial, bounds(buffer_min(out, 0), buffer_max(out, 0)), 1, body));

  buffer<int, 1> in_buf({n}), out_buf({n});
  in_buf.allocate();
  out_buf.allocate();
  for (index_t i = 0; i < n; ++i) in_buf(i) = static_cast<int>(i);

  eval_context values;
  values[in] = reinterpret_cast<index_t>(static_cast<const raw_buffer*>(&in_buf));
  values[out] = reinterpret_cast<index_t>(static_cast<const raw_buffer*>(&out_buf));

  double t = median_seconds([&]() {
    if (evaluate(program, values) != 0) wrong_result("evaluate failed");
  });
  for (index_t i = 0; i < n; ++i) {
    if (out_buf(i) != static_cast<int>(i) * 2 + 1) wrong_result("out(" + std::to_string(i) + ")");
  }

  const double ns = t * 1e9 / n;
  table results({"elements", "repetitions", "time (ms)", "ns per iteration", "target"});
  results.add({std::to_string(n), "9 (median)", fmt(t * 1e3), fmt(ns, 2), "<= 15 ns"});
  results.print();
  results.write_csv(arg(argc, argv, "--csv"));
  std::printf("ns per iteration (two crops, two calls): %.2f (target <= 15): %s\n", ns, pass_or_miss(ns <= 15));
  return 0;
}
