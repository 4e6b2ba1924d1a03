// Random pipeline testing, part 4: the oracle (run_case), which runs a case unscheduled and
// under each of its schedules and checks the results, and run_isolated, which runs it in a child
// process so that crashes and hangs are reported.
#ifndef SLINKY_TOOLS_RANDOM_PIPELINE_CHECK_H
#define SLINKY_TOOLS_RANDOM_PIPELINE_CHECK_H

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "random_pipeline/build.h"
#include "random_pipeline/generate.h"
#include "random_pipeline/spec.h"
#include "slinky/base/thread_pool.h"

namespace slinky {
namespace random_test {

// The pool that schedules with schedule_spec::thread_pool run with: `workers` threads (1 to 3)
// besides the calling thread. Made on first use in each process: a forked child makes its own
// instead of using the parent's (whose worker threads it does not have). Not thread-safe: call it
// from the thread that runs the cases.
thread_pool* shared_thread_pool(int workers = 1);

// The result of running a case: empty kind if it passed. Kinds: unscheduled_mismatch (the
// unscheduled pipeline disagrees with the reference), mismatch (a scheduled one does),
// read_outside (a callback's input does not cover what it reads), crop (a callback is asked to
// compute outside what the unscheduled pipeline computes), check_failed, call_failed, evaluate
// (non-zero result otherwise unexplained), memory (an allocation larger than unscheduled), leak,
// recompute (a func called on more points than unscheduled where the schedule lets it slide),
// not_left_alone (auto mode keep: the scheduler changed a func the schedule scheduled),
// nondeterministic (auto mode: the same graph scheduled twice differently),
// allocations (more than one allocation of a buffer stored outside every loop), crash, timeout.
struct outcome {
  std::string kind;
  std::string message;
  // The failing schedule; -1 is the unscheduled pipeline.
  int schedule = -1;
  // Pipelines built and run.
  int runs = 0;
  // Of those, auto-mode schedules in which the scheduler made a loop.
  int auto_looped = 0;

  bool ok() const { return kind.empty(); }
};

// The reshapes of mixed radix (flat accesses, features::radix_reshapes) the unscheduled pipeline
// copies between dense intermediates: a plain copy of one input, from an intermediate a func
// (not a copy) produces into one no copy reads, neither with a fold factor, each laid out densely
// over its region in `p` (dim 0 innermost), as the unscheduled pipeline allocates them. For each,
// the copy's stage and the number of maximal runs of its destination's elements (in memory
// order) whose source elements are contiguous too: the copy's implementation is called at most
// that often (docs/copies.md, "Reshapes"; no call when the builder makes it a view).
std::vector<std::pair<int, index_t>> predicted_copy_calls(const graph_spec& g, const plan& p);

// The oracle: the unscheduled pipeline gives the reference's outputs, and every schedule gives
// the same, with callbacks that only read what their inputs cover and only compute what the
// unscheduled pipeline computes, and no heap allocation larger than the unscheduled one.
outcome run_case(const case_spec& c, const features& f = features());

// How long one case may run before it counts as a hang: 20 s, or 120 s in a build with a
// sanitizer, which runs the same case 5 to 20 times slower (the largest cases, with the extra
// serial runs of the memory bound, take over 20 s under AddressSanitizer on a loaded machine).
constexpr int case_timeout_seconds() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return 120;
#else
  return 20;
#endif
}

// run_case in a child process (unless use_fork is false), so that a crash, an abort or a hang
// (past timeout_seconds) is reported as an outcome instead of ending the batch.
outcome run_isolated(const case_spec& c, bool use_fork, const features& f = features(),
                     int timeout_seconds = case_timeout_seconds());

namespace internal_run {

// A buffer for b over `bounds`, with b's layout.
std::unique_ptr<host_buffer> make_buffer(const buffer_spec& b, const box& bounds);

}  // namespace internal_run

}  // namespace random_test
}  // namespace slinky

#endif  // SLINKY_TOOLS_RANDOM_PIPELINE_CHECK_H
