// The thread pool interface slinky runs parallel loops on. Hosts (inference engines) usually
// bring their own pool and implement this interface; thread_pool_impl.h is the bundled one.
#ifndef SLINKY_BASE_THREAD_POOL_H
#define SLINKY_BASE_THREAD_POOL_H

#include <cstddef>
#include <limits>

#include "slinky/base/function_ref.h"
#include "slinky/base/ref_count.h"

namespace slinky {

// What a host pool must do:
// - enqueue(n, body, max_workers): arrange for body(i) to be called exactly once for each i in
//   [0, n), by at most max_workers threads at once (the caller of wait_for counts as one),
//   and return a handle to the work. body stays valid until wait_for(task) returns.
// - wait_for(task): return once every body(i) of the task has returned; the calling thread
//   should help run work (of this or other tasks) instead of blocking, so nested parallel
//   loops do not deadlock.
// - wait_for(condition): return once condition() is true; condition may only change inside
//   atomic_call, and the pool re-checks waiting conditions after each atomic_call. Waiting
//   threads should run queued work meanwhile.
// - atomic_call(fn): call fn while holding the lock that guards the waiting conditions.
class thread_pool {
public:
  class task : public ref_counted<task> {
  public:
    virtual ~task() = default;
    static void destroy(task* t) { delete t; }
  };
  using task_body = function_ref<void(std::size_t)>;
  using predicate = function_ref<bool()>;

  virtual ~thread_pool() = default;

  // The number of threads that may run work, including the caller of wait_for.
  virtual int thread_count() const = 0;
  virtual ref_count<task> enqueue(std::size_t n, task_body body, int max_workers = std::numeric_limits<int>::max()) = 0;
  virtual void wait_for(task* t) = 0;
  virtual void wait_for(predicate condition) = 0;
  virtual void atomic_call(function_ref<void()> fn) = 0;

  // Calls body(i) for each i in [0, n) on up to max_workers threads, and returns when all
  // calls have returned.
  template <typename Fn>
  void parallel_for(std::size_t n, Fn&& body, int max_workers = std::numeric_limits<int>::max()) {
    if (n == 0) return;
    if (n == 1 || max_workers <= 1) {
      for (std::size_t i = 0; i < n; ++i) body(i);
      return;
    }
    ref_count<task> t = enqueue(n, body, max_workers);
    wait_for(t.get());
  }
};

}  // namespace slinky

#endif  // SLINKY_BASE_THREAD_POOL_H
