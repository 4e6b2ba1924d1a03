// Random pipeline testing, part 6: the time-boxed batch of random cases shared by the CTest target
// (random_pipeline_test.cc) and apps/random_pipelines.cc; each failure is shrunk and printed.
#ifndef SLINKY_TOOLS_RANDOM_PIPELINE_RUN_H
#define SLINKY_TOOLS_RANDOM_PIPELINE_RUN_H

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "random_pipeline/check.h"
#include "random_pipeline/generate.h"
#include "random_pipeline/shrink.h"

namespace slinky {
namespace random_test {

struct batch_options {
  std::uint64_t seed = 1;
  double seconds = 60;
  // Stop after this many cases (-1: only the time limit).
  std::int64_t max_cases = -1;
  // Run only this case of the batch (-1: all).
  std::int64_t only_case = -1;
  features f;
  bool fork = true;
  // Stop after this many failures.
  int max_failures = 1;
  double shrink_seconds = 120;
  std::ostream* log = &std::cout;
};

struct batch_result {
  std::int64_t cases = 0;
  std::int64_t runs = 0;
  // Of the cases, those in auto mode (auto_case), and of their schedules, those in which the
  // scheduler made a loop.
  std::int64_t auto_cases = 0;
  std::int64_t auto_looped = 0;
  double seconds = 0;
  // Cases that ran past case_timeout_seconds() in the batch but ended when run again alone with
  // confirm_timeout_factor times the limit (not hangs; their results count).
  std::int64_t slow_cases = 0;
  std::vector<std::string> failures;
};

// A case past the time limit is run again alone with this many times the limit; it is a hang
// (a failure of kind "timeout") only if it does not end then either.
constexpr int confirm_timeout_factor = 5;

// Runs random cases until the time is up, shrinking and printing each failure as a C++ test.
// With o.fork, cases run in a child process (a new one after each failure), so that a crash or
// a hang is reported too.
batch_result run_batch(const batch_options& o);

}  // namespace random_test
}  // namespace slinky

#endif  // SLINKY_TOOLS_RANDOM_PIPELINE_RUN_H
