// Tests of thread_pool_impl: every item runs once, max_workers holds, waiting threads help,
// nested loops and tasks waiting on each other through atomic_call do not deadlock; per-thread
// copies of task bodies, thread_count, host threads (run_worker, work_until_idle) and a host
// pool built on a worker-less thread_pool_impl. The tests of the thread_pool contract run on
// test_pool (test_pool.h), which the adapter test programs switch to a host pool adapter; the
// tests of thread_pool_impl's extras skip there.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "slinky/base/test/host_thread_pool.h"
#include "slinky/base/test/test_pool.h"
#include "slinky/base/thread_pool_impl.h"

namespace slinky {
namespace {

constexpr int unlimited = std::numeric_limits<int>::max();

// Pools of the sizes the tests run on: 1 to 4 threads.
const int worker_counts[] = {0, 1, 2, 3};

// Runs body(i) for i in [0, n) with enqueue and wait_for, not through parallel_for (which runs
// single items and max_workers = 1 loops inline).
template <typename Fn>
void run_task(thread_pool& pool, std::size_t n, Fn& body, int max_workers = unlimited) {
  ref_count<thread_pool::task> t = pool.enqueue(n, body, max_workers);
  pool.wait_for(t.get());
}

// Raises max to at least value.
void update_max(std::atomic<int>& max, int value) {
  int old = max.load();
  while (old < value && !max.compare_exchange_weak(old, value)) {
  }
}

TEST(thread_pool, thread_count) {
  // The number of workers, not counting the caller of wait_for.
  for (int workers : worker_counts) {
    test_pool pool(workers);
    EXPECT_EQ(pool.thread_count(), workers);
  }
  test_pool negative(-3);
  EXPECT_EQ(negative.thread_count(), 0);
  if (!test_pool_is_bundled) return;
  thread_pool_impl by_default;
  EXPECT_EQ(by_default.thread_count(), 3);
  // max(expected, workers).
  thread_pool_impl two(2);
  two.expect_workers(5);
  EXPECT_EQ(two.thread_count(), 5);
  two.expect_workers(1);
  EXPECT_EQ(two.thread_count(), 2);
  thread_pool_impl none(0);
  none.expect_workers(4);
  EXPECT_EQ(none.thread_count(), 4);
}

TEST(thread_pool, by_default_uses_three_workers) {
  if (!test_pool_is_bundled) GTEST_SKIP() << "thread_pool_impl's own extras";
  thread_pool_impl pool;
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex m;
  std::set<std::thread::id> threads;
  std::atomic<int> arrived{0};
  // Four items that each wait until four have started: only the caller and 3 workers can.
  auto body = [&](std::size_t) {
    {
      std::lock_guard<std::mutex> l(m);
      threads.insert(std::this_thread::get_id());
    }
    arrived++;
    while (arrived < 4) std::this_thread::yield();
  };
  pool.parallel_for(4, body);
  EXPECT_EQ(threads.size(), 4u);
  EXPECT_EQ(threads.count(caller), 1u);
}

TEST(thread_pool, init_runs_on_each_worker_first) {
  if (!test_pool_is_bundled) GTEST_SKIP() << "thread_pool_impl's own extras";
  std::mutex m;
  std::set<std::thread::id> initialized;
  auto init = [&]() {
    // Slow, to check that the constructor waits for it.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard<std::mutex> l(m);
    initialized.insert(std::this_thread::get_id());
  };
  thread_pool_impl pool(3, init);
  {
    std::lock_guard<std::mutex> l(m);
    EXPECT_EQ(initialized.size(), 3u);
    EXPECT_EQ(initialized.count(std::this_thread::get_id()), 0u);
  }
  // Items run only on the initialized threads and the caller.
  const std::thread::id caller = std::this_thread::get_id();
  std::set<std::thread::id> ran;
  pool.parallel_for(200, [&](std::size_t) {
    std::this_thread::yield();
    std::lock_guard<std::mutex> l(m);
    ran.insert(std::this_thread::get_id());
  });
  ran.erase(caller);
  for (std::thread::id id : ran) EXPECT_EQ(initialized.count(id), 1u);
  thread_pool_impl no_init(2, nullptr);
  EXPECT_EQ(no_init.thread_count(), 2);
}

TEST(thread_pool, every_item_once) {
  for (int workers : worker_counts) {
    test_pool pool(workers);
    for (std::size_t n : {0, 1, 2, 3, 5, 16, 100, 1000, 20000}) {
      for (int max_workers : {-1, 0, 1, 2, 3, 8, unlimited}) {
        std::vector<std::atomic<int>> counts(n);
        auto body = [&](std::size_t i) { counts[i]++; };
        run_task(pool, n, body, max_workers);
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(counts[i].load(), 1) << "workers=" << workers << " n=" << n << " max_workers=" << max_workers
                                         << " i=" << i;
        }
        pool.parallel_for(n, body, max_workers);
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(counts[i].load(), 2);
      }
    }
  }
}

TEST(thread_pool, writes_visible_after_wait) {
  // Plain (non-atomic) writes by the items are visible to the waiter; TSan checks the ordering.
  for (int workers : worker_counts) {
    test_pool pool(workers);
    for (int rep = 0; rep < 50; ++rep) {
      std::vector<int> out(257, 0);
      pool.parallel_for(out.size(), [&](std::size_t i) { out[i] = static_cast<int>(i) * 3 + rep; });
      for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], static_cast<int>(i) * 3 + rep);
    }
  }
}

