// Pipeline graphs shared by several benchmarks: the kernels and the unscheduled graph of each, so
// that a benchmark applies its own schedules (or the automatic scheduler's) to the same funcs.
//
// - elementwise_chain, stencil_chain: benchmarks 3 and 4 (parallel_benchmark, scheduler_benchmark).
// - matmul_chain: benchmark 5's (a x b) x c (matmul_benchmark, scheduler_benchmark).
// - attention: ML workload 4, one head (attention_benchmark, scheduler_benchmark).
// - padded_stencil: a scaled image padded with zeros by a copy, then a 3x3 box (alias_benchmark,
//   scheduler_benchmark).
// - packed_matmul, convolution, reduction: ML workloads 1, 6 and 5 (scheduler_benchmark).
//
// Matrices are buffers indexed (column, row): dim 0 is contiguous. Each graph's funcs are listed
// producers first; the last one produces the output. Nothing here sets a schedule.
#ifndef SLINKY_APPS_WORKLOADS_H
#define SLINKY_APPS_WORKLOADS_H

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "elementwise_stage.h"
#include "pipeline_bench.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/buffer.h"

namespace slinky_bench {

// A pipeline graph: its inputs and outputs and the funcs that compute them (producers first).
struct graph {
  std::vector<slinky::buffer_expr_ptr> inputs, outputs;
  std::vector<slinky::func> funcs;
};

namespace workloads {
using namespace slinky;

// The callback of a stage of the chains below, and a function that may wrap each one (e.g. to count
// the points computed); null: none.
using float_stage = std::function<index_t(const buffer<const float>&, const buffer<float>&)>;
using stage_wrapper = std::function<float_stage(float_stage)>;

inline float_stage wrapped(float_stage s, const stage_wrapper& wrap) { return wrap ? wrap(std::move(s)) : s; }

// Benchmark 3's chain: in -> b1 -> ... -> b(k - 1) -> out, stage i computing in * scale(i) +
// offset(i) (elementwise_stage.h). funcs: stage0 ... stage(k - 1).
inline graph elementwise_chain(node_context& ctx, int k, const stage_wrapper& wrap = nullptr) {
  graph g;
  var x(ctx, "x");
  g.inputs = {buffer_expr::make(ctx, "in", 1, sizeof(float))};
  buffer_expr_ptr prev = g.inputs[0];
  g.funcs.reserve(k);
  for (int i = 0; i < k; ++i) {
    auto next = buffer_expr::make(ctx, i + 1 == k ? std::string("out") : std::string("b").append(std::to_string(i + 1)),
                                  1, sizeof(float));
    g.funcs.push_back(func::make<const float, float>(wrapped(stage{scale(i), offset(i)}, wrap), {{prev, {point(x)}}},
                                                     {{next, {x}}}, {.name = "stage" + std::to_string(i)}));
    prev = next;
  }
  g.outputs = {prev};
  return g;
}

// Benchmark 4's chains on elements of type T: in -> e (in * 2 + 1) -> 3x3 box [-> 3x3 box]
// (pipeline_bench.h), each stage's callback passed through `wrap` if given. funcs: scale_offset,
// box1 [, box2].
template <typename T>
graph stencil_chain_of(node_context& ctx, int stages,
                       const std::function<std::function<index_t(const buffer<const T>&, const buffer<T>&)>(
                           std::function<index_t(const buffer<const T>&, const buffer<T>&)>)>& wrap = nullptr) {
  using stage_fn = std::function<index_t(const buffer<const T>&, const buffer<T>&)>;
  const auto wrapped_stage = [&](stage_fn s) { return wrap ? wrap(std::move(s)) : s; };
  graph g;
  var x(ctx, "x"), y(ctx, "y");
  const box_expr pt = {point(x), point(y)};
  const box_expr nbhd = {bounds(x - 1, x + 1), bounds(y - 1, y + 1)};
  g.inputs = {buffer_expr::make(ctx, "in", 2, sizeof(T))};
  auto e = buffer_expr::make(ctx, "e", 2, sizeof(T));
  g.funcs.reserve(stages);
  g.funcs.push_back(func::make<const T, T>(wrapped_stage(stencil_chain::scale_offset_of<T>), {{g.inputs[0], pt}},
                                           {{e, {x, y}}}, {.name = "scale_offset"}));
  buffer_expr_ptr prev = e;
  for (int s = 1; s < stages; ++s) {
    auto next = buffer_expr::make(
        ctx, s + 1 == stages ? std::string("out") : std::string("b").append(std::to_string(s)), 2, sizeof(T));
    g.funcs.push_back(func::make<const T, T>(wrapped_stage(stencil_chain::box_of<T>), {{prev, nbhd}}, {{next, {x, y}}},
                                             {.name = "box" + std::to_string(s)}));
    prev = next;
  }
  g.outputs = {prev};
  return g;
}

// Benchmark 4's chains on floats.
inline graph stencil_chain(node_context& ctx, int stages, const stage_wrapper& wrap = nullptr) {
  return stencil_chain_of<float>(ctx, stages, wrap);
}

// c(j, i) = sum_k a(k, i) b(j, k) over c's crop, in i-k-j order (the inner loop runs along rows of
// b and c and vectorizes).
inline index_t matmul(const buffer<const float>& a, const buffer<const float>& b, const buffer<float>& c) {
  const dim& cj = c.dim(0);
  const dim& ci = c.dim(1);
  const dim& ak = a.dim(0);
  if (cj.empty() || ci.empty()) return 0;
  const bool dense = c.dim(0).stride() == sizeof(float) && b.dim(0).stride() == sizeof(float) &&
                     !c.dim(0).is_folded(cj.min(), cj.max()) && !b.dim(0).is_folded(cj.min(), cj.max());
  for (index_t i = ci.min(); i <= ci.max(); ++i) {
    if (dense) {
      float* __restrict crow = &c(cj.min(), i);
      const index_t n = cj.extent();
      for (index_t j = 0; j < n; ++j) crow[j] = 0.0f;
      for (index_t k = ak.min(); k <= ak.max(); ++k) {
        const float aik = a(k, i);
        const float* __restrict brow = &b(cj.min(), k);
        for (index_t j = 0; j < n; ++j) crow[j] += aik * brow[j];
      }
    } else {
      for (index_t j = cj.min(); j <= cj.max(); ++j) c(j, i) = 0.0f;
      for (index_t k = ak.min(); k <= ak.max(); ++k) {
        const float aik = a(k, i);
        for (index_t j = cj.min(); j <= cj.max(); ++j) c(j, i) += aik * b(j, k);
      }
    }
  }
  return 0;
}

// A product callback: c(j, i) = sum_k a(k, i) b(j, k) over c's crop.
using product_fn = index_t (*)(const buffer<const float>&, const buffer<const float>&, const buffer<float>&);

// The product as kernel libraries write it: a register-blocked micro-kernel computing a tile of 4
// rows x 8 columns of c, its accumulators held in registers over the whole reduction (a row of b
// loaded once for 4 rows of c, each load used 4 times). A crop of fewer than 4 rows (or the rows
// left over) goes through the same micro-kernel one row at a time, which loads a row of b for every
// row of c: a callback given blocks of 4 rows or more is faster per row than one given single rows.
// Every element sums its products in the order of k whatever the blocking, so the result does not
// depend on how the rows are split between calls.
namespace blocked {

typedef float f4 __attribute__((vector_size(16)));
inline f4 load(const float* p) {
  f4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void store(float* p, f4 v) { std::memcpy(p, &v, sizeof(v)); }

// R rows (a[r], c[r]) x 8 columns of c; b points at the tile's first column of row k = 0.
template <int R>
inline void tile(const float* const* a, const float* b, index_t b_stride, index_t nk, float* const* c, index_t j) {
  f4 acc[R][2] = {};
  for (index_t k = 0; k < nk; ++k, b += b_stride) {
    const f4 b0 = load(b), b1 = load(b + 4);
    for (int r = 0; r < R; ++r) {
      const float x = a[r][k];
      acc[r][0] += x * b0;
      acc[r][1] += x * b1;
    }
  }
  for (int r = 0; r < R; ++r) {
    store(c[r] + j, acc[r][0]);
    store(c[r] + j + 4, acc[r][1]);
  }
}

// Rows i to i + R - 1 of c (all columns), b pointing at b(j0, k0).
template <int R>
inline void rows(const buffer<const float>& a, const float* b, index_t b_stride, const buffer<float>& c, index_t i,
                 index_t j0, index_t n, index_t k0, index_t nk) {
  const float* ar[R];
  float* cr[R];
  for (int r = 0; r < R; ++r) {
    ar[r] = &a(k0, i + r);
    cr[r] = &c(j0, i + r);
  }
  index_t j = 0;
  for (; j + 8 <= n; j += 8) tile<R>(ar, b + j, b_stride, nk, cr, j);
  for (; j < n; ++j) {
    for (int r = 0; r < R; ++r) {
      float s = 0.0f;
      for (index_t k = 0; k < nk; ++k) s += ar[r][k] * b[k * b_stride + j];
      cr[r][j] = s;
    }
  }
}

inline index_t product(const buffer<const float>& a, const buffer<const float>& b, const buffer<float>& c) {
  const dim& cj = c.dim(0);
  const dim& ci = c.dim(1);
  const dim& ak = a.dim(0);
  if (cj.empty() || ci.empty()) return 0;
  // Rows of a, b and c dense, b's rows not folded (slinky folds intermediates only along rows,
  // dim 1, so a row of c or a is dense when dim 0's stride is one float).
  const bool dense = c.dim(0).stride() == sizeof(float) && b.dim(0).stride() == sizeof(float) &&
                     a.dim(0).stride() == sizeof(float) && !c.dim(0).is_folded(cj.min(), cj.max()) &&
                     !b.dim(0).is_folded(cj.min(), cj.max()) && !a.dim(0).is_folded(ak.min(), ak.max()) &&
                     !b.dim(1).is_folded(ak.min(), ak.max()) && b.dim(1).stride() % sizeof(float) == 0;
  if (ak.empty() || !dense) return matmul(a, b, c);
  const index_t b_stride = b.dim(1).stride() / static_cast<index_t>(sizeof(float));
  const float* b0 = &b(cj.min(), ak.min());
  index_t i = ci.min();
  for (; i + 4 <= ci.max() + 1; i += 4) rows<4>(a, b0, b_stride, c, i, cj.min(), cj.extent(), ak.min(), ak.extent());
  for (; i <= ci.max(); ++i) rows<1>(a, b0, b_stride, c, i, cj.min(), cj.extent(), ak.min(), ak.extent());
  return 0;
}

}  // namespace blocked

// What the products cost per multiply-add, as their author would state it (a point of a product
// of depth K costs K of them: func::cost_hints::ns_per_point): timed on the AMD EPYC of family 25
// (SSE2 vectors, the build's default), the row-at-a-time matmul 0.094 ns and blocked::product
// 0.077 (two products into one output, 128 x 256 x 1024, each callback timed in 15 interleaved
// rounds: scheduler_measurements.md, twenty-fifth session), in round figures.
constexpr double matmul_ns_per_multiply_add = 0.1;
constexpr double blocked_ns_per_multiply_add = 0.08;

// Benchmark 5: abc = (a x b) x c. funcs: ab, abc; the rows of abc are abc's dims[1]. `product`
// computes both (by default the row-at-a-time matmul above), with `hints` for the scheduler.
inline graph matmul_chain(node_context& ctx, product_fn product = matmul, const func::cost_hints& hints = {}) {
  graph g;
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(float));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(float));
  auto c = buffer_expr::make(ctx, "c", 2, sizeof(float));
  auto ab = buffer_expr::make(ctx, "ab", 2, sizeof(float));
  auto abc = buffer_expr::make(ctx, "abc", 2, sizeof(float));
  var i(ctx, "i"), j(ctx, "j");
  // The reduction ranges: the columns of a (rows of b), and the rows of c (columns of ab).
  const interval_expr k_ab = a->dim(0).bounds;
  const interval_expr k_abc = c->dim(1).bounds;
  g.funcs.reserve(2);
  g.funcs.push_back(
      func::make(product, {{a, {k_ab, point(i)}}, {b, {point(j), k_ab}}}, {{ab, {j, i}}}, {.name = "ab"}));
  g.funcs.push_back(
      func::make(product, {{ab, {k_abc, point(i)}}, {c, {point(j), k_abc}}}, {{abc, {j, i}}}, {.name = "abc"}));
  for (func& f : g.funcs) f.hints(hints);
  g.inputs = {a, b, c};
  g.outputs = {abc};
  return g;
}

// Attention's kernels. Rows are dense (dim 0 has stride 4 in every buffer here: slinky allocates
// intermediates so, and folds nothing in dim 0); each kernel walks rows through pointers.
template <typename T>
T* row(const buffer<T>& b, index_t x0, index_t y) {
  return &b(x0, y);
}

// scores(j, i) = sum_k q(k, i) * kt(j, k), in i-k-j order (the j loop vectorizes).
inline index_t qkt(const buffer<const float>& q, const buffer<const float>& kt, const buffer<float>& s) {
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

// Attention for one head: out = softmax(q x kt) x v, q (head, rows), kt (keys, head), v (head,
// keys). funcs: scores, row_max, exp, row_sum, prob, out; the query rows are out's dims[1]. `product`
// computes the two products (by default qkt, row at a time), with `hints` for the scheduler.
inline graph attention(node_context& ctx, product_fn product = qkt, const func::cost_hints& hints = {}) {
  graph g;
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
  g.funcs.reserve(6);
  g.funcs.push_back(
      func::make(product, {{q, {head, point(i)}}, {kt, {point(j), head}}}, {{scores, {j, i}}}, {.name = "scores"}));
  g.funcs.push_back(func::make(row_reduce<true>, {{scores, {keys, point(i)}}}, {{row_max, {i}}}, {.name = "row_max"}));
  g.funcs.push_back(func::make(row_map<true>, {{scores, {point(j), point(i)}}, {row_max, {point(i)}}}, {{e, {j, i}}},
                               {.name = "exp"}));
  g.funcs.push_back(func::make(row_reduce<false>, {{e, {keys, point(i)}}}, {{row_sum, {i}}}, {.name = "row_sum"}));
  g.funcs.push_back(func::make(row_map<false>, {{e, {point(j), point(i)}}, {row_sum, {point(i)}}}, {{prob, {j, i}}},
                               {.name = "prob"}));
  // out(c, i) = sum_j prob(j, i) * v(c, j): the same kernel as q x kt.
  g.funcs.push_back(
      func::make(product, {{prob, {keys, point(i)}}, {v, {point(j), keys}}}, {{out, {j, i}}}, {.name = "out"}));
  g.funcs.front().hints(hints);
  g.funcs.back().hints(hints);
  g.inputs = {q, kt, v};
  g.outputs = {out};
  return g;
}

// Attention in plain C++, row by row.
inline void attention_reference(const buffer<float, 2>& q, const buffer<float, 2>& kt, const buffer<float, 2>& v,
                                buffer<float, 2>& ref) {
  const index_t d = q.dim(0).extent(), rows = q.dim(1).extent(), keys = kt.dim(0).extent();
  std::vector<float> s(keys);
  for (index_t r = 0; r < rows; ++r) {
    float mx = -INFINITY;
    for (index_t c = 0; c < keys; ++c) {
      float sum = 0;
      for (index_t k = 0; k < d; ++k) sum += q(k, r) * kt(c, k);
      mx = std::max(mx, s[c] = sum);
    }
    float total = 0;
    for (index_t c = 0; c < keys; ++c) total += (s[c] = std::exp(s[c] - mx));
    for (index_t col = 0; col < d; ++col) {
      float sum = 0;
      for (index_t c = 0; c < keys; ++c) sum += s[c] / total * v(col, c);
      ref(col, r) = sum;
    }
  }
}

// The padded stencil of alias_benchmark: scaled = in * 2 + 1; padded = scaled inside in's bounds,
// 0 outside (a padded copy through `copy_impl`, null: slinky::copy); out = the 3x3 box sum of
// padded. funcs: scale, pad, stencil; out's rows are its dims[1].
namespace padded_stencil {

// out = in * a + b over out's crop, a run of contiguous elements at a time.
inline index_t affine(const buffer<const float>& in, const buffer<float>& out, float a, float b) {
  for_each_contiguous_slice(
      out,
      [&](index_t n, float* o, const float* i) {
        for (index_t k = 0; k < n; ++k) o[k] = i[k] * a + b;
      },
      in);
  return 0;
}

inline index_t scale2(const buffer<const float>& in, const buffer<float>& out) { return affine(in, out, 2.0f, 1.0f); }

// out(x, y) = the sum of in over the 3x3 neighbourhood of (x, y).
inline index_t box(const buffer<const float>& in, const buffer<float>& out) {
  const dim& ox = out.dim(0);
  const dim& oy = out.dim(1);
  for (index_t y = oy.min(); y <= oy.max(); ++y) {
    const float* r0 = &in(ox.min(), y - 1);
    const float* r1 = &in(ox.min(), y);
    const float* r2 = &in(ox.min(), y + 1);
    float* o = &out(ox.min(), y);
    // Each row is addressed on its own, so folded rows (ring buffers) are fine.
    const bool dense = in.dim(0).stride() == sizeof(float) && out.dim(0).stride() == sizeof(float);
    if (dense) {
      for (index_t i = 0; i < ox.extent(); ++i) {
        o[i] = (r0[i - 1] + r0[i] + r0[i + 1]) + (r1[i - 1] + r1[i] + r1[i + 1]) + (r2[i - 1] + r2[i] + r2[i + 1]);
      }
    } else {
      for (index_t x = ox.min(); x <= ox.max(); ++x) {
        float s = 0;
        for (index_t dy = -1; dy <= 1; ++dy) {
          for (index_t dx = -1; dx <= 1; ++dx) s += in(x + dx, y + dy);
        }
        out(x, y) = s;
      }
    }
  }
  return 0;
}

inline graph make(node_context& ctx, copy_stmt::callable copy_impl = nullptr) {
  graph g;
  auto bin = buffer_expr::make(ctx, "in", 2, sizeof(float));
  auto bs = buffer_expr::make(ctx, "scaled", 2, sizeof(float));
  auto bp = buffer_expr::make(ctx, "padded", 2, sizeof(float));
  auto bout = buffer_expr::make(ctx, "out", 2, sizeof(float));
  auto zero = buffer_expr::make_scalar<float>(ctx, "zero", 0.0f);
  var x(ctx, "x"), y(ctx, "y");
  g.funcs.reserve(3);
  g.funcs.push_back(func::make(scale2, {{bin, {point(x), point(y)}}}, {{bs, {x, y}}}, {.name = "scale"}));
  g.funcs.push_back(
      func::make_copy({bs, {point(x), point(y)}, bin->bounds()}, {bp, {x, y}}, {zero, {}}, std::move(copy_impl)));
  g.funcs.push_back(
      func::make(box, {{bp, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{bout, {x, y}}}, {.name = "stencil"}));
  g.inputs = {bin};
  g.outputs = {bout};
  return g;
}

// The reference: out(x, y) for an n x n input.
inline void reference(const buffer<float, 2>& in, buffer<float, 2>& ref) {
  const index_t w = in.dim(0).extent(), h = in.dim(1).extent();
  auto p = [&](index_t x, index_t y) { return x < 0 || y < 0 || x >= w || y >= h ? 0.0f : in(x, y) * 2.0f + 1.0f; };
  for (index_t y = 0; y < h; ++y) {
    for (index_t x = 0; x < w; ++x) {
      ref(x, y) = (p(x - 1, y - 1) + p(x, y - 1) + p(x + 1, y - 1)) + (p(x - 1, y) + p(x, y) + p(x + 1, y)) +
                  (p(x - 1, y + 1) + p(x, y + 1) + p(x + 1, y + 1));
    }
  }
}

}  // namespace padded_stencil

// ML workload 1: a matrix product fused with the packing of its right-hand side. b (n, k) is
// copied into panels of `panel` columns, packed(x, k, p) = b(p * panel + x, k), each panel dense;
// the product out(j, i) = sum_k a(k, i) packed(j % panel, k, j / panel) reads whole panels.
// funcs: pack, product; out's columns are its dims[0]. n must be a multiple of panel.
namespace packed_matmul {

inline index_t pack(const buffer<const float>& b, const buffer<float>& packed, index_t panel) {
  const dim& x = packed.dim(0);
  const dim& k = packed.dim(1);
  const dim& p = packed.dim(2);
  for (index_t pi = p.min(); pi <= p.max(); ++pi) {
    for (index_t ki = k.min(); ki <= k.max(); ++ki) {
      std::memcpy(&packed(x.min(), ki, pi), &b(pi * panel + x.min(), ki), x.extent() * sizeof(float));
    }
  }
  return 0;
}

inline index_t product(const buffer<const float>& a, const buffer<const float>& packed, const buffer<float>& c,
                       index_t panel) {
  const dim& cj = c.dim(0);
  const dim& ci = c.dim(1);
  const dim& ak = a.dim(0);
  for (index_t i = ci.min(); i <= ci.max(); ++i) {
    for (index_t p = euclidean_div(cj.min(), panel); p <= euclidean_div(cj.max(), panel); ++p) {
      const index_t j0 = std::max(cj.min(), p * panel), j1 = std::min(cj.max(), p * panel + panel - 1);
      const index_t n = j1 - j0 + 1;
      float* __restrict crow = &c(j0, i);
      for (index_t j = 0; j < n; ++j) crow[j] = 0.0f;
      for (index_t k = ak.min(); k <= ak.max(); ++k) {
        const float aik = a(k, i);
        const float* __restrict prow = &packed(j0 - p * panel, k, p);
        for (index_t j = 0; j < n; ++j) crow[j] += aik * prow[j];
      }
    }
  }
  return 0;
}

inline graph make(node_context& ctx, index_t panel) {
  graph g;
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(float));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(float));
  auto packed = buffer_expr::make(ctx, "packed", 3, sizeof(float));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(float));
  var x(ctx, "x"), k(ctx, "k"), p(ctx, "p"), i(ctx, "i"), j(ctx, "j");
  const interval_expr kr = a->dim(0).bounds;
  g.funcs.reserve(2);
  g.funcs.push_back(
      func::make([panel](const buffer<const float>& b, const buffer<float>& packed) { return pack(b, packed, panel); },
                 {{b, {point(p * panel + x), point(k)}}}, {{packed, {x, k, p}}}, {.name = "pack"}));
  g.funcs.push_back(func::make([panel](const buffer<const float>& a, const buffer<const float>& packed,
                                       const buffer<float>& c) { return product(a, packed, c, panel); },
                               {{a, {kr, point(i)}}, {packed, {bounds(0, panel - 1), kr, point(j / panel)}}},
                               {{out, {j, i}}}, {.name = "product"}));
  g.inputs = {a, b};
  g.outputs = {out};
  return g;
}

}  // namespace packed_matmul

