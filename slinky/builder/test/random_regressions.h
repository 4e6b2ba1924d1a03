// What the random tester's regression tests share (random_regressions_test.cc, _test_2.cc and
// _test_3.cc, one test executable): a generated case checked as the tester runs it, and the
// callbacks of the shrunk graphs.
#ifndef SLINKY_BUILDER_TEST_RANDOM_REGRESSIONS_H
#define SLINKY_BUILDER_TEST_RANDOM_REGRESSIONS_H

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "random_pipeline/build.h"
#include "random_pipeline/check.h"
#include "random_pipeline/generate.h"

namespace slinky {
namespace random_test {

// Regenerates a case found by the tester and checks that it passes (the canaries among the tests),
// with the tester's default features but auto mode, which needs the scheduler (a layer above the
// builder). Auto mode replaces some of a case's random schedules and changes nothing else. The
// scheduler's tests run the same cases with auto mode, as they were found (random_schedule_test.cc,
// builder_canaries_with_auto_mode).
inline void expect_generated_case_passes(std::uint64_t seed, std::int64_t index, features f = {}) {
  f.auto_schedule = false;
  const case_spec c = generate_case(case_seed(seed, index), f);
  const outcome o = run_case(c, f);
  EXPECT_TRUE(o.ok()) << "seed " << seed << " case " << index << ": " << o.kind << ": " << o.message;
}

// The callback of func f<stage> (without a monitor), reading each input at the given accesses,
// one per dimension (access: {.var = v, .lo = a, .hi = b} is the interval
// [x_v + a, x_v + b] of output variable v, or [a, b] for v = -1; .mul and .div scale x_v).
inline call_stmt::callable k(int stage, std::vector<std::vector<access>> inputs, std::vector<int> outputs) {
  return kernel({.stage = stage, .inputs = std::move(inputs), .outputs = std::move(outputs)});
}

}  // namespace random_test
}  // namespace slinky

#endif  // SLINKY_BUILDER_TEST_RANDOM_REGRESSIONS_H
