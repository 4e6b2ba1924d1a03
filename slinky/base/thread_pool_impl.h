/// \file
/// `thread_pool_impl`: the thread pool bundled with slinky. A fixed set of worker threads shares
/// each parallel loop with the threads that wait for it.
#ifndef SLINKY_BASE_THREAD_POOL_IMPL_H
#define SLINKY_BASE_THREAD_POOL_IMPL_H

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "slinky/base/thread_pool.h"

namespace slinky {

/// The size of a cache line (bytes), to keep data written by different threads apart.
constexpr std::size_t cache_line_size = 64;

/// A thread_pool of `workers` threads of its own, plus the threads that call wait_for, which run
/// work while they wait, plus any threads a host lends through run_worker or work_until_idle.
/// thread_count() is the number of worker threads (not counting callers of wait_for). Beyond
/// what thread_pool requires, it guarantees:
/// - Items of a task are claimed in increasing order of i, so body(i) may wait for (the progress
///   of) body(j) with j < i, never for j > i. Items are claimed in chunks that shrink as the task
///   runs out of items (guided self-scheduling, Polychronopoulos and Kuck, 1987).
/// - A thread never runs items of a task that it is already running an item of further down its
///   own stack: an item waiting for another item of its task cannot end up stacked on top of it.
///   Other tasks may be: a thread that waits runs items of any other queued task, so those items
///   must not wait for something that only the waiting thread's own stack can provide.
/// - wait_for(task) runs items of that task first, then items of other tasks until it is done.
/// - wait_for(condition) calls condition() with the pool's lock held, the lock atomic_call holds
///   while it calls fn, and calls it again after each atomic_call. When condition() returns true
///   it is not called again, so it may take a resource (e.g. decrement a semaphore) as it succeeds.
///   Neither condition nor fn may call the pool. run_worker treats its condition the same way.
/// - A task made by enqueue owns its body (a std::function); each thread that runs items of it
///   copies the body once, when it claims its first item, and calls its copy. A task made by
///   enqueue_ref calls the caller's body directly: no copy and no std::function.
/// - Idle threads poll for work (spinning, then yielding their core) for up to 200 us, then sleep
///   on a condition variable. enqueue wakes sleeping threads for min(n, max_workers) - 1 of them
///   (the thread that waits for the task is expected to be one), and one for a task of one item
///   (enqueue(Fn), usually not waited for at once).
/// - The destructor runs every item still queued (on the workers, or on the destroying thread if
///   there are none), then joins the workers. Bodies must still be valid then; normally every
///   task was waited for and nothing is left. No thread may be inside run_worker then.
///
/// Example:
///
///     thread_pool_impl pool(3);
///     pool.parallel_for(100, [&](std::size_t i) { out[i] = f(in[i]); });
///
/// A host that runs slinky's work on its own threads makes a pool without workers, announces
/// its threads with expect_workers(n), and has them call work_until_idle() after each enqueue
/// (or run_worker(condition) to stay until condition() holds).
class thread_pool_impl final : public thread_pool {
public:
  /// The task type of this pool; defined in thread_pool_impl.cc.
  class task_impl;

  /// Starts `workers` threads (negative counts as 0) and calls expect_workers(workers). Each
  /// thread first calls init() (if not null), then works until the pool is destroyed; the
  /// constructor returns after every thread has returned from init().
  thread_pool_impl(int workers = 3, function_ref<void()> init = nullptr);
  /// Runs the items still queued, then joins the workers (see the class description).
  ~thread_pool_impl() override;

  /// Not copyable.
  thread_pool_impl(const thread_pool_impl&) = delete;
  /// Not copyable.
  thread_pool_impl& operator=(const thread_pool_impl&) = delete;

  /// The calling thread works as one of the pool's workers (running queued items, sleeping when
  /// there are none) until condition() is true. condition is called as wait_for's is (under the
  /// pool's lock, again after each atomic_call, not again once true). While inside, the thread
  /// counts towards thread_count().
  void run_worker(predicate_ref condition);
  /// Runs queued items on the calling thread until no queued task has items that this thread
  /// may run (none left to claim, or the task already has max_workers threads, or this thread
  /// is running it further down its stack), then returns.
  void work_until_idle();
  /// Announces that n threads will take part in the work (e.g. host threads that will call
  /// work_until_idle); thread_count() is at least n from now on.
  void expect_workers(int n);

  /// max(the last expect_workers, the threads of the pool plus the threads inside run_worker).
  int thread_count() const override;
  /// enqueue(Fn): a task of one item.
  using thread_pool::enqueue;
  ref_count<task> enqueue(std::size_t n, task_body body, int max_workers = std::numeric_limits<int>::max()) override;
  ref_count<task> enqueue_ref(std::size_t n, function_ref<void(std::size_t)> body,
                              int max_workers = std::numeric_limits<int>::max()) override;
  void wait_for(task* t) override;
  void wait_for(predicate_ref condition) override;
  void atomic_call(function_ref<void()> fn) override;

private:
  void worker_main();
  // Queues t (not yet queued) and wakes threads to help with it.
  void enqueue_task(const ref_count<task_impl>& t);
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
  // The last expect_workers, and the pool's own threads plus the threads inside run_worker.
  std::atomic<int> expected_workers_{0};
  std::atomic<int> running_workers_{0};

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
