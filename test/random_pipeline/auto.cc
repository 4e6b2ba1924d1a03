// Random pipeline testing, part 7: auto mode's entry points (auto.h), which call its
// implementation in slinky_random_pipeline_auto when it is enabled.
#include "random_pipeline/auto.h"

#include <atomic>

#include "slinky/base/assert.h"

namespace slinky {
namespace random_test {

namespace {

std::atomic<const auto_scheduler*> implementation{nullptr};

const auto_scheduler& impl() {
  const auto_scheduler* i = implementation.load();
  SLINKY_CHECK(i, "a case in auto mode needs the scheduler: link slinky_random_pipeline_auto and call "
                  "enable_auto_mode() (random_pipeline/auto_schedule/auto_schedule.h), or turn auto mode off "
                  "(features -auto)");
  return *i;
}

}  // namespace

void set_auto_scheduler(const auto_scheduler* i) { implementation.store(i); }
bool auto_mode_available() { return implementation.load() != nullptr; }

const char* to_string(auto_mode m) {
  switch (m) {
  case auto_mode::none: return "none";
  case auto_mode::fresh: return "fresh";
  case auto_mode::keep: return "keep";
  case auto_mode::reschedule: return "reschedule";
  }
  return "?";
}

int num_auto_machines() { return impl().num_machines(); }
int auto_machine_threads(int i) { return impl().machine_threads(i); }
std::string describe_auto_machine(int i) { return impl().describe_machine(i); }

auto_result schedule_auto(const graph_spec& g, const plan& pl, const schedule_spec& s, built& b) {
  return impl().schedule(g, pl, s, b);
}

std::string auto_to_cpp(const graph_spec& g, const plan& pl, const schedule_spec& s) { return impl().to_cpp(g, pl, s); }

}  // namespace random_test
}  // namespace slinky
