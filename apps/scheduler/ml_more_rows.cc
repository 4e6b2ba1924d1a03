// scheduler_benchmark's rows for ML workloads 2, 3 and the pooling of 6 (BENCHMARKS.md): two
// products accumulating into one output, a product with and without its reduction split, and
// average pooling as a stencil view (a copy) and a reduction, twice (a pyramid).
#include <cstddef>
#include <string>
#include <vector>

#include "benchmark_util.h"
#include "scheduler/bench.h"
#include "slinky/builder/pipeline.h"
#include "workloads.h"

using namespace slinky_bench;

namespace sched_bench {

namespace {

// c(j, i) = sum_k a(k, i) b(j, k) + acc(j, i) over c's crop: the register-blocked product, then
// the accumulator added.
index_t product_add(const buffer<const float>& a, const buffer<const float>& b, const buffer<const float>& acc,
                    const buffer<float>& c) {
  workloads::blocked::product(a, b, c);
  for (index_t i = c.dim(1).min(); i <= c.dim(1).max(); ++i) {
    for (index_t j = c.dim(0).min(); j <= c.dim(0).max(); ++j) c(j, i) += acc(j, i);
  }
  return 0;
}

// ML workload 2: out = a1 x b1 + a2 x b2 (a: k x m, b: n x k, as (column, row)). funcs: p1 (the
// first product, the row-at-a-time kernel), out (the register-blocked one, 4 rows at once, adding
// p1): the two kernels want different blocks of rows in one loop.
graph two_products_graph(node_context& ctx) {
  graph g;
  auto a1 = buffer_expr::make(ctx, "a1", 2, sizeof(float));
  auto b1 = buffer_expr::make(ctx, "b1", 2, sizeof(float));
  auto a2 = buffer_expr::make(ctx, "a2", 2, sizeof(float));
  auto b2 = buffer_expr::make(ctx, "b2", 2, sizeof(float));
  auto p1 = buffer_expr::make(ctx, "p1", 2, sizeof(float));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(float));
  var i(ctx, "i"), j(ctx, "j");
  const interval_expr k1 = a1->dim(0).bounds, k2 = a2->dim(0).bounds;
  g.funcs.reserve(2);
  g.funcs.push_back(
      func::make(workloads::matmul, {{a1, {k1, point(i)}}, {b1, {point(j), k1}}}, {{p1, {j, i}}}, {.name = "p1"}));
  g.funcs.push_back(func::make(product_add, {{a2, {k2, point(i)}}, {b2, {point(j), k2}}, {p1, {point(j), point(i)}}},
                               {{out, {j, i}}}, {.name = "out"}));
  g.inputs = {a1, b1, a2, b2};
  g.outputs = {out};
  return g;
}

// ML workload 3, split: partial(j, i, s) = sum over k in block s (`block` long) of a(k, i) b(j, k),
// by the register-blocked product on the block's columns of a and rows of b; out(j, i) = sum_s
// partial(j, i, s) over `blocks` blocks. funcs: partial, out.
index_t partial_product(const buffer<const float>& a, const buffer<const float>& b, const buffer<float>& p,
                        index_t block) {
  for (index_t s = p.dim(2).min(); s <= p.dim(2).max(); ++s) {
    buffer<const float, 2> as(a), bs(b);
    as.crop(0, s * block, s * block + block - 1);
    bs.crop(1, s * block, s * block + block - 1);
    buffer<float, 3> ps(p);
    ps.slice(2, s);
    workloads::blocked::product(as.cast<const float>(), bs.cast<const float>(), ps.cast<float>());
  }
  return 0;
}

index_t sum_blocks(const buffer<const float>& p, const buffer<float>& out) {
  const dim& s = p.dim(2);
  for (index_t i = out.dim(1).min(); i <= out.dim(1).max(); ++i) {
    for (index_t j = out.dim(0).min(); j <= out.dim(0).max(); ++j) {
      float sum = 0.0f;
      for (index_t b = s.min(); b <= s.max(); ++b) sum += p(j, i, b);
      out(j, i) = sum;
    }
  }
  return 0;
}

graph split_product_graph(node_context& ctx, index_t block, index_t blocks) {
  graph g;
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(float));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(float));
  auto partial = buffer_expr::make(ctx, "partial", 3, sizeof(float));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(float));
  var i(ctx, "i"), j(ctx, "j"), s(ctx, "s");
  const interval_expr ks = bounds(s * block, s * block + block - 1);
  g.funcs.reserve(2);
  g.funcs.push_back(func::make([block](const buffer<const float>& a, const buffer<const float>& b,
                                       const buffer<float>& p) { return partial_product(a, b, p, block); },
                               {{a, {ks, point(i)}}, {b, {point(j), ks}}}, {{partial, {j, i, s}}},
                               {.name = "partial"}));
  g.funcs.push_back(func::make(sum_blocks, {{partial, {point(j), point(i), bounds(0, blocks - 1)}}}, {{out, {j, i}}},
                               {.name = "out"}));
  g.inputs = {a, b};
  g.outputs = {out};
  return g;
}

