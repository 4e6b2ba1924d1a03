// Benchmark of slinky::copy against memcpy of the same bytes: contiguous, padded-row and transposed
// 2-D float copies from 32 KB to 16 MB. Prints a markdown table (and CSV with --csv FILE) and
// whether the contiguous copy reaches 90% of memcpy's throughput.
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

  for (const result& r : results) {
    csv.add({r.name, r.bytes, r.reps, r.slinky_s * 1e6, r.memcpy_s * 1e6, gb_per_s(r.bytes, r.slinky_s),
             gb_per_s(r.bytes, r.memcpy_s), r.ratio});
  }
  return 0;
}