TEST(thread_pool, max_workers_respected) {
  test_pool pool(3);
  for (int max_workers : {1, 2, 3}) {
    for (int rep = 0; rep < 20; ++rep) {
      std::atomic<int> running{0};
      std::atomic<int> max_running{0};
      auto body = [&](std::size_t) {
        update_max(max_running, ++running);
        // Give other threads a chance to overlap with this item.
        std::this_thread::yield();
        --running;
      };
      run_task(pool, 64, body, max_workers);
      ASSERT_LE(max_running.load(), max_workers);
      ASSERT_EQ(running.load(), 0);
    }
  }
}

TEST(thread_pool, max_workers_counts_threads_not_items) {
  // Nested loops: each outer item waits for an inner loop, and a thread helping with an inner loop
  // must not start another outer item if that would exceed the outer max_workers.
  test_pool pool(3);
  std::atomic<int> running{0};
  std::atomic<int> max_running{0};
  std::atomic<int> inner_items{0};
  auto outer = [&](std::size_t) {
    update_max(max_running, ++running);
    pool.parallel_for(8, [&](std::size_t) {
      inner_items++;
      std::this_thread::yield();
    });
    --running;
  };
  run_task(pool, 32, outer, 2);
  EXPECT_LE(max_running.load(), 2);
  EXPECT_EQ(inner_items.load(), 32 * 8);
}

TEST(thread_pool, caller_runs_everything_without_workers) {
  test_pool pool(0);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  std::atomic<int> items{0};
  auto body = [&](std::size_t) {
    if (std::this_thread::get_id() != caller) elsewhere++;
    items++;
  };
  pool.parallel_for(1000, body);
  run_task(pool, 3, body, 2);
  EXPECT_EQ(items.load(), 1003);
  EXPECT_EQ(elsewhere.load(), 0);
}

TEST(thread_pool, waiter_runs_everything_while_workers_are_busy) {
  // The only worker is stuck (outside the pool's knowledge) in an item until the caller has run
  // every item of a second task: the second task completes only if wait_for runs its items.
  test_pool pool(1);
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
  auto blocker = [&](std::size_t i) {
    if (i != 0) return;
    started = true;
    while (!release) std::this_thread::yield();
  };
  // Two items, so the worker is woken; only it can take item 0, as the caller does not call the
  // pool until the item started.
  ref_count<thread_pool::task> blocked = pool.enqueue(2, blocker, 2);
  while (!started) std::this_thread::yield();

  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> on_caller{0};
  auto body = [&](std::size_t) {
    if (std::this_thread::get_id() == caller) on_caller++;
  };
  run_task(pool, 100, body);
  EXPECT_EQ(on_caller.load(), 100);
  release = true;
  pool.wait_for(blocked.get());
}

// Runs `levels` levels of loops of `n` items, each item of a level running the next level.
void nested(thread_pool& pool, int levels, std::size_t n, std::atomic<int>& leaves) {
  if (levels == 0) {
    leaves++;
    return;
  }
  pool.parallel_for(n, [&](std::size_t) { nested(pool, levels - 1, n, leaves); });
}

