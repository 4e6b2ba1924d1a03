// pthreadpool_thread_pool: slinky's thread_pool running its work on the threads of a pthreadpool
// (the pool of XNNPACK and PyTorch). Optional component `slinky::pthreadpool`, built when
// pthreadpool is found (docs/threads.md, "Host pools", explains the design).
#ifndef SLINKY_ADAPTERS_PTHREADPOOL_THREAD_POOL_H
#define SLINKY_ADAPTERS_PTHREADPOOL_THREAD_POOL_H

#include <pthreadpool.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <thread>

#include "slinky/base/thread_pool.h"
#include "slinky/base/thread_pool_impl.h"

namespace slinky {

// pthreadpool only runs a blocking fork-join loop (pthreadpool_parallelize_1d returns when every
// item has run), serializes the calls of different threads, and deadlocks when an item calls it
// again. So this pool never hands slinky's loops to it directly:
// - The loops are queued in a worker-less thread_pool_impl (the queue), which gives the
//   semantics of thread_pool_impl.h: items claimed in order, max_workers, wait_for running queued
//   items while it waits (and never items of a task it is running further down its stack),
//   wait_for(condition) re-checked after each atomic_call. Nested loops only queue and wait.
// - One thread of its own (the dispatcher) calls pthreadpool_parallelize_1d with one item per
//   pthreadpool thread, as pthreadpool's calling thread (its thread 0), whenever work is queued:
//   a *round*. Each item makes its thread a worker of the queue until the round ends. A thread
//   that finds nothing to run waits for the next enqueue while another thread of the round is
//   still running items (whose nested loops it can then help with); the round ends when none
//   is and nothing was enqueued for 200 us. Between rounds, pthreadpool's threads are free for
//   the host's own pthreadpool calls.
// thread_count() is the pthreadpool's thread count: the dispatcher plays thread 0, so exactly
// that many threads run work in the background, plus the threads in wait_for.
// pthreadpool itself is never called from inside an item, so nothing can deadlock in it. But a
// callback of a pipeline running on this pool must not call pthreadpool_parallelize_* on the
// same pthreadpool: that call waits for the end of the round, which waits for the callback.
//
// Example:
//   pthreadpool_thread_pool pool(3);  // or pthreadpool_thread_pool pool(host_pthreadpool);
//   eval_config config;
//   config.thread_pool = &pool;
class pthreadpool_thread_pool final : public thread_pool {
public:
  // A pthreadpool of its own with `workers` threads (pthreadpool_create(workers)); 0 or fewer
  // makes a pool without background threads (only callers of wait_for run work).
  explicit pthreadpool_thread_pool(int workers);
  // Runs on the host's pthreadpool, which must outlive this pool and is not destroyed by it.
  explicit pthreadpool_thread_pool(pthreadpool_t pool);
  // Runs the work still queued (as thread_pool_impl does), stops the dispatcher, and destroys
  // the pthreadpool if it made it.
  ~pthreadpool_thread_pool() override;

  pthreadpool_thread_pool(const pthreadpool_thread_pool&) = delete;
  pthreadpool_thread_pool& operator=(const pthreadpool_thread_pool&) = delete;

  // The pthreadpool's threads (0 without one).
  int thread_count() const override { return workers_; }
  using thread_pool::enqueue;
  ref_count<task> enqueue(std::size_t n, task_body body, int max_workers = std::numeric_limits<int>::max()) override;
  ref_count<task> enqueue_ref(std::size_t n, function_ref<void(std::size_t)> body,
                              int max_workers = std::numeric_limits<int>::max()) override;
  void wait_for(task* t) override { queue_.wait_for(t); }
  void wait_for(predicate_ref condition) override { queue_.wait_for(condition); }
  void atomic_call(function_ref<void()> fn) override { queue_.atomic_call(fn); }

  // The pthreadpool the work runs on (null without background threads).
  pthreadpool_t native_handle() const { return pool_; }

private:
  static void round_item(void* self, std::size_t);
  void run_round();
  void dispatcher_main();
  // Tells the dispatcher and the idle threads of a round that work was queued.
  void announce_work();

  // Declared first: it outlives the threads that use it.
  thread_pool_impl queue_{0};
  pthreadpool_t pool_ = nullptr;
  bool owns_pool_ = false;
  int workers_ = 0;

  // Guards the fields below.
  std::mutex mutex_;
  std::condition_variable cv_;
  // The number of enqueue calls; a round runs until it has seen the last one.
  std::uint64_t enqueued_ = 0;
  // Threads of the current round running the queue's items.
  int active_ = 0;
  bool round_over_ = false;
  // Threads waiting on cv_ (the dispatcher and the idle threads of a round).
  int sleepers_ = 0;
  bool stop_ = false;
  std::thread dispatcher_;
  // The address through which hand-offs to pthreadpool's threads are announced to
  // ThreadSanitizer (tsan_handoff.h).
  char handoff_ = 0;
};

}  // namespace slinky

#endif  // SLINKY_ADAPTERS_PTHREADPOOL_THREAD_POOL_H
