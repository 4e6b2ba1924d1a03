// Shared by scheduler_benchmark.cc and the rows in scheduler/: a pipeline of scheduler_benchmark's table
// (its graph, hand schedules, buffers and reference check) and the functions that make the rows.
#ifndef SLINKY_APPS_SCHEDULER_BENCH_H
#define SLINKY_APPS_SCHEDULER_BENCH_H

#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "benchmark_util.h"
#include "slinky/builder/pipeline.h"
#include "workloads.h"

namespace sched_bench {

using namespace slinky;
using slinky_bench::graph;
using slinky_bench::wrong_result;

// A graph, the schedule a scheduler_fn set on it, and the pipeline built from it.
struct built {
  node_context ctx;
  graph g;
  pipeline p;
  std::string description;
  double schedule_us = -1;
};
using scheduler_fn = std::function<void(built&)>;
using graph_fn = std::function<graph(node_context&)>;

// A pipeline of the table: its graph, hand schedules, buffers and the reference check of the
// unscheduled run's outputs.
struct workload {
  std::string name;
  // Run with the thread pool and timed by the wall clock: hand schedules with parallel loops, the
  // heuristic and auto given the host's threads.
  bool parallel = false;
  graph_fn make_graph;
  // The same graph with the funcs' hints (func::cost_hints) given, for "auto with hints"; null:
  // the funcs have none.
  graph_fn make_hinted_graph;
  std::vector<scheduler_fn> hand;
  std::vector<const raw_buffer*> inputs, outputs;
  // Checks the outputs against a plain C++ reference; aborts through wrong_result.
  std::function<void(const std::string&)> check;
  // Every variant's outputs equal no schedule's bit for bit (false: a library kernel whose rounding
  // depends on the shape of its call; each variant is then checked against the reference).
  bool exact = true;
};

using add_fn = std::function<void(workload)>;

// A hand schedule: a loop over dim `d` of func `f` (-1: the output's) in steps of `step`.
inline scheduler_fn loop_of(int f, int d, index_t step, bool parallel, std::string description) {
  return [=](built& b) {
    func& fn = f < 0 ? b.g.funcs.back() : b.g.funcs[f];
    fn.loops({{fn.outputs()[0].dims[d], step, parallel ? loop::parallel : loop::serial}});
    b.description = description;
  };
}

// Random values in [-0.5, 0.5).
inline void fill_random(const raw_buffer& b, unsigned seed) {
  float* p = static_cast<float*>(b.base);
  for (std::size_t i = 0; i < b.size_bytes() / sizeof(float); ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = static_cast<float>(seed >> 8) / static_cast<float>(1 << 24) - 0.5f;
  }
}

template <std::size_t N>
void check_near(const buffer<float, N>& out, const buffer<float, N>& ref, float tolerance, const std::string& what) {
  const float* o = out.base();
  const float* r = ref.base();
  for (std::size_t i = 0; i < out.size_bytes() / sizeof(float); ++i) {
    if (!(std::abs(o[i] - r[i]) <= tolerance * (1.0f + std::abs(r[i])))) {
      wrong_result(what + ": element " + std::to_string(i) + " = " + std::to_string(o[i]) + ", expected " +
                   std::to_string(r[i]));
    }
  }
}

// c(j, i) = sum_k a(k, i) b(j, k): one product by `product` (by default workloads::matmul's
// callback). funcs: c.
inline graph matmul_graph(node_context& ctx,
                          slinky_bench::workloads::product_fn product = slinky_bench::workloads::matmul) {
  graph g;
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(float));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(float));
  auto c = buffer_expr::make(ctx, "c", 2, sizeof(float));
  var i(ctx, "i"), j(ctx, "j");
  const interval_expr k = a->dim(0).bounds;
  g.funcs.push_back(func::make(product, {{a, {k, point(i)}}, {b, {point(j), k}}}, {{c, {j, i}}}, {.name = "c"}));
  g.inputs = {a, b};
  g.outputs = {c};
  return g;
}

// The rows of the table, each handed to `add` (quick: smaller sizes). Serial elementwise chains
// (K = 4, 8) or the parallel one (K = 4); benchmark 4's stencil chains, serial or parallel, with
// hand strips of every power of two from 1 to 64 rows if `sweep`; benchmark 5's matrix chain and
// the padded stencil; the ML workloads; callbacks written as kernel libraries write them; pipelines
// whose rows do not fit the L2; the chain into a parallel reduction.
void elementwise_rows(bool quick, bool parallel, const add_fn& add);
void stencil_rows(bool quick, bool parallel, bool sweep, const add_fn& add);
// Benchmark 4's chains on uint16 pixels, serial (hand strips as stencil_rows').
void stencil_u16_rows(bool quick, bool sweep, const add_fn& add);
void matmul_and_copy_rows(bool quick, const add_fn& add);
void ml_rows(bool quick, const add_fn& add);
// ML workloads 2 and 3 and the pooling of 6 (scheduler/ml_more_rows.cc).
void ml_more_rows(bool quick, const add_fn& add);
void kernel_rows(bool quick, const add_fn& add);
void wide_rows(bool quick, const add_fn& add);
void reduction_row(bool quick, const add_fn& add);

}  // namespace sched_bench

#endif  // SLINKY_APPS_SCHEDULER_BENCH_H