TEST(thread_pool, nested_loops) {
  for (int workers : worker_counts) {
    test_pool pool(workers);
    for (int levels = 1; levels <= 4; ++levels) {
      std::atomic<int> leaves{0};
      nested(pool, levels, 5, leaves);
      int expected = 1;
      for (int i = 0; i < levels; ++i) expected *= 5;
      EXPECT_EQ(leaves.load(), expected) << "workers=" << workers << " levels=" << levels;
    }
  }
}

TEST(thread_pool, nested_loops_with_max_workers) {
  for (int workers : worker_counts) {
    test_pool pool(workers);
    std::atomic<int> leaves{0};
    pool.parallel_for(
        6,
        [&](std::size_t) {
          pool.parallel_for(
              6,
              [&](std::size_t) {
                pool.parallel_for(
                    6, [&](std::size_t) { leaves++; }, 2);
              },
              3);
        },
        2);
    EXPECT_EQ(leaves.load(), 6 * 6 * 6);
  }
}

// The pattern of the evaluator's pipelined loops: `workers` loop items take iterations in order
// from a shared counter, and iteration k waits (on a semaphore, through wait_for(predicate)) for
// iteration k - 1 to signal with atomic_call. Inner parallel loops run between wait and signal.
void pipelined_loop(thread_pool& pool, std::size_t workers, int iterations) {
  std::atomic<int> next{0};
  long long sem = 1;  // Guarded by the pool's lock.
  std::vector<int> order;
  std::atomic<int> inner{0};
  auto worker = [&](std::size_t) {
    for (;;) {
      int k = next++;
      if (k >= iterations) break;
      pool.parallel_for(3, [&](std::size_t) { inner++; });
      pool.wait_for([&]() {
        if (sem < 1) return false;
        --sem;
        return true;
      });
      order.push_back(k);  // Serialized by the semaphore.
      pool.parallel_for(2, [&](std::size_t) { inner++; });
      pool.atomic_call([&]() { ++sem; });
    }
  };
  pool.parallel_for(workers, worker);
  ASSERT_EQ(order.size(), static_cast<std::size_t>(iterations));
  EXPECT_EQ(inner.load(), iterations * 5);
  EXPECT_EQ(sem, 1);
}

TEST(thread_pool, pipelined_loop) {
  for (int workers : worker_counts) {
    test_pool pool(workers);
    for (std::size_t loop_workers = 1; loop_workers <= 4; ++loop_workers) {
      pipelined_loop(pool, loop_workers, 100);
    }
  }
}

TEST(thread_pool, ordered_dependencies_between_items) {
  // Item i waits for item i - 1: items are claimed in order, so this completes on any pool.
  for (int workers : worker_counts) {
    test_pool pool(workers);
    for (int max_workers : {2, 3, unlimited}) {
      const std::size_t n = 200;
      std::vector<bool> done(n, false);  // Guarded by the pool's lock.
      auto body = [&](std::size_t i) {
        if (i > 0) pool.wait_for([&]() { return static_cast<bool>(done[i - 1]); });
        pool.atomic_call([&]() { done[i] = true; });
      };
      run_task(pool, n, body, max_workers);
      pool.atomic_call([&]() { EXPECT_TRUE(std::all_of(done.begin(), done.end(), [](bool d) { return d; })); });
    }
  }
}

TEST(thread_pool, task_waits_for_another_task) {
  // Consumer items wait for producer items that are queued but not yet waited for: the waiting
  // threads must run them.
  for (int workers : worker_counts) {
    test_pool pool(workers);
    for (int rep = 0; rep < 10; ++rep) {
      const std::size_t n = 16;
      int produced = 0;  // Guarded by the pool's lock.
      int consumed = 0;
      auto consume = [&](std::size_t) {
        pool.wait_for([&]() {
          if (produced <= consumed) return false;
          ++consumed;
          return true;
        });
      };
      auto produce = [&](std::size_t) { pool.atomic_call([&]() { ++produced; }); };
      ref_count<thread_pool::task> consumer = pool.enqueue(n, consume, 2);
      ref_count<thread_pool::task> producer = pool.enqueue(n, produce, 1);
      pool.wait_for(consumer.get());
      pool.wait_for(producer.get());
      pool.atomic_call([&]() {
        EXPECT_EQ(produced, static_cast<int>(n));
        EXPECT_EQ(consumed, static_cast<int>(n));
      });
    }
  }
}