// ML workload 6: a 3x3 convolution as pad + im2col + matrix product + bias and activation. in (c,
// x, y) with `channels` channels; padded = in inside its bounds, 0 outside (a padded copy);
// col(r, x, y) = padded(r % channels, x + (r / channels) % 3 - 1, y + r / (3 channels) - 1) (the
// stencil view copied, 9 channels-long runs per pixel); conv(o, x, y) = sum_r col(r, x, y) w(o, r);
// out = max(conv + bias(o), 0). funcs: pad, im2col, conv, bias_relu; out's rows are its dims[2].
namespace convolution {

inline index_t im2col(const buffer<const float>& padded, const buffer<float>& col, index_t channels) {
  const dim& r = col.dim(0);
  for (index_t y = col.dim(2).min(); y <= col.dim(2).max(); ++y) {
    for (index_t x = col.dim(1).min(); x <= col.dim(1).max(); ++x) {
      if (r.min() == 0 && r.extent() == 9 * channels) {
        for (index_t t = 0; t < 9; ++t) {
          std::memcpy(&col(t * channels, x, y), &padded(0, x + t % 3 - 1, y + t / 3 - 1), channels * sizeof(float));
        }
      } else {
        for (index_t ri = r.min(); ri <= r.max(); ++ri) {
          const index_t t = ri / channels;
          col(ri, x, y) = padded(ri % channels, x + t % 3 - 1, y + t / 3 - 1);
        }
      }
    }
  }
  return 0;
}

inline index_t conv(const buffer<const float>& col, const buffer<const float>& w, const buffer<float>& out) {
  const dim& o = out.dim(0);
  const dim& r = w.dim(1);
  for (index_t y = out.dim(2).min(); y <= out.dim(2).max(); ++y) {
    for (index_t x = out.dim(1).min(); x <= out.dim(1).max(); ++x) {
      float* __restrict acc = &out(o.min(), x, y);
      for (index_t oi = 0; oi < o.extent(); ++oi) acc[oi] = 0.0f;
      // A pixel's taps are dense (dim 0 of col is never folded).
      const float* __restrict taps = &col(r.min(), x, y);
      for (index_t ri = r.min(); ri <= r.max(); ++ri) {
        const float c = taps[ri - r.min()];
        const float* __restrict wrow = &w(o.min(), ri);
        for (index_t oi = 0; oi < o.extent(); ++oi) acc[oi] += c * wrow[oi];
      }
    }
  }
  return 0;
}

inline index_t bias_relu(const buffer<const float>& conv, const buffer<const float>& bias, const buffer<float>& out) {
  const dim& o = out.dim(0);
  for (index_t y = out.dim(2).min(); y <= out.dim(2).max(); ++y) {
    for (index_t x = out.dim(1).min(); x <= out.dim(1).max(); ++x) {
      const float* __restrict in = &conv(o.min(), x, y);
      const float* __restrict b = &bias(o.min());
      float* __restrict dst = &out(o.min(), x, y);
      for (index_t oi = 0; oi < o.extent(); ++oi) dst[oi] = std::max(in[oi] + b[oi], 0.0f);
    }
  }
  return 0;
}

inline graph make(node_context& ctx, index_t channels) {
  graph g;
  auto in = buffer_expr::make(ctx, "in", 3, sizeof(float));
  auto w = buffer_expr::make(ctx, "w", 2, sizeof(float));
  auto bias = buffer_expr::make(ctx, "bias", 1, sizeof(float));
  auto padded = buffer_expr::make(ctx, "padded", 3, sizeof(float));
  auto col = buffer_expr::make(ctx, "col", 3, sizeof(float));
  auto cv = buffer_expr::make(ctx, "conv", 3, sizeof(float));
  auto out = buffer_expr::make(ctx, "out", 3, sizeof(float));
  auto zero = buffer_expr::make_scalar<float>(ctx, "zero", 0.0f);
  var c(ctx, "c"), r(ctx, "r"), o(ctx, "o"), x(ctx, "x"), y(ctx, "y");
  const interval_expr taps = w->dim(1).bounds;
  g.funcs.reserve(4);
  g.funcs.push_back(
      func::make_copy({in, {point(c), point(x), point(y)}, in->bounds()}, {padded, {c, x, y}}, {zero, {}}));
  g.funcs.push_back(func::make(
      [channels](const buffer<const float>& p, const buffer<float>& col) { return im2col(p, col, channels); },
      {{padded, {bounds(0, channels - 1), bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{col, {r, x, y}}},
      {.name = "im2col"}));
  g.funcs.push_back(func::make(conv, {{col, {taps, point(x), point(y)}}, {w, {point(o), taps}}}, {{cv, {o, x, y}}},
                               {.name = "conv"}));
  g.funcs.push_back(func::make(bias_relu, {{cv, {point(o), point(x), point(y)}}, {bias, {point(o)}}},
                               {{out, {o, x, y}}}, {.name = "bias_relu"}));
  g.inputs = {in, w, bias};
  g.outputs = {out};
  return g;
}

// The reference, in the same order of operations per output value.
inline void reference(const buffer<float, 3>& in, const buffer<float, 2>& w, const buffer<float, 1>& bias,
                      buffer<float, 3>& ref) {
  const index_t channels = in.dim(0).extent(), width = in.dim(1).extent(), height = in.dim(2).extent();
  const index_t outs = w.dim(0).extent();
  for (index_t y = 0; y < height; ++y) {
    for (index_t x = 0; x < width; ++x) {
      for (index_t o = 0; o < outs; ++o) {
        float acc = 0.0f;
        for (index_t t = 0; t < 9; ++t) {
          const index_t sx = x + t % 3 - 1, sy = y + t / 3 - 1;
          for (index_t c = 0; c < channels; ++c) {
            const float v = sx < 0 || sy < 0 || sx >= width || sy >= height ? 0.0f : in(c, sx, sy);
            acc += v * w(o, t * channels + c);
          }
        }
        ref(o, x, y) = std::max(acc + bias(o), 0.0f);
      }
    }
  }
}

}  // namespace convolution

// ML workload 5: an elementwise chain feeding a partial reduction, then a final one. e1 = in *
// 0.75 + 0.125, e2 = e1 * 1.0625 - 0.25, partial(p) = the sum of e2 over [p * chunk, p * chunk +
// chunk - 1] (in order), out(0) = the sum of the partials (in order). funcs: e1, e2, partial,
// total. The input's extent must be a multiple of chunk.
namespace reduction {

inline index_t affine(const buffer<const float>& in, const buffer<float>& out, float a, float b) {
  const dim& d = out.dim(0);
  const float* __restrict src = &in(d.min());
  float* __restrict dst = &out(d.min());
  if (in.dim(0).stride() == sizeof(float) && out.dim(0).stride() == sizeof(float) &&
      !in.dim(0).is_folded(d.min(), d.max()) && !out.dim(0).is_folded(d.min(), d.max())) {
    for (index_t i = 0; i < d.extent(); ++i) dst[i] = src[i] * a + b;
  } else {
    for (index_t i = d.min(); i <= d.max(); ++i) out(i) = in(i)*a + b;
  }
  return 0;
}

inline index_t partial(const buffer<const float>& e, const buffer<float>& out, index_t chunk) {
  for (index_t p = out.dim(0).min(); p <= out.dim(0).max(); ++p) {
    float s = 0.0f;
    for (index_t i = p * chunk; i < (p + 1) * chunk; ++i) s += e(i);
    out(p) = s;
  }
  return 0;
}

// partial's sums in 8 independent accumulators (a vector loop), where e's rows are dense.
inline index_t vector_partial(const buffer<const float>& e, const buffer<float>& out, index_t chunk) {
  const dim& d = e.dim(0);
  const index_t first = out.dim(0).min() * chunk, last = (out.dim(0).max() + 1) * chunk - 1;
  if (d.stride() != sizeof(float) || d.is_folded(first, last) || chunk % 8 != 0) return partial(e, out, chunk);
  for (index_t p = out.dim(0).min(); p <= out.dim(0).max(); ++p) {
    const float* __restrict x = &e(p * chunk);
    float acc[8] = {};
    for (index_t i = 0; i < chunk; i += 8) {
      for (int j = 0; j < 8; ++j) acc[j] += x[i + j];
    }
    float s = 0.0f;
    for (float a : acc) s += a;
    out(p) = s;
  }
  return 0;
}

inline index_t total(const buffer<const float>& partials, const buffer<float>& out) {
  for (index_t z = out.dim(0).min(); z <= out.dim(0).max(); ++z) {
    float s = 0.0f;
    for (index_t p = partials.dim(0).min(); p <= partials.dim(0).max(); ++p) s += partials(p);
    out(z) = s;
  }
  return 0;
}

// With vector_sums, partial is vector_partial (the sums in another order: compare with a
// tolerance).
inline graph make(node_context& ctx, index_t chunk, bool vector_sums = false) {
  graph g;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(float));
  auto e1 = buffer_expr::make(ctx, "e1", 1, sizeof(float));
  auto e2 = buffer_expr::make(ctx, "e2", 1, sizeof(float));
  auto partials = buffer_expr::make(ctx, "partials", 1, sizeof(float));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(float));
  var x(ctx, "x"), p(ctx, "p"), z(ctx, "z");
  g.funcs.reserve(4);
  g.funcs.push_back(
      func::make([](const buffer<const float>& i, const buffer<float>& o) { return affine(i, o, 0.75f, 0.125f); },
                 {{in, {point(x)}}}, {{e1, {x}}}, {.name = "e1"}));
  g.funcs.push_back(
      func::make([](const buffer<const float>& i, const buffer<float>& o) { return affine(i, o, 1.0625f, -0.25f); },
                 {{e1, {point(x)}}}, {{e2, {x}}}, {.name = "e2"}));
  g.funcs.push_back(func::make(
      [chunk, vector_sums](const buffer<const float>& e, const buffer<float>& o) {
        return vector_sums ? vector_partial(e, o, chunk) : partial(e, o, chunk);
      },
      {{e2, {bounds(p * chunk, p * chunk + chunk - 1)}}}, {{partials, {p}}}, {.name = "partial"}));
  g.funcs.push_back(func::make(total, {{partials, {bounds(in->dim(0).min() / chunk, in->dim(0).max() / chunk)}}},
                               {{out, {z}}}, {.name = "total"}));
  g.inputs = {in};
  g.outputs = {out};
  return g;
}

inline float reference(const buffer<float, 1>& in, index_t chunk) {
  float sum = 0.0f;
  for (index_t p = 0; p < in.dim(0).extent() / chunk; ++p) {
    float s = 0.0f;
    for (index_t i = p * chunk; i < (p + 1) * chunk; ++i) s += (in(i)*0.75f + 0.125f) * 1.0625f - 0.25f;
    sum += s;
  }
  return sum;
}

}  // namespace reduction

}  // namespace workloads
}  // namespace slinky_bench

#endif  // SLINKY_APPS_WORKLOADS_H
