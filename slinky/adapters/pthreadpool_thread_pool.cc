// pthreadpool_thread_pool: a dispatcher thread runs rounds of pthreadpool_parallelize_1d whose
// items work on slinky's own queue (a worker-less thread_pool_impl).
#include "slinky/adapters/pthreadpool_thread_pool.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "slinky/adapters/tsan_handoff.h"
#include "slinky/base/assert.h"

namespace slinky {

namespace {

// How long the last busy thread of a round waits for more work before the round ends. Starting
// a round costs two wake-ups (the dispatcher, then pthreadpool's threads); an evaluation running
// one parallel loop after the other would otherwise pay them on every loop.
constexpr std::chrono::microseconds linger_time{200};

}  // namespace

pthreadpool_thread_pool::pthreadpool_thread_pool(int workers) {
  if (workers <= 0) return;
  // pthreadpool_create(0) would mean one thread per core.
  pool_ = pthreadpool_create(static_cast<std::size_t>(workers));
  SLINKY_ASSERT(pool_, "pthreadpool_create failed");
  owns_pool_ = true;
  workers_ = static_cast<int>(pthreadpool_get_threads_count(pool_));
  queue_.expect_workers(workers_);
  dispatcher_ = std::thread([this]() { dispatcher_main(); });
}

pthreadpool_thread_pool::pthreadpool_thread_pool(pthreadpool_t pool) : pool_(pool) {
  if (!pool_) return;
  workers_ = static_cast<int>(pthreadpool_get_threads_count(pool_));
  queue_.expect_workers(workers_);
  dispatcher_ = std::thread([this]() { dispatcher_main(); });
}

pthreadpool_thread_pool::~pthreadpool_thread_pool() {
  if (dispatcher_.joinable()) {
    {
      std::lock_guard<std::mutex> l(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    dispatcher_.join();
  }
  if (owns_pool_) pthreadpool_destroy(pool_);
  // queue_'s destructor runs what is still queued, here.
}

ref_count<thread_pool::task> pthreadpool_thread_pool::enqueue(std::size_t n, task_body body, int max_workers) {
  ref_count<task> t = queue_.enqueue(n, std::move(body), max_workers);
  if (n > 0) announce_work();
  return t;
}

ref_count<thread_pool::task> pthreadpool_thread_pool::enqueue_ref(std::size_t n, function_ref<void(std::size_t)> body,
                                                                  int max_workers) {
  ref_count<task> t = queue_.enqueue_ref(n, body, max_workers);
  if (n > 0) announce_work();
  return t;
}

void pthreadpool_thread_pool::announce_work() {
  if (workers_ == 0) return;
  bool wake;
  {
    std::lock_guard<std::mutex> l(mutex_);
    // After the task was queued: a round that sees this count also sees the task.
    ++enqueued_;
    wake = sleepers_ > 0;
  }
  if (wake) cv_.notify_all();
}

void pthreadpool_thread_pool::dispatcher_main() {
  std::unique_lock<std::mutex> l(mutex_);
  // enqueued_ when the last round started: every task queued before that count was reached is
  // visible to that round's threads.
  std::uint64_t started = 0;
  for (;;) {
    ++sleepers_;
    cv_.wait(l, [&]() { return enqueued_ != started || stop_; });
    --sleepers_;
    // When stopping, a last round for what was enqueued since the last one.
    if (enqueued_ == started) return;
    started = enqueued_;
    round_over_ = false;
    l.unlock();
    adapters::handoff_release(&handoff_);
    // One item per thread; this thread is pthreadpool's thread 0. The round ends when the
    // queue has been idle for a while, so pthreadpool's threads need not spin for the next one.
    pthreadpool_parallelize_1d(pool_, &round_item, this, static_cast<std::size_t>(workers_),
                               PTHREADPOOL_FLAG_YIELD_WORKERS);
    adapters::handoff_acquire(&handoff_);
    l.lock();
  }
}

void pthreadpool_thread_pool::round_item(void* self, std::size_t) {
  static_cast<pthreadpool_thread_pool*>(self)->run_round();
}

void pthreadpool_thread_pool::run_round() {
  adapters::handoff_acquire(&handoff_);
  std::unique_lock<std::mutex> l(mutex_);
  // A thread that starts late (pthreadpool may give its item to another thread once that one
  // is done) finds the round over.
  while (!round_over_) {
    ++active_;
    const std::uint64_t seen = enqueued_;
    l.unlock();
    queue_.work_until_idle();
    l.lock();
    --active_;
    if (enqueued_ != seen) continue;
    if (active_ > 0) {
      // Another thread of the round is running items, which may enqueue nested loops: wait for
      // them here rather than in pthreadpool, where a new round would be needed to get back.
      ++sleepers_;
      cv_.wait(l, [&]() { return enqueued_ != seen || round_over_; });
      --sleepers_;
      continue;
    }
    // The last busy thread: linger, then end the round.
    ++sleepers_;
    cv_.wait_for(l, linger_time, [&]() { return enqueued_ != seen || round_over_ || stop_; });
    --sleepers_;
    if (enqueued_ != seen || round_over_) continue;
    round_over_ = true;
    if (sleepers_ > 0) cv_.notify_all();
  }
  l.unlock();
  adapters::handoff_release(&handoff_);
}

}  // namespace slinky