// Average pooling, 3x3 windows in steps of 2, as kernel libraries run it: a copy gathers each
// output pixel's window (view(dx, dy, x, y) = src(2 x + dx, 2 y + dy)), a reduction averages it.
// Twice, after an elementwise stage: e = in * 2 + 1; view1, pool1 = avg(view1); view2, out =
// avg(view2). funcs: e, view1, pool1, view2, out; out's rows are its dims[1].
index_t average9(const buffer<const float>& view, const buffer<float>& out) {
  const dim& xd = out.dim(0);
  // Strides in bytes of the window's dims and of x (the view's dims 0 to 2 are not folded: the
  // builder folds intermediates along the loop's dim only).
  const index_t s0 = view.dim(0).stride(), s1 = view.dim(1).stride(), s2 = view.dim(2).stride();
  const bool flat = !view.dim(0).is_folded(0, 2) && !view.dim(1).is_folded(0, 2) &&
                    !view.dim(2).is_folded(xd.min(), xd.max()) && !out.dim(0).is_folded(xd.min(), xd.max());
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    if (xd.empty()) break;
    if (flat) {
      // One address per row of the output, the window and the columns by strides.
      const char* row = reinterpret_cast<const char*>(&view(0, 0, xd.min(), y));
      float* o = &out(xd.min(), y);
      const index_t os = out.dim(0).stride() / static_cast<index_t>(sizeof(float));
      for (index_t x = 0; x < xd.extent(); ++x, row += s2) {
        float sum = 0.0f;
        for (index_t dy = 0; dy < 3; ++dy) {
          for (index_t dx = 0; dx < 3; ++dx) sum += *reinterpret_cast<const float*>(row + dy * s1 + dx * s0);
        }
        o[x * os] = sum * (1.0f / 9.0f);
      }
      continue;
    }
    for (index_t x = xd.min(); x <= xd.max(); ++x) {
      float sum = 0.0f;
      for (index_t dy = 0; dy < 3; ++dy) {
        for (index_t dx = 0; dx < 3; ++dx) sum += view(dx, dy, x, y);
      }
      out(x, y) = sum * (1.0f / 9.0f);
    }
  }
  return 0;
}

graph pooling_graph(node_context& ctx) {
  graph g;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(float));
  auto e = buffer_expr::make(ctx, "e", 2, sizeof(float));
  var x(ctx, "x"), y(ctx, "y"), dx(ctx, "dx"), dy(ctx, "dy");
  g.funcs.reserve(5);
  g.funcs.push_back(func::make<const float, float>(stencil_chain::scale_offset_of<float>, {{in, {point(x), point(y)}}},
                                                   {{e, {x, y}}}, {.name = "e"}));
  buffer_expr_ptr src = e;
  for (int level = 1; level <= 2; ++level) {
    auto view = buffer_expr::make(ctx, "view" + std::to_string(level), 4, sizeof(float));
    auto pool =
        buffer_expr::make(ctx, level == 2 ? std::string("out") : "pool" + std::to_string(level), 2, sizeof(float));
    g.funcs.push_back(func::make_copy({src, {point(2 * x + dx), point(2 * y + dy)}}, {view, {dx, dy, x, y}}));
    g.funcs.push_back(func::make(average9, {{view, {bounds(0, 2), bounds(0, 2), point(x), point(y)}}}, {{pool, {x, y}}},
                                 {.name = "pool" + std::to_string(level)}));
    src = pool;
  }
  g.inputs = {in};
  g.outputs = {g.funcs.back().outputs()[0].buffer};
  return g;
}

// The pooling pyramid in plain C++.
void pooling_reference(const buffer<float, 2>& in, buffer<float, 2>& ref) {
  const index_t w1 = (in.dim(0).extent() - 3) / 2 + 1, h1 = (in.dim(1).extent() - 3) / 2 + 1;
  buffer<float, 2> pool1({w1, h1});
  pool1.allocate();
  auto pool = [](auto&& src, index_t x, index_t y) {
    float sum = 0.0f;
    for (index_t dy = 0; dy < 3; ++dy) {
      for (index_t dx = 0; dx < 3; ++dx) sum += src(2 * x + dx, 2 * y + dy);
    }
    return sum * (1.0f / 9.0f);
  };
  for (index_t y = 0; y < h1; ++y) {
    for (index_t x = 0; x < w1; ++x)
      pool1(x, y) = pool([&](index_t u, index_t v) { return in(u, v) * 2.0f + 1.0f; }, x, y);
  }
  for (index_t y = 0; y < ref.dim(1).extent(); ++y) {
    for (index_t x = 0; x < ref.dim(0).extent(); ++x) ref(x, y) = pool(pool1, x, y);
  }
}

}  // namespace

