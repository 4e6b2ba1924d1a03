// The cost of one iteration of a parallel pipeline loop, which the scheduler's
// cost_model::parallel_iteration_ns prices beyond the iteration's calls (handing the iteration
// to a worker, cropping its buffers, allocating the blocks of the funcs inside it). The pipeline
// is scheduler_benchmark's "chain into a parallel reduction" (workloads::reduction: in -> e1 ->
// e2, both y = x * a + b, -> partials, each the sum of `chunk` elements of e2, -> total) over 1M
// floats, with the partials' loop parallel in steps of 1 to 64 partials on 2 threads
// (thread_pool_impl(1)). The steps cover the same work in more or fewer iterations, so the
// difference in wall-clock time between a step and the largest, times the threads, over the
// difference in iterations, is the CPU time one iteration adds, its 3 calls (e1, e2 and
// partials) included.
//
// The partial sums are vector loops (8 accumulators): the pipeline streams at memory's speed and
// the iterations' cost shows. With --scalar they are the plain loop a user writes first
// (`s += e(i)`, one dependent add after another), as scheduler_benchmark's row is: then each
// partial takes several microseconds and the iterations' cost hides in it.
//
// Usage: parallel_iteration_benchmark [--reps N] [--scalar] [--csv FILE]
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "benchmark_util.h"
#include "pipeline_bench.h"
#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "workloads.h"

using namespace slinky;
using namespace slinky_bench;

namespace {

constexpr index_t elements = 1 << 20;

// The chain with the partials' loop parallel in steps of `step` partials.
pipeline make(node_context& ctx, index_t chunk, index_t step, bool scalar) {
  graph g = workloads::reduction::make(ctx, chunk, /*vector_sums=*/!scalar);
  func& partial = g.funcs[2];
  partial.loops({{partial.outputs()[0].dims[0], step, loop::parallel}});
  return build_pipeline(ctx, g.inputs, g.outputs);
}

}  // namespace

int main(int argc, char** argv) {
  print_machine("The cost of one iteration of a parallel pipeline loop");
  const int reps = std::stoi(arg(argc, argv, "--reps", "41"));
  bool scalar = false;
  for (int i = 1; i < argc; ++i) scalar = scalar || std::strcmp(argv[i], "--scalar") == 0;
  const int threads = 2;
  thread_pool_impl pool(threads - 1);
  buffer<float, 1> in({elements}), out({1});
  in.allocate();
  out.allocate();
  for (index_t i = 0; i < elements; ++i) in(i) = static_cast<float>(i % 7) * 0.125f - 0.375f;
  eval_config config;
  config.thread_pool = &pool;
  eval_context context;
  context.config = &config;

  const std::vector<index_t> steps = {1, 2, 4, 16, 64};
  table t(
      {"chunk (elements)", "step (partials)", "iterations", "ms", "CPU ns per iteration beyond the largest step's"});
  csv_writer csv(argc, argv, {"chunk", "step", "iterations", "time_ms", "iteration_ns"});
  for (index_t chunk : {64, 256, 4096}) {
    const double reference = workloads::reduction::reference(in, chunk);
    std::vector<std::unique_ptr<node_context>> ctxs;
    std::vector<pipeline> pipelines;
    for (index_t step : steps) {
      ctxs.push_back(std::make_unique<node_context>());
      pipelines.push_back(make(*ctxs.back(), chunk, step, scalar));
    }
    std::vector<std::function<void()>> fns;
    for (std::size_t i = 0; i < pipelines.size(); ++i) {
      fns.push_back([&, i]() {
        if (pipelines[i].evaluate({&in}, {&out}, context) != 0) wrong_result("evaluate failed");
      });
    }
    for (const auto& fn : fns) {
      out(0) = 0;
      fn();
      if (!(std::abs(out(0) - reference) <= 1e-3 * (1 + std::abs(reference)))) {
        wrong_result("chunk " + std::to_string(chunk) + ": " + std::to_string(out(0)) + ", expected " +
                     std::to_string(reference));
      }
    }
    const std::vector<double> s = interleaved_median_seconds(fns, reps);
    const double last_iterations = static_cast<double>(elements / chunk / steps.back());
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const double iterations = static_cast<double>(elements / chunk / steps[i]);
      const bool more = iterations > last_iterations;
      const double ns = more ? (s[i] - s.back()) * 1e9 * threads / (iterations - last_iterations) : 0;
      t.add({std::to_string(chunk), std::to_string(steps[i]), fmt(iterations, 0), fmt(s[i] * 1e3, 3),
             more ? fmt(ns, 0) : "-"});
      csv.add({chunk, steps[i], iterations, s[i] * 1e3, csv_writer::if_measured(more, ns)});
    }
  }
  t.print();
  std::printf("Wall clock, medians of %d interleaved rounds; partial sums %s. The last column counts the\n"
              "iterations' calls too (3 each). With few partials per worker the largest step also loses\n"
              "to the imbalance between the workers, which shows as negative figures.\n",
              reps, scalar ? "scalar (dependent adds)" : "in vector loops");
  return 0;
}
