// Announces to ThreadSanitizer the hand-offs that go through a host pool's own (uninstrumented)
// code: work handed to pthreadpool's or oneTBB's threads, and their return. Not installed.
#ifndef SLINKY_ADAPTERS_TSAN_HANDOFF_H
#define SLINKY_ADAPTERS_TSAN_HANDOFF_H

#if defined(__SANITIZE_THREAD__)
#define SLINKY_ADAPTERS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLINKY_ADAPTERS_TSAN 1
#endif
#endif

#ifdef SLINKY_ADAPTERS_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace slinky {
namespace adapters {

// The host library synchronizes the thread that hands over work with the thread that runs it,
// but ThreadSanitizer cannot see that synchronization (the library is not instrumented). The
// handing thread calls handoff_release(key) before it hands over, and the receiving thread
// handoff_acquire(key) before it touches anything handed over: to ThreadSanitizer, everything
// before the release happens before everything after the acquire. No-ops in other builds.
inline void handoff_release(void* key) {
#ifdef SLINKY_ADAPTERS_TSAN
  __tsan_release(key);
#else
  (void)key;
#endif
}
inline void handoff_acquire(void* key) {
#ifdef SLINKY_ADAPTERS_TSAN
  __tsan_acquire(key);
#else
  (void)key;
#endif
}

}  // namespace adapters
}  // namespace slinky

#endif  // SLINKY_ADAPTERS_TSAN_HANDOFF_H
