// Benchmark 6 of docs/benchmarks.md: the time build_pipeline takes for chains of 10, 100 and 1000
// trivial elementwise funcs, with and without a loop on the last func (the others then run in it).
// Usage: build_benchmark [--quick] [--reps N] [--max-seconds S] [--csv FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "benchmark_util.h"
#include "pipeline_bench.h"
#include "slinky/builder/pipeline.h"

using namespace slinky;
using namespace slinky_bench;

namespace {

index_t add_1(const buffer<const int>& in, const buffer<int>& out) {
  const dim& d = out.dim(0);
  for (index_t x = d.min(); x <= d.max(); ++x) out(x) = in(x) + 1;
  return 0;
}

// A chain in -> b1 -> ... -> out of n funcs, each adding 1; the last one looped over x in chunks
// of `step` when step > 0. Built, not lowered: build_pipeline is what is timed.
struct chain_graph {
  node_context ctx;
  std::vector<buffer_expr_ptr> bufs;
  std::vector<func> funcs;

  chain_graph(int n, index_t step) {
    bufs.push_back(buffer_expr::make(ctx, "in", 1, sizeof(int)));
    for (int i = 1; i < n; ++i)
      bufs.push_back(buffer_expr::make(ctx, std::string("b").append(std::to_string(i)), 1, sizeof(int)));
    bufs.push_back(buffer_expr::make(ctx, "out", 1, sizeof(int)));
    var x(ctx, "x");
    funcs.reserve(n);
    for (int i = 0; i < n; ++i) {
      funcs.push_back(func::make(add_1, {{bufs[i], {point(x)}}}, {{bufs[i + 1], {x}}}, {.name = "add_1"}));
    }
    if (step > 0) funcs.back().loops({{x, step}});
  }
};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = has_flag(argc, argv, "--quick");
  const std::string reps_arg = arg(argc, argv, "--reps");
  // Builds expected to take longer than this (extrapolated from the smaller chains) are skipped,
  // and the time spent on the repetitions of one size is kept near it.
  const double max_seconds = std::stod(arg(argc, argv, "--max-seconds", quick ? "5" : "20"));
  csv_writer csv(argc, argv,
                 {"funcs", "loop", "repetitions", "build_ms", "build_per_func_us", "build_vs_100_funcs", "evaluate_ms",
                  "evaluate_vs_100_funcs", "build_measured"});
  print_machine("Benchmark 6: build_pipeline time for chains of trivial funcs");
  const index_t step = 64;
  std::printf("Each repetition builds a fresh graph (untimed) and times build_pipeline alone; median of the\n");
  std::printf("repetitions after one timed warm-up build (fewer repetitions when a build is slow).\n");
  std::printf("\"with a loop\": the last func loops over x in chunks of %lld, the others are computed inside\n",
              static_cast<long long>(step));
  std::printf("that loop (default compute_at). Each built pipeline is run once on 1000 elements and checked.\n");
  std::printf("A build extrapolated to take more than %.0f s (--max-seconds) is skipped.\n\n", max_seconds);
  std::fflush(stdout);

