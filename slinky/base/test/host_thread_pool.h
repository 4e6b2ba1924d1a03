// A host thread pool as clients write them (docs/api.md section 11): a worker-less
// thread_pool_impl fed by the host's own threads, each job calling work_until_idle(). Used by the
// base and builder tests.
#ifndef SLINKY_BASE_TEST_HOST_THREAD_POOL_H
#define SLINKY_BASE_TEST_HOST_THREAD_POOL_H

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "slinky/base/thread_pool.h"
#include "slinky/base/thread_pool_impl.h"

namespace slinky {

// `threads` host threads run jobs; enqueue starts up to min(max_workers, n, idle threads) jobs,
// each draining the inner pool with work_until_idle().
class host_thread_pool : public thread_pool {
public:
  explicit host_thread_pool(int threads) : inner_(0) {
    inner_.expect_workers(threads);
    idle_ = threads;
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this]() { host_main(); });
  }
  ~host_thread_pool() override {
    {
      std::lock_guard<std::mutex> l(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  int thread_count() const override { return static_cast<int>(threads_.size()); }
  using thread_pool::enqueue;
  ref_count<task> enqueue(std::size_t n, task_body body, int max_workers) override {
    enqueues++;
    ref_count<task> t = inner_.enqueue(n, std::move(body), max_workers);
    int jobs;
    {
      std::lock_guard<std::mutex> l(mutex_);
      jobs = static_cast<int>(std::min<std::size_t>(
          {static_cast<std::size_t>(std::max(max_workers, 0)), n, static_cast<std::size_t>(idle_)}));
      idle_ -= jobs;
      pending_ += jobs;
    }
    for (int i = 0; i < jobs; ++i) cv_.notify_one();
    return t;
  }
  void wait_for(task* t) override { inner_.wait_for(t); }
  void wait_for(predicate_ref condition) override { inner_.wait_for(condition); }
  void atomic_call(function_ref<void()> fn) override { inner_.atomic_call(fn); }

  // Whether the calling thread is one of the host's.
  bool on_host_thread() const {
    for (const std::thread& t : threads_) {
      if (t.get_id() == std::this_thread::get_id()) return true;
    }
    return false;
  }

  std::atomic<int> enqueues{0};
  std::atomic<int> jobs_run{0};

private:
  void host_main() {
    std::unique_lock<std::mutex> l(mutex_);
    for (;;) {
      cv_.wait(l, [this]() { return pending_ > 0 || stop_; });
      if (pending_ == 0) return;
      --pending_;
      l.unlock();
      inner_.work_until_idle();
      jobs_run++;
      l.lock();
      ++idle_;
    }
  }

  thread_pool_impl inner_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int idle_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

}  // namespace slinky

#endif  // SLINKY_BASE_TEST_HOST_THREAD_POOL_H
