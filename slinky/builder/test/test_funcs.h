// Callbacks and resource counters shared by the builder's pipeline tests.
#ifndef SLINKY_BUILDER_TEST_TEST_FUNCS_H
#define SLINKY_BUILDER_TEST_TEST_FUNCS_H

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "slinky/builder/pipeline.h"

namespace slinky {
namespace test {

// Counts allocations through the eval_config hooks (every allocation, with auto_stack_threshold
// = 0 unless a test sets another).
struct memory_counter {
  std::atomic<int> allocations{0};
  std::atomic<int> frees{0};
  std::atomic<index_t> live_bytes{0};
  std::atomic<index_t> peak_bytes{0};
  std::atomic<index_t> total_bytes{0};
  std::mutex mutex;
  std::vector<index_t> sizes;
  eval_config config;
  eval_context context;

  memory_counter() {
    config.auto_stack_threshold = 0;
    config.allocate = [this](var, raw_buffer* b) -> void* {
      const index_t size = b->size_bytes();
      ++allocations;
      total_bytes += size;
      index_t live = live_bytes += size;
      index_t peak = peak_bytes;
      while (live > peak && !peak_bytes.compare_exchange_weak(peak, live)) {
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        sizes.push_back(size);
      }
      return b->allocate();
    };
    config.free = [this](var, raw_buffer* b, void* p) {
      ++frees;
      live_bytes -= b->size_bytes();
      std::free(p);
    };
    context.config = &config;
  }
};

// Records which elements a callback wrote, to assert that nothing is computed twice.
class write_counter {
  std::mutex mutex_;
  std::map<std::vector<index_t>, int> counts_;

public:
  std::atomic<int> calls{0};

  template <typename T>
  void record(const buffer<T>& out) {
    ++calls;
    std::lock_guard<std::mutex> lock(mutex_);
    for_each_index(out, [&](const std::vector<index_t>& i) { ++counts_[i]; });
  }

  int max_count() const {
    int result = 0;
    for (const auto& i : counts_) result = std::max(result, i.second);
    return result;
  }
  std::size_t elements() const { return counts_.size(); }

  template <typename Fn>
  static void for_each_index(const raw_buffer& b, const Fn& fn) {
    for (std::size_t d = 0; d < b.rank; ++d) {
      if (b.dim(d).empty()) return;
    }
    std::vector<index_t> i(b.rank);
    for (std::size_t d = 0; d < b.rank; ++d) i[d] = b.dim(d).min();
    for (;;) {
      fn(i);
      std::size_t d = 0;
      for (; d < b.rank; ++d) {
        if (++i[d] <= b.dim(d).max()) break;
        i[d] = b.dim(d).min();
      }
      if (d == b.rank) return;
    }
  }
};

// out(i) = f(in(i)) for every element of out.
template <typename T, typename Fn>
index_t elementwise(const buffer<const T>& in, const buffer<T>& out, Fn f) {
  write_counter::for_each_index(out, [&](const std::vector<index_t>& i) {
    span<const index_t> at(i);
    out(at) = f(in(at));
  });
  return 0;
}

// out(x, y) = the sum of in over [x - rx, x + rx] x [y - ry, y + ry].
template <typename T>
index_t box_sum(const buffer<const T>& in, const buffer<T>& out, int rx, int ry) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) {
      T sum = 0;
      for (int dy = -ry; dy <= ry; ++dy) {
        for (int dx = -rx; dx <= rx; ++dx) sum += in(x + dx, y + dy);
      }
      out(x, y) = sum;
    }
  }
  return 0;
}

template <typename T, std::size_t N>
void fill_random(buffer<T, N>& b, int seed) {
  std::srand(seed);
  for_each_element([](T* p) { *p = static_cast<T>(std::rand() % 100 - 50); }, b);
}

}  // namespace test
}  // namespace slinky

#endif  // SLINKY_BUILDER_TEST_TEST_FUNCS_H
