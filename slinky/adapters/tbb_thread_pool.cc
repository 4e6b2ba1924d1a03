// tbb_thread_pool: jobs handed to a oneTBB arena run the items of slinky's own queue (a
// worker-less thread_pool_impl).
#include "slinky/adapters/tbb_thread_pool.h"

#include <algorithm>
#include <utility>

#include "slinky/adapters/tbb_jobs.h"
#include "slinky/adapters/tsan_handoff.h"

namespace slinky {

tbb_thread_pool::tbb_thread_pool(int workers) : workers_(std::max(workers, 0)) {
  if (workers_ == 0) return;
  jobs_ = adapters::make_tbb_jobs(workers_);
  queue_.expect_workers(thread_count());
}

tbb_thread_pool::tbb_thread_pool(tbb::task_arena& arena, int workers) : workers_(std::max(workers, 0)) {
  if (workers_ == 0) return;
  jobs_ = adapters::make_tbb_jobs(arena);
  queue_.expect_workers(thread_count());
}

tbb_thread_pool::~tbb_thread_pool() {
  if (jobs_) {
    adapters::destroy_tbb_jobs(jobs_);
    adapters::handoff_acquire(&handoff_);
  }
  // queue_'s destructor runs what is still queued, here.
}

tbb::task_arena* tbb_thread_pool::arena() const { return jobs_ ? adapters::tbb_jobs_arena(jobs_) : nullptr; }

int tbb_thread_pool::thread_count() const {
  if (workers_ == 0) return 0;
  return std::max(std::min(workers_, adapters::tbb_worker_limit()), 0);
}

ref_count<thread_pool::task> tbb_thread_pool::enqueue(std::size_t n, task_body body, int max_workers) {
  ref_count<task> t = queue_.enqueue(n, std::move(body), max_workers);
  start_jobs(n, max_workers);
  return t;
}

ref_count<thread_pool::task> tbb_thread_pool::enqueue_ref(std::size_t n, function_ref<void(std::size_t)> body,
                                                          int max_workers) {
  ref_count<task> t = queue_.enqueue_ref(n, body, max_workers);
  start_jobs(n, max_workers);
  return t;
}

void tbb_thread_pool::start_jobs(std::size_t n, int max_workers) {
  if (!jobs_ || n == 0) return;
  // A job that starts after this sees the task queued (the job takes mutex_ after it started,
  // and the task was queued before this takes it). Jobs still waiting to start will run it, so
  // at most workers_ of them need to wait at a time.
  const std::size_t wanted = std::min<std::size_t>(n, static_cast<std::size_t>(std::max(max_workers, 1)));
  int count;
  {
    std::lock_guard<std::mutex> l(mutex_);
    count = static_cast<int>(std::min<std::size_t>(wanted, static_cast<std::size_t>(workers_))) - pending_;
    if (count <= 0) return;
    pending_ += count;
  }
  adapters::handoff_release(&handoff_);
  for (int i = 0; i < count; ++i) adapters::enqueue_tbb_job(jobs_, &job_main, this);
}

void tbb_thread_pool::job_main(void* self) { static_cast<tbb_thread_pool*>(self)->run_job(); }

void tbb_thread_pool::run_job() {
  adapters::handoff_acquire(&handoff_);
  {
    std::lock_guard<std::mutex> l(mutex_);
    --pending_;
  }
  queue_.work_until_idle();
  adapters::handoff_release(&handoff_);
}

}  // namespace slinky
