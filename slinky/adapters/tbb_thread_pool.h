// tbb_thread_pool: slinky's thread_pool running its work on the worker threads of a oneTBB
// task_arena. Optional component `slinky::tbb`, built when oneTBB is found (docs/threads.md,
// "Host pools", explains the design).
#ifndef SLINKY_ADAPTERS_TBB_THREAD_POOL_H
#define SLINKY_ADAPTERS_TBB_THREAD_POOL_H

#include <oneapi/tbb/task_arena.h>

#include <cstddef>
#include <limits>
#include <mutex>

#include "slinky/base/thread_pool.h"
#include "slinky/base/thread_pool_impl.h"

namespace slinky {

namespace adapters {
// The arena and the task_group of the jobs (tbb_jobs.h).
class tbb_jobs;
}  // namespace adapters

// oneTBB's scheduler can wait for its own tasks while running others, but slinky's contract
// needs more than it offers: wait_for(condition) must keep running queued work until a
// condition set by atomic_call holds (oneTBB has no call that runs one pending task and
// returns), and a waiting thread must never run items of a task it is already running further
// down its stack (oneTBB's waits steal any task of the arena; isolation would forbid the other
// tasks too, which the waiter must help with). So:
// - The loops are queued in a worker-less thread_pool_impl (the queue), which gives the
//   semantics of thread_pool_impl.h: items claimed in order, max_workers, wait_for running queued
//   items while it waits (never items of a task it is running further down its stack),
//   wait_for(condition) re-checked after each atomic_call. Nested loops only queue and wait.
// - enqueue hands min(n, max_workers) *jobs* to the arena (task_arena::enqueue of a
//   task_group's deferred task), at most `workers` of them waiting to start at a time.
//   A job runs queued items on a TBB worker until the queue has nothing it may run, then
//   returns the thread to oneTBB.
// Threads in wait_for run slinky's queued items, not other TBB tasks of the host.
// thread_count() is min(workers, oneTBB's limit on worker threads: its
// global_control::max_allowed_parallelism minus one, by default the machine's hardware threads
// minus one), read at each call.
//
// Example:
//   tbb_thread_pool pool(3);  // or tbb_thread_pool pool(host_arena, 3);
//   eval_config config;
//   config.thread_pool = &pool;
class tbb_thread_pool final : public thread_pool {
public:
  // An arena of its own with room for `workers` worker threads (max_concurrency workers + 1,
  // one slot reserved for the thread that destroys the pool); 0 or fewer makes a pool without
  // background threads (only callers of wait_for run work).
  explicit tbb_thread_pool(int workers);
  // Runs jobs on the host's arena (which must outlive this pool), at most `workers` of them
  // waiting to start at a time; thread_count() is at most `workers`.
  tbb_thread_pool(tbb::task_arena& arena, int workers);
  // Waits for the jobs handed to the arena (running them on this thread if the arena's workers
  // are busy elsewhere), then runs the work still queued (as thread_pool_impl does).
  ~tbb_thread_pool() override;

  tbb_thread_pool(const tbb_thread_pool&) = delete;
  tbb_thread_pool& operator=(const tbb_thread_pool&) = delete;

  int thread_count() const override;
  using thread_pool::enqueue;
  ref_count<task> enqueue(std::size_t n, task_body body, int max_workers = std::numeric_limits<int>::max()) override;
  ref_count<task> enqueue_ref(std::size_t n, function_ref<void(std::size_t)> body,
                              int max_workers = std::numeric_limits<int>::max()) override;
  void wait_for(task* t) override { queue_.wait_for(t); }
  void wait_for(predicate_ref condition) override { queue_.wait_for(condition); }
  void atomic_call(function_ref<void()> fn) override { queue_.atomic_call(fn); }

  // The arena the jobs run in (null without background threads).
  tbb::task_arena* arena() const;

private:
  static void job_main(void* self);
  void run_job();
  // Hands up to min(n, max_workers) jobs to the arena.
  void start_jobs(std::size_t n, int max_workers);

  // Declared first: it outlives the jobs that use it.
  thread_pool_impl queue_{0};
  // Null without background threads.
  adapters::tbb_jobs* jobs_ = nullptr;
  int workers_ = 0;

  std::mutex mutex_;
  // Jobs handed to the arena that have not started yet. Guarded by mutex_.
  int pending_ = 0;
  // The address through which hand-offs to oneTBB's threads are announced to ThreadSanitizer
  // (tsan_handoff.h).
  char handoff_ = 0;
};

}  // namespace slinky

#endif  // SLINKY_ADAPTERS_TBB_THREAD_POOL_H
