// Random pipeline testing, part 5: the shrinker, which simplifies a failing case while it fails
// the same way, and the printer of a case as a self-contained gtest TEST.
#ifndef SLINKY_TOOLS_RANDOM_PIPELINE_SHRINK_H
#define SLINKY_TOOLS_RANDOM_PIPELINE_SHRINK_H

#include <functional>
#include <string>
#include <utility>

#include "random_pipeline/build.h"
#include "random_pipeline/check.h"
#include "random_pipeline/generate.h"
#include "random_pipeline/spec.h"

namespace slinky {
namespace random_test {

// Shrinks a failing case while it still fails the same way (same kind), greedily, for at most
// `seconds`, calling progress with each smaller failing case. Candidates run in a child process
// each if use_fork (needed to see crashes and hangs, but slow). Returns the smallest failing
// case found and its outcome.
std::pair<case_spec, outcome>
shrink(case_spec c, outcome failure, const features& f, bool use_fork, double seconds,
       const std::function<void(const case_spec&, const outcome&)>& progress_made = nullptr);

// ---------------------------------------------------------------------------------------------
// Printing a case as a C++ test.

// A gtest TEST that builds the case's graph with the builder API, builds it unscheduled and with
// its first schedule, and runs and compares both with random_test::expect_same: the same outputs,
// callbacks that compute no more than the unscheduled pipeline computes and read only what their
// inputs cover, no failed check, no leak (and, for an unscheduled_mismatch, the reference's
// values; for a memory failure, no allocation larger than unscheduled; for recompute and
// allocations, the funcs computed once and the buffers allocated once). It needs
// random_pipeline/build.h and random_pipeline/regression_check.h (and
// slinky/base/thread_pool_impl.h when the schedule runs on a thread pool, and
// slinky/scheduler/schedule.h in auto mode, where the test calls the scheduler after setting the
// schedule), inside namespace slinky.
std::string to_cpp(const case_spec& c, const std::string& name, const outcome& o);

}  // namespace random_test
}  // namespace slinky

#endif  // SLINKY_TOOLS_RANDOM_PIPELINE_SHRINK_H
