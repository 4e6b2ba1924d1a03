// The oneTBB calls of tbb_thread_pool (see tbb_jobs.h for why they are apart).
#include "slinky/adapters/tbb_jobs.h"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_group.h>

#include <memory>

namespace slinky {
namespace adapters {

class tbb_jobs {
public:
  explicit tbb_jobs(int workers)
      : own_arena_(std::make_unique<tbb::task_arena>(workers + 1, 1)), arena_(own_arena_.get()) {}
  explicit tbb_jobs(tbb::task_arena& arena) : arena_(&arena) {}
  ~tbb_jobs() {
    tbb::task_group& group = group_;
    arena_->execute([&group]() { group.wait(); });
  }

  void enqueue(void (*fn)(void*), void* arg) {
    arena_->enqueue(group_.defer([fn, arg]() { fn(arg); }));
  }
  tbb::task_arena* arena() const { return arena_; }

private:
  std::unique_ptr<tbb::task_arena> own_arena_;
  tbb::task_arena* arena_;
  // Destroyed before the arena it runs in.
  tbb::task_group group_;
};

tbb_jobs* make_tbb_jobs(int workers) { return new tbb_jobs(workers); }
tbb_jobs* make_tbb_jobs(tbb::task_arena& arena) { return new tbb_jobs(arena); }
void destroy_tbb_jobs(tbb_jobs* jobs) { delete jobs; }
void enqueue_tbb_job(tbb_jobs* jobs, void (*fn)(void*), void* arg) { jobs->enqueue(fn, arg); }
tbb::task_arena* tbb_jobs_arena(tbb_jobs* jobs) { return jobs->arena(); }

int tbb_worker_limit() {
  return static_cast<int>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)) - 1;
}

}  // namespace adapters
}  // namespace slinky
