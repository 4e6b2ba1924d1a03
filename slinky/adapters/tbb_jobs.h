// The oneTBB calls of tbb_thread_pool, in a file of their own (tbb_jobs.cc) that a
// ThreadSanitizer build compiles without instrumentation. Not installed.
#ifndef SLINKY_ADAPTERS_TBB_JOBS_H
#define SLINKY_ADAPTERS_TBB_JOBS_H

#include <oneapi/tbb/task_arena.h>

namespace slinky {
namespace adapters {

// Why a file of its own: oneTBB hands a task from thread to thread inside libtbb, which is not
// instrumented, while the task's constructor and execute() are inline templates compiled into
// the caller. Instrumented, ThreadSanitizer would see the task written on one thread and read on
// another with nothing ordering them, and the hand-off cannot be announced between the two
// (tsan_handoff.h), since the task is made and handed over within one oneTBB call. Compiled
// uninstrumented, oneTBB's templates are as invisible to it as libtbb; the jobs they run
// (job_main in tbb_thread_pool.cc, the queue, the items) are instrumented.
class tbb_jobs;

// Jobs on an arena of its own with max_concurrency workers + 1, one slot reserved for external
// threads (workers >= 1).
tbb_jobs* make_tbb_jobs(int workers);
// Jobs on the host's arena.
tbb_jobs* make_tbb_jobs(tbb::task_arena& arena);
// Waits (in the arena, running jobs if needed) for every job handed over, then destroys jobs.
void destroy_tbb_jobs(tbb_jobs* jobs);
// Hands fn(arg) to the arena as a task of the jobs' task_group (task_arena::enqueue): it runs
// on one of the arena's workers, or on the thread in destroy_tbb_jobs.
void enqueue_tbb_job(tbb_jobs* jobs, void (*fn)(void*), void* arg);
tbb::task_arena* tbb_jobs_arena(tbb_jobs* jobs);
// oneTBB's limit on worker threads: global_control::max_allowed_parallelism minus one.
int tbb_worker_limit();

}  // namespace adapters
}  // namespace slinky

#endif  // SLINKY_ADAPTERS_TBB_JOBS_H