  const std::vector<int> sizes = {10, 100, 1000};
  const std::size_t n_sizes = sizes.size();
  double ms[2][3] = {};        // [with a loop][size], the median
  double eval_ms[2][3] = {};   // evaluate on 1000 elements, the median
  double estimate[2][3] = {};  // ms, extrapolated for the skipped sizes
  int reps[2][3] = {};         // 0: skipped
  for (int with_loop = 1; with_loop >= 0; --with_loop) {
    for (std::size_t si = 0; si < n_sizes; ++si) {
      const int n = sizes[si];
      if (si >= 2) {
        // Extrapolate with the growth exponent between the two previous sizes.
        const double exponent = std::log(ms[with_loop][si - 1] / ms[with_loop][si - 2]) /
                                std::log(static_cast<double>(sizes[si - 1]) / sizes[si - 2]);
        estimate[with_loop][si] =
            ms[with_loop][si - 1] * std::pow(static_cast<double>(n) / sizes[si - 1], std::max(exponent, 1.0));
        if (estimate[with_loop][si] > max_seconds * 1e3) {
          std::printf(
              "skipped: %d funcs%s, extrapolated build time %.0f s (growth exponent %.2f from %d to %d funcs)\n", n,
              with_loop ? " with a loop" : "", estimate[with_loop][si] * 1e-3, exponent, sizes[si - 2], sizes[si - 1]);
          std::fflush(stdout);
          continue;
        }
      }
      auto build = [&](pipeline& p) {
        auto g = std::make_unique<chain_graph>(n, with_loop ? step : 0);
        auto t0 = std::chrono::steady_clock::now();
        p = build_pipeline(g->ctx, {g->bufs.front()}, {g->bufs.back()});
        auto t1 = std::chrono::steady_clock::now();
        return std::chrono::duration<double>(t1 - t0).count();
      };
      pipeline p;
      const double warmup = build(p);
      int& r_count = reps[with_loop][si];
      r_count = n <= 10 ? 21 : n <= 100 ? 11 : 5;
      if (quick) r_count = std::min(r_count, 5);
      // Keep the repetitions of one size within about max_seconds (at least 3).
      r_count = std::max(3, std::min(r_count, static_cast<int>(max_seconds / warmup)));
      if (!reps_arg.empty()) r_count = std::stoi(reps_arg);
      std::vector<double> times;
      for (int r = 0; r < r_count; ++r) times.push_back(build(p));
      std::sort(times.begin(), times.end());
      ms[with_loop][si] = times[times.size() / 2] * 1e3;

      // The last pipeline built (its graph is gone) runs once and is checked.
      const index_t elems = 1000;
      buffer<int, 1> in_buf({elems}), out_buf({elems});
      in_buf.allocate();
      out_buf.allocate();
      for (index_t i = 0; i < elems; ++i) in_buf(i) = static_cast<int>(i * 3 - 500);
      std::memset(out_buf.base(), 0, elems * sizeof(int));
      const std::string what = std::to_string(n) + " funcs" + (with_loop ? " with a loop" : "");
      if (p.evaluate({&in_buf}, {&out_buf}) != 0) wrong_result(what + ": evaluate failed");
      for (index_t i = 0; i < elems; ++i) {
        if (out_buf(i) != in_buf(i) + n) {
          wrong_result(what + ": out(" + std::to_string(i) + ") = " + std::to_string(out_buf(i)) + ", expected " +
                       std::to_string(in_buf(i) + n));
        }
      }
      std::vector<double> eval_times;
      for (int r = 0; r < 11; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        p.evaluate({&in_buf}, {&out_buf});
        eval_times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(eval_times.begin(), eval_times.end());
      eval_ms[with_loop][si] = eval_times[eval_times.size() / 2] * 1e3;
      std::printf("%s: %.3f ms (median of %d), checked; evaluate %.3f ms\n", what.c_str(), ms[with_loop][si], r_count,
                  eval_ms[with_loop][si]);
      std::fflush(stdout);
    }
  }
  std::printf("\n");
  table t({"funcs", "loop", "repetitions", "build (ms)", "per func (us)", "vs 100 funcs", "evaluate (ms)",
           "evaluate vs 100 funcs", "note"});
  for (int with_loop = 1; with_loop >= 0; --with_loop) {
    for (std::size_t si = 0; si < n_sizes; ++si) {
      const bool skipped = reps[with_loop][si] == 0;
      const double m = skipped ? estimate[with_loop][si] : ms[with_loop][si];
      t.add({std::to_string(sizes[si]), with_loop ? "yes" : "no", std::to_string(reps[with_loop][si]), fmt(m, 3),
             fmt(m * 1e3 / sizes[si], 2), fmt(m / ms[with_loop][1], 3), skipped ? "" : fmt(eval_ms[with_loop][si], 3),
             skipped ? "" : fmt(eval_ms[with_loop][si] / eval_ms[with_loop][1], 2),
             skipped ? "extrapolated, not run" : ""});
      csv.add({sizes[si], with_loop ? "yes" : "no", reps[with_loop][si], m, m * 1e3 / sizes[si], m / ms[with_loop][1],
               csv_writer::if_measured(!skipped, eval_ms[with_loop][si]),
               csv_writer::if_measured(!skipped, eval_ms[with_loop][si] / eval_ms[with_loop][1]),
               skipped ? "no (extrapolated)" : "yes"});
    }
  }
  t.print();
  const bool skipped = reps[1][2] == 0;
  const double ratio = (skipped ? estimate[1][2] : ms[1][2]) / ms[1][1];
  std::printf("100 funcs with a loop: %.3f ms (target <= 3 ms): %s\n", ms[1][1], pass_or_miss(ms[1][1] <= 3));
  std::printf("1000 funcs / 100 funcs (with a loop): %.2f%s (target <= 13, BENCHMARKS.md): %s\n", ratio,
              skipped ? " (extrapolated: the 1000-func build was not run)" : "", pass_or_miss(!skipped && ratio <= 13));
  // Without a loop, the bar of docs/benchmarks.md (no quadratic passes: 1000 funcs within 15x).
  if (reps[0][2] != 0) {
    const double ratio_no_loop = ms[0][2] / ms[0][1];
    std::printf("1000 funcs / 100 funcs (no loop): %.2f (target <= 15): %s\n", ratio_no_loop,
                pass_or_miss(ratio_no_loop <= 15));
  }
  // Evaluating a chain costs a constant per func: 10x the funcs should take about 10x the time.
  for (int with_loop = 1; with_loop >= 0; --with_loop) {
    if (reps[with_loop][2] == 0) continue;
    const double eval_ratio = eval_ms[with_loop][2] / eval_ms[with_loop][1];
    std::printf("evaluate 1000 funcs / 100 funcs%s: %.2f (linear: <= 12): %s\n", with_loop ? " (with a loop)" : "",
                eval_ratio, pass_or_miss(eval_ratio <= 12));
  }
  return 0;
}
