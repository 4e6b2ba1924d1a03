// Helpers of the benchmarks that run slinky pipelines, on top of benchmark_util.h (which includes
// no slinky header): peak intermediate memory through the eval_config allocate/free hooks, timing
// by wall or thread CPU time, the cost of a page fault, flags, and benchmark 4's stencil chain
// (its stages and reference).
#ifndef SLINKY_APPS_PIPELINE_BENCH_H
#define SLINKY_APPS_PIPELINE_BENCH_H

#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "benchmark_util.h"

#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"

namespace slinky_bench {

// An eval_context whose config records every allocation. With stack_threshold = 0 (the
// default here) every intermediate goes through the hooks; with the evaluator's default (4096)
// small ones go on the stack and are not seen.
//
// With reuse_memory, freed blocks are kept and handed out again for allocations of the same
// size, so a pipeline run repeatedly does not touch fresh memory each time. This separates the
// cost of the first touch of fresh pages (large on sandboxed machines: page faults of tens of us)
// from the cost of the pipeline itself.
//
// The hooks take a mutex: a pipeline with parallel loops allocates from several threads.
struct alloc_tracker {
  slinky::eval_config config;
  slinky::eval_context context;
  slinky::index_t live = 0;
  slinky::index_t peak = 0;
  slinky::index_t allocations = 0;
  // The largest allocation of each buffer symbol.
  std::map<slinky::symbol_id, slinky::index_t> peak_by_sym;
  std::unordered_map<void*, slinky::index_t> sizes;
  bool reuse_memory;
  // Freed blocks kept for reuse, by size in bytes.
  std::multimap<slinky::index_t, void*> cache;
  std::mutex mutex;

  explicit alloc_tracker(slinky::index_t stack_threshold = 0, bool reuse_memory = false) : reuse_memory(reuse_memory) {
    config.auto_stack_threshold = stack_threshold;
    config.allocate = [this](slinky::var sym, slinky::raw_buffer* b) {
      std::lock_guard<std::mutex> lock(mutex);
      void* p = nullptr;
      if (this->reuse_memory && positive_strides(*b)) {
        b->init_strides();
        const slinky::index_t size = static_cast<slinky::index_t>(b->size_bytes());
        auto c = cache.find(size);
        if (c != cache.end()) {
          p = c->second;
          cache.erase(c);
        } else {
          const slinky::index_t a = std::max<slinky::index_t>(64, config.base_alignment);
          p = std::aligned_alloc(a, (std::max<slinky::index_t>(size, 1) + a - 1) / a * a);
        }
        b->base = size > 0 ? p : nullptr;
      } else {
        p = slinky::default_allocate(sym, b, config.base_alignment);
      }
      const slinky::index_t size = static_cast<slinky::index_t>(b->size_bytes());
      sizes[p] = size;
      live += size;
      peak = std::max(peak, live);
      ++allocations;
      slinky::index_t& s = peak_by_sym[sym.sym()];
      s = std::max(s, size);
      return p;
    };
    config.free = [this](slinky::var sym, slinky::raw_buffer* b, void* p) {
      std::lock_guard<std::mutex> lock(mutex);
      auto i = sizes.find(p);
      if (i == sizes.end()) {
        slinky::default_free(sym, b, p);
        return;
      }
      live -= i->second;
      if (this->reuse_memory) {
        cache.emplace(i->second, p);
      } else {
        slinky::default_free(sym, b, p);
      }
      sizes.erase(i);
    };
    context.config = &config;
  }
  alloc_tracker(const alloc_tracker&) = delete;
  alloc_tracker& operator=(const alloc_tracker&) = delete;
  ~alloc_tracker() {
    for (auto& c : cache) std::free(c.second);
  }

  // The caching path lays buffers out from the base upwards (as default_allocate does for
  // positive strides); buffers with negative strides take the default path.
  static bool positive_strides(const slinky::raw_buffer& b) {
    for (std::size_t d = 0; d < b.rank; ++d) {
      if (b.dims[d].stride() != slinky::dim::auto_stride && b.dims[d].stride() < 0) return false;
    }
    return true;
  }

