/// \file
/// The thread pool interface slinky runs parallel loops on. Hosts (inference engines) usually
/// bring their own pool and implement this interface; thread_pool_impl.h is the bundled one.
#ifndef SLINKY_BASE_THREAD_POOL_H
#define SLINKY_BASE_THREAD_POOL_H

#include <cstddef>
#include <functional>
#include <limits>
#include <utility>

#include "slinky/base/function_ref.h"
#include "slinky/base/ref_count.h"

namespace slinky {

/// What a host pool must do (the pure virtual functions):
/// - thread_count(): the number of threads that run work in the background, not counting a
///   thread that calls wait_for. 0 means that only callers of wait_for run work.
/// - enqueue(n, body, max_workers): arrange for body(i) to be called exactly once for each i in
///   [0, n), by at most max_workers threads at once (the caller of wait_for counts as one),
///   and return a handle to the work. The task owns body; each thread that runs items of the
///   task calls its own copy of body (so a body may keep per-thread state in its captures).
/// - wait_for(task): return once every body(i) of the task has returned; the calling thread
///   should help run work (of this or other tasks) instead of blocking, so nested parallel
///   loops do not deadlock. It must not run items of a task that it is already running further
///   down its own stack. The task was made by this pool.
/// - wait_for(condition): return once condition() is true; condition may only change inside
///   atomic_call, and the pool re-checks waiting conditions after each atomic_call (evaluating
///   them atomically with respect to atomic_call). Waiting threads should run queued work
///   meanwhile.
/// - atomic_call(fn): call fn on the calling thread, serialized with other atomic_calls and with
///   the conditions of wait_for.
class thread_pool {
public:
  /// The work enqueue returns a handle to: n items, reference counted (the pool and the
  /// handles share it).
  class task : public ref_counted<task> {
  public:
    /// Virtual: the pool's own task type derives from task.
    virtual ~task() = default;
    /// Whether every item of the task has returned.
    virtual bool done() const = 0;
    /// Called when the last reference is released; a pool that recycles its tasks overrides it.
    virtual void destroy() { delete this; }
    /// What ref_counted calls when the last reference is released: t->destroy().
    static void destroy(task* t) { t->destroy(); }
  };
  /// The body of a task, called with each item index i in [0, n); owned by the task.
  using task_body = std::function<void(std::size_t)>;
  /// A condition for wait_for, not owned.
  using predicate_ref = function_ref<bool()>;
  /// Our earlier name of predicate_ref.
  using predicate = predicate_ref;

  /// Virtual: hosts derive their pools from thread_pool.
  virtual ~thread_pool() = default;

  /// The number of threads that run work in the background, not counting a thread that calls
  /// wait_for (0: only callers of wait_for run work).
  virtual int thread_count() const = 0;
  /// Arranges for t(i) to be called once for each i in [0, n) by at most max_workers threads at
  /// once (each thread calling its own copy of t), and returns a handle to the work.
  virtual ref_count<task> enqueue(std::size_t n, task_body t, int max_workers = std::numeric_limits<int>::max()) = 0;
  /// Returns once every item of t (made by this pool) has returned, running work meanwhile.
  virtual void wait_for(task* t) = 0;
  /// Returns once condition() is true, running queued work meanwhile; condition is evaluated
  /// atomically with respect to atomic_call, and again after each atomic_call.
  virtual void wait_for(predicate_ref condition) = 0;
  /// Calls t on the calling thread, serialized with other atomic_calls and with the conditions
  /// of wait_for.
  virtual void atomic_call(function_ref<void()> t) = 0;

  /// Like enqueue, but body is not owned: it must stay valid until wait_for(task) has returned,
  /// and every thread calls it (not a copy). The default wraps body (a 16-byte object, no heap
  /// allocation) in a task_body and calls enqueue, so each thread calls a copy of the wrapper,
  /// all calling body itself. thread_pool_impl overrides it to skip std::function altogether;
  /// the evaluator runs parallel loops through it.
  virtual ref_count<task> enqueue_ref(std::size_t n, function_ref<void(std::size_t)> body,
                                      int max_workers = std::numeric_limits<int>::max()) {
    return enqueue(n, task_body(body), max_workers);
  }

  /// A task of one item that calls t(). Pools that override enqueue need `using
  /// thread_pool::enqueue;` to keep this overload visible.
  template <typename Fn>
  ref_count<task> enqueue(Fn t) {
    return enqueue(1, task_body([t = std::move(t)](std::size_t) mutable { t(); }));
  }

  /// Calls body(i) for each i in [0, n) and returns when all calls have returned: nothing for
  /// n == 0; body(0) on the calling thread for n == 1; a serial loop in order on the calling
  /// thread when max_workers <= 1 or thread_count() == 0; otherwise enqueue then wait_for.
  void parallel_for(std::size_t n, task_body body, int max_workers = std::numeric_limits<int>::max()) {
    if (n == 0) return;
    if (n == 1) {
      body(0);
      return;
    }
    if (max_workers <= 1 || thread_count() == 0) {
      for (std::size_t i = 0; i < n; ++i) body(i);
      return;
    }
    ref_count<task> t = enqueue(n, std::move(body), max_workers);
    wait_for(t.get());
  }
};

}  // namespace slinky

#endif  // SLINKY_BASE_THREAD_POOL_H
