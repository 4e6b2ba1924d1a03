// Benchmark 2 of docs/benchmarks.md: the interpreter's cost per loop iteration. A 1-D pipeline of two
// trivial elementwise callbacks runs in a loop of step 1 over 1M elements: each iteration crops
// two buffers and calls two callbacks. The figure is ns per iteration; target <= 20 ns.
//
// Two versions: the program built by hand (runtime only: call_stmts with raw callbacks, run by
// `evaluate(stmt, eval_context&)`, which walks the statement tree), and the same pipeline described
// with the builder API (typed callbacks, checks included), run by `pipeline::evaluate` through its
// executable form. The target is the builder's row, the pipeline a client describes; the hand-built
// row shows the tree-walking interpreter beside it. Last, one func alone in a loop of step 1:
// the builder runs that loop as one call (docs/builder.md, "Loops that need not exist"); its row
// prints the calls made and the time, and the program is printed.
// Usage: dispatch_benchmark [--n N] [--csv FILE]
#include <cstdio>
#include <iostream>
#include <vector>

#include "benchmark_util.h"
#include "slinky/builder/pipeline.h"
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

// The same pipeline through the builder: intm = in * 2 and out = intm + 1, looped over x with
// step 1 (intm is computed inside the loop and folded to one element).
double builder_version(index_t n, bool checks) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func mul = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = a(i) * 2;
        return 0;
      },
      {{in, {point(x)}}}, {{intm, {x}}}, {.name = "multiply_2"});
  func add = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = a(i) + 1;
        return 0;
      },
      {{intm, {point(x)}}}, {{out, {x}}}, {.name = "add_1"});
  add.loops({x});
  build_options options;
  options.no_checks = !checks;
  pipeline p = build_pipeline(ctx, {in}, {out}, options);

  buffer<int, 1> in_buf({n}), out_buf({n});
  in_buf.allocate();
  out_buf.allocate();
  for (index_t i = 0; i < n; ++i) in_buf(i) = static_cast<int>(i);
  double t = median_seconds([&]() {
    if (p.evaluate({&in_buf}, {&out_buf}) != 0) wrong_result("evaluate failed");
  });
  for (index_t i = 0; i < n; ++i) {
    if (out_buf(i) != static_cast<int>(i) * 2 + 1) wrong_result("builder version: out(" + std::to_string(i) + ")");
  }
  return t;
}

// One func, out = in + 1, alone in a loop of step 1 over x: the builder runs it as one call. Sets
// `calls` to the callback calls of one evaluation; prints the program when `print` is set.
double single_func_version(index_t n, bool keep_loops, int& calls, bool print) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  int count = 0;
  func add = func::make(
      [&count](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        ++count;
        for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = a(i) + 1;
        return 0;
      },
      {{in, {point(x)}}}, {{out, {x}}}, {.name = "add_1"});
  add.loops({x});
  build_options options;
  options.keep_loops = keep_loops;
  pipeline p = build_pipeline(ctx, {in}, {out}, options);
  if (print) std::cout << "The program of one func in a loop of step 1:\n\n" << p.body << "\n";

  buffer<int, 1> in_buf({n}), out_buf({n});
  in_buf.allocate();
  out_buf.allocate();
  for (index_t i = 0; i < n; ++i) in_buf(i) = static_cast<int>(i);
  count = 0;
  if (p.evaluate({&in_buf}, {&out_buf}) != 0) wrong_result("evaluate failed");
  calls = count;
  double t = median_seconds([&]() {
    if (p.evaluate({&in_buf}, {&out_buf}) != 0) wrong_result("evaluate failed");
  });
  for (index_t i = 0; i < n; ++i) {
    if (out_buf(i) != static_cast<int>(i) + 1) wrong_result("single func: out(" + std::to_string(i) + ")");
  }
  return t;
}

int main(int argc, char** argv) {
  csv_writer csv(argc, argv, {"program", "elements", "repetitions", "time_per_iteration_ns"});
  print_machine("Benchmark 2: dispatch cost per loop iteration");
  const index_t n = std::stol(arg(argc, argv, "--n", "1048576"));
  node_context ctx;
  var in(ctx, "in"), out(ctx, "out"), intm(ctx, "intm"), x(ctx, "x");

  // intm is a ring buffer of one element: each iteration produces and consumes one.
  stmt body = block::make({
      crop_dim::make(intm, intm, 0, point(x), call_stmt::make(multiply_2, {in}, {intm}, {}, {.name = "multiply_2"})),
      crop_dim::make(out, out, 0, point(x), call_stmt::make(add_1, {intm}, {out}, {}, {.name = "add_1"})),
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
  const double ns_builder = builder_version(n, true) * 1e9 / n;
  const double ns_builder_no_checks = builder_version(n, false) * 1e9 / n;
  int single_calls = 0, kept_calls = 0;
  const double single_s = single_func_version(n, false, single_calls, true);
  const double kept_s = single_func_version(n, true, kept_calls, false);
  table results({"program", "elements", "repetitions", "calls", "time (ms)", "ns per iteration", "target"});
  const std::string calls2 = std::to_string(2 * n);
  results.add({"hand-built, evaluate(stmt)", std::to_string(n), "9 (median)", calls2, fmt(t * 1e3, 2), fmt(ns, 2), ""});
  results.add({"build_pipeline", std::to_string(n), "9 (median)", calls2, fmt(ns_builder * n * 1e-6, 2),
               fmt(ns_builder, 2), "<= 20 ns"});
  results.add({"build_pipeline, no_checks", std::to_string(n), "9 (median)", calls2,
               fmt(ns_builder_no_checks * n * 1e-6, 2), fmt(ns_builder_no_checks, 2), "<= 20 ns"});
  results.add({"build_pipeline, one func in a loop of step 1", std::to_string(n), "9 (median)",
               std::to_string(single_calls), fmt(single_s * 1e3, 3), "", "1 call"});
  results.add({"the same, keep_loops", std::to_string(n), "9 (median)", std::to_string(kept_calls),
               fmt(kept_s * 1e3, 2), fmt(kept_s * 1e9 / n, 2), ""});
  results.print();
  csv.add({"hand-built", n, 9, ns});
  csv.add({"build_pipeline", n, 9, ns_builder});
  csv.add({"build_pipeline_no_checks", n, 9, ns_builder_no_checks});
  csv.add({"one_func_in_loop", n, 9, single_s * 1e9 / n});
  csv.add({"one_func_in_loop_keep_loops", n, 9, kept_s * 1e9 / n});
  std::printf("ns per iteration (two crops, two calls), hand-built, tree-walking evaluate(stmt): %.2f (no target)\n",
              ns);
  std::printf("ns per iteration (two crops, two calls), build_pipeline: %.2f (target <= 20): %s\n", ns_builder,
              pass_or_miss(ns_builder <= 20));
  std::printf("one func in a loop of step 1: %d call(s), %.3f ms (target: 1 call): %s\n", single_calls, single_s * 1e3,
              pass_or_miss(single_calls == 1));
  return 0;
}