  void reset() {
    live = peak = allocations = 0;
    peak_by_sym.clear();
    sizes.clear();
  }
  // The largest allocation of the buffer `sym` (0 if it was never allocated through the hooks).
  slinky::index_t peak_of(slinky::var sym) const {
    auto i = peak_by_sym.find(sym.sym());
    return i == peak_by_sym.end() ? 0 : i->second;
  }
};

inline bool has_flag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return true;
  }
  return false;
}

// The seconds of CPU time the calling thread has used (user and system).
inline double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// interleaved_medians_by (benchmark_util.h) the wall clock, or the thread's CPU time when
// cpu_time is set: on a shared, overloaded machine the wall time of a sample includes the time
// other processes ran, the CPU time does not (it still includes page faults and cache misses).
inline std::vector<double> interleaved_medians(const std::vector<std::function<void()>>& fns, int reps, bool cpu_time) {
  return cpu_time ? interleaved_medians_by(fns, reps, thread_cpu_seconds) : interleaved_median_seconds(fns, reps);
}

// median_seconds (benchmark_util.h) by wall or thread CPU time.
inline double median_of(const std::function<void()>& fn, int reps, int warmup, bool cpu_time) {
  if (!cpu_time) return median_seconds(fn, reps, warmup);
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    const double t0 = thread_cpu_seconds();
    fn();
    times.push_back(thread_cpu_seconds() - t0);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// The wall time of the first touch of a fresh page of memory (a page fault), in microseconds per
// 4 KiB page. Pipelines that allocate large intermediates on every run pay it.
inline double fresh_page_microseconds(std::size_t bytes = 4 << 20) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return -1;
  auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < bytes; i += 4096) static_cast<volatile char*>(p)[i] = 1;
  auto t1 = std::chrono::steady_clock::now();
  munmap(p, bytes);
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / static_cast<double>(bytes / 4096);
}

inline void print_fresh_page_cost() {
  std::printf("First touch of fresh memory on this machine: %.2f us per 4 KiB page (wall time; well under\n"
              "1 us on an unvirtualized Linux machine). Runs that malloc large intermediates pay it.\n\n",
              fresh_page_microseconds());
}

inline const char* clock_name(bool cpu_time) {
  return cpu_time ? "thread CPU time (--cpu-time)" : "wall-clock time (steady_clock; --cpu-time for CPU time)";
}

// Benchmark 4's stencil chains (an elementwise in * 2 + 1, then stages - 1 3x3 boxes): fills the
// input (the output's size plus a border of stages - 1, translated so the output starts at 0) and
// computes the reference output stage by stage in plain C++.
inline void fill_stencil_chain_input(slinky::buffer<float, 2>& in, slinky::index_t size, int border) {
  using slinky::index_t;
  for (index_t y = -border; y < size + border; ++y) {
    for (index_t x = -border; x < size + border; ++x) in(x, y) = static_cast<float>((x * 7 + y * 13) % 16);
  }
}
inline void stencil_chain_reference(const slinky::buffer<float, 2>& in, slinky::index_t size, int stages,
                                    slinky::buffer<float, 2>& ref) {
  using slinky::index_t;
  const int border = stages - 1;
  const index_t ew = size + 2 * border;
  std::vector<float> e(ew * ew);
  auto e_at = [&](index_t x, index_t y) -> float& { return e[(y + border) * ew + (x + border)]; };
  for (index_t y = -border; y < size + border; ++y) {
    for (index_t x = -border; x < size + border; ++x) e_at(x, y) = in(x, y) * 2.0f + 1.0f;
  }
  auto box_of = [](auto&& src, index_t x, index_t y) {
    return (src(x - 1, y - 1) + src(x, y - 1) + src(x + 1, y - 1)) + (src(x - 1, y) + src(x, y) + src(x + 1, y)) +
           (src(x - 1, y + 1) + src(x, y + 1) + src(x + 1, y + 1));
  };
  if (stages == 2) {
    for (index_t y = 0; y < size; ++y) {
      for (index_t x = 0; x < size; ++x) ref(x, y) = box_of(e_at, x, y);
    }
    return;
  }
  const index_t bw = size + 2;
  std::vector<float> b1(bw * bw);
  auto b1_at = [&](index_t x, index_t y) -> float& { return b1[(y + 1) * bw + (x + 1)]; };
  for (index_t y = -1; y < size + 1; ++y) {
    for (index_t x = -1; x < size + 1; ++x) b1_at(x, y) = box_of(e_at, x, y);
  }
  for (index_t y = 0; y < size; ++y) {
    for (index_t x = 0; x < size; ++x) ref(x, y) = box_of(b1_at, x, y);
  }
}