TEST(thread_pool, predicate_takes_atomically) {
  // Several threads take units from a counter inside wait_for's predicate while others add
  // units with atomic_call: no unit is taken twice and none is lost.
  test_pool pool(2);
  const int units = 400;
  int available = 0;  // Guarded by the pool's lock.
  int taken = 0;
  std::atomic<int> takers{0};
  auto body = [&](std::size_t i) {
    if (i % 2 == 0) {
      for (int u = 0; u < units / 2; ++u) pool.atomic_call([&]() { ++available; });
    } else {
      for (int u = 0; u < units / 2; ++u) {
        pool.wait_for([&]() {
          if (available < 1) return false;
          --available;
          ++taken;
          return true;
        });
      }
      takers++;
    }
  };
  // Four items, all running at once: two producers and two consumers.
  std::vector<std::thread> threads;
  threads.emplace_back([&]() { run_task(pool, 2, body); });
  run_task(pool, 2, body);
  threads[0].join();
  EXPECT_EQ(takers.load(), 2);
  pool.atomic_call([&]() {
    EXPECT_EQ(taken, units);
    EXPECT_EQ(available, 0);
  });
}

TEST(thread_pool, predicate_rechecked_after_atomic_call) {
  // The predicate is called again after each atomic_call, and never after it returned true.
  for (int workers : {0, 1}) {
    test_pool pool(workers);
    int countdown = 5;  // Guarded by the pool's lock.
    int calls_after_true = 0;
    bool was_true = false;
    std::thread signaller([&]() {
      for (int i = 0; i < 5; ++i) pool.atomic_call([&]() { --countdown; });
    });
    pool.wait_for([&]() {
      if (was_true) ++calls_after_true;
      if (countdown > 0) return false;
      was_true = true;
      return true;
    });
    signaller.join();
    EXPECT_TRUE(was_true);
    EXPECT_EQ(calls_after_true, 0);
    int calls = 0;
    pool.wait_for([&]() {
      ++calls;
      return true;
    });
    EXPECT_EQ(calls, 1);
  }
}

TEST(thread_pool, many_small_tasks_from_several_threads) {
  for (int workers : {0, 2}) {
    test_pool pool(workers);
    const int threads = 4;
    const int tasks_per_thread = 300;
    std::atomic<long long> sum{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < threads; ++c) {
      clients.emplace_back([&, c]() {
        for (int k = 0; k < tasks_per_thread; ++k) {
          std::size_t n = static_cast<std::size_t>((c + k) % 7);
          auto body = [&](std::size_t i) { sum += static_cast<long long>(i) + 1; };
          run_task(pool, n, body, 1 + k % 3);
        }
      });
    }
    for (std::thread& t : clients) t.join();
    long long expected = 0;
    for (int c = 0; c < threads; ++c) {
      for (int k = 0; k < tasks_per_thread; ++k) {
        long long n = (c + k) % 7;
        expected += n * (n + 1) / 2;
      }
    }
    EXPECT_EQ(sum.load(), expected) << "workers=" << workers;
  }
}

TEST(thread_pool, destroy_idle) {
  for (int rep = 0; rep < 10; ++rep) {
    for (int workers : worker_counts) {
      test_pool pool(workers);
    }
  }
  // Let the workers go from spinning to sleeping before destroying the pool (not a timing
  // assertion: the test passes either way).
  for (int workers : worker_counts) {
    test_pool pool(workers);
    std::atomic<int> items{0};
    pool.parallel_for(10, [&](std::size_t) { items++; });
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_EQ(items.load(), 10);
  }
}

TEST(thread_pool, destroy_runs_tasks_not_waited_for) {
  for (int workers : worker_counts) {
    std::vector<std::atomic<int>> counts(50);
    auto body = [&](std::size_t i) { counts[i]++; };
    {
      test_pool pool(workers);
      ref_count<thread_pool::task> t = pool.enqueue(counts.size(), body, 2);
    }
    for (std::atomic<int>& c : counts) ASSERT_EQ(c.load(), 1) << "workers=" << workers;
  }
}

