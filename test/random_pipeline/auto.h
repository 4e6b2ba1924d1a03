// Random pipeline testing, part 7: auto mode, in which slinky::schedule() (slinky/scheduler)
// schedules a case's graph for the shapes of its plan on one of a few fixed machines, after the
// loops and compute_at the schedule_spec sets (docs/random_testing.md, "Auto mode").
#ifndef SLINKY_TOOLS_RANDOM_PIPELINE_AUTO_H
#define SLINKY_TOOLS_RANDOM_PIPELINE_AUTO_H

#include <string>

#include "random_pipeline/build.h"
#include "random_pipeline/spec.h"

namespace slinky {
namespace random_test {

// The machines auto mode plans for, indexed by schedule_spec::auto_machine: tiny caches (4 KiB
// L1, 16 KiB L2) so that loops appear on the tester's small buffers, the host's caches, and
// caches of a few hundred bytes with nearly free calls, each with 1 thread and with several.
// Fixed values (the host's cache sizes are read from sysfs, its call overhead is not measured),
// so that a case gets the same schedule every time it runs on a machine.
//
// Auto mode calls the scheduler, a layer above the builder: it lives in its own library,
// slinky_random_pipeline_auto (auto_schedule/auto_schedule.h), which the scheduler's tests and
// apps/random_pipelines link and enable with enable_auto_mode(). This library, which the
// builder's tests link, reaches it only through the auto_scheduler below, and a case in auto mode
// without it fails with a message saying so: the builder's tests run without auto mode.

const char* to_string(auto_mode m);

// What schedule_auto did.
struct auto_result {
  // schedule_report::to_string, with the funcs and variables named.
  std::string report;
  // Empty, or which func the scheduler changed that it must leave alone (auto_mode::keep: the
  // funcs the schedule_spec gave loops or compute_at).
  std::string not_left_alone;
  // The scheduler made a loop, a parallel one.
  bool looped = false;
  bool parallel = false;
};

// Auto mode's implementation (slinky_random_pipeline_auto): the functions below call these.
struct auto_scheduler {
  int (*num_machines)();
  int (*machine_threads)(int i);
  std::string (*describe_machine)(int i);
  auto_result (*schedule)(const graph_spec& g, const plan& pl, const schedule_spec& s, built& b);
  std::string (*to_cpp)(const graph_spec& g, const plan& pl, const schedule_spec& s);
};
// Sets auto mode's implementation (null: none, the default).
void set_auto_scheduler(const auto_scheduler* impl);
// Whether auto mode has an implementation.
bool auto_mode_available();

// The number of machines (auto mode's implementation must be set, like for the functions below).
int num_auto_machines();
// The threads of machine i.
int auto_machine_threads(int i);
// Its name and values, e.g. "tiny_4_threads (l1 4096, l2 16384, l3 65536, threads 4, ...)".
std::string describe_auto_machine(int i);

// Schedules the funcs of b (the graph of g with schedule s applied, not yet built) with
// slinky::schedule() for the plan's bounds of the pipeline's inputs and outputs, s's machine and
// the options of s's mode.
auto_result schedule_auto(const graph_spec& g, const plan& pl, const schedule_spec& s, built& b);

// The statements of a printed test (shrink.h, to_cpp) that do what schedule_auto does, on the
// names to_cpp gives the funcs and buffers.
std::string auto_to_cpp(const graph_spec& g, const plan& pl, const schedule_spec& s);

}  // namespace random_test
}  // namespace slinky

#endif  // SLINKY_TOOLS_RANDOM_PIPELINE_AUTO_H
