// Tests of atomic_wait.h: a wait returns at once when the value already differs, and a waiting
// thread wakes when another changes the value and notifies. Also built as C++17
// (slinky_base_atomic_wait_cxx17_test) to test the emulation, as the library sees it.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "slinky/base/atomic_wait.h"

namespace slinky {
namespace {

TEST(atomic_wait, returns_when_value_differs) {
  std::atomic<int> a{5};
  atomic_wait(&a, 4);
  std::atomic<long> l{1};
  atomic_wait(&l, 0);  // old is not deduced: a literal int works.
  atomic_wait_explicit(&a, 3, std::memory_order_acquire);
  // Notifying with no waiter is harmless.
  atomic_notify_one(&a);
  atomic_notify_all(&a);
  SUCCEED();
}

TEST(atomic_wait, wakes_on_notify) {
  for (int rep = 0; rep < 100; ++rep) {
    std::atomic<int> a{0};
    std::atomic<bool> woke{false};
    std::thread waiter([&]() {
      atomic_wait(&a, 0);
      EXPECT_NE(a.load(), 0);
      woke = true;
    });
    if (rep % 2 == 0) std::this_thread::yield();
    a.store(1);
    atomic_notify_one(&a);
    waiter.join();
    EXPECT_TRUE(woke.load());
  }
}

TEST(atomic_wait, counter_handoff_between_threads) {
  // Two threads take turns through one counter: each waits until the other has moved it.
  const int turns = 2000;
  std::atomic<long> counter{0};
  auto player = [&](long parity) {
    for (long i = parity; i < turns; i += 2) {
      long seen = counter.load();
      while (seen != i) {
        atomic_wait(&counter, seen);
        seen = counter.load();
      }
      counter.store(i + 1);
      atomic_notify_all(&counter);
    }
  };
  std::thread other(player, 1);
  player(0);
  other.join();
  EXPECT_EQ(counter.load(), turns);
}

TEST(atomic_wait, notify_all_wakes_every_waiter) {
  std::atomic<int> gate{0};
  std::atomic<int> through{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i) {
    waiters.emplace_back([&]() {
      atomic_wait(&gate, 0);
      through++;
    });
  }
  std::this_thread::yield();
  gate.store(1);
  atomic_notify_all(&gate);
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(through.load(), 4);
}

}  // namespace
}  // namespace slinky
