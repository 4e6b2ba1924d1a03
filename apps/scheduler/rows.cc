// The pipelines of scheduler_benchmark's table (scheduler/bench.h): for each, its graph, the hand
// schedules it is compared with, its buffers and a plain C++ reference.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "benchmark_util.h"
#include "elementwise_stage.h"
#include "pipeline_bench.h"
#include "scheduler/bench.h"
#include "slinky/builder/pipeline.h"
#include "workloads.h"

#ifdef SLINKY_BENCH_OPENBLAS
#include <cblas.h>
#endif

using namespace slinky_bench;

namespace sched_bench {

namespace {

// Benchmark 5's matrix chain's buffers, n x n: random a, b and c, the output, and the reference
// (a x b) x c computed in plain C++ (through ab).
struct matmul_chain_buffers {
  buffer<float, 2> a, b, c, out, ab, ref;
  explicit matmul_chain_buffers(index_t n) : a({n, n}), b({n, n}), c({n, n}), out({n, n}), ab({n, n}), ref({n, n}) {
    for (auto* x : {&a, &b, &c, &out, &ab, &ref}) x->allocate();
    fill_random(a, 1);
    fill_random(b, 2);
    fill_random(c, 3);
    workloads::matmul(a, b, ab);
    workloads::matmul(ab, c, ref);
  }
};

}  // namespace

// Benchmark 3's chains, serial (K = 4, 8) or parallel (K = 4).
void elementwise_rows(bool quick, bool parallel, const add_fn& add) {
  const index_t n = quick ? 2 << 20 : 16 << 20;
  buffer<float, 1> in({n}), out({n}), ref({n});
  for (auto* b : {&in, &out, &ref}) b->allocate();
  for (index_t i = 0; i < n; ++i) in(i) = static_cast<float>(i % 1000) * 0.001f;
  for (int k : {4, 8}) {
    if (parallel && k == 8) continue;
    for (index_t i = 0; i < n; ++i) {
      float x = in(i);
      for (int s = 0; s < k; ++s) x = x * scale(s) + offset(s);
      ref(i) = x;
    }
    workload w;
    const std::string name = std::string(parallel ? "parallel " : "") + "elementwise K = " + std::to_string(k);
    w.name = name;
    w.parallel = parallel;
    w.make_graph = [k](node_context& ctx) { return workloads::elementwise_chain(ctx, k); };
    for (index_t c : {1024, 4096, 16384, 65536}) {
      if (parallel && c == 1024) continue;
      w.hand.push_back(loop_of(-1, 0, c, parallel, "chunks of " + std::to_string(c) + (parallel ? ", parallel" : "")));
    }
    w.inputs = {&in};
    w.outputs = {&out};
    w.check = [&, name](const std::string& what) { check_near(out, ref, 1e-5f, name + ", " + what); };
    add(std::move(w));
  }
}

// A hand schedule of benchmark 7's data-parallel stencils: the output in parallel strips of
// `step` rows, each intermediate stored inside the loop (each iteration computes its whole window).
scheduler_fn data_parallel_rows(index_t step) {
  return [=](built& b) {
    func& out = b.g.funcs.back();
    const var y = out.outputs()[0].dims[1];
    out.loops({{y, step, loop::parallel}});
    for (std::size_t i = 0; i + 1 < b.g.funcs.size(); ++i) {
      for (const func::output& o : b.g.funcs[i].outputs()) o.buffer->store_at(loop_id{&out, y});
    }
    b.description = "rows in blocks of " + std::to_string(step) + ", parallel, data-parallel";
  };
}

// Benchmark 4's chains, serial, or parallel as in benchmark 7.
void stencil_rows(bool quick, bool parallel, bool sweep, const add_fn& add) {
  const index_t size = quick ? 1024 : 4096;
  for (int stages : {2, 3}) {
    const int border = stages - 1;
    buffer<float, 2> in({size + 2 * border, size + 2 * border}), out({size, size}), ref({size, size});
    in.translate(-border, -border);
    for (auto* b : {&in, &out, &ref}) b->allocate();
    fill_stencil_chain_input(in, size, border);
    stencil_chain_reference(in, size, stages, ref);
    workload w;
    const std::string name =
        std::string(parallel ? "parallel " : "") + "stencil, " + std::to_string(stages) + " stages";
    w.name = name;
    w.parallel = parallel;
    w.make_graph = [stages](node_context& ctx) { return workloads::stencil_chain(ctx, stages); };
    const std::vector<index_t> steps =
        sweep ? std::vector<index_t>{1, 2, 4, 8, 16, 32, 64} : std::vector<index_t>{1, 8, 32};
    for (index_t s : steps) {
      if (parallel && s == 1) continue;
      w.hand.push_back(
          loop_of(-1, 1, s, parallel, "rows in blocks of " + std::to_string(s) + (parallel ? ", parallel" : "")));
      if (parallel) w.hand.push_back(data_parallel_rows(s));
    }
    w.inputs = {&in};
    w.outputs = {&out};
    w.check = [&, name](const std::string& what) { check_near(out, ref, 0.0f, name + ", " + what); };
    add(std::move(w));
  }
}

// The stencil chains on 16-bit pixels (the client harness ran benchmark 4's chains on
// 4096 x 4096 uint16 images; workloads::stencil_chain_of): e = in * 2 + 1, then 3x3 box sums, in
// uint16 arithmetic (wrapping, so the result is the same in any order).
namespace {

using u16 = std::uint16_t;

// The chain's output for `in` (its border stages - 1 around size x size), in plain C++.
void stencil_u16_reference(const buffer<u16, 2>& in, index_t size, int stages, buffer<u16, 2>& ref) {
  const int border = stages - 1;
  index_t w = size + 2 * border;
  std::vector<u16> cur(w * w), next;
  for (index_t y = 0; y < w; ++y) {
    for (index_t x = 0; x < w; ++x) cur[y * w + x] = static_cast<u16>(in(x - border, y - border) * 2 + 1);
  }
  for (int s = 1; s < stages; ++s) {
    const index_t nw = w - 2;
    next.assign(nw * nw, 0);
    for (index_t y = 0; y < nw; ++y) {
      for (index_t x = 0; x < nw; ++x) {
        int sum = 0;
        for (index_t dy = 0; dy < 3; ++dy) {
          for (index_t dx = 0; dx < 3; ++dx) sum += cur[(y + dy) * w + x + dx];
        }
        next[y * nw + x] = static_cast<u16>(sum);
      }
    }
    cur.swap(next);
    w = nw;
  }
  for (index_t y = 0; y < size; ++y) {
    for (index_t x = 0; x < size; ++x) ref(x, y) = cur[y * w + x];
  }
}

}  // namespace

void stencil_u16_rows(bool quick, bool sweep, const add_fn& add) {
  const index_t size = quick ? 1024 : 4096;
  for (int stages : {2, 3}) {
    const int border = stages - 1;
    buffer<u16, 2> in({size + 2 * border, size + 2 * border}), out({size, size}), ref({size, size});
    in.translate(-border, -border);
    for (auto* b : {&in, &out, &ref}) b->allocate();
    for (index_t y = -border; y < size + border; ++y) {
      for (index_t x = -border; x < size + border; ++x) in(x, y) = static_cast<u16>((x * 7 + y * 13) % 4096);
    }
    stencil_u16_reference(in, size, stages, ref);
    workload w;
    const std::string name = "stencil uint16, " + std::to_string(stages) + " stages";
    w.name = name;
    w.make_graph = [stages](node_context& ctx) { return workloads::stencil_chain_of<u16>(ctx, stages); };
    const std::vector<index_t> steps =
        sweep ? std::vector<index_t>{1, 2, 4, 8, 16, 32, 64} : std::vector<index_t>{1, 8, 32};
    for (index_t s : steps) w.hand.push_back(loop_of(-1, 1, s, false, "rows in blocks of " + std::to_string(s)));
    w.inputs = {&in};
    w.outputs = {&out};
    w.check = [&, name](const std::string& what) {
      for (index_t y = 0; y < size; ++y) {
        for (index_t x = 0; x < size; ++x) {
          if (out(x, y) != ref(x, y)) {
            wrong_result(name + ", " + what + ": (" + std::to_string(x) + ", " + std::to_string(y) +
                         ") = " + std::to_string(out(x, y)) + ", expected " + std::to_string(ref(x, y)));
          }
        }
      }
    };
    add(std::move(w));
  }
}

// Benchmark 5's matrix chain and the padded stencil of alias_benchmark.
void matmul_and_copy_rows(bool quick, const add_fn& add) {
  {
    const index_t n = quick ? 256 : 512;
    matmul_chain_buffers m(n);
    auto& [a, b, c, out, ab, ref] = m;
    workload w;
    const std::string name = "matmul chain (a x b) x c, " + std::to_string(n);
    w.name = name;
    w.make_graph = [](node_context& ctx) { return workloads::matmul_chain(ctx); };
    for (index_t s : {1, 4, 16}) w.hand.push_back(loop_of(-1, 1, s, false, "rows in blocks of " + std::to_string(s)));
    w.inputs = {&a, &b, &c};
    w.outputs = {&out};
    w.check = [&, name](const std::string& what) { check_near(out, ref, 1e-4f, name + ", " + what); };
    add(std::move(w));
  }
  {
    const index_t n = quick ? 1024 : 4096;
    buffer<float, 2> in({n, n}), out({n, n}), ref({n, n});
    for (auto* x : {&in, &out, &ref}) x->allocate();
    for (index_t y = 0; y < n; ++y) {
      for (index_t x = 0; x < n; ++x) in(x, y) = static_cast<float>((x * 13 + y * 7) % 101) - 50.0f;
    }
    workloads::padded_stencil::reference(in, ref);
    workload w;
    const std::string name = "padded copy, 3x3 stencil";
    w.name = name;
    w.make_graph = [](node_context& ctx) { return workloads::padded_stencil::make(ctx); };
    for (index_t s : {8, 32}) w.hand.push_back(loop_of(-1, 1, s, false, "rows in blocks of " + std::to_string(s)));
    w.inputs = {&in};
    w.outputs = {&out};
    w.check = [&, name](const std::string& what) { check_near(out, ref, 0.0f, name + ", " + what); };
    add(std::move(w));
  }
}

// A hand tile: the output's func in an outer loop over dim `outer` in steps of `outer_step` and
// an inner loop over dim `inner` in steps of `inner_step`.
// stored_outside: the other funcs' outputs stored at the outer loop (each strip's windows
// allocated once, sliding along the inner loop), else where the builder stores them by default.
scheduler_fn tile_of(int inner, index_t inner_step, int outer, index_t outer_step, std::string description,
                     bool stored_outside = false, bool parallel_outer = false) {
  return [=](built& b) {
    func& fn = b.g.funcs.back();
    const std::vector<var>& dims = fn.outputs()[0].dims;
    fn.loops({{dims[inner], inner_step}, {dims[outer], outer_step, parallel_outer ? loop::parallel : loop::serial}});
    if (stored_outside) {
      for (std::size_t i = 0; i + 1 < b.g.funcs.size(); ++i) {
        for (const func::output& o : b.g.funcs[i].outputs()) o.buffer->store_at(loop_id{&fn, dims[outer]});
      }
    }
    b.description = description;
  };
}

// Pipelines where a row does not fit the L2: benchmark 4's 3-stage stencil chain on a wide image
// (rows of 512 KiB: the windows of one row of the output take 3.5 MiB), and a product whose right-hand
// side (read whole for every row of the output) takes 8 MiB. Hand schedules: rows, and tiles
// (strips of columns, rows inside).
void wide_rows(bool quick, const add_fn& add) {
  {
    const index_t width = quick ? 1 << 15 : 1 << 17, height = quick ? 32 : 64;
    const int stages = 3, border = stages - 1;
    buffer<float, 2> in({width + 2 * border, height + 2 * border}), out({width, height}), ref({width, height});
    in.translate(-border, -border);
    for (auto* b : {&in, &out, &ref}) b->allocate();
    for (index_t y = -border; y < height + border; ++y) {
      for (index_t x = -border; x < width + border; ++x) in(x, y) = static_cast<float>((x * 7 + y * 13) % 16);
    }
    // The reference: e = in * 2 + 1, b1 = box(e), out = box(b1), stage by stage.
    buffer<float, 2> e({width + 2 * border, height + 2 * border}), b1({width + 2, height + 2});
    e.translate(-border, -border);
    b1.translate(-1, -1);
    e.allocate();
    b1.allocate();
    for (index_t y = -border; y < height + border; ++y) {
      for (index_t x = -border; x < width + border; ++x) e(x, y) = in(x, y) * 2.0f + 1.0f;
    }
    auto box_of = [](const buffer<float, 2>& src, index_t x, index_t y) {
      return (src(x - 1, y - 1) + src(x, y - 1) + src(x + 1, y - 1)) + (src(x - 1, y) + src(x, y) + src(x + 1, y)) +
             (src(x - 1, y + 1) + src(x, y + 1) + src(x + 1, y + 1));
    };
    for (index_t y = -1; y < height + 1; ++y) {
      for (index_t x = -1; x < width + 1; ++x) b1(x, y) = box_of(e, x, y);
    }
    for (index_t y = 0; y < height; ++y) {
      for (index_t x = 0; x < width; ++x) ref(x, y) = box_of(b1, x, y);
    }
    workload w;
    const std::string name = "wide stencil, 3 stages, " + std::to_string(width) + "x" + std::to_string(height);
    w.name = name;
    w.make_graph = [](node_context& ctx) { return workloads::stencil_chain(ctx, 3); };
    for (index_t s : {1, 4}) w.hand.push_back(loop_of(-1, 1, s, false, "rows in blocks of " + std::to_string(s)));
    for (index_t strip : {1024, 4096, 16384}) {
      for (index_t s : {1, 4}) {
        w.hand.push_back(tile_of(
            1, s, 0, strip, "strips of " + std::to_string(strip) + " columns, rows in blocks of " + std::to_string(s)));
        w.hand.push_back(tile_of(1, s, 0, strip,
                                 "strips of " + std::to_string(strip) + " columns, rows in blocks of " +
                                     std::to_string(s) + ", stored at the strip",
                                 true));
      }
    }
    w.inputs = {&in};
    w.outputs = {&out};
    w.check = [&, name](const std::string& what) { check_near(out, ref, 0.0f, name + ", " + what); };
    add(std::move(w));

    // The same on the host's threads: parallel rows (pipelined), and tiles whose strips are
    // parallel (each strip with its own windows, stored at the strip).
    workload pw;
    const std::string pname =
        "parallel wide stencil, 3 stages, " + std::to_string(width) + "x" + std::to_string(height);
    pw.name = pname;
    pw.parallel = true;
    pw.make_graph = [](node_context& ctx) { return workloads::stencil_chain(ctx, 3); };
    for (index_t s : {1, 4}) {
      pw.hand.push_back(loop_of(-1, 1, s, true, "rows in blocks of " + std::to_string(s) + ", parallel"));
    }
    for (index_t strip : {4096, 16384}) {
      for (index_t s : {1, 4}) {
        pw.hand.push_back(tile_of(1, s, 0, strip,
                                  "strips of " + std::to_string(strip) + " columns, parallel, rows in blocks of " +
                                      std::to_string(s) + ", stored at the strip",
                                  true, true));
      }
    }
    pw.inputs = {&in};
    pw.outputs = {&out};
    pw.check = [&, pname](const std::string& what) { check_near(out, ref, 0.0f, pname + ", " + what); };
    add(std::move(pw));
  }
  {
    const index_t m = quick ? 64 : 256, k = 256, n = quick ? 2048 : 8192;
    buffer<float, 2> a({k, m}), b({n, k}), c({n, m}), ref({n, m});
    for (auto* x : {&a, &b, &c, &ref}) x->allocate();
    fill_random(a, 1);
    fill_random(b, 2);
    workloads::matmul(a, b, ref);
    workload w;
    const std::string name = "matmul, rows beyond L2, " + std::to_string(m) + "x" + std::to_string(k) + " x " +
                             std::to_string(k) + "x" + std::to_string(n);
    w.name = name;
    w.make_graph = [](node_context& ctx) { return matmul_graph(ctx); };
    for (index_t s : {1, 4, 16}) w.hand.push_back(loop_of(-1, 1, s, false, "rows in blocks of " + std::to_string(s)));
    for (index_t strip : {256, 1024}) {
      for (index_t s : {4, 16, 64}) {
        w.hand.push_back(tile_of(
            1, s, 0, strip, "panels of " + std::to_string(strip) + " columns, rows in blocks of " + std::to_string(s)));
      }
    }
    w.inputs = {&a, &b};
    w.outputs = {&c};
    w.check = [&, name](const std::string& what) { check_near(c, ref, 1e-4f, name + ", " + what); };
    add(std::move(w));
  }
}

// ML workloads 4 (attention), 1 (a product with packing) and 6 (a convolution).
void ml_rows(bool quick, const add_fn& add) {
  {
    const index_t d = 64, rows = quick ? 256 : 1024;
    buffer<float, 2> q({d, rows}), kt({rows, d}), v({d, rows}), out({d, rows}), ref({d, rows});
    for (auto* x : {&q, &kt, &v, &out, &ref}) x->allocate();
    fill_random(q, 4);
    fill_random(kt, 5);
    fill_random(v, 6);
    workloads::attention_reference(q, kt, v, ref);
    workload w;
    const std::string name = "attention, sequence " + std::to_string(rows) + ", head 64";
    w.name = name;
    w.make_graph = [](node_context& ctx) { return workloads::attention(ctx); };
    for (index_t s : {4, 16, 64}) w.hand.push_back(loop_of(-1, 1, s, false, "rows in blocks of " + std::to_string(s)));
    w.inputs = {&q, &kt, &v};
    w.outputs = {&out};
    w.check = [&, name](const std::string& what) { check_near(out, ref, 1e-4f, name + ", " + what); };
    add(std::move(w));
  }
  {
    const index_t m = 16, k = 512, n = 1024, panel = 64;
    buffer<float, 2> a({k, m}), b({n, k}), out({n, m}), ref({n, m});
    for (auto* x : {&a, &b, &out, &ref}) x->allocate();
    fill_random(a, 7);
    fill_random(b, 8);
    workloads::matmul(a, b, ref);
    workload w;
    const std::string name = "product with packing, 16x512 x 512x1024";
    w.name = name;
    w.make_graph = [panel](node_context& ctx) { return workloads::packed_matmul::make(ctx, panel); };
    for (index_t s : {1, 4}) {
      w.hand.push_back(loop_of(-1, 0, s * panel, false, "columns in panels of " + std::to_string(s * panel)));
    }
    w.inputs = {&a, &b};
    w.outputs = {&out};
    w.check = [&, name](const std::string& what) { check_near(out, ref, 1e-4f, name + ", " + what); };
    add(std::move(w));
  }
  {
    const index_t channels = 16, outs = 32, size = quick ? 64 : 128;
    buffer<float, 3> in({channels, size, size}), out({outs, size, size}), ref({outs, size, size});
    buffer<float, 2> wt({outs, 9 * channels});
    buffer<float, 1> bias({outs});
    for (auto* x : {&in, &out, &ref}) x->allocate();
    wt.allocate();
    bias.allocate();
    fill_random(in, 9);
    fill_random(wt, 10);
    fill_random(bias, 11);
    workloads::convolution::reference(in, wt, bias, ref);
    workload w;
    const std::string name = "convolution 3x3, " + std::to_string(size) + "x" + std::to_string(size) + "x16 -> 32";
    w.name = name;
    w.make_graph = [channels](node_context& ctx) { return workloads::convolution::make(ctx, channels); };
    for (index_t s : {1, 4, 16}) w.hand.push_back(loop_of(-1, 2, s, false, "rows in blocks of " + std::to_string(s)));
    w.inputs = {&in, &wt, &bias};
    w.outputs = {&out};
    w.check = [&, name](const std::string& what) { check_near(out, ref, 1e-4f, name + ", " + what); };
    add(std::move(w));
  }
}

#ifdef SLINKY_BENCH_OPENBLAS
// c(j, i) = sum_k a(k, i) b(j, k) by OpenBLAS's sgemm (row-major: a is M x K, b K x N, c M x N),
// one call for the crop's rows, or one per row where a fold of a or c splits them.
index_t sgemm_product(const buffer<const float>& a, const buffer<const float>& b, const buffer<float>& c) {
  const dim& cj = c.dim(0);
  const dim& ci = c.dim(1);
  const dim& ak = a.dim(0);
  if (cj.empty() || ci.empty()) return 0;
  const bool dense = c.dim(0).stride() == sizeof(float) && b.dim(0).stride() == sizeof(float) &&
                     a.dim(0).stride() == sizeof(float) && !b.dim(1).is_folded(ak.min(), ak.max());
  if (ak.empty() || !dense) return workloads::matmul(a, b, c);
  const bool split = c.dim(1).is_folded(ci.min(), ci.max()) || a.dim(1).is_folded(ci.min(), ci.max());
  const index_t f = static_cast<index_t>(sizeof(float));
  for (index_t i = ci.min(); i <= ci.max();) {
    const index_t m = split ? 1 : ci.extent();
    // A single row's leading dimension is not used, but sgemm wants it at least the row's length (a
    // buffer of one row may have any stride there).
    const index_t lda = m == 1 ? ak.extent() : a.dim(1).stride() / f;
    const index_t ldc = m == 1 ? cj.extent() : c.dim(1).stride() / f;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, cj.extent(), ak.extent(), 1.0f, &a(ak.min(), i), lda,
                &b(cj.min(), ak.min()), b.dim(1).stride() / f, 0.0f, &c(cj.min(), i), ldc);
    i += m;
  }
  return 0;
}
#endif

