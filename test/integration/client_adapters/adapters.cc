// A client of the installed host pool adapters (tools/check_adapters.sh): each adapter built in
// (SLINKY_HAVE_PTHREADPOOL, SLINKY_HAVE_TBB) runs nested parallel loops and a task nobody waits
// for.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "slinky/base/thread_pool.h"
#ifdef SLINKY_HAVE_PTHREADPOOL
#include "slinky/adapters/pthreadpool_thread_pool.h"
#endif
#ifdef SLINKY_HAVE_TBB
#include "slinky/adapters/tbb_thread_pool.h"
#endif

using namespace slinky;

// Built with -fsanitize=thread by the check: the suppressions a client running an adapter under
// ThreadSanitizer needs (slinky/adapters/test/tsan_suppressions.cc says why).
extern "C" const char* __tsan_default_suppressions() {
  return "called_from_lib:libtbb.so\n"
         "called_from_lib:libpthreadpool.so\n";
}

namespace {

bool check(const char* name, thread_pool& pool) {
  std::atomic<long> sum{0};
  pool.parallel_for(
      100, [&](std::size_t i) { pool.parallel_for(10, [&](std::size_t j) { sum += static_cast<long>(i * j); }); });
  // A task nobody waits for: a background thread runs it.
  std::atomic<bool> ran{false};
  ref_count<thread_pool::task> t = pool.enqueue([&]() { ran = true; });
  while (!t->done()) std::this_thread::yield();
  const bool ok = sum.load() == 4950L * 45 && ran;
  std::printf("%s adapter (%d threads): %s\n", name, pool.thread_count(), ok ? "ok" : "WRONG");
  return ok;
}

}  // namespace

int main() {
  bool ok = true;
#ifdef SLINKY_HAVE_PTHREADPOOL
  pthreadpool_thread_pool pthreadpool_pool(2);
  ok = check("pthreadpool", pthreadpool_pool) && ok;
#endif
#ifdef SLINKY_HAVE_TBB
  tbb_thread_pool tbb_pool(1);
  ok = check("oneTBB", tbb_pool) && ok;
#endif
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
