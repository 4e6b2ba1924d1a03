// Benchmark of slinky::copy against memcpy of the same bytes: contiguous, padded-row and transposed
// 2-D float copies from 32 KB to 16 MB. Prints a markdown table (and CSV with --csv FILE) and
// whether the contiguous copy reaches 90% of memcpy's throughput. Then reshapes run by a
// pipeline (a 3-D input read as a 2-D output by its flat index, docs/copies.md "Reshapes") in
// elements per second against memcpy of the same bytes, with the target for rows of 1 KiB and
// more (at most 1.5x memcpy's time). Then pads (a copy into a larger output, padded from a
// buffer of the output's shape or with a scalar) in elements per second against memcpy of the
// output's bytes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "benchmark_util.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/buffer.h"

namespace {

using slinky::buffer;
using slinky::index_t;

constexpr int warmup_samples = 5;
constexpr int samples = 41;
// Each sample repeats the copy until at least this many bytes have been moved, so that small
// copies are not dominated by the clock. Short samples keep the median robust on a shared machine:
// a burst of other work spoils few samples.
constexpr std::size_t bytes_per_sample = 8 << 20;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double time_once(const std::function<void()>& fn, int reps) {
  const auto begin = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) fn();
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(end - begin).count() / reps;
}

struct result {
  std::string name;
  std::size_t bytes;
  int reps;
  double slinky_s;
  double memcpy_s;
  // The median over neighbouring (slinky, memcpy) sample pairs of memcpy time / slinky time, which
  // cancels drift in the machine's speed better than the ratio of the medians.
  double ratio;
};

// Times a and b interleaved (alternating which goes first) and returns their median times.
result measure(const std::string& name, std::size_t bytes, const std::function<void()>& slinky_copy,
               const std::function<void()>& memcpy_copy) {
  const int reps = static_cast<int>(std::max<std::size_t>(1, bytes_per_sample / bytes));
  for (int i = 0; i < warmup_samples; ++i) {
    time_once(slinky_copy, reps);
    time_once(memcpy_copy, reps);
  }
  std::vector<double> a, b, ratios;
  for (int i = 0; i < samples; ++i) {
    if (i % 2 == 0) {
      a.push_back(time_once(slinky_copy, reps));
      b.push_back(time_once(memcpy_copy, reps));
    } else {
      b.push_back(time_once(memcpy_copy, reps));
      a.push_back(time_once(slinky_copy, reps));
    }
    ratios.push_back(b.back() / a.back());
  }
  return {name, bytes, reps, median(a), median(b), median(ratios)};
}

void fill_random(float* p, std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<float>(rng() % 100000);
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "WRONG RESULT: %s\n", what.c_str());
  std::exit(1);
}

// A buffer<float, 2> of w x h elements whose rows are row_stride bytes apart.
buffer<float, 2> make_image(index_t w, index_t h, index_t row_stride) {
  buffer<float, 2> b({w, h});
  b.mutable_dim(1).set_stride(row_stride);
  b.allocate();
  return b;
}

result bench_contiguous(std::size_t bytes) {
  const index_t w = 256, h = bytes / (w * sizeof(float));
  buffer<float, 2> src = make_image(w, h, w * sizeof(float));
  buffer<float, 2> dst = make_image(w, h, w * sizeof(float));
  fill_random(src.base(), w * h, 1);
  std::memset(dst.base(), 0, bytes);
  slinky::copy(src, dst);
  if (std::memcmp(src.base(), dst.base(), bytes) != 0) fail("contiguous copy");
  return measure(
      "contiguous", bytes, [&] { slinky::copy(src, dst); }, [&] { std::memcpy(dst.base(), src.base(), bytes); });
}

result bench_padded_rows(std::size_t bytes) {
  // Rows of 1 KB in src are 64 bytes apart, as in an image with aligned, padded rows.
  const index_t w = 256, h = bytes / (w * sizeof(float));
  buffer<float, 2> src = make_image(w, h, w * sizeof(float) + 64);
  buffer<float, 2> dense = make_image(w, h, w * sizeof(float));
  buffer<float, 2> dst = make_image(w, h, w * sizeof(float));
  fill_random(src.base(), src.size_bytes() / sizeof(float), 2);
  std::memset(dst.base(), 0, bytes);
  slinky::copy(src, dst);
  for (index_t y = 0; y < h; ++y) {
    if (std::memcmp(&src(0, y), &dst(0, y), w * sizeof(float)) != 0) fail("padded rows, row " + std::to_string(y));
  }
  return measure(
      "padded rows", bytes, [&] { slinky::copy(src, dst); }, [&] { std::memcpy(dst.base(), dense.base(), bytes); });
}

