// Tests of tbb_thread_pool beyond the contract (which thread_pool_test.cc checks on it): its
// thread count follows oneTBB's limit, items run on the arena's workers, all workers and the
// caller run one loop at once, and workers pick up the nested loops of the others.
#include <gtest/gtest.h>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <set>
#include <thread>

#include "slinky/adapters/tbb_thread_pool.h"
#include "slinky/base/test/test_pool.h"

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

TEST(tbb_adapter, thread_count_follows_tbbs_limit) {
  // test_pool.h allows 8 threads (7 workers) in the process.
  tbb_thread_pool pool(3);
  EXPECT_EQ(pool.thread_count(), 3);
  ASSERT_NE(pool.arena(), nullptr);
  EXPECT_EQ(pool.arena()->max_concurrency(), 4);
  {
    // The most restrictive global_control wins while it lives.
    tbb::global_control two(tbb::global_control::max_allowed_parallelism, 2);
    EXPECT_EQ(pool.thread_count(), 1);
    std::atomic<int> items{0};
    pool.parallel_for(100, [&](std::size_t) { items++; });
    EXPECT_EQ(items.load(), 100);
  }
  EXPECT_EQ(pool.thread_count(), 3);
  tbb_thread_pool none(0);
  EXPECT_EQ(none.thread_count(), 0);
  EXPECT_EQ(none.arena(), nullptr);
}

TEST(tbb_adapter, items_run_in_the_arena) {
  tbb::task_arena host(3);
  tbb_thread_pool pool(host, 2);
  EXPECT_EQ(pool.thread_count(), 2);
  EXPECT_EQ(pool.arena(), &host);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> arrived{0}, failures{0}, outside{0};
  // Three items that wait for each other: the caller and two of the arena's workers.
  pool.parallel_for(3, [&](std::size_t) {
    if (std::this_thread::get_id() != caller &&
        tbb::this_task_arena::current_thread_index() == tbb::task_arena::not_initialized) {
      outside++;
    }
    if (!arrive_and_wait(arrived, 3)) failures++;
  });
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(outside.load(), 0);
}

TEST(tbb_adapter, every_worker_and_the_caller_run_one_loop) {
  tbb_thread_pool pool(3);
  for (int rep = 0; rep < 5; ++rep) {
    std::atomic<int> outer{0};
    std::atomic<int> arrived{0}, failures{0};
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

TEST(tbb_adapter, idle_workers_run_nested_loops) {
  // Two outer items each run a loop of two items, and the four inner items wait for each other:
  // the workers without an outer item must get jobs for the inner loops.
  // The outer items wait a little before their loops, so the other threads are idle by then.
  tbb_thread_pool pool(3);
  for (int rep = 0; rep < 5; ++rep) {
    std::atomic<int> outer{0};
    std::atomic<int> arrived{0}, failures{0};
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

}  // namespace
}  // namespace slinky