TEST(thread_pool, task_outlives_pool_handle) {
  // The handle keeps the task alive after it finished and left the queue.
  test_pool pool(2);
  std::vector<ref_count<thread_pool::task>> tasks;
  std::atomic<int> items{0};
  auto body = [&](std::size_t) { items++; };
  for (int i = 0; i < 20; ++i) tasks.push_back(pool.enqueue(5, body));
  for (auto& t : tasks) pool.wait_for(t.get());
  for (auto& t : tasks) pool.wait_for(t.get());  // Waiting again returns at once.
  EXPECT_EQ(items.load(), 100);
}

// Counts its copies, and checks that each copy is only ever called by one thread.
struct copy_tracker {
  struct state {
    std::atomic<int> copies{0};
    std::atomic<int> calls{0};
    std::atomic<int> shared_copies{0};  // Copies called by more than one thread.
    std::mutex m;
    std::set<std::thread::id> threads;
  };
  state* s;
  mutable std::thread::id owner;
  mutable bool used = false;

  explicit copy_tracker(state* s) : s(s) {}
  copy_tracker(const copy_tracker& other) : s(other.s) { s->copies++; }
  copy_tracker& operator=(const copy_tracker&) = delete;

  void operator()(std::size_t) const {
    if (!used) {
      used = true;
      owner = std::this_thread::get_id();
    } else if (owner != std::this_thread::get_id()) {
      s->shared_copies++;
    }
    s->calls++;
    {
      std::lock_guard<std::mutex> l(s->m);
      s->threads.insert(std::this_thread::get_id());
    }
    // Long enough for the other threads to join.
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
};

// Counts its copies and calls; safe to call from several threads at once.
struct counting_body {
  std::atomic<int>* copies;
  std::atomic<int>* calls;
  counting_body(std::atomic<int>* copies, std::atomic<int>* calls) : copies(copies), calls(calls) {}
  counting_body(const counting_body& other) : copies(other.copies), calls(other.calls) { (*copies)++; }
  counting_body& operator=(const counting_body&) = delete;
  void operator()(std::size_t) const {
    (*calls)++;
    std::this_thread::yield();
  }
};

TEST(thread_pool, task_body_copied_once_per_thread) {
  for (int workers : {1, 2, 3}) {
    test_pool pool(workers);
    for (int rep = 0; rep < 5; ++rep) {
      copy_tracker::state s;
      thread_pool::task_body body(copy_tracker{&s});
      s.copies = 0;
      pool.parallel_for(64, std::move(body));
      EXPECT_EQ(s.calls.load(), 64);
      EXPECT_EQ(s.shared_copies.load(), 0);
      // Every thread that ran items (the caller included) made exactly one copy.
      EXPECT_EQ(s.copies.load(), static_cast<int>(s.threads.size())) << "workers=" << workers;
      EXPECT_GE(s.threads.size(), 1u);
      EXPECT_LE(s.threads.size(), static_cast<std::size_t>(workers + 1));
    }
  }
  // Also with enqueue, and with max_workers.
  test_pool pool(3);
  copy_tracker::state s;
  thread_pool::task_body body(copy_tracker{&s});
  s.copies = 0;
  ref_count<thread_pool::task> t = pool.enqueue(40, std::move(body), 2);
  pool.wait_for(t);
  EXPECT_EQ(s.calls.load(), 40);
  EXPECT_EQ(s.shared_copies.load(), 0);
  EXPECT_EQ(s.copies.load(), static_cast<int>(s.threads.size()));
  EXPECT_LE(s.threads.size(), 2u);
}

TEST(thread_pool, enqueue_ref_does_not_copy) {
  test_pool pool(3);
  std::atomic<int> copies{0}, calls{0};
  const counting_body body(&copies, &calls);
  ref_count<thread_pool::task> t = pool.enqueue_ref(100, body);
  pool.wait_for(t);
  EXPECT_EQ(calls.load(), 100);
  EXPECT_EQ(copies.load(), 0);
  EXPECT_TRUE(t->done());
}

// Waits (with a time limit, so a failure does not hang the test) until done() is true.
bool wait_until_done(std::function<bool()> done) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(thread_pool, single_item_enqueue_and_done) {
  test_pool pool(1);
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  ref_count<thread_pool::task> t = pool.enqueue([&]() {
    while (!release) std::this_thread::yield();
    ran++;
  });
  // The worker runs it: it is not done until released.
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_FALSE(t->done());
  release = true;
  pool.wait_for(t);
  EXPECT_TRUE(t->done());
  EXPECT_EQ(ran.load(), 1);
  // Nobody waits: a worker runs it.
  ref_count<thread_pool::task> alone = pool.enqueue([&]() { ran++; });
  EXPECT_TRUE(wait_until_done([&]() { return alone->done(); }));
  EXPECT_EQ(ran.load(), 2);
  // A mutable callable, and one owning its state: the task owns a copy.
  {
    std::vector<int> data = {1, 2, 3};
    ref_count<thread_pool::task> u = pool.enqueue([data, sum = 0, &ran]() mutable {
      for (int i : data) sum += i;
      ran += sum;
    });
    data.clear();
    pool.wait_for(u);
  }
  EXPECT_EQ(ran.load(), 8);
}

TEST(thread_pool, task_destroy_is_virtual) {
  static int destroyed = 0;
  struct pooled_task : thread_pool::task {
    bool done() const override { return true; }
    void destroy() override {
      ++destroyed;
      delete this;
    }
  };
  ref_count<thread_pool::task> t = new pooled_task();
  ref_count<thread_pool::task> u = t;
  t = nullptr;
  EXPECT_EQ(destroyed, 0);
  u = nullptr;
  EXPECT_EQ(destroyed, 1);
}

TEST(thread_pool, parallel_for_serial_cases) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::size_t> order;
  auto record = [&](std::size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  };
  test_pool pool(2);
  pool.parallel_for(0, record);
  EXPECT_TRUE(order.empty());
  pool.parallel_for(1, record);
  EXPECT_EQ(order, (std::vector<std::size_t>{0}));
  order.clear();
  pool.parallel_for(5, record, 1);
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
  order.clear();
  // thread_count() == 0: serial, in order, on the caller; no task is made.
  test_pool none(0);
  none.parallel_for(5, record);
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
}

