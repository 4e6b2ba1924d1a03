// Benchmark 5 of docs/benchmarks.md: the matrix chain (a x b) x c of 512x512 floats, no schedule vs
// the result computed in row blocks of 1, 4 and 16 (ab then only needs those rows): time, memory.
// Usage: matmul_benchmark [--quick] [--cpu-time] [--reps N] [--n N] [--csv FILE]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "benchmark_util.h"
#include "pipeline_bench.h"
#include "slinky/builder/pipeline.h"
#include "workloads.h"

using namespace slinky;
using namespace slinky_bench;

namespace {

// abc = (a x b) x c (workloads::matmul_chain, workloads.h) with the rows of abc in a loop of step
// `block` (0: no loop); ab is then computed in that loop, `block` rows at a time.
struct matmul_chain {
  node_context ctx;
  pipeline p;
  var ab_sym;

  explicit matmul_chain(index_t block) {
    graph g = workloads::matmul_chain(ctx);
    ab_sym = g.funcs[0].outputs()[0].sym();
    func& f_abc = g.funcs.back();
    if (block > 0) f_abc.loops({{f_abc.outputs()[0].dims[1], block}});
    p = build_pipeline(ctx, g.inputs, g.outputs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = has_flag(argc, argv, "--quick");
  const bool cpu_time = has_flag(argc, argv, "--cpu-time");
  const int reps = std::stoi(arg(argc, argv, "--reps", quick ? "3" : "11"));
  const index_t n = std::stol(arg(argc, argv, "--n", quick ? "256" : "512"));
  csv_writer csv(argc, argv,
                 {"n", "schedule", "block_rows", "repetitions", "time_ms", "gflop_per_s",
                  "speedup_vs_no_schedule_malloc", "speedup_vs_no_schedule_memory_reused", "peak_ab_bytes",
                  "block_rows_of_ab_bytes"});
  print_machine("Benchmark 5: matrix chain (a x b) x c, no schedule vs row blocks");
  print_fresh_page_cost();
  std::printf("%lldx%lld floats; kernel: i-k-j loops, the j loop vectorized. Times are medians of %d\n",
              static_cast<long long>(n), static_cast<long long>(n), reps);
  std::printf("repetitions interleaved in rounds (after one warm-up), default eval_config. \"no schedule\n");
  std::printf("(malloc)\" allocates ab with the default allocator on every run (fresh pages: slow first touch\n");
  std::printf("on this sandboxed machine); \"no schedule (memory reused)\" gets ab from an allocate hook that\n");
  std::printf("reuses the previous run's block. Peak memory: allocate/free hooks, auto_stack_threshold = 0.\n");
  std::printf("Clock: %s.\n\n", clock_name(cpu_time));

  buffer<float, 2> a_buf({n, n}), b_buf({n, n}), c_buf({n, n}), out_buf({n, n}), ab_ref({n, n}), ref({n, n});
  for (auto* b : {&a_buf, &b_buf, &c_buf, &out_buf, &ab_ref, &ref}) b->allocate();
  unsigned seed = 12345;
  auto random = [&]() {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(seed >> 8) / static_cast<float>(1 << 24) * 2.0f - 1.0f;
  };
  for (auto* b : {&a_buf, &b_buf, &c_buf}) {
    for (index_t i = 0; i < n; ++i) {
      for (index_t j = 0; j < n; ++j) (*b)(j, i) = random();
    }
  }
  // The reference, in plain C++.
  auto reference = [n](const buffer<float, 2>& x, const buffer<float, 2>& y, buffer<float, 2>& z) {
    for (index_t i = 0; i < n; ++i) {
      for (index_t j = 0; j < n; ++j) z(j, i) = 0.0f;
      for (index_t k = 0; k < n; ++k) {
        for (index_t j = 0; j < n; ++j) z(j, i) += x(k, i) * y(j, k);
      }
    }
  };
  reference(a_buf, b_buf, ab_ref);
  reference(ab_ref, c_buf, ref);
  auto check = [&](const std::string& what) {
    for (index_t i = 0; i < n; ++i) {
      for (index_t j = 0; j < n; ++j) {
        if (!(std::abs(out_buf(j, i) - ref(j, i)) <= 1e-4f * (1.0f + std::abs(ref(j, i))))) {
          wrong_result(what + ": abc(" + std::to_string(j) + ", " + std::to_string(i) +
                       ") = " + std::to_string(out_buf(j, i)) + ", expected " + std::to_string(ref(j, i)));
        }
      }
    }
  };
  auto clear = [&]() { std::memset(out_buf.base(), 0, n * n * sizeof(float)); };

  const std::vector<index_t> schedules = {0, 1, 4, 16};
  std::vector<std::unique_ptr<matmul_chain>> pipelines;
  std::vector<std::unique_ptr<alloc_tracker>> trackers;
  std::vector<std::string> names;
  auto run = [&](std::size_t i, eval_context* ctx) {
    const pipeline& p = pipelines[i]->p;
    const index_t r =
        ctx ? p.evaluate({&a_buf, &b_buf, &c_buf}, {&out_buf}, *ctx) : p.evaluate({&a_buf, &b_buf, &c_buf}, {&out_buf});
    if (r != 0) wrong_result(names[i] + ": evaluate failed");
  };
  for (index_t block : schedules) {
    names.push_back(block == 0 ? std::string("no schedule") : "row blocks of " + std::to_string(block));
    pipelines.push_back(std::make_unique<matmul_chain>(block));
    trackers.push_back(std::make_unique<alloc_tracker>(0, /*reuse_memory=*/block == 0));
    clear();
    run(pipelines.size() - 1, nullptr);
    check(names.back());
    clear();
    run(pipelines.size() - 1, &trackers.back()->context);
    check(names.back() + " (auto_stack_threshold = 0)");
  }

  // Rows of the table: no schedule with malloc, no schedule with memory reused, the blocks.
  std::vector<std::function<void()>> fns;
  fns.push_back([&]() { run(0, nullptr); });
  fns.push_back([&]() { run(0, &trackers[0]->context); });
  for (std::size_t i = 1; i < pipelines.size(); ++i) fns.push_back([&, i]() { run(i, nullptr); });
  clear();
  const std::vector<double> t = interleaved_medians(fns, reps, cpu_time);
  check("after timing");

  const double t_malloc = t[0], t_reused = t[1];
  const double flops = 2.0 * 2.0 * n * n * n;
  table tab({"schedule", "time (ms)", "GFLOP/s", "no schedule (malloc) / time", "no schedule (memory reused) / time",
             "peak ab (bytes)", "block rows of ab (bytes)"});
  bool fast_enough_malloc = true, fast_enough_reused = true, memory_ok = true;
  std::string ratios_malloc, ratios_reused;
  for (std::size_t r = 0; r < fns.size(); ++r) {
    const std::size_t pi = r == 0 ? 0 : r - 1;
    const index_t block = schedules[pi];
    const index_t peak = trackers[pi]->peak_of(pipelines[pi]->ab_sym);
    const index_t bound = block * n * static_cast<index_t>(sizeof(float));
    tab.add({r == 0   ? "no schedule (malloc)"
             : r == 1 ? "no schedule (memory reused)"
                      : names[pi],
             fmt(t[r] * 1e3, 2), fmt(flops / t[r] * 1e-9, 2), fmt(t_malloc / t[r], 3), fmt(t_reused / t[r], 3),
             std::to_string(peak), block == 0 ? "" : std::to_string(bound)});
    csv.add({n,
             r == 0   ? "no_schedule_malloc"
             : r == 1 ? "no_schedule_memory_reused"
                      : "row_blocks",
             csv_writer::if_measured(block > 0, block), reps, t[r] * 1e3, flops / t[r] * 1e-9, t_malloc / t[r],
             t_reused / t[r], peak, csv_writer::if_measured(block > 0, bound)});
    if (block > 0 && peak > bound) memory_ok = false;
    if (block == 4 || block == 16) {
      fast_enough_malloc = fast_enough_malloc && t[r] <= t_malloc;
      fast_enough_reused = fast_enough_reused && t[r] <= t_reused;
      const std::string sep = ratios_malloc.empty() ? "" : ", ";
      ratios_malloc += sep + std::to_string(block) + ": " + fmt(t_malloc / t[r], 3);
      ratios_reused += sep + std::to_string(block) + ": " + fmt(t_reused / t[r], 3);
    }
  }
  std::printf("%d repetitions (median)\n\n", reps);
  tab.print();
  std::printf("row blocks of 4 and 16 at least as fast as no schedule (memory reused): speed-ups %s: %s\n",
              ratios_reused.c_str(), pass_or_miss(fast_enough_reused));
  std::printf("row blocks of 4 and 16 at least as fast as no schedule (malloc): speed-ups %s: %s\n",
              ratios_malloc.c_str(), pass_or_miss(fast_enough_malloc));
  std::printf("intermediate <= block rows: %s\n", pass_or_miss(memory_ok));
  return 0;
}
