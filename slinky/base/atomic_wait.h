// C++20's atomic wait and notify for C++17: block until an atomic's value differs from an old
// value, and wake such waiters. Forwards to std::atomic::wait/notify where the standard library
// has them, else emulates them with a table of mutexes and condition variables.
#ifndef SLINKY_BASE_ATOMIC_WAIT_H
#define SLINKY_BASE_ATOMIC_WAIT_H

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace slinky {

#if defined(__cpp_lib_atomic_wait) && __cpp_lib_atomic_wait >= 201907L

// The standard's own: an unqualified call, which also finds them by argument-dependent lookup,
// is then not ambiguous.
using std::atomic_notify_all;
using std::atomic_notify_one;
using std::atomic_wait;
using std::atomic_wait_explicit;

#else

namespace internal {

// Waiters on atomics whose addresses hash to the same bucket share its mutex and condition
// variable; a notification wakes every waiter of the bucket, and each re-checks its own value.
struct atomic_wait_bucket {
  std::mutex mutex;
  std::condition_variable cv;
  // Threads waiting in this bucket, so notify can skip the mutex when there are none.
  std::atomic<int> waiters{0};
};
atomic_wait_bucket& atomic_wait_bucket_for(const void* address);

void atomic_notify(const void* address);

}  // namespace internal

template <typename T>
void atomic_wait_explicit(const std::atomic<T>* a, typename std::atomic<T>::value_type old, std::memory_order order) {
  if (a->load(order) != old) return;
  internal::atomic_wait_bucket& b = internal::atomic_wait_bucket_for(a);
  std::unique_lock<std::mutex> l(b.mutex);
  b.waiters.fetch_add(1);
  // With the fence in atomic_notify: either the notifier sees this waiter, or this load sees
  // the notifier's new value (a store followed by notify is never missed).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  while (a->load(order) == old) b.cv.wait(l);
  b.waiters.fetch_sub(1);
}
template <typename T>
void atomic_notify_one(std::atomic<T>* a) {
  // Other atomics may share the bucket: waking only one thread could wake the wrong one.
  internal::atomic_notify(a);
}
template <typename T>
void atomic_notify_all(std::atomic<T>* a) {
  internal::atomic_notify(a);
}

// Blocks until *a no longer holds old (returns at once if it does not); spurious wake-ups are
// handled inside. A change is seen if it is followed by atomic_notify_one or atomic_notify_all.
template <typename T>
void atomic_wait(const std::atomic<T>* a, typename std::atomic<T>::value_type old) {
  atomic_wait_explicit(a, old, std::memory_order_seq_cst);
}

#endif

}  // namespace slinky

#endif  // SLINKY_BASE_ATOMIC_WAIT_H
