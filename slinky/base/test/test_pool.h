// test_pool: the thread pool the threaded tests run on. thread_pool_impl by default; the adapter
// test programs (slinky/adapters/test) build the same tests with SLINKY_TEST_POOL_PTHREADPOOL or
// SLINKY_TEST_POOL_TBB defined, and run them on that adapter. test_pool(workers) has
// thread_count() == workers on each.
#ifndef SLINKY_BASE_TEST_TEST_POOL_H
#define SLINKY_BASE_TEST_TEST_POOL_H

#include <type_traits>

#include "slinky/base/thread_pool_impl.h"

#if defined(SLINKY_TEST_POOL_PTHREADPOOL)
#include "slinky/adapters/pthreadpool_thread_pool.h"
#elif defined(SLINKY_TEST_POOL_TBB)
#include <oneapi/tbb/global_control.h>

#include "slinky/adapters/tbb_thread_pool.h"
#endif

namespace slinky {

#if defined(SLINKY_TEST_POOL_PTHREADPOOL)
using test_pool = pthreadpool_thread_pool;
constexpr const char* test_pool_name = "pthreadpool";
#elif defined(SLINKY_TEST_POOL_TBB)
using test_pool = tbb_thread_pool;
constexpr const char* test_pool_name = "tbb";
// oneTBB starts at most (hardware threads - 1) workers in all; the tests ask for up to 3 (4
// threads with the caller, as with thread_pool_impl(3)) on 2-core machines too.
inline tbb::global_control test_pool_parallelism(tbb::global_control::max_allowed_parallelism, 8);
#else
using test_pool = thread_pool_impl;
constexpr const char* test_pool_name = "bundled";
#endif

// Whether test_pool is the bundled thread_pool_impl (tests of its own extras skip otherwise).
constexpr bool test_pool_is_bundled = std::is_same<test_pool, thread_pool_impl>::value;

}  // namespace slinky

#endif  // SLINKY_BASE_TEST_TEST_POOL_H
