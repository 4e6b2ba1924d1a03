// The refinement's timings taken at the core's usual speed (scheduler_internal::settled_time):
// an evaluation is timed between two speed probes and taken again where the core ran slower
// around it. Fake runs and probes; the real probe's bounds are in machine_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

#include "slinky/scheduler/cost_model.h"

namespace slinky {
namespace scheduler_internal {
namespace {

// A probe that returns `times` in turn (the last one from then on), and counts its calls.
struct fake_probe {
  std::vector<double> times;
  std::size_t calls = 0;
  double operator()() { return times[std::min(calls++, times.size() - 1)]; }
};

// A run that returns 1, 2, 3, ... ms, and counts its calls.
struct fake_run {
  int calls = 0;
  double operator()() { return ++calls * 1e-3; }
};

constexpr std::chrono::milliseconds wait(5);

TEST(settled_time, a_run_between_probes_at_the_reference_speed_is_timed_once) {
  speed_reference ref;
  fake_probe probe{{100, 110}};
  fake_run run;
  EXPECT_DOUBLE_EQ(settled_time(std::ref(run), std::ref(probe), 100, wait, ref), 1e-3);
  EXPECT_EQ(run.calls, 1);
  EXPECT_EQ(probe.calls, 2u);
  EXPECT_EQ(ref.retimed, 0);
  EXPECT_EQ(ref.fastest, 100);
  // The reference starts from the process's fastest probe, and takes faster probes after.
  speed_reference fresh;
  fake_probe faster{{90, 95}};
  settled_time(std::ref(run), std::ref(faster), 100, wait, fresh);
  EXPECT_EQ(fresh.fastest, 90);
}

TEST(settled_time, a_run_with_a_slow_probe_around_it_is_timed_again_once_the_speed_is_back) {
  // The probe after the first run is 1.5 times the reference: the wait probes until the speed is
  // back (a probe at 100), then the run is timed again between two fast probes.
  speed_reference ref;
  fake_probe probe{{100, 150, 150, 100, 100, 100}};
  fake_run run;
  EXPECT_DOUBLE_EQ(settled_time(std::ref(run), std::ref(probe), 100, wait, ref), 2e-3);
  EXPECT_EQ(run.calls, 2);
  EXPECT_EQ(probe.calls, 6u);
  EXPECT_EQ(ref.retimed, 1);
  EXPECT_EQ(ref.fastest, 100);
  // A probe before the run as slow counts alike; within settled_speed (1.2) is settled.
  fake_probe slow_before{{130, 100, 100, 100, 119}};
  EXPECT_DOUBLE_EQ(settled_time(std::ref(run), std::ref(slow_before), 100, wait, ref), 4e-3);
  EXPECT_EQ(ref.retimed, 2);
}

TEST(settled_time, a_core_slower_for_good_becomes_the_reference) {
  // Every probe twice the process's fastest: three runs (the wait ends after max_wait each time),
  // then that speed is the reference, and the next run is settled at once.
  speed_reference ref;
  fake_probe probe{{200}};
  fake_run run;
  EXPECT_DOUBLE_EQ(settled_time(std::ref(run), std::ref(probe), 100, wait, ref), 3e-3);
  EXPECT_EQ(run.calls, 3);
  EXPECT_EQ(ref.retimed, 2);
  EXPECT_EQ(ref.fastest, 200);
  EXPECT_DOUBLE_EQ(settled_time(std::ref(run), std::ref(probe), 100, wait, ref), 4e-3);
  EXPECT_EQ(ref.retimed, 2);
  // A faster probe later lowers it again.
  fake_probe back{{100, 100}};
  settled_time(std::ref(run), std::ref(back), 100, wait, ref);
  EXPECT_EQ(ref.fastest, 100);
}

}  // namespace
}  // namespace scheduler_internal
}  // namespace slinky
