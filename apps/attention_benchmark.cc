// An inference-style workload of docs/benchmarks.md: attention for one head, Q x K^T -> row
// softmax (max, subtract and exp, sum, divide) -> x V, sequence lengths 256 and 1024 (and the
// single-row decode case), head size 64, with no schedule and with the query rows in blocks
// (every func computed in the block loop). Prints time, peak intermediate memory and heap
// allocations.
// Usage: attention_benchmark [--quick] [--cpu-time] [--reps N] [--csv FILE]
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

// The graph is workloads::attention (workloads.h).
struct attention {
  node_context ctx;
  pipeline p;

  // block: query rows per iteration of a loop over the output's rows (0: no schedule).
  attention(index_t block) {
    graph g = workloads::attention(ctx);
    func& f_out = g.funcs.back();
    if (block > 0) f_out.loops({{f_out.outputs()[0].dims[1], block}});
    p = build_pipeline(ctx, g.inputs, g.outputs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = has_flag(argc, argv, "--quick");
  const bool cpu_time = has_flag(argc, argv, "--cpu-time");
  const int reps = std::stoi(arg(argc, argv, "--reps", quick ? "3" : "7"));
  constexpr index_t d = 64;
  print_machine("ML workload 4: attention, one head, no schedule vs query rows in blocks");
  std::printf("Head size %lld; q is (d, rows), kt (keys, d), v (d, keys). Times are medians of %d repetitions\n",
              static_cast<long long>(d), reps);
  std::printf("interleaved in rounds (after one warm-up). Peak intermediates and allocations through the\n");
  std::printf("allocate/free hooks (auto_stack_threshold = 0). Clock: %s.\n\n", clock_name(cpu_time));

  table tab(
      {"rows x keys", "schedule", "time (ms)", "peak intermediates (bytes)", "allocations", "score matrix (bytes)"});
  csv_writer csv(argc, argv,
                 {"rows", "keys", "head_size", "schedule", "block_rows", "repetitions", "time_ms",
                  "peak_intermediate_bytes", "allocations", "score_matrix_bytes"});
  struct shape {
    index_t rows, keys;
  };
  std::vector<shape> shapes = {{256, 256}, {1024, 1024}, {1, 1024}};
  if (quick) shapes = {{256, 256}, {1, 256}};
  bool two_matrices = true;
  for (const shape& sh : shapes) {
    buffer<float, 2> q({d, sh.rows}), kt({sh.keys, d}), v({d, sh.keys}), out({d, sh.rows});
    for (auto* b : {&q, &kt, &v, &out}) b->allocate();
    unsigned seed = 7;
    for (auto* b : {&q, &kt, &v}) {
      for_each_element(
          [&](float* x) {
            seed = seed * 1664525u + 1013904223u;
            *x = static_cast<float>(seed >> 8) / static_cast<float>(1 << 24) - 0.5f;
          },
          *b);
    }
    // The reference, row by row.
    buffer<float, 2> ref({d, sh.rows});
    ref.allocate();
    workloads::attention_reference(q, kt, v, ref);
    const std::string dims = std::to_string(sh.rows) + " x " + std::to_string(sh.keys);
    const std::vector<index_t> blocks = sh.rows > 16 ? std::vector<index_t>{0, 16} : std::vector<index_t>{0};
    std::vector<std::unique_ptr<attention>> pipelines;
    std::vector<std::unique_ptr<alloc_tracker>> trackers;
    std::vector<std::function<void()>> fns;
    for (index_t block : blocks) {
      pipelines.push_back(std::make_unique<attention>(block));
      trackers.push_back(std::make_unique<alloc_tracker>(0));
      attention& a = *pipelines.back();
      alloc_tracker& t = *trackers.back();
      const std::string what = dims + (block ? ", blocks of " + std::to_string(block) : ", no schedule");
      if (a.p.evaluate({&q, &kt, &v}, {&out}, t.context) != 0) wrong_result(what + ": evaluate failed");
      for (index_t r = 0; r < sh.rows; ++r) {
        for (index_t c = 0; c < d; ++c) {
          if (!(std::abs(out(c, r) - ref(c, r)) <= 1e-4f)) {
            wrong_result(what + ": out(" + std::to_string(c) + ", " + std::to_string(r) +
                         ") = " + std::to_string(out(c, r)) + ", expected " + std::to_string(ref(c, r)));
          }
        }
      }
      fns.push_back([&a, &q, &kt, &v, &out]() { a.p.evaluate({&q, &kt, &v}, {&out}); });
    }
    const std::vector<double> times = interleaved_medians(fns, reps, cpu_time);
    const index_t matrix = sh.rows * sh.keys * static_cast<index_t>(sizeof(float));
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const alloc_tracker& t = *trackers[b];
      tab.add({dims, blocks[b] ? "rows in blocks of " + std::to_string(blocks[b]) : "no schedule",
               fmt(times[b] * 1e3, 3), std::to_string(t.peak), std::to_string(t.allocations), std::to_string(matrix)});
      csv.add({sh.rows, sh.keys, d, blocks[b] ? "row_blocks" : "no_schedule",
               csv_writer::if_measured(blocks[b] > 0, blocks[b]), reps, times[b] * 1e3, t.peak, t.allocations, matrix});
      // Unscheduled: scores, e and prob are rows x keys each; at most two live at once (plus the
      // row vectors).
      if (blocks[b] == 0) two_matrices = two_matrices && t.peak <= 2 * matrix + 2 * sh.rows * index_t{sizeof(float)};
    }
  }
  tab.print();
  std::printf("\nno schedule: at most two score matrices live at once (of the three computed): %s\n",
              pass_or_miss(two_matrices));
  return 0;
}
