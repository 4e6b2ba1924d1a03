// The emulation of atomic wait and notify (atomic_wait.h) for standard libraries without them.
#include "slinky/base/atomic_wait.h"

#include <cstdint>

namespace slinky {

#if !(defined(__cpp_lib_atomic_wait) && __cpp_lib_atomic_wait >= 201907L)

namespace internal {

namespace {

constexpr std::size_t bucket_count = 64;
atomic_wait_bucket buckets[bucket_count];

}  // namespace

atomic_wait_bucket& atomic_wait_bucket_for(const void* address) {
  // Atomics are at least 4-byte aligned in practice: drop the low bits, mix the rest.
  std::uintptr_t x = reinterpret_cast<std::uintptr_t>(address) >> 2;
  x ^= x >> 7;
  x ^= x >> 13;
  return buckets[x % bucket_count];
}

void atomic_notify(const void* address) {
  atomic_wait_bucket& b = atomic_wait_bucket_for(address);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (b.waiters.load(std::memory_order_relaxed) == 0) return;
  // Taking the mutex orders this after a waiter's check of the value: the waiter is then
  // either past the check (and saw the new value) or asleep in wait (and gets the notification).
  { std::lock_guard<std::mutex> l(b.mutex); }
  b.cv.notify_all();
}

}  // namespace internal

#endif

}  // namespace slinky
