// Tests of pthreadpool_thread_pool beyond the contract (which thread_pool_test.cc checks on it):
// all of the pthreadpool's threads and the caller run one loop at once, threads of a round pick
// up the nested loops of the others, and a host's pthreadpool stays usable by the host.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "slinky/adapters/pthreadpool_thread_pool.h"

namespace slinky {
namespace {

// Counts the calling thread in, then waits until `expected` threads have arrived; false after
// 20 s (a failure, not a hang).
bool arrive_and_wait(std::atomic<int>& arrived, int expected) {
  arrived++;
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (arrived.load() < expected) {
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(pthreadpool_adapter, thread_count_is_the_pthreadpools) {
  for (int threads : {1, 2, 3}) {
    pthreadpool_thread_pool pool(threads);
    EXPECT_EQ(pool.thread_count(), threads);
    ASSERT_NE(pool.native_handle(), nullptr);
    EXPECT_EQ(pthreadpool_get_threads_count(pool.native_handle()), static_cast<std::size_t>(threads));
  }
  pthreadpool_thread_pool none(0);
  EXPECT_EQ(none.thread_count(), 0);
  EXPECT_EQ(none.native_handle(), nullptr);
}

TEST(pthreadpool_adapter, every_thread_and_the_caller_run_one_loop) {
  // Four items that wait for each other: the caller, the dispatcher (pthreadpool's thread 0) and
  // the pthreadpool's two other threads must each take one.
  pthreadpool_thread_pool pool(3);
  for (int rep = 0; rep < 5; ++rep) {
    std::atomic<int> outer{0};
    std::atomic<int> arrived{0};
    std::atomic<int> failures{0};
    std::mutex m;
    std::set<std::thread::id> threads;
    pool.parallel_for(4, [&](std::size_t) {
      {
        std::lock_guard<std::mutex> l(m);
        threads.insert(std::this_thread::get_id());
      }
      if (!arrive_and_wait(arrived, 4)) failures++;
    });
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(threads.size(), 4u);
  }
}

TEST(pthreadpool_adapter, idle_threads_of_a_round_run_nested_loops) {
  // Two outer items each run a loop of two items, and the four inner items wait for each other:
  // the two threads that found no outer item must stay in the round and take inner items.
  // The outer items wait a little before their loops, so the other threads are idle by then.
  pthreadpool_thread_pool pool(3);
  for (int rep = 0; rep < 5; ++rep) {
    std::atomic<int> outer{0};
    std::atomic<int> arrived{0};
    std::atomic<int> failures{0};
    pool.parallel_for(2, [&](std::size_t) {
      if (!arrive_and_wait(outer, 2)) failures++;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      pool.parallel_for(2, [&](std::size_t) {
        if (!arrive_and_wait(arrived, 4)) failures++;
      });
    });
    EXPECT_EQ(failures.load(), 0);
  }
}

// What the host's own pthreadpool calls add up, in a global: pthreadpool hands its items to its
// threads in uninstrumented code, so the items touch nothing of the caller's but atomics.
std::atomic<long long> host_sum{0};

void host_work(pthreadpool_t host) {
  pthreadpool_parallelize_1d(
      host, [](void*, std::size_t i) { host_sum += static_cast<long long>(i); }, nullptr, 100, 0);
}

TEST(pthreadpool_adapter, host_pthreadpool) {
  pthreadpool_t host = pthreadpool_create(3);
  ASSERT_NE(host, nullptr);
  host_sum = 0;
  {
    pthreadpool_thread_pool pool(host);
    EXPECT_EQ(pool.thread_count(), 3);
    EXPECT_EQ(pool.native_handle(), host);

    // The host's own calls on its pthreadpool, between slinky's loops and at the same time from
    // another thread: rounds end when slinky's queue is idle, so neither waits forever.
    std::atomic<long long> slinky_sum{0};
    for (int rep = 0; rep < 20; ++rep) {
      pool.parallel_for(100, [&](std::size_t i) { slinky_sum += static_cast<long long>(i); });
      host_work(host);
    }
    std::thread other([&]() {
      for (int rep = 0; rep < 20; ++rep) host_work(host);
    });
    for (int rep = 0; rep < 20; ++rep) {
      pool.parallel_for(100, [&](std::size_t i) {
        pool.parallel_for(3, [&](std::size_t j) { slinky_sum += static_cast<long long>(i * j); });
      });
    }
    other.join();
    EXPECT_EQ(host_sum.load(), 40 * 4950);
    EXPECT_EQ(slinky_sum.load(), 20 * 4950 + 20 * 4950 * 3);
  }
  // The adapter does not destroy the host's pthreadpool.
  host_work(host);
  EXPECT_EQ(host_sum.load(), 41 * 4950);
  pthreadpool_destroy(host);
}

}  // namespace
}  // namespace slinky
