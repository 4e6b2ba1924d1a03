// Benchmark 1 of docs/benchmarks.md: the interpreter's cost per call. A copy through an intermediate
// (in -> intm -> out, both stages memcpy their rows), rows in a pipeline loop vs one call for all.
// Usage: overhead_benchmark [--quick] [--cpu-time] [--reps N] [--csv FILE]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "benchmark_util.h"
#include "pipeline_bench.h"
#include "slinky/builder/pipeline.h"

using namespace slinky;
using namespace slinky_bench;

namespace {

// Copies the rows of out's crop from in, one memcpy per row: the founding document's "implicit
// loop" (the callback loops over the rows; dim 0 is dense). Both stages of the pipeline are this
// callback. Row pointers step by the strides, as a user should write it; rows of a ring buffer
// that wrap around its fold are addressed one by one.
index_t copy_rows(const buffer<const char>& in, const buffer<char>& out) {
  const dim& ox = out.dim(0);
  const dim& oy = out.dim(1);
  if (ox.empty() || oy.empty()) return 0;
  const std::size_t row_bytes = static_cast<std::size_t>(ox.extent());
  const dim& iy = in.dim(1);
  const index_t x = ox.min();
  if (!oy.is_folded() && !iy.is_folded(oy.min(), oy.max())) {
    char* dst = &out(x, oy.min());
    const char* src = &in(x, oy.min());
    for (index_t y = oy.min(); y <= oy.max(); ++y, dst += oy.stride(), src += iy.stride()) {
      std::memcpy(dst, src, row_bytes);
    }
  } else {
    for (index_t y = oy.min(); y <= oy.max(); ++y) std::memcpy(&out(x, y), &in(x, y), row_bytes);
  }
  return 0;
}

// in -> intm -> out, with the rows of out in a loop of step 1 (intm then computed in the loop,
// one row at a time) or not.
pipeline make_pipeline(bool loop) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, 1);
  auto intm = buffer_expr::make(ctx, "intm", 2, 1);
  auto out = buffer_expr::make(ctx, "out", 2, 1);
  var x(ctx, "x"), y(ctx, "y");
  func f1 = func::make(copy_rows, {{in, {point(x), point(y)}}}, {{intm, {x, y}}}, {.name = "copy_in"});
  func f2 = func::make(copy_rows, {{intm, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "copy_out"});
  if (loop) f2.loops({{y, 1}});
  return build_pipeline(ctx, {in}, {out});
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = has_flag(argc, argv, "--quick");
  const bool cpu_time = has_flag(argc, argv, "--cpu-time");
  const int reps = std::stoi(arg(argc, argv, "--reps", quick ? "7" : "21"));
  print_machine("Benchmark 1: overhead, copy through an intermediate, rows in a loop vs one call");

  const pipeline p_loop = make_pipeline(true);
  const pipeline p_noloop = make_pipeline(false);

  const index_t KB = 1024;
  std::vector<index_t> totals = {32 * KB, 128 * KB, 512 * KB, 2048 * KB, 8192 * KB};
  if (quick) totals.pop_back();
  const std::vector<index_t> row_sizes = {1 * KB, 2 * KB, 4 * KB, 8 * KB, 16 * KB, 32 * KB};
  // Each timed sample runs the pipeline enough times to move about this many bytes.
  const index_t bytes_per_sample = 8 * KB * KB;

  std::printf("Both variants use the default eval_config (intermediates up to 4096 bytes on the stack).\n");
  std::printf("Each cell: median of %d interleaved samples (loop, no loop, loop, ...); a sample runs the\n", reps);
  std::printf("pipeline %lld MB / total times (at least once). Throughput is bytes of output per second.\n",
              static_cast<long long>(bytes_per_sample / (KB * KB)));
  std::printf("Clock: %s.\n\n", clock_name(cpu_time));

  table t(
      {"total", "row size", "rows", "loop (GB/s)", "no loop (GB/s)", "loop / no loop", "loop overhead per row (ns)"});
  csv_writer csv(argc, argv,
                 {"total_bytes", "row_bytes", "rows", "repetitions", "loop_time_us", "no_loop_time_us", "loop_gb_per_s",
                  "no_loop_gb_per_s", "loop_over_no_loop_throughput", "loop_overhead_per_row_ns"});
  double min_ratio_1k = 1e9, min_ratio_2k = 1e9;
  for (index_t total : totals) {
    for (index_t row : row_sizes) {
      if (row > total) continue;
      const index_t rows = total / row;
      buffer<char, 2> in_buf({row, rows}), out_buf({row, rows});
      in_buf.allocate();
      out_buf.allocate();
      for (index_t y = 0; y < rows; ++y) {
        for (index_t x = 0; x < row; ++x) in_buf(x, y) = static_cast<char>((x * 131 + y * 7) & 0xff);
      }
      auto check = [&](const char* variant) {
        if (std::memcmp(in_buf.base(), out_buf.base(), total) != 0) {
          wrong_result(std::string(variant) + ": total " + std::to_string(total) + ", rows of " + std::to_string(row));
        }
      };
      // A first checked run of each variant, from a cleared output.
      for (const pipeline* p : {&p_loop, &p_noloop}) {
        std::memset(out_buf.base(), 0, total);
        if (p->evaluate({&in_buf}, {&out_buf}) != 0) wrong_result("evaluate failed");
        check(p == &p_loop ? "loop" : "no loop");
      }
      const index_t iters = std::max<index_t>(1, bytes_per_sample / total);
      auto runner = [&](const pipeline& p) {
        return [&in_buf, &out_buf, iters, pp = &p]() {
          for (index_t i = 0; i < iters; ++i) {
            if (pp->evaluate({&in_buf}, {&out_buf}) != 0) wrong_result("evaluate failed");
          }
        };
      };
      std::memset(out_buf.base(), 0, total);
      std::vector<double> s = interleaved_medians({runner(p_loop), runner(p_noloop)}, reps, cpu_time);
      check("after timing");
      const double t_loop = s[0] / iters, t_noloop = s[1] / iters;
      const double gbs_loop = total / t_loop * 1e-9, gbs_noloop = total / t_noloop * 1e-9;
      const double ratio = t_noloop / t_loop;
      const double overhead_ns = (t_loop - t_noloop) / rows * 1e9;
      if (total <= 2048 * KB && row == 1 * KB) min_ratio_1k = std::min(min_ratio_1k, ratio);
      if (total <= 2048 * KB && row == 2 * KB) min_ratio_2k = std::min(min_ratio_2k, ratio);
      t.add({std::to_string(total / KB) + " KB", std::to_string(row / KB) + " KB", std::to_string(rows),
             fmt(gbs_loop, 2), fmt(gbs_noloop, 2), fmt(ratio, 2), fmt(overhead_ns, 1)});
      csv.add({total, row, rows, reps, t_loop * 1e6, t_noloop * 1e6, gbs_loop, gbs_noloop, ratio, overhead_ns});
    }
  }
  t.print();
  std::printf("ratio with 1 KB rows (totals <= 2 MB): min %.2f (target >= 0.85): %s\n", min_ratio_1k,
              pass_or_miss(min_ratio_1k >= 0.85));
  std::printf("ratio with 2 KB rows (totals <= 2 MB): min %.2f (target >= 0.95): %s\n", min_ratio_2k,
              pass_or_miss(min_ratio_2k >= 0.95));
  return 0;
}