TEST(thread_pool, run_worker_from_an_external_thread) {
  if (!test_pool_is_bundled) GTEST_SKIP() << "thread_pool_impl's own extras";
  thread_pool_impl pool(0);
  EXPECT_EQ(pool.thread_count(), 0);
  bool stop = false;  // Guarded by the pool's lock.
  std::thread host([&]() { pool.run_worker([&]() { return stop; }); });
  // Counted while inside run_worker.
  ASSERT_TRUE(wait_until_done([&]() { return pool.thread_count() == 1; }));

  // Nobody else runs items: the host thread must run them all, and sleeping in between.
  for (int rep = 0; rep < 3; ++rep) {
    std::atomic<int> on_host{0};
    ref_count<thread_pool::task> t = pool.enqueue(50, [&](std::size_t) {
      if (std::this_thread::get_id() == host.get_id()) on_host++;
    });
    ASSERT_TRUE(wait_until_done([&]() { return t->done(); }));
    EXPECT_EQ(on_host.load(), 50);
    std::this_thread::sleep_for(std::chrono::milliseconds(rep));
  }
  // The condition is re-checked after atomic_call.
  pool.atomic_call([&]() { stop = true; });
  host.join();
  EXPECT_EQ(pool.thread_count(), 0);
}

TEST(thread_pool, work_until_idle) {
  if (!test_pool_is_bundled) GTEST_SKIP() << "thread_pool_impl's own extras";
  thread_pool_impl pool(0);
  // Nothing queued: returns at once.
  pool.work_until_idle();
  std::vector<std::atomic<int>> counts(100);
  ref_count<thread_pool::task> a = pool.enqueue(counts.size(), [&](std::size_t i) { counts[i]++; });
  ref_count<thread_pool::task> b = pool.enqueue(counts.size(), [&](std::size_t i) { counts[i]++; });
  EXPECT_FALSE(a->done());
  std::thread host([&]() { pool.work_until_idle(); });
  host.join();
  // The only thread that ran anything returned: everything is done.
  EXPECT_TRUE(a->done());
  EXPECT_TRUE(b->done());
  for (std::atomic<int>& c : counts) EXPECT_EQ(c.load(), 2);
  // Not counted as a worker.
  EXPECT_EQ(pool.thread_count(), 0);
  pool.wait_for(a);
  pool.wait_for(b);
}

