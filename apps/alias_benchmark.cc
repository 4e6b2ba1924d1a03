// Copies and aliasing (docs/copies.md): pipelines full of data movement, run with aliasing (the
// default) and without (build_options::no_alias_buffers), printing time, peak intermediate
// memory (allocate hook, auto_stack_threshold = 0) and calls of the copy impl.
//
// - transpose then elementwise, 4096 x 4096 floats: out(x, y) = in(y, x) * 2 + 1.
// - pad then stencil, 4096 x 4096: a scaled image padded by one pixel of zeros, then a 3x3 box.
// - an ML-style block: two flat inputs reshaped to [256, 1024], an elementwise op on each,
//   concatenated along the features, transposed to [1024, 512], an elementwise op.
//
// The unscheduled variants allocate their intermediates whole, and their time is mostly the
// page faults of that fresh memory. glibc's malloc moves its mmap threshold as blocks are freed,
// so whether a run gets fresh pages or pages an earlier run freed depends on the order of the
// runs: at --quick size the same variant took 0.2 ms or 3-7 ms with 3, 5 or 9 repetitions. The
// benchmark fixes the threshold at glibc's initial 128 KiB (mallopt, which stops the moving), so
// every block of 128 KiB and more is fresh memory in every run of every variant, as it is at full
// size anyway; --dynamic-malloc keeps glibc's moving threshold.
//
// Usage: alias_benchmark [--quick] [--reps N] [--size N] [--csv F.csv] [--dynamic-malloc]
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "benchmark_util.h"
#include "pipeline_bench.h"
#include "slinky/builder/pipeline.h"
#include "workloads.h"

using namespace slinky;
using namespace slinky_bench;

