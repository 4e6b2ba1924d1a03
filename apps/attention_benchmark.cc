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

#include "bench_extras.h"
#include "benchmark_util.h"
#include "slinky/builder/pipeline.h"

using namespace slinky;
using namespace slinky_bench;

namespace {

// Matrices are buffers indexed (column, row). Each kernel computes its output's crop.

// Rows are dense (dim 0 has stride 4 in every buffer here: slinky allocates intermediates so, and
// folds nothing in dim 0); each kernel walks rows through pointers.
template <typename T>
T* row(const buffer<T>& b, index_t x0, index_t y) {
  return &b(x0, y);
}

// scores(j, i) = sum_k q(k, i) * kt(j, k), in i-k-j order (the j loop vectorizes).
index_t qkt(const buffer<const float>& q, const buffer<const float>& kt, const buffer<float>& s) {
  const index_t j0 = s.dim(0).min(), n = s.dim(0).extent();
  for (index_t i = s.dim(1).min(); i <= s.dim(1).max(); ++i) {
    float* __restrict out = row(s, j0, i);
    for (index_t j = 0; j < n; ++j) out[j] = 0.0f;
    for (index_t k = q.dim(0).min(); k <= q.dim(0).max(); ++k) {
      const float qik = q(k, i);
      const float* __restrict in = row(kt, j0, k);
      for (index_t j = 0; j < n; ++j) out[j] += qik * in[j];
    }
  }
  return 0;
}

// m(i) = max_j s(j, i), or sum_j s(j, i).
template <bool is_max>
index_t row_reduce(const buffer<const float>& s, const buffer<float>& m) {
  const index_t j0 = s.dim(0).min(), n = s.dim(0).extent();
  for (index_t i = m.dim(0).min(); i <= m.dim(0).max(); ++i) {
    const float* __restrict in = row(s, j0, i);
    float r = is_max ? -INFINITY : 0.0f;
    for (index_t j = 0; j < n; ++j) r = is_max ? std::max(r, in[j]) : r + in[j];
    m(i) = r;
  }
  return 0;
}

// e(j, i) = exp(s(j, i) - m(i)) (is_exp), or s(j, i) / m(i).
template <bool is_exp>
index_t row_map(const buffer<const float>& s, const buffer<const float>& m, const buffer<float>& e) {
  const index_t j0 = e.dim(0).min(), n = e.dim(0).extent();
  for (index_t i = e.dim(1).min(); i <= e.dim(1).max(); ++i) {
    const float mi = m(i);
    const float* __restrict in = row(s, j0, i);
    float* __restrict out = row(e, j0, i);
    for (index_t j = 0; j < n; ++j) out[j] = is_exp ? std::exp(in[j] - mi) : in[j] / mi;
  }
  return 0;
}

struct attention {
  node_context ctx;
  pipeline p;

  // block: query rows per iteration of a loop over the output's rows (0: no schedule).
  attention(index_t block) {
    auto q = buffer_expr::make(ctx, "q", 2, sizeof(float));
    auto kt = buffer_expr::make(ctx, "kt", 2, sizeof(float));
    auto v = buffer_expr::make(ctx, "v", 2, sizeof(float));
    auto scores = buffer_expr::make(ctx, "scores", 2, sizeof(float));
    auto row_max = buffer_expr::make(ctx, "row_max", 1, sizeof(float));
    auto e = buffer_expr::make(ctx, "e", 2, sizeof(float));
    auto row_sum = buffer_expr::make(ctx, "row_sum", 1, sizeof(float));
    auto prob = buffer_expr::make(ctx, "prob", 2, sizeof(float));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(float));
    var i(ctx, "i"), j(ctx, "j");
    const interval_expr head = q->dim(0).bounds;
    const interval_expr keys = kt->dim(0).bounds;
    func f_scores =
        func::make(qkt, {{q, {head, point(i)}}, {kt, {point(j), head}}}, {{scores, {j, i}}}, {.name = "scores"});
    func f_max = func::make(row_reduce<true>, {{scores, {keys, point(i)}}}, {{row_max, {i}}}, {.name = "row_max"});
    func f_exp = func::make(row_map<true>, {{scores, {point(j), point(i)}}, {row_max, {point(i)}}}, {{e, {j, i}}},
                            {.name = "exp"});
    func f_sum = func::make(row_reduce<false>, {{e, {keys, point(i)}}}, {{row_sum, {i}}}, {.name = "row_sum"});
    func f_prob = func::make(row_map<false>, {{e, {point(j), point(i)}}, {row_sum, {point(i)}}}, {{prob, {j, i}}},
                             {.name = "prob"});
    // out(c, i) = sum_j prob(j, i) * v(c, j): the same kernel as q x kt.
    func f_out = func::make(qkt, {{prob, {keys, point(i)}}, {v, {point(j), keys}}}, {{out, {j, i}}}, {.name = "out"});
    if (block > 0) f_out.loops({{i, block}});
    p = build_pipeline(ctx, {q, kt, v}, {out});
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
    std::vector<float> s(sh.keys);
    for (index_t r = 0; r < sh.rows; ++r) {
      float mx = -INFINITY;
      for (index_t c = 0; c < sh.keys; ++c) {
        float sum = 0;
        for (index_t k = 0; k < d; ++k) sum += q(k, r) * kt(c, k);
        mx = std::max(mx, s[c] = sum);
      }
      float total = 0;
      for (index_t c = 0; c < sh.keys; ++c) total += (s[c] = std::exp(s[c] - mx));
      for (index_t col = 0; col < d; ++col) {
        float sum = 0;
        for (index_t c = 0; c < sh.keys; ++c) sum += s[c] / total * v(col, c);
        ref(col, r) = sum;
      }
    }
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