result bench_transpose(std::size_t bytes) {
  const index_t n = bytes / sizeof(float);
  const index_t w = index_t{1} << static_cast<int>(std::ceil(std::log2(std::sqrt(static_cast<double>(n)))));
  const index_t h = n / w;
  buffer<float, 2> src = make_image(h, w, h * sizeof(float));
  buffer<float, 2> dst = make_image(w, h, w * sizeof(float));
  buffer<float, 2> dense = make_image(w, h, w * sizeof(float));
  fill_random(src.base(), n, 3);
  // src read at dst's coordinates (x, y) is src(y, x).
  buffer<float, 2> view = src;
  view.mutable_dim(0) = src.dim(1);
  view.mutable_dim(1) = src.dim(0);
  std::memset(dst.base(), 0, bytes);
  slinky::copy(view, dst);
  for (index_t y = 0; y < h; ++y) {
    for (index_t x = 0; x < w; ++x) {
      if (dst(x, y) != src(y, x)) fail("transpose at " + std::to_string(x) + ", " + std::to_string(y));
    }
  }
  return measure(
      "transpose", bytes, [&] { slinky::copy(view, dst); }, [&] { std::memcpy(dst.base(), dense.base(), bytes); });
}

struct reshape_result {
  std::string name;
  index_t row_bytes;  // The runs contiguous in both buffers (src rows).
  result r;
  int calls;
};

// A 3-D input of r0 x r1 x r2 floats, rows of r0 padded by 64 bytes (or dense), read as a dense
// 2-D output w wide by its flat index, with the extents symbolic (the pipeline is built once for
// any shape). memcpy copies the same bytes between dense buffers.
reshape_result bench_reshape(index_t r0, index_t r1, index_t r2, index_t w, bool padded) {
  using namespace slinky;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 3, sizeof(float));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(float));
  var x(ctx, "x"), y(ctx, "y");
  const expr flat = x + y * out->dim(0).extent();
  const expr e0 = in->dim(0).extent(), e1 = in->dim(1).extent();
  int calls = 0;
  func f = func::make_copy({in, {point(flat % e0), point(flat / e0 % e1), point(flat / (e0 * e1))}}, {out, {x, y}},
                           [&calls](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
                             ++calls;
                             copy(s, d, p);
                           });
  pipeline p = build_pipeline(ctx, {in}, {out});

  const index_t n = r0 * r1 * r2;
  const index_t h = n / w;
  buffer<float, 3> src({r0, r1, r2});
  if (padded) {
    src.mutable_dim(1).set_stride(r0 * sizeof(float) + 64);
    src.mutable_dim(2).set_stride(src.dim(1).stride() * r1);
  }
  src.allocate();
  buffer<float, 2> dst({w, h});
  dst.allocate();
  buffer<float, 2> dense({w, h});
  dense.allocate();
  for (index_t k = 0; k < r2; ++k) {
    for (index_t j = 0; j < r1; ++j) {
      for (index_t i = 0; i < r0; ++i) src(i, j, k) = static_cast<float>(i + r0 * (j + r1 * k));
    }
  }
  const raw_buffer* ins[] = {&src};
  const raw_buffer* outs[] = {&dst};
  auto run = [&] {
    if (p.evaluate(ins, outs) != 0) fail("reshape evaluation");
  };
  run();
  for (index_t i = 0; i < n; ++i) {
    if (dst(i % w, i / w) != static_cast<float>(i)) fail("reshape at flat index " + std::to_string(i));
  }
  const int calls_per_run = calls;
  const std::size_t bytes = n * sizeof(float);
  const std::string name = "reshape " + std::to_string(r0) + "x" + std::to_string(r1) + "x" + std::to_string(r2) +
                           " -> " + std::to_string(w) + "x" + std::to_string(h) +
                           (padded ? ", padded rows" : ", dense");
  result r = measure(name, bytes, run, [&] { std::memcpy(dst.base(), dense.base(), bytes); });
  return {name, static_cast<index_t>(padded ? r0 * sizeof(float) : bytes), r, calls_per_run};
}

