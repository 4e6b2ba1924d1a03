// thread_pool_impl: the thread pool bundled with slinky. A fixed set of worker threads shares
// each parallel loop with the threads that wait for it.
#ifndef SLINKY_BASE_THREAD_POOL_IMPL_H
#define SLINKY_BASE_THREAD_POOL_IMPL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "slinky/base/thread_pool.h"

namespace slinky {

// A thread_pool of `workers` threads plus the thread that calls wait_for, which runs work while
// it waits; thread_count() is workers + 1. Beyond what thread_pool requires, it guarantees:
// - Items of a task are claimed in increasing order of i, so body(i) may wait for (the progress
//   of) body(j) with j < i, never for j > i. Items are claimed in chunks that shrink as the task
//   runs out of items (guided self-scheduling, Polychronopoulos and Kuck, 1987).
// - A thread never runs items of a task that it is already running an item of further down its
//   own stack: an item waiting for another item of its task cannot end up stacked on top of it.
//   Other tasks may be: a thread that waits runs items of any other queued task, so those items
//   must not wait for something that only the waiting thread's own stack can provide.
// - wait_for(task) runs items of that task first, then items of other tasks until it is done.
// - wait_for(condition) calls condition() with the pool's lock held, the lock atomic_call holds
//   while it calls fn, and calls it again after each atomic_call. When condition() returns true
//   it is not called again, so it may take a resource (e.g. decrement a semaphore) as it succeeds.
//   Neither condition nor fn may call the pool.
// - Idle threads poll for work (spinning, then yielding their core) for up to 200 us, then sleep
//   on a condition variable.
// - The destructor runs every item still queued (on the workers, or on the destroying thread if
//   there are none), then joins the workers. Bodies must still be valid then; normally every
//   task was waited for and nothing is left.
//
// Example:
//   thread_pool_impl pool(3);
//   pool.parallel_for(100, [&](std::size_t i) { out[i] = f(in[i]); });
class thread_pool_impl : public thread_pool {
public:
  // Starts `workers` threads (negative counts as 0). The default uses all hardware threads,
  // counting the caller of wait_for as one.
  explicit thread_pool_impl(int workers = static_cast<int>(std::thread::hardware_concurrency()) - 1);
  ~thread_pool_impl() override;

  thread_pool_impl(const thread_pool_impl&) = delete;
  thread_pool_impl& operator=(const thread_pool_impl&) = delete;

  int thread_count() const override { return workers_ + 1; }
  ref_count<task> enqueue(std::size_t n, task_body body, int max_workers = std::numeric_limits<int>::max()) override;
  void wait_for(task* t) override;
  void wait_for(predicate condition) override;
  void atomic_call(function_ref<void()> fn) override;

private:
  class task_impl;

  void worker_main();
  // Runs items of t until none is left to claim; returns false without running any if t already
  // has max_workers threads.
  bool run_items(task_impl* t);
  // Drops the tasks with no items left to claim from the queue. Called with mutex_ held.
  void prune_locked();
  // Prunes the queue and returns the first task this thread may run items of, or null. Called
  // with mutex_ held.
  ref_count<task_impl> find_work_locked();
  // Returns once ready() is true, running queued work meanwhile. `waited` is the task being
  // waited for, or null when ready() depends on state changed by atomic_call. Called with l
  // locked; ready() is called with l locked.
  void wait_until(std::unique_lock<std::mutex>& l, function_ref<bool()> ready, const task_impl* waited);
  // Wakes every thread sleeping in wait_until; returns false if there were none. Called with
  // mutex_ held; cv_wait_ must be notified after (the lock may be released first).
  bool wake_waiters_locked();

  const int workers_;
  std::vector<std::thread> threads_;

  // Guards queue_ and the conditions of wait_for(predicate).
  std::mutex mutex_;
  // Tasks that may have items left to claim, in the order they were enqueued.
  std::vector<ref_count<task_impl>> queue_;
  // Worker threads with nothing to do sleep on cv_work_. A thread waking them moves them from
  // idle_sleepers_ to wake_tokens_, so a worker that is woken but not yet running is not
  // notified again (each notification is a system call).
  std::condition_variable cv_work_;
  int idle_sleepers_ = 0;
  int wake_tokens_ = 0;
  // Threads in wait_for sleep on cv_wait_. Waking them all bumps wake_generation_ and zeroes
  // waiting_sleepers_ (for the same reason). waiting_sleepers_ is atomic because a finishing
  // task reads it without the lock, to see if it must wake anyone.
  std::condition_variable cv_wait_;
  std::atomic<int> waiting_sleepers_{0};
  std::uint64_t wake_generation_ = 0;
  // Counts of enqueue and atomic_call calls (changed under mutex_), read without the lock by
  // spinning threads to see that something happened.
  std::atomic<std::uint64_t> enqueued_{0};
  std::atomic<std::uint64_t> calls_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace slinky

#endif  // SLINKY_BASE_THREAD_POOL_IMPL_H