namespace {

std::atomic<long> copy_calls{0};

void counting_copy(const raw_buffer& src, const raw_buffer& dst, const raw_buffer& pad) {
  ++copy_calls;
  copy(src, dst, pad);
}

// The kernels of the padded stencil (workloads.h), used here by the transpose and the ML block too.
using workloads::padded_stencil::affine;
using workloads::padded_stencil::scale2;

index_t scale3(const buffer<const float>& in, const buffer<float>& out) { return affine(in, out, 3.0f, -1.0f); }

index_t relu(const buffer<const float>& in, const buffer<float>& out) {
  for_each_contiguous_slice(
      out,
      [&](index_t n, float* o, const float* i) {
        for (index_t k = 0; k < n; ++k) o[k] = std::max(i[k], 0.0f);
      },
      in);
  return 0;
}

struct variant {
  std::string name;
  pipeline p;
  std::vector<const raw_buffer*> inputs;
  std::vector<const raw_buffer*> outputs;
};

struct result {
  double seconds;
  index_t peak;
  index_t allocations;
  long copies;
};

result measure_memory(const variant& v) {
  alloc_tracker tracker(0);
  copy_calls = 0;
  if (v.p.evaluate(v.inputs, v.outputs, tracker.context) != 0) wrong_result(v.name + ": evaluate failed");
  return {0, tracker.peak, tracker.allocations, copy_calls};
}

buffer<float, 2> image(index_t w, index_t h) {
  buffer<float, 2> b({w, h});
  b.allocate();
  return b;
}

void fill(buffer<float, 2>& b) {
  for (index_t y = 0; y < b.dim(1).extent(); ++y) {
    for (index_t x = 0; x < b.dim(0).extent(); ++x) b(x, y) = static_cast<float>((x * 13 + y * 7) % 101) - 50.0f;
  }
}

void expect_equal(const buffer<float, 2>& a, const buffer<float, 2>& ref, const std::string& what) {
  for (index_t y = 0; y < ref.dim(1).extent(); ++y) {
    for (index_t x = 0; x < ref.dim(0).extent(); ++x) {
      if (a(x, y) != ref(x, y)) {
        wrong_result(what + ": wrong value at (" + std::to_string(x) + ", " + std::to_string(y) + ")");
      }
    }
  }
}

build_options options(bool alias) {
  build_options o;
  o.no_alias_buffers = !alias;
  return o;
}

// Times the variants interleaved, measures memory and copies (checking each variant's output
// against ref after its run), adds the table and CSV rows.
void run(const std::string& pipeline_name, std::vector<variant>& variants, const std::vector<buffer<float, 2>>& outs,
         const buffer<float, 2>& ref, int reps, table& t, csv_writer& csv) {
  std::vector<std::function<void()>> fns;
  for (variant& v : variants) {
    fns.push_back([&v] {
      if (v.p.evaluate(v.inputs, v.outputs) != 0) wrong_result(v.name + ": evaluate failed");
    });
  }
  std::vector<double> times = interleaved_median_seconds(fns, reps);
  for (std::size_t i = 0; i < variants.size(); ++i) {
    result r = measure_memory(variants[i]);
    expect_equal(outs[i], ref, pipeline_name + ", " + variants[i].name);
    t.add({pipeline_name, variants[i].name, fmt(times[i] * 1e3, 2), fmt(times[i] / times[0], 2),
           std::to_string(r.peak / 1024), std::to_string(r.allocations), std::to_string(r.copies)});
    csv.add(
        {pipeline_name, variants[i].name, reps, times[i] * 1e3, times[i] / times[0], r.peak, r.allocations, r.copies});
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = has_flag(argc, argv, "--quick");
  const bool fixed_malloc = !has_flag(argc, argv, "--dynamic-malloc");
#ifdef __GLIBC__
  if (fixed_malloc) mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
  const index_t n = std::stoll(arg(argc, argv, "--size", quick ? "512" : "4096"));
  const int reps = std::stoi(arg(argc, argv, "--reps", quick ? "3" : "7"));
  print_machine("Copies and aliasing");
  std::printf("%lld x %lld floats, median of %d interleaved repetitions; time relative to the first row of each "
              "pipeline; peak = peak intermediate memory (allocate hook, auto_stack_threshold = 0); %s\n\n",
              static_cast<long long>(n), static_cast<long long>(n), reps,
              fixed_malloc
                  ? "malloc's mmap threshold fixed at 128 KiB (blocks that large are fresh memory in every run)"
                  : "malloc's mmap threshold moving (--dynamic-malloc)");
  table t({"pipeline", "variant", "ms", "relative", "peak KiB", "allocations", "copy calls"});
  csv_writer csv(argc, argv,
                 {"pipeline", "variant", "repetitions", "time_ms", "time_vs_first_variant", "peak_intermediate_bytes",
                  "allocations", "copy_calls"});

  // Transpose then elementwise.
  {
    buffer<float, 2> in = image(n, n);
    fill(in);
    buffer<float, 2> ref = image(n, n);
    for (index_t y = 0; y < n; ++y) {
      for (index_t x = 0; x < n; ++x) ref(x, y) = in(y, x) * 2.0f + 1.0f;
    }
    std::vector<buffer<float, 2>> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(image(n, n));
    std::vector<variant> variants;
    for (bool strips : {false, true}) {
      for (bool alias : {false, true}) {
        node_context ctx;
        auto bin = buffer_expr::make(ctx, "in", 2, sizeof(float));
        auto bt = buffer_expr::make(ctx, "t", 2, sizeof(float));
        auto bout = buffer_expr::make(ctx, "out", 2, sizeof(float));
        var x(ctx, "x"), y(ctx, "y");
        func transpose = func::make_copy({bin, {point(y), point(x)}}, {bt, {x, y}}, counting_copy);
        func f = func::make(scale2, {{bt, {point(x), point(y)}}}, {{bout, {x, y}}});
        if (strips) f.loops({{y, 32}});
        std::string name =
            std::string(strips ? "strips of 32 rows" : "no schedule") + (alias ? ", aliased" : ", copied");
        variants.push_back({name, build_pipeline(ctx, {bin}, {bout}, options(alias)), {&in}, {&outs[variants.size()]}});
      }
    }
    run("transpose, elementwise", variants, outs, ref, reps, t, csv);
  }

  // Pad then stencil: out(x, y) = box of p, p = scale2(in) inside in's bounds, 0 outside.
  {
    buffer<float, 2> in = image(n, n);
    fill(in);
    buffer<float, 2> ref = image(n, n);
    workloads::padded_stencil::reference(in, ref);
    std::vector<buffer<float, 2>> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(image(n, n));
    std::vector<variant> variants;
    for (bool strips : {false, true}) {
      for (bool alias : {false, true}) {
        node_context ctx;
        graph g = workloads::padded_stencil::make(ctx, counting_copy);
        func& stencil = g.funcs.back();
        if (strips) stencil.loops({{stencil.outputs()[0].dims[1], 32}});
        std::string name =
            std::string(strips ? "strips of 32 rows" : "no schedule") + (alias ? ", aliased" : ", copied");
        variants.push_back(
            {name, build_pipeline(ctx, g.inputs, g.outputs, options(alias)), {&in}, {&outs[variants.size()]}});
      }
    }
    run("pad, 3x3 stencil", variants, outs, ref, reps, t, csv);
  }

  // ML-style block: reshape, elementwise, concat, transpose, elementwise.
  {
    const index_t features = quick ? 64 : 256, tokens = quick ? 256 : 1024;
    buffer<float, 1> in0({features * tokens}), in1({features * tokens});
    in0.allocate();
    in1.allocate();
    for (index_t i = 0; i < features * tokens; ++i) {
      in0(i) = static_cast<float>(i % 97) - 40.0f;
      in1(i) = static_cast<float>(i % 89) - 30.0f;
    }
    buffer<float, 2> ref = image(tokens, 2 * features);
    for (index_t f = 0; f < 2 * features; ++f) {
      for (index_t tk = 0; tk < tokens; ++tk) {
        const float v =
            f < features ? in0(f + tk * features) * 2.0f + 1.0f : in1(f - features + tk * features) * 3.0f - 1.0f;
        ref(tk, f) = std::max(v, 0.0f);
      }
    }
    std::vector<buffer<float, 2>> outs;
    for (int i = 0; i < 2; ++i) outs.push_back(image(tokens, 2 * features));
    std::vector<variant> variants;
    for (bool alias : {false, true}) {
      node_context ctx;
      auto flat0 = buffer_expr::make(ctx, "flat0", 1, sizeof(float));
      auto flat1 = buffer_expr::make(ctx, "flat1", 1, sizeof(float));
      auto r0 = buffer_expr::make(ctx, "r0", 2, sizeof(float));
      auto r1 = buffer_expr::make(ctx, "r1", 2, sizeof(float));
      auto a = buffer_expr::make(ctx, "a", 2, sizeof(float));
      auto b = buffer_expr::make(ctx, "b", 2, sizeof(float));
      auto c = buffer_expr::make(ctx, "c", 2, sizeof(float));
      auto ct = buffer_expr::make(ctx, "ct", 2, sizeof(float));
      auto out = buffer_expr::make(ctx, "out", 2, sizeof(float));
      var f(ctx, "f"), tk(ctx, "t");
      const expr d = features;
      func reshape0 = func::make_copy({flat0, {point(f + tk * d)}}, {r0, {f, tk}}, counting_copy);
      func reshape1 = func::make_copy({flat1, {point(f + tk * d)}}, {r1, {f, tk}}, counting_copy);
      func fa = func::make(scale2, {{r0, {point(f), point(tk)}}}, {{a, {f, tk}}});
      func fb = func::make(scale3, {{r1, {point(f), point(tk)}}}, {{b, {f, tk}}});
      func concat = func::make_concat({a, b}, {c, {f, tk}}, 0, {0, d, 2 * d}, counting_copy);
      func transpose = func::make_copy({c, {point(f), point(tk)}}, {ct, {tk, f}}, counting_copy);
      func act = func::make(relu, {{ct, {point(tk), point(f)}}}, {{out, {tk, f}}});
      variants.push_back({alias ? "aliased" : "copied",
                          build_pipeline(ctx, {flat0, flat1}, {out}, options(alias)),
                          {&in0, &in1},
                          {&outs[variants.size()]}});
    }
    run("ML block (reshape, concat, transpose)", variants, outs, ref, reps, t, csv);
  }

  t.print();
  return 0;
}