TEST(thread_pool, work_until_idle_skips_tasks_running_below) {
  if (!test_pool_is_bundled) GTEST_SKIP() << "thread_pool_impl's own extras";
  // An item that calls work_until_idle does not run its own task's items (they are on its
  // stack), but runs other tasks'.
  thread_pool_impl pool(0);
  std::atomic<int> outer_items{0}, other_items{0};
  ref_count<thread_pool::task> other;
  auto outer = [&](std::size_t i) {
    outer_items++;
    if (i == 0) {
      other = pool.enqueue(10, [&](std::size_t) { other_items++; });
      pool.work_until_idle();
      EXPECT_EQ(other_items.load(), 10);
      EXPECT_EQ(outer_items.load(), 1);
    }
  };
  ref_count<thread_pool::task> t = pool.enqueue(3, outer);
  pool.wait_for(t);
  EXPECT_EQ(outer_items.load(), 3);
}

TEST(host_pool, every_item_once_and_thread_count) {
  if (!test_pool_is_bundled) GTEST_SKIP() << "thread_pool_impl's own extras";
  for (int threads : {1, 2, 3}) {
    host_thread_pool pool(threads);
    EXPECT_EQ(pool.thread_count(), threads);
    for (std::size_t n : {0, 1, 2, 7, 100, 5000}) {
      for (int max_workers : {1, 2, unlimited}) {
        std::vector<std::atomic<int>> counts(n);
        auto body = [&](std::size_t i) { counts[i]++; };
        pool.parallel_for(n, body, max_workers);
        run_task(pool, n, body, max_workers);
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(counts[i].load(), 2) << "n=" << n << " i=" << i;
      }
    }
  }
}

TEST(host_pool, items_run_on_host_threads) {
  if (!test_pool_is_bundled) GTEST_SKIP() << "thread_pool_impl's own extras";
  host_thread_pool pool(2);
  std::atomic<int> arrived{0};
  std::atomic<int> on_host{0};
  // Three items that wait for each other: the caller and both host threads must take one.
  pool.parallel_for(3, [&](std::size_t) {
    if (pool.on_host_thread()) on_host++;
    arrived++;
    while (arrived < 3) std::this_thread::yield();
  });
  EXPECT_EQ(on_host.load(), 2);
  EXPECT_TRUE(wait_until_done([&]() { return pool.jobs_run.load() >= 2; }));
}

TEST(host_pool, nested_loops) {
  if (!test_pool_is_bundled) GTEST_SKIP() << "thread_pool_impl's own extras";
  host_thread_pool pool(2);
  for (int levels = 1; levels <= 4; ++levels) {
    std::atomic<int> leaves{0};
    nested(pool, levels, 5, leaves);
    int expected = 1;
    for (int i = 0; i < levels; ++i) expected *= 5;
    EXPECT_EQ(leaves.load(), expected) << "levels=" << levels;
  }
  std::atomic<int> leaves{0};
  pool.parallel_for(
      6,
      [&](std::size_t) {
        pool.parallel_for(
            6, [&](std::size_t) { leaves++; }, 2);
      },
      2);
  EXPECT_EQ(leaves.load(), 36);
}

TEST(host_pool, pipelined_loop_and_single_items) {
  if (!test_pool_is_bundled) GTEST_SKIP() << "thread_pool_impl's own extras";
  host_thread_pool pool(3);
  for (std::size_t loop_workers = 1; loop_workers <= 4; ++loop_workers) {
    pipelined_loop(pool, loop_workers, 100);
  }
  // enqueue(Fn) and enqueue_ref go through the host's enqueue.
  const int before = pool.enqueues.load();
  std::atomic<int> ran{0};
  ref_count<thread_pool::task> t = pool.enqueue([&]() { ran++; });
  pool.wait_for(t);
  EXPECT_EQ(ran.load(), 1);
  std::atomic<int> copies{0}, calls{0};
  const counting_body body(&copies, &calls);
  ref_count<thread_pool::task> u = pool.enqueue_ref(20, body);
  pool.wait_for(u);
  EXPECT_EQ(calls.load(), 20);
  // The default enqueue_ref wraps a reference to body: body itself is never copied.
  EXPECT_EQ(copies.load(), 0);
  EXPECT_EQ(pool.enqueues.load(), before + 2);
}

}  // namespace
}  // namespace slinky