struct pad_result {
  result r;
  int calls;
};

// A w x h input copied into an output larger by border elements on each side, padded from a
// buffer of the output's shape (read at the output's coordinates) or with a scalar, by a pipeline.
// memcpy copies the output's bytes between dense buffers.
pad_result bench_pad(index_t w, index_t h, index_t border, bool from_buffer) {
  using namespace slinky;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(float));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(float));
  auto pad = from_buffer ? buffer_expr::make(ctx, "pad", 2, sizeof(float))
                         : buffer_expr::make_scalar<float>(ctx, "pad", -1.0f);
  var x(ctx, "x"), y(ctx, "y");
  int calls = 0;
  const box_expr pad_bounds = from_buffer ? box_expr{point(x), point(y)} : box_expr{};
  func f = func::make_copy({in, {point(x), point(y)}, {in->dim(0).bounds, in->dim(1).bounds}}, {out, {x, y}},
                           {pad, pad_bounds}, [&calls](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
                             ++calls;
                             copy(s, d, p);
                           });
  pipeline p = from_buffer ? build_pipeline(ctx, {in, pad}, {out}) : build_pipeline(ctx, {in}, {out});

  const index_t ow = w + 2 * border, oh = h + 2 * border;
  buffer<float, 2> src({w, h});
  src.allocate();
  fill_random(src.base(), w * h, 4);
  buffer<float, 2> pad_buf({ow, oh});
  pad_buf.translate(-border, -border);
  pad_buf.allocate();
  fill_random(pad_buf.base(), ow * oh, 5);
  buffer<float, 2> dst({ow, oh});
  dst.translate(-border, -border);
  dst.allocate();
  buffer<float, 2> dense({ow, oh});
  dense.allocate();
  const raw_buffer* ins_buffer[] = {&src, &pad_buf};
  const raw_buffer* ins_scalar[] = {&src};
  const raw_buffer* outs[] = {&dst};
  auto run = [&] {
    const index_t r = from_buffer ? p.evaluate(ins_buffer, outs) : p.evaluate(ins_scalar, outs);
    if (r != 0) fail("pad evaluation");
  };
  run();
  for (index_t j = -border; j < h + border; ++j) {
    for (index_t i = -border; i < w + border; ++i) {
      const bool inside = 0 <= i && i < w && 0 <= j && j < h;
      const float expected = inside ? src(i, j) : from_buffer ? pad_buf(i, j) : -1.0f;
      if (dst(i, j) != expected) fail("pad at " + std::to_string(i) + ", " + std::to_string(j));
    }
  }
  const int calls_per_run = calls;
  const std::size_t bytes = ow * oh * sizeof(float);
  const std::string name = "pad " + std::to_string(w) + "x" + std::to_string(h) + " by " + std::to_string(border) +
                           (from_buffer ? ", from a buffer" : ", scalar");
  result r = measure(name, bytes, run, [&] { std::memcpy(dense.base(), dst.base(), bytes); });
  return {r, calls_per_run};
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

std::string compiler_flags() {
  std::string s = "compiler: " __VERSION__;
#ifdef SLINKY_BENCHMARK_FLAGS
  s += ", flags: " SLINKY_BENCHMARK_FLAGS;
#endif
#ifdef __OPTIMIZE__
  s += ", optimized";
#else
  s += ", NOT optimized";
#endif
#ifdef NDEBUG
  s += ", NDEBUG";
#endif
#ifdef __AVX2__
  s += ", AVX2 enabled (-march=native or similar)";
#else
  s += ", no -march=native";
#endif
  return s;
}

std::string format_size(std::size_t bytes) {
  return bytes >= (1 << 20) ? std::to_string(bytes >> 20) + " MB" : std::to_string(bytes >> 10) + " KB";
}