void ml_more_rows(bool quick, const add_fn& add) {
  {
    const index_t m = 128, k = 256, n = 1024;
    buffer<float, 2> a1({k, m}), b1({n, k}), a2({k, m}), b2({n, k}), out({n, m}), ref({n, m}), p1({n, m});
    for (auto* x : {&a1, &b1, &a2, &b2, &out, &ref, &p1}) x->allocate();
    fill_random(a1, 21);
    fill_random(b1, 22);
    fill_random(a2, 23);
    fill_random(b2, 24);
    workloads::matmul(a1, b1, p1);
    workloads::matmul(a2, b2, ref);
    for (index_t i = 0; i < m; ++i) {
      for (index_t j = 0; j < n; ++j) ref(j, i) += p1(j, i);
    }
    workload w;
    const std::string name = "two products into one output, 128x256 x 256x1024, twice";
    w.name = name;
    w.make_graph = two_products_graph;
    // What the kernels' author knows: the register-blocked product computes 4 rows at once, and
    // what each product costs per point (k multiply-adds).
    w.make_hinted_graph = [k](node_context& ctx) {
      graph g = two_products_graph(ctx);
      const double depth = static_cast<double>(k);
      g.funcs.front().hints({.ns_per_point = depth * workloads::matmul_ns_per_multiply_add});
      g.funcs.back().hints({.dim = 1, .multiple = 4, .ns_per_point = depth * workloads::blocked_ns_per_multiply_add});
      return g;
    };
    for (index_t s : {1, 4, 16, 32})
      w.hand.push_back(loop_of(-1, 1, s, false, "rows in blocks of " + std::to_string(s)));
    w.inputs = {&a1, &b1, &a2, &b2};
    w.outputs = {&out};
    w.check = [&, name](const std::string& what) { check_near(out, ref, 1e-4f, name + ", " + what); };
    add(std::move(w));
  }
  for (index_t k : {index_t{100}, index_t{quick ? 1024 : 4096}}) {
    const index_t m = 300, n = 400, block = 512;
    buffer<float, 2> a({k, m}), b({n, k}), out({n, m}), ref({n, m});
    for (auto* x : {&a, &b, &out, &ref}) x->allocate();
    fill_random(a, 25);
    fill_random(b, 26);
    workloads::matmul(a, b, ref);
    const std::string shape = "300x" + std::to_string(k) + " x " + std::to_string(k) + "x400";
    for (bool split : {false, true}) {
      if (split && k % block != 0) continue;
      workload w;
      const std::string name = "product " + shape + (split ? ", reduction split in blocks of 512" : "");
      w.name = name;
      if (split) {
        w.make_graph = [k, block](node_context& ctx) { return split_product_graph(ctx, block, k / block); };
      } else {
        w.make_graph = [](node_context& ctx) { return matmul_graph(ctx, workloads::blocked::product); };
      }
      w.make_hinted_graph = [k, block, split](node_context& ctx) {
        graph g = split ? split_product_graph(ctx, block, k / block) : matmul_graph(ctx, workloads::blocked::product);
        g.funcs.front().hints({.dim = 1, .multiple = 4});
        return g;
      };
      for (index_t s : {1, 4, 16, 64}) {
        w.hand.push_back(loop_of(-1, 1, s, false, "rows in blocks of " + std::to_string(s)));
      }
      w.inputs = {&a, &b};
      w.outputs = {&out};
      w.check = [&, name](const std::string& what) { check_near(out, ref, 1e-3f, name + ", " + what); };
      add(std::move(w));
    }
  }
  {
    const index_t size = quick ? 1024 : 4096;
    const index_t w1 = (size - 3) / 2 + 1, w2 = (w1 - 3) / 2 + 1;
    buffer<float, 2> in({size, size}), out({w2, w2}), ref({w2, w2});
    for (auto* x : {&in, &out, &ref}) x->allocate();
    fill_random(in, 27);
    pooling_reference(in, ref);
    workload w;
    const std::string name = "average pooling 3x3 / 2, twice, " + std::to_string(size) + "x" + std::to_string(size);
    w.name = name;
    w.make_graph = pooling_graph;
    for (index_t s : {1, 4, 16}) w.hand.push_back(loop_of(-1, 1, s, false, "rows in blocks of " + std::to_string(s)));
    // The views' sources at the root: the builder makes each view an alias of its source (no
    // copy), which it cannot do where the source is a ring buffer sliding along the loop.
    for (index_t s : {4, 16}) {
      const scheduler_fn rows = loop_of(-1, 1, s, false, "");
      w.hand.push_back([rows, s](built& b) {
        rows(b);
        b.g.funcs[0].compute_root();
        b.g.funcs[2].compute_root();
        b.description = "rows in blocks of " + std::to_string(s) + ", e and pool1 at the root";
      });
    }
    w.inputs = {&in};
    w.outputs = {&out};
    w.check = [&, name](const std::string& what) { check_near(out, ref, 1e-5f, name + ", " + what); };
    add(std::move(w));
  }
}

}  // namespace sched_bench