// Callbacks written as kernel libraries write them: benchmark 5's matrix chain and attention with
// the register-blocked product (workloads::blocked, faster per row on blocks of 4 rows or more),
// and the matrix chain with OpenBLAS's sgemm when the benchmark is built with it.
void kernel_rows(bool quick, const add_fn& add) {
  {
    const index_t n = quick ? 256 : 512;
    matmul_chain_buffers m(n);
    auto& [a, b, c, out, ab, ref] = m;
    workload w;
    const std::string name = "matmul chain, register-blocked kernel, " + std::to_string(n);
    w.name = name;
    w.make_graph = [](node_context& ctx) { return workloads::matmul_chain(ctx, workloads::blocked::product); };
    // What the kernel's author knows: it computes 4 rows at once.
    w.make_hinted_graph = [](node_context& ctx) {
      return workloads::matmul_chain(ctx, workloads::blocked::product, {.dim = 1, .multiple = 4});
    };
    for (index_t s : {1, 4, 8, 16, 32, 64}) {
      w.hand.push_back(loop_of(-1, 1, s, false, "rows in blocks of " + std::to_string(s)));
    }
    w.inputs = {&a, &b, &c};
    w.outputs = {&out};
    w.check = [&, name](const std::string& what) { check_near(out, ref, 1e-4f, name + ", " + what); };
    add(std::move(w));
#ifdef SLINKY_BENCH_OPENBLAS
    // OpenBLAS on the calling thread only: the pipelines here are serial.
    openblas_set_num_threads(1);
    workload s;
    const std::string sname = "matmul chain, OpenBLAS sgemm, " + std::to_string(n);
    s.name = sname;
    s.make_graph = [](node_context& ctx) { return workloads::matmul_chain(ctx, sgemm_product); };
    // What a user of sgemm knows: every call packs the right-hand side (k x n floats), about the
    // time of copying it from memory, taken as 0.05 ns per byte (the development machine's
    // 1 MiB right-hand side cost 60 to 70 us per call in blocks of 4 and 1 rows: an order of
    // magnitude, not a measurement the scheduler makes).
    s.make_hinted_graph = [n](node_context& ctx) {
      return workloads::matmul_chain(ctx, sgemm_product, {.ns_per_call = 0.05 * sizeof(float) * n * n});
    };
    for (index_t step : {1, 4, 16, 32, 64, 128}) {
      s.hand.push_back(loop_of(-1, 1, step, false, "rows in blocks of " + std::to_string(step)));
    }
    s.inputs = {&a, &b, &c};
    s.outputs = {&out};
    // sgemm's rounding depends on the shape of the call: each variant is checked against the reference.
    s.exact = false;
    s.check = [&, sname](const std::string& what) { check_near(out, ref, 1e-3f, sname + ", " + what); };
    add(std::move(s));
#endif
  }
  {
    const index_t d = 64, rows = quick ? 256 : 1024;
    buffer<float, 2> q({d, rows}), kt({rows, d}), v({d, rows}), out({d, rows}), ref({d, rows});
    for (auto* x : {&q, &kt, &v, &out, &ref}) x->allocate();
    fill_random(q, 4);
    fill_random(kt, 5);
    fill_random(v, 6);
    workloads::attention_reference(q, kt, v, ref);
    workload w;
    const std::string name = "attention, register-blocked products, sequence " + std::to_string(rows) + ", head 64";
    w.name = name;
    w.make_graph = [](node_context& ctx) { return workloads::attention(ctx, workloads::blocked::product); };
    w.make_hinted_graph = [](node_context& ctx) {
      return workloads::attention(ctx, workloads::blocked::product, {.dim = 1, .multiple = 4});
    };
    for (index_t s : {1, 4, 8, 16, 32, 64}) {
      w.hand.push_back(loop_of(-1, 1, s, false, "rows in blocks of " + std::to_string(s)));
    }
    w.inputs = {&q, &kt, &v};
    w.outputs = {&out};
    w.check = [&, name](const std::string& what) { check_near(out, ref, 1e-4f, name + ", " + what); };
    add(std::move(w));
  }
}

// ML workload 5: a chain into a parallel partial reduction, then the final one.
void reduction_row(bool quick, const add_fn& add) {
  const index_t n = quick ? 256 << 10 : 1 << 20, chunk = 4096;
  buffer<float, 1> in({n}), out({1});
  in.allocate();
  out.allocate();
  fill_random(in, 12);
  const float ref = workloads::reduction::reference(in, chunk);
  workload w;
  const std::string name = "chain into a parallel reduction, " + std::to_string(n >> 10) + "K";
  w.name = name;
  w.parallel = true;
  w.make_graph = [](node_context& ctx) { return workloads::reduction::make(ctx, chunk); };
  for (index_t s : {1, 8, 32}) {
    w.hand.push_back(loop_of(2, 0, s, true, "partials in blocks of " + std::to_string(s) + " (x 4096), parallel"));
  }
  w.inputs = {&in};
  w.outputs = {&out};
  w.check = [&, name](const std::string& what) {
    if (!(std::abs(out(0) - ref) <= 1e-5f * (1.0f + std::abs(ref)))) {
      wrong_result(name + ", " + what + ": " + std::to_string(out(0)) + ", expected " + std::to_string(ref));
    }
  };
  add(std::move(w));
}

}  // namespace sched_bench
