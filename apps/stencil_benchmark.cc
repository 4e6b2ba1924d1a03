// Benchmark 4 of docs/benchmarks.md: stencil chains on a 4096x4096 float image (elementwise then one or
// two 3x3 boxes), no schedule vs a loop over rows vs strips of 8 and 32 rows; time and memory.
// Usage: stencil_benchmark [--quick] [--cpu-time] [--reps N] [--size N] [--print] [--csv FILE]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "benchmark_util.h"
#include "pipeline_bench.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"

using namespace slinky;
using namespace slinky_bench;
using namespace slinky_bench::stencil_chain;

namespace {

// in -> e (elementwise) -> b1 (box) [-> b2 (box)] = out, with out in a loop over rows in steps
// of `strip` (0: no loop); the other stages are computed in that loop by default.
struct stencil_pipeline {
  node_context ctx;
  pipeline p;
  std::vector<var> intermediates;  // e, b1 (for 3 stages)
  std::vector<int> borders;        // how much wider than out each intermediate is, per side

  stencil_pipeline(int stages, index_t strip) {
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(float));
    auto e = buffer_expr::make(ctx, "e", 2, sizeof(float));
    auto b1 = buffer_expr::make(ctx, stages == 2 ? "out" : "b1", 2, sizeof(float));
    var x(ctx, "x"), y(ctx, "y");
    const box_expr pt = {point(x), point(y)};
    const box_expr nbhd = {bounds(x - 1, x + 1), bounds(y - 1, y + 1)};
    func fe = func::make(scale_offset, {{in, pt}}, {{e, {x, y}}}, {.name = "scale_offset"});
    func f1 = func::make(box, {{e, nbhd}}, {{b1, {x, y}}}, {.name = "box1"});
    func f2;
    buffer_expr_ptr out = b1;
    intermediates.push_back(e->sym());
    borders.push_back(stages - 1);
    if (stages == 3) {
      out = buffer_expr::make(ctx, "out", 2, sizeof(float));
      f2 = func::make(box, {{b1, nbhd}}, {{out, {x, y}}}, {.name = "box2"});
      intermediates.push_back(b1->sym());
      borders.push_back(1);
    }
    func& last = stages == 3 ? f2 : f1;
    if (strip > 0) last.loops({{y, strip}});
    p = build_pipeline(ctx, {in}, {out});
  }
};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = has_flag(argc, argv, "--quick");
  const bool print_programs = has_flag(argc, argv, "--print");
  const bool cpu_time = has_flag(argc, argv, "--cpu-time");
  const int reps = std::stoi(arg(argc, argv, "--reps", quick ? "5" : "9"));
  const int slow_reps = 3;
  const index_t size = std::stol(arg(argc, argv, "--size", quick ? "2048" : "4096"));
  print_machine("Benchmark 4: stencil chains, no schedule vs rows vs strips");
  print_fresh_page_cost();
  std::printf("%lldx%lld float output. Times are medians of %d repetitions interleaved in rounds (after one\n",
              static_cast<long long>(size), static_cast<long long>(size), reps);
  std::printf("warm-up), default eval_config. \"no schedule (malloc)\" allocates its intermediates with the\n");
  std::printf("default allocator on every run: fresh pages, whose first touch is very slow on this sandboxed\n");
  std::printf("machine; it is timed alone, median of %d runs. \"no schedule (memory reused)\" gets them from an\n",
              slow_reps);
  std::printf("allocate hook that reuses the previous run's blocks. Peak memory: allocate/free hooks with\n");
  std::printf("auto_stack_threshold = 0. Bound per stage: its width x (strip + 2) x 4 bytes.\n");
  std::printf("Clock: %s.\n\n", clock_name(cpu_time));

  const std::vector<index_t> strips = {1, 8, 32};
  bool memory_ok = true;
  // Per intermediate: e (both chains) and b1 (3 stages only; empty for 2).
  csv_writer csv(argc, argv,
                 {"stages", "size", "schedule", "strip_rows", "repetitions", "time_ms", "speedup_vs_no_schedule_malloc",
                  "speedup_vs_no_schedule_memory_reused", "peak_e_bytes", "bound_e_bytes", "peak_b1_bytes",
                  "bound_b1_bytes", "peak_intermediate_bytes"});
  for (int stages : {2, 3}) {
    const int border = stages - 1;
    buffer<float, 2> in_buf({size + 2 * border, size + 2 * border}), out_buf({size, size}), ref({size, size});
    in_buf.translate(-border, -border);
    in_buf.allocate();
    out_buf.allocate();
    ref.allocate();
    fill_stencil_chain_input(in_buf, size, border);
    stencil_chain_reference(in_buf, size, stages, ref);
    const std::string name = std::to_string(stages) + " stages";
    auto check = [&](const std::string& what) {
      for (index_t y = 0; y < size; ++y) {
        for (index_t x = 0; x < size; ++x) {
          if (out_buf(x, y) != ref(x, y)) {
            wrong_result(name + ", " + what + ": out(" + std::to_string(x) + ", " + std::to_string(y) +
                         ") = " + std::to_string(out_buf(x, y)) + ", expected " + std::to_string(ref(x, y)));
          }
        }
      }
    };
    auto clear = [&]() { std::memset(out_buf.base(), 0, size * size * sizeof(float)); };
    auto run = [&](const pipeline& p, eval_context* ctx) {
      const index_t r = ctx ? p.evaluate({&in_buf}, {&out_buf}, *ctx) : p.evaluate({&in_buf}, {&out_buf});
      if (r != 0) wrong_result(name + ": evaluate failed");
    };

    // Schedules: 0 is no schedule, otherwise the strip height.
    std::vector<index_t> schedules = {0};
    schedules.insert(schedules.end(), strips.begin(), strips.end());
    std::vector<std::unique_ptr<stencil_pipeline>> pipelines;
    std::vector<std::unique_ptr<alloc_tracker>> trackers;
    std::vector<std::string> names;
    for (index_t s : schedules) {
      names.push_back(s == 0   ? std::string("no schedule")
                      : s == 1 ? std::string("rows (y, step 1)")
                               : "strips of " + std::to_string(s) + " rows");
      pipelines.push_back(std::make_unique<stencil_pipeline>(stages, s));
      trackers.push_back(std::make_unique<alloc_tracker>(0, /*reuse_memory=*/s == 0));
      if (print_programs)
        std::cout << "### " << name << ", " << names.back() << "\n\n```\n" << pipelines.back()->p.body << "```\n\n";
      clear();
      run(pipelines.back()->p, nullptr);
      check(names.back());
      clear();
      run(pipelines.back()->p, &trackers.back()->context);
      check(names.back() + " (auto_stack_threshold = 0)");
    }

    const double t_malloc = median_of([&]() { run(pipelines[0]->p, nullptr); }, slow_reps, 0, cpu_time);
    check("no schedule, after timing");
    std::vector<std::function<void()>> fns;
    fns.push_back([&]() { run(pipelines[0]->p, &trackers[0]->context); });
    for (std::size_t i = 1; i < pipelines.size(); ++i) fns.push_back([&, i]() { run(pipelines[i]->p, nullptr); });
    clear();
    std::vector<double> t = interleaved_medians(fns, reps, cpu_time);
    check(names.back() + ", after timing");

    std::printf("## %s: %s\n\n", name.c_str(),
                stages == 2 ? "e = in * 2 + 1, out = box3x3(e)" : "e = in * 2 + 1, b1 = box3x3(e), out = box3x3(b1)");
    std::vector<std::string> header = {"schedule", "repetitions", "time (ms)", "speed-up vs no schedule (malloc)",
                                       "speed-up vs no schedule (memory reused)"};
    const char* stage_names[] = {"e", "b1"};
    for (int i = 0; i < stages - 1; ++i) {
      header.push_back(std::string("peak ") + stage_names[i] + " (bytes)");
      header.push_back(std::string("bound ") + stage_names[i] + " (bytes)");
    }
    header.push_back("peak total (bytes)");
    table tab(header);
    double best_malloc = 0, best_reused = 0;
    std::string best_name;
    for (std::size_t i = 0; i <= pipelines.size(); ++i) {
      // Row 0: no schedule with malloc; row i > 0: pipelines[i - 1] from the interleaved timing.
      const std::size_t pi = i == 0 ? 0 : i - 1;
      const double sec = i == 0 ? t_malloc : t[i - 1];
      const index_t strip = schedules[pi];
      std::vector<std::string> cells = {i == 0   ? "no schedule (malloc)"
                                        : i == 1 ? "no schedule (memory reused)"
                                                 : names[pi],
                                        std::to_string(i == 0 ? slow_reps : reps), fmt(sec * 1e3, 2),
                                        fmt(t_malloc / sec, 2), fmt(t[0] / sec, 2)};
      std::vector<csv_writer::cell> csv_row = {stages,
                                               size,
                                               i == 0   ? "no_schedule_malloc"
                                               : i == 1 ? "no_schedule_memory_reused"
                                                        : "strips",
                                               csv_writer::if_measured(strip > 0, strip),
                                               i == 0 ? slow_reps : reps,
                                               sec * 1e3,
                                               t_malloc / sec,
                                               t[0] / sec};
      for (int s = 0; s < stages - 1; ++s) {
        const index_t peak = trackers[pi]->peak_of(pipelines[pi]->intermediates[s]);
        const index_t width = size + 2 * pipelines[pi]->borders[s];
        const index_t bound = strip == 0 ? width * (size + 2 * pipelines[pi]->borders[s]) * 4 : width * (strip + 2) * 4;
        cells.push_back(std::to_string(peak));
        cells.push_back(strip == 0 ? "" : std::to_string(bound));
        csv_row.push_back(peak);
        csv_row.push_back(csv_writer::if_measured(strip > 0, bound));
        if (strip > 0 && peak > bound) memory_ok = false;
      }
      cells.push_back(std::to_string(trackers[pi]->peak));
      for (int s = stages - 1; s < 2; ++s) csv_row.insert(csv_row.end(), {{}, {}});
      csv_row.push_back(trackers[pi]->peak);
      csv.add(csv_row);
      tab.add(cells);
      if (i >= 2 && t_malloc / sec > best_malloc) {
        best_malloc = t_malloc / sec;
        best_reused = t[0] / sec;
        best_name = names[pi];
      }
    }
    tab.print();
    std::printf(
        "best schedule (%s) speed-up (%d stages), vs no schedule with memory reused: %.2f (target >= 3.5): %s\n",
        best_name.c_str(), stages, best_reused, pass_or_miss(best_reused >= 3.5));
    std::printf("best schedule (%s) speed-up (%d stages), vs no schedule with malloc: %.2f (target >= 3.5): %s\n\n",
                best_name.c_str(), stages, best_malloc, pass_or_miss(best_malloc >= 3.5));
  }
  std::printf("intermediates <= width x (strip + 2) per stage: %s\n", pass_or_miss(memory_ok));
  return 0;
}