namespace stencil_chain {
using namespace slinky;

// Benchmark 4's stages (benchmark 7 runs them too); benchmarks using them say
// `using namespace slinky_bench::stencil_chain;`.

// True if row y of b is contiguous over [x0, x1] (dim 0 dense, not wrapping around a fold), for
// elements of type T.
template <typename T = float>
bool dense_row(const raw_buffer& b, index_t x0, index_t x1) {
  return b.dim(0).stride() == static_cast<index_t>(sizeof(T)) && !b.dim(0).is_folded(x0, x1);
}

// out(x, y) = in(x, y) * 2 + 1, in T's arithmetic (uint16 wraps).
template <typename T>
index_t scale_offset_of(const buffer<const T>& in, const buffer<T>& out) {
  const dim& ox = out.dim(0);
  const dim& oy = out.dim(1);
  if (ox.empty() || oy.empty()) return 0;
  const bool dense = dense_row<T>(in, ox.min(), ox.max()) && dense_row<T>(out, ox.min(), ox.max());
  for (index_t y = oy.min(); y <= oy.max(); ++y) {
    if (dense) {
      const T* __restrict src = &in(ox.min(), y);
      T* __restrict dst = &out(ox.min(), y);
      for (index_t i = 0; i < ox.extent(); ++i) dst[i] = static_cast<T>(src[i] * T(2) + T(1));
    } else {
      for (index_t x = ox.min(); x <= ox.max(); ++x) out(x, y) = static_cast<T>(in(x, y) * T(2) + T(1));
    }
  }
  return 0;
}

inline index_t scale_offset(const buffer<const float>& in, const buffer<float>& out) {
  return scale_offset_of<float>(in, out);
}

// The sum of the 3x3 neighbourhood, in this order (the reference uses the same), in T's
// arithmetic.
template <typename T>
T box3x3(const T* r0, const T* r1, const T* r2, index_t i) {
  return static_cast<T>((r0[i - 1] + r0[i] + r0[i + 1]) + (r1[i - 1] + r1[i] + r1[i + 1]) +
                        (r2[i - 1] + r2[i] + r2[i + 1]));
}

template <typename T>
index_t box_of(const buffer<const T>& in, const buffer<T>& out) {
  const dim& ox = out.dim(0);
  const dim& oy = out.dim(1);
  if (ox.empty() || oy.empty()) return 0;
  const bool dense = dense_row<T>(in, ox.min() - 1, ox.max() + 1) && dense_row<T>(out, ox.min(), ox.max());
  for (index_t y = oy.min(); y <= oy.max(); ++y) {
    if (dense) {
      const T* r0 = &in(ox.min(), y - 1);
      const T* r1 = &in(ox.min(), y);
      const T* r2 = &in(ox.min(), y + 1);
      T* __restrict dst = &out(ox.min(), y);
      for (index_t i = 0; i < ox.extent(); ++i) dst[i] = box3x3(r0, r1, r2, i);
    } else {
      for (index_t x = ox.min(); x <= ox.max(); ++x) {
        T s = 0;
        for (int dy = -1; dy <= 1; ++dy) {
          s = static_cast<T>(s + (in(x - 1, y + dy) + in(x, y + dy) + in(x + 1, y + dy)));
        }
        out(x, y) = s;
      }
    }
  }
  return 0;
}

inline index_t box(const buffer<const float>& in, const buffer<float>& out) { return box_of<float>(in, out); }

}  // namespace stencil_chain

}  // namespace slinky_bench

#endif  // SLINKY_APPS_PIPELINE_BENCH_H