double gb_per_s(std::size_t bytes, double seconds) { return bytes / seconds * 1e-9; }

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
      ++i;
    } else {
      std::fprintf(stderr, "usage: %s [--csv FILE]\n", argv[0]);
      return 2;
    }
  }
  slinky_bench::csv_writer csv(argc, argv,
                               {"copy", "bytes", "repetitions_per_sample", "slinky_time_us", "memcpy_time_us",
                                "slinky_gb_per_s", "memcpy_gb_per_s", "slinky_over_memcpy_throughput"});
  std::printf("%s\n", compiler_flags().c_str());
  std::printf("nproc: %ld, cpu: %s\n", sysconf(_SC_NPROCESSORS_ONLN), cpu_model().c_str());
  std::printf("%d warm-up and %d timed samples per row, interleaved with memcpy; medians reported, and the\n"
              "ratio is the median of memcpy/slinky time over neighbouring sample pairs\n\n",
              warmup_samples, samples);

  const std::size_t sizes[] = {32 << 10, 256 << 10, 2 << 20, 16 << 20};
  std::vector<result> results;
  for (std::size_t bytes : sizes) {
    results.push_back(bench_contiguous(bytes));
    results.push_back(bench_padded_rows(bytes));
    results.push_back(bench_transpose(bytes));
  }

  std::printf(
      "| copy | size | reps/sample | slinky (us) | memcpy (us) | slinky GB/s | memcpy GB/s | slinky/memcpy |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const result& r : results) {
    std::printf("| %s | %s | %d | %.2f | %.2f | %.2f | %.2f | %.3f |\n", r.name.c_str(), format_size(r.bytes).c_str(),
                r.reps, r.slinky_s * 1e6, r.memcpy_s * 1e6, gb_per_s(r.bytes, r.slinky_s),
                gb_per_s(r.bytes, r.memcpy_s), r.ratio);
  }
  std::printf("\n");
  for (const result& r : results) {
    if (r.name != "contiguous") continue;
    const double ratio = r.ratio;
    std::printf("contiguous copy / memcpy throughput (%s): %.3f (target >= 0.90): %s\n", format_size(r.bytes).c_str(),
                ratio, ratio >= 0.90 ? "PASS" : "MISS");
  }

  // Reshapes of several radices (row lengths that do not divide the output's), about 2 MB each.
  std::vector<reshape_result> reshapes;
  reshapes.push_back(bench_reshape(64, 61, 128, 976, true));
  reshapes.push_back(bench_reshape(256, 15, 128, 640, true));
  reshapes.push_back(bench_reshape(300, 13, 128, 1040, true));
  reshapes.push_back(bench_reshape(1000, 5, 100, 1250, true));
  reshapes.push_back(bench_reshape(300, 13, 128, 1040, false));
  std::printf(
      "\n| reshape | src run | calls | slinky Melem/s | memcpy Melem/s | slinky time / memcpy time | target |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  for (const reshape_result& rr : reshapes) {
    const result& r = rr.r;
    const double elems = static_cast<double>(r.bytes / sizeof(float));
    const double time_ratio = 1.0 / r.ratio;
    const bool applies = rr.row_bytes >= 1024;
    std::printf("| %s | %ld B | %d | %.0f | %.0f | %.2f | %s |\n", r.name.c_str(), static_cast<long>(rr.row_bytes),
                rr.calls, elems / r.slinky_s * 1e-6, elems / r.memcpy_s * 1e-6, time_ratio,
                !applies            ? "(rows < 1 KiB: none)"
                : time_ratio <= 1.5 ? "<= 1.5: PASS"
                                    : "<= 1.5: MISS");
    results.push_back(r);
  }

  // Pads (about 2 MB of output each): from a buffer and with a scalar.
  std::vector<pad_result> pads;
  for (bool from_buffer : {true, false}) {
    pads.push_back(bench_pad(1000, 480, 16, from_buffer));
    pads.push_back(bench_pad(240, 2000, 8, from_buffer));
  }
  std::printf("\n| pad | calls | slinky Melem/s | memcpy Melem/s | slinky time / memcpy time |\n");
  std::printf("| --- | --- | --- | --- | --- |\n");
  for (const pad_result& pr : pads) {
    const result& r = pr.r;
    const double elems = static_cast<double>(r.bytes / sizeof(float));
    std::printf("| %s | %d | %.0f | %.0f | %.2f |\n", r.name.c_str(), pr.calls, elems / r.slinky_s * 1e-6,
                elems / r.memcpy_s * 1e-6, 1.0 / r.ratio);
    results.push_back(r);
  }

  for (const result& r : results) {
    csv.add({r.name, r.bytes, r.reps, r.slinky_s * 1e6, r.memcpy_s * 1e6, gb_per_s(r.bytes, r.slinky_s),
             gb_per_s(r.bytes, r.memcpy_s), r.ratio});
  }
  return 0;
}
